#!/bin/sh
# SPDX-License-Identifier: MIT
# man-links.sh - the alias links of the man pages, read from each page's
# NAME section: every `.Nm NAME` there other than the page's own name
# becomes NAME.SEC, a link to the page, so `man NAME` finds it.
#
#   man-links.sh list SRCDIR PAGE...            print "SEC PAGE-FILE LINK-FILE"
#   man-links.sh install MANDIR SRCDIR PAGE...  make the links (LN_S, default ln -s)
#   man-links.sh uninstall MANDIR SRCDIR PAGE... remove them
#
# PAGE is a path under SRCDIR such as man/cuxfer_view.3 (as in
# dist_man_MANS).  A name that two pages claim, or that is not a plain
# identifier, is an error: the link would be ambiguous or not a file name.
: "${LN_S:=ln -s}"
me=man-links.sh

usage() { echo "usage: $me list SRCDIR PAGE... | {install|uninstall} MANDIR SRCDIR PAGE..." >&2; exit 2; }

# Print "SEC PAGE-FILE LINK-FILE" for every alias of every page; fail on a
# name claimed twice or not an identifier.
list() {
    srcdir=$1; shift
    for page in "$@"; do
        f=$srcdir/$page
        [ -r "$f" ] || { echo "$me: $f: cannot read" >&2; return 1; }
        base=${page##*/}
        sec=${base##*.}
        # The .Nm lines between `.Sh NAME` and the next .Sh, name only.
        awk -v sec="$sec" -v base="$base" '
            /^\.Sh[ \t]/ { in_name = ($2 == "NAME"); next }
            in_name && /^\.Nm[ \t]/ {
                if ($2 "." sec != base) print sec, base, $2 "." sec
            }' "$f" || return 1
    done | awk -v me="$me" '
        { if ($3 !~ /^[A-Za-z0-9_]+\.[0-9a-z]+$/) {
              printf "%s: %s: NAME entry %s is not an identifier\n", me, $2, $3 | "cat >&2"
              bad = 1; next }
          if ($3 in owner) {
              printf "%s: %s is named by both %s and %s\n", me, $3, owner[$3], $2 | "cat >&2"
              bad = 1; next }
          owner[$3] = $2; print }
        END { exit bad }'
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
list)
    [ $# -ge 1 ] || usage
    list "$@"
    ;;
install|uninstall)
    [ $# -ge 2 ] || usage
    mandir=$1; shift
    links=$(list "$@") || exit 1
    printf '%s\n' "$links" | while read -r sec page link; do
        [ -n "$link" ] || continue
        dir=$mandir/man$sec
        rm -f "$dir/$link" || exit 1
        if [ "$cmd" = install ]; then
            [ -f "$dir/$page" ] || { echo "$me: $dir/$page is not installed" >&2; exit 1; }
            (cd "$dir" && $LN_S "$page" "$link") || exit 1
        fi
    done
    ;;
*) usage ;;
esac
