#!/bin/sh
# SPDX-License-Identifier: MIT
# Batches that shard, on a GPU: 4 roicopy processes side by side, each on
# a quarter of a --files-from list (awk 'NR%4==k'), write the same files
# as one run over the whole list, byte for byte, and each equals the CPU
# crop (tests/lib/imgcrop).  Then an interrupted batch resumes: with three
# outputs removed, --skip-existing makes exactly those three again
# (--json says "skipped":N-3) and leaves the others untouched.  Without a
# device: "1..0 # SKIP"; with CUXFER_REQUIRE_GPU=1 and no device: a failure.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/tests/lib/need-gpu.sh"
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

ROI=33x17+5+4
mkdir "$T/in" "$T/one" "$T/shards" "$T/ref"
n=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22; do
    n=$((n + 1))
    "$MKSAMPLES" image ppm "$((40 + i))x$((30 + i))x3" 255 "$i" "$T/in/f$i.ppm"
    "$IMGCROP" "$T/in/f$i.ppm" "$ROI" "$T/ref/f$i.ppm"
done
"$MKSAMPLES" image pam 64x48x4 65535 99 "$T/in/deep.pam"
"$IMGCROP" "$T/in/deep.pam" "$ROI" "$T/ref/deep.pam"
n=$((n + 1))
find "$T/in" -type f | sort >"$T/list"

"$ROICOPY" -q --roi "$ROI" --files-from "$T/list" -o "$T/one" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && diff -r "$T/one" "$T/ref" >/dev/null 2>&1; then
    pass "one run over the list: $n outputs, each the CPU crop"
else
    fail "one run (exit $rc)"; diag_file "$T/err"
fi

for k in 0 1 2 3; do
    awk -v k=$k 'NR % 4 == k' "$T/list" >"$T/list.$k"
    "$ROICOPY" -q --roi "$ROI" --files-from "$T/list.$k" -o "$T/shards" 2>"$T/err.$k" &
done
wait
bad=
for k in 0 1 2 3; do [ -s "$T/err.$k" ] && bad="$bad shard $k said something;"; done
if [ -z "$bad" ] && diff -r "$T/one" "$T/shards" >/dev/null 2>&1 &&
    [ "$(ls -A "$T/shards" | wc -l)" -eq $n ]; then
    pass "4 shards side by side write the same $n files as one run"
else
    fail "shards:$bad"; for k in 0 1 2 3; do diag_file "$T/err.$k"; done
    diff -r "$T/one" "$T/shards" 2>&1 | sed 's/^/#   /' | head -n 10
fi

# Resume: three outputs lost; the rest must not be rewritten.
rm "$T/shards/f2.ppm" "$T/shards/f13.ppm" "$T/shards/deep.pam"
touch -d '2001-01-01' "$T/shards/f1.ppm"
"$ROICOPY" -q --json --skip-existing --roi "$ROI" --files-from "$T/list" -o "$T/shards" \
    >"$T/json" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && grep -q "\"frames\":3," "$T/json" && grep -q "\"skipped\":$((n - 3)),\"devices\"" "$T/json" &&
    diff -r "$T/one" "$T/shards" >/dev/null 2>&1 &&
    [ "$(stat -c %Y "$T/shards/f1.ppm")" = "$(date -d 2001-01-01 +%s)" ]; then
    pass "--skip-existing remakes the 3 lost outputs only (skipped $((n - 3)))"
else
    fail "--skip-existing resume (exit $rc)"; diag_file "$T/json"; diag_file "$T/err"
fi
finish
