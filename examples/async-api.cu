/* SPDX-License-Identifier: MIT */
/*
 * async-api - NVIDIA's asyncAPI sample on cuxfer: upload, a kernel and a
 * download are queued between two timer events, and the CPU counts how
 * often it polled before the GPU was done.  Prints the sample's figures
 * (GPU time, CPU time in the queueing calls, iterations); exit 0 when the
 * result is right, 1 when not, 77 when there is no CUDA device.  The work
 * goes on the thread's own default stream (cudaStreamPerThread), not on
 * the legacy stream 0, which would serialise with every blocking stream.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cuxfer.h>

__global__ void increment_kernel(int *g_data, int inc_value)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    g_data[idx] = g_data[idx] + inc_value;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int correct_output(const int *data, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (data[i] != x) {
            printf("Error! data[%d] = %d, ref = %d\n", i, data[i], x);
            return 0;
        }
    return 1;
}

int main(int argc, char *argv[])
{
    const int n = 16 * 1024 * 1024, value = 26;
    const size_t nbytes = n * sizeof(int);
    const cudaStream_t s = cudaStreamPerThread;
    cudaDeviceProp prop;
    cuxfer_timer t;
    int *a, *d_a, dev, ndev = 0;
    unsigned long counter = 0;
    float gpu_time;
    double cpu0, cpu_time;
    cudaError_t err;

    (void)argc;
    printf("[%s] - Starting...\n", argv[0]);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "async-api: skipped: no CUDA device\n");
        return 77;
    }
    CUXFER_CHECK(cudaGetDevice(&dev));
    CUXFER_CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("CUDA device [%s]\n", prop.name);
    CUXFER_CHECK(CUXFER_HOST_ALLOC(&a, n, cudaHostAllocDefault));
    memset(a, 0, nbytes);
    CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&d_a, n));
    CUXFER_CHECK(cuxfer_timer_create(&t));

    /* Everything below is queued; the calls return at once. */
    cpu0 = now_ms();
    CUXFER_CHECK(cuxfer_timer_start(&t, s));
    CUXFER_CHECK(cuxfer_copy_async(d_a, a, nbytes, s));
    increment_kernel<<<n / 512, 512, 0, s>>>(d_a, value);
    CUXFER_CHECK_LAUNCH();
    CUXFER_CHECK(cuxfer_copy_async(a, d_a, nbytes, s));
    CUXFER_CHECK(cuxfer_timer_stop(&t, s));
    cpu_time = now_ms() - cpu0;

    /* The CPU is free meanwhile: here it only counts. */
    while ((err = cuxfer_timer_ms(&t, CUXFER_NOWAIT, &gpu_time)) == cudaErrorNotReady)
        counter++;
    CUXFER_CHECK(err);

    printf("time spent executing by the GPU: %.2f\n", (double)gpu_time);
    printf("time spent by CPU in CUDA calls: %.2f\n", cpu_time);
    printf("CPU executed %lu iterations while waiting for GPU to finish\n", counter);
    int ok = correct_output(a, n, value);
    CUXFER_CHECK(cuxfer_timer_destroy(&t));
    CUXFER_CHECK(cuxfer_host_free(a));
    CUXFER_CHECK(cuxfer_device_free(d_a));
    return ok ? 0 : 1;
}
