/* SPDX-License-Identifier: MIT */
/* fork while other threads use the registry: the child gets a fresh lock
 * and empty caches, so its own registry calls complete.  Without the
 * pthread_atfork handlers a child forked while a writer held the lock (or
 * left the sequence count odd) waited forever: about 9 forks in 200. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "tap.h"
#include <cuxfer.h>

#define FORKS 200
#define THREADS 4

static int stop;
static char ranges[THREADS][4096];

static void *hammer(void *arg)
{
    char *mine = (char *)arg;
    unsigned i = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        cuxfer_impl_reg_add(mine, 4096, CUXFER_MEMORY_PINNED, -1);
        (void)cuxfer_impl_lookup(mine + (i++ % 4096), NULL);
        (void)cuxfer_impl_lookup(ranges, NULL);
        cuxfer_impl_reg_remove(mine);
    }
    return NULL;
}

/* In the child: the registry works and starts empty. */
static int child(void)
{
    static char local[256];
    alarm(3); /* a deadlock ends as SIGALRM */
    if (cuxfer_impl_lookup(ranges[0] + 1, NULL) != CUXFER_MEMORY_UNKNOWN)
        return 2;
    cuxfer_impl_reg_add(local, sizeof local, CUXFER_MEMORY_PINNED, -1);
    if (cuxfer_impl_lookup(local + 5, NULL) != CUXFER_MEMORY_PINNED)
        return 3;
    cuxfer_impl_reg_remove(local);
    (void)cuxfer_impl_fail(cudaErrorInvalidValue, "child");
    return strcmp(cuxfer_last_reason(), "child") == 0 ? 0 : 4;
}

int main(void)
{
    pthread_t t[THREADS];
    int i, clean = 0, hung = 0, wrong = 0;
    plan(3);
    for (i = 0; i < THREADS; ++i)
        if (pthread_create(&t[i], NULL, hammer, ranges[i]) != 0)
            bail("pthread_create");
    for (i = 0; i < FORKS; ++i) {
        int status = 0;
        pid_t pid = fork();
        if (pid < 0)
            bail("fork");
        if (pid == 0)
            _exit(child());
        if (waitpid(pid, &status, 0) != pid)
            bail("waitpid");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            ++clean;
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            ++hung;
        else
            ++wrong;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
    is_int(0, hung, "no child hung in the registry (of %d forks)", FORKS);
    is_int(0, wrong, "every child found an empty, working registry");
    is_int(FORKS, clean, "every child exited 0");
    done_testing();
}
