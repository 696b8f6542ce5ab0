/* SPDX-License-Identifier: MIT */
/* The default-stream guard (issue 17, item 6): an async copy queued on the
 * legacy default stream warns once, is refused or is let through under
 * CUXFER_DEFAULT_STREAM / CUXFER_DEFAULT_STREAM_POLICY; other streams pass
 * with no message; 0 in a unit built per-thread
 * (CUDA_API_PER_THREAD_DEFAULT_STREAM, default-stream-ptds.c) is that
 * thread's own stream and passes.  The refusal happens before any CUDA
 * call, so this runs without a GPU. */
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

int ptds_zero_is_legacy(void);
cudaError_t ptds_copy_on_zero(void *dst, const void *src, size_t bytes);

static int env_policy(const char *value)
{
    if (value)
        setenv("CUXFER_DEFAULT_STREAM", value, 1);
    else
        unsetenv("CUXFER_DEFAULT_STREAM");
    cuxfer_impl_env_stream_policy = 0; /* forget the parsed value (test only) */
    return cuxfer_default_stream_policy();
}

static int mentions_legacy(void)
{
    return strstr(cuxfer_last_reason(), "legacy default stream") != NULL;
}

int main(void)
{
    unsigned char a[64], b[64];
    cuxfer_view va, vb;
    cudaError_t err;
    plan(0);
    memset(a, 1, sizeof a);
    memset(b, 2, sizeof b);

    is_int(CUXFER_PAGEABLE_WARN, env_policy(NULL), "default policy is WARN");
    is_int(CUXFER_PAGEABLE_ERROR, env_policy("error"), "CUXFER_DEFAULT_STREAM=error");
    is_int(CUXFER_PAGEABLE_ALLOW, env_policy("ALLOW"), "CUXFER_DEFAULT_STREAM=ALLOW");
    logbuf[0] = '\0';
    log_lines = 0;
    is_int(CUXFER_PAGEABLE_WARN, env_policy("sometimes"), "a bad value falls back to the default");
    contains(logbuf, "CUXFER_DEFAULT_STREAM=sometimes is not one of", "the bad value is named");

    ok(cuxfer_impl_is_legacy_stream((cudaStream_t)0), "0 is the legacy stream in this unit");
    ok(cuxfer_impl_is_legacy_stream(cudaStreamLegacy), "cudaStreamLegacy is the legacy stream");
    ok(!cuxfer_impl_is_legacy_stream(cudaStreamPerThread), "cudaStreamPerThread is not");
    ok(!ptds_zero_is_legacy(), "0 in a per-thread unit is not the legacy stream");

    /* ERROR: refused before any CUDA call, nothing queued, reason given. */
    env_policy("error");
    cuxfer_clear_reason();
    err = cuxfer_copy_async(b, a, sizeof a, 0);
    is_int(cudaErrorInvalidValue, err, "error: copy on stream 0 refused");
    ok(mentions_legacy(), "the reason names the legacy default stream");
    contains(cuxfer_last_reason(), "cuxfer_copy_async", "the reason names the call");
    ok(b[0] == 2, "nothing was copied");
    err = cuxfer_copy_async(b, a, sizeof a, cudaStreamLegacy);
    is_int(cudaErrorInvalidValue, err, "error: copy on cudaStreamLegacy refused");
    cuxfer_clear_reason();
    err = cuxfer_copy_async(b, a, 0, 0);
    is_int(cudaSuccess, err, "an empty copy queues nothing and is not refused");
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, sizeof a, cudaStreamPerThread);
    ok(!mentions_legacy(), "error: cudaStreamPerThread passes the guard");
    cuxfer_clear_reason();
    (void)ptds_copy_on_zero(b, a, sizeof a);
    ok(!mentions_legacy(), "error: 0 in a per-thread unit passes the guard");


    if (cuxfer_view_wrap(&va, a, 8, 8, 8, 1) != cudaSuccess ||
        cuxfer_view_wrap(&vb, b, 8, 8, 8, 1) != cudaSuccess)
        bail("cuxfer_view_wrap: %s", cuxfer_last_reason());
    cuxfer_clear_reason();
    err = cuxfer_copy2d_async(&vb, &va, 0);
    is_int(cudaErrorInvalidValue, err, "error: 2D copy on stream 0 refused");
    ok(mentions_legacy(), "the 2D reason names the legacy default stream");
    contains(cuxfer_last_reason(), "cuxfer_copy2d_async", "the 2D reason names the call");

    /* WARN: one line per process, the copy goes ahead (and fails or not on
     * its own merits: no device here, perhaps). */
    env_policy("warn");
    logbuf[0] = '\0';
    log_lines = 0;
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, sizeof a, 0);
    ok(!mentions_legacy(), "warn: the copy is not refused");
    is_int(1, log_lines, "warn: one line");
    contains(logbuf, "legacy default stream", "warn: the line names the trap");
    (void)cuxfer_copy_async(b, a, sizeof a, 0);
    (void)cuxfer_copy2d_async(&vb, &va, cudaStreamLegacy);
    is_int(1, log_lines, "warn: shown once per process");

    /* ALLOW: silent. */
    cuxfer_impl_warned_stream = 0; /* test only */
    env_policy("allow");
    log_lines = 0;
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, sizeof a, 0);
    ok(!mentions_legacy(), "allow: not refused");
    is_int(0, log_lines, "allow: no message");

    /* Other streams never warn. */
    env_policy("warn");
    log_lines = 0;
    (void)cuxfer_copy_async(b, a, sizeof a, cudaStreamPerThread);
    is_int(0, log_lines, "warn: cudaStreamPerThread gives no message");
    done_testing();
}
