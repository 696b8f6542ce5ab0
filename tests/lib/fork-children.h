/* SPDX-License-Identifier: MIT */
/*
 * fork-children.h - fork_children(forks, child): fork `forks` children one
 * after another, while the caller's threads go on using cuxfer; each
 * child runs child() and exits with its value.  The tally: exit 0 is
 * clean, death by SIGALRM (the child's own alarm) a hang, anything else
 * wrong.  The fork-safety tests (tests/fork-safety.c, the registry half
 * in tests/internals.c) count on it.
 */
#ifndef CUXFER_TESTS_FORK_CHILDREN_H
#define CUXFER_TESTS_FORK_CHILDREN_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

typedef struct fork_tally {
    int clean, hung, wrong;
} fork_tally;

static TAP_UNUSED fork_tally fork_children(int forks, int (*child)(void))
{
    fork_tally t = {0, 0, 0};
    int i;
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
    return t;
}

#endif
