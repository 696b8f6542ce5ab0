/* SPDX-License-Identifier: MIT */
/*
 * roicopy-tiles.c - many regions of one image: --tiles WxH[+SX+SY], --roi
 * repeated, -o DIR (one file a region) or --stack FILE (one multi-image
 * netpbm stream).
 *
 * Everything is checked first - the regions inside the image, the output
 * format, every output path - as roicopy.c does for single ROIs and with
 * its functions, so errors read the same with or without a GPU.  Then the
 * image is read into pinned memory once, cuxfer_rois_copy_async gathers
 * every region into one dense device buffer (region i at the prefix sum of
 * the earlier regions' bytes, rows packed: an N x h x w x C batch when the
 * regions are equal), one dense copy brings the batch back, and region i is
 * written straight from its place in the batch, through the same codecs
 * and output module (output.c) as a single ROI.  The --dry-run plan is
 * printed by report.c.
 */
#include "roicopy.h"
#include "checks.h"
#include "devices.h"
#include "prefetch.h"
#include "report.h"

#include <cuxfer.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The most regions one run takes (names, offsets and the plan's arrays
 * stay a few tens of MiB). */
#define TILES_MAX 1000000UL

/* ---- options -------------------------------------------------------------- */

int roicopy_tiles_option(const char *arg, size_t *w, size_t *h, size_t *sx,
                         size_t *sy)
{
    char err[GEOM_ERR_MAX];
    geom_rect r;
    if (geom_parse_rect(arg, &r, err, sizeof err))
        return roicopy_fail(RC_USAGE, NULL, "--tiles: %s", roicopy_esc(err));
    *w = r.width;
    *h = r.height;
    if (!strchr(arg, '+')) {
        *sx = r.width;
        *sy = r.height;
        return 0;
    }
    if (r.x == 0 || r.y == 0)
        return roicopy_fail(RC_USAGE, NULL, "--tiles %s: the step +%lu+%lu "
                            "must be at least 1 in both directions",
                            roicopy_esc(arg), (unsigned long)r.x,
                            (unsigned long)r.y);
    *sx = r.x;
    *sy = r.y;
    return 0;
}

int roicopy_tiles_add_roi(geom_rect **rois, size_t *n, const geom_rect *r)
{
    /* grows by doubling: a capacity of each power of two */
    if ((*n & (*n - 1)) == 0) {
        size_t cap = *n ? 2 * *n : 1;
        geom_rect *g = (geom_rect *)realloc(*rois, cap * sizeof *g);
        if (!g)
            return -1;
        *rois = g;
    }
    (*rois)[(*n)++] = *r;
    return 0;
}

/* ---- the regions ------------------------------------------------------------ */

/* The grid of --tiles: tiles at (i*SX, j*SY) that fit whole; the partial
 * tiles of the last column and row (those that start inside the image but
 * end past its edge) are dropped and counted. */
static int make_grid(roicopy_tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    size_t W = tp->in.width, H = tp->in.height, i, j, k;
    size_t started_c, started_r;
    if (rq->tile_w > W || rq->tile_h > H)
        return roicopy_fail(RC_USAGE, rq->input, "tile %lux%lu is larger than "
                            "the %lux%lu image", (unsigned long)rq->tile_w,
                            (unsigned long)rq->tile_h, (unsigned long)W,
                            (unsigned long)H);
    tp->cols = (W - rq->tile_w) / rq->step_x + 1;
    tp->rows = (H - rq->tile_h) / rq->step_y + 1;
    started_c = (W - 1) / rq->step_x + 1;
    started_r = (H - 1) / rq->step_y + 1;
    if (tp->cols > TILES_MAX / tp->rows)
        return roicopy_fail(RC_USAGE, rq->input, "--tiles %lux%lu+%lu+%lu "
                            "makes %lux%lu tiles, more than %lu",
                            (unsigned long)rq->tile_w,
                            (unsigned long)rq->tile_h,
                            (unsigned long)rq->step_x,
                            (unsigned long)rq->step_y,
                            (unsigned long)tp->cols, (unsigned long)tp->rows,
                            TILES_MAX);
    tp->n = tp->cols * tp->rows;
    tp->dropped = started_c * started_r - tp->n;
    tp->t = (roicopy_tile *)calloc(tp->n, sizeof *tp->t);
    if (!tp->t)
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    for (j = k = 0; j < tp->rows; ++j)
        for (i = 0; i < tp->cols; ++i, ++k) {
            tp->t[k].r.x = i * rq->step_x;
            tp->t[k].r.y = j * rq->step_y;
            tp->t[k].r.width = rq->tile_w;
            tp->t[k].r.height = rq->tile_h;
        }
    return 0;
}

/* --roi repeated (or none: the whole image): each checked, every problem
 * reported. */
static int take_rois(roicopy_tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    size_t i;
    int worst = 0, rc;
    if (rq->nrois > TILES_MAX)
        return roicopy_fail(RC_USAGE, NULL, "%lu ROIs, more than %lu",
                            (unsigned long)rq->nrois, TILES_MAX);
    tp->n = rq->nrois ? rq->nrois : 1;
    tp->t = (roicopy_tile *)calloc(tp->n, sizeof *tp->t);
    if (!tp->t)
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    if (!rq->nrois) {
        tp->t[0].r.width = tp->in.width;
        tp->t[0].r.height = tp->in.height;
        return 0;
    }
    for (i = 0; i < rq->nrois; ++i) {
        tp->t[i].r = rq->rois[i];
        rc = roicopy_check_rect(rq->input, &tp->in, &rq->rois[i], "ROI");
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* ---- outputs ---------------------------------------------------------------- */

/* The input's last path component without its extension. */
static void input_stem(const char *input, char *buf, size_t n)
{
    const char *s = strrchr(input, '/'), *base = s ? s + 1 : input, *dot;
    size_t keep = strlen(base);
    dot = strrchr(base, '.');
    if (dot && dot != base)
        keep = (size_t)(dot - base);
    (void)snprintf(buf, n, "%.*s", (int)keep, base);
}

static int digits(size_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        ++d;
    }
    return d;
}

/* v in decimal, zero-padded to `width` digits (at most 20). */
static const char *padded(char *buf, size_t v, int width)
{
    int k = width > 20 ? 20 : width;
    buf[k] = '\0';
    while (k-- > 0) {
        buf[k] = (char)('0' + v % 10);
        v /= 10;
    }
    return buf;
}

/* The format of the outputs: --format; else for --stack FILE its
 * extension; else the input's.  A stack must be netpbm (pamsplit splits
 * on the headers). */
static int choose_format(roicopy_tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    int rc;
    tp->to = rq->format;
    if (!tp->to && rq->stack && strcmp(rq->stack, "-") != 0 &&
        (rc = roicopy_output_format(rq->stack, &tp->to)) != 0)
        return rc;
    if (!tp->to)
        tp->to = tp->in.format;
    if (rq->stack && tp->to != IMAGE_PGM && tp->to != IMAGE_PPM &&
        tp->to != IMAGE_PAM)
        return roicopy_fail(RC_USAGE, rq->stack, "--stack writes one netpbm "
                            "stream (pgm, ppm or pam), not %s (from %s): %s",
                            image_format_name(tp->to),
                            rq->format ? "--format"
                            : tp->to != tp->in.format ? "the extension"
                                                      : "the input",
                            tp->to == IMAGE_RAW
                                ? "raw images have no header to split on"
                                : "write PNG or TIFF tiles with -o DIR, one "
                                  "file each");
    return 0;
}

/* Headers and names of every region, and the checks of every output. */
static int plan_outputs(roicopy_tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    char err[IMAGE_ERR_MAX], stem[PATH_MAX], idx[24];
    size_t i, len;
    int width = digits(tp->n - 1), rc, worst = 0;
    if ((rc = choose_format(tp)) != 0)
        return rc;
    for (i = 0; i < tp->n; ++i)
        if (image_output_header(&tp->in, tp->t[i].r.width, tp->t[i].r.height,
                                tp->to, &tp->t[i].hdr, err, sizeof err)) {
            size_t k = strlen(image_format_name(tp->to));
            return roicopy_fail(RC_USAGE, rq->stack ? rq->stack : rq->outdir,
                                "%.*s (from %s)%s", (int)k, err,
                                rq->format ? "--format"
                                : rq->stack && tp->to != tp->in.format
                                    ? "the extension"
                                    : "the input",
                                err + k);
        }
    if (rq->stack) /* "-" too: standard output must be open for writing */
        return roicopy_check_output_path(rq->stack, rq->input);
    if (roicopy_check_outdir(rq->outdir, &tp->made_dir) != 0)
        return RC_OUTPUT;
    input_stem(rq->input, stem, sizeof stem);
    for (i = 0; i < tp->n; ++i) {
        len = strlen(rq->outdir) + strlen(stem) + 32;
        tp->t[i].out = (char *)malloc(len);
        if (!tp->t[i].out)
            return roicopy_fail(RC_USAGE, NULL, "out of memory");
        (void)snprintf(tp->t[i].out, len, "%s/%s-%s.%s", rq->outdir, stem,
                       padded(idx, i, width), image_format_ext(tp->to));
        /* In a directory still to be made every output is new: only its
         * name can be checked, and is, before the directory is made. */
        rc = tp->made_dir ? roicopy_check_output_name(tp->t[i].out)
                          : roicopy_check_output_path(tp->t[i].out, rq->input);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* Every region is held at once: the dense batch on the GPU and in pinned
 * host memory, beside the image (pinned too).  A request whose bytes pass
 * this machine's memory (overlapping tiles of a small, well-compressed
 * PNG: 16000x16000+1+1 of a 16384x16384 image is 148225 tiles of 256 MB)
 * is refused here, before the GPU, not by cudaMalloc or cudaHostAlloc
 * (exit 5) after the image was read, nor by pinning most of the memory. */
static int check_batch_size(const roicopy_tiles_plan *tp)
{
    unsigned long long batch = 0, b, mem = roicopy_memory_bytes();
    size_t i;
    int over = 0;
    if (mem == 0)
        return 0; /* unknown: cudaHostAlloc will say */
    for (i = 0; i < tp->n && !over; ++i) {
        /* width x pixel bytes is at most a row of the image (2^31) */
        b = (unsigned long long)tp->t[i].r.width * tp->in.pixel_bytes *
            tp->t[i].r.height;
        over = b > ULLONG_MAX - batch;
        batch += over ? 0 : b;
    }
    if (!over && batch <= mem && tp->in.total_bytes <= mem - batch)
        return 0;
    if (over)
        return roicopy_fail(RC_USAGE, tp->rq->input, "the %lu regions "
                            "come to more than 2^64 bytes, held at once on "
                            "the GPU and in pinned host memory: cut fewer "
                            "or smaller regions", (unsigned long)tp->n);
    return roicopy_fail(RC_USAGE, tp->rq->input, "the %lu region%s come%s "
                        "to %llu bytes, held at once on the GPU and, with "
                        "the image's %llu, in pinned host memory: more than "
                        "this machine's %llu bytes of memory; cut fewer or "
                        "smaller regions", (unsigned long)tp->n,
                        tp->n == 1 ? "" : "s", tp->n == 1 ? "s" : "", batch,
                        (unsigned long long)tp->in.total_bytes, mem);
}

static void say_dropped(const roicopy_tiles_plan *tp)
{
    if (tp->rq->verbose && tp->rq->tiles_given)
        fprintf(stderr, "roicopy: %s: %lu partial tile%s dropped (the grid "
                "is %lux%lu whole tiles)\n", roicopy_esc(tp->rq->input),
                (unsigned long)tp->dropped, tp->dropped == 1 ? "" : "s",
                (unsigned long)tp->cols, (unsigned long)tp->rows);
}

/* ---- writing ------------------------------------------------------------------ */

/* The regions of a stack, one image after another, each through its
 * codec as a single output is written. */
typedef struct stack_write {
    const roicopy_tiles_plan *tp;
    const unsigned char *batch;
    const size_t *off;
} stack_write;

static int write_regions(int fd, void *ctx, char *err, size_t errsz)
{
    const stack_write *w = (const stack_write *)ctx;
    size_t i;
    for (i = 0; i < w->tp->n; ++i) {
        const image_header *h = &w->tp->t[i].hdr;
        if (image_write_fd(fd, h, w->batch + w->off[i], h->row_bytes, err,
                           errsz))
            return -1;
    }
    return 0;
}

/* --stack FILE: every region into one netpbm stream, through the output
 * module as a single output (a temporary file synced and renamed over
 * FILE; "-", descriptors, FIFOs and character devices written in place,
 * as the plan checked them: plan_outputs). */
static int write_stack(const roicopy_tiles_plan *tp,
                       const unsigned char *batch, const size_t *off)
{
    const char *path = tp->rq->stack;
    char err[IMAGE_ERR_MAX];
    stack_write w;
    w.tp = tp;
    w.batch = batch;
    w.off = off;
    if (output_write(path, write_regions, &w, err, sizeof err))
        return roicopy_fail(RC_OUTPUT, path, "%s", err);
    return RC_OK;
}

/* -o DIR: one file a region, with the batch's progress bar. */
static int write_files(const roicopy_tiles_plan *tp, const unsigned char *batch,
                       const size_t *off)
{
    roicopy_plan bar;
    char err[IMAGE_ERR_MAX];
    size_t i;
    memset(&bar, 0, sizeof bar);
    bar.nframes = tp->n;
    bar.progress = tp->n > 1 && !tp->rq->quiet && isatty(2);
    for (i = 0; i < tp->n; ++i) {
        const roicopy_tile *t = &tp->t[i];
        err[0] = '\0';
        if (image_write_atomic(t->out, &t->hdr, batch + off[i], t->hdr.row_bytes,
                               err, sizeof err))
            return roicopy_fail(RC_OUTPUT, t->out, "%s", err);
        roicopy_progress(&bar, i + 1);
    }
    return RC_OK;
}

/* --verify: every region against the CPU crop of the image; nothing is
 * written when one differs.  The test build's hook (frames.h) may flip
 * the last byte of the last region first. */
static int verify_all(const roicopy_tiles_plan *tp, const cuxfer_view *img,
                      unsigned char *batch, const size_t *off)
{
    image_diff d;
    size_t i;
    roicopy_test_corrupt(&batch[off[tp->n] - 1]);
    if (!tp->rq->verify)
        return RC_OK;
    for (i = 0; i < tp->n; ++i) {
        const roicopy_tile *t = &tp->t[i];
        const unsigned char *crop = (const unsigned char *)img->ptr +
                                    t->r.y * img->pitch +
                                    t->r.x * tp->in.pixel_bytes;
        if (image_compare(&t->hdr, crop, img->pitch, batch + off[i],
                          t->hdr.row_bytes, &d))
            return roicopy_fail(RC_DIFF, tp->rq->input,
                                "--verify: region %lu (%lux%lu+%lu+%lu): "
                                "first difference at x=%lu y=%lu channel "
                                "%lu: expected %.9g, got %.9g; nothing "
                                "written", (unsigned long)i,
                                (unsigned long)t->r.width,
                                (unsigned long)t->r.height,
                                (unsigned long)t->r.x, (unsigned long)t->r.y,
                                (unsigned long)d.x, (unsigned long)d.y,
                                (unsigned long)d.channel, d.expected, d.got);
    }
    return RC_OK;
}

/* ---- the GPU ---------------------------------------------------------------- */

/* Every CUDA failure is told about the input (devices.h's GPU_TRY). */
#define TILES_TRY(expr) GPU_TRY(tp->rq->input, expr)

/* Read the image into pinned memory, gather every region into one dense
 * device buffer with cuxfer_rois_copy_async, bring the batch back in one
 * copy, verify, write. */
static int run_gpu(roicopy_tiles_plan *tp)
{
    cuxfer_view img, dense;
    cuxfer_roi *rois = NULL;
    cuxfer_rois plan;
    cudaStream_t s = NULL;
    size_t *off = NULL, i;
    void *dbuf = NULL, *batch = NULL;
    char err[IMAGE_ERR_MAX] = "";
    int rc = RC_OK, have_plan = 0;
    memset(&img, 0, sizeof img);
    memset(&plan, 0, sizeof plan);
    rois = (cuxfer_roi *)malloc(tp->n * sizeof *rois);
    off = (size_t *)malloc((tp->n + 1) * sizeof *off);
    if (!rois || !off) {
        rc = roicopy_fail(RC_USAGE, NULL, "out of memory");
        goto done;
    }
    for (i = 0; i < tp->n; ++i)
        rois[i] = roicopy_roi(&tp->t[i].r, tp->epp);
    TILES_TRY(cuxfer_rois_offsets(rois, tp->n, tp->elem, off));
    TILES_TRY(cudaSetDevice(tp->rq->device));
    TILES_TRY(cuxfer_view_alloc_host(&img, tp->in.width * tp->epp, tp->in.height,
                                     tp->elem, 0));
    if (image_read_pixels(tp->rq->input, &tp->in, img.ptr, img.pitch, err,
                          sizeof err)) {
        rc = roicopy_fail(RC_INPUT, tp->rq->input, "%s", err);
        goto done;
    }
    TILES_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    TILES_TRY(cuxfer_device_alloc(&dbuf, off[tp->n], 1));
    TILES_TRY(cuxfer_host_alloc(&batch, off[tp->n], 1, 0));
    TILES_TRY(cuxfer_view_wrap(&dense, dbuf, off[tp->n], off[tp->n] / tp->elem,
                               1, tp->elem));
    TILES_TRY(cuxfer_rois_create(&plan, NULL));
    have_plan = 1;
    TILES_TRY(cuxfer_rois_copy_async(&plan, CUXFER_ROIS_H2D, &img, rois, tp->n,
                                     &dense, s));
    TILES_TRY(cuxfer_copy_async(batch, dbuf, off[tp->n], s));
    TILES_TRY(cudaStreamSynchronize(s));
    rc = verify_all(tp, &img, (unsigned char *)batch, off);
    if (rc == RC_OK)
        rc = tp->rq->stack ? write_stack(tp, (const unsigned char *)batch, off)
                           : write_files(tp, (const unsigned char *)batch, off);
done:
    /* After a failure part of the copies may still be queued: nothing they
     * read or write is freed before they end. */
    if (s && cudaStreamSynchronize(s) != cudaSuccess)
        (void)cudaGetLastError();
    if (have_plan)
        (void)cuxfer_rois_destroy(&plan);
    if (s)
        (void)cudaStreamDestroy(s);
    if (dbuf)
        (void)cuxfer_device_free(dbuf);
    if (batch)
        (void)cuxfer_host_free(batch);
    if (img.ptr)
        (void)cuxfer_view_free(&img);
    free(rois);
    free(off);
    return rc;
}

/* ---- main ------------------------------------------------------------------- */

int roicopy_tiles_main(const roicopy_tiles_request *rq)
{
    roicopy_tiles_plan tp;
    char err[IMAGE_ERR_MAX] = "";
    size_t i;
    int rc;
    memset(&tp, 0, sizeof tp);
    tp.rq = rq;
    if (image_parse_input(rq->input, rq->raw, rq->page, &tp.in, err,
                          sizeof err))
        return roicopy_fail(RC_INPUT, rq->input, "%s", err);
    /* as choose_elements in roicopy.c: views hold elements of at most
     * CUXFER_ELEM_MAX bytes, wider pixels travel as one element a sample */
    tp.elem = tp.in.pixel_bytes <= CUXFER_ELEM_MAX ? tp.in.pixel_bytes : tp.in.bytes;
    tp.epp = tp.in.pixel_bytes / tp.elem;
    rc = rq->tiles_given ? make_grid(&tp) : take_rois(&tp);
    if (rc == 0)
        rc = check_batch_size(&tp);
    if (rc == 0)
        rc = plan_outputs(&tp);
    if (rc == 0) {
        say_dropped(&tp);
        if (rq->dry_run && rq->json)
            roicopy_report_tiles_json(&tp);
        else if (rq->dry_run)
            roicopy_report_tiles(&tp);
        else if (!tp.made_dir || (rc = roicopy_make_outdir(rq->outdir)) == 0)
            rc = run_gpu(&tp);
    }
    for (i = 0; tp.t && i < tp.n; ++i)
        free(tp.t[i].out);
    free(tp.t);
    return rc;
}
