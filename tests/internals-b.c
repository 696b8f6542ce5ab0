/* SPDX-License-Identifier: MIT */
/* The second unit of tests/internals: the same source, built with every
 * configuration value set otherwise (see INTERNALS_UNIT_B there). */
#define INTERNALS_UNIT_B 1
#include "internals.c"
