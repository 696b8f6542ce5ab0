/* SPDX-License-Identifier: MIT */
/*
 * foreign-capture.c - a second thread captures a short fork/join
 * graph (an upload on a forked stream, joined, then a download) in
 * cudaStreamCaptureModeGlobal while the main thread runs every family of
 * cuxfer.h: pinned pool (misses and a pending block), planner, stager (a
 * job, and a whole life: create, a registered job, destroy),
 * timers and events, latch and callbacks (cuxfer_on_done too), ring (its
 * slot buffers and fences too), stream pool, pointer classification,
 * allocation, copies (the synchronous ones too), its own graph, many ROIs
 * (the plan's AUTO choice - its kernel where the runtime has it - and a
 * forced host gather).  In Global mode any
 * "unsafe" CUDA call from any thread (cudaEventQuery, cudaHostAlloc,
 * cudaMalloc, a synchronization...) invalidates the capture, so:
 *  - every main-thread call works or refuses cleanly (an error, a reason,
 *    no error left behind);
 *  - the other thread's capture is still active after each family, ends
 *    with cudaSuccess, and its graph replays 3 times byte-exact;
 *  - what the main thread's calls did is byte-exact afterwards.
 * Each family gets a capture of its own, so a failure names its family.
 */
#include "sched-helpers.h"

#define NB ((size_t)1 << 20)
#define ROW 16
#define PH 48
#define PD 32
#define HT 4096
#define POISON 0x5a

/* ---- the capturing thread ------------------------------------------------- */
enum { CMD_NONE, CMD_BEGIN, CMD_END, CMD_QUIT };
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int cmd, done; /* done: the command was carried out */
    cudaStream_t cs, cs2;
    cudaEvent_t fork, join;
    unsigned char *in, *out; /* pinned */
    void *dev;
    unsigned seed;
    cudaError_t err;  /* of the last command */
    char what[200];   /* which step failed */
    int replays_ok;
} T;

static void t_fail(const char *what, cudaError_t err)
{
    if (T.err == cudaSuccess) {
        T.err = err;
        (void)snprintf(T.what, sizeof T.what, "%s -> %s", what, cudaGetErrorName(err));
    }
}
#define T_DO(expr)                                                             \
    do {                                                                       \
        cudaError_t t_err_ = (expr);                                           \
        if (t_err_ != cudaSuccess)                                             \
            t_fail(#expr, t_err_);                                             \
    } while (0)

/* Begin: a Global capture with a fork (cs2 uploads) left open. */
static void t_begin(void)
{
    ++T.seed;
    fill_pattern(T.in, NB, T.seed);
    memset(T.out, POISON, NB);
    T_DO(cudaStreamBeginCapture(T.cs, cudaStreamCaptureModeGlobal));
    T_DO(cudaEventRecord(T.fork, T.cs));
    T_DO(cudaStreamWaitEvent(T.cs2, T.fork, 0));
    T_DO(cudaMemcpyAsync(T.dev, T.in, NB, cudaMemcpyHostToDevice, T.cs2));
}

/* End: join, download, end the capture, replay the graph 3 times. */
static void t_end(void)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaError_t e;
    int i;
    T.replays_ok = 0;
    T_DO(cudaEventRecord(T.join, T.cs2));
    T_DO(cudaStreamWaitEvent(T.cs, T.join, 0));
    T_DO(cudaMemcpyAsync(T.out, T.dev, NB, cudaMemcpyDeviceToHost, T.cs));
    e = cudaStreamEndCapture(T.cs, &g);
    if (e != cudaSuccess) {
        t_fail("cudaStreamEndCapture", e);
        (void)cudaGetLastError();
        if (g)
            (void)cudaGraphDestroy(g);
        return;
    }
    if (T.err != cudaSuccess) {
        (void)cudaGraphDestroy(g);
        return;
    }
    T_DO(cudaGraphInstantiateWithFlags(&x, g, 0));
    for (i = 0; i < 3 && T.err == cudaSuccess; ++i) {
        memset(T.out, POISON, NB);
        T_DO(cudaMemset(T.dev, POISON, NB));
        T_DO(cudaDeviceSynchronize());
        T_DO(cudaGraphLaunch(x, T.cs));
        T_DO(cudaStreamSynchronize(T.cs));
        if (T.err == cudaSuccess && memcmp(T.out, T.in, NB) == 0)
            ++T.replays_ok;
    }
    if (x)
        T_DO(cudaGraphExecDestroy(x));
    T_DO(cudaGraphDestroy(g));
}

static void *capturer(void *arg)
{
    int cmd;
    (void)arg;
    T_DO(cudaSetDevice(0));
    for (;;) {
        pthread_mutex_lock(&T.mu);
        while (T.cmd == CMD_NONE)
            pthread_cond_wait(&T.cv, &T.mu);
        cmd = T.cmd;
        T.cmd = CMD_NONE;
        pthread_mutex_unlock(&T.mu);
        if (cmd == CMD_QUIT)
            return NULL;
        if (cmd == CMD_BEGIN) {
            T.err = cudaSuccess;
            T.what[0] = '\0';
            t_begin();
        } else {
            t_end();
        }
        pthread_mutex_lock(&T.mu);
        T.done = 1;
        pthread_cond_broadcast(&T.cv);
        pthread_mutex_unlock(&T.mu);
    }
}

static void t_command(int cmd)
{
    pthread_mutex_lock(&T.mu);
    T.done = 0;
    T.cmd = cmd;
    pthread_cond_broadcast(&T.cv);
    while (!T.done && cmd != CMD_QUIT)
        pthread_cond_wait(&T.cv, &T.mu);
    pthread_mutex_unlock(&T.mu);
}

/* ---- the main thread's side ----------------------------------------------- */
static const char *family;

static void window_open(const char *name)
{
    family = name;
    t_command(CMD_BEGIN);
    if (T.err != cudaSuccess)
        bail("the capturing thread could not begin: %s", T.what);
}

static void window_close(void)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(T.cs, &st);
    ok(e == cudaSuccess && st == cudaStreamCaptureStatusActive,
       "%s: the other thread's Global capture is still active", family);
    if (e != cudaSuccess || st != cudaStreamCaptureStatusActive)
        diag("  cudaStreamIsCapturing -> %s, status %d", cudaGetErrorName(e), (int)st);
    t_command(CMD_END);
    if (!ok(T.err == cudaSuccess && T.replays_ok == 3,
            "%s: it ends with cudaSuccess and its graph replays 3 times exactly", family))
        diag("  %s; %d exact replays", T.what[0] ? T.what : "ok", T.replays_ok);
    (void)cudaGetLastError();
}

/* A main-thread call inside the window: works, or refuses cleanly.
 * Returns 1 when it worked. */
static int call_ok(cudaError_t err, const char *what)
{
    cudaError_t last;
    char why[CUXFER_REASON_MAX];
    if (err == cudaSuccess) {
        last = cudaGetLastError();
        if (!ok(last == cudaSuccess, "%s: %s works", family, what))
            diag("  ... but left %s behind", cudaGetErrorName(last));
        return 1;
    }
    (void)snprintf(why, sizeof why, "%s", cuxfer_last_reason());
    last = cudaGetLastError();
    if (!ok(why[0] && last == cudaSuccess, "%s: %s refuses %s cleanly", family, what,
            cudaGetErrorName(err)))
        diag("  reason \"%s\", left behind: %s", why, cudaGetErrorName(last));
    else
        diag("  reason: %s", why);
    return 0;
}
#define CALL(expr) (cuxfer_clear_reason(), call_ok((expr), #expr))

static unsigned char *hsrc, *hdst, *ref, *tmp, *pg;
static void *dA, *dB;
static cudaStream_t ms, ms2;

static void CUDART_CB delay_fn(void *arg)
{
    (void)arg;
    sleep_ms(20.0);
}

static void prep(unsigned seed)
{
    fill_pattern(ref, NB, seed);
    memcpy(hsrc, ref, NB);
    memcpy(pg, ref, NB);
    memset(hdst, POISON, NB);
    GPU_MUST(cudaMemset(dA, POISON, NB));
    GPU_MUST(cudaMemcpy(dB, ref, NB, cudaMemcpyHostToDevice));
    GPU_MUST(cudaDeviceSynchronize());
}

static void check_dev(const void *d, const unsigned char *want, const char *what)
{
    GPU_MUST(cudaDeviceSynchronize());
    GPU_MUST(cudaMemcpy(tmp, d, NB, cudaMemcpyDeviceToHost));
    ok(count_diff(tmp, want, NB, what) == 0, "%s: %s exact afterwards", family, what);
}

/* want := poison, then HT rows of ROW bytes of src (pitch sp) at pitch dp. */
static unsigned char *want2d(const unsigned char *src, size_t sp, size_t dp)
{
    static unsigned char *w;
    size_t y;
    if (!w && !(w = (unsigned char *)malloc(NB)))
        bail("out of memory");
    memset(w, POISON, NB);
    for (y = 0; y < HT; ++y)
        memcpy(w + y * dp, src + y * sp, ROW);
    return w;
}

static void fam_pool(void)
{
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block a, b, c;
    cuxfer_pinned_pool_stats st;
    int ga = 0, gb = 0, gc = 0, copied = 0;
    unsigned char *want = (unsigned char *)malloc(NB);
    if (!want)
        bail("out of memory");
    prep(11);
    GPU_MUST(cuxfer_pinned_pool_create(&pool, NULL));
    fill_pattern(want, NB, 12);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    window_open("pinned pool");
    /* keeps the first block's upload pending while the pool is used */
    if (cudaLaunchHostFunc(ms, delay_fn, NULL) != cudaSuccess)
        diag("  cudaLaunchHostFunc -> %s", cudaGetErrorName(cudaGetLastError()));
    if ((ga = CALL(cuxfer_pinned_pool_acquire(&pool, NB, &a)))) { /* a miss */
        memcpy(a.ptr, ref, NB);
        if (CALL(cuxfer_copy_async(dA, a.ptr, NB, ms)))
            copied |= 1;
        ga = !CALL(cuxfer_pinned_pool_release(&pool, &a, ms)); /* pending behind the delay */
    }
    if ((gb = CALL(cuxfer_pinned_pool_acquire(&pool, NB, &b)))) { /* pending: a miss again */
        memcpy(b.ptr, want, NB);
        if (CALL(cuxfer_copy_async(dB, b.ptr, NB, ms)))
            copied |= 2;
        gb = !CALL(cuxfer_pinned_pool_release(&pool, &b, ms));
    }
    gc = CALL(cuxfer_pinned_pool_acquire(&pool, 3000, &c)); /* another class: a miss */
    if (gc)
        gc = !CALL(cuxfer_pinned_pool_release(&pool, &c, ms));
    (void)CALL(cuxfer_pinned_pool_trim(&pool));
    st = cuxfer_pinned_pool_get_stats(&pool);
    if (!ga && !gb && !gc)
        is_int(0, (long long)st.in_use, "pinned pool: nothing in use after the releases");
    window_close();
    GPU_MUST(cudaStreamSynchronize(ms));
    if (copied & 1)
        check_dev(dA, ref, "the pool block's upload");
    if (copied & 2)
        check_dev(dB, want, "the second block's upload");
    if (ga)
        GPU_MUST(cuxfer_pinned_pool_release(&pool, &a, ms));
    if (gb)
        GPU_MUST(cuxfer_pinned_pool_release(&pool, &b, ms));
    if (gc)
        GPU_MUST(cuxfer_pinned_pool_release(&pool, &c, ms));
    GPU_MUST(cudaStreamSynchronize(ms));
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "pinned pool: destroyed afterwards");
    free(want);
}

static void fam_planner(void)
{
    cuxfer_plan2d span, pack;
    cuxfer_view hs, hd, ds, dd;
    int s_ok, p_ok;
    prep(21);
    plan_create(&span, 16384, CUXFER_PLAN_SPAN, 2);
    plan_create(&pack, 16384, CUXFER_PLAN_PACK, 2);
    GPU_MUST(cuxfer_view_wrap(&hs, hsrc, PH, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&hd, hdst, PH, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&dd, dA, PD, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&ds, dB, PD, ROW, HT, 1));
    window_open("planner");
    s_ok = CALL(cuxfer_plan2d_copy_async(&span, &dd, &hs, ms));
    p_ok = CALL(cuxfer_plan2d_copy_async(&pack, &hd, &ds, ms));
    window_close();
    GPU_MUST(cudaStreamSynchronize(ms));
    if (s_ok)
        check_dev(dA, want2d(ref, PH, PD), "SPAN's rows");
    if (p_ok)
        ok(count_diff(hdst, want2d(ref, PD, PH), NB, "PACK") == 0,
           "planner: PACK's rows exact afterwards");
    GPU_OK(cuxfer_plan2d_destroy(&span), "planner: SPAN plan destroyed");
    GPU_OK(cuxfer_plan2d_destroy(&pack), "planner: PACK plan destroyed");
    /* 32-byte rows: PACK with its direct share on a side stream (CUDA
     * 12.5+), twice back to back, so the second copy reads the first's
     * timing events (cudaEventQuery) while the other thread captures. */
    {
        enum { W = 32, P = 48 };
        size_t y;
        int a_ok, b_ok;
        unsigned char *w = (unsigned char *)malloc(NB);
        if (!w)
            bail("out of memory");
        prep(22);
        plan_create(&pack, 16384, CUXFER_PLAN_PACK, 2);
        GPU_MUST(cuxfer_view_wrap(&hd, hdst, P, W, HT, 1));
        GPU_MUST(cuxfer_view_wrap(&ds, dB, W, W, HT, 1));
        window_open("planner, 32-byte rows");
        a_ok = CALL(cuxfer_plan2d_copy_async(&pack, &hd, &ds, ms));
        b_ok = CALL(cuxfer_plan2d_copy_async(&pack, &hd, &ds, ms));
        window_close();
        GPU_MUST(cudaStreamSynchronize(ms));
        memset(w, POISON, NB);
        for (y = 0; y < HT; ++y)
            memcpy(w + y * P, ref + y * W, W);
        if (a_ok && b_ok)
            ok(count_diff(hdst, w, NB, "PACK 32") == 0,
               "planner: PACK's 32-byte rows (direct share) exact afterwards");
        GPU_OK(cuxfer_plan2d_destroy(&pack), "planner: 32-byte PACK plan destroyed");
        free(w);
    }
}

static void fam_stager(void)
{
    cuxfer_stager st;
    cuxfer_stager_options o;
    int started, waited = 0;
    prep(31);
    memset(&o, 0, sizeof o);
    o.slots = 4;
    o.slot_bytes = 65536;
    o.threads = 2;
    GPU_MUST(cuxfer_stager_create(&st, &o));
    window_open("stager");
    started = CALL(cuxfer_stage_h2d(&st, dA, pg, NB, ms));
    if (started)
        waited = CALL(cuxfer_stager_wait(&st, 30000));
    window_close();
    if (started && !waited)
        GPU_MUST(cuxfer_stager_wait(&st, 30000));
    if (waited)
        check_dev(dA, ref, "the staged upload");
    GPU_OK(cuxfer_stager_destroy(&st), "stager: destroyed");
}

/* A stager's whole life inside the window: its slots pinned and freed,
 * and a job staged by registration (the host side pinned and unpinned). */
static void fam_stager_life(void)
{
    cuxfer_stager st;
    cuxfer_stager_options o;
    int made, started = 0, waited = 0;
    prep(37);
    memset(&o, 0, sizeof o);
    o.slots = 2;
    o.slot_bytes = 65536;
    o.threads = 2;
    o.strategy = CUXFER_STAGE_REGISTER;
    window_open("stager created, staging by registration, destroyed");
    made = CALL(cuxfer_stager_create(&st, &o));
    ok(made, "%s: the stager is made while the other thread captures", family);
    if (made) {
        started = CALL(cuxfer_stage_h2d(&st, dA, pg, NB, ms));
        if (started)
            waited = CALL(cuxfer_stager_wait(&st, 30000));
        (void)CALL(cuxfer_stager_destroy(&st));
    }
    window_close();
    if (waited)
        check_dev(dA, ref, "the upload staged by registration");
}

static void fam_timers(void)
{
    cuxfer_timer t;
    cuxfer_event_pool ep;
    float ms_ = -1.0f;
    int made, copied = 0, pool_made;
    prep(41);
    memset(&t, 0, sizeof t);
    window_open("timers and events");
    made = CALL(cuxfer_timer_create(&t));
    if (made && CALL(cuxfer_timer_start(&t, ms))) {
        copied = CALL(cuxfer_copy_async(dA, hsrc, NB, ms));
        if (CALL(cuxfer_timer_stop(&t, ms)) && CALL(cuxfer_timer_ms(&t, CUXFER_WAIT, &ms_)))
            ok(ms_ >= 0.0f && ms_ < 60000.0f, "timers and events: %g ms is plausible",
               (double)ms_);
    }
    if (CALL(cuxfer_stream_wait(ms2, ms)))
        (void)CALL(cuxfer_copy_async(hdst, dA, NB, ms2));
    pool_made = CALL(cuxfer_event_pool_create(&ep, 4));
    if (pool_made) {
        ok(cuxfer_event_pool_next(&ep) != NULL, "timers and events: cuxfer_event_pool_next");
        (void)CALL(cuxfer_event_pool_destroy(&ep));
    }
    window_close();
    GPU_MUST(cudaDeviceSynchronize());
    if (copied)
        check_dev(dA, ref, "the timed upload");
    if (made)
        GPU_OK(cuxfer_timer_destroy(&t), "timers and events: timer destroyed");
}

static int cb_runs;
static void CUDART_CB count_fn(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&cb_runs, 1, __ATOMIC_ACQ_REL);
}

static int done_runs;
static cudaError_t done_status;
static void CUDART_CB status_fn(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    (void)arg;
    done_status = status;
    __atomic_add_fetch(&done_runs, 1, __ATOMIC_ACQ_REL);
}

static void fam_latch(void)
{
    cuxfer_latch l, l2;
    int inited, copied = 0, cb = 0, done = 0;
    prep(51);
    cb_runs = 0;
    done_runs = 0;
    done_status = cudaErrorUnknown;
    window_open("latch and callbacks");
    inited = CALL(cuxfer_latch_init(&l));
    copied = CALL(cuxfer_copy_async(hdst, dB, NB, ms));
    if (inited && CALL(cuxfer_latch_arm(&l, ms)))
        (void)CALL(cuxfer_latch_wait(&l, 10000));
    cb = CALL(cuxfer_on_complete(ms, count_fn, NULL));
    done = CALL(cuxfer_on_done(ms, status_fn, NULL));
    if (CALL(cuxfer_latch_init_on(&l2, 0)))
        (void)CALL(cuxfer_latch_destroy(&l2));
    window_close();
    GPU_MUST(cudaStreamSynchronize(ms));
    if (copied)
        ok(count_diff(hdst, ref, NB, "hdst") == 0, "latch and callbacks: download exact");
    if (cb)
        is_int(1, __atomic_load_n(&cb_runs, __ATOMIC_ACQUIRE),
               "latch and callbacks: the callback ran once");
    if (done)
        ok(__atomic_load_n(&done_runs, __ATOMIC_ACQUIRE) == 1 && done_status == cudaSuccess,
           "latch and callbacks: cuxfer_on_done's callback ran once, given %s",
           cudaGetErrorName(done_status));
    if (inited)
        GPU_OK(cuxfer_latch_destroy(&l), "latch and callbacks: latch destroyed");
}

static void fam_ring(void)
{
    cuxfer_ring r;
    cuxfer_ring_slot *slot = NULL, *again = NULL;
    cuxfer_ring_job job;
    void *h1 = NULL;
    int submitted = 0;
    prep(61);
    GPU_MUST(cuxfer_ring_create(&r, 2, NB, NB, NULL));
    window_open("ring");
    if (CALL(cuxfer_ring_acquire(&r, &slot))) {
        memcpy(slot->host, ref, NB / 2);
        memset(&job, 0, sizeof job);
        job.h2d_bytes = NB / 2;
        job.d2h_bytes = NB / 2;
        job.d2h_host_offset = NB / 2;
        submitted = CALL(cuxfer_ring_submit(&r, slot, &job));
    } else if (slot) {
        (void)cuxfer_ring_release(&r, slot);
    }
    if (CALL(cuxfer_ring_acquire(&r, &again)) || again)
        (void)CALL(cuxfer_ring_release(&r, again));
    (void)CALL(cuxfer_ring_drain(&r));
    (void)CALL(cuxfer_ring_slot_buffers(&r, 1, &h1, NULL));
    if (CALL(cuxfer_ring_wait(&r, ms)))
        (void)CALL(cuxfer_stream_wait_ring(ms, &r));
    window_close();
    GPU_MUST(cuxfer_ring_drain(&r));
    if (submitted)
        ok(count_diff((unsigned char *)slot->host + NB / 2, ref, NB / 2, "ring") == 0,
           "ring: the slot's round trip exact afterwards");
    GPU_OK(cuxfer_ring_destroy(&r), "ring: destroyed");
}

static void fam_classify(void)
{
    void *managed = NULL;
    GPU_MUST(cuxfer_managed_alloc(&managed, 4096, 1, 0));
    window_open("classification");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_memory_kind(hsrc), "classification: pinned");
    is_int(CUXFER_MEMORY_DEVICE, cuxfer_memory_kind(dA), "classification: device");
    is_int(CUXFER_MEMORY_PAGEABLE, cuxfer_memory_kind(pg), "classification: pageable");
    is_int(CUXFER_MEMORY_MANAGED, cuxfer_memory_kind(managed), "classification: managed");
    is_int(1, cuxfer_host_is_pinned(hdst), "classification: cuxfer_host_is_pinned");
    is_int(cudaSuccess, cudaGetLastError(), "classification: no error left behind");
    window_close();
    GPU_MUST(cuxfer_managed_free(managed));
}

static void fam_alloc(void)
{
    void *h = NULL, *m = NULL;
    cuxfer_view v, hv;
    unsigned char *reg = (unsigned char *)malloc(1 << 16);
    int ok_h, ok_v, ok_hv, ok_m, ok_r;
    if (!reg)
        bail("out of memory");
    window_open("allocation");
    ok_h = CALL(cuxfer_host_alloc(&h, 1000, 8, 0));
    ok_v = CALL(cuxfer_view_alloc_device(&v, 100, 50, 4));
    ok_hv = CALL(cuxfer_view_alloc_host(&hv, 100, 50, 4, 0));
    ok_m = CALL(cuxfer_managed_alloc(&m, 1000, 4, 0));
    ok_r = CALL(cuxfer_host_register(reg, 1 << 16, 0));
    if (ok_h)
        (void)CALL(cuxfer_host_free(h));
    if (ok_v)
        (void)CALL(cuxfer_view_free(&v));
    if (ok_hv)
        (void)CALL(cuxfer_view_free(&hv));
    if (ok_m)
        (void)CALL(cuxfer_managed_free(m));
    if (ok_r)
        (void)CALL(cuxfer_host_unregister(reg));
    window_close();
    free(reg);
}

static void fam_copies(void)
{
    cuxfer_view hv, dv;
    void *managed = NULL;
    int a, b, p = 0, sy;
    prep(71);
    GPU_MUST(cuxfer_managed_alloc(&managed, NB, 1, 0));
    memcpy(managed, ref, NB);
    GPU_MUST(cuxfer_view_wrap(&hv, hdst, PH, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&dv, dB, PD, ROW, HT, 1));
    memset(pg, POISON, NB); /* the synchronous round trip's destination */
    window_open("copies");
    a = CALL(cuxfer_copy_async(dA, hsrc, NB, ms));
    b = CALL(cuxfer_copy2d_async(&hv, &dv, ms));
    if (cuxfer_managed_concurrent(0))
        p = CALL(cuxfer_prefetch(managed, NB, 0, ms));
    sy = CALL(cuxfer_copy(dB, hsrc, NB)) && CALL(cuxfer_copy(pg, dB, NB));
    window_close();
    GPU_MUST(cudaStreamSynchronize(ms));
    if (a)
        check_dev(dA, ref, "the 1D upload");
    if (b)
        ok(count_diff(hdst, want2d(ref, PD, PH), NB, "2D") == 0,
           "copies: the 2D download exact afterwards");
    if (p)
        ok(count_diff((unsigned char *)managed, ref, NB, "managed") == 0,
           "copies: managed memory intact after the prefetch");
    if (sy)
        ok(count_diff(pg, ref, NB, "synchronous") == 0,
           "copies: the synchronous round trip (cuxfer_copy) exact");
    GPU_MUST(cuxfer_managed_free(managed));
}

static void fam_stream_pool(void)
{
    cuxfer_stream_pool p;
    cudaStream_t s = NULL;
    int made;
    window_open("stream pool");
    made = CALL(cuxfer_stream_pool_create(&p, 2, 0, 0));
    if (made) {
        (void)CALL(cuxfer_stream_pool_next(&p, &s));
        if (CALL(cuxfer_stream_pool_acquire(&p, CUXFER_WAIT, &s)))
            (void)CALL(cuxfer_stream_pool_release(&p, s));
        (void)CALL(cuxfer_stream_pool_sync(&p));
    }
    window_close();
    if (made)
        GPU_OK(cuxfer_stream_pool_destroy(&p), "stream pool: destroyed");
}

/* The main thread captures a graph of its own (ThreadLocal, through
 * cuxfer_graph_begin) while the other thread's Global capture runs. */
static void fam_graph(void)
{
    cuxfer_graph g;
    int begun, ended = 0, launched = 0;
    prep(81);
    memset(&g, 0, sizeof g);
    window_open("own graph");
    begun = CALL(cuxfer_graph_begin(ms));
    if (begun) {
        (void)CALL(cuxfer_copy_async(dA, hsrc, NB, ms));
        ended = CALL(cuxfer_graph_end(&g, ms));
    }
    if (ended)
        launched = CALL(cuxfer_graph_launch(&g, ms));
    window_close();
    GPU_MUST(cudaStreamSynchronize(ms));
    if (launched)
        check_dev(dA, ref, "the main thread's graph");
    GPU_OK(cuxfer_graph_destroy(&g), "own graph: destroyed");
}

/* Many ROIs: 256 tiles of 16x16 covering the pinned view, up to a dense
 * buffer and back, with the plan's AUTO choice (KERNEL on CUDA 12.5+,
 * GATHER before) and with GATHER forced; plans made before the window
 * (their pinned staging and code are set-up, not capture-time, work). */
static void fam_rois(int strategy, const char *name)
{
    static cuxfer_roi r[HT / 16];
    cuxfer_rois plan;
    cuxfer_rois_options o;
    cuxfer_view hs, hd, dd, ds;
    size_t i, n = HT / 16;
    int up, down;
    prep(91u + (unsigned)strategy);
    for (i = 0; i < n; ++i) {
        r[i].x = 0;
        r[i].y = i * 16;
        r[i].width = r[i].height = 16;
    }
    memset(&o, 0, sizeof o);
    o.strategy = strategy;
    o.threads = 2;
    GPU_MUST(cuxfer_rois_create(&plan, &o));
    GPU_MUST(cuxfer_view_wrap(&hs, hsrc, PH, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&hd, hdst, PH, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&dd, dA, ROW, ROW, HT, 1));
    GPU_MUST(cuxfer_view_wrap(&ds, dB, ROW, ROW, HT, 1));
    window_open(name);
    up = CALL(cuxfer_rois_copy_async(&plan, CUXFER_ROIS_H2D, &hs, r, n, &dd, ms));
    down = CALL(cuxfer_rois_copy_async(&plan, CUXFER_ROIS_D2H, &hd, r, n, &ds, ms));
    window_close();
    GPU_MUST(cudaStreamSynchronize(ms));
    if (up)
        check_dev(dA, want2d(ref, PH, ROW), "the tiles uploaded");
    if (down)
        ok(count_diff(hdst, want2d(ref, ROW, PH), NB, "tiles down") == 0,
           "%s: the tiles downloaded exact afterwards, gaps kept", name);
    GPU_OK(cuxfer_rois_destroy(&plan), "%s: plan destroyed", name);
}

int main(void)
{
    pthread_t th;
    gpu_require(1);
    guard_install(600);
    plan(0);
    GPU_MUST(cudaSetDevice(0));
    pthread_mutex_init(&T.mu, NULL);
    pthread_cond_init(&T.cv, NULL);
    GPU_MUST(cudaStreamCreateWithFlags(&T.cs, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamCreateWithFlags(&T.cs2, cudaStreamNonBlocking));
    GPU_MUST(cudaEventCreateWithFlags(&T.fork, cudaEventDisableTiming));
    GPU_MUST(cudaEventCreateWithFlags(&T.join, cudaEventDisableTiming));
    GPU_MUST(cudaHostAlloc((void **)&T.in, NB, 0));
    GPU_MUST(cudaHostAlloc((void **)&T.out, NB, 0));
    GPU_MUST(cudaMalloc(&T.dev, NB));
    GPU_MUST(cuxfer_host_alloc((void **)&hsrc, NB, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&hdst, NB, 1, 0));
    GPU_MUST(cudaMalloc(&dA, NB));
    GPU_MUST(cudaMalloc(&dB, NB));
    GPU_MUST(cudaStreamCreateWithFlags(&ms, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamCreateWithFlags(&ms2, cudaStreamNonBlocking));
    ref = (unsigned char *)malloc(NB);
    tmp = (unsigned char *)malloc(NB);
    pg = (unsigned char *)malloc(NB);
    if (!ref || !tmp || !pg)
        bail("out of memory");
    if (pthread_create(&th, NULL, capturer, NULL) != 0)
        bail("pthread_create");

    fam_pool();
    fam_planner();
    fam_stager();
    fam_stager_life();
    fam_timers();
    fam_latch();
    fam_ring();
    fam_classify();
    fam_alloc();
    fam_copies();
    fam_stream_pool();
    fam_graph();
    fam_rois(CUXFER_ROIS_AUTO, "many ROIs (AUTO)");
    fam_rois(CUXFER_ROIS_GATHER, "many ROIs (GATHER)");

    t_command(CMD_QUIT);
    pthread_join(th, NULL);
    GPU_MUST(cudaDeviceSynchronize());
    GPU_MUST(cudaStreamDestroy(ms));
    GPU_MUST(cudaStreamDestroy(ms2));
    GPU_MUST(cudaStreamDestroy(T.cs));
    GPU_MUST(cudaStreamDestroy(T.cs2));
    GPU_MUST(cudaEventDestroy(T.fork));
    GPU_MUST(cudaEventDestroy(T.join));
    GPU_MUST(cudaFreeHost(T.in));
    GPU_MUST(cudaFreeHost(T.out));
    GPU_MUST(cudaFree(T.dev));
    GPU_MUST(cudaFree(dA));
    GPU_MUST(cudaFree(dB));
    GPU_MUST(cuxfer_host_free(hsrc));
    GPU_MUST(cuxfer_host_free(hdst));
    free(ref);
    free(tmp);
    free(pg);
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind at the end");
    done_testing();
}
