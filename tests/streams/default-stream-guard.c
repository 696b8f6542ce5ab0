/* SPDX-License-Identifier: MIT */
/* The default-stream guard (issue 17, item 6): an async copy queued on the
 * legacy default stream warns once, is refused or is let through under
 * CUXFER_DEFAULT_STREAM / CUXFER_DEFAULT_STREAM_POLICY; other streams pass
 * with no message; 0 in a unit built per-thread
 * (CUDA_API_PER_THREAD_DEFAULT_STREAM, default-stream-ptds.c) is that
 * thread's own stream and passes.  The refusal happens before any CUDA
 * call, so this runs without a GPU.  The environment is read once per
 * process, so each policy runs in a child forked before any cuxfer call,
 * its TAP lines numbered on from the parent's.  (Parsing each value
 * again in one process, and the guard's own stream test, are checked in
 * tests/state/internals.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log-capture.h"
#include "tap.h"
#include <cuxfer.h>

extern int setenv(const char *, const char *, int);
extern int unsetenv(const char *);

cudaError_t ptds_copy_on_zero(void *dst, const void *src, size_t bytes);

/* Run phase(a, b) in a child with CUXFER_DEFAULT_STREAM=value (unset if
 * NULL); the child's tests continue the parent's numbering and it sends
 * back its counts. */
static void in_child(const char *value, void (*phase)(unsigned char *, unsigned char *),
                     const char *what)
{
    int fd[2], st = 0, counts[2] = {-1, -1};
    pid_t pid;
    fflush(stdout);
    if (pipe(fd) != 0)
        bail("pipe");
    pid = fork();
    if (pid < 0)
        bail("fork");
    if (pid == 0) {
        unsigned char a[64], b[64];
        close(fd[0]);
        /* Host-to-host copies pass the pageable guard anyway; this keeps
         * its messages out of the count whatever a device says. */
        setenv("CUXFER_PAGEABLE", "allow", 1);
        if (value)
            setenv("CUXFER_DEFAULT_STREAM", value, 1);
        else
            unsetenv("CUXFER_DEFAULT_STREAM");
        memset(a, 1, sizeof a);
        memset(b, 2, sizeof b);
        phase(a, b);
        fflush(stdout);
        counts[0] = tap_count;
        counts[1] = tap_failed;
        _exit(write(fd[1], counts, sizeof counts) == (ssize_t)sizeof counts ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], counts, sizeof counts) != (ssize_t)sizeof counts)
        counts[0] = -1;
    close(fd[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || counts[0] < 0) {
        ok(0, "%s: the child ran to the end (status %d)", what, st);
        return;
    }
    tap_count = counts[0];
    tap_failed = counts[1];
}

static int mentions_legacy(void)
{
    return strstr(cuxfer_last_reason(), "legacy default stream") != NULL;
}

static void phase_default(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_default_stream_policy(), "default policy is WARN");
}

static void phase_policy_error(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    is_int(CUXFER_PAGEABLE_ERROR, cuxfer_default_stream_policy(), "CUXFER_DEFAULT_STREAM=error");
}

static void phase_policy_allow(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    is_int(CUXFER_PAGEABLE_ALLOW, cuxfer_default_stream_policy(), "CUXFER_DEFAULT_STREAM=ALLOW");
}

static void phase_policy_bad(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    logbuf[0] = '\0';
    log_lines = 0;
    is_int(CUXFER_PAGEABLE_WARN, cuxfer_default_stream_policy(),
           "a bad value falls back to the default");
    contains(logbuf, "CUXFER_DEFAULT_STREAM=sometimes is not one of", "the bad value is named");
}

/* ERROR: refused before any CUDA call, nothing queued, reason given. */
static void phase_error(unsigned char *a, unsigned char *b)
{
    cuxfer_view va, vb;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_copy_async(b, a, 64, 0);
    is_int(cudaErrorInvalidValue, err, "error: copy on stream 0 refused");
    ok(mentions_legacy(), "the reason names the legacy default stream");
    contains(cuxfer_last_reason(), "cuxfer_copy_async: stream 0 is", "the reason names the call and the stream");
    ok(b[0] == 2, "nothing was copied");
    err = cuxfer_copy_async(b, a, 64, cudaStreamLegacy);
    is_int(cudaErrorInvalidValue, err, "error: copy on cudaStreamLegacy refused");
    contains(cuxfer_last_reason(), "cudaStreamLegacy is the legacy", "the reason names the handle");
    cuxfer_clear_reason();
    err = cuxfer_copy_async(b, a, 0, 0);
    is_int(cudaSuccess, err, "an empty copy queues nothing and is not refused");
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, 64, cudaStreamPerThread);
    ok(!mentions_legacy(), "error: cudaStreamPerThread passes the guard");
    cuxfer_clear_reason();
    (void)ptds_copy_on_zero(b, a, 64);
    ok(!mentions_legacy(), "error: 0 in a per-thread unit passes the guard");

    if (cuxfer_view_wrap(&va, a, 8, 8, 8, 1) != cudaSuccess ||
        cuxfer_view_wrap(&vb, b, 8, 8, 8, 1) != cudaSuccess)
        bail("cuxfer_view_wrap: %s", cuxfer_last_reason());
    cuxfer_clear_reason();
    err = cuxfer_copy2d_async(&vb, &va, 0);
    is_int(cudaErrorInvalidValue, err, "error: 2D copy on stream 0 refused");
    ok(mentions_legacy(), "the 2D reason names the legacy default stream");
    contains(cuxfer_last_reason(), "cuxfer_copy2d_async", "the 2D reason names the call");
}

/* WARN: one line per process, the copy goes ahead (and fails or not on
 * its own merits: no device here, perhaps); other streams never warn. */
static void phase_warn(unsigned char *a, unsigned char *b)
{
    cuxfer_view va, vb;
    if (cuxfer_view_wrap(&va, a, 8, 8, 8, 1) != cudaSuccess ||
        cuxfer_view_wrap(&vb, b, 8, 8, 8, 1) != cudaSuccess)
        bail("cuxfer_view_wrap: %s", cuxfer_last_reason());
    logbuf[0] = '\0';
    log_lines = 0;
    (void)cuxfer_copy_async(b, a, 64, cudaStreamPerThread);
    is_int(0, log_lines, "warn: cudaStreamPerThread gives no message");
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, 64, 0);
    ok(!mentions_legacy(), "warn: the copy is not refused");
    is_int(1, log_lines, "warn: one line");
    contains(logbuf, "legacy default stream", "warn: the line names the trap");
    (void)cuxfer_copy_async(b, a, 64, 0);
    (void)cuxfer_copy2d_async(&vb, &va, cudaStreamLegacy);
    is_int(1, log_lines, "warn: shown once per process");
}

/* ALLOW: silent. */
static void phase_allow(unsigned char *a, unsigned char *b)
{
    log_lines = 0;
    cuxfer_clear_reason();
    (void)cuxfer_copy_async(b, a, 64, 0);
    ok(!mentions_legacy(), "allow: not refused");
    is_int(0, log_lines, "allow: no message");
}

/* ---- the GPU part: every call that queues copies on stream 0 --------- */
/* Byte-exact copies of 16-byte rows (host pitch 48, device pitch 32, 64
 * rows) and 4 tiles of 16x16, run by the plan2d strategies (SPAN up,
 * PACK down, DIRECT) and the rois strategies (KERNEL, GATHER, DIRECT,
 * AUTO) on stream 0; timers on stream 0.  Under error each copy is
 * refused with nothing written; under warn each works, bytes exact, and
 * the process shows one line; timers neither warn nor refuse. */
#define GW 16
#define GH 64
#define GHP 48
#define GDP 32
#define NPLAN 4
#define NROIS 4
static const int plan_strat[NPLAN] = {CUXFER_PLAN_SPAN, CUXFER_PLAN_PACK, CUXFER_PLAN_DIRECT,
                                      CUXFER_PLAN_DIRECT};
static const int plan_d2h[NPLAN] = {0, 1, 0, 1};
static const char *const plan_name[NPLAN] = {"SPAN H2D", "PACK D2H", "DIRECT H2D",
                                             "DIRECT D2H"};
static const int rois_strat[NROIS] = {CUXFER_ROIS_KERNEL, CUXFER_ROIS_GATHER, CUXFER_ROIS_DIRECT,
                                      CUXFER_ROIS_AUTO};
static const char *const rois_name[NROIS] = {"KERNEL", "GATHER", "DIRECT", "AUTO"};

/* A device in this child?  Without one the phase is skipped (failed when
 * CUXFER_REQUIRE_GPU asks for one). */
static int child_has_gpu(int nskip)
{
    int n = 0;
    const char *req = getenv("CUXFER_REQUIRE_GPU");
    if (cuxfer_device_count(&n) == cudaSuccess && n > 0)
        return 1;
    if (req && atoi(req) > 0)
        ok(0, "CUXFER_REQUIRE_GPU=%s but no CUDA device: %s", req, cuxfer_last_reason());
    else
        skip(nskip, "no CUDA device: %s", cuxfer_last_reason());
    return 0;
}

#define MUST(expr)                                                             \
    do {                                                                       \
        cudaError_t must_ = (expr);                                            \
        if (must_ != cudaSuccess)                                              \
            bail("%s: %s (%s)", #expr, cudaGetErrorName(must_), cuxfer_last_reason()); \
    } while (0)

typedef struct gpu_bufs {
    unsigned char *hs, *hd, *ref; /* pinned source, pinned destination, CPU copy */
    void *d;
    cuxfer_view vhs, vhd, vd;
    cuxfer_roi tiles[NROIS];
    cuxfer_view dense;
} gpu_bufs;

static void bufs_make(gpu_bufs *g)
{
    size_t i;
    MUST(cuxfer_host_alloc((void **)&g->hs, GHP * GH, 1, 0));
    MUST(cuxfer_host_alloc((void **)&g->hd, GHP * GH, 1, 0));
    g->ref = (unsigned char *)malloc(GHP * GH);
    if (!g->ref)
        bail("out of memory");
    for (i = 0; i < GHP * GH; ++i)
        g->hs[i] = g->ref[i] = (unsigned char)(i * 7 + 3);
    MUST(cudaMalloc(&g->d, GDP * GH));
    MUST(cuxfer_view_wrap(&g->vhs, g->hs, GHP, GW, GH, 1));
    MUST(cuxfer_view_wrap(&g->vhd, g->hd, GHP, GW, GH, 1));
    MUST(cuxfer_view_wrap(&g->vd, g->d, GDP, GW, GH, 1));
    for (i = 0; i < NROIS; ++i) {
        g->tiles[i].x = 0;
        g->tiles[i].y = i * 16;
        g->tiles[i].width = g->tiles[i].height = 16;
    }
    MUST(cuxfer_view_wrap(&g->dense, g->d, 16, 16, 16 * NROIS, 1));
}

static void bufs_free(gpu_bufs *g)
{
    MUST(cudaDeviceSynchronize());
    MUST(cudaFree(g->d));
    MUST(cuxfer_host_free(g->hs));
    MUST(cuxfer_host_free(g->hd));
    free(g->ref);
}

/* Poison the device buffer and the host destination. */
static void poison(gpu_bufs *g)
{
    MUST(cudaDeviceSynchronize());
    MUST(cudaMemset(g->d, 0xA5, GDP * GH));
    memset(g->hd, 0xA5, GHP * GH);
    MUST(cudaDeviceSynchronize());
}

static gpu_bufs *g_bufs;
/* Byte c of row r of the source. */
static unsigned char g_ref_at(size_t r, size_t c) { return g_bufs->ref[r * GHP + c]; }

/* Bytes of the GW-byte rows at pitch `pitch` that differ from the source. */
static size_t rows_wrong(const unsigned char *got, size_t pitch)
{
    size_t r, c, bad = 0;
    for (r = 0; r < GH; ++r)
        for (c = 0; c < GW; ++c)
            bad += got[r * pitch + c] != g_ref_at(r, c);
    return bad;
}

static cudaError_t plan_run(cuxfer_plan2d *pl, gpu_bufs *g, int d2h, int up_first)
{
    if (d2h && up_first) { /* the device holds the rows first (stream 0 not used) */
        MUST(cudaMemcpy2D(g->d, GDP, g->hs, GHP, GW, GH, cudaMemcpyHostToDevice));
    }
    return d2h ? cuxfer_plan2d_copy_async(pl, &g->vhd, &g->vd, 0)
               : cuxfer_plan2d_copy_async(pl, &g->vd, &g->vhs, 0);
}

/* What stream 0 received: the rows in the destination, or nothing. */
static size_t plan_wrong(gpu_bufs *g, int d2h, int want_written)
{
    unsigned char back[GDP * GH];
    MUST(cudaDeviceSynchronize());
    if (d2h)
        return want_written ? rows_wrong(g->hd, GHP) : !all_bytes(g->hd, GHP * GH, 0xA5);
    MUST(cudaMemcpy(back, g->d, sizeof back, cudaMemcpyDeviceToHost));
    return want_written ? rows_wrong(back, GDP) : !all_bytes(back, sizeof back, 0xA5);
}

static size_t rois_wrong(gpu_bufs *g, int want_written)
{
    unsigned char back[16 * 16 * NROIS];
    size_t i, r, c, bad = 0;
    MUST(cudaDeviceSynchronize());
    MUST(cudaMemcpy(back, g->d, sizeof back, cudaMemcpyDeviceToHost));
    if (!want_written)
        return !all_bytes(back, sizeof back, 0xA5);
    for (i = 0; i < NROIS; ++i)
        for (r = 0; r < 16; ++r)
            for (c = 0; c < 16; ++c)
                bad += back[(i * 16 + r) * 16 + c] != g_ref_at(i * 16 + r, c);
    return bad;
}

/* Run every copy on stream 0 under the child's policy: refused (error) or
 * done, bytes exact (warn). */
static void gpu_copies(int refuse)
{
    gpu_bufs g;
    cuxfer_plan2d pl;
    cuxfer_plan2d_options po;
    cuxfer_rois ro;
    cuxfer_rois_options rop;
    cudaError_t err;
    int i;
    g_bufs = &g;
    bufs_make(&g);
    for (i = 0; i < NPLAN; ++i) {
        memset(&po, 0, sizeof po);
        po.strategy = plan_strat[i];
        po.chunk_bytes = 4096;
        po.threads = 2;
        MUST(cuxfer_plan2d_create(&pl, &po));
        {   /* an empty copy queues nothing: neither refused nor reported */
            cuxfer_view ed = g.vd, eh = plan_d2h[i] ? g.vhd : g.vhs;
            int before = log_lines;
            ed.height = eh.height = 0;
            err = plan_d2h[i] ? cuxfer_plan2d_copy_async(&pl, &eh, &ed, 0)
                              : cuxfer_plan2d_copy_async(&pl, &ed, &eh, 0);
            is_int(cudaSuccess, err, "an empty cuxfer_plan2d_copy_async %s on stream 0 works",
                   plan_name[i]);
            is_int(before, log_lines, "and is not reported");
        }
        poison(&g);
        cuxfer_clear_reason();
        err = plan_run(&pl, &g, plan_d2h[i], 1);
        if (refuse) {
            is_int(cudaErrorInvalidValue, err, "error: cuxfer_plan2d_copy_async %s on stream 0 "
                   "refused", plan_name[i]);
            ok(mentions_legacy(), "the reason names the legacy default stream");
            is_int(0, (int)plan_wrong(&g, plan_d2h[i], 0), "nothing was written");
        } else {
            is_int(cudaSuccess, err, "warn: cuxfer_plan2d_copy_async %s on stream 0 works",
                   plan_name[i]);
            is_int(0, (int)plan_wrong(&g, plan_d2h[i], 1), "bytes exact");
        }
        MUST(cuxfer_plan2d_destroy(&pl));
    }
    for (i = 0; i < NROIS; ++i) {
        memset(&rop, 0, sizeof rop);
        rop.strategy = rois_strat[i];
        rop.threads = 2;
        err = cuxfer_rois_create(&ro, &rop);
        if (err != cudaSuccess) { /* KERNEL needs CUDA 12.5+ */
            skip(refuse ? 3 : 2, "cuxfer_rois %s: %s", rois_name[i], cuxfer_last_reason());
            continue;
        }
        poison(&g);
        cuxfer_clear_reason();
        err = cuxfer_rois_copy_async(&ro, CUXFER_ROIS_H2D, &g.vhs, g.tiles, NROIS, &g.dense, 0);
        if (refuse) {
            is_int(cudaErrorInvalidValue, err, "error: cuxfer_rois_copy_async %s on stream 0 "
                   "refused", rois_name[i]);
            ok(mentions_legacy(), "the reason names the legacy default stream");
            is_int(0, (int)rois_wrong(&g, 0), "nothing was written");
        } else {
            is_int(cudaSuccess, err, "warn: cuxfer_rois_copy_async %s on stream 0 works",
                   rois_name[i]);
            is_int(0, (int)rois_wrong(&g, 1), "bytes exact");
        }
        MUST(cuxfer_rois_destroy(&ro));
    }
    bufs_free(&g);
}

/* Timers on stream 0 are the classic way to time it: never refused, never
 * a warning, under every policy. */
static void gpu_timers(void)
{
    cuxfer_timer t;
    float ms = -1;
    MUST(cuxfer_timer_create(&t));
    log_lines = 0;
    is_int(cudaSuccess, cuxfer_timer_start(&t, 0), "timer_start on stream 0 works");
    is_int(cudaSuccess, cuxfer_timer_stop(&t, 0), "timer_stop on stream 0 works");
    is_int(cudaSuccess, cuxfer_timer_ms(&t, CUXFER_WAIT, &ms), "and reads");
    is_int(0, log_lines, "the timer gave no message");
    MUST(cuxfer_timer_destroy(&t));
}

static void phase_error_gpu(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    if (!child_has_gpu(1))
        return;
    log_lines = 0;
    gpu_copies(1);
    is_int(0, log_lines, "error: refusals print nothing");
    gpu_timers();
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
}

/* Copies on stream 0 refused for their arguments after the device was
 * asked (a view whose kind is wrong, a host view in device memory): under
 * warn refused as they would be on any stream, with no line, so the one
 * warning is still there for the first copy that goes ahead. */
static void gpu_refused_first(void)
{
    void *d;
    cuxfer_view vd, vlie;
    cuxfer_roi tile = {0, 0, 8, 8};
    cuxfer_rois ro;
    cudaError_t err;
    MUST(cudaMalloc(&d, 128));
    MUST(cuxfer_view_wrap(&vd, d, 8, 8, 8, 1));
    MUST(cuxfer_view_wrap(&vlie, (unsigned char *)d + 64, 8, 8, 8, 1));
    vlie.kind = CUXFER_MEMORY_PINNED; /* says pinned, is device memory */
    log_lines = 0;
    cuxfer_clear_reason();
    err = cuxfer_copy2d_async(&vd, &vlie, 0);
    is_int(cudaErrorInvalidValue, err, "warn: a 2D copy whose view lies about its memory is "
           "refused on stream 0");
    contains(cuxfer_last_reason(), "view says pinned", "for its view, not for the stream");
    MUST(cuxfer_rois_create(&ro, NULL));
    cuxfer_clear_reason();
    err = cuxfer_rois_copy_async(&ro, CUXFER_ROIS_H2D, &vlie, &tile, 1, &vd, 0);
    is_int(cudaErrorInvalidValue, err, "warn: cuxfer_rois_copy_async from a host view in device "
           "memory is refused on stream 0");
    contains(cuxfer_last_reason(), "is device memory", "for its view");
    MUST(cuxfer_rois_destroy(&ro));
    {
        /* a forced KERNEL from pageable memory: refused for the memory,
         * after the stream's checks (where the runtime has no kernel,
         * cuxfer_rois_create refuses KERNEL itself) */
        cuxfer_rois_options o;
        unsigned char *pg = malloc(64);
        cuxfer_view vp;
        memset(&o, 0, sizeof o);
        o.strategy = CUXFER_ROIS_KERNEL;
        if (!pg)
            bail("out of memory");
        MUST(cuxfer_view_wrap(&vp, pg, 8, 8, 8, 1));
        err = cuxfer_rois_create(&ro, &o);
        if (err == cudaErrorNotSupported) {
            skip(2, "the runtime has no copy kernel: %s", cuxfer_last_reason());
        } else {
            MUST(err);
            cuxfer_clear_reason();
            err = cuxfer_rois_copy_async(&ro, CUXFER_ROIS_H2D, &vp, &tile, 1, &vd, 0);
            is_int(cudaErrorInvalidValue, err, "warn: a forced KERNEL from pageable memory is "
                   "refused on stream 0");
            contains(cuxfer_last_reason(), "not pinned", "for its memory");
            MUST(cuxfer_rois_destroy(&ro));
        }
        free(pg);
    }
    is_int(0, log_lines, "warn: the refused copies used up no warning");
    MUST(cudaFree(d));
}

static void phase_warn_gpu(unsigned char *a, unsigned char *b)
{
    (void)a;
    (void)b;
    if (!child_has_gpu(1))
        return;
    gpu_timers(); /* first: a timer must not use up the one warning */
    gpu_refused_first();
    logbuf[0] = '\0';
    log_lines = 0;
    gpu_copies(0);
    is_int(1, log_lines, "warn: one line for all of them");
    contains(logbuf, "cuxfer_plan2d_copy_async", "the first copy on stream 0 is named");
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
}

int main(void)
{
    plan(0);
    /* No cuxfer call in this process: each child parses the variable. */
    in_child(NULL, phase_default, "unset");
    in_child("error", phase_policy_error, "error");
    in_child("ALLOW", phase_policy_allow, "ALLOW");
    in_child("sometimes", phase_policy_bad, "sometimes");
    in_child("error", phase_error, "error, copies");
    in_child("warn", phase_warn, "warn, copies");
    in_child("allow", phase_allow, "allow, copies");
    in_child("error", phase_error_gpu, "error, every copy on the GPU");
    in_child("warn", phase_warn_gpu, "warn, every copy on the GPU");
    done_testing();
}
