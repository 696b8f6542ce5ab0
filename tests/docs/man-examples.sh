#!/bin/sh
# SPDX-License-Identifier: MIT
# The EXAMPLES of every section 3 man page compile, link and run: each
# `.Bd -literal` block of the EXAMPLES section is a complete C99 program,
# built with the compile line cuxfer(3)'s SYNOPSIS shows (its flags are
# read from the page, so strict -std=c99 with no feature macro, as a user
# types it; pkg-config's part is the uninstalled header and the CUDA
# runtime), warning-free at -O2, where GCC's -Wmaybe-uninitialized sees
# outputs left unset, and compiled by nvcc -O2 too when it is present, as
# the C they are (tests/header/outputs-set.sh covers CUDA C++).  With a GPU
# (tests/lib/gpu-probe) every program is also run and must exit 0: the
# examples check every call.  A page without an EXAMPLES program fails,
# except the overview cuxfer.3.  Nothing is written into $top_srcdir.
. "${top_srcdir:-.}/tests/lib/tap.sh"
: "${CC:=cc}"
# The flags between `cc` and `prog.c` of cuxfer(3)'s compile line.
line=$(sed -n 's/^\.Dl cc \(.*\) prog\.c \$(pkg-config --cflags --libs cuxfer)$/\1/p' \
    "$top_srcdir/man/cuxfer.3")
if [ -z "$line" ]; then
    echo "Bail out! cuxfer.3 shows no line \`cc FLAGS prog.c \$(pkg-config ...)'"
    exit 1
fi
run=
probe=$("$top_builddir/tests/lib/gpu-probe" 2>&1) || {
    printf 'Bail out! %s\n' "$probe"
    exit 1
}
case $probe in
*SKIP*) ;;
*) run=1 ;;
esac
have_nvcc=
have "$NVCC" && have_nvcc=1

# extract PAGE PREFIX: write the EXAMPLES' literal blocks to PREFIX.1.c,
# PREFIX.2.c, ... undoing the roff escapes (\& vanishes, \e is a
# backslash); print how many blocks there were.
extract() {
    awk -v prefix="$2" '
        /^\.Sh[ \t]/ { in_ex = ($0 ~ /^\.Sh[ \t]+EXAMPLES[ \t]*$/); next }
        in_ex && /^\.Bd[ \t]+-literal/ { n++; lit = 1; out = prefix "." n ".c"; next }
        lit && /^\.Ed([ \t]|$)/ { lit = 0; close(out); next }
        lit {
            line = $0; s = ""
            while ((i = index(line, "\\")) > 0) {
                c = substr(line, i + 1, 1)
                s = s substr(line, 1, i - 1) (c == "e" ? "\\" : c == "&" ? "" : "\\" c)
                line = substr(line, i + 2)
            }
            print s line > out
        }
        END { print n + 0 }
    ' "$1"
}

pages=$(ls "$top_srcdir"/man/*.3)
for p in $pages; do
    name=$(basename "$p" .3)
    blocks=$(extract "$p" "$T/$name")
    if [ "$blocks" -eq 0 ]; then
        if [ "$name" = cuxfer ]; then
            skip_one "$name.3: the overview has no EXAMPLES program"
        else
            fail "$name.3 has no EXAMPLES program"
        fi
        continue
    fi
    failed=
    b=0
    while [ "$b" -lt "$blocks" ]; do
        b=$((b + 1))
        src="$T/$name.$b.c"
        # shellcheck disable=SC2086 # the flag variables are word lists
        if ! $CC $line -O2 -Wall -Wextra -Werror \
                -pedantic -I"$top_srcdir/include" $CUDA_CPPFLAGS \
                -o "$T/$name.$b" "$src" $CUDA_LDFLAGS $CUDA_LIBS \
                $PTHREAD_LIBS >"$T/log" 2>&1; then
            failed="$failed $b"
            sed "s|^|# $name.3 example $b: |" "$T/log" >>"$T/diag"
        elif [ -n "$have_nvcc" ] && ! $NVCC -x c -O2 -Werror all-warnings \
                -Xcompiler -Wall,-Wextra,-Werror -I"$top_srcdir/include" \
                -c -o "$T/$name.$b.o" "$src" >"$T/log" 2>&1; then
            failed="$failed $b(nvcc)"
            sed "s|^|# $name.3 example $b (nvcc): |" "$T/log" >>"$T/diag"
        elif [ -n "$run" ] && ! (cd "$T" && "./$name.$b") >"$T/log" 2>&1; then
            failed="$failed $b(run)"
            sed "s|^|# $name.3 example $b (run): |" "$T/log" >>"$T/diag"
        fi
    done
    if [ -z "$failed" ]; then
        pass "$name.3: $blocks example(s) compile and link with cc $line -O2${have_nvcc:+ (and under nvcc)}${run:+, and run}"
    else
        fail "$name.3: example(s)$failed failed"
        cat "$T/diag"
        rm -f "$T/diag"
    fi
done
finish
