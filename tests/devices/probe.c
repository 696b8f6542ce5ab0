/* SPDX-License-Identifier: MIT */
/* cuxfer_device_count tells apart no driver, a stub driver and no device,
 * and leaves no sticky error.  Runs everywhere: on a machine without a GPU
 * it checks the failure's shape, with one it checks the count. */
#include "tap.h"
#include <cuxfer.h>

int main(void)
{
    int n = -7, again = -7;
    cudaError_t err, err2;
    /* Without a driver the runtime answers cudaErrorInsufficientDriver to
     * every call, cudaGetLastError included, from the first call on: the
     * probe must add nothing to that baseline. */
    cudaError_t baseline = cudaPeekAtLastError();
    plan(0);
    is_int(cudaErrorInvalidValue, cuxfer_device_count(NULL), "NULL count is refused");
    err = cuxfer_device_count(&n);
    diag("probe: %s (%s), count %d", cudaGetErrorName(err),
         err == cudaSuccess ? "ok" : cuxfer_last_reason(), n);
    is_int(baseline, cudaGetLastError(), "no sticky error after the probe");
    if (err == cudaSuccess) {
        ok(n >= 1, "a device is counted");
        skip(1, "a device is present: no failure reason to check");
    } else {
        is_int(0, n, "count is 0 when the probe fails");
        ok(err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary ||
               err == cudaErrorNoDevice,
           "the failure is one of the three documented causes");
        if (err == cudaErrorInsufficientDriver)
            contains(cuxfer_last_reason(), "driver", "reason: driver");
    }
    err2 = cuxfer_device_count(&again);
    is_int(err, err2, "a second probe agrees");
    is_int(n, again, "and counts the same");
    done_testing();
}
