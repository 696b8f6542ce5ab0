# SPDX-License-Identifier: MIT
# .ci/cudart-wheels.sh - sourced by .ci/cuda-matrix.sh and
# .ci/gpu-runtimes.sh (after they cd to the top of the tree): a CUDA
# runtime's headers and libcudart from NVIDIA's wheels, downloaded into
# one cache that both scripts share.
#
#   cudart_fetch CACHE ROOT LOG SPEC...
#       pip downloads the wheels SPEC... (name==version, version may end
#       in *) into CACHE, takes the newest file of each and unpacks its
#       headers and libcudart into ROOT/include and ROOT/lib (see
#       .ci/unpack-cudart.py), with the libcudart.so link -lcudart needs.
#       Sets cudart_whls (the wheels used), cudart_so (the library's file
#       name) and cudart_version (CUDART_VERSION).  On failure returns 1
#       with what failed in cudart_error; pip's and the unpacker's output
#       are in LOG.
#
# Environment: CUDA_MATRIX_CACHE (default ~/.cache/cuxfer-cuda-matrix),
# PIP (default "python3 -m pip").

: "${CUDA_MATRIX_CACHE:=${HOME:-/tmp}/.cache/cuxfer-cuda-matrix}"
: "${PIP:=python3 -m pip}"

cudart_fetch() {
    cf_cache=$1 cf_root=$2 cf_log=$3
    shift 3
    cudart_error= cudart_whls= cudart_so= cudart_version=
    mkdir -p "$cf_cache" || { cudart_error="mkdir $cf_cache"; return 1; }
    # shellcheck disable=SC2086 # PIP is a command line
    if ! $PIP download --no-deps --only-binary=:all: -q -d "$cf_cache" "$@" >"$cf_log" 2>&1; then
        cudart_error="pip download $*"
        return 1
    fi
    for cf_spec; do
        cf_name=$(echo "${cf_spec%%=*}" | tr - _)
        cf_ver=${cf_spec#*==}
        cf_ver=${cf_ver%\*}
        cf_whl=$(ls "$cf_cache/${cf_name}-${cf_ver}"*.whl 2>/dev/null | sort -V | tail -n 1)
        [ -n "$cf_whl" ] || { cudart_error="$cf_spec not in $cf_cache"; return 1; }
        cudart_whls="$cudart_whls $cf_whl"
    done
    rm -rf "$cf_root"
    # shellcheck disable=SC2086 # a list of paths without spaces
    if ! python3 .ci/unpack-cudart.py "$cf_root" $cudart_whls >>"$cf_log" 2>&1 ||
        [ ! -f "$cf_root/include/cuda_runtime_api.h" ] ||
        [ ! -f "$cf_root/include/crt/host_defines.h" ]; then
        cudart_error="unpack headers and libcudart"
        return 1
    fi
    cudart_so=$(cd "$cf_root/lib" && ls libcudart.so.* 2>/dev/null | head -n 1)
    [ -n "$cudart_so" ] || { cudart_error="no libcudart.so.* in the wheel"; return 1; }
    ln -sf "$cudart_so" "$cf_root/lib/libcudart.so"
    cudart_version=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' \
        "$cf_root/include/cuda_runtime_api.h")
}
