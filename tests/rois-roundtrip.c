/* SPDX-License-Identifier: MIT */
/* cuxfer_rois moves random tiles (equal 8x8, varying 0..40 on a side
 * with empty ones among them, and a few large ones) of a pinned and of a
 * pageable image to a dense device buffer and back, byte for byte against
 * a CPU reference, with every strategy (AUTO, DIRECT forced, GATHER forced
 * with small chunks so the staging slots are reused hundreds of times), on
 * every kind of stream: created non-blocking and blocking, the legacy
 * default stream 0, cudaStreamPerThread, another device's stream.  The
 * device buffer and the host image are poisoned before each copy; bytes
 * past the tiles must keep the poison.  Inside a Global capture AUTO
 * records the direct loop and the graph replays three times with new
 * image contents; a forced GATHER is refused there without breaking the
 * capture. */
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

int main(void)
{
    static const int strategies[] = {CUXFER_ROIS_AUTO, CUXFER_ROIS_DIRECT, CUXFER_ROIS_GATHER};
    static const char *const sname[] = {"AUTO", "DIRECT", "GATHER"};
    cuxfer_rois p[3];
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
    for (si = 0; si < 3; ++si) {
        cuxfer_rois_options o;
        memset(&o, 0, sizeof o);
        o.strategy = strategies[si];
        o.threads = 4;
        if (si == 2)
            o.chunk_bytes = 10000; /* hundreds of chunks, rows split between them */
        GPU_MUST(cuxfer_rois_create(&p[si], &o));
    }
    {
        size_t t0, t2;
        GPU_MUST(cuxfer_rois_offsets(rois[0], nrois[0], E, offs));
        t0 = offs[nrois[0]];
        GPU_MUST(cuxfer_rois_offsets(rois[2], nrois[2], E, offs));
        t2 = offs[nrois[2]];
        is_int(CUXFER_ROIS_GATHER, cuxfer_rois_choose(&p[0], nrois[0], t0),
               "AUTO picks GATHER for 2400 tiles of 8x8");
        is_int(CUXFER_ROIS_DIRECT, cuxfer_rois_choose(&p[0], nrois[2], t2),
               "AUTO picks DIRECT for 4 tiles of 300x300");
    }

    for (si = 0; si < 3; ++si)
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
            ok(roundtrip(&p[si], &pimg, &pback, set, &dense, nb, what),
               "%s: round trip byte-exact", what);
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
        cudaError_t err, err2;
        size_t total;
        int rep, good = 1;
        GPU_MUST(cudaStreamBeginCapture(nb, cudaStreamCaptureModeGlobal));
        err = cuxfer_rois_copy_async(&p[0], CUXFER_ROIS_H2D, &img, rois[0], nrois[0], &dense, nb);
        err2 = cuxfer_rois_copy_async(&p[2], CUXFER_ROIS_H2D, &img, rois[0], nrois[0], &dense, nb);
        GPU_OK(cudaStreamEndCapture(nb, &g), "the capture survives both calls");
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
        GPU_MUST(cudaStreamSynchronize(other));
        GPU_MUST(cudaStreamDestroy(other));
    } else {
        skip(5, "another device's stream needs 2 GPUs");
    }

    for (si = 0; si < 3; ++si)
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
