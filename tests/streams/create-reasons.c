/* SPDX-License-Identifier: MIT */
/* When CUDA refuses what a create makes, the reason names the call the
 * program made and the CUDA call that failed (cuxfer_stream_pool(3): "A
 * failure of cudaStreamCreateWithPriority() or
 * cudaDeviceGetStreamPriorityRange() is returned with a reason naming it
 * and the stream's index"), the object is left zeroed and no error is left
 * for cudaGetLastError(); the latch's events likewise
 * (cuxfer_on_complete(3): errors of cudaEventCreateWithFlags() come "with
 * a reason naming the call").  cuxfer_stream_pool_create_on,
 * cuxfer_timer_create_with and cuxfer_latch_init_on name themselves, not
 * the sibling they share their code with.  No device needed: the test is linked with -Wl,--wrap
 * for the runtime calls of the creates, and the stand-ins refuse the
 * stream, the priority range or the event as the runtime would. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STAND_IN_UNCAPTURED
#define STAND_IN_LAST_ERROR
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

static int current;                                  /* the thread's device */
static cudaError_t range_err, stream_err, event_err; /* what each call answers */

WRAP(cudaError_t, cudaGetDevice, (int *dev))
{
    *dev = current;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaSetDevice, (int dev))
{
    current = dev;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaDeviceGetStreamPriorityRange, (int *least, int *greatest))
{
    *least = 0;
    *greatest = -5;
    return stand_in_error = range_err;
}

WRAP(cudaError_t, cudaStreamCreateWithPriority, (cudaStream_t *s, unsigned flags, int prio))
{
    static uintptr_t next = 0x1000;
    (void)flags;
    (void)prio;
    if (stream_err != cudaSuccess)
        return stand_in_error = stream_err;
    *s = (cudaStream_t)(next += 0x100);
    return cudaSuccess;
}

WRAP(cudaError_t, cudaStreamDestroy, (cudaStream_t s))
{
    (void)s;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaEventCreateWithFlags, (cudaEvent_t *e, unsigned flags))
{
    (void)flags;
    (void)e;
    return stand_in_error = event_err;
}

WRAP(cudaError_t, cudaEventDestroy, (cudaEvent_t e))
{
    (void)e;
    return cudaSuccess;
}

int main(void)
{
    cuxfer_stream_pool pool;
    cuxfer_timer t;
    cuxfer_timer_options o;
    cuxfer_latch l;
    cudaError_t err;

    plan(24);

    /* the streams: refused at the first */
    stream_err = cudaErrorMemoryAllocation;
    cuxfer_clear_reason();
    err = cuxfer_stream_pool_create(&pool, 2, 0, 0);
    is_int(cudaErrorMemoryAllocation, err, "cuxfer_stream_pool_create returns CUDA's refusal");
    contains(cuxfer_last_reason(), "cuxfer_stream_pool_create: stream 0 of 2",
                "with a reason naming the call and the stream's index");
    contains(cuxfer_last_reason(), "cudaStreamCreateWithPriority: cudaErrorMemoryAllocation",
             "and the CUDA call that refused it");
    ok(all_bytes(&pool, sizeof pool, 0), "the pool is left zeroed");
    is_int(cudaSuccess, stand_in_error, "and no error is left for cudaGetLastError");

    cuxfer_clear_reason();
    err = cuxfer_stream_pool_create_on(&pool, 1, 2, 0, 0);
    is_int(cudaErrorMemoryAllocation, err, "cuxfer_stream_pool_create_on returns it too");
    contains(cuxfer_last_reason(), "cuxfer_stream_pool_create_on: stream 0 of 2",
                "naming itself, not cuxfer_stream_pool_create");
    contains(cuxfer_last_reason(), "cudaStreamCreateWithPriority",
             "and the CUDA call that refused it");
    is_int(0, current, "the current device is given back");

    /* the priority range */
    stream_err = cudaSuccess;
    range_err = cudaErrorInvalidDevice;
    cuxfer_clear_reason();
    err = cuxfer_stream_pool_create_on(&pool, 1, 2, 0, 0);
    is_int(cudaErrorInvalidDevice, err, "a refused priority range is returned");
    contains(cuxfer_last_reason(), "cuxfer_stream_pool_create_on: cudaDeviceGetStreamPriorityRange",
             "with a reason naming the call made and the CUDA call");
    ok(all_bytes(&pool, sizeof pool, 0) && stand_in_error == cudaSuccess,
       "the pool zeroed, no error left");
    range_err = cudaSuccess;

    /* timers: each create names itself */
    memset(&o, 0, sizeof o);
    o.flags = 0x8;
    cuxfer_clear_reason();
    is_int(cudaErrorInvalidValue, cuxfer_timer_create_with(&t, &o),
           "cuxfer_timer_create_with refuses an unknown flag");
    contains(cuxfer_last_reason(), "cuxfer_timer_create_with: unknown flags 0x8",
                "its reason names cuxfer_timer_create_with");
    o.flags = CUXFER_TIMER_ON_DEVICE;
    o.device = 64;
    cuxfer_clear_reason();
    (void)cuxfer_timer_create_with(&t, &o);
    contains(cuxfer_last_reason(), "cuxfer_timer_create_with: device 64",
                "so does the refusal of a device");
    event_err = cudaErrorMemoryAllocation;
    cuxfer_clear_reason();
    err = cuxfer_timer_create_with(&t, NULL);
    is_int(cudaErrorMemoryAllocation, err, "an event CUDA refuses is returned");
    contains(cuxfer_last_reason(), "cuxfer_timer_create_with:",
                "by cuxfer_timer_create_with in its name");
    cuxfer_clear_reason();
    err = cuxfer_timer_create(&t);
    contains(cuxfer_last_reason(), "cuxfer_timer_create:",
                "and by cuxfer_timer_create in its own");
    ok(err == cudaErrorMemoryAllocation && all_bytes(&t, sizeof t, 0) &&
           stand_in_error == cudaSuccess,
       "the timer zeroed, no error left");

    /* latches: the same event refused */
    cuxfer_clear_reason();
    err = cuxfer_latch_init(&l);
    is_int(cudaErrorMemoryAllocation, err, "cuxfer_latch_init returns the refused event");
    contains(cuxfer_last_reason(), "cuxfer_latch_init: cudaEventCreateWithFlags: "
             "cudaErrorMemoryAllocation", "with a reason naming the call and the CUDA call");
    ok(all_bytes(&l, sizeof l, 0) && stand_in_error == cudaSuccess,
       "the latch zeroed, no error left");
    cuxfer_clear_reason();
    (void)cuxfer_latch_init_on(&l, 1);
    contains(cuxfer_last_reason(), "cuxfer_latch_init_on: cudaEventCreateWithFlags",
             "cuxfer_latch_init_on names itself");
    is_int(0, current, "and gives the current device back");
    done_testing();
}
