/* SPDX-License-Identifier: MIT */
/* A failing stream is reported, never waited on forever: after a kernel
 * writes to an illegal address, a latch armed behind it returns an error
 * (not success, not a timeout) within a bounded time, the ring's acquire of
 * the slot whose submission held the kernel returns an error, a timer
 * around it cannot be read as a number, and cuxfer_on_done's callback
 * queued behind it runs once, given the stream's error.  The context is poisoned after the
 * fault, so each case runs in a child process of its own (fork before the
 * parent touches CUDA) and reports through a pipe; the parent prints TAP. */
#include "sched-helpers.h"
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>

__global__ void write_illegal(int *p)
{
    *p = 42; /* p is NULL: cudaErrorIllegalAddress */
}

/* What a child reports. */
struct report {
    int reached;                       /* the child got to the end */
    cudaError_t setup;                 /* first setup failure, if any */
    cudaError_t launch, arm, wait, sync;
    cudaError_t submit, acquire1, acquire2;
    cudaError_t timer;
    double wait_ms, acquire_ms, timer_wait_ms, sync_ms, total_ms;
    int slot_handed_out, ms_is_nan, callback_ran;
    int gate_timed_out;                /* the hold ended by its time limit */
    cudaError_t done_status;           /* what cuxfer_on_done's callback was given */
    int done_runs;                     /* how often it ran */
    double done_ms;                    /* how long until it ran */
    char reason[CUXFER_REASON_MAX];
};

/* Load write_illegal before any stream is held: with lazy module loading
 * (the CUDA 12+ default) the first launch of a kernel waits for work in
 * flight, here a host function that waits for the test: 10 s lost, and
 * the hold ended by its time limit instead of the test. */
static cudaError_t load_kernel(void)
{
    int *p = NULL;
    cudaError_t e = cudaMalloc((void **)&p, sizeof *p);
    if (e != cudaSuccess)
        return e;
    write_illegal<<<1, 1>>>(p);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaFree(p);
    return e;
}

#define SETUP(r, expr)                                                         \
    do {                                                                       \
        cudaError_t e_ = (expr);                                               \
        if (e_ != cudaSuccess) {                                               \
            (r)->setup = e_;                                                   \
            return;                                                            \
        }                                                                      \
    } while (0)

static void latch_case(struct report *r)
{
    cudaStream_t s;
    cuxfer_latch l;
    gate g;
    double t0;
    SETUP(r, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    SETUP(r, cuxfer_latch_init(&l));
    SETUP(r, load_kernel());
    /* Hold the stream so the arm is queued before the kernel can fail. */
    SETUP(r, gate_hold(&g, s));
    write_illegal<<<1, 1, 0, s>>>(NULL);
    r->launch = cudaGetLastError();
    r->arm = cuxfer_latch_arm(&l, s);
    gate_open(&g);
    cuxfer_clear_reason();
    t0 = now_ms();
    r->wait = cuxfer_latch_wait(&l, 10000);
    r->wait_ms = now_ms() - t0;
    r->gate_timed_out = __atomic_load_n(&g.timed_out, __ATOMIC_ACQUIRE);
    snprintf(r->reason, sizeof r->reason, "%s", cuxfer_last_reason());
    t0 = now_ms();
    r->sync = cudaStreamQuery(s);
    r->sync_ms = now_ms() - t0;
    r->reached = 1;
}

static cudaError_t launch_illegal(const cuxfer_ring_slot *slot, void *arg)
{
    (void)arg;
    write_illegal<<<1, 1, 0, slot->stream>>>(NULL);
    return cudaGetLastError();
}

static void ring_case(struct report *r)
{
    enum { BYTES = 1 << 20 };
    cuxfer_ring ring;
    cuxfer_ring_slot *slot = NULL, *again = NULL;
    cuxfer_ring_job job;
    double t0;
    SETUP(r, cuxfer_ring_create(&ring, 1, BYTES, BYTES, NULL));
    r->acquire1 = cuxfer_ring_acquire(&ring, &slot);
    if (!slot) {
        r->setup = r->acquire1;
        return;
    }
    fill_pattern(slot->host, BYTES, 9);
    memset(&job, 0, sizeof job);
    job.h2d_bytes = BYTES;
    job.work = launch_illegal;
    job.d2h_bytes = BYTES;
    r->submit = cuxfer_ring_submit(&ring, slot, &job);
    cuxfer_clear_reason();
    t0 = now_ms();
    r->acquire2 = cuxfer_ring_acquire(&ring, &again);
    r->acquire_ms = now_ms() - t0;
    r->slot_handed_out = again == slot;
    snprintf(r->reason, sizeof r->reason, "%s", cuxfer_last_reason());
    r->reached = 1;
}

static void CUDART_CB mark_ran(void *arg)
{
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

static void timer_case(struct report *r)
{
    cudaStream_t s;
    cuxfer_timer t;
    gate g;
    float ms = 1.0f;
    static int ran; /* static: the CUDA thread may look at it late */
    double t0;
    SETUP(r, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    SETUP(r, cuxfer_timer_create(&t));
    SETUP(r, load_kernel());
    SETUP(r, gate_hold(&g, s));
    SETUP(r, cuxfer_timer_start(&t, s));
    write_illegal<<<1, 1, 0, s>>>(NULL);
    r->launch = cudaGetLastError();
    r->arm = cuxfer_on_complete(s, mark_ran, &ran);
    SETUP(r, cuxfer_timer_stop(&t, s));
    gate_open(&g);
    t0 = now_ms();
    r->timer = cuxfer_timer_ms(&t, CUXFER_WAIT, &ms);
    r->timer_wait_ms = now_ms() - t0;
    r->gate_timed_out = __atomic_load_n(&g.timed_out, __ATOMIC_ACQUIRE);
    r->ms_is_nan = isnan(ms);
    t0 = now_ms();
    r->sync = cudaStreamQuery(s);
    r->sync_ms = now_ms() - t0;
    sleep_ms(200);
    r->callback_ran = __atomic_load_n(&ran, __ATOMIC_ACQUIRE);
    r->reached = 1;
}

/* cuxfer_on_done's callback: the status and a count, for the child. */
static struct report *done_report;
static void CUDART_CB done_cb(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    (void)arg;
    done_report->done_status = status;
    __atomic_add_fetch(&done_report->done_runs, 1, __ATOMIC_ACQ_REL);
}

static void done_case(struct report *r)
{
    cudaStream_t s;
    gate g;
    double t0;
    done_report = r;
    r->done_status = cudaSuccess; /* the callback must overwrite it */
    SETUP(r, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    SETUP(r, load_kernel());
    SETUP(r, gate_hold(&g, s));
    write_illegal<<<1, 1, 0, s>>>(NULL);
    r->launch = cudaGetLastError();
    r->arm = cuxfer_on_done(s, done_cb, NULL);
    gate_open(&g);
    t0 = now_ms();
    while (!__atomic_load_n(&r->done_runs, __ATOMIC_ACQUIRE) && now_ms() - t0 < 10000.0)
        sleep_ms(1);
    r->done_ms = now_ms() - t0;
    r->gate_timed_out = __atomic_load_n(&g.timed_out, __ATOMIC_ACQUIRE);
    r->sync = cudaStreamQuery(s);
    sleep_ms(200); /* a second run would show */
    r->reached = 1;
}

/* Run fn in a child and read its report (40 s bound; a child that does
 * not report in time is killed).  The child is not reaped here: tearing
 * down a context that faulted can take seconds, during which the next
 * child already runs.  Returns the pid; *got_report says whether a whole
 * report came. */
static pid_t run_child(void (*fn)(struct report *), struct report *r, const char *name,
                       int *got_report)
{
    int fd[2];
    pid_t pid;
    size_t got = 0;
    double t0;
    memset(r, 0, sizeof *r);
    if (pipe(fd) != 0)
        bail("pipe: %s", strerror(errno));
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bail("fork: %s", strerror(errno));
    if (pid == 0) {
        struct report mine;
        ssize_t w;
        close(fd[0]);
        signal(SIGALRM, SIG_DFL); /* not the parent's guard: it would print TAP */
        alarm(60);                /* the default action kills the child */
        double c0 = now_ms();
        memset(&mine, 0, sizeof mine);
        fn(&mine);
        mine.total_ms = now_ms() - c0;
        w = write(fd[1], &mine, sizeof mine);
        _exit(w == (ssize_t)sizeof mine ? 0 : 1);
    }
    close(fd[1]);
    t0 = now_ms();
    while (got < sizeof *r && now_ms() - t0 < 40000.0) {
        struct pollfd p;
        ssize_t n;
        p.fd = fd[0];
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, 100) <= 0)
            continue;
        n = read(fd[0], (char *)r + got, sizeof *r - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd[0]);
    *got_report = got == sizeof *r;
    if (!*got_report) {
        diag("  %s child: no report within %.0f ms; killing it", name, now_ms() - t0);
        kill(pid, SIGKILL);
    }
    return pid;
}

/* Reap a child (30 s bound, then SIGKILL); 1 when it exited with 0. */
static int reap(pid_t pid, const char *name)
{
    int status = 0;
    double t0 = now_ms();
    pid_t w;
    for (;;) {
        w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return 0;
        if (now_ms() - t0 > 30000.0) {
            diag("  %s child: still exiting after 30 s; killing it", name);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return 0;
        }
        sleep_ms(5);
    }
    if (WIFSIGNALED(status))
        diag("  %s child ended by signal %d", name, WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
        diag("  %s child exited %d", name, WEXITSTATUS(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The parent must not initialize CUDA (a forked child could not use it), so
 * the GPU gate runs in a child too: it prints the skip or bail-out line
 * itself and exits 0 or non-zero; 42 means "a device is here". */
static void gate_in_child(void)
{
    int status = 0;
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bail("fork: %s", strerror(errno));
    if (pid == 0) {
        alarm(60);
        gpu_require(1);
        fflush(stdout);
        _exit(42);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 42)
        return;
    if (WIFEXITED(status))
        exit(WEXITSTATUS(status)); /* the child printed SKIP (0) or Bail out! */
    bail("the device probe died of signal %d", WTERMSIG(status));
}

static int is_error(cudaError_t e)
{
    return e != cudaSuccess && e != cudaErrorNotReady;
}

int main(void)
{
    struct report lr, rr, tr, dr;
    int lok, rok, tok, dok, i;
    void (*const cases[4])(struct report *) = {latch_case, ring_case, timer_case, done_case};
    const char *const names[4] = {"latch", "ring", "timer", "on_done"};
    struct report *const reports[4] = {&lr, &rr, &tr, &dr};
    int *const reported[4] = {&lok, &rok, &tok, &dok};
    pid_t pids[4];
    double t0, ms[4];

    gate_in_child();
    guard_install(150);
    plan(0);
    /* All children first: the parent must not touch CUDA before its last
     * fork (a cudaGetErrorName call here made the next child's CUDA fail
     * with cudaErrorInitializationError on the H200). */
    for (i = 0; i < 4; ++i) {
        t0 = now_ms();
        pids[i] = run_child(cases[i], reports[i], names[i], reported[i]);
        ms[i] = now_ms() - t0;
    }
    t0 = now_ms();
    for (i = 0; i < 4; ++i)
        *reported[i] &= reap(pids[i], names[i]);
    diag("children reported after %.0f, %.0f, %.0f and %.0f ms; all exited %.0f ms later",
         ms[0], ms[1], ms[2], ms[3], now_ms() - t0);

    ok(lok && lr.reached, "latch child ran to the end and reported");
    is_int(cudaSuccess, lr.setup, "latch child: setup (%s)", cudaGetErrorName(lr.setup));
    is_int(cudaSuccess, lr.launch, "latch child: the illegal-address kernel launched");
    is_int(cudaSuccess, lr.arm, "latch child: the latch was armed behind it");
    is_int(0, lr.gate_timed_out, "latch child: the stream was held until the test let it go");
    ok(is_error(lr.wait), "latch child: cuxfer_latch_wait returns an error (%s), "
       "neither success nor a timeout", cudaGetErrorName(lr.wait));
    ok(lr.wait_ms < 9000.0, "latch child: within a bounded time (%.1f ms, timeout 10000)",
       lr.wait_ms);
    diag("latch child: reason \"%s\"; cudaStreamQuery %.1f ms; the child's work %.0f ms",
         lr.reason, lr.sync_ms, lr.total_ms);
    ok(is_error(lr.sync), "latch child: the stream itself reports the failure (%s)",
       cudaGetErrorName(lr.sync));

    ok(rok && rr.reached, "ring child ran to the end and reported");
    is_int(cudaSuccess, rr.setup, "ring child: setup (%s)", cudaGetErrorName(rr.setup));
    is_int(cudaSuccess, rr.acquire1, "ring child: the first acquire succeeded");
    diag("ring child: submit returned %s", cudaGetErrorName(rr.submit));
    ok(is_error(rr.acquire2),
       "ring child: acquiring the slot whose submission failed returns an error (%s)",
       cudaGetErrorName(rr.acquire2));
    ok(rr.slot_handed_out, "ring child: and still hands the slot out");
    ok(rr.acquire_ms < 20000.0, "ring child: within a bounded time (%.1f ms)", rr.acquire_ms);
    diag("ring child: the child's work %.0f ms", rr.total_ms);

    ok(tok && tr.reached, "timer child ran to the end and reported");
    is_int(cudaSuccess, tr.setup, "timer child: setup (%s)", cudaGetErrorName(tr.setup));
    is_int(cudaSuccess, tr.arm, "timer child: cuxfer_on_complete queued behind the kernel");
    is_int(0, tr.gate_timed_out, "timer child: the stream was held until the test let it go");
    ok(is_error(tr.timer), "timer child: cuxfer_timer_ms(CUXFER_WAIT) returns an error (%s)",
       cudaGetErrorName(tr.timer));
    ok(tr.timer_wait_ms < 20000.0, "timer child: within a bounded time (%.1f ms)",
       tr.timer_wait_ms);
    diag("timer child: cuxfer_timer_ms waited %.1f ms; cudaStreamQuery %.1f ms (%s); the "
         "child's work %.0f ms", tr.timer_wait_ms, tr.sync_ms, cudaGetErrorName(tr.sync),
         tr.total_ms);
    ok(tr.ms_is_nan, "timer child: and *ms is NaN, never a garbage number");
    is_int(0, tr.callback_ran, "timer child: the cuxfer_on_complete function was not run "
           "on the failed stream (as documented)");

    ok(dok && dr.reached, "on_done child ran to the end and reported");
    is_int(cudaSuccess, dr.setup, "on_done child: setup (%s)", cudaGetErrorName(dr.setup));
    is_int(cudaSuccess, dr.launch, "on_done child: the illegal-address kernel launched");
    is_int(cudaSuccess, dr.arm, "on_done child: cuxfer_on_done queued behind it");
    is_int(0, dr.gate_timed_out, "on_done child: the stream was held until the test let it go");
    is_int(1, dr.done_runs, "on_done child: the callback ran once on the failed stream "
           "(after %.1f ms)", dr.done_ms);
    ok(is_error(dr.done_status), "on_done child: and was given the stream's error (%s)",
       cudaGetErrorName(dr.done_status));
    ok(is_error(dr.sync), "on_done child: the stream itself reports the failure (%s)",
       cudaGetErrorName(dr.sync));
    done_testing();
}
