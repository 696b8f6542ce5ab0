/* SPDX-License-Identifier: MIT */
/* Completion hand-off: cuxfer_on_complete runs its function after the
 * queued copies (the data is visible in it), in order; cuxfer_latch hands
 * 200 frames of copies from a producer thread to a consumer thread; a timed
 * wait on a held stream returns cudaErrorNotReady within its timeout; 8
 * waiting threads are all released by one signal; a latch armed inside a
 * graph capture signals every replay (each launch counted with
 * cuxfer_latch_expect), and not before the replay ran; a failed arm is
 * reported by the waits until a later arm succeeds, then waits succeed
 * again (it does not poison the latch), and an expected signal whose arm
 * failed does not leave a waiter hanging; signals declared with
 * cuxfer_latch_expect before any arm hold a waiter back until producers
 * armed them and they fired. */
#include "sched-helpers.h"
#include <pthread.h>

static cudaStream_t make_stream(void)
{
    cudaStream_t s;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

/* --- cuxfer_on_complete -------------------------------------------------- */

struct seen {
    const unsigned char *dst, *want;
    size_t n;
    int data_ok;   /* written by the first function */
    int order[3];  /* ids in the order the functions ran */
    int calls;
    int done;      /* set by the last function */
};

struct call {
    struct seen *seen;
    int id;
};

/* No CUDA call here: look at the bytes, record, return. */
static void CUDART_CB record_call(void *arg)
{
    struct call *c = (struct call *)arg;
    struct seen *sn = c->seen;
    if (c->id == 1)
        sn->data_ok = memcmp(sn->dst, sn->want, sn->n) == 0;
    if (sn->calls < 3)
        sn->order[sn->calls] = c->id;
    ++sn->calls;
    if (c->id == 3)
        __atomic_store_n(&sn->done, 1, __ATOMIC_RELEASE);
}

static void test_on_complete(void)
{
    enum { BYTES = 8 << 20 };
    cudaStream_t s = make_stream();
    unsigned char *src = NULL, *dst = NULL, *d = NULL;
    struct seen sn;
    struct call c[3];
    cudaError_t err;
    int i;

    copy_bufs_alloc(&src, &dst, &d, BYTES);
    fill_pattern(src, BYTES, 21);
    memset(dst, 0xA5, BYTES);
    memset(&sn, 0, sizeof sn);
    sn.dst = dst;
    sn.want = src;
    sn.n = BYTES;
    for (i = 0; i < 3; ++i) {
        c[i].seen = &sn;
        c[i].id = i + 1;
    }
    err = cuxfer_on_complete(s, NULL, &sn);
    is_int(cudaErrorInvalidValue, err, "cuxfer_on_complete with a NULL function refused");

    GPU_OK(cudaMemcpyAsync(d, src, BYTES, cudaMemcpyHostToDevice, s), "8 MiB H2D queued");
    GPU_OK(cudaMemcpyAsync(dst, d, BYTES, cudaMemcpyDeviceToHost, s), "8 MiB D2H queued");
    GPU_OK(cuxfer_on_complete(s, record_call, &c[0]), "on_complete 1 queued");
    GPU_OK(cuxfer_on_complete(s, record_call, &c[1]), "on_complete 2 queued");
    GPU_OK(cuxfer_on_complete(s, record_call, &c[2]), "on_complete 3 queued");
    if (!ok(wait_flag(&sn.done, 10000), "the functions ran (10 s bound)"))
        bail("cuxfer_on_complete functions never ran");
    ok(sn.data_ok, "the first function saw the copied bytes: it ran after the copies");
    is_int(3, sn.calls, "three calls");
    ok(sn.order[0] == 1 && sn.order[1] == 2 && sn.order[2] == 3,
       "in the order queued (%d %d %d)", sn.order[0], sn.order[1], sn.order[2]);
    GPU_OK(cudaStreamSynchronize(s), "stream completes");

    GPU_MUST(cudaStreamDestroy(s));
    copy_bufs_free(src, dst, d);
}

/* --- latch basics and timeouts -------------------------------------------- */

static void test_latch_basics(void)
{
    cuxfer_latch l;
    cudaStream_t s = make_stream();
    gate g;
    double t0, el;
    cudaError_t err;
    int i;

    DESTROY_IS_SAFE(l, cuxfer_latch_destroy, "latch");
    err = cuxfer_latch_arm(&l, s);
    is_int(cudaErrorInvalidValue, err, "arm of a latch never initialized refused");
    err = cuxfer_latch_wait(&l, 0);
    is_int(cudaErrorInvalidValue, err, "wait on a latch never initialized refused");
    err = cuxfer_latch_expect(&l, 1);
    is_int(cudaErrorInvalidValue, err, "expect on a latch never initialized refused");

    GPU_OK(cuxfer_latch_init(&l), "init");
    t0 = now_ms();
    GPU_OK(cuxfer_latch_wait(&l, 1000), "wait on a latch never armed returns at once");
    ok(now_ms() - t0 < 500.0, "without waiting");

    GPU_OK(gate_hold(&g, s), "hold the stream");
    GPU_OK(cuxfer_latch_arm(&l, s), "arm behind the gate");
    cuxfer_clear_reason();
    t0 = now_ms();
    err = cuxfer_latch_wait(&l, 200);
    el = now_ms() - t0;
    is_int(cudaErrorNotReady, err, "a 200 ms wait on a held stream: cudaErrorNotReady");
    ok(el >= 190.0 && el < 2200.0, "returned after the timeout, not long after (%.1f ms)", el);
    contains(cuxfer_last_reason(), "200 ms", "the reason names the timeout");
    t0 = now_ms();
    err = cuxfer_latch_wait(&l, 0);
    is_int(cudaErrorNotReady, err, "a 0 ms wait on a held stream: cudaErrorNotReady");
    ok(now_ms() - t0 < 1000.0, "promptly");
    gate_open(&g);
    GPU_OK(cuxfer_latch_wait(&l, 10000), "after release the wait succeeds");
    is_int(0, g.timed_out, "the gate was opened by the test");

    /* Several signals: the wait covers all of them. */
    GPU_OK(gate_hold(&g, s), "hold the stream again");
    err = cudaSuccess;
    for (i = 0; i < 3 && err == cudaSuccess; ++i)
        err = cuxfer_latch_arm(&l, s);
    is_int(cudaSuccess, err, "arm 3 times");
    err = cuxfer_latch_wait(&l, 50);
    is_int(cudaErrorNotReady, err, "not signalled while held");
    gate_open(&g);
    GPU_OK(cuxfer_latch_wait(&l, 10000), "all 3 signals delivered after release");
    GPU_OK(cudaStreamSynchronize(s), "stream completes");
    GPU_OK(cuxfer_latch_destroy(&l), "destroy");
    ok(l.ready == 0, "destroy zeroes the latch");
    GPU_MUST(cudaStreamDestroy(s));
}

/* --- 8 waiters ----------------------------------------------------------- */

struct latch_waiter {
    cuxfer_latch *l;
    const int *released;
    cudaError_t err;
    int early; /* returned before the gate was opened */
    int done;
};

static void *wait_latch(void *arg)
{
    struct latch_waiter *w = (struct latch_waiter *)arg;
    w->err = cuxfer_latch_wait(w->l, 10000);
    w->early = !__atomic_load_n(w->released, __ATOMIC_ACQUIRE);
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_many_waiters(void)
{
    enum { W = 8 };
    cuxfer_latch l;
    cudaStream_t s = make_stream();
    struct latch_waiter w[W];
    pthread_t th[W];
    gate g;
    int released = 0, i, any_done = 0, all_done, all_ok = 1, early = 0;
    double t0;

    GPU_MUST(cuxfer_latch_init(&l));
    GPU_OK(gate_hold(&g, s), "hold the stream");
    GPU_OK(cuxfer_latch_arm(&l, s), "arm");
    for (i = 0; i < W; ++i) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].l = &l;
        w[i].released = &released;
        w[i].err = cudaErrorUnknown;
        start_thread(&th[i], wait_latch, &w[i]);
    }
    sleep_ms(150);
    for (i = 0; i < W; ++i)
        any_done |= __atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE);
    ok(!any_done, "8 threads wait while the stream is held (150 ms)");
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    gate_open(&g);
    t0 = now_ms();
    do {
        all_done = 1;
        for (i = 0; i < W; ++i)
            all_done &= __atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE);
        if (!all_done)
            sleep_ms(1);
    } while (!all_done && now_ms() - t0 < 12000.0);
    if (!ok(all_done, "all 8 waiters return after the signal (12 s bound)"))
        bail("latch waiters stuck");
    for (i = 0; i < W; ++i) {
        pthread_join(th[i], NULL);
        if (w[i].err != cudaSuccess) {
            diag("  waiter %d: %s", i, cudaGetErrorName(w[i].err));
            all_ok = 0;
        }
        early += w[i].early;
    }
    ok(all_ok, "all 8 waiters got cudaSuccess");
    is_int(0, early, "none returned before the stream was released");
    GPU_OK(cudaStreamSynchronize(s), "stream completes");
    GPU_MUST(cuxfer_latch_destroy(&l));
    GPU_MUST(cudaStreamDestroy(s));
}

/* --- producer / consumer, 200 frames -------------------------------------- */

enum { FRAMES = 200, FRAME_MAX = 256 << 10 };

struct handoff {
    cuxfer_latch latch;
    cudaStream_t s;
    unsigned char *src[2], *dst[2], *dev[2];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int queued;   /* frames armed */
    int consumed; /* frames checked */
    int stop;     /* a side gave up */
    cudaError_t producer_err, consumer_err;
    int bad_frames;
    int producer_done, consumer_done;
};

static size_t frame_bytes(int f)
{
    return 4096 + ((size_t)f * 40503u) % (FRAME_MAX - 4096);
}

/* Wait on h->cv until pred holds; 0 on timeout or stop. */
static int wait_until(struct handoff *h, int (*pred)(struct handoff *, int), int f)
{
    struct timespec until;
    int okay = 1;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&h->mu);
    while (!pred(h, f) && !h->stop)
        if (pthread_cond_timedwait(&h->cv, &h->mu, &until) != 0) {
            okay = pred(h, f);
            break;
        }
    if (h->stop)
        okay = 0;
    pthread_mutex_unlock(&h->mu);
    return okay;
}

static int buffer_free(struct handoff *h, int f) { return h->consumed >= f - 1; }
static int frame_queued(struct handoff *h, int f) { return h->queued > f; }

/* Set *field (queued, consumed or stop) to v under h->mu and wake the
 * other side. */
static void publish(struct handoff *h, int *field, int v)
{
    pthread_mutex_lock(&h->mu);
    *field = v;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void give_up(struct handoff *h) { publish(h, &h->stop, 1); }

static void *producer(void *arg)
{
    struct handoff *h = (struct handoff *)arg;
    int f;
    cudaError_t err = cudaSuccess;
    for (f = 0; f < FRAMES && err == cudaSuccess; ++f) {
        int b = f & 1;
        size_t n = frame_bytes(f);
        if (!wait_until(h, buffer_free, f)) {
            err = cudaErrorTimeout;
            break;
        }
        fill_pattern(h->src[b], n, 1000u + (unsigned)f);
        memset(h->dst[b], 0xA5, FRAME_MAX);
        err = cudaMemcpyAsync(h->dev[b], h->src[b], n, cudaMemcpyHostToDevice, h->s);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(h->dst[b], h->dev[b], n, cudaMemcpyDeviceToHost, h->s);
        if (err == cudaSuccess)
            err = cuxfer_latch_arm(&h->latch, h->s);
        if (err == cudaSuccess)
            publish(h, &h->queued, f + 1);
    }
    h->producer_err = err;
    if (err != cudaSuccess)
        give_up(h);
    __atomic_store_n(&h->producer_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *consumer(void *arg)
{
    struct handoff *h = (struct handoff *)arg;
    unsigned char *want = (unsigned char *)malloc(FRAME_MAX);
    cudaError_t err = cudaSuccess;
    int f;
    if (!want)
        bail("out of memory");
    for (f = 0; f < FRAMES; ++f) {
        int b = f & 1;
        size_t n = frame_bytes(f);
        if (!wait_until(h, frame_queued, f)) {
            err = cudaErrorTimeout;
            break;
        }
        err = cuxfer_latch_wait(&h->latch, 5000);
        if (err != cudaSuccess)
            break;
        fill_pattern(want, n, 1000u + (unsigned)f);
        if (memcmp(h->dst[b], want, n) != 0 || !all_bytes(h->dst[b] + n, FRAME_MAX - n, 0xA5)) {
            if (h->bad_frames++ < 3)
                diag("  frame %d (%zu bytes) differs", f, n);
        }
        publish(h, &h->consumed, f + 1);
    }
    h->consumer_err = err;
    if (err != cudaSuccess)
        give_up(h);
    free(want);
    __atomic_store_n(&h->consumer_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_producer_consumer(void)
{
    struct handoff h;
    pthread_t tp, tc;
    int b, both;
    double t0;

    memset(&h, 0, sizeof h);
    h.s = make_stream();
    for (b = 0; b < 2; ++b) {
        GPU_MUST(cudaMallocHost((void **)&h.src[b], FRAME_MAX));
        GPU_MUST(cudaMallocHost((void **)&h.dst[b], FRAME_MAX));
        GPU_MUST(cudaMalloc((void **)&h.dev[b], FRAME_MAX));
    }
    GPU_MUST(cuxfer_latch_init(&h.latch));
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    t0 = now_ms();
    start_thread(&tp, producer, &h);
    start_thread(&tc, consumer, &h);
    both = 0;
    while (now_ms() - t0 < 30000.0) {
        if (__atomic_load_n(&h.producer_done, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&h.consumer_done, __ATOMIC_ACQUIRE)) {
            both = 1;
            break;
        }
        sleep_ms(2);
    }
    if (!ok(both, "producer and consumer finish 200 frames (30 s bound)"))
        bail("producer/consumer stuck");
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    diag("200 frames handed over in %.1f ms", now_ms() - t0);
    is_int(cudaSuccess, h.producer_err, "the producer queued every frame (%s)",
           cudaGetErrorName(h.producer_err));
    is_int(cudaSuccess, h.consumer_err, "every latch wait succeeded (%s)",
           cudaGetErrorName(h.consumer_err));
    is_int(FRAMES, h.consumed, "the consumer checked all 200 frames");
    is_int(0, h.bad_frames, "every frame arrived byte for byte, nothing past its end");
    GPU_OK(cudaStreamSynchronize(h.s), "stream completes");
    GPU_OK(cuxfer_latch_destroy(&h.latch), "destroy the latch");
    pthread_mutex_destroy(&h.mu);
    pthread_cond_destroy(&h.cv);
    for (b = 0; b < 2; ++b) {
        GPU_MUST(cudaFreeHost(h.src[b]));
        GPU_MUST(cudaFreeHost(h.dst[b]));
        GPU_MUST(cudaFree(h.dev[b]));
    }
    GPU_MUST(cudaStreamDestroy(h.s));
}

/* --- inside graph capture ------------------------------------------------- */

static void test_graph_capture(void)
{
    enum { BYTES = 1 << 20, REPLAYS = 4 };
    cuxfer_latch l;
    cuxfer_graph g;
    cudaStream_t s = make_stream();
    unsigned char *src = NULL, *dst = NULL, *d = NULL;
    gate gt;
    double t0;
    cudaError_t err;
    int r;

    copy_bufs_alloc(&src, &dst, &d, BYTES);
    GPU_MUST(cuxfer_latch_init(&l));
    memset(&g, 0, sizeof g);

    GPU_OK(cuxfer_graph_begin(s), "begin capture");
    ok(cuxfer_stream_is_capturing(s), "the stream is capturing");
    GPU_OK(cudaMemcpyAsync(d, src, BYTES, cudaMemcpyHostToDevice, s), "capture H2D");
    GPU_OK(cudaMemcpyAsync(dst, d, BYTES, cudaMemcpyDeviceToHost, s), "capture D2H");
    GPU_OK(cuxfer_latch_arm(&l, s), "arm the latch inside the capture");
    GPU_OK(cuxfer_graph_end(&g, s), "end capture and instantiate");
    ok(!cuxfer_stream_is_capturing(s), "the stream no longer captures");
    t0 = now_ms();
    GPU_OK(cuxfer_latch_wait(&l, 1000), "arming inside the capture counted nothing: "
           "a wait before any launch returns");
    ok(now_ms() - t0 < 500.0, "at once");

    for (r = 0; r < REPLAYS; ++r) {
        fill_pattern(src, BYTES, 300u + (unsigned)r);
        memset(dst, 0xA5, BYTES);
        if (r > 0)
            GPU_OK(gate_hold(&gt, s), "replay %d: hold the stream before the launch", r + 1);
        GPU_OK(cuxfer_graph_launch(&g, s), "replay %d: launch", r + 1);
        GPU_OK(cuxfer_latch_expect(&l, 1), "replay %d: expect its one signal", r + 1);
        if (r > 0) {
            err = cuxfer_latch_wait(&l, 200);
            is_int(cudaErrorNotReady, err,
                   "replay %d: while the replay is held, the latch is not signalled", r + 1);
            ok(all_bytes(dst, BYTES, 0xA5), "replay %d: nothing copied yet", r + 1);
            gate_open(&gt);
        }
        err = cuxfer_latch_wait(&l, 10000);
        is_int(cudaSuccess, err, "replay %d: the latch signals", r + 1);
        ok(count_diff(dst, src, BYTES, "latch") == 0,
           "replay %d: when the latch returns, the replay's data is there", r + 1);
        GPU_OK(cudaStreamSynchronize(s), "replay %d: stream completes", r + 1);
        ok(count_diff(dst, src, BYTES, "sync") == 0, "replay %d: data byte-exact after sync",
           r + 1);
        if (r > 0)
            is_int(0, gt.timed_out, "replay %d: the gate was opened by the test", r + 1);
    }
    GPU_OK(cuxfer_graph_destroy(&g), "destroy the graph");
    GPU_OK(cuxfer_latch_destroy(&l), "destroy the latch");
    GPU_MUST(cudaStreamDestroy(s));
    copy_bufs_free(src, dst, d);
}

/* --- a failed arm does not poison the latch -------------------------------- */

static void test_failed_arm(void)
{
    cuxfer_latch l;
    cuxfer_graph g;
    cudaStream_t s = make_stream(), blocking;
    unsigned char *h = NULL, *d = NULL;
    double t0;
    cudaError_t err;

    GPU_MUST(cudaStreamCreate(&blocking)); /* blocking: syncs with the legacy stream */
    GPU_MUST(cudaMallocHost((void **)&h, 4096));
    GPU_MUST(cudaMalloc((void **)&d, 4096));
    GPU_MUST(cuxfer_latch_init(&l));
    memset(&g, 0, sizeof g);

    /* Any use of the legacy stream while a blocking stream is captured
     * would invalidate that capture: the arm must refuse it untouched. */
    GPU_OK(cuxfer_graph_begin(blocking), "capture a blocking stream");
    GPU_OK(cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, blocking), "a captured copy");
    cuxfer_clear_reason();
    err = cuxfer_latch_arm(&l, cudaStreamLegacy);
    is_int(cudaErrorStreamCaptureImplicit, err,
           "arm on the legacy stream during that capture refused (%s)", cudaGetErrorName(err));
    contains(cuxfer_last_reason(), "cuxfer_latch_arm", "with a reason");
    ok(cuxfer_stream_is_capturing(blocking), "the capture is still going");
    GPU_OK(cuxfer_graph_end(&g, blocking), "and ends valid: the refusal did not invalidate it");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy that graph");

    t0 = now_ms();
    err = cuxfer_latch_wait(&l, 5000);
    is_int(cudaErrorStreamCaptureImplicit, err, "the next wait reports the failed arm");
    ok(now_ms() - t0 < 1000.0, "at once: nothing was queued by the failed arm");
    err = cuxfer_latch_wait(&l, 0);
    is_int(cudaErrorStreamCaptureImplicit, err, "so does any wait before a new arm succeeds");

    GPU_OK(cuxfer_latch_arm(&l, s), "a later arm succeeds");
    GPU_OK(cuxfer_latch_wait(&l, 10000), "and once it fired, the wait succeeds: no poison");
    GPU_OK(cuxfer_latch_arm(&l, s), "arm again");
    GPU_OK(cuxfer_latch_wait(&l, 10000), "wait again: success");

    /* A failed arm that had a declared signal gives it up: no hang. */
    GPU_OK(cuxfer_latch_expect(&l, 1), "declare one signal");
    GPU_OK(cuxfer_graph_begin(blocking), "capture the blocking stream again");
    err = cuxfer_latch_arm(&l, cudaStreamLegacy);
    is_int(cudaErrorStreamCaptureImplicit, err, "its arm fails");
    GPU_OK(cuxfer_graph_end(&g, blocking), "the capture ends valid");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy that graph");
    t0 = now_ms();
    err = cuxfer_latch_wait(&l, 5000);
    is_int(cudaErrorStreamCaptureImplicit, err,
           "the wait for the declared signal returns the arm's error");
    ok(now_ms() - t0 < 1000.0, "at once, instead of waiting for a signal never queued");
    GPU_OK(cuxfer_latch_expect(&l, 1), "declare another");
    GPU_OK(cuxfer_latch_arm(&l, s), "and arm it");
    GPU_OK(cuxfer_latch_wait(&l, 10000), "that wait succeeds");
    GPU_OK(cudaStreamSynchronize(s), "stream completes");
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");

    GPU_OK(cuxfer_latch_destroy(&l), "destroy");
    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaStreamDestroy(blocking));
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(h));
}

/* --- signals declared before any arm -------------------------------------- */

enum { EXP_BYTES = 2 << 20, EXP_N = 3 };

struct late_producer {
    cuxfer_latch *l;
    cudaStream_t s;
    unsigned char *src[EXP_N], *dst[EXP_N], *dev;
    cudaError_t err;
    int arms;
};

static void *arm_late(void *arg)
{
    struct late_producer *p = (struct late_producer *)arg;
    cudaError_t err = cudaSuccess;
    int i;
    sleep_ms(200); /* the waiter is already waiting */
    for (i = 0; i < EXP_N && err == cudaSuccess; ++i) {
        fill_pattern(p->src[i], EXP_BYTES, 500u + (unsigned)i);
        err = cudaMemcpyAsync(p->dev, p->src[i], EXP_BYTES, cudaMemcpyHostToDevice, p->s);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(p->dst[i], p->dev, EXP_BYTES, cudaMemcpyDeviceToHost, p->s);
        if (err == cudaSuccess)
            err = cuxfer_latch_arm(p->l, p->s);
        if (err == cudaSuccess)
            __atomic_add_fetch(&p->arms, 1, __ATOMIC_RELEASE);
    }
    p->err = err;
    return NULL;
}

static void test_expect_before_arm(void)
{
    cuxfer_latch l;
    struct late_producer p;
    unsigned char *want;
    pthread_t th;
    double t0, el;
    cudaError_t err;
    int i, bad = 0;

    memset(&p, 0, sizeof p);
    want = (unsigned char *)malloc(EXP_BYTES);
    if (!want)
        bail("out of memory");
    p.s = make_stream();
    p.l = &l;
    for (i = 0; i < EXP_N; ++i) {
        GPU_MUST(cudaMallocHost((void **)&p.src[i], EXP_BYTES));
        GPU_MUST(cudaMallocHost((void **)&p.dst[i], EXP_BYTES));
        memset(p.dst[i], 0xA5, EXP_BYTES);
    }
    GPU_MUST(cudaMalloc((void **)&p.dev, EXP_BYTES));
    GPU_MUST(cuxfer_latch_init(&l));
    GPU_OK(cuxfer_latch_expect(&l, EXP_N), "declare %d signals before any arm", EXP_N);
    err = cuxfer_latch_wait(&l, 50);
    is_int(cudaErrorNotReady, err, "a wait before any arm does not pass (50 ms)");
    start_thread(&th, arm_late, &p);
    t0 = now_ms();
    err = cuxfer_latch_wait(&l, 10000);
    el = now_ms() - t0;
    is_int(cudaSuccess, err, "the wait returns once the %d declared signals fired", EXP_N);
    ok(el >= 150.0, "not before the producer armed them (%.1f ms)", el);
    pthread_join(th, NULL);
    is_int(cudaSuccess, p.err, "the producer's calls succeeded (%s)", cudaGetErrorName(p.err));
    is_int(EXP_N, p.arms, "%d arms", EXP_N);
    /* dst[i] was written before signal i fired; the wait covered all. */
    for (i = 0; i < EXP_N; ++i) {
        fill_pattern(want, EXP_BYTES, 500u + (unsigned)i);
        if (count_diff(p.dst[i], want, EXP_BYTES, "declared signal") != 0)
            ++bad;
    }
    is_int(0, bad, "when the wait returned, all %d downloads were there byte for byte", EXP_N);
    t0 = now_ms();
    GPU_OK(cuxfer_latch_wait(&l, 1000), "the arms took the declared slots: nothing extra to wait for");
    ok(now_ms() - t0 < 500.0, "at once");
    GPU_OK(cudaStreamSynchronize(p.s), "stream completes");
    GPU_OK(cuxfer_latch_destroy(&l), "destroy");
    for (i = 0; i < EXP_N; ++i) {
        GPU_MUST(cudaFreeHost(p.src[i]));
        GPU_MUST(cudaFreeHost(p.dst[i]));
    }
    GPU_MUST(cudaFree(p.dev));
    GPU_MUST(cudaStreamDestroy(p.s));
    free(want);
}

int main(void)
{
    gpu_require(1);
    guard_install(90);
    plan(0);
    test_on_complete();
    test_latch_basics();
    test_many_waiters();
    test_producer_consumer();
    test_graph_capture();
    test_failed_arm();
    test_expect_before_arm();
    done_testing();
}
