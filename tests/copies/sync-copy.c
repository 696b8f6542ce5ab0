/* SPDX-License-Identifier: MIT */
/* The calls that make programs shorter than plain CUDA, on a real GPU,
 * outputs poisoned and compared byte for byte:
 *  - cuxfer_copy and cuxfer_copy2d: H2D, D2H, D2D exact; ordered like
 *    cudaMemcpy (after a blocking stream's delayed work); pageable copies
 *    up to CUXFER_COPY_SMALL never warn, one byte more warns once, and no
 *    default-stream warning ever; overlap refused with a reason, and a
 *    copy that would break a blocking stream's capture;
 *  - cuxfer_latch_init_on: a latch on a named device, the current device
 *    untouched, a wrong device refused;
 *  - cuxfer_ring_slot_buffers: the buffers the acquire hands out, NULL on
 *    a refusal;
 *  - cuxfer_ring_wait / cuxfer_stream_wait_ring: the ring's streams read
 *    data only after s wrote it behind a delay, and s reads what they
 *    wrote. */
#include <stdio.h>
#include <string.h>

#include "log-capture.h"
#include "sched-helpers.h"

extern int setenv(const char *, const char *, int);

enum { N = 1 << 20, W = 100, H = 64, PH = 128, PD = 112, SLOTS = 3 };

static void CUDART_CB delay_fn(void *arg)
{
    (void)arg;
    sleep_ms(30.0); /* no CUDA call: holds the stream back */
}

static void copies(void)
{
    unsigned char *pin, *back, *dev, *dev2, *pg;
    unsigned char ref[W * H];
    cuxfer_view hv, dv, bv;
    cudaStream_t blocking;
    int value = 26, flag = 0, y, rows_ok = 1, gaps_ok = 1;
    size_t i;
    GPU_MUST(cuxfer_host_alloc((void **)&pin, N, 1, 0));
    GPU_MUST(cuxfer_host_alloc((void **)&back, N, 1, 0));
    GPU_MUST(cudaMalloc((void **)&dev, N));
    GPU_MUST(cudaMalloc((void **)&dev2, N));
    GPU_MUST(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault));
    pg = (unsigned char *)malloc(N);
    if (!pg)
        bail("out of host memory");

    fill_pattern(pin, N, 1);
    GPU_MUST(cudaMemset(dev, 0xa5, N));
    memset(back, 0x5a, N);
    GPU_OK(cuxfer_copy(dev, pin, N), "cuxfer_copy H2D, pinned");
    GPU_OK(cuxfer_copy(dev2, dev, N), "cuxfer_copy D2D");
    GPU_OK(cuxfer_copy(back, dev2, N), "cuxfer_copy D2H, pinned");
    ok(memcmp(back, pin, N) == 0, "H2D, D2D, D2H: byte-exact, no synchronize needed");

    /* Ordered like cudaMemcpy: after a blocking stream's queued work. */
    fill_pattern(pin, N, 2);
    GPU_MUST(cudaLaunchHostFunc(blocking, delay_fn, NULL));
    GPU_MUST(cudaMemcpyAsync(dev, pin, N, cudaMemcpyHostToDevice, blocking));
    memset(back, 0x5a, N);
    GPU_OK(cuxfer_copy(back, dev, N), "cuxfer_copy after a blocking stream's delayed upload");
    ok(memcmp(back, pin, N) == 0, "it saw the upload (ordered like cudaMemcpy)");
    GPU_MUST(cudaStreamSynchronize(blocking));

    /* Small pageable copies: no warning; one byte over the bound: one. */
    log_lines = 0;
    GPU_OK(cuxfer_copy(dev, &value, sizeof value), "cuxfer_copy of a 4-byte stack constant");
    GPU_OK(cuxfer_copy(&flag, dev, sizeof flag), "cuxfer_copy back into a stack int");
    is_int(26, flag, "the constant came back");
    fill_pattern(pg, CUXFER_COPY_SMALL, 3);
    GPU_OK(cuxfer_copy(dev, pg, CUXFER_COPY_SMALL), "CUXFER_COPY_SMALL pageable bytes up");
    memset(back, 0x5a, N);
    GPU_OK(cuxfer_copy(back, dev, CUXFER_COPY_SMALL), "and back");
    ok(memcmp(back, pg, CUXFER_COPY_SMALL) == 0, "byte-exact");
    is_int(0, log_lines, "no warning for pageable copies up to CUXFER_COPY_SMALL (%s)",
           logbuf);
    fill_pattern(pg, CUXFER_COPY_SMALL + 1, 4);
    GPU_OK(cuxfer_copy(dev, pg, CUXFER_COPY_SMALL + 1), "one byte more, pageable");
    is_int(1, log_lines, "warns once, under CUXFER_PAGEABLE=warn");
    ok(strstr(logbuf, "cuxfer_copy") && strstr(logbuf, "pageable"),
       "the warning names the call and pageable memory: %s", logbuf);
    ok(!strstr(logbuf, "default stream"), "never the default-stream warning");
    memset(back, 0x5a, N);
    GPU_OK(cuxfer_copy(back, dev, CUXFER_COPY_SMALL + 1), "and back");
    ok(memcmp(back, pg, CUXFER_COPY_SMALL + 1) == 0, "byte-exact");

    /* Refusals before any CUDA call, with a reason. */
    cuxfer_clear_reason();
    is_int(cudaErrorInvalidValue, cuxfer_copy(dev + 10, dev, 100), "overlapping ranges refused");
    ok(strstr(cuxfer_last_reason(), "overlap") != NULL, "reason: %s", cuxfer_last_reason());
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");

    /* While a blocking stream is captured, a copy on the legacy stream
     * would invalidate the capture: refused first, the capture goes on. */
    {
        enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
        cudaGraph_t g = NULL;
        GPU_MUST(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeThreadLocal));
        cuxfer_clear_reason();
        is_int(cudaErrorStreamCaptureImplicit, cuxfer_copy(back, dev, 64),
               "cuxfer_copy while a blocking stream is captured: refused");
        ok(cuxfer_last_reason()[0] != '\0', "reason: %s", cuxfer_last_reason());
        GPU_MUST(cudaStreamIsCapturing(blocking, &st));
        is_int(cudaStreamCaptureStatusActive, st, "the capture is still active");
        GPU_OK(cudaStreamEndCapture(blocking, &g), "and ends cleanly");
        if (g)
            GPU_MUST(cudaGraphDestroy(g));
        is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
    }

    /* 2D: a W x H region, host pitch PH, device pitch PD, and back. */
    for (i = 0; i < sizeof ref; ++i)
        ref[i] = (unsigned char)(i * 7 + 3);
    memset(pin, 0x11, N);
    for (y = 0; y < H; ++y)
        memcpy(pin + (size_t)y * PH, ref + (size_t)y * W, W);
    GPU_MUST(cudaMemset(dev, 0xa5, N));
    memset(back, 0x5a, N);
    GPU_MUST(cuxfer_view_wrap(&hv, pin, PH, W, H, 1));
    GPU_MUST(cuxfer_view_wrap(&dv, dev, PD, W, H, 1));
    GPU_MUST(cuxfer_view_wrap(&bv, back, PH, W, H, 1));
    GPU_OK(cuxfer_copy2d(&dv, &hv), "cuxfer_copy2d H2D, pitches %d and %d", PH, PD);
    GPU_OK(cuxfer_copy2d(&bv, &dv), "cuxfer_copy2d D2H");
    for (y = 0; y < H; ++y) {
        rows_ok &= memcmp(back + (size_t)y * PH, ref + (size_t)y * W, W) == 0;
        for (i = W; i < PH; ++i)
            gaps_ok &= back[(size_t)y * PH + i] == 0x5a;
    }
    ok(rows_ok, "2D rows byte-exact");
    ok(gaps_ok, "the gaps between rows untouched (still poison)");
    {
        cuxfer_view a, b;
        GPU_MUST(cuxfer_view_wrap(&a, dev, PD, W, H, 1));
        GPU_MUST(cuxfer_view_wrap(&b, dev + PD, PD, W, H, 1));
        cuxfer_clear_reason();
        is_int(cudaErrorInvalidValue, cuxfer_copy2d(&a, &b), "overlapping views refused");
        ok(cuxfer_last_reason()[0] != '\0', "reason: %s", cuxfer_last_reason());
    }
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");

    free(pg);
    GPU_MUST(cudaStreamDestroy(blocking));
    GPU_MUST(cudaFree(dev));
    GPU_MUST(cudaFree(dev2));
    GPU_MUST(cuxfer_host_free(pin));
    GPU_MUST(cuxfer_host_free(back));
}

static void latch_on(int ndev)
{
    cuxfer_latch l;
    cudaStream_t s;
    int cur = -1, dev = ndev > 1 ? 1 : 0;
    GPU_MUST(cudaSetDevice(0));
    GPU_OK(cuxfer_latch_init_on(&l, dev), "cuxfer_latch_init_on device %d", dev);
    GPU_MUST(cudaGetDevice(&cur));
    is_int(0, cur, "the current device is left as it was");
    is_int(dev, l.device, "the latch lives on device %d", dev);
    GPU_MUST(cudaSetDevice(dev));
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaLaunchHostFunc(s, delay_fn, NULL));
    GPU_OK(cuxfer_latch_arm(&l, s), "armed on a stream of device %d from device 0", dev);
    GPU_OK(cuxfer_latch_wait(&l, 10000), "and the wait returns");
    GPU_OK(cuxfer_latch_destroy(&l), "destroyed");
    GPU_MUST(cudaStreamDestroy(s));
    cuxfer_clear_reason();
    is_int(cudaErrorInvalidDevice, cuxfer_latch_init_on(&l, ndev),
           "device %d (not a device) refused", ndev);
    ok(strstr(cuxfer_last_reason(), "device") != NULL, "reason: %s", cuxfer_last_reason());
    GPU_MUST(cudaGetDevice(&cur));
    is_int(0, cur, "the current device is left as it was");
    (void)cudaGetLastError();
    is_int(cudaSuccess, cuxfer_latch_destroy(&l), "the refused latch destroys as a zeroed one");
}

static void ring(void)
{
    cuxfer_ring r;
    cuxfer_ring_slot *slot;
    cudaStream_t s, rs;
    unsigned char *src, *dev, *want;
    void *host = NULL, *devbuf = NULL;
    int i, same = 1, exact = 1;
    GPU_MUST(cuxfer_ring_create(&r, SLOTS, N, N, NULL));
    for (i = 0; i < SLOTS; ++i) {
        GPU_MUST(cuxfer_ring_acquire(&r, &slot));
        GPU_MUST(cuxfer_ring_slot_buffers(&r, slot->index, &host, &devbuf));
        same &= host == slot->host && devbuf == slot->device;
        GPU_MUST(cuxfer_ring_release(&r, slot));
    }
    ok(same, "cuxfer_ring_slot_buffers gives the buffers acquire hands out");
    host = devbuf = &same;
    cuxfer_clear_reason();
    is_int(cudaErrorInvalidValue, cuxfer_ring_slot_buffers(&r, SLOTS, &host, &devbuf),
           "slot %d of %d refused", SLOTS, SLOTS);
    ok(host == NULL && devbuf == NULL, "and both outputs NULL");
    ok(strstr(cuxfer_last_reason(), "outside") != NULL, "reason: %s", cuxfer_last_reason());
    GPU_OK(cuxfer_ring_slot_buffers(&r, 0, NULL, &devbuf), "either output may be NULL");

    /* Fences: s uploads behind a delay; every slot's stream copies the
     * upload into its host buffer; s then reads slot 0's device buffer,
     * which the ring's streams filled. */
    GPU_MUST(cuxfer_host_alloc((void **)&src, N, 1, 0));
    GPU_MUST(cudaMalloc((void **)&dev, N));
    GPU_MUST(cudaMemset(dev, 0xa5, N));
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    fill_pattern(src, N, 5);
    for (i = 0; i < SLOTS; ++i) {
        GPU_MUST(cuxfer_ring_slot_buffers(&r, i, &host, &devbuf));
        memset(host, 0x5a, N);
        GPU_MUST(cudaMemset(devbuf, 0x5a, N));
    }
    GPU_MUST(cudaDeviceSynchronize());
    GPU_MUST(cudaLaunchHostFunc(s, delay_fn, NULL));
    GPU_MUST(cuxfer_copy_async(dev, src, N, s));
    GPU_OK(cuxfer_ring_wait(&r, s), "cuxfer_ring_wait: the ring's streams wait for s");
    for (i = 0; i < SLOTS; ++i) {
        GPU_MUST(cuxfer_ring_stream(&r, i, &rs));
        GPU_MUST(cuxfer_ring_slot_buffers(&r, i, &host, &devbuf));
        GPU_MUST(cuxfer_copy_async(devbuf, dev, N, rs));
        GPU_MUST(cuxfer_copy_async(host, devbuf, N, rs));
    }
    GPU_OK(cuxfer_stream_wait_ring(s, &r), "cuxfer_stream_wait_ring: s waits for them");
    GPU_MUST(cuxfer_ring_slot_buffers(&r, SLOTS - 1, NULL, &devbuf));
    GPU_MUST(cudaMemsetAsync(dev, 0, N, s));
    GPU_MUST(cuxfer_copy_async(src, devbuf, N, s)); /* the last slot's copy, back */
    GPU_MUST(cudaStreamSynchronize(s));
    want = (unsigned char *)malloc(N);
    if (!want)
        bail("out of host memory");
    fill_pattern(want, N, 5);
    for (i = 0; i < SLOTS; ++i) {
        GPU_MUST(cuxfer_ring_slot_buffers(&r, i, &host, NULL));
        exact &= memcmp(host, want, N) == 0;
    }
    ok(exact, "every slot read the upload only after s made it (fan-out)");
    ok(memcmp(src, want, N) == 0, "s read what the ring's streams wrote (fan-in)");
    free(want);
    GPU_MUST(cudaStreamDestroy(s));
    GPU_MUST(cudaFree(dev));
    GPU_MUST(cuxfer_host_free(src));
    GPU_OK(cuxfer_ring_destroy(&r), "ring destroyed");
}

int main(void)
{
    int ndev;
    setenv("CUXFER_PAGEABLE", "warn", 1);
    setenv("CUXFER_DEFAULT_STREAM", "warn", 1);
    ndev = gpu_require(1);
    plan(0);
    copies();
    latch_on(ndev);
    ring();
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind at the end");
    done_testing();
}
