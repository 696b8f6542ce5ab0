/* SPDX-License-Identifier: MIT */
/*
 * simple-streams - overlap copies and kernels across N streams (the
 * pattern of NVIDIA's simpleStreams sample): the array is cut into N
 * chunks, and each chunk's upload, kernel and download go on a stream of
 * their own, so one chunk's copy runs while another's kernel does.  The
 * same work on one stream is timed for comparison.  Exit 0 when both
 * results are right, 1 when not, 77 when there is no CUDA device.
 */
#include <stdio.h>
#include <time.h>
#include <cuxfer.h>

enum { NSTREAMS = 4, N = 16 << 20, CHUNK = N / NSTREAMS };

__global__ void add_index(int *a, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] += base + i;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Upload, add the element's index, download: chunk k on stream k of the
 * pool when it has NSTREAMS streams, all on one stream when it has one. */
static double run(cuxfer_stream_pool *pool, int *h, int *d)
{
    double t0 = now_ms();
    int k;
    for (k = 0; k < NSTREAMS; ++k) {
        cudaStream_t s;
        size_t off = (size_t)k * CHUNK;
        CUXFER_CHECK(cuxfer_stream_pool_next(pool, &s));
        CUXFER_CHECK(cuxfer_copy_async(d + off, h + off, CHUNK * sizeof *h, s));
        add_index<<<(CHUNK + 511) / 512, 512, 0, s>>>(d + off, (int)off, CHUNK);
        CUXFER_CHECK_LAUNCH();
        CUXFER_CHECK(cuxfer_copy_async(h + off, d + off, CHUNK * sizeof *h, s));
    }
    CUXFER_CHECK(cuxfer_stream_pool_sync(pool));
    return now_ms() - t0;
}

static int check(int *h, int round)
{
    int i, bad = 0;
    for (i = 0; i < N; ++i) {
        bad += h[i] != round * i;
    }
    return bad;
}

int main(void)
{
    cuxfer_stream_pool one, many;
    int *h, *d, ndev, i, bad;
    double t1, tn;

    if (cuxfer_device_count(&ndev) != cudaSuccess) {
        fprintf(stderr, "simple-streams: skipped: no CUDA device: %s\n", cuxfer_last_reason());
        return 77;
    }
    CUXFER_CHECK(CUXFER_HOST_ALLOC(&h, N, cudaHostAllocDefault));
    CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&d, N));
    CUXFER_CHECK(cuxfer_stream_pool_create(&one, 1, 0, 0));
    CUXFER_CHECK(cuxfer_stream_pool_create(&many, NSTREAMS, 0, 0));
    for (i = 0; i < N; ++i)
        h[i] = 0;

    (void)run(&many, h, d);       /* warm-up; h[i] = i afterwards */
    t1 = run(&one, h, d);         /* h[i] = 2 i */
    tn = run(&many, h, d);        /* h[i] = 3 i */
    bad = check(h, 3);
    printf("simple-streams: 1 stream %.3f ms, %d streams %.3f ms; %s\n", t1, NSTREAMS, tn,
           bad ? "WRONG" : "result verified");
    CUXFER_CHECK(cuxfer_stream_pool_destroy(&many));
    CUXFER_CHECK(cuxfer_stream_pool_destroy(&one));
    CUXFER_CHECK(cuxfer_device_free(d));
    CUXFER_CHECK(cuxfer_host_free(h));
    return bad ? 1 : 0;
}
