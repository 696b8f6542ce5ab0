/* SPDX-License-Identifier: MIT */
/*
 * roicopy-gpu.c - the GPU half of roicopy, written against the public API
 * of cuxfer.h only: it is the kit's first user and meant to read as an
 * example.
 *
 * One input:  pinned (or --pageable) host view of the whole image -> ROI
 *             sub-view (source pitch = the full row) -> cuxfer_copy2d_async
 *             into a pitched device view (or a sub-view of a device canvas)
 *             -> cuxfer_copy2d_async back into a host view of the ROI.
 *             With --streams N the ROI is cut into N bands, each band's two
 *             copies on its own pool stream.
 * Several:    the transfer ring; a slot holds one input image and its ROI,
 *             so frame i+1's upload and read overlap frame i's download.
 *
 * Several devices (--devices): band i, or ring slot i, lives on device
 * devices[i % ndevices].  Each device has its own stream pool, device
 * buffer (the rows of its bands, stacked, or a canvas of its own) and
 * timer; the host buffers are shared.  devices[0] is the home device: the
 * current one between calls, which switch with cudaSetDevice and come back.
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

/* ---- one input: bands on pool streams, spread over the devices ---------- */

/* What a pass queues: the banded 2D copies, or the raw 1D link (one plain
 * cudaMemcpyAsync per device of its share of the bytes). */
enum pass {
    PASS_H2D = 1, PASS_D2H = 2, PASS_BOTH = 3,
    PASS_LINK_H2D = 4, PASS_LINK_D2H = 8
};
#define PASS_LINK (PASS_LINK_H2D | PASS_LINK_D2H)

/* The three views of one band: rows [y0, y0 + height) of the ROI on the
 * host, on its device, and of the host output. */
typedef struct band {
    cuxfer_view src, dev, out;
    cudaStream_t stream;
    size_t y0, height;
    size_t dev_y; /* its first row in its device's view */
} band;

/* One device's share: bands part, part + nparts, part + 2 nparts, ... */
typedef struct dev_part {
    int device;
    int nbands;
    size_t rows, bytes;       /* ROI rows of its bands; bytes each way */
    size_t host_offset;       /* its share of the host buffer, for the link */
    cuxfer_view canvas, dev;  /* its rows, or the ROI's place in its canvas */
    cuxfer_stream_pool pool;  /* one stream per band, on this device */
    cudaStream_t lead;        /* its first band's stream */
    cuxfer_timer timer;       /* this device's span of a timed pass */
} dev_part;

typedef struct single_run {
    const roicopy_frame *f;
    int home;
    cuxfer_view img, out;
    void *img_owned, *out_owned;
    dev_part *parts; /* one per device of p->devices */
    int nparts;
    band *bands;
    int nbands;
    cuxfer_timer timer; /* on the home device: spans every device's work */
    void *link_host; /* pinned, for the raw 1D link when --pageable */
    size_t bytes;    /* ROI bytes, each way */
    single_times times; /* --timing, --json: every stage, every device */
} single_run;

/* Deal the bands out round robin and size each device's share.  Without
 * --place a device holds only its bands' rows, stacked in band order; with
 * it, each device has a canvas and a band keeps its row in the ROI. */
static void plan_parts(single_run *r, const roicopy_plan *p)
{
    const roicopy_frame *f = r->f;
    size_t row = f->roi.width * f->elem_per_pixel * f->elem_size, off = 0;
    int i;
    for (i = 0; i < r->nparts; ++i)
        r->parts[i].device = p->devices[i];
    for (i = 0; i < r->nbands; ++i) {
        band *b = &r->bands[i];
        dev_part *d = &r->parts[i % r->nparts];
        size_t y1;
        roicopy_band_rows(f->roi.height, (size_t)r->nbands, (size_t)i, &b->y0,
                          &y1);
        b->height = y1 - b->y0;
        b->dev_y = p->place ? b->y0 : d->rows;
        d->rows += b->height;
        ++d->nbands;
    }
    for (i = 0; i < r->nparts; ++i) {
        r->parts[i].bytes = r->parts[i].rows * row;
        r->parts[i].host_offset = off;
        off += r->parts[i].bytes;
    }
}

/* A device's side, on the current device: a pitched view of its rows, or
 * the ROI's place in a pitched canvas. */
static cudaError_t part_view(dev_part *d, const roicopy_plan *p,
                             const roicopy_frame *f)
{
    size_t epp = f->elem_per_pixel;
    if (!p->place)
        return cuxfer_view_alloc_device(&d->dev, f->roi.width * epp, d->rows,
                                        f->elem_size);
    CUXFER_TRY(cuxfer_view_alloc_device(&d->canvas, p->canvas_w * epp,
                                        p->canvas_h, f->elem_size));
    return cuxfer_view_sub(&d->canvas, roicopy_device_roi(p, f), &d->dev);
}

/* Buffer, timer and stream pool of a device with bands. */
static cudaError_t part_setup(single_run *r, dev_part *d,
                              const roicopy_plan *p)
{
    cudaError_t err = cudaSetDevice(d->device);
    if (err == cudaSuccess)
        err = part_view(d, p, r->f);
    if (err == cudaSuccess)
        err = cuxfer_timer_create(&d->timer);
    err = roicopy_back_home(r->home, err);
    if (err == cudaSuccess)
        err = cuxfer_stream_pool_create_on(&d->pool, d->device, d->nbands, 0,
                                           0);
    return err;
}

static void part_free(dev_part *d, int home)
{
    (void)cuxfer_stream_pool_sync(&d->pool);
    /* Free on the device that owns it; a failed switch still tries. */
    (void)cudaSetDevice(d->device);
    (void)cuxfer_timer_destroy(&d->timer);
    (void)cuxfer_stream_pool_destroy(&d->pool);
    if (d->canvas.ptr)
        (void)cuxfer_view_free(&d->canvas);
    else
        (void)cuxfer_view_free(&d->dev);
    (void)cudaSetDevice(home);
}

/* Each band's views and stream; a device's first band's stream leads it. */
static cudaError_t make_bands(single_run *r, const cuxfer_view *src)
{
    int i;
    for (i = 0; i < r->nbands; ++i) {
        band *bd = &r->bands[i];
        dev_part *d = &r->parts[i % r->nparts];
        cuxfer_roi b;
        b.x = 0;
        b.width = src->width;
        b.y = bd->y0;
        b.height = bd->height;
        CUXFER_TRY(cuxfer_view_sub(src, b, &bd->src));
        CUXFER_TRY(cuxfer_view_sub(&r->out, b, &bd->out));
        b.y = bd->dev_y;
        CUXFER_TRY(cuxfer_view_sub(&d->dev, b, &bd->dev));
        CUXFER_TRY(cuxfer_stream_pool_next(&d->pool, &bd->stream));
        if (!d->lead)
            d->lead = bd->stream;
    }
    return cudaSuccess;
}

/* Queue one device's part of a pass, with that device current. */
static cudaError_t queue_part(single_run *r, int k, enum pass what)
{
    dev_part *d = &r->parts[k];
    int i;
    if (what & PASS_LINK) {
        unsigned char *host =
            (unsigned char *)(r->link_host ? r->link_host : r->out.ptr) +
            d->host_offset;
        void *dev = d->canvas.ptr ? d->canvas.ptr : d->dev.ptr;
        int up = (what & PASS_LINK_H2D) != 0;
        return cudaMemcpyAsync(up ? dev : (void *)host, up ? (void *)host : dev,
                               d->bytes, up ? cudaMemcpyHostToDevice
                                            : cudaMemcpyDeviceToHost,
                               d->lead);
    }
    for (i = k; i < r->nbands; i += r->nparts) {
        band *b = &r->bands[i];
        if (what & PASS_H2D)
            CUXFER_TRY(cuxfer_copy2d_async(&b->dev, &b->src, b->stream));
        if (what & PASS_D2H)
            CUXFER_TRY(cuxfer_copy2d_async(&b->out, &b->dev, b->stream));
    }
    return cudaSuccess;
}

/* With a timer: the run's timer starts on the lead stream (band 0's, on
 * the home device); every device's lead waits for it and starts that
 * device's timer; the device's other band streams wait for their lead.
 * The raw link uses only the device leads. */
static cudaError_t fork_timed(single_run *r, int link)
{
    cudaStream_t lead = r->parts[0].lead;
    int k, i;
    CUXFER_TRY(cuxfer_timer_start(&r->timer, lead));
    for (k = 0; k < r->nparts; ++k) {
        dev_part *d = &r->parts[k];
        if (!d->nbands)
            continue;
        CUXFER_TRY(roicopy_wait_for(d->lead, lead, r->home, r->home));
        CUXFER_TRY(cuxfer_timer_start(&d->timer, d->lead));
        for (i = k; !link && i < r->nbands; i += r->nparts)
            CUXFER_TRY(roicopy_wait_for(r->bands[i].stream, d->lead,
                                        d->device, r->home));
    }
    return cudaSuccess;
}

/* The mirror of fork_timed: each device's lead waits for its bands and
 * stops its timer, the lead waits for every device and stops the run's. */
static cudaError_t join_timed(single_run *r, int link)
{
    cudaStream_t lead = r->parts[0].lead;
    int k, i;
    for (k = 0; k < r->nparts; ++k) {
        dev_part *d = &r->parts[k];
        if (!d->nbands)
            continue;
        for (i = k; !link && i < r->nbands; i += r->nparts)
            CUXFER_TRY(roicopy_wait_for(d->lead, r->bands[i].stream,
                                        d->device, r->home));
        CUXFER_TRY(cuxfer_timer_stop(&d->timer, d->lead));
        CUXFER_TRY(roicopy_wait_for(lead, d->lead, d->device, r->home));
    }
    return cuxfer_timer_stop(&r->timer, lead);
}

/* Queue one pass over every band (or the link) of every device. */
static cudaError_t queue_pass(single_run *r, enum pass what, int timed)
{
    int k, link = (what & PASS_LINK) != 0;
    if (timed)
        CUXFER_TRY(fork_timed(r, link));
    for (k = 0; k < r->nparts; ++k) {
        cudaError_t err;
        if (!r->parts[k].nbands)
            continue;
        err = cudaSetDevice(r->parts[k].device);
        if (err == cudaSuccess)
            err = queue_part(r, k, what);
        CUXFER_TRY(roicopy_back_home(r->home, err));
    }
    return timed ? join_timed(r, link) : cudaSuccess;
}

static cudaError_t timed_pass(single_run *r, enum pass what, enum stage st)
{
    float ms;
    int k;
    CUXFER_TRY(queue_pass(r, what, 1));
    CUXFER_TRY(cuxfer_timer_ms(&r->timer, CUXFER_WAIT, &ms));
    roicopy_stage_add(&r->times.t[st], ms);
    for (k = 0; k < r->nparts; ++k) {
        if (!r->parts[k].nbands)
            continue;
        CUXFER_TRY(cuxfer_timer_ms(&r->parts[k].timer, CUXFER_WAIT, &ms));
        roicopy_stage_add(&r->times.parts[k].t[st], ms);
    }
    return cudaSuccess;
}

static cudaError_t sync_parts(single_run *r)
{
    cudaError_t first = cudaSuccess, err;
    int k;
    for (k = 0; k < r->nparts; ++k) {
        err = cuxfer_stream_pool_sync(&r->parts[k].pool);
        if (err != cudaSuccess && first == cudaSuccess)
            first = err;
    }
    return first;
}

/* --repeat K rounds.  With timing each round measures the link (every
 * device at once, each moving its share), the two directions alone, then
 * the overlapped banded copy whose result is kept: the last pass always
 * leaves the ROI in r->out. */
static cudaError_t copy_rounds(single_run *r, const roicopy_plan *p)
{
    int k, timed = p->timing || p->json;
    for (k = 0; k < p->repeat; ++k) {
        if (timed) {
            CUXFER_TRY(timed_pass(r, PASS_LINK_H2D, ST_LINK_H2D));
            CUXFER_TRY(timed_pass(r, PASS_LINK_D2H, ST_LINK_D2H));
            CUXFER_TRY(timed_pass(r, PASS_H2D, ST_H2D));
            CUXFER_TRY(timed_pass(r, PASS_D2H, ST_D2H));
            CUXFER_TRY(timed_pass(r, PASS_BOTH, ST_TOTAL));
        } else {
            CUXFER_TRY(queue_pass(r, PASS_BOTH, 0));
        }
    }
    return sync_parts(r);
}

/* What --timing and --json print of the run (timed_pass measured it). */
static void report_single(const roicopy_plan *p, single_run *r)
{
    int k;
    r->times.nbands = r->nbands;
    r->times.bytes = r->bytes;
    r->times.src_pitch = r->img.pitch;
    r->times.dev_pitch = r->parts[0].dev.pitch;
    for (k = 0; k < r->nparts; ++k) {
        r->times.parts[k].device = r->parts[k].device;
        r->times.parts[k].nbands = r->parts[k].nbands;
        r->times.parts[k].bytes = r->parts[k].bytes;
    }
    roicopy_report_single(p, r->f, &r->times);
}

static void single_free(single_run *r)
{
    int k;
    (void)cuxfer_timer_destroy(&r->timer);
    for (k = 0; r->parts && k < r->nparts; ++k)
        part_free(&r->parts[k], r->home);
    free(r->parts);
    free(r->bands);
    (void)cuxfer_host_free(r->link_host);
    roicopy_host_view_free(&r->out, r->out_owned);
    roicopy_host_view_free(&r->img, r->img_owned);
}

/* The device side of every device with bands, then the bands. */
static cudaError_t setup_parts(single_run *r, const roicopy_plan *p,
                               const cuxfer_view *src)
{
    int k;
    for (k = 0; k < r->nparts; ++k)
        if (r->parts[k].nbands)
            CUXFER_TRY(part_setup(r, &r->parts[k], p));
    CUXFER_TRY(cuxfer_timer_create(&r->timer));
    return make_bands(r, src);
}

static int run_single(const roicopy_plan *p, const roicopy_frame *f)
{
    const char *file = f->input;
    size_t epp = f->elem_per_pixel;
    cuxfer_view src;
    cuxfer_roi roi;
    single_run r;
    int rc = RC_OK;
    memset(&r, 0, sizeof r);
    r.f = f;
    r.home = p->devices[0];
    r.bytes = f->out.total_bytes;
    r.nbands = roicopy_band_count(p, f);
    r.nparts = p->ndevices;
    r.bands = (band *)calloc((size_t)r.nbands, sizeof *r.bands);
    r.parts = (dev_part *)calloc((size_t)r.nparts, sizeof *r.parts);
    if (!r.bands || !r.parts) {
        rc = roicopy_fail(RC_CUDA, file, "out of memory");
        goto done;
    }
    plan_parts(&r, p);
    GPU_TRY(file, roicopy_host_view(&r.img, p->pageable, f->in.width * epp,
                                    f->in.height, f->elem_size,
                                    &r.img_owned));
    if ((rc = roicopy_read_frame(f, r.img.ptr, r.img.pitch)) != RC_OK)
        goto done;
    roi = roicopy_roi(&f->roi, epp);
    GPU_TRY(file, cuxfer_view_sub(&r.img, roi, &src));
    GPU_TRY(f->output, roicopy_host_view(&r.out, p->pageable, roi.width,
                                         roi.height, f->elem_size,
                                         &r.out_owned));
    /* Poison the output, so a copy that silently did nothing fails
     * --verify instead of passing on leftover bytes. */
    memset(r.out.ptr, 0xA5, r.out.pitch * r.out.height);
    if (p->pageable && (p->timing || p->json))
        GPU_TRY(file, cuxfer_host_alloc(&r.link_host, r.bytes, 1,
                                        cudaHostAllocPortable));
    GPU_TRY(file, setup_parts(&r, p, &src));
    GPU_TRY(file, copy_rounds(&r, p));
    if (p->timing || p->json)
        report_single(p, &r);
    rc = roicopy_finish_frame(p, f, r.img.ptr, r.img.pitch, r.out.ptr,
                              r.out.pitch);
done:
    single_free(&r);
    return rc;
}

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
        goto failed;
    }
    if (q && q->in && !q->registered) /* read ahead, but not locked */
        memcpy((unsigned char *)s->host + f->roi.y * f->in.row_bytes, q->in,
               q->in_bytes);
    else if (!(q && q->registered) &&
             (rc = roicopy_read_frame(f, s->host, f->in.row_bytes)) != RC_OK)
        goto failed;
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

static int run_ring(const roicopy_plan *p, const prefetch_set *ps)
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

/* --pageable with several inputs: the ring's buffers are pinned by
 * construction, so frames go one at a time through the single-input path. */
static int run_each(const roicopy_plan *p)
{
    size_t k;
    int rc = RC_OK;
    for (k = 0; k < p->nframes && rc == RC_OK; ++k) {
        rc = run_single(p, &p->frames[k]);
        roicopy_progress(p, k + 1);
    }
    return rc;
}

int roicopy_gpu_run(const roicopy_plan *p)
{
    /* Read ahead while the context (started on a helper thread by
     * roicopy.c) comes up. */
    prefetch_set *ps = roicopy_prefetch_start(p);
    int rc;
    roicopy_gpu_prestart_join();
    rc = roicopy_setup_devices(p);
    roicopy_prefetch_join(ps);
    if (rc == RC_OK && p->nframes == 1)
        rc = run_single(p, &p->frames[0]);
    else if (rc == RC_OK && p->pageable)
        rc = run_each(p);
    else if (rc == RC_OK) {
        roicopy_prefetch_register(ps);
        rc = run_ring(p, ps);
    }
    roicopy_prefetch_free(ps);
    return rc;
}
