/* SPDX-License-Identifier: MIT */
/*
 * simple-multi-copy - a pipeline of frames through a ring of transfer
 * slots (the pattern of NVIDIA's simpleMultiCopy sample): frame i+1
 * uploads while frame i is processed and frame i-1 comes back.  One ring
 * of 4 slots runs 32 frames serially (depth 1) and then overlapped
 * (depth 4), timed: each slot's input is filled once beforehand, as in
 * the sample, so the time is the GPU pipeline's and not the CPU filling
 * 16 MiB per frame; each slot's last frame is checked after the drain.
 * A second overlapped pass fills every frame's input and checks every
 * frame's result when its slot comes around again.  Exit 0 when every
 * frame is right, 1 when not, 77 when there is no CUDA device.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cuxfer.h>

enum { SLOTS = 4, FRAMES = 32, N = 1 << 22 }; /* 16 MiB of int per frame */

__global__ void add_frame(const int *in, int *out, int frame, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 3 + frame;
}

static cudaError_t process(const cuxfer_ring_slot *slot, void *arg)
{
    const int *in = (const int *)slot->device;
    add_frame<<<(N + 511) / 512, 512, 0, slot->stream>>>(in, (int *)slot->device + N,
                                                          *(const int *)arg, N);
    return cudaGetLastError();
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Frame f's output sits in its slot's host buffer after the input; the
 * input was i ^ seed. */
static int wrong(const cuxfer_ring_slot *slot, int f, int seed)
{
    const int *out = (const int *)slot->host + N;
    int i, bad = 0;
    for (i = 0; i < N; ++i)
        bad += out[i] != (i ^ seed) * 3 + f;
    return bad != 0;
}

static void fill(const cuxfer_ring_slot *slot, int seed)
{
    int *in = (int *)slot->host, i;
    for (i = 0; i < N; ++i)
        in[i] = i ^ seed;
}

/* FRAMES frames through the ring.  prefilled: slot k's input is i ^ k,
 * filled before the clock starts, and only each slot's last frame is
 * checked (after the drain); otherwise frame f's input is i ^ f, filled
 * when its slot is acquired, and every frame is checked. */
static int stream_frames(cuxfer_ring *ring, int prefilled, double *wall, float *cycle)
{
    int frame_of[SLOTS], frame, f, i, bad = 0;
    cuxfer_ring_job job;
    cuxfer_ring_slot *slot;
    double t0;
    memset(&job, 0, sizeof job);
    job.h2d_bytes = N * sizeof(int);
    job.work = process;
    job.arg = &frame;
    job.d2h_bytes = N * sizeof(int);
    job.d2h_host_offset = N * sizeof(int);
    job.d2h_device_offset = N * sizeof(int);
    for (i = 0; i < SLOTS; ++i) {
        frame_of[i] = -1;
        if (prefilled)
            fill(&ring->slots[i], i);
    }
    t0 = now_ms();
    for (f = 0; f < FRAMES; ++f) {
        CUXFER_CHECK(cuxfer_ring_acquire(ring, &slot));
        if (!prefilled) {
            if (frame_of[slot->index] >= 0)
                bad += wrong(slot, frame_of[slot->index], frame_of[slot->index]);
            fill(slot, f);
        }
        frame = f;      /* read by process() during the submit */
        CUXFER_CHECK(cuxfer_ring_submit(ring, slot, &job));
        frame_of[slot->index] = f;
    }
    CUXFER_CHECK(cuxfer_ring_drain(ring));
    *wall = now_ms() - t0;
    for (i = 0; i < SLOTS; ++i)
        if (frame_of[i] >= 0)
            bad += wrong(&ring->slots[i], frame_of[i], prefilled ? i : frame_of[i]);
    if (cycle)
        CUXFER_CHECK(cuxfer_ring_slot_ms(&ring->slots[0], CUXFER_WAIT, cycle));
    return bad;
}

int main(void)
{
    cuxfer_ring ring;
    cuxfer_ring_options opt;
    double serial, overlapped, checked;
    float c1, c4;
    int ndev, bad;

    if (cuxfer_device_count(&ndev) != cudaSuccess) {
        fprintf(stderr, "simple-multi-copy: skipped: no CUDA device: %s\n", cuxfer_last_reason());
        return 77;
    }
    memset(&opt, 0, sizeof opt);
    opt.timing = 1;
    /* Host: input then output; device: the same. */
    CUXFER_CHECK(cuxfer_ring_create(&ring, SLOTS, 2 * N * sizeof(int), 2 * N * sizeof(int), &opt));
    CUXFER_CHECK(cuxfer_ring_set_depth(&ring, 1));
    bad = stream_frames(&ring, 1, &serial, &c1);
    CUXFER_CHECK(cuxfer_ring_set_depth(&ring, SLOTS));
    bad += stream_frames(&ring, 1, &overlapped, &c4);
    bad += stream_frames(&ring, 0, &checked, NULL);
    printf("simple-multi-copy: %d frames of %zu MiB up, through a kernel and back: "
           "1 slot %.2f ms, %d slots %.2f ms (slot 0's last cycle %.3f / %.3f ms on the "
           "GPU); a pass filling and checking every frame on the CPU %.2f ms; %s\n",
           FRAMES, N * sizeof(int) >> 20, serial, cuxfer_ring_slots(&ring), overlapped,
           (double)c1, (double)c4, checked, bad ? "WRONG" : "every frame verified");
    CUXFER_CHECK(cuxfer_ring_destroy(&ring));
    return bad ? 1 : 0;
}
