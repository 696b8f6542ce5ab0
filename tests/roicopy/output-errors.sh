#!/bin/sh
# SPDX-License-Identifier: MIT
# Output errors (exit 4), all found before any CUDA call and before any
# input is read: an output in a missing directory or under a file, an
# output that is a directory, an output that is also an input (same path,
# another spelling, a link), -o that is not a directory or cannot be made
# (a missing one is made: output-dir.sh), two inputs that would
# write the same output.  Nothing is created, nothing is truncated.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

G="$SAMPLES/gray-97x61.pgm"
cp "$G" "$T/a.pgm"
printf 'not a directory\n' >"$T/file"

expect_error 4 "roicopy: $T/nodir/x.pgm: directory $T/nodir: No such file or directory" \
    "output in a missing directory" -- "$G" "$T/nodir/x.pgm"
expect_error 4 "roicopy: $T/file/x.pgm: $T/file is not a directory" \
    "output under a regular file" -- "$G" "$T/file/x.pgm"
expect_error 4 "roicopy: $OUT: is a directory" "output that is a directory" -- "$G" "$OUT"
# ".." is a directory, not a name of extension "." (which was said first,
# in a second line, as a usage error).
expect_error 4 "roicopy: $OUT/..: is a directory" "output that is .." -- "$G" "$OUT/.."
expect_error 4 "roicopy: $T/a.pgm: is also an input ($T/a.pgm)" \
    "output that is the input" -- "$T/a.pgm" "$T/a.pgm"
mkdir "$T/sub"
expect_error 4 "is also an input" "output that is the input, spelled another way" \
    -- "$T/a.pgm" "$T/sub/../a.pgm"
ln -s "$T/a.pgm" "$T/link.pgm"
expect_error 4 "is also an input" "output that is a symbolic link to the input" \
    -- "$T/a.pgm" "$T/link.pgm"
ln "$T/a.pgm" "$T/hard.pgm"
expect_error 4 "is also an input" "output that is a hard link to the input" \
    -- "$T/a.pgm" "$T/hard.pgm"
expect_error 4 "roicopy: $T/a.pgm: is also an input" "-o DIR writing over an input" \
    -- "$T/a.pgm" -o "$T"
expect_error 4 "roicopy: $T/file: -o needs a directory" "-o names a file" -- "$G" -o "$T/file"
expect_error 4 "roicopy: $T/file/sub: Not a directory" "-o DIR that cannot be made" -- "$G" -o "$T/file/sub"
cp "$G" "$T/sub/gray-97x61.pgm"
expect_error 4 "written twice" "two inputs with one output name" \
    -- "$G" "$T/sub/gray-97x61.pgm" -o "$OUT"
chmod 555 "$T/sub"
if ( : >"$T/sub/probe" ) 2>/dev/null; then
    rm -f "$T/sub/probe"
    skip_one "read-only directory: this user writes anywhere (root)"
else
    expect_error 4 "directory $T/sub is not writable" "output in a read-only directory" \
        -- "$G" "$T/sub/x.pgm"
fi
chmod 755 "$T/sub"
# The input is intact too: nothing above wrote to it.
if cmp -s "$G" "$T/a.pgm"; then pass "the input kept its bytes"
else fail "the input changed"; fi
finish
