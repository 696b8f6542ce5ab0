#!/bin/sh
# SPDX-License-Identifier: MIT
# Every output parameter is set on every path: tests/header/outputs-set.c, which
# uses each output right after CUXFER_CHECK, compiles without
# -Wmaybe-uninitialized at -O1, -O2 and -O3 (gcc, g++) and at -O2 through
# nvcc when present.  Compiled only: no GPU needed.
. "${top_srcdir:-.}/tests/lib/tap.sh"
: "${CC:=cc}"
: "${CXX:=c++}"
src="$top_srcdir/tests/header/outputs-set.c"
# shellcheck disable=SC2086 # the flag variables are word lists
for o in -O1 -O2 -O3; do
    try "gcc $o: no output left unset" $CC -std=c99 -D_POSIX_C_SOURCE=200809L $o \
        -Wall -Wextra -Werror -pedantic -I"$top_srcdir/include" $CUDA_CPPFLAGS \
        -c "$src" -o "$T/a.o"
done
try "g++ -O2: no output left unset" $CXX -std=c++11 -O2 -Wall -Wextra -Werror \
    -I"$top_srcdir/include" $CUDA_CPPFLAGS -x c++ -c "$src" -o "$T/a.o"
if have "$NVCC"; then
    try "nvcc -O2: no output left unset" $NVCC -x cu -O2 -Werror all-warnings \
        -Xcompiler -Wall,-Wextra,-Werror -I"$top_srcdir/include" -c "$src" -o "$T/a.o"
else
    skip_one "nvcc -O2: nvcc not found"
fi
finish
