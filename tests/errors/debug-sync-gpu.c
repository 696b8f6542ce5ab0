/* SPDX-License-Identifier: MIT */
/* CUXFER_DEBUG_SYNC on the device, call by call: every call that queues
 * cuxfer's own copies returns with its work done (cuxfer(3),
 * CONFIGURATION).  Before each call the stream is held 100 ms by a host
 * function, so a call that only queued its work returns with the stream
 * busy: cudaStreamQuery right after the call must say cudaSuccess (the
 * stager: its query too).  Every strategy of the planner and of rois is
 * run, both directions where they differ; every output is poisoned first
 * and compared byte for byte with the source.  tests/errors/debug-sync checks the
 * same without a device, from the runtime calls each call makes. */
#define CUXFER_DEBUG_SYNC 1
#include <time.h>

#include "gpu.h"

#define ROW 8       /* bytes of a row */
#define PITCH 24    /* of the strided host image */
#define ROWS 65536  /* 512 KiB of rows, 1.5 MiB of image */
#define DENSE ((size_t)ROW * ROWS)

static unsigned char *img, *back, *dref; /* pinned image, pinned copy back, dense source */
static void *dev;                        /* dense device buffer */

static void CUDART_CB hold_fn(void *arg)
{
    struct timespec t = {0, 100000000L};
    (void)arg;
    nanosleep(&t, NULL);
}

/* Hold s for 100 ms from now. */
static void hold(cudaStream_t s) { GPU_MUST(cudaLaunchHostFunc(s, hold_fn, NULL)); }

/* The call returned cudaSuccess with s idle; then wait anyway, so that a
 * failed point does not spill into the next. */
static void idle(const char *what, cudaError_t err, cudaStream_t s)
{
    cudaError_t q = cudaStreamQuery(s);
    if (!ok(err == cudaSuccess && q == cudaSuccess, "%s returns with its stream idle", what))
        diag("  returned %s (%s), then cudaStreamQuery: %s", cudaGetErrorName(err),
             cuxfer_last_reason(), cudaGetErrorName(q));
    GPU_MUST(cudaStreamSynchronize(s));
}

/* The device buffer holds dref's rows. */
static void device_holds_rows(const char *what)
{
    static unsigned char got[DENSE];
    memset(got, 0xA5, sizeof got);
    GPU_MUST(cudaMemcpy(got, dev, DENSE, cudaMemcpyDeviceToHost));
    ok(memcmp(got, dref, DENSE) == 0, "%s: the device holds every row", what);
}

/* back holds img's rows at PITCH, its gaps still poisoned. */
static void back_holds_image(const char *what)
{
    size_t r, bad = 0;
    for (r = 0; r < ROWS; ++r)
        if (memcmp(back + r * PITCH, img + r * PITCH, ROW) != 0 ||
            back[r * PITCH + ROW] != 0xEE || back[r * PITCH + PITCH - 1] != 0xEE)
            ++bad;
    if (!ok(bad == 0, "%s: every row back, no gap written", what))
        diag("  %zu rows wrong", bad);
}

static void poison(void)
{
    memset(back, 0xEE, (size_t)PITCH * ROWS);
    GPU_MUST(cudaMemset(dev, 0x5A, DENSE));
    GPU_MUST(cudaDeviceSynchronize()); /* before the copies on the non-blocking stream */
}

static void copies(cudaStream_t s, cuxfer_view *hv, cuxfer_view *dv, cuxfer_view *bv)
{
    poison();
    hold(s);
    idle("cuxfer_copy_async (H2D)", cuxfer_copy_async(dev, dref, DENSE, s), s);
    device_holds_rows("cuxfer_copy_async");
    poison();
    hold(s);
    idle("cuxfer_copy2d_async (H2D)", cuxfer_copy2d_async(dv, hv, s), s);
    device_holds_rows("cuxfer_copy2d_async");
    hold(s);
    idle("cuxfer_copy2d_async (D2H)", cuxfer_copy2d_async(bv, dv, s), s);
    back_holds_image("cuxfer_copy2d_async");
}

static void ring(void)
{
    cuxfer_ring r;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_ring_job job;
    cudaStream_t rs;
    GPU_MUST(cuxfer_ring_create(&r, 1, 2 * DENSE, DENSE, NULL));
    GPU_MUST(cuxfer_ring_acquire(&r, &slot));
    GPU_MUST(cuxfer_ring_stream(&r, 0, &rs));
    memcpy(slot->host, dref, DENSE);
    memset((unsigned char *)slot->host + DENSE, 0xEE, DENSE);
    memset(&job, 0, sizeof job);
    job.h2d_bytes = DENSE;
    job.d2h_bytes = DENSE;
    job.d2h_host_offset = DENSE;
    hold(rs);
    idle("cuxfer_ring_submit", cuxfer_ring_submit(&r, slot, &job), rs);
    ok(memcmp((unsigned char *)slot->host + DENSE, dref, DENSE) == 0,
       "cuxfer_ring_submit: the slot's bytes went up and came back");
    GPU_OK(cuxfer_ring_destroy(&r), "ring destroyed");
}

static void planner(cudaStream_t s, cuxfer_view *hv, cuxfer_view *dv, cuxfer_view *bv)
{
    static const int strategies[] = {CUXFER_PLAN_DIRECT, CUXFER_PLAN_SPAN, CUXFER_PLAN_PACK};
    static const char *const names[] = {"DIRECT", "SPAN", "PACK"};
    char what[96];
    int i;
    for (i = 0; i < 3; ++i) {
        cuxfer_plan2d p;
        cuxfer_plan2d_options o;
        memset(&o, 0, sizeof o);
        o.strategy = strategies[i];
        GPU_MUST(cuxfer_plan2d_create(&p, &o));
        if (strategies[i] != CUXFER_PLAN_PACK) {
            poison();
            hold(s);
            (void)snprintf(what, sizeof what, "cuxfer_plan2d_copy_async %s (H2D, %s chosen)",
                           names[i], cuxfer_plan2d_choose(&p, dv, hv) == strategies[i] ? "it is"
                                                                                      : "NOT");
            idle(what, cuxfer_plan2d_copy_async(&p, dv, hv, s), s);
            device_holds_rows(what);
        }
        if (strategies[i] != CUXFER_PLAN_SPAN) {
            poison();
            GPU_MUST(cudaMemcpy(dev, dref, DENSE, cudaMemcpyHostToDevice));
            hold(s);
            (void)snprintf(what, sizeof what, "cuxfer_plan2d_copy_async %s (D2H, %s chosen)",
                           names[i], cuxfer_plan2d_choose(&p, bv, dv) == strategies[i] ? "it is"
                                                                                      : "NOT");
            idle(what, cuxfer_plan2d_copy_async(&p, bv, dv, s), s);
            back_holds_image(what);
        }
        GPU_OK(cuxfer_plan2d_destroy(&p), "plan destroyed");
    }
}

/* 64 x 64 tiles of 8 x 16 bytes: each tile 16 rows of the image, one
 * row wide, tile i the rows [16 i, 16 i + 16) - so the dense buffer is the
 * image's rows in order, and dref is the reference. */
static void rois(cudaStream_t s, cuxfer_view *hv, cuxfer_view *dv, cuxfer_view *bv)
{
    static const int strategies[] = {CUXFER_ROIS_DIRECT, CUXFER_ROIS_GATHER, CUXFER_ROIS_KERNEL};
    static const char *const names[] = {"DIRECT", "GATHER", "KERNEL"};
    static cuxfer_roi r[ROWS / 16];
    char what[96];
    size_t i;
    int k;
    for (i = 0; i < ROWS / 16; ++i) {
        r[i].x = 0;
        r[i].y = i * 16;
        r[i].width = ROW;
        r[i].height = 16;
    }
    for (k = 0; k < 3; ++k) {
        cuxfer_rois p;
        cuxfer_rois_options o;
        cudaError_t err;
        memset(&o, 0, sizeof o);
        o.strategy = strategies[k];
        err = cuxfer_rois_create(&p, &o);
        if (err != cudaSuccess && strategies[k] == CUXFER_ROIS_KERNEL) {
            skip(5, "rois KERNEL: no plan: %s (%s)", cudaGetErrorName(err),
                 cuxfer_last_reason());
            continue;
        }
        GPU_MUST(err);
        poison();
        hold(s);
        (void)snprintf(what, sizeof what, "cuxfer_rois_copy_async %s (H2D)", names[k]);
        idle(what, cuxfer_rois_copy_async(&p, CUXFER_ROIS_H2D, hv, r, ROWS / 16, dv, s), s);
        device_holds_rows(what);
        hold(s);
        (void)snprintf(what, sizeof what, "cuxfer_rois_copy_async %s (D2H)", names[k]);
        idle(what, cuxfer_rois_copy_async(&p, CUXFER_ROIS_D2H, bv, r, ROWS / 16, dv, s), s);
        back_holds_image(what);
        GPU_OK(cuxfer_rois_destroy(&p), "rois plan destroyed");
    }
}

static void stager(cudaStream_t s)
{
    cuxfer_stager st;
    unsigned char *pageable = (unsigned char *)malloc(DENSE), *out = (unsigned char *)malloc(DENSE);
    cudaError_t err, q;
    if (!pageable || !out)
        bail("out of memory");
    memcpy(pageable, dref, DENSE);
    memset(out, 0xEE, DENSE);
    GPU_MUST(cuxfer_stager_create(&st, NULL));
    poison();
    hold(s);
    err = cuxfer_stage_h2d(&st, dev, pageable, DENSE, s);
    q = cuxfer_stager_query(&st);
    if (!ok(err == cudaSuccess && q == cudaSuccess, "cuxfer_stage_h2d returns with its job done"))
        diag("  returned %s (%s), then the query %s", cudaGetErrorName(err), cuxfer_last_reason(),
             cudaGetErrorName(q));
    GPU_MUST(cuxfer_stager_wait(&st, -1));
    device_holds_rows("cuxfer_stage_h2d");
    hold(s);
    err = cuxfer_stage_d2h(&st, out, dev, DENSE, s);
    q = cuxfer_stager_query(&st);
    if (!ok(err == cudaSuccess && q == cudaSuccess, "cuxfer_stage_d2h returns with its job done"))
        diag("  returned %s (%s), then the query %s", cudaGetErrorName(err), cuxfer_last_reason(),
             cudaGetErrorName(q));
    GPU_MUST(cuxfer_stager_wait(&st, -1));
    ok(memcmp(out, dref, DENSE) == 0, "cuxfer_stage_d2h: every byte back");
    GPU_MUST(cudaStreamSynchronize(s));
    GPU_OK(cuxfer_stager_destroy(&st), "stager destroyed");
    free(pageable);
    free(out);
}

int main(void)
{
    cuxfer_view hv, dv, bv;
    cudaStream_t s;
    size_t r;

    gpu_require(1);
    plan(45);
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cuxfer_host_alloc((void **)&img, (size_t)PITCH * ROWS, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&back, (size_t)PITCH * ROWS, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&dref, DENSE, 1, 0));
    GPU_MUST(cuxfer_device_alloc(&dev, DENSE, 1));
    fill_pattern(img, (size_t)PITCH * ROWS, 27);
    for (r = 0; r < ROWS; ++r)
        memcpy(dref + r * ROW, img + r * PITCH, ROW);
    GPU_MUST(cuxfer_view_wrap(&hv, img, PITCH, ROW, ROWS, 1));
    GPU_MUST(cuxfer_view_wrap(&bv, back, PITCH, ROW, ROWS, 1));
    GPU_MUST(cuxfer_view_wrap(&dv, dev, ROW, ROW, ROWS, 1));

    copies(s, &hv, &dv, &bv);  /* 6 points */
    ring();                    /* 3 */
    planner(s, &hv, &dv, &bv); /* 11 */
    rois(s, &hv, &dv, &bv);    /* 15 */
    stager(s);                 /* 5, and 5 below */

    GPU_OK(cuxfer_device_free(dev), "device buffer freed");
    GPU_OK(cuxfer_host_free(img), "image freed");
    GPU_OK(cuxfer_host_free(back), "copy back freed");
    GPU_OK(cuxfer_host_free(dref), "reference freed");
    GPU_OK(cudaStreamDestroy(s), "stream destroyed");
    return 0;
}
