/* SPDX-License-Identifier: MIT */
/* When CUDA refuses the callback itself, cuxfer_on_complete and
 * cuxfer_on_done return its error with a reason naming the call and leave
 * nothing in cudaGetLastError() (cuxfer_on_complete(3), cuxfer_on_done(3),
 * man 3 cuxfer: "its error comes back with a reason and nothing is left
 * behind").  No device needed: the test is linked with -Wl,--wrap for the
 * runtime calls they make; the stand-ins say the stream is not captured,
 * refuse the callback with cudaErrorInvalidResourceHandle (a destroyed
 * stream's answer) and keep it as the runtime's last error, as CUDA does. */
#include <stdio.h>
#include <string.h>

#define STAND_IN_UNCAPTURED
#define STAND_IN_LAST_ERROR
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

WRAP(cudaError_t, cudaLaunchHostFunc, (cudaStream_t s, cudaHostFn_t fn, void *arg))
{
    (void)s;
    (void)fn;
    (void)arg;
    return stand_in_error = cudaErrorInvalidResourceHandle;
}

WRAP(cudaError_t, cudaStreamAddCallback,
     (cudaStream_t s, cudaStreamCallback_t fn, void *arg, unsigned flags))
{
    (void)s;
    (void)fn;
    (void)arg;
    (void)flags;
    return stand_in_error = cudaErrorInvalidResourceHandle;
}

static void CUDART_CB host_fn(void *arg) { (void)arg; }

static void CUDART_CB done_fn(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    (void)status;
    (void)arg;
}

int main(void)
{
    cudaStream_t s = (cudaStream_t)(uintptr_t)0x1000; /* never used: the stand-ins answer */
    cudaError_t err;

    plan(7);
    cuxfer_clear_reason();
    err = cuxfer_on_complete(s, host_fn, NULL);
    is_int(cudaErrorInvalidResourceHandle, err, "cuxfer_on_complete returns CUDA's refusal");
    contains(cuxfer_last_reason(), "cuxfer_on_complete: stream", "with a reason naming the call");
    contains(cuxfer_last_reason(), "cudaLaunchHostFunc: cudaErrorInvalidResourceHandle",
             "and the CUDA call that refused it");
    is_int(cudaSuccess, stand_in_error, "and leaves no error for cudaGetLastError");

    stand_in_error = cudaSuccess;
    cuxfer_clear_reason();
    err = cuxfer_on_done(s, done_fn, NULL);
    is_int(cudaErrorInvalidResourceHandle, err, "cuxfer_on_done returns CUDA's refusal");
    contains(cuxfer_last_reason(), "cuxfer_on_done: stream", "with a reason naming the call");
    is_int(cudaSuccess, stand_in_error, "and leaves no error for cudaGetLastError");
    done_testing();
}
