/* SPDX-License-Identifier: MIT */
/* The stream pool: creation (count, clamped priority, non-blocking by
 * default, CUXFER_STREAM_BLOCKING), round robin that skips leased streams,
 * exclusive leases (exhaustion reported with CUXFER_NOWAIT, waited out with
 * CUXFER_WAIT), refusals (release of a stream not leased, destroy while
 * leased, stream 0 in a wrapped set), sync, 8 host threads hammering
 * next/acquire/release for a bounded time without ever sharing a lease, and
 * next from 4 threads never missing the one free stream. */
#include "sched-helpers.h"
#include <pthread.h>

enum { HAMMER_THREADS = 8, HAMMER_STREAMS = 3 };

static int stream_index(const cuxfer_stream_pool *p, cudaStream_t s)
{
    int i;
    for (i = 0; i < p->count; ++i)
        if (p->streams[i] == s)
            return i;
    return -1;
}

static void check_streams(const cuxfer_stream_pool *p, int want_prio,
                          unsigned want_nonblocking, const char *what)
{
    int i, prio_ok = 1, flags_ok = 1, prio;
    unsigned fl;
    for (i = 0; i < p->count; ++i) {
        prio = 12345;
        fl = 0xdead;
        if (cudaStreamGetPriority(p->streams[i], &prio) != cudaSuccess || prio != want_prio) {
            diag("  stream %d: priority %d, want %d", i, prio, want_prio);
            prio_ok = 0;
        }
        if (cudaStreamGetFlags(p->streams[i], &fl) != cudaSuccess ||
            (fl & (unsigned)cudaStreamNonBlocking) != want_nonblocking) {
            diag("  stream %d: flags 0x%x, want non-blocking bit %u", i, fl, want_nonblocking);
            flags_ok = 0;
        }
    }
    ok(prio_ok, "%s: every stream has priority %d", what, want_prio);
    ok(flags_ok, "%s: every stream is %s", what,
       want_nonblocking ? "cudaStreamNonBlocking" : "blocking (cudaStreamDefault)");
}

static void test_create(void)
{
    cuxfer_stream_pool p;
    int least = 0, greatest = 0;
    cudaError_t err;

    GPU_MUST(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    diag("device stream priorities: least %d, greatest %d", least, greatest);

    GPU_OK(cuxfer_stream_pool_create(&p, 4, 0, 1000000), "create 4 streams, priority 1000000");
    is_int(4, p.count, "count is 4");
    is_int(least, p.priority, "a huge priority is clamped to the least urgent (%d)", least);
    is_int(cudaStreamNonBlocking, (long long)p.flags, "flags report cudaStreamNonBlocking");
    check_streams(&p, least, (unsigned)cudaStreamNonBlocking, "default flags");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy");
    ok(p.streams == NULL && p.count == 0, "destroy leaves a zeroed pool");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy again (zeroed) is safe");

    GPU_OK(cuxfer_stream_pool_create(&p, 2, 0, -1000000), "create 2 streams, priority -1000000");
    is_int(greatest, p.priority, "a tiny priority is clamped to the most urgent (%d)", greatest);
    check_streams(&p, greatest, (unsigned)cudaStreamNonBlocking, "priority -1000000");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy");

    GPU_OK(cuxfer_stream_pool_create(&p, 3, CUXFER_STREAM_BLOCKING, 0),
           "create with CUXFER_STREAM_BLOCKING");
    is_int(cudaStreamDefault, (long long)p.flags, "flags report cudaStreamDefault");
    check_streams(&p, 0 > least ? least : 0 < greatest ? greatest : 0, 0u,
                  "CUXFER_STREAM_BLOCKING");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy");

    GPU_OK(cuxfer_stream_pool_create(&p, 1, cudaStreamNonBlocking, 0),
           "create with cudaStreamNonBlocking spelled out");
    check_streams(&p, 0 > least ? least : 0 < greatest ? greatest : 0,
                  (unsigned)cudaStreamNonBlocking, "cudaStreamNonBlocking");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy");

    memset(&p, 0x5a, sizeof p);
    err = cuxfer_stream_pool_create(&p, 2, 0x8000u, 0);
    is_int(cudaErrorInvalidValue, err, "unknown flags refused");
    contains(cuxfer_last_reason(), "flags", "the reason names the flags");
    ok(p.streams == NULL, "a refused create leaves a zeroed pool");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy after a refused create is safe");

    err = cuxfer_stream_pool_create(&p, 0, 0, 0);
    is_int(cudaErrorInvalidValue, err, "count 0 refused");
    contains(cuxfer_last_reason(), "count 0", "the reason names the count");
    err = cuxfer_stream_pool_create(&p, CUXFER_STREAM_POOL_MAX + 1, 0, 0);
    is_int(cudaErrorInvalidValue, err, "count CUXFER_STREAM_POOL_MAX + 1 refused");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy after a refused count is safe");

    DESTROY_IS_SAFE(p, cuxfer_stream_pool_destroy, "pool");
    GPU_OK(cuxfer_stream_pool_sync(&p), "sync of a zeroed pool is a no-op");
}

struct waiter {
    cuxfer_stream_pool *p;
    cudaStream_t got;
    cudaError_t err;
    int done;
};

static void *acquire_waiting(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    w->err = cuxfer_stream_pool_acquire(w->p, CUXFER_WAIT, &w->got);
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_round_robin_and_leases(void)
{
    cuxfer_stream_pool p;
    cudaStream_t s = NULL, held[4], other;
    int seq[8], i, rr_ok = 1, skip_ok = 1, seen[4] = {0, 0, 0, 0}, lidx, distinct = 1;
    struct waiter w;
    pthread_t th;
    cudaError_t err;

    GPU_MUST(cuxfer_stream_pool_create(&p, 4, 0, 0));
    for (i = 0; i < 8; ++i) {
        if (cuxfer_stream_pool_next(&p, &s) != cudaSuccess) {
            rr_ok = 0;
            break;
        }
        seq[i] = stream_index(&p, s);
        if (seq[i] < 0 || seq[i] != (seq[0] + i) % 4) {
            diag("  call %d gave stream %d", i, seq[i]);
            rr_ok = 0;
        }
    }
    ok(rr_ok, "next hands out the 4 streams round robin, twice over");

    GPU_OK(cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &held[0]), "acquire one stream");
    lidx = stream_index(&p, held[0]);
    ok(lidx >= 0, "the leased stream belongs to the pool");
    is_int(1, p.leases, "one lease counted");
    for (i = 0; i < 12; ++i) {
        int k;
        if (cuxfer_stream_pool_next(&p, &s) != cudaSuccess) {
            skip_ok = 0;
            break;
        }
        k = stream_index(&p, s);
        if (k < 0 || k == lidx)
            skip_ok = 0;
        else
            ++seen[k];
    }
    ok(skip_ok, "next never hands out the leased stream (12 calls)");
    for (i = 0; i < 4; ++i)
        if (i != lidx && seen[i] == 0)
            skip_ok = 0;
    ok(skip_ok, "next still visits each of the 3 other streams");

    for (i = 1; i < 4; ++i)
        GPU_OK(cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &held[i]), "acquire stream %d of 4", i + 1);
    for (i = 0; i < 4; ++i) {
        int j;
        for (j = 0; j < i; ++j)
            if (held[i] == held[j])
                distinct = 0;
    }
    ok(distinct, "the 4 leases are 4 different streams");
    is_int(4, p.leases, "4 leases counted");

    cuxfer_clear_reason();
    s = NULL;
    err = cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &s);
    is_int(cudaErrorNotReady, err, "CUXFER_NOWAIT on an exhausted pool: cudaErrorNotReady");
    contains(cuxfer_last_reason(), "leased", "with a reason");
    cuxfer_clear_reason();
    err = cuxfer_stream_pool_next(&p, &s);
    is_int(cudaErrorNotReady, err, "next with every stream leased: cudaErrorNotReady");
    contains(cuxfer_last_reason(), "leased", "with a reason");

    cuxfer_clear_reason();
    err = cuxfer_stream_pool_destroy(&p);
    is_int(cudaErrorNotPermitted, err, "destroy refused while streams are leased");
    contains(cuxfer_last_reason(), "leased", "with a reason");
    ok(p.streams != NULL && p.count == 4, "the refused destroy left the pool intact");

    GPU_MUST(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    err = cuxfer_stream_pool_release(&p, other);
    is_int(cudaErrorInvalidValue, err, "release of a stream from elsewhere refused");
    GPU_OK(cuxfer_stream_pool_release(&p, held[3]), "release a lease");
    cuxfer_clear_reason();
    err = cuxfer_stream_pool_release(&p, held[3]);
    is_int(cudaErrorInvalidValue, err, "release of a stream not leased (twice) refused");
    contains(cuxfer_last_reason(), "not leased", "with a reason");
    is_int(3, p.leases, "3 leases counted");

    /* CUXFER_WAIT: block until another thread releases. */
    GPU_OK(cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &held[3]), "lease the 4th again");
    memset(&w, 0, sizeof w);
    w.p = &p;
    w.err = cudaErrorUnknown;
    ok(start_blocked(&th, acquire_waiting, &w, &w.done, 150),
       "CUXFER_WAIT on an exhausted pool blocks (150 ms)");
    GPU_OK(cuxfer_stream_pool_release(&p, held[1]), "release one lease from the main thread");
    if (!ok(wait_flag(&w.done, 5000), "the waiting acquire returns after the release (5 s bound)")) {
        (void)cuxfer_stream_pool_release(&p, held[0]);
        (void)cuxfer_stream_pool_release(&p, held[2]);
        (void)cuxfer_stream_pool_release(&p, held[3]);
        if (!wait_flag(&w.done, 2000))
            bail("a CUXFER_WAIT acquire never returned");
    }
    pthread_join(th, NULL);
    is_int(cudaSuccess, w.err, "the waiting acquire succeeded");
    ok(w.got == held[1], "it got the stream just released");
    held[1] = w.got;
    for (i = 0; i < 4; ++i)
        GPU_OK(cuxfer_stream_pool_release(&p, held[i]), "release lease %d", i + 1);
    is_int(0, p.leases, "no lease left");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy once nothing is leased");

    err = cuxfer_stream_pool_next(&p, &s);
    is_int(cudaErrorInvalidValue, err, "next on a destroyed pool refused");
    err = cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &s);
    is_int(cudaErrorInvalidValue, err, "acquire on a destroyed pool refused");
    GPU_MUST(cudaStreamDestroy(other));
}

static void test_wrap(void)
{
    cuxfer_stream_pool p;
    cudaStream_t mine[3], bad[3], s = NULL;
    unsigned char *h = NULL, *d = NULL;
    int i, rr_ok = 1;
    cudaError_t err;

    for (i = 0; i < 3; ++i)
        GPU_MUST(cudaStreamCreateWithFlags(&mine[i], cudaStreamNonBlocking));
    GPU_OK(cuxfer_stream_pool_wrap(&p, mine, 3), "wrap 3 caller streams");
    is_int(3, p.count, "count 3");
    is_int(0, p.owns, "the pool does not own wrapped streams");
    is_int(cudaStreamNonBlocking, (long long)(p.flags & (unsigned)cudaStreamNonBlocking),
           "the wrapped streams' flags are reported");
    for (i = 0; i < 6; ++i) {
        if (cuxfer_stream_pool_next(&p, &s) != cudaSuccess || s != mine[(i + 0) % 3])
            rr_ok = 0;
    }
    ok(rr_ok, "next hands out the caller's streams in order");
    GPU_OK(cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &s), "lease a wrapped stream");
    GPU_OK(cuxfer_stream_pool_release(&p, s), "release it");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy the wrapping pool");

    /* The caller's streams survive the pool: use them. */
    GPU_MUST(cudaMallocHost((void **)&h, 2 << 20));
    GPU_MUST(cudaMalloc((void **)&d, 1 << 20));
    fill_pattern(h, 1 << 20, 77);
    memset(h + (1 << 20), 0xA5, 1 << 20);
    err = cudaSuccess;
    for (i = 0; i < 3 && err == cudaSuccess; ++i)
        err = cudaStreamQuery(mine[i]);
    is_int(cudaSuccess, err, "the caller's streams are still valid after destroy");
    GPU_OK(cudaMemcpyAsync(d, h, 1 << 20, cudaMemcpyHostToDevice, mine[0]), "copy on a caller stream");
    GPU_OK(cudaStreamSynchronize(mine[0]), "sync it");
    GPU_OK(cudaMemcpyAsync(h + (1 << 20), d, 1 << 20, cudaMemcpyDeviceToHost, mine[2]),
           "copy back on another caller stream");
    GPU_OK(cudaStreamSynchronize(mine[2]), "sync it");
    ok(count_diff(h + (1 << 20), h, 1 << 20, "round trip") == 0,
       "round trip through the caller's streams is byte-exact");

    bad[0] = mine[0];
    bad[1] = NULL;
    bad[2] = mine[2];
    cuxfer_clear_reason();
    err = cuxfer_stream_pool_wrap(&p, bad, 3);
    is_int(cudaErrorInvalidValue, err, "wrap refuses stream 0");
    contains(cuxfer_last_reason(), "stream 0", "the reason names stream 0");
    err = cuxfer_stream_pool_wrap(&p, mine, 0);
    is_int(cudaErrorInvalidValue, err, "wrap of 0 streams refused");
    err = cuxfer_stream_pool_wrap(&p, NULL, 3);
    is_int(cudaErrorInvalidValue, err, "wrap of a NULL array refused");

    for (i = 0; i < 3; ++i)
        GPU_MUST(cudaStreamDestroy(mine[i]));
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(h));
}

static void test_sync(void)
{
    enum { N = 4, BYTES = 4 << 20 };
    cuxfer_stream_pool p;
    unsigned char *in = NULL, *out = NULL, *d = NULL;
    cudaError_t err = cudaSuccess;
    int i;

    GPU_MUST(cuxfer_stream_pool_create(&p, N, 0, 0));
    GPU_MUST(cudaMallocHost((void **)&in, (size_t)N * BYTES));
    GPU_MUST(cudaMallocHost((void **)&out, (size_t)N * BYTES));
    GPU_MUST(cudaMalloc((void **)&d, (size_t)N * BYTES));
    fill_pattern(in, (size_t)N * BYTES, 5);
    memset(out, 0xA5, (size_t)N * BYTES);
    for (i = 0; i < N && err == cudaSuccess; ++i) {
        size_t off = (size_t)i * BYTES;
        err = cudaMemcpyAsync(d + off, in + off, BYTES, cudaMemcpyHostToDevice, p.streams[i]);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(out + off, d + off, BYTES, cudaMemcpyDeviceToHost, p.streams[i]);
    }
    is_int(cudaSuccess, err, "copies queued on each of the pool's 4 streams");
    GPU_OK(cuxfer_stream_pool_sync(&p), "cuxfer_stream_pool_sync");
    for (i = 0; i < N && err == cudaSuccess; ++i)
        err = cudaStreamQuery(p.streams[i]);
    is_int(cudaSuccess, err, "after sync every stream is idle");
    ok(count_diff(out, in, (size_t)N * BYTES, "after sync") == 0,
       "after sync every stream's copies have landed");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy");
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(in));
    GPU_MUST(cudaFreeHost(out));
}

/* --- 8 threads on one pool ------------------------------------------------ */

struct hammer {
    cuxfer_stream_pool *p;
    int owner[HAMMER_STREAMS]; /* 0 free, else the leasing thread's id + 1 */
    double deadline;
    int finished;
};

struct worker {
    struct hammer *h;
    int id;
    long acquired, released, nexts, notready, waits;
    long violations, errors;
};

static void *hammer_thread(void *arg)
{
    struct worker *w = (struct worker *)arg;
    struct hammer *h = w->h;
    unsigned x = 2463534242u + (unsigned)w->id * 747796405u;
    cudaStream_t s = NULL;
    cudaError_t err;
    int idx, expect, k;
    volatile unsigned sink = 0;

    while (now_ms() < h->deadline) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (x % 4 == 0) {
            err = cuxfer_stream_pool_next(h->p, &s);
            ++w->nexts;
            if (err == cudaErrorNotReady)
                ++w->notready;
            else if (err != cudaSuccess)
                ++w->errors;
            else if (stream_index(h->p, s) < 0)
                ++w->violations;
            continue;
        }
        err = cuxfer_stream_pool_acquire(h->p, x % 4 == 1 ? CUXFER_NOWAIT : CUXFER_WAIT, &s);
        if (x % 4 != 1)
            ++w->waits;
        if (err == cudaErrorNotReady && x % 4 == 1) {
            ++w->notready;
            continue;
        }
        if (err != cudaSuccess) {
            ++w->errors;
            continue;
        }
        ++w->acquired;
        idx = stream_index(h->p, s);
        if (idx < 0) {
            ++w->violations;
            continue;
        }
        expect = 0;
        if (!__atomic_compare_exchange_n(&h->owner[idx], &expect, w->id + 1, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            ++w->violations; /* someone else holds this lease */
        if (!__atomic_load_n(&h->p->leased[idx], __ATOMIC_ACQUIRE))
            ++w->violations;
        for (k = 0; k < (int)(x % 64); ++k)
            sink += (unsigned)k;
        expect = w->id + 1;
        if (!__atomic_compare_exchange_n(&h->owner[idx], &expect, 0, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            ++w->violations;
        if (cuxfer_stream_pool_release(h->p, s) == cudaSuccess)
            ++w->released;
        else
            ++w->errors;
    }
    __atomic_add_fetch(&h->finished, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

static void test_hammer(void)
{
    cuxfer_stream_pool p;
    struct hammer h;
    struct worker w[HAMMER_THREADS];
    pthread_t th[HAMMER_THREADS];
    cudaStream_t got[HAMMER_STREAMS + 1];
    long acq = 0, rel = 0, nexts = 0, notready = 0, viol = 0, errs = 0, waits = 0;
    int i, all_done, distinct = 1;
    double t0;
    cudaError_t err;

    GPU_MUST(cuxfer_stream_pool_create(&p, HAMMER_STREAMS, 0, 0));
    memset(&h, 0, sizeof h);
    h.p = &p;
    h.deadline = now_ms() + 1000.0;
    for (i = 0; i < HAMMER_THREADS; ++i) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].h = &h;
        w[i].id = i;
        start_thread(&th[i], hammer_thread, &w[i]);
    }
    t0 = now_ms();
    all_done = 0;
    while (now_ms() - t0 < 10000.0) {
        if (__atomic_load_n(&h.finished, __ATOMIC_ACQUIRE) == HAMMER_THREADS) {
            all_done = 1;
            break;
        }
        sleep_ms(5);
    }
    if (!ok(all_done, "8 threads hammering a 3-stream pool for 1 s all finish (10 s bound)"))
        bail("hammer threads stuck: %d of %d finished",
             __atomic_load_n(&h.finished, __ATOMIC_ACQUIRE), HAMMER_THREADS);
    for (i = 0; i < HAMMER_THREADS; ++i) {
        pthread_join(th[i], NULL);
        acq += w[i].acquired;
        rel += w[i].released;
        nexts += w[i].nexts;
        notready += w[i].notready;
        viol += w[i].violations;
        errs += w[i].errors;
        waits += w[i].waits;
    }
    diag("hammer: %ld leases (%ld with CUXFER_WAIT), %ld next calls, %ld not-ready answers",
         acq, waits, nexts, notready);
    ok(acq > 1000, "thousands of leases were taken (%ld)", acq);
    is_int(0, viol, "no stream was ever leased to two threads at once");
    is_int(0, errs, "no unexpected error");
    is_int(acq, rel, "every lease was released");
    is_int(0, p.leases, "the pool counts no lease");
    for (i = 0; i < HAMMER_STREAMS; ++i) {
        err = cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &got[i]);
        if (err != cudaSuccess) {
            distinct = 0;
            got[i] = NULL;
        }
    }
    for (i = 0; i < HAMMER_STREAMS; ++i) {
        int j;
        for (j = 0; j < i; ++j)
            if (got[i] == got[j])
                distinct = 0;
    }
    ok(distinct, "afterwards all 3 streams can be leased again, distinct: nothing lost");
    err = cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &got[HAMMER_STREAMS]);
    is_int(cudaErrorNotReady, err, "and no 4th lease appears");
    for (i = 0; i < HAMMER_STREAMS; ++i)
        if (got[i])
            (void)cuxfer_stream_pool_release(&p, got[i]);
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy after the hammer");
}

/* --- next from several threads while a stream stays free -------------------- */

struct nexter {
    cuxfer_stream_pool *p;
    cudaStream_t leased;
    long calls, notready, wrong;
};

static void *next_thread(void *arg)
{
    struct nexter *n = (struct nexter *)arg;
    cudaStream_t s = NULL;
    cudaError_t err;
    long i;
    for (i = 0; i < 1000000; ++i) {
        err = cuxfer_stream_pool_next(n->p, &s);
        ++n->calls;
        if (err == cudaErrorNotReady)
            ++n->notready;
        else if (err != cudaSuccess || s == n->leased)
            ++n->wrong;
    }
    return NULL;
}

/* Two streams, one leased throughout: next must always find the other,
 * however the threads' turns of the round robin interleave. */
static void test_next_contended(void)
{
    cuxfer_stream_pool p;
    struct nexter n[4];
    pthread_t th[4];
    cudaStream_t held = NULL;
    long calls = 0, notready = 0, wrong = 0;
    int i;
    GPU_MUST(cuxfer_stream_pool_create(&p, 2, 0, 0));
    GPU_OK(cuxfer_stream_pool_acquire(&p, CUXFER_NOWAIT, &held), "lease one of 2 streams");
    for (i = 0; i < 4; ++i) {
        n[i].p = &p;
        n[i].leased = held;
        n[i].calls = n[i].notready = n[i].wrong = 0;
        start_thread(&th[i], next_thread, &n[i]);
    }
    for (i = 0; i < 4; ++i) {
        pthread_join(th[i], NULL);
        calls += n[i].calls;
        notready += n[i].notready;
        wrong += n[i].wrong;
    }
    is_int(0, notready, "4 threads, %ld next calls with one stream free: never cudaErrorNotReady",
           calls);
    is_int(0, wrong, "and never the leased stream, nor another error");
    GPU_OK(cuxfer_stream_pool_release(&p, held), "release it");
    GPU_OK(cuxfer_stream_pool_destroy(&p), "destroy");
}

int main(void)
{
    gpu_require(1);
    guard_install(60);
    plan(0);
    test_create();
    test_round_robin_and_leases();
    test_wrap();
    test_sync();
    test_hammer();
    test_next_contended();
    done_testing();
}
