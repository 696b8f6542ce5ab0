/* SPDX-License-Identifier: MIT */
/*
 * timing.c - the measurements of --timing and --json beside the copies
 * (timing.h): the bidirectional link, the ring's span, replay passes.
 */
#include "timing.h"

#include "devices.h"

#include <stdlib.h>
#include <string.h>

/* ---- the bidirectional link ---------------------------------------------- */

/* One device's part of the bidirectional link: two pinned and two device
 * buffers, an upload stream and a download stream. */
typedef struct bidir_dev {
    int device;
    void *h[2], *d[2];
    cuxfer_stream_pool pool;
    cudaStream_t s[2];
} bidir_dev;

static cudaError_t bidir_setup(bidir_dev *b, size_t bytes, int home)
{
    cudaError_t err = cudaSetDevice(b->device);
    int i;
    for (i = 0; i < 2 && err == cudaSuccess; ++i) {
        err = cuxfer_host_alloc(&b->h[i], bytes, 1, cudaHostAllocPortable);
        if (err == cudaSuccess)
            err = cudaMalloc(&b->d[i], bytes);
    }
    err = roicopy_back_home(home, err);
    if (err == cudaSuccess)
        err = cuxfer_stream_pool_create_on(&b->pool, b->device, 2, 0, 0);
    for (i = 0; i < 2 && err == cudaSuccess; ++i)
        err = cuxfer_stream_pool_next(&b->pool, &b->s[i]);
    return err;
}

static void bidir_free(bidir_dev *b, int home)
{
    int i;
    (void)cuxfer_stream_pool_sync(&b->pool);
    (void)cudaSetDevice(b->device);
    (void)cuxfer_stream_pool_destroy(&b->pool);
    for (i = 0; i < 2; ++i) {
        (void)cudaFree(b->d[i]);
        (void)cuxfer_host_free(b->h[i]);
    }
    (void)cudaSetDevice(home);
}

/* One timed round: every device's two streams wait for the lead (the home
 * device's upload stream), move the bytes up and down at once, and the
 * lead waits for all of them. */
static cudaError_t bidir_round(bidir_dev *b, int n, size_t bytes,
                               cuxfer_timer *t, int home, float *ms)
{
    cudaStream_t lead = b[0].s[0];
    int k, i;
    CUXFER_TRY(cuxfer_timer_start(t, lead));
    for (k = 0; k < n; ++k)
        for (i = 0; i < 2; ++i)
            CUXFER_TRY(roicopy_wait_for(b[k].s[i], lead, home, home));
    for (k = 0; k < n; ++k) {
        cudaError_t err = cudaSetDevice(b[k].device);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(b[k].d[0], b[k].h[0], bytes,
                                  cudaMemcpyHostToDevice, b[k].s[0]);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(b[k].h[1], b[k].d[1], bytes,
                                  cudaMemcpyDeviceToHost, b[k].s[1]);
        CUXFER_TRY(roicopy_back_home(home, err));
    }
    for (k = 0; k < n; ++k)
        for (i = 0; i < 2; ++i)
            CUXFER_TRY(roicopy_wait_for(lead, b[k].s[i], b[k].device, home));
    CUXFER_TRY(cuxfer_timer_stop(t, lead));
    return cuxfer_timer_ms(t, CUXFER_WAIT, ms);
}

int roicopy_measure_bidir(const roicopy_plan *p, size_t bytes, float *ms)
{
    const char *file = p->frames[0].input;
    int home = p->devices[0], n = p->ndevices, rc = RC_OK, i;
    bidir_dev *b = (bidir_dev *)calloc((size_t)n, sizeof *b);
    cuxfer_timer t;
    memset(&t, 0, sizeof t);
    if (!b)
        return roicopy_fail(RC_CUDA, file, "out of memory");
    for (i = 0; i < n; ++i)
        b[i].device = p->devices[i];
    for (i = 0; i < n; ++i)
        GPU_TRY(file, bidir_setup(&b[i], bytes, home));
    GPU_TRY(file, cuxfer_timer_create(&t));
    for (i = 0; i < 2; ++i) /* the first round warms the link up */
        GPU_TRY(file, bidir_round(b, n, bytes, &t, home, ms));
done:
    (void)cuxfer_timer_destroy(&t);
    for (i = 0; i < n; ++i)
        bidir_free(&b[i], home);
    free(b);
    return rc;
}

/* ---- the ring ------------------------------------------------------------ */

cudaError_t roicopy_stop_span(cuxfer_ring *ring, cuxfer_timer *span,
                              int home)
{
    cudaStream_t lead = ring->slots[0].stream;
    int i;
    for (i = 1; i < ring->count; ++i)
        CUXFER_TRY(roicopy_wait_for(lead, ring->slots[i].stream,
                                    ring->slots[i].device_id, home));
    return cuxfer_timer_stop(span, lead);
}

/* Every slot is idle here (the last span was waited for), so the span
 * starts on slot 0's stream, on the timer's device, whichever slot comes
 * first. */
int roicopy_replay_pass(const roicopy_plan *p, cuxfer_ring *ring,
                        cuxfer_timer *span, int home, const long *last,
                        const cuxfer_ring_job *jobs, ring_times *t)
{
    const char *file = p->frames[0].input;
    size_t j, bytes = 0;
    int rc = RC_OK;
    float ms;
    GPU_TRY(file, cuxfer_timer_start(span, ring->slots[0].stream));
    for (j = 0; j < p->nframes; ++j) {
        cuxfer_ring_slot *s = NULL;
        long k;
        GPU_TRY(file, cuxfer_ring_acquire(ring, &s));
        k = last[s->index];
        if (k < 0) { /* more slots than frames */
            GPU_TRY(file, cuxfer_ring_release(ring, s));
            continue;
        }
        GPU_TRY(file, cuxfer_ring_submit(ring, s, &jobs[k]));
        bytes += 2 * p->frames[k].out.total_bytes;
    }
    GPU_TRY(file, roicopy_stop_span(ring, span, home));
    GPU_TRY(file, cuxfer_timer_ms(span, CUXFER_WAIT, &ms));
    roicopy_stage_add(&t->replay, ms);
    t->replay_bytes = bytes;
done:
    return rc;
}
