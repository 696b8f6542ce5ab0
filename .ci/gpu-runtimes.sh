#!/bin/sh
# SPDX-License-Identifier: MIT
# .ci/gpu-runtimes.sh - the C test suite on the GPU against older CUDA
# runtimes (11.8 and 12.9), whose headers and libcudart come from NVIDIA's
# wheels, the way .ci/cuda-matrix.sh gets them.  Two steps, because the GPU
# machine has no package registry:
#
#   sh .ci/gpu-runtimes.sh fetch DIR   (a machine with pip and the network)
#       downloads the wheels into .ci/cuda-matrix.sh's cache
#       ($CUDA_MATRIX_CACHE, default ~/.cache/cuxfer-cuda-matrix, one
#       folder per version), unpacks headers and libcudart into
#       DIR/cuda-11.8 and DIR/cuda-12.9 (include/, lib/ with a libcudart.so
#       link) and writes DIR/cuda-V/VERSION.  About 60 MB in all.
#   sh .ci/gpu-runtimes.sh run DIR     (the GPU machine, DIR carried there)
#       for each DIR/cuda-V: an out-of-tree build in DIR/build-V configured
#       --with-cuda=DIR/cuda-V --without-nvcc (the .cu tests need nvcc, whose
#       own runtime would be 13: they are left out), then
#       `make check` with CUXFER_REQUIRE_GPU=1 and LD_LIBRARY_PATH=DIR/cuda-V/lib,
#       and a check that the test programs really load that libcudart.
#   sh .ci/gpu-runtimes.sh build DIR   (any machine, CI included)
#       the same builds without running anything: every C test compiles
#       and links against each runtime, the per-thread-default-stream
#       programs included (the header matrix compiles the header alone).
#       The sources: when the tree is configured in place (config.status),
#       a clean copy made by its `make distdir` into DIR/src (VPATH builds
#       refuse a configured source tree); otherwise the tree itself, which
#       then needs ./configure (./bootstrap where autoreconf exists).
#
# Environment: GPU_RUNTIMES (versions, default "11.8 12.9"), CUDA_MATRIX_CACHE,
# PIP (default "python3 -m pip"), MAKEFLAGS_CHECK (default -j8), CUXFER_REQUIRE_GPU
# (default 1; 2 on a two-GPU machine makes the 2-GPU tests mandatory),
# GPU_RUNTIMES_TESTS (a TESTS value for `make check`, e.g. '$(SANITIZER_TESTS)'
# for the GPU C tests alone; default: the whole suite).
# Prints TAP (one line per version and step); exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
. .ci/cudart-wheels.sh
: "${GPU_RUNTIMES:=11.8 12.9}"
: "${MAKEFLAGS_CHECK:=-j8}"
: "${CUXFER_REQUIRE_GPU:=1}"

usage() {
    echo "usage: $0 fetch DIR | run DIR | build DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
mode=$1
case $2 in
/*) dir=$2 ;;
*) dir=$(pwd)/$2 ;;
esac

n=0 failed=0
result() { # result ok|"not ok" NAME [LOG]
    n=$((n + 1))
    echo "$1 $n - $2"
    if [ "$1" != ok ]; then
        failed=$((failed + 1))
        [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 40 "$3" | sed 's/^/#   /'
    fi
}
finish() {
    echo "1..$n"
    if [ $failed -ne 0 ]; then
        echo "# .ci/gpu-runtimes.sh $mode: $failed of $n failed" >&2
        exit 1
    fi
    echo "# .ci/gpu-runtimes.sh $mode: all $n passed"
    exit 0
}

# The wheels of a version: the runtime (headers, libcudart) and the nvcc
# wheel, of which only include/crt is taken (cuda_runtime_api.h includes
# crt/host_defines.h; see .ci/cuda-matrix.sh).  The cache folder name is
# .ci/cuda-matrix.sh's ("12" for 12.9), so both scripts share downloads.
wheels() {
    case $1 in
    11.8) echo "nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.*" ;;
    12.9) echo "nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvcc-cu12==12.9.*" ;;
    *) return 1 ;;
    esac
}
cache_name() {
    case $1 in
    12.*) echo 12 ;;
    *) echo "$1" ;;
    esac
}

fetch_one() {
    v=$1
    specs=$(wheels "$v") || { result "not ok" "CUDA $v: unknown version"; return; }
    root="$dir/cuda-$v"
    log="$dir/fetch-$v.log"
    mkdir -p "$dir" || { result "not ok" "CUDA $v: mkdir $dir"; return; }
    # shellcheck disable=SC2086
    if ! cudart_fetch "$CUDA_MATRIX_CACHE/$(cache_name "$v")" "$root" "$log" $specs; then
        result "not ok" "CUDA $v: $cudart_error" "$log"
        return
    fi
    cv=$cudart_version so=$cudart_so whls=$cudart_whls
    echo "CUDART_VERSION $cv $so from$whls" >"$root/VERSION"
    rm -f "$log"
    result ok "CUDA $v: CUDART_VERSION $cv, $so in $root"
}

run_one() {
    v=$1
    root="$dir/cuda-$v"
    build="$dir/build-$v"
    log="$dir/run-$v.log"
    if [ ! -f "$root/include/cuda_runtime_api.h" ] || [ ! -e "$root/lib/libcudart.so" ]; then
        result "not ok" "CUDA $v: no runtime in $root (run '$0 fetch $dir' where pip works)"
        return
    fi
    [ -x "$src/configure" ] || { result "not ok" "CUDA $v: no $src/configure (run ./bootstrap)"; return; }
    rm -rf "$build"
    mkdir -p "$build" || { result "not ok" "CUDA $v: mkdir $build"; return; }
    if ! (cd "$build" && "$src/configure" --with-cuda="$root" --without-nvcc) >"$log" 2>&1 ||
        ! grep -q "CUDA: *yes *($root)" "$log"; then
        result "not ok" "CUDA $v: configure --with-cuda=$root --without-nvcc" "$log"
        return
    fi
    result ok "CUDA $v: configure --with-cuda=$root --without-nvcc"
    # shellcheck disable=SC2086
    if ! (cd "$build" && make $MAKEFLAGS_CHECK all && make $MAKEFLAGS_CHECK check TESTS=) \
        >>"$log" 2>&1; then
        result "not ok" "CUDA $v: build" "$log"
        return
    fi
    result ok "CUDA $v: the library, tools and C tests build"
    [ "$mode" = build ] && return
    got=$(env -u LD_LIBRARY_PATH ldd "$build/tests/devices/gpu-smoke" 2>/dev/null |
        sed -n 's/.*libcudart[^ ]* => \([^ ]*\).*/\1/p')
    case $got in
    "$root/lib/"*) result ok "CUDA $v: tests/devices/gpu-smoke loads $got" ;;
    *) echo "tests/devices/gpu-smoke loads libcudart from '$got'" >"$log.ldd"
       result "not ok" "CUDA $v: the tests load this runtime's libcudart" "$log.ldd" ;;
    esac
    # shellcheck disable=SC2086
    if (cd "$build" && CUXFER_REQUIRE_GPU=$CUXFER_REQUIRE_GPU \
        LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        make $MAKEFLAGS_CHECK check ${GPU_RUNTIMES_TESTS:+"TESTS=$GPU_RUNTIMES_TESTS"}) \
        >>"$log" 2>&1; then
        result ok "CUDA $v: make check with CUXFER_REQUIRE_GPU=$CUXFER_REQUIRE_GPU"
    else
        result "not ok" "CUDA $v: make check with CUXFER_REQUIRE_GPU=$CUXFER_REQUIRE_GPU" "$log"
    fi
    # Every failing test point, whatever make said, with the diagnostic
    # lines under it (up to 20): what it saw, where the log stays behind.
    # The TAP driver writes its own result line between a point and them.
    for f in "$build"/tests/*.log "$build"/tests/*/*.log; do
        [ -f "$f" ] || continue
        awk '/^(not ok|Bail out)/ { print; n = 20; next }
             n > 0 && /^(FAIL|ERROR|XPASS): / { next }
             n > 0 && /^#/ { print; n--; next }
             { n = 0 }' "$f" | sed "s|^|# CUDA $v ${f#"$build"/}: |"
    done
    [ -f "$build/test-suite.log" ] && sed -n '1,12s/^/# /p' "$build/test-suite.log"
}

# The sources the builds configure from (see the top comment).
pick_sources() {
    src=$top
    [ -f "$top/config.status" ] || return 0
    src="$dir/src"
    rm -rf "$src"
    if (cd "$top" && make distdir distdir="$src") >"$dir/distdir.log" 2>&1; then
        result ok "a clean copy of the sources in $src (make distdir)"
    else
        result "not ok" "make distdir distdir=$src" "$dir/distdir.log"
        finish
    fi
}

case $mode in
fetch) for v in $GPU_RUNTIMES; do fetch_one "$v"; done ;;
run | build)
    if [ ! -d "$dir" ]; then
        result "not ok" "no folder $dir: run '$0 fetch $dir' where pip works, and carry it"
        finish
    fi
    pick_sources
    for v in $GPU_RUNTIMES; do run_one "$v"; done ;;
*) usage ;;
esac
finish
