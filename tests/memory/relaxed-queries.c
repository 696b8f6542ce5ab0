/* SPDX-License-Identifier: MIT */
/* cuxfer_host_alloc(3): none of the allocation calls breaks another
 * thread's Global-mode capture, because every CUDA call they make that is
 * not a stream's runs with the calling thread in the Relaxed capture mode.
 * No device needed: the test is linked with -Wl,--wrap for the runtime
 * calls of cuxfer_managed_alloc and a read-only cuxfer_host_register; the
 * stand-ins keep the thread's capture mode as the runtime does (Global to
 * begin with) and note the mode each query and allocation was made in. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STAND_IN_DEVICE_0
#define STAND_IN_LAST_ERROR
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

static enum cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
static int meminfo_mode = -1, malloc_mode = -1, attr_mode = -1, register_mode = -1;
static unsigned char managed[256];

WRAP(cudaError_t, cudaThreadExchangeStreamCaptureMode, (enum cudaStreamCaptureMode *m))
{
    enum cudaStreamCaptureMode was = mode;
    mode = *m;
    *m = was;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaMemGetInfo, (size_t *free_b, size_t *total_b))
{
    meminfo_mode = (int)mode;
    *free_b = *total_b = (size_t)1 << 30;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaMallocManaged, (void **p, size_t bytes, unsigned flags))
{
    (void)flags;
    malloc_mode = (int)mode;
    *p = bytes <= sizeof managed ? managed : NULL;
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

WRAP(cudaError_t, cudaDeviceGetAttribute, (int *v, enum cudaDeviceAttr attr, int dev))
{
    (void)dev;
    attr_mode = (int)mode;
    *v = attr == cudaDevAttrHostRegisterReadOnlySupported;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaHostRegister, (void *p, size_t bytes, unsigned flags))
{
    (void)p;
    (void)bytes;
    (void)flags;
    register_mode = (int)mode;
    return cudaSuccess;
}

int main(void)
{
    static unsigned char host[4096];
    void *p = NULL;
    cudaError_t err;

    plan(8);
    err = cuxfer_managed_alloc(&p, 64, 4, 0);
    ok(err == cudaSuccess && p == managed, "cuxfer_managed_alloc allocates");
    is_int(cudaStreamCaptureModeRelaxed, meminfo_mode, "asking for free memory in Relaxed mode");
    is_int(cudaStreamCaptureModeRelaxed, malloc_mode, "allocating in Relaxed mode");
    is_int(cudaStreamCaptureModeGlobal, mode, "and gives the thread its mode back");
#ifdef cudaHostRegisterReadOnly
    err = cuxfer_host_register(host, sizeof host, cudaHostRegisterReadOnly);
    is_int(cudaSuccess, err, "a read-only cuxfer_host_register registers");
    is_int(cudaStreamCaptureModeRelaxed, attr_mode, "asking the device's support in Relaxed mode");
    is_int(cudaStreamCaptureModeRelaxed, register_mode, "registering in Relaxed mode");
    is_int(cudaStreamCaptureModeGlobal, mode, "and gives the thread its mode back");
#else
    (void)host;
    skip(4, "this CUDA has no cudaHostRegisterReadOnly");
#endif
    done_testing();
}
