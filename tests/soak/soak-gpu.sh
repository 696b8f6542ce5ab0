#!/bin/sh
# SPDX-License-Identifier: MIT
# A short, fixed-seed soak on the GPU (four host threads, at most 45 s),
# then its calls per public function against the header: every one must
# have been called (tests/soak/soak-coverage.sh); prints `1..0 # SKIP no
# CUDA device` without one.  `make soak` runs long ones (HACKING, "Soak").
: "${top_srcdir:=$(dirname "$0")/../..}"
exec "${SHELL:-/bin/sh}" "$top_srcdir/tests/soak/soak-coverage.sh" --shared-gpu --seed 26 --steps 1500 \
    --seconds 45 --threads 4
