/* SPDX-License-Identifier: MIT */
/* The pinned pool, the planner and the copies composed the way programs
 * combine them (issue 11, part A):
 *  - a block released on stream 0, cudaStreamLegacy or cudaStreamPerThread
 *    while a copy from it is still queued is not handed out again before
 *    the copy ran (4 MiB arrive intact); CUXFER_POOL_IDLE still works;
 *  - a block released on a stream being captured is refused, stays
 *    acquired, and the capture survives;
 *  - with 2 GPUs: a block released on device 0's stream, then on device 1's,
 *    gets an event of the right device, without blocking; a copy between
 *    the devices leaves no reason behind; a failed calibration leaves the
 *    plan's strategy as it was;
 *  - cuxfer_plan2d_copy_async with SPAN and PACK captured in Global,
 *    ThreadLocal and Relaxed mode: the graph replays 3 times byte-exactly
 *    and the plan then makes ordinary copies byte-exactly;
 *  - another thread captures in Global mode while this one acquires
 *    (misses, pending blocks), releases, trims, classifies new pointers
 *    and runs a PACK copy: the capture ends with cudaSuccess and its graph
 *    runs; this thread's capture mode is left as it was;
 *  - cuxfer_copy2d_async refuses overlapping device views and copies
 *    side-by-side ones exactly;
 *  - SPAN, PACK and cuxfer_rois's KERNEL of fresh plans enqueue behind a
 *    stream held by a host function that waits for the enqueuing thread,
 *    and return (the copy kernel is loaded at create, not at its first
 *    launch), byte-exactly; a KERNEL copy on another stream meanwhile
 *    ends while the first is still held (the plan's own stream ties no
 *    stream to another); cuxfer_rois's GATHER down waits for such a
 *    stream, as its man page says, and then puts every tile back.
 * Built twice: tests/composition/pool-planner-ptds is this file compiled with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, where 0 is the per-thread stream. */
#include "sched-helpers.h"
#include <pthread.h>
#include <sched.h>
#include <time.h>

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define BUILD "per-thread build"
#else
#define BUILD "legacy build"
#endif

static int hold_gate;
static void CUDART_CB hold(void *arg)
{
    long i;
    (void)arg;
    for (i = 0; i < 20000000L && !__atomic_load_n(&hold_gate, __ATOMIC_ACQUIRE); ++i)
        sched_yield();
}

static int rows_equal(const cuxfer_view *got, const unsigned char *want, size_t wpitch,
                      int poison);

/* Item 1: the pool on the default streams. */
static void pool_on_default_streams(void)
{
    static const char *const names[] = {"stream 0", "cudaStreamLegacy", "cudaStreamPerThread"};
    const cudaStream_t streams[] = {(cudaStream_t)0, cudaStreamLegacy, cudaStreamPerThread};
    const size_t n = 4u << 20;
    cuxfer_pinned_pool pool;
    unsigned char *want, *back, *dev;
    int k;
    GPU_MUST(cuxfer_pinned_pool_create(&pool, NULL));
    GPU_MUST(cudaMalloc((void **)&dev, n));
    GPU_MUST(cuxfer_host_alloc((void **)&back, n, 1, 0));
    want = (unsigned char *)malloc(n);
    if (!want)
        bail("out of memory");
    for (k = 0; k < 3; ++k) {
        cudaStream_t s = streams[k];
        cuxfer_pinned_block a, b;
        void *first, *second;
        fill_pattern(want, n, (unsigned)(40 + k));
        GPU_MUST(cuxfer_pinned_pool_acquire(&pool, n, &a));
        first = a.ptr;
        memcpy(a.ptr, want, n);
        __atomic_store_n(&hold_gate, 0, __ATOMIC_RELEASE);
        GPU_MUST(cudaLaunchHostFunc(s, hold, NULL));
        GPU_MUST(cudaMemcpyAsync(dev, a.ptr, n, cudaMemcpyHostToDevice, s));
        GPU_OK(cuxfer_pinned_pool_release(&pool, &a, s), "%s (%s): release while the copy is queued",
               names[k], BUILD);
        GPU_OK(cuxfer_pinned_pool_acquire(&pool, n, &b), "%s: acquire meanwhile", names[k]);
        ok(b.ptr != first, "%s: the block under the queued copy is not handed out", names[k]);
        if (b.ptr)
            memset(b.ptr, 0xEE, n); /* would corrupt the copy were it the same block */
        __atomic_store_n(&hold_gate, 1, __ATOMIC_RELEASE);
        GPU_MUST(cudaStreamSynchronize(s));
        GPU_MUST(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
        ok(memcmp(back, want, n) == 0, "%s: 4 MiB of 4 MiB arrived intact", names[k]);
        second = b.ptr; /* the release clears *b */
        GPU_OK(cuxfer_pinned_pool_release(&pool, &b, CUXFER_POOL_IDLE), "%s: release idle",
               names[k]);
        GPU_OK(cuxfer_pinned_pool_acquire(&pool, n, &a), "%s: acquire after the copy", names[k]);
        ok(a.ptr == first || a.ptr == second, "%s: a cached block comes back once idle",
           names[k]);
        GPU_OK(cuxfer_pinned_pool_release(&pool, &a, CUXFER_POOL_IDLE), "%s: release", names[k]);
    }
    free(want);
    GPU_MUST(cuxfer_host_free(back));
    GPU_MUST(cudaFree(dev));
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "destroy the pool");
}

/* A release on a stream being captured: refused, block kept, capture kept. */
static void pool_release_in_capture(void)
{
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block a;
    cudaStream_t s;
    cudaGraph_t g = NULL;
    void *dev;
    GPU_MUST(cuxfer_pinned_pool_create(&pool, NULL));
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cudaMalloc(&dev, 4096));
    GPU_MUST(cuxfer_pinned_pool_acquire(&pool, 4096, &a));
    GPU_MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    GPU_MUST(cudaMemcpyAsync(dev, a.ptr, 4096, cudaMemcpyHostToDevice, s));
    is_int(cudaErrorStreamCaptureUnsupported, cuxfer_pinned_pool_release(&pool, &a, s),
           "release on a stream being captured is refused");
    contains(cuxfer_last_reason(), "being captured", "the reason says why");
    ok(a.ptr != NULL && a.impl != NULL, "the block stays acquired");
    GPU_OK(cudaStreamEndCapture(s, &g), "the capture is still valid");
    if (g)
        GPU_MUST(cudaGraphDestroy(g));
    GPU_OK(cuxfer_pinned_pool_release(&pool, &a, CUXFER_POOL_IDLE), "released idle afterwards");
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "destroy");
    GPU_MUST(cudaFree(dev));
    GPU_MUST(cudaStreamDestroy(s));
}

/* Item 2 and the 2-GPU rules. */
static void two_devices(void)
{
    const size_t n = 1u << 20;
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block a, b;
    cudaStream_t s0, s1;
    unsigned char *d0, *d1, *want, *back;
    void *first;
    double t0, dt;
    cudaError_t err;
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    GPU_MUST(cudaMalloc((void **)&d0, n));
    GPU_MUST(cudaSetDevice(1));
    GPU_MUST(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    GPU_MUST(cudaMalloc((void **)&d1, n));
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cuxfer_host_alloc((void **)&want, n, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&back, n, 1, 0));
    GPU_MUST(cuxfer_pinned_pool_create(&pool, NULL));

    GPU_MUST(cuxfer_pinned_pool_acquire(&pool, n, &a));
    first = a.ptr;
    fill_pattern(a.ptr, n, 7);
    GPU_MUST(cudaMemcpyAsync(d0, a.ptr, n, cudaMemcpyHostToDevice, s0));
    GPU_OK(cuxfer_pinned_pool_release(&pool, &a, s0), "release on device 0's stream");
    GPU_MUST(cudaStreamSynchronize(s0));
    GPU_MUST(cuxfer_pinned_pool_acquire(&pool, n, &a));
    ok(a.ptr == first, "the block comes back");
    fill_pattern(want, n, 8);
    memcpy(a.ptr, want, n);
    __atomic_store_n(&hold_gate, 0, __ATOMIC_RELEASE);
    GPU_MUST(cudaLaunchHostFunc(s1, hold, NULL));
    GPU_MUST(cudaMemcpyAsync(d1, a.ptr, n, cudaMemcpyHostToDevice, s1));
    t0 = now_ms();
    err = cuxfer_pinned_pool_release(&pool, &a, s1); /* device 0 is current */
    dt = now_ms() - t0;
    /* 12.8+ asks the stream for its device; before, the current device
     * is tried, then the others */
    is_int(cudaSuccess, err, "release on device 1's stream with device 0 current");
    ok(dt < 100.0, "the release does not block (%.1f ms)", dt);
    {
        int cur = -1;
        GPU_OK(cudaGetDevice(&cur), "cudaGetDevice");
        is_int(0, cur, "the current device is restored");
    }
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, n, &b), "acquire meanwhile");
    ok(b.ptr != first, "the block under device 1's queued copy is not handed out");
    if (b.ptr)
        memset(b.ptr, 0xEE, n);
    __atomic_store_n(&hold_gate, 1, __ATOMIC_RELEASE);
    GPU_MUST(cudaStreamSynchronize(s1));
    GPU_MUST(cudaMemcpy(back, d1, n, cudaMemcpyDeviceToHost));
    ok(memcmp(back, want, n) == 0, "device 1 received the block intact");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &b, s0), "release the other on device 0 again");
    GPU_MUST(cudaStreamSynchronize(s0));
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "destroy");

    /* a copy between the devices leaves no stale reason */
    {
        cuxfer_view v0, v1;
        GPU_MUST(cuxfer_view_wrap(&v0, d0, 1024, 512, 1024, 1));
        GPU_MUST(cuxfer_view_wrap(&v1, d1, 1024, 512, 1024, 1));
        cuxfer_clear_reason(); /* as CUXFER_CHECK does */
        GPU_OK(cuxfer_copy2d_async(&v1, &v0, s0), "2D copy device 0 -> device 1");
        GPU_MUST(cudaStreamSynchronize(s0));
        is_string("", cuxfer_last_reason(), "a copy that works leaves no reason behind");
    }

    /* a plan of device 0 on device 1's stream: DIRECT, exact */
    {
        const size_t w = 8, h = 30011, hp = 24;
        cuxfer_plan2d p;
        cuxfer_view src, dv1, back;
        void *hb = NULL, *bb = NULL;
        plan_create(&p, 16 * 1024, CUXFER_PLAN_SPAN, 0); /* on device 0 */
        pinned_view(&hb, &src, w, h, hp);
        pinned_view(&bb, &back, w, h, hp);
        GPU_MUST(cudaSetDevice(1));
        GPU_MUST(cuxfer_view_alloc_device(&dv1, w, h, 1));
        GPU_MUST(cudaSetDevice(0));
        fill_pattern(hb, hp * h, 77);
        memset(bb, 0x5A, hp * h);
        ok(cuxfer_plan2d_choose(&p, &dv1, &src) == CUXFER_PLAN_SPAN, "the plan would use SPAN");
        GPU_OK(cuxfer_plan2d_copy_async(&p, &dv1, &src, s1),
               "a device-0 plan copies on device 1's stream");
        GPU_OK(cuxfer_copy2d_async(&back, &dv1, s1), "and back");
        GPU_OK(cudaStreamSynchronize(s1), "sync");
        ok(rows_equal(&back, (const unsigned char *)hb, hp, 0x5A), "byte-exact (DIRECT)");
        is_int(cudaSuccess, cudaGetLastError(), "no error left behind by the detour");
        GPU_OK(cuxfer_plan2d_destroy(&p), "destroy the plan");
        GPU_MUST(cudaSetDevice(1));
        GPU_MUST(cuxfer_view_free(&dv1));
        GPU_MUST(cudaSetDevice(0));
        GPU_MUST(cuxfer_host_free(hb));
        GPU_MUST(cuxfer_host_free(bb));
    }

    /* a calibration that fails (a stream of the other device) keeps the
     * plan's strategy */
    {
        cuxfer_plan2d p;
        plan_create(&p, 1u << 20, CUXFER_PLAN_DIRECT, 0);
        ok(cuxfer_plan2d_calibrate(&p, s1, NULL, NULL, NULL) != cudaSuccess,
           "calibrate on another device's stream fails");
        is_int(CUXFER_PLAN_DIRECT, p.opt.strategy, "the plan's strategy is as it was");
        (void)cudaGetLastError();
        GPU_OK(cuxfer_plan2d_destroy(&p), "destroy the plan");
    }
    GPU_MUST(cudaFree(d0));
    GPU_MUST(cudaSetDevice(1));
    GPU_MUST(cudaFree(d1));
    GPU_MUST(cudaStreamDestroy(s1));
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaStreamDestroy(s0));
    GPU_MUST(cuxfer_host_free(want));
    GPU_MUST(cuxfer_host_free(back));
}

/* Row-by-row comparison; gap bytes of a host destination must keep poison. */
static int rows_equal(const cuxfer_view *got, const unsigned char *want, size_t wpitch,
                      int poison)
{
    size_t y, x, row = got->width * got->elem_size;
    for (y = 0; y < got->height; ++y) {
        const unsigned char *g = (const unsigned char *)got->ptr + y * got->pitch;
        if (memcmp(g, want + y * wpitch, row) != 0) {
            diag("row %zu differs", y);
            return 0;
        }
        for (x = row; poison >= 0 && x < got->pitch; ++x)
            if (g[x] != (unsigned char)poison) {
                diag("gap byte %zu of row %zu written", x, y);
                return 0;
            }
    }
    return 1;
}

/* The planner's SPAN and PACK on the default streams: a round trip, exact. */
static void planner_on_default_streams(void)
{
    static const char *const names[] = {"stream 0", "cudaStreamLegacy", "cudaStreamPerThread"};
    const cudaStream_t streams[] = {(cudaStream_t)0, cudaStreamLegacy, cudaStreamPerThread};
    const size_t w = 8, h = 30011, hp = 24;
    cuxfer_plan2d up, down;
    cuxfer_view src, dev, back;
    void *hb = NULL, *bb = NULL;
    int k;
    plan_create(&up, 16 * 1024, CUXFER_PLAN_SPAN, 0);
    plan_create(&down, 16 * 1024, CUXFER_PLAN_PACK, 0);
    pinned_view(&hb, &src, w, h, hp);
    pinned_view(&bb, &back, w, h, hp);
    GPU_MUST(cuxfer_view_alloc_device(&dev, w, h, 1));
    for (k = 0; k < 3; ++k) {
        cudaStream_t s = streams[k];
        fill_pattern(hb, hp * h, (unsigned)(60 + k));
        memset(bb, 0x5A, hp * h);
        GPU_OK(cuxfer_plan2d_copy_async(&up, &dev, &src, s), "%s (%s): SPAN upload", names[k], BUILD);
        GPU_OK(cuxfer_plan2d_copy_async(&down, &back, &dev, s), "%s: PACK download", names[k]);
        GPU_OK(cudaStreamSynchronize(s), "%s: sync", names[k]);
        ok(rows_equal(&back, (const unsigned char *)hb, hp, 0x5A),
           "%s: SPAN + PACK round trip byte-exact, gaps untouched", names[k]);
    }
    GPU_OK(cuxfer_plan2d_destroy(&up), "destroy");
    GPU_OK(cuxfer_plan2d_destroy(&down), "destroy");
    GPU_MUST(cuxfer_view_free(&dev));
    GPU_MUST(cuxfer_host_free(hb));
    GPU_MUST(cuxfer_host_free(bb));
}

/* A stream held by the caller's host function (a gate, sched-helpers.h)
 * until this thread lets it go, after the enqueue: fresh plans (their copy
 * kernel never launched) enqueue SPAN, PACK and cuxfer_rois's KERNEL
 * behind it and return while it is held.  Under lazy loading a kernel's first launch waits for such a
 * stream, so without the load at create each call would block until the
 * host function gave up (here after 10 s, and reported it), and forever
 * with a host function that waits for this thread as programs do. */
static gate held;

static void hold_stream(cudaStream_t s, double limit_ms)
{
    GPU_MUST(gate_hold_for(&held, s, limit_ms));
}

static int release(cudaStream_t s)
{
    gate_open(&held);
    GPU_MUST(cudaStreamSynchronize(s));
    return !__atomic_load_n(&held.timed_out, __ATOMIC_ACQUIRE);
}

/* n square tiles of side x side bytes, row after row across the first 512
 * bytes of rows of the image hb (pitch 640), into r, and what the dense
 * buffer must then hold (the tiles one after another) into want. */
static void tile_grid(cuxfer_roi *r, unsigned char *want, size_t n, size_t side,
                      const unsigned char *hb)
{
    size_t i, y, per_row = 512 / side;
    for (i = 0; i < n; ++i) {
        r[i].x = (i % per_row) * side;
        r[i].y = (i / per_row) * side;
        r[i].width = r[i].height = side;
        for (y = 0; y < side; ++y)
            memcpy(want + (i * side + y) * side, hb + (r[i].y + y) * 640 + r[i].x, side);
    }
}

/* A held stream destroyed with KERNEL's copy queued on it, and a new
 * stream that gets its handle: the plan's own stream, which last took
 * turns with the destroyed one and still waits for it, must not take
 * turns with the new one (cuxfer_rois(3): it knows a stream by its ID,
 * CUDA 12.0+), or the new stream's copy would wait for the held work and,
 * behind a host function that waits for the caller, never end.  Skipped
 * where no new stream gets the handle while the old one's work is queued;
 * under compute-sanitizer the held stream is let go first, as in
 * behind_a_held_stream (there the same plan's launches on any stream wait
 * for the held ones). */
enum { REUSED_POINTS = 5 };
static void reused_handle(cuxfer_rois *rp, const cuxfer_view *img, const cuxfer_roi *r,
                          size_t tiles, const cuxfer_view *dense, void *dd,
                          const unsigned char *want, const cuxfer_roi *r2, size_t many,
                          const cuxfer_view *dense2, void *dd2, const unsigned char *want2)
{
    enum { TRIES = 256 };
    cudaStream_t h, fresh[TRIES], s3 = NULL;
    unsigned char *got = (unsigned char *)malloc(many * 4 > tiles * 64 ? many * 4 : tiles * 64);
    const char *san = getenv("CUXFER_SANITIZER");
    int n, i, sanitized = san && *san;
    if (!got)
        bail("out of host memory");
    GPU_MUST(cudaStreamCreateWithFlags(&h, cudaStreamNonBlocking));
    GPU_MUST(cudaMemset(dd2, 0xA5, many * 4));
    GPU_MUST(cudaMemset(dd, 0xA5, tiles * 64));
    GPU_MUST(cudaDeviceSynchronize());
    hold_stream(h, 10000);
    GPU_OK(cuxfer_rois_copy_async(rp, CUXFER_ROIS_H2D, img, r2, many, dense2, h),
           "held stream to be destroyed: KERNEL, %zu tiles, enqueued", many);
    GPU_MUST(cudaStreamDestroy(h)); /* its work still runs once let go */
    for (n = 0; n < TRIES && !s3; ++n) {
        GPU_MUST(cudaStreamCreateWithFlags(&fresh[n], cudaStreamNonBlocking));
        if (fresh[n] == h)
            s3 = fresh[n];
    }
    for (i = 0; i < n; ++i)
        if (fresh[i] != s3)
            GPU_MUST(cudaStreamDestroy(fresh[i]));
    if (!s3) {
        skip(REUSED_POINTS - 2, "none of %d new streams got the destroyed held stream's handle",
             TRIES);
    } else {
        diag("new stream number %d got the destroyed held stream's handle", n);
        GPU_OK(cuxfer_rois_copy_async(rp, CUXFER_ROIS_H2D, img, r, tiles, dense, s3),
               "the same plan on the new stream: %zu tiles enqueued", tiles);
        if (sanitized) {
            gate_open(&held);
            skip(1, "under compute-sanitizer (%s): the new stream waits for the held one", san);
        }
        GPU_MUST(cudaStreamSynchronize(s3));
        if (!sanitized)
            ok(!__atomic_load_n(&held.timed_out, __ATOMIC_ACQUIRE),
               "the new stream's copy ended while the destroyed stream's work still waited");
        GPU_MUST(cudaMemcpy(got, dd, tiles * 64, cudaMemcpyDeviceToHost));
        ok(memcmp(got, want, tiles * 64) == 0, "the new stream's tiles byte-exact");
    }
    gate_open(&held);
    GPU_MUST(cudaDeviceSynchronize()); /* the destroyed stream's work */
    if (s3)
        GPU_MUST(cudaStreamDestroy(s3));
    GPU_MUST(cudaMemcpy(got, dd2, many * 4, cudaMemcpyDeviceToHost));
    ok(memcmp(got, want2, many * 4) == 0, "the destroyed held stream's %zu tiles byte-exact once "
       "let go", many);
    /* Leave dd as the caller had it (the tiles), also where no new stream
     * got the handle and so nothing rewrote it after the poison above:
     * the caller's GATHER download reads it next. */
    GPU_MUST(cudaMemcpy(dd, want, tiles * 64, cudaMemcpyHostToDevice));
    free(got);
}

static void behind_a_held_stream(void)
{
    const size_t w = 16, h = 100003, hp = 40, tiles = 4096;
    cuxfer_plan2d up, down;
    cuxfer_rois rp;
    cuxfer_rois_options ro;
    cuxfer_view src, dev, back, img, dense;
    cuxfer_roi *r;
    unsigned char *hb = NULL, *bb = NULL, *want, *got;
    void *dd = NULL;
    cudaStream_t s;
    size_t i, y;
    int kernel;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cuxfer_host_alloc((void **)&hb, hp * h, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&bb, hp * h, 1, 0));
    GPU_MUST(cuxfer_view_wrap(&src, hb, hp, w, h, 1));
    GPU_MUST(cuxfer_view_wrap(&back, bb, hp, w, h, 1));
    GPU_MUST(cuxfer_view_alloc_device(&dev, w, h, 1));
    fill_pattern(hb, hp * h, 71);
    memset(bb, 0x5A, hp * h);
    plan_create(&up, 0, CUXFER_PLAN_SPAN, 0);
    plan_create(&down, 0, CUXFER_PLAN_PACK, 0);
    kernel = down.kernel != NULL;
    diag("the copy kernel %s", kernel ? "loaded (CUDA 12.5+)" : "is not there: PACK packs on the copy engine");
    hold_stream(s, 10000);
    GPU_OK(cuxfer_plan2d_copy_async(&up, &dev, &src, s), "held stream: SPAN upload enqueued");
    GPU_OK(cuxfer_plan2d_copy_async(&down, &back, &dev, s), "held stream: PACK download enqueued");
    ok(release(s), "both calls returned while the stream was held (the host function was let go, "
                   "not timed out)");
    ok(rows_equal(&back, hb, hp, 0x5A), "held stream: SPAN + PACK round trip byte-exact, gaps untouched");
    GPU_OK(cuxfer_plan2d_destroy(&up), "destroy");
    GPU_OK(cuxfer_plan2d_destroy(&down), "destroy");

    /* cuxfer_rois, KERNEL forced where there is a kernel: 4096 tiles of 8x8
     * (8-byte rows) of a 512 x 512 image at pitch 640 to the dense buffer. */
    memset(&ro, 0, sizeof ro);
    ro.threads = 2;
    ro.strategy = kernel ? CUXFER_ROIS_KERNEL : CUXFER_ROIS_AUTO;
    GPU_MUST(cuxfer_rois_create(&rp, &ro));
    r = (cuxfer_roi *)malloc(tiles * sizeof *r);
    want = (unsigned char *)malloc(tiles * 64);
    got = (unsigned char *)malloc(tiles * 64);
    if (!r || !want || !got)
        bail("out of host memory");
    tile_grid(r, want, tiles, 8, hb);
    GPU_MUST(cuxfer_view_wrap(&img, hb, 640, 512, 512, 1));
    GPU_MUST(cudaMalloc(&dd, tiles * 64));
    GPU_MUST(cudaMemset(dd, 0xA5, tiles * 64));
    GPU_MUST(cudaDeviceSynchronize());
    GPU_MUST(cuxfer_view_wrap(&dense, dd, tiles * 64, tiles * 64, 1, 1));
    hold_stream(s, 10000);
    GPU_OK(cuxfer_rois_copy_async(&rp, CUXFER_ROIS_H2D, &img, r, tiles, &dense, s),
           "held stream: cuxfer_rois (%s) enqueued", kernel ? "KERNEL" : "AUTO");
    ok(release(s), "cuxfer_rois returned while the stream was held");
    GPU_MUST(cudaMemcpy(got, dd, tiles * 64, cudaMemcpyDeviceToHost));
    ok(memcmp(got, want, tiles * 64) == 0, "held stream: every tile byte-exact");

    /* More launches than staging slots: 40960 tiles of 2x2 are five
     * launches of at most 8192 tiles, CUXFER_ROIS_SLOTS (3) slots; the
     * fourth launch waited on the host for the first (queued behind the
     * held stream) and so for the host function. */
    {
        const size_t many = 40960;
        cuxfer_roi *r2 = (cuxfer_roi *)malloc(many * sizeof *r2);
        unsigned char *want2 = (unsigned char *)malloc(many * 4), *got2 = (unsigned char *)malloc(many * 4);
        void *dd2 = NULL;
        cuxfer_view dense2;
        if (!r2 || !want2 || !got2)
            bail("out of host memory");
        tile_grid(r2, want2, many, 2, hb);
        GPU_MUST(cudaMalloc(&dd2, many * 4));
        GPU_MUST(cudaMemset(dd2, 0xA5, many * 4));
        GPU_MUST(cudaDeviceSynchronize());
        GPU_MUST(cuxfer_view_wrap(&dense2, dd2, many * 4, many * 4, 1, 1));
        for (i = 0; i < 2; ++i) { /* the second time the extra slots are reused */
            GPU_MUST(cudaMemset(dd2, 0xA5, many * 4));
            GPU_MUST(cudaDeviceSynchronize());
            hold_stream(s, 10000);
            GPU_OK(cuxfer_rois_copy_async(&rp, CUXFER_ROIS_H2D, &img, r2, many, &dense2, s),
                   "held stream: cuxfer_rois (%s), %zu tiles, enqueued (round %zu)",
                   kernel ? "KERNEL" : "AUTO", many, i + 1);
            ok(release(s), "it returned while the stream was held (more launches than slots)");
            GPU_MUST(cudaMemcpy(got2, dd2, many * 4, cudaMemcpyDeviceToHost));
            ok(memcmp(got2, want2, many * 4) == 0, "held stream: all %zu tiles byte-exact", many);
        }
        /* KERNEL's launches take turns on the plan's own stream: that must
         * not tie another stream to the held one.  While s holds a copy
         * of many launches, the same plan's copy on s2 (four launches)
         * ends before the host function lets s go.  Not under
         * compute-sanitizer (make check-sanitizer sets CUXFER_SANITIZER):
         * there, with every tool, s2's launches of the plan's kernel waited
         * for the held ones, while a copy of another plan on s2, or plain
         * CUDA, did not; so there s is let go first and the copies are
         * checked. */
        if (kernel) {
            const char *san = getenv("CUXFER_SANITIZER");
            int sanitized = san && *san, let_go = 1;
            cudaStream_t s2;
            GPU_MUST(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
            GPU_MUST(cudaMemset(dd2, 0xA5, many * 4));
            GPU_MUST(cudaMemset(dd, 0xA5, tiles * 64));
            GPU_MUST(cudaDeviceSynchronize());
            hold_stream(s, 10000);
            GPU_OK(cuxfer_rois_copy_async(&rp, CUXFER_ROIS_H2D, &img, r2, many, &dense2, s),
                   "held stream: KERNEL, %zu tiles, enqueued", many);
            GPU_OK(cuxfer_rois_copy_async(&rp, CUXFER_ROIS_H2D, &img, r, tiles, &dense, s2),
                   "the same plan on another stream meanwhile: %zu tiles enqueued", tiles);
            if (sanitized) {
                let_go = release(s);
                skip(1, "under compute-sanitizer (%s): the other stream waits for the held one",
                     san);
            }
            GPU_MUST(cudaStreamSynchronize(s2));
            if (!sanitized)
                ok(!__atomic_load_n(&held.timed_out, __ATOMIC_ACQUIRE),
                   "the other stream's copy ended while the held stream still waited");
            GPU_MUST(cudaMemcpy(got, dd, tiles * 64, cudaMemcpyDeviceToHost));
            ok(memcmp(got, want, tiles * 64) == 0, "the other stream's tiles byte-exact");
            if (!sanitized)
                let_go = release(s);
            ok(let_go, "the held stream was let go, not timed out");
            GPU_MUST(cudaMemcpy(got2, dd2, many * 4, cudaMemcpyDeviceToHost));
            ok(memcmp(got2, want2, many * 4) == 0, "then the held stream's %zu tiles byte-exact",
               many);
            GPU_MUST(cudaStreamDestroy(s2));
            reused_handle(&rp, &img, r, tiles, &dense, dd, want, r2, many, &dense2, dd2, want2);
        } else {
            skip(6 + REUSED_POINTS, "KERNEL needs the CUDA 12.5 runtime");
        }
        GPU_MUST(cudaFree(dd2));
        free(r2);
        free(want2);
        free(got2);
    }
    GPU_OK(cuxfer_rois_destroy(&rp), "destroy");

    /* GATHER down works on this thread and returns once the host view
     * holds every tile (cuxfer_rois(3)): behind a held stream it waits
     * until the host function lets go - here until it gives up, after a
     * bound of 1 s; with one that waits for this thread, forever.  The
     * tiles come back into a poisoned copy of the image, gaps untouched. */
    ro.strategy = CUXFER_ROIS_GATHER;
    GPU_MUST(cuxfer_rois_create(&rp, &ro));
    memset(bb, 0x5A, 640 * 512);
    GPU_MUST(cuxfer_view_wrap(&img, bb, 640, 512, 512, 1));
    hold_stream(s, 1000);
    GPU_OK(cuxfer_rois_copy_async(&rp, CUXFER_ROIS_D2H, &img, r, tiles, &dense, s),
           "held stream: cuxfer_rois GATHER D2H");
    ok(__atomic_load_n(&held.timed_out, __ATOMIC_ACQUIRE),
       "GATHER D2H waited for the held stream (returned only after the host function gave up)");
    (void)release(s);
    {
        int good = 1;
        for (y = 0; y < 512 && good; ++y) {
            size_t x;
            for (x = 0; x < 640; ++x) {
                unsigned char e = x < 512 ? hb[y * 640 + x] : 0x5A;
                if (bb[y * 640 + x] != e) {
                    diag("GATHER D2H: byte %zu of row %zu is %u, want %u", x, y,
                         bb[y * 640 + x], e);
                    good = 0;
                    break;
                }
            }
        }
        ok(good, "held stream: GATHER D2H put every tile back, gaps untouched");
    }
    GPU_OK(cuxfer_rois_destroy(&rp), "destroy");
    free(r);
    free(want);
    free(got);
    GPU_MUST(cudaFree(dd));
    GPU_MUST(cuxfer_view_free(&dev));
    GPU_MUST(cuxfer_host_free(hb));
    GPU_MUST(cuxfer_host_free(bb));
    GPU_MUST(cudaStreamDestroy(s));
}

/* Item 3: SPAN and PACK captured in each mode, 3 replays, then ordinary. */
static void planner_in_graphs(void)
{
    static const enum cudaStreamCaptureMode modes[] = {
        cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
        cudaStreamCaptureModeRelaxed};
    static const char *const mname[] = {"Global", "ThreadLocal", "Relaxed"};
    const size_t w = 8, h = 20011, hp = 19; /* narrow rows, odd pitch, many chunks */
    cudaStream_t s;
    int si, mi, r;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (si = 0; si < 2; ++si) {
        int strategy = si == 0 ? CUXFER_PLAN_SPAN : CUXFER_PLAN_PACK;
        const char *sn = si == 0 ? "SPAN" : "PACK";
        cuxfer_plan2d p;
        cuxfer_view host, dev, ref;
        void *hb = NULL, *rb = NULL;
        plan_create(&p, 16 * 1024, strategy, 4);
        pinned_view(&hb, &host, w, h, hp);
        pinned_view(&rb, &ref, w, h, hp);
        GPU_MUST(cuxfer_view_alloc_device(&dev, w, h, 1));
        ok(cuxfer_plan2d_choose(&p, si == 0 ? &dev : &host, si == 0 ? &host : &dev) == strategy,
           "%s: the plan would use %s", sn, sn);
        for (mi = 0; mi < 3; ++mi) {
            cudaGraph_t g = NULL;
            cudaGraphExec_t x = NULL;
            int good = 1;
            /* an ordinary copy first, so the plan's events hold real records */
            fill_pattern(ref.ptr, hp * h, (unsigned)(100 + mi));
            if (si == 0) {
                memcpy(host.ptr, ref.ptr, hp * h);
                GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &host, s), "%s %s: ordinary copy before", sn,
                       mname[mi]);
            } else {
                GPU_MUST(cuxfer_copy2d_async(&dev, &ref, s));
                memset(host.ptr, 0x5A, hp * h);
                GPU_OK(cuxfer_plan2d_copy_async(&p, &host, &dev, s), "%s %s: ordinary copy before", sn,
                       mname[mi]);
            }
            GPU_MUST(cudaStreamSynchronize(s));
            GPU_MUST(cudaStreamBeginCapture(s, modes[mi]));
            if (si == 0)
                GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &host, s), "%s: captured in %s mode", sn,
                       mname[mi]);
            else
                GPU_OK(cuxfer_plan2d_copy_async(&p, &host, &dev, s), "%s: captured in %s mode", sn,
                       mname[mi]);
            GPU_OK(cudaStreamEndCapture(s, &g), "%s %s: the capture ends cleanly", sn, mname[mi]);
            if (!g)
                bail("no graph");
            GPU_MUST(cudaGraphInstantiateWithFlags(&x, g, 0));
            for (r = 0; r < 3; ++r) {
                /* new data every replay: the graph must really copy */
                fill_pattern(ref.ptr, hp * h, (unsigned)(200 + 10 * mi + r));
                if (si == 0) {
                    memcpy(host.ptr, ref.ptr, hp * h);
                    GPU_MUST(cudaMemset2DAsync(dev.ptr, dev.pitch, 0xA5, w, h, s));
                } else {
                    GPU_MUST(cuxfer_copy2d_async(&dev, &ref, s));
                    memset(host.ptr, 0x5A, hp * h);
                }
                GPU_OK(cudaGraphLaunch(x, s), "%s %s: launch %d", sn, mname[mi], r + 1);
                GPU_MUST(cudaStreamSynchronize(s));
                if (si == 0) {
                    cuxfer_view chk;
                    void *cb = NULL;
                    GPU_MUST(cuxfer_host_alloc(&cb, hp * h, 1, 0));
                    memset(cb, 0x5A, hp * h);
                    GPU_MUST(cuxfer_view_wrap(&chk, cb, hp, w, h, 1));
                    GPU_MUST(cuxfer_copy2d_async(&chk, &dev, s));
                    GPU_MUST(cudaStreamSynchronize(s));
                    good &= rows_equal(&chk, (const unsigned char *)ref.ptr, hp, 0x5A);
                    GPU_MUST(cuxfer_host_free(cb));
                } else {
                    good &= rows_equal(&host, (const unsigned char *)ref.ptr, hp, 0x5A);
                }
            }
            ok(good, "%s %s: 3 replays byte-exact%s", sn, mname[mi],
               si ? ", gap bytes untouched" : "");
            GPU_MUST(cudaGraphExecDestroy(x));
            GPU_MUST(cudaGraphDestroy(g));
            /* ordinary copies afterwards, twice (the plan's ring and events) */
            for (r = 0; r < 2; ++r) {
                fill_pattern(ref.ptr, hp * h, (unsigned)(300 + 10 * mi + r));
                if (si == 0) {
                    cuxfer_view chk;
                    void *cb = NULL;
                    memcpy(host.ptr, ref.ptr, hp * h);
                    GPU_MUST(cudaMemset2DAsync(dev.ptr, dev.pitch, 0xA5, w, h, s));
                    GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &host, s), "%s %s: ordinary copy %d after",
                           sn, mname[mi], r + 1);
                    GPU_MUST(cuxfer_host_alloc(&cb, hp * h, 1, 0));
                    memset(cb, 0x5A, hp * h);
                    GPU_MUST(cuxfer_view_wrap(&chk, cb, hp, w, h, 1));
                    GPU_MUST(cuxfer_copy2d_async(&chk, &dev, s));
                    GPU_MUST(cudaStreamSynchronize(s));
                    ok(rows_equal(&chk, (const unsigned char *)ref.ptr, hp, 0x5A),
                       "%s %s: ordinary copy %d after the graph byte-exact", sn, mname[mi], r + 1);
                    GPU_MUST(cuxfer_host_free(cb));
                } else {
                    GPU_MUST(cuxfer_copy2d_async(&dev, &ref, s));
                    memset(host.ptr, 0x5A, hp * h);
                    GPU_OK(cuxfer_plan2d_copy_async(&p, &host, &dev, s), "%s %s: ordinary copy %d after",
                           sn, mname[mi], r + 1);
                    GPU_MUST(cudaStreamSynchronize(s));
                    ok(rows_equal(&host, (const unsigned char *)ref.ptr, hp, 0x5A),
                       "%s %s: ordinary copy %d after the graph byte-exact", sn, mname[mi], r + 1);
                }
            }
        }
        GPU_OK(cuxfer_plan2d_destroy(&p), "%s: destroy the plan", sn);
        GPU_MUST(cuxfer_view_free(&dev));
        GPU_MUST(cuxfer_host_free(hb));
        GPU_MUST(cuxfer_host_free(rb));
    }
    GPU_MUST(cudaStreamDestroy(s));
}

/* Item 7: a Global-mode capture in another thread survives the pool. */
struct capturer {
    cudaStream_t s;
    unsigned char *dev;
    int started, finish;
    cudaError_t begin, end, launch;
    cudaGraph_t g;
};

static void *capture_thread(void *arg)
{
    struct capturer *c = (struct capturer *)arg;
    c->begin = cudaStreamBeginCapture(c->s, cudaStreamCaptureModeGlobal);
    if (c->begin == cudaSuccess) {
        (void)cudaMemsetAsync(c->dev, 0x11, 4096, c->s);
    }
    __atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&c->finish, __ATOMIC_ACQUIRE))
        sched_yield();
    if (c->begin == cudaSuccess) {
        (void)cudaMemsetAsync(c->dev + 4096, 0x22, 4096, c->s);
        c->end = cudaStreamEndCapture(c->s, &c->g);
    }
    return NULL;
}

#define PACK_ROWS (512 * 300) /* 8-byte rows, 4096-byte chunks: 300 chunks */
static void global_capture_elsewhere(void)
{
    struct capturer c;
    pthread_t th;
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block a, b, m;
    cudaStream_t s;
    cudaGraphExec_t x = NULL;
    unsigned char *dev, *fresh, *back;
    cuxfer_plan2d p;
    cuxfer_view hv, dv;
    void *first;
    enum cudaStreamCaptureMode mode;
    int i, good = 1;

    memset(&c, 0, sizeof c);
    GPU_MUST(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cudaMalloc((void **)&c.dev, 8192));
    GPU_MUST(cudaMalloc((void **)&dev, 1u << 20));
    GPU_MUST(cudaMalloc((void **)&fresh, 1u << 20)); /* classified first inside the window */
    GPU_MUST(cuxfer_host_alloc((void **)&back, 1u << 20, 1, 0));
    GPU_MUST(cuxfer_pinned_pool_create(&pool, NULL));
    plan_create(&p, 4096, CUXFER_PLAN_PACK, 0);
    GPU_MUST(cuxfer_view_alloc_device(&dv, 8, PACK_ROWS, 1));
    GPU_MUST(cuxfer_view_alloc_host(&hv, 16, PACK_ROWS, 1, 0));
    GPU_MUST(cudaMemsetAsync(dv.ptr, 0x33, dv.pitch * dv.height, s));
    GPU_MUST(cudaStreamSynchronize(s));
    hv.width = 8; /* 8-byte rows in a 16-byte pitch */

    if (pthread_create(&th, NULL, capture_thread, &c) != 0)
        bail("pthread_create");
    while (!__atomic_load_n(&c.started, __ATOMIC_ACQUIRE))
        sched_yield();
    /* -- while the other thread captures in Global mode -- */
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 1u << 20, &a), "acquire (a miss: cudaHostAlloc)");
    first = a.ptr;
    __atomic_store_n(&hold_gate, 0, __ATOMIC_RELEASE);
    GPU_OK(cudaLaunchHostFunc(s, hold, NULL), "hold the other stream");
    GPU_OK(cudaMemcpyAsync(dev, a.ptr, 1u << 20, cudaMemcpyHostToDevice, s), "queue a copy");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &a, s), "release on a stream (event made, recorded)");
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 1u << 20, &b),
           "acquire past a pending block (cudaEventQuery) and miss again");
    ok(b.ptr != first, "the pending block was not handed out");
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 3000, &m), "acquire another class (a miss)");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &m, CUXFER_POOL_IDLE), "release idle");
    /* open the gate first: cudaFreeHost may wait for the device, and the
     * scatters below need CUDA's host-function thread */
    __atomic_store_n(&hold_gate, 1, __ATOMIC_RELEASE);
    GPU_OK(cuxfer_pinned_pool_trim(&pool), "trim (cudaFreeHost of an idle block)");
    GPU_OK(cuxfer_copy_async(dev, fresh, 4096, s),
           "a copy classifying new pointers (cudaPointerGetAttributes)");
    GPU_OK(cuxfer_plan2d_copy_async(&p, &hv, &dv, s),
           "a PACK copy of 300 chunks, more than its 256 records (cudaStreamQuery)");
    /* -- end of the window -- */
    __atomic_store_n(&c.finish, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    is_int(cudaSuccess, c.begin, "the other thread began a Global capture");
    is_int(cudaSuccess, c.end, "its capture ends with cudaSuccess");
    if (c.end == cudaSuccess && c.g) {
        unsigned char hb[8192];
        GPU_OK(cudaGraphInstantiateWithFlags(&x, c.g, 0), "its graph instantiates");
        GPU_OK(cudaGraphLaunch(x, c.s), "and launches");
        GPU_MUST(cudaStreamSynchronize(c.s));
        GPU_MUST(cudaMemcpy(hb, c.dev, sizeof hb, cudaMemcpyDeviceToHost));
        for (i = 0; i < 8192; ++i)
            good &= hb[i] == (i < 4096 ? 0x11 : 0x22);
        ok(good, "and did what was captured");
        GPU_MUST(cudaGraphExecDestroy(x));
        GPU_MUST(cudaGraphDestroy(c.g));
    }
    GPU_MUST(cudaStreamSynchronize(s));
    good = 1;
    for (i = 0; i < PACK_ROWS; ++i) {
        const unsigned char *row = (const unsigned char *)hv.ptr + (size_t)i * hv.pitch;
        good &= row[0] == 0x33 && row[7] == 0x33;
    }
    ok(good, "the PACK copy of that window is right");
    mode = cudaStreamCaptureModeGlobal;
    GPU_MUST(cudaThreadExchangeStreamCaptureMode(&mode));
    is_int(cudaStreamCaptureModeGlobal, mode, "this thread's capture mode was left as it was");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &b, CUXFER_POOL_IDLE), "release");
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "destroy the pool");
    GPU_OK(cuxfer_plan2d_destroy(&p), "destroy the plan");
    GPU_MUST(cuxfer_view_free(&dv));
    hv.width = 16;
    GPU_MUST(cuxfer_view_free(&hv));
    GPU_MUST(cudaFree(c.dev));
    GPU_MUST(cudaFree(dev));
    GPU_MUST(cudaFree(fresh));
    GPU_MUST(cuxfer_host_free(back));
    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaStreamDestroy(c.s));
}

/* Item 8 on the device: overlap refused, side by side exact. */
static void overlap_on_device(void)
{
    const size_t w = 64, h = 255, pitch = 256;
    unsigned char *d, *img, *want;
    cuxfer_view full, left, right, shifted;
    cuxfer_roi rl = {0, 0, w, h}, rr = {w, 0, w, h}, rs = {w / 2, 1, w, h - 1};
    cudaStream_t s;
    size_t y;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cudaMalloc((void **)&d, pitch * h));
    img = (unsigned char *)malloc(pitch * h);
    want = (unsigned char *)malloc(pitch * h);
    if (!img || !want)
        bail("out of memory");
    fill_pattern(img, pitch * h, 5);
    GPU_MUST(cudaMemcpy(d, img, pitch * h, cudaMemcpyHostToDevice));
    /* A pageable cudaMemcpy may return before its DMA lands, and s is
     * non-blocking: without this the copy below can race the upload. */
    GPU_MUST(cudaDeviceSynchronize());
    GPU_MUST(cuxfer_view_wrap(&full, d, pitch, pitch, h, 1));
    GPU_MUST(cuxfer_view_sub(&full, rl, &left));
    GPU_MUST(cuxfer_view_sub(&full, rr, &right));
    GPU_MUST(cuxfer_view_sub(&full, rs, &shifted));
    left.height = h - 1;
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_async(&shifted, &left, s),
           "overlapping device views are refused");
    contains(cuxfer_last_reason(), "overlap", "with a reason");
    left.height = h;
    GPU_OK(cuxfer_copy2d_async(&right, &left, s), "side-by-side views of one image copy");
    GPU_MUST(cudaStreamSynchronize(s));
    memcpy(want, img, pitch * h);
    for (y = 0; y < h; ++y)
        memmove(want + y * pitch + w, want + y * pitch, w);
    GPU_MUST(cudaMemcpy(img, d, pitch * h, cudaMemcpyDeviceToHost));
    ok(memcmp(img, want, pitch * h) == 0, "byte-exact, the rest of the image untouched");
    free(img);
    free(want);
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaStreamDestroy(s));
}

int main(void)
{
    int n = gpu_require(1);
    plan(0);
    diag("%s, CUDA runtime %d", BUILD, CUDART_VERSION);
    GPU_MUST(cudaSetDevice(0));
    pool_on_default_streams();
    pool_release_in_capture();
    behind_a_held_stream(); /* first: no plan's kernel has been launched yet */
    planner_on_default_streams();
    planner_in_graphs();
    global_capture_elsewhere();
    overlap_on_device();
    if (n >= 2)
        two_devices();
    else
        skip(1, "needs 2 GPUs: pool and plan across devices");
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
    done_testing();
}
