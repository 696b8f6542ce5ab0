/* SPDX-License-Identifier: MIT */
/* The ring's new surface (issue 17, item 5): its slot count and depth,
 * a depth below the capacity (slots handed out 0..depth-1 in order, the
 * others untouched), its streams without acquiring, timing a cycle with
 * the slot's events, outputs set on refusals, and the lock-free acquire
 * under 8 threads: a thread only ever sees a slot whose previous
 * submission (by any thread) has completed, and never two threads one
 * slot.  Every transfer is checked byte for byte. */
#include <pthread.h>
#include <time.h>
#include "gpu.h"

enum { SLOT = 1 << 16, THREADS = 8, ROUNDS = 200 };

static cuxfer_ring ring;
static unsigned last_tag[8];   /* per slot: tag of its last submission */
static int in_slot[8];         /* threads inside a slot right now */
static int errors, overlaps, stale;

/* The host buffer: input [0, SLOT), output [SLOT, 2 SLOT); the job uploads
 * the input and downloads it into the output, so a completed submission
 * leaves output == the input it was given. */
static void fill_tag(unsigned char *p, unsigned tag)
{
    size_t i;
    for (i = 0; i < SLOT; ++i)
        p[i] = (unsigned char)(tag * 31u + i * 7u + (i >> 9));
}

static int has_tag(const unsigned char *p, unsigned tag)
{
    size_t i;
    for (i = 0; i < SLOT; ++i)
        if (p[i] != (unsigned char)(tag * 31u + i * 7u + (i >> 9)))
            return 0;
    return 1;
}

static void *producer(void *arg)
{
    unsigned id = (unsigned)(size_t)arg, r;
    cuxfer_ring_job job;
    memset(&job, 0, sizeof job);
    job.h2d_bytes = SLOT;
    job.d2h_bytes = SLOT;
    job.d2h_host_offset = SLOT;
    for (r = 0; r < ROUNDS; ++r) {
        cuxfer_ring_slot *slot;
        unsigned tag = id * 100000u + r + 1u;
        if (cuxfer_ring_acquire(&ring, &slot) != cudaSuccess) {
            __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
            if (!slot)
                continue;
        }
        if (__atomic_add_fetch(&in_slot[slot->index], 1, __ATOMIC_SEQ_CST) != 1)
            __atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
        if (last_tag[slot->index] &&
            !has_tag((unsigned char *)slot->host + SLOT, last_tag[slot->index]))
            __atomic_add_fetch(&stale, 1, __ATOMIC_SEQ_CST);
        fill_tag((unsigned char *)slot->host, tag);
        memset((unsigned char *)slot->host + SLOT, 0xA5, SLOT);
        last_tag[slot->index] = tag;
        __atomic_sub_fetch(&in_slot[slot->index], 1, __ATOMIC_SEQ_CST);
        if (cuxfer_ring_submit(&ring, slot, &job) != cudaSuccess)
            __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static int lockless_done;

static void *lockless_cycle(void *arg)
{
    cuxfer_ring_slot *slot;
    (void)arg;
    if (cuxfer_ring_acquire(&ring, &slot) == cudaSuccess && slot &&
        cuxfer_ring_release(&ring, slot) == cudaSuccess)
        __atomic_store_n(&lockless_done, 1, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&lockless_done, 2, __ATOMIC_RELEASE);
    return NULL;
}

int main(void)
{
    struct timespec one_ms = {0, 1000000};
    cuxfer_ring zero;
    cuxfer_ring_slot *slot = (cuxfer_ring_slot *)&slot;
    cuxfer_ring_options opt;
    cuxfer_ring_job job;
    cudaStream_t s = (cudaStream_t)&s;
    pthread_t th[THREADS];
    float ms = -1.0f;
    cudaError_t err;
    int i, order;
    plan(0);

    /* No device needed: a zeroed ring and NULL arguments. */
    memset(&zero, 0, sizeof zero);
    is_int(0, cuxfer_ring_slots(&zero), "a zeroed ring has 0 slots");
    is_int(0, cuxfer_ring_depth(NULL), "a NULL ring has depth 0");
    is_int(cudaErrorInvalidValue, cuxfer_ring_set_depth(&zero, 1), "set_depth on a zeroed ring");
    err = cuxfer_ring_stream(&zero, 0, &s);
    is_int(cudaErrorInvalidValue, err, "ring_stream on a zeroed ring refused");
    ok(s == NULL, "ring_stream sets *s on a refusal");
    err = cuxfer_ring_acquire(&zero, &slot);
    is_int(cudaErrorInvalidValue, err, "acquire on a zeroed ring refused");
    ok(slot == NULL, "acquire sets *slot on a refusal");
    {
        cuxfer_ring_slot stray;
        cuxfer_ring_job none;
        memset(&stray, 0, sizeof stray);
        memset(&none, 0, sizeof none);
        stray.held = 1;
        is_int(cudaErrorInvalidValue, cuxfer_ring_submit(&zero, &stray, &none),
               "submit on a zeroed ring refused");
        contains(cuxfer_last_reason(), "ring not created", "the reason says so");
        is_int(cudaErrorInvalidValue, cuxfer_ring_release(NULL, &stray),
               "release on a NULL ring refused");
        is_int(1, stray.held, "the slot is left as it was");
    }
    err = cuxfer_ring_slot_ms(NULL, CUXFER_WAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "slot_ms of NULL refused");
    ok(ms == 0.0f, "slot_ms sets *ms on a refusal");

    if (!gpu_present(1)) /* the CPU checks above stand alone */
        done_testing();

    /* Depth below capacity. */
    GPU_MUST(cuxfer_ring_create(&ring, 4, 2 * SLOT, SLOT, NULL));
    is_int(4, cuxfer_ring_slots(&ring), "capacity 4");
    is_int(4, cuxfer_ring_depth(&ring), "depth starts at the capacity");
    is_int(cudaErrorInvalidValue, cuxfer_ring_set_depth(&ring, 0), "depth 0 refused");
    contains(cuxfer_last_reason(), "depth 0 is outside 1..4", "the reason names depth and range");
    is_int(cudaErrorInvalidValue, cuxfer_ring_set_depth(&ring, 5), "depth 5 > 4 refused");
    GPU_OK(cuxfer_ring_acquire(&ring, &slot), "acquire slot 0");
    is_int(cudaErrorNotPermitted, cuxfer_ring_set_depth(&ring, 2), "set_depth while held refused");
    contains(cuxfer_last_reason(), "slot 0 is held", "the reason names the held slot");
    GPU_OK(cuxfer_ring_release(&ring, slot), "release");
    GPU_OK(cuxfer_ring_set_depth(&ring, 2), "depth 2");
    is_int(2, cuxfer_ring_depth(&ring), "depth now 2");
    is_int(4, cuxfer_ring_slots(&ring), "capacity still 4");
    memset(&job, 0, sizeof job);
    job.h2d_bytes = SLOT;
    job.d2h_bytes = SLOT;
    job.d2h_host_offset = SLOT;
    for (order = 0, i = 0; i < 7; ++i) {
        if (cuxfer_ring_acquire(&ring, &slot) != cudaSuccess || !slot)
            bail("acquire %d: %s", i, cuxfer_last_reason());
        order += slot->index != i % 2;
        fill_tag((unsigned char *)slot->host, (unsigned)i + 1u);
        memset((unsigned char *)slot->host + SLOT, 0, SLOT);
        GPU_MUST(cuxfer_ring_submit(&ring, slot, &job));
    }
    is_int(0, order, "depth 2: slots 0,1,0,1,... from slot 0");
    GPU_OK(cuxfer_ring_drain(&ring), "drain");
    ok(has_tag((unsigned char *)ring.slots[0].host + SLOT, 7u), "slot 0 holds frame 7's round trip");
    ok(has_tag((unsigned char *)ring.slots[1].host + SLOT, 6u), "slot 1 holds frame 6's round trip");
    is_int(0, (long long)(ring.slots[2].uses + ring.slots[3].uses), "slots 2 and 3 were never used");
    GPU_OK(cuxfer_ring_set_depth(&ring, 1), "depth 1");
    for (order = 0, i = 0; i < 3; ++i) {
        if (cuxfer_ring_acquire(&ring, &slot) != cudaSuccess || !slot)
            bail("acquire: %s", cuxfer_last_reason());
        order += slot->index != 0;
        GPU_MUST(cuxfer_ring_release(&ring, slot));
    }
    is_int(0, order, "depth 1: always slot 0");

    /* A refused submission queues, records and counts nothing and leaves
     * the slot held: it is released (or submitted again) after. */
    {
        cuxfer_ring_job big;
        unsigned long long uses;
        if (cuxfer_ring_acquire(&ring, &slot) != cudaSuccess || !slot)
            bail("acquire: %s", cuxfer_last_reason());
        uses = slot->uses;
        memset(&big, 0, sizeof big);
        big.h2d_bytes = 4 * SLOT;
        is_int(cudaErrorInvalidValue, cuxfer_ring_submit(&ring, slot, &big),
               "a job larger than the slot is refused");
        ok(slot->uses == uses, "the refused job is not counted as a use");
        is_int(1, __atomic_load_n(&slot->held, __ATOMIC_ACQUIRE), "the slot is still held");
        GPU_OK(cuxfer_ring_release(&ring, slot), "and it can be released");
        is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
    }

    /* A slot belongs to the ring it came from: submitted to or released on
     * another ring it is refused, still held, and queues nothing. */
    {
        cuxfer_ring other;
        cuxfer_ring_slot *theirs;
        cuxfer_ring_job one;
        memset(&one, 0, sizeof one);
        one.h2d_bytes = 16;
        GPU_MUST(cuxfer_ring_create(&other, 1, SLOT, SLOT, NULL));
        if (cuxfer_ring_acquire(&other, &theirs) != cudaSuccess || !theirs)
            bail("acquire: %s", cuxfer_last_reason());
        is_int(cudaErrorInvalidValue, cuxfer_ring_submit(&ring, theirs, &one),
               "another ring's slot is refused by submit");
        contains(cuxfer_last_reason(), "not one of this ring's", "the reason says whose it is");
        ok(theirs->uses == 0, "the refused submission is not counted");
        is_int(cudaErrorInvalidValue, cuxfer_ring_release(&ring, theirs),
               "another ring's slot is refused by release");
        is_int(1, __atomic_load_n(&theirs->held, __ATOMIC_ACQUIRE), "and stays held");
        GPU_OK(cuxfer_ring_release(&other, theirs), "its own ring takes it back");
        GPU_OK(cuxfer_ring_destroy(&other), "destroy the other ring");
    }

    /* A free slot is taken and given back without the ring's mutex: it
     * completes while this thread holds it. */
    pthread_mutex_lock(&ring.mu);
    if (pthread_create(&th[0], NULL, lockless_cycle, NULL) != 0)
        bail("pthread_create");
    for (i = 0; i < 5000 && !__atomic_load_n(&lockless_done, __ATOMIC_ACQUIRE); ++i)
        nanosleep(&one_ms, NULL);
    is_int(1, __atomic_load_n(&lockless_done, __ATOMIC_ACQUIRE),
           "acquire and release of a free slot complete while the ring's mutex is held");
    pthread_mutex_unlock(&ring.mu);
    pthread_join(th[0], NULL);

    /* Streams without acquiring. */
    for (order = 0, i = 0; i < 4; ++i) {
        s = NULL;
        if (cuxfer_ring_stream(&ring, i, &s) != cudaSuccess || s != ring.slots[i].stream || !s)
            ++order;
    }
    is_int(0, order, "ring_stream gives each slot's own stream");
    err = cuxfer_ring_stream(&ring, 4, &s);
    is_int(cudaErrorInvalidValue, err, "ring_stream(4) of 4 slots refused");
    contains(cuxfer_last_reason(), "slot 4 is outside 0..3", "the reason names the index");
    ok(s == NULL, "and *s is NULL");
    err = cuxfer_ring_slot_ms(&ring.slots[0], CUXFER_WAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "slot_ms on an untimed ring refused");
    contains(cuxfer_last_reason(), "is not timed", "the reason says why");
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy");

    /* Timing a cycle. */
    memset(&opt, 0, sizeof opt);
    opt.timing = 1;
    GPU_MUST(cuxfer_ring_create(&ring, 2, 2 * SLOT, SLOT, &opt));
    ok(ring.slots[0].start != NULL && ring.slots[1].start != NULL, "a timing ring has start events");
    if (cuxfer_ring_acquire(&ring, &slot) != cudaSuccess || !slot)
        bail("acquire: %s", cuxfer_last_reason());
    err = cuxfer_ring_slot_ms(slot, CUXFER_WAIT, &ms);
    is_int(cudaErrorInvalidValue, err, "slot_ms before any submission refused");
    fill_tag((unsigned char *)slot->host, 42u);
    GPU_OK(cuxfer_ring_submit(&ring, slot, &job), "submit a timed round trip");
    GPU_OK(cuxfer_ring_slot_ms(slot, CUXFER_WAIT, &ms), "slot_ms waits and times it");
    ok(ms > 0.0f && ms < 10000.0f, "a 64 KiB round trip took %.4f ms (> 0)", (double)ms);
    err = cuxfer_ring_slot_ms(slot, CUXFER_NOWAIT, &ms);
    is_int(cudaSuccess, err, "NOWAIT after completion succeeds");
    ok(has_tag((unsigned char *)slot->host + SLOT, 42u), "the timed round trip is byte-exact");
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy the timing ring");

    /* 8 threads on 4 slots: the lock-free fast path and the sleeping path. */
    GPU_MUST(cuxfer_ring_create(&ring, 4, 2 * SLOT, SLOT, NULL));
    memset(last_tag, 0, sizeof last_tag);
    for (i = 0; i < THREADS; ++i)
        if (pthread_create(&th[i], NULL, producer, (void *)(size_t)i) != 0)
            bail("pthread_create");
    for (i = 0; i < THREADS; ++i)
        pthread_join(th[i], NULL);
    GPU_OK(cuxfer_ring_drain(&ring), "drain after 8 threads");
    is_int(0, errors, "8 threads x %d cycles: every acquire and submit succeeded", ROUNDS);
    is_int(0, overlaps, "never two threads in one slot");
    is_int(0, stale, "every acquire saw its slot's previous round trip complete");
    for (order = 0, i = 0; i < 4; ++i)
        order += !has_tag((unsigned char *)ring.slots[i].host + SLOT, last_tag[i]);
    is_int(0, order, "after the drain every slot holds its last round trip");
    is_int(THREADS * ROUNDS, (long long)(ring.slots[0].uses + ring.slots[1].uses +
                                          ring.slots[2].uses + ring.slots[3].uses),
           "every cycle was submitted");
    is_int(0, ring.waiters, "no thread left asleep");
    GPU_OK(cuxfer_ring_destroy(&ring), "destroy");
    done_testing();
}
