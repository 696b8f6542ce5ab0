#!/bin/sh
# SPDX-License-Identifier: MIT
# Every output parameter is set on every path: tests/header/outputs-set.c, which
# uses each output right after CUXFER_CHECK, compiles without
# -Wmaybe-uninitialized at -O1, -O2 and -O3 (gcc, g++) and at -O2 through
# nvcc when present.  Compiled only: no GPU needed.
: "${top_srcdir:=.}"
: "${CC:=cc}"
: "${CXX:=c++}"
src="$top_srcdir/tests/header/outputs-set.c"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-os.XXXXXX") || exit 1
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
first_word() { set -- $1; echo "$1"; }
# shellcheck disable=SC2086 # the flag variables are word lists
for o in -O1 -O2 -O3; do
    try "gcc $o: no output left unset" $CC -std=c99 -D_POSIX_C_SOURCE=200809L $o \
        -Wall -Wextra -Werror -pedantic -I"$top_srcdir/include" $CUDA_CPPFLAGS \
        -c "$src" -o "$tmp/a.o"
done
try "g++ -O2: no output left unset" $CXX -std=c++11 -O2 -Wall -Wextra -Werror \
    -I"$top_srcdir/include" $CUDA_CPPFLAGS -x c++ -c "$src" -o "$tmp/a.o"
if [ -n "$NVCC" ] && command -v "$(first_word "$NVCC")" >/dev/null 2>&1; then
    try "nvcc -O2: no output left unset" $NVCC -x cu -O2 -Werror all-warnings \
        -Xcompiler -Wall,-Wextra,-Werror -I"$top_srcdir/include" -c "$src" -o "$tmp/a.o"
else
    n=$((n + 1)); out="${out}ok $n - nvcc -O2 # SKIP nvcc not found
"
fi
echo "1..$n"
printf '%s' "$out"
[ -f "$tmp/diag" ] && head -n 60 "$tmp/diag"
exit 0
