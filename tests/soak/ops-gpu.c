/* SPDX-License-Identifier: MIT */
/*
 * ops-gpu.c - the soak's operations on a device.  Each thread owns five
 * buffers (pinned, pageable, device, managed, and device 1's with two
 * GPUs) and a model of their bytes.  A stream-taking call is made on a
 * stream kind drawn from the composition table (tests/lib/composition-
 * table.h: legacy 0, per-thread 0, blocking, non-blocking, a stream pool's,
 * another device's, a held one, a capture in each mode); what the table
 * says it must do is checked (works, refuses with a reason, capture still
 * valid), and after every synchronisation point every buffer it touched
 * is compared byte for byte with the model: the sources were refilled and
 * the destinations poisoned just before.  A call captured is replayed
 * twice, each time with fresh sources and poisoned destinations.
 *
 * A Global-mode capture makes other threads' synchronous CUDA calls
 * illegal (CUDA's rule, not cuxfer's), so it holds a process-wide lock
 * for writing; every other GPU step holds it for reading.
 */
#include "composition-table.h"
#include "soak.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B_PIN, B_PAGE, B_DEV, B_MAN, B_DEV1, B_COUNT };
static const char *const buf_name[B_COUNT] = {"pinned", "pageable", "device", "managed",
                                              "device1"};
static const int buf_kind[B_COUNT] = {CUXFER_MEMORY_PINNED, CUXFER_MEMORY_PAGEABLE,
                                      CUXFER_MEMORY_DEVICE, CUXFER_MEMORY_MANAGED,
                                      CUXFER_MEMORY_DEVICE};
#define GB ((size_t)256 << 10) /* bytes of each buffer */
#define POISON 0xa5
#define HOLD_MS 3000.0
/* cuxfer_plan2d_calibrate takes seconds (its measurement size is fixed:
 * 64 MiB of rows per width): on a stream the table says it works on, one
 * drawn in CAL_RARE is kept (a few a minute at the soak's pace); where it
 * is refused, at once, every one. */
#define CAL_RARE 250
#define CAL_MEASURES 64

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define ZERO_IS_LEGACY 0
#else
#define ZERO_IS_LEGACY 1
#endif

/* A transfer: h rows of `row` bytes, src rows spitch apart, dst dpitch. */
typedef struct xfer {
    int db, sb;
    size_t doff, soff, dpitch, spitch, row, h;
} xfer;

struct soak_gpu {
    unsigned char *buf[B_COUNT], *mod[B_COUNT], *tmp;
    cudaStream_t nb, blk, sig, cap, other;
    cudaStream_t io; /* the model's bytes in and out (push) */
    cuxfer_stream_pool pool, wpool; /* its own two streams; sig and io wrapped */
    unsigned char *fan_h, *fan_d;   /* FANB bytes each: op_fan's and op_ring's own */
    unsigned char *adv;             /* GB of managed memory that only
                                       cuxfer_advise touches (HACKING, "Soak":
                                       advice and held streams) */
    cuxfer_timer timer;
    cuxfer_latch latch;
    cuxfer_plan2d plan[3]; /* SPAN, PACK, AUTO: small chunks, many of them per copy */
    cuxfer_plan2d cal;     /* AUTO, default chunks (the fastest calibration): calibrated */
    cuxfer_stager stager;
    cuxfer_stager_options stager_opt; /* what it was created with */
    cuxfer_rois rois;
    cuxfer_graph g0; /* pinned [0, G0N) -> device [G0OFF, ...), captured at setup */
    cuxfer_ring ring; /* two slots on device 0: its streams for the ring fences */
    cuxfer_ring tring; /* one slot, timing: cuxfer_ring_slot_ms */
    long tring_cycles; /* submissions to it so far (the model's count) */
    int cb_runs, cb_bad;
    size_t cb_first;     /* the first byte the callback saw wrong */
    int cb_got, cb_exp;  /* and what it saw there, and wanted */
    cudaError_t cb_status; /* what cuxfer_on_done's callback was given */
    const unsigned char *cb_want; /* what the callback must see in pinned [cb_off, +cb_n) */
    size_t cb_off, cb_n;
    int held_timed_out, held_open;
    double held_limit;
    char held_others[4096]; /* the threads' calls when the hold ran out */
};
#define G0N ((size_t)4099)
#define FANB ((size_t)65536)
#define G0OFF ((size_t)8192)

static struct {
    int ndev;
    cuxfer_pinned_pool pool;
    cuxfer_stream_pool spool;
    pthread_rwlock_t cap_lock;
    pthread_mutex_t turn; /* writers first: a reader passes it before taking the lock */
    size_t free0, free_warm;
    long counts[COMP_CALLS][COMP_KINDS];
} G;

#define CK(t, expr)                                                                       \
    do {                                                                                  \
        cudaError_t ck_ = (expr);                                                         \
        if (ck_ != cudaSuccess)                                                           \
            return soak_fail(t, "%s -> %s %s", #expr, cudaGetErrorName(ck_),              \
                             cuxfer_last_reason());                                       \
    } while (0)

/* ---- buffers and the model ------------------------------------------------ */
/* The model's bytes of b into the buffer (everything idle).  Not
 * cudaMemcpy: from pageable memory it returns once the bytes are staged,
 * before they land ("API synchronization behavior"), and a graph launched
 * next on a non-blocking stream would race them; its own stream, waited
 * for, lands them first. */
static int push(soak_thread *t, int b)
{
    soak_gpu *g = t->g;
    if (b == B_PIN || b == B_PAGE)
        memcpy(g->buf[b], g->mod[b], GB);
    else {
        CK(t, cudaMemcpyAsync(g->buf[b], g->mod[b], GB, cudaMemcpyDefault, g->io));
        CK(t, cudaStreamSynchronize(g->io));
    }
    return 0;
}

/* The buffer against the model, byte for byte. */
static int verify(soak_thread *t, int b, const char *when)
{
    soak_gpu *g = t->g;
    char what[96];
    const unsigned char *got = g->buf[b];
    if (b != B_PIN && b != B_PAGE) {
        CK(t, cudaMemcpy(g->tmp, g->buf[b], GB, cudaMemcpyDefault));
        got = g->tmp;
    }
    (void)snprintf(what, sizeof what, "%s buffer %s", buf_name[b], when);
    return soak_compare(t, got, g->mod[b], GB, what);
}

/* Fresh bytes in the source rows, poison in the destination rows, in the
 * model and then in memory. */
static int prepare(soak_thread *t, const xfer *x)
{
    soak_gpu *g = t->g;
    size_t y;
    for (y = 0; y < x->h; ++y) {
        soak_fill(t, g->mod[x->sb] + x->soff + y * x->spitch, x->row);
        memset(g->mod[x->db] + x->doff + y * x->dpitch, POISON, x->row);
    }
    if (push(t, x->sb) || (x->db != x->sb && push(t, x->db)))
        return 1;
    return 0;
}

static void apply(soak_thread *t, const xfer *x)
{
    size_t y;
    for (y = 0; y < x->h; ++y)
        memmove(t->g->mod[x->db] + x->doff + y * x->dpitch,
                t->g->mod[x->sb] + x->soff + y * x->spitch, x->row);
}

/* A random transfer between two buffers, rows that fit, edges likely.
 * 1D when oned; else pitches >= row (pitch == row sometimes). */
static void draw_xfer_h(soak_thread *t, xfer *x, int db, int sb, int oned, size_t max_row,
                        size_t max_h)
{
    size_t span;
    x->db = db;
    x->sb = sb;
    x->row = soak_size(t, max_row);
    x->h = oned ? 1 : soak_size(t, max_h);
    if (x->row == 0 && soak_below(t, 2))
        x->row = 1;
    x->dpitch = soak_below(t, 3) == 0 ? x->row : x->row + soak_size(t, 100);
    x->spitch = soak_below(t, 3) == 0 ? x->row : x->row + soak_size(t, 100);
    if (x->dpitch == 0)
        x->dpitch = 1;
    if (x->spitch == 0)
        x->spitch = 1;
    while (x->h > 1 && (x->h - 1) * (x->dpitch > x->spitch ? x->dpitch : x->spitch) + x->row > GB / 2)
        x->h /= 2;
    span = x->h ? (x->h - 1) * x->dpitch + x->row : 0;
    x->doff = soak_below(t, GB / 2 - span + 1);
    span = x->h ? (x->h - 1) * x->spitch + x->row : 0;
    x->soff = GB / 2 + soak_below(t, GB / 2 - span + 1); /* upper half: never overlaps dst */
    if (db != sb && soak_below(t, 2)) {
        size_t s = x->soff;
        x->soff = x->doff;
        x->doff = s; /* different buffers: either half */
        if (x->doff + (x->h ? (x->h - 1) * x->dpitch + x->row : 0) > GB ||
            x->soff + (x->h ? (x->h - 1) * x->spitch + x->row : 0) > GB) {
            x->doff = x->soff;
            x->soff = s;
            s = x->doff;
        }
    }
}

static void draw_xfer(soak_thread *t, xfer *x, int db, int sb, int oned, size_t max_row)
{
    draw_xfer_h(t, x, db, sb, oned, max_row, 64);
}

/* ---- stream kinds ------------------------------------------------------- */
typedef struct kindsel {
    int kind;
    cudaStream_t s;
    int pooled; /* leased from the stream pool: give back */
    int dev;    /* the data device: 1 for another device's stream */
} kindsel;

static const char *const kind_label[COMP_KINDS] = {
    "0", "cudaStreamLegacy", "cudaStreamPerThread", "blocking", "non-blocking",
    "capture Global", "capture ThreadLocal", "capture Relaxed", "other device", "held"};
static const enum cudaStreamCaptureMode cap_mode[COMP_KINDS] = {
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal,
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal,
    cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed,
    cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal};

static void CUDART_CB held_fn(void *arg)
{
    soak_gpu *g = (soak_gpu *)arg;
    double t0 = soak_now_ms();
    while (!__atomic_load_n(&g->held_open, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 50000L};
        if (soak_now_ms() - t0 > g->held_limit) {
            soak_snapshot(g->held_others, sizeof g->held_others);
            __atomic_store_n(&g->held_timed_out, 1, __ATOMIC_RELEASE);
            break;
        }
        nanosleep(&ts, NULL);
    }
}

/* The kind, from the generator alone (the lock decision replays it). */
static void draw_kind(soak_thread *t, kindsel *k)
{
    memset(k, 0, sizeof *k);
    do
        k->kind = (int)soak_below(t, COMP_KINDS);
    while (k->kind == COMP_OTHERDEV && G.ndev < 2);
    k->pooled = k->kind == COMP_NONBLOCKING && soak_below(t, 2);
    k->dev = k->kind == COMP_OTHERDEV;
}

/* Its stream (a stream pool's is leased: give it back). */
static int kind_stream(soak_thread *t, kindsel *k)
{
    soak_gpu *g = t->g;
    switch (k->kind) {
    case COMP_ZERO: k->s = (cudaStream_t)0; break;
    case COMP_LEGACY: k->s = cudaStreamLegacy; break;
    case COMP_PERTHREAD: k->s = cudaStreamPerThread; break;
    case COMP_BLOCKING: k->s = g->blk; break;
    case COMP_NONBLOCKING:
        if (k->pooled)
            CK(t, cuxfer_stream_pool_acquire(&G.spool, CUXFER_WAIT, &k->s));
        else
            k->s = g->nb;
        break;
    case COMP_OTHERDEV: k->s = g->other; break;
    case COMP_HELD: k->s = g->nb; break;
    default: k->s = g->cap; break;
    }
    return 0;
}

/* ---- the calls -------------------------------------------------------------- */
typedef struct callctx {
    int call;     /* COMP_* */
    xfer x, x2;   /* what it moves (x2: a second transfer, for fork/join) */
    int nx;
    int plan, dir;
    cuxfer_roi tiles[32];
    size_t ntiles, host_pitch, host_w, host_h;
    cuxfer_pinned_block blk;
    cuxfer_graph g;
    int capturing;
    const char *step;
    /* a calibration: what it reported and gave, the tuning before, its error */
    model_measure meas[CAL_MEASURES];
    size_t nmeas;
    int meas_bad;
    cuxfer_plan2d_tuning tun, tun_before;
    cudaError_t cal_err;
} callctx;

static void CUDART_CB on_done(void *arg)
{
    soak_gpu *g = (soak_gpu *)arg;
    if (memcmp(g->buf[B_PIN] + g->cb_off, g->cb_want, g->cb_n) != 0) {
        size_t i = 0;
        while (g->buf[B_PIN][g->cb_off + i] == g->cb_want[i])
            ++i;
        g->cb_first = i;
        g->cb_got = g->buf[B_PIN][g->cb_off + i];
        g->cb_exp = g->cb_want[i];
        __atomic_add_fetch(&g->cb_bad, 1, __ATOMIC_ACQ_REL);
    }
    __atomic_add_fetch(&g->cb_runs, 1, __ATOMIC_ACQ_REL);
}

/* cuxfer_on_done's callback: as on_done, and the status it was given. */
static void CUDART_CB on_done_status(cudaStream_t s, cudaError_t status, void *arg)
{
    soak_gpu *g = (soak_gpu *)arg;
    (void)s;
    g->cb_status = status;
    on_done(arg);
}

static void CUDART_CB delay_fn(void *arg)
{
    struct timespec ts = {0, 2000000L};
    (void)arg;
    nanosleep(&ts, NULL);
}

/* cuxfer_plan2d_calibrate's report: each measurement kept for the model. */
static void cal_report(size_t row, int d2h, double raw, double planned, void *arg)
{
    callctx *c = (callctx *)arg;
    if (c->nmeas == CAL_MEASURES) {
        c->meas_bad = 1;
        return;
    }
    c->meas[c->nmeas].row = row;
    c->meas[c->nmeas].d2h = d2h;
    c->meas[c->nmeas].raw = raw;
    c->meas[c->nmeas].planned = planned;
    ++c->nmeas;
}

#define STEP(expr)                                                                        \
    do {                                                                                  \
        cudaError_t st_ = (expr);                                                         \
        if (st_ != cudaSuccess) {                                                         \
            c->step = #expr;                                                              \
            return st_;                                                                   \
        }                                                                                 \
    } while (0)

/* Make the call on s (its arguments drawn already); cudaSuccess or the refusal. */
static cudaError_t make_call(soak_thread *t, callctx *c, cudaStream_t s, int dev)
{
    soak_gpu *g = t->g;
    xfer *x = &c->x;
    cuxfer_view dv, sv;
    switch (c->call) {
    case COMP_COPY:
        return cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, s);
    case COMP_COPY2D:
        STEP(cuxfer_view_wrap(&dv, g->buf[x->db] + x->doff, x->dpitch, x->row, x->h, 1));
        STEP(cuxfer_view_wrap(&sv, g->buf[x->sb] + x->soff, x->spitch, x->row, x->h, 1));
        return cuxfer_copy2d_async(&dv, &sv, s);
    case COMP_PLAN2D:
        STEP(cuxfer_view_wrap(&dv, g->buf[x->db] + x->doff, x->dpitch, x->row, x->h, 1));
        STEP(cuxfer_view_wrap(&sv, g->buf[x->sb] + x->soff, x->spitch, x->row, x->h, 1));
        return cuxfer_plan2d_copy_async(&g->plan[c->plan], &dv, &sv, s);
    case COMP_ROIS_H2D:
    case COMP_ROIS_D2H: {
        cuxfer_view hv, dense;
        size_t total = 0, i;
        for (i = 0; i < c->ntiles; ++i)
            total += c->tiles[i].width * c->tiles[i].height;
        STEP(cuxfer_view_wrap(&hv, g->buf[B_PIN], c->host_pitch, c->host_w, c->host_h, 1));
        STEP(cuxfer_view_wrap(&dense, g->buf[dev ? B_DEV1 : B_DEV], total ? total : 1, total ? total : 1, 1, 1));
        return cuxfer_rois_copy_async(&g->rois, c->call == COMP_ROIS_H2D ? CUXFER_ROIS_H2D
                                                                          : CUXFER_ROIS_D2H,
                                      &hv, c->tiles, c->ntiles, &dense, s);
    }
    case COMP_STAGE:
        if (x->db == B_PAGE)
            return cuxfer_stage_d2h(&g->stager, g->buf[B_PAGE] + x->doff,
                                    g->buf[x->sb] + x->soff, x->row, s);
        return cuxfer_stage_h2d(&g->stager, g->buf[x->db] + x->doff, g->buf[B_PAGE] + x->soff,
                                x->row, s);
    case COMP_TIMER:
        STEP(cuxfer_timer_start(&g->timer, s));
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, s));
        STEP(cuxfer_timer_stop(&g->timer, s));
        return cudaSuccess;
    case COMP_STREAM_WAIT:
        /* fork to sig, copy there behind a delay, join, copy on s what sig wrote */
        STEP(cuxfer_stream_wait(g->sig, s));
        STEP(cudaLaunchHostFunc(g->sig, delay_fn, NULL));
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, g->sig));
        STEP(cuxfer_stream_wait(s, g->sig));
        STEP(cuxfer_copy_async(g->buf[c->x2.db] + c->x2.doff, g->buf[c->x2.sb] + c->x2.soff,
                               c->x2.row, s));
        return cudaSuccess;
    case COMP_ON_COMPLETE:
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, s));
        return cuxfer_on_complete(s, on_done, g);
    case COMP_ON_DONE:
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, s));
        return cuxfer_on_done(s, on_done_status, g);
    case COMP_LATCH_ARM:
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, s));
        return cuxfer_latch_arm(&g->latch, s);
    case COMP_RING_FENCE: {
        /* fan out to the ring's slot 1, copy there behind a delay, fan in,
         * copy on s what the slot's stream wrote */
        cudaStream_t rs;
        STEP(cuxfer_ring_stream(&g->ring, 1, &rs));
        STEP(cuxfer_ring_wait(&g->ring, s));
        STEP(cudaLaunchHostFunc(rs, delay_fn, NULL));
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, rs));
        STEP(cuxfer_stream_wait_ring(s, &g->ring));
        STEP(cuxfer_copy_async(g->buf[c->x2.db] + c->x2.doff, g->buf[c->x2.sb] + c->x2.soff,
                               c->x2.row, s));
        return cudaSuccess;
    }
    case COMP_COPY_SYNC:
        return cuxfer_copy(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row);
    case COMP_COPY2D_SYNC:
        STEP(cuxfer_view_wrap(&dv, g->buf[x->db] + x->doff, x->dpitch, x->row, x->h, 1));
        STEP(cuxfer_view_wrap(&sv, g->buf[x->sb] + x->soff, x->spitch, x->row, x->h, 1));
        return cuxfer_copy2d(&dv, &sv);
    case COMP_PREFETCH:
        STEP(cuxfer_prefetch(g->buf[B_MAN] + x->soff, x->row, dev, s));
        return cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[B_MAN] + x->soff, x->row, s);
    case COMP_POOL_RELEASE:
        STEP(cuxfer_pinned_pool_acquire(&G.pool, x->row, &c->blk));
        memcpy(c->blk.ptr, g->mod[B_PIN] + x->soff, x->row); /* the block holds the source */
        STEP(cudaLaunchHostFunc(s, delay_fn, NULL));
        STEP(cuxfer_copy_async(g->buf[x->db] + x->doff, c->blk.ptr, x->row, s));
        STEP(cuxfer_pinned_pool_release(&G.pool, &c->blk, s));
        {
            /* whoever gets the block next writes over it at once */
            cuxfer_pinned_block b2;
            STEP(cuxfer_pinned_pool_acquire(&G.pool, x->row, &b2));
            memset(b2.ptr, POISON, x->row);
            STEP(cuxfer_pinned_pool_release(&G.pool, &b2, CUXFER_POOL_IDLE));
        }
        return cudaSuccess;
    case COMP_GRAPH_LAUNCH:
        return cuxfer_graph_launch(&g->g0, s);
    case COMP_GRAPH_BEGIN: {
        cudaError_t err;
        STEP(cuxfer_graph_begin(s));
        err = cuxfer_copy_async(g->buf[x->db] + x->doff, g->buf[x->sb] + x->soff, x->row, s);
        if (err != cudaSuccess) {
            cudaGraph_t gr = NULL;
            c->step = "cuxfer_copy_async inside cuxfer_graph_begin";
            if (cudaStreamEndCapture(s, &gr) == cudaSuccess && gr)
                (void)cudaGraphDestroy(gr);
            return err;
        }
        STEP(cuxfer_graph_end(&c->g, s));
        return cuxfer_graph_launch(&c->g, s);
    }
    case COMP_CALIBRATE:
        c->tun_before = g->cal.tuning;
        memset(&c->tun, 0x5a, sizeof c->tun);
        c->nmeas = 0;
        c->cal_err = cuxfer_plan2d_calibrate(&g->cal, s, &c->tun, cal_report, c);
        return c->cal_err;
    case COMP_IS_CAPTURING:
        if (cuxfer_stream_is_capturing(s) == c->capturing)
            return cudaSuccess;
        c->step = c->capturing ? "cuxfer_stream_is_capturing said 0 inside a capture"
                               : "cuxfer_stream_is_capturing said 1 outside a capture";
        return cudaErrorUnknown;
    default:
        return cudaErrorNotSupported;
    }
}

/* Draw the call's arguments for data device dev (0 or 1). */
static void draw_call(soak_thread *t, callctx *c, int kind, int dev)
{
    int ddev = dev ? B_DEV1 : B_DEV;
    static const int hosts[] = {B_PIN, B_PAGE, B_MAN};
    memset(c, 0, sizeof *c);
    do
        c->call = (int)soak_below(t, COMP_CALLS);
    while (c->call == COMP_CALIBRATE &&
           comp_expect(COMP_CALIBRATE, kind, ZERO_IS_LEGACY, 1) != COMP_REFUSES &&
           soak_below(t, CAL_RARE) != 0);
    c->nx = 1;
    switch (c->call) {
    case COMP_COPY: {
        /* every direction: host kinds and the device, both ways */
        int a = soak_below(t, 2) ? ddev : hosts[soak_below(t, 3)];
        int b = soak_below(t, 2) ? ddev : hosts[soak_below(t, 3)];
        draw_xfer(t, &c->x, a, b, 1, GB / 2);
        break;
    }
    case COMP_COPY_SYNC: {
        int a = soak_below(t, 2) ? ddev : hosts[soak_below(t, 3)];
        int b = soak_below(t, 2) ? ddev : hosts[soak_below(t, 3)];
        draw_xfer(t, &c->x, a, b, 1, GB / 2);
        break;
    }
    case COMP_COPY2D_SYNC:
    case COMP_COPY2D: {
        int a = soak_below(t, 2) ? ddev : hosts[soak_below(t, 2)];
        int b = soak_below(t, 2) ? ddev : hosts[soak_below(t, 2)];
        draw_xfer(t, &c->x, a, b, 0, 300);
        break;
    }
    case COMP_PLAN2D:
        c->plan = (int)soak_below(t, 3);
        /* narrow rows, the planner's land, and up to thousands of them:
         * many 4 KiB chunks per copy, each slot reused many times */
        if (soak_below(t, 2))
            draw_xfer_h(t, &c->x, ddev, B_PIN, 0, 40, 3000);
        else
            draw_xfer_h(t, &c->x, B_PIN, ddev, 0, 40, 3000);
        break;
    case COMP_ROIS_H2D:
    case COMP_ROIS_D2H: {
        /* a grid of disjoint tiles over a pitched host view in pinned memory */
        size_t i, cw, ch, gx;
        c->host_w = 1 + soak_below(t, 200);
        c->host_h = 1 + soak_below(t, 100);
        c->host_pitch = c->host_w + soak_size(t, 64);
        /* 16 or more half the time: AUTO's KERNEL or GATHER (DIRECT below) */
        c->ntiles = soak_below(t, 2) ? 16 + soak_below(t, 17) : soak_size(t, 15);
        gx = 4;
        cw = c->host_w / gx;
        ch = c->host_h / 8;
        for (i = 0; i < c->ntiles; ++i) {
            size_t cx = (i % gx) * cw, cy = (i / gx % 8) * ch;
            c->tiles[i].x = cx + soak_below(t, cw ? cw : 1) / 2;
            c->tiles[i].y = cy + soak_below(t, ch ? ch : 1) / 2;
            c->tiles[i].width = soak_size(t, cw ? cx + cw - c->tiles[i].x : 0);
            c->tiles[i].height = soak_size(t, ch ? cy + ch - c->tiles[i].y : 0);
            if (c->tiles[i].x > c->host_w)
                c->tiles[i].x = c->host_w;
            if (c->tiles[i].y > c->host_h)
                c->tiles[i].y = c->host_h;
            if (c->tiles[i].x + c->tiles[i].width > c->host_w)
                c->tiles[i].width = c->host_w - c->tiles[i].x;
            if (c->tiles[i].y + c->tiles[i].height > c->host_h)
                c->tiles[i].height = c->host_h - c->tiles[i].y;
        }
        break;
    }
    case COMP_STAGE:
        if (soak_below(t, 2))
            draw_xfer(t, &c->x, B_PAGE, ddev, 1, GB / 2);
        else
            draw_xfer(t, &c->x, ddev, B_PAGE, 1, GB / 2);
        break;
    case COMP_STREAM_WAIT:
    case COMP_RING_FENCE:
        draw_xfer(t, &c->x, B_DEV, B_PIN, 1, GB / 4);
        /* then what sig wrote, on s, to pinned memory */
        c->x2 = c->x;
        c->x2.db = B_PIN;
        c->x2.sb = B_DEV;
        c->x2.soff = c->x.doff;
        c->x2.doff = c->x.soff < GB / 2 ? GB / 2 + (GB / 2 - c->x.row) / 2 : 0;
        c->nx = 2;
        break;
    case COMP_ON_COMPLETE:
    case COMP_ON_DONE:
        draw_xfer(t, &c->x, B_PIN, ddev, 1, GB / 2);
        break;
    case COMP_PREFETCH:
        draw_xfer(t, &c->x, ddev, B_MAN, 1, GB / 2);
        break;
    case COMP_POOL_RELEASE:
        draw_xfer(t, &c->x, ddev, B_PIN, 1, GB / 2);
        if (c->x.row == 0)
            c->x.row = 1; /* acquire refuses 0 bytes */
        break;
    case COMP_GRAPH_LAUNCH:
        c->x.db = B_DEV;
        c->x.sb = B_PIN;
        c->x.doff = G0OFF;
        c->x.soff = 0;
        c->x.row = G0N;
        c->x.h = 1;
        c->x.dpitch = c->x.spitch = G0N;
        break;
    case COMP_IS_CAPTURING:
    case COMP_CALIBRATE:
        c->nx = 0;
        break;
    default: /* TIMER, LATCH_ARM, GRAPH_BEGIN */
        draw_xfer(t, &c->x, soak_below(t, 2) ? ddev : B_PIN, soak_below(t, 2) ? ddev : B_PIN, 1,
                  GB / 2);
        break;
    }
}

/* Fresh sources, poisoned destinations (the tiles' too). */
static int prepare_call(soak_thread *t, callctx *c)
{
    soak_gpu *g = t->g;
    if (c->call == COMP_ROIS_H2D || c->call == COMP_ROIS_D2H) {
        int dn = B_DEV; /* the dense side; set by the caller for device 1 */
        (void)dn;
        soak_fill(t, g->mod[B_PIN], GB);
        soak_fill(t, g->mod[B_DEV], GB);
        soak_fill(t, g->mod[B_DEV1], GB);
        if (c->call == COMP_ROIS_H2D) {
            memset(g->mod[B_DEV], POISON, GB / 2);
            memset(g->mod[B_DEV1], POISON, GB / 2);
        }
        if (push(t, B_PIN) || push(t, B_DEV) || (G.ndev > 1 && push(t, B_DEV1)))
            return 1;
        return 0;
    }
    if (c->nx >= 1 && prepare(t, &c->x))
        return 1;
    if (c->nx == 2) {
        size_t y;
        for (y = 0; y < c->x2.h; ++y)
            memset(g->mod[c->x2.db] + c->x2.doff + y * c->x2.dpitch, POISON, c->x2.row);
        if (push(t, c->x2.db))
            return 1;
    }
    return 0;
}

/* What the call did, in the model. */
static void apply_call(soak_thread *t, callctx *c, int dev)
{
    soak_gpu *g = t->g;
    if (c->call == COMP_ROIS_H2D || c->call == COMP_ROIS_D2H) {
        cuxfer_view hv;
        memset(&hv, 0, sizeof hv);
        hv.ptr = g->mod[B_PIN];
        hv.pitch = c->host_pitch;
        hv.width = c->host_w;
        hv.height = c->host_h;
        hv.elem_size = 1;
        model_rois_pack(c->call == COMP_ROIS_H2D ? CUXFER_ROIS_H2D : CUXFER_ROIS_D2H, &hv,
                        c->tiles, c->ntiles, g->mod[dev ? B_DEV1 : B_DEV]);
        return;
    }
    if (c->nx >= 1)
        apply(t, &c->x);
    if (c->nx == 2)
        apply(t, &c->x2);
}

static int verify_call(soak_thread *t, callctx *c, const char *when)
{
    int b;
    for (b = 0; b < B_COUNT; ++b)
        if ((b != B_DEV1 || G.ndev > 1) && verify(t, b, when))
            return 1;
    (void)c;
    return 0;
}

/* A calibration that worked: every row of 1 to 128 bytes measured in
 * both directions, in order, at finite rates, each width its direction's
 * widest that beat the direct copy by 10% (model_calibrated_row), given
 * in *out and in the plan's tuning; the rest of the tuning unchanged. */
static int check_calibration(soak_thread *t, callctx *c)
{
    soak_gpu *g = t->g;
    size_t i, n[2] = {0, 0}, last[2] = {0, 0}, span, pack;
    if (c->meas_bad)
        return soak_fail(t, "more than %d measurements reported", CAL_MEASURES);
    for (i = 0; i < c->nmeas; ++i) {
        const model_measure *m = &c->meas[i];
        if ((m->d2h != 0 && m->d2h != 1) || m->row <= last[m->d2h] || m->row > 128 ||
            !isfinite(m->raw) || !isfinite(m->planned) || m->raw <= 0 || m->planned <= 0)
            return soak_fail(t, "report %zu: row %zu, d2h %d, raw %g GB/s, planned %g GB/s", i,
                             m->row, m->d2h, m->raw, m->planned);
        last[m->d2h] = m->row;
        ++n[m->d2h];
    }
    if (!n[0] || n[0] != n[1] || c->meas[0].row != 1 || last[0] != 128 || last[1] != 128)
        return soak_fail(t, "%zu and %zu measurements (H2D, D2H), rows %zu to %zu: want both "
                            "directions, rows 1 to 128", n[0], n[1],
                         c->nmeas ? c->meas[0].row : 0, last[0]);
    span = model_calibrated_row(c->meas, c->nmeas, 0);
    pack = model_calibrated_row(c->meas, c->nmeas, 1);
    if (c->tun.span_max_row != span || c->tun.pack_max_row != pack ||
        c->tun.max_ratio != c->tun_before.max_ratio || c->tun.min_bytes != c->tun_before.min_bytes)
        return soak_fail(t, "calibrated span %zu pack %zu ratio %zu min %zu; the measurements "
                            "say span %zu pack %zu, and ratio %zu min %zu were",
                         c->tun.span_max_row, c->tun.pack_max_row, c->tun.max_ratio,
                         c->tun.min_bytes, span, pack, c->tun_before.max_ratio,
                         c->tun_before.min_bytes);
    if (memcmp(&c->tun, &g->cal.tuning, sizeof c->tun) != 0)
        return soak_fail(t, "*out and the plan's tuning differ after a calibration");
    return 0;
}

/* A refused calibration: the error the page gives for the stream (being
 * captured: cudaErrorStreamCaptureUnsupported; another device's:
 * cudaErrorInvalidDevice), nothing measured, the tuning unchanged. */
static int check_calibration_refused(soak_thread *t, const callctx *c, int kind)
{
    cudaError_t want = comp_is_capture(kind) ? cudaErrorStreamCaptureUnsupported
                                             : cudaErrorInvalidDevice;
    if (c->cal_err != want)
        return soak_fail(t, "refused with %s, the page says %s", cudaGetErrorName(c->cal_err),
                         cudaGetErrorName(want));
    if (c->nmeas)
        return soak_fail(t, "a refused calibration reported %zu measurements", c->nmeas);
    if (memcmp(&t->g->cal.tuning, &c->tun_before, sizeof c->tun_before) != 0)
        return soak_fail(t, "a refused calibration changed the plan's tuning");
    return 0;
}

/* The strategy a planned copy takes: cuxfer_plan2d_choose on the views
 * the copy wraps, against the rule (model_plan2d_choose) applied to the
 * buffers' kinds as the soak knows them. */
static int check_choose(soak_thread *t, const callctx *c)
{
    soak_gpu *g = t->g;
    const cuxfer_plan2d *p = &g->plan[c->plan];
    const xfer *x = &c->x;
    cuxfer_view dv, sv;
    int got, want;
    soak_say(t, "cuxfer_plan2d_choose(plan %d, dst %s pitch %zu, src %s pitch %zu, %zu x %zu)",
             c->plan, buf_name[x->db], x->dpitch, buf_name[x->sb], x->spitch, x->row, x->h);
    if (cuxfer_view_wrap(&dv, g->buf[x->db] + x->doff, x->dpitch, x->row, x->h, 1) != cudaSuccess ||
        cuxfer_view_wrap(&sv, g->buf[x->sb] + x->soff, x->spitch, x->row, x->h, 1) != cudaSuccess)
        return 0; /* the copy's own wrap refuses them: the call step says so */
    got = cuxfer_plan2d_choose(p, &dv, &sv);
    want = model_plan2d_choose(p, buf_kind[x->db], buf_kind[x->sb], x->row, x->h, x->spitch);
    if (got != want)
        return soak_fail(t, "chose %d, the rule says %d", got, want);
    return 0;
}

/* After a synchronised run: the call's own checks. */
static int after_call(soak_thread *t, callctx *c, int replay)
{
    soak_gpu *g = t->g;
    float ms = NAN;
    switch (c->call) {
    case COMP_TIMER:
        CK(t, cuxfer_timer_ms(&g->timer, CUXFER_WAIT, &ms));
        if (!isfinite(ms) || ms < 0.0f || ms > 60000.0f)
            return soak_fail(t, "cuxfer_timer_ms gave %g ms", (double)ms);
        break;
    case COMP_LATCH_ARM:
        if (replay)
            CK(t, cuxfer_latch_expect(&g->latch, 1));
        CK(t, cuxfer_latch_wait(&g->latch, 20000));
        break;
    case COMP_ON_COMPLETE: {
        int runs = __atomic_load_n(&g->cb_runs, __ATOMIC_ACQUIRE);
        if (runs != 1 || g->cb_bad)
            return soak_fail(t, "the host function ran %d time(s) (want 1) and saw %s bytes",
                             runs, g->cb_bad ? "wrong" : "the right");
        break;
    }
    case COMP_ON_DONE: {
        int runs = __atomic_load_n(&g->cb_runs, __ATOMIC_ACQUIRE);
        if (runs != 1 || g->cb_bad || g->cb_status != cudaSuccess)
            return soak_fail(t, "the callback ran %d time(s) (want 1), saw %s bytes (first at %zu of %zu: 0x%02x, want 0x%02x) and was given %s",
                             runs, g->cb_bad ? "wrong" : "the right", g->cb_first, g->cb_n,
                             g->cb_got, g->cb_exp, cudaGetErrorName(g->cb_status));
        break;
    }
    case COMP_STAGE:
        CK(t, cuxfer_stager_wait(&g->stager, 30000));
        break;
    case COMP_CALIBRATE:
        return check_calibration(t, c);
    default:
        break;
    }
    return 0;
}

/* The callback's expectation: pinned [doff, +row) after the copy. */
static void arm_callback(soak_thread *t, callctx *c)
{
    soak_gpu *g = t->g;
    __atomic_store_n(&g->cb_runs, 0, __ATOMIC_RELEASE);
    g->cb_bad = 0;
    g->cb_status = cudaErrorUnknown;
    g->cb_off = c->x.doff;
    g->cb_n = c->x.row;
    memcpy(t->scratch2, g->mod[c->x.sb] + c->x.soff, c->x.row < t->arena_bytes ? c->x.row : t->arena_bytes);
    g->cb_n = c->x.row < t->arena_bytes ? c->x.row : t->arena_bytes;
    g->cb_want = t->scratch2;
}

/* Work queued on s is done: cuxfer orders each call's work on its stream
 * (its side streams, slots and workers join s), so s alone is waited for. */
static int sync_stream(soak_thread *t, cudaStream_t s)
{
    CK(t, cudaStreamSynchronize(s));
    CK(t, cudaStreamSynchronize(t->g->sig)); /* a fork/join refused half way */
    CK(t, cuxfer_ring_drain(&t->g->ring));     /* likewise a ring fence */
    CK(t, cudaSetDevice(0));
    return 0;
}

/* Calls made of several (a refusal may come after the first worked). */
static int composite(int call)
{
    return call == COMP_TIMER || call == COMP_STREAM_WAIT || call == COMP_ON_COMPLETE ||
           call == COMP_ON_DONE || call == COMP_RING_FENCE ||
           call == COMP_LATCH_ARM || call == COMP_PREFETCH || call == COMP_POOL_RELEASE ||
           call == COMP_GRAPH_BEGIN;
}

/* Memory := the model, every buffer. */
static int resync(soak_thread *t)
{
    int b;
    for (b = 0; b < B_COUNT; ++b)
        if ((b != B_DEV1 || G.ndev > 1) && push(t, b))
            return 1;
    return 0;
}

static int cleanup_call(soak_thread *t, callctx *c)
{
    if (c->call == COMP_GRAPH_BEGIN && c->g.exec)
        CK(t, cuxfer_graph_destroy(&c->g));
    if (c->call == COMP_POOL_RELEASE && c->blk.impl)
        CK(t, cuxfer_pinned_pool_release(&G.pool, &c->blk, CUXFER_POOL_IDLE));
    if (c->call == COMP_STAGE) {
        /* polled to the end first (cuxfer_stager(3): done once the query
         * returns something other than cudaErrorNotReady) */
        double t0 = soak_now_ms();
        while (cuxfer_stager_query(&t->g->stager) == cudaErrorNotReady && soak_now_ms() - t0 < 30000.0) {
            struct timespec ts = {0, 100000L};
            nanosleep(&ts, NULL);
        }
        (void)cuxfer_stager_wait(&t->g->stager, 30000);
    }
    return 0;
}

/* The held column for this call: GATHER is what waits, so a D2H of no
 * bytes, or one cuxfer_rois_choose sends elsewhere, does not; -1 where
 * the page lets it do either. */
static int held_waits(soak_thread *t, const callctx *c)
{
    size_t i, total = 0;
    int gather;
    if (c->call == COMP_PLAN2D) {
        /* cuxfer_plan2d(3): up to 16 chunks a copy return while the stream
         * is held; beyond, CUDA's queue of launches into a held stream may
         * fill (-1: either) */
        size_t pitch = c->x.dpitch > c->x.spitch ? c->x.dpitch : c->x.spitch;
        size_t span = c->x.h ? (c->x.h - 1) * pitch + c->x.row : 0;
        size_t chunk = 4096 + 4096 * (size_t)c->plan;
        if ((span + chunk - 1) / chunk > 16)
            return -1;
    }
    if (c->call != COMP_ROIS_D2H)
        return comp_waits_when_held(c->call, 1);
    for (i = 0; i < c->ntiles; ++i)
        total += c->tiles[i].width * c->tiles[i].height;
    gather = total > 0 && cuxfer_rois_choose(&t->g->rois, c->ntiles, total) == CUXFER_ROIS_GATHER;
    return comp_waits_when_held(c->call, !gather);
}

static void say_call(soak_thread *t, const callctx *c, const kindsel *k)
{
    soak_say(t, "%s on %s: dst %s+%zu pitch %zu, src %s+%zu pitch %zu, %zu x %zu bytes%s%s",
             comp_call_name[c->call], kind_label[k->kind], buf_name[c->x.db], c->x.doff,
             c->x.dpitch, buf_name[c->x.sb], c->x.soff, c->x.spitch, c->x.row, c->x.h,
             c->call == COMP_PLAN2D ? (c->plan == 0 ? " SPAN" : c->plan == 1 ? " PACK" : " AUTO")
                                    : "",
             c->call == COMP_ROIS_H2D || c->call == COMP_ROIS_D2H ? " (tiles)" : "");
}

/* One stream-taking call on a drawn stream kind, predicted by the table. */
static int op_call(soak_thread *t)
{
    soak_gpu *g = t->g;
    kindsel k;
    callctx c;
    cudaError_t err;
    int want, rc = 0, concurrent;
    cudaError_t argerr = cudaSuccess;
    char why[CUXFER_REASON_MAX];
    draw_kind(t, &k);
    draw_call(t, &c, k.kind, k.dev);
    if (c.call == COMP_PLAN2D && check_choose(t, &c))
        return 1;
    if (kind_stream(t, &k))
        return 1;
    if (comp_is_capture(k.kind) && c.call == COMP_POOL_RELEASE)
        c.call = COMP_COPY; /* the pool's block is host memory the replay cannot refill */
    if (comp_is_capture(k.kind) && c.call == COMP_ON_COMPLETE)
        c.call = COMP_LATCH_ARM;
    if ((comp_is_capture(k.kind) || k.kind == COMP_HELD) &&
        (c.call == COMP_COPY_SYNC || c.call == COMP_COPY2D_SYNC)) {
        /* they take no stream: a capture would record nothing of them to
         * replay, and a held stream is not theirs to wait for */
        c.call = c.call == COMP_COPY_SYNC ? COMP_COPY : COMP_COPY2D;
    }
    if (k.kind == COMP_HELD && (c.call == COMP_COPY || c.call == COMP_COPY2D)) {
        /* a copy to or from pageable memory blocks the caller until the
         * stream reaches it (CUDA's rule; the pageable guard warns of it):
         * behind a held stream, pinned (or managed) memory in its place;
         * never the other side's buffer, whose rows may share a half */
        if (c.x.db == B_PAGE)
            c.x.db = c.x.sb == B_PIN ? B_MAN : B_PIN;
        if (c.x.sb == B_PAGE)
            c.x.sb = c.x.db == B_PIN ? B_MAN : B_PIN;
    }
    if (k.kind == COMP_HELD && c.nx >= 1 && c.call != COMP_STAGE && c.x.db != B_DEV &&
        c.x.db != B_DEV1 && c.x.sb != B_DEV && c.x.sb != B_DEV1) {
        /* host to host: CUDA makes every such copy synchronous ("API
         * synchronization behavior"), so it waits for a held stream; the
         * data device's buffer in the destination's place */
        c.x.db = k.dev ? B_DEV1 : B_DEV;
    }
    if (c.call == COMP_COPY && c.x.row == 0 && c.x.db == c.x.sb)
        c.x.row = 1;
    concurrent = cuxfer_managed_concurrent(k.dev);
    want = comp_expect(c.call, k.kind, ZERO_IS_LEGACY, concurrent);
    /* invalid arguments: refused on every stream kind, with this error */
    if ((c.call == COMP_STAGE || c.call == COMP_PREFETCH) && c.x.row == 0)
        argerr = cudaErrorInvalidValue; /* "bytes is 0" (cuxfer_stager(3), cuxfer_prefetch(3)) */
    __atomic_add_fetch(&G.counts[c.call][k.kind], 1, __ATOMIC_RELAXED);
    say_call(t, &c, &k);
    if (prepare_call(t, &c))
        return 1;
    if (c.call == COMP_ON_COMPLETE || c.call == COMP_ON_DONE)
        arm_callback(t, &c);
    if (k.dev)
        CK(t, cudaSetDevice(1));
    if (comp_is_capture(k.kind)) {
        cudaGraph_t graph = NULL;
        cudaGraphExec_t exec = NULL;
        enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
        cudaError_t eend;
        int i;
        c.capturing = 1;
        CK(t, cudaStreamBeginCapture(g->cap, cap_mode[k.kind]));
        cuxfer_clear_reason();
        err = make_call(t, &c, g->cap, k.dev);
        (void)snprintf(why, sizeof why, "%s", cuxfer_last_reason());
        if (cudaStreamIsCapturing(g->cap, &st) != cudaSuccess)
            st = cudaStreamCaptureStatusNone;
        eend = cudaStreamEndCapture(g->cap, &graph);
        if (st != cudaStreamCaptureStatusActive || eend != cudaSuccess) {
            (void)cudaGetLastError();
            rc = soak_fail(t, "the capture is %s after the call (%s%s%s); cudaStreamEndCapture -> %s",
                           st == cudaStreamCaptureStatusInvalidated ? "INVALIDATED" : "gone",
                           cudaGetErrorName(err), c.step ? " at " : "", c.step ? c.step : "",
                           cudaGetErrorName(eend));
        } else if (argerr != cudaSuccess && err != argerr) {
            rc = soak_fail(t, "invalid arguments: want %s, got %s", cudaGetErrorName(argerr),
                           cudaGetErrorName(err));
        } else if (err != cudaSuccess) {
            if (want == COMP_WORKS && argerr == cudaSuccess)
                rc = soak_fail(t, "unpredicted refusal in a capture: %s%s%s: %s",
                               cudaGetErrorName(err), c.step ? " at " : "", c.step ? c.step : "", why);
            else if (!why[0])
                rc = soak_fail(t, "refused with %s but no reason", cudaGetErrorName(err));
            else
                ++t->refusals;
        } else if (want == COMP_REFUSES) {
            rc = soak_fail(t, "captured, but the rules say it must be refused");
        } else {
            err = cudaGraphInstantiateWithFlags(&exec, graph, 0);
            if (err != cudaSuccess)
                rc = soak_fail(t, "cudaGraphInstantiateWithFlags -> %s", cudaGetErrorName(err));
            for (i = 0; i < 2 && !rc; ++i) {
                CK(t, cudaSetDevice(0));
                if (prepare_call(t, &c))
                    rc = 1;
                else {
                    if (c.call == COMP_ON_COMPLETE || c.call == COMP_ON_DONE)
                        arm_callback(t, &c);
                    if (k.dev)
                        CK(t, cudaSetDevice(1));
                    err = cudaGraphLaunch(exec, g->cap);
                    if (err == cudaSuccess)
                        err = cudaStreamSynchronize(g->cap);
                    CK(t, cudaSetDevice(0));
                    if (err != cudaSuccess)
                        rc = soak_fail(t, "replay %d -> %s", i + 1, cudaGetErrorName(err));
                    else if (!sync_stream(t, g->cap)) {
                        apply_call(t, &c, k.dev);
                        rc = after_call(t, &c, 1) || verify_call(t, &c, i ? "after replay 2" : "after replay 1");
                    } else
                        rc = 1;
                }
            }
        }
        if (exec)
            (void)cudaGraphExecDestroy(exec);
        if (graph)
            (void)cudaGraphDestroy(graph);
        CK(t, cudaSetDevice(0));
        if (!rc)
            rc = verify_call(t, &c, "after the capture");
    } else {
        int waited = 0;
        if (k.kind == COMP_HELD) {
            g->held_open = 0;
            g->held_timed_out = 0;
            g->held_limit = HOLD_MS;
            CK(t, cudaLaunchHostFunc(k.s, held_fn, g));
        }
        cuxfer_clear_reason();
        err = make_call(t, &c, k.s, k.dev);
        (void)snprintf(why, sizeof why, "%s", cuxfer_last_reason());
        if (k.kind == COMP_HELD) {
            waited = __atomic_load_n(&g->held_timed_out, __ATOMIC_ACQUIRE);
            __atomic_store_n(&g->held_open, 1, __ATOMIC_RELEASE);
        }
        if (k.dev)
            (void)cudaSetDevice(0);
        if (sync_stream(t, k.s))
            return 1;
        if (argerr != cudaSuccess && err != argerr) {
            rc = soak_fail(t, "invalid arguments: want %s, got %s", cudaGetErrorName(argerr),
                           cudaGetErrorName(err));
        } else if (err != cudaSuccess) {
            if (want == COMP_WORKS && argerr == cudaSuccess)
                rc = soak_fail(t, "unpredicted refusal: %s%s%s: %s", cudaGetErrorName(err),
                               c.step ? " at " : "", c.step ? c.step : "", why[0] ? why : "(no reason)");
            else if (!why[0])
                rc = soak_fail(t, "refused with %s but no reason", cudaGetErrorName(err));
            else
                ++t->refusals;
            /* refused: a single call moved nothing; a composite one may
             * have made its first steps, so memory is set to the model */
            if (!rc)
                rc = composite(c.call) ? resync(t) : verify_call(t, &c, "after a refusal");
        } else if (want == COMP_REFUSES) {
            rc = soak_fail(t, "accepted, but the rules say it must be refused");
        } else {
            apply_call(t, &c, k.dev);
            rc = after_call(t, &c, 0) || verify_call(t, &c, "after the call");
            if (!rc && k.kind == COMP_HELD && held_waits(t, &c) >= 0 &&
                waited != held_waits(t, &c))
                rc = soak_fail(t, "must %s%s", waited ? "return while the stream is held; when the hold ran out:"
                                                      : "wait for the held stream (by design)",
                               waited ? g->held_others : "");
        }
    }
    if (!rc && c.call == COMP_CALIBRATE && c.cal_err != cudaSuccess)
        rc = check_calibration_refused(t, &c, k.kind);
    if (cleanup_call(t, &c))
        rc = 1;
    if (k.pooled)
        CK(t, cuxfer_stream_pool_release(&G.spool, k.s));
    if (!rc) {
        cudaError_t last = cudaGetLastError();
        if (last != cudaSuccess)
            rc = soak_fail(t, "an error was left behind: %s", cudaGetErrorName(last));
    }
    return rc;
}

/* Allocation and registration: the kinds the kit reports, refusals of
 * allocations that cannot succeed (the faults the kit promises to survive). */
static int op_alloc(soak_thread *t)
{
    void *p = NULL;
    size_t n = 1 + soak_size(t, 100000);
    unsigned char *pg;
    cuxfer_pinned_block b;
    switch (soak_below(t, 8)) {
    case 0:
        soak_say(t, "cuxfer_host_alloc(&p, %zu, 1, 0); cuxfer_memory_kind; cuxfer_host_free", n);
        CK(t, cuxfer_host_alloc(&p, n, 1, 0));
        if (cuxfer_memory_kind(p) != CUXFER_MEMORY_PINNED)
            return soak_fail(t, "cuxfer_memory_kind says %s", cuxfer_memkind_name(cuxfer_memory_kind(p)));
        CK(t, cuxfer_host_free(p));
        break;
    case 1:
        /* pages of its own: another thread's registration never shares one */
        if (posix_memalign((void **)&pg, 4096, n + 4096) != 0)
            return soak_fail(t, "posix_memalign");
        soak_say(t, "cuxfer_host_register(malloc+%d, %zu, 0); kind; cuxfer_host_unregister", 1, n);
        CK(t, cuxfer_host_register(pg + 1, n, 0));
        if (cuxfer_memory_kind(pg + 1) != CUXFER_MEMORY_PINNED)
            return soak_fail(t, "a registered range is %s", cuxfer_memkind_name(cuxfer_memory_kind(pg + 1)));
        CK(t, cuxfer_host_unregister(pg + 1));
        if (cuxfer_memory_kind(pg + 1) != CUXFER_MEMORY_PAGEABLE)
            return soak_fail(t, "an unregistered range is %s", cuxfer_memkind_name(cuxfer_memory_kind(pg + 1)));
        free(pg);
        break;
    case 2:
        soak_say(t, "cuxfer_device_alloc(&p, %zu, 1); kind; cuxfer_device_free", n);
        CK(t, cuxfer_device_alloc(&p, n, 1));
        if (cuxfer_memory_kind(p) != CUXFER_MEMORY_DEVICE)
            return soak_fail(t, "cuxfer_memory_kind says %s", cuxfer_memkind_name(cuxfer_memory_kind(p)));
        CK(t, cuxfer_device_free(p));
        break;
    case 3:
        soak_say(t, "cuxfer_host_alloc(&p, 1 PiB) and cuxfer_pinned_pool_acquire(1 PiB) must fail");
        if (cuxfer_host_alloc(&p, (size_t)1 << 50, 1, 0) == cudaSuccess || p)
            return soak_fail(t, "a 1 PiB pinned allocation succeeded");
        if (!cuxfer_last_reason()[0])
            return soak_fail(t, "the failed allocation gave no reason");
        if (cuxfer_pinned_pool_acquire(&G.pool, (size_t)1 << 50, &b) == cudaSuccess)
            return soak_fail(t, "a 1 PiB pool block was handed out");
        (void)cudaGetLastError();
        break;
    case 5: {
        /* a view of its own: the pitch holds the row, the kind is right */
        cuxfer_view v;
        size_t w = 1 + soak_size(t, 300), h = 1 + soak_size(t, 50);
        size_t es = (size_t)1 << soak_below(t, 4), align = soak_below(t, 2) ? 256 : 0;
        int dev = (int)soak_below(t, 2);
        if (dev)
            soak_say(t, "cuxfer_view_alloc_device(&v, %zu, %zu, %zu); check; row bytes; free", w, h, es);
        else
            soak_say(t, "cuxfer_view_alloc_host(&v, %zu, %zu, %zu, %zu); check; row bytes; free", w,
                     h, es, align);
        CK(t, dev ? cuxfer_view_alloc_device(&v, w, h, es) : cuxfer_view_alloc_host(&v, w, h, es, align));
        if (cuxfer_view_row_bytes(&v) != w * es || v.pitch < w * es || v.width != w ||
            v.height != h || (align && v.pitch % align) ||
            cuxfer_memory_kind(v.ptr) != (dev ? CUXFER_MEMORY_DEVICE : CUXFER_MEMORY_PINNED))
            return soak_fail(t, "the view is %zu x %zu, pitch %zu, row %zu bytes, %s", v.width,
                             v.height, v.pitch, cuxfer_view_row_bytes(&v),
                             cuxfer_memkind_name(cuxfer_memory_kind(v.ptr)));
        CK(t, cuxfer_view_check(&v, "v"));
        CK(t, cuxfer_view_free(&v));
        break;
    }
    case 6: {
        /* a latch made for device 0 and a timer made with options */
        soak_gpu *g = t->g;
        cuxfer_latch l;
        cuxfer_timer tm;
        cuxfer_timer_options to;
        float ms = -1.0f;
        memset(&to, 0, sizeof to);
        soak_say(t, "cuxfer_latch_init_on(&l, 0); expect 1; arm; wait; "
                    "cuxfer_timer_create_with({0}); start; stop; ms; destroy both; "
                    "cuxfer_host_is_pinned, the policies, cuxfer_device_max_pitch, cuxfer_gbps");
        CK(t, cuxfer_latch_init_on(&l, 0));
        CK(t, cuxfer_latch_expect(&l, 1));
        CK(t, cuxfer_latch_arm(&l, g->nb));
        CK(t, cuxfer_latch_wait(&l, 20000));
        CK(t, cuxfer_latch_destroy(&l));
        CK(t, cuxfer_timer_create_with(&tm, &to));
        CK(t, cuxfer_timer_start(&tm, g->nb));
        CK(t, cuxfer_timer_stop(&tm, g->nb));
        CK(t, cuxfer_timer_ms(&tm, CUXFER_WAIT, &ms));
        CK(t, cuxfer_timer_destroy(&tm));
        if (!(ms >= 0.0f && ms < 60000.0f))
            return soak_fail(t, "cuxfer_timer_ms gave %g ms", (double)ms);
        /* the queries beside them */
        if (cuxfer_host_is_pinned(g->buf[B_PIN]) != 1 || cuxfer_host_is_pinned(g->buf[B_PAGE]) != 0)
            return soak_fail(t, "cuxfer_host_is_pinned is wrong about pinned or pageable memory");
        if (cuxfer_pageable_policy() < CUXFER_PAGEABLE_ALLOW ||
            cuxfer_pageable_policy() > CUXFER_PAGEABLE_ERROR ||
            cuxfer_default_stream_policy() < CUXFER_PAGEABLE_ALLOW ||
            cuxfer_default_stream_policy() > CUXFER_PAGEABLE_ERROR)
            return soak_fail(t, "a policy out of range: pageable %d, default stream %d",
                             cuxfer_pageable_policy(), cuxfer_default_stream_policy());
        if (cuxfer_device_max_pitch(0) < 65536 || cuxfer_gbps(1000000000, 1000.0f) != 1.0)
            return soak_fail(t, "cuxfer_device_max_pitch(0) %zu, cuxfer_gbps(1 GB, 1 s) %g",
                             cuxfer_device_max_pitch(0), cuxfer_gbps(1000000000, 1000.0f));
        {
            /* a created stager's opt: its options, resolved */
            cuxfer_stager_options r, m;
            CK(t, cuxfer_stager_options_resolve(&r, &g->stager_opt));
            if (model_stager_options(&g->stager_opt, &m) != cudaSuccess ||
                memcmp(&r, &m, sizeof r) != 0 || memcmp(&r, &g->stager.opt, sizeof r) != 0)
                return soak_fail(t, "the stager's options: resolved {%d, %zu, %d, %d}, in use "
                                    "{%d, %zu, %d, %d}, the model {%d, %zu, %d, %d}",
                                 r.slots, r.slot_bytes, r.threads, r.strategy,
                                 g->stager.opt.slots, g->stager.opt.slot_bytes,
                                 g->stager.opt.threads, g->stager.opt.strategy, m.slots,
                                 m.slot_bytes, m.threads, m.strategy);
        }
        break;
    }
    case 7: {
        /* advice on the thread's own advised buffer, set then unset: works where
         * the device has concurrentManagedAccess (else refused, nothing
         * done); on memory of another kind, or for a device that does not
         * exist, refused */
        static const enum cudaMemoryAdvise set[] = {cudaMemAdviseSetReadMostly,
                                                     cudaMemAdviseSetPreferredLocation,
                                                     cudaMemAdviseSetAccessedBy};
        static const enum cudaMemoryAdvise unset[] = {cudaMemAdviseUnsetReadMostly,
                                                       cudaMemAdviseUnsetPreferredLocation,
                                                       cudaMemAdviseUnsetAccessedBy};
        soak_gpu *g = t->g;
        size_t k = soak_below(t, 3), off = soak_below(t, GB), len = 1 + soak_size(t, GB - off - 1);
        int target = (int)soak_below(t, (size_t)G.ndev + 1) - 1, other = (int)soak_below(t, 3);
        int ndev = 0, b = other == 0 ? B_PIN : other == 1 ? B_PAGE : B_DEV;
        cudaError_t want;
        if (k == 2 && target == CUXFER_CPU)
            target = 0; /* AccessedBy names a device (CUDA's rule) */
        want = cuxfer_managed_concurrent(target == CUXFER_CPU ? 0 : target) ? cudaSuccess
                                                                            : cudaErrorNotSupported;
        soak_say(t, "cuxfer_advise(advised+%zu, %zu, set/unset %zu, target %d); on %s memory; "
                    "for a device past the last", off, len, k, target, buf_name[b]);
        if (soak_expect(t, want, cuxfer_advise(g->adv + off, len, set[k], target)) ||
            soak_expect(t, want, cuxfer_advise(g->adv + off, len, unset[k], target)))
            return 1;
        if (soak_expect(t, cudaErrorInvalidValue,
                        cuxfer_advise(g->buf[b] + off, len, set[k], target)))
            return 1;
        CK(t, cuxfer_device_count(&ndev));
        if (soak_expect(t, cudaErrorInvalidDevice,
                        cuxfer_advise(g->adv + off, len, set[k], ndev)))
            return 1;
        CK(t, cudaGetLastError()); /* and nothing left behind */
        break;
    }
    default:
        soak_say(t, "cuxfer_managed_alloc(&p, %zu, 1, cudaMemAttachGlobal); kind; free", n);
        CK(t, cuxfer_managed_alloc(&p, n, 1, cudaMemAttachGlobal));
        if (cuxfer_memory_kind(p) != CUXFER_MEMORY_MANAGED)
            return soak_fail(t, "cuxfer_memory_kind says %s", cuxfer_memkind_name(cuxfer_memory_kind(p)));
        CK(t, cuxfer_managed_free(p));
        break;
    }
    return 0;
}

/* The ring's slot work: its upload copied on the device to offset 2048,
 * which the job's download brings back. */
static cudaError_t ring_work(const cuxfer_ring_slot *slot, void *arg)
{
    size_t n = *(const size_t *)arg;
    return n ? cudaMemcpyAsync((unsigned char *)slot->device + 2048, slot->device, n,
                               cudaMemcpyDeviceToDevice, slot->stream)
             : cudaSuccess;
}

/* A cycle of the timing ring: before its first submission the slot has
 * no time (refused); after a cycle, CUXFER_NOWAIT gives the time or
 * cudaErrorNotReady, CUXFER_WAIT the time, finite and not negative; the
 * bytes come back. */
static int ring_timed(soak_thread *t, size_t up)
{
    soak_gpu *g = t->g;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_ring_job job;
    cudaError_t err;
    float ms = -1.0f;
    unsigned char *h;
    soak_say(t, "timing ring: acquire; cuxfer_ring_slot_ms (cycle %ld); submit(h2d %zu, d2h %zu); "
                "cuxfer_ring_slot_ms CUXFER_NOWAIT, CUXFER_WAIT", g->tring_cycles, up, up);
    CK(t, cuxfer_ring_acquire(&g->tring, &slot));
    err = cuxfer_ring_slot_ms(slot, CUXFER_WAIT, &ms);
    if (g->tring_cycles == 0) {
        if (soak_expect(t, cudaErrorInvalidValue, err)) /* no submission yet */
            return 1;
    } else if (soak_expect(t, cudaSuccess, err))
        return 1;
    if (!isfinite(ms) || ms < 0.0f || (g->tring_cycles == 0 && ms != 0.0f))
        return soak_fail(t, "cuxfer_ring_slot_ms gave %g ms", (double)ms);
    h = (unsigned char *)slot->host;
    soak_fill(t, h, up);
    memcpy(g->tmp, h, up);
    memset(h + 2048, POISON, 2048);
    memset(&job, 0, sizeof job);
    job.h2d_bytes = up;
    job.d2h_bytes = up;
    job.d2h_host_offset = 2048;
    CK(t, cuxfer_ring_submit(&g->tring, slot, &job));
    ++g->tring_cycles;
    ms = -1.0f;
    err = cuxfer_ring_slot_ms(slot, CUXFER_NOWAIT, &ms);
    if (err == cudaErrorNotReady) {
        if (ms != 0.0f)
            return soak_fail(t, "cuxfer_ring_slot_ms: not ready, yet *ms = %g", (double)ms);
    } else if (soak_expect(t, cudaSuccess, err))
        return 1;
    else if (!isfinite(ms) || ms < 0.0f)
        return soak_fail(t, "cuxfer_ring_slot_ms(CUXFER_NOWAIT) gave %g ms", (double)ms);
    ms = -1.0f;
    CK(t, cuxfer_ring_slot_ms(slot, CUXFER_WAIT, &ms));
    if (!isfinite(ms) || ms < 0.0f || ms > 60000.0f)
        return soak_fail(t, "cuxfer_ring_slot_ms(CUXFER_WAIT) gave %g ms", (double)ms);
    CK(t, cuxfer_ring_drain(&g->tring));
    return soak_compare(t, h + 2048, g->tmp, up, "the timing ring's download");
}

/* The ring's indices (man 3 cuxfer_ring): a depth outside 1..slots, a
 * slot index outside 0..slots-1 for cuxfer_ring_stream and
 * cuxfer_ring_slot_buffers are refused, their outputs NULL; then the
 * depth goes back to every slot. */
static int ring_bounds(soak_thread *t, int n)
{
    soak_gpu *g = t->g;
    int depth = soak_below(t, 2) ? 0 : n + 1, i = soak_below(t, 2) ? -1 : n;
    cudaStream_t rs = (cudaStream_t)1;
    void *h = (void *)1, *d = (void *)1;
    soak_say(t, "cuxfer_ring_set_depth(%d), cuxfer_ring_stream(%d), cuxfer_ring_slot_buffers(%d) "
                "of a ring of %d slots: refused", depth, i, i, n);
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_set_depth(&g->ring, depth)) ||
        soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_stream(&g->ring, i, &rs)) ||
        soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_slot_buffers(&g->ring, i, &h, &d)))
        return 1;
    if (rs || h || d)
        return soak_fail(t, "a refused index left a stream or buffer set (%p, %p, %p)",
                         (void *)rs, h, d);
    CK(t, cuxfer_ring_set_depth(&g->ring, n));
    if (cuxfer_ring_depth(&g->ring) != n)
        return soak_fail(t, "cuxfer_ring_depth says %d, want %d", cuxfer_ring_depth(&g->ring), n);
    return 0;
}

/* A ring's cycle: a depth drawn, a slot acquired, its buffers found, a
 * job of upload, work and download submitted and drained, the bytes
 * back; a refused submit keeps the slot, which is then given back; then
 * the indices out of range (ring_bounds). */
static int op_ring(soak_thread *t)
{
    soak_gpu *g = t->g;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_ring_job job;
    void *h = NULL, *d = NULL;
    float ms;
    int n = cuxfer_ring_slots(&g->ring), depth = 1 + (int)soak_below(t, 2);
    size_t up = soak_size(t, 2048);
    soak_say(t, "cuxfer_ring_set_depth(%d); acquire; slot_buffers; submit(h2d %zu, work, d2h %zu); "
                "drain; acquire; submit refused; submit and release on the timing ring refused; "
                "release", depth, up, up);
    if (n != 2)
        return soak_fail(t, "cuxfer_ring_slots says %d, want 2", n);
    CK(t, cuxfer_ring_set_depth(&g->ring, depth));
    if (cuxfer_ring_depth(&g->ring) != depth)
        return soak_fail(t, "cuxfer_ring_depth says %d, want %d", cuxfer_ring_depth(&g->ring), depth);
    CK(t, cuxfer_ring_acquire(&g->ring, &slot));
    CK(t, cuxfer_ring_slot_buffers(&g->ring, slot->index, &h, &d));
    if (h != slot->host || d != slot->device)
        return soak_fail(t, "cuxfer_ring_slot_buffers gave %p/%p, the slot has %p/%p", h, d,
                         slot->host, slot->device);
    soak_fill(t, h, up);
    memcpy(g->tmp, h, up);
    memset((unsigned char *)h + 2048, POISON, 2048);
    memset(&job, 0, sizeof job);
    job.h2d_bytes = up;
    job.work = ring_work;
    job.arg = &up;
    job.d2h_bytes = up;
    job.d2h_host_offset = job.d2h_device_offset = 2048;
    CK(t, cuxfer_ring_submit(&g->ring, slot, &job));
    CK(t, cuxfer_ring_drain(&g->ring));
    if (soak_compare(t, (unsigned char *)h + 2048, g->tmp, up, "the ring slot's download"))
        return 1;
    /* a ring without timing: its slots are not timed */
    soak_say(t, "cuxfer_ring_slot_ms(a slot of a ring without timing, CUXFER_WAIT, &ms)");
    ms = -1.0f;
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_slot_ms(slot, CUXFER_WAIT, &ms)))
        return 1;
    if (ms != 0.0f)
        return soak_fail(t, "a refusal left *ms = %g, not 0", (double)ms);
    if (ring_timed(t, up))
        return 1;
    CK(t, cuxfer_ring_acquire(&g->ring, &slot));
    job.h2d_bytes = slot->host_bytes + 1;
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_submit(&g->ring, slot, &job)))
        return 1;
    /* a download one byte past either buffer (man 3 cuxfer_ring): refused, still held */
    job.h2d_bytes = 16;
    job.d2h_bytes = 1 + soak_below(t, 64);
    job.d2h_host_offset = job.d2h_device_offset = 0;
    if (soak_below(t, 2))
        job.d2h_host_offset = slot->host_bytes - job.d2h_bytes + 1;
    else
        job.d2h_device_offset = slot->device_bytes - job.d2h_bytes + 1;
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_submit(&g->ring, slot, &job)))
        return 1;
    job.h2d_bytes = 16; /* the slot is not the timing ring's: refused, still held */
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_submit(&g->tring, slot, &job)) ||
        soak_expect(t, cudaErrorInvalidValue, cuxfer_ring_release(&g->tring, slot)))
        return 1;
    CK(t, cuxfer_ring_release(&g->ring, slot));
    return ring_bounds(t, n);
}

/* Fan-out and fan-in through a stream pool (its own, or two streams
 * wrapped): an upload on s behind a delay, each of the pool's two streams
 * copies half of it on the device behind a delay of its own, s downloads
 * what they wrote.  A missing fence reads poison.  Then an event pool's
 * round robin. */
static int op_fan(soak_thread *t)
{
    soak_gpu *g = t->g;
    cuxfer_stream_pool *p = soak_below(t, 2) ? &g->pool : &g->wpool;
    size_t n = 1 + soak_size(t, FANB / 2 - 1), half = n / 2;
    int how = (int)soak_below(t, 2), c = 1 + (int)soak_below(t, 4), k;
    unsigned char *dst = g->fan_d + FANB / 2, *back = g->fan_h + FANB / 2;
    cudaStream_t s = g->nb, q[2];
    cuxfer_event_pool ep;
    cudaEvent_t e0;
    soak_say(t, "%s on %s, %zu bytes; cuxfer_stream_pool_next x2; cuxfer_stream_pool_sync; "
                "cuxfer_event_pool_create(%d), next x%d, destroy",
             how ? "cuxfer_stream_all_wait/cuxfer_stream_wait_all"
                 : "cuxfer_stream_pool_wait/cuxfer_stream_wait_pool",
             p == &g->pool ? "a pool (cuxfer_stream_pool_create_on)"
                           : "a wrapped pool (cuxfer_stream_pool_wrap)",
             n, c, c + 1);
    soak_fill(t, g->fan_h, n);
    memcpy(g->tmp, g->fan_h, n);
    memset(back, POISON, n);
    CK(t, cuxfer_stream_pool_next(p, &q[0]));
    CK(t, cuxfer_stream_pool_next(p, &q[1]));
    if (q[0] == q[1])
        return soak_fail(t, "cuxfer_stream_pool_next gave one stream twice in a pool of two");
    CK(t, cudaMemsetAsync(g->fan_d, POISON, FANB, s));
    CK(t, cudaLaunchHostFunc(s, delay_fn, NULL));
    CK(t, cuxfer_copy_async(g->fan_d, g->fan_h, n, s));
    CK(t, how ? cuxfer_stream_all_wait(q, 2, s) : cuxfer_stream_pool_wait(p, s));
    CK(t, cudaLaunchHostFunc(q[0], delay_fn, NULL));
    CK(t, cuxfer_copy_async(dst, g->fan_d, half, q[0]));
    CK(t, cuxfer_copy_async(dst + half, g->fan_d + half, n - half, q[1]));
    CK(t, how ? cuxfer_stream_wait_all(s, q, 2) : cuxfer_stream_wait_pool(s, p));
    CK(t, cuxfer_copy_async(back, dst, n, s));
    CK(t, cudaStreamSynchronize(s));
    CK(t, cuxfer_stream_pool_sync(p));
    if (soak_compare(t, back, g->tmp, n, "the fan-in's download"))
        return 1;
    CK(t, cuxfer_event_pool_create(&ep, c));
    e0 = cuxfer_event_pool_next(&ep);
    for (k = 1; k < c; ++k)
        if (cuxfer_event_pool_next(&ep) == e0)
            return soak_fail(t, "an event pool of %d gave its first event back after %d", c, k);
    if (cuxfer_event_pool_next(&ep) != e0)
        return soak_fail(t, "an event pool of %d did not give its first event back", c);
    CK(t, cudaEventRecord(e0, s));
    CK(t, cudaEventSynchronize(e0));
    CK(t, cuxfer_event_pool_destroy(&ep));
    return 0;
}

/* ---- the op table: the call step four times as often as the others ---- */
static int locked(soak_thread *t, int (*fn)(soak_thread *), int exclusive)
{
    int rc;
    /* a waiting writer holds the turnstile: readers queue behind it, so a
     * Global capture is never starved by the other threads' steps */
    pthread_mutex_lock(&G.turn);
    if (exclusive)
        pthread_rwlock_wrlock(&G.cap_lock);
    else
        pthread_rwlock_rdlock(&G.cap_lock);
    pthread_mutex_unlock(&G.turn);
    if (cudaSetDevice(0) != cudaSuccess) {
        pthread_rwlock_unlock(&G.cap_lock);
        return soak_fail(t, "cudaSetDevice(0) failed");
    }
    rc = fn(t);
    pthread_rwlock_unlock(&G.cap_lock);
    return rc;
}

/* A Global capture, or cuxfer_graph_begin (a Global capture of its own),
 * in this step takes the lock for writing, and so does a held stream:
 * another thread's free (cudaFree, cudaFreeHost, cudaHostUnregister)
 * waits for every stream of the device, held ones too, and CUDA calls
 * made meanwhile on any thread can wait behind it, so a call on a held
 * stream returns only if no other thread frees during the hold
 * (cuxfer(3), STREAMS AND CAPTURE).  Decided from a copy of the
 * generator, so the step itself draws the same numbers. */
static int op_call_locked(soak_thread *t)
{
    soak_thread probe = *t;
    kindsel k;
    callctx c;
    draw_kind(&probe, &k);
    draw_call(&probe, &c, k.kind, k.dev);
    return locked(t, op_call,
                  k.kind == COMP_GLOBAL || k.kind == COMP_HELD || c.call == COMP_GRAPH_BEGIN);
}

static int op_alloc_locked(soak_thread *t) { return locked(t, op_alloc, 0); }
static int op_ring_locked(soak_thread *t) { return locked(t, op_ring, 0); }
static int op_fan_locked(soak_thread *t) { return locked(t, op_fan, 0); }

const soak_op soak_gpu_ops[] = {
    {"call", op_call_locked}, {"call", op_call_locked}, {"call", op_call_locked},
    {"call", op_call_locked}, {"call", op_call_locked}, {"call", op_call_locked},
    {"alloc", op_alloc_locked}, {"ring", op_ring_locked}, {"fan", op_fan_locked},
};
const int soak_gpu_nops = (int)(sizeof soak_gpu_ops / sizeof soak_gpu_ops[0]);

/* ---- setup and leak checks ------------------------------------------------ */
static void CUDART_CB warm_fn(void *arg) { (void)arg; }

int soak_gpu_init(int devices)
{
    int n = 0;
    cudaError_t err = cuxfer_device_count(&n);
    const char *req = getenv("CUXFER_REQUIRE_GPU");
    int need = devices > 0 ? devices : 1;
    if (err != cudaSuccess || n < need) {
        if (req && atoi(req) >= need) {
            printf("Bail out! CUXFER_REQUIRE_GPU=%s but %s\n", req,
                   err != cudaSuccess ? cuxfer_last_reason() : "too few GPUs");
            return -1;
        }
        printf("1..0 # SKIP no CUDA device: %s\n",
               err != cudaSuccess ? cuxfer_last_reason() : "too few GPUs for --devices");
        return 0;
    }
    /* the guards' documented defaults, whatever the environment says:
     * "error" would turn the calls the table says work into refusals */
    setenv("CUXFER_PAGEABLE", "warn", 1);
    setenv("CUXFER_DEFAULT_STREAM", "warn", 1);
    G.ndev = devices > 0 ? devices : (n > 2 ? 2 : n);
    if (G.ndev > 2)
        G.ndev = 2;
    pthread_rwlock_init(&G.cap_lock, NULL);
    pthread_mutex_init(&G.turn, NULL);
    if (cudaSetDevice(0) != cudaSuccess || cuxfer_pinned_pool_create(&G.pool, NULL) != cudaSuccess ||
        cuxfer_stream_pool_create(&G.spool, 4, cudaStreamNonBlocking, 0) != cudaSuccess) {
        printf("Bail out! setup: %s\n", cuxfer_last_reason());
        return -1;
    }
    if (G.ndev > 1) {
        (void)cuxfer_peer_enable(0, 1);
        (void)cuxfer_peer_enable(1, 0);
        (void)cudaGetLastError();
    }
    {
        /* CUDA's host-function thread starts on first use: before the baseline */
        cudaStream_t s;
        size_t fr = 0, tot = 0;
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
            cudaLaunchHostFunc(s, warm_fn, NULL) != cudaSuccess ||
            cudaStreamSynchronize(s) != cudaSuccess || cudaStreamDestroy(s) != cudaSuccess) {
            printf("Bail out! setup: the first host function failed\n");
            return -1;
        }
        (void)cudaMemGetInfo(&fr, &tot);
        G.free0 = fr;
    }
    return G.ndev;
}

void soak_gpu_fini(void)
{
    int c, k;
    long total = 0;
    (void)cuxfer_stream_pool_destroy(&G.spool);
    (void)cuxfer_pinned_pool_destroy(&G.pool);
    /* the calls covered, per stream kind */
    printf("# calls by stream kind (0, legacy, per-thread, blocking, non-blocking, Global, "
           "ThreadLocal, Relaxed, other device, held):\n");
    for (c = 0; c < COMP_CALLS; ++c) {
        char line[256];
        int o = snprintf(line, sizeof line, "#   %-28s", comp_call_name[c]);
        for (k = 0; k < COMP_KINDS && o < (int)sizeof line; ++k) {
            o += snprintf(line + o, sizeof line - (size_t)o, " %5ld", G.counts[c][k]);
            total += G.counts[c][k];
        }
        printf("%s\n", line);
    }
    printf("# %ld stream-taking calls\n", total);
}

int soak_gpu_thread_init(soak_thread *t)
{
    soak_gpu *g = (soak_gpu *)calloc(1, sizeof *g);
    cuxfer_plan2d_options po;
    cuxfer_stager_options so;
    cuxfer_rois_options ro;
    int b, i;
    cudaStream_t s;
    if (!g)
        return -1;
    t->g = g;
#define SETUP(expr)                                                                      \
    do {                                                                                 \
        cudaError_t e_ = (expr);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            printf("# setup: %s -> %s %s\n", #expr, cudaGetErrorName(e_), cuxfer_last_reason()); \
            return -1;                                                                   \
        }                                                                                \
    } while (0)
    SETUP(cudaSetDevice(0));
    SETUP(cudaStreamCreateWithFlags(&g->io, cudaStreamNonBlocking));
    SETUP(cuxfer_host_alloc((void **)&g->buf[B_PIN], GB, 1, 0));
    g->buf[B_PAGE] = (unsigned char *)malloc(GB);
    SETUP(cuxfer_device_alloc((void **)&g->buf[B_DEV], GB, 1));
    SETUP(cuxfer_managed_alloc((void **)&g->buf[B_MAN], GB, 1, cudaMemAttachGlobal));
    SETUP(cuxfer_managed_alloc((void **)&g->adv, GB, 1, cudaMemAttachGlobal));
    if (G.ndev > 1) {
        SETUP(cudaSetDevice(1));
        SETUP(cuxfer_device_alloc((void **)&g->buf[B_DEV1], GB, 1));
        SETUP(cudaStreamCreateWithFlags(&g->other, cudaStreamNonBlocking));
        SETUP(cudaSetDevice(0));
    } else
        g->buf[B_DEV1] = NULL;
    g->tmp = (unsigned char *)malloc(GB);
    if (!g->buf[B_PAGE] || !g->tmp)
        return -1;
    for (b = 0; b < B_COUNT; ++b) {
        g->mod[b] = (unsigned char *)malloc(GB);
        if (!g->mod[b])
            return -1;
        soak_fill(t, g->mod[b], GB);
        if (g->buf[b] && push(t, b))
            return -1;
    }
    SETUP(cudaStreamCreateWithFlags(&g->nb, cudaStreamNonBlocking));
    SETUP(cudaStreamCreateWithFlags(&g->blk, cudaStreamDefault));
    SETUP(cudaStreamCreateWithFlags(&g->sig, cudaStreamNonBlocking));
    SETUP(cudaStreamCreateWithFlags(&g->cap, cudaStreamNonBlocking));
    SETUP(cuxfer_timer_create(&g->timer));
    SETUP(cuxfer_latch_init(&g->latch));
    for (i = 0; i < 3; ++i) {
        memset(&po, 0, sizeof po);
        po.chunk_bytes = 4096 + 4096 * (size_t)i; /* many chunks per copy: slots reused */
        po.threads = 2;
        po.strategy = i == 0 ? CUXFER_PLAN_SPAN : i == 1 ? CUXFER_PLAN_PACK : CUXFER_PLAN_AUTO;
        SETUP(cuxfer_plan2d_create(&g->plan[i], &po));
    }
    memset(&po, 0, sizeof po);
    po.threads = 2;
    SETUP(cuxfer_plan2d_create(&g->cal, &po));
    memset(&so, 0, sizeof so);
    so.slots = 2;
    so.slot_bytes = 4096; /* the smallest: a copy just over a slot wraps the ring */
    so.threads = 2;
    g->stager_opt = so;
    SETUP(cuxfer_stager_create(&g->stager, &so));
    memset(&ro, 0, sizeof ro);
    ro.threads = 2;
    ro.chunk_bytes = 4096;
    SETUP(cuxfer_rois_create(&g->rois, &ro));
    SETUP(cuxfer_ring_create(&g->ring, 2, 4096, 4096, NULL));
    {
        cuxfer_ring_options rop;
        memset(&rop, 0, sizeof rop);
        rop.timing = 1;
        SETUP(cuxfer_ring_create(&g->tring, 1, 4096, 4096, &rop));
    }
    SETUP(cuxfer_stream_pool_create_on(&g->pool, 0, 2, cudaStreamNonBlocking, 0));
    {
        cudaStream_t two[2];
        two[0] = g->sig;
        two[1] = g->io;
        SETUP(cuxfer_stream_pool_wrap(&g->wpool, two, 2));
    }
    SETUP(cuxfer_host_alloc((void **)&g->fan_h, FANB, 1, 0));
    SETUP(cuxfer_device_alloc((void **)&g->fan_d, FANB, 1));
    SETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    SETUP(cuxfer_graph_begin(s));
    SETUP(cudaMemcpyAsync(g->buf[B_DEV] + G0OFF, g->buf[B_PIN], G0N, cudaMemcpyHostToDevice, s));
    SETUP(cuxfer_graph_end(&g->g0, s));
    SETUP(cudaStreamDestroy(s));
    {
        /* What CUDA reserves on a kernel's first launch (the copy kernel of
         * SPAN's gathered share and PACK) is kept for the context's life:
         * reserved here, before the leak baselines, it is not a leak. */
        cuxfer_view dv, sv;
        SETUP(cuxfer_view_wrap(&dv, g->buf[B_DEV], 64, 16, 1024, 1));
        SETUP(cuxfer_view_wrap(&sv, g->buf[B_PIN], 32, 16, 1024, 1));
        for (i = 0; i < 3; ++i)
            SETUP(cuxfer_plan2d_copy_async(&g->plan[i], &dv, &sv, g->nb));
        /* and the calibration plan's, SPAN and PACK (its tuning made to
         * take them for these small copies, then put back) */
        cuxfer_plan2d_tuning tun = g->cal.tuning;
        g->cal.tuning.min_bytes = 0;
        SETUP(cuxfer_plan2d_copy_async(&g->cal, &dv, &sv, g->nb));
        SETUP(cuxfer_plan2d_copy_async(&g->cal, &sv, &dv, g->nb));
        SETUP(cudaStreamSynchronize(g->nb));
        g->cal.tuning = tun;
        if (push(t, B_PIN))
            return -1;
        /* CUDA's own kernels for device-to-device copies load lazily too
         * (CUDA_MODULE_LOADING=LAZY, the default): the first such copy
         * behind a held stream would wait for the load */
        SETUP(cuxfer_view_wrap(&sv, g->buf[B_DEV] + GB / 2 + 3, 301, 300, 7, 1));
        SETUP(cuxfer_view_wrap(&dv, g->buf[B_DEV] + 1, 399, 300, 7, 1));
        SETUP(cuxfer_copy_async(g->buf[B_DEV] + 1, g->buf[B_DEV] + GB / 2 + 3, 14939, g->nb));
        SETUP(cuxfer_copy2d_async(&dv, &sv, g->nb));
        SETUP(cudaStreamSynchronize(g->nb));
        if (push(t, B_DEV))
            return -1;
    }
#undef SETUP
    return 0;
}

int soak_gpu_thread_fini(soak_thread *t)
{
    soak_gpu *g = t->g;
    int b, i, bad = 0;
    if (!g)
        return 0;
#define DOWN(expr)                                                                       \
    do {                                                                                 \
        cudaError_t e_ = (expr);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            printf("# teardown: %s -> %s %s\n", #expr, cudaGetErrorName(e_), cuxfer_last_reason()); \
            bad = 1;                                                                     \
        }                                                                                \
    } while (0)
    DOWN(cudaSetDevice(0));
    DOWN(cudaDeviceSynchronize());
    DOWN(cuxfer_graph_destroy(&g->g0));
    DOWN(cuxfer_rois_destroy(&g->rois));
    DOWN(cuxfer_ring_destroy(&g->ring));
    DOWN(cuxfer_ring_destroy(&g->tring));
    DOWN(cuxfer_stream_pool_destroy(&g->pool));
    DOWN(cuxfer_stream_pool_destroy(&g->wpool));
    DOWN(cuxfer_host_free(g->fan_h));
    DOWN(cuxfer_device_free(g->fan_d));
    DOWN(cuxfer_stager_destroy(&g->stager));
    for (i = 0; i < 3; ++i)
        DOWN(cuxfer_plan2d_destroy(&g->plan[i]));
    DOWN(cuxfer_plan2d_destroy(&g->cal));
    DOWN(cuxfer_latch_destroy(&g->latch));
    DOWN(cuxfer_timer_destroy(&g->timer));
    DOWN(cudaStreamDestroy(g->nb));
    DOWN(cudaStreamDestroy(g->blk));
    DOWN(cudaStreamDestroy(g->sig));
    DOWN(cudaStreamDestroy(g->io));
    DOWN(cudaStreamDestroy(g->cap));
    DOWN(cuxfer_host_free(g->buf[B_PIN]));
    DOWN(cuxfer_device_free(g->buf[B_DEV]));
    DOWN(cuxfer_managed_free(g->buf[B_MAN]));
    DOWN(cuxfer_managed_free(g->adv));
    if (g->buf[B_DEV1]) {
        DOWN(cudaSetDevice(1));
        DOWN(cuxfer_device_free(g->buf[B_DEV1]));
        DOWN(cudaStreamDestroy(g->other));
        DOWN(cudaSetDevice(0));
    }
#undef DOWN
    free(g->buf[B_PAGE]);
    free(g->tmp);
    for (b = 0; b < B_COUNT; ++b)
        free(g->mod[b]);
    free(g);
    t->g = NULL;
    return bad;
}

/* Between rounds (every thread idle): no pool block in use, device memory
 * not lower than after the first round; at the end (final), the pool
 * trimmed to nothing and the device memory back to before the setup.
 * The slack is CUDA's own lazy reservations (a kernel's local memory on
 * its first launch, graph and library pools), taken once, not per step: a
 * leak of one buffer per step passes it within a round. */
#define LEAK_SLACK ((size_t)64 << 20)
int soak_gpu_leaks(soak_thread *t0, int final)
{
    cuxfer_pinned_pool_stats ps = cuxfer_pinned_pool_get_stats(&G.pool);
    size_t fr = 0, tot = 0;
    t0->op = final > 0 ? "end" : "checkpoint";
    if (ps.in_use != 0)
        return soak_fail(t0, "leak: %zu pinned pool bytes still in use", ps.in_use);
    if (final > 0) {
        if (cuxfer_pinned_pool_trim(&G.pool) != cudaSuccess)
            return soak_fail(t0, "cuxfer_pinned_pool_trim failed: %s", cuxfer_last_reason());
        ps = cuxfer_pinned_pool_get_stats(&G.pool);
        if (ps.reserved != 0)
            return soak_fail(t0, "leak: the trimmed pool still holds %zu pinned bytes", ps.reserved);
    }
    /* device bytes: cudaMemGetInfo counts every process on the device, so
     * with --shared-gpu (make check runs tests beside each other) they are
     * not compared; every other check stays */
    if (soak_opt.shared_gpu) {
        if (final > 0)
            printf("# device memory: not compared (--shared-gpu: other processes use the GPU)\n");
        return 0;
    }
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess)
        return soak_fail(t0, "cudaMemGetInfo failed");
    if (final < 0) {
        G.free_warm = fr;
        return 0;
    }
    if (final == 0 && fr + LEAK_SLACK < G.free_warm)
        return soak_fail(t0, "leak: %zu device bytes gone since the first round",
                         G.free_warm - fr);
    if (final > 0) {
        /* against the first round's level: CUDA's lazy reservations (its
         * modules, graph and staging memory, over 100 MiB) are taken by
         * then.  A replay has no round, so no such level: it checks the
         * pool alone */
        if (!G.free_warm) {
            printf("# device memory: not compared (no first round to take the level from)\n");
            return 0;
        }
        if (fr + LEAK_SLACK < G.free_warm)
            return soak_fail(t0, "leak: %zu device bytes not given back at the end",
                             G.free_warm - fr);
        printf("# device memory: %zu MiB free before the setup, %zu MiB at the end\n",
               G.free0 >> 20, fr >> 20);
    }
    return 0;
}
