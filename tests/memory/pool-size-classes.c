/* SPDX-License-Identifier: MIT */
/* The pinned pool's size classes waste at most 12.5% (bytes reserved <=
 * 1.125 x bytes requested) at every size, are monotonic and fit the
 * request; a zeroed pool is destroyed, an uncreated one refused.  Pure
 * CPU. */
#include "tap.h"
#include <cuxfer.h>

int main(void)
{
    size_t n, c, prev = 0, worst_n = 0;
    double worst = 1.0;
    int monotonic = 1;
    unsigned x = 12345;
    plan(0);

    for (n = 1; n <= (1u << 20); ++n) {
        c = cuxfer_pinned_pool_class_size(n);
        if ((double)c / (double)n > worst) {
            worst = (double)c / (double)n;
            worst_n = n;
        }
        if (c < prev || c < n)
            monotonic = 0;
        prev = c;
    }
    ok(worst <= 1.125, "every size 1 B..1 MiB reserves <= 1.125x (worst %.4f at %zu)", worst, worst_n);
    ok(monotonic, "class sizes never shrink and always fit the request");
    for (n = 0; n < 100000; ++n) {
        size_t r;
        x = x * 1103515245u + 12345u;
        r = ((size_t)x << 20 | (x >> 7)) % ((size_t)1 << 40) + 1;
        c = cuxfer_pinned_pool_class_size(r);
        if ((double)c / (double)r > 1.125 || cuxfer_pinned_pool_class_size(c) != c)
            break;
    }
    is_int(100000, (long long)n,
           "random sizes up to 1 TiB stay within 1.125x, in a class of their own size");
    /* The class indexes behind these sizes: tests/state/internals.c. */
    is_int(0, (long long)cuxfer_pinned_pool_class_size(0), "0 bytes: no class");
    is_int(1u << 20, (long long)cuxfer_pinned_pool_class_size(1u << 20), "a power of two is exact");
    is_int(1152 * 1024, (long long)cuxfer_pinned_pool_class_size((1u << 20) + 1),
           "1 MiB + 1 rounds to 1.125 MiB");

    {
        cuxfer_pinned_pool pool;
        cuxfer_pinned_block b;
        cuxfer_pinned_pool_options o;
        memset(&pool, 0, sizeof pool);
        is_int(cudaSuccess, cuxfer_pinned_pool_destroy(&pool), "destroy a zeroed pool");
        is_int(cudaErrorInvalidValue, cuxfer_pinned_pool_acquire(&pool, 10, &b), "acquire from an uncreated pool");
        memset(&o, 0, sizeof o);
        o.flags = 0x40;
        is_int(cudaErrorInvalidValue, cuxfer_pinned_pool_create(&pool, &o), "unknown pool flags refused");
    }
    done_testing();
}
