#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/roicopy-bench --self-test: the benchmark parses its options, its CPU
# runs work (the single-threaded crop writes the ROI's pixels, the I/O
# floor the right sizes, roicopy-io - roicopy without the GPU - the CPU
# crop's files) and it prints the table of targets; the roicopy and CUDA
# rows skip cleanly without a GPU (and, with one, roicopy's files must
# equal the CPU crop's); --help describes every option.  Needs python3
# (numpy optional).
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
BENCH="$top_srcdir/tools/roicopy-bench"
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is not installed"; exit 0; }
. "$top_srcdir/tests/lib/tap.sh"

python3 "$BENCH" --self-test --roicopy "$top_builddir/tools/roicopy" \
    --sample "$top_srcdir/samples/rgba-64x48.pam" --dir "$T/work" >"$T/out" 2>"$T/err"
rc=$?
sed 's/^/# /' "$T/out"
if [ $rc -eq 0 ]; then pass "--self-test exits 0"; else fail "--self-test exit $rc"; diag_file "$T/err"; fi
# Its own checks, one TAP line each.
grep -E '^(ok|not ok) - ' "$T/out" >"$T/checks"
relay <"$T/checks" || fail "--self-test printed no checks"
for row in "cpu-crop, 1 thread" "io-floor" "roicopy, 3 frames" \
    "bare CUDA context start" "roicopy, one tiny file" \
    "roicopy speed-up over cpu-crop" "roicopy throughput / io-floor" \
    "roicopy-io, no GPU" "  after the CUDA start" \
    "roicopy / (CUDA start + io-floor)" "roicopy-io throughput / io-floor" \
    "tiny file / bare CUDA start"; do
    if grep -q "^$row" "$T/out"; then pass "table row: $row"; else fail "table row: $row"; fi
done
if grep -E '^(cpu-crop|io-floor|roicopy-io)' "$T/out" | grep -q skip; then
    fail "a CPU run skipped"
else
    pass "the CPU runs ran"
fi
# The targets are the batch ones; the ratios a short batch cannot reach
# (it pays the CUDA start, the CPU crop and the floor do not) are info.
if grep -Eq '^roicopy speed-up over cpu-crop +[-0-9.]+ +- +(info|n/a)$' "$T/out" &&
    grep -Eq '^tiny file / bare CUDA start +[-0-9.]+ +<= 1\.15 ' "$T/out"; then
    pass "the cpu-crop speed-up is info, the tiny file a target"
else
    fail "the targets column"
fi
# A roicopy that is not there skips every roicopy row, the PNG batch's too.
if python3 "$BENCH" --self-test --roicopy "$T/no-roicopy" --png --dir "$T/work2" \
    --sample "$top_srcdir/samples/rgba-64x48.pam" >"$T/out3" 2>&1 &&
    grep -Eq '^PNG: roicopy +skip +- +no roicopy at|^PNG batch +skip +- +PIL' "$T/out3"; then
    pass "a missing roicopy skips the PNG batch's row"
else
    fail "a missing roicopy and --png"; diag_file "$T/out3" 5
fi
if python3 "$BENCH" --roi 10x10+60+0 --size 64x48 --frames 1 >"$T/out2" 2>&1; then
    fail "an ROI outside the frame is accepted"
else
    pass "an ROI outside the frame is refused"
fi
# --help: every option says what it does (a description on its line or
# on the next, deeper-indented one).
python3 "$BENCH" --help >"$T/help" 2>&1
bare=$(awk '/^(options|optional arguments):/ { o = 1; next }
    o && /^  -/ { if (p != "") b = b " " p; p = ""
                  l = $0; sub(/^  /, "", l)
                  if (l !~ /  +[^ ]/) p = l; next }
    o && /^      +[^ -]/ { p = ""; next }
    END { if (p != "") b = b " " p; print b }' "$T/help")
if [ -z "$bare" ] && grep -q -- '--frames' "$T/help"; then
    pass "--help describes every option"
else
    fail "--help: options without a description:$bare"
fi
finish
