#!/bin/sh
# SPDX-License-Identifier: MIT
# xferbench's command line follows roicopy's convention, with no GPU needed:
# --help lists every option and every case, within 80 columns; --version and -V print "xferbench (cuxfer) VERSION"; an unknown
# option gives "xferbench: unknown option --x" and the usage line on
# stderr, status 2, and never glibc's own message.  --list names the cases
# that would run with no GPU; --only repeats, and every listed name selects
# itself; the shape sweep has every tile size, row width and band count.
: "${top_builddir:=.}" "${top_srcdir:=.}"
xb=$top_builddir/tools/xferbench
if [ ! -x "$xb" ]; then echo "1..0 # SKIP tools/xferbench not built"; exit 0; fi
echo "1..29"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

"$xb" --help >"$tmp/help" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/err" ] && grep -q '^usage: xferbench' "$tmp/help"
point $? "--help: usage on stdout, status 0 (got $rc)" "$tmp/help"

# Every long option of the program (from its option table) has its line.
missing=
for o in $(grep -o '{"[a-z-]*", *[a-z_]*_argument' "$top_srcdir/tools/xferbench.c" |
    sed 's/{"\([a-z-]*\)".*/\1/'); do
    grep -q "^ *\(-., \)\?--$o\b" "$tmp/help" || missing="$missing --$o"
done
[ -z "$missing" ]
point $? "--help has a line for every option${missing:+ (missing:$missing)}"

# Every case the program tests with want("...") has its line.
missing=
for c in $(grep -o 'want("[a-z0-9-]*")' "$top_srcdir/tools/xferbench.c" |
    sed 's/want("\(.*\)")/\1/' | sort -u); do
    grep -q "^  $c " "$tmp/help" || missing="$missing $c"
done
[ -z "$missing" ]
point $? "--help has a line for every case${missing:+ (missing:$missing)}"

long=$(awk 'length > 80' "$tmp/help")
[ -z "$long" ]
point $? "--help fits 80 columns${long:+: $long}"

v=$("$xb" --version 2>&1); rc=$?
[ $rc = 0 ] && [ "$v" = "xferbench (cuxfer) $PACKAGE_VERSION" ]
point $? "--version prints 'xferbench (cuxfer) $PACKAGE_VERSION' (got '$v', status $rc)"
v=$("$xb" -V 2>&1); rc=$?
[ $rc = 0 ] && [ "$v" = "xferbench (cuxfer) $PACKAGE_VERSION" ]
point $? "-V prints the same (got '$v', status $rc)"

# bad ARGS... EXPECTED-FIRST-LINE
bad() {
    want=$1; shift
    "$xb" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    first=$(head -n 1 "$tmp/err")
    [ $rc = 2 ] && [ ! -s "$tmp/out" ] && [ "$first" = "$want" ] &&
        sed -n 2p "$tmp/err" | grep -q '^usage: xferbench' &&
        ! grep -q 'unrecognized\|invalid option\|requires an argument' "$tmp/err"
    point $? "xferbench $*: '$want', the usage line, status 2 (got '$first', $rc)" "$tmp/err"
}
bad "xferbench: unknown option --x" --x
bad "xferbench: unknown option -x" -qx
bad "xferbench: option --reps needs an argument" --reps
bad "xferbench: --json and --csv exclude each other" --json --csv --list
bad "xferbench: option --rois is ambiguous: --rois-threads, --rois-chunk, --rois-strategy" --rois
# numbers: the strict parser roicopy uses (no junk, no overflow that wraps)
for a in "--rows-threads 0|out of range 1..32" "--rows-threads 33|out of range 1..32" \
         "--rows-threads 4x|trailing \"x\"" "--reps 4294967299|is too large" \
         "--device 4294967296|is too large" "--size 17592186044417|is too large"; do
    opt=${a%%|*} why=${a#*|}
    "$xb" ${opt% *} "${opt#* }" --list >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc = 2 ] && [ ! -s "$tmp/out" ] &&
        grep -qF "xferbench: bad ${opt% *} value \"${opt#* }\": " "$tmp/err" &&
        grep -qF "$why" "$tmp/err"
    point $? "$opt: refused by name ($why), status 2 (got $rc)" "$tmp/err"
done
"$xb" --rows-threads 32 --list >"$tmp/out" 2>"$tmp/err"
point $? "--rows-threads 32 is taken" "$tmp/err"
bad "xferbench: --json and --csv exclude each other" -c -j --list

# --list: no device touched, names on stdout, status 0
"$xb" --list >"$tmp/list" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/err" ] && grep -qx 'h2d-1d' "$tmp/list" &&
    grep -qx 'rois h2d 256 of 256x256' "$tmp/list"
point $? "--list prints the case names with no GPU, status 0 (got $rc)" "$tmp/err"

# every listed name, given to --only, lists itself (what --only matches is
# what --list prints)
bad_names=
while IFS= read -r c; do
    case $c in multi*) continue ;; esac
    "$xb" --list --only "$c" | grep -qxF "$c" || bad_names="$bad_names [$c]"
done <"$tmp/list"
[ -z "$bad_names" ]
point $? "every listed name selects itself${bad_names:+ (not:$bad_names)}"

# --only repeats: any pattern selects; a case against the link brings the
# link cases along
"$xb" --list --only 'of 512x512' --only banded >"$tmp/out" 2>&1
printf '%s\n' h2d-1d d2h-1d bidir-1d 'rois h2d 64 of 512x512' 'rois d2h 64 of 512x512' \
    'banded 8000x8000 RGBA8' >"$tmp/want"
cmp -s "$tmp/out" "$tmp/want"
point $? "--only twice: both patterns' cases and the link, nothing else" "$tmp/out"

# the shape sweep: every tile side from 8 to 1024 (256 and 512 among them)
# and mixed sizes, 1-4 byte rows, both ways each, and the banded round trip
"$xb" --list --only rois --only 2d --only banded >"$tmp/out" 2>&1
missing=
for d in h2d d2h; do
    for side in 8 16 32 64 128 256 512 1024; do
        grep -q "^rois $d [0-9]* of ${side}x${side}\$" "$tmp/out" || missing="$missing $d:${side}x$side"
    done
    grep -q "^rois $d [0-9]* mixed " "$tmp/out" || missing="$missing $d:mixed"
    for w in 1 2 4; do
        grep -qx "2d $d rows $w B" "$tmp/out" || missing="$missing $d:${w}B"
    done
done
grep -q '^banded ' "$tmp/out" || missing="$missing banded"
[ -z "$missing" ]
point $? "the shape sweep lists every case it needs${missing:+ (missing:$missing)}" "$tmp/out"

# more --only patterns than it holds: a clear error, status 2
set --
i=0
while [ $i -lt 33 ]; do set -- "$@" --only "p$i"; i=$((i + 1)); done
"$xb" --list "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q '^xferbench: --only p32: at most 32 patterns$' "$tmp/err"
point $? "a 33rd --only names itself and the limit, status 2 (got $rc)" "$tmp/err"

# a pattern no case of the run has (a typo) is refused by name, status 2,
# before anything runs or is listed: it would run nothing and exit 0
"$xb" --list --only 'of 512x512' --only 'rois h2d 99' >"$tmp/out" 2>"$tmp/err"; rc=$?
"$xb" --only 'rois h2d 99' >"$tmp/out1" 2>>"$tmp/err"; rc1=$?
[ $rc = 2 ] && [ $rc1 = 2 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/out1" ] &&
    [ "$(grep -c "^xferbench: --only rois h2d 99: no case of this run has it" "$tmp/err")" = 2 ]
point $? "an --only that matches no case names itself, status 2, run or --list (got $rc, $rc1)" "$tmp/err"

# --quick's tile counts are what a quick run moves (at most 4096 tiles)
"$xb" --list --quick --only 'of 8x8' >"$tmp/out" 2>&1
grep -qx 'rois h2d 4096 of 8x8' "$tmp/out" && ! grep -q '65536' "$tmp/out"
point $? "--list --quick names the quick run's tile counts" "$tmp/out"

# a pattern matches at a word's start: 2d is the row cases (and the link
# they are drawn against), not "rois h2d ..."; 1d is the link's three
"$xb" --list --only 2d >"$tmp/out" 2>&1
"$xb" --list --only 1d >"$tmp/out1" 2>&1
! grep -qv '^\(h2d-1d\|d2h-1d\|bidir-1d\|2d .*\)$' "$tmp/out" &&
    [ "$(grep -c '^2d ' "$tmp/out")" = 28 ] &&
    [ "$(cat "$tmp/out1" | tr '\n' ' ')" = "h2d-1d d2h-1d bidir-1d " ]
point $? "--only 2d lists the 28 row cases and the link only; --only 1d the link" "$tmp/out"

# --quick caps the repetitions and the link buffers where --reps and --size
# do not say (the table's first line names both); needs a device to run
"$xb" --quick --only h2d-1d >"$tmp/q" 2>&1; rc=$?
"$xb" --quick --reps 9 --size 8 --only h2d-1d >"$tmp/q2" 2>&1; rc2=$?
if [ $rc = 5 ] && [ $rc2 = 5 ] && [ "${CUXFER_REQUIRE_GPU:-0}" = 0 ]; then
    skip_one "--quick's caps: no CUDA device (status 5)"
    skip_one "--quick with --reps and --size: no CUDA device (status 5)"
else
    # The run must end (status 0, or 1 with its last line saying that a
    # performance target was missed: timing on a shared machine, beside
    # other tests, is not what these points check); its header is.
    ran() { [ "$1" = 0 ] || { [ "$1" = 1 ] && tail -n 1 "$2" | grep -q '^[1-9][0-9]* target(s) missed$'; }; }
    ran $rc "$tmp/q" && head -n 1 "$tmp/q" | grep -q ', 7 reps, link buffers 64 MiB'
    point $? "--quick alone: 7 reps, 64 MiB link buffers (exit $rc)" "$tmp/q"
    ran $rc2 "$tmp/q2" && head -n 1 "$tmp/q2" | grep -q ', 9 reps, link buffers 8 MiB'
    point $? "--quick --reps 9 --size 8: the options win (exit $rc2)" "$tmp/q2"
fi
