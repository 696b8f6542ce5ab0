/* SPDX-License-Identifier: MIT */
/*
 * composition-table.h - the composition rules (DESIGN.md, "Composition
 * rules"; man 3 cuxfer, STREAMS AND CAPTURE) as one table: what each
 * stream-taking call of cuxfer.h must do on each stream kind.  The
 * composition matrix (tests/composition-matrix.c) checks every cell of it
 * once; the soak (tests/soak/) predicts every call it makes from it.  One
 * table, so the two cannot disagree.
 *
 * Entries: COMP_WORKS (the call must succeed), COMP_REFUSES (it must
 * refuse, with a reason, leaving a capture valid), COMP_EITHER (either,
 * but a refusal still needs a reason and a valid capture), COMP_CONCURRENT
 * (works where the device has concurrent managed access, else either:
 * prefetch is refused with cudaErrorNotSupported where pages migrate on
 * demand).  The column of stream 0 is the legacy or the per-thread column,
 * by how the calling unit was built (comp_expect's zero_is_legacy).
 */
#ifndef CUXFER_TESTS_COMPOSITION_TABLE_H
#define CUXFER_TESTS_COMPOSITION_TABLE_H

/* Stream kinds, in the order of the matrix's columns. */
enum comp_kind {
    COMP_ZERO,        /* 0: legacy, or per-thread in a per-thread unit */
    COMP_LEGACY,      /* cudaStreamLegacy */
    COMP_PERTHREAD,   /* cudaStreamPerThread */
    COMP_BLOCKING,    /* cudaStreamCreate */
    COMP_NONBLOCKING, /* cudaStreamNonBlocking (and a stream pool's) */
    COMP_GLOBAL,      /* under capture, cudaStreamCaptureModeGlobal */
    COMP_THREADLOCAL, /* under capture, ThreadLocal */
    COMP_RELAXED,     /* under capture, Relaxed */
    COMP_OTHERDEV,    /* a stream of another device than the objects' */
    COMP_HELD,        /* held by a host function of the program */
    COMP_KINDS
};

/* The stream-taking calls (a composite call names its main one). */
enum comp_call {
    COMP_COPY,          /* cuxfer_copy_async */
    COMP_COPY2D,        /* cuxfer_copy2d_async */
    COMP_PLAN2D,        /* cuxfer_plan2d_copy_async */
    COMP_TIMER,         /* cuxfer_timer_start/stop */
    COMP_STREAM_WAIT,   /* cuxfer_stream_wait */
    COMP_ON_COMPLETE,   /* cuxfer_on_complete */
    COMP_LATCH_ARM,     /* cuxfer_latch_arm */
    COMP_PREFETCH,      /* cuxfer_prefetch */
    COMP_POOL_RELEASE,  /* cuxfer_pinned_pool_release */
    COMP_STAGE,         /* cuxfer_stage_h2d, cuxfer_stage_d2h */
    COMP_GRAPH_BEGIN,   /* cuxfer_graph_begin/end/launch */
    COMP_GRAPH_LAUNCH,  /* cuxfer_graph_launch */
    COMP_IS_CAPTURING,  /* cuxfer_stream_is_capturing */
    COMP_CALIBRATE,     /* cuxfer_plan2d_calibrate */
    COMP_ROIS_H2D,      /* cuxfer_rois_copy_async H2D */
    COMP_ROIS_D2H,      /* cuxfer_rois_copy_async D2H */
    COMP_ON_DONE,       /* cuxfer_on_done */
    COMP_RING_FENCE,    /* cuxfer_ring_wait, cuxfer_stream_wait_ring */
    COMP_COPY_SYNC,     /* cuxfer_copy (takes no stream: made while s is in each state) */
    COMP_COPY2D_SYNC,   /* cuxfer_copy2d (likewise) */
    COMP_CALLS
};

#define COMP_WORKS 1
#define COMP_REFUSES (-1)
#define COMP_EITHER 0
#define COMP_CONCURRENT 2

/* held column: does the call wait for a stream held by a host function? */
#define COMP_RETURNS 0   /* returns while the stream is held */
#define COMP_WAITS 1     /* waits by design */
#define COMP_WAITS_GATHER 2 /* waits when cuxfer_rois has no copy kernel (GATHER) */

#define COMP_W COMP_WORKS
#define COMP_R COMP_REFUSES
#define COMP_E COMP_EITHER
#define COMP_C COMP_CONCURRENT

typedef struct comp_rule {
    const char *name;
    signed char kind[COMP_KINDS]; /* COMP_ZERO's entry is unused: see comp_expect */
    signed char held;             /* COMP_RETURNS, COMP_WAITS, COMP_WAITS_GATHER */
} comp_rule;

/*                                 0   leg  ptd  blk  nbl  Glo  TLo  Rel  oth  held */
static const comp_rule comp_rules[COMP_CALLS] = {
    {"cuxfer_copy_async",        {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_copy2d_async",      {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_plan2d_copy_async", {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_timer_start/stop",  {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_stream_wait",       {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_on_complete",       {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_latch_arm",         {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_prefetch",          {0, COMP_C, COMP_C, COMP_C, COMP_C, COMP_E, COMP_E, COMP_E, COMP_E, COMP_C}, COMP_RETURNS},
    {"cuxfer_pinned_pool_release",{0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_stage_h2d/d2h",     {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    /* the legacy stream cannot be captured; nor can a capture begin twice */
    {"cuxfer_graph_begin",       {0, COMP_R, COMP_W, COMP_W, COMP_W, COMP_R, COMP_R, COMP_R, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_graph_launch",      {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_stream_is_capturing",{0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_W, COMP_W, COMP_W, COMP_W, COMP_W}, COMP_RETURNS},
    /* the calibration times copies on the stream */
    {"cuxfer_plan2d_calibrate",  {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_WAITS},
    {"cuxfer_rois_copy_async H2D",{0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    /* GATHER puts a download's tiles into the host view before it returns */
    {"cuxfer_rois_copy_async D2H",{0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_WAITS_GATHER},
    {"cuxfer_on_done",           {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_ring_wait/stream_wait_ring",{0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_copy",              {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
    {"cuxfer_copy2d",            {0, COMP_W, COMP_W, COMP_W, COMP_W, COMP_E, COMP_E, COMP_E, COMP_E, COMP_W}, COMP_RETURNS},
};

static inline int comp_is_capture(int kind)
{
    return kind == COMP_GLOBAL || kind == COMP_THREADLOCAL || kind == COMP_RELAXED;
}

/* What `call` must do on `kind`: COMP_WORKS, COMP_REFUSES or COMP_EITHER.
 * zero_is_legacy: 0 is the legacy stream in the calling unit (else the
 * per-thread one); managed_concurrent: cuxfer_managed_concurrent(dev). */
static inline int comp_expect(int call, int kind, int zero_is_legacy, int managed_concurrent)
{
    int e;
    if (kind == COMP_ZERO)
        kind = zero_is_legacy ? COMP_LEGACY : COMP_PERTHREAD;
    e = comp_rules[call].kind[kind];
    if (e == COMP_CONCURRENT)
        e = managed_concurrent ? COMP_WORKS : COMP_EITHER;
    return e;
}

/* 1 when `call` waits for a stream held by a host function (by design);
 * rois_kernel: the cuxfer_rois plan has its copy kernel. */
static inline int comp_waits_when_held(int call, int rois_kernel)
{
    int h = comp_rules[call].held;
    return h == COMP_WAITS || (h == COMP_WAITS_GATHER && !rois_kernel);
}

#undef COMP_W
#undef COMP_R
#undef COMP_E
#undef COMP_C
#endif
