/* SPDX-License-Identifier: MIT */
/* Every refusal of the copy, allocation and scheduling calls that must
 * happen on the CPU, before any CUDA call: they behave the same with or
 * without a GPU (run here without one, they still must not reach CUDA). */
#include <stdint.h>

#include "tap.h"
#include <cuxfer.h>
#include "views.h"

static unsigned char a[4096], b[4096];

int main(void)
{
    cuxfer_view d = view_of(a, 10, 4, 4, 64), s = view_of(b, 10, 4, 4, 48), t;
    void *p = (void *)&p;
    plan(0);

    /* cuxfer_copy2d_check */
    is_int(cudaSuccess, cuxfer_copy2d_check(&d, &s, 0), "equal extents pass");
    t = view_of(b, 11, 4, 4, 48);
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &t, 0), "different widths refused");
    is_string("cuxfer_copy2d_async: extents differ: dst 10x4 of 4-byte elements, "
              "src 11x4 of 4-byte elements", cuxfer_last_reason(), "reason names both extents");
    t = view_of(b, 10, 5, 4, 48);
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &t, 0), "different heights refused");
    t = view_of(b, 20, 4, 2, 48);
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &t, 0),
           "same row bytes but different element size refused");
    t = view_of(b, 10, 4, 4, 39);
    is_int(cudaErrorInvalidPitchValue, cuxfer_copy2d_check(&d, &t, 0),
           "src pitch below the row is cudaErrorInvalidPitchValue");
    contains(cuxfer_last_reason(), "src row of 40 bytes", "reason names the src row");
    t = view_of(a, 10, 4, 4, 39);
    is_int(cudaErrorInvalidPitchValue, cuxfer_copy2d_check(&t, &s, 0),
           "dst pitch below the row is cudaErrorInvalidPitchValue");
    is_int(cudaSuccess, cuxfer_copy2d_check(&d, &s, 64), "pitch exactly the maximum passes");
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &s, 63), "dst pitch max + 1 refused");
    is_string("cuxfer_copy2d_async: dst pitch 64 exceeds the device's maximum pitch 63",
              cuxfer_last_reason(), "reason names pitch and maximum");
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&d, &s, 47), "src pitch over max refused");
    t = view_of(a, 10, 1, 4, 64);
    {
        cuxfer_view u = view_of(b, 10, 1, 4, 1000);
        is_int(cudaSuccess, cuxfer_copy2d_check(&t, &u, 63),
               "one row: pitch does not matter (it is a 1D copy)");
    }
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(NULL, &s, 0), "NULL dst refused");
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_async(&d, NULL, (cudaStream_t)0),
           "copy2d_async refuses before any CUDA call");
    /* each copy's reasons name the call made, not the checks' own name */
    t = view_of(b, 11, 4, 4, 48);
    is_int(cudaErrorInvalidValue, cuxfer_copy2d(&d, &t), "cuxfer_copy2d refuses it too");
    is_string("cuxfer_copy2d: extents differ: dst 10x4 of 4-byte elements, "
              "src 11x4 of 4-byte elements", cuxfer_last_reason(), "naming cuxfer_copy2d");
    t = view_of(a, 10, 4, 4, 39);
    is_int(cudaErrorInvalidPitchValue, cuxfer_copy2d(&t, &s), "and a dst pitch below the row");
    contains(cuxfer_last_reason(), "cuxfer_copy2d: dst row of 40 bytes", "naming cuxfer_copy2d");
    is_int(cudaErrorInvalidValue, cuxfer_copy(NULL, b, 16), "cuxfer_copy refuses a NULL dst");
    is_string("cuxfer_copy: dst is NULL", cuxfer_last_reason(), "naming cuxfer_copy");
    is_int(cudaErrorInvalidValue, cuxfer_copy(a + 8, a, 16), "and overlapping ranges");
    contains(cuxfer_last_reason(), "cuxfer_copy: dst", "naming cuxfer_copy");
    t = view_of(a, 0, 4, 4, 64);
    {
        cuxfer_view u = view_of(b, 0, 4, 4, 48);
        is_int(cudaSuccess, cuxfer_copy2d_async(&t, &u, (cudaStream_t)0),
               "an empty copy is a no-op success");
    }

    /* cuxfer_copy_check */
    is_int(cudaSuccess, cuxfer_copy_check(a, b, sizeof a), "disjoint ranges pass");
    is_int(cudaSuccess, cuxfer_copy_check(NULL, NULL, 0), "0 bytes is always fine");
    is_int(cudaErrorInvalidValue, cuxfer_copy_check(a, NULL, 1), "NULL src refused");
    contains(cuxfer_last_reason(), "src is NULL", "reason names src");
    is_int(cudaErrorInvalidValue, cuxfer_copy_check(a, a + 100, 101), "overlap by one byte refused");
    contains(cuxfer_last_reason(), "overlap", "reason says overlap");
    is_int(cudaSuccess, cuxfer_copy_check(a, a + 100, 100), "adjacent ranges pass");
    is_int(cudaErrorInvalidValue, cuxfer_copy_check((void *)(UINTPTR_MAX - 10), b, 11),
           "a range that wraps refused");
    is_int(cudaErrorInvalidValue, cuxfer_copy_async(a, a + 1, 2, (cudaStream_t)0),
           "copy_async refuses before any CUDA call");

    /* allocation arguments */
    is_int(cudaErrorInvalidValue, cuxfer_host_alloc(&p, (SIZE_MAX / 8) + 1, 8, 0),
           "host_alloc: count x elem_size overflow refused");
    contains(cuxfer_last_reason(), "count 2305843009213693952 x elem_size 8 overflows",
             "reason names count and elem_size");
    ok(p == NULL, "and *p is NULL");
    is_int(cudaErrorInvalidValue, cuxfer_host_alloc(&p, 0, 8, 0), "host_alloc: zero count refused");
    is_int(cudaErrorInvalidValue, cuxfer_host_alloc(&p, 8, 0, 0), "host_alloc: zero elem_size refused");
    is_int(cudaErrorInvalidValue, cuxfer_host_alloc(NULL, 1, 1, 0), "host_alloc: NULL p refused");
    is_int(cudaErrorInvalidValue, cuxfer_host_alloc(&p, 1, 1, 0x80), "host_alloc: unknown flag refused");
    contains(cuxfer_last_reason(), "unknown flags 0x80", "reason names the flag");
    is_int(cudaSuccess, cuxfer_host_free(NULL), "host_free(NULL) is a no-op");
    is_int(cudaErrorInvalidValue, cuxfer_host_register(NULL, 10, 0), "register NULL refused");
    is_int(cudaErrorInvalidValue, cuxfer_host_register(a, 0, 0), "register 0 bytes refused");
    is_int(cudaErrorInvalidValue, cuxfer_host_register((void *)(UINTPTR_MAX - 3), 8, 0),
           "register of a wrapping range refused");
    is_int(cudaErrorInvalidValue, cuxfer_host_register(a, 8, 0x4000), "register unknown flag refused");
    is_int(cudaErrorInvalidValue, cuxfer_managed_alloc(&p, 4, 4, 0x7), "managed_alloc bad flags refused");
    is_int(cudaErrorInvalidValue, cuxfer_managed_alloc(&p, SIZE_MAX, 2, 0), "managed_alloc overflow refused");
    is_int(cudaErrorInvalidValue, cuxfer_prefetch(NULL, 8, 0, (cudaStream_t)0), "prefetch NULL refused");
    is_int(cudaErrorInvalidValue, cuxfer_advise(a, 0, cudaMemAdviseSetReadMostly, 0),
           "advise of 0 bytes refused");
    is_int(cudaErrorInvalidDevice, cuxfer_prefetch(a, 8, -2, (cudaStream_t)0),
           "prefetch to device -2 refused");
    {
        cuxfer_view v;
        is_int(cudaErrorInvalidValue, cuxfer_view_alloc_device(&v, 4, 4, 65), "alloc_device elem 65 refused");
        is_int(cudaErrorInvalidValue, cuxfer_view_alloc_device(&v, 0, 4, 1), "alloc_device empty refused");
        is_int(cudaErrorInvalidValue, cuxfer_view_alloc_device(&v, SIZE_MAX / 2, 4, 4),
               "alloc_device overflow refused");
        is_int(cudaErrorInvalidValue, cuxfer_view_alloc_host(&v, 4, 4, 1, 3),
               "alloc_host row_align 3 refused");
        is_string("cuxfer_view_alloc_host: row_align 3 is not a power of two", cuxfer_last_reason(),
                  "reason names row_align");
        is_int(cudaErrorInvalidValue, cuxfer_view_alloc_host(&v, SIZE_MAX, 1, 1, 64),
               "alloc_host padding overflow refused");
        is_int(cudaErrorInvalidValue, cuxfer_view_wrap(&v, NULL, 8, 1, 1, 1), "wrap NULL refused");
        is_int(cudaErrorInvalidPitchValue, cuxfer_view_wrap(&v, a, 8, 3, 1, 3),
               "wrap with row over pitch refused");
    }
    {
        /* cuxfer_view_init: the caller states the kind; no CUDA call. */
        cuxfer_view v;
        is_int(cudaSuccess, cuxfer_view_init(&v, a, 16, 3, 2, 4, CUXFER_MEMORY_DEVICE, 1),
               "view_init of a 3x2 view of 4-byte elements, pitch 16");
        ok(v.ptr == (void *)a && v.pitch == 16 && v.width == 3 && v.height == 2 &&
               v.elem_size == 4 && v.kind == CUXFER_MEMORY_DEVICE && v.device == 1 &&
               v.flags == 0,
           "view_init stores the numbers, the kind and the device as given, owns nothing");
        is_int(cudaErrorInvalidValue,
               cuxfer_view_init(NULL, a, 8, 1, 1, 1, CUXFER_MEMORY_PAGEABLE, -1),
               "view_init of a NULL view refused");
        is_int(cudaErrorInvalidValue,
               cuxfer_view_init(&v, a, 8, 1, 1, 1, (cuxfer_memkind)7, -1),
               "view_init with kind 7 refused");
        is_string("cuxfer_view_init: kind 7 is not a cuxfer_memkind", cuxfer_last_reason(),
                  "the reason names the kind");
        is_int(cudaErrorInvalidValue,
               cuxfer_view_init(&v, a, 8, 1, 1, 1, CUXFER_MEMORY_DEVICE, -2),
               "view_init with device -2 refused");
        is_int(cudaErrorInvalidPitchValue,
               cuxfer_view_init(&v, a, 8, 3, 1, 3, CUXFER_MEMORY_PINNED, -1),
               "view_init with row over pitch refused");
        contains(cuxfer_last_reason(), "cuxfer_view_init: row of 9 bytes", "the reason names the call");
        ok(v.ptr == NULL && v.pitch == 0 && v.flags == 0, "a refused view is left zeroed");
        is_int(cudaSuccess, cuxfer_view_free(&v), "and is safe to free");
    }

    /* scheduling arguments */
    {
        cuxfer_stream_pool pool;
        cuxfer_ring ring;
        cuxfer_timer tm;
        cuxfer_latch latch;
        cuxfer_graph g;
        cudaStream_t st;
        float ms = 1.0f;
        memset(&pool, 0, sizeof pool);
        is_int(cudaSuccess, cuxfer_stream_pool_destroy(&pool), "pool destroy on a zeroed pool");
        is_int(cudaErrorInvalidValue, cuxfer_stream_pool_create(&pool, 0, 0, 0), "pool of 0 refused");
        is_int(cudaErrorInvalidValue, cuxfer_stream_pool_create(&pool, 1025, 0, 0), "pool of 1025 refused");
        is_int(cudaErrorInvalidValue, cuxfer_stream_pool_create(&pool, 2, 0x2, 0), "pool unknown flag refused");
        is_int(cudaErrorInvalidValue, cuxfer_stream_pool_next(&pool, &st), "next on an empty pool refused");
        is_int(cudaErrorInvalidValue, cuxfer_ring_create(&ring, 0, 16, 16, NULL), "ring of 0 slots refused");
        is_int(cudaSuccess, cuxfer_ring_destroy(&ring), "ring destroy on a zeroed ring");
        memset(&tm, 0, sizeof tm);
        is_int(cudaErrorInvalidValue, cuxfer_timer_stop(&tm, (cudaStream_t)0), "stop of an uncreated timer refused");
        is_int(cudaErrorInvalidValue, cuxfer_timer_ms(&tm, CUXFER_NOWAIT, &ms), "ms of an unstarted timer refused");
        ok(ms != ms, "and *ms is NaN, never a stale number");
        is_int(cudaSuccess, cuxfer_timer_destroy(&tm), "timer destroy on a zeroed timer");
        ok(cuxfer_gbps(1000000000u, 1000.0f) > 0.999 && cuxfer_gbps(1000000000u, 1000.0f) < 1.001,
           "1e9 bytes in 1000 ms is 1 GB/s");
        ok(cuxfer_gbps(5, 0.0f) == 0.0, "0 ms gives 0, not infinity");
        memset(&latch, 0, sizeof latch);
        is_int(cudaErrorInvalidValue, cuxfer_latch_wait(&latch, 10), "wait on an uninitialized latch refused");
        is_int(cudaSuccess, cuxfer_latch_destroy(&latch), "latch destroy on a zeroed latch");
        is_int(cudaErrorInvalidValue, cuxfer_graph_begin((cudaStream_t)0), "capture of stream 0 refused");
        memset(&g, 0, sizeof g);
        is_int(cudaSuccess, cuxfer_graph_destroy(&g), "graph destroy on a zeroed graph");
        is_int(cudaErrorInvalidValue, cuxfer_graph_launch(&g, (cudaStream_t)0), "launch of an empty graph refused");
        is_int(cudaErrorInvalidValue, cuxfer_on_complete((cudaStream_t)0, NULL, NULL), "on_complete NULL fn refused");
    }
    done_testing();
}
