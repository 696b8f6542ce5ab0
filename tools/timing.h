/* SPDX-License-Identifier: MIT */
/*
 * timing.h - the GPU measurements of --timing and --json that are not the
 * copies themselves: the bidirectional 1D link of every device, the span
 * of a ring's frames, and --repeat's replay passes through the ring.
 * report.c prints what they measure.
 *
 * They call nothing of roicopy's but frames.c, devices.c and report.c;
 * the ring's work comes in as cuxfer_ring_job values, as cuxfer_ring_submit
 * takes it.
 */
#ifndef ROICOPY_TIMING_H
#define ROICOPY_TIMING_H

#include <cuxfer.h>

#include "frames.h"
#include "report.h"

/* The bidirectional link: `bytes` up and down at once on two streams of
 * every device of the plan, all devices at once, plain cudaMemcpyAsync
 * between pinned and device buffers; *ms is the second of two rounds (the
 * first warms the link up).  The status, the message printed. */
int roicopy_measure_bidir(const roicopy_plan *p, size_t bytes, float *ms);

/* After the last submission: stop the span timer once every slot's stream
 * is done (the last frame is not necessarily the last to finish).  Slot 0
 * lives on the home device, with the timer. */
cudaError_t roicopy_stop_span(cuxfer_ring *ring, cuxfer_timer *span,
                              int home);

/* One pass of --repeat: p->nframes submissions in ring order, each slot
 * copying again the frame it last held (last[slot], -1 for none) with
 * jobs[frame] - no file read or written, so the span measures the ring's
 * overlap of uploads and downloads alone.  Adds the pass to t->replay and
 * sets t->replay_bytes.  The status, the message printed. */
int roicopy_replay_pass(const roicopy_plan *p, cuxfer_ring *ring,
                        cuxfer_timer *span, int home, const long *last,
                        const cuxfer_ring_job *jobs, ring_times *t);

#endif
