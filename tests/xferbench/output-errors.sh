#!/bin/sh
# SPDX-License-Identifier: MIT
# xferbench fails when its standard output cannot be written, as GNU tools
# do: --help, --version and --list into /dev/full (no space left) or into
# a closed descriptor end with status 4 and "xferbench: standard output:
# CAUSE" on stderr, not status 0 with the text lost; a usage error keeps
# its own status 2 (nothing was written); output that lands is still
# status 0 with nothing on stderr.  No GPU needed.
: "${top_builddir:=.}" "${top_srcdir:=.}"
xb=$top_builddir/tools/xferbench
if [ ! -x "$xb" ]; then echo "1..0 # SKIP tools/xferbench not built"; exit 0; fi
if [ ! -c /dev/full ] || [ ! -w /dev/full ]; then
    echo "1..0 # SKIP no writable /dev/full"
    exit 0
fi
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

# full ARGS...: into /dev/full, status 4 and the one message
full() {
    "$xb" "$@" >/dev/full 2>"$tmp/err"; rc=$?
    [ $rc = 4 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
        grep -q '^xferbench: standard output: .' "$tmp/err"
    point $? "xferbench $* >/dev/full: status 4, 'xferbench: standard output: ...' (got $rc)" \
        "$tmp/err"
}
full --help
full --version
full -V
full --list
full --list --only 2d
full --list --csv

"$xb" --help >&- 2>"$tmp/err"; rc=$?
[ $rc = 4 ] && grep -q '^xferbench: standard output: .' "$tmp/err"
point $? "xferbench --help with standard output closed: status 4 (got $rc)" "$tmp/err"

"$xb" --reps 2 >/dev/full 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && ! grep -q 'standard output' "$tmp/err"
point $? "a usage error into /dev/full keeps status 2, nothing said of standard output (got $rc)" \
    "$tmp/err"

for a in --help --list; do
    "$xb" $a >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc = 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ]
    point $? "xferbench $a into a file: status 0, nothing on stderr (got $rc)" "$tmp/err"
done
finish 10
