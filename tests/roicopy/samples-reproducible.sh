#!/bin/sh
# SPDX-License-Identifier: MIT
# The bundled samples are the project's own: tools/mksamples rebuilds every
# file of samples/ byte for byte, and each is a valid image of the size its
# name says (checked by the generator's reader), with non-trivial content.
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
T=$(mktemp -d "${TMPDIR:-/tmp}/samples-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
files="gray-97x61.pgm rgb-80x60.ppm rgba-64x48.pam gray16-61x47.pgm rgb-45x33x3.raw"
echo "1..7"
if "$top_builddir/tools/mksamples" "$T"; then
    echo "ok 1 - mksamples writes the set"
else
    echo "not ok 1 - mksamples failed"
fi
i=1
for f in $files; do
    i=$((i + 1))
    if cmp "$top_srcdir/samples/$f" "$T/$f" >"$T/cmp" 2>&1; then
        echo "ok $i - samples/$f is reproduced byte for byte"
    else
        echo "not ok $i - samples/$f differs from what mksamples makes"
        sed 's/^/#   /' "$T/cmp"
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
    echo "ok 7 - every sample has varied content; the set is $total bytes (< 100 KiB)"
else
    echo "not ok 7 - too few distinct byte values:$low; total $total bytes"
fi
