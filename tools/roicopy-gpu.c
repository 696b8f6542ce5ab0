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
#include <time.h>
#include <unistd.h>

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

/* ---- start-up ------------------------------------------------------------ */

/* Creating a CUDA context takes hundreds of milliseconds, longer than
 * checking a whole batch: a helper thread starts it (cudaFree(0) on each
 * device) while roicopy.c reads headers, and roicopy_gpu_run() waits for
 * it before its first CUDA call.  Its errors are ignored: the same call
 * fails again, reported, on the main thread. */
static pthread_t prestart_thread;
static int prestart_running;
static int prestart_devices[ROICOPY_MAX_DEVICES];
static int prestart_n;

static void *prestart_main(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < prestart_n; ++i)
        if (cudaSetDevice(prestart_devices[i]) == cudaSuccess)
            (void)cudaFree(0);
    (void)cudaGetLastError(); /* this thread's, not the main thread's */
    return NULL;
}

void roicopy_gpu_prestart(const int *devices, int n)
{
    int i;
    if (prestart_running || n < 1 || n > ROICOPY_MAX_DEVICES ||
        getenv("ROICOPY_NO_PRESTART"))
        return;
    for (i = 0; i < n; ++i)
        prestart_devices[i] = devices[i];
    prestart_n = n;
    prestart_running = pthread_create(&prestart_thread, NULL, prestart_main,
                                      NULL) == 0;
}

void roicopy_gpu_prestart_join(void)
{
    if (prestart_running)
        (void)pthread_join(prestart_thread, NULL);
    prestart_running = 0;
}

/* ---- devices ------------------------------------------------------------- */

/* Every listed device must exist; each is made current once, so one that
 * cannot be used fails here, and the home device (devices[0]) is left
 * current. */
static int setup_devices(const roicopy_plan *p)
{
    const char *file = p->frames[0].input;
    int n = 0, i;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_device_count(&n);
    if (err != cudaSuccess)
        return cuda_fail(file, err);
    for (i = 0; i < p->ndevices; ++i)
        if (p->devices[i] >= n)
            return roicopy_fail(RC_CUDA, file, "CUDA: cudaErrorInvalidDevice: "
                                "%s %d, but there %s only %d device%s",
                                p->devices_given ? "--devices lists device"
                                                 : "--device",
                                p->devices[i], n == 1 ? "is" : "are", n,
                                n == 1 ? "" : "s");
    for (i = p->ndevices - 1; i >= 0; --i) {
        cuxfer_clear_reason();
        err = cudaSetDevice(p->devices[i]);
        if (err != cudaSuccess)
            return cuda_fail(file, err);
    }
    return RC_OK;
}

/* Go back to the home device after work on another one, keeping the first
 * error. */
static cudaError_t back_home(int home, cudaError_t err)
{
    cudaError_t e = cudaSetDevice(home);
    return err != cudaSuccess ? err : e;
}

/* Make waiter wait, on the GPU, for what is queued so far on signaler, a
 * stream of device dev.  The waiter may be on any device, but the event
 * that carries the wait must be recorded on the signaler's device, which
 * cuxfer_stream_wait takes to be the current one before CUDA 12.8. */
static cudaError_t wait_for(cudaStream_t waiter, cudaStream_t signaler,
                            int dev, int home)
{
    cudaError_t err;
    if (waiter == signaler)
        return cudaSuccess;
    err = cudaSetDevice(dev);
    if (err == cudaSuccess)
        err = cuxfer_stream_wait(waiter, signaler);
    return back_home(home, err);
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

/* ---- one input: bands on pool streams, spread over the devices ---------- */

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

/* What a pass queues: the banded 2D copies, or the raw 1D link (one plain
 * cudaMemcpyAsync per device of its share of the bytes). */
enum pass {
    PASS_H2D = 1, PASS_D2H = 2, PASS_BOTH = 3,
    PASS_LINK_H2D = 4, PASS_LINK_D2H = 8
};
#define PASS_LINK (PASS_LINK_H2D | PASS_LINK_D2H)

/* The stages --timing reports. */
enum stage { ST_H2D, ST_D2H, ST_TOTAL, ST_LINK_H2D, ST_LINK_D2H, ST_COUNT };

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
    stage_time t[ST_COUNT];
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
    stage_time t[ST_COUNT];
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
    cuxfer_roi at;
    if (!p->place)
        return cuxfer_view_alloc_device(&d->dev, f->roi.width * epp, d->rows,
                                        f->elem_size);
    CUXFER_TRY(cuxfer_view_alloc_device(&d->canvas, p->canvas_w * epp,
                                        p->canvas_h, f->elem_size));
    at.x = p->place_x * epp;
    at.y = p->place_y;
    at.width = f->roi.width * epp;
    at.height = f->roi.height;
    return cuxfer_view_sub(&d->canvas, at, &d->dev);
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
    err = back_home(r->home, err);
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
        CUXFER_TRY(wait_for(d->lead, lead, r->home, r->home));
        CUXFER_TRY(cuxfer_timer_start(&d->timer, d->lead));
        for (i = k; !link && i < r->nbands; i += r->nparts)
            CUXFER_TRY(wait_for(r->bands[i].stream, d->lead, d->device,
                                r->home));
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
            CUXFER_TRY(wait_for(d->lead, r->bands[i].stream, d->device,
                                r->home));
        CUXFER_TRY(cuxfer_timer_stop(&d->timer, d->lead));
        CUXFER_TRY(wait_for(lead, d->lead, d->device, r->home));
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
        CUXFER_TRY(back_home(r->home, err));
    }
    return timed ? join_timed(r, link) : cudaSuccess;
}

static cudaError_t timed_pass(single_run *r, enum pass what, enum stage st)
{
    float ms;
    int k;
    CUXFER_TRY(queue_pass(r, what, 1));
    CUXFER_TRY(cuxfer_timer_ms(&r->timer, CUXFER_WAIT, &ms));
    stage_add(&r->t[st], ms);
    for (k = 0; k < r->nparts; ++k) {
        if (!r->parts[k].nbands)
            continue;
        CUXFER_TRY(cuxfer_timer_ms(&r->parts[k].timer, CUXFER_WAIT, &ms));
        stage_add(&r->parts[k].t[st], ms);
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

static void print_stage(const char *indent, const char *name,
                        const stage_time *t, const stage_time *link,
                        size_t bytes, int repeat)
{
    printf("%s%-6s best %9.3f ms %8.2f GB/s  mean %9.3f ms", indent, name,
           t->best, cuxfer_gbps(bytes, t->best), t->sum / repeat);
    if (link)
        printf("  | raw 1D link %8.2f GB/s, ratio %.3f",
               cuxfer_gbps(bytes, link->best),
               link->best > 0 ? link->best / t->best : 0.0);
    printf("\n");
}

static void print_stages(const char *indent, const stage_time *t,
                         size_t bytes, int repeat)
{
    print_stage(indent, "H2D", &t[ST_H2D], &t[ST_LINK_H2D], bytes, repeat);
    print_stage(indent, "D2H", &t[ST_D2H], &t[ST_LINK_D2H], bytes, repeat);
    print_stage(indent, "total", &t[ST_TOTAL], NULL, 2 * bytes, repeat);
}

/* "0,1,2" */
static void print_device_list(FILE *out, const roicopy_plan *p)
{
    int i;
    for (i = 0; i < p->ndevices; ++i)
        fprintf(out, "%s%d", i ? "," : "", p->devices[i]);
}

static void print_timing(const roicopy_plan *p, const single_run *r)
{
    const roicopy_frame *f = r->f;
    int k;
    printf("%s -> ", roicopy_esc(f->input));
    printf("%s: %lux%lu ROI, %lu bytes each way, %d band%s",
           roicopy_esc(f->output), (unsigned long)f->roi.width,
           (unsigned long)f->roi.height, (unsigned long)r->bytes, r->nbands,
           r->nbands == 1 ? "" : "s");
    if (p->devices_given) {
        printf(" on devices ");
        print_device_list(stdout, p);
    }
    printf(", %s host memory, %d round%s\n",
           p->pageable ? "pageable" : "pinned", p->repeat,
           p->repeat == 1 ? "" : "s");
    print_stages("  ", r->t, r->bytes, p->repeat);
    for (k = 0; p->devices_given && k < r->nparts; ++k) {
        const dev_part *d = &r->parts[k];
        printf("  device %d: %d band%s, %lu bytes each way\n", d->device,
               d->nbands, d->nbands == 1 ? "" : "s", (unsigned long)d->bytes);
        if (d->nbands)
            print_stages("    ", d->t, d->bytes, p->repeat);
    }
}

static void json_stage(const char *name, const stage_time *t, size_t bytes,
                       int repeat)
{
    printf(",\"%s_ms\":%.6f,\"%s_mean_ms\":%.6f,\"%s_gbps\":%.4f", name,
           t->best, name, t->sum / repeat, name, cuxfer_gbps(bytes, t->best));
}

static void json_stages(const stage_time *t, size_t bytes, int repeat)
{
    json_stage("h2d", &t[ST_H2D], bytes, repeat);
    json_stage("d2h", &t[ST_D2H], bytes, repeat);
    json_stage("total", &t[ST_TOTAL], 2 * bytes, repeat);
    json_stage("link_h2d", &t[ST_LINK_H2D], bytes, repeat);
    json_stage("link_d2h", &t[ST_LINK_D2H], bytes, repeat);
}

static void print_json(const roicopy_plan *p, const single_run *r)
{
    const roicopy_frame *f = r->f;
    const stage_time *t = r->t;
    int k;
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
           (unsigned long)r->parts[0].dev.pitch, (unsigned long)r->bytes,
           r->nbands, p->repeat, p->pageable ? "true" : "false");
    json_stages(t, r->bytes, p->repeat);
    printf(",\"h2d_vs_link\":%.4f,\"d2h_vs_link\":%.4f",
           t[ST_H2D].best > 0 ? t[ST_LINK_H2D].best / t[ST_H2D].best : 0.0,
           t[ST_D2H].best > 0 ? t[ST_LINK_D2H].best / t[ST_D2H].best : 0.0);
    printf(",\"skipped\":%lu,\"devices\":[", (unsigned long)p->nskipped);
    for (k = 0; k < r->nparts; ++k) {
        const dev_part *d = &r->parts[k];
        printf("%s{\"device\":%d,\"bands\":%d,\"bytes\":%lu", k ? "," : "",
               d->device, d->nbands, (unsigned long)d->bytes);
        json_stages(d->t, d->bytes, p->repeat);
        printf("}");
    }
    printf("]}\n");
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
    host_view_free(&r->out, r->out_owned);
    host_view_free(&r->img, r->img_owned);
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
    GPU_TRY(file, host_view(&r.img, p->pageable, f->in.width * epp,
                            f->in.height, f->elem_size, &r.img_owned));
    if ((rc = roicopy_read_frame(f, r.img.ptr, r.img.pitch)) != RC_OK)
        goto done;
    roi.x = f->roi.x * epp;
    roi.y = f->roi.y;
    roi.width = f->roi.width * epp;
    roi.height = f->roi.height;
    GPU_TRY(file, cuxfer_view_sub(&r.img, roi, &src));
    GPU_TRY(f->output, host_view(&r.out, p->pageable, roi.width, roi.height,
                                 f->elem_size, &r.out_owned));
    /* Poison the output, so a copy that silently did nothing fails
     * --verify instead of passing on leftover bytes. */
    memset(r.out.ptr, 0xA5, r.out.pitch * r.out.height);
    if (p->pageable && (p->timing || p->json))
        GPU_TRY(file, cuxfer_host_alloc(&r.link_host, r.bytes, 1,
                                        cudaHostAllocPortable));
    GPU_TRY(file, setup_parts(&r, p, &src));
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

/* ---- several inputs: reading while CUDA starts ---------------------------- */

/* A frame read ahead, while the CUDA context starts (it takes longer than
 * reading a batch from the page cache): the ROI's rows of the input in a
 * page-aligned buffer, and a buffer for the ROI's download.  Once CUDA is
 * up both are page-locked (cuxfer_host_register, cheap for memory already
 * touched) and the copies use them directly: no second copy, no pinned
 * ring memory for the frame.  netpbm and raw frames only (PNG and TIFF are
 * decoded whole, in the ring), and no more than a share of the memory. */
typedef struct prefetched {
    unsigned char *in;  /* rows roi.y .. roi.y + roi.height - 1 */
    unsigned char *out; /* the ROI's download */
    size_t in_bytes, out_bytes;
    int registered;     /* both page-locked: the copies use them */
    int read_failed;    /* err says why; told when the ring gets there */
    char err[IMAGE_ERR_MAX];
} prefetched;

typedef struct prefetch_set {
    const roicopy_plan *p;
    prefetched *pf;      /* one per frame; in == NULL: not read ahead */
    size_t next;         /* the next frame to read, taken atomically */
    pthread_t threads[8];
    int nthreads;
} prefetch_set;

static size_t prefetch_cap(void)
{
    const char *e = getenv("ROICOPY_PREFETCH_MB");
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t cap = (size_t)1 << 30; /* well under a second from an SSD */
    if (e && *e)
        return (size_t)strtoul(e, NULL, 10) << 20;
    if (pages > 0 && psz > 0 && (size_t)pages / 4 < cap / (size_t)psz)
        cap = (size_t)pages / 4 * (size_t)psz;
    return cap;
}

static void *prefetch_main(void *arg)
{
    prefetch_set *ps = (prefetch_set *)arg;
    const roicopy_plan *p = ps->p;
    for (;;) {
        size_t i = __atomic_fetch_add(&ps->next, 1, __ATOMIC_SEQ_CST);
        const roicopy_frame *f;
        prefetched *q;
        if (i >= p->nframes)
            break;
        q = &ps->pf[i];
        if (!q->in_bytes)
            continue;
        f = &p->frames[i];
        if (posix_memalign((void **)&q->in, 4096, q->in_bytes) != 0 ||
            posix_memalign((void **)&q->out, 4096, q->out_bytes) != 0) {
            free(q->in); /* not read ahead: the ring reads it */
            q->in = q->out = NULL;
            continue;
        }
        memset(q->out, 0, q->out_bytes); /* touched now, not while locking */
        if (image_read_span(f->input, &f->in, f->roi.y, f->roi.height, q->in,
                            f->in.row_bytes, q->err, sizeof q->err) != 0)
            q->read_failed = 1;
    }
    return NULL;
}

/* Choose the frames (in order, up to the cap) and start reading them on
 * threads; NULL when nothing is read ahead. */
static prefetch_set *prefetch_start(const roicopy_plan *p)
{
    size_t i, total = 0, cap = prefetch_cap(), n = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    prefetch_set *ps;
    int t;
    if (p->nframes < 2 || p->pageable || cap == 0)
        return NULL;
    ps = (prefetch_set *)calloc(1, sizeof *ps);
    if (!ps || !(ps->pf = (prefetched *)calloc(p->nframes, sizeof *ps->pf))) {
        free(ps);
        return NULL;
    }
    ps->p = p;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        size_t in = f->roi.height * f->in.row_bytes, out = f->out.total_bytes;
        if (f->in.format == IMAGE_PNG || f->in.format == IMAGE_TIFF ||
            total + in + out > cap)
            continue;
        ps->pf[i].in_bytes = in;
        ps->pf[i].out_bytes = out;
        total += in + out;
        ++n;
    }
    for (t = 0; t < 8 && (size_t)t < n && (cpus <= 0 || t < cpus); ++t)
        if (pthread_create(&ps->threads[t], NULL, prefetch_main, ps) == 0)
            ++ps->nthreads;
    if (n && ps->nthreads == 0)
        (void)prefetch_main(ps); /* no thread: read them here */
    return ps;
}

static void prefetch_join(prefetch_set *ps)
{
    int t;
    if (!ps)
        return;
    for (t = 0; t < ps->nthreads; ++t)
        (void)pthread_join(ps->threads[t], NULL);
    ps->nthreads = 0;
}

/* Page-lock what was read (CUDA is up); a frame that cannot be locked is
 * copied into its ring slot instead. */
static void prefetch_register(prefetch_set *ps)
{
    size_t i;
    if (!ps)
        return;
    for (i = 0; i < ps->p->nframes; ++i) {
        prefetched *q = &ps->pf[i];
        if (!q->in || q->read_failed)
            continue;
        if (cuxfer_host_register(q->in, q->in_bytes,
                                 cudaHostRegisterPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (cuxfer_host_register(q->out, q->out_bytes,
                                 cudaHostRegisterPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            (void)cuxfer_host_unregister(q->in);
            continue;
        }
        q->registered = 1;
    }
}

static void prefetch_free(prefetch_set *ps)
{
    size_t i;
    if (!ps)
        return;
    prefetch_join(ps);
    for (i = 0; i < ps->p->nframes; ++i) {
        prefetched *q = &ps->pf[i];
        if (q->registered) {
            (void)cuxfer_host_unregister(q->in);
            (void)cuxfer_host_unregister(q->out);
        }
        free(q->in);
        free(q->out);
    }
    free(ps->pf);
    free(ps);
}

/* The read-ahead buffers of frame i, when its copies use them. */
static const prefetched *locked(const prefetch_set *ps, size_t i)
{
    return ps && ps->pf[i].registered ? &ps->pf[i] : NULL;
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

static ring_layout plan_ring(const roicopy_plan *p, const prefetch_set *ps)
{
    ring_layout l;
    size_t i, img = 0, out = 0, pitch = 0, rows = 0;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        size_t w = p->place ? p->canvas_w : f->roi.width;
        size_t h = p->place ? p->canvas_h : f->roi.height;
        size_t dp = roicopy_pitch_estimate(w * f->in.pixel_bytes);
        int own = locked(ps, i) != NULL; /* a frame in its own buffers */
        if (!own && f->in.total_bytes > img)
            img = f->in.total_bytes;
        if (!own && f->out.total_bytes > out)
            out = f->out.total_bytes;
        if (dp > pitch)
            pitch = dp;
        if (h > rows)
            rows = h;
    }
    /* Page-aligned output area: the download lands on its own pages. */
    l.out_offset = round_up(img, 4096);
    l.host_bytes = l.out_offset + out;
    if (l.host_bytes == 0) /* every frame in its own buffers */
        l.host_bytes = 4096;
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
    if (j->pf) { /* the ROI's rows only, read ahead */
        roi.y = 0;
        CUXFER_TRY(cuxfer_view_wrap(&img, j->pf->in, f->in.row_bytes,
                                    f->in.width * epp, f->roi.height, e));
    } else {
        CUXFER_TRY(cuxfer_view_wrap(&img, s->host, f->in.row_bytes,
                                    f->in.width * epp, f->in.height, e));
    }
    CUXFER_TRY(cuxfer_view_sub(&img, roi, src));
    CUXFER_TRY(cuxfer_view_wrap(&whole, s->device, j->l->dev_pitch, dw, dh, e));
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
    err = back_home(home, err);
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
            CUXFER_TRY(wait_for(b[k].s[i], lead, home, home));
    for (k = 0; k < n; ++k) {
        cudaError_t err = cudaSetDevice(b[k].device);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(b[k].d[0], b[k].h[0], bytes,
                                  cudaMemcpyHostToDevice, b[k].s[0]);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(b[k].h[1], b[k].d[1], bytes,
                                  cudaMemcpyDeviceToHost, b[k].s[1]);
        CUXFER_TRY(back_home(home, err));
    }
    for (k = 0; k < n; ++k)
        for (i = 0; i < 2; ++i)
            CUXFER_TRY(wait_for(lead, b[k].s[i], b[k].device, home));
    CUXFER_TRY(cuxfer_timer_stop(t, lead));
    return cuxfer_timer_ms(t, CUXFER_WAIT, ms);
}

/* The bidirectional link: the same byte count up and down at once on two
 * streams of every device, all devices at once, plain cudaMemcpyAsync
 * between pinned and device buffers. */
static int measure_bidir(const roicopy_plan *p, size_t bytes, float *ms)
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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct ring_run {
    cuxfer_ring ring;
    int home;     /* devices[0]: slot 0's device, the span timer's */
    ring_layout l;
    long *held;   /* frame each slot holds, -1 for none */
    long *last;   /* frame last submitted to each slot, for replays */
    size_t done;  /* frames written */
    cuxfer_timer span; /* first frame's start .. last frame's end */
    stage_time replay; /* --repeat: passes without file I/O */
    size_t replay_bytes; /* moved by one replay pass, both ways */
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
    const prefetched *q = locked(rr->ps, k);
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
    int own_k = k >= 0 && locked(rr->ps, (size_t)k) != NULL;
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
    fj.pf = locked(rr->ps, i);
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

/* After the last submission: stop the span timer once every slot's stream
 * is done (the last frame is not necessarily the last to finish).  Slot 0
 * lives on the home device, with the timer. */
static cudaError_t stop_span(ring_run *rr)
{
    cudaStream_t lead = rr->ring.slots[0].stream;
    int i;
    for (i = 1; i < rr->ring.count; ++i)
        CUXFER_TRY(wait_for(lead, rr->ring.slots[i].stream,
                            rr->ring.slots[i].device_id, rr->home));
    return cuxfer_timer_stop(&rr->span, lead);
}

/* One pass of --repeat: nframes submissions in ring order, each slot
 * copying again the frame it last held - no file read or written, so the
 * span measures the ring's overlap of uploads and downloads alone.  Every
 * slot is idle here (the last span was waited for), so the span starts on
 * slot 0's stream, on the timer's device, whichever slot comes first. */
static int replay_pass(const roicopy_plan *p, ring_run *rr)
{
    const char *file = p->frames[0].input;
    size_t j, bytes = 0;
    int rc = RC_OK;
    float ms;
    GPU_TRY(file, cuxfer_timer_start(&rr->span, rr->ring.slots[0].stream));
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
        fj.pf = locked(rr->ps, (size_t)k);
        fj.span = NULL;
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

/* Device k's share of the ring: its slots, and the frames those held
 * (frame i went to slot i % slots), with their bytes both ways. */
static void device_share(const roicopy_plan *p, const ring_run *rr, int k,
                         int *slots, size_t *frames, size_t *bytes)
{
    size_t i;
    int s;
    *slots = 0;
    *frames = *bytes = 0;
    for (s = 0; s < rr->ring.count; ++s)
        if (rr->ring.slots[s].device_id == p->devices[k])
            ++*slots;
    for (i = 0; i < p->nframes; ++i)
        if (rr->ring.slots[i % (size_t)rr->ring.count].device_id ==
            p->devices[k]) {
            ++*frames;
            *bytes += 2 * p->frames[i].out.total_bytes;
        }
}

static void ring_devices(const roicopy_plan *p, const ring_run *rr, int json)
{
    size_t frames, bytes;
    int k, slots;
    if (json)
        printf(",\"devices\":[");
    for (k = 0; k < p->ndevices; ++k) {
        device_share(p, rr, k, &slots, &frames, &bytes);
        if (json)
            printf("%s{\"device\":%d,\"slots\":%d,\"frames\":%lu,"
                   "\"bytes\":%lu}", k ? "," : "", p->devices[k], slots,
                   (unsigned long)frames, (unsigned long)bytes);
        else
            printf("  device %d: %d slot%s, %lu frame%s, %lu bytes moved "
                   "(both ways)\n", p->devices[k], slots,
                   slots == 1 ? "" : "s", (unsigned long)frames,
                   frames == 1 ? "" : "s", (unsigned long)bytes);
    }
    if (json)
        printf("]");
}

/* link_bytes went up and down at once on every device: the link moved
 * 2 x link_bytes x devices in bidir_ms. */
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
    link = cuxfer_gbps(2 * link_bytes * (size_t)p->ndevices, bidir_ms);
    if (p->timing) {
        printf("pipeline: %lu frames, %d slots, %lu bytes moved (both ways)",
               (unsigned long)p->nframes, p->streams, (unsigned long)bytes);
        if (p->devices_given) {
            printf(", devices ");
            print_device_list(stdout, p);
        }
        printf("\n  GPU span %9.3f ms %8.2f GB/s | bidirectional 1D link %8.2f "
               "GB/s, ratio %.3f\n  wall     %9.3f ms (with file reads and "
               "writes)\n", span_ms, gbps, link,
               link > 0 ? gbps / link : 0.0, wall_ms);
        if (p->repeat > 1)
            printf("  replay   best %9.3f ms %8.2f GB/s  mean %9.3f ms "
                   "(%d passes without file I/O), ratio %.3f\n",
                   rr->replay.best, rgbps, rr->replay.sum / (p->repeat - 1),
                   p->repeat - 1, link > 0 ? rgbps / link : 0.0);
        if (p->devices_given)
            ring_devices(p, rr, 0);
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
        printf(",\"skipped\":%lu", (unsigned long)p->nskipped);
        ring_devices(p, rr, 1);
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
            rc = cuda_fail(p->frames[i].input, err);
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

static int run_ring(const roicopy_plan *p, const prefetch_set *ps)
{
    const char *file = p->frames[0].input;
    int timed = p->timing || p->json, rc = RC_OK, i;
    float span_ms = 0, bidir_ms = 0;
    size_t k, link_bytes = 0;
    double t0, wall_ms;
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
    if (!rr.held || !rr.last) {
        rc = roicopy_fail(RC_CUDA, file, "out of memory");
        goto done;
    }
    for (i = 0; i < p->streams; ++i)
        rr.held[i] = rr.last[i] = -1;
    for (k = 0; k < p->nframes; ++k)
        if (p->frames[k].out.total_bytes > link_bytes)
            link_bytes = p->frames[k].out.total_bytes;
    if (timed && (rc = measure_bidir(p, link_bytes, &bidir_ms)) != RC_OK)
        goto done;
    GPU_TRY(file, cuxfer_ring_create(&rr.ring, p->streams, rr.l.host_bytes,
                                     rr.l.device_bytes, &opt));
    if (timed)
        GPU_TRY(file, cuxfer_timer_create(&rr.span));
    t0 = now_ms();
    rc = ring_threads(p, &rr);
    if (rc != RC_OK) {
        (void)cuxfer_ring_drain(&rr.ring); /* the error is already told */
        goto done;
    }
    if (timed)
        GPU_TRY(file, stop_span(&rr));
    GPU_TRY(file, cuxfer_ring_drain(&rr.ring));
    rc = finish_all_threads(p, &rr);
    if (rc == RC_OK)
        rc = sync_output_dirs(p);
    wall_ms = now_ms() - t0;
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
    prefetch_set *ps = prefetch_start(p);
    int rc;
    roicopy_gpu_prestart_join();
    rc = setup_devices(p);
    prefetch_join(ps);
    if (rc == RC_OK && p->nframes == 1)
        rc = run_single(p, &p->frames[0]);
    else if (rc == RC_OK && p->pageable)
        rc = run_each(p);
    else if (rc == RC_OK) {
        prefetch_register(ps);
        rc = run_ring(p, ps);
    }
    prefetch_free(ps);
    return rc;
}
