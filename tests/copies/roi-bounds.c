/* SPDX-License-Identifier: MIT */
/* View and ROI arithmetic at its boundaries - 0, 1, the exact edge,
 * edge + 1, SIZE_MAX - with the reasons naming the values.  Pure CPU: no
 * CUDA call is made by any of these checks. */
#include <stdint.h>

#include "tap.h"
#include <cuxfer.h>
#include "views.h"

static unsigned char buf[64 * 48 * 4];

/* A pinned host view over buf, filled in by hand (see views.h). */
static cuxfer_view host_view(size_t w, size_t h, size_t elem, size_t pitch)
{
    cuxfer_view v = view_of(buf, w, h, elem, pitch);
    v.kind = CUXFER_MEMORY_PINNED;
    return v;
}

/* ROIs cuxfer_view_sub must refuse on the 40x30 view, each with its
 * reason (NULL: not checked) and what that reason names. */
static const struct {
    cuxfer_roi r;
    const char *what, *reason, *names;
} bad_rois[] = {
    {{39, 0, 2, 1}, "x + width = edge + 1 refused", "ROI x+width 41 exceeds view width 40",
     "reason names x+width and the view width"},
    {{41, 0, 0, 1}, "x past the edge refused even when empty", NULL, NULL},
    {{0, 29, 1, 2}, "y + height = edge + 1 refused", "ROI y+height 31 exceeds view height 30",
     "reason names y+height and the view height"},
    {{SIZE_MAX, 0, 2, 1}, "x = SIZE_MAX overflow refused",
     "ROI x 18446744073709551615 + width 2 overflows size_t", "reason names the overflowing values"},
    {{1, SIZE_MAX, 1, 1}, "y = SIZE_MAX overflow refused", NULL, NULL},
};

int main(void)
{
    cuxfer_view v = host_view(40, 30, 3, 128), sub, bad;
    unsigned char *p;
    size_t e, i;
    plan(0);

    /* cuxfer_view_check */
    is_int(cudaSuccess, cuxfer_view_check(&v, "v"), "a valid view passes");
    bad = v;
    bad.elem_size = 0;
    is_int(cudaErrorInvalidValue, cuxfer_view_check(&bad, "v"), "elem_size 0 refused");
    contains(cuxfer_last_reason(), "elem_size 0 is outside 1..64", "reason names elem_size 0");
    for (e = 1; e <= CUXFER_ELEM_MAX; ++e) {
        bad = host_view(1, 1, e, 64);
        if (cuxfer_view_check(&bad, "v") != cudaSuccess)
            break;
    }
    is_int(CUXFER_ELEM_MAX + 1, (long long)e, "every elem_size 1..64 is accepted");
    bad = host_view(1, 1, CUXFER_ELEM_MAX + 1, 128);
    is_int(cudaErrorInvalidValue, cuxfer_view_check(&bad, "v"), "elem_size 65 refused");
    bad = host_view(42, 2, 3, 126);
    is_int(cudaSuccess, cuxfer_view_check(&bad, "v"), "row exactly the pitch (42 x 3 = 126) passes");
    bad = host_view(43, 2, 3, 128);
    is_int(cudaErrorInvalidPitchValue, cuxfer_view_check(&bad, "v"),
           "row one element over the pitch is cudaErrorInvalidPitchValue");
    contains(cuxfer_last_reason(), "row of 129 bytes (width 43 x elem_size 3) exceeds pitch 128",
             "reason names row, width, elem_size and pitch");
    bad = host_view(SIZE_MAX, 1, 2, SIZE_MAX);
    is_int(cudaErrorInvalidValue, cuxfer_view_check(&bad, "v"), "width x elem_size overflow refused");
    contains(cuxfer_last_reason(), "overflows size_t", "reason says overflow");
    bad = host_view(1, SIZE_MAX, 1, SIZE_MAX / 2);
    is_int(cudaErrorInvalidValue, cuxfer_view_check(&bad, "v"), "height x pitch overflow refused");
    bad = host_view(1, 2, 1, SIZE_MAX - 100);
    is_int(cudaErrorInvalidValue, cuxfer_view_check(&bad, "v"),
           "a span that wraps the address space is refused");
    contains(cuxfer_last_reason(), "wraps around", "reason says it wraps");
    bad = v;
    bad.ptr = NULL;
    is_int(cudaErrorInvalidValue, cuxfer_view_check(&bad, "v"), "NULL pointer refused");
    is_int(cudaErrorInvalidValue, cuxfer_view_check(NULL, "v"), "NULL view refused");
    bad = host_view(0, 0, 1, 0);
    is_int(cudaSuccess, cuxfer_view_check(&bad, "v"), "an empty view is valid");

    /* cuxfer_view_sub: the edges */
    is_int(cudaSuccess, cuxfer_view_sub(&v, roi_of(0, 0, 40, 30), &sub), "the full view as ROI");
    ok(sub.ptr == buf && sub.width == 40 && sub.height == 30 && sub.pitch == 128 &&
           sub.elem_size == 3 && sub.flags == 0,
       "full ROI keeps pointer, pitch and element size");
    is_int(cudaSuccess, cuxfer_view_sub(&v, roi_of(39, 29, 1, 1), &sub), "1x1 at the far corner");
    ok((unsigned char *)sub.ptr == buf + 29 * 128 + 39 * 3,
       "ROI pointer = base + y * pitch + x * elem_size");
    is_int(cudaSuccess, cuxfer_view_sub(&v, roi_of(40, 0, 0, 30), &sub),
           "an empty ROI at the right edge");
    for (i = 0; i < sizeof bad_rois / sizeof bad_rois[0]; ++i) {
        is_int(cudaErrorInvalidValue, cuxfer_view_sub(&v, bad_rois[i].r, &sub), "%s",
               bad_rois[i].what);
        if (bad_rois[i].reason)
            is_string(bad_rois[i].reason, cuxfer_last_reason(), "%s", bad_rois[i].names);
    }
    is_int(cudaErrorInvalidValue, cuxfer_view_sub(&v, roi_of(0, 0, 1, 1), NULL),
           "NULL sub refused");
    {
        cuxfer_view outer = host_view(40, 30, 3, 128), mid, inner;
        cuxfer_view_sub(&outer, roi_of(5, 6, 20, 10), &mid);
        is_int(cudaSuccess, cuxfer_view_sub(&mid, roi_of(19, 9, 1, 1), &inner),
               "a sub-view of a sub-view at its corner");
        ok((unsigned char *)inner.ptr == buf + (6 + 9) * 128 + (5 + 19) * 3,
           "nested ROI offsets add up");
        is_int(cudaErrorInvalidValue, cuxfer_view_sub(&mid, roi_of(20, 0, 1, 1), &inner),
               "a nested ROI cannot escape its parent ROI");
    }

    /* cuxfer_view_at */
    p = (unsigned char *)cuxfer_view_at(&v, 0, 0);
    ok(p == buf, "at(0, 0) is the base");
    p = (unsigned char *)cuxfer_view_at(&v, 39, 29);
    ok(p == buf + 29 * 128 + 39 * 3, "at(last, last)");
    ok(cuxfer_view_at(&v, 40, 0) == NULL, "at(width, 0) is NULL");
    is_string("cuxfer_view_at: (40, 0) is outside the 40x30 view", cuxfer_last_reason(),
              "with a reason naming the point and the view");
    ok(cuxfer_view_at(&v, 0, 30) == NULL, "at(0, height) is NULL");
    ok(cuxfer_view_at(&v, SIZE_MAX, SIZE_MAX) == NULL, "at(SIZE_MAX, SIZE_MAX) is NULL");
    is_int(3 * 40, (long long)cuxfer_view_row_bytes(&v), "row bytes = width x elem_size");

    /* cuxfer_view_free on what it does not own */
    sub = v;
    is_int(cudaSuccess, cuxfer_view_free(&sub), "freeing a wrapped view frees nothing");
    ok(sub.ptr == NULL && sub.width == 0, "and zeroes it");
    is_int(cudaSuccess, cuxfer_view_free(NULL), "free(NULL) is safe");
    is_int(cudaSuccess, cuxfer_view_free(&sub), "free of a zeroed view is safe");
    done_testing();
}
