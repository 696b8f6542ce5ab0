/* SPDX-License-Identifier: MIT */
/*
 * simple-callback - hand GPU results to CPU threads as each job completes
 * (the pattern of NVIDIA's simpleCallback sample): the main thread queues
 * upload, kernel and download for every job on a stream of its own and
 * arms a latch behind them; one CPU thread per job waits on its latch and
 * checks the job's result the moment it is back, while the others still
 * run.  No CUDA call is made from a callback.  Exit 0 when every job's
 * result is right, 1 when not, 77 when there is no CUDA device.
 */
#include <pthread.h>
#include <stdio.h>
#include <cuxfer.h>

enum { JOBS = 4, N = 1 << 20 };

struct job {
    int id;
    int *h, *d;
    cudaStream_t s;
    cuxfer_latch done;
    int bad;
};

__global__ void scale(int *a, int factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] *= factor;
}

/* A CPU worker: sleeps until the job's download has landed, then uses it. */
static void *consume(void *arg)
{
    struct job *j = (struct job *)arg;
    int i;
    CUXFER_CHECK(cuxfer_latch_wait(&j->done, -1));
    for (i = 0; i < N; ++i)
        j->bad += j->h[i] != i * (j->id + 2);
    return NULL;
}

int main(void)
{
    struct job jobs[JOBS];
    pthread_t th[JOBS];
    cuxfer_stream_pool pool;
    int ndev, k, i, bad = 0;

    if (cuxfer_device_count(&ndev) != cudaSuccess) {
        fprintf(stderr, "simple-callback: skipped: no CUDA device: %s\n", cuxfer_last_reason());
        return 77;
    }
    CUXFER_CHECK(cuxfer_stream_pool_create(&pool, JOBS, 0, 0));
    for (k = 0; k < JOBS; ++k) {
        struct job *j = &jobs[k];
        j->id = k;
        j->bad = 0;
        CUXFER_CHECK(CUXFER_HOST_ALLOC(&j->h, N, cudaHostAllocDefault));
        CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&j->d, N));
        CUXFER_CHECK(cuxfer_stream_pool_acquire(&pool, CUXFER_NOWAIT, &j->s));
        CUXFER_CHECK(cuxfer_latch_init(&j->done));
        for (i = 0; i < N; ++i)
            j->h[i] = i;
        CUXFER_CHECK(cuxfer_copy_async(j->d, j->h, N * sizeof *j->h, j->s));
        scale<<<(N + 255) / 256, 256, 0, j->s>>>(j->d, k + 2, N);
        CUXFER_CHECK_LAUNCH();
        CUXFER_CHECK(cuxfer_copy_async(j->h, j->d, N * sizeof *j->h, j->s));
        /* Armed before any thread can wait on it. */
        CUXFER_CHECK(cuxfer_latch_arm(&j->done, j->s));
    }
    for (k = 0; k < JOBS; ++k)
        if (pthread_create(&th[k], NULL, consume, &jobs[k]) != 0) {
            fprintf(stderr, "simple-callback: pthread_create failed\n");
            return 1;
        }
    for (k = 0; k < JOBS; ++k) {
        pthread_join(th[k], NULL);
        bad += jobs[k].bad;
        CUXFER_CHECK(cuxfer_latch_destroy(&jobs[k].done));
        CUXFER_CHECK(cuxfer_stream_pool_release(&pool, jobs[k].s));
        CUXFER_CHECK(cuxfer_device_free(jobs[k].d));
        CUXFER_CHECK(cuxfer_host_free(jobs[k].h));
    }
    CUXFER_CHECK(cuxfer_stream_pool_destroy(&pool));
    printf("simple-callback: %d jobs handed to %d CPU threads; %s\n", JOBS, JOBS,
           bad ? "WRONG" : "results verified");
    return bad ? 1 : 0;
}
