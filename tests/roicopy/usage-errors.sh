#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage errors (exit 2): unknown options, malformed geometry and numbers,
# options that need each other, an ROI that is empty or outside the image,
# a placement outside the canvas, a format that cannot hold the samples,
# a malformed --devices list (syntax, negative, duplicate, too large),
# --device with --devices, fewer streams than devices.  Option values are
# quoted escaped, as file names are: a control character never reaches
# the terminal.  --threads with one frame is no error (-v says it does
# nothing); /dev/stdin with -o DIR is a name.
# Each is one line on stderr, found before any CUDA call, with the existing
# output untouched.  --help and --version succeed.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

G="$SAMPLES/gray-97x61.pgm"
RGBA="$SAMPLES/rgba-64x48.pam"
E="$EXISTING"

expect_error 2 "unknown option --frobnicate" "unknown long option" -- --frobnicate "$G" "$E"
expect_error 2 "unknown option --frob" "unknown option with a value, named without it" -- --frob=1 "$G" "$E"
expect_error 2 "option --verify takes no argument" "a flag given a value" -- --verify=yes "$G" "$E"
expect_error 2 "unknown option -x" "unknown short option" -- -x "$G" "$E"
expect_error 2 "option --roi needs an argument" "option without its argument" -- "$G" "$E" --roi
expect_error 2 "expected INPUT OUTPUT" "no arguments" --
expect_error 2 "expected INPUT OUTPUT" "an input but no output" -- "$G"
expect_error 2 "several inputs need -o DIR" "three operands without -o" -- "$G" "$G" "$E"
expect_error 2 'bad geometry "10x": missing height' "geometry without height" -- --roi 10x "$G" "$E"
expect_error 2 'bad geometry "10x10+5": missing Y offset' "geometry without Y offset" -- --roi 10x10+5 "$G" "$E"
expect_error 2 'negative X offset' "geometry with a negative offset" -- --roi 10x10-5+0 "$G" "$E"
expect_error 2 'trailing "junk"' "geometry with trailing junk" -- --roi 10x10+1+1junk "$G" "$E"
expect_error 2 'too large' "geometry that overflows" -- --roi 99999999999999999999x1 "$G" "$E"
expect_error 2 'width must be at least 1' "empty ROI" -- --roi 0x10+1+1 "$G" "$E"
expect_error 2 "$G: ROI 10x10+90+0 is partly outside the 97x61 image (it spans columns 90..99, rows 0..9)" "ROI past the right edge" -- --roi 10x10+90+0 "$G" "$E"
expect_error 2 "ROI 1x1+0+61 is outside the 97x61 image" "ROI below the last row" -- --roi 1x1+0+61 "$G" "$E"
expect_error 2 "ROI 98x61+0+0 is partly outside" "ROI wider than the image" -- --roi 98x61 "$G" "$E"
expect_error 2 "--place and --canvas go together" "--place without --canvas" -- --place 1,1 "$G" "$E"
expect_error 2 "--place and --canvas go together" "--canvas without --place" -- --canvas 100x100 "$G" "$E"
expect_error 2 "does not fit in the 100x100 canvas" "ROI placed past the canvas" -- --roi 10x10 --place 95,0 --canvas 100x100 "$G" "$E"
expect_error 2 "does not fit in the 50x50 canvas" "whole image larger than the canvas" -- --place 0,0 --canvas 50x50 "$G" "$E"
expect_error 2 'bad position "1;1"' "malformed --place" -- --place '1;1' --canvas 100x100 "$G" "$E"
expect_error 2 'bad size "100"' "malformed --canvas" -- --place 1,1 --canvas 100 "$G" "$E"
expect_error 2 'bad --streams value "0": out of range 1..64' "--streams 0" -- --streams 0 "$G" "$E"
expect_error 2 'bad --streams value "65": out of range 1..64' "--streams 65" -- --streams 65 "$G" "$E"
expect_error 2 'bad --streams value "four"' "--streams not a number" -- --streams four "$G" "$E"
expect_error 2 'bad --repeat value "0"' "--repeat 0" -- --repeat 0 "$G" "$E"
expect_error 2 'bad --device value "-1": negative value' "--device -1" -- --device -1 "$G" "$E"
expect_error 2 '--devices: bad list "0,,1": missing value' "--devices with an empty item" -- --devices 0,,1 "$G" "$E"
expect_error 2 '--devices: bad list "0,1,": missing value' "--devices with a trailing comma" -- --devices 0,1, "$G" "$E"
expect_error 2 '--devices: bad list "0;1": unexpected ";1"' "--devices with a bad separator" -- --devices '0;1' "$G" "$E"
expect_error 2 '--devices: bad list "one"' "--devices not numbers" -- --devices one "$G" "$E"
expect_error 2 '--devices: bad list "0,-1": negative value' "--devices with a negative device" -- --devices 0,-1 "$G" "$E"
expect_error 2 '--devices: bad list "0,1,0": device 0 is listed twice' "--devices with a duplicate" -- --devices 0,1,0 "$G" "$E"
expect_error 2 '--devices: bad list "1,1": device 1 is listed twice' "--devices with a repeated single device" -- --devices 1,1 "$G" "$E"
expect_error 2 '--devices: bad list "0,1024": device 1024 is too large (at most 1023)' "--devices past 1023" -- --devices 0,1024 "$G" "$E"
expect_error 2 "option --devices needs an argument" "--devices without its list" -- "$G" "$E" --devices
expect_error 2 "--device and --devices exclude each other" "--device with --devices" -- --device 0 --devices 0,1 "$G" "$E"
expect_error 2 "--device and --devices exclude each other" "--devices with --device" -- --devices 0,1 --device 1 "$G" "$E"
expect_error 2 "--streams 2 is fewer than the 3 devices of --devices" "fewer bands than devices" -- --devices 0,1,2 --streams 2 "$G" "$E"
expect_error 2 "--streams 1 is fewer than the 2 devices of --devices" "fewer ring slots than devices" -- --devices 0,1 --streams 1 "$G" "$G" -o "$OUT"
expect_error 2 'bad --depth value "12": must be 8, 16 or 32' "--depth 12" -- --raw 2x2x1 --depth 12 "$G" "$E"
expect_error 2 "--depth needs --raw" "--depth without --raw" -- --depth 16 "$G" "$E"
expect_error 2 'bad shape "2x2"' "malformed --raw" -- --raw 2x2 "$G" "$E"
expect_error 2 'bad --format value "bmp"' "unknown format" -- --format bmp "$G" "$E"
expect_error 2 "$E: ppm (from --format) holds 3 channels of 8- or 16-bit samples, not 4 channels of 8-bit samples; pam" "RGBA to PPM" -- --format ppm "$RGBA" "$E"
expect_error 2 "pgm (from --format) holds 1 channel of 8- or 16-bit samples, not 3 channels of 8-bit samples; ppm, pam" "RGB to PGM" -- --format pgm "$SAMPLES/rgb-80x60.ppm" "$E"
head -c 48 /dev/zero >"$T/f.raw"
expect_error 2 "not 1 channel of float 32-bit samples;" "float raw to PGM" -- --raw 4x3x1 --depth 32 --format pgm "$T/f.raw" "$E"

# Option values with control characters (a terminal escape): quoted as
# \xNN, the raw byte never printed.
ESC=$(printf '\033')
for case in "--roi|4x4+1+1$ESC[31m|--roi: bad geometry \"4x4+1+1\\x1b[31m\": trailing \"\\x1b[31m\"" \
    "--tiles|2x$ESC|--tiles: bad geometry \"2x\\x1b\": missing height" \
    "--place|1,$ESC|--place: bad position \"1,\\x1b\": missing Y" \
    "--canvas|9x9$ESC|--canvas: bad size \"9x9\\x1b\": trailing \"\\x1b\"" \
    "--raw|2x2x$ESC|--raw: bad shape \"2x2x\\x1b\": missing channels" \
    "--format|$ESC[31m|bad --format value \"\\x1b[31m\": must be one of" \
    "--streams|$ESC[2J|bad --streams value \"\\x1b[2J\": missing value" \
    "--devices|0,$ESC|--devices: bad list \"0,\\x1b\": missing value" \
    "--page|1$ESC|bad --page value \"1\\x1b\": trailing \"\\x1b\""; do
    opt=${case%%|*} rest=${case#*|}
    val=${rest%%|*} text=${rest#*|}
    case $opt in
    --tiles) expect_error 2 "$text" "$opt with an escape sequence: escaped" -- "$opt" "$val" "$G" -o "$OUT" ;;
    --place) expect_error 2 "$text" "$opt with an escape sequence: escaped" -- "$opt" "$val" --canvas 9x9 "$G" "$E" ;;
    --canvas) expect_error 2 "$text" "$opt with an escape sequence: escaped" -- --place 1,1 "$opt" "$val" "$G" "$E" ;;
    *) expect_error 2 "$text" "$opt with an escape sequence: escaped" -- "$opt" "$val" "$G" "$E" ;;
    esac
    if grep -q "$ESC" "$T/stderr"; then
        fail "$opt: a raw escape byte reached stderr"
    else
        pass "$opt: no raw escape byte on stderr"
    fi
done

# An option where outputs go (or what is cut) given twice kept the last,
# the first's outputs dropped in silence (exit 0): each is refused by
# name, with both values, as --files-from twice is (hostile.sh).
expect_error 2 "roicopy: -o given twice ($OUT and $T/other): one output directory a run" \
    "-o twice is refused, not the first directory dropped" -- --dry-run -o "$OUT" -o "$T/other" "$G" "$RGBA"
expect_error 2 "roicopy: -o given twice ($OUT and $T/other): one output directory a run" \
    "--output-dir after -o is the same option twice" -- --dry-run -o "$OUT" "--output-dir=$T/other" "$G"
expect_error 2 "roicopy: --stack given twice ($OUT/a.pgm and $OUT/b.pgm): one stack a run" \
    "--stack twice is refused, not the first stack dropped" -- --dry-run --roi 2x2 --stack "$OUT/a.pgm" --stack "$OUT/b.pgm" "$G"
expect_error 2 "roicopy: --tiles given twice (8x8 and 16x16+4+4): one grid a run" \
    "--tiles twice is refused, not the first grid dropped" -- --dry-run --tiles 8x8 --tiles 16x16+4+4 -o "$OUT" "$G"
expect_error 2 "roicopy: -o given twice (\\x1b and $OUT): one output directory a run" \
    "-o twice: the values are escaped" -- --dry-run -o "$ESC" -o "$OUT" "$G"
# A canvas no GPU can hold passed every check (the row limit is per row)
# and failed at cudaMallocPitch; now refused before the GPU.
expect_error 2 "roicopy: $G: --canvas 2147483647x2147483647 of 1-byte pixels is 4611686014132420609 bytes of device memory; a canvas may take at most 2^48 bytes (256 TiB)" \
    "a canvas past 2^48 bytes is refused before the GPU" -- --dry-run --place 0,0 --canvas 2147483647x2147483647 "$G" "$E"
expect_error 2 "--canvas 268435456x262145 of 4-byte pixels is 281476050452480 bytes of device memory" \
    "a canvas of just over 2^48 bytes is refused" -- --dry-run --place 0,0 --canvas 268435456x262145 "$RGBA" "$OUT/new.pam"
plan_has "a canvas of 2^48 bytes is taken" "canvas:   2147483647x131072, ROI placed at 0,0" \
    --place 0,0 --canvas 2147483647x131072 "$G" "$OUT/new.pgm"

# ROICOPY_PREFETCH_MB is read as strictly as an option's number, before
# anything is read or the GPU started: strtoul took "-1" as no cap at all,
# "abc" as 0 (nothing read ahead) and "64M" as 64, in silence.
for case in '-1|negative value' 'abc|missing value' '64M|trailing "M"' \
    '1e3|trailing "e3"' '2147483648|value 2147483648 is too large (at most 2147483647)'; do
    val=${case%%|*} text=${case#*|}
    ROICOPY_PREFETCH_MB=$val
    export ROICOPY_PREFETCH_MB
    expect_error 2 "roicopy: bad ROICOPY_PREFETCH_MB value \"$val\": $text" \
        "ROICOPY_PREFETCH_MB=$val is refused by name" -- "$G" "$RGBA" -o "$OUT/batch"
    expect_error 2 "roicopy: bad ROICOPY_PREFETCH_MB value \"$val\"" \
        "ROICOPY_PREFETCH_MB=$val is refused with --tiles too" -- --dry-run --tiles 8x8 "$G" -o "$OUT/batch"
done
ROICOPY_PREFETCH_MB=
plan_has "an empty ROICOPY_PREFETCH_MB is unset" "output:" "$G" "$RGBA" -o "$OUT/batch"
unset ROICOPY_PREFETCH_MB

# --threads with one frame to copy is accepted (as xargs -P and parallel
# -j take more slots than jobs) and, under -v, said to do nothing; with
# several frames -v says nothing of it.
"$ROICOPY" --dry-run -v --threads 4 "$G" "$OUT/new.pgm" >"$T/plan" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
    grep -qx 'roicopy: --threads 4 has nothing to do: one frame to copy (the threads read ahead and write behind several)' "$T/err" &&
    out_dir_intact; then
    pass "--threads with one input: accepted, -v says it does nothing"
else
    fail "--threads with one input under -v: exit $rc"; diag_file "$T/err"
fi
plan_has "--threads with one input, without -v: planned in silence" "output:" --threads 4 "$G" "$OUT/new.pgm"
plan_has "--threads with one input of -o DIR: planned in silence" "output:" --threads 4 "$G" -o "$OUT/batch"
"$ROICOPY" --dry-run -v --threads 4 "$G" "$RGBA" -o "$OUT/batch" >"$T/plan" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$T/err" ] && grep -q "4 threads" "$T/plan"; then
    pass "--threads with two inputs: used, -v says nothing of it"
else
    fail "--threads with two inputs under -v: exit $rc"; diag_file "$T/err"; diag_file "$T/plan"
fi

# A named path is a name: /dev/stdin (redirected from a file) with -o DIR
# is written as DIR/stdin, where "-" is refused (robust.sh).
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run /dev/stdin -o "$OUT/batch" <"$G" >"$T/plan" 2>"$T/err"
if [ $? -eq 0 ] && [ ! -s "$T/err" ] && grep -qx "output:   $OUT/batch/stdin (pgm)" "$T/plan"; then
    pass "/dev/stdin with -o DIR is a name: DIR/stdin"
else
    fail "/dev/stdin with -o DIR"; diag_file "$T/err"; diag_file "$T/plan"
fi

# --help and --version: exit 0, text on stdout, nothing on stderr.
if "$ROICOPY" --help >"$T/help" 2>"$T/err" && [ ! -s "$T/err" ] &&
    grep -q '^usage: roicopy' "$T/help" && grep -q -- '--roi WxH+X+Y' "$T/help"; then
    pass "--help prints the usage on stdout"
else
    fail "--help"; diag_file "$T/help"; diag_file "$T/err"
fi
if v=$("$ROICOPY" --version 2>"$T/err") && [ ! -s "$T/err" ] &&
    case $v in "roicopy (cuxfer) ${PACKAGE_VERSION:-}"*) true ;; *) false ;; esac; then
    pass "--version prints the package version ($v)"
else
    fail "--version: '$v'"
fi
finish
