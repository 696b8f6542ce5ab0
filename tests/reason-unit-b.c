/* SPDX-License-Identifier: MIT */
/* The second translation unit of reason-across-units: it fails a cuxfer
 * call here and the reason is read in the other unit. */
#include <cuxfer.h>

cudaError_t unit_b_fail(void);
const char *unit_b_reason(void);

cudaError_t unit_b_fail(void)
{
    return cuxfer_impl_fail(cudaErrorInvalidValue,
                            "ROI x+width %d exceeds image width %d", 1930, 1920);
}

const char *unit_b_reason(void) { return cuxfer_last_reason(); }
