/* SPDX-License-Identifier: MIT */
/*
 * composition-table.h - what every stream-taking call does on each stream
 * kind: the table of man 3 cuxfer's STREAMS AND CAPTURE, as the
 * composition matrix expects it.  tests/composition-matrix.c derives each
 * cell's expectation from it (refused: must refuse; CUDA: the runtime
 * decides; 0 and 1: cuxfer_stream_is_capturing's answer; any other word:
 * must work), and tests/man-composition-table.c fails when the page's
 * table and this one differ in a row or a cell.  Change both together.
 */
#ifndef CUXFER_TESTS_COMPOSITION_TABLE_H
#define CUXFER_TESTS_COMPOSITION_TABLE_H

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
    {"cuxfer_on_complete", "works", "works", "works", "node", "works"},
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

#endif
