/* SPDX-License-Identifier: MIT */
/*
 * fault.c - the soak's fault injection (soak --fault): faults the kit
 * promises to survive.  A kernel that writes to address 0 ends the context
 * with a sticky error, so each case runs in a child process forked before
 * this process touches CUDA, reporting through a pipe; the kernel is PTX
 * loaded with the runtime's library API (no nvcc).  Promised
 * (cuxfer_latch(3), cuxfer_on_complete(3)): a latch armed behind the fault
 * returns the stream's error, not success and not its timeout, in bounded
 * time; a host function queued behind it never runs; a timer around it is
 * not read as a number.  Allocation faults (1 PiB pinned, pool blocks) are
 * steps of the soak itself (ops-gpu.c, op_alloc).
 */
#include "soak.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fault_report {
    int skip;            /* 1: no device; 2: no library API (CUDA < 12.0) */
    int reached;
    cudaError_t setup, wait, timer;
    double wait_ms;
    int callback_ran, ms_is_number;
    char what[CUXFER_REASON_MAX + 256];
};

/* The faulting kernel and the stream's host functions: the library API
 * (cudaLibraryLoadData) that loads the kernel came with CUDA 12.0. */
#if CUDART_VERSION >= 12000
static const char fault_ptx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry soak_fault(.param .u64 p)\n"
    "{\n"
    "  .reg .b64 %rd<2>;\n"
    "  .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  mov.u32 %r1, 42;\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

static int ran, gate_open;
static void CUDART_CB mark(void *arg)
{
    (void)arg;
    __atomic_store_n(&ran, 1, __ATOMIC_RELEASE);
}

/* Holds the stream until everything is queued behind the kernel (else a
 * call made after the fault returns its sticky error); 10 s at most. */
static void CUDART_CB gate(void *arg)
{
    double t0 = soak_now_ms();
    (void)arg;
    while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE) && soak_now_ms() - t0 < 10000.0) {
        struct timespec ts = {0, 100000L};
        nanosleep(&ts, NULL);
    }
}
#endif

#define FSETUP(expr)                                                                        \
    do {                                                                                    \
        cudaError_t e_ = (expr);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            r->setup = e_;                                                                  \
            (void)snprintf(r->what, sizeof r->what, "%s -> %s %s", #expr,                   \
                           cudaGetErrorName(e_), cuxfer_last_reason());                     \
            return;                                                                         \
        }                                                                                   \
    } while (0)

static void child(struct fault_report *r)
{
    int n = 0;
    if (cuxfer_device_count(&n) != cudaSuccess || n < 1) {
        r->skip = 1;
        (void)snprintf(r->what, sizeof r->what, "%s", cuxfer_last_reason());
        return;
    }
#if CUDART_VERSION >= 12000
    {
        cudaLibrary_t lib;
        cudaKernel_t k;
        cudaStream_t s;
        cuxfer_latch l;
        cuxfer_timer tm;
        void *p = NULL, *args[1];
        dim3 one;
        float ms = 0.0f;
        double t0;
        FSETUP(cudaSetDevice(0));
        FSETUP(cudaLibraryLoadData(&lib, fault_ptx, NULL, NULL, 0, NULL, NULL, 0));
        FSETUP(cudaLibraryGetKernel(&k, lib, "soak_fault"));
        {
            /* loaded now: a lazily loaded kernel's first launch would wait
             * for the held stream (cuxfer.h does the same for its own) */
            struct cudaFuncAttributes fa;
            FSETUP(cudaFuncGetAttributes(&fa, (const void *)k));
        }
        FSETUP(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        FSETUP(cudaLaunchHostFunc(s, gate, NULL));
        FSETUP(cuxfer_latch_init(&l));
        FSETUP(cuxfer_timer_create(&tm));
        FSETUP(cuxfer_timer_start(&tm, s));
        args[0] = &p;
        one.x = one.y = one.z = 1;
        FSETUP(cudaLaunchKernel((const void *)k, one, one, args, 0, s));
        FSETUP(cuxfer_timer_stop(&tm, s));
        FSETUP(cuxfer_on_complete(s, mark, NULL));
        FSETUP(cuxfer_latch_arm(&l, s));
        __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
        t0 = soak_now_ms();
        r->wait = cuxfer_latch_wait(&l, 30000);
        r->wait_ms = soak_now_ms() - t0;
        (void)snprintf(r->what, sizeof r->what, "%s", cuxfer_last_reason());
        r->timer = cuxfer_timer_ms(&tm, CUXFER_WAIT, &ms);
        r->ms_is_number = r->timer == cudaSuccess && isfinite(ms);
        r->callback_ran = __atomic_load_n(&ran, __ATOMIC_ACQUIRE);
        r->reached = 1;
    }
#else
    r->skip = 2;
#endif
}

int soak_fault_main(void)
{
    struct fault_report r;
    int fd[2], st = 0, bad = 0;
    pid_t pid;
    ssize_t got;
    memset(&r, 0, sizeof r);
    if (pipe(fd) != 0)
        return 1;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        close(fd[0]);
        alarm(120); /* the default action ends a child that hangs */
        child(&r);
        if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r)
            _exit(3);
        _exit(0); /* not exit(): the faulted context is not torn down */
    }
    close(fd[1]);
    got = read(fd[0], &r, sizeof r);
    close(fd[0]);
    waitpid(pid, &st, 0);
    if (got == (ssize_t)sizeof r && r.skip == 1) {
        printf("1..0 # SKIP no CUDA device: %s\n", r.what);
        return 0;
    }
    if (got == (ssize_t)sizeof r && r.skip == 2) {
        printf("1..0 # SKIP the CUDA runtime has no library API (CUDA < 12.0)\n");
        return 0;
    }
    printf("1..4\n");
    if (got != (ssize_t)sizeof r || !r.reached) {
        printf("not ok 1 - the fault child reported (%s; status %d%s)\n",
               got == (ssize_t)sizeof r ? r.what : "no report", st,
               WIFSIGNALED(st) ? ", killed: it hung" : "");
        printf("not ok 2 # the child did not get there\nnot ok 3\nnot ok 4\n");
        return 1;
    }
    printf("ok 1 - a kernel writing to address 0 was launched behind a timer, a host function "
           "and a latch\n");
    bad |= !printf("%s 2 - cuxfer_latch_wait returns the stream's error: %s in %.0f ms (%s)\n",
                   r.wait != cudaSuccess && r.wait != cudaErrorNotReady && r.wait_ms < 30000.0
                       ? "ok" : "not ok",
                   cudaGetErrorName(r.wait), r.wait_ms, r.what);
    if (!(r.wait != cudaSuccess && r.wait != cudaErrorNotReady && r.wait_ms < 30000.0))
        bad = 1;
    printf("%s 3 - the host function behind the fault never ran\n", r.callback_ran ? "not ok" : "ok");
    printf("%s 4 - the timer around the fault is not read as a number (%s)\n",
           r.ms_is_number ? "not ok" : "ok", cudaGetErrorName(r.timer));
    return bad || r.callback_ran || r.ms_is_number;
}
