/* SPDX-License-Identifier: MIT */
/* On a real GPU: pointers are classified (pageable, pinned, registered,
 * device, managed) with no sticky error, and the pageable guard's three
 * policies are observed on real copies - ALLOW silent and correct, WARN one
 * line and correct, ERROR refused with a reason and the destination
 * untouched.  Also cuxfer_copy_async round trips and ReadOnly register. */
#include <stdio.h>
#include <string.h>

static char logbuf[4096];
#define CUXFER_LOG(...)                                                        \
    ((void)snprintf(logbuf + strlen(logbuf), sizeof logbuf - strlen(logbuf),   \
                    __VA_ARGS__))
#include "gpu.h"

extern int setenv(const char *, const char *, int);

static void policy(const char *v)
{
    setenv("CUXFER_PAGEABLE", v, 1);
    cuxfer_impl_env_policy = 0;
    cuxfer_impl_warned[0] = cuxfer_impl_warned[1] = 0;
    logbuf[0] = '\0';
}

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

    /* ALLOW */
    policy("allow");
    fill_pattern(pageable, N, 4);
    GPU_OK(cuxfer_copy_async(dev, pageable, N, s), "ALLOW: pageable H2D runs");
    memset(back, 0, N);
    GPU_OK(cuxfer_copy_async(back, dev, N, s), "D2H");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(back, pageable, N) == 0, "ALLOW: data arrives");
    is_string("", logbuf, "ALLOW: nothing printed");

    /* WARN */
    policy("warn");
    fill_pattern(pageable, N, 5);
    GPU_OK(cuxfer_copy_async(dev, pageable, N, s), "WARN: pageable H2D runs");
    GPU_OK(cuxfer_copy_async(dev, pageable, N, s), "WARN: again");
    memset(back, 0, N);
    GPU_OK(cuxfer_copy_async(back, dev, N, s), "D2H");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(back, pageable, N) == 0, "WARN: data arrives");
    contains(logbuf, "cuxfer: warning: cuxfer_copy_async: the source is pageable host memory",
             "WARN: the warning names the call and the side");
    ok(strchr(logbuf, '\n') == logbuf + strlen(logbuf) - 1, "WARN: exactly one line for two copies");
    {
        cuxfer_view pv, dv;
        logbuf[0] = '\0';
        GPU_MUST(cuxfer_view_wrap(&pv, pageable, 256, 200, N / 256, 1));
        GPU_MUST(cuxfer_view_wrap(&dv, dev, 256, 200, N / 256, 1));
        is_int(CUXFER_MEMORY_PAGEABLE, pv.kind, "wrap classifies pageable memory");
        GPU_OK(cuxfer_copy2d_async(&pv, &dv, s), "WARN: 2D D2H into pageable runs");
        GPU_OK(cudaStreamSynchronize(s), "sync");
        contains(logbuf, "cuxfer_copy2d_async: the destination is pageable",
                 "WARN: the destination misuse is its own warning");
    }

    /* ERROR */
    policy("error");
    memset(back, 0x77, N);
    err = cuxfer_copy_async(back, pageable, N, s); /* H2H: no device side */
    is_int(cudaSuccess, err, "ERROR: pageable -> pinned host copy is not a misuse");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    GPU_MUST(cudaMemsetAsync(dev, 0x33, N, s));
    GPU_MUST(cudaStreamSynchronize(s));
    is_int(cudaErrorInvalidValue, cuxfer_copy_async(dev, pageable, N, s),
           "ERROR: pageable H2D refused");
    contains(cuxfer_last_reason(), "cuxfer_copy_async: the source is pageable host memory",
             "ERROR: with a reason");
    memset(pageable, 0x44, N);
    is_int(cudaErrorInvalidValue, cuxfer_copy_async(pageable, dev, N, s),
           "ERROR: pageable D2H refused");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    {
        size_t i, bad = 0;
        for (i = 0; i < N; ++i)
            bad += pageable[i] != 0x44;
        is_int(0, (long long)bad, "ERROR: the refused destination is untouched");
    }
    is_string("", logbuf, "ERROR: nothing printed");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error after refusals");

    /* The classification cache never outlives what cuxfer frees, and only
     * briefly what is freed behind its back. */
    {
        unsigned char *buf = (unsigned char *)malloc(N);
        int i, allowed = 0;
        fill_pattern(buf, N, 6);
        GPU_MUST(cuxfer_host_register(buf, N, 0));
        GPU_OK(cuxfer_copy_async(dev, buf, N, s), "ERROR: registered memory copies");
        GPU_MUST(cudaStreamSynchronize(s));
        GPU_OK(cuxfer_host_unregister(buf), "unregister through cuxfer");
        is_int(cudaErrorInvalidValue, cuxfer_copy_async(dev, buf, N, s),
               "ERROR: after cuxfer_host_unregister the same pointer is pageable again");
        GPU_MUST(cudaHostRegister(buf, N, 0));
        GPU_OK(cuxfer_copy_async(dev, buf, N, s), "registered behind cuxfer's back copies");
        GPU_MUST(cudaStreamSynchronize(s));
        GPU_MUST(cudaHostUnregister(buf));
        for (i = 0; i < 300; ++i) {
            if (cuxfer_copy_async(dev, buf, 64, s) != cudaSuccess)
                break;
            ++allowed;
        }
        GPU_MUST(cudaStreamSynchronize(s));
        ok(allowed <= 256, "unregistered behind cuxfer's back: caught within 256 copies (%d)",
           allowed);
        (void)cudaGetLastError();
        free(buf);
    }
    policy("warn");

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
