/* SPDX-License-Identifier: MIT */
/*
 * report.c - what roicopy prints on standard output (report.h): the plan
 * of --dry-run (single ROIs and --tiles), and --timing and --json after
 * the copies.  It only prints what it is given; the plans are made by
 * roicopy.c and roicopy-tiles.c, the measurements by roicopy-gpu.c,
 * roicopy-ring.c and timing.c.
 */
#include "report.h"
#include "close-stdout.h"

#include <cuxfer.h>

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- the plan (--dry-run) ------------------------------------------------ */

/* A label of the plan, padded like the fixed ones ("band 3:   "). */
static void print_label(const char *what, size_t i)
{
    char label[32];
    (void)snprintf(label, sizeof label, "%s %lu:", what, (unsigned long)i);
    printf("%-10s", label);
}

/* With --devices: the device of each band, then each device's share. */
static void print_band_devices(const roicopy_plan *p, const roicopy_frame *f,
                               size_t n)
{
    size_t row = f->roi.width * f->in.pixel_bytes, i, y0, y1;
    int d;
    for (i = 0; i < n; ++i) {
        roicopy_band_rows(f->roi.height, n, i, &y0, &y1);
        print_label("band", i);
        printf("rows %lu-%lu on device %d (%lu bytes each way)\n",
               (unsigned long)y0, (unsigned long)(y1 - 1),
               roicopy_device_of(p, i), (unsigned long)((y1 - y0) * row));
    }
    for (d = 0; d < p->ndevices; ++d) {
        size_t bands = 0, rows = 0;
        for (i = (size_t)d; i < n; i += (size_t)p->ndevices) {
            roicopy_band_rows(f->roi.height, n, i, &y0, &y1);
            ++bands;
            rows += y1 - y0;
        }
        print_label("device", (size_t)p->devices[d]);
        if (bands == 0)
            printf("no band (the ROI has fewer rows than there are "
                   "devices)\n");
        else
            printf("%lu band%s, %lu row%s, %lu bytes each way\n",
                   (unsigned long)bands, bands == 1 ? "" : "s",
                   (unsigned long)rows, rows == 1 ? "" : "s",
                   (unsigned long)(rows * row));
    }
}

static void print_bands(const roicopy_plan *p, const roicopy_frame *f)
{
    size_t n = (size_t)roicopy_band_count(p, f), i, y0, y1;
    printf("bands:    %lu (up one stream, down another):", (unsigned long)n);
    for (i = 0; i < n; ++i) {
        roicopy_band_rows(f->roi.height, n, i, &y0, &y1);
        printf(" rows %lu-%lu", (unsigned long)y0, (unsigned long)(y1 - 1));
    }
    printf("\n");
    if (p->devices_given)
        print_band_devices(p, f, n);
}

/* How an output is written, for the plan: "" (a regular file, replaced
 * atomically), or how else. */
static const char *output_how(const char *out)
{
    static char buf[96];
    struct stat st;
    int n;
    if (!strcmp(out, "-"))
        return ", written to standard output";
    if ((n = image_output_fd(out)) >= 0) {
        (void)snprintf(buf, sizeof buf, ", written into descriptor %d%s, "
                       "never replaced", n, n == 1   ? " (standard output)"
                                            : n == 2 ? " (standard error)"
                                                     : "");
        return buf;
    }
    if (stat(out, &st) == 0 && S_ISCHR(st.st_mode))
        return ", written in place: a character device";
    if (stat(out, &st) == 0 && S_ISFIFO(st.st_mode))
        return ", written in place: a FIFO";
    return "";
}

static void print_frame_plan(const roicopy_plan *p, const roicopy_frame *f)
{
    const image_header *in = &f->in;
    size_t roi_row = f->roi.width * in->pixel_bytes;
    size_t dev_w = p->place ? p->canvas_w : f->roi.width;
    size_t dev_h = p->place ? p->canvas_h : f->roi.height;
    size_t dev_pitch = roicopy_pitch_estimate(dev_w * in->pixel_bytes);
    printf("input:    %s (%s, %lux%lu, %lu channel%s x %lu byte%s%s, maxval "
           "%u%s%s)\n", roicopy_esc(f->input), image_format_name(in->format),
           (unsigned long)in->width, (unsigned long)in->height,
           (unsigned long)in->channels, in->channels == 1 ? "" : "s",
           (unsigned long)in->bytes, in->bytes == 1 ? "" : "s",
           in->is_float ? " float" : "", in->maxval,
           in->tupltype[0] ? ", tupltype " : "", roicopy_esc(in->tupltype));
    printf("roi:      %lux%lu+%lu+%lu\n", (unsigned long)f->roi.width,
           (unsigned long)f->roi.height, (unsigned long)f->roi.x,
           (unsigned long)f->roi.y);
    printf("element:  %lu byte%s (%lu per pixel)\n", (unsigned long)f->elem_size,
           f->elem_size == 1 ? "" : "s",
           (unsigned long)f->elem_per_pixel);
    printf("source:   pitch %lu bytes (the full input row), ROI at byte "
           "offset %lu\n", (unsigned long)in->row_bytes,
           (unsigned long)(f->roi.y * in->row_bytes +
                           f->roi.x * in->pixel_bytes));
    if (p->place)
        printf("canvas:   %lux%lu, ROI placed at %lu,%lu\n",
               (unsigned long)p->canvas_w, (unsigned long)p->canvas_h,
               (unsigned long)p->place_x, (unsigned long)p->place_y);
    printf("device:   pitch %lu bytes (an estimate: cudaMallocPitch decides), "
           "%lu rows\n", (unsigned long)dev_pitch, (unsigned long)dev_h);
    printf("bytes:    %lu each way (%lu bytes x %lu rows), %d time%s\n",
           (unsigned long)(roi_row * f->roi.height), (unsigned long)roi_row,
           (unsigned long)f->roi.height, p->repeat, p->repeat == 1 ? "" : "s");
    if (p->nframes == 1 || p->pageable)
        print_bands(p, f);
    printf("output:   %s (%s%s%s%s)\n", roicopy_esc(f->output),
           image_format_name(f->out.format), f->out.tupltype[0] ? ", " : "",
           roicopy_esc(f->out.tupltype), output_how(f->output));
}

/* With --devices: the device of each ring slot, then each device's share
 * (frame i goes to slot i % slots). */
static void print_slot_devices(const roicopy_plan *p)
{
    size_t slots = (size_t)p->streams, i, k;
    int d;
    for (i = 0; i < slots; ++i) {
        size_t frames = 0;
        for (k = i; k < p->nframes; k += slots)
            ++frames;
        print_label("slot", i);
        printf("device %d, %lu frame%s\n", roicopy_device_of(p, i),
               (unsigned long)frames, frames == 1 ? "" : "s");
    }
    for (d = 0; d < p->ndevices; ++d) {
        size_t nslots = 0, frames = 0, bytes = 0;
        for (i = (size_t)d; i < slots; i += (size_t)p->ndevices)
            ++nslots;
        for (k = 0; k < p->nframes; ++k)
            if ((k % slots) % (size_t)p->ndevices == (size_t)d) {
                ++frames;
                bytes += p->frames[k].out.total_bytes;
            }
        print_label("device", (size_t)p->devices[d]);
        printf("%lu slot%s, %lu frame%s, %lu bytes each way\n",
               (unsigned long)nslots, nslots == 1 ? "" : "s",
               (unsigned long)frames, frames == 1 ? "" : "s",
               (unsigned long)bytes);
    }
}

void roicopy_report_plan(const roicopy_plan *p)
{
    size_t i;
    int ring = p->nframes > 1 && !p->pageable;
    printf("host:     %s\n", p->pageable ? "pageable (malloc)" : "pinned");
    if (ring)
        printf("pipeline: %lu frames through a ring of %d slots, %d "
               "thread%s reading ahead and %d copying and writing\n",
               (unsigned long)p->nframes, p->streams, p->threads,
               p->threads == 1 ? "" : "s", p->threads);
    else if (p->nframes > 1)
        printf("pipeline: %lu frames, one at a time (--pageable: the ring "
               "needs pinned memory)\n", (unsigned long)p->nframes);
    if (ring && p->devices_given)
        print_slot_devices(p);
    if (p->made_dir)
        printf("mkdir:    %s (does not exist: made, as mkdir -p, before "
               "the copy)\n", roicopy_esc(p->made_dir));
    for (i = 0; i < p->nskipped; ++i)
        printf("skip:     %s (exists; --skip-existing)\n",
               roicopy_esc(p->skipped[i]));
    for (i = 0; i < p->nframes; ++i) {
        if (p->nframes > 1)
            printf("frame %lu:", (unsigned long)i);
        if (ring && p->devices_given)
            printf("  slot %lu on device %d",
                   (unsigned long)(i % (size_t)p->streams),
                   roicopy_device_of(p, i % (size_t)p->streams));
        if (p->nframes > 1)
            printf("\n");
        print_frame_plan(p, &p->frames[i]);
    }
}

/* s as a JSON string, or null. */
static void json_string_or_null(const char *s)
{
    if (s)
        image_json_string(stdout, s);
    else
        printf("null");
}

/* --dry-run --json: the plan as one JSON object. */
static void json_frame(const roicopy_plan *p, const roicopy_frame *f,
                       size_t k)
{
    const image_header *in = &f->in;
    size_t dev_w = p->place ? p->canvas_w : f->roi.width;
    size_t dev_h = p->place ? p->canvas_h : f->roi.height;
    size_t roi_row = f->roi.width * in->pixel_bytes, n, i, y0, y1;
    const char *how = output_how(f->output);
    printf("%s\n    {\"input\": ", k ? "," : "");
    image_json_string(stdout, f->input);
    printf(", \"format\": \"%s\", \"width\": %lu, \"height\": %lu, "
           "\"channels\": %lu, \"bytes_per_sample\": %lu, \"float\": %s, "
           "\"maxval\": %u, \"tupltype\": ", image_format_name(in->format),
           (unsigned long)in->width, (unsigned long)in->height,
           (unsigned long)in->channels, (unsigned long)in->bytes,
           in->is_float ? "true" : "false", in->maxval);
    image_json_string(stdout, in->tupltype);
    printf(",\n     \"roi\": {\"width\": %lu, \"height\": %lu, \"x\": %lu, "
           "\"y\": %lu}, \"element_bytes\": %lu, \"elements_per_pixel\": %lu,"
           " \"source_pitch\": %lu, \"roi_offset\": %lu, "
           "\"device_pitch_estimate\": %lu, \"device_rows\": %lu, "
           "\"bytes_each_way\": %lu,\n     \"bands\": [",
           (unsigned long)f->roi.width, (unsigned long)f->roi.height,
           (unsigned long)f->roi.x, (unsigned long)f->roi.y,
           (unsigned long)f->elem_size, (unsigned long)f->elem_per_pixel,
           (unsigned long)in->row_bytes,
           (unsigned long)(f->roi.y * in->row_bytes +
                           f->roi.x * in->pixel_bytes),
           (unsigned long)roicopy_pitch_estimate(dev_w * in->pixel_bytes),
           (unsigned long)dev_h, (unsigned long)(roi_row * f->roi.height));
    n = p->nframes == 1 || p->pageable ? (size_t)roicopy_band_count(p, f) : 0;
    for (i = 0; i < n; ++i) {
        roicopy_band_rows(f->roi.height, n, i, &y0, &y1);
        printf("%s{\"first_row\": %lu, \"rows\": %lu, \"device\": %d}",
               i ? ", " : "", (unsigned long)y0, (unsigned long)(y1 - y0),
               roicopy_device_of(p, i));
    }
    printf("],\n     \"output\": ");
    image_json_string(stdout, f->output);
    printf(", \"output_format\": \"%s\", \"output_tupltype\": ",
           image_format_name(f->out.format));
    image_json_string(stdout, f->out.tupltype);
    printf(", \"written\": \"%s\"}",
           !*how ? "replaced atomically"
           : !strcmp(f->output, "-")         ? "standard output"
           : image_output_fd(f->output) >= 0 ? "into its descriptor"
                                             : "in place");
}

void roicopy_report_plan_json(const roicopy_plan *p)
{
    size_t i;
    int ring = p->nframes > 1 && !p->pageable;
    printf("{\"dry_run\": true, \"host\": \"%s\", \"pipeline\": \"%s\", "
           "\"slots\": %d, \"threads\": %d, \"repeat\": %d, "
           "\"devices\": [",
           p->pageable ? "pageable" : "pinned",
           ring ? "ring" : p->nframes > 1 ? "one at a time" : "bands",
           ring ? p->streams : 0, ring ? p->threads : 0, p->repeat);
    for (i = 0; i < (size_t)p->ndevices; ++i)
        printf("%s%d", i ? ", " : "", p->devices[i]);
    printf("],\n  \"mkdir\": ");
    json_string_or_null(p->made_dir);
    printf(",\n  \"failed\": [");
    for (i = 0; i < p->nfailed; ++i) {
        printf("%s\n    {\"input\": ", i ? "," : "");
        image_json_string(stdout, p->failed[i].input);
        printf(", \"error\": ");
        json_string_or_null(p->failed[i].error);
        printf("}");
    }
    printf("%s],\n  \"skipped\": [", p->nfailed ? "\n  " : "");
    for (i = 0; i < p->nskipped; ++i) {
        printf("%s", i ? ", " : "");
        image_json_string(stdout, p->skipped[i]);
    }
    printf("],\n  \"frames\": [");
    for (i = 0; i < p->nframes; ++i)
        json_frame(p, &p->frames[i], i);
    printf("\n  ]}\n");
}

/* ---- the plan of many regions (--tiles, --roi, --stack) ----------------- */

void roicopy_report_tiles(const roicopy_tiles_plan *tp)
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
               tp->n == 1 ? "" : "s", output_how(rq->stack));
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

void roicopy_report_tiles_json(const roicopy_tiles_plan *tp)
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
    json_string_or_null(rq->stack);
    printf(",\"output_dir\":");
    json_string_or_null(rq->outdir);
    printf(",\"mkdir\":%s", tp->made_dir ? "true" : "false");
    printf(",\"regions\":[");
    for (i = 0; i < tp->n; ++i) {
        const geom_rect *r = &tp->t[i].r;
        printf("%s{\"index\":%lu,\"x\":%lu,\"y\":%lu,\"width\":%lu,"
               "\"height\":%lu,\"output\":", i ? "," : "", (unsigned long)i,
               (unsigned long)r->x, (unsigned long)r->y,
               (unsigned long)r->width, (unsigned long)r->height);
        json_string_or_null(tp->t[i].out);
        putchar('}');
    }
    printf("]}\n");
}

/* ---- times ------------------------------------------------------------- */

void roicopy_stage_add(stage_time *t, float ms)
{
    if (t->sum == 0.0 || ms < t->best)
        t->best = ms;
    t->sum += ms;
}

double roicopy_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void roicopy_trace(const char *what)
{
    static double t0;
    static int on = -1;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    double t = roicopy_now_ms();
    pthread_mutex_lock(&mu);
    if (on < 0) {
        on = getenv("ROICOPY_TRACE") != NULL;
        t0 = t;
    }
    if (on)
        fprintf(stderr, "roicopy: trace: %8.1f ms %s\n", t - t0, what);
    pthread_mutex_unlock(&mu);
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
    print_stage(indent, "total", &t[ST_TOTAL], &t[ST_LINK_BOTH], 2 * bytes, repeat);
}

/* "0,1,2" */
static void print_device_list(FILE *out, const roicopy_plan *p)
{
    int i;
    for (i = 0; i < p->ndevices; ++i)
        fprintf(out, "%s%d", i ? "," : "", p->devices[i]);
}

static void print_timing(const roicopy_plan *p, const roicopy_frame *f,
                         const single_times *r)
{
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
    for (k = 0; p->devices_given && k < p->ndevices; ++k) {
        const part_times *d = &r->parts[k];
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
    json_stage("link_both", &t[ST_LINK_BOTH], 2 * bytes, repeat);
    json_stage("link_h2d", &t[ST_LINK_H2D], bytes, repeat);
    json_stage("link_d2h", &t[ST_LINK_D2H], bytes, repeat);
}

static void print_json(const roicopy_plan *p, const roicopy_frame *f,
                       const single_times *r)
{
    const stage_time *t = r->t;
    int k;
    printf("{\"input\":");
    image_json_string(stdout, f->input);
    printf(",\"output\":");
    image_json_string(stdout, f->output);
    printf(",\"roi\":{\"x\":%lu,\"y\":%lu,\"width\":%lu,\"height\":%lu}",
           (unsigned long)f->roi.x, (unsigned long)f->roi.y,
           (unsigned long)f->roi.width, (unsigned long)f->roi.height);
    printf(",\"elem_size\":%lu,\"src_pitch\":%lu,\"dev_pitch\":%lu,"
           "\"bytes\":%lu,\"streams\":%d,\"repeat\":%d,\"pageable\":%s",
           (unsigned long)f->elem_size, (unsigned long)r->src_pitch,
           (unsigned long)r->dev_pitch, (unsigned long)r->bytes,
           r->nbands, p->repeat, p->pageable ? "true" : "false");
    json_stages(t, r->bytes, p->repeat);
    printf(",\"h2d_vs_link\":%.4f,\"d2h_vs_link\":%.4f",
           t[ST_H2D].best > 0 ? t[ST_LINK_H2D].best / t[ST_H2D].best : 0.0,
           t[ST_D2H].best > 0 ? t[ST_LINK_D2H].best / t[ST_D2H].best : 0.0);
    printf(",\"failed\":%lu,\"skipped\":%lu,\"devices\":[",
           (unsigned long)p->nfailed, (unsigned long)p->nskipped);
    for (k = 0; k < p->ndevices; ++k) {
        const part_times *d = &r->parts[k];
        printf("%s{\"device\":%d,\"bands\":%d,\"bytes\":%lu", k ? "," : "",
               d->device, d->nbands, (unsigned long)d->bytes);
        json_stages(d->t, d->bytes, p->repeat);
        printf("}");
    }
    printf("]}\n");
}

void roicopy_report_single(const roicopy_plan *p, const roicopy_frame *f,
                           const single_times *r)
{
    if (p->timing)
        print_timing(p, f, r);
    if (p->json)
        print_json(p, f, r);
}

/* The end of a run's object that copied nothing: "frames":0, then
 * "failed" (the inputs left out at the checks, and `more` besides) and
 * "skipped". */
static void json_nothing(const roicopy_plan *p, size_t more)
{
    printf("\"frames\":0,\"failed\":%lu,\"skipped\":%lu}\n",
           (unsigned long)(p->nfailed + more), (unsigned long)p->nskipped);
}

void roicopy_report_undecoded(const roicopy_plan *p, const roicopy_frame *f,
                              const char *why)
{
    printf("{\"input\":");
    image_json_string(stdout, f->input);
    printf(",\"output\":");
    image_json_string(stdout, f->output);
    printf(",\"error\":");
    json_string_or_null(why);
    printf(",");
    json_nothing(p, 1);
}

void roicopy_report_nothing(const roicopy_plan *p)
{
    printf("{");
    json_nothing(p, 0);
}

/* Device k's share of the ring: its slots, and the frames those held
 * (frame i went to slot i % slots; slot s lives on roicopy_device_of(p, s),
 * as cuxfer_ring_create put it), with their bytes both ways. */
static void device_share(const roicopy_plan *p, int k, int *slots,
                         size_t *frames, size_t *bytes)
{
    size_t i;
    int s;
    *slots = 0;
    *frames = *bytes = 0;
    for (s = 0; s < p->streams; ++s)
        if (roicopy_device_of(p, (size_t)s) == p->devices[k])
            ++*slots;
    for (i = 0; i < p->nframes; ++i)
        if (roicopy_device_of(p, i % (size_t)p->streams) == p->devices[k]) {
            ++*frames;
            *bytes += 2 * p->frames[i].out.total_bytes;
        }
}

static void ring_devices(const roicopy_plan *p, int json)
{
    size_t frames, bytes;
    int k, slots;
    if (json)
        printf(",\"devices\":[");
    for (k = 0; k < p->ndevices; ++k) {
        device_share(p, k, &slots, &frames, &bytes);
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
void roicopy_report_ring(const roicopy_plan *p, const ring_times *rr)
{
    float span_ms = rr->span_ms, bidir_ms = rr->bidir_ms;
    double wall_ms = rr->wall_ms;
    size_t link_bytes = rr->link_bytes;
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
            ring_devices(p, 0);
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
        printf(",\"failed\":%lu,\"skipped\":%lu",
               (unsigned long)(p->nfailed + rr->undecoded),
               (unsigned long)p->nskipped);
        ring_devices(p, 1);
        printf("}\n");
    }
}

int roicopy_report_close_stdout(int status)
{
    const char *why = close_stdout_failure();
    if (!why)
        return status;
    roicopy_fail(RC_OUTPUT, NULL, "standard output: %s", why);
    return status > RC_OUTPUT ? status : RC_OUTPUT;
}

int roicopy_report_skipped(const roicopy_plan *p, size_t skipped)
{
    if (skipped == 0)
        return RC_OK;
    return roicopy_fail(RC_INPUT, NULL, "--keep-going: %lu of %lu frames "
                        "could not be decoded and were skipped; the other "
                        "%lu were written", (unsigned long)skipped,
                        (unsigned long)p->nframes,
                        (unsigned long)(p->nframes - skipped));
}
