/* SPDX-License-Identifier: MIT */
/* A copy between the memory of two devices goes on when peer access
 * cannot be enabled (cuxfer_copy2d_async(3): "Where access cannot be had
 * ... the copy is still made, staged through the host by CUDA, and leaves
 * no reason behind; a pair settled once costs later copies two table
 * reads").  No device needed: the test is linked with -Wl,--wrap for the
 * runtime calls the copies make.  The stand-ins place dst on device 1 and
 * src on device 0, say both can reach each other, and refuse
 * cudaDeviceEnablePeerAccess with cudaErrorTooManyPeers (kept as the last
 * error, as CUDA does) until told to grant it; they count the calls, so the
 * test sees each copy queued once, the current device put back, and a pair
 * once enabled asked nothing again. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STAND_IN_UNCAPTURED
#define STAND_IN_LAST_ERROR
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

#define DST ((void *)(uintptr_t)0x7f0010000000u) /* on device 1 */
#define SRC ((void *)(uintptr_t)0x7f0020000000u) /* on device 0 */
#define SPAN ((uintptr_t)1 << 24)

static cudaError_t enable_answer = cudaErrorTooManyPeers;
static int current = 0, can_calls, enable_calls, copies, copies3d;

WRAP(cudaError_t, cudaPointerGetAttributes, (struct cudaPointerAttributes *a, const void *p))
{
    uintptr_t u = (uintptr_t)p;
    memset(a, 0, sizeof *a);
    if (u >= (uintptr_t)DST && u < (uintptr_t)DST + SPAN)
        a->device = 1;
    else if (u >= (uintptr_t)SRC && u < (uintptr_t)SRC + SPAN)
        a->device = 0;
    else
        return cudaSuccess; /* unregistered: pageable */
    a->type = cudaMemoryTypeDevice;
    a->devicePointer = (void *)p;
    return cudaSuccess;
}

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

WRAP(cudaError_t, cudaDeviceCanAccessPeer, (int *can, int dev, int peer))
{
    ++can_calls;
    *can = dev != peer;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaDeviceEnablePeerAccess, (int peer, unsigned flags))
{
    (void)peer;
    (void)flags;
    ++enable_calls;
    return stand_in_error = enable_answer;
}

WRAP(cudaError_t, cudaMemcpyAsync,
     (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s))
{
    (void)s;
    copies += dst == DST && src == SRC && n == 4096 && kind == cudaMemcpyDefault;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaMemcpy3DPeerAsync, (const struct cudaMemcpy3DPeerParms *p, cudaStream_t s))
{
    (void)s;
    copies3d += p->dstPtr.ptr == DST && p->dstDevice == 1 && p->srcPtr.ptr == SRC &&
                p->srcDevice == 0 && p->extent.height == 8;
    return cudaSuccess;
}

int main(void)
{
    cudaStream_t s = (cudaStream_t)(uintptr_t)0x1000; /* never used: the stand-ins answer */
    cuxfer_view dv, sv;
    char before[CUXFER_REASON_MAX];
    cudaError_t err;

    plan(12);
    /* a reason from an earlier refusal, which the copies must leave */
    (void)cuxfer_copy_check(NULL, SRC, 1);
    (void)snprintf(before, sizeof before, "%s", cuxfer_last_reason());

    err = cuxfer_copy_async(DST, SRC, 4096, s);
    is_int(cudaSuccess, err, "a 1D copy whose peer access the runtime refuses is queued");
    is_int(1, copies, "once, as cudaMemcpyAsync (CUDA stages it through the host)");
    is_int(2, enable_calls, "after asking for access both ways");
    is_string(before, cuxfer_last_reason(), "the reason is as it was");
    is_int(cudaSuccess, stand_in_error, "and nothing is left for cudaGetLastError");
    is_int(0, current, "the current device is put back");

    ok(cuxfer_view_init(&dv, DST, 512, 256, 8, 1, CUXFER_MEMORY_DEVICE, 1) == cudaSuccess &&
           cuxfer_view_init(&sv, SRC, 256, 256, 8, 1, CUXFER_MEMORY_DEVICE, 0) == cudaSuccess,
       "two device views, of devices 1 and 0");
    err = cuxfer_copy2d_async(&dv, &sv, s);
    is_int(cudaSuccess, err, "a 2D copy between them is queued too");
    is_int(1, copies3d, "as one cudaMemcpy3DPeerAsync, device 0 to device 1");

    enable_answer = cudaSuccess;
    can_calls = enable_calls = 0;
    err = cuxfer_copy_async(DST, SRC, 4096, s);
    ok(err == cudaSuccess && enable_calls == 2,
       "once the runtime grants access, the copy enables it both ways (%d calls)",
       enable_calls);
    can_calls = enable_calls = 0;
    err = cuxfer_copy_async(DST, SRC, 4096, s);
    ok(err == cudaSuccess && copies == 3, "the next copy is queued");
    is_int(0, can_calls + enable_calls, "without asking CUDA about the pair again");
    done_testing();
}
