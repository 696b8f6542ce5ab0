/* SPDX-License-Identifier: MIT */
/* Two units built with different configuration values (this one with the
 * defaults, config-unit-b.c with every macro changed) share one state of
 * one layout: structs have one size, a long reason written in one unit
 * neither overflows nor disturbs the other's caches, and the registry is
 * one.  The pageable policy is per unit by design. */
#include "tap.h"
#include <cuxfer.h>

size_t unit_b_stager_size(void);
size_t unit_b_options_size(void);
void *unit_b_state(void);
void unit_b_fail(const char *s);
int unit_b_lookup(const void *p);
void unit_b_register(void *p, size_t n);
int unit_b_policy(void);

static char pinned_here[8192];

int main(void)
{
    char longer[700];
    size_t len;
    plan(10);
    is_int((long long)sizeof(cuxfer_stager), (long long)unit_b_stager_size(),
           "cuxfer_stager has one size in both units");
    is_int((long long)sizeof(cuxfer_stager_options), (long long)unit_b_options_size(),
           "cuxfer_stager_options has one size in both units");
    ok(unit_b_state() == (void *)cuxfer_impl_state_get(), "one process-wide state");

    /* This unit caches a classification, then unit b writes a reason
     * longer than the buffer: the cache must survive. */
    cuxfer_impl_reg_add(pinned_here, sizeof pinned_here, CUXFER_MEMORY_PINNED, -1);
    is_int(CUXFER_MEMORY_PINNED, cuxfer_impl_lookup(pinned_here + 10, NULL),
           "a registered range is pinned here");
    memset(longer, 'y', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    unit_b_fail(longer);
    len = strlen(cuxfer_last_reason());
    is_int(CUXFER_REASON_MAX - 1, (long long)len, "unit b's long reason is cut to %d bytes",
           CUXFER_REASON_MAX - 1);
    is_string("...", cuxfer_last_reason() + len - 3, "and ends in ...");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_impl_lookup(pinned_here + 20, NULL),
           "this unit's cache survives unit b's reason");
    is_int(CUXFER_MEMORY_PINNED, unit_b_lookup(pinned_here + 30),
           "unit b finds this unit's range");
    cuxfer_impl_reg_remove(pinned_here);
    is_int(CUXFER_MEMORY_UNKNOWN, unit_b_lookup(pinned_here + 30),
           "and forgets it when this unit removes it");
    is_int(CUXFER_PAGEABLE_ERROR, unit_b_policy(),
           "unit b keeps its own compiled-in pageable policy (documented)");
    done_testing();
}
