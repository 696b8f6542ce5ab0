#!/bin/sh
# SPDX-License-Identifier: MIT
echo 1..0 # placeholder
