#!/bin/sh
# SPDX-License-Identifier: MIT
# Batches that shard, on the CPU (--dry-run): --files-from (newline and
# -0 lists, standard input), output names that depend only on the input
# path (4 shards split with awk plan the same input -> output pairs as one
# run), --skip-existing (a present output is skipped and reported, in the
# plan and in --json), and the usage errors of these options.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

mkdir "$T/in" "$T/in/sub" "$T/shard-out"
i=0
for f in a b c d e f g h i j k; do
    i=$((i + 1))
    "$MKSAMPLES" image ppm "$((8 + i))x$((6 + i))x3" 255 "$i" "$T/in/$f.ppm"
done
"$MKSAMPLES" image pgm 9x9x1 255 77 "$T/in/sub/l m.pgm"  # a space in the name
find "$T/in" -type f | sort >"$T/list"

# pairs ARGS...: "input -> output" lines of a --dry-run plan.
pairs() {
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run -q --roi 4x3+1+1 "$@" 2>"$T/err" |
        sed -n 's/^input:    \(.*\) ([a-z]*, [0-9]*x[0-9]*, .*$/\1/p; s/^output:   \(.*\) ([a-z].*$/-> \1/p' |
        paste -d' ' - -
}

pairs --files-from "$T/list" -o "$T/shard-out" >"$T/one-run"
if [ "$(wc -l <"$T/one-run")" -eq 12 ] && grep -qF "$T/in/sub/l m.pgm -> $T/shard-out/l m.pgm" "$T/one-run"; then
    pass "--files-from: 12 inputs, names with spaces, each output in DIR under the input's name"
else
    fail "--files-from plan"; diag_file "$T/one-run"; diag_file "$T/err"
fi
: >"$T/sharded"
for k in 0 1 2 3; do
    awk -v k=$k 'NR % 4 == k' "$T/list" >"$T/list.$k"
    pairs --files-from "$T/list.$k" -o "$T/shard-out" >>"$T/sharded"
done
sort "$T/one-run" >"$T/a"; sort "$T/sharded" >"$T/b"
if cmp -s "$T/a" "$T/b"; then
    pass "4 shards (awk 'NR%4==k') plan the same input -> output pairs as one run"
else
    fail "shards differ from one run"; diff "$T/a" "$T/b" | sed 's/^/#   /'
fi
tr '\n' '\0' <"$T/list" >"$T/list0"
pairs -0 --files-from - -o "$T/shard-out" <"$T/list0" >"$T/nul-run"
if cmp -s "$T/one-run" "$T/nul-run"; then
    pass "-0 --files-from - (NUL-separated, standard input) plans the same"
else
    fail "-0 list"; diag_file "$T/nul-run"; diag_file "$T/err"
fi
pairs "$T/in/a.ppm" --files-from "$T/list.2" -o "$T/shard-out" >"$T/mixed"
if [ "$(head -n 1 "$T/mixed")" = "$T/in/a.ppm -> $T/shard-out/a.ppm" ] &&
    [ "$(wc -l <"$T/mixed")" -eq $(($(wc -l <"$T/list.2") + 1)) ]; then
    pass "operands come first, then --files-from's names"
else
    fail "operands with --files-from"; diag_file "$T/mixed"
fi

# --skip-existing: two outputs exist; their inputs are not even read.
printf 'done\n' >"$T/shard-out/c.ppm"
printf 'done\n' >"$T/shard-out/l m.pgm"
printf 'P5 broken\n' >"$T/in/c.ppm" # would be exit 3 if it were read
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run --skip-existing --files-from "$T/list" -o "$T/shard-out" >"$T/plan" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$T/err" ] && [ "$(grep -c '^skip: ' "$T/plan")" -eq 2 ] &&
    grep -qF "skip:     $T/shard-out/c.ppm (exists; --skip-existing)" "$T/plan" &&
    [ "$(grep -c '^output: ' "$T/plan")" -eq 10 ]; then
    pass "--skip-existing: 2 present outputs skipped (their inputs unread), 10 planned"
else
    fail "--skip-existing plan (exit $rc)"; diag_file "$T/plan"; diag_file "$T/err"
fi
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run --json --skip-existing --files-from "$T/list" -o "$T/shard-out" >"$T/json" 2>"$T/err"
if grep -qF "\"skipped\": [\"$T/shard-out/l m.pgm\", \"$T/shard-out/c.ppm\"]" "$T/json" ||
    grep -qF "\"skipped\": [\"$T/shard-out/c.ppm\", \"$T/shard-out/l m.pgm\"]" "$T/json"; then
    pass "--skip-existing is reported in --json"
else
    fail "--skip-existing --json"; diag_file "$T/json"; diag_file "$T/err"
fi
grep -v 'c.ppm\|l m.pgm' "$T/list" | while IFS= read -r f; do
    b=${f##*/}; printf 'x' >"$T/shard-out/$b"
done
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --json --skip-existing --files-from "$T/list" -o "$T/shard-out" >"$T/json" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$T/json")" = '{"frames":0,"failed":0,"skipped":12}' ] && [ ! -s "$T/err" ]; then
    pass "every output present: exit 0 without a GPU, {\"frames\":0,\"failed\":0,\"skipped\":12}"
else
    fail "all skipped (exit $rc)"; diag_file "$T/json"; diag_file "$T/err"
fi

expect_error 2 "--files-from needs -o DIR" "--files-from without -o" -- --files-from "$T/list" "$OUT/x.ppm"
expect_error 2 "-0 needs --files-from" "-0 without --files-from" -- -0 "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
expect_error 3 "$T/none: --files-from: No such file or directory" "a missing --files-from" -- \
    --files-from "$T/none" -o "$OUT"
: >"$T/empty-list"
# An empty list is a shard of no names, as a list split into more shards
# than it has names gives: nothing to do, exit 0, no CUDA; the directory
# is made, as --dry-run says.
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --json --files-from "$T/empty-list" -o "$T/empty-out" \
    >"$T/json" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$T/json")" = '{"frames":0,"failed":0,"skipped":0}' ] && [ ! -s "$T/err" ] &&
    [ -d "$T/empty-out" ]; then
    pass "an empty --files-from: exit 0 without a GPU, {\"frames\":0,\"failed\":0,\"skipped\":0}, the directory made"
else
    fail "an empty --files-from (exit $rc)"; diag_file "$T/json"; diag_file "$T/err"
fi
env CUDA_VISIBLE_DEVICES= "$ROICOPY" -v --dry-run --files-from "$T/empty-list" -o "$T/empty-out2" \
    >"$T/plan" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && grep -qF "roicopy: --files-from $T/empty-list names no input: nothing to do" "$T/err" &&
    grep -q "^mkdir: " "$T/plan" && [ ! -e "$T/empty-out2" ]; then
    pass "-v --dry-run with an empty --files-from says there is nothing to do"
else
    fail "-v --dry-run with an empty --files-from (exit $rc)"; diag_file "$T/plan"; diag_file "$T/err"
fi
printf '%s\n' "$T/in/a.ppm" "$T/missing.ppm" >"$T/list-bad"
expect_error 3 "$T/missing.ppm" "a missing input named in --files-from" -- --dry-run --files-from "$T/list-bad" -o "$OUT"
finish
