#!/bin/sh
# SPDX-License-Identifier: MIT
# Every compiler present builds and links a consumer with nothing but
# `pkg-config --cflags --libs cuxfer`: gcc (C99), g++ (C++11), clang and
# clang++ when present, and nvcc on a .cu with a kernel when present.  Each
# binary then runs: without a GPU it prints the version and exits 0; with
# one, the nvcc consumer checks a kernel round trip.  Absent compilers are
# skipped, each on its own line.  In `make check` cuxfer is first installed
# into a staged DESTDIR; with --installed (make installcheck) the real
# install is used through PKG_CONFIG_PATH.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${PKG_CONFIG:=pkg-config}" "${MAKE:=make}"
: "${prefix:=/usr/local}" "${CC:=cc}" "${CXX:=c++}"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

if [ "${1:-}" = --installed ]; then
    pc=$PKG_CONFIG
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
# The flags nvcc rejects must not be there (issue: nvcc fails on -pthread,
# then on -Wl,-rpath).
case " $flags " in
*" -pthread "*|*" -Wl,"*) fail "flags every compiler accepts: $flags" ;;
"  ") fail "pkg-config --cflags --libs cuxfer"; diag_file "$tmp/log" ;;
*) pass "flags every compiler accepts: $flags" ;;
esac

# build LABEL COMPILER LANGFLAGS SOURCE: build, then run it.
build() {
    label=$1 cc=$2 lang=$3 src=$4
    if [ -z "$cc" ] || ! command -v "${cc%% *}" >/dev/null 2>&1; then
        skip_one "$label: no compiler (${cc:-unset})"; skip_one "$label: not built"; return
    fi
    # shellcheck disable=SC2086
    if $cc $lang -o "$tmp/$label" "$src" $flags >"$tmp/$label.log" 2>&1; then
        pass "$label: $cc $lang builds and links"
    else
        fail "$label: $cc $lang builds and links"; diag_file "$tmp/$label.log"
        skip_one "$label: not built"
        return
    fi
    if "$tmp/$label" >"$tmp/$label.run" 2>&1 &&
        grep -q "^cuxfer $PACKAGE_VERSION" "$tmp/$label.run"; then
        pass "$label runs: $(head -n 1 "$tmp/$label.run")"
    else
        fail "$label runs"; diag_file "$tmp/$label.run"
    fi
}
w='-Wall -Wextra -Werror -pedantic'
c_src=$top_srcdir/tests/build/consumer.c
build gcc "$CC" "-std=c99 $w" "$c_src"
build gxx "$CXX" "-std=c++11 $w -x c++" "$c_src"
build clang "${CLANG:-}" "-std=c99 $w" "$c_src"
build clangxx "${CLANGXX:-}" "-std=c++11 $w -x c++" "$c_src"
build nvcc "${NVCC:-}" "-std=c++17 -Werror all-warnings" "$top_srcdir/tests/build/consumer.cu"
finish 12
