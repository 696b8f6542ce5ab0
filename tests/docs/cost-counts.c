/* SPDX-License-Identifier: MIT */
/* The cost claims of the man pages, counted.  The test is linked with
 * -Wl,--wrap for every runtime call the calls below make, so each lands in
 * a counting stand-in here instead of the CUDA runtime (no device needed,
 * and the same on a GPU machine):
 *  - cuxfer_timer(3): a CUXFER_NOWAIT poll that is not ready costs one
 *    cudaEventQuery between two cudaThreadExchangeStreamCaptureMode
 *    calls, and nothing else (no event made, no wait, no elapsed time);
 *  - cuxfer_ring(3): cuxfer_ring_slot_ms with CUXFER_NOWAIT, the same;
 *  - cuxfer_memory_kind(3): one cudaPointerGetAttributes between two
 *    capture-mode exchanges;
 *  - cuxfer_timer(3), cuxfer(3): cuxfer_stream_wait's ordering event
 *    lives for one call: each call creates one event and destroys it, 100
 *    calls 100 of each (none kept, none leaked).
 * A stand-in not listed in the counts of a case must not be called by it:
 * each case checks every counter. */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include <cuxfer.h>

enum { C_QUERY, C_SYNC, C_EXCHANGE, C_CREATE, C_DESTROY, C_RECORD, C_WAIT, C_ELAPSED,
       C_ATTR, C_ISCAP, C_GETDEV, C_SETDEV, C_STREAMDEV, C_COUNT };
static const char *const cname[C_COUNT] = {
    "cudaEventQuery", "cudaEventSynchronize", "cudaThreadExchangeStreamCaptureMode",
    "cudaEventCreateWithFlags", "cudaEventDestroy", "cudaEventRecord", "cudaStreamWaitEvent",
    "cudaEventElapsedTime", "cudaPointerGetAttributes", "cudaStreamIsCapturing",
    "cudaGetDevice", "cudaSetDevice", "cudaStreamGetDevice"};
static int calls[C_COUNT];
static int fake_events; /* events alive (made here, not yet destroyed) */

#define WRAP(ret, name, args) ret __wrap_##name args; ret __wrap_##name args
/* A wrapper that only counts its calls and succeeds; `unused` voids its
 * arguments. */
#define WRAP_COUNT(name, index, args, unused)                                  \
    WRAP(cudaError_t, name, args)                                              \
    {                                                                          \
        unused;                                                                \
        ++calls[index];                                                        \
        return cudaSuccess;                                                    \
    }

WRAP(cudaError_t, cudaEventQuery, (cudaEvent_t e))
{
    (void)e;
    ++calls[C_QUERY];
    return cudaErrorNotReady;
}
WRAP_COUNT(cudaEventSynchronize, C_SYNC, (cudaEvent_t e), (void)e)
WRAP(cudaError_t, cudaThreadExchangeStreamCaptureMode, (enum cudaStreamCaptureMode *m))
{
    static enum cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    enum cudaStreamCaptureMode old = mode;
    ++calls[C_EXCHANGE];
    mode = *m;
    *m = old;
    return cudaSuccess;
}
WRAP(cudaError_t, cudaEventCreateWithFlags, (cudaEvent_t *e, unsigned f))
{
    static char slots[1];
    (void)f;
    ++calls[C_CREATE];
    ++fake_events;
    *e = (cudaEvent_t)(void *)slots;
    return cudaSuccess;
}
WRAP(cudaError_t, cudaEventDestroy, (cudaEvent_t e))
{
    (void)e;
    ++calls[C_DESTROY];
    --fake_events;
    return cudaSuccess;
}
WRAP_COUNT(cudaEventRecord, C_RECORD, (cudaEvent_t e, cudaStream_t s), ((void)e, (void)s))
WRAP_COUNT(cudaStreamWaitEvent, C_WAIT, (cudaStream_t s, cudaEvent_t e, unsigned f),
           ((void)s, (void)e, (void)f))
WRAP(cudaError_t, cudaEventElapsedTime, (float *ms, cudaEvent_t a, cudaEvent_t b))
{
    (void)a, (void)b;
    ++calls[C_ELAPSED];
    *ms = 1.0f;
    return cudaSuccess;
}
WRAP(cudaError_t, cudaPointerGetAttributes, (struct cudaPointerAttributes *a, const void *p))
{
    (void)p;
    ++calls[C_ATTR];
    a->type = cudaMemoryTypeUnregistered;
    return cudaSuccess;
}
WRAP(cudaError_t, cudaStreamIsCapturing, (cudaStream_t s, enum cudaStreamCaptureStatus *st))
{
    (void)s;
    ++calls[C_ISCAP];
    *st = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
WRAP(cudaError_t, cudaGetDevice, (int *d))
{
    ++calls[C_GETDEV];
    *d = 0;
    return cudaSuccess;
}
WRAP_COUNT(cudaSetDevice, C_SETDEV, (int d), (void)d)
#if CUDART_VERSION >= 12080
WRAP(cudaError_t, cudaStreamGetDevice, (cudaStream_t s, int *d))
{
    (void)s;
    ++calls[C_STREAMDEV];
    *d = 0;
    return cudaSuccess;
}
#endif
WRAP(cudaError_t, cudaGetLastError, (void)) { return cudaSuccess; }

static void reset(void) { memset(calls, 0, sizeof calls); }

/* The counters after a case equal want[] (-1: not checked). */
static void expect(const char *what, const int *want)
{
    int i, bad = 0;
    for (i = 0; i < C_COUNT; ++i)
        if (want[i] >= 0 && calls[i] != want[i]) {
            diag("  %s: %s called %d times, want %d", what, cname[i], calls[i], want[i]);
            ++bad;
        }
    ok(bad == 0, "%s", what);
}

int main(void)
{
    int want[C_COUNT], i;
    float ms = 0;
    cuxfer_timer t;
    cuxfer_ring_slot slot;
    cudaStream_t a = (cudaStream_t)(void *)&a, b = (cudaStream_t)(void *)&b;
    static char bytes[64];
    plan(0);

    /* cuxfer_timer_ms, CUXFER_NOWAIT, not ready */
    memset(&t, 0, sizeof t);
    t.start = (cudaEvent_t)(void *)&t.start;
    t.stop = (cudaEvent_t)(void *)&t.stop;
    t.state = 2;
    reset();
    is_int(cudaErrorNotReady, cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms), "timer_ms NOWAIT: not ready");
    memset(want, 0, sizeof want);
    want[C_QUERY] = 1;
    want[C_EXCHANGE] = 2;
    expect("timer_ms NOWAIT costs one cudaEventQuery and two capture-mode exchanges, nothing else",
           want);

    /* cuxfer_ring_slot_ms, CUXFER_NOWAIT, not ready */
    memset(&slot, 0, sizeof slot);
    slot.start = (cudaEvent_t)(void *)&slot.start;
    slot.done = (cudaEvent_t)(void *)&slot.done;
    slot.uses = 1;
    reset();
    is_int(cudaErrorNotReady, cuxfer_ring_slot_ms(&slot, CUXFER_NOWAIT, &ms),
           "ring_slot_ms NOWAIT: not ready");
    expect("ring_slot_ms NOWAIT costs one cudaEventQuery and two capture-mode exchanges", want);

    /* cuxfer_memory_kind of a pointer nothing knows */
    reset();
    is_int(CUXFER_MEMORY_PAGEABLE, cuxfer_memory_kind(bytes), "memory_kind: pageable");
    memset(want, 0, sizeof want);
    want[C_ATTR] = 1;
    want[C_EXCHANGE] = 2;
    expect("memory_kind costs one cudaPointerGetAttributes and two capture-mode exchanges", want);

    /* cuxfer_stream_wait: one event per call, made and destroyed */
    reset();
    fake_events = 0;
    is_int(cudaSuccess, cuxfer_stream_wait(a, b), "stream_wait");
    for (i = 0; i < C_COUNT; ++i)
        want[i] = -1;
    want[C_CREATE] = 1;
    want[C_DESTROY] = 1;
    want[C_RECORD] = 1;
    want[C_WAIT] = 1;
    want[C_QUERY] = 0;
    want[C_SYNC] = 0;
    expect("stream_wait makes one ordering event, records it once, waits once, destroys it", want);
    reset();
    for (i = 0; i < 100; ++i)
        if (cuxfer_stream_wait(a, b) != cudaSuccess)
            break;
    is_int(100, i, "100 stream_waits");
    want[C_CREATE] = 100;
    want[C_DESTROY] = 100;
    want[C_RECORD] = 100;
    want[C_WAIT] = 100;
    expect("the event lives for one call: 100 made, 100 destroyed", want);
    is_int(0, fake_events, "no event kept between calls");
    done_testing();
}
