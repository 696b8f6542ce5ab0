# SPDX-License-Identifier: MIT
# roicopy-lib.sh - sourced by the roicopy shell tests: tests/lib/tap.sh
# (the scratch directory $T, TAP points, `finish`), roicopy's paths, an
# output directory that failing runs must leave alone, `plan_has`,
# `expect_error` and, for the GPU tests, `same` and `random_rois`.

. "${top_srcdir:-.}/tests/lib/tap.sh"
ROICOPY="$top_builddir/tools/roicopy"
ROICOPY_HOOKED="$top_builddir/tests/roicopy/roicopy-hooked" # tools/frames.h's test hook
MKSAMPLES="$top_builddir/tools/mksamples"
IMGCROP="$top_builddir/tests/lib/imgcrop"
SAMPLES="$top_srcdir/samples"

# A directory holding one existing output whose bytes must survive every
# failing run: roicopy may not truncate it, replace it or leave a
# temporary file beside it.
OUT="$T/out"
mkdir "$OUT"
printf 'precious bytes\n' >"$OUT/existing.pgm"
EXISTING="$OUT/existing.pgm"

out_dir_intact() {
    [ "$(ls -A "$OUT")" = "existing.pgm" ] &&
        [ "$(cat "$EXISTING")" = "precious bytes" ]
}

# plan_has DESCRIPTION 'LINE
# LINE...' ARGS...: the plan of `roicopy --dry-run ARGS` holds every LINE
# (fixed strings); exit 0, nothing on stderr, nothing written.
plan_has() {
    desc=$1
    printf '%s\n' "$2" >"$T/want"
    shift 2
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$@" >"$T/plan" 2>"$T/err"
    rc=$?
    while IFS= read -r line; do
        grep -qF -- "$line" "$T/plan" || printf '%s\n' "$line"
    done <"$T/want" >"$T/missing"
    if [ $rc -eq 0 ] && [ ! -s "$T/err" ] && [ ! -s "$T/missing" ] && out_dir_intact; then
        pass "$desc"
    else
        fail "$desc: exit $rc"
        diag_file "$T/missing"; diag_file "$T/plan"; diag_file "$T/err"
    fi
}

# expect_error STATUS TEXT DESCRIPTION -- ARGS...
# roicopy ARGS must exit with STATUS, print nothing on stdout and exactly
# one line on stderr (besides the usage line of a command-line mistake)
# that starts "roicopy: " (or $EXPECT_PREFIX when set) and contains TEXT;
# $OUT must be
# untouched.  The run is repeated with every CUDA device hidden: an error
# found before any CUDA call reads the same either way.
expect_error() {
    want=$1 text=$2 desc=$3
    shift 4
    "$ROICOPY" "$@" >"$T/stdout" 2>"$T/stderr"
    rc=$?
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" "$@" >"$T/stdout2" 2>"$T/stderr2"
    rc2=$?
    # The usage line under a command-line mistake is not counted.
    lines=$(grep -vc '^usage: roicopy ' "$T/stderr")
    why=
    [ "$rc" -eq "$want" ] || why="$why exit $rc, wanted $want;"
    [ "$lines" -eq 1 ] || why="$why $lines lines on stderr;"
    grep -q '^roicopy: ' "$T/stderr" || why="$why no 'roicopy: ' prefix;"
    grep -qF -- "$text" "$T/stderr" || why="$why message lacks '$text';"
    if [ -n "${EXPECT_PREFIX:-}" ]; then
        case $(cat "$T/stderr") in
        "$EXPECT_PREFIX"*) ;;
        *) why="$why does not start '$EXPECT_PREFIX';" ;;
        esac
    fi
    [ -s "$T/stdout" ] && why="$why output on stdout;"
    out_dir_intact || why="$why the output directory changed;"
    if [ "$rc2" -ne "$rc" ] || ! cmp -s "$T/stderr" "$T/stderr2"; then
        why="$why differs without a device (exit $rc2);"
    fi
    if [ -z "$why" ]; then
        pass "$desc (exit $want)"
    else
        fail "$desc:$why"
        diag_file "$T/stderr"
        [ "$rc2" -ne "$rc" ] && diag_file "$T/stderr2"
        # Put the scratch output back for the next case.
        rm -rf "$OUT" && mkdir "$OUT" &&
            printf 'precious bytes\n' >"$EXISTING"
    fi
    return 0
}

# ---- for the GPU tests ----------------------------------------------------

# crop_args_of CROP-ARGS -- ROICOPY-ARGS: crop_args is the words before
# --, and `shift "$crop_shift"` leaves ROICOPY-ARGS.
crop_args_of() {
    crop_args= crop_shift=1
    while [ "$1" != -- ]; do
        crop_args="$crop_args $1"
        crop_shift=$((crop_shift + 1))
        shift
    done
}

# same DESCRIPTION CROP-ARGS -- ROICOPY-ARGS: roicopy (with --verify) and
# imgcrop, each on its own output, must succeed and agree byte for byte.
# CROP-ARGS are [--raw S --depth D] [--format F] INPUT ROI.
same() {
    desc=$1
    shift
    crop_args_of "$@"
    shift "$crop_shift"
    # the output's extension is the input's (roicopy refuses an unknown one)
    # (or the --format asked for)
    ext=raw
    prev=
    for a in $crop_args; do
        case $prev:$a in
        --format:*) ext=$a ;;
        *:*.pgm | *:*.ppm | *:*.pam | *:*.png | *:*.tif | *:*.tiff) ext=${a##*.} ;;
        esac
        prev=$a
    done
    rm -f "$T/gpu.$ext" "$T/cpu.out"
    "$ROICOPY" --verify "$@" "$T/gpu.$ext" >"$T/gpu.stdout" 2>"$T/err"
    rc=$?
    # shellcheck disable=SC2086
    "$IMGCROP" $crop_args "$T/cpu.out" 2>>"$T/err"
    if [ $rc -eq 0 ] && cmp -s "$T/gpu.$ext" "$T/cpu.out"; then
        pass "$desc"
    else
        fail "$desc (roicopy exit $rc)"
        diag_file "$T/err"
        cmp "$T/gpu.$ext" "$T/cpu.out" 2>&1 | sed 's/^/#   /'
    fi
}

# make_frames N SEED: $T/frames/f0.ppm .. f(N-1).ppm, 67x45 RGB samples of
# seeds SEED.., and the empty folders $T/ring (outputs) and $T/ref (CPU
# crops) for ring_matches.
make_frames() {
    mkdir "$T/frames" "$T/ring" "$T/ref" || return 1
    mf_i=0
    while [ $mf_i -lt "$1" ]; do
        "$MKSAMPLES" image ppm 67x45x3 255 $(($2 + mf_i)) "$T/frames/f$mf_i.ppm"
        mf_i=$((mf_i + 1))
    done
}

# ring_matches N ROI FORMAT-EXT: every frame's output in $T/ring equals
# its CPU crop (imgcrop --format FORMAT-EXT), and there are N outputs;
# $bad counts the mismatches.
ring_matches() {
    n=$1 roi=$2 ext=$3
    bad=0
    for f in "$T"/frames/*.ppm; do
        b=$(basename "$f" .ppm)
        [ -f "$T/ring/$b.$ext" ] || continue
        "$IMGCROP" --format "$ext" "$f" "$roi" "$T/ref/$b.$ext" || bad=$((bad + 1))
        cmp -s "$T/ring/$b.$ext" "$T/ref/$b.$ext" || bad=$((bad + 1))
    done
    [ $bad -eq 0 ] && [ "$(ls "$T/ring" | wc -l)" -eq "$n" ]
}

# Deterministic pseudo-random ROIs inside W x H: "WxH+X+Y" lines.
random_rois() {
    awk -v W="$1" -v H="$2" -v n="$3" -v seed="$4" 'BEGIN {
        srand(seed)
        for (i = 0; i < n; i++) {
            w = 1 + int(rand() * W); h = 1 + int(rand() * H)
            x = int(rand() * (W - w + 1)); y = int(rand() * (H - h + 1))
            printf "%dx%d+%d+%d\n", w, h, x, y
        }
    }'
}
