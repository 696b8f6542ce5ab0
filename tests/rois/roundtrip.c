/* SPDX-License-Identifier: MIT */
/* cuxfer_rois moves random tiles (equal 8x8, varying 0..40 on a side
 * with empty ones among them, and a few large ones) of a pinned and of a
 * pageable image to a dense device buffer and back, byte for byte against
 * a CPU reference, with every strategy (AUTO, DIRECT forced, GATHER forced
 * with small chunks so the staging slots are reused hundreds of times,
 * KERNEL forced with slots of 200 tiles), on every kind of stream: created
 * non-blocking and blocking, the legacy default stream 0,
 * cudaStreamPerThread, another device's stream.  The device buffer and
 * the host image are poisoned before each copy; bytes past the tiles must
 * keep the poison.  KERNEL also runs with elements of 1, 2, 3, 8 and 16
 * bytes and an odd base address (every unit width of its code), refuses a
 * pageable image, and is refused at create on a runtime older than 12.5.
 * Inside a Global capture AUTO records the direct loop and the graph
 * replays three times with new image contents; a forced GATHER or KERNEL
 * is refused there without breaking the capture. */
#include "gpu.h"

enum { W = 1000, H = 700, E = 4, PITCH = (W * E + 63) / 64 * 64, MAXN = 2400 }; /* 4032: 32 gap bytes a row */

static unsigned rng = 99u;
static size_t rnd(size_t n)
{
    rng = rng * 1103515245u + 12345u;
    return (size_t)(rng >> 8) % n;
}

static cuxfer_roi rois[3][MAXN];
static size_t nrois[3];
static size_t offs[MAXN + 1];
static unsigned char *want_dense, *got_dense, *want_img, *dense_src;
static size_t dense_cap;

/* Distinct cells of a grid of step `step`, in random order. */
static size_t make_set(cuxfer_roi *r, size_t n, size_t step, size_t wmax, int equal)
{
    size_t cols = W / step, rows = H / step, cells = cols * rows, i, k = 0;
    size_t *perm = (size_t *)malloc(cells * sizeof *perm);
    for (i = 0; i < cells; ++i)
        perm[i] = i;
    for (i = cells - 1; i > 0; --i) {
        size_t j = rnd(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (i = 0; i < n && i < cells; ++i, ++k) {
        r[k].x = perm[i] % cols * step + (equal ? 0 : rnd(step - wmax + 1));
        r[k].y = perm[i] / cols * step + (equal ? 0 : rnd(step - wmax + 1));
        r[k].width = equal ? wmax : rnd(wmax + 1);
        r[k].height = equal ? wmax : rnd(wmax + 1);
    }
    free(perm);
    return k;
}

/* The dense bytes of tiles r of image img (pitch PITCH). */
static size_t reference_dense(const unsigned char *img, const cuxfer_roi *r, size_t n,
                              unsigned char *out)
{
    size_t i, y, o = 0;
    for (i = 0; i < n; ++i)
        for (y = 0; y < r[i].height; ++y, o += r[i].width * E)
            memcpy(out + o, img + (r[i].y + y) * PITCH + r[i].x * E, r[i].width * E);
    return o;
}

/* img poisoned with 0x5A everywhere, then the dense tiles scattered. */
static void reference_img(const unsigned char *dense, const cuxfer_roi *r, size_t n,
                          unsigned char *img)
{
    size_t i, y, o = 0;
    memset(img, 0x5A, (size_t)PITCH * H);
    for (i = 0; i < n; ++i)
        for (y = 0; y < r[i].height; ++y, o += r[i].width * E)
            memcpy(img + (r[i].y + y) * PITCH + r[i].x * E, dense + o, r[i].width * E);
}

/* One H2D and one D2H of set `set` with plan p on stream s; 1 when both
 * are byte-exact (the device tail and the host gaps keep their poison). */
static int roundtrip(cuxfer_rois *p, const cuxfer_view *img, cuxfer_view *back, int set,
                     const cuxfer_view *dense, cudaStream_t s, const char *what)
{
    size_t n = nrois[set], total = reference_dense((const unsigned char *)img->ptr, rois[set], n,
                                                   want_dense);
    cudaError_t err;
    int good = 1;
    GPU_MUST(cudaMemset(dense->ptr, 0xA5, dense_cap));
    GPU_MUST(cudaDeviceSynchronize());
    err = cuxfer_rois_copy_async(p, CUXFER_ROIS_H2D, img, rois[set], n, dense, s);
    if (!ok(err == cudaSuccess, "%s: H2D of %zu tiles", what, n))
        diag("%s: %s", cudaGetErrorName(err), cuxfer_last_reason());
    GPU_MUST(cudaStreamSynchronize(s));
    GPU_MUST(cudaMemcpy(got_dense, dense->ptr, dense_cap, cudaMemcpyDeviceToHost));
    if (memcmp(got_dense, want_dense, total) != 0) {
        diag("%s: the dense tiles differ", what);
        good = 0;
    } else if (total < dense_cap && got_dense[total] != 0xA5) {
        diag("%s: a byte past the tiles was written", what);
        good = 0;
    }
    /* D2H of different bytes: a dense source the image never had */
    fill_pattern(dense_src, total, (unsigned)set + 500u);
    GPU_MUST(cudaMemcpy(dense->ptr, dense_src, total ? total : 1, cudaMemcpyHostToDevice));
    /* from pageable memory cudaMemcpy may return before its DMA is done,
     * and a non-blocking stream does not wait for it */
    GPU_MUST(cudaDeviceSynchronize());
    reference_img(dense_src, rois[set], n, want_img);
    memset(back->ptr, 0x5A, (size_t)PITCH * H);
    err = cuxfer_rois_copy_async(p, CUXFER_ROIS_D2H, back, rois[set], n, dense, s);
    if (!ok(err == cudaSuccess, "%s: D2H of %zu tiles", what, n))
        diag("%s: %s", cudaGetErrorName(err), cuxfer_last_reason());
    GPU_MUST(cudaStreamSynchronize(s));
    if (memcmp(back->ptr, want_img, (size_t)PITCH * H) != 0) {
        diag("%s: the scattered image differs (tiles or gaps)", what);
        good = 0;
    }
    return good;
}

/* KERNEL with every unit width of its code: the pinned image seen as
 * elements of 1, 2, 3, 8 and 16 bytes, and (1-byte units) from an odd
 * base address; random tiles of each there and back, byte-exact, the
 * dense tail and the image's gaps poisoned.  12 points. */
static void kernel_units(cuxfer_rois *p, const cuxfer_view *img, const cuxfer_view *dense,
                         cudaStream_t s)
{
    static const size_t elems[] = {1, 2, 3, 8, 16, 1};
    static cuxfer_roi r[300];
    size_t e, i, y, o, total;
    unsigned char *hb = (unsigned char *)img->ptr;
    for (e = 0; e < sizeof elems / sizeof elems[0]; ++e) {
        size_t E2 = elems[e], base = e == 5 ? 1 : 0, w = (PITCH - base) / E2, n = 0;
        cuxfer_view v, dv;
        int good = 1;
        cudaError_t err;
        GPU_MUST(cuxfer_view_wrap(&v, hb + base, PITCH, w, H, E2));
        GPU_MUST(cuxfer_view_wrap(&dv, dense->ptr, dense_cap / E2 * E2, dense_cap / E2, 1, E2));
        for (i = 0; i < 16; ++i) /* 16 columns of 15 bands: disjoint */
            for (y = 0; y < 15 && n < 240; ++y, ++n) {
                size_t cw = w / 16, bh = H / 15;
                r[n].width = rnd(cw + 1);
                r[n].height = rnd(bh + 1);
                r[n].x = i * cw + rnd(cw - r[n].width + 1);
                r[n].y = y * bh + rnd(bh - r[n].height + 1);
            }
        fill_pattern(hb, (size_t)PITCH * H, 700u + (unsigned)e);
        for (i = 0, o = 0; i < n; ++i)
            for (y = 0; y < r[i].height; ++y, o += r[i].width * E2)
                memcpy(want_dense + o, hb + base + (r[i].y + y) * PITCH + r[i].x * E2,
                       r[i].width * E2);
        total = o;
        GPU_MUST(cudaMemset(dense->ptr, 0xA5, dense_cap));
        GPU_MUST(cudaDeviceSynchronize());
        err = cuxfer_rois_copy_async(p, CUXFER_ROIS_H2D, &v, r, n, &dv, s);
        if (err != cudaSuccess)
            diag("%s", cuxfer_last_reason());
        GPU_MUST(cudaStreamSynchronize(s));
        GPU_MUST(cudaMemcpy(got_dense, dense->ptr, dense_cap, cudaMemcpyDeviceToHost));
        ok(err == cudaSuccess && memcmp(got_dense, want_dense, total) == 0 &&
               (total == dense_cap || got_dense[total] == 0xA5),
           "KERNEL %zu-byte elements%s: H2D byte-exact", E2, base ? ", odd base" : "");
        /* back: new dense bytes into a poisoned image */
        fill_pattern(dense_src, total ? total : 1, 800u + (unsigned)e);
        GPU_MUST(cudaMemcpy(dense->ptr, dense_src, total ? total : 1, cudaMemcpyHostToDevice));
        GPU_MUST(cudaDeviceSynchronize());
        memset(want_img, 0x5A, (size_t)PITCH * H);
        for (i = 0, o = 0; i < n; ++i)
            for (y = 0; y < r[i].height; ++y, o += r[i].width * E2)
                memcpy(want_img + base + (r[i].y + y) * PITCH + r[i].x * E2, dense_src + o,
                       r[i].width * E2);
        memset(hb, 0x5A, (size_t)PITCH * H);
        err = cuxfer_rois_copy_async(p, CUXFER_ROIS_D2H, &v, r, n, &dv, s);
        if (err != cudaSuccess)
            diag("%s", cuxfer_last_reason());
        GPU_MUST(cudaStreamSynchronize(s));
        if (memcmp(hb, want_img, (size_t)PITCH * H) != 0)
            good = 0;
        ok(err == cudaSuccess && good, "KERNEL %zu-byte elements%s: D2H byte-exact, gaps kept",
           E2, base ? ", odd base" : "");
    }
    fill_pattern(hb, (size_t)PITCH * H, 1);
}

/* Pinned memory registered while device 1 is current (not portable), a
 * KERNEL plan of device 0: it copies byte-exactly or refuses with a
 * reason; never a fault.  1 point. */
static void kernel_foreign_host(cuxfer_rois *p, const cuxfer_view *dense, cudaStream_t s)
{
    size_t bytes = (size_t)PITCH * H, total;
    unsigned char *m = (unsigned char *)malloc(bytes);
    cuxfer_view v;
    cudaError_t err;
    GPU_MUST(cudaSetDevice(1));
    GPU_MUST(cudaHostRegister(m, bytes, cudaHostRegisterDefault));
    GPU_MUST(cudaSetDevice(0));
    fill_pattern(m, bytes, 900u);
    GPU_MUST(cuxfer_view_wrap(&v, m, PITCH, W, H, E));
    total = reference_dense(m, rois[0], nrois[0], want_dense);
    GPU_MUST(cudaMemset(dense->ptr, 0xA5, dense_cap));
    GPU_MUST(cudaDeviceSynchronize());
    err = cuxfer_rois_copy_async(p, CUXFER_ROIS_H2D, &v, rois[0], nrois[0], dense, s);
    GPU_MUST(cudaStreamSynchronize(s));
    GPU_MUST(cudaMemcpy(got_dense, dense->ptr, dense_cap, cudaMemcpyDeviceToHost));
    if (err == cudaSuccess)
        ok(memcmp(got_dense, want_dense, total) == 0,
           "KERNEL reads memory registered under device 1 byte-exactly");
    else
        ok(err == cudaErrorInvalidValue && strstr(cuxfer_last_reason(), "not pinned memory"),
           "KERNEL refuses memory registered under device 1: %s", cuxfer_last_reason());
    GPU_MUST(cudaSetDevice(1));
    GPU_MUST(cudaHostUnregister(m));
    GPU_MUST(cudaSetDevice(0));
    free(m);
}

/* A tile of 2^31 bytes is beyond KERNEL's 32-bit counts: it goes by
 * cudaMemcpy2DAsync in the same call, beside a small tile the kernel
 * moves; both byte-exact there and back.  Skipped (1 point) where 4 GiB of
 * pinned and device memory cannot be had.  2 points. */
static void kernel_huge_tile(cuxfer_rois *p, cudaStream_t s)
{
    const size_t big = (size_t)1 << 31, wide = big + 4096;
    unsigned char *h = NULL, *d = NULL, *chk;
    cuxfer_roi r[2] = {{0, 0, 0, 1}, {0, 0, 64, 1}};
    cuxfer_view hv, dv;
    cudaError_t err;
    size_t i;
    if (cudaHostAlloc((void **)&h, wide, 0) != cudaSuccess ||
        cudaMalloc((void **)&d, big + 64) != cudaSuccess || !(chk = (unsigned char *)malloc(64))) {
        (void)cudaGetLastError();
        if (h)
            cudaFreeHost(h);
        if (d)
            cudaFree(d);
        skip(2, "a 2 GiB tile needs 4 GiB of pinned and device memory");
        return;
    }
    r[0].width = big;
    r[1].x = big + 1000;
    GPU_MUST(cuxfer_view_wrap(&hv, h, wide, wide, 1, 1));
    GPU_MUST(cuxfer_view_wrap(&dv, d, big + 64, big + 64, 1, 1));
    for (i = 0; i < wide; i += 4096)
        h[i] = (unsigned char)(i >> 12);
    fill_pattern(h + big + 1000, 64, 77u);
    err = cuxfer_rois_copy_async(p, CUXFER_ROIS_H2D, &hv, r, 2, &dv, s);
    GPU_MUST(cudaStreamSynchronize(s));
    {
        int good = err == cudaSuccess;
        unsigned char b;
        for (i = 0; good && i < big; i += 4096 * 97) {
            GPU_MUST(cudaMemcpy(&b, d + i, 1, cudaMemcpyDeviceToHost));
            good = b == h[i];
        }
        GPU_MUST(cudaMemcpy(chk, d + big, 64, cudaMemcpyDeviceToHost));
        ok(good && memcmp(chk, h + big + 1000, 64) == 0,
           "KERNEL: a 2 GiB tile (by cudaMemcpy2DAsync) and a small one, H2D");
    }
    memset(h, 0x5A, wide);
    err = cuxfer_rois_copy_async(p, CUXFER_ROIS_D2H, &hv, r, 2, &dv, s);
    GPU_MUST(cudaStreamSynchronize(s));
    {
        int good = err == cudaSuccess;
        for (i = 0; good && i < big; i += 4096 * 97)
            good = h[i] == (unsigned char)(i >> 12);
        for (i = big; good && i < wide; ++i)
            good = (i >= big + 1000 && i < big + 1064) ? h[i] == chk[i - big - 1000]
                                                       : h[i] == 0x5A;
        ok(good, "KERNEL: the same D2H, bytes past the tiles untouched");
    }
    free(chk);
    cudaFreeHost(h);
    cudaFree(d);
}

int main(void)
{
    static const int strategies[] = {CUXFER_ROIS_AUTO, CUXFER_ROIS_DIRECT, CUXFER_ROIS_GATHER,
                                     CUXFER_ROIS_KERNEL};
    static const char *const sname[] = {"AUTO", "DIRECT", "GATHER", "KERNEL"};
    cuxfer_rois p[4];
    int nplans = 3; /* 4 where the runtime has KERNEL */
    cuxfer_view img, back, pimg, pback, dense;
    cudaStream_t nb, bl;
    int ndev, si, set, k;
    char what[160];

    ndev = gpu_require(1);
    plan(0);
    GPU_MUST(cudaSetDevice(0));
    nrois[0] = make_set(rois[0], MAXN, 10, 8, 1);   /* 2400 tiles of 8x8 */
    nrois[1] = make_set(rois[1], 600, 48, 40, 0);   /* 0..40 on a side, some empty */
    nrois[2] = make_set(rois[2], 4, 300, 300, 1);   /* 4 large tiles */
    GPU_MUST(cuxfer_view_alloc_host(&img, W, H, E, 64));
    GPU_MUST(cuxfer_view_alloc_host(&back, W, H, E, 64));
    ok(img.pitch == PITCH, "image pitch %zu", img.pitch);
    fill_pattern(img.ptr, (size_t)PITCH * H, 1);
    /* the same image in pageable memory: GATHER reads it as it is */
    GPU_MUST(cuxfer_view_wrap(&pimg, malloc((size_t)PITCH * H), PITCH, W, H, E));
    GPU_MUST(cuxfer_view_wrap(&pback, malloc((size_t)PITCH * H), PITCH, W, H, E));
    memcpy(pimg.ptr, img.ptr, (size_t)PITCH * H);
    dense_cap = (size_t)W * H * E;
    want_dense = (unsigned char *)malloc(dense_cap);
    got_dense = (unsigned char *)malloc(dense_cap);
    dense_src = (unsigned char *)malloc(dense_cap);
    want_img = (unsigned char *)malloc((size_t)PITCH * H);
    {
        void *d = NULL;
        GPU_MUST(cudaMalloc(&d, dense_cap));
        GPU_MUST(cuxfer_view_wrap(&dense, d, (size_t)W * E, W, H, E));
    }
    GPU_MUST(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    GPU_MUST(cudaStreamCreateWithFlags(&bl, cudaStreamDefault));
    for (si = 0; si < 4; ++si) {
        cuxfer_rois_options o;
        cudaError_t err;
        memset(&o, 0, sizeof o);
        o.strategy = strategies[si];
        o.threads = 4;
        if (si == 2)
            o.chunk_bytes = 10000; /* hundreds of chunks, rows split between them */
        if (si == 3)
            o.chunk_bytes = 4800; /* 200 descriptors a slot: 12 launches for 2400 tiles */
        err = cuxfer_rois_create(&p[si], &o);
        if (si < 3) {
            GPU_MUST(err);
            continue;
        }
#if CUDART_VERSION >= 12050
        GPU_OK(err, "forced KERNEL plan created (runtime %d)", CUDART_VERSION);
        nplans = err == cudaSuccess ? 4 : 3;
#else
        is_int(cudaErrorNotSupported, err, "forced KERNEL refused at create before CUDA 12.5");
        contains(cuxfer_last_reason(), "older than 12.5", "reason names the runtime");
#endif
    }
    {
        size_t t0, t2;
        GPU_MUST(cuxfer_rois_offsets(rois[0], nrois[0], E, offs));
        t0 = offs[nrois[0]];
        GPU_MUST(cuxfer_rois_offsets(rois[2], nrois[2], E, offs));
        t2 = offs[nrois[2]];
#if CUDART_VERSION >= 12050
        is_int(CUXFER_ROIS_KERNEL, cuxfer_rois_choose(&p[0], nrois[0], t0),
               "AUTO picks KERNEL for 2400 tiles of 8x8");
        /* the default threshold, 3 MiB a tile (cuxfer_rois(3)) */
        is_int(CUXFER_ROIS_KERNEL, cuxfer_rois_choose(&p[0], 256, (size_t)256 * (256 << 10)),
               "AUTO picks KERNEL for 256 tiles of 256 KiB (256x256 RGBA8)");
        is_int(CUXFER_ROIS_KERNEL, cuxfer_rois_choose(&p[0], 28, (size_t)28 * 768 * 768 * 4),
               "AUTO picks KERNEL for 28 tiles of 2.25 MiB (768x768 RGBA8)");
        is_int(CUXFER_ROIS_DIRECT, cuxfer_rois_choose(&p[0], 16, (size_t)16 << 22),
               "AUTO picks DIRECT for 16 tiles of 4 MiB (1024x1024 RGBA8)");
#else
        is_int(CUXFER_ROIS_GATHER, cuxfer_rois_choose(&p[0], nrois[0], t0),
               "AUTO picks GATHER for 2400 tiles of 8x8 (no KERNEL before 12.5)");
#endif
        is_int(CUXFER_ROIS_DIRECT, cuxfer_rois_choose(&p[0], nrois[2], t2),
               "AUTO picks DIRECT for 4 tiles of 300x300");
    }

    for (si = 0; si < nplans; ++si)
        for (set = 0; set < 3; ++set) {
            static const char *const kname[] = {"non-blocking", "blocking", "legacy 0",
                                                "per-thread"};
            cudaStream_t ks[4];
            ks[0] = nb;
            ks[1] = bl;
            ks[2] = (cudaStream_t)0;
            ks[3] = cudaStreamPerThread;
            for (k = 0; k < 4; ++k) {
                snprintf(what, sizeof what, "%s set %d, %s stream", sname[si], set, kname[k]);
                ok(roundtrip(&p[si], &img, &back, set, &dense, ks[k], what),
                   "%s: round trip byte-exact", what);
            }
            snprintf(what, sizeof what, "%s set %d, pageable image", sname[si], set);
            if (strategies[si] != CUXFER_ROIS_KERNEL) {
                ok(roundtrip(&p[si], &pimg, &pback, set, &dense, nb, what),
                   "%s: round trip byte-exact", what);
                continue;
            }
            is_int(cudaErrorInvalidValue,
                   cuxfer_rois_copy_async(&p[si], CUXFER_ROIS_H2D, &pimg, rois[set], nrois[set],
                                          &dense, nb),
                   "%s: refused", what);
            contains(cuxfer_last_reason(), "not pinned memory mapped", "%s: reason", what);
        }
    if (nplans == 4) {
        kernel_units(&p[3], &img, &dense, nb);
        kernel_huge_tile(&p[3], nb);
    } else {
        skip(14, "KERNEL needs the CUDA 12.5 runtime");
    }

    /* GATHER has read the image when the H2D call returns */
    {
        size_t total = reference_dense((const unsigned char *)img.ptr, rois[0], nrois[0],
                                       want_dense);
        GPU_OK(cuxfer_rois_copy_async(&p[2], CUXFER_ROIS_H2D, &img, rois[0], nrois[0], &dense, nb),
               "GATHER H2D");
        memset(img.ptr, 0, (size_t)PITCH * H); /* before the stream is done */
        GPU_MUST(cudaStreamSynchronize(nb));
        GPU_MUST(cudaMemcpy(got_dense, dense.ptr, total, cudaMemcpyDeviceToHost));
        ok(memcmp(got_dense, want_dense, total) == 0,
           "GATHER: the host image may change as soon as the H2D call returns");
        fill_pattern(img.ptr, (size_t)PITCH * H, 1);
    }

    /* refusals reach the caller before any copy */
    {
        cuxfer_roi two[2] = {{0, 0, 8, 8}, {4, 4, 8, 8}};
        is_int(cudaErrorInvalidValue,
               cuxfer_rois_copy_async(&p[0], CUXFER_ROIS_D2H, &back, two, 2, &dense, nb),
               "overlapping destinations refused");
        contains(cuxfer_last_reason(), "ROI 0 (x 0, y 0, 8x8) overlaps ROI 1", "reason names them");
        is_int(cudaErrorInvalidValue,
               cuxfer_rois_copy_async(&p[0], CUXFER_ROIS_H2D, &dense, two, 2, &dense, nb),
               "a device-memory host view refused");
    }

    /* capture: Global mode, AUTO records the direct loop, three replays */
    {
        cudaGraph_t g = NULL;
        cudaGraphExec_t ge = NULL;
        cudaError_t err, err2, err3;
        size_t total;
        int rep, good = 1;
        GPU_MUST(cudaStreamBeginCapture(nb, cudaStreamCaptureModeGlobal));
        err = cuxfer_rois_copy_async(&p[0], CUXFER_ROIS_H2D, &img, rois[0], nrois[0], &dense, nb);
        err2 = cuxfer_rois_copy_async(&p[2], CUXFER_ROIS_H2D, &img, rois[0], nrois[0], &dense, nb);
        err3 = nplans == 4 ? cuxfer_rois_copy_async(&p[3], CUXFER_ROIS_D2H, &back, rois[0],
                                                    nrois[0], &dense, nb)
                           : cudaErrorStreamCaptureUnsupported;
        GPU_OK(cudaStreamEndCapture(nb, &g), "the capture survives the calls");
        is_int(cudaErrorStreamCaptureUnsupported, err3, "forced KERNEL inside a capture refused");
        is_int(cudaSuccess, err, "AUTO inside a Global capture records the direct loop");
        is_int(cudaErrorStreamCaptureUnsupported, err2, "forced GATHER inside a capture refused");
        contains(cuxfer_last_reason(), "captured", "reason says the stream is captured");
        if (g) {
            GPU_OK(cudaGraphInstantiateWithFlags(&ge, g, 0), "instantiate");
            for (rep = 0; rep < 3 && ge; ++rep) {
                fill_pattern(img.ptr, (size_t)PITCH * H, 40u + (unsigned)rep);
                total = reference_dense((const unsigned char *)img.ptr, rois[0], nrois[0],
                                        want_dense);
                /* on nb: a plain cudaMemset may still run when the non-blocking
                 * stream starts the replay */
                GPU_MUST(cudaMemsetAsync(dense.ptr, 0xA5, dense_cap, nb));
                GPU_OK(cudaGraphLaunch(ge, nb), "replay %d", rep);
                GPU_MUST(cudaStreamSynchronize(nb));
                GPU_MUST(cudaMemcpy(got_dense, dense.ptr, total, cudaMemcpyDeviceToHost));
                if (memcmp(got_dense, want_dense, total) != 0) {
                    diag("replay %d: dense tiles differ", rep);
                    good = 0;
                }
            }
            ok(good && ge, "three replays copy the image's current tiles byte-exactly");
            if (ge)
                cudaGraphExecDestroy(ge);
            cudaGraphDestroy(g);
        }
        fill_pattern(img.ptr, (size_t)PITCH * H, 1);
    }

    /* another device's stream: AUTO falls back to the loop, forced GATHER
     * refuses with a reason */
    if (ndev >= 2) {
        cudaStream_t other;
        cudaError_t err;
        GPU_MUST(cudaSetDevice(1));
        GPU_MUST(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        GPU_MUST(cudaSetDevice(0));
        snprintf(what, sizeof what, "AUTO set 0, device 1's stream");
        ok(roundtrip(&p[0], &img, &back, 0, &dense, other, what), "%s: round trip byte-exact",
           what);
        err = cuxfer_rois_copy_async(&p[2], CUXFER_ROIS_H2D, &img, rois[0], nrois[0], &dense,
                                     other);
        is_int(cudaErrorInvalidDevice, err, "forced GATHER on device 1's stream refused");
        contains(cuxfer_last_reason(), "another device", "reason names the device mismatch");
        if (nplans == 4) {
            err = cuxfer_rois_copy_async(&p[3], CUXFER_ROIS_D2H, &back, rois[0], nrois[0],
                                         &dense, other);
            is_int(cudaErrorInvalidDevice, err, "forced KERNEL on device 1's stream refused");
            kernel_foreign_host(&p[3], &dense, nb);
        } else {
            skip(3, "KERNEL needs the CUDA 12.5 runtime");
        }
        GPU_MUST(cudaStreamSynchronize(other));
        GPU_MUST(cudaStreamDestroy(other));
    } else {
        skip(8, "another device's stream needs 2 GPUs");
    }

    for (si = 0; si < nplans; ++si)
        GPU_OK(cuxfer_rois_destroy(&p[si]), "destroy %s plan", sname[si]);
    GPU_OK(cuxfer_rois_destroy(&p[0]), "destroy twice is harmless");
    cudaFree(dense.ptr);
    cuxfer_view_free(&img);
    cuxfer_view_free(&back);
    free(pimg.ptr);
    free(pback.ptr);
    free(want_dense);
    free(got_dense);
    free(dense_src);
    free(want_img);
    cudaStreamDestroy(nb);
    cudaStreamDestroy(bl);
    done_testing();
}
