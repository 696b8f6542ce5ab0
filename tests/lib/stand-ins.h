/* SPDX-License-Identifier: MIT */
/*
 * stand-ins.h - the CUDA runtime's answers for tests that need no device:
 * such a test is linked with -Wl,--wrap=NAME for each runtime call its
 * code path makes, and WRAP(ret, NAME, args) { ... } defines __wrap_NAME,
 * which the linker calls instead.  The answers most of them give are here,
 * each defined when its macro is set before the include (a test with its
 * own answer for a call leaves that macro unset):
 *   STAND_IN_UNCAPTURED  cudaStreamIsCapturing: no stream is captured;
 *                        cudaThreadExchangeStreamCaptureMode: accepted
 *   STAND_IN_DEVICE_0    cudaGetDevice: device 0
 *   STAND_IN_LAST_ERROR  cudaGetLastError: stand_in_error, then cleared
 *                        (a stand-in that fails sets stand_in_error, as
 *                        the runtime keeps a failed call's error)
 */
#ifndef CUXFER_TESTS_STAND_INS_H
#define CUXFER_TESTS_STAND_INS_H
#include <cuda_runtime_api.h>

#define WRAP(ret, name, args) ret __wrap_##name args; ret __wrap_##name args

#ifdef STAND_IN_UNCAPTURED
WRAP(cudaError_t, cudaStreamIsCapturing, (cudaStream_t s, enum cudaStreamCaptureStatus *st))
{
    (void)s;
    *st = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaThreadExchangeStreamCaptureMode, (enum cudaStreamCaptureMode *mode))
{
    (void)mode;
    return cudaSuccess;
}
#endif

#ifdef STAND_IN_DEVICE_0
WRAP(cudaError_t, cudaGetDevice, (int *dev))
{
    *dev = 0;
    return cudaSuccess;
}
#endif

#ifdef STAND_IN_LAST_ERROR
static cudaError_t stand_in_error = cudaSuccess; /* what cudaGetLastError would say */

WRAP(cudaError_t, cudaGetLastError, (void))
{
    cudaError_t e = stand_in_error;
    stand_in_error = cudaSuccess;
    return e;
}
#endif
#endif
