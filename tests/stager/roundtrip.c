/* SPDX-License-Identifier: MIT */
/* On a real GPU, the stager moves pageable memory both ways, byte-exact and
 * nothing outside the range written: 1 B, 4095 B, one slot, one slot + 1,
 * several slots + an odd remainder and 300 MiB, through the ring (AUTO,
 * COPY with odd slot sizes, one slot, many threads) and registered in
 * place; a pinned host side goes direct.  The stage call returns before the
 * copy completes (its `after` stream held by a gate: query says not done, a
 * timed wait times out, a second job is refused as busy), the copy is
 * ordered after the work queued on `after`, several threads can wait,
 * jobs run back to back, destroy with a job in flight waits for it, and a
 * failed copy is reported by wait (or by the next stage call), the stager
 * staying usable. */
#include "sched-helpers.h"
#include <pthread.h>

#define MIB ((size_t)1 << 20)
#define MAXB (300 * MIB)
#define GUARD ((size_t)4096)
#define PAD ((size_t)16)
#define TOTAL (MAXB + GUARD + PAD)

static unsigned char *pat; /* pageable source pattern, TOTAL bytes */
static unsigned char *chk; /* pageable read-back of the device */
static unsigned char *out; /* pageable D2H destination */
static unsigned char *dev; /* device buffer, TOTAL bytes */
static cudaStream_t after; /* the caller's stream */

static void dev_poison(void)
{
    GPU_MUST(cudaMemset(dev, 0xA5, TOTAL));
    GPU_MUST(cudaDeviceSynchronize());
}

/* dev[0, n) = pat[0, n), complete on return. */
static void dev_load(size_t n)
{
    GPU_MUST(cudaMemcpy(dev, pat, n, cudaMemcpyHostToDevice));
    GPU_MUST(cudaDeviceSynchronize());
}

/* A staged copy of n bytes in direction dir ("H2D", "D2H") that started
 * with err at t0: the start and cuxfer_stager_wait as points, the time of a
 * 300 MiB copy as a diagnostic.  0 when it did not start. */
static int started_and_waited(cuxfer_stager *st, const char *name, const char *dir,
                              cudaError_t err, double t0, size_t n, size_t hoff, size_t doff)
{
    double el;
    if (!ok(err == cudaSuccess, "%s: %s of %zu bytes (offsets %zu/%zu) started", name, dir, n,
            hoff, doff)) {
        diag("  %s: %s", cudaGetErrorName(err), cuxfer_last_reason());
        return 0;
    }
    err = cuxfer_stager_wait(st, 60000);
    el = now_ms() - t0;
    if (!ok(err == cudaSuccess, "%s: %s of %zu bytes: wait succeeds", name, dir, n))
        diag("  %s: %s", cudaGetErrorName(err), cuxfer_last_reason());
    if (n == MAXB)
        diag("%s: staged %s of 300 MiB: %.2f ms, %.2f GB/s (call to wait)", name, dir, el,
             (double)n / (el * 1e6));
    return 1;
}

/* Stage pat + hoff -> dev + doff (n bytes), wait, read back, compare. */
static void check_h2d(cuxfer_stager *st, const char *name, size_t n, size_t hoff, size_t doff)
{
    double t0;
    dev_poison();
    t0 = now_ms();
    if (!started_and_waited(st, name, "H2D", cuxfer_stage_h2d(st, dev + doff, pat + hoff, n, after),
                            t0, n, hoff, doff))
        return;
    GPU_MUST(cudaMemcpy(chk, dev, TOTAL, cudaMemcpyDeviceToHost));
    ok(count_diff(chk + doff, pat + hoff, n, name) == 0, "%s: H2D of %zu bytes is byte-exact",
       name, n);
    ok(all_bytes(chk, doff, 0xA5) && all_bytes(chk + doff + n, GUARD, 0xA5),
       "%s: H2D of %zu bytes wrote nothing outside its range", name, n);
}

/* dev + doff -> out + hoff (n bytes), wait, compare with pat + doff. */
static void check_d2h(cuxfer_stager *st, const char *name, size_t n, size_t hoff, size_t doff)
{
    double t0;
    dev_load(doff + n);
    memset(out, 0xA5, TOTAL);
    t0 = now_ms();
    if (!started_and_waited(st, name, "D2H", cuxfer_stage_d2h(st, out + hoff, dev + doff, n, after),
                            t0, n, hoff, doff))
        return;
    ok(count_diff(out + hoff, pat + doff, n, name) == 0, "%s: D2H of %zu bytes is byte-exact",
       name, n);
    ok(all_bytes(out, hoff, 0xA5) && all_bytes(out + hoff + n, GUARD, 0xA5),
       "%s: D2H of %zu bytes wrote nothing outside its range", name, n);
}

static cuxfer_stager_options opts(int slots, size_t slot_bytes, int threads, int strategy)
{
    cuxfer_stager_options o = {.slots = slots, .slot_bytes = slot_bytes, .threads = threads,
                               .strategy = strategy};
    return o;
}

/* Every size both ways on one stager; `used` is what must have run it. */
static void sizes_suite(const char *name, const cuxfer_stager_options *o, const size_t *sizes,
                        int count, int used)
{
    cuxfer_stager st;
    int i;
    GPU_MUST(cuxfer_stager_create(&st, o));
    diag("%s: %d slots of %zu bytes, %d threads, pieces of %zu bytes", name, st.opt.slots,
         st.opt.slot_bytes, st.opt.threads, st.piece_bytes);
    for (i = 0; i < count; ++i) {
        size_t hoff = (i & 1) ? 7 : 0, doff = (i % 3 == 1) ? 5 : 0;
        check_h2d(&st, name, sizes[i], hoff, doff);
        is_int(used, st.used, "%s: H2D of %zu bytes ran as strategy %d", name, sizes[i], used);
        check_d2h(&st, name, sizes[i], hoff, doff);
        is_int(used, st.used, "%s: D2H of %zu bytes ran as strategy %d", name, sizes[i], used);
    }
    GPU_OK(cuxfer_stager_destroy(&st), "%s: destroy", name);
}

static void test_sizes(void)
{
    const size_t S = 16 * MIB, s2 = MIB + 12288, s4 = 77824;
    const size_t big[] = {1, 4095, S, S + 1, 3 * S + 12345, MAXB};
    const size_t small[] = {1, 4095, s2, s2 + 1, 5 * s2 + 777, 12 * MIB + 13};
    const size_t tiny[] = {1, 4096, 4097, MIB + 3};
    const size_t many[] = {s4, 7 * s4 + 5, 8 * MIB + 1};
    cuxfer_stager_options o;
    o = opts(0, 0, 0, 0);
    sizes_suite("AUTO defaults", &o, big, 6, CUXFER_STAGE_COPY);
    o = opts(0, 0, 0, CUXFER_STAGE_REGISTER);
    sizes_suite("REGISTER", &o, big, 6, CUXFER_STAGE_REGISTER);
    o = opts(3, s2, 3, CUXFER_STAGE_COPY);
    sizes_suite("COPY 3 odd slots", &o, small, 6, CUXFER_STAGE_COPY);
    o = opts(1, 4096, 1, CUXFER_STAGE_COPY);
    sizes_suite("COPY 1 slot 1 thread", &o, tiny, 4, CUXFER_STAGE_COPY);
    o = opts(5, s4, 16, CUXFER_STAGE_COPY);
    sizes_suite("COPY 16 threads", &o, many, 3, CUXFER_STAGE_COPY);
}

/* Plain pageable copies, for comparison with the staged numbers. */
static void baseline(void)
{
    double t0;
    t0 = now_ms();
    GPU_MUST(cudaMemcpyAsync(dev, pat, MAXB, cudaMemcpyHostToDevice, after));
    GPU_MUST(cudaStreamSynchronize(after));
    diag("plain pageable H2D of 300 MiB: %.2f GB/s", (double)MAXB / ((now_ms() - t0) * 1e6));
    t0 = now_ms();
    GPU_MUST(cudaMemcpyAsync(out, dev, MAXB, cudaMemcpyDeviceToHost, after));
    GPU_MUST(cudaStreamSynchronize(after));
    diag("plain pageable D2H of 300 MiB: %.2f GB/s", (double)MAXB / ((now_ms() - t0) * 1e6));
}

/* A pinned host side is copied directly, whatever the strategy. */
static void test_pinned(void)
{
    enum { N = 5 << 20 };
    cuxfer_stager st;
    cuxfer_stager_options o = opts(2, MIB, 2, CUXFER_STAGE_REGISTER);
    unsigned char *pin = NULL;
    GPU_MUST(cuxfer_stager_create(&st, &o));
    GPU_MUST(cuxfer_host_alloc((void **)&pin, N, 1, 0));
    memcpy(pin, pat, N);
    dev_poison();
    GPU_OK(cuxfer_stage_h2d(&st, dev, pin, N, after), "pinned H2D started");
    GPU_OK(cuxfer_stager_wait(&st, 30000), "pinned H2D done");
    is_int(CUXFER_STAGE_DIRECT, st.used, "a pinned source is copied direct");
    GPU_MUST(cudaMemcpy(chk, dev, N, cudaMemcpyDeviceToHost));
    ok(count_diff(chk, pat, N, "pinned h2d") == 0, "pinned H2D byte-exact");
    memset(pin, 0xA5, N);
    dev_load(N);
    GPU_OK(cuxfer_stage_d2h(&st, pin, dev, N, after), "pinned D2H started");
    GPU_OK(cuxfer_stager_wait(&st, 30000), "pinned D2H done");
    is_int(CUXFER_STAGE_DIRECT, st.used, "a pinned destination is copied direct");
    ok(count_diff(pin, pat, N, "pinned d2h") == 0, "pinned D2H byte-exact");
    GPU_OK(cuxfer_stager_destroy(&st), "destroy");
    GPU_MUST(cuxfer_host_free(pin));
}

/* --- asynchrony ------------------------------------------------------------- */

struct waiter {
    cuxfer_stager *st;
    const int *released;
    cudaError_t err;
    int early;
    int done;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    w->err = cuxfer_stager_wait(w->st, 30000);
    w->early = !__atomic_load_n(w->released, __ATOMIC_ACQUIRE);
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Held `after`: the call returns, the job is not done, a timed wait times
 * out, a second job is refused; after the release all is well. */
static void held(const char *name, const cuxfer_stager_options *o, int d2h)
{
    enum { W = 4 };
    const size_t n = 64 * MIB + 3;
    cuxfer_stager st;
    struct waiter w[W];
    pthread_t th[W];
    gate g;
    double t0, el;
    cudaError_t err;
    int i, released = 0, any_done = 0, all_ok = 1, early = 0;

    GPU_MUST(cuxfer_stager_create(&st, o));
    if (d2h) {
        dev_load(n);
        memset(out, 0xA5, TOTAL);
    } else {
        dev_poison();
    }
    GPU_MUST(gate_hold(&g, after));
    t0 = now_ms();
    err = d2h ? cuxfer_stage_d2h(&st, out, dev, n, after)
              : cuxfer_stage_h2d(&st, dev, pat, n, after);
    el = now_ms() - t0;
    is_int(cudaSuccess, err, "%s: the stage call succeeds while `after` is held", name);
    ok(!__atomic_load_n(&g.open, __ATOMIC_ACQUIRE) && !__atomic_load_n(&g.left, __ATOMIC_ACQUIRE),
       "%s: it returned while the gate was still closed (%.2f ms)", name, el);
    is_int(cudaErrorNotReady, cuxfer_stager_query(&st), "%s: query says not done", name);
    cuxfer_clear_reason();
    t0 = now_ms();
    err = cuxfer_stager_wait(&st, 200);
    el = now_ms() - t0;
    is_int(cudaErrorNotReady, err, "%s: a 200 ms wait times out with cudaErrorNotReady", name);
    ok(el >= 190.0 && el < 2200.0, "%s: after about 200 ms (%.1f ms)", name, el);
    contains(cuxfer_last_reason(), "not done within 200 ms", "%s: the reason says so", name);
    t0 = now_ms();
    is_int(cudaErrorNotReady, cuxfer_stager_wait(&st, 0), "%s: a 0 ms wait: not ready", name);
    ok(now_ms() - t0 < 100.0, "%s: promptly", name);
    err = d2h ? cuxfer_stage_h2d(&st, dev, pat, 16, after)
              : cuxfer_stage_d2h(&st, out, dev, 16, after);
    is_int(cudaErrorNotReady, err, "%s: a second job while busy is refused", name);
    contains(cuxfer_last_reason(), "the stager is busy", "%s: the reason says busy", name);

    for (i = 0; i < W; ++i) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].st = &st;
        w[i].released = &released;
        w[i].err = cudaErrorUnknown;
        start_thread(&th[i], wait_thread, &w[i]);
    }
    sleep_ms(100);
    for (i = 0; i < W; ++i)
        any_done |= __atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE);
    ok(!any_done, "%s: %d threads wait while `after` is held", name, W);
    is_int(cudaErrorNotReady, cuxfer_stager_query(&st), "%s: still not done", name);
    if (!d2h) /* the legacy stream does not wait for non-blocking ones */
        GPU_MUST(cudaMemcpy(chk, dev, n, cudaMemcpyDeviceToHost));
    ok(all_bytes(d2h ? out : chk, n, 0xA5), "%s: nothing written to the destination yet", name);
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    gate_open(&g);
    for (i = 0; i < W; ++i) {
        pthread_join(th[i], NULL);
        all_ok &= w[i].err == cudaSuccess;
        early |= w[i].early;
    }
    ok(all_ok, "%s: every waiting thread gets cudaSuccess", name);
    ok(!early, "%s: none returned before the release", name);
    GPU_OK(cuxfer_stager_wait(&st, 30000), "%s: wait after the release succeeds", name);
    GPU_OK(cuxfer_stager_query(&st), "%s: query agrees", name);
    is_int(0, g.timed_out, "%s: the gate was opened by the test", name);
    if (d2h) {
        ok(count_diff(out, pat, n, name) == 0, "%s: the data arrived", name);
    } else {
        GPU_MUST(cudaMemcpy(chk, dev, n, cudaMemcpyDeviceToHost));
        ok(count_diff(chk, pat, n, name) == 0, "%s: the data arrived", name);
    }
    GPU_OK(cuxfer_stager_destroy(&st), "%s: destroy", name);
}

/* What the caller queued on `after` before the stage call happens first:
 * H2D lands after a memset of the destination, D2H reads what a copy on
 * `after` wrote. */
static void ordered(const char *name, const cuxfer_stager_options *o)
{
    const size_t n = 40 * MIB + 1;
    cuxfer_stager st;
    unsigned char *pin = NULL;
    gate g;
    GPU_MUST(cuxfer_stager_create(&st, o));
    GPU_MUST(cuxfer_host_alloc((void **)&pin, n, 1, 0));

    dev_poison();
    GPU_MUST(gate_hold(&g, after));
    GPU_MUST(cudaMemsetAsync(dev, 0x33, n, after));
    GPU_OK(cuxfer_stage_h2d(&st, dev, pat, n, after), "%s: H2D behind a memset on `after`", name);
    sleep_ms(20);
    gate_open(&g);
    GPU_OK(cuxfer_stager_wait(&st, 30000), "%s: done", name);
    GPU_MUST(cudaStreamSynchronize(after));
    GPU_MUST(cudaMemcpy(chk, dev, n, cudaMemcpyDeviceToHost));
    ok(count_diff(chk, pat, n, name) == 0,
       "%s: H2D: the staged data, not the earlier memset, is what remains", name);

    memcpy(pin, pat, n);
    dev_poison();
    memset(out, 0xA5, n);
    GPU_MUST(gate_hold(&g, after));
    GPU_MUST(cudaMemcpyAsync(dev, pin, n, cudaMemcpyHostToDevice, after));
    GPU_OK(cuxfer_stage_d2h(&st, out, dev, n, after), "%s: D2H behind a copy on `after`", name);
    sleep_ms(20);
    gate_open(&g);
    GPU_OK(cuxfer_stager_wait(&st, 30000), "%s: done", name);
    ok(count_diff(out, pat, n, name) == 0,
       "%s: D2H: the data written by the earlier copy on `after` is what arrives", name);
    GPU_MUST(cudaStreamSynchronize(after));
    GPU_OK(cuxfer_stager_destroy(&st), "%s: destroy", name);
    GPU_MUST(cuxfer_host_free(pin));
}

/* Start a job without waiting for the previous one first: retry while the
 * stager says busy. */
static cudaError_t start_when_free(cuxfer_stager *st, int d2h, void *dst, const void *src,
                                   size_t n)
{
    double t0 = now_ms();
    cudaError_t err;
    for (;;) {
        err = d2h ? cuxfer_stage_d2h(st, dst, src, n, after)
                  : cuxfer_stage_h2d(st, dst, src, n, after);
        if (err != cudaErrorNotReady || now_ms() - t0 > 10000.0)
            return err;
        sleep_ms(1);
    }
}

static void back_to_back(void)
{
    cuxfer_stager st;
    cuxfer_stager_options o = opts(3, 256 * 1024, 4, CUXFER_STAGE_COPY);
    size_t n;
    int i, bad = 0, failed = 0;
    GPU_MUST(cuxfer_stager_create(&st, &o));
    /* 24 jobs alternating direction, each waited for. */
    for (i = 0; i < 24; ++i) {
        n = (size_t)(i * 397 * 1024 + 1 + i * 13);
        if (i % 2 == 0) {
            GPU_MUST(cudaMemset(dev, i, n));
            GPU_MUST(cudaDeviceSynchronize());
            failed |= cuxfer_stage_h2d(&st, dev, pat + i, n, after) != cudaSuccess;
            failed |= cuxfer_stager_wait(&st, 30000) != cudaSuccess;
            GPU_MUST(cudaMemcpy(chk, dev, n, cudaMemcpyDeviceToHost));
            bad += memcmp(chk, pat + i, n) != 0;
        } else {
            dev_load(n + 16);
            memset(out, i, n);
            failed |= cuxfer_stage_d2h(&st, out, dev + i, n, after) != cudaSuccess;
            failed |= cuxfer_stager_wait(&st, 30000) != cudaSuccess;
            bad += memcmp(out, pat + i, n) != 0;
        }
    }
    ok(!failed, "24 jobs back to back, alternating direction, all succeed");
    is_int(0, bad, "and every one is byte-exact");

    /* A finished job that nobody waited for does not block the next. */
    dev_load(3 * MIB);
    memset(out, 0xA5, 6 * MIB);
    GPU_OK(cuxfer_stage_d2h(&st, out, dev, 3 * MIB, after), "job 1 started");
    GPU_OK(start_when_free(&st, 1, out + 3 * MIB, dev, 3 * MIB),
           "job 2 starts once job 1 finished, without a wait in between");
    GPU_OK(cuxfer_stager_wait(&st, 30000), "job 2 done");
    ok(count_diff(out, pat, 3 * MIB, "job 1") == 0 &&
           count_diff(out + 3 * MIB, pat, 3 * MIB, "job 2") == 0,
       "both jobs' data arrived");
    GPU_OK(cuxfer_stager_destroy(&st), "destroy");
}

static void *open_later(void *arg)
{
    sleep_ms(300);
    gate_open((gate *)arg);
    return NULL;
}

static void destroy_in_flight(void)
{
    cuxfer_stager st;
    cuxfer_stager_options o = opts(0, 0, 0, 0);
    pthread_t th;
    gate g;
    double t0, el;

    GPU_MUST(cuxfer_stager_create(&st, &o));
    dev_poison();
    GPU_OK(cuxfer_stage_h2d(&st, dev, pat, MAXB, after), "300 MiB H2D started");
    GPU_OK(cuxfer_stager_destroy(&st), "destroy at once, the job in flight");
    GPU_MUST(cudaMemcpy(chk, dev, MAXB, cudaMemcpyDeviceToHost));
    ok(count_diff(chk, pat, MAXB, "destroyed h2d") == 0,
       "destroy waited: the device holds all 300 MiB");

    GPU_MUST(cuxfer_stager_create(&st, &o));
    dev_load(64 * MIB);
    memset(out, 0xA5, 64 * MIB);
    GPU_MUST(gate_hold(&g, after));
    GPU_OK(cuxfer_stage_d2h(&st, out, dev, 64 * MIB, after), "D2H behind a held `after`");
    start_thread(&th, open_later, &g);
    t0 = now_ms();
    GPU_OK(cuxfer_stager_destroy(&st), "destroy while `after` is held");
    el = now_ms() - t0;
    pthread_join(th, NULL);
    ok(el >= 250.0, "destroy waited for the release 300 ms later (%.1f ms)", el);
    ok(count_diff(out, pat, 64 * MIB, "destroyed d2h") == 0, "and for the copy");
    is_int(0, g.timed_out, "the gate was opened by the test");
    GPU_MUST(cudaStreamSynchronize(after));
}

/* `after` = 0 (the legacy stream) while a blocking stream is captured:
 * refused as cuxfer_copy_async refuses, before anything is queued, and the
 * capture stays active (recording on 0 would have invalidated it). */
static void legacy_beside_capture(cuxfer_stager *st)
{
    cudaStream_t blk;
    cudaGraph_t graph = NULL;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    memset(out, 0xA5, 100);
    GPU_MUST(cudaStreamCreateWithFlags(&blk, cudaStreamDefault));
    GPU_MUST(cudaStreamBeginCapture(blk, cudaStreamCaptureModeGlobal));
    ok(cuxfer_stream_is_capturing((cudaStream_t)0),
       "cuxfer_stream_is_capturing(0) says 1 while a blocking stream is captured");
    is_int(cudaErrorStreamCaptureImplicit, cuxfer_stage_h2d(st, dev, pat, 100, (cudaStream_t)0),
           "h2d after the legacy stream beside a capture refused");
    contains(cuxfer_last_reason(), "cannot be used now", "with a reason");
    is_int(cudaErrorStreamCaptureImplicit, cuxfer_stage_d2h(st, out, dev, 100, (cudaStream_t)0),
           "d2h after the legacy stream beside a capture refused");
    GPU_MUST(cudaStreamIsCapturing(blk, &cs));
    ok(cs == cudaStreamCaptureStatusActive, "the blocking stream's capture is still active");
    GPU_OK(cudaStreamEndCapture(blk, &graph), "and ends cleanly");
    if (graph)
        GPU_MUST(cudaGraphDestroy(graph));
    GPU_MUST(cudaStreamDestroy(blk));
    GPU_OK(cuxfer_stager_wait(st, 30000), "no job was started");
    ok(all_bytes(out, 100, 0xA5), "nothing was written");
}

/* Refusals that need real memory kinds, then copies that fail. */
static void refusals(void)
{
    cuxfer_stager st;
    cuxfer_stager_options o = opts(2, MIB, 2, CUXFER_STAGE_COPY);
    cudaStream_t cap;
    cudaGraph_t graph = NULL;
    GPU_MUST(cuxfer_stager_create(&st, &o));
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, out, pat, 100, after),
           "h2d into pageable memory refused");
    contains(cuxfer_last_reason(), "is pageable host memory, not device memory",
             "the reason names the kind");
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, dev, dev + MIB, 100, after),
           "h2d from device memory refused");
    contains(cuxfer_last_reason(), "src_pageable", "the reason names the source");
    is_int(cudaErrorInvalidValue, cuxfer_stage_d2h(&st, out, pat, 100, after),
           "d2h from pageable memory refused");
    is_int(cudaErrorInvalidValue, cuxfer_stage_d2h(&st, dev, dev + MIB, 100, after),
           "d2h into device memory refused");
    GPU_MUST(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    is_int(cudaErrorStreamCaptureUnsupported, cuxfer_stage_h2d(&st, dev, pat, 100, cap),
           "an `after` stream being captured is refused");
    GPU_OK(cudaStreamEndCapture(cap, &graph), "the capture is intact");
    if (graph)
        GPU_MUST(cudaGraphDestroy(graph));
    GPU_MUST(cudaStreamDestroy(cap));
    legacy_beside_capture(&st);
    is_int(cudaSuccess, cuxfer_stager_query(&st), "refused calls started no job");
    is_int(cudaSuccess, cudaGetLastError(), "and left no sticky error");
    GPU_OK(cuxfer_stager_destroy(&st), "destroy");
}

/* Copies past the end of a device allocation fail when queued (no fault,
 * the context survives): mid-job in both directions.  The error comes back
 * from wait with the chunk named, or from the next stage call when nobody
 * waited; the stager then works again. */
static void failures(void)
{
    const size_t alloc = 4 * MIB, n = 8 * MIB;
    cuxfer_stager st;
    cuxfer_stager_options o = opts(3, MIB + 12288, 3, CUXFER_STAGE_COPY);
    unsigned char *small = NULL;
    cudaError_t err;
    GPU_MUST(cuxfer_stager_create(&st, &o));
    GPU_MUST(cudaMalloc((void **)&small, alloc));
    GPU_MUST(cudaMemset(small, 0x11, alloc));
    GPU_MUST(cudaDeviceSynchronize());

    GPU_OK(cuxfer_stage_h2d(&st, small, pat, n, after), "an H2D past the allocation starts");
    cuxfer_clear_reason();
    err = cuxfer_stager_wait(&st, 30000);
    ok(err != cudaSuccess && err != cudaErrorNotReady,
       "wait reports the failed copy (%s)", cudaGetErrorName(err));
    contains(cuxfer_last_reason(), "cuxfer_stage_h2d: chunk 3 of 8 (1060864 bytes to ",
             "the reason names the chunk, its size and the direction");
    diag("reason: %s", cuxfer_last_reason());
    is_int(err, cuxfer_stager_wait(&st, 0), "the result stays for other waiters");
    is_int(CUXFER_STAGE_COPY, st.used, "(through the slots)");

    GPU_MUST(cudaMemset(small, 0x11, alloc)); /* the chunks before the failure landed */
    GPU_MUST(cudaDeviceSynchronize());
    memset(out, 0xA5, n);
    GPU_OK(cuxfer_stage_d2h(&st, out, small, n, after), "a D2H past the allocation starts");
    cuxfer_clear_reason();
    err = start_when_free(&st, 1, out, small, alloc);
    ok(err != cudaSuccess && err != cudaErrorNotReady,
       "not waited for, its failure is returned by the next stage call (%s)",
       cudaGetErrorName(err));
    contains(cuxfer_last_reason(),
             "not started: the previous job failed: cuxfer_stage_d2h: chunk 3 of 8 (1060864 "
             "bytes from ", "with the earlier reason: the chunk, its size and the direction");
    ok(all_bytes(out + 3 * (MIB + 12288), n - 3 * (MIB + 12288), 0xA5),
       "nothing from the failed chunk on was written");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error");

    GPU_OK(cuxfer_stage_d2h(&st, out, small, alloc, after), "the next job starts");
    GPU_OK(cuxfer_stager_wait(&st, 30000), "and succeeds");
    ok(all_bytes(out, alloc, 0x11), "with the right data");
    GPU_OK(cuxfer_stager_destroy(&st), "destroy");
    GPU_MUST(cudaFree(small));
}

int main(void)
{
    cuxfer_stager_options o;
    gpu_require(1);
    guard_install(300);
    plan(0);
    pat = (unsigned char *)malloc(TOTAL);
    chk = (unsigned char *)malloc(TOTAL);
    out = (unsigned char *)malloc(TOTAL);
    if (!pat || !chk || !out)
        bail("out of host memory");
    fill_pattern(pat, TOTAL, 77);
    memset(chk, 0, TOTAL);
    memset(out, 0, TOTAL);
    GPU_MUST(cudaMalloc((void **)&dev, TOTAL));
    GPU_MUST(cudaStreamCreateWithFlags(&after, cudaStreamNonBlocking));

    test_sizes();
    baseline();
    test_pinned();
    o = opts(0, 0, 0, CUXFER_STAGE_COPY);
    held("held H2D COPY", &o, 0);
    held("held D2H COPY", &o, 1);
    o = opts(0, 0, 0, CUXFER_STAGE_REGISTER);
    held("held H2D REGISTER", &o, 0);
    held("held D2H REGISTER", &o, 1);
    o = opts(0, 0, 0, CUXFER_STAGE_COPY);
    ordered("ordered COPY", &o);
    o = opts(0, 0, 0, CUXFER_STAGE_REGISTER);
    ordered("ordered REGISTER", &o);
    back_to_back();
    destroy_in_flight();
    refusals();
    failures();

    GPU_MUST(cudaStreamDestroy(after));
    GPU_MUST(cudaFree(dev));
    free(pat);
    free(chk);
    free(out);
    done_testing();
}
