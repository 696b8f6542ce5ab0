#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy takes exactly the P5, P6 and P7 headers libnetpbm takes (issue 13,
# items 6 and 7): each header variant below, followed by the pixels it
# promises (or fewer), goes through `roicopy --dry-run` and netpbm's
# `pamfile` and `pamtopam` (which reads every pixel), and the two must agree - both accept it, or roicopy refuses it with exit 3 where
# pamfile fails.  The expected verdict is written beside each variant too,
# so the test still means something where netpbm is missing: then each
# comparison is skipped (a wrong roicopy verdict still fails).
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

have_pamfile=yes
command -v pamfile >/dev/null 2>&1 && command -v pamtopam >/dev/null 2>&1 ||
    have_pamfile=no
if [ $have_pamfile = no ]; then
    echo "# netpbm (pamfile, pamtopam) is not installed: checking roicopy's verdicts only"
fi

H='P7\nWIDTH 2\nHEIGHT 2\n'
# variant VERDICT NAME 'printf format of the header' PIXEL_BYTES (the
# cases below are lines VERDICT|NAME|PIXEL_BYTES|HEADER, the header as a
# printf format, spaces kept)
variant() {
    want=$1 name=$2
    f="$T/v-$name"
    printf "$3" >"$f"
    head -c "$4" /dev/zero >>"$f"
    env CUDA_VISIBLE_DEVICES= "$ROICOPY" --dry-run "$f" "$T/out-any" >/dev/null 2>"$T/err"
    rc=$?
    case $rc in
    0) got=accept ;;
    3) got=refuse ;;
    *) got="exit $rc" ;;
    esac
    netpbm=$want
    if [ $have_pamfile = yes ]; then
        # pamfile checks the header (and, for some formats, the size);
        # pamtopam reads every pixel.
        if pamfile "$f" >/dev/null 2>"$T/perr" &&
            pamtopam <"$f" >/dev/null 2>>"$T/perr"; then
            netpbm=accept
        else
            netpbm=refuse
        fi
    fi
    if [ "$got" = "$want" ] && [ $have_pamfile = no ]; then
        skip_one "$name: no netpbm to compare with (roicopy: $got, as expected)"
    elif [ "$got" = "$netpbm" ] && [ "$got" = "$want" ]; then
        pass "$name: both ${got}"
    else
        fail "$name: roicopy $got, pamfile $netpbm, expected $want"
        diag_file "$T/err"
        [ $have_pamfile = yes ] && diag_file "$T/perr"
    fi
    # A refusal is one line naming the file.
    if [ "$got" = refuse ] && { [ "$(wc -l <"$T/err")" -ne 1 ] ||
        ! grep -qF "roicopy: $f: " "$T/err"; }; then
        fail "$name: the refusal is not one line naming the file"
        diag_file "$T/err"
    fi
}

# -- P5 and P6: numbers as pm_getuint() reads them --------------------------
while IFS='|' read -r want name bytes header; do
    variant "$want" "$name" "$header" "$bytes" </dev/null
done <<EOF
accept|plain.pgm|4|P5\n2 2\n255\n
accept|maxval-comment.pgm|4|P5\n2 2\n255#c\n
accept|maxval-comment.ppm|12|P6\n2 2\n255#c\n
accept|maxval-space.pgm|4|P5\n2 2\n255 
accept|maxval-tab.pgm|4|P5\n2 2\n255\t
accept|maxval-cr.pgm|4|P5\n2 2\n255\r
accept|maxval-letter.pgm|4|P5\n2 2\n255x
accept|one-line.pgm|4|P5 2 2 255\n
accept|width-comment.pgm|4|P5\n2#c\n2\n255\n
accept|height-comment.pgm|4|P5\n2 2#c\n255\n
accept|cr-comment.pgm|4|P5\n2 2\n#c\r255\n
accept|x-separator.pgm|4|P5\n2x2\n255\n
accept|vt-ff.pgm|4|P5\n2\v2\f255\n
accept|leading-zero.pgm|4|P5\n2 2\n0255\n
accept|maxval-65535.pgm|8|P5\n2 2\n65535\n
refuse|plus.pgm|4|P5\n+2 2\n255\n
refuse|zero-width.pgm|4|P5\n0 2\n255\n
refuse|maxval-0.pgm|4|P5\n2 2\n0\n
refuse|maxval-65536.pgm|8|P5\n2 2\n65536\n
refuse|short.pgm|3|P5\n2 2\n255\n
refuse|short.ppm|11|P6\n2 2\n255\n
EOF

# -- P7: lines as libnetpbm's readpaminitrest() reads them -------------------
while IFS='|' read -r want name bytes header; do
    variant "$want" "$name" "$header" "$bytes" </dev/null
done <<EOF
accept|pam.pam|4|${H}DEPTH 1\nMAXVAL 255\nENDHDR\n
accept|p7-crlf.pam|4|P7\r\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|p7-space.pam|4|P7 \nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|p7-junk.pam|4|P7 junk\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|crlf-lines.pam|4|P7\nWIDTH 2\r\nHEIGHT 2\r\nDEPTH 1\r\nMAXVAL 255\r\nENDHDR\r\n
accept|tab.pam|4|P7\nWIDTH\t2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|indented.pam|4|P7\n  WIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|blank-lines.pam|4|${H}DEPTH 1\n\n \t\nMAXVAL 255\nENDHDR\n
accept|comment.pam|4|${H}# a comment\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|plus.pam|4|P7\nWIDTH +2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|width-twice.pam|4|P7\nWIDTH 9\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
accept|endhdr-junk.pam|4|${H}DEPTH 1\nMAXVAL 255\nENDHDR junk\n
accept|rgb-depth4.pam|16|${H}DEPTH 4\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n
accept|rgba.pam|16|${H}DEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n
accept|gray-depth3.pam|12|${H}DEPTH 3\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n
accept|gray-alpha.pam|8|${H}DEPTH 2\nMAXVAL 1\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n
accept|bw.pam|4|${H}DEPTH 1\nMAXVAL 1\nTUPLTYPE BLACKANDWHITE\nENDHDR\n
accept|bw-depth2.pam|8|${H}DEPTH 2\nMAXVAL 1\nTUPLTYPE BLACKANDWHITE\nENDHDR\n
accept|lowercase-type.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE rgb\nENDHDR\n
accept|unknown-type.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE FOO\nENDHDR\n
accept|joined-types.pam|12|${H}DEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nTUPLTYPE X\nENDHDR\n
accept|control-type.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE a\001b\nENDHDR\n
accept|maxval-65535.pam|8|${H}DEPTH 1\nMAXVAL 65535\nENDHDR\n
refuse|rgba-depth1.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n
refuse|rgba-spaces-depth1.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE  RGB_ALPHA  \nENDHDR\n
refuse|rgb-depth2.pam|8|${H}DEPTH 2\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n
refuse|gray-alpha-depth1.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n
refuse|bw-maxval255.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE BLACKANDWHITE\nENDHDR\n
refuse|empty-type.pam|4|${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE\nENDHDR\n
refuse|two-numbers.pam|4|P7\nWIDTH 2 3\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
refuse|unknown-keyword.pam|4|P7\nWIDTHX 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
refuse|indented-comment.pam|4|P7\n #c\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
refuse|endhdrx.pam|4|${H}DEPTH 1\nMAXVAL 255\nENDHDRX\n
refuse|no-maxval.pam|4|${H}DEPTH 1\nENDHDR\n
refuse|no-depth.pam|4|${H}MAXVAL 255\nENDHDR\n
refuse|depth0.pam|4|${H}DEPTH 0\nMAXVAL 255\nENDHDR\n
refuse|width0.pam|4|P7\nWIDTH 0\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n
refuse|maxval0.pam|4|${H}DEPTH 1\nMAXVAL 0\nENDHDR\n
refuse|maxval-65536.pam|8|${H}DEPTH 1\nMAXVAL 65536\nENDHDR\n
refuse|short.pam|11|${H}DEPTH 3\nMAXVAL 255\nENDHDR\n
EOF

# Untrusted tuple types reach the terminal escaped.
printf "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE a\033[2Jb\nENDHDR\n" >"$T/esc.pam"
head -c 4 /dev/zero >>"$T/esc.pam"
"$ROICOPY" --dry-run "$T/esc.pam" "$T/o.pam" >"$T/plan" 2>&1
if grep -qF 'tupltype a\x1b[2Jb)' "$T/plan" && ! grep -q "$(printf '\033')" "$T/plan"; then
    pass "a tuple type with an escape sequence is printed escaped"
else
    fail "tuple type printed raw"; od -c "$T/plan" | sed -n 1,6p
fi
finish
