#!/bin/sh
# SPDX-License-Identifier: MIT
# ./bootstrap --check names every Debian package a fresh machine lacks:
# the required ones (exit 1) and the optional ones that roicopy's formats
# and the tests use (libpng-dev, libtiff-dev, netpbm, ...), in one
# `sudo apt-get install` line; with everything present it says nothing.
# The machine is simulated by PATH: an empty one, and one of stand-ins.
: "${top_srcdir:=.}"
src=$(cd "$top_srcdir" && pwd) || exit 1
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
sh=$(command -v sh)
mkdir "$tmp/bare" "$tmp/full" "$tmp/tools"
ln -s "$(command -v dirname)" "$tmp/bare/dirname"
ln -s "$(command -v dirname)" "$tmp/full/dirname"
# Stand-ins that succeed: every command bootstrap looks for, and a
# pkg-config that knows every module.
for c in make cc c++ autoreconf automake pkg-config pnmtopng pamtotiff \
    tifftopnm tiffcp mandoc groff man cmake python3 zsh clang; do
    printf '#!%s\nexit 0\n' "$sh" >"$tmp/full/$c"
    chmod +x "$tmp/full/$c"
done
printf '#!%s\necho "GNU parallel 20221122"\n' "$sh" >"$tmp/full/parallel"
chmod +x "$tmp/full/parallel"
# Only the required tools: the optional packages are all missing.
for c in make cc c++ autoreconf automake; do cp "$tmp/full/$c" "$tmp/tools/"; done
ln -s "$(command -v dirname)" "$tmp/tools/dirname"
printf '#!%s\nexit 1\n' "$sh" >"$tmp/tools/pkg-config"
chmod +x "$tmp/tools/pkg-config"

# bootstrap_check DIR: run bootstrap --check with PATH=DIR; status in $rc,
# stderr in $tmp/err.
bootstrap_check() {
    PATH=$1 "$sh" "$src/bootstrap" --check >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
line() { grep '^ *sudo apt-get install' "$tmp/err"; }
has_all() {
    for p in "$@"; do
        line | grep -q " $p\( \|$\)" || { echo "# no $p in: $(line)"; return 1; }
    done
}
opt="libpng-dev libtiff-dev netpbm libtiff-tools mandoc groff man-db cmake python3 zsh clang parallel"

bootstrap_check "$tmp/bare"
if [ "$rc" = 1 ] && has_all make gcc g++ autoconf automake pkg-config $opt; then
    pass "nothing installed: exit 1, one apt-get line with every package"
else
    fail "nothing installed: exit 1 ($rc), one apt-get line with every package"
    diag_file "$tmp/err"
fi
if grep -q 'required):.*autoconf' "$tmp/err" && grep -q 'optional):.*libtiff-dev' "$tmp/err"; then
    pass "the required and the optional packages are told apart"
else
    fail "the required and the optional packages are told apart"
fi
bootstrap_check "$tmp/tools"
if [ "$rc" = 0 ] && has_all $opt && ! line | grep -q 'autoconf\|automake'; then
    pass "only optional packages missing: exit 0, the line names them"
else
    fail "only optional packages missing: exit 0 ($rc), the line names them"
    diag_file "$tmp/err"
fi
if ! grep -q 'pkg-config' "$tmp/err"; then
    pass "a present tool is not asked for (pkg-config)"
else
    fail "a present tool is not asked for (pkg-config)"
fi
bootstrap_check "$tmp/full"
if [ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then
    pass "everything present: nothing said, exit 0"
else
    fail "everything present: nothing said, exit 0 ($rc)"
    diag_file "$tmp/err"
fi
PATH=$tmp/full "$sh" "$src/bootstrap" --bogus >/dev/null 2>"$tmp/err"
if [ $? = 2 ] && grep -q 'usage' "$tmp/err"; then
    pass "an unknown argument is a usage error"
else
    fail "an unknown argument is a usage error"
fi
finish 6
