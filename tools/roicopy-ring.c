/* SPDX-License-Identifier: MIT */
/*
 * roicopy-ring.c - several inputs through the transfer ring, written, like
 * roicopy-gpu.c, against the public API of cuxfer.h only.
 *
 * A slot holds one input image (or uses the frame's own read-ahead
 * buffers, prefetch.c) and its ROI, so frame i+1's upload and read overlap
 * frame i's download.  I/O threads each take the next frame with the next
 * slot: write the frame the slot held, read their own, submit its two 2D
 * copies (frame_work).  Slot i lives on device devices[i % ndevices];
 * devices[0] is the home device, with the span timer of --timing.
 *
 * Every CUDA return code is checked; a failure is exit status 5 with
 * "roicopy: FILE: CUDA: <error name>: <reason>".
 */
#include <cuxfer.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices.h"
#include "prefetch.h"
#include "report.h"
#include "roicopy.h"
#include "timing.h"

/* ---- several inputs: the transfer ring ----------------------------------- */

/* Where things are in a ring slot: the input image at host offset 0 (rows
 * packed), the ROI's download at out_offset; on the device a view of its
 * own (cudaMallocPitch: the device's pitch, not a guess) big enough for
 * the largest ROI (or canvas), in bytes, that each frame sees in its own
 * elements. */
typedef struct ring_layout {
    size_t out_offset, host_bytes;
    size_t dev_row_bytes, dev_rows;
    cuxfer_view *dev; /* slot i's device view, on the slot's device */
} ring_layout;

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static ring_layout plan_ring(const roicopy_plan *p, const prefetch_set *ps)
{
    ring_layout l;
    size_t i, img = 0, out = 0, row = 0, rows = 0;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        size_t w = p->place ? p->canvas_w : f->roi.width;
        size_t h = p->place ? p->canvas_h : f->roi.height;
        /* a frame in its own buffers */
        int own = roicopy_prefetched(ps, i) != NULL;
        if (!own && f->in.total_bytes > img)
            img = f->in.total_bytes;
        if (!own && f->out.total_bytes > out)
            out = f->out.total_bytes;
        if (w * f->in.pixel_bytes > row)
            row = w * f->in.pixel_bytes;
        if (h > rows)
            rows = h;
    }
    /* Page-aligned output area: the download lands on its own pages. */
    l.out_offset = round_up(img, 4096);
    l.host_bytes = l.out_offset + out;
    if (l.host_bytes == 0) /* every frame in its own buffers */
        l.host_bytes = 4096;
    l.dev_row_bytes = row;
    l.dev_rows = rows;
    l.dev = NULL;
    return l;
}

/* What the ring's work function needs to queue one frame's two copies. */
typedef struct frame_job {
    const roicopy_plan *p;
    const roicopy_frame *f;
    const ring_layout *l;
    cuxfer_timer *span; /* started here: the first frame, when timing */
    const prefetched *pf; /* the frame's own locked buffers, or NULL */
} frame_job;

/* Views of one frame inside a slot: the ROI in the input image, its place
 * on the device and the download area. */
static cudaError_t slot_views(const cuxfer_ring_slot *s, const frame_job *j,
                              cuxfer_view *src, cuxfer_view *dev,
                              cuxfer_view *out)
{
    const roicopy_frame *f = j->f;
    size_t epp = f->elem_per_pixel, e = f->elem_size;
    size_t dw = (j->p->place ? j->p->canvas_w : f->roi.width) * epp;
    size_t dh = j->p->place ? j->p->canvas_h : f->roi.height;
    const cuxfer_view *sd = &j->l->dev[s->index];
    cuxfer_view img, whole;
    cuxfer_roi roi = roicopy_roi(&f->roi, epp);
    cuxfer_roi at = roicopy_device_roi(j->p, f);
    if (j->pf) { /* the ROI's rows only, read ahead */
        roi.y = 0;
        CUXFER_TRY(cuxfer_view_wrap(&img, j->pf->in, f->in.row_bytes,
                                    f->in.width * epp, f->roi.height, e));
    } else {
        CUXFER_TRY(cuxfer_view_wrap(&img, s->host, f->in.row_bytes,
                                    f->in.width * epp, f->in.height, e));
    }
    CUXFER_TRY(cuxfer_view_sub(&img, roi, src));
    /* The slot's device memory in this frame's elements, with its pitch. */
    CUXFER_TRY(cuxfer_view_init(&whole, sd->ptr, sd->pitch, dw, dh, e,
                                CUXFER_MEMORY_DEVICE, sd->device));
    CUXFER_TRY(cuxfer_view_sub(&whole, at, dev));
    return cuxfer_view_wrap(out, j->pf ? j->pf->out
                                       : (unsigned char *)s->host +
                                             j->l->out_offset,
                            f->out.row_bytes, roi.width, roi.height, e);
}

/* The ring's work: both 2D copies of the frame on the slot's stream. */
static cudaError_t frame_work(const cuxfer_ring_slot *s, void *arg)
{
    frame_job *j = (frame_job *)arg;
    cuxfer_view src, dev, out;
    CUXFER_TRY(slot_views(s, j, &src, &dev, &out));
    if (j->span)
        CUXFER_TRY(cuxfer_timer_start(j->span, s->stream));
    CUXFER_TRY(cuxfer_copy2d_async(&dev, &src, s->stream));
    return cuxfer_copy2d_async(&out, &dev, s->stream);
}

typedef struct ring_run {
    cuxfer_ring ring;
    int home;     /* devices[0]: slot 0's device, the span timer's */
    ring_layout l;
    long *held;   /* frame each slot holds, -1 for none */
    long *last;   /* frame last submitted to each slot, for replays */
    size_t done;  /* frames written */
    cuxfer_timer span; /* first frame's start .. last frame's end */
    ring_times times;  /* --timing, --json: span, link, replays */
    /* The I/O threads (run_ring): each takes the next frame together with
     * the next slot (under `order`, so frame i goes to slot i % count),
     * writes the frame the slot held, reads its own and submits it, while
     * the others do the same with theirs. */
    pthread_mutex_t order; /* the next frame and the ring's next ticket */
    pthread_mutex_t lock;  /* done, progress and the worst status */
    size_t next;           /* the next frame to take */
    int status;            /* the first failure; stops taking frames */
    size_t skipped;        /* -k: frames that could not be read */
    const prefetch_set *ps; /* frames read ahead, or NULL */
} ring_run;

/* Verify and write frame k, complete on the GPU: from its own buffers, or
 * from slot s. */
static int finish_frame(const roicopy_plan *p, const ring_run *rr, size_t k,
                        const cuxfer_ring_slot *s)
{
    const roicopy_frame *f = &p->frames[k];
    const prefetched *q = roicopy_prefetched(rr->ps, k);
    if (q)
        return roicopy_finish_frame_at(p, f, q->in + f->roi.x *
                                                        f->in.pixel_bytes,
                                       f->in.row_bytes, q->out,
                                       f->out.row_bytes);
    return roicopy_finish_frame(p, f, s->host, f->in.row_bytes,
                                (unsigned char *)s->host + rr->l.out_offset,
                                f->out.row_bytes);
}

/* A slot whose submission completed: verify and write the frame it held. */
static int finish_slot(const roicopy_plan *p, ring_run *rr,
                       const cuxfer_ring_slot *s)
{
    long k = rr->held[s->index];
    int rc;
    if (k < 0)
        return RC_OK;
    rr->held[s->index] = -1;
    rc = finish_frame(p, rr, (size_t)k, s);
    pthread_mutex_lock(&rr->lock);
    roicopy_progress(p, ++rr->done);
    pthread_mutex_unlock(&rr->lock);
    return rc;
}

/* Slot s was acquired for frame i (its previous frame is then complete):
 * write that frame, read frame i into the slot and submit its copies. */
static int ring_fill(const roicopy_plan *p, ring_run *rr, size_t i,
                     cuxfer_ring_slot *s)
{
    const roicopy_frame *f = &p->frames[i];
    const prefetched *q = rr->ps ? &rr->ps->pf[i] : NULL;
    long k = rr->held[s->index];
    int own_k = k >= 0 && roicopy_prefetched(rr->ps, (size_t)k) != NULL;
    cuxfer_ring_job job;
    frame_job fj;
    int rc = RC_OK;
    /* The slot's last frame is complete.  Written now when its bytes live
     * in the slot; after this frame's submission when in its own. */
    if (!own_k && (rc = finish_slot(p, rr, s)) != RC_OK)
        goto failed;
    if (q && q->in && q->read_failed) {
        rc = roicopy_fail(RC_INPUT, f->input, "%s", q->err);
        goto unread;
    }
    if (q && q->in && !q->registered) /* read ahead, but not locked */
        memcpy((unsigned char *)s->host + f->roi.y * f->in.row_bytes, q->in,
               q->in_bytes);
    else if (!(q && q->registered) &&
             (rc = roicopy_read_frame(f, s->host, f->in.row_bytes)) != RC_OK)
        goto unread;
    fj.p = p;
    fj.f = f;
    fj.l = &rr->l;
    fj.pf = roicopy_prefetched(rr->ps, i);
    fj.span = (p->timing || p->json) && i == 0 ? &rr->span : NULL;
    memset(&job, 0, sizeof job);
    job.work = frame_work;
    job.arg = &fj;
    rr->held[s->index] = (long)i;
    rr->last[s->index] = (long)i;
    GPU_TRY(f->input, cuxfer_ring_submit(&rr->ring, s, &job));
    if (own_k) { /* the slot is not ours any more; frame k's buffers are */
        rc = finish_frame(p, rr, (size_t)k, s);
        pthread_mutex_lock(&rr->lock);
        roicopy_progress(p, ++rr->done);
        pthread_mutex_unlock(&rr->lock);
    }
done:
    return rc;
unread:
    /* -k: the frame is reported (above) and skipped; the slot goes back
     * unused (a frame it still holds in its own buffers is written
     * later), and the ring goes on with the next frame. */
    if (rc == RC_INPUT && p->keep_going) {
        (void)cuxfer_ring_release(&rr->ring, s);
        pthread_mutex_lock(&rr->lock);
        ++rr->skipped;
        roicopy_progress(p, ++rr->done);
        pthread_mutex_unlock(&rr->lock);
        return RC_OK;
    }
failed:
    (void)cuxfer_ring_release(&rr->ring, s);
    return rc;
}

static int finish_all(const roicopy_plan *p, ring_run *rr)
{
    size_t k;
    int i, rc = RC_OK;
    /* In frame order: the oldest held frame first. */
    for (k = 0; k < p->nframes && rc == RC_OK; ++k)
        for (i = 0; i < rr->ring.count; ++i)
            if (rr->held[i] == (long)k)
                rc = finish_slot(p, rr, &rr->ring.slots[i]);
    return rc;
}

/* Record a failure: the first one is kept and no new frame is taken. */
static void ring_failed(ring_run *rr, int rc)
{
    pthread_mutex_lock(&rr->lock);
    if (rr->status == RC_OK)
        rr->status = rc;
    pthread_mutex_unlock(&rr->lock);
}

typedef struct ring_worker {
    const roicopy_plan *p;
    ring_run *rr;
    pthread_t thread;
    int started;
} ring_worker;

/* One I/O thread of the ring: frames until none is left or one failed. */
static void *ring_worker_main(void *arg)
{
    ring_worker *w = (ring_worker *)arg;
    const roicopy_plan *p = w->p;
    ring_run *rr = w->rr;
    const char *file = p->frames[0].input;
    int rc = RC_OK;
    /* The current device is per thread: the home device, as on the main
     * thread (the span timer lives there). */
    GPU_TRY(file, cudaSetDevice(rr->home));
    for (;;) {
        cuxfer_ring_slot *s = NULL;
        cudaError_t err;
        size_t i;
        int stop;
        pthread_mutex_lock(&rr->order);
        pthread_mutex_lock(&rr->lock);
        stop = rr->status != RC_OK || rr->next >= p->nframes;
        i = rr->next++;
        pthread_mutex_unlock(&rr->lock);
        if (stop) {
            pthread_mutex_unlock(&rr->order);
            break;
        }
        cuxfer_clear_reason();
        err = cuxfer_ring_acquire(&rr->ring, &s);
        pthread_mutex_unlock(&rr->order);
        if (err != cudaSuccess) {
            rc = roicopy_cuda_fail(p->frames[i].input, err);
            if (s) /* handed out all the same: give it back, or the next
                      thread waiting for this slot would wait forever */
                (void)cuxfer_ring_release(&rr->ring, s);
            goto done;
        }
        if ((rc = ring_fill(p, rr, i, s)) != RC_OK)
            goto done;
    }
done:
    if (rc != RC_OK)
        ring_failed(rr, rc);
    return NULL;
}

/* Run the I/O threads, one per slot (at least 8 with frames read ahead),
 * and wait for them; RC_OK or the
 * first failure (the main thread does the frames itself when a thread
 * cannot start). */
static int ring_threads(const roicopy_plan *p, ring_run *rr)
{
    int n = rr->ring.count, i;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ring_worker *w;
    /* Frames in their own buffers free their slot at submission, so more
     * threads than slots can write at once. */
    if (rr->ps && n < 8)
        n = cpus > 0 && cpus < 8 ? (n > cpus ? n : (int)cpus) : 8;
    w = (ring_worker *)calloc(n > 0 ? (size_t)n : 1, sizeof *w);
    if (!w)
        return roicopy_fail(RC_CUDA, p->frames[0].input, "out of memory");
    for (i = 0; i < n; ++i) {
        w[i].p = p;
        w[i].rr = rr;
        w[i].started = pthread_create(&w[i].thread, NULL, ring_worker_main,
                                      &w[i]) == 0;
    }
    if (!w[0].started) {
        ring_worker self = w[0];
        (void)ring_worker_main(&self);
    }
    for (i = 0; i < n; ++i)
        if (w[i].started)
            (void)pthread_join(w[i].thread, NULL);
    free(w);
    return rr->status;
}

typedef struct finish_job {
    const roicopy_plan *p;
    ring_run *rr;
    cuxfer_ring_slot *s;
    pthread_t thread;
    int started, rc;
} finish_job;

static void *finish_main(void *arg)
{
    finish_job *j = (finish_job *)arg;
    j->rc = finish_slot(j->p, j->rr, j->s);
    return NULL;
}

/* After the drain: the frames still in the slots, written on a thread
 * each (each fsyncs its own file). */
static int finish_all_threads(const roicopy_plan *p, ring_run *rr)
{
    int n = rr->ring.count, i, rc = RC_OK;
    finish_job *j = (finish_job *)calloc(n > 0 ? (size_t)n : 1, sizeof *j);
    if (!j)
        return finish_all(p, rr);
    for (i = 0; i < n; ++i) {
        j[i].p = p;
        j[i].rr = rr;
        j[i].s = &rr->ring.slots[i];
        j[i].rc = RC_OK;
        if (rr->held[i] >= 0)
            j[i].started = pthread_create(&j[i].thread, NULL, finish_main,
                                          &j[i]) == 0;
    }
    for (i = 0; i < n; ++i) {
        if (j[i].started)
            (void)pthread_join(j[i].thread, NULL);
        else if (rr->held[i] >= 0)
            (void)finish_main(&j[i]);
        if (j[i].rc != RC_OK && rc == RC_OK)
            rc = j[i].rc;
    }
    free(j);
    return rc;
}

/* Every output is on disk before exit 0: each file was fsynced before its
 * rename; the directories, once each, here. */
static int sync_output_dirs(const roicopy_plan *p)
{
    char err[IMAGE_ERR_MAX] = "";
    if (image_sync_dirs(err, sizeof err) != 0)
        return roicopy_fail(RC_OUTPUT, NULL, "%s", err);
    (void)p;
    return RC_OK;
}

/* Each slot's device view, allocated on the slot's device. */
static cudaError_t slot_memory(ring_run *rr)
{
    int i;
    for (i = 0; i < rr->ring.count; ++i) {
        cudaError_t err = cudaSetDevice(rr->ring.slots[i].device_id);
        if (err == cudaSuccess)
            err = cuxfer_view_alloc_device(&rr->l.dev[i], rr->l.dev_row_bytes,
                                           rr->l.dev_rows, 1);
        CUXFER_TRY(roicopy_back_home(rr->home, err));
    }
    return cudaSuccess;
}

/* After the ring is destroyed (nothing in flight): free them, each on its
 * device. */
static void slot_memory_free(ring_run *rr, int n)
{
    int i;
    for (i = 0; rr->l.dev && i < n; ++i) {
        if (!rr->l.dev[i].ptr)
            continue;
        (void)cudaSetDevice(rr->l.dev[i].device);
        (void)cuxfer_view_free(&rr->l.dev[i]);
    }
    (void)cudaSetDevice(rr->home);
    free(rr->l.dev);
}

/* --repeat K: K-1 more passes through the ring, each slot copying again
 * the frame it last held (timing.c times them). */
static int replays(const roicopy_plan *p, ring_run *rr)
{
    frame_job *fj;
    cuxfer_ring_job *jobs;
    size_t k;
    int i, rc = RC_OK;
    if (p->repeat < 2)
        return RC_OK;
    fj = (frame_job *)calloc(p->nframes, sizeof *fj);
    jobs = (cuxfer_ring_job *)calloc(p->nframes, sizeof *jobs);
    if (!fj || !jobs)
        rc = roicopy_fail(RC_CUDA, p->frames[0].input, "out of memory");
    for (k = 0; rc == RC_OK && k < p->nframes; ++k) {
        fj[k].p = p;
        fj[k].f = &p->frames[k];
        fj[k].l = &rr->l;
        fj[k].pf = roicopy_prefetched(rr->ps, k);
        fj[k].span = NULL;
        jobs[k].work = frame_work;
        jobs[k].arg = &fj[k];
    }
    for (i = 1; i < p->repeat && rc == RC_OK; ++i)
        rc = roicopy_replay_pass(p, &rr->ring, &rr->span, rr->home, rr->last,
                                 jobs, &rr->times);
    free(fj);
    free(jobs);
    return rc;
}

int roicopy_ring_run(const roicopy_plan *p, const prefetch_set *ps)
{
    const char *file = p->frames[0].input;
    int timed = p->timing || p->json, rc = RC_OK, i;
    size_t k;
    double t0;
    cuxfer_ring_options opt;
    ring_run rr;
    memset(&rr, 0, sizeof rr);
    memset(&opt, 0, sizeof opt);
    opt.devices = p->devices; /* slot i on devices[i % ndevices] */
    opt.ndevices = p->ndevices;
    rr.home = p->devices[0];
    rr.ps = ps;
    rr.l = plan_ring(p, ps);
    pthread_mutex_init(&rr.order, NULL);
    pthread_mutex_init(&rr.lock, NULL);
    image_defer_dir_sync(1);
    rr.held = (long *)malloc((size_t)p->streams * sizeof *rr.held);
    rr.last = (long *)malloc((size_t)p->streams * sizeof *rr.last);
    rr.l.dev = (cuxfer_view *)calloc((size_t)p->streams, sizeof *rr.l.dev);
    if (!rr.held || !rr.last || !rr.l.dev) {
        rc = roicopy_fail(RC_CUDA, file, "out of memory");
        goto done;
    }
    for (i = 0; i < p->streams; ++i)
        rr.held[i] = rr.last[i] = -1;
    for (k = 0; k < p->nframes; ++k)
        if (p->frames[k].out.total_bytes > rr.times.link_bytes)
            rr.times.link_bytes = p->frames[k].out.total_bytes;
    if (timed && (rc = roicopy_measure_bidir(p, rr.times.link_bytes,
                                             &rr.times.bidir_ms)) != RC_OK)
        goto done;
    GPU_TRY(file, cuxfer_ring_create(&rr.ring, p->streams, rr.l.host_bytes, 0,
                                     &opt));
    GPU_TRY(file, slot_memory(&rr));
    if (timed)
        GPU_TRY(file, cuxfer_timer_create(&rr.span));
    t0 = roicopy_now_ms();
    rc = ring_threads(p, &rr);
    if (rc != RC_OK) {
        (void)cuxfer_ring_drain(&rr.ring); /* the error is already told */
        goto done;
    }
    if (timed)
        GPU_TRY(file, roicopy_stop_span(&rr.ring, &rr.span, rr.home));
    GPU_TRY(file, cuxfer_ring_drain(&rr.ring));
    rc = finish_all_threads(p, &rr);
    if (rc == RC_OK)
        rc = sync_output_dirs(p);
    rr.times.wall_ms = roicopy_now_ms() - t0;
    if (rc == RC_OK && timed)
        GPU_TRY(file, cuxfer_timer_ms(&rr.span, CUXFER_WAIT,
                                      &rr.times.span_ms));
    if (rc == RC_OK)
        rc = replays(p, &rr);
    if (rc == RC_OK && timed)
        roicopy_report_ring(p, &rr.times);
    if (rc == RC_OK)
        rc = roicopy_report_skipped(p, rr.skipped);
done:
    (void)cuxfer_timer_destroy(&rr.span);
    (void)cuxfer_ring_destroy(&rr.ring);
    slot_memory_free(&rr, p->streams);
    free(rr.held);
    free(rr.last);
    if (rc != RC_OK) /* what was written is still made durable */
        (void)image_sync_dirs(NULL, 0);
    image_defer_dir_sync(0);
    pthread_mutex_destroy(&rr.order);
    pthread_mutex_destroy(&rr.lock);
    return rc;
}
