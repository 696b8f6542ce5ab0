#!/bin/sh
# SPDX-License-Identifier: MIT
# README.md's commands and programs work as written, without a GPU:
#  - README fits a screen's width (80 columns) and about 250 lines;
#  - a ```sh block holds .ci/run's test command exactly as CI runs it;
#  - every ```sh block parses (sh -n);
#  - every option given to roicopy in a ```sh block is one that
#    `roicopy --help` lists;
#  - every ```c block compiles at -O2 with -Wall -Wextra -Werror -pedantic
#    against the header: a program (one with main) as C99 and links, a
#    fragment inside a function given `cudaStream_t s`;
#  - the ```sh blocks that run roicopy (and build nothing) run as written,
#    in order, in a scratch copy of samples/, with roicopy given --dry-run
#    (no GPU needed), and a block that starts with #! (the SLURM script)
#    as a script for two array tasks; GNU parallel's block only where
#    parallel is installed.
# .ci/readme-fresh-clone.sh runs every ```sh block verbatim in a fresh
# clone (slow: it builds twice); it extracts the blocks with
#     sh tests/docs/readme-commands.sh --extract DIR
# which writes README's fenced blocks, in order, to DIR/NN.LANG.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${CC:=cc}"
readme="$top_srcdir/README.md"

# extract README DIR: each fenced block ```LANG ... ``` to DIR/NN.LANG.
extract() {
    awk -v dir="$2" '
        !lit && /^```[A-Za-z0-9_+-]+[ \t]*$/ {
            lang = substr($0, 4); sub(/[ \t]+$/, "", lang)
            n++; out = sprintf("%s/%02d.%s", dir, n, lang); lit = 1
            printf "" > out; next
        }
        lit && /^```[ \t]*$/ { lit = 0; close(out); next }
        lit { print > out }
    ' "$1"
}

if [ "$1" = --extract ]; then
    [ -n "$2" ] && mkdir -p "$2" && extract "${3:-$readme}" "$2"
    exit $?
fi

. "$top_srcdir/tests/lib/tap.sh"
tmp=$T

mkdir "$tmp/b"
extract "$readme" "$tmp/b"
blocks() { (cd "$tmp/b" && for f in *."$1"; do [ -f "$f" ] && echo "$f"; done); }
sh_blocks=$(blocks sh)
c_blocks=$(blocks c)

# 1. Width and length.
awk 'length > 80 { printf "README.md:%d: %d columns\n", FNR, length }
     END { if (NR > 250) printf "README.md: %d lines\n", NR }' \
    "$readme" >"$tmp/size"
if [ -s "$tmp/size" ]; then
    fail "README.md: lines of at most 80 columns, about 250 lines"
    diag_file "$tmp/size"
else
    pass "README.md: $(wc -l <"$readme") lines, none wider than 80 columns"
fi

# 2. .ci/run's test command, which CI runs as README's, is in a sh block.
ci=$(sed -n '/^# --- README test command (verbatim) ---$/{n;p;}' \
    "$top_srcdir/.ci/run" | sed 's/ *|| *status=1$//')
found=
for b in $sh_blocks; do
    grep -qxF -- "$ci" "$tmp/b/$b" && found=$b
done
if [ -n "$ci" ] && [ -n "$found" ]; then
    pass "README's block $found holds .ci/run's command: $ci"
else
    fail "README has no sh block line exactly as .ci/run runs it: '$ci'"
fi

# 3. Every sh block parses.
for b in $sh_blocks; do
    if sh -n "$tmp/b/$b" 2>"$tmp/log"; then
        pass "sh block $b parses"
    else
        fail "sh block $b does not parse"; diag_file "$tmp/log"
    fi
done

# 4. Every roicopy option used is one roicopy --help lists.
roicopy="$top_builddir/tools/roicopy"
if [ ! -x "$roicopy" ]; then
    skip_one "roicopy's options: tools/roicopy is not built"
else
    "$roicopy" --help >"$tmp/help" 2>&1
    # Logical lines (continuations joined), then the words after each
    # "roicopy" that start with a dash, up to a quote or the line's end.
    for b in $sh_blocks; do
        sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$tmp/b/$b"
    done | awk '{
        for (i = 1; i <= NF; i++) {
            if ($i ~ /(^|\/)roicopy$/) on = 1
            else if (on && $i ~ /^-./) { w = $i; sub(/=.*/, "", w); print w }
            if ($i ~ /[|;&]$/ || $i ~ /'"'"'$/) on = 0
        }
        on = 0
    }' | sort -u >"$tmp/opts"
    : >"$tmp/bad"
    while read -r o; do
        grep -Eq -- "(^|[ ,])$o([ ,=]|$)" "$tmp/help" || echo "$o" >>"$tmp/bad"
    done <"$tmp/opts"
    if [ ! -s "$tmp/opts" ]; then
        fail "no roicopy option found in README's sh blocks"
    elif [ -s "$tmp/bad" ]; then
        fail "README gives roicopy options --help does not list: $(tr '\n' ' ' <"$tmp/bad")"
    else
        pass "roicopy --help lists every option README uses: $(tr '\n' ' ' <"$tmp/opts")"
    fi
fi

# 5. The C blocks compile: programs link, fragments compile in a function.
printf '#include <cuda_runtime_api.h>\n' >"$tmp/probe.c"
# shellcheck disable=SC2086 # the flag variables are word lists
if ! $CC -std=c99 $CUDA_CPPFLAGS -fsyntax-only "$tmp/probe.c" \
        >/dev/null 2>&1; then
    skip_one "README's C blocks: no CUDA runtime headers (configure found no CUDA)"
else
    for b in $c_blocks; do
        src="$tmp/b/$b" what=program link='' done="compiles and links"
        if ! grep -q '^int main' "$src"; then
            what=fragment link=-c done="compiles in a function"
            { printf '#include <stdio.h>\n#include <stdlib.h>\n'
              printf '#include <cuxfer.h>\nvoid readme_fragment(cudaStream_t s);\n'
              printf 'void readme_fragment(cudaStream_t s)\n{\n'
              cat "$src"; printf '}\n'; } >"$tmp/$b.frag.c"
            src="$tmp/$b.frag.c"
        fi
        # shellcheck disable=SC2086
        if $CC -std=c99 -O2 -Wall -Wextra -Werror -pedantic \
                -I"$top_srcdir/include" $CUDA_CPPFLAGS $link -o "$tmp/$b.out" \
                "$src" $CUDA_LDFLAGS $CUDA_LIBS $PTHREAD_LIBS \
                >"$tmp/log" 2>&1; then
            pass "C block $b ($what) $done"
        else
            fail "C block $b ($what) does not compile"; diag_file "$tmp/log"
        fi
    done
fi

# 6. The roicopy blocks run as written, in order, with --dry-run.
if [ ! -x "$roicopy" ]; then
    skip_one "README's roicopy commands: tools/roicopy is not built"
else
    real=$(cd "$(dirname "$roicopy")" && pwd)/roicopy
    w="$tmp/run"
    mkdir -p "$w/tools" "$w/bin"
    cp -R "$top_srcdir/samples" "$w/samples"
    printf '#!/bin/sh\nexec "%s" --dry-run "$@"\n' "$real" >"$w/bin/roicopy"
    chmod +x "$w/bin/roicopy"
    cp "$w/bin/roicopy" "$w/tools/roicopy"
    ran=0
    for b in $sh_blocks; do
        f="$tmp/b/$b"
        grep -q 'roicopy' "$f" || continue
        if grep -Eq '(^|[ ;&|(])(\./bootstrap|\./configure|make|cc|nvcc)( |$)' "$f"
        then continue; fi
        if grep -q '^parallel' "$f" &&
            ! parallel --version 2>/dev/null | grep -q 'GNU parallel'
        then skip_one "sh block $b: GNU parallel is not installed"; continue; fi
        ok=1
        if head -n 1 "$f" | grep -q '^#!'; then
            for k in 0 1; do
                (cd "$w" && PATH="$w/bin:$PATH" SLURM_ARRAY_TASK_ID=$k \
                    sh "$f") >"$tmp/log" 2>&1 || { ok=; break; }
            done
        else
            (cd "$w" && PATH="$w/bin:$PATH" sh -e "$f") >"$tmp/log" 2>&1 || ok=
        fi
        ran=$((ran + 1))
        if [ -n "$ok" ]; then
            pass "sh block $b runs as written (roicopy --dry-run)"
        else
            fail "sh block $b fails (roicopy --dry-run)"; diag_file "$tmp/log"
        fi
    done
    [ "$ran" -gt 0 ] || fail "no sh block of README runs roicopy"
fi
finish
