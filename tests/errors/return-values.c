/* SPDX-License-Identifier: MIT */
/* RETURN VALUES are a contract: each error below is provoked for real, it
 * must be the one expected, and it must be listed (`.Dv cudaError...`) in
 * the RETURN VALUES section of the page that documents the call; an error
 * a page does not list fails the test.  These are the refusals made
 * before the device is asked, so the test runs with or without one; the
 * errors only a device can give are provoked by the GPU tests
 * (errors/left-behind, stager/roundtrip, streams/ring-depth, composition/matrix). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include <cuxfer.h>

#include "read-file.h"

/* 1 when man/PAGE.3's RETURN VALUES section lists `name` as a .Dv. */
static int listed(const char *page, const char *name)
{
    char path[4096], want[128];
    const char *top = getenv("top_srcdir"), *a, *b, *p;
    char *text;
    int found = 0;
    (void)snprintf(path, sizeof path, "%s/man/%s.3", top ? top : ".", page);
    text = read_file(path);
    if (!text)
        bail("cannot read %s", path);
    a = strstr(text, "\n.Sh RETURN VALUES\n");
    b = a ? strstr(a + 1, "\n.Sh ") : NULL;
    (void)snprintf(want, sizeof want, "Dv %s", name);
    for (p = a; p && (p = strstr(p, want)) != NULL && (!b || p < b); p += strlen(want)) {
        char after = p[strlen(want)];
        if (!((after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z'))) {
            found = 1;
            break;
        }
    }
    free(text);
    return found;
}

/* The call returned `want`, and its page lists it. */
static void provoke(const char *page, const char *what, cudaError_t got, cudaError_t want)
{
    const char *name = cudaGetErrorName(got);
    is_int(want, got, "%s(3): %s -> %s", page, what, cudaGetErrorName(want));
    ok(got == cudaSuccess || listed(page, name), "%s(3) RETURN VALUES lists %s", page, name);
}

int main(void)
{
    cuxfer_stream_pool sp;
    cuxfer_ring ring;
    cuxfer_ring_options ro;
    cuxfer_ring_slot *slot = NULL;
    cuxfer_timer timer;
    cuxfer_graph graph;
    cuxfer_stager stager;
    cuxfer_stager_options so, sres;
    cuxfer_pinned_pool pool;
    cuxfer_pinned_block blk;
    cuxfer_rois rois;
    cuxfer_rois_options rso;
    cuxfer_plan2d p2d;
    cuxfer_plan2d_options po;
    cuxfer_view v, w;
    cudaStream_t set[1];
    int dev = -1;
    float ms;
    static unsigned char buf[4096];
    void *p = NULL;
    plan(0);

    provoke("cuxfer_check", "cuxfer_device_count(NULL)", cuxfer_device_count(NULL),
            cudaErrorInvalidValue);
    provoke("cuxfer_stream_pool", "create_on device -1",
            cuxfer_stream_pool_create_on(&sp, -1, 2, 0, 0), cudaErrorInvalidDevice);
    /* the checks that need only the arguments, before any CUDA call */
    provoke("cuxfer_stream_pool", "create_on device 0 with count 0",
            cuxfer_stream_pool_create_on(&sp, 0, 0, 0, 0), cudaErrorInvalidValue);
    contains(cuxfer_last_reason(), "count 0", "the reason names the count");
    provoke("cuxfer_stream_pool", "create_on device 0 with flags 0x80",
            cuxfer_stream_pool_create_on(&sp, 0, 2, 0x80, 0), cudaErrorInvalidValue);
    contains(cuxfer_last_reason(), "cuxfer_stream_pool_create_on: unknown flags 0x80",
             "the reason names the call and the flags");
    provoke("cuxfer_stream_pool", "create with count 5000",
            cuxfer_stream_pool_create(&sp, 5000, 0, 0), cudaErrorInvalidValue);
    ok(all_bytes(&sp, sizeof sp, 0), "the refused pool is left zeroed");
    set[0] = cudaStreamLegacy;
    provoke("cuxfer_timer", "stream_wait_all of 0 signalers", cuxfer_stream_wait_all(0, NULL, 0),
            cudaSuccess);
    provoke("cuxfer_timer", "stream_wait_all of only the waiter",
            cuxfer_stream_wait_all(cudaStreamLegacy, set, 1), cudaSuccess);
    provoke("cuxfer_stream_pool", "wrap of cudaStreamLegacy", cuxfer_stream_pool_wrap(&sp, set, 1),
            cudaErrorInvalidValue);
    provoke("cuxfer_ring", "create with 0 slots", cuxfer_ring_create(&ring, 0, 64, 64, NULL),
            cudaErrorInvalidValue);
    memset(&ro, 0, sizeof ro);
    ro.devices = &dev;
    ro.ndevices = -1;
    cuxfer_clear_reason();
    provoke("cuxfer_ring", "create with ndevices -1", cuxfer_ring_create(&ring, 1, 64, 64, &ro),
            cudaErrorInvalidValue);
    contains(cuxfer_last_reason(), "ndevices -1 is negative", "the reason says ndevices is negative");
    ro.ndevices = 1;
    provoke("cuxfer_ring", "create on device -1", cuxfer_ring_create(&ring, 1, 64, 64, &ro),
            cudaErrorInvalidDevice);
    memset(&ring, 0, sizeof ring);
    provoke("cuxfer_ring", "acquire on a zeroed ring", cuxfer_ring_acquire(&ring, &slot),
            cudaErrorInvalidValue);
    memset(&timer, 0, sizeof timer);
    provoke("cuxfer_timer", "start of a timer not created", cuxfer_timer_start(&timer, 0),
            cudaErrorInvalidValue);
    provoke("cuxfer_timer", "timer_ms of a timer not started",
            cuxfer_timer_ms(&timer, CUXFER_NOWAIT, &ms), cudaErrorInvalidValue);
    memset(&graph, 0, sizeof graph);
    provoke("cuxfer_graph", "launch of a graph not instantiated", cuxfer_graph_launch(&graph, 0),
            cudaErrorInvalidValue);
    memset(&stager, 0, sizeof stager);
    provoke("cuxfer_stager", "stage into a stager not created",
            cuxfer_stage_h2d(&stager, buf, buf + 1024, 16, 0), cudaErrorInvalidValue);
    provoke("cuxfer_stager", "stage of 0 bytes", cuxfer_stage_h2d(&stager, buf, buf + 1024, 0, 0),
            cudaErrorInvalidValue);
    memset(&so, 0, sizeof so);
    so.slots = 1000;
    provoke("cuxfer_stager", "options with 1000 slots", cuxfer_stager_options_resolve(&sres, &so),
            cudaErrorInvalidValue);
    memset(&pool, 0, sizeof pool);
    memset(&blk, 0x55, sizeof blk);
    provoke("cuxfer_pinned_pool", "acquire from a pool not created",
            cuxfer_pinned_pool_acquire(&pool, 64, &blk), cudaErrorInvalidValue);
    ok(all_bytes(&blk, sizeof blk, 0),
       "cuxfer_pinned_pool(3): the refused acquire leaves *blk zeroed (no stale block to release)");
    {
        cuxfer_pinned_pool_options pso;
        memset(&pso, 0, sizeof pso);
        pso.flags = 0x80;
        provoke("cuxfer_pinned_pool", "create with flags 0x80",
                cuxfer_pinned_pool_create(&pool, &pso), cudaErrorInvalidValue);
        ok(all_bytes(&pool, sizeof pool, 0), "the refused pinned pool is left zeroed");
    }
    memset(&rso, 0, sizeof rso);
    rso.strategy = 9;
    provoke("cuxfer_rois", "create with strategy 9", cuxfer_rois_create(&rois, &rso),
            cudaErrorInvalidValue);
    ok(all_bytes(&rois, sizeof rois, 0), "cuxfer_rois(3): the refused plan is left zeroed");
    rso.strategy = 0;
    rso.chunk_bytes = 100;
    provoke("cuxfer_rois", "create with chunk_bytes 100", cuxfer_rois_create(&rois, &rso),
            cudaErrorInvalidValue);
    ok(all_bytes(&rois, sizeof rois, 0), "cuxfer_rois(3): zeroed after a chunk refused too");
    memset(&po, 0, sizeof po);
    po.strategy = 9;
    provoke("cuxfer_plan2d", "create with strategy 9", cuxfer_plan2d_create(&p2d, &po),
            cudaErrorInvalidValue);
    ok(all_bytes(&p2d, sizeof p2d, 0), "cuxfer_plan2d(3): the refused plan is left zeroed");
    provoke("cuxfer_view", "wrap with a row wider than the pitch",
            cuxfer_view_wrap(&v, buf, 8, 16, 4, 1), cudaErrorInvalidPitchValue);
    if (cuxfer_view_wrap(&v, buf, 16, 16, 4, 1) != cudaSuccess ||
        cuxfer_view_wrap(&w, buf + 2048, 16, 8, 4, 1) != cudaSuccess)
        bail("cuxfer_view_wrap: %s", cuxfer_last_reason());
    provoke("cuxfer_copy2d_async", "views of different shapes", cuxfer_copy2d_async(&w, &v, 0),
            cudaErrorInvalidValue);
    provoke("cuxfer_managed_alloc", "prefetch of NULL", cuxfer_prefetch(NULL, 64, 0, 0),
            cudaErrorInvalidValue);
    provoke("cuxfer_managed_alloc", "prefetch to device -5", cuxfer_prefetch(buf, 64, -5, 0),
            cudaErrorInvalidDevice);
    provoke("cuxfer_on_complete", "a NULL function", cuxfer_on_complete(0, NULL, NULL),
            cudaErrorInvalidValue);
    provoke("cuxfer_host_alloc", "alloc of 0 elements", cuxfer_host_alloc(&p, 0, 1, 0),
            cudaErrorInvalidValue);
    done_testing();
}
