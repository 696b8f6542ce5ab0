# SPDX-License-Identifier: MIT
# tap.sh - sourced first by a shell test (tests/lib/roicopy-lib.sh sources
# it for the roicopy tests): a scratch directory $T that is always
# removed, TAP points and `finish`, which prints the plan at the end
# ("1..N"), as TAP allows.  The shell side of tests/lib/tap.h.
#
#   pass DESC / fail DESC        one point
#   skip_one REASON              a skipped point
#   try DESC COMMAND...          passes when COMMAND succeeds (its output
#                                as diagnostics when it fails)
#   refused DESC COMMAND...      passes when COMMAND fails
#   point STATUS DESC [FILE]     passes when STATUS is 0 (`point $? ...`
#                                after a compound test; FILE as
#                                diagnostics when it fails)
#   diag_file FILE               FILE as diagnostics
#   have COMMAND                 COMMAND's first word runs here ("$NVCC"
#                                may carry flags; empty: no)

: "${top_srcdir:=.}"
: "${top_builddir:=.}"

# Scratch space under TMPDIR or /tmp, never in $(srcdir), which distcheck
# makes read-only.
T=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-test.XXXXXX") || {
    echo "Bail out! mktemp failed"
    exit 1
}
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

tap_n=0
tap_failed=0
pass() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
fail() {
    tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
    echo "not ok $tap_n - $*"
}
skip_one() { tap_n=$((tap_n + 1)); echo "ok $tap_n - # SKIP $*"; }
diag_file() { sed 's/^/#   /' "$1"; }
finish() { echo "1..$tap_n"; exit 0; }

try() {
    tap_desc=$1
    shift
    if "$@" >"$T/try.log" 2>&1; then
        pass "$tap_desc"
    else
        fail "$tap_desc"
        head -n 60 "$T/try.log" | sed 's/^/#   /'
    fi
}
refused() {
    tap_desc=$1
    shift
    if "$@" >"$T/try.log" 2>&1; then fail "$tap_desc"; else pass "$tap_desc"; fi
}

point() {
    if [ "$1" = 0 ]; then pass "$2"; else fail "$2"; [ -z "${3:-}" ] || diag_file "$3"; fi
}

first_word() { set -- $1; echo "$1"; }
have() { [ -n "$1" ] && command -v "$(first_word "$1")" >/dev/null 2>&1; }
