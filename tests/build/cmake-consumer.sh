#!/bin/sh
# SPDX-License-Identifier: MIT
# find_package(cuxfer CONFIG) against a staged install (make install
# DESTDIR=...): a C consumer and, when CMake can use nvcc here, a CUDA
# consumer (project(... LANGUAGES C CUDA)) configure, build and run through
# the INTERFACE target cuxfer::cuxfer, and so does a CUDA-only one
# (LANGUAGES CUDA, where FindThreads cannot run); a request for another
# major version is refused (SameMajorVersion).  Skips without cmake.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${MAKE:=make}" "${prefix:=/usr/local}"
: "${CMAKE:=cmake}"
if ! command -v "$CMAKE" >/dev/null 2>&1; then
    echo "1..0 # SKIP no cmake"; exit 0
fi
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
src=$(cd "$top_srcdir" && pwd)

if $MAKE -C "$top_builddir" install-includeHEADERS install-nodist_cmakeconfigDATA \
    DESTDIR="$tmp/stage" >"$tmp/log" 2>&1 &&
    cfg=$(find "$tmp/stage" -name cuxferConfig.cmake | head -n 1) && [ -n "$cfg" ] &&
    [ -f "$(dirname "$cfg")/cuxferConfigVersion.cmake" ]; then
    pass "staged install of cuxferConfig.cmake and cuxferConfigVersion.cmake"
else
    fail "staged install of the CMake package"; diag_file "$tmp/log" 40
fi
# Relocatable: the staged tree is found from its own place, so moving it is
# no different from installing elsewhere.
mv "$tmp/stage" "$tmp/moved"
root=$tmp/moved$prefix

# project NAME LANGS SOURCE VERSION: a CMakeLists.txt for one consumer.
project() {
    mkdir -p "$tmp/$1"
    cat >"$tmp/$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project($1 LANGUAGES $2)
find_package(cuxfer $4 CONFIG REQUIRED)
add_executable(app "$3")
target_link_libraries(app PRIVATE cuxfer::cuxfer)
CMAKE
}
# configure_build NAME [cmake args]
configure_build() {
    name=$1; shift
    "$CMAKE" -S "$tmp/$name" -B "$tmp/$name/build" -DCMAKE_PREFIX_PATH="$root" \
        "$@" >"$tmp/$name.log" 2>&1 &&
        "$CMAKE" --build "$tmp/$name/build" >>"$tmp/$name.log" 2>&1
}
runs() {
    if "$tmp/$1/build/app" >"$tmp/$1.run" 2>&1 &&
        grep -q "^cuxfer $PACKAGE_VERSION" "$tmp/$1.run"; then
        pass "$1 consumer runs: $(head -n 1 "$tmp/$1.run")"
    else
        fail "$1 consumer runs"; diag_file "$tmp/$1.run" 40
    fi
}

project c C "$src/tests/build/consumer.c" "$PACKAGE_VERSION"
if configure_build c; then
    pass "C consumer: find_package(cuxfer $PACKAGE_VERSION CONFIG), cuxfer::cuxfer"
    runs c
else
    fail "C consumer configures and builds"
    diag_file "$tmp/c.log" 40
    skip_one "C consumer not built"
fi
# The target carries the include directory of the moved tree and CUDA::cudart.
if grep -q -- "$root/include" "$tmp/c/build/CMakeFiles/app.dir/flags.make" 2>/dev/null &&
    grep -q "cudart" "$tmp/c/build/CMakeFiles/app.dir/link.txt" 2>/dev/null; then
    pass "cuxfer::cuxfer gives -I$root/include and libcudart"
else
    fail "cuxfer::cuxfer gives the include directory and libcudart"
fi

# Where FindCUDAToolkit finds no toolkit (a machine with only the CUDA
# runtime, as NVIDIA's wheels unpack it; here FindCUDAToolkit is switched
# off), CUDA::cudart comes from the configured CUDA's headers and libcudart.
project rt C "$src/tests/build/consumer.c" "$PACKAGE_VERSION"
if configure_build rt -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE &&
    grep -q "cudart" "$tmp/rt/build/CMakeFiles/app.dir/link.txt" 2>/dev/null; then
    pass "without FindCUDAToolkit: CUDA::cudart from the configured runtime's tree"
    runs rt
else
    fail "without FindCUDAToolkit: CUDA::cudart from the configured runtime's tree"
    diag_file "$tmp/rt.log" 40
    skip_one "runtime-only consumer not built"
fi

major=${PACKAGE_VERSION%%.*}
project other C "$src/tests/build/consumer.c" "$((major + 1)).0"
if configure_build other; then
    fail "find_package(cuxfer $((major + 1)).0) is refused"; diag_file "$tmp/other.log" 40
elif grep -q "cuxferConfigVersion.cmake\|not compatible\|version" "$tmp/other.log"; then
    pass "find_package(cuxfer $((major + 1)).0) is refused (SameMajorVersion)"
else
    fail "find_package(cuxfer $((major + 1)).0) refused for its version"
    diag_file "$tmp/other.log" 40
fi

# CUDA language: only if CMake and nvcc work together here.
mkdir -p "$tmp/probe"
cat >"$tmp/probe/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(probe LANGUAGES C CUDA)
CMAKE
nvcc_args=
[ -n "${NVCC:-}" ] && nvcc_args="-DCMAKE_CUDA_COMPILER=$NVCC"
# shellcheck disable=SC2086
if "$CMAKE" -S "$tmp/probe" -B "$tmp/probe/build" $nvcc_args \
    >"$tmp/probe.log" 2>&1; then
    project cu "C CUDA" "$src/tests/build/consumer.cu" "$PACKAGE_VERSION"
    # shellcheck disable=SC2086
    if configure_build cu $nvcc_args; then
        pass "CUDA consumer (LANGUAGES C CUDA) builds with cuxfer::cuxfer"
        runs cu
    else
        fail "CUDA consumer configures and builds"
        diag_file "$tmp/cu.log" 40
        skip_one "CUDA consumer not built"
    fi
    # CUDA alone: no C or CXX, so no FindThreads (it needs one of them).
    project cuonly CUDA "$src/tests/build/consumer.cu" "$PACKAGE_VERSION"
    # shellcheck disable=SC2086
    if configure_build cuonly $nvcc_args; then
        pass "CUDA-only consumer (LANGUAGES CUDA) builds with cuxfer::cuxfer"
        runs cuonly
    else
        fail "CUDA-only consumer (LANGUAGES CUDA) configures and builds"
        diag_file "$tmp/cuonly.log" 40
        skip_one "CUDA-only consumer not built"
    fi
else
    skip_one "CMake cannot use nvcc here ($(grep -m1 -i 'error' "$tmp/probe.log"))"
    skip_one "CUDA consumer not built"
    skip_one "CMake cannot use nvcc here"
    skip_one "CUDA-only consumer not built"
fi
finish 11
