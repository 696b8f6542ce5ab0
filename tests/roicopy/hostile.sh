#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy under hostile and careless use, on the CPU (no GPU needed; the
# copies themselves are in hostile-gpu.sh):
#  - an OUTPUT naming a descriptor (/dev/stdout, /dev/fd/N, a link to it)
#    is written into it, never renamed over; the plan says so; a socket,
#    which no open() opens, is refused, and so is an immutable or
#    append-only file, which no rename replaces;
#  - signals ignored at start (nohup, background jobs) stay ignored; a
#    SIGTERM mid-batch leaves no temporary file and no message;
#  - --page, --raw and -0 are checked with --tiles too, and --page is cut;
#  - forged TIFF sizes are refused for every compression before anything
#    is allocated; a PackBits run across rows decodes as tifftopnm does;
#  - corrupt PNG chunks, IDATs split by another chunk, a second IHDR or
#    a chunk type not of letters after the IDATs (libpng agreeing) and
#    TIFF strips past the end are found by --dry-run,
#    and so are TIFF strips of no bytes or (uncompressed) too few, which
#    libtiff would fill from outside the strip; a compressed strip is
#    decoded from its declared bytes alone; min-is-black of 3 samples is
#    refused, not read as RGB; so are a Predictor libtiff cannot undo,
#    fax compression of 8-bit samples and an orientation other than the
#    rows as stored; a tag libtiff ignores does not fail the pixels;
#  - "-" as OUTPUT is checked as /dev/stdout is; closed standard
#    descriptors are never taken by a file roicopy opens, and standard
#    input closed is said so; --timing/--json refuse standard output by
#    any name;
#  - a failed write to standard output is exit 4;
#  - netpbm maxvals are rescaled into PNG/TIFF as pamdepth/pnmtopng do,
#    and kept netpbm to netpbm; samples above maxval are refused, as
#    netpbm refuses them; tuple types PNG/TIFF would misread are refused;
#  - a batch ends at its first bad frame and tells that one, even when a
#    later one fails first (ROICOPY_IO_ONLY; the ring in hostile-gpu.sh);
#  - --files-from is capped; misleading messages name the real problem;
#    no output may replace the list;
#  - a frame larger than the machine's memory is refused before the GPU
#    (a sparse file); an output that is a symbolic link is replaced;
#  - roicopy(1) renders without stray markup.
# The write path is driven through tests/roicopy/codec-tool (the same
# image_write_atomic and codecs roicopy calls).  netpbm's tools are the
# oracle where present; their cases skip without them.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"
. "${top_srcdir:-.}/tests/lib/hostile-files.sh"
CODEC_TOOL="$top_builddir/tests/roicopy/codec-tool"
G="$SAMPLES/gray-97x61.pgm"

# ---- 1: descriptors as OUTPUT ---------------------------------------------
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$G" /dev/stdout >"$T/plan" 2>"$T/err"
check "--dry-run G /dev/stdout plans a write into descriptor 1, not a replacement" \
    grep -q "^output:   /dev/stdout (pgm, written into descriptor 1 (standard output), never replaced)" "$T/plan"
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run --json "$G" /dev/fd/1 >"$T/plan" 2>"$T/err"
check "--dry-run --json: /dev/fd/1 is written \"into its descriptor\"" \
    grep -q '"written": "into its descriptor"' "$T/plan"
ln -s /dev/stdout "$T/link.pgm"
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$G" "$T/link.pgm" >"$T/plan" 2>"$T/err"
check "a link to /dev/stdout is a descriptor too" grep -q "written into descriptor 1" "$T/plan"
expect_error 4 "/dev/fd/9: names descriptor 9, which is not open" \
    "/dev/fd/9 with descriptor 9 closed is refused" -- --dry-run "$G" /dev/fd/9
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run --tiles 48x30 --stack /dev/fd/1 "$G" >"$T/plan" 2>"$T/err"
check "--stack /dev/fd/1 is written into descriptor 1, as the plan says" \
    grep -q "^stack:   /dev/fd/1 (4 pgm images, written into descriptor 1 (standard output), never replaced)" "$T/plan"
# The write itself (image_write_atomic, as roicopy calls it after the GPU).
rm -f "$T/link.pgm"
ln -s /dev/stdout "$T/link.pam"
"$CODEC_TOOL" convert "$G" "$T/link.pam" >"$T/via-link" 2>"$T/err"
"$CODEC_TOOL" convert "$G" "$T/direct.pam" 2>>"$T/err"
check "an output linked to /dev/stdout: the bytes go to standard output, the link stays" \
    eval '[ -L "$T/link.pam" ] && cmp -s "$T/via-link" "$T/direct.pam"'
"$CODEC_TOOL" convert "$G" /dev/stdout >"$T/via-dev" 2>"$T/err"
check "/dev/stdout redirected to a file: written into it" cmp -s "$T/via-dev" "$T/direct.pam"
"$CODEC_TOOL" convert "$G" /dev/fd/7 7>"$T/via-fd7" 2>"$T/err"
check "/dev/fd/7: written into descriptor 7" cmp -s "$T/via-fd7" "$T/direct.pam"
rm -f "$T/link.pam" "$T/via-"* "$T/direct.pam"

# "-" is descriptor 1 as /dev/stdout is: closed, it is refused before any
# CUDA call, whatever else roicopy opens (the spool of standard input
# would otherwise take descriptor 1 and receive the image).
# closed_std DESCRIPTION STATUS TEXT REDIRECTION ARGS...: roicopy ARGS
# with REDIRECTION (>&- or <&-) exits STATUS and says TEXT, on one line.
closed_std() {
    desc=$1 want=$2 text=$3 redir=$4
    shift 4
    case $redir in
    '>&-') "$ROICOPY" "$@" >&- 2>"$T/err" ;;
    '<&-') "$ROICOPY" "$@" <&- >"$T/stdout" 2>"$T/err" ;;
    esac
    rc=$?
    if [ $rc -eq "$want" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
        grep -qF -- "$text" "$T/err"; then
        pass "$desc (exit $want)"
    else
        fail "$desc: exit $rc"
        diag_file "$T/err"
    fi
}
closed_std "OUTPUT - with standard output closed" 4 \
    "roicopy: -: names descriptor 1, which is not open" '>&-' "$G" -
closed_std "--dry-run, OUTPUT - with standard output closed" 4 \
    "roicopy: -: names descriptor 1, which is not open" '>&-' --dry-run "$G" -
closed_std "- - with standard output closed: the spool of standard input does not become the output" 4 \
    "roicopy: -: names descriptor 1, which is not open" '>&-' - - <"$G"
closed_std "--stack - with standard output closed" 4 \
    "roicopy: -: names descriptor 1, which is not open" '>&-' --tiles 48x30 --stack - "$G"
closed_std "INPUT - with standard input closed says so" 3 \
    "roicopy: -: standard input: Bad file descriptor" '<&-' --dry-run - "$OUT/new.pgm"
closed_std "--files-from - with standard input closed says so" 3 \
    "roicopy: -: --files-from: Bad file descriptor" '<&-' --dry-run --files-from - -o "$OUT"
# --timing and --json print on standard output: an OUTPUT that is
# descriptor 1 by any name would mix the image into them.
ln -s /dev/stdout "$T/link.pgm"
expect_error 2 "roicopy: /dev/stdout: OUTPUT /dev/stdout is standard output, where --timing and --json print too" \
    "--json with OUTPUT /dev/stdout" -- --json "$G" /dev/stdout
expect_error 2 "roicopy: /dev/fd/1: OUTPUT /dev/fd/1 is standard output, where --timing and --json print too" \
    "--timing with OUTPUT /dev/fd/1" -- --timing "$G" /dev/fd/1
expect_error 2 "roicopy: $T/link.pgm: OUTPUT $T/link.pgm is standard output, where --timing" \
    "--timing with an OUTPUT linked to /dev/stdout" -- --timing "$G" "$T/link.pgm"
expect_error 2 "roicopy: -: OUTPUT - is standard output, where --timing and --json print too" \
    "--json with OUTPUT -" -- --json "$G" -
rm -f "$T/link.pgm"
# ... and an output of -o DIR that is standard output: a link to it in
# DIR, or DIR/1 of -o /dev/fd (the image went into the JSON, exit 0).
mkdir "$T/linkdir"
ln -s /dev/stdout "$T/linkdir/gray-97x61.pgm"
expect_error 2 "roicopy: $T/linkdir/gray-97x61.pgm: OUTPUT $T/linkdir/gray-97x61.pgm is standard output, where --timing" \
    "--json with an output of -o DIR linked to /dev/stdout" -- --json "$G" "$SAMPLES/rgb-80x60.ppm" -o "$T/linkdir"
rm -rf "$T/linkdir"
# An output written in place is an output like any other: two inputs of
# one name into a FIFO of -o DIR were both written into it (their streams
# run together), and OUTPUT - appended to the input itself (>> IN) was
# taken (the input grew by its own crop).
mkdir "$T/fifodir" "$T/x" "$T/y"
cp "$G" "$T/x/g.pgm"
cp "$G" "$T/y/g.pgm"
if mkfifo "$T/fifodir/g.pgm" 2>/dev/null; then
    expect_error 4 "roicopy: $T/fifodir/g.pgm: written twice (from $T/x/g.pgm and $T/y/g.pgm)" \
        "two inputs into one FIFO of -o DIR" -- --dry-run "$T/x/g.pgm" "$T/y/g.pgm" -o "$T/fifodir"
else
    skip_one "two inputs into one FIFO: no mkfifo"
fi
# A socket cannot be opened as a file (open() says ENXIO, as a shell's
# > does): it was planned "written in place: a socket", and every run
# failed at the write, after the GPU copies.
if command -v python3 >/dev/null 2>&1 &&
    python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock.pgm" 2>/dev/null; then
    expect_error 4 "roicopy: $T/sock.pgm: is a socket; roicopy writes regular files (replaced), character devices and FIFOs (written in place)" \
        "a socket as OUTPUT is refused before the GPU" -- --dry-run "$G" "$T/sock.pgm"
    expect_error 4 "roicopy: $T/sock.pgm: is a socket" \
        "a socket as --stack is refused" -- --dry-run --tiles 48x30 --stack "$T/sock.pgm" "$G"
    rm -f "$T/sock.pgm"
else
    skip_one "a socket as OUTPUT: no python3 to make one"
    skip_one "a socket as --stack: no python3 to make one"
fi
# An existing output that is immutable or append-only (chattr +i, +a)
# cannot be renamed over, not even by root: it passed every check and the
# run failed at its rename, after the GPU copies.
cp "$G" "$T/imm.pgm"
if chattr +i "$T/imm.pgm" 2>/dev/null; then
    expect_error 4 "roicopy: $T/imm.pgm: is immutable (chattr +i): it cannot be replaced" \
        "an immutable OUTPUT is refused before the GPU" -- --dry-run "$G" "$T/imm.pgm"
    chattr -i "$T/imm.pgm"
else
    skip_one "an immutable OUTPUT: chattr +i is not allowed here"
fi
if chattr +a "$T/imm.pgm" 2>/dev/null; then
    expect_error 4 "roicopy: $T/imm.pgm: is append-only (chattr +a): it cannot be replaced" \
        "an append-only --stack is refused before the GPU" -- --dry-run --tiles 48x30 --stack "$T/imm.pgm" "$G"
    chattr -a "$T/imm.pgm"
else
    skip_one "an append-only --stack: chattr +a is not allowed here"
fi
rm -f "$T/imm.pgm"
# appended DESC ARGS...: roicopy ARGS, standard output appended to the
# input $T/x/g.pgm, refuses it (exit 4) and the input keeps its bytes.
appended() {
    desc=$1
    shift
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" "$@" >>"$T/x/g.pgm" 2>"$T/err"
    rc=$?
    if [ $rc -eq 4 ] && grep -qF "roicopy: -: is also an input ($T/x/g.pgm)" "$T/err" &&
        cmp -s "$T/x/g.pgm" "$G"; then
        pass "$desc appending to the input is refused; the input is intact (exit 4)"
    else
        fail "$desc appending to the input: exit $rc"
        diag_file "$T/err"
    fi
}
appended "OUTPUT -" --roi 8x8 "$T/x/g.pgm" -
appended "--stack -" --tiles 8x8 --stack - "$T/x/g.pgm"
rm -rf "$T/fifodir" "$T/x" "$T/y"

# ---- 2: ignored signals stay ignored --------------------------------------
# roicopy blocks reading --files-from from a FIFO; a signal its parent
# ignored must not end it.  (Opening the FIFO for writing returns once
# roicopy has opened it, after its handlers are installed.)
ignored_signal() {
    sig=$1
    rm -f "$T/names"
    mkfifo "$T/names" || { skip_one "SIG$sig: no mkfifo"; return; }
    (trap '' "$sig"; exec "$ROICOPY" --dry-run --files-from "$T/names" -o "$OUT") \
        >"$T/stdout" 2>"$T/err" &
    pid=$!
    exec 8>"$T/names"
    kill -s "$sig" "$pid" 2>/dev/null
    sleep 1
    # In a subshell: with roicopy dead, SIGPIPE ends only that.
    (printf '%s\n' "$G" >&8) 2>/dev/null
    exec 8>&-
    wait "$pid"
    rc=$?
    if [ $rc -eq 0 ] && grep -q "^input:    $G" "$T/stdout"; then
        pass "SIG$sig ignored at start stays ignored (the batch finishes)"
    else
        fail "SIG$sig ignored at start: exit $rc"
        diag_file "$T/err"
    fi
}
ignored_signal HUP
ignored_signal INT
# And one that is not ignored still removes nothing and ends the run.
rm -f "$T/names"
mkfifo "$T/names"
"$ROICOPY" --dry-run --files-from "$T/names" -o "$OUT" >/dev/null 2>&1 &
pid=$!
exec 8>"$T/names"
kill -s TERM "$pid"
wait "$pid" 2>/dev/null
rc=$?
exec 8>&-
check "SIGTERM not ignored still ends the run (exit $rc)" test "$rc" -eq 143

# SIGTERM in the middle of a batch's writes (ROICOPY_IO_ONLY: no GPU):
# no temporary file outlives roicopy and nothing is said.  A writer
# thread used to make its next temporary file while the handler removed
# the others, and another to report "cannot write: No such file or
# directory" for the one removed under it.  A race: up to 20 tries
# (about 1 in 3 failed before).
mkdir "$T/sigin" "$T/sigout"
{ printf 'P5\n2000 2000\n255\n'; head -c 4000000 /dev/zero; } >"$T/sigin/f00.pgm"
for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 \
    23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47; do
    ln "$T/sigin/f00.pgm" "$T/sigin/f$i.pgm"
done
why=
for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    rm -rf "$T/sigout/o"
    ROICOPY_IO_ONLY=1 "$ROICOPY" -q --threads 8 "$T"/sigin/*.pgm -o "$T/sigout/o" \
        >/dev/null 2>"$T/err" &
    pid=$!
    n=0 # SIGTERM once 4 outputs are there, with the writers busy
    while [ "$(ls "$T/sigout/o" 2>/dev/null | wc -l)" -lt 4 ] && [ $n -lt 3000 ]; do
        sleep 0.01 2>/dev/null || sleep 1
        n=$((n + 1))
    done
    kill -s TERM "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    left=$(ls -A "$T/sigout/o" | grep '^\.' | tr '\n' ' ')
    if [ -n "$left" ] || [ -s "$T/err" ] || { [ $rc -ne 143 ] && [ $rc -ne 0 ]; }; then
        why="try $try: exit $rc, temporary files left: '$left'"
        break
    fi
done
if [ -z "$why" ]; then
    pass "SIGTERM mid-batch: no temporary file left, nothing said (20 tries)"
else
    fail "SIGTERM mid-batch: $why"
    diag_file "$T/err"
fi
rm -rf "$T/sigin" "$T/sigout"

# ---- 3: --page and the option checks with --tiles --------------------------
expect_error 3 "no page 1: a netpbm file has one page" "--tiles --page 1 of a PGM is cut from page 1, which is not there" -- \
    --dry-run --tiles 10x10 --page 1 "$G" -o "$OUT"
expect_error 2 "--page 1: raw inputs have one page" "--tiles --page 1 --raw" -- \
    --dry-run --tiles 9x11 --page 1 --raw 45x33x3 "$SAMPLES/rgb-45x33x3.raw" -o "$OUT"
expect_error 2 "-0 needs --files-from" "--tiles -0 without --files-from" -- \
    --dry-run --tiles 10x10 -0 "$G" -o "$OUT"
expect_error 2 "--depth needs --raw" "--roi twice --depth without --raw" -- \
    --dry-run --roi 4x4 --roi 5x5 --depth 16 "$G" --stack "$OUT/s.pgm"
if has tiff && have pnmtotiff && have tiffcp; then
    pnmtotiff "$SAMPLES/rgb-80x60.ppm" >"$T/p0.tif" 2>/dev/null
    pnmtotiff "$G" >"$T/p1.tif" 2>/dev/null
    tiffcp "$T/p0.tif" "$T/p1.tif" "$T/p0.tif" "$T/three.tif" 2>/dev/null
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run --tiles 10x10 --page 1 "$T/three.tif" -o "$OUT" >"$T/plan" 2>"$T/err"
    check "--tiles --page 1 of a 3-page TIFF cuts page 1 (97x61 gray)" \
        grep -q "^input:   $T/three.tif (tiff, 97x61, 1 byte a pixel)" "$T/plan"
    expect_error 3 "no page 7: the file has 3 pages" "--tiles --page 7 of a 3-page TIFF" -- \
        --dry-run --tiles 10x10 --page 7 "$T/three.tif" -o "$OUT"
else
    skip_one "--tiles --page of a TIFF: no libtiff, pnmtotiff or tiffcp"
    skip_one "--tiles --page 7: no libtiff, pnmtotiff or tiffcp"
fi

# ---- 4: forged TIFF sizes, every compression ------------------------------
if has tiff; then
    for comp in 5:LZW 32773:PackBits 8:deflate 1:none; do
        { tiff_head 1000000 1000000 32 3 "${comp%%:*}" 1000000 16
          b 128 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1; } >"$T/forged.tif"
        expect_error 3 "cannot hold 1000000x1000000 pixels of 4 bytes: truncated or forged" \
            "a 150-byte ${comp#*:} TIFF claiming 1000000x1000000 float is refused before any allocation" -- \
            --dry-run "$T/forged.tif" "$OUT/new.tif"
    done
else
    skip_one "forged TIFF sizes: built without TIFF support"
fi

# ---- 5 and 6: corrupt pixel data; PackBits across rows ---------------------
if has png; then
    "$CODEC_TOOL" convert "$SAMPLES/rgb-80x60.ppm" "$T/good.png"
    size=$(wc -c <"$T/good.png")
    # An IDAT byte flipped (its CRC no longer matches).
    cp "$T/good.png" "$T/badcrc.png"
    printf '\377' | dd of="$T/badcrc.png" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
    expect_error 3 "chunk IDAT at byte 33: CRC error" "--dry-run finds an IDAT CRC error" -- \
        --dry-run "$T/badcrc.png" "$OUT/new.png"
    head -c $((size - 12)) "$T/good.png" >"$T/noiend.png"
    expect_error 3 "before its IEND chunk" "--dry-run finds a PNG without IEND" -- \
        --dry-run "$T/noiend.png" "$OUT/new.png"
    head -c $((size / 2)) "$T/good.png" >"$T/half.png"
    expect_error 3 "truncated: chunk IDAT at byte 33 claims" "--dry-run finds a short IDAT" -- \
        --dry-run "$T/half.png" "$OUT/new.png"
    expect_error 3 "$T/half.png: truncated" "--dry-run -k: the bad frame is reported, the good ones planned" -- \
        --dry-run "$T/half.png" "$T/good.png" -o "$OUT"
    # IDAT chunks split by another chunk, every length and CRC right: a
    # tEXt between the two IDATs of good.png (the stream unfinished: libpng
    # fails with "Not enough image data" only when decoding), or after
    # them followed by an empty IDAT (libpng decodes it, warning "Too many
    # IDATs found").  The specification wants the IDATs consecutive: both
    # are refused from the chunks alone, in --dry-run and in a real run.
    # tEXt "Comment" "x" and an empty IDAT, with their CRCs.
    text_chunk() { b 0 0 0 9; printf 'tEXtComment\000x'; b 215 244 116 8; }
    empty_idat() { b 0 0 0 0; printf IDAT; b 53 175 6 30; }
    idat2=$((33 + 12 + $(od -An -tu1 -j33 -N4 "$T/good.png" |
        awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')))
    { head -c $idat2 "$T/good.png"; text_chunk; tail -c +$((idat2 + 1)) "$T/good.png"; } >"$T/split.png"
    { head -c $((size - 12)) "$T/good.png"; text_chunk; empty_idat; tail -c 12 "$T/good.png"; } >"$T/late.png"
    expect_error 3 "$T/split.png: chunk IDAT at byte $((idat2 + 21)) follows chunk tEXt at byte $idat2, after the image data: the PNG specification requires consecutive IDAT chunks" \
        "--dry-run refuses IDATs split by a tEXt chunk, naming both" -- --dry-run "$T/split.png" "$OUT/new.png"
    expect_error 3 "$T/split.png: chunk IDAT at byte" \
        "... and so does a real run, before the GPU" -- "$T/split.png" "$OUT/new.png"
    expect_error 3 "$T/late.png: chunk IDAT at byte $((size + 9)) follows chunk tEXt" \
        "... an IDAT after the stream and a tEXt too" -- --dry-run "$T/late.png" "$OUT/new.png"
    "$ROICOPY" --dry-run -k "$T/split.png" "$T/good.png" -o "$OUT" >"$T/plan" 2>"$T/err"
    rc=$?
    check "... -k names it, plans the good frame and exits 3" eval \
        '[ $rc -eq 3 ] && grep -q "split.png: chunk IDAT at byte" "$T/err" && grep -q "good.png" "$T/plan" && ! grep -q "split.png" "$T/plan"'
    # After the IDATs, a second IHDR (good.png's own, bytes 8-32) or an
    # empty chunk of type "ab1$" (CRCs right): png_read_end() refuses both
    # ("IHDR: out of place", "invalid chunk type"), so they failed only
    # when the pixels were decoded, after --dry-run had passed them.
    { head -c $((size - 12)) "$T/good.png"; tail -c +9 "$T/good.png" | head -c 25
        tail -c 12 "$T/good.png"; } >"$T/ihdr2.png"
    { head -c $((size - 12)) "$T/good.png"; b 0 0 0 0; printf 'ab1$'; b 19 211 179 87
        tail -c 12 "$T/good.png"; } >"$T/badtype.png"
    expect_error 3 "$T/ihdr2.png: chunk IHDR at byte $((size - 12)): out of place (a PNG has one IHDR, its first chunk)" \
        "--dry-run refuses an IHDR after the IDATs" -- --dry-run "$T/ihdr2.png" "$OUT/new.png"
    expect_error 3 "$T/badtype.png: chunk ab1\$ at byte $((size - 12)): invalid chunk type (4 ASCII letters)" \
        "--dry-run refuses a chunk type of other bytes than letters after the IDATs" -- \
        --dry-run "$T/badtype.png" "$OUT/new.png"
    expect_error 3 "$T/badtype.png: chunk ab1\$ at byte" \
        "... and so does a real run, before the GPU" -- "$T/badtype.png" "$OUT/new.png"
    if have pngtopam; then
        why=
        pngtopam "$T/ihdr2.png" >/dev/null 2>"$T/err" && why="$why ihdr2.png decoded;"
        grep -q "IHDR: out of place" "$T/err" || why="$why ihdr2.png: no 'IHDR: out of place';"
        pngtopam "$T/badtype.png" >/dev/null 2>"$T/err" && why="$why badtype.png decoded;"
        grep -q "invalid chunk type" "$T/err" || why="$why badtype.png: no 'invalid chunk type';"
        verdict "libpng (pngtopam) refuses both when it decodes" "libpng on chunks after the IDATs"
    else
        skip_one "libpng on chunks after the IDATs: no pngtopam"
    fi
    if have pngtopam; then
        why=
        pngtopam "$T/good.png" >/dev/null 2>"$T/err" || why="$why good.png refused;"
        pngtopam "$T/split.png" >/dev/null 2>"$T/err" && why="$why split.png decoded;"
        grep -q "Not enough image data" "$T/err" || why="$why split.png: no 'Not enough image data';"
        pngtopam "$T/late.png" >/dev/null 2>"$T/err"
        grep -q "Too many IDATs found" "$T/err" || why="$why late.png: no 'Too many IDATs found';"
        verdict "libpng (pngtopam) finds both: a fatal error and its benign error" "libpng on split IDATs"
    else
        skip_one "libpng on split IDATs: no pngtopam"
    fi
else
    skip_one "PNG chunk checks: built without PNG support"
fi
if has tiff; then
    { tiff_head 4 2 8 1 1 2 8; b 1 2 3 4; } >"$T/shortstrip.tif"
    expect_error 3 "strip 0 (8 bytes at byte 134) lies past the end of the file (138 bytes)" \
        "--dry-run finds a TIFF strip past the end" -- --dry-run "$T/shortstrip.tif" "$OUT/new.pgm"
    # Strips of 2 rows of 10 bytes (the last of 1 row) whose byte counts
    # say fewer bytes than the rows need: libtiff would read the rows from
    # the strip's offset all the same (0 for a strip without an entry:
    # the file's header as pixels).
    tiff_strips 10 7 1 1 2 20 20 0 10 >"$T/zero.tif"
    expect_error 3 "$T/zero.tif: strip 2 has a byte count of 0: no data" \
        "--dry-run finds a TIFF strip of 0 bytes" -- --dry-run "$T/zero.tif" "$OUT/new.pgm"
    tiff_strips 10 7 1 1 2 20 20 1 10 >"$T/short.tif"
    expect_error 3 "$T/short.tif: strip 2 has a byte count of 1, less than the 20 bytes of its uncompressed pixels" \
        "--dry-run finds an uncompressed TIFF strip shorter than its rows" -- --dry-run "$T/short.tif" "$OUT/new.pgm"
    tiff_strips 10 7 1 1 2 20 20 20 9 >"$T/last.tif"
    expect_error 3 "strip 3 has a byte count of 9, less than the 10 bytes of its uncompressed pixels" \
        "... the last strip, of fewer rows, too" -- --dry-run "$T/last.tif" "$OUT/new.pgm"
    tiff_strips 10 7 3 2 7 70 70 69 >"$T/sep.tif"
    expect_error 3 "strip 2 has a byte count of 69, less than the 70 bytes of its uncompressed pixels" \
        "... a plane's strip of a planar-separate TIFF" -- --dry-run "$T/sep.tif" "$OUT/new.ppm"
    tiff_strips 10 7 3 2 7 70 70 0 >"$T/sep0.tif"
    expect_error 3 "strip 2 has a byte count of 0: no data" \
        "... a plane without its strip" -- --dry-run "$T/sep0.tif" "$OUT/new.ppm"
    # Min-is-black of 3 samples (an RGB file's photometric set to 1):
    # refused up front, not read as RGB (tests/roicopy/tiff-photometric
    # has libtiff's own files).
    if have tiffset; then
        tiff_strips 10 7 3 1 4 120 90 >"$T/gray3.tif"
        tiffset -s 262 1 "$T/gray3.tif" 2>"$T/err"
        expect_error 3 "$T/gray3.tif: photometric interpretation 1 (min-is-black) with 3 samples a pixel is not supported" \
            "--dry-run refuses min-is-black of 3 samples, not read as RGB" -- --dry-run "$T/gray3.tif" "$OUT/new.pam"
        # A range reads "out of range MIN..MAX" after the value, as every
        # roicopy message writes it (roicopy(1), EXIT STATUS).
        tiff_strips 10 7 3 1 4 120 90 >"$T/wide.tif"
        tiffset -s 256 2000000 "$T/wide.tif" 2>"$T/err"
        expect_error 3 "$T/wide.tif: width 2000000 is out of range 1..1000000" \
            "a TIFF wider than roicopy reads names its width and the range" -- \
            --dry-run "$T/wide.tif" "$OUT/new.pam"
        # Orientation 3 (shown turned half a turn, as tifftopnm writes
        # it): roicopy reads rows as stored, so its crop and output were
        # of another part of the image than the one a viewer shows.
        # Orientation 1, said explicitly, is the rows as stored.
        tiff_strips 10 7 1 1 7 70 >"$T/turned.tif"
        cp "$T/turned.tif" "$T/upright.tif"
        tiffset -s 274 3 "$T/turned.tif" 2>"$T/err"
        tiffset -s 274 1 "$T/upright.tif" 2>"$T/err"
        expect_error 3 "$T/turned.tif: orientation 3 is not supported (only 1: row 0 at the top, column 0 at the left)" \
            "--dry-run refuses a TIFF whose orientation is not the rows as stored" -- \
            --dry-run --roi 4x2 "$T/turned.tif" "$OUT/new.pgm"
        expect_error 3 "$T/turned.tif: orientation 3" "... and so does a real run, before the GPU" -- \
            --roi 4x2 "$T/turned.tif" "$OUT/new.pgm"
        plan_has "orientation 1 is taken" "input:    $T/upright.tif (tiff, 10x7" --roi 4x2 "$T/upright.tif" "$OUT/new.pgm"
    else
        skip_one "min-is-black of 3 samples: no tiffset"
        skip_one "a TIFF too wide: no tiffset"
        skip_one "orientation 3: no tiffset"
        skip_one "orientation 3, a real run: no tiffset"
        skip_one "orientation 1: no tiffset"
    fi
    # A Predictor libtiff cannot undo (PredictorSetup, at the first strip
    # decoded): 7, or 3 (floating point) on 8-bit samples.  A 4x2 gray LZW
    # TIFF whose 8-byte strip the checks never decode.
    tiff_pred() {
        printf 'II*\000'; le32 8; le16 11
        ifd_entry 256 4 1 4; ifd_entry 257 4 1 2; ifd_entry 258 3 1 8
        ifd_entry 259 3 1 5; ifd_entry 262 3 1 1; ifd_entry 273 4 1 146
        ifd_entry 277 3 1 1; ifd_entry 278 4 1 2; ifd_entry 279 4 1 8
        ifd_entry 317 3 1 "$1"; ifd_entry 339 3 1 1; le32 0
        b 0 0 0 0 0 0 0 0
    }
    tiff_pred 7 >"$T/pred7.tif"
    tiff_pred 3 >"$T/pred3.tif"
    expect_error 3 "$T/pred7.tif: predictor 7 is not supported (1 none, 2 horizontal differencing, 3 floating point)" \
        "--dry-run refuses a TIFF predictor libtiff does not know" -- --dry-run "$T/pred7.tif" "$OUT/new.pgm"
    expect_error 3 "$T/pred3.tif: predictor 3 (floating point) is for float samples, not 8-bit unsigned ones" \
        "--dry-run refuses the floating-point predictor on integer samples" -- --dry-run "$T/pred3.tif" "$OUT/new.pgm"
    expect_error 3 "$T/pred7.tif: predictor 7" "... and so does a real run, before the GPU" -- \
        "$T/pred7.tif" "$OUT/new.pgm"
    # Fax (CCITT) compression holds 1-bit samples: on 8-bit ones libtiff's
    # Fax3SetupState failed only at the first strip decoded.
    { tiff_head 4 2 8 1 3 2 8; b 0 0 0 0 0 0 0 0; } >"$T/fax8.tif"
    expect_error 3 "$T/fax8.tif: compression 3 (CCITT fax or JBIG) holds 1-bit samples, not 8-bit ones" \
        "--dry-run refuses fax compression of 8-bit samples" -- --dry-run "$T/fax8.tif" "$OUT/new.pgm"
    if have tiffcp; then
        # Horizontal differencing decodes to the pixels.
        tiff_strips 10 7 1 1 2 20 20 20 10 >"$T/strips0.tif"
        tiffcp -c lzw:2 "$T/strips0.tif" "$T/pred2.tif" 2>"$T/err"
        { printf 'P5\n10 7\n255\n'; for v in 16 17 18; do head -c 20 /dev/zero | tr '\000' "\\$(printf %03o $v)"; done
          head -c 10 /dev/zero | tr '\000' '\023'; } >"$T/pred2-want.pgm"
        "$CODEC_TOOL" cmp "$T/pred2.tif" "$T/pred2-want.pgm" >"$T/err" 2>&1
        check "LZW with predictor 2 is taken and decodes to its pixels" test $? -eq 0
    else
        skip_one "LZW with predictor 2: no tiffcp"
    fi
    cp "$T/zero.tif" "$T/zero2.tif"
    io_only_error 3 "$T/zero.tif: strip 2 has a byte count of 0: no data" \
        "a batch refuses the strip of 0 bytes before reading a pixel" "$T/zero.tif" "$T/zero2.tif"
    tiff_strips 10 7 1 1 2 20 20 20 10 >"$T/strips.tif"
    { printf 'P5\n10 7\n255\n'; for v in 16 17 18; do head -c 20 /dev/zero | tr '\000' "\\$(printf %03o $v)"; done
      head -c 10 /dev/zero | tr '\000' '\023'; } >"$T/strips-want.pgm"
    "$CODEC_TOOL" cmp "$T/strips.tif" "$T/strips-want.pgm" >"$T/err" 2>&1
    check "whole strips of the right byte counts decode to their pixels" test $? -eq 0
    # A tag of a value libtiff refuses and ignores while reading the
    # directory (ResolutionUnit 0, in place of the PlanarConfiguration
    # entry, the 10th): its error was kept and failed the pixels of a file
    # --dry-run had passed, which tifftopnm decodes.
    tiff_strips 10 7 1 1 2 20 20 20 10 >"$T/resunit.tif"
    { le16 296; le16 3; le32 1; le16 0; le16 0; } |
        dd of="$T/resunit.tif" bs=1 seek=$((10 + 9 * 12)) conv=notrunc 2>/dev/null
    "$CODEC_TOOL" cmp "$T/resunit.tif" "$T/strips-want.pgm" >"$T/err" 2>&1
    check "a tag libtiff ignores for its bad value does not fail the pixels" test $? -eq 0
    cp "$T/resunit.tif" "$T/resunit2.tif"
    rm -rf "$T/io"
    ROICOPY_IO_ONLY=1 "$ROICOPY" -q "$T/resunit.tif" "$T/resunit2.tif" -o "$T/io" >/dev/null 2>"$T/err"
    rc=$?
    check "... nor a batch's" eval '[ $rc -eq 0 ] && "$CODEC_TOOL" cmp "$T/io/resunit.tif" "$T/strips-want.pgm" >/dev/null 2>&1'
    # A compressed strip is read to its byte count, never past it: a
    # PackBits literal run of 8 bytes whose strip says 1 byte.
    { tiff_head 4 2 8 1 32773 2 1; b 7 1 2 3 4 5 6 7 8; } >"$T/pbshort.tif"
    cp "$T/pbshort.tif" "$T/pbshort2.tif"
    io_only_error 3 "$T/pbshort.tif: libtiff: PackBitsDecode" \
        "a PackBits strip is decoded from its declared byte alone" "$T/pbshort.tif" "$T/pbshort2.tif"
    packbits_across_rows "$T/pb.tif"
    printf 'P5\n4 2\n255\n' >"$T/pb-want.pgm"
    b 10 10 10 20 20 20 30 30 >>"$T/pb-want.pgm"
    "$CODEC_TOOL" cmp "$T/pb.tif" "$T/pb-want.pgm" >"$T/err" 2>&1
    check "a PackBits run across a row boundary decodes to the right pixels" test $? -eq 0
    if have tifftopnm; then
        tifftopnm "$T/pb.tif" >"$T/pb-netpbm.pgm" 2>/dev/null
        "$CODEC_TOOL" cmp "$T/pb.tif" "$T/pb-netpbm.pgm" >"$T/err" 2>&1
        check "... the pixels tifftopnm decodes" test $? -eq 0
    else
        skip_one "PackBits vs tifftopnm: no tifftopnm"
    fi
else
    skip_one "TIFF strip extents: built without TIFF support"
    for n in 1 2 3 4 5 6 7 8; do skip_one "TIFF strip byte counts: built without TIFF support"; done
    skip_one "PackBits across rows: built without TIFF support"
    skip_one "PackBits vs tifftopnm: built without TIFF support"
fi

# ---- 7: failed writes to standard output ------------------------------------
if [ -w /dev/full ]; then
    for args in "--help" "--version" "--dry-run $G $OUT/new.pgm" \
        "--dry-run --json $G $OUT/new.pgm" "--dry-run --tiles 10x10 $G -o $OUT"; do
        # shellcheck disable=SC2086
        "$ROICOPY" $args >/dev/full 2>"$T/err"
        rc=$?
        if [ $rc -eq 4 ] && grep -q "^roicopy: standard output: No space left on device" "$T/err"; then
            pass "roicopy $args >/dev/full: exit 4, says so"
        else
            fail "roicopy $args >/dev/full: exit $rc"
            diag_file "$T/err"
        fi
    done
else
    skip_one "no /dev/full"
fi

# ---- 8: maxval into PNG/TIFF -------------------------------------------------
# rescaled FILE MAXVAL DEPTH: the reference: every sample v of FILE to
# round(v * FULL / MAXVAL) (pamdepth's rounding), as a PAM of MAXVAL FULL.
printf 'P5\n8 1\n15\n' >"$T/g15.pgm"
b 0 1 7 8 14 15 3 9 >>"$T/g15.pgm"
pam_file "$T/bw.pam" 1 1 GRAYSCALE 0 1 1 0
printf 'P5\n3 1\n1023\n' >"$T/g1023.pgm"
b 0 0 1 255 3 255 >>"$T/g1023.pgm"
printf 'P5\n8 1\n255\n' >"$T/g15-want.pgm"
b 0 17 119 136 238 255 51 153 >>"$T/g15-want.pgm"
printf 'P5\n4 1\n255\n' >"$T/bw-want.pgm"
b 0 255 255 0 >>"$T/bw-want.pgm"
printf 'P5\n3 1\n65535\n' >"$T/g1023-want.pgm"
b 0 0 127 223 255 255 >>"$T/g1023-want.pgm"
for ext in png tif; do
    case $ext in png) f=png; tool=pngtopam ;; tif) f=tiff; tool="tifftopnm -byrow" ;; esac
    if ! has $f; then
        skip_one "maxval into $ext: not built"
        continue
    fi
    for src in g15.pgm bw.pam g1023.pgm; do
        stem=${src%.*}
        "$CODEC_TOOL" convert "$T/$src" "$T/$stem.$ext" 2>"$T/err"
        "$CODEC_TOOL" cmp "$T/$stem.$ext" "$T/$stem-want.pgm" >>"$T/err" 2>&1
        check "$src into .$ext: samples rescaled to the full 8/16 bits" test $? -eq 0
        if have ${tool%% *} && have pamdepth; then
            full=255
            [ "$stem" = g1023 ] && full=65535
            $tool "$T/$stem.$ext" 2>/dev/null | pamdepth $full >"$T/theirs.pam" 2>/dev/null
            pamdepth $full "$T/$src" >"$T/depth.pam" 2>/dev/null
            "$CODEC_TOOL" cmp "$T/theirs.pam" "$T/depth.pam" >"$T/err" 2>&1
            check "$src into .$ext, read by $tool: what pamdepth $full gives" test $? -eq 0
        else
            skip_one "$src into .$ext vs $tool and pamdepth: not installed"
        fi
    done
done
if has png && have pnmtopng && have pngtopam && have pamdepth; then
    pnmtopng "$T/g15.pgm" 2>/dev/null | pngtopam 2>/dev/null | pamdepth 255 >"$T/theirs.pam" 2>/dev/null
    "$CODEC_TOOL" cmp "$T/g15.png" "$T/theirs.pam" >"$T/err" 2>&1
    check "g15.pgm into .png: the pixels of pnmtopng's PNG" test $? -eq 0
else
    skip_one "maxval vs pnmtopng: not installed"
fi
"$CODEC_TOOL" convert "$T/g15.pgm" "$T/g15-copy.pgm" 2>"$T/err"
check "netpbm to netpbm keeps maxval 15 and the samples" cmp -s "$T/g15.pgm" "$T/g15-copy.pgm"
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$T/g15.pgm" "$OUT/new.pgm" >"$T/plan" 2>"$T/err"
check "the plan keeps maxval 15 into a PGM" grep -q "maxval 15)" "$T/plan"
# Samples above maxval: refused as netpbm refuses them (pamcut: "sample
# value 255 exceeds the image maxval of 100"), never copied into a PGM
# netpbm cannot read or clamped into a PNG or TIFF.
printf 'P5\n3 2\n100\n' >"$T/over.pgm"
b 0 50 100 100 255 7 >>"$T/over.pgm"
cp "$T/over.pgm" "$T/over2.pgm"
io_only_error 3 "$T/over.pgm: sample value 255 exceeds maxval 100 (row 1, column 1)" \
    "a sample above maxval into a PGM is refused, named" "$T/over.pgm" "$T/over2.pgm"
printf 'P5\n3 1\n1000\n' >"$T/over16.pgm"
b 0 0 3 232 3 233 >>"$T/over16.pgm"
cp "$T/over16.pgm" "$T/over16b.pgm"
io_only_error 3 "$T/over16.pgm: sample value 1001 exceeds maxval 1000 (row 0, column 2)" \
    "a 16-bit sample above maxval is refused" "$T/over16.pgm" "$T/over16b.pgm"
bad_frames_in_order "a batch on the CPU (ROICOPY_IO_ONLY)" ROICOPY_IO_ONLY=1 --
pam_file "$T/over.pam" 2 1 GRAYSCALE_ALPHA 1 0 1 2
cp "$T/over.pam" "$T/over2.pam"
io_only_error 3 "$T/over.pam: sample value 2 exceeds maxval 1 (row 0, column 1)" \
    "a PAM sample above MAXVAL is refused" "$T/over.pam" "$T/over2.pam"
for ext in png tif; do
    case $ext in png) f=png ;; *) f=tiff ;; esac
    if has $f; then
        io_only_error 3 "sample value 255 exceeds maxval 100" \
            "a sample above maxval into .$ext is refused, not clamped" --format $f "$T/over.pgm" "$T/over2.pgm"
    else
        skip_one "a sample above maxval into .$ext: built without $f"
    fi
done
# Only the rows a crop reads are looked at: row 0 is within maxval.
rm -rf "$T/io"
ROICOPY_IO_ONLY=1 "$ROICOPY" --quiet --roi 3x1 "$T/over.pgm" "$T/over2.pgm" -o "$T/io" 2>"$T/err"
rc=$?
printf 'P5\n3 1\n100\n' >"$T/row0.pgm"
b 0 50 100 >>"$T/row0.pgm"
check "a crop of the rows within maxval is copied, maxval kept" \
    eval '[ $rc -eq 0 ] && cmp -s "$T/io/over.pgm" "$T/row0.pgm"'

# ---- 9: what PNG/TIFF cannot represent ----------------------------------------
pam_file "$T/cmyk.pam" 4 255 CMYK 1 2 3 4
pam_file "$T/gray3.pam" 3 255 GRAYSCALE 1 2 3
pam_file "$T/rgb4.pam" 4 255 RGB 1 2 3 4
for ext in png tif; do
    case $ext in png) f=png ;; *) f=tiff ;; esac
    if ! has $f; then
        skip_one "CMYK PAM into .$ext: built without $f"
        skip_one "3-channel GRAYSCALE PAM into .$ext: built without $f"
        skip_one "RGB PAM of DEPTH 4 into .$ext: built without $f"
        continue
    fi
    expect_error 2 "cannot represent tuple type \"CMYK\" with 4 channels: its channels would be read as RGB_ALPHA; pam or raw can hold it" \
        "CMYK PAM into .$ext is refused" -- --dry-run "$T/cmyk.pam" "$OUT/new.$ext"
    expect_error 2 "cannot represent tuple type \"GRAYSCALE\" with 3 channels" \
        "3-channel GRAYSCALE PAM into .$ext is refused" -- --dry-run "$T/gray3.pam" "$OUT/new.$ext"
    expect_error 2 "cannot represent tuple type \"RGB\" with 4 channels" \
        "RGB PAM of DEPTH 4 into .$ext is refused" -- --dry-run "$T/rgb4.pam" "$OUT/new.$ext"
done
env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$T/cmyk.pam" "$OUT/new.pam" >"$T/plan" 2>"$T/err"
check "CMYK PAM into a PAM keeps its tuple type" grep -q "^output:   $OUT/new.pam (pam, CMYK)" "$T/plan"

# ---- 11: --files-from limits ----------------------------------------------------
expect_error 3 "/dev/zero: --files-from: line 1 is 4096 bytes or longer, longer than a path can be (a NUL-separated list needs -0)" \
    "--files-from /dev/zero stops at the first overlong line" -- --dry-run --files-from /dev/zero -o "$OUT"
expect_error 3 "/dev/zero: --files-from: more than 1048576 names; split the list" \
    "-0 --files-from /dev/zero stops at the list's limit" -- --dry-run -0 --files-from /dev/zero -o "$OUT"
yes '' | head -n 1048577 >"$T/blank-lines"
expect_error 3 "$T/blank-lines: --files-from: more than 1048576 lines; split the list" \
    "a list of more lines than the limit, empty ones, is refused by its lines" -- \
    --dry-run --files-from "$T/blank-lines" -o "$OUT"
# The last line counts without its newline: 1048576 lines and one more
# unterminated were read as 1048577 names.
{ yes '' | head -n 1048576; printf 'x'; } >"$T/blank-lines"
expect_error 3 "$T/blank-lines: --files-from: more than 1048576 lines; split the list" \
    "a list one line past the limit, its last without a newline, is refused" -- \
    --dry-run --files-from "$T/blank-lines" -o "$OUT"
{ yes 'x' | head -n 1048576 | tr '\n' '\0'; printf 'x'; } >"$T/blank-lines"
expect_error 3 "$T/blank-lines: --files-from: more than 1048576 names; split the list" \
    "-0: a list one name past the limit, its last without a NUL, is refused" -- \
    --dry-run -0 --files-from "$T/blank-lines" -o "$OUT"
# A second --files-from took the place of the first: its inputs were
# dropped in silence.
printf '%s\n' "$G" >"$T/list1"
printf '%s\n' "$SAMPLES/rgb-80x60.ppm" >"$T/list2"
expect_error 2 "roicopy: --files-from given twice ($T/list1 and $T/list2): one list a run; join them with cat" \
    "--files-from twice is refused, not the first list dropped" -- --dry-run --files-from "$T/list1" --files-from "$T/list2" -o "$OUT"
# A list that is also an output's name (DIR/gray-97x61.pgm for the input
# gray-97x61.pgm) would be replaced by that output, the user's list lost.
mkdir -p "$T/listdir"
printf '%s\n' "$G" >"$T/listdir/gray-97x61.pgm"
cp "$T/listdir/gray-97x61.pgm" "$T/list-before"
expect_error 4 "$T/listdir/gray-97x61.pgm: is the --files-from list ($T/listdir/gray-97x61.pgm)" \
    "an output that would replace the --files-from list is refused" -- \
    --dry-run --roi 8x8 --files-from "$T/listdir/gray-97x61.pgm" -o "$T/listdir"
check "... and the list is left as it was" cmp -s "$T/list-before" "$T/listdir/gray-97x61.pgm"
# find -print0 without -0: each name ended at its NUL, so the list was the
# first name alone, the rest dropped in silence (exit 0).
printf '%s\0%s\0' "$G" "$T/second.pgm" >"$T/names0"
expect_error 3 "$T/names0: --files-from: line 1 has a NUL byte, which no name can have (a NUL-separated list needs -0)" \
    "a NUL-separated list without -0 is refused, not cut to its first name" -- --dry-run --files-from "$T/names0" -o "$OUT"
printf '%s\nx\0y\n' "$G" >"$T/names0"
expect_error 3 "$T/names0: --files-from: line 2 has a NUL byte" \
    "a NUL inside a later line names that line" -- --dry-run --files-from "$T/names0" -o "$OUT"

# ---- 12: messages that name the real problem --------------------------------------
expect_error 2 "option --dev is ambiguous: --device, --devices" "--dev is ambiguous" -- --dev 0 "$G" "$OUT/new.pgm"
expect_error 2 "several --roi need -o DIR or --stack FILE" "--roi twice with INPUT OUTPUT" -- \
    --roi 4x4 --roi 5x5 "$G" "$OUT/new.pgm"
expect_error 2 "--tiles needs -o DIR or --stack FILE" "--tiles without -o or --stack" -- --tiles 4x4 "$G"
expect_error 2 "not png (from the extension): write PNG or TIFF tiles with -o DIR" \
    "--stack s.png names PNG, not raw" -- --tiles 8x8 --stack "$OUT/s.png" "$G"
expect_error 2 "not raw (from --format): raw images have no header to split on" \
    "--stack with --format raw" -- --tiles 8x8 --format raw --stack "$OUT/s.x" "$G"
# A C1 control is a control: U+009B is CSI, as ESC [ (a terminal would
# act on "\xc2\x9b" "31m" in a name), so its bytes are written \xNN.
expect_error 3 "roicopy: x\\xc2\\x9b31m.pgm: No such file or directory" \
    "a C1 control in a file name is escaped" -- --dry-run "$(printf 'x\302\23331m.pgm')" "$OUT/new.pgm"

# ---- 13: frames no machine's memory holds ------------------------------------
# A sparse PGM a GiB larger than this machine's memory: one input holds it
# whole in pinned memory, a batch twice (two buffers: one read ahead, one
# being written; malloc'd, so they overcommitted and the reading threads
# exhausted the memory).  Refused before anything is read; a batch that
# reads only the ROI's rows of it is planned.
mem_kb=$(awk '/^MemTotal:/ { printf "%d", $2 }' /proc/meminfo 2>/dev/null)
rows=$(( ${mem_kb:-0} / 64 + 16384 ))
if [ "${mem_kb:-0}" -gt 0 ] && printf 'P5\n65536 %d\n255\n' "$rows" >"$T/big.pgm" &&
    truncate -s $(( $(wc -c <"$T/big.pgm") + 65536 * rows )) "$T/big.pgm" 2>/dev/null; then
    ln "$T/big.pgm" "$T/big2.pgm"
    expect_error 2 "$T/big.pgm: the image ($((65536 * rows)) bytes) and the ROI (256) are held in pinned host memory at once: more than this machine's" \
        "one input larger than the memory is refused before the GPU" -- --dry-run --roi 16x16 "$T/big.pgm" "$OUT/new.pgm"
    expect_error 2 "the ROI (256) are held in host memory at once" \
        "--pageable too (malloc'd, it would overcommit)" -- --dry-run --pageable --roi 16x16 "$T/big.pgm" "$OUT/new.pgm"
    expect_error 2 "$T/big.pgm: a batch holds two frames at once at the least (one read ahead, one being written), $((2 * 65536 * rows)) bytes each here (the ROI's rows $((65536 * rows)), the ROI $((65536 * rows))): more than this machine's" \
        "a batch frame twice larger than the memory is refused" -- --dry-run "$T/big.pgm" "$G" -o "$OUT/b"
    plan_has "a batch reading 16 rows of it is planned" "pipeline: 2 frames" \
        --roi 16x16 "$T/big.pgm" "$T/big2.pgm" -o "$OUT/b"
    rm -f "$T/big.pgm" "$T/big2.pgm"
else
    skip_one "frames larger than the memory: no /proc/meminfo or no sparse file"
fi

# ---- 14: an output that is a symbolic link is replaced, as mv replaces it --
# (roicopy(1) says so; the file the link named is left as it was.)
mkdir "$T/sl" && printf 'linked\n' >"$T/target" && ln -s ../target "$T/sl/gray-97x61.pgm"
if env CUDA_VISIBLE_DEVICES= ROICOPY_IO_ONLY=1 "$ROICOPY" -q --roi 8x8 "$G" "$SAMPLES/rgb-80x60.ppm" -o "$T/sl" 2>"$T/err" &&
    [ -f "$T/sl/gray-97x61.pgm" ] && [ ! -L "$T/sl/gray-97x61.pgm" ] &&
    [ "$(cat "$T/target")" = linked ]; then
    pass "an output that is a symbolic link is replaced by the file, its target left alone"
else
    fail "an output that is a symbolic link"; diag_file "$T/err"
fi

# ---- 15: roicopy(1) renders cleanly ---------------------------------------------------
if have mandoc; then
    mandoc -Tutf8 "$top_srcdir/man/roicopy.1" 2>/dev/null | col -b >"$T/page"
    check "roicopy(1): no stray '-(' or '..'" eval '! grep -nE -- "-\(|[a-z]\.\.It|all\.\." "$T/page" >"$T/err"'
    check "roicopy(1): ROICOPY_PREFETCH_MB is an item of its own" \
        grep -qE '^ +ROICOPY_PREFETCH_MB$' "$T/page"
    check "roicopy(1): the headerless 16-bit example is under its heading" \
        eval 'grep -A1 "Read a headerless 16-bit" "$T/page" | grep -q -- "--raw 1024x768x2"'
    check "roicopy(1): the SLURM example has its own heading" \
        eval 'grep -A1 "A batch over four machines" "$T/page" | grep -q "find in"'
else
    skip_one "roicopy(1) rendering: no mandoc"
fi
finish
