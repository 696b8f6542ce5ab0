#!/bin/sh
# SPDX-License-Identifier: MIT
# The header compiles warning-free as C99 and C11 (gcc, clang), C++11 and
# C++17 (g++, clang++) and CUDA (nvcc), each with -Wall -Wextra -Werror
# -pedantic (nvcc: -Werror all-warnings), and a program of two translation
# units (one C, one C++) links: no duplicate symbols.  CUXFER_HOST_ALLOC,
# CUXFER_DEVICE_ALLOC and CUXFER_MANAGED_ALLOC on a void * target do not
# compile, in C (where GNU C takes sizeof(void) for 1) as in C++, even
# without warning flags, while the same unit with a float * target does.
. "${top_srcdir:-.}/tests/lib/tap.sh"
src="$top_srcdir/tests/header/compile.c"
inc="-I$top_srcdir/include $CUDA_CPPFLAGS"
warn="-Wall -Wextra -Werror -pedantic"

for std in c99 c11; do
    try "gcc -std=$std" $CC -std=$std $warn $inc -x c -c "$src" -o "$T/a.o"
done
for std in c++11 c++17; do
    try "g++ -std=$std" $CXX -std=$std $warn $inc -x c++ -c "$src" -o "$T/a.o"
done
for std in c99 c11; do
    if have "$CLANG"; then
        try "clang -std=$std" $CLANG -std=$std $warn $inc -x c -c "$src" -o "$T/a.o"
    else skip_one "clang -std=$std: clang not installed"; fi
done
for std in c++11 c++17; do
    if have "$CLANGXX"; then
        try "clang++ -std=$std" $CLANGXX -std=$std $warn $inc -x c++ -c "$src" -o "$T/a.o"
    else skip_one "clang++ -std=$std: clang++ not installed"; fi
done
if have "$NVCC"; then
    try "nvcc (CUDA C++)" $NVCC -x cu -Werror all-warnings \
        -Xcompiler -Wall,-Wextra,-Werror $inc -c "$src" -o "$T/a.o"
else skip_one "nvcc: nvcc not found"; fi

# Two units, C and C++, one program.
link_two() {
    $CC -std=c99 $warn $inc -x c -c "$src" -o "$T/one.o" &&
        $CXX -std=c++11 $warn $inc -DHEADER_COMPILE_MAIN -x c++ -c "$src" \
            -Dheader_compile_probe=header_compile_probe_cxx -o "$T/two.o" &&
        $CXX "$T/one.o" "$T/two.o" -o "$T/prog" $CUDA_LDFLAGS $CUDA_LIBS $PTHREAD_LIBS
}
try "a C unit and a C++ unit link into one program" link_two

# Typed allocation: a void * target is a compile error, not 1-byte elements,
# for each of the three macros.
cat >"$T/typed.c" <<'EOF'
#include <cuxfer.h>
int typed_probe(void);
int typed_probe(void)
{
    TARGET *p = 0;
    return (int)ALLOC(&p);
}
EOF
for m in 'CUXFER_HOST_ALLOC(pp, 4, 0)' 'CUXFER_DEVICE_ALLOC(pp, 4)' \
    'CUXFER_MANAGED_ALLOC(pp, 4, 0)'; do
    name=${m%%(*}
    for lang in c c++; do
        if [ $lang = c ]; then cc1=$CC; std=-std=c99; else cc1=$CXX; std=-std=c++11; fi
        try "$lang: $name on float * compiles" $cc1 $std $warn $inc -DTARGET=float \
            "-DALLOC(pp)=$m" -x $lang -c "$T/typed.c" -o "$T/t.o"
        refused "$lang: $name on void * does not compile (no warning flags)" \
            $cc1 $std $inc -DTARGET=void "-DALLOC(pp)=$m" -x $lang -c "$T/typed.c" -o "$T/t.o"
    done
    if have "$CLANG"; then
        refused "clang: $name on void * does not compile" \
            $CLANG -std=c99 $inc -DTARGET=void "-DALLOC(pp)=$m" -x c -c "$T/typed.c" -o "$T/t.o"
    else skip_one "clang: $name on void *: clang not installed"; fi
done

finish
