/* SPDX-License-Identifier: MIT */
/*
 * log-capture.h - include before cuxfer.h: the header's messages
 * (CUXFER_LOG) go into logbuf instead of stderr, and log_lines counts
 * them, so a test can check what was said and how often.
 */
#ifndef CUXFER_TESTS_LOG_CAPTURE_H
#define CUXFER_TESTS_LOG_CAPTURE_H
#include <stdio.h>
#include <string.h>

static char logbuf[4096];
static int log_lines;
#define CUXFER_LOG(...)                                                        \
    (++log_lines, (void)snprintf(logbuf + strlen(logbuf),                      \
                                 sizeof logbuf - strlen(logbuf), __VA_ARGS__))
#endif
