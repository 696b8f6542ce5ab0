/* SPDX-License-Identifier: MIT */
/* The pageable guard's policy: parsing of CUXFER_PAGEABLE values, and the
 * environment read on the first call.  The guard's decision for each pair
 * of memory kinds under each policy, and re-reading the environment, need
 * the header's private state: tests/state/internals.c checks them;
 * pageable-guard-gpu.c observes the guard on real copies. */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include <cuxfer.h>

extern int setenv(const char *, const char *, int);

int main(void)
{
    plan(0);

    is_int(CUXFER_PAGEABLE_ALLOW, cuxfer_pageable_policy_parse("allow"), "parse allow");
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_pageable_policy_parse("warn"), "parse warn");
    is_int(CUXFER_PAGEABLE_ERROR, cuxfer_pageable_policy_parse("ERROR"), "parse ERROR (any case)");
    is_int(0, cuxfer_pageable_policy_parse("errors"), "'errors' is not a policy");
    is_int(0, cuxfer_pageable_policy_parse("err"), "'err' is not a policy");
    is_int(0, cuxfer_pageable_policy_parse(""), "empty is not a policy");
    is_int(0, cuxfer_pageable_policy_parse(NULL), "NULL is not a policy");

    /* The process's policy: read from the environment on the first call
     * and kept for the life of the process. */
    setenv("CUXFER_PAGEABLE", "error", 1);
    is_int(CUXFER_PAGEABLE_ERROR, cuxfer_pageable_policy(), "CUXFER_PAGEABLE=error on the first call");
    setenv("CUXFER_PAGEABLE", "allow", 1);
    is_int(CUXFER_PAGEABLE_ERROR, cuxfer_pageable_policy(), "a later change is not seen");
    done_testing();
}
