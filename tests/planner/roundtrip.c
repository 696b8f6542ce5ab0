/* SPDX-License-Identifier: MIT */
/* The copy planner moves narrow and odd rows byte-exactly with every
 * strategy, in both directions, chunked (several chunks per copy), and the
 * D2H PACK strategy never writes the gap bytes of the strided host
 * destination.  One plan serves SPAN on one stream and PACK on another
 * without syncs.  One plan serves four threads at once (each its own
 * stream and buffers), every copy byte-exact.  SPAN's kernel extraction
 * of 1-7 byte rows writes exactly the rows, whatever the pitches.  Calibration runs and gives
 * a sane tuning. */
#include "gpu.h"
#include <pthread.h>

static cudaStream_t st;

static int check_host(const cuxfer_view *got, const unsigned char *want_rows, size_t want_pitch,
                      int gap_poison, const char *what)
{
    size_t y, x, row = got->width * got->elem_size;
    for (y = 0; y < got->height; ++y) {
        const unsigned char *g = (const unsigned char *)got->ptr + y * got->pitch;
        if (memcmp(g, want_rows + y * want_pitch, row) != 0) {
            diag("%s: row %zu differs", what, y);
            return 0;
        }
        for (x = row; gap_poison >= 0 && x < got->pitch; ++x)
            if (g[x] != (unsigned char)gap_poison) {
                diag("%s: gap byte %zu of row %zu was written", what, x, y);
                return 0;
            }
    }
    return 1;
}

/* Four threads share one plan (cuxfer(3): an engine's calls are safe from
 * several threads, one at a time per object), each on its own stream:
 * round trips of 8-byte rows at pitch 16 (AUTO: SPAN up, PACK down). */
enum { MT_THREADS = 4, MT_TRIPS = 6, MT_W = 8, MT_HP = 16, MT_H = 1 << 17 };
static cuxfer_plan2d mt_plan;
static int mt_bad, mt_unplanned;

static void *mt_worker(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    void *hb = NULL, *bb = NULL;
    cudaStream_t s;
    cuxfer_view src, dev, back;
    int k;
    GPU_MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPU_MUST(cuxfer_host_alloc(&hb, MT_HP * MT_H, 1, 0));
    GPU_MUST(cuxfer_host_alloc(&bb, MT_HP * MT_H, 1, 0));
    GPU_MUST(cuxfer_view_wrap(&src, hb, MT_HP, MT_W, MT_H, 1));
    GPU_MUST(cuxfer_view_wrap(&back, bb, MT_HP, MT_W, MT_H, 1));
    GPU_MUST(cuxfer_view_alloc_device(&dev, MT_W, MT_H, 1));
    if (cuxfer_plan2d_choose(&mt_plan, &dev, &src) != CUXFER_PLAN_SPAN ||
        cuxfer_plan2d_choose(&mt_plan, &back, &dev) != CUXFER_PLAN_PACK)
        __atomic_add_fetch(&mt_unplanned, 1, __ATOMIC_RELAXED);
    for (k = 0; k < MT_TRIPS; ++k) {
        fill_pattern(hb, MT_HP * MT_H, seed * 31u + (unsigned)k);
        memset(bb, 0x5A, MT_HP * MT_H);
        GPU_MUST(cudaMemset2DAsync(dev.ptr, dev.pitch, 0xA5, MT_W, MT_H, s));
        if (cuxfer_plan2d_copy_async(&mt_plan, &dev, &src, s) != cudaSuccess ||
            cuxfer_plan2d_copy_async(&mt_plan, &back, &dev, s) != cudaSuccess ||
            cudaStreamSynchronize(s) != cudaSuccess ||
            !check_host(&back, (const unsigned char *)hb, MT_HP, 0x5A, "shared plan"))
            __atomic_add_fetch(&mt_bad, 1, __ATOMIC_RELAXED);
    }
    cuxfer_view_free(&dev);
    cuxfer_host_free(hb);
    cuxfer_host_free(bb);
    GPU_MUST(cudaStreamDestroy(s));
    return NULL;
}

static void shared_plan(void)
{
    pthread_t th[MT_THREADS];
    size_t i;
    GPU_MUST(cuxfer_plan2d_create(&mt_plan, NULL));
    for (i = 0; i < MT_THREADS; ++i)
        if (pthread_create(&th[i], NULL, mt_worker, (void *)(i + 1)) != 0)
            bail("pthread_create");
    for (i = 0; i < MT_THREADS; ++i)
        pthread_join(th[i], NULL);
    is_int(0, mt_unplanned, "the shared plan's copies go SPAN up and PACK down");
    is_int(0, mt_bad, "one plan, %d threads x %d round trips at once: every copy byte-exact",
           MT_THREADS, MT_TRIPS);
    GPU_OK(cuxfer_plan2d_destroy(&mt_plan), "destroy the shared plan");
}

/* A narrow-row test's device buffer: the view at offset off, pitch dp,
 * h rows, then a tail of NR_TAIL bytes, all poisoned with 0xA5 (the
 * poison is on the legacy stream; the copies that follow are not). */
enum { NR_TAIL = 4096 };
static unsigned char *poisoned_rows(size_t off, size_t dp, size_t h)
{
    unsigned char *db;
    GPU_MUST(cudaMalloc((void **)&db, dp * h + off + NR_TAIL));
    GPU_MUST(cudaMemset(db, 0xA5, dp * h + off + NR_TAIL));
    GPU_MUST(cudaDeviceSynchronize());
    return db;
}

/* Whether poisoned_rows' buffer db holds the h rows of w bytes of hs
 * (pitch hp), and the poison in every other byte, its tail too. */
static int device_rows_exact(const unsigned char *db, size_t off, size_t dp,
                             const unsigned char *hs, size_t hp, size_t w, size_t h)
{
    size_t n = dp * h + off + NR_TAIL, x, y;
    unsigned char *whole = (unsigned char *)malloc(n);
    int good = 1;
    if (!whole)
        bail("out of memory");
    GPU_MUST(cudaMemcpy(whole, db, n, cudaMemcpyDeviceToHost));
    for (x = 0; x < n && good; ++x) {
        /* byte x of the buffer: row y, column at of the view */
        size_t at = x < off ? dp : (x - off) % dp;
        unsigned want;
        y = x < off ? 0 : (x - off) / dp;
        want = at < w && y < h ? hs[y * hp + at] : 0xA5;
        if (whole[x] != want) {
            diag("%zu-byte rows x %zu, host pitch %zu, device pitch %zu at offset %zu: byte %zu "
                 "(row %zu, column %zu) is %#x, not %#x", w, h, hp, dp, off, x, y, at, whole[x],
                 want);
            good = 0;
        }
    }
    free(whole);
    return good;
}

/* SPAN's extraction by the copy kernel (rows of 1 to 7 bytes, CUDA 12.5+:
 * one launch packs a chunk's rows from the scratch into a dense device
 * buffer, a second unpacks them into the destination).  Rows of 1, 2, 3,
 * 4, 5 and 7 bytes; host pitches 2 x row, row + 1 and 3 x row + 5;
 * destinations at cudaMallocPitch-like pitch 512 (aligned), at pitch
 * row + 1 from an odd address (1-byte units) and at 2 x row + 4 from
 * offset 2; heights 3, odd ones and whole chunks (the last chunk as long
 * as the others).  Per width, every copy twice (into two buffers), all
 * queued on one plan without a sync: more shapes in flight than the plan
 * has descriptor pairs, so pairs are reused, rewritten once free, and
 * copies extract with the copy engine when none is.  Every device byte is
 * compared: each row the source's, every other byte still poison, also in
 * a tail past the last row (a chunk one row too long writes there). */
static void narrow_span(void)
{
    static const size_t wl[] = {1, 2, 3, 4, 5, 7};
    enum { NLAY = 3, NH = 4, NB = 2 * NLAY * NH };
    const size_t chunk = 8192; /* several chunks a copy */
    cuxfer_plan2d p;
    size_t wi;
    plan_create(&p, chunk, CUXFER_PLAN_SPAN, 2);
    ok(!p.kernel || p.kx_dev, "a plan with the copy kernel has SPAN's extraction descriptors");
    if (!p.kernel)
        diag("no copy kernel (runtime before 12.5): SPAN extracts with the copy engine");
    for (wi = 0; wi < sizeof wl / sizeof wl[0]; ++wi) {
        size_t w = wl[wi], k;
        size_t hp_[NB], dp_[NB], off_[NB], h_[NB];
        void *hb[NB];
        unsigned char *db[NB];
        int good = 1;
        for (k = 0; k < NB; ++k) {
            size_t lay = k / 2 % NLAY, hi = k / 2 / NLAY, per;
            cuxfer_view src, dev;
            hp_[k] = lay == 0 ? 2 * w : lay == 1 ? w + 1 : 3 * w + 5;
            dp_[k] = lay == 0 ? 512 : lay == 1 ? w + 1 : 2 * w + 4;
            off_[k] = lay == 0 ? 0 : lay == 1 ? 1 : 2;
            per = (chunk - w) / hp_[k] + 1; /* rows of a chunk */
            h_[k] = hi == 0 ? 3 : hi == 1 ? 3 * per : hi == 2 ? 3 * per + 1 : 20011;
            pinned_view(&hb[k], &src, w, h_[k], hp_[k]);
            fill_pattern(hb[k], hp_[k] * h_[k], (unsigned)(5000 + 97 * w + k));
            db[k] = poisoned_rows(off_[k], dp_[k], h_[k]);
            GPU_MUST(cuxfer_view_wrap(&dev, db[k] + off_[k], dp_[k], w, h_[k], 1));
            GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &src, st),
                   "SPAN %zu-byte rows x %zu, host pitch %zu, device pitch %zu", w, h_[k],
                   hp_[k], dp_[k]);
        }
        GPU_OK(cudaStreamSynchronize(st), "sync after %d SPAN copies of %zu-byte rows", NB, w);
        for (k = 0; k < NB && good; ++k)
            good = device_rows_exact(db[k], off_[k], dp_[k], (const unsigned char *)hb[k],
                                     hp_[k], w, h_[k]);
        ok(good, "SPAN %zu-byte rows, %d copies of 12 shapes without a sync: every device row "
           "byte-exact, no other device byte written", w, NB);
        for (k = 0; k < NB; ++k) {
            cudaFree(db[k]);
            cuxfer_host_free(hb[k]);
        }
    }
    GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
}

/* SPAN's kernel extraction at the default chunk_bytes: it goes in chunks
 * of 2 MiB of span at these sizes (cuxfer_plan2d(3)), so a span that the
 * 8 MiB scratch holds whole still takes several chunks.  Rows of 1, 2, 4
 * and 7 bytes at host pitch 2 x row + 1, into dense device rows and into
 * rows at pitch 2 x row + 4 from offset 2; spans of 5 MiB (three chunks,
 * the last shorter) and of 9 MiB (five, more than the scratch), each
 * twice, all queued without a sync.  Every device byte is compared. */
static void narrow_span_default_chunks(void)
{
    static const size_t wl[] = {1, 2, 4, 7};
    enum { NB = 8 };
    cuxfer_plan2d p;
    size_t wi;
    plan_create(&p, 0, CUXFER_PLAN_SPAN, 0);
    for (wi = 0; wi < sizeof wl / sizeof wl[0]; ++wi) {
        size_t w = wl[wi], hp = 2 * w + 1, k;
        size_t dp_[NB], off_[NB], h_[NB];
        void *hb[NB];
        unsigned char *db[NB];
        int good = 1;
        for (k = 0; k < NB; ++k) {
            cuxfer_view src, dev;
            dp_[k] = k & 1 ? 2 * w + 4 : w;
            off_[k] = k & 1 ? 2 : 0;
            h_[k] = ((k & 2 ? (size_t)9 : 5) << 20) / hp + 1;
            pinned_view(&hb[k], &src, w, h_[k], hp);
            fill_pattern(hb[k], hp * h_[k], (unsigned)(7000 + 31 * w + k));
            db[k] = poisoned_rows(off_[k], dp_[k], h_[k]);
            GPU_MUST(cuxfer_view_wrap(&dev, db[k] + off_[k], dp_[k], w, h_[k], 1));
            GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &src, st),
                   "SPAN %zu-byte rows x %zu, device pitch %zu", w, h_[k], dp_[k]);
        }
        GPU_OK(cudaStreamSynchronize(st), "sync after %d SPAN copies of %zu-byte rows", NB, w);
        for (k = 0; k < NB && good; ++k)
            good = device_rows_exact(db[k], off_[k], dp_[k], (const unsigned char *)hb[k], hp,
                                     w, h_[k]);
        ok(good, "SPAN %zu-byte rows at the default chunk_bytes, spans of 5 and 9 MiB: every "
           "device row byte-exact, no other device byte written", w);
        for (k = 0; k < NB; ++k) {
            cudaFree(db[k]);
            cuxfer_host_free(hb[k]);
        }
    }
    GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
}

int main(void)
{
    static const size_t widths[] = {1, 3, 8, 12, 16, 24, 32, 64, 100, 256};
    static const int strategies[] = {CUXFER_PLAN_AUTO, CUXFER_PLAN_DIRECT, CUXFER_PLAN_SPAN,
                                     CUXFER_PLAN_PACK};
    static const char *const sname[] = {"AUTO", "DIRECT", "SPAN", "PACK"};
    cuxfer_plan2d p;
    cuxfer_plan2d_tuning t = cuxfer_plan2d_default_tuning();
    size_t wi;
    int si;

    gpu_require(1);
    plan(0);
    GPU_MUST(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (si = 0; si < 4; ++si) {
        plan_create(&p, 64 * 1024, strategies[si], 4); /* small chunks: many per copy */
        for (wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi) {
            size_t w = widths[wi], h = 20011, hp = 2 * w + 3;
            cuxfer_view src, dev, back;
            int good;
            {
                void *hb = NULL, *bb = NULL;
                pinned_view(&hb, &src, w, h, hp);
                pinned_view(&bb, &back, w, h, hp);
            }
            fill_pattern(src.ptr, hp * h, (unsigned)(w + 17 * (size_t)si));
            GPU_MUST(cuxfer_view_alloc_device(&dev, w, h, 1));
            GPU_MUST(cudaMemset2DAsync(dev.ptr, dev.pitch, 0xA5, w, h, st));
            GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &src, st), "%s H2D %zu-byte rows", sname[si], w);
            memset(back.ptr, 0x5A, hp * h);
            GPU_OK(cuxfer_plan2d_copy_async(&p, &back, &dev, st), "%s D2H %zu-byte rows", sname[si], w);
            GPU_OK(cudaStreamSynchronize(st), "sync");
            good = check_host(&back, (const unsigned char *)src.ptr, hp, 0x5A, sname[si]);
            ok(good, "%s: %zu-byte rows x %zu round trip byte-exact, gaps untouched", sname[si], w, h);
            cuxfer_view_free(&dev);
            cuxfer_host_free(src.ptr);
            cuxfer_host_free(back.ptr);
        }
        GPU_OK(cuxfer_plan2d_destroy(&p), "destroy plan %s", sname[si]);
    }
    /* A plan reused back to back without syncs: buffers and records must
     * not be overwritten under a copy still in flight. */
    {
        size_t w = 8, h = 1 << 17, hp = 16, k;
        void *hb = NULL, *bb = NULL;
        cuxfer_view src, dev, back;
        int good = 1;
        plan_create(&p, 16 * 1024, CUXFER_PLAN_PACK, 0);
        GPU_MUST(cuxfer_host_alloc(&hb, hp * h, 1, 0));
        GPU_MUST(cuxfer_host_alloc(&bb, hp * h * 4, 1, 0));
        GPU_MUST(cuxfer_view_wrap(&src, hb, hp, w, h, 1));
        fill_pattern(hb, hp * h, 99);
        GPU_MUST(cuxfer_view_alloc_device(&dev, w, h, 1));
        GPU_MUST(cuxfer_copy2d_async(&dev, &src, st));
        memset(bb, 0x5A, hp * h * 4);
        for (k = 0; k < 4; ++k) {
            GPU_MUST(cuxfer_view_wrap(&back, (unsigned char *)bb + k * hp * h, hp, w, h, 1));
            GPU_MUST(cuxfer_plan2d_copy_async(&p, &back, &dev, st));
        }
        GPU_OK(cudaStreamSynchronize(st), "4 PACK copies of 128 chunks each, no sync between");
        for (k = 0; k < 4; ++k) {
            GPU_MUST(cuxfer_view_wrap(&back, (unsigned char *)bb + k * hp * h, hp, w, h, 1));
            good &= check_host(&back, (const unsigned char *)hb, hp, 0x5A, "back to back");
        }
        ok(good, "all four are byte-exact (records and buffers were not reused too early)");
        cuxfer_view_free(&dev);
        cuxfer_host_free(hb);
        cuxfer_host_free(bb);
        GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
    }
    shared_plan();
    narrow_span();
    narrow_span_default_chunks();
    /* PACK's direct share (rows of 32 bytes and more, CUDA 12.5+): the last
     * rows go by the copy engine beside the packed ones, and the share is
     * re-set after every copy from the rates the last ones reached.  Twelve
     * copies in a row, each poisoned first, with a sync between (so each
     * learns from the one before), of a device source at an odd address
     * (one-byte units in the packing kernel) and at an aligned one. */
    {
        static const size_t wl[] = {32, 48, 200};
        size_t wj;
        for (wj = 0; wj < sizeof wl / sizeof wl[0]; ++wj) {
            size_t w = wl[wj], h = 30011, hp = 2 * w + 5, k, off;
            void *hb = NULL, *bb = NULL;
            unsigned char *db = NULL;
            cuxfer_view dev, back;
            int good = 1;
            plan_create(&p, 256 * 1024, CUXFER_PLAN_PACK, 4);
            GPU_MUST(cuxfer_host_alloc(&hb, hp * h, 1, 0));
            GPU_MUST(cuxfer_host_alloc(&bb, hp * h, 1, 0));
            GPU_MUST(cudaMalloc((void **)&db, (w + 1) * h + 1));
            fill_pattern(hb, hp * h, (unsigned)(300 + w));
            for (off = 0; off < 2; ++off) {
                /* rows of w bytes at pitch w + 1, from db + off */
                GPU_MUST(cudaMemcpy2D(db + off, w + 1, hb, hp, w, h, cudaMemcpyHostToDevice));
                GPU_MUST(cuxfer_view_wrap(&dev, db + off, w + 1, w, h, 1));
                GPU_MUST(cuxfer_view_wrap(&back, bb, hp, w, h, 1));
                for (k = 0; k < 12; ++k) {
                    memset(bb, 0x5A, hp * h);
                    GPU_MUST(cuxfer_plan2d_copy_async(&p, &back, &dev, st));
                    GPU_MUST(cudaStreamSynchronize(st));
                    good &= check_host(&back, (const unsigned char *)hb, hp, 0x5A, "share");
                }
                ok(good, "PACK %zu-byte rows from a device source at offset %zu, pitch %zu: 12 "
                   "copies in a row byte-exact, gaps untouched", w, off, w + 1);
            }
            cudaFree(db);
            cuxfer_host_free(hb);
            cuxfer_host_free(bb);
            GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
        }
    }
    /* SPAN's gathered share (rows of 8 bytes and more, CUDA 12.5+): the
     * last rows of an upload are gathered on the host into the staging
     * PACK uses, and the copy kernel unpacks them on the device, beside the
     * span (where the device rows are 4-byte aligned: the first layout,
     * offset 4 and pitch w + 4, not 16-byte aligned); the second layout,
     * odd pitch at an odd address, gets the span alone.  One AUTO plan, on
     * one stream with no sync: upload A, download it, upload B, download
     * it, into device rows whose gap bytes are poisoned.  Every row both
     * ways, every host gap byte, and every device byte outside the rows
     * (read back whole with a 1D copy) are checked. */
    {
        static const size_t wl[] = {8, 16, 24, 32};
        size_t wj, lay;
        for (lay = 0; lay < 2; ++lay)
        for (wj = 0; wj < sizeof wl / sizeof wl[0]; ++wj) {
            size_t w = wl[wj], h = 140009, hp = 2 * w + 1, k, y, x;
            size_t off = lay ? 1 : 4, dp = lay ? w + 3 : w + 4;
            void *hb[2] = {NULL, NULL}, *bb[2] = {NULL, NULL};
            unsigned char *db[2] = {NULL, NULL}, *whole;
            cuxfer_view src, dev, back;
            int good = 1, gaps = 1, chose = 1;
            /* PACK takes rows wider than 16 bytes only with the copy
             * kernel (cuxfer_plan2d(3): copy-engine packing loses there) */
#if CUDART_VERSION >= 12050
            int down = CUXFER_PLAN_PACK;
#else
            int down = w <= 16 ? CUXFER_PLAN_PACK : CUXFER_PLAN_DIRECT;
#endif
            plan_create(&p, 64 * 1024, 0, 4); /* many slots: each reused several times */
            whole = (unsigned char *)malloc(dp * h + off);
            if (!whole)
                bail("out of memory");
            for (k = 0; k < 2; ++k) {
                GPU_MUST(cuxfer_host_alloc(&hb[k], hp * h, 1, 0));
                GPU_MUST(cuxfer_host_alloc(&bb[k], hp * h, 1, 0));
                GPU_MUST(cudaMalloc((void **)&db[k], dp * h + off));
                GPU_MUST(cudaMemset(db[k], 0xA5, dp * h + off));
                fill_pattern(hb[k], hp * h, (unsigned)(2000 + 10 * w + k));
                memset(bb[k], 0x5A, hp * h);
            }
            GPU_MUST(cudaDeviceSynchronize()); /* the poison, before the copies on st */
            for (k = 0; k < 2; ++k) {
                GPU_MUST(cuxfer_view_wrap(&src, hb[k], hp, w, h, 1));
                GPU_MUST(cuxfer_view_wrap(&dev, db[k] + off, dp, w, h, 1));
                GPU_MUST(cuxfer_view_wrap(&back, bb[k], hp, w, h, 1));
                chose &= cuxfer_plan2d_choose(&p, &dev, &src) == CUXFER_PLAN_SPAN &&
                         cuxfer_plan2d_choose(&p, &back, &dev) == down;
                GPU_OK(cuxfer_plan2d_copy_async(&p, &dev, &src, st), "SPAN %zu-byte rows", w);
                GPU_OK(cuxfer_plan2d_copy_async(&p, &back, &dev, st), "PACK %zu-byte rows", w);
            }
            GPU_OK(cudaStreamSynchronize(st), "sync");
            ok(chose, "AUTO picks SPAN up and %s down for %zu-byte rows at pitch %zu",
               down == CUXFER_PLAN_PACK ? "PACK" : "DIRECT (no copy kernel before CUDA 12.5)",
               w, hp);
            for (k = 0; k < 2; ++k) {
                GPU_MUST(cuxfer_view_wrap(&back, bb[k], hp, w, h, 1));
                good &= check_host(&back, (const unsigned char *)hb[k], hp, 0x5A, "gathered");
                GPU_MUST(cudaMemcpy(whole, db[k], dp * h + off, cudaMemcpyDeviceToHost));
                for (y = 0; y < h && gaps; ++y)
                    for (x = 0; x < dp; ++x) {
                        /* the first `off` bytes of the buffer are before the view */
                        size_t at = y * dp + x + off;
                        if (x < w ? whole[at] != ((unsigned char *)hb[k])[y * hp + x]
                                  : whole[at] != 0xA5) {
                            diag("%zu-byte rows, buffer %zu: device byte %zu of row %zu is %#x",
                                 w, k, x, y, whole[at]);
                            gaps = 0;
                            break;
                        }
                    }
                for (x = 0; x < off; ++x)
                    gaps &= whole[x] == 0xA5;
            }
            ok(good, "SPAN up, PACK down, %zu-byte rows x %zu, device offset %zu pitch %zu, twice "
               "without a sync: byte-exact, host gaps untouched", w, h, off, dp);
            ok(gaps, "%zu-byte rows, device offset %zu pitch %zu: every device row byte-exact, no "
               "device byte outside the rows written", w, off, dp);
            GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
            for (k = 0; k < 2; ++k) {
                cudaFree(db[k]);
                cuxfer_host_free(hb[k]);
                cuxfer_host_free(bb[k]);
            }
            free(whole);
        }
    }
    /* One AUTO plan, SPAN uploads on stream A and PACK downloads on stream
     * B, six of each queued with no sync: B waits only for A's upload of
     * the same buffer, never A for B.  SPAN uses whole scratch buffers and
     * PACK slots inside them, so an upload must not start on a buffer a
     * download on the other stream still packs or copies from (the plan
     * marks every slot free at each copy's join). */
    {
        enum { NB = 6 };
        size_t w = 8, h = 140000, hp = 16, k;
        cudaStream_t sa, sb;
        cudaEvent_t up[NB];
        void *hb[NB], *bb[NB], *db[NB];
        cuxfer_view src, dev, back;
        int good = 1, chose = 1;
        plan_create(&p, 64 * 1024, 0, 4);
        GPU_MUST(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
        GPU_MUST(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
        for (k = 0; k < NB; ++k) {
            hb[k] = bb[k] = db[k] = NULL;
            GPU_MUST(cuxfer_host_alloc(&hb[k], hp * h, 1, 0));
            GPU_MUST(cuxfer_host_alloc(&bb[k], hp * h, 1, 0));
            GPU_MUST(cudaMalloc(&db[k], w * h));
            GPU_MUST(cudaEventCreateWithFlags(&up[k], cudaEventDisableTiming));
            fill_pattern(hb[k], hp * h, (unsigned)(1000 + k));
            memset(bb[k], 0x5A, hp * h);
        }
        for (k = 0; k < NB; ++k) {
            GPU_MUST(cuxfer_view_wrap(&src, hb[k], hp, w, h, 1));
            GPU_MUST(cuxfer_view_wrap(&dev, db[k], w, w, h, 1));
            GPU_MUST(cuxfer_view_wrap(&back, bb[k], hp, w, h, 1));
            chose &= cuxfer_plan2d_choose(&p, &dev, &src) == CUXFER_PLAN_SPAN &&
                     cuxfer_plan2d_choose(&p, &back, &dev) == CUXFER_PLAN_PACK;
            GPU_MUST(cuxfer_plan2d_copy_async(&p, &dev, &src, sa));
            GPU_MUST(cudaEventRecord(up[k], sa));
            GPU_MUST(cudaStreamWaitEvent(sb, up[k], 0));
            GPU_MUST(cuxfer_plan2d_copy_async(&p, &back, &dev, sb));
        }
        ok(chose, "AUTO picks SPAN up and PACK down for 8-byte rows at pitch 16");
        GPU_OK(cudaStreamSynchronize(sa), "sync stream A");
        GPU_OK(cudaStreamSynchronize(sb), "sync stream B");
        for (k = 0; k < NB; ++k) {
            GPU_MUST(cuxfer_view_wrap(&back, bb[k], hp, w, h, 1));
            good &= check_host(&back, (const unsigned char *)hb[k], hp, 0x5A, "two streams");
        }
        ok(good, "SPAN on one stream, PACK on another, one plan, no syncs: all byte-exact");
        GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
        for (k = 0; k < NB; ++k) {
            cudaFree(db[k]);
            cuxfer_host_free(hb[k]);
            cuxfer_host_free(bb[k]);
            cudaEventDestroy(up[k]);
        }
        cudaStreamDestroy(sa);
        cudaStreamDestroy(sb);
    }
    plan_create(&p, 0, 0, 0);
    GPU_OK(cuxfer_plan2d_calibrate(&p, st, &t, NULL, NULL), "calibrate");
    diag("calibrated: SPAN up to %zu-byte rows, PACK up to %zu-byte rows", t.span_max_row,
         t.pack_max_row);
    ok(t.span_max_row <= 128 && t.pack_max_row <= 128, "tuning stays within the measured widths");
    GPU_OK(cuxfer_plan2d_destroy(&p), "destroy");
    is_int(cudaSuccess, cudaGetLastError(), "no error left behind");
    cudaStreamDestroy(st);
    done_testing();
}
