/* SPDX-License-Identifier: MIT */
/*
 * cuxfer.h - CUDA asynchronous transfers, fast and hard to get wrong.
 * Version 0.1.0.  One header of static inline C; needs only the CUDA
 * runtime (link -lcudart), not nvcc.  C99, C11, C++11 and later.
 *
 * DO THIS
 *     #include <cuxfer.h>          (pkg-config --cflags --libs cuxfer)
 *
 *     cuxfer_view img, roi, dev;
 *     cudaStream_t s;
 *     CUXFER_CHECK(cuxfer_view_alloc_host(&img, 1920, 1080, 3, 256));
 *     CUXFER_CHECK(cuxfer_view_sub(&img, (cuxfer_roi){100, 200, 800, 600}, &roi));
 *     CUXFER_CHECK(cuxfer_view_alloc_device(&dev, 800, 600, 3));
 *     CUXFER_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
 *     CUXFER_CHECK(cuxfer_copy2d_async(&dev, &roi, s));   // H2D, bytes and pitches derived
 *     ... CPU work overlaps the copy ...
 *     CUXFER_CHECK(cudaStreamSynchronize(s));
 *
 * WHICH PAGE (man 3 cuxfer: the overview; one page a family)
 *  pinned, device and managed memory   cuxfer_host_alloc, cuxfer_managed_alloc,
 *                                      cuxfer_memory_kind, cuxfer_pinned_pool
 *  2D data and ROIs                    cuxfer_view
 *  copies (async and synchronous)      cuxfer_copy2d_async, cuxfer_copy
 *  streams, order, time, callbacks     cuxfer_stream_pool, cuxfer_timer,
 *                                      cuxfer_on_complete, cuxfer_on_done
 *  overlap and replay                  cuxfer_ring, cuxfer_graph
 *  narrow rows, many tiles, pageable   cuxfer_plan2d, cuxfer_rois, cuxfer_stager
 *  errors and CUXFER_CHECK             man 3 cuxfer_check
 *
 * CONFIGURATION (define before the include; all have defaults)
 *  CUXFER_ON_ERROR(err)   what CUXFER_CHECK does after printing  (abort())
 *  CUXFER_LOG(...)        printf-style sink of all messages  (fprintf(stderr, ...))
 *  CUXFER_ASSERT(c)       internal invariants               (assert(c))
 *  CUXFER_DEBUG_SYNC      defined: CUXFER_CHECK_LAUNCH synchronizes the device,
 *                         and every call that queues cuxfer's own copies
 *                         (the copies, ring submit, plan2d, rois, the
 *                         stager) returns with them done, to isolate
 *                         ordering bugs
 *  CUXFER_PAGEABLE_POLICY default pageable-guard policy of the unit
 *                         (CUXFER_PAGEABLE_WARN); the environment variable
 *                         CUXFER_PAGEABLE=allow|warn|error overrides it
 *  CUXFER_DEFAULT_STREAM_POLICY  the same for async copies queued on the
 *                         legacy default stream (CUXFER_PAGEABLE_WARN);
 *                         CUXFER_DEFAULT_STREAM=allow|warn|error overrides it
 *  CUXFER_API             storage of every function: static inline; only
 *                         `static` (with attributes) may replace it, else
 *                         the build stops
 *  CUXFER_REASON_MAX      not a setting: the reason text's fixed size (512,
 *                         with the NUL); defining another value stops the build
 *  None of these changes the size or layout of anything shared between
 *  translation units or of any public struct, so units built with
 *  different values work together.  Nothing else is a setting: the
 *  planner's constants are fixed (doc/PERF.md, "Behind the constants").
 *
 * ERRORS
 *  Functions return cudaError_t.  Bad arguments are caught on the CPU before
 *  any CUDA call and map to the closest CUDA code (cudaErrorInvalidValue,
 *  cudaErrorInvalidPitchValue, ...); cuxfer_last_reason() then holds a
 *  sentence naming the offending values, per thread, like errno: read it
 *  right after the failing call.  Longer than 511 bytes, it ends in "...".
 *
 * THREADS (man 3 cuxfer, STREAMS AND THREADS)
 *  Each family's man page says whether it is safe from several host threads.
 *  The engines (plan2d, rois, stager) share one rule: every call but create
 *  and destroy is safe from several threads, one at a time per object.
 *  What cuxfer keeps between calls is one state per process, found by every
 *  unit, library and dlopen'ed plugin.  fork: cuxfer's CPU-side calls work
 *  in the child; CUDA does not (the driver's rule): such a child must exec.
 *
 * API  Every public type and function is declared in the block "The API"
 *  of section 1, grouped by man page.
 *
 * LICENCE  MIT.  See man 3 cuxfer for the overview and a page per family.
 */
#ifndef CUXFER_H
#define CUXFER_H

#include <cuda_runtime_api.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* gcc 8+ or clang 9+ on x86-64, not nvcc: PACK's masked scatter (section 10) */
#if defined(__x86_64__) && !defined(__CUDACC__) &&                                          \
    (defined(__clang__) ? __clang_major__ >= 9 : defined(__GNUC__) && __GNUC__ >= 8)
#define CUXFER_IMPL_MASKED 1
#include <immintrin.h>
#endif

/* ------------------------------------------------------------------------
 * 1. Configuration and version
 * ------------------------------------------------------------------------ */

#define CUXFER_VERSION_MAJOR 0
#define CUXFER_VERSION_MINOR 1
#define CUXFER_VERSION_PATCH 0
#define CUXFER_VERSION_STRING "0.1.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define CUXFER_VERSION_NUMBER                                                  \
    (CUXFER_VERSION_MAJOR * 10000 + CUXFER_VERSION_MINOR * 100 +               \
     CUXFER_VERSION_PATCH)

/* Every function is static inline (doc/DESIGN.md, section 1: why).
 * CUXFER_API may be defined to `static` or `static inline`, possibly with
 * attributes; anything else stops the build below. */
#ifndef CUXFER_API
#define CUXFER_API static inline
#endif

#ifndef CUXFER_LOG
#define CUXFER_LOG(...) ((void)fprintf(stderr, __VA_ARGS__))
#endif

#ifndef CUXFER_ASSERT
#include <assert.h>
#define CUXFER_ASSERT(c) assert(c)
#endif

#ifndef CUXFER_ON_ERROR
#define CUXFER_ON_ERROR(err) abort()
#endif

/* Bytes of the per-thread reason text, including the NUL: fixed, not a
 * setting, because it sizes state shared by every unit and cuxfer_stager. */
#if defined(CUXFER_REASON_MAX) && CUXFER_REASON_MAX != 512
#error "CUXFER_REASON_MAX is fixed at 512 (it sizes state shared by every unit and cuxfer_stager); remove your definition"
#endif
#undef CUXFER_REASON_MAX
#define CUXFER_REASON_MAX 512

/* Pageable-guard policies (section 3). */
#define CUXFER_PAGEABLE_ALLOW 1
#define CUXFER_PAGEABLE_WARN 2
#define CUXFER_PAGEABLE_ERROR 3
#ifndef CUXFER_PAGEABLE_POLICY
#define CUXFER_PAGEABLE_POLICY CUXFER_PAGEABLE_WARN
#endif
/* Default-stream guard policy (section 6): the same three values, for an
 * async copy queued on the legacy default stream. */
#ifndef CUXFER_DEFAULT_STREAM_POLICY
#define CUXFER_DEFAULT_STREAM_POLICY CUXFER_PAGEABLE_WARN
#endif

#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__)
#define CUXFER_IMPL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CUXFER_IMPL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CUXFER_IMPL_UNUSED __attribute__((unused))
#else
#error "cuxfer.h needs GCC, Clang or nvcc with a GNU host compiler on an ELF platform (Linux): __atomic, asm sections, dl_iterate_phdr"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Stop the build when CUXFER_API is not static storage: a static
 * declaration may follow a static definition only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
CUXFER_API CUXFER_IMPL_UNUSED void cuxfer_impl_CUXFER_API_must_be_static(void) {}
static void cuxfer_impl_CUXFER_API_must_be_static(void);
#pragma GCC diagnostic pop

/* ------------------------------------------------------------------------
 * The API: every public type and function, by man page
 * ------------------------------------------------------------------------
 * Declared once here, grouped as the man pages are (man 3 cuxfer lists
 * them), and defined in the numbered sections below.  The compiler holds
 * the two together: a definition that differs from its declaration does
 * not compile, and a function declared here but defined nowhere is a
 * warning (-Wall).  Each group's comment names the page's macros and
 * constants.  tests/header/api.sh checks that every public function, type,
 * macro and constant of the header is named here, under a page that lists
 * it, and nothing else. */

/* man 3 cuxfer; also CUXFER_VERSION_MAJOR, CUXFER_VERSION_MINOR, CUXFER_VERSION_PATCH,
 * CUXFER_VERSION_STRING, CUXFER_VERSION_NUMBER */

/* man 3 cuxfer_check; also CUXFER_CHECK(expr), CUXFER_TRY(expr), CUXFER_CHECK_LAUNCH() */
CUXFER_API const char *cuxfer_last_reason(void);
CUXFER_API void cuxfer_clear_reason(void);
CUXFER_API cudaError_t cuxfer_device_count(int *count);

/* man 3 cuxfer_memory_kind; also CUXFER_MEMORY_UNKNOWN, CUXFER_MEMORY_PAGEABLE,
 * CUXFER_MEMORY_PINNED, CUXFER_MEMORY_DEVICE, CUXFER_MEMORY_MANAGED, CUXFER_PAGEABLE_ALLOW,
 * CUXFER_PAGEABLE_WARN, CUXFER_PAGEABLE_ERROR */
/* Where a pointer's memory lives.  UNKNOWN means the runtime could not say
 * (no driver, or a failed query): cuxfer treats it as "not pageable" and
 * lets CUDA judge the copy. */
typedef enum cuxfer_memkind {
    CUXFER_MEMORY_UNKNOWN = 0,
    CUXFER_MEMORY_PAGEABLE = 1, /* malloc/new/stack: async copies block */
    CUXFER_MEMORY_PINNED = 2,   /* cudaHostAlloc or cudaHostRegister */
    CUXFER_MEMORY_DEVICE = 3,   /* cudaMalloc, cudaMallocPitch */
    CUXFER_MEMORY_MANAGED = 4   /* cudaMallocManaged */
} cuxfer_memkind;
CUXFER_API cuxfer_memkind cuxfer_memory_kind(const void *p);
CUXFER_API const char *cuxfer_memkind_name(cuxfer_memkind k);
CUXFER_API int cuxfer_host_is_pinned(const void *p);
CUXFER_API int cuxfer_pageable_policy(void);
CUXFER_API int cuxfer_pageable_policy_parse(const char *s);

/* man 3 cuxfer_view; also CUXFER_ELEM_MAX, CUXFER_VIEW_OWNS_DEVICE, CUXFER_VIEW_OWNS_HOST */
typedef struct cuxfer_view cuxfer_view;
typedef struct cuxfer_roi cuxfer_roi;
CUXFER_API cudaError_t cuxfer_view_alloc_device(cuxfer_view *v, size_t width, size_t height,
                                                size_t elem_size);
CUXFER_API cudaError_t cuxfer_view_alloc_host(cuxfer_view *v, size_t width, size_t height,
                                              size_t elem_size, size_t row_align);
CUXFER_API cudaError_t cuxfer_view_wrap(cuxfer_view *v, void *ptr, size_t pitch, size_t width,
                                        size_t height, size_t elem_size);
CUXFER_API cudaError_t cuxfer_view_init(cuxfer_view *v, void *ptr, size_t pitch, size_t width,
                                        size_t height, size_t elem_size, cuxfer_memkind kind,
                                        int device);
CUXFER_API cudaError_t cuxfer_view_free(cuxfer_view *v);
CUXFER_API void *cuxfer_view_at(const cuxfer_view *v, size_t x, size_t y);
CUXFER_API cudaError_t cuxfer_view_sub(const cuxfer_view *v, cuxfer_roi roi, cuxfer_view *sub);
CUXFER_API cudaError_t cuxfer_view_check(const cuxfer_view *v, const char *what);
CUXFER_API size_t cuxfer_view_row_bytes(const cuxfer_view *v);

/* man 3 cuxfer_host_alloc; also CUXFER_HOST_ALLOC(pp, count, flags),
 * CUXFER_DEVICE_ALLOC(pp, count) */
CUXFER_API cudaError_t cuxfer_host_alloc(void **p, size_t count, size_t elem_size, unsigned flags);
CUXFER_API cudaError_t cuxfer_host_free(void *p);
CUXFER_API cudaError_t cuxfer_host_register(void *p, size_t bytes, unsigned flags);
CUXFER_API cudaError_t cuxfer_host_unregister(void *p);
CUXFER_API cudaError_t cuxfer_device_alloc(void **p, size_t count, size_t elem_size);
CUXFER_API cudaError_t cuxfer_device_free(void *p);

/* man 3 cuxfer_managed_alloc; also CUXFER_CPU, CUXFER_MANAGED_ALLOC(pp, count, flags) */
CUXFER_API cudaError_t cuxfer_managed_alloc(void **p, size_t count, size_t elem_size,
                                            unsigned flags);
CUXFER_API cudaError_t cuxfer_managed_free(void *p);
CUXFER_API cudaError_t cuxfer_prefetch(const void *p, size_t bytes, int target, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_advise(const void *p, size_t bytes, enum cudaMemoryAdvise advice,
                                     int target);
CUXFER_API int cuxfer_managed_concurrent(int device);

/* man 3 cuxfer_copy2d_async */
CUXFER_API cudaError_t cuxfer_copy2d_async(const cuxfer_view *dst, const cuxfer_view *src,
                                           cudaStream_t s);
CUXFER_API cudaError_t cuxfer_copy_async(void *dst, const void *src, size_t bytes, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_copy2d_check(const cuxfer_view *dst, const cuxfer_view *src,
                                           size_t max_pitch);
CUXFER_API cudaError_t cuxfer_copy_check(const void *dst, const void *src, size_t bytes);
CUXFER_API size_t cuxfer_device_max_pitch(int dev);
CUXFER_API cudaError_t cuxfer_peer_enable(int dev, int peer);
CUXFER_API int cuxfer_default_stream_policy(void);

/* man 3 cuxfer_copy; also CUXFER_COPY_SMALL */
CUXFER_API cudaError_t cuxfer_copy(void *dst, const void *src, size_t bytes);
CUXFER_API cudaError_t cuxfer_copy2d(const cuxfer_view *dst, const cuxfer_view *src);

/* man 3 cuxfer_stream_pool; also CUXFER_STREAM_BLOCKING, CUXFER_STREAM_POOL_MAX, CUXFER_WAIT,
 * CUXFER_NOWAIT */
typedef struct cuxfer_stream_pool cuxfer_stream_pool;
CUXFER_API cudaError_t cuxfer_stream_pool_create(cuxfer_stream_pool *p, int count, unsigned flags,
                                                 int priority);
CUXFER_API cudaError_t cuxfer_stream_pool_create_on(cuxfer_stream_pool *p, int device, int count,
                                                    unsigned flags, int priority);
CUXFER_API cudaError_t cuxfer_stream_pool_wrap(cuxfer_stream_pool *p, const cudaStream_t *streams,
                                               int count);
CUXFER_API cudaError_t cuxfer_stream_pool_next(cuxfer_stream_pool *p, cudaStream_t *s);
CUXFER_API cudaError_t cuxfer_stream_pool_acquire(cuxfer_stream_pool *p, int wait, cudaStream_t *s);
CUXFER_API cudaError_t cuxfer_stream_pool_release(cuxfer_stream_pool *p, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_stream_pool_sync(cuxfer_stream_pool *p);
CUXFER_API cudaError_t cuxfer_stream_pool_destroy(cuxfer_stream_pool *p);

/* man 3 cuxfer_timer; also CUXFER_TIMER_BLOCKING_SYNC, CUXFER_TIMER_ON_DEVICE */
typedef struct cuxfer_timer cuxfer_timer;
typedef struct cuxfer_timer_options cuxfer_timer_options;
typedef struct cuxfer_event_pool cuxfer_event_pool;
CUXFER_API cudaError_t cuxfer_timer_create(cuxfer_timer *t);
CUXFER_API cudaError_t cuxfer_timer_create_with(cuxfer_timer *t, const cuxfer_timer_options *opt);
CUXFER_API cudaError_t cuxfer_timer_start(cuxfer_timer *t, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_timer_stop(cuxfer_timer *t, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_timer_ms(cuxfer_timer *t, int wait, float *ms);
CUXFER_API cudaError_t cuxfer_timer_destroy(cuxfer_timer *t);
CUXFER_API double cuxfer_gbps(size_t bytes, float ms);
CUXFER_API cudaError_t cuxfer_stream_wait(cudaStream_t waiter, cudaStream_t signaler);
CUXFER_API cudaError_t cuxfer_stream_wait_all(cudaStream_t waiter, const cudaStream_t *signalers,
                                              int n);
CUXFER_API cudaError_t cuxfer_stream_all_wait(const cudaStream_t *waiters, int n,
                                              cudaStream_t signaler);
CUXFER_API cudaError_t cuxfer_stream_pool_wait(cuxfer_stream_pool *p, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_stream_wait_pool(cudaStream_t s, cuxfer_stream_pool *p);
CUXFER_API cudaError_t cuxfer_event_pool_create(cuxfer_event_pool *p, int count);
CUXFER_API cudaEvent_t cuxfer_event_pool_next(cuxfer_event_pool *p);
CUXFER_API cudaError_t cuxfer_event_pool_destroy(cuxfer_event_pool *p);

/* man 3 cuxfer_on_complete; also CUXFER_LATCH_STREAMS */
typedef struct cuxfer_latch cuxfer_latch;
typedef struct cuxfer_latch_watch cuxfer_latch_watch;
CUXFER_API cudaError_t cuxfer_on_complete(cudaStream_t s, void (*fn)(void *), void *arg);
CUXFER_API int cuxfer_stream_is_capturing(cudaStream_t s);
CUXFER_API cudaError_t cuxfer_latch_init(cuxfer_latch *l);
CUXFER_API cudaError_t cuxfer_latch_init_on(cuxfer_latch *l, int device);
CUXFER_API cudaError_t cuxfer_latch_arm(cuxfer_latch *l, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_latch_wait(cuxfer_latch *l, long timeout_ms);
CUXFER_API cudaError_t cuxfer_latch_expect(cuxfer_latch *l, unsigned n);
CUXFER_API cudaError_t cuxfer_latch_destroy(cuxfer_latch *l);

/* man 3 cuxfer_on_done */
CUXFER_API cudaError_t cuxfer_on_done(cudaStream_t s, cudaStreamCallback_t fn, void *arg);

/* man 3 cuxfer_ring */
typedef struct cuxfer_ring cuxfer_ring;
typedef struct cuxfer_ring_slot cuxfer_ring_slot;
typedef struct cuxfer_ring_options cuxfer_ring_options;
typedef struct cuxfer_ring_job cuxfer_ring_job;
CUXFER_API cudaError_t cuxfer_ring_create(cuxfer_ring *r, int slots, size_t host_bytes,
                                          size_t device_bytes, const cuxfer_ring_options *opt);
CUXFER_API cudaError_t cuxfer_ring_acquire(cuxfer_ring *r, cuxfer_ring_slot **slot);
CUXFER_API cudaError_t cuxfer_ring_submit(cuxfer_ring *r, cuxfer_ring_slot *slot,
                                          const cuxfer_ring_job *job);
CUXFER_API cudaError_t cuxfer_ring_release(cuxfer_ring *r, cuxfer_ring_slot *slot);
CUXFER_API cudaError_t cuxfer_ring_drain(cuxfer_ring *r);
CUXFER_API cudaError_t cuxfer_ring_destroy(cuxfer_ring *r);
CUXFER_API int cuxfer_ring_slots(const cuxfer_ring *r);
CUXFER_API int cuxfer_ring_depth(const cuxfer_ring *r);
CUXFER_API cudaError_t cuxfer_ring_set_depth(cuxfer_ring *r, int depth);
CUXFER_API cudaError_t cuxfer_ring_stream(const cuxfer_ring *r, int i, cudaStream_t *s);
CUXFER_API cudaError_t cuxfer_ring_slot_ms(const cuxfer_ring_slot *slot, int wait, float *ms);
CUXFER_API cudaError_t cuxfer_ring_slot_buffers(const cuxfer_ring *r, int i, void **host,
                                                void **device);
CUXFER_API cudaError_t cuxfer_ring_wait(cuxfer_ring *r, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_stream_wait_ring(cudaStream_t s, cuxfer_ring *r);

/* man 3 cuxfer_graph */
typedef struct cuxfer_graph cuxfer_graph;
CUXFER_API cudaError_t cuxfer_graph_begin(cudaStream_t s);
CUXFER_API cudaError_t cuxfer_graph_end(cuxfer_graph *g, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_graph_launch(const cuxfer_graph *g, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_graph_destroy(cuxfer_graph *g);

/* man 3 cuxfer_pinned_pool; also CUXFER_POOL_IDLE */
typedef struct cuxfer_pinned_pool cuxfer_pinned_pool;
typedef struct cuxfer_pinned_block cuxfer_pinned_block;
typedef struct cuxfer_pinned_pool_options cuxfer_pinned_pool_options;
typedef struct cuxfer_pinned_pool_stats cuxfer_pinned_pool_stats;
CUXFER_API cudaError_t cuxfer_pinned_pool_create(cuxfer_pinned_pool *p,
                                                 const cuxfer_pinned_pool_options *opt);
CUXFER_API cudaError_t cuxfer_pinned_pool_acquire(cuxfer_pinned_pool *p, size_t bytes,
                                                  cuxfer_pinned_block *blk);
CUXFER_API cudaError_t cuxfer_pinned_pool_release(cuxfer_pinned_pool *p, cuxfer_pinned_block *blk,
                                                  cudaStream_t in_use_by);
CUXFER_API cudaError_t cuxfer_pinned_pool_trim(cuxfer_pinned_pool *p);
CUXFER_API cuxfer_pinned_pool_stats cuxfer_pinned_pool_get_stats(cuxfer_pinned_pool *p);
CUXFER_API size_t cuxfer_pinned_pool_class_size(size_t n);
CUXFER_API cudaError_t cuxfer_pinned_pool_destroy(cuxfer_pinned_pool *p);

/* man 3 cuxfer_plan2d; also CUXFER_PLAN_AUTO, CUXFER_PLAN_DIRECT, CUXFER_PLAN_SPAN,
 * CUXFER_PLAN_PACK, CUXFER_PLAN_MAX_THREADS */
typedef struct cuxfer_plan2d cuxfer_plan2d;
typedef struct cuxfer_plan2d_options cuxfer_plan2d_options;
typedef struct cuxfer_plan2d_tuning cuxfer_plan2d_tuning;
CUXFER_API cudaError_t cuxfer_plan2d_create(cuxfer_plan2d *p, const cuxfer_plan2d_options *opt);
CUXFER_API cudaError_t cuxfer_plan2d_copy_async(cuxfer_plan2d *p, const cuxfer_view *dst,
                                                const cuxfer_view *src, cudaStream_t s);
CUXFER_API int cuxfer_plan2d_choose(const cuxfer_plan2d *p, const cuxfer_view *dst,
                                    const cuxfer_view *src);
CUXFER_API cuxfer_plan2d_tuning cuxfer_plan2d_default_tuning(void);
CUXFER_API cudaError_t cuxfer_plan2d_calibrate(cuxfer_plan2d *p, cudaStream_t s,
                                               cuxfer_plan2d_tuning *out,
                                               void (*report)(size_t row, int d2h, double raw,
                                                              double planned, void *arg),
                                               void *arg);
CUXFER_API cudaError_t cuxfer_plan2d_destroy(cuxfer_plan2d *p);

/* man 3 cuxfer_rois; also CUXFER_ROIS_AUTO, CUXFER_ROIS_DIRECT, CUXFER_ROIS_GATHER,
 * CUXFER_ROIS_KERNEL, CUXFER_ROIS_H2D, CUXFER_ROIS_D2H, CUXFER_ROIS_SLOTS,
 * CUXFER_ROIS_MAX_THREADS */
typedef struct cuxfer_rois cuxfer_rois;
typedef struct cuxfer_rois_options cuxfer_rois_options;
CUXFER_API cudaError_t cuxfer_rois_create(cuxfer_rois *p, const cuxfer_rois_options *opt);
CUXFER_API cudaError_t cuxfer_rois_copy_async(cuxfer_rois *p, int dir, const cuxfer_view *host,
                                              const cuxfer_roi *rois, size_t n,
                                              const cuxfer_view *dense, cudaStream_t s);
CUXFER_API cudaError_t cuxfer_rois_check(int dir, const cuxfer_view *host, const cuxfer_roi *rois,
                                         size_t n, const cuxfer_view *dense, size_t *total);
CUXFER_API int cuxfer_rois_choose(const cuxfer_rois *p, size_t n, size_t total);
CUXFER_API cudaError_t cuxfer_rois_offsets(const cuxfer_roi *rois, size_t n, size_t elem_size,
                                           size_t *off);
CUXFER_API cudaError_t cuxfer_rois_destroy(cuxfer_rois *p);

/* man 3 cuxfer_stager; also CUXFER_STAGE_AUTO, CUXFER_STAGE_COPY, CUXFER_STAGE_REGISTER,
 * CUXFER_STAGE_DIRECT, CUXFER_STAGER_MAX_SLOTS, CUXFER_STAGER_MAX_THREADS,
 * CUXFER_STAGER_MIN_SLOT_BYTES, CUXFER_STAGER_MAX_SLOT_BYTES */
typedef struct cuxfer_stager cuxfer_stager;
typedef struct cuxfer_stager_options cuxfer_stager_options;
CUXFER_API cudaError_t cuxfer_stager_create(cuxfer_stager *st, const cuxfer_stager_options *opt);
CUXFER_API cudaError_t cuxfer_stager_destroy(cuxfer_stager *st);
CUXFER_API cudaError_t cuxfer_stage_h2d(cuxfer_stager *st, void *dst_device,
                                        const void *src_pageable, size_t bytes, cudaStream_t after);
CUXFER_API cudaError_t cuxfer_stage_d2h(cuxfer_stager *st, void *dst_pageable,
                                        const void *src_device, size_t bytes, cudaStream_t after);
CUXFER_API cudaError_t cuxfer_stager_wait(cuxfer_stager *st, long timeout_ms);
CUXFER_API cudaError_t cuxfer_stager_query(cuxfer_stager *st);
CUXFER_API cudaError_t cuxfer_stager_options_resolve(cuxfer_stager_options *out,
                                                     const cuxfer_stager_options *opt);

/* (end of the API) */

/* ------------------------------------------------------------------------
 * Process-wide state: everything cuxfer keeps between calls
 * ------------------------------------------------------------------------
 * One struct cuxfer_impl_state per process (cuxfer_impl_state_get) and one
 * struct cuxfer_impl_thread per thread (cuxfer_impl_thread_get); nothing
 * else outlives a call, and no setting changes their layout.  Why, and how
 * every copy of the header finds the same state: doc/DESIGN.md, section 3. */
#define CUXFER_IMPL_MAX_DEVICES 64
#define CUXFER_IMPL_KCACHE 8
#define CUXFER_IMPL_KCACHE_USES 256u
#define CUXFER_IMPL_REG_MAX 4096
#define CUXFER_IMPL_STATE_LAYOUT 0x43580001u /* "CX", layout 1 */

/* A classified range [lo, hi) of the registry or a thread's cache. */
struct cuxfer_impl_range {
    uintptr_t lo, hi;
    int kind, dev;    /* cuxfer_memkind; owning device or -1 */
    int queried;      /* learned from a query of one pointer: expires */
};

/* A thread's cache of recent classifications (section 3). */
struct cuxfer_impl_tcache {
    struct cuxfer_impl_range r[CUXFER_IMPL_KCACHE];
    unsigned uses[CUXFER_IMPL_KCACHE];
    unsigned gen;     /* the state's kgen it was filled under */
    unsigned next;
};

/* What each thread keeps. */
struct cuxfer_impl_thread {
    /* Why this thread's last cuxfer call refused its arguments (section 2). */
    char reason[CUXFER_REASON_MAX];
    /* Recent classifications (section 3). */
    struct cuxfer_impl_tcache kcache;
};

/* What the process keeps. */
struct cuxfer_impl_state {
    unsigned layout;            /* CUXFER_IMPL_STATE_LAYOUT */
    unsigned size;              /* sizeof(struct cuxfer_impl_state) */
    pthread_key_t thread_key;   /* -> struct cuxfer_impl_thread */
    int fork_holds;             /* atfork prepare handlers run, not yet undone */
    /* Section 3: the registry of the ranges cuxfer allocated or pinned. */
    pthread_mutex_t reg_mu;
    unsigned reg_seq;
    int reg_n;
    struct cuxfer_impl_range reg[CUXFER_IMPL_REG_MAX];
    unsigned kgen;              /* bumped by every free: threads drop caches */
    /* Sections 3 and 6: CUXFER_PAGEABLE and CUXFER_DEFAULT_STREAM, parsed
     * once: 0 not yet, -1 unset or invalid, else CUXFER_PAGEABLE_*. */
    int env_policy;
    int env_stream_policy;
    /* Warned once: pageable source, pageable destination; legacy stream. */
    int warned[2];
    int warned_stream;
    /* Per-device capabilities, asked once: managed_cap 0 unknown, 1 yes, 2 no;
     * max_pitch 0 unknown; peer, per ordered pair, 0 not asked, 1 on, 2 never. */
    int managed_cap[CUXFER_IMPL_MAX_DEVICES];
    size_t max_pitch[CUXFER_IMPL_MAX_DEVICES];
    int peer[CUXFER_IMPL_MAX_DEVICES * CUXFER_IMPL_MAX_DEVICES];
};

/* This object's note and slot (doc/DESIGN.md, section 3). */
__asm__(".ifndef cuxfer_impl_slot_v1\n"
        ".pushsection .note.cuxfer,\"aG\",%note,cuxfer_impl_anchor_v1,comdat\n"
        ".balign 4\n"
        "cuxfer_impl_note_v1:\n"
        ".long 7\n"          /* namesz: "cuxfer" and its NUL */
        ".long 4\n"          /* descsz */
        ".long 0x43580001\n" /* type: CUXFER_IMPL_STATE_LAYOUT */
        ".asciz \"cuxfer\"\n"
        ".balign 4\n"
        ".long cuxfer_impl_slot_v1 - .\n"
        ".popsection\n"
        ".pushsection .data.cuxfer_impl_slot_v1,\"awG\",%progbits,cuxfer_impl_anchor_v1,comdat\n"
        ".balign 8\n"
        ".weak cuxfer_impl_slot_v1\n"
        ".hidden cuxfer_impl_slot_v1\n"
        "cuxfer_impl_slot_v1:\n"
        ".zero 8\n"
        ".long cuxfer_impl_note_v1 - .\n"
        ".popsection\n"
        ".endif\n");
extern __attribute__((visibility("hidden"))) struct cuxfer_impl_state *cuxfer_impl_slot_v1;

/* This unit's copy of the answer, so that only the first call searches. */
static struct cuxfer_impl_state *cuxfer_impl_state_seen CUXFER_IMPL_UNUSED;

/* dl_iterate_phdr, declared under a name of our own: <link.h> declares it
 * only under _GNU_SOURCE.  The struct is the leading, stable part of
 * struct dl_phdr_info. */
struct cuxfer_impl_phdr_info {
    ElfW(Addr) dlpi_addr;
    const char *dlpi_name;
    const ElfW(Phdr) *dlpi_phdr;
    ElfW(Half) dlpi_phnum;
};
extern int cuxfer_impl_dl_iterate_phdr(int (*cb)(struct cuxfer_impl_phdr_info *, size_t, void *),
                                       void *data) __asm__("dl_iterate_phdr");

/* The search's finds: the first object's slot, the first slot with a state. */
struct cuxfer_impl_search {
    struct cuxfer_impl_state **first;
    struct cuxfer_impl_state *found;
};

/* dl_iterate_phdr callback: one object's notes; 1 at a slot with a state. */
CUXFER_API int cuxfer_impl_find_slot(struct cuxfer_impl_phdr_info *info, size_t size, void *data)
{
    struct cuxfer_impl_search *q = (struct cuxfer_impl_search *)data;
    int i;
    (void)size;
    for (i = 0; i < (int)info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const unsigned char *p, *end;
        size_t align = ph->p_align == 8 ? 8 : 4;
        if (ph->p_type != PT_NOTE)
            continue;
        p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        end = p + ph->p_memsz;
        while ((size_t)(end - p) >= 12) {
            uint32_t namesz, descsz, type;
            const unsigned char *name = p + 12, *desc;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&type, p + 8, 4);
            desc = name + ((namesz + align - 1) & ~(align - 1));
            if (desc + descsz > end)
                break;
            if (type == CUXFER_IMPL_STATE_LAYOUT && namesz == 7 && descsz == 4 &&
                memcmp(name, "cuxfer", 7) == 0) {
                int32_t off;
                struct cuxfer_impl_state **slot;
                memcpy(&off, desc, 4);
                slot = (struct cuxfer_impl_state **)(uintptr_t)(desc + off);
                if (!q->first)
                    q->first = slot;
                q->found = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
                return q->found != NULL;
            }
            p = desc + ((descsz + align - 1) & ~(align - 1));
        }
    }
    return 0;
}

CUXFER_API void cuxfer_impl_atfork_prepare(void);
CUXFER_API void cuxfer_impl_atfork_parent(void);
CUXFER_API void cuxfer_impl_atfork_child(void);

/* Find the process's state, making it on the process's first call. */
CUXFER_API struct cuxfer_impl_state *cuxfer_impl_state_find(void)
{
    struct cuxfer_impl_search q = {NULL, NULL};
    struct cuxfer_impl_state *s, *mine, *none = NULL;
    (void)cuxfer_impl_dl_iterate_phdr(cuxfer_impl_find_slot, &q);
    if (!q.first) /* no note seen (not expected): this object's own slot */
        q.first = &cuxfer_impl_slot_v1;
    s = q.found;
    if (!s) {
        mine = (struct cuxfer_impl_state *)calloc(1, sizeof *mine);
        if (!mine || pthread_key_create(&mine->thread_key, free) != 0) {
            CUXFER_LOG("cuxfer: fatal: cannot allocate the process-wide state\n");
            abort();
        }
        mine->layout = CUXFER_IMPL_STATE_LAYOUT;
        mine->size = (unsigned)sizeof *mine;
        (void)pthread_mutex_init(&mine->reg_mu, NULL);
        if (__atomic_compare_exchange_n(q.first, &s, mine, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            s = mine;
        } else { /* another thread won: use its state */
            (void)pthread_key_delete(mine->thread_key);
            (void)pthread_mutex_destroy(&mine->reg_mu);
            free(mine);
        }
    }
    if (s->layout != CUXFER_IMPL_STATE_LAYOUT || s->size != sizeof *s) {
        CUXFER_LOG("cuxfer: fatal: two layouts of the process-wide state\n");
        abort();
    }
    (void)__atomic_compare_exchange_n(&cuxfer_impl_slot_v1, &none, s, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE);
    /* Each unit registers its own handlers, so that unloading one object
     * (dlclose drops its handlers) leaves the others'; the handlers count,
     * so the lock is taken once per fork however many ran. */
    (void)pthread_atfork(cuxfer_impl_atfork_prepare, cuxfer_impl_atfork_parent,
                         cuxfer_impl_atfork_child);
    __atomic_store_n(&cuxfer_impl_state_seen, s, __ATOMIC_RELEASE);
    return s;
}

/* The process-wide state. */
CUXFER_API struct cuxfer_impl_state *cuxfer_impl_state_get(void)
{
    struct cuxfer_impl_state *s = __atomic_load_n(&cuxfer_impl_state_seen, __ATOMIC_ACQUIRE);
    return CUXFER_IMPL_UNLIKELY(!s) ? cuxfer_impl_state_find() : s;
}

/* The calling thread's block; should calloc fail, a shared static one. */
CUXFER_API struct cuxfer_impl_thread *cuxfer_impl_thread_get(void)
{
    static struct cuxfer_impl_thread cuxfer_impl_thread_oom;
    struct cuxfer_impl_state *s = cuxfer_impl_state_get();
    struct cuxfer_impl_thread *t =
        (struct cuxfer_impl_thread *)pthread_getspecific(s->thread_key);
    if (CUXFER_IMPL_UNLIKELY(!t)) {
        t = (struct cuxfer_impl_thread *)calloc(1, sizeof *t);
        if (!t || pthread_setspecific(s->thread_key, t) != 0) {
            free(t);
            t = &cuxfer_impl_thread_oom;
        }
    }
    return t;
}

/* fork (doc/DESIGN.md, section 3): the first prepare handler takes the
 * registry's writer lock, so no writer is half-way when the process is
 * copied; the last parent or child handler drops or remakes it. */
CUXFER_API void cuxfer_impl_atfork_prepare(void)
{
    struct cuxfer_impl_state *s = cuxfer_impl_state_get();
    if (__atomic_fetch_add(&s->fork_holds, 1, __ATOMIC_ACQ_REL) == 0)
        (void)pthread_mutex_lock(&s->reg_mu);
}

CUXFER_API void cuxfer_impl_atfork_parent(void)
{
    struct cuxfer_impl_state *s = cuxfer_impl_state_get();
    if (__atomic_sub_fetch(&s->fork_holds, 1, __ATOMIC_ACQ_REL) == 0)
        (void)pthread_mutex_unlock(&s->reg_mu);
}

CUXFER_API void cuxfer_impl_atfork_child(void)
{
    struct cuxfer_impl_state *s = cuxfer_impl_state_get();
    if (__atomic_sub_fetch(&s->fork_holds, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    (void)pthread_mutex_init(&s->reg_mu, NULL);
    s->reg_seq = 0;
    s->reg_n = 0;
    s->kgen++;
    memset(s->managed_cap, 0, sizeof s->managed_cap);
    memset(s->max_pitch, 0, sizeof s->max_pitch);
    memset(s->peer, 0, sizeof s->peer);
}

/* ------------------------------------------------------------------------
 * 2. Errors: CUXFER_CHECK / CUXFER_TRY, the reason text, device probing
 * ------------------------------------------------------------------------ */

/* This thread's last reason, or "": like errno, kept by successful calls. */
CUXFER_API const char *cuxfer_last_reason(void) { return cuxfer_impl_thread_get()->reason; }

/* Forget this thread's reason (CUXFER_CHECK does so before each call). */
CUXFER_API void cuxfer_clear_reason(void) { cuxfer_impl_thread_get()->reason[0] = '\0'; }

/* Record a reason and return err, so validators "return cuxfer_impl_fail(...)". */
CUXFER_API cudaError_t cuxfer_impl_vfail(cudaError_t err, const char *fmt, va_list ap)
{
    char *r = cuxfer_impl_thread_get()->reason;
    if (vsnprintf(r, CUXFER_REASON_MAX, fmt, ap) >= CUXFER_REASON_MAX) /* cut: say so */
        memcpy(r + CUXFER_REASON_MAX - 4, "...", 4);
    return err;
}

CUXFER_API CUXFER_IMPL_PRINTF(2, 3) cudaError_t
    cuxfer_impl_fail(cudaError_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err = cuxfer_impl_vfail(err, fmt, ap);
    va_end(ap);
    return err;
}

/* A CUDA call failed with err: clear the runtime's error, fail as above. */
CUXFER_API CUXFER_IMPL_PRINTF(2, 3) cudaError_t
    cuxfer_impl_fail_cuda(cudaError_t err, const char *fmt, ...)
{
    va_list ap;
    (void)cudaGetLastError();
    va_start(ap, fmt);
    err = cuxfer_impl_vfail(err, fmt, ap);
    va_end(ap);
    return err;
}

/* The report CUXFER_CHECK prints (man 3 cuxfer_check). */
CUXFER_API void cuxfer_impl_report(cudaError_t err, const char *expr,
                                   const char *file, int line,
                                   const char *func)
{
    const char *r = cuxfer_impl_thread_get()->reason;
    CUXFER_LOG("%s:%d: %s: %s failed: %s: %s%s%s\n", file, line, func, expr,
               cudaGetErrorName(err), cudaGetErrorString(err), r[0] ? ": " : "", r);
}

/* CUXFER_CHECK, CUXFER_TRY, CUXFER_CHECK_LAUNCH: man 3 cuxfer_check. */
#define CUXFER_CHECK(expr)                                                     \
    do {                                                                       \
        cudaError_t cuxfer_impl_err_;                                          \
        cuxfer_clear_reason();                                                 \
        cuxfer_impl_err_ = (expr);                                             \
        if (CUXFER_IMPL_UNLIKELY(cuxfer_impl_err_ != cudaSuccess)) {           \
            cuxfer_impl_report(cuxfer_impl_err_, #expr, __FILE__, __LINE__,    \
                               __func__);                                      \
            CUXFER_ON_ERROR(cuxfer_impl_err_);                                 \
        }                                                                      \
    } while (0)

#define CUXFER_TRY(expr)                                                       \
    do {                                                                       \
        cudaError_t cuxfer_impl_err_ = (expr);                                 \
        if (CUXFER_IMPL_UNLIKELY(cuxfer_impl_err_ != cudaSuccess))             \
            return cuxfer_impl_err_;                                           \
    } while (0)

#ifdef CUXFER_DEBUG_SYNC
#define CUXFER_CHECK_LAUNCH()                                                  \
    do {                                                                       \
        CUXFER_CHECK(cudaGetLastError());                                      \
        CUXFER_CHECK(cudaDeviceSynchronize());                                 \
    } while (0)
#else
#define CUXFER_CHECK_LAUNCH() CUXFER_CHECK(cudaGetLastError())
#endif

/* The end of every call that queues cuxfer's own work on s: with
 * CUXFER_DEBUG_SYNC that work's failure is reported by the call. */
CUXFER_API cudaError_t cuxfer_impl_debug_sync(cudaError_t err, cudaStream_t s)
{
#ifdef CUXFER_DEBUG_SYNC
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
#else
    (void)s;
#endif
    return err;
}

/* Count the CUDA devices, saying why there are none (man 3 cuxfer_check). */
CUXFER_API cudaError_t cuxfer_device_count(int *count)
{
    int n = 0, drv = 0;
    cudaError_t err;
    if (!count)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_device_count: count is NULL");
    *count = 0;
    err = cudaGetDeviceCount(&n);
    (void)cudaGetLastError();
    switch (err) {
    case cudaSuccess:
        if (n > 0) {
            *count = n;
            return cudaSuccess;
        }
        return cuxfer_impl_fail(cudaErrorNoDevice,
                                "the CUDA driver reports no device");
    case cudaErrorInsufficientDriver:
        (void)cudaDriverGetVersion(&drv);
        (void)cudaGetLastError();
        if (drv == 0)
            return cuxfer_impl_fail(
                err, "no CUDA driver is installed (cudaErrorInsufficientDriver)");
        return cuxfer_impl_fail(err,
                                "the CUDA driver (%d) is older than the runtime "
                                "(%d) (cudaErrorInsufficientDriver)",
                                drv, CUDART_VERSION);
    case cudaErrorStubLibrary:
        return cuxfer_impl_fail(err,
                                "only the CUDA toolkit's stub libcuda.so was "
                                "found, no real driver (cudaErrorStubLibrary)");
    case cudaErrorNoDevice:
        return cuxfer_impl_fail(err, "no CUDA-capable device (cudaErrorNoDevice)");
    default:
        return cuxfer_impl_fail(err, "cudaGetDeviceCount failed: %s (%s)",
                                cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

/* The device the calling thread uses, or -1 when there is none. */
CUXFER_API int cuxfer_impl_current_device(void)
{
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return d;
}

/* Make dev current, querying the device once; *saved is the device to
 * restore, -1 when nothing was switched (restore_device then asks nothing). */
CUXFER_API cudaError_t cuxfer_impl_use_device(int dev, int *saved)
{
    int cur = cuxfer_impl_current_device();
    *saved = -1;
    if (dev < 0 || dev == cur)
        return cudaSuccess;
    *saved = cur;
    return cudaSetDevice(dev);
}

CUXFER_API void cuxfer_impl_restore_device(int saved)
{
    if (saved >= 0 && saved != cuxfer_impl_current_device())
        (void)cudaSetDevice(saved);
}

/* Capture safety (doc/DESIGN.md, section 5).  INVALIDATED is a failed
 * capture still to be ended, treated as capturing; UNUSABLE a failed query
 * with its error (most often cudaErrorStreamCaptureImplicit). */
enum {
    CUXFER_IMPL_STREAM_UNUSABLE = -1,
    CUXFER_IMPL_STREAM_UNCAPTURED = 0,
    CUXFER_IMPL_STREAM_CAPTURING = 1,
    CUXFER_IMPL_STREAM_INVALIDATED = 2
};

/* The state of s, *err the query's error; safe in every capture mode. */
CUXFER_API int cuxfer_impl_stream_state(cudaStream_t s, cudaError_t *err)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    *err = cudaStreamIsCapturing(s, &st);
    if (*err != cudaSuccess) {
        (void)cudaGetLastError();
        return CUXFER_IMPL_STREAM_UNUSABLE;
    }
    return st == cudaStreamCaptureStatusNone     ? CUXFER_IMPL_STREAM_UNCAPTURED
           : st == cudaStreamCaptureStatusActive ? CUXFER_IMPL_STREAM_CAPTURING
                                                 : CUXFER_IMPL_STREAM_INVALIDATED;
}

/* The state of s in *cap, refusing UNUSABLE ("CALL: WHAT %p cannot be used now"). */
CUXFER_API cudaError_t cuxfer_impl_stream_usable(const char *call, const char *what,
                                                 cudaStream_t s, int *cap)
{
    cudaError_t err;
    *cap = cuxfer_impl_stream_state(s, &err);
    if (*cap < 0)
        return cuxfer_impl_fail(err, "%s: %s %p cannot be used now: %s", call, what, (void *)s,
                                cudaGetErrorName(err));
    return cudaSuccess;
}

/* Stepping outside the capture mode: while any thread captures in Global
 * mode, an "unsafe" call (queries, allocations) from a thread not in
 * Relaxed mode invalidates that capture.  cuxfer's bookkeeping touches no
 * captured stream, so it runs Relaxed; never work queued on a stream that
 * may be capturing (doc/DESIGN.md, section 5). */
typedef struct cuxfer_impl_relax {
    enum cudaStreamCaptureMode mode;
    int switched;
} cuxfer_impl_relax;

/* Switch the calling thread to capture mode `mode`: the header's one exchange. */
CUXFER_API cuxfer_impl_relax cuxfer_impl_relax_to(enum cudaStreamCaptureMode mode)
{
    cuxfer_impl_relax r;
    r.mode = mode;
    r.switched = cudaThreadExchangeStreamCaptureMode(&r.mode) == cudaSuccess;
    if (!r.switched)
        (void)cudaGetLastError();
    return r;
}

CUXFER_API cuxfer_impl_relax cuxfer_impl_relax_begin(void)
{
    return cuxfer_impl_relax_to(cudaStreamCaptureModeRelaxed);
}

CUXFER_API void cuxfer_impl_relax_end(cuxfer_impl_relax r)
{
    if (r.switched)
        (void)cuxfer_impl_relax_to(r.mode);
}

/* cuxfer_impl_relax_end, passing err through.  A Relaxed call reads
 * "rx = cuxfer_impl_relax_begin(); err = cuxfer_impl_relax_done(rx, cudaX(...));":
 * cudaX, an argument, runs before the mode is restored. */
CUXFER_API cudaError_t cuxfer_impl_relax_done(cuxfer_impl_relax r, cudaError_t err)
{
    cuxfer_impl_relax_end(r);
    return err;
}

/* Waits and queries on cuxfer's own events and streams (or a caller's
 * event of no capture), in Relaxed mode: never part of a graph. */
CUXFER_API cudaError_t cuxfer_impl_event_query(cudaEvent_t e)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaEventQuery(e));
}

CUXFER_API cudaError_t cuxfer_impl_event_sync(cudaEvent_t e)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaEventSynchronize(e));
}

CUXFER_API cudaError_t cuxfer_impl_stream_sync(cudaStream_t s)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaStreamSynchronize(s));
}

/* Allocation and creation of cuxfer's own objects, Relaxed for the same reason. */
CUXFER_API cudaError_t cuxfer_impl_dmalloc(void **p, size_t bytes)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaMalloc(p, bytes));
}

CUXFER_API cudaError_t cuxfer_impl_dfree(void *p)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaFree(p));
}

CUXFER_API cudaError_t cuxfer_impl_event_create(cudaEvent_t *e, unsigned flags)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaEventCreateWithFlags(e, flags));
}

CUXFER_API cudaError_t cuxfer_impl_stream_create(cudaStream_t *s, unsigned flags, int prio)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    return cuxfer_impl_relax_done(rx, cudaStreamCreateWithPriority(s, flags, prio));
}

/* Teardown: destroy what was made, skip what was not (never stream 0). */
CUXFER_API cudaError_t cuxfer_impl_event_drop(cudaEvent_t e)
{
    return e ? cudaEventDestroy(e) : cudaSuccess;
}

CUXFER_API cudaError_t cuxfer_impl_stream_drop(cudaStream_t s)
{
    return s ? cudaStreamDestroy(s) : cudaSuccess;
}

/* Teardown keeps its first error: err into *first unless one is there. */
CUXFER_API void cuxfer_impl_keep(cudaError_t *first, cudaError_t err)
{
    if (err != cudaSuccess && *first == cudaSuccess)
        *first = err;
}

/* 0, cudaStreamLegacy, cudaStreamPerThread: each names a stream per thread or unit. */
CUXFER_API int cuxfer_impl_is_default_stream(cudaStream_t s)
{
    return !s || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* The ID of s (CUDA 12.0+), which no other stream of the process gets, as a
 * destroyed stream's handle may be; 0 where there is none (before 12.0). */
CUXFER_API unsigned long long cuxfer_impl_stream_id(cudaStream_t s)
{
    unsigned long long id = 0;
#if CUDART_VERSION >= 12000
    if (cudaStreamGetId(s, &id) != cudaSuccess) {
        (void)cudaGetLastError();
        id = 0;
    }
#else
    (void)s;
#endif
    return id;
}

/* The device of s (12.8+), else the current device; -1 when there is none. */
CUXFER_API int cuxfer_impl_stream_device(cudaStream_t s)
{
#if CUDART_VERSION >= 12080
    int dev = -1;
    cudaError_t err;
    /* cudaStreamGetDevice invalidates a capture in every mode (doc/PERF.md,
     * "CUDA behaviour measured"): a capturing stream, as a default one, is
     * taken to be the current device's. */
    if (cuxfer_impl_is_default_stream(s) ||
        cuxfer_impl_stream_state(s, &err) != CUXFER_IMPL_STREAM_UNCAPTURED)
        return cuxfer_impl_current_device();
    err = cudaStreamGetDevice(s, &dev);
    if (err == cudaSuccess && dev >= 0)
        return dev;
    (void)cudaGetLastError();
#else
    (void)s;
#endif
    return cuxfer_impl_current_device();
}

/* Overflow-checked multiply: 0 and *out set on success, -1 on overflow. */
CUXFER_API int cuxfer_impl_mul(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0; /* no division */
}

/* Overflow-checked add. */
CUXFER_API int cuxfer_impl_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a)
        return -1;
    *out = a + b;
    return 0;
}

/* ------------------------------------------------------------------------
 * 3. Memory kinds and the pageable guard
 * ------------------------------------------------------------------------ */

/* A word for each kind, for messages. */
CUXFER_API const char *cuxfer_memkind_name(cuxfer_memkind k)
{
    switch (k) {
    case CUXFER_MEMORY_PAGEABLE: return "pageable host";
    case CUXFER_MEMORY_PINNED: return "pinned host";
    case CUXFER_MEMORY_DEVICE: return "device";
    case CUXFER_MEMORY_MANAGED: return "managed";
    default: return "unknown";
    }
}

/* Classify p with cudaPointerGetAttributes (zeroed: CUDA 13 added fields);
 * before CUDA 11 cudaErrorInvalidValue meant pageable. */
CUXFER_API cuxfer_memkind cuxfer_impl_classify(const void *p, int *device)
{
    struct cudaPointerAttributes a;
    cudaError_t err;
    cuxfer_impl_relax rx;
    memset(&a, 0, sizeof a);
    if (device)
        *device = -1;
    rx = cuxfer_impl_relax_begin(); /* a query: must not break a capture */
    err = cuxfer_impl_relax_done(rx, cudaPointerGetAttributes(&a, p));
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return err == cudaErrorInvalidValue && p ? CUXFER_MEMORY_PAGEABLE
                                                 : CUXFER_MEMORY_UNKNOWN;
    }
    if (device && (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged))
        *device = a.device;
    switch (a.type) {
    case cudaMemoryTypeUnregistered: return CUXFER_MEMORY_PAGEABLE;
    case cudaMemoryTypeHost: return CUXFER_MEMORY_PINNED;
    case cudaMemoryTypeDevice: return CUXFER_MEMORY_DEVICE;
    case cudaMemoryTypeManaged: return CUXFER_MEMORY_MANAGED;
    default: return CUXFER_MEMORY_UNKNOWN;
    }
}

/* Classification for the copy functions, cheap (a pointer query costs more
 * than a checked copy's budget): the thread's cache, then the registry of
 * what cuxfer allocated or pinned (bounded: when full, copies fall back to
 * queries), then the driver (doc/DESIGN.md, section 9). */

/* Forget every thread's cached classifications (after a free). */
CUXFER_API void cuxfer_impl_kcache_flush(void)
{
    __atomic_add_fetch(&cuxfer_impl_state_get()->kgen, 1u, __ATOMIC_ACQ_REL);
}

/* Writers bracket their change: odd while it is in progress.  Release and
 * acquire atomics, no fences (ThreadSanitizer does not model them): a
 * reader that sees a new field also sees the odd counter. */
CUXFER_API void cuxfer_impl_reg_write_begin(struct cuxfer_impl_state *st)
{
    __atomic_store_n(&st->reg_seq, st->reg_seq + 1u, __ATOMIC_RELAXED);
}

CUXFER_API void cuxfer_impl_reg_write_end(struct cuxfer_impl_state *st)
{
    __atomic_store_n(&st->reg_seq, st->reg_seq + 1u, __ATOMIC_RELEASE);
}

CUXFER_API void cuxfer_impl_reg_store(struct cuxfer_impl_range *dst,
                                      const struct cuxfer_impl_range *src)
{
    __atomic_store_n(&dst->lo, src->lo, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->hi, src->hi, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->kind, src->kind, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->dev, src->dev, __ATOMIC_RELEASE);
    __atomic_store_n(&dst->queried, src->queried, __ATOMIC_RELEASE);
}

CUXFER_API void cuxfer_impl_reg_add(const void *p, size_t bytes, cuxfer_memkind kind, int dev)
{
    struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    struct cuxfer_impl_range r = {(uintptr_t)p, (uintptr_t)p + bytes, (int)kind, dev, 0};
    if (!p || bytes == 0 || (uintptr_t)p > UINTPTR_MAX - bytes)
        return;
    pthread_mutex_lock(&st->reg_mu);
    if (st->reg_n < CUXFER_IMPL_REG_MAX) {
        cuxfer_impl_reg_write_begin(st);
        cuxfer_impl_reg_store(&st->reg[st->reg_n], &r);
        __atomic_store_n(&st->reg_n, st->reg_n + 1, __ATOMIC_RELEASE);
        cuxfer_impl_reg_write_end(st);
    }
    pthread_mutex_unlock(&st->reg_mu);
}

/* Drop the range starting at p (before it is freed) and every cached copy. */
CUXFER_API void cuxfer_impl_reg_remove(const void *p)
{
    struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    int i, n;
    pthread_mutex_lock(&st->reg_mu);
    n = st->reg_n;
    for (i = 0; i < n; ++i)
        if (st->reg[i].lo == (uintptr_t)p) {
            cuxfer_impl_reg_write_begin(st);
            cuxfer_impl_reg_store(&st->reg[i], &st->reg[n - 1]);
            __atomic_store_n(&st->reg_n, n - 1, __ATOMIC_RELEASE);
            cuxfer_impl_reg_write_end(st);
            break;
        }
    pthread_mutex_unlock(&st->reg_mu);
    cuxfer_impl_kcache_flush();
}

/* Scan the registry for a; lock-free: retried while a writer works. */
CUXFER_API int cuxfer_impl_reg_find(uintptr_t a, struct cuxfer_impl_range *out)
{
    const struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    unsigned s1, s2;
    int i, n, found;
    for (;;) {
        s1 = __atomic_load_n(&st->reg_seq, __ATOMIC_ACQUIRE);
        if (s1 & 1u) {
            sched_yield();
            continue;
        }
        found = 0;
        n = __atomic_load_n(&st->reg_n, __ATOMIC_ACQUIRE);
        for (i = 0; i < n && i < CUXFER_IMPL_REG_MAX; ++i) {
            const struct cuxfer_impl_range *r = &st->reg[i];
            uintptr_t lo = __atomic_load_n(&r->lo, __ATOMIC_ACQUIRE);
            uintptr_t hi = __atomic_load_n(&r->hi, __ATOMIC_ACQUIRE);
            if (a >= lo && a < hi) {
                out->lo = lo;
                out->hi = hi;
                out->kind = __atomic_load_n(&r->kind, __ATOMIC_ACQUIRE);
                out->dev = __atomic_load_n(&r->dev, __ATOMIC_ACQUIRE);
                out->queried = 0;
                found = 1;
                break;
            }
        }
        s2 = __atomic_load_n(&st->reg_seq, __ATOMIC_ACQUIRE);
        if (s1 == s2)
            return found;
    }
}

CUXFER_API void cuxfer_impl_kcache_put(const struct cuxfer_impl_range *r)
{
    struct cuxfer_impl_tcache *c = &cuxfer_impl_thread_get()->kcache;
    unsigned i = c->next++ % CUXFER_IMPL_KCACHE;
    c->r[i] = *r;
    c->uses[i] = 0;
}

/* What this thread's cache or the registry know of p, asking no driver. */
CUXFER_API cuxfer_memkind cuxfer_impl_lookup(const void *p, int *device)
{
    const struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    struct cuxfer_impl_tcache *c = &cuxfer_impl_thread_get()->kcache;
    unsigned gen = __atomic_load_n(&st->kgen, __ATOMIC_ACQUIRE);
    uintptr_t a = (uintptr_t)p;
    struct cuxfer_impl_range found;
    int i;
    if (CUXFER_IMPL_UNLIKELY(c->gen != gen)) {
        memset(c->r, 0, sizeof c->r);
        c->gen = gen;
    }
    for (i = 0; i < CUXFER_IMPL_KCACHE; ++i) {
        struct cuxfer_impl_range *r = &c->r[i];
        if (a >= r->lo && a < r->hi) {
            if (r->queried && ++c->uses[i] > CUXFER_IMPL_KCACHE_USES) {
                r->lo = r->hi = 0; /* ask the driver again */
                break;
            }
            if (device)
                *device = r->dev;
            return (cuxfer_memkind)r->kind;
        }
    }
    if (__atomic_load_n(&st->reg_n, __ATOMIC_ACQUIRE) == 0)
        return CUXFER_MEMORY_UNKNOWN;
    if (cuxfer_impl_reg_find(a, &found)) {
        cuxfer_impl_kcache_put(&found);
        if (device)
            *device = found.dev;
        return (cuxfer_memkind)found.kind;
    }
    return CUXFER_MEMORY_UNKNOWN;
}

/* cuxfer_impl_lookup, else one pointer query whose non-pageable answer is
 * cached for at most CUXFER_IMPL_KCACHE_USES lookups.  It feeds the guard,
 * the view-kind check and the devices whose peer access a copy enables
 * (copies use cudaMemcpyDefault, and a peer copy stages through the host
 * without it), so memory freed behind cuxfer's back never makes a copy
 * wrong: at worst a pair of devices gets peer access it did not need. */
CUXFER_API cuxfer_memkind cuxfer_impl_classify_cached(const void *p, int *device)
{
    int dev = -1;
    cuxfer_memkind k = cuxfer_impl_lookup(p, device);
    if (k != CUXFER_MEMORY_UNKNOWN || !p)
        return k;
    k = cuxfer_impl_classify(p, &dev);
    if (device)
        *device = dev;
    if (k == CUXFER_MEMORY_PINNED || k == CUXFER_MEMORY_DEVICE || k == CUXFER_MEMORY_MANAGED) {
        struct cuxfer_impl_range r = {(uintptr_t)p, (uintptr_t)p + 1, (int)k, dev, 1};
        cuxfer_impl_kcache_put(&r);
    }
    return k;
}

/* Where p's memory lives (one cudaPointerGetAttributes). */
CUXFER_API cuxfer_memkind cuxfer_memory_kind(const void *p)
{
    return cuxfer_impl_classify(p, NULL);
}

/* 1 when p is page-locked host memory (cudaHostAlloc/cudaHostRegister). */
CUXFER_API int cuxfer_host_is_pinned(const void *p)
{
    return cuxfer_impl_classify(p, NULL) == CUXFER_MEMORY_PINNED;
}

/* "allow" / "warn" / "error" (any case) to a policy; 0 for anything else. */
CUXFER_API int cuxfer_pageable_policy_parse(const char *s)
{
    static const char *const names[] = {"allow", "warn", "error"};
    size_t i, j;
    if (!s)
        return 0;
    for (i = 0; i < 3; ++i) {
        for (j = 0; names[i][j]; ++j) {
            char c = s[j];
            if (c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            if (c != names[i][j])
                break;
        }
        if (!names[i][j] && !s[j])
            return (int)i + 1;
    }
    return 0;
}

/* A policy from the environment variable `var`, parsed once into *cache. */
CUXFER_API int cuxfer_impl_env_policy_get(int *cache, const char *var)
{
    int p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (CUXFER_IMPL_UNLIKELY(p == 0)) {
        const char *s = getenv(var);
        p = s ? cuxfer_pageable_policy_parse(s) : -1;
        if (p == 0) {
            p = -1;
            if (__atomic_exchange_n(cache, -1, __ATOMIC_ACQ_REL) == 0)
                CUXFER_LOG("cuxfer: warning: %s=%s is not one of allow, warn, error; "
                           "using the default\n", var, s);
        }
        __atomic_store_n(cache, p, __ATOMIC_RELEASE);
    }
    return p;
}

/* The calling unit's pageable policy (man 3 cuxfer_memory_kind). */
CUXFER_API int cuxfer_pageable_policy(void)
{
    int p = cuxfer_impl_env_policy_get(&cuxfer_impl_state_get()->env_policy, "CUXFER_PAGEABLE");
    return p > 0 ? p : CUXFER_PAGEABLE_POLICY;
}

/* The pageable guard: a pageable host side facing device or managed
 * memory is the misuse (doc/DESIGN.md, section 9). */
CUXFER_API cudaError_t cuxfer_impl_guard(const char *call,
                                         cuxfer_memkind dst_kind,
                                         cuxfer_memkind src_kind, int policy)
{
    int side, dev_dst, dev_src;
    dev_dst = dst_kind == CUXFER_MEMORY_DEVICE || dst_kind == CUXFER_MEMORY_MANAGED;
    dev_src = src_kind == CUXFER_MEMORY_DEVICE || src_kind == CUXFER_MEMORY_MANAGED;
    if (src_kind == CUXFER_MEMORY_PAGEABLE && dev_dst)
        side = 0;
    else if (dst_kind == CUXFER_MEMORY_PAGEABLE && dev_src)
        side = 1;
    else
        return cudaSuccess;
    if (policy == CUXFER_PAGEABLE_ALLOW)
        return cudaSuccess;
    if (policy == CUXFER_PAGEABLE_ERROR)
        return cuxfer_impl_fail(
            cudaErrorInvalidValue,
            "%s: the %s is pageable host memory, so the copy would not be "
            "asynchronous; pin it (cuxfer_host_alloc, cuxfer_host_register) "
            "or set CUXFER_PAGEABLE=allow",
            call, side == 0 ? "source" : "destination");
    if (__atomic_exchange_n(&cuxfer_impl_state_get()->warned[side], 1, __ATOMIC_ACQ_REL) == 0)
        CUXFER_LOG("cuxfer: warning: %s: the %s is pageable host memory: the "
                   "copy blocks the caller and runs at a fraction of the link; "
                   "pin it (cuxfer_host_alloc, cuxfer_host_register) "
                   "(CUXFER_PAGEABLE=allow|warn|error; shown once)\n",
                   call, side == 0 ? "source" : "destination");
    return cudaSuccess;
}

/* ------------------------------------------------------------------------
 * 4. Geometry: views and ROIs (pure CPU arithmetic, no CUDA call)
 * ------------------------------------------------------------------------ */

/* The largest element: 64 bytes covers float4x4, double4x2, RGBA64... */
#define CUXFER_ELEM_MAX 64
/* cuxfer_view.flags: what cuxfer_view_free releases. */
#define CUXFER_VIEW_OWNS_DEVICE 1u
#define CUXFER_VIEW_OWNS_HOST 2u

/* A 2D array in memory (man 3 cuxfer_view): pitch in bytes, width and
 * height in elements, the two units the CUDA API mixes kept apart. */
struct cuxfer_view {
    void *ptr;
    size_t pitch;     /* bytes from one row to the next, >= width * elem_size */
    size_t width;     /* elements per row */
    size_t height;    /* rows */
    size_t elem_size; /* bytes per element, 1 .. CUXFER_ELEM_MAX */
    cuxfer_memkind kind;
    int device;       /* owning device, -1 for host memory */
    unsigned flags;   /* CUXFER_VIEW_OWNS_* */
};

/* A region of interest, in elements. */
struct cuxfer_roi {
    size_t x, y, width, height;
};

/* Bytes of one row's data (width * elem_size); the view is assumed valid. */
CUXFER_API size_t cuxfer_view_row_bytes(const cuxfer_view *v)
{
    return v->width * v->elem_size;
}

/* Validate a view's numbers (man 3 cuxfer_view). */
/* cuxfer_view_check with its reasons naming "what: side" (side NULL:
 * "what"), put together only when a check fails: a copy's checks run on
 * every call (cuxfer_impl_copy2d_check). */
CUXFER_API cudaError_t cuxfer_impl_view_check(const cuxfer_view *v, const char *what,
                                              const char *side)
{
#define CUXFER_IMPL_WHAT what, side ? ": " : "", side ? side : ""
    size_t row, span;
    if (!v)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s%s%s view is NULL",
                                CUXFER_IMPL_WHAT);
    if (v->elem_size < 1 || v->elem_size > CUXFER_ELEM_MAX)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s%s%s elem_size %zu is outside 1..%d", CUXFER_IMPL_WHAT,
                                v->elem_size, CUXFER_ELEM_MAX);
    if (!v->ptr)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s%s%s view pointer is NULL",
                                CUXFER_IMPL_WHAT);
    if (cuxfer_impl_mul(v->width, v->elem_size, &row) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s%s%s width %zu x elem_size %zu overflows size_t",
                                CUXFER_IMPL_WHAT, v->width, v->elem_size);
    if (row > v->pitch)
        return cuxfer_impl_fail(cudaErrorInvalidPitchValue,
                                "%s%s%s row of %zu bytes (width %zu x elem_size %zu) "
                                "exceeds pitch %zu", CUXFER_IMPL_WHAT, row, v->width,
                                v->elem_size, v->pitch);
    if (v->width == 0 || v->height == 0)
        return cudaSuccess;
    if (cuxfer_impl_mul(v->height - 1, v->pitch, &span) != 0 ||
        cuxfer_impl_add(span, row, &span) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s%s%s height %zu x pitch %zu overflows size_t",
                                CUXFER_IMPL_WHAT, v->height, v->pitch);
    if ((uintptr_t)v->ptr > UINTPTR_MAX - span)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s%s%s view of %zu bytes at %p wraps around the "
                                "address space", CUXFER_IMPL_WHAT, span, v->ptr);
    return cudaSuccess;
#undef CUXFER_IMPL_WHAT
}

CUXFER_API cudaError_t cuxfer_view_check(const cuxfer_view *v, const char *what)
{
    return cuxfer_impl_view_check(v, what, NULL);
}

/* Fill *v from its parts and validate, without classifying the memory. */
CUXFER_API cudaError_t cuxfer_impl_view_fill(cuxfer_view *v, void *ptr, size_t pitch,
                                             size_t width, size_t height,
                                             size_t elem_size, cuxfer_memkind kind,
                                             int device, const char *what)
{
    cuxfer_view t = {ptr, pitch, width, height, elem_size, kind, device, 0};
    CUXFER_TRY(cuxfer_view_check(&t, what));
    *v = t;
    return cudaSuccess;
}

/* A view whose kind the caller states: never classified, so no CUDA call. */
CUXFER_API cudaError_t cuxfer_view_init(cuxfer_view *v, void *ptr, size_t pitch,
                                        size_t width, size_t height, size_t elem_size,
                                        cuxfer_memkind kind, int device)
{
    if (!v)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_view_init: view is NULL");
    memset(v, 0, sizeof *v);
    if ((int)kind < (int)CUXFER_MEMORY_UNKNOWN || (int)kind > (int)CUXFER_MEMORY_MANAGED)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_init: kind %d is not a cuxfer_memkind",
                                (int)kind);
    if (device < -1)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_init: device %d is below -1 (host)", device);
    return cuxfer_impl_view_fill(v, ptr, pitch, width, height, elem_size, kind, device,
                                 "cuxfer_view_init:");
}

/* Address of element (x, y), or NULL (with a reason) outside the view. */
CUXFER_API void *cuxfer_view_at(const cuxfer_view *v, size_t x, size_t y)
{
    if (cuxfer_view_check(v, "cuxfer_view_at:") != cudaSuccess)
        return NULL;
    if (x >= v->width || y >= v->height) {
        (void)cuxfer_impl_fail(cudaErrorInvalidValue,
                               "cuxfer_view_at: (%zu, %zu) is outside the %zux%zu view",
                               x, y, v->width, v->height);
        return NULL;
    }
    return (unsigned char *)v->ptr + y * v->pitch + x * v->elem_size;
}

/* The ROI of v as a view of its own, bounds and overflow checked. */
CUXFER_API cudaError_t cuxfer_view_sub(const cuxfer_view *v, cuxfer_roi roi,
                                       cuxfer_view *sub)
{
    size_t end, off;
    if (!sub)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_view_sub: sub is NULL");
    CUXFER_TRY(cuxfer_view_check(v, "cuxfer_view_sub:"));
    if (cuxfer_impl_add(roi.x, roi.width, &end) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "ROI x %zu + width %zu overflows size_t", roi.x, roi.width);
    if (end > v->width)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "ROI x+width %zu exceeds view width %zu", end, v->width);
    if (cuxfer_impl_add(roi.y, roi.height, &end) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "ROI y %zu + height %zu overflows size_t", roi.y, roi.height);
    if (end > v->height)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "ROI y+height %zu exceeds view height %zu", end, v->height);
    /* The offset is checked on its own: an empty view's span is never
     * checked, and an empty ROI at the far edge starts past the span. */
    if (cuxfer_impl_mul(roi.y, v->pitch, &off) != 0 ||
        cuxfer_impl_mul(roi.x, v->elem_size, &end) != 0 ||
        cuxfer_impl_add(off, end, &off) != 0 || (uintptr_t)v->ptr > UINTPTR_MAX - off)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "ROI offset y %zu x pitch %zu + x %zu x elem_size %zu "
                                "wraps around the address space", roi.y, v->pitch, roi.x,
                                v->elem_size);
    *sub = *v;
    sub->ptr = (unsigned char *)v->ptr + off;
    sub->width = roi.width;
    sub->height = roi.height;
    sub->flags = 0;
    return cudaSuccess;
}

/* ------------------------------------------------------------------------
 * 5. Memory: pinned and managed memory, views that own or classify it
 * ------------------------------------------------------------------------ */

/* count * elem_size, refusing zero and overflow with a reason. */
CUXFER_API cudaError_t cuxfer_impl_bytes(const char *call, size_t count,
                                         size_t elem_size, size_t *bytes)
{
    if (count == 0 || elem_size == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: count %zu x elem_size %zu is zero bytes",
                                call, count, elem_size);
    if (cuxfer_impl_mul(count, elem_size, bytes) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: count %zu x elem_size %zu overflows size_t",
                                call, count, elem_size);
    return cudaSuccess;
}

/* Pinned host memory for count elements (man 3 cuxfer_host_alloc). */
CUXFER_API cudaError_t cuxfer_host_alloc(void **p, size_t count,
                                         size_t elem_size, unsigned flags)
{
    const unsigned known = cudaHostAllocPortable | cudaHostAllocMapped |
                           cudaHostAllocWriteCombined;
    size_t bytes = 0;
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_host_alloc: p is NULL");
    *p = NULL;
    if (flags & ~known)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_host_alloc: unknown flags 0x%x", flags & ~known);
    CUXFER_TRY(cuxfer_impl_bytes("cuxfer_host_alloc", count, elem_size, &bytes));
    /* Relaxed: pinning touches no stream, so another thread's Global
     * capture survives it (as in PyTorch's host allocator). */
    rx = cuxfer_impl_relax_begin();
    err = cuxfer_impl_relax_done(rx, cudaHostAlloc(p, bytes, flags));
    if (err != cudaSuccess) {
        *p = NULL;
        return cuxfer_impl_fail_cuda(err, "cuxfer_host_alloc: cudaHostAlloc of %zu bytes: %s",
                                     bytes, cudaGetErrorName(err));
    }
    cuxfer_impl_reg_add(*p, bytes, CUXFER_MEMORY_PINNED, -1);
    return cudaSuccess;
}

/* Free memory from cuxfer_host_alloc; NULL is a no-op. */
CUXFER_API cudaError_t cuxfer_host_free(void *p)
{
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (!p)
        return cudaSuccess;
    cuxfer_impl_reg_remove(p);
    rx = cuxfer_impl_relax_begin(); /* no stream: keep other threads' captures */
    err = cuxfer_impl_relax_done(rx, cudaFreeHost(p));
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_host_free: cudaFreeHost(%p): %s", p,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* Page-lock memory the caller already has (man 3 cuxfer_host_alloc). */
CUXFER_API cudaError_t cuxfer_host_register(void *p, size_t bytes, unsigned flags)
{
    unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped |
                     cudaHostRegisterIoMemory;
    cuxfer_impl_relax rx;
    cudaError_t err;
#ifdef cudaHostRegisterReadOnly
    known |= cudaHostRegisterReadOnly;
#endif
    if (!p || bytes == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_host_register: %s", p ? "bytes is 0" : "p is NULL");
    if ((uintptr_t)p > UINTPTR_MAX - bytes)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_host_register: %p + %zu bytes wraps around",
                                p, bytes);
    if (flags & ~known)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_host_register: unknown flags 0x%x", flags & ~known);
#ifdef cudaHostRegisterReadOnly
    if (flags & cudaHostRegisterReadOnly) {
        int dev = cuxfer_impl_current_device(), ro = 0;
        if (dev >= 0) {
            rx = cuxfer_impl_relax_begin(); /* a query: keep other threads' captures */
            if (cuxfer_impl_relax_done(rx, cudaDeviceGetAttribute(
                                               &ro, cudaDevAttrHostRegisterReadOnlySupported,
                                               dev)) != cudaSuccess)
                (void)cudaGetLastError();
        }
        if (!ro)
            return cuxfer_impl_fail(cudaErrorNotSupported,
                                    "cuxfer_host_register: device %d does not support "
                                    "cudaHostRegisterReadOnly", dev);
    }
#endif
    rx = cuxfer_impl_relax_begin(); /* no stream, as above */
    err = cuxfer_impl_relax_done(rx, cudaHostRegister(p, bytes, flags));
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_host_register: cudaHostRegister(%p, %zu "
                                     "bytes): %s", p, bytes, cudaGetErrorName(err));
    cuxfer_impl_reg_add(p, bytes, CUXFER_MEMORY_PINNED, -1);
    return cudaSuccess;
}

/* Undo cuxfer_host_register. */
CUXFER_API cudaError_t cuxfer_host_unregister(void *p)
{
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_host_unregister: p is NULL");
    rx = cuxfer_impl_relax_begin(); /* no stream, as above */
    err = cuxfer_impl_relax_done(rx, cudaHostUnregister(p));
    if (err != cudaSuccess) /* not registered: nothing changes */
        return cuxfer_impl_fail_cuda(err, "cuxfer_host_unregister: cudaHostUnregister(%p): %s",
                                     p, cudaGetErrorName(err));
    /* After the unregister: the range is still the caller's memory, so no
     * other registration can take it in between. */
    cuxfer_impl_reg_remove(p);
    return cudaSuccess;
}

/* Device memory on the current device, registered so copies classify it
 * without a query (man 3 cuxfer_host_alloc). */
CUXFER_API cudaError_t cuxfer_device_alloc(void **p, size_t count, size_t elem_size)
{
    size_t bytes = 0;
    cudaError_t err;
    int n = 0;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_device_alloc: p is NULL");
    *p = NULL;
    CUXFER_TRY(cuxfer_impl_bytes("cuxfer_device_alloc", count, elem_size, &bytes));
    err = cuxfer_impl_dmalloc(p, bytes);
    if (err == cudaSuccess) {
        cuxfer_impl_reg_add(*p, bytes, CUXFER_MEMORY_DEVICE, cuxfer_impl_current_device());
        return cudaSuccess;
    }
    *p = NULL;
    (void)cudaGetLastError();
    if (cuxfer_device_count(&n) != cudaSuccess) {
        char why[CUXFER_REASON_MAX];
        snprintf(why, sizeof why, "%s", cuxfer_last_reason());
        return cuxfer_impl_fail(err, "cuxfer_device_alloc: cudaMalloc of %zu bytes: %s: %s",
                                bytes, cudaGetErrorName(err), why);
    }
    return cuxfer_impl_fail(err, "cuxfer_device_alloc: cudaMalloc of %zu bytes on device %d: %s",
                            bytes, cuxfer_impl_current_device(), cudaGetErrorName(err));
}

/* Free memory from cuxfer_device_alloc and its registry entry; NULL: no-op. */
CUXFER_API cudaError_t cuxfer_device_free(void *p)
{
    cudaError_t err;
    if (!p)
        return cudaSuccess;
    cuxfer_impl_reg_remove(p);
    err = cuxfer_impl_dfree(p);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_device_free: cudaFree(%p): %s", p,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* The target of cuxfer_prefetch and cuxfer_advise meaning host memory. */
#define CUXFER_CPU (-1)

/* 1 when the device has concurrentManagedAccess, asked once per device. */
CUXFER_API int cuxfer_managed_concurrent(int device)
{
    struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    int v = 0, c;
    if (device < 0 || device >= CUXFER_IMPL_MAX_DEVICES)
        return 0;
    c = __atomic_load_n(&st->managed_cap[device], __ATOMIC_ACQUIRE);
    if (c == 0) {
        cuxfer_impl_relax rx = cuxfer_impl_relax_begin(); /* a query: keep captures */
        cudaError_t err = cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, device);
        cuxfer_impl_relax_end(rx);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return 0; /* not cached: a failed query may be transient */
        }
        c = v ? 1 : 2;
        __atomic_store_n(&st->managed_cap[device], c, __ATOMIC_RELEASE);
    }
    return c == 1;
}

/* Managed memory, never more than is free: overcommitting can hang the GPU. */
CUXFER_API cudaError_t cuxfer_managed_alloc(void **p, size_t count,
                                            size_t elem_size, unsigned flags)
{
    size_t bytes = 0, free_b = 0, total_b = 0;
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_managed_alloc: p is NULL");
    *p = NULL;
    if (flags == 0)
        flags = cudaMemAttachGlobal;
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_managed_alloc: flags 0x%x is neither "
                                "cudaMemAttachGlobal nor cudaMemAttachHost", flags);
    CUXFER_TRY(cuxfer_impl_bytes("cuxfer_managed_alloc", count, elem_size, &bytes));
    rx = cuxfer_impl_relax_begin(); /* a query: keep other threads' captures */
    err = cuxfer_impl_relax_done(rx, cudaMemGetInfo(&free_b, &total_b));
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_managed_alloc: cudaMemGetInfo: %s",
                                     cudaGetErrorName(err));
    if (bytes > free_b)
        return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                "cuxfer_managed_alloc: %zu bytes requested, only %zu "
                                "free on the device", bytes, free_b);
    rx = cuxfer_impl_relax_begin(); /* an allocation: keep other threads' captures */
    err = cuxfer_impl_relax_done(rx, cudaMallocManaged(p, bytes, flags));
    if (err != cudaSuccess) {
        *p = NULL;
        return cuxfer_impl_fail_cuda(err, "cuxfer_managed_alloc: cudaMallocManaged of %zu "
                                     "bytes: %s", bytes, cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* Free managed memory; NULL is a no-op. */
CUXFER_API cudaError_t cuxfer_managed_free(void *p)
{
    cudaError_t err;
    if (!p)
        return cudaSuccess;
    cuxfer_impl_kcache_flush();
    err = cuxfer_impl_dfree(p);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_managed_free: cudaFree(%p): %s", p,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* Typed allocation (CUXFER_HOST_ALLOC, CUXFER_DEVICE_ALLOC,
 * CUXFER_MANAGED_ALLOC; `where` 0, 1, 2): the element size comes from the
 * pointer.  A non-pointer or a void * target does not compile, in C too:
 * the size is that of a one-element array of the target type, and an
 * array of void is an error. */
CUXFER_API cudaError_t cuxfer_impl_alloc_typed(void *pp, size_t pp_size, size_t count,
                                               size_t elem_size, unsigned flags, int where)
{
    static const char *const call[] = {"CUXFER_HOST_ALLOC", "CUXFER_DEVICE_ALLOC",
                                       "CUXFER_MANAGED_ALLOC"};
    void *q = NULL;
    cudaError_t err;
    if (!pp || pp_size != sizeof q)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s", call[where],
                                !pp ? "the pointer's address is NULL"
                                    : "the target is not an object pointer");
    memcpy(pp, &q, sizeof q);
    err = where == 1   ? cuxfer_device_alloc(&q, count, elem_size)
          : where == 2 ? cuxfer_managed_alloc(&q, count, elem_size, flags)
                       : cuxfer_host_alloc(&q, count, elem_size, flags);
    memcpy(pp, &q, sizeof q);
    return err;
}
#ifdef __cplusplus
#define CUXFER_IMPL_ELEM_SIZE(pp) sizeof **(pp)
#else
#define CUXFER_IMPL_ELEM_SIZE(pp) sizeof(__typeof__(**(pp))[1])
#endif
#define CUXFER_HOST_ALLOC(pp, count, flags)                                    \
    cuxfer_impl_alloc_typed((pp), sizeof *(pp), (count), CUXFER_IMPL_ELEM_SIZE(pp), (flags), 0)
#define CUXFER_DEVICE_ALLOC(pp, count)                                         \
    cuxfer_impl_alloc_typed((pp), sizeof *(pp), (count), CUXFER_IMPL_ELEM_SIZE(pp), 0u, 1)
#define CUXFER_MANAGED_ALLOC(pp, count, flags)                                 \
    cuxfer_impl_alloc_typed((pp), sizeof *(pp), (count), CUXFER_IMPL_ELEM_SIZE(pp), (flags), 2)

/* Shared checks of prefetch and advise: a managed range, a capable device. */
CUXFER_API cudaError_t cuxfer_impl_managed_check(const char *call, const void *p,
                                                 size_t bytes, int target)
{
    int dev = target;
    if (!p || bytes == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s", call,
                                p ? "bytes is 0" : "pointer is NULL");
    if (target < CUXFER_CPU)
        return cuxfer_impl_fail(cudaErrorInvalidDevice,
                                "%s: device %d is neither a device index nor CUXFER_CPU",
                                call, target);
    if (target >= 0) {
        int n = 0;
        cuxfer_impl_relax rx = cuxfer_impl_relax_begin(); /* a query: keep captures */
        if (cuxfer_impl_relax_done(rx, cudaGetDeviceCount(&n)) != cudaSuccess)
            (void)cudaGetLastError();
        if (target >= n)
            return cuxfer_impl_fail(cudaErrorInvalidDevice,
                                    "%s: device %d does not exist (%d device(s))", call, target, n);
    }
    if (cuxfer_memory_kind(p) != CUXFER_MEMORY_MANAGED)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %p is %s memory, not managed memory", call, p,
                                cuxfer_memkind_name(cuxfer_memory_kind(p)));
    if (dev == CUXFER_CPU)
        dev = cuxfer_impl_current_device();
    if (!cuxfer_managed_concurrent(dev))
        return cuxfer_impl_fail(cudaErrorNotSupported,
                                "%s: device %d has concurrentManagedAccess 0: "
                                "nothing done, pages migrate on demand",
                                call, dev);
    return cudaSuccess;
}

#if CUDART_VERSION >= 13000
/* CUDA 13 takes a cudaMemLocation where 11 and 12 took a device number. */
CUXFER_API struct cudaMemLocation cuxfer_impl_location(int target)
{
    struct cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = target == CUXFER_CPU ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = target == CUXFER_CPU ? 0 : target;
    return loc;
}
#endif

/* Migrate a managed range to a device or CUXFER_CPU on s. */
CUXFER_API cudaError_t cuxfer_prefetch(const void *p, size_t bytes, int target,
                                       cudaStream_t s)
{
    cudaError_t err;
    CUXFER_TRY(cuxfer_impl_managed_check("cuxfer_prefetch", p, bytes, target));
    /* On a capturing stream it fails and invalidates the capture (doc/PERF.md,
     * "CUDA behaviour measured"): refused first. */
    if (cuxfer_impl_stream_state(s, &err) != CUXFER_IMPL_STREAM_UNCAPTURED)
        return cuxfer_impl_fail(err != cudaSuccess ? err : cudaErrorStreamCaptureUnsupported,
                                "cuxfer_prefetch: stream %p is being captured (or cannot be "
                                "used now): prefetch before the capture or after its launch",
                                (void *)s);
#if CUDART_VERSION >= 13000
    err = cudaMemPrefetchAsync(p, bytes, cuxfer_impl_location(target), 0, s);
#else
    err = cudaMemPrefetchAsync(p, bytes, target == CUXFER_CPU ? cudaCpuDeviceId : target, s);
#endif
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_prefetch: cudaMemPrefetchAsync: %s",
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* cudaMemAdvise for a managed range; the capability rule of cuxfer_prefetch. */
CUXFER_API cudaError_t cuxfer_advise(const void *p, size_t bytes,
                                     enum cudaMemoryAdvise advice, int target)
{
    cudaError_t err;
    CUXFER_TRY(cuxfer_impl_managed_check("cuxfer_advise", p, bytes, target));
#if CUDART_VERSION >= 13000
    err = cudaMemAdvise(p, bytes, advice, cuxfer_impl_location(target));
#else
    err = cudaMemAdvise(p, bytes, advice, target == CUXFER_CPU ? cudaCpuDeviceId : target);
#endif
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_advise: cudaMemAdvise: %s",
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* --- Views over memory: wrapped (classified with the CUDA runtime) and
 * allocated (cudaMallocPitch, cudaHostAlloc); the view type is section 4's. */

/* A view of memory the caller owns, validated and classified. */
CUXFER_API cudaError_t cuxfer_view_wrap(cuxfer_view *v, void *ptr, size_t pitch,
                                        size_t width, size_t height,
                                        size_t elem_size)
{
    int dev = -1;
    if (!v)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_view_wrap: view is NULL");
    memset(v, 0, sizeof *v);
    CUXFER_TRY(cuxfer_impl_view_fill(v, ptr, pitch, width, height, elem_size,
                                     CUXFER_MEMORY_UNKNOWN, -1, "cuxfer_view_wrap:"));
    v->kind = cuxfer_impl_classify(ptr, &dev);
    v->device = dev;
    return cudaSuccess;
}

/* A pitched device array on the current device; free with cuxfer_view_free. */
CUXFER_API cudaError_t cuxfer_view_alloc_device(cuxfer_view *v, size_t width,
                                                size_t height, size_t elem_size)
{
    size_t row, pitch = 0;
    void *p = NULL;
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (!v)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_view_alloc_device: view is NULL");
    memset(v, 0, sizeof *v);
    if (elem_size < 1 || elem_size > CUXFER_ELEM_MAX)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_device: elem_size %zu is outside 1..%d",
                                elem_size, CUXFER_ELEM_MAX);
    if (width == 0 || height == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_device: %zux%zu is empty", width, height);
    if (cuxfer_impl_mul(width, elem_size, &row) != 0 ||
        cuxfer_impl_mul(row, height, &pitch) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_device: %zux%zu x %zu bytes overflows size_t",
                                width, height, elem_size);
    rx = cuxfer_impl_relax_begin(); /* an allocation: keep other threads' captures */
    err = cuxfer_impl_relax_done(rx, cudaMallocPitch(&p, &pitch, row, height));
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_view_alloc_device: cudaMallocPitch %zu x %zu: %s",
                                     row, height, cudaGetErrorName(err));
    CUXFER_TRY(cuxfer_impl_view_fill(v, p, pitch, width, height, elem_size, CUXFER_MEMORY_DEVICE,
                                     cuxfer_impl_current_device(), "cuxfer_view_alloc_device:"));
    v->flags = CUXFER_VIEW_OWNS_DEVICE;
    cuxfer_impl_reg_add(p, pitch * height, CUXFER_MEMORY_DEVICE, v->device);
    return cudaSuccess;
}

/* A pinned host array, rows padded to row_align; free with cuxfer_view_free. */
CUXFER_API cudaError_t cuxfer_view_alloc_host(cuxfer_view *v, size_t width, size_t height,
                                              size_t elem_size, size_t row_align)
{
    size_t row, pitch, total;
    void *p = NULL;
    if (!v)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_view_alloc_host: view is NULL");
    memset(v, 0, sizeof *v);
    if (elem_size < 1 || elem_size > CUXFER_ELEM_MAX)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_host: elem_size %zu is outside 1..%d",
                                elem_size, CUXFER_ELEM_MAX);
    if (row_align == 0)
        row_align = 1;
    if ((row_align & (row_align - 1)) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_host: row_align %zu is not a power of two",
                                row_align);
    if (width == 0 || height == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_host: %zux%zu is empty", width, height);
    if (cuxfer_impl_mul(width, elem_size, &row) != 0 ||
        cuxfer_impl_add(row, row_align - 1, &pitch) != 0 ||
        cuxfer_impl_mul(pitch & ~(row_align - 1), height, &total) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_view_alloc_host: %zux%zu x %zu bytes (align %zu) "
                                "overflows size_t", width, height, elem_size, row_align);
    pitch &= ~(row_align - 1);
    CUXFER_TRY(cuxfer_host_alloc(&p, total, 1, cudaHostAllocDefault));
    CUXFER_TRY(cuxfer_impl_view_fill(v, p, pitch, width, height, elem_size,
                                     CUXFER_MEMORY_PINNED, -1, "cuxfer_view_alloc_host:"));
    v->flags = CUXFER_VIEW_OWNS_HOST;
    return cudaSuccess;
}

/* Release what cuxfer_view_alloc_* allocated; safe on any view and NULL. */
CUXFER_API cudaError_t cuxfer_view_free(cuxfer_view *v)
{
    cudaError_t err = cudaSuccess;
    if (!v)
        return cudaSuccess;
    if (v->flags & CUXFER_VIEW_OWNS_DEVICE) {
        cuxfer_impl_reg_remove(v->ptr);
        err = cuxfer_impl_dfree(v->ptr);
    } else if (v->flags & CUXFER_VIEW_OWNS_HOST) {
        err = cuxfer_host_free(v->ptr);
    }
    memset(v, 0, sizeof *v);
    return err;
}

/* ------------------------------------------------------------------------
 * 6. Copies: checked 1D and 2D asynchronous copies
 * ------------------------------------------------------------------------ */

/* The largest pitch cudaMemcpy2D accepts on device dev; 0 when unknown. */
CUXFER_API size_t cuxfer_device_max_pitch(int dev)
{
    struct cuxfer_impl_state *st = cuxfer_impl_state_get();
    int v = 0;
    size_t c;
    if (dev < 0 || dev >= CUXFER_IMPL_MAX_DEVICES)
        return 0;
    c = __atomic_load_n(&st->max_pitch[dev], __ATOMIC_ACQUIRE);
    if (c)
        return c;
    {
        cuxfer_impl_relax rx = cuxfer_impl_relax_begin(); /* may run inside a capture */
        cudaError_t err =
            cuxfer_impl_relax_done(rx, cudaDeviceGetAttribute(&v, cudaDevAttrMaxPitch, dev));
        if (err != cudaSuccess || v <= 0) {
            (void)cudaGetLastError();
            return 0;
        }
    }
    __atomic_store_n(&st->max_pitch[dev], (size_t)v, __ATOMIC_RELEASE);
    return (size_t)v;
}

/* Enable dev's access to peer's memory once, idempotently, thread-safely. */
CUXFER_API cudaError_t cuxfer_peer_enable(int dev, int peer)
{
    int can = 0, saved, state, *known;
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (dev < 0 || peer < 0 || dev >= CUXFER_IMPL_MAX_DEVICES || peer >= CUXFER_IMPL_MAX_DEVICES)
        return cuxfer_impl_fail(cudaErrorInvalidDevice,
                                "cuxfer_peer_enable: devices %d and %d", dev, peer);
    if (dev == peer)
        return cudaSuccess;
    known = &cuxfer_impl_state_get()->peer[dev * CUXFER_IMPL_MAX_DEVICES + peer];
    state = __atomic_load_n(known, __ATOMIC_ACQUIRE);
    if (state == 0) {
        /* Device queries and enabling access touch no stream: Relaxed, so a
         * copy made inside a capture (or next to another thread's) keeps it. */
        rx = cuxfer_impl_relax_begin();
        err = cudaDeviceCanAccessPeer(&can, dev, peer);
        if (err == cudaSuccess && can) {
            err = cuxfer_impl_use_device(dev, &saved);
            if (err == cudaSuccess) {
                err = cudaDeviceEnablePeerAccess(peer, 0);
                if (err == cudaErrorPeerAccessAlreadyEnabled) { /* another thread, or the caller */
                    (void)cudaGetLastError();
                    err = cudaSuccess;
                }
                cuxfer_impl_restore_device(saved);
            }
        }
        cuxfer_impl_relax_end(rx);
        if (err != cudaSuccess)
            return cuxfer_impl_fail_cuda(err, "cuxfer_peer_enable: devices %d and %d: %s", dev,
                                         peer, cudaGetErrorName(err));
        state = can ? 1 : 2;
        __atomic_store_n(known, state, __ATOMIC_RELEASE);
    }
    if (state == 2)
        return cuxfer_impl_fail(cudaErrorPeerAccessUnsupported,
                                "device %d cannot access device %d's memory", dev, peer);
    return cudaSuccess;
}

/* Before a copy between the memory of two devices: peer access both ways
 * where the hardware has it (cuxfer_peer_enable: once per pair and
 * process; a pair already settled costs two table reads).  Peer access is
 * the copy's speed, not its correctness: without it (no hardware path, or
 * enabling it failed, say at the runtime's limit of peers) the runtime
 * stages the copy through the host, so the copy goes on and leaves the
 * reason as it was. */
CUXFER_API void cuxfer_impl_peer_both(int ddev, int sdev)
{
    const int *known = cuxfer_impl_state_get()->peer;
    char prev[CUXFER_REASON_MAX];
    cudaError_t e1, e2;
    if (ddev < 0 || sdev < 0 || ddev >= CUXFER_IMPL_MAX_DEVICES ||
        sdev >= CUXFER_IMPL_MAX_DEVICES ||
        (__atomic_load_n(&known[ddev * CUXFER_IMPL_MAX_DEVICES + sdev], __ATOMIC_ACQUIRE) &&
         __atomic_load_n(&known[sdev * CUXFER_IMPL_MAX_DEVICES + ddev], __ATOMIC_ACQUIRE)))
        return;
    (void)snprintf(prev, sizeof prev, "%s", cuxfer_last_reason());
    e1 = cuxfer_peer_enable(ddev, sdev);
    e2 = cuxfer_peer_enable(sdev, ddev);
    if (e1 != cudaSuccess || e2 != cudaSuccess)
        (void)cuxfer_impl_fail(cudaSuccess, "%s", prev);
}

/* A 2D copy between memory of two devices, peer access enabled where it can be. */
CUXFER_API cudaError_t cuxfer_impl_copy2d_peer(const cuxfer_view *dst, int ddev,
                                               const cuxfer_view *src, int sdev, cudaStream_t s)
{
    struct cudaMemcpy3DPeerParms pp;
    size_t row = cuxfer_view_row_bytes(src);
    cuxfer_impl_peer_both(ddev, sdev);
    memset(&pp, 0, sizeof pp);
    pp.srcPtr.ptr = src->ptr;
    pp.srcPtr.pitch = src->pitch;
    pp.srcPtr.xsize = row;
    pp.srcPtr.ysize = src->height;
    pp.srcDevice = sdev;
    pp.dstPtr.ptr = dst->ptr;
    pp.dstPtr.pitch = dst->pitch;
    pp.dstPtr.xsize = row;
    pp.dstPtr.ysize = dst->height;
    pp.dstDevice = ddev;
    pp.extent.width = row;
    pp.extent.height = src->height;
    pp.extent.depth = 1;
    return cudaMemcpy3DPeerAsync(&pp, s);
}

/* The pitch bound of a real 2D copy (max_pitch 0 = unknown, unchecked):
 * one row, or two dense views, go as one range and have none, and an
 * empty copy (rows of 0 bytes) queues nothing.  `call` names the copy in
 * the reason, as in the checks below. */
CUXFER_API cudaError_t cuxfer_impl_max_pitch_check(const char *call, const cuxfer_view *dst,
                                                   const cuxfer_view *src, size_t max_pitch)
{
    const cuxfer_view *v = dst->pitch > max_pitch ? dst : src; /* dst is reported first */
    size_t row = cuxfer_view_row_bytes(src);
    if (row == 0)
        return cudaSuccess;
    if (src->height <= 1 || (dst->pitch == row && src->pitch == row))
        return cudaSuccess;
    if (max_pitch && v->pitch > max_pitch)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %s pitch %zu exceeds the device's maximum pitch %zu", call,
                                v == dst ? "dst" : "src", v->pitch, max_pitch);
    return cudaSuccess;
}

/* Row y of a view starts at base + y * pitch and holds w bytes. */
struct cuxfer_impl_rows {
    uintptr_t base;
    size_t pitch, w, h;
};

/* The first row of r at or after row i whose end is past address x. */
CUXFER_API size_t cuxfer_impl_row_past(const struct cuxfer_impl_rows *r, size_t i, uintptr_t x)
{
    size_t k;
    if (r->base + i * r->pitch + r->w > x)
        return i;
    k = (size_t)(x - r->base - r->w) / r->pitch + 1; /* pitch >= w > 0 */
    return k > i ? k : i + 1;
}

/* Byte-exact overlap of two valid views of the same row bytes: 1 and the
 * first clashing rows *ia, *ib; 2 when the bounded sweep could not decide.
 * Rows may sit in the other's gaps, so the spans only rule overlap out. */
CUXFER_API int cuxfer_impl_views_overlap(const cuxfer_view *a, const cuxfer_view *b, size_t *ia,
                                         size_t *ib)
{
    struct cuxfer_impl_rows ra = {(uintptr_t)a->ptr, a->pitch, a->width * a->elem_size, a->height};
    struct cuxfer_impl_rows rb = {(uintptr_t)b->ptr, b->pitch, b->width * b->elem_size, b->height};
    size_t i = 0, j = 0, steps = 0;
    if (ra.w == 0 || ra.h == 0 || rb.w == 0 || rb.h == 0 || ra.w != rb.w)
        return 0;
    if (ra.base + (ra.h - 1) * ra.pitch + ra.w <= rb.base ||
        rb.base + (rb.h - 1) * rb.pitch + rb.w <= ra.base)
        return 0; /* disjoint spans */
    if (ra.pitch == rb.pitch) {
        /* row i of the lower view meets row j = 0 of the higher one iff
         * |i * pitch - d| < w; only the two i around d / pitch can. */
        const struct cuxfer_impl_rows *lo = ra.base <= rb.base ? &ra : &rb;
        size_t d = ra.base <= rb.base ? rb.base - ra.base : ra.base - rb.base;
        size_t k = d / lo->pitch;
        size_t *ilo = lo == &ra ? ia : ib, *ihi = lo == &ra ? ib : ia;
        if (k < lo->h && d - k * lo->pitch < lo->w) {
            *ilo = k;
            *ihi = 0;
            return 1;
        }
        if (k + 1 < lo->h && (k + 1) * lo->pitch - d < lo->w) {
            *ilo = k + 1;
            *ihi = 0;
            return 1;
        }
        return 0;
    }
    while (i < ra.h && j < rb.h) {
        uintptr_t as = ra.base + i * ra.pitch, bs = rb.base + j * rb.pitch;
        /* Each step passes a row of one view; rows that interleave for more
         * than 2^20 steps are answered 2 (undecided), in bounded time. */
        if (++steps > ((size_t)1 << 20)) {
            *ia = i;
            *ib = j;
            return 2;
        }
        if (as + ra.w <= bs)
            i = cuxfer_impl_row_past(&ra, i, bs);
        else if (bs + rb.w <= as)
            j = cuxfer_impl_row_past(&rb, j, as);
        else {
            *ia = i;
            *ib = j;
            return 1;
        }
    }
    return 0;
}

/* Every check of a copy of views that needs no device (max_pitch 0: none),
 * its reasons naming `call`: the one the user made. */
CUXFER_API cudaError_t cuxfer_impl_copy2d_check(const char *call, const cuxfer_view *dst,
                                                const cuxfer_view *src, size_t max_pitch)
{
    CUXFER_TRY(cuxfer_impl_view_check(dst, call, "dst"));
    CUXFER_TRY(cuxfer_impl_view_check(src, call, "src"));
    if (dst->width != src->width || dst->height != src->height ||
        dst->elem_size != src->elem_size)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: extents differ: dst %zux%zu of %zu-byte elements, src "
                                "%zux%zu of %zu-byte elements", call,
                                dst->width, dst->height, dst->elem_size, src->width,
                                src->height, src->elem_size);
    {
        size_t dr = 0, sr = 0;
        int ov = cuxfer_impl_views_overlap(dst, src, &dr, &sr);
        if (ov == 2)
            return cuxfer_impl_fail(cudaErrorInvalidValue,
                                    "%s: dst %p (pitch %zu) and src %p (pitch %zu) interleave "
                                    "over more than a million rows; cuxfer does not prove such "
                                    "views disjoint", call, dst->ptr, dst->pitch, src->ptr,
                                    src->pitch);
        if (ov)
            return cuxfer_impl_fail(cudaErrorInvalidValue,
                                    "%s: dst %p and src %p overlap: dst row %zu and src row %zu "
                                    "share bytes", call, dst->ptr, src->ptr, dr, sr);
    }
    return cuxfer_impl_max_pitch_check(call, dst, src, max_pitch);
}

/* Every check of cuxfer_copy2d_async that needs no device (max_pitch 0: none). */
CUXFER_API cudaError_t cuxfer_copy2d_check(const cuxfer_view *dst,
                                           const cuxfer_view *src, size_t max_pitch)
{
    return cuxfer_impl_copy2d_check("cuxfer_copy2d_async", dst, src, max_pitch);
}

/* A view's recorded kind against what CUDA says of its pointer: a wrong
 * kind (or memory freed and reused) is caught before the copy engine. */
CUXFER_API cudaError_t cuxfer_impl_kind_agrees(const char *call, const char *what,
                                               const cuxfer_view *v, cuxfer_memkind actual)
{
    if (v->kind == CUXFER_MEMORY_UNKNOWN || actual == CUXFER_MEMORY_UNKNOWN ||
        v->kind == actual)
        return cudaSuccess;
    return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s view says %s memory but %p is %s memory",
                            call, what, cuxfer_memkind_name(v->kind), v->ptr,
                            cuxfer_memkind_name(actual));
}

/* The calling unit's default-stream guard policy (doc/DESIGN.md, section 9). */
CUXFER_API int cuxfer_default_stream_policy(void)
{
    int p = cuxfer_impl_env_policy_get(&cuxfer_impl_state_get()->env_stream_policy,
                                       "CUXFER_DEFAULT_STREAM");
    return p > 0 ? p : CUXFER_DEFAULT_STREAM_POLICY;
}

/* 1 when s is the legacy default stream in the calling unit (0 is the
 * thread's own stream in a per-thread build): each unit answers for itself. */
CUXFER_API int cuxfer_impl_is_legacy_stream(cudaStream_t s)
{
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    return s == cudaStreamLegacy;
#else
    return s == (cudaStream_t)0 || s == cudaStreamLegacy;
#endif
}

/* Apply the guard to `call` about to queue copies on s, in two steps: the
 * refusal (warn 0) among the checks that need only the arguments, before
 * any CUDA call, and the warning (warn 1) after every check, just before
 * the copy is queued, so that a copy refused for its arguments uses up no
 * warning.  Timers do not (events on stream 0 are the classic way to time
 * it), nor does the stager (it only orders its own stream after `after`). */
CUXFER_API cudaError_t cuxfer_impl_stream_guard(const char *call, cudaStream_t s, int warn)
{
    int policy;
    if (!cuxfer_impl_is_legacy_stream(s))
        return cudaSuccess;
    policy = cuxfer_default_stream_policy();
    if (policy == CUXFER_PAGEABLE_ALLOW)
        return cudaSuccess;
    if (policy == CUXFER_PAGEABLE_ERROR)
        return cuxfer_impl_fail(
            cudaErrorInvalidValue,
            "%s: %s is the legacy default stream, which serialises with "
            "every blocking stream; use a non-blocking stream "
            "(cuxfer_stream_pool_create) or set CUXFER_DEFAULT_STREAM=allow",
            call, s ? "cudaStreamLegacy" : "stream 0");
    if (warn && __atomic_exchange_n(&cuxfer_impl_state_get()->warned_stream, 1,
                                    __ATOMIC_ACQ_REL) == 0)
        CUXFER_LOG("cuxfer: warning: %s: queued on the legacy default stream, "
                   "which serialises with every blocking stream, so nothing "
                   "overlaps; use a non-blocking stream "
                   "(CUXFER_DEFAULT_STREAM=allow|warn|error; shown once)\n", call);
    return cudaSuccess;
}

/* Pageable copies by cuxfer_copy and cuxfer_copy2d up to this size skip
 * the pageable guard: CUDA's own staging is right for them. */
#define CUXFER_COPY_SMALL ((size_t)64 << 10)

/* The stream's checks before a copy queues work on s (async: the
 * default-stream guard's refusal) or on the calling thread's default
 * stream, as cudaMemcpy does (sync), made right after the argument checks.
 * Refused, so that the capture survives: a synchronous copy while that
 * stream is captured, and the legacy stream while a blocking stream of the
 * device is (cudaErrorStreamCaptureImplicit; other errors, such as no
 * driver: the copy says so itself).  The guard's warning comes last, once
 * every check has passed (cuxfer_impl_stream_guard). */
CUXFER_API cudaError_t cuxfer_impl_copy_stream_ok(const char *call, cudaStream_t s, int sync)
{
    cudaError_t err;
    int cap;
    if (sync) {
        cap = cuxfer_impl_stream_state((cudaStream_t)0, &err);
        if (cap > 0)
            return cuxfer_impl_fail(cudaErrorStreamCaptureUnsupported,
                                    "%s: the calling thread's default stream is being captured; "
                                    "a synchronous copy cannot be (use cuxfer_copy_async)", call);
        if (cap < 0 && err == cudaErrorStreamCaptureImplicit)
            return cuxfer_impl_fail(err, "%s: a blocking stream of the device is being captured, "
                                    "and a synchronous copy on the legacy default stream would "
                                    "invalidate that capture (%s)", call, cudaGetErrorName(err));
        return cudaSuccess;
    }
    CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 0));
    if (!cuxfer_impl_is_legacy_stream(s))
        return cudaSuccess;
    cap = cuxfer_impl_stream_state(s, &err);
    if (cap < 0 && err == cudaErrorStreamCaptureImplicit)
        return cuxfer_impl_fail(err, "%s: the legacy default stream cannot take work while a "
                                "blocking stream is being captured (%s)", call,
                                cudaGetErrorName(err));
    return cudaSuccess;
}

/* A synchronous copy's wait and report, ending rx (rows 0: a 1D copy). */
CUXFER_API cudaError_t cuxfer_impl_copy_wait(const char *call, cudaError_t err, cudaStream_t s,
                                             cuxfer_impl_relax rx, size_t row, size_t rows,
                                             const void *src, const void *dst)
{
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    cuxfer_impl_relax_end(rx);
    if (err != cudaSuccess && rows == 0)
        return cuxfer_impl_fail(err, "%s: %zu bytes from %p to %p: %s", call, row, src, dst,
                                cudaGetErrorName(err));
    if (err != cudaSuccess)
        return cuxfer_impl_fail(err, "%s: %zux%zu bytes from %p to %p: %s", call, row, rows, src,
                                dst, cudaGetErrorName(err));
    return cudaSuccess;
}

/* cuxfer_copy2d_async (sync 0) and cuxfer_copy2d (sync 1). */
CUXFER_API cudaError_t cuxfer_impl_copy2d(const char *call, const cuxfer_view *dst,
                                          const cuxfer_view *src, cudaStream_t s, int sync)
{
    cuxfer_memkind dk, sk;
    cuxfer_impl_relax rx;
    int ddev = -1, sdev = -1, dev, peer, flat;
    size_t row;
    cudaError_t err;
    CUXFER_TRY(cuxfer_impl_copy2d_check(call, dst, src, 0));
    if (src->width == 0 || src->height == 0)
        return cudaSuccess;
    CUXFER_TRY(cuxfer_impl_copy_stream_ok(call, s, sync));
    memset(&rx, 0, sizeof rx);
    dk = cuxfer_impl_classify_cached(dst->ptr, &ddev);
    sk = cuxfer_impl_classify_cached(src->ptr, &sdev);
    CUXFER_TRY(cuxfer_impl_kind_agrees(call, "dst", dst, dk));
    CUXFER_TRY(cuxfer_impl_kind_agrees(call, "src", src, sk));
    row = cuxfer_view_row_bytes(src);
    if (!sync || row * src->height > CUXFER_COPY_SMALL)
        CUXFER_TRY(cuxfer_impl_guard(call, dk, sk, cuxfer_pageable_policy()));
    peer = dk == CUXFER_MEMORY_DEVICE && sk == CUXFER_MEMORY_DEVICE && ddev >= 0 && sdev >= 0 &&
           ddev != sdev;
    flat = (dst->pitch == row && src->pitch == row) || src->height == 1;
    dev = ddev >= 0 ? ddev : sdev >= 0 ? sdev : cuxfer_impl_current_device();
    if (!peer && !flat)
        CUXFER_TRY(cuxfer_impl_max_pitch_check(call, dst, src, cuxfer_device_max_pitch(dev)));
    if (!sync)
        CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 1));
    if (sync)
        rx = cuxfer_impl_relax_begin();
    if (peer)
        err = cuxfer_impl_copy2d_peer(dst, ddev, src, sdev, s);
    else if (flat)
        err = cudaMemcpyAsync(dst->ptr, src->ptr, row * src->height, cudaMemcpyDefault, s);
    else
        err = cudaMemcpy2DAsync(dst->ptr, dst->pitch, src->ptr, src->pitch, row,
                                src->height, cudaMemcpyDefault, s);
    if (sync)
        return cuxfer_impl_copy_wait(call, err, s, rx, row, src->height, src->ptr, dst->ptr);
    return cuxfer_impl_debug_sync(err, s);
}

/* Copy src to dst on s (man 3 cuxfer_copy2d_async). */
CUXFER_API cudaError_t cuxfer_copy2d_async(const cuxfer_view *dst,
                                           const cuxfer_view *src, cudaStream_t s)
{
    return cuxfer_impl_copy2d("cuxfer_copy2d_async", dst, src, s, 0);
}

/* Checks of a 1D copy that need no device, the reasons naming `call`. */
CUXFER_API cudaError_t cuxfer_impl_copy_check(const char *call, const void *dst, const void *src,
                                              size_t bytes)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (bytes == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s is NULL", call,
                                dst ? "src" : "dst");
    if (d > UINTPTR_MAX - bytes || s > UINTPTR_MAX - bytes)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %zu bytes at %p wrap around the address space", call, bytes,
                                d > UINTPTR_MAX - bytes ? dst : src);
    if (d < s + bytes && s < d + bytes)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: dst %p and src %p overlap (%zu bytes)",
                                call, dst, src, bytes);
    return cudaSuccess;
}

/* Checks of cuxfer_copy_async that need no device. */
CUXFER_API cudaError_t cuxfer_copy_check(const void *dst, const void *src, size_t bytes)
{
    return cuxfer_impl_copy_check("cuxfer_copy_async", dst, src, bytes);
}

/* cuxfer_copy_async (sync 0) and cuxfer_copy (sync 1). */
CUXFER_API cudaError_t cuxfer_impl_copy(const char *call, void *dst, const void *src,
                                        size_t bytes, cudaStream_t s, int sync)
{
    cuxfer_memkind dk, sk;
    cuxfer_impl_relax rx;
    cudaError_t err;
    int ddev = -1, sdev = -1;
    if (bytes == 0)
        return cudaSuccess;
    CUXFER_TRY(cuxfer_impl_copy_check(call, dst, src, bytes));
    CUXFER_TRY(cuxfer_impl_copy_stream_ok(call, s, sync));
    memset(&rx, 0, sizeof rx);
    /* A pinned side rules out every misuse: no query of the other side (a
     * small synchronous copy needs no guard: as if pinned). */
    dk = sync && bytes <= CUXFER_COPY_SMALL ? CUXFER_MEMORY_PINNED : cuxfer_impl_lookup(dst, &ddev);
    sk = dk == CUXFER_MEMORY_PINNED ? dk : cuxfer_impl_lookup(src, &sdev);
    if (dk != CUXFER_MEMORY_PINNED && sk != CUXFER_MEMORY_PINNED) {
        if (sk == CUXFER_MEMORY_UNKNOWN)
            sk = cuxfer_impl_classify_cached(src, &sdev);
        if (dk == CUXFER_MEMORY_UNKNOWN && sk != CUXFER_MEMORY_PINNED)
            dk = cuxfer_impl_classify_cached(dst, &ddev);
        CUXFER_TRY(cuxfer_impl_guard(call, dk, sk, cuxfer_pageable_policy()));
        if (dk == CUXFER_MEMORY_DEVICE && sk == CUXFER_MEMORY_DEVICE && ddev >= 0 && sdev >= 0 &&
            ddev != sdev) /* as cuxfer_copy2d_async's peer copies */
            cuxfer_impl_peer_both(ddev, sdev);
    }
    if (!sync)
        CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 1));
    if (sync)
        rx = cuxfer_impl_relax_begin();
    err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s);
    if (sync)
        return cuxfer_impl_copy_wait(call, err, s, rx, bytes, 0, src, dst);
    return cuxfer_impl_debug_sync(err, s);
}

/* cudaMemcpyAsync with cuxfer's checks (man 3 cuxfer_copy2d_async). */
CUXFER_API cudaError_t cuxfer_copy_async(void *dst, const void *src, size_t bytes,
                                         cudaStream_t s)
{
    return cuxfer_impl_copy("cuxfer_copy_async", dst, src, bytes, s, 0);
}

/* cudaMemcpy with cuxfer's checks (man 3 cuxfer_copy). */
CUXFER_API cudaError_t cuxfer_copy(void *dst, const void *src, size_t bytes)
{
    return cuxfer_impl_copy("cuxfer_copy", dst, src, bytes, (cudaStream_t)0, 1);
}

/* cuxfer_copy2d_async's checks, synchronously, ordered like cuxfer_copy. */
CUXFER_API cudaError_t cuxfer_copy2d(const cuxfer_view *dst, const cuxfer_view *src)
{
    return cuxfer_impl_copy2d("cuxfer_copy2d", dst, src, (cudaStream_t)0, 1);
}

/* ------------------------------------------------------------------------
 * 7. Scheduling: stream pools, events and timers, stream dependencies,
 *    completion callbacks and the latch
 * ------------------------------------------------------------------------ */

/* Wait arguments: block until done, or return cudaErrorNotReady at once. */
#define CUXFER_NOWAIT 0
#define CUXFER_WAIT 1
/* cuxfer_stream_pool_create flag: blocking streams (default: non-blocking). */
#define CUXFER_STREAM_BLOCKING 0x100u
/* The most streams one pool holds. */
#define CUXFER_STREAM_POOL_MAX 1024

/* A fixed set of streams on one device (man 3 cuxfer_stream_pool). */
struct cuxfer_stream_pool {
    cudaStream_t *streams;
    int count;
    int device;            /* device current at creation */
    int priority;          /* the priority actually used (after clamping) */
    unsigned flags;        /* cudaStreamNonBlocking or cudaStreamDefault */
    unsigned char *leased; /* 1 while leased; written under mu, read atomically */
    int owns;              /* 1: the pool created (and destroys) the streams */
    int leases;            /* streams leased now */
    unsigned next;         /* round-robin counter */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

CUXFER_API cudaError_t cuxfer_impl_pool_count(const char *call, int count)
{
    if (count < 1 || count > CUXFER_STREAM_POOL_MAX)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: count %d is outside 1..%d", call,
                                count, CUXFER_STREAM_POOL_MAX);
    return cudaSuccess;
}

/* The pool's arrays, for a count already checked (cuxfer_impl_pool_count). */
CUXFER_API cudaError_t cuxfer_impl_pool_init(cuxfer_stream_pool *p, int count)
{
    memset(p, 0, sizeof *p);
    p->streams = (cudaStream_t *)calloc((size_t)count, sizeof *p->streams);
    p->leased = (unsigned char *)calloc((size_t)count, 1);
    if (!p->streams || !p->leased) {
        free(p->streams);
        free(p->leased);
        p->streams = NULL;
        p->leased = NULL;
        return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                "stream pool: out of host memory for %d streams", count);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->device = cuxfer_impl_current_device();
    return cudaSuccess;
}

/* Release a pool (man 3 cuxfer_stream_pool); refused while streams are leased. */
CUXFER_API cudaError_t cuxfer_stream_pool_destroy(cuxfer_stream_pool *p)
{
    cudaError_t first = cudaSuccess;
    int i, saved = -1;
    if (!p || !p->streams)
        return cudaSuccess;
    if (__atomic_load_n(&p->leases, __ATOMIC_ACQUIRE) > 0)
        return cuxfer_impl_fail(cudaErrorNotPermitted,
                                "cuxfer_stream_pool_destroy: %d stream(s) still leased",
                                p->leases);
    if (p->owns && cuxfer_impl_use_device(p->device, &saved) != cudaSuccess)
        (void)cudaGetLastError();
    for (i = 0; p->owns && i < p->count; ++i)
        cuxfer_impl_keep(&first, cuxfer_impl_stream_drop(p->streams[i]));
    if (p->owns)
        cuxfer_impl_restore_device(saved);
    free(p->streams);
    free(p->leased);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    memset(p, 0, sizeof *p);
    return first;
}

/* The checks of both creates that need only the arguments, before any CUDA
 * call (man 3 cuxfer, ERRORS); the pool is zeroed from here on. */
CUXFER_API cudaError_t cuxfer_impl_pool_args(const char *call, cuxfer_stream_pool *p, int count,
                                             unsigned flags)
{
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: pool is NULL", call);
    memset(p, 0, sizeof *p);
    if (flags & ~(CUXFER_STREAM_BLOCKING | (unsigned)cudaStreamNonBlocking))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: unknown flags 0x%x", call, flags);
    return cuxfer_impl_pool_count(call, count);
}

/* Both creates after cuxfer_impl_pool_args, on the current device; `call`
 * names the one made in the reason. */
CUXFER_API cudaError_t cuxfer_impl_pool_create_here(const char *call, cuxfer_stream_pool *p,
                                                    int count, unsigned flags, int priority)
{
    int least = 0, greatest = 0, i;
    unsigned sflags;
    cudaError_t err;
    CUXFER_TRY(cuxfer_impl_pool_init(p, count));
    sflags = (flags & CUXFER_STREAM_BLOCKING) ? cudaStreamDefault : cudaStreamNonBlocking;
    err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (err != cudaSuccess) {
        (void)cuxfer_stream_pool_destroy(p);
        return cuxfer_impl_fail_cuda(err, "%s: cudaDeviceGetStreamPriorityRange: %s", call,
                                     cudaGetErrorName(err));
    }
    priority = priority > least ? least : priority < greatest ? greatest : priority;
    p->priority = priority;
    p->flags = sflags;
    p->owns = 1;
    p->count = count;
    for (i = 0; i < count; ++i) {
        err = cuxfer_impl_stream_create(&p->streams[i], sflags, priority);
        if (err != cudaSuccess) {
            p->streams[i] = NULL;
            (void)cuxfer_stream_pool_destroy(p);
            return cuxfer_impl_fail_cuda(err, "%s: stream %d of %d: "
                                         "cudaStreamCreateWithPriority: %s", call, i, count,
                                         cudaGetErrorName(err));
        }
    }
    return cudaSuccess;
}

/* Both creates on `device` (>= 0) after cuxfer_impl_pool_args; the current
 * device is restored. */
CUXFER_API cudaError_t cuxfer_impl_pool_create_on(const char *call, cuxfer_stream_pool *p,
                                                  int device, int count, unsigned flags,
                                                  int priority)
{
    int saved = -1;
    cudaError_t err = cuxfer_impl_use_device(device, &saved);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "%s: device %d: %s", call, device,
                                     cudaGetErrorName(err));
    err = cuxfer_impl_pool_create_here(call, p, count, flags, priority);
    cuxfer_impl_restore_device(saved);
    return err;
}

/* cuxfer_stream_pool_create on `device`; the current device is restored. */
CUXFER_API cudaError_t cuxfer_stream_pool_create_on(cuxfer_stream_pool *p, int device, int count,
                                                    unsigned flags, int priority)
{
    CUXFER_TRY(cuxfer_impl_pool_args("cuxfer_stream_pool_create_on", p, count, flags));
    if (device < 0)
        return cuxfer_impl_fail(cudaErrorInvalidDevice,
                                "cuxfer_stream_pool_create_on: device %d does not exist", device);
    return cuxfer_impl_pool_create_on("cuxfer_stream_pool_create_on", p, device, count, flags,
                                      priority);
}

/* Create `count` streams on the current device (man 3 cuxfer_stream_pool). */
CUXFER_API cudaError_t cuxfer_stream_pool_create(cuxfer_stream_pool *p, int count,
                                                 unsigned flags, int priority)
{
    static const char call[] = "cuxfer_stream_pool_create";
    int dev;
    CUXFER_TRY(cuxfer_impl_pool_args(call, p, count, flags));
    dev = cuxfer_impl_current_device();
    if (dev < 0) /* no device: CUDA's own error, from the first stream */
        return cuxfer_impl_pool_create_here(call, p, count, flags, priority);
    return cuxfer_impl_pool_create_on(call, p, dev, count, flags, priority);
}

/* A pool over the caller's streams, of the current device, still theirs. */
CUXFER_API cudaError_t cuxfer_stream_pool_wrap(cuxfer_stream_pool *p,
                                               const cudaStream_t *streams, int count)
{
    int i, prio = 0;
    unsigned fl = 0;
    if (p)
        memset(p, 0, sizeof *p);
    if (!p || !streams)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stream_pool_wrap: %s is NULL",
                                p ? "streams" : "pool");
    CUXFER_TRY(cuxfer_impl_pool_count("cuxfer_stream_pool_wrap", count)); /* before the array */
    for (i = 0; i < count; ++i)
        if (cuxfer_impl_is_default_stream(streams[i]))
            return cuxfer_impl_fail(cudaErrorInvalidValue,
                                    "cuxfer_stream_pool_wrap: streams[%d] is %s; the pool "
                                    "never hands out a default stream", i,
                                    !streams[i] ? "stream 0"
                                    : streams[i] == cudaStreamLegacy ? "cudaStreamLegacy"
                                                                     : "cudaStreamPerThread");
    CUXFER_TRY(cuxfer_impl_pool_init(p, count));
    memcpy(p->streams, streams, (size_t)count * sizeof *streams);
    p->count = count;
    if (cudaStreamGetPriority(streams[0], &prio) != cudaSuccess ||
        cudaStreamGetFlags(streams[0], &fl) != cudaSuccess)
        (void)cudaGetLastError();
    p->priority = prio;
    p->flags = fl;
    return cudaSuccess;
}

/* The next stream in round-robin order that is not leased, lock-free: one
 * turn of the counter a call, then every stream from there (turns that
 * other threads take meanwhile must not skip a free stream). */
CUXFER_API cudaError_t cuxfer_stream_pool_next(cuxfer_stream_pool *p, cudaStream_t *s)
{
    int tries, i, first;
    if (s)
        *s = NULL; /* set on every path: no -Wmaybe-uninitialized after CUXFER_CHECK */
    if (!p || !s || !p->streams)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stream_pool_next: %s",
                                !s ? "stream pointer is NULL" : "empty pool");
    first = (int)(__atomic_fetch_add(&p->next, 1u, __ATOMIC_RELAXED) % (unsigned)p->count);
    for (tries = 0; tries < p->count; ++tries) {
        i = (first + tries) % p->count;
        if (!__atomic_load_n(&p->leased[i], __ATOMIC_ACQUIRE)) {
            *s = p->streams[i];
            return cudaSuccess;
        }
    }
    return cuxfer_impl_fail(cudaErrorNotReady,
                            "cuxfer_stream_pool_next: all %d streams are leased", p->count);
}

/* Lease a stream for exclusive use until cuxfer_stream_pool_release. */
CUXFER_API cudaError_t cuxfer_stream_pool_acquire(cuxfer_stream_pool *p, int wait,
                                                  cudaStream_t *s)
{
    int i;
    if (s)
        *s = NULL; /* set on every path */
    if (!p || !s || !p->streams)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stream_pool_acquire: %s",
                                !s ? "stream pointer is NULL" : "empty pool");
    pthread_mutex_lock(&p->mu);
    for (;;) {
        for (i = 0; i < p->count; ++i)
            if (!p->leased[i])
                break;
        if (i < p->count || wait != CUXFER_WAIT)
            break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    if (i == p->count) {
        pthread_mutex_unlock(&p->mu);
        return cuxfer_impl_fail(cudaErrorNotReady,
                                "cuxfer_stream_pool_acquire: all %d streams are leased",
                                p->count);
    }
    __atomic_store_n(&p->leased[i], 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&p->leases, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&p->mu);
    *s = p->streams[i];
    return cudaSuccess;
}

/* Return a leased stream; work queued on it keeps running. */
CUXFER_API cudaError_t cuxfer_stream_pool_release(cuxfer_stream_pool *p, cudaStream_t s)
{
    int i;
    if (!p || !p->streams)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stream_pool_release: empty pool");
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < p->count; ++i)
        if (p->streams[i] == s && p->leased[i])
            break;
    if (i == p->count) {
        pthread_mutex_unlock(&p->mu);
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_stream_pool_release: stream %p is not leased from "
                                "this pool", (void *)s);
    }
    __atomic_store_n(&p->leased[i], 0, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&p->leases, 1, __ATOMIC_ACQ_REL);
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return cudaSuccess;
}

/* Wait for every stream of the pool; the first error is returned. */
CUXFER_API cudaError_t cuxfer_stream_pool_sync(cuxfer_stream_pool *p)
{
    cudaError_t first = cudaSuccess;
    int i;
    if (!p || !p->streams)
        return cudaSuccess;
    for (i = 0; i < p->count; ++i)
        cuxfer_impl_keep(&first, cuxfer_impl_stream_sync(p->streams[i]));
    return first;
}

/* cuxfer_timer_options flags: zeroed options mean the current device. */
#define CUXFER_TIMER_BLOCKING_SYNC 0x1u
#define CUXFER_TIMER_ON_DEVICE 0x2u

/* Options of cuxfer_timer_create_with; {0} (or NULL) means the defaults. */
struct cuxfer_timer_options {
    unsigned flags; /* CUXFER_TIMER_BLOCKING_SYNC | CUXFER_TIMER_ON_DEVICE */
    int device;     /* the events' device, with CUXFER_TIMER_ON_DEVICE */
};

/* Two events bracketing work on a stream.  Safe from one thread at a time. */
struct cuxfer_timer {
    cudaEvent_t start, stop;
    int state;                 /* 0 idle, 1 started, 2 stopped */
    int device;                /* the events' device; start and stop switch to it */
    unsigned flags;            /* the options' flags */
    cudaStream_t start_stream; /* where the start was recorded: a stop on
                                  another stream first waits for it */
};

/* Release a timer's events; safe on a zeroed timer. */
CUXFER_API cudaError_t cuxfer_timer_destroy(cuxfer_timer *t)
{
    cudaError_t first = cudaSuccess;
    if (!t)
        return cudaSuccess;
    cuxfer_impl_keep(&first, cuxfer_impl_event_drop(t->start));
    cuxfer_impl_keep(&first, cuxfer_impl_event_drop(t->stop));
    memset(t, 0, sizeof *t);
    return first;
}

/* Both creates; `call` names the one made in the reason. */
CUXFER_API cudaError_t cuxfer_impl_timer_create(const char *call, cuxfer_timer *t,
                                                const cuxfer_timer_options *opt)
{
    cuxfer_timer_options o;
    unsigned evflags;
    int saved = -1;
    cudaError_t err;
    if (!t)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: timer is NULL", call);
    memset(t, 0, sizeof *t);
    memset(&o, 0, sizeof o);
    if (opt)
        o = *opt;
    if (o.flags & ~(CUXFER_TIMER_BLOCKING_SYNC | CUXFER_TIMER_ON_DEVICE))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: unknown flags 0x%x", call, o.flags);
    if ((o.flags & CUXFER_TIMER_ON_DEVICE) &&
        (o.device < 0 || o.device >= CUXFER_IMPL_MAX_DEVICES))
        return cuxfer_impl_fail(cudaErrorInvalidDevice, "%s: device %d is not a device", call,
                                o.device);
    t->device = (o.flags & CUXFER_TIMER_ON_DEVICE) ? o.device : cuxfer_impl_current_device();
    t->flags = o.flags;
    evflags = (o.flags & CUXFER_TIMER_BLOCKING_SYNC) ? (unsigned)cudaEventBlockingSync
                                                     : (unsigned)cudaEventDefault;
    err = cuxfer_impl_use_device(t->device, &saved);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&t->start, evflags);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&t->stop, evflags);
    cuxfer_impl_restore_device(saved);
    if (err != cudaSuccess) {
        (void)cuxfer_timer_destroy(t);
        return cuxfer_impl_fail_cuda(err, "%s: device %d: %s", call,
                                     (o.flags & CUXFER_TIMER_ON_DEVICE) ? o.device : -1,
                                     cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* cuxfer_timer_create with options (NULL: the defaults). */
CUXFER_API cudaError_t cuxfer_timer_create_with(cuxfer_timer *t, const cuxfer_timer_options *opt)
{
    return cuxfer_impl_timer_create("cuxfer_timer_create_with", t, opt);
}

/* A timer on the current device with spinning waits. */
CUXFER_API cudaError_t cuxfer_timer_create(cuxfer_timer *t)
{
    return cuxfer_impl_timer_create("cuxfer_timer_create", t, NULL);
}

/* Timers measure real launches: their events inside a capture would become
 * graph nodes that cudaEventElapsedTime cannot read. */
CUXFER_API cudaError_t cuxfer_impl_timer_stream_ok(const char *call, cudaStream_t s)
{
    int cap;
    CUXFER_TRY(cuxfer_impl_stream_usable(call, "stream", s, &cap));
    if (cap)
        return cuxfer_impl_fail(cudaErrorStreamCaptureUnsupported,
                                "%s: stream %p is being captured into a graph; a timer "
                                "times launches, not captures", call, (void *)s);
    return cudaSuccess;
}

/* Mark the start on stream s (a stream of the timer's device). */
CUXFER_API cudaError_t cuxfer_timer_start(cuxfer_timer *t, cudaStream_t s)
{
    int saved;
    cudaError_t err;
    if (!t || !t->start)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_timer_start: timer not created");
    CUXFER_TRY(cuxfer_impl_timer_stream_ok("cuxfer_timer_start", s));
    t->state = 0;
    err = cuxfer_impl_use_device(t->device, &saved); /* the events' device */
    if (err == cudaSuccess)
        err = cudaEventRecord(t->start, s);
    cuxfer_impl_restore_device(saved);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_timer: cannot record on stream %p: %s (the "
                                     "timer's events belong to device %d: start and stop go "
                                     "on streams of that device)", (void *)s,
                                     cudaGetErrorName(err), t->device);
    t->start_stream = s;
    t->state = 1;
    return cudaSuccess;
}

/* Mark the stop on s; another stream first waits for the start event. */
CUXFER_API cudaError_t cuxfer_timer_stop(cuxfer_timer *t, cudaStream_t s)
{
    int saved;
    cudaError_t err;
    if (!t || !t->stop)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_timer_stop: timer not created");
    if (t->state == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_timer_stop: the timer was not started");
    CUXFER_TRY(cuxfer_impl_timer_stream_ok("cuxfer_timer_stop", s));
#if CUDART_VERSION >= 12080
    /* Another device's stream would take the wait for the start and then
     * refuse the record: refuse it before anything is queued. */
    if (!cuxfer_impl_is_default_stream(s)) {
        int sd = cuxfer_impl_stream_device(s);
        if (sd >= 0 && sd != t->device)
            return cuxfer_impl_fail(cudaErrorInvalidResourceHandle,
                                    "cuxfer_timer_stop: stream %p is device %d's; the timer's "
                                    "events belong to device %d", (void *)s, sd, t->device);
    }
#endif
    err = cuxfer_impl_use_device(t->device, &saved);
    if (err == cudaSuccess && s != t->start_stream)
        err = cudaStreamWaitEvent(s, t->start, 0);
    if (err == cudaSuccess)
        err = cudaEventRecord(t->stop, s);
    cuxfer_impl_restore_device(saved);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_timer_stop: stream %p (timer on device %d): %s",
                                     (void *)s, t->device, cudaGetErrorName(err));
    t->state = 2;
    return cudaSuccess;
}

/* Milliseconds between start and stop (man 3 cuxfer_timer): the stop is
 * ordered after the start, so the stop alone says whether it is complete. */
CUXFER_API cudaError_t cuxfer_timer_ms(cuxfer_timer *t, int wait, float *ms)
{
    cudaError_t err;
    if (ms)
        *ms = NAN;
    if (CUXFER_IMPL_UNLIKELY(!t || !ms))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_timer_ms: %s is NULL",
                                t ? "ms" : "timer");
    if (CUXFER_IMPL_UNLIKELY(t->state != 2))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_timer_ms: the timer %s",
                                t->state == 0 ? "was not started" : "was not stopped");
    err = wait == CUXFER_WAIT ? cuxfer_impl_event_sync(t->stop) : cuxfer_impl_event_query(t->stop);
    CUXFER_TRY(err);
    err = cudaEventElapsedTime(ms, t->start, t->stop);
    if (err != cudaSuccess)
        *ms = NAN;
    return err;
}

/* Gigabytes (1e9 bytes) per second for bytes moved in ms; 0 for ms <= 0. */
CUXFER_API double cuxfer_gbps(size_t bytes, float ms)
{
    return ms > 0.0f ? (double)bytes / ((double)ms * 1e6) : 0.0;
}

/* The event that orders two streams lives for one call (doc/DESIGN.md,
 * section 3); made (record_here) and destroyed Relaxed: no stream. */
CUXFER_API void cuxfer_impl_order_event_drop(cudaEvent_t ev)
{
    cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
    if (cuxfer_impl_relax_done(rx, cuxfer_impl_event_drop(ev)) != cudaSuccess)
        (void)cudaGetLastError();
}

/* Record *ev on s, `dev` current: an event of that device, made (Relaxed)
 * when there is none or *ev_dev says it is another's. */
CUXFER_API cudaError_t cuxfer_impl_record_here(cudaStream_t s, cudaEvent_t *ev, int *ev_dev,
                                               int dev)
{
    cudaError_t err;
    if (*ev && *ev_dev != dev) {
        cuxfer_impl_order_event_drop(*ev);
        *ev = NULL;
    }
    if (!*ev) {
        err = cuxfer_impl_event_create(ev, cudaEventDisableTiming); /* Relaxed */
        if (err != cudaSuccess) {
            *ev = NULL;
            (void)cudaGetLastError();
            return err;
        }
        *ev_dev = dev;
    }
    return cudaEventRecord(*ev, s);
}

/* Record *ev on s as an event of s's device, leaving that device current
 * (*saved: the one to restore).  Before CUDA 12.8, which tells the device,
 * every device is tried (a record on another's stream changes nothing). */
CUXFER_API cudaError_t cuxfer_impl_stream_record(cudaStream_t s, cudaEvent_t *ev, int *ev_dev,
                                             int *saved)
{
    int dev = cuxfer_impl_stream_device(s); /* a query, run Relaxed */
    cudaError_t err;
    if (dev < 0 || dev >= CUXFER_IMPL_MAX_DEVICES)
        dev = cuxfer_impl_current_device();
    err = cuxfer_impl_use_device(dev, saved);
    if (err == cudaSuccess)
        err = cuxfer_impl_record_here(s, ev, ev_dev, dev);
#if CUDART_VERSION < 12080
    if (err == cudaErrorInvalidResourceHandle || err == cudaErrorInvalidValue) {
        cudaError_t first = err;
        int n = 0, i;
        (void)cudaGetLastError();
        *saved = dev; /* nothing was switched (dev is current); the loop switches */
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            (void)cudaGetLastError();
            n = 0;
        }
        for (i = 0; i < n && i < CUXFER_IMPL_MAX_DEVICES && err != cudaSuccess; ++i) {
            if (i == dev)
                continue;
            err = cudaSetDevice(i);
            if (err == cudaSuccess)
                err = cuxfer_impl_record_here(s, ev, ev_dev, i);
            if (err != cudaSuccess)
                (void)cudaGetLastError();
        }
        if (err != cudaSuccess) {
            err = first;
            cuxfer_impl_order_event_drop(*ev);
            *ev = NULL;
        }
    }
#endif
    return err;
}

/* Record a fresh ordering event on `signaler` (cuxfer_impl_stream_record);
 * the caller drops *ev after its waits and restores *saved. */
CUXFER_API cudaError_t cuxfer_impl_mark(const char *call, cudaStream_t signaler,
                                        cudaEvent_t *ev, int *saved)
{
    int cur = cuxfer_impl_current_device(), ev_dev = -1;
    cudaError_t err;
    *saved = -1;
    *ev = NULL;
    if (cur < 0 || cur >= CUXFER_IMPL_MAX_DEVICES)
        return cuxfer_impl_fail(cudaErrorInvalidDevice, "%s: no current device", call);
    err = cuxfer_impl_stream_record(signaler, ev, &ev_dev, saved);
    if (err != cudaSuccess) {
        cuxfer_impl_order_event_drop(*ev);
        *ev = NULL;
        return cuxfer_impl_fail_cuda(err, "%s: cannot record on signaler stream %p: %s", call,
                                     (void *)signaler, cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* Refuse, before anything is queued, what would break a capture: a
 * capturing waiter and a signaler outside its capture (the dependency would
 * leave the graph), or an unusable signaler.  *cap_sig: it is capturing. */
CUXFER_API cudaError_t cuxfer_impl_wait_check(const char *call, cudaStream_t waiter,
                                              int waiter_cap, cudaStream_t signaler,
                                              int *cap_sig)
{
    CUXFER_TRY(cuxfer_impl_stream_usable(call, "signaler stream", signaler, cap_sig));
    if (waiter_cap && !*cap_sig)
        return cuxfer_impl_fail(cudaErrorStreamCaptureIsolation,
                                "%s: waiter stream %p is being captured but signaler stream %p "
                                "is not: a graph cannot wait for work outside it", call,
                                (void *)waiter, (void *)signaler);
    return cudaSuccess;
}

/* waiter waits for signaler, both already checked. */
CUXFER_API cudaError_t cuxfer_impl_wait1(const char *call, cudaStream_t waiter,
                                         cudaStream_t signaler)
{
    cudaEvent_t ev;
    int saved;
    cudaError_t err = cuxfer_impl_mark(call, signaler, &ev, &saved);
    if (err == cudaSuccess) {
        err = cudaStreamWaitEvent(waiter, ev, 0);
        if (err != cudaSuccess)
            err = cuxfer_impl_fail_cuda(err, "%s: waiter stream %p cannot wait: %s", call,
                                        (void *)waiter, cudaGetErrorName(err));
        cuxfer_impl_order_event_drop(ev);
    }
    cuxfer_impl_restore_device(saved);
    return err;
}

/* Make `waiter` wait for the work queued so far on `signaler` (man 3 cuxfer_timer). */
CUXFER_API cudaError_t cuxfer_stream_wait(cudaStream_t waiter, cudaStream_t signaler)
{
    int cw, cs;
    if (waiter == signaler)
        return cudaSuccess;
    CUXFER_TRY(cuxfer_impl_stream_usable("cuxfer_stream_wait", "waiter stream", waiter, &cw));
    CUXFER_TRY(cuxfer_impl_wait_check("cuxfer_stream_wait", waiter, cw, signaler, &cs));
    return cuxfer_impl_wait1("cuxfer_stream_wait", waiter, signaler);
}

/* Fan-in, checked before anything is queued (waits queued stay on a
 * failure); check_only: the checks alone (a ring's fences, man 3 cuxfer_ring). */
CUXFER_API cudaError_t cuxfer_impl_wait_all(cudaStream_t waiter, const cudaStream_t *signalers,
                                            int n, int check_only)
{
    static const char call[] = "cuxfer_stream_wait_all";
    int cw, cs, i, any = 0;
    if (n < 0 || (n > 0 && !signalers))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %d signalers%s", call, n,
                                n < 0 ? "" : " in a NULL array");
    for (i = 0; i < n; ++i)
        any |= signalers[i] != waiter;
    if (!any) /* nothing to wait for: nothing asked, as cuxfer_stream_all_wait */
        return cudaSuccess;
    CUXFER_TRY(cuxfer_impl_stream_usable(call, "waiter stream", waiter, &cw));
    for (i = 0; i < n; ++i)
        if (signalers[i] != waiter)
            CUXFER_TRY(cuxfer_impl_wait_check(call, waiter, cw, signalers[i], &cs));
    if (check_only)
        return cudaSuccess;
    for (i = 0; i < n; ++i)
        if (signalers[i] != waiter)
            CUXFER_TRY(cuxfer_impl_wait1(call, waiter, signalers[i]));
    return cudaSuccess;
}

/* Make `waiter` wait for each of n signalers (man 3 cuxfer_timer). */
CUXFER_API cudaError_t cuxfer_stream_wait_all(cudaStream_t waiter, const cudaStream_t *signalers,
                                              int n)
{
    return cuxfer_impl_wait_all(waiter, signalers, n, 0);
}

/* Fan-out with one event record, checked before anything is queued;
 * check_only as cuxfer_impl_wait_all. */
CUXFER_API cudaError_t cuxfer_impl_all_wait(const cudaStream_t *waiters, int n,
                                            cudaStream_t signaler, int check_only)
{
    static const char call[] = "cuxfer_stream_all_wait";
    cudaEvent_t ev;
    int cw, cs = 0, i, saved, any = 0;
    cudaError_t err;
    if (n < 0 || (n > 0 && !waiters))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %d waiters%s", call, n,
                                n < 0 ? "" : " in a NULL array");
    for (i = 0; i < n; ++i) {
        if (waiters[i] == signaler)
            continue;
        CUXFER_TRY(cuxfer_impl_stream_usable(call, "waiter stream", waiters[i], &cw));
        CUXFER_TRY(cuxfer_impl_wait_check(call, waiters[i], cw, signaler, &cs));
        any = 1;
    }
    if (!any || check_only)
        return cudaSuccess;
    err = cuxfer_impl_mark(call, signaler, &ev, &saved);
    for (i = 0; i < n && err == cudaSuccess; ++i) {
        if (waiters[i] == signaler)
            continue;
        err = cudaStreamWaitEvent(waiters[i], ev, 0);
        if (err != cudaSuccess)
            err = cuxfer_impl_fail_cuda(err, "%s: waiters[%d] (stream %p) cannot wait: %s", call,
                                        i, (void *)waiters[i], cudaGetErrorName(err));
    }
    cuxfer_impl_order_event_drop(ev);
    cuxfer_impl_restore_device(saved);
    return err;
}

/* Make each of n waiters wait for `signaler` (man 3 cuxfer_timer). */
CUXFER_API cudaError_t cuxfer_stream_all_wait(const cudaStream_t *waiters, int n,
                                              cudaStream_t signaler)
{
    return cuxfer_impl_all_wait(waiters, n, signaler, 0);
}

/* Fan-out: every stream of the pool waits for the work queued so far on s. */
CUXFER_API cudaError_t cuxfer_stream_pool_wait(cuxfer_stream_pool *p, cudaStream_t s)
{
    if (!p || !p->streams)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stream_pool_wait: empty pool");
    return cuxfer_stream_all_wait(p->streams, p->count, s);
}

/* Fan-in: s waits for the work queued so far on every stream of the pool. */
CUXFER_API cudaError_t cuxfer_stream_wait_pool(cudaStream_t s, cuxfer_stream_pool *p)
{
    if (!p || !p->streams)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stream_wait_pool: empty pool");
    return cuxfer_stream_wait_all(s, p->streams, p->count);
}

/* Timing-free events handed out round robin (man 3 cuxfer_timer). */
struct cuxfer_event_pool {
    cudaEvent_t *events;
    int count;
    unsigned next;
};

/* Release the events; safe on a zeroed pool. */
CUXFER_API cudaError_t cuxfer_event_pool_destroy(cuxfer_event_pool *p)
{
    cudaError_t first = cudaSuccess;
    int i;
    if (!p || !p->events)
        return cudaSuccess;
    for (i = 0; i < p->count; ++i)
        cuxfer_impl_keep(&first, cuxfer_impl_event_drop(p->events[i]));
    free(p->events);
    memset(p, 0, sizeof *p);
    return first;
}

CUXFER_API cudaError_t cuxfer_event_pool_create(cuxfer_event_pool *p, int count)
{
    int i;
    cudaError_t err;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_event_pool_create: pool is NULL");
    memset(p, 0, sizeof *p);
    if (count < 1 || count > 65536)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_event_pool_create: count %d is outside 1..65536", count);
    p->events = (cudaEvent_t *)calloc((size_t)count, sizeof *p->events);
    if (!p->events)
        return cuxfer_impl_fail(cudaErrorMemoryAllocation, "cuxfer_event_pool_create: out of memory");
    p->count = count;
    for (i = 0; i < count; ++i) {
        err = cuxfer_impl_event_create(&p->events[i], cudaEventDisableTiming);
        if (err != cudaSuccess) {
            p->events[i] = NULL;
            (void)cudaGetLastError();
            (void)cuxfer_event_pool_destroy(p);
            return err;
        }
    }
    return cudaSuccess;
}

/* The next event, round robin, back after `count` calls.  The index stays
 * in 0..count-1: a free-running counter modulo count would repeat an event
 * where it wraps at 2^32 unless count divides 2^32. */
CUXFER_API cudaEvent_t cuxfer_event_pool_next(cuxfer_event_pool *p)
{
    unsigned seen, idx, nxt, n;
    CUXFER_ASSERT(p && p->events && p->count > 0);
    n = (unsigned)p->count;
    seen = __atomic_load_n(&p->next, __ATOMIC_RELAXED);
    do {
        idx = seen % n; /* also mends a counter left out of range */
        nxt = idx + 1 == n ? 0 : idx + 1;
    } while (!__atomic_compare_exchange_n(&p->next, &seen, nxt, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return p->events[idx];
}

/* Run fn(arg) once the work queued so far on s is done (cudaLaunchHostFunc). */
CUXFER_API cudaError_t cuxfer_on_complete(cudaStream_t s, void (*fn)(void *), void *arg)
{
    int cap;
    cudaError_t err;
    if (!fn)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_on_complete: fn is NULL");
    /* The legacy stream while a blocking stream is captured: queueing on
     * it would invalidate that capture, so refuse first. */
    CUXFER_TRY(cuxfer_impl_stream_usable("cuxfer_on_complete", "stream", s, &cap));
    err = cudaLaunchHostFunc(s, fn, arg);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_on_complete: stream %p: cudaLaunchHostFunc: %s",
                                     (void *)s, cudaGetErrorName(err));
    return cudaSuccess;
}

/* What a captured cuxfer_on_done calls, owned by the graph (a user object). */
struct cuxfer_impl_done {
    cudaStreamCallback_t fn;
    void *arg;
    cudaStream_t stream;
};

CUXFER_API void CUDART_CB cuxfer_impl_done_run(void *p)
{
    struct cuxfer_impl_done *d = (struct cuxfer_impl_done *)p;
    d->fn(d->stream, cudaSuccess, d->arg);
}

CUXFER_API void CUDART_CB cuxfer_impl_done_free(void *p) { free(p); }

/* The graph s is being captured into, or NULL (with the error). */
CUXFER_API cudaError_t cuxfer_impl_capture_graph(cudaStream_t s, cudaGraph_t *g)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaError_t err;
    *g = NULL;
#if CUDART_VERSION >= 13000 /* 7 arguments from 13; 12 names the 6-argument form so */
    err = cudaStreamGetCaptureInfo(s, &st, NULL, g, NULL, NULL, NULL);
#elif CUDART_VERSION >= 12000
    err = cudaStreamGetCaptureInfo(s, &st, NULL, g, NULL, NULL);
#else
    err = cudaStreamGetCaptureInfo_v2(s, &st, NULL, g, NULL, NULL);
#endif
    if (err == cudaSuccess && (st != cudaStreamCaptureStatusActive || !*g))
        err = cudaErrorStreamCaptureInvalidated;
    return err;
}

/* A captured cuxfer_on_done: a host node calling fn with cudaSuccess. */
CUXFER_API cudaError_t cuxfer_impl_on_done_captured(cudaStream_t s, cudaStreamCallback_t fn,
                                                    void *arg)
{
    struct cuxfer_impl_done *d;
    cudaUserObject_t obj = NULL;
    cudaGraph_t g;
    cuxfer_impl_relax rx;
    cudaError_t err = cuxfer_impl_capture_graph(s, &g);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_on_done: stream %p: no capture to add to: %s",
                                     (void *)s, cudaGetErrorName(err));
    d = (struct cuxfer_impl_done *)malloc(sizeof *d);
    if (!d)
        return cuxfer_impl_fail(cudaErrorMemoryAllocation, "cuxfer_on_done: out of host memory");
    d->fn = fn;
    d->arg = arg;
    d->stream = s;
    rx = cuxfer_impl_relax_begin();
    err = cudaUserObjectCreate(&obj, d, cuxfer_impl_done_free, 1,
                               cudaUserObjectNoDestructorSync);
    if (err == cudaSuccess)
        err = cudaGraphRetainUserObject(g, obj, 1, cudaGraphUserObjectMove);
    else
        free(d);
    if (err != cudaSuccess && obj)
        (void)cudaUserObjectRelease(obj, 1); /* frees d */
    cuxfer_impl_relax_end(rx);
    if (err == cudaSuccess)
        err = cudaLaunchHostFunc(s, cuxfer_impl_done_run, d);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_on_done: stream %p (captured): %s", (void *)s,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* Call fn(s, status, arg) once everything queued so far on s is done, also
 * when the stream failed: cudaStreamAddCallback is not skipped after a
 * device error (man 3 cuxfer_on_done). */
CUXFER_API cudaError_t cuxfer_on_done(cudaStream_t s, cudaStreamCallback_t fn, void *arg)
{
    int cap;
    cudaError_t err;
    if (!fn)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_on_done: fn is NULL");
    CUXFER_TRY(cuxfer_impl_stream_usable("cuxfer_on_done", "stream", s, &cap));
    if (cap)
        return cuxfer_impl_on_done_captured(s, fn, arg);
    err = cudaStreamAddCallback(s, fn, arg, 0);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_on_done: stream %p: %s", (void *)s,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* 1 when work queued on s would go into a graph capture or break one
 * (man 3 cuxfer_on_complete), as the kit's own calls judge it. */
CUXFER_API int cuxfer_stream_is_capturing(cudaStream_t s)
{
    cudaError_t err;
    int state = cuxfer_impl_stream_state(s, &err);
    return state > 0 || err == cudaErrorStreamCaptureImplicit;
}

/* Timed waits (latch, stager) use CLOCK_MONOTONIC, and their condition
 * variables are made for it.  Every unit must agree (a latch made in one is
 * waited on in another): strict ISO C hides clock_gettime, CLOCK_MONOTONIC
 * and pthread_condattr_setclock, so there they are declared under private
 * names bound to the library's symbols (CLOCK_MONOTONIC is 1 on every
 * Linux ABI; a 64-bit time_t on 32-bit glibc has its own clock_gettime). */
#if defined(CLOCK_MONOTONIC) && defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200112L
#define CUXFER_IMPL_CLOCK CLOCK_MONOTONIC
#define cuxfer_impl_clock_gettime clock_gettime
#define cuxfer_impl_condattr_setclock pthread_condattr_setclock
#elif defined(__linux__)
#define CUXFER_IMPL_CLOCK 1
#if defined(__USE_TIME_BITS64) && defined(__TIMESIZE) && __TIMESIZE == 32
extern int cuxfer_impl_clock_gettime(int, struct timespec *) __asm__("__clock_gettime64");
#else
extern int cuxfer_impl_clock_gettime(int, struct timespec *) __asm__("clock_gettime");
#endif
extern int cuxfer_impl_condattr_setclock(pthread_condattr_t *, int)
    __asm__("pthread_condattr_setclock");
#else
#error "cuxfer.h: timed waits need CLOCK_MONOTONIC: define _POSIX_C_SOURCE=200809L before every include"
#endif

/* A condition variable whose timed waits use cuxfer_impl_deadline's clock. */
CUXFER_API void cuxfer_impl_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) == 0) {
        if (cuxfer_impl_condattr_setclock(&a, CUXFER_IMPL_CLOCK) == 0 &&
            pthread_cond_init(cv, &a) == 0) {
            pthread_condattr_destroy(&a);
            return;
        }
        pthread_condattr_destroy(&a);
    }
    pthread_cond_init(cv, NULL);
}

/* Milliseconds on the monotonic clock, for measuring waits. */
CUXFER_API double cuxfer_impl_now_ms(void)
{
    struct timespec ts;
    cuxfer_impl_clock_gettime(CUXFER_IMPL_CLOCK, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The CLOCK_MONOTONIC time ms milliseconds from now, for timed waits. */
CUXFER_API void cuxfer_impl_deadline(struct timespec *until, long ms)
{
    cuxfer_impl_clock_gettime(CUXFER_IMPL_CLOCK, until);
    until->tv_sec += ms / 1000;
    until->tv_nsec += (ms % 1000) * 1000000L;
    if (until->tv_nsec >= 1000000000L) {
        until->tv_sec += 1;
        until->tv_nsec -= 1000000000L;
    }
}

/* How many streams a latch watches at once for failures. */
#define CUXFER_LATCH_STREAMS 8

/* One stream a latch was armed on, and its own fallback event. */
struct cuxfer_latch_watch {
    cudaStream_t stream;
    cudaEvent_t event;        /* recorded before each signal queued on stream */
    unsigned long long last;  /* arm counter at its latest arm (oldest is reused) */
    int used;
};

/* A producer/consumer hand-off (man 3 cuxfer_on_complete). */
struct cuxfer_latch {
    pthread_mutex_t mu;           /* counters and failure; taken by the signal */
    pthread_mutex_t arm_mu;       /* serializes arms (watch table); never taken
                                     by the signal, so CUDA calls are made under it */
    pthread_cond_t cv;
    unsigned long long armed;     /* signals to wait for */
    unsigned long long fired;     /* signals delivered (or given up: failed arms) */
    unsigned long long credit;    /* expected in advance, not yet armed */
    unsigned long long graph_early; /* graph signals that fired before their expect */
    unsigned long long arms;      /* arm counter, for the watch table */
    int ready;
    int device;                   /* the events' device */
    cudaError_t failed;           /* first arm failure not yet cleared */
    int failed_reported;          /* a wait returned it; the next good arm clears it */
    cuxfer_latch_watch watch[CUXFER_LATCH_STREAMS];
};

/* Release a latch; armed signals must have fired (wait first). */
CUXFER_API cudaError_t cuxfer_latch_destroy(cuxfer_latch *l)
{
    cudaError_t first = cudaSuccess;
    int i, saved = -1;
    if (!l || !l->ready)
        return cudaSuccess;
    if (cuxfer_impl_use_device(l->device, &saved) != cudaSuccess)
        (void)cudaGetLastError();
    for (i = 0; i < CUXFER_LATCH_STREAMS; ++i)
        cuxfer_impl_keep(&first, cuxfer_impl_event_drop(l->watch[i].event));
    cuxfer_impl_restore_device(saved);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->arm_mu);
    pthread_cond_destroy(&l->cv);
    memset(l, 0, sizeof *l);
    return first;
}

/* Both inits on the current device, `call` the one made (for the reason). */
CUXFER_API cudaError_t cuxfer_impl_latch_init(const char *call, cuxfer_latch *l)
{
    cudaError_t err = cudaSuccess;
    int i;
    memset(l, 0, sizeof *l);
    l->device = cuxfer_impl_current_device();
    for (i = 0; i < CUXFER_LATCH_STREAMS && err == cudaSuccess; ++i) {
        err = cuxfer_impl_event_create(&l->watch[i].event, cudaEventDisableTiming);
        if (err != cudaSuccess)
            l->watch[i].event = NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->arm_mu, NULL);
    cuxfer_impl_cond_init(&l->cv);
    l->ready = 1;
    if (err != cudaSuccess) {
        (void)cuxfer_latch_destroy(l);
        return cuxfer_impl_fail_cuda(err, "%s: cudaEventCreateWithFlags: %s", call,
                                     cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* A latch on the current device, its watch events made before any capture. */
CUXFER_API cudaError_t cuxfer_latch_init(cuxfer_latch *l)
{
    if (!l)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_latch_init: latch is NULL");
    return cuxfer_impl_latch_init("cuxfer_latch_init", l);
}

/* cuxfer_latch_init on `device`; the current device is restored. */
CUXFER_API cudaError_t cuxfer_latch_init_on(cuxfer_latch *l, int device)
{
    int saved = -1;
    cudaError_t err;
    if (!l)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_latch_init_on: latch is NULL");
    memset(l, 0, sizeof *l);
    if (device < 0 || device >= CUXFER_IMPL_MAX_DEVICES)
        return cuxfer_impl_fail(cudaErrorInvalidDevice,
                                "cuxfer_latch_init_on: device %d is not a device", device);
    err = cuxfer_impl_use_device(device, &saved);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_latch_init_on: device %d: %s", device,
                                     cudaGetErrorName(err));
    err = cuxfer_impl_latch_init("cuxfer_latch_init_on", l);
    cuxfer_impl_restore_device(saved);
    return err;
}

/* The host functions behind the latch: no CUDA call, just the hand-off. */
CUXFER_API void CUDART_CB cuxfer_impl_latch_fire(void *arg)
{
    cuxfer_latch *l = (cuxfer_latch *)arg;
    pthread_mutex_lock(&l->mu);
    ++l->fired;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

/* A signal captured into a graph: each launch is announced by
 * cuxfer_latch_expect(l, 1), before or after it fires. */
CUXFER_API void CUDART_CB cuxfer_impl_latch_fire_graph(void *arg)
{
    cuxfer_latch *l = (cuxfer_latch *)arg;
    pthread_mutex_lock(&l->mu);
    ++l->fired;
    if (l->credit > 0)
        --l->credit;
    else
        ++l->graph_early;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

/* An arm that queued no signal: the caller and the waits get err, and a
 * signal declared in advance for it counts as delivered. */
CUXFER_API cudaError_t cuxfer_impl_latch_arm_failed(cuxfer_latch *l, cudaStream_t s, int capturing,
                                                    cudaError_t err, const char *what)
{
    pthread_mutex_lock(&l->mu);
    if (l->failed == cudaSuccess || l->failed_reported) {
        l->failed = err;
        l->failed_reported = 0;
    }
    if (!capturing && l->credit > 0) {
        --l->credit;
        ++l->fired;
    }
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return cuxfer_impl_fail_cuda(err, "cuxfer_latch_arm: stream %p: %s: %s", (void *)s, what,
                                 cudaGetErrorName(err));
}

/* Queue a signal on s; inside a capture it counts nothing and the watch
 * event becomes an external event-record node. */
CUXFER_API cudaError_t cuxfer_latch_arm(cuxfer_latch *l, cudaStream_t s)
{
    cuxfer_latch_watch *w = NULL;
    cudaError_t err;
    int capturing = 0, i, saved;
    if (!l || !l->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_latch_arm: latch not initialized");
    capturing = cuxfer_impl_stream_state(s, &err);
    if (capturing < 0)
        return cuxfer_impl_latch_arm_failed(l, s, 0, err, "the stream cannot be used now");
    pthread_mutex_lock(&l->arm_mu);
    for (i = 0; i < CUXFER_LATCH_STREAMS && !w; ++i)
        if (l->watch[i].used && l->watch[i].stream == s)
            w = &l->watch[i];
    for (i = 0; i < CUXFER_LATCH_STREAMS && !w; ++i)
        if (!l->watch[i].used)
            w = &l->watch[i];
    if (!w) {
        /* More streams than watched: hand the oldest watch over. */
        w = &l->watch[0];
        for (i = 1; i < CUXFER_LATCH_STREAMS; ++i)
            if (l->watch[i].last < w->last)
                w = &l->watch[i];
    }
    err = cuxfer_impl_use_device(l->device, &saved);
    if (err == cudaSuccess)
        err = capturing ? cudaEventRecordWithFlags(w->event, s, cudaEventRecordExternal)
                        : cudaEventRecord(w->event, s);
    cuxfer_impl_restore_device(saved);
    if (err != cudaSuccess) {
        pthread_mutex_unlock(&l->arm_mu);
        return cuxfer_impl_latch_arm_failed(l, s, capturing, err,
                                            "cannot record the latch's event (a stream of "
                                            "another device than the latch's?)");
    }
    w->stream = s;
    w->used = 1;
    w->last = ++l->arms;
    err = cudaLaunchHostFunc(s, capturing ? cuxfer_impl_latch_fire_graph : cuxfer_impl_latch_fire,
                             l);
    pthread_mutex_unlock(&l->arm_mu);
    if (err != cudaSuccess)
        return cuxfer_impl_latch_arm_failed(l, s, capturing, err, "cudaLaunchHostFunc");
    pthread_mutex_lock(&l->mu);
    if (!capturing) {
        if (l->credit > 0)
            --l->credit;
        else
            ++l->armed;
    }
    if (l->failed != cudaSuccess && l->failed_reported)
        l->failed = cudaSuccess;
    pthread_mutex_unlock(&l->mu);
    return cudaSuccess;
}

/* Declare n signals in advance: the next n arms outside a capture take them. */
CUXFER_API cudaError_t cuxfer_latch_expect(cuxfer_latch *l, unsigned n)
{
    unsigned long long k;
    if (!l || !l->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_latch_expect: latch not initialized");
    pthread_mutex_lock(&l->mu);
    k = l->graph_early < n ? l->graph_early : n;
    l->graph_early -= k;
    l->armed += n;
    l->credit += n - k;
    pthread_mutex_unlock(&l->mu);
    return cudaSuccess;
}

/* Query every armed stream's watch event, unlocked: a host function never waits. */
CUXFER_API cudaError_t cuxfer_impl_latch_probe(cuxfer_latch *l)
{
    cudaEvent_t ev[CUXFER_LATCH_STREAMS];
    int i, n = 0;
    cudaError_t q;
    pthread_mutex_lock(&l->arm_mu);
    for (i = 0; i < CUXFER_LATCH_STREAMS; ++i)
        if (l->watch[i].used)
            ev[n++] = l->watch[i].event;
    pthread_mutex_unlock(&l->arm_mu);
    for (i = 0; i < n; ++i) {
        q = cuxfer_impl_event_query(ev[i]);
        if (q != cudaSuccess && q != cudaErrorNotReady)
            return q;
    }
    return cudaSuccess;
}

/* Wait until every armed or expected signal fired (man 3 cuxfer_on_complete). */
CUXFER_API cudaError_t cuxfer_latch_wait(cuxfer_latch *l, long timeout_ms)
{
    struct timespec until;
    long step_ms = 1;
    double start = cuxfer_impl_now_ms();
    cudaError_t q;
    int timed_out;
    if (!l || !l->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_latch_wait: latch not initialized");
    pthread_mutex_lock(&l->mu);
    while (l->fired < l->armed) {
        cuxfer_impl_deadline(&until, step_ms);
        timed_out = pthread_cond_timedwait(&l->cv, &l->mu, &until) == ETIMEDOUT;
        if (l->fired >= l->armed)
            break;
        /* Time is measured, not counted in sleeps, so wake-ups by other
         * signals cannot stretch the wait past timeout_ms. */
        if (!timed_out && (timeout_ms < 0 || cuxfer_impl_now_ms() - start < (double)timeout_ms))
            continue;
        /* The signal is late: ask the streams' events whether one failed. */
        pthread_mutex_unlock(&l->mu);
        q = cuxfer_impl_latch_probe(l);
        pthread_mutex_lock(&l->mu);
        if (q != cudaSuccess) {
            pthread_mutex_unlock(&l->mu);
            return cuxfer_impl_fail(q, "cuxfer_latch_wait: the stream failed: %s",
                                    cudaGetErrorName(q));
        }
        if (l->fired < l->armed && timeout_ms >= 0 &&
            cuxfer_impl_now_ms() - start >= (double)timeout_ms) {
            pthread_mutex_unlock(&l->mu);
            return cuxfer_impl_fail(cudaErrorNotReady,
                                    "cuxfer_latch_wait: not signalled within %ld ms",
                                    timeout_ms);
        }
        if (step_ms < 64)
            step_ms *= 2;
    }
    q = l->failed;
    if (q != cudaSuccess)
        l->failed_reported = 1;
    pthread_mutex_unlock(&l->mu);
    if (q != cudaSuccess)
        return cuxfer_impl_fail(q, "cuxfer_latch_wait: arming failed: %s", cudaGetErrorName(q));
    return cudaSuccess;
}

/* ------------------------------------------------------------------------
 * 8. Composites: the transfer ring and graph capture
 * ------------------------------------------------------------------------ */

/* One slot of a ring (man 3 cuxfer_ring). */
struct cuxfer_ring_slot {
    int index;
    int device_id;           /* where the slot's stream, event and buffer live */
    void *host;
    void *device;
    size_t host_bytes;
    size_t device_bytes;
    cudaStream_t stream;
    cudaEvent_t done;
    cudaEvent_t start;       /* timing rings only (else NULL): start of the last submission */
    unsigned long long uses; /* submissions so far */
    int held;                /* acquired and not yet submitted (atomic) */
};

/* Options of cuxfer_ring_create; {0} means the defaults. */
struct cuxfer_ring_options {
    unsigned host_flags; /* cuxfer_host_alloc flags (default cudaHostAllocDefault) */
    int priority;        /* stream priority, clamped as in cuxfer_stream_pool_create */
    const int *devices;  /* slot i lives on devices[i % ndevices] (default: */
    int ndevices;        /* the current device only) */
    int timing;          /* non-zero: timing events, cuxfer_ring_slot_ms works */
};

/* What cuxfer_ring_submit queues on the slot's stream, in order. */
struct cuxfer_ring_job {
    size_t h2d_bytes; /* host[0, h2d_bytes) -> device[0, h2d_bytes) first */
    /* then the caller's work, queued on slot->stream (kernels, 2D copies) */
    cudaError_t (*work)(const cuxfer_ring_slot *slot, void *arg);
    void *arg;
    size_t d2h_bytes; /* device[d2h_device_offset..] -> host[d2h_host_offset..] last */
    size_t d2h_host_offset;
    size_t d2h_device_offset;
};

/* N slots used in turn (man 3 cuxfer_ring).  Only a thread that finds its
 * slot held sleeps on the mutex and condition. */
struct cuxfer_ring {
    cuxfer_ring_slot *slots;
    int count;               /* slots created: the capacity */
    int depth;               /* slots in use, 1..count */
    int device;
    unsigned long long next; /* index of the next slot to hand out, ever-growing */
    int waiters;             /* threads asleep in acquire (atomic) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Wait for every slot's last submission; the first error is returned. */
CUXFER_API cudaError_t cuxfer_ring_drain(cuxfer_ring *r)
{
    cudaError_t first = cudaSuccess;
    int i;
    if (!r || !r->slots)
        return cudaSuccess;
    for (i = 0; i < r->count; ++i)
        if (r->slots[i].done)
            cuxfer_impl_keep(&first, cuxfer_impl_event_sync(r->slots[i].done));
    return first;
}

/* Drain and free everything; safe on a zeroed ring. */
CUXFER_API cudaError_t cuxfer_ring_destroy(cuxfer_ring *r)
{
    cudaError_t first;
    int i;
    if (!r || !r->slots)
        return cudaSuccess;
    first = cuxfer_ring_drain(r);
    cuxfer_impl_kcache_flush();
    for (i = 0; i < r->count; ++i) {
        cuxfer_ring_slot *s = &r->slots[i];
        int saved;
        if (cuxfer_impl_use_device(s->device_id, &saved) != cudaSuccess)
            (void)cudaGetLastError();
        (void)cuxfer_impl_event_drop(s->done);
        (void)cuxfer_impl_event_drop(s->start);
        (void)cuxfer_impl_stream_drop(s->stream);
        (void)cuxfer_device_free(s->device);
        (void)cuxfer_host_free(s->host);
        cuxfer_impl_restore_device(saved);
    }
    free(r->slots);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    memset(r, 0, sizeof *r);
    return first;
}

/* Create `slots` slots on the current device (man 3 cuxfer_ring). */
CUXFER_API cudaError_t cuxfer_ring_create(cuxfer_ring *r, int slots, size_t host_bytes,
                                          size_t device_bytes,
                                          const cuxfer_ring_options *opt)
{
    cuxfer_ring_options o;
    int i, least = 0, greatest = 0, prio;
    cudaError_t err = cudaSuccess;
    if (!r)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_create: ring is NULL");
    memset(r, 0, sizeof *r);
    memset(&o, 0, sizeof o);
    if (opt)
        o = *opt;
    if (slots < 1 || slots > 1024)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_ring_create: %d slots is outside 1..1024", slots);
    if (o.ndevices < 0 || (o.ndevices > 0 && !o.devices))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_create: ndevices %d %s",
                                o.ndevices, o.ndevices < 0 ? "is negative"
                                                           : "without a devices array");
    for (i = 0; i < o.ndevices; ++i)
        if (o.devices[i] < 0 || o.devices[i] >= CUXFER_IMPL_MAX_DEVICES)
            return cuxfer_impl_fail(cudaErrorInvalidDevice,
                                    "cuxfer_ring_create: devices[%d] = %d is not a device",
                                    i, o.devices[i]);
    r->slots = (cuxfer_ring_slot *)calloc((size_t)slots, sizeof *r->slots);
    if (!r->slots)
        return cuxfer_impl_fail(cudaErrorMemoryAllocation, "cuxfer_ring_create: out of memory");
    r->count = slots;
    r->depth = slots;
    r->device = cuxfer_impl_current_device();
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess)
        (void)cudaGetLastError();
    prio = o.priority > least ? least : o.priority < greatest ? greatest : o.priority;
    for (i = 0; i < slots && err == cudaSuccess; ++i) {
        cuxfer_ring_slot *s = &r->slots[i];
        int saved;
        s->index = i;
        s->device_id = o.ndevices > 0 && o.devices ? o.devices[i % o.ndevices] : r->device;
        s->host_bytes = host_bytes;
        s->device_bytes = device_bytes;
        err = cuxfer_impl_use_device(s->device_id, &saved);
        /* Portable pinned memory: any slot's device may copy from it. */
        if (err == cudaSuccess && host_bytes)
            err = cuxfer_host_alloc(&s->host, host_bytes, 1,
                                    o.host_flags | (o.ndevices > 1 ? cudaHostAllocPortable : 0u));
        if (err == cudaSuccess && device_bytes)
            err = cuxfer_device_alloc(&s->device, device_bytes, 1);
        if (err == cudaSuccess)
            err = cuxfer_impl_stream_create(&s->stream, cudaStreamNonBlocking, prio);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_create(&s->done, o.timing ? cudaEventDefault
                                                              : cudaEventDisableTiming);
        if (err == cudaSuccess && o.timing)
            err = cuxfer_impl_event_create(&s->start, cudaEventDefault);
        cuxfer_impl_restore_device(saved);
    }
    if (err != cudaSuccess) {
        (void)cuxfer_ring_destroy(r);
        return cuxfer_impl_fail_cuda(err, "cuxfer_ring_create: slot %d: %s", i - 1,
                                     cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* Take a free slot: one atomic exchange, no lock. */
CUXFER_API int cuxfer_impl_ring_try_hold(cuxfer_ring_slot *s)
{
    int zero = 0;
    return __atomic_compare_exchange_n(&s->held, &zero, 1, 0, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

/* The next slot, in order, once its previous submission completed (man 3 cuxfer_ring). */
CUXFER_API cudaError_t cuxfer_ring_acquire(cuxfer_ring *r, cuxfer_ring_slot **slot)
{
    cuxfer_ring_slot *s;
    unsigned long long t;
    int depth;
    cudaError_t err;
    if (slot)
        *slot = NULL;
    if (!r || !r->slots || !slot)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_acquire: %s",
                                slot ? "ring not created" : "slot is NULL");
    depth = __atomic_load_n(&r->depth, __ATOMIC_ACQUIRE);
    t = __atomic_fetch_add(&r->next, 1ull, __ATOMIC_RELAXED);
    s = &r->slots[t % (unsigned long long)depth];
    if (!cuxfer_impl_ring_try_hold(s)) {
        /* Announce the sleeper before re-checking, so a release either sees
         * it (and signals) or happened before the re-check (which wins). */
        pthread_mutex_lock(&r->mu);
        __atomic_add_fetch(&r->waiters, 1, __ATOMIC_SEQ_CST);
        while (!cuxfer_impl_ring_try_hold(s))
            pthread_cond_wait(&r->cv, &r->mu);
        __atomic_sub_fetch(&r->waiters, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&r->mu);
    }
    err = cuxfer_impl_event_sync(s->done);
    *slot = s;
    return err;
}

/* Why a slot cannot be submitted or released on ring r, or NULL when it
 * can: the ring exists, the slot is one of its own (a slot of another ring
 * would be given back to the wrong ring's sleepers) and it is held. */
CUXFER_API const char *cuxfer_impl_ring_slot_refusal(const cuxfer_ring *r,
                                                      cuxfer_ring_slot *slot)
{
    if (!r || !r->slots)
        return "ring not created";
    if (!slot)
        return "slot is NULL";
    if (slot->index < 0 || slot->index >= r->count || &r->slots[slot->index] != slot)
        return "the slot is not one of this ring's";
    if (!__atomic_load_n(&slot->held, __ATOMIC_ACQUIRE))
        return "slot not acquired";
    return NULL;
}

/* Hand a slot back unsubmitted; locks only when a thread sleeps in acquire. */
CUXFER_API cudaError_t cuxfer_ring_release(cuxfer_ring *r, cuxfer_ring_slot *slot)
{
    int one = 1;
    const char *why = cuxfer_impl_ring_slot_refusal(r, slot);
    if (why)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_release: %s", why);
    if (!__atomic_compare_exchange_n(&slot->held, &one, 0, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_release: slot not acquired");
    if (__atomic_load_n(&r->waiters, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&r->mu);
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    return cudaSuccess;
}

/* The ring's capacity in slots; 0 for a NULL or zeroed ring. */
CUXFER_API int cuxfer_ring_slots(const cuxfer_ring *r)
{
    return r && r->slots ? r->count : 0;
}

/* The slots in use (cuxfer_ring_set_depth); 0 for a NULL or zeroed ring. */
CUXFER_API int cuxfer_ring_depth(const cuxfer_ring *r)
{
    return r && r->slots ? __atomic_load_n(&r->depth, __ATOMIC_ACQUIRE) : 0;
}

/* Use only slots 0..depth-1 from now on (man 3 cuxfer_ring). */
CUXFER_API cudaError_t cuxfer_ring_set_depth(cuxfer_ring *r, int depth)
{
    int i;
    if (!r || !r->slots)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_set_depth: ring not created");
    if (depth < 1 || depth > r->count)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_ring_set_depth: depth %d is outside 1..%d (the "
                                "ring's slots)", depth, r->count);
    for (i = 0; i < r->count; ++i)
        if (__atomic_load_n(&r->slots[i].held, __ATOMIC_ACQUIRE))
            return cuxfer_impl_fail(cudaErrorNotPermitted,
                                    "cuxfer_ring_set_depth: slot %d is held", i);
    __atomic_store_n(&r->next, 0ull, __ATOMIC_RELAXED);
    __atomic_store_n(&r->depth, depth, __ATOMIC_RELEASE);
    return cudaSuccess;
}

/* Slot i's stream, without acquiring the slot (man 3 cuxfer_ring). */
CUXFER_API cudaError_t cuxfer_ring_stream(const cuxfer_ring *r, int i, cudaStream_t *s)
{
    if (s)
        *s = NULL;
    if (!r || !r->slots || !s)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_stream: %s",
                                s ? "ring not created" : "stream pointer is NULL");
    if (i < 0 || i >= r->count)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_ring_stream: slot %d is outside 0..%d", i, r->count - 1);
    *s = r->slots[i].stream;
    return cudaSuccess;
}

/* Slot i's buffers, without acquiring the slot (man 3 cuxfer_ring). */
CUXFER_API cudaError_t cuxfer_ring_slot_buffers(const cuxfer_ring *r, int i, void **host,
                                                void **device)
{
    if (host)
        *host = NULL;
    if (device)
        *device = NULL;
    if (!r || !r->slots)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_slot_buffers: ring not created");
    if (i < 0 || i >= r->count)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_ring_slot_buffers: slot %d is outside 0..%d", i,
                                r->count - 1);
    if (host)
        *host = r->slots[i].host;
    if (device)
        *device = r->slots[i].device;
    return cudaSuccess;
}

/* The ring's streams, CUXFER_IMPL_RING_CHUNK at a time, for the fences. */
#define CUXFER_IMPL_RING_CHUNK 64

/* Both fences: the slots' streams wait for s (out) or s for them (!out). */
CUXFER_API cudaError_t cuxfer_impl_ring_fence(cuxfer_ring *r, cudaStream_t s, int out,
                                              const char *call)
{
    cudaStream_t st[CUXFER_IMPL_RING_CHUNK];
    int i, n, check;
    if (!r || !r->slots)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: ring not created", call);
    /* every group checked before any is queued: nothing queued on a refusal */
    for (check = 1; check >= 0; --check)
        for (i = 0; i < r->count; i += n) {
            for (n = 0; n < CUXFER_IMPL_RING_CHUNK && i + n < r->count; ++n)
                st[n] = r->slots[i + n].stream;
            CUXFER_TRY(out ? cuxfer_impl_all_wait(st, n, s, check)
                           : cuxfer_impl_wait_all(s, st, n, check));
        }
    return cudaSuccess;
}

/* Fan-out: every slot's stream (all slots, not only the first `depth`) waits for s. */
CUXFER_API cudaError_t cuxfer_ring_wait(cuxfer_ring *r, cudaStream_t s)
{
    return cuxfer_impl_ring_fence(r, s, 1, "cuxfer_ring_wait");
}

/* Fan-in: s waits for the work queued so far on every slot's stream. */
CUXFER_API cudaError_t cuxfer_stream_wait_ring(cudaStream_t s, cuxfer_ring *r)
{
    return cuxfer_impl_ring_fence(r, s, 0, "cuxfer_stream_wait_ring");
}

/* Milliseconds of the slot's last submission (timing rings). */
CUXFER_API cudaError_t cuxfer_ring_slot_ms(const cuxfer_ring_slot *slot, int wait, float *ms)
{
    cudaError_t err;
    if (ms)
        *ms = 0.0f;
    if (!slot || !ms)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_slot_ms: %s is NULL",
                                ms ? "slot" : "ms");
    if (!slot->start)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_ring_slot_ms: slot %d is not timed (create the "
                                "ring with cuxfer_ring_options.timing)", slot->index);
    if (slot->uses == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_ring_slot_ms: slot %d has no submission yet",
                                slot->index);
    err = wait == CUXFER_WAIT ? cuxfer_impl_event_sync(slot->done) : cuxfer_impl_event_query(slot->done);
    if (err != cudaSuccess) {
        if (err == cudaErrorNotReady)
            (void)cudaGetLastError();
        return err;
    }
    return cudaEventElapsedTime(ms, slot->start, slot->done);
}

/* Queue the job on the slot's stream and give the slot back. */
CUXFER_API cudaError_t cuxfer_ring_submit(cuxfer_ring *r, cuxfer_ring_slot *slot,
                                          const cuxfer_ring_job *job)
{
    size_t end_h, end_d;
    int saved;
    cudaError_t err = cudaSuccess, rec, e;
    const char *why = cuxfer_impl_ring_slot_refusal(r, slot);
    if (why || !job)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_ring_submit: %s",
                                why ? why : "job is NULL");
    if (job->h2d_bytes > slot->host_bytes || job->h2d_bytes > slot->device_bytes)
        err = cuxfer_impl_fail(cudaErrorInvalidValue,
                               "cuxfer_ring_submit: h2d_bytes %zu exceeds the slot's "
                               "buffers (host %zu, device %zu)", job->h2d_bytes,
                               slot->host_bytes, slot->device_bytes);
    else if (cuxfer_impl_add(job->d2h_host_offset, job->d2h_bytes, &end_h) != 0 ||
             cuxfer_impl_add(job->d2h_device_offset, job->d2h_bytes, &end_d) != 0 ||
             (job->d2h_bytes && (end_h > slot->host_bytes || end_d > slot->device_bytes)))
        err = cuxfer_impl_fail(cudaErrorInvalidValue,
                               "cuxfer_ring_submit: d2h of %zu bytes at host offset %zu, "
                               "device offset %zu exceeds the slot's buffers (host %zu, "
                               "device %zu)", job->d2h_bytes, job->d2h_host_offset,
                               job->d2h_device_offset, slot->host_bytes, slot->device_bytes);
    if (err != cudaSuccess)
        return err; /* refused: nothing queued or recorded, the slot still held */
    /* The slot's device is current for the copies and the caller's work. */
    e = cuxfer_impl_use_device(slot->device_id, &saved);
    if (e != cudaSuccess) {
        cuxfer_impl_restore_device(saved);
        return cuxfer_impl_fail_cuda(e, "cuxfer_ring_submit: cannot make slot %d's device %d "
                                     "current: %s (nothing queued, the slot still held)",
                                     slot->index, slot->device_id, cudaGetErrorName(e));
    }
    if (slot->start)
        err = cudaEventRecord(slot->start, slot->stream);
    if (err == cudaSuccess && job->h2d_bytes)
        err = cudaMemcpyAsync(slot->device, slot->host, job->h2d_bytes,
                              cudaMemcpyHostToDevice, slot->stream);
    if (err == cudaSuccess && job->work)
        err = job->work(slot, job->arg);
    if (err == cudaSuccess && job->d2h_bytes)
        err = cudaMemcpyAsync((unsigned char *)slot->host + job->d2h_host_offset,
                              (unsigned char *)slot->device + job->d2h_device_offset,
                              job->d2h_bytes, cudaMemcpyDeviceToHost, slot->stream);
    /* Mark the end even after a failure, so the next acquire of this slot
     * waits for whatever part was queued. */
    rec = cudaEventRecord(slot->done, slot->stream);
    err = cuxfer_impl_debug_sync(err == cudaSuccess ? rec : err, slot->stream);
    if (saved >= 0 && cudaSetDevice(saved) != cudaSuccess)
        (void)cudaGetLastError();
    ++slot->uses;
    (void)cuxfer_ring_release(r, slot);
    return err;
}

/* A captured stream sequence, instantiated for replay. */
struct cuxfer_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

/* Start a thread-local capture on s (man 3 cuxfer_graph); whether 0 is the
 * legacy stream (refused) follows the caller's unit. */
CUXFER_API cudaError_t cuxfer_graph_begin(cudaStream_t s)
{
    int cap;
    cudaError_t err;
    if (cuxfer_impl_is_legacy_stream(s))
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_graph_begin: %s (the legacy default stream) cannot be "
                                "captured; use a stream of your own or cudaStreamPerThread",
                                s ? "cudaStreamLegacy" : "stream 0");
    CUXFER_TRY(cuxfer_impl_stream_usable("cuxfer_graph_begin", "stream", s, &cap));
    if (cap)
        return cuxfer_impl_fail(cudaErrorIllegalState,
                                "cuxfer_graph_begin: the stream is already capturing");
    err = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_graph_begin: stream %p: %s", (void *)s,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* Release a graph; safe on a zeroed one. */
CUXFER_API cudaError_t cuxfer_graph_destroy(cuxfer_graph *g)
{
    cudaError_t e1 = cudaSuccess, e2 = cudaSuccess;
    cuxfer_impl_relax rx;
    if (!g)
        return cudaSuccess;
    rx = cuxfer_impl_relax_begin(); /* unsafe calls */
    if (g->exec)
        e1 = cudaGraphExecDestroy(g->exec);
    if (g->graph)
        e2 = cudaGraphDestroy(g->graph);
    cuxfer_impl_relax_end(rx);
    memset(g, 0, sizeof *g);
    return e1 != cudaSuccess ? e1 : e2;
}

/* End the capture on s and instantiate it (man 3 cuxfer_graph). */
CUXFER_API cudaError_t cuxfer_graph_end(cuxfer_graph *g, cudaStream_t s)
{
    cudaError_t err;
    if (!g) {
        cuxfer_graph dropped = {NULL, NULL};
        if (cudaStreamEndCapture(s, &dropped.graph) != cudaSuccess)
            (void)cudaGetLastError();
        if (cuxfer_graph_destroy(&dropped) != cudaSuccess)
            (void)cudaGetLastError();
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_graph_end: graph is NULL (the "
                                "capture on stream %p is ended all the same)", (void *)s);
    }
    /* *g is taken as uninitialized: a graph still held in it is not
     * freed (destroy it first), but garbage is never passed to CUDA. */
    memset(g, 0, sizeof *g);
    err = cudaStreamEndCapture(s, &g->graph);
    if (err == cudaSuccess) {
        /* an "unsafe" call: Relaxed, another thread's Global capture survives */
        cuxfer_impl_relax rx = cuxfer_impl_relax_begin();
        err = cuxfer_impl_relax_done(rx, cudaGraphInstantiateWithFlags(&g->exec, g->graph, 0));
    }
    if (err != cudaSuccess) {
        (void)cuxfer_graph_destroy(g);
        return cuxfer_impl_fail_cuda(err, "cuxfer_graph_end: %s", cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* Replay the graph on s. */
CUXFER_API cudaError_t cuxfer_graph_launch(const cuxfer_graph *g, cudaStream_t s)
{
    cudaError_t err;
    if (!g || !g->exec)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_graph_launch: graph not instantiated");
    /* Into a capturing stream it fails and invalidates the capture
     * (doc/PERF.md, "CUDA behaviour measured"): refused first. */
    if (cuxfer_impl_stream_state(s, &err) != CUXFER_IMPL_STREAM_UNCAPTURED)
        return cuxfer_impl_fail(err != cudaSuccess ? err : cudaErrorStreamCaptureUnsupported,
                                "cuxfer_graph_launch: stream %p is being captured (or cannot "
                                "be used now); launch the graph on a stream that is not",
                                (void *)s);
    err = cudaGraphLaunch(g->exec, s);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_graph_launch: stream %p: %s (a graph runs on "
                                     "the device it was captured on)", (void *)s,
                                     cudaGetErrorName(err));
    return cudaSuccess;
}

/* ------------------------------------------------------------------------
 * 9. The pinned pool: cached page-locked blocks with bounded waste
 * ------------------------------------------------------------------------ */

/* A freed block is handed out again instead of a new cudaHostAlloc.  Sizes
 * round up to classes at most 12.5% apart (exact below 64 bytes), so bytes
 * reserved never exceed 1.125 x bytes requested. */
#define CUXFER_IMPL_POOL_CLASSES 560

/* One block; handed to the caller as cuxfer_pinned_block. */
struct cuxfer_impl_pblock {
    void *ptr;
    size_t size;       /* class size: bytes reserved */
    size_t requested;  /* bytes the current holder asked for */
    cudaEvent_t ready; /* recorded at a stream release; gates reuse */
    int ready_dev;     /* the device ready was made on */
    int pending;       /* ready recorded and not yet seen complete */
    struct cuxfer_impl_pblock *next;
};

/* cuxfer_pinned_pool_release: nothing on the GPU uses the block.  Not a
 * stream anyone can hold (CUDA's handles are aligned pointers, its special
 * streams 0x0, 0x1, 0x2): 0 is a stream like any other and gets an event. */
#define CUXFER_POOL_IDLE ((cudaStream_t)(~(uintptr_t)0))

/* What cuxfer_pinned_pool_acquire hands out: use ptr for size bytes. */
struct cuxfer_pinned_block {
    void *ptr;
    size_t size;                      /* bytes asked for */
    struct cuxfer_impl_pblock *impl;  /* the pool's record, for release */
};

struct cuxfer_pinned_pool_stats {
    size_t reserved;          /* pinned bytes held, in use or cached */
    size_t in_use;            /* reserved bytes handed out now */
    size_t requested;         /* bytes asked for by the blocks in use */
    size_t peak_reserved;
    unsigned long long hits;  /* acquires served from the cache */
    unsigned long long misses;/* acquires that called cudaHostAlloc */
};

/* Options of cuxfer_pinned_pool_create; {0} means the defaults. */
struct cuxfer_pinned_pool_options {
    size_t cap_bytes; /* most pinned bytes held at once (0: no cap) */
    unsigned flags;   /* cuxfer_host_alloc flags of every block */
};

/* A caching allocator of pinned blocks, safe from several host threads. */
struct cuxfer_pinned_pool {
    struct cuxfer_impl_pblock **free_lists; /* per class, LIFO */
    cuxfer_pinned_pool_options opt;
    cuxfer_pinned_pool_stats stats;
    int ready;
    pthread_mutex_t mu;
};

/* The class index and class size of n bytes (n >= 1). */
CUXFER_API int cuxfer_impl_pool_class(size_t n, size_t *class_size)
{
    int k = 0;
    size_t step, c;
    if (n <= 64) {
        *class_size = n;
        return (int)n;
    }
    while (((size_t)1 << (k + 1)) <= n)
        ++k; /* 2^k <= n < 2^(k+1), k >= 6 */
    step = (size_t)1 << (k - 3);
    c = (n + step - 1) & ~(step - 1);
    *class_size = c;
    if (c == ((size_t)1 << (k + 1)))
        return 64 + (k + 1 - 6) * 8;
    return 64 + (k - 6) * 8 + (int)(c / step - 8);
}

/* The bytes a request of n reserves: its class, at most 12.5% above n. */
CUXFER_API size_t cuxfer_pinned_pool_class_size(size_t n)
{
    size_t c = 0;
    if (n == 0 || n > SIZE_MAX / 2) /* no class: acquire refuses these */
        return 0;
    (void)cuxfer_impl_pool_class(n, &c);
    return c;
}

/* Free cached blocks until `need` more bytes fit under the cap (0: all).  Locked. */
CUXFER_API void cuxfer_impl_pool_release_cached(cuxfer_pinned_pool *p, size_t need)
{
    int i;
    for (i = 0; i < CUXFER_IMPL_POOL_CLASSES; ++i) {
        struct cuxfer_impl_pblock **pp = &p->free_lists[i];
        while (*pp) {
            struct cuxfer_impl_pblock *b = *pp;
            if (need && (!p->opt.cap_bytes || p->stats.reserved + need <= p->opt.cap_bytes))
                return;
            if (b->pending && cuxfer_impl_event_query(b->ready) != cudaSuccess) {
                (void)cudaGetLastError();
                pp = &b->next;
                continue;
            }
            b->pending = 0;
            *pp = b->next;
            p->stats.reserved -= b->size;
            cuxfer_impl_kcache_flush();
            (void)cudaFreeHost(b->ptr);
            (void)cuxfer_impl_event_drop(b->ready);
            free(b);
        }
    }
}

CUXFER_API cudaError_t cuxfer_pinned_pool_create(cuxfer_pinned_pool *p,
                                                 const cuxfer_pinned_pool_options *opt)
{
    unsigned flags = opt ? opt->flags : 0;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_pinned_pool_create: pool is NULL");
    memset(p, 0, sizeof *p); /* and so it stays on a refusal */
    if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                            cudaHostAllocWriteCombined))
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_pinned_pool_create: unknown flags 0x%x", flags);
    p->free_lists = (struct cuxfer_impl_pblock **)calloc(CUXFER_IMPL_POOL_CLASSES,
                                                         sizeof *p->free_lists);
    if (!p->free_lists)
        return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                "cuxfer_pinned_pool_create: out of host memory");
    if (opt)
        p->opt = *opt;
    pthread_mutex_init(&p->mu, NULL);
    p->ready = 1;
    return cudaSuccess;
}

/* A block of at least `bytes` pinned bytes (man 3 cuxfer_pinned_pool). */
CUXFER_API cudaError_t cuxfer_pinned_pool_acquire(cuxfer_pinned_pool *p, size_t bytes,
                                                  cuxfer_pinned_block *blk)
{
    struct cuxfer_impl_pblock **pp, *b;
    size_t cs;
    int c, relaxed = 0;
    cuxfer_impl_relax rx;
    cudaError_t err;
    if (blk)
        memset(blk, 0, sizeof *blk); /* set on every path, refusals included */
    if (!p || !p->ready || !blk)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_pinned_pool_acquire: %s",
                                blk ? "pool not created" : "block is NULL");
    if (bytes == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_pinned_pool_acquire: 0 bytes");
    if (bytes > SIZE_MAX / 2)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_pinned_pool_acquire: %zu bytes is too large", bytes);
    c = cuxfer_impl_pool_class(bytes, &cs);
    rx.mode = cudaStreamCaptureModeRelaxed;
    rx.switched = 0;
    pthread_mutex_lock(&p->mu);
    /* The queries and allocations below touch no stream: Relaxed, switched
     * only when needed (a warm acquire makes no CUDA call). */
    for (pp = &p->free_lists[c]; (b = *pp) != NULL; pp = &b->next) {
        if (b->pending) {
            if (!relaxed) {
                rx = cuxfer_impl_relax_begin();
                relaxed = 1;
            }
            if (cudaEventQuery(b->ready) != cudaSuccess) {
                (void)cudaGetLastError();
                continue; /* a copy still reads it: not yet */
            }
            b->pending = 0;
        }
        *pp = b->next;
        break;
    }
    if (b) {
        p->stats.hits++;
    } else {
        if (!relaxed)
            rx = cuxfer_impl_relax_begin();
        if (p->opt.cap_bytes && p->stats.reserved + cs > p->opt.cap_bytes)
            cuxfer_impl_pool_release_cached(p, cs);
        if (p->opt.cap_bytes && p->stats.reserved + cs > p->opt.cap_bytes) {
            size_t held = p->stats.reserved;
            pthread_mutex_unlock(&p->mu);
            cuxfer_impl_relax_end(rx);
            return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                    "cuxfer_pinned_pool_acquire: %zu bytes (class %zu) would "
                                    "exceed the cap of %zu bytes (%zu held)",
                                    bytes, cs, p->opt.cap_bytes, held);
        }
        b = (struct cuxfer_impl_pblock *)calloc(1, sizeof *b);
        err = b ? cudaHostAlloc(&b->ptr, cs, p->opt.flags) : cudaErrorMemoryAllocation;
        if (err != cudaSuccess) {
            free(b);
            pthread_mutex_unlock(&p->mu);
            cuxfer_impl_relax_end(rx);
            return cuxfer_impl_fail_cuda(err, "cuxfer_pinned_pool_acquire: cudaHostAlloc of %zu "
                                         "bytes: %s", cs, cudaGetErrorName(err));
        }
        b->size = cs;
        p->stats.misses++;
        p->stats.reserved += cs;
        if (p->stats.reserved > p->stats.peak_reserved)
            p->stats.peak_reserved = p->stats.reserved;
    }
    b->requested = bytes;
    b->next = NULL;
    p->stats.in_use += b->size;
    p->stats.requested += bytes;
    pthread_mutex_unlock(&p->mu);
    cuxfer_impl_relax_end(rx);
    blk->ptr = b->ptr;
    blk->size = bytes;
    blk->impl = b;
    return cudaSuccess;
}

/* Record the block's event on s; refused while s captures (every launch uses it). */
CUXFER_API cudaError_t cuxfer_impl_pool_mark(struct cuxfer_impl_pblock *b, cudaStream_t s)
{
    cuxfer_impl_relax rx;
    cudaError_t err = cudaSuccess;
    int saved = -1, cap = cuxfer_impl_stream_state(s, &err);
    if (cap < 0)
        return cuxfer_impl_fail(err, "cuxfer_pinned_pool_release: stream %p cannot take an "
                                "event now: %s; the block stays acquired", (void *)s,
                                cudaGetErrorName(err));
    if (cap)
        return cuxfer_impl_fail(cudaErrorStreamCaptureUnsupported,
                                "cuxfer_pinned_pool_release: stream %p is being captured: a "
                                "graph uses the block at every launch; the block stays "
                                "acquired: release it with CUXFER_POOL_IDLE once the graph is "
                                "destroyed", (void *)s);
    rx = cuxfer_impl_relax_begin(); /* event bookkeeping: no captured stream */
    err = cuxfer_impl_stream_record(s, &b->ready, &b->ready_dev, &saved);
    cuxfer_impl_restore_device(saved);
    cuxfer_impl_relax_end(rx);
    if (err != cudaSuccess)
        return cuxfer_impl_fail_cuda(err, "cuxfer_pinned_pool_release: cannot record an event "
                                     "on stream %p (device %d): %s; the block stays acquired",
                                     (void *)s, cuxfer_impl_stream_device(s),
                                     cudaGetErrorName(err));
    b->pending = 1;
    return cudaSuccess;
}

/* Give a block back, reused after in_use_by's work (man 3 cuxfer_pinned_pool). */
CUXFER_API cudaError_t cuxfer_pinned_pool_release(cuxfer_pinned_pool *p,
                                                  cuxfer_pinned_block *blk,
                                                  cudaStream_t in_use_by)
{
    struct cuxfer_impl_pblock *b;
    int c;
    size_t cs;
    if (!p || !p->ready || !blk || !blk->impl)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_pinned_pool_release: %s",
                                !p || !p->ready ? "pool not created"
                                : !blk          ? "block is NULL"
                                                : "block not acquired");
    b = blk->impl;
    if (in_use_by != CUXFER_POOL_IDLE)
        CUXFER_TRY(cuxfer_impl_pool_mark(b, in_use_by));
    c = cuxfer_impl_pool_class(b->size, &cs);
    pthread_mutex_lock(&p->mu);
    p->stats.in_use -= b->size;
    p->stats.requested -= b->requested;
    b->next = p->free_lists[c];
    p->free_lists[c] = b;
    pthread_mutex_unlock(&p->mu);
    memset(blk, 0, sizeof *blk);
    return cudaSuccess;
}

/* Return every cached block that no copy still reads to the system. */
CUXFER_API cudaError_t cuxfer_pinned_pool_trim(cuxfer_pinned_pool *p)
{
    cuxfer_impl_relax rx;
    if (!p || !p->ready)
        return cudaSuccess;
    rx = cuxfer_impl_relax_begin(); /* queries and frees: no captured stream */
    pthread_mutex_lock(&p->mu);
    cuxfer_impl_pool_release_cached(p, 0);
    pthread_mutex_unlock(&p->mu);
    cuxfer_impl_relax_end(rx);
    cuxfer_impl_kcache_flush();
    return cudaSuccess;
}

/* A consistent copy of the pool's counters. */
CUXFER_API cuxfer_pinned_pool_stats cuxfer_pinned_pool_get_stats(cuxfer_pinned_pool *p)
{
    cuxfer_pinned_pool_stats s;
    memset(&s, 0, sizeof s);
    if (!p || !p->ready)
        return s;
    pthread_mutex_lock(&p->mu);
    s = p->stats;
    pthread_mutex_unlock(&p->mu);
    return s;
}

/* Free every cached block and the pool (man 3 cuxfer_pinned_pool). */
CUXFER_API cudaError_t cuxfer_pinned_pool_destroy(cuxfer_pinned_pool *p)
{
    int i;
    cuxfer_impl_relax rx;
    if (!p || !p->ready)
        return cudaSuccess;
    pthread_mutex_lock(&p->mu);
    if (p->stats.in_use) {
        size_t n = p->stats.in_use;
        pthread_mutex_unlock(&p->mu);
        return cuxfer_impl_fail(cudaErrorNotPermitted,
                                "cuxfer_pinned_pool_destroy: %zu bytes still acquired", n);
    }
    rx = cuxfer_impl_relax_begin(); /* waits on the pool's own events only */
    for (i = 0; i < CUXFER_IMPL_POOL_CLASSES; ++i) {
        struct cuxfer_impl_pblock *b = p->free_lists[i], *nx;
        for (; b; b = nx) {
            nx = b->next;
            if (b->pending)
                (void)cuxfer_impl_event_sync(b->ready);
            (void)cuxfer_impl_event_drop(b->ready);
            (void)cudaFreeHost(b->ptr);
            free(b);
        }
    }
    cuxfer_impl_relax_end(rx);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_destroy(&p->mu);
    free(p->free_lists);
    memset(p, 0, sizeof *p);
    cuxfer_impl_kcache_flush();
    return cudaSuccess;
}

/* ------------------------------------------------------------------------
 * 9a. Private: the worker pool (the team)
 * ------------------------------------------------------------------------ */

#define CUXFER_IMPL_TEAM_MAX 64 /* workers at most (>= every public thread cap) */

/* The one pool of host threads (doc/DESIGN.md, section 4).  Members take
 * blocks from the counter `next` (cuxfer_impl_team_take), so fn must not
 * assume which members run it, or how often; they make no CUDA call. */
typedef void (*cuxfer_impl_team_fn)(void *arg, size_t *next);

/* The door of a job: members inside fn in the low bits, and a bit that
 * the opener sets when the job ends: from then on nobody enters. */
#define CUXFER_IMPL_TEAM_CLOSED 0x80000000u

typedef struct cuxfer_impl_team {
    pthread_t th[CUXFER_IMPL_TEAM_MAX + 1]; /* the workers, then the lead */
    int n;                  /* workers running */
    int lead;               /* a lead thread runs, th[n] */
    int started;            /* workers that took an index (start-up) */
    int stop;
    unsigned gen;           /* job generation, atomic (32 bits: lock-free on
                               i386; a worker never sleeps through 2^32 jobs) */
    unsigned door;          /* the job's door, atomic: CLOSED | members inside */
    size_t next;            /* the job's block counter, atomic */
    cuxfer_impl_team_fn fn; /* written only while the door is closed and empty */
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t cv_job, cv_start;
} cuxfer_impl_team;

#if defined(__x86_64__) || defined(__i386__)
#define CUXFER_IMPL_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CUXFER_IMPL_RELAX() __asm__ __volatile__("yield")
#else
#define CUXFER_IMPL_RELAX() ((void)0)
#endif
/* Spins of a waiting team thread (a worker between jobs, a closer, a
 * stager worker waiting for its chunk) before it sleeps or yields
 * (doc/PERF.md, "Behind the constants": the team's spin). */
#define CUXFER_IMPL_SPIN 4096

CUXFER_API void *cuxfer_impl_team_worker(void *a)
{
    cuxfer_impl_team *t = (cuxfer_impl_team *)a;
    unsigned seen, d;
    int i;
    pthread_mutex_lock(&t->mu);
    t->started++;
    seen = t->gen;
    pthread_cond_signal(&t->cv_start);
    pthread_mutex_unlock(&t->mu);
    for (;;) {
        for (i = 0; i < CUXFER_IMPL_SPIN && __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) == seen &&
                    !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE);
             ++i)
            CUXFER_IMPL_RELAX();
        if (__atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) == seen) {
            pthread_mutex_lock(&t->mu);
            while (!t->stop && __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) == seen)
                pthread_cond_wait(&t->cv_job, &t->mu);
            pthread_mutex_unlock(&t->mu);
        }
        if (__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE))
            break;
        seen = __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
        /* in through the door while it is open (whichever job that is:
         * fn and arg are read only inside), else wait for the next job */
        d = __atomic_load_n(&t->door, __ATOMIC_ACQUIRE);
        while (!(d & CUXFER_IMPL_TEAM_CLOSED) &&
               !__atomic_compare_exchange_n(&t->door, &d, d + 1, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
            ;
        if (d & CUXFER_IMPL_TEAM_CLOSED)
            continue;
        t->fn(t->arg, &t->next);
        __atomic_sub_fetch(&t->door, 1u, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Every engine's default thread count: online cores, at most 16, less
 * `keep` (doc/PERF.md, "Behind the constants": the team's size). */
CUXFER_API int cuxfer_impl_team_default(int keep)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN) - keep;
    return cores > 16 ? 16 : cores < 1 ? 1 : (int)cores;
}

/* The options every plan with a team shares: a strategy from 0 (AUTO) to
 * last, threads 0 (the default) to max, chunk_bytes 0 (chunk_default) or
 * at least 4096.  On a refusal the plan (obj, size bytes), which holds
 * them, is left zeroed (its page's RETURN VALUES). */
CUXFER_API cudaError_t cuxfer_impl_team_options(const char *call, void *obj, size_t size,
                                                int strategy, int last, int *threads, int max,
                                                int keep, size_t *chunk, size_t chunk_default)
{
    cudaError_t err = cudaSuccess;
    if (*chunk == 0)
        *chunk = chunk_default;
    if (strategy < 0 || strategy > last)
        err = cuxfer_impl_fail(cudaErrorInvalidValue, "%s: strategy %d is unknown", call,
                               strategy);
    else if (*threads < 0 || *threads > max)
        err = cuxfer_impl_fail(cudaErrorInvalidValue, "%s: threads %d is outside 0..%d", call,
                               *threads, max);
    else if (*chunk < 4096)
        err = cuxfer_impl_fail(cudaErrorInvalidValue, "%s: chunk_bytes %zu is below 4096", call,
                               *chunk);
    if (err != cudaSuccess) {
        memset(obj, 0, size);
        return err;
    }
    if (*threads == 0)
        *threads = cuxfer_impl_team_default(keep);
    return cudaSuccess;
}

/* Start `workers` threads (0: the caller alone) and, when `lead` is not
 * NULL, lead(lead_arg) after them.  Returns 0, or the error that stopped a
 * thread: then fewer workers run, and no lead. */
CUXFER_API int cuxfer_impl_team_start(cuxfer_impl_team *t, int workers, void *(*lead)(void *),
                                      void *lead_arg)
{
    int i, rc = 0;
    memset(t, 0, sizeof *t);
    t->door = CUXFER_IMPL_TEAM_CLOSED; /* no job yet */
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv_job, NULL);
    pthread_cond_init(&t->cv_start, NULL);
    if (workers > CUXFER_IMPL_TEAM_MAX)
        workers = CUXFER_IMPL_TEAM_MAX;
    for (i = 0; rc == 0 && (i < workers || (i == workers && lead)); ++i) {
        rc = pthread_create(&t->th[i], NULL, i < workers ? cuxfer_impl_team_worker : lead,
                            i < workers ? (void *)t : lead_arg);
        if (rc == 0 && i < workers)
            ++t->n;
        else if (rc == 0)
            t->lead = 1;
    }
    /* every worker holds its index before the first job names n */
    pthread_mutex_lock(&t->mu);
    while (t->started < t->n)
        pthread_cond_wait(&t->cv_start, &t->mu);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Stop and join every thread, the lead first (its owner told it to return). */
CUXFER_API void cuxfer_impl_team_stop(cuxfer_impl_team *t)
{
    int i;
    if (t->lead)
        pthread_join(t->th[t->n], NULL);
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->cv_job);
    pthread_mutex_unlock(&t->mu);
    for (i = 0; i < t->n; ++i)
        pthread_join(t->th[i], NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv_job);
    pthread_cond_destroy(&t->cv_start);
    memset(t, 0, sizeof *t);
}

/* Open a job to the workers and wake them; one opener, one job at a time. */
CUXFER_API void cuxfer_impl_team_open(cuxfer_impl_team *t, cuxfer_impl_team_fn fn, void *arg)
{
    /* the door is closed and empty since the last job: no member reads these */
    t->fn = fn;
    t->arg = arg;
    __atomic_store_n(&t->next, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->door, 0u, __ATOMIC_RELEASE); /* open */
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->gen, t->gen + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->cv_job);
    pthread_mutex_unlock(&t->mu);
}

/* Close the job's door and wait for the members inside fn to leave it. */
CUXFER_API void cuxfer_impl_team_close(cuxfer_impl_team *t)
{
    int i = 0;
    (void)__atomic_fetch_or(&t->door, CUXFER_IMPL_TEAM_CLOSED, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&t->door, __ATOMIC_ACQUIRE) != CUXFER_IMPL_TEAM_CLOSED) {
        if (++i < CUXFER_IMPL_SPIN)
            CUXFER_IMPL_RELAX();
        else
            sched_yield();
    }
}

/* Run one job on the team, the caller taking blocks too; one caller at a time. */
CUXFER_API void cuxfer_impl_team_run(cuxfer_impl_team *t, cuxfer_impl_team_fn fn, void *arg)
{
    size_t next = 0;
    if (t->n == 0) {
        fn(arg, &next);
        return;
    }
    cuxfer_impl_team_open(t, fn, arg);
    fn(arg, &t->next); /* returns when every block is taken */
    cuxfer_impl_team_close(t);
}

/* A member's next block of `block` units of `total`: [*from, *to), or 0. */
CUXFER_API int cuxfer_impl_team_take(size_t *next, size_t total, size_t block, size_t *from,
                                     size_t *to)
{
    size_t b = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
    if (b >= (total + block - 1) / block)
        return 0;
    *from = b * block;
    *to = total - *from < block ? total : *from + block;
    return 1;
}

/* `rows` rows of `row` bytes from s (pitch sp) to d (pitch dp): the one
 * row copy of the team's jobs.  Constant widths become a few moves (a
 * memcpy call per 8-byte row costs more than the bytes).  With k > 0, rows
 * of at most 64 bytes ask for both sides' lines k rows on: a pitch of
 * kilobytes defeats the hardware's prefetch. */
CUXFER_API void cuxfer_impl_copy_rows(unsigned char *d, size_t dp, const unsigned char *s,
                                      size_t sp, size_t row, size_t rows, size_t k)
{
    size_t y = 0, far = k * dp, sfar = k * sp, hinted = k && row <= 64 && rows > k ? rows - k : 0;
#define CUXFER_IMPL_ROWS_CASE(n)                                               \
    case n:                                                                    \
        for (; y < hinted; ++y, d += dp, s += sp) {                            \
            __builtin_prefetch(d + far, 1, 3);                                 \
            __builtin_prefetch(s + sfar, 0, 3);                                \
            memcpy(d, s, n);                                                   \
        }                                                                      \
        for (; y < rows; ++y, d += dp, s += sp)                                \
            memcpy(d, s, n);                                                   \
        return;
    switch (row) {
        CUXFER_IMPL_ROWS_CASE(1)
        CUXFER_IMPL_ROWS_CASE(2)
        CUXFER_IMPL_ROWS_CASE(4)
        CUXFER_IMPL_ROWS_CASE(8)
        CUXFER_IMPL_ROWS_CASE(12)
        CUXFER_IMPL_ROWS_CASE(16)
        CUXFER_IMPL_ROWS_CASE(24)
        CUXFER_IMPL_ROWS_CASE(32)
        CUXFER_IMPL_ROWS_CASE(48)
        CUXFER_IMPL_ROWS_CASE(64)
        CUXFER_IMPL_ROWS_CASE(128)
        CUXFER_IMPL_ROWS_CASE(256)
    default:
        for (; y < rows; ++y, d += dp, s += sp)
            memcpy(d, s, row);
    }
#undef CUXFER_IMPL_ROWS_CASE
}

/* ------------------------------------------------------------------------
 * 9b. Private: the copy kernel, PTX loaded without nvcc
 * ------------------------------------------------------------------------ */

/* The copy kernel (doc/DESIGN.md, section 6), in CUDA C terms: each warp
 * takes work items (tile t, part q) of n x parts; the lanes of a part
 * copy units of 2^ul bytes between host + src + row * pitch + column units
 * and dense + dst + row * dpitch + column units, direction d2h (ru = rb >>
 * ul units a row; dpitch 0 means rb, the rows packed; SPAN's extraction
 * gives its strided destination's).  The lanes run over rows of vr units,
 * unit i being row i / vr, column i % vr - s: a row of 128 bytes or more
 * starts s units before itself, at its host line, and takes whole lines
 * (vr a multiple of 128 >> ul), so each warp's access is one line of host
 * memory, not two halves (a misaligned tile otherwise costs two PCIe
 * requests a line: doc/PERF.md, "Behind the constants"); rows * vr < 2^32,
 * as vr < 3 ru and a descriptor is one row or a band (rois) or a slot
 * (the planner) < 1 GiB.
 * Tile t's descriptor is read at pd + t * 24. */

/* A tile's descriptor: the PTX reads it as u64 at +0 and +8 and two u32 at
 * +16, tiles 24 bytes apart; the build stops if the struct ever differs. */
typedef struct cuxfer_impl_tile {
    unsigned long long src, dst;
    unsigned rows, rb;
} cuxfer_impl_tile;
typedef char cuxfer_impl_tile_has_the_ptx_layout[sizeof(cuxfer_impl_tile) == 24 &&
                                                         offsetof(cuxfer_impl_tile, rows) == 16
                                                     ? 1
                                                     : -1];

CUXFER_API void cuxfer_impl_tile_put(cuxfer_impl_tile *t, size_t src, size_t dst, size_t rows,
                                     size_t rb)
{
    t->src = src;
    t->dst = dst;
    t->rows = (unsigned)rows; /* < 2^31: callers check */
    t->rb = (unsigned)rb;
}

#if CUDART_VERSION >= 12050
#define CUXFER_IMPL_COPY_PTX 1
static const char cuxfer_impl_copy_ptx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry cuxfer_impl_copy_entry(.param .u64 pd, .param .u32 pn, .param .u32 pparts,\n"
    " .param .u64 phost, .param .u64 ppitch, .param .u64 pdense, .param .u32 pd2h, .param .u32 pul,\n"
    " .param .u64 pdpitch)\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .b16 %h<2>;\n"
    " .reg .b32 %r<28>;\n"
    " .reg .b64 %rd<16>;\n"
    " ld.param.u64 %rd1, [pd];\n"
    " ld.param.u32 %r1, [pn];\n"
    " ld.param.u32 %r2, [pparts];\n"
    " ld.param.u64 %rd2, [phost];\n"
    " ld.param.u64 %rd3, [ppitch];\n"
    " ld.param.u64 %rd4, [pdense];\n"
    " ld.param.u32 %r3, [pd2h];\n"
    " ld.param.u32 %r4, [pul];\n"
    " ld.param.u64 %rd14, [pdpitch];\n"
    " setp.ne.u64 %p6, %rd14, 0;\n"
    " cvta.to.global.u64 %rd1, %rd1;\n"
    " cvta.to.global.u64 %rd2, %rd2;\n"
    " cvta.to.global.u64 %rd4, %rd4;\n"
    " mov.u32 %r5, %ntid.x;\n"
    " mov.u32 %r6, %ctaid.x;\n"
    " mov.u32 %r7, %tid.x;\n"
    " mad.lo.u32 %r8, %r6, %r5, %r7;\n"
    " shr.u32 %r8, %r8, 5;\n"
    " and.b32 %r9, %r7, 31;\n"
    " mov.u32 %r10, %nctaid.x;\n"
    " mul.lo.u32 %r10, %r10, %r5;\n"
    " shr.u32 %r10, %r10, 5;\n"
    " mul.lo.u32 %r11, %r1, %r2;\n"
    " shl.b32 %r12, %r2, 5;\n"
    " setp.ne.u32 %p1, %r3, 0;\n"
    "ITEM:\n"
    " setp.ge.u32 %p2, %r8, %r11;\n"
    " @%p2 bra END;\n"
    " div.u32 %r13, %r8, %r2;\n"
    " mul.lo.u32 %r14, %r13, %r2;\n"
    " sub.u32 %r14, %r8, %r14;\n"
    " mul.wide.u32 %rd5, %r13, 24;\n"
    " add.u64 %rd5, %rd1, %rd5;\n"
    " ld.global.u64 %rd6, [%rd5];\n"
    " ld.global.u64 %rd7, [%rd5+8];\n"
    " ld.global.v2.u32 {%r15, %r16}, [%rd5+16];\n"
    " cvt.u64.u32 %rd13, %r16;\n"
    " selp.b64 %rd13, %rd14, %rd13, %p6;\n"
    " shr.u32 %r16, %r16, %r4;\n"
    " add.u64 %rd6, %rd2, %rd6;\n"
    " add.u64 %rd7, %rd4, %rd7;\n"
    " mov.u32 %r24, 128;\n"
    " shr.u32 %r24, %r24, %r4;\n"
    " mov.u32 %r25, 0;\n"
    " mov.u32 %r26, %r16;\n"
    " setp.lt.u32 %p5, %r16, %r24;\n"
    " @%p5 bra ROWS;\n"
    " cvt.u32.u64 %r25, %rd6;\n"
    " and.b32 %r25, %r25, 127;\n"
    " shr.u32 %r25, %r25, %r4;\n"
    " add.u32 %r26, %r16, %r25;\n"
    " add.u32 %r26, %r26, %r24;\n"
    " sub.u32 %r26, %r26, 1;\n"
    " neg.s32 %r27, %r24;\n"
    " and.b32 %r26, %r26, %r27;\n"
    "ROWS:\n"
    " mul.lo.u32 %r17, %r15, %r26;\n"
    " shl.b32 %r18, %r14, 5;\n"
    " add.u32 %r18, %r18, %r9;\n"
    "UNIT:\n"
    " setp.ge.u32 %p3, %r18, %r17;\n"
    " @%p3 bra NEXT;\n"
    " div.u32 %r19, %r18, %r26;\n"
    " mul.lo.u32 %r20, %r19, %r26;\n"
    " sub.u32 %r20, %r18, %r20;\n"
    " sub.u32 %r20, %r20, %r25;\n"
    " setp.ge.u32 %p5, %r20, %r16;\n"
    " @%p5 bra STEP;\n"
    " cvt.u64.u32 %rd15, %r19;\n"
    " mul.lo.u64 %rd8, %rd15, %rd3;\n"
    " cvt.u64.u32 %rd9, %r20;\n"
    " shl.b64 %rd9, %rd9, %r4;\n"
    " add.u64 %rd8, %rd8, %rd9;\n"
    " add.u64 %rd8, %rd6, %rd8;\n"
    " mad.lo.u64 %rd9, %rd15, %rd13, %rd9;\n"
    " add.u64 %rd9, %rd7, %rd9;\n"
    " selp.b64 %rd10, %rd9, %rd8, %p1;\n"
    " selp.b64 %rd11, %rd8, %rd9, %p1;\n"
    " setp.eq.u32 %p4, %r4, 2;\n"
    " @%p4 bra U4;\n"
    " setp.eq.u32 %p4, %r4, 4;\n"
    " @%p4 bra U16;\n"
    " setp.eq.u32 %p4, %r4, 3;\n"
    " @%p4 bra U8;\n"
    " setp.eq.u32 %p4, %r4, 1;\n"
    " @%p4 bra U2;\n"
    " ld.global.u8 %h1, [%rd10];\n"
    " st.global.u8 [%rd11], %h1;\n"
    " bra.uni STEP;\n"
    "U2:\n"
    " ld.global.u16 %h1, [%rd10];\n"
    " st.global.u16 [%rd11], %h1;\n"
    " bra.uni STEP;\n"
    "U4:\n"
    " ld.global.u32 %r21, [%rd10];\n"
    " st.global.u32 [%rd11], %r21;\n"
    " bra.uni STEP;\n"
    "U8:\n"
    " ld.global.u64 %rd12, [%rd10];\n"
    " st.global.u64 [%rd11], %rd12;\n"
    " bra.uni STEP;\n"
    "U16:\n"
    " ld.global.v4.u32 {%r20, %r21, %r22, %r23}, [%rd10];\n"
    " st.global.v4.u32 [%rd11], {%r20, %r21, %r22, %r23};\n"
    "STEP:\n"
    " add.u32 %r18, %r18, %r12;\n"
    " bra.uni UNIT;\n"
    "NEXT:\n"
    " add.u32 %r8, %r8, %r10;\n"
    " bra.uni ITEM;\n"
    "END:\n"
    " ret;\n"
    "}\n";
#endif

/* Load the copy kernel for the current device `device`, *blocks one wave;
 * NULL, or why it cannot load (*err: the CUDA error, if one said so). */
CUXFER_API const char *cuxfer_impl_kernel_load(int device, void **lib, void **kernel,
                                               unsigned *blocks, cudaError_t *err)
{
    *lib = *kernel = NULL;
    *blocks = 0;
#ifdef CUXFER_IMPL_COPY_PTX
    {
        cudaLibrary_t l = NULL;
        cudaKernel_t k = NULL;
        int sms = 0, mapped = 0;
        *err = cudaDeviceGetAttribute(&mapped, cudaDevAttrCanMapHostMemory, device);
        if (*err == cudaSuccess && !mapped)
            return "the device cannot map host memory";
        if (*err == cudaSuccess)
            *err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        if (*err == cudaSuccess)
            *err = cudaLibraryLoadData(&l, cuxfer_impl_copy_ptx, NULL, NULL, 0, NULL, NULL, 0);
        if (*err == cudaSuccess)
            *err = cudaLibraryGetKernel(&k, l, "cuxfer_impl_copy_entry");
        if (*err == cudaSuccess) {
            /* Load it into this context now: under lazy loading the first
             * launch would, waiting for a stream held by a host function
             * (doc/DESIGN.md, section 6). */
            struct cudaFuncAttributes fa;
            *err = cudaFuncGetAttributes(&fa, (const void *)k);
        }
        if (*err != cudaSuccess) {
            (void)cudaGetLastError();
            if (l)
                (void)cudaLibraryUnload(l);
            return "its PTX did not load (cudaLibraryLoadData)";
        }
        *lib = (void *)l;
        *kernel = (void *)k;
        *blocks = 8u * (unsigned)(sms > 0 ? sms : 1); /* 256 threads: one wave */
        return NULL;
    }
#else
    (void)device;
    *err = cudaSuccess;
    return "the CUDA runtime is older than 12.5 (no cudaLibraryLoadData)";
#endif
}

/* Unload what cuxfer_impl_kernel_load loaded; the context may be gone. */
CUXFER_API void cuxfer_impl_kernel_unload(void **lib, void **kernel)
{
#ifdef CUXFER_IMPL_COPY_PTX
    if (*lib)
        (void)cudaLibraryUnload((cudaLibrary_t)*lib);
    (void)cudaGetLastError();
#endif
    *lib = *kernel = NULL;
}

/* One launch of the copy kernel on s over n tiles (descriptors at desc);
 * dpitch: the dense side's pitch, 0 for rows packed one after another.
 * `align`: the OR of every address, offset, pitch and row width, for the
 * unit size; one tile of `bytes` (0: not said) gets no more parts than
 * 32-unit runs. */
CUXFER_API cudaError_t cuxfer_impl_kernel_launch(void *kernel, unsigned blocks, void *desc,
                                                 unsigned n, const void *host, size_t pitch,
                                                 void *dense, size_t dpitch, unsigned d2h,
                                                 uintptr_t align, size_t bytes, cudaStream_t s)
{
#ifdef CUXFER_IMPL_COPY_PTX
    unsigned long long pt = pitch, dpt = dpitch;
    unsigned ul = 0, parts = blocks * 8u > n ? blocks * 8u / n : 1u;
    size_t grid_blocks;
    /* the kernel's parameters, in the PTX's order */
    void *args[9] = {&desc, &n, &parts, (void *)&host, &pt, &dense, &d2h, &ul, &dpt};
    dim3 grid = {1, 1, 1}, block = {256, 1, 1};
    while (ul < 4 && !(align & ((uintptr_t)1 << ul)))
        ++ul;
    if (bytes && ((bytes >> ul) + 31) / 32 < parts)
        parts = (unsigned)(((bytes >> ul) + 31) / 32);
    grid_blocks = ((size_t)n * parts + 7) / 8;
    grid.x = grid_blocks < blocks ? (unsigned)grid_blocks : blocks;
    return cudaLaunchKernel((const void *)kernel, grid, block, args, 0, s);
#else
    (void)kernel, (void)blocks, (void)desc, (void)n, (void)host, (void)pitch, (void)dense;
    (void)dpitch, (void)d2h, (void)align, (void)bytes, (void)s;
    return cudaErrorNotSupported;
#endif
}

/* ------------------------------------------------------------------------
 * 10. The copy planner: narrow rows at link speed
 * ------------------------------------------------------------------------ */

/* One cudaMemcpy2DAsync is DMA-bound per row (doc/PERF.md, "The kit": the
 * raw row cases).  SPAN, PACK and DIRECT: man 3 cuxfer_plan2d for what
 * they do, doc/DESIGN.md section 7 for how. */
#define CUXFER_PLAN_AUTO 0
#define CUXFER_PLAN_DIRECT 1
#define CUXFER_PLAN_SPAN 2
#define CUXFER_PLAN_PACK 3
#define CUXFER_PLAN_MAX_THREADS 32
/* PACK's pipeline slots, two in each chunk buffer: four in flight (pack,
 * link, scatter, one spare) keep the scatter busy. */
#define CUXFER_IMPL_PLAN_SLOTS 4

/* Options of cuxfer_plan2d_create; {0} means the defaults. */
struct cuxfer_plan2d_options {
    size_t chunk_bytes; /* scratch per pipeline stage (default 8 MiB) */
    int threads;        /* host threads, CUDA's host-function thread
                           included (default: cores - 2, at most 16) */
    int strategy;       /* CUXFER_PLAN_AUTO, or force one */
};

/* When AUTO picks SPAN or PACK (man 3 cuxfer_plan2d); the built-in values
 * are the H200's, cuxfer_plan2d_calibrate measures the machine at hand. */
struct cuxfer_plan2d_tuning {
    size_t span_max_row;
    size_t pack_max_row;
    size_t max_ratio;
    size_t min_bytes;
};

struct cuxfer_impl_scatter {
    unsigned char *dst;
    const unsigned char *src;
    size_t dpitch, row, rows;
    size_t spitch;       /* SPAN's gathered share: src rows at this pitch go
                            dense to dst (dpitch unused); 0: a PACK scatter */
    cuxfer_impl_tile *desc; /* the gather's kernel descriptor, written by
                               the host function (NULL: none) */
    size_t block;        /* rows a team member takes at a time */
};

/* Rows per block of a team scatter: 16 KiB of dense rows, so a member the
 * scheduler delays holds up only its block. */
#define CUXFER_IMPL_SCATTER_BLOCK 16384

/* Each queued scatter gets its own record from a ring, reused only after
 * its host function cleared `busy` (no counters that a graph replay could wrap). */
#define CUXFER_IMPL_PLAN_RECS 256
/* PACK's direct share: the last rates per row width class, from whose
 * medians the share is set. */
#define CUXFER_IMPL_SHARE_CLASSES 3
#define CUXFER_IMPL_SHARE_SAMPLES 8
/* SPAN's extraction by the kernel: descriptor pairs in the mapped array,
 * one a copy shape in flight. */
#define CUXFER_IMPL_KX_PAIRS 4
#define CUXFER_IMPL_KX_BASE (CUXFER_IMPL_PLAN_RECS + CUXFER_IMPL_PLAN_SLOTS)
struct cuxfer_plan2d;
struct cuxfer_impl_scatter_rec {
    struct cuxfer_plan2d *plan;
    struct cuxfer_impl_scatter job;
    int busy; /* queued, its host function not yet run (atomic) */
};

struct cuxfer_plan2d {
    cuxfer_plan2d_options opt;
    cuxfer_plan2d_tuning tuning;
    int device;
    cudaStream_t aux, host;    /* extraction / packing; scatter host functions */
    void *dscratch[2];         /* device chunk buffers */
    void *hstage[2];           /* pinned staging (PACK) */
    /* per slot: SPAN uses 0 and 1 (whole buffers), PACK 0..3 (halves) */
    cudaEvent_t ev_moved[CUXFER_IMPL_PLAN_SLOTS], ev_freed[CUXFER_IMPL_PLAN_SLOTS];
    cudaEvent_t ev_fork, ev_join;
    cuxfer_impl_team team;     /* scatter workers; the host-function thread joins */
    int team_up;
    struct cuxfer_impl_scatter_rec recs[CUXFER_IMPL_PLAN_RECS];
    unsigned long long rec_next; /* records handed out (enqueueing thread) */
    /* the copy kernel (section 9b), NULL when it did not load */
    void *klib, *kernel;        /* cudaLibrary_t, cudaKernel_t */
    unsigned kblocks;           /* its grid: one wave of the device */
    void *hstage_dev[2];        /* the staging as the kernel sees it */
    cuxfer_impl_tile *kdesc;    /* tile descriptors (mapped): one per record,
                                   one per gather slot, then SPAN's
                                   extraction pairs (CUXFER_IMPL_KX_BASE) */
    cuxfer_impl_tile *kdesc_dev;
    /* SPAN's gathered share, per slot: the gather done (host), its unpack (side) */
    cudaEvent_t ev_gmoved[CUXFER_IMPL_PLAN_SLOTS], ev_gfreed[CUXFER_IMPL_PLAN_SLOTS];
    /* SPAN's extraction by the kernel: the pairs as the launches read them,
     * in device memory (NULL: by cudaMemcpy2DAsync); read through the
     * mapping, each warp's read would queue behind the span's copy on the
     * link (doc/PERF.md, "Behind the constants": SPAN's extraction); per
     * pair its last launch's event */
    cuxfer_impl_tile *kx_dev;
    cudaEvent_t ev_kx[CUXFER_IMPL_KX_PAIRS];
    unsigned kx_next;           /* the pair to try rewriting first */
    /* PACK's direct share (with the kernel only) on `side`: the last timed
     * copy's events, and per width class the rates of the last copies */
    cudaStream_t side;
    cudaEvent_t ev_side, ev_t0, ev_td, ev_tp;
    int t_pending, t_class;     /* a timed copy not yet read; its class */
    double t_share;             /* its direct share, of the rows */
    size_t t_rows;              /* its rows */
    double rate_d[CUXFER_IMPL_SHARE_CLASSES][CUXFER_IMPL_SHARE_SAMPLES];
    double rate_p[CUXFER_IMPL_SHARE_CLASSES][CUXFER_IMPL_SHARE_SAMPLES];
    unsigned rate_n[CUXFER_IMPL_SHARE_CLASSES];
    pthread_mutex_t mu;         /* one copy or calibration at a time */
    int ready;
};

/* How far ahead of its stores a scatter of narrow rows asks for the
 * destination's lines, in bytes (doc/PERF.md, "Behind the constants": the
 * scatter's prefetch distance). */
#define CUXFER_IMPL_SCATTER_AHEAD 2048

#ifdef CUXFER_IMPL_MASKED
/* PACK's scatter of 1-4 byte rows at a pitch <= 64 where the CPU has AVX-512
 * VBMI2: one masked store a 64-byte line of d writes its row bytes and none
 * between (doc/PERF.md, "Behind the constants": the scatter's masked stores). */
__attribute__((target("avx512f,avx512bw,avx512vbmi2"))) CUXFER_API void
cuxfer_impl_scatter_masked(unsigned char *d, size_t dp, const unsigned char *s, size_t row,
                           size_t rows)
{
    uintptr_t a = (uintptr_t)d, end = a + (rows - 1) * dp + row, c = a & ~(uintptr_t)63;
    unsigned long long m[64], k; /* the masks repeat every dp / gcd(dp, 64) lines */
    size_t n = 64 % dp ? dp / (dp & (0 - dp)) : 1, i, b, ph = (c + 64 * dp - a) % dp;
    for (i = 0; i < n; ++i)
        for (m[i] = 0, b = 0; b < 64; ++b, ph = ph + 1 == dp ? 0 : ph + 1)
            m[i] |= (unsigned long long)(ph < row) << b;
    for (i = 0; c < end; c += 64, i = i + 1 == n ? 0 : i + 1) {
        k = m[i] & (c < a ? ~0ULL << (a - c) : ~0ULL);
        k &= end - c < 64 ? ~0ULL >> (64 - (end - c)) : ~0ULL;
        _mm512_mask_storeu_epi8((void *)c, k, _mm512_maskz_expandloadu_epi8(k, s));
        s += __builtin_popcountll(k);
    }
}
#endif

/* Whether a scatter of `row`-byte rows at pitch dp takes the masked stores. */
CUXFER_API int cuxfer_impl_masked(size_t row, size_t dp)
{
#ifdef CUXFER_IMPL_MASKED
    return row <= 4 && row < dp && dp <= 64 && __builtin_cpu_supports("avx512vbmi2") &&
           __builtin_cpu_supports("avx512bw");
#else
    return (void)row, (void)dp, 0;
#endif
}

/* Rows [from, to) of a scatter job (dense rows to dst at dpitch) or of a
 * gather job (rows at spitch to dense rows at dst, read in address order,
 * which the hardware prefetches). */
CUXFER_API void cuxfer_impl_scatter_rows(const struct cuxfer_impl_scatter *j, size_t from,
                                         size_t to)
{
    if (j->spitch)
        cuxfer_impl_copy_rows(j->dst + from * j->row, j->row, j->src + from * j->spitch, j->spitch,
                              j->row, to - from, 0);
#ifdef CUXFER_IMPL_MASKED
    else if (to > from && cuxfer_impl_masked(j->row, j->dpitch))
        cuxfer_impl_scatter_masked(j->dst + from * j->dpitch, j->dpitch, j->src + from * j->row,
                                   j->row, to - from);
#endif
    else
        cuxfer_impl_copy_rows(j->dst + from * j->dpitch, j->dpitch, j->src + from * j->row, j->row,
                              j->row, to - from,
                              j->dpitch >= CUXFER_IMPL_SCATTER_AHEAD
                                  ? 1
                                  : CUXFER_IMPL_SCATTER_AHEAD / j->dpitch);
}

/* A team member's part of a scatter (or gather) job. */
CUXFER_API void cuxfer_impl_scatter_part(void *arg, size_t *next)
{
    const struct cuxfer_impl_scatter *j = (const struct cuxfer_impl_scatter *)arg;
    size_t from, to;
    while (cuxfer_impl_team_take(next, j->rows, j->block, &from, &to))
        cuxfer_impl_scatter_rows(j, from, to);
}

/* The host function of PACK, and of SPAN's gathered share: scatter (or
 * gather) one chunk with the team.  A gather also writes its unpacking
 * kernel's descriptor: only here is that slot's previous use known done. */
CUXFER_API void CUDART_CB cuxfer_impl_plan_scatter(void *arg)
{
    struct cuxfer_impl_scatter_rec *r = (struct cuxfer_impl_scatter_rec *)arg;
    struct cuxfer_plan2d *p = r->plan;
    struct cuxfer_impl_scatter j = r->job;
    if (j.desc) /* rows <= a slot's bytes < 2^31 */
        cuxfer_impl_tile_put(j.desc, 0, 0, j.rows, j.row);
    if (j.rows < 64) { /* waking the team costs more than the rows */
        cuxfer_impl_scatter_rows(&j, 0, j.rows);
    } else {
        j.block = CUXFER_IMPL_SCATTER_BLOCK / j.row ? CUXFER_IMPL_SCATTER_BLOCK / j.row : 1;
        cuxfer_impl_team_run(&p->team, cuxfer_impl_scatter_part, &j);
    }
    __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

/* The next scatter record, in ring order, once its previous host function
 * ran; a failed host stream ends the wait, an idle one proves it free. */
CUXFER_API cudaError_t cuxfer_impl_plan_rec(cuxfer_plan2d *p, struct cuxfer_impl_scatter_rec **r)
{
    struct cuxfer_impl_scatter_rec *x = &p->recs[p->rec_next % CUXFER_IMPL_PLAN_RECS];
    cuxfer_impl_relax rx;
    cudaError_t q;
    while (__atomic_load_n(&x->busy, __ATOMIC_ACQUIRE)) {
        rx = cuxfer_impl_relax_begin();
        q = cuxfer_impl_relax_done(rx, cudaStreamQuery(p->host));
        if (q == cudaSuccess)
            break; /* nothing pending on the host stream: its function ran or never will */
        if (q != cudaErrorNotReady)
            return cuxfer_impl_fail(q, "cuxfer_plan2d_copy_async: the plan's stream failed: %s",
                                    cudaGetErrorName(q));
        (void)cudaGetLastError();
        sched_yield();
    }
    p->rec_next++;
    x->plan = p;
    memset(&x->job, 0, sizeof x->job); /* a scatter, until the caller says otherwise */
    __atomic_store_n(&x->busy, 1, __ATOMIC_RELAXED);
    *r = x;
    return cudaSuccess;
}

/* Release SPAN's extraction descriptors and events (safe when absent). */
CUXFER_API void cuxfer_impl_plan_kx_free(cuxfer_plan2d *p)
{
    int i;
    if (p->kx_dev)
        (void)cuxfer_impl_dfree(p->kx_dev);
    p->kx_dev = NULL;
    for (i = 0; i < CUXFER_IMPL_KX_PAIRS; ++i) {
        (void)cuxfer_impl_event_drop(p->ev_kx[i]);
        p->ev_kx[i] = NULL;
    }
}

/* Release everything, after the plan's streams; safe on a zeroed plan. */
CUXFER_API cudaError_t cuxfer_plan2d_destroy(cuxfer_plan2d *p)
{
    int i;
    cudaError_t first = cudaSuccess;
    if (!p || !p->ready)
        return cudaSuccess;
    if (p->aux)
        cuxfer_impl_keep(&first, cuxfer_impl_stream_sync(p->aux));
    if (p->host)
        cuxfer_impl_keep(&first, cuxfer_impl_stream_sync(p->host));
    if (p->side)
        cuxfer_impl_keep(&first, cuxfer_impl_stream_sync(p->side));
    if (p->team_up)
        cuxfer_impl_team_stop(&p->team);
    for (i = 0; i < 2; ++i) {
        if (p->dscratch[i])
            (void)cuxfer_impl_dfree(p->dscratch[i]);
        (void)cuxfer_host_free(p->hstage[i]);
    }
    for (i = 0; i < CUXFER_IMPL_PLAN_SLOTS; ++i) {
        (void)cuxfer_impl_event_drop(p->ev_moved[i]);
        (void)cuxfer_impl_event_drop(p->ev_freed[i]);
        (void)cuxfer_impl_event_drop(p->ev_gmoved[i]);
        (void)cuxfer_impl_event_drop(p->ev_gfreed[i]);
    }
    (void)cuxfer_impl_event_drop(p->ev_fork);
    (void)cuxfer_impl_event_drop(p->ev_join);
    cuxfer_impl_kernel_unload(&p->klib, &p->kernel);
    (void)cuxfer_host_free(p->kdesc);
    cuxfer_impl_plan_kx_free(p);
    for (i = 0; i < 4; ++i) {
        cudaEvent_t e = i == 0 ? p->ev_side : i == 1 ? p->ev_t0 : i == 2 ? p->ev_td : p->ev_tp;
        (void)cuxfer_impl_event_drop(e);
    }
    (void)cuxfer_impl_stream_drop(p->side);
    (void)cuxfer_impl_stream_drop(p->aux);
    (void)cuxfer_impl_stream_drop(p->host);
    pthread_mutex_destroy(&p->mu);
    memset(p, 0, sizeof *p);
    cuxfer_impl_kcache_flush();
    return first;
}

/* The H200 defaults (measured with tools/xferbench --calibrate). */
CUXFER_API cuxfer_plan2d_tuning cuxfer_plan2d_default_tuning(void)
{
    cuxfer_plan2d_tuning t;
    /* Up to the widest row measured clearly above break-even (doc/PERF.md,
     * "Behind the constants": the planner's default tuning). */
    t.span_max_row = 32;
    t.pack_max_row = 32;
    t.max_ratio = 4;
    t.min_bytes = 1u << 20;
    return t;
}

/* The copy kernel and what PACK and SPAN need to use it; any failure
 * leaves p->kernel NULL (doc/DESIGN.md, section 6: without it). */
CUXFER_API void cuxfer_impl_plan_kernel_load(cuxfer_plan2d *p)
{
    cudaError_t err = cudaSuccess;
    int i;
    if (cuxfer_impl_kernel_load(p->device, &p->klib, &p->kernel, &p->kblocks, &err) != NULL)
        return;
    err = cuxfer_host_alloc((void **)&p->kdesc, CUXFER_IMPL_KX_BASE + 2 * CUXFER_IMPL_KX_PAIRS,
                            sizeof *p->kdesc, 0);
    if (err == cudaSuccess) /* rows 0: no pair matches a copy before it is written */
        memset(p->kdesc, 0, (CUXFER_IMPL_KX_BASE + 2 * CUXFER_IMPL_KX_PAIRS) * sizeof *p->kdesc);
    if (err == cudaSuccess)
        err = cudaHostGetDevicePointer((void **)&p->kdesc_dev, p->kdesc, 0);
    for (i = 0; i < 2 && err == cudaSuccess; ++i)
        err = cudaHostGetDevicePointer(&p->hstage_dev[i], p->hstage[i], 0);
    if (err == cudaSuccess)
        err = cuxfer_impl_stream_create(&p->side, cudaStreamNonBlocking, 0);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_side, cudaEventDisableTiming);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_t0, cudaEventDefault);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_td, cudaEventDefault);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_tp, cudaEventDefault);
    for (i = 0; i < CUXFER_IMPL_PLAN_SLOTS && err == cudaSuccess; ++i) {
        err = cuxfer_impl_event_create(&p->ev_gmoved[i], cudaEventDisableTiming);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_create(&p->ev_gfreed[i], cudaEventDisableTiming);
    }
    if (err != cudaSuccess) {
        cuxfer_impl_kernel_unload(&p->klib, &p->kernel); /* clears err */
        (void)cuxfer_host_free(p->kdesc);
        p->kdesc = NULL;
        return;
    }
    /* SPAN's extraction by the kernel; a failure leaves kx_dev NULL (SPAN
     * extracts with the copy engine), the kernel to the rest. */
    err = cuxfer_impl_dmalloc((void **)&p->kx_dev, 2 * CUXFER_IMPL_KX_PAIRS * sizeof *p->kx_dev);
    for (i = 0; i < CUXFER_IMPL_KX_PAIRS && err == cudaSuccess; ++i)
        err = cuxfer_impl_event_create(&p->ev_kx[i], cudaEventDisableTiming);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        cuxfer_impl_plan_kx_free(p);
    }
}

/* A plan on the current device with all the scratch its copies will use. */
CUXFER_API cudaError_t cuxfer_plan2d_create(cuxfer_plan2d *p, const cuxfer_plan2d_options *opt)
{
    int i;
    cudaError_t err = cudaSuccess;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_plan2d_create: plan is NULL");
    memset(p, 0, sizeof *p);
    if (opt)
        p->opt = *opt;
    CUXFER_TRY(cuxfer_impl_team_options("cuxfer_plan2d_create", p, sizeof *p, p->opt.strategy,
                                        CUXFER_PLAN_PACK, &p->opt.threads, CUXFER_PLAN_MAX_THREADS,
                                        2, &p->opt.chunk_bytes, (size_t)8 << 20));
    p->tuning = cuxfer_plan2d_default_tuning();
    p->device = cuxfer_impl_current_device();
    pthread_mutex_init(&p->mu, NULL);
    p->ready = 1;
    for (i = 0; i < 2 && err == cudaSuccess; ++i) {
        err = cuxfer_impl_dmalloc(&p->dscratch[i], p->opt.chunk_bytes);
        if (err == cudaSuccess)
            err = cuxfer_host_alloc(&p->hstage[i], p->opt.chunk_bytes, 1, 0);
    }
    for (i = 0; i < CUXFER_IMPL_PLAN_SLOTS && err == cudaSuccess; ++i) {
        err = cuxfer_impl_event_create(&p->ev_moved[i], cudaEventDisableTiming);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_create(&p->ev_freed[i], cudaEventDisableTiming);
    }
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_fork, cudaEventDisableTiming);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_join, cudaEventDisableTiming);
    if (err == cudaSuccess)
        err = cuxfer_impl_stream_create(&p->aux, cudaStreamNonBlocking, 0);
    if (err == cudaSuccess)
        err = cuxfer_impl_stream_create(&p->host, cudaStreamNonBlocking, 0);
    if (err == cudaSuccess) {
        /* CUDA's host-function thread is the team's last part */
        (void)cuxfer_impl_team_start(&p->team, p->opt.threads - 1, NULL, NULL);
        p->team_up = 1;
    }
    if (err == cudaSuccess) {
        cuxfer_impl_plan_kernel_load(p);
        if (!p->kernel && p->tuning.pack_max_row > 16)
            p->tuning.pack_max_row = 16; /* copy-engine packing lost at 32 B */
    }
    if (err != cudaSuccess) {
        (void)cuxfer_plan2d_destroy(p);
        return cuxfer_impl_fail_cuda(err, "cuxfer_plan2d_create: %s", cudaGetErrorName(err));
    }
    return cudaSuccess;
}

/* Bytes of one PACK slot: half a chunk buffer, 256-byte aligned, at most
 * CUXFER_IMPL_PACK_SLOT_MAX, so the staging in flight stays in the host's
 * last-level cache between the DMA and the scatter (doc/PERF.md, "Behind
 * the constants": PACK's slot size). */
#define CUXFER_IMPL_PACK_SLOT_MAX ((size_t)4 << 20)
CUXFER_API size_t cuxfer_impl_plan_slot(const cuxfer_plan2d *p)
{
    size_t half = p->opt.chunk_bytes / 2 / 256 * 256;
    return half < CUXFER_IMPL_PACK_SLOT_MAX ? half : CUXFER_IMPL_PACK_SLOT_MAX;
}

/* Rows of slot c of a copy (`per` fill a slot, `left` remain), ramping up
 * from 1/16 of a slot so the host threads or the kernel start early. */
CUXFER_API size_t cuxfer_impl_plan_rows(size_t per, size_t c, size_t left)
{
    size_t cap = c < 4 ? per >> (4 - c) : per;
    if (cap == 0)
        cap = 1;
    return left < cap ? left : cap;
}

/* The strategy AUTO (or the forced one) takes for this copy. */
CUXFER_API int cuxfer_plan2d_choose(const cuxfer_plan2d *p, const cuxfer_view *dst,
                                    const cuxfer_view *src)
{
    size_t row = src->width * src->elem_size, total = row * src->height;
    int dev_dst = dst->kind == CUXFER_MEMORY_DEVICE, dev_src = src->kind == CUXFER_MEMORY_DEVICE;
    int h2d = dev_dst && src->kind == CUXFER_MEMORY_PINNED;
    int d2h = dev_src && dst->kind == CUXFER_MEMORY_PINNED;
    int want = p->opt.strategy;
    if (src->height < 2 || row == 0 || (p->opt.chunk_bytes && row > p->opt.chunk_bytes))
        return CUXFER_PLAN_DIRECT; /* a row must fit one scratch chunk */
    if (want == CUXFER_PLAN_SPAN)
        return h2d && src->pitch > row ? CUXFER_PLAN_SPAN : CUXFER_PLAN_DIRECT;
    if (d2h && p->opt.chunk_bytes && row > cuxfer_impl_plan_slot(p))
        d2h = 0; /* a row must fit one of PACK's slots */
    if (want == CUXFER_PLAN_PACK)
        return d2h ? CUXFER_PLAN_PACK : CUXFER_PLAN_DIRECT;
    if (want == CUXFER_PLAN_DIRECT || total < p->tuning.min_bytes)
        return CUXFER_PLAN_DIRECT;
    if (h2d && src->pitch > row && row <= p->tuning.span_max_row &&
        src->pitch <= p->tuning.max_ratio * row)
        return CUXFER_PLAN_SPAN;
    if (d2h && row <= p->tuning.pack_max_row)
        return CUXFER_PLAN_PACK;
    return CUXFER_PLAN_DIRECT;
}

/* SPAN's extraction by the copy kernel: rows narrower than this many bytes,
 * in chunks spanning a 16th of the rows (16 return on a held stream), at
 * least KX_CHUNK, at most `chunk`, so link and extraction overlap in any
 * span (doc/PERF.md, "Behind the constants": SPAN's extraction). */
#define CUXFER_IMPL_KX_MAX_ROW 7
#define CUXFER_IMPL_KX_CHUNK ((size_t)2 << 20)
CUXFER_API size_t cuxfer_impl_kx_chunk(size_t chunk, size_t pitch, size_t row, size_t height)
{
    size_t c = height / 16 * pitch + row; /* height / 16 + 1 rows */
    c = c > CUXFER_IMPL_KX_CHUNK ? c : CUXFER_IMPL_KX_CHUNK;
    return c < chunk ? c : chunk;
}

/* Rows a chunk of a SPAN copy of `height` rows takes: as few chunks as
 * spans of at most `chunk` bytes allow, as even as they can be: the link
 * and the extraction overlap to the last chunk, which a small remainder
 * left to one of them alone (doc/PERF.md, "Behind the constants": SPAN's
 * chunks). */
CUXFER_API size_t cuxfer_impl_span_per(size_t chunk, size_t pitch, size_t row, size_t height)
{
    size_t fit = (chunk - row) / pitch + 1, n = height ? (height - 1) / fit + 1 : 1;
    return height ? (height - 1) / n + 1 : fit;
}

/* The rows of the last chunk of a SPAN copy of `height` rows, `per` a chunk. */
CUXFER_API size_t cuxfer_impl_span_last(size_t height, size_t per)
{
    return height - (height - 1) / per * per;
}

/* The kernel's extraction of one chunk is one launch over one tile
 * {0, 0, rows, row}, from the scratch's rows (its strided side) straight
 * to the destination's (its dense side, given the destination's pitch).
 * Pure arithmetic, so that tests/state/internals.c runs it through a CPU
 * model of the kernel. */
struct cuxfer_impl_kx_launch {
    const void *host;
    size_t pitch;
    void *dense;
    size_t dpitch;
    uintptr_t align;
};
CUXFER_API void cuxfer_impl_span_kx(const void *scratch, size_t spitch, void *to, size_t dpitch,
                                    size_t row, struct cuxfer_impl_kx_launch *l)
{
    l->host = scratch;
    l->pitch = spitch;
    l->dense = to;
    l->dpitch = dpitch;
    l->align = (uintptr_t)scratch | (uintptr_t)to | spitch | dpitch | row;
}

/* Whether descriptor pair d holds {0, 0, per, row} and {0, 0, last, row}. */
CUXFER_API int cuxfer_impl_kx_holds(const cuxfer_impl_tile *d, size_t per, size_t last,
                                    size_t row)
{
    return d[0].src == 0 && d[0].dst == 0 && d[0].rows == per && d[0].rb == row &&
           d[1].src == 0 && d[1].dst == 0 && d[1].rows == last && d[1].rb == row;
}

/* The descriptor pair for a kernel extraction of chunks of `per` rows,
 * the last of `last`, or -1: extract with the copy engine.  A descriptor
 * must not change while a queued launch may read it, and the enqueueing
 * thread cannot wait (the stream may be held): a pair that holds these
 * values is taken as it is, and one is rewritten only when its event on
 * aux says that no launch reading it is left.  The launches read the
 * pair's copy in kx_dev, sent on aux ahead of them; the event covers that
 * copy too, so the host pair never changes before it is read. */
CUXFER_API int cuxfer_impl_kx_pair(cuxfer_plan2d *p, size_t per, size_t last, size_t row)
{
    cuxfer_impl_tile *d = p->kdesc + CUXFER_IMPL_KX_BASE;
    cudaError_t q = cudaErrorNotReady;
    unsigned i, j = 0;
    for (i = 0; i < CUXFER_IMPL_KX_PAIRS; ++i)
        if (cuxfer_impl_kx_holds(d + 2 * i, per, last, row))
            return (int)i;
    for (i = 0; i < CUXFER_IMPL_KX_PAIRS && q != cudaSuccess; ++i) {
        j = (p->kx_next + i) % CUXFER_IMPL_KX_PAIRS;
        q = cuxfer_impl_event_query(p->ev_kx[j]);
    }
    if (q != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    p->kx_next = (j + 1) % CUXFER_IMPL_KX_PAIRS;
    cuxfer_impl_tile_put(&d[2 * j], 0, 0, per, row); /* per * row < 2^31: the caller checks */
    cuxfer_impl_tile_put(&d[2 * j + 1], 0, 0, last, row);
    if (cudaMemcpyAsync(p->kx_dev + 2 * j, &d[2 * j], 2 * sizeof *d, cudaMemcpyHostToDevice,
                        p->aux) != cudaSuccess) {
        (void)cudaGetLastError();
        memset(&d[2 * j], 0, 2 * sizeof *d); /* rows 0: no copy takes it as written */
        return -1;
    }
    return (int)j;
}

/* SPAN's span part, rows [0, height): per chunk, the span goes up in one
 * 1D copy on s and the rows are extracted on aux, two buffers in turn;
 * narrow rows by the kernel where the plan may use it (one launch, the
 * scratch's rows to dst's). */
CUXFER_API cudaError_t cuxfer_impl_plan_span_rows(cuxfer_plan2d *p, const cuxfer_view *dst,
                                                  const cuxfer_view *src, size_t height,
                                                  cudaStream_t s)
{
    size_t row = src->width * src->elem_size, chunk = p->opt.chunk_bytes, per, y, rows, span;
    int b = 0, kx = -1, narrow = p->kx_dev && height && row <= CUXFER_IMPL_KX_MAX_ROW &&
                                 dst->device == p->device &&
                                 cuxfer_impl_current_device() == p->device;
    cudaError_t err;
    if (narrow)
        chunk = cuxfer_impl_kx_chunk(chunk, src->pitch, row, height);
    per = cuxfer_impl_span_per(chunk, src->pitch, row, height);
    if (narrow && per * row < ((size_t)1 << 31))
        kx = cuxfer_impl_kx_pair(p, per, cuxfer_impl_span_last(height, per), row);
    /* ev_fork was recorded on s by cuxfer_plan2d_copy_async */
    err = cudaStreamWaitEvent(p->aux, p->ev_fork, 0);
    for (y = 0; y < height && err == cudaSuccess; y += rows, b ^= 1) {
        unsigned char *to = (unsigned char *)dst->ptr + y * dst->pitch;
        rows = height - y < per ? height - y : per;
        span = (rows - 1) * src->pitch + row;
        err = cudaStreamWaitEvent(s, p->ev_freed[b], 0);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(p->dscratch[b], (const unsigned char *)src->ptr + y * src->pitch,
                                  span, cudaMemcpyHostToDevice, s);
        if (err == cudaSuccess)
            err = cudaEventRecord(p->ev_moved[b], s);
        if (err == cudaSuccess)
            err = cudaStreamWaitEvent(p->aux, p->ev_moved[b], 0);
        if (err == cudaSuccess && kx >= 0) {
            /* the pair's first descriptor has per rows, its second the last chunk's */
            cuxfer_impl_tile *d = p->kx_dev + 2 * kx + (rows != per);
            struct cuxfer_impl_kx_launch l;
            cuxfer_impl_span_kx(p->dscratch[b], src->pitch, to, dst->pitch, row, &l);
            err = cuxfer_impl_kernel_launch(p->kernel, p->kblocks, d, 1, l.host, l.pitch, l.dense,
                                            l.dpitch, 0, l.align, rows * row, p->aux);
        } else if (err == cudaSuccess) {
            err = cudaMemcpy2DAsync(to, dst->pitch, p->dscratch[b], src->pitch, row, rows,
                                    cudaMemcpyDeviceToDevice, p->aux);
        }
        if (err == cudaSuccess)
            err = cudaEventRecord(p->ev_freed[b], p->aux);
    }
    if (kx >= 0) {
        /* also after a failure: launches may have been queued */
        cudaError_t e2 = cudaEventRecord(p->ev_kx[kx], p->aux);
        if (e2 != cudaSuccess) {
            /* the event does not cover the pair's launches: let them end
             * before a later copy may rewrite the pair */
            (void)cuxfer_impl_stream_sync(p->aux);
            if (err == cudaSuccess)
                err = e2;
        }
    }
    CUXFER_TRY(err);
    CUXFER_TRY(cudaEventRecord(p->ev_join, p->aux));
    return cudaStreamWaitEvent(s, p->ev_join, 0);
}

/* SPAN's gathered share: the last rows are gathered densely by the team
 * and unpacked by the kernel, crossing the link without their gaps
 * (doc/PERF.md, "Behind the constants": SPAN's gathered share, and why
 * only some rows, shares and destinations take one). */
#define CUXFER_IMPL_GATHER_SHARE 0.3
#define CUXFER_IMPL_GATHER_MIN_ROW 8
#define CUXFER_IMPL_GATHER_MIN_ROWS 1024

/* How many of a SPAN copy's last rows the gathered share takes (with the kernel). */
CUXFER_API size_t cuxfer_impl_gather_share(size_t row, size_t height)
{
    size_t gat = (size_t)(CUXFER_IMPL_GATHER_SHARE * (double)height);
    return row < CUXFER_IMPL_GATHER_MIN_ROW || gat < CUXFER_IMPL_GATHER_MIN_ROWS ? 0 : gat;
}

/* The gathered share, rows [y0, src->height): the host function gathers
 * into a slot, the side stream's kernel unpacks it.  The caller joins side. */
CUXFER_API cudaError_t cuxfer_impl_plan_gather(cuxfer_plan2d *p, const cuxfer_view *dst,
                                               const cuxfer_view *src, size_t y0)
{
    size_t row = src->width * src->elem_size, slot = cuxfer_impl_plan_slot(p);
    size_t per = slot / row, y, rows, c;
    struct cuxfer_impl_scatter_rec *rec = NULL;
    cudaError_t err;
    /* ev_fork was recorded on s by cuxfer_plan2d_copy_async */
    err = cudaStreamWaitEvent(p->host, p->ev_fork, 0);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(p->side, p->ev_fork, 0);
    for (y = y0, c = 0; y < src->height && err == cudaSuccess; y += rows, ++c) {
        int k = (int)(c % CUXFER_IMPL_PLAN_SLOTS);
        size_t off = (size_t)(k / 2) * slot, di = CUXFER_IMPL_PLAN_RECS + (size_t)k;
        /* the first slots small, as PACK's: the kernel starts early */
        rows = cuxfer_impl_plan_rows(per, c, src->height - y);
        err = cudaStreamWaitEvent(p->host, p->ev_gfreed[k], 0);
        if (err == cudaSuccess)
            err = cuxfer_impl_plan_rec(p, &rec);
        if (err != cudaSuccess)
            break;
        rec->job.dst = (unsigned char *)p->hstage[k % 2] + off;
        rec->job.src = (const unsigned char *)src->ptr + y * src->pitch;
        rec->job.spitch = src->pitch;
        rec->job.dpitch = row;
        rec->job.row = row;
        rec->job.rows = rows;
        rec->job.desc = &p->kdesc[di];
        err = cudaLaunchHostFunc(p->host, cuxfer_impl_plan_scatter, rec);
        if (err != cudaSuccess) {
            __atomic_store_n(&rec->busy, 0, __ATOMIC_RELEASE); /* never queued */
            break;
        }
        err = cudaEventRecord(p->ev_gmoved[k], p->host);
        if (err == cudaSuccess)
            err = cudaStreamWaitEvent(p->side, p->ev_gmoved[k], 0);
        if (err == cudaSuccess) {
            const unsigned char *to = (const unsigned char *)dst->ptr + y * dst->pitch;
            unsigned char *from = (unsigned char *)p->hstage_dev[k % 2] + off;
            err = cuxfer_impl_kernel_launch(p->kernel, p->kblocks, &p->kdesc_dev[di], 1, to,
                                            dst->pitch, from, 0, 1,
                                            (uintptr_t)to | (uintptr_t)from | dst->pitch | row,
                                            rows * row, p->side);
        }
        if (err == cudaSuccess)
            err = cudaEventRecord(p->ev_gfreed[k], p->side);
    }
    return err;
}

/* This SPAN copy's gathered rows (0: none): kernel, plan's device, 4-byte rows. */
CUXFER_API size_t cuxfer_impl_plan_gathered(const cuxfer_plan2d *p, const cuxfer_view *dst,
                                            const cuxfer_view *src)
{
    size_t row = src->width * src->elem_size;
    if (!p->kernel || dst->device != p->device ||
        (((uintptr_t)dst->ptr | (uintptr_t)dst->pitch | (uintptr_t)row) & 3) ||
        cuxfer_impl_current_device() != p->device)
        return 0;
    return cuxfer_impl_gather_share(row, src->height);
}

/* SPAN: the span part and the gathered share at once; s waits for both,
 * also after a failure, which does not mark the slots free
 * (cuxfer_impl_plan_release): a pending gather or unpack must not touch a
 * slot the next copy reuses, so the host and side streams are drained. */
CUXFER_API cudaError_t cuxfer_impl_plan_span(cuxfer_plan2d *p, const cuxfer_view *dst,
                                             const cuxfer_view *src, cudaStream_t s)
{
    size_t gat = cuxfer_impl_plan_gathered(p, dst, src);
    cudaError_t err = cudaSuccess, e2;
    if (gat)
        err = cuxfer_impl_plan_gather(p, dst, src, src->height - gat);
    if (err == cudaSuccess)
        err = cuxfer_impl_plan_span_rows(p, dst, src, src->height - gat, s);
    if (gat) {
        e2 = cudaEventRecord(p->ev_side, p->side);
        if (e2 == cudaSuccess)
            e2 = cudaStreamWaitEvent(s, p->ev_side, 0);
        if (err == cudaSuccess)
            err = e2;
        if (err != cudaSuccess) {
            (void)cuxfer_impl_stream_sync(p->host);
            (void)cuxfer_impl_stream_sync(p->side);
        }
    }
    return err;
}

/* PACK's direct-share width class: 0 up to 63-byte rows, 1 to 127, 2 beyond. */
CUXFER_API int cuxfer_impl_share_class(size_t row)
{
    int c = 0;
    while (c + 1 < CUXFER_IMPL_SHARE_CLASSES && row >= ((size_t)64 << c))
        ++c;
    return c;
}

/* The median of v[0..n), n >= 1, sorting v in place (n is a handful). */
CUXFER_API double cuxfer_impl_median(double *v, unsigned n)
{
    double x;
    unsigned i, j;
    for (i = 1; i < n; ++i) {
        x = v[i];
        for (j = i; j > 0 && v[j - 1] > x; --j)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The last direct-share copy's rates, once it is done, join their class's. */
CUXFER_API void cuxfer_impl_share_learn(cuxfer_plan2d *p)
{
    cuxfer_impl_relax rx;
    cudaError_t a, b;
    float td = 0, tp = 0;
    int c = p->t_class;
    unsigned k;
    if (!p->t_pending)
        return;
    p->t_pending = 0;
    rx = cuxfer_impl_relax_begin();
    a = cudaEventQuery(p->ev_td);
    b = cudaEventQuery(p->ev_tp);
    if (a == cudaSuccess && b == cudaSuccess) {
        a = cudaEventElapsedTime(&td, p->ev_t0, p->ev_td);
        b = cudaEventElapsedTime(&tp, p->ev_t0, p->ev_tp);
    }
    cuxfer_impl_relax_end(rx);
    if (a != cudaSuccess || b != cudaSuccess || td <= 0 || tp <= 0) {
        (void)cudaGetLastError(); /* not ready, or a failed stream: no sample */
        return;
    }
    k = p->rate_n[c] % CUXFER_IMPL_SHARE_SAMPLES;
    p->rate_d[c][k] = p->t_share * (double)p->t_rows / td;
    p->rate_p[c][k] = (1 - p->t_share) * (double)p->t_rows / tp;
    p->rate_n[c]++;
}

/* The share of the rows that goes direct: at the learned rates the direct
 * part should take SHARE_SLACK times the packed part's time, so the host
 * threads, whose speed varies most, finish first (doc/PERF.md, "Behind the
 * constants": PACK's direct share). */
#define CUXFER_IMPL_SHARE_SLACK 1.3
#define CUXFER_IMPL_SHARE_MIN_ROW 32
CUXFER_API double cuxfer_impl_share(const cuxfer_plan2d *p, size_t row)
{
    int c = cuxfer_impl_share_class(row);
    unsigned n = p->rate_n[c] < CUXFER_IMPL_SHARE_SAMPLES ? p->rate_n[c]
                                                          : CUXFER_IMPL_SHARE_SAMPLES;
    double d, q, f, t[CUXFER_IMPL_SHARE_SAMPLES];
    if (row < CUXFER_IMPL_SHARE_MIN_ROW)
        return 0;
    if (n) {
        memcpy(t, p->rate_d[c], sizeof t);
        d = cuxfer_impl_median(t, n);
        memcpy(t, p->rate_p[c], sizeof t);
        q = cuxfer_impl_median(t, n);
    } else {
        d = 0.8e6 * 2 / 3;             /* rows a millisecond */
        q = 25e6 / (double)row;
    }
    f = CUXFER_IMPL_SHARE_SLACK * d / (CUXFER_IMPL_SHARE_SLACK * d + q);
    return f < 0.02 ? 0.02 : f > 0.9 ? 0.9 : f;
}

/* PACK's packed part, rows [0, height): packed into a slot's staging (the
 * kernel on s, else aux's 2D copy and a 1D copy on s), then scattered. */
CUXFER_API cudaError_t cuxfer_impl_plan_pack_rows(cuxfer_plan2d *p, const cuxfer_view *dst,
                                                  const cuxfer_view *src, size_t height,
                                                  int kern, cudaStream_t s)
{
    size_t row = src->width * src->elem_size, slot = cuxfer_impl_plan_slot(p);
    size_t per = slot / row, y, rows, c;
    struct cuxfer_impl_scatter_rec *rec = NULL;
    cudaError_t err;
    for (y = 0, c = 0; y < height; y += rows, ++c) {
        int k = (int)(c % CUXFER_IMPL_PLAN_SLOTS);
        unsigned char *dev = (unsigned char *)p->dscratch[k % 2] + (size_t)(k / 2) * slot;
        unsigned char *stage = (unsigned char *)p->hstage[k % 2] + (size_t)(k / 2) * slot;
        const unsigned char *from = (const unsigned char *)src->ptr + y * src->pitch;
        rows = cuxfer_impl_plan_rows(per, c, height - y);
        if (kern) {
            /* into the staging through its mapping; the descriptor sits
             * under the record, handed out again after its host function */
            unsigned char *to = (unsigned char *)p->hstage_dev[k % 2] + (size_t)(k / 2) * slot;
            size_t di;
            CUXFER_TRY(cudaStreamWaitEvent(s, p->ev_freed[k], 0));
            CUXFER_TRY(cuxfer_impl_plan_rec(p, &rec));
            di = (size_t)(rec - p->recs);
            cuxfer_impl_tile_put(&p->kdesc[di], 0, 0, rows, row); /* rows <= a slot's bytes */
            err = cuxfer_impl_kernel_launch(p->kernel, p->kblocks, &p->kdesc_dev[di], 1, from,
                                            src->pitch, to, 0, 0,
                                            (uintptr_t)from | (uintptr_t)to | src->pitch | row,
                                            rows * row, s);
            if (err != cudaSuccess) {
                __atomic_store_n(&rec->busy, 0, __ATOMIC_RELEASE); /* never launched */
                return err;
            }
        } else {
            CUXFER_TRY(cudaStreamWaitEvent(p->aux, p->ev_freed[k], 0));
            CUXFER_TRY(cudaMemcpy2DAsync(dev, row, from, src->pitch, row, rows,
                                         cudaMemcpyDeviceToDevice, p->aux));
            CUXFER_TRY(cudaEventRecord(p->ev_moved[k], p->aux));
            CUXFER_TRY(cudaStreamWaitEvent(s, p->ev_moved[k], 0));
            CUXFER_TRY(cudaMemcpyAsync(stage, dev, rows * row, cudaMemcpyDeviceToHost, s));
            CUXFER_TRY(cuxfer_impl_plan_rec(p, &rec));
        }
        err = cudaEventRecord(p->ev_moved[k], s);
        if (err == cudaSuccess)
            err = cudaStreamWaitEvent(p->host, p->ev_moved[k], 0);
        if (err == cudaSuccess) {
            rec->job.dst = (unsigned char *)dst->ptr + y * dst->pitch;
            rec->job.src = stage;
            rec->job.dpitch = dst->pitch;
            rec->job.row = row;
            rec->job.rows = rows;
            err = cudaLaunchHostFunc(p->host, cuxfer_impl_plan_scatter, rec);
        }
        if (err != cudaSuccess) {
            /* never queued; a queued launch may still read the record's
             * descriptor, so wait for s before handing the record out */
            if (kern)
                (void)cuxfer_impl_stream_sync(s);
            __atomic_store_n(&rec->busy, 0, __ATOMIC_RELEASE);
            return err;
        }
        CUXFER_TRY(cudaEventRecord(p->ev_freed[k], p->host));
    }
    return cudaSuccess;
}

/* PACK; with the kernel the copy engine is free for a direct share. */
CUXFER_API cudaError_t cuxfer_impl_plan_pack(cuxfer_plan2d *p, const cuxfer_view *dst,
                                             const cuxfer_view *src, cudaStream_t s)
{
    size_t row = src->width * src->elem_size, height = src->height, direct = 0;
    int kern = p->kernel != NULL && cuxfer_impl_current_device() == p->device &&
               src->device == p->device;
    cudaError_t err;
    /* ev_fork was recorded on s by cuxfer_plan2d_copy_async */
    if (!kern)
        CUXFER_TRY(cudaStreamWaitEvent(p->aux, p->ev_fork, 0));
    CUXFER_TRY(cudaStreamWaitEvent(p->host, p->ev_fork, 0));
    if (kern) {
        /* The direct share: the last rows, on the side stream, queued first
         * so it starts even when the packed part waits for records. */
        cuxfer_impl_share_learn(p);
        direct = (size_t)(cuxfer_impl_share(p, row) * (double)src->height);
        height = src->height - direct;
        if (direct) {
            CUXFER_TRY(cudaEventRecord(p->ev_t0, s));
            CUXFER_TRY(cudaStreamWaitEvent(p->side, p->ev_fork, 0));
            CUXFER_TRY(cudaMemcpy2DAsync((unsigned char *)dst->ptr + height * dst->pitch,
                                         dst->pitch,
                                         (const unsigned char *)src->ptr + height * src->pitch,
                                         src->pitch, row, direct, cudaMemcpyDeviceToHost,
                                         p->side));
            CUXFER_TRY(cudaEventRecord(p->ev_td, p->side));
            CUXFER_TRY(cudaEventRecord(p->ev_side, p->side));
        }
    }
    err = cuxfer_impl_plan_pack_rows(p, dst, src, height, kern, s);
    if (direct) {
        /* joined also on failure: s must not run ahead of the direct share */
        cudaError_t e2 = cudaStreamWaitEvent(s, p->ev_side, 0);
        if (err == cudaSuccess && (err = e2) == cudaSuccess &&
            (err = cudaEventRecord(p->ev_tp, p->host)) == cudaSuccess) {
            p->t_share = (double)direct / (double)src->height;
            p->t_class = cuxfer_impl_share_class(row);
            p->t_rows = src->height;
            p->t_pending = 1;
        }
    }
    CUXFER_TRY(err);
    CUXFER_TRY(cudaEventRecord(p->ev_join, p->host));
    return cudaStreamWaitEvent(s, p->ev_join, 0);
}

/* After a SPAN or PACK copy joined s, every slot is free once s gets here:
 * all are marked (SPAN's slots are whole buffers, PACK's halves). */
CUXFER_API cudaError_t cuxfer_impl_plan_release(cuxfer_plan2d *p, cudaStream_t s)
{
    int k;
    for (k = 0; k < CUXFER_IMPL_PLAN_SLOTS; ++k) {
        CUXFER_TRY(cudaEventRecord(p->ev_freed[k], s));
        if (p->ev_gfreed[k])
            CUXFER_TRY(cudaEventRecord(p->ev_gfreed[k], s));
    }
    return cudaSuccess;
}

/* The body of cuxfer_plan2d_copy_async, under the plan's lock.  A capturing
 * stream goes DIRECT (a replay would reuse scratch that copies reuse too),
 * as does another device's (the plan's streams cannot join it). */
CUXFER_API cudaError_t cuxfer_impl_plan_copy(cuxfer_plan2d *p, const cuxfer_view *dst,
                                             const cuxfer_view *src, cudaStream_t s)
{
    static const char call[] = "cuxfer_plan2d_copy_async";
    int strategy, cap;
    cudaError_t err;
    CUXFER_TRY(cuxfer_impl_copy2d_check(call, dst, src, 0));
    if (src->width == 0 || src->height == 0)
        return cudaSuccess; /* nothing queued, so nothing for the guard to see */
    /* every strategy queues copies on s: the guard of cuxfer_copy2d_async */
    CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 0));
    strategy = cuxfer_plan2d_choose(p, dst, src);
    if (strategy == CUXFER_PLAN_DIRECT)
        return cuxfer_impl_copy2d(call, dst, src, s, 0);
    CUXFER_TRY(cuxfer_impl_stream_usable(call, "stream", s, &cap));
    if (cap)
        return cuxfer_impl_copy2d(call, dst, src, s, 0);
#if CUDART_VERSION >= 12080
    if (cuxfer_impl_stream_device(s) != p->device)
        return cuxfer_impl_copy2d(call, dst, src, s, 0);
#endif
    /* SPAN and PACK ask only for pinned and device views (choose says so),
     * so the pageable guard has nothing to say; check the kinds are true. */
    CUXFER_TRY(cuxfer_impl_kind_agrees(call, "dst", dst,
                                       cuxfer_impl_classify_cached(dst->ptr, NULL)));
    CUXFER_TRY(cuxfer_impl_kind_agrees(call, "src", src,
                                       cuxfer_impl_classify_cached(src->ptr, NULL)));
    CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 1));
    err = cudaEventRecord(p->ev_fork, s);
    if (err != cudaSuccess) {
        /* Before 12.8 how another device's stream shows (invalid handle):
         * nothing was queued, and the direct copy works on any stream. */
        (void)cudaGetLastError();
        return cuxfer_impl_copy2d(call, dst, src, s, 0);
    }
    err = strategy == CUXFER_PLAN_SPAN ? cuxfer_impl_plan_span(p, dst, src, s)
                                       : cuxfer_impl_plan_pack(p, dst, src, s);
    if (err == cudaSuccess)
        err = cuxfer_impl_plan_release(p, s);
    return cuxfer_impl_debug_sync(err, s);
}

/* cuxfer_copy2d_async with a plan, under the plan's lock. */
CUXFER_API cudaError_t cuxfer_plan2d_copy_async(cuxfer_plan2d *p, const cuxfer_view *dst,
                                                const cuxfer_view *src, cudaStream_t s)
{
    cudaError_t err;
    if (!p || !p->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_plan2d_copy_async: plan not created");
    pthread_mutex_lock(&p->mu);
    err = cuxfer_impl_plan_copy(p, dst, src, s);
    pthread_mutex_unlock(&p->mu);
    return err;
}

/* Median GB/s of `reps` runs of one copy (strategy 0: cuxfer_copy2d_async). */
CUXFER_API cudaError_t cuxfer_impl_plan_time(cuxfer_plan2d *p, int strategy,
                                             const cuxfer_view *dst, const cuxfer_view *src,
                                             cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                                             double *gbps)
{
    double ms[5];
    float t = 0;
    int r, saved = p->opt.strategy;
    cudaError_t err = cudaSuccess;
    p->opt.strategy = strategy;
    for (r = -1; r < 5 && err == cudaSuccess; ++r) {
        err = cudaEventRecord(e0, s);
        if (err == cudaSuccess)
            err = strategy ? cuxfer_impl_plan_copy(p, dst, src, s)
                           : cuxfer_copy2d_async(dst, src, s);
        if (err == cudaSuccess)
            err = cudaEventRecord(e1, s);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_sync(e1);
        if (err == cudaSuccess && r >= 0)
            err = cudaEventElapsedTime(&t, e0, e1);
        if (err == cudaSuccess && r >= 0)
            ms[r] = t;
    }
    p->opt.strategy = saved; /* also on failure: the plan is not left forced */
    CUXFER_TRY(err);
    *gbps = cuxfer_gbps(src->width * src->elem_size * src->height,
                        (float)cuxfer_impl_median(ms, 5));
    return cudaSuccess;
}

/* Measure up to which row width SPAN and PACK beat the direct 2D copy by
 * 10% (man 3 cuxfer_plan2d); `report` runs under the plan's lock. */
CUXFER_API cudaError_t cuxfer_impl_plan_calibrate(cuxfer_plan2d *p, cudaStream_t s,
                                                  cuxfer_plan2d_tuning *out,
                                                  void (*report)(size_t row, int d2h, double raw,
                                                                 double planned, void *arg),
                                                  void *arg)
{
    static const size_t rows_b[] = {1, 2, 4, 8, 16, 32, 64, 128};
    const size_t total = 64u << 20; /* several chunks, so the pipelines fill */
    cuxfer_view hv, dv;
    void *h = NULL, *d = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cuxfer_plan2d_tuning t;
    size_t i;
    int ok[2] = {1, 1}, dir, saved = -1; /* ok: SPAN's, PACK's rows still win */
    cudaError_t err;
    if (cuxfer_impl_stream_state(s, &err) != CUXFER_IMPL_STREAM_UNCAPTURED)
        return cuxfer_impl_fail(err != cudaSuccess ? err : cudaErrorStreamCaptureUnsupported,
                                "cuxfer_plan2d_calibrate: stream %p is being captured (or "
                                "cannot be used now): calibration times and synchronizes, "
                                "run it before any capture", (void *)s);
    /* On the plan's device, on a stream of it: a record of the plan's own
     * event tells another device's stream (invalid handle) before anything
     * is allocated, and the plan's tuning is never timed elsewhere. */
    err = cuxfer_impl_use_device(p->device, &saved);
    if (err == cudaSuccess)
        err = cudaEventRecord(p->ev_fork, s);
    if (err != cudaSuccess) {
        cuxfer_impl_restore_device(saved);
        return cuxfer_impl_fail_cuda(err == cudaErrorInvalidResourceHandle ? cudaErrorInvalidDevice
                                                                            : err,
                                     "cuxfer_plan2d_calibrate: stream %p cannot be used on the "
                                     "plan's device %d (%s): calibrate on a stream of that device",
                                     (void *)s, p->device, cudaGetErrorName(err));
    }
    t = p->tuning;
    t.span_max_row = 0;
    t.pack_max_row = 0;
    err = cuxfer_host_alloc(&h, 2 * total, 1, 0);
    if (err == cudaSuccess)
        err = cuxfer_impl_dmalloc(&d, total);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&e0, cudaEventDefault);
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&e1, cudaEventDefault);
    if (err == cudaSuccess)
        memset(h, 0x3c, 2 * total);
    for (i = 0; err == cudaSuccess && i < sizeof rows_b / sizeof rows_b[0]; ++i) {
        /* at most 2^23 rows (doc/PERF.md, "Behind the constants":
         * calibration's row cap) */
        size_t w = rows_b[i], ht = total / w > ((size_t)1 << 23) ? (size_t)1 << 23 : total / w;
        err = cuxfer_impl_view_fill(&hv, h, 2 * w, w, ht, 1, CUXFER_MEMORY_PINNED, -1,
                                    "cuxfer_plan2d_calibrate:");
        if (err == cudaSuccess)
            err = cuxfer_impl_view_fill(&dv, d, w, w, ht, 1, CUXFER_MEMORY_DEVICE, p->device,
                                        "cuxfer_plan2d_calibrate:");
        for (dir = 0; dir < 2 && err == cudaSuccess; ++dir) { /* SPAN up, then PACK down */
            const cuxfer_view *to = dir ? &hv : &dv, *from = dir ? &dv : &hv;
            double raw = 0, plan = 0;
            err = cuxfer_impl_plan_time(p, 0, to, from, s, e0, e1, &raw);
            if (err == cudaSuccess)
                err = cuxfer_impl_plan_time(p, dir ? CUXFER_PLAN_PACK : CUXFER_PLAN_SPAN, to, from,
                                            s, e0, e1, &plan);
            if (err == cudaSuccess && report)
                report(w, dir, raw, plan, arg);
            if (err == cudaSuccess && ok[dir] && plan >= 1.1 * raw)
                *(dir ? &t.pack_max_row : &t.span_max_row) = w;
            else
                ok[dir] = 0;
        }
    }
    (void)cuxfer_impl_event_drop(e0);
    (void)cuxfer_impl_event_drop(e1);
    if (d)
        (void)cuxfer_impl_dfree(d);
    (void)cuxfer_host_free(h);
    cuxfer_impl_restore_device(saved);
    CUXFER_TRY(err);
    p->tuning = t;
    if (out)
        *out = t;
    return cudaSuccess;
}

CUXFER_API cudaError_t cuxfer_plan2d_calibrate(cuxfer_plan2d *p, cudaStream_t s,
                                               cuxfer_plan2d_tuning *out,
                                               void (*report)(size_t row, int d2h, double raw,
                                                              double planned, void *arg),
                                               void *arg)
{
    cudaError_t err;
    if (!p || !p->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_plan2d_calibrate: plan not created");
    pthread_mutex_lock(&p->mu);
    err = cuxfer_impl_plan_calibrate(p, s, out, report, arg);
    pthread_mutex_unlock(&p->mu);
    return err;
}

/* ------------------------------------------------------------------------
 * 10a. Many regions at once: tiles and crops of one host view
 * ------------------------------------------------------------------------ */

/* One cudaMemcpy2DAsync per tile is enqueue-bound, and
 * cudaMemcpy3DBatchAsync is no faster (doc/PERF.md, "Many small regions:
 * the raw routes").  DIRECT, KERNEL and GATHER: man 3 cuxfer_rois for what
 * they do, doc/DESIGN.md section 7 for how.  Tile i sits at off[i] of the
 * dense buffer, the prefix sum of the earlier tiles' bytes. */
#define CUXFER_ROIS_AUTO 0
#define CUXFER_ROIS_DIRECT 1
#define CUXFER_ROIS_GATHER 2
#define CUXFER_ROIS_KERNEL 3
#define CUXFER_ROIS_H2D 0 /* host view -> dense device buffer */
#define CUXFER_ROIS_D2H 1 /* dense device buffer -> host view */
#define CUXFER_ROIS_MAX_THREADS 64
#define CUXFER_ROIS_SLOTS 3 /* pinned staging buffers in the pipeline */

/* Options of cuxfer_rois_create; {0} means the defaults. */
struct cuxfer_rois_options {
    size_t chunk_bytes;       /* pinned staging per slot (default 4 MiB) */
    int threads;              /* threads, caller included (CPUs, <= 16) */
    int strategy;             /* CUXFER_ROIS_AUTO, or force one */
    size_t direct_tile_bytes; /* AUTO: DIRECT from this mean tile size (3 MiB
                                 with KERNEL, else 16 KiB x threads: there
                                 the per-tile loop runs near the link) */
};

/* --- the plan ------------------------------------------------------------- */

/* A staging slot (GATHER's chunks, KERNEL's descriptors) or an extra one. */
struct cuxfer_impl_kslot {
    void *stage, *dev; /* pinned (portable, mapped), and as the kernel sees it */
    cudaEvent_t ev;    /* its last use */
};

struct cuxfer_rois {
    cuxfer_rois_options opt;
    int device;                            /* current device at create */
    struct cuxfer_impl_kslot slot[CUXFER_ROIS_SLOTS];
    cudaEvent_t ev_probe;                  /* does the stream take our events? */
    cudaStream_t side, side_for;           /* KERNEL's turns; the s they last joined */
    unsigned long long side_for_id;        /* its ID (cuxfer_impl_stream_id) */
    void *lib, *kernel;                    /* cudaLibrary_t, cudaKernel_t of KERNEL */
    const char *no_kernel;                 /* why KERNEL is unavailable (NULL: it is) */
    cudaError_t kernel_err;                /* and the CUDA error that said so */
    int kslot;                             /* the staging slot KERNEL fills next */
    unsigned kblocks;                      /* KERNEL's grid: one wave of the device */
    size_t *off, off_cap;                  /* offsets scratch, n + 1 */
    void *check;                           /* overlap-check scratch */
    size_t check_bytes;
    cuxfer_impl_team team;
    pthread_mutex_t mu;                    /* one copy at a time per plan */
    int team_up, ready;
    /* KERNEL's extra descriptor slots, made when every staging slot is
     * still read by a queued launch (a held or busy stream), kept */
    struct cuxfer_impl_kslot *x;
    int nx;
};

/* Tile offsets: off[i] = bytes of tiles 0..i-1, off[n] the total. */
CUXFER_API cudaError_t cuxfer_rois_offsets(const cuxfer_roi *rois, size_t n, size_t elem_size,
                                           size_t *off)
{
    size_t i, b, sum = 0;
    if ((!rois && n) || !off)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_rois_offsets: %s is NULL",
                                off ? "rois" : "off");
    for (i = 0; i < n; ++i) {
        off[i] = sum;
        if (cuxfer_impl_mul(rois[i].width, rois[i].height, &b) != 0 ||
            cuxfer_impl_mul(b, elem_size, &b) != 0 || cuxfer_impl_add(sum, b, &sum) != 0)
            return cuxfer_impl_fail(cudaErrorInvalidValue,
                                    "cuxfer_rois_offsets: ROI %zu (%zux%zu of %zu-byte "
                                    "elements) overflows size_t in the dense buffer", i,
                                    rois[i].width, rois[i].height, elem_size);
    }
    off[n] = sum;
    return cudaSuccess;
}

/* One non-empty ROI of the sweep, in (y, x) order. */
struct cuxfer_impl_rect {
    size_t x0, x1, y0, y1, i, strip;
};

CUXFER_API int cuxfer_impl_rect_cmp(const void *a, const void *b)
{
    const struct cuxfer_impl_rect *p = (const struct cuxfer_impl_rect *)a,
                                  *q = (const struct cuxfer_impl_rect *)b;
    if (p->y0 != q->y0)
        return p->y0 < q->y0 ? -1 : 1;
    return p->x0 < q->x0 ? -1 : p->x0 > q->x0;
}

/* Sort 64-bit keys by their bits [lo, 64): an LSD radix sort of 11-bit
 * digits up to the largest key's top bit (three passes for an 8192 x 8192
 * image), the bits below lo (the ROI's index) carried along unsorted.
 * The result is in r or in tmp: the returned one. */
CUXFER_API unsigned long long *cuxfer_impl_key_sort(unsigned long long *r,
                                                    unsigned long long *tmp, size_t n, int lo)
{
    size_t count[2048], i, sum, c, k;
    unsigned long long top = 0, *t;
    int sh;
    for (i = 0; i < n; ++i)
        top |= r[i];
    for (sh = lo; sh < 64 && (top >> sh) != 0; sh += 11) {
        memset(count, 0, sizeof count);
        for (i = 0; i < n; ++i)
            ++count[(r[i] >> sh) & 2047];
        for (c = 0, sum = 0; c < 2048; ++c) {
            k = count[c];
            count[c] = sum;
            sum += k;
        }
        for (i = 0; i < n; ++i)
            tmp[count[(r[i] >> sh) & 2047]++] = r[i];
        t = r;
        r = tmp;
        tmp = t;
    }
    return r;
}

/* Bits needed for values below v. */
CUXFER_API int cuxfer_impl_bits(size_t v)
{
    int b = 0;
    while (b < (int)(sizeof v * CHAR_BIT) && (v >> b) != 0)
        ++b;
    return b;
}

/* The last of [lo, hi) (sorted by x0) whose x0 < x1, or hi. */
CUXFER_API size_t cuxfer_impl_rect_before(const struct cuxfer_impl_rect *r, size_t lo,
                                          size_t hi, size_t x1)
{
    size_t a = lo, b = hi;
    while (a < b) { /* first with x0 >= x1 */
        size_t m = a + (b - a) / 2;
        if (r[m].x0 < x1)
            a = m + 1;
        else
            b = m;
    }
    return a == lo ? hi : a - 1;
}

/* 1 when v is a multiple of d > 0, *q = v / d: through a double
 * reciprocal (a 64-bit division per ROI costs more than the rest of the
 * lattice check), exact below 2^51, where the product is off by less than
 * a half; above, by division. */
CUXFER_API int cuxfer_impl_multiple(size_t v, size_t d, double inv, size_t *q)
{
    *q = v >> 51 ? v / d : (size_t)(long long)((double)(long long)v * inv + 0.5);
    return *q * d == v;
}

/* The common case of the overlap check in O(N): tiles of one size w x h
 * whose corners lie on one lattice of steps w and h overlap exactly when
 * they share a lattice cell, so a bitmap of the cells decides. */
struct cuxfer_impl_grid {
    size_t w, h, ox, oy, cols, words; /* words: the bitmap's; 0 no lattice */
    double iw, ih;
};
#define CUXFER_IMPL_NO_CELL ((size_t)-1) /* an empty ROI */
#define CUXFER_IMPL_OFF_GRID ((size_t)-2)

/* The lattice of the first non-empty ROI (within the view or not): words
 * 0 when its bitmap would take over 64 bytes a ROI plus 128 KiB (clearing
 * it costs less than the sort it saves: 4096 sparse tiles, 16 us against
 * 56), or every ROI is empty. */
CUXFER_API void cuxfer_impl_grid_init(struct cuxfer_impl_grid *g, const cuxfer_view *v,
                                      const cuxfer_roi *rois, size_t n)
{
    size_t i = 0, rows;
    memset(g, 0, sizeof *g);
    while (i < n && (rois[i].width == 0 || rois[i].height == 0))
        ++i;
    if (i == n || rois[i].x % rois[i].width > v->width || rois[i].y % rois[i].height > v->height)
        return;
    g->w = rois[i].width;
    g->h = rois[i].height;
    g->ox = rois[i].x % g->w;
    g->oy = rois[i].y % g->h;
    g->cols = (v->width - g->ox) / g->w;
    rows = (v->height - g->oy) / g->h;
    if (rows == 0 || g->cols > ((size_t)512 * n + ((size_t)1 << 20)) / rows)
        return;
    g->words = (g->cols * rows + 63) / 64;
    g->iw = 1.0 / (double)g->w;
    g->ih = 1.0 / (double)g->h;
}

/* The cell of r, a ROI within the view, or NO_CELL or OFF_GRID. */
CUXFER_API size_t cuxfer_impl_grid_cell(const struct cuxfer_impl_grid *g, const cuxfer_roi *r)
{
    size_t qx, qy;
    if (r->width == 0 || r->height == 0)
        return CUXFER_IMPL_NO_CELL;
    if (r->width != g->w || r->height != g->h || r->x < g->ox || r->y < g->oy ||
        !cuxfer_impl_multiple(r->x - g->ox, g->w, g->iw, &qx) ||
        !cuxfer_impl_multiple(r->y - g->oy, g->h, g->ih, &qy))
        return CUXFER_IMPL_OFF_GRID;
    return qy * g->cols + qx;
}

/* Set bit c of a bitmap; 1 when it was set already (a cell taken twice). */
CUXFER_API int cuxfer_impl_bit_take(unsigned long long *bits, size_t c)
{
    unsigned long long m = 1ull << (c % 64), old = bits[c / 64];
    bits[c / 64] = old | m;
    return (old & m) != 0;
}

/* *scratch at least `need` bytes, its contents not kept; -1 (it stays as it
 * was) when the host has no memory for it. */
CUXFER_API int cuxfer_impl_scratch_fit(void **scratch, size_t *scratch_bytes, size_t need)
{
    void *b;
    if (*scratch && *scratch_bytes >= need)
        return 0;
    if (!(b = malloc(need)))
        return -1;
    free(*scratch);
    *scratch = b;
    *scratch_bytes = need;
    return 0;
}

/* 1: the ROIs (within the view) lie on one lattice, each in a cell of its
 * own: disjoint; 0: the sort decides (and names the pair).  cells: the
 * ROIs' cells (the team computed them at the scratch's start), or NULL. */
CUXFER_API int cuxfer_impl_rois_lattice(const cuxfer_view *v, const cuxfer_roi *rois, size_t n,
                                        const size_t *cells, void **scratch,
                                        size_t *scratch_bytes)
{
    struct cuxfer_impl_grid g;
    unsigned long long *bits;
    size_t i, c, need;
    cuxfer_impl_grid_init(&g, v, rois, n);
    if (g.words == 0)
        return g.w == 0; /* all empty: disjoint */
    need = ((cells ? n : 0) + g.words) * sizeof *bits;
    /* the cells' scratch was made to fit; growing it would lose them */
    if (cells ? *scratch_bytes < need : cuxfer_impl_scratch_fit(scratch, scratch_bytes, need))
        return 0;
    bits = (unsigned long long *)*scratch + (cells ? n : 0);
    memset(bits, 0, g.words * sizeof *bits);
    for (i = 0; i < n; ++i) {
        c = cells ? cells[i] : cuxfer_impl_grid_cell(&g, &rois[i]);
        if (c == CUXFER_IMPL_NO_CELL)
            continue;
        if (c == CUXFER_IMPL_OFF_GRID || cuxfer_impl_bit_take(bits, c))
            return 0;
    }
    return 1;
}

/* The strips of the overlap check: the log2 of the narrowest width of
 * strips (a power of two from twice the ROIs' mean width up) in which the
 * non-empty ROIs meet at most 2 m strips in all (m: their count), the
 * strips' count fitting `room` bits (*sbits); sw >= the view's bits is one
 * strip. */
CUXFER_API int cuxfer_impl_strip_width(const cuxfer_view *v, const cuxfer_roi *rois, size_t n,
                                       int room, int *sbits)
{
    size_t i, m = 0, wsum = 0, met;
    int sw = 0, xbits = cuxfer_impl_bits(v->width);
    for (i = 0; i < n; ++i)
        if (rois[i].width != 0 && rois[i].height != 0) {
            ++m;
            wsum += rois[i].width; /* <= n x the view's width: the bounds were checked */
        }
    while (sw < xbits && ((size_t)1 << sw) < 2 * (wsum / (m ? m : 1)))
        ++sw;
    for (; sw < xbits; ++sw) {
        *sbits = cuxfer_impl_bits((v->width - 1) >> sw);
        if (*sbits > room)
            continue;
        for (i = 0, met = 0; i < n && met <= 2 * m; ++i)
            if (rois[i].width != 0 && rois[i].height != 0)
                met += ((rois[i].x + rois[i].width - 1) >> sw) - (rois[i].x >> sw) + 1;
        if (met <= 2 * m)
            return sw;
    }
    *sbits = 0;
    return xbits;
}

/* Refuse overlapping destination ROIs.  Two ROIs overlap only within a
 * vertical strip both meet, so each ROI is entered once in each strip it
 * meets (cuxfer_impl_strip_width: at most twice the ROIs in all).  Sorted
 * by (strip, y, x), the entries of a strip that start on one row form a
 * group; each is checked against the next and, by binary search, against
 * each later group of its strip starting inside its rows.  O(N log N) for
 * tiles and crops, and a ROI meets only its strips' neighbours (random
 * tiles of mixed sizes: a few, not every tile starting inside its rows
 * across the image).  The bounds were checked, no sum here overflows. */
CUXFER_API cudaError_t cuxfer_impl_rois_disjoint(const cuxfer_view *v, const cuxfer_roi *rois,
                                                 size_t n, const char *call, const size_t *cells,
                                                 void **scratch, size_t *scratch_bytes)
{
    unsigned long long *k, *tmp;
    struct cuxfer_impl_rect *r;
    size_t *gs, i, m = 0, ng = 0, g, h, j, need, cap, st;
    cudaError_t err = cudaSuccess;
    int xbits = cuxfer_impl_bits(v->width), ybits = cuxfer_impl_bits(v->height),
        ib = cuxfer_impl_bits(n), sw = xbits, sbits = 0;
    /* key = (strip, y, x, index) in 64 bits, or qsort of the ROIs */
    int packed = xbits + ybits + ib <= 64 && n >= 256;
    if (n < 2 || (n >= 64 && cuxfer_impl_rois_lattice(v, rois, n, cells, scratch, scratch_bytes)))
        return cudaSuccess;
    if (packed)
        sw = cuxfer_impl_strip_width(v, rois, n, 64 - xbits - ybits - ib, &sbits);
    cap = sw < xbits ? 2 * n : n; /* entries */
    /* one block: keys and their sort buffer, sorted rects, group starts; a
     * plan keeps it between calls (fresh pages cost more than the sort) */
    need = 2 * cap * sizeof *k + cap * sizeof *r + (cap + 1) * sizeof *gs;
    if (cuxfer_impl_scratch_fit(scratch, scratch_bytes, need) != 0)
        return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                "%s: no host memory for the overlap check of %zu ROIs", call, n);
    k = (unsigned long long *)*scratch;
    tmp = k + cap;
    r = (struct cuxfer_impl_rect *)(tmp + cap);
    gs = (size_t *)(r + cap);
    if (packed) {
        size_t w = 0, hh = 0;
        int uniform = 1; /* every non-empty ROI w x hh: no lookups after the sort */
        for (i = 0; i < n; ++i)
            if (rois[i].width != 0 && rois[i].height != 0) { /* empty ones write nothing */
                unsigned long long yx = (unsigned long long)rois[i].y << xbits | rois[i].x;
                for (st = rois[i].x >> sw; st <= (rois[i].x + rois[i].width - 1) >> sw; ++st)
                    k[m++] = ((unsigned long long)st << (xbits + ybits) | yx) << ib | i;
                if (w == 0)
                    w = rois[i].width, hh = rois[i].height;
                else if (rois[i].width != w || rois[i].height != hh)
                    uniform = 0;
            }
        k = cuxfer_impl_key_sort(k, tmp, m, ib);
        for (i = 0; i < m; ++i) {
            unsigned long long key = k[i] >> ib; /* ib < 64 here */
            size_t q = (size_t)(k[i] & ((1ull << ib) - 1));
            r[i].x0 = (size_t)(key & ((1ull << xbits) - 1)); /* xbits < 64 here */
            r[i].y0 = (size_t)(key >> xbits & ((1ull << ybits) - 1)); /* ybits < 64 here */
            r[i].strip = sbits ? (size_t)(key >> (xbits + ybits)) : 0;
            r[i].x1 = r[i].x0 + (uniform ? w : rois[q].width);
            r[i].y1 = r[i].y0 + (uniform ? hh : rois[q].height);
            r[i].i = q;
        }
    } else {
        for (i = 0; i < n; ++i) {
            if (rois[i].width == 0 || rois[i].height == 0)
                continue;
            r[m].x0 = rois[i].x;
            r[m].x1 = rois[i].x + rois[i].width;
            r[m].y0 = rois[i].y;
            r[m].y1 = rois[i].y + rois[i].height;
            r[m].i = i;
            r[m].strip = 0;
            ++m;
        }
        qsort(r, m, sizeof *r, cuxfer_impl_rect_cmp);
    }
    for (i = 0; i < m; ++i)
        if (i == 0 || r[i].y0 != r[i - 1].y0 || r[i].strip != r[i - 1].strip)
            gs[ng++] = i;
    gs[ng] = m;
    for (g = 0; g < ng && err == cudaSuccess; ++g) {
        for (i = gs[g]; i < gs[g + 1] && err == cudaSuccess; ++i) {
            const struct cuxfer_impl_rect *a = &r[i];
            size_t bi = n;
            if (i + 1 < gs[g + 1] && r[i + 1].x0 < a->x1)
                bi = r[i + 1].i;
            for (h = g + 1; bi == n && h < ng && r[gs[h]].strip == a->strip &&
                            r[gs[h]].y0 < a->y1;
                 ++h) {
                j = cuxfer_impl_rect_before(r, gs[h], gs[h + 1], a->x1);
                if (j != gs[h + 1] && r[j].x1 > a->x0)
                    bi = r[j].i;
            }
            if (bi != n) {
                size_t lo = a->i < bi ? a->i : bi, hi = a->i < bi ? bi : a->i;
                err = cuxfer_impl_fail(cudaErrorInvalidValue,
                                       "%s: ROI %zu (x %zu, y %zu, %zux%zu) overlaps ROI %zu "
                                       "(x %zu, y %zu, %zux%zu) in the host destination", call,
                                       lo, rois[lo].x, rois[lo].y, rois[lo].width,
                                       rois[lo].height, hi, rois[hi].x, rois[hi].y,
                                       rois[hi].width, rois[hi].height);
            }
        }
    }
    return err;
}

/* 0 when ROI r lies within view v, *bytes its dense bytes; 1 out of
 * bounds, 2 its bytes overflow size_t. */
CUXFER_API int cuxfer_impl_roi_fits(const cuxfer_view *v, const cuxfer_roi *r, size_t *bytes)
{
    size_t end;
    if (cuxfer_impl_add(r->x, r->width, &end) != 0 || end > v->width ||
        cuxfer_impl_add(r->y, r->height, &end) != 0 || end > v->height)
        return 1;
    if (cuxfer_impl_mul(r->width, r->height, bytes) != 0 ||
        cuxfer_impl_mul(*bytes, v->elem_size, bytes) != 0)
        return 2;
    return 0;
}

/* The team's pass over the ROIs of a large call, in at most
 * CUXFER_IMPL_SCAN_PARTS parts: each ROI within the view, the parts'
 * bytes, and with g (D2H) each ROI's lattice cell until one is off the
 * lattice (off_grid: the cells are then partial).  With bits, each member
 * also marks the cells of its parts in a bitmap of its own (bitmap k at
 * bits + k * g->words; a bitmap shared between cores cost more than
 * marking alone), cuxfer_impl_rois_merge_part then ORs them.  A member
 * may enter a job twice (cuxfer_impl_team_fn): one past the `maps` bitmaps
 * scans without marking, and `unmarked` leaves the lattice to the serial
 * check.  bad: a ROI the serial loop must name; shared: a cell taken twice
 * (the serial check names the pair). */
#define CUXFER_IMPL_SCAN_MIN 16384 /* ROIs: fewer cost less than waking the team */
#define CUXFER_IMPL_SCAN_MIN_D2H 8192 /* the lattice costs 3-4x the bounds */
#define CUXFER_IMPL_SCAN_PARTS 256
struct cuxfer_impl_rois_scan {
    const cuxfer_view *v;
    const cuxfer_roi *rois;
    size_t n, block, sums[CUXFER_IMPL_SCAN_PARTS], *cells;
    const struct cuxfer_impl_grid *g;
    unsigned long long *bits;
    int bad, off_grid, shared, members, maps, unmarked;
};

CUXFER_API void cuxfer_impl_rois_scan_part(void *arg, size_t *next)
{
    struct cuxfer_impl_rois_scan *j = (struct cuxfer_impl_rois_scan *)arg;
    size_t from, to, b, sum, c;
    unsigned long long *bits = NULL;
    if (j->bits) {
        int k = __atomic_fetch_add(&j->members, 1, __ATOMIC_RELAXED);
        if (k < j->maps) {
            bits = j->bits + (size_t)k * j->g->words;
            memset(bits, 0, j->g->words * sizeof *bits);
        } else {
            __atomic_store_n(&j->unmarked, 1, __ATOMIC_RELAXED);
        }
    }
    while (cuxfer_impl_team_take(next, j->n, j->block, &from, &to)) {
        for (sum = 0; from < to; ++from) {
            if (cuxfer_impl_roi_fits(j->v, &j->rois[from], &b) != 0 ||
                cuxfer_impl_add(sum, b, &sum) != 0) {
                __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);
                return;
            }
            /* off the lattice: no more cells (nor a store a ROI to j's line) */
            if (!j->g || __atomic_load_n(&j->off_grid, __ATOMIC_RELAXED))
                continue;
            c = j->cells[from] = cuxfer_impl_grid_cell(j->g, &j->rois[from]);
            if (c == CUXFER_IMPL_OFF_GRID)
                __atomic_store_n(&j->off_grid, 1, __ATOMIC_RELAXED);
            else if (bits && c != CUXFER_IMPL_NO_CELL && cuxfer_impl_bit_take(bits, c))
                __atomic_store_n(&j->shared, 1, __ATOMIC_RELAXED);
        }
        j->sums[(to - 1) / j->block] = sum;
    }
}

/* The members' bitmaps ORed word by word, a range of words a block: a bit
 * set in two of them is a cell taken twice. */
CUXFER_API void cuxfer_impl_rois_merge_part(void *arg, size_t *next)
{
    struct cuxfer_impl_rois_scan *j = (struct cuxfer_impl_rois_scan *)arg;
    size_t from, to, w, k, words = j->g->words;
    while (cuxfer_impl_team_take(next, words, 512, &from, &to))
        for (w = from; w < to; ++w) {
            unsigned long long acc = j->bits[w];
            for (k = 1; k < (size_t)j->members; ++k) {
                unsigned long long b = j->bits[k * words + w];
                if (acc & b) {
                    __atomic_store_n(&j->shared, 1, __ATOMIC_RELAXED);
                    return;
                }
                acc |= b;
            }
        }
}

/* Every check of cuxfer_rois_copy_async that needs no device (man 3
 * cuxfer_rois); for D2H no two ROIs may overlap.  *total (may be NULL)
 * receives the dense bytes.  Reasons name the ROI's index and values.
 * With a team, a large call's bounds and sizes are checked in parallel
 * first; the serial loop runs only to name a bad ROI. */
CUXFER_API cudaError_t cuxfer_impl_rois_check(int dir, const cuxfer_view *host,
                                              const cuxfer_roi *rois, size_t n,
                                              const cuxfer_view *dense, size_t *total,
                                              void **scratch, size_t *scratch_bytes,
                                              cuxfer_impl_team *team)
{
    static const char call[] = "cuxfer_rois_copy_async";
    size_t i, b, sum = 0, cap, *cells = NULL;
    int scanned = 0, marked = 0, e;
    if (dir != CUXFER_ROIS_H2D && dir != CUXFER_ROIS_D2H)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: direction %d is neither CUXFER_ROIS_H2D nor "
                                "CUXFER_ROIS_D2H", call, dir);
    CUXFER_TRY(cuxfer_view_check(host, "cuxfer_rois_copy_async: host"));
    CUXFER_TRY(cuxfer_view_check(dense, "cuxfer_rois_copy_async: dense"));
    if (!rois && n)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: rois is NULL with n %zu", call, n);
    if (dense->elem_size != host->elem_size)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: element sizes differ: host view %zu bytes, dense view "
                                "%zu bytes", call, host->elem_size, dense->elem_size);
    if (dense->height > 1 && dense->pitch != dense->width * dense->elem_size)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: the dense view is not contiguous: pitch %zu, rows of "
                                "%zu bytes", call, dense->pitch, dense->width * dense->elem_size);
    if (team && n >= (dir == CUXFER_ROIS_D2H ? CUXFER_IMPL_SCAN_MIN_D2H : CUXFER_IMPL_SCAN_MIN)) {
        struct cuxfer_impl_rois_scan j;
        struct cuxfer_impl_grid g;
        memset(&j, 0, sizeof j);
        j.v = host;
        j.rois = rois;
        j.n = n;
        j.block = (n + CUXFER_IMPL_SCAN_PARTS - 1) / CUXFER_IMPL_SCAN_PARTS;
        if (dir == CUXFER_ROIS_D2H) /* the cells, then the bitmap */
            cuxfer_impl_grid_init(&g, host, rois, n);
        if (dir == CUXFER_ROIS_D2H && g.words) {
            /* the cells, then a bitmap a member where they cost at most 8
             * words a ROI, else one (set on this thread) */
            size_t members = (size_t)team->n + 1,
                   maps = members * g.words <= 8 * n + 65536 ? members : 1,
                   need = (n + maps * g.words) * sizeof(unsigned long long);
            j.g = cuxfer_impl_scratch_fit(scratch, scratch_bytes, need) ? NULL : &g;
            j.cells = (size_t *)*scratch;
            j.bits = j.g && maps > 1 ? (unsigned long long *)*scratch + n : NULL;
            j.maps = (int)maps;
        }
        cuxfer_impl_team_run(team, cuxfer_impl_rois_scan_part, &j);
        for (i = 0; !j.bad && i * j.block < n; ++i)
            j.bad = cuxfer_impl_add(sum, j.sums[i], &sum);
        scanned = !j.bad;
        sum = scanned ? sum : 0;
        /* off the lattice the cells are partial: the serial check finds
         * the first ROI off it again, at once */
        cells = scanned && j.g && !j.off_grid ? j.cells : NULL;
        if (cells && j.bits && !j.shared && !j.unmarked) {
            cuxfer_impl_team_run(team, cuxfer_impl_rois_merge_part, &j);
            marked = !j.shared;
        }
    }
    for (i = 0; !scanned && i < n; ++i) {
        const cuxfer_roi *r = &rois[i];
        if ((e = cuxfer_impl_roi_fits(host, r, &b)) == 1)
            return cuxfer_impl_fail(cudaErrorInvalidValue,
                                    "%s: ROI %zu (x %zu, y %zu, %zux%zu) exceeds the %zux%zu "
                                    "host view", call, i, r->x, r->y, r->width, r->height,
                                    host->width, host->height);
        if (e != 0 || cuxfer_impl_add(sum, b, &sum) != 0)
            return cuxfer_impl_fail(cudaErrorInvalidValue,
                                    "%s: ROI %zu (%zux%zu) overflows size_t in the dense "
                                    "buffer", call, i, r->width, r->height);
    }
    cap = dense->width * dense->elem_size * dense->height; /* the view was checked */
    if (sum > cap)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %zu ROIs need %zu bytes, the dense view holds %zu", call, n,
                                sum, cap);
    if (dir == CUXFER_ROIS_D2H && !marked) /* marked: one lattice, a cell each */
        CUXFER_TRY(cuxfer_impl_rois_disjoint(host, rois, n, call, cells, scratch, scratch_bytes));
    if (total)
        *total = sum;
    return cudaSuccess;
}

CUXFER_API cudaError_t cuxfer_rois_check(int dir, const cuxfer_view *host,
                                         const cuxfer_roi *rois, size_t n,
                                         const cuxfer_view *dense, size_t *total)
{
    void *scratch = NULL;
    size_t bytes = 0;
    cudaError_t err =
        cuxfer_impl_rois_check(dir, host, rois, n, dense, total, &scratch, &bytes, NULL);
    free(scratch);
    return err;
}

/* Release everything, after the staging's copies; safe on NULL and zeroed. */
CUXFER_API cudaError_t cuxfer_rois_destroy(cuxfer_rois *p)
{
    cudaError_t first = cudaSuccess;
    int i;
    if (!p || !p->ready)
        return cudaSuccess;
    if (p->team_up)
        cuxfer_impl_team_stop(&p->team);
    for (i = 0; i < CUXFER_ROIS_SLOTS + p->nx; ++i) { /* the staging, then the extra slots */
        struct cuxfer_impl_kslot *x = i < CUXFER_ROIS_SLOTS ? &p->slot[i]
                                                            : &p->x[i - CUXFER_ROIS_SLOTS];
        if (x->ev)
            cuxfer_impl_keep(&first, cuxfer_impl_event_sync(x->ev));
        (void)cuxfer_impl_event_drop(x->ev);
        (void)cuxfer_host_free(x->stage);
    }
    free(p->x);
    (void)cuxfer_impl_event_drop(p->ev_probe);
    (void)cuxfer_impl_stream_drop(p->side);
    cuxfer_impl_kernel_unload(&p->lib, &p->kernel);
    free(p->off);
    free(p->check);
    pthread_mutex_destroy(&p->mu);
    memset(p, 0, sizeof *p);
    return first;
}

/* Load KERNEL's code and learn what it needs of the device.  On any
 * failure KERNEL is unavailable, p->no_kernel says why (p->kernel_err with
 * which CUDA error), and the plan works without it. */
CUXFER_API void cuxfer_impl_rois_kernel_load(cuxfer_rois *p)
{
    cudaError_t err = cudaSuccess;
    int i;
    p->no_kernel = cuxfer_impl_kernel_load(p->device, &p->lib, &p->kernel, &p->kblocks, &err);
    for (i = 0; i < CUXFER_ROIS_SLOTS && !p->no_kernel; ++i)
        if ((err = cudaHostGetDevicePointer(&p->slot[i].dev, p->slot[i].stage, 0)) != cudaSuccess) {
            cuxfer_impl_kernel_unload(&p->lib, &p->kernel); /* clears err */
            p->no_kernel = "the staging is not mapped into the device (cudaHostGetDevicePointer)";
        }
    if (p->no_kernel)
        p->kernel_err = err;
}

/* Create a plan on the current device with all it will ever use but the
 * offsets array, which grows with the largest N (man 3 cuxfer_rois). */
CUXFER_API cudaError_t cuxfer_rois_create(cuxfer_rois *p, const cuxfer_rois_options *opt)
{
    cudaError_t err = cudaSuccess;
    int i;
    if (!p)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_rois_create: plan is NULL");
    memset(p, 0, sizeof *p);
    if (opt)
        p->opt = *opt;
    CUXFER_TRY(cuxfer_impl_team_options("cuxfer_rois_create", p, sizeof *p, p->opt.strategy,
                                        CUXFER_ROIS_KERNEL, &p->opt.threads, CUXFER_ROIS_MAX_THREADS,
                                        0, &p->opt.chunk_bytes, (size_t)4 << 20));
    p->device = cuxfer_impl_current_device();
    pthread_mutex_init(&p->mu, NULL);
    p->ready = 1;
    for (i = 0; i < CUXFER_ROIS_SLOTS && err == cudaSuccess; ++i) {
        err = cuxfer_host_alloc(&p->slot[i].stage, p->opt.chunk_bytes, 1,
                                cudaHostAllocPortable | cudaHostAllocMapped);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_create(&p->slot[i].ev, cudaEventDisableTiming);
    }
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&p->ev_probe, cudaEventDisableTiming);
    if (err == cudaSuccess)
        err = cuxfer_impl_stream_create(&p->side, cudaStreamNonBlocking, 0);
    if (err != cudaSuccess) {
        (void)cuxfer_rois_destroy(p);
        return cuxfer_impl_fail_cuda(err, "cuxfer_rois_create: %s", cudaGetErrorName(err));
    }
    cuxfer_impl_rois_kernel_load(p);
    if (p->no_kernel && p->opt.strategy == CUXFER_ROIS_KERNEL) {
        const char *why = p->no_kernel;
        err = p->kernel_err;
        (void)cuxfer_rois_destroy(p);
        return cuxfer_impl_fail(cudaErrorNotSupported,
                                "cuxfer_rois_create: KERNEL was forced but %s%s%s%s", why,
                                err != cudaSuccess ? " (" : "",
                                err != cudaSuccess ? cudaGetErrorName(err) : "",
                                err != cudaSuccess ? ")" : "");
    }
    if (p->opt.direct_tile_bytes == 0)
        p->opt.direct_tile_bytes = p->kernel ? (size_t)3 << 20
                                             : (size_t)16384 * (size_t)p->opt.threads;
    (void)cuxfer_impl_team_start(&p->team, p->opt.threads - 1, NULL, NULL);
    p->team_up = 1;
    return cudaSuccess;
}

/* The strategy AUTO (or the forced one) takes for n tiles of `total`
 * bytes of a pinned host view (man 3 cuxfer_rois); the stream and the
 * host memory are cuxfer_rois_copy_async's to step down for. */
CUXFER_API int cuxfer_rois_choose(const cuxfer_rois *p, size_t n, size_t total)
{
    if (p->opt.strategy != CUXFER_ROIS_AUTO)
        return p->opt.strategy;
    if (n >= 16 && total / n < p->opt.direct_tile_bytes)
        return p->kernel ? CUXFER_ROIS_KERNEL : CUXFER_ROIS_GATHER;
    return CUXFER_ROIS_DIRECT;
}

/* One tile by cudaMemcpy2DAsync on s: DIRECT's, and KERNEL's for a tile
 * too large for the kernel's counts. */
CUXFER_API cudaError_t cuxfer_impl_rois_tile(int dir, const cuxfer_view *host,
                                             const cuxfer_roi *r, unsigned char *dense,
                                             cudaStream_t s)
{
    size_t rb = r->width * host->elem_size;
    unsigned char *h = (unsigned char *)host->ptr + r->y * host->pitch + r->x * host->elem_size;
    return dir == CUXFER_ROIS_H2D
               ? cudaMemcpy2DAsync(dense, rb, h, host->pitch, rb, r->height, cudaMemcpyDefault, s)
               : cudaMemcpy2DAsync(h, host->pitch, dense, rb, rb, r->height, cudaMemcpyDefault, s);
}

/* DIRECT: one cudaMemcpy2DAsync per non-empty tile. */
CUXFER_API cudaError_t cuxfer_impl_rois_direct(int dir, const cuxfer_view *host,
                                               const cuxfer_roi *rois, size_t n,
                                               unsigned char *dense, cudaStream_t s)
{
    size_t i, off = 0, bytes;
    for (i = 0; i < n; ++i) {
        bytes = rois[i].width * host->elem_size * rois[i].height;
        if (bytes)
            CUXFER_TRY(cuxfer_impl_rois_tile(dir, host, &rois[i], dense + off, s));
        off += bytes;
    }
    return cudaSuccess;
}

/* One chunk of a GATHER: dense bytes [a, b) and the staging holding them. */
struct cuxfer_impl_rois_job {
    unsigned char *base; /* host view */
    size_t pitch, elem;
    const cuxfer_roi *rois;
    const size_t *off;   /* n + 1 */
    size_t n;
    unsigned char *stage;
    size_t a, b;
    int d2h;
};

/* Rows a team member asks for ahead of its copies, in the tiles after
 * its current one: tiles scattered over an image miss the caches and the
 * TLB row by row, and the misses one core has in flight bound the copy
 * (doc/PERF.md, "Behind the constants").  Rows over 256 bytes stream. */
#define CUXFER_IMPL_ROIS_AHEAD 32

/* Ask for the host lines of tile t's first rows, to write (D2H) or read. */
CUXFER_API void cuxfer_impl_rois_ask(const struct cuxfer_impl_rois_job *j, size_t t)
{
    const cuxfer_roi *r = &j->rois[t];
    size_t rb = r->width * j->elem, y, c,
           rows = r->height < CUXFER_IMPL_ROIS_AHEAD ? r->height : CUXFER_IMPL_ROIS_AHEAD;
    const unsigned char *h = j->base + r->y * j->pitch + r->x * j->elem;
    for (y = 0; rb && rb <= 256 && y < rows; ++y, h += j->pitch)
        for (c = 0; c < rb + 63; c += 64) /* and the line of the row's last byte */
            j->d2h ? __builtin_prefetch(h + (c < rb ? c : rb - 1), 1, 3)
                   : __builtin_prefetch(h + (c < rb ? c : rb - 1), 0, 3);
}

/* Move dense bytes [a, b) of the job between the host tiles and the
 * staging; a and b may fall inside a row.  The tiles after the current
 * one, up to CUXFER_IMPL_ROIS_AHEAD rows, are asked for before it is
 * copied; within a taller tile, rows 16 on. */
CUXFER_API void cuxfer_impl_rois_range(const struct cuxfer_impl_rois_job *j, size_t a, size_t b)
{
    size_t lo = 0, hi = j->n, t, ask = 0;
    if (a >= b)
        return;
    while (hi - lo > 1) { /* the last tile with off <= a */
        size_t m = lo + (hi - lo) / 2;
        if (j->off[m] <= a)
            lo = m;
        else
            hi = m;
    }
    t = lo;
    while (a < b) {
        const cuxfer_roi *r;
        size_t rb, q, y, col, end, len, rows;
        unsigned char *h, *st;
        while (j->off[t + 1] <= a) /* empty tiles take no bytes */
            ++t;
        r = &j->rois[t];
        for (ask = ask > t ? ask : t; ask < j->n && j->off[ask] < b &&
             (ask <= t + 1 || (ask - t - 1) * r->height < CUXFER_IMPL_ROIS_AHEAD); ++ask)
            cuxfer_impl_rois_ask(j, ask);
        rb = r->width * j->elem;
        q = a - j->off[t];
        y = q / rb;
        col = q - y * rb;
        end = j->off[t + 1] < b ? j->off[t + 1] : b;
        h = j->base + (r->y + y) * j->pitch + r->x * j->elem;
        st = j->stage + (a - j->a);
        if (col) { /* the rest of a row another part began */
            len = rb - col < end - a ? rb - col : end - a;
            if (j->d2h)
                memcpy(h + col, st, len);
            else
                memcpy(st, h + col, len);
            a += len;
            st += len;
            h += j->pitch;
        }
        rows = (end - a) / rb;
        if (rows) {
            if (j->d2h)
                cuxfer_impl_copy_rows(h, j->pitch, st, rb, rb, rows, 16);
            else
                cuxfer_impl_copy_rows(st, rb, h, j->pitch, rb, rows, 16);
            a += rows * rb;
            st += rows * rb;
            h += rows * j->pitch;
        }
        if (a < end) { /* the start of a row the next part ends */
            len = end - a;
            if (j->d2h)
                memcpy(h, st, len);
            else
                memcpy(st, h, len);
            a = end;
        }
    }
}

/* Bytes of a chunk a team member takes at a time: 64 KiB of dense tile
 * bytes (128 blocks of an 8 MiB chunk), so a member that the scheduler
 * delays, or that wakes late, holds up one block at most. */
#define CUXFER_IMPL_ROIS_BLOCK 65536

/* A team member's part of a chunk: blocks of [a, b) from the team's counter. */
CUXFER_API void cuxfer_impl_rois_part(void *arg, size_t *next)
{
    const struct cuxfer_impl_rois_job *j = (const struct cuxfer_impl_rois_job *)arg;
    size_t from, to;
    while (cuxfer_impl_team_take(next, j->b - j->a, CUXFER_IMPL_ROIS_BLOCK, &from, &to))
        cuxfer_impl_rois_range(j, j->a + from, j->a + to);
}

/* GATHER, host to device: per chunk, wait until its slot's previous copy
 * is done, gather with the team, queue the dense copy, record the slot. */
CUXFER_API cudaError_t cuxfer_impl_rois_h2d(cuxfer_rois *p, struct cuxfer_impl_rois_job *j,
                                            unsigned char *dense, size_t total, cudaStream_t s)
{
    size_t a, len, c;
    int k;
    for (a = 0, c = 0; a < total; a += len, ++c) {
        k = (int)(c % CUXFER_ROIS_SLOTS);
        len = total - a < p->opt.chunk_bytes ? total - a : p->opt.chunk_bytes;
        CUXFER_TRY(cuxfer_impl_event_sync(p->slot[k].ev));
        j->stage = (unsigned char *)p->slot[k].stage;
        j->a = a;
        j->b = a + len;
        cuxfer_impl_team_run(&p->team, cuxfer_impl_rois_part, j);
        CUXFER_TRY(cudaMemcpyAsync(dense + a, p->slot[k].stage, len, cudaMemcpyDefault, s));
        CUXFER_TRY(cudaEventRecord(p->slot[k].ev, s));
    }
    return cudaSuccess;
}

/* GATHER, device to host: the first CUXFER_ROIS_SLOTS chunks go down at
 * once; as each arrives the team scatters it and its slot takes the next
 * chunk.  Returns when the host view holds every tile. */
CUXFER_API cudaError_t cuxfer_impl_rois_d2h(cuxfer_rois *p, struct cuxfer_impl_rois_job *j,
                                            const unsigned char *dense, size_t total,
                                            cudaStream_t s)
{
    size_t ch = p->opt.chunk_bytes, chunks = (total + ch - 1) / ch, c = 0, q = 0;
    int k;
    while (c < chunks) {
        if (q < chunks && q < c + CUXFER_ROIS_SLOTS) { /* chunk q down, into a free slot */
            k = (int)(q % CUXFER_ROIS_SLOTS);
            if (q < CUXFER_ROIS_SLOTS) /* a previous H2D on another stream may read it */
                CUXFER_TRY(cudaStreamWaitEvent(s, p->slot[k].ev, 0));
            CUXFER_TRY(cudaMemcpyAsync(p->slot[k].stage, dense + q * ch,
                                       total - q * ch < ch ? total - q * ch : ch,
                                       cudaMemcpyDefault, s));
            CUXFER_TRY(cudaEventRecord(p->slot[k].ev, s));
            ++q;
            continue;
        }
        k = (int)(c % CUXFER_ROIS_SLOTS); /* chunk c, once it arrived, to the tiles */
        CUXFER_TRY(cuxfer_impl_event_sync(p->slot[k].ev));
        j->stage = (unsigned char *)p->slot[k].stage;
        j->a = c * ch;
        j->b = total - c * ch < ch ? total : (c + 1) * ch;
        cuxfer_impl_team_run(&p->team, cuxfer_impl_rois_part, j);
        ++c;
    }
    return cudaSuccess;
}

/* The GATHER strategy under the plan's lock, with this thread's capture
 * mode Relaxed: it synchronizes the plan's own events, which no capture
 * contains, and must not invalidate another thread's Global capture. */
CUXFER_API cudaError_t cuxfer_impl_rois_gather(cuxfer_rois *p, int dir, const cuxfer_view *host,
                                               const cuxfer_roi *rois, size_t n,
                                               unsigned char *dense, size_t total,
                                               cudaStream_t s)
{
    struct cuxfer_impl_rois_job j;
    cudaError_t err;
    if (p->off_cap < n + 1) {
        size_t cap = n + 1 > 2 * p->off_cap ? n + 1 : 2 * p->off_cap;
        size_t *o = (size_t *)realloc(p->off, cap * sizeof *o);
        if (!o)
            return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                    "cuxfer_rois_copy_async: no host memory for %zu offsets",
                                    n + 1);
        p->off = o;
        p->off_cap = cap;
    }
    CUXFER_TRY(cuxfer_rois_offsets(rois, n, host->elem_size, p->off));
    j.base = (unsigned char *)host->ptr;
    j.pitch = host->pitch;
    j.elem = host->elem_size;
    j.rois = rois;
    j.off = p->off;
    j.n = n;
    j.stage = NULL;
    j.a = j.b = 0;
    j.d2h = dir == CUXFER_ROIS_D2H;
    err = dir == CUXFER_ROIS_H2D ? cuxfer_impl_rois_h2d(p, &j, dense, total, s)
                                 : cuxfer_impl_rois_d2h(p, &j, dense, total, s);
    if (err != cudaSuccess)
        return cuxfer_impl_fail(err, "cuxfer_rois_copy_async: %s in the gather pipeline",
                                cudaGetErrorName(err));
    return cudaSuccess;
}

/* A descriptor slot for KERNEL's next launch, never waited for on the host
 * (a wait blocked the caller behind a held stream): the next staging slot
 * when its last launch completed, else a completed extra slot, else a new
 * one (made Relaxed, kept until destroy). */
CUXFER_API cudaError_t cuxfer_impl_rois_kslot(cuxfer_rois *p, size_t bytes,
                                              struct cuxfer_impl_kslot *out)
{
    int k = p->kslot, i;
    struct cuxfer_impl_kslot *x;
    cudaError_t err;
    for (i = -1; i < p->nx; ++i) { /* staging slot k, then the extra slots */
        err = cuxfer_impl_event_query(i < 0 ? p->slot[k].ev : p->x[i].ev);
        if (err == cudaSuccess && i < 0)
            p->kslot = (k + 1) % CUXFER_ROIS_SLOTS;
        if (err == cudaSuccess)
            break;
        if (err != cudaErrorNotReady)
            return err;
    }
    if (i == p->nx) {
        x = (struct cuxfer_impl_kslot *)realloc(p->x, (size_t)(i + 1) * sizeof *x);
        if (!x)
            return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                    "cuxfer_rois_copy_async: no host memory for a descriptor slot");
        p->x = x;
        memset(&x[i], 0, sizeof x[i]);
        err = cuxfer_host_alloc(&x[i].stage, bytes, 1, cudaHostAllocPortable | cudaHostAllocMapped);
        if (err == cudaSuccess)
            err = cudaHostGetDevicePointer(&x[i].dev, x[i].stage, 0);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_create(&x[i].ev, cudaEventDisableTiming);
        if (err != cudaSuccess) {
            (void)cuxfer_host_free(x[i].stage);
            return cuxfer_impl_fail_cuda(err, "cuxfer_rois_copy_async: a descriptor slot of %zu "
                                         "bytes: %s", bytes, cudaGetErrorName(err));
        }
        p->nx = i + 1;
    }
    *out = i < 0 ? p->slot[k] : p->x[i];
    return cudaSuccess;
}

/* KERNEL: launches of at most 8192 descriptors in turns on s and side,
 * each starting in the last one's tail (doc/PERF.md, "Behind the
 * constants": KERNEL's launches).  side may hold work that waits for
 * another, held stream: it takes turns when idle, or when s, which it last
 * joined, waits for all it holds; ev_probe (recorded on s by
 * cuxfer_impl_rois_staged) forks it at its first turn and joins it to s at
 * the end, also after a failure.  hdev: the host view's base on the
 * device.  A descriptor is a band of whole rows of one tile, at most
 * `band` bytes: a warp copies one at a time, so a tile far larger than the
 * rest does not keep its warps busy long after the others.  A tile of
 * 2^31 bytes or more (beyond the kernel's 32-bit counts) goes by
 * cudaMemcpy2DAsync on s. */
CUXFER_API cudaError_t cuxfer_impl_rois_kernel(cuxfer_rois *p, int dir, const cuxfer_view *host,
                                               unsigned char *hdev, const cuxfer_roi *rois,
                                               size_t n, unsigned char *dense, size_t total,
                                               cudaStream_t s)
{
    /* 512 descriptors, then twice the last: the GPU starts early and runs
     * while the next are written; bands of about 1/4096 of the copy */
    const size_t fit = p->opt.chunk_bytes / sizeof(cuxfer_impl_tile), cap = fit < 8192 ? fit : 8192,
                 lim = 0x7fffffff, band = total / 4096 > 4096 ? total / 4096 : 4096;
    const uintptr_t base = (uintptr_t)hdev | (uintptr_t)dense | (uintptr_t)host->pitch;
    size_t i = 0, off = 0, y0 = 0, each = cap < 512 ? cap : 512;
    cudaError_t err = cudaStreamQuery(p->side), e2 = cudaSuccess;
    cudaStream_t on = s, alt = p->side;
    int forked = 0;
    if (err == cudaErrorNotReady) { /* busy: its turns only if s waits for all it holds */
        if (p->side_for != s || cuxfer_impl_is_default_stream(s) ||
            p->side_for_id != cuxfer_impl_stream_id(s))
            alt = s; /* 0 and the per-thread handle name other streams in other threads,
                        a handle may be a destroyed stream's */
        err = cudaSuccess;
    }
    while (i < n && err == cudaSuccess) {
        struct cuxfer_impl_kslot k = {NULL, NULL, NULL};
        uintptr_t align = base;
        size_t m = 0;
        err = cuxfer_impl_rois_kslot(p, cap * sizeof(cuxfer_impl_tile), &k);
        while (err == cudaSuccess && i < n && m < each) {
            size_t rb = rois[i].width * host->elem_size, rows = rois[i].height, br;
            size_t src = rois[i].y * host->pitch + rois[i].x * host->elem_size;
            if (rb * rows > lim) { /* the check ruled out overflow */
                err = cuxfer_impl_rois_tile(dir, host, &rois[i], dense + off, s);
            } else if (rb * rows != 0) { /* no division for a tile within a band */
                br = rb * (rows - y0) <= band ? rows - y0 : rb >= band ? 1 : band / rb;
                br = br < rows - y0 ? br : rows - y0;
                cuxfer_impl_tile_put((cuxfer_impl_tile *)k.stage + m++, src + y0 * host->pitch,
                                     off + y0 * rb, br, rb);
                align |= (uintptr_t)src | (uintptr_t)off | (uintptr_t)rb;
                if ((y0 += br) < rows)
                    continue; /* the tile's next band */
                y0 = 0;
            }
            off += rb * rows;
            ++i;
        }
        if (err == cudaSuccess && m)
            err = cuxfer_impl_kernel_launch(p->kernel, p->kblocks, k.dev, (unsigned)m, hdev,
                                            host->pitch, dense, 0, dir == CUXFER_ROIS_D2H, align,
                                            0, on);
        if (k.ev && (e2 = cudaEventRecord(k.ev, on)) != cudaSuccess && err == cudaSuccess)
            err = e2; /* recorded also after a failure: a launch may have been queued */
        on = on == s ? alt : s;
        each = 2 * each < cap ? 2 * each : cap;
        if (on != s && !forked && err == cudaSuccess && i < n) { /* side's first turn */
            forked = (err = cudaStreamWaitEvent(on, p->ev_probe, 0)) == cudaSuccess;
            p->side_for = s;
            p->side_for_id = cuxfer_impl_stream_id(s);
        }
    }
    if (forked && (e2 = cudaEventRecord(p->ev_probe, p->side)) == cudaSuccess)
        e2 = cudaStreamWaitEvent(s, p->ev_probe, 0);
    if (forked && e2 != cudaSuccess) /* s cannot wait: side's launches end before the return */
        (void)cuxfer_impl_stream_sync(p->side);
    return err == cudaSuccess ? e2 : err;
}

/* KERNEL or GATHER (want) on stream s (cap: its cuxfer_impl_stream_state),
 * Relaxed (the plan's own events, no capture contains them), after a probe
 * record proves that s takes them.  NULL when the strategy ran (*err: how
 * it went), else why it cannot run here, with in *refuse the error a
 * forced strategy returns. */
CUXFER_API const char *cuxfer_impl_rois_staged(cuxfer_rois *p, int want, int dir,
                                               const cuxfer_view *host, const cuxfer_roi *rois,
                                               size_t n, const cuxfer_view *dense, size_t total,
                                               cudaStream_t s, int cap, cudaError_t *err,
                                               cudaError_t *refuse)
{
    static const char call[] = "cuxfer_rois_copy_async";
    const char *why = NULL;
    cuxfer_impl_relax rx;
    void *hdev = NULL;
    *refuse = cudaErrorStreamCaptureUnsupported;
    if (cap != CUXFER_IMPL_STREAM_UNCAPTURED)
        return "the stream is being captured into a graph (the host gather would not replay)";
    *refuse = cudaErrorInvalidDevice;
    if (cuxfer_impl_current_device() != p->device)
        return "the calling thread's device is not the plan's";
    rx = cuxfer_impl_relax_begin();
    *err = cudaEventRecord(p->ev_probe, s);
    if (*err == cudaErrorInvalidResourceHandle) {
        (void)cudaGetLastError();
        why = "the stream belongs to another device than the plan's";
    } else if (*err != cudaSuccess) {
        (void)cuxfer_impl_fail_cuda(*err, "%s: cudaEventRecord on the stream: %s", call,
                                    cudaGetErrorName(*err));
    } else if (want == CUXFER_ROIS_GATHER) {
        (void)cuxfer_impl_stream_guard(call, s, 1); /* its warning: refused before */
        *err = cuxfer_impl_rois_gather(p, dir, host, rois, n, (unsigned char *)dense->ptr, total,
                                       s);
    } else if (cuxfer_impl_classify_cached(host->ptr, NULL) != CUXFER_MEMORY_PINNED ||
               cudaHostGetDevicePointer(&hdev, host->ptr, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        why = "the host view is not pinned memory mapped into the plan's device";
        *refuse = cudaErrorInvalidValue;
    } else {
        (void)cuxfer_impl_stream_guard(call, s, 1);
        *err = cuxfer_impl_rois_kernel(p, dir, host, (unsigned char *)hdev, rois, n,
                                       (unsigned char *)dense->ptr, total, s);
        if (*err != cudaSuccess)
            (void)cuxfer_impl_fail(*err, "%s: %s in the KERNEL launches", call,
                                   cudaGetErrorName(*err));
    }
    cuxfer_impl_relax_end(rx);
    return why;
}

/* The body of cuxfer_rois_copy_async, under the plan's lock. */
CUXFER_API cudaError_t cuxfer_impl_rois_copy(cuxfer_rois *p, int dir, const cuxfer_view *host,
                                             const cuxfer_roi *rois, size_t n,
                                             const cuxfer_view *dense, cudaStream_t s)
{
    static const char call[] = "cuxfer_rois_copy_async";
    const char *why;
    size_t total = 0;
    cuxfer_memkind dk, hk;
    cudaError_t err;
    int want, cap;
    CUXFER_TRY(cuxfer_impl_rois_check(dir, host, rois, n, dense, &total, &p->check,
                                      &p->check_bytes, &p->team));
    if (total == 0)
        return cudaSuccess;
    /* every strategy queues copies (or the kernel) on s */
    CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 0));
    if (cuxfer_impl_classify_cached(host->ptr, NULL) == CUXFER_MEMORY_DEVICE)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: the host view at %p is device memory", call, host->ptr);
    /* refused: e.g. stream 0 while another stream captures */
    CUXFER_TRY(cuxfer_impl_stream_usable(call, "stream", s, &cap));
    want = cuxfer_rois_choose(p, n, total);
    while (want == CUXFER_ROIS_KERNEL || want == CUXFER_ROIS_GATHER) {
        cudaError_t refuse = cudaSuccess;
        why = cuxfer_impl_rois_staged(p, want, dir, host, rois, n, dense, total, s, cap, &err,
                                      &refuse);
        if (!why)
            return err;
        if (p->opt.strategy == want)
            return cuxfer_impl_fail(refuse, "%s: %s was forced but %s (device %d)", call,
                                    want == CUXFER_ROIS_KERNEL ? "KERNEL" : "GATHER", why,
                                    p->device);
        /* AUTO: a host view the device cannot map goes to GATHER; a stream
         * neither can use (captured, another device's) to DIRECT */
        want = want == CUXFER_ROIS_KERNEL && refuse == cudaErrorInvalidValue ? CUXFER_ROIS_GATHER
                                                                              : CUXFER_ROIS_DIRECT;
    }
    /* DIRECT, on any stream (captured too): cuxfer_copy2d_async's guard */
    dk = cuxfer_impl_classify_cached(dense->ptr, NULL);
    hk = cuxfer_impl_classify_cached(host->ptr, NULL);
    CUXFER_TRY(dir == CUXFER_ROIS_H2D ? cuxfer_impl_guard(call, dk, hk, cuxfer_pageable_policy())
                                      : cuxfer_impl_guard(call, hk, dk, cuxfer_pageable_policy()));
    CUXFER_TRY(cuxfer_impl_stream_guard(call, s, 1));
    err = cuxfer_impl_rois_direct(dir, host, rois, n, (unsigned char *)dense->ptr, s);
    if (err != cudaSuccess)
        (void)cuxfer_impl_fail(err, "%s: cudaMemcpy2DAsync: %s", call, cudaGetErrorName(err));
    return err;
}

/* Copy n ROIs of `host` to the dense view or back, on s (man 3 cuxfer_rois). */
CUXFER_API cudaError_t cuxfer_rois_copy_async(cuxfer_rois *p, int dir, const cuxfer_view *host,
                                              const cuxfer_roi *rois, size_t n,
                                              const cuxfer_view *dense, cudaStream_t s)
{
    cudaError_t err;
    if (!p || !p->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_rois_copy_async: plan not created");
    pthread_mutex_lock(&p->mu);
    err = cuxfer_impl_rois_copy(p, dir, host, rois, n, dense, s);
    pthread_mutex_unlock(&p->mu);
    return cuxfer_impl_debug_sync(err, s);
}

/* ------------------------------------------------------------------------
 * 11. Asynchronous staging of pageable memory: the stager
 * ------------------------------------------------------------------------ */

/* Pageable memory through a ring of pinned slots, from the stager's own
 * threads (man 3 cuxfer_stager; doc/DESIGN.md section 7).  The struct must
 * stay where it was created: its threads hold its address. */

#define CUXFER_STAGE_AUTO 0
#define CUXFER_STAGE_COPY 1
#define CUXFER_STAGE_REGISTER 2
/* Only in cuxfer_stager.used: the host side was already pinned or managed. */
#define CUXFER_STAGE_DIRECT 3

#define CUXFER_STAGER_MAX_SLOTS 64
#define CUXFER_STAGER_MAX_THREADS 64
#define CUXFER_STAGER_MIN_SLOT_BYTES ((size_t)4096)
#define CUXFER_STAGER_MAX_SLOT_BYTES ((size_t)1 << 30)

/* Options of cuxfer_stager_create; {0} (or NULL) means the defaults. */
struct cuxfer_stager_options {
    int slots;         /* pinned slots in the ring, 1..64 (0: 4) */
    size_t slot_bytes; /* bytes per slot, 4 KiB..1 GiB (0: 16 MiB) */
    int threads;       /* copy threads, 1..64 (0: cores, at most 16) */
    int strategy;      /* CUXFER_STAGE_AUTO (0), _COPY or _REGISTER */
};

/* One job as the coordinator and the workers see it. */
typedef struct cuxfer_impl_stage_job {
    int d2h;                      /* 0: host -> device, 1: device -> host */
    int strategy;                 /* COPY, REGISTER or DIRECT */
    unsigned char *host;          /* the pageable side */
    unsigned char *dev;           /* the device side */
    size_t bytes;
    size_t chunks;                /* ceil(bytes / slot_bytes) */
    size_t last;                  /* bytes of the last chunk */
    unsigned long long pieces;    /* pieces of the whole job, < 2^32 - 1 */
} cuxfer_impl_stage_job;

/* A stager (man 3 cuxfer_stager): read `opt` and `used`; the rest is private. */
struct cuxfer_stager {
    cuxfer_stager_options opt; /* resolved options */
    int used;                  /* strategy that ran the last finished job */
    int device;                /* device current at creation */
    cudaStream_t stream;       /* non-blocking; every DMA of the stager */
    cudaEvent_t after_event;   /* recorded on the caller's `after` stream */
    cudaEvent_t end_event;     /* end of a one-DMA job or of an aborted job */
    unsigned char **slot;      /* opt.slots pinned buffers of opt.slot_bytes */
    cudaEvent_t *slot_event;   /* per slot: the last DMA that used it */
    size_t *filled;            /* per slot: bytes of its chunk copied in/out */
    size_t piece_bytes;        /* what one worker copies at a time */
    size_t pieces_per_chunk;
    cuxfer_impl_team team;     /* opt.threads workers, the coordinator its lead */
    int team_up;
    int sync_ready;            /* mu and the condition variables exist */
    int ready;                 /* fully created */
    pthread_mutex_t mu;
    pthread_cond_t coord_cv;   /* wakes the coordinator */
    pthread_cond_t work_cv;    /* wakes the workers waiting for a chunk */
    pthread_cond_t done_cv;    /* wakes the waiters */
    /* Under mu. */
    int busy;                  /* a job is claimed, queued or running */
    int pending;               /* the job waits for the coordinator */
    int quit;                  /* destroy: the coordinator leaves when idle */
    int reported;              /* result was returned by wait, query or stage */
    cudaError_t result;        /* of the last finished job */
    cuxfer_impl_stage_job job; /* the last job handed over */
    cuxfer_impl_stage_job wjob;/* the job the workers copy (the team's job) */
    char reason[CUXFER_REASON_MAX]; /* why the last job failed */
    /* Atomics shared by coordinator and workers during a job. */
    size_t permit;                  /* chunks the workers may touch: [0, permit) */
    int abort;                      /* the job failed: skip what is left */
};

/* Pieces of one job at most (a job's pieces are counted in 32 bits). */
#define CUXFER_IMPL_STAGE_PIECES_MAX 0xffffffffull

/* Fill in and check the defaults of opt, without any CUDA call. */
CUXFER_API cudaError_t cuxfer_stager_options_resolve(cuxfer_stager_options *out,
                                                     const cuxfer_stager_options *opt)
{
    cuxfer_stager_options o;
    size_t total;
    if (!out)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stager_options: out is NULL");
    memset(&o, 0, sizeof o);
    if (opt)
        o = *opt;
    memset(out, 0, sizeof *out); /* set on every path (after reading opt: out may be opt) */
    if (o.slots == 0)
        o.slots = 4;
    if (o.slot_bytes == 0)
        o.slot_bytes = (size_t)16 << 20;
    if (o.threads == 0)
        o.threads = cuxfer_impl_team_default(0);
    if (o.slots < 1 || o.slots > CUXFER_STAGER_MAX_SLOTS)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_stager_options: slots %d is outside 1..%d", o.slots,
                                CUXFER_STAGER_MAX_SLOTS);
    if (o.slot_bytes < CUXFER_STAGER_MIN_SLOT_BYTES ||
        o.slot_bytes > CUXFER_STAGER_MAX_SLOT_BYTES)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_stager_options: slot_bytes %zu is outside %zu..%zu",
                                o.slot_bytes, CUXFER_STAGER_MIN_SLOT_BYTES,
                                CUXFER_STAGER_MAX_SLOT_BYTES);
    if (o.threads < 1 || o.threads > CUXFER_STAGER_MAX_THREADS)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_stager_options: threads %d is outside 1..%d", o.threads,
                                CUXFER_STAGER_MAX_THREADS);
    if (o.strategy != CUXFER_STAGE_AUTO && o.strategy != CUXFER_STAGE_COPY &&
        o.strategy != CUXFER_STAGE_REGISTER)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_stager_options: strategy %d is not CUXFER_STAGE_AUTO "
                                "(0), CUXFER_STAGE_COPY (1) or CUXFER_STAGE_REGISTER (2)",
                                o.strategy);
    if (cuxfer_impl_mul((size_t)o.slots, o.slot_bytes, &total) != 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "cuxfer_stager_options: %d slots x %zu bytes overflows size_t",
                                o.slots, o.slot_bytes);
    *out = o;
    return cudaSuccess;
}

/* The one place that decides how a job runs: one DMA for a host side
 * already pinned or managed; else AUTO is COPY at every size (doc/PERF.md,
 * "Behind the constants": the stager's strategy and threads). */
CUXFER_API int cuxfer_impl_stage_pick(int strategy, cuxfer_memkind host_kind)
{
    if (host_kind == CUXFER_MEMORY_PINNED || host_kind == CUXFER_MEMORY_MANAGED)
        return CUXFER_STAGE_DIRECT;
    if (strategy == CUXFER_STAGE_REGISTER)
        return CUXFER_STAGE_REGISTER;
    return CUXFER_STAGE_COPY;
}

/* Bytes of chunk c of a job. */
CUXFER_API size_t cuxfer_impl_chunk_len(const cuxfer_impl_stage_job *j, size_t c,
                                        size_t slot_bytes)
{
    return c + 1 < j->chunks ? slot_bytes : j->last;
}

/* --- workers --------------------------------------------------------------- */

/* Wait until chunk c may be touched; 0 when the job was aborted instead. */
CUXFER_API int cuxfer_impl_stager_permit(cuxfer_stager *st, size_t c)
{
    int i, go;
    for (i = 0; i < CUXFER_IMPL_SPIN; ++i) {
        if (__atomic_load_n(&st->permit, __ATOMIC_ACQUIRE) > c)
            return 1;
        if (__atomic_load_n(&st->abort, __ATOMIC_ACQUIRE))
            return 0;
        CUXFER_IMPL_RELAX();
    }
    pthread_mutex_lock(&st->mu);
    while (__atomic_load_n(&st->permit, __ATOMIC_ACQUIRE) <= c &&
           !__atomic_load_n(&st->abort, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&st->work_cv, &st->mu);
    go = !__atomic_load_n(&st->abort, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&st->mu);
    return go;
}

/* A worker's part of a job: each piece once its chunk may be touched. */
CUXFER_API void cuxfer_impl_stager_pieces(void *arg, size_t *next)
{
    cuxfer_stager *st = (cuxfer_stager *)arg;
    const cuxfer_impl_stage_job *job = &st->wjob;
    const size_t S = st->opt.slot_bytes, P = st->piece_bytes, ppc = st->pieces_per_chunk;
    size_t q, end, c, off, len, chunk, si;
    while (cuxfer_impl_team_take(next, (size_t)job->pieces, 1, &q, &end)) {
        c = q / ppc;
        off = q % ppc * P;
        chunk = cuxfer_impl_chunk_len(job, c, S);
        len = chunk - off < P ? chunk - off : P;
        si = c % (size_t)st->opt.slots;
        if (!cuxfer_impl_stager_permit(st, c))
            return; /* aborted */
        if (job->d2h)
            memcpy(job->host + c * S + off, st->slot[si] + off, len);
        else
            memcpy(st->slot[si] + off, job->host + c * S + off, len);
        if (__atomic_add_fetch(&st->filled[si], len, __ATOMIC_ACQ_REL) == chunk) {
            pthread_mutex_lock(&st->mu);
            pthread_cond_broadcast(&st->coord_cv);
            pthread_mutex_unlock(&st->mu);
        }
    }
}

/* --- the coordinator ------------------------------------------------------- */

/* Open a job to the workers, chunks [0, permit) touchable at once. */
CUXFER_API void cuxfer_impl_stager_publish(cuxfer_stager *st, cuxfer_impl_stage_job *job,
                                           size_t permit)
{
    int i;
    for (i = 0; i < st->opt.slots; ++i)
        __atomic_store_n(&st->filled[i], (size_t)0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->abort, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&st->permit, permit, __ATOMIC_RELEASE);
    st->wjob = *job; /* the door is closed: no worker reads it */
    cuxfer_impl_team_open(&st->team, cuxfer_impl_stager_pieces, st);
}

/* Let the workers touch chunks [0, permit). */
CUXFER_API void cuxfer_impl_stager_grant(cuxfer_stager *st, size_t permit)
{
    pthread_mutex_lock(&st->mu);
    __atomic_store_n(&st->permit, permit, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&st->work_cv);
    pthread_mutex_unlock(&st->mu);
}

/* Wait until the workers copied all len bytes of the chunk in slot si. */
CUXFER_API void cuxfer_impl_stager_await(cuxfer_stager *st, size_t si, size_t len)
{
    if (__atomic_load_n(&st->filled[si], __ATOMIC_ACQUIRE) == len)
        return;
    pthread_mutex_lock(&st->mu);
    while (__atomic_load_n(&st->filled[si], __ATOMIC_ACQUIRE) != len)
        pthread_cond_wait(&st->coord_cv, &st->mu);
    pthread_mutex_unlock(&st->mu);
}

/* End a piecewise job: after it no thread and no copy engine touches the
 * caller's memory (after a failure, the queued DMAs are waited for). */
CUXFER_API cudaError_t cuxfer_impl_stager_finish(cuxfer_stager *st, cudaError_t err)
{
    cudaError_t e;
    if (err != cudaSuccess) {
        pthread_mutex_lock(&st->mu);
        __atomic_store_n(&st->abort, 1, __ATOMIC_SEQ_CST);
        pthread_cond_broadcast(&st->work_cv);
        pthread_mutex_unlock(&st->mu);
        e = cudaEventRecord(st->end_event, st->stream);
        if (e == cudaSuccess)
            e = cuxfer_impl_event_sync(st->end_event);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            (void)cuxfer_impl_stream_sync(st->stream);
            (void)cudaGetLastError();
        }
    }
    cuxfer_impl_team_close(&st->team);
    return err;
}

/* Queue chunk c's DMA (len bytes) between its slot and the device, then
 * the slot's event. */
CUXFER_API cudaError_t cuxfer_impl_stager_dma(cuxfer_stager *st, const cuxfer_impl_stage_job *job,
                                              size_t c, size_t len)
{
    size_t si = c % (size_t)st->opt.slots;
    unsigned char *dev = job->dev + c * st->opt.slot_bytes;
    cudaError_t err = job->d2h ? cudaMemcpyAsync(st->slot[si], dev, len, cudaMemcpyDeviceToHost,
                                                 st->stream)
                               : cudaMemcpyAsync(dev, st->slot[si], len, cudaMemcpyHostToDevice,
                                                 st->stream);
    if (err == cudaSuccess)
        err = cudaEventRecord(st->slot_event[si], st->stream);
    if (err != cudaSuccess)
        err = cuxfer_impl_fail_cuda(err, "cuxfer_stage_%s: chunk %zu of %zu (%zu bytes %s %p): "
                                    "%s: %s", job->d2h ? "d2h" : "h2d", c, job->chunks, len,
                                    job->d2h ? "from" : "to", (void *)dev,
                                    cudaGetErrorName(err), cudaGetErrorString(err));
    return err;
}

/* Wait for chunk c's DMA. */
CUXFER_API cudaError_t cuxfer_impl_stager_waited(cuxfer_stager *st,
                                                 const cuxfer_impl_stage_job *job, size_t c)
{
    cudaError_t err = cuxfer_impl_event_sync(st->slot_event[c % (size_t)st->opt.slots]);
    if (err != cudaSuccess)
        err = cuxfer_impl_fail_cuda(err, "cuxfer_stage_%s: the copy of chunk %zu of %zu failed: "
                                    "%s: %s", job->d2h ? "d2h" : "h2d", c, job->chunks,
                                    cudaGetErrorName(err), cudaGetErrorString(err));
    return err;
}

/* H2D through the slots: the DMA of each filled chunk at once, else free
 * the oldest slot in flight for refilling, else wait for the workers. */
CUXFER_API cudaError_t cuxfer_impl_stager_h2d(cuxfer_stager *st, cuxfer_impl_stage_job *job)
{
    const size_t n = job->chunks, slots = (size_t)st->opt.slots, S = st->opt.slot_bytes;
    size_t issued = 0, completed = 0, si, len;
    cudaError_t err = cudaSuccess;
    cuxfer_impl_stager_publish(st, job, n < slots ? n : slots);
    while (completed < n) {
        if (issued < n) {
            si = issued % slots;
            len = cuxfer_impl_chunk_len(job, issued, S);
            if (completed == issued ||
                __atomic_load_n(&st->filled[si], __ATOMIC_ACQUIRE) == len) {
                cuxfer_impl_stager_await(st, si, len);
                __atomic_store_n(&st->filled[si], (size_t)0, __ATOMIC_RELAXED);
                if ((err = cuxfer_impl_stager_dma(st, job, issued, len)) != cudaSuccess)
                    break;
                ++issued;
                continue;
            }
        }
        if ((err = cuxfer_impl_stager_waited(st, job, completed)) != cudaSuccess)
            break;
        ++completed;
        if (completed + slots <= n)
            cuxfer_impl_stager_grant(st, completed + slots);
    }
    return cuxfer_impl_stager_finish(st, err);
}

/* D2H through the slots: refill each emptied slot at once, else open the
 * oldest DMA's chunk to the workers, else wait for the workers. */
CUXFER_API cudaError_t cuxfer_impl_stager_d2h(cuxfer_stager *st, cuxfer_impl_stage_job *job)
{
    const size_t n = job->chunks, slots = (size_t)st->opt.slots, S = st->opt.slot_bytes;
    size_t issued = 0, ready = 0, drained = 0, si, len;
    cudaError_t err = cudaSuccess;
    cuxfer_impl_stager_publish(st, job, 0);
    while (drained < n && err == cudaSuccess) {
        /* Keep every free slot busy with a DMA. */
        while (issued < n && issued < drained + slots && err == cudaSuccess) {
            err = cuxfer_impl_stager_dma(st, job, issued, cuxfer_impl_chunk_len(job, issued, S));
            issued += err == cudaSuccess;
        }
        if (err != cudaSuccess)
            break;
        si = drained % slots;
        len = cuxfer_impl_chunk_len(job, drained, S);
        if (drained < ready &&
            (ready == issued || __atomic_load_n(&st->filled[si], __ATOMIC_ACQUIRE) == len)) {
            cuxfer_impl_stager_await(st, si, len);
            __atomic_store_n(&st->filled[si], (size_t)0, __ATOMIC_RELAXED);
            ++drained;
            continue;
        }
        if ((err = cuxfer_impl_stager_waited(st, job, ready)) != cudaSuccess)
            break;
        ++ready;
        cuxfer_impl_stager_grant(st, ready);
    }
    return cuxfer_impl_stager_finish(st, err);
}

/* One DMA: DIRECT, or REGISTER once the buffer is page-locked here; a
 * failed registration does nothing (cudaErrorNotSupported: fall back to COPY). */
CUXFER_API cudaError_t cuxfer_impl_stager_whole(cuxfer_stager *st, cuxfer_impl_stage_job *job)
{
    const char *call = job->d2h ? "cuxfer_stage_d2h" : "cuxfer_stage_h2d";
    int reg = job->strategy == CUXFER_STAGE_REGISTER;
    cudaError_t err, e;
    if (reg && cudaHostRegister(job->host, job->bytes, cudaHostRegisterDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return cudaErrorNotSupported;
    }
    if (job->d2h)
        err = cudaMemcpyAsync(job->host, job->dev, job->bytes, cudaMemcpyDeviceToHost, st->stream);
    else
        err = cudaMemcpyAsync(job->dev, job->host, job->bytes, cudaMemcpyHostToDevice, st->stream);
    if (err == cudaSuccess) {
        err = cudaEventRecord(st->end_event, st->stream);
        if (err == cudaSuccess)
            err = cuxfer_impl_event_sync(st->end_event);
        else
            (void)cuxfer_impl_stream_sync(st->stream); /* the DMA may be queued */
    }
    if (err != cudaSuccess)
        err = cuxfer_impl_fail_cuda(err, "%s: %s copy of %zu bytes: %s: %s", call,
                                    reg ? "registered" : "direct", job->bytes,
                                    cudaGetErrorName(err), cudaGetErrorString(err));
    if (reg) {
        cuxfer_impl_kcache_flush();
        e = cudaHostUnregister(job->host);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            if (err == cudaSuccess)
                err = cuxfer_impl_fail(e, "%s: cudaHostUnregister of %p: %s", call,
                                       (void *)job->host, cudaGetErrorName(e));
        }
    }
    return err;
}

CUXFER_API void *cuxfer_impl_stager_main(void *arg)
{
    cuxfer_stager *st = (cuxfer_stager *)arg;
    cuxfer_impl_stage_job job;
    cudaError_t err;
    (void)cuxfer_impl_relax_begin(); /* for good: it touches only the stager's own objects */
    if (st->device >= 0 && cudaSetDevice(st->device) != cudaSuccess)
        (void)cudaGetLastError();
    pthread_mutex_lock(&st->mu);
    for (;;) {
        while (!st->pending && !st->quit)
            pthread_cond_wait(&st->coord_cv, &st->mu);
        if (!st->pending)
            break; /* quit, and no job left */
        job = st->job;
        st->pending = 0;
        pthread_mutex_unlock(&st->mu);
        cuxfer_clear_reason(); /* this thread's reason is the job's */
        err = cudaErrorNotSupported;
        if (job.strategy != CUXFER_STAGE_COPY)
            err = cuxfer_impl_stager_whole(st, &job);
        if (err == cudaErrorNotSupported && job.strategy == CUXFER_STAGE_REGISTER)
            job.strategy = CUXFER_STAGE_COPY; /* registration refused: stage it */
        if (job.strategy == CUXFER_STAGE_COPY)
            err = job.d2h ? cuxfer_impl_stager_d2h(st, &job) : cuxfer_impl_stager_h2d(st, &job);
        pthread_mutex_lock(&st->mu);
        st->result = err;
        st->reported = err == cudaSuccess;
        (void)snprintf(st->reason, sizeof st->reason, "%s", cuxfer_last_reason());
        st->used = job.strategy;
        st->busy = 0;
        pthread_cond_broadcast(&st->done_cv);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* --- the public calls ------------------------------------------------------ */

/* Free everything (man 3 cuxfer_stager): an unreported job's error first. */
CUXFER_API cudaError_t cuxfer_stager_destroy(cuxfer_stager *st)
{
    cudaError_t first = cudaSuccess;
    int i;
    if (!st || !st->sync_ready)
        return cudaSuccess;
    st->ready = 0;
    pthread_mutex_lock(&st->mu);
    st->quit = 1; /* the coordinator ends its job, then returns */
    pthread_cond_broadcast(&st->coord_cv);
    pthread_mutex_unlock(&st->mu);
    if (st->team_up)
        cuxfer_impl_team_stop(&st->team);
    if (!st->reported && st->result != cudaSuccess)
        first = st->result;
    if (st->slot || st->slot_event) {
        cuxfer_impl_kcache_flush();
        for (i = 0; i < st->opt.slots; ++i) {
            if (st->slot_event)
                cuxfer_impl_keep(&first, cuxfer_impl_event_drop(st->slot_event[i]));
            if (st->slot && st->slot[i])
                cuxfer_impl_keep(&first, cuxfer_host_free(st->slot[i]));
        }
    }
    cuxfer_impl_keep(&first, cuxfer_impl_event_drop(st->after_event));
    cuxfer_impl_keep(&first, cuxfer_impl_event_drop(st->end_event));
    cuxfer_impl_keep(&first, cuxfer_impl_stream_drop(st->stream));
    (void)cudaGetLastError();
    free(st->slot);
    free(st->slot_event);
    free(st->filled);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->coord_cv);
    pthread_cond_destroy(&st->work_cv);
    pthread_cond_destroy(&st->done_cv);
    memset(st, 0, sizeof *st);
    return first;
}

/* A stager on the current device with all its jobs need (man 3 cuxfer_stager). */
CUXFER_API cudaError_t cuxfer_stager_create(cuxfer_stager *st, const cuxfer_stager_options *opt)
{
    cuxfer_stager_options o;
    const char *step = "";
    cudaError_t err = cudaSuccess;
    size_t p;
    int i, rc;
    if (!st)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "cuxfer_stager_create: stager is NULL");
    memset(st, 0, sizeof *st);
    CUXFER_TRY(cuxfer_stager_options_resolve(&o, opt));
    st->opt = o;
    st->device = cuxfer_impl_current_device();
    st->used = CUXFER_STAGE_AUTO;
    /* About four pieces per thread per slot, whole pages, 64 KiB at least:
     * enough to balance the threads, few enough to cost nothing. */
    p = o.slot_bytes / ((size_t)o.threads * 4);
    p = (p + 4095) & ~(size_t)4095;
    if (p < ((size_t)64 << 10))
        p = (size_t)64 << 10;
    if (p > o.slot_bytes)
        p = o.slot_bytes;
    st->piece_bytes = p;
    st->pieces_per_chunk = (o.slot_bytes + p - 1) / p;
    st->slot = (unsigned char **)calloc((size_t)o.slots, sizeof *st->slot);
    st->slot_event = (cudaEvent_t *)calloc((size_t)o.slots, sizeof *st->slot_event);
    st->filled = (size_t *)calloc((size_t)o.slots, sizeof *st->filled);
    if (!st->slot || !st->slot_event || !st->filled) {
        free(st->slot);
        free(st->slot_event);
        free(st->filled);
        memset(st, 0, sizeof *st);
        return cuxfer_impl_fail(cudaErrorMemoryAllocation,
                                "cuxfer_stager_create: out of host memory");
    }
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->coord_cv, NULL);
    pthread_cond_init(&st->work_cv, NULL);
    cuxfer_impl_cond_init(&st->done_cv); /* timed waits: CLOCK_MONOTONIC */
    st->sync_ready = 1;

    step = "cudaStreamCreateWithFlags";
    err = cuxfer_impl_stream_create(&st->stream, cudaStreamNonBlocking, 0);
    if (err == cudaSuccess) {
        step = "cudaEventCreateWithFlags";
        err = cuxfer_impl_event_create(&st->after_event, cudaEventDisableTiming);
    }
    /* Blocking-sync events: the coordinator sleeps in cudaEventSynchronize
     * instead of spinning on a core the workers need. */
    if (err == cudaSuccess)
        err = cuxfer_impl_event_create(&st->end_event,
                                       cudaEventDisableTiming | cudaEventBlockingSync);
    for (i = 0; i < o.slots && err == cudaSuccess; ++i)
        err = cuxfer_impl_event_create(&st->slot_event[i],
                                       cudaEventDisableTiming | cudaEventBlockingSync);
    if (err == cudaSuccess)
        step = "cudaHostAlloc of a slot";
    for (i = 0; i < o.slots && err == cudaSuccess; ++i)
        err = cuxfer_host_alloc((void **)&st->slot[i], o.slot_bytes, 1, 0); /* Relaxed */
    if (err != cudaSuccess) {
        (void)cuxfer_stager_destroy(st);
        return cuxfer_impl_fail_cuda(err, "cuxfer_stager_create: %s: %s (%d slots of %zu bytes)",
                                     step, cudaGetErrorName(err), o.slots, o.slot_bytes);
    }
    rc = cuxfer_impl_team_start(&st->team, o.threads, cuxfer_impl_stager_main, st);
    st->team_up = 1;
    if (rc != 0) {
        (void)cuxfer_stager_destroy(st);
        return cuxfer_impl_fail(cudaErrorOperatingSystem,
                                "cuxfer_stager_create: pthread_create: %s", strerror(rc));
    }
    st->ready = 1;
    return cudaSuccess;
}

/* Wait for the last job (timeout_ms < 0: no limit; 0: a query) and collect
 * its result; a failed copy ends the coordinator's event wait, never hangs. */
CUXFER_API cudaError_t cuxfer_impl_stager_collect(cuxfer_stager *st, const char *call,
                                                  long timeout_ms, int quiet)
{
    struct timespec until;
    char why[CUXFER_REASON_MAX];
    cudaError_t err;
    int timed_out = 0, d2h;
    size_t bytes;
    if (!st || !st->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s", call,
                                st ? "the stager was not created (or was destroyed)"
                                   : "stager is NULL");
    if (timeout_ms > 0)
        cuxfer_impl_deadline(&until, timeout_ms);
    pthread_mutex_lock(&st->mu);
    while (st->busy && !timed_out) {
        if (timeout_ms < 0)
            pthread_cond_wait(&st->done_cv, &st->mu);
        else if (timeout_ms == 0 ||
                 pthread_cond_timedwait(&st->done_cv, &st->mu, &until) == ETIMEDOUT)
            timed_out = 1;
    }
    if (st->busy) {
        d2h = st->job.d2h;
        bytes = st->job.bytes;
        pthread_mutex_unlock(&st->mu);
        if (quiet)
            return cudaErrorNotReady;
        return cuxfer_impl_fail(cudaErrorNotReady,
                                "%s: the %s job of %zu bytes is not done within %ld ms", call,
                                d2h ? "D2H" : "H2D", bytes, timeout_ms);
    }
    err = st->result;
    st->reported = 1;
    (void)snprintf(why, sizeof why, "%s", st->reason);
    pthread_mutex_unlock(&st->mu);
    if (err != cudaSuccess)
        return cuxfer_impl_fail(err, "%s", why);
    return cudaSuccess;
}

/* Wait until the last job finished (man 3 cuxfer_stager). */
CUXFER_API cudaError_t cuxfer_stager_wait(cuxfer_stager *st, long timeout_ms)
{
    return cuxfer_impl_stager_collect(st, "cuxfer_stager_wait", timeout_ms, 0);
}

/* cuxfer_stager_wait without waiting (no reason set: cheap to poll). */
CUXFER_API cudaError_t cuxfer_stager_query(cuxfer_stager *st)
{
    return cuxfer_impl_stager_collect(st, "cuxfer_stager_query", 0, 1);
}

/* Checks of a stage call that need neither a device nor a stager. */
CUXFER_API cudaError_t cuxfer_impl_stage_check(const char *call, int d2h, const void *host,
                                               const void *dev, size_t bytes)
{
    const char *hn = d2h ? "dst_pageable" : "src_pageable";
    const char *dn = d2h ? "src_device" : "dst_device";
    uintptr_t h = (uintptr_t)host, d = (uintptr_t)dev;
    if (d2h ? !host : !dev)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s is NULL", call, d2h ? hn : dn);
    if (d2h ? !dev : !host)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: %s is NULL", call, d2h ? dn : hn);
    if (bytes == 0)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: bytes is 0: nothing to stage", call);
    if (h > UINTPTR_MAX - bytes || d > UINTPTR_MAX - bytes)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %s %p + %zu bytes wraps around the address space", call,
                                h > UINTPTR_MAX - bytes ? hn : dn,
                                h > UINTPTR_MAX - bytes ? host : dev, bytes);
    if (h < d + bytes && d < h + bytes)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %s %p and %s %p overlap (%zu bytes)", call, hn, host, dn,
                                dev, bytes);
    return cudaSuccess;
}

/* The device side must be device or managed memory, the host side host memory. */
CUXFER_API cudaError_t cuxfer_impl_stage_kinds(const char *call, int d2h, const void *host,
                                               const void *dev, cuxfer_memkind *host_kind)
{
    cuxfer_memkind hk = cuxfer_impl_classify(host, NULL);
    cuxfer_memkind dk = cuxfer_impl_classify(dev, NULL);
    *host_kind = hk;
    if (dk == CUXFER_MEMORY_PAGEABLE || dk == CUXFER_MEMORY_PINNED)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %s %p is %s memory, not device memory", call,
                                d2h ? "src_device" : "dst_device", dev, cuxfer_memkind_name(dk));
    if (hk == CUXFER_MEMORY_DEVICE)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %s %p is device memory, not host memory (copy device to "
                                "device with cudaMemcpyAsync)", call,
                                d2h ? "dst_pageable" : "src_pageable", host);
    return cudaSuccess;
}

/* A stage call: claim the stager, order it after `after`, hand the job over. */
CUXFER_API cudaError_t cuxfer_impl_stage(cuxfer_stager *st, const char *call, int d2h,
                                         void *host, void *dev, size_t bytes, cudaStream_t after)
{
    cuxfer_impl_stage_job job;
    cuxfer_memkind hk = CUXFER_MEMORY_UNKNOWN;
    char prev[CUXFER_REASON_MAX];
    cudaError_t err;
    unsigned long long pieces;
    int cap;
    if (!st)
        return cuxfer_impl_fail(cudaErrorInvalidValue, "%s: stager is NULL", call);
    CUXFER_TRY(cuxfer_impl_stage_check(call, d2h, host, dev, bytes));
    if (!st->ready)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: the stager was not created (or was destroyed)", call);
    memset(&job, 0, sizeof job);
    job.d2h = d2h;
    job.host = (unsigned char *)host;
    job.dev = (unsigned char *)dev;
    job.bytes = bytes;
    job.chunks = (bytes - 1) / st->opt.slot_bytes + 1;
    job.last = bytes - (job.chunks - 1) * st->opt.slot_bytes;
    pieces = (unsigned long long)(job.chunks - 1) * st->pieces_per_chunk +
             (job.last + st->piece_bytes - 1) / st->piece_bytes;
    if (pieces >= CUXFER_IMPL_STAGE_PIECES_MAX)
        return cuxfer_impl_fail(cudaErrorInvalidValue,
                                "%s: %zu bytes make %llu pieces of %zu bytes, more than a "
                                "stager counts; use larger slots", call, bytes, pieces,
                                st->piece_bytes);
    job.pieces = pieces;
    CUXFER_TRY(cuxfer_impl_stage_kinds(call, d2h, host, dev, &hk));
    /* Before anything is queued: recording on the legacy stream while a
     * blocking stream is captured would invalidate that capture. */
    CUXFER_TRY(cuxfer_impl_stream_usable(call, "the stream `after`", after, &cap));
    if (cap)
        return cuxfer_impl_fail(cudaErrorStreamCaptureUnsupported,
                                "%s: the stream `after` is being captured into a graph; a "
                                "stager's copies run outside graphs", call);
    job.strategy = cuxfer_impl_stage_pick(st->opt.strategy, hk);

    pthread_mutex_lock(&st->mu);
    if (st->busy) {
        size_t busy_bytes = st->job.bytes;
        int busy_d2h = st->job.d2h;
        pthread_mutex_unlock(&st->mu);
        return cuxfer_impl_fail(cudaErrorNotReady,
                                "%s: the stager is busy with a %s job of %zu bytes (one job "
                                "at a time): cuxfer_stager_wait for it first", call,
                                busy_d2h ? "D2H" : "H2D", busy_bytes);
    }
    if (!st->reported && st->result != cudaSuccess) {
        err = st->result;
        st->reported = 1;
        (void)snprintf(prev, sizeof prev, "%s", st->reason);
        pthread_mutex_unlock(&st->mu);
        return cuxfer_impl_fail(err, "%s: not started: the previous job failed: %s", call, prev);
    }
    st->busy = 1;
    st->job = job;
    pthread_mutex_unlock(&st->mu);

    /* cuxfer_stream_wait's semantics with the stager's own event (made on
     * the stager's device, so any thread may call). */
    err = cudaEventRecord(st->after_event, after);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(st->stream, st->after_event, 0);
    if (err != cudaSuccess) {
        pthread_mutex_lock(&st->mu);
        st->busy = 0;
        pthread_cond_broadcast(&st->done_cv);
        pthread_mutex_unlock(&st->mu);
        return cuxfer_impl_fail_cuda(err, "%s: cannot order the stager after stream %p: %s", call,
                                     (void *)after, cudaGetErrorName(err));
    }
    pthread_mutex_lock(&st->mu);
    st->pending = 1;
    pthread_cond_broadcast(&st->coord_cv);
    pthread_mutex_unlock(&st->mu);
#ifdef CUXFER_DEBUG_SYNC
    return cuxfer_stager_wait(st, -1);
#else
    return cudaSuccess;
#endif
}

/* Copy pageable src_pageable to dst_device after `after` (man 3 cuxfer_stager). */
CUXFER_API cudaError_t cuxfer_stage_h2d(cuxfer_stager *st, void *dst_device,
                                        const void *src_pageable, size_t bytes,
                                        cudaStream_t after)
{
    return cuxfer_impl_stage(st, "cuxfer_stage_h2d", 0, (void *)src_pageable, dst_device, bytes,
                             after);
}

/* Copy src_device to pageable dst_pageable; refusals as cuxfer_stage_h2d's. */
CUXFER_API cudaError_t cuxfer_stage_d2h(cuxfer_stager *st, void *dst_pageable,
                                        const void *src_device, size_t bytes,
                                        cudaStream_t after)
{
    return cuxfer_impl_stage(st, "cuxfer_stage_d2h", 1, dst_pageable, (void *)src_device, bytes,
                             after);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUXFER_H */
