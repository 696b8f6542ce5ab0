#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that finds cuxfer only through `pkg-config --cflags --libs
# cuxfer` builds and runs.  In `make check` cuxfer is first installed into a
# staged DESTDIR; with --installed (make installcheck) the real install is
# used through PKG_CONFIG_PATH.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${PKG_CONFIG:=pkg-config}" "${MAKE:=make}"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
if [ "$1" = --installed ]; then
    pc="$PKG_CONFIG"
    pass "using the installed cuxfer.pc ($PKG_CONFIG_PATH)"
else
    if $MAKE -C "$top_builddir" install-includeHEADERS install-pkgconfigDATA \
        DESTDIR="$tmp/stage" >"$tmp/log" 2>&1; then
        pass "staged install into DESTDIR"
    else
        fail "staged install into DESTDIR"; diag_file "$tmp/log"
    fi
    PKG_CONFIG_PATH=$(find "$tmp/stage" -name cuxfer.pc -exec dirname {} \; | head -n 1)
    export PKG_CONFIG_PATH
    # The .pc file says prefix=@prefix@; point it at the staged tree.
    pc="$PKG_CONFIG --define-variable=prefix=$tmp/stage$prefix"
fi
flags=$($pc --cflags --libs cuxfer 2>"$tmp/log")
if [ -n "$flags" ] && ${CC:-cc} -std=c99 -Wall -Wextra -Werror -pedantic \
    -o "$tmp/consumer" "$top_srcdir/tests/build/pkgconfig-consumer.c" $flags >>"$tmp/log" 2>&1; then
    pass "built with: $flags"
else
    fail "build with pkg-config flags ($flags)"; diag_file "$tmp/log"
fi
if "$tmp/consumer" >"$tmp/run" 2>&1 && grep -q "^cuxfer $PACKAGE_VERSION" "$tmp/run"; then
    pass "runs: $(cat "$tmp/run")"
else
    fail "runs"; diag_file "$tmp/run"
fi
finish 3
