/* SPDX-License-Identifier: MIT */
/*
 * devices.h - the CUDA services of roicopy's copies (roicopy-gpu.c,
 * roicopy-ring.c, roicopy-tiles.c, timing.c): a CUDA failure as a
 * message, the context started early, the devices checked and switched,
 * waits across devices, host buffers, and roicopy's regions as
 * cuxfer_roi.
 *
 * They call nothing of roicopy's but frames.c (tests/roicopy/tools-no-cycle.sh).
 */
#ifndef ROICOPY_DEVICES_H
#define ROICOPY_DEVICES_H

#include <cuxfer.h>

#include "frames.h"

/* Report a CUDA failure for file (RC_CUDA, "roicopy: FILE: CUDA: <error
 * name>: <reason>"): cuxfer's reason when it gave one, else CUDA's own
 * text. */
int roicopy_cuda_fail(const char *file, cudaError_t err);

/* Evaluate a cudaError_t expression; on failure report it and jump to the
 * function's cleanup (label `done`) with rc set. */
#define GPU_TRY(file, expr)                                                    \
    do {                                                                       \
        cudaError_t gpu_err_;                                                  \
        cuxfer_clear_reason();                                                 \
        gpu_err_ = (expr);                                                     \
        if (gpu_err_ != cudaSuccess) {                                         \
            rc = roicopy_cuda_fail((file), gpu_err_);                          \
            goto done;                                                         \
        }                                                                      \
    } while (0)

/* Start the CUDA context of these devices on a helper thread, so that it
 * overlaps the checks and the reading (never for --dry-run);
 * roicopy_gpu_join() waits for it (roicopy_gpu_run() does, and roicopy.c
 * before exiting).  roicopy_gpu_release() resets the devices on the same
 * thread once nothing will call CUDA again, so that the context's teardown
 * overlaps the last writes instead of following them (the ring's last
 * frame does; roicopy_ring_run joins it).  ROICOPY_NO_PRESTART in the
 * environment turns both off (for comparisons). */
void roicopy_gpu_prestart(const int *devices, int n);
void roicopy_gpu_release(const int *devices, int n);
void roicopy_gpu_join(void);

/* Every device of the plan must exist; each is made current once, so one
 * that cannot be used fails here, and the home device (devices[0]) is left
 * current.  The status, the message printed. */
int roicopy_setup_devices(const roicopy_plan *p);

/* Go back to the home device after work on another one, keeping the first
 * error. */
cudaError_t roicopy_back_home(int home, cudaError_t err);

/* Make waiter wait, on the GPU, for what is queued so far on signaler, a
 * stream of device dev; home is current again afterwards. */
cudaError_t roicopy_wait_for(cudaStream_t waiter, cudaStream_t signaler,
                             int dev, int home);

/* A host view of width x height elements: pinned, or with pageable a
 * wrapped malloc (*owned, freed by roicopy_host_view_free). */
cudaError_t roicopy_host_view(cuxfer_view *v, int pageable, size_t width,
                              size_t height, size_t elem, void **owned);
void roicopy_host_view_free(cuxfer_view *v, void *owned);

/* A region in pixels ({width, height, x, y}, as the command line gives it)
 * as a cuxfer_roi in view elements: x and width times epp, the elements
 * per pixel.  The one place the conversion is made. */
cuxfer_roi roicopy_roi(const geom_rect *r, size_t epp);

/* Where frame f's ROI lands on the device, in view elements: at --place in
 * the canvas, else at 0,0 of a view of the ROI's size. */
cuxfer_roi roicopy_device_roi(const roicopy_plan *p, const roicopy_frame *f);

#endif
