#!/bin/sh
# SPDX-License-Identifier: MIT
# Every man page is clean under `mandoc -Tlint -Wwarning`, and every public
# cuxfer_/CUXFER_ name of the header is documented in some man page (the
# header is the product: no undocumented name ships).
. "${top_srcdir:-.}/tests/lib/tap.sh"
hdr="$top_srcdir/include/cuxfer.h"
pages=$(ls "$top_srcdir"/man/*.[0-9])
for p in $pages; do
    name=$(basename "$p")
    if [ -z "$MANDOC" ] || ! command -v "$MANDOC" >/dev/null 2>&1; then
        skip_one "$name: mandoc not installed"
    elif out=$("$MANDOC" -Tlint -Wwarning "$p" 2>&1) && [ -z "$out" ]; then
        pass "$name is lint-clean"
    else
        fail "$name has mandoc warnings"
        printf '%s\n' "$out" | sed 's/^/# /'
    fi
done
# Public names: identifiers starting cuxfer_/CUXFER_, minus private helpers
# (the impl_ prefix after cuxfer_/CUXFER_) and the include guard.
names=$(grep -oE '\b(cuxfer_[a-z0-9_]+|CUXFER_[A-Z0-9_]+)\b' "$hdr" |
    grep -vE '^(cuxfer|CUXFER)_(impl|IMPL)_|^CUXFER_H$|_$' | sort -u)
missing=
for nm in $names; do
    grep -qw -- "$nm" "$top_srcdir"/man/*.[0-9] || missing="$missing $nm"
done
if [ -z "$missing" ]; then
    pass "all $(echo $names | wc -w) public names are documented"
else
    fail "public names in no man page:$missing"
fi
finish
