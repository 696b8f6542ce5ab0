/* SPDX-License-Identifier: MIT */
/* Two units built with different configuration values (this one with the
 * defaults, config-unit-b.c with every macro changed) share one state of
 * one layout: structs have one size, both find the calling thread's
 * reason text at one address, and a reason written in one unit is read in
 * the other.  The pageable policy is per unit by design.  (That a long
 * reason written in unit b neither overflows nor disturbs this unit's
 * caches, and that the registry is one, needs the private registry
 * without a GPU: tests/state/internals.c checks it with a second unit.) */
#include <stdio.h>

#include "tap.h"
#include <cuxfer.h>

size_t unit_b_stager_size(void);
size_t unit_b_options_size(void);
const void *unit_b_reason_at(void);
void unit_b_fail(size_t width);
int unit_b_policy(void);

int main(void)
{
    char want[64];
    plan(6);
    is_int((long long)sizeof(cuxfer_stager), (long long)unit_b_stager_size(),
           "cuxfer_stager has one size in both units");
    is_int((long long)sizeof(cuxfer_stager_options), (long long)unit_b_options_size(),
           "cuxfer_stager_options has one size in both units");
    ok(unit_b_reason_at() == (const void *)cuxfer_last_reason(),
       "both units find this thread's reason at one address: one state");
    cuxfer_clear_reason();
    unit_b_fail(4242);
    snprintf(want, sizeof want, "row of %d bytes", 4242);
    contains(cuxfer_last_reason(), want, "this unit reads the reason unit b wrote");
    cuxfer_clear_reason();
    is_string("", (const char *)unit_b_reason_at(), "and unit b sees this unit clear it");
    is_int(CUXFER_PAGEABLE_ERROR, unit_b_policy(),
           "unit b keeps its own compiled-in pageable policy (documented)");
    done_testing();
}
