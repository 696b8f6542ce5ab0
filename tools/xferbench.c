/*
 * xferbench - cuxfer against raw CUDA, side by side, in one process.
 *
 * Every case runs the raw CUDA call and the cuxfer call back to back on the
 * same buffers, and reports both, their ratio and PASS/MISS against the
 * project's target (../shared/PERF.md).  Timing follows nvbandwidth: a
 * host function holds the stream until all copies of a repetition are
 * queued, so enqueue cost stays out of link measurements; events time the
 * copies; the median of the repetitions is reported with its coefficient
 * of variation.  Every case verifies the bytes it moved.
 */
#include <cuxfer.h>

#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB ((size_t)1 << 20)

static int reps = 15;
static size_t link_bytes = 256 * MIB;
static int quick;
static enum { OUT_TABLE, OUT_JSON, OUT_CSV } out = OUT_TABLE;
static const char *only;
static int misses;
static int rows_printed;

/* Abort the run on any CUDA failure: a benchmark must not report numbers
 * from a failed copy. */
#define BENCH_CHECK(expr)                                                      \
    do {                                                                       \
        cudaError_t e_ = (expr);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "xferbench: %s:%d: %s: %s %s\n", __FILE__,         \
                    __LINE__, #expr, cudaGetErrorName(e_),                     \
                    cuxfer_last_reason());                                     \
            exit(5);                                                           \
        }                                                                      \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* --- the gate: a host function that holds a stream until released ------ */

static int gate_flag;

static void CUDART_CB gate_fn(void *arg)
{
    int *g = (int *)arg;
    double t0 = now_us();
    /* Bounded: never hold the stream more than 20 s, even if the releasing
     * thread died. */
    while (!__atomic_load_n(g, __ATOMIC_ACQUIRE) && now_us() - t0 < 20e6)
        sched_yield();
}

static void gate_close(cudaStream_t s)
{
    __atomic_store_n(&gate_flag, 0, __ATOMIC_RELEASE);
    BENCH_CHECK(cudaLaunchHostFunc(s, gate_fn, &gate_flag));
}

static void gate_open(void) { __atomic_store_n(&gate_flag, 1, __ATOMIC_RELEASE); }

/* --- statistics --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stat {
    double median, cv;
} stat;

static stat stats(double *v, int n)
{
    stat s;
    double mean = 0, var = 0;
    int i;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    for (i = 0; i < n; ++i)
        mean += v[i];
    mean /= n;
    for (i = 0; i < n; ++i)
        var += (v[i] - mean) * (v[i] - mean);
    s.cv = mean > 0 ? sqrt(var / n) / mean : 0;
    return s;
}

/* --- reporting ------------------------------------------------------------ */

/* One row: a case, the raw and cuxfer figures (unit), the ratio
 * cuxfer/raw (or raw/cuxfer for costs, `lower_better`), the target. */
static void report(const char *name, const char *unit, stat raw, stat cux, int lower_better,
                   double target, const char *target_text)
{
    double ratio = cux.median / raw.median; /* for costs: lower is better */
    int pass = target <= 0 ? 1 : lower_better ? ratio <= target : ratio >= target;
    const char *verdict = target <= 0 ? "-" : pass ? "PASS" : "MISS";
    if (target > 0 && !pass)
        ++misses;
    if (out == OUT_JSON) {
        printf("%s{\"case\":\"%s\",\"unit\":\"%s\",\"raw\":%.4f,\"raw_cv\":%.4f,"
               "\"cuxfer\":%.4f,\"cuxfer_cv\":%.4f,\"ratio\":%.4f,\"target\":\"%s\","
               "\"verdict\":\"%s\"}",
               rows_printed ? ",\n " : "[\n ", name, unit, raw.median, raw.cv, cux.median,
               cux.cv, ratio, target_text, verdict);
    } else if (out == OUT_CSV) {
        if (!rows_printed)
            printf("case,unit,raw,raw_cv,cuxfer,cuxfer_cv,ratio,target,verdict\n");
        printf("%s,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%s\n", name, unit, raw.median, raw.cv,
               cux.median, cux.cv, ratio, target_text, verdict);
    } else {
        if (!rows_printed)
            printf("%-34s %-6s %10s %6s %10s %6s %7s  %-10s %s\n", "case", "unit", "raw",
                   "cv", "cuxfer", "cv", "ratio", "target", "");
        printf("%-34s %-6s %10.3f %5.1f%% %10.3f %5.1f%% %7.3f  %-10s %s\n", name, unit,
               raw.median, raw.cv * 100, cux.median, cux.cv * 100, ratio, target_text,
               verdict);
    }
    fflush(stdout);
    ++rows_printed;
}

static int want(const char *name)
{
    return !only || strstr(name, only) != NULL;
}

/* --- buffers -------------------------------------------------------------- */

static void *pinned(size_t n)
{
    void *p = NULL;
    BENCH_CHECK(cuxfer_host_alloc(&p, n, 1, 0));
    return p;
}

static void *device(size_t n)
{
    void *p = NULL;
    BENCH_CHECK(cudaMalloc(&p, n));
    return p;
}

static void fill(void *p, size_t n, unsigned seed)
{
    unsigned char *b = (unsigned char *)p;
    size_t i;
    unsigned x = seed * 2654435761u + 7u;
    for (i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
    }
}

static void verify(const void *a, const void *b, size_t n, const char *what)
{
    if (memcmp(a, b, n) != 0) {
        fprintf(stderr, "xferbench: %s: data verification FAILED\n", what);
        exit(1);
    }
}

/* --- 1D link -------------------------------------------------------------- */

typedef cudaError_t (*copy1d_fn)(void *dst, const void *src, size_t n, cudaStream_t s);

static cudaError_t raw_copy(void *dst, const void *src, size_t n, cudaStream_t s)
{
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
}

static cudaError_t cux_copy(void *dst, const void *src, size_t n, cudaStream_t s)
{
    return cuxfer_copy_async(dst, src, n, s);
}

/* GB/s of one direction, `copies` copies of n bytes per repetition. */
static stat time_1d(copy1d_fn f, void *dst, const void *src, size_t n, int copies,
                    cudaStream_t s, cuxfer_timer *t)
{
    double v[64];
    float ms;
    int r, c;
    for (r = -2; r < reps; ++r) {
        gate_close(s);
        BENCH_CHECK(cuxfer_timer_start(t, s));
        for (c = 0; c < copies; ++c)
            BENCH_CHECK(f(dst, src, n, s));
        BENCH_CHECK(cuxfer_timer_stop(t, s));
        gate_open();
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
        if (r >= 0)
            v[r] = cuxfer_gbps(n * (size_t)copies, ms);
    }
    return stats(v, reps);
}

/* Both directions at once on two streams; GB/s counted over both. */
static stat time_bidir(copy1d_fn f, void *d_up, const void *h_up, void *h_down,
                       const void *d_down, size_t n, cudaStream_t s1, cudaStream_t s2,
                       cuxfer_timer *t)
{
    double v[64];
    float ms;
    int r;
    for (r = -2; r < reps; ++r) {
        gate_close(s1);
        BENCH_CHECK(cuxfer_timer_start(t, s1));
        BENCH_CHECK(cuxfer_stream_wait(s2, s1));
        BENCH_CHECK(f(d_up, h_up, n, s1));
        BENCH_CHECK(f(h_down, d_down, n, s2));
        BENCH_CHECK(cuxfer_stream_wait(s1, s2));
        BENCH_CHECK(cuxfer_timer_stop(t, s1));
        gate_open();
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
        if (r >= 0)
            v[r] = cuxfer_gbps(2 * n, ms);
    }
    return stats(v, reps);
}

static double link_h2d, link_d2h, link_bidir;

static void bench_link(cudaStream_t s1, cudaStream_t s2, cuxfer_timer *t)
{
    size_t n = link_bytes;
    unsigned char *h = (unsigned char *)pinned(n), *h2 = (unsigned char *)pinned(n);
    unsigned char *d = (unsigned char *)device(n), *d2 = (unsigned char *)device(n);
    stat raw, cux;
    fill(h, n, 1);
    if (want("h2d-1d")) {
        raw = time_1d(raw_copy, d, h, n, 1, s1, t);
        cux = time_1d(cux_copy, d, h, n, 1, s1, t);
        link_h2d = raw.median;
        report("h2d-1d pinned", "GB/s", raw, cux, 0, 0.99, ">=0.99x");
    }
    if (want("d2h-1d")) {
        BENCH_CHECK(cudaMemcpy(d2, h, n, cudaMemcpyHostToDevice));
        raw = time_1d(raw_copy, h2, d2, n, 1, s1, t);
        cux = time_1d(cux_copy, h2, d2, n, 1, s1, t);
        link_d2h = raw.median;
        verify(h, h2, n, "d2h-1d");
        report("d2h-1d pinned", "GB/s", raw, cux, 0, 0.99, ">=0.99x");
    }
    if (want("bidir-1d")) {
        BENCH_CHECK(cudaMemcpy(d2, h, n, cudaMemcpyHostToDevice));
        raw = time_bidir(raw_copy, d, h, h2, d2, n, s1, s2, t);
        cux = time_bidir(cux_copy, d, h, h2, d2, n, s1, s2, t);
        link_bidir = raw.median;
        verify(h, h2, n, "bidir-1d");
        report("bidir-1d pinned (H2D+D2H)", "GB/s", raw, cux, 0, 0.99, ">=0.99x");
    }
    if (want("h2d-pageable")) {
        /* The cost of the most common mistake, for reference: a plain
         * cudaMemcpyAsync from malloc'd memory against the same from
         * pinned memory. */
        unsigned char *pg = (unsigned char *)malloc(n);
        fill(pg, n, 2);
        raw = time_1d(raw_copy, d, pg, n, 1, s1, t);
        cux = time_1d(raw_copy, d, h, n, 1, s1, t);
        report("h2d pageable vs pinned (raw both)", "GB/s", raw, cux, 0, 0, "info");
        free(pg);
    }
    BENCH_CHECK(cudaDeviceSynchronize());
    cuxfer_host_free(h);
    cuxfer_host_free(h2);
    cudaFree(d);
    cudaFree(d2);
}

/* --- enqueue cost --------------------------------------------------------- */

/* Microseconds per enqueue of a small pinned H2D copy, measured on the host
 * while a gate holds the stream (so nothing executes meanwhile). */
static stat time_enqueue(copy1d_fn f, void *d, const void *h, cudaStream_t s)
{
    enum { BATCH = 200 };
    double v[64], t0;
    int r, c;
    for (r = -3; r < reps; ++r) {
        gate_close(s);
        t0 = now_us();
        for (c = 0; c < BATCH; ++c)
            BENCH_CHECK(f((unsigned char *)d + (size_t)c * 4096, (const unsigned char *)h + (size_t)c * 4096, 4096, s));
        if (r >= 0)
            v[r] = (now_us() - t0) / BATCH;
        gate_open();
        BENCH_CHECK(cudaStreamSynchronize(s));
    }
    return stats(v, reps);
}

static void bench_enqueue(cudaStream_t s)
{
    size_t n = 200 * 4096;
    void *h = pinned(n), *d = device(n);
    stat raw, cux;
    int round;
    if (!want("enqueue"))
        return;
    fill(h, n, 3);
    /* Interleave raw and cuxfer rounds so drift hits both alike. */
    for (round = 0; round < 3; ++round) {
        raw = time_enqueue(raw_copy, d, h, s);
        cux = time_enqueue(cux_copy, d, h, s);
    }
    report("enqueue 4 KiB H2D (cost)", "us", raw, cux, 1, 1.10, "<=1.10x");
    cuxfer_host_free(h);
    cudaFree(d);
}

/* --- 2D rows -------------------------------------------------------------- */

/* GB/s of ROI bytes for a 2D copy of `width`-byte rows, the strided side's
 * pitch 2 x width, the other side a cudaMallocPitch'd / dense buffer. */
static void bench_2d(cudaStream_t s, cuxfer_timer *t)
{
    static const size_t widths[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096,
                                    65536, 1048576};
    size_t wi;
    for (wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi) {
        size_t w = widths[wi], roi_total = (quick ? 16 : 64) * MIB, h, spitch = 2 * w;
        cuxfer_view hv, dv;
        unsigned char *host, *back;
        double v_raw[64], v_cux[64];
        stat raw, cux;
        char name[64];
        int dir, r, k;
        float ms;
        if (w <= 8)
            roi_total = (quick ? 2 : 8) * MIB; /* narrow rows are slow */
        h = roi_total / w;
        if (h > 65535 * 4 && w < 64)
            h = 65535 * 4;
        host = (unsigned char *)pinned(spitch * h);
        back = (unsigned char *)pinned(spitch * h);
        fill(host, spitch * h, (unsigned)w);
        BENCH_CHECK(cuxfer_view_wrap(&hv, host, spitch, w, h, 1));
        BENCH_CHECK(cuxfer_view_alloc_device(&dv, w, h, 1));
        for (dir = 0; dir < 2; ++dir) {
            snprintf(name, sizeof name, "2d %s rows %zu B", dir ? "d2h" : "h2d", w);
            if (!want(name) && !want("2d"))
                continue;
            for (r = -2; r < reps; ++r)
                for (k = 0; k < 2; ++k) {
                    gate_close(s);
                    BENCH_CHECK(cuxfer_timer_start(t, s));
                    if (k == 0 && dir == 0)
                        BENCH_CHECK(cudaMemcpy2DAsync(dv.ptr, dv.pitch, host, spitch, w, h,
                                                      cudaMemcpyHostToDevice, s));
                    else if (k == 0)
                        BENCH_CHECK(cudaMemcpy2DAsync(back, spitch, dv.ptr, dv.pitch, w, h,
                                                      cudaMemcpyDeviceToHost, s));
                    else if (dir == 0)
                        BENCH_CHECK(cuxfer_copy2d_async(&dv, &hv, s));
                    else {
                        cuxfer_view bv;
                        BENCH_CHECK(cuxfer_view_wrap(&bv, back, spitch, w, h, 1));
                        BENCH_CHECK(cuxfer_copy2d_async(&bv, &dv, s));
                    }
                    BENCH_CHECK(cuxfer_timer_stop(t, s));
                    gate_open();
                    BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
                    if (r >= 0)
                        (k ? v_cux : v_raw)[r] = cuxfer_gbps(w * h, ms);
                }
            if (dir == 1) {
                size_t y;
                for (y = 0; y < h; ++y)
                    if (memcmp(back + y * spitch, host + y * spitch, w) != 0) {
                        fprintf(stderr, "xferbench: %s: row %zu differs\n", name, y);
                        exit(1);
                    }
            }
            raw = stats(v_raw, reps);
            cux = stats(v_cux, reps);
            report(name, "GB/s", raw, cux, 0, w >= 256 ? 0.99 : 0.98,
                   w >= 256 ? ">=0.99x" : ">=0.98x");
        }
        cuxfer_view_free(&dv);
        cuxfer_host_free(host);
        cuxfer_host_free(back);
    }
}

/* --- a full-image ROI the size roicopy moves ------------------------------ */

static void bench_image(cudaStream_t s, cuxfer_timer *t)
{
    const size_t W = 8192, H = 8192, E = 4;
    cuxfer_view img, roi, dv, outv;
    cuxfer_roi all = {0, 0, 8192, 8192};
    double v_raw[64], v_cux[64];
    float ms;
    int dir, r, k;
    if (!want("image"))
        return;
    BENCH_CHECK(cuxfer_view_alloc_host(&img, W, H, E, 0));
    BENCH_CHECK(cuxfer_view_alloc_host(&outv, W, H, E, 0));
    BENCH_CHECK(cuxfer_view_alloc_device(&dv, W, H, E));
    BENCH_CHECK(cuxfer_view_sub(&img, all, &roi));
    fill(img.ptr, W * H * E, 11);
    for (dir = 0; dir < 2; ++dir) {
        for (r = -2; r < reps; ++r)
            for (k = 0; k < 2; ++k) {
                gate_close(s);
                BENCH_CHECK(cuxfer_timer_start(t, s));
                if (k == 0)
                    BENCH_CHECK(dir == 0 ? cudaMemcpyAsync(dv.ptr, img.ptr, W * H * E,
                                                           cudaMemcpyHostToDevice, s)
                                         : cudaMemcpyAsync(outv.ptr, dv.ptr, W * H * E,
                                                           cudaMemcpyDeviceToHost, s));
                else
                    BENCH_CHECK(dir == 0 ? cuxfer_copy2d_async(&dv, &roi, s)
                                         : cuxfer_copy2d_async(&outv, &dv, s));
                BENCH_CHECK(cuxfer_timer_stop(t, s));
                gate_open();
                BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
                if (r >= 0)
                    (k ? v_cux : v_raw)[r] = cuxfer_gbps(W * H * E, ms);
            }
        if (dir == 1)
            verify(img.ptr, outv.ptr, W * H * E, "image");
        report(dir ? "image 8192x8192 RGBA8 d2h vs 1D link" : "image 8192x8192 RGBA8 h2d vs 1D link",
               "GB/s", stats(v_raw, reps), stats(v_cux, reps), 0, 0.97, ">=0.97x");
    }
    cuxfer_view_free(&img);
    cuxfer_view_free(&outv);
    cuxfer_view_free(&dv);
}

/* --- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f, "usage: xferbench [--quick] [--reps N] [--size MIB] [--only CASE] "
               "[--json | --csv] [--device N]\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"quick", no_argument, NULL, 'q'}, {"reps", required_argument, NULL, 'r'},
        {"size", required_argument, NULL, 's'}, {"only", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'}, {"csv", no_argument, NULL, 'c'},
        {"device", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
    int c, n = 0, dev = 0, drv = 0, rt = 0;
    char *end;
    cudaStream_t s1, s2;
    cuxfer_timer t;
    char name[256];

    while ((c = getopt_long(argc, argv, "qr:s:o:jcd:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'q': quick = 1; break;
        case 'r':
            reps = (int)strtol(optarg, &end, 10);
            if (*end || reps < 3 || reps > 64) {
                fprintf(stderr, "xferbench: --reps %s: expected 3..64\n", optarg);
                return 2;
            }
            break;
        case 's':
            link_bytes = (size_t)strtoul(optarg, &end, 10) * MIB;
            if (*end || link_bytes == 0 || link_bytes > 8192 * MIB) {
                fprintf(stderr, "xferbench: --size %s: expected 1..8192 (MiB)\n", optarg);
                return 2;
            }
            break;
        case 'o': only = optarg; break;
        case 'j': out = OUT_JSON; break;
        case 'c': out = OUT_CSV; break;
        case 'd':
            dev = (int)strtol(optarg, &end, 10);
            if (*end || dev < 0) {
                fprintf(stderr, "xferbench: --device %s: expected a device index\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("xferbench (cuxfer) %s\n", CUXFER_VERSION_STRING); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (quick) {
        reps = reps > 7 ? 7 : reps;
        link_bytes = link_bytes > 64 * MIB ? 64 * MIB : link_bytes;
    }
    if (cuxfer_device_count(&n) != cudaSuccess) {
        fprintf(stderr, "xferbench: no CUDA device: %s\n", cuxfer_last_reason());
        return 5;
    }
    if (dev >= n) {
        fprintf(stderr, "xferbench: --device %d: only %d device(s)\n", dev, n);
        return 2;
    }
    BENCH_CHECK(cudaSetDevice(dev));
    {
        struct cudaDeviceProp p;
        BENCH_CHECK(cudaGetDeviceProperties(&p, dev));
        snprintf(name, sizeof name, "%s", p.name);
    }
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    if (out == OUT_TABLE)
        printf("xferbench %s: device %d %s, driver %d, runtime %d, %d reps, link buffers %zu MiB\n",
               CUXFER_VERSION_STRING, dev, name, drv, rt, reps, link_bytes / MIB);
    BENCH_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    BENCH_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    BENCH_CHECK(cuxfer_timer_create(&t));

    bench_link(s1, s2, &t);
    bench_enqueue(s1);
    bench_2d(s1, &t);
    bench_image(s1, &t);

    if (out == OUT_JSON)
        printf("%s]\n", rows_printed ? "\n" : "[");
    else if (out == OUT_TABLE)
        printf("%d target(s) missed\n", misses);
    cuxfer_timer_destroy(&t);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    return misses ? 1 : 0;
}
