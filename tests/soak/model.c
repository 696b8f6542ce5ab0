/* SPDX-License-Identifier: MIT */
/*
 * model.c - the soak's oracle for geometry: what each check must answer,
 * computed here from the man pages' rules with the compiler's overflow
 * builtins and byte maps, sharing no code with cuxfer.h.
 */
#include "soak.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int mul(size_t a, size_t b, size_t *r) { return __builtin_mul_overflow(a, b, r); }
static int add(size_t a, size_t b, size_t *r) { return __builtin_add_overflow(a, b, r); }

/* man 3 cuxfer_view: elem_size 1..64, a pointer, row <= pitch (else
 * InvalidPitchValue), the span addressable; empty views valid. */
cudaError_t model_view_check(const cuxfer_view *v)
{
    size_t row, span;
    if (!v || v->elem_size < 1 || v->elem_size > CUXFER_ELEM_MAX || !v->ptr)
        return cudaErrorInvalidValue;
    if (mul(v->width, v->elem_size, &row))
        return cudaErrorInvalidValue;
    if (row > v->pitch)
        return cudaErrorInvalidPitchValue;
    if (v->width == 0 || v->height == 0)
        return cudaSuccess;
    if (mul(v->height - 1, v->pitch, &span) || add(span, row, &span) ||
        (uintptr_t)v->ptr > UINTPTR_MAX - span)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* man 3 cuxfer_view: what cuxfer_view_alloc_host (host 1) and
 * cuxfer_view_alloc_device refuse before they allocate: no view,
 * elem_size outside 1..64, width or height 0, (host) a row_align other
 * than 0 (1) or a power of two, and a size past size_t, rows padded to
 * row_align.  cudaSuccess: it would allocate. */
cudaError_t model_view_alloc_args(const cuxfer_view *v, size_t w, size_t h, size_t es, int host,
                                  size_t align)
{
    size_t row, padded, total;
    if (!align)
        align = 1;
    if (!v || es < 1 || es > CUXFER_ELEM_MAX || (host && (align & (align - 1))) || !w || !h)
        return cudaErrorInvalidValue;
    if (!host)
        align = 1;
    if (mul(w, es, &row) || add(row, align - 1, &padded) ||
        mul(padded / align * align, h, &total))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* man 3 cuxfer_view: cuxfer_view_init also refuses a kind outside the
 * cuxfer_memkind values and a device below -1 (host). */
cudaError_t model_view_init_args(int kind, int device)
{
    if (kind < CUXFER_MEMORY_UNKNOWN || kind > CUXFER_MEMORY_MANAGED || device < -1)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t model_view_sub(const cuxfer_view *v, cuxfer_roi r, cuxfer_view *sub)
{
    size_t ex, ey, off, xo;
    cudaError_t e = model_view_check(v);
    if (e != cudaSuccess)
        return e;
    if (add(r.x, r.width, &ex) || ex > v->width || add(r.y, r.height, &ey) || ey > v->height)
        return cudaErrorInvalidValue;
    if (mul(r.y, v->pitch, &off) || mul(r.x, v->elem_size, &xo) || add(off, xo, &off) ||
        (uintptr_t)v->ptr > UINTPTR_MAX - off)
        return cudaErrorInvalidValue;
    *sub = *v;
    sub->ptr = (void *)((uintptr_t)v->ptr + off);
    sub->width = r.width;
    sub->height = r.height;
    sub->flags = 0;
    return cudaSuccess;
}

void *model_view_at(const cuxfer_view *v, size_t x, size_t y)
{
    if (model_view_check(v) != cudaSuccess || x >= v->width || y >= v->height)
        return NULL;
    return (void *)((uintptr_t)v->ptr + y * v->pitch + x * v->elem_size);
}

/* Byte by byte: some byte in a row of both (views of equal row bytes). */
int model_overlap(const cuxfer_view *a, const cuxfer_view *b)
{
    size_t w = a->width * a->elem_size, ya, yb;
    if (!w || !a->height || !b->height || w != b->width * b->elem_size)
        return 0;
    for (ya = 0; ya < a->height; ++ya) {
        uintptr_t as = (uintptr_t)a->ptr + ya * a->pitch;
        for (yb = 0; yb < b->height; ++yb) {
            uintptr_t bs = (uintptr_t)b->ptr + yb * b->pitch;
            if (as < bs + w && bs < as + w)
                return 1;
        }
    }
    return 0;
}

/* man 3 cuxfer_copy2d_async: ... and, for a copy of more than one row
 * that is not one range (both views contiguous) nor empty, both pitches
 * at most max_pitch (0 skips that check). */
cudaError_t model_copy2d_check(const cuxfer_view *d, const cuxfer_view *s, size_t max_pitch)
{
    cudaError_t e;
    if ((e = model_view_check(d)) != cudaSuccess || (e = model_view_check(s)) != cudaSuccess)
        return e;
    if (d->width != s->width || d->height != s->height || d->elem_size != s->elem_size)
        return cudaErrorInvalidValue;
    if (model_overlap(d, s))
        return cudaErrorInvalidValue;
    if (max_pitch && s->height > 1 && cuxfer_view_row_bytes(s) > 0 &&
        !(d->pitch == cuxfer_view_row_bytes(d) && s->pitch == cuxfer_view_row_bytes(s)) &&
        (d->pitch > max_pitch || s->pitch > max_pitch))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t model_copy_check(const void *d, const void *s, size_t n)
{
    uintptr_t a = (uintptr_t)d, b = (uintptr_t)s;
    if (!n)
        return cudaSuccess;
    if (!d || !s || a > UINTPTR_MAX - n || b > UINTPTR_MAX - n)
        return cudaErrorInvalidValue;
    return (a < b + n && b < a + n) ? cudaErrorInvalidValue : cudaSuccess;
}

/* man 3 cuxfer_rois: both views valid, every ROI inside the host view, the
 * dense view contiguous and holding the packed tiles; a download's tiles
 * disjoint. */
cudaError_t model_rois_check(int dir, const cuxfer_view *host, const cuxfer_roi *r, size_t n,
                             const cuxfer_view *dense, size_t *total)
{
    size_t i, j, sum = 0, b;
    cudaError_t err;
    if (dir != CUXFER_ROIS_H2D && dir != CUXFER_ROIS_D2H)
        return cudaErrorInvalidValue;
    if ((err = model_view_check(host)) != cudaSuccess || (err = model_view_check(dense)) != cudaSuccess)
        return err;
    if ((!r && n) || host->elem_size != dense->elem_size)
        return cudaErrorInvalidValue;
    if (dense->height > 1 && dense->pitch != dense->width * dense->elem_size)
        return cudaErrorInvalidValue; /* the dense view is contiguous */
    for (i = 0; i < n; ++i) {
        if (model_roi_outside(&r[i], host->width, host->height))
            return cudaErrorInvalidValue;
        if (mul(r[i].width, r[i].height, &b) || mul(b, host->elem_size, &b) || add(sum, b, &sum))
            return cudaErrorInvalidValue;
    }
    if (sum > dense->width * dense->elem_size * dense->height)
        return cudaErrorInvalidValue;
    if (dir == CUXFER_ROIS_D2H)
        for (i = 0; i < n; ++i)
            for (j = i + 1; j < n; ++j)
                if (model_rois_meet(&r[i], &r[j]))
                    return cudaErrorInvalidValue;
    if (total)
        *total = sum;
    return cudaSuccess;
}

/* man 3 cuxfer_rois: off[i] the bytes of tiles 0..i-1, off[n] the
 * total; a size that overflows size_t is refused. */
cudaError_t model_rois_offsets(const cuxfer_roi *r, size_t n, size_t es, size_t *off)
{
    size_t i, b, sum = 0;
    for (i = 0; i < n; ++i) {
        off[i] = sum;
        if (mul(r[i].width, r[i].height, &b) || mul(b, es, &b) || add(sum, b, &sum))
            return cudaErrorInvalidValue;
    }
    off[n] = sum;
    return cudaSuccess;
}

/* 1 when ROI r leaves a view of w x h elements (or its end overflows). */
int model_roi_outside(const cuxfer_roi *r, size_t w, size_t h)
{
    size_t e;
    return add(r->x, r->width, &e) || e > w || add(r->y, r->height, &e) || e > h;
}

/* 1 when two ROIs share a pixel (empty ones share none). */
int model_rois_meet(const cuxfer_roi *a, const cuxfer_roi *b)
{
    return a->width && a->height && b->width && b->height && a->x < b->x + b->width &&
           b->x < a->x + a->width && a->y < b->y + b->height && b->y < a->y + a->height;
}

/* man 3 cuxfer_pinned_pool: exact below 64 bytes, else at most 12.5%
 * above; 0 for 0 and for sizes no class holds (above SIZE_MAX / 2).
 * *exact: 1 when the answer is known exactly (the bound otherwise). */
size_t model_class_size(size_t n, int *exact)
{
    *exact = 1;
    if (n == 0 || n > SIZE_MAX / 2)
        return 0;
    if (n < 64)
        return n;
    *exact = 0;
    return n + n / 8;
}

/* Rows of s into d, host memory, with the model's own addresses. */
void model_copy2d(const cuxfer_view *d, const cuxfer_view *s)
{
    size_t y, w = s->width * s->elem_size;
    for (y = 0; y < s->height; ++y)
        memmove((unsigned char *)d->ptr + y * d->pitch, (const unsigned char *)s->ptr + y * s->pitch,
                w);
}

/* H2D: the tiles, in order, packed row by row into dense; D2H: back. */
void model_rois_pack(int dir, const cuxfer_view *host, const cuxfer_roi *r, size_t n,
                     unsigned char *dense)
{
    size_t i, y, off = 0, es = host->elem_size;
    for (i = 0; i < n; ++i) {
        size_t w = r[i].width * es;
        for (y = 0; y < r[i].height; ++y) {
            unsigned char *h = (unsigned char *)host->ptr + (r[i].y + y) * host->pitch + r[i].x * es;
            if (dir == CUXFER_ROIS_H2D)
                memcpy(dense + off, h, w);
            else
                memcpy(h, dense + off, w);
            off += w;
        }
    }
}

/* man 3 cuxfer_plan2d, cuxfer_plan2d_choose: the strategy of a copy of
 * `height` rows of `row` bytes, the source's rows `spitch` apart, from
 * memory of kind skind to dkind, by the plan's opt and tuning.  SPAN
 * needs a pinned source with a pitch wider than its rows and a device
 * destination, PACK a device source and a pinned destination; fewer than
 * two rows, an empty row or one longer than a chunk (for PACK: than a
 * slot, half a chunk buffer rounded down to a multiple of 256 bytes and at
 * most 4 MiB) go direct; AUTO takes SPAN
 * for rows of at most span_max_row bytes at a pitch of at most max_ratio
 * rows, PACK for rows of at most pack_max_row, both only for copies of at
 * least min_bytes. */
int model_plan2d_choose(const cuxfer_plan2d *p, int dkind, int skind, size_t row, size_t height,
                        size_t spitch)
{
    size_t chunk = p->opt.chunk_bytes, half = chunk / 2 / 256 * 256,
           slot = half < ((size_t)4 << 20) ? half : (size_t)4 << 20;
    int span = skind == CUXFER_MEMORY_PINNED && dkind == CUXFER_MEMORY_DEVICE && spitch > row;
    int pack = skind == CUXFER_MEMORY_DEVICE && dkind == CUXFER_MEMORY_PINNED && row <= slot;
    if (height < 2 || row == 0 || row > chunk)
        return CUXFER_PLAN_DIRECT;
    switch (p->opt.strategy) {
    case CUXFER_PLAN_SPAN: return span ? CUXFER_PLAN_SPAN : CUXFER_PLAN_DIRECT;
    case CUXFER_PLAN_PACK: return pack ? CUXFER_PLAN_PACK : CUXFER_PLAN_DIRECT;
    case CUXFER_PLAN_DIRECT: return CUXFER_PLAN_DIRECT;
    default: break;
    }
    if (row * height < p->tuning.min_bytes) /* rows and height are small here */
        return CUXFER_PLAN_DIRECT;
    if (span && row <= p->tuning.span_max_row && spitch <= p->tuning.max_ratio * row)
        return CUXFER_PLAN_SPAN;
    if (pack && row <= p->tuning.pack_max_row)
        return CUXFER_PLAN_PACK;
    return CUXFER_PLAN_DIRECT;
}

/* man 3 cuxfer_rois, cuxfer_rois_choose: the forced strategy, else, for 16
 * tiles or more whose mean size (total / n bytes) is below
 * direct_tile_bytes, KERNEL where the plan has it and GATHER where not,
 * and DIRECT otherwise. */
int model_rois_choose(int strategy, size_t direct_tile_bytes, int has_kernel, size_t n,
                      size_t total)
{
    size_t all;
    if (strategy != CUXFER_ROIS_AUTO)
        return strategy;
    /* mean < bound: total < n x bound (a product past size_t is above any total) */
    if (n >= 16 && (mul(n, direct_tile_bytes, &all) || total < all))
        return has_kernel ? CUXFER_ROIS_KERNEL : CUXFER_ROIS_GATHER;
    return CUXFER_ROIS_DIRECT;
}

/* man 3 cuxfer_plan2d, cuxfer_plan2d_calibrate: each direction keeps the
 * widest row up to which the plan beat the direct copy by at least 10%,
 * from the measurements it reported (rows in the order measured). */
size_t model_calibrated_row(const model_measure *m, size_t n, int d2h)
{
    size_t i, widest = 0;
    for (i = 0; i < n; ++i) {
        if (m[i].d2h != d2h)
            continue;
        if (!(m[i].planned >= 1.1 * m[i].raw))
            break;
        widest = m[i].row;
    }
    return widest;
}

/* man 3 cuxfer_stager: zero fields take the defaults (4 slots of 16 MiB,
 * as many threads as online cores, at most 16), then slots 1..64,
 * slot_bytes 4096..1 GiB, threads 1..64, strategy AUTO, COPY or REGISTER. */
cudaError_t model_stager_options(const cuxfer_stager_options *opt, cuxfer_stager_options *out)
{
    cuxfer_stager_options o;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    memset(&o, 0, sizeof o);
    if (opt)
        o = *opt;
    if (!o.slots)
        o.slots = 4;
    if (!o.slot_bytes)
        o.slot_bytes = (size_t)16 << 20;
    if (!o.threads)
        o.threads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
    if (o.slots < 1 || o.slots > 64 || o.slot_bytes < 4096 || o.slot_bytes > ((size_t)1 << 30) ||
        o.threads < 1 || o.threads > 64 ||
        (o.strategy != CUXFER_STAGE_AUTO && o.strategy != CUXFER_STAGE_COPY &&
         o.strategy != CUXFER_STAGE_REGISTER))
        return cudaErrorInvalidValue;
    *out = o;
    return cudaSuccess;
}

/* man 3 cuxfer_plan2d, cuxfer_rois: what cuxfer_plan2d_create and
 * cuxfer_rois_create refuse before they make anything: a strategy other
 * than AUTO (0) to the last one, threads outside 0 to max, chunk_bytes
 * below 4096 (0 takes the default). */
cudaError_t model_team_options(int strategy, int last, int threads, int max, size_t chunk)
{
    if (strategy < 0 || strategy > last || threads < 0 || threads > max ||
        (chunk != 0 && chunk < 4096))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* man 3 cuxfer_stream_pool and man 3 cuxfer, ERRORS: what
 * cuxfer_stream_pool_create and _create_on refuse before any CUDA call: a
 * flag other than CUXFER_STREAM_BLOCKING and cudaStreamNonBlocking, a
 * count outside 1 to CUXFER_STREAM_POOL_MAX, then (_create_on) a negative
 * device.  cudaSuccess: the rest is CUDA's to say. */
cudaError_t model_stream_pool_args(int count, unsigned flags, int on, int device)
{
    if ((flags & ~(CUXFER_STREAM_BLOCKING | (unsigned)cudaStreamNonBlocking)) != 0 ||
        count < 1 || count > CUXFER_STREAM_POOL_MAX)
        return cudaErrorInvalidValue;
    return on && device < 0 ? cudaErrorInvalidDevice : cudaSuccess;
}

/* man 3 cuxfer_stream_pool, RETURN VALUES: cuxfer_stream_pool_wrap
 * refuses a NULL array, a count outside 1 to CUXFER_STREAM_POOL_MAX (its
 * reason naming the count: the array, which may be shorter, unread), then
 * a wrapped stream that is 0, cudaStreamLegacy or cudaStreamPerThread.
 * cudaSuccess: the rest is CUDA's to say. */
cudaError_t model_stream_pool_wrap(const cudaStream_t *streams, int count)
{
    int i;
    if (!streams || count < 1 || count > CUXFER_STREAM_POOL_MAX)
        return cudaErrorInvalidValue;
    for (i = 0; i < count; ++i)
        if (!streams[i] || streams[i] == cudaStreamLegacy || streams[i] == cudaStreamPerThread)
            return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* man 3 cuxfer_pinned_pool: cuxfer_pinned_pool_create takes the flags of
 * cuxfer_host_alloc (portable, mapped, write-combined) and no other. */
cudaError_t model_pinned_pool_flags(unsigned flags)
{
    return flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                               cudaHostAllocWriteCombined)
               ? cudaErrorInvalidValue
               : cudaSuccess;
}

/* man 3 cuxfer_timer: cuxfer_stream_wait_all and cuxfer_stream_all_wait
 * refuse a negative n and a NULL array of n > 0; with n 0, or with every
 * stream of the array equal to the other side (each skipped), they do
 * nothing and ask nothing.  1 in *asks when CUDA would be asked. */
cudaError_t model_stream_fan(const cudaStream_t *arr, int n, cudaStream_t other, int *asks)
{
    int i;
    *asks = 0;
    if (n < 0 || (n > 0 && !arr))
        return cudaErrorInvalidValue;
    for (i = 0; i < n; ++i)
        *asks |= arr[i] != other;
    return cudaSuccess;
}

/* man 3 cuxfer_managed_alloc: what cuxfer_prefetch and cuxfer_advise
 * answer before they ask CUDA anything: a NULL pointer or 0 bytes, then a
 * target below CUXFER_CPU.  cudaSuccess: the rest is the device's to say. */
cudaError_t model_managed_args(const void *p, size_t bytes, int target)
{
    if (!p || !bytes)
        return cudaErrorInvalidValue;
    return target < CUXFER_CPU ? cudaErrorInvalidDevice : cudaSuccess;
}

/* man 3 cuxfer_memory_kind, cuxfer_copy2d_async: the policy a word of
 * CUXFER_PAGEABLE or CUXFER_DEFAULT_STREAM sets (allow, warn or error, in
 * any case), and the default, warn, for NULL or any other word. */
int model_policy(const char *word)
{
    if (word && !strcasecmp(word, "allow"))
        return CUXFER_PAGEABLE_ALLOW;
    if (word && !strcasecmp(word, "error"))
        return CUXFER_PAGEABLE_ERROR;
    return CUXFER_PAGEABLE_WARN;
}
