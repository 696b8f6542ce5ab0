#!/bin/sh
# SPDX-License-Identifier: MIT
# The bundled samples are the project's own: tools/mksamples rebuilds every
# file of samples/ byte for byte, and each is a valid image of the size its
# name says (checked by the generator's reader), with non-trivial content.
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
. "$top_srcdir/tests/lib/tap.sh"
files="gray-97x61.pgm rgb-80x60.ppm rgba-64x48.pam gray16-61x47.pgm rgb-45x33x3.raw"
if "$top_builddir/tools/mksamples" "$T"; then
    pass "mksamples writes the set"
else
    fail "mksamples failed"
fi
for f in $files; do
    if cmp "$top_srcdir/samples/$f" "$T/$f" >"$T/cmp" 2>&1; then
        pass "samples/$f is reproduced byte for byte"
    else
        fail "samples/$f differs from what mksamples makes"
        diag_file "$T/cmp"
    fi
done
# Not trivial: many distinct byte values in every file's pixel data.
low=
for f in $files; do
    n=$(od -An -v -tu1 "$top_srcdir/samples/$f" | tr -s ' ' '\n' | sort -u | wc -l)
    [ "$n" -ge 100 ] || low="$low $f($n)"
done
total=$(cat "$top_srcdir"/samples/* | wc -c)
if [ -z "$low" ] && [ "$total" -lt 102400 ]; then
    pass "every sample has varied content; the set is $total bytes (< 100 KiB)"
else
    fail "too few distinct byte values:$low; total $total bytes"
fi
finish 7
