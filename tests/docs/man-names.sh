#!/bin/sh
# SPDX-License-Identifier: MIT
# Every documented name finds its page: after a staged `make install-data`
# (the real install, with the link-making hook), `man -w NAME` resolves
# every .Nm name of every page's NAME section to that page, in the staged
# tree and nowhere else; every public name of the header is such a name;
# and the names that once had no link (CUXFER_STAGE_AUTO,
# cuxfer_stager_options) resolve.  Skips without man(1): CI installs man-db.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${MAKE:=make}"
if ! command -v man >/dev/null 2>&1; then
    echo "1..0 # SKIP man is not installed (apt-get install man-db)"
    exit 0
fi
# Ubuntu's minimized images replace man(1) with a stub that prints a
# notice and finds nothing: that is no man to test against.
if man -w man 2>&1 | grep -q 'minimized'; then
    echo "1..0 # SKIP man is the minimized system's stub (run unminimize or install man-db)"
    exit 0
fi
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

pages=$(cd "$top_srcdir" && ls man/*.[0-9])
# "SEC PAGE NAME" for every .Nm of every NAME section, the page's own too.
for p in $pages; do
    base=${p##*/}
    awk -v sec="${base##*.}" -v base="$base" '
        /^\.Sh[ \t]/ { in_name = ($2 == "NAME"); next }
        in_name && /^\.Nm[ \t]/ { print sec, base, $2 }' "$top_srcdir/$p"
done >"$tmp/names"
n=$(wc -l <"$tmp/names")

if $MAKE -C "$top_builddir" install-data DESTDIR="$tmp/stage" >"$tmp/log" 2>&1; then
    pass "make install-data into a staged DESTDIR"
else
    fail "make install-data into a staged DESTDIR"; diag_file "$tmp/log"
fi
man3=$(find "$tmp/stage" -type d -name man3 | head -n 1)
MANPATH=${man3%/man3}
export MANPATH
# man-db keeps no index of a fresh tree; without one it searches the files.
unset MANSECT MANOPT

# The file man -w NAME finds, which must lie in the staged tree and be
# (or link to) PAGE.
resolves() { # SEC PAGE NAME
    w=$(man -w "$3" 2>"$tmp/err") || return 1
    case $w in "$MANPATH"/man"$1"/*) ;; *) echo "found $w" >"$tmp/err"; return 1 ;; esac
    [ -f "$w" ] && cmp -s "$w" "$top_srcdir/man/$2" ||
        { echo "$w is not man/$2" >"$tmp/err"; return 1; }
}

while read -r sec page name; do
    if resolves "$sec" "$page" "$name"; then
        pass "man -w $name finds $page"
    else
        fail "man -w $name finds $page"; diag_file "$tmp/err"
    fi
done <"$tmp/names"

for pair in cuxfer_stager.3:CUXFER_STAGE_AUTO cuxfer_stager.3:cuxfer_stager_options; do
    if resolves 3 "${pair%%:*}" "${pair#*:}"; then
        pass "man -w ${pair#*:} finds ${pair%%:*}"
    else
        fail "man -w ${pair#*:} finds ${pair%%:*}"; diag_file "$tmp/err"
    fi
done

# Every public name of the header is a NAME entry (man-lint.sh only asks
# that it appear somewhere in some page).
# A page reference ("man 3 cuxfer_check") names a page, not an identifier.
sed 's/man 3 [a-z0-9_]*//g' "$top_srcdir/include/cuxfer.h" |
    grep -oE '\b(cuxfer_[a-z0-9_]+|CUXFER_[A-Z0-9_]+)\b' |
    grep -vE '^(cuxfer|CUXFER)_(impl|IMPL)_|^CUXFER_H$|_$' | sort -u >"$tmp/public"
awk '{ print $3 }' "$tmp/names" | sort -u >"$tmp/named"
missing=$(comm -23 "$tmp/public" "$tmp/named" | tr '\n' ' ')
if [ -z "$missing" ]; then
    pass "every public name of the header is in a NAME section"
else
    fail "public names in no NAME section: $missing"
fi

# Uninstall (the pages, then the hook) leaves no link behind.
if $MAKE -C "$top_builddir" uninstall-man DESTDIR="$tmp/stage" >"$tmp/log" 2>&1 &&
    $MAKE -C "$top_builddir" uninstall-hook DESTDIR="$tmp/stage" >>"$tmp/log" 2>&1 &&
    left=$(find "$MANPATH" -name '*.[0-9]*' ! -type d) && [ -z "$left" ]; then
    pass "make uninstall removes every page and link"
else
    fail "make uninstall removes every page and link"
    diag_file "$tmp/log"; printf '%s\n' "$left" | sed 's/^/# left: /'
fi
finish $((n + 5))
