/* SPDX-License-Identifier: MIT */
/* The second unit of config-across-units, built with every configuration
 * macro set differently from the first. */
#include "unit-b-config.h"
#include <cuxfer.h>

size_t unit_b_stager_size(void);
size_t unit_b_options_size(void);
const void *unit_b_reason_at(void);
void unit_b_fail(size_t width);
int unit_b_policy(void);

size_t unit_b_stager_size(void) { return sizeof(cuxfer_stager); }
size_t unit_b_options_size(void) { return sizeof(cuxfer_stager_options); }
/* Where this unit finds the calling thread's reason text: the same
 * address in both units if they share the one state. */
const void *unit_b_reason_at(void) { return cuxfer_last_reason(); }
/* A refused public call whose reason names `width`. */
void unit_b_fail(size_t width)
{
    static char buf[8];
    cuxfer_view v;
    (void)cuxfer_view_wrap(&v, buf, 8, width, 1, 1);
}
int unit_b_policy(void) { return cuxfer_pageable_policy(); }
