#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy reads netpbm headers as libnetpbm does (roicopy(1) says so): a
# differential run against pamfile over generated headers.  Every ASCII
# byte (and four high ones) is put in turn after the magic number, between two
# numbers, after the maxval, between a PAM keyword and its value, right
# after the keyword TUPLTYPE and after ENDHDR; both programs must accept
# the header with the same width, height, depth and maxval, or both
# refuse it.  One TAP line per position, listing the bytes that disagree.
# Then long PAM header lines (libnetpbm reads them in pieces of 254
# bytes): blank, comments, keywords padded, around each piece's end.
# Skips without pamfile.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"
if ! command -v pamfile >/dev/null 2>&1; then
    echo "1..0 # SKIP pamfile (netpbm) is not installed"
    exit 0
fi
# Plenty of pixels after any header: what the header says decides.
head -c 70000 /dev/zero >"$T/pixels"

# roicopy --dry-run makes no CUDA call; hide the devices all the same.
CUDA_VISIBLE_DEVICES=
export CUDA_VISIBLE_DEVICES
# Every ASCII byte, and the high bytes some locales call space (NEL 133,
# NBSP 160), 128 and 255: isspace() in the C locale, which libnetpbm
# uses, knows none above 127.
BYTES="$(seq 0 127) 128 133 160 255"

# geometry_pamfile FILE: "W H D MAXVAL", or "refused".
geometry_pamfile() {
    g=$(pamfile "$1" 2>/dev/null | sed -n \
        -e 's/.*PAM, \([0-9]*\) by \([0-9]*\) by \([0-9]*\) *maxval \([0-9]*\).*/\1 \2 \3 \4/p' \
        -e 's/.*PGM raw, \([0-9]*\) by \([0-9]*\) *maxval \([0-9]*\).*/\1 \2 1 \3/p' \
        -e 's/.*PPM raw, \([0-9]*\) by \([0-9]*\) *maxval \([0-9]*\).*/\1 \2 3 \3/p')
    echo "${g:-refused}"
}
geometry_roicopy() {
    g=$("$ROICOPY" --dry-run "$1" "$T/out.pam" 2>/dev/null |
        sed -n 's/^input:    .* (p[gpa]m, \([0-9]*\)x\([0-9]*\), \([0-9]*\) channels\{0,1\} x [0-9] bytes\{0,1\}, maxval \([0-9]*\).*/\1 \2 \3 \4/p')
    echo "${g:-refused}"
}

# judge: how pamfile ($a) and roicopy ($r) read $T/h.pnm; one more case (n).
judge() {
    a=$(geometry_pamfile "$T/h.pnm")
    r=$(geometry_roicopy "$T/h.pnm")
    n=$((n + 1))
}

# position NAME BEFORE AFTER: for every byte c of BYTES, the header BEFORE c AFTER
# (printf formats), then the pixels.
position() {
    name=$1 before=$2 after=$3
    bad= n=0 agreed=0 accepted=0
    for c in $BYTES; do
        oct=$(printf '%03o' $c)
        {
            # shellcheck disable=SC2059
            printf "$before\\$oct$after"
            cat "$T/pixels"
        } >"$T/h.pnm"
        judge
        if [ "$a" = "$r" ]; then
            agreed=$((agreed + 1))
            [ "$a" = refused ] || accepted=$((accepted + 1))
        else
            bad="$bad $c(pamfile: $a; roicopy: $r)"
        fi
    done
    if [ -z "$bad" ]; then
        pass "$name: all $n bytes read as pamfile reads them ($accepted accepted)"
    else
        fail "$name: $((n - agreed)) of $n bytes disagree"
        printf '#  %s\n' "$bad"
    fi
}

PAMREST='\nHEIGHT 3\nDEPTH 1\nMAXVAL 255\nENDHDR\n'
position "P5: the byte after the magic number" 'P5' '2 3 255\n'
position "P5: the byte between width and height" 'P5 2' '3 255\n'
position "P5: the byte after maxval" 'P5 2 3 255' ''
position "P5: the byte before a comment's text" 'P5 2 #' 'x\n3 255\n'
position "P6: the byte between height and maxval" 'P6 2 3' '255\n'
position "P7: the byte between WIDTH and its value" 'P7\nWIDTH' "2$PAMREST"
position "P7: the byte after the value" 'P7\nWIDTH 2' "$PAMREST"
# libnetpbm keeps 8 bytes of a keyword: "TUPLTYPE# X" is a TUPLTYPE line.
position "P7: the byte right after the keyword TUPLTYPE" 'P7\nTUPLTYPE' " X\nWIDTH 2$PAMREST"
position "P7: the byte that starts a header line" 'P7\n' "WIDTH 2$PAMREST"
position "P7: the byte after ENDHDR" 'P7\nWIDTH 2\nHEIGHT 3\nDEPTH 1\nMAXVAL 255\nENDHDR' '\n'

# run N C: N bytes of the character C.
run() { head -c "$1" /dev/zero | tr '\000' "$2"; }
bad= n=0 accepted=0
for len in 1 252 253 254 255 256 300 507 508 509 510 2000; do
    for kind in blank comment comment-blank value-padded keyword-padded blank-x; do
        {
            printf 'P7\nWIDTH 2\n'
            case $kind in
            blank) run "$len" ' ' ;;
            comment) printf '#'; run "$len" a ;;
            comment-blank) printf '#a'; run "$len" ' ' ;;
            value-padded) printf 'DEPTH 1'; run "$len" ' ' ;;
            keyword-padded) printf 'DEPTH'; run "$len" ' '; printf 1 ;;
            blank-x) run "$len" ' '; printf x ;;
            esac
            printf '\nHEIGHT 3\nDEPTH 1\nMAXVAL 255\nENDHDR\n'
            cat "$T/pixels"
        } >"$T/h.pnm"
        judge
        if [ "$a" != "$r" ]; then
            bad="$bad $kind/$len(pamfile: $a; roicopy: $r)"
        elif [ "$a" != refused ]; then
            accepted=$((accepted + 1))
        fi
    done
done
if [ -z "$bad" ]; then
    pass "P7: all $n long header lines read as pamfile reads them ($accepted accepted)"
else
    fail "P7: long header lines that disagree with pamfile"
    printf '#  %s\n' "$bad"
fi
finish
