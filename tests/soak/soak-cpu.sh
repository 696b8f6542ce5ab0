#!/bin/sh
# SPDX-License-Identifier: MIT
# The soak without a device: views, ROIs, the copy and ROI checks, size
# classes, policies, the planner's choice, option resolution and every
# refusal made before the GPU is touched, from three threads, checked
# against the model (tests/soak/model.c); then its calls per public
# function against the header (tests/soak/soak-coverage.sh).
: "${top_srcdir:=$(dirname "$0")/../..}"
exec "${SHELL:-/bin/sh}" "$top_srcdir/tests/soak/soak-coverage.sh" --cpu-only --seed 26 \
    --steps 20000 --threads 3
