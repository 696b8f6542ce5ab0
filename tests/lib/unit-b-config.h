/* SPDX-License-Identifier: MIT */
/*
 * unit-b-config.h - include before cuxfer.h in the second unit of a test
 * that checks that units built with different configuration values share
 * one state (tests/config-unit-b.c, tests/internals-b.c): every
 * configuration macro set otherwise than in the first unit; the unit's
 * messages are only counted, in unit_b_logged.
 */
#ifndef CUXFER_TESTS_UNIT_B_CONFIG_H
#define CUXFER_TESTS_UNIT_B_CONFIG_H
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
#endif
