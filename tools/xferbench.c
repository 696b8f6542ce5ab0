/* SPDX-License-Identifier: MIT */
/*
 * xferbench - cuxfer against raw CUDA, side by side, in one process.
 *
 * Every case runs the raw CUDA call and the cuxfer call back to back on the
 * same buffers, and reports both, their ratio and PASS/MISS against the
 * case's target (set with each case below).  Timing follows nvbandwidth: a
 * host function holds the stream until all copies of a repetition are
 * queued, so enqueue cost stays out of link measurements; events time the
 * copies; the median of the repetitions is reported with its coefficient
 * of variation.  Every case verifies the bytes it moved.
 */
#include <cuxfer.h>
#include "close-stdout.h"
#include "geometry.h"
#include "longopts.h"

#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB ((size_t)1 << 20)
#define NAME_W 48 /* the table's case column */

static int reps = 15;
static size_t link_bytes = 256 * MIB;
static int quick, reps_given, size_given; /* --quick caps what these did not set */
static enum { OUT_TABLE, OUT_JSON, OUT_CSV } out = OUT_TABLE;
/* --only patterns (repeatable): a case runs when its name, as --list
 * prints it, holds any of them at the start of a word (want); none: every
 * case */
enum { MAX_ONLY = 32 };
static const char *only[MAX_ONLY];
static int only_hit[MAX_ONLY]; /* a case name of this run matched only[i] */
static int nonly;
static int listing; /* --list: print the selected cases' names, run nothing */
static cuxfer_rois_options rois_opt; /* --rois-threads, --rois-chunk; {0} = defaults */
static int misses;
static double row_max_cv; /* > 0: the next row also needs cuxfer's cv <= this */
static int rows_dense;    /* the 2d cases' device rows dense, not cudaMallocPitch'd */
static cuxfer_plan2d_options plan_opt; /* --rows-threads; {0} = defaults */
static int rows_printed;

/* Exit status 4: standard output (the table, the JSON, the CSV, --list,
 * --help) could not be written, as a full disk or a closed pipe leaves it:
 * the figures are lost, so the run must not say it succeeded.  Checked
 * once at the end, as GNU tools do (ferror, then fflush and fclose). */
#define XB_OUTPUT 4

/* status, or XB_OUTPUT (with the message on stderr) when standard output
 * failed and status is lower: the higher of the two, as roicopy does. */
static int close_stdout(int status)
{
    const char *why = close_stdout_failure();
    if (!why)
        return status;
    fprintf(stderr, "xferbench: standard output: %s\n", why);
    return status > XB_OUTPUT ? status : XB_OUTPUT;
}

/* exit(status), standard output checked first. */
static void bench_exit(int status)
{
    exit(close_stdout(status));
}

/* Abort the run on any CUDA failure: a benchmark must not report numbers
 * from a failed copy. */
#define BENCH_CHECK(expr)                                                      \
    do {                                                                       \
        cudaError_t e_ = (expr);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "xferbench: %s:%d: %s: %s %s\n", __FILE__,         \
                    __LINE__, #expr, cudaGetErrorName(e_),                     \
                    cuxfer_last_reason());                                     \
            bench_exit(5);                                                     \
        }                                                                      \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* --- the gate: a host function that holds a stream until released ------ */

static int gate_flag, gate_stalled;

static void CUDART_CB gate_fn(void *arg)
{
    int *g = (int *)arg;
    double t0 = now_us();
    /* Bounded: never hold the stream more than 20 s, even if the releasing
     * thread died, or an enqueue behind the gate blocked until the stream
     * moved (CUDA's queue of a held stream fills at some tens of kernel
     * launches): that is a defect, which report() turns into a failure. */
    while (!__atomic_load_n(g, __ATOMIC_ACQUIRE) && now_us() - t0 < 20e6)
        sched_yield();
    if (!__atomic_load_n(g, __ATOMIC_ACQUIRE))
        __atomic_store_n(&gate_stalled, 1, __ATOMIC_RELEASE);
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
 * cuxfer/raw, the target.  The target bounds the ratio, or with `absolute`
 * cuxfer's own figure; `lower_better` for costs (PASS when at most the
 * target). */
static void report_row(const char *name, const char *unit, stat raw, stat cux, int lower_better,
                       int absolute, double target, const char *target_text)
{
    double ratio = cux.median / raw.median, x = absolute ? cux.median : ratio;
    if (__atomic_load_n(&gate_stalled, __ATOMIC_ACQUIRE)) {
        fprintf(stderr, "xferbench: %s: an enqueue blocked behind the gate for 20 s; "
                        "no figure of this run can be trusted\n",
                name);
        bench_exit(1);
    }
    int pass = target <= 0 ? 1 : lower_better ? x <= target : x >= target;
    if (target > 0 && row_max_cv > 0 && cux.cv > row_max_cv)
        pass = 0; /* a steady figure is part of the target */
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
        /* RFC 4180: a field with a comma is quoted (none holds a quote) */
        const char *qn = strchr(name, ',') ? "\"" : "", *qt = strchr(target_text, ',') ? "\"" : "";
        printf("%s%s%s,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%s%s%s,%s\n", qn, name, qn, unit, raw.median,
               raw.cv, cux.median, cux.cv, ratio, qt, target_text, qt, verdict);
    } else {
        if (!rows_printed)
            printf("%-*s %-6s %10s %6s %10s %6s %7s  %-10s %s\n", NAME_W, "case", "unit", "raw",
                   "cv", "cuxfer", "cv", "ratio", "target", "");
        printf("%-*s %-6s %10.3f %5.1f%% %10.3f %5.1f%% %7.3f  %-10s %s\n", NAME_W, name, unit,
               raw.median, raw.cv * 100, cux.median, cux.cv * 100, ratio, target_text,
               verdict);
    }
    fflush(stdout);
    ++rows_printed;
}

/* A row whose target bounds the ratio cuxfer/raw (or raw/cuxfer's inverse
 * for costs, `lower_better`). */
static void report(const char *name, const char *unit, stat raw, stat cux, int lower_better,
                   double target, const char *target_text)
{
    report_row(name, unit, raw, cux, lower_better, 0, target, target_text);
}

/* A row whose target bounds cuxfer's own figure: a cost (lower_better, PASS
 * when cuxfer <= target) or a rate (PASS when cuxfer >= target). */
static void report_abs(const char *name, const char *unit, stat raw, stat cux, int lower_better,
                       double target, const char *target_text)
{
    report_row(name, unit, raw, cux, lower_better, 1, target, target_text);
}

/* At a word's start (after a space or a hyphen) only: "2d" selects the
 * row cases, not "rois h2d ..."; "1d" the link's three. */
static int want(const char *name)
{
    int i, hit = 0;
    for (i = 0; i < nonly; ++i) {
        const char *p = name;
        while ((p = strstr(p, only[i])) != NULL) {
            if (p == name || p[-1] == ' ' || p[-1] == '-') {
                only_hit[i] = hit = 1;
                break;
            }
            ++p;
        }
    }
    return hit || nonly == 0;
}

/* --- buffers -------------------------------------------------------------- */

static void *pinned(size_t n)
{
    void *p = NULL;
    BENCH_CHECK(cuxfer_host_alloc(&p, n, 1, 0));
    return p;
}

/* Host memory for a case: a failed malloc ends the run as a failed CUDA
 * call does (status 5, xferbench(1)): no figure of it stands. */
static void *host_mem(size_t n, const char *what)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "xferbench: %s: out of host memory (%zu bytes)\n", what, n);
        bench_exit(5);
    }
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
        bench_exit(1);
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

/* The link's cases compare two calls that queue the same copy, so their
 * ratio is 1 but for noise: they take three times the repetitions (a few
 * milliseconds each), which narrows the median's spread by 1.7. */
static int link_reps(void) { return 3 * reps > 64 ? 64 : 3 * reps; }

/* GB/s of one direction, `copies` copies of n bytes per repetition, for
 * the raw call and cuxfer's: interleaved rep by rep, the order swapped
 * every rep, so a drift of the host or the link (seconds long on a shared
 * machine) falls on both alike instead of on whichever ran second. */
static void time_1d(copy1d_fn f_raw, copy1d_fn f_cux, void *dst, const void *src, size_t n,
                    int copies, cudaStream_t s, cuxfer_timer *t, stat *raw, stat *cux)
{
    double v[2][64];
    float ms;
    int r, c, k, n_reps = link_reps();
    for (r = -2; r < n_reps; ++r)
        for (k = 0; k < 2; ++k) {
            int which = k ^ (r & 1); /* 0 raw, 1 cuxfer */
            copy1d_fn f = which ? f_cux : f_raw;
            gate_close(s);
            BENCH_CHECK(cuxfer_timer_start(t, s));
            for (c = 0; c < copies; ++c)
                BENCH_CHECK(f(dst, src, n, s));
            BENCH_CHECK(cuxfer_timer_stop(t, s));
            gate_open();
            BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
            if (r >= 0)
                v[which][r] = cuxfer_gbps(n * (size_t)copies, ms);
        }
    *raw = stats(v[0], n_reps);
    *cux = stats(v[1], n_reps);
}

/* Both directions at once on two streams; GB/s counted over both.  Raw
 * and cuxfer interleaved as in time_1d. */
static void time_bidir(copy1d_fn f_raw, copy1d_fn f_cux, void *d_up, const void *h_up,
                       void *h_down, const void *d_down, size_t n, cudaStream_t s1,
                       cudaStream_t s2, cuxfer_timer *t, stat *raw, stat *cux)
{
    double v[2][64];
    float ms;
    int r, k, n_reps = link_reps();
    for (r = -2; r < n_reps; ++r)
        for (k = 0; k < 2; ++k) {
            int which = k ^ (r & 1);
            copy1d_fn f = which ? f_cux : f_raw;
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
                v[which][r] = cuxfer_gbps(2 * n, ms);
        }
    *raw = stats(v[0], n_reps);
    *cux = stats(v[1], n_reps);
}

/* The raw link of this run, H2D, D2H and both at once: the baseline of
 * every case reported as a fraction of the link.  Measured (and printed)
 * whenever such a case is selected, even when --only leaves the link
 * cases out (need_link). */
enum { LINK_H2D, LINK_D2H, LINK_BIDIR };
static stat link_s[3];
static int need_link;

static void bench_link(cudaStream_t s1, cudaStream_t s2, cuxfer_timer *t)
{
    size_t n = link_bytes;
    unsigned char *h = (unsigned char *)pinned(n), *h2 = (unsigned char *)pinned(n);
    unsigned char *d = (unsigned char *)device(n), *d2 = (unsigned char *)device(n);
    stat raw, cux;
    fill(h, n, 1);
    if (want("h2d-1d") || need_link) {
        time_1d(raw_copy, cux_copy, d, h, n, 1, s1, t, &raw, &cux);
        link_s[LINK_H2D] = raw;
        report("h2d-1d pinned", "GB/s", raw, cux, 0, 0.99, ">=0.99x");
    }
    if (want("d2h-1d") || need_link) {
        BENCH_CHECK(cudaMemcpy(d2, h, n, cudaMemcpyHostToDevice));
        time_1d(raw_copy, cux_copy, h2, d2, n, 1, s1, t, &raw, &cux);
        link_s[LINK_D2H] = raw;
        verify(h, h2, n, "d2h-1d");
        report("d2h-1d pinned", "GB/s", raw, cux, 0, 0.99, ">=0.99x");
    }
    if (want("bidir-1d") || need_link) {
        BENCH_CHECK(cudaMemcpy(d2, h, n, cudaMemcpyHostToDevice));
        time_bidir(raw_copy, cux_copy, d, h, h2, d2, n, s1, s2, t, &raw, &cux);
        link_s[LINK_BIDIR] = raw;
        verify(h, h2, n, "bidir-1d");
        report("bidir-1d pinned (H2D+D2H)", "GB/s", raw, cux, 0, 0.99, ">=0.99x");
    }
    BENCH_CHECK(cudaDeviceSynchronize());
    cuxfer_host_free(h);
    cuxfer_host_free(h2);
    cudaFree(d);
    cudaFree(d2);
}

/* --- enqueue cost --------------------------------------------------------- */

/* Microseconds per enqueue of a small pinned H2D copy, measured on the host
 * while a gate holds the stream (so nothing executes meanwhile): one batch
 * of BATCH enqueues. */
enum { ENQ_BATCH = 200 };

static double enqueue_batch_us(copy1d_fn f, void *d, const void *h, cudaStream_t s)
{
    double t0;
    int c;
    gate_close(s);
    t0 = now_us();
    for (c = 0; c < ENQ_BATCH; ++c)
        BENCH_CHECK(f((unsigned char *)d + (size_t)c * 4096, (const unsigned char *)h + (size_t)c * 4096, 4096, s));
    t0 = (now_us() - t0) / ENQ_BATCH;
    gate_open();
    BENCH_CHECK(cudaStreamSynchronize(s));
    return t0;
}

/* The raw call and cuxfer's, interleaved batch by batch with the order
 * swapped every repetition (as time_1d): a cost of about a microsecond
 * drifts with the host's clock and caches by more than the difference
 * measured, and must drift on both alike.  Three times the repetitions,
 * as the link's cases. */
static void bench_enqueue(cudaStream_t s)
{
    size_t n = ENQ_BATCH * 4096;
    void *h, *d;
    double v[2][64];
    int r, k, n_reps = link_reps();
    if (!want("enqueue"))
        return;
    h = pinned(n);
    d = device(n);
    fill(h, n, 3);
    for (r = -6; r < n_reps; ++r)
        for (k = 0; k < 2; ++k) {
            int which = k ^ (r & 1); /* 0 raw, 1 cuxfer */
            double us = enqueue_batch_us(which ? cux_copy : raw_copy, d, h, s);
            if (r >= 0)
                v[which][r] = us;
        }
    report("enqueue 4 KiB H2D (cost)", "us", stats(v[0], n_reps), stats(v[1], n_reps), 1, 1.10,
           "<=1.10x");
    cuxfer_host_free(h);
    cudaFree(d);
}

/* --- enqueue cost from 8 threads at once ---------------------------------- */

/* Each of 8 threads enqueues small pinned H2D copies on its own gated
 * stream, all starting together; the cost is the median over threads of
 * the per-copy time.  With `bufs` > 8 source buffers per thread the
 * sources rotate past the per-thread classification cache, so every
 * checked copy looks its source up in the process-wide registry: the case
 * that shows whether readers contend. */
enum { MT_THREADS = 8, MT_BATCH = 200, MT_BUFS = 16 };
struct mt_arg {
    copy1d_fn f;
    cudaStream_t s;
    void *dst;
    void *src[MT_BUFS];
    int bufs;
    double us;
};
static pthread_barrier_t mt_barrier;

static void *mt_worker(void *p)
{
    struct mt_arg *a = (struct mt_arg *)p;
    double t0;
    int c;
    pthread_barrier_wait(&mt_barrier);
    t0 = now_us();
    for (c = 0; c < MT_BATCH; ++c)
        BENCH_CHECK(a->f(a->dst, a->src[c % a->bufs], 4096, a->s));
    a->us = (now_us() - t0) / MT_BATCH;
    return NULL;
}

static stat time_enqueue_mt(copy1d_fn f, struct mt_arg *args, int bufs)
{
    double v[64], per[MT_THREADS];
    pthread_t th[MT_THREADS];
    int r, i;
    for (r = -3; r < reps; ++r) {
        __atomic_store_n(&gate_flag, 0, __ATOMIC_RELEASE);
        for (i = 0; i < MT_THREADS; ++i) {
            BENCH_CHECK(cudaLaunchHostFunc(args[i].s, gate_fn, &gate_flag));
            args[i].f = f;
            args[i].bufs = bufs;
        }
        for (i = 0; i < MT_THREADS; ++i)
            if (pthread_create(&th[i], NULL, mt_worker, &args[i]) != 0) {
                fprintf(stderr, "xferbench: pthread_create failed\n");
                bench_exit(5);
            }
        for (i = 0; i < MT_THREADS; ++i) {
            pthread_join(th[i], NULL);
            per[i] = args[i].us;
        }
        gate_open();
        for (i = 0; i < MT_THREADS; ++i)
            BENCH_CHECK(cudaStreamSynchronize(args[i].s));
        if (r >= 0)
            v[r] = stats(per, MT_THREADS).median;
    }
    return stats(v, reps);
}

static void bench_enqueue_mt(void)
{
    struct mt_arg args[MT_THREADS];
    unsigned char *check;
    stat raw, cux;
    int i, b, round;
    if (!want("enqueue-8t"))
        return;
    memset(args, 0, sizeof args);
    if (pthread_barrier_init(&mt_barrier, NULL, MT_THREADS) != 0) {
        fprintf(stderr, "xferbench: pthread_barrier_init failed\n");
        bench_exit(5);
    }
    for (i = 0; i < MT_THREADS; ++i) {
        BENCH_CHECK(cudaStreamCreateWithFlags(&args[i].s, cudaStreamNonBlocking));
        BENCH_CHECK(cuxfer_device_alloc(&args[i].dst, 4096, 1));
        for (b = 0; b < MT_BUFS; ++b) {
            args[i].src[b] = pinned(4096);
            fill(args[i].src[b], 4096, (unsigned)(i * MT_BUFS + b));
        }
    }
    for (b = 1; b <= MT_BUFS; b += MT_BUFS - 1) {
        const char *name = b == 1 ? "enqueue-8t 8 threads x 4 KiB H2D (cost)"
                                  : "enqueue-8t 8 threads, 16 bufs each (cost)";
        for (round = 0; round < 3; ++round) {
            raw = time_enqueue_mt(raw_copy, args, b);
            cux = time_enqueue_mt(cux_copy, args, b);
        }
        report(name, "us", raw, cux, 1, 1.10, "<=1.10x");
    }
    /* The last copy of each thread came from src[(MT_BATCH - 1) % 16]. */
    check = (unsigned char *)host_mem(4096, "enqueue-8t");
    for (i = 0; i < MT_THREADS; ++i) {
        BENCH_CHECK(cudaMemcpy(check, args[i].dst, 4096, cudaMemcpyDeviceToHost));
        verify(args[i].src[(MT_BATCH - 1) % MT_BUFS], check, 4096, "enqueue-8t");
    }
    free(check);
    for (i = 0; i < MT_THREADS; ++i) {
        for (b = 0; b < MT_BUFS; ++b)
            cuxfer_host_free(args[i].src[b]);
        cuxfer_device_free(args[i].dst);
        cudaStreamDestroy(args[i].s);
    }
    pthread_barrier_destroy(&mt_barrier);
}

/* --- 2D rows -------------------------------------------------------------- */

static cuxfer_plan2d planner;

/* The planner's targets, strided side's pitch 2 x width (man 3
 * cuxfer_plan2d, doc/PERF.md, "Targets"): H2D at least 4 x raw cudaMemcpy2DAsync at
 * 8-byte rows and 2.5 x at 16; D2H 4 x at 8, 2 x at
 * 16 and 1.2 x at 32; never below 0.98 x; and a cv of at most
 * 5 % at every width in both directions (returned in *max_cv). */
static double plan_target(size_t w, int d2h, char *text, size_t n, double *max_cv)
{
    double t = 0.98;
    *max_cv = 0.05;
    if (!d2h && w == 8)
        t = 4.0;
    else if (!d2h && w == 16)
        t = 2.5;
    else if (d2h && (w == 8 || w == 16 || w == 32))
        t = w == 8 ? 4.0 : w == 16 ? 2.0 : 1.2;
    snprintf(text, n, ">=%.2fx,cv<=5%%", t);
    return t;
}

/* Narrow rows, host to device: the planner at least 0.9 x its
 * own device-to-host figure at the same width, and at least 8, 10 and
 * 16 GB/s at 1, 2 and 4-byte rows (0: no such target). */
#define NARROW_H2D_VS_D2H 0.90
static double narrow_floor(size_t w)
{
    return w == 1 ? 8.0 : w == 2 ? 10.0 : w == 4 ? 16.0 : 0;
}

/* The 2D row widths, and a case's name ("2d h2d rows 8 B"). */
static const size_t twod_widths[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096,
                                     65536, 1048576};

static void twod_name(char *buf, size_t len, size_t w, int d2h)
{
    snprintf(buf, len, "2d %s rows %zu B", d2h ? "d2h" : "h2d", w);
}

static int twod_wanted(size_t w, int d2h)
{
    char name[64];
    twod_name(name, sizeof name, w, d2h);
    return want(name) || want("2d");
}

/* The planner's default team (man 3 cuxfer_plan2d): the online cores
 * less two, at least 1, at most 16. */
static int plan_threads(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN) - 2;
    return c < 1 ? 1 : c > 16 ? 16 : (int)c;
}

/* The host alone doing PACK's host half: `threads` threads scatter dense
 * rows of w bytes into rows of pitch 2w (a buffer of xferbench's own, not
 * the planner's), contiguous shares each.  Its GB/s, timed from the
 * threads' common start to the last one's end; printed under the planner's
 * device-to-host rows as a reference for how steady the host's memory is
 * in the same reps (xferbench(1)). */
struct hs_arg {
    unsigned char *dst;
    const unsigned char *src;
    size_t w, from, to;
    pthread_barrier_t *bar;
    double t0, t1;
};

static void *hs_worker(void *p)
{
    struct hs_arg *a = (struct hs_arg *)p;
    size_t y, pitch = 2 * a->w;
    pthread_barrier_wait(a->bar);
    a->t0 = now_us();
    switch (a->w) { /* constant sizes: one or two moves a row, as the planner */
    case 8:
        for (y = a->from; y < a->to; ++y)
            memcpy(a->dst + y * pitch, a->src + y * 8, 8);
        break;
    case 16:
        for (y = a->from; y < a->to; ++y)
            memcpy(a->dst + y * pitch, a->src + y * 16, 16);
        break;
    case 32:
        for (y = a->from; y < a->to; ++y)
            memcpy(a->dst + y * pitch, a->src + y * 32, 32);
        break;
    default:
        for (y = a->from; y < a->to; ++y)
            memcpy(a->dst + y * pitch, a->src + y * a->w, a->w);
    }
    a->t1 = now_us();
    return NULL;
}

static double host_scatter_gbps(unsigned char *dst, const unsigned char *src, size_t w,
                                size_t h, int threads)
{
    struct hs_arg a[CUXFER_PLAN_MAX_THREADS];
    pthread_t th[CUXFER_PLAN_MAX_THREADS];
    pthread_barrier_t bar;
    double t0 = 0, t1 = 0;
    int i, n = threads < 1 ? 1 : threads > CUXFER_PLAN_MAX_THREADS ? CUXFER_PLAN_MAX_THREADS
                                                                    : threads;
    if (pthread_barrier_init(&bar, NULL, (unsigned)n) != 0) {
        fprintf(stderr, "xferbench: pthread_barrier_init failed\n");
        bench_exit(5);
    }
    for (i = 0; i < n; ++i) {
        a[i].dst = dst;
        a[i].src = src;
        a[i].w = w;
        a[i].from = h * (size_t)i / (size_t)n;
        a[i].to = h * (size_t)(i + 1) / (size_t)n;
        a[i].bar = &bar;
        if (i > 0 && pthread_create(&th[i], NULL, hs_worker, &a[i]) != 0) {
            fprintf(stderr, "xferbench: pthread_create failed\n");
            bench_exit(5);
        }
    }
    hs_worker(&a[0]);
    for (i = 1; i < n; ++i)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    for (i = 0; i < n; ++i) {
        if (i == 0 || a[i].t0 < t0)
            t0 = a[i].t0;
        if (i == 0 || a[i].t1 > t1)
            t1 = a[i].t1;
    }
    return (double)(w * h) / ((t1 - t0) * 1e3);
}

/* Copies of 1-4 byte rows a repetition, back to back: their copies are
 * 4 MiB (raw crawls), well under a millisecond for the planner, which a
 * late start of CUDA's host-function thread would otherwise dominate
 * (doc/PERF.md, "CUDA behaviour measured"); nvbandwidth too times a loop
 * of copies.  The planner's first copy of each is also shown alone. */
#define NARROW_COPIES 8

/* With --rows-dense: h rows of w bytes back to back in device memory. */
static cudaError_t dense_rows(cuxfer_view *v, size_t w, size_t h)
{
    void *p;
    cudaError_t e = cuxfer_device_alloc(&p, h, w);
    if (e == cudaSuccess && (e = cuxfer_view_wrap(v, p, w, w, h, 1)) != cudaSuccess)
        (void)cuxfer_device_free(p);
    return e;
}

/* GB/s of ROI bytes for 2D copies of `width`-byte rows, the host side's
 * pitch 2 x width, the device side cudaMallocPitch'd (dense with
 * --rows-dense): raw
 * cudaMemcpy2DAsync, cuxfer_copy2d_async and the planner, interleaved. */
static void bench_2d(cudaStream_t s, cuxfer_timer *t, cuxfer_timer *t1)
{
    size_t wi;
    for (wi = 0; wi < sizeof twod_widths / sizeof twod_widths[0]; ++wi) {
        size_t w = twod_widths[wi], roi_total = (quick ? 16 : 128) * MIB, h, spitch = 2 * w;
        cuxfer_view hv, dv, bv;
        unsigned char *host, *back;
        double v[3][64], vm[64], v1[64];
        /* the host-only reference (d2h, 1-32 B rows): dense rows, strided copy */
        unsigned char *ref = NULL, *refd = NULL;
        char name[64], tt[24];
        int dir, r, k, kk, c, copies = w <= 4 ? NARROW_COPIES : 1, ran[2] = {0, 0};
        stat planned[2]; /* the planner's figure in each direction */
        float ms;
        cudaError_t ae;
        if (!twod_wanted(w, 0) && !twod_wanted(w, 1))
            continue;
        if (w <= 4)
            roi_total = (quick ? 1 : 4) * MIB; /* 1-4 B rows crawl */
        h = roi_total / w;
        /* cudaMallocPitch pads narrow rows to hundreds of bytes (8 GiB for
         * 128 MiB of 8-byte rows on an H200): on a smaller device halve the
         * copy until its rows fit, and say so */
        while ((ae = rows_dense ? dense_rows(&dv, w, h) : cuxfer_view_alloc_device(&dv, w, h, 1)) !=
               cudaSuccess) {
            (void)cudaGetLastError();
            if (ae != cudaErrorMemoryAllocation || roi_total <= MIB) {
                fprintf(stderr, "xferbench: 2d rows of %zu B: %s\n", w, cuxfer_last_reason());
                bench_exit(5);
            }
            roi_total /= 2;
            h = roi_total / w;
            if (out == OUT_TABLE)
                printf("%-*s (%zu-byte rows: %zu MiB a copy, to fit the device's memory)\n", NAME_W, "", w,
                       roi_total / MIB);
        }
        host = (unsigned char *)pinned(spitch * h);
        back = (unsigned char *)pinned(spitch * h);
        fill(host, spitch * h, (unsigned)w);
        BENCH_CHECK(cuxfer_view_wrap(&hv, host, spitch, w, h, 1));
        BENCH_CHECK(cuxfer_view_wrap(&bv, back, spitch, w, h, 1));
        for (dir = 0; dir < 2; ++dir) {
            twod_name(name, sizeof name, w, dir);
            if (!twod_wanted(w, dir))
                continue;
            memset(back, 0x5a, spitch * h);
            if (dir == 1) /* the rows to bring back, also when --only skipped h2d */
                BENCH_CHECK(cudaMemcpy2D(dv.ptr, dv.pitch, host, spitch, w, h,
                                         cudaMemcpyHostToDevice));
            if (dir == 1 && w <= 32 && !ref) {
                ref = (unsigned char *)host_mem(w * h, "2d");
                refd = (unsigned char *)host_mem(spitch * h, "2d");
                memset(ref, 1, w * h);
                memset(refd, 2, spitch * h);
            }
            for (r = -2; r < reps; ++r) {
                if (dir == 1 && ref) {
                    /* the host's memory in the same reps: PACK's scatter
                     * runs on it with as many threads */
                    double g = host_scatter_gbps(refd, ref, w, h, plan_threads());
                    if (r >= 0)
                        vm[r] = g;
                }
                for (kk = 0; kk < 3; ++kk) {
                    /* raw and copy2d swap places every rep (as in time_1d);
                     * the planner always runs last, after a DMA wrote the
                     * same destination: the cache state it meets is the
                     * same in every rep */
                    k = kk == 2 ? 2 : kk ^ (r & 1);
                    gate_close(s);
                    BENCH_CHECK(cuxfer_timer_start(t, s));
                    for (c = 0; c < copies; ++c) {
                        if (k == 2 && c == 0 && copies > 1)
                            BENCH_CHECK(cuxfer_timer_start(t1, s));
                        if (k == 0)
                            BENCH_CHECK(dir == 0 ? cudaMemcpy2DAsync(dv.ptr, dv.pitch, host,
                                                                     spitch, w, h,
                                                                     cudaMemcpyHostToDevice, s)
                                                 : cudaMemcpy2DAsync(back, spitch, dv.ptr,
                                                                     dv.pitch, w, h,
                                                                     cudaMemcpyDeviceToHost, s));
                        else if (k == 1)
                            BENCH_CHECK(dir == 0 ? cuxfer_copy2d_async(&dv, &hv, s)
                                                 : cuxfer_copy2d_async(&bv, &dv, s));
                        else
                            BENCH_CHECK(dir == 0
                                            ? cuxfer_plan2d_copy_async(&planner, &dv, &hv, s)
                                            : cuxfer_plan2d_copy_async(&planner, &bv, &dv, s));
                        if (k == 2 && c == 0 && copies > 1)
                            BENCH_CHECK(cuxfer_timer_stop(t1, s));
                    }
                    BENCH_CHECK(cuxfer_timer_stop(t, s));
                    gate_open();
                    BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
                    if (r >= 0)
                        v[k][r] = cuxfer_gbps(w * h * (size_t)copies, ms);
                    if (k == 2 && copies > 1) {
                        BENCH_CHECK(cuxfer_timer_ms(t1, CUXFER_WAIT, &ms));
                        if (r >= 0)
                            v1[r] = cuxfer_gbps(w * h, ms);
                    }
                }
            }
            if (dir == 1) {
                size_t y, x;
                for (y = 0; y < h; ++y) {
                    if (memcmp(back + y * spitch, host + y * spitch, w) != 0) {
                        fprintf(stderr, "xferbench: %s: row %zu differs\n", name, y);
                        bench_exit(1);
                    }
                    for (x = w; x < spitch; ++x)
                        if (back[y * spitch + x] != 0x5a) {
                            fprintf(stderr, "xferbench: %s: gap byte of row %zu written\n", name, y);
                            bench_exit(1);
                        }
                }
            }
            {
                stat raw = stats(v[0], reps), cx = stats(v[1], reps), pl = stats(v[2], reps);
                char n2[80];
                double tg, max_cv;
                snprintf(n2, sizeof n2, "%s copy2d", name);
                report(n2, "GB/s", raw, cx, 0, w >= 256 ? 0.99 : 0.98, w >= 256 ? ">=0.99x" : ">=0.98x");
                snprintf(n2, sizeof n2, "%s planner", name);
                tg = plan_target(w, dir, tt, sizeof tt, &max_cv);
                row_max_cv = max_cv;
                report(n2, "GB/s", raw, pl, 0, tg, tt);
                row_max_cv = 0;
                if (copies > 1) {
                    snprintf(n2, sizeof n2, "%s planner 1 copy", name);
                    report(n2, "GB/s", raw, stats(v1, reps), 0, 0, "info");
                }
                planned[dir] = pl;
                ran[dir] = 1;
                if (!dir && narrow_floor(w) > 0) {
                    snprintf(n2, sizeof n2, "%s planner GB/s", name);
                    snprintf(tt, sizeof tt, ">=%gGB/s", narrow_floor(w));
                    report_abs(n2, "GB/s", raw, pl, 0, narrow_floor(w), tt);
                }
                if (dir == 1 && ref && out == OUT_TABLE) {
                    stat m = stats(vm, reps);
                    printf("%-*s the same scatter on the host alone in the same reps, %d "
                           "threads: %.2f GB/s, cv %.1f%%\n", NAME_W,
                           "", plan_threads(), m.median, 100 * m.cv);
                }
            }
        }
        if (ran[0] && ran[1] && narrow_floor(w) > 0) {
            /* raw here is the planner's own device-to-host figure */
            char n2[80];
            twod_name(name, sizeof name, w, 0);
            snprintf(n2, sizeof n2, "%s planner vs d2h", name);
            snprintf(tt, sizeof tt, ">=%.2fx", NARROW_H2D_VS_D2H);
            report(n2, "GB/s", planned[1], planned[0], 0, NARROW_H2D_VS_D2H, tt);
        }
        free(ref);
        free(refd);
        if (rows_dense)
            BENCH_CHECK(cuxfer_device_free(dv.ptr));
        else
            cuxfer_view_free(&dv);
        cuxfer_host_free(host);
        cuxfer_host_free(back);
    }
}

static void calib_row(size_t row, int d2h, double raw, double planned, void *arg)
{
    (void)arg;
    printf("  calibrate %s %4zu B rows: direct %7.2f GB/s, %s %7.2f GB/s (%.2fx)\n",
           d2h ? "d2h" : "h2d", row, raw, d2h ? "PACK" : "SPAN", planned, planned / raw);
}

/* --- pinned pool ------------------------------------------------------------ */

static void bench_pool(void)
{
    double v_raw[64], v_cux[64], t0;
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block b;
    cuxfer_pinned_pool_stats st;
    int r, k;
    void *p;
    if (!want("pool"))
        return;
    BENCH_CHECK(cuxfer_pinned_pool_create(&pool, NULL));
    for (r = -2; r < reps; ++r) {
        t0 = now_us();
        BENCH_CHECK(cudaHostAlloc(&p, MIB, 0));
        BENCH_CHECK(cudaFreeHost(p));
        if (r >= 0)
            v_raw[r] = now_us() - t0;
        t0 = now_us();
        for (k = 0; k < 10000; ++k) {
            BENCH_CHECK(cuxfer_pinned_pool_acquire(&pool, MIB, &b));
            BENCH_CHECK(cuxfer_pinned_pool_release(&pool, &b, CUXFER_POOL_IDLE));
        }
        if (r >= 0)
            v_cux[r] = (now_us() - t0) / 10000;
    }
    report_abs("pool 1 MiB acquire+release vs cudaHostAlloc+Free", "us", stats(v_raw, reps),
               stats(v_cux, reps), 1, 0.25, "<=0.25us");
    /* waste over a spread of sizes */
    {
        size_t req = 0, n;
        cuxfer_pinned_block bl[64];
        for (n = 0; n < 64; ++n) {
            size_t sz = 1000 + n * 37777;
            BENCH_CHECK(cuxfer_pinned_pool_acquire(&pool, sz, &bl[n]));
            req += sz;
        }
        st = cuxfer_pinned_pool_get_stats(&pool);
        if (out == OUT_TABLE)
            printf("%-*s reserved %zu for %zu requested: %.4fx (target <= 1.125x) %s\n", NAME_W,
                   "pool waste, 64 sizes", st.in_use, req, (double)st.in_use / (double)req,
                   (double)st.in_use / (double)req <= 1.125 ? "PASS" : "MISS");
        if ((double)st.in_use / (double)req > 1.125)
            ++misses;
        for (n = 0; n < 64; ++n)
            BENCH_CHECK(cuxfer_pinned_pool_release(&pool, &bl[n], CUXFER_POOL_IDLE));
    }
    BENCH_CHECK(cuxfer_pinned_pool_destroy(&pool));
}

/* --- the ring: copy/compute overlap, and a round-trip frame pipeline ------ */

/* The "compute" of a frame: a kernel that only does arithmetic in
 * registers (a dependent chain of FMAs, no memory traffic), so it shares
 * nothing with the upload but the clock; a memset would share HBM with
 * the copy and measure that contention instead of the overlap.  xferbench
 * is C and must build without nvcc, so the kernel is PTX text, loaded with
 * the runtime's library API (cudaLibraryLoadData, CUDA 12.5+) and
 * JIT-compiled by the driver for the GPU at hand.  It stores its result
 * only if it equals a value it can never reach, so the compiler cannot
 * drop the loop.  Its length is calibrated so one frame of compute takes
 * as long as one frame's upload: the two halves of the pipeline match. */
#if CUDART_VERSION >= 12050
static const char spin_ptx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry xferbench_spin(.param .u32 iters, .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u32 %r1, [iters];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  cvt.rn.f32.u32 %f1, %r2;\n"
    "  mov.f32 %f2, 0f3F7FFFFE;\n" /* 0.99999988 */
    "  mov.f32 %f3, 0f3DCCCCCD;\n" /* 0.1: x stays in [0, 1e6) */
    "  mov.u32 %r3, 0;\n"
    "  setp.eq.u32 %p1, %r1, 0;\n"
    "  @%p1 bra DONE;\n"
    "LOOP:\n"
    "  fma.rn.f32 %f1, %f1, %f2, %f3;\n"
    "  fma.rn.f32 %f1, %f1, %f2, %f3;\n"
    "  fma.rn.f32 %f1, %f1, %f2, %f3;\n"
    "  fma.rn.f32 %f1, %f1, %f2, %f3;\n"
    "  add.u32 %r3, %r3, 1;\n"
    "  setp.lt.u32 %p2, %r3, %r1;\n"
    "  @%p2 bra LOOP;\n"
    "DONE:\n"
    "  setp.eq.f32 %p1, %f1, 0fC2F6E979;\n" /* -123.456: never */
    "  @!%p1 bra END;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  st.global.f32 [%rd2], %f1;\n"
    "END:\n"
    "  ret;\n"
    "}\n";
#endif

struct ring_arg {
    void *scratch;     /* memset stand-in (no kernel) / the kernel's output */
    size_t work_bytes; /* memset stand-in: bytes per frame */
    int have_kernel;
#if CUDART_VERSION >= 12050
    cudaLibrary_t lib;
    cudaKernel_t kernel;
#endif
    unsigned iters, blocks;
};

static cudaError_t ring_work(const cuxfer_ring_slot *slot, void *arg)
{
    struct ring_arg *a = (struct ring_arg *)arg;
#if CUDART_VERSION >= 12050
    if (a->have_kernel) {
        void *args[2];
        dim3 grid = {a->blocks, 1, 1}, block = {256, 1, 1};
        args[0] = &a->iters;
        args[1] = &a->scratch;
        return cudaLaunchKernel((const void *)a->kernel, grid, block, args, 0, slot->stream);
    }
#endif
    return cudaMemsetAsync(a->scratch, slot->index & 0xff, a->work_bytes, slot->stream);
}

/* Load the spin kernel; 0 (and the memset stand-in) when the runtime is
 * older than 12.5 or the driver cannot JIT the PTX. */
static int spin_load(struct ring_arg *a)
{
#if CUDART_VERSION >= 12050
    int dev = 0, sms = 0;
    cudaError_t err = cudaLibraryLoadData(&a->lib, spin_ptx, NULL, NULL, 0, NULL, NULL, 0);
    if (err == cudaSuccess)
        err = cudaLibraryGetKernel(&a->kernel, a->lib, "xferbench_spin");
    if (err == cudaSuccess) {
        /* loaded now, not at its first launch (lazy loading), as cuxfer's
         * copy kernel (cuxfer_plan2d(3), STREAMS AND CAPTURE) */
        struct cudaFuncAttributes fa;
        err = cudaFuncGetAttributes(&fa, (const void *)a->kernel);
    }
    if (err == cudaSuccess)
        err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) {
        fprintf(stderr, "xferbench: ring: spin kernel unavailable (%s): memset stand-in\n",
                cudaGetErrorName(err));
        (void)cudaGetLastError();
        return 0;
    }
    a->blocks = 2u * (unsigned)sms; /* one wave: every block resident at once */
    a->have_kernel = 1;
    return 1;
#else
    (void)a;
    return 0;
#endif
}

/* Median ms of `n` runs of `what` (0: one frame's upload, 1: one frame's
 * compute) on stream s. */
static float ring_part_ms(int what, cuxfer_ring *ring, struct ring_arg *a, size_t fb,
                          cudaStream_t s, cuxfer_timer *t)
{
    double v[9];
    float ms;
    int r;
    cuxfer_ring_slot fake = ring->slots[0];
    fake.stream = s;
    for (r = -1; r < 9; ++r) {
        BENCH_CHECK(cuxfer_timer_start(t, s));
        BENCH_CHECK(what ? ring_work(&fake, a)
                         : cudaMemcpyAsync(ring->slots[0].device, ring->slots[0].host, fb,
                                           cudaMemcpyHostToDevice, s));
        BENCH_CHECK(cuxfer_timer_stop(t, s));
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
        if (r >= 0)
            v[r] = ms;
    }
    return (float)stats(v, 9).median;
}

static void bench_ring(cudaStream_t s, cuxfer_timer *t)
{
    /* 128 frames: the pipeline's fill (one upload nothing can overlap) is
     * 1/128 of the ideal (at 64 frames it alone cost 1.6% of a 3% margin,
     * and the ratio read 0.967-0.969 in three runs); three slots give each
     * stream a frame of slack. */
    const int frames = 128, nslots = 3;
    size_t fb = 16 * MIB, wb;
    cuxfer_ring ring;
    cuxfer_ring_slot *slot = NULL, fake;
    cuxfer_ring_job job;
    struct ring_arg a;
    double v_ring[64], v_ideal[64], v_one[64], v_fill[64];
    float ms, copy_ms, work_ms, frame_copy = 0, frame_work = 0;
    int r, f, round;
    void *scratch;
    char label[96];
    if (!want("ring"))
        return;
    memset(&a, 0, sizeof a);
    wb = 1536 * MIB; /* memset stand-in: ~0.5 ms at ~3 TB/s */
    BENCH_CHECK(cudaMalloc(&scratch, wb));
    a.scratch = scratch;
    a.work_bytes = wb;
    BENCH_CHECK(cuxfer_ring_create(&ring, nslots, fb, fb, NULL));
    if (spin_load(&a)) {
        /* calibrate: iterations per ms, twice (the second corrects the
         * first's start-up share), then match one frame's upload */
        a.iters = 1u << 14;
        frame_copy = ring_part_ms(0, &ring, &a, fb, s, t);
        for (round = 0; round < 3; ++round) {
            double k = ring_part_ms(1, &ring, &a, fb, s, t), want_iters;
            want_iters = (double)a.iters * (double)frame_copy / (k > 1e-3 ? k : 1e-3);
            a.iters = want_iters < 1 ? 1u : want_iters > 4e9 ? 4000000000u : (unsigned)want_iters;
        }
        frame_work = ring_part_ms(1, &ring, &a, fb, s, t);
    }
    memset(&job, 0, sizeof job);
    job.h2d_bytes = fb;
    job.work = ring_work;
    job.arg = &a;
    fake = ring.slots[0];
    fake.stream = s;
    for (r = -2; r < reps; ++r) {
        /* parts alone, on one stream: copy only, then work only */
        BENCH_CHECK(cuxfer_timer_start(t, ring.slots[0].stream));
        for (f = 0; f < frames; ++f)
            BENCH_CHECK(cudaMemcpyAsync(ring.slots[0].device, ring.slots[0].host, fb,
                                        cudaMemcpyHostToDevice, ring.slots[0].stream));
        BENCH_CHECK(cuxfer_timer_stop(t, ring.slots[0].stream));
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &copy_ms));
        BENCH_CHECK(cuxfer_timer_start(t, ring.slots[0].stream));
        for (f = 0; f < frames; ++f)
            BENCH_CHECK(ring_work(&ring.slots[0], &a));
        BENCH_CHECK(cuxfer_timer_stop(t, ring.slots[0].stream));
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &work_ms));
        /* one stream, copy then work per frame */
        BENCH_CHECK(cuxfer_timer_start(t, s));
        for (f = 0; f < frames; ++f) {
            BENCH_CHECK(cudaMemcpyAsync(ring.slots[0].device, ring.slots[0].host, fb,
                                        cudaMemcpyHostToDevice, s));
            BENCH_CHECK(ring_work(&fake, &a));
        }
        BENCH_CHECK(cuxfer_timer_stop(t, s));
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
        if (r >= 0)
            v_one[r] = ms;
        /* the ring */
        BENCH_CHECK(cudaDeviceSynchronize());
        BENCH_CHECK(cuxfer_timer_start(t, s));
        for (f = 0; f < nslots; ++f)
            BENCH_CHECK(cuxfer_stream_wait(ring.slots[f].stream, s));
        for (f = 0; f < frames; ++f) {
            BENCH_CHECK(cuxfer_ring_acquire(&ring, &slot));
            BENCH_CHECK(cuxfer_ring_submit(&ring, slot, &job));
        }
        for (f = 0; f < nslots; ++f)
            BENCH_CHECK(cuxfer_stream_wait(s, ring.slots[f].stream));
        BENCH_CHECK(cuxfer_timer_stop(t, s));
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
        if (r >= 0) {
            v_ring[r] = ms;
            v_ideal[r] = copy_ms > work_ms ? copy_ms : work_ms;
            v_fill[r] = v_ideal[r] + (copy_ms < work_ms ? copy_ms : work_ms) / frames;
        }
    }
    {
        stat ring_s = stats(v_ring, reps), ideal = stats(v_ideal, reps), one = stats(v_one, reps),
             fill = stats(v_fill, reps);
        stat ratio_ideal = ideal, ratio_ring = ring_s;
        if (out == OUT_TABLE) {
            if (a.have_kernel)
                printf("%-*s compute: FMA kernel, %u iterations x %u blocks, %.3f ms a frame "
                       "(upload %.3f ms a frame)\n", NAME_W, "ring overlap", a.iters, a.blocks,
                       frame_work, frame_copy);
            else
                printf("%-*s compute: memset stand-in (no spin kernel; shares HBM with the "
                       "upload)\n", NAME_W, "ring overlap");
            snprintf(label, sizeof label, "ring overlap, %d frames x 16 MiB", frames);
            printf("%-*s one stream %.3f ms, ideal max(copy, compute) %.3f ms, ring %.3f ms\n", NAME_W,
                   label, one.median, ideal.median, ring_s.median);
            /* no schedule overlaps the first upload (or the last compute);
             * shown for context, the target stays on max(copy, compute) */
            printf("%-*s that ideal plus the frame no schedule overlaps %.3f ms (ratio %.3f)\n", NAME_W,
                   "", fill.median, fill.median / ring_s.median);
        }
        /* ratio reported as ideal/ring: 1.0 = the ideal schedule */
        ratio_ideal.median = 1.0 / ideal.median;
        ratio_ring.median = 1.0 / ring_s.median;
        report("ring overlap vs ideal (1/ms)", "1/ms", ratio_ideal, ratio_ring, 0, 0.97, ">=0.97x");
    }
    BENCH_CHECK(cuxfer_ring_destroy(&ring));
#if CUDART_VERSION >= 12050
    if (a.have_kernel)
        BENCH_CHECK(cudaLibraryUnload(a.lib));
#endif
    cudaFree(scratch);
}

/* Round trip: every frame goes up and comes back through a 3-slot ring, so
 * frame i+1's upload overlaps frame i's download; against the measured
 * bidirectional link. */
static void bench_roundtrip(cudaStream_t s, cuxfer_timer *t)
{
    const int frames = 24;
    size_t fb = 32 * MIB;
    cuxfer_ring ring;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_ring_job job;
    double v[64];
    float ms;
    int r, f, i;
    if (!want("roundtrip"))
        return;
    BENCH_CHECK(cuxfer_ring_create(&ring, 3, 2 * fb, fb, NULL));
    for (i = 0; i < 3; ++i)
        fill(ring.slots[i].host, fb, (unsigned)i + 40);
    memset(&job, 0, sizeof job);
    job.h2d_bytes = fb;
    job.d2h_bytes = fb;
    job.d2h_host_offset = fb;
    for (r = -2; r < reps; ++r) {
        BENCH_CHECK(cudaDeviceSynchronize());
        BENCH_CHECK(cuxfer_timer_start(t, s));
        for (i = 0; i < 3; ++i)
            BENCH_CHECK(cuxfer_stream_wait(ring.slots[i].stream, s));
        for (f = 0; f < frames; ++f) {
            BENCH_CHECK(cuxfer_ring_acquire(&ring, &slot));
            BENCH_CHECK(cuxfer_ring_submit(&ring, slot, &job));
        }
        for (i = 0; i < 3; ++i)
            BENCH_CHECK(cuxfer_stream_wait(s, ring.slots[i].stream));
        BENCH_CHECK(cuxfer_timer_stop(t, s));
        BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
        if (r >= 0)
            v[r] = cuxfer_gbps(2 * fb * (size_t)frames, ms);
    }
    for (i = 0; i < 3; ++i)
        verify(ring.slots[i].host, (unsigned char *)ring.slots[i].host + fb, fb, "roundtrip");
    report("ring round trip vs bidir link", "GB/s", link_s[LINK_BIDIR], stats(v, reps), 0, 0.90,
           ">=0.90x");
    BENCH_CHECK(cuxfer_ring_destroy(&ring));
}

/* --- roicopy's single-image round trip: bands up one stream, down another */

/* roicopy --streams N (roicopy(1)) cuts the ROI into N bands of rows,
 * uploads them in order on one stream and downloads them in order on
 * another, band i's download waiting for band i's upload only, so it
 * overlaps band i+1's upload: both directions of the link at once but for
 * the first upload and the last download.  The same with the raw
 * cudaMemcpy2DAsync and an event a band (the baseline) and with
 * cuxfer_copy2d_async and cuxfer_stream_wait, at several band counts; GB/s
 * counted over both directions, against the bidirectional link of this
 * run.  Targets: the best band count at least 0.94 of that link, and at
 * least 0.99 x the raw copies' best band count (doc/PERF.md, "Targets"). */
static const int banded_counts[] = {4, 8, 16, 32, 64};
#define BANDED_MAX 64
#define BANDED_TARGET 0.94
#define BANDED_VS_RAW 0.99

static size_t banded_side(void)
{
    return quick ? 4000 : 8000;
}

static void banded_name(char *buf, size_t len)
{
    snprintf(buf, len, "banded %zux%zu RGBA8", banded_side(), banded_side());
}

static int banded_wanted(void)
{
    char name[64];
    banded_name(name, sizeof name);
    return want(name) || want("banded");
}

/* One timed pass, as roicopy --timing times it: the uploads on `lead`,
 * each band's download on `down` after its upload's event.  No gate: the
 * bands start while later ones are queued, as in roicopy.  Milliseconds. */
static float banded_pass(int raw, int nb, cudaStream_t lead, cudaStream_t down,
                         const cudaEvent_t *ev, const cuxfer_view *src, const cuxfer_view *dev,
                         const cuxfer_view *dst, cuxfer_timer *t)
{
    float ms;
    int i;
    BENCH_CHECK(cuxfer_timer_start(t, lead));
    BENCH_CHECK(cuxfer_stream_wait(down, lead));
    for (i = 0; i < nb; ++i) {
        const cuxfer_view *a = &src[i], *d = &dev[i], *b = &dst[i];
        if (raw) {
            BENCH_CHECK(cudaMemcpy2DAsync(d->ptr, d->pitch, a->ptr, a->pitch,
                                          a->width * a->elem_size, a->height,
                                          cudaMemcpyHostToDevice, lead));
            BENCH_CHECK(cudaEventRecord(ev[i], lead));
            BENCH_CHECK(cudaStreamWaitEvent(down, ev[i], 0));
            BENCH_CHECK(cudaMemcpy2DAsync(b->ptr, b->pitch, d->ptr, d->pitch,
                                          a->width * a->elem_size, a->height,
                                          cudaMemcpyDeviceToHost, down));
        } else {
            BENCH_CHECK(cuxfer_copy2d_async(d, a, lead));
            BENCH_CHECK(cuxfer_stream_wait(down, lead));
            BENCH_CHECK(cuxfer_copy2d_async(b, d, down));
        }
    }
    BENCH_CHECK(cuxfer_stream_wait(lead, down));
    BENCH_CHECK(cuxfer_timer_stop(t, lead));
    BENCH_CHECK(cuxfer_timer_ms(t, CUXFER_WAIT, &ms));
    return ms;
}

static void bench_banded(cudaStream_t s, cuxfer_timer *t)
{
    const size_t W = banded_side(), H = banded_side(), E = 4;
    cuxfer_view img, outv, dv, src[BANDED_MAX], dev[BANDED_MAX], dst[BANDED_MAX];
    cudaStream_t down;
    cudaEvent_t ev[BANDED_MAX];
    stat best, best_raw;
    size_t ci;
    int i, r, k, best_n = 0;
    char name[64], n2[128];
    if (!banded_wanted())
        return;
    banded_name(name, sizeof name);
    BENCH_CHECK(cuxfer_view_alloc_host(&img, W, H, E, 0));
    BENCH_CHECK(cuxfer_view_alloc_host(&outv, W, H, E, 0));
    BENCH_CHECK(cuxfer_view_alloc_device(&dv, W, H, E));
    BENCH_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    for (i = 0; i < BANDED_MAX; ++i)
        BENCH_CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    fill(img.ptr, img.pitch * H, 51);
    memset(&best, 0, sizeof best);
    memset(&best_raw, 0, sizeof best_raw);
    for (ci = 0; ci < sizeof banded_counts / sizeof banded_counts[0]; ++ci) {
        int nb = banded_counts[ci];
        double v[2][64];
        for (i = 0; i < nb; ++i) { /* rows [H i / nb, H (i + 1) / nb), as roicopy */
            cuxfer_roi b;
            b.x = 0;
            b.width = W;
            b.y = H * (size_t)i / (size_t)nb;
            b.height = H * (size_t)(i + 1) / (size_t)nb - b.y;
            BENCH_CHECK(cuxfer_view_sub(&img, b, &src[i]));
            BENCH_CHECK(cuxfer_view_sub(&dv, b, &dev[i]));
            BENCH_CHECK(cuxfer_view_sub(&outv, b, &dst[i]));
        }
        for (r = -2; r < reps; ++r)
            for (k = 0; k < 2; ++k) {
                int which = k ^ (r & 1); /* 0 raw, 1 cuxfer */
                float ms = banded_pass(!which, nb, s, down, ev, src, dev, dst, t);
                if (r >= 0)
                    v[which][r] = cuxfer_gbps(2 * W * H * E, ms);
            }
        memset(outv.ptr, 0x5a, outv.pitch * H); /* cuxfer's pass alone, checked */
        (void)banded_pass(0, nb, s, down, ev, src, dev, dst, t);
        verify(img.ptr, outv.ptr, img.pitch * H, name);
        {
            stat raw = stats(v[0], reps), cux = stats(v[1], reps);
            snprintf(n2, sizeof n2, "%s %d bands", name, nb);
            report(n2, "GB/s", raw, cux, 0, 0, "info");
            if (link_s[LINK_BIDIR].median > 0) {
                snprintf(n2, sizeof n2, "%s %d bands of bidir link", name, nb);
                report(n2, "GB/s", link_s[LINK_BIDIR], cux, 0, 0, "info");
            }
            if (cux.median > best.median) {
                best = cux;
                best_n = nb;
            }
            if (raw.median > best_raw.median)
                best_raw = raw;
        }
    }
    if (link_s[LINK_BIDIR].median > 0) {
        char tt[16];
        snprintf(n2, sizeof n2, "%s best of bidir link", name);
        snprintf(tt, sizeof tt, ">=%.2fx", BANDED_TARGET);
        report(n2, "GB/s", link_s[LINK_BIDIR], best, 0, BANDED_TARGET, tt);
        if (out == OUT_TABLE)
            printf("%-*s (the best: %d bands)\n", NAME_W, "", best_n);
    }
    {
        char tt[16];
        snprintf(n2, sizeof n2, "%s best vs raw best", name);
        snprintf(tt, sizeof tt, ">=%.2fx", BANDED_VS_RAW);
        report(n2, "GB/s", best_raw, best, 0, BANDED_VS_RAW, tt);
    }
    for (i = 0; i < BANDED_MAX; ++i)
        BENCH_CHECK(cudaEventDestroy(ev[i]));
    BENCH_CHECK(cudaStreamDestroy(down));
    cuxfer_view_free(&img);
    cuxfer_view_free(&outv);
    cuxfer_view_free(&dv);
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

/* --- many ROIs: random tiles of an 8192x8192 RGBA8 image ------------------ */

enum { ROIS_W = 8192, ROIS_H = 8192, ROIS_E = 4, ROIS_MIX_MIN = 8, ROIS_MIX_MAX = 256 };

/* The tile sides: every power of two from 8 to 1024 and 1.5 times each from
 * 32 (AUTO's threshold is seen from both sides), then the whole image; n
 * tiles make about 64 MiB a copy (8x8: 16 MiB, the loop crawls at 2.5 us a
 * tile), at most the cells of the side x side grid.  Side 0 is the mixed
 * case: one tile in each 256x256 cell, its width and height drawn
 * log-uniformly from 8 to 256 apiece. */
static const struct { size_t side, n; } rois_cases[] = {
    {8, 65536}, {16, 65536}, {32, 16384}, {48, 7281}, {64, 4096}, {96, 1820},
    {128, 1024}, {192, 455}, {256, 256}, {384, 113}, {512, 64}, {768, 28},
    {1024, 16}, {8192, 1}, {0, (ROIS_W / ROIS_MIX_MAX) * (ROIS_H / ROIS_MIX_MAX)}};
#define ROIS_CASES (sizeof rois_cases / sizeof rois_cases[0])

/* The strategies measured side by side: the plan under test (AUTO, or the
 * one --rois-strategy forces) and each one forced. */
static const char *const rois_strategy_names[] = {"auto", "direct", "gather", "kernel"};
#define ROIS_PLANS 4 /* CUXFER_ROIS_AUTO .. CUXFER_ROIS_KERNEL */

static size_t rois_count(size_t ci)
{
    size_t n = rois_cases[ci].n;
    return quick && n > 4096 ? 4096 : n;
}

/* "rois h2d 65536 of 8x8", "rois d2h 1024 mixed 8-256" */
static void rois_name(char *buf, size_t len, size_t ci, int d2h)
{
    size_t side = rois_cases[ci].side;
    if (side)
        snprintf(buf, len, "rois %s %zu of %zux%zu", d2h ? "d2h" : "h2d", rois_count(ci), side,
                 side);
    else
        snprintf(buf, len, "rois %s %zu mixed %d-%d", d2h ? "d2h" : "h2d", rois_count(ci),
                 ROIS_MIX_MIN, ROIS_MIX_MAX);
}

static int rois_wanted(size_t ci, int d2h)
{
    char name[96];
    rois_name(name, sizeof name, ci, d2h);
    return want(name) || want("rois");
}

/* Targets (doc/PERF.md, "Targets").  Against the loop of cudaMemcpy2DAsync
 * in the same run, both directions: 50x at 8x8, 6x at 64x64, 2.5x at
 * 128x128, never below 0.98x. */
static double rois_target(size_t side, char *text, size_t n)
{
    double t = side == 8 ? 50.0 : side == 64 ? 6.0 : side == 128 ? 2.5 : 0.98;
    snprintf(text, n, ">=%gx", t);
    return t;
}

/* Against the 1D link of the same direction, 0.85, where a tile's rows are
 * whole 128-byte host lines (32x32 and up but 48x48); the plan under test
 * within 3 % of the fastest forced strategy.  Rows that are not (8x8,
 * 16x16, 48x48, the mixed sizes) cost a PCIe request per partial line, and
 * the copy kernel alone stops short of the link by as much as the host's
 * rate of small requests allows (0.30-0.44 of it at 8x8 on H200 hosts):
 * these are held to the kernel alone in the same run instead, at 0.70,
 * 0.85, 0.93 and 0.90 (doc/PERF.md, "Targets"), and their share of the
 * link is printed as information. */
static int rois_whole_lines(size_t side)
{
    return side != 0 && side * ROIS_E % 128 == 0;
}

/* ">=0.85x", or "info" for no target (t 0). */
static double rois_target_text(double t, char *text, size_t n)
{
    if (t > 0)
        snprintf(text, n, ">=%.2fx", t);
    else
        snprintf(text, n, "info");
    return t;
}

static double rois_link_target(size_t side, char *text, size_t n)
{
    return rois_target_text(rois_whole_lines(side) ? 0.85 : 0, text, n);
}

static double rois_kernel_target(size_t side, char *text, size_t n)
{
    double t = side == 0 ? 0.90 : side == 8 ? 0.70 : side == 16 ? 0.85 : 0.93;
    return rois_target_text(rois_whole_lines(side) ? 0 : t, text, n);
}
#define ROIS_AUTO_VS_BEST 0.97

/* The plan under test is also timed ROIS_RUN calls back to back a
 * repetition, host-timed from the first call to the stream being done: the
 * sustained rate of a program that copies tiles frame after frame, as the
 * link's figure (one large copy, event-timed behind a gate) is.  A single
 * call's figure also carries what no later call overlaps: its check before
 * the first launch and the host's wake-up at the end. */
#define ROIS_RUN 4

/* Random numbers of the tile picks: xorshift32, from a seed. */
static unsigned rois_rand(unsigned *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* n distinct cells of the side x side grid of the image, in random order:
 * tiles that never overlap, scattered over the whole image.  Side 0: the
 * mixed case, a tile of random size at a random place in each cell of
 * ROIS_MIX_MAX. */
static void rois_pick(cuxfer_roi *r, size_t n, size_t side, unsigned seed)
{
    size_t grid = side ? side : ROIS_MIX_MAX, cols = ROIS_W / grid, cells = cols * (ROIS_H / grid);
    size_t i, *perm = (size_t *)host_mem(cells * sizeof *perm, "rois");
    unsigned x = seed * 2654435761u + 1u;
    for (i = 0; i < cells; ++i)
        perm[i] = i;
    for (i = 0; i < n; ++i) { /* partial Fisher-Yates */
        size_t j = i + (size_t)rois_rand(&x) % (cells - i), tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
        r[i].x = perm[i] % cols * grid;
        r[i].y = perm[i] / cols * grid;
        r[i].width = r[i].height = side;
        if (!side) { /* log-uniform sides: as many small tiles as large */
            double lo = log((double)ROIS_MIX_MIN), span = log((double)ROIS_MIX_MAX) - lo;
            r[i].width = (size_t)(exp(lo + span * (rois_rand(&x) % 10001) / 10000.0) + 0.5);
            r[i].height = (size_t)(exp(lo + span * (rois_rand(&x) % 10001) / 10000.0) + 0.5);
            r[i].x += rois_rand(&x) % (grid - r[i].width + 1);
            r[i].y += rois_rand(&x) % (grid - r[i].height + 1);
        }
    }
    free(perm);
}

/* The raw baseline: one cudaMemcpy2DAsync per tile, tile i at off[i] of the
 * dense buffer (cuxfer_rois_offsets, as the plan packs them). */
static void rois_raw(int d2h, const cuxfer_view *img, const cuxfer_roi *r, const size_t *off,
                     size_t n, unsigned char *dense, cudaStream_t s)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        size_t rb = r[i].width * img->elem_size;
        unsigned char *h = (unsigned char *)img->ptr + r[i].y * img->pitch + r[i].x * img->elem_size;
        BENCH_CHECK(d2h ? cudaMemcpy2DAsync(h, img->pitch, dense + off[i], rb, rb, r[i].height,
                                            cudaMemcpyDeviceToHost, s)
                        : cudaMemcpy2DAsync(dense + off[i], rb, h, img->pitch, rb, r[i].height,
                                            cudaMemcpyHostToDevice, s));
    }
}

/* Tiles of `src` (the image) equal tile by tile to `got` (an image, or
 * the dense buffer read back when dense_back is not NULL). */
static void rois_verify(const cuxfer_view *src, const cuxfer_roi *r, const size_t *off, size_t n,
                        const unsigned char *img_back, const unsigned char *dense_back,
                        const char *what)
{
    size_t i, y;
    for (i = 0; i < n; ++i) {
        size_t rb = r[i].width * src->elem_size;
        for (y = 0; y < r[i].height; ++y) {
            size_t o = (r[i].y + y) * src->pitch + r[i].x * src->elem_size;
            const unsigned char *g = dense_back ? dense_back + off[i] + y * rb : img_back + o;
            if (memcmp(g, (const unsigned char *)src->ptr + o, rb) != 0) {
                fprintf(stderr, "xferbench: %s: tile %zu row %zu differs\n", what, i, y);
                bench_exit(1);
            }
        }
    }
}

/* Every byte of p[0, n) is v. */
static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    static unsigned char block[65536];
    size_t k;
    memset(block, v, sizeof block);
    for (; n; p += k, n -= k) {
        k = n < sizeof block ? n : sizeof block;
        if (memcmp(p, block, k) != 0)
            return 0;
    }
    return 1;
}

/* A download into `back` (poisoned with 0x5a before it): the tiles equal
 * the image's, and every other byte still holds the poison. */
static void rois_verify_d2h(const cuxfer_view *img, cuxfer_view *back, const cuxfer_roi *r,
                            const size_t *off, size_t n, const char *what)
{
    size_t i, y;
    rois_verify(img, r, off, n, (const unsigned char *)back->ptr, NULL, what);
    for (i = 0; i < n; ++i) /* re-poison the tiles: all must be poison */
        for (y = 0; y < r[i].height; ++y)
            memset((unsigned char *)back->ptr + (r[i].y + y) * back->pitch + r[i].x * ROIS_E, 0x5a,
                   r[i].width * ROIS_E);
    if (!all_bytes((const unsigned char *)back->ptr, back->pitch * back->height, 0x5a)) {
        fprintf(stderr, "xferbench: %s: a byte outside the tiles written\n", what);
        bench_exit(1);
    }
}

/* One plan's copy, checked byte for byte: H2D, the tiles in a poisoned
 * dense buffer; D2H, the tiles in a poisoned image whose other bytes must
 * keep the poison. */
static void rois_check(cuxfer_rois *plan, int d2h, const cuxfer_view *img, cuxfer_view *back,
                       const cuxfer_roi *r, const size_t *off, size_t n, cuxfer_view *dense,
                       unsigned char *dense_back, cudaStream_t s, const char *what)
{
    size_t bytes = off[n];
    if (!d2h) {
        BENCH_CHECK(cudaMemsetAsync(dense->ptr, 0xa5, bytes, s)); /* before the copy on s */
        BENCH_CHECK(cuxfer_rois_copy_async(plan, CUXFER_ROIS_H2D, img, r, n, dense, s));
        BENCH_CHECK(cudaStreamSynchronize(s));
        BENCH_CHECK(cudaMemcpy(dense_back, dense->ptr, bytes, cudaMemcpyDeviceToHost));
        rois_verify(img, r, off, n, NULL, dense_back, what);
        return;
    }
    memset(back->ptr, 0x5a, back->pitch * back->height);
    BENCH_CHECK(cuxfer_rois_copy_async(plan, CUXFER_ROIS_D2H, back, r, n, dense, s));
    BENCH_CHECK(cudaStreamSynchronize(s));
    rois_verify_d2h(img, back, r, off, n, what);
}

/* Rows of a band of at most `band` bytes (one where a row is wider). */
static size_t rois_band_rows(size_t rb, size_t band)
{
    return rb >= band ? 1 : band / rb;
}

/* The copy kernel alone, the ceiling of KERNEL on this host: the tiles'
 * descriptors (bands as the plan cuts them) already in device memory, one
 * launch, event-timed, GB/s (medians of reps); the plan's own time above
 * it is its host part (the checks, the descriptors written while the GPU
 * runs).  Its bytes are verified as the plans' are.  The median is 0 where
 * the plan cannot load the kernel. */
static stat rois_kernel_alone(const cuxfer_rois *plan, int d2h, const cuxfer_view *img,
                              cuxfer_view *back, const cuxfer_roi *r, const size_t *off,
                              size_t n, cuxfer_view *dense, unsigned char *dense_back,
                              cudaStream_t s)
{
    const cuxfer_view *h = d2h ? back : img;
    size_t i, y, m = 0, total = off[n], band = total / 4096 > 4096 ? total / 4096 : 4096;
    cuxfer_impl_tile *d = NULL, *dd = NULL;
    unsigned char *hdev = NULL;
    uintptr_t align;
    double v[64];
    cudaEvent_t e[2];
    stat none = {0, 0};
    int k;
    if (plan->kernel == NULL)
        return none;
    for (i = 0; i < n; ++i) /* bands of whole rows, as the plan's */
        m += (r[i].height + rois_band_rows(r[i].width * ROIS_E, band) - 1) /
             rois_band_rows(r[i].width * ROIS_E, band);
    d = (cuxfer_impl_tile *)host_mem(m * sizeof *d, "rois");
    BENCH_CHECK(cudaMalloc((void **)&dd, m * sizeof *d));
    BENCH_CHECK(cudaHostGetDevicePointer((void **)&hdev, h->ptr, 0));
    align = (uintptr_t)hdev | (uintptr_t)dense->ptr | h->pitch;
    for (i = 0, m = 0; i < n; ++i) {
        size_t rb = r[i].width * ROIS_E, br = rois_band_rows(rb, band);
        for (y = 0; y < r[i].height; y += br) {
            cuxfer_impl_tile_put(&d[m++], (r[i].y + y) * h->pitch + r[i].x * ROIS_E,
                                 off[i] + y * rb, r[i].height - y < br ? r[i].height - y : br,
                                 rb);
            align |= (uintptr_t)d[m - 1].src | (uintptr_t)d[m - 1].dst | rb;
        }
    }
    BENCH_CHECK(cudaMemcpy(dd, d, m * sizeof *d, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaEventCreate(&e[0]));
    BENCH_CHECK(cudaEventCreate(&e[1]));
    for (k = -2; k < reps; ++k) {
        float ms;
        if (k == reps - 1 && d2h) /* the last one verified */
            memset(back->ptr, 0x5a, back->pitch * back->height);
        if (k == reps - 1 && !d2h)
            BENCH_CHECK(cudaMemsetAsync(dense->ptr, 0xa5, total, s));
        BENCH_CHECK(cudaEventRecord(e[0], s));
        BENCH_CHECK(cuxfer_impl_kernel_launch(plan->kernel, plan->kblocks, dd, (unsigned)m, hdev,
                                              h->pitch, dense->ptr, 0, (unsigned)d2h, align, 0,
                                              s));
        BENCH_CHECK(cudaEventRecord(e[1], s));
        BENCH_CHECK(cudaEventSynchronize(e[1]));
        BENCH_CHECK(cudaEventElapsedTime(&ms, e[0], e[1]));
        if (k >= 0)
            v[k] = (double)total / (ms * 1e6);
    }
    if (!d2h)
        BENCH_CHECK(cudaMemcpy(dense_back, dense->ptr, total, cudaMemcpyDeviceToHost));
    if (d2h)
        rois_verify_d2h(img, back, r, off, n, "rois: the kernel alone");
    else
        rois_verify(img, r, off, n, NULL, dense_back, "rois: the kernel alone");
    BENCH_CHECK(cudaEventDestroy(e[0]));
    BENCH_CHECK(cudaEventDestroy(e[1]));
    BENCH_CHECK(cudaFree(dd));
    free(d);
    return stats(v, reps);
}

/* GB/s of tile bytes, host-timed from the first call to the stream being
 * done (the loop's cost is its enqueue: it belongs in the figure); the raw
 * loop, the plan under test and each strategy forced take turns rep by rep
 * (the order rotated every rep), so drift falls on all alike.  Rows per
 * case and direction: the plan against the loop (named for the strategy it
 * took), each forced strategy against the loop (no target), the plan
 * against the fastest forced one, and the plan as a fraction of the 1D
 * link measured in the same run.  Every plan's bytes are verified. */
static void bench_rois(cudaStream_t s)
{
    cuxfer_view img, back, dense;
    cuxfer_rois plans[ROIS_PLANS];
    int have[ROIS_PLANS];
    cuxfer_roi *r;
    unsigned char *dense_back, *dptr;
    size_t ci, *off;
    int p, any = 0;
    for (ci = 0; ci < ROIS_CASES; ++ci)
        any |= rois_wanted(ci, 0) | rois_wanted(ci, 1);
    if (!any)
        return;
    BENCH_CHECK(cuxfer_view_alloc_host(&img, ROIS_W, ROIS_H, ROIS_E, 0));
    BENCH_CHECK(cuxfer_view_alloc_host(&back, ROIS_W, ROIS_H, ROIS_E, 0));
    BENCH_CHECK(cudaMalloc((void **)&dptr, (size_t)ROIS_W * ROIS_H * ROIS_E));
    BENCH_CHECK(cuxfer_view_wrap(&dense, dptr, (size_t)ROIS_W * ROIS_E, ROIS_W, ROIS_H, ROIS_E));
    dense_back = (unsigned char *)host_mem((size_t)ROIS_W * ROIS_H * ROIS_E, "rois");
    r = (cuxfer_roi *)host_mem(65536 * sizeof *r, "rois");
    off = (size_t *)host_mem(65537 * sizeof *off, "rois");
    fill(img.ptr, img.pitch * ROIS_H, 31);
    /* plans[0]: the plan under test; plans[k]: strategy k forced (KERNEL
     * is refused where the runtime or driver cannot load it: said once) */
    for (p = 0; p < ROIS_PLANS; ++p) {
        cuxfer_rois_options o = rois_opt;
        cudaError_t e;
        if (p)
            o.strategy = p;
        e = cuxfer_rois_create(&plans[p], &o);
        have[p] = e == cudaSuccess;
        if (!have[p] && p == 0)
            BENCH_CHECK(e);
        if (!have[p]) {
            (void)cudaGetLastError();
            fprintf(stderr, "xferbench: rois: %s not measured: %s\n", rois_strategy_names[p],
                    cuxfer_last_reason());
        }
    }
    for (ci = 0; ci < ROIS_CASES; ++ci) {
        size_t side = rois_cases[ci].side, n = rois_count(ci), bytes;
        int dir, rr, k, kk;
        char name[96], n2[128], tt[24];
        if (!rois_wanted(ci, 0) && !rois_wanted(ci, 1))
            continue;
        rois_pick(r, n, side, (unsigned)(side ? side : 7));
        BENCH_CHECK(cuxfer_rois_offsets(r, n, ROIS_E, off));
        bytes = off[n];
        for (dir = 0; dir < 2; ++dir) {
            double v[1 + ROIS_PLANS][64], vrun[64];
            int strategy = cuxfer_rois_choose(&plans[0], n, bytes), best = -1, prev = -1;
            stat st[1 + ROIS_PLANS];
            rois_name(name, sizeof name, ci, dir);
            if (!rois_wanted(ci, dir))
                continue;
            if (dir == 1) /* the dense buffer holds the tiles (also when H2D was skipped) */
                rois_raw(0, &img, r, off, n, dptr, s);
            BENCH_CHECK(cudaStreamSynchronize(s));
            for (rr = -2; rr < reps; ++rr)
                for (kk = 0; kk <= ROIS_PLANS; ++kk) {
                    double t0;
                    int warm;
                    k = (kk + (rr < 0 ? 0 : rr)) % (1 + ROIS_PLANS); /* 0: the loop */
                    if (k && !have[k - 1])
                        continue;
                    /* Right after a per-tile loop (the raw one or DIRECT:
                     * up to 160 ms of tiny copies) a strategy ran 10-15 %
                     * slower: one untimed copy first, so that every figure
                     * is taken after a copy of its own (the last one is
                     * timed) */
                    warm = k && (prev == 0 || prev == 1 + CUXFER_ROIS_DIRECT);
                    prev = k;
                    do {
                        t0 = now_us();
                        if (k == 0)
                            rois_raw(dir, dir ? &back : &img, r, off, n, dptr, s);
                        else
                            BENCH_CHECK(cuxfer_rois_copy_async(
                                &plans[k - 1], dir ? CUXFER_ROIS_D2H : CUXFER_ROIS_H2D,
                                dir ? &back : &img, r, n, &dense, s));
                        BENCH_CHECK(cudaStreamSynchronize(s));
                    } while (warm-- > 0);
                    if (rr >= 0)
                        v[k][rr] = (double)bytes / ((now_us() - t0) * 1e3);
                }
            for (rr = -1; rr < reps; ++rr) {
                double t0 = now_us();
                for (kk = 0; kk < ROIS_RUN; ++kk)
                    BENCH_CHECK(cuxfer_rois_copy_async(&plans[0],
                                                       dir ? CUXFER_ROIS_D2H : CUXFER_ROIS_H2D,
                                                       dir ? &back : &img, r, n, &dense, s));
                BENCH_CHECK(cudaStreamSynchronize(s));
                if (rr >= 0)
                    vrun[rr] = (double)(bytes * ROIS_RUN) / ((now_us() - t0) * 1e3);
            }
            for (p = 0; p < ROIS_PLANS; ++p)
                if (have[p]) {
                    snprintf(n2, sizeof n2, "%s %s", name, rois_strategy_names[p]);
                    rois_check(&plans[p], dir, &img, &back, r, off, n, &dense, dense_back, s, n2);
                }
            for (k = 0; k <= ROIS_PLANS; ++k)
                if (k == 0 || have[k - 1])
                    st[k] = stats(v[k], reps);
            snprintf(n2, sizeof n2, "%s (%s)", name, rois_strategy_names[strategy]);
            report(n2, "GB/s", st[0], st[1], 0, rois_target(side, tt, sizeof tt), tt);
            for (p = 1; p < ROIS_PLANS; ++p)
                if (have[p]) {
                    snprintf(n2, sizeof n2, "%s forced %s", name, rois_strategy_names[p]);
                    report(n2, "GB/s", st[0], st[1 + p], 0, 0, "info");
                    if (best < 0 || st[1 + p].median > st[1 + best].median)
                        best = p;
                }
            if (best > 0) {
                snprintf(n2, sizeof n2, "%s %s vs best (%s)", name,
                         rois_strategy_names[rois_opt.strategy], rois_strategy_names[best]);
                snprintf(tt, sizeof tt, ">=%.2fx", ROIS_AUTO_VS_BEST);
                report(n2, "GB/s", st[1 + best], st[1], 0, ROIS_AUTO_VS_BEST, tt);
            }
            if (have[CUXFER_ROIS_KERNEL]) {
                stat ka = rois_kernel_alone(&plans[CUXFER_ROIS_KERNEL], dir, &img, &back, r, off,
                                            n, &dense, dense_back, s);
                snprintf(n2, sizeof n2, "%s vs kernel alone", name);
                if (ka.median > 0)
                    report(n2, "GB/s", ka, st[1], 0, rois_kernel_target(side, tt, sizeof tt), tt);
            }
            snprintf(n2, sizeof n2, "%s of link", name);
            if (link_s[dir ? LINK_D2H : LINK_H2D].median > 0)
                report(n2, "GB/s", link_s[dir ? LINK_D2H : LINK_H2D], st[1], 0,
                       rois_link_target(side, tt, sizeof tt), tt);
            snprintf(n2, sizeof n2, "%s of link, %d calls", name, ROIS_RUN);
            if (link_s[dir ? LINK_D2H : LINK_H2D].median > 0)
                report(n2, "GB/s", link_s[dir ? LINK_D2H : LINK_H2D], stats(vrun, reps), 0,
                       rois_link_target(side, tt, sizeof tt), tt);
        }
    }
    for (p = 0; p < ROIS_PLANS; ++p)
        if (have[p])
            BENCH_CHECK(cuxfer_rois_destroy(&plans[p]));
    cuxfer_view_free(&img);
    cuxfer_view_free(&back);
    cudaFree(dptr);
    free(dense_back);
    free(r);
    free(off);
}

/* --- pageable memory: plain vs staged vs registered ------------------------ */

/* GB/s, host-timed from the call to the data being in place, for a plain
 * cudaMemcpyAsync from/to malloc'd memory and for the stager (two slot
 * configurations); also how long the staged call kept the caller. */
static void bench_pageable(cudaStream_t s)
{
    size_t n = link_bytes;
    unsigned char *pg, *pg2;
    void *d;
    static const struct { int slots; size_t bytes; const char *name; } cfg[] = {
        {0, 0, "4x16MiB"}, {8, 4 * MIB, "8x4MiB"}};
    double v_raw[64], v_st[64], v_ret[64], t0;
    int dir, r, c;
    char name[96];
    if (!want("pageable"))
        return;
    pg = (unsigned char *)host_mem(n, "pageable");
    pg2 = (unsigned char *)host_mem(n, "pageable");
    d = device(n);
    fill(pg, n, 21);
    memset(pg2, 1, n);
    for (dir = 0; dir < 2; ++dir) {
        for (r = -1; r < reps; ++r) {
            t0 = now_us();
            BENCH_CHECK(dir ? cudaMemcpyAsync(pg2, d, n, cudaMemcpyDeviceToHost, s)
                            : cudaMemcpyAsync(d, pg, n, cudaMemcpyHostToDevice, s));
            BENCH_CHECK(cudaStreamSynchronize(s));
            if (r >= 0)
                v_raw[r] = (double)n / ((now_us() - t0) * 1e3);
        }
        for (c = 0; c < 2; ++c) {
            cuxfer_stager st;
            cuxfer_stager_options o;
            memset(&o, 0, sizeof o);
            o.slots = cfg[c].slots;
            o.slot_bytes = cfg[c].bytes;
            BENCH_CHECK(cuxfer_stager_create(&st, &o));
            for (r = -1; r < reps; ++r) {
                double t1;
                BENCH_CHECK(cudaStreamSynchronize(s));
                t0 = now_us();
                BENCH_CHECK(dir ? cuxfer_stage_d2h(&st, pg2, d, n, s) : cuxfer_stage_h2d(&st, d, pg, n, s));
                t1 = now_us();
                BENCH_CHECK(cuxfer_stager_wait(&st, 60000));
                if (r >= 0) {
                    v_st[r] = (double)n / ((now_us() - t0) * 1e3);
                    v_ret[r] = t1 - t0;
                }
            }
            BENCH_CHECK(cuxfer_stager_destroy(&st));
            snprintf(name, sizeof name, "pageable %s staged %s", dir ? "d2h" : "h2d", cfg[c].name);
            report(name, "GB/s", stats(v_raw, reps), stats(v_st, reps), 0, dir ? 2.5 : 3.5,
                   dir ? ">=2.5x" : ">=3.5x");
            if (out == OUT_TABLE)
                printf("%-*s the staged call returned after %.1f us (copy took %.1f ms)\n", NAME_W, "",
                       stats(v_ret, reps).median, (double)n / stats(v_st, reps).median / 1e6);
        }
        if (dir == 1)
            verify(pg, pg2, n, "pageable d2h");
        else {
            BENCH_CHECK(cudaMemcpy(pg2, d, n, cudaMemcpyDeviceToHost));
            verify(pg, pg2, n, "pageable h2d");
        }
        /* register in place, one-off: register + copy + unregister */
        for (r = -1; r < reps; ++r) {
            t0 = now_us();
            BENCH_CHECK(cuxfer_host_register(dir ? (void *)pg2 : (void *)pg, n, 0));
            BENCH_CHECK(dir ? cuxfer_copy_async(pg2, d, n, s) : cuxfer_copy_async(d, pg, n, s));
            BENCH_CHECK(cudaStreamSynchronize(s));
            BENCH_CHECK(cuxfer_host_unregister(dir ? (void *)pg2 : (void *)pg));
            if (r >= 0)
                v_st[r] = (double)n / ((now_us() - t0) * 1e3);
        }
        snprintf(name, sizeof name, "pageable %s register+copy+unreg", dir ? "d2h" : "h2d");
        report(name, "GB/s", stats(v_raw, reps), stats(v_st, reps), 0, 0, "info");
    }
    free(pg);
    free(pg2);
    cudaFree(d);
}

/* --- several GPUs ----------------------------------------------------------- */

/* Every GPU's H2D and D2H alone (raw vs cuxfer), all GPUs at once
 * (aggregate, host-timed from the gates' opening), and peer copies
 * between GPU 0 and each other GPU (cudaMemcpyPeerAsync vs
 * cuxfer_copy2d_async), each direction. */
static void bench_multi(int ndev)
{
    enum { MAXD = 16 };
    size_t n = link_bytes;
    void *h[MAXD], *d[MAXD];
    cudaStream_t st[MAXD];
    cuxfer_timer tm[MAXD];
    int i, dir, r;
    char name[96];
    if (ndev < 2 || !want("multi"))
        return;
    if (ndev > MAXD)
        ndev = MAXD;
    for (i = 0; i < ndev; ++i) {
        BENCH_CHECK(cudaSetDevice(i));
        BENCH_CHECK(cuxfer_host_alloc(&h[i], n, 1, cudaHostAllocPortable));
        BENCH_CHECK(cudaMalloc(&d[i], n));
        BENCH_CHECK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
        BENCH_CHECK(cuxfer_timer_create(&tm[i]));
        fill(h[i], n, (unsigned)i + 90);
    }
    BENCH_CHECK(cudaSetDevice(0));
    for (dir = 0; dir < 2; ++dir) {
        double alone_sum = 0, v_raw[64], v_cux[64];
        for (i = 0; i < ndev; ++i) {
            stat raw, cux;
            BENCH_CHECK(cudaSetDevice(i));
            time_1d(raw_copy, cux_copy, dir ? h[i] : d[i], dir ? d[i] : h[i], n, 1, st[i], &tm[i],
                    &raw, &cux);
            alone_sum += raw.median;
            snprintf(name, sizeof name, "gpu%d %s alone", i, dir ? "d2h" : "h2d");
            report(name, "GB/s", raw, cux, 0, 0.99, ">=0.99x");
        }
        /* all at once: raw first, then cuxfer */
        for (r = -1; r < reps; ++r) {
            int k;
            for (k = 0; k < 2; ++k) {
                double t0;
                __atomic_store_n(&gate_flag, 0, __ATOMIC_RELEASE);
                for (i = 0; i < ndev; ++i) {
                    BENCH_CHECK(cudaSetDevice(i));
                    BENCH_CHECK(cudaLaunchHostFunc(st[i], gate_fn, &gate_flag));
                    BENCH_CHECK((k ? cux_copy : raw_copy)(dir ? h[i] : d[i], dir ? d[i] : h[i], n,
                                                          st[i]));
                }
                t0 = now_us();
                gate_open();
                for (i = 0; i < ndev; ++i)
                    BENCH_CHECK(cudaStreamSynchronize(st[i]));
                if (r >= 0)
                    (k ? v_cux : v_raw)[r] = (double)n * ndev / ((now_us() - t0) * 1e3);
            }
        }
        BENCH_CHECK(cudaSetDevice(0));
        snprintf(name, sizeof name, "all %d gpus %s at once", ndev, dir ? "d2h" : "h2d");
        report(name, "GB/s", stats(v_raw, reps), stats(v_cux, reps), 0, 0.99, ">=0.99x");
        if (out == OUT_TABLE)
            printf("%-*s sum of the GPUs alone %.3f GB/s (single-GPU baseline: gpu0 above)\n", NAME_W, "",
                   alone_sum);
    }
    for (i = 1; i < ndev; ++i)
        for (dir = 0; dir < 2; ++dir) {
            int src = dir ? i : 0, dst = dir ? 0 : i;
            cuxfer_view sv, dv;
            double v_raw[64], v_cux[64];
            float ms;
            int k;
            BENCH_CHECK(cudaSetDevice(src));
            BENCH_CHECK(cuxfer_view_wrap(&dv, d[dst], n / 4096, n / 4096, 4096, 1));
            BENCH_CHECK(cuxfer_view_wrap(&sv, d[src], n / 4096, n / 4096, 4096, 1));
            for (r = -2; r < reps; ++r)
                for (k = 0; k < 2; ++k) {
                    BENCH_CHECK(cuxfer_timer_start(&tm[src], st[src]));
                    BENCH_CHECK(k ? cuxfer_copy2d_async(&dv, &sv, st[src])
                                  : cudaMemcpyPeerAsync(d[dst], dst, d[src], src, n, st[src]));
                    BENCH_CHECK(cuxfer_timer_stop(&tm[src], st[src]));
                    BENCH_CHECK(cuxfer_timer_ms(&tm[src], CUXFER_WAIT, &ms));
                    if (r >= 0)
                        (k ? v_cux : v_raw)[r] = cuxfer_gbps(n, ms);
                }
            snprintf(name, sizeof name, "peer gpu%d -> gpu%d", src, dst);
            report(name, "GB/s", stats(v_raw, reps), stats(v_cux, reps), 0, 0.99, ">=0.99x");
        }
    {
        unsigned char *chk = (unsigned char *)host_mem(n, "multi");
        BENCH_CHECK(cudaSetDevice(0));
        BENCH_CHECK(cudaMemcpy(chk, d[0], n, cudaMemcpyDeviceToHost));
        /* The last peer copy was gpu(ndev-1) -> gpu0: both must now hold
         * the same bytes. */
        {
            unsigned char *other = (unsigned char *)host_mem(n, "multi");
            BENCH_CHECK(cudaSetDevice(ndev - 1));
            BENCH_CHECK(cudaMemcpy(other, d[ndev - 1], n, cudaMemcpyDeviceToHost));
            verify(other, chk, n, "peer");
            free(other);
        }
        free(chk);
    }
    for (i = 0; i < ndev; ++i) {
        BENCH_CHECK(cudaSetDevice(i));
        cuxfer_timer_destroy(&tm[i]);
        cudaStreamDestroy(st[i]);
        cudaFree(d[i]);
        cuxfer_host_free(h[i]);
    }
    BENCH_CHECK(cudaSetDevice(0));
}

/* --- the cases by name --------------------------------------------------- */

/* Whether a selected case reports against the link of this run (the
 * row-width curves are drawn against it too). */
static int needs_link(void)
{
    size_t i;
    int d;
    if (want("roundtrip") || banded_wanted())
        return 1;
    for (i = 0; i < ROIS_CASES; ++i)
        for (d = 0; d < 2; ++d)
            if (rois_wanted(i, d))
                return 1;
    for (i = 0; i < sizeof twod_widths / sizeof twod_widths[0]; ++i)
        for (d = 0; d < 2; ++d)
            if (twod_wanted(twod_widths[i], d))
                return 1;
    return 0;
}

/* --list: the cases the same options would run, one name a line, in the
 * order they run; no device needed.  Each name is what --only matches.
 * Printed to f; NULL prints nothing (it marks the patterns that match). */
static int list_case(FILE *f, const char *name)
{
    return f ? fprintf(f, "%s\n", name) : 0;
}

static int list_cases(FILE *f)
{
    static const char *const simple[] = {"enqueue", "enqueue-8t"};
    static const char *const late[] = {"pool", "pageable", "ring", "roundtrip"};
    char name[96];
    size_t i;
    int d;
    if (want("h2d-1d") || need_link)
        list_case(f, "h2d-1d");
    if (want("d2h-1d") || need_link)
        list_case(f, "d2h-1d");
    if (want("bidir-1d") || need_link)
        list_case(f, "bidir-1d");
    for (i = 0; i < sizeof simple / sizeof simple[0]; ++i)
        if (want(simple[i]))
            list_case(f, simple[i]);
    for (i = 0; i < sizeof twod_widths / sizeof twod_widths[0]; ++i)
        for (d = 0; d < 2; ++d)
            if (twod_wanted(twod_widths[i], d)) {
                twod_name(name, sizeof name, twod_widths[i], d);
                list_case(f, name);
            }
    if (want("image"))
        list_case(f, "image");
    for (i = 0; i < ROIS_CASES; ++i)
        for (d = 0; d < 2; ++d)
            if (rois_wanted(i, d)) {
                rois_name(name, sizeof name, i, d);
                list_case(f, name);
            }
    for (i = 0; i < sizeof late / sizeof late[0]; ++i)
        if (want(late[i]))
            list_case(f, late[i]);
    if (banded_wanted()) {
        banded_name(name, sizeof name);
        list_case(f, name);
    }
    if (want("multi"))
        list_case(f, "multi (with several GPUs)");
    return 0;
}

/* --- main ------------------------------------------------------------------ */

/* Leading ':' : a missing argument comes back as ':' rather than '?'. */
static const char short_opts[] = ":qr:s:o:ljcd:hVC";
static const char usage_line[] =
    "usage: xferbench [--quick] [--calibrate] [--reps N] [--size MIB]\n"
    "                 [--only CASE]... [--list] [--json | --csv] [--device N]\n"
    "                 [--rois-threads N] [--rois-chunk KIB] [--rois-strategy S]\n"
    "                 [--rows-dense] [--rows-threads N]\n";

static void usage(FILE *f)
{
    fputs(usage_line, f);
    fputs("Measure cuxfer against raw CUDA transfers, side by side, in one process.\n"
          "\n"
          "  -q, --quick        fewer repetitions and smaller buffers (smoke run)\n"
          "  -C, --calibrate    calibrate the 2D planner first and use its tuning\n"
          "  -r, --reps N       repetitions per figure, 3..64 (default 15)\n"
          "  -s, --size MIB     1D link buffers in MiB, 1..8192 (default 256)\n"
          "  -o, --only CASE    run only the cases with a word of their name starting\n"
          "                     CASE; repeat for several (cases against the link\n"
          "                     run it too)\n"
          "  -l, --list         print the names of the cases that would run, and exit\n"
          "  -j, --json         one JSON array instead of the table\n"
          "  -c, --csv          comma-separated values instead of the table\n"
          "  -d, --device N     the CUDA device to measure (default 0)\n"
          "      --rois-threads N  cuxfer_rois threads, 1..64 (default: its own)\n"
          "      --rois-chunk KIB  cuxfer_rois staging chunk in KiB, 4..1048576\n"
          "      --rois-strategy S  force cuxfer_rois's strategy: auto (default), direct,\n"
          "                         gather or kernel\n"
          "      --rows-dense   the 2d cases' device rows back to back (default: as\n"
          "                     cudaMallocPitch pads them)\n"
          "      --rows-threads N  the 2d cases' planner threads, 1..32 (default: its own)\n"
          "  -h, --help         this text\n"
          "  -V, --version      print the version\n"
          "Cases (for --only):\n"
          "  h2d-1d             pinned 1D link, host to device\n"
          "  d2h-1d             pinned 1D link, device to host\n"
          "  bidir-1d           pinned 1D link, both directions at once\n"
          "  enqueue            host cost of enqueueing one 4 KiB copy\n"
          "  enqueue-8t         the same from 8 threads at once\n"
          "  2d                 rows of 1 B to 1 MiB: copy2d and the planner\n"
          "  image              an 8192x8192 RGBA8 full-image ROI\n"
          "  rois               many tiles of one image, 8x8 to 1024x1024 and mixed\n"
          "                     sizes: one copy each, cuxfer_rois, each strategy\n"
          "  pool               pinned pool acquire/release, and its waste\n"
          "  pageable           malloc'd memory: the stager, register+copy\n"
          "  ring               copy/compute overlap through a 3-slot ring\n"
          "  roundtrip          a round-trip frame pipeline, 3-slot ring\n"
          "  banded             roicopy's round trip of one image in bands of rows\n"
          "  multi              several GPUs: alone, all at once, peer copies\n"
          "Exit status: 0 every target met, 1 a target missed or bytes differ,\n"
          "2 usage, 4 standard output could not be written, 5 no CUDA device or\n"
          "a CUDA call failed.  See xferbench(1).\n",
          f);
}

static const struct option long_opts[] = {
    {"quick", no_argument, NULL, 'q'}, {"reps", required_argument, NULL, 'r'},
    {"size", required_argument, NULL, 's'}, {"only", required_argument, NULL, 'o'},
    {"json", no_argument, NULL, 'j'}, {"csv", no_argument, NULL, 'c'},
    {"device", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'}, {"calibrate", no_argument, NULL, 'C'},
    {"list", no_argument, NULL, 'l'},
    {"rois-threads", required_argument, NULL, 1001},
    {"rois-chunk", required_argument, NULL, 1002},
    {"rois-strategy", required_argument, NULL, 1003},
    {"rows-dense", no_argument, NULL, 1004},
    {"rows-threads", required_argument, NULL, 1005}, {NULL, 0, NULL, 0}};

/* A number option's value in lo..hi, read by roicopy's strict parser
 * (digits only, no overflow): 0, or status 2 with the reason printed. */
static int number_option(const char *opt, const char *arg, unsigned long lo, unsigned long hi,
                         unsigned long *v)
{
    char err[GEOM_ERR_MAX];
    if (geom_parse_uint(arg, lo, hi, opt, v, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "xferbench: %s\n", err);
    return 2;
}

/* getopt's complaint as one line in the tools' shared format (roicopy's):
 * "xferbench: unknown option --x" and the usage line, status 2. */
static int bad_option(int c, char **argv)
{
    /* The token is argv[optind - 1] once getopt moved past it; in the middle
     * of a cluster (-xq) it has not, so short options are named by optopt. */
    const char *tok = argv[optind - 1];
    int is_long = tok[0] == '-' && tok[1] == '-';
    if (c == ':' && is_long)
        fprintf(stderr, "xferbench: option %s needs an argument\n", tok);
    else if (c == ':')
        fprintf(stderr, "xferbench: option -%c needs an argument\n", optopt);
    else if (optopt && is_long && strchr(short_opts + 1, optopt))
        /* a flag given a value: --json=1 */
        fprintf(stderr, "xferbench: option %.*s takes no argument\n",
                (int)strcspn(tok, "="), tok);
    else if (optopt)
        fprintf(stderr, "xferbench: unknown option -%c\n", optopt);
    else {
        char name[64], names[256];
        (void)snprintf(name, sizeof name, "%.*s", (int)strcspn(tok, "="), tok);
        if (longopts_matching(long_opts, name, names, sizeof names) > 1)
            fprintf(stderr, "xferbench: option %s is ambiguous: %s\n", name, names);
        else
            fprintf(stderr, "xferbench: unknown option %s\n", name);
    }
    fputs(usage_line, stderr);
    return 2;
}

static int run(int argc, char **argv)
{
    int calibrate = 0;
    int c, n = 0, dev = 0, drv = 0, rt = 0;
    unsigned long v;
    cudaStream_t s1, s2;
    cuxfer_timer t, t1;
    char name[256], team[32] = "";

    opterr = 0; /* bad_option speaks instead of glibc */
    while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
        switch (c) {
        case 'C': calibrate = 1; break;
        case 'q': quick = 1; break;
        case 'r':
            if (number_option("--reps", optarg, 3, 64, &v))
                return 2;
            reps = (int)v;
            reps_given = 1;
            break;
        case 's':
            if (number_option("--size", optarg, 1, 8192, &v)) /* MiB */
                return 2;
            link_bytes = (size_t)v * MIB;
            size_given = 1;
            break;
        case 'o':
            if (nonly == MAX_ONLY) {
                fprintf(stderr, "xferbench: --only %s: at most %d patterns\n", optarg, MAX_ONLY);
                return 2;
            }
            only[nonly++] = optarg;
            break;
        case 'l': listing = 1; break;
        case 1001:
            if (number_option("--rois-threads", optarg, 1, CUXFER_ROIS_MAX_THREADS, &v))
                return 2;
            rois_opt.threads = (int)v;
            break;
        case 1002:
            if (number_option("--rois-chunk", optarg, 4, 1048576, &v)) /* KiB */
                return 2;
            rois_opt.chunk_bytes = (size_t)v * 1024;
            break;
        case 1003: {
            static const char *const names[] = {"auto", "direct", "gather", "kernel"};
            int k;
            for (k = 0; k < 4 && strcmp(optarg, names[k]) != 0; ++k)
                ;
            if (k == 4) {
                fprintf(stderr, "xferbench: --rois-strategy %s: expected auto, direct, gather "
                                "or kernel\n", optarg);
                return 2;
            }
            rois_opt.strategy = k; /* CUXFER_ROIS_AUTO .. CUXFER_ROIS_KERNEL */
            break;
        }
        case 1004: rows_dense = 1; break;
        case 1005:
            if (number_option("--rows-threads", optarg, 1, CUXFER_PLAN_MAX_THREADS, &v))
                return 2;
            plan_opt.threads = (int)v;
            break;
        case 'j':
        case 'c':
            if (out != OUT_TABLE && out != (c == 'j' ? OUT_JSON : OUT_CSV)) {
                fputs("xferbench: --json and --csv exclude each other\n", stderr);
                fputs(usage_line, stderr);
                return 2;
            }
            out = c == 'j' ? OUT_JSON : OUT_CSV;
            break;
        case 'd':
            if (number_option("--device", optarg, 0, GEOM_MAX, &v))
                return 2;
            dev = (int)v;
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("xferbench (cuxfer) %s\n", CUXFER_VERSION_STRING); return 0;
        default: return bad_option(c, argv);
        }
    }
    if (optind != argc) {
        fprintf(stderr, "xferbench: unexpected argument %s\n", argv[optind]);
        fputs(usage_line, stderr);
        return 2;
    }
    if (quick) { /* its caps, where --reps and --size did not say */
        reps = reps_given || reps < 7 ? reps : 7;
        link_bytes = size_given || link_bytes < 64 * MIB ? link_bytes : 64 * MIB;
    }
    need_link = needs_link();
    (void)list_cases(NULL);
    for (c = 0; c < nonly; ++c)
        if (!only_hit[c]) { /* a typo would run nothing and say all is well */
            fprintf(stderr, "xferbench: --only %s: no case of this run has it at the start of "
                            "a word (--list names them)\n", only[c]);
            return 2;
        }
    if (listing)
        return list_cases(stdout);
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
    if (plan_opt.threads)
        snprintf(team, sizeof team, ", %d planner threads", plan_opt.threads);
    if (out == OUT_TABLE)
        printf("xferbench %s: device %d %s, driver %d, runtime %d, %d reps, link buffers "
               "%zu MiB%s%s\n",
               CUXFER_VERSION_STRING, dev, name, drv, rt, reps, link_bytes / MIB,
               rows_dense ? ", 2d device rows dense" : "", team);
    BENCH_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    BENCH_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    BENCH_CHECK(cuxfer_timer_create(&t));
    BENCH_CHECK(cuxfer_timer_create(&t1));

    BENCH_CHECK(cuxfer_plan2d_create(&planner, &plan_opt));
    if (calibrate) {
        cuxfer_plan2d_tuning tu = cuxfer_plan2d_default_tuning();
        BENCH_CHECK(cuxfer_plan2d_calibrate(&planner, s1, &tu, out == OUT_TABLE ? calib_row : NULL,
                                            NULL));
        if (out == OUT_TABLE)
            printf("calibrated: SPAN up to %zu-byte rows, PACK up to %zu-byte rows "
                   "(built-in: %zu, %zu)\n", tu.span_max_row, tu.pack_max_row,
                   cuxfer_plan2d_default_tuning().span_max_row,
                   cuxfer_plan2d_default_tuning().pack_max_row);
    }

    bench_link(s1, s2, &t);
    bench_enqueue(s1);
    bench_enqueue_mt();
    bench_2d(s1, &t, &t1);
    bench_image(s1, &t);
    bench_rois(s1);
    bench_pool();
    bench_pageable(s1);
    bench_ring(s1, &t);
    bench_roundtrip(s1, &t);
    bench_banded(s1, &t);
    cuxfer_plan2d_destroy(&planner);
    if (n > 1)
        bench_multi(n);

    if (out == OUT_JSON)
        printf("%s]\n", rows_printed ? "\n" : "[");
    else if (out == OUT_TABLE)
        printf("%d target(s) missed\n", misses);
    cuxfer_timer_destroy(&t);
    cuxfer_timer_destroy(&t1);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    return misses ? 1 : 0;
}

int main(int argc, char **argv)
{
    return close_stdout(run(argc, argv));
}
