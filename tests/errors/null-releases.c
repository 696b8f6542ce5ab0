/* SPDX-License-Identifier: MIT */
/* man 3 cuxfer, ERRORS: the calls that release an object or only wait for
 * it succeed doing nothing when given NULL or an object never created
 * (zeroed), as free(3) does: every *_destroy call, cuxfer_view_free, the
 * three memory frees, cuxfer_pinned_pool_trim, cuxfer_stream_pool_sync and
 * cuxfer_ring_drain.  Each leaves the reason as it was (a success) and a
 * zeroed object zeroed.  They make no CUDA call on either, so the test
 * runs with or without a device. */
#include <string.h>

#include "tap.h"
#include <cuxfer.h>

/* A reason set by a refusal, which the successes below must keep. */
static const char kept[] = "cuxfer_device_count: count is NULL";

/* CALL on NULL, then on a zeroed object of TYPE. */
#define BOTH(name, type, call)                                                 \
    do {                                                                       \
        type *np_ = NULL, z_;                                                  \
        (void)cuxfer_device_count(NULL);                                       \
        ok(call(np_) == cudaSuccess && strcmp(cuxfer_last_reason(), kept) == 0, \
           "%s(NULL) succeeds, the reason kept", name);                        \
        memset(&z_, 0, sizeof z_);                                             \
        ok(call(&z_) == cudaSuccess && all_bytes(&z_, sizeof z_, 0) &&               \
               strcmp(cuxfer_last_reason(), kept) == 0,                      \
           "%s on a zeroed object succeeds and leaves it zeroed", name);       \
    } while (0)

int main(void)
{
    plan(30);
    (void)cuxfer_device_count(NULL);
    is_string(kept, cuxfer_last_reason(), "the reason to keep is set");
    BOTH("cuxfer_graph_destroy", cuxfer_graph, cuxfer_graph_destroy);
    BOTH("cuxfer_latch_destroy", cuxfer_latch, cuxfer_latch_destroy);
    BOTH("cuxfer_pinned_pool_destroy", cuxfer_pinned_pool, cuxfer_pinned_pool_destroy);
    BOTH("cuxfer_pinned_pool_trim", cuxfer_pinned_pool, cuxfer_pinned_pool_trim);
    BOTH("cuxfer_plan2d_destroy", cuxfer_plan2d, cuxfer_plan2d_destroy);
    BOTH("cuxfer_ring_destroy", cuxfer_ring, cuxfer_ring_destroy);
    BOTH("cuxfer_ring_drain", cuxfer_ring, cuxfer_ring_drain);
    BOTH("cuxfer_rois_destroy", cuxfer_rois, cuxfer_rois_destroy);
    BOTH("cuxfer_stager_destroy", cuxfer_stager, cuxfer_stager_destroy);
    BOTH("cuxfer_stream_pool_destroy", cuxfer_stream_pool, cuxfer_stream_pool_destroy);
    BOTH("cuxfer_stream_pool_sync", cuxfer_stream_pool, cuxfer_stream_pool_sync);
    BOTH("cuxfer_timer_destroy", cuxfer_timer, cuxfer_timer_destroy);
    BOTH("cuxfer_event_pool_destroy", cuxfer_event_pool, cuxfer_event_pool_destroy);
    BOTH("cuxfer_view_free", cuxfer_view, cuxfer_view_free);
    (void)cuxfer_device_count(NULL);
    ok(cuxfer_host_free(NULL) == cudaSuccess && cuxfer_device_free(NULL) == cudaSuccess &&
           cuxfer_managed_free(NULL) == cudaSuccess && strcmp(cuxfer_last_reason(), kept) == 0,
       "cuxfer_host_free, cuxfer_device_free and cuxfer_managed_free of NULL succeed");
    done_testing();
}
