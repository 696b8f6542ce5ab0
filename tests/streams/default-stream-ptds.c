/* SPDX-License-Identifier: MIT */
/* The per-thread unit of default-stream-guard: built with the per-thread
 * default stream, where 0 is the calling thread's own stream, which the
 * guard must let through. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuxfer.h>

cudaError_t ptds_copy_on_zero(void *dst, const void *src, size_t bytes);

cudaError_t ptds_copy_on_zero(void *dst, const void *src, size_t bytes)
{
    return cuxfer_copy_async(dst, src, bytes, 0);
}
