#!/bin/sh
# SPDX-License-Identifier: MIT
# The bash completions of roicopy and xferbench answer a few prefixes right:
# options, formats, devices (from nvidia-smi -L, else 0), directories and
# files.  Each case runs twice: with the bash-completion package's helpers
# loaded (when installed) and with plain bash.  The zsh files must parse.
# Skips without bash.
: "${top_srcdir:=.}"
if ! command -v bash >/dev/null 2>&1; then
    echo "1..0 # SKIP no bash"; exit 0
fi
src=$(cd "$top_srcdir" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-compl.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# A stand-in nvidia-smi with four GPUs, and one that fails.
mkdir -p "$tmp/gpus" "$tmp/nogpu" "$tmp/work/subdir"
printf '#!/bin/sh\nfor i in 0 1 2 3; do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; done\n' \
    >"$tmp/gpus/nvidia-smi"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2; exit 9\n' >"$tmp/nogpu/nvidia-smi"
chmod +x "$tmp/gpus/nvidia-smi" "$tmp/nogpu/nvidia-smi"
: >"$tmp/work/img.pgm"
: >"$tmp/work/subfile"

bc=
for f in "${BASH_COMPLETION:-}" /usr/share/bash-completion/bash_completion \
    /etc/bash_completion /usr/local/share/bash-completion/bash_completion; do
    [ -n "$f" ] && [ -f "$f" ] && { bc=$f; break; }
done
modes=plain
[ -n "$bc" ] && modes="bash-completion plain"
ncases=14
nmodes=$(echo $modes | wc -w)
echo "1..$((ncases * nmodes + 2))"

n=0
for mode in $modes; do
    bcfile=
    [ "$mode" = bash-completion ] && bcfile=$bc
    out=$(cd "$tmp/work" && BCFILE=$bcfile SRC=$src TMPD=$tmp MODE=$mode N=$n bash --norc --noprofile <<'BASH'
[ -n "$BCFILE" ] && . "$BCFILE" 2>/dev/null
. "$SRC/completions/bash/roicopy"
. "$SRC/completions/bash/xferbench"
n=$N
# expect "WANT" FUNC WORDS...: complete the last word, compare the sorted
# replies (one line, space-separated) with WANT.
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
    n=$((n + 1))
    if [[ $got == "$want" ]]; then
        echo "ok $n - $MODE: '$*' -> $want"
    else
        echo "not ok $n - $MODE: '$*' -> got '$got', want '$want'"
    fi
}
PATH0=$PATH
expect "--verify --version" _roicopy roicopy --ve
expect "--keep-going" _roicopy roicopy --keep
expect "--skip-existing --stack --streams" _roicopy roicopy --s
expect "pam pgm png ppm" _roicopy roicopy --format p
expect "tif" _roicopy roicopy --format t
expect "pam pgm png ppm" _roicopy roicopy --format = p
PATH=$TMPD/gpus:$PATH0
expect "0 1 2 3" _roicopy roicopy --device ""
expect "0,2,0 0,2,1 0,2,2 0,2,3" _roicopy roicopy --devices 0,2,
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
    printf '%s\n' "$out"
    n=$((n + ncases))
done
for z in _roicopy _xferbench; do
    n=$((n + 1))
    if ! command -v zsh >/dev/null 2>&1; then
        echo "ok $n # SKIP no zsh to parse completions/zsh/$z"
    elif head -n 1 "$src/completions/zsh/$z" | grep -q '^#compdef' &&
        zsh -n "$src/completions/zsh/$z" 2>"$tmp/zsh.err"; then
        echo "ok $n - completions/zsh/$z: #compdef first, parses"
    else
        echo "not ok $n - completions/zsh/$z: #compdef first, parses"
        sed 's/^/# /' "$tmp/zsh.err"
    fi
done
