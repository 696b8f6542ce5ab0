/* SPDX-License-Identifier: MIT */
/* A 1D copy between the memory of two GPUs enables peer access in both
 * directions first, as cuxfer_copy2d_async does (cuxfer_copy2d_async(3)),
 * so the copy engines move the bytes directly: afterwards CUDA says the
 * access is enabled already.  Its own process, so that nothing else has
 * enabled it before (tests/devices/multi-gpu enables it by hand).  Both
 * copies byte-exact.  Needs 2 GPUs: skips with fewer, fails with
 * CUXFER_REQUIRE_GPU=2. */
#include "gpu.h"

#define NB ((size_t)1 << 20)

static int pattern_ok(const unsigned char *h, size_t n, unsigned seed)
{
    size_t k;
    for (k = 0; k < n; ++k)
        if (h[k] != (unsigned char)(k * 13 + seed))
            return 0;
    return 1;
}

int main(void)
{
    int can01 = 0, can10 = 0;
    unsigned char *d0, *d1, *h;
    cudaStream_t s;
    size_t k;
    gpu_require(2);
    plan(0);
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaDeviceCanAccessPeer(&can01, 0, 1));
    GPU_MUST(cudaDeviceCanAccessPeer(&can10, 1, 0));
    diag("peer access 0->1 %d, 1->0 %d", can01, can10);
    GPU_MUST(cudaMalloc((void **)&d0, NB));
    GPU_MUST(cudaSetDevice(1));
    GPU_MUST(cudaMalloc((void **)&d1, NB));
    GPU_MUST(cudaMemset(d1, 0xa5, NB));
    GPU_MUST(cudaDeviceSynchronize());
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaMallocHost((void **)&h, NB));
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (k = 0; k < NB; ++k)
        h[k] = (unsigned char)(k * 13 + 5);
    GPU_MUST(cudaMemcpy(d0, h, NB, cudaMemcpyHostToDevice));

    GPU_OK(cuxfer_copy_async(d1, d0, NB, s), "cuxfer_copy_async from device 0 to device 1");
    GPU_MUST(cudaStreamSynchronize(s));
    memset(h, 0x5a, NB);
    GPU_MUST(cudaMemcpy(h, d1, NB, cudaMemcpyDeviceToHost));
    ok(pattern_ok(h, NB, 5), "byte-exact on device 1");
    if (can01)
        is_int(cudaErrorPeerAccessAlreadyEnabled, cudaDeviceEnablePeerAccess(1, 0),
               "the copy enabled device 0's access to device 1");
    else
        skip(1, "device 0 cannot access device 1");
    (void)cudaGetLastError();
    GPU_MUST(cudaSetDevice(1));
    if (can10)
        is_int(cudaErrorPeerAccessAlreadyEnabled, cudaDeviceEnablePeerAccess(0, 0),
               "and device 1's access to device 0");
    else
        skip(1, "device 1 cannot access device 0");
    (void)cudaGetLastError();
    GPU_MUST(cudaSetDevice(0));
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");

    /* back the other way, synchronously */
    for (k = 0; k < NB; ++k)
        h[k] = (unsigned char)(k * 13 + 7);
    GPU_MUST(cudaMemcpy(d1, h, NB, cudaMemcpyHostToDevice));
    GPU_MUST(cudaMemset(d0, 0xa5, NB));
    GPU_OK(cuxfer_copy(d0, d1, NB), "cuxfer_copy from device 1 to device 0");
    memset(h, 0x5a, NB);
    GPU_MUST(cudaMemcpy(h, d0, NB, cudaMemcpyDeviceToHost));
    ok(pattern_ok(h, NB, 7), "byte-exact on device 0");

    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaFreeHost(h));
    GPU_MUST(cudaFree(d0));
    GPU_MUST(cudaFree(d1));
    done_testing();
}
