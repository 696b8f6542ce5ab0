#!/bin/sh
# SPDX-License-Identifier: MIT
# Tests use the header's public names only: no source under tests/, the
# helpers in tests/lib included, names a private identifier (cuxfer_ or
# CUXFER_ followed by impl_ or IMPL_), except tests/state/internals.c, the one test of the
# private state.  A test that needs an internal belongs there, or better,
# the header needs a public call.  (The pattern is built in pieces so that
# this file does not match itself.)
: "${top_srcdir:=.}"
impl=impl IMPL=IMPL
pat="(cuxfer_${impl}_|CUXFER_${IMPL}_)"
. "$top_srcdir/tests/lib/tap.sh"
# Sources only: an in-tree build leaves objects and binaries in tests/.
found=$(cd "$top_srcdir" && find tests -type f \( -name '*.c' -o -name '*.h' -o \
    -name '*.cu' -o -name '*.cc' -o -name '*.cpp' -o -name '*.sh' \) \
    ! -path tests/state/internals.c -exec grep -nE "$pat" {} + 2>/dev/null)
if [ -z "$found" ]; then
    pass "no test but tests/state/internals.c uses a private name"
else
    fail "private names outside tests/state/internals.c:"
    printf '%s\n' "$found" | sed 's/^/# /'
fi
# The check can fail: the internals test itself is found by the same grep.
if grep -qE "$pat" "$top_srcdir/tests/state/internals.c"; then
    pass "the same search finds the internals test's private names"
else
    fail "the search finds nothing in tests/state/internals.c: is the pattern right?"
fi
finish 2
