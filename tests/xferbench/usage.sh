#!/bin/sh
# SPDX-License-Identifier: MIT
# xferbench's command line follows roicopy's convention, with no GPU needed:
# --help lists every option and every case, one line each, within 80
# columns; --version and -V print "xferbench (cuxfer) VERSION"; an unknown
# option gives "xferbench: unknown option --x" and the usage line on
# stderr, status 2, and never glibc's own message.
: "${top_builddir:=.}" "${top_srcdir:=.}"
xb=$top_builddir/tools/xferbench
if [ ! -x "$xb" ]; then echo "1..0 # SKIP tools/xferbench not built"; exit 0; fi
echo "1..9"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-xb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; [ -z "${3:-}" ] || sed 's/^/# /' "$3"; fi; }

"$xb" --help >"$tmp/help" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/err" ] && grep -q '^usage: xferbench' "$tmp/help"
check $? "--help: usage on stdout, status 0 (got $rc)" "$tmp/help"

# Every long option of the program (from its option table) has its line.
missing=
for o in $(grep -o '{"[a-z-]*", *[a-z_]*_argument' "$top_srcdir/tools/xferbench.c" |
    sed 's/{"\([a-z-]*\)".*/\1/'); do
    grep -q "^ *\(-., \)\?--$o\b" "$tmp/help" || missing="$missing --$o"
done
[ -z "$missing" ]
check $? "--help has a line for every option${missing:+ (missing:$missing)}"

# Every case the program tests with want("...") has its line.
missing=
for c in $(grep -o 'want("[a-z0-9-]*")' "$top_srcdir/tools/xferbench.c" |
    sed 's/want("\(.*\)")/\1/' | sort -u); do
    grep -q "^  $c " "$tmp/help" || missing="$missing $c"
done
[ -z "$missing" ]
check $? "--help has a line for every case${missing:+ (missing:$missing)}"

long=$(awk 'length > 80' "$tmp/help")
[ -z "$long" ]
check $? "--help fits 80 columns${long:+: $long}"

v=$("$xb" --version 2>&1); rc=$?
[ $rc = 0 ] && [ "$v" = "xferbench (cuxfer) $PACKAGE_VERSION" ]
check $? "--version prints 'xferbench (cuxfer) $PACKAGE_VERSION' (got '$v', status $rc)"
v=$("$xb" -V 2>&1); rc=$?
[ $rc = 0 ] && [ "$v" = "xferbench (cuxfer) $PACKAGE_VERSION" ]
check $? "-V prints the same (got '$v', status $rc)"

# bad ARGS... EXPECTED-FIRST-LINE
bad() {
    want=$1; shift
    "$xb" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    first=$(head -n 1 "$tmp/err")
    [ $rc = 2 ] && [ ! -s "$tmp/out" ] && [ "$first" = "$want" ] &&
        sed -n 2p "$tmp/err" | grep -q '^usage: xferbench' &&
        ! grep -q 'unrecognized\|invalid option\|requires an argument' "$tmp/err"
    check $? "xferbench $*: '$want', the usage line, status 2 (got '$first', $rc)" "$tmp/err"
}
bad "xferbench: unknown option --x" --x
bad "xferbench: unknown option -x" -qx
bad "xferbench: option --reps needs an argument" --reps
