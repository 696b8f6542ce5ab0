/* SPDX-License-Identifier: MIT */
/*
 * simple-callback - NVIDIA's simpleCallback sample on cuxfer: one CPU
 * thread per workload fills its input, queues upload, kernel and download
 * on a stream of its own (a slot of a transfer ring spread over every GPU)
 * and a completion callback; the callback, given the stream's status,
 * starts a CPU thread that checks the result while other workloads still
 * run.  The callback also runs when the stream failed (cuxfer_on_done), so
 * the main thread's wait cannot hang.  Prints the sample's lines; exit 0
 * when every workload is right, 1 when not, 77 when there is no CUDA
 * device.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <cuxfer.h>

enum { N_workloads = 8, N_elements_per_workload = 100000 };

struct workload {
    int id;
    cuxfer_ring_slot *slot;
    cudaError_t status;
    int success;
    int threaded; /* thread was started (else postprocess ran inline) */
    pthread_t thread;
};

static cuxfer_ring ring;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int finished; /* the barrier: workloads post-processed */

__global__ void incKernel(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i]++;
}

static cudaError_t process(const cuxfer_ring_slot *slot, void *arg)
{
    (void)arg;
    incKernel<<<(N_elements_per_workload + 511) / 512, 512, 0, slot->stream>>>(
        (int *)slot->device, N_elements_per_workload);
    return cudaGetLastError();
}

/* A CPU thread started by the callback: the results are back. */
static void *postprocess(void *arg)
{
    struct workload *w = (struct workload *)arg;
    const int *h = (const int *)w->slot->host;
    w->success = w->status == cudaSuccess;
    for (int i = 0; i < N_elements_per_workload; ++i)
        w->success &= h[i] == i + w->id + 1;
    pthread_mutex_lock(&mu);
    ++finished;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* On CUDA's callback thread, no CUDA calls: hand over to a CPU thread. */
static void CUDART_CB myStreamCallback(cudaStream_t s, cudaError_t status, void *arg)
{
    struct workload *w = (struct workload *)arg;
    (void)s;
    w->status = status;
    w->threaded = 1; /* before the thread can signal main */
    if (pthread_create(&w->thread, NULL, postprocess, w) != 0) {
        w->threaded = 0;
        postprocess(w);
    }
}

/* A CPU thread per workload: generate, then queue the GPU's part. */
static void *launch(void *arg)
{
    struct workload *w = (struct workload *)arg;
    cuxfer_ring_job job;
    int *h;
    CUXFER_CHECK(cuxfer_ring_acquire(&ring, &w->slot));
    h = (int *)w->slot->host;
    for (int i = 0; i < N_elements_per_workload; ++i)
        h[i] = w->id + i;
    memset(&job, 0, sizeof job);
    job.h2d_bytes = job.d2h_bytes = N_elements_per_workload * sizeof(int);
    job.work = process;
    CUXFER_CHECK(cuxfer_ring_submit(&ring, w->slot, &job));
    CUXFER_CHECK(cuxfer_on_done(w->slot->stream, myStreamCallback, w));
    return NULL;
}

int main(void)
{
    struct workload workloads[N_workloads];
    pthread_t launchers[N_workloads];
    cuxfer_ring_options opt;
    int gpus[32], n_gpus = 0, success = 1;

    printf("Starting simpleCallback\n");
    if (cudaGetDeviceCount(&n_gpus) != cudaSuccess || n_gpus == 0) {
        fprintf(stderr, "simple-callback: skipped: no CUDA device\n");
        return 77;
    }
    printf("Found %d CUDA capable GPUs\n", n_gpus);
    if (n_gpus > 32)
        n_gpus = 32;
    for (int d = 0; d < n_gpus; d++) {
        cudaDeviceProp prop;
        CUXFER_CHECK(cudaGetDeviceProperties(&prop, d));
        printf("GPU[%d] %s supports SM %d.%d, capable GPU Callback Functions\n", d, prop.name,
               prop.major, prop.minor);
        gpus[d] = d;
    }
    printf("%d GPUs available to run Callback Functions\n", n_gpus);

    /* One slot per workload, slot i on GPU i % n_gpus. */
    memset(&opt, 0, sizeof opt);
    opt.devices = gpus;
    opt.ndevices = n_gpus;
    CUXFER_CHECK(cuxfer_ring_create(&ring, N_workloads, N_elements_per_workload * sizeof(int),
                                    N_elements_per_workload * sizeof(int), &opt));
    printf("Starting %d heterogeneous computing workloads\n", N_workloads);
    for (int i = 0; i < N_workloads; ++i) {
        workloads[i].id = i;
        workloads[i].success = 0;
        workloads[i].threaded = 0;
        if (pthread_create(&launchers[i], NULL, launch, &workloads[i]) != 0) {
            fprintf(stderr, "simple-callback: pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < N_workloads; ++i)
        pthread_join(launchers[i], NULL);
    /* Sleep until all workloads have finished. */
    pthread_mutex_lock(&mu);
    while (finished < N_workloads)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    printf("Total of %d workloads finished:\n", N_workloads);
    for (int i = 0; i < N_workloads; ++i) {
        if (workloads[i].threaded)
            pthread_join(workloads[i].thread, NULL);
        success &= workloads[i].success;
    }
    printf("%s\n", success ? "Success" : "Failure");
    CUXFER_CHECK(cuxfer_ring_destroy(&ring));
    return success ? 0 : 1;
}
