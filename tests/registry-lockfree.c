/* SPDX-License-Identifier: MIT */
/* The classification registry's readers take no lock (issue 17, item 6):
 * a lookup completes while the writers' mutex is held, and 4 readers
 * racing a writer that adds and removes other ranges never get a wrong
 * answer for the ranges that stay.  Pure CPU: fake ranges of a static
 * arena are registered directly, no CUDA call is made. */
#include <time.h>
#include "tap.h"
#include <cuxfer.h>

static char arena[64][4096];
static int stop, done_flag;
static long wrong, lookups;

static void *one_lookup(void *p)
{
    (void)p;
    if (cuxfer_impl_lookup(arena[3] + 100, NULL) == CUXFER_MEMORY_PINNED)
        __atomic_store_n(&done_flag, 1, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&done_flag, 2, __ATOMIC_RELEASE);
    return NULL;
}

static void *reader(void *p)
{
    long n = 0;
    (void)p;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        int i = (int)(n++ % 32);
        int dev = -2;
        if (cuxfer_impl_lookup(arena[i] + 10, &dev) != CUXFER_MEMORY_PINNED || dev != -1)
            __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
        if ((n & 255) == 0)
            __atomic_add_fetch(&lookups, 256, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    pthread_t th[4], t1;
    struct timespec ms = {0, 1000000};
    int i, r, waited;
    plan(0);
    for (i = 0; i < 32; ++i)
        cuxfer_impl_reg_add(arena[i], 4096, CUXFER_MEMORY_PINNED, -1);
    is_int(32, cuxfer_impl_reg_n, "32 ranges registered");

    /* A reader finishes while a writer holds the mutex. */
    pthread_mutex_lock(&cuxfer_impl_reg_mu);
    if (pthread_create(&t1, NULL, one_lookup, NULL) != 0)
        bail("pthread_create");
    for (waited = 0; waited < 5000 && !__atomic_load_n(&done_flag, __ATOMIC_ACQUIRE); ++waited)
        nanosleep(&ms, NULL);
    is_int(1, __atomic_load_n(&done_flag, __ATOMIC_ACQUIRE),
           "a lookup completes, right, while the registry's mutex is held");
    pthread_mutex_unlock(&cuxfer_impl_reg_mu);
    pthread_join(t1, NULL);

    /* Readers racing a writer. */
    for (i = 0; i < 4; ++i)
        if (pthread_create(&th[i], NULL, reader, NULL) != 0)
            bail("pthread_create");
    /* At least 20000 changes, and until the readers did 200000 lookups. */
    for (r = 0; r < 20000 || __atomic_load_n(&lookups, __ATOMIC_RELAXED) < 200000; ++r) {
        int j = 32 + r % 32;
        cuxfer_impl_reg_add(arena[j], 4096, CUXFER_MEMORY_DEVICE, 0);
        cuxfer_impl_reg_remove(arena[j]);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < 4; ++i)
        pthread_join(th[i], NULL);
    ok(lookups >= 200000, "the readers did %ld lookups during %d adds and removes", lookups, r);
    is_int(0, wrong, "none of them was wrong");
    is_int(32, cuxfer_impl_reg_n, "the 32 lasting ranges remain");
    is_int(CUXFER_MEMORY_UNKNOWN, cuxfer_impl_lookup(arena[40], NULL),
           "a removed range is forgotten");
    done_testing();
}
