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
void *unit_b_state(void);
void unit_b_fail(const char *s);
int unit_b_lookup(const void *p);
void unit_b_register(void *p, size_t n);
int unit_b_policy(void);

size_t unit_b_stager_size(void) { return sizeof(cuxfer_stager); }
size_t unit_b_options_size(void) { return sizeof(cuxfer_stager_options); }
void *unit_b_state(void) { return cuxfer_impl_state_get(); }
void unit_b_fail(const char *s) { (void)cuxfer_impl_fail(cudaErrorInvalidValue, "%s", s); }
int unit_b_lookup(const void *p) { return (int)cuxfer_impl_lookup(p, NULL); }
void unit_b_register(void *p, size_t n) { cuxfer_impl_reg_add(p, n, CUXFER_MEMORY_PINNED, -1); }
int unit_b_policy(void) { return cuxfer_pageable_policy(); }
