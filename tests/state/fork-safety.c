/* SPDX-License-Identifier: MIT */
/* fork while other threads use cuxfer: the child gets fresh locks and
 * empty caches, so its own cuxfer calls complete.  The threads classify
 * pointers (registry readers and the per-thread cache), write reasons,
 * and with a device pin and unpin their own ranges (the registry's
 * writers, under its lock); every child must finish its own calls within
 * 3 seconds.  Without the pthread_atfork handlers a child forked while a
 * writer held the lock (or left the sequence count odd) waited forever:
 * about 9 forks in 200.  CUDA is not supported in a fork child, so with a
 * device the child makes no call that may reach the driver.  The same
 * with the registry's writers driven directly, without a device: in
 * tests/state/internals.c. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "fork-children.h"
#include <cuxfer.h>

#define FORKS 200
#define THREADS 4

static int stop, have_gpu;
static char ranges[THREADS][8192] __attribute__((aligned(4096)));

static void *hammer(void *arg)
{
    char *mine = (char *)arg;
    unsigned i = 0;
    cuxfer_view v;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (have_gpu && cuxfer_host_register(mine, 4096, cudaHostRegisterDefault) == cudaSuccess) {
            (void)cuxfer_memory_kind(mine + (i++ % 4096));
            (void)cuxfer_host_unregister(mine);
        }
        (void)cuxfer_memory_kind(mine + (i++ % 4096));
        (void)cuxfer_memory_kind(ranges);
        (void)cuxfer_view_wrap(&v, mine, 8, 9 + (i % 100), 1, 1); /* refused */
    }
    return NULL;
}

/* In the child: cuxfer's CPU side works. */
static int child(void)
{
    static char local[256];
    char want[64];
    cuxfer_view v;
    alarm(3); /* a deadlock ends as SIGALRM */
    if (!have_gpu && cuxfer_memory_kind(local + 5) == CUXFER_MEMORY_PINNED)
        return 2;
    if (cuxfer_view_wrap(&v, local, 8, 4343, 1, 1) == cudaSuccess)
        return 3;
    snprintf(want, sizeof want, "row of %d bytes", 4343);
    return strstr(cuxfer_last_reason(), want) ? 0 : 4;
}

int main(void)
{
    int n = 0;
    fork_tally tally;
    plan(3);
    have_gpu = cuxfer_device_count(&n) == cudaSuccess && n > 0;
    if (!have_gpu)
        diag("no CUDA device: the threads only read and write reasons (%s)", cuxfer_last_reason());
    tally = fork_children(FORKS, child, THREADS, hammer, ranges[0], sizeof ranges[0], &stop);
    is_int(0, tally.hung, "no child hung in cuxfer (of %d forks)", FORKS);
    is_int(0, tally.wrong, "every child's own cuxfer calls worked");
    is_int(FORKS, tally.clean, "every child exited 0");
    done_testing();
}
