#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/run-fuzzers.sh - build each libFuzzer target with ASan and UBSan and
# run it for a bounded time from a copy of its committed seed corpus.  Any
# crash, leak, UB report or broken invariant fails the run; the input that
# did it is kept (its path and a hex dump are printed) so that it can be
# added to fuzz/regressions/TARGET/, where tests/fuzz/regressions.sh
# replays it in every `make check`.
#
# Nothing is written into the source tree: binaries, the working corpus
# (it grows while fuzzing) and artifacts live in a temporary directory,
# removed on success and kept on failure.
#
# Environment: FUZZ_SECONDS (per target, default 60), FUZZ_TOTAL_SECONDS
# (all targets together, default 240: each gets at most its share),
# FUZZ_TARGETS (default all four; fuzz-png-tiff needs libpng and/or
# libtiff-4 through pkg-config), CLANG (default clang), CUDA_HOME (default
# /usr/local/cuda), FUZZ_KEEP=1 to keep the temporary directory.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
: "${FUZZ_SECONDS:=60}"
: "${FUZZ_TARGETS:=fuzz-image-header fuzz-geometry fuzz-view fuzz-png-tiff}"
: "${FUZZ_TOTAL_SECONDS:=240}"
# The CI budget stays bounded as targets are added.
n_targets=$(echo $FUZZ_TARGETS | wc -w)
share=$((FUZZ_TOTAL_SECONDS / n_targets))
[ "$share" -ge 1 ] || share=1
[ "$FUZZ_SECONDS" -le "$share" ] || FUZZ_SECONDS=$share
: "${CLANG:=clang}"
: "${CUDA_HOME:=/usr/local/cuda}"

cuda_lib=
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib"; do
    [ -e "$d/libcudart.so" ] && { cuda_lib=$d; break; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-fuzz.XXXXXX") || exit 1
failed=
finish() {
    if [ -n "$failed" ] || [ "${FUZZ_KEEP:-0}" = 1 ]; then
        echo "run-fuzzers: kept $work"
    else
        rm -rf "$work"
    fi
}
trap finish EXIT
trap 'exit 1' INT TERM HUP

# -DFUZZ_AVOID_KNOWN_BUGS: steer around the header bugs listed in
# fuzz/regressions/KNOWN-BUGS (see fuzz/fuzz-view.c).
CFLAGS_FUZZ="-g -O1 -fsanitize=fuzzer,address,undefined \
-fno-sanitize-recover=undefined -fno-omit-frame-pointer -std=c99 \
-D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -DFUZZ_AVOID_KNOWN_BUGS"

# The image formats (Makefile.am's IMAGE_SOURCES).
image="$top/tools/image.c $top/tools/netpbm.c $top/tools/input.c \
$top/tools/output.c $top/tools/escape.c"

build() { # build TARGET OUTPUT
    case $1 in
    fuzz-image-header) extra="$image" ;;
    fuzz-geometry) extra="$top/tools/geometry.c" ;;
    fuzz-png-tiff)
        extra="$image -lpthread"
        if pkg-config --exists libpng 2>/dev/null; then
            extra="$extra -DHAVE_PNG $top/tools/png-io.c \
$(pkg-config --cflags --libs libpng)"
        fi
        if pkg-config --exists libtiff-4 2>/dev/null; then
            extra="$extra -DHAVE_TIFF $top/tools/tiff-io.c \
$(pkg-config --cflags --libs libtiff-4)"
        fi ;;
    fuzz-view)
        [ -n "$cuda_lib" ] || {
            echo "run-fuzzers: no libcudart.so under $CUDA_HOME" >&2
            return 1
        }
        # The header names cudart symbols even where the fuzzed
        # functions call none of them.
        extra="-I$top/include -isystem $CUDA_HOME/include -L$cuda_lib \
-lcudart -Wl,-rpath,$cuda_lib -lpthread" ;;
    *) echo "run-fuzzers: unknown target $1" >&2; return 1 ;;
    esac
    # shellcheck disable=SC2086
    $CLANG $CFLAGS_FUZZ -o "$2" "$top/fuzz/$1.c" $extra
}

hexdump_of() { od -A x -t x1z -v "$1" | head -n 16; }

for t in $FUZZ_TARGETS; do
    echo "=== $t: build"
    if ! build "$t" "$work/$t" >"$work/$t.build.log" 2>&1; then
        cat "$work/$t.build.log"
        echo "run-fuzzers: FAIL $t: does not build (is clang's libFuzzer" \
            "runtime installed? apt-get install libclang-rt-dev)" >&2
        failed="$failed $t"
        continue
    fi
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    cp "$top/fuzz/corpus/$t/"* "$work/corpus/$t/" 2>/dev/null
    # Regression inputs are seeds too: the area around an old bug.
    cp "$top/fuzz/regressions/$t/"* "$work/corpus/$t/" 2>/dev/null
    dict=
    [ -f "$top/fuzz/$t.dict" ] && dict="-dict=$top/fuzz/$t.dict"
    echo "=== $t: fuzzing for ${FUZZ_SECONDS}s"
    # The scratch file of fuzz-image-header (unlinked as soon as it is
    # opened) goes to TMPDIR: on /dev/shm the target runs ~25x faster.
    # One allocation over 512 MiB fails the input at once (no input of at
    # most 8 KiB deserves one); the RSS limit catches slower growth.
    scratch=$work
    [ -d /dev/shm ] && [ -w /dev/shm ] && scratch=/dev/shm
    (cd "$work" && TMPDIR="$scratch" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
        "./$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=8192 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$t/" $dict \
        "$work/corpus/$t") >"$work/$t.log" 2>&1
    rc=$?
    grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units)' \
        "$work/$t.log" | tail -n 2
    if [ $rc -ne 0 ] || [ -n "$(ls -A "$work/artifacts/$t")" ]; then
        failed="$failed $t"
        echo "run-fuzzers: FAIL $t (exit $rc); the report:" >&2
        grep -E -A 12 'ERROR|runtime error|fuzz-[a-z-]+:' "$work/$t.log" |
            head -n 40 >&2
        for a in "$work/artifacts/$t/"*; do
            [ -f "$a" ] || continue
            echo "--- input $a; add it as a regression test:" >&2
            echo "    cp '$a' fuzz/regressions/$t/<what-it-shows>" >&2
            hexdump_of "$a" >&2
        done
    else
        echo "run-fuzzers: ok $t"
    fi
done
[ -z "$failed" ] || { echo "run-fuzzers: failed:$failed" >&2; exit 1; }
echo "run-fuzzers: all targets clean"
