#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that finds cuxfer only through `pkg-config --cflags --libs
# cuxfer` builds and runs.  In `make check` cuxfer is first installed into a
# staged DESTDIR; with --installed (make installcheck) the real install is
# used through PKG_CONFIG_PATH.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${PKG_CONFIG:=pkg-config}" "${MAKE:=make}"
echo "1..3"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-pc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ "$1" = --installed ]; then
    pc="$PKG_CONFIG"
    echo "ok 1 - using the installed cuxfer.pc ($PKG_CONFIG_PATH)"
else
    if $MAKE -C "$top_builddir" install-includeHEADERS install-pkgconfigDATA \
        DESTDIR="$tmp/stage" >"$tmp/log" 2>&1; then
        echo "ok 1 - staged install into DESTDIR"
    else
        echo "not ok 1 - staged install into DESTDIR"; sed 's/^/# /' "$tmp/log"
    fi
    PKG_CONFIG_PATH=$(find "$tmp/stage" -name cuxfer.pc -exec dirname {} \; | head -n 1)
    export PKG_CONFIG_PATH
    # The .pc file says prefix=@prefix@; point it at the staged tree.
    pc="$PKG_CONFIG --define-variable=prefix=$tmp/stage$prefix"
fi
flags=$($pc --cflags --libs cuxfer 2>"$tmp/log")
if [ -n "$flags" ] && ${CC:-cc} -std=c99 -Wall -Wextra -Werror -pedantic \
    -o "$tmp/consumer" "$top_srcdir/tests/build/pkgconfig-consumer.c" $flags >>"$tmp/log" 2>&1; then
    echo "ok 2 - built with: $flags"
else
    echo "not ok 2 - build with pkg-config flags ($flags)"; sed 's/^/# /' "$tmp/log"
fi
if "$tmp/consumer" >"$tmp/run" 2>&1 && grep -q "^cuxfer $PACKAGE_VERSION" "$tmp/run"; then
    echo "ok 3 - runs: $(cat "$tmp/run")"
else
    echo "not ok 3 - runs"; sed 's/^/# /' "$tmp/run"
fi
