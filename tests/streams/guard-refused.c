/* SPDX-License-Identifier: MIT */
/* The default-stream guard warns only for a copy that goes ahead
 * (cuxfer_copy2d_async(3), "The default-stream guard"): a copy on stream 0
 * refused for its views or its memory uses up no warning, and the first
 * one that is queued is named in it.  No device needed: the test is linked
 * with -Wl,--wrap for the runtime calls of the copies; the stand-ins say
 * DEV is device memory of device 0, PIN pinned host memory and anything
 * else pageable, that nothing is captured, and count the copies queued. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAND_IN_UNCAPTURED
#define STAND_IN_DEVICE_0
#define STAND_IN_LAST_ERROR
#include "log-capture.h"
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

extern int unsetenv(const char *);
extern int setenv(const char *, const char *, int);

static unsigned char dev_mem[4096], pin_mem[4096];
#define DEV ((void *)dev_mem)
#define PIN ((void *)pin_mem)
static int queued;

WRAP(cudaError_t, cudaDeviceGetAttribute, (int *v, enum cudaDeviceAttr attr, int dev))
{
    (void)dev;
    *v = attr == cudaDevAttrMaxPitch ? 1 << 21 : 1;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaPointerGetAttributes, (struct cudaPointerAttributes *a, const void *p))
{
    uintptr_t u = (uintptr_t)p;
    memset(a, 0, sizeof *a);
    a->device = -1;
    if (u >= (uintptr_t)dev_mem && u < (uintptr_t)dev_mem + sizeof dev_mem) {
        a->type = cudaMemoryTypeDevice;
        a->device = 0;
    } else if (u >= (uintptr_t)pin_mem && u < (uintptr_t)pin_mem + sizeof pin_mem) {
        a->type = cudaMemoryTypeHost;
    }
    return cudaSuccess;
}

WRAP(cudaError_t, cudaMemcpyAsync,
     (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s))
{
    (void)dst, (void)src, (void)n, (void)kind, (void)s;
    ++queued;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaMemcpy2DAsync,
     (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
      enum cudaMemcpyKind kind, cudaStream_t s))
{
    (void)dst, (void)dp, (void)src, (void)sp, (void)w, (void)h, (void)kind, (void)s;
    ++queued;
    return cudaSuccess;
}

int main(void)
{
    static unsigned char pageable[4096];
    cuxfer_view vd, vlie, vpin;
    cudaError_t err;

    plan(10);
    unsetenv("CUXFER_DEFAULT_STREAM");
    unsetenv("CUXFER_DEFAULT_STREAM_POLICY");
    setenv("CUXFER_PAGEABLE", "error", 1);
    cuxfer_view_init(&vd, DEV, 64, 8, 8, 1, CUXFER_MEMORY_DEVICE, 0);
    cuxfer_view_init(&vlie, pageable, 64, 8, 8, 1, CUXFER_MEMORY_PINNED, -1);
    cuxfer_view_init(&vpin, PIN, 64, 8, 8, 1, CUXFER_MEMORY_PINNED, -1);

    err = cuxfer_copy2d_async(&vd, &vlie, 0);
    is_int(cudaErrorInvalidValue, err, "a 2D copy on stream 0 whose view lies is refused");
    contains(cuxfer_last_reason(), "view says pinned", "for its view, not for the stream");
    err = cuxfer_copy_async(DEV, pageable, 64, 0);
    is_int(cudaErrorInvalidValue, err, "a 1D copy on stream 0 from pageable memory is refused");
    contains(cuxfer_last_reason(), "pageable", "for its memory (CUXFER_PAGEABLE=error)");
    err = cuxfer_copy_async(DEV, dev_mem + 8, 64, 0);
    is_int(cudaErrorInvalidValue, err, "an overlapping copy on stream 0 is refused");
    ok(log_lines == 0 && queued == 0, "the refused copies queued nothing and used up no warning "
       "(%d lines, %d copies)", log_lines, queued);

    err = cuxfer_copy2d_async(&vd, &vpin, 0);
    ok(err == cudaSuccess && queued == 1, "a good copy on stream 0 is queued");
    is_int(1, log_lines, "with the one warning");
    contains(logbuf, "cuxfer_copy2d_async: queued on the legacy default stream", "naming it");
    err = cuxfer_copy_async(DEV, PIN, 64, 0);
    ok(err == cudaSuccess && queued == 2 && log_lines == 1, "the next one is queued without");
    done_testing();
}
