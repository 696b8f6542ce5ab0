/* SPDX-License-Identifier: MIT */
/* The pageable guard: parsing of CUXFER_PAGEABLE, the three policies on
 * each kind of misuse (the warning's text, printed once per process per
 * kind; the error and its reason), and which pairs of memory kinds it
 * ignores.  The guard's decision is pure, so it is tested without a GPU;
 * pageable-guard-gpu.c observes it on real copies. */
#include <stdio.h>
#include <string.h>

static char logbuf[4096];
static int log_lines;
#define CUXFER_LOG(...)                                                        \
    (++log_lines, (void)snprintf(logbuf + strlen(logbuf),                      \
                                 sizeof logbuf - strlen(logbuf), __VA_ARGS__))
#include "tap.h"
#include <cuxfer.h>

extern int setenv(const char *, const char *, int);
extern int unsetenv(const char *);

static int env_policy(const char *value)
{
    if (value)
        setenv("CUXFER_PAGEABLE", value, 1);
    else
        unsetenv("CUXFER_PAGEABLE");
    cuxfer_impl_env_policy = 0; /* forget the parsed value (test only) */
    return cuxfer_pageable_policy();
}

int main(void)
{
    const cuxfer_memkind P = CUXFER_MEMORY_PAGEABLE, H = CUXFER_MEMORY_PINNED,
                         D = CUXFER_MEMORY_DEVICE, M = CUXFER_MEMORY_MANAGED,
                         U = CUXFER_MEMORY_UNKNOWN;
    plan(0);

    is_int(CUXFER_PAGEABLE_ALLOW, cuxfer_pageable_policy_parse("allow"), "parse allow");
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_pageable_policy_parse("warn"), "parse warn");
    is_int(CUXFER_PAGEABLE_ERROR, cuxfer_pageable_policy_parse("ERROR"), "parse ERROR (any case)");
    is_int(0, cuxfer_pageable_policy_parse("errors"), "'errors' is not a policy");
    is_int(0, cuxfer_pageable_policy_parse("err"), "'err' is not a policy");
    is_int(0, cuxfer_pageable_policy_parse(""), "empty is not a policy");
    is_int(0, cuxfer_pageable_policy_parse(NULL), "NULL is not a policy");

    is_int(CUXFER_PAGEABLE_WARN, env_policy(NULL), "default policy is WARN");
    is_int(CUXFER_PAGEABLE_ERROR, env_policy("error"), "CUXFER_PAGEABLE=error");
    is_int(CUXFER_PAGEABLE_ALLOW, env_policy("allow"), "CUXFER_PAGEABLE=allow");
    logbuf[0] = '\0';
    log_lines = 0;
    is_int(CUXFER_PAGEABLE_WARN, env_policy("loud"), "a bad value falls back to the default");
    contains(logbuf, "CUXFER_PAGEABLE=loud is not one of allow, warn, error",
             "and says so, naming the value");
    (void)cuxfer_pageable_policy();
    (void)cuxfer_pageable_policy();
    is_int(1, log_lines, "the bad value is reported once");

    /* Pairs the guard ignores. */
    is_int(cudaSuccess, cuxfer_impl_guard("c", D, H, CUXFER_PAGEABLE_ERROR), "pinned -> device passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", H, D, CUXFER_PAGEABLE_ERROR), "device -> pinned passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", D, D, CUXFER_PAGEABLE_ERROR), "device -> device passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", P, P, CUXFER_PAGEABLE_ERROR),
           "pageable -> pageable (no device side) passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", D, U, CUXFER_PAGEABLE_ERROR),
           "unknown memory is left to CUDA");

    /* ALLOW */
    logbuf[0] = '\0';
    is_int(cudaSuccess, cuxfer_impl_guard("cuxfer_copy_async", D, P, CUXFER_PAGEABLE_ALLOW),
           "ALLOW: pageable source passes");
    is_string("", logbuf, "ALLOW: silently");

    /* ERROR */
    is_int(cudaErrorInvalidValue, cuxfer_impl_guard("cuxfer_copy_async", D, P, CUXFER_PAGEABLE_ERROR),
           "ERROR: pageable source refused");
    contains(cuxfer_last_reason(), "cuxfer_copy_async: the source is pageable host memory",
             "reason names the call and the side");
    is_int(cudaErrorInvalidValue, cuxfer_impl_guard("cuxfer_copy2d_async", P, M, CUXFER_PAGEABLE_ERROR),
           "ERROR: pageable destination of a managed source refused");
    contains(cuxfer_last_reason(), "cuxfer_copy2d_async: the destination is pageable",
             "reason names the destination");
    is_string("", logbuf, "ERROR prints nothing (the caller gets the reason)");

    /* WARN: once per kind of misuse */
    log_lines = 0;
    is_int(cudaSuccess, cuxfer_impl_guard("cuxfer_copy2d_async", D, P, CUXFER_PAGEABLE_WARN),
           "WARN: pageable source passes");
    contains(logbuf, "cuxfer: warning: cuxfer_copy2d_async: the source is pageable host memory",
             "WARN: one line naming the call");
    ok(strchr(logbuf, '\n') == logbuf + strlen(logbuf) - 1, "the warning is one line");
    (void)cuxfer_impl_guard("cuxfer_copy_async", D, P, CUXFER_PAGEABLE_WARN);
    (void)cuxfer_impl_guard("cuxfer_copy2d_async", M, P, CUXFER_PAGEABLE_WARN);
    is_int(1, log_lines, "the same misuse is not reported again");
    is_int(cudaSuccess, cuxfer_impl_guard("cuxfer_copy_async", P, D, CUXFER_PAGEABLE_WARN),
           "WARN: pageable destination passes");
    is_int(2, log_lines, "a new kind of misuse gets its own line");
    contains(logbuf, "cuxfer_copy_async: the destination is pageable", "naming the destination");
    (void)cuxfer_impl_guard("cuxfer_copy_async", P, D, CUXFER_PAGEABLE_WARN);
    is_int(2, log_lines, "and only once");
    done_testing();
}
