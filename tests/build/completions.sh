#!/bin/sh
# SPDX-License-Identifier: MIT
# The bash completions of roicopy and xferbench answer a few prefixes right:
# options, formats, devices (from nvidia-smi -L, else 0), directories and
# files.  Each case runs twice: with the bash-completion package's helpers
# loaded (when installed) and with plain bash.  --format offers the formats
# of the roicopy being completed (its --version: PNG and TIFF are
# optional), and every option of roicopy --help is offered.  The zsh files
# must parse, and zsh's format list comes from --version too.
# Skips without bash.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if ! command -v bash >/dev/null 2>&1; then
    echo "1..0 # SKIP no bash"; exit 0
fi
src=$(cd "$top_srcdir" && pwd) || exit 1
built=$(cd "$top_builddir" && pwd)/tools/roicopy
. "$top_srcdir/tests/lib/tap.sh"
tmp=$T
# A stand-in nvidia-smi with four GPUs, and one that fails.
mkdir -p "$tmp/gpus" "$tmp/nogpu" "$tmp/work/subdir"
printf '#!/bin/sh\nfor i in 0 1 2 3; do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; done\n' \
    >"$tmp/gpus/nvidia-smi"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2; exit 9\n' >"$tmp/nogpu/nvidia-smi"
chmod +x "$tmp/gpus/nvidia-smi" "$tmp/nogpu/nvidia-smi"
# Stand-in roicopys: a build with every format, one with none optional,
# one that does not run.
mkdir -p "$tmp/rc-all" "$tmp/rc-min" "$tmp/rc-bad"
printf '#!/bin/sh\nexit 126\n' >"$tmp/rc-bad/roicopy"
printf '#!/bin/sh\necho "roicopy (cuxfer) 0"; echo "formats: pgm ppm pam raw png tiff"\n' \
    >"$tmp/rc-all/roicopy"
printf '#!/bin/sh\necho "roicopy (cuxfer) 0"; echo "formats: pgm ppm pam raw"\n' \
    >"$tmp/rc-min/roicopy"
chmod +x "$tmp/rc-all/roicopy" "$tmp/rc-min/roicopy" "$tmp/rc-bad/roicopy"
: >"$tmp/work/img.pgm"
: >"$tmp/work/subfile"

bc=
for f in "${BASH_COMPLETION:-}" /usr/share/bash-completion/bash_completion \
    /etc/bash_completion /usr/local/share/bash-completion/bash_completion; do
    [ -n "$f" ] && [ -f "$f" ] && { bc=$f; break; }
done
modes=plain
[ -n "$bc" ] && modes="bash-completion plain"
ncases=21
nmodes=$(echo $modes | wc -w)

for mode in $modes; do
    bcfile=
    [ "$mode" = bash-completion ] && bcfile=$bc
    out=$(cd "$tmp/work" && BCFILE=$bcfile SRC=$src TMPD=$tmp BUILT=$built MODE=$mode bash --norc --noprofile <<'BASH'
[ -n "$BCFILE" ] && . "$BCFILE" 2>/dev/null
. "$SRC/completions/bash/roicopy"
. "$SRC/completions/bash/xferbench"
# expect "WANT" FUNC WORDS...: complete the last word, compare the sorted
# replies (one line, space-separated) with WANT: a point, unnumbered
# (the test's relay numbers it).
expect() {
    local want=$1 fn=$2; shift 2
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_LINE=${COMP_LINE// = /=}
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    $fn "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    local got
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ')
    got=${got% }
    if [[ $got == "$want" ]]; then
        echo "ok - $MODE: '$*' -> $want"
    else
        echo "not ok - $MODE: '$*' -> got '$got', want '$want'"
    fi
}
PATH0=$PATH
expect "--verbose --verify --version" _roicopy roicopy --ve
expect "--keep-going" _roicopy roicopy --keep
expect "--skip-existing --stack --streams" _roicopy roicopy --s
PATH=$TMPD/rc-all:$PATH0
expect "pam pgm png ppm" _roicopy roicopy --format p
expect "tiff" _roicopy roicopy --format t
expect "pam pgm png ppm" _roicopy roicopy --format = p
PATH=$TMPD/rc-min:$PATH0
expect "pam pgm ppm" _roicopy roicopy --format p
expect "" _roicopy roicopy --format t
PATH=$TMPD/rc-bad:$PATH0
expect "pam pgm ppm raw" _roicopy roicopy --format ""
PATH=$PATH0
expect "-0" _roicopy roicopy -0
expect "-k" _roicopy roicopy -k
# The built roicopy: its own formats, and every option its --help names.
if [[ -x $BUILT ]]; then
    expect "$("$BUILT" --version | sed -n 's/^formats: //p' | tr ' ' '\n' | sort | tr '\n' ' ' |
        sed 's/ $//')" _roicopy "$BUILT" --format ""
    all=$("$BUILT" --help | grep -o -- '\(^\|[ ,]\)--*[a-zA-Z0-9][a-z-]*' |
        sed 's/^[ ,]*//' | sort -u | tr '\n' ' ')
    expect "${all% }" _roicopy "$BUILT" -
else
    echo "ok - # SKIP roicopy is not built"
    echo "ok - # SKIP roicopy is not built"
fi
PATH=$TMPD/gpus:$PATH0
expect "0 1 2 3" _roicopy roicopy --device ""
expect "0,2,1 0,2,3" _roicopy roicopy --devices 0,2,
PATH=$TMPD/nogpu:$PATH0
expect "0" _roicopy roicopy --device ""
PATH=$PATH0
expect "subdir" _roicopy roicopy -o sub
expect "img.pgm" _roicopy roicopy --verify im
expect "ring rois roundtrip" _xferbench xferbench --only r
expect "--calibrate" _xferbench xferbench --ca
PATH=$TMPD/gpus:$PATH0
expect "0 1 2 3" _xferbench xferbench -d ""
BASH
    )
    printf '%s\n' "$out" >"$tmp/$mode.tap"
    relay <"$tmp/$mode.tap"
done
for z in _roicopy _xferbench; do
    if ! have zsh; then
        skip_one "no zsh to parse completions/zsh/$z"
    elif head -n 1 "$src/completions/zsh/$z" | grep -q '^#compdef' &&
        zsh -n "$src/completions/zsh/$z" 2>"$tmp/zsh.err"; then
        pass "completions/zsh/$z: #compdef first, parses"
    else
        fail "completions/zsh/$z: #compdef first, parses"
        diag_file "$tmp/zsh.err"
    fi
done
# zsh's --format list, and its -k and -0, with compsys stood in for: the
# file's _arguments specs are printed, the format list of each stand-in
# roicopy taken.
zsh_formats() {
    PATH=$1:$PATH zsh -f -c '
        specs=$0
        _arguments() { print -rl -- "$@" >"$specs"; }
        _call_program() { shift; eval "$*"; }
        _describe() { print -r -- ${(P)4}; }
        words=(roicopy)
        . "$1/completions/zsh/_roicopy"
        _cuxfer_roicopy_formats' "$tmp/zsh.specs" "$src" 2>&1
}
if ! have zsh; then
    skip_one "no zsh"
elif [ "$(zsh_formats "$tmp/rc-all")" = "pgm ppm pam raw png tiff" ] &&
    [ "$(zsh_formats "$tmp/rc-min")" = "pgm ppm pam raw" ] &&
    [ "$(zsh_formats "$tmp/rc-bad")" = "pgm ppm pam raw" ]; then
    pass "zsh: --format offers the formats of the roicopy at hand"
else
    fail "zsh: --format offers the formats of the roicopy at hand"
    for d in rc-all rc-min rc-bad; do echo "# $d: $(zsh_formats "$tmp/$d")"; done
fi
if ! have zsh; then
    skip_one "no zsh"
elif grep -Eq '^(\([^)]*\))?-k\[' "$tmp/zsh.specs" &&
    grep -Eq '^(\([^)]*\))?--keep-going\[' "$tmp/zsh.specs" &&
    grep -Eq '^(\([^)]*\))?-0\[' "$tmp/zsh.specs"; then
    pass "zsh: -k, --keep-going and -0 are offered"
else
    fail "zsh: -k, --keep-going and -0 are offered"
    diag_file "$tmp/zsh.specs"
fi
# --roi given again is one more region (roicopy(1), Many regions of one
# image): zsh offers only the options marked '*' a second time.
if ! have zsh; then
    skip_one "no zsh"
elif grep -Eq '^\*--roi=' "$tmp/zsh.specs"; then
    pass "zsh: --roi is offered again after one --roi"
else
    fail "zsh: --roi is offered again after one --roi"
    diag_file "$tmp/zsh.specs"
fi
finish $((ncases * nmodes + 5))
