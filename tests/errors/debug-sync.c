/* SPDX-License-Identifier: MIT */
/* CUXFER_DEBUG_SYNC, call by call, without a device: every call that
 * queues cuxfer's own copies on a stream must end by waiting for that
 * stream, after the last thing it queued, so that it returns with its work
 * done (cuxfer(3), CONFIGURATION).  The test is linked with -Wl,--wrap for
 * the runtime calls these make, so each lands in a stand-in here that logs
 * it with its stream; a case checks the log.  Calls that need a plan or a
 * stager (plan2d, rois, the stager) are checked on the device by
 * tests/errors/debug-sync-gpu, which also runs these. */
#define CUXFER_DEBUG_SYNC 1
#include <stdio.h>
#include <string.h>

#define STAND_IN_UNCAPTURED
#define STAND_IN_DEVICE_0
#define STAND_IN_LAST_ERROR
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

#define LOG_MAX 64
static struct {
    const char *call;
    cudaStream_t s;
} logged[LOG_MAX];
static int nlogged;

static void note(const char *call, cudaStream_t s)
{
    if (nlogged < LOG_MAX) {
        logged[nlogged].call = call;
        logged[nlogged].s = s;
    }
    ++nlogged;
}

/* Fake memory: pinned host and device ranges the stand-in classifies. */
static unsigned char pinned[1 << 16], device[1 << 16];

WRAP(cudaError_t, cudaMemcpyAsync,
     (void *d, const void *s_, size_t n, enum cudaMemcpyKind k, cudaStream_t s))
{
    (void)d, (void)s_, (void)n, (void)k;
    note("cudaMemcpyAsync", s);
    return cudaSuccess;
}
WRAP(cudaError_t, cudaMemcpy2DAsync,
     (void *d, size_t dp, const void *s_, size_t sp, size_t w, size_t h,
      enum cudaMemcpyKind k, cudaStream_t s))
{
    (void)d, (void)dp, (void)s_, (void)sp, (void)w, (void)h, (void)k;
    note("cudaMemcpy2DAsync", s);
    return cudaSuccess;
}
WRAP(cudaError_t, cudaEventRecord, (cudaEvent_t e, cudaStream_t s))
{
    (void)e;
    note("cudaEventRecord", s);
    return cudaSuccess;
}
WRAP(cudaError_t, cudaStreamSynchronize, (cudaStream_t s))
{
    note("cudaStreamSynchronize", s);
    return cudaSuccess;
}
WRAP(cudaError_t, cudaPointerGetAttributes, (struct cudaPointerAttributes *a, const void *p))
{
    const unsigned char *b = (const unsigned char *)p;
    memset(a, 0, sizeof *a);
    a->type = cudaMemoryTypeUnregistered;
    a->device = 0;
    if (b >= pinned && b < pinned + sizeof pinned) {
        a->type = cudaMemoryTypeHost;
        a->hostPointer = (void *)p;
    } else if (b >= device && b < device + sizeof device) {
        a->type = cudaMemoryTypeDevice;
        a->devicePointer = (void *)p;
    }
    return cudaSuccess;
}
WRAP(cudaError_t, cudaDeviceGetAttribute, (int *v, enum cudaDeviceAttr a, int d))
{
    (void)a, (void)d;
    *v = 1 << 30;
    return cudaSuccess;
}
WRAP(cudaError_t, cudaSetDevice, (int d))
{
    (void)d;
    return cudaSuccess;
}
#if CUDART_VERSION >= 12080
WRAP(cudaError_t, cudaStreamGetDevice, (cudaStream_t s, int *d))
{
    (void)s;
    *d = 0;
    return cudaSuccess;
}
#endif

/* The case's log: something was queued on s, and the last runtime call
 * was a wait for s. */
static void expect_synced(const char *what, cudaError_t err, cudaStream_t s)
{
    int i, queued = 0;
    if (nlogged > LOG_MAX)
        bail("%s: more than %d runtime calls", what, LOG_MAX);
    for (i = 0; i < nlogged; ++i)
        if (logged[i].s == s && strcmp(logged[i].call, "cudaStreamSynchronize") != 0)
            queued = 1;
    if (!ok(err == cudaSuccess && queued && nlogged > 0 &&
                strcmp(logged[nlogged - 1].call, "cudaStreamSynchronize") == 0 &&
                logged[nlogged - 1].s == s,
            "%s returns after waiting for its stream", what)) {
        diag("  returned %s %s", cudaGetErrorName(err), cuxfer_last_reason());
        for (i = 0; i < nlogged; ++i)
            diag("  %d: %s on stream %p", i, logged[i].call, (void *)logged[i].s);
    }
    nlogged = 0;
}

int main(void)
{
    cudaStream_t s = (cudaStream_t)(void *)0x5150, rs = (cudaStream_t)(void *)0x5151;
    cuxfer_view dv, hv;
    cuxfer_ring ring;
    cuxfer_ring_slot slot;
    cuxfer_ring_job job;

    plan(5);

    expect_synced("cuxfer_copy_async H2D", cuxfer_copy_async(device, pinned, 4096, s), s);
    expect_synced("cuxfer_copy_async D2H", cuxfer_copy_async(pinned, device, 4096, s), s);

    if (cuxfer_view_init(&hv, pinned, 256, 64, 64, 1, CUXFER_MEMORY_PINNED, -1) != cudaSuccess ||
        cuxfer_view_init(&dv, device, 64, 64, 64, 1, CUXFER_MEMORY_DEVICE, 0) != cudaSuccess)
        bail("views: %s", cuxfer_last_reason());
    nlogged = 0;
    expect_synced("cuxfer_copy2d_async H2D", cuxfer_copy2d_async(&dv, &hv, s), s);
    expect_synced("cuxfer_copy2d_async D2H", cuxfer_copy2d_async(&hv, &dv, s), s);

    /* A ring of one slot, made by hand (its buffers the fake memory). */
    memset(&ring, 0, sizeof ring);
    memset(&slot, 0, sizeof slot);
    ring.slots = &slot;
    ring.count = ring.depth = 1;
    ring.device = 0;
    slot.device_id = -1;
    slot.host = pinned;
    slot.device = device;
    slot.host_bytes = slot.device_bytes = 8192;
    slot.stream = rs;
    slot.done = (cudaEvent_t)(void *)0x5152;
    slot.held = 1;
    memset(&job, 0, sizeof job);
    job.h2d_bytes = 4096;
    job.d2h_bytes = 4096;
    job.d2h_host_offset = 4096;
    nlogged = 0;
    expect_synced("cuxfer_ring_submit", cuxfer_ring_submit(&ring, &slot, &job), rs);
    return 0;
}
