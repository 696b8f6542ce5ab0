#!/bin/sh
# SPDX-License-Identifier: MIT
# A batch's pipeline without a GPU (ROICOPY_IO_ONLY=1: the crops on the
# CPU, everything else as with the GPU): threads reading ahead into reused
# buffers, threads writing.  Every output is compared byte for byte (or by
# pixel value through tests/roicopy/codec-tool) with tests/lib/imgcrop's crop:
#  - 40 frames of three sizes and formats, with one thread, several, more
#    threads than frames, buffers for two frames a thread only
#    (ROICOPY_PREFETCH_MB=1) and none read before the start
#    (ROICOPY_PREFETCH_MB=0), --verify; no temporary file left;
#  - PNG and TIFF frames (decoded whole, not by rows) when built with them;
#  - a PNG whose pixels fail to decode: -k skips and names it, writes the
#    others, exit 3; without -k exit 3 and it is not written; on a
#    terminal its message is not written on the progress bar's line;
#  - --threads in the plan of --dry-run (text and JSON) and its limits;
#  - ROICOPY_TRACE: the phases on stderr, in order.
# The GPU's side of the same pipeline is tests/roicopy/gpu.sh's.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"
. "${top_srcdir:-.}/tests/lib/hostile-files.sh"
CODEC_TOOL="$top_builddir/tests/roicopy/codec-tool"
ROI=50x30+9+7

mkdir "$T/in" "$T/ref" "$T/o"
i=0
while [ $i -lt 40 ]; do
    case $((i % 3)) in
    0) f="$T/in/f$i.ppm"; "$MKSAMPLES" image ppm 300x200x3 255 $i "$f" ;;
    1) f="$T/in/f$i.pgm"; "$MKSAMPLES" image pgm 97x61x1 65535 $i "$f" ;;
    2) f="$T/in/f$i.pam"; "$MKSAMPLES" image pam 64x48x4 255 $i "$f" ;;
    esac
    "$IMGCROP" "$f" $ROI "$T/ref/$(basename "$f")" || echo "Bail out! imgcrop $f"
    i=$((i + 1))
done

# same DESCRIPTION MB ARGS...: the batch, with ROICOPY_PREFETCH_MB=MB (-:
# unset), writes 40 outputs equal to the references, exits 0 and leaves no
# temporary file.
same() {
    desc=$1 mb=$2
    shift 2
    rm -rf "$T/o"
    mkdir "$T/o"
    if [ "$mb" = - ]; then
        ROICOPY_IO_ONLY=1 "$ROICOPY" --quiet --roi $ROI "$@" "$T"/in/f* -o "$T/o" 2>"$T/err"
    else
        ROICOPY_IO_ONLY=1 ROICOPY_PREFETCH_MB=$mb "$ROICOPY" --quiet --roi $ROI "$@" \
            "$T"/in/f* -o "$T/o" 2>"$T/err"
    fi
    rc=$?
    why=
    [ $rc -eq 0 ] || why="$why exit $rc;"
    [ "$(ls -A "$T/o" | wc -l)" -eq 40 ] || why="$why $(ls -A "$T/o" | wc -l) files in -o;"
    for r in "$T"/ref/*; do
        cmp -s "$r" "$T/o/$(basename "$r")" || why="$why $(basename "$r") differs;"
    done
    [ -s "$T/err" ] && why="$why stderr not empty;"
    if [ -z "$why" ]; then pass "$desc"; else fail "$desc:$why"; diag_file "$T/err"; fi
}
same "40 frames, default threads" -
# ROICOPY_TRACE: the phases on stderr, in order, the frames unchanged
rm -rf "$T/o"; mkdir "$T/o"
ROICOPY_TRACE=1 ROICOPY_IO_ONLY=1 "$ROICOPY" --quiet --roi $ROI "$T"/in/f* -o "$T/o" 2>"$T/err"
rc=$?
sed -n 's/^roicopy: trace: *[0-9.]* ms //p' "$T/err" |
    grep -xE 'main|inputs checked|the first frame written|the last frame written|the output directories synced|the run is over; the process exits' >"$T/phases"
printf '%s\n' main "inputs checked" "the first frame written" "the last frame written" \
    "the output directories synced" "the run is over; the process exits" >"$T/want"
if [ $rc -eq 0 ] && cmp -s "$T/want" "$T/phases" && [ "$(ls -A "$T/o" | wc -l)" -eq 40 ] &&
    [ "$(grep -vc '^roicopy: trace: ' "$T/err")" -eq 0 ]; then
    pass "ROICOPY_TRACE prints the phases in order on stderr"
else
    fail "ROICOPY_TRACE: exit $rc"; diag_file "$T/err"
fi
same "40 frames, --threads 1" - --threads 1
same "40 frames, --threads 7, --verify" - --threads 7 --verify
same "more threads than frames (--threads 128)" - --threads 128
same "buffers for two frames a thread (ROICOPY_PREFETCH_MB=1)" 1 --threads 3
same "nothing read before the start (ROICOPY_PREFETCH_MB=0)" 0
same "a ring of 5 slots, 2 threads" - --streams 5 --threads 2

# ---- PNG and TIFF: decoded whole ----------------------------------------------
RGB="$SAMPLES/rgb-80x60.ppm"
"$IMGCROP" --format pam "$RGB" 30x20+5+5 "$T/rgb.pam" 2>"$T/err"
for fmt in png tiff; do
    ext=$fmt
    [ $fmt = tiff ] && ext=tif
    if ! has $fmt; then
        skip_one "$fmt frames: built without $fmt"
        continue
    fi
    rm -rf "$T/w" "$T/wo"
    mkdir "$T/w" "$T/wo"
    for k in 1 2 3 4 5 6 7 8; do
        "$CODEC_TOOL" convert "$RGB" "$T/w/f$k.$ext" 2>>"$T/err"
    done
    ROICOPY_IO_ONLY=1 "$ROICOPY" --quiet --verify --threads 3 --roi 30x20+5+5 \
        "$T/w/"f*."$ext" -o "$T/wo" 2>"$T/err"
    rc=$?
    why=
    [ $rc -eq 0 ] || why="$why exit $rc;"
    for k in 1 2 3 4 5 6 7 8; do
        "$CODEC_TOOL" cmp "$T/wo/f$k.$ext" "$T/rgb.pam" >/dev/null 2>&1 ||
            why="$why f$k.$ext missing or wrong;"
    done
    if [ -z "$why" ]; then pass "8 $fmt frames"; else fail "$fmt frames:$why"; diag_file "$T/err"; fi
done

# ---- a frame that fails to decode ---------------------------------------------
if has png; then
    rm -rf "$T/w" "$T/wo"
    mkdir "$T/wo"
    png_batch_cut "$T/w"
    ROICOPY_IO_ONLY=1 "$ROICOPY" --keep-going --quiet --verify --threads 2 \
        --roi 30x20+5+5 "$T/w/"f*.png -o "$T/wo" 2>"$T/err"
    keep_going_verdict -k $? "$T/w" "$T/wo" "$T/rgb.pam" "libpng: "
    rm -f "$T/wo/"*
    ROICOPY_IO_ONLY=1 "$ROICOPY" --quiet --roi 30x20+5+5 "$T/w/"f*.png \
        -o "$T/wo" 2>"$T/err"
    rc=$?
    check "without -k: exit 3, the bad frame not written, no temporary file" \
        eval '[ $rc -eq 3 ] && [ ! -e "$T/wo/f3.png" ] && [ -z "$(ls -A "$T/wo" | grep "^\.")" ]'
    # On a terminal (script(1) makes one), the message of the bad frame
    # starts a line of its own, below the progress bar's; it was written
    # after the bar's "2/6", on its line.
    if have script && script -qc true /dev/null >/dev/null 2>&1; then
        rm -f "$T/wo/"*
        script -qc "env ROICOPY_IO_ONLY=1 CUDA_VISIBLE_DEVICES= '$ROICOPY' -k --threads 1 \
            --roi 30x20+5+5 '$T/w/'f*.png -o '$T/wo'" /dev/null </dev/null >"$T/tty" 2>&1
        tr -d '\r' <"$T/tty" >"$T/err"
        check "on a terminal a frame's message starts its own line, not the progress bar's" \
            eval 'grep -q "^roicopy: $T/w/f3.png: libpng: " "$T/err" && grep -q "\] 6/6$" "$T/err" &&
                ! grep -v "^roicopy: " "$T/err" | grep -q "roicopy: "'
    else
        skip_one "a frame's message on a terminal: no script(1)"
    fi
else
    skip_one "-k past a decode failure: built without PNG"
    skip_one "without -k: built without PNG"
    skip_one "a frame's message on a terminal: built without PNG"
fi

# ---- --threads in the plan, and its limits ----------------------------------------
"$ROICOPY" --dry-run --threads 2 --roi 8x8 "$SAMPLES/gray-97x61.pgm" \
    "$SAMPLES/rgb-80x60.ppm" "$SAMPLES/gray16-61x47.pgm" -o "$OUT" >"$T/plan" 2>"$T/err"
check "--dry-run: the plan says the threads" \
    grep -qx "pipeline: 3 frames through a ring of 3 slots, 2 threads reading ahead and 2 copying and writing" "$T/plan"
"$ROICOPY" --dry-run --json --threads 2 --roi 8x8 "$SAMPLES/gray-97x61.pgm" \
    "$SAMPLES/rgb-80x60.ppm" -o "$OUT" >"$T/plan" 2>"$T/err"
check "--dry-run --json: \"threads\": 2" grep -q '"slots": 3, "threads": 2,' "$T/plan"
"$ROICOPY" --dry-run --roi 8x8 "$SAMPLES/gray-97x61.pgm" \
    "$SAMPLES/rgb-80x60.ppm" -o "$OUT" >"$T/plan" 2>"$T/err"
check "--dry-run: by default no more threads than frames" \
    grep -qE "^pipeline: 2 frames through a ring of 3 slots, [12] threads? reading ahead and [12] copying and writing$" "$T/plan"
expect_error 2 'bad --threads value "0"' "--threads 0 is refused" -- \
    --threads 0 --roi 8x8 "$SAMPLES/gray-97x61.pgm" "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
expect_error 2 'bad --threads value "129"' "--threads 129 is refused" -- \
    --threads 129 --roi 8x8 "$SAMPLES/gray-97x61.pgm" "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
expect_error 2 "--threads does not go with --tiles" "--threads with --tiles is refused" -- \
    --threads 2 --tiles 8x8 "$SAMPLES/gray-97x61.pgm" -o "$OUT"
# --pageable: frames one at a time, each banded as one input is (--streams
# is its bands, not ring slots: 1 stays 1, and a small ROI is one band)
"$ROICOPY" --dry-run --pageable --streams 1 --roi 8x8 "$SAMPLES/gray-97x61.pgm" \
    "$SAMPLES/rgb-80x60.ppm" -o "$OUT" >"$T/plan" 2>"$T/err"
check "--pageable --streams 1: each frame one band" \
    sh -c '[ "$(grep -c "^bands:    1 " "$1")" = 2 ] && ! grep -q "^bands:    [02-9]" "$1"' - "$T/plan"
"$ROICOPY" --dry-run --pageable --roi 8x8 "$SAMPLES/gray-97x61.pgm" \
    "$SAMPLES/rgb-80x60.ppm" -o "$OUT" >"$T/plan" 2>"$T/err"
check "--pageable: a small ROI is one band a frame, as with one input" \
    sh -c '[ "$(grep -c "^bands:    1 " "$1")" = 2 ]' - "$T/plan"
expect_error 2 "--threads does not go with --pageable" "--threads with --pageable is refused" -- \
    --threads 2 --pageable --roi 8x8 "$SAMPLES/gray-97x61.pgm" "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
finish
