/* SPDX-License-Identifier: MIT */
/* A translation unit built with per-thread default streams
 * (-DCUDA_API_PER_THREAD_DEFAULT_STREAM, what nvcc --default-stream
 * per-thread passes): here stream 0 is the thread's capturable per-thread
 * stream, so cuxfer_graph_begin(0) accepts it; the captured upload and
 * download replay 3 times byte-exact, the stream works for an ordinary
 * copy afterwards, cuxfer_stream_wait orders 0 against another stream, and
 * cudaStreamLegacy is still refused. */
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "build this test with -DCUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif
#include "sched-helpers.h"

enum { BYTES = 2 << 20, REPLAYS = 3 };

int main(void)
{
    unsigned char *in = NULL, *out = NULL, *dev = NULL, *want;
    cudaStream_t other;
    cuxfer_graph g;
    cudaError_t err;
    gate gt;
    int r;

    gpu_require(1);
    guard_install(60);
    plan(0);
    copy_bufs_alloc(&in, &out, &dev, BYTES);
    GPU_MUST(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    want = (unsigned char *)malloc(BYTES);
    if (!want)
        bail("out of memory");

    GPU_OK(cuxfer_graph_begin(0), "cuxfer_graph_begin(0): 0 is the per-thread stream here");
    ok(cuxfer_stream_is_capturing(0), "stream 0 is capturing");
    ok(cuxfer_stream_is_capturing(cudaStreamPerThread), "it is cudaStreamPerThread");
    GPU_OK(cudaMemcpyAsync(dev, in, BYTES, cudaMemcpyHostToDevice, 0), "captured upload");
    GPU_OK(cudaMemcpyAsync(out, dev, BYTES, cudaMemcpyDeviceToHost, 0), "captured download");
    GPU_OK(cuxfer_graph_end(&g, 0), "end the capture");
    for (r = 0; r < REPLAYS; ++r) {
        fill_pattern(in, BYTES, 40u + (unsigned)r);
        memset(out, 0xA5, BYTES);
        GPU_OK(cuxfer_graph_launch(&g, 0), "replay %d", r + 1);
        GPU_OK(cudaStreamSynchronize(0), "replay %d: sync", r + 1);
        ok(count_diff(out, in, BYTES, "replay") == 0, "replay %d: byte-exact", r + 1);
    }
    GPU_OK(cuxfer_graph_destroy(&g), "destroy");

    /* Ordinary use afterwards, ordered behind another stream. */
    fill_pattern(in, BYTES, 77u);
    memcpy(want, in, BYTES);
    memset(out, 0xA5, BYTES);
    GPU_OK(gate_hold(&gt, other), "hold the other stream");
    GPU_OK(cudaMemcpyAsync(dev, in, BYTES, cudaMemcpyHostToDevice, other), "upload on it");
    GPU_OK(cuxfer_stream_wait(0, other), "stream 0 waits for it");
    GPU_OK(cudaMemcpyAsync(out, dev, BYTES, cudaMemcpyDeviceToHost, 0), "download on stream 0");
    sleep_ms(100);
    ok(all_bytes(out, BYTES, 0xA5), "nothing downloaded while the upload is held");
    gate_open(&gt);
    GPU_OK(cudaStreamSynchronize(0), "sync");
    ok(count_diff(out, want, BYTES, "ordered") == 0, "the download saw the upload, byte-exact");
    is_int(0, gt.timed_out, "the gate was opened by the test");

    cuxfer_clear_reason();
    err = cuxfer_graph_begin(cudaStreamLegacy);
    is_int(cudaErrorInvalidValue, err, "cudaStreamLegacy is still refused");
    contains(cuxfer_last_reason(), "legacy", "with a reason");
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");

    GPU_MUST(cudaStreamSynchronize(other));
    GPU_MUST(cudaStreamDestroy(other));
    copy_bufs_free(in, out, dev);
    free(want);
    done_testing();
}
