/* SPDX-License-Identifier: MIT */
/* 2D ROI copies on the GPU are byte-exact in all four directions, for
 * element sizes 1..16 (3-byte RGB and 12-byte float3 included), ROIs at
 * the corners, full, odd, one row and one column, from pinned and from
 * registered host memory - and they never write outside the ROI (the pitch
 * padding and the rest of a canvas keep their poison). */
#include "gpu.h"
#include "views.h"

#define IMG_W 37
#define IMG_H 23
#define POISON_DEV 0xA5
#define POISON_HOST 0x5A

static cudaStream_t st;
static int failures_shown;

/* CPU reference: the ROI of the host image, packed. */
static void crop(const cuxfer_view *img, cuxfer_roi r, unsigned char *out)
{
    size_t y, row = r.width * img->elem_size;
    for (y = 0; y < r.height; ++y)
        memcpy(out + y * row,
               (const unsigned char *)img->ptr + (r.y + y) * img->pitch + r.x * img->elem_size,
               row);
}

/* Compare a host view with a packed reference; also check that the bytes
 * between row end and pitch still hold `poison`. */
static int same(const cuxfer_view *got, const unsigned char *want, int poison, const char *what)
{
    size_t y, x, row = got->width * got->elem_size;
    for (y = 0; y < got->height; ++y) {
        const unsigned char *g = (const unsigned char *)got->ptr + y * got->pitch;
        for (x = 0; x < row; ++x)
            if (g[x] != want[y * row + x]) {
                if (failures_shown++ < 5)
                    diag("%s: byte %zu of row %zu: got 0x%02x want 0x%02x", what, x, y,
                         g[x], want[y * row + x]);
                return 0;
            }
        for (x = row; poison >= 0 && x < got->pitch; ++x)
            if (g[x] != (unsigned char)poison) {
                if (failures_shown++ < 5)
                    diag("%s: padding byte %zu of row %zu was written", what, x, y);
                return 0;
            }
    }
    return 1;
}

/* Bring a device view back into a fresh host view (for checking). */
static void fetch(const cuxfer_view *dev, cuxfer_view *host)
{
    GPU_MUST(cuxfer_view_alloc_host(host, dev->width, dev->height, dev->elem_size, 0));
    memset(host->ptr, 0, host->pitch * host->height);
    GPU_MUST(cuxfer_copy2d_async(host, dev, st));
    GPU_MUST(cudaStreamSynchronize(st));
}

static int run_case(const cuxfer_view *himg, const cuxfer_view *dimg, cuxfer_roi r, int *pass)
{
    size_t es = himg->elem_size, n = r.width * r.height * es;
    unsigned char *want = (unsigned char *)malloc(n ? n : 1);
    cuxfer_view hsub, dsub, dout, hout, back, canvas, cv;
    cuxfer_roi place;
    int okk;

    crop(himg, r, want);
    GPU_MUST(cuxfer_view_sub(himg, r, &hsub));
    GPU_MUST(cuxfer_view_sub(dimg, r, &dsub));

    /* H2D: host ROI (source pitch = the full row) -> pitched device view */
    GPU_MUST(cuxfer_view_alloc_device(&dout, r.width, r.height, es));
    GPU_MUST(cudaMemset2DAsync(dout.ptr, dout.pitch, POISON_DEV, r.width * es, r.height, st));
    GPU_MUST(cuxfer_copy2d_async(&dout, &hsub, st));
    fetch(&dout, &back);
    pass[0] &= same(&back, want, -1, "H2D");
    cuxfer_view_free(&back);

    /* D2H: device ROI -> padded pinned host view (padding must stay) */
    GPU_MUST(cuxfer_view_alloc_host(&hout, r.width, r.height, es, 64));
    memset(hout.ptr, POISON_HOST, hout.pitch * hout.height);
    GPU_MUST(cuxfer_copy2d_async(&hout, &dsub, st));
    GPU_MUST(cudaStreamSynchronize(st));
    pass[1] &= same(&hout, want, hout.pitch > r.width * es ? POISON_HOST : -1, "D2H");

    /* D2D: device ROI -> a placed sub-view of a larger device canvas; the
     * rest of the canvas must keep its poison. */
    GPU_MUST(cuxfer_view_alloc_device(&canvas, r.width + 5, r.height + 3, es));
    GPU_MUST(cudaMemset2DAsync(canvas.ptr, canvas.pitch, POISON_DEV, canvas.width * es,
                               canvas.height, st));
    place.x = 3;
    place.y = 2;
    place.width = r.width;
    place.height = r.height;
    GPU_MUST(cuxfer_view_sub(&canvas, place, &cv));
    GPU_MUST(cuxfer_copy2d_async(&cv, &dsub, st));
    fetch(&canvas, &back);
    {
        size_t y, x, cw = canvas.width * es;
        okk = 1;
        for (y = 0; y < canvas.height && okk; ++y)
            for (x = 0; x < cw && okk; ++x) {
                unsigned char g = ((unsigned char *)back.ptr)[y * back.pitch + x];
                int inside = y >= 2 && y < 2 + r.height && x >= 3 * es && x < (3 + r.width) * es;
                unsigned char w = inside ? want[(y - 2) * r.width * es + (x - 3 * es)]
                                         : (unsigned char)POISON_DEV;
                if (g != w) {
                    if (failures_shown++ < 5)
                        diag("D2D canvas: byte %zu of row %zu: got 0x%02x want 0x%02x (%s)", x,
                             y, g, w, inside ? "inside" : "outside");
                    okk = 0;
                }
            }
        pass[2] &= okk;
    }
    cuxfer_view_free(&back);

    /* H2H: host ROI -> host view */
    memset(hout.ptr, POISON_HOST, hout.pitch * hout.height);
    GPU_MUST(cuxfer_copy2d_async(&hout, &hsub, st));
    GPU_MUST(cudaStreamSynchronize(st));
    pass[3] &= same(&hout, want, hout.pitch > r.width * es ? POISON_HOST : -1, "H2H");

    cuxfer_view_free(&dout);
    cuxfer_view_free(&hout);
    cuxfer_view_free(&canvas);
    free(want);
    return 0;
}

int main(void)
{
    static const size_t elems[] = {1, 2, 3, 4, 8, 12, 16};
    static const char *const dir[] = {"H2D", "D2H", "D2D", "H2H"};
    cuxfer_roi rois[12];
    size_t nroi = 0, ei, ri;
    int hk, d;
    unsigned seed = 7;

    gpu_require(1);
    plan(0);
    GPU_MUST(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    rois[nroi++] = roi_of(0, 0, 1, 1);
    rois[nroi++] = roi_of(IMG_W - 1, 0, 1, 1);
    rois[nroi++] = roi_of(0, IMG_H - 1, 1, 1);
    rois[nroi++] = roi_of(IMG_W - 1, IMG_H - 1, 1, 1);
    rois[nroi++] = roi_of(0, 0, IMG_W, IMG_H);
    rois[nroi++] = roi_of(3, 2, 7, 5);
    rois[nroi++] = roi_of(0, IMG_H / 2, IMG_W, 1);
    rois[nroi++] = roi_of(IMG_W / 2, 0, 1, IMG_H);
    while (nroi < sizeof rois / sizeof rois[0]) {
        size_t x, y;
        seed = seed * 1103515245u + 12345u;
        x = (seed >> 8) % IMG_W;
        seed = seed * 1103515245u + 12345u;
        y = (seed >> 8) % IMG_H;
        rois[nroi++] = roi_of(x, y, 1 + (seed >> 4) % (IMG_W - x), 1 + (seed >> 12) % (IMG_H - y));
    }

    for (ei = 0; ei < sizeof elems / sizeof elems[0]; ++ei)
        for (hk = 0; hk < 2; ++hk) {
            size_t es = elems[ei];
            cuxfer_view himg, dimg;
            void *raw = NULL;
            int pass[4] = {1, 1, 1, 1};
            if (hk == 0) {
                GPU_MUST(cuxfer_view_alloc_host(&himg, IMG_W, IMG_H, es, 0));
            } else {
                /* Registered: malloc'd memory pinned in place, starting at
                 * an odd address (any start and length). */
                size_t pitch = IMG_W * es + 5;
                raw = malloc(pitch * IMG_H + 16);
                GPU_MUST(cuxfer_host_register((unsigned char *)raw + 3, pitch * IMG_H, 0));
                GPU_MUST(cuxfer_view_wrap(&himg, (unsigned char *)raw + 3, pitch, IMG_W, IMG_H, es));
                if (!ok(himg.kind == CUXFER_MEMORY_PINNED, "registered memory wraps as pinned (elem %zu)", es))
                    diag("kind: %s", cuxfer_memkind_name(himg.kind));
            }
            fill_pattern(himg.ptr, himg.pitch * IMG_H, (unsigned)(es * 31 + (size_t)hk));
            GPU_MUST(cuxfer_view_alloc_device(&dimg, IMG_W, IMG_H, es));
            GPU_MUST(cuxfer_copy2d_async(&dimg, &himg, st));
            for (ri = 0; ri < nroi; ++ri)
                run_case(&himg, &dimg, rois[ri], pass);
            for (d = 0; d < 4; ++d)
                ok(pass[d], "%s, elem %zu, %s host memory: %zu ROIs byte-exact", dir[d], es,
                   hk ? "registered" : "pinned", nroi);
            cuxfer_view_free(&dimg);
            if (hk == 0) {
                cuxfer_view_free(&himg);
            } else {
                GPU_OK(cuxfer_host_unregister((unsigned char *)raw + 3), "unregister (elem %zu)", es);
                free(raw);
            }
        }
    is_int(cudaSuccess, cudaGetLastError(), "no CUDA error left behind");
    cudaStreamDestroy(st);
    done_testing();
}
