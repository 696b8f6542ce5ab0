/* SPDX-License-Identifier: MIT */
/*
 * roicopy.c - copy regions of interest of image files through the GPU.
 *
 * This file is the CPU half: options, output paths, input headers, ROIs,
 * --dry-run, verification and atomic writes.  Everything a user can get
 * wrong is checked here before roicopy_gpu_run() (roicopy-gpu.c) makes the
 * first CUDA call, so errors read the same on machines with and without a
 * GPU.
 */
/* realpath() is XSI, beyond the project's _POSIX_C_SOURCE. */
#define _XOPEN_SOURCE 700

#include "roicopy.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define MAX_STREAMS 64
#define DEFAULT_RING_SLOTS 3
#define MAX_DEVICE_INDEX 1023

/* What the command line said, before it is checked against the inputs. */
typedef struct options {
    geom_rect roi;
    int roi_given;
    int place_given, canvas_given;
    size_t place_x, place_y, canvas_w, canvas_h;
    unsigned long streams, repeat, device;
    int streams_given, pageable, verify, timing, json, dry_run, quiet;
    int device_given, devices_given;
    unsigned long devices[ROICOPY_MAX_DEVICES]; /* --devices */
    size_t ndevices;
    image_format format;
    image_raw_spec raw;
    int raw_given, depth_given;
    const char *outdir;
    char **args; /* positional arguments */
    int nargs;
} options;

/* ---- messages ----------------------------------------------------------- */

int roicopy_fail(int status, const char *file, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    if (file)
        fprintf(stderr, "roicopy: %s: ", file);
    else
        fprintf(stderr, "roicopy: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

static void usage(FILE *f)
{
    fputs(
        "usage: roicopy [OPTIONS] INPUT OUTPUT\n"
        "       roicopy [OPTIONS] INPUT... -o DIR\n"
        "Copy a region of interest of PGM/PPM/PAM/raw images through the GPU\n"
        "with 2D asynchronous copies.\n"
        "\n"
        "  --roi WxH+X+Y      region to copy (default: the whole image)\n"
        "  --place X,Y        put the ROI at X,Y of a device canvas...\n"
        "  --canvas WxH       ...of this size (both or neither)\n"
        "  --streams N        cut the ROI into N bands on N streams (1..64);\n"
        "                     with several inputs: frames in flight (ring slots)\n"
        "  --pageable         malloc'd host buffers instead of pinned ones\n"
        "  --verify           compare every output with a CPU crop\n"
        "  --repeat K         copy K times, for --timing (several inputs:\n"
        "                     K-1 more passes through the ring, no file I/O)\n"
        "  --timing           per-stage times, GB/s and the raw 1D link\n"
        "  --json             one JSON object per run on stdout\n"
        "  --device N         use CUDA device N (default 0)\n"
        "  --devices LIST     spread bands or ring slots over these devices,\n"
        "                     round robin (0,1 or 0,1,2,3)\n"
        "  --dry-run          print the plan; no GPU needed\n"
        "  --format F         output format: pgm, ppm, pam or raw\n"
        "  --raw WxHxC        inputs are headerless, WxH pixels of C channels\n"
        "  --depth 8|16|32    raw sample size in bits (32 = float; default 8)\n"
        "  -o, --output-dir DIR  write each INPUT's output into DIR\n"
        "  -q, --quiet        no progress bar\n"
        "  -h, --help         this text\n"
        "      --version      print the version\n"
        "Exit status: 0 ok, 1 --verify found a difference, 2 usage, 3 input,\n"
        "4 output, 5 CUDA.  See roicopy(1).\n",
        f);
}

void roicopy_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

size_t roicopy_pitch_estimate(size_t row_bytes)
{
    return (row_bytes + ROICOPY_PITCH_ALIGN - 1) / ROICOPY_PITCH_ALIGN *
           ROICOPY_PITCH_ALIGN;
}

/* ---- option parsing ----------------------------------------------------- */

enum {
    OPT_ROI = 256, OPT_PLACE, OPT_CANVAS, OPT_STREAMS, OPT_PAGEABLE,
    OPT_VERIFY, OPT_REPEAT, OPT_TIMING, OPT_JSON, OPT_DEVICE, OPT_DEVICES,
    OPT_DRY_RUN,
    OPT_FORMAT, OPT_RAW, OPT_DEPTH, OPT_VERSION
};

static const struct option long_options[] = {
    {"roi", required_argument, NULL, OPT_ROI},
    {"place", required_argument, NULL, OPT_PLACE},
    {"canvas", required_argument, NULL, OPT_CANVAS},
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"pageable", no_argument, NULL, OPT_PAGEABLE},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"timing", no_argument, NULL, OPT_TIMING},
    {"json", no_argument, NULL, OPT_JSON},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"raw", required_argument, NULL, OPT_RAW},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"output-dir", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

/* Options that take a number, with their ranges. */
static int number_option(const char *name, const char *arg, unsigned long min,
                         unsigned long max, unsigned long *out)
{
    char err[GEOM_ERR_MAX];
    if (geom_parse_uint(arg, min, max, name, out, err, sizeof err))
        return roicopy_fail(RC_USAGE, NULL, "%s", err);
    return 0;
}

static int geometry_option(int opt, const char *arg, options *o)
{
    char err[GEOM_ERR_MAX];
    int bad = 0;
    switch (opt) {
    case OPT_ROI:
        bad = geom_parse_rect(arg, &o->roi, err, sizeof err);
        o->roi_given = 1;
        break;
    case OPT_PLACE:
        bad = geom_parse_point(arg, &o->place_x, &o->place_y, err, sizeof err);
        o->place_given = 1;
        break;
    case OPT_CANVAS:
        bad = geom_parse_size(arg, &o->canvas_w, &o->canvas_h, err,
                              sizeof err);
        o->canvas_given = 1;
        break;
    case OPT_RAW:
        bad = geom_parse_shape(arg, &o->raw.width, &o->raw.height,
                               &o->raw.channels, err, sizeof err);
        o->raw_given = 1;
        break;
    }
    return bad ? roicopy_fail(RC_USAGE, NULL, "--%s: %s",
                              opt == OPT_ROI     ? "roi"
                              : opt == OPT_PLACE ? "place"
                              : opt == OPT_RAW   ? "raw"
                                                 : "canvas",
                              err)
               : 0;
}

/* --devices LIST: comma-separated device numbers, none twice.  Whether
 * each exists is asked of CUDA later, in roicopy-gpu.c. */
static int devices_option(const char *arg, options *o)
{
    char err[GEOM_ERR_MAX];
    size_t i, j;
    o->devices_given = 1;
    if (geom_parse_list(arg, o->devices, ROICOPY_MAX_DEVICES, &o->ndevices,
                        err, sizeof err))
        return roicopy_fail(RC_USAGE, NULL, "--devices: %s", err);
    for (i = 0; i < o->ndevices; ++i) {
        if (o->devices[i] > MAX_DEVICE_INDEX)
            return roicopy_fail(RC_USAGE, NULL,
                                "--devices: bad list \"%s\": device %lu is "
                                "too large (at most %d)", arg, o->devices[i],
                                MAX_DEVICE_INDEX);
        for (j = 0; j < i; ++j)
            if (o->devices[j] == o->devices[i])
                return roicopy_fail(RC_USAGE, NULL,
                                    "--devices: bad list \"%s\": device %lu "
                                    "is listed twice", arg, o->devices[i]);
    }
    return 0;
}

static int value_option(int opt, const char *arg, options *o)
{
    unsigned long v;
    switch (opt) {
    case OPT_STREAMS:
        o->streams_given = 1;
        return number_option("--streams", arg, 1, MAX_STREAMS, &o->streams);
    case OPT_REPEAT:
        return number_option("--repeat", arg, 1, 1000000, &o->repeat);
    case OPT_DEVICE:
        o->device_given = 1;
        return number_option("--device", arg, 0, MAX_DEVICE_INDEX, &o->device);
    case OPT_DEVICES:
        return devices_option(arg, o);
    case OPT_DEPTH:
        if (number_option("--depth", arg, 8, 32, &v))
            return RC_USAGE;
        if (v != 8 && v != 16 && v != 32)
            return roicopy_fail(RC_USAGE, NULL,
                                "bad --depth value \"%s\": must be 8, 16 or 32",
                                arg);
        o->raw.depth = (int)v;
        o->depth_given = 1;
        return 0;
    case OPT_FORMAT:
        o->format = image_format_from_name(arg);
        if (!o->format)
            return roicopy_fail(RC_USAGE, NULL,
                                "bad --format value \"%s\": must be pgm, ppm, "
                                "pam or raw", arg);
        return 0;
    }
    return geometry_option(opt, arg, o);
}

static int flag_option(int opt, options *o)
{
    switch (opt) {
    case OPT_PAGEABLE: o->pageable = 1; break;
    case OPT_VERIFY: o->verify = 1; break;
    case OPT_TIMING: o->timing = 1; break;
    case OPT_JSON: o->json = 1; break;
    case OPT_DRY_RUN: o->dry_run = 1; break;
    case 'q': o->quiet = 1; break;
    default: return -1;
    }
    return 0;
}

/* getopt's complaint, as one line in roicopy's own format. */
static int bad_option(int c, char **argv)
{
    const char *tok = argv[optind - 1];
    if (c == ':')
        return roicopy_fail(RC_USAGE, NULL, "option %s needs an argument",
                            tok);
    if (optopt && optopt < 256)
        return roicopy_fail(RC_USAGE, NULL, "unknown option -%c", optopt);
    if (optopt) /* a flag given a value: --verify=1 */
        return roicopy_fail(RC_USAGE, NULL, "option %.*s takes no argument",
                            (int)strcspn(tok, "="), tok);
    return roicopy_fail(RC_USAGE, NULL, "unknown option %.*s",
                        (int)strcspn(tok, "="), tok);
}

/* Returns -1 to go on, or an exit status (help and version exit 0). */
static int parse_options(int argc, char **argv, options *o)
{
    int c;
    o->args = (char **)calloc((size_t)argc, sizeof *o->args);
    if (!o->args)
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    opterr = 0;
    /* '-': operands come back in order as option 1, so inputs and -o may be
     * mixed without relying on GNU argument permutation. */
    while ((c = getopt_long(argc, argv, "-:ho:q", long_options, NULL)) != -1) {
        if (c == 1)
            o->args[o->nargs++] = optarg;
        else if (c == 'h') {
            usage(stdout);
            return RC_OK;
        } else if (c == OPT_VERSION) {
            printf("roicopy (cuxfer) %s\n", PACKAGE_VERSION);
            return RC_OK;
        } else if (c == 'o')
            o->outdir = optarg;
        else if (c == '?' || c == ':')
            return bad_option(c, argv);
        else if (flag_option(c, o) != 0 && value_option(c, optarg, o) != 0)
            return RC_USAGE;
    }
    while (optind < argc) /* after "--" */
        o->args[o->nargs++] = argv[optind++];
    return -1;
}

/* Combinations that make no sense, whatever the inputs. */
static int check_combinations(const options *o)
{
    if (o->depth_given && !o->raw_given)
        return roicopy_fail(RC_USAGE, NULL, "--depth needs --raw");
    if (o->place_given != o->canvas_given)
        return roicopy_fail(RC_USAGE, NULL, "--place and --canvas go together");
    if (o->device_given && o->devices_given)
        return roicopy_fail(RC_USAGE, NULL,
                            "--device and --devices exclude each other");
    if (o->devices_given && o->streams_given && o->streams < o->ndevices)
        return roicopy_fail(RC_USAGE, NULL,
                            "--streams %lu is fewer than the %lu devices of "
                            "--devices (at least one stream per device)",
                            o->streams, (unsigned long)o->ndevices);
    if (o->outdir && o->nargs < 1)
        return roicopy_fail(RC_USAGE, NULL, "no INPUT given (try --help)");
    if (!o->outdir && o->nargs != 2)
        return roicopy_fail(RC_USAGE, NULL,
                            o->nargs < 2 ? "expected INPUT OUTPUT, or INPUT... "
                                           "-o DIR (try --help)"
                                         : "several inputs need -o DIR");
    return 0;
}

/* ---- outputs ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* DIR/BASE, with the extension changed when --format changes the format. */
static char *output_in_dir(const options *o, const char *input)
{
    static const char *known[] = {".pgm", ".ppm", ".pam", ".pnm", ".raw"};
    const char *base = base_name(input), *dot = strrchr(base, '.');
    size_t keep = strlen(base), i, n;
    char *out;
    if (o->format && dot)
        for (i = 0; i < sizeof known / sizeof *known; ++i)
            if (!strcmp(dot, known[i]))
                keep = (size_t)(dot - base);
    n = strlen(o->outdir) + keep + 8;
    out = (char *)malloc(n);
    if (!out)
        return NULL;
    if (o->format && keep != strlen(base))
        (void)snprintf(out, n, "%s/%.*s.%s", o->outdir, (int)keep, base,
                       image_format_ext(o->format));
    else if (o->format)
        (void)snprintf(out, n, "%s/%s.%s", o->outdir, base,
                       image_format_ext(o->format));
    else
        (void)snprintf(out, n, "%s/%s", o->outdir, base);
    return out;
}

/* The directory part of path ("." when none). */
static char *dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    size_t n = s ? (s == path ? 1 : (size_t)(s - path)) : 1;
    char *d = (char *)malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s ? path : ".", n);
    d[n] = '\0';
    return d;
}

static int check_out_dir(const char *out)
{
    struct stat st;
    char *dir = dir_of(out);
    int rc = 0;
    if (!dir)
        return roicopy_fail(RC_OUTPUT, out, "out of memory");
    if (stat(dir, &st) != 0)
        rc = roicopy_fail(RC_OUTPUT, out, "directory %s: %s", dir,
                          strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = roicopy_fail(RC_OUTPUT, out, "%s is not a directory", dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = roicopy_fail(RC_OUTPUT, out, "directory %s is not writable: %s",
                          dir, strerror(errno));
    free(dir);
    return rc;
}

/* realpath of path's directory joined with its base name: names a file
 * that does not exist yet. */
static char *canonical(const char *path)
{
    char *dir = dir_of(path), *real, *out = NULL;
    if (!dir)
        return NULL;
    real = realpath(dir, NULL);
    free(dir);
    if (real) {
        size_t n = strlen(real) + strlen(base_name(path)) + 2;
        out = (char *)malloc(n);
        if (out)
            (void)snprintf(out, n, "%s/%s", real, base_name(path));
        free(real);
    }
    return out;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    char *ca, *cb;
    int same;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    ca = canonical(a);
    cb = canonical(b);
    same = ca && cb && !strcmp(ca, cb);
    free(ca);
    free(cb);
    return same;
}

static int check_output(const roicopy_plan *p, size_t k)
{
    const char *out = p->frames[k].output;
    struct stat st;
    size_t i;
    int rc = check_out_dir(out);
    if (rc)
        return rc;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return roicopy_fail(RC_OUTPUT, out, "is a directory");
    for (i = 0; i < p->nframes; ++i) {
        if (same_file(out, p->frames[i].input))
            return roicopy_fail(RC_OUTPUT, out, "is also an input (%s)",
                                p->frames[i].input);
        if (i < k && same_file(out, p->frames[i].output))
            return roicopy_fail(RC_OUTPUT, out,
                                "written twice (from %s and %s)",
                                p->frames[i].input, p->frames[k].input);
    }
    return 0;
}

static int plan_outputs(const options *o, roicopy_plan *p)
{
    struct stat st;
    size_t i;
    int rc;
    if (o->outdir) {
        if (stat(o->outdir, &st) != 0)
            return roicopy_fail(RC_OUTPUT, o->outdir, "%s", strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return roicopy_fail(RC_OUTPUT, o->outdir,
                                "-o needs a directory, this is not one");
    }
    p->nframes = o->outdir ? (size_t)o->nargs : 1;
    p->frames = (roicopy_frame *)calloc(p->nframes, sizeof *p->frames);
    if (!p->frames)
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    for (i = 0; i < p->nframes; ++i) {
        p->frames[i].input = o->args[i];
        p->frames[i].output =
            o->outdir ? output_in_dir(o, o->args[i]) : strdup(o->args[1]);
        if (!p->frames[i].output)
            return roicopy_fail(RC_USAGE, NULL, "out of memory");
    }
    for (i = 0; i < p->nframes; ++i)
        if ((rc = check_output(p, i)) != 0)
            return rc;
    return 0;
}

/* ---- inputs ------------------------------------------------------------- */

/* Views hold elements of at most 64 bytes; wider PAM pixels travel as
 * several elements of one sample each. */
static void choose_elements(roicopy_frame *f)
{
    if (f->in.pixel_bytes <= 64) {
        f->elem_size = f->in.pixel_bytes;
        f->elem_per_pixel = 1;
    } else {
        f->elem_size = f->in.bytes;
        f->elem_per_pixel = f->in.channels;
    }
}

static int check_roi(const options *o, roicopy_frame *f)
{
    const geom_rect *r = &f->roi;
    if (!o->roi_given) {
        f->roi.x = f->roi.y = 0;
        f->roi.width = f->in.width;
        f->roi.height = f->in.height;
    } else {
        f->roi = o->roi;
    }
    if (r->x >= f->in.width || r->y >= f->in.height ||
        r->width > f->in.width - r->x || r->height > f->in.height - r->y)
        return roicopy_fail(RC_USAGE, f->input,
                            "ROI %lux%lu+%lu+%lu lies outside the %lux%lu "
                            "image", (unsigned long)r->width,
                            (unsigned long)r->height, (unsigned long)r->x,
                            (unsigned long)r->y, (unsigned long)f->in.width,
                            (unsigned long)f->in.height);
    if (o->place_given &&
        (o->place_x >= o->canvas_w || o->place_y >= o->canvas_h ||
         r->width > o->canvas_w - o->place_x ||
         r->height > o->canvas_h - o->place_y))
        return roicopy_fail(RC_USAGE, f->input,
                            "the %lux%lu ROI at %lu,%lu does not fit in the "
                            "%lux%lu canvas", (unsigned long)r->width,
                            (unsigned long)r->height,
                            (unsigned long)o->place_x,
                            (unsigned long)o->place_y,
                            (unsigned long)o->canvas_w,
                            (unsigned long)o->canvas_h);
    return 0;
}

static int plan_inputs(const options *o, roicopy_plan *p)
{
    char err[IMAGE_ERR_MAX];
    size_t i;
    int rc;
    for (i = 0; i < p->nframes; ++i) {
        roicopy_frame *f = &p->frames[i];
        err[0] = '\0';
        if (image_parse_header(f->input, o->raw_given ? &o->raw : NULL, &f->in,
                               err, sizeof err))
            return roicopy_fail(RC_INPUT, f->input, "%s", err);
        if ((rc = check_roi(o, f)) != 0)
            return rc;
        if (image_output_header(&f->in, f->roi.width, f->roi.height,
                                o->format, &f->out, err, sizeof err))
            return roicopy_fail(RC_USAGE, f->input, "%s", err);
        choose_elements(f);
    }
    return 0;
}

/* Canvas rows must fit the same limits as image rows. */
static int check_canvas(const options *o, const roicopy_plan *p)
{
    image_header c = p->frames[0].in;
    char err[IMAGE_ERR_MAX];
    size_t i;
    if (!o->place_given)
        return 0;
    for (i = 0; i < p->nframes; ++i) {
        c = p->frames[i].in;
        c.width = o->canvas_w;
        c.height = o->canvas_h;
        if (image_compute_sizes(&c, err, sizeof err))
            return roicopy_fail(RC_USAGE, NULL, "--canvas %lux%lu: %s",
                                (unsigned long)o->canvas_w,
                                (unsigned long)o->canvas_h, err);
    }
    return 0;
}

/* ---- the dry run -------------------------------------------------------- */

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
    printf("bands:    %lu (one stream each):", (unsigned long)n);
    for (i = 0; i < n; ++i) {
        roicopy_band_rows(f->roi.height, n, i, &y0, &y1);
        printf(" rows %lu-%lu", (unsigned long)y0, (unsigned long)(y1 - 1));
    }
    printf("\n");
    if (p->devices_given)
        print_band_devices(p, f, n);
}

static void print_frame_plan(const roicopy_plan *p, const roicopy_frame *f)
{
    const image_header *in = &f->in;
    size_t roi_row = f->roi.width * in->pixel_bytes;
    size_t dev_w = p->place ? p->canvas_w : f->roi.width;
    size_t dev_h = p->place ? p->canvas_h : f->roi.height;
    size_t dev_pitch = roicopy_pitch_estimate(dev_w * in->pixel_bytes);
    printf("input:    %s (%s, %lux%lu, %lu channel%s x %lu byte%s%s, maxval "
           "%u%s%s)\n", f->input, image_format_name(in->format),
           (unsigned long)in->width, (unsigned long)in->height,
           (unsigned long)in->channels, in->channels == 1 ? "" : "s",
           (unsigned long)in->bytes, in->bytes == 1 ? "" : "s",
           in->is_float ? " float" : "", in->maxval,
           in->tupltype[0] ? ", tupltype " : "", in->tupltype);
    printf("roi:      %lux%lu+%lu+%lu\n", (unsigned long)f->roi.width,
           (unsigned long)f->roi.height, (unsigned long)f->roi.x,
           (unsigned long)f->roi.y);
    printf("element:  %lu bytes (%lu per pixel)\n", (unsigned long)f->elem_size,
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
    printf("output:   %s (%s%s%s)\n", f->output,
           image_format_name(f->out.format), f->out.tupltype[0] ? ", " : "",
           f->out.tupltype);
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

static void print_plan(const roicopy_plan *p)
{
    size_t i;
    int ring = p->nframes > 1 && !p->pageable;
    printf("host:     %s\n", p->pageable ? "pageable (malloc)" : "pinned");
    if (ring)
        printf("pipeline: %lu frames through a ring of %d slots\n",
               (unsigned long)p->nframes, p->streams);
    else if (p->nframes > 1)
        printf("pipeline: %lu frames, one at a time (--pageable: the ring "
               "needs pinned memory)\n", (unsigned long)p->nframes);
    if (ring && p->devices_given)
        print_slot_devices(p);
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

/* ---- services for the GPU part ------------------------------------------ */

int roicopy_band_count(const roicopy_plan *p, const roicopy_frame *f)
{
    return (size_t)p->streams > f->roi.height ? (int)f->roi.height
                                              : p->streams;
}

void roicopy_band_rows(size_t h, size_t n, size_t i, size_t *y0, size_t *y1)
{
    *y0 = h * i / n;
    *y1 = h * (i + 1) / n;
}

int roicopy_device_of(const roicopy_plan *p, size_t i)
{
    return p->devices[i % (size_t)p->ndevices];
}

int roicopy_read_frame(const roicopy_frame *f, void *dst, size_t dst_pitch)
{
    char err[IMAGE_ERR_MAX] = "";
    if (image_read_pixels(f->input, &f->in, dst, dst_pitch, err, sizeof err))
        return roicopy_fail(RC_INPUT, f->input, "%s", err);
    return RC_OK;
}

/* Test hook: ROICOPY_TEST_CORRUPT=1 flips one byte of what came back from
 * the device, so the test suite can prove that --verify catches it. */
static void test_corrupt(const roicopy_frame *f, void *roi, size_t pitch)
{
    const char *e = getenv("ROICOPY_TEST_CORRUPT");
    if (e && *e == '1') {
        unsigned char *b = (unsigned char *)roi +
                           (f->out.height - 1) * pitch + f->out.row_bytes - 1;
        *b ^= 0x5a;
    }
}

static int verify(const roicopy_frame *f, const void *image,
                  size_t image_pitch, const void *roi, size_t roi_pitch)
{
    const unsigned char *crop = (const unsigned char *)image +
                                f->roi.y * image_pitch +
                                f->roi.x * f->in.pixel_bytes;
    image_diff d;
    if (!image_compare(&f->out, crop, image_pitch, roi, roi_pitch, &d))
        return RC_OK;
    return roicopy_fail(RC_DIFF, f->output,
                        "--verify: first difference at x=%lu y=%lu channel "
                        "%lu: expected %.9g, got %.9g", (unsigned long)d.x,
                        (unsigned long)d.y, (unsigned long)d.channel,
                        d.expected, d.got);
}

int roicopy_finish_frame(const roicopy_plan *p, const roicopy_frame *f,
                         const void *image, size_t image_pitch, void *roi,
                         size_t roi_pitch)
{
    char err[IMAGE_ERR_MAX] = "";
    test_corrupt(f, roi, roi_pitch);
    /* A frame that fails verification is not written: an existing output
     * is never replaced by wrong data. */
    if (p->verify && verify(f, image, image_pitch, roi, roi_pitch))
        return RC_DIFF;
    if (image_write_atomic(f->output, &f->out, roi, roi_pitch, err,
                           sizeof err))
        return roicopy_fail(RC_OUTPUT, f->output, "%s", err);
    return RC_OK;
}

void roicopy_progress(const roicopy_plan *p, size_t done)
{
    enum { BAR = 40 };
    char bar[BAR + 1];
    size_t fill, i;
    if (!p->progress)
        return;
    fill = p->nframes ? done * BAR / p->nframes : BAR;
    for (i = 0; i < BAR; ++i)
        bar[i] = i < fill ? '#' : ' ';
    bar[BAR] = '\0';
    fprintf(stderr, "\r[%s] %lu/%lu%s", bar, (unsigned long)done,
            (unsigned long)p->nframes, done == p->nframes ? "\n" : "");
    fflush(stderr);
}

/* ---- main --------------------------------------------------------------- */

static void on_signal(int sig)
{
    image_signal_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction sa;
    size_t i;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof sigs / sizeof *sigs; ++i)
        (void)sigaction(sigs[i], &sa, NULL);
}

/* The devices in use and the number of bands or ring slots: with
 * --devices, one band per device by default, and a ring of two slots per
 * device (at least DEFAULT_RING_SLOTS), so every device double-buffers. */
static void fill_devices(const options *o, roicopy_plan *p)
{
    size_t i;
    p->device = (int)o->device;
    p->devices_given = o->devices_given;
    p->ndevices = o->devices_given ? (int)o->ndevices : 1;
    p->devices[0] = p->device;
    for (i = 0; o->devices_given && i < o->ndevices; ++i)
        p->devices[i] = (int)o->devices[i];
    if (o->streams_given)
        return;
    if (p->nframes > 1) {
        p->streams = DEFAULT_RING_SLOTS;
        if (o->devices_given && 2 * p->ndevices > p->streams)
            p->streams = 2 * p->ndevices > MAX_STREAMS ? MAX_STREAMS
                                                       : 2 * p->ndevices;
    } else if (o->devices_given) {
        p->streams = p->ndevices;
    }
}

static void fill_plan(const options *o, roicopy_plan *p)
{
    p->place = o->place_given;
    p->place_x = o->place_x;
    p->place_y = o->place_y;
    p->canvas_w = o->canvas_w;
    p->canvas_h = o->canvas_h;
    p->streams_given = o->streams_given;
    p->streams = (int)o->streams;
    fill_devices(o, p);
    if (p->nframes > 1 && p->streams < 2)
        p->streams = 2; /* a ring of one slot cannot overlap anything */
    p->pageable = o->pageable;
    p->verify = o->verify;
    p->repeat = (int)o->repeat;
    p->timing = o->timing;
    p->json = o->json;
    p->quiet = o->quiet;
    p->progress = p->nframes > 1 && !o->quiet && isatty(2);
}

static void free_plan(roicopy_plan *p)
{
    size_t i;
    for (i = 0; p->frames && i < p->nframes; ++i)
        free(p->frames[i].output);
    free(p->frames);
}

static int run(int argc, char **argv)
{
    options o;
    roicopy_plan p;
    int rc;
    memset(&o, 0, sizeof o);
    memset(&p, 0, sizeof p);
    o.streams = 1;
    o.repeat = 1;
    o.raw.depth = 8;
    if ((rc = parse_options(argc, argv, &o)) >= 0 ||
        (rc = check_combinations(&o)) != 0) {
        free(o.args);
        return rc;
    }
    if ((rc = plan_outputs(&o, &p)) == 0 && (rc = plan_inputs(&o, &p)) == 0 &&
        (rc = check_canvas(&o, &p)) == 0) {
        fill_plan(&o, &p);
        if (o.dry_run)
            print_plan(&p);
        else
            rc = roicopy_gpu_run(&p);
    }
    free_plan(&p);
    free(o.args);
    return rc;
}

int main(int argc, char **argv)
{
    install_signals();
    return run(argc, argv);
}
