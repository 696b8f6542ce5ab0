#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad inputs (exit 3): every class of broken header or file gives one line
# "roicopy: FILE: what is wrong", found before any CUDA call; no output or
# temporary file appears and an existing output keeps its bytes.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

IN="$T/in"
mkdir "$IN"
E="$EXISTING"

# bad NAME 'printf format of the header' PIXEL_BYTES 'message' 'description'
bad() {
    printf "$2" >"$IN/$1"
    head -c "$3" /dev/zero >>"$IN/$1"
    EXPECT_PREFIX="roicopy: $IN/$1: "
    expect_error 3 "$4" "$5" -- "$IN/$1" "$E"
    EXPECT_PREFIX=
}

bad magic.pgm 'P9\n2 2\n255\n' 4 "bad magic" "bad magic"
# A PNG is known by its bytes, whatever its name: libpng's own message
# when PNG is compiled in, else what to configure.
case " $("$ROICOPY" --version | sed -n 's/^formats: //p') " in
*" png "*) bad png.pgm '\211PNG\r\n\032\n' 16 "libpng: " "a broken PNG named .pgm" ;;
*) bad png.pgm '\211PNG\r\n\032\n' 16 "built without PNG support (install libpng-dev and configure again)" "a PNG file without PNG support" ;;
esac
bad plain.pgm 'P2\n2 2\n255\n' 8 "plain or bitmap netpbm (P2) is not supported" "plain (ASCII) PGM"
bad empty.pgm '' 0 "empty file" "empty file"
bad zero-width.pgm 'P5\n0 2\n255\n' 0 "zero dimension (0x2)" "zero width"
bad zero-height.ppm 'P6\n2 0\n255\n' 0 "zero dimension (2x0)" "zero height"
bad negative.pgm 'P5\n2 -2\n255\n' 4 "negative height" "negative height"
bad oversize.pgm 'P5\n99999999999 2\n255\n' 4 "bad header: width 99999999999 is out of range 1..2147483647" "oversize width, named"
bad oversize2.pgm 'P5\n2 2147483648\n255\n' 4 "bad header: height 2147483648 is out of range 1..2147483647" "height one past the limit, named"
bad oversize.pam 'P7\nWIDTH 2\nHEIGHT 2\nDEPTH 123456789012345678901234\nMAXVAL 255\nENDHDR\n' 4 \
    "bad PAM header: DEPTH 12345678901234567890... is out of range 1..2147483647" "PAM DEPTH of 24 digits, its first 20 named"
bad wide-row.ppm 'P6\n1000000000 1\n255\n' 4 "too long" "row bytes beyond 2^31"
bad overflow.pam 'P7\nWIDTH 2147483647\nHEIGHT 2147483647\nDEPTH 2147483647\nMAXVAL 65535\nENDHDR\n' 4 "too long" "width x channels x bytes overflow"
bad huge.pgm 'P5\n2147483647 2147483647\n255\n' 4 "needs 4611686014132420609 bytes of pixels, the file has 4" "4.6e18-byte image in a tiny file"
bad maxval0.pgm 'P5\n2 2\n0\n' 4 "maxval 0 is out of range" "maxval 0"
bad maxval-big.pgm 'P5\n2 2\n65536\n' 8 "maxval 65536 is out of range 1..65535" "maxval above 65535"
bad maxval-huge.pgm 'P5\n2 2\n1000001\n' 8 "bad header: maxval 1000001 is out of range 1..65535" "maxval past any limit, named with the real range"
bad maxval-huge.pam 'P7\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 1000001\nENDHDR\n' 8 \
    "bad PAM header: MAXVAL 1000001 is out of range 1..65535" "PAM MAXVAL past any limit, named with the real range"
bad no-endhdr.pam 'P7\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\n' 4 "no ENDHDR" "PAM without ENDHDR"
# Pixels (no newline among them) where ENDHDR should be: said so, not "a
# line too long".
{ printf 'P7\nWIDTH 4\nHEIGHT 4\nDEPTH 1\nMAXVAL 255\n'; head -c 4096 /dev/zero | tr '\000' '\001'; } >"$IN/pixels-no-endhdr.pam"
EXPECT_PREFIX="roicopy: $IN/pixels-no-endhdr.pam: "
expect_error 3 "bad PAM header: no ENDHDR line before the binary data" \
    "PAM whose pixels follow MAXVAL without ENDHDR" -- "$IN/pixels-no-endhdr.pam" "$E"
EXPECT_PREFIX=
bad depth0.pam 'P7\nWIDTH 2\nHEIGHT 2\nDEPTH 0\nMAXVAL 255\nENDHDR\n' 4 "DEPTH is 0" "PAM with DEPTH 0"
bad no-width.pam 'P7\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4 "no WIDTH line" "PAM without WIDTH"
bad truncated.pgm 'P5\n# a comment\n4 4\n255\n' 15 "needs 16 bytes of pixels, the file has 15" "pixel data one byte short"
bad truncated16.pgm 'P5\n4 4\n65535\n' 31 "needs 32 bytes of pixels, the file has 31" "16-bit pixel data one byte short"
bad truncated.pam 'P7\nWIDTH 3\nHEIGHT 3\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n' 35 "needs 36 bytes of pixels, the file has 35" "PAM pixel data short"
# A multi-image stream (--stack's, or cat of two files): one image was
# cropped and the others dropped in silence; pamcut crops them all.
bad two-images.pgm 'P5\n2 2\n255\n\001\002\003\004P5\n1 1\n255\n' 1 \
    "holds more than one image (the next starts at byte 15); roicopy crops one: split the stream with pamsplit" \
    "a stream of two PGM images"
bad two-images.pam 'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\001\n\nP7\n' 0 \
    "holds more than one image (the next starts at byte 49)" "a PAM, blank lines, then another magic number"
printf 'P5\n2 2\n255\n\001\002\003\004\n\njunk' >"$IN/trailing.pgm"
if env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$IN/trailing.pgm" "$T/x.pgm" >"$T/plan" 2>"$T/err" &&
    grep -q "^input:    $IN/trailing.pgm (pgm, 2x2," "$T/plan"; then
    pass "bytes after the pixels that are not an image are left alone, as pamfile leaves them"
else
    fail "bytes after the pixels"; diag_file "$T/err"
fi

head -c 4455 /dev/zero >"$IN/short.raw"
expect_error 3 "--raw 45x33x3 --depth 16 needs 8910 bytes of pixels, the file has 4455" \
    "raw file size disagreeing with --raw" -- --raw 45x33x3 --depth 16 "$IN/short.raw" "$E"
expect_error 3 "--raw 45x34x3 --depth 8 needs 4590 bytes of pixels, the file has 4455" \
    "raw file one row short" -- --raw 45x34x3 "$IN/short.raw" "$E"
expect_error 3 "roicopy: $IN/none.pgm: No such file or directory" "missing input" -- "$IN/none.pgm" "$E"
# An empty name is shown as "", as -o '' and an empty OUTPUT are (it was
# "roicopy: : No such file or directory").
expect_error 3 'roicopy: "": No such file or directory' "an empty input name" -- "" "$E"
mkdir "$IN/dir.pgm"
expect_error 3 "roicopy: $IN/dir.pgm: is a directory" "a directory as input" -- "$IN/dir.pgm" "$E"
expect_error 3 "roicopy: /dev/null: is a character device, not a regular file" "a device as input" -- /dev/null "$E"
cp "$SAMPLES/gray-97x61.pgm" "$IN/locked.pgm"
chmod 000 "$IN/locked.pgm"
if cat "$IN/locked.pgm" >/dev/null 2>&1; then
    skip_one "unreadable input: this user reads any file (root)"
else
    expect_error 3 "roicopy: $IN/locked.pgm: Permission denied" "unreadable input" -- "$IN/locked.pgm" "$E"
fi
# Header lines of any length, read as libnetpbm reads them (pieces of 254
# bytes): a long blank line is taken, as pamfile takes it.
{ printf 'P7\nWIDTH 4\n'; head -c 2000 /dev/zero | tr '\000' ' '; printf '\nHEIGHT 4\nDEPTH 1\nMAXVAL 255\nENDHDR\n'
  head -c 16 /dev/zero; } >"$IN/long-blank.pam"
if env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$IN/long-blank.pam" "$T/x.pam" >"$T/plan" 2>"$T/err" &&
    grep -q "^input:    $IN/long-blank.pam (pam, 4x4, 1 channel" "$T/plan"; then
    pass "a PAM header line of 2000 blanks is taken"
else
    fail "a PAM header line of 2000 blanks"; diag_file "$T/err"
fi
# With several inputs, the bad one is named and nothing is written.
expect_error 3 "roicopy: $IN/magic.pgm: bad magic" "a bad frame among good ones" \
    -- "$SAMPLES/gray-97x61.pgm" "$IN/magic.pgm" -o "$OUT"
finish
