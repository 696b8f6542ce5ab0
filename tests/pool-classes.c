/* SPDX-License-Identifier: MIT */
/* The pinned pool's size classes waste at most 12.5% (bytes reserved <=
 * 1.125 x bytes requested) at every size, are monotonic, and the planner
 * picks its strategies by the documented rules.  Pure CPU. */
#include "tap.h"
#include <cuxfer.h>

static cuxfer_view V(cuxfer_memkind k, size_t w, size_t h, size_t pitch)
{
    cuxfer_view v;
    memset(&v, 0, sizeof v);
    v.ptr = (void *)&v;
    v.width = w;
    v.height = h;
    v.elem_size = 1;
    v.pitch = pitch;
    v.kind = k;
    return v;
}

int main(void)
{
    size_t n, c, prev = 0, worst_n = 0;
    double worst = 1.0;
    int monotonic = 1;
    unsigned x = 12345;
    cuxfer_plan2d p;
    cuxfer_view hs, ds;
    plan(0);

    for (n = 1; n <= (1u << 20); ++n) {
        c = cuxfer_pinned_pool_class_size(n);
        if ((double)c / (double)n > worst) {
            worst = (double)c / (double)n;
            worst_n = n;
        }
        if (c < prev || c < n)
            monotonic = 0;
        prev = c;
    }
    ok(worst <= 1.125, "every size 1 B..1 MiB reserves <= 1.125x (worst %.4f at %zu)", worst, worst_n);
    ok(monotonic, "class sizes never shrink and always fit the request");
    for (n = 0; n < 100000; ++n) {
        size_t r;
        x = x * 1103515245u + 12345u;
        r = ((size_t)x << 20 | (x >> 7)) % ((size_t)1 << 40) + 1;
        c = cuxfer_pinned_pool_class_size(r);
        if ((double)c / (double)r > 1.125 || cuxfer_pinned_pool_class_size(c) != c)
            break;
    }
    is_int(100000, (long long)n,
           "random sizes up to 1 TiB stay within 1.125x, in a class of their own size");
    /* The class indexes behind these sizes: tests/internals.c. */
    is_int(0, (long long)cuxfer_pinned_pool_class_size(0), "0 bytes: no class");
    is_int(1u << 20, (long long)cuxfer_pinned_pool_class_size(1u << 20), "a power of two is exact");
    is_int(1152 * 1024, (long long)cuxfer_pinned_pool_class_size((1u << 20) + 1),
           "1 MiB + 1 rounds to 1.125 MiB");

    /* the planner's choice */
    memset(&p, 0, sizeof p);
    p.tuning = cuxfer_plan2d_default_tuning();
    p.opt.strategy = CUXFER_PLAN_AUTO;
    hs = V(CUXFER_MEMORY_PINNED, 8, 1 << 18, 16);
    ds = V(CUXFER_MEMORY_DEVICE, 8, 1 << 18, 512);
    is_int(CUXFER_PLAN_SPAN, cuxfer_plan2d_choose(&p, &ds, &hs), "8-byte rows, pitch 16, H2D: SPAN");
    is_int(CUXFER_PLAN_PACK, cuxfer_plan2d_choose(&p, &hs, &ds), "8-byte rows, D2H to pitch 16: PACK");
    hs = V(CUXFER_MEMORY_PINNED, 8, 1 << 18, 8 * 64);
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &ds, &hs),
           "H2D with pitch 64x the row: DIRECT (the span would move 64x the bytes)");
    hs = V(CUXFER_MEMORY_PINNED, 256, 1 << 16, 512);
    ds = V(CUXFER_MEMORY_DEVICE, 256, 1 << 16, 512);
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &ds, &hs), "256-byte rows: DIRECT");
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &hs, &ds), "256-byte rows D2H: DIRECT");
    hs = V(CUXFER_MEMORY_PINNED, 8, 100, 16);
    ds = V(CUXFER_MEMORY_DEVICE, 8, 100, 512);
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &ds, &hs), "a small copy: DIRECT");
    hs = V(CUXFER_MEMORY_PAGEABLE, 8, 1 << 18, 16);
    ds = V(CUXFER_MEMORY_DEVICE, 8, 1 << 18, 512);
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &ds, &hs), "pageable source: DIRECT");
    hs = V(CUXFER_MEMORY_PINNED, 8, 1 << 18, 8);
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &ds, &hs), "dense source: DIRECT");
    p.opt.strategy = CUXFER_PLAN_SPAN;
    hs = V(CUXFER_MEMORY_PINNED, 4, 10, 8);
    is_int(CUXFER_PLAN_SPAN, cuxfer_plan2d_choose(&p, &ds, &hs), "forced SPAN applies to any H2D size");
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &hs, &ds), "forced SPAN on D2H: DIRECT");
    p.opt.strategy = CUXFER_PLAN_DIRECT;
    hs = V(CUXFER_MEMORY_PINNED, 8, 1 << 18, 16);
    is_int(CUXFER_PLAN_DIRECT, cuxfer_plan2d_choose(&p, &ds, &hs), "forced DIRECT");
    {
        cuxfer_plan2d q;
        cuxfer_plan2d_options o;
        memset(&o, 0, sizeof o);
        o.strategy = 9;
        is_int(cudaErrorInvalidValue, cuxfer_plan2d_create(&q, &o), "unknown strategy refused");
        o.strategy = 0;
        o.threads = 99;
        is_int(cudaErrorInvalidValue, cuxfer_plan2d_create(&q, &o), "99 threads refused");
        o.threads = 0;
        o.chunk_bytes = 100;
        is_int(cudaErrorInvalidValue, cuxfer_plan2d_create(&q, &o), "100-byte chunks refused");
        memset(&q, 0, sizeof q);
        is_int(cudaSuccess, cuxfer_plan2d_destroy(&q), "destroy a zeroed plan");
        is_int(cudaErrorInvalidValue, cuxfer_plan2d_copy_async(&q, &ds, &hs, (cudaStream_t)0),
               "copy with an uncreated plan refused");
    }
    {
        cuxfer_pinned_pool pool;
        cuxfer_pinned_block b;
        cuxfer_pinned_pool_options o;
        memset(&pool, 0, sizeof pool);
        is_int(cudaSuccess, cuxfer_pinned_pool_destroy(&pool), "destroy a zeroed pool");
        is_int(cudaErrorInvalidValue, cuxfer_pinned_pool_acquire(&pool, 10, &b), "acquire from an uncreated pool");
        memset(&o, 0, sizeof o);
        o.flags = 0x40;
        is_int(cudaErrorInvalidValue, cuxfer_pinned_pool_create(&pool, &o), "unknown pool flags refused");
    }
    done_testing();
}
