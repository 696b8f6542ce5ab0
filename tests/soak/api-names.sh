#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/soak/api-names.sh [--c] HEADER - the public functions of HEADER
# (include/cuxfer.h), one name a line, in the order of its block "The
# API" (from its banner to "(end of the API)"), which declares every one
# of them (tests/header/api.sh checks that).  With --c, the soak's
# soak-api.h instead: SOAK_API_LIST(X), X(name) for each function, and a
# macro per function that counts the soak's calls of it (soak.h) and
# makes the call.  Exits 1, saying why, when the block is missing or empty.
c=0
if [ "${1:-}" = --c ]; then
    c=1
    shift
fi
h=${1:?usage: api-names.sh [--c] HEADER}
# a declaration's first line: CUXFER_API, the return type, the name, "("
names=$(sed -n '/^ \* The API:/,/^\/\* (end of the API) \*\//s/^CUXFER_API[^(]*[^A-Za-z0-9_]\(cuxfer_[a-z0-9_]*\) *(.*/\1/p' "$h" |
    grep -v '^cuxfer_im''pl_') || true # the private prefix, in pieces (public-names-only.sh)
if [ -z "$names" ]; then
    echo "api-names.sh: $h has no block \"The API\" declaring public functions" >&2
    exit 1
fi
if [ "$c" = 0 ]; then
    printf '%s\n' "$names"
    exit 0
fi
echo "/* soak-api.h: made by tests/soak/api-names.sh from cuxfer.h; do not edit. */"
echo "#define SOAK_API_LIST(X) \\"
printf '    X(%s) \\\n' $names
echo "    /* (end) */"
for f in $names; do
    printf '#define %s(...) (soak_counted(SOAK_F_%s), %s(__VA_ARGS__))\n' "$f" "$f" "$f"
done
