#!/bin/sh
# SPDX-License-Identifier: MIT
# .ci/valgrind-roicopy.sh ROICOPY SAMPLES - run roicopy's CPU paths under
# valgrind memcheck: argument errors, file errors (missing input, bad
# magic, truncated pixels, output in a missing directory), --dry-run, and
# a real run, which without a GPU ends in roicopy's CUDA error path.  Each
# run must exit with its expected status and valgrind must report no error
# and no leak (--error-exitcode 9 with --errors-for-leak-kinds=definite,
# indirect).  Suppressions (.ci/cudart.supp) cover libcudart internals
# only.  Prints TAP-like lines; exits non-zero on any failure.
set -u
ROICOPY=$1
SAMPLES=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "valgrind-roicopy: valgrind is not installed" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-vg.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

G="$SAMPLES/gray-97x61.pgm"
printf 'P9\n2 2\n255\n....' >"$T/magic.pgm"
printf 'P5\n4 4\n255\n' >"$T/trunc.pgm"
head -c 15 /dev/zero >>"$T/trunc.pgm"
head -c 16 /dev/zero >"$T/f4.raw"

n=0 bad=0
# vg STATUS(ES) DESCRIPTION -- ARGS...  STATUS may be "0|5".
vg() {
    want=$1 desc=$2
    shift 3
    n=$((n + 1))
    # shellcheck disable=SC2086
    valgrind -q --error-exitcode=9 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --track-origins=yes --suppressions="$here/cudart.supp" \
        --log-file="$T/vg.log" "$ROICOPY" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    case "|$want|" in
    *"|$rc|"*) if [ -s "$T/vg.log" ] && grep -q '==[0-9]*== ' "$T/vg.log"; then rc=9; fi ;;
    esac
    case "|$want|" in
    *"|$rc|"*) echo "ok $n - $desc (exit $rc)" ;;
    *)  bad=$((bad + 1))
        echo "not ok $n - $desc: exit $rc, wanted $want"
        sed 's/^/#   /' "$T/err" | head -n 5
        sed 's/^/#   /' "$T/vg.log" | head -n 60 ;;
    esac
}

vg 2 "no arguments" --
vg 2 "unknown option" -- --frobnicate "$G" "$T/o.pgm"
vg 2 "option without its argument" -- "$G" "$T/o.pgm" --roi
vg 2 "bad geometry" -- --roi 10x10-5+0 "$G" "$T/o.pgm"
vg 2 "geometry that overflows" -- --roi 99999999999999999999x1 "$G" "$T/o.pgm"
vg 2 "ROI outside the image" -- --roi 10x10+90+0 "$G" "$T/o.pgm"
vg 2 "--streams 65" -- --streams 65 "$G" "$T/o.pgm"
vg 2 "--place without --canvas" -- --place 1,1 "$G" "$T/o.pgm"
vg 2 "several inputs without -o" -- "$G" "$G" "$T/o.pgm"
vg 0 "--help" -- --help
vg 0 "--version" -- --version
vg 3 "missing input" -- "$T/none.pgm" "$T/o.pgm"
vg 3 "bad magic" -- "$T/magic.pgm" "$T/o.pgm"
vg 3 "truncated pixel data" -- "$T/trunc.pgm" "$T/o.pgm"
vg 3 "raw size disagreeing with --raw" -- --raw 45x34x3 "$SAMPLES/rgb-45x33x3.raw" "$T/o.raw"
vg 3 "a directory as input" -- "$T" "$T/o.pgm"
vg 4 "output in a missing directory" -- "$G" "$T/nodir/o.pgm"
vg 4 "-o under a regular file (cannot be made)" -- "$G" -o "$G/sub"
vg 4 "output is the input" -- "$G" "$G"
vg 0 "--dry-run pgm" -- --dry-run --roi 40x30+10+5 "$G" "$T/o.pgm"
vg 0 "--dry-run pam, --streams 4, --json" -- --dry-run --streams 4 --json "$SAMPLES/rgba-64x48.pam" "$T/o.pam"
vg 0 "--dry-run raw, --format ppm" -- --dry-run --raw 45x33x3 --depth 8 --format ppm "$SAMPLES/rgb-45x33x3.raw" "$T/o.ppm"
vg 0 "--dry-run several inputs -o DIR" -- --dry-run "$G" "$SAMPLES/gray16-61x47.pgm" -o "$T"
# PNG and TIFF (when compiled in): corrupt files are exit 3 with the
# library's message, no leak; a good one goes through --dry-run.
formats=$("$ROICOPY" --version | sed -n 's/^formats: //p')
case " $formats " in *" png "*)
    printf '\211PNG\r\n\032\n\000\000\000\015IHDR\000\000\000\010' >"$T/cut.png"
    { printf '\211PNG\r\n\032\n\000\000\000\015IHDR\000\000\000\010\000\000\000\010'
      printf '\010\002\000\000\000\377\377\377\377'; head -c 64 /dev/zero; } >"$T/crc.png"
    vg 3 "PNG cut inside IHDR" -- "$T/cut.png" "$T/o.png"
    vg 3 "PNG with a bad CRC" -- "$T/crc.png" "$T/o.png"
    vg 2 "float into .png" -- --raw 2x2x1 --depth 32 "$T/f4.raw" "$T/o.png"
    ;;
esac
case " $formats " in *" tiff "*)
    printf 'II*\000\377\377\377\177' >"$T/badifd.tif"
    printf 'MM\000*\000\000\000\010\000\001\001\000\000\003\000\000\000\001\377\377' >"$T/cut.tif"
    vg 3 "TIFF whose directory is past its end" -- "$T/badifd.tif" "$T/o.tif"
    vg 3 "TIFF cut inside its directory" -- "$T/cut.tif" "$T/o.tif"
    vg 3 "--page 3 of a corrupt TIFF" -- --page 3 "$T/cut.tif" "$T/o.tif"
    ;;
esac
# Batches: --files-from (and -0), --skip-existing; a real batch reads its
# frames ahead on threads while CUDA starts (the CUDA error path without a
# GPU: the read-ahead buffers and threads are freed and joined).
mkdir "$T/batch"
printf '%s\n' "$G" "$SAMPLES/rgb-80x60.ppm" >"$T/list"
printf '%s\0' "$G" "$SAMPLES/rgb-80x60.ppm" >"$T/list0"
: >"$T/batch/rgb-80x60.ppm"
vg 0 "--dry-run --files-from --skip-existing" -- --dry-run --skip-existing --files-from "$T/list" -o "$T/batch"
vg 0 "--dry-run -0 --files-from - (stdin)" -- --dry-run -0 --files-from - -o "$T/batch" <"$T/list0"
vg 3 "--files-from a missing file" -- --files-from "$T/none" -o "$T/batch"
rm -f "$T/batch/rgb-80x60.ppm"
vg "0|5" "a batch of 2 (read ahead; CUDA error path without a GPU)" -- --roi 8x8 --files-from "$T/list" -o "$T/batch"
# Without a GPU this is the CUDA error path (exit 5); with one, a copy.
vg "0|5" "a real run (CUDA error path without a GPU)" -- --verify --roi 40x30+10+5 "$SAMPLES/rgba-64x48.pam" "$T/o.pam"
echo "1..$n"
[ $bad -eq 0 ]
