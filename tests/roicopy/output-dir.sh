#!/bin/sh
# SPDX-License-Identifier: MIT
# -o DIR that does not exist is made (as mkdir -p, with the umask) once
# every input and output has been checked: --dry-run says so (the plan's
# mkdir: line, "mkdir" in --json) and makes nothing; a run that fails its
# checks makes nothing; a DIR that cannot be made (under a file, under a
# directory this user cannot write) is an output error (exit 4), and so is
# an empty DIR (-o '').  The outputs' names in a DIR still to be made are
# checked as in one that exists, before it is made.  The same for the
# tiles of -o DIR.  That the run makes it is in gpu.sh.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

G="$SAMPLES/gray-97x61.pgm"
NEW="$T/new/deep"

dry() {
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$@" >"$T/plan" 2>"$T/err"
}
if dry "$G" -o "$NEW" && [ ! -s "$T/err" ] &&
    grep -qF "mkdir:    $NEW (does not exist: made, as mkdir -p, before the copy)" "$T/plan" &&
    grep -qF "output:   $NEW/gray-97x61.pgm (pgm)" "$T/plan"; then
    pass "--dry-run -o a missing DIR: the plan says it is made"
else
    fail "--dry-run -o a missing DIR"; diag_file "$T/plan"; diag_file "$T/err"
fi
[ -e "$T/new" ] && fail "--dry-run made $T/new" || pass "--dry-run makes nothing"
# --format replaces an extension that names a format, in any case, and
# keeps any other; a dotfile's name has none: .pgm -> .pgm.pam
cp "$G" "$T/.pgm"
cp "$G" "$T/UP.PGM"
cp "$G" "$T/x.pnm"
if dry --format pam "$T/.pgm" "$G" "$T/UP.PGM" "$T/x.pnm" -o "$OUT" &&
    grep -qF "output:   $OUT/.pgm.pam (pam" "$T/plan" &&
    grep -qF "output:   $OUT/gray-97x61.pam (pam" "$T/plan" &&
    grep -qF "output:   $OUT/UP.pam (pam" "$T/plan" &&
    grep -qF "output:   $OUT/x.pnm.pam (pam" "$T/plan"; then
    pass "--format pam -o DIR: .pgm, g.pgm, UP.PGM, x.pnm become .pgm.pam, g.pam, UP.pam, x.pnm.pam"
else
    fail "--format pam -o DIR: the extension rule"; diag_file "$T/plan"; diag_file "$T/err"
fi
rm -f "$T/.pgm" "$T/UP.PGM" "$T/x.pnm"
if dry "$G" -o "$OUT" && ! grep -q '^mkdir:' "$T/plan"; then
    pass "-o an existing DIR: no mkdir: line"
else
    fail "-o an existing DIR: no mkdir: line"; diag_file "$T/plan"
fi
if dry --json "$G" -o "$NEW" && grep -qF "\"mkdir\": \"$NEW\"" "$T/plan" &&
    dry --json "$G" -o "$OUT" && grep -qF '"mkdir": null' "$T/plan"; then
    pass "--dry-run --json: \"mkdir\" names the DIR to make, else null"
else
    fail "--dry-run --json mkdir"; diag_file "$T/plan"
fi
if dry --tiles 16x16 "$G" -o "$NEW" &&
    grep -qF "output:  $NEW (18 pgm files; does not exist: made, as mkdir -p, before the copy)" "$T/plan" &&
    dry --tiles 16x16 --json "$G" -o "$NEW" && grep -qF '"mkdir":true' "$T/plan" &&
    [ ! -e "$T/new" ]; then
    pass "--tiles -o a missing DIR: the plan says it is made; nothing made"
else
    fail "--tiles -o a missing DIR"; diag_file "$T/plan"; diag_file "$T/err"
fi
cp "$G" "$T/a.pgm"
mkdir "$T/sub"
cp "$G" "$T/sub/a.pgm"
expect_error 4 "$NEW/a.pgm: written twice" "two inputs of one name into a missing DIR" \
    -- "$T/a.pgm" "$T/sub/a.pgm" -o "$NEW"
[ -e "$T/new" ] && fail "a failed check made $T/new" || pass "a failed check makes nothing"
printf 'P5\n4 4\n255\n' >"$T/short.pgm"
expect_error 3 "$T/short.pgm:" "a bad input with -o a missing DIR" -- "$T/short.pgm" -o "$NEW"
[ -e "$T/new" ] && fail "a bad input made $T/new" || pass "a bad input makes nothing"
printf 'a file\n' >"$T/file"
expect_error 4 "roicopy: $T/file/sub: Not a directory" "-o DIR under a file" \
    -- "$G" -o "$T/file/sub"
expect_error 4 "roicopy: $T/file: -o needs a directory, this is a regular file" \
    "-o a file" -- "$G" -o "$T/file"
mkdir "$T/ro" && chmod 555 "$T/ro"
if ( : >"$T/ro/probe" ) 2>/dev/null; then
    rm -f "$T/ro/probe"
    skip_one "read-only directory: this user writes anywhere (root)"
else
    expect_error 4 "roicopy: $T/ro/x/y: cannot be made: directory $T/ro is not writable" \
        "-o DIR under a read-only directory" -- "$G" -o "$T/ro/x/y"
fi
chmod 755 "$T/ro"

# A ".." after a directory still to be made leads back to one that exists
# ("new/.." is "." once new is made), whose files were never checked: the
# inputs were replaced by their crops (a batch of a.pgm in $T with -o
# $T/new/.. rewrote a.pgm).  Refused, and nothing is made or written.
cp "$G" "$T/keep.pgm"
ROICOPY_IO_ONLY=1
export ROICOPY_IO_ONLY
expect_error 4 "roicopy: $T/new/..: cannot be made: its \"..\" would lead back out of a directory still to be made" \
    "a batch with -o NEW/.. (its inputs there)" -- --roi 10x10 "$T/a.pgm" "$T/keep.pgm" -o "$T/new/.."
unset ROICOPY_IO_ONLY
cmp -s "$T/keep.pgm" "$G" && [ ! -e "$T/new" ] && pass "-o NEW/..: the inputs are intact, nothing made" ||
    fail "-o NEW/..: an input was rewritten or $T/new made"
expect_error 4 "roicopy: $T/new/../sub: cannot be made: its \"..\"" \
    "--dry-run -o NEW/../EXISTING" -- --dry-run "$G" -o "$T/new/../sub"
expect_error 4 "roicopy: $T/new/..: cannot be made: its \"..\"" \
    "--tiles -o NEW/.." -- --tiles 16x16 "$G" -o "$T/new/.."
[ -e "$T/new" ] && fail "-o NEW/.. made $T/new" || pass "-o NEW/.. makes nothing"

# A symbolic link to nothing as DIR, or on its way, cannot be made (mkdir
# -p says "File exists"): the plan said it would be made, and a batch
# failed at its first write, after the reads (and a GPU run's copies).
ln -s "$T/nowhere/sub" "$T/dangling"
ROICOPY_IO_ONLY=1
export ROICOPY_IO_ONLY
expect_error 4 "roicopy: $T/dangling: cannot be made: $T/dangling: No such file or directory (a symbolic link to nothing)" \
    "a batch with -o a link to nothing" -- "$G" "$T/keep.pgm" -o "$T/dangling"
unset ROICOPY_IO_ONLY
expect_error 4 "roicopy: $T/dangling/x: cannot be made: $T/dangling: No such file or directory (a symbolic link to nothing)" \
    "--dry-run -o a directory under a link to nothing" -- --dry-run "$G" -o "$T/dangling/x"
rm -f "$T/dangling"

# -o '': no directory at all, not one to make (DIR/NAME would be /NAME).
expect_error 4 'roicopy: "": the -o directory name is empty' "--dry-run -o ''" -- --dry-run "$G" -o ''
expect_error 4 'roicopy: "": the -o directory name is empty' "-o ''" -- "$G" -o ''
expect_error 4 'roicopy: "": the -o directory name is empty' "--tiles -o ''" -- --tiles 16x16 "$G" -o ''
expect_error 4 'roicopy: "": the -o directory name is empty' "--dry-run --tiles -o ''" -- --dry-run --tiles 16x16 "$G" -o ''
ROICOPY_IO_ONLY=1
export ROICOPY_IO_ONLY
expect_error 4 'roicopy: "": the -o directory name is empty' "a batch with -o ''" -- "$G" "$T/a.pgm" -o ''
unset ROICOPY_IO_ONLY

# Output names in a DIR still to be made: too long a name (with the
# extension --format gives it), too long a path with the temporary
# name, a tile's name; refused before anything is made or written.
long=$(printf '%0253d' 0 | tr 0 x)
cp "$G" "$T/$long"
expect_error 4 "$NEW/$long.pam: the file name is 257 bytes long, out of range 1..255" \
    "--dry-run: a name too long in a missing DIR" -- --dry-run --format pam "$T/$long" "$G" -o "$NEW"
ROICOPY_IO_ONLY=1
export ROICOPY_IO_ONLY
expect_error 4 "$NEW/$long.pam: the file name is 257 bytes long, out of range 1..255" \
    "a batch: a name too long in a missing DIR" -- --format pam "$T/$long" "$G" -o "$NEW"
unset ROICOPY_IO_ONLY
[ -e "$T/new" ] && fail "a name too long made $T/new" || pass "a name too long makes nothing"
rm -rf "$T/new" # each case below on a DIR still to be made
deep=$T/new
while [ ${#deep} -lt 4060 ]; do deep=$deep/$(printf '%0200d' 0 | tr 0 d); done
deep=$(printf '%.4080s' "$deep")
deep=${deep%/}
expect_error 4 "the path is $((${#deep} + 15)) bytes long, out of range 1..4086 with the temporary name's 9 more" \
    "--dry-run: a path too long in a missing DIR" -- --dry-run "$G" -o "$deep"
rm -rf "$T/new"
tlong=$(printf '%0250d' 0 | tr 0 y)
cp "$G" "$T/$tlong.pgm"
expect_error 4 "$NEW/$tlong-0.pgm: the file name is 256 bytes long, out of range 1..255" \
    "--dry-run --tiles: a tile's name too long in a missing DIR" -- --dry-run --tiles 97x61 "$T/$tlong.pgm" -o "$NEW"
rm -rf "$T/new"
expect_error 4 "$NEW/$tlong-0.pgm: the file name is 256 bytes long" \
    "--tiles: a tile's name too long in a missing DIR" -- --tiles 97x61 "$T/$tlong.pgm" -o "$NEW"
[ -e "$T/new" ] && fail "a tile's name too long made $T/new" || pass "a tile's name too long makes nothing"
finish
