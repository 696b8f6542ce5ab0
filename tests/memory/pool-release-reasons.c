/* SPDX-License-Identifier: MIT */
/* cuxfer_pinned_pool_release's refusals name the argument that is wrong
 * (man 3 cuxfer_pinned_pool, RETURN VALUES: "a pointer is NULL, the pool
 * was not created, the block was not acquired"; man 3 cuxfer, ERRORS: the
 * reason names the offending values): a NULL block on a created pool is a
 * NULL block, not an uncreated pool, and a NULL pool is the pool.  Pure
 * CPU: cuxfer_pinned_pool_create makes no CUDA call and every refusal
 * comes before one. */
#include <string.h>

#include "tap.h"
#include <cuxfer.h>

/* The reason past "cuxfer_pinned_pool_release: ", whose call name holds "pool". */
static const char *why(void)
{
    const char *r = cuxfer_last_reason(), *c = strstr(r, ": ");
    return c ? c + 2 : r;
}

int main(void)
{
    cuxfer_pinned_pool pool, zero;
    cuxfer_pinned_block blk;
    cudaError_t err;

    plan(9);
    memset(&zero, 0, sizeof zero);
    memset(&blk, 0, sizeof blk);
    is_int(cudaSuccess, cuxfer_pinned_pool_create(&pool, NULL), "a pool is created without a device");

    cuxfer_clear_reason();
    err = cuxfer_pinned_pool_release(&pool, NULL, CUXFER_POOL_IDLE);
    is_int(cudaErrorInvalidValue, err, "a NULL block is refused");
    contains(why(), "block", "the reason names the block (\"%s\")", cuxfer_last_reason());
    ok(strstr(why(), "pool not created") == NULL, "and does not call the created pool uncreated");

    cuxfer_clear_reason();
    err = cuxfer_pinned_pool_release(NULL, &blk, CUXFER_POOL_IDLE);
    is_int(cudaErrorInvalidValue, err, "a NULL pool is refused");
    contains(why(), "pool", "the reason names the pool (\"%s\")", cuxfer_last_reason());

    cuxfer_clear_reason();
    err = cuxfer_pinned_pool_release(&zero, &blk, CUXFER_POOL_IDLE);
    contains(cuxfer_last_reason(), "pool not created",
             "a zeroed pool is named as not created (\"%s\")", cuxfer_last_reason());

    cuxfer_clear_reason();
    err = cuxfer_pinned_pool_release(&pool, &blk, CUXFER_POOL_IDLE);
    contains(cuxfer_last_reason(), "block not acquired",
             "a zeroed block on a created pool is not acquired (\"%s\")", cuxfer_last_reason());

    is_int(cudaSuccess, cuxfer_pinned_pool_destroy(&pool), "the empty pool is destroyed");
    done_testing();
}
