/* SPDX-License-Identifier: MIT */
/*
 * async-api - time asynchronous work while the CPU keeps running (the
 * pattern of NVIDIA's asyncAPI sample): upload, a kernel and a download
 * are queued on a non-blocking stream between two timer events, and the
 * CPU counts how often it polled before the GPU was done.  Exit 0 when the
 * result is right, 1 when not, 77 when there is no CUDA device.
 */
#include <stdio.h>
#include <string.h>
#include <cuxfer.h>

__global__ void increment(int *a, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] += value;
}

int main(void)
{
    const int n = 16 << 20, value = 26;
    cuxfer_stream_pool pool;
    cudaStream_t s;
    cuxfer_timer t;
    int *h, *d, ndev, i, bad = 0;
    unsigned long polls = 0;
    float ms;
    cudaError_t err;

    if (cuxfer_device_count(&ndev) != cudaSuccess) {
        fprintf(stderr, "async-api: skipped: no CUDA device: %s\n", cuxfer_last_reason());
        return 77;
    }
    CUXFER_CHECK(CUXFER_HOST_ALLOC(&h, n, cudaHostAllocDefault));
    CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&d, n));
    CUXFER_CHECK(cuxfer_stream_pool_create(&pool, 1, 0, 0));
    CUXFER_CHECK(cuxfer_stream_pool_next(&pool, &s));
    CUXFER_CHECK(cuxfer_timer_create(&t));
    memset(h, 0, n * sizeof *h);

    /* Everything below is queued; the calls return at once. */
    CUXFER_CHECK(cuxfer_timer_start(&t, s));
    CUXFER_CHECK(cuxfer_copy_async(d, h, n * sizeof *h, s));
    increment<<<(n + 511) / 512, 512, 0, s>>>(d, value, n);
    CUXFER_CHECK_LAUNCH();
    CUXFER_CHECK(cuxfer_copy_async(h, d, n * sizeof *h, s));
    CUXFER_CHECK(cuxfer_timer_stop(&t, s));

    /* The CPU is free meanwhile: here it only counts. */
    while ((err = cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms)) == cudaErrorNotReady)
        ++polls;
    CUXFER_CHECK(err);

    for (i = 0; i < n; ++i)
        bad += h[i] != value;
    printf("async-api: GPU %.3f ms, CPU polled %lu times meanwhile; %s\n", (double)ms, polls,
           bad ? "WRONG" : "result verified");
    CUXFER_CHECK(cuxfer_timer_destroy(&t));
    CUXFER_CHECK(cuxfer_stream_pool_destroy(&pool));
    CUXFER_CHECK(cuxfer_device_free(d));
    CUXFER_CHECK(cuxfer_host_free(h));
    return bad ? 1 : 0;
}
