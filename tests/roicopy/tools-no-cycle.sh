#!/bin/sh
# SPDX-License-Identifier: MIT
# No two files of roicopy call each other, directly or round a longer
# circle: each file calls only files below it (tools/roicopy.h lists them
# by role), so each can be read, tested and replaced without the others.
#
# The call relation comes from the built objects: file A calls file B when
# A leaves a symbol undefined (nm: U) that B defines (T, D, B, R, G, S;
# weak definitions, such as the header's process-wide state that every
# unit carries, do not count).  One TAP line per file: what it calls, and
# that nothing it reaches calls it back.
#
#   tests/roicopy/tools-no-cycle.sh            roicopy's objects in the build tree
#                                      (tools/roicopy-NAME.o of tools/NAME.c)
#   tests/roicopy/tools-no-cycle.sh A.o B.o    these objects (to check another build)
#
# Skips without nm, or when roicopy is not built (no CUDA).
: "${top_srcdir:=.}" "${top_builddir:=.}"
NM=${NM:-nm}
if ! command -v "$NM" >/dev/null 2>&1; then
    echo "1..0 # SKIP no nm"; exit 0
fi
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

# name<TAB>object, one a line: the file's name is its source's.
if [ $# -gt 0 ]; then
    for o in "$@"; do
        [ -f "$o" ] || { echo "Bail out! no object $o"; exit 1; }
        b=$(basename "$o" .o)
        printf '%s.c\t%s\n' "$b" "$o"
    done >"$tmp/objects"
    what="the objects given"
else
    # automake names roicopy's objects tools/roicopy-NAME.o; an object whose
    # source is gone (a stale build) is not part of roicopy any more.
    for o in "$top_builddir"/tools/roicopy-*.o; do
        [ -f "$o" ] || continue
        b=$(basename "$o" .o)
        b=${b#roicopy-}
        [ -f "$top_srcdir/tools/$b.c" ] && printf '%s.c\t%s\n' "$b" "$o"
    done >"$tmp/objects"
    what="roicopy's objects (tools/roicopy-*.o)"
fi
n=$(grep -c . "$tmp/objects")
if [ "$n" -eq 0 ]; then
    echo "1..0 # SKIP roicopy is not built (no objects in $top_builddir/tools)"
    exit 0
fi

# name<TAB>D|U<TAB>symbol for every object.
while IFS='	' read -r name obj; do
    "$NM" -P "$obj" >"$tmp/nm" 2>"$tmp/nm.err" ||
        { echo "Bail out! $NM $obj: $(cat "$tmp/nm.err")"; exit 1; }
    awk -v name="$name" '
        $2 == "U" { print name "\tU\t" $1; next }
        $2 ~ /^[TDBRGS]$/ { print name "\tD\t" $1 }' "$tmp/nm"
done <"$tmp/objects" >"$tmp/syms"

pass "$n files of $what read with $NM"
# One unnumbered point a file, for relay.
awk -F '\t' '
    $2 == "D" { def[$3] = $1; next }
    $2 == "U" { use[++nu] = $1 "\t" $3; next }
    END {
        for (i = 1; i <= nu; ++i) {
            split(use[i], u, "\t")
            a = u[1]; s = u[2]
            if (!(s in def) || def[s] == a)
                continue
            b = def[s]
            if (!((a, b) in edge)) {
                edge[a, b] = 1
                out[a] = out[a] " " b
                why[a, b] = s
            } else if (length(why[a, b]) < 60)
                why[a, b] = why[a, b] ", " s
        }
        # every file, in name order (a plain insertion sort: a few files)
        while ((getline line < OBJECTS) > 0) {
            split(line, f, "\t")
            name[++nn] = f[1]
        }
        for (i = 2; i <= nn; ++i)
            for (j = i; j > 1 && name[j - 1] > name[j]; --j) {
                t = name[j]; name[j] = name[j - 1]; name[j - 1] = t
            }
        for (i = 1; i <= nn; ++i) {
            a = name[i]
            back = ""
            k = split(out[a], callee, " ")
            for (c = 1; c <= k && back == ""; ++c) {
                path = route(callee[c], a)
                if (path != "")
                    back = a " -> " path
            }
            if (back == "" && out[a] == "")
                printf "ok - %s calls no other file of roicopy\n", a
            else if (back == "")
                printf "ok - %s calls%s; none of them calls it back\n",
                    a, out[a]
            else {
                printf "not ok - %s is in a call circle: %s\n",
                    a, back
                # name the symbols of each step of the circle
                m = split(back, step, " -> ")
                for (c = 1; c < m; ++c)
                    printf "# %s uses %s of %s\n", step[c],
                        why[step[c], step[c + 1]], step[c + 1]
            }
        }
        exit 0
    }
    # A path from x to goal through the edges ("x -> ... -> goal"), or "".
    function route(x, goal,    seen, queue, prev, h, t, y, k, nxt, i, p) {
        h = 1; t = 1; queue[1] = x; seen[x] = 1
        while (h <= t) {
            y = queue[h++]
            if (y == goal) {
                p = y
                while (y != x) { y = prev[y]; p = y " -> " p }
                return p
            }
            k = split(out[y], nxt, " ")
            for (i = 1; i <= k; ++i)
                if (!(nxt[i] in seen)) {
                    seen[nxt[i]] = 1; prev[nxt[i]] = y; queue[++t] = nxt[i]
                }
        }
        return ""
    }' OBJECTS="$tmp/objects" "$tmp/syms" >"$tmp/points"
relay <"$tmp/points"
# The test hook is the test build's alone (tools/frames.h): no object of
# the installed roicopy defines it or names its variable.
{
    grep '	D	roicopy_test_corrupt$' "$tmp/syms"
    cut -f2 "$tmp/objects" | xargs grep -l ROICOPY_TEST_CORRUPT
} >"$tmp/hooked"
if [ -s "$tmp/hooked" ]; then
    fail "roicopy's objects carry the test hook roicopy_test_corrupt"
    diag_file "$tmp/hooked"
else
    pass "roicopy's objects carry no test hook (ROICOPY_TEST_CORRUPT is the test build's)"
fi
finish $((n + 2))
