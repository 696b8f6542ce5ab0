#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy --devices on two GPUs: bands spread round robin over devices 0
# and 1 (and 1,0) give outputs equal, byte for byte, to the CPU crop
# (tests/lib/imgcrop) across formats, depths, ROIs, --streams, --place and
# --pageable; frames spread over a ring whose slots live on both devices
# match too; --timing and --json report every device's share.  Fewer than
# two GPUs: "1..0 # SKIP needs 2 GPUs"; with CUXFER_REQUIRE_GPU=2 (or more)
# and fewer GPUs: a failure.
: "${top_builddir:=.}"
probe=$("$top_builddir/tests/lib/gpu-probe" 2 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    printf '%s\n' "$probe" # Bail out! CUXFER_REQUIRE_GPU=2 but ...
    exit 1
fi
case $probe in
"") ;;
"1..0 # SKIP needs 2 GPUs"*)
    printf '%s\n' "$probe"
    exit 0 ;;
"1..0 # SKIP "*) # no device at all: say so, after what the test needs
    printf '1..0 # SKIP needs 2 GPUs: %s\n' "${probe#1..0 # SKIP }"
    exit 0 ;;
*)
    printf 'Bail out! unexpected answer from gpu-probe 2: %s\n' "$probe"
    exit 1 ;;
esac
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

D="--devices 0,1"

# -- bands over two devices: bundled samples, whole image and random ROIs ----
for s in gray-97x61.pgm:97:61 rgb-80x60.ppm:80:60 rgba-64x48.pam:64:48 \
    gray16-61x47.pgm:61:47; do
    f=${s%%:*}; wh=${s#*:}; w=${wh%%:*}; h=${wh#*:}
    in="$SAMPLES/$f"
    # shellcheck disable=SC2086
    same "$f: whole image, $D" "$in" "${w}x${h}+0+0" -- $D "$in"
    for r in $(random_rois "$w" "$h" 3 "${#f}$h"); do
        # shellcheck disable=SC2086
        same "$f: ROI $r, $D" "$in" "$r" -- $D --roi "$r" "$in"
    done
done
raw="$SAMPLES/rgb-45x33x3.raw"
same "raw 8-bit ROI, --devices 0,1" --raw 45x33x3 "$raw" 20x10+25+23 -- \
    --devices 0,1 --raw 45x33x3 --roi 20x10+25+23 "$raw"

# -- depths, wide pixels, conversions ---------------------------------------
"$MKSAMPLES" image pam 23x19x7 65535 21 "$T/d7.pam"
"$MKSAMPLES" image pam 9x8x40 65535 22 "$T/wide.pam"
"$MKSAMPLES" image raw 29x13x3 float 23 "$T/f32.raw"
"$MKSAMPLES" image pam 300x200x4 255 24 "$T/big.pam"
same "PAM DEPTH 7, 16-bit, --devices 0,1" "$T/d7.pam" 11x7+12+3 -- \
    --devices 0,1 --roi 11x7+12+3 "$T/d7.pam"
same "PAM DEPTH 40 (80-byte pixels), --devices 0,1" "$T/wide.pam" 5x4+3+2 -- \
    --devices 0,1 --roi 5x4+3+2 "$T/wide.pam"
same "raw float, --devices 0,1" --raw 29x13x3 --depth 32 "$T/f32.raw" 28x12+1+1 -- \
    --devices 0,1 --raw 29x13x3 --depth 32 --roi 28x12+1+1 "$T/f32.raw"
same "16-bit PGM to raw, --devices 0,1" --format raw "$SAMPLES/gray16-61x47.pgm" 13x11+40+30 -- \
    --devices 0,1 --format raw --roi 13x11+40+30 "$SAMPLES/gray16-61x47.pgm"

# -- streams, order of the list, placement, pageable memory -----------------
for n in 2 3 7 64; do
    same "--devices 0,1 --streams $n" "$T/big.pam" 299x199+1+1 -- \
        --devices 0,1 --streams "$n" --roi 299x199+1+1 "$T/big.pam"
done
same "--devices 1,0: device 1 is home, takes band 0" "$T/big.pam" 123x77+150+101 -- \
    --devices 1,0 --streams 5 --roi 123x77+150+101 "$T/big.pam"
same "one ROI row: device 1 has no band" "$T/big.pam" 300x1+0+199 -- \
    --devices 0,1 --roi 300x1+0+199 "$T/big.pam"
same "--place in a canvas on each device" "$T/big.pam" 123x77+150+101 -- \
    --devices 0,1 --streams 4 --roi 123x77+150+101 --place 377,211 --canvas 500x300 "$T/big.pam"
same "--pageable, --devices 0,1" "$T/big.pam" 77x66+5+5 -- \
    --devices 0,1 --pageable --roi 77x66+5+5 "$T/big.pam"
same "--repeat 3 --timing, --devices 0,1" "$T/big.pam" 200x150+50+25 -- \
    --devices 0,1 --repeat 3 --timing --roi 200x150+50+25 "$T/big.pam"

# -- timing and JSON: totals and every device's share -----------------------
if "$ROICOPY" --devices 0,1 --streams 4 --timing --json --repeat 2 "$T/big.pam" "$T/t.pam" \
    >"$T/stdout" 2>"$T/err" &&
    grep -q '^.* 4 bands on devices 0,1, pinned host memory, 2 rounds$' "$T/stdout" &&
    grep -q '^  H2D .*raw 1D link' "$T/stdout" &&
    grep -q '^  device 0: 2 bands, 120000 bytes each way$' "$T/stdout" &&
    grep -q '^  device 1: 2 bands, 120000 bytes each way$' "$T/stdout" &&
    [ "$(grep -c '^    H2D .*raw 1D link' "$T/stdout")" -eq 2 ] &&
    [ "$(grep -c '^    total ' "$T/stdout")" -eq 2 ] &&
    grep -q '^{"input":.*"bytes":240000,"streams":4,.*"devices":\[{"device":0,"bands":2,"bytes":120000,"h2d_ms":[0-9.]*,.*"link_d2h_gbps":[0-9.]*},{"device":1,"bands":2,"bytes":120000,"h2d_ms":[0-9.]*,.*"link_d2h_gbps":[0-9.]*}\]}$' "$T/stdout"; then
    pass "--timing and --json report each device's bands, bytes and times"
else
    fail "--timing/--json with --devices"; diag_file "$T/stdout"; diag_file "$T/err"
fi

# -- frames over a ring whose slots live on both devices --------------------
make_frames 24 300
if "$ROICOPY" --devices 0,1 --verify --quiet --roi 50x30+9+7 --format pam \
    "$T"/frames/*.ppm -o "$T/ring" 2>"$T/err" && ring_matches 24 50x30+9+7 pam; then
    pass "24 frames through a ring on devices 0,1 match their CPU crops"
else
    fail "ring on devices 0,1"; diag_file "$T/err"
fi
rm -f "$T"/ring/*
if "$ROICOPY" --devices 1,0 --streams 3 --quiet --roi 67x45 --format ppm \
    "$T"/frames/f1*.ppm -o "$T/ring" 2>"$T/err" && ring_matches 11 67x45+0+0 ppm; then
    pass "--devices 1,0 --streams 3: an odd ring over two devices matches"
else
    fail "ring on devices 1,0 with 3 slots"; diag_file "$T/err"
fi
rm -f "$T"/ring/*
# 11 frames, 4 slots (the default: two per device): slots 0 and 2 on
# device 0 take frames 0,2,4,6,8,10; slots 1 and 3 on device 1 the rest.
if "$ROICOPY" --devices 0,1 --json --timing --quiet --repeat 3 --verify --format ppm \
    "$T"/frames/f1*.ppm -o "$T/ring" >"$T/stdout" 2>"$T/err" &&
    grep -q '^pipeline: 11 frames, 4 slots, [0-9]* bytes moved (both ways), devices 0,1$' "$T/stdout" &&
    grep -q '^  device 0: 2 slots, 6 frames, 108540 bytes moved (both ways)$' "$T/stdout" &&
    grep -q '^  device 1: 2 slots, 5 frames, 90450 bytes moved (both ways)$' "$T/stdout" &&
    grep -q '^{"frames":11,"slots":4,.*"replay_passes":2,.*"devices":\[{"device":0,"slots":2,"frames":6,"bytes":108540},{"device":1,"slots":2,"frames":5,"bytes":90450}\]}$' "$T/stdout" &&
    ring_matches 11 67x45+0+0 ppm; then
    pass "ring --timing/--json --repeat 3: each device's slots, frames and bytes"
else
    fail "ring report with --devices"; diag_file "$T/stdout"; diag_file "$T/err"
fi
rm -f "$T"/ring/*
if "$ROICOPY" --devices 0,1 --pageable --quiet --roi 50x30+9+7 --format ppm \
    "$T"/frames/f1*.ppm -o "$T/ring" 2>"$T/err" && ring_matches 11 50x30+9+7 ppm; then
    pass "several inputs with --pageable: each frame's bands over both devices"
else
    fail "--pageable frames on devices 0,1"; diag_file "$T/err"
fi
finish
