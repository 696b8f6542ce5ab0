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
 * written straight from its place in the batch.
 */
/* fchmod() and mkstemp() are XSI/POSIX.1-2008. */
#define _XOPEN_SOURCE 700

#include "roicopy.h"
#include "checks.h"
#include "devices.h"

#include <cuxfer.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* The most regions one run takes (names, offsets and the plan's arrays
 * stay a few tens of MiB). */
#define TILES_MAX 1000000UL

typedef struct tile {
    geom_rect r;       /* in pixels, inside the input */
    char *out;         /* -o: DIR/NAME-INDEX.EXT; NULL with --stack */
    image_header hdr;  /* the region's output header */
} tile;

typedef struct tiles_plan {
    const roicopy_tiles_request *rq;
    image_header in;
    image_format to;   /* the outputs' format */
    tile *t;
    size_t n;
    size_t cols, rows, dropped; /* --tiles: the grid and the partial tiles */
    size_t elem, epp;  /* view element bytes, elements per pixel */
    int made_dir;      /* -o DIR does not exist: made before the copy */
} tiles_plan;

/* ---- options -------------------------------------------------------------- */

int roicopy_tiles_option(const char *arg, size_t *w, size_t *h, size_t *sx,
                         size_t *sy)
{
    char err[GEOM_ERR_MAX];
    geom_rect r;
    if (geom_parse_rect(arg, &r, err, sizeof err))
        return roicopy_fail(RC_USAGE, NULL, "--tiles: %s", err);
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
static int make_grid(tiles_plan *tp)
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
    tp->t = (tile *)calloc(tp->n, sizeof *tp->t);
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
static int take_rois(tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    size_t i;
    int worst = 0, rc;
    if (rq->nrois > TILES_MAX)
        return roicopy_fail(RC_USAGE, NULL, "%lu ROIs, more than %lu",
                            (unsigned long)rq->nrois, TILES_MAX);
    tp->n = rq->nrois ? rq->nrois : 1;
    tp->t = (tile *)calloc(tp->n, sizeof *tp->t);
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
static int choose_format(tiles_plan *tp)
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
static int plan_outputs(tiles_plan *tp)
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
    if (rq->stack)
        return image_output_fd(rq->stack) != 1
                   ? roicopy_check_output_path(rq->stack, rq->input)
                   : 0;
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
        /* In a directory still to be made every output is new. */
        rc = tp->made_dir ? 0
                          : roicopy_check_output_path(tp->t[i].out, rq->input);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* ---- the dry run -------------------------------------------------------------- */

static void say_dropped(const tiles_plan *tp)
{
    if (tp->rq->verbose && tp->rq->tiles_given)
        fprintf(stderr, "roicopy: %s: %lu partial tile%s dropped (the grid "
                "is %lux%lu whole tiles)\n", roicopy_esc(tp->rq->input),
                (unsigned long)tp->dropped, tp->dropped == 1 ? "" : "s",
                (unsigned long)tp->cols, (unsigned long)tp->rows);
}

static void print_plan(const tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    size_t i;
    printf("input:   %s (%s, %lux%lu, %lu byte%s a pixel)\n",
           roicopy_esc(rq->input), image_format_name(tp->in.format),
           (unsigned long)tp->in.width, (unsigned long)tp->in.height,
           (unsigned long)tp->in.pixel_bytes,
           tp->in.pixel_bytes == 1 ? "" : "s");
    if (rq->tiles_given)
        printf("tiles:   %lu of %lux%lu, step %lu,%lu (%lu column%s, %lu "
               "row%s; %lu partial tile%s dropped)\n", (unsigned long)tp->n,
               (unsigned long)rq->tile_w, (unsigned long)rq->tile_h,
               (unsigned long)rq->step_x, (unsigned long)rq->step_y,
               (unsigned long)tp->cols, tp->cols == 1 ? "" : "s",
               (unsigned long)tp->rows, tp->rows == 1 ? "" : "s",
               (unsigned long)tp->dropped, tp->dropped == 1 ? "" : "s");
    else
        printf("rois:    %lu\n", (unsigned long)tp->n);
    if (rq->stack)
        printf("stack:   %s (%lu %s image%s%s)\n", roicopy_esc(rq->stack),
               (unsigned long)tp->n, image_format_name(tp->to),
               tp->n == 1 ? "" : "s",
               image_output_fd(rq->stack) >= 0
                   ? ", written into its descriptor, never replaced"
                   : "");
    else
        printf("output:  %s (%lu %s file%s%s)\n", roicopy_esc(rq->outdir),
               (unsigned long)tp->n, image_format_name(tp->to),
               tp->n == 1 ? "" : "s",
               tp->made_dir ? "; does not exist: made, as mkdir -p, before "
                              "the copy"
                            : "");
    for (i = 0; i < tp->n; ++i) {
        const geom_rect *r = &tp->t[i].r;
        printf("%-8lu %lux%lu+%lu+%lu", (unsigned long)i,
               (unsigned long)r->width, (unsigned long)r->height,
               (unsigned long)r->x, (unsigned long)r->y);
        if (tp->t[i].out)
            printf(" -> %s", roicopy_esc(tp->t[i].out));
        putchar('\n');
    }
}

static void print_json(const tiles_plan *tp)
{
    const roicopy_tiles_request *rq = tp->rq;
    size_t i;
    printf("{\"input\":");
    image_json_string(stdout, rq->input);
    printf(",\"width\":%lu,\"height\":%lu,\"format\":\"%s\",\"count\":%lu",
           (unsigned long)tp->in.width, (unsigned long)tp->in.height,
           image_format_name(tp->in.format), (unsigned long)tp->n);
    if (rq->tiles_given)
        printf(",\"grid\":{\"tile_width\":%lu,\"tile_height\":%lu,"
               "\"step_x\":%lu,\"step_y\":%lu,\"columns\":%lu,\"rows\":%lu,"
               "\"dropped\":%lu}", (unsigned long)rq->tile_w,
               (unsigned long)rq->tile_h, (unsigned long)rq->step_x,
               (unsigned long)rq->step_y, (unsigned long)tp->cols,
               (unsigned long)tp->rows, (unsigned long)tp->dropped);
    else
        printf(",\"grid\":null");
    printf(",\"output_format\":\"%s\",\"stack\":", image_format_name(tp->to));
    if (rq->stack)
        image_json_string(stdout, rq->stack);
    else
        printf("null");
    printf(",\"output_dir\":");
    if (rq->outdir)
        image_json_string(stdout, rq->outdir);
    else
        printf("null");
    printf(",\"mkdir\":%s", tp->made_dir ? "true" : "false");
    printf(",\"regions\":[");
    for (i = 0; i < tp->n; ++i) {
        const geom_rect *r = &tp->t[i].r;
        printf("%s{\"index\":%lu,\"x\":%lu,\"y\":%lu,\"width\":%lu,"
               "\"height\":%lu,\"output\":", i ? "," : "", (unsigned long)i,
               (unsigned long)r->x, (unsigned long)r->y,
               (unsigned long)r->width, (unsigned long)r->height);
        if (tp->t[i].out)
            image_json_string(stdout, tp->t[i].out);
        else
            printf("null");
        putchar('}');
    }
    printf("]}\n");
}

/* ---- writing ------------------------------------------------------------------ */

/* One netpbm image (the header image.c writes, rows tightly packed in
 * memory; 16-bit samples swapped when memory holds them little-endian). */
static int put_image(FILE *f, const image_header *h, const unsigned char *px)
{
    size_t y, i;
    unsigned char *row = NULL;
    int swap = h->bytes == 2 && !h->big_endian;
    if (h->format == IMAGE_PAM) {
        if (fprintf(f, "P7\nWIDTH %lu\nHEIGHT %lu\nDEPTH %lu\nMAXVAL %u\n"
                    "%s%s%sENDHDR\n", (unsigned long)h->width,
                    (unsigned long)h->height, (unsigned long)h->channels,
                    h->maxval, h->tupltype[0] ? "TUPLTYPE " : "", h->tupltype,
                    h->tupltype[0] ? "\n" : "") < 0)
            return -1;
    } else if (fprintf(f, "P%c\n%lu %lu\n%u\n",
                       h->format == IMAGE_PGM ? '5' : '6',
                       (unsigned long)h->width, (unsigned long)h->height,
                       h->maxval) < 0) {
        return -1;
    }
    if (!swap)
        return fwrite(px, 1, h->total_bytes, f) == h->total_bytes ? 0 : -1;
    if (!(row = (unsigned char *)malloc(h->row_bytes)))
        return -1;
    for (y = 0; y < h->height; ++y, px += h->row_bytes) {
        for (i = 0; i + 1 < h->row_bytes; i += 2) {
            row[i] = px[i + 1];
            row[i + 1] = px[i];
        }
        if (fwrite(row, 1, h->row_bytes, f) != h->row_bytes) {
            free(row);
            return -1;
        }
    }
    free(row);
    return 0;
}

static int put_all(FILE *f, const tiles_plan *tp, const unsigned char *batch,
                   const size_t *off)
{
    size_t i;
    for (i = 0; i < tp->n; ++i)
        if (put_image(f, &tp->t[i].hdr, batch + off[i]))
            return -1;
    return fflush(f) == 0 ? 0 : -1;
}

/* --stack FILE: every region into a temporary file beside FILE, synced
 * and renamed over it (as image_write_atomic does for one image); "-" is
 * standard output. */
static int write_stack(const tiles_plan *tp, const unsigned char *batch,
                       const size_t *off)
{
    const char *path = tp->rq->stack, *slash = strrchr(path, '/');
    char tmp[PATH_MAX + 32];
    struct stat st;
    mode_t mode, um;
    FILE *f;
    const char *name = NULL;
    int fd, bad, saved, slot = -1;
    int n = image_output_fd(path);
    if (n == 1)
        return put_all(stdout, tp, batch, off)
                   ? roicopy_fail(RC_OUTPUT, path, "cannot write: %s",
                                  strerror(errno))
                   : 0;
    if (n >= 0) { /* /dev/stderr, /dev/fd/N: into it, never renamed over */
        fd = dup(n);
        if (fd < 0 || !(f = fdopen(fd, "wb"))) {
            saved = errno;
            if (fd >= 0)
                close(fd);
            return roicopy_fail(RC_OUTPUT, path, "%s", strerror(saved));
        }
        bad = put_all(f, tp, batch, off) != 0;
        saved = errno;
        if (fclose(f) != 0 && !bad) {
            bad = 1;
            saved = errno;
        }
        return bad ? roicopy_fail(RC_OUTPUT, path, "cannot write: %s",
                                  saved ? strerror(saved) : "write error")
                   : 0;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return roicopy_fail(RC_OUTPUT, path, "--stack writes a regular file "
                            "(replaced), this is %s",
                            image_file_type((unsigned)st.st_mode));
    um = umask(0);
    (void)umask(um);
    mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~um);
    if (slash)
        (void)snprintf(tmp, sizeof tmp, "%.*s/.stack.XXXXXX",
                       (int)(slash - path), path);
    else
        (void)snprintf(tmp, sizeof tmp, ".stack.XXXXXX");
    /* tracked: a signal while the stack is written removes the file */
    if ((fd = image_mkstemp_tracked(tmp, &name, &slot)) < 0)
        return roicopy_fail(RC_OUTPUT, path, "cannot create a temporary "
                            "file: %s", strerror(errno));
    if (!(f = fdopen(fd, "wb"))) {
        saved = errno;
        close(fd);
        (void)unlink(name);
        image_temp_release(slot);
        return roicopy_fail(RC_OUTPUT, path, "%s", strerror(saved));
    }
    errno = 0;
    bad = fchmod(fd, mode) != 0 || put_all(f, tp, batch, off) != 0 ||
          fsync(fd) != 0;
    saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad || rename(name, path) != 0) {
        saved = bad ? saved : errno;
        (void)unlink(name);
        image_temp_release(slot);
        return roicopy_fail(RC_OUTPUT, path, "cannot write: %s",
                            saved ? strerror(saved) : "write error");
    }
    image_temp_release(slot);
    /* The rename on disk too, as image_write_atomic does: the directory. */
    if (slash)
        (void)snprintf(tmp, sizeof tmp, "%.*s",
                       slash == path ? 1 : (int)(slash - path), path);
    else
        (void)snprintf(tmp, sizeof tmp, ".");
    if ((fd = open(tmp, O_RDONLY)) >= 0) {
        (void)fsync(fd); /* best effort, as there: the data is synced */
        close(fd);
    }
    return 0;
}

/* -o DIR: one file a region, with the batch's progress bar. */
static int write_files(const tiles_plan *tp, const unsigned char *batch,
                       const size_t *off)
{
    roicopy_plan bar;
    char err[IMAGE_ERR_MAX];
    size_t i;
    memset(&bar, 0, sizeof bar);
    bar.nframes = tp->n;
    bar.progress = tp->n > 1 && !tp->rq->quiet && isatty(2);
    for (i = 0; i < tp->n; ++i) {
        const tile *t = &tp->t[i];
        err[0] = '\0';
        if (image_write_atomic(t->out, &t->hdr, batch + off[i], t->hdr.row_bytes,
                               err, sizeof err)) {
            if (bar.progress)
                fputc('\n', stderr);
            return roicopy_fail(RC_OUTPUT, t->out, "%s", err);
        }
        roicopy_progress(&bar, i + 1);
    }
    return RC_OK;
}

/* --verify: every region against the CPU crop of the image; nothing is
 * written when one differs.  ROICOPY_TEST_CORRUPT=1 (a test hook, as for
 * single ROIs) flips the last byte of the last region first. */
static int verify_all(const tiles_plan *tp, const cuxfer_view *img,
                      unsigned char *batch, const size_t *off)
{
    const char *e = getenv("ROICOPY_TEST_CORRUPT");
    image_diff d;
    size_t i;
    if (e && *e == '1')
        batch[off[tp->n] - 1] ^= 0x5a;
    if (!tp->rq->verify)
        return RC_OK;
    for (i = 0; i < tp->n; ++i) {
        const tile *t = &tp->t[i];
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
static int run_gpu(tiles_plan *tp)
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
    tiles_plan tp;
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
        rc = plan_outputs(&tp);
    if (rc == 0) {
        say_dropped(&tp);
        if (rq->dry_run && rq->json)
            print_json(&tp);
        else if (rq->dry_run)
            print_plan(&tp);
        else if (!tp.made_dir || (rc = roicopy_make_outdir(rq->outdir)) == 0)
            rc = run_gpu(&tp);
    }
    for (i = 0; tp.t && i < tp.n; ++i)
        free(tp.t[i].out);
    free(tp.t);
    return rc;
}
