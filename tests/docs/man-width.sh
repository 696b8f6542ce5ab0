#!/bin/sh
# SPDX-License-Identifier: MIT
# Every man page renders on an 80-column terminal without a warning, under
# both formatters: `mandoc -Tutf8 -Wwarning` and `groff -man -Tutf8 -ww`
# (groff's "can't break line" is the usual sign of a too-long literal line).
# A formatter that is not installed is skipped.
: "${top_srcdir:=.}"
pages=$(ls "$top_srcdir"/man/*.[1-9] 2>/dev/null)
[ -n "$pages" ] || { echo "Bail out! no man pages in $top_srcdir/man"; exit 1; }
count=$(printf '%s\n' "$pages" | grep -c .)
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
bs=$(printf '\b')
# width FILE: the lines over 80 columns, overstrikes removed, one column per
# UTF-8 character (continuation bytes dropped).
width() {
    sed "s/.$bs//g" "$1" | LC_ALL=C tr -d '\200-\277' | awk 'length > 80'
}
# render NAME COMMAND...: run a formatter on a page, check stderr and width.
render() {
    name=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    wide=$(width "$tmp/out")
    if [ $rc = 0 ] && [ ! -s "$tmp/err" ] && [ -z "$wide" ] && [ -s "$tmp/out" ]; then
        pass "$name $page"
    else
        fail "$name $page (status $rc)"
        diag_file "$tmp/err"
        [ -z "$wide" ] || printf '%s\n' "$wide" | sed 's/^/# over 80 columns: /'
    fi
}
for page in $pages; do
    if have mandoc; then
        render mandoc mandoc -Tutf8 -Wwarning "$page"
    else skip_one "mandoc $page: not installed"; fi
    if have groff; then
        render groff groff -man -Tutf8 -ww -P-cbou "$page"
    else skip_one "groff $page: not installed"; fi
done
finish $((count * 2))
