/* SPDX-License-Identifier: MIT */
/*
 * prefetch.h - the read side of a batch (roicopy-ring.c is the rest):
 * frames read ahead, in order, on a pool of threads, into a bounded set of
 * reused buffers, starting while the CUDA context starts.  Calls nothing
 * of roicopy's own but frames.c: image.c reads.
 *
 * A buffer holds one frame from its read until its output is written: the
 * input (only the ROI's rows of netpbm and raw files; PNG and TIFF are
 * decoded whole) and the ROI's download.  The buffers are ordinary memory,
 * never page-locked: the ring's slots are the pinned memory, and a frame is
 * copied into one (the ROI only) and back (roicopy-ring.c), so that the
 * number of frames in flight through the GPU (--streams) and the number of
 * frames being read or written (--threads) are independent.
 */
#ifndef ROICOPY_PREFETCH_H
#define ROICOPY_PREFETCH_H

#include <pthread.h>
#include <stddef.h>

#include "frames.h"

/* This machine's physical memory in bytes, asked once (0: unknown). */
unsigned long long roicopy_memory_bytes(void);

/* The I/O threads of a batch when --threads does not say: the online
 * CPUs (at least 4, at most 64), no more than frames, and no more than a
 * quarter of the memory holds buffers for (two each: one being written,
 * one read ahead). */
int roicopy_batch_threads(const roicopy_plan *p);

/* A frame's state in the set. */
enum { PF_WAITING, PF_READING, PF_READ, PF_FAILED };

/* A frame that was read: where its pixels are.  crop is the ROI's first
 * pixel in in, pitch the input's row bytes. */
typedef struct prefetched {
    unsigned char *in;   /* the rows read (or the whole decoded image) */
    unsigned char *out;  /* the ROI's download lands here */
    const unsigned char *crop; /* the ROI's top left pixel in `in` */
    int buffer;          /* which buffer (roicopy_prefetch_done) */
    int state;           /* PF_READ or PF_FAILED */
    char err[IMAGE_ERR_MAX]; /* PF_FAILED: why, told when its turn comes */
} prefetched;

typedef struct prefetch_set {
    const roicopy_plan *p;
    prefetched *pf;        /* one per frame */
    unsigned char **bufs;  /* nbufs buffers: the input, then the output */
    int *free_bufs;        /* a stack of free buffer indices */
    int nbufs, nfree;
    size_t out_offset;     /* out at out_offset of each buffer */
    size_t next;           /* the next frame to read */
    int go;                /* reading allowed (0 until roicopy_prefetch_go
                              with ROICOPY_PREFETCH_MB=0) */
    int stop;              /* no more reading, no more waiting */
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* a frame read, a buffer freed, go, stop */
    pthread_t *threads;
    int nthreads;
} prefetch_set;

/* Allocate the buffers (as many frames as ROICOPY_PREFETCH_MB allows, a
 * quarter of the memory and at most 1024 MB by default; at least two per
 * thread, at most one per frame) and start p->threads reading threads.
 * NULL when out of memory (the message printed). */
prefetch_set *roicopy_prefetch_start(const roicopy_plan *p);

/* Let the threads read (after ROICOPY_PREFETCH_MB=0 held them back until
 * the GPU was ready); safe on NULL. */
void roicopy_prefetch_go(prefetch_set *ps);

/* Wait until frame i is read (or failed to be); NULL when the set was
 * stopped first.  Frames must be taken in order. */
const prefetched *roicopy_prefetch_take(prefetch_set *ps, size_t i);

/* Frame i is written (or dropped): its buffer goes back for a later
 * frame, or is freed now when every frame has a buffer. */
void roicopy_prefetch_done(prefetch_set *ps, size_t i);

/* No more reading: wakes every waiting thread (readers and takers). */
void roicopy_prefetch_stop(prefetch_set *ps);

/* Stop, join the threads and free everything; safe on NULL. */
void roicopy_prefetch_free(prefetch_set *ps);

#endif
