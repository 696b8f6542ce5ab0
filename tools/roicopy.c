/* SPDX-License-Identifier: MIT */
/*
 * roicopy.c - copy regions of interest of image files through the GPU.
 *
 * This file is the command line and the plan: options, input headers,
 * ROIs, output paths (checks.c), the checks across frames, then --dry-run
 * (report.c prints the plan) or the copies (roicopy-gpu.c, or
 * roicopy-tiles.c for many regions of one input).  Everything a user can
 * get wrong is checked here before the first CUDA call, so errors read the
 * same on machines with and without a GPU.  roicopy.h lists the files.
 */
/* realpath() is XSI, beyond the project's _POSIX_C_SOURCE. */
#define _XOPEN_SOURCE 700

#include "roicopy.h"
#include "checks.h"
#include "devices.h"
#include "formats.h"
#include "input.h"
#include "longopts.h"
#include "prefetch.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define MAX_STREAMS 64
/* output.c tracks 128 temporary files at once, one a writing thread */
#define MAX_THREADS 128
#define DEFAULT_RING_SLOTS 3
#define MAX_DEVICE_INDEX 1023

/* What the command line said, before it is checked against the inputs. */
typedef struct options {
    geom_rect roi;
    int roi_given;
    int place_given, canvas_given;
    size_t place_x, place_y, canvas_w, canvas_h;
    unsigned long streams, repeat, device, threads;
    int threads_given;
    int streams_given, pageable, verify, timing, json, dry_run, quiet;
    int keep_going;
    int device_given, devices_given;
    unsigned long devices[ROICOPY_MAX_DEVICES]; /* --devices */
    size_t ndevices;
    image_format format;
    image_raw_spec raw;
    int raw_given, depth_given;
    unsigned long page; /* --page: the page of multi-page (TIFF) inputs */
    const char *outdir;
    /* many regions (roicopy-tiles.c): --roi repeated, --tiles, --stack */
    geom_rect *rois;
    size_t nrois;
    int tiles_given, verbose;
    const char *tiles_arg; /* --tiles as typed, for "given twice" */
    size_t tile_w, tile_h, step_x, step_y;
    const char *stack;
    char **args; /* positional arguments, then --files-from's names */
    int nargs;
    const char *files_from; /* --files-from FILE, "-" standard input */
    int nul_names;          /* -0: --files-from's names end in NUL */
    int skip_existing;      /* --skip-existing */
    int prefetch_given;     /* ROICOPY_PREFETCH_MB set, not empty */
    unsigned long prefetch_mb;
    char *names_buf;        /* the text of --files-from */
} options;

/* ---- messages ----------------------------------------------------------- */

/* The one line under a command-line mistake (stderr, then exit 2). */
static int usage_line(int status)
{
    fputs("usage: roicopy [OPTIONS] INPUT OUTPUT | roicopy [OPTIONS] "
          "INPUT... -o DIR (roicopy --help)\n", stderr);
    return status;
}

/* The formats are this build's (formats.c): PNG and TIFF are optional. */
static void usage(FILE *f)
{
    fputs(
        "usage: roicopy [OPTIONS] INPUT OUTPUT\n"
        "       roicopy [OPTIONS] INPUT... -o DIR\n"
        "       roicopy [OPTIONS] --tiles WxH[+SX+SY] | --roi R... INPUT\n"
        "               -o DIR | --stack FILE\n"
        "Copy a region of interest of images through the GPU with 2D\n"
        "asynchronous copies.  INPUT - is standard input, OUTPUT - standard\n"
        "output (cat a.pgm | roicopy --roi 64x64+8+8 - b.pgm).\n"
        "\n", f);
    fprintf(f, "Formats of this build: %s", roicopy_formats());
    if (*roicopy_formats_missing())
        fprintf(f, "; without: %s", roicopy_formats_missing());
    fputs(".\n"
        "\n"
        "  --roi WxH+X+Y      region to copy (default: the whole image)\n"
        "  --place X,Y        put the ROI at X,Y of a device canvas...\n"
        "  --canvas WxH       ...of this size (both or neither)\n"
        "  --streams N        cut the ROI into N bands, up one stream and down\n"
        "                     another (1..64; default: bands of about 8 MiB,\n"
        "                     at most 32);\n"
        "                     with several inputs: frames in flight (ring slots)\n"
        "  --threads N        several inputs: N threads read ahead and N copy\n"
        "                     and write (1..128; default: the CPUs, 4..64)\n"
        "  --pageable         malloc'd host buffers instead of pinned ones\n"
        "  --verify           compare every output with a CPU crop\n"
        "  --repeat K         copy K times, for --timing (several inputs:\n"
        "                     K-1 more passes through the ring, no file I/O)\n"
        "  --timing           per-stage times, GB/s and the raw 1D link\n"
        "  --json             one JSON object per run on stdout (with\n"
        "                     --dry-run: the plan)\n"
        "  --device N         use CUDA device N (default 0)\n"
        "  --devices LIST     spread bands or ring slots over these devices,\n"
        "                     round robin (0,1 or 0,1,2,3)\n"
        "  --dry-run          check everything, print the plan; no GPU needed\n"
        "  --format F         output format, one of the formats above;\n"
        "                     without it, OUTPUT's extension decides (another\n"
        "                     extension is an error), and without one the\n"
        "                     input's format is kept (known by its bytes)\n"
        "  --page N           page N (from 0) of a multi-page input\n"
        "  --raw WxHxC        inputs are headerless, WxH pixels of C channels\n"
        "  --depth 8|16|32    raw sample size in bits (32 = float; default 8)\n"
        "  -o, --output-dir DIR  write each INPUT's output into DIR\n"
        "  --tiles WxH[+SX+SY]  cut one INPUT into a grid of WxH tiles, SX,SY\n"
        "                     apart (default: W,H); a partial last column or\n"
        "                     row is dropped; --roi may also be repeated\n"
        "  --stack FILE       write the tiles (or ROIs) into FILE as one\n"
        "                     multi-image netpbm stream (pamsplit splits it);\n"
        "                     with -o DIR instead: DIR/NAME-INDEX.EXT each\n"
        "  -v, --verbose      say more (--tiles: how many tiles were dropped;\n"
        "                     --threads with one frame: that it does nothing)\n"
        "  --files-from FILE  more INPUTs, one a line (FILE - : standard input)\n"
        "  -0                 --files-from's names end in NUL, not newline\n"
        "  --skip-existing    skip inputs whose output exists (resume a batch)\n"
        "  -k, --keep-going   with problems in some inputs or outputs, still\n"
        "                     copy the good ones (every problem is reported\n"
        "                     first; without -k nothing is done)\n"
        "  -q, --quiet        no progress bar\n"
        "  -h, --help         this text\n"
        "  -V, --version      print the version\n"
        "Exit status: 0 ok, 1 --verify found a difference, 2 usage, 3 input,\n"
        "4 output, 5 CUDA; with several problems the highest.  See roicopy(1).\n",
        f);
}

/* ---- option parsing ----------------------------------------------------- */

enum {
    OPT_ROI = 256, OPT_PLACE, OPT_CANVAS, OPT_STREAMS, OPT_PAGEABLE,
    OPT_VERIFY, OPT_REPEAT, OPT_TIMING, OPT_JSON, OPT_DEVICE, OPT_DEVICES,
    OPT_DRY_RUN,
    OPT_FORMAT, OPT_RAW, OPT_DEPTH,
    OPT_TILES, OPT_STACK,
    OPT_PAGE, OPT_FILES_FROM, OPT_SKIP_EXISTING, OPT_THREADS
};

static const struct option long_options[] = {
    {"roi", required_argument, NULL, OPT_ROI},
    {"place", required_argument, NULL, OPT_PLACE},
    {"canvas", required_argument, NULL, OPT_CANVAS},
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"threads", required_argument, NULL, OPT_THREADS},
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
    {"tiles", required_argument, NULL, OPT_TILES},
    {"stack", required_argument, NULL, OPT_STACK},
    {"verbose", no_argument, NULL, 'v'},
    {"page", required_argument, NULL, OPT_PAGE},
    {"files-from", required_argument, NULL, OPT_FILES_FROM},
    {"skip-existing", no_argument, NULL, OPT_SKIP_EXISTING},
    {"output-dir", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"keep-going", no_argument, NULL, 'k'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* Options that take a number, with their ranges.  The parsers' messages
 * (geometry.h) quote the argument as typed: escaped here, as every
 * untrusted text roicopy prints. */
static int number_option(const char *name, const char *arg, unsigned long min,
                         unsigned long max, unsigned long *out)
{
    char err[GEOM_ERR_MAX];
    if (geom_parse_uint(arg, min, max, name, out, err, sizeof err))
        return roicopy_fail(RC_USAGE, NULL, "%s", roicopy_esc(err));
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
        if (!bad && roicopy_tiles_add_roi(&o->rois, &o->nrois, &o->roi))
            return roicopy_fail(RC_USAGE, NULL, "out of memory");
        break;
    case OPT_TILES:
        o->tiles_given = 1;
        o->tiles_arg = arg;
        return roicopy_tiles_option(arg, &o->tile_w, &o->tile_h, &o->step_x,
                                    &o->step_y);
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
                              roicopy_esc(err))
               : 0;
}

/* --devices LIST: comma-separated device numbers, none twice.  Whether
 * each exists is asked of CUDA later (devices.c). */
static int devices_option(const char *arg, options *o)
{
    char err[GEOM_ERR_MAX];
    size_t i, j;
    o->devices_given = 1;
    if (geom_parse_list(arg, o->devices, ROICOPY_MAX_DEVICES, &o->ndevices,
                        err, sizeof err))
        return roicopy_fail(RC_USAGE, NULL, "--devices: %s",
                            roicopy_esc(err));
    for (i = 0; i < o->ndevices; ++i) {
        if (o->devices[i] > MAX_DEVICE_INDEX)
            return roicopy_fail(RC_USAGE, NULL,
                                "--devices: bad list \"%s\": device %lu is "
                                "too large (at most %d)", roicopy_esc(arg),
                                o->devices[i],
                                MAX_DEVICE_INDEX);
        for (j = 0; j < i; ++j)
            if (o->devices[j] == o->devices[i])
                return roicopy_fail(RC_USAGE, NULL,
                                    "--devices: bad list \"%s\": device %lu "
                                    "is listed twice", roicopy_esc(arg),
                                    o->devices[i]);
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
    case OPT_THREADS:
        o->threads_given = 1;
        return number_option("--threads", arg, 1, MAX_THREADS, &o->threads);
    case OPT_REPEAT:
        return number_option("--repeat", arg, 1, 1000000, &o->repeat);
    case OPT_DEVICE:
        o->device_given = 1;
        return number_option("--device", arg, 0, MAX_DEVICE_INDEX, &o->device);
    case OPT_DEVICES:
        return devices_option(arg, o);
    case OPT_PAGE:
        return number_option("--page", arg, 0, 65535, &o->page);
    case OPT_DEPTH:
        if (number_option("--depth", arg, 8, 32, &v))
            return RC_USAGE;
        if (v != 8 && v != 16 && v != 32)
            return roicopy_fail(RC_USAGE, NULL,
                                "bad --depth value \"%s\": must be 8, 16 or 32",
                                roicopy_esc(arg));
        o->raw.depth = (int)v;
        o->depth_given = 1;
        return 0;
    case OPT_FORMAT:
        o->format = image_format_from_name(arg);
        if (!o->format)
            return roicopy_fail(RC_USAGE, NULL,
                                "bad --format value \"%s\": must be one of "
                                "%s", roicopy_esc(arg), roicopy_formats());
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
    case OPT_SKIP_EXISTING: o->skip_existing = 1; break;
    case '0': o->nul_names = 1; break;
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose = 1; break;
    case 'k': o->keep_going = 1; break;
    default: return -1;
    }
    return 0;
}

/* "--dev": a prefix of several long options, which getopt_long reports
 * as it reports an unknown one.  Says so, naming them; 0 if it is not. */
static int ambiguous_option(const char *tok)
{
    char names[256];
    if (longopts_matching(long_options, tok, names, sizeof names) < 2)
        return 0;
    roicopy_fail(RC_USAGE, NULL, "option %s is ambiguous: %s",
                 roicopy_esc(tok), names);
    return 1;
}

/* getopt's complaint, as one line in roicopy's own format, and the usage
 * line. */
static int bad_option(int c, char **argv)
{
    char name[256];
    const char *tok = argv[optind - 1];
    /* The option as typed, without "=VALUE", escaped. */
    (void)snprintf(name, sizeof name, "%.*s", (int)strcspn(tok, "="), tok);
    if (c == ':')
        roicopy_fail(RC_USAGE, NULL, "option %s needs an argument",
                     roicopy_esc(name));
    else if (optopt && optopt < 256) {
        (void)snprintf(name, sizeof name, "-%c", optopt);
        roicopy_fail(RC_USAGE, NULL, "unknown option %s", roicopy_esc(name));
    } else if (optopt) /* a flag given a value: --verify=1 */
        roicopy_fail(RC_USAGE, NULL, "option %s takes no argument",
                     roicopy_esc(name));
    else if (!ambiguous_option(name))
        roicopy_fail(RC_USAGE, NULL, "unknown option %s", roicopy_esc(name));
    return usage_line(RC_USAGE);
}

/* An option given twice whose second value would take the first's place,
 * dropping what the first asked for (a list's inputs, a directory's or a
 * stack's outputs, a grid's tiles): refused, naming both. */
static int given_twice(const char *name, const char *first,
                       const char *second, const char *why)
{
    return roicopy_fail(RC_USAGE, NULL, "%s given twice (%s and %s): %s",
                        name, roicopy_esc(first), roicopy_esc(second), why);
}

/* -o DIR, --stack FILE, --files-from FILE: where outputs go or inputs come
 * from, once each. */
static int where_option(int c, const char *arg, options *o)
{
    const char **slot = c == 'o'         ? &o->outdir
                        : c == OPT_STACK ? &o->stack
                                         : &o->files_from;
    if (*slot)
        return c == 'o' ? given_twice("-o", *slot, arg, "one output "
                                      "directory a run")
               : c == OPT_STACK
                   ? given_twice("--stack", *slot, arg, "one stack a run")
                   : given_twice("--files-from", *slot, arg, "one list a "
                                 "run; join them with cat");
    *slot = arg;
    return 0;
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
    while ((c = getopt_long(argc, argv, "-:ho:qkvV0", long_options, NULL)) !=
           -1) {
        if (c == 1)
            o->args[o->nargs++] = optarg;
        else if (c == 'h') {
            usage(stdout);
            return RC_OK;
        } else if (c == 'V') {
            printf("roicopy (cuxfer) %s\nformats: %s\n", PACKAGE_VERSION,
                   roicopy_formats());
            if (*roicopy_formats_missing())
                printf("without: %s\n", roicopy_formats_missing());
            return RC_OK;
        } else if (c == 'o' || c == OPT_STACK || c == OPT_FILES_FROM) {
            if (where_option(c, optarg, o))
                return RC_USAGE;
        } else if (c == OPT_TILES && o->tiles_given)
            return given_twice("--tiles", o->tiles_arg, optarg,
                               "one grid a run");
        else if (c == '?' || c == ':')
            return bad_option(c, argv);
        else if (flag_option(c, o) != 0 && value_option(c, optarg, o) != 0)
            return RC_USAGE;
    }
    while (optind < argc) /* after "--" */
        o->args[o->nargs++] = argv[optind++];
    return -1;
}

/* --files-from's limits: a name is a path (PATH_MAX bytes with its
 * terminator), and a list holds at most ROICOPY_MAX_NAMES entries, so a
 * wrong FILE (/dev/zero, a binary) fails at once instead of filling
 * memory. */
#define ROICOPY_MAX_NAMES 1048576UL

/* Read all of fd, NUL-terminated, within those limits: NULL with errno,
 * or with *what set to the limit that was passed. */
static char *slurp_names(int fd, char sep, size_t *len, const char **what)
{
    size_t cap = 65536, n = 0, line = 0, lines = 0, i;
    char *buf = (char *)malloc(cap + 1), *nb;
    ssize_t k;
    *what = NULL;
    while (buf) {
        if (n == cap) {
            nb = (char *)realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            free(buf);
            return NULL;
        }
        if (k == 0)
            break;
        for (i = n; i < n + (size_t)k; ++i) {
            if (buf[i] != sep) {
                line++;
            } else {
                line = 0;
                lines++;
            }
            if (line >= PATH_MAX || lines > ROICOPY_MAX_NAMES) {
                *what = line >= PATH_MAX ? "line" : "list";
                *len = line >= PATH_MAX ? lines + 1 : lines;
                free(buf);
                return NULL;
            }
        }
        n += (size_t)k;
    }
    /* A last name without its separator is a line of the list too. */
    if (buf && line > 0 && lines + 1 > ROICOPY_MAX_NAMES) {
        *what = "list";
        *len = lines + 1;
        free(buf);
        return NULL;
    }
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* --files-from FILE: its names join the operands, in order.  One name a
 * line (a final line without its newline counts; empty lines are
 * skipped), or with -0 one a NUL-terminated string, so any name works. */
static int read_names(options *o)
{
    size_t len = 0, i, start, count = 0;
    char sep = o->nul_names ? '\0' : '\n', **args;
    const char *what;
    int fd = strcmp(o->files_from, "-") ? open(o->files_from, O_RDONLY)
                                        : dup(0);
    if (fd < 0)
        return roicopy_fail(RC_INPUT, o->files_from, "--files-from: %s",
                            strerror(errno));
    errno = 0;
    o->names_buf = slurp_names(fd, sep, &len, &what);
    close(fd);
    if (what && !strcmp(what, "line"))
        return roicopy_fail(RC_INPUT, o->files_from, "--files-from: %s %lu "
                            "is %d bytes or longer, longer than a path can "
                            "be%s", o->nul_names ? "name" : "line",
                            (unsigned long)len, PATH_MAX,
                            o->nul_names ? "" : " (a NUL-separated list "
                                                "needs -0)");
    if (what)
        return roicopy_fail(RC_INPUT, o->files_from, "--files-from: more "
                            "than %lu %s; split the list", ROICOPY_MAX_NAMES,
                            o->nul_names ? "names" : "lines");
    if (!o->names_buf)
        return roicopy_fail(RC_INPUT, o->files_from, "--files-from: %s",
                            strerror(errno ? errno : ENOMEM));
    for (i = 0; i < len; ++i) {
        /* A name ends at its NUL: the rest of its line would be lost. */
        if (!o->nul_names && o->names_buf[i] == '\0')
            return roicopy_fail(RC_INPUT, o->files_from, "--files-from: "
                                "line %lu has a NUL byte, which no name can "
                                "have (a NUL-separated list needs -0)",
                                (unsigned long)count + 1);
        count += o->names_buf[i] == sep;
    }
    args = (char **)realloc(o->args, ((size_t)o->nargs + count + 2) *
                                         sizeof *args);
    if (!args)
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    o->args = args;
    for (start = i = 0; i <= len; ++i) {
        if (i < len && o->names_buf[i] != sep)
            continue;
        if (!o->nul_names && i > start && o->names_buf[i - 1] == '\r')
            o->names_buf[i - 1] = '\0'; /* a CRLF list */
        o->names_buf[i] = '\0';
        if (o->names_buf[start])
            o->args[o->nargs++] = o->names_buf + start;
        start = i + 1;
    }
    return 0;
}

/* An output that is standard output, whatever its name: -, /dev/stdout,
 * /dev/fd/1 or a link to them (image_output_fd), is not shared with the
 * reports --timing and --json print there (--dry-run writes no image).
 * OUTPUT, or each output of -o DIR (DIR/1 of -o /dev/fd, a link to
 * /dev/stdout in DIR). */
static int check_stdout_output(const options *o, const char *out)
{
    if (!o->dry_run && (o->timing || o->json) && image_output_fd(out) == 1)
        return roicopy_fail(RC_USAGE, out, "OUTPUT %s is standard output, "
                            "where --timing and --json print too",
                            roicopy_esc(out));
    return 0;
}

/* "-": standard input as INPUT (once, and not with -o, which names each
 * output after its input), standard output as OUTPUT (check_stdout_output;
 * the outputs of -o DIR are checked with the others, plan_frames). */
static int check_dashes(const options *o)
{
    int i, n = 0;
    for (i = 0; i < o->nargs; ++i)
        n += !strcmp(o->args[i], "-");
    if (o->outdir && n)
        return roicopy_fail(RC_USAGE, "-", "standard input has no name for "
                            "an output in -o DIR; use roicopy - OUTPUT");
    return o->outdir ? 0 : check_stdout_output(o, o->args[1]);
}

/* ROICOPY_PREFETCH_MB, read as strictly as an option's number: "-1" was
 * taken by strtoul as no cap at all, "abc" and "" after a typo as 0 (read
 * nothing ahead), "64M" as 64.  Empty is unset. */
static int check_environment(int *given, unsigned long *mb)
{
    const char *e = getenv("ROICOPY_PREFETCH_MB");
    *given = e && *e;
    *mb = 0;
    return *given ? number_option("ROICOPY_PREFETCH_MB", e, 0, GEOM_MAX, mb)
                  : 0;
}

/* Options that need another, in every mode (one input, a batch, tiles). */
static int check_needs(const options *o)
{
    if (o->nul_names && !o->files_from)
        return roicopy_fail(RC_USAGE, NULL, "-0 needs --files-from");
    if (o->depth_given && !o->raw_given)
        return roicopy_fail(RC_USAGE, NULL, "--depth needs --raw");
    if (o->page && o->raw_given)
        return roicopy_fail(RC_USAGE, NULL, "--page %lu: raw inputs have "
                            "one page (0)", o->page);
    return 0;
}

/* Combinations that make no sense, whatever the inputs. */
static int check_combinations(options *o)
{
    int rc;
    if ((rc = check_needs(o)) != 0 ||
        (rc = check_environment(&o->prefetch_given, &o->prefetch_mb)) != 0)
        return rc;
    if (o->files_from && !o->outdir)
        return usage_line(roicopy_fail(RC_USAGE, NULL,
                                       "--files-from needs -o DIR"));
    if (o->files_from && (rc = read_names(o)) != 0)
        return rc;
    if (o->place_given != o->canvas_given)
        return roicopy_fail(RC_USAGE, NULL, "--place and --canvas go together");
    if (o->device_given && o->devices_given)
        return roicopy_fail(RC_USAGE, NULL,
                            "--device and --devices exclude each other");
    if (o->threads_given && o->pageable)
        return roicopy_fail(RC_USAGE, NULL, "--threads does not go with "
                            "--pageable, which copies one frame at a time");
    if (o->devices_given && o->streams_given && o->streams < o->ndevices)
        return roicopy_fail(RC_USAGE, NULL,
                            "--streams %lu is fewer than the %lu devices of "
                            "--devices (at least one band or ring slot per device)",
                            o->streams, (unsigned long)o->ndevices);
    /* An empty --files-from is a shard of no names: nothing to do. */
    if (o->outdir && o->nargs < 1 && !o->files_from)
        return usage_line(roicopy_fail(RC_USAGE, NULL, "no INPUT given"));
    if (!o->outdir && o->nargs != 2)
        return usage_line(roicopy_fail(
            RC_USAGE, NULL, o->nargs < 2 ? "expected INPUT OUTPUT, or "
                                           "INPUT... -o DIR"
                                         : "several inputs need -o DIR"));
    return check_dashes(o);
}

/* ---- validation ---------------------------------------------------------- */

static int worse(int a, int b) { return a > b ? a : b; }

/* DIR/BASE, with the extension changed when --format changes the format;
 * BASE is the input's last component, trailing slashes ignored.  An
 * extension is replaced when it names a format (image.c's one rule: any
 * ASCII case, a leading dot is a name), else kept with the format's after. */
static char *output_in_dir(const options *o, const char *input)
{
    size_t len = strlen(input), keep, n, start;
    const char *base;
    char *out;
    while (len > 1 && input[len - 1] == '/')
        --len;
    for (start = len; start > 0 && input[start - 1] != '/'; --start)
        ;
    base = input + start;
    keep = len - start;
    n = strlen(o->outdir) + keep + 8;
    out = (char *)malloc(n);
    if (!out)
        return NULL;
    if (!o->format) {
        (void)snprintf(out, n, "%s/%.*s", o->outdir, (int)keep, base);
        return out;
    }
    (void)snprintf(out, n, "%.*s", (int)keep, base); /* BASE alone, for the rule */
    if (image_format_for_path(out))
        keep = (size_t)(strrchr(out, '.') - out);
    (void)snprintf(out, n, "%s/%.*s.%s", o->outdir, (int)keep, base,
                   image_format_ext(o->format));
    return out;
}

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
    if (roicopy_check_rect(f->input, &f->in, r, "ROI"))
        return RC_USAGE;
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

/* The input's header, the ROI and the output's format (--format, else the
 * output's extension, else the input's format). */
/* What a frame holds in host memory at once must fit in the machine: one
 * input, or --pageable, holds the whole image and the ROI (pinned, or
 * malloc'd); a batch reads each frame ahead into buffers of its own, the
 * rows of the ROI (of a netpbm or raw file) or the whole decoded image
 * (PNG, TIFF), with its output, two buffers at the least.  A frame past
 * that (a PNG of a few MB decodes to GBs) was allocated all the same: a
 * batch's buffers are malloc'd, and two of them each under the memory but
 * together over it are both granted by the kernel's default overcommit,
 * then filled by the reading threads (the OOM killer's to settle); one
 * input's cudaHostAlloc failed (exit 5) once the context was up and, with
 * --pageable, its malloc overcommitted too. */
static int check_memory(const options *o, const roicopy_frame *f)
{
    int batch = o->outdir && o->nargs > 1 && !o->pageable;
    unsigned long long mem = roicopy_memory_bytes(), in, held;
    if (mem == 0)
        return 0; /* unknown: the allocation will say */
    in = batch && image_can_read_span(&f->in)
             ? (unsigned long long)f->roi.height * f->in.row_bytes
             : (unsigned long long)f->in.total_bytes;
    held = in + f->out.total_bytes; /* each under 2^63 */
    if (batch ? held <= mem / 2 : held <= mem)
        return 0;
    if (batch)
        return roicopy_fail(RC_USAGE, f->input, "a batch holds two frames "
                            "at once at the least (one read ahead, one being "
                            "written), %llu bytes each here (%s %llu, the ROI "
                            "%llu): more than this machine's %llu bytes of "
                            "memory",
                            held, image_can_read_span(&f->in)
                                      ? "the ROI's rows" : "the image",
                            in, (unsigned long long)f->out.total_bytes,
                            mem);
    return roicopy_fail(RC_USAGE, f->input, "the image (%llu bytes) and the "
                        "ROI (%llu) are held in %s memory at once: more than "
                        "this machine's %llu bytes of memory", in,
                        (unsigned long long)f->out.total_bytes,
                        o->pageable ? "host" : "pinned host", mem);
}

static int check_input(const options *o, roicopy_frame *f, frame_check *c)
{
    char err[IMAGE_ERR_MAX];
    struct stat st;
    image_format to = o->format;
    int rc;
    err[0] = '\0';
    if (image_parse_input(f->input, o->raw_given ? &o->raw : NULL,
                          (unsigned)o->page, &f->in, err, sizeof err))
        return roicopy_fail(RC_INPUT, f->input, "%s", err);
    if (strcmp(f->input, "-") != 0 && stat(f->input, &st) == 0) {
        c->in_known = 1;
        c->in_dev = st.st_dev;
        c->in_ino = st.st_ino;
    }
    if ((rc = check_roi(o, f)) != 0)
        return rc;
    if (!to && !o->outdir &&
        (rc = roicopy_output_format(f->output, &to)) != 0)
        return rc;
    if (image_output_header(&f->in, f->roi.width, f->roi.height, to, &f->out,
                            err, sizeof err))
    {
        /* err starts with the format's name: say where it came from. */
        size_t k = strlen(image_format_name(f->out.format));
        return roicopy_fail(RC_USAGE, f->output, "%.*s (from %s)%s", (int)k,
                            err, o->format ? "--format" : "the extension",
                            err + k);
    }
    choose_elements(f);
    return check_memory(o, f);
}

typedef struct ident {
    dev_t dev;
    ino_t ino;
    size_t frame;
} ident;

static int cmp_ident(const void *a, const void *b)
{
    const ident *x = (const ident *)a, *y = (const ident *)b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static const frame_check *sort_checks; /* for cmp_canon */

static int cmp_canon(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int d = strcmp(sort_checks[i].out_canon, sort_checks[j].out_canon);
    return d ? d : (i < j ? -1 : i > j);
}

/* Outputs that are inputs, outputs written twice: sorted, so O(N log N). */
static int check_across(const roicopy_plan *p, frame_check *c)
{
    size_t n = p->nframes, nin = 0, nout = 0, ncan = 0, i;
    ident *ins = (ident *)malloc((n ? n : 1) * sizeof *ins);
    ident *outs = (ident *)malloc((n ? n : 1) * sizeof *outs);
    size_t *can = (size_t *)malloc((n ? n : 1) * sizeof *can);
    int worst = 0;
    if (!ins || !outs || !can) {
        free(ins);
        free(outs);
        free(can);
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    }
    for (i = 0; i < n; ++i) {
        if (c[i].in_known) {
            ins[nin].dev = c[i].in_dev;
            ins[nin].ino = c[i].in_ino;
            ins[nin++].frame = i;
        }
        if (c[i].out_known) {
            outs[nout].dev = c[i].out_dev;
            outs[nout].ino = c[i].out_ino;
            outs[nout++].frame = i;
        }
        if (c[i].out_canon && !c[i].out_known)
            can[ncan++] = i;
    }
    qsort(ins, nin, sizeof *ins, cmp_ident);
    qsort(outs, nout, sizeof *outs, cmp_ident);
    sort_checks = c;
    qsort(can, ncan, sizeof *can, cmp_canon);
    for (i = 0; i < nout; ++i) {
        ident key = outs[i];
        const ident *hit = NULL;
        size_t k = outs[i].frame, lo = 0, hi = nin;
        key.frame = 0; /* the first input that is this file */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_ident(&ins[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nin && ins[lo].dev == key.dev && ins[lo].ino == key.ino)
            hit = &ins[lo];
        roicopy_fail_keep(&c[k].error);
        if (hit) {
            c[k].status = worse(c[k].status, RC_OUTPUT);
            worst = worse(worst, roicopy_fail(
                RC_OUTPUT, p->frames[k].output, "is also an input (%s)",
                roicopy_esc(p->frames[hit->frame].input)));
        } else if (i > 0 && outs[i - 1].dev == outs[i].dev &&
                   outs[i - 1].ino == outs[i].ino) {
            size_t j = outs[i - 1].frame;
            c[k].status = worse(c[k].status, RC_OUTPUT);
            worst = worse(worst, roicopy_fail(
                RC_OUTPUT, p->frames[k].output, "written twice (from %s and "
                "%s)", roicopy_esc(p->frames[j].input),
                roicopy_esc(p->frames[k].input)));
        }
    }
    for (i = 1; i < ncan; ++i) {
        size_t j = can[i - 1], k = can[i];
        if (strcmp(c[j].out_canon, c[k].out_canon) != 0)
            continue;
        roicopy_fail_keep(&c[k].error);
        c[k].status = worse(c[k].status, RC_OUTPUT);
        worst = worse(worst, roicopy_fail(
            RC_OUTPUT, p->frames[k].output, "written twice (from %s and %s)",
            roicopy_esc(p->frames[j].input),
            roicopy_esc(p->frames[k].input)));
    }
    roicopy_fail_keep(NULL);
    free(ins);
    free(outs);
    free(can);
    return worst;
}

/* --skip-existing: an output that is there already, as a regular file
 * (a device or FIFO is written, never "done"). */
static int output_exists(const char *out)
{
    struct stat st;
    return strcmp(out, "-") != 0 && stat(out, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* Move the skipped frames' outputs to p->skipped, keeping the others in
 * their order (and their checks beside them). */
static int drop_skipped(roicopy_plan *p, frame_check *c)
{
    size_t i, kept = 0, n = 0;
    for (i = 0; i < p->nframes; ++i)
        n += c[i].skip;
    if (n == 0)
        return 0;
    p->skipped = (char **)malloc(n * sizeof *p->skipped);
    if (!p->skipped)
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    for (i = 0; i < p->nframes; ++i) {
        if (c[i].skip) {
            p->skipped[p->nskipped++] = p->frames[i].output;
            continue;
        }
        c[kept] = c[i];
        p->frames[kept++] = p->frames[i];
    }
    p->nframes = kept;
    return 0;
}

/* Every input and output is checked and every problem reported, one line
 * each, before anything is done.  Returns the worst status; with
 * --keep-going the frames with problems are dropped from the plan. */
static int plan_frames(const options *o, roicopy_plan *p)
{
    frame_check *c;
    dir_cache dc;
    struct stat list;
    size_t i, kept, n;
    int worst = 0, checked;
    int missing = 0;
    /* The --files-from list is read before anything is written, but an
     * output replacing it would lose the user's list. */
    int list_known = o->files_from && strcmp(o->files_from, "-") != 0 &&
                     stat(o->files_from, &list) == 0;
    if (o->outdir && roicopy_check_outdir(o->outdir, &missing) != 0)
        return RC_OUTPUT;
    /* A missing -o DIR is made once everything is checked (run()); the
     * outputs in it are all new. */
    p->made_dir = missing ? o->outdir : NULL;
    p->nframes = o->outdir ? (size_t)o->nargs : 1;
    p->frames = (roicopy_frame *)calloc(p->nframes, sizeof *p->frames);
    c = (frame_check *)calloc(p->nframes, sizeof *c);
    if (!p->frames || !c) {
        free(c);
        return roicopy_fail(RC_USAGE, NULL, "out of memory");
    }
    memset(&dc, 0, sizeof dc);
    for (i = 0; i < p->nframes; ++i) {
        roicopy_frame *f = &p->frames[i];
        roicopy_fail_keep(&c[i].error);
        f->input = o->args[i];
        f->output = o->outdir ? output_in_dir(o, o->args[i])
                              : strdup(o->args[1]);
        if (!f->output) {
            worst = roicopy_fail(RC_USAGE, NULL, "out of memory");
            break;
        }
        if (o->skip_existing && output_exists(f->output)) {
            c[i].skip = 1; /* not even read: resuming is cheap */
            continue;
        }
        c[i].status = check_input(o, f, &c[i]);
        if (p->made_dir) { /* names compared as given: one directory */
            c[i].out_canon = strdup(f->output);
            /* Nothing is there to look at, but the name is known: a name
             * too long fails now, not after the directory is made. */
            c[i].status = worse(c[i].status,
                                roicopy_check_output_name(f->output));
        } else {
            c[i].status = worse(c[i].status,
                                roicopy_check_output(f->output, &dc, &c[i]));
            c[i].status = worse(c[i].status,
                                check_stdout_output(o, f->output));
            if (list_known && c[i].out_known && c[i].out_dev == list.st_dev &&
                c[i].out_ino == list.st_ino)
                c[i].status = worse(c[i].status, roicopy_fail(
                    RC_OUTPUT, f->output, "is the --files-from list (%s)",
                    roicopy_esc(o->files_from)));
        }
        worst = worse(worst, c[i].status);
    }
    roicopy_fail_keep(NULL);
    checked = i == p->nframes; /* not cut short (out of memory) */
    if (checked)
        worst = worse(worst, check_across(p, c));
    free(dc.dir);
    free(dc.real);
    for (i = 0; i < p->nframes; ++i)
        free(c[i].out_canon);
    if (checked && drop_skipped(p, c) != 0)
        worst = worse(worst, RC_USAGE);
    /* --keep-going: the good frames go on, in their order; the others are
     * kept with their first message, for --json. */
    n = p->nframes;
    if (worst && o->keep_going && checked) {
        p->failed = (roicopy_failure *)malloc((n ? n : 1) * sizeof *p->failed);
        if (!p->failed)
            worst = worse(worst, roicopy_fail(RC_USAGE, NULL, "out of memory"));
        for (i = kept = 0; i < p->nframes; ++i) {
            if (c[i].status) {
                free(p->frames[i].output);
                if (p->failed) {
                    p->failed[p->nfailed].input = p->frames[i].input;
                    p->failed[p->nfailed++].error = c[i].error;
                    c[i].error = NULL;
                }
                continue;
            }
            p->frames[kept++] = p->frames[i];
        }
        p->nframes = kept;
    }
    for (i = 0; i < n; ++i) /* the messages not handed to p->failed */
        free(c[i].error);
    free(c);
    return worst;
}

/* The most device memory one canvas may take: 2^48 bytes (256 TiB), far
 * past any GPU's memory, so that a canvas no device can hold is refused
 * here, before the GPU, rather than by cudaMallocPitch.  A canvas under it
 * that is still larger than the device's memory fails there (exit 5). */
#define ROICOPY_CANVAS_MAX_BYTES (1ULL << 48)

/* Canvas rows must fit the same limits as image rows, and the canvas the
 * bound above. */
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
        if ((unsigned long long)c.total_bytes > ROICOPY_CANVAS_MAX_BYTES)
            return roicopy_fail(
                RC_USAGE, p->frames[i].input, "--canvas %lux%lu of %lu-byte "
                "pixels is %llu bytes of device memory; a canvas may take "
                "at most 2^48 bytes (256 TiB), past any GPU's memory",
                (unsigned long)o->canvas_w, (unsigned long)o->canvas_h,
                (unsigned long)c.pixel_bytes,
                (unsigned long long)c.total_bytes);
    }
    return 0;
}

/* ---- main --------------------------------------------------------------- */

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
    if (p->nframes > 1 && !o->pageable) { /* --pageable: frames one at a time, banded */
        p->streams = DEFAULT_RING_SLOTS;
        if (o->devices_given && 2 * p->ndevices > p->streams)
            p->streams = 2 * p->ndevices > MAX_STREAMS ? MAX_STREAMS
                                                       : 2 * p->ndevices;
    } else if (o->devices_given) {
        p->streams = p->ndevices;
    }
}

/* ROICOPY_IO_ONLY=1: a batch without the GPU (roicopy-ring.c). */
static int io_only(void)
{
    const char *e = getenv("ROICOPY_IO_ONLY");
    return e && *e == '1';
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
    if (p->nframes > 1 && !o->pageable && p->streams < 2)
        p->streams = 2; /* a ring of one slot cannot overlap anything */
    p->pageable = o->pageable;
    p->threads = o->threads_given ? (int)o->threads
                                  : roicopy_batch_threads(p);
    p->io_only = io_only();
    p->prefetch_given = o->prefetch_given;
    p->prefetch_mb = o->prefetch_mb;
    p->verify = o->verify;
    p->repeat = (int)o->repeat;
    p->timing = o->timing;
    p->json = o->json;
    p->quiet = o->quiet;
    p->keep_going = o->keep_going;
    p->progress = p->nframes > 1 && !o->quiet && isatty(2);
}

static void free_plan(roicopy_plan *p)
{
    size_t i;
    for (i = 0; p->frames && i < p->nframes; ++i)
        free(p->frames[i].output);
    for (i = 0; i < p->nskipped; ++i)
        free(p->skipped[i]);
    free(p->skipped);
    for (i = 0; i < p->nfailed; ++i)
        free(p->failed[i].error);
    free(p->failed);
    free(p->frames);
}

/* Many regions of one input (--tiles, --roi repeated, --stack): the
 * options that mean nothing there are refused, the rest handed to
 * roicopy-tiles.c. */
static int run_tiles(const options *o)
{
    roicopy_tiles_request rq;
    int rc, given; /* ROICOPY_PREFETCH_MB: checked, not used here */
    unsigned long mb;
    const char *bad = o->place_given || o->canvas_given ? "--place/--canvas"
                      : o->streams_given                 ? "--streams"
                      : o->threads_given                 ? "--threads"
                      : o->devices_given                 ? "--devices"
                      : o->repeat != 1                   ? "--repeat"
                      : o->timing                        ? "--timing"
                      : o->pageable                      ? "--pageable"
                      : o->keep_going                    ? "--keep-going"
                                                         : NULL;
    if (bad)
        return usage_line(roicopy_fail(RC_USAGE, NULL, "%s does not go with "
                                       "--tiles, --stack or several --roi",
                                       bad));
    if (o->tiles_given && o->nrois)
        return usage_line(roicopy_fail(RC_USAGE, NULL, "--tiles and --roi "
                                       "exclude each other"));
    if (!!o->outdir == !!o->stack)
        return usage_line(roicopy_fail(
            RC_USAGE, NULL, o->stack ? "--stack FILE and -o DIR exclude each "
                                       "other"
                          : o->tiles_given ? "--tiles needs -o DIR or --stack "
                                             "FILE"
                                           : "several --roi need -o DIR or "
                                             "--stack FILE (one output each; "
                                             "INPUT OUTPUT takes one --roi)"));
    if (o->nargs != 1)
        return usage_line(roicopy_fail(
            RC_USAGE, NULL, o->nargs ? "tiles are cut from one INPUT, not %d "
                                       "(the outputs go to -o DIR or "
                                       "--stack FILE)"
                                     : "no INPUT given", o->nargs));
    if ((rc = check_needs(o)) != 0 ||
        (rc = check_environment(&given, &mb)) != 0)
        return rc;
    if (o->json && !o->dry_run)
        return roicopy_fail(RC_USAGE, NULL, "--json with tiles needs "
                            "--dry-run");
    if (o->outdir && !strcmp(o->args[0], "-"))
        return roicopy_fail(RC_USAGE, "-", "standard input has no name for "
                            "the tiles in -o DIR; use --stack FILE");
    memset(&rq, 0, sizeof rq);
    rq.input = o->args[0];
    rq.outdir = o->outdir;
    rq.stack = o->stack;
    rq.rois = o->rois;
    rq.nrois = o->nrois;
    rq.tiles_given = o->tiles_given;
    rq.tile_w = o->tile_w;
    rq.tile_h = o->tile_h;
    rq.step_x = o->step_x;
    rq.step_y = o->step_y;
    rq.format = o->format;
    rq.raw = o->raw_given ? &o->raw : NULL;
    rq.page = (unsigned)o->page;
    rq.dry_run = o->dry_run;
    rq.json = o->json;
    rq.verify = o->verify;
    rq.verbose = o->verbose;
    rq.quiet = o->quiet;
    rq.device = (int)o->device;
    return roicopy_tiles_main(&rq);
}

/* The CUDA context starts on a helper thread now, while the inputs are
 * checked and read (devices.c). */
static void start_cuda_early(const options *o)
{
    int devs[ROICOPY_MAX_DEVICES];
    size_t i, n = o->devices_given ? o->ndevices : 1;
    if (io_only() && o->outdir && o->nargs > 1 && !o->pageable)
        return; /* a batch without the GPU */
    for (i = 0; i < n; ++i)
        devs[i] = o->devices_given ? (int)o->devices[i] : (int)o->device;
    roicopy_gpu_prestart(devs, (int)n);
}

static int run(int argc, char **argv)
{
    options o;
    roicopy_plan p;
    int rc, worst;
    roicopy_trace("main");
    memset(&o, 0, sizeof o);
    memset(&p, 0, sizeof p);
    o.streams = 1;
    o.repeat = 1;
    o.raw.depth = 8;
    if ((rc = parse_options(argc, argv, &o)) >= 0) {
        free(o.args);
        free(o.rois);
        free(o.names_buf);
        return rc;
    }
    if (o.nrois > 1 || o.tiles_given || o.stack) {
        rc = (o.files_from || o.skip_existing)
                 ? usage_line(roicopy_fail(RC_USAGE, NULL, "--files-from and --skip-existing "
                                           "do not go with --tiles, --stack or several --roi"))
                 : run_tiles(&o);
        free(o.args);
        free(o.rois);
        free(o.names_buf);
        return rc;
    }
    if ((rc = check_combinations(&o)) != 0) {
        free(o.args);
        free(o.rois);
        free(o.names_buf);
        return rc;
    }
    if (!o.dry_run && o.nargs > 0)
        start_cuda_early(&o);
    /* Every problem is reported; without --keep-going any one stops the
     * run before anything is done, with it the good frames go on and the
     * exit status is the worst of all. */
    worst = plan_frames(&o, &p);
    roicopy_trace("inputs checked");
    rc = RC_OK;
    if ((!worst || o.keep_going) && p.nframes > 0 &&
        (rc = check_canvas(&o, &p)) == 0) {
        fill_plan(&o, &p);
        /* Accepted, as xargs -P and parallel -j take more slots than
         * jobs: the same command line serves a shard of any size. */
        if (o.verbose && o.threads_given && p.nframes == 1)
            (void)roicopy_fail(RC_OK, NULL, "--threads %lu has nothing to "
                               "do: one frame to copy (the threads read "
                               "ahead and write behind several)",
                               o.threads);
        if (o.dry_run && o.json)
            roicopy_report_plan_json(&p);
        else if (o.dry_run)
            roicopy_report_plan(&p);
        else if (!p.made_dir || (rc = roicopy_make_outdir(p.made_dir)) == 0)
            rc = roicopy_gpu_run(&p);
    } else if ((!worst || p.nfailed > 0) && p.nframes == 0) {
        /* Every output is there already, the list named none, or (-k)
         * every input failed its checks: nothing to do, no CUDA. */
        if (o.verbose && o.nargs == 0)
            (void)roicopy_fail(RC_OK, NULL, "--files-from %s names no input: "
                               "nothing to do", roicopy_esc(o.files_from));
        fill_plan(&o, &p);
        if (o.dry_run && o.json)
            roicopy_report_plan_json(&p);
        else if (o.dry_run)
            roicopy_report_plan(&p);
        else if ((!p.made_dir || (rc = roicopy_make_outdir(p.made_dir)) == 0) &&
                 o.json) /* the directory made, as --dry-run says */
            roicopy_report_nothing(&p);
    }
    roicopy_gpu_join(); /* never exit under a starting context */
    roicopy_trace("the run is over; the process exits");
    free_plan(&p);
    free(o.args);
    free(o.rois);
    free(o.names_buf);
    return worst > rc ? worst : rc;
}

int main(int argc, char **argv)
{
    image_reserve_std_fds(); /* before anything is opened */
    image_install_signal_cleanup();
    roicopy_register_codecs();
    return roicopy_report_close_stdout(run(argc, argv));
}
