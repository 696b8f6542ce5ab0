#!/bin/sh
# SPDX-License-Identifier: MIT
# Every man page is clean under `mandoc -Tlint -Wwarning`, and every public
# cuxfer_/CUXFER_ name of the header is documented in some man page (the
# header is the product: no undocumented name ships).
: "${top_srcdir:=.}"
hdr="$top_srcdir/include/cuxfer.h"
pages=$(ls "$top_srcdir"/man/*.[0-9])
n=0
for p in $pages; do n=$((n + 1)); done
echo "1..$((n + 1))"
i=0
for p in $pages; do
    i=$((i + 1))
    name=$(basename "$p")
    if [ -z "$MANDOC" ] || ! command -v "$MANDOC" >/dev/null 2>&1; then
        echo "ok $i - $name # SKIP mandoc not installed"
    elif out=$("$MANDOC" -Tlint -Wwarning "$p" 2>&1) && [ -z "$out" ]; then
        echo "ok $i - $name is lint-clean"
    else
        echo "not ok $i - $name has mandoc warnings"
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
i=$((i + 1))
if [ -z "$missing" ]; then
    echo "ok $i - all $(echo $names | wc -w) public names are documented"
else
    echo "not ok $i - public names in no man page:$missing"
fi
