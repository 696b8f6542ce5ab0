/* SPDX-License-Identifier: MIT */
/* Managed memory: allocation within what the card has free, prefetch to
 * the device then a device read gives the right data, advice, prefetch
 * back to the CPU; the capability rule (concurrentManagedAccess 0 ->
 * cudaErrorNotSupported, nothing done) and a non-managed pointer refused,
 * neither leaving a sticky error. */
#include "gpu.h"

int main(void)
{
    enum { N = 8 << 20 };
    unsigned char *m = NULL, *d = NULL, *h = NULL, *huge = NULL;
    unsigned char *ref;
    size_t free_b = 0, total_b = 0;
    cudaStream_t s;
    cudaError_t err;
    int dev = 0, conc;

    gpu_require(1);
    plan(0);
    GPU_MUST(cudaGetDevice(&dev));
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    conc = cuxfer_managed_concurrent(dev);
    diag("device %d concurrentManagedAccess = %d", dev, conc);
    ok(conc == cuxfer_managed_concurrent(dev), "the capability answer is stable (cached)");

    GPU_MUST(cudaMemGetInfo(&free_b, &total_b));
    is_int(cudaErrorMemoryAllocation, cuxfer_managed_alloc((void **)&huge, free_b + (1u << 30), 1, 0),
           "more managed memory than the card has free is refused");
    contains(cuxfer_last_reason(), "free on the device", "with a reason");
    ok(huge == NULL, "and nothing is allocated");

    GPU_OK(cuxfer_managed_alloc((void **)&m, N, 1, 0), "managed alloc of 8 MiB");
    ref = (unsigned char *)malloc(N);
    fill_pattern(ref, N, 9);
    memcpy(m, ref, N);
    GPU_MUST(cudaMalloc((void **)&d, N));
    GPU_MUST(cuxfer_host_alloc((void **)&h, N, 1, 0));
    memset(h, 0xA5, N);

    err = cuxfer_advise(m, N, cudaMemAdviseSetReadMostly, dev);
    is_int(conc ? cudaSuccess : cudaErrorNotSupported, err, "advise read-mostly");
    err = cuxfer_prefetch(m, N, dev, s);
    is_int(conc ? cudaSuccess : cudaErrorNotSupported, err, "prefetch to the device");
    if (!conc)
        contains(cuxfer_last_reason(), "concurrentManagedAccess 0", "the reason says why");
    /* a device read: device-to-device copy out of the managed range */
    GPU_OK(cudaMemcpyAsync(d, m, N, cudaMemcpyDefault, s), "device reads the managed range");
    GPU_OK(cudaMemcpyAsync(h, d, N, cudaMemcpyDeviceToHost, s), "and brings it back");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(h, ref, N) == 0, "the device read the right data after the prefetch");
    err = cuxfer_advise(m, N, cudaMemAdviseSetPreferredLocation, CUXFER_CPU);
    is_int(conc ? cudaSuccess : cudaErrorNotSupported, err, "advise preferred location CPU");
    err = cuxfer_advise(m, N, cudaMemAdviseSetAccessedBy, dev);
    is_int(conc ? cudaSuccess : cudaErrorNotSupported, err, "advise accessed-by");
    err = cuxfer_prefetch(m, N, CUXFER_CPU, s);
    is_int(conc ? cudaSuccess : cudaErrorNotSupported, err, "prefetch back to the CPU");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(m, ref, N) == 0, "the CPU still reads the right data");

    is_int(cudaErrorInvalidValue, cuxfer_prefetch(d, N, dev, s), "prefetch of device memory refused");
    contains(cuxfer_last_reason(), "is device memory, not managed memory", "reason names the kind");
    is_int(cudaErrorInvalidValue, cuxfer_prefetch(ref, N, dev, s), "prefetch of pageable memory refused");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error");
    GPU_OK(cuxfer_managed_free(m), "managed free");
    is_int(cudaSuccess, cuxfer_managed_free(NULL), "managed free(NULL)");
    free(ref);
    cudaFree(d);
    cuxfer_host_free(h);
    cudaStreamDestroy(s);
    done_testing();
}
