#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy never hangs, never clobbers what it should not and reports every
# problem before the GPU work (issue 13), checked with --dry-run on the CPU:
#  1 a FIFO (or any non-regular file) as input is refused at once, named;
#  2 a character device or FIFO as OUTPUT is written in place, not replaced;
#  3 output names: 255 bytes fine, 256 refused, empty refused, a file owned
#    by another user in a sticky directory refused - all exit 4, up front;
#  8 10,000 inputs are validated quickly (O(N log N));
#  9 every problem of a batch is reported, one line each, and nothing is
#    done; --keep-going does the good ones and exits with the worst status;
#    "dir/" as an input with -o is an input error (3);
# 10 the output's extension decides its format;
# 11 --dry-run --json prints JSON, valid for any file name;
# 12 with -k, --json accounts for every input on stdout: the plan's
#    "failed" (each input and its message), the run's "failed" count, also
#    when every input failed (no CUDA needed);
# and "-" is standard input and standard output; -V; the usage line.
#  4, 5 through the writer roicopy uses (tests/lib/imgcrop): RLIMIT_FSIZE, modes;
# (signals mid-write are in tests/roicopy/image-io.c; 6 and 7,
# netpbm's headers, in tests/roicopy/netpbm-corpus.sh.)
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

G="$SAMPLES/gray-97x61.pgm"
RGB="$SAMPLES/rgb-80x60.ppm"
RGBA="$SAMPLES/rgba-64x48.pam"
E="$EXISTING"
HANG="timeout 30"
command -v timeout >/dev/null 2>&1 || HANG=

# dry NAME ARGS...: roicopy --dry-run ARGS; stdout, stderr and status in
# $T/dry.out, $T/dry.err and $dry_rc.
dry() {
    # shellcheck disable=SC2086
    env CUDA_VISIBLE_DEVICES= $HANG "$ROICOPY" --dry-run "$@" >"$T/dry.out" 2>"$T/dry.err"
    dry_rc=$?
}

# ---- 1: inputs that are not regular files ---------------------------------
mkfifo "$T/fifo.pgm"
dry "$T/fifo.pgm" "$E"
if [ $dry_rc -eq 3 ] && [ "$(cat "$T/dry.err")" = "roicopy: $T/fifo.pgm: is a FIFO, not a regular file" ] &&
    out_dir_intact; then
    pass "a FIFO as input is refused at once, not waited on"
else
    fail "a FIFO as input (exit $dry_rc; 124: it hung)"; diag_file "$T/dry.err"
fi
expect_error 3 "roicopy: /dev/zero: is a character device, not a regular file" \
    "a character device as input is named as one" -- /dev/zero "$E"

# ---- "-": standard input and standard output -------------------------------
dry - "$OUT/new.pgm" <"$G"
if [ $dry_rc -eq 0 ] && grep -qF 'input:    - (pgm, 97x61, 1 channel' "$T/dry.out"; then
    pass "- as INPUT reads standard input"
else
    fail "- as INPUT (exit $dry_rc)"; diag_file "$T/dry.err"
fi
dry "$G" - </dev/null
if [ $dry_rc -eq 0 ] && grep -qF 'output:   - (pgm, written to standard output)' "$T/dry.out"; then
    pass "- as OUTPUT is standard output"
else
    fail "- as OUTPUT (exit $dry_rc)"; diag_file "$T/dry.out"; diag_file "$T/dry.err"
fi
# Kept in TMPDIR: one that is not there is named (the message gave the
# template as mkstemp() left it, "$T/none/roicopy-stdin.g7U32g").
saved_tmpdir=${TMPDIR-/tmp}
TMPDIR="$T/none"
export TMPDIR
expect_error 3 "roicopy: -: cannot keep standard input in $T/none (TMPDIR): No such file or directory" \
    "- with a TMPDIR that is not there names the directory" -- --dry-run - "$OUT/new.pgm" <"$G"
TMPDIR=$saved_tmpdir
mkfifo "$T/pipe"
( cat "$G" >"$T/pipe" & )
dry - "$OUT/new.pgm" <"$T/pipe"
if [ $dry_rc -eq 0 ]; then pass "- reads a pipe to its end"
else fail "- from a pipe (exit $dry_rc)"; diag_file "$T/dry.err"; fi
expect_error 2 "roicopy: -: OUTPUT - is standard output, where --timing and --json print too" \
    "OUTPUT - with --timing" -- --timing "$G" -
expect_error 2 "roicopy: -: standard input has no name for an output in -o DIR" \
    "INPUT - with -o" -- - -o "$OUT"

# ---- 2: outputs that are not regular files ---------------------------------
dry "$G" /dev/null
if [ $dry_rc -eq 0 ] && grep -qF 'output:   /dev/null (pgm, written in place: a character device)' "$T/dry.out" &&
    [ -c /dev/null ]; then
    pass "/dev/null as OUTPUT is written in place"
else
    fail "/dev/null as OUTPUT (exit $dry_rc)"; diag_file "$T/dry.out"; diag_file "$T/dry.err"
fi
mkfifo "$T/out-fifo"
dry "$G" "$T/out-fifo"
if [ $dry_rc -eq 0 ] && grep -qF "written in place: a FIFO" "$T/dry.out" && [ -p "$T/out-fifo" ]; then
    pass "a FIFO as OUTPUT is written in place"
else
    fail "a FIFO as OUTPUT (exit $dry_rc)"; diag_file "$T/dry.err"
fi

# ---- 3: output names, before any work --------------------------------------
n255=$(printf '%0251d' 0).pgm
n256=$(printf '%0252d' 0).pgm
dry "$G" "$OUT/$n255"
if [ $dry_rc -eq 0 ]; then pass "a 255-byte output name is accepted"
else fail "a 255-byte output name (exit $dry_rc)"; diag_file "$T/dry.err"; fi
expect_error 4 "the file name is 256 bytes long, out of range 1..255" \
    "a 256-byte output name is refused up front" -- "$G" "$OUT/$n256"
expect_error 4 'roicopy: "": the output name is empty' "an empty output name" -- "$G" ""
expect_error 4 "ends in '/'" "an output ending in /" -- "$G" "$OUT/new/"
# A file of another user in a sticky directory: only its owner (or the
# directory's) may replace it.  Needs a second user: as root, setpriv
# runs roicopy as nobody.
mkdir "$T/sticky" && chmod 1777 "$T/sticky" && cp "$G" "$T/sticky/theirs.pgm" &&
    chmod 644 "$T/sticky/theirs.pgm"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups "$ROICOPY" --version >/dev/null 2>&1; then
    chmod 755 "$T"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$ROICOPY" --dry-run "$G" \
        "$T/sticky/theirs.pgm" >"$T/dry.out" 2>"$T/dry.err"
    rc=$?
    if [ $rc -eq 4 ] && grep -qF "is owned by user 0 in the sticky directory $T/sticky" "$T/dry.err"; then
        pass "another user's file in a sticky directory is refused up front"
    else
        fail "sticky directory (exit $rc)"; diag_file "$T/dry.err"
    fi
    chmod 700 "$T"
else
    skip_one "sticky directory: needs root and setpriv to act as another user"
fi

# ---- 8: 10,000 inputs, validated in O(N log N) -----------------------------
mkdir "$T/many" "$T/many-out"
# 10,000 one-pixel PGMs, cut from one file by split(1): no process per file.
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "P5\n1 1\n255\n%c", 65 }' >"$T/many.cat"
(cd "$T/many" && split -b 12 -a 4 "$T/many.cat" in-)
count=$(ls "$T/many" | wc -l)
start=$(date +%s)
dry "$T"/many/in-* -o "$T/many-out"
end=$(date +%s)
frames=$(grep -c '^frame ' "$T/dry.out")
if [ "$count" -eq 10000 ] && [ $dry_rc -eq 0 ] && [ "$frames" -eq 10000 ] &&
    [ -z "$(ls -A "$T/many-out")" ]; then
    pass "10,000 inputs validated and planned (about $((end - start)) s)"
else
    fail "10,000 inputs: $count files, exit $dry_rc, $frames frames"; sed -n 1,5p "$T/dry.err"
fi
# Two of them collide in the output directory: found by sorting.
mkdir -p "$T/other" && cp "$T/many/in-aaaa" "$T/other/in-aaaa"
dry "$T"/many/in-* "$T/other/in-aaaa" -o "$T/many-out"
if [ $dry_rc -eq 4 ] && [ "$(wc -l <"$T/dry.err")" -eq 1 ] &&
    grep -qF "roicopy: $T/many-out/in-aaaa: written twice (from $T/many/in-aaaa and $T/other/in-aaaa)" "$T/dry.err" &&
    [ ! -s "$T/dry.out" ]; then
    pass "one collision among 10,001 outputs is found and named"
else
    fail "collision among many (exit $dry_rc)"; sed -n 1,5p "$T/dry.err"
fi

# ---- 9: every problem of a batch, one line each ----------------------------
mkdir "$T/adir"
printf 'P9\n' >"$T/bad-magic.pgm"
dry "$G" "$T/bad-magic.pgm" "$T/missing.pgm" "$T/adir/" "$RGB" -o "$OUT"
if [ $dry_rc -eq 3 ] && [ "$(wc -l <"$T/dry.err")" -eq 3 ] &&
    grep -qF "roicopy: $T/bad-magic.pgm: bad magic" "$T/dry.err" &&
    grep -qF "roicopy: $T/missing.pgm: No such file or directory" "$T/dry.err" &&
    grep -qF "roicopy: $T/adir/: is a directory" "$T/dry.err" &&
    [ ! -s "$T/dry.out" ] && out_dir_intact; then
    pass "three bad inputs: three lines, exit 3, nothing done"
else
    fail "batch of problems (exit $dry_rc)"; diag_file "$T/dry.err"
fi
expect_error 3 "roicopy: $T/adir/: is a directory" "dir/ as an input with -o is an input error" \
    -- "$T/adir/" -o "$OUT"
mkdir "$T/twin" && cp "$G" "$T/twin/gray-97x61.pgm"
dry --roi 90x10 "$G" "$T/bad-magic.pgm" "$RGB" "$T/twin/gray-97x61.pgm" -o "$OUT"
if [ $dry_rc -eq 4 ] && [ "$(wc -l <"$T/dry.err")" -eq 3 ] &&
    grep -qF "roicopy: $RGB: ROI 90x10+0+0 is partly outside" "$T/dry.err" &&
    grep -qF "roicopy: $T/bad-magic.pgm: bad magic" "$T/dry.err" &&
    grep -qF "roicopy: $OUT/gray-97x61.pgm: written twice" "$T/dry.err"; then
    pass "ROI, header and collision problems together: one line each, exit 4 (the worst)"
else
    fail "mixed problems (exit $dry_rc)"; diag_file "$T/dry.err"
fi
dry --keep-going "$G" "$T/bad-magic.pgm" "$RGB" -o "$OUT"
if [ $dry_rc -eq 3 ] && [ "$(wc -l <"$T/dry.err")" -eq 1 ] &&
    [ "$(grep -c '^output: ' "$T/dry.out")" -eq 2 ] &&
    grep -qF "pipeline: 2 frames" "$T/dry.out"; then
    pass "--keep-going plans the good frames and exits 3"
else
    fail "--keep-going (exit $dry_rc)"; diag_file "$T/dry.out"; diag_file "$T/dry.err"
fi
dry -k "$T/bad-magic.pgm" "$T/adir" "$G" -o "$EXISTING/sub"
if [ $dry_rc -eq 4 ] && [ ! -s "$T/dry.out" ]; then pass "-k with an -o DIR that cannot be made: exit 4"
else fail "-k with an -o DIR that cannot be made (exit $dry_rc)"; diag_file "$T/dry.err"; fi
# The run ends before the inputs are checked: no plan, no JSON.
dry -k --json "$T/bad-magic.pgm" "$G" -o "$EXISTING/sub"
if [ $dry_rc -eq 4 ] && [ ! -s "$T/dry.out" ]; then pass "-k --json with an -o DIR that cannot be made: exit 4, no JSON"
else fail "-k --json with an -o DIR that cannot be made (exit $dry_rc)"; diag_file "$T/dry.out"; fi

# ---- 10: the extension decides the format ----------------------------------
expect_error 2 "roicopy: $OUT/x.ppm: ppm (from the extension) holds 3 channels of 8- or 16-bit samples, not 1 channel of 8-bit samples; pgm, pam" \
    "a PGM into out.ppm is a usage error naming the formats that can" -- "$G" "$OUT/x.ppm"
expect_error 2 "pgm (from the extension) holds 1 channel" "RGB into .pgm" -- "$RGB" "$OUT/x.pgm"
head -c 48 /dev/zero >"$T/f32.raw"
expect_error 2 "not 1 channel of float 32-bit samples;" "floats into .pgm" \
    -- --raw 4x3x1 --depth 32 "$T/f32.raw" "$OUT/x.pgm"
for c in "x.pam:(pam, GRAYSCALE)" "x.PAM:(pam, GRAYSCALE)" "x.raw:(raw)" "noext:(pgm)"; do
    name=${c%%:*} want=${c#*:}
    dry "$G" "$OUT/$name"
    if [ $dry_rc -eq 0 ] && grep -qF "output:   $OUT/$name $want" "$T/dry.out"; then
        pass "output $name: $want"
    else
        fail "output $name (exit $dry_rc)"; diag_file "$T/dry.out"; diag_file "$T/dry.err"
    fi
done
dry --format pam "$G" "$OUT/x.ppm"
if [ $dry_rc -eq 0 ] && grep -qF "output:   $OUT/x.ppm (pam, GRAYSCALE)" "$T/dry.out"; then
    pass "--format wins over the extension"
else fail "--format over the extension (exit $dry_rc)"; fi

# ---- 11: --dry-run --json, for any file name -------------------------------
odd=$(printf 'odd\377"\\\033name.pgm')
cp "$RGBA" "$T/$odd"
dry --json --roi 8x4+1+2 "$T/$odd" "$OUT/new.pam"
json_ok=
if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
f = d["frames"][0]
assert d["dry_run"] is True and len(d["frames"]) == 1, d
assert f["input"].endswith("odd\u00ff\"\\\u001bname.pgm"), f["input"]
assert f["tupltype"] == "RGB_ALPHA" and f["channels"] == 4, f
assert f["roi"] == {"width": 8, "height": 4, "x": 1, "y": 2}, f["roi"]
assert f["output_format"] == "pam" and f["bytes_each_way"] == 128, f
' "$T/dry.out" 2>"$T/py.err" && json_ok=yes
elif command -v jq >/dev/null 2>&1; then
    jq -e '.frames[0].roi.width == 8' "$T/dry.out" >/dev/null 2>"$T/py.err" && json_ok=yes
else
    json_ok=skip
fi
if [ $dry_rc -ne 0 ]; then
    fail "--dry-run --json (exit $dry_rc)"; diag_file "$T/dry.err"
elif [ "$json_ok" = skip ]; then
    skip_one "--dry-run --json: neither python3 nor jq to parse it"
elif [ "$json_ok" = yes ]; then
    pass "--dry-run --json is JSON; a non-UTF-8 name is \\u00XX-escaped"
else
    fail "--dry-run --json is not the JSON wanted"; diag_file "$T/py.err"; diag_file "$T/dry.out"
fi
# The same name in a message is escaped, not printed raw.
printf 'P9\n' >"$T/$odd.bad"
dry "$T/$odd.bad" "$E"
if [ $dry_rc -eq 3 ] && grep -qF 'odd\xff"\\\x1bname.pgm.bad: bad magic' "$T/dry.err"; then
    pass "an odd file name is escaped in messages"
else
    fail "escaped names (exit $dry_rc)"; od -c "$T/dry.err" | sed -n 1,4p
fi

# ---- 12: -k --json, every input accounted for on stdout --------------------
# kjson DESC STATUS PYTHON ARGS...: roicopy ARGS, without a device, exits
# STATUS and its stdout is one JSON object, d, for which PYTHON's asserts
# hold; e holds the lines of stderr without "roicopy: ", n the names
# $KGOOD and $KSHORT.
KGOOD="$T/good.pgm" KSHORT="$T/short.pgm" KODD="$T/$odd.bad"
export KGOOD KSHORT
printf 'P5\n4 4\n255\n0123456789abcdef' >"$KGOOD"
printf 'P5\n4 4\n255\n' >"$KSHORT" # a header, no pixels
kjson() {
    desc=$1 want=$2 py=$3
    shift 3
    env CUDA_VISIBLE_DEVICES= $HANG "$ROICOPY" "$@" >"$T/k.out" 2>"$T/k.err"
    rc=$?
    if ! command -v python3 >/dev/null 2>&1; then
        skip_one "$desc: no python3 to parse the JSON"
        return
    fi
    if [ $rc -eq "$want" ] && python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
e = [l[len("roicopy: "):] for l in open(sys.argv[2], encoding="utf-8").read().splitlines()]
n = {k: os.environ[k] for k in ("KGOOD", "KSHORT")}
exec(sys.argv[3])
' "$T/k.out" "$T/k.err" "$py" 2>"$T/py.err"; then
        pass "$desc (exit $want)"
    else
        fail "$desc (exit $rc, wanted $want)"
        diag_file "$T/py.err"; diag_file "$T/k.out"; diag_file "$T/k.err"
    fi
}
kjson "--dry-run --json -k: \"failed\" names the bad input with its message, \"frames\" the good" 3 '
assert e == [n["KSHORT"] + ": needs 16 bytes of pixels, the file has 0 (after a header of 11 bytes)"], e
assert d["failed"] == [{"input": n["KSHORT"], "error": e[0]}], d["failed"]
assert [f["input"] for f in d["frames"]] == [n["KGOOD"]], d["frames"]
' --dry-run --json -k "$KGOOD" "$KSHORT" -o "$T/k-new"
# Any name and message: the odd name of 11 is \u00XX in "input", escaped
# as on stderr in "error".
kjson "--dry-run --json -k, every input bad: the plan, no frames, each input in \"failed\"" 3 '
assert len(e) == 2 and e[1].endswith("odd\\xff\"\\\\\\x1bname.pgm.bad: bad magic: not a binary PGM (P5), PPM (P6) or PAM (P7) file (use --raw for headerless data)"), e
assert d["dry_run"] is True and d["frames"] == [] and d["skipped"] == [], d
assert d["failed"][0] == {"input": n["KSHORT"], "error": e[0]}, d["failed"]
assert d["failed"][1]["input"].endswith("odd\u00ff\"\\\u001bname.pgm.bad"), d["failed"]
assert d["failed"][1]["error"] == e[1] and len(d["failed"]) == 2, d["failed"]
' --dry-run --json -k "$KSHORT" "$KODD" -o "$T/k-new"
kjson "--json -k, every input bad, no device: {\"frames\":0,\"failed\":2,\"skipped\":0}" 3 '
assert d == {"frames": 0, "failed": 2, "skipped": 0}, d
assert len(e) == 2, e
' --json -k "$KSHORT" "$KODD" -o "$T/k-made"
if [ -d "$T/k-made" ] && [ -z "$(ls -A "$T/k-made")" ] && [ ! -e "$T/k-new" ]; then
    pass "-k, every input bad: the -o DIR made, empty, as the plan says (--dry-run made none)"
else
    fail "-k, every input bad: -o DIR"; ls -la "$T" | sed 's/^/#   /'
fi
kjson "--json -k INPUT OUTPUT, the input bad, no device: \"failed\":1" 3 '
assert d == {"frames": 0, "failed": 1, "skipped": 0}, d
' --json -k "$KSHORT" "$OUT/new.pgm"
out_dir_intact && pass "... and OUTPUT is not written" || fail "-k INPUT OUTPUT: $OUT changed"

# ---- the command line ------------------------------------------------------
"$ROICOPY" --frob "$G" "$E" >"$T/o" 2>"$T/e"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 2 ] &&
    [ "$(sed -n 1p "$T/e")" = "roicopy: unknown option --frob" ] &&
    sed -n 2p "$T/e" | grep -q '^usage: roicopy \[OPTIONS\] INPUT OUTPUT' && [ ! -s "$T/o" ]; then
    pass "an unknown option: the message and the usage line on stderr, exit 2"
else
    fail "unknown option (exit $rc)"; diag_file "$T/e"
fi
if v=$("$ROICOPY" -V 2>"$T/e") && [ ! -s "$T/e" ] &&
    [ "$v" = "$("$ROICOPY" --version)" ]; then
    pass "-V is --version ($v)"
else
    fail "-V: '$v'"
fi
if "$ROICOPY" --help >"$T/help" 2>/dev/null &&
    grep -q -- '--keep-going' "$T/help" && grep -q 'INPUT - is standard input' "$T/help" &&
    grep -q "extension" "$T/help"; then
    pass "--help tells of -, --keep-going and the extension rule"
else
    fail "--help"; diag_file "$T/help"
fi
# ---- 4 and 5 through the writer roicopy uses (tests/lib/imgcrop, on the CPU) ---
"$IMGCROP" "$G" 40x30+10+5 "$T/ref.pgm"
printf 'precious\n' >"$T/mode600.pgm" && chmod 600 "$T/mode600.pgm"
printf 'precious\n' >"$T/mode444.pgm" && chmod 444 "$T/mode444.pgm"
"$IMGCROP" "$G" 40x30+10+5 "$T/mode600.pgm" && "$IMGCROP" "$G" 40x30+10+5 "$T/mode444.pgm"
if [ "$(stat -c %a "$T/mode600.pgm")" = 600 ] && [ "$(stat -c %a "$T/mode444.pgm")" = 444 ] &&
    cmp -s "$T/mode600.pgm" "$T/ref.pgm" && cmp -s "$T/mode444.pgm" "$T/ref.pgm"; then
    pass "replaced outputs keep their modes (0600, 0444)"
else
    fail "modes: $(stat -c %a "$T/mode600.pgm") $(stat -c %a "$T/mode444.pgm")"
fi
( umask 027; "$IMGCROP" "$G" 40x30+10+5 "$T/new027.pgm" )
if [ "$(stat -c %a "$T/new027.pgm")" = 640 ]; then pass "a new output is 0666 & ~umask (0640)"
else fail "new output mode $(stat -c %a "$T/new027.pgm")"; fi
mkdir "$T/fsize" && printf 'precious\n' >"$T/fsize/out.pam"
"$MKSAMPLES" image pam 300x200x4 255 16 "$T/big.pam"
( ulimit -f 8; exec "$IMGCROP" "$T/big.pam" 300x200+0+0 "$T/fsize/out.pam" ) 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "cannot write: File too large" "$T/err" && [ "$(ls -A "$T/fsize")" = out.pam ] &&
    [ "$(cat "$T/fsize/out.pam")" = precious ]; then
    pass "past RLIMIT_FSIZE: EFBIG (SIGXFSZ ignored), old output kept, no temporary file"
else
    fail "RLIMIT_FSIZE (exit $rc)"; diag_file "$T/err"; ls -A "$T/fsize" | sed 's/^/#   /'
fi
finish
