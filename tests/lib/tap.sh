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
#   diag_file FILE [N]           FILE (its last N lines) as diagnostics
#   relay <FILE                  FILE's own unnumbered points, each one of
#                                ours: "ok - DESC", "not ok - DESC", "ok -
#                                # SKIP REASON"; its other lines as
#                                diagnostics; status 1 when it held no
#                                point.  Redirect, never pipe, into it: a
#                                pipeline's count would be lost
#   finish [N]                   the plan, last; with N, first a failing
#                                point unless exactly N points ran (for a
#                                test whose branches must each give all
#                                their points)
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
diag_file() {
    if [ -n "${2:-}" ]; then tail -n "$2" "$1"; else cat "$1"; fi | sed 's/^/#   /'
}
finish() {
    if [ -n "${1:-}" ] && [ "$tap_n" -ne "$1" ]; then
        fail "planned $1 points, ran $tap_n"
    fi
    echo "1..$tap_n"
    exit 0
}

relay() {
    tap_relayed=0
    while IFS= read -r tap_line; do
        case $tap_line in
        "ok - # SKIP "*) skip_one "${tap_line#ok - # SKIP }" ;;
        "ok - "*) pass "${tap_line#ok - }" ;;
        "not ok - "*) fail "${tap_line#not ok - }" ;;
        "#"*) printf '%s\n' "$tap_line"; continue ;;
        *) printf '# %s\n' "$tap_line"; continue ;;
        esac
        tap_relayed=$((tap_relayed + 1))
    done
    [ "$tap_relayed" -gt 0 ]
}

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
