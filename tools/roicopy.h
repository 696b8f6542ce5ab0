/* SPDX-License-Identifier: MIT */
/*
 * roicopy.h - what roicopy's command line (roicopy.c) hands to the copies:
 * the plan to roicopy-gpu.c, a many-region request to roicopy-tiles.c.
 *
 * roicopy.c validates everything - options, output paths, every input
 * header, every ROI - before roicopy_gpu_run() makes the first CUDA call, so
 * an error is reported the same with or without a GPU.
 *
 * The files by role, each calling only those below it (no two call each
 * other; tests/roicopy/tools-no-cycle.sh checks the objects):
 *   roicopy.c         command line, validation, the plan
 *   roicopy-gpu.c     the copies of one input (bands), the dispatch
 *   roicopy-ring.c    the copies of a batch (the transfer ring)
 *   roicopy-tiles.c   many regions of one input (--tiles, --roi, --stack)
 *   timing.c          what --timing measures beside the copies
 *   prefetch.c        a batch's reads, ahead, into reused buffers
 *   devices.c         CUDA services: failures, devices, host buffers, ROIs
 *   report.c          what is printed: the --dry-run plan, times, JSON
 *   checks.c          regions and output paths, checked before any copy
 *   frames.c          reading, verifying, writing frames, bands, messages
 *   longopts.c        an ambiguous long option's names (xferbench's too)
 * and below them the image files (HACKING, "roicopy's sources"):
 *   image.c           the format table, dispatch to each format's codec
 *   netpbm.c png-io.c tiff-io.c   the codecs (formats.c registers png, tiff)
 *   input.c output.c  opening inputs; the output file (temp, rename, sync)
 *   escape.c          untrusted text for messages and JSON
 */
#ifndef ROICOPY_H
#define ROICOPY_H

#include <stddef.h>

#include "frames.h"
#include "geometry.h"
#include "image.h"

/* ---- one input or a batch (roicopy-gpu.c) -------------------------------- */

/* Run the plan, return an exit status. */
int roicopy_gpu_run(const roicopy_plan *p);

/* ---- a batch through the transfer ring (roicopy-ring.c) ------------------ */

/* Copy every frame of the plan through a ring of p->streams slots, with
 * p->threads threads reading ahead (prefetch.c) and p->threads copying and
 * writing; roicopy_gpu_run() calls it, and it waits for the CUDA context
 * itself.  An exit status. */
int roicopy_ring_run(const roicopy_plan *p);

/* ---- many regions of one input (roicopy-tiles.c) ------------------------ */

/* The request (roicopy_tiles_request) and its plan are frames.h's. */

/* Check, plan and (unless --dry-run) copy the regions; an exit status. */
int roicopy_tiles_main(const roicopy_tiles_request *rq);

/* --tiles WxH[+SX+SY]: RC_USAGE with the message printed on error. */
int roicopy_tiles_option(const char *arg, size_t *w, size_t *h, size_t *sx,
                         size_t *sy);

/* Append r to the growing array *rois of *n; -1 when out of memory. */
int roicopy_tiles_add_roi(geom_rect **rois, size_t *n, const geom_rect *r);

#endif
