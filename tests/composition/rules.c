/* SPDX-License-Identifier: MIT */
/* Composition rules that need no GPU: CUXFER_POOL_IDLE is no stream a
 * program can hold (not 0, cudaStreamLegacy or cudaStreamPerThread); the
 * event pool's round robin has no seam where a 32-bit counter would wrap;
 * cuxfer_copy2d_check refuses two views exactly when some byte is in a row
 * of both (checked against a byte map over thousands of random layouts,
 * rows interleaving in each other's gaps included). */
#include <limits.h>
#include <stdint.h>

#include "tap.h"
#include <cuxfer.h>
#include "views.h"

static unsigned char buf[8192];
static unsigned char mark[8192];

static cuxfer_view mk(size_t off, size_t w, size_t h, size_t pitch)
{
    return view_of(buf + off, w, h, 1, pitch);
}

/* The reference: mark every byte of a's rows, look for one of b's. */
static int brute_overlap(const cuxfer_view *a, const cuxfer_view *b)
{
    size_t y, x, w = a->width * a->elem_size;
    memset(mark, 0, sizeof mark);
    for (y = 0; y < a->height; ++y)
        for (x = 0; x < w; ++x)
            mark[(size_t)((unsigned char *)a->ptr - buf) + y * a->pitch + x] = 1;
    for (y = 0; y < b->height; ++y)
        for (x = 0; x < w; ++x)
            if (mark[(size_t)((unsigned char *)b->ptr - buf) + y * b->pitch + x])
                return 1;
    return 0;
}

static unsigned rng = 12345u;
static size_t rnd(size_t n)
{
    rng = rng * 1103515245u + 12345u;
    return (size_t)((rng >> 8) % (unsigned)n);
}

int main(void)
{
    cuxfer_event_pool ep;
    cudaEvent_t evs[3];
    cudaEvent_t got[9];
    int i, k, bad = 0, refused = 0, interleaved = 0;
    plan(0);

    /* CUXFER_POOL_IDLE */
    ok(CUXFER_POOL_IDLE != (cudaStream_t)0, "CUXFER_POOL_IDLE is not stream 0");
    ok(CUXFER_POOL_IDLE != cudaStreamLegacy, "CUXFER_POOL_IDLE is not cudaStreamLegacy");
    ok(CUXFER_POOL_IDLE != cudaStreamPerThread, "CUXFER_POOL_IDLE is not cudaStreamPerThread");

    /* cuxfer_event_pool_next across the 2^32 wrap: fake handles, no CUDA */
    for (i = 0; i < 3; ++i)
        evs[i] = (cudaEvent_t)(uintptr_t)(0x100 * (i + 1));
    memset(&ep, 0, sizeof ep);
    ep.events = evs;
    ep.count = 3;
    ep.next = UINT_MAX - 1; /* a counter two steps before the wrap */
    for (i = 0; i < 9; ++i)
        got[i] = cuxfer_event_pool_next(&ep);
    for (i = 1; i < 9; ++i) {
        int a = -1, b = -1;
        for (k = 0; k < 3; ++k) {
            if (got[i - 1] == evs[k])
                a = k;
            if (got[i] == evs[k])
                b = k;
        }
        if (a < 0 || b < 0 || b != (a + 1) % 3)
            bad++;
    }
    is_int(0, bad, "3 events: every call gives the next one cyclically, across the wrap");
    ok(ep.next < 3, "the index stays within the pool (%u)", ep.next);
    ep.next = 0;
    for (i = 0; i < 6; ++i)
        got[i] = cuxfer_event_pool_next(&ep);
    ok(got[0] == evs[0] && got[1] == evs[1] && got[2] == evs[2] && got[3] == evs[0] &&
           got[5] == evs[2],
       "from a fresh pool: 0 1 2 0 1 2");

    /* 2D overlap: the cases of the man page */
    {
        cuxfer_view d = mk(0, 10, 4, 64), s = mk(70, 10, 4, 64);
        is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &s, 0),
               "rows that share bytes are refused");
        contains(cuxfer_last_reason(), "overlap", "the reason says overlap");
        contains(cuxfer_last_reason(), "dst row 1 and src row 0", "and names the rows");
        d = mk(0, 10, 4, 64);
        s = mk(10, 10, 4, 64);
        is_int(cudaSuccess, cuxfer_copy2d_check(&d, &s, 0),
               "side by side in one image (adjacent, no shared byte) passes");
        s = mk(9, 10, 4, 64);
        is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &s, 0),
               "one byte further left overlaps");
        d = mk(0, 10, 4, 20);
        s = mk(10, 10, 4, 20);
        is_int(cudaSuccess, cuxfer_copy2d_check(&d, &s, 0),
               "rows interleaving in each other's gaps pass");
        s = mk(0, 10, 4, 20);
        is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &s, 0), "a view onto itself is refused");
        d = mk(0, 8, 6, 24);
        s = mk(8, 8, 6, 16);
        is_int(brute_overlap(&d, &s) ? cudaErrorInvalidValue : cudaSuccess,
               cuxfer_copy2d_check(&d, &s, 0), "different pitches agree with the byte map");
        d = mk(0, 0, 4, 64);
        s = mk(0, 0, 4, 64);
        is_int(cudaSuccess, cuxfer_copy2d_check(&d, &s, 0), "empty views never overlap");
    }

    /* 2D overlap against the byte map, random layouts in one buffer */
    bad = 0;
    for (i = 0; i < 20000; ++i) {
        size_t w = 1 + rnd(24), h = 1 + rnd(12);
        size_t pa = w + (rnd(3) == 0 ? 0 : rnd(40)), pb = rnd(2) ? pa : w + rnd(40);
        size_t oa = rnd(600), ob = rnd(3) == 0 ? oa + rnd(2 * w + 1) : rnd(600);
        cuxfer_view a = mk(oa, w, h, pa), b = mk(ob, w, h, pb);
        int want = brute_overlap(&a, &b);
        cudaError_t e = cuxfer_copy2d_check(&a, &b, 0);
        if ((e == cudaErrorInvalidValue) != want || (e != cudaSuccess && e != cudaErrorInvalidValue)) {
            if (bad++ < 5)
                diag("w %zu h %zu: dst +%zu pitch %zu, src +%zu pitch %zu: want %d got %s", w, h,
                     oa, pa, ob, pb, want, cudaGetErrorName(e));
        }
        refused += want;
        if (!want && oa < ob + (h - 1) * pb + w && ob < oa + (h - 1) * pa + w)
            interleaved++;
    }
    is_int(0, bad, "20000 random layouts: refused exactly when a byte is shared");

    /* Views that interleave without sharing a byte over millions of rows
     * (bytes 0, 4, 8, ... against 2, 10, 18, ...): the sweep is bounded,
     * so the check answers at once and refuses what it could not prove
     * (fuzz/regressions/fuzz-view/copy2d-overlap-sweep-timeout). */
    {
        cuxfer_view a, b;
        memset(&a, 0, sizeof a);
        a.ptr = (void *)(uintptr_t)0x100000;
        a.pitch = 4;
        a.width = 1;
        a.height = (size_t)4 << 20;
        a.elem_size = 1;
        a.kind = CUXFER_MEMORY_UNKNOWN;
        a.device = -1;
        b = a;
        b.ptr = (void *)(uintptr_t)0x100002;
        b.pitch = 8;
        is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&a, &b, 0),
               "views interleaving over millions of rows are refused in bounded time");
        contains(cuxfer_last_reason(), "interleave", "the reason says they interleave");
        a.height = b.height = 2000;
        is_int(cudaSuccess, cuxfer_copy2d_check(&a, &b, 0),
               "the same interleaving over 2000 rows is proven disjoint");
    }
    ok(refused > 1000 && interleaved > 1000,
       "both kinds were tried: %d overlapping, %d interleaved without overlap", refused,
       interleaved);
    done_testing();
}
