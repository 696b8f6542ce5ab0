#!/bin/sh
# SPDX-License-Identifier: MIT
# .ci/spdx-add.sh - put `SPDX-License-Identifier: MIT` at the top of every
# tracked source, header, script, man page, m4 file, Makefile.am,
# configure.ac, pkg-config/CMake template and shell completion; safe to run
# again (files that have it are left alone).
#
#   .ci/spdx-add.sh          add the line where it is missing
#   .ci/spdx-add.sh --list   print "KIND PATH" for every file that must have it
#
# What counts is decided by kind() below, from the path (and the shebang):
# LICENSE, samples/, the fuzz corpus and regressions, dictionaries, images
# and prose (README.md, NEWS, HACKING) do not.  tests/build/spdx-headers.sh checks
# the result with --list.  The line goes on line 1, or line 2 after a
# shebang or zsh's `#compdef`.
set -eu
cd "$(dirname "$0")/.."
ID='SPDX-License-Identifier: MIT'

# kind PATH: c (/* */), hash (#), roff (.\"), or nothing when it does not count.
kind() {
    case $1 in
    samples/*|fuzz/corpus/*|fuzz/regressions/*|LICENSE|NEWS|HACKING|*.md|\
    *.dict|*.svg|*.png|*.tif|*.tiff|*.pgm|*.ppm|*.pam|*.raw|.gitignore)
        return 0 ;;
    *.c|*.h|*.cu|*.cc|*.cpp|*.hpp) echo c ;;
    *.sh|*.py|*.bash|*.zsh|*.m4|*.supp|*.pc.in|*.cmake|*.cmake.in|\
    Makefile.am|configure.ac|bootstrap|.ci/run|completions/*) echo hash ;;
    man/*.[1-9]) echo roff ;;
    *) if head -c 2 "$1" 2>/dev/null | grep -q '^#!'; then echo hash; fi ;;
    esac
}

files() {
    git ls-files | while IFS= read -r f; do
        [ -f "$f" ] || continue
        k=$(kind "$f")
        [ -n "$k" ] && printf '%s %s\n' "$k" "$f"
    done
}

if [ "${1:-}" = --list ]; then files; exit 0; fi

files | while read -r k f; do
    head -n 5 "$f" | grep -q "$ID" && continue
    case $k in
    c) line="/* $ID */" ;;
    hash) line="# $ID" ;;
    roff) line=".\\\" $ID" ;;
    esac
    # After a shebang or #compdef (they must stay first), else on line 1.
    if head -n 1 "$f" | grep -q '^#!\|^#compdef'; then
        { head -n 1 "$f"; printf '%s\n' "$line"; tail -n +2 "$f"; } >"$f.spdx"
    else
        { printf '%s\n' "$line"; cat "$f"; } >"$f.spdx"
    fi
    # Keep the mode (scripts stay executable).
    cat "$f.spdx" >"$f" && rm -f "$f.spdx"
    echo "spdx: $f"
done
