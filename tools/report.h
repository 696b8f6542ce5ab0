/* SPDX-License-Identifier: MIT */
/*
 * report.h - what roicopy prints on standard output: the plan of --dry-run
 * (text or --json) of single ROIs and of many regions (--tiles), and the
 * times of --timing and --json after a run.
 *
 * The copies (roicopy-gpu.c, roicopy-ring.c, roicopy-tiles.c, timing.c)
 * plan, measure and fill these structs; report.c only prints them.  It
 * calls nothing of roicopy's but frames.c and the image files below it.
 */
#ifndef ROICOPY_REPORT_H
#define ROICOPY_REPORT_H

#include <stddef.h>

#include "frames.h"

/* ---- the plan (--dry-run) ------------------------------------------------ */

/* The plan as text, or (--json) as one JSON object, on stdout. */
void roicopy_report_plan(const roicopy_plan *p);
void roicopy_report_plan_json(const roicopy_plan *p);

/* The plan of a many-region run (roicopy-tiles.c) as text, or (--json) as
 * one JSON object, on stdout. */
void roicopy_report_tiles(const roicopy_tiles_plan *tp);
void roicopy_report_tiles_json(const roicopy_tiles_plan *tp);

/* ---- times ------------------------------------------------------------- */

/* Timing results, in ms: best and sum over --repeat. */
typedef struct stage_time {
    float best;
    double sum;
} stage_time;

/* Count one more measurement of ms. */
void roicopy_stage_add(stage_time *t, float ms);

/* The stages --timing reports for one input. */
enum stage { ST_H2D, ST_D2H, ST_TOTAL, ST_LINK_H2D, ST_LINK_D2H, ST_LINK_BOTH, ST_COUNT };

/* One device's share of a one-input run. */
typedef struct part_times {
    int device;
    int nbands;
    size_t bytes;                /* each way */
    stage_time t[ST_COUNT];
} part_times;

/* A one-input run: the frame, its bands and every stage's times, for the
 * whole run and for each device of p->devices (parts[k] is devices[k]). */
typedef struct single_times {
    int nbands;
    size_t bytes;                /* ROI bytes, each way */
    size_t src_pitch, dev_pitch; /* the host image's, device 0's */
    stage_time t[ST_COUNT];
    part_times parts[ROICOPY_MAX_DEVICES];
} single_times;

/* --timing (text) and --json of a one-input run, on stdout. */
void roicopy_report_single(const roicopy_plan *p, const roicopy_frame *f,
                           const single_times *r);

/* --json under -k, for a one-input run whose frame failed to decode
 * (its first message `why`, NULL when out of memory): the object that
 * stands for the frame's, with "frames":0 and the frame counted in
 * "failed". */
void roicopy_report_undecoded(const roicopy_plan *p, const roicopy_frame *f,
                              const char *why);

/* --json of a run with nothing to copy (every output there already, an
 * empty --files-from, or -k with every input failed at the checks):
 * {"frames":0,"failed":N,"skipped":M}. */
void roicopy_report_nothing(const roicopy_plan *p);

/* A run through the ring: the GPU span of all frames, the wall time with
 * the file I/O, the bidirectional link (link_bytes up and down at once on
 * every device in bidir_ms) and --repeat's replay passes. */
typedef struct ring_times {
    float span_ms;
    double wall_ms;
    float bidir_ms;
    size_t link_bytes;
    stage_time replay;           /* --repeat: passes without file I/O */
    size_t replay_bytes;         /* moved by one replay pass, both ways */
    size_t undecoded;            /* -k: frames skipped, not decoded */
} ring_times;

/* --timing (text) and --json of a ring run, on stdout. */
void roicopy_report_ring(const roicopy_plan *p, const ring_times *r);

/* A monotonic clock, in ms, for wall times. */
double roicopy_now_ms(void);

/* ROICOPY_TRACE set: "roicopy: trace: <ms since the first trace> <what>"
 * on stderr, from any thread (the phases of a run, for doc/PERF.md). */
void roicopy_trace(const char *what);

/* The end of the run: standard output flushed and closed; when that
 * fails (a full disk, /dev/full, a closed pipe), say so and return
 * RC_OUTPUT if status is better, else status. */
int roicopy_report_close_stdout(int status);

/* -k: after a batch, when `skipped` frames could not be decoded (each
 * already reported), one line that says so; RC_INPUT, or RC_OK when none
 * was. */
int roicopy_report_skipped(const roicopy_plan *p, size_t skipped);

#endif
