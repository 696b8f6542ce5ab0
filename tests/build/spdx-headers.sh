#!/bin/sh
# SPDX-License-Identifier: MIT
# Every tracked source, header, script, man page, m4 file, Makefile.am,
# configure.ac, template and completion carries `SPDX-License-Identifier:
# MIT` in its first five lines.  What counts is .ci/spdx-add.sh --list (it
# skips LICENSE, samples/, the fuzz corpus and regressions, dictionaries,
# images and prose); `sh .ci/spdx-add.sh` fixes a failure.  The list comes
# from git, so outside a git checkout of the source (a release tarball,
# make distcheck) the test skips: the tarball was made from a checked tree.
: "${top_srcdir:=.}"
src=$(cd "$top_srcdir" && pwd -P) || exit 1
if ! command -v git >/dev/null 2>&1; then
    echo "1..0 # SKIP no git"; exit 0
fi
# The checkout must be the source tree itself, not one it is unpacked into.
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
    top=$(cd "$top" && pwd -P)
if [ "$top" != "$src" ]; then
    echo "1..0 # SKIP not a git checkout of the source ($src)"; exit 0
fi
list=$(sh "$src/.ci/spdx-add.sh" --list) || { echo "Bail out! .ci/spdx-add.sh --list failed"; exit 1; }
total=$(printf '%s\n' "$list" | grep -c .)
[ "$total" -gt 0 ] || { echo "Bail out! no files listed"; exit 1; }
. "$top_srcdir/tests/lib/tap.sh"
printf '%s\n' "$list" >"$T/list"
while read -r kind f; do
    if head -n 5 "$src/$f" | grep -q 'SPDX-License-Identifier: MIT'; then
        pass "$f"
    else
        fail "$f ($kind comment): no SPDX-License-Identifier: MIT in its first 5 lines"
    fi
done <"$T/list"
finish "$total"
