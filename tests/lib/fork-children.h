/* SPDX-License-Identifier: MIT */
/*
 * fork-children.h - fork_children(): start `threads` threads that run
 * hammer(arena + i * arena_bytes) until *stop is set, fork `forks`
 * children one after another while they run, each child running child()
 * and exiting with its value, then stop and join the threads.  The tally:
 * exit 0 is clean, death by SIGALRM (the child's own alarm) a hang,
 * anything else wrong.  The fork-safety tests (tests/fork-safety.c, the
 * registry half in tests/internals.c) count on it.
 */
#ifndef CUXFER_TESTS_FORK_CHILDREN_H
#define CUXFER_TESTS_FORK_CHILDREN_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

typedef struct fork_tally {
    int clean, hung, wrong;
} fork_tally;

enum { FORK_CHILDREN_MAX_THREADS = 16 };

static TAP_UNUSED fork_tally fork_children(int forks, int (*child)(void), int threads,
                                           void *(*hammer)(void *), char *arena,
                                           size_t arena_bytes, int *stop)
{
    pthread_t th[FORK_CHILDREN_MAX_THREADS];
    fork_tally t = {0, 0, 0};
    int i;
    if (threads > FORK_CHILDREN_MAX_THREADS)
        bail("fork_children: %d threads, at most %d", threads, FORK_CHILDREN_MAX_THREADS);
    for (i = 0; i < threads; ++i)
        if (pthread_create(&th[i], NULL, hammer, arena + (size_t)i * arena_bytes) != 0)
            bail("pthread_create");
    for (i = 0; i < forks; ++i) {
        int status = 0;
        pid_t pid;
        fflush(stdout); /* the child must not print the parent's buffer */
        pid = fork();
        if (pid < 0)
            bail("fork");
        if (pid == 0)
            _exit(child());
        if (waitpid(pid, &status, 0) != pid)
            bail("waitpid");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            ++t.clean;
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            ++t.hung;
        else
            ++t.wrong;
    }
    __atomic_store_n(stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < threads; ++i)
        pthread_join(th[i], NULL);
    return t;
}

#endif
