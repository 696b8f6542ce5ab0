/* SPDX-License-Identifier: MIT */
/* The stager's refusals that happen on the CPU, before any CUDA call: option
 * ranges and defaults, every bad argument of the stage calls (each with its
 * reason), calls on a NULL, zeroed or destroyed stager, destroy of a zeroed
 * stager.  They behave the same with or without a GPU. */
#include <stdint.h>
#include <unistd.h>

#include "tap.h"
#include <cuxfer.h>

static unsigned char host[8192], other[8192];

/* Options out of range, one field at a time (the others 0: defaults), and
 * the reason (whole, or a part of it; NULL: not checked). */
static const struct bad_option {
    int slots;
    size_t slot_bytes;
    int threads, strategy;
    const char *what, *reason;
    int whole;
    const char *names;
} bad_options[] = {
    {-1, 0, 0, 0, "slots -1 refused", "cuxfer_stager_options: slots -1 is outside 1..64", 1,
     "reason names slots and the range"},
    {65, 0, 0, 0, "slots 65 refused", NULL, 0, NULL},
    {0, 4095, 0, 0, "slot_bytes 4095 refused",
     "cuxfer_stager_options: slot_bytes 4095 is outside 4096..1073741824", 1,
     "reason names slot_bytes and the range"},
    {0, ((size_t)1 << 30) + 1, 0, 0, "slot_bytes 1 GiB + 1 refused", NULL, 0, NULL},
    {0, 0, -2, 0, "threads -2 refused", "cuxfer_stager_options: threads -2 is outside 1..64", 1,
     "reason names threads and the range"},
    {0, 0, 65, 0, "threads 65 refused", NULL, 0, NULL},
    {0, 0, 0, CUXFER_STAGE_DIRECT, "strategy DIRECT cannot be asked for",
     "strategy 3 is not CUXFER_STAGE_AUTO", 0, "reason names the strategy"},
    {0, 0, 0, -1, "strategy -1 refused", NULL, 0, NULL},
};

static void options(void)
{
    cuxfer_stager_options in, out;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t i;
    int want_threads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;

    memset(&out, 0x55, sizeof out);
    is_int(cudaSuccess, cuxfer_stager_options_resolve(&out, NULL), "NULL options resolve");
    is_int(4, out.slots, "default: 4 slots");
    ok(out.slot_bytes == (size_t)16 << 20, "default: 16 MiB per slot (%zu)", out.slot_bytes);
    is_int(want_threads, out.threads, "default: threads = online cores capped at 16");
    is_int(CUXFER_STAGE_AUTO, out.strategy, "default: strategy AUTO");

    memset(&in, 0, sizeof in);
    memset(&out, 0x55, sizeof out);
    is_int(cudaSuccess, cuxfer_stager_options_resolve(&out, &in), "{0} options resolve");
    ok(out.slots == 4 && out.slot_bytes == (size_t)16 << 20 && out.threads == want_threads &&
           out.strategy == CUXFER_STAGE_AUTO,
       "{0} means the same defaults");

    in.slots = 2;
    in.slot_bytes = 4096;
    in.threads = 3;
    in.strategy = CUXFER_STAGE_REGISTER;
    is_int(cudaSuccess, cuxfer_stager_options_resolve(&out, &in), "explicit options resolve");
    ok(out.slots == 2 && out.slot_bytes == 4096 && out.threads == 3 &&
           out.strategy == CUXFER_STAGE_REGISTER,
       "explicit values are kept");
    in.slots = 64;
    in.slot_bytes = (size_t)1 << 30;
    in.threads = 64;
    in.strategy = CUXFER_STAGE_COPY;
    is_int(cudaSuccess, cuxfer_stager_options_resolve(&out, &in), "the maxima are accepted");

    for (i = 0; i < sizeof bad_options / sizeof bad_options[0]; ++i) {
        const struct bad_option *c = &bad_options[i];
        memset(&in, 0, sizeof in);
        in.slots = c->slots;
        in.slot_bytes = c->slot_bytes;
        in.threads = c->threads;
        in.strategy = c->strategy;
        is_int(cudaErrorInvalidValue, cuxfer_stager_options_resolve(&out, &in), "%s", c->what);
        if (c->reason && c->whole)
            is_string(c->reason, cuxfer_last_reason(), "%s", c->names);
        else if (c->reason)
            contains(cuxfer_last_reason(), c->reason, "%s", c->names);
    }
    is_int(cudaErrorInvalidValue, cuxfer_stager_options_resolve(NULL, NULL), "NULL out refused");
    contains(cuxfer_last_reason(), "out is NULL", "reason names out");
}

static void create_destroy(void)
{
    cuxfer_stager st;
    cuxfer_stager_options o;
    cudaError_t err;

    memset(&st, 0, sizeof st);
    is_int(cudaSuccess, cuxfer_stager_destroy(&st), "destroy of a zeroed stager is safe");
    is_int(cudaSuccess, cuxfer_stager_destroy(&st), "and again");
    is_int(cudaSuccess, cuxfer_stager_destroy(NULL), "destroy of NULL is safe");
    is_int(cudaErrorInvalidValue, cuxfer_stager_create(NULL, NULL), "create(NULL) refused");
    contains(cuxfer_last_reason(), "stager is NULL", "with a reason");

    memset(&o, 0, sizeof o);
    o.threads = 100;
    memset(&st, 0x5a, sizeof st);
    is_int(cudaErrorInvalidValue, cuxfer_stager_create(&st, &o), "create with bad options refused");
    contains(cuxfer_last_reason(), "threads 100 is outside 1..64", "the options' reason");
    ok(all_bytes(&st, sizeof st, 0), "a refused create leaves the stager zeroed");
    is_int(cudaSuccess, cuxfer_stager_destroy(&st), "destroy after a refused create is safe");

    /* With a GPU this works; without one it fails with CUDA's error and a
     * reason, and leaves nothing behind. */
    memset(&o, 0, sizeof o);
    o.slots = 2;
    o.slot_bytes = 65536;
    o.threads = 2;
    cuxfer_clear_reason();
    err = cuxfer_stager_create(&st, &o);
    if (err == cudaSuccess) {
        ok(1, "create works here (a GPU is present)");
        is_int(cudaSuccess, cuxfer_stager_destroy(&st), "and destroy");
    } else {
        ok(cuxfer_last_reason()[0] != '\0', "create without a device fails with a reason: %s",
           cuxfer_last_reason());
        ok(all_bytes(&st, sizeof st, 0), "a failed create leaves the stager zeroed");
    }
    ok(all_bytes(&st, sizeof st, 0), "destroy zeroes the stager");
    is_int(cudaSuccess, cuxfer_stager_destroy(&st), "destroy after that is safe");
}

/* cuxfer_stage_d2h or cuxfer_stage_h2d, on stream 0. */
static cudaError_t stage(int d2h, cuxfer_stager *st, void *dst, const void *src, size_t n)
{
    return d2h ? cuxfer_stage_d2h(st, dst, src, n, (cudaStream_t)0)
               : cuxfer_stage_h2d(st, dst, src, n, (cudaStream_t)0);
}

static const struct bad_arg {
    int d2h, null_stager;
    void *dst;
    const void *src;
    size_t bytes;
    const char *what, *reason; /* reason NULL: not checked */
} bad_args[] = {
    {0, 1, other, host, 16, "h2d with a NULL stager refused", "cuxfer_stage_h2d: stager is NULL"},
    {1, 1, host, other, 16, "d2h with a NULL stager refused", "cuxfer_stage_d2h: stager is NULL"},
    {0, 0, NULL, host, 16, "h2d: NULL dst_device refused", "cuxfer_stage_h2d: dst_device is NULL"},
    {0, 0, other, NULL, 16, "h2d: NULL src_pageable refused",
     "cuxfer_stage_h2d: src_pageable is NULL"},
    {1, 0, NULL, other, 16, "d2h: NULL dst_pageable refused",
     "cuxfer_stage_d2h: dst_pageable is NULL"},
    {1, 0, host, NULL, 16, "d2h: NULL src_device refused", "cuxfer_stage_d2h: src_device is NULL"},
    {0, 0, other, host, 0, "h2d: 0 bytes refused", "cuxfer_stage_h2d: bytes is 0: nothing to stage"},
    {1, 0, host, other, 0, "d2h: 0 bytes refused", NULL},
};

static void stage_arguments(void)
{
    cuxfer_stager st;
    void *wrap = (void *)(UINTPTR_MAX - 10);
    size_t i;

    memset(&st, 0, sizeof st);
    /* A NULL stager, then NULL arguments and 0 bytes: argument checks come
     * before the stager's state, so a zeroed stager still reports the bad
     * argument. */
    for (i = 0; i < sizeof bad_args / sizeof bad_args[0]; ++i) {
        const struct bad_arg *c = &bad_args[i];
        is_int(cudaErrorInvalidValue, stage(c->d2h, c->null_stager ? NULL : &st, c->dst, c->src,
                                            c->bytes),
               "%s", c->what);
        if (c->reason)
            is_string(c->reason, cuxfer_last_reason(), "reason");
    }
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, other, wrap, 11, (cudaStream_t)0),
           "h2d: a source range that wraps refused");
    contains(cuxfer_last_reason(), "cuxfer_stage_h2d: src_pageable", "reason names the source");
    contains(cuxfer_last_reason(), "+ 11 bytes wraps around the address space",
             "and the byte count");
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, wrap, host, 11, (cudaStream_t)0),
           "h2d: a destination range that wraps refused");
    contains(cuxfer_last_reason(), "cuxfer_stage_h2d: dst_device", "reason names the destination");
    is_int(cudaErrorInvalidValue, cuxfer_stage_d2h(&st, wrap, other, 11, (cudaStream_t)0),
           "d2h: a destination range that wraps refused");
    contains(cuxfer_last_reason(), "cuxfer_stage_d2h: dst_pageable", "reason names it");
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, other, wrap, 10, (cudaStream_t)0),
           "h2d: a range ending at the top of the address space passes the wrap check");
    is_string("cuxfer_stage_h2d: the stager was not created (or was destroyed)",
              cuxfer_last_reason(), "(refused for the zeroed stager instead)");
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, host + 100, host, 101, (cudaStream_t)0),
           "h2d: overlap by one byte refused");
    contains(cuxfer_last_reason(), "overlap (101 bytes)", "reason says overlap");
    is_int(cudaErrorInvalidValue, cuxfer_stage_d2h(&st, host, host + 50, 51, (cudaStream_t)0),
           "d2h: overlap refused");
    contains(cuxfer_last_reason(), "cuxfer_stage_d2h: dst_pageable", "reason names both sides");
    contains(cuxfer_last_reason(), "src_device", "(src_device)");

    /* Good arguments, no stager. */
    is_int(cudaErrorInvalidValue, cuxfer_stage_h2d(&st, host + 100, host, 100, (cudaStream_t)0),
           "h2d: adjacent ranges pass the checks, then a zeroed stager is refused");
    is_string("cuxfer_stage_h2d: the stager was not created (or was destroyed)",
              cuxfer_last_reason(), "reason");
    is_int(cudaErrorInvalidValue, cuxfer_stage_d2h(&st, host, other, sizeof host, (cudaStream_t)0),
           "d2h on a zeroed stager refused");
    is_string("cuxfer_stage_d2h: the stager was not created (or was destroyed)",
              cuxfer_last_reason(), "reason");

    is_int(cudaErrorInvalidValue, cuxfer_stager_wait(NULL, 0), "wait(NULL) refused");
    is_string("cuxfer_stager_wait: stager is NULL", cuxfer_last_reason(), "reason");
    is_int(cudaErrorInvalidValue, cuxfer_stager_wait(&st, -1),
           "wait on a zeroed stager refused, even without a time limit");
    is_string("cuxfer_stager_wait: the stager was not created (or was destroyed)",
              cuxfer_last_reason(), "reason");
    is_int(cudaErrorInvalidValue, cuxfer_stager_query(&st), "query on a zeroed stager refused");
    is_int(cudaErrorInvalidValue, cuxfer_stager_query(NULL), "query(NULL) refused");
    ok(all_bytes(&st, sizeof st, 0), "refused calls leave the stager untouched");
}

int main(void)
{
    plan(0);
    is_int(0, CUXFER_STAGE_AUTO, "CUXFER_STAGE_AUTO is 0 (the zero option)");
    ok(CUXFER_STAGE_COPY != CUXFER_STAGE_REGISTER && CUXFER_STAGE_COPY != CUXFER_STAGE_AUTO &&
           CUXFER_STAGE_DIRECT != CUXFER_STAGE_COPY && CUXFER_STAGE_DIRECT != CUXFER_STAGE_REGISTER,
       "the strategies are distinct");
    options();
    create_destroy();
    stage_arguments();
    done_testing();
}
