/* SPDX-License-Identifier: MIT */
/* With no CUXFER_ON_ERROR defined, a failing CUXFER_CHECK prints its report
 * on stderr and aborts the process. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include <cuxfer.h>

static cudaError_t fail_please(void) { return cudaErrorInvalidPitchValue; }

int main(void)
{
    int fds[2], status = 0;
    char buf[2048];
    ssize_t got, n = 0;
    pid_t pid;

    plan(4);
    if (pipe(fds) != 0)
        bail("pipe failed");
    pid = fork();
    if (pid < 0)
        bail("fork failed");
    if (pid == 0) {
        struct rlimit none = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &none);
        dup2(fds[1], 2);
        close(fds[0]);
        CUXFER_CHECK(fail_please());
        _exit(0);
    }
    close(fds[1]);
    while ((got = read(fds[0], buf + n, sizeof buf - 1 - (size_t)n)) > 0)
        n += got;
    buf[n < 0 ? 0 : n] = '\0';
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status), "the process was killed by a signal");
    is_int(SIGABRT, WIFSIGNALED(status) ? WTERMSIG(status) : 0, "by SIGABRT");
    contains(buf, "fail_please() failed: cudaErrorInvalidPitchValue",
             "the report was printed first");
    contains(buf, "check-aborts.c:", "with file and line");
    done_testing();
}
