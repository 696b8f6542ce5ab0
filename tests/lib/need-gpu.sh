# SPDX-License-Identifier: MIT
# tests/lib/need-gpu.sh - sourced first by a shell test that needs a GPU:
# without a device it prints "1..0 # SKIP no CUDA device: <reason>" and
# ends the test (exit 0); with CUXFER_REQUIRE_GPU set and no device, or
# when the probe itself fails, it prints why and ends it with status 1
# (tests/lib/gpu-probe decides; tests/devices/gpu-gate.sh proves it).
: "${top_builddir:=.}"
probe=$("$top_builddir/tests/lib/gpu-probe" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    printf '%s\n' "$probe"
    exit 1
fi
if [ -n "$probe" ]; then
    printf '%s\n' "$probe"
    exit 0
fi
