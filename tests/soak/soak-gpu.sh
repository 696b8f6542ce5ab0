#!/bin/sh
# SPDX-License-Identifier: MIT
# A short, fixed-seed soak on the GPU (four host threads, at most 45 s);
# prints `1..0 # SKIP no CUDA device` without one.  `make soak` runs long
# ones (HACKING, "Soak").
exec "${top_builddir:-.}/tests/soak/soak" --seed 26 --steps 1500 --seconds 45 --threads 4
