/* SPDX-License-Identifier: MIT */
/* Several GPUs: peer access is enabled once, idempotently, from several
 * threads at once; 2D copies between device views on different GPUs are
 * byte-exact (peer or staged); pools, timers and rings made for another
 * device work there and leave the caller's current device alone;
 * cuxfer_stream_wait orders streams of different devices (with every CUDA
 * runtime: before 12.8 the signaler's device is found by trying), and so
 * do the fan-in/fan-out helpers; a timer made for device 1 with options
 * while device 0 is current times work there.  Needs 2 GPUs:
 * skips with fewer, fails with CUXFER_REQUIRE_GPU=2. */
#include "gpu.h"

static int peer_results[8];

static void *enable_peer(void *arg)
{
    long i = (long)arg;
    peer_results[i] = (int)cuxfer_peer_enable((int)(i & 1), (int)((i + 1) & 1));
    return NULL;
}

static int current(void)
{
    int d = -1;
    cudaGetDevice(&d);
    return d;
}

/* Fill a device view on its device from a host pattern; return the host
 * copy of what it holds. */
static unsigned char *fill_dev(cuxfer_view *v, unsigned seed, cudaStream_t s)
{
    size_t n = v->width * v->elem_size * v->height;
    cuxfer_view hv;
    GPU_MUST(cuxfer_view_alloc_host(&hv, v->width, v->height, v->elem_size, 0));
    fill_pattern(hv.ptr, n, seed);
    GPU_MUST(cuxfer_copy2d_async(v, &hv, s));
    GPU_MUST(cudaStreamSynchronize(s));
    return (unsigned char *)hv.ptr; /* leaked into the caller: freed with cudaFreeHost */
}

int main(void)
{
    int n = gpu_require(2), can01 = 0, can10 = 0, i;
    pthread_t th[8];
    cudaStream_t s0, s1;
    cuxfer_view a, b, c;
    unsigned char *ref;
    plan(0);
    diag("%d GPUs", n);
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaDeviceCanAccessPeer(&can01, 0, 1));
    GPU_MUST(cudaDeviceCanAccessPeer(&can10, 1, 0));
    diag("peer access 0->1 %d, 1->0 %d", can01, can10);
    for (i = 0; i < 8; ++i)
        pthread_create(&th[i], NULL, enable_peer, (void *)(long)i);
    for (i = 0; i < 8; ++i)
        pthread_join(th[i], NULL);
    {
        int same = 1;
        for (i = 0; i < 8; ++i)
            same &= peer_results[i] == (i & 1 ? (can10 ? cudaSuccess : cudaErrorPeerAccessUnsupported)
                                              : (can01 ? cudaSuccess : cudaErrorPeerAccessUnsupported));
        ok(same, "8 threads enabling peer access at once all get the same, right answer");
    }
    is_int(can01 ? cudaSuccess : cudaErrorPeerAccessUnsupported, cuxfer_peer_enable(0, 1),
           "enabling again is idempotent");
    is_int(cudaSuccess, cudaGetLastError(), "no sticky error (already-enabled is absorbed)");
    is_int(0, current(), "the current device is unchanged");

    /* 2D copies between GPUs, odd ROIs, several element sizes */
    GPU_MUST(cudaSetDevice(0));
    GPU_MUST(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    GPU_MUST(cudaSetDevice(1));
    GPU_MUST(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    {
        static const size_t es[] = {1, 3, 4, 12};
        size_t k;
        for (k = 0; k < 4; ++k) {
            cuxfer_roi r = {5, 3, 101, 77};
            cuxfer_view asub, back;
            size_t y, row = r.width * es[k];
            int good = 1;
            GPU_MUST(cudaSetDevice(0));
            GPU_MUST(cuxfer_view_alloc_device(&a, 211, 97, es[k]));
            ref = fill_dev(&a, (unsigned)k + 1, s0);
            GPU_MUST(cudaSetDevice(1));
            GPU_MUST(cuxfer_view_alloc_device(&b, r.width, r.height, es[k]));
            GPU_MUST(cudaMemset2DAsync(b.ptr, b.pitch, 0xA5, row, r.height, s1));
            GPU_MUST(cudaStreamSynchronize(s1));
            ok(a.device == 0 && b.device == 1, "views record their devices (elem %zu)", es[k]);
            GPU_MUST(cuxfer_view_sub(&a, r, &asub));
            GPU_OK(cuxfer_copy2d_async(&b, &asub, s1), "GPU0 ROI -> GPU1 (elem %zu)", es[k]);
            GPU_MUST(cudaStreamSynchronize(s1));
            GPU_MUST(cuxfer_view_alloc_host(&back, r.width, r.height, es[k], 0));
            memset(back.ptr, 0, back.pitch * back.height);
            GPU_MUST(cuxfer_copy2d_async(&back, &b, s1));
            GPU_MUST(cudaStreamSynchronize(s1));
            for (y = 0; y < r.height && good; ++y)
                good = memcmp((unsigned char *)back.ptr + y * back.pitch,
                              ref + (r.y + y) * 211 * es[k] + r.x * es[k], row) == 0;
            ok(good, "the ROI arrived on GPU1 byte-exact (elem %zu)", es[k]);
            /* and back the other way into a placed sub-view on GPU0 */
            GPU_MUST(cudaSetDevice(0));
            GPU_MUST(cuxfer_view_alloc_device(&c, 211, 97, es[k]));
            GPU_MUST(cudaMemset2DAsync(c.ptr, c.pitch, 0x5A, 211 * es[k], 97, s0));
            GPU_MUST(cudaStreamSynchronize(s0));
            {
                cuxfer_view csub, full;
                unsigned char *h;
                GPU_MUST(cuxfer_view_sub(&c, r, &csub));
                GPU_OK(cuxfer_copy2d_async(&csub, &b, s0), "GPU1 -> placed ROI on GPU0 (elem %zu)", es[k]);
                GPU_MUST(cudaStreamSynchronize(s0));
                GPU_MUST(cuxfer_view_alloc_host(&full, 211, 97, es[k], 0));
                GPU_MUST(cuxfer_copy2d_async(&full, &c, s0));
                GPU_MUST(cudaStreamSynchronize(s0));
                h = (unsigned char *)full.ptr;
                good = 1;
                for (y = 0; y < 97 && good; ++y) {
                    size_t x;
                    for (x = 0; x < 211 * es[k] && good; ++x) {
                        int in = y >= r.y && y < r.y + r.height && x >= r.x * es[k] &&
                                 x < (r.x + r.width) * es[k];
                        good = h[y * full.pitch + x] == (in ? ref[y * 211 * es[k] + x] : 0x5A);
                    }
                }
                ok(good, "round trip GPU0 -> GPU1 -> GPU0: ROI exact, rest untouched (elem %zu)", es[k]);
                cuxfer_view_free(&full);
            }
            cuxfer_view_free(&a);
            cuxfer_view_free(&b);
            cuxfer_view_free(&c);
            cuxfer_view_free(&back);
            cudaFreeHost(ref);
        }
    }

    /* objects made for another device */
    GPU_MUST(cudaSetDevice(0));
    {
        cuxfer_stream_pool pool;
        cuxfer_timer t;
        cudaStream_t ps = NULL;
        float ms = 0;
        void *d1 = NULL, *h = NULL;
        GPU_OK(cuxfer_stream_pool_create_on(&pool, 1, 4, 0, 0), "a pool for device 1");
        is_int(0, current(), "creating it left device 0 current");
        is_int(1, pool.device, "the pool records device 1");
        GPU_MUST(cuxfer_stream_pool_next(&pool, &ps));
        GPU_MUST(cudaSetDevice(1));
        GPU_MUST(cudaMalloc(&d1, 1 << 20));
        GPU_OK(cuxfer_timer_create(&t), "a timer on device 1");
        GPU_MUST(cudaSetDevice(0));
        GPU_MUST(cuxfer_host_alloc(&h, 1 << 20, 1, 0));
        GPU_OK(cuxfer_timer_start(&t, ps), "timer start on device 1's stream while device 0 is current");
        GPU_OK(cuxfer_copy_async(d1, h, 1 << 20, ps), "copy on device 1's pool stream");
        GPU_OK(cuxfer_timer_stop(&t, ps), "timer stop");
        GPU_OK(cuxfer_timer_ms(&t, CUXFER_WAIT, &ms), "timer reads");
        ok(ms > 0, "a positive time (%.3f ms)", ms);
        is_int(0, current(), "device 0 is still current");
        /* cross-device ordering */
        {
            unsigned char *hb = (unsigned char *)h;
            void *d0 = NULL;
            GPU_MUST(cudaMalloc(&d0, 1 << 20));
            fill_pattern(hb, 1 << 20, 77);
            GPU_MUST(cudaMemcpyAsync(d1, hb, 1 << 20, cudaMemcpyHostToDevice, ps));
            GPU_OK(cuxfer_stream_wait(s0, ps), "device 0's stream waits for device 1's");
            GPU_MUST(cudaMemcpyPeerAsync(d0, 0, d1, 1, 1 << 20, s0));
            GPU_MUST(cudaStreamSynchronize(s0));
            memset(hb, 0, 1 << 20);
            GPU_MUST(cudaMemcpy(hb, d0, 1 << 20, cudaMemcpyDeviceToHost));
            {
                unsigned char *want = (unsigned char *)malloc(1 << 20);
                fill_pattern(want, 1 << 20, 77);
                ok(memcmp(want, hb, 1 << 20) == 0, "the peer copy saw the upload it waited for");
                free(want);
            }
            cudaFree(d0);
        }
        /* fan-in and fan-out across devices */
        {
            unsigned char *hb = (unsigned char *)h, *want = (unsigned char *)malloc(1 << 20);
            void *d0 = NULL;
            cudaStream_t both[2];
            cuxfer_timer t1;
            cuxfer_timer_options to;
            float ms1 = 0;
            if (!want)
                bail("out of memory");
            GPU_MUST(cudaMalloc(&d0, 1 << 20));
            fill_pattern(hb, 1 << 20, 78);
            fill_pattern(want, 1 << 20, 78);
            GPU_MUST(cudaMemcpyAsync(d1, hb, 1 << 20, cudaMemcpyHostToDevice, ps));
            both[0] = ps;
            both[1] = s1;
            GPU_OK(cuxfer_stream_wait_all(s0, both, 2),
                   "device 0's stream waits for two streams of device 1");
            GPU_MUST(cudaMemcpyPeerAsync(d0, 0, d1, 1, 1 << 20, s0));
            both[0] = s1;
            both[1] = ps;
            GPU_OK(cuxfer_stream_all_wait(both, 2, s0),
                   "two streams of device 1 wait for device 0's stream");
            GPU_MUST(cudaStreamSynchronize(s0));
            memset(hb, 0, 1 << 20);
            GPU_MUST(cudaMemcpy(hb, d0, 1 << 20, cudaMemcpyDeviceToHost));
            ok(memcmp(want, hb, 1 << 20) == 0, "the fan-in ordered the peer copy after the upload");
            GPU_MUST(cudaStreamSynchronize(ps));
            GPU_MUST(cudaStreamSynchronize(s1));
            is_int(0, current(), "device 0 is still current");
            memset(&to, 0, sizeof to);
            to.flags = CUXFER_TIMER_ON_DEVICE | CUXFER_TIMER_BLOCKING_SYNC;
            to.device = 1;
            GPU_OK(cuxfer_timer_create_with(&t1, &to), "a blocking-sync timer for device 1, made from device 0");
            is_int(0, current(), "making it left device 0 current");
            GPU_OK(cuxfer_timer_start(&t1, ps), "start on device 1's stream");
            GPU_OK(cuxfer_copy_async(d1, h, 1 << 20, ps), "copy there");
            GPU_OK(cuxfer_timer_stop(&t1, s1), "stop on another stream of device 1");
            GPU_OK(cuxfer_timer_ms(&t1, CUXFER_WAIT, &ms1), "read");
            ok(ms1 > 0 && ms1 == ms1, "a positive time (%.3f ms)", ms1);
            GPU_MUST(cuxfer_timer_destroy(&t1));
            free(want);
            cudaFree(d0);
        }
        GPU_MUST(cuxfer_timer_destroy(&t));
        GPU_OK(cuxfer_stream_pool_destroy(&pool), "pool destroy");
        cudaFree(d1);
        cuxfer_host_free(h);
    }

    /* a ring over both devices */
    {
        int devs[2] = {0, 1}, f, good = 1;
        cuxfer_ring ring;
        cuxfer_ring_options o;
        cuxfer_ring_slot *slot = NULL;
        cuxfer_ring_job job;
        const size_t fb = 1 << 20;
        memset(&o, 0, sizeof o);
        o.devices = devs;
        o.ndevices = 2;
        GPU_OK(cuxfer_ring_create(&ring, 4, 2 * fb, fb, &o), "a 4-slot ring over devices 0 and 1");
        ok(ring.slots[0].device_id == 0 && ring.slots[1].device_id == 1 &&
               ring.slots[2].device_id == 0 && ring.slots[3].device_id == 1,
           "slots alternate between the devices");
        memset(&job, 0, sizeof job);
        job.h2d_bytes = fb;
        job.d2h_bytes = fb;
        job.d2h_host_offset = fb;
        for (f = 0; f < 40; ++f) {
            GPU_MUST(cuxfer_ring_acquire(&ring, &slot));
            if (f >= 4)
                good &= memcmp(slot->host, (unsigned char *)slot->host + fb, fb) == 0;
            fill_pattern(slot->host, fb, (unsigned)f);
            memset((unsigned char *)slot->host + fb, 0xEE, fb);
            GPU_MUST(cuxfer_ring_submit(&ring, slot, &job));
        }
        GPU_OK(cuxfer_ring_drain(&ring), "drain");
        for (f = 0; f < 4; ++f)
            good &= memcmp(ring.slots[f].host, (unsigned char *)ring.slots[f].host + fb, fb) == 0;
        ok(good, "40 frames through both GPUs came back byte-exact");
        is_int(0, current(), "the ring left device 0 current");
        GPU_OK(cuxfer_ring_destroy(&ring), "destroy");
    }
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
    done_testing();
}
