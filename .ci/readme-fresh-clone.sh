#!/bin/sh
# SPDX-License-Identifier: MIT
# .ci/readme-fresh-clone.sh - every ```sh block of README.md, verbatim and
# in order, in a fresh clone, as a new user would paste them into one
# shell: bootstrap, build and test, install into $HOME/cuxfer, build the
# first program, then roicopy's examples.  Slow (it builds the whole tree
# twice), so it is not part of `make check`; tests/docs/readme-commands.sh
# checks the same blocks there without building.
#
#   sh .ci/readme-fresh-clone.sh [REPO]     (default: this checkout)
#
# REPO's HEAD is cloned into a scratch directory, which is also $HOME, so
# the install touches nothing outside it.  README's C program (the ```c
# block with main) is saved as hello.c, as README asks.  Blocks that start
# with #! are scripts (the SLURM array job): run with sh for array tasks 0
# and 1.  Without a GPU (tests/lib/gpu-probe, built by make check, says
# so), roicopy runs with --dry-run and ./hello is built but not run; GNU
# parallel's block is skipped where parallel is not installed.  Each
# skip is printed.  Exits 0 when every block ran; KEEP=1 keeps the scratch
# directory.  Needs git, and what ./bootstrap needs (as root it installs
# the rest with apt-get).
set -u
src=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-fresh.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
say() { printf '%s\n' "readme-fresh-clone: $*" >&2; }

git clone -q "$src" "$tmp/clone" || { say "git clone $src failed"; exit 1; }
cd "$tmp/clone" || exit 1
say "cloned $(git rev-parse --short HEAD) into $tmp/clone"
mkdir "$tmp/blocks" "$tmp/home"
sh tests/docs/readme-commands.sh --extract "$tmp/blocks" README.md || exit 1
for c in "$tmp"/blocks/*.c; do
    grep -q '^int main' "$c" && cp "$c" hello.c
done
[ -f hello.c ] || { say "README has no C program (int main)"; exit 1; }

# One script of every sh block, each followed by a check of its status
# (sh -e does not stop inside an && list).  Without a GPU, lines change
# only as said above; the probe runs once the build made it.
script="$tmp/readme.sh"
put() { printf '%s\n' "$*"; }   # not echo: dash's echo reads backslashes
dry="s#\\(^\\|[ '(]\\)\\(\\(tools/\\)\\{0,1\\}roicopy\\) #\\1\\2 --dry-run #g"
# shellcheck disable=SC2016 # the generated lines expand when they run
{
    put 'set -e'
    put 'gpu=yes'
    put 'nogpu() { [ "$gpu" = no ]; }'
    for b in "$tmp"/blocks/*.sh; do
        name=${b##*/}
        put "echo '=== README block $name' >&2"
        if head -n 1 "$b" | grep -q '^#!'; then
            # A script: saved as it is, and a --dry-run copy.
            cp "$b" "$tmp/$name"
            sed -e "$dry" "$b" >"$tmp/$name.dry"
            put "if nogpu; then f='$tmp/$name.dry'; else f='$tmp/$name'; fi"
            put "for k in 0 1; do SLURM_ARRAY_TASK_ID=\$k sh \"\$f\" || exit 1; done"
            continue
        fi
        par=
        if grep -q '^parallel' "$b"; then
            par=1
            put "if ! command -v parallel >/dev/null 2>&1; then"
            put "  echo 'SKIP README block $name: GNU parallel is not installed' >&2"
            put "else"
        fi
        # Without a GPU: roicopy gets --dry-run, ./hello is not run.
        put "if nogpu; then"
        sed -e "$dry" \
            -e 's#^\./hello$#echo "SKIP README ./hello: no GPU" >\&2#' "$b"
        put "else"
        cat "$b"
        put "fi"
        put "st=\$?; [ \$st -eq 0 ] || { echo 'README block $name failed' >&2; exit 1; }"
        [ -z "$par" ] || put "fi"
        # After the build: is there a GPU?
        if grep -q 'make -j2 check' "$b"; then
            put 'if [ -n "$(tests/lib/gpu-probe)" ]; then gpu=no; echo "no GPU: roicopy --dry-run, ./hello not run" >&2; fi'
        fi
    done
} >"$script"

say "running README's sh blocks (log: $tmp/log, script: $script)"
if HOME="$tmp/home" sh "$script" >"$tmp/log" 2>&1; then
    grep -E '^(=== README block|SKIP README|no GPU)' "$tmp/log" >&2
    say "every sh block of README ran as written"
    exit 0
fi
tail -n 40 "$tmp/log" >&2
say "failed; KEEP=1 keeps $tmp"
exit 1
