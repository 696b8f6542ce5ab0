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
 * STEP BY STEP
 *  1. Allocate pinned host memory (cuxfer_host_alloc, cuxfer_view_alloc_host)
 *     or pin what you have (cuxfer_host_register): an "async" copy from
 *     pageable memory blocks the caller and runs at a sixth of the link.
 *  2. Describe 2D data as views (pointer, pitch in bytes, width and height in
 *     elements, element size) and cut ROIs with cuxfer_view_sub: the ROI
 *     pointer arithmetic and every bound is checked for you.
 *  3. Copy with cuxfer_copy2d_async / cuxfer_copy_async on an explicit,
 *     non-blocking stream (cuxfer_stream_pool_*): never stream 0.
 *  4. Overlap: queue frame i+1's upload while frame i computes and comes
 *     back (cuxfer_ring_*), hand results to CPU threads with cuxfer_latch.
 *  5. Check every call: CUXFER_CHECK aborts with a readable report,
 *     CUXFER_TRY returns the error; cuxfer_last_reason() says why a cuxfer
 *     call refused its arguments.
 *
 * CONFIGURATION (define before the include; all have defaults)
 *  CUXFER_API             storage of every function    (static inline)
 *  CUXFER_ON_ERROR(err)   what CUXFER_CHECK does after printing  (abort())
 *  CUXFER_LOG(...)        printf-style sink of all messages  (fprintf(stderr, ...))
 *  CUXFER_ASSERT(c)       internal invariants               (assert(c))
 *  CUXFER_DEBUG_SYNC      defined: CUXFER_CHECK_LAUNCH and cuxfer's own copies
 *                         synchronize, to isolate ordering bugs
 *  CUXFER_PAGEABLE_POLICY default pageable-guard policy
 *                         (CUXFER_PAGEABLE_WARN); the environment variable
 *                         CUXFER_PAGEABLE=allow|warn|error overrides it
 *  CUXFER_REASON_MAX      size of the per-thread reason text   (256)
 *
 * ERRORS
 *  Functions return cudaError_t.  Bad arguments are caught on the CPU before
 *  any CUDA call and map to the closest CUDA code (cudaErrorInvalidValue,
 *  cudaErrorInvalidPitchValue, ...); cuxfer_last_reason() then holds a
 *  sentence naming the offending values, per thread, like errno: read it
 *  right after the failing call.  The text is shared by every translation
 *  unit of the program.
 *
 * THREADS
 *  Each family's man page says whether it is safe from several host threads.
 *  Process-wide state is limited to the reason text (per thread), the
 *  pageable policy and the warned-once flags; these are weak symbols so every
 *  translation unit shares one copy (GCC, Clang and nvcc on ELF).
 *
 * LICENCE  MIT.  See man 3 cuxfer for the overview and a page per family.
 */
#ifndef CUXFER_H
#define CUXFER_H

#include <cuda_runtime_api.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#ifndef CUXFER_REASON_MAX
#define CUXFER_REASON_MAX 256
#endif

/* Pageable-guard policies (section 3). */
#define CUXFER_PAGEABLE_ALLOW 1
#define CUXFER_PAGEABLE_WARN 2
#define CUXFER_PAGEABLE_ERROR 3
#ifndef CUXFER_PAGEABLE_POLICY
#define CUXFER_PAGEABLE_POLICY CUXFER_PAGEABLE_WARN
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CUXFER_IMPL_SHARED __attribute__((weak))
#define CUXFER_IMPL_TLS __thread
#define CUXFER_IMPL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CUXFER_IMPL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#error "cuxfer.h needs GCC, Clang or nvcc with a GNU host compiler (weak symbols, __thread, __atomic)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * 2. Errors: CUXFER_CHECK / CUXFER_TRY, the reason text, device probing
 * ------------------------------------------------------------------------ */

/* Why the last cuxfer call of this thread refused its arguments.  A weak
 * thread-local definition: every translation unit including this header
 * emits it and the linker keeps one, so a reason set in one .c file is read
 * in another. */
CUXFER_IMPL_SHARED CUXFER_IMPL_TLS char cuxfer_impl_reason[CUXFER_REASON_MAX];

/* The sentence explaining this thread's last validation failure, or "" when
 * there is none.  Like errno it is not cleared by successful calls. */
CUXFER_API const char *cuxfer_last_reason(void) { return cuxfer_impl_reason; }

/* Forget this thread's reason (CUXFER_CHECK does so before each call). */
CUXFER_API void cuxfer_clear_reason(void) { cuxfer_impl_reason[0] = '\0'; }

/* Record a reason and return err, so validators read
 * "return cuxfer_impl_fail(cudaErrorInvalidValue, "...", ...)". */
CUXFER_API CUXFER_IMPL_PRINTF(2, 3) cudaError_t
    cuxfer_impl_fail(cudaError_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(cuxfer_impl_reason, sizeof cuxfer_impl_reason, fmt, ap);
    va_end(ap);
    return err;
}

/* The report CUXFER_CHECK prints: where, which expression, CUDA's name and
 * text for the error and, when a cuxfer call set one, the reason. */
CUXFER_API void cuxfer_impl_report(cudaError_t err, const char *expr,
                                   const char *file, int line,
                                   const char *func)
{
    CUXFER_LOG("%s:%d: %s: %s failed: %s: %s%s%s\n", file, line, func, expr,
               cudaGetErrorName(err), cudaGetErrorString(err),
               cuxfer_impl_reason[0] ? ": " : "", cuxfer_impl_reason);
}

/* CUXFER_CHECK(expr): evaluate a cudaError_t expression; on failure print
 * file:line, function, the expression, cudaGetErrorName/String and the
 * reason, then run CUXFER_ON_ERROR(err) (default abort()). */
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

/* CUXFER_TRY(expr): in a function returning cudaError_t, return the error
 * of a failing expression to the caller (no printing). */
#define CUXFER_TRY(expr)                                                       \
    do {                                                                       \
        cudaError_t cuxfer_impl_err_ = (expr);                                 \
        if (CUXFER_IMPL_UNLIKELY(cuxfer_impl_err_ != cudaSuccess))             \
            return cuxfer_impl_err_;                                           \
    } while (0)

/* CUXFER_CHECK_LAUNCH(): after a kernel launch, check (and clear) the launch
 * error; with CUXFER_DEBUG_SYNC also wait for the kernel, so an execution
 * error is reported at the launch that caused it. */
#ifdef CUXFER_DEBUG_SYNC
#define CUXFER_CHECK_LAUNCH()                                                  \
    do {                                                                       \
        CUXFER_CHECK(cudaGetLastError());                                      \
        CUXFER_CHECK(cudaDeviceSynchronize());                                 \
    } while (0)
#else
#define CUXFER_CHECK_LAUNCH() CUXFER_CHECK(cudaGetLastError())
#endif

/* Count the CUDA devices, telling apart why there are none.  *count is 0 on
 * any failure.  Returns cudaSuccess with a count >= 1; cudaErrorNoDevice
 * when a driver runs but sees no GPU; cudaErrorInsufficientDriver when no
 * driver is installed (or it is older than the runtime);
 * cudaErrorStubLibrary when only the toolkit's stub libcuda.so was found.
 * The reason says which, in words.  No sticky error is left behind: the
 * runtime's last error is cleared, so a later cudaGetLastError() does not
 * report the probe. */
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

/* Overflow-checked multiply: 0 and *out set on success, -1 on overflow. */
CUXFER_API int cuxfer_impl_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

/* Overflow-checked add. */
CUXFER_API int cuxfer_impl_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a)
        return -1;
    *out = a + b;
    return 0;
}

/* @@SECTIONS@@ */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUXFER_H */
