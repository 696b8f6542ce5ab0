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
 *             With --streams N the ROI is cut into N bands: uploads in band
 *             order on one stream, downloads in band order on another,
 *             band i's download waiting only for band i's upload.
 * Several:    reads, the transfer ring and writes as a pipeline
 *             (roicopy-ring.c, prefetch.c); a slot holds one frame's ROI,
 *             so frame i+1's upload overlaps frame i's download, and other
 *             frames are read and written meanwhile.  With --pageable, one
 *             at a time here.
 *
 * Several devices (--devices): band i, or ring slot i, lives on device
 * devices[i % ndevices].  Each device has its own two streams, device
 * buffer (the rows of its bands, stacked, or a canvas of its own) and
 * timer; the host buffers are shared.  devices[0] is the home device: the
 * current one between calls, which switch with cudaSetDevice and come back.
 *
 * Every CUDA return code is checked; a failure is exit status 5 with
 * "roicopy: FILE: CUDA: <error name>: <reason>".
 */
#include <cuxfer.h>

#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "report.h"
#include "roicopy.h"

/* ---- one input: bands up one stream and down another, on each device ---- */

/* What a pass queues: the banded 2D copies, or the raw 1D link (one plain
 * cudaMemcpyAsync per device and direction of its share of the bytes;
 * both directions at once on two streams). */
enum pass {
    PASS_H2D = 1, PASS_D2H = 2, PASS_BOTH = 3,
    PASS_LINK_H2D = 4, PASS_LINK_D2H = 8, PASS_LINK_BOTH = 12
};
#define PASS_LINK PASS_LINK_BOTH

/* The three views of one band: rows [y0, y0 + height) of the ROI on the
 * host, on its device, and of the host output. */
typedef struct band {
    cuxfer_view src, dev, out;
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
    cuxfer_stream_pool pool;  /* its two streams, on this device */
    cudaStream_t lead;        /* its uploads, in band order; the raw
                                 link's copies */
    cudaStream_t down;        /* its downloads, in band order; the raw
                                 link's download when both run */
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
        err = cuxfer_stream_pool_create_on(&d->pool, d->device, 2, 0, 0);
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

/* Each band's views, and each device's two streams. */
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
    }
    for (i = 0; i < r->nparts; ++i)
        if (r->parts[i].nbands) {
            CUXFER_TRY(cuxfer_stream_pool_next(&r->parts[i].pool, &r->parts[i].lead));
            CUXFER_TRY(cuxfer_stream_pool_next(&r->parts[i].pool, &r->parts[i].down));
        }
    return cudaSuccess;
}

/* Queue one device's part of a pass, with that device current.  Both ways,
 * band i's download waits for its own upload only, so it runs while band
 * i + 1 goes up: both directions of the link are busy but for the first
 * upload and the last download.  One stream each way keeps each direction's
 * copies in band order, one at a time at the link's full rate (doc/PERF.md,
 * "roicopy's single-image schedule"). */
static cudaError_t queue_part(single_run *r, int k, enum pass what)
{
    dev_part *d = &r->parts[k];
    int i;
    if (what & PASS_LINK) {
        unsigned char *host =
            (unsigned char *)(r->link_host ? r->link_host : r->out.ptr) +
            d->host_offset;
        void *dev = d->canvas.ptr ? d->canvas.ptr : d->dev.ptr;
        /* both ways: the same buffers, whose bytes the last pass (the
         * banded copies) replaces */
        if (what & PASS_LINK_H2D)
            CUXFER_TRY(cudaMemcpyAsync(dev, host, d->bytes, cudaMemcpyHostToDevice, d->lead));
        if (what & PASS_LINK_D2H)
            CUXFER_TRY(cudaMemcpyAsync(host, dev, d->bytes, cudaMemcpyDeviceToHost,
                                       what == PASS_LINK_BOTH ? d->down : d->lead));
        return cudaSuccess;
    }
    for (i = k; i < r->nbands; i += r->nparts) {
        band *b = &r->bands[i];
        if (what & PASS_H2D)
            CUXFER_TRY(cuxfer_copy2d_async(&b->dev, &b->src, d->lead));
        if (what == PASS_BOTH)
            CUXFER_TRY(cuxfer_stream_wait(d->down, d->lead));
        if (what & PASS_D2H)
            CUXFER_TRY(cuxfer_copy2d_async(&b->out, &b->dev, d->down));
    }
    return cudaSuccess;
}

/* Before a pass: every device's lead waits for the lead stream (the home
 * device's), its down stream for its lead, so the pass starts after the
 * last one ended everywhere (its uploads rewrite what the last downloads
 * read).  Timed, the run's timer starts on the lead and each device's on
 * its own lead. */
static cudaError_t fork_pass(single_run *r, int timed)
{
    cudaStream_t lead = r->parts[0].lead;
    int k;
    if (timed)
        CUXFER_TRY(cuxfer_timer_start(&r->timer, lead));
    for (k = 0; k < r->nparts; ++k) {
        dev_part *d = &r->parts[k];
        if (!d->nbands)
            continue;
        CUXFER_TRY(roicopy_wait_for(d->lead, lead, r->home, r->home));
        if (timed)
            CUXFER_TRY(cuxfer_timer_start(&d->timer, d->lead));
        CUXFER_TRY(roicopy_wait_for(d->down, d->lead, d->device, r->home));
    }
    return cudaSuccess;
}

/* The mirror of fork_pass: each device's lead waits for its down stream
 * (and stops its timer), the lead waits for every device (and stops the
 * run's). */
static cudaError_t join_pass(single_run *r, int timed)
{
    cudaStream_t lead = r->parts[0].lead;
    int k;
    for (k = 0; k < r->nparts; ++k) {
        dev_part *d = &r->parts[k];
        if (!d->nbands)
            continue;
        CUXFER_TRY(roicopy_wait_for(d->lead, d->down, d->device, r->home));
        if (timed)
            CUXFER_TRY(cuxfer_timer_stop(&d->timer, d->lead));
        CUXFER_TRY(roicopy_wait_for(lead, d->lead, d->device, r->home));
    }
    return timed ? cuxfer_timer_stop(&r->timer, lead) : cudaSuccess;
}

/* Queue one pass over every band (or the link) of every device. */
static cudaError_t queue_pass(single_run *r, enum pass what, int timed)
{
    int k;
    CUXFER_TRY(fork_pass(r, timed));
    for (k = 0; k < r->nparts; ++k) {
        cudaError_t err;
        if (!r->parts[k].nbands)
            continue;
        err = cudaSetDevice(r->parts[k].device);
        if (err == cudaSuccess)
            err = queue_part(r, k, what);
        CUXFER_TRY(roicopy_back_home(r->home, err));
    }
    return join_pass(r, timed);
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
 * device at once, each moving its share: up, down, both at once), the two
 * directions alone, then
 * the overlapped banded copy whose result is kept: the last pass always
 * leaves the ROI in r->out. */
static cudaError_t copy_rounds(single_run *r, const roicopy_plan *p)
{
    int k, timed = p->timing || p->json;
    for (k = 0; k < p->repeat; ++k) {
        if (timed) {
            CUXFER_TRY(timed_pass(r, PASS_LINK_H2D, ST_LINK_H2D));
            CUXFER_TRY(timed_pass(r, PASS_LINK_D2H, ST_LINK_D2H));
            CUXFER_TRY(timed_pass(r, PASS_LINK_BOTH, ST_LINK_BOTH));
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
    char *why = NULL;
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
    /* -k --json: a frame that fails to decode still has its object */
    roicopy_fail_keep(p->json && p->keep_going ? &why : NULL);
    rc = roicopy_read_frame(f, r.img.ptr, r.img.pitch);
    roicopy_fail_keep(NULL);
    if (rc == RC_INPUT && p->json && p->keep_going)
        roicopy_report_undecoded(p, f, why);
    if (rc != RC_OK)
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
    free(why);
    return rc;
}

/* --pageable with several inputs: the ring's buffers are pinned by
 * construction, so frames go one at a time through the single-input path. */
static int run_each(const roicopy_plan *p)
{
    size_t k, skipped = 0;
    int rc = RC_OK;
    for (k = 0; k < p->nframes && rc == RC_OK; ++k) {
        rc = run_single(p, &p->frames[k]);
        roicopy_progress(p, k + 1);
        if (rc == RC_INPUT && p->keep_going) { /* reported; go on */
            ++skipped;
            rc = RC_OK;
        }
    }
    return rc != RC_OK ? rc : roicopy_report_skipped(p, skipped);
}

int roicopy_gpu_run(const roicopy_plan *p)
{
    int rc;
    /* A batch reads while the context (started on a helper thread by
     * roicopy.c) comes up: roicopy-ring.c waits for it itself. */
    if (p->nframes > 1 && !p->pageable)
        return roicopy_ring_run(p);
    roicopy_gpu_join();
    rc = roicopy_setup_devices(p);
    if (rc == RC_OK && p->nframes == 1)
        rc = run_single(p, &p->frames[0]);
    else if (rc == RC_OK)
        rc = run_each(p);
    return rc;
}
