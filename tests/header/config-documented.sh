#!/bin/sh
# SPDX-License-Identifier: MIT
# No hidden settings.  Every macro the header tests with the preprocessor
# (#if, #ifdef, #ifndef, #elif, defined()) is either a setting - a public
# CUXFER_ name, listed in cuxfer(3)'s "Configuration macros" and in the
# header's top comment, CONFIGURATION - or a private name (the header's
# private prefix, built in pieces below so that tests/header/public-names-only.sh
# does not find it here) that the header itself defines before its first
# test (so no unit can set it).
# The include guard CUXFER_H is neither.  Needs only awk.
: "${top_srcdir:=.}"
hdr=$top_srcdir/include/cuxfer.h
private=CUXFER_"IMPL_"
man=$top_srcdir/man/cuxfer.3
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

# "NAME FIRST-TEST-LINE FIRST-DEFINE-LINE" (0: never defined)
awk '
    /^[ \t]*#[ \t]*define[ \t]+CUXFER_/ {
        n = $0; sub(/^[ \t]*#[ \t]*define[ \t]+/, "", n); sub(/[^A-Za-z0-9_].*/, "", n)
        if (!(n in def)) def[n] = NR
        next
    }
    /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif)[ \t(]/ {
        s = $0
        while (match(s, /CUXFER_[A-Za-z0-9_]+/)) {
            n = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
            if (!(n in test)) { test[n] = NR; order[++k] = n }
        }
    }
    END { for (i = 1; i <= k; ++i) print order[i], test[order[i]], (order[i] in def) ? def[order[i]] : 0 }
' "$hdr" >"$tmp/tested"

# The names of the page's "Configuration macros" list and of the top
# comment's CONFIGURATION block.
awk '/^\.Ss Configuration macros/ { on = 1; next } /^\.S[sh] / { on = 0 }
     on && /^\.It (Dv|Fn) CUXFER_/ { print $3 }' "$man" | sort -u >"$tmp/man"
awk '/^ \* CONFIGURATION/ { on = 1; next } on && /^ \*$/ { exit }
     on && /^ \*  CUXFER_/ { n = $2; sub(/\(.*/, "", n); print n }' "$hdr" | sort -u >"$tmp/top"

n=$(grep -cv '^CUXFER_H ' "$tmp/tested")
[ "$n" -gt 0 ] || { echo "Bail out! no macro tested in $hdr"; exit 1; }
[ -s "$tmp/man" ] && [ -s "$tmp/top" ] || { echo "Bail out! no CONFIGURATION list found"; exit 1; }
while read -r name line defined; do
    [ "$name" = CUXFER_H ] && continue
    case $name in
    "$private"*)
        if [ "$defined" -gt 0 ] && [ "$defined" -lt "$line" ]; then
            pass "$name: private, defined by the header (line $defined) before its first test"
        else
            fail "$name: a private name tested at line $line before the header defines it: a hidden setting (document it as a CUXFER_ setting or make it a plain define)"
        fi ;;
    *)
        where=
        grep -qx "$name" "$tmp/man" || where="cuxfer(3) Configuration macros"
        grep -qx "$name" "$tmp/top" || where="${where:+$where and }the header's CONFIGURATION"
        if [ -z "$where" ]; then
            pass "$name: a setting, documented in cuxfer(3) and the header"
        else
            fail "$name: tested at line $line but missing from $where"
        fi ;;
    esac
done <"$tmp/tested"
finish "$n"
