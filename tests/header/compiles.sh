#!/bin/sh
# SPDX-License-Identifier: MIT
# The header compiles warning-free as C99 and C11 (gcc, clang), C++11 and
# C++17 (g++, clang++) and CUDA (nvcc), each with -Wall -Wextra -Werror
# -pedantic (nvcc: -Werror all-warnings), and a program of two translation
# units (one C, one C++) links: no duplicate symbols.  CUXFER_HOST_ALLOC
# and CUXFER_DEVICE_ALLOC on a void * target do not compile, in C (where
# GNU C takes sizeof(void) for 1) as in C++, even without warning flags,
# while the same unit with a float * target does.
: "${top_srcdir:=.}"
src="$top_srcdir/tests/header/compile.c"
inc="-I$top_srcdir/include $CUDA_CPPFLAGS"
warn="-Wall -Wextra -Werror -pedantic"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-hc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
out=""
result() { n=$((n + 1)); out="$out$1 $n - $2
"; }

try() { # try NAME COMMAND...
    name=$1; shift
    if "$@" >"$tmp/log" 2>&1; then result ok "$name"
    else result "not ok" "$name"; sed 's/^/# /' "$tmp/log" >>"$tmp/diag"; fi
}
skipped() { n=$((n + 1)); out="${out}ok $n - $1 # SKIP $2
"; }

first_word() { set -- $1; echo "$1"; }
have() { [ -n "$1" ] && command -v "$(first_word "$1")" >/dev/null 2>&1; }

for std in c99 c11; do
    try "gcc -std=$std" $CC -std=$std $warn $inc -x c -c "$src" -o "$tmp/a.o"
done
for std in c++11 c++17; do
    try "g++ -std=$std" $CXX -std=$std $warn $inc -x c++ -c "$src" -o "$tmp/a.o"
done
for std in c99 c11; do
    if have "$CLANG"; then
        try "clang -std=$std" $CLANG -std=$std $warn $inc -x c -c "$src" -o "$tmp/a.o"
    else skipped "clang -std=$std" "clang not installed"; fi
done
for std in c++11 c++17; do
    if have "$CLANGXX"; then
        try "clang++ -std=$std" $CLANGXX -std=$std $warn $inc -x c++ -c "$src" -o "$tmp/a.o"
    else skipped "clang++ -std=$std" "clang++ not installed"; fi
done
if have "$NVCC"; then
    try "nvcc (CUDA C++)" $NVCC -x cu -Werror all-warnings \
        -Xcompiler -Wall,-Wextra,-Werror $inc -c "$src" -o "$tmp/a.o"
else skipped "nvcc" "nvcc not found"; fi

# Two units, C and C++, one program.
$CC -std=c99 $warn $inc -x c -c "$src" -o "$tmp/one.o" >"$tmp/log" 2>&1 &&
$CXX -std=c++11 $warn $inc -DHEADER_COMPILE_MAIN -x c++ -c "$src" \
    -Dheader_compile_probe=header_compile_probe_cxx -o "$tmp/two.o" >>"$tmp/log" 2>&1 &&
$CXX "$tmp/one.o" "$tmp/two.o" -o "$tmp/prog" $CUDA_LDFLAGS $CUDA_LIBS $PTHREAD_LIBS >>"$tmp/log" 2>&1
if [ $? -eq 0 ]; then result ok "a C unit and a C++ unit link into one program"
else result "not ok" "a C unit and a C++ unit link into one program"; sed 's/^/# /' "$tmp/log" >>"$tmp/diag"; fi

# Typed allocation: a void * target is a compile error, not 1-byte elements.
cat >"$tmp/typed.c" <<'EOF'
#include <cuxfer.h>
int typed_probe(void);
int typed_probe(void)
{
    TARGET *p = 0;
    return (int)CUXFER_HOST_ALLOC(&p, 4, 0) + (int)CUXFER_DEVICE_ALLOC(&p, 4);
}
EOF
refused() { # refused NAME COMMAND...: the command must fail
    name=$1; shift
    if "$@" >"$tmp/log" 2>&1; then result "not ok" "$name"
    else result ok "$name"; fi
}
for lang in c c++; do
    if [ $lang = c ]; then cc1=$CC; std=-std=c99; else cc1=$CXX; std=-std=c++11; fi
    try "$lang: CUXFER_HOST_ALLOC on float * compiles" $cc1 $std $warn $inc -DTARGET=float \
        -x $lang -c "$tmp/typed.c" -o "$tmp/t.o"
    refused "$lang: CUXFER_HOST_ALLOC on void * does not compile (no warning flags)" \
        $cc1 $std $inc -DTARGET=void -x $lang -c "$tmp/typed.c" -o "$tmp/t.o"
done
if have "$CLANG"; then
    refused "clang: CUXFER_HOST_ALLOC on void * does not compile" \
        $CLANG -std=c99 $inc -DTARGET=void -x c -c "$tmp/typed.c" -o "$tmp/t.o"
else skipped "clang: CUXFER_HOST_ALLOC on void *" "clang not installed"; fi

echo "1..$n"
printf '%s' "$out"
[ -f "$tmp/diag" ] && head -n 60 "$tmp/diag"
exit 0
