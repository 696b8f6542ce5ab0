#!/bin/sh
# SPDX-License-Identifier: MIT
# The GPU gate: without a device a GPU test skips (exit 0, "1..0 # SKIP no
# CUDA device: <reason>"); with CUXFER_REQUIRE_GPU=1 it fails instead.  On
# a machine with a GPU both runs must pass.
: "${top_builddir:=.}" "${top_srcdir:=.}"
prog="$top_builddir/tests/devices/gpu-smoke"
. "$top_srcdir/tests/lib/tap.sh"
out=$(env -u CUXFER_REQUIRE_GPU "$prog" 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^1\.\.0 # SKIP no CUDA device: .'; then
    pass "no device: skipped with a reason (exit 0)"
    out=$(CUXFER_REQUIRE_GPU=1 "$prog" 2>&1); rc=$?
    if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q '^Bail out!.*no CUDA device'; then
        pass "CUXFER_REQUIRE_GPU=1 turns the skip into a failure (exit $rc)"
    else
        fail "CUXFER_REQUIRE_GPU=1 did not fail (exit $rc)"
        printf '%s\n' "$out" | sed 's/^/# /'
    fi
elif [ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q 'SKIP\|not ok'; then
    pass "a device is present: the GPU test ran and passed"
    out=$(CUXFER_REQUIRE_GPU=1 "$prog" 2>&1); rc=$?
    if [ $rc -eq 0 ]; then pass "and passes with CUXFER_REQUIRE_GPU=1"
    else fail "fails with CUXFER_REQUIRE_GPU=1"; printf '%s\n' "$out" | sed 's/^/# /'; fi
else
    fail "unexpected result (exit $rc)"; printf '%s\n' "$out" | sed 's/^/# /'
    fail "# SKIP first run failed"
fi
finish 2
