/* SPDX-License-Identifier: MIT */
/* The pinned pool on a GPU: a warm acquire reuses the cached block (hit),
 * statistics add up, the byte cap is honoured (cached blocks are freed to
 * make room, an impossible request is refused with a reason), a block
 * released while a copy still reads it is not handed out again until that
 * copy completed, trim returns cached blocks, destroy refuses while blocks
 * are out, and 8 threads hammering it never share a block. */
#include "gpu.h"
#include <sched.h>

static int gate;
static void CUDART_CB hold(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 20000000 && !__atomic_load_n(&gate, __ATOMIC_ACQUIRE); ++i)
        sched_yield();
}

static cuxfer_pinned_pool shared;
static int owner[4096];
static int clashes;
static long long rounds_done;

static void *hammer(void *arg)
{
    long me = (long)arg;
    int r;
    for (r = 0; r < 20000; ++r) {
        cuxfer_pinned_block b;
        size_t sz = 64 + (size_t)((r * 7 + me * 13) % 5) * 1000;
        unsigned char *p;
        if (cuxfer_pinned_pool_acquire(&shared, sz, &b) != cudaSuccess)
            continue;
        p = (unsigned char *)b.ptr;
        memset(p, (int)me, sz);
        if (__atomic_exchange_n(&owner[((uintptr_t)p >> 6) % 4096], (int)me + 1, __ATOMIC_ACQ_REL) != 0)
            __atomic_add_fetch(&clashes, 1, __ATOMIC_RELAXED);
        if (p[0] != (unsigned char)me || p[sz - 1] != (unsigned char)me)
            __atomic_add_fetch(&clashes, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&owner[((uintptr_t)p >> 6) % 4096], 0, __ATOMIC_RELEASE);
        cuxfer_pinned_pool_release(&shared, &b, CUXFER_POOL_IDLE);
        __atomic_add_fetch(&rounds_done, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    cuxfer_pinned_pool pool;
    cuxfer_pinned_pool_options o;
    cuxfer_pinned_pool_stats st;
    cuxfer_pinned_block a, b, c;
    cudaStream_t s;
    void *first, *dev;
    pthread_t th[8];
    long i;

    gpu_require(1);
    plan(0);
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cudaMalloc(&dev, 1 << 20));
    GPU_OK(cuxfer_pinned_pool_create(&pool, NULL), "create with defaults");
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 1000000, &a), "cold acquire");
    first = a.ptr;
    is_int(CUXFER_MEMORY_PINNED, cuxfer_memory_kind(a.ptr), "the block is pinned");
    st = cuxfer_pinned_pool_get_stats(&pool);
    ok(st.misses == 1 && st.hits == 0, "a cold acquire is a miss");
    ok(st.reserved == cuxfer_pinned_pool_class_size(1000000) && st.reserved <= 1125000,
       "reserved %zu <= 1.125 x requested", st.reserved);
    ok(st.requested == 1000000 && st.in_use == st.reserved, "in use and requested add up");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &a, CUXFER_POOL_IDLE), "release");
    ok(a.ptr == NULL, "release zeroes the block handle");
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 999999, &b), "warm acquire of the same class");
    ok(b.ptr == first, "it is the cached block");
    st = cuxfer_pinned_pool_get_stats(&pool);
    ok(st.hits == 1 && st.misses == 1, "a warm acquire is a hit");

    /* event-gated reuse: the copy holds the block, so no reuse yet */
    __atomic_store_n(&gate, 0, __ATOMIC_RELEASE);
    GPU_MUST(cudaLaunchHostFunc(s, hold, NULL));
    fill_pattern(b.ptr, 999999, 1);
    GPU_MUST(cudaMemcpyAsync(dev, b.ptr, 999999, cudaMemcpyHostToDevice, s));
    GPU_OK(cuxfer_pinned_pool_release(&pool, &b, s), "release while a copy still reads it");
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 999999, &c), "acquire meanwhile");
    ok(c.ptr != first, "the busy block is not handed out");
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    GPU_MUST(cudaStreamSynchronize(s));
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 999999, &b), "acquire after the copy completed");
    ok(b.ptr == first, "now the block comes back");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &b, CUXFER_POOL_IDLE), "release");
    is_int(cudaErrorNotPermitted, cuxfer_pinned_pool_destroy(&pool), "destroy refused while a block is out");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &c, CUXFER_POOL_IDLE), "release the other");
    is_int(cudaErrorInvalidValue, cuxfer_pinned_pool_release(&pool, &c, CUXFER_POOL_IDLE),
           "releasing twice is refused");
    GPU_OK(cuxfer_pinned_pool_trim(&pool), "trim");
    st = cuxfer_pinned_pool_get_stats(&pool);
    is_int(0, (long long)st.reserved, "trim returned every cached block");
    ok(st.peak_reserved >= 2 * cuxfer_pinned_pool_class_size(999999), "peak remembers the high mark");
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "destroy");

    /* the cap */
    memset(&o, 0, sizeof o);
    o.cap_bytes = 3u << 20;
    GPU_MUST(cuxfer_pinned_pool_create(&pool, &o));
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 2u << 20, &a), "2 MiB under a 3 MiB cap");
    is_int(cudaErrorMemoryAllocation, cuxfer_pinned_pool_acquire(&pool, 2u << 20, &b),
           "a second 2 MiB is refused");
    contains(cuxfer_last_reason(), "exceed the cap of 3145728 bytes", "with a reason naming the cap");
    GPU_OK(cuxfer_pinned_pool_release(&pool, &a, CUXFER_POOL_IDLE), "release");
    GPU_OK(cuxfer_pinned_pool_acquire(&pool, 1u << 20, &b), "1 MiB: the cached 2 MiB block is freed to make room");
    st = cuxfer_pinned_pool_get_stats(&pool);
    ok(st.reserved <= o.cap_bytes, "reserved %zu stays under the cap", st.reserved);
    GPU_OK(cuxfer_pinned_pool_release(&pool, &b, CUXFER_POOL_IDLE), "release");
    GPU_OK(cuxfer_pinned_pool_destroy(&pool), "destroy");

    /* 8 threads */
    GPU_MUST(cuxfer_pinned_pool_create(&shared, NULL));
    for (i = 0; i < 8; ++i)
        pthread_create(&th[i], NULL, hammer, (void *)i);
    for (i = 0; i < 8; ++i)
        pthread_join(th[i], NULL);
    is_int(0, clashes, "8 threads: no block was ever held twice");
    is_int(8 * 20000, rounds_done, "8 threads: every acquire succeeded");
    st = cuxfer_pinned_pool_get_stats(&shared);
    ok(st.in_use == 0 && st.hits + st.misses == 8 * 20000, "8 threads: counters add up");
    diag("8 threads: %llu hits, %llu misses, peak %zu bytes", st.hits, st.misses, st.peak_reserved);
    GPU_OK(cuxfer_pinned_pool_destroy(&shared), "destroy");
    cudaFree(dev);
    cudaStreamDestroy(s);
    done_testing();
}
