/* SPDX-License-Identifier: MIT */
/* The second unit of config-across-units, built with every configuration
 * macro set differently from the first. */
#include <stdio.h>
static int unit_b_logged;
#define CUXFER_API static __attribute__((unused))
#define CUXFER_LOG(...) ((void)++unit_b_logged, (void)snprintf(NULL, 0, __VA_ARGS__))
#define CUXFER_ASSERT(c) ((void)0)
#define CUXFER_ON_ERROR(err) ((void)(err))
#define CUXFER_DEBUG_SYNC 1
#define CUXFER_PAGEABLE_POLICY CUXFER_PAGEABLE_ERROR
#define CUXFER_DEFAULT_STREAM_POLICY CUXFER_PAGEABLE_ALLOW
#define CUXFER_REASON_MAX 512
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
