/* SPDX-License-Identifier: MIT */
/* cuxfer_copy2d_check makes the checks of cuxfer_copy2d_async that need
 * no device (man 3 cuxfer_copy2d_async), and no more: two contiguous views
 * (pitch equal to the row bytes) are copied as one range, whose pitch no
 * device bounds, so a max_pitch below their pitch must not refuse them;
 * a pitched view above max_pitch still is.  An empty copy (width 0, rows
 * of 0 bytes), which cuxfer_copy2d_async accepts without queueing
 * anything, passes too, whatever its pitches: the check's verdict is the
 * copy's.  Pure CPU (the empty copy returns before any CUDA call). */
#include "tap.h"
#include <cuxfer.h>

static unsigned char a[2400 * 4], b[2400 * 4], c[4096 * 4], e[2 * 4096 * 4];

int main(void)
{
    cuxfer_view dst, src, pitched, ed, es;

    plan(6);
    if (cuxfer_view_init(&dst, a, 2400, 800, 4, 3, CUXFER_MEMORY_DEVICE, 0) != cudaSuccess ||
        cuxfer_view_init(&src, b, 2400, 800, 4, 3, CUXFER_MEMORY_PINNED, -1) != cudaSuccess ||
        cuxfer_view_init(&pitched, c, 4096, 800, 4, 3, CUXFER_MEMORY_PINNED, -1) != cudaSuccess)
        bail("cuxfer_view_init: %s", cuxfer_last_reason());

    cuxfer_clear_reason();
    is_int(cudaSuccess, cuxfer_copy2d_check(&dst, &src, 100),
           "contiguous views pass a max_pitch below their pitch (one range) (%s)",
           cuxfer_last_reason());
    is_int(cudaSuccess, cuxfer_copy2d_check(&dst, &src, 0), "and max_pitch 0 checks nothing");
    is_int(cudaErrorInvalidValue, cuxfer_copy2d_check(&dst, &pitched, 100),
           "a pitched source above max_pitch is refused");

    if (cuxfer_view_init(&ed, e, 4096, 0, 4, 3, CUXFER_MEMORY_DEVICE, 0) != cudaSuccess ||
        cuxfer_view_init(&es, e + 4096 * 4, 4096, 0, 4, 3, CUXFER_MEMORY_PINNED, -1) !=
            cudaSuccess)
        bail("cuxfer_view_init (empty): %s", cuxfer_last_reason());
    cuxfer_clear_reason();
    is_int(cudaSuccess, cuxfer_copy2d_async(&ed, &es, (cudaStream_t)0),
           "an empty copy of 4 rows at pitch 4096 is accepted, nothing queued (%s)",
           cuxfer_last_reason());
    cuxfer_clear_reason();
    is_int(cudaSuccess, cuxfer_copy2d_check(&ed, &es, 100),
           "and cuxfer_copy2d_check agrees with a max_pitch below its pitches (%s)",
           cuxfer_last_reason());
    is_int(cudaSuccess, cuxfer_copy2d_check(&es, &ed, 100), "either way");
    done_testing();
}
