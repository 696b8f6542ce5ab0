/* SPDX-License-Identifier: MIT */
/*
 * roicopy.h - what roicopy's command line (roicopy.c) hands to its GPU part
 * (roicopy-gpu.c), and the CPU services the GPU part calls back.
 *
 * roicopy.c validates everything - options, output paths, every input
 * header, every ROI - before roicopy_gpu_run() makes the first CUDA call, so
 * an error is reported the same with or without a GPU.
 */
#ifndef ROICOPY_H
#define ROICOPY_H

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
 * on every current GPU.  Only estimates (--dry-run) and the ring's device
 * slots, which roicopy lays out itself, use it. */
#define ROICOPY_PITCH_ALIGN 512

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

typedef struct roicopy_plan {
    roicopy_frame *frames;
    size_t nframes;
    int place;                  /* --place/--canvas given */
    size_t place_x, place_y;    /* in pixels */
    size_t canvas_w, canvas_h;  /* in pixels */
    int streams;                /* bands (one input) or ring slots */
    int streams_given;
    int pageable, verify, repeat, timing, json, device, quiet;
    int progress;               /* draw a progress bar on stderr */
    /* --skip-existing: the outputs that existed, not made again (their
     * frames are not in frames[]); reported by --dry-run and --json. */
    char **skipped;
    size_t nskipped;
    /* The devices in use: --devices LIST, or the one of --device.  Band i
     * and ring slot i live on devices[i % ndevices]; devices[0] is the
     * home device, current between device-specific calls. */
    int devices[ROICOPY_MAX_DEVICES];
    int ndevices;
    int devices_given;          /* --devices given */
} roicopy_plan;

/* Print "roicopy: FILE: message" (or "roicopy: message" when file is NULL)
 * on stderr and return status.  FILE is escaped (roicopy_esc); names
 * inside the message must be escaped by the caller. */
int roicopy_fail(int status, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* text escaped for a message (image_escape): file names, tuple types.
 * The result lives until four more calls. */
const char *roicopy_esc(const char *text);

/* Read the rows of a frame its ROI needs (image_read_rows) into dst (row
 * pitch dst_pitch; rows outside the ROI are left as they are); RC_INPUT with the
 * message printed on failure. */
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

/* Write s as a JSON string literal (image_json_string: any bytes). */
void roicopy_json_string(FILE *f, const char *s);

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

/* Start the CUDA context of these devices on a helper thread, so that it
 * overlaps the checks and the reading (never for --dry-run);
 * roicopy_gpu_prestart_join() waits for it (roicopy_gpu_run() does, and
 * roicopy.c before exiting).  ROICOPY_NO_PRESTART in the environment
 * turns it off (for comparisons). */
void roicopy_gpu_prestart(const int *devices, int n);
void roicopy_gpu_prestart_join(void);

/* The GPU part: run the plan, return an exit status. */
int roicopy_gpu_run(const roicopy_plan *p);

/* ---- many regions of one input (roicopy-tiles.c) ------------------------ */

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
    int dry_run, json, verify, verbose, quiet, device;
} roicopy_tiles_request;

/* Check, plan and (unless --dry-run) copy the regions; an exit status. */
int roicopy_tiles_main(const roicopy_tiles_request *rq);

/* --tiles WxH[+SX+SY]: RC_USAGE with the message printed on error. */
int roicopy_tiles_option(const char *arg, size_t *w, size_t *h, size_t *sx,
                         size_t *sy);

/* Append r to the growing array *rois of *n; -1 when out of memory. */
int roicopy_tiles_add_roi(geom_rect **rois, size_t *n, const geom_rect *r);

/* The checks of roicopy.c shared with the tiles: a region (`what`: "ROI",
 * "tile") inside the input, and an output path (name, directory, an
 * existing file roicopy may replace, not the input).  The status, with the
 * message printed. */
int roicopy_check_rect(const char *input, const image_header *in,
                       const geom_rect *r, const char *what);
int roicopy_check_output_path(const char *out, const char *input);

#endif
