#!/bin/sh
# SPDX-License-Identifier: MIT
# CUDA errors (exit 5): a valid run on a machine without a usable device
# (or with every device hidden) fails with one line
# "roicopy: INPUT: CUDA: <cudaError name>: <reason>" (the name once),
# writes nothing and keeps an existing output.  With a device, --device
# (or a --devices entry) past the last one is refused the same way, naming
# the index and the count.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

G="$SAMPLES/gray-97x61.pgm"

# cuda_error TEXT DESCRIPTION ENV... -- ARGS...
cuda_error() {
    text=$1 desc=$2
    shift 2
    envs=
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    env $envs "$ROICOPY" "$@" >"$T/stdout" 2>"$T/stderr"
    rc=$?
    why=
    [ $rc -eq 5 ] || why="$why exit $rc;"
    [ "$(wc -l <"$T/stderr")" -eq 1 ] || why="$why not one line;"
    grep -q "^roicopy: $G: CUDA: cuda[A-Za-z]*: ." "$T/stderr" || why="$why bad format;"
    grep -qF -- "$text" "$T/stderr" || why="$why lacks '$text';"
    [ -z "$(grep -o 'cuda[A-Z][A-Za-z]*' "$T/stderr" | sort | uniq -d)" ] ||
        why="$why names the error twice;"
    out_dir_intact || why="$why the output directory changed;"
    if [ -z "$why" ]; then pass "$desc"; else fail "$desc:$why"; diag_file "$T/stderr"; fi
}

cuda_error "CUDA: cuda" "no visible device: exit 5, named CUDA error" \
    CUDA_VISIBLE_DEVICES= -- "$G" "$EXISTING"
cuda_error "CUDA: cuda" "the pipeline too" \
    CUDA_VISIBLE_DEVICES= -- "$G" "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
cuda_error "CUDA: cuda" "--devices too" \
    CUDA_VISIBLE_DEVICES= -- --devices 0,1 "$G" "$EXISTING"
if "$top_builddir/tests/lib/gpu-probe" | grep -q SKIP; then
    skip_one "--device past the last device: no CUDA device here"
    skip_one "--devices past the last device: no CUDA device here"
    skip_one "--devices past the last device, pipeline: no CUDA device here"
else
    cuda_error "--device 1023, but there" "--device past the last device" \
        -- --device 1023 "$G" "$EXISTING"
    cuda_error "CUDA: cudaErrorInvalidDevice: --devices lists device 1023, but there" \
        "--devices past the last device: index and count named" \
        -- --devices 0,1023 "$G" "$EXISTING"
    cuda_error "--devices lists device 1023, but there" \
        "--devices past the last device, pipeline" \
        -- --devices 1023,0 "$G" "$SAMPLES/rgb-80x60.ppm" -o "$OUT"
fi
finish
