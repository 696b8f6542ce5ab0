/* SPDX-License-Identifier: MIT */
/*
 * prefetch.h - frames of a batch read ahead on threads while the CUDA
 * context starts (roicopy-ring.c uses them).  Calls nothing of
 * roicopy's own: image.c reads, cuxfer.h page-locks.
 */
#ifndef ROICOPY_PREFETCH_H
#define ROICOPY_PREFETCH_H

#include <pthread.h>
#include <stddef.h>

#include "frames.h"

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

/* Choose the frames (in order, up to a share of the memory, or
 * ROICOPY_PREFETCH_MB) and start reading them on threads; NULL when
 * nothing is read ahead (one frame, --pageable). */
prefetch_set *roicopy_prefetch_start(const roicopy_plan *p);

/* Wait for the reading threads; safe on NULL. */
void roicopy_prefetch_join(prefetch_set *ps);

/* Page-lock what was read (CUDA is up); a frame that cannot be locked is
 * copied into its ring slot instead.  Safe on NULL. */
void roicopy_prefetch_register(prefetch_set *ps);

/* Join, unlock and free everything; safe on NULL. */
void roicopy_prefetch_free(prefetch_set *ps);

/* The read-ahead buffers of frame i, when its copies use them (read and
 * page-locked); else NULL. */
const prefetched *roicopy_prefetched(const prefetch_set *ps, size_t i);

#endif
