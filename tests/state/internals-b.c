/* SPDX-License-Identifier: MIT */
/* The second unit of tests/state/internals: the same source, built with every
 * configuration value set otherwise (see INTERNALS_UNIT_B there). */
/* It is also the strict ISO C unit: no feature macro, whatever the build
 * line defined, so the header meets gcc -std=c99 as cuxfer(3) shows it. */
#undef _POSIX_C_SOURCE
#undef _XOPEN_SOURCE
#undef _DEFAULT_SOURCE
#undef _GNU_SOURCE
#define INTERNALS_UNIT_B 1
#include "internals.c"
