/* SPDX-License-Identifier: MIT */
/* The one test of the header's private state and helpers (cuxfer_impl_*):
 * every other test uses public names only (tests/public-names-only.sh).
 * What needs the internals is what no public call can reach in one
 * process: forgetting the parsed CUXFER_PAGEABLE and the warned-once
 * flags, asking the guard about each pair of memory kinds directly, the
 * pinned pool's class indexes, and forcing the managed-capability cache.
 *
 * CPU part (always): CUXFER_PAGEABLE parsing from the environment, the
 * guard's decision for every pair of kinds under each policy (moved from
 * pageable-policy.c), the pool's class indexes (from pool-classes.c),
 * the planner's PACK scatter on the thread team.
 * GPU part (skipped without a device, required with CUXFER_REQUIRE_GPU):
 * the three policies on real copies (from pageable-guard-gpu.c) and
 * prefetch and advice on a device whose capability query says
 * concurrentManagedAccess = 0 (from fault-injection.c). */
#include <stdio.h>
#include <string.h>

static char logbuf[4096];
static int log_lines;
#define CUXFER_LOG(...)                                                        \
    (++log_lines, (void)snprintf(logbuf + strlen(logbuf),                      \
                                 sizeof logbuf - strlen(logbuf), __VA_ARGS__))
#include "gpu.h"

extern int setenv(const char *, const char *, int);
extern int unsetenv(const char *);

/* Set CUXFER_PAGEABLE and make the header read it again. */
static int env_policy(const char *value)
{
    if (value)
        setenv("CUXFER_PAGEABLE", value, 1);
    else
        unsetenv("CUXFER_PAGEABLE");
    cuxfer_impl_env_policy = 0; /* forget the parsed value */
    return cuxfer_pageable_policy();
}

/* A fresh policy for the GPU part: parsed again, nothing warned yet. */
static void policy(const char *v)
{
    setenv("CUXFER_PAGEABLE", v, 1);
    cuxfer_impl_env_policy = 0;
    cuxfer_impl_warned[0] = cuxfer_impl_warned[1] = 0;
    logbuf[0] = '\0';
}

static void guard_env(void)
{
    is_int(CUXFER_PAGEABLE_WARN, env_policy(NULL), "default policy is WARN");
    is_int(CUXFER_PAGEABLE_ERROR, env_policy("error"), "CUXFER_PAGEABLE=error");
    is_int(CUXFER_PAGEABLE_ALLOW, env_policy("allow"), "CUXFER_PAGEABLE=allow");
    logbuf[0] = '\0';
    log_lines = 0;
    is_int(CUXFER_PAGEABLE_WARN, env_policy("loud"), "a bad value falls back to the default");
    contains(logbuf, "CUXFER_PAGEABLE=loud is not one of allow, warn, error",
             "and says so, naming the value");
    (void)cuxfer_pageable_policy();
    (void)cuxfer_pageable_policy();
    is_int(1, log_lines, "the bad value is reported once");
}

static void guard_pairs(void)
{
    const cuxfer_memkind P = CUXFER_MEMORY_PAGEABLE, H = CUXFER_MEMORY_PINNED,
                         D = CUXFER_MEMORY_DEVICE, M = CUXFER_MEMORY_MANAGED,
                         U = CUXFER_MEMORY_UNKNOWN;
    /* Pairs the guard ignores. */
    is_int(cudaSuccess, cuxfer_impl_guard("c", D, H, CUXFER_PAGEABLE_ERROR), "pinned -> device passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", H, D, CUXFER_PAGEABLE_ERROR), "device -> pinned passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", D, D, CUXFER_PAGEABLE_ERROR), "device -> device passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", P, P, CUXFER_PAGEABLE_ERROR),
           "pageable -> pageable (no device side) passes");
    is_int(cudaSuccess, cuxfer_impl_guard("c", D, U, CUXFER_PAGEABLE_ERROR),
           "unknown memory is left to CUDA");

    /* ALLOW */
    logbuf[0] = '\0';
    is_int(cudaSuccess, cuxfer_impl_guard("cuxfer_copy_async", D, P, CUXFER_PAGEABLE_ALLOW),
           "ALLOW: pageable source passes");
    is_string("", logbuf, "ALLOW: silently");

    /* ERROR */
    is_int(cudaErrorInvalidValue, cuxfer_impl_guard("cuxfer_copy_async", D, P, CUXFER_PAGEABLE_ERROR),
           "ERROR: pageable source refused");
    contains(cuxfer_last_reason(), "cuxfer_copy_async: the source is pageable host memory",
             "reason names the call and the side");
    is_int(cudaErrorInvalidValue, cuxfer_impl_guard("cuxfer_copy2d_async", P, M, CUXFER_PAGEABLE_ERROR),
           "ERROR: pageable destination of a managed source refused");
    contains(cuxfer_last_reason(), "cuxfer_copy2d_async: the destination is pageable",
             "reason names the destination");
    is_string("", logbuf, "ERROR prints nothing (the caller gets the reason)");

    /* WARN: once per kind of misuse */
    log_lines = 0;
    is_int(cudaSuccess, cuxfer_impl_guard("cuxfer_copy2d_async", D, P, CUXFER_PAGEABLE_WARN),
           "WARN: pageable source passes");
    contains(logbuf, "cuxfer: warning: cuxfer_copy2d_async: the source is pageable host memory",
             "WARN: one line naming the call");
    ok(strchr(logbuf, '\n') == logbuf + strlen(logbuf) - 1, "the warning is one line");
    (void)cuxfer_impl_guard("cuxfer_copy_async", D, P, CUXFER_PAGEABLE_WARN);
    (void)cuxfer_impl_guard("cuxfer_copy2d_async", M, P, CUXFER_PAGEABLE_WARN);
    is_int(1, log_lines, "the same misuse is not reported again");
    is_int(cudaSuccess, cuxfer_impl_guard("cuxfer_copy_async", P, D, CUXFER_PAGEABLE_WARN),
           "WARN: pageable destination passes");
    is_int(2, log_lines, "a new kind of misuse gets its own line");
    contains(logbuf, "cuxfer_copy_async: the destination is pageable", "naming the destination");
    (void)cuxfer_impl_guard("cuxfer_copy_async", P, D, CUXFER_PAGEABLE_WARN);
    is_int(2, log_lines, "and only once");
}

/* The pinned pool's class of a size is an index into its table, and the
 * class size it reports is the public cuxfer_pinned_pool_class_size. */
static void pool_class_indexes(void)
{
    size_t n, c;
    int idx_ok = 1, last_idx = -1;
    unsigned x = 12345;
    for (n = 0; n < 100000; ++n) {
        size_t r, cs;
        int i;
        x = x * 1103515245u + 12345u;
        r = ((size_t)x << 20 | (x >> 7)) % ((size_t)1 << 40) + 1;
        c = cuxfer_pinned_pool_class_size(r);
        i = cuxfer_impl_pool_class(r, &cs);
        if (i < 0 || i >= CUXFER_IMPL_POOL_CLASSES || cs != c)
            idx_ok = 0;
    }
    ok(idx_ok, "class indexes stay within the table");
    for (n = 1; n < 5000; ++n) {
        size_t cs;
        int i = cuxfer_impl_pool_class(n, &cs);
        if (i < last_idx)
            idx_ok = 0;
        last_idx = i;
        if (cuxfer_impl_pool_class(cs, &c) != i || c != cs)
            idx_ok = 0;
    }
    ok(idx_ok, "a class size maps to its own class");
}

/* The three policies on real copies (pageable-guard-gpu.c checks the
 * classification and the default policy without internals). */
static void guard_on_gpu(cudaStream_t s)
{
    enum { N = 1 << 16 };
    unsigned char *pageable, *back, *dev;
    cudaError_t err;
    pageable = (unsigned char *)malloc(N);
    if (!pageable)
        bail("malloc");
    GPU_MUST(cuxfer_host_alloc((void **)&back, N, 1, 0));
    GPU_MUST(cudaMalloc((void **)&dev, N));

    /* ALLOW */
    policy("allow");
    fill_pattern(pageable, N, 4);
    GPU_OK(cuxfer_copy_async(dev, pageable, N, s), "ALLOW: pageable H2D runs");
    memset(back, 0, N);
    GPU_OK(cuxfer_copy_async(back, dev, N, s), "D2H");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(back, pageable, N) == 0, "ALLOW: data arrives");
    is_string("", logbuf, "ALLOW: nothing printed");

    /* WARN */
    policy("warn");
    fill_pattern(pageable, N, 5);
    GPU_OK(cuxfer_copy_async(dev, pageable, N, s), "WARN: pageable H2D runs");
    GPU_OK(cuxfer_copy_async(dev, pageable, N, s), "WARN: again");
    memset(back, 0, N);
    GPU_OK(cuxfer_copy_async(back, dev, N, s), "D2H");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    ok(memcmp(back, pageable, N) == 0, "WARN: data arrives");
    contains(logbuf, "cuxfer: warning: cuxfer_copy_async: the source is pageable host memory",
             "WARN: the warning names the call and the side");
    ok(strchr(logbuf, '\n') == logbuf + strlen(logbuf) - 1, "WARN: exactly one line for two copies");
    {
        cuxfer_view pv, dv;
        logbuf[0] = '\0';
        GPU_MUST(cuxfer_view_wrap(&pv, pageable, 256, 200, N / 256, 1));
        GPU_MUST(cuxfer_view_wrap(&dv, dev, 256, 200, N / 256, 1));
        is_int(CUXFER_MEMORY_PAGEABLE, pv.kind, "wrap classifies pageable memory");
        GPU_OK(cuxfer_copy2d_async(&pv, &dv, s), "WARN: 2D D2H into pageable runs");
        GPU_OK(cudaStreamSynchronize(s), "sync");
        contains(logbuf, "cuxfer_copy2d_async: the destination is pageable",
                 "WARN: the destination misuse is its own warning");
    }

    /* ERROR */
    policy("error");
    memset(back, 0x77, N);
    err = cuxfer_copy_async(back, pageable, N, s); /* H2H: no device side */
    is_int(cudaSuccess, err, "ERROR: pageable -> pinned host copy is not a misuse");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    GPU_MUST(cudaMemsetAsync(dev, 0x33, N, s));
    GPU_MUST(cudaStreamSynchronize(s));
    is_int(cudaErrorInvalidValue, cuxfer_copy_async(dev, pageable, N, s),
           "ERROR: pageable H2D refused");
    contains(cuxfer_last_reason(), "cuxfer_copy_async: the source is pageable host memory",
             "ERROR: with a reason");
    memset(pageable, 0x44, N);
    is_int(cudaErrorInvalidValue, cuxfer_copy_async(pageable, dev, N, s),
           "ERROR: pageable D2H refused");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    {
        size_t i, bad = 0;
        for (i = 0; i < N; ++i)
            bad += pageable[i] != 0x44;
        is_int(0, (long long)bad, "ERROR: the refused destination is untouched");
    }
    is_string("", logbuf, "ERROR: nothing printed");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error after refusals");

    /* The classification cache never outlives what cuxfer frees, and only
     * briefly what is freed behind its back. */
    {
        unsigned char *buf = (unsigned char *)malloc(N);
        int i, allowed = 0;
        if (!buf)
            bail("malloc");
        fill_pattern(buf, N, 6);
        GPU_MUST(cuxfer_host_register(buf, N, 0));
        GPU_OK(cuxfer_copy_async(dev, buf, N, s), "ERROR: registered memory copies");
        GPU_MUST(cudaStreamSynchronize(s));
        GPU_OK(cuxfer_host_unregister(buf), "unregister through cuxfer");
        is_int(cudaErrorInvalidValue, cuxfer_copy_async(dev, buf, N, s),
               "ERROR: after cuxfer_host_unregister the same pointer is pageable again");
        GPU_MUST(cudaHostRegister(buf, N, 0));
        GPU_OK(cuxfer_copy_async(dev, buf, N, s), "registered behind cuxfer's back copies");
        GPU_MUST(cudaStreamSynchronize(s));
        GPU_MUST(cudaHostUnregister(buf));
        for (i = 0; i < 300; ++i) {
            if (cuxfer_copy_async(dev, buf, 64, s) != cudaSuccess)
                break;
            ++allowed;
        }
        GPU_MUST(cudaStreamSynchronize(s));
        ok(allowed <= 256, "unregistered behind cuxfer's back: caught within 256 copies (%d)",
           allowed);
        (void)cudaGetLastError();
        free(buf);
    }
    policy("warn");
    free(pageable);
    cuxfer_host_free(back);
    cudaFree(dev);
}

/* concurrentManagedAccess = 0, through the capability query's cache. */
static void managed_without_capability(cudaStream_t s)
{
    void *m = NULL;
    int dev = 0, saved;
    GPU_MUST(cudaGetDevice(&dev));
    GPU_MUST(cuxfer_managed_alloc(&m, 1 << 20, 1, 0));
    memset(m, 0x42, 1 << 20);
    saved = cuxfer_impl_managed_cap[dev];
    cuxfer_impl_managed_cap[dev] = 2; /* as a device without the capability answers */
    ok(!cuxfer_managed_concurrent(dev), "the capability now reads 0");
    is_int(cudaErrorNotSupported, cuxfer_prefetch(m, 1 << 20, dev, s), "prefetch does nothing");
    contains(cuxfer_last_reason(), "concurrentManagedAccess 0", "and says why");
    is_int(cudaErrorNotSupported, cuxfer_advise(m, 1 << 20, cudaMemAdviseSetReadMostly, dev),
           "advise does nothing");
    GPU_OK(cudaStreamSynchronize(s), "no failed work on the stream");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error");
    ok(((unsigned char *)m)[12345] == 0x42, "the data is untouched");
    cuxfer_impl_managed_cap[dev] = saved;
    GPU_OK(cuxfer_managed_free(m), "managed free");
}

enum { SC_MAXROW = 100, SC_MAXROWS = 40009, SC_GAP = 7 };

/* The host half of the planner's D2H PACK (moved here: it needs the
 * private scatter record and team): its host function scatters a staged
 * chunk of dense rows into a strided, poisoned destination with the thread
 * team (teams of 1, 2, 3 and 16, rows of every width the scatter
 * special-cases and odd ones, row counts that do not divide among the
 * threads, and chunks below the team's threshold).  Every row must match
 * byte for byte, no gap byte may be written, and each record must come
 * back free (its busy flag cleared by the host function itself). */
static void pack_scatter_on_team(void)
{
    static const size_t widths[] = {1, 2, 3, 4, 8, 12, 16, 24, 32, 64, 100};
    static const size_t heights[] = {1, 63, 64, 65, 1000, 5003, SC_MAXROWS};
    static const int teams[] = {1, 2, 3, 16};
    static unsigned char stage[SC_MAXROW * SC_MAXROWS], dst[(SC_MAXROW + SC_GAP) * SC_MAXROWS];
    static cuxfer_plan2d pl; /* only its team is used: no CUDA call */
    size_t wi, hi, i, y, x;
    int ti, bad_rows = 0, bad_gaps = 0, busy_left = 0, runs = 0;
    for (ti = 0; ti < (int)(sizeof teams / sizeof teams[0]); ++ti) {
        memset(&pl, 0, sizeof pl);
        cuxfer_impl_team_start(&pl.team, teams[ti] - 1);
        for (wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi)
            for (hi = 0; hi < sizeof heights / sizeof heights[0]; ++hi) {
                size_t w = widths[wi], h = heights[hi], pitch = w + SC_GAP;
                struct cuxfer_impl_scatter_rec *rec = &pl.recs[runs % CUXFER_IMPL_PLAN_RECS];
                for (i = 0; i < w * h; ++i)
                    stage[i] = (unsigned char)(i * 37u + w + (size_t)ti);
                memset(dst, 0x5a, pitch * h);
                rec->plan = &pl;
                rec->job.dst = dst;
                rec->job.src = stage;
                rec->job.dpitch = pitch;
                rec->job.row = w;
                rec->job.rows = h;
                __atomic_store_n(&rec->busy, 1, __ATOMIC_RELAXED);
                cuxfer_impl_plan_scatter(rec);
                busy_left += __atomic_load_n(&rec->busy, __ATOMIC_ACQUIRE) != 0;
                for (y = 0; y < h; ++y) {
                    if (memcmp(dst + y * pitch, stage + y * w, w) != 0) {
                        if (!bad_rows++)
                            diag("team %d, %zu-byte rows x %zu: row %zu differs", teams[ti], w,
                                 h, y);
                    }
                    for (x = w; x < pitch; ++x)
                        if (dst[y * pitch + x] != 0x5a && !bad_gaps++)
                            diag("team %d, %zu-byte rows x %zu: gap byte %zu of row %zu written",
                                 teams[ti], w, h, x, y);
                }
                ++runs;
            }
        cuxfer_impl_team_stop(&pl.team);
    }
    is_int(0, bad_rows, "%d scatters on the team: every row byte-exact", runs);
    is_int(0, bad_gaps, "%d scatters: no gap byte written", runs);
    is_int(0, busy_left, "%d records released by the host function", runs);
}

int main(void)
{
    int n = 0;
    const char *req = getenv("CUXFER_REQUIRE_GPU");
    cudaStream_t s;
    plan(0);
    guard_env();
    guard_pairs();
    pool_class_indexes();
    pack_scatter_on_team();

    if (cuxfer_device_count(&n) != cudaSuccess || n < 1) {
        if (req && atoi(req) > 0)
            bail("CUXFER_REQUIRE_GPU=%s but no CUDA device: %s", req, cuxfer_last_reason());
        skip(1, "the GPU part: no CUDA device: %s", cuxfer_last_reason());
        done_testing();
    }
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    guard_on_gpu(s);
    managed_without_capability(s);
    GPU_MUST(cudaStreamDestroy(s));
    done_testing();
}
