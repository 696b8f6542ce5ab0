/* SPDX-License-Identifier: MIT */
/* Timers cannot be misread (stop before start and reading before stop are
 * refused; a held-back stop gives cudaErrorNotReady and NaN with
 * CUXFER_NOWAIT, waits with CUXFER_WAIT); cuxfer_gbps arithmetic;
 * cuxfer_stream_wait makes one stream wait for another on the GPU; the
 * event pool hands out its events round robin, also from several threads;
 * a timer started on one stream and stopped on another reads correctly
 * whichever stream is held back (never NaN with CUXFER_WAIT, never
 * negative); timers with options (blocking-sync events, a device; {0} and
 * NULL mean the defaults; bad options refused); a timer on a capturing
 * stream is refused and the capture stays valid. */
#include "sched-helpers.h"
#include <math.h>
#include <pthread.h>

static cudaStream_t make_stream(void)
{
    cudaStream_t s;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

static void test_timer_refusals(void)
{
    cuxfer_timer t;
    cudaStream_t s = make_stream();
    float ms;
    cudaError_t err;

    DESTROY_IS_SAFE(t, cuxfer_timer_destroy, "timer");
    err = cuxfer_timer_start(&t, s);
    is_int(cudaErrorInvalidValue, err, "start on a timer never created refused");

    GPU_OK(cuxfer_timer_create(&t), "create a timer");
    cuxfer_clear_reason();
    err = cuxfer_timer_stop(&t, s);
    is_int(cudaErrorInvalidValue, err, "stop before start refused");
    contains(cuxfer_last_reason(), "not started", "with a reason");
    ms = 1.0f;
    err = cuxfer_timer_ms(&t, CUXFER_WAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "reading a timer never started refused");
    ok(isnan(ms), "and *ms is NaN");

    GPU_OK(cuxfer_timer_start(&t, s), "start");
    ms = 1.0f;
    cuxfer_clear_reason();
    err = cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "cuxfer_timer_ms before stop refused (CUXFER_NOWAIT)");
    contains(cuxfer_last_reason(), "not stopped", "with a reason");
    ok(isnan(ms), "and *ms is NaN");
    ms = 1.0f;
    err = cuxfer_timer_ms(&t, CUXFER_WAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "cuxfer_timer_ms before stop refused (CUXFER_WAIT), no wait");
    ok(isnan(ms), "and *ms is NaN");
    err = cuxfer_timer_ms(&t, CUXFER_WAIT, NULL);
    is_int(cudaErrorInvalidValue, err, "a NULL ms pointer refused");
    ms = 1.0f;
    err = cuxfer_timer_ms(NULL, CUXFER_WAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "a NULL timer refused");
    ok(isnan(ms), "and *ms is NaN");

    GPU_OK(cuxfer_timer_stop(&t, s), "stop");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ms = -1.0f;
    GPU_OK(cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms), "read after the stop completed");
    ok(ms >= 0.0f && !isnan(ms), "an empty interval is >= 0 ms (%g)", (double)ms);
    GPU_OK(cuxfer_timer_destroy(&t), "destroy");
    ok(t.start == NULL && t.stop == NULL, "destroy zeroes the timer");
    GPU_MUST(cudaStreamDestroy(s));
}

struct reader {
    cuxfer_timer *t;
    float ms;
    cudaError_t err;
    int done;
    pthread_t th;
};

static void *read_waiting(void *arg)
{
    struct reader *r = (struct reader *)arg;
    r->err = cuxfer_timer_ms(r->t, CUXFER_WAIT, &r->ms);
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Start r->th reading t with CUXFER_WAIT: 1 if it is still blocked after
 * 100 ms. */
static int reader_blocks(struct reader *r, cuxfer_timer *t)
{
    memset(r, 0, sizeof *r);
    r->t = t;
    r->ms = 1.0f;
    r->err = cudaErrorUnknown;
    return start_blocked(&r->th, read_waiting, r, &r->done, 100);
}

static void test_timer_held(void)
{
    enum { BYTES = 64 << 20 };
    cuxfer_timer t;
    cudaStream_t s = make_stream();
    unsigned char *h = NULL, *d = NULL;
    struct reader r;
    gate g;
    float ms;
    cudaError_t err;

    GPU_MUST(cudaMallocHost((void **)&h, BYTES));
    GPU_MUST(cudaMalloc((void **)&d, BYTES));
    fill_pattern(h, BYTES, 3);
    GPU_MUST(cuxfer_timer_create(&t));

    GPU_OK(gate_hold(&g, s), "hold the stream with a spinning host function");
    GPU_OK(cuxfer_timer_start(&t, s), "start behind the gate");
    GPU_OK(cudaMemcpyAsync(d, h, BYTES, cudaMemcpyHostToDevice, s), "64 MiB H2D queued");
    GPU_OK(cuxfer_timer_stop(&t, s), "stop");
    sleep_ms(50);
    ms = 1.0f;
    err = cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms);
    is_int(cudaErrorNotReady, err, "CUXFER_NOWAIT while the stream is held: cudaErrorNotReady");
    ok(isnan(ms), "and *ms is NaN, never a garbage number");
    is_int(cudaSuccess, cudaGetLastError(), "no error is left behind for cudaGetLastError");

    ok(reader_blocks(&r, &t),
       "CUXFER_WAIT blocks while the stream is held (100 ms)");
    gate_open(&g);
    if (!ok(wait_flag(&r.done, 10000), "CUXFER_WAIT returns once the stream runs (10 s bound)"))
        bail("cuxfer_timer_ms(CUXFER_WAIT) never returned");
    pthread_join(r.th, NULL);
    is_int(cudaSuccess, r.err, "CUXFER_WAIT succeeds");
    ok(r.ms > 0.0f && !isnan(r.ms), "the waited time is positive (%g ms)", (double)r.ms);
    is_int(0, g.timed_out, "the gate was opened by the test, not by its time limit");
    is_int(cudaSuccess, cudaEventQuery(t.stop), "the stop event has completed");
    ms = -1.0f;
    GPU_OK(cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms), "CUXFER_NOWAIT now succeeds");
    ok(ms == r.ms, "and reads the same time (%g ms)", (double)ms);
    diag("64 MiB pinned H2D: %.3f ms, %.1f GB/s", (double)ms, cuxfer_gbps(BYTES, ms));

    GPU_MUST(cuxfer_timer_destroy(&t));
    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(h));
}

static void test_gbps(void)
{
    double g;
    ok(cuxfer_gbps(1000000000u, 1000.0f) == 1.0, "1e9 bytes in 1000 ms is 1 GB/s");
    g = cuxfer_gbps((size_t)512 << 20, 10.0f);
    ok(fabs(g - 53.6870912) < 1e-6, "512 MiB in 10 ms is 53.687 GB/s (%.7f)", g);
    g = cuxfer_gbps((size_t)1 << 30, 19.5f);
    ok(fabs(g - (double)(1u << 30) / (19.5 * 1e6)) < 1e-9, "1 GiB in 19.5 ms (%.4f)", g);
    ok(cuxfer_gbps(1 << 20, 0.0f) == 0.0, "0 ms gives 0, not infinity");
    ok(cuxfer_gbps(1 << 20, -2.0f) == 0.0, "negative ms gives 0");
    ok(cuxfer_gbps(0, 5.0f) == 0.0, "0 bytes gives 0");
    g = cuxfer_gbps(1 << 20, NAN);
    ok(!(g > 0.0) && !isinf(g), "a NaN time (unread timer) never gives a positive rate");
}

static void test_stream_wait(void)
{
    enum { BYTES = 4 << 20 };
    cudaStream_t a = make_stream(), b = make_stream();
    unsigned char *src = NULL, *dst = NULL, *d = NULL;
    gate g;
    double t0;
    int ran;
    cudaError_t err;

    copy_bufs_alloc(&src, &dst, &d, BYTES);
    fill_pattern(src, BYTES, 11);
    GPU_MUST(cudaMemset(d, 0x5A, BYTES));
    GPU_MUST(cudaDeviceSynchronize());
    memset(dst, 0xA5, BYTES);

    GPU_OK(cuxfer_stream_wait(a, a), "a stream waiting for itself is a no-op");

    GPU_OK(gate_hold(&g, a), "hold stream A");
    GPU_OK(cudaMemcpyAsync(d, src, BYTES, cudaMemcpyHostToDevice, a), "H2D queued on A");
    t0 = now_ms();
    GPU_OK(cuxfer_stream_wait(b, a), "cuxfer_stream_wait(B, A)");
    ok(now_ms() - t0 < 1000.0, "the host does not block in cuxfer_stream_wait");
    GPU_OK(cudaMemcpyAsync(dst, d, BYTES, cudaMemcpyDeviceToHost, b), "D2H queued on B");
    sleep_ms(150);
    err = cudaStreamQuery(b);
    is_int(cudaErrorNotReady, err, "B is not done while A is held");
    (void)cudaGetLastError();
    ok(all_bytes(dst, BYTES, 0xA5), "B's copy has not happened: the destination holds its poison");
    gate_open(&g);
    GPU_OK(cudaStreamSynchronize(b), "B completes once A is released");
    ok(count_diff(dst, src, BYTES, "B after A") == 0,
       "B's copy ran after A's: it carries A's upload, byte for byte");
    is_int(0, g.timed_out, "the gate was opened by the test");

    /* Control: without the wait, B runs while A is held, so the poison
     * check above can fail. */
    GPU_MUST(cudaStreamSynchronize(a));
    memset(dst, 0xA5, BYTES);
    GPU_OK(gate_hold(&g, a), "hold stream A again");
    GPU_OK(cudaMemcpyAsync(dst, d, BYTES, cudaMemcpyDeviceToHost, b), "D2H on B, no wait");
    t0 = now_ms();
    ran = 0;
    while (now_ms() - t0 < 5000.0) {
        err = cudaStreamQuery(b);
        if (err == cudaSuccess) {
            ran = 1;
            break;
        }
        (void)cudaGetLastError();
        sleep_ms(1);
    }
    ok(ran, "control: without cuxfer_stream_wait, B completes while A is held");
    ok(count_diff(dst, src, BYTES, "control") == 0, "control: B's copy landed");
    gate_open(&g);
    GPU_OK(cudaStreamSynchronize(a), "A completes");

    /* A hot loop of waits in both directions creates no trouble. */
    err = cudaSuccess;
    {
        int i;
        for (i = 0; i < 1000 && err == cudaSuccess; ++i)
            err = (i & 1) ? cuxfer_stream_wait(a, b) : cuxfer_stream_wait(b, a);
    }
    is_int(cudaSuccess, err, "1000 alternating cuxfer_stream_wait calls succeed");
    GPU_OK(cudaStreamSynchronize(a), "A syncs");
    GPU_OK(cudaStreamSynchronize(b), "B syncs");

    GPU_MUST(cudaStreamDestroy(a));
    GPU_MUST(cudaStreamDestroy(b));
    copy_bufs_free(src, dst, d);
}

struct taker {
    cuxfer_event_pool *p;
    long counts[4];
    long foreign;
};

static void *take_events(void *arg)
{
    struct taker *t = (struct taker *)arg;
    int i, k;
    for (i = 0; i < 1000; ++i) {
        cudaEvent_t e = cuxfer_event_pool_next(t->p);
        for (k = 0; k < 4; ++k)
            if (t->p->events[k] == e)
                break;
        if (k < 4)
            ++t->counts[k];
        else
            ++t->foreign;
    }
    return NULL;
}

static void test_event_pool(void)
{
    cuxfer_event_pool p;
    cudaEvent_t e[8];
    struct taker tk[4];
    pthread_t th[4];
    cudaStream_t s = make_stream();
    int i, rr = 1, distinct = 1;
    long total[4] = {0, 0, 0, 0}, foreign = 0;
    cudaError_t err;

    memset(&p, 0, sizeof p);
    GPU_OK(cuxfer_event_pool_destroy(&p), "destroy of a zeroed event pool is safe");
    err = cuxfer_event_pool_create(&p, 0);
    is_int(cudaErrorInvalidValue, err, "an event pool of 0 refused");
    err = cuxfer_event_pool_create(&p, 65537);
    is_int(cudaErrorInvalidValue, err, "an event pool of 65537 refused");

    GPU_OK(cuxfer_event_pool_create(&p, 4), "create an event pool of 4");
    for (i = 0; i < 8; ++i) {
        e[i] = cuxfer_event_pool_next(&p);
        if (!e[i] || e[i] != p.events[i % 4])
            rr = 0;
    }
    ok(rr, "next hands out the 4 events round robin, twice over");
    for (i = 0; i < 4; ++i) {
        int j;
        for (j = 0; j < i; ++j)
            if (e[i] == e[j])
                distinct = 0;
    }
    ok(distinct, "the 4 events are distinct");

    GPU_OK(cudaEventRecord(e[0], s), "record event 1 on a stream");
    GPU_OK(cudaStreamWaitEvent(s, e[0], 0), "a stream waits on it");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    is_int(cudaSuccess, cudaEventQuery(e[0]), "the event completed");

    for (i = 0; i < 4; ++i) {
        memset(&tk[i], 0, sizeof tk[i]);
        tk[i].p = &p;
        start_thread(&th[i], take_events, &tk[i]);
    }
    for (i = 0; i < 4; ++i) {
        int k;
        pthread_join(th[i], NULL);
        for (k = 0; k < 4; ++k)
            total[k] += tk[i].counts[k];
        foreign += tk[i].foreign;
    }
    ok(foreign == 0 && total[0] == 1000 && total[1] == 1000 && total[2] == 1000 &&
           total[3] == 1000,
       "4 threads x 1000 calls: each event handed out exactly 1000 times (%ld %ld %ld %ld)",
       total[0], total[1], total[2], total[3]);

    GPU_OK(cuxfer_event_pool_destroy(&p), "destroy");
    ok(p.events == NULL && p.count == 0, "destroy zeroes the pool");
    GPU_MUST(cudaStreamDestroy(s));
}

/* Start on A, stop on B, with A or B held back by a gate. */
static void timer_two_streams(int hold_start)
{
    enum { BYTES = 32 << 20 };
    cuxfer_timer t;
    cudaStream_t a = make_stream(), b = make_stream();
    unsigned char *h = NULL, *d = NULL;
    struct reader r;
    gate g;
    float ms;
    double t_start, held;
    cudaError_t err;
    const char *which = hold_start ? "start's stream held" : "stop's stream held";

    GPU_MUST(cudaMallocHost((void **)&h, BYTES));
    GPU_MUST(cudaMalloc((void **)&d, BYTES));
    fill_pattern(h, BYTES, 9);
    GPU_MUST(cuxfer_timer_create(&t));
    GPU_OK(gate_hold(&g, hold_start ? a : b), "%s: hold it", which);
    GPU_OK(cuxfer_timer_start(&t, a), "%s: start on stream A", which);
    GPU_OK(cudaMemcpyAsync(d, h, BYTES, cudaMemcpyHostToDevice, a), "%s: 32 MiB H2D on A", which);
    GPU_OK(cuxfer_timer_stop(&t, b), "%s: stop on stream B", which);
    sleep_ms(50);
    ms = 1.0f;
    err = cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms);
    is_int(cudaErrorNotReady, err, "%s: CUXFER_NOWAIT gives cudaErrorNotReady", which);
    ok(isnan(ms), "%s: and NaN", which);
    /* Where B is held, the start on A has happened by t_start (the GPU is
     * shared with other tests, so it may happen late): the interval then
     * covers at least the hold from t_start to the gate's opening. */
    t_start = now_ms();
    while (!hold_start && cudaEventQuery(t.start) == cudaErrorNotReady &&
           now_ms() - t_start < 10000)
        sleep_ms(0.1);
    t_start = now_ms();
    ok(reader_blocks(&r, &t), "%s: CUXFER_WAIT blocks (100 ms)", which);
    held = now_ms() - t_start;
    gate_open(&g);
    if (!ok(wait_flag(&r.done, 10000), "%s: CUXFER_WAIT returns (10 s bound)", which))
        bail("cuxfer_timer_ms(CUXFER_WAIT) never returned");
    pthread_join(r.th, NULL);
    is_int(cudaSuccess, r.err, "%s: CUXFER_WAIT succeeds, never cudaErrorNotReady (%s)", which,
           cudaGetErrorName(r.err));
    ok(!isnan(r.ms) && r.ms >= 0.0f, "%s: a time >= 0 ms, never NaN or negative (%g)", which,
       (double)r.ms);
    if (!hold_start)
        ok(r.ms >= held - 1.0 && held >= 100.0,
           "%s: the interval covers B's hold since the start (%g ms >= %g - 1)", which,
           (double)r.ms, held);
    ms = -1.0f;
    GPU_OK(cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms), "%s: NOWAIT now succeeds", which);
    ok(ms == r.ms, "%s: the same time", which);
    is_int(0, g.timed_out, "%s: the gate was opened by the test", which);
    GPU_OK(cudaStreamSynchronize(a), "%s: A syncs", which);
    GPU_OK(cudaStreamSynchronize(b), "%s: B syncs", which);
    is_int(cudaSuccess, cudaGetLastError(), "%s: no error left behind", which);
    GPU_MUST(cuxfer_timer_destroy(&t));
    GPU_MUST(cudaStreamDestroy(a));
    GPU_MUST(cudaStreamDestroy(b));
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(h));
}

static void test_timer_two_streams(void)
{
    timer_two_streams(1);
    timer_two_streams(0);
}

static void test_timer_options(void)
{
    enum { BYTES = 16 << 20 };
    cuxfer_timer t;
    cuxfer_timer_options o;
    cudaStream_t s = make_stream();
    unsigned char *h = NULL, *d = NULL;
    int dev = -1, ndev = 0, i;
    float ms;
    cudaError_t err;
    double t0, t_poll, t_raw;

    GPU_MUST(cudaGetDevice(&dev));
    GPU_MUST(cudaGetDeviceCount(&ndev));
    GPU_MUST(cudaMallocHost((void **)&h, BYTES));
    GPU_MUST(cudaMalloc((void **)&d, BYTES));

    GPU_OK(cuxfer_timer_create_with(&t, NULL), "create_with(NULL): the defaults");
    ok(t.flags == 0 && t.device == dev, "spinning events on the current device");
    GPU_MUST(cuxfer_timer_destroy(&t));
    memset(&o, 0, sizeof o);
    GPU_OK(cuxfer_timer_create_with(&t, &o), "create_with({0}): the defaults");
    ok(t.flags == 0 && t.device == dev, "the same as NULL");
    GPU_MUST(cuxfer_timer_destroy(&t));

    o.flags = 0x80u;
    cuxfer_clear_reason();
    err = cuxfer_timer_create_with(&t, &o);
    is_int(cudaErrorInvalidValue, err, "unknown flags refused");
    contains(cuxfer_last_reason(), "0x80", "the reason names them");
    ok(t.start == NULL && t.stop == NULL, "and the timer is left zeroed");
    o.flags = CUXFER_TIMER_ON_DEVICE;
    o.device = -1;
    err = cuxfer_timer_create_with(&t, &o);
    is_int(cudaErrorInvalidDevice, err, "device -1 refused");
    o.device = ndev;
    err = cuxfer_timer_create_with(&t, &o);
    ok(err != cudaSuccess, "device %d (one past the last) refused (%s)", ndev,
       cudaGetErrorName(err));
    (void)cudaGetLastError();

    o.flags = CUXFER_TIMER_BLOCKING_SYNC | CUXFER_TIMER_ON_DEVICE;
    o.device = ndev - 1;
    GPU_OK(cuxfer_timer_create_with(&t, &o), "a blocking-sync timer on device %d", ndev - 1);
    ok(t.device == ndev - 1 && (t.flags & CUXFER_TIMER_BLOCKING_SYNC), "it records both");
    {
        int cur = -1;
        GPU_MUST(cudaGetDevice(&cur));
        is_int(dev, cur, "creating it left the current device alone");
    }
    if (ndev - 1 == dev) {
        fill_pattern(h, BYTES, 5);
        GPU_OK(cuxfer_timer_start(&t, s), "start");
        GPU_OK(cudaMemcpyAsync(d, h, BYTES, cudaMemcpyHostToDevice, s), "16 MiB H2D");
        GPU_OK(cuxfer_timer_stop(&t, s), "stop");
        ms = -1.0f;
        GPU_OK(cuxfer_timer_ms(&t, CUXFER_WAIT, &ms), "CUXFER_WAIT on blocking-sync events");
        ok(ms > 0.0f && !isnan(ms), "a positive time (%g ms)", (double)ms);
    }
    GPU_MUST(cuxfer_timer_destroy(&t));

    /* Poll cost: CUXFER_NOWAIT on a held timer against a raw cudaEventQuery. */
    {
        gate g;
        enum { POLLS = 20000 };
        GPU_MUST(cuxfer_timer_create(&t));
        GPU_OK(gate_hold(&g, s), "hold the stream for the poll loop");
        GPU_OK(cuxfer_timer_start(&t, s), "start");
        GPU_OK(cuxfer_timer_stop(&t, s), "stop");
        err = cudaErrorNotReady;
        t0 = now_ms();
        for (i = 0; i < POLLS && err == cudaErrorNotReady; ++i)
            err = cuxfer_timer_ms(&t, CUXFER_NOWAIT, &ms);
        t_poll = now_ms() - t0;
        is_int(cudaErrorNotReady, err, "%d polls all answer cudaErrorNotReady", POLLS);
        t0 = now_ms();
        for (i = 0; i < POLLS && err == cudaErrorNotReady; ++i)
            err = cudaEventQuery(t.stop);
        t_raw = now_ms() - t0;
        is_int(cudaErrorNotReady, err, "and so do %d raw queries", POLLS);
        diag("poll: cuxfer_timer_ms %.0f ns, cudaEventQuery %.0f ns", t_poll * 1e6 / POLLS,
             t_raw * 1e6 / POLLS);
        is_int(cudaSuccess, cudaGetLastError(), "polling leaves no error behind");
        gate_open(&g);
        GPU_OK(cudaStreamSynchronize(s), "sync");
        is_int(0, g.timed_out, "the gate was opened by the test");
        GPU_MUST(cuxfer_timer_destroy(&t));
    }

    /* A timer on a capturing stream is refused; the capture stays valid. */
    {
        cuxfer_graph gr;
        GPU_MUST(cuxfer_timer_create(&t));
        GPU_OK(cuxfer_graph_begin(s), "begin a capture");
        cuxfer_clear_reason();
        err = cuxfer_timer_start(&t, s);
        is_int(cudaErrorStreamCaptureUnsupported, err, "timer start in a capture refused");
        contains(cuxfer_last_reason(), "captured", "with a reason");
        GPU_OK(cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s), "a captured copy");
        GPU_OK(cuxfer_graph_end(&gr, s), "the capture ends valid");
        GPU_OK(cuxfer_graph_launch(&gr, s), "and launches");
        GPU_OK(cudaStreamSynchronize(s), "sync");
        GPU_OK(cuxfer_graph_destroy(&gr), "destroy the graph");
        GPU_OK(cuxfer_timer_start(&t, s), "the timer works outside the capture");
        GPU_OK(cuxfer_timer_stop(&t, s), "stop");
        GPU_OK(cuxfer_timer_ms(&t, CUXFER_WAIT, &ms), "read");
        GPU_MUST(cuxfer_timer_destroy(&t));
    }
    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(h));
}

int main(void)
{
    gpu_require(1);
    guard_install(60);
    plan(0);
    test_timer_refusals();
    test_timer_held();
    test_gbps();
    test_stream_wait();
    test_event_pool();
    test_timer_two_streams();
    test_timer_options();
    done_testing();
}
