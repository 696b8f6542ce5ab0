#!/bin/sh
# SPDX-License-Identifier: MIT
# The synopsis at the top of include/cuxfer.h lists every public function,
# macro, type and constant, grouped by man page in the header's order.
#   tests/header/synopsis.sh          check (TAP): no public name is missing
#                                     from the synopsis (the settings are in
#                                     CONFIGURATION), no name listed in the
#                                     synopsis is gone from the header
#   tests/header/synopsis.sh --write  regenerate the synopsis in place
# Run --write after adding, removing or renaming a public name.
: "${top_srcdir:=$(dirname "$0")/../..}"
h="$top_srcdir/include/cuxfer.h"
man="$top_srcdir/man"
begin=' * SYNOPSIS (tests/header/synopsis.sh --write regenerates it)'
end=' * (end of synopsis)'
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-syn.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The header's code (after the top comment) and its top comment.
awk '/^#ifndef CUXFER_H/ { code = 1 } code' "$h" >"$tmp/code"
awk '/^#ifndef CUXFER_H/ { exit } { print }' "$h" >"$tmp/top"
awk -v b="$begin" -v e="$end" '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' \
    "$h" >"$tmp/synopsis"

# Public names of the code, one per line: order<TAB>kind<TAB>name<TAB>text.
# (The private prefixes are built in pieces, P and M, so that
# tests/header/public-names-only.sh does not find them in this file.)
awk -v P="cuxfer_""impl_" -v M="CUXFER_""IMPL_" '
function emit(kind, name, text) {
    if (name in seen) return
    seen[name] = 1
    printf "%d\t%s\t%s\t%s\n", ++n, kind, name, text
}
function finish(   t, name) {
    collecting = 0
    t = buf
    sub(/[{;].*/, "", t)
    gsub("CUXFER_API|" M "PRINTF\\([^)]*\\)|" M "UNUSED", "", t)
    gsub(/[ \t]+/, " ", t); sub(/^ /, "", t); sub(/ $/, "", t)
    gsub(/\( /, "(", t); gsub(/ \)/, ")", t)
    if (match(t, /cuxfer_[a-z0-9_]*\(/)) {
        name = substr(t, RSTART, RLENGTH - 1)
        if (name !~ ("^" P)) emit("function", name, t ";")
    }
}
collecting { buf = buf " " $0; if ($0 ~ /[{;]/) finish(); next }
/^CUXFER_API/ { buf = $0; collecting = 1; if ($0 ~ /[{;]/) finish(); next }
/^#[ \t]*define[ \t]+CUXFER_[A-Z0-9_]+/ {
    line = $0; sub(/^#[ \t]*define[ \t]+/, "", line)
    match(line, /^CUXFER_[A-Z0-9_]+(\([^)]*\))?/)
    text = substr(line, 1, RLENGTH); name = text; sub(/\(.*/, "", name)
    if (name !~ ("^" M) && name != "CUXFER_H") emit("macro", name, text)
    next
}
/^[ \t]+CUXFER_[A-Z0-9_]+[ \t]*(=|,|$)/ {
    name = $1; sub(/[=,].*/, "", name)
    if (name !~ ("^" M)) emit("constant", name, name)
    next
}
/^} cuxfer_[a-z0-9_]+;/ {
    name = $2; sub(/;.*/, "", name)
    if (name !~ ("^" P)) emit("type", name, name)
}
' "$tmp/code" >"$tmp/names"

# name<TAB>page<TAB>rank from each page's NAME section (rank: position
# there); a name no NAME lists goes to the first family page that mentions
# it, else to cuxfer.3, else to a group of its own.
for f in "$man"/*.3; do
    page=$(basename "$f" .3)
    sed -n '1,/^\.Sh SYNOPSIS/p' "$f" |
        awk -v p="$page" '$1 == ".Nm" && $2 != "" { print $2 "\t" p "\t" ++n }'
done >"$tmp/pages"
cut -f3 "$tmp/names" | while read -r n; do
    grep -q "^$n	" "$tmp/pages" && continue
    f=$(grep -lw -- "$n" "$man"/cuxfer_*.3 2>/dev/null | head -n 1)
    [ -z "$f" ] && grep -qw -- "$n" "$man/cuxfer.3" 2>/dev/null && f="$man/cuxfer.3"
    [ -n "$f" ] && printf '%s\t%s\t%s\n' "$n" "$(basename "$f" .3)" 1000
done >>"$tmp/pages"

# The settings CONFIGURATION lists: not repeated in the synopsis.
awk '/^ \* CONFIGURATION/ { on = 1 } /^ \* ERRORS/ { on = 0 }
     on && /^ \*  CUXFER_/ { n = $2; sub(/\(.*/, "", n); print n }' "$tmp/top" >"$tmp/config"

if [ "$1" = --write ]; then
    awk -F '\t' -v cfg="$tmp/config" '
    BEGIN { while ((getline l < cfg) > 0) config[l] = 1 }
    FILENAME == ARGV[1] { page[$1] = $2; rank[$1] = $3; next }
    {
        if ($3 in config) next
        p = ($3 in page) ? page[$3] : "(no man page names these yet)"
        r = ($3 in rank) ? rank[$3] : 1000
        if (!(p in first)) { first[p] = ++np; order[np] = p; gkey[p] = $1 }
        if ($2 == "function" && !(p in fn)) { fn[p] = 1; gkey[p] = $1 }
        k = ++cnt[p]
        kind[p, k] = $2; text[p, k] = $4; key[p, k] = r * 100000 + $1
    }
    function flush() { if (line != "") print " *    " line; line = "" }
    function words(w) {
        if (line != "" && length(line) + 2 + length(w) > 72) flush()
        line = line == "" ? w : line "  " w
    }
    function sortp(p,   i, j, t) { # insertion sort of group p by key
        for (i = 2; i <= cnt[p]; ++i)
            for (j = i; j > 1 && key[p, j] < key[p, j - 1]; --j) {
                t = key[p, j]; key[p, j] = key[p, j - 1]; key[p, j - 1] = t
                t = kind[p, j]; kind[p, j] = kind[p, j - 1]; kind[p, j - 1] = t
                t = text[p, j]; text[p, j] = text[p, j - 1]; text[p, j - 1] = t
            }
    }
    END {
        for (i = 2; i <= np; ++i) # groups in the order of their first function
            for (j = i; j > 1 && gkey[order[j]] < gkey[order[j - 1]]; --j) {
                t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
            }
        for (i = 1; i <= np; ++i) if (order[i] ~ /^\(/) { last = order[i]; break }
        for (i = 1; i <= np + 1; ++i) {
            p = i <= np ? order[i] : last
            if (p == "" || (i <= np && p == last)) continue
            sortp(p)
            print " *  " (p ~ /^\(/ ? p : "man 3 " p)
            for (k = 1; k <= cnt[p]; ++k) {
                if (kind[p, k] != "function") continue
                t = text[p, k]
                while (length(t) > 72) {
                    cut = 0
                    for (j = 72; j > 20; --j)
                        if (substr(t, j, 2) == ", ") { cut = j; break }
                    if (!cut) break
                    print " *    " substr(t, 1, cut)
                    t = "        " substr(t, cut + 2)
                }
                print " *    " t
            }
            line = ""
            for (k = 1; k <= cnt[p]; ++k)
                if (kind[p, k] != "function") words(text[p, k])
            flush()
        }
    }' "$tmp/pages" "$tmp/names" >"$tmp/new"
    awk -v b="$begin" -v e="$end" -v new="$tmp/new" '
    $0 == e { while ((getline l < new) > 0) print l; skip = 0 }
    !skip { print }
    $0 == b { skip = 1 }' "$h" >"$tmp/h" && cat "$tmp/h" >"$h"
    echo "synopsis of $h regenerated ($(wc -l <"$tmp/new") lines)"
    exit 0
fi

echo "1..2"
if [ ! -s "$tmp/synopsis" ]; then
    echo "not ok 1 - the header has a synopsis block"; echo "not ok 2 # no block"; exit 0
fi
missing=$(cut -f3 "$tmp/names" | while read -r n; do
    grep -qw -- "$n" "$tmp/synopsis" || grep -qx -- "$n" "$tmp/config" || echo "$n"
done)
if [ -z "$missing" ]; then
    echo "ok 1 - every public name of the header is in the synopsis (or CONFIGURATION)"
else
    echo "not ok 1 - public names missing from the synopsis (run $0 --write):"
    echo "$missing" | sed 's/^/#   /'
fi
gone=$(grep -v '^ \*  [m(]' "$tmp/synopsis" | grep -o '\b\(cuxfer\|CUXFER\)_[A-Za-z0-9_]*' | sort -u | while read -r n; do
    cut -f3 "$tmp/names" | grep -qx -- "$n" || echo "$n"
done)
if [ -z "$gone" ]; then
    echo "ok 2 - every name in the synopsis exists in the header"
else
    echo "not ok 2 - names in the synopsis that the header no longer has (run $0 --write):"
    echo "$gone" | sed 's/^/#   /'
fi
