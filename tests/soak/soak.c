/* SPDX-License-Identifier: MIT */
/*
 * soak.c - a randomized soak of cuxfer.h checked against a model (issue 26;
 * HACKING, "Soak").  The driver: options, the worker threads and their
 * rounds, the leak checkpoints between rounds, the watchdog, the failure
 * report and its replay file, and the shrinking of a replay by delta
 * debugging (each trial in a child forked before any CUDA call).
 *
 * Output is TAP (one point, the soak): `1..0 # SKIP` without a device in
 * GPU mode, so make check runs it as it is.
 */
#include "soak.h"
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

soak_options soak_opt = {0, 0, 1, 0, 0};
long soak_fn_calls[SOAK_NFUNCS];
#define SOAK_F_NAME(f) #f,
static const char *const fn_name[SOAK_NFUNCS] = {SOAK_API_LIST(SOAK_F_NAME)};
#undef SOAK_F_NAME

static unsigned long long o_seed = 1;
static long o_steps = 0;
static double o_seconds = 0;
static const char *o_replay = NULL, *o_record = "soak-failure.replay";
static int o_shrink = 0, o_thread = -1, o_fault = 0;
static double o_step_limit_ms = 0;
static double o_hang_hold_s = 0; /* --hang-hold: watch a hung step this long before exiting */
static long o_stall_step = -1;  /* --stall STEP:MS: thread 0's step STEP sleeps MS ms first */
static double o_stall_ms = 0;

static soak_thread T[SOAK_MAX_THREADS];
static int stop_all;            /* a failure or the time: every worker stops */
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;
static int failed_thread = -1;  /* the first failure's thread */
static char fail_text[8192];
static char fail_op[64];        /* its operation (the shrinker keeps it failing) */
static long *replay_steps;      /* --replay: the steps to run */
static long replay_n;
static int trial_fd = -1;       /* a shrinker's child: where the failing op goes */

/* ---- the generator ---------------------------------------------------- */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t soak_next(soak_thread *t) { return t->rng = mix(t->rng); }

size_t soak_below(soak_thread *t, size_t n) { return n ? (size_t)(soak_next(t) % n) : 0; }

/* Sizes near the edges half the time: 0, 1, max, max - 1, odd. */
size_t soak_size(soak_thread *t, size_t max)
{
    switch (soak_below(t, 8)) {
    case 0: return 0;
    case 1: return max ? 1 : 0;
    case 2: return max;
    case 3: return max ? max - 1 : 0;
    case 4: {
        size_t odd = soak_below(t, max + 1) | 1u;
        return odd <= max ? odd : max;
    }
    default: return soak_below(t, max + 1);
    }
}

void soak_fill(soak_thread *t, void *p, size_t n)
{
    unsigned char *b = (unsigned char *)p;
    uint64_t x = soak_next(t);
    size_t i;
    for (i = 0; i < n; ++i) {
        if ((i & 7) == 0)
            x = mix(x);
        b[i] = (unsigned char)(x >> ((i & 7) * 8));
    }
}

double soak_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- reporting -------------------------------------------------------- */
void soak_say(soak_thread *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(t->call, sizeof t->call, fmt, ap);
    va_end(ap);
    ++t->calls;
    if (soak_opt.verbose)
        printf("#   thread %d step %ld %s: %s\n", t->id, t->step, t->op, t->call);
}

int soak_fail(soak_thread *t, const char *fmt, ...)
{
    va_list ap;
    char msg[6144];
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&fail_mu);
    if (failed_thread < 0) {
        failed_thread = t->id;
        (void)snprintf(fail_op, sizeof fail_op, "%s", t->op ? t->op : "?");
        (void)snprintf(fail_text, sizeof fail_text,
                       "seed %llu thread %d step %ld op %s\n#   call: %s\n#   %s", t->seed, t->id,
                       t->step, t->op ? t->op : "?", t->call, msg);
    }
    pthread_mutex_unlock(&fail_mu);
    t->failed = 1;
    __atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
    return 1;
}

int soak_expect(soak_thread *t, cudaError_t want, cudaError_t got)
{
    if (got == want) {
        if (got != cudaSuccess) {
            ++t->refusals;
            if (!cuxfer_last_reason()[0])
                return soak_fail(t, "refused with %s but no reason", cudaGetErrorName(got));
        }
        return 0;
    }
    if (want == cudaSuccess)
        return soak_fail(t, "unpredicted refusal: %s (%s)", cudaGetErrorName(got),
                         cuxfer_last_reason());
    if (got == cudaSuccess)
        return soak_fail(t, "accepted, but the rules say it must be refused with %s",
                         cudaGetErrorName(want));
    return soak_fail(t, "refused with %s, the rules say %s (%s)", cudaGetErrorName(got),
                     cudaGetErrorName(want), cuxfer_last_reason());
}

int soak_compare(soak_thread *t, const unsigned char *got, const unsigned char *want, size_t n,
                 const char *what)
{
    size_t i, bad = 0, first = 0, last = 0;
    char g8[40] = "", w8[40] = "";
    for (i = 0; i < n; ++i)
        if (got[i] != want[i]) {
            if (!bad++)
                first = i;
            last = i;
        }
    if (!bad)
        return 0;
    for (i = first; i < n && i < first + 8; ++i) {
        (void)snprintf(g8 + strlen(g8), sizeof g8 - strlen(g8), " %02x", got[i]);
        (void)snprintf(w8 + strlen(w8), sizeof w8 - strlen(w8), " %02x", want[i]);
    }
    return soak_fail(t, "%s: %zu of %zu bytes differ, from %zu to %zu (got%s, want%s)", what, bad,
                     n, first, last, g8, w8);
}

/* ---- leak counters ------------------------------------------------------ */
static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            ++n;
    closedir(d);
    return n - (strcmp(path, "/proc/self/fd") == 0); /* opendir's own */
}

/* count_dir(path) once it equals want (want < 0: once two counts 2 ms
 * apart agree), or after half a second: a thread just joined can still be
 * listed in /proc/self/task (pthread_join returns when the kernel clears
 * the thread's TID, before the task is gone), and a leak is what stays. */
static int settled_count(const char *path, int want)
{
    int n = count_dir(path), waited = 0, last = -1;
    while ((want < 0 ? n != last : n != want) && waited < 250) {
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
        ++waited;
        last = n;
        n = count_dir(path);
    }
    return n;
}

static void record_failure(void);

/* What every thread is doing now, one line each (a call that waited
 * too long says what the others were in). */
void soak_snapshot(char *buf, size_t n)
{
    int k;
    size_t used = 0;
    buf[0] = '\0';
    for (k = 0; k < soak_opt.threads && used + 1 < n; ++k) {
        int w = snprintf(buf + used, n - used, "\n#   thread %d: step %ld, op %s, %s: %.200s", k,
                         T[k].step, T[k].op ? T[k].op : "-",
                         __atomic_load_n(&T[k].t0, __ATOMIC_ACQUIRE) > 0 ? "running" : "idle",
                         T[k].call);
        if (w < 0)
            break;
        used += (size_t)w < n - used ? (size_t)w : n - used - 1;
    }
}

/* ---- the watchdog ------------------------------------------------------- */
static int watchdog_quit;

/* --hang-hold: keep the hung process for a debugger to attach (pid
 * printed), and say whether the step ends late (slow) or never (stuck). */
static void hang_hold(int i, double t0)
{
    double until = soak_now_ms() + o_hang_hold_s * 1e3;
    if (o_hang_hold_s <= 0)
        return;
    printf("# holding pid %ld for %.0f s\n", (long)getpid(), o_hang_hold_s);
    fflush(stdout);
    while (soak_now_ms() < until) {
        struct timespec ts = {0, 50000000L};
        if ((double)__atomic_load_n(&T[i].t0, __ATOMIC_ACQUIRE) / 1e3 != t0) {
            printf("# the step ended after %.0f ms: slow, not stuck\n", soak_now_ms() - t0);
            return;
        }
        nanosleep(&ts, NULL);
    }
    printf("# the step still runs after %.0f ms\n", soak_now_ms() - t0);
}

static void *watchdog(void *arg)
{
    int i;
    (void)arg;
    while (!__atomic_load_n(&watchdog_quit, __ATOMIC_ACQUIRE)) {
        double now = soak_now_ms();
        for (i = 0; i < soak_opt.threads; ++i) {
            double t0 = (double)__atomic_load_n(&T[i].t0, __ATOMIC_ACQUIRE) / 1e3;
            if (t0 > 0 && now - t0 > o_step_limit_ms) {
                static char all[SOAK_MAX_THREADS * 300];
                printf("not ok 1 - soak: HANG: seed %llu thread %d step %ld op %s ran %.0f ms "
                       "(bound %.0f ms)\n", o_seed, i, T[i].step, T[i].op, now - t0,
                       o_step_limit_ms);
                soak_snapshot(all, sizeof all);
                printf("%s\n", all + 1); /* past its leading newline */
                fflush(stdout);
                hang_hold(i, t0);
                if (trial_fd >= 0) { /* a hang fails a shrinker's trial too */
                    ssize_t w = write(trial_fd, T[i].op, strlen(T[i].op));
                    (void)w;
                    _exit(1);
                }
                if (strcmp(o_record, "/dev/null") != 0) {
                    failed_thread = i;
                    record_failure();
                    printf("# replay: tests/soak/soak --replay %s [--shrink]\n", o_record);
                }
                fflush(stdout);
                _exit(3);
            }
        }
        {
            struct timespec ts = {0, 100000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---- the steps ---------------------------------------------------------- */
static const soak_op *ops;
static int nops;

static void step_once(soak_thread *t, long step)
{
    const soak_op *op;
    t->step = step;
    t->rng = mix(t->seed ^ mix((uint64_t)t->id * 0x100000001b3ull) ^ mix((uint64_t)step << 1));
    op = &ops[soak_below(t, (size_t)nops)];
    t->op = op->name;
    t->call[0] = '\0';
    cuxfer_clear_reason();
    __atomic_store_n(&t->t0, (long long)(soak_now_ms() * 1e3), __ATOMIC_RELEASE);
    if (t->id == 0 && step == o_stall_step) { /* a slow step, for the watchdog's own test */
        struct timespec ts = {(time_t)(o_stall_ms / 1e3),
                              (long)(o_stall_ms * 1e6) % 1000000000L};
        nanosleep(&ts, NULL);
    }
    (void)op->run(t);
    __atomic_store_n(&t->t0, 0LL, __ATOMIC_RELEASE);
}

/* One round: steps [from, to) of every thread (or the replay list). */
typedef struct round_arg {
    soak_thread *t;
    long from, to;
    double deadline;
} round_arg;

static void *worker(void *arg)
{
    round_arg *r = (round_arg *)arg;
    long s;
    if (replay_steps) {
        for (s = 0; s < replay_n && !__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE); ++s)
            step_once(r->t, replay_steps[s]);
        return NULL;
    }
    for (s = r->from; s < r->to && !__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE); ++s) {
        if (r->deadline > 0 && soak_now_ms() > r->deadline) {
            __atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
            break;
        }
        step_once(r->t, s);
    }
    return NULL;
}

static int thread_init(soak_thread *t, int id)
{
    memset(t, 0, sizeof *t);
    t->id = id;
    t->seed = o_seed;
    t->arena_bytes = 16384;
    t->arena = (unsigned char *)malloc(t->arena_bytes);
    t->model = (unsigned char *)malloc(t->arena_bytes);
    t->scratch = (unsigned char *)malloc(t->arena_bytes);
    t->scratch2 = (unsigned char *)malloc(t->arena_bytes);
    if (!t->arena || !t->model || !t->scratch || !t->scratch2)
        return -1;
    t->rng = mix(o_seed + (uint64_t)id);
    soak_fill(t, t->arena, t->arena_bytes);
    memcpy(t->model, t->arena, t->arena_bytes);
    t->op = "setup";
    if (!soak_opt.cpu_only && soak_gpu_thread_init(t) != 0)
        return -1;
    return 0;
}

static int thread_fini(soak_thread *t)
{
    int r = 0;
    t->op = "teardown";
    if (!soak_opt.cpu_only)
        r = soak_gpu_thread_fini(t);
    free(t->arena);
    free(t->model);
    free(t->scratch);
    free(t->scratch2);
    return r;
}

/* Write the failing thread's steps 0..step as a replay file. */
static void record_failure(void)
{
    soak_thread *t = &T[failed_thread];
    FILE *f = fopen(o_record, "w");
    long s;
    if (!f)
        return;
    fprintf(f, "# cuxfer soak replay: tests/soak/soak --replay %s [--shrink]\n", o_record);
    fprintf(f, "seed %llu\nthread %d\nmode %s\ndevices %d\nsteps", t->seed, t->id,
            soak_opt.cpu_only ? "cpu" : "gpu", soak_opt.devices);
    if (replay_steps)
        for (s = 0; s < replay_n && replay_steps[s] <= t->step; ++s)
            fprintf(f, " %ld", replay_steps[s]);
    else
        for (s = 0; s <= t->step; ++s)
            fprintf(f, " %ld", s);
    fprintf(f, "\n");
    fclose(f);
}

/* ---- replay files ---------------------------------------------------------- */
static int read_replay(const char *path)
{
    FILE *f = fopen(path, "r");
    char word[64];
    long cap = 1024;
    if (!f) {
        fprintf(stderr, "soak: cannot read the replay file %s\n", path);
        return -1;
    }
    replay_steps = (long *)malloc((size_t)cap * sizeof *replay_steps);
    replay_n = 0;
    while (fscanf(f, "%63s", word) == 1) {
        if (word[0] == '#') {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
        } else if (!strcmp(word, "seed")) {
            if (fscanf(f, "%llu", &o_seed) != 1)
                break;
        } else if (!strcmp(word, "thread")) {
            if (fscanf(f, "%d", &o_thread) != 1)
                break;
        } else if (!strcmp(word, "mode")) {
            if (fscanf(f, "%63s", word) != 1)
                break;
            soak_opt.cpu_only = !strcmp(word, "cpu");
        } else if (!strcmp(word, "devices")) {
            if (fscanf(f, "%d", &soak_opt.devices) != 1)
                break;
        } else if (!strcmp(word, "steps")) {
            long s;
            while (fscanf(f, "%ld", &s) == 1) {
                if (replay_n == cap)
                    replay_steps = (long *)realloc(replay_steps, (size_t)(cap *= 2) * sizeof(long));
                replay_steps[replay_n++] = s;
            }
        }
    }
    fclose(f);
    if (o_thread < 0 || !replay_n) {
        fprintf(stderr, "soak: %s names no thread or no steps\n", path);
        return -1;
    }
    return 0;
}

static int run_soak(void);
static int run_all(void);

/* One trial of the shrinker: the steps in a child (no CUDA in this
 * process); 1 when it fails with the same operation. */
static int trial(const long *steps, long n, const char *want_op, int verbose)
{
    pid_t pid;
    int st = 0, fd[2];
    char got[64] = "";
    if (pipe(fd) != 0)
        return 0;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        close(fd[0]);
        replay_steps = (long *)steps;
        replay_n = n;
        soak_opt.verbose = verbose;
        if (!verbose) {
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                _exit(2);
        }
        o_record = "/dev/null";
        trial_fd = fd[1];
        if (run_all() != 0 && failed_thread >= 0) {
            ssize_t w = write(fd[1], fail_op, strlen(fail_op));
            (void)w;
            _exit(1);
        }
        _exit(0);
    }
    close(fd[1]);
    {
        ssize_t r = read(fd[0], got, sizeof got - 1);
        if (r > 0)
            got[r] = '\0';
    }
    close(fd[0]);
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
        return want_op == NULL || strcmp(want_op, "crash") == 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 1 && (!want_op || !strcmp(got, want_op));
}

/* ddmin (Zeller): remove chunks while the sequence still fails the same way. */
static int shrink(void)
{
    long n = replay_n, *cur = (long *)malloc((size_t)n * sizeof(long)), *tmp = (long *)malloc((size_t)n * sizeof(long));
    long gran = 2, i, k, trials = 0;
    char want_op[64];
    FILE *f;
    memcpy(cur, replay_steps, (size_t)n * sizeof(long));
    /* what fails, to keep the same failure */
    {
        int fd[2];
        pid_t pid;
        int st;
        ssize_t r;
        if (pipe(fd) != 0)
            return 2;
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            close(fd[0]);
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                _exit(2);
            o_record = "/dev/null";
            trial_fd = fd[1];
            if (run_all() != 0 && failed_thread >= 0) {
                r = write(fd[1], fail_op, strlen(fail_op));
                (void)r;
                _exit(1);
            }
            _exit(0);
        }
        close(fd[1]);
        r = read(fd[0], want_op, sizeof want_op - 1);
        want_op[r > 0 ? r : 0] = '\0';
        close(fd[0]);
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 1) {
            printf("# the replay does not fail: nothing to shrink\n");
            return 1;
        }
    }
    printf("# shrinking %ld steps that fail in op %s\n", n, want_op);
    while (n >= 2 && trials < 2000) {
        long chunk = (n + gran - 1) / gran;
        int reduced = 0;
        for (i = 0; i < gran && !reduced; ++i) {
            long lo = i * chunk, hi = lo + chunk < n ? lo + chunk : n, m = 0;
            if (lo >= n)
                break;
            for (k = 0; k < n; ++k)
                if (k < lo || k >= hi)
                    tmp[m++] = cur[k];
            ++trials;
            if (m > 0 && trial(tmp, m, want_op, 0)) {
                memcpy(cur, tmp, (size_t)m * sizeof(long));
                n = m;
                gran = gran > 2 ? gran - 1 : 2;
                reduced = 1;
            }
        }
        if (!reduced) {
            if (gran >= n)
                break;
            gran = gran * 2 < n ? gran * 2 : n;
        }
    }
    printf("# %ld steps left after %ld trials; the calls, in order:\n", n, trials);
    (void)trial(cur, n, want_op, 1);
    f = fopen(o_record, "w");
    if (f) {
        fprintf(f, "# cuxfer soak replay (shrunk): tests/soak/soak --replay %s\nseed %llu\nthread %d\nmode %s\ndevices %d\nsteps",
                o_record, o_seed, o_thread, soak_opt.cpu_only ? "cpu" : "gpu", soak_opt.devices);
        for (k = 0; k < n; ++k)
            fprintf(f, " %ld", cur[k]);
        fprintf(f, "\n");
        fclose(f);
        printf("# the shrunk replay is in %s\n", o_record);
    }
    return 0;
}

/* ---- the run ------------------------------------------------------------ */
/* The calls of every public function, the driver's own included
 * (tests/soak/soak-coverage.sh reads these lines). */
static void print_calls(void)
{
    int f, called = 0;
    for (f = 0; f < SOAK_NFUNCS; ++f)
        called += soak_fn_calls[f] > 0;
    printf("# calls per public function of cuxfer.h (%d of %d called):\n", called, SOAK_NFUNCS);
    for (f = 0; f < SOAK_NFUNCS; ++f)
        printf("#   call %-38s %ld\n", fn_name[f], soak_fn_calls[f]);
}

static int run_soak(void)
{
    int i, nthreads = replay_steps ? 1 : soak_opt.threads, rc = 0, fd0, task0, fd1 = -1, task1 = -1;
    long round, rounds, per_round, total = 0, refusals = 0;
    double t_start = soak_now_ms(), deadline = o_seconds > 0 ? t_start + o_seconds * 1e3 : 0;
    pthread_t wd, th[SOAK_MAX_THREADS];
    round_arg ra[SOAK_MAX_THREADS];
    {
        /* GPU mode: the GPU operations and, between them, the CPU ones */
        static soak_op all[64];
        int k;
        nops = 0;
        if (!soak_opt.cpu_only)
            for (k = 0; k < soak_gpu_nops && nops < 64; ++k)
                all[nops++] = soak_gpu_ops[k];
        for (k = 0; k < soak_cpu_nops && nops < 64; ++k)
            all[nops++] = soak_cpu_ops[k];
        ops = all;
    }
    soak_opt.threads = nthreads;
    {
        /* CUDA's first use (the driver, the primary context) opens
         * descriptors and threads kept until exit, and a CPU-mode call may
         * be that first use where a GPU is installed: it comes before the
         * baseline */
        int ndev = 0;
        if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
            (void)cudaFree(0);
        (void)cudaGetLastError();
    }
    fd0 = count_dir("/proc/self/fd");
    task0 = count_dir("/proc/self/task");
    for (i = 0; i < nthreads; ++i)
        if (thread_init(&T[i], replay_steps ? o_thread : i) != 0) {
            printf("not ok 1 - soak: setup of thread %d failed: %s\n", i, cuxfer_last_reason());
            return 1;
        }
    if (pthread_create(&wd, NULL, watchdog, NULL) != 0)
        return 1;
    /* rounds: every thread runs per_round steps, then a leak checkpoint */
    per_round = o_steps > 0 ? (o_steps + 9) / 10 : 2000;
    rounds = o_steps > 0 ? (o_steps + per_round - 1) / per_round : 1000000;
    for (round = 0; round < rounds && !stop_all; ++round) {
        for (i = 0; i < nthreads; ++i) {
            ra[i].t = &T[i];
            ra[i].from = round * per_round;
            ra[i].to = o_steps > 0 && (round + 1) * per_round > o_steps ? o_steps
                                                                         : (round + 1) * per_round;
            ra[i].deadline = deadline;
            if (pthread_create(&th[i], NULL, worker, &ra[i]) != 0)
                return 1;
        }
        for (i = 0; i < nthreads; ++i)
            pthread_join(th[i], NULL);
        if (failed_thread >= 0 || replay_steps)
            break;
        /* checkpoint: the first one is the baseline of the warm objects */
        {
            int fd = settled_count("/proc/self/fd", round == 0 ? -1 : fd1);
            int task = settled_count("/proc/self/task", round == 0 ? -1 : task1);
            if (round == 0) {
                fd1 = fd;
                task1 = task;
            } else if (fd != fd1 || task != task1) {
                T[0].op = "checkpoint";
                (void)snprintf(T[0].call, sizeof T[0].call, "after round %ld", round);
                soak_fail(&T[0], "leak: %d fds (baseline %d), %d threads (baseline %d)", fd, fd1,
                          task, task1);
                break;
            }
            if (!soak_opt.cpu_only && soak_gpu_leaks(&T[0], round == 0 ? -1 : 0) != 0)
                break;
        }
        if (deadline > 0 && soak_now_ms() > deadline)
            break;
    }
    for (i = 0; i < nthreads; ++i) {
        total += T[i].calls;
        refusals += T[i].refusals;
    }
    for (i = 0; i < nthreads; ++i)
        if (thread_fini(&T[i]) != 0 && failed_thread < 0)
            soak_fail(&T[i], "teardown failed: %s", cuxfer_last_reason());
    if (failed_thread < 0 && !soak_opt.cpu_only)
        (void)soak_gpu_leaks(&T[0], 1);
    __atomic_store_n(&watchdog_quit, 1, __ATOMIC_RELEASE);
    pthread_join(wd, NULL);
    if (failed_thread < 0) {
        /* CUDA keeps the threads and descriptors it opened on first use:
         * on the GPU, the end may not be above the first round's counts;
         * on the CPU, it must be back at the start's */
        int gpu = !soak_opt.cpu_only && fd1 >= 0;
        int fd = settled_count("/proc/self/fd", gpu ? fd1 : fd0),
            task = settled_count("/proc/self/task", gpu ? task1 : task0);
        if (gpu) {
            fd0 = fd <= fd1 ? fd : fd0;
            task0 = task <= task1 ? task : task0;
        }
        if (fd != fd0 || task != task0) {
            T[0].op = "end";
            soak_fail(&T[0], "leak at the end: %d fds (before %d), %d threads (before %d)", fd,
                      fd0, task, task0);
        }
    }
    if (failed_thread >= 0) {
        printf("not ok 1 - soak FAILED: %s\n", fail_text);
        fprintf(stderr, "soak: FAIL: seed %llu, thread %d, op %s (see the output)\n", o_seed,
                failed_thread, fail_op);
        if (strcmp(o_record, "/dev/null") != 0) {
            record_failure();
            printf("# replay: tests/soak/soak --replay %s   shrink: add --shrink\n", o_record);
        }
        rc = 1;
    } else if (!replay_steps) {
        double s = (soak_now_ms() - t_start) / 1e3;
        printf("ok 1 - soak: seed %llu, %d thread(s), %s mode, %ld calls (%ld refused as "
               "predicted) in %.1f s, %.0f calls/s\n",
               o_seed, nthreads, soak_opt.cpu_only ? "CPU-only" : "GPU", total, refusals, s,
               s > 0 ? (double)total / s : 0.0);
    } else
        printf("ok 1 - replay of %ld steps passed\n", replay_n);
    if (!replay_steps)
        print_calls();
    return rc;
}

/* The CPU mode's policies (man 3 cuxfer_memory_kind and
 * cuxfer_copy2d_async): where the environment sets neither
 * CUXFER_PAGEABLE nor CUXFER_DEFAULT_STREAM, the seed picks their words
 * (set in any case, unset, not a policy), before any call reads them;
 * op_policy holds both policies against model_policy of the environment
 * either way.  The GPU mode leaves them as they are: they decide its
 * copies. */
static void cpu_policies(void)
{
    /* across four seeds each variable is unset, allow, warn or error (or
     * no policy); seed 7's, tests/soak/mutants.sh's, allows both, the one
     * word a mutant that forgets it would answer otherwise */
    static const char *const words[4][2] = {
        {"Error", "no-such-policy"}, {"warn", "ERROR"}, {NULL, NULL}, {"aLLow", "Allow"}};
    const char *const *w = words[o_seed % 4];
    if (getenv("CUXFER_PAGEABLE") || getenv("CUXFER_DEFAULT_STREAM"))
        return;
    if (w[0])
        setenv("CUXFER_PAGEABLE", w[0], 1);
    if (w[1])
        setenv("CUXFER_DEFAULT_STREAM", w[1], 1);
    printf("# CUXFER_PAGEABLE %s, CUXFER_DEFAULT_STREAM %s (from the seed)\n",
           w[0] ? w[0] : "unset", w[1] ? w[1] : "unset");
}

/* The process-wide setup, the soak, the teardown: in main and in every
 * trial of the shrinker (a child forked before any CUDA call). */
static int run_all(void)
{
    int rc;
    if (o_step_limit_ms <= 0)
        o_step_limit_ms = soak_opt.cpu_only ? 20000 : 60000;
    if (!soak_opt.cpu_only) {
        int n = soak_gpu_init(soak_opt.devices);
        if (n < 0)
            return 1; /* soak_gpu_init printed the bail-out */
        if (n == 0)
            return 0; /* and the skip */
        soak_opt.devices = n;
    }
    printf("1..1\n");
    if (soak_opt.cpu_only)
        cpu_policies();
    rc = run_soak();
    if (!soak_opt.cpu_only)
        soak_gpu_fini();
    return rc;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: soak [--seed N] [--steps N | --seconds S] [--threads N] [--devices N]\n"
            "            [--cpu-only] [--shared-gpu] [--step-limit MS] [--record FILE]\n"
            "            [--hang-hold S] [--stall STEP:MS] [--verbose]\n"
            "       soak --replay FILE [--shrink] [--verbose]\n"
            "       soak --fault\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int i;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (++i, 1))
        if (ARG("--seed"))
            o_seed = strtoull(v, NULL, 0);
        else if (ARG("--steps"))
            o_steps = atol(v);
        else if (ARG("--seconds"))
            o_seconds = atof(v);
        else if (ARG("--threads"))
            soak_opt.threads = atoi(v);
        else if (ARG("--devices"))
            soak_opt.devices = atoi(v);
        else if (ARG("--replay"))
            o_replay = v;
        else if (ARG("--record"))
            o_record = v;
        else if (ARG("--step-limit"))
            o_step_limit_ms = atof(v);
        else if (ARG("--hang-hold"))
            o_hang_hold_s = atof(v);
        else if (ARG("--stall")) {
            char *end;
            o_stall_step = strtol(v, &end, 10);
            if (*end != ':' || o_stall_step < 0 || (o_stall_ms = atof(end + 1)) <= 0) {
                fprintf(stderr, "soak: --stall %s is not STEP:MS\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--cpu-only"))
            soak_opt.cpu_only = 1;
        else if (!strcmp(a, "--shared-gpu"))
            soak_opt.shared_gpu = 1;
        else if (!strcmp(a, "--shrink"))
            o_shrink = 1;
        else if (!strcmp(a, "--fault"))
            o_fault = 1;
        else if (!strcmp(a, "--verbose"))
            soak_opt.verbose = 1;
        else
            usage();
#undef ARG
    }
    if (soak_opt.threads < 1 || soak_opt.threads > SOAK_MAX_THREADS) {
        fprintf(stderr, "soak: --threads %d is outside 1..%d\n", soak_opt.threads,
                SOAK_MAX_THREADS);
        return 2;
    }
    if (o_steps <= 0 && o_seconds <= 0) {
        o_steps = 600; /* no options: a short GPU soak (check-sanitizer runs it so) */
        if (argc == 1)
            soak_opt.threads = 2;
    }
    if (o_fault)
        return soak_fault_main();
    if (o_replay && read_replay(o_replay) != 0)
        return 2;
    if (o_shrink) {
        if (!o_replay)
            usage();
        o_record = "soak-shrunk.replay";
        return shrink();
    }
    return run_all();
}
