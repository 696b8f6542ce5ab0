/* SPDX-License-Identifier: MIT */
/*
 * roi-tiles - move regions of interest of a pinned image to the GPU and
 * back: each tile of a 3x3 grid is cut out of the image with
 * cuxfer_view_sub, uploaded into a dense device tile and downloaded into
 * its place in an output image, on the streams of a pool in turn.  No pitch, byte
 * width or pointer offset is computed by hand.  Every tile comes back
 * byte-exact and the gaps between tiles stay untouched.  Exit 0 when
 * right, 1 when not, 77 when there is no CUDA device.
 */
#include <stdio.h>
#include <string.h>
#include <cuxfer.h>

enum { W = 1000, H = 700, TILE_W = 300, TILE_H = 200, GRID = 3, GAP = 20 };

int main(void)
{
    cuxfer_view img, out, src, dst, dev[GRID * GRID];
    cuxfer_stream_pool pool;
    size_t x, y;
    int ndev, k, bad = 0;

    if (cuxfer_device_count(&ndev) != cudaSuccess) {
        fprintf(stderr, "roi-tiles: skipped: no CUDA device: %s\n", cuxfer_last_reason());
        return 77;
    }
    /* RGBA8 images, rows padded to 256 bytes. */
    CUXFER_CHECK(cuxfer_view_alloc_host(&img, W, H, 4, 256));
    CUXFER_CHECK(cuxfer_view_alloc_host(&out, W, H, 4, 256));
    CUXFER_CHECK(cuxfer_stream_pool_create(&pool, GRID, 0, 0));
    for (y = 0; y < H; ++y)
        for (x = 0; x < W * 4; ++x)
            ((unsigned char *)img.ptr)[y * img.pitch + x] = (unsigned char)(x * 7 + y * 13);
    memset(out.ptr, 0, out.pitch * H);

    for (k = 0; k < GRID * GRID; ++k) {
        cuxfer_roi r = {GAP + (size_t)(k % GRID) * (TILE_W + GAP),
                        GAP + (size_t)(k / GRID) * (TILE_H + GAP), TILE_W, TILE_H};
        cudaStream_t s;
        CUXFER_CHECK(cuxfer_stream_pool_next(&pool, &s));
        CUXFER_CHECK(cuxfer_view_alloc_device(&dev[k], TILE_W, TILE_H, 4));
        CUXFER_CHECK(cuxfer_view_sub(&img, r, &src));
        CUXFER_CHECK(cuxfer_view_sub(&out, r, &dst));
        CUXFER_CHECK(cuxfer_copy2d_async(&dev[k], &src, s));
        CUXFER_CHECK(cuxfer_copy2d_async(&dst, &dev[k], s));
    }
    CUXFER_CHECK(cuxfer_stream_pool_sync(&pool));

    /* Inside a tile: the image's bytes; in the gaps: still 0. */
    for (y = 0; y < H; ++y)
        for (x = 0; x < W; ++x) {
            size_t tx = x < GAP ? 0 : (x - GAP) % (TILE_W + GAP);
            size_t ty = y < GAP ? 0 : (y - GAP) % (TILE_H + GAP);
            int in_tile = x >= GAP && y >= GAP && tx < TILE_W && ty < TILE_H &&
                          (x - GAP) / (TILE_W + GAP) < GRID && (y - GAP) / (TILE_H + GAP) < GRID;
            const unsigned char *a = (const unsigned char *)cuxfer_view_at(&img, x, y);
            const unsigned char *b = (const unsigned char *)cuxfer_view_at(&out, x, y);
            static const unsigned char zero[4];
            bad += memcmp(b, in_tile ? a : zero, 4) != 0;
        }
    printf("roi-tiles: %d tiles of %dx%d RGBA8 up and back; %s\n", GRID * GRID, TILE_W, TILE_H,
           bad ? "WRONG" : "every pixel verified");
    for (k = 0; k < GRID * GRID; ++k)
        CUXFER_CHECK(cuxfer_view_free(&dev[k]));
    CUXFER_CHECK(cuxfer_stream_pool_destroy(&pool));
    CUXFER_CHECK(cuxfer_view_free(&out));
    CUXFER_CHECK(cuxfer_view_free(&img));
    return bad ? 1 : 0;
}
