/* SPDX-License-Identifier: MIT */
/*
 * outputs-set.c - compiled, never run, by tests/header/outputs-set.sh at -O1..-O3
 * with -Wall -Wextra -Werror: every cuxfer function with an output
 * parameter is called through CUXFER_CHECK and its output used at once.  A
 * function that returns on some path without setting its output makes GCC
 * warn -Wmaybe-uninitialized here (issue 17, item 7).
 */
#include <cuxfer.h>

static cudaError_t work(const cuxfer_ring_slot *slot, void *arg)
{
    (void)slot;
    (void)arg;
    return cudaSuccess;
}

int main(int argc, char **argv)
{
    cuxfer_ring ring;
    cuxfer_ring_slot *slot;
    cuxfer_ring_job job;
    cuxfer_stream_pool pool;
    cudaStream_t s, t, rs;
    cuxfer_view img, roi;
    cuxfer_roi box = {1, 1, 2, 2};
    float ms, rms;
    int n, *hp, *dp;
    void *vp, *dv;
    (void)argv;
    memset(&job, 0, sizeof job);
    job.work = work;
    CUXFER_CHECK(cuxfer_device_count(&n));
    CUXFER_CHECK(cuxfer_ring_create(&ring, argc + 1, 64, 64, NULL));
    CUXFER_CHECK(cuxfer_ring_acquire(&ring, &slot));
    printf("slot %d\n", slot->index);
    CUXFER_CHECK(cuxfer_ring_submit(&ring, slot, &job));
    CUXFER_CHECK(cuxfer_ring_slot_ms(slot, CUXFER_WAIT, &rms));
    CUXFER_CHECK(cuxfer_ring_stream(&ring, 0, &rs));
    CUXFER_CHECK(cuxfer_stream_pool_create(&pool, 2, 0, 0));
    CUXFER_CHECK(cuxfer_stream_pool_next(&pool, &s));
    CUXFER_CHECK(cuxfer_stream_pool_acquire(&pool, CUXFER_WAIT, &t));
    CUXFER_CHECK(cuxfer_host_alloc(&vp, 16, 1, 0));
    CUXFER_CHECK(cuxfer_device_alloc(&dv, 16, 1));
    CUXFER_CHECK(CUXFER_HOST_ALLOC(&hp, 4, 0));
    CUXFER_CHECK(CUXFER_DEVICE_ALLOC(&dp, 4));
    CUXFER_CHECK(cuxfer_view_alloc_host(&img, 4, 4, 1, 0));
    CUXFER_CHECK(cuxfer_view_sub(&img, box, &roi));
    CUXFER_CHECK(cuxfer_copy_async(dp, hp, 4 * sizeof *hp, s));
    CUXFER_CHECK(cuxfer_copy_async(dv, vp, 16, t));
    CUXFER_CHECK(cuxfer_copy_async(vp, dv, 16, rs));
    printf("%d %p %p %p %zu %.3f %d\n", n, (void *)s, (void *)t, (void *)rs, roi.width,
           (double)rms, *hp);
    {
        cuxfer_stager_options so;
        cuxfer_pinned_pool pp;
        cuxfer_pinned_block blk;
        CUXFER_CHECK(cuxfer_stager_options_resolve(&so, NULL));
        CUXFER_CHECK(cuxfer_pinned_pool_create(&pp, NULL));
        CUXFER_CHECK(cuxfer_pinned_pool_acquire(&pp, 64, &blk));
        printf("%d %p\n", so.threads, blk.ptr);
        CUXFER_CHECK(cuxfer_pinned_pool_release(&pp, &blk, s));
        CUXFER_CHECK(cuxfer_pinned_pool_destroy(&pp));
    }
    {
        cuxfer_timer tm;
        CUXFER_CHECK(cuxfer_timer_create(&tm));
        CUXFER_CHECK(cuxfer_timer_start(&tm, s));
        CUXFER_CHECK(cuxfer_timer_stop(&tm, s));
        CUXFER_CHECK(cuxfer_timer_ms(&tm, CUXFER_WAIT, &ms));
        printf("%.3f\n", (double)ms);
        CUXFER_CHECK(cuxfer_timer_destroy(&tm));
    }
    CUXFER_CHECK(cuxfer_stream_pool_release(&pool, t));
    CUXFER_CHECK(cuxfer_view_free(&img));
    CUXFER_CHECK(cuxfer_device_free(dp));
    CUXFER_CHECK(cuxfer_host_free(hp));
    CUXFER_CHECK(cuxfer_device_free(dv));
    CUXFER_CHECK(cuxfer_host_free(vp));
    CUXFER_CHECK(cuxfer_stream_pool_destroy(&pool));
    CUXFER_CHECK(cuxfer_ring_destroy(&ring));
    return 0;
}
