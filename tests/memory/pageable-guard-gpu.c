/* SPDX-License-Identifier: MIT */
/* On a real GPU: pointers are classified (pageable, pinned, registered,
 * device, managed) with no sticky error; cuxfer_copy_async round trips and
 * ReadOnly register.  The pageable guard's three policies on real copies
 * (ALLOW silent and correct, WARN one line and correct, ERROR refused with
 * a reason and the destination untouched) need the policy re-read within
 * one process: tests/state/internals.c checks them. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

int main(void)
{
    enum { N = 1 << 16 };
    unsigned char *pageable, *pinned, *back, *dev, *reg, *managed = NULL;
    cudaStream_t s;
    cudaError_t err;
    int ro = 0, dev_id = 0;

    gpu_require(1);
    plan(0);
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pageable = (unsigned char *)malloc(N);
    reg = (unsigned char *)malloc(N + 64);
    GPU_MUST(cuxfer_host_alloc((void **)&pinned, N, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&back, N, 1, 0));
    GPU_MUST(cudaMalloc((void **)&dev, N));
    GPU_MUST(cudaMallocManaged((void **)&managed, N, cudaMemAttachGlobal));
    GPU_MUST(cuxfer_host_register(reg + 1, N, 0));

    is_int(CUXFER_MEMORY_PAGEABLE, cuxfer_memory_kind(pageable), "malloc'd memory is pageable");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_memory_kind(pinned), "cudaHostAlloc memory is pinned");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_memory_kind(reg + 100), "inside a registered range is pinned");
    is_int(CUXFER_MEMORY_DEVICE, cuxfer_memory_kind(dev + 5), "cudaMalloc memory is device");
    is_int(CUXFER_MEMORY_MANAGED, cuxfer_memory_kind(managed), "cudaMallocManaged memory is managed");
    ok(cuxfer_host_is_pinned(pinned) && !cuxfer_host_is_pinned(pageable) &&
           !cuxfer_host_is_pinned(dev),
       "cuxfer_host_is_pinned");
    {
        int local = 0;
        is_int(CUXFER_MEMORY_PAGEABLE, cuxfer_memory_kind(&local), "a stack address is pageable");
    }
    is_int(cudaSuccess, cudaGetLastError(), "classification leaves no sticky error");
    is_int(cudaErrorHostMemoryAlreadyRegistered, cuxfer_host_register(reg + 1, N, 0),
           "registering twice is refused by CUDA");
    (void)cudaGetLastError();

    /* cuxfer_copy_async round trip, pinned */
    fill_pattern(pinned, N, 3);
    memset(back, 0x11, N);
    GPU_OK(cuxfer_copy_async(dev, pinned, N, s), "copy_async H2D");
    GPU_OK(cuxfer_copy_async(back, dev, N, s), "copy_async D2H");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(back, pinned, N) == 0, "copy_async round trip is byte-exact");

    /* ReadOnly registration: works where supported, a clear error where not */
    GPU_MUST(cudaGetDevice(&dev_id));
    GPU_MUST(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, dev_id));
    {
        unsigned char *rom = (unsigned char *)malloc(N);
        err = cuxfer_host_register(rom, N, cudaHostRegisterReadOnly);
        if (ro) {
            is_int(cudaSuccess, err, "ReadOnly registration where supported");
            if (err == cudaSuccess)
                GPU_OK(cuxfer_host_unregister(rom), "unregister ReadOnly");
        } else {
            is_int(cudaErrorNotSupported, err, "ReadOnly refused where unsupported");
            contains(cuxfer_last_reason(), "cudaHostRegisterReadOnly", "with a reason");
        }
        free(rom);
    }

    GPU_OK(cuxfer_host_unregister(reg + 1), "unregister");
    free(reg);
    free(pageable);
    cuxfer_host_free(pinned);
    cuxfer_host_free(back);
    cudaFree(dev);
    cudaFree(managed);
    cudaStreamDestroy(s);
    done_testing();
}
