/* SPDX-License-Identifier: MIT */
/*
 * frames.h - roicopy's plan (what the command line asked for, checked) and
 * the CPU services every part of roicopy calls: messages, reading a
 * frame's rows, verifying and writing it, the progress bar and the band
 * arithmetic.
 *
 * These services call nothing of roicopy's own: roicopy.c (command line
 * and plan), roicopy-gpu.c, roicopy-ring.c and roicopy-tiles.c (the
 * copies), report.c and timing.c call them, never the other way round
 * (tests/roicopy/tools-no-cycle.sh).
 */
#ifndef ROICOPY_FRAMES_H
#define ROICOPY_FRAMES_H

#include <stddef.h>
#include <stdio.h>

#include "geometry.h"
#include "image.h"

/* Exit statuses (documented in roicopy.1). */
enum {
    RC_OK = 0,     /* success */
    RC_DIFF = 1,   /* --verify found a difference */
    RC_USAGE = 2,  /* bad option or argument, ROI that does not fit */
    RC_INPUT = 3,  /* an input cannot be read or is not a valid image */
    RC_OUTPUT = 4, /* an output cannot be written */
    RC_CUDA = 5    /* CUDA or the device failed */
};

/* cudaMallocPitch rounds rows up to the device's pitch alignment; 512 bytes
 * on every current GPU.  Only the estimates of --dry-run use it: every
 * device buffer, the ring's slots included, has the pitch cudaMallocPitch
 * chose. */
#define ROICOPY_PITCH_ALIGN 512
/* One input without --streams: bands of about this many bytes each way, at
 * most ROICOPY_AUTO_BANDS (frames.c, roicopy_band_count) */
#define ROICOPY_BAND_BYTES ((size_t)8 << 20)
#define ROICOPY_AUTO_BANDS 32

/* The most devices --devices takes (and the most bands or ring slots). */
#define ROICOPY_MAX_DEVICES 64

typedef struct roicopy_frame {
    const char *input;
    char *output;
    image_header in;  /* the input's header */
    image_header out; /* the output's header (ROI size, output format) */
    geom_rect roi;    /* in pixels, inside the input */
    size_t elem_size; /* bytes of one view element */
    size_t elem_per_pixel; /* view elements per pixel (1 unless a pixel is
                              wider than a view element may be) */
} roicopy_frame;

/* -k: an input that failed its checks, and the first message printed
 * for it (roicopy_fail_keep), as on stderr after "roicopy: ". */
typedef struct roicopy_failure {
    const char *input;
    char *error;                /* NULL when it could not be kept */
} roicopy_failure;

typedef struct roicopy_plan {
    roicopy_frame *frames;
    size_t nframes;
    int place;                  /* --place/--canvas given */
    size_t place_x, place_y;    /* in pixels */
    size_t canvas_w, canvas_h;  /* in pixels */
    int streams;                /* bands (one input) or ring slots */
    int streams_given;
    int threads;                /* a batch: threads reading, and threads
                                   writing (--threads) */
    int io_only;                /* ROICOPY_IO_ONLY: a batch's crops on the
                                   CPU, no GPU (to time the file I/O) */
    int prefetch_given;         /* ROICOPY_PREFETCH_MB set and not empty */
    unsigned long prefetch_mb;  /* its value, checked by roicopy.c */
    int pageable, verify, repeat, timing, json, device, quiet;
    int progress;               /* draw a progress bar on stderr */
    /* --skip-existing: the outputs that existed, not made again (their
     * frames are not in frames[]); reported by --dry-run and --json. */
    char **skipped;
    size_t nskipped;
    /* -k: the inputs that failed their checks, in input order (their
     * frames are not in frames[]); reported by --dry-run --json and
     * counted by --json. */
    roicopy_failure *failed;
    size_t nfailed;
    /* -o DIR when it does not exist: made (with its missing parents) once
     * every check has passed; said by --dry-run.  NULL otherwise. */
    const char *made_dir;
    /* The devices in use: --devices LIST, or the one of --device.  Band i
     * and ring slot i live on devices[i % ndevices]; devices[0] is the
     * home device, current between device-specific calls. */
    int devices[ROICOPY_MAX_DEVICES];
    int ndevices;
    int devices_given;          /* --devices given */
    int keep_going;             /* -k: a frame that fails to decode is
                                   reported and skipped, the rest go on */
} roicopy_plan;

/* What the command line asks for with --tiles, --roi repeated or --stack,
 * after roicopy.c refused the options that do not go with them. */
typedef struct roicopy_tiles_request {
    const char *input;
    const char *outdir;         /* -o DIR, or NULL */
    const char *stack;          /* --stack FILE, or NULL */
    const geom_rect *rois;      /* --roi in command-line order */
    size_t nrois;
    int tiles_given;            /* --tiles WxH[+SX+SY] */
    size_t tile_w, tile_h, step_x, step_y;
    image_format format;        /* --format, or 0 */
    const image_raw_spec *raw;  /* --raw, or NULL */
    unsigned page;              /* --page */
    int dry_run, json, verify, verbose, quiet, device;
} roicopy_tiles_request;

/* One region of a many-region run and its output. */
typedef struct roicopy_tile {
    geom_rect r;       /* in pixels, inside the input */
    char *out;         /* -o: DIR/NAME-INDEX.EXT; NULL with --stack */
    image_header hdr;  /* the region's output header */
} roicopy_tile;

/* The plan of a many-region run (roicopy-tiles.c makes it, report.c
 * prints it for --dry-run). */
typedef struct roicopy_tiles_plan {
    const roicopy_tiles_request *rq;
    image_header in;
    image_format to;   /* the outputs' format */
    roicopy_tile *t;
    size_t n;
    size_t cols, rows, dropped; /* --tiles: the grid and the partial tiles */
    size_t elem, epp;  /* view element bytes, elements per pixel */
    int made_dir;      /* -o DIR does not exist: made before the copy */
} roicopy_tiles_plan;

/* ---- messages ----------------------------------------------------------- */

/* Print "roicopy: FILE: message" (or "roicopy: message" when file is NULL)
 * on stderr and return status.  FILE is escaped (roicopy_esc); names
 * inside the message must be escaped by the caller. */
int roicopy_fail(int status, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* While keep is not NULL, the first message of a failure (status not
 * RC_OK) that this thread prints goes into *keep too, malloc'd and without
 * "roicopy: ", when *keep is NULL; -k's checks keep each input's so. */
void roicopy_fail_keep(char **keep);

/* Escaping (roicopy_esc, image_json_string) is escape.h's. */

/* ---- frames ------------------------------------------------------------- */

/* The test build's hook (tests/roicopy/roicopy-hooked, built with
 * ROICOPY_TEST_HOOKS): ROICOPY_TEST_CORRUPT=1 flips *byte, the last byte
 * of what came back from the device, so the tests prove that --verify
 * catches a difference.  The installed roicopy compiles it away: no
 * variable of the environment can change what it writes. */
#ifdef ROICOPY_TEST_HOOKS
void roicopy_test_corrupt(unsigned char *byte);
#else
#define roicopy_test_corrupt(byte) ((void)(byte))
#endif

/* Read the rows of a frame its ROI needs (image_read_rows) into dst (row
 * pitch dst_pitch; rows outside the ROI are left as they are); RC_INPUT
 * with the message printed on failure. */
int roicopy_read_frame(const roicopy_frame *f, void *dst, size_t dst_pitch);

/* Finish a frame whose ROI came back into roi (row pitch roi_pitch):
 * --verify against the CPU crop of image (the whole input, row pitch
 * image_pitch), then write the output atomically.  Returns RC_OK, RC_DIFF or
 * RC_OUTPUT, the message printed. */
int roicopy_finish_frame(const roicopy_plan *p, const roicopy_frame *f,
                         const void *image, size_t image_pitch, void *roi,
                         size_t roi_pitch);

/* roicopy_finish_frame with the input's ROI at crop (its top left pixel;
 * rows image_pitch apart) instead of the whole image. */
int roicopy_finish_frame_at(const roicopy_plan *p, const roicopy_frame *f,
                            const void *crop, size_t image_pitch, void *roi,
                            size_t roi_pitch);

/* Redraw the progress bar (when p->progress) after `done` frames. */
void roicopy_progress(const roicopy_plan *p, size_t done);

/* ---- bands and devices -------------------------------------------------- */

/* The device pitch cudaMallocPitch will most likely choose for rows of
 * row_bytes (rounded up to ROICOPY_PITCH_ALIGN). */
size_t roicopy_pitch_estimate(size_t row_bytes);

/* The number of bands of the one-input path: --streams, at most one band
 * per ROI row. */
int roicopy_band_count(const roicopy_plan *p, const roicopy_frame *f);

/* Rows [*y0, *y1) of band i of n over h rows. */
void roicopy_band_rows(size_t h, size_t n, size_t i, size_t *y0,
                       size_t *y1);

/* The device of band i or ring slot i: round robin over p->devices. */
int roicopy_device_of(const roicopy_plan *p, size_t i);

#endif
