#!/bin/sh
# SPDX-License-Identifier: MIT
# Many regions through the GPU (cuxfer_rois_copy_async): every tile that
# roicopy --tiles writes to -o DIR, and every region of --roi repeated
# (overlapping ones too), equals byte for byte the CPU crop written by the
# same writer (tests/lib/imgcrop) - across formats (P5, P6, P7, 16-bit,
# 80-byte PAM pixels, raw 16-bit to PAM); a --stack FILE split by netpbm's
# pamsplit gives exactly the files of -o DIR (skipped without pamsplit);
# thousands of small tiles (the host-gather path) pass --verify, with
# spot checks against imgcrop; --verify catches a corrupted region and
# writes nothing.  Without a device: "1..0 # SKIP"; with
# CUXFER_REQUIRE_GPU=1 and no device: a failure.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/tests/lib/need-gpu.sh"
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

# tiles_same DESC CROP-ARGS -- ROICOPY-ARGS: roicopy --verify ROICOPY-ARGS
# -o DIR (fresh), then every "INDEX WxH+X+Y -> PATH" line of the same
# command's --dry-run is checked: PATH equals `imgcrop CROP-ARGS WxH+X+Y`
# (CROP-ARGS end with the INPUT).  Also: no file in DIR but the planned
# ones.  Leaves the outputs in $T/tiles and the plan in $T/plan.
tiles_same() {
    desc=$1
    shift
    crop_args_of "$@"
    shift "$crop_shift"
    rm -rf "$T/tiles" && mkdir "$T/tiles"
    if ! "$ROICOPY" --dry-run "$@" -o "$T/tiles" >"$T/plan" 2>"$T/err" ||
        ! "$ROICOPY" --verify -q "$@" -o "$T/tiles" >"$T/stdout" 2>>"$T/err"; then
        fail "$desc: roicopy failed"
        diag_file "$T/err"
        return 0
    fi
    bad=0 n=0
    grep -- ' -> ' "$T/plan" >"$T/lines"
    while read -r idx roi arrow path; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        "$IMGCROP" $crop_args "$roi" "$T/cpu.out" 2>>"$T/err"
        if ! cmp -s "$path" "$T/cpu.out"; then
            [ $bad -eq 0 ] && echo "# region $idx ($roi, $path) differs from imgcrop"
            bad=$((bad + 1))
        fi
    done <"$T/lines"
    files=$(ls "$T/tiles" | wc -l)
    if [ $bad -eq 0 ] && [ "$n" -gt 0 ] && [ "$files" -eq "$n" ] && [ ! -s "$T/stdout" ]; then
        pass "$desc: $n regions byte-exact"
    else
        fail "$desc: $bad of $n regions differ, $files files"
        diag_file "$T/err"
    fi
}

"$MKSAMPLES" image pam 300x200x4 255 16 "$T/big.pam"
"$MKSAMPLES" image pam 9x8x40 65535 13 "$T/wide.pam"
"$MKSAMPLES" image raw 31x17x2 65535 14 "$T/r16.raw"

# -- grids ------------------------------------------------------------------
tiles_same "PGM 97x61, 16x16 tiles" "$SAMPLES/gray-97x61.pgm" -- --tiles 16x16 "$SAMPLES/gray-97x61.pgm"
tiles_same "PPM 80x60, 7x5 tiles every 3,4 (overlapping)" "$SAMPLES/rgb-80x60.ppm" -- \
    --tiles 7x5+3+4 "$SAMPLES/rgb-80x60.ppm"
tiles_same "PAM RGBA 64x48, 32x16 tiles" "$SAMPLES/rgba-64x48.pam" -- --tiles 32x16 "$SAMPLES/rgba-64x48.pam"
tiles_same "16-bit PGM, 10x9 tiles with gaps (step 13,11)" "$SAMPLES/gray16-61x47.pgm" -- \
    --tiles 10x9+13+11 "$SAMPLES/gray16-61x47.pgm"
tiles_same "PAM with 80-byte pixels, 3x2 tiles" "$T/wide.pam" -- --tiles 3x2 "$T/wide.pam"
tiles_same "raw 16-bit to PAM, 8x8 tiles" --raw 31x17x2 --depth 16 --format pam "$T/r16.raw" -- \
    --raw 31x17x2 --depth 16 --format pam --tiles 8x8 "$T/r16.raw"
tiles_same "PGM to PAM, the whole image as one tile" --format pam "$SAMPLES/gray-97x61.pgm" -- \
    --format pam --tiles 97x61 "$SAMPLES/gray-97x61.pgm"

# -- --roi repeated: any sizes, overlapping ---------------------------------
set --
for r in $(random_rois 300 200 12 4242); do set -- "$@" --roi "$r"; done
tiles_same "12 random ROIs of 300x200 RGBA (varying sizes, overlapping)" "$T/big.pam" -- "$@" "$T/big.pam"
tiles_same "the same ROI twice, and a 1x1" "$T/big.pam" -- \
    --roi 50x40+10+10 --roi 50x40+10+10 --roi 1x1+299+199 "$T/big.pam"

# -- --stack split by pamsplit equals the files of -o DIR --------------------
if command -v pamsplit >/dev/null 2>&1; then
    for spec in "rgba-64x48.pam:16x16+8+8" "gray16-61x47.pgm:20x15" "rgb-80x60.ppm:13x7"; do
        f=${spec%%:*} g=${spec#*:}
        tiles_same "$f: --tiles $g to -o DIR" "$SAMPLES/$f" -- --tiles "$g" "$SAMPLES/$f"
        rm -rf "$T/split" && mkdir "$T/split"
        if "$ROICOPY" -q --tiles "$g" --stack "$T/stack" --format "${f##*.}" "$SAMPLES/$f" 2>"$T/err" &&
            (cd "$T/split" && pamsplit "$T/stack" 'img%d' 2>/dev/null); then
            bad=0 n=0
            while read -r idx roi arrow path; do
                cmp -s "$T/split/img$idx" "$path" || bad=$((bad + 1))
                n=$((n + 1))
            done <"$T/lines"
            [ "$(ls "$T/split" | wc -l)" -eq "$n" ] || bad=$((bad + 1))
            [ $bad -eq 0 ] && pass "$f: --stack split by pamsplit gives the $n tiles of -o DIR" ||
                fail "$f: --stack: $bad of $n split images differ (or the count)"
        else
            fail "$f: --stack or pamsplit failed"
            diag_file "$T/err"
        fi
    done
    "$ROICOPY" -q --tiles 16x16 --stack - "$SAMPLES/rgba-64x48.pam" >"$T/stdout.pam" 2>"$T/err"
    rc1=$?
    "$ROICOPY" -q --tiles 16x16 --stack "$T/stack2.pam" "$SAMPLES/rgba-64x48.pam" 2>>"$T/err"
    rc2=$?
    if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s "$T/stack2.pam" ] && cmp -s "$T/stdout.pam" "$T/stack2.pam"; then
        pass "--stack - writes the same stream to standard output"
    else
        fail "--stack - differs from --stack FILE (exits $rc1, $rc2)"
        diag_file "$T/err"
    fi
else
    skip_one "pamsplit (netpbm) not found: --stack not split"
fi

# -- --stack into a FIFO or a character device: written in place, as the plan
# says ("written in place: a FIFO"), and the FIFO stays one.  The FIFO's
# name ends in .pam: the format comes from the extension, and ".fifo" is
# refused (exit 2) before anything is opened.  The reader gives up after a
# while, and is stopped when roicopy fails, so a roicopy that never opens
# the FIFO (or fails after opening it) fails this test instead of hanging it.
"$ROICOPY" -q --tiles 16x16 --stack "$T/stack3.pam" "$SAMPLES/rgba-64x48.pam" 2>"$T/err"
rm -f "$T/stack-fifo.pam"
if mkfifo "$T/stack-fifo.pam" 2>/dev/null; then
    timeout 120 cat "$T/stack-fifo.pam" >"$T/from-fifo.pam" &
    cat_pid=$!
    "$ROICOPY" -q --tiles 16x16 --stack "$T/stack-fifo.pam" "$SAMPLES/rgba-64x48.pam" 2>>"$T/err"
    rc=$?
    [ $rc -eq 0 ] || kill "$cat_pid" 2>/dev/null
    wait "$cat_pid"
    if [ $rc -eq 0 ] && [ -p "$T/stack-fifo.pam" ] && [ -s "$T/stack3.pam" ] &&
        cmp -s "$T/from-fifo.pam" "$T/stack3.pam"; then
        pass "--stack FIFO: the stream is written into the FIFO, which stays a FIFO"
    else
        fail "--stack FIFO: exit $rc"
        diag_file "$T/err"
    fi
else
    skip_one "--stack FIFO: no mkfifo"
fi
"$ROICOPY" -q --tiles 16x16 --stack /dev/null "$SAMPLES/rgba-64x48.pam" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && pass "--stack /dev/null: written into the character device" ||
    { fail "--stack /dev/null: exit $rc"; diag_file "$T/err"; }

# -- thousands of small tiles: the gather path, --verify, spot checks --------
rm -rf "$T/many" && mkdir "$T/many"
if "$ROICOPY" --verify -q --tiles 4x4+3+3 -o "$T/many" "$T/big.pam" 2>"$T/err"; then
    n=$(ls "$T/many" | wc -l)
    bad=0
    # 99 columns ((300-4)/3+1) x 66 rows ((200-4)/3+1) = 6534; tile i at
    # (i % 99 * 3, i / 99 * 3)
    for spec in 0:0+0 1:3+0 98:294+0 99:0+3 3333:198+99 6533:294+195; do
        i=${spec%%:*} xy=${spec#*:}
        "$IMGCROP" "$T/big.pam" "4x4+$xy" "$T/cpu.out"
        cmp -s "$T/many/big-$(printf %04d "$i").pam" "$T/cpu.out" || bad=$((bad + 1))
    done
    [ "$n" -eq 6534 ] && [ $bad -eq 0 ] &&
        pass "6534 overlapping 4x4 tiles of 300x200 pass --verify; spot checks match imgcrop" ||
        fail "many tiles: $n files, $bad spot checks differ"
else
    fail "many small tiles: roicopy failed"
    diag_file "$T/err"
fi

# -- --verify catches a corrupted region and writes nothing ------------------
rm -rf "$T/corrupt" && mkdir "$T/corrupt"
ROICOPY_TEST_CORRUPT=1 "$ROICOPY_HOOKED" --verify -q --tiles 16x16 -o "$T/corrupt" "$SAMPLES/rgb-80x60.ppm" \
    >"$T/stdout" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'verify: region 14 ' "$T/err" && [ -z "$(ls -A "$T/corrupt")" ]; then
    pass "--verify: a corrupted region exits 1, names the region, writes no tile"
else
    fail "--verify on a corrupted region: exit $rc"
    diag_file "$T/err"
fi
finish
