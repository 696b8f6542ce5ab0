/* SPDX-License-Identifier: MIT */
/* The host half of cuxfer_rois's GATHER strategy, without a device: the
 * thread team runs the gather of random tiles (equal and varying sizes,
 * rows of every width, some longer than a chunk) into staging chunks of awkward sizes, which split
 * rows and tiles between chunks and between threads, and the scatter back
 * into a poisoned image; both must match a one-tile-at-a-time reference
 * byte for byte, and the scatter must not write outside the tiles. */
#include "tap.h"
#include <cuxfer.h>

static unsigned rng = 777u;
static size_t rnd(size_t n)
{
    rng = rng * 1103515245u + 12345u;
    return (size_t)(rng >> 8) % n;
}

enum { W = 300, H = 200, E = 4, PITCH = W * E + 52, MAXN = 400 };

int main(void)
{
    static unsigned char img[PITCH * H], back[PITCH * H], ref[PITCH * H];
    static unsigned char dense[W * H * E * 2], want[W * H * E * 2];
    static const size_t chunks[] = {71, 1000, 4096, 1 << 20};
    static const int teams[] = {1, 2, 3, 8};
    cuxfer_roi rois[MAXN];
    size_t off[MAXN + 1], i, y, ci;
    int ti, set, bad_gather = 0, bad_scatter = 0, runs = 0;
    plan(0);
    for (i = 0; i < sizeof img; ++i)
        img[i] = (unsigned char)(i * 131u + 7u);
    for (set = 0; set < 7; ++set) {
        size_t n = set < 3 ? 64 + rnd(MAXN - 64) : 1 + rnd(20);
        size_t cell = 1 + (size_t)set * 3; /* equal tiles: a grid of cell x cell */
        /* disjoint tiles: distinct cells of a grid, equal or varying sizes */
        for (i = 0; i < n; ++i) {
            size_t c = (i * 7919u + (size_t)set) % ((W / 16) * (H / 16));
            rois[i].x = c % (W / 16) * 16;
            rois[i].y = c / (W / 16) * 16;
            rois[i].width = set % 2 ? cell : rnd(17);
            rois[i].height = set % 2 ? cell : rnd(17);
        }
        if (n > (W / 16) * (H / 16))
            n = (W / 16) * (H / 16);
        if (set == 6) /* six wide tiles: rows of ~400 bytes, longer than a chunk */
            for (n = 6, i = 0; i < n; ++i) {
                rois[i].x = i % 3 * 100;
                rois[i].y = i / 3 * 100;
                rois[i].width = 95 + i;
                rois[i].height = 31 + i;
            }
        if (cuxfer_rois_offsets(rois, n, E, off) != cudaSuccess)
            bail("offsets: %s", cuxfer_last_reason());
        /* reference: tile by tile, row by row */
        memset(ref, 0xa5, sizeof ref);
        for (i = 0; i < n; ++i)
            for (y = 0; y < rois[i].height; ++y) {
                size_t rb = rois[i].width * E, h = (rois[i].y + y) * PITCH + rois[i].x * E;
                memcpy(want + off[i] + y * rb, img + h, rb);
                memcpy(ref + h, img + h, rb);
            }
        for (ti = 0; ti < (int)(sizeof teams / sizeof teams[0]); ++ti) {
            cuxfer_impl_team team;
            cuxfer_impl_team_start(&team, teams[ti] - 1);
            for (ci = 0; ci < sizeof chunks / sizeof chunks[0]; ++ci) {
                struct cuxfer_impl_rois_job j;
                size_t a, len, ch = chunks[ci], total = off[n];
                memset(&j, 0, sizeof j);
                j.base = img;
                j.pitch = PITCH;
                j.elem = E;
                j.rois = rois;
                j.off = off;
                j.n = n;
                memset(dense, 0x5a, sizeof dense);
                for (a = 0; a < total; a += len) { /* gather, chunk by chunk */
                    len = total - a < ch ? total - a : ch;
                    j.stage = dense + a;
                    j.a = a;
                    j.b = a + len;
                    cuxfer_impl_team_run(&team, cuxfer_impl_rois_part, &j);
                }
                if (memcmp(dense, want, total) != 0 || dense[total] != 0x5a)
                    ++bad_gather;
                memset(back, 0xa5, sizeof back);
                j.base = back;
                j.d2h = 1;
                for (a = 0; a < total; a += len) { /* scatter */
                    len = total - a < ch ? total - a : ch;
                    j.stage = dense + a;
                    j.a = a;
                    j.b = a + len;
                    cuxfer_impl_team_run(&team, cuxfer_impl_rois_part, &j);
                }
                if (memcmp(back, ref, sizeof back) != 0) {
                    ++bad_scatter;
                    diag("set %d team %d chunk %zu: scatter differs", set, teams[ti], ch);
                }
                ++runs;
            }
            cuxfer_impl_team_stop(&team);
        }
    }
    is_int(0, bad_gather, "%d gathers of random tiles match the reference byte for byte", runs);
    is_int(0, bad_scatter, "%d scatters match, gap bytes untouched", runs);
    done_testing();
}
