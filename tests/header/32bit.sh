#!/bin/sh
# SPDX-License-Identifier: MIT
# 32-bit x86 aligns long long to 4 inside structs; an __atomic operation on
# such a field is not lock-free, and clang turns it into a call to
# libatomic (__atomic_load_8, ...), which the kit's users do not link.  The
# stager and the worker pool it runs on (the team) keep their atomics
# lock-free: none of their functions may call libatomic.  Needs clang with 32-bit headers (gcc-multilib); skips without.
: "${top_srcdir:=.}" "${CLANG:=clang}"
if ! command -v "$CLANG" >/dev/null 2>&1 ||
   ! printf '#include <limits.h>\n' | "$CLANG" -m32 -fsyntax-only -x c - >/dev/null 2>&1; then
    echo "1..0 # SKIP no clang with 32-bit x86 headers (gcc-multilib)"
    exit 0
fi
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
h="$top_srcdir/include/cuxfer.h"
# Take the address of every function, so each is compiled: every function
# the header defines for the configured CUDA.  Some are there only for some
# runtimes (the managed-memory location helper, under CUDART_VERSION >=
# 13000), so a name of the header's text is kept where the preprocessed
# header has it too; a header that does not preprocess keeps them all (the
# compile says why).
grep -A2 '^CUXFER_API' "$h" | grep -o '\bcuxfer_[a-z0-9_]*(' | tr -d '(' |
    LC_ALL=C sort -u >"$tmp/names"
if printf '#include <cuxfer.h>\n' |
    "$CLANG" -m32 -E -P -I"$top_srcdir/include" $CUDA_CPPFLAGS -x c - >"$tmp/pp" 2>/dev/null; then
    grep -o '\bcuxfer_[a-z0-9_]*(' "$tmp/pp" | tr -d '(' | LC_ALL=C sort -u |
        LC_ALL=C comm -12 "$tmp/names" - >"$tmp/kept"
else
    cp "$tmp/names" "$tmp/kept"
fi
{
    echo '#include <cuxfer.h>'
    echo 'void *cuxfer_every_function[] = {'
    sed 's/.*/    (void *)\&&,/' "$tmp/kept"
    echo '};'
} >"$tmp/all.c"
if "$CLANG" -m32 -O1 -S -I"$top_srcdir/include" $CUDA_CPPFLAGS -o "$tmp/all.s" \
    "$tmp/all.c" >"$tmp/log" 2>&1; then
    pass "the header compiles for i386"
else
    fail "the header compiles for i386"; diag_file "$tmp/log"
fi
awk '/^[A-Za-z_0-9]*:/ { f = $1 } /__atomic_[a-z_]*_8/ { print f }' "$tmp/all.s" 2>/dev/null |
    sort -u >"$tmp/calls"
if [ -s "$tmp/all.s" ] && ! grep -q 'stager\|team' "$tmp/calls"; then
    pass "no stager or team function calls libatomic"
else
    fail "no stager or team function calls libatomic"
fi
sed 's/^/# still calling libatomic on i386: /' "$tmp/calls"
finish 2
