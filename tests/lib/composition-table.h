/* SPDX-License-Identifier: MIT */
/*
 * composition-table.h - what every stream-taking call does on each stream
 * kind: the table of man 3 cuxfer's STREAMS AND CAPTURE, as the
 * composition matrix expects it.  tests/composition/matrix.c derives each
 * cell's expectation from it (refused: must refuse; CUDA: the runtime
 * decides; 0 and 1: cuxfer_stream_is_capturing's answer; any other word:
 * must work), and tests/composition/man-table.c fails when the page's
 * table and this one differ in a row or a cell.  Change both together.
 */
#ifndef CUXFER_TESTS_COMPOSITION_TABLE_H
#define CUXFER_TESTS_COMPOSITION_TABLE_H

#include <string.h>

enum { COL_LEGACY, COL_PERTHREAD, COL_OWN, COL_CAPTURED, COL_DEVICE, COL_COUNT };
static const char *const composition_columns[COL_COUNT] = {"legacy", "per-thread", "own",
                                                           "captured", "device"};
/* call, then one word per column */
static const char *const composition_table[][1 + COL_COUNT] = {
    {"cuxfer_copy_async", "works", "works", "works", "node", "works"},
    {"cuxfer_copy2d_async", "works", "works", "works", "node", "works"},
    {"cuxfer_plan2d_copy_async", "works", "works", "works", "direct", "direct"},
    {"cuxfer_plan2d_calibrate", "works", "works", "works", "refused", "refused"},
    {"cuxfer_pinned_pool_release", "event", "event", "event", "refused", "event"},
    {"cuxfer_timer_start", "works", "works", "works", "refused", "refused"},
    {"cuxfer_timer_stop", "works", "works", "works", "refused", "refused"},
    {"cuxfer_stream_wait", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_stream_wait_all", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_stream_all_wait", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_stream_pool_wait", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_stream_wait_pool", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_ring_wait", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_stream_wait_ring", "works", "works", "works", "fork/join", "works"},
    {"cuxfer_on_complete", "works", "works", "works", "node", "works"},
    {"cuxfer_on_done", "works", "works", "works", "node", "works"},
    {"cuxfer_latch_arm", "works", "works", "works", "node", "refused"},
    {"cuxfer_prefetch", "works", "works", "works", "refused", "works"},
    {"cuxfer_stage_h2d", "works", "works", "works", "refused", "refused"},
    {"cuxfer_stage_d2h", "works", "works", "works", "refused", "refused"},
    {"cuxfer_rois_copy_async", "works", "works", "works", "direct", "direct"},
    {"cuxfer_graph_begin", "refused", "works", "works", "refused", "works"},
    {"cuxfer_graph_launch", "works", "works", "works", "refused", "CUDA"},
    {"cuxfer_stream_is_capturing", "0", "0", "0", "1", "0"},
};
#define COMPOSITION_ROWS ((int)(sizeof composition_table / sizeof composition_table[0]))

/* The row of a call (its name up to the first space or slash), or NULL. */
static const char *const *composition_row(const char *name)
{
    int i;
    size_t n = 0;
    while (name[n] && name[n] != ' ' && name[n] != '/')
        ++n;
    for (i = 0; i < COMPOSITION_ROWS; ++i)
        if (strlen(composition_table[i][0]) == n &&
            strncmp(composition_table[i][0], name, n) == 0)
            return composition_table[i];
    return NULL;
}

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

/* Each call's name: its row of composition_table is the name up to the
 * first space or slash.  cuxfer_copy and cuxfer_copy2d take no stream
 * and have no row: made while a stream is in each state, they work but
 * under a capture, where the runtime decides (CUDA forbids a synchronous
 * copy beside a Global or ThreadLocal capture of the calling thread). */
static const char *const comp_call_name[COMP_CALLS] = {
    "cuxfer_copy_async", "cuxfer_copy2d_async", "cuxfer_plan2d_copy_async",
    "cuxfer_timer_start/stop", "cuxfer_stream_wait", "cuxfer_on_complete", "cuxfer_latch_arm",
    "cuxfer_prefetch", "cuxfer_pinned_pool_release", "cuxfer_stage_h2d/d2h",
    "cuxfer_graph_begin", "cuxfer_graph_launch", "cuxfer_stream_is_capturing",
    "cuxfer_plan2d_calibrate", "cuxfer_rois_copy_async H2D", "cuxfer_rois_copy_async D2H",
    "cuxfer_on_done", "cuxfer_ring_wait/stream_wait_ring", "cuxfer_copy", "cuxfer_copy2d"};

static inline int comp_is_capture(int kind)
{
    return kind == COMP_GLOBAL || kind == COMP_THREADLOCAL || kind == COMP_RELAXED;
}

/* The page's column of a stream kind. */
static inline int comp_column(int kind, int zero_is_legacy)
{
    if (kind == COMP_ZERO)
        kind = zero_is_legacy ? COMP_LEGACY : COMP_PERTHREAD;
    return kind == COMP_LEGACY      ? COL_LEGACY
           : kind == COMP_PERTHREAD ? COL_PERTHREAD
           : comp_is_capture(kind)  ? COL_CAPTURED
           : kind == COMP_OTHERDEV  ? COL_DEVICE
                                    : COL_OWN; /* blocking, non-blocking, held */
}

/* What `call` must do on `kind`: COMP_WORKS, COMP_REFUSES or COMP_EITHER,
 * from the call's row: "refused" must refuse, "CUDA" is the runtime's to
 * decide, every other word must work.  zero_is_legacy: 0 is the legacy
 * stream in the calling unit (else the per-thread one);
 * managed_concurrent: cuxfer_managed_concurrent(dev) (without it
 * cuxfer_prefetch is refused with cudaErrorNotSupported, pages migrating
 * on demand). */
static inline int comp_expect(int call, int kind, int zero_is_legacy, int managed_concurrent)
{
    const char *const *row = composition_row(comp_call_name[call]);
    const char *word;
    if (!row) /* the synchronous copies */
        return comp_is_capture(kind) ? COMP_EITHER : COMP_WORKS;
    word = row[1 + comp_column(kind, zero_is_legacy)];
    if (strcmp(word, "refused") == 0)
        return COMP_REFUSES;
    if (strcmp(word, "CUDA") == 0)
        return COMP_EITHER;
    if (call == COMP_PREFETCH && !managed_concurrent)
        return COMP_EITHER;
    return COMP_WORKS;
}

/* 1 when `call` waits for a stream held by a host function, by design:
 * the calibration times copies on the stream, and cuxfer_rois's GATHER
 * (no copy kernel: rois_kernel 0) puts a download's tiles into the host
 * view before it returns. */
static inline int comp_waits_when_held(int call, int rois_kernel)
{
    return call == COMP_CALIBRATE || (call == COMP_ROIS_D2H && !rois_kernel);
}

#endif
