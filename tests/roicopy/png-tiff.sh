#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy and PNG/TIFF on the CPU (--dry-run, errors; no GPU needed):
# inputs are known by their bytes (a PNG named .dat is a PNG), the plan
# shows their geometry, the extension rule picks .png/.tif/.tiff, float
# into a PNG is refused (exit 2) naming the formats that can hold it,
# --page picks a TIFF page, corrupt files are exit 3 with the library's
# message.  Inputs are made by netpbm's own tools when present (pnmtopng,
# pamtotiff, tiffcp), else by tests/roicopy/codec-tool.  Formats not compiled in
# skip their cases.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"
CODEC_TOOL="$top_builddir/tests/roicopy/codec-tool"
formats=$("$ROICOPY" --version | sed -n 's/^formats: //p')
has() { case " $formats " in *" $1 "*) return 0 ;; esac; return 1; }
if [ -z "$formats" ]; then
    fail "roicopy --version names no formats"
    finish
fi
pass "roicopy --version lists the formats: $formats"

# make_png IN.pam OUT.png: through netpbm when it is there.
make_png() {
    if command -v pnmtopng >/dev/null 2>&1; then
        pnmtopng "$1" >"$2" 2>/dev/null
    else
        "$CODEC_TOOL" convert "$1" "$2"
    fi
}
make_tiff() {
    if command -v pamtotiff >/dev/null 2>&1; then
        pamtotiff -truecolor "$1" >"$2" 2>/dev/null
    else
        "$CODEC_TOOL" convert "$1" "$2"
    fi
}

"$MKSAMPLES" image raw 8x4x3 float 3 "$T/f.raw"
if has png; then
    make_png "$SAMPLES/rgb-80x60.ppm" "$T/rgb.png"
    plan_has "PNG input: geometry, the .png extension keeps PNG" "input:    $T/rgb.png (png, 80x60, 3 channels x 1 byte, maxval 255)
roi:      20x10+5+6
source:   pitch 240 bytes (the full input row), ROI at byte offset 1455
output:   $OUT/new.png (png)" \
        --roi 20x10+5+6 "$T/rgb.png" "$OUT/new.png"
    cp "$T/rgb.png" "$T/named.dat"
    plan_has "a PNG named .dat is read as PNG, written as PAM by extension" "(png, 80x60, 3 channels x 1 byte
output:   $OUT/new.pam (pam, RGB)" \
        "$T/named.dat" "$OUT/new.pam"
    plan_has "a PPM into .PNG (any case)" "output:   $OUT/new.PNG (png)" \
        "$SAMPLES/rgb-80x60.ppm" "$OUT/new.PNG"
    "$CODEC_TOOL" convert "$SAMPLES/gray16-61x47.pgm" "$T/g16.png"
    plan_has "16-bit gray PNG" "(png, 61x47, 1 channel x 2 bytes, maxval 65535)" \
        "$T/g16.png" "$OUT/new.pgm"
    plan_has "-o DIR --format png renames the extension" "output:   $OUT/rgb-80x60.png (png)" \
        --format png "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
    expect_error 2 "png (from the extension) holds 1 to 4 channels of 8- or 16-bit samples, not 3 channels of float 32-bit samples" \
        "float into .png is refused" -- --raw 8x4x3 --depth 32 "$T/f.raw" "$OUT/new.png"
    expect_error 2 "png (from --format)" "float with --format png is refused" -- \
        --format png --raw 8x4x3 --depth 32 "$T/f.raw" "$OUT/new.out"
    "$MKSAMPLES" image pam 4x4x5 255 4 "$T/d5.pam"
    expect_error 2 "not 5 channels" "5 channels into .png are refused" -- "$T/d5.pam" "$OUT/new.png"
    head -c 20 "$T/rgb.png" >"$T/cut.png"
    expect_error 3 "$T/cut.png" "a PNG cut inside its IHDR is exit 3" -- --dry-run "$T/cut.png" "$OUT/new.png"
    cp "$T/rgb.png" "$T/crc.png"
    printf '\377\377\377\377' | dd of="$T/crc.png" bs=1 seek=29 conv=notrunc 2>/dev/null
    expect_error 3 "$T/crc.png" "a PNG with a bad IHDR CRC is exit 3" -- --dry-run "$T/crc.png" "$OUT/new.png"
    expect_error 3 "no page 1" "--page 1 of a PNG is exit 3" -- --dry-run --page 1 "$T/rgb.png" "$OUT/new.png"
else
    skip_one "PNG cases: built without PNG support"
    expect_error 2 "built without PNG support (install libpng-dev and configure again)" \
        "without libpng, .png outputs are refused" -- --dry-run "$SAMPLES/rgb-80x60.ppm" "$OUT/new.png"
fi

if has tiff; then
    make_tiff "$SAMPLES/rgb-80x60.ppm" "$T/rgb.tif"
    plan_has "TIFF input: geometry, .tiff output" "input:    $T/rgb.tif (tiff, 80x60, 3 channels x 1 byte, maxval 255)
output:   $OUT/new.tiff (tiff)" \
        --roi 20x10+5+6 "$T/rgb.tif" "$OUT/new.tiff"
    make_tiff "$SAMPLES/gray16-61x47.pgm" "$T/g16.tif"
    plan_has "16-bit TIFF to .pgm" "(tiff, 61x47, 1 channel x 2 bytes, maxval 65535)
output:   $OUT/new.pgm (pgm)" \
        "$T/g16.tif" "$OUT/new.pgm"
    plan_has "float raw into .tif is allowed" "output:   $OUT/new.tif (tiff)" \
        --raw 8x4x3 --depth 32 "$T/f.raw" "$OUT/new.tif"
    if command -v tiffcp >/dev/null 2>&1; then
        tiffcp "$T/rgb.tif" "$T/g16.tif" "$T/two.tif" 2>/dev/null
        plan_has "--page 1 reads the second page" "(tiff, 61x47, 1 channel x 2 bytes, maxval 65535)" \
            --page 1 "$T/two.tif" "$OUT/new.tif"
        plan_has "--page 0 (the default) reads the first" "(tiff, 80x60, 3 channels x 1 byte" \
            "$T/two.tif" "$OUT/new.tif"
        expect_error 3 "no page 2" "--page 2 of a two-page TIFF is exit 3" -- \
            --dry-run --page 2 "$T/two.tif" "$OUT/new.tif"
    else
        skip_one "--page: no tiffcp"
    fi
    head -c 300 "$T/rgb.tif" >"$T/cut.tif"
    expect_error 3 "$T/cut.tif" "a truncated TIFF is exit 3" -- --dry-run "$T/cut.tif" "$OUT/new.tif"
    printf 'II*\000\377\377\377\177' >"$T/badifd.tif"
    expect_error 3 "$T/badifd.tif" "a TIFF whose first directory is past its end is exit 3" -- \
        --dry-run "$T/badifd.tif" "$OUT/new.tif"
else
    skip_one "TIFF cases: built without TIFF support"
    expect_error 2 "built without TIFF support (install libtiff-dev and configure again)" \
        "without libtiff, .tif outputs are refused" -- --dry-run "$SAMPLES/rgb-80x60.ppm" "$OUT/new.tif"
fi
expect_error 2 "--page 1: raw inputs have one page" "--page with --raw" -- \
    --dry-run --page 1 --raw 45x33x3 "$SAMPLES/rgb-45x33x3.raw" "$OUT/new.raw"
expect_error 3 "no page 1: a netpbm file has one page" "--page 1 of a PPM" -- \
    --dry-run --page 1 "$SAMPLES/rgb-80x60.ppm" "$OUT/new.ppm"
finish
