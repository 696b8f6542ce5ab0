/* SPDX-License-Identifier: MIT */
/* Graph capture: a captured H2D + kernel + D2H pipeline replays 1000 times
 * with the host input changed between replays, every output checked byte
 * for byte; per-iteration replay time is compared with the plain stream
 * version and reported (never asserted).  cuxfer_graph_begin refuses
 * stream 0 and a stream already capturing; destroy is safe on a zeroed
 * graph. */
#include "sched-helpers.h"

enum { BYTES = 256 << 10, REPLAYS = 1000 };

__global__ void scale(const unsigned char *in, unsigned char *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        out[i] = (unsigned char)(in[i] * 3u + 7u);
}

static const unsigned BLOCKS = (BYTES + 255) / 256;

struct bufs {
    cudaStream_t s;
    unsigned char *in, *out, *d_in, *d_out;
};

static cudaError_t enqueue(const bufs &b)
{
    cudaError_t e = cudaMemcpyAsync(b.d_in, b.in, BYTES, cudaMemcpyHostToDevice, b.s);
    if (e != cudaSuccess)
        return e;
    scale<<<BLOCKS, 256, 0, b.s>>>(b.d_in, b.d_out, BYTES);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    return cudaMemcpyAsync(b.out, b.d_out, BYTES, cudaMemcpyDeviceToHost, b.s);
}

static int output_ok(const bufs &b, unsigned char *want)
{
    size_t i;
    for (i = 0; i < BYTES; ++i)
        want[i] = (unsigned char)(b.in[i] * 3u + 7u);
    return memcmp(b.out, want, BYTES) == 0;
}

static void test_refusals(cudaStream_t s)
{
    cuxfer_graph g;
    cudaError_t err;

    DESTROY_IS_SAFE(g, cuxfer_graph_destroy, "graph");
    err = cuxfer_graph_launch(&g, s);
    is_int(cudaErrorInvalidValue, err, "launch of a zeroed graph refused");

    cuxfer_clear_reason();
    err = cuxfer_graph_begin(0);
    is_int(cudaErrorInvalidValue, err, "capture of stream 0 refused");
    contains(cuxfer_last_reason(), "stream 0", "with a reason");
    ok(!cuxfer_stream_is_capturing(0), "and stream 0 is not capturing");

    GPU_OK(cuxfer_graph_begin(s), "begin capture");
    ok(cuxfer_stream_is_capturing(s), "the stream is capturing");
    cuxfer_clear_reason();
    err = cuxfer_graph_begin(s);
    is_int(cudaErrorIllegalState, err, "begin on a stream already capturing refused");
    contains(cuxfer_last_reason(), "already capturing", "with a reason");
    ok(cuxfer_stream_is_capturing(s), "the first capture goes on");
    scale<<<1, 32, 0, s>>>(NULL, NULL, 0);
    GPU_OK(cudaGetLastError(), "a kernel captured");
    GPU_OK(cuxfer_graph_end(&g, s), "end and instantiate");
    ok(g.graph != NULL && g.exec != NULL, "the graph is instantiated");
    ok(!cuxfer_stream_is_capturing(s), "the stream no longer captures");
    GPU_OK(cuxfer_graph_launch(&g, s), "launch it");
    GPU_OK(cudaStreamSynchronize(s), "sync");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy");
    ok(g.graph == NULL && g.exec == NULL, "destroy zeroes the graph");
}

/* Wall-clock microseconds per iteration of fn, REPLAYS iterations, after a
 * warm-up; sync_each: synchronize after every iteration. */
template <class F> static double us_per_iter(cudaStream_t s, F fn, int sync_each)
{
    double t0;
    int i;
    for (i = 0; i < 20; ++i)
        GPU_MUST(fn());
    GPU_MUST(cudaStreamSynchronize(s));
    t0 = now_ms();
    for (i = 0; i < REPLAYS; ++i) {
        GPU_MUST(fn());
        if (sync_each)
            GPU_MUST(cudaStreamSynchronize(s));
    }
    GPU_MUST(cudaStreamSynchronize(s));
    return (now_ms() - t0) * 1000.0 / REPLAYS;
}

static void test_replay(bufs &b)
{
    cuxfer_graph g;
    unsigned char *want = (unsigned char *)malloc(BYTES);
    int r, bad = 0, errs = 0;
    double g_sync, p_sync, g_b2b, p_b2b;

    if (!want)
        bail("out of memory");
    fill_pattern(b.in, BYTES, 1);
    memset(b.out, 0xA5, BYTES);
    GPU_OK(cuxfer_graph_begin(b.s), "begin capture of H2D + kernel + D2H");
    GPU_OK(enqueue(b), "capture the pipeline");
    GPU_OK(cuxfer_graph_end(&g, b.s), "end and instantiate");
    GPU_OK(cudaStreamSynchronize(b.s), "sync");
    ok(all_bytes(b.out, BYTES, 0xA5), "capturing ran nothing");

    for (r = 0; r < REPLAYS; ++r) {
        cudaError_t err;
        fill_pattern(b.in, BYTES, 100u + (unsigned)r);
        memset(b.out, 0xA5, BYTES);
        err = cuxfer_graph_launch(&g, b.s);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(b.s);
        if (err != cudaSuccess) {
            if (errs++ < 3)
                diag("  replay %d: %s", r, cudaGetErrorName(err));
            continue;
        }
        if (!output_ok(b, want) && bad++ < 3)
            diag("  replay %d: output differs", r);
    }
    is_int(0, errs, "%d replays launched and completed", REPLAYS);
    is_int(0, bad, "%d replays with new input each time: every output byte-exact", REPLAYS);

    /* Batched: input fixed, many replays queued, one sync. */
    fill_pattern(b.in, BYTES, 4242);
    memset(b.out, 0xA5, BYTES);
    errs = 0;
    for (r = 0; r < 100; ++r)
        if (cuxfer_graph_launch(&g, b.s) != cudaSuccess)
            ++errs;
    GPU_OK(cudaStreamSynchronize(b.s), "100 replays queued back to back complete");
    is_int(0, errs, "all 100 queued");
    ok(output_ok(b, want), "and the output is byte-exact");

    g_sync = us_per_iter(b.s, [&] { return cuxfer_graph_launch(&g, b.s); }, 1);
    p_sync = us_per_iter(b.s, [&] { return enqueue(b); }, 1);
    g_b2b = us_per_iter(b.s, [&] { return cuxfer_graph_launch(&g, b.s); }, 0);
    p_b2b = us_per_iter(b.s, [&] { return enqueue(b); }, 0);
    diag("per iteration (256 KiB H2D + kernel + D2H): graph replay %.2f us, plain stream %.2f us "
         "with a sync each; back to back: graph %.2f us, plain %.2f us",
         g_sync, p_sync, g_b2b, p_b2b);
    memset(b.out, 0xA5, BYTES);
    GPU_OK(cuxfer_graph_launch(&g, b.s), "one more replay");
    GPU_OK(cudaStreamSynchronize(b.s), "sync");
    ok(output_ok(b, want), "output still byte-exact after the timing runs");
    GPU_OK(cuxfer_graph_destroy(&g), "destroy");
    free(want);
}

int main(void)
{
    bufs b;
    gpu_require(1);
    guard_install(60);
    plan(0);
    GPU_MUST(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    GPU_MUST(cudaMallocHost((void **)&b.in, BYTES));
    GPU_MUST(cudaMallocHost((void **)&b.out, BYTES));
    GPU_MUST(cudaMalloc((void **)&b.d_in, BYTES));
    GPU_MUST(cudaMalloc((void **)&b.d_out, BYTES));
    test_refusals(b.s);
    test_replay(b);
    GPU_MUST(cudaStreamDestroy(b.s));
    GPU_MUST(cudaFree(b.d_in));
    GPU_MUST(cudaFree(b.d_out));
    GPU_MUST(cudaFreeHost(b.in));
    GPU_MUST(cudaFreeHost(b.out));
    done_testing();
}
