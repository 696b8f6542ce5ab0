#!/bin/sh
# SPDX-License-Identifier: MIT
# The GPU gate: without a device a GPU test skips (exit 0, "1..0 # SKIP no
# CUDA device: <reason>"); with CUXFER_REQUIRE_GPU=1 it fails instead.  On
# a machine with a GPU both runs must pass.
: "${top_builddir:=.}"
prog="$top_builddir/tests/devices/gpu-smoke"
echo "1..2"
out=$(env -u CUXFER_REQUIRE_GPU "$prog" 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^1\.\.0 # SKIP no CUDA device: .'; then
    echo "ok 1 - no device: skipped with a reason (exit 0)"
    out=$(CUXFER_REQUIRE_GPU=1 "$prog" 2>&1); rc=$?
    if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q '^Bail out!.*no CUDA device'; then
        echo "ok 2 - CUXFER_REQUIRE_GPU=1 turns the skip into a failure (exit $rc)"
    else
        echo "not ok 2 - CUXFER_REQUIRE_GPU=1 did not fail (exit $rc)"
        printf '%s\n' "$out" | sed 's/^/# /'
    fi
elif [ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q 'SKIP\|not ok'; then
    echo "ok 1 - a device is present: the GPU test ran and passed"
    out=$(CUXFER_REQUIRE_GPU=1 "$prog" 2>&1); rc=$?
    if [ $rc -eq 0 ]; then echo "ok 2 - and passes with CUXFER_REQUIRE_GPU=1"
    else echo "not ok 2 - fails with CUXFER_REQUIRE_GPU=1"; printf '%s\n' "$out" | sed 's/^/# /'; fi
else
    echo "not ok 1 - unexpected result (exit $rc)"; printf '%s\n' "$out" | sed 's/^/# /'
    echo "not ok 2 - # SKIP first run failed"
fi
