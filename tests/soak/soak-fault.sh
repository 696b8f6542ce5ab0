#!/bin/sh
# SPDX-License-Identifier: MIT
# Fault injection: a kernel that faults (in a child process) under a latch,
# a host function and a timer; skipped without a device.
exec "${top_builddir:-.}/tests/soak/soak" --fault
