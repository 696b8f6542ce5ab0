/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a tiny Test Anything Protocol producer for cuxfer's tests.
 *
 * Tests print TAP on stdout for Automake's tap-driver.sh.  A test that
 * cannot run (no GPU) calls skip_all(), which prints "1..0 # SKIP reason"
 * and exits 0: any non-zero exit is an ERROR for tap-driver.sh.
 * Modelled on c-tap-harness's basic.h, much smaller.
 *
 * TAP_ONLY=PATTERN in the environment runs one case for debugging: only
 * the test points whose name matches PATTERN (a shell glob, fnmatch(3),
 * matched anywhere in the name) are reported; every other one prints
 * "ok N # SKIP not selected: NAME" and cannot fail.  The numbering and
 * the plan stay as they are, so "not ok 12" is still point 12.
 *     TAP_ONLY='PACK' tests/planner/strategy-choice
 *     TAP_ONLY='pitch 16*SPAN' make check TESTS=tests/planner/strategy-choice
 */
#ifndef CUXFER_TESTS_TAP_H
#define CUXFER_TESTS_TAP_H

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TAP_NORETURN __attribute__((noreturn))
#define TAP_UNUSED __attribute__((unused))
#else
#define TAP_PRINTF(f, a)
#define TAP_NORETURN
#define TAP_UNUSED
#endif

static int tap_planned;
static int tap_count;
static int tap_failed;

static TAP_UNUSED void tap_finish(void)
{
    if (tap_planned > 0 && tap_count != tap_planned)
        printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
    fflush(stdout);
}

/* plan(n): announce n tests; plan(0) means "the plan comes at the end". */
static TAP_UNUSED void plan(int n)
{
    tap_planned = n;
    if (n > 0)
        printf("1..%d\n", n);
    fflush(stdout);
}

/* done_testing(): print a trailing plan (after plan(0)) and exit with
 * the number of failures, capped, as c-tap-harness does. */
static TAP_UNUSED TAP_NORETURN void done_testing(void)
{
    if (tap_planned == 0)
        printf("1..%d\n", tap_count);
    tap_finish();
    exit(tap_failed > 0 || (tap_planned > 0 && tap_count != tap_planned));
}

static TAP_UNUSED TAP_PRINTF(1, 2) void diag(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* Is the test point called name selected by TAP_ONLY (see the top)? */
static TAP_UNUSED int tap_selected(const char *name)
{
    const char *pat = getenv("TAP_ONLY");
    char glob[512];
    if (!pat || !*pat)
        return 1;
    snprintf(glob, sizeof glob, "*%s*", pat);
    return fnmatch(glob, name, 0) == 0;
}

/* One test point; returns 1 when it is a reported failure (to explain). */
static TAP_UNUSED int tap_vresult(int pass, const char *fmt, va_list ap)
{
    char name[1024];
    vsnprintf(name, sizeof name, fmt, ap);
    ++tap_count;
    if (!tap_selected(name)) {
        printf("ok %d # SKIP not selected: %s\n", tap_count, name);
        fflush(stdout);
        return 0;
    }
    if (!pass)
        ++tap_failed;
    printf("%s %d - %s\n", pass ? "ok" : "not ok", tap_count, name);
    fflush(stdout);
    return !pass;
}

/* ok(cond, name...): one test point; returns cond so callers can chain. */
static TAP_UNUSED TAP_PRINTF(2, 3) int ok(int pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vresult(pass, fmt, ap);
    va_end(ap);
    return pass;
}

static TAP_UNUSED TAP_PRINTF(3, 4) int is_int(long long want, long long got,
                                             const char *fmt, ...)
{
    va_list ap;
    int pass = want == got, explain;
    va_start(ap, fmt);
    explain = tap_vresult(pass, fmt, ap);
    va_end(ap);
    if (explain)
        diag("  wanted: %lld\n#      got: %lld", want, got);
    return pass;
}

/* is_string(want, got, name...): the strings are equal.
 * contains(hay, needle, name...): hay holds needle as a substring.
 * On a reported failure both name the two strings (NULL shown as
 * "(null)"). */
enum { TAP_STR_EQUAL, TAP_STR_CONTAINS };

static TAP_UNUSED TAP_PRINTF(4, 5) int tap_strcheck(int how, const char *a, const char *b,
                                                     const char *fmt, ...)
{
    va_list ap;
    int pass = a && b && (how == TAP_STR_EQUAL ? strcmp(a, b) == 0 : strstr(a, b) != NULL),
        explain;
    va_start(ap, fmt);
    explain = tap_vresult(pass, fmt, ap);
    va_end(ap);
    if (!explain)
        return pass;
    a = a ? a : "(null)";
    b = b ? b : "(null)";
    if (how == TAP_STR_EQUAL)
        diag("  wanted: \"%s\"\n#      got: \"%s\"", a, b);
    else
        diag("  \"%s\"\n#   does not contain \"%s\"", a, b);
    return pass;
}
#define is_string(want, got, ...) tap_strcheck(TAP_STR_EQUAL, want, got, __VA_ARGS__)
#define contains(hay, needle, ...) tap_strcheck(TAP_STR_CONTAINS, hay, needle, __VA_ARGS__)

static TAP_UNUSED TAP_PRINTF(2, 3) void skip(int n, const char *fmt, ...)
{
    va_list ap;
    int i;
    for (i = 0; i < n; ++i) {
        ++tap_count;
        printf("ok %d # SKIP ", tap_count);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    fflush(stdout);
}

/* skip_all(reason...): the whole test cannot run here; exit 0. */
static TAP_UNUSED TAP_NORETURN TAP_PRINTF(1, 2) void skip_all(const char *fmt,
                                                             ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(0);
}

/* 1 when each of the n bytes at p is v: an object left zeroed, an output
 * still holding its poison. */
static TAP_UNUSED int all_bytes(const void *p, size_t n, unsigned char v)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; ++i)
        if (b[i] != v)
            return 0;
    return 1;
}

/* bail(reason...): abort the whole run (tap-driver.sh stops the test). */
static TAP_UNUSED TAP_NORETURN TAP_PRINTF(1, 2) void bail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(255);
}

#endif /* CUXFER_TESTS_TAP_H */
