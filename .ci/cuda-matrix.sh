#!/bin/sh
# SPDX-License-Identifier: MIT
# .ci/cuda-matrix.sh - the header against the CUDA runtimes 11.8, 12.x and
# 13.x, taken from NVIDIA's wheels on PyPI (no toolkit install needed):
# tests/header/compile.c compiles and .ci/cuda-matrix-probe.c compiles,
# links against that version's libcudart and runs (reporting no device
# cleanly on a machine without a GPU), with gcc and clang, as C99 and as
# C++11, under -Wall -Wextra -Werror -pedantic.  The probe calls the
# functions whose code depends on CUDART_VERSION (cuxfer_prefetch,
# cuxfer_advise, cudaHostRegisterReadOnly in cuxfer_host_register), so
# each runtime's branch is compiled and linked.
#
# What a wheel lacks (measured on nvidia-cuda-runtime-cu11 11.8.89,
# nvidia-cuda-runtime-cu12 12.9.79, nvidia-cuda-runtime 13.5.37):
#  - crt/host_defines.h and the rest of crt/, which cuda_runtime_api.h
#    includes: in the toolkit they belong to nvcc (11, 12) or to the
#    cuda_crt component (13).  They come from nvidia-cuda-nvcc-cu11/-cu12
#    (a 20 MB / 40 MB wheel, of which only include/crt is extracted) and
#    from nvidia-cuda-crt (13).
#  - the unversioned libcudart.so development symlink: the wheels hold only
#    libcudart.so.11.0 / .so.12 / .so.13, so -lcudart finds nothing; a
#    libcudart.so symlink is made in the scratch directory (linking with
#    -l:libcudart.so.12 would do as well).
#  - 11.8 also lacks libcudart_static.a (12 and 13 ship it).
#  - the 13 wheel installs under nvidia/cu13/ rather than
#    nvidia/cuda_runtime/ and is named nvidia-cuda-runtime (no -cuNN).
#
# Environment: CUDA_MATRIX (which versions, default "11.8 12 13"),
# CUDA_MATRIX_CACHE (downloaded wheels, default ~/.cache/cuxfer-cuda-matrix;
# nothing is written into the source tree), PIP (default "python3 -m pip"),
# CC, CXX, CLANG, CLANGXX.  Prints TAP; exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
. .ci/cudart-wheels.sh
: "${CUDA_MATRIX:=11.8 12 13}"
: "${CC:=gcc}" "${CXX:=g++}" "${CLANG:=clang}" "${CLANGXX:=clang++}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-cuda-matrix.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP

# The wheels of each version: the runtime, then where crt/ comes from.
wheels() {
    case $1 in
    11.8) echo "nvidia-cuda-runtime-cu11==11.8.* nvidia-cuda-nvcc-cu11==11.8.*" ;;
    12) echo "nvidia-cuda-runtime-cu12==12.9.* nvidia-cuda-nvcc-cu12==12.9.*" ;;
    13) echo "nvidia-cuda-runtime==13.* nvidia-cuda-crt==13.*" ;;
    *) return 1 ;;
    esac
}

n=0 failed=0 summary=
result() { # result ok|"not ok" NAME [LOG]
    n=$((n + 1))
    echo "$1 $n - $2"
    if [ "$1" != ok ]; then
        failed=$((failed + 1))
        [ -n "${3:-}" ] && sed -n '1,40s/^/#   /p' "$3"
    fi
}

for v in $CUDA_MATRIX; do
    specs=$(wheels "$v") || { result "not ok" "CUDA $v: unknown version"; continue; }
    root="$work/cuda-$v"
    # shellcheck disable=SC2086
    if ! cudart_fetch "$CUDA_MATRIX_CACHE/$v" "$root" "$work/fetch.log" $specs; then
        result "not ok" "CUDA $v: $cudart_error" "$work/fetch.log"
        continue
    fi
    ver=$cudart_version so=$cudart_so
    echo "# CUDA $v: CUDART_VERSION $ver, $so (${cudart_whls# })"

    inc="-I$top/include -isystem $root/include"
    lib="-L$root/lib -lcudart -Wl,-rpath,$root/lib -lpthread"
    warn="-Wall -Wextra -Werror -pedantic"
    for cc in "$CC:c99" "$CXX:c++11" "$CLANG:c99" "$CLANGXX:c++11"; do
        comp=${cc%%:*} std=${cc#*:}
        lang=c; [ "$std" = c++11 ] && lang=c++
        label="CUDA $v ($ver), $comp -std=$std"
        if ! command -v "$comp" >/dev/null 2>&1; then
            n=$((n + 1)); echo "ok $n - $label # SKIP $comp not installed"
            continue
        fi
        # shellcheck disable=SC2086
        if $comp -std=$std $warn $inc -x $lang -c "$top/tests/header/compile.c" \
            -o "$work/hc.o" >"$work/log" 2>&1; then
            result ok "$label: tests/header/compile.c compiles"
        else
            result "not ok" "$label: tests/header/compile.c compiles" "$work/log"
        fi
        # shellcheck disable=SC2086
        if $comp -std=$std $warn $inc -x $lang "$top/.ci/cuda-matrix-probe.c" \
            -x none $lib -o "$work/probe" >"$work/log" 2>&1; then
            result ok "$label: the probe compiles and links"
        else
            result "not ok" "$label: the probe compiles and links" "$work/log"
            continue
        fi
        # This version's libcudart, through the rpath, and no other.
        got=$(env -u LD_LIBRARY_PATH ldd "$work/probe" | sed -n 's/.*libcudart[^ ]* => \([^ ]*\).*/\1/p')
        case $got in
        "$root/lib/"*) ;;
        *) echo "the probe loads libcudart from '$got'" >"$work/log"
           result "not ok" "$label: the probe loads this version's libcudart" "$work/log"
           continue ;;
        esac
        if env -u LD_LIBRARY_PATH "$work/probe" >"$work/log" 2>&1; then
            result ok "$label: the probe runs"
            sed 's/^/    /' "$work/log"
        else
            result "not ok" "$label: the probe runs" "$work/log"
        fi
    done
done
echo "1..$n"
if [ $failed -ne 0 ]; then
    echo "# .ci/cuda-matrix.sh: $failed of $n failed" >&2
    exit 1
fi
echo "# .ci/cuda-matrix.sh: all $n passed"
