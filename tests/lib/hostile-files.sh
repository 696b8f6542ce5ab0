# SPDX-License-Identifier: MIT
# hostile-files.sh - sourced by tests/roicopy/hostile*.sh: byte-exact
# hostile inputs written with printf alone (no tool can refuse to make
# them): little-endian TIFFs of one strip with any compression and any
# claimed size, netpbm files of any maxval and tuple type; and the
# helpers both tests use (after tests/lib/roicopy-lib.sh).

# has FORMAT: this roicopy reads and writes FORMAT (its --version).
formats=$("$ROICOPY" --version | sed -n 's/^formats: //p')
has() { case " $formats " in *" $1 "*) return 0 ;; esac; return 1; }

# check DESCRIPTION COMMAND...: pass when COMMAND succeeds, else $T/err
# goes to the diagnostics.
check() {
    desc=$1
    shift
    if "$@"; then pass "$desc"; else fail "$desc"; diag_file "$T/err"; fi
}

# verdict PASSED NAME: one point from $why, the problems a case found:
# none, "PASSED"; else "NAME: the problems", and $T/err to the diagnostics.
verdict() {
    if [ -z "$why" ]; then
        pass "$1"
    else
        fail "$2:$why"
        diag_file "$T/err"
    fi
}

# png_batch_cut DIR: DIR/f1.png .. f6.png, $RGB each (through
# tests/roicopy/codec-tool, $CODEC_TOOL), f3's pixel data cut short
# (codec-tool cut-idat): a batch one frame of which fails only when decoded.
png_batch_cut() {
    mkdir -p "$1"
    for hk in 1 2 3 4 5 6; do
        "$CODEC_TOOL" convert "$RGB" "$1/f$hk.png" 2>>"$T/err"
    done
    "$CODEC_TOOL" cut-idat "$1/f1.png" "$1/f3.png" 2>>"$T/err"
}

# keep_going_verdict NAME RC IN OUT REF REASON: roicopy --keep-going over
# IN's png_batch_cut batch into OUT ended with RC and wrote $T/err: exit 3,
# f3 not written, the five others equal REF by pixel value, f3 named with
# REASON, and the summary line.
keep_going_verdict() {
    kg_name=$1 kg_rc=$2 kg_in=$3 kg_out=$4 kg_ref=$5 kg_reason=$6
    why=
    [ "$kg_rc" -eq 3 ] || why="$why exit $kg_rc, wanted 3;"
    [ -e "$kg_out/f3.png" ] && why="$why the bad frame was written;"
    for hk in 1 2 4 5 6; do
        "$CODEC_TOOL" cmp "$kg_out/f$hk.png" "$kg_ref" >/dev/null 2>&1 ||
            why="$why f$hk.png missing or wrong;"
    done
    grep -q "^roicopy: $kg_in/f3.png: $kg_reason" "$T/err" ||
        why="$why the bad frame is not named with its reason;"
    grep -q "^roicopy: --keep-going: 1 of 6 frames could not be decoded" "$T/err" ||
        why="$why no summary;"
    verdict "$kg_name: the frame that fails to decode is skipped and named, the 5 others written" \
        "$kg_name"
}

# b N...: the bytes of these decimal values.
b() { for v; do printf "\\$(printf %03o "$v")"; done; }
le16() { b $(($1 & 255)) $(($1 >> 8 & 255)); }
le32() { b $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
# One IFD entry: TAG TYPE(3 short, 4 long) COUNT VALUE.
ifd_entry() {
    le16 "$1"; le16 "$2"; le32 "$3"
    if [ "$2" = 3 ]; then le16 "$4"; le16 0; else le32 "$4"; fi
}
# tiff_head W H BITS SAMPLEFORMAT COMPRESSION ROWSPERSTRIP STRIPBYTES: a
# gray TIFF header whose one strip follows it (at byte 134); write the
# strip's bytes after it.
tiff_head() {
    printf 'II*\000'; le32 8; le16 10
    ifd_entry 256 4 1 "$1"; ifd_entry 257 4 1 "$2"; ifd_entry 258 3 1 "$3"
    ifd_entry 259 3 1 "$5"; ifd_entry 262 3 1 1; ifd_entry 273 4 1 134
    ifd_entry 277 3 1 1; ifd_entry 278 4 1 "$6"; ifd_entry 279 4 1 "$7"
    ifd_entry 339 3 1 "$4"; le32 0
}
# A 4x2 8-bit gray PackBits TIFF whose middle run crosses the row
# boundary (the TIFF specification allows it): rows 10 10 10 20 and
# 20 20 30 30.
packbits_across_rows() {
    { tiff_head 4 2 8 1 32773 2 6; b 254 10 254 20 255 30; } >"$1"
}
# pam FILE DEPTH MAXVAL TUPLTYPE BYTES...: a 1-row PAM.
pam_file() {
    f=$1 d=$2 m=$3 t=$4
    shift 4
    n=$#
    [ "$m" -gt 255 ] && n=$((n / 2))
    printf 'P7\nWIDTH %d\nHEIGHT 1\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n' \
        $((n / d)) "$d" "$m" "$t" >"$f"
    b "$@" >>"$f"
}
# tiff_strips W H SPP PLANAR RPS COUNT...: an uncompressed 8-bit TIFF,
# gray (SPP 1) or RGB (SPP 3; PLANAR 1 contiguous, 2 separate), in strips
# of RPS rows (at least two strips, one COUNT each).  Every strip's bytes
# are in the file, strip i's all 16 + i, but its StripByteCounts entry is
# COUNT i; a COUNT of 0 gets the offset 0 too, as libtiff leaves a strip
# it found no entry for.
tiff_strips() {
    ts_w=$1 ts_h=$2 ts_spp=$3 ts_pl=$4 ts_rps=$5
    shift 5
    ts_arr=146 # after the header (8) and an IFD of 11 entries (138)
    ts_bps=$((ts_arr + 8 * $#))
    ts_line=$ts_w
    [ "$ts_pl" = 1 ] && ts_line=$((ts_w * ts_spp))
    ts_per=$(((ts_h + ts_rps - 1) / ts_rps))
    printf 'II*\000'; le32 8; le16 11
    ifd_entry 256 4 1 "$ts_w"; ifd_entry 257 4 1 "$ts_h"
    le16 258; le16 3; le32 "$ts_spp"
    if [ "$ts_spp" = 1 ]; then le16 8; le16 0; else le32 "$ts_bps"; fi
    ifd_entry 259 3 1 1; ifd_entry 262 3 1 $((ts_spp == 1 ? 1 : 2))
    ifd_entry 273 4 $# "$ts_arr"; ifd_entry 277 3 1 "$ts_spp"
    ifd_entry 278 4 1 "$ts_rps"; ifd_entry 279 4 $# $((ts_arr + 4 * $#))
    ifd_entry 284 3 1 "$ts_pl"; ifd_entry 339 3 1 1; le32 0
    ts_i=0 ts_off=$((ts_bps + 6))
    for ts_c; do
        ts_y=$((ts_i % ts_per * ts_rps))
        ts_rows=$((ts_h - ts_y < ts_rps ? ts_h - ts_y : ts_rps))
        if [ "$ts_c" = 0 ]; then le32 0; else le32 "$ts_off"; fi
        ts_off=$((ts_off + ts_rows * ts_line))
        ts_i=$((ts_i + 1))
    done
    for ts_c; do le32 "$ts_c"; done
    le16 8; le16 8; le16 8
    ts_i=0
    for ts_c; do
        ts_y=$((ts_i % ts_per * ts_rps))
        ts_rows=$((ts_h - ts_y < ts_rps ? ts_h - ts_y : ts_rps))
        head -c $((ts_rows * ts_line)) /dev/zero | tr '\000' "\\$(printf %03o $((16 + ts_i)))"
        ts_i=$((ts_i + 1))
    done
}

# io_only_error STATUS TEXT DESCRIPTION INPUT...: a batch of INPUTs (bad
# ones) run without the GPU (ROICOPY_IO_ONLY=1: the real reads, crops and
# writes on the CPU) into -o $T/io must exit STATUS, say TEXT on stderr
# and write nothing.
io_only_error() {
    want=$1 text=$2 desc=$3
    shift 3
    rm -rf "$T/io"
    ROICOPY_IO_ONLY=1 "$ROICOPY" --quiet "$@" -o "$T/io" >"$T/stdout" 2>"$T/err"
    rc=$?
    why=
    [ "$rc" -eq "$want" ] || why="$why exit $rc, wanted $want;"
    grep -qF -- "$text" "$T/err" || why="$why message lacks '$text';"
    [ -n "$(ls -A "$T/io" 2>/dev/null)" ] && why="$why wrote $(ls -A "$T/io");"
    verdict "$desc (exit $want)" "$desc"
}

# bad_frames_in_order DESCRIPTION [ENV=VALUE --] [OPTION...]: a batch
# of three frames, the first bad only at its last sample (read after 16
# MB), the second good, the third bad at its first sample (read at once,
# before the first fails): without --keep-going only the first is told;
# with it both bad frames are told, the first first, and the good one is
# written.  Exit 3 both ways.  ENV goes to roicopy's environment
# (ROICOPY_IO_ONLY=1 for the CPU run), OPTIONs to its command line.
bad_frames_in_order() {
    bo_desc=$1
    shift
    bo_env=
    case "${1:-}" in *=*) bo_env=$1; shift; [ "${1:-}" = -- ] && shift ;; esac
    mkdir -p "$T/bo"
    { printf 'P5\n4000 4000\n100\n'; head -c 15999999 /dev/zero; b 101; } \
        >"$T/bo/late.pgm"
    printf 'P5\n2 1\n100\n' >"$T/bo/early.pgm"
    b 101 0 >>"$T/bo/early.pgm"
    bo_good="$T/bo/good.pgm"
    cp "$G" "$bo_good"
    for bo_k in "" --keep-going; do
        rm -rf "$T/bo-out"
        # shellcheck disable=SC2086
        env $bo_env "$ROICOPY" --quiet $bo_k "$@" "$T/bo/late.pgm" "$bo_good" \
            "$T/bo/early.pgm" -o "$T/bo-out" >"$T/stdout" 2>"$T/err"
        bo_rc=$?
        why=
        [ "$bo_rc" -eq 3 ] || why="$why exit $bo_rc, wanted 3;"
        bo_late=$(grep -nF "roicopy: $T/bo/late.pgm: sample value 101 exceeds maxval 100 (row 3999, column 3999)" "$T/err" | cut -d: -f1)
        bo_early=$(grep -nF "roicopy: $T/bo/early.pgm: sample value 101 exceeds maxval 100 (row 0, column 0)" "$T/err" | cut -d: -f1)
        [ -n "$bo_late" ] || why="$why the first bad frame was not told;"
        if [ -z "$bo_k" ]; then
            [ -n "$bo_early" ] && why="$why a frame after the first bad one was told;"
        else
            [ -n "$bo_early" ] || why="$why the second bad frame was not told;"
            [ -n "$bo_late" ] && [ -n "$bo_early" ] && [ "$bo_early" -lt "$bo_late" ] &&
                why="$why the later bad frame was told first;"
            "$CODEC_TOOL" cmp "$T/bo-out/good.pgm" "$bo_good" >/dev/null 2>&1 ||
                why="$why the good frame was not written whole;"
        fi
        [ -e "$T/bo-out/late.pgm" ] || [ -e "$T/bo-out/early.pgm" ] &&
            why="$why a bad frame was written;"
        verdict "$bo_desc${bo_k:+ $bo_k}: the first bad frame told first, exit 3" \
            "$bo_desc${bo_k:+ $bo_k}"
    done
}
