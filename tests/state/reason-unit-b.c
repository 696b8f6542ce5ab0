/* SPDX-License-Identifier: MIT */
/* The second translation unit of reason-across-units: it fails a cuxfer
 * call here (a ROI 10 elements past a 1920-wide view) and the reason is
 * read in the other unit. */
#include <cuxfer.h>

cudaError_t unit_b_fail(void);
const char *unit_b_reason(void);

cudaError_t unit_b_fail(void)
{
    static unsigned char row[1920];
    cuxfer_view v, sub;
    cuxfer_roi roi = {10, 0, 1920, 1};
    if (cuxfer_view_init(&v, row, sizeof row, sizeof row, 1, 1, CUXFER_MEMORY_PAGEABLE, -1) !=
        cudaSuccess)
        return cudaErrorUnknown;
    return cuxfer_view_sub(&v, roi, &sub);
}

const char *unit_b_reason(void) { return cuxfer_last_reason(); }
