/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c - frames read ahead while the CUDA context starts, then
 * page-locked so that the ring's copies use them in place (prefetch.h).
 */
#include "prefetch.h"

#include <cuxfer.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t prefetch_cap(void)
{
    const char *e = getenv("ROICOPY_PREFETCH_MB");
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t cap = (size_t)1 << 30; /* well under a second from an SSD */
    if (e && *e)
        return (size_t)strtoul(e, NULL, 10) << 20;
    if (pages > 0 && psz > 0 && (size_t)pages / 4 < cap / (size_t)psz)
        cap = (size_t)pages / 4 * (size_t)psz;
    return cap;
}

static void *prefetch_main(void *arg)
{
    prefetch_set *ps = (prefetch_set *)arg;
    const roicopy_plan *p = ps->p;
    for (;;) {
        size_t i = __atomic_fetch_add(&ps->next, 1, __ATOMIC_SEQ_CST);
        const roicopy_frame *f;
        prefetched *q;
        if (i >= p->nframes)
            break;
        q = &ps->pf[i];
        if (!q->in_bytes)
            continue;
        f = &p->frames[i];
        if (posix_memalign((void **)&q->in, 4096, q->in_bytes) != 0 ||
            posix_memalign((void **)&q->out, 4096, q->out_bytes) != 0) {
            free(q->in); /* not read ahead: the ring reads it */
            q->in = q->out = NULL;
            continue;
        }
        memset(q->out, 0, q->out_bytes); /* touched now, not while locking */
        if (image_read_span(f->input, &f->in, f->roi.y, f->roi.height, q->in,
                            f->in.row_bytes, q->err, sizeof q->err) != 0)
            q->read_failed = 1;
    }
    return NULL;
}

prefetch_set *roicopy_prefetch_start(const roicopy_plan *p)
{
    size_t i, total = 0, cap = prefetch_cap(), n = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    prefetch_set *ps;
    int t;
    if (p->nframes < 2 || p->pageable || cap == 0)
        return NULL;
    ps = (prefetch_set *)calloc(1, sizeof *ps);
    if (!ps || !(ps->pf = (prefetched *)calloc(p->nframes, sizeof *ps->pf))) {
        free(ps);
        return NULL;
    }
    ps->p = p;
    for (i = 0; i < p->nframes; ++i) {
        const roicopy_frame *f = &p->frames[i];
        size_t in = f->roi.height * f->in.row_bytes, out = f->out.total_bytes;
        if (f->in.format == IMAGE_PNG || f->in.format == IMAGE_TIFF ||
            total + in + out > cap)
            continue;
        ps->pf[i].in_bytes = in;
        ps->pf[i].out_bytes = out;
        total += in + out;
        ++n;
    }
    for (t = 0; t < 8 && (size_t)t < n && (cpus <= 0 || t < cpus); ++t)
        if (pthread_create(&ps->threads[t], NULL, prefetch_main, ps) == 0)
            ++ps->nthreads;
    if (n && ps->nthreads == 0)
        (void)prefetch_main(ps); /* no thread: read them here */
    return ps;
}

void roicopy_prefetch_join(prefetch_set *ps)
{
    int t;
    if (!ps)
        return;
    for (t = 0; t < ps->nthreads; ++t)
        (void)pthread_join(ps->threads[t], NULL);
    ps->nthreads = 0;
}

void roicopy_prefetch_register(prefetch_set *ps)
{
    size_t i;
    if (!ps)
        return;
    for (i = 0; i < ps->p->nframes; ++i) {
        prefetched *q = &ps->pf[i];
        if (!q->in || q->read_failed)
            continue;
        if (cuxfer_host_register(q->in, q->in_bytes,
                                 cudaHostRegisterPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (cuxfer_host_register(q->out, q->out_bytes,
                                 cudaHostRegisterPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            (void)cuxfer_host_unregister(q->in);
            continue;
        }
        q->registered = 1;
    }
}

void roicopy_prefetch_free(prefetch_set *ps)
{
    size_t i;
    if (!ps)
        return;
    roicopy_prefetch_join(ps);
    for (i = 0; i < ps->p->nframes; ++i) {
        prefetched *q = &ps->pf[i];
        if (q->registered) {
            (void)cuxfer_host_unregister(q->in);
            (void)cuxfer_host_unregister(q->out);
        }
        free(q->in);
        free(q->out);
    }
    free(ps->pf);
    free(ps);
}

const prefetched *roicopy_prefetched(const prefetch_set *ps, size_t i)
{
    return ps && ps->pf[i].registered ? &ps->pf[i] : NULL;
}
