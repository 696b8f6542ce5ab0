/* SPDX-License-Identifier: MIT */
/* Calls that fail leave nothing behind: no error in cudaGetLastError(), a
 * reason in cuxfer_last_reason() naming the value, nothing half done.
 * CPU part (always): a failed cuxfer_host_free, cuxfer_managed_free,
 * cuxfer_host_unregister and cuxfer_device_free (a malloc'd pointer) and,
 * without a driver, cuxfer_host_register (each names its CUDA call),
 * cuxfer_stream_pool_create_on with device -1 (cudaErrorInvalidDevice
 * before any CUDA call), and
 * cuxfer_stream_pool_wrap with cudaStreamLegacy or cudaStreamPerThread
 * (the pool never hands out a default stream).  GPU part (skipped without
 * a device): cuxfer_graph_end with a NULL graph still ends the capture, so
 * the stream is usable at once; with a device every refusal above must
 * also leave cudaGetLastError() clean. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* 1 with a device.  Without a driver every runtime call, cudaGetLastError
 * included, answers cudaErrorInsufficientDriver: "nothing left behind"
 * can only be asked with a device. */
static int have_gpu;

static void nothing_left(void)
{
    cudaError_t last;
    if (!have_gpu) {
        skip(1, "no error left behind: without a driver every call reports one");
        return;
    }
    last = cudaGetLastError();
    is_int(cudaSuccess, last, "no error left behind (%s)", cudaGetErrorName(last));
}

/* err is a failure, the reason names `call`, no error was left behind. */
static void clean_failure(cudaError_t err, const char *call, const char *what)
{
    ok(err != cudaSuccess, "%s fails (%s)", what, cudaGetErrorName(err));
    contains(cuxfer_last_reason(), call, "with a reason naming the call");
    nothing_left();
}

static void frees(void)
{
    void *m = malloc(4096);
    if (!m)
        bail("out of memory");
    cuxfer_clear_reason();
    clean_failure(cuxfer_host_free(m), "cuxfer_host_free", "cuxfer_host_free of malloc'd memory");
    cuxfer_clear_reason();
    clean_failure(cuxfer_managed_free(m), "cuxfer_managed_free",
                  "cuxfer_managed_free of malloc'd memory");
    cuxfer_clear_reason();
    clean_failure(cuxfer_host_unregister(m), "cuxfer_host_unregister",
                  "cuxfer_host_unregister of memory never registered");
    cuxfer_clear_reason();
    clean_failure(cuxfer_device_free(m), "cuxfer_device_free: cudaFree",
                  "cuxfer_device_free of malloc'd memory");
    if (!have_gpu) { /* with a device, pinning malloc'd memory works */
        cuxfer_clear_reason();
        clean_failure(cuxfer_host_register(m, 4096, 0), "cuxfer_host_register: cudaHostRegister",
                      "cuxfer_host_register without a driver");
    }
    free(m);
}

static void pools(void)
{
    cuxfer_stream_pool p;
    cudaStream_t specials[2];
    int i;
    memset(&p, 0xff, sizeof p);
    cuxfer_clear_reason();
    is_int(cudaErrorInvalidDevice, cuxfer_stream_pool_create_on(&p, -1, 2, 0, 0),
           "cuxfer_stream_pool_create_on(-1) is cudaErrorInvalidDevice");
    contains(cuxfer_last_reason(), "device -1", "the reason names the device");
    nothing_left();
    ok(p.count == 0 && p.streams == NULL, "the pool is left zeroed");
    specials[0] = cudaStreamLegacy;
    specials[1] = cudaStreamPerThread;
    for (i = 0; i < 2; ++i) {
        cudaStream_t set[2];
        set[0] = (cudaStream_t)&set[1]; /* never used: refused first */
        set[1] = specials[i];
        cuxfer_clear_reason();
        is_int(cudaErrorInvalidValue, cuxfer_stream_pool_wrap(&p, set, 2),
               "cuxfer_stream_pool_wrap refuses %s",
               i ? "cudaStreamPerThread" : "cudaStreamLegacy");
        contains(cuxfer_last_reason(), i ? "streams[1] is cudaStreamPerThread"
                                         : "streams[1] is cudaStreamLegacy",
                 "the reason names the entry");
    }
}

/* cuxfer_graph_end(NULL, s): refused, and the capture is over all the same. */
static void graph_end_null(void)
{
    cudaStream_t s;
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
    unsigned char *h = NULL, *d = NULL;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cuxfer_host_alloc((void **)&h, 64, 1, 0));
    GPU_MUST(cudaMalloc((void **)&d, 64));
    GPU_MUST(cuxfer_graph_begin(s));
    GPU_MUST(cudaMemsetAsync(d, 1, 64, s));
    cuxfer_clear_reason();
    is_int(cudaErrorInvalidValue, cuxfer_graph_end(NULL, s), "cuxfer_graph_end(NULL) refused");
    contains(cuxfer_last_reason(), "ended all the same", "the reason says the capture ended");
    GPU_OK(cudaStreamIsCapturing(s, &st), "the capture state can be asked");
    is_int(cudaStreamCaptureStatusNone, st, "the stream no longer captures");
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
    memset(h, 0xA5, 64);
    GPU_OK(cudaMemsetAsync(d, 7, 64, s), "the stream takes ordinary work");
    GPU_OK(cudaMemcpyAsync(h, d, 64, cudaMemcpyDeviceToHost, s), "a download");
    GPU_OK(cudaStreamSynchronize(s), "which completes");
    ok(h[0] == 7 && h[63] == 7, "with the bytes of the ordinary memset (not the dropped graph)");
    GPU_MUST(cudaFree(d));
    GPU_MUST(cuxfer_host_free(h));
    GPU_MUST(cudaStreamDestroy(s));
}

int main(void)
{
    char why[CUXFER_REASON_MAX];
    plan(0);
    have_gpu = gpu_present(0);
    (void)snprintf(why, sizeof why, "%s", cuxfer_last_reason());
    frees();
    pools();
    if (!have_gpu) {
        skip(1, "the GPU part: no CUDA device: %s", why);
        done_testing();
    }
    graph_end_null();
    done_testing();
}
