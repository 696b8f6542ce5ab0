/* SPDX-License-Identifier: MIT */
/*
 * sched-helpers.h - helpers shared by the scheduling tests (stream pool, timers,
 * latch, ring, graphs): a gate that holds a stream back from the host, a
 * monotonic clock, bounded waits on flags, and a last-resort alarm.
 *
 * C99 (with _POSIX_C_SOURCE=200809L) and C++ (nvcc); pthreads and
 * __atomic builtins only.
 */
#ifndef CUXFER_TESTS_SCHED_H
#define CUXFER_TESTS_SCHED_H

#include "gpu.h"
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* Milliseconds on the monotonic clock. */
static TAP_UNUSED double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static TAP_UNUSED void sleep_ms(double ms)
{
    struct timespec t;
    if (ms <= 0)
        return;
    t.tv_sec = (time_t)(ms / 1000.0);
    t.tv_nsec = (long)((ms - (double)t.tv_sec * 1000.0) * 1e6);
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Wait until *flag becomes nonzero, at most limit_ms; 1 if it did. */
static TAP_UNUSED int wait_flag(const int *flag, double limit_ms)
{
    double t0 = now_ms();
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
        if (now_ms() - t0 > limit_ms)
            return 0;
        sleep_ms(0.1);
    }
    return 1;
}

static TAP_UNUSED void start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
    if (pthread_create(th, NULL, fn, arg) != 0)
        bail("pthread_create failed");
}

/* Start fn(arg), a thread that should block in a CUXFER_WAIT call and set
 * *done once it returns: 1 if it is still blocked after ms. */
static TAP_UNUSED int start_blocked(pthread_t *th, void *(*fn)(void *), void *arg,
                                    const int *done, double ms)
{
    start_thread(th, fn, arg);
    sleep_ms(ms);
    return !__atomic_load_n(done, __ATOMIC_ACQUIRE);
}

/* A gate holds a stream back: gate_hold queues a host function that spins
 * until gate_open (or until limit_ms passed, then it gives up and sets
 * timed_out, so no test can hang on a gate).  Everything queued on the
 * stream after the gate waits for it.  The host function makes no CUDA
 * call.  Note that all host functions of the process run on one CUDA
 * thread: while a gate spins, no other host function (latch signals,
 * cuxfer_on_complete) runs either. */
typedef struct gate {
    int open;      /* set by the test thread */
    int entered;   /* set when the spinning function started */
    int left;      /* set when it returned */
    int timed_out; /* it gave up waiting */
    double limit_ms;
} gate;

static TAP_UNUSED void CUDART_CB gate_spin(void *arg)
{
    gate *g = (gate *)arg;
    double t0 = now_ms();
    __atomic_store_n(&g->entered, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE)) {
        if (now_ms() - t0 > g->limit_ms) {
            __atomic_store_n(&g->timed_out, 1, __ATOMIC_RELEASE);
            break;
        }
        sleep_ms(0.05);
    }
    __atomic_store_n(&g->left, 1, __ATOMIC_RELEASE);
}

/* Close the gate on s for limit_ms at most. */
static TAP_UNUSED cudaError_t gate_hold_for(gate *g, cudaStream_t s, double limit_ms)
{
    memset(g, 0, sizeof *g);
    g->limit_ms = limit_ms;
    return cudaLaunchHostFunc(s, gate_spin, g);
}

/* Close the gate on s; 10 s at most. */
static TAP_UNUSED cudaError_t gate_hold(gate *g, cudaStream_t s)
{
    return gate_hold_for(g, s, 10000.0);
}

static TAP_UNUSED void gate_open(gate *g)
{
    __atomic_store_n(&g->open, 1, __ATOMIC_RELEASE);
}

/* Last resort: a test still running after `seconds` prints a bail-out
 * line and exits non-zero instead of hanging the suite. */
static TAP_UNUSED void guard_fire(int sig)
{
    static const char msg[] = "Bail out! watchdog: the test did not finish in time\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(4);
    _exit(3);
}

static TAP_UNUSED void guard_install(unsigned seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = guard_fire;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

/* Count bytes of p[0, n) that differ from want[0, n); report the first. */
static TAP_UNUSED size_t count_diff(const unsigned char *got,
                                    const unsigned char *want, size_t n,
                                    const char *what)
{
    size_t i, bad = 0, first = 0;
    unsigned char g0 = 0, w0 = 0;
    for (i = 0; i < n; ++i)
        if (got[i] != want[i]) {
            if (!bad) {
                first = i;
                g0 = got[i];
                w0 = want[i];
            }
            ++bad;
        }
    if (bad)
        diag("  %s: %zu of %zu bytes differ, first at %zu (got 0x%02x, want 0x%02x)",
             what, bad, n, first, g0, w0);
    return bad;
}

#endif
