#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy under hostile input, on a GPU (the CPU side is
# hostile.sh): every crop is compared byte for byte (or by pixel
# value through tests/roicopy/codec-tool) with the CPU crop of tests/lib/imgcrop.
#  - OUTPUT /dev/stdout, /dev/fd/N or a link to /dev/stdout: the crop goes
#    into the descriptor (the redirected file), nothing is renamed;
#  - --keep-going through the ring and one at a time (--pageable): a PNG
#    whose pixels fail to decode (lengths and CRCs right, so it passes the
#    checks before the GPU) is reported and skipped; the frames after it
#    are written; exit 3;
#  - a batch whose first bad frame fails after a later one (its last
#    sample bad, 16 MB in): only the first is told, or with --keep-going
#    both in frame order; through the ring and --pageable;
#  - netpbm maxval 15 and 1023 into PNG (and TIFF): rescaled as pamdepth;
#  - a PackBits TIFF whose runs cross rows: tifftopnm's pixels.
# TIFF cases skip without libtiff (the GPU machine has libpng only).
# Without a device: "1..0 # SKIP"; with CUXFER_REQUIRE_GPU=1: a failure.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/tests/lib/need-gpu.sh"
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"
. "${top_srcdir:-.}/tests/lib/hostile-files.sh"
CODEC_TOOL="$top_builddir/tests/roicopy/codec-tool"
G="$SAMPLES/gray-97x61.pgm"
RGB="$SAMPLES/rgb-80x60.ppm"

# ---- descriptors as OUTPUT ---------------------------------------------------
"$IMGCROP" "$G" 20x10+3+4 "$T/want.pgm" 2>"$T/err"
: >"$T/poison"
"$ROICOPY" --verify --roi 20x10+3+4 "$G" /dev/stdout >"$T/poison" 2>"$T/err"
rc=$?
check "roicopy G /dev/stdout > FILE: the crop is written into FILE (exit $rc)" \
    eval '[ $rc -eq 0 ] && cmp -s "$T/poison" "$T/want.pgm"'
printf 'poison' >"$T/fd7"
"$ROICOPY" --verify --roi 20x10+3+4 "$G" /dev/fd/7 7>"$T/fd7" 2>"$T/err"
rc=$?
check "roicopy G /dev/fd/7: into descriptor 7 (exit $rc)" \
    eval '[ $rc -eq 0 ] && cmp -s "$T/fd7" "$T/want.pgm"'
ln -s /dev/stdout "$T/link.pgm"
"$ROICOPY" --verify --roi 20x10+3+4 "$G" "$T/link.pgm" >"$T/via-link" 2>"$T/err"
rc=$?
check "an OUTPUT linked to /dev/stdout: written through, the link kept (exit $rc)" \
    eval '[ $rc -eq 0 ] && [ -L "$T/link.pgm" ] && cmp -s "$T/via-link" "$T/want.pgm"'
"$ROICOPY" --verify --roi 48x30 --stack /dev/stdout --roi 10x10+1+1 "$G" \
    >"$T/stack" 2>"$T/err"
rc=$?
"$IMGCROP" "$G" 48x30+0+0 "$T/s0.pgm" 2>>"$T/err"
"$IMGCROP" "$G" 10x10+1+1 "$T/s1.pgm" 2>>"$T/err"
cat "$T/s0.pgm" "$T/s1.pgm" >"$T/stack-want"
check "--stack /dev/stdout: both crops into standard output (exit $rc)" \
    eval '[ $rc -eq 0 ] && cmp -s "$T/stack" "$T/stack-want"'

# ---- the first bad frame of a batch is the one told ----------------------------
bad_frames_in_order "a batch through the ring"
bad_frames_in_order "a batch one at a time" --pageable

# ---- --keep-going past a frame that fails to decode ----------------------------
if has png; then
    mkdir "$T/kg"
    png_batch_cut "$T/in"
    "$IMGCROP" --format pam "$RGB" 30x20+5+5 "$T/ref.pam" 2>>"$T/err"
    for mode in ring pageable; do
        rm -f "$T/kg/"*
        extra=
        [ $mode = pageable ] && extra=--pageable
        # shellcheck disable=SC2086
        "$ROICOPY" --keep-going --quiet --verify $extra --roi 30x20+5+5 \
            "$T/in/"f*.png -o "$T/kg" 2>"$T/err"
        keep_going_verdict "-k ($mode)" $? "$T/in" "$T/kg" "$T/ref.pam" \
            "libpng: Not enough image data"
    done
    "$ROICOPY" --quiet --roi 30x20+5+5 "$T/in/"f*.png -o "$T/kg" 2>"$T/err"
    check "without -k the same batch stops with exit 3" test $? -eq 3
    # --json counts the frame skipped at decode with the input that failed
    # its checks ("frames": the frames planned, the skipped one among them).
    printf 'P9\n' >"$T/bad.pgm"
    rm -f "$T/kg/"*
    "$ROICOPY" --keep-going --quiet --json --roi 30x20+5+5 "$T/bad.pgm" "$T/in/"f*.png \
        -o "$T/kg" >"$T/json" 2>"$T/err"
    rc=$?
    check "-k --json through the ring: \"failed\":2, one input's header and one frame's pixels (exit $rc)" \
        eval '[ $rc -eq 3 ] && grep -q "^{\"frames\":6,.*,\"failed\":2,\"skipped\":0,\"devices\":\[" "$T/json"'
    # the one-input way and --pageable's one at a time: the frame that
    # fails to decode has an object of its own, its reason in "error"
    kg_undecoded() { # WHAT LINES PATTERN ARG...
        what=$1 lines=$2 pattern=$3
        shift 3
        rm -f "$T/kg/"*
        "$ROICOPY" --keep-going --quiet --json --roi 30x20+5+5 "$@" -o "$T/kg" >"$T/json" 2>"$T/err"
        rc=$?
        check "-k --json $what: the frame that fails to decode has its object (exit $rc)" \
            eval '[ $rc -eq 3 ] && [ "$(wc -l <"$T/json")" -eq $lines ] && grep -q "$pattern" "$T/json"'
    }
    undecoded='^{"input":"[^"]*/f3.png","output":"[^"]*/f3.png","error":"[^"]*f3.png: libpng: Not enough image data[^"]*","frames":0,'
    kg_undecoded "one input" 1 "$undecoded\"failed\":1,\"skipped\":0}\$" "$T/in/f3.png"
    kg_undecoded "one input left" 1 "$undecoded\"failed\":2,\"skipped\":0}\$" "$T/bad.pgm" "$T/in/f3.png"
    kg_undecoded "--pageable" 6 "$undecoded\"failed\":1,\"skipped\":0}\$" --pageable "$T/in/"f*.png
else
    skip_one "-k past a decode failure: built without PNG"
fi

# ---- maxval into PNG and TIFF ------------------------------------------------------
printf 'P5\n8 1\n15\n' >"$T/g15.pgm"
b 0 1 7 8 14 15 3 9 >>"$T/g15.pgm"
printf 'P5\n8 1\n255\n' >"$T/g15-want.pgm"
b 0 17 119 136 238 255 51 153 >>"$T/g15-want.pgm"
printf 'P5\n3 1\n1023\n' >"$T/g1023.pgm"
b 0 0 1 255 3 255 >>"$T/g1023.pgm"
printf 'P5\n3 1\n65535\n' >"$T/g1023-want.pgm"
b 0 0 127 223 255 255 >>"$T/g1023-want.pgm"
for ext in png tif; do
    f=$ext
    [ $ext = tif ] && f=tiff
    if ! has $f; then
        skip_one "maxval into .$ext: built without $f"
        continue
    fi
    for stem in g15 g1023; do
        rm -f "$T/$stem.$ext"
        "$ROICOPY" --verify "$T/$stem.pgm" "$T/$stem.$ext" 2>"$T/err"
        rc=$?
        "$CODEC_TOOL" cmp "$T/$stem.$ext" "$T/$stem-want.pgm" >>"$T/err" 2>&1
        same_pixels=$?
        check "$stem.pgm through the GPU into .$ext: rescaled as pamdepth (exit $rc)" \
            eval '[ $rc -eq 0 ] && [ $same_pixels -eq 0 ]'
    done
done
if has png && have pngtopam; then
    pngtopam "$T/g15.png" >"$T/theirs.pgm" 2>/dev/null
    check "... and pngtopam reads the same samples" cmp -s "$T/theirs.pgm" "$T/g15-want.pgm"
else
    skip_one "maxval vs pngtopam: not installed"
fi

# ---- PackBits across rows ------------------------------------------------------------
if has tiff; then
    packbits_across_rows "$T/pb.tif"
    printf 'P5\n4 2\n255\n' >"$T/pb-want.pgm"
    b 10 10 10 20 20 20 30 30 >>"$T/pb-want.pgm"
    "$ROICOPY" --verify "$T/pb.tif" "$T/pb.pgm" 2>"$T/err"
    rc=$?
    check "PackBits runs across rows: the GPU copy has the right pixels (exit $rc)" \
        eval '[ $rc -eq 0 ] && cmp -s "$T/pb.pgm" "$T/pb-want.pgm"'
    if have tifftopnm; then
        tifftopnm "$T/pb.tif" >"$T/pb-netpbm.pgm" 2>/dev/null
        check "... which are tifftopnm's" cmp -s "$T/pb.pgm" "$T/pb-netpbm.pgm"
    else
        skip_one "PackBits vs tifftopnm: not installed"
    fi
else
    skip_one "PackBits across rows: built without TIFF (the GPU machine has no libtiff)"
fi
finish
