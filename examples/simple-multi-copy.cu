/* SPDX-License-Identifier: MIT */
/*
 * simple-multi-copy - NVIDIA's simpleMultiCopy sample on cuxfer: frames
 * go up, through a kernel and back, frame i+1's upload overlapping frame
 * i's kernel and frame i-1's download.  The sample's STREAM_COUNT streams,
 * buffers and cycle events are a transfer ring of 4 slots (cuxfer_ring):
 * run at depth 1 (fully serialized) and at depth 4 (overlapped), timed on
 * stream 0 with the ring fenced in behind it.  Prints the sample's figures
 * (copy and kernel times and throughput, the theoretical limits, the
 * serialized and overlapped averages over 10 frames); exit 0 when every
 * output is right, 1 when not, 77 when there is no CUDA device.
 */
#include <stdio.h>
#include <string.h>
#include <cuxfer.h>

enum { STREAM_COUNT = 4, N = 1 << 22, NREPS = 10, INNER_REPS = 5 };
static const size_t memsize = N * sizeof(int);

__global__ void incKernel(int *g_out, const int *g_in, int n, int inner_reps)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n)
        for (int i = 0; i < inner_reps; ++i)
            g_out[idx] = g_in[idx] + 1;
}

/* A slot's buffers: input then output, on the host and on the device. */
static cudaError_t process(const cuxfer_ring_slot *slot, void *arg)
{
    const int *in = (const int *)slot->device;
    (void)arg;
    incKernel<<<N / 512, 512, 0, slot->stream>>>((int *)slot->device + N, in, N, INNER_REPS);
    return cudaGetLastError();
}

/* NREPS frames through the ring at depth streams_used, timed on stream 0. */
static float processWithStreams(cuxfer_ring *ring, cuxfer_timer *t, int streams_used)
{
    cuxfer_ring_job job;
    cuxfer_ring_slot *slot;
    float ms;
    memset(&job, 0, sizeof job);
    job.h2d_bytes = memsize;
    job.work = process;
    job.d2h_bytes = memsize;
    job.d2h_host_offset = job.d2h_device_offset = memsize;
    CUXFER_CHECK(cuxfer_ring_set_depth(ring, streams_used));
    CUXFER_CHECK(cuxfer_timer_start(t, 0));
    CUXFER_CHECK(cuxfer_ring_wait(ring, 0));
    for (int i = 0; i < NREPS; ++i) {
        CUXFER_CHECK(cuxfer_ring_acquire(ring, &slot)); /* the slot's last cycle is done */
        /* as in the sample, each frame's input goes up one frame ahead:
         * frame 0's is on the device already, and the last frame's upload
         * is of the frame after it */
        job.h2d_bytes = i ? memsize : 0;
        CUXFER_CHECK(cuxfer_ring_submit(ring, slot, &job));
    }
    CUXFER_CHECK(cuxfer_ring_acquire(ring, &slot));
    job.h2d_bytes = memsize;
    job.work = NULL;
    job.d2h_bytes = 0;
    CUXFER_CHECK(cuxfer_ring_submit(ring, slot, &job));
    CUXFER_CHECK(cuxfer_stream_wait_ring(0, ring));
    CUXFER_CHECK(cuxfer_timer_stop(t, 0));
    CUXFER_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
    return ms;
}

static float maxf(float a, float b) { return a > b ? a : b; }

int main(void)
{
    cuxfer_ring ring;
    cuxfer_timer t;
    cudaStream_t s;
    cudaDeviceProp prop;
    int *h[STREAM_COUNT], *d[STREAM_COUNT];
    int ndev = 0, overlap = 0, engines = 0, passed = 1;
    float h2d, d2h, kernel;

    printf("[simpleMultiCopy] - Starting...\n");
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "simple-multi-copy: skipped: no CUDA device\n");
        return 77;
    }
    CUXFER_CHECK(cudaGetDeviceProperties(&prop, 0));
    CUXFER_CHECK(cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0));
    CUXFER_CHECK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, 0));
    printf("> Using CUDA device [%d]: %s\n", 0, prop.name);
    printf("> Device name: %s\n", prop.name);
    printf("> CUDA Capability %d.%d hardware with %d multi-processors\n", prop.major,
           prop.minor, prop.multiProcessorCount);
    printf("> scale_factor = %.2f\n", 1.0);
    printf("> array_size   = %d\n\n", N);

    /* STREAM_COUNT slots, each a stream, an event and input and output
     * buffers on both sides; inputs 0, so every output is 1. */
    CUXFER_CHECK(cuxfer_ring_create(&ring, STREAM_COUNT, 2 * memsize, 2 * memsize, NULL));
    CUXFER_CHECK(cuxfer_timer_create(&t));
    for (int i = 0; i < STREAM_COUNT; ++i) {
        CUXFER_CHECK(cuxfer_ring_slot_buffers(&ring, i, (void **)&h[i], (void **)&d[i]));
        memset(h[i], 0, memsize);
    }
    CUXFER_CHECK(cuxfer_ring_stream(&ring, 0, &s));

    /* kernel warm-up, then each step alone, on slot 0's stream */
    incKernel<<<N / 512, 512, 0, s>>>(d[0] + N, d[0], N, INNER_REPS);
    CUXFER_CHECK_LAUNCH();
    CUXFER_CHECK(cuxfer_timer_start(&t, s));
    CUXFER_CHECK(cuxfer_copy_async(d[0], h[0], memsize, s));
    CUXFER_CHECK(cuxfer_timer_stop(&t, s));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &h2d));
    CUXFER_CHECK(cuxfer_timer_start(&t, s));
    CUXFER_CHECK(cuxfer_copy_async(h[0] + N, d[0] + N, memsize, s));
    CUXFER_CHECK(cuxfer_timer_stop(&t, s));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &d2h));
    CUXFER_CHECK(cuxfer_timer_start(&t, s));
    incKernel<<<N / 512, 512, 0, s>>>(d[0] + N, d[0], N, INNER_REPS);
    CUXFER_CHECK_LAUNCH();
    CUXFER_CHECK(cuxfer_timer_stop(&t, s));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &kernel));

    printf("\nRelevant properties of this CUDA device\n");
    printf("(%s) Can overlap one CPU<>GPU data transfer with GPU kernel execution "
           "(device property \"cudaDevAttrGpuOverlap\")\n", overlap ? "X" : " ");
    printf("(%s) Can overlap two CPU<>GPU data transfers with GPU kernel execution\n"
           "    (Compute Capability >= 2.0 AND (Tesla product OR Quadro "
           "4000/5000/6000/K5000)\n", prop.major >= 2 && engines > 1 ? "X" : " ");
    printf("\nMeasured timings (throughput):\n");
    printf(" Memcpy host to device\t: %f ms (%f GB/s)\n", h2d, (memsize * 1e-6) / h2d);
    printf(" Memcpy device to host\t: %f ms (%f GB/s)\n", d2h, (memsize * 1e-6) / d2h);
    printf(" Kernel\t\t\t: %f ms (%f GB/s)\n", kernel,
           (INNER_REPS * memsize * 2e-6) / kernel);
    printf("\nTheoretical limits for speedup gained from overlapped data transfers:\n");
    printf("No overlap at all (transfer-kernel-transfer): %f ms \n", h2d + d2h + kernel);
    printf("Compute can overlap with one transfer: %f ms\n", maxf(h2d + d2h, kernel));
    printf("Compute can overlap with both data transfers: %f ms\n",
           maxf(maxf(h2d, d2h), kernel));

    float serial_time = processWithStreams(&ring, &t, 1);
    float overlap_time = processWithStreams(&ring, &t, STREAM_COUNT);
    printf("\nAverage measured timings over %d repetitions:\n", NREPS);
    printf(" Avg. time when execution fully serialized\t: %f ms\n", serial_time / NREPS);
    printf(" Avg. time when overlapped using %d streams\t: %f ms\n", STREAM_COUNT,
           overlap_time / NREPS);
    printf(" Avg. speedup gained (serialized - overlapped)\t: %f ms\n",
           (serial_time - overlap_time) / NREPS);
    printf("\nMeasured throughput:\n");
    printf(" Fully serialized execution\t\t: %f GB/s\n",
           (NREPS * (memsize * 2e-6)) / serial_time);
    printf(" Overlapped using %d streams\t\t: %f GB/s\n", STREAM_COUNT,
           (NREPS * (memsize * 2e-6)) / overlap_time);

    /* every slot's last output (the ring is idle: the timer waited for it) */
    for (int j = 0; j < STREAM_COUNT; ++j)
        for (int i = 0; i < N; ++i)
            passed &= h[j][N + i] == 1;
    CUXFER_CHECK(cuxfer_timer_destroy(&t));
    CUXFER_CHECK(cuxfer_ring_destroy(&ring));
    return passed ? 0 : 1;
}
