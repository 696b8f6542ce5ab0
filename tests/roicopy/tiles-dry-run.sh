#!/bin/sh
# SPDX-License-Identifier: MIT
# Many regions of one input on the CPU alone (every CUDA device hidden):
# --tiles cuts the grid (tile count, positions, the step, the partial last
# column and row dropped and counted, -v saying so), --roi repeated keeps
# command-line order, -o DIR names each output NAME-INDEX.EXT with a
# zero-padded index, --stack names one file, --json lists the same plan;
# and every mistake (a region outside the image, a tile larger than the
# image, a bad step, raw in a stack, missing or doubled destinations,
# options that do not go with tiles) is refused before anything is done,
# with one line naming the value, and nothing written.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

RGB="$SAMPLES/rgb-80x60.ppm"
RGBA="$SAMPLES/rgba-64x48.pam"

# dry NAME ARGS...: roicopy --dry-run ARGS with no device; stdout in
# $T/NAME, stderr in $T/NAME.err; 0 when it succeeded, wrote nothing and
# printed nothing on stderr (unless -v).
dry() {
    name=$1
    shift
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$@" >"$T/$name" 2>"$T/$name.err"
}

# -- the grid: 80x60 in 16x16 tiles = 5 x 3 whole, 5 partial dropped -------
if dry grid --tiles 16x16 -o "$OUT" "$RGB" && [ ! -s "$T/grid.err" ] && out_dir_intact; then
    pass "--tiles 16x16 of 80x60: the plan runs without a device"
else
    fail "--tiles 16x16 of 80x60"; diag_file "$T/grid.err"
fi
n=$(grep -c -- ' -> ' "$T/grid")
[ "$n" -eq 15 ] && pass "15 whole tiles listed" || { fail "15 tiles listed, got $n"; diag_file "$T/grid"; }
grep -qF "tiles:   15 of 16x16, step 16,16 (5 columns, 3 rows; 5 partial tiles dropped)" "$T/grid" &&
    pass "the plan counts the 5 dropped partial tiles" || { fail "dropped count"; diag_file "$T/grid"; }
first=$(grep -- ' -> ' "$T/grid" | head -n 1)
last=$(grep -- ' -> ' "$T/grid" | tail -n 1)
[ "$first" = "0        16x16+0+0 -> $OUT/rgb-80x60-00.ppm" ] &&
    [ "$last" = "14       16x16+64+32 -> $OUT/rgb-80x60-14.ppm" ] &&
    pass "row-major order, names NAME-INDEX.EXT padded to two digits" ||
    { fail "names and order: '$first' ... '$last'"; }
grep -q -- '16x16+[0-9]*+48' "$T/grid" && fail "a tile of the partial last row was kept" ||
    pass "no tile of the partial last row (y 48..63 > 59)"

# -v says how many were dropped, on stderr
dry verbose -v --tiles 16x16 -o "$OUT" "$RGB"
grep -qF "roicopy: $RGB: 5 partial tiles dropped (the grid is 5x3 whole tiles)" "$T/verbose.err" &&
    pass "-v reports the dropped partial tiles on stderr" || { fail "-v"; diag_file "$T/verbose.err"; }

# a step: 32x32 tiles every 16 pixels of 64x48 overlap; 3 x 2 whole
dry step --tiles 32x32+16+16 --stack "$T/s.pam" "$RGBA"
grep -qF "tiles:   6 of 32x32, step 16,16 (3 columns, 2 rows; 6 partial tiles dropped)" "$T/step" &&
    grep -q '^5        32x32+32+16$' "$T/step" &&
    pass "--tiles 32x32+16+16: overlapping grid of 6, the last at 32,16" ||
    { fail "--tiles with a step"; diag_file "$T/step"; }
grep -qF "stack:   $T/s.pam (6 pam images)" "$T/step" && [ ! -e "$T/s.pam" ] &&
    pass "--stack names one file and the dry run does not create it" || { fail "--stack plan"; diag_file "$T/step"; }
# a FIFO or character device is written in place, and the plan says so
dry devnull --tiles 32x32 --stack /dev/null "$RGBA"
grep -qF "stack:   /dev/null (2 pam images, written in place: a character device)" "$T/devnull" &&
    pass "--stack /dev/null: written in place, as its plan says" || { fail "--stack /dev/null plan"; diag_file "$T/devnull"; }

# a grid that fits exactly drops nothing; 1-pixel tiles pad to 4 digits
dry exact --tiles 16x12 -o "$OUT" "$RGBA"
grep -qF "(4 columns, 4 rows; 0 partial tiles dropped)" "$T/exact" &&
    pass "64x48 in 16x12 tiles: 16, none dropped" || { fail "exact grid"; diag_file "$T/exact"; }
dry ones --tiles 1x1 -o "$OUT" "$RGBA"
[ "$(grep -c -- ' -> ' "$T/ones")" -eq 3072 ] && grep -qF -- "-> $OUT/rgba-64x48-3071.pam" "$T/ones" &&
    grep -qF -- "-> $OUT/rgba-64x48-0000.pam" "$T/ones" &&
    pass "1x1 tiles of 64x48: 3072 outputs, indexes 0000..3071" || fail "1x1 tiles"

# one of each: the plan's counts agree in number (1 column, 1 row, 1 file)
dry single --tiles 97x61 --stack "$T/one.pgm" "$SAMPLES/gray-97x61.pgm"
dry singledir --tiles 97x61 -o "$OUT" "$SAMPLES/gray-97x61.pgm"
grep -qF "(pgm, 97x61, 1 byte a pixel)" "$T/single" &&
    grep -qF "(1 column, 1 row; 0 partial tiles dropped)" "$T/single" &&
    grep -qF "stack:   $T/one.pgm (1 pgm image)" "$T/single" &&
    grep -qF "output:  $OUT (1 pgm file)" "$T/singledir" &&
    pass "a grid of one: 1 byte a pixel, 1 column, 1 row, 1 image, 1 file" ||
    { fail "a grid of one: singular counts"; diag_file "$T/single"; diag_file "$T/singledir"; }

# -- --roi repeated: command-line order, single digits -----------------------
dry rois --roi 10x10+70+50 --roi 5x3 --roi 80x60+0+0 -o "$OUT" --format pam "$RGB"
grep -qF "rois:    3" "$T/rois" &&
    grep -qF "0        10x10+70+50 -> $OUT/rgb-80x60-0.pam" "$T/rois" &&
    grep -qF "1        5x3+0+0 -> $OUT/rgb-80x60-1.pam" "$T/rois" &&
    grep -qF "2        80x60+0+0 -> $OUT/rgb-80x60-2.pam" "$T/rois" &&
    pass "--roi x3: in order, --format pam names .pam" || { fail "--roi repeated"; diag_file "$T/rois"; }

# -- --json: the same plan -----------------------------------------------------
dry json --json --tiles 16x16 -o "$OUT" "$RGB"
grep -q '"count":15,"grid":{"tile_width":16,"tile_height":16,"step_x":16,"step_y":16,"columns":5,"rows":3,"dropped":5}' "$T/json" &&
    [ "$(grep -o '"index":' "$T/json" | wc -l)" -eq 15 ] &&
    grep -qF "{\"index\":14,\"x\":64,\"y\":32,\"width\":16,\"height\":16,\"output\":\"$OUT/rgb-80x60-14.ppm\"}" "$T/json" &&
    pass "--json: count, grid, dropped and every region" || { fail "--json"; diag_file "$T/json"; }
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["regions"])==d["count"]' "$T/json" &&
        pass "--json parses as JSON" || fail "--json does not parse"
else
    skip_one "python3 not found: JSON not parsed"
fi

# -- mistakes: refused before anything is done ----------------------------------
expect_error 2 "ROI 10x10+75+0 is partly outside the 80x60 image" "a repeated --roi outside the image" -- \
    --roi 10x10+0+0 --roi 10x10+75+0 -o "$OUT" "$RGB"
expect_error 2 "tile 100x10 is larger than the 80x60 image" "a tile wider than the image" -- \
    --tiles 100x10 -o "$OUT" "$RGB"
expect_error 2 "the step +0+4 must be at least 1" "a zero step" -- --tiles 8x8+0+4 -o "$OUT" "$RGB"
expect_error 2 "--tiles: bad geometry" "a zero tile width" -- --tiles 0x8 -o "$OUT" "$RGB"
expect_error 2 "not raw (from --format): raw images have no header to split on" "--stack of raw images" -- \
    --tiles 8x8 --format raw --stack "$OUT/s.pam" "$RGB"
expect_error 2 "--tiles needs -o DIR or --stack FILE" "tiles with an OUTPUT operand" -- \
    --tiles 8x8 "$RGB" "$OUT/x.ppm"
expect_error 2 "--stack FILE and -o DIR exclude each other" "both -o and --stack" -- \
    --tiles 8x8 -o "$OUT" --stack "$OUT/s.ppm" "$RGB"
expect_error 2 "tiles are cut from one INPUT, not 2" "two inputs" -- \
    --tiles 8x8 -o "$OUT" "$RGB" "$RGBA"
expect_error 2 "--tiles and --roi exclude each other" "--tiles with --roi" -- \
    --tiles 8x8 --roi 4x4 -o "$OUT" "$RGB"
expect_error 2 "--place/--canvas does not go with --tiles" "--tiles with --place" -- \
    --tiles 8x8 --place 0,0 --canvas 100x100 -o "$OUT" "$RGB"
expect_error 2 "--streams does not go with --tiles" "--tiles with --streams" -- \
    --tiles 8x8 --streams 2 -o "$OUT" "$RGB"
expect_error 2 "pgm (from --format) holds 1 channel" "--format that cannot hold the pixels" -- \
    --tiles 8x8 --format pgm -o "$OUT" "$RGB"
expect_error 4 "Not a directory" "-o DIR that cannot be made (under a file)" -- \
    --tiles 8x8 -o "$EXISTING/sub" "$RGB"
expect_error 2 "standard input has no name for the tiles" "stdin with -o DIR" -- \
    --tiles 8x8 -o "$OUT" -
expect_error 2 "--json with tiles needs --dry-run" "--json without --dry-run" -- \
    --json --tiles 8x8 -o "$OUT" "$RGB"
mkdir "$T/d" && mkdir "$T/d/gray-97x61-1.pgm"
expect_error 4 "is a directory" "an output name taken by a directory" -- \
    --roi 2x2 --roi 3x3 -o "$T/d" "$SAMPLES/gray-97x61.pgm"

# -- regions that no machine's memory holds at once: refused before the GPU ---
# The batch of every region is held on the GPU and in pinned host memory
# at once; overlapping tiles of a large image (here a sparse 4 GiB PGM,
# 288369 tiles of 65000x65000 = 1.2 PB) passed every check and failed
# only at cudaMalloc (exit 5), after the image was read.
if have truncate; then
    printf 'P5\n65536 65536\n255\n' >"$T/sparse.pgm"
    truncate -s $((19 + 65536 * 65536)) "$T/sparse.pgm"
    expect_error 2 "$T/sparse.pgm: the 288369 regions come to 1218359025000000 bytes, held at once on the GPU and, with the image's 4294967296, in pinned host memory: more than this machine's" \
        "tiles past the machine's memory are refused before the GPU" -- \
        --dry-run --tiles 65000x65000+1+1 -o "$OUT/t" "$T/sparse.pgm"
    expect_error 2 "$T/sparse.pgm: the 288369 regions come to 1218359025000000 bytes" \
        "into a stack, too" -- --dry-run --tiles 65000x65000+1+1 --stack "$OUT/s.pgm" "$T/sparse.pgm"
    rm -f "$T/sparse.pgm"
else
    skip_one "regions past the machine's memory: no truncate"
fi

# -- without a device, a real run fails in one line and writes nothing -------
rm -rf "$T/nodev" && mkdir "$T/nodev"
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --tiles 16x16 -o "$T/nodev" "$RGB" >"$T/stdout" 2>"$T/err"
rc=$?
if [ $rc -eq 5 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^roicopy: $RGB: CUDA: " "$T/err" &&
    [ -z "$(ls -A "$T/nodev")" ] && [ ! -s "$T/stdout" ]; then
    pass "no device: exit 5, one 'CUDA:' line, no tile written"
else
    fail "no device: exit $rc"
    diag_file "$T/err"
fi
finish
