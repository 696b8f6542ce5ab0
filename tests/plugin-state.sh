#!/bin/sh
# SPDX-License-Identifier: MIT
# One process-wide state across shared objects: a host program linked
# without -rdynamic dlopens (RTLD_LOCAL) a plugin built with
# -fvisibility=hidden; both include cuxfer.h.  Weak symbols alone would
# give each its own reason text and registry.
: "${top_srcdir:=.}" "${CC:=cc}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-plugin.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
inc="-I$top_srcdir/include -I$top_srcdir/tests $CUDA_CPPFLAGS"
libs="$CUDA_LDFLAGS $CUDA_LIBS $PTHREAD_LIBS"
if ! $CC -std=c99 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden $inc \
        -o "$tmp/plugin.so" "$top_srcdir/tests/plugin-state-plugin.c" $libs >"$tmp/log" 2>&1; then
    echo "1..1"; echo "not ok 1 - build the plugin"; sed 's/^/# /' "$tmp/log"; exit 0
fi
if ! $CC -std=c99 -Wall -Wextra -Werror $inc -o "$tmp/host" \
        "$top_srcdir/tests/plugin-state-host.c" $libs -ldl >"$tmp/log" 2>&1; then
    echo "1..1"; echo "not ok 1 - build the host"; sed 's/^/# /' "$tmp/log"; exit 0
fi
if readelf --dyn-syms "$tmp/host" 2>/dev/null | grep -q cuxfer_impl; then
    echo "# note: the host exports cuxfer_impl_* symbols; the test is weaker"
fi
exec "$tmp/host" "$tmp/plugin.so"
