/* SPDX-License-Identifier: MIT */
/*
 * roicopy-ring.c - several inputs through the transfer ring, written, like
 * roicopy-gpu.c, against the public API of cuxfer.h only.
 *
 * A batch is a pipeline of three stages, each kept busy on its own:
 *   read   prefetch.c's threads read the frames, in order, into reused
 *          buffers, from the start (while the CUDA context starts);
 *   copy   a ring slot per frame in flight (--streams): the ROI is cropped
 *          into the slot's pinned memory, goes up and comes back down,
 *          and is copied out of the slot into the frame's buffer;
 *   write  the thread that copied the frame then verifies and writes it
 *          (temporary file, fsync, rename) while other threads copy the
 *          next frames (--threads of them).
 * The slots are the only pinned memory, allocated once: nothing is
 * page-locked per frame, and the time a slot is held is two memory copies
 * of the ROI and the GPU's, not a file's read or write.  Frames take their
 * slots in order, so frame i goes to slot i % count, which lives on device
 * devices[i % ndevices]; devices[0] is the home device, with the span timer
 * of --timing.
 *
 * ROICOPY_IO_ONLY replaces the copy stage by a crop on the CPU and makes
 * no CUDA call: the same reads and writes, timed without the GPU
 * (tools/roicopy-bench).
 *
 * Every CUDA return code is checked; a failure is exit status 5 with
 * "roicopy: FILE: CUDA: <error name>: <reason>".
 */
#include <cuxfer.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "prefetch.h"
#include "report.h"
#include "roicopy.h"
#include "timing.h"

/* ---- several inputs: the transfer ring ----------------------------------- */

/* Where things are in a ring slot: the ROI's pixels, packed, at host
 * offset 0, and its download in the same place (on one stream the upload
 * is done by then; half the pinned memory to set up); on the device a view
 * of its own (cudaMallocPitch: the device's pitch, not a guess) big enough
 * for the largest ROI (or canvas), in bytes, that each frame sees in its
 * own elements. */
typedef struct ring_layout {
    size_t host_bytes;
    size_t out_bytes; /* the largest output: the link measurement's size */
    size_t dev_row_bytes, dev_rows;
    cuxfer_view *dev; /* slot i's device view, on the slot's device */
} ring_layout;

/* The ROI's bytes in a row, packed. */
static size_t roi_row_bytes(const roicopy_frame *f)
{
    return f->roi.width * f->in.pixel_bytes;
}

static ring_layout plan_ring(const roicopy_plan *p)
{
    ring_layout l;
    size_t i, in = 0, out = 0, row = 0, rows = 0;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        size_t w = p->place ? p->canvas_w : f->roi.width;
        size_t h = p->place ? p->canvas_h : f->roi.height;
        if (roi_row_bytes(f) * f->roi.height > in)
            in = roi_row_bytes(f) * f->roi.height;
        if (f->out.total_bytes > out)
            out = f->out.total_bytes;
        if (w * f->in.pixel_bytes > row)
            row = w * f->in.pixel_bytes;
        if (h > rows)
            rows = h;
    }
    l.host_bytes = in > out ? in : out ? out : 1;
    l.out_bytes = out;
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
} frame_job;

/* Views of one frame inside a slot: the ROI (packed in the slot), its
 * place on the device and the download area. */
static cudaError_t slot_views(const cuxfer_ring_slot *s, const frame_job *j,
                              cuxfer_view *src, cuxfer_view *dev,
                              cuxfer_view *out)
{
    const roicopy_frame *f = j->f;
    size_t epp = f->elem_per_pixel, e = f->elem_size;
    size_t dw = (j->p->place ? j->p->canvas_w : f->roi.width) * epp;
    size_t dh = j->p->place ? j->p->canvas_h : f->roi.height;
    const cuxfer_view *sd = &j->l->dev[s->index];
    cuxfer_view whole;
    cuxfer_roi at = roicopy_device_roi(j->p, f);
    CUXFER_TRY(cuxfer_view_wrap(src, s->host, roi_row_bytes(f),
                                f->roi.width * epp, f->roi.height, e));
    /* The slot's device memory in this frame's elements, with its pitch. */
    CUXFER_TRY(cuxfer_view_init(&whole, sd->ptr, sd->pitch, dw, dh, e,
                                CUXFER_MEMORY_DEVICE, sd->device));
    CUXFER_TRY(cuxfer_view_sub(&whole, at, dev));
    return cuxfer_view_wrap(out, s->host,
                            f->out.row_bytes, f->roi.width * epp,
                            f->roi.height, e);
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

/* A worker's answer when another one failed first: nothing more to say. */
#define RC_STOPPED (-1)

typedef struct ring_run {
    cuxfer_ring ring;
    int home;     /* devices[0]: slot 0's device, the span timer's */
    int cpu;      /* ROICOPY_IO_ONLY: no ring, crops on the CPU */
    ring_layout l;
    long *last;   /* frame last submitted to each slot, for replays */
    /* Held from a slot's fill until its download is copied out: the
     * ring frees a slot at submission, and the next frame in it must not
     * land in the slot before that copy. */
    pthread_mutex_t *slot_mu;
    int nslot_mu;
    cuxfer_timer span; /* first frame's start .. last frame's end */
    ring_times times;  /* --timing, --json: span, link, replays */
    /* The workers (ring_threads) take frames in order; each then takes
     * its turn (frame i's turn after frame i-1's) to acquire a slot. */
    pthread_mutex_t lock;  /* next, done, skipped, status, progress */
    pthread_mutex_t turn_mu;
    pthread_cond_t turn_cv;
    size_t turn;           /* the frame whose turn it is */
    int spanned;           /* the span timer was handed to a frame */
    size_t next;           /* the next frame to take */
    size_t done;           /* frames written or skipped */
    int status;            /* the first failure; stops taking frames */
    size_t skipped;        /* -k: frames that could not be read */
    size_t ring_uses;      /* frames done with the ring (copied or skipped) */
    int ring_gone;         /* the ring and its device memory freed early */
    prefetch_set *ps;      /* the read side */
} ring_run;

static int failed(ring_run *rr)
{
    return __atomic_load_n(&rr->status, __ATOMIC_ACQUIRE) != RC_OK;
}

/* The first failure is kept and no new frame is taken. */
static void record_failure(ring_run *rr, int rc)
{
    pthread_mutex_lock(&rr->lock);
    if (rr->status == RC_OK)
        __atomic_store_n(&rr->status, rc, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&rr->lock);
}

/* Record a failure, and every thread waiting for a read or a turn gives
 * up. */
static void ring_failed(ring_run *rr, int rc)
{
    record_failure(rr, rc);
    pthread_mutex_lock(&rr->turn_mu);
    pthread_cond_broadcast(&rr->turn_cv);
    pthread_mutex_unlock(&rr->turn_mu);
    roicopy_prefetch_stop(rr->ps);
}

/* One more frame done (written or skipped). */
static void frame_done(const roicopy_plan *p, ring_run *rr, int skipped)
{
    pthread_mutex_lock(&rr->lock);
    rr->skipped += (size_t)skipped;
    roicopy_progress(p, ++rr->done);
    if (rr->done == 1 || rr->done == p->nframes)
        roicopy_trace(rr->done == 1 ? "the first frame written" : "the last frame written");
    pthread_mutex_unlock(&rr->lock);
}

static void ring_free(ring_run *rr, int n);

/* Frame i is done with the ring.  When every frame is (and nothing after
 * the workers needs it: no span to stop, no replays), the worker that
 * finished last frees the ring and its device memory and has the contexts
 * released, while the other workers still write: unpinning and the
 * context's teardown overlap the last writes instead of following them. */
static void ring_used(const roicopy_plan *p, ring_run *rr)
{
    int last;
    pthread_mutex_lock(&rr->lock);
    last = ++rr->ring_uses == p->nframes && !p->timing && !p->json &&
           p->repeat < 2;
    pthread_mutex_unlock(&rr->lock);
    if (!last)
        return;
    ring_free(rr, p->streams); /* ring_gone: read by the main thread after the joins */
    roicopy_trace("the ring freed");
    /* Nothing calls CUDA from here on (a worker makes its device current
     * only once it holds a frame): the contexts go while frames are still
     * written, joined at the end of roicopy_ring_run. */
    roicopy_gpu_release(p->devices, p->ndevices);
}

/* Frame i's turn comes after frame i - 1's: wait for it, holding
 * turn_mu on return.  0 (and turn_mu not held) when another worker failed
 * first. */
static int wait_turn(ring_run *rr, size_t i)
{
    pthread_mutex_lock(&rr->turn_mu);
    while (rr->turn != i && !failed(rr))
        pthread_cond_wait(&rr->turn_cv, &rr->turn_mu);
    if (failed(rr)) {
        pthread_mutex_unlock(&rr->turn_mu);
        return 0;
    }
    return 1;
}

/* Frame i's turn over: frame i + 1's comes. */
static void pass_turn(ring_run *rr, size_t i)
{
    rr->turn = i + 1;
    pthread_cond_broadcast(&rr->turn_cv);
    pthread_mutex_unlock(&rr->turn_mu);
}

/* In a frame's turn: the next slot of the ring (so frame i gets slot
 * i % count). */
static cudaError_t turn_slot(ring_run *rr, cuxfer_ring_slot **s)
{
    *s = NULL;
    cuxfer_clear_reason();
    return cuxfer_ring_acquire(&rr->ring, s);
}

/* Frame i's turn, through the GPU: its slot.  0 when another worker
 * failed first: no slot, no turn.  *first (when not NULL) is set for the
 * first frame copied on the home device, which starts the span timer. */
static int take_turn(ring_run *rr, size_t i, cuxfer_ring_slot **s,
                     cudaError_t *err, int *first)
{
    *s = NULL;
    if (!wait_turn(rr, i))
        return 0;
    *err = turn_slot(rr, s);
    if (first) { /* the timer's device: a slot on the home device */
        *first = !rr->spanned && *s && (*s)->device_id == rr->home;
        rr->spanned |= *first;
    }
    pass_turn(rr, i);
    return 1;
}

/* Give back a slot this thread acquired and did not submit. */
static void give_back(ring_run *rr, cuxfer_ring_slot *s)
{
    if (s)
        (void)cuxfer_ring_release(&rr->ring, s);
}

/* Frame i through the GPU: its ROI into its slot, up, down, and out of
 * the slot into q->out. */
static int copy_gpu(const roicopy_plan *p, ring_run *rr, size_t i,
                    const prefetched *q)
{
    const roicopy_frame *f = &p->frames[i];
    cuxfer_ring_slot *s = NULL;
    pthread_mutex_t *mu;
    cuxfer_ring_job job;
    frame_job fj;
    cudaError_t err = cudaSuccess;
    unsigned long long uses;
    int first = 0;
    if (!take_turn(rr, i, &s, &err, &first))
        return RC_STOPPED;
    if (err != cudaSuccess) {
        give_back(rr, s);
        return roicopy_cuda_fail(f->input, err);
    }
    mu = &rr->slot_mu[s->index];
    pthread_mutex_lock(mu);
    rr->last[s->index] = (long)i;
    image_crop(s->host, roi_row_bytes(f), q->crop, f->in.row_bytes, 0, 0,
               f->roi.width, f->roi.height, f->in.pixel_bytes);
    fj.p = p;
    fj.f = f;
    fj.l = &rr->l;
    fj.span = (p->timing || p->json) && first ? &rr->span : NULL;
    memset(&job, 0, sizeof job);
    job.work = frame_work;
    job.arg = &fj;
    cuxfer_clear_reason();
    uses = s->uses;
    err = cuxfer_ring_submit(&rr->ring, s, &job);
    /* Refused before anything was queued, the slot is still ours; once
     * queued it was released, and may be another thread's already (which
     * waits for mu before it queues, so uses is stable here). */
    if (s->uses == uses)
        give_back(rr, s);
    if (err == cudaSuccess) {
        cuxfer_clear_reason();
        err = cudaEventSynchronize(s->done);
    }
    if (err == cudaSuccess)
        memcpy(q->out, s->host, f->out.total_bytes);
    pthread_mutex_unlock(mu);
    if (err != cudaSuccess)
        return roicopy_cuda_fail(f->input, err);
    ring_used(p, rr);
    return RC_OK;
}

/* Frame i could not be read: told in its turn, before the turn passes
 * on, so a bad frame is never told after a later one, and without -k no
 * frame after it is told at all.  With -k it takes its slot and gives it
 * straight back: the frames after it keep their slots. */
static int skip_frame(const roicopy_plan *p, ring_run *rr, size_t i,
                      const char *err_text)
{
    const char *input = p->frames[i].input;
    cuxfer_ring_slot *s = NULL;
    cudaError_t err = cudaSuccess;
    int rc;
    if (!wait_turn(rr, i))
        return RC_STOPPED;
    rc = roicopy_fail(RC_INPUT, input, "%s", err_text);
    if (!p->keep_going) {
        record_failure(rr, rc); /* the turn stays: no later frame is told */
        pthread_mutex_unlock(&rr->turn_mu);
        return rc;
    }
    if (!rr->cpu)
        err = turn_slot(rr, &s);
    pass_turn(rr, i);
    give_back(rr, s);
    if (err != cudaSuccess)
        return roicopy_cuda_fail(input, err);
    if (!rr->cpu)
        ring_used(p, rr);
    frame_done(p, rr, 1);
    return RC_OK;
}

/* Frame i, read: copied (through the GPU, or cropped on the CPU with
 * ROICOPY_IO_ONLY), verified and written.  A frame that could not be read
 * is told now, in its turn: skipped with -k, else the end of the run. */
static int frame_one(const roicopy_plan *p, ring_run *rr, size_t i,
                     const prefetched *q)
{
    const roicopy_frame *f = &p->frames[i];
    int rc;
    if (q->state == PF_FAILED)
        return skip_frame(p, rr, i, q->err);
    if (rr->cpu) { /* no slot: the turn only keeps failures in order */
        if (!wait_turn(rr, i))
            return RC_STOPPED;
        pass_turn(rr, i);
        image_crop(q->out, f->out.row_bytes, q->crop, f->in.row_bytes, 0, 0,
                   f->roi.width, f->roi.height, f->in.pixel_bytes);
    } else if ((rc = copy_gpu(p, rr, i, q)) != RC_OK)
        return rc;
    rc = roicopy_finish_frame_at(p, f, q->crop, f->in.row_bytes, q->out,
                                 f->out.row_bytes);
    if (rc == RC_OK)
        frame_done(p, rr, 0);
    return rc;
}

typedef struct ring_worker {
    const roicopy_plan *p;
    ring_run *rr;
    pthread_t thread;
    int started;
} ring_worker;

/* One worker: frames, in order, until none is left or one failed. */
static void *ring_worker_main(void *arg)
{
    ring_worker *w = (ring_worker *)arg;
    const roicopy_plan *p = w->p;
    ring_run *rr = w->rr;
    int rc = RC_OK, homed = rr->cpu;
    while (rc == RC_OK) {
        const prefetched *q;
        size_t i;
        int stop;
        pthread_mutex_lock(&rr->lock);
        stop = rr->status != RC_OK || rr->next >= p->nframes;
        i = rr->next++;
        pthread_mutex_unlock(&rr->lock);
        if (stop)
            break;
        /* The current device is per thread: the home device, as on the
         * main thread (the span timer lives there).  Made current only
         * with a frame in hand, which keeps the ring (and the context)
         * alive: a worker with nothing to do makes no CUDA call. */
        if (!homed) {
            cudaError_t err = cudaSetDevice(rr->home);
            homed = 1;
            if (err != cudaSuccess) {
                rc = roicopy_cuda_fail(p->frames[i].input, err);
                break;
            }
        }
        if (!(q = roicopy_prefetch_take(rr->ps, i)))
            break; /* stopped: another worker failed */
        rc = frame_one(p, rr, i, q);
        roicopy_prefetch_done(rr->ps, i);
    }
    if (rc != RC_OK && rc != RC_STOPPED)
        ring_failed(rr, rc);
    return NULL;
}

/* Run p->threads workers and wait for them; RC_OK or the first failure
 * (the main thread does the frames itself when no thread can start). */
static int ring_threads(const roicopy_plan *p, ring_run *rr)
{
    int n = p->threads > 0 ? p->threads : 1, i, any = 0;
    ring_worker *w = (ring_worker *)calloc((size_t)n, sizeof *w);
    if (!w)
        return roicopy_fail(RC_CUDA, p->frames[0].input, "out of memory");
    for (i = 0; i < n; ++i) {
        w[i].p = p;
        w[i].rr = rr;
        w[i].started = pthread_create(&w[i].thread, NULL, ring_worker_main,
                                      &w[i]) == 0;
        any |= w[i].started;
    }
    if (!any)
        (void)ring_worker_main(&w[0]);
    for (i = 0; i < n; ++i)
        if (w[i].started)
            (void)pthread_join(w[i].thread, NULL);
    free(w);
    return rr->status;
}

/* Every output is on disk before exit 0: each file was fsynced before its
 * rename; the directories, once each, here. */
static int sync_output_dirs(void)
{
    char err[IMAGE_ERR_MAX] = "";
    if (image_sync_dirs(err, sizeof err) != 0)
        return roicopy_fail(RC_OUTPUT, NULL, "%s", err);
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

/* The ring, then (nothing in flight) each slot's device memory on its
 * device; once: by the last frame's worker (ring_used) or at the end. */
static void ring_free(ring_run *rr, int n)
{
    int i;
    if (rr->ring_gone)
        return;
    (void)cuxfer_ring_destroy(&rr->ring);
    for (i = 0; rr->l.dev && i < n; ++i) {
        if (!rr->l.dev[i].ptr)
            continue;
        (void)cudaSetDevice(rr->l.dev[i].device);
        (void)cuxfer_view_free(&rr->l.dev[i]);
    }
    if (rr->l.dev)
        (void)cudaSetDevice(rr->home);
    free(rr->l.dev);
    rr->l.dev = NULL;
    rr->ring_gone = 1;
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

/* The GPU side, while the first frames are read: the devices, the link
 * measurement of --timing, the ring, its device memory, the span timer. */
static int ring_setup(const roicopy_plan *p, ring_run *rr)
{
    const char *file = p->frames[0].input;
    int rc, i;
    cuxfer_ring_options opt;
    roicopy_gpu_join();
    roicopy_trace("ring setup: the context joined");
    if ((rc = roicopy_setup_devices(p)) != RC_OK)
        return rc;
    memset(&opt, 0, sizeof opt);
    opt.devices = p->devices; /* slot i on devices[i % ndevices] */
    opt.ndevices = p->ndevices;
    rr->last = (long *)malloc((size_t)p->streams * sizeof *rr->last);
    rr->slot_mu = (pthread_mutex_t *)malloc((size_t)p->streams *
                                            sizeof *rr->slot_mu);
    rr->l.dev = (cuxfer_view *)calloc((size_t)p->streams, sizeof *rr->l.dev);
    if (!rr->last || !rr->slot_mu || !rr->l.dev)
        return roicopy_fail(RC_CUDA, file, "out of memory");
    for (i = 0; i < p->streams; ++i) {
        rr->last[i] = -1;
        pthread_mutex_init(&rr->slot_mu[i], NULL);
    }
    rr->nslot_mu = p->streams;
    rr->times.link_bytes = rr->l.out_bytes;
    if ((p->timing || p->json) &&
        (rc = roicopy_measure_bidir(p, rr->times.link_bytes,
                                    &rr->times.bidir_ms)) != RC_OK)
        return rc;
    GPU_TRY(file, cuxfer_ring_create(&rr->ring, p->streams, rr->l.host_bytes,
                                     0, &opt));
    GPU_TRY(file, slot_memory(rr));
    if (p->timing || p->json)
        GPU_TRY(file, cuxfer_timer_create(&rr->span));
    roicopy_trace("ring setup: done");
done:
    return rc;
}

/* After the workers: the span, the drain, the directories, the replays
 * and the report. */
static int ring_finish(const roicopy_plan *p, ring_run *rr, double t0)
{
    const char *file = p->frames[0].input;
    int timed = !rr->cpu && (p->timing || p->json), rc = RC_OK;
    if (timed)
        GPU_TRY(file, roicopy_stop_span(&rr->ring, &rr->span, rr->home));
    if (!rr->cpu && !rr->ring_gone)
        GPU_TRY(file, cuxfer_ring_drain(&rr->ring));
    if ((rc = sync_output_dirs()) != RC_OK)
        goto done;
    rr->times.wall_ms = roicopy_now_ms() - t0;
    roicopy_trace("the output directories synced");
    if (timed)
        GPU_TRY(file, cuxfer_timer_ms(&rr->span, CUXFER_WAIT,
                                      &rr->times.span_ms));
    if (!rr->cpu && (rc = replays(p, rr)) != RC_OK)
        goto done;
    rr->times.undecoded = rr->skipped;
    if (timed)
        roicopy_report_ring(p, &rr->times);
    rc = roicopy_report_skipped(p, rr->skipped);
done:
    return rc;
}

int roicopy_ring_run(const roicopy_plan *p)
{
    int rc = RC_OK, i;
    double t0;
    ring_run rr;
    memset(&rr, 0, sizeof rr);
    rr.home = p->devices[0];
    rr.cpu = p->io_only;
    rr.l = plan_ring(p);
    pthread_mutex_init(&rr.lock, NULL);
    pthread_mutex_init(&rr.turn_mu, NULL);
    pthread_cond_init(&rr.turn_cv, NULL);
    image_defer_dir_sync(1);
    /* Reading starts now, while the context comes up (started on a
     * helper thread by roicopy.c). */
    rr.ps = roicopy_prefetch_start(p);
    if (!rr.ps)
        rc = RC_INPUT;
    else if (!rr.cpu)
        rc = ring_setup(p, &rr);
    if (rc == RC_OK) {
        roicopy_prefetch_go(rr.ps);
        t0 = roicopy_now_ms();
        rc = ring_threads(p, &rr);
        if (rc == RC_OK)
            rc = ring_finish(p, &rr, t0);
    }
    roicopy_prefetch_free(rr.ps);
    (void)cuxfer_timer_destroy(&rr.span);
    ring_free(&rr, p->streams);
    roicopy_gpu_join(); /* the early release (ring_used), if it began */
    free(rr.last);
    for (i = 0; i < rr.nslot_mu; ++i)
        pthread_mutex_destroy(&rr.slot_mu[i]);
    free(rr.slot_mu);
    if (rc != RC_OK) /* what was written is still made durable */
        (void)image_sync_dirs(NULL, 0);
    image_defer_dir_sync(0);
    pthread_mutex_destroy(&rr.lock);
    pthread_mutex_destroy(&rr.turn_mu);
    pthread_cond_destroy(&rr.turn_cv);
    return rc;
}
