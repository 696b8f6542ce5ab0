/* SPDX-License-Identifier: MIT */
/*
 * matrix.c - every stream-taking call of cuxfer.h on every
 * stream kind (doc/DESIGN.md, "Composition rules: streams and capture"): it works (bytes exact
 * against a CPU reference, outputs poisoned first) or it refuses (an error
 * other than cudaSuccess, a non-empty cuxfer_last_reason(), no error left
 * behind, the device still usable).  Inside a capture (Global, ThreadLocal,
 * Relaxed, on a fresh non-blocking stream) a refusal must leave the capture
 * valid; a success must give a graph that replays 3 times byte-exact, and
 * the same object must then work in an ordinary call.  On ordinary streams
 * of the current device every call must work (except graph_begin on the
 * legacy default stream, which must refuse).  The kind "other device" is a
 * stream of device 1 used with objects made on device 0 (skipped on one
 * GPU).  The kind "held" is a non-blocking stream held by a host function
 * until this thread lets it go after the call: every call must work and
 * return while the stream is held, but the two that wait for the stream
 * by design (waits_when_held); the host function's bound (HOLD_MS) tells.
 *
 * One TAP line per cell, "call / stream kind: what it did": the output is
 * the table of man 3 cuxfer's STREAMS AND CAPTURE, and what each cell must
 * do is read from that table (tests/lib/composition-table.h, checked
 * against the page by tests/composition/man-table).  tests/composition/per-thread.c
 * includes this file with CUDA_API_PER_THREAD_DEFAULT_STREAM defined, where
 * 0 is the per-thread default stream.
 */
#include "composition-table.h"
#include "sched-helpers.h"
#include <math.h>

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define PER_THREAD_BUILD 1
#define ZERO_NAME "0 (per-thread build)"
#else
#define PER_THREAD_BUILD 0
#define ZERO_NAME "0 (legacy default stream)"
#endif

#define NB ((size_t)1 << 20) /* bytes of every buffer */
#define ROW 16               /* row bytes of the 2D cells: narrow, planner land */
#define PH 48                /* pitch of the host views */
#define PD 32                /* pitch of the device views */
#define HT 8192              /* rows: PH * HT <= NB */
#define POISON 0xa5
#define DELAY_MS 10.0

/* ---- stream kinds --------------------------------------------------------- */
/* the columns of tests/lib/composition-table.h, whose rules every cell checks */
enum { K_ZERO = COMP_ZERO, K_LEGACY = COMP_LEGACY, K_PERTHREAD = COMP_PERTHREAD,
       K_BLOCKING = COMP_BLOCKING, K_NONBLOCKING = COMP_NONBLOCKING, K_GLOBAL = COMP_GLOBAL,
       K_THREADLOCAL = COMP_THREADLOCAL, K_RELAXED = COMP_RELAXED, K_OTHERDEV = COMP_OTHERDEV,
       K_HELD = COMP_HELD, K_COUNT = COMP_KINDS };
static const char *const kind_name[K_COUNT] = {
    ZERO_NAME, "cudaStreamLegacy", "cudaStreamPerThread", "blocking stream",
    "non-blocking stream", "captured (Global)", "captured (ThreadLocal)",
    "captured (Relaxed)", "stream of another device", "stream held by a host function"};
static const enum cudaStreamCaptureMode kind_mode[K_COUNT] = {
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal,
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal,
    cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed,
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal};

/* ---- the shared context ------------------------------------------------- */
typedef struct ctx {
    int ndev, dev;            /* devices; the data device of this cell */
    unsigned seed;
    unsigned char *hsrc, *hdst;     /* pinned */
    unsigned char *ref, *ref2, *tmp, *want; /* CPU: hsrc's and dB's bytes, scratch */
    unsigned char *pg_src, *pg_dst; /* pageable */
    unsigned char *managed;
    void *dA[2], *dB[2];            /* device buffers on device 0 and 1 */
    cuxfer_view hv_src, hv_dst, dv_a[2], dv_b[2];
    cudaStream_t blocking, nonblocking, other, plain[2], sig, held;
    /* objects, made on device 0 */
    cuxfer_timer timer;
    cuxfer_latch latch;
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block blk, blk2;
    cuxfer_plan2d span, pack;
    cuxfer_plan2d cal; /* default chunks: the test plans' 16 KiB chunks make a
                          calibration (64 MiB of rows per width) take minutes */
    cuxfer_stager stager;
    cuxfer_rois rois; /* AUTO: its kernel on CUDA 12.5+, the host gather before */
    cuxfer_roi tiles[HT / 16];
    cuxfer_graph g, g0;
    cuxfer_plan2d_tuning tun;
    int replay, capturing, iscap, cb_runs, cb_exact;
    cudaError_t cb_status;  /* what cuxfer_on_done's callback was given */
    cuxfer_ring ring;       /* two slots, device 0: its streams for the fences */
    const char *step; /* the step of a composite call that failed */
} ctx;

static ctx C;

/* A composite call's step: on failure remember which one and return. */
#define STEP(expr)                                                             \
    do {                                                                       \
        cudaError_t step_err_ = (expr);                                        \
        if (step_err_ != cudaSuccess) {                                        \
            c->step = #expr;                                                   \
            return step_err_;                                                  \
        }                                                                      \
    } while (0)

static void CUDART_CB delay_fn(void *arg)
{
    (void)arg;
    sleep_ms(DELAY_MS); /* no CUDA call: holds the stream back a little */
}

/* Queue a short host-side delay on s, so a missing dependency shows. */
static cudaError_t delay(cudaStream_t s) { return cudaLaunchHostFunc(s, delay_fn, NULL); }

/* The kind "held": a non-blocking stream held by a host function (a
 * gate, tests/lib/sched-helpers.h) until this thread lets it go after the
 * call, as a program's own host function that waits for the enqueuing
 * thread holds it.  Bounded at HOLD_MS so that a call which waits for the
 * stream costs that long instead of hanging; whether the gate timed out
 * tells that the call waited. */
#define HOLD_MS 3000.0
static gate held_gate;

static void sync_all(void)
{
    int d, saved = 0;
    GPU_MUST(cudaGetDevice(&saved));
    for (d = 0; d < C.ndev && d < 2; ++d) {
        GPU_MUST(cudaSetDevice(d));
        GPU_MUST(cudaDeviceSynchronize());
    }
    GPU_MUST(cudaSetDevice(saved));
}

static size_t readback(const void *dptr)
{
    GPU_MUST(cudaMemcpy(C.tmp, dptr, NB, cudaMemcpyDeviceToHost));
    return 0;
}

/* want := poison, then HT rows of ROW bytes from src (pitch sp) at pitch dp. */
static const unsigned char *want2d(const unsigned char *src, size_t sp, size_t dp)
{
    size_t y;
    memset(C.want, POISON, NB);
    for (y = 0; y < HT; ++y)
        memcpy(C.want + y * dp, src + y * sp, ROW);
    return C.want;
}

static size_t diff(const unsigned char *got, const unsigned char *want, const char *what)
{
    return count_diff(got, want, NB, what);
}

/* Fresh inputs and poisoned outputs; a block to copy from. */
static void prep(ctx *c)
{
    int d;
    ++c->seed;
    fill_pattern(c->ref, NB, c->seed);
    fill_pattern(c->ref2, NB, c->seed + 1000u);
    memcpy(c->hsrc, c->ref, NB);
    memcpy(c->pg_src, c->ref, NB);
    memcpy(c->managed, c->ref, NB);
    memset(c->hdst, POISON, NB);
    memset(c->pg_dst, POISON, NB);
    for (d = 0; d < c->ndev && d < 2; ++d) {
        GPU_MUST(cudaSetDevice(d));
        GPU_MUST(cudaMemset(c->dA[d], POISON, NB));
        GPU_MUST(cudaMemcpy(c->dB[d], c->ref2, NB, cudaMemcpyHostToDevice));
        GPU_MUST(cudaDeviceSynchronize());
    }
    GPU_MUST(cudaSetDevice(c->dev));
    if (!c->blk.impl)
        GPU_MUST(cuxfer_pinned_pool_acquire(&c->pool, NB, &c->blk));
    memcpy(c->blk.ptr, c->ref, NB);
    c->cb_runs = 0;
    c->cb_exact = 0;
    c->cb_status = cudaErrorUnknown;
    c->step = NULL;
}

/* ---- the calls ------------------------------------------------------------ */
typedef struct call {
    const char *name;
    cudaError_t (*run)(ctx *c, cudaStream_t s);
    size_t (*check)(ctx *c); /* after the run (or a replay) synchronized: bad bytes */
    cudaError_t (*cleanup)(ctx *c); /* after the cell, everything idle */
    int rule; /* its row of composition-table.h */
} call;

static cudaError_t r_copy_h2d(ctx *c, cudaStream_t s)
{
    return cuxfer_copy_async(c->dA[c->dev], c->hsrc, NB, s);
}
static size_t k_dA_ref(ctx *c) { readback(c->dA[c->dev]); return diff(c->tmp, c->ref, "dA"); }

static cudaError_t r_copy_d2h(ctx *c, cudaStream_t s)
{
    return cuxfer_copy_async(c->hdst, c->dB[c->dev], NB, s);
}
static size_t k_hdst_ref2(ctx *c) { return diff(c->hdst, c->ref2, "hdst"); }

static cudaError_t r_copy2d_h2d(ctx *c, cudaStream_t s)
{
    return cuxfer_copy2d_async(&c->dv_a[c->dev], &c->hv_src, s);
}
static size_t k_dA_2d(ctx *c)
{
    readback(c->dA[c->dev]);
    return diff(c->tmp, want2d(c->ref, PH, PD), "dA (2D)");
}

static cudaError_t r_copy2d_d2d(ctx *c, cudaStream_t s)
{
    cuxfer_view dst = c->hv_dst; /* the shape of a host view, in device memory */
    dst.ptr = c->dA[c->dev];
    dst.kind = CUXFER_MEMORY_DEVICE;
    dst.device = c->dev;
    return cuxfer_copy2d_async(&dst, &c->dv_b[c->dev], s);
}
static size_t k_dA_2d_ref2(ctx *c)
{
    readback(c->dA[c->dev]);
    return diff(c->tmp, want2d(c->ref2, PD, PH), "dA (2D D2D)");
}

static cudaError_t r_copy2d_d2h(ctx *c, cudaStream_t s)
{
    return cuxfer_copy2d_async(&c->hv_dst, &c->dv_b[c->dev], s);
}
static size_t k_hdst_2d(ctx *c) { return diff(c->hdst, want2d(c->ref2, PD, PH), "hdst (2D)"); }

static cudaError_t r_plan_span(ctx *c, cudaStream_t s)
{
    return cuxfer_plan2d_copy_async(&c->span, &c->dv_a[c->dev], &c->hv_src, s);
}
static cudaError_t r_plan_pack(ctx *c, cudaStream_t s)
{
    return cuxfer_plan2d_copy_async(&c->pack, &c->hv_dst, &c->dv_b[c->dev], s);
}
/* 32-byte rows (twice ROW, dB read densely): PACK with its direct share
 * on the plan's side stream where the copy kernel loaded (CUDA 12.5+). */
static cudaError_t r_plan_pack32(ctx *c, cudaStream_t s)
{
    cuxfer_view hv, dv;
    STEP(cuxfer_view_wrap(&hv, c->hdst, PH, 2 * ROW, HT, 1));
    STEP(cuxfer_view_wrap(&dv, c->dB[c->dev], 2 * ROW, 2 * ROW, HT, 1));
    return cuxfer_plan2d_copy_async(&c->pack, &hv, &dv, s);
}
static size_t k_hdst_2d32(ctx *c)
{
    size_t y;
    memset(c->want, POISON, NB);
    for (y = 0; y < HT; ++y)
        memcpy(c->want + y * PH, c->ref2 + y * 2 * ROW, 2 * ROW);
    return diff(c->hdst, c->want, "hdst (2D, 32-byte rows)");
}

/* 4-byte rows at host pitch 32: SPAN with its extraction by the copy
 * kernel where it loaded (CUDA 12.5+: one launch a chunk on the plan's
 * aux stream), in 16 chunks of the plan's 16 KiB, as many as
 * cuxfer_plan2d(3) promises return while the stream is held. */
static cudaError_t r_plan_span4(ctx *c, cudaStream_t s)
{
    cuxfer_view hv, dv;
    STEP(cuxfer_view_wrap(&hv, c->hsrc, 32, 4, HT, 1));
    STEP(cuxfer_view_wrap(&dv, c->dA[c->dev], PD, 4, HT, 1));
    return cuxfer_plan2d_copy_async(&c->span, &dv, &hv, s);
}
static size_t k_dA_2d4(ctx *c)
{
    size_t y;
    readback(c->dA[c->dev]);
    memset(c->want, POISON, NB);
    for (y = 0; y < HT; ++y)
        memcpy(c->want + y * PD, c->ref + y * 32, 4);
    return diff(c->tmp, c->want, "dA (2D, 4-byte rows)");
}

/* Many ROIs: HT / 16 tiles of 16x16 covering the host view, packed in
 * the dense buffer at pitch ROW. */
static cudaError_t r_rois_h2d(ctx *c, cudaStream_t s)
{
    cuxfer_view dv;
    STEP(cuxfer_view_wrap(&dv, c->dA[c->dev], ROW, ROW, HT, 1));
    return cuxfer_rois_copy_async(&c->rois, CUXFER_ROIS_H2D, &c->hv_src, c->tiles, HT / 16, &dv,
                                  s);
}
static size_t k_dA_rois(ctx *c)
{
    readback(c->dA[c->dev]);
    return diff(c->tmp, want2d(c->ref, PH, ROW), "dA (tiles)");
}
static cudaError_t r_rois_d2h(ctx *c, cudaStream_t s)
{
    cuxfer_view dv;
    STEP(cuxfer_view_wrap(&dv, c->dB[c->dev], ROW, ROW, HT, 1));
    return cuxfer_rois_copy_async(&c->rois, CUXFER_ROIS_D2H, &c->hv_dst, c->tiles, HT / 16, &dv,
                                  s);
}
static size_t k_hdst_rois(ctx *c) { return diff(c->hdst, want2d(c->ref2, ROW, PH), "hdst (tiles)"); }

static cudaError_t r_timer(ctx *c, cudaStream_t s)
{
    STEP(cuxfer_timer_start(&c->timer, s));
    STEP(cuxfer_copy_async(c->dA[c->dev], c->hsrc, NB, s));
    STEP(cuxfer_timer_stop(&c->timer, s));
    return cudaSuccess;
}
static size_t k_timer(ctx *c)
{
    float ms = NAN;
    cudaError_t err = cuxfer_timer_ms(&c->timer, CUXFER_WAIT, &ms);
    size_t bad = k_dA_ref(c);
    if (err != cudaSuccess || !isfinite(ms) || ms < 0.0f || ms > 60000.0f) {
        diag("  cuxfer_timer_ms -> %s, %g ms %s", cudaGetErrorName(err), (double)ms,
             cuxfer_last_reason());
        ++bad;
    }
    return bad;
}

/* Fork and join: sig waits for s, copies after a delay, s waits for sig. */
static cudaError_t r_stream_wait(ctx *c, cudaStream_t s)
{
    STEP(cuxfer_stream_wait(c->sig, s));
    STEP(delay(c->sig));
    STEP(cuxfer_copy_async(c->dA[0], c->hsrc, NB, c->sig));
    STEP(cuxfer_stream_wait(s, c->sig));
    STEP(cuxfer_copy_async(c->hdst, c->dA[0], NB, s));
    return cudaSuccess;
}
static size_t k_hdst_ref(ctx *c) { return diff(c->hdst, c->ref, "hdst"); }

static void CUDART_CB on_done(void *arg)
{
    ctx *c = (ctx *)arg;
    c->cb_exact = memcmp(c->hdst, c->ref2, NB) == 0;
    __atomic_add_fetch(&c->cb_runs, 1, __ATOMIC_ACQ_REL);
}
static cudaError_t r_on_complete(ctx *c, cudaStream_t s)
{
    STEP(cuxfer_copy_async(c->hdst, c->dB[c->dev], NB, s));
    STEP(cuxfer_on_complete(s, on_done, c));
    return cudaSuccess;
}
static size_t k_on_complete(ctx *c)
{
    size_t bad = k_hdst_ref2(c);
    int runs = __atomic_load_n(&c->cb_runs, __ATOMIC_ACQUIRE);
    if (runs != 1 || !c->cb_exact) {
        diag("  the function ran %d time(s) (want 1), saw %s bytes", runs,
             c->cb_exact ? "exact" : "wrong");
        ++bad;
    }
    return bad;
}

/* The callback with the stream's status: it must run once, see the bytes
 * the stream wrote, and be told cudaSuccess. */
static void CUDART_CB on_done_status(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    ((ctx *)arg)->cb_status = status; /* before on_done counts the run */
    on_done(arg);
}
static cudaError_t r_on_done(ctx *c, cudaStream_t s)
{
    STEP(cuxfer_copy_async(c->hdst, c->dB[c->dev], NB, s));
    STEP(cuxfer_on_done(s, on_done_status, c));
    return cudaSuccess;
}
static size_t k_on_done(ctx *c)
{
    size_t bad = k_on_complete(c);
    if (c->cb_status != cudaSuccess) {
        diag("  the callback was given %s (want cudaSuccess)", cudaGetErrorName(c->cb_status));
        ++bad;
    }
    return bad;
}

/* Fence a ring's streams behind s and join them back: slot 0's stream
 * uploads after a delay, s downloads what it uploaded. */
static cudaError_t r_ring_fence(ctx *c, cudaStream_t s)
{
    cudaStream_t rs;
    STEP(cuxfer_ring_stream(&c->ring, 0, &rs));
    STEP(cuxfer_ring_wait(&c->ring, s));
    STEP(delay(rs));
    STEP(cuxfer_copy_async(c->dA[0], c->hsrc, NB, rs));
    STEP(cuxfer_stream_wait_ring(s, &c->ring));
    STEP(cuxfer_copy_async(c->hdst, c->dA[0], NB, s));
    return cudaSuccess;
}

/* The synchronous copies take no stream: made while s is in each state,
 * they must work at once (a capture captures nothing of them and stays
 * valid: its replays leave the poisoned output alone). */
static cudaError_t r_copy_sync(ctx *c, cudaStream_t s)
{
    (void)s;
    return cuxfer_copy(c->hdst, c->dB[c->dev], NB);
}
static cudaError_t r_copy2d_sync(ctx *c, cudaStream_t s)
{
    (void)s;
    return cuxfer_copy2d(&c->hv_dst, &c->dv_b[c->dev]);
}
static size_t k_untouched(ctx *c)
{
    memset(c->want, POISON, NB);
    return diff(c->hdst, c->want, "hdst (a replay must not copy)");
}
static size_t k_copy_sync(ctx *c) { return c->replay ? k_untouched(c) : k_hdst_ref2(c); }
static size_t k_copy2d_sync(ctx *c) { return c->replay ? k_untouched(c) : k_hdst_2d(c); }

static cudaError_t r_latch(ctx *c, cudaStream_t s)
{
    STEP(cuxfer_copy_async(c->hdst, c->dB[c->dev], NB, s));
    STEP(cuxfer_latch_arm(&c->latch, s));
    return cudaSuccess;
}
static size_t k_latch(ctx *c)
{
    cudaError_t err = cudaSuccess;
    size_t bad = 0;
    if (c->replay)
        err = cuxfer_latch_expect(&c->latch, 1);
    if (err == cudaSuccess)
        err = cuxfer_latch_wait(&c->latch, 10000);
    if (err != cudaSuccess) {
        diag("  cuxfer_latch_wait -> %s %s", cudaGetErrorName(err), cuxfer_last_reason());
        ++bad;
    }
    return bad + k_hdst_ref2(c);
}

static cudaError_t r_prefetch(ctx *c, cudaStream_t s)
{
    STEP(cuxfer_prefetch(c->managed, NB, c->dev, s));
    STEP(cuxfer_copy_async(c->dA[c->dev], c->managed, NB, s));
    return cudaSuccess;
}

/* The block is read by a copy still queued (behind a delay) when it is
 * released; the next acquire of its size, whoever gets it, writes poison. */
static cudaError_t r_pool(ctx *c, cudaStream_t s)
{
    STEP(delay(s));
    STEP(cuxfer_copy_async(c->dA[c->dev], c->blk.ptr, NB, s));
    STEP(cuxfer_pinned_pool_release(&c->pool, &c->blk, s));
    STEP(cuxfer_pinned_pool_acquire(&c->pool, NB, &c->blk2));
    memset(c->blk2.ptr, POISON, NB);
    return cudaSuccess;
}
static cudaError_t z_pool(ctx *c)
{
    /* everything synchronized: the plain stream is idle */
    return c->blk2.impl ? cuxfer_pinned_pool_release(&c->pool, &c->blk2, c->plain[0])
                        : cudaSuccess;
}

static cudaError_t r_stage_h2d(ctx *c, cudaStream_t s)
{
    return cuxfer_stage_h2d(&c->stager, c->dA[c->dev], c->pg_src, NB, s);
}
static size_t k_stage_h2d(ctx *c)
{
    cudaError_t err = cuxfer_stager_wait(&c->stager, 30000);
    if (err != cudaSuccess) {
        diag("  cuxfer_stager_wait -> %s %s", cudaGetErrorName(err), cuxfer_last_reason());
        return 1;
    }
    return k_dA_ref(c);
}
/* `after` matters: what the stager reads is written on s behind a delay. */
static cudaError_t r_stage_d2h(ctx *c, cudaStream_t s)
{
    STEP(delay(s));
    STEP(cuxfer_copy_async(c->dA[c->dev], c->hsrc, NB, s));
    STEP(cuxfer_stage_d2h(&c->stager, c->pg_dst, c->dA[c->dev], NB, s));
    return cudaSuccess;
}
static size_t k_stage_d2h(ctx *c)
{
    cudaError_t err = cuxfer_stager_wait(&c->stager, 30000);
    if (err != cudaSuccess) {
        diag("  cuxfer_stager_wait -> %s %s", cudaGetErrorName(err), cuxfer_last_reason());
        return 1;
    }
    return diff(c->pg_dst, c->ref, "pageable dst");
}
static cudaError_t z_stager(ctx *c)
{
    /* collect a job nobody waited for (the check does when the call worked) */
    (void)cuxfer_stager_wait(&c->stager, 30000);
    return cudaSuccess;
}

static cudaError_t r_graph(ctx *c, cudaStream_t s)
{
    cudaError_t err;
    STEP(cuxfer_graph_begin(s));
    err = cuxfer_copy_async(c->dA[c->dev], c->hsrc, NB, s);
    if (err != cudaSuccess) {
        cudaGraph_t g = NULL;
        c->step = "cuxfer_copy_async inside cuxfer_graph_begin";
        if (cudaStreamEndCapture(s, &g) == cudaSuccess && g)
            (void)cudaGraphDestroy(g);
        return err;
    }
    STEP(cuxfer_graph_end(&c->g, s));
    STEP(cuxfer_graph_launch(&c->g, s));
    return cudaSuccess;
}
static cudaError_t z_graph(ctx *c) { return cuxfer_graph_destroy(&c->g); }

/* A graph captured at start-up (hsrc -> dA[0] on device 0), launched on s. */
static cudaError_t r_graph_launch(ctx *c, cudaStream_t s) { return cuxfer_graph_launch(&c->g0, s); }
static size_t k_graph_launch(ctx *c)
{
    readback(c->dA[0]);
    return diff(c->tmp, c->ref, "dA[0]");
}

static cudaError_t r_is_capturing(ctx *c, cudaStream_t s)
{
    c->iscap = cuxfer_stream_is_capturing(s);
    return cudaSuccess;
}
static size_t k_is_capturing(ctx *c)
{
    if (c->iscap == c->capturing)
        return 0;
    diag("  cuxfer_stream_is_capturing said %d", c->iscap);
    return 1;
}

static cudaError_t r_calibrate(ctx *c, cudaStream_t s)
{
    memset(&c->tun, 0xff, sizeof c->tun);
    return cuxfer_plan2d_calibrate(&c->cal, s, &c->tun, NULL, NULL);
}
static size_t k_calibrate(ctx *c)
{
    size_t bad = 0;
    if (c->tun.span_max_row > 128 || c->tun.pack_max_row > 128 || c->tun.max_ratio == 0) {
        diag("  tuning span %zu pack %zu ratio %zu", c->tun.span_max_row, c->tun.pack_max_row,
             c->tun.max_ratio);
        ++bad;
    }
    if (c->cal.opt.strategy != CUXFER_PLAN_SPAN) {
        diag("  the plan's strategy is %d after calibration (want SPAN)", c->cal.opt.strategy);
        ++bad;
    }
    /* and the plan still copies */
    GPU_MUST(cuxfer_plan2d_copy_async(&c->cal, &c->dv_a[0], &c->hv_src, c->plain[0]));
    GPU_MUST(cudaStreamSynchronize(c->plain[0]));
    readback(c->dA[0]);
    return bad + diff(c->tmp, want2d(c->ref, PH, PD), "dA after calibration");
}

static const call calls[] = {
    {"cuxfer_copy_async H2D", r_copy_h2d, k_dA_ref, NULL, COMP_COPY},
    {"cuxfer_copy_async D2H", r_copy_d2h, k_hdst_ref2, NULL, COMP_COPY},
    {"cuxfer_copy2d_async H2D", r_copy2d_h2d, k_dA_2d, NULL, COMP_COPY2D},
    {"cuxfer_copy2d_async D2D", r_copy2d_d2d, k_dA_2d_ref2, NULL, COMP_COPY2D},
    {"cuxfer_copy2d_async D2H", r_copy2d_d2h, k_hdst_2d, NULL, COMP_COPY2D},
    {"cuxfer_plan2d_copy_async SPAN", r_plan_span, k_dA_2d, NULL, COMP_PLAN2D},
    {"cuxfer_plan2d_copy_async PACK", r_plan_pack, k_hdst_2d, NULL, COMP_PLAN2D},
    {"cuxfer_plan2d_copy_async PACK, 32-byte rows", r_plan_pack32, k_hdst_2d32, NULL, COMP_PLAN2D},
    {"cuxfer_plan2d_copy_async SPAN, 4-byte rows", r_plan_span4, k_dA_2d4, NULL, COMP_PLAN2D},
    {"cuxfer_timer_start/stop", r_timer, k_timer, NULL, COMP_TIMER},
    {"cuxfer_stream_wait fork/join", r_stream_wait, k_hdst_ref, NULL, COMP_STREAM_WAIT},
    {"cuxfer_on_complete", r_on_complete, k_on_complete, NULL, COMP_ON_COMPLETE},
    {"cuxfer_on_done", r_on_done, k_on_done, NULL, COMP_ON_DONE},
    {"cuxfer_latch_arm", r_latch, k_latch, NULL, COMP_LATCH_ARM},
    {"cuxfer_ring_wait/cuxfer_stream_wait_ring", r_ring_fence, k_hdst_ref, NULL, COMP_RING_FENCE},
    {"cuxfer_copy (synchronous)", r_copy_sync, k_copy_sync, NULL, COMP_COPY_SYNC},
    {"cuxfer_copy2d (synchronous)", r_copy2d_sync, k_copy2d_sync, NULL, COMP_COPY2D_SYNC},
    {"cuxfer_prefetch", r_prefetch, k_dA_ref, NULL, COMP_PREFETCH},
    {"cuxfer_pinned_pool_release", r_pool, k_dA_ref, z_pool, COMP_POOL_RELEASE},
    {"cuxfer_stage_h2d", r_stage_h2d, k_stage_h2d, z_stager, COMP_STAGE},
    {"cuxfer_stage_d2h", r_stage_d2h, k_stage_d2h, z_stager, COMP_STAGE},
    {"cuxfer_graph_begin/end/launch", r_graph, k_dA_ref, z_graph, COMP_GRAPH_BEGIN},
    {"cuxfer_graph_launch", r_graph_launch, k_graph_launch, NULL, COMP_GRAPH_LAUNCH},
    {"cuxfer_stream_is_capturing", r_is_capturing, k_is_capturing, NULL, COMP_IS_CAPTURING},
    {"cuxfer_plan2d_calibrate", r_calibrate, k_calibrate, NULL, COMP_CALIBRATE},
    {"cuxfer_rois_copy_async H2D", r_rois_h2d, k_dA_rois, NULL, COMP_ROIS_H2D},
    {"cuxfer_rois_copy_async D2H", r_rois_d2h, k_hdst_rois, NULL, COMP_ROIS_D2H},
};
#define NCALLS ((int)(sizeof calls / sizeof calls[0]))

/* What a cell must do: 1 work, -1 refuse, 0 either (composition-table.h). */
static int expected(const call *k, int kind)
{
    return comp_expect(k->rule, kind, !PER_THREAD_BUILD, cuxfer_managed_concurrent(C.dev));
}

/* Behind a held stream every call returns at once but those that wait for
 * the stream by design (composition-table.h's held column). */
static int waits_when_held(const call *k) { return comp_waits_when_held(k->rule, C.rois.kernel != NULL); }

/* ---- one cell ------------------------------------------------------------- */
/* The device is usable and no error was left behind. */
static int healthy(char *why, size_t n)
{
    unsigned char b[64], back[64];
    cudaError_t last = cudaGetLastError(), e;
    if (last != cudaSuccess) {
        (void)snprintf(why, n, "an error was left behind: %s", cudaGetErrorName(last));
        return 0;
    }
    memset(b, 0x3c, sizeof b);
    memset(back, 0, sizeof back);
    e = cudaMemcpy(C.dA[0], b, sizeof b, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(back, C.dA[0], sizeof b, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess || memcmp(b, back, sizeof b) != 0) {
        (void)snprintf(why, n, "the device is no longer usable: %s", cudaGetErrorName(e));
        return 0;
    }
    return 1;
}

static cudaStream_t stream_of(int kind)
{
    switch (kind) {
    case K_ZERO: return (cudaStream_t)0;
    case K_LEGACY: return cudaStreamLegacy;
    case K_PERTHREAD: return cudaStreamPerThread;
    case K_BLOCKING: return C.blocking;
    case K_NONBLOCKING: return C.nonblocking;
    case K_OTHERDEV: return C.other;
    case K_HELD: return C.held;
    default: return NULL;
    }
}

/* The run of an ordinary (not captured) cell, synchronized and checked. */
static void ordinary(const call *k, cudaStream_t s, int hold, char *what, size_t n, int *works,
                     int *pass)
{
    cudaError_t err;
    size_t bad;
    int waited = 0;
    char why[CUXFER_REASON_MAX];
    prep(&C);
    C.capturing = 0;
    C.replay = 0;
    C.iscap = -1;
    if (hold)
        GPU_MUST(gate_hold_for(&held_gate, s, HOLD_MS));
    cuxfer_clear_reason();
    err = k->run(&C, s);
    (void)snprintf(why, sizeof why, "%s", cuxfer_last_reason());
    if (hold) {
        waited = __atomic_load_n(&held_gate.timed_out, __ATOMIC_ACQUIRE);
        gate_open(&held_gate);
    }
    sync_all();
    if (err == cudaSuccess) {
        *works = 1;
        bad = k->check(&C);
        if (bad)
            (void)snprintf(what, n, "works, but %zu bytes wrong", bad);
        else if (hold)
            (void)snprintf(what, n, "works, %s",
                           waited ? "waited for the stream" : "returned while it was held");
        else
            (void)snprintf(what, n, "works");
        *pass = bad == 0;
        if (hold && waited != waits_when_held(k)) {
            diag("  must %s", waits_when_held(k) ? "wait for the held stream (it does by design)"
                                                 : "return while the stream is held");
            *pass = 0;
        }
    } else {
        *works = 0;
        (void)snprintf(what, n, "refuses %s", cudaGetErrorName(err));
        diag("  %s%s%s: %s", what, C.step ? " at " : "", C.step ? C.step : "",
             why[0] ? why : "(no reason given)");
        *pass = why[0] != '\0';
    }
    if (k->cleanup && (err = k->cleanup(&C)) != cudaSuccess) {
        diag("  cleanup after the call -> %s %s", cudaGetErrorName(err), cuxfer_last_reason());
        *pass = 0;
    }
    sync_all();
    if (!healthy(why, sizeof why)) {
        diag("  %s", why);
        *pass = 0;
    }
}

static void captured(const call *k, int kind, char *what, size_t n, int *works, int *pass)
{
    cudaStream_t s;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaError_t err, eend, e;
    char why[CUXFER_REASON_MAX], after[128];
    int i, ok_after = 0, w2 = 0;
    size_t bad = 0;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    prep(&C);
    C.capturing = 1;
    C.replay = 0;
    C.iscap = -1;
    GPU_MUST(cudaStreamBeginCapture(s, kind_mode[kind]));
    cuxfer_clear_reason();
    err = k->run(&C, s);
    (void)snprintf(why, sizeof why, "%s", cuxfer_last_reason());
    if (cudaStreamIsCapturing(s, &st) != cudaSuccess)
        st = cudaStreamCaptureStatusNone;
    eend = cudaStreamEndCapture(s, &graph);
    C.capturing = 0;
    *pass = st == cudaStreamCaptureStatusActive && eend == cudaSuccess;
    if (!*pass) {
        diag("  the capture is %s after the call; cudaStreamEndCapture -> %s",
             st == cudaStreamCaptureStatusActive ? "active"
             : st == cudaStreamCaptureStatusInvalidated ? "INVALIDATED" : "gone",
             cudaGetErrorName(eend));
        (void)cudaGetLastError();
    }
    if (err != cudaSuccess) {
        *works = 0;
        (void)snprintf(what, n, "refuses %s%s", cudaGetErrorName(err),
                       *pass ? ", capture still valid" : ", CAPTURE BROKEN");
        diag("  %s%s%s: %s", what, C.step ? " at " : "", C.step ? C.step : "",
             why[0] ? why : "(no reason given)");
        if (!why[0])
            *pass = 0;
    } else {
        *works = 1;
        if (*pass) {
            e = cudaGraphInstantiateWithFlags(&exec, graph, 0);
            if (e != cudaSuccess) {
                diag("  cudaGraphInstantiateWithFlags -> %s", cudaGetErrorName(e));
                *pass = 0;
            }
        }
        for (i = 0; i < 3 && *pass; ++i) {
            prep(&C);
            C.capturing = 1; /* what the captured call saw */
            C.replay = 1;
            e = cudaGraphLaunch(exec, s);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(s);
            sync_all();
            if (e != cudaSuccess) {
                diag("  replay %d: %s", i + 1, cudaGetErrorName(e));
                *pass = 0;
                break;
            }
            bad = k->check(&C);
            if (bad) {
                diag("  replay %d: %zu bytes wrong", i + 1, bad);
                *pass = 0;
            }
        }
        (void)snprintf(what, n, *pass ? "captured, 3 replays exact" : "captured, WRONG");
    }
    if (exec)
        GPU_MUST(cudaGraphExecDestroy(exec));
    if (graph)
        GPU_MUST(cudaGraphDestroy(graph));
    sync_all();
    if (k->cleanup && (e = k->cleanup(&C)) != cudaSuccess) {
        diag("  cleanup after the capture -> %s %s", cudaGetErrorName(e), cuxfer_last_reason());
        *pass = 0;
    }
    /* The same object in an ordinary call afterwards. */
    ordinary(k, C.plain[0], 0, after, sizeof after, &w2, &ok_after);
    if (!ok_after || !w2) {
        diag("  the ordinary call afterwards: %s", after);
        *pass = 0;
    }
    GPU_MUST(cudaStreamDestroy(s));
}

static void cell(const call *k, int kind)
{
    char what[160], why[256];
    int works = 0, pass = 0, want;
    C.dev = kind == K_OTHERDEV ? 1 : 0;
    if (kind == K_OTHERDEV && C.ndev < 2) {
        skip(1, "%s / %s: needs 2 GPUs", k->name, kind_name[kind]);
        return;
    }
    want = expected(k, kind);
    (void)cudaGetLastError();
    GPU_MUST(cudaSetDevice(C.dev));
    if (comp_is_capture(kind))
        captured(k, kind, what, sizeof what, &works, &pass);
    else
        ordinary(k, stream_of(kind), kind == K_HELD, what, sizeof what, &works, &pass);
    GPU_MUST(cudaSetDevice(0));
    if (pass && want == 1 && !works) {
        diag("  must work on this stream kind");
        pass = 0;
    }
    if (pass && want == -1 && works) {
        diag("  must refuse on this stream kind");
        pass = 0;
    }
    if (!healthy(why, sizeof why)) {
        diag("  %s", why);
        pass = 0;
    }
    ok(pass, "%s / %s: %s", k->name, kind_name[kind], what);
}

/* ---- setup ---------------------------------------------------------------- */
static void setup(void)
{
    int d;
    cuxfer_plan2d_options po;
    cuxfer_stager_options so;
    cudaStream_t cap;
    C.ndev = C.ndev > 2 ? 2 : C.ndev;
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cuxfer_host_alloc((void **)&C.hsrc, NB, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&C.hdst, NB, 1, 0));
    C.ref = (unsigned char *)malloc(NB);
    C.ref2 = (unsigned char *)malloc(NB);
    C.tmp = (unsigned char *)malloc(NB);
    C.want = (unsigned char *)malloc(NB);
    C.pg_src = (unsigned char *)malloc(NB);
    C.pg_dst = (unsigned char *)malloc(NB);
    if (!C.ref || !C.ref2 || !C.tmp || !C.want || !C.pg_src || !C.pg_dst)
        bail("out of host memory");
    GPU_MUST(cuxfer_managed_alloc((void **)&C.managed, NB, 1, 0));
    GPU_MUST(cuxfer_view_wrap(&C.hv_src, C.hsrc, PH, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&C.hv_dst, C.hdst, PH, ROW, HT, 1));
    for (d = C.ndev - 1; d >= 0; --d) {
        GPU_MUST(cudaSetDevice(d));
        GPU_MUST(cudaMalloc(&C.dA[d], NB));
        GPU_MUST(cudaMalloc(&C.dB[d], NB));
        GPU_MUST(cuxfer_view_wrap(&C.dv_a[d], C.dA[d], PD, ROW, HT, 1));
        GPU_MUST(cuxfer_view_wrap(&C.dv_b[d], C.dB[d], PD, ROW, HT, 1));
        GPU_MUST(cudaStreamCreateWithFlags(&C.plain[d], cudaStreamNonBlocking));
        if (d == 1)
            GPU_MUST(cudaStreamCreateWithFlags(&C.other, cudaStreamNonBlocking));
    }
    /* device 0 is current: every object below is device 0's */
    GPU_MUST(cudaStreamCreateWithFlags(&C.blocking, cudaStreamDefault));
    GPU_MUST(cudaStreamCreateWithFlags(&C.nonblocking, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamCreateWithFlags(&C.sig, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamCreateWithFlags(&C.held, cudaStreamNonBlocking));
    GPU_MUST(cuxfer_timer_create(&C.timer));
    GPU_MUST(cuxfer_latch_init(&C.latch));
    GPU_MUST(cuxfer_ring_create(&C.ring, 2, 4096, 4096, NULL));
    GPU_MUST(cuxfer_pinned_pool_create(&C.pool, NULL));
    memset(&po, 0, sizeof po);
    po.chunk_bytes = 16384; /* several chunks per copy */
    po.threads = 2;
    po.strategy = CUXFER_PLAN_SPAN;
    GPU_MUST(cuxfer_plan2d_create(&C.span, &po));
    po.strategy = CUXFER_PLAN_PACK;
    GPU_MUST(cuxfer_plan2d_create(&C.pack, &po));
    memset(&po, 0, sizeof po);
    po.strategy = CUXFER_PLAN_SPAN;
    GPU_MUST(cuxfer_plan2d_create(&C.cal, &po));
    {
        cuxfer_rois_options ro;
        size_t i;
        memset(&ro, 0, sizeof ro);
        ro.threads = 2;
        GPU_MUST(cuxfer_rois_create(&C.rois, &ro));
        for (i = 0; i < HT / 16; ++i) {
            C.tiles[i].x = 0;
            C.tiles[i].y = i * 16;
            C.tiles[i].width = C.tiles[i].height = 16;
        }
    }
    memset(&so, 0, sizeof so);
    so.slots = 4;
    so.slot_bytes = 65536;
    so.threads = 2;
    GPU_MUST(cuxfer_stager_create(&C.stager, &so));
    GPU_MUST(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
    GPU_MUST(cuxfer_graph_begin(cap));
    GPU_MUST(cudaMemcpyAsync(C.dA[0], C.hsrc, NB, cudaMemcpyHostToDevice, cap));
    GPU_MUST(cuxfer_graph_end(&C.g0, cap));
    GPU_MUST(cudaStreamDestroy(cap));
}

static void teardown(void)
{
    int d;
    sync_all();
    GPU_OK(cuxfer_pinned_pool_release(&C.pool, &C.blk, C.plain[0]), "teardown: block released");
    GPU_OK(cudaStreamSynchronize(C.plain[0]), "teardown: idle");
    GPU_OK(cuxfer_pinned_pool_destroy(&C.pool), "teardown: pool destroyed");
    GPU_OK(cuxfer_stager_destroy(&C.stager), "teardown: stager destroyed");
    GPU_OK(cuxfer_plan2d_destroy(&C.span), "teardown: SPAN plan destroyed");
    GPU_OK(cuxfer_plan2d_destroy(&C.pack), "teardown: PACK plan destroyed");
    GPU_OK(cuxfer_plan2d_destroy(&C.cal), "teardown: calibration plan destroyed");
    GPU_OK(cuxfer_rois_destroy(&C.rois), "teardown: rois plan destroyed");
    GPU_OK(cuxfer_latch_destroy(&C.latch), "teardown: latch destroyed");
    GPU_OK(cuxfer_ring_destroy(&C.ring), "teardown: ring destroyed");
    GPU_OK(cuxfer_timer_destroy(&C.timer), "teardown: timer destroyed");
    GPU_OK(cuxfer_graph_destroy(&C.g0), "teardown: graph destroyed");
    GPU_OK(cudaStreamDestroy(C.blocking), "teardown: streams destroyed");
    GPU_MUST(cudaStreamDestroy(C.nonblocking));
    GPU_MUST(cudaStreamDestroy(C.sig));
    GPU_MUST(cudaStreamDestroy(C.held));
    for (d = 0; d < C.ndev; ++d) {
        GPU_MUST(cudaSetDevice(d));
        GPU_MUST(cudaStreamDestroy(C.plain[d]));
        GPU_MUST(cudaFree(C.dA[d]));
        GPU_MUST(cudaFree(C.dB[d]));
    }
    GPU_MUST(cudaSetDevice(0));
    if (C.other)
        GPU_MUST(cudaStreamDestroy(C.other));
    GPU_MUST(cuxfer_managed_free(C.managed));
    GPU_MUST(cuxfer_host_free(C.hsrc));
    GPU_MUST(cuxfer_host_free(C.hdst));
    free(C.ref);
    free(C.ref2);
    free(C.tmp);
    free(C.want);
    free(C.pg_src);
    free(C.pg_dst);
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind at the end");
}

int main(void)
{
    int i, k;
    C.ndev = gpu_require(1);
    guard_install(1200);
    plan(0);
    diag("%d GPU(s); %s; CUDA runtime headers %d", C.ndev,
         PER_THREAD_BUILD ? "built with CUDA_API_PER_THREAD_DEFAULT_STREAM" : "legacy build",
         CUDART_VERSION);
    setup();
    for (i = 0; i < NCALLS; ++i)
        for (k = 0; k < K_COUNT; ++k)
            cell(&calls[i], k);
    teardown();
    done_testing();
}
