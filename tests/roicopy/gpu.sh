#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy on a GPU: every output equals, byte for byte, the CPU crop of the
# input written by the same writer (tests/lib/imgcrop) - across formats
# (P5, P6, P7, raw), depths (8, 16 bits, maxval 1000, float), format
# conversions, pseudo-random ROIs, --place/--canvas, --streams, --pageable
# and a 40-frame pipeline through the ring.  --verify passes on good
# copies and catches a corrupted one.  Without a device: "1..0 # SKIP";
# with CUXFER_REQUIRE_GPU=1 and no device: a failure.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/tests/lib/need-gpu.sh"
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

# -- the bundled samples: full image, corners, random ROIs ------------------
for s in gray-97x61.pgm:97:61 rgb-80x60.ppm:80:60 rgba-64x48.pam:64:48 \
    gray16-61x47.pgm:61:47; do
    f=${s%%:*}; wh=${s#*:}; w=${wh%%:*}; h=${wh#*:}
    in="$SAMPLES/$f"
    same "$f: whole image" "$in" "${w}x${h}+0+0" -- "$in"
    same "$f: last pixel" "$in" "1x1+$((w - 1))+$((h - 1))" -- --roi "1x1+$((w - 1))+$((h - 1))" "$in"
    for r in $(random_rois "$w" "$h" 4 "${#f}$w"); do
        same "$f: ROI $r" "$in" "$r" -- --roi "$r" "$in"
    done
done
raw="$SAMPLES/rgb-45x33x3.raw"
same "raw 8-bit: ROI" --raw 45x33x3 "$raw" 20x10+25+23 -- --raw 45x33x3 --roi 20x10+25+23 "$raw"

# -- depths and formats made here -------------------------------------------
"$MKSAMPLES" image pgm 37x29x1 1000 11 "$T/m1000.pgm"
"$MKSAMPLES" image pam 23x19x7 65535 12 "$T/d7.pam"
"$MKSAMPLES" image pam 9x8x40 65535 13 "$T/wide.pam"
"$MKSAMPLES" image raw 31x17x2 65535 14 "$T/r16.raw"
"$MKSAMPLES" image raw 29x13x3 float 15 "$T/f32.raw"
"$MKSAMPLES" image pam 300x200x4 255 16 "$T/big.pam"
same "maxval 1000 (2-byte samples)" "$T/m1000.pgm" 30x20+3+4 -- --roi 30x20+3+4 "$T/m1000.pgm"
same "PAM DEPTH 7, 16-bit" "$T/d7.pam" 11x7+12+3 -- --roi 11x7+12+3 "$T/d7.pam"
same "PAM DEPTH 40: 80-byte pixels" "$T/wide.pam" 5x4+3+2 -- --roi 5x4+3+2 "$T/wide.pam"
same "raw 16-bit, host order" --raw 31x17x2 --depth 16 "$T/r16.raw" 7x9+20+5 -- \
    --raw 31x17x2 --depth 16 --roi 7x9+20+5 "$T/r16.raw"
same "raw float" --raw 29x13x3 --depth 32 "$T/f32.raw" 28x12+1+1 -- \
    --raw 29x13x3 --depth 32 --roi 28x12+1+1 "$T/f32.raw"
same "16-bit PGM to raw (byte swap)" --format raw "$SAMPLES/gray16-61x47.pgm" 13x11+40+30 -- \
    --format raw --roi 13x11+40+30 "$SAMPLES/gray16-61x47.pgm"
same "raw 16-bit to PAM" --raw 31x17x2 --depth 16 --format pam "$T/r16.raw" 31x17+0+0 -- \
    --raw 31x17x2 --depth 16 --format pam "$T/r16.raw"
same "PGM to PAM" --format pam "$SAMPLES/gray-97x61.pgm" 50x40+47+21 -- \
    --format pam --roi 50x40+47+21 "$SAMPLES/gray-97x61.pgm"
same "RGBA PAM to raw" --format raw "$SAMPLES/rgba-64x48.pam" 64x1+0+47 -- \
    --format raw --roi 64x1+0+47 "$SAMPLES/rgba-64x48.pam"
same "raw RGB to PPM" --raw 45x33x3 --format ppm "$raw" 45x33+0+0 -- \
    --raw 45x33x3 --format ppm "$raw"

# -- placement, streams, pageable memory ------------------------------------
same "--place inside a canvas" "$T/big.pam" 123x77+150+101 -- \
    --roi 123x77+150+101 --place 377,211 --canvas 500x300 "$T/big.pam"
same "--place at the canvas's far corner" "$T/big.pam" 60x40+0+0 -- \
    --roi 60x40 --place 440,260 --canvas 500x300 "$T/big.pam"
for n in 2 3 7 64; do
    same "--streams $n" "$T/big.pam" 299x199+1+1 -- --streams "$n" --roi 299x199+1+1 "$T/big.pam"
done
same "--devices 0: one listed device, three bands" "$T/big.pam" 299x199+1+1 -- \
    --devices 0 --streams 3 --roi 299x199+1+1 "$T/big.pam"
same "--streams 5 with --place" "$T/big.pam" 100x100+7+9 -- \
    --streams 5 --roi 100x100+7+9 --place 3,1 --canvas 128x101 "$T/big.pam"
same "--pageable" "$T/big.pam" 77x66+5+5 -- \
    --pageable --roi 77x66+5+5 "$T/big.pam"
same "--repeat 3" "$T/big.pam" 10x10+290+190 -- --repeat 3 --roi 10x10+290+190 "$T/big.pam"

# -- --verify catches a difference and writes nothing -----------------------
ROICOPY_TEST_CORRUPT=1 "$ROICOPY_HOOKED" --verify --roi 20x10+3+4 "$SAMPLES/gray-97x61.pgm" "$EXISTING" \
    >"$T/stdout" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "^roicopy: $EXISTING: --verify: first difference at x=19 y=9 channel 0: expected [0-9]*, got [0-9]*$" "$T/err" &&
    out_dir_intact; then
    pass "--verify names the first difference, exits 1, keeps the old output"
else
    fail "--verify on a corrupted copy (exit $rc)"; diag_file "$T/err"
fi
ROICOPY_TEST_CORRUPT=1 "$ROICOPY_HOOKED" --roi 20x10+3+4 "$SAMPLES/gray-97x61.pgm" "$T/unverified.pgm" 2>"$T/err"
if "$IMGCROP" "$SAMPLES/gray-97x61.pgm" 20x10+3+4 "$T/cpu.out" &&
    ! cmp -s "$T/unverified.pgm" "$T/cpu.out"; then
    pass "the corruption hook really corrupts (so the test above can fail)"
else
    fail "the corruption hook changed nothing"
fi
ROICOPY_TEST_CORRUPT=1 "$ROICOPY" --verify --roi 20x10+3+4 "$SAMPLES/gray-97x61.pgm" "$T/installed.pgm" 2>"$T/err" &&
    cmp -s "$T/installed.pgm" "$T/cpu.out"
point $? "the installed roicopy has no corruption hook: the variable changes nothing" "$T/err"

# -- timing and JSON ---------------------------------------------------------
if "$ROICOPY" --timing --json --repeat 2 --streams 2 "$T/big.pam" "$T/t.pam" >"$T/stdout" 2>"$T/err" &&
    grep -q '^  H2D .* GB/s .*raw 1D link' "$T/stdout" &&
    grep -q '^  D2H ' "$T/stdout" && grep -q '^  total .* GB/s .*raw 1D link .*, ratio ' "$T/stdout" &&
    grep -q '^{"input":".*,"h2d_ms":[0-9.]*,.*"link_both_gbps":[0-9.]*,.*"link_d2h_gbps":[0-9.]*,.*}$' "$T/stdout"; then
    pass "--timing prints per-stage times and the raw link (both ways for the total); --json one object"
else
    fail "--timing/--json"; diag_file "$T/stdout"; diag_file "$T/err"
fi

if "$ROICOPY" --devices 0 --json --streams 2 "$T/big.pam" "$T/t.pam" >"$T/stdout" 2>"$T/err" &&
    grep -q '"devices":\[{"device":0,"bands":2,"bytes":240000,"h2d_ms":[0-9.]*,.*}\]}$' "$T/stdout"; then
    pass "--json lists the device's bands and bytes"
else
    fail "--json per-device entry"; diag_file "$T/stdout"; diag_file "$T/err"
fi

# -- a 40-frame pipeline through the ring ------------------------------------
make_frames 40 100
if "$ROICOPY" --verify --quiet --streams 3 --roi 50x30+9+7 --format pam "$T"/frames/*.ppm -o "$T/ring" 2>"$T/err"; then
    if ring_matches 40 50x30+9+7 pam; then
        pass "40 frames through the ring match their CPU crops"
    else
        fail "40-frame pipeline: $bad mismatches"
    fi
else
    fail "40-frame pipeline failed"; diag_file "$T/err"
fi
# The pipeline's threads against its slots: one thread, more threads than
# slots, more slots than threads, as many threads as frames, buffers for
# two frames a thread (ROICOPY_PREFETCH_MB=1: reused at once); every output
# poisoned first.  The ring and the context are released once the last
# frame is back from the GPU, before the run is over (ROICOPY_TRACE).
released() {
    sed -n 's/^roicopy: trace: *[0-9.]* ms //p' "$1" |
        grep -e '^the ring freed$' -e '^the CUDA context is released' -e '^the run is over' |
        tr '\n' '|'
}
for args in "--threads 1 --streams 2" "--threads 16 --streams 3" \
    "--threads 5 --streams 7" "--threads 40 --streams 64"; do
    for f in "$T"/frames/*.ppm; do
        printf 'poison' >"$T/ring/$(basename "$f" .ppm).pam"
    done
    # shellcheck disable=SC2086
    if ROICOPY_TRACE=1 ROICOPY_PREFETCH_MB=1 "$ROICOPY" --quiet $args --roi 50x30+9+7 --format pam \
        "$T"/frames/*.ppm -o "$T/ring" 2>"$T/err"; then
        bad=0
        for f in "$T"/frames/*.ppm; do
            b=$(basename "$f" .ppm)
            cmp -s "$T/ring/$b.pam" "$T/ref/$b.pam" || bad=$((bad + 1))
        done
        order=$(released "$T/err")
        if [ $bad -eq 0 ] && [ "$(ls -A "$T/ring" | wc -l)" -eq 40 ] &&
            [ "$order" = "the ring freed|the CUDA context is released (helper thread)|the run is over; the process exits|" ]; then
            pass "40 frames, $args, two buffers a thread: all match; the context released early"
        else
            fail "40 frames, $args: $bad mismatches, trace $order"
        fi
    else
        fail "40 frames, $args failed"; diag_file "$T/err"
    fi
done
rm -f "$T"/ring/*
if "$ROICOPY" --quiet --pageable --roi 50x30+9+7 "$T"/frames/f1*.ppm -o "$T/ring" 2>"$T/err" &&
    [ "$(ls "$T/ring" | wc -l)" -eq 11 ]; then
    bad=0
    for f in "$T"/frames/f1*.ppm; do
        b=$(basename "$f")
        "$IMGCROP" "$f" 50x30+9+7 "$T/ref/$b" && cmp -s "$T/ring/$b" "$T/ref/$b" || bad=$((bad + 1))
    done
    if [ $bad -eq 0 ]; then pass "several inputs with --pageable match"
    else fail "--pageable frames: $bad mismatches"; fi
else
    fail "--pageable with several inputs"; diag_file "$T/err"
fi
rm -f "$T"/ring/*
if ROICOPY_TRACE=1 "$ROICOPY" --json --quiet --repeat 3 --verify "$T"/frames/f2*.ppm -o "$T/ring" >"$T/stdout" 2>"$T/err" &&
    grep -q '^{"frames":11,"slots":3,.*"link_bidir_gbps":[0-9.]*,.*"replay_passes":2,.*"replay_gbps":[0-9.]*' "$T/stdout" &&
    [ "$(released "$T/err")" = "the run is over; the process exits|" ] &&
    [ "$(wc -l <"$T/stdout")" -eq 1 ] && [ "$(ls "$T/ring" | wc -l)" -eq 11 ] &&
    "$IMGCROP" "$T/frames/f23.ppm" 67x45+0+0 "$T/ref/f23.ppm" && cmp -s "$T/ring/f23.ppm" "$T/ref/f23.ppm"; then
    pass "pipeline --json --repeat 3: one object with the link and the replays; outputs intact; nothing released early"
else
    fail "pipeline --json"; diag_file "$T/stdout"; diag_file "$T/err"
fi
rm -f "$T"/ring/*
if "$ROICOPY" --devices 0 --json --quiet --verify "$T"/frames/f3*.ppm -o "$T/ring" >"$T/stdout" 2>"$T/err" &&
    grep -q '^{"frames":11,"slots":3,.*,"devices":\[{"device":0,"slots":3,"frames":11,"bytes":[0-9]*}\]}$' "$T/stdout" &&
    [ "$(ls "$T/ring" | wc -l)" -eq 11 ]; then
    pass "pipeline --devices 0: one device, three slots, all frames"
else
    fail "pipeline --devices 0"; diag_file "$T/stdout"; diag_file "$T/err"
fi
# -- issue 13 on the GPU: "-", outputs that are not files, modes, the
# extension rule, the file size limit, --keep-going --------------------------
G="$SAMPLES/gray-97x61.pgm"
"$IMGCROP" "$G" 40x30+10+5 "$T/ref-crop.pgm"
if cat "$G" | "$ROICOPY" --roi 40x30+10+5 - - 2>"$T/err" | cat >"$T/piped.pgm" &&
    cmp -s "$T/piped.pgm" "$T/ref-crop.pgm"; then
    pass "- - : standard input to standard output through a pipe"
else
    fail "- - pipeline"; diag_file "$T/err"
fi
mkfifo "$T/out-fifo"
# The reader gives up after a while, so a roicopy that never opens the
# FIFO fails this test instead of hanging it.
timeout 120 cat "$T/out-fifo" >"$T/from-fifo.pgm" &
reader=$!
if "$ROICOPY" --roi 40x30+10+5 "$G" "$T/out-fifo" 2>"$T/err"; then rc=0; else rc=$?; fi
wait $reader
if [ $rc -eq 0 ] && [ -p "$T/out-fifo" ] && cmp -s "$T/from-fifo.pgm" "$T/ref-crop.pgm"; then
    pass "a FIFO output is written into and stays a FIFO"
else
    fail "FIFO output (exit $rc)"; diag_file "$T/err"
fi
# A private node of /dev/null's device (1,3): were roicopy to replace it,
# only this copy would suffer.
if [ "$(id -u)" = 0 ] && mknod "$T/null" c 1 3 2>/dev/null &&
    echo probe 2>/dev/null >"$T/null"; then
    if "$ROICOPY" "$G" "$T/null" 2>"$T/err" && [ -c "$T/null" ]; then
        pass "a character device output is written into, not replaced"
    else
        fail "character device output"; diag_file "$T/err"
    fi
else
    skip_one "character device output: needs root and a device-capable $T"
fi
cp "$G" "$T/mode600.pgm" && chmod 600 "$T/mode600.pgm"
if "$ROICOPY" --roi 40x30+10+5 "$G" "$T/mode600.pgm" 2>"$T/err" &&
    [ "$(stat -c %a "$T/mode600.pgm")" = 600 ] && cmp -s "$T/mode600.pgm" "$T/ref-crop.pgm"; then
    pass "an existing 0600 output is replaced and stays 0600"
else
    fail "mode of an existing output: $(stat -c %a "$T/mode600.pgm")"; diag_file "$T/err"
fi
"$IMGCROP" --format pam "$G" 40x30+10+5 "$T/ref-crop.pam"
if "$ROICOPY" --roi 40x30+10+5 "$G" "$T/by-ext.pam" 2>"$T/err" &&
    cmp -s "$T/by-ext.pam" "$T/ref-crop.pam"; then
    pass "the .pam extension makes a PAM of a PGM"
else
    fail "extension rule"; diag_file "$T/err"
fi
printf 'precious\n' >"$T/limited.pam"
( ulimit -f 8; exec "$ROICOPY" "$T/big.pam" "$T/limited.pam" ) >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 4 ] && grep -q "^roicopy: $T/limited.pam: cannot write: File too large$" "$T/err" &&
    [ "$(cat "$T/limited.pam")" = precious ] && [ -z "$(ls -A "$T" | grep '^\.limited')" ]; then
    pass "past the file size limit: exit 4 (EFBIG, not SIGXFSZ), old output kept, no temporary file"
else
    fail "file size limit (exit $rc)"; diag_file "$T/err"; ls -A "$T" | sed 's/^/#   /'
fi
mkdir "$T/kg"
printf 'P9\n' >"$T/bad.pgm"
"$ROICOPY" --keep-going --quiet --roi 8x8 "$G" "$T/bad.pgm" "$SAMPLES/rgb-80x60.ppm" -o "$T/kg" 2>"$T/err"
rc=$?
if [ $rc -eq 3 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ "$(ls "$T/kg" | wc -l)" -eq 2 ] &&
    "$IMGCROP" "$SAMPLES/rgb-80x60.ppm" 8x8+0+0 "$T/ref-kg.ppm" && cmp -s "$T/kg/rgb-80x60.ppm" "$T/ref-kg.ppm"; then
    pass "--keep-going copies the good inputs and exits 3"
else
    fail "--keep-going (exit $rc)"; diag_file "$T/err"
fi
# --json counts the input that failed its checks: two frames left go
# through the ring, one the one-input way.
kg_json() { # WHAT PATTERN INPUT...
    what=$1 pattern=$2
    shift 2
    "$ROICOPY" --keep-going --quiet --json --roi 8x8 "$@" -o "$T/kg" >"$T/json" 2>"$T/err"
    rc=$?
    if [ $rc -eq 3 ] && [ "$(wc -l <"$T/json")" -eq 1 ] && grep -q "$pattern" "$T/json"; then
        pass "--keep-going --json $what: \"failed\":1"
    else
        fail "--keep-going --json $what (exit $rc)"; diag_file "$T/json"; diag_file "$T/err"
    fi
}
kg_json "through the ring" '^{"frames":2,.*,"failed":1,"skipped":0,"devices":\[.*}$' \
    "$G" "$T/bad.pgm" "$SAMPLES/rgb-80x60.ppm"
kg_json "one frame left" '^{"input":".*,"failed":1,"skipped":0,"devices":\[.*}$' "$G" "$T/bad.pgm"
# -- -o DIR that does not exist: made (mkdir -p, the umask), then filled ---
if (umask 027 && "$ROICOPY" --quiet --roi 20x10+3+4 "$T"/frames/f1.ppm "$T"/frames/f2.ppm \
        -o "$T/made/deep") 2>"$T/err" &&
    "$IMGCROP" "$T/frames/f1.ppm" 20x10+3+4 "$T/ref-f1.ppm" &&
    "$IMGCROP" "$T/frames/f2.ppm" 20x10+3+4 "$T/ref-f2.ppm" &&
    cmp -s "$T/made/deep/f1.ppm" "$T/ref-f1.ppm" && cmp -s "$T/made/deep/f2.ppm" "$T/ref-f2.ppm" &&
    [ "$(stat -c %a "$T/made")" = 750 ] && [ "$(stat -c %a "$T/made/deep")" = 750 ]; then
    pass "-o a missing DIR: made with its parent (umask 027: 750), the outputs match"
else
    fail "-o a missing DIR"; diag_file "$T/err"; ls -lR "$T/made" 2>&1 | sed 's/^/#   /'
fi
if "$ROICOPY" --quiet --tiles 16x16 "$SAMPLES/gray-97x61.pgm" -o "$T/made-tiles" 2>"$T/err" &&
    [ "$(ls "$T/made-tiles" | wc -l)" -eq 18 ]; then
    pass "--tiles -o a missing DIR: made, 18 tiles in it"
else
    fail "--tiles -o a missing DIR"; diag_file "$T/err"
fi
finish
