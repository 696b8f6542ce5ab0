#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy's PNG and TIFF codecs against the field's own tools, on the
# bundled samples: files made by netpbm (pnmtopng, pamtopng, pnmtotiff,
# pamtotiff) and libtiff's tiffcp (tiles, planar-separate, BigTIFF,
# several pages) decode through tools/png-io.c and tools/tiff-io.c to the
# original pixels, byte for byte; files the codecs write decode through
# netpbm (pngtopam, tifftopnm) to the original pixels; truncated and
# corrupt files are refused with the library's message (exit 3), without
# a leak or an invalid access under valgrind when it is installed.  A
# case whose tool is missing, or whose codec is not compiled in, skips.
. "${top_srcdir:-.}/tests/lib/tap.sh"
TOOL="$top_builddir/tests/roicopy/codec-tool"
S="$top_srcdir/samples"

formats=$("$TOOL" formats) || { echo "Bail out! $TOOL does not run"; exit 1; }
case " $formats " in *" png "*) png=yes ;; *) png=no ;; esac
case " $formats " in *" tiff "*) tiff=yes ;; *) tiff=no ;; esac
echo "# formats: $formats"

# same DESC A B [PAGE]: the pixels of A (page PAGE) equal those of B.
same() {
    d=$1
    shift
    if "$TOOL" cmp "$@" >"$T/cmp.out" 2>&1; then
        pass "$d"
    else
        fail "$d"
        sed 's/^/#   /' "$T/cmp.out"
    fi
}

# make DESC FILE TOOL ARGS...: run a converter to make FILE, or skip.
# Returns 1 (and reports) when it could not.
make_with() {
    d=$1 out=$2 tool=$3
    shift 3
    if ! have "$tool"; then
        skip_one "$d: $tool is not installed"
        return 1
    fi
    if ! "$tool" "$@" >"$out" 2>"$T/tool.err" || [ ! -s "$out" ]; then
        fail "$d: $tool failed"
        sed 's/^/#   /' "$T/tool.err"
        return 1
    fi
    return 0
}

# Sources: the samples, plus 16-bit RGB, gray+alpha, 1-bit and few-colour
# images derived from them with netpbm.
G8="$S/gray-97x61.pgm" G16="$S/gray16-61x47.pgm" RGB8="$S/rgb-80x60.ppm"
RGBA8="$S/rgba-64x48.pam"
RGB16= GA8= BIT= FEW=
if have pamdepth; then
    # Real 16-bit RGB: 8-bit samples scaled by 257 would be written as 8-bit
    # by pnmtopng; three different 16-bit planes from the gray16 sample.
    if have rgb3toppm && have pamflip && pamflip -r180 "$G16" >"$T/g16r.pgm" 2>/dev/null &&
        pamflip -lr "$G16" >"$T/g16m.pgm" 2>/dev/null &&
        rgb3toppm "$G16" "$T/g16r.pgm" "$T/g16m.pgm" >"$T/rgb16.ppm" 2>/dev/null; then
        RGB16="$T/rgb16.ppm"
    fi
    pamdepth 3 "$RGB8" 2>/dev/null | pamdepth 255 >"$T/few.ppm" 2>/dev/null &&
        FEW="$T/few.ppm"
    if have pgmtopbm && pgmtopbm -threshold "$G8" >"$T/bit.pbm" 2>/dev/null; then
        pamdepth 255 "$T/bit.pbm" >"$T/bit.pgm" 2>/dev/null && BIT="$T/bit.pgm"
    fi
fi
have pamstack && pamstack "$G8" "$G8" >"$T/ga.pam" 2>/dev/null && GA8="$T/ga.pam"

# ---- PNG made by netpbm, decoded by png-io ----------------------------------
# decode png|tiff DESC SOURCE CONVERTER [ARGS]: CONVERTER (netpbm's, or
# tiffcp) makes the file from SOURCE; the codec must decode SOURCE's pixels.
decode() {
    case $1 in
    png) built=$png ext=png name=PNG ;;
    *) built=$tiff ext=tif name=TIFF ;;
    esac
    d=$2 src=$3 conv=$4
    shift 4
    if [ "$built" = no ]; then skip_one "$d: $name not compiled in"; return; fi
    if [ -z "$src" ]; then skip_one "$d: no source (netpbm tools missing)"; return; fi
    make_with "$d" "$T/made.$ext" "$conv" "$@" "$src" || return
    same "$d: pixels equal the source" "$T/made.$ext" "$src"
}
decode png "PNG gray8 (pnmtopng)" "$G8" pnmtopng
decode png "PNG gray16 (pnmtopng)" "$G16" pnmtopng
decode png "PNG rgb8 (pnmtopng)" "$RGB8" pnmtopng
decode png "PNG rgb16 (pnmtopng)" "$RGB16" pnmtopng
decode png "PNG rgba8 (pamtopng)" "$RGBA8" pamtopng
decode png "PNG rgb8 interlaced (pnmtopng -interlace)" "$RGB8" pnmtopng -interlace
decode png "PNG gray16 interlaced (pnmtopng -interlace)" "$G16" pnmtopng -interlace
decode png "PNG rgba8 interlaced (pamtopng -interlace)" "$RGBA8" pamtopng -interlace

# Palette and 1-bit: the PNG must really be one (colour type 3, bit depth 1).
png_kind() { od -An -tu1 -j24 -N2 "$1" | tr -s ' ' | sed 's/^ //'; }
if [ $png = yes ] && [ -n "$FEW" ] && make_with "PNG palette" "$T/pal.png" pnmtopng "$FEW"; then
    k=$(png_kind "$T/pal.png")
    case $k in
    "8 3"|"4 3"|"2 3"|"1 3") same "PNG palette (pnmtopng, bit depth/type $k): expanded to RGB8" "$T/pal.png" "$FEW" ;;
    *) fail "PNG palette: pnmtopng made bit depth/type $k, not a palette" ;;
    esac
else
    [ $png = yes ] && [ -z "$FEW" ] && skip_one "PNG palette: pamdepth missing"
    [ $png = no ] && skip_one "PNG palette: PNG not compiled in"
fi
if [ $png = yes ] && [ -n "$BIT" ] && make_with "PNG 1-bit" "$T/bit.png" pnmtopng "$T/bit.pbm"; then
    k=$(png_kind "$T/bit.png")
    if [ "$k" = "1 0" ]; then
        same "PNG 1-bit gray (pnmtopng): expanded to 0/255" "$T/bit.png" "$BIT"
    else
        fail "PNG 1-bit: pnmtopng made bit depth/type $k"
    fi
else
    skip_one "PNG 1-bit: PNG or pgmtopbm/pamdepth missing"
fi

# ---- PNG written by png-io, decoded by netpbm -------------------------------
png_encode() { # DESC SOURCE [pngtopam ARGS]
    d=$1 src=$2
    shift 2
    if [ $png = no ]; then skip_one "$d: PNG not compiled in"; return; fi
    if [ -z "$src" ]; then skip_one "$d: no source"; return; fi
    if ! have pngtopam; then skip_one "$d: pngtopam is not installed"; return; fi
    if ! "$TOOL" convert "$src" "$T/ours.png" 2>"$T/err"; then
        fail "$d: png-io cannot write"; sed 's/^/#   /' "$T/err"; return
    fi
    if ! pngtopam "$@" "$T/ours.png" >"$T/back.pam" 2>"$T/err"; then
        fail "$d: pngtopam refuses our PNG"; sed 's/^/#   /' "$T/err"; return
    fi
    same "$d: pngtopam reads the source's pixels" "$T/back.pam" "$src"
}
png_encode "png-io gray8" "$G8"
png_encode "png-io gray16" "$G16"
png_encode "png-io rgb8" "$RGB8"
png_encode "png-io rgb16" "$RGB16"
png_encode "png-io gray+alpha8" "$GA8" -alphapam
png_encode "png-io rgba8" "$RGBA8" -alphapam

# ---- TIFF made by netpbm and tiffcp, decoded by tiff-io ----------------------
decode tiff "TIFF gray8 (pnmtotiff)" "$G8" pnmtotiff
decode tiff "TIFF gray16 (pnmtotiff)" "$G16" pnmtotiff
decode tiff "TIFF rgb8 LZW (pnmtotiff -lzw)" "$RGB8" pnmtotiff -lzw
decode tiff "TIFF rgb16 deflate (pnmtotiff -flate)" "$RGB16" pnmtotiff -flate
decode tiff "TIFF rgb8 one row a strip (pnmtotiff -rowsperstrip 1)" "$RGB8" pnmtotiff -rowsperstrip 1
decode tiff "TIFF rgba8 (pamtotiff)" "$RGBA8" pamtotiff

# tiffcp rewrites a netpbm-made TIFF in other layouts.
tiffcp_case() { # DESC SOURCE-TIFF EXPECTED PAGE TIFFCP-ARGS...
    d=$1 in=$2 want=$3 page=$4
    shift 4
    if [ $tiff = no ]; then skip_one "$d: TIFF not compiled in"; return; fi
    if ! have tiffcp; then skip_one "$d: tiffcp is not installed (libtiff-tools)"; return; fi
    if [ ! -s "$in" ]; then skip_one "$d: pnmtotiff is not installed"; return; fi
    if ! tiffcp "$@" "$T/cp.tif" >"$T/err" 2>&1; then
        fail "$d: tiffcp failed"; sed 's/^/#   /' "$T/err"; return
    fi
    same "$d: pixels equal the source" "$T/cp.tif" "$want" "$page"
}
: >"$T/rgb8.tif"
: >"$T/g16.tif"
have pnmtotiff && pnmtotiff "$RGB8" >"$T/rgb8.tif" 2>/dev/null
have pnmtotiff && pnmtotiff "$G16" >"$T/g16.tif" 2>/dev/null
tiffcp_case "TIFF rgb8 16x16 tiles (tiffcp -t)" "$T/rgb8.tif" "$RGB8" 0 -t -w 16 -l 16 "$T/rgb8.tif"
tiffcp_case "TIFF gray16 tiles, deflate (tiffcp -t -c zip)" "$T/g16.tif" "$G16" 0 -t -w 16 -l 16 -c zip "$T/g16.tif"
tiffcp_case "TIFF rgb8 planar-separate strips (tiffcp -p separate)" "$T/rgb8.tif" "$RGB8" 0 -p separate "$T/rgb8.tif"
tiffcp_case "TIFF rgb8 planar-separate tiles" "$T/rgb8.tif" "$RGB8" 0 -p separate -t -w 16 -l 16 "$T/rgb8.tif"
tiffcp_case "BigTIFF rgb8 (tiffcp -8)" "$T/rgb8.tif" "$RGB8" 0 -8 "$T/rgb8.tif"
tiffcp_case "BigTIFF gray16 tiles (tiffcp -8 -t)" "$T/g16.tif" "$G16" 0 -8 -t -w 32 -l 32 "$T/g16.tif"
tiffcp_case "multi-page, page 0 (tiffcp a b)" "$T/rgb8.tif" "$G16" 0 "$T/g16.tif" "$T/rgb8.tif"
tiffcp_case "multi-page, page 1 (tiffcp a b)" "$T/rgb8.tif" "$RGB8" 1 "$T/g16.tif" "$T/rgb8.tif"
if [ $tiff = yes ] && [ -s "$T/cp.tif" ]; then
    if "$TOOL" info "$T/cp.tif" 2 >"$T/out" 2>"$T/err"; then
        fail "multi-page, page 2 of 2: accepted"
    elif grep -q "no page 2: the file has 2 pages" "$T/err"; then
        pass "multi-page, page 2 of 2: refused, naming the page count"
    else
        fail "multi-page, page 2 of 2: wrong message"; sed 's/^/#   /' "$T/err"
    fi
fi

# ---- TIFF written by tiff-io, decoded by netpbm -----------------------------
tiff_encode() { # DESC SOURCE
    d=$1 src=$2
    if [ $tiff = no ]; then skip_one "$d: TIFF not compiled in"; return; fi
    if [ -z "$src" ]; then skip_one "$d: no source"; return; fi
    if ! have tifftopnm; then skip_one "$d: tifftopnm is not installed"; return; fi
    if ! "$TOOL" convert "$src" "$T/ours.tif" 2>"$T/err"; then
        fail "$d: tiff-io cannot write"; sed 's/^/#   /' "$T/err"; return
    fi
    # -byrow: without it tifftopnm reduces 16-bit samples.
    if ! tifftopnm -byrow "$T/ours.tif" >"$T/back.pnm" 2>"$T/err"; then
        fail "$d: tifftopnm refuses our TIFF"; sed 's/^/#   /' "$T/err"; return
    fi
    same "$d: tifftopnm reads the source's pixels" "$T/back.pnm" "$src"
}
tiff_encode "tiff-io gray8" "$G8"
tiff_encode "tiff-io gray16" "$G16"
tiff_encode "tiff-io rgb8" "$RGB8"
tiff_encode "tiff-io rgb16" "$RGB16"
if [ $tiff = yes ] && have tiffinfo && [ -s "$T/ours.tif" ]; then
    if tiffinfo "$T/ours.tif" 2>&1 | grep -q "Compression Scheme: AdobeDeflate"; then
        pass "tiff-io writes deflate (tiffinfo)"
    else
        fail "tiff-io output is not deflate"; tiffinfo "$T/ours.tif" 2>&1 | sed 's/^/#   /'
    fi
fi

# ---- corrupt files: exit 3 with the library's message, clean under valgrind
vg=
if have valgrind && [ "${CUXFER_NO_VALGRIND:-0}" != 1 ]; then
    vg="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect"
    # A sanitizer build (.ci/sanitize.sh) checks itself; valgrind cannot
    # run it ("ASan runtime does not come first").
    if $vg "$TOOL" formats 2>&1 | grep -q 'Sanitizer\|ASan runtime'; then
        vg=
    fi
fi
corrupt() { # DESC FILE MESSAGE
    d=$1 f=$2 msg=$3
    # shellcheck disable=SC2086
    $vg "$TOOL" cmp "$f" "$f" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -eq 3 ] && grep -q -- "$msg" "$T/err"; then
        pass "$d: exit 3 with \"$(head -n 1 "$T/err" | sed 's/^[^:]*: [^:]*: //')\"${vg:+ (valgrind clean)}"
    else
        fail "$d: exit $rc, wanted 3 and \"$msg\""; sed 's/^/#   /' "$T/err"
    fi
}
if [ $png = yes ] && "$TOOL" convert "$RGB8" "$T/good.png" 2>/dev/null; then
    size=$(wc -c <"$T/good.png")
    head -c $((size / 2)) "$T/good.png" >"$T/trunc.png"
    corrupt "PNG truncated" "$T/trunc.png" "truncated: chunk IDAT"
    # Flip a bit of IHDR's width: the chunk's CRC no longer matches.
    { head -c 18 "$T/good.png"; printf '\377'; tail -c +20 "$T/good.png"; } >"$T/crc.png"
    corrupt "PNG bad IHDR CRC" "$T/crc.png" "CRC error"
    : >"$T/empty.png"
    corrupt "PNG empty file" "$T/empty.png" "truncated file"
    corrupt "PNG from /dev/null" /dev/null "is a character device, not a regular file"
else
    skip_one "PNG corrupt files: PNG not compiled in"
fi
if [ $tiff = yes ] && "$TOOL" convert "$RGB8" "$T/good.tif" 2>/dev/null; then
    size=$(wc -c <"$T/good.tif")
    head -c $((size / 2)) "$T/good.tif" >"$T/trunc.tif"
    corrupt "TIFF truncated" "$T/trunc.tif" "libtiff: "
    printf 'II*\000\377\377\377\177' >"$T/bad-ifd.tif"
    corrupt "TIFF directory offset past the end" "$T/bad-ifd.tif" "libtiff: "
    { head -c 4 "$T/good.tif"; printf '\010\000\000\000\377\377'; } >"$T/bad-count.tif"
    corrupt "TIFF impossible directory" "$T/bad-count.tif" "libtiff: "
else
    skip_one "TIFF corrupt files: TIFF not compiled in"
fi

finish
