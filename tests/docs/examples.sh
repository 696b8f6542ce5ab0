#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the programs of examples/ as one TAP test: each verifies its own
# result and exits 0 (right), 1 (wrong) or 77 (no CUDA device).  77 is a
# skip unless CUXFER_REQUIRE_GPU asks for a device; an example that was not
# built (its kernels need nvcc) is a skip.
: "${top_builddir:=.}"
examples="roi-tiles async-api simple-streams simple-callback simple-multi-copy"
n=0
for e in $examples; do n=$((n + 1)); done
echo "1..$n"
i=0
for e in $examples; do
    i=$((i + 1))
    prog="$top_builddir/examples/$e"
    if [ ! -x "$prog" ]; then
        echo "ok $i - $e # SKIP not built (its kernels need nvcc)"
        continue
    fi
    out=$("$prog" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    if [ "$rc" -eq 0 ]; then
        echo "ok $i - $e verified its result"
    elif [ "$rc" -eq 77 ] && [ "${CUXFER_REQUIRE_GPU:-0}" -lt 1 ] 2>/dev/null; then
        echo "ok $i - $e # SKIP no CUDA device"
    else
        echo "not ok $i - $e exited $rc"
    fi
done
exit 0
