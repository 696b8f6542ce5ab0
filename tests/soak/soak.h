/* SPDX-License-Identifier: MIT */
/*
 * soak.h - the soak's parts (tests/soak/): soak.c the driver (options,
 * threads, watchdog, leak checks, replay and shrinking), model.c the
 * oracle's arithmetic (what every geometry call must answer, computed
 * independently of cuxfer.h), ops-cpu.c the operations that need no
 * device, ops-gpu.c those that do, fault.c the fault injection.  HACKING, "Soak", says how to use it.
 *
 * Every step of every thread draws its operation and arguments from
 * (seed, thread, step) alone, and each thread owns the buffers its model
 * follows, so a step list replays the same calls in any run.
 */
#ifndef CUXFER_SOAK_H
#define CUXFER_SOAK_H

#include <cuxfer.h>
#include <stdint.h>

/* Every public function of cuxfer.h, counted: soak-api.h, made from the
 * header by tests/soak/api-names.sh, lists them (SOAK_API_LIST) and turns
 * each call the soak makes into soak_counted(its index) and the call; the
 * soak prints the counts at the end, which tests/soak/soak-coverage.sh
 * holds against the header's list. */
#include <soak-api.h> /* the build's, not one beside this file */
#define SOAK_F_ENUM(f) SOAK_F_##f,
enum soak_fn { SOAK_API_LIST(SOAK_F_ENUM) SOAK_NFUNCS };
#undef SOAK_F_ENUM
extern long soak_fn_calls[SOAK_NFUNCS];
static inline void soak_counted(int f) { __atomic_add_fetch(&soak_fn_calls[f], 1, __ATOMIC_RELAXED); }

#define SOAK_MAX_THREADS 16

typedef struct soak_gpu soak_gpu; /* ops-gpu.c */

typedef struct soak_thread {
    int id;
    unsigned long long seed;
    long step;                /* the step running (or last run) */
    const char *op;           /* its operation */
    char call[512];           /* the call being made, readable */
    long long t0;             /* when the step began (us), 0 when idle */
    uint64_t rng;             /* the step's generator */
    /* the CPU model: an arena and what it must hold */
    unsigned char *arena, *model, *scratch, *scratch2;
    size_t arena_bytes;
    soak_gpu *g;
    long calls, refusals;
    int failed;
} soak_thread;

typedef struct soak_op {
    const char *name;
    int (*run)(soak_thread *t); /* 0: passed; else soak_fail was called */
} soak_op;

/* options shared by every part */
typedef struct soak_options {
    int verbose, cpu_only, threads, devices;
    int shared_gpu; /* --shared-gpu: no device-memory checkpoint */
} soak_options;
extern soak_options soak_opt;

/* The generator: splitmix64 of (seed, thread, step). */
uint64_t soak_next(soak_thread *t);
size_t soak_below(soak_thread *t, size_t n);  /* uniform in [0, n), n > 0 */
size_t soak_size(soak_thread *t, size_t max); /* biased to edges: 0, 1, odd, max */
void soak_fill(soak_thread *t, void *p, size_t n);

/* Say what is being called (for the failure report, the watchdog dump and
 * --verbose); then check the result. */
void soak_say(soak_thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int soak_fail(soak_thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A refusal: the error the model predicts (cudaSuccess: must work) and a reason. */
int soak_expect(soak_thread *t, cudaError_t want, cudaError_t got);
/* The whole arena against the model. */
int soak_compare(soak_thread *t, const unsigned char *got, const unsigned char *want, size_t n,
                 const char *what);
double soak_now_ms(void);
void soak_snapshot(char *buf, size_t n); /* every thread's current call */

/* model.c: the oracle's arithmetic */
cudaError_t model_view_check(const cuxfer_view *v);
cudaError_t model_view_sub(const cuxfer_view *v, cuxfer_roi r, cuxfer_view *sub);
void *model_view_at(const cuxfer_view *v, size_t x, size_t y);
int model_overlap(const cuxfer_view *a, const cuxfer_view *b); /* byte by byte */
cudaError_t model_view_init_args(int kind, int device);
cudaError_t model_view_alloc_args(const cuxfer_view *v, size_t w, size_t h, size_t es, int host,
                                  size_t align);
cudaError_t model_copy2d_check(const cuxfer_view *d, const cuxfer_view *s, size_t max_pitch);
cudaError_t model_copy_check(const void *d, const void *s, size_t n);
cudaError_t model_rois_check(int dir, const cuxfer_view *host, const cuxfer_roi *r, size_t n,
                             const cuxfer_view *dense, size_t *total);
cudaError_t model_rois_offsets(const cuxfer_roi *r, size_t n, size_t es, size_t *off);
int model_roi_outside(const cuxfer_roi *r, size_t w, size_t h);
int model_rois_meet(const cuxfer_roi *a, const cuxfer_roi *b);
size_t model_class_size(size_t n, int *exact); /* lower bound check: see model.c */
void model_copy2d(const cuxfer_view *d, const cuxfer_view *s); /* rows, host memory */
void model_rois_pack(int dir, const cuxfer_view *host, const cuxfer_roi *r, size_t n,
                     unsigned char *dense);

int model_plan2d_choose(const cuxfer_plan2d *p, int dkind, int skind, size_t row, size_t height,
                        size_t spitch);
int model_rois_choose(int strategy, size_t direct_tile_bytes, int has_kernel, size_t n,
                      size_t total);
typedef struct model_measure { /* one report of cuxfer_plan2d_calibrate */
    size_t row;
    int d2h;
    double raw, planned;
} model_measure;
size_t model_calibrated_row(const model_measure *m, size_t n, int d2h);
cudaError_t model_stager_options(const cuxfer_stager_options *opt, cuxfer_stager_options *out);
cudaError_t model_team_options(int strategy, int last, int threads, int max, size_t chunk);
cudaError_t model_stream_pool_args(int count, unsigned flags, int on, int device);
cudaError_t model_stream_pool_wrap(const cudaStream_t *streams, int count);
cudaError_t model_pinned_pool_flags(unsigned flags);
cudaError_t model_stream_fan(const cudaStream_t *arr, int n, cudaStream_t other, int *asks);
cudaError_t model_managed_args(const void *p, size_t bytes, int target);
int model_policy(const char *word);

/* the operations */
extern const soak_op soak_cpu_ops[];
extern const int soak_cpu_nops;
extern const soak_op soak_gpu_ops[];
extern const int soak_gpu_nops;
int soak_gpu_init(int devices);      /* process-wide objects; the device count */
int soak_gpu_thread_init(soak_thread *t);
int soak_gpu_thread_fini(soak_thread *t);
void soak_gpu_fini(void);
int soak_gpu_leaks(soak_thread *t0, int final); /* checkpoint; 0: none */
int soak_fault_main(void); /* fault.c: soak --fault, its own TAP */

#endif
