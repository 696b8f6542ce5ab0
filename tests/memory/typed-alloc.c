/* SPDX-License-Identifier: MIT */
/* Typed and device allocation (issue 17, item 3): CUXFER_HOST_ALLOC,
 * CUXFER_DEVICE_ALLOC and CUXFER_MANAGED_ALLOC take a typed pointer's
 * address and an element count
 * (no cast; outputs/outputs-set.sh compiles them as C++ and CUDA too);
 * zero bytes and overflow are refused before any CUDA call with the values
 * named; cuxfer_device_alloc names why there is no device.  With a device:
 * a round trip through typed buffers, byte-exact, and the registry knows
 * the device range (any offset) until cuxfer_device_free forgets it. */
#include <stdint.h>
#include "gpu.h"

int main(void)
{
    enum { N = 100000 };
    double *dp = (double *)&dp;
    int32_t *h, *back, *d;
    void *v = &v;
    cudaError_t err;
    cudaStream_t s;
    size_t i;
    int bad;
    plan(0);

    err = CUXFER_HOST_ALLOC(&dp, 0, cudaHostAllocDefault);
    is_int(cudaErrorInvalidValue, err, "host: 0 elements refused");
    ok(dp == NULL, "host: the pointer is NULL after a refusal");
    contains(cuxfer_last_reason(), "count 0 x elem_size 8 is zero bytes",
             "host: the reason names count and element size");
    err = CUXFER_HOST_ALLOC(&dp, SIZE_MAX / 4, cudaHostAllocDefault);
    is_int(cudaErrorInvalidValue, err, "host: count x sizeof(double) overflow refused");
    contains(cuxfer_last_reason(), "x elem_size 8 overflows size_t", "host: overflow named");
    err = CUXFER_HOST_ALLOC(&dp, 4, 0x80u);
    is_int(cudaErrorInvalidValue, err, "host: unknown flags refused");

    dp = (double *)&dp;
    err = CUXFER_DEVICE_ALLOC(&dp, 0);
    is_int(cudaErrorInvalidValue, err, "device: 0 elements refused");
    ok(dp == NULL, "device: the pointer is NULL after a refusal");
    contains(cuxfer_last_reason(), "cuxfer_device_alloc: count 0 x elem_size 8 is zero bytes",
             "device: the reason names the call, count and element size");
    err = CUXFER_DEVICE_ALLOC(&dp, SIZE_MAX / 2);
    is_int(cudaErrorInvalidValue, err, "device: overflow refused");
    contains(cuxfer_last_reason(), "overflows size_t", "device: overflow named");
    err = cuxfer_device_alloc(NULL, 1, 1);
    is_int(cudaErrorInvalidValue, err, "device: NULL p refused");
    contains(cuxfer_last_reason(), "p is NULL", "device: NULL p named");
    is_int(cudaSuccess, cuxfer_device_free(NULL), "cuxfer_device_free(NULL) is a no-op");

    dp = (double *)&dp;
    err = CUXFER_MANAGED_ALLOC(&dp, 0, cudaMemAttachGlobal);
    is_int(cudaErrorInvalidValue, err, "managed: 0 elements refused");
    ok(dp == NULL, "managed: the pointer is NULL after a refusal");
    contains(cuxfer_last_reason(), "cuxfer_managed_alloc: count 0 x elem_size 8 is zero bytes",
             "managed: the reason names the call, count and element size");
    err = CUXFER_MANAGED_ALLOC(&dp, SIZE_MAX / 4, 0);
    is_int(cudaErrorInvalidValue, err, "managed: count x sizeof(double) overflow refused");
    contains(cuxfer_last_reason(), "x elem_size 8 overflows size_t", "managed: overflow named");
    dp = (double *)&dp;
    err = CUXFER_MANAGED_ALLOC(&dp, 4, cudaMemAttachSingle);
    is_int(cudaErrorInvalidValue, err, "managed: cudaMemAttachSingle refused");
    ok(dp == NULL, "managed: the pointer is NULL after that refusal too");

    if (!gpu_present(0)) {
        char why[CUXFER_REASON_MAX];
        snprintf(why, sizeof why, "%s", cuxfer_last_reason());
        err = cuxfer_device_alloc(&v, 16, 1);
        ok(err != cudaSuccess, "device: no device, the allocation fails (%s)",
           cudaGetErrorName(err));
        ok(v == NULL, "device: no device, the pointer is NULL");
        contains(cuxfer_last_reason(), "cuxfer_device_alloc: cudaMalloc of 16 bytes",
                 "device: no device, the reason names the call and bytes");
        contains(cuxfer_last_reason(), why, "device: ... and says why there is no device");
        skip(1, "no CUDA device: %s", why);
        done_testing();
    }

    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(CUXFER_HOST_ALLOC(&h, N, cudaHostAllocDefault));
    GPU_MUST(CUXFER_HOST_ALLOC(&back, N, cudaHostAllocDefault));
    GPU_MUST(CUXFER_DEVICE_ALLOC(&d, N));
    is_int(CUXFER_MEMORY_DEVICE, cuxfer_memory_kind(d), "the driver says device memory");
    is_int(CUXFER_MEMORY_DEVICE, cuxfer_memory_kind(d + N - 1),
           "the last element is device memory too");
    /* The registry's exact range (N elements, forgotten after the free)
     * is checked in tests/state/internals.c. */
    for (i = 0; i < N; ++i)
        h[i] = (int32_t)(i * 2654435761u);
    memset(back, 0xA5, N * sizeof *back);
    GPU_OK(cuxfer_copy_async(d, h, N * sizeof *h, s), "H2D of typed buffers");
    GPU_OK(cuxfer_copy_async(back, d, N * sizeof *d, s), "D2H of typed buffers");
    GPU_OK(cudaStreamSynchronize(s), "synchronize");
    for (bad = 0, i = 0; i < N; ++i)
        bad += back[i] != h[i];
    is_int(0, bad, "%d int32 elements came back byte-exact", N);
    GPU_OK(cuxfer_device_free(d), "cuxfer_device_free");
    {
        /* managed: written on the host, through the device and back */
        int32_t *m = NULL;
        GPU_OK(CUXFER_MANAGED_ALLOC(&m, N, cudaMemAttachGlobal), "CUXFER_MANAGED_ALLOC");
        is_int(CUXFER_MEMORY_MANAGED, cuxfer_memory_kind(m), "the driver says managed memory");
        for (i = 0; i < N; ++i)
            m[i] = (int32_t)(i * 40503u + 7u);
        GPU_MUST(CUXFER_DEVICE_ALLOC(&d, N));
        memset(back, 0xA5, N * sizeof *back);
        GPU_OK(cuxfer_copy_async(d, m, N * sizeof *m, s), "managed to device");
        GPU_OK(cuxfer_copy_async(back, d, N * sizeof *d, s), "and back to pinned");
        GPU_OK(cudaStreamSynchronize(s), "synchronize");
        for (bad = 0, i = 0; i < N; ++i)
            bad += back[i] != (int32_t)(i * 40503u + 7u);
        is_int(0, bad, "%d int32 managed elements came back byte-exact", N);
        GPU_OK(cuxfer_device_free(d), "cuxfer_device_free");
        GPU_OK(cuxfer_managed_free(m), "cuxfer_managed_free");
    }
    GPU_OK(cuxfer_host_free(h), "free h");
    GPU_OK(cuxfer_host_free(back), "free back");
    GPU_OK(cudaStreamDestroy(s), "destroy stream");
    done_testing();
}
