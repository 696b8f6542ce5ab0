/* SPDX-License-Identifier: MIT */
/* The transfer ring: 300 frames of varying size stream through rings of 2,
 * 3 and 4 slots (H2D -> kernel b*3+frame -> D2H), each frame's input filled
 * on the CPU after acquire and its output checked against a CPU reference
 * when the slot comes back around and after the drain; acquire never hands
 * out a slot whose previous transfers still run; then the overlap the ring
 * reaches is measured and reported (never asserted) against the ideal
 * max(copy, compute) schedule and the one-stream baseline (doc/PERF.md,
 * "The link and the raw calls"). */
#include "sched-helpers.h"
#include <algorithm>
#include <pthread.h>
#include <vector>

enum { FRAME_MAX = 1 << 20, OUT_OFF = FRAME_MAX, FRAMES_PER_RING = 100 };

__global__ void triple_plus(const unsigned char *in, unsigned char *out, size_t n,
                            unsigned add)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        out[i] = (unsigned char)(in[i] * 3u + add);
}

/* Enough integer arithmetic per word to take as long as we ask. */
__host__ __device__ static inline unsigned busy_word(unsigned x, int iters)
{
    for (int k = 0; k < iters; ++k) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 15;
    }
    return x;
}

__global__ void busy(const unsigned *in, unsigned *out, size_t words, int iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (; i < words; i += step)
        out[i] = busy_word(in[i], iters);
}

static unsigned blocks_for(size_t n, unsigned cap)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

static size_t frame_bytes(unsigned f)
{
    if (f % 10 == 0)
        return FRAME_MAX;
    return 1 + (size_t)((f * 2654435761u) % FRAME_MAX);
}

/* --- correctness: 300 frames --------------------------------------------- */

struct frame_arg {
    size_t n;
    unsigned frame;
};

static cudaError_t work_triple(const cuxfer_ring_slot *slot, void *arg)
{
    const frame_arg *fa = (const frame_arg *)arg;
    unsigned char *dev = (unsigned char *)slot->device;
    cudaError_t e = cudaMemsetAsync(dev + OUT_OFF, 0x5A, FRAME_MAX, slot->stream);
    if (e != cudaSuccess)
        return e;
    triple_plus<<<blocks_for(fa->n, 1024), 256, 0, slot->stream>>>(dev, dev + OUT_OFF, fa->n,
                                                                   fa->frame & 0xffu);
    return cudaGetLastError();
}

/* Check frame f's output in slot->host; 1 when byte-exact and nothing past
 * its end was written. */
static int check_frame(const cuxfer_ring_slot *slot, unsigned f, std::vector<unsigned char> &tmp)
{
    size_t n = frame_bytes(f), i;
    const unsigned char *out = (const unsigned char *)slot->host + OUT_OFF;
    tmp.resize(FRAME_MAX);
    fill_pattern(tmp.data(), n, 7000u + f);
    for (i = 0; i < n; ++i)
        tmp[i] = (unsigned char)(tmp[i] * 3u + (f & 0xffu));
    if (count_diff(out, tmp.data(), n, "frame output") != 0) {
        diag("  frame %u (%zu bytes, slot %d) is wrong", f, n, slot->index);
        return 0;
    }
    if (!all_bytes(out + n, FRAME_MAX - n, 0xA5)) {
        diag("  frame %u (%zu bytes, slot %d): bytes past its end were written", f, n,
             slot->index);
        return 0;
    }
    return 1;
}

static void stream_frames(int slots, unsigned *next_frame)
{
    cuxfer_ring ring;
    std::vector<long> slot_frame((size_t)slots, -1);
    std::vector<unsigned char> tmp;
    int acquire_errs = 0, submit_errs = 0, order_errs = 0, bad = 0, checked = 0, i;
    unsigned f0 = *next_frame;

    GPU_MUST(cuxfer_ring_create(&ring, slots, 2 * (size_t)FRAME_MAX, 2 * (size_t)FRAME_MAX, NULL));
    for (i = 0; i < FRAMES_PER_RING; ++i) {
        unsigned f = f0 + (unsigned)i;
        cuxfer_ring_slot *slot = NULL;
        cuxfer_ring_job job;
        frame_arg fa;
        cudaError_t err = cuxfer_ring_acquire(&ring, &slot);
        if (err != cudaSuccess || !slot) {
            if (acquire_errs++ < 3)
                diag("  frame %u: acquire: %s", f, cudaGetErrorName(err));
            if (!slot)
                break;
        }
        if (slot->index != i % slots)
            ++order_errs;
        if (slot_frame[(size_t)slot->index] >= 0) {
            bad += !check_frame(slot, (unsigned)slot_frame[(size_t)slot->index], tmp);
            ++checked;
        }
        fa.n = frame_bytes(f);
        fa.frame = f;
        fill_pattern(slot->host, fa.n, 7000u + f);
        memset((unsigned char *)slot->host + OUT_OFF, 0xA5, FRAME_MAX);
        memset(&job, 0, sizeof job);
        job.h2d_bytes = fa.n;
        job.work = work_triple;
        job.arg = &fa;
        job.d2h_bytes = fa.n;
        job.d2h_host_offset = OUT_OFF;
        job.d2h_device_offset = OUT_OFF;
        err = cuxfer_ring_submit(&ring, slot, &job);
        if (err != cudaSuccess && submit_errs++ < 3)
            diag("  frame %u: submit: %s %s", f, cudaGetErrorName(err), cuxfer_last_reason());
        slot_frame[(size_t)slot->index] = (long)f;
    }
    GPU_OK(cuxfer_ring_drain(&ring), "%d slots: drain", slots);
    for (i = 0; i < slots; ++i)
        if (slot_frame[(size_t)i] >= 0) {
            bad += !check_frame(&ring.slots[i], (unsigned)slot_frame[(size_t)i], tmp);
            ++checked;
        }
    is_int(0, acquire_errs, "%d slots: every acquire succeeded", slots);
    is_int(0, submit_errs, "%d slots: every submit succeeded", slots);
    is_int(0, order_errs, "%d slots: slots handed out in order", slots);
    is_int(FRAMES_PER_RING, checked, "%d slots: all %d frames checked (%d after the drain)",
           slots, FRAMES_PER_RING, slots);
    is_int(0, bad, "%d slots: frames %u..%u of 1 B..1 MiB byte-exact against the CPU", slots,
           f0, f0 + FRAMES_PER_RING - 1);
    GPU_OK(cuxfer_ring_destroy(&ring), "%d slots: destroy", slots);
    *next_frame = f0 + FRAMES_PER_RING;
}

static void test_refusals(void)
{
    cuxfer_ring ring;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_ring_job job;
    cudaError_t err;

    memset(&ring, 0, sizeof ring);
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy of a zeroed ring is safe");
    GPU_OK(cuxfer_ring_drain(&ring), "drain of a zeroed ring is a no-op");
    err = cuxfer_ring_create(&ring, 0, 16, 16, NULL);
    is_int(cudaErrorInvalidValue, err, "a ring of 0 slots refused");
    err = cuxfer_ring_acquire(&ring, &slot);
    is_int(cudaErrorInvalidValue, err, "acquire on a ring never created refused");

    GPU_MUST(cuxfer_ring_create(&ring, 2, 4096, 4096, NULL));
    GPU_OK(cuxfer_ring_acquire(&ring, &slot), "acquire");
    memset(&job, 0, sizeof job);
    job.h2d_bytes = 4097;
    cuxfer_clear_reason();
    err = cuxfer_ring_submit(&ring, slot, &job);
    is_int(cudaErrorInvalidValue, err, "h2d_bytes past the slot's buffers refused");
    contains(cuxfer_last_reason(), "exceeds", "with a reason");
    GPU_OK(cuxfer_ring_release(&ring, slot), "a refused submit leaves the slot held: release gives it back");
    GPU_OK(cuxfer_ring_acquire(&ring, &slot), "acquire the next slot");
    memset(&job, 0, sizeof job);
    job.d2h_bytes = 100;
    job.d2h_host_offset = 4000;
    err = cuxfer_ring_submit(&ring, slot, &job);
    is_int(cudaErrorInvalidValue, err, "d2h past the host buffer refused");
    GPU_OK(cuxfer_ring_release(&ring, slot), "... and that slot is still held too");
    GPU_OK(cuxfer_ring_acquire(&ring, &slot), "acquire again");
    GPU_OK(cuxfer_ring_release(&ring, slot), "release without submitting");
    err = cuxfer_ring_release(&ring, slot);
    is_int(cudaErrorInvalidValue, err, "releasing a slot not held refused");
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy");
}

/* --- acquire waits for the slot's previous work -------------------------- */

struct acquirer {
    cuxfer_ring *ring;
    cuxfer_ring_slot *slot;
    cudaError_t err;
    int done;
};

static void *acquire_thread(void *arg)
{
    acquirer *a = (acquirer *)arg;
    a->err = cuxfer_ring_acquire(a->ring, &a->slot);
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

struct held_arg {
    gate *g;
    frame_arg fa;
};

static cudaError_t work_held(const cuxfer_ring_slot *slot, void *arg)
{
    held_arg *h = (held_arg *)arg;
    cudaError_t e = gate_hold(h->g, slot->stream);
    if (e != cudaSuccess)
        return e;
    return work_triple(slot, &h->fa);
}

static void test_acquire_waits(void)
{
    cuxfer_ring ring;
    cuxfer_ring_slot *s0 = NULL, *s1 = NULL;
    cuxfer_ring_job job;
    held_arg ha;
    acquirer a;
    pthread_t th;
    gate g;
    std::vector<unsigned char> tmp;
    const unsigned f = 5000;

    GPU_MUST(cuxfer_ring_create(&ring, 2, 2 * (size_t)FRAME_MAX, 2 * (size_t)FRAME_MAX, NULL));
    GPU_OK(cuxfer_ring_acquire(&ring, &s0), "acquire slot 0");
    ha.g = &g;
    ha.fa.n = frame_bytes(f);
    ha.fa.frame = f;
    fill_pattern(s0->host, ha.fa.n, 7000u + f);
    memset((unsigned char *)s0->host + OUT_OFF, 0xA5, FRAME_MAX);
    memset(&job, 0, sizeof job);
    job.h2d_bytes = ha.fa.n;
    job.work = work_held;
    job.arg = &ha;
    job.d2h_bytes = ha.fa.n;
    job.d2h_host_offset = OUT_OFF;
    job.d2h_device_offset = OUT_OFF;
    GPU_OK(cuxfer_ring_submit(&ring, s0, &job), "submit slot 0 with its stream held mid-way");
    GPU_OK(cuxfer_ring_acquire(&ring, &s1), "acquire slot 1 (idle)");
    ok(s1 && s1 != s0, "slot 1 is another slot");
    GPU_OK(cuxfer_ring_release(&ring, s1), "release slot 1");

    memset(&a, 0, sizeof a);
    a.ring = &ring;
    a.err = cudaErrorUnknown;
    ok(start_blocked(&th, acquire_thread, &a, &a.done, 200),
       "acquire of slot 0 blocks while its submission is held (200 ms)");
    ok(all_bytes((unsigned char *)s0->host + OUT_OFF, FRAME_MAX, 0xA5),
       "slot 0's download has not happened yet");
    gate_open(&g);
    if (!ok(wait_flag(&a.done, 10000), "acquire returns once the submission completes (10 s)"))
        bail("cuxfer_ring_acquire never returned");
    pthread_join(th, NULL);
    is_int(cudaSuccess, a.err, "the acquire succeeded");
    ok(a.slot == s0, "and handed out slot 0");
    ok(a.slot && check_frame(a.slot, f, tmp), "with the finished result of its submission");
    is_int(0, g.timed_out, "the gate was opened by the test");
    if (a.slot)
        GPU_OK(cuxfer_ring_release(&ring, a.slot), "release");

    /* One slot held by this thread: another thread's acquire waits for it. */
    GPU_OK(cuxfer_ring_acquire(&ring, &s1), "acquire slot 1 and hold it");
    GPU_OK(cuxfer_ring_acquire(&ring, &s0), "acquire slot 0 and hold it");
    memset(&a, 0, sizeof a);
    a.ring = &ring;
    a.err = cudaErrorUnknown;
    ok(start_blocked(&th, acquire_thread, &a, &a.done, 100),
       "a second thread's acquire waits while the slot is held (100 ms)");
    GPU_OK(cuxfer_ring_release(&ring, s1), "release slot 1");
    if (!ok(wait_flag(&a.done, 10000), "the waiting acquire then returns (10 s)"))
        bail("cuxfer_ring_acquire never returned");
    pthread_join(th, NULL);
    ok(a.err == cudaSuccess && a.slot == s1, "it got slot 1");
    GPU_OK(cuxfer_ring_release(&ring, a.slot), "release");
    GPU_OK(cuxfer_ring_release(&ring, s0), "release slot 0");
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy");
}

/* --- overlap ------------------------------------------------------------- */

enum { CHUNKS = 8, CHUNK = 8 << 20, REPS = 7 };

struct busy_arg {
    int iters;
};

static cudaError_t work_busy(const cuxfer_ring_slot *slot, void *arg)
{
    const busy_arg *b = (const busy_arg *)arg;
    size_t words = CHUNK / sizeof(unsigned);
    busy<<<blocks_for(words, 1u << 16), 256, 0, slot->stream>>>(
        (const unsigned *)slot->device,
        (unsigned *)((unsigned char *)slot->device + CHUNK), words, b->iters);
    return cudaGetLastError();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Median event time of one operation queued by fn on s. */
template <class F> static double time_on(cudaStream_t s, F fn, int reps)
{
    cudaEvent_t a, b;
    std::vector<double> t;
    float ms = 0;
    GPU_MUST(cudaEventCreate(&a));
    GPU_MUST(cudaEventCreate(&b));
    fn(); /* warm-up */
    GPU_MUST(cudaStreamSynchronize(s));
    for (int r = 0; r < reps; ++r) {
        GPU_MUST(cudaEventRecord(a, s));
        fn();
        GPU_MUST(cudaEventRecord(b, s));
        GPU_MUST(cudaEventSynchronize(b));
        GPU_MUST(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    GPU_MUST(cudaEventDestroy(a));
    GPU_MUST(cudaEventDestroy(b));
    return median(t);
}

/* Sampled check of busy() output against the CPU. */
static int check_busy(const unsigned *in, const unsigned *out, int iters)
{
    size_t words = CHUNK / sizeof(unsigned), i;
    for (i = 0; i < words; i += 997)
        if (out[i] != busy_word(in[i], iters)) {
            diag("  word %zu: got 0x%08x, want 0x%08x", i, out[i], busy_word(in[i], iters));
            return 0;
        }
    return out[words - 1] == busy_word(in[words - 1], iters);
}

/* Wall time of CHUNKS chunks through a ring of `slots`, median of REPS. */
static double time_ring(int slots, int iters, int *correct)
{
    cuxfer_ring ring;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_ring_job job;
    busy_arg ba;
    std::vector<double> t;
    cudaError_t err = cudaSuccess;
    int i, r;

    ba.iters = iters;
    memset(&job, 0, sizeof job);
    job.h2d_bytes = CHUNK;
    job.work = work_busy;
    job.arg = &ba;
    job.d2h_bytes = CHUNK;
    job.d2h_host_offset = CHUNK;
    job.d2h_device_offset = CHUNK;
    GPU_MUST(cuxfer_ring_create(&ring, slots, 2 * (size_t)CHUNK, 2 * (size_t)CHUNK, NULL));
    for (i = 0; i < slots; ++i)
        fill_pattern(ring.slots[i].host, CHUNK, 900u + (unsigned)i);
    for (r = -1; r < REPS && err == cudaSuccess; ++r) { /* r == -1: warm-up */
        double t0;
        for (i = 0; i < slots; ++i) { /* poison outputs, outside the timing */
            GPU_MUST(cuxfer_ring_acquire(&ring, &slot));
            memset((unsigned char *)slot->host + CHUNK, 0xA5, CHUNK);
            GPU_MUST(cuxfer_ring_release(&ring, slot));
        }
        t0 = now_ms();
        for (i = 0; i < CHUNKS && err == cudaSuccess; ++i) {
            err = cuxfer_ring_acquire(&ring, &slot);
            if (err == cudaSuccess)
                err = cuxfer_ring_submit(&ring, slot, &job);
        }
        if (err == cudaSuccess)
            err = cuxfer_ring_drain(&ring);
        if (r >= 0)
            t.push_back(now_ms() - t0);
    }
    is_int(cudaSuccess, err, "ring of %d: the timed runs succeeded", slots);
    *correct = err == cudaSuccess;
    for (i = 0; i < slots && *correct; ++i)
        *correct = check_busy((const unsigned *)ring.slots[i].host,
                              (const unsigned *)((unsigned char *)ring.slots[i].host + CHUNK),
                              iters);
    GPU_MUST(cuxfer_ring_destroy(&ring));
    return t.empty() ? 0.0 : median(t);
}

static void test_overlap(void)
{
    cudaStream_t s;
    unsigned char *h = NULL, *d = NULL;
    size_t words = CHUNK / sizeof(unsigned);
    unsigned blocks = blocks_for(words, 1u << 16);
    int iters = 64, correct = 0, i, r;
    double t_h2d, t_d2h, t_k, t_copy, ideal, one, ring2, ring3, t64;
    std::vector<double> t;

    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cudaMallocHost((void **)&h, 2 * (size_t)CHUNK));
    GPU_MUST(cudaMalloc((void **)&d, 2 * (size_t)CHUNK));
    fill_pattern(h, CHUNK, 900);

    t_h2d = time_on(s, [&] { GPU_MUST(cudaMemcpyAsync(d, h, CHUNK, cudaMemcpyHostToDevice, s)); }, 9);
    t_d2h = time_on(s, [&] {
        GPU_MUST(cudaMemcpyAsync(h + CHUNK, d + CHUNK, CHUNK, cudaMemcpyDeviceToHost, s));
    }, 9);
    t_copy = t_h2d + t_d2h;
    /* Calibrate the kernel to about twice the copy time, as in doc/PERF.md
     * (copy 0.31 ms + kernel 0.63 ms per chunk): scale the iteration count
     * twice, since a short kernel's time is not proportional to it. */
    t64 = time_on(s, [&] {
        busy<<<blocks, 256, 0, s>>>((const unsigned *)d, (unsigned *)(d + CHUNK), words, 64);
        GPU_MUST(cudaGetLastError());
    }, 5);
    t_k = t64;
    for (i = 0; i < 2; ++i) {
        if (t_k > 0)
            iters = (int)((double)iters * 2.0 * t_copy / t_k + 0.5);
        iters = iters < 1 ? 1 : iters > 200000 ? 200000 : iters;
        t_k = time_on(s, [&] {
            busy<<<blocks, 256, 0, s>>>((const unsigned *)d, (unsigned *)(d + CHUNK), words, iters);
            GPU_MUST(cudaGetLastError());
        }, 9);
    }
    diag("chunk %d MiB: H2D %.3f ms, D2H %.3f ms (copy %.3f ms), kernel %.3f ms (%d iterations)",
         CHUNK >> 20, t_h2d, t_d2h, t_copy, t_k, iters);

    /* One stream: H2D, kernel, D2H for each chunk, in order. */
    for (r = -1; r < REPS; ++r) {
        double t0;
        memset(h + CHUNK, 0xA5, CHUNK);
        t0 = now_ms();
        for (i = 0; i < CHUNKS; ++i) {
            GPU_MUST(cudaMemcpyAsync(d, h, CHUNK, cudaMemcpyHostToDevice, s));
            busy<<<blocks, 256, 0, s>>>((const unsigned *)d, (unsigned *)(d + CHUNK), words, iters);
            GPU_MUST(cudaGetLastError());
            GPU_MUST(cudaMemcpyAsync(h + CHUNK, d + CHUNK, CHUNK, cudaMemcpyDeviceToHost, s));
        }
        GPU_MUST(cudaStreamSynchronize(s));
        if (r >= 0)
            t.push_back(now_ms() - t0);
    }
    one = median(t);
    ok(check_busy((const unsigned *)h, (const unsigned *)(h + CHUNK), iters),
       "one-stream baseline: output matches the CPU (sampled)");

    ring2 = time_ring(2, iters, &correct);
    ok(correct, "ring of 2: output of every slot matches the CPU (sampled)");
    ring3 = time_ring(3, iters, &correct);
    ok(correct, "ring of 3: output of every slot matches the CPU (sampled)");

    /* Three stages on three engines (H2D copy engine, SMs, D2H copy
     * engine): the first chunk fills the pipe, then the slowest stage sets
     * the pace. */
    ideal = t_h2d + t_k + t_d2h + (CHUNKS - 1) * std::max(t_k, std::max(t_h2d, t_d2h));
    diag("ring overlap: %.3f ms vs ideal %.3f ms (ratio %.3f), one stream %.3f ms", ring2, ideal,
         ring2 > 0 ? ideal / ring2 : 0.0, one);
    diag("ring of 3 slots: %.3f ms (ratio %.3f); one stream / ring of 2: %.2fx; target >= 0.97",
         ring3, ring3 > 0 ? ideal / ring3 : 0.0, ring2 > 0 ? one / ring2 : 0.0);

    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaFree(d));
    GPU_MUST(cudaFreeHost(h));
}

int main(void)
{
    unsigned next_frame = 0;
    gpu_require(1);
    guard_install(120);
    plan(0);
    test_refusals();
    stream_frames(2, &next_frame);
    stream_frames(3, &next_frame);
    stream_frames(4, &next_frame);
    test_acquire_waits();
    test_overlap();
    done_testing();
}
