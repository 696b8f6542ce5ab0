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
# variant VERDICT NAME 'printf format of the header' PIXEL_BYTES
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
variant accept plain.pgm 'P5\n2 2\n255\n' 4
variant accept maxval-comment.pgm 'P5\n2 2\n255#c\n' 4
variant accept maxval-comment.ppm 'P6\n2 2\n255#c\n' 12
variant accept maxval-space.pgm 'P5\n2 2\n255 ' 4
variant accept maxval-tab.pgm 'P5\n2 2\n255\t' 4
variant accept maxval-cr.pgm 'P5\n2 2\n255\r' 4
variant accept maxval-letter.pgm 'P5\n2 2\n255x' 4
variant accept one-line.pgm 'P5 2 2 255\n' 4
variant accept width-comment.pgm 'P5\n2#c\n2\n255\n' 4
variant accept height-comment.pgm 'P5\n2 2#c\n255\n' 4
variant accept cr-comment.pgm 'P5\n2 2\n#c\r255\n' 4
variant accept x-separator.pgm 'P5\n2x2\n255\n' 4
variant accept vt-ff.pgm 'P5\n2\v2\f255\n' 4
variant accept leading-zero.pgm 'P5\n2 2\n0255\n' 4
variant accept maxval-65535.pgm 'P5\n2 2\n65535\n' 8
variant refuse plus.pgm 'P5\n+2 2\n255\n' 4
variant refuse zero-width.pgm 'P5\n0 2\n255\n' 4
variant refuse maxval-0.pgm 'P5\n2 2\n0\n' 4
variant refuse maxval-65536.pgm 'P5\n2 2\n65536\n' 8
variant refuse short.pgm 'P5\n2 2\n255\n' 3
variant refuse short.ppm 'P6\n2 2\n255\n' 11

# -- P7: lines as libnetpbm's readpaminitrest() reads them -------------------
variant accept pam.pam "${H}DEPTH 1\nMAXVAL 255\nENDHDR\n" 4
variant accept p7-crlf.pam 'P7\r\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept p7-space.pam 'P7 \nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept p7-junk.pam 'P7 junk\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept crlf-lines.pam 'P7\nWIDTH 2\r\nHEIGHT 2\r\nDEPTH 1\r\nMAXVAL 255\r\nENDHDR\r\n' 4
variant accept tab.pam 'P7\nWIDTH\t2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept indented.pam 'P7\n  WIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept blank-lines.pam "${H}DEPTH 1\n\n \t\nMAXVAL 255\nENDHDR\n" 4
variant accept comment.pam "${H}# a comment\nDEPTH 1\nMAXVAL 255\nENDHDR\n" 4
variant accept plus.pam 'P7\nWIDTH +2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept width-twice.pam 'P7\nWIDTH 9\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant accept endhdr-junk.pam "${H}DEPTH 1\nMAXVAL 255\nENDHDR junk\n" 4
variant accept rgb-depth4.pam "${H}DEPTH 4\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n" 16
variant accept rgba.pam "${H}DEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" 16
variant accept gray-depth3.pam "${H}DEPTH 3\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n" 12
variant accept gray-alpha.pam "${H}DEPTH 2\nMAXVAL 1\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n" 8
variant accept bw.pam "${H}DEPTH 1\nMAXVAL 1\nTUPLTYPE BLACKANDWHITE\nENDHDR\n" 4
variant accept bw-depth2.pam "${H}DEPTH 2\nMAXVAL 1\nTUPLTYPE BLACKANDWHITE\nENDHDR\n" 8
variant accept lowercase-type.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE rgb\nENDHDR\n" 4
variant accept unknown-type.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE FOO\nENDHDR\n" 4
variant accept joined-types.pam "${H}DEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nTUPLTYPE X\nENDHDR\n" 12
variant accept control-type.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE a\001b\nENDHDR\n" 4
variant accept maxval-65535.pam "${H}DEPTH 1\nMAXVAL 65535\nENDHDR\n" 8
variant refuse rgba-depth1.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" 4
variant refuse rgba-spaces-depth1.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE  RGB_ALPHA  \nENDHDR\n" 4
variant refuse rgb-depth2.pam "${H}DEPTH 2\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n" 8
variant refuse gray-alpha-depth1.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n" 4
variant refuse bw-maxval255.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE BLACKANDWHITE\nENDHDR\n" 4
variant refuse empty-type.pam "${H}DEPTH 1\nMAXVAL 255\nTUPLTYPE\nENDHDR\n" 4
variant refuse two-numbers.pam 'P7\nWIDTH 2 3\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant refuse unknown-keyword.pam 'P7\nWIDTHX 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant refuse indented-comment.pam 'P7\n #c\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant refuse endhdrx.pam "${H}DEPTH 1\nMAXVAL 255\nENDHDRX\n" 4
variant refuse no-maxval.pam "${H}DEPTH 1\nENDHDR\n" 4
variant refuse no-depth.pam "${H}MAXVAL 255\nENDHDR\n" 4
variant refuse depth0.pam "${H}DEPTH 0\nMAXVAL 255\nENDHDR\n" 4
variant refuse width0.pam 'P7\nWIDTH 0\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nENDHDR\n' 4
variant refuse maxval0.pam "${H}DEPTH 1\nMAXVAL 0\nENDHDR\n" 4
variant refuse maxval-65536.pam "${H}DEPTH 1\nMAXVAL 65536\nENDHDR\n" 8
variant refuse short.pam "${H}DEPTH 3\nMAXVAL 255\nENDHDR\n" 11

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
