#!/bin/sh
# SPDX-License-Identifier: MIT
# Every input that ever made a fuzz target fail (fuzz/regressions/TARGET/*)
# and the seed corpus (fuzz/corpus/TARGET/) replayed through each target:
#  - the libFuzzer build with ASan and UBSan, when $CLANG links
#    -fsanitize=fuzzer (clang's libFuzzer runtime is installed);
#  - the plain driver fuzz/replay-main.c, as tests/fuzz/replay-TARGET
#    (built by make check with the project's CFLAGS: sanitized under
#    .ci/sanitize.sh), always.
# An input listed in fuzz/regressions/KNOWN-BUGS shows a bug not yet fixed
# in code the hardening work does not own: it is a TODO test (expected to
# fail), and where no sanitizer runs it is skipped (the bug is UB that
# only a sanitizer reports, or an endless loop).
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${CLANG:=}"
# Absolute: each input runs from the scratch directory.
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 1
top_builddir=$(cd "$top_builddir" && pwd) || exit 1
FUZZ="$top_srcdir/fuzz"
TARGETS="fuzz-image-header fuzz-geometry fuzz-view fuzz-png-tiff"
. "$top_srcdir/tests/lib/tap.sh"
diag() { grep -v -e '^INFO: ' -e '^replay: ' "$1" | sed -n '1,25s/^/#   /p'; }
# A hang is a failure too, not a stuck `make check`.
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 60"

known_bug() { # known_bug TARGET/FILE: prints what it shows, or fails
    sed -n "s|^$1[ 	][ 	]*||p" "$FUZZ/regressions/KNOWN-BUGS" | grep .
}

# The libFuzzer builds (no FUZZ_AVOID_KNOWN_BUGS: known bugs must show).
have_libfuzzer=no
if [ -n "$CLANG" ] && command -v "$CLANG" >/dev/null 2>&1; then
    have_libfuzzer=yes
    cf="-g -O1 -fsanitize=fuzzer,address,undefined \
-fno-sanitize-recover=undefined -std=c99 -D_POSIX_C_SOURCE=200809L"
    # The image formats (Makefile.am's IMAGE_SOURCES).
    image="$top_srcdir/tools/image.c $top_srcdir/tools/netpbm.c \
$top_srcdir/tools/input.c $top_srcdir/tools/output.c $top_srcdir/tools/escape.c"
    for t in $TARGETS; do
        case $t in
        fuzz-image-header) extra="$image" ;;
        fuzz-geometry) extra="$top_srcdir/tools/geometry.c" ;;
        fuzz-view) extra="-I$top_srcdir/include $CUDA_CPPFLAGS $CUDA_LDFLAGS \
$CUDA_LIBS $PTHREAD_LIBS" ;;
        fuzz-png-tiff)
            pc=${PKG_CONFIG:-pkg-config}
            extra="$image -lpthread"
            if $pc --exists libpng 2>/dev/null; then
                extra="$extra -DHAVE_PNG $top_srcdir/tools/png-io.c \
$($pc --cflags --libs libpng)"
            fi
            if $pc --exists libtiff-4 2>/dev/null; then
                extra="$extra -DHAVE_TIFF $top_srcdir/tools/tiff-io.c \
$($pc --cflags --libs libtiff-4)"
            fi ;;
        esac
        # shellcheck disable=SC2086
        if ! $CLANG $cf -o "$T/lf-$t" "$FUZZ/$t.c" $extra >"$T/build.log" 2>&1
        then
            have_libfuzzer=no
            echo "# libFuzzer build of $t failed; replay driver only:"
            diag "$T/build.log"
            break
        fi
    done
fi

# run HARNESS SANITIZED TARGET COMMAND... - one TAP line per regression
# file and one for the corpus.
run() {
    h=$1 san=$2 t=$3
    shift 3
    for f in "$FUZZ/regressions/$t/"*; do
        [ -f "$f" ] || continue
        name="$h: $t/$(basename "$f")"
        why=$(known_bug "$t/$(basename "$f")")
        if [ -n "$why" ] && [ "$san" = no ]; then
            pass "$name # SKIP known bug, shows only under sanitizers: $why"
            continue
        fi
        if (cd "$T" && TMPDIR="$T" $limit "$@" "$f") >"$T/log" 2>&1; then
            if [ -n "$why" ]; then pass "$name # TODO known bug: $why (fixed? then delete its KNOWN-BUGS line)"
            else pass "$name"; fi
        else
            if [ -n "$why" ]; then fail "$name # TODO known bug: $why"
            else fail "$name"; fi
            diag "$T/log"
        fi
    done
    if (cd "$T" && TMPDIR="$T" $limit "$@" "$FUZZ/corpus/$t/"*) >"$T/log" 2>&1
    then pass "$h: $t seed corpus ($(ls "$FUZZ/corpus/$t" | wc -l) inputs)"
    else fail "$h: $t seed corpus"; diag "$T/log"; fi
}

for t in $TARGETS; do
    if [ $have_libfuzzer = yes ]; then
        # One allocation over 512 MiB is a failure, as in run-fuzzers.sh:
        # no input of a few KiB deserves one (fuzz-png-tiff/ztxt-claims-*).
        run libfuzzer yes "$t" "$T/lf-$t" -malloc_limit_mb=512
    fi
    r="$top_builddir/tests/fuzz/replay-${t#fuzz-}"
    if [ -x "$r" ]; then
        san=no
        "$r" --sanitized && san=yes
        run replay "$san" "$t" "$r"
    else
        fail "replay: $r is not built"
    fi
done
[ $have_libfuzzer = yes ] ||
    echo "# clang's libFuzzer runtime not found: replay driver only"
finish
