/* SPDX-License-Identifier: MIT */
/* The one test of the header's private state and helpers (cuxfer_impl_*):
 * every other test uses public names only (tests/header/public-names-only.sh).
 * What needs the internals is what no public call can reach in one
 * process: forgetting the parsed CUXFER_PAGEABLE and the warned-once
 * flags, asking the guard about each pair of memory kinds directly, the
 * pinned pool's class indexes, and forcing the managed-capability cache.
 *
 * CPU part (always): CUXFER_PAGEABLE parsing from the environment, the
 * guard's decision for every pair of kinds under each policy (moved from
 * pageable-policy.c), the pool's class indexes (from pool-classes.c),
 * CUXFER_DEFAULT_STREAM parsing and the legacy-stream test (from
 * default-stream-guard.c), the lock-free registry readers (from
 * registry-lockfree.c), fork while threads write the registry (from
 * fork-safety.c), one state across two units built with different
 * configuration values (tests/state/internals-b.c: one size of the
 * structs, one reason text, one registry, each unit's own policy),
 * the rois host gather and scatter (from rois-host-gather.c), the
 * thread team's door (late and sleeping workers), the planner's PACK
 * scatter on the thread team.
 * GPU part (skipped without a device, required with CUXFER_REQUIRE_GPU):
 * the three policies on real copies (from pageable-guard-gpu.c),
 * prefetch and advice on a device whose capability query says
 * concurrentManagedAccess = 0 (from fault-injection.c), and the exact
 * registry range of cuxfer_device_alloc (from typed-alloc.c). */
/* The second unit's functions: unit b defines them, the main unit calls
 * them. */
#include <pthread.h> /* struct timespec, in the strict C99 unit too */
#include <stddef.h>
void *unit_b_state(void);
void unit_b_fail(const char *s);
int unit_b_lookup(const void *p);
size_t unit_b_stager_size(void);
size_t unit_b_options_size(void);
const char *unit_b_reason(void);
int unit_b_policy(void);
void unit_b_deadline(struct timespec *t, long ms);
int unit_b_timedwait_ms(long ms, double *took_ms);

#ifdef INTERNALS_UNIT_B
/* Unit b (tests/state/internals-b.c includes this file): every configuration
 * value set otherwise than in the main unit, to check that units built
 * with different values share one state. */
#include <stdio.h>
static int unit_b_logged;
#define CUXFER_API static __attribute__((unused))
#define CUXFER_LOG(...) ((void)++unit_b_logged, (void)snprintf(NULL, 0, __VA_ARGS__))
#define CUXFER_ASSERT(c) ((void)0)
#define CUXFER_ON_ERROR(err) ((void)(err))
#define CUXFER_DEBUG_SYNC 1
#define CUXFER_PAGEABLE_POLICY CUXFER_PAGEABLE_ERROR
#define CUXFER_DEFAULT_STREAM_POLICY CUXFER_PAGEABLE_ALLOW
#define CUXFER_REASON_MAX 512
#include <cuxfer.h>

void unit_b_deadline(struct timespec *t, long ms) { cuxfer_impl_deadline(t, ms); }
/* A timed wait of ms on a condition variable nobody signals, as the
 * latch and the stager wait; *took_ms on the unit's clock. */
int unit_b_timedwait_ms(long ms, double *took_ms)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    struct timespec until;
    double t0 = cuxfer_impl_now_ms();
    int rc;
    cuxfer_impl_cond_init(&cv);
    pthread_mutex_lock(&mu);
    cuxfer_impl_deadline(&until, ms);
    do
        rc = pthread_cond_timedwait(&cv, &mu, &until);
    while (rc == 0);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
    *took_ms = cuxfer_impl_now_ms() - t0;
    return rc;
}
void *unit_b_state(void) { return cuxfer_impl_state_get(); }
void unit_b_fail(const char *s) { (void)cuxfer_impl_fail(cudaErrorInvalidValue, "%s", s); }
int unit_b_lookup(const void *p) { return (int)cuxfer_impl_lookup(p, NULL); }
size_t unit_b_stager_size(void) { return sizeof(cuxfer_stager); }
size_t unit_b_options_size(void) { return sizeof(cuxfer_stager_options); }
const char *unit_b_reason(void) { return cuxfer_last_reason(); }
int unit_b_policy(void) { return cuxfer_pageable_policy(); }

#else /* the main unit */
#include <stdio.h>
#include <string.h>

#include "log-capture.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "fork-children.h"

extern int setenv(const char *, const char *, int);
extern int unsetenv(const char *);

/* Set the variable `name` (unset it for NULL), make the header forget the
 * value it parsed (*parsed) and ask for the policy again (policy()). */
static int env_reparse(const char *name, const char *value, int *parsed, int (*policy)(void))
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    *parsed = 0;
    return policy();
}

/* Set CUXFER_PAGEABLE and make the header read it again. */
static int env_policy(const char *value)
{
    return env_reparse("CUXFER_PAGEABLE", value, &cuxfer_impl_state_get()->env_policy,
                       cuxfer_pageable_policy);
}

/* A fresh policy for the GPU part: parsed again, nothing warned yet. */
static void policy(const char *v)
{
    struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    setenv("CUXFER_PAGEABLE", v, 1);
    st->env_policy = 0;
    st->warned[0] = st->warned[1] = 0;
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
    struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    void *m = NULL;
    int dev = 0, saved;
    GPU_MUST(cudaGetDevice(&dev));
    GPU_MUST(cuxfer_managed_alloc(&m, 1 << 20, 1, 0));
    memset(m, 0x42, 1 << 20);
    saved = st->managed_cap[dev];
    st->managed_cap[dev] = 2; /* as a device without the capability answers */
    ok(!cuxfer_managed_concurrent(dev), "the capability now reads 0");
    is_int(cudaErrorNotSupported, cuxfer_prefetch(m, 1 << 20, dev, s), "prefetch does nothing");
    contains(cuxfer_last_reason(), "concurrentManagedAccess 0", "and says why");
    is_int(cudaErrorNotSupported, cuxfer_advise(m, 1 << 20, cudaMemAdviseSetReadMostly, dev),
           "advise does nothing");
    GPU_OK(cudaStreamSynchronize(s), "no failed work on the stream");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error");
    ok(((unsigned char *)m)[12345] == 0x42, "the data is untouched");
    st->managed_cap[dev] = saved;
    GPU_OK(cuxfer_managed_free(m), "managed free");
}

/* CUXFER_DEFAULT_STREAM parsed again for each value (moved from
 * default-stream-guard.c, which now runs each policy in its own process),
 * and which streams the guard takes for the legacy one in this unit. */
static int env_stream_policy(const char *value)
{
    return env_reparse("CUXFER_DEFAULT_STREAM", value,
                       &cuxfer_impl_state_get()->env_stream_policy, cuxfer_default_stream_policy);
}

static void stream_guard_env(void)
{
    is_int(CUXFER_PAGEABLE_WARN, env_stream_policy(NULL), "default-stream policy: WARN by default");
    is_int(CUXFER_PAGEABLE_ERROR, env_stream_policy("error"), "CUXFER_DEFAULT_STREAM=error");
    is_int(CUXFER_PAGEABLE_ALLOW, env_stream_policy("ALLOW"), "CUXFER_DEFAULT_STREAM=ALLOW");
    logbuf[0] = '\0';
    is_int(CUXFER_PAGEABLE_WARN, env_stream_policy("sometimes"),
           "CUXFER_DEFAULT_STREAM: a bad value falls back to the default");
    contains(logbuf, "CUXFER_DEFAULT_STREAM=sometimes is not one of", "the bad value is named");
    (void)env_stream_policy(NULL);
    ok(cuxfer_impl_is_legacy_stream((cudaStream_t)0), "0 is the legacy stream in this unit");
    ok(cuxfer_impl_is_legacy_stream(cudaStreamLegacy), "cudaStreamLegacy is the legacy stream");
    ok(!cuxfer_impl_is_legacy_stream(cudaStreamPerThread), "cudaStreamPerThread is not");
}

/* The classification registry's readers take no lock (moved from
 * registry-lockfree.c): a lookup completes while the writers' mutex is
 * held, and 4 readers racing a writer that adds and removes other ranges
 * never get a wrong answer for the ranges that stay.  Fake ranges of a
 * static arena are registered directly, no CUDA call is made. */
static char rl_arena[64][4096];
static int rl_stop, rl_done;
static long rl_wrong, rl_lookups;

static void *rl_one_lookup(void *p)
{
    (void)p;
    if (cuxfer_impl_lookup(rl_arena[3] + 100, NULL) == CUXFER_MEMORY_PINNED)
        __atomic_store_n(&rl_done, 1, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&rl_done, 2, __ATOMIC_RELEASE);
    return NULL;
}

static void *rl_reader(void *p)
{
    long n = 0;
    (void)p;
    while (!__atomic_load_n(&rl_stop, __ATOMIC_ACQUIRE)) {
        int i = (int)(n++ % 32);
        int dev = -2;
        if (cuxfer_impl_lookup(rl_arena[i] + 10, &dev) != CUXFER_MEMORY_PINNED || dev != -1)
            __atomic_add_fetch(&rl_wrong, 1, __ATOMIC_RELAXED);
        if ((n & 255) == 0)
            __atomic_add_fetch(&rl_lookups, 256, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void registry_lockfree(void)
{
    pthread_t th[4], t1;
    struct timespec ms = {0, 1000000};
    int i, r, waited;
    int n0 = cuxfer_impl_state_get()->reg_n;
    for (i = 0; i < 32; ++i)
        cuxfer_impl_reg_add(rl_arena[i], 4096, CUXFER_MEMORY_PINNED, -1);
    is_int(n0 + 32, cuxfer_impl_state_get()->reg_n, "32 ranges registered");

    /* A reader finishes while a writer holds the mutex. */
    pthread_mutex_lock(&cuxfer_impl_state_get()->reg_mu);
    if (pthread_create(&t1, NULL, rl_one_lookup, NULL) != 0)
        bail("pthread_create");
    for (waited = 0; waited < 5000 && !__atomic_load_n(&rl_done, __ATOMIC_ACQUIRE); ++waited)
        nanosleep(&ms, NULL);
    is_int(1, __atomic_load_n(&rl_done, __ATOMIC_ACQUIRE),
           "a lookup completes, right, while the registry's mutex is held");
    pthread_mutex_unlock(&cuxfer_impl_state_get()->reg_mu);
    pthread_join(t1, NULL);

    /* Readers racing a writer. */
    for (i = 0; i < 4; ++i)
        if (pthread_create(&th[i], NULL, rl_reader, NULL) != 0)
            bail("pthread_create");
    /* At least 20000 changes, and until the readers did 200000 lookups. */
    for (r = 0; r < 20000 || __atomic_load_n(&rl_lookups, __ATOMIC_RELAXED) < 200000; ++r) {
        int j = 32 + r % 32;
        cuxfer_impl_reg_add(rl_arena[j], 4096, CUXFER_MEMORY_DEVICE, 0);
        cuxfer_impl_reg_remove(rl_arena[j]);
    }
    __atomic_store_n(&rl_stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < 4; ++i)
        pthread_join(th[i], NULL);
    ok(rl_lookups >= 200000, "the readers did %ld lookups during %d adds and removes",
       rl_lookups, r);
    is_int(0, rl_wrong, "none of them was wrong");
    is_int(n0 + 32, cuxfer_impl_state_get()->reg_n, "the 32 lasting ranges remain");
    is_int(CUXFER_MEMORY_UNKNOWN, cuxfer_impl_lookup(rl_arena[40], NULL),
           "a removed range is forgotten");
    for (i = 0; i < 32; ++i)
        cuxfer_impl_reg_remove(rl_arena[i]);
    is_int(n0, cuxfer_impl_state_get()->reg_n, "and all 32 removed again");
}

/* fork while other threads write the registry (the registry half of
 * fork-safety.c, whose public half cannot hold the writers' lock without
 * a GPU): the child gets a fresh lock and an empty registry, so its own
 * registry calls complete.  Without the pthread_atfork handlers a child
 * forked while a writer held the lock (or left the sequence count odd)
 * waited forever: about 9 forks in 200. */
enum { FK_FORKS = 200, FK_THREADS = 4 };
static int fk_stop;
static char fk_ranges[FK_THREADS][4096];

static void *fk_hammer(void *arg)
{
    char *mine = (char *)arg;
    unsigned i = 0;
    while (!__atomic_load_n(&fk_stop, __ATOMIC_ACQUIRE)) {
        cuxfer_impl_reg_add(mine, 4096, CUXFER_MEMORY_PINNED, -1);
        (void)cuxfer_impl_lookup(mine + (i++ % 4096), NULL);
        (void)cuxfer_impl_lookup(fk_ranges, NULL);
        cuxfer_impl_reg_remove(mine);
    }
    return NULL;
}

static int fk_child(void)
{
    static char local[256];
    alarm(3); /* a deadlock ends as SIGALRM */
    if (cuxfer_impl_lookup(fk_ranges[0] + 1, NULL) != CUXFER_MEMORY_UNKNOWN)
        return 2;
    cuxfer_impl_reg_add(local, sizeof local, CUXFER_MEMORY_PINNED, -1);
    if (cuxfer_impl_lookup(local + 5, NULL) != CUXFER_MEMORY_PINNED)
        return 3;
    cuxfer_impl_reg_remove(local);
    (void)cuxfer_impl_fail(cudaErrorInvalidValue, "child");
    return strcmp(cuxfer_last_reason(), "child") == 0 ? 0 : 4;
}

static void fork_registry(void)
{
    fork_tally tally = fork_children(FK_FORKS, fk_child, FK_THREADS, fk_hammer, fk_ranges[0],
                                     sizeof fk_ranges[0], &fk_stop);
    is_int(0, tally.hung, "fork: no child hung in the registry (of %d forks)", FK_FORKS);
    is_int(0, tally.wrong, "fork: every child found an empty, working registry");
    is_int(FK_FORKS, tally.clean, "fork: every child exited 0");
}

/* Two units built with different configuration values share one state
 * of one layout (unit b is tests/state/internals-b.c): the structs have
 * one size; this unit caches a classification, then unit b writes a
 * reason longer than the buffer: the cache must survive; the pageable
 * policy's default is per unit by design. */

/* Unit b is strict ISO C99 (no _POSIX_C_SOURCE): its timed waits still
 * run on CLOCK_MONOTONIC to the millisecond, as this POSIX unit's do (they
 * fell back to whole seconds of time() there, a 20 ms wait taking up to a
 * second on the wall clock). */
static void strict_c99_clock(void)
{
    struct timespec now, d;
    double ahead, took = 0;
    int rc;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unit_b_deadline(&d, 20);
    ahead = (double)(d.tv_sec - now.tv_sec) * 1e3 + (double)(d.tv_nsec - now.tv_nsec) / 1e6;
    ok(ahead >= 19.0 && ahead < 1000.0,
       "strict C99 unit: a 20 ms deadline is 20 ms ahead on CLOCK_MONOTONIC (%.3f ms)", ahead);
    rc = unit_b_timedwait_ms(20, &took);
    is_int(ETIMEDOUT, rc, "strict C99 unit: the timed wait times out");
    ok(took >= 19.0 && took < 900.0, "after 20 ms, not whole seconds (%.3f ms)", took);
}

static void units_share_state(void)
{
    static char pinned_here[8192];
    char longer[700];
    size_t len;
    ok(unit_b_state() == (void *)cuxfer_impl_state_get(), "units: one process-wide state");
    is_int((long long)sizeof(cuxfer_stager), (long long)unit_b_stager_size(),
           "units: cuxfer_stager has one size in both");
    is_int((long long)sizeof(cuxfer_stager_options), (long long)unit_b_options_size(),
           "units: cuxfer_stager_options has one size in both");
    cuxfer_impl_reg_add(pinned_here, sizeof pinned_here, CUXFER_MEMORY_PINNED, -1);
    is_int(CUXFER_MEMORY_PINNED, cuxfer_impl_lookup(pinned_here + 10, NULL),
           "units: a registered range is pinned here");
    memset(longer, 'y', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    unit_b_fail(longer);
    len = strlen(cuxfer_last_reason());
    is_int(CUXFER_REASON_MAX - 1, (long long)len, "units: unit b's long reason is cut to %d bytes",
           CUXFER_REASON_MAX - 1);
    is_string("...", cuxfer_last_reason() + len - 3, "units: and ends in ...");
    cuxfer_clear_reason();
    is_string("", unit_b_reason(), "units: unit b sees this unit clear it");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_impl_lookup(pinned_here + 20, NULL),
           "units: this unit's cache survives unit b's reason");
    is_int(CUXFER_MEMORY_PINNED, unit_b_lookup(pinned_here + 30),
           "units: unit b finds this unit's range");
    cuxfer_impl_reg_remove(pinned_here);
    is_int(CUXFER_MEMORY_UNKNOWN, unit_b_lookup(pinned_here + 30),
           "units: and forgets it when this unit removes it");
    /* without CUXFER_PAGEABLE, each unit its compiled-in policy (documented) */
    (void)env_policy(NULL);
    is_int(CUXFER_PAGEABLE_ERROR, unit_b_policy(), "units: unit b keeps its own pageable policy");
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_pageable_policy(), "units: and this unit its own");
}

/* The host half of cuxfer_rois's GATHER strategy, without a device (moved
 * from rois-host-gather.c): the thread team runs the gather of random
 * tiles (equal and varying sizes, rows of every width, some longer than a
 * chunk) into staging chunks of awkward sizes, which split rows and tiles
 * between chunks and between threads, and the scatter back into a
 * poisoned image; both must match a one-tile-at-a-time reference byte for
 * byte, and the scatter must not write outside the tiles. */
static unsigned rg_seed = 777u;
static size_t rg_rnd(size_t n)
{
    rg_seed = rg_seed * 1103515245u + 12345u;
    return (size_t)(rg_seed >> 8) % n;
}

enum { RG_W = 300, RG_H = 200, RG_E = 4, RG_PITCH = RG_W * RG_E + 52, RG_MAXN = 400 };

static void rois_host_gather(void)
{
    static unsigned char img[RG_PITCH * RG_H], back[RG_PITCH * RG_H], ref[RG_PITCH * RG_H];
    static unsigned char dense[RG_W * RG_H * RG_E * 2], want[RG_W * RG_H * RG_E * 2];
    static const size_t chunks[] = {71, 1000, 4096, 1 << 20};
    static const int teams[] = {1, 2, 3, 8};
    enum { W = RG_W, H = RG_H, E = RG_E, PITCH = RG_PITCH, MAXN = RG_MAXN };
    static cuxfer_roi rois[RG_MAXN];
    static size_t off[RG_MAXN + 1];
    size_t i, y, ci;
    int ti, set, bad_gather = 0, bad_scatter = 0, runs = 0;
    for (i = 0; i < sizeof img; ++i)
        img[i] = (unsigned char)(i * 131u + 7u);
    for (set = 0; set < 7; ++set) {
        size_t n = set < 3 ? 64 + rg_rnd(MAXN - 64) : 1 + rg_rnd(20);
        size_t cell = 1 + (size_t)set * 3; /* equal tiles: a grid of cell x cell */
        /* disjoint tiles: distinct cells of a grid, equal or varying sizes */
        for (i = 0; i < n; ++i) {
            size_t c = (i * 7919u + (size_t)set) % ((W / 16) * (H / 16));
            rois[i].x = c % (W / 16) * 16;
            rois[i].y = c / (W / 16) * 16;
            rois[i].width = set % 2 ? cell : rg_rnd(17);
            rois[i].height = set % 2 ? cell : rg_rnd(17);
        }
        if (n > (W / 16) * (H / 16))
            n = (W / 16) * (H / 16);
        if (set == 6) /* six wide tiles: rows of ~400 bytes, longer than a chunk */
            for (n = 6, i = 0; i < n; ++i) {
                rois[i].x = i % 3 * 100;
                rois[i].y = i / 3 * 100;
                rois[i].width = 95 + i;
                rois[i].height = 31 + i;
            }
        if (cuxfer_rois_offsets(rois, n, E, off) != cudaSuccess)
            bail("offsets: %s", cuxfer_last_reason());
        /* reference: tile by tile, row by row */
        memset(ref, 0xa5, sizeof ref);
        for (i = 0; i < n; ++i)
            for (y = 0; y < rois[i].height; ++y) {
                size_t rb = rois[i].width * E, h = (rois[i].y + y) * PITCH + rois[i].x * E;
                memcpy(want + off[i] + y * rb, img + h, rb);
                memcpy(ref + h, img + h, rb);
            }
        for (ti = 0; ti < (int)(sizeof teams / sizeof teams[0]); ++ti) {
            cuxfer_impl_team team;
            cuxfer_impl_team_start(&team, teams[ti] - 1, NULL, NULL);
            for (ci = 0; ci < sizeof chunks / sizeof chunks[0]; ++ci) {
                struct cuxfer_impl_rois_job j = {.base = img, .pitch = PITCH, .elem = E,
                                                 .rois = rois, .off = off, .n = n};
                size_t a, len, ch = chunks[ci], total = off[n];
                memset(dense, 0x5a, sizeof dense);
                for (a = 0; a < total; a += len) { /* gather, chunk by chunk */
                    len = total - a < ch ? total - a : ch;
                    j.stage = dense + a;
                    j.a = a;
                    j.b = a + len;
                    cuxfer_impl_team_run(&team, cuxfer_impl_rois_part, &j);
                }
                if (memcmp(dense, want, total) != 0 || dense[total] != 0x5a)
                    ++bad_gather;
                memset(back, 0xa5, sizeof back);
                j.base = back;
                j.d2h = 1;
                for (a = 0; a < total; a += len) { /* scatter */
                    len = total - a < ch ? total - a : ch;
                    j.stage = dense + a;
                    j.a = a;
                    j.b = a + len;
                    cuxfer_impl_team_run(&team, cuxfer_impl_rois_part, &j);
                }
                if (memcmp(back, ref, sizeof back) != 0) {
                    ++bad_scatter;
                    diag("set %d team %d chunk %zu: scatter differs", set, teams[ti], ch);
                }
                ++runs;
            }
            cuxfer_impl_team_stop(&team);
        }
    }
    is_int(0, bad_gather, "rois: %d gathers of random tiles match the reference byte for byte",
           runs);
    is_int(0, bad_scatter, "rois: %d scatters match, gap bytes untouched", runs);
    {
        /* team sizes: the rois plan takes every core (its caller is a
         * member), the planner leaves two (the waiting caller, CUDA's
         * threads): at most 16, at least 1 */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int all = cores > 16 ? 16 : (int)cores, two = cores - 2 > 16 ? 16 : (int)(cores - 2);
        if (two < 1)
            two = 1;
        is_int(all, cuxfer_impl_team_default(0), "team default: %ld cores -> %d", cores, all);
        is_int(two, cuxfer_impl_team_default(2), "planner's team default: two cores kept (%d)",
               two);
    }
}

enum { SC_MAXROW = 256, SC_MAXROWS = 40009, SC_GAP = 7, SC_WIDE_GAP = 2041, SC_WIDE_ROWS = 1000 };

/* The thread team's door: a job's blocks are each done exactly once, by
 * whichever members arrive while the job is open, and no member touches a
 * job after cuxfer_impl_team_run returned - the caller waits for members
 * inside, never for workers still asleep, so a worker that wakes late
 * must find the door closed.  Teams of 1 to 9 members run thousands of
 * jobs of 0 to 40 blocks; every so often the caller pauses long enough
 * for the workers to fall asleep, so jobs start with sleeping, spinning
 * and late workers.  Each job lives on the caller's stack and is marked
 * dead when team_run returns: a member that reads a dead job, or a block
 * done twice or never, is counted. */
struct team_job {
    int live;
    size_t blocks;
    int done[41];
};
static int team_stale;

/* cuxfer_rois_copy_async checks a large call's ROIs on the plan's team
 * (bounds and sizes in parallel parts, the serial loop only to name a bad
 * ROI): the same verdict, reason and total as the check without a team,
 * for valid sets, a ROI out of bounds in one part or two, and (D2H) a
 * shared cell. */
static void rois_check_on_team(void)
{
    enum { CW = 4096, CH = 4096, CN = 20000 };
    static cuxfer_roi r[CN];
    static unsigned char px[16];
    cuxfer_view host, dense;
    cuxfer_impl_team team;
    void *scr[2] = {NULL, NULL};
    size_t bytes[2] = {0, 0}, i, total[2];
    char why[2][CUXFER_REASON_MAX];
    cudaError_t e[2];
    int set, k, mism = 0, refused = 0;
    cuxfer_view_wrap(&host, px, (size_t)CW * 4, CW, CH, 4);
    cuxfer_view_wrap(&dense, px, (size_t)1 << 30, (size_t)1 << 28, 1, 4);
    cuxfer_impl_team_start(&team, 3, NULL, NULL);
    for (set = 0; set < 24; ++set) {
        /* 4096-16383: only device to host has a team */
        size_t n = set % 12 == 11 ? 300 : set % 12 == 5 ? 5000 - rg_rnd(500) : CN - rg_rnd(3000);
        int dir = set % 2 ? CUXFER_ROIS_D2H : CUXFER_ROIS_H2D;
        for (i = 0; i < n; ++i) { /* 8x8 cells in order, or random sizes */
            r[i].x = i % (CW / 8) * 8;
            r[i].y = i / (CW / 8) * 8;
            r[i].width = r[i].height = 8;
            if (set % 8 == 4 || set == 13) { /* 13: D2H, off the lattice, overlapping */
                r[i].width = rg_rnd(40);
                r[i].height = rg_rnd(40);
                r[i].x = rg_rnd(CW - r[i].width + 1);
                r[i].y = rg_rnd(CH - r[i].height + 1);
            }
        }
        if (set % 4 >= 2) /* one ROI past the right edge */
            r[rg_rnd(n)].x = CW - 4;
        if (set % 8 >= 6) /* and one more, in another part */
            r[n / 2 + rg_rnd(n / 2)].y = CH - 1;
        if (set % 8 == 1) /* (D2H) two tiles in one cell */
            r[n - 1 - rg_rnd(n / 2)] = r[rg_rnd(n / 2)];
        for (k = 0; k < 2; ++k) {
            total[k] = 0;
            cuxfer_clear_reason();
            e[k] = cuxfer_impl_rois_check(dir, &host, r, n, &dense, &total[k], &scr[k], &bytes[k],
                                          k ? &team : NULL);
            snprintf(why[k], sizeof why[k], "%s", cuxfer_last_reason());
        }
        refused += e[0] != cudaSuccess;
        if (e[0] != e[1] || total[0] != total[1] || strcmp(why[0], why[1]) != 0) {
            ++mism;
            diag("set %d (n %zu, dir %d): alone %d %zu '%s', team %d %zu '%s'", set, n, dir,
                 (int)e[0], total[0], why[0], (int)e[1], total[1], why[1]);
        }
    }
    cuxfer_impl_team_stop(&team);
    free(scr[0]);
    free(scr[1]);
    is_int(0, mism, "rois check on a team: 24 sets, the same verdict, reason and total as "
           "without one");
    ok(refused == 16, "both outcomes among them (%d refused)", refused);
}

/* A member entering the team's scan once more than there are bitmaps
 * (a worker may enter a job twice) scans without marking: nothing past the
 * bitmaps is written, and the lattice is left to the serial check. */
static void rois_scan_member_past_maps(void)
{
    enum { SN = 64, WORDS = 1 };
    static cuxfer_roi r[SN];
    static unsigned char px[16];
    size_t cells[SN], next = 0, i;
    unsigned long long bits[WORDS + 4];
    struct cuxfer_impl_rois_scan j;
    struct cuxfer_impl_grid g;
    cuxfer_view host;
    cuxfer_view_wrap(&host, px, 64 * 4, 64, 64, 4);
    for (i = 0; i < SN; ++i) { /* the 64 cells of 8x8 tiles in 64x64 */
        r[i].x = i % 8 * 8;
        r[i].y = i / 8 * 8;
        r[i].width = r[i].height = 8;
    }
    cuxfer_impl_grid_init(&g, &host, r, SN);
    memset(bits, 0x77, sizeof bits);
    memset(&j, 0, sizeof j);
    j.v = &host;
    j.rois = r;
    j.n = SN;
    j.block = 16;
    j.cells = cells;
    j.g = &g;
    j.bits = bits;
    j.maps = 1;
    cuxfer_impl_rois_scan_part(&j, &next); /* member 0: every block */
    cuxfer_impl_rois_scan_part(&j, &next); /* member 1: no bitmap of its own */
    is_int(WORDS, (int)g.words, "the lattice of 64 cells has one bitmap word");
    ok(bits[0] == ~0ull && !j.shared, "member 0 marked all 64 cells once");
    for (i = WORDS; i < WORDS + 4 && bits[i] == 0x7777777777777777ull; ++i)
        ;
    ok(i == WORDS + 4, "the member past the bitmaps wrote nothing past them");
    ok(j.unmarked == 1 && j.members == 2, "and left the lattice unmarked (members %d)", j.members);
}

/* The lattice's bitmap is used up to 64 bytes a ROI plus 128 KiB: 4096
 * 8x8 tiles scattered over 8192x8192 (a lattice of 1M cells, 128 KiB)
 * take it, not the sort; one tile of 1x1 there (64M cells) does not. */
static void rois_lattice_cap(void)
{
    static cuxfer_roi r[4096];
    static unsigned char px[16];
    struct cuxfer_impl_grid g;
    cuxfer_view host;
    size_t i;
    cuxfer_view_wrap(&host, px, 8192 * 4, 8192, 8192, 4);
    for (i = 0; i < 4096; ++i) { /* one cell in 256 */
        r[i].x = i % 64 * 128;
        r[i].y = i / 64 * 128;
        r[i].width = r[i].height = 8;
    }
    cuxfer_impl_grid_init(&g, &host, r, 4096);
    is_int(16384, (int)g.words, "4096 sparse 8x8 tiles: the lattice's 1M cells in 16384 words");
    r[0].width = r[0].height = 1;
    cuxfer_impl_grid_init(&g, &host, r, 1);
    is_int(0, (int)g.words, "one 1x1 tile on 8192x8192: no lattice (64M cells)");
}

static void team_job_fn(void *arg, size_t *next)
{
    struct team_job *j = (struct team_job *)arg;
    size_t b;
    for (;;) {
        if (!__atomic_load_n(&j->live, __ATOMIC_ACQUIRE))
            __atomic_add_fetch(&team_stale, 1, __ATOMIC_RELAXED);
        b = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
        if (b >= j->blocks)
            return;
        __atomic_add_fetch(&j->done[b], 1, __ATOMIC_RELAXED);
    }
}

static void team_door(void)
{
    int workers, k, bad = 0, jobs = 0;
    for (workers = 0; workers <= 8; ++workers) {
        cuxfer_impl_team team;
        cuxfer_impl_team_start(&team, workers, NULL, NULL);
        for (k = 0; k < 3000; ++k) {
            /* two jobs in turn: the last one stays dead while this one runs */
            static struct team_job jj[2];
            struct team_job *j = &jj[k % 2];
            size_t b;
            memset(j->done, 0, sizeof j->done);
            j->blocks = (size_t)(k * 7 % 41);
            __atomic_store_n(&j->live, 1, __ATOMIC_RELEASE);
            if (k % 500 == 499) {
                struct timespec ts = {0, 5000000}; /* the workers fall asleep */
                nanosleep(&ts, NULL);
            }
            cuxfer_impl_team_run(&team, team_job_fn, j);
            __atomic_store_n(&j->live, 0, __ATOMIC_RELEASE);
            /* every block once, and none past the job's (a member still
             * inside would go on counting after the return) */
            for (b = 0; b < 41; ++b)
                if (__atomic_load_n(&j->done[b], __ATOMIC_ACQUIRE) != (b < j->blocks))
                    ++bad;
            ++jobs;
        }
        cuxfer_impl_team_stop(&team);
    }
    is_int(0, bad, "team: %d jobs on teams of 1-9, every block done exactly once", jobs);
    is_int(0, __atomic_load_n(&team_stale, __ATOMIC_ACQUIRE),
           "team: no member entered a job after team_run returned");
}

/* The host half of the planner's D2H PACK (moved here: it needs the
 * private scatter record and team): its host function scatters a staged
 * chunk of dense rows into a strided, poisoned destination with the thread
 * team (teams of 1, 2, 3 and 16, rows of every width the scatter
 * special-cases and odd ones, row counts that do not divide among the
 * threads, and chunks below the team's threshold), with gaps of 7 bytes
 * and of 2041 (a pitch past CUXFER_IMPL_SCATTER_AHEAD: the prefetch hint
 * then runs one row ahead, and the last rows of a block go unhinted); rows
 * of 1-4 bytes also with gaps of 1 and 60 and a destination 37 bytes past
 * a line, for the masked stores (pitches up to 64, the masks cycling over
 * up to 63 lines) where the CPU has them.  Every row must match
 * byte for byte, no gap byte may be written, and each record must come
 * back free (its busy flag cleared by the host function itself). */
/* One run of the planner's host function on pl's team, through record
 * number `run`, as the planner queues it: h rows of w bytes from src
 * (spitch apart; 0: dense, a PACK scatter) to dst (dpitch apart; a gather
 * writes them dense), desc the gather's descriptor (NULL: none).  1 if the
 * host function left the record busy. */
static int run_scatter_rec(cuxfer_plan2d *pl, int run, unsigned char *dst,
                           const unsigned char *src, size_t spitch, size_t dpitch, size_t w,
                           size_t h, cuxfer_impl_tile *desc)
{
    struct cuxfer_impl_scatter_rec *rec = &pl->recs[run % CUXFER_IMPL_PLAN_RECS];
    memset(&rec->job, 0, sizeof rec->job);
    rec->plan = pl;
    rec->job.dst = dst;
    rec->job.src = src;
    rec->job.spitch = spitch;
    rec->job.dpitch = dpitch;
    rec->job.row = w;
    rec->job.rows = h;
    rec->job.desc = desc;
    __atomic_store_n(&rec->busy, 1, __ATOMIC_RELAXED);
    cuxfer_impl_plan_scatter(rec);
    return __atomic_load_n(&rec->busy, __ATOMIC_ACQUIRE) != 0;
}

static void pack_scatter_on_team(void)
{
    static const size_t widths[] = {1, 2, 3, 4, 8, 12, 16, 24, 32, 48, 64, 100, 128, 256};
    static const size_t heights[] = {1, 63, 64, 65, 1000, 5003, SC_MAXROWS};
    static const int teams[] = {1, 2, 3, 16};
    static const size_t gaps[] = {SC_GAP, SC_WIDE_GAP, 1, 60}, offs[] = {0, 37};
    static unsigned char stage[SC_MAXROW * SC_MAXROWS],
        buf[256 + ((SC_MAXROW + SC_WIDE_GAP) * SC_WIDE_ROWS > (SC_MAXROW + SC_GAP) * SC_MAXROWS
                      ? (SC_MAXROW + SC_WIDE_GAP) * SC_WIDE_ROWS
                      : (SC_MAXROW + SC_GAP) * SC_MAXROWS)];
    static cuxfer_plan2d pl; /* only its team is used: no CUDA call */
    size_t wi, hi, gi, oi, i, y, x;
    int ti, bad_rows = 0, bad_gaps = 0, busy_left = 0, runs = 0;
    diag("masked stores: %s", cuxfer_impl_masked(1, 2) ? "used for 1-4 byte rows, pitch <= 64"
                                                        : "not on this CPU, compiler or target");
    for (ti = 0; ti < (int)(sizeof teams / sizeof teams[0]); ++ti) {
        memset(&pl, 0, sizeof pl);
        cuxfer_impl_team_start(&pl.team, teams[ti] - 1, NULL, NULL);
        for (gi = 0; gi < sizeof gaps / sizeof gaps[0]; ++gi)
            for (wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi)
                for (hi = 0; hi < sizeof heights / sizeof heights[0]; ++hi)
                    for (oi = 0; oi < 2; ++oi) {
                        size_t w = widths[wi], h = heights[hi], pitch = w + gaps[gi];
                        unsigned char *dst = buf + offs[oi] + (64 - (uintptr_t)buf % 64) % 64;
                        if ((gaps[gi] == SC_WIDE_GAP && h > SC_WIDE_ROWS) ||
                            ((gi > 1 || oi) && w > 4)) /* the masked stores' cases */
                            continue;
                        for (i = 0; i < w * h; ++i)
                            stage[i] = (unsigned char)(i * 37u + w + (size_t)ti);
                        memset(dst - offs[oi], 0x5a, pitch * h + 64);
                        busy_left += run_scatter_rec(&pl, runs, dst, stage, 0, pitch, w, h, NULL);
                        for (x = pitch * (h - 1) + w; x < pitch * h + 64 - offs[oi]; ++x)
                            if (dst[x] != 0x5a && !bad_gaps++)
                                diag("team %d, %zu-byte rows x %zu, pitch %zu: byte %zu past the "
                                     "last row written", teams[ti], w, h, pitch, x);
                        if (offs[oi] && dst[-1] != 0x5a && !bad_gaps++)
                            diag("team %d, %zu-byte rows, pitch %zu: the byte before written",
                                 teams[ti], w, pitch);
                        for (y = 0; y < h; ++y) {
                            if (memcmp(dst + y * pitch, stage + y * w, w) != 0) {
                                if (!bad_rows++)
                                    diag("team %d, %zu-byte rows x %zu, pitch %zu: row %zu differs",
                                         teams[ti], w, h, pitch, y);
                            }
                            for (x = w; x < pitch; ++x)
                                if (dst[y * pitch + x] != 0x5a && !bad_gaps++)
                                    diag("team %d, %zu-byte rows x %zu, pitch %zu: gap byte %zu of "
                                         "row %zu written",
                                         teams[ti], w, h, pitch, x, y);
                        }
                        ++runs;
                    }
        cuxfer_impl_team_stop(&pl.team);
    }
    is_int(0, bad_rows, "%d scatters on the team: every row byte-exact", runs);
    is_int(0, bad_gaps, "%d scatters: no gap byte written", runs);
    is_int(0, busy_left, "%d records released by the host function", runs);
}

/* The host half of SPAN's gathered share: the same host function, given
 * a source pitch, gathers strided rows densely into staging with the team
 * and writes the unpacking kernel's descriptor ({0, 0} offsets, then rows
 * and row as 32-bit words).  Teams of 1, 3 and 16, the widths the gather
 * special-cases and odd ones, row counts below and above the team's
 * threshold: every staged byte must be the source row's, nothing may be
 * written past the staged rows, the source is left alone, and the record
 * comes back free. */
static void gather_on_team(void)
{
    static const size_t widths[] = {8, 12, 16, 24, 32, 40, 48, 100, 128, 256};
    static const size_t heights[] = {1, 63, 64, 65, 3001};
    static const int teams[] = {1, 3, 16};
    enum { G_GAP = 9 };
    static unsigned char src[(SC_MAXROW + G_GAP) * SC_MAXROWS], stage[SC_MAXROW * SC_MAXROWS + 64];
    static cuxfer_impl_tile desc[2]; /* the second one must stay poisoned */
    static unsigned char poison[sizeof desc[1]];
    static cuxfer_plan2d pl; /* only its team is used: no CUDA call */
    size_t wi, hi, i;
    int ti, bad_rows = 0, bad_tail = 0, bad_src = 0, bad_desc = 0, busy_left = 0, runs = 0;
    for (ti = 0; ti < (int)(sizeof teams / sizeof teams[0]); ++ti) {
        memset(&pl, 0, sizeof pl);
        cuxfer_impl_team_start(&pl.team, teams[ti] - 1, NULL, NULL);
        for (wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi)
            for (hi = 0; hi < sizeof heights / sizeof heights[0]; ++hi) {
                size_t w = widths[wi], h = heights[hi], pitch = w + G_GAP;
                for (i = 0; i < pitch * h; ++i)
                    src[i] = (unsigned char)(i * 29u + w + (size_t)ti);
                memset(stage, 0x5a, w * h + 64);
                memset(desc, 0x5a, sizeof desc);
                memset(poison, 0x5a, sizeof poison);
                busy_left += run_scatter_rec(&pl, runs, stage, src, pitch, w, w, h, desc);
                for (i = 0; i < h; ++i)
                    if (memcmp(stage + i * w, src + i * pitch, w) != 0 && !bad_rows++)
                        diag("gather, team %d, %zu-byte rows x %zu: row %zu differs", teams[ti], w,
                             h, i);
                for (i = w * h; i < w * h + 64; ++i)
                    if (stage[i] != 0x5a && !bad_tail++)
                        diag("gather, team %d, %zu-byte rows x %zu: byte %zu past the rows "
                             "written", teams[ti], w, h, i);
                for (i = 0; i < pitch * h; ++i)
                    if (src[i] != (unsigned char)(i * 29u + w + (size_t)ti) && !bad_src++)
                        diag("gather, team %d: source byte %zu changed", teams[ti], i);
                if ((desc[0].src != 0 || desc[0].dst != 0 || desc[0].rows != h ||
                     desc[0].rb != w || memcmp(&desc[1], poison, sizeof poison) != 0) &&
                    !bad_desc++)
                    diag("gather, team %d, %zu-byte rows x %zu: descriptor %llu %llu %u %u",
                         teams[ti], w, h, desc[0].src, desc[0].dst, desc[0].rows, desc[0].rb);
                ++runs;
            }
        cuxfer_impl_team_stop(&pl.team);
    }
    is_int(0, bad_rows, "%d gathers on the team: every staged row byte-exact", runs);
    is_int(0, bad_tail, "%d gathers: nothing written past the staged rows", runs);
    is_int(0, bad_src, "%d gathers: the source left alone", runs);
    is_int(0, bad_desc, "%d gathers: the kernel's descriptor written, and only it", runs);
    is_int(0, busy_left, "%d gather records released by the host function", runs);
}

/* The stager's workers on the team, without a device: this thread plays
 * the coordinator (publish, grant, await, the team's close), the slots
 * are malloc'd and the "DMAs" are memcpy.  Jobs of awkward sizes (pieces
 * that do not divide a slot, a last chunk of one byte) both ways, rings
 * of 1 to 3 slots, teams of 1 to 4 workers: every byte must arrive, no
 * chunk may be touched before its permit (H2D: a slot refilled only
 * after its previous chunk was taken; D2H: a slot drained only after it
 * was filled), and after an abort no worker may copy a piece. */
static void stager_on_team(void)
{
    static const size_t sizes[] = {1, 999, 4096, 4097, 3 * 4096 + 5, 50000};
    static const int slotss[] = {1, 2, 3}, teams[] = {1, 2, 4};
    enum { S = 4096, P = 1000, MAXB = 50000 };
    static unsigned char src[MAXB + 1], dst[MAXB + 1], dev[MAXB + 1];
    static cuxfer_stager st;
    size_t zi, c, i;
    int si, ti, bad = 0, jobs = 0, aborted_copies = 0;
    for (i = 0; i < MAXB; ++i)
        src[i] = (unsigned char)(i * 151u + 3u);
    for (ti = 0; ti < 3; ++ti)
        for (si = 0; si < 3; ++si) {
            memset(&st, 0, sizeof st);
            st.opt.slots = slotss[si];
            st.opt.slot_bytes = S;
            st.piece_bytes = P;
            st.pieces_per_chunk = (S + P - 1) / P;
            st.slot = (unsigned char **)calloc((size_t)st.opt.slots, sizeof *st.slot);
            st.filled = (size_t *)calloc((size_t)st.opt.slots, sizeof *st.filled);
            for (i = 0; i < (size_t)st.opt.slots; ++i)
                st.slot[i] = (unsigned char *)malloc(S);
            pthread_mutex_init(&st.mu, NULL);
            pthread_cond_init(&st.coord_cv, NULL);
            pthread_cond_init(&st.work_cv, NULL);
            if (cuxfer_impl_team_start(&st.team, teams[ti], NULL, NULL) != 0)
                bail("team start");
            for (zi = 0; zi < sizeof sizes / sizeof sizes[0]; ++zi) {
                cuxfer_impl_stage_job job;
                size_t bytes = sizes[zi], n;
                int d2h;
                for (d2h = 0; d2h < 2; ++d2h) {
                    memset(&job, 0, sizeof job);
                    job.d2h = d2h;
                    job.host = d2h ? dst : src;
                    job.bytes = bytes;
                    job.chunks = n = (bytes - 1) / S + 1;
                    job.last = bytes - (n - 1) * S;
                    job.pieces = (n - 1) * st.pieces_per_chunk + (job.last + P - 1) / P;
                    memset(dev, 0xa5, sizeof dev);
                    memset(dst, 0xa5, sizeof dst);
                    if (!d2h) { /* H2D: chunk c + slots may start once c went */
                        cuxfer_impl_stager_publish(&st, &job, n < (size_t)st.opt.slots
                                                                  ? n
                                                                  : (size_t)st.opt.slots);
                        for (c = 0; c < n; ++c) {
                            size_t k = c % (size_t)st.opt.slots;
                            size_t len = cuxfer_impl_chunk_len(&job, c, S);
                            cuxfer_impl_stager_await(&st, k, len);
                            __atomic_store_n(&st.filled[k], (size_t)0, __ATOMIC_RELAXED);
                            memcpy(dev + c * S, st.slot[k], len);
                            memset(st.slot[k], 0x3c, S); /* an early refill would show */
                            if (c + 1 + (size_t)st.opt.slots <= n)
                                cuxfer_impl_stager_grant(&st, c + 1 + (size_t)st.opt.slots);
                        }
                        bad += memcmp(dev, src, bytes) != 0 || dev[bytes] != 0xa5;
                    } else { /* D2H: chunk c may be drained once it arrived */
                        memcpy(dev, src, bytes);
                        cuxfer_impl_stager_publish(&st, &job, 0);
                        for (c = 0; c < n; ++c) {
                            size_t k = c % (size_t)st.opt.slots;
                            size_t len = cuxfer_impl_chunk_len(&job, c, S);
                            memcpy(st.slot[k], dev + c * S, len);
                            cuxfer_impl_stager_grant(&st, c + 1);
                            cuxfer_impl_stager_await(&st, k, len);
                            __atomic_store_n(&st.filled[k], (size_t)0, __ATOMIC_RELAXED);
                        }
                        bad += memcmp(dst, src, bytes) != 0 || dst[bytes] != 0xa5;
                    }
                    cuxfer_impl_team_close(&st.team);
                    ++jobs;
                }
            }
            { /* abort before any permit: no piece may be copied */
                cuxfer_impl_stage_job job;
                memset(&job, 0, sizeof job);
                memset(dst, 0xa5, sizeof dst);
                job.d2h = 1;
                job.host = dst;
                job.bytes = MAXB;
                job.chunks = (MAXB - 1) / S + 1;
                job.last = MAXB - (job.chunks - 1) * S;
                job.pieces = (job.chunks - 1) * st.pieces_per_chunk + (job.last + P - 1) / P;
                for (i = 0; i < (size_t)st.opt.slots; ++i)
                    memset(st.slot[i], 0x11, S);
                cuxfer_impl_stager_publish(&st, &job, 0);
                pthread_mutex_lock(&st.mu);
                __atomic_store_n(&st.abort, 1, __ATOMIC_SEQ_CST);
                pthread_cond_broadcast(&st.work_cv);
                pthread_mutex_unlock(&st.mu);
                cuxfer_impl_team_close(&st.team);
                for (i = 0; i < MAXB; ++i)
                    aborted_copies += dst[i] != 0xa5;
            }
            cuxfer_impl_team_stop(&st.team);
            for (i = 0; i < (size_t)st.opt.slots; ++i)
                free(st.slot[i]);
            free(st.slot);
            free(st.filled);
            pthread_mutex_destroy(&st.mu);
            pthread_cond_destroy(&st.coord_cv);
            pthread_cond_destroy(&st.work_cv);
        }
    is_int(0, bad, "stager on the team: %d jobs both ways, every byte in place, none past", jobs);
    is_int(0, aborted_copies, "stager on the team: an aborted job copies nothing");
}

/* Which SPAN copies get the gathered share, on the GPU: with the kernel
 * (CUDA 12.5+), 30 % of the rows into 4-byte aligned device rows, none
 * into rows at an odd address or pitch, none for 4-byte rows.  (That the
 * rows arrive byte-exact either way is tests/planner/roundtrip.c's.) */
static void span_gathered_on_gpu(void)
{
    cuxfer_plan2d pl;
    cuxfer_view src, dev;
    void *hb = NULL;
    unsigned char *db = NULL;
    size_t h = 100000;
    GPU_MUST(cuxfer_plan2d_create(&pl, NULL));
    GPU_MUST(cuxfer_host_alloc(&hb, 64 * h, 1, 0));
    GPU_MUST(cudaMalloc((void **)&db, 40 * h + 4));
    if (!pl.kernel) {
        skip(4, "the plan has no copy kernel (runtime before 12.5)");
    } else {
        GPU_MUST(cuxfer_view_wrap(&src, hb, 32, 16, h, 1));
        GPU_MUST(cuxfer_view_wrap(&dev, db + 4, 20, 16, h, 1));
        is_int(30000, (int)cuxfer_impl_plan_gathered(&pl, &dev, &src),
               "16-byte rows into 4-byte aligned device rows: 30000 of 100000 gathered");
        GPU_MUST(cuxfer_view_wrap(&dev, db + 1, 20, 16, h, 1));
        is_int(0, (int)cuxfer_impl_plan_gathered(&pl, &dev, &src),
               "none into device rows at an odd address");
        GPU_MUST(cuxfer_view_wrap(&dev, db, 19, 16, h, 1));
        is_int(0, (int)cuxfer_impl_plan_gathered(&pl, &dev, &src),
               "none into device rows at an odd pitch");
        GPU_MUST(cuxfer_view_wrap(&src, hb, 8, 4, h, 1));
        GPU_MUST(cuxfer_view_wrap(&dev, db, 4, 4, h, 1));
        is_int(0, (int)cuxfer_impl_plan_gathered(&pl, &dev, &src), "none for 4-byte rows");
    }
    cudaFree(db);
    cuxfer_host_free(hb);
    GPU_MUST(cuxfer_plan2d_destroy(&pl));
}

/* SPAN's extraction by the copy kernel, on the CPU: the launch that
 * cuxfer_impl_span_kx describes, run through a model of the kernel (as
 * its PTX, section 9b, reads it: units of 2^ul bytes, ul from the OR of
 * the launch's addresses, pitches and row; ru = rb >> ul units a row, run
 * over rows of vr units, a row of 128 bytes or more from its host line;
 * strided side at host + src + row x pitch + column units, dense side at
 * dense + dst + row x dpitch + column units, dpitch 0 meaning rb; d2h 0
 * copies strided to dense, 1 dense to strided), must move a chunk's rows
 * from the scratch (source pitch) into the destination (its pitch), rows
 * of 1 to 8 bytes at every offset, leaving every other byte alone. */
static void kx_model(const cuxfer_impl_tile *t, unsigned char *host, size_t pitch,
                     unsigned char *dense, size_t dpitch, unsigned d2h, uintptr_t align)
{
    unsigned ul = 0;
    size_t i, ru, s = 0, vr;
    while (ul < 4 && !(align & ((uintptr_t)1 << ul)))
        ++ul;
    ru = vr = t->rb >> ul;
    if (ru >= (128u >> ul)) { /* the kernel's skew: the row from its host line */
        s = ((uintptr_t)host + t->src) % 128 >> ul;
        vr = (ru + s + (128u >> ul) - 1) / (128u >> ul) * (128u >> ul);
    }
    for (i = 0; i < (size_t)t->rows * vr; ++i) {
        size_t row = i / vr, c = i % vr - s;
        unsigned char *sp = host + t->src + row * pitch + (c << ul);
        unsigned char *dp = dense + t->dst + row * (dpitch ? dpitch : ru << ul) + (c << ul);
        if (i % vr < s || c >= ru)
            continue;
        if (d2h)
            memcpy(sp, dp, (size_t)1 << ul);
        else
            memcpy(dp, sp, (size_t)1 << ul);
    }
}

static void span_kx_model(void)
{
    enum { KM_ROWS = 37, KM_MAXP = 40, KM_BUF = KM_ROWS * KM_MAXP + 64 };
    static unsigned char scratch[KM_BUF] __attribute__((aligned(16)));
    static unsigned char dst[KM_BUF] __attribute__((aligned(16)));
    static const size_t rows_l[] = {1, 2, 5, KM_ROWS};
    size_t w, sp, dpx, so, doff, ri, i;
    int bad = 0, runs = 0;
    cuxfer_impl_tile t;
    struct cuxfer_impl_kx_launch l;
    for (w = 1; w <= 8; ++w)
        for (sp = w + 1; sp <= 3 * w + 5; sp += w + 1)
            for (dpx = 0; dpx < 3; ++dpx)
                for (so = 0; so < 16; so += 4)
                    for (doff = 0; doff < 5; ++doff)
                        for (ri = 0; ri < sizeof rows_l / sizeof rows_l[0]; ++ri) {
                            /* 16-byte aligned bases, so the offsets decide the units */
                            unsigned char *sc = scratch + so, *to = dst + doff;
                            size_t dp = dpx == 0 ? 32 : dpx == 1 ? w + 1 : 2 * w + 4;
                            size_t rows = rows_l[ri], y, x;
                            for (i = 0; i < KM_BUF; ++i)
                                scratch[i] = (unsigned char)(i * 131u + w * 7u + sp);
                            memset(dst, 0xA5, sizeof dst);
                            cuxfer_impl_tile_put(&t, 0, 0, rows, w);
                            cuxfer_impl_span_kx(sc, sp, to, dp, w, &l);
                            kx_model(&t, (unsigned char *)l.host, l.pitch, (unsigned char *)l.dense,
                                     l.dpitch, 0, l.align);
                            ++runs;
                            for (i = 0; i < KM_BUF; ++i) {
                                size_t at = i < doff ? dp : (i - doff) % dp;
                                y = i < doff ? 0 : (i - doff) / dp;
                                x = at < w && y < rows ? sc[y * sp + at] : 0xA5;
                                if (dst[i] != x && !bad++)
                                    diag("span kx: %zu-byte rows x %zu, pitches %zu -> %zu, "
                                         "offset %zu: byte %zu is %#x, not %#zx", w, rows, sp, dp,
                                         doff, i, dst[i], x);
                            }
                            for (i = 0; i < KM_BUF; ++i)
                                if (scratch[i] != (unsigned char)(i * 131u + w * 7u + sp) && !bad++)
                                    diag("span kx: scratch byte %zu written", i);
                        }
    is_int(0, bad, "SPAN's kernel extraction, %d chunks through a model of the kernel: rows "
           "byte-exact at the destination's pitch, nothing else written", runs);
}

/* A SPAN copy's last chunk, and which descriptor pairs match a copy. */
static void span_kx_chunks(void)
{
    static cuxfer_impl_tile d[2];
    size_t h, per, y, rows;
    int bad = 0;
    for (per = 1; per < 40; ++per)
        for (h = 1; h < 200; ++h) {
            /* cuxfer_impl_plan_span_rows's chunks: every one but the last
             * has per rows, the last cuxfer_impl_span_last's */
            for (y = 0; y < h; y += rows) {
                rows = h - y < per ? h - y : per;
                if (rows != per && y + rows != h)
                    bad++;
                if (y + rows == h && rows != cuxfer_impl_span_last(h, per) && !bad++)
                    diag("span: %zu rows by %zu: last chunk %zu, span_last %zu", h, per, rows,
                         cuxfer_impl_span_last(h, per));
            }
        }
    is_int(0, bad, "the last chunk of a SPAN copy has cuxfer_impl_span_last's rows, the others per");
    cuxfer_impl_tile_put(&d[0], 0, 0, 4096, 2);
    cuxfer_impl_tile_put(&d[1], 0, 0, 17, 2);
    ok(cuxfer_impl_kx_holds(d, 4096, 17, 2), "a pair holding {4096, 2}, {17, 2} matches them");
    ok(!cuxfer_impl_kx_holds(d, 4096, 17, 1) && !cuxfer_impl_kx_holds(d, 4096, 16, 2) &&
           !cuxfer_impl_kx_holds(d, 4095, 17, 2),
       "and no other row width, last chunk or chunk");
    d[1].dst = 8;
    ok(!cuxfer_impl_kx_holds(d, 4096, 17, 2), "nor a pair with an offset");
}

/* A SPAN copy's chunks (cuxfer_impl_span_per): each span fits the scratch,
 * no more chunks than the scratch needs, and the last within a row a
 * chunk of the others (not a remainder of a few rows after full chunks). */
static void span_chunks_even(void)
{
    static const size_t chunks[] = {4096, 65536, (size_t)8 << 20};
    size_t c, row, pitch, h, per, fit, n, last, cases = 0;
    unsigned x = 12345;
    int bad = 0;
    for (c = 0; c < 3; ++c)
        for (row = 1; row <= 64; row *= 4)
            for (pitch = row; pitch <= 16 * row; pitch += row + row / 2 + 1) {
                fit = (chunks[c] - row) / pitch + 1;
                for (h = 1; h < 40 * fit && h < ((size_t)1 << 24); h += 1 + h / 8 + x % 7) {
                    x = x * 1103515245u + 12345u;
                    per = cuxfer_impl_span_per(chunks[c], pitch, row, h);
                    n = (h + per - 1) / per;
                    last = cuxfer_impl_span_last(h, per);
                    ++cases;
                    if (per == 0 || (per - 1) * pitch + row > chunks[c] ||
                        n != (h + fit - 1) / fit || last + n - 1 < per) {
                        if (!bad++)
                            diag("span chunks: %zu rows of %zu B at pitch %zu, scratch %zu: %zu "
                                 "a chunk, %zu chunks (at least %zu), the last %zu", h, row,
                                 pitch, chunks[c], per, n, (h + fit - 1) / fit, last);
                    }
                }
            }
    is_int(0, bad, "SPAN's chunks, %zu copies: each span fits the scratch, as few chunks as it "
           "allows, the last within a row a chunk of the others", cases);
}

/* The chunks of a SPAN copy extracted by the copy kernel
 * (cuxfer_impl_kx_chunk): never more than the plain chunks or 16, so what
 * cuxfer_plan2d(3) says returns on a held stream still does; a span that
 * fits one scratch chunk but is more than twice CUXFER_IMPL_KX_CHUNK goes
 * in several; and a chunk_bytes below CUXFER_IMPL_KX_CHUNK is kept. */
static void kx_chunks(void)
{
    static const size_t chunks[] = {4096, (size_t)1 << 20, (size_t)8 << 20, (size_t)64 << 20};
    size_t c, row, pitch, h, per, kc, n, plain, span, cases = 0;
    int bad = 0;
    for (c = 0; c < sizeof chunks / sizeof chunks[0]; ++c)
        for (row = 1; row <= CUXFER_IMPL_KX_MAX_ROW; row += 3)
            for (pitch = row + 1; pitch < ((size_t)4 << 20); pitch = pitch * 5 + 3)
                for (h = 1; h < ((size_t)1 << 26) && (h - 1) * pitch < ((size_t)4 << 30);
                     h = h * 3 + h % 7) {
                    span = (h - 1) * pitch + row;
                    kc = cuxfer_impl_kx_chunk(chunks[c], pitch, row, h);
                    per = cuxfer_impl_span_per(kc, pitch, row, h);
                    n = (h + per - 1) / per;
                    plain = (h - 1) / cuxfer_impl_span_per(chunks[c], pitch, row, h) + 1;
                    ++cases;
                    if (kc > chunks[c] || kc < row ||
                        (kc < chunks[c] && kc < CUXFER_IMPL_KX_CHUNK) ||
                        n > (plain > 16 ? plain : 16) ||
                        (span <= chunks[c] && span > 2 * CUXFER_IMPL_KX_CHUNK && n < 2)) {
                        if (!bad++)
                            diag("kernel-extracted span of %zu B (%zu rows of %zu B at pitch %zu), "
                                 "chunk_bytes %zu: chunks of %zu B, %zu of them (plain %zu)",
                                 span, h, row, pitch, chunks[c], kc, n, plain);
                    }
                }
    is_int(0, bad, "SPAN's kernel-extracted chunks, %zu copies: at most 16 or the plain count, "
           "a span that fits one chunk in several, a small chunk_bytes kept", cases);
}

/* SPAN's descriptor pairs on the GPU: a pair is rewritten only once the
 * launches that read it are done.  With aux held (it waits for an event
 * behind a host function), each new shape takes a free pair whose event
 * is then recorded behind the hold; once all are busy a fifth shape gets
 * none (-1: the copy engine extracts) and no pair changes, while a shape
 * a busy pair already holds still gets it.  Released, a pair is free,
 * and every pair's device copy (what the launches read) holds its values. */
static int kx_release;
static void CUDART_CB kx_hold(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&kx_release, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void span_kx_pairs_on_gpu(void)
{
    cuxfer_plan2d pl;
    cudaStream_t hs;
    cudaEvent_t he;
    int j[CUXFER_IMPL_KX_PAIRS], i, again, distinct = 1, held = 1;
    cuxfer_impl_tile before[2 * CUXFER_IMPL_KX_PAIRS];
    GPU_MUST(cuxfer_plan2d_create(&pl, NULL));
    if (!pl.kx_dev) {
        skip(6, "the plan has no copy kernel (runtime before 12.5)");
        GPU_MUST(cuxfer_plan2d_destroy(&pl));
        return;
    }
    GPU_MUST(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
    GPU_MUST(cudaEventCreateWithFlags(&he, cudaEventDisableTiming));
    __atomic_store_n(&kx_release, 0, __ATOMIC_RELEASE);
    GPU_MUST(cudaLaunchHostFunc(hs, kx_hold, NULL));
    GPU_MUST(cudaEventRecord(he, hs));
    GPU_MUST(cudaStreamWaitEvent(pl.aux, he, 0));
    for (i = 0; i < CUXFER_IMPL_KX_PAIRS; ++i) {
        j[i] = cuxfer_impl_kx_pair(&pl, 1000 + (size_t)i, 3, 1);
        if (j[i] < 0 || !cuxfer_impl_kx_holds(pl.kdesc + CUXFER_IMPL_KX_BASE + 2 * j[i],
                                               1000 + (size_t)i, 3, 1))
            distinct = 0;
        else
            GPU_MUST(cudaEventRecord(pl.ev_kx[j[i]], pl.aux));
        if (i && j[i] == j[i - 1])
            distinct = 0;
    }
    ok(distinct, "%d shapes take %d pairs, each written with its values", CUXFER_IMPL_KX_PAIRS,
       CUXFER_IMPL_KX_PAIRS);
    memcpy(before, pl.kdesc + CUXFER_IMPL_KX_BASE, sizeof before);
    is_int(-1, cuxfer_impl_kx_pair(&pl, 5000, 1, 4), "every pair busy: a new shape gets none");
    ok(memcmp(before, pl.kdesc + CUXFER_IMPL_KX_BASE, sizeof before) == 0,
       "and no busy pair was rewritten");
    again = cuxfer_impl_kx_pair(&pl, 1002, 3, 1);
    is_int(j[2], again, "a shape a busy pair holds still gets that pair");
    held = cudaEventQuery(pl.ev_kx[j[0]]) == cudaErrorNotReady;
    (void)cudaGetLastError();
    __atomic_store_n(&kx_release, 1, __ATOMIC_RELEASE);
    GPU_MUST(cudaStreamSynchronize(hs));
    GPU_MUST(cudaStreamSynchronize(pl.aux));
    ok(held && cuxfer_impl_kx_pair(&pl, 5000, 1, 4) >= 0,
       "released (the events were pending while held), a pair is free for it");
    GPU_MUST(cudaStreamSynchronize(pl.aux));
    for (i = 0; i < CUXFER_IMPL_KX_PAIRS; ++i) {
        cuxfer_impl_tile got[2];
        GPU_MUST(cudaMemcpy(got, pl.kx_dev + 2 * i, sizeof got, cudaMemcpyDeviceToHost));
        if (memcmp(got, pl.kdesc + CUXFER_IMPL_KX_BASE + 2 * i, sizeof got) != 0)
            distinct = 0;
    }
    ok(distinct, "each pair's copy in device memory, which the launches read, holds its values");
    GPU_MUST(cudaEventDestroy(he));
    GPU_MUST(cudaStreamDestroy(hs));
    GPU_MUST(cuxfer_plan2d_destroy(&pl));
}

/* cuxfer_device_alloc records exactly N elements in the registry (moved
 * from typed-alloc.c; the driver alone would call the bytes just past the
 * end device memory too, within its allocation granularity). */
static void device_alloc_registry(void)
{
    enum { N = 1000 };
    int32_t *d = NULL;
    GPU_MUST(CUXFER_DEVICE_ALLOC(&d, N));
    is_int(CUXFER_MEMORY_DEVICE, cuxfer_impl_lookup(d + N - 1, NULL),
           "the registry knows the device range, last element included");
    is_int(CUXFER_MEMORY_UNKNOWN, cuxfer_impl_lookup(d + N, NULL),
           "the registry's range ends at N elements");
    GPU_OK(cuxfer_device_free(d), "cuxfer_device_free");
    is_int(CUXFER_MEMORY_UNKNOWN, cuxfer_impl_lookup(d, NULL),
           "after the free the registry forgets the range");
}

/* PACK's direct share (cuxfer_impl_share), from rates alone: none for
 * rows under 32 bytes; before any sample the H200 model; with samples,
 * the medians of the last eight (an outlier moves nothing) set it so the
 * direct part takes 1.3 times the packed part; always within
 * [0.02, 0.9]. */
static cuxfer_plan2d plan_zero;
static void pack_direct_share(void)
{
    static cuxfer_plan2d pl; /* rates only: no CUDA call */
    double f, want;
    int i;
    memset(&pl, 0, sizeof pl);
    is_int(0, cuxfer_impl_share_class(32), "share class of 32-byte rows");
    is_int(0, cuxfer_impl_share_class(63), "share class of 63-byte rows");
    is_int(1, cuxfer_impl_share_class(64), "share class of 64-byte rows");
    is_int(2, cuxfer_impl_share_class(128), "share class of 128-byte rows");
    is_int(2, cuxfer_impl_share_class((size_t)1 << 20), "share class of 1 MiB rows");
    ok(cuxfer_impl_share(&pl, 8) == 0 && cuxfer_impl_share(&pl, 16) == 0 &&
           cuxfer_impl_share(&pl, 31) == 0,
       "no direct share for rows under 32 bytes");
    f = cuxfer_impl_share(&pl, 32);
    want = 1.3 * (0.8e6 * 2 / 3) / (1.3 * (0.8e6 * 2 / 3) + 25e6 / 32);
    ok(fabs(f - want) < 1e-9, "32-byte rows before any sample: the H200 model, %.4f", f);
    for (i = 0; i < 8; ++i) {
        pl.rate_d[0][i] = 1000;
        pl.rate_p[0][i] = i == 3 ? 1e9 : 3000; /* one wild sample */
    }
    pl.rate_n[0] = 8;
    f = cuxfer_impl_share(&pl, 40);
    want = 1.3 * 1000 / (1.3 * 1000 + 3000);
    ok(fabs(f - want) < 1e-9, "from the medians of eight samples, one wild: %.4f", f);
    pl.rate_n[0] = 3; /* three samples: their median */
    pl.rate_p[0][0] = 100, pl.rate_p[0][1] = 3000, pl.rate_p[0][2] = 200;
    f = cuxfer_impl_share(&pl, 40);
    want = 1.3 * 1000 / (1.3 * 1000 + 200);
    ok(fabs(f - want) < 1e-9 || f == 0.9, "three samples: their median (%.4f)", f);
    ok(f <= 0.9, "at most 0.9 of the rows go direct");
    pl.rate_p[0][0] = pl.rate_p[0][1] = pl.rate_p[0][2] = 1e12;
    ok(cuxfer_impl_share(&pl, 40) == 0.02, "at least 0.02 when the packed part flies");
    ok(cuxfer_impl_share(&pl, 64) == cuxfer_impl_share(&plan_zero, 64),
       "classes are separate: 64-byte rows still on the model");
}

int main(void)
{
    cudaStream_t s;
    plan(0);
    guard_env();
    guard_pairs();
    pool_class_indexes();
    stream_guard_env();
    registry_lockfree();
    fork_registry();
    units_share_state();
    rois_host_gather();
    rois_check_on_team();
    rois_scan_member_past_maps();
    rois_lattice_cap();
    team_door();
    pack_scatter_on_team();
    gather_on_team();
    stager_on_team();
    /* SPAN's gathered share: 30 % of the rows, none below 8-byte rows or
     * below 1024 rows of share */
    is_int(0, (int)cuxfer_impl_gather_share(4, 1000000), "no gathered share for 4-byte rows");
    is_int(0, (int)cuxfer_impl_gather_share(8, 3400), "none for 1020 rows of share");
    is_int(1024, (int)cuxfer_impl_gather_share(8, 3414), "1024 rows of 3414 (8-byte rows)");
    is_int(300000, (int)cuxfer_impl_gather_share(16, 1000000), "30 %% of 1000000 16-byte rows");
    is_int(30000, (int)cuxfer_impl_gather_share(256, 100000), "the share has no upper row bound "
           "(AUTO's span_max_row bounds SPAN)");
    pack_direct_share();
    span_kx_model();
    span_kx_chunks();
    span_chunks_even();
    kx_chunks();
    strict_c99_clock();

    if (!gpu_present(1))
        done_testing();
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    guard_on_gpu(s);
    managed_without_capability(s);
    device_alloc_registry();
    span_gathered_on_gpu();
    span_kx_pairs_on_gpu();
    GPU_MUST(cudaStreamDestroy(s));
    done_testing();
}
#endif /* INTERNALS_UNIT_B */
