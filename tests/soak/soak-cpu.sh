#!/bin/sh
# SPDX-License-Identifier: MIT
# The soak without a device: views, ROIs, the copy and ROI checks, size
# classes, policies and every refusal made before the GPU is touched, from
# three threads, checked against the model (tests/soak/model.c).
exec "${top_builddir:-.}/tests/soak/soak" --cpu-only --seed 26 --steps 20000 --threads 3
