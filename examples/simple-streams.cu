/* SPDX-License-Identifier: MIT */
/*
 * simple-streams - NVIDIA's simpleStreams sample on cuxfer: a kernel that
 * fills an array and the array's download, timed one after the other and
 * then cut into NSTREAMS chunks, each chunk's kernel and download on a
 * stream of its own so that one chunk's copy overlaps another's kernel.
 * As in the sample, the streams are ordinary (blocking) streams and the
 * timer runs on stream 0, which orders itself after all of them: "record
 * on 0, work on N streams, record on 0".  Prints the sample's figures
 * (memcopy, kernel, non-streamed and streamed milliseconds, run with its
 * default --sync_method=0: 100 repetitions); exit 0 when the result is
 * right, 1 when not, 77 when there is no CUDA device.
 */
#include <stdio.h>
#include <string.h>
#include <cuxfer.h>

enum { NSTREAMS = 4, NREPS = 100, NITERATIONS = 5 };

__global__ void init_array(int *g_data, int *factor, int num_iterations)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < num_iterations; i++)
        g_data[idx] += *factor; /* non-coalesced on purpose, to burn time */
}

static int correct_data(const int *a, int n, int c)
{
    for (int i = 0; i < n; i++)
        if (a[i] != c) {
            printf("%d: %d %d\n", i, a[i], c);
            return 0;
        }
    return 1;
}

int main(void)
{
    const int n = 16 * 1024 * 1024, c = 5;
    const size_t nbytes = n * sizeof(int);
    cudaStream_t streams[NSTREAMS];
    cudaDeviceProp prop;
    cuxfer_timer t;
    int *h_a, *d_a, *d_c, ndev = 0;
    float time_memcpy, time_kernel, elapsed_time;

    printf("[ simpleStreams ]\n\n");
    printf("Device synchronization method set to = 0 (Automatic Blocking)\n");
    printf("Setting reps to %d to demonstrate steady state\n", NREPS);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "simple-streams: skipped: no CUDA device\n");
        return 77;
    }
    CUXFER_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("> CUDA Capable: SM %d.%d hardware\n", prop.major, prop.minor);
    printf("> array_size   = %d\n\n", n);
    printf("> Using CPU/GPU Device Synchronization method (cudaDeviceScheduleAuto)\n");
    CUXFER_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleAuto | cudaDeviceMapHost));

    CUXFER_CHECK(CUXFER_HOST_ALLOC(&h_a, n, cudaHostAllocDefault));
    CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&d_a, n));
    CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&d_c, 1));
    CUXFER_CHECK(cuxfer_copy(d_c, &c, sizeof c)); /* 4 pageable bytes: no warning */
    printf("\nStarting Test\n");
    for (int i = 0; i < NSTREAMS; i++)
        CUXFER_CHECK(cudaStreamCreate(&streams[i]));
    CUXFER_CHECK(cuxfer_timer_create(&t));

    /* time the download alone */
    CUXFER_CHECK(cuxfer_timer_start(&t, 0));
    CUXFER_CHECK(cuxfer_copy_async(h_a, d_a, nbytes, streams[0]));
    CUXFER_CHECK(cuxfer_timer_stop(&t, 0));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &time_memcpy));
    printf("memcopy:\t%.2f\n", (double)time_memcpy);

    /* time the kernel alone */
    CUXFER_CHECK(cuxfer_timer_start(&t, 0));
    init_array<<<n / 512, 512, 0, streams[0]>>>(d_a, d_c, NITERATIONS);
    CUXFER_CHECK_LAUNCH();
    CUXFER_CHECK(cuxfer_timer_stop(&t, 0));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &time_kernel));
    printf("kernel:\t\t%.2f\n", (double)time_kernel);

    /* non-streamed execution for reference: kernel, then a synchronous copy */
    CUXFER_CHECK(cuxfer_timer_start(&t, 0));
    for (int k = 0; k < NREPS; k++) {
        init_array<<<n / 512, 512>>>(d_a, d_c, NITERATIONS);
        CUXFER_CHECK_LAUNCH();
        CUXFER_CHECK(cuxfer_copy(h_a, d_a, nbytes));
    }
    CUXFER_CHECK(cuxfer_timer_stop(&t, 0));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &elapsed_time));
    printf("non-streamed:\t%.2f\n", (double)elapsed_time / NREPS);

    /* NSTREAMS streams: all kernels, then all downloads, NREPS times */
    memset(h_a, 255, nbytes); /* poison, for testing correctness */
    CUXFER_CHECK(cudaMemset(d_a, 0, nbytes));
    CUXFER_CHECK(cuxfer_timer_start(&t, 0));
    for (int k = 0; k < NREPS; k++) {
        for (int i = 0; i < NSTREAMS; i++) {
            init_array<<<n / (NSTREAMS * 512), 512, 0, streams[i]>>>(d_a + i * n / NSTREAMS,
                                                                     d_c, NITERATIONS);
            CUXFER_CHECK_LAUNCH();
        }
        for (int i = 0; i < NSTREAMS; i++)
            CUXFER_CHECK(cuxfer_copy_async(h_a + i * n / NSTREAMS, d_a + i * n / NSTREAMS,
                                           nbytes / NSTREAMS, streams[i]));
    }
    CUXFER_CHECK(cuxfer_timer_stop(&t, 0));
    CUXFER_CHECK(cuxfer_timer_ms(&t, CUXFER_WAIT, &elapsed_time));
    printf("%d streams:\t%.2f\n", NSTREAMS, (double)elapsed_time / NREPS);

    printf("-------------------------------\n");
    int ok = correct_data(h_a, n, c * NREPS * NITERATIONS);
    for (int i = 0; i < NSTREAMS; i++)
        CUXFER_CHECK(cudaStreamDestroy(streams[i]));
    CUXFER_CHECK(cuxfer_timer_destroy(&t));
    CUXFER_CHECK(cuxfer_host_free(h_a));
    CUXFER_CHECK(cuxfer_device_free(d_a));
    CUXFER_CHECK(cuxfer_device_free(d_c));
    return ok ? 0 : 1;
}
