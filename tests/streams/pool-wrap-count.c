/* SPDX-License-Identifier: MIT */
/* cuxfer_stream_pool_wrap refuses a count outside 1..CUXFER_STREAM_POOL_MAX
 * before it reads the caller's array (man 3 cuxfer_stream_pool, RETURN
 * VALUES): with count past the limit the array may be shorter than count,
 * and reading count entries of it to look for default streams reads past
 * its end.  Here the array is long enough to read safely and holds stream 0
 * at index 1, so a wrap that reads before it checks the count says
 * "streams[1] is stream 0" instead of naming the count.  Pure CPU: the
 * refusals come before any CUDA call. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include <cuxfer.h>

#define N (CUXFER_STREAM_POOL_MAX + 1)

int main(void)
{
    static cudaStream_t streams[N];
    cuxfer_stream_pool p;
    cudaError_t err;
    char want[64];
    int i;

    plan(4);
    for (i = 0; i < N; ++i)
        streams[i] = (cudaStream_t)(uintptr_t)(0x1000 + 16 * i); /* never used */
    streams[1] = 0;

    cuxfer_clear_reason();
    err = cuxfer_stream_pool_wrap(&p, streams, N);
    is_int(cudaErrorInvalidValue, err, "count %d is refused", N);
    (void)snprintf(want, sizeof want, "cuxfer_stream_pool_wrap: count %d is outside", N);
    contains(cuxfer_last_reason(), want,
             "the reason names the count, checked before the array is read (\"%s\")",
             cuxfer_last_reason());

    cuxfer_clear_reason();
    err = cuxfer_stream_pool_wrap(&p, streams, 2);
    is_int(cudaErrorInvalidValue, err, "a valid count over an array holding stream 0 is refused");
    contains(cuxfer_last_reason(), "streams[1] is stream 0", "naming its index (\"%s\")",
             cuxfer_last_reason());
    done_testing();
}
