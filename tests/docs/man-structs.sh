#!/bin/sh
# SPDX-License-Identifier: MIT
# Every struct a man page shows in its SYNOPSIS has the header's fields, in
# the header's order: the field names of each `typedef struct NAME { ... }
# NAME;` in a page's SYNOPSIS literal block are compared with those of the
# same struct in include/cuxfer.h (`struct NAME { ... };` there: the
# typedef is in the block "The API").  Types and comments
# are not compared; a page showing a struct only as an opaque
# `typedef struct NAME NAME;` is not checked, and one whose body says
# "... private members ..." must list a subsequence of the header's
# fields, in order (the public ones).
: "${top_srcdir:=.}"
hdr="$top_srcdir/include/cuxfer.h"
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

# fields FILE [man]: print "NAME field field ..." for every typedef'd
# struct with a body; with "man", only inside SYNOPSIS literal blocks.
fields() {
    awk -v man="$2" '
        function flush(   n, i, d, parts, k, m, nm) {
            gsub(/\[[^]]*\]/, "", body)
            n = split(body, decl, ";")
            out = name (partial ? "+" : "")
            for (i = 1; i <= n; i++) {
                d = decl[i]
                if (d ~ /\(\*/) {            # function pointer
                    sub(/^[^(]*\(\*[ \t]*/, "", d); sub(/\).*/, "", d)
                    out = out " " d; continue
                }
                m = split(d, parts, ",")
                for (k = 1; k <= m; k++) {
                    nm = parts[k]
                    gsub(/[ \t]+$/, "", nm)
                    if (nm !~ /[A-Za-z0-9_]$/) continue
                    sub(/.*[^A-Za-z0-9_]/, "", nm)
                    if (nm != "") out = out " " nm
                }
            }
            print out
        }
        man == "man" && /^\.Sh[ \t]/ { syn = ($0 ~ /^\.Sh[ \t]+SYNOPSIS/); next }
        man == "man" && syn && /^\.Bd[ \t]+-literal/ { lit = 1; next }
        man == "man" && lit && /^\.Ed/ { lit = 0; next }
        man == "man" && !lit { next }
        {
            line = $0
            if (instruct && line ~ /\/\*.*private member/) partial = 1
            gsub(/\\&/, "", line); gsub(/\\e/, "\\", line)
            # comments: whole ones on a line, and the start or end of long ones
            if (incomment) {
                if (line !~ /\*\//) next
                sub(/^.*\*\//, "", line); incomment = 0
            }
            gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", line)
            if (line ~ /\/\*/) { sub(/\/\*.*/, "", line); incomment = 1 }
            sub(/\/\/.*/, "", line)
        }
        !instruct && line ~ /^(typedef )?struct [A-Za-z0-9_]+[ \t]*\{/ {
            name = line; sub(/^(typedef )?struct /, "", name); sub(/[ \t]*\{.*/, "", name)
            instruct = 1; depth = 1; body = ""; partial = 0; next
        }
        instruct {
            t = line
            while (t ~ /[{}]/) {
                c = substr(t, match(t, /[{}]/), 1)
                depth += (c == "{") ? 1 : -1
                t = substr(t, RSTART + 1)
            }
            if (depth == 0) { instruct = 0; flush(); next }
            body = body " " line
        }
    ' "$1"
}

fields "$hdr" >"$tmp/header"
pages=$(ls "$top_srcdir"/man/*.3)
: >"$tmp/man"
for p in $pages; do
    fields "$p" man | sed "s|^|$(basename "$p") |" >>"$tmp/man"
done
n=$(wc -l <"$tmp/man")
if [ "$n" -eq 0 ]; then
    echo "1..0 # SKIP no man page shows a struct"
    exit 0
fi
# subseq "A B C" "A C": 0 when the second list is the first with some
# words left out, order kept.
subseq() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        n = split(a, x, " "); m = split(b, y, " "); j = 1
        for (i = 1; i <= n && j <= m; i++) if (x[i] == y[j]) j++
        exit !(j > m)
    }'
}
while read -r page name rest; do
    partial=
    case $name in *+) name=${name%+}; partial=1 ;; esac
    want=$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$tmp/header")
    if [ -z "$want" ] && ! grep -q "^$name\$" "$tmp/header"; then
        fail "$page: struct $name is not in the header"
    elif [ "$want" = "$rest" ]; then
        pass "$page: struct $name matches the header ($rest)"
    elif [ -n "$partial" ] && subseq "$want" "$rest"; then
        pass "$page: struct $name shows public fields of the header ($rest)"
    else
        fail "$page: struct $name differs from the header"
        echo "#   header: $want"
        echo "#   page:   $rest"
    fi
done <"$tmp/man"
finish "$n"
