/* SPDX-License-Identifier: MIT */
/* cuxfer_managed_alloc(3): "Errors of the CUDA calls themselves are
 * returned with a reason naming them, and cleared from the runtime's last
 * error": a refused cudaMallocManaged comes back as it is, its reason
 * naming cudaMallocManaged and the bytes, *p NULL and nothing left for
 * cudaGetLastError(); a request above the free memory is refused before
 * it with both numbers.  No device needed: the test is linked with
 * -Wl,--wrap for the runtime calls cuxfer_managed_alloc makes. */
#include <stdio.h>
#include <string.h>

#define STAND_IN_UNCAPTURED
#define STAND_IN_LAST_ERROR
#include "stand-ins.h"
#include "tap.h"
#include <cuxfer.h>

static size_t free_bytes = (size_t)1 << 30;
static int mallocs;

WRAP(cudaError_t, cudaMemGetInfo, (size_t *free_b, size_t *total_b))
{
    *free_b = free_bytes;
    *total_b = (size_t)1 << 30;
    return cudaSuccess;
}

WRAP(cudaError_t, cudaMallocManaged, (void **p, size_t bytes, unsigned flags))
{
    (void)bytes;
    (void)flags;
    ++mallocs;
    *p = NULL;
    return stand_in_error = cudaErrorMemoryAllocation;
}

int main(void)
{
    void *p = (void *)&p;
    cudaError_t err;

    plan(7);
    cuxfer_clear_reason();
    err = cuxfer_managed_alloc(&p, 16, 4, 0);
    is_int(cudaErrorMemoryAllocation, err, "a refused cudaMallocManaged is returned as it is");
    contains(cuxfer_last_reason(),
             "cuxfer_managed_alloc: cudaMallocManaged of 64 bytes: cudaErrorMemoryAllocation",
             "with a reason naming the CUDA call and the bytes");
    ok(p == NULL, "*p is NULL");
    is_int(cudaSuccess, stand_in_error, "and nothing is left for cudaGetLastError");

    free_bytes = 32;
    mallocs = 0;
    p = (void *)&p;
    cuxfer_clear_reason();
    err = cuxfer_managed_alloc(&p, 16, 4, 0);
    is_int(cudaErrorMemoryAllocation, err, "more than the device has free is refused");
    contains(cuxfer_last_reason(), "64 bytes requested, only 32 free",
             "the reason gives both numbers");
    ok(p == NULL && mallocs == 0, "nothing is asked of cudaMallocManaged, *p is NULL");
    done_testing();
}
