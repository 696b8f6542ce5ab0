/* SPDX-License-Identifier: MIT */
/* CUXFER_CHECK prints where, what and why, then runs the CUXFER_ON_ERROR
 * hook; CUXFER_TRY returns the error; CUXFER_CHECK_LAUNCH sees a failed
 * launch.  The default hook (abort) is proven in check-aborts.c. */
#include <stdio.h>
#include <string.h>

static char logbuf[4096];
static int hook_calls;
static int hook_err;

#define CUXFER_LOG(...)                                                        \
    ((void)snprintf(logbuf + strlen(logbuf), sizeof logbuf - strlen(logbuf),   \
                    __VA_ARGS__))
#define CUXFER_ON_ERROR(err) (++hook_calls, hook_err = (int)(err))
#include "tap.h"
#include <cuxfer.h>

static cudaError_t returns(cudaError_t e) { return e; }

static int fail_line;
static void check_fails(void)
{
    fail_line = __LINE__; CUXFER_CHECK(returns(cudaErrorInvalidValue));
}

static cudaError_t try_chain(cudaError_t first, int *reached)
{
    CUXFER_TRY(returns(first));
    *reached = 1;
    CUXFER_TRY(returns(cudaSuccess));
    return cudaSuccess;
}

int main(void)
{
    char want[128];
    int reached = 0;
    cudaError_t err;
    /* See tests/devices/probe.c: without a driver this is never cudaSuccess. */
    cudaError_t baseline = cudaPeekAtLastError();

    plan(17);

    logbuf[0] = '\0';
    CUXFER_CHECK(returns(cudaSuccess));
    is_int(0, hook_calls, "success does not run the hook");
    is_string("", logbuf, "success prints nothing");

    check_fails();
    is_int(1, hook_calls, "failure runs CUXFER_ON_ERROR once");
    is_int(cudaErrorInvalidValue, hook_err, "the hook receives the error");
    snprintf(want, sizeof want, "check-macros.c:%d: ", fail_line);
    contains(logbuf, want, "report names file:line");
    contains(logbuf, "check_fails", "report names the function");
    contains(logbuf, "returns(cudaErrorInvalidValue) failed", "report quotes the expression");
    contains(logbuf, "cudaErrorInvalidValue", "report has cudaGetErrorName");
    contains(logbuf, cudaGetErrorString(cudaErrorInvalidValue),
             "report has cudaGetErrorString");

    logbuf[0] = '\0';
    CUXFER_CHECK(cuxfer_device_count(NULL));
    contains(logbuf, "count is NULL", "report carries the cuxfer reason");

    logbuf[0] = '\0';
    (void)cuxfer_view_check(NULL, "stale reason"); /* "stale reason view is NULL" */
    CUXFER_CHECK(returns(cudaErrorNotReady));
    ok(strstr(logbuf, "stale reason") == NULL,
       "a reason left by an earlier call is not reported");

    err = try_chain(cudaErrorMemoryAllocation, &reached);
    is_int(cudaErrorMemoryAllocation, err, "CUXFER_TRY returns the error");
    is_int(0, reached, "CUXFER_TRY stops at the failure");
    err = try_chain(cudaSuccess, &reached);
    ok(err == cudaSuccess && reached, "CUXFER_TRY passes success through");

    /* A launch that cannot happen (no function, or no driver) leaves a
     * launch error; CUXFER_CHECK_LAUNCH must see it and clear it. */
    {
        dim3 one = {1, 1, 1};
        int before = hook_calls;
        logbuf[0] = '\0';
        (void)cudaLaunchKernel((const void *)0, one, one, (void **)0, 0,
                               (cudaStream_t)0);
        CUXFER_CHECK_LAUNCH();
        is_int(before + 1, hook_calls, "CUXFER_CHECK_LAUNCH reports a failed launch");
        contains(logbuf, "cudaGetLastError()", "the launch report names cudaGetLastError");
        is_int(baseline, cudaGetLastError(), "and the error is cleared");
    }
    done_testing();
}
