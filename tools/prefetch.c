/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c - frames of a batch read ahead, in order, on a pool of
 * threads into reused buffers (prefetch.h).
 *
 * Why a pool of its own: the outputs are fsynced, and an fsync waits for
 * the disk.  The writing threads (roicopy-ring.c) spend most of their time
 * there, so reading on the same threads would leave the reads waiting
 * behind the writes; here the next frames are read while the writes wait,
 * and before the first write, while the CUDA context starts.
 */
#include "prefetch.h"
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Frame buffers of a huge page or more are aligned to one and asked for
 * transparent huge pages: a batch touches each buffer once, and with 4 KiB
 * pages faulting them in and unmapping them at the end was most of a
 * 32-frame batch's system time (and contends with the CUDA context's start
 * for the address space).  Smaller ones stay page aligned. */
#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_page(size_t n) { return (n + 4095) / 4096 * 4096; }

/* What frame f's read leaves in its buffer: only the ROI's rows where the
 * format reads rows alone, else the whole image. */
static size_t in_bytes(const roicopy_frame *f)
{
    return image_can_read_span(&f->in) ? f->roi.height * f->in.row_bytes
                                       : f->in.total_bytes;
}

/* The largest input and output of the batch: every buffer can hold any
 * frame. */
static void frame_sizes(const roicopy_plan *p, size_t *in, size_t *out)
{
    size_t i;
    *in = *out = 0;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        if (in_bytes(f) > *in)
            *in = in_bytes(f);
        if (f->out.total_bytes > *out)
            *out = f->out.total_bytes;
    }
    *in = round_page(*in);
    *out = round_page(*out);
}

unsigned long long roicopy_memory_bytes(void)
{
    static unsigned long long mem = 1; /* 1: not asked yet */
    if (mem == 1) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        mem = pages > 0 && psz > 0 ? (unsigned long long)pages * (unsigned long long)psz : 0;
    }
    return mem;
}

static size_t quarter_of_memory(void)
{
    unsigned long long mem = roicopy_memory_bytes();
    if (mem == 0)
        return (size_t)1 << 30;
    return mem / 4 > SIZE_MAX ? SIZE_MAX : (size_t)(mem / 4);
}

int roicopy_batch_threads(const roicopy_plan *p)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t in, out, per, mem = quarter_of_memory();
    int t = cpus < 4 ? 4 : cpus > 64 ? 64 : (int)cpus;
    if ((size_t)t > p->nframes)
        t = p->nframes > 0 ? (int)p->nframes : 1;
    frame_sizes(p, &in, &out);
    per = in + out;
    /* Two buffers a thread: one being written, one read ahead. */
    if (per > 0 && (size_t)t * 2 * per > mem)
        t = mem / (2 * per) > 0 ? (int)(mem / (2 * per)) : 1;
    return t;
}

/* Megabytes of buffers: ROICOPY_PREFETCH_MB (read and checked by
 * roicopy.c with the options), else a quarter of the memory, at most 1024
 * (well under a second of reading from an SSD). */
static size_t prefetch_cap(const roicopy_plan *p, int *hold)
{
    size_t cap = (size_t)1 << 30, mem = quarter_of_memory();
    unsigned long mb = p->prefetch_mb;
    *hold = 0;
    if (p->prefetch_given) {
        cap = mb > (SIZE_MAX >> 20) ? SIZE_MAX : (size_t)mb << 20; /* huge: no cap */
        *hold = cap == 0;
        return cap;
    }
    return mem < cap ? mem : cap;
}

static void read_one(prefetch_set *ps, size_t i, unsigned char *buf)
{
    const roicopy_frame *f = &ps->p->frames[i];
    prefetched *q = &ps->pf[i];
    int rc;
    q->in = buf;
    q->out = buf + ps->out_offset;
    q->err[0] = '\0';
    if (image_can_read_span(&f->in)) {
        rc = image_read_span(f->input, &f->in, f->roi.y, f->roi.height, buf,
                             f->in.row_bytes, q->err, sizeof q->err);
        q->crop = buf + f->roi.x * f->in.pixel_bytes;
    } else {
        rc = image_read_pixels(f->input, &f->in, buf, f->in.row_bytes,
                               q->err, sizeof q->err);
        q->crop = buf + f->roi.y * f->in.row_bytes +
                  f->roi.x * f->in.pixel_bytes;
    }
    if (i == 0 || i + 1 == ps->p->nframes)
        roicopy_trace(i == 0 ? "frame 0 read" : "the last frame read");
    pthread_mutex_lock(&ps->mu);
    q->state = rc ? PF_FAILED : PF_READ;
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

/* A reading thread: the next frame into the next free buffer, in frame
 * order, until every frame is read or the set is stopped. */
static void *prefetch_main(void *arg)
{
    prefetch_set *ps = (prefetch_set *)arg;
    pthread_mutex_lock(&ps->mu);
    for (;;) {
        size_t i;
        int b;
        while (!ps->stop && ps->next < ps->p->nframes &&
               (!ps->go || ps->nfree == 0))
            pthread_cond_wait(&ps->cv, &ps->mu);
        if (ps->stop || ps->next >= ps->p->nframes)
            break;
        i = ps->next++;
        b = ps->free_bufs[--ps->nfree];
        ps->pf[i].buffer = b;
        ps->pf[i].state = PF_READING;
        pthread_mutex_unlock(&ps->mu);
        read_one(ps, i, ps->bufs[b]);
        pthread_mutex_lock(&ps->mu);
    }
    pthread_mutex_unlock(&ps->mu);
    return NULL;
}

/* Up to n buffers; fewer when memory runs out (any number works, one
 * frame at a time at worst: a buffer is held only by a frame that was
 * read, and frames are read and taken in order).  -1 for none. */
static int alloc_buffers(prefetch_set *ps, int n, size_t bytes)
{
    int i;
    size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 4096;
    ps->bufs = (unsigned char **)calloc((size_t)n, sizeof *ps->bufs);
    ps->free_bufs = (int *)calloc((size_t)n, sizeof *ps->free_bufs);
    if (!ps->bufs || !ps->free_bufs)
        return -1;
    for (i = 0; i < n; ++i) {
        if (posix_memalign((void **)&ps->bufs[i], align, bytes) != 0) {
            ps->bufs[i] = NULL;
            break;
        }
#ifdef MADV_HUGEPAGE
        if (align == HUGE_PAGE)
            (void)madvise(ps->bufs[i], bytes, MADV_HUGEPAGE);
#endif
        ps->nbufs = i + 1;
    }
    for (i = ps->nbufs - 1; i >= 0; --i) /* buffer 0 first */
        ps->free_bufs[ps->nfree++] = i;
    return ps->nbufs > 0 ? 0 : -1;
}

prefetch_set *roicopy_prefetch_start(const roicopy_plan *p)
{
    size_t in = 0, out = 0, per = 0, cap, want;
    int hold, lo = 2 * p->threads, t;
    prefetch_set *ps = (prefetch_set *)calloc(1, sizeof *ps);
    if (!ps)
        goto oom;
    ps->p = p;
    pthread_mutex_init(&ps->mu, NULL);
    pthread_cond_init(&ps->cv, NULL);
    frame_sizes(p, &in, &out);
    per = in + out;
    cap = prefetch_cap(p, &hold);
    want = per ? cap / per : p->nframes;
    if (want < (size_t)lo)
        want = (size_t)lo;
    if (want > p->nframes)
        want = p->nframes;
    ps->out_offset = in;
    ps->go = !hold;
    ps->pf = (prefetched *)calloc(p->nframes ? p->nframes : 1, sizeof *ps->pf);
    ps->threads = (pthread_t *)calloc((size_t)p->threads, sizeof *ps->threads);
    if (!ps->pf || !ps->threads || alloc_buffers(ps, (int)want, per) != 0)
        goto oom;
    for (t = 0; t < p->threads; ++t)
        if (pthread_create(&ps->threads[ps->nthreads], NULL, prefetch_main,
                           ps) == 0)
            ++ps->nthreads;
    if (ps->nthreads == 0) {
        roicopy_prefetch_free(ps);
        (void)roicopy_fail(RC_INPUT, p->frames[0].input,
                           "cannot start a reading thread");
        return NULL;
    }
    return ps;
oom:
    roicopy_prefetch_free(ps);
    (void)roicopy_fail(RC_INPUT, p->frames[0].input, "out of memory for "
                       "a frame's buffer (%lu bytes)", (unsigned long)per);
    return NULL;
}

void roicopy_prefetch_go(prefetch_set *ps)
{
    if (!ps)
        return;
    pthread_mutex_lock(&ps->mu);
    ps->go = 1;
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

const prefetched *roicopy_prefetch_take(prefetch_set *ps, size_t i)
{
    const prefetched *q;
    pthread_mutex_lock(&ps->mu);
    while (!ps->stop && ps->pf[i].state != PF_READ &&
           ps->pf[i].state != PF_FAILED)
        pthread_cond_wait(&ps->cv, &ps->mu);
    q = ps->stop ? NULL : &ps->pf[i];
    pthread_mutex_unlock(&ps->mu);
    return q;
}

/* Frame i's buffer back: to the free list while frames are left to read,
 * else freed now, on this worker, while the others still write (at the
 * end of the batch it would be freed after the last write). */
void roicopy_prefetch_done(prefetch_set *ps, size_t i)
{
    unsigned char *drop = NULL;
    pthread_mutex_lock(&ps->mu);
    if (ps->pf[i].state == PF_READ || ps->pf[i].state == PF_FAILED) {
        int b = ps->pf[i].buffer;
        if (ps->next >= ps->p->nframes) {
            drop = ps->bufs[b];
            ps->bufs[b] = NULL;
        } else {
            ps->free_bufs[ps->nfree++] = b;
        }
        ps->pf[i].state = PF_WAITING;
        pthread_cond_broadcast(&ps->cv);
    }
    pthread_mutex_unlock(&ps->mu);
    free(drop);
}

void roicopy_prefetch_stop(prefetch_set *ps)
{
    if (!ps)
        return;
    pthread_mutex_lock(&ps->mu);
    ps->stop = 1;
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

void roicopy_prefetch_free(prefetch_set *ps)
{
    int t;
    if (!ps)
        return;
    roicopy_prefetch_stop(ps);
    for (t = 0; t < ps->nthreads; ++t)
        (void)pthread_join(ps->threads[t], NULL);
    for (t = 0; ps->bufs && t < ps->nbufs; ++t)
        free(ps->bufs[t]);
    free(ps->bufs);
    free(ps->free_bufs);
    free(ps->threads);
    free(ps->pf);
    pthread_mutex_destroy(&ps->mu);
    pthread_cond_destroy(&ps->cv);
    free(ps);
}
