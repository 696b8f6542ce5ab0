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
 * Every CUDA return code is checked; a failure is exit status 5 with
 * "roicopy: FILE: CUDA: <error name>: <reason>".
 */
#include <cuxfer.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roicopy.h"

/* Report a CUDA failure for file: cuxfer's reason when it gave one, else
 * CUDA's own text. */
static int cuda_fail(const char *file, cudaError_t err)
{
    const char *why = cuxfer_last_reason();
    return roicopy_fail(RC_CUDA, file, "CUDA: %s: %s", cudaGetErrorName(err),
                        why && *why ? why : cudaGetErrorString(err));
}

/* Evaluate a cudaError_t expression; on failure report it and jump to the
 * function's cleanup with rc set. */
#define GPU_TRY(file, expr)                                                    \
    do {                                                                       \
        cudaError_t gpu_err_;                                                  \
        cuxfer_clear_reason();                                                 \
        gpu_err_ = (expr);                                                     \
        if (gpu_err_ != cudaSuccess) {                                         \
            rc = cuda_fail((file), gpu_err_);                                  \
            goto done;                                                         \
        }                                                                      \
    } while (0)

static int setup_device(const roicopy_plan *p)
{
    const char *file = p->frames[0].input;
    int n = 0;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_device_count(&n);
    if (err != cudaSuccess)
        return cuda_fail(file, err);
    if (p->device >= n)
        return roicopy_fail(RC_CUDA, file, "CUDA: cudaErrorInvalidDevice: "
                            "--device %d, but there %s only %d device%s",
                            p->device, n == 1 ? "is" : "are", n,
                            n == 1 ? "" : "s");
    err = cudaSetDevice(p->device);
    return err == cudaSuccess ? RC_OK : cuda_fail(file, err);
}

/* ---- host buffers: pinned views or, with --pageable, wrapped malloc ----- */

static cudaError_t host_view(cuxfer_view *v, int pageable, size_t width,
                             size_t height, size_t elem, void **owned)
{
    size_t bytes = width * elem * height; /* checked by image.c's limits */
    *owned = NULL;
    if (!pageable)
        return cuxfer_view_alloc_host(v, width, height, elem, 0);
    *owned = malloc(bytes);
    if (!*owned)
        return cudaErrorMemoryAllocation;
    return cuxfer_view_wrap(v, *owned, width * elem, width, height, elem);
}

static void host_view_free(cuxfer_view *v, void *owned)
{
    (void)cuxfer_view_free(v); /* frees pinned memory, nothing for wraps */
    free(owned);
}

/* ---- one input: bands on pool streams ------------------------------------ */

/* The three views of one band: rows [y0, y1) of the ROI on the host, on the
 * device, and of the host output. */
typedef struct band {
    cuxfer_view src, dev, out;
    cudaStream_t stream;
} band;

enum pass { PASS_H2D = 1, PASS_D2H = 2, PASS_BOTH = 3 };

/* Timing results, in ms: best and sum over --repeat. */
typedef struct stage_time {
    float best;
    double sum;
} stage_time;

static void stage_add(stage_time *t, float ms)
{
    if (t->sum == 0.0 || ms < t->best)
        t->best = ms;
    t->sum += ms;
}

typedef struct single_run {
    const roicopy_frame *f;
    cuxfer_view img, out, canvas, dev;
    void *img_owned, *out_owned;
    cuxfer_stream_pool pool;
    band *bands;
    int nbands;
    cuxfer_timer timer;
    void *link_host; /* pinned, for the raw 1D link when --pageable */
    size_t bytes;    /* ROI bytes, each way */
    stage_time h2d, d2h, total, link_h2d, link_d2h;
} single_run;

static cudaError_t make_bands(single_run *r, const cuxfer_view *src)
{
    size_t h = src->height, i;
    for (i = 0; i < (size_t)r->nbands; ++i) {
        cuxfer_roi b;
        band *bd = &r->bands[i];
        b.x = 0;
        b.width = src->width;
        b.y = h * i / (size_t)r->nbands;
        b.height = h * (i + 1) / (size_t)r->nbands - b.y;
        CUXFER_TRY(cuxfer_view_sub(src, b, &bd->src));
        CUXFER_TRY(cuxfer_view_sub(&r->dev, b, &bd->dev));
        CUXFER_TRY(cuxfer_view_sub(&r->out, b, &bd->out));
        CUXFER_TRY(cuxfer_stream_pool_next(&r->pool, &bd->stream));
    }
    return cudaSuccess;
}

/* Queue one pass over every band; with a timer, fork the band streams from
 * the first one after the start mark and join them back before the stop
 * mark, so the timer spans all of them. */
static cudaError_t queue_pass(single_run *r, enum pass what, int timed)
{
    cudaStream_t lead = r->bands[0].stream;
    int i;
    if (timed) {
        CUXFER_TRY(cuxfer_timer_start(&r->timer, lead));
        for (i = 1; i < r->nbands; ++i)
            CUXFER_TRY(cuxfer_stream_wait(r->bands[i].stream, lead));
    }
    for (i = 0; i < r->nbands; ++i) {
        band *b = &r->bands[i];
        if (what & PASS_H2D)
            CUXFER_TRY(cuxfer_copy2d_async(&b->dev, &b->src, b->stream));
        if (what & PASS_D2H)
            CUXFER_TRY(cuxfer_copy2d_async(&b->out, &b->dev, b->stream));
    }
    if (timed) {
        for (i = 1; i < r->nbands; ++i)
            CUXFER_TRY(cuxfer_stream_wait(lead, r->bands[i].stream));
        CUXFER_TRY(cuxfer_timer_stop(&r->timer, lead));
    }
    return cudaSuccess;
}

static cudaError_t timed_pass(single_run *r, enum pass what, stage_time *t)
{
    float ms;
    CUXFER_TRY(queue_pass(r, what, 1));
    CUXFER_TRY(cuxfer_timer_ms(&r->timer, CUXFER_WAIT, &ms));
    stage_add(t, ms);
    return cudaSuccess;
}

/* The raw link: one plain cudaMemcpyAsync of the same byte count between
 * pinned host memory and the device buffer, each direction. */
static cudaError_t timed_link(single_run *r, int to_device, stage_time *t)
{
    cudaStream_t s = r->bands[0].stream;
    void *host = r->link_host ? r->link_host : r->out.ptr;
    void *dev = r->canvas.ptr ? r->canvas.ptr : r->dev.ptr;
    float ms;
    CUXFER_TRY(cuxfer_timer_start(&r->timer, s));
    CUXFER_TRY(cudaMemcpyAsync(to_device ? dev : host, to_device ? host : dev,
                               r->bytes, to_device ? cudaMemcpyHostToDevice
                                                   : cudaMemcpyDeviceToHost,
                               s));
    CUXFER_TRY(cuxfer_timer_stop(&r->timer, s));
    CUXFER_TRY(cuxfer_timer_ms(&r->timer, CUXFER_WAIT, &ms));
    stage_add(t, ms);
    return cudaSuccess;
}

/* --repeat K rounds.  With timing each round measures the link, the two
 * directions alone, then the overlapped banded copy whose result is kept:
 * the last pass always leaves the ROI in r->out. */
static cudaError_t copy_rounds(single_run *r, const roicopy_plan *p)
{
    int k, timed = p->timing || p->json;
    for (k = 0; k < p->repeat; ++k) {
        if (timed) {
            CUXFER_TRY(timed_link(r, 1, &r->link_h2d));
            CUXFER_TRY(timed_link(r, 0, &r->link_d2h));
            CUXFER_TRY(timed_pass(r, PASS_H2D, &r->h2d));
            CUXFER_TRY(timed_pass(r, PASS_D2H, &r->d2h));
            CUXFER_TRY(timed_pass(r, PASS_BOTH, &r->total));
        } else {
            CUXFER_TRY(queue_pass(r, PASS_BOTH, 0));
        }
    }
    return cuxfer_stream_pool_sync(&r->pool);
}

static void print_stage(const char *name, const stage_time *t,
                        const stage_time *link, size_t bytes, int repeat)
{
    printf("  %-6s best %9.3f ms %8.2f GB/s  mean %9.3f ms", name, t->best,
           cuxfer_gbps(bytes, t->best), t->sum / repeat);
    if (link)
        printf("  | raw 1D link %8.2f GB/s, ratio %.3f",
               cuxfer_gbps(bytes, link->best),
               link->best > 0 ? link->best / t->best : 0.0);
    printf("\n");
}

static void print_timing(const roicopy_plan *p, const single_run *r)
{
    const roicopy_frame *f = r->f;
    printf("%s -> %s: %lux%lu ROI, %lu bytes each way, %d band%s, %s host "
           "memory, %d round%s\n", f->input, f->output,
           (unsigned long)f->roi.width, (unsigned long)f->roi.height,
           (unsigned long)r->bytes, r->nbands, r->nbands == 1 ? "" : "s",
           p->pageable ? "pageable" : "pinned", p->repeat,
           p->repeat == 1 ? "" : "s");
    print_stage("H2D", &r->h2d, &r->link_h2d, r->bytes, p->repeat);
    print_stage("D2H", &r->d2h, &r->link_d2h, r->bytes, p->repeat);
    print_stage("total", &r->total, NULL, 2 * r->bytes, p->repeat);
}

static void json_stage(const char *name, const stage_time *t, size_t bytes,
                       int repeat)
{
    printf(",\"%s_ms\":%.6f,\"%s_mean_ms\":%.6f,\"%s_gbps\":%.4f", name,
           t->best, name, t->sum / repeat, name, cuxfer_gbps(bytes, t->best));
}

static void print_json(const roicopy_plan *p, const single_run *r)
{
    const roicopy_frame *f = r->f;
    printf("{\"input\":");
    roicopy_json_string(stdout, f->input);
    printf(",\"output\":");
    roicopy_json_string(stdout, f->output);
    printf(",\"roi\":{\"x\":%lu,\"y\":%lu,\"width\":%lu,\"height\":%lu}",
           (unsigned long)f->roi.x, (unsigned long)f->roi.y,
           (unsigned long)f->roi.width, (unsigned long)f->roi.height);
    printf(",\"elem_size\":%lu,\"src_pitch\":%lu,\"dev_pitch\":%lu,"
           "\"bytes\":%lu,\"streams\":%d,\"repeat\":%d,\"pageable\":%s",
           (unsigned long)f->elem_size, (unsigned long)r->img.pitch,
           (unsigned long)r->dev.pitch, (unsigned long)r->bytes, r->nbands,
           p->repeat, p->pageable ? "true" : "false");
    json_stage("h2d", &r->h2d, r->bytes, p->repeat);
    json_stage("d2h", &r->d2h, r->bytes, p->repeat);
    json_stage("total", &r->total, 2 * r->bytes, p->repeat);
    json_stage("link_h2d", &r->link_h2d, r->bytes, p->repeat);
    json_stage("link_d2h", &r->link_d2h, r->bytes, p->repeat);
    printf(",\"h2d_vs_link\":%.4f,\"d2h_vs_link\":%.4f}\n",
           r->h2d.best > 0 ? r->link_h2d.best / r->h2d.best : 0.0,
           r->d2h.best > 0 ? r->link_d2h.best / r->d2h.best : 0.0);
}

/* The device side: a pitched view of the ROI, or the ROI's place in a
 * pitched canvas. */
static cudaError_t device_view(single_run *r, const roicopy_plan *p)
{
    const roicopy_frame *f = r->f;
    size_t epp = f->elem_per_pixel;
    cuxfer_roi at;
    if (!p->place)
        return cuxfer_view_alloc_device(&r->dev, f->roi.width * epp,
                                        f->roi.height, f->elem_size);
    CUXFER_TRY(cuxfer_view_alloc_device(&r->canvas, p->canvas_w * epp,
                                        p->canvas_h, f->elem_size));
    at.x = p->place_x * epp;
    at.y = p->place_y;
    at.width = f->roi.width * epp;
    at.height = f->roi.height;
    return cuxfer_view_sub(&r->canvas, at, &r->dev);
}

static void single_free(single_run *r)
{
    (void)cuxfer_timer_destroy(&r->timer);
    (void)cuxfer_stream_pool_sync(&r->pool);
    (void)cuxfer_stream_pool_destroy(&r->pool);
    free(r->bands);
    if (r->canvas.ptr)
        (void)cuxfer_view_free(&r->canvas);
    else
        (void)cuxfer_view_free(&r->dev);
    (void)cuxfer_host_free(r->link_host);
    host_view_free(&r->out, r->out_owned);
    host_view_free(&r->img, r->img_owned);
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
    r.bytes = f->out.total_bytes;
    r.nbands = (size_t)p->streams > f->roi.height ? (int)f->roi.height
                                                  : p->streams;
    r.bands = (band *)calloc((size_t)r.nbands, sizeof *r.bands);
    if (!r.bands) {
        rc = roicopy_fail(RC_CUDA, file, "out of memory");
        goto done;
    }
    GPU_TRY(file, host_view(&r.img, p->pageable, f->in.width * epp,
                            f->in.height, f->elem_size, &r.img_owned));
    if ((rc = roicopy_read_frame(f, r.img.ptr, r.img.pitch)) != RC_OK)
        goto done;
    roi.x = f->roi.x * epp;
    roi.y = f->roi.y;
    roi.width = f->roi.width * epp;
    roi.height = f->roi.height;
    GPU_TRY(file, cuxfer_view_sub(&r.img, roi, &src));
    GPU_TRY(file, device_view(&r, p));
    GPU_TRY(f->output, host_view(&r.out, p->pageable, roi.width, roi.height,
                                 f->elem_size, &r.out_owned));
    /* Poison the output, so a copy that silently did nothing fails
     * --verify instead of passing on leftover bytes. */
    memset(r.out.ptr, 0xA5, r.out.pitch * r.out.height);
    if (p->pageable && (p->timing || p->json))
        GPU_TRY(file, cuxfer_host_alloc(&r.link_host, r.bytes, 1,
                                        cudaHostAllocDefault));
    GPU_TRY(file, cuxfer_stream_pool_create(&r.pool, r.nbands, 0, 0));
    GPU_TRY(file, cuxfer_timer_create(&r.timer));
    GPU_TRY(file, make_bands(&r, &src));
    GPU_TRY(file, copy_rounds(&r, p));
    if (p->timing)
        print_timing(p, &r);
    if (p->json)
        print_json(p, &r);
    rc = roicopy_finish_frame(p, f, r.img.ptr, r.img.pitch, r.out.ptr,
                              r.out.pitch);
done:
    single_free(&r);
    return rc;
}

/* ---- several inputs: the transfer ring ----------------------------------- */

/* Where things are in a ring slot: the input image at host offset 0 (rows
 * packed), the ROI's download at out_offset; on the device a pitched ROI
 * (or canvas) with pitch dev_pitch. */
typedef struct ring_layout {
    size_t out_offset, host_bytes;
    size_t dev_pitch, device_bytes;
} ring_layout;

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static ring_layout plan_ring(const roicopy_plan *p)
{
    ring_layout l;
    size_t i, img = 0, out = 0, pitch = 0, rows = 0;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        size_t w = p->place ? p->canvas_w : f->roi.width;
        size_t h = p->place ? p->canvas_h : f->roi.height;
        size_t dp = roicopy_pitch_estimate(w * f->in.pixel_bytes);
        if (f->in.total_bytes > img)
            img = f->in.total_bytes;
        if (f->out.total_bytes > out)
            out = f->out.total_bytes;
        if (dp > pitch)
            pitch = dp;
        if (h > rows)
            rows = h;
    }
    /* Page-aligned output area: the download lands on its own pages. */
    l.out_offset = round_up(img, 4096);
    l.host_bytes = l.out_offset + out;
    l.dev_pitch = pitch;
    l.device_bytes = pitch * rows;
    return l;
}

/* What the ring's work function needs to queue one frame's two copies. */
typedef struct frame_job {
    const roicopy_plan *p;
    const roicopy_frame *f;
    const ring_layout *l;
    cuxfer_timer *span; /* started here: the first frame, when timing */
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
    cuxfer_view img, whole;
    cuxfer_roi roi, at;
    roi.x = f->roi.x * epp;
    roi.y = f->roi.y;
    roi.width = f->roi.width * epp;
    roi.height = f->roi.height;
    at.x = j->p->place ? j->p->place_x * epp : 0;
    at.y = j->p->place ? j->p->place_y : 0;
    at.width = roi.width;
    at.height = roi.height;
    CUXFER_TRY(cuxfer_view_wrap(&img, s->host, f->in.row_bytes,
                                f->in.width * epp, f->in.height, e));
    CUXFER_TRY(cuxfer_view_sub(&img, roi, src));
    CUXFER_TRY(cuxfer_view_wrap(&whole, s->device, j->l->dev_pitch, dw, dh, e));
    CUXFER_TRY(cuxfer_view_sub(&whole, at, dev));
    return cuxfer_view_wrap(out, (unsigned char *)s->host + j->l->out_offset,
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

/* The bidirectional link: the same byte count up and down at once on two
 * streams, plain cudaMemcpyAsync between pinned and device buffers. */
static int measure_bidir(const char *file, size_t bytes, float *ms)
{
    void *h[2] = {NULL, NULL}, *d[2] = {NULL, NULL};
    cuxfer_stream_pool pool;
    cuxfer_timer t;
    cudaStream_t s[2] = {NULL, NULL};
    int rc = RC_OK, i;
    memset(&pool, 0, sizeof pool);
    memset(&t, 0, sizeof t);
    for (i = 0; i < 2; ++i) {
        GPU_TRY(file, cuxfer_host_alloc(&h[i], bytes, 1, cudaHostAllocDefault));
        GPU_TRY(file, cudaMalloc(&d[i], bytes));
    }
    GPU_TRY(file, cuxfer_stream_pool_create(&pool, 2, 0, 0));
    GPU_TRY(file, cuxfer_timer_create(&t));
    GPU_TRY(file, cuxfer_stream_pool_next(&pool, &s[0]));
    GPU_TRY(file, cuxfer_stream_pool_next(&pool, &s[1]));
    for (i = 0; i < 2; ++i) { /* the first round warms the link up */
        GPU_TRY(file, cuxfer_timer_start(&t, s[0]));
        GPU_TRY(file, cuxfer_stream_wait(s[1], s[0]));
        GPU_TRY(file, cudaMemcpyAsync(d[0], h[0], bytes,
                                      cudaMemcpyHostToDevice, s[0]));
        GPU_TRY(file, cudaMemcpyAsync(h[1], d[1], bytes,
                                      cudaMemcpyDeviceToHost, s[1]));
        GPU_TRY(file, cuxfer_stream_wait(s[0], s[1]));
        GPU_TRY(file, cuxfer_timer_stop(&t, s[0]));
        GPU_TRY(file, cuxfer_timer_ms(&t, CUXFER_WAIT, ms));
    }
done:
    (void)cuxfer_timer_destroy(&t);
    (void)cuxfer_stream_pool_destroy(&pool);
    for (i = 0; i < 2; ++i) {
        (void)cudaFree(d[i]);
        (void)cuxfer_host_free(h[i]);
    }
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct ring_run {
    cuxfer_ring ring;
    ring_layout l;
    long *held;   /* frame each slot holds, -1 for none */
    long *last;   /* frame last submitted to each slot, for replays */
    size_t done;  /* frames written */
    cuxfer_timer span; /* first frame's start .. last frame's end */
    stage_time replay; /* --repeat: passes without file I/O */
    size_t replay_bytes; /* moved by one replay pass, both ways */
} ring_run;

/* A slot whose submission completed: verify and write the frame it held. */
static int finish_slot(const roicopy_plan *p, ring_run *rr,
                       const cuxfer_ring_slot *s)
{
    long k = rr->held[s->index];
    const roicopy_frame *f;
    int rc;
    if (k < 0)
        return RC_OK;
    f = &p->frames[k];
    rr->held[s->index] = -1;
    rc = roicopy_finish_frame(p, f, s->host, f->in.row_bytes,
                              (unsigned char *)s->host + rr->l.out_offset,
                              f->out.row_bytes);
    roicopy_progress(p, ++rr->done);
    return rc;
}

/* Acquire a slot (its previous frame is then complete), write that frame,
 * read frame i into the slot and submit its copies. */
static int ring_step(const roicopy_plan *p, ring_run *rr, size_t i)
{
    const roicopy_frame *f = &p->frames[i];
    cuxfer_ring_slot *s = NULL;
    cuxfer_ring_job job;
    frame_job fj;
    int rc = RC_OK;
    GPU_TRY(f->input, cuxfer_ring_acquire(&rr->ring, &s));
    if ((rc = finish_slot(p, rr, s)) != RC_OK ||
        (rc = roicopy_read_frame(f, s->host, f->in.row_bytes)) != RC_OK) {
        (void)cuxfer_ring_release(&rr->ring, s);
        return rc;
    }
    fj.p = p;
    fj.f = f;
    fj.l = &rr->l;
    fj.span = (p->timing || p->json) && i == 0 ? &rr->span : NULL;
    memset(&job, 0, sizeof job);
    job.work = frame_work;
    job.arg = &fj;
    rr->held[s->index] = (long)i;
    rr->last[s->index] = (long)i;
    GPU_TRY(f->input, cuxfer_ring_submit(&rr->ring, s, &job));
done:
    return rc;
}

/* After the last submission: stop the span timer once every slot's stream
 * is done (the last frame is not necessarily the last to finish). */
static cudaError_t stop_span(ring_run *rr)
{
    cudaStream_t lead = rr->ring.slots[0].stream;
    int i;
    for (i = 1; i < rr->ring.count; ++i)
        CUXFER_TRY(cuxfer_stream_wait(lead, rr->ring.slots[i].stream));
    return cuxfer_timer_stop(&rr->span, lead);
}

/* One pass of --repeat: nframes submissions in ring order, each slot
 * copying again the frame it last held - no file read or written, so the
 * span measures the ring's overlap of uploads and downloads alone. */
static int replay_pass(const roicopy_plan *p, ring_run *rr)
{
    const char *file = p->frames[0].input;
    size_t j, bytes = 0;
    int rc = RC_OK, first = 1;
    float ms;
    for (j = 0; j < p->nframes; ++j) {
        cuxfer_ring_slot *s = NULL;
        cuxfer_ring_job job;
        frame_job fj;
        long k;
        GPU_TRY(file, cuxfer_ring_acquire(&rr->ring, &s));
        k = rr->last[s->index];
        if (k < 0) { /* more slots than frames */
            GPU_TRY(file, cuxfer_ring_release(&rr->ring, s));
            continue;
        }
        fj.p = p;
        fj.f = &p->frames[k];
        fj.l = &rr->l;
        fj.span = first ? &rr->span : NULL;
        first = 0;
        memset(&job, 0, sizeof job);
        job.work = frame_work;
        job.arg = &fj;
        GPU_TRY(file, cuxfer_ring_submit(&rr->ring, s, &job));
        bytes += 2 * p->frames[k].out.total_bytes;
    }
    GPU_TRY(file, stop_span(rr));
    GPU_TRY(file, cuxfer_timer_ms(&rr->span, CUXFER_WAIT, &ms));
    stage_add(&rr->replay, ms);
    rr->replay_bytes = bytes;
done:
    return rc;
}

static void ring_report(const roicopy_plan *p, const ring_run *rr,
                        float span_ms, double wall_ms, float bidir_ms,
                        size_t link_bytes)
{
    double rgbps = cuxfer_gbps(rr->replay_bytes, rr->replay.best);
    size_t i, bytes = 0;
    double gbps, link;
    for (i = 0; i < p->nframes; ++i)
        bytes += 2 * p->frames[i].out.total_bytes;
    gbps = cuxfer_gbps(bytes, span_ms);
    link = cuxfer_gbps(2 * link_bytes, bidir_ms);
    if (p->timing) {
        printf("pipeline: %lu frames, %d slots, %lu bytes moved (both ways)\n"
               "  GPU span %9.3f ms %8.2f GB/s | bidirectional 1D link %8.2f "
               "GB/s, ratio %.3f\n  wall     %9.3f ms (with file reads and "
               "writes)\n", (unsigned long)p->nframes, p->streams,
               (unsigned long)bytes, span_ms, gbps, link,
               link > 0 ? gbps / link : 0.0, wall_ms);
        if (p->repeat > 1)
            printf("  replay   best %9.3f ms %8.2f GB/s  mean %9.3f ms "
                   "(%d passes without file I/O), ratio %.3f\n",
                   rr->replay.best, rgbps, rr->replay.sum / (p->repeat - 1),
                   p->repeat - 1, link > 0 ? rgbps / link : 0.0);
    }
    if (p->json) {
        printf("{\"frames\":%lu,\"slots\":%d,\"bytes\":%lu,\"span_ms\":%.6f,"
               "\"gbps\":%.4f,\"link_bidir_gbps\":%.4f,\"vs_link\":%.4f,"
               "\"wall_ms\":%.3f", (unsigned long)p->nframes, p->streams,
               (unsigned long)bytes, span_ms, gbps, link,
               link > 0 ? gbps / link : 0.0, wall_ms);
        if (p->repeat > 1)
            printf(",\"replay_passes\":%d,\"replay_ms\":%.6f,"
                   "\"replay_gbps\":%.4f,\"replay_vs_link\":%.4f",
                   p->repeat - 1, rr->replay.best, rgbps,
                   link > 0 ? rgbps / link : 0.0);
        printf("}\n");
    }
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

static int run_ring(const roicopy_plan *p)
{
    const char *file = p->frames[0].input;
    int timed = p->timing || p->json, rc = RC_OK, i;
    float span_ms = 0, bidir_ms = 0;
    size_t k, link_bytes = 0;
    double t0, wall_ms;
    ring_run rr;
    memset(&rr, 0, sizeof rr);
    rr.l = plan_ring(p);
    rr.held = (long *)malloc((size_t)p->streams * sizeof *rr.held);
    rr.last = (long *)malloc((size_t)p->streams * sizeof *rr.last);
    if (!rr.held || !rr.last) {
        rc = roicopy_fail(RC_CUDA, file, "out of memory");
        goto done;
    }
    for (i = 0; i < p->streams; ++i)
        rr.held[i] = rr.last[i] = -1;
    for (k = 0; k < p->nframes; ++k)
        if (p->frames[k].out.total_bytes > link_bytes)
            link_bytes = p->frames[k].out.total_bytes;
    if (timed && (rc = measure_bidir(file, link_bytes, &bidir_ms)) != RC_OK)
        goto done;
    GPU_TRY(file, cuxfer_ring_create(&rr.ring, p->streams, rr.l.host_bytes,
                                     rr.l.device_bytes, NULL));
    if (timed)
        GPU_TRY(file, cuxfer_timer_create(&rr.span));
    t0 = now_ms();
    for (k = 0; k < p->nframes && rc == RC_OK; ++k)
        rc = ring_step(p, &rr, k);
    if (rc != RC_OK) {
        (void)cuxfer_ring_drain(&rr.ring); /* the error is already told */
        goto done;
    }
    if (timed)
        GPU_TRY(file, stop_span(&rr));
    GPU_TRY(file, cuxfer_ring_drain(&rr.ring));
    wall_ms = now_ms() - t0;
    rc = finish_all(p, &rr);
    if (rc == RC_OK && timed)
        GPU_TRY(file, cuxfer_timer_ms(&rr.span, CUXFER_WAIT, &span_ms));
    for (i = 1; i < p->repeat && rc == RC_OK; ++i)
        rc = replay_pass(p, &rr);
    if (rc == RC_OK && timed)
        ring_report(p, &rr, span_ms, wall_ms, bidir_ms, link_bytes);
done:
    (void)cuxfer_timer_destroy(&rr.span);
    (void)cuxfer_ring_destroy(&rr.ring);
    free(rr.held);
    free(rr.last);
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
    int rc = setup_device(p);
    if (rc != RC_OK)
        return rc;
    if (p->nframes == 1)
        return run_single(p, &p->frames[0]);
    return p->pageable ? run_each(p) : run_ring(p);
}
