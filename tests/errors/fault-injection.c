/* SPDX-License-Identifier: MIT */
/* Faults that must give a clear error, leak nothing and hang nothing:
 * pinned and device allocations that cannot succeed, and the ring
 * hammered by 8 host threads with every frame checked.  Prefetch and
 * advice on a device whose capability query says concurrentManagedAccess
 * = 0 (forced through the capability cache) are in tests/state/internals.c. */
#include "gpu.h"

static cuxfer_ring ring;
static int bad_frames;
static int frames_done;

struct job_arg {
    unsigned char want;
};

static void *producer(void *arg)
{
    long me = (long)arg;
    int f;
    for (f = 0; f < 60; ++f) {
        cuxfer_ring_slot *slot = NULL;
        cuxfer_ring_job job;
        unsigned char tag = (unsigned char)(me * 16 + f % 16);
        size_t i, n = 4096;
        if (cuxfer_ring_acquire(&ring, &slot) != cudaSuccess) {
            __atomic_add_fetch(&bad_frames, 1, __ATOMIC_RELAXED);
            continue;
        }
        /* the slot's previous frame came back: its two halves agree */
        if (slot->uses > 0 && memcmp(slot->host, (unsigned char *)slot->host + n, n) != 0)
            __atomic_add_fetch(&bad_frames, 1, __ATOMIC_RELAXED);
        for (i = 0; i < n; ++i)
            ((unsigned char *)slot->host)[i] = (unsigned char)(tag + i);
        memset((unsigned char *)slot->host + n, 0xEE, n);
        memset(&job, 0, sizeof job);
        job.h2d_bytes = n;
        job.d2h_bytes = n;
        job.d2h_host_offset = n;
        if (cuxfer_ring_submit(&ring, slot, &job) != cudaSuccess)
            __atomic_add_fetch(&bad_frames, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&frames_done, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    void *p = (void *)1;
    cuxfer_view v;
    int i;
    cudaStream_t s;
    pthread_t th[8];

    gpu_require(1);
    plan(0);
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    /* allocations that cannot succeed */
    ok(cuxfer_host_alloc(&p, (size_t)1 << 50, 1, 0) != cudaSuccess, "a 1 PiB pinned allocation fails");
    contains(cuxfer_last_reason(), "cudaHostAlloc of 1125899906842624 bytes", "with a reason naming the size");
    ok(p == NULL, "and *p is NULL");
    ok(cuxfer_view_alloc_device(&v, (size_t)1 << 24, (size_t)1 << 24, 4) != cudaSuccess,
       "a 1 PiB device view fails");
    contains(cuxfer_last_reason(), "cudaMallocPitch", "with a reason naming the call");
    ok(v.ptr == NULL, "and the view is empty");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error after failed allocations");
    GPU_OK(cuxfer_host_alloc(&p, 1 << 20, 1, 0), "a normal allocation still works afterwards");
    cuxfer_host_free(p);


    /* the ring from 8 producer threads */
    GPU_MUST(cuxfer_ring_create(&ring, 6, 8192, 4096, NULL));
    for (i = 0; i < 8; ++i)
        pthread_create(&th[i], NULL, producer, (void *)(long)i);
    for (i = 0; i < 8; ++i)
        pthread_join(th[i], NULL);
    GPU_OK(cuxfer_ring_drain(&ring), "drain after 8 threads");
    for (i = 0; i < 6; ++i)
        if (memcmp(ring.slots[i].host, (unsigned char *)ring.slots[i].host + 4096, 4096) != 0)
            ++bad_frames;
    is_int(0, bad_frames, "8 threads x 60 frames through a 6-slot ring: every frame came back intact");
    is_int(480, frames_done, "no frame lost");
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy");
    cudaStreamDestroy(s);
    done_testing();
}
