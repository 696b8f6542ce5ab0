#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy on a GPU with PNG and TIFF files: the crop of a PNG or a TIFF
# has the pixels of the CPU crop (tests/lib/imgcrop) of the netpbm image it
# was made from, read back by netpbm's own tools (pngtopam, tifftopnm) when
# present and by tests/roicopy/codec-tool; a PNG/TIFF output is byte for byte the
# file codec-tool encodes from the CPU crop (the same encoder).  Covers
# 8/16 bits, RGBA, interlaced PNG, a PNG named .dat, standard input,
# --page, --verify and a batch through the ring.  TIFF cases skip when
# libtiff is not compiled in (the GPU machine has libpng only).  Without a
# device: "1..0 # SKIP"; with CUXFER_REQUIRE_GPU=1 and no device: a failure.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/tests/lib/need-gpu.sh"
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"
CODEC_TOOL="$top_builddir/tests/roicopy/codec-tool"
formats=$("$ROICOPY" --version | sed -n 's/^formats: //p')
has() { case " $formats " in *" $1 "*) return 0 ;; esac; return 1; }

# crop_case DESCRIPTION SOURCE.pnm INPUT ROI OUTPUT-EXT [ROICOPY-ARGS...]:
# roicopy --verify --roi ROI [ARGS] INPUT out.EXT; its pixels must equal
# imgcrop's crop of SOURCE (codec-tool cmp), and for .png/.tif outputs the
# file must equal codec-tool's encoding of that crop byte for byte; for
# netpbm outputs, the bytes of imgcrop's own output.
crop_case() {
    desc=$1 src=$2 in=$3 roi=$4 ext=$5
    shift 5
    rm -f "$T/gpu.$ext" "$T/ref.pam" "$T/ref.$ext"
    "$ROICOPY" --verify --roi "$roi" "$@" "$in" "$T/gpu.$ext" >"$T/stdout" 2>"$T/err"
    rc=$?
    why=
    [ $rc -eq 0 ] || why="$why roicopy exit $rc;"
    case $ext in
    png|tif|tiff)
        "$IMGCROP" --format pam "$src" "$roi" "$T/ref.pam" 2>>"$T/err" &&
            "$CODEC_TOOL" convert "$T/ref.pam" "$T/ref.$ext" 2>>"$T/err" ||
            why="$why reference failed;"
        "$CODEC_TOOL" cmp "$T/gpu.$ext" "$T/ref.pam" >>"$T/err" 2>&1 || why="$why pixels differ;"
        cmp -s "$T/gpu.$ext" "$T/ref.$ext" || why="$why file differs from codec-tool's;"
        ;;
    *)
        "$IMGCROP" --format "$ext" "$src" "$roi" "$T/ref.$ext" 2>>"$T/err" || why="$why reference failed;"
        cmp -s "$T/gpu.$ext" "$T/ref.$ext" || why="$why bytes differ from imgcrop's;"
        ;;
    esac
    if [ -z "$why" ]; then pass "$desc"; else fail "$desc:$why"; diag_file "$T/err"; fi
}

# tool_agrees DESCRIPTION FILE REFERENCE.pnm DECODER...: the field's own
# decoder reads FILE as the same netpbm bytes as REFERENCE.
tool_agrees() {
    desc=$1 file=$2 ref=$3
    shift 3
    if ! command -v "$1" >/dev/null 2>&1; then
        skip_one "$desc: no $1"
        return 0
    fi
    if "$@" "$file" 2>"$T/err" | cmp -s - "$ref"; then
        pass "$desc"
    else
        fail "$desc"; diag_file "$T/err"
    fi
}

P="$SAMPLES/rgb-80x60.ppm" G16="$SAMPLES/gray16-61x47.pgm" A="$SAMPLES/rgba-64x48.pam"

# rgb_case EXT NAME DECODER: $T/rgb.EXT and $T/g16.EXT made by codec-tool;
# an RGB crop of rgb.EXT into EXT, which DECODER reads as the CPU crop.
rgb_case() {
    "$CODEC_TOOL" convert "$P" "$T/rgb.$1"
    "$CODEC_TOOL" convert "$G16" "$T/g16.$1"
    crop_case "$2 RGB to $2" "$P" "$T/rgb.$1" 33x21+40+30 "$1"
    "$IMGCROP" "$P" 33x21+40+30 "$T/ref-rgb.ppm"
    tool_agrees "$3 reads roicopy's $2 as the CPU crop" "$T/gpu.$1" "$T/ref-rgb.ppm" "$3"
}

if has png; then
    rgb_case png PNG pngtopam
    "$CODEC_TOOL" convert "$A" "$T/rgba.png"
    crop_case "PNG RGB to PPM (extension rule)" "$P" "$T/rgb.png" 80x60+0+0 ppm
    crop_case "PNG 16-bit gray to PGM" "$G16" "$T/g16.png" 20x30+41+17 pgm
    crop_case "PNG 16-bit gray to PNG" "$G16" "$T/g16.png" 61x1+0+46 png
    crop_case "PNG RGBA to PNG" "$A" "$T/rgba.png" 1x1+63+47 png
    crop_case "PNG RGBA to PAM" "$A" "$T/rgba.png" 30x20+3+4 pam
    if command -v pnmtopng >/dev/null 2>&1; then
        pnmtopng -interlace "$P" >"$T/inter.png" 2>/dev/null
        crop_case "interlaced PNG (made by pnmtopng)" "$P" "$T/inter.png" 17x13+50+40 ppm
    else
        skip_one "interlaced PNG: no pnmtopng"
    fi
    cp "$T/rgb.png" "$T/named.dat"
    crop_case "a PNG named .dat" "$P" "$T/named.dat" 10x10+5+5 png
    "$ROICOPY" --roi 12x8+1+2 - "$T/stdin.png" <"$T/rgb.png" 2>"$T/err" &&
        "$IMGCROP" --format pam "$P" 12x8+1+2 "$T/ref-stdin.pam" &&
        "$CODEC_TOOL" cmp "$T/stdin.png" "$T/ref-stdin.pam" >/dev/null 2>&1 &&
        pass "a PNG on standard input" || { fail "PNG on standard input"; diag_file "$T/err"; }
    # A batch through the ring: 6 PNGs, -o DIR, every output a PNG.
    mkdir "$T/batch-in" "$T/batch-out"
    for i in 1 2 3 4 5 6; do cp "$T/rgb.png" "$T/batch-in/f$i.png"; done
    "$ROICOPY" -q --roi 40x30+20+15 "$T/batch-in"/f*.png -o "$T/batch-out" 2>"$T/err"
    rc=$?
    "$IMGCROP" --format pam "$P" 40x30+20+15 "$T/ref-b.pam"
    "$CODEC_TOOL" convert "$T/ref-b.pam" "$T/ref-b.png"
    okb=$([ $rc -eq 0 ] && echo 1)
    for i in 1 2 3 4 5 6; do cmp -s "$T/batch-out/f$i.png" "$T/ref-b.png" || okb=; done
    [ -n "$okb" ] && pass "a batch of 6 PNGs through the ring" ||
        { fail "PNG batch (exit $rc)"; diag_file "$T/err"; ls "$T/batch-out" | sed 's/^/#   /'; }
    printf 'precious\n' >"$T/keep.png"
    head -c 60 "$T/rgb.png" >"$T/cut.png"
    "$ROICOPY" --roi 4x4 "$T/cut.png" "$T/keep.png" 2>"$T/err"
    rc=$?
    if [ $rc -eq 3 ] && [ "$(cat "$T/keep.png")" = precious ] && grep -q "^roicopy: $T/cut.png: " "$T/err"; then
        pass "a PNG cut in its pixels: exit 3, the old output kept"
    else
        fail "cut PNG (exit $rc)"; diag_file "$T/err"
    fi
else
    skip_one "PNG cases: built without PNG support"
fi

if has tiff; then
    rgb_case tif TIFF tifftopnm
    crop_case "TIFF 16-bit gray to PGM" "$G16" "$T/g16.tif" 20x30+41+17 pgm
    crop_case "TIFF 16-bit gray to .tiff" "$G16" "$T/g16.tif" 61x47+0+0 tiff
    crop_case "PPM to TIFF (extension rule)" "$P" "$P" 9x9+70+50 tif
    if command -v tiffcp >/dev/null 2>&1; then
        tiffcp "$T/rgb.tif" "$T/g16.tif" "$T/two.tif" 2>/dev/null
        crop_case "--page 1 of a two-page TIFF" "$G16" "$T/two.tif" 8x8+1+1 pgm --page 1
    else
        skip_one "--page: no tiffcp"
    fi
    "$MKSAMPLES" image raw 29x13x3 float 15 "$T/f32.raw"
    if "$ROICOPY" --raw 29x13x3 --depth 32 --roi 20x10+2+3 "$T/f32.raw" "$T/f.tif" 2>"$T/err" &&
        "$ROICOPY" --roi 20x10+0+0 "$T/f.tif" "$T/f.raw" 2>>"$T/err" &&
        "$IMGCROP" --raw 29x13x3 --depth 32 "$T/f32.raw" 20x10+2+3 "$T/ref-f.raw" &&
        cmp -s "$T/f.raw" "$T/ref-f.raw"; then
        pass "float raw to TIFF and back keeps every bit"
    else
        fail "float TIFF round trip"; diag_file "$T/err"
    fi
else
    skip_one "TIFF cases: built without TIFF support (the GPU machine has no libtiff)"
fi
finish
