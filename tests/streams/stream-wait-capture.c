/* SPDX-License-Identifier: MIT */
/* Stream ordering inside graph capture: cuxfer_stream_wait and the
 * fan-out/fan-in helpers (cuxfer_stream_all_wait, cuxfer_stream_wait_all,
 * cuxfer_stream_pool_wait, cuxfer_stream_wait_pool) fork and join a captured
 * graph, called for the first time in a fresh thread (so the ordering event
 * is made during the capture) without invalidating it; the graph replays 3
 * times byte-exact and the same calls then work on ordinary streams.  A
 * capturing waiter with a signaler outside the capture is refused with
 * cudaErrorStreamCaptureIsolation and the capture stays valid; another
 * thread's Global-mode capture survives a first cuxfer_stream_wait in this
 * thread; cuxfer_graph_begin takes cudaStreamPerThread and refuses
 * cudaStreamLegacy; a ring's fences over more than 64 slots queue nothing
 * when a later group of slots refuses. */
#include "sched-helpers.h"
#include <pthread.h>

enum { SIDES = 3, SLICE = 1 << 20, BYTES = SIDES * SLICE, REPLAYS = 3 };

struct bufs {
    unsigned char *in, *out, *dev, *want;
};

static cudaStream_t make_stream(void)
{
    cudaStream_t s;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

/* Upload on o, fan out to the side streams, each downloads its slice; the
 * last side first waits for the one before it; fan back in to o. */
static cudaError_t fork_join(struct bufs *b, cudaStream_t o, const cudaStream_t *side,
                             cuxfer_stream_pool *pool)
{
    cudaError_t err;
    int i;
    err = cudaMemcpyAsync(b->dev, b->in, BYTES, cudaMemcpyHostToDevice, o);
    if (err == cudaSuccess)
        err = pool ? cuxfer_stream_pool_wait(pool, o) : cuxfer_stream_all_wait(side, SIDES, o);
    if (err == cudaSuccess)
        err = cuxfer_stream_wait(side[SIDES - 1], side[SIDES - 2]);
    for (i = 0; i < SIDES && err == cudaSuccess; ++i)
        err = cudaMemcpyAsync(b->out + (size_t)i * SLICE, b->dev + (size_t)i * SLICE, SLICE,
                              cudaMemcpyDeviceToHost, side[i]);
    if (err == cudaSuccess)
        err = pool ? cuxfer_stream_wait_pool(o, pool) : cuxfer_stream_wait_all(o, side, SIDES);
    return err;
}

static int run_and_check(struct bufs *b, cudaStream_t o, const cuxfer_graph *g,
                         const cudaStream_t *side, cuxfer_stream_pool *pool, unsigned seed,
                         const char *what)
{
    cudaError_t err;
    fill_pattern(b->in, BYTES, seed);
    memcpy(b->want, b->in, BYTES);
    memset(b->out, 0xA5, BYTES);
    err = g ? cuxfer_graph_launch(g, o) : fork_join(b, o, side, pool);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(o); /* the join: o covers every side stream */
    if (!ok(err == cudaSuccess, "%s: runs (%s)", what, cudaGetErrorName(err)))
        return 0;
    return ok(count_diff(b->out, b->want, BYTES, what) == 0, "%s: byte-exact", what);
}

struct capture_job {
    struct bufs *b;
    cudaStream_t o, side[SIDES];
    cuxfer_stream_pool *pool;
    cuxfer_graph g;
    cudaError_t begin, body, end;
    int capturing_after_body;
};

/* In a thread of its own: its first cuxfer_stream_wait happens inside the
 * capture. */
static void *capture_fork_join(void *arg)
{
    struct capture_job *j = (struct capture_job *)arg;
    memset(&j->g, 0, sizeof j->g);
    j->begin = cuxfer_graph_begin(j->o);
    if (j->begin != cudaSuccess)
        return NULL;
    j->body = fork_join(j->b, j->o, j->side, j->pool);
    j->capturing_after_body = cuxfer_stream_is_capturing(j->o);
    j->end = cuxfer_graph_end(&j->g, j->o);
    return NULL;
}

static void test_captured(struct bufs *b, cudaStream_t o, const cudaStream_t *side,
                          cuxfer_stream_pool *pool, const char *what)
{
    struct capture_job j;
    pthread_t th;
    char name[96];
    int r, i;
    memset(&j, 0, sizeof j);
    j.b = b;
    j.o = o;
    for (i = 0; i < SIDES; ++i)
        j.side[i] = side[i];
    j.pool = pool;
    if (pthread_create(&th, NULL, capture_fork_join, &j) != 0)
        bail("pthread_create failed");
    pthread_join(th, NULL);
    is_int(cudaSuccess, j.begin, "%s: begin capture", what);
    is_int(cudaSuccess, j.body, "%s: fork and join inside the capture (%s)", what,
           cudaGetErrorName(j.body));
    ok(j.capturing_after_body, "%s: the capture is still active after the fork/join", what);
    is_int(cudaSuccess, j.end, "%s: end capture: not invalidated (%s)", what,
           cudaGetErrorName(j.end));
    if (j.end != cudaSuccess)
        return;
    for (r = 0; r < REPLAYS; ++r) {
        snprintf(name, sizeof name, "%s: replay %d", what, r + 1);
        run_and_check(b, o, &j.g, side, pool, 100u + (unsigned)r, name);
    }
    snprintf(name, sizeof name, "%s: an ordinary run afterwards", what);
    run_and_check(b, o, NULL, side, pool, 200u, name);
    GPU_OK(cuxfer_graph_destroy(&j.g), "%s: destroy the graph", what);
}

static void test_isolation(struct bufs *b, cudaStream_t o, cudaStream_t outside)
{
    cuxfer_graph g;
    cudaError_t err;
    cudaStream_t one[1];
    GPU_OK(cuxfer_graph_begin(o), "isolation: begin capture");
    GPU_OK(cudaMemcpyAsync(b->dev, b->in, BYTES, cudaMemcpyHostToDevice, o), "captured upload");
    cuxfer_clear_reason();
    err = cuxfer_stream_wait(o, outside);
    is_int(cudaErrorStreamCaptureIsolation, err,
           "a capturing waiter and a signaler outside the capture refused");
    contains(cuxfer_last_reason(), "outside", "with a reason");
    one[0] = outside;
    err = cuxfer_stream_wait_all(o, one, 1);
    is_int(cudaErrorStreamCaptureIsolation, err, "cuxfer_stream_wait_all refuses it too");
    err = cuxfer_stream_all_wait(&o, 1, outside);
    is_int(cudaErrorStreamCaptureIsolation, err, "and cuxfer_stream_all_wait");
    ok(cuxfer_stream_is_capturing(o), "the capture is still active");
    GPU_OK(cudaMemcpyAsync(b->out, b->dev, BYTES, cudaMemcpyDeviceToHost, o), "captured download");
    GPU_OK(cuxfer_graph_end(&g, o), "the capture ends valid");
    run_and_check(b, o, &g, NULL, NULL, 300u, "isolation: the graph replays");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy");
}

/* Another thread captures in Global mode while this (fresh) thread makes
 * its first cuxfer_stream_wait. */
struct global_cap {
    cudaStream_t s;
    unsigned char *dev, *in;
    int begun, go_on;
    cudaError_t begin, end;
    cudaGraph_t graph;
};

static void *capture_global(void *arg)
{
    struct global_cap *c = (struct global_cap *)arg;
    c->begin = cudaStreamBeginCapture(c->s, cudaStreamCaptureModeGlobal);
    if (c->begin == cudaSuccess)
        c->begin = cudaMemcpyAsync(c->dev, c->in, 4096, cudaMemcpyHostToDevice, c->s);
    __atomic_store_n(&c->begun, 1, __ATOMIC_RELEASE);
    if (!wait_flag(&c->go_on, 10000))
        c->begin = cudaErrorTimeout;
    c->end = cudaStreamEndCapture(c->s, &c->graph);
    return NULL;
}

struct waiter_job {
    cudaStream_t a, b;
    cudaError_t err;
};

static void *first_wait(void *arg)
{
    struct waiter_job *w = (struct waiter_job *)arg;
    w->err = cuxfer_stream_wait(w->a, w->b);
    if (w->err == cudaSuccess)
        w->err = cuxfer_stream_all_wait(&w->a, 1, w->b);
    return NULL;
}

static void test_global_neighbour(struct bufs *b)
{
    struct global_cap c;
    struct waiter_job w;
    pthread_t tc, tw;
    memset(&c, 0, sizeof c);
    memset(&w, 0, sizeof w);
    c.s = make_stream();
    c.dev = b->dev;
    c.in = b->in;
    w.a = make_stream();
    w.b = make_stream();
    if (pthread_create(&tc, NULL, capture_global, &c) != 0)
        bail("pthread_create failed");
    if (!wait_flag(&c.begun, 10000))
        bail("the capturing thread did not start");
    if (pthread_create(&tw, NULL, first_wait, &w) != 0)
        bail("pthread_create failed");
    pthread_join(tw, NULL);
    __atomic_store_n(&c.go_on, 1, __ATOMIC_RELEASE);
    pthread_join(tc, NULL);
    is_int(cudaSuccess, c.begin, "Global-mode capture in another thread began");
    is_int(cudaSuccess, w.err, "a fresh thread's first cuxfer_stream_wait meanwhile (%s)",
           cudaGetErrorName(w.err));
    is_int(cudaSuccess, c.end, "the Global-mode capture was not invalidated (%s)",
           cudaGetErrorName(c.end));
    if (c.graph)
        GPU_OK(cudaGraphDestroy(c.graph), "destroy that graph");
    GPU_OK(cudaStreamSynchronize(w.a), "the waiter stream completes");
    GPU_MUST(cudaStreamDestroy(c.s));
    GPU_MUST(cudaStreamDestroy(w.a));
    GPU_MUST(cudaStreamDestroy(w.b));
}

/* A host function that holds its stream until *arg is set (10 s at most). */
static void CUDART_CB hold_stream(void *arg)
{
    (void)wait_flag((const int *)arg, 10000);
}

/* A ring of more than 64 slots is fenced 64 streams at a time; every group
 * is checked before any is queued, so a refusal met in the second group
 * leaves the first untouched: slot 0's stream, which would otherwise wait
 * for a held stream, stays idle. */
static void test_ring_groups(cudaStream_t o)
{
    enum { SLOTS = 65 };
    cuxfer_ring r;
    cuxfer_graph g;
    cudaStream_t held = make_stream(), first, last;
    cudaError_t err;
    int go = 0;
    GPU_MUST(cuxfer_ring_create(&r, SLOTS, 64, 64, NULL));
    GPU_MUST(cuxfer_ring_stream(&r, 0, &first));
    GPU_MUST(cuxfer_ring_stream(&r, SLOTS - 1, &last));
    GPU_MUST(cudaStreamSynchronize(first));
    GPU_MUST(cudaLaunchHostFunc(held, hold_stream, &go));
    GPU_OK(cuxfer_graph_begin(o), "ring groups: begin capture");
    GPU_OK(cuxfer_stream_wait(last, o), "the last slot's stream joins the capture");
    cuxfer_clear_reason();
    err = cuxfer_ring_wait(&r, held);
    is_int(cudaErrorStreamCaptureIsolation, err,
           "cuxfer_ring_wait of %d slots, the last captured, for a stream outside refused", SLOTS);
    GPU_OK(cuxfer_stream_wait(o, last), "the last slot's stream joins back");
    GPU_OK(cuxfer_graph_end(&g, o), "the capture ends valid");
    is_int(cudaSuccess, cudaStreamQuery(first),
           "nothing was queued: slot 0 does not wait for the held stream");
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    GPU_OK(cudaStreamSynchronize(held), "the held stream completes");
    GPU_OK(cudaStreamSynchronize(first), "slot 0's stream completes");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy the graph");
    GPU_OK(cuxfer_ring_destroy(&r), "destroy the ring");
    GPU_MUST(cudaStreamDestroy(held));
}

static void test_default_streams(struct bufs *b)
{
    cuxfer_graph g;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_graph_begin(cudaStreamLegacy);
    is_int(cudaErrorInvalidValue, err, "cuxfer_graph_begin(cudaStreamLegacy) refused");
    contains(cuxfer_last_reason(), "legacy", "with a reason naming the legacy stream");
    GPU_OK(cuxfer_graph_begin(cudaStreamPerThread), "cuxfer_graph_begin(cudaStreamPerThread)");
    GPU_OK(cudaMemcpyAsync(b->dev, b->in, BYTES, cudaMemcpyHostToDevice, cudaStreamPerThread),
           "captured upload on the per-thread stream");
    GPU_OK(cudaMemcpyAsync(b->out, b->dev, BYTES, cudaMemcpyDeviceToHost, cudaStreamPerThread),
           "captured download");
    GPU_OK(cuxfer_graph_end(&g, cudaStreamPerThread), "end");
    run_and_check(b, cudaStreamPerThread, &g, NULL, NULL, 400u, "per-thread stream graph");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy");
}

int main(void)
{
    struct bufs b;
    cudaStream_t o, side[SIDES], outside;
    cuxfer_stream_pool pool;
    int i;

    gpu_require(1);
    guard_install(120);
    plan(0);
    GPU_MUST(cudaMallocHost((void **)&b.in, BYTES));
    GPU_MUST(cudaMallocHost((void **)&b.out, BYTES));
    GPU_MUST(cudaMalloc((void **)&b.dev, BYTES));
    b.want = (unsigned char *)malloc(BYTES);
    if (!b.want)
        bail("out of memory");
    o = make_stream();
    outside = make_stream();
    for (i = 0; i < SIDES; ++i)
        side[i] = make_stream();
    GPU_MUST(cuxfer_stream_pool_create(&pool, SIDES, 0, 0));

    is_int(cudaErrorInvalidValue, cuxfer_stream_wait_all(o, NULL, 2),
           "wait_all with a NULL array refused");
    is_int(cudaErrorInvalidValue, cuxfer_stream_all_wait(side, -1, o),
           "all_wait with n < 0 refused");
    GPU_OK(cuxfer_stream_wait_all(o, side, 0), "wait_all of 0 streams is a no-op");
    GPU_OK(cuxfer_stream_all_wait(side, 0, o), "all_wait of 0 streams is a no-op");
    is_int(cudaErrorInvalidValue, cuxfer_stream_pool_wait(NULL, o), "pool_wait(NULL) refused");
    is_int(cudaErrorInvalidValue, cuxfer_stream_wait_pool(o, NULL), "wait_pool(NULL) refused");

    test_captured(&b, o, side, NULL, "streams");
    test_captured(&b, o, pool.streams, &pool, "pool");
    run_and_check(&b, o, NULL, side, NULL, 500u, "ordinary streams, no capture");
    test_isolation(&b, o, outside);
    test_global_neighbour(&b);
    test_ring_groups(o);
    test_default_streams(&b);
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");

    GPU_OK(cuxfer_stream_pool_destroy(&pool), "pool destroy");
    for (i = 0; i < SIDES; ++i)
        GPU_MUST(cudaStreamDestroy(side[i]));
    GPU_MUST(cudaStreamDestroy(o));
    GPU_MUST(cudaStreamDestroy(outside));
    GPU_MUST(cudaFree(b.dev));
    GPU_MUST(cudaFreeHost(b.in));
    GPU_MUST(cudaFreeHost(b.out));
    free(b.want);
    done_testing();
}
