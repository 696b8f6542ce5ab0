#!/bin/sh
# SPDX-License-Identifier: MIT
# roicopy says which formats this build has (PNG and TIFF are optional) and
# offers no other: --version lists them and names the Debian package of
# each one left out; --help lists the same and mentions no format left
# out; an output whose extension names no format of this build (o.jpg) is
# a usage error that lists the extensions it does know (for --stack FILE
# too), unless --format names the format.  Run it against builds with and without libpng and
# libtiff to see both sides.
. "${top_srcdir:-.}/tests/lib/roicopy-lib.sh"

G="$SAMPLES/gray-97x61.pgm"
formats=$("$ROICOPY" --version | sed -n 's/^formats: //p')
without=$("$ROICOPY" --version | sed -n 's/^without: //p')
"$ROICOPY" --help >"$T/help" 2>&1

# built NAME: is NAME among this build's formats?
built() { case " $formats " in *" $1 "*) true ;; *) false ;; esac; }

for f in png tiff; do
    pkg=libpng-dev
    [ $f = tiff ] && pkg=libtiff-dev
    if built $f; then
        case " $without " in
        *" $f "*) fail "$f is built and also listed as without: '$without'" ;;
        *) pass "$f is built: --version lists it, not under without:" ;;
        esac
    else
        case " $without " in
        *" $f ($pkg)"*) pass "$f is not built: --version's without: names $pkg" ;;
        *) fail "$f is not built: --version's without: '$without' lacks '$f ($pkg)'" ;;
        esac
        # Only the "without:" part of the formats line may name it.
        if sed 's/; without: .*//' "$T/help" | grep -qi "$f\|\.tif\b"; then
            fail "--help mentions $f, which this build lacks"
            grep -i "$f" "$T/help" | sed 's/^/#   /'
        else
            pass "--help does not offer $f, which this build lacks"
        fi
    fi
done
if grep -q "^Formats of this build: ${formats}[.;]" "$T/help"; then
    pass "--help lists the formats --version lists ($formats)"
else
    fail "--help lists the formats --version lists ($formats)"; diag_file "$T/help"
fi

# The extensions this build writes, as the error must list them.
exts=".pgm .ppm .pam .raw"
built png && exts="$exts .png"
built tiff && exts="$exts .tif .tiff"
expect_error 2 "$T/o.jpg: unknown output extension \".jpg\": this build writes $exts (or give --format)" \
    "o.jpg is refused, naming the known extensions" -- --dry-run "$G" "$T/o.jpg"
[ -e "$T/o.jpg" ] && fail "o.jpg was created"
expect_error 2 "unknown output extension \".JPEG\"" "O.JPEG is refused too" \
    -- "$G" "$T/O.JPEG"
expect_error 2 "$T/s.jpg: unknown output extension \".jpg\"" "--stack s.jpg too" \
    -- --tiles 16x16 --stack "$T/s.jpg" "$G"
if "$ROICOPY" --dry-run --format pgm "$G" "$T/o.jpg" >"$T/plan" 2>"$T/err" &&
    grep -q "^output: .*o.jpg (pgm)" "$T/plan"; then
    pass "--format pgm writes o.jpg as PGM: an explicit format wins"
else
    fail "--format pgm o.jpg"; diag_file "$T/plan"; diag_file "$T/err"
fi
if "$ROICOPY" --dry-run "$G" "$T/plain" >"$T/plan" 2>"$T/err" &&
    grep -q "^output: .*plain (pgm)" "$T/plan" &&
    "$ROICOPY" --dry-run "$G" "$T/.hidden" >"$T/plan" 2>"$T/err" &&
    grep -q "^output: .*\.hidden (pgm)" "$T/plan"; then
    pass "a name without an extension (plain, .hidden) keeps the input's format"
else
    fail "a name without an extension keeps the input's format"; diag_file "$T/err"
fi
if "$ROICOPY" --dry-run "$G" "$T/O.PGM" >"$T/plan" 2>"$T/err"; then
    pass "a known extension in capitals (O.PGM) is known"
else
    fail "O.PGM"; diag_file "$T/err"
fi
finish
