/* SPDX-License-Identifier: MIT */
/* The smallest GPU round trip: pinned -> device -> pinned through the
 * kit's error checking, poisoned output, byte comparison.  Also the
 * subject of gpu-gate.sh. */
#include "gpu.h"

int main(void)
{
    enum { N = 1 << 20 };
    unsigned char *h_src = NULL, *h_dst = NULL, *d = NULL;
    cudaStream_t s;
    gpu_require(1);
    plan(4);
    copy_bufs_alloc(&h_src, &h_dst, &d, N);
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    fill_pattern(h_src, N, 1);
    memset(h_dst, 0xA5, N);
    GPU_OK(cudaMemcpyAsync(d, h_src, N, cudaMemcpyHostToDevice, s), "H2D queued");
    GPU_OK(cudaMemcpyAsync(h_dst, d, N, cudaMemcpyDeviceToHost, s), "D2H queued");
    GPU_OK(cudaStreamSynchronize(s), "stream completes");
    ok(memcmp(h_src, h_dst, N) == 0, "1 MiB round trip is byte-exact");
    cudaStreamDestroy(s);
    copy_bufs_free(h_src, h_dst, d);
    done_testing();
}
