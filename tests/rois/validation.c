/* SPDX-License-Identifier: MIT */
/* Every refusal of cuxfer_rois_check (and so of cuxfer_rois_copy_async)
 * happens on the CPU and names the offending ROI: bounds, element sizes,
 * the dense view's size and shape, overlapping destinations (through the
 * radix-sorted sweep and its qsort fallback), and the offsets helper.  No
 * device is needed. */
#include <stdint.h>

#include "tap.h"
#include <cuxfer.h>
#include "views.h"

static unsigned char host[1], dense[1];

/* Brute force: do any two non-empty ROIs share an element? */
static int overlap_ref(const cuxfer_roi *r, size_t n)
{
    size_t i, k;
    for (i = 0; i < n; ++i)
        for (k = i + 1; k < n; ++k)
            if (r[i].width && r[i].height && r[k].width && r[k].height &&
                r[i].x < r[k].x + r[k].width && r[k].x < r[i].x + r[i].width &&
                r[i].y < r[k].y + r[k].height && r[k].y < r[i].y + r[i].height)
                return 1;
    return 0;
}

static unsigned rng = 12345u;
static size_t rnd(size_t n)
{
    rng = rng * 1103515245u + 12345u;
    return (size_t)(rng >> 8) % n;
}

/* Dense views for the four ROIs of 768 bytes: what cuxfer_rois_check
 * says, and its reason (whole, or a part of it; NULL: not checked). */
static const struct dense_case {
    size_t w, h, elem, pitch;
    cudaError_t want;
    const char *what, *reason;
    int whole;
    const char *names;
} dense_views[] = {
    {1 << 18, 1, 2, 1 << 20, cudaErrorInvalidValue, "element sizes differ: refused",
     "cuxfer_rois_copy_async: element sizes differ: host view 4 bytes, dense view 2 bytes", 1,
     "reason names both element sizes"},
    {16, 4, 4, 128, cudaErrorInvalidValue, "a pitched dense view refused",
     "not contiguous: pitch 128, rows of 64 bytes", 0, "reason names pitch and row"},
    {100, 1, 4, 400, cudaErrorInvalidValue, "a dense view too small refused",
     "cuxfer_rois_copy_async: 4 ROIs need 768 bytes, the dense view holds 400", 1,
     "reason names need and capacity"},
    {192, 1, 4, 768, cudaSuccess, "a dense view of exactly the bytes passes", NULL, 0, NULL},
};

int main(void)
{
    /* 1000 x 800 RGBA8, dense buffer of 1 MiB (no memory is touched) */
    cuxfer_view hv = view_of(host, 1000, 800, 4, 4096), dv = view_of(dense, 1 << 18, 1, 4, 1 << 20), t;
    cuxfer_roi r[8], big[100];
    size_t total = 0, off[9], i;
    int trial, mism = 0, mism_wide = 0, found = 0;
    plan(0);

    r[0] = (cuxfer_roi){0, 0, 8, 8};
    r[1] = (cuxfer_roi){8, 0, 8, 8};
    r[2] = (cuxfer_roi){0, 8, 16, 4};
    r[3] = (cuxfer_roi){992, 792, 8, 8};
    is_int(cudaSuccess, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, &total),
           "four disjoint ROIs pass");
    is_int(8 * 8 * 4 * 3 + 16 * 4 * 4, (long long)total, "total is the sum of the tiles' bytes");
    is_int(cudaSuccess, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 0, &dv, &total),
           "zero ROIs pass");
    is_int(0, (long long)total, "zero ROIs are zero bytes");

    r[3] = (cuxfer_roi){993, 792, 8, 8};
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 4, &dv, NULL),
           "ROI past the right edge refused");
    is_string("cuxfer_rois_copy_async: ROI 3 (x 993, y 792, 8x8) exceeds the 1000x800 host view",
              cuxfer_last_reason(), "reason names the ROI's index and values");
    r[3] = (cuxfer_roi){992, 793, 8, 8};
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 4, &dv, NULL),
           "ROI past the bottom edge refused");
    contains(cuxfer_last_reason(), "ROI 3 (x 992, y 793, 8x8)", "reason names ROI 3");
    r[3] = (cuxfer_roi){SIZE_MAX, 0, 2, 1};
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 4, &dv, NULL),
           "x + width overflowing size_t refused");
    r[3] = (cuxfer_roi){0, SIZE_MAX - 1, 1, 5};
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 4, &dv, NULL),
           "y + height overflowing size_t refused");
    r[3] = (cuxfer_roi){1000, 800, 0, 0};
    is_int(cudaSuccess, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, NULL),
           "an empty ROI at the far corner passes");

    for (i = 0; i < sizeof dense_views / sizeof dense_views[0]; ++i) {
        const struct dense_case *c = &dense_views[i];
        t = view_of(dense, c->w, c->h, c->elem, c->pitch);
        is_int(c->want, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 4, &t, NULL), "%s", c->what);
        if (c->reason && c->whole)
            is_string(c->reason, cuxfer_last_reason(), "%s", c->names);
        else if (c->reason)
            contains(cuxfer_last_reason(), c->reason, "%s", c->names);
    }
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(7, &hv, r, 4, &dv, NULL),
           "unknown direction refused");
    contains(cuxfer_last_reason(), "direction 7", "reason names the direction");
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, NULL, 3, &dv, NULL),
           "NULL rois with n 3 refused");
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_H2D, NULL, r, 3, &dv, NULL),
           "NULL host view refused");
    t = view_of(host, 1000, 800, 4, 3999);
    is_int(cudaErrorInvalidPitchValue, cuxfer_rois_check(CUXFER_ROIS_H2D, &t, r, 3, &dv, NULL),
           "a host view whose row exceeds its pitch refused");

    /* overlap of destinations */
    r[3] = (cuxfer_roi){4, 4, 8, 8};
    is_int(cudaSuccess, cuxfer_rois_check(CUXFER_ROIS_H2D, &hv, r, 4, &dv, NULL),
           "overlapping sources pass for H2D (they are only read)");
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, NULL),
           "overlapping destinations refused for D2H");
    is_string("cuxfer_rois_copy_async: ROI 0 (x 0, y 0, 8x8) overlaps ROI 3 (x 4, y 4, 8x8) in "
              "the host destination", cuxfer_last_reason(), "reason names both ROIs");
    r[3] = (cuxfer_roi){8, 0, 8, 8}; /* ROI 1 again */
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, NULL),
           "a duplicate ROI refused");
    contains(cuxfer_last_reason(), "ROI 1 (x 8, y 0, 8x8) overlaps ROI 3", "duplicate named");
    r[3] = (cuxfer_roi){15, 11, 2, 2};
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, NULL),
           "one element shared at a corner refused");
    contains(cuxfer_last_reason(), "ROI 2 (x 0, y 8, 16x4) overlaps ROI 3", "corner named");
    r[3] = (cuxfer_roi){16, 0, 8, 8};
    is_int(cudaSuccess, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, NULL),
           "touching edges are not an overlap");
    r[3] = (cuxfer_roi){4, 4, 0, 8};
    is_int(cudaSuccess, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, r, 4, &dv, NULL),
           "an empty ROI inside another overlaps nothing");
    /* a tall ROI whose start row is far above a later-starting one */
    big[0] = (cuxfer_roi){100, 0, 1, 800};
    big[1] = (cuxfer_roi){0, 700, 200, 1};
    is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, big, 2, &dv, NULL),
           "a thin tall ROI crossed by a wide one refused");

    /* random sets against brute force: 200 small sets (qsort path), 40 of
     * 300 ROIs (radix path, in strips; from set 220 some ROIs span many
     * strips), and the same on a view wider than 2^51
     * elements (qsort fallback: coordinates and index exceed 64 bits) */
    for (trial = 0; trial < 240; ++trial) {
        enum { MAXN = 300 };
        static cuxfer_roi rr[MAXN];
        size_t n = trial < 200 ? 2 + rnd(30) : MAXN, i;
        cuxfer_view wide = view_of(host, (size_t)1 << 52, 1024, 1, (size_t)1 << 52);
        cuxfer_view dd = view_of(dense, (size_t)1 << 40, 1, 1, (size_t)1 << 40);
        cuxfer_view dd4 = view_of(dense, (size_t)1 << 38, 1, 4, (size_t)1 << 40);
        int want, got;
        for (i = 0; i < n; ++i) {
            rr[i].width = rnd(trial % 3 ? 24 : 3);
            rr[i].height = rnd(trial % 3 ? 24 : 3);
            rr[i].x = rnd(trial % 4 ? 1000 - 24 : 80); /* crowded or sparse */
            rr[i].y = rnd(trial % 4 ? 800 - 24 : 80);
            if (trial >= 220 && i % 16 == 0) { /* some wide ones: many strips each */
                rr[i].width = rnd(700);
                rr[i].x = rnd(1000 - rr[i].width);
            }
        }
        if (trial % 2) /* make most sets disjoint: a grid of cells */
            for (i = 0; i < n; ++i) {
                rr[i].x = (i * 37 % 40) * 24;
                rr[i].y = (i * 37 / 40 % 33) * 24;
            }
        want = overlap_ref(rr, n);
        got = cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, rr, n, &dd4, NULL) != cudaSuccess;
        found += want;
        if (want != got) {
            ++mism;
            diag("trial %d: brute force says %d, check says %d (%s)", trial, want, got,
                 cuxfer_last_reason());
        }
        for (i = 0; i < n; ++i)
            rr[i].x += (size_t)1 << 51;
        got = cuxfer_rois_check(CUXFER_ROIS_D2H, &wide, rr, n, &dd, NULL) != cudaSuccess;
        if (want != got)
            ++mism_wide;
    }
    is_int(0, mism, "240 random sets: the check agrees with brute force");
    is_int(0, mism_wide, "the same sets beyond 2^51 (qsort path) agree too");
    ok(found > 20 && found < 220, "the random sets had both outcomes (%d overlapping)", found);

    /* tiles of one size on one lattice (the O(N) bitmap path), against
     * brute force: any origin, cells drawn with repeats in some sets (a
     * shared cell), one tile moved off the lattice in others (the sort
     * decides), empty tiles among them; and a refusal names the pair */
    {
        int lmism = 0, lfound = 0, lclean = 0;
        size_t i;
        cuxfer_view dd4_l = view_of(dense, (size_t)1 << 38, 1, 4, (size_t)1 << 40);
        for (trial = 0; trial < 120; ++trial) {
            enum { LN = 400 };
            static cuxfer_roi lr[LN];
            size_t w = 1 + rnd(12), h = 1 + rnd(12), ox = rnd(w), oy = rnd(h), i;
            size_t cols = (1000 - ox) / w, rows = (800 - oy) / h;
            int want, got;
            for (i = 0; i < LN; ++i) {
                size_t c = trial % 3 == 0 ? rnd(cols * rows) /* repeats likely */
                                          : (i * 7919 + (size_t)trial) % (cols * rows);
                lr[i].x = ox + c % cols * w;
                lr[i].y = oy + c / cols * h;
                lr[i].width = w;
                lr[i].height = h;
            }
            if (trial % 4 == 1 && lr[5].x + w < 1000) /* one tile off the lattice by one */
                lr[5].x += 1;
            if (trial % 5 == 2)
                lr[7].width = lr[9].height = 0; /* empty: write nothing */
            want = overlap_ref(lr, LN);
            got = cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, lr, LN, &dd4_l, NULL) != cudaSuccess;
            lfound += want;
            lclean += !want;
            if (want != got) {
                ++lmism;
                diag("lattice trial %d (%zux%zu at %zu,%zu): brute force %d, check %d (%s)",
                     trial, w, h, ox, oy, want, got, cuxfer_last_reason());
            }
        }
        is_int(0, lmism, "120 lattice sets: the check agrees with brute force");
        ok(lfound > 10 && lclean > 10, "both outcomes among them (%d overlapping, %d disjoint)",
           lfound, lclean);
        for (i = 0; i < 100; ++i)
            big[i] = (cuxfer_roi){3 + i % 10 * 8, 1 + i / 10 * 8, 8, 8};
        big[57] = big[23];
        is_int(cudaErrorInvalidValue, cuxfer_rois_check(CUXFER_ROIS_D2H, &hv, big, 100, &dv, NULL),
               "a repeated lattice cell refused");
        contains(cuxfer_last_reason(), "ROI 23 (x 27, y 17, 8x8) overlaps ROI 57",
                 "the sort names the pair");
    }

    /* offsets */
    r[0] = (cuxfer_roi){0, 0, 8, 8};
    r[1] = (cuxfer_roi){5, 5, 0, 9};
    r[2] = (cuxfer_roi){0, 0, 3, 2};
    is_int(cudaSuccess, cuxfer_rois_offsets(r, 3, 4, off), "offsets of three tiles");
    ok(off[0] == 0 && off[1] == 256 && off[2] == 256 && off[3] == 280,
       "offsets are prefix sums: 0 256 256 280 (got %zu %zu %zu %zu)", off[0], off[1], off[2],
       off[3]);
    r[1] = (cuxfer_roi){0, 0, SIZE_MAX / 2, 3};
    is_int(cudaErrorInvalidValue, cuxfer_rois_offsets(r, 3, 4, off), "overflow refused");
    contains(cuxfer_last_reason(), "ROI 1", "overflow reason names ROI 1");
    is_int(cudaErrorInvalidValue, cuxfer_rois_offsets(r, 3, 4, NULL), "NULL off refused");
    done_testing();
}
