/* SPDX-License-Identifier: MIT */
/* The planner picks its strategies by the documented rules (cuxfer_plan2d(3),
 * cuxfer_plan2d_choose): SPAN, PACK or DIRECT by row width, pitch, size,
 * memory kind and a forced strategy; bad options and an uncreated plan
 * are refused.  Pure CPU. */
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
    cuxfer_plan2d p;
    cuxfer_view hs, ds;
    plan(0);

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
    done_testing();
}
