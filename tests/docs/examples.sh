#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the programs of examples/ as one TAP test: each verifies its own
# result and exits 0 (right), 1 (wrong) or 77 (no CUDA device).  77 is a
# skip unless CUXFER_REQUIRE_GPU asks for a device; an example that was not
# built (its kernels need nvcc) is a skip.
. "${top_srcdir:-.}/tests/lib/tap.sh"
examples="roi-tiles async-api simple-streams simple-callback simple-multi-copy"
for e in $examples; do
    prog="$top_builddir/examples/$e"
    if [ ! -x "$prog" ]; then
        skip_one "$e: not built (its kernels need nvcc)"
        continue
    fi
    out=$("$prog" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    if [ "$rc" -eq 0 ]; then
        pass "$e verified its result"
    elif [ "$rc" -eq 77 ] && [ "${CUXFER_REQUIRE_GPU:-0}" -lt 1 ] 2>/dev/null; then
        skip_one "$e: no CUDA device"
    else
        fail "$e exited $rc"
    fi
done
finish
