/* SPDX-License-Identifier: MIT */
/* The default-stream guard (issue 17, item 6): an async copy queued on the
 * legacy default stream warns once, is refused or is let through under
 * CUXFER_DEFAULT_STREAM / CUXFER_DEFAULT_STREAM_POLICY; other streams pass
 * with no message; 0 in a unit built per-thread
 * (CUDA_API_PER_THREAD_DEFAULT_STREAM, default-stream-ptds.c) is that
 * thread's own stream and passes.  The refusal happens before any CUDA
 * call, so this runs without a GPU.  The environment is read once per
 * process, so each policy runs in a child forked before any cuxfer call,
 * its TAP lines numbered on from the parent's.  (Parsing each value
 * again in one process, and the guard's own stream test, are checked in
 * tests/internals.c.) */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char logbuf[4096];
static int log_lines;
#define CUXFER_LOG(...)                                                        \
    (++log_lines, (void)snprintf(logbuf + strlen(logbuf),                      \
                                 sizeof logbuf - strlen(logbuf), __VA_ARGS__))
#include "tap.h"
#include <cuxfer.h>

extern int setenv(const char *, const char *, int);
extern int unsetenv(const char *);

cudaError_t ptds_copy_on_zero(void *dst, const void *src, size_t bytes);

/* Run phase(a, b) in a child with CUXFER_DEFAULT_STREAM=value (unset if
 * NULL); the child's tests continue the parent's numbering and it sends
 * back its counts. */
static void in_child(const char *value, void (*phase)(unsigned char *, unsigned char *),
                     const char *what)
{
    int fd[2], st = 0, counts[2] = {-1, -1};
    pid_t pid;
    fflush(stdout);
    if (pipe(fd) != 0)
        bail("pipe");
    pid = fork();
    if (pid < 0)
        bail("fork");
    if (pid == 0) {
        unsigned char a[64], b[64];
        close(fd[0]);
        /* Host-to-host copies pass the pageable guard anyway; this keeps
         * its messages out of the count whatever a device says. */
        setenv("CUXFER_PAGEABLE", "allow", 1);
        if (value)
            setenv("CUXFER_DEFAULT_STREAM", value, 1);
        else
            unsetenv("CUXFER_DEFAULT_STREAM");
        memset(a, 1, sizeof a);
        memset(b, 2, sizeof b);
        phase(a, b);
        fflush(stdout);
        counts[0] = tap_count;
        counts[1] = tap_failed;
        _exit(write(fd[1], counts, sizeof counts) == (ssize_t)sizeof counts ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], counts, sizeof counts) != (ssize_t)sizeof counts)
        counts[0] = -1;
    close(fd[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || counts[0] < 0) {
        ok(0, "%s: the child ran to the end (status %d)", what, st);
        return;
    }
    tap_count = counts[0];
    tap_failed = counts[1];
}

static int mentions_legacy(void)
{
    return strstr(cuxfer_last_reason(), "legacy default stream") != NULL;
}

static void phase_default(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_default_stream_policy(), "default policy is WARN");
}

static void phase_policy_error(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    is_int(CUXFER_PAGEABLE_ERROR, cuxfer_default_stream_policy(), "CUXFER_DEFAULT_STREAM=error");
}

static void phase_policy_allow(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    is_int(CUXFER_PAGEABLE_ALLOW, cuxfer_default_stream_policy(), "CUXFER_DEFAULT_STREAM=ALLOW");
}

static void phase_policy_bad(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    logbuf[0] = '\0';
    log_lines = 0;
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_default_stream_policy(),
           "a bad value falls back to the default");
    contains(logbuf, "CUXFER_DEFAULT_STREAM=sometimes is not one of", "the bad value is named");
}

/* ERROR: refused before any CUDA call, nothing queued, reason given. */
static void phase_error(unsigned char *a, unsigned char *b)
{
    cuxfer_view va, vb;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_copy_async(b, a, 64, 0);
    is_int(cudaErrorInvalidValue, err, "error: copy on stream 0 refused");
    ok(mentions_legacy(), "the reason names the legacy default stream");
    contains(cuxfer_last_reason(), "cuxfer_copy_async", "the reason names the call");
    ok(b[0] == 2, "nothing was copied");
    err = cuxfer_copy_async(b, a, 64, cudaStreamLegacy);
    is_int(cudaErrorInvalidValue, err, "error: copy on cudaStreamLegacy refused");
    cuxfer_clear_reason();
    err = cuxfer_copy_async(b, a, 0, 0);
    is_int(cudaSuccess, err, "an empty copy queues nothing and is not refused");
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, 64, cudaStreamPerThread);
    ok(!mentions_legacy(), "error: cudaStreamPerThread passes the guard");
    cuxfer_clear_reason();
    (void)ptds_copy_on_zero(b, a, 64);
    ok(!mentions_legacy(), "error: 0 in a per-thread unit passes the guard");

    if (cuxfer_view_wrap(&va, a, 8, 8, 8, 1) != cudaSuccess ||
        cuxfer_view_wrap(&vb, b, 8, 8, 8, 1) != cudaSuccess)
        bail("cuxfer_view_wrap: %s", cuxfer_last_reason());
    cuxfer_clear_reason();
    err = cuxfer_copy2d_async(&vb, &va, 0);
    is_int(cudaErrorInvalidValue, err, "error: 2D copy on stream 0 refused");
    ok(mentions_legacy(), "the 2D reason names the legacy default stream");
    contains(cuxfer_last_reason(), "cuxfer_copy2d_async", "the 2D reason names the call");
}

/* WARN: one line per process, the copy goes ahead (and fails or not on
 * its own merits: no device here, perhaps); other streams never warn. */
static void phase_warn(unsigned char *a, unsigned char *b)
{
    cuxfer_view va, vb;
    if (cuxfer_view_wrap(&va, a, 8, 8, 8, 1) != cudaSuccess ||
        cuxfer_view_wrap(&vb, b, 8, 8, 8, 1) != cudaSuccess)
        bail("cuxfer_view_wrap: %s", cuxfer_last_reason());
    logbuf[0] = '\0';
    log_lines = 0;
    (void)cuxfer_copy_async(b, a, 64, cudaStreamPerThread);
    is_int(0, log_lines, "warn: cudaStreamPerThread gives no message");
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, 64, 0);
    ok(!mentions_legacy(), "warn: the copy is not refused");
    is_int(1, log_lines, "warn: one line");
    contains(logbuf, "legacy default stream", "warn: the line names the trap");
    (void)cuxfer_copy_async(b, a, 64, 0);
    (void)cuxfer_copy2d_async(&vb, &va, cudaStreamLegacy);
    is_int(1, log_lines, "warn: shown once per process");
}

/* ALLOW: silent. */
static void phase_allow(unsigned char *a, unsigned char *b)
{
    log_lines = 0;
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, 64, 0);
    ok(!mentions_legacy(), "allow: not refused");
    is_int(0, log_lines, "allow: no message");
}

int main(void)
{
    plan(0);
    /* No cuxfer call in this process: each child parses the variable. */
    in_child(NULL, phase_default, "unset");
    in_child("error", phase_policy_error, "error");
    in_child("ALLOW", phase_policy_allow, "ALLOW");
    in_child("sometimes", phase_policy_bad, "sometimes");
    in_child("error", phase_error, "error, copies");
    in_child("warn", phase_warn, "warn, copies");
    in_child("allow", phase_allow, "allow, copies");
    done_testing();
}
