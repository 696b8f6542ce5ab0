/* SPDX-License-Identifier: MIT */
/*
 * gpu.h - gate for tests that need a CUDA device.
 *
 * Without a device a GPU test prints "1..0 # SKIP no CUDA device: <reason>"
 * and exits 0.  CUXFER_REQUIRE_GPU=N in the environment makes fewer than N
 * devices a failure instead (Bail out!, non-zero exit).
 */
#ifndef CUXFER_TESTS_GPU_H
#define CUXFER_TESTS_GPU_H

#include "tap.h"
#include <cuxfer.h>
#include <signal.h>
#include <unistd.h>

/* A GPU test that hangs (a latch never signalled, a wait on a stream held
 * forever) must fail, not stall the suite: once a device is found the test
 * gets CUXFER_TEST_TIMEOUT seconds (default 300), then says so and exits. */
static void gpu_watchdog_fired(int sig)
{
    static const char msg[] = "Bail out! GPU test hung: no result within CUXFER_TEST_TIMEOUT "
                              "seconds\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

static TAP_UNUSED void gpu_watchdog(void)
{
    const char *t = getenv("CUXFER_TEST_TIMEOUT");
    int s = t && *t ? atoi(t) : 300;
    if (s > 0) {
        /* line-buffered, so the points before a hang reach the log */
        setvbuf(stdout, NULL, _IOLBF, 0);
        signal(SIGALRM, gpu_watchdog_fired);
        alarm((unsigned)s);
    }
}

/* Return the number of devices; skip or bail when there are fewer than
 * `need`. */
static TAP_UNUSED int gpu_require(int need)
{
    int n = 0, required = 0;
    const char *req = getenv("CUXFER_REQUIRE_GPU");
    cudaError_t err = cuxfer_device_count(&n);
    if (req && *req)
        required = atoi(req);
    if (err == cudaSuccess && n >= need) {
        gpu_watchdog();
        return n;
    }
    if (required >= need || (required > 0 && err != cudaSuccess)) {
        if (err != cudaSuccess)
            bail("CUXFER_REQUIRE_GPU=%s but no CUDA device: %s", req,
                 cuxfer_last_reason());
        bail("CUXFER_REQUIRE_GPU=%s but only %d GPU(s)", req, n);
    }
    if (err != cudaSuccess)
        skip_all("no CUDA device: %s", cuxfer_last_reason());
    skip_all("needs %d GPUs", need);
}

/* For a test with a CPU part that has run: 1 when a device is there for
 * the GPU part.  Without one, 0 after `nskip` skipped points (0: the
 * caller says what it skips), or Bail out! when CUXFER_REQUIRE_GPU asks
 * for a device; cuxfer_last_reason() still says why there is none. */
static TAP_UNUSED int gpu_present(int nskip)
{
    int n = 0;
    const char *req = getenv("CUXFER_REQUIRE_GPU");
    if (cuxfer_device_count(&n) == cudaSuccess && n > 0)
        return 1;
    if (req && atoi(req) > 0)
        bail("CUXFER_REQUIRE_GPU=%s but no CUDA device: %s", req, cuxfer_last_reason());
    if (nskip > 0)
        skip(nskip, "no CUDA device: %s", cuxfer_last_reason());
    return 0;
}

/* GPU_OK(expr, name): a CUDA call is a test point; on failure name the
 * error, so every return code is checked and visible. */
#define GPU_OK(expr, ...)                                                      \
    do {                                                                       \
        cudaError_t gpu_err_ = (expr);                                         \
        if (!ok(gpu_err_ == cudaSuccess, __VA_ARGS__))                         \
            diag("  %s -> %s (%s) %s", #expr, cudaGetErrorName(gpu_err_),      \
                 cudaGetErrorString(gpu_err_), cuxfer_last_reason());          \
    } while (0)

/* GPU_MUST(expr): setup that the rest of the test needs; bail on failure. */
#define GPU_MUST(expr)                                                         \
    do {                                                                       \
        cudaError_t gpu_err_ = (expr);                                         \
        if (gpu_err_ != cudaSuccess)                                           \
            bail("%s:%d: %s -> %s %s", __FILE__, __LINE__, #expr,              \
                 cudaGetErrorName(gpu_err_), cuxfer_last_reason());            \
    } while (0)

/* DESTROY_IS_SAFE(obj, destroy, what): what every _destroy of the kit
 * promises - on a zeroed object (obj is zeroed first) and on NULL it
 * succeeds; two points. */
#define DESTROY_IS_SAFE(obj, destroy, what)                                    \
    do {                                                                       \
        memset(&(obj), 0, sizeof(obj));                                        \
        GPU_OK(destroy(&(obj)), "destroy of a zeroed " what " is safe");       \
        GPU_OK(destroy(NULL), "destroy of NULL is safe");                      \
    } while (0)

/* Setup: *p made with options chunk_bytes, strategy and threads (0: the
 * defaults), the rest zero. */
static TAP_UNUSED void plan_create(cuxfer_plan2d *p, size_t chunk_bytes, int strategy,
                                   int threads)
{
    cuxfer_plan2d_options o;
    memset(&o, 0, sizeof o);
    o.chunk_bytes = chunk_bytes;
    o.strategy = strategy;
    o.threads = threads;
    GPU_MUST(cuxfer_plan2d_create(p, &o));
}

/* Setup: *p, pinned, h rows at the given pitch, and *v its view of w-byte
 * rows. */
static TAP_UNUSED void pinned_view(void **p, cuxfer_view *v, size_t w, size_t h, size_t pitch)
{
    GPU_MUST(cuxfer_host_alloc(p, pitch * h, 1, 0));
    GPU_MUST(cuxfer_view_wrap(v, *p, pitch, w, h, 1));
}

/* The buffers of a round trip: pinned *src and *dst and device *dev, n
 * bytes each (setup: bails on failure); copy_bufs_free frees the three. */
static TAP_UNUSED void copy_bufs_alloc(unsigned char **src, unsigned char **dst,
                                       unsigned char **dev, size_t n)
{
    GPU_MUST(cudaMallocHost((void **)src, n));
    GPU_MUST(cudaMallocHost((void **)dst, n));
    GPU_MUST(cudaMalloc((void **)dev, n));
}

static TAP_UNUSED void copy_bufs_free(unsigned char *src, unsigned char *dst, unsigned char *dev)
{
    GPU_MUST(cudaFree(dev));
    GPU_MUST(cudaFreeHost(src));
    GPU_MUST(cudaFreeHost(dst));
}

/* Fill with a pattern that depends on the byte's index and a seed, so a
 * shifted or transposed copy never matches by accident. */
static TAP_UNUSED void fill_pattern(void *p, size_t n, unsigned seed)
{
    unsigned char *b = (unsigned char *)p;
    size_t i;
    unsigned x = seed * 2654435761u + 1u;
    for (i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (unsigned char)(x ^ (unsigned)(i >> 8));
    }
}

#endif
