/* SPDX-License-Identifier: MIT */
/*
 * devices.c - the CUDA services of roicopy's copies (devices.h).  Every
 * CUDA return code is checked; a failure is exit status 5 with
 * "roicopy: FILE: CUDA: <error name>: <reason>".
 */
#include "devices.h"
#include "report.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ------------------------------------------------------------ */

int roicopy_cuda_fail(const char *file, cudaError_t err)
{
    const char *why = cuxfer_last_reason(), *name = cudaGetErrorName(err);
    size_t n, k = strlen(name);
    if (!why || !*why)
        why = cudaGetErrorString(err);
    /* The kit's reason may end " (cudaErrorX)": the name is said once. */
    n = strlen(why);
    if (n > k + 3 && why[n - 1] == ')' &&
        !strncmp(why + n - k - 3, " (", 2) &&
        !strncmp(why + n - k - 1, name, k))
        n -= k + 3;
    return roicopy_fail(RC_CUDA, file, "CUDA: %s: %.*s", name, (int)n, why);
}

/* ---- start-up and release ----------------------------------------------- */

/* Creating a CUDA context takes hundreds of milliseconds, longer than
 * checking a whole batch: a helper thread starts it (cudaFree(0) on each
 * device) while roicopy.c reads headers, and roicopy_gpu_run() waits for
 * it before its first CUDA call.  Destroying it takes about a third of
 * that, which a batch spends while its last frames are still being
 * written: the same helper thread resets each device once the GPU's part
 * is over (roicopy_gpu_release), and the process exits with no context
 * left to tear down.  Errors are ignored: a failed start fails again,
 * reported, on the main thread; a failed release leaves the context to the
 * runtime's exit. */
static pthread_t helper_thread;
static int helper_running;
static int helper_devices[ROICOPY_MAX_DEVICES];
static int helper_n;
static int helper_release; /* 0: start the contexts, 1: reset them */

static void *helper_main(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < helper_n; ++i)
        if (cudaSetDevice(helper_devices[i]) == cudaSuccess)
            (void)(helper_release ? cudaDeviceReset() : cudaFree(0));
    (void)cudaGetLastError(); /* this thread's, not the main thread's */
    roicopy_trace(helper_release ? "the CUDA context is released (helper thread)"
                                 : "the CUDA context is up (helper thread)");
    return NULL;
}

static void helper_start(const int *devices, int n, int release)
{
    int i;
    roicopy_gpu_join();
    if (n < 1 || n > ROICOPY_MAX_DEVICES || getenv("ROICOPY_NO_PRESTART"))
        return;
    for (i = 0; i < n; ++i)
        helper_devices[i] = devices[i];
    helper_n = n;
    helper_release = release;
    helper_running = pthread_create(&helper_thread, NULL, helper_main,
                                    NULL) == 0;
}

void roicopy_gpu_prestart(const int *devices, int n)
{
    helper_start(devices, n, 0);
}

void roicopy_gpu_release(const int *devices, int n)
{
    helper_start(devices, n, 1);
}

void roicopy_gpu_join(void)
{
    if (helper_running)
        (void)pthread_join(helper_thread, NULL);
    helper_running = 0;
}

/* ---- devices ------------------------------------------------------------- */

/* Every listed device must exist; each is made current once, so one that
 * cannot be used fails here, and the home device (devices[0]) is left
 * current. */
int roicopy_setup_devices(const roicopy_plan *p)
{
    const char *file = p->frames[0].input;
    int n = 0, i;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_device_count(&n);
    if (err != cudaSuccess)
        return roicopy_cuda_fail(file, err);
    for (i = 0; i < p->ndevices; ++i)
        if (p->devices[i] >= n)
            return roicopy_fail(RC_CUDA, file, "CUDA: cudaErrorInvalidDevice: "
                                "%s %d, but there %s only %d device%s",
                                p->devices_given ? "--devices lists device"
                                                 : "--device",
                                p->devices[i], n == 1 ? "is" : "are", n,
                                n == 1 ? "" : "s");
    for (i = p->ndevices - 1; i >= 0; --i) {
        cuxfer_clear_reason();
        err = cudaSetDevice(p->devices[i]);
        if (err != cudaSuccess)
            return roicopy_cuda_fail(file, err);
    }
    return RC_OK;
}

/* Go back to the home device after work on another one, keeping the first
 * error. */
cudaError_t roicopy_back_home(int home, cudaError_t err)
{
    cudaError_t e = cudaSetDevice(home);
    return err != cudaSuccess ? err : e;
}

/* Make waiter wait, on the GPU, for what is queued so far on signaler, a
 * stream of device dev.  The waiter may be on any device, but the event
 * that carries the wait must be recorded on the signaler's device, which
 * cuxfer_stream_wait takes to be the current one before CUDA 12.8. */
cudaError_t roicopy_wait_for(cudaStream_t waiter, cudaStream_t signaler,
                             int dev, int home)
{
    cudaError_t err;
    if (waiter == signaler)
        return cudaSuccess;
    err = cudaSetDevice(dev);
    if (err == cudaSuccess)
        err = cuxfer_stream_wait(waiter, signaler);
    return roicopy_back_home(home, err);
}

/* ---- host buffers: pinned views or, with --pageable, wrapped malloc ----- */

cudaError_t roicopy_host_view(cuxfer_view *v, int pageable, size_t width,
                              size_t height, size_t elem, void **owned)
{
    size_t bytes = width * elem * height; /* checked by image.c's limits */
    *owned = NULL;
    if (!pageable)
        return cuxfer_view_alloc_host(v, width, height, elem, 0);
    *owned = malloc(bytes);
    if (!*owned)
        return cudaErrorMemoryAllocation;
    return cuxfer_view_wrap(v, *owned, width * elem, width, height, elem);
}

void roicopy_host_view_free(cuxfer_view *v, void *owned)
{
    (void)cuxfer_view_free(v); /* frees pinned memory, nothing for wraps */
    free(owned);
}

/* ---- regions ------------------------------------------------------------- */

cuxfer_roi roicopy_roi(const geom_rect *r, size_t epp)
{
    cuxfer_roi roi;
    roi.x = r->x * epp;
    roi.y = r->y;
    roi.width = r->width * epp;
    roi.height = r->height;
    return roi;
}

cuxfer_roi roicopy_device_roi(const roicopy_plan *p, const roicopy_frame *f)
{
    geom_rect at = f->roi;
    at.x = p->place ? p->place_x : 0;
    at.y = p->place ? p->place_y : 0;
    return roicopy_roi(&at, f->elem_per_pixel);
}
