/* SPDX-License-Identifier: MIT */
/*
 * fuzz-view.c - libFuzzer target for the header's pure validators:
 * cuxfer_view_check, cuxfer_view_sub, cuxfer_view_at, cuxfer_copy2d_check,
 * cuxfer_copy_check, cuxfer_pinned_pool_class_size and
 * cuxfer_pageable_policy_parse.  None of them calls CUDA; the program still
 * links libcudart because the header names its symbols.
 *
 * Input: one byte choosing the operation (mod 8), then numbers, each a tag
 * byte and its payload, so that the fuzzer reaches the edges quickly:
 *   tag & 3 == 0: the next byte (0..255)
 *   tag & 3 == 1: SIZE_MAX minus the next byte
 *   tag & 3 == 2: 2^(next byte mod 64), plus (tag >> 2) - 32
 *   tag & 3 == 3: the next 8 bytes, little-endian
 * Missing bytes read as 0.  Pointers are numbers too: they are never
 * dereferenced, only checked and offset, as the header does.
 * Beyond memory safety and UB it checks what the header promises: a view
 * accepted spans memory without wrapping, a sub-view or element address
 * lies inside its parent's span, copy checks refuse overlap and wrap-around,
 * pool classes are within 12.5% of the request (0: no class, for 0 and
 * above SIZE_MAX / 2).
 */
#include <cuxfer.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A header bug found here but not yet fixed (include/cuxfer.h is not the
 * hardening work's to change) is listed with its input in
 * fuzz/regressions/KNOWN-BUGS, and steered around under
 * #ifdef FUZZ_AVOID_KNOWN_BUGS (fuzz/run-fuzzers.sh defines it) so that
 * CI fuzzing keeps looking for new bugs; tests/fuzz/regressions.sh builds
 * without it and replays the input as a TODO test.  The four found so far
 * (cuxfer_pinned_pool_class_size above 2^63, cuxfer_view_sub offsets that
 * wrapped) are fixed: their inputs are plain regression tests now. */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned next_byte(reader *r)
{
    if (r->n == 0)
        return 0;
    --r->n;
    return *r->p++;
}

static size_t next_size(reader *r)
{
    unsigned tag = next_byte(r), b, i;
    size_t v = 0;
    switch (tag & 3u) {
    case 0:
        return next_byte(r);
    case 1:
        return SIZE_MAX - next_byte(r);
    case 2:
        b = next_byte(r) % 64u;
        return ((size_t)1 << b) + (size_t)((int)(tag >> 2) - 32);
    default:
        for (i = 0; i < 8; ++i)
            v |= (size_t)next_byte(r) << (8 * i);
        return v;
    }
}

static void fail(const char *what)
{
    fprintf(stderr, "fuzz-view: %s (reason: \"%s\")\n", what,
            cuxfer_last_reason());
    abort();
}

static void next_view(reader *r, cuxfer_view *v)
{
    memset(v, 0, sizeof *v);
    v->ptr = (void *)(uintptr_t)next_size(r);
    v->pitch = next_size(r);
    v->width = next_size(r);
    v->height = next_size(r);
    v->elem_size = next_size(r);
    v->kind = CUXFER_MEMORY_UNKNOWN;
    v->device = -1;
}

/* The byte range [*lo, *hi) a view covers, computed independently of the
 * header; 0 when it is empty, -1 when it wraps or overflows. */
static int view_span(const cuxfer_view *v, uintptr_t *lo, uintptr_t *hi)
{
    size_t row, span;
    if (v->width == 0 || v->height == 0)
        return 0;
    if (__builtin_mul_overflow(v->width, v->elem_size, &row) ||
        __builtin_mul_overflow(v->height - 1, v->pitch, &span) ||
        __builtin_add_overflow(span, row, &span) ||
        __builtin_add_overflow((uintptr_t)v->ptr, span, hi))
        return -1;
    *lo = (uintptr_t)v->ptr;
    return 1;
}

/* A failing validator returns a validation code and says why. */
static void check_refusal(cudaError_t err)
{
    if (err != cudaErrorInvalidValue && err != cudaErrorInvalidPitchValue)
        fail("refused with an unexpected code");
    if (cuxfer_last_reason()[0] == '\0')
        fail("refused without a reason");
}

static cudaError_t do_check(const cuxfer_view *v)
{
    uintptr_t lo = 0, hi = 0;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_view_check(v, "fuzz:");
    if (err != cudaSuccess) {
        check_refusal(err);
        return err;
    }
    if (v->elem_size < 1 || v->elem_size > CUXFER_ELEM_MAX || !v->ptr)
        fail("accepted a bad element size or a NULL pointer");
    if (v->width * v->elem_size > v->pitch)
        fail("accepted a row longer than the pitch");
    if (view_span(v, &lo, &hi) < 0)
        fail("accepted a view that wraps around the address space");
    return err;
}

static void do_sub(const cuxfer_view *v, cuxfer_roi roi, int depth)
{
    cuxfer_view sub;
    uintptr_t plo = 0, phi = 0, slo = 0, shi = 0, addr = 0;
    size_t off = 0, xoff = 0;
    int ps, ss;
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_view_sub(v, roi, &sub);
    if (err != cudaSuccess) {
        check_refusal(err);
        return;
    }
    if (do_check(v) != cudaSuccess)
        fail("cut a sub-view from an invalid view");
    /* Its address, computed without wrapping: a sanitizer-free check of
     * the header's pointer arithmetic (gcc's UBSan misses some wraps). */
    if (__builtin_mul_overflow(roi.y, v->pitch, &off) ||
        __builtin_mul_overflow(roi.x, v->elem_size, &xoff) ||
        __builtin_add_overflow(off, xoff, &off) ||
        __builtin_add_overflow((uintptr_t)v->ptr, off, &addr))
        fail("accepted an ROI whose address wraps around");
    if ((uintptr_t)sub.ptr != addr)
        fail("sub-view address is not ptr + y * pitch + x * elem_size");
    if (roi.x > v->width || roi.width > v->width - roi.x ||
        roi.y > v->height || roi.height > v->height - roi.y)
        fail("accepted an ROI outside the view");
    if (sub.width != roi.width || sub.height != roi.height ||
        sub.pitch != v->pitch || sub.elem_size != v->elem_size ||
        sub.flags != 0)
        fail("sub-view has the wrong shape");
    if (do_check(&sub) != cudaSuccess)
        fail("sub-view does not validate");
    ps = view_span(v, &plo, &phi);
    ss = view_span(&sub, &slo, &shi);
    if (ss > 0 && (ps <= 0 || slo < plo || shi > phi))
        fail("sub-view lies outside its parent");
    if (depth == 0) {
        cuxfer_roi again = {roi.width / 3, roi.height / 2, roi.width / 2,
                            roi.height / 3};
        do_sub(&sub, again, 1);
        cuxfer_clear_reason();
        err = cuxfer_copy2d_check(&sub, &sub, 0);
        if (sub.width && sub.height) {
            /* every byte is shared: the overlap refusal */
            if (err != cudaErrorInvalidValue || !strstr(cuxfer_last_reason(), "overlap"))
                fail("a view copied onto itself is not refused as an overlap");
        } else if (err != cudaSuccess) {
            fail("an empty sub-view cannot be copied onto its own shape");
        }
    }
}

static void do_at(const cuxfer_view *v, size_t x, size_t y)
{
    uintptr_t lo = 0, hi = 0, a;
    void *p;
    cuxfer_clear_reason();
    p = cuxfer_view_at(v, x, y);
    if (!p) {
        if (cuxfer_last_reason()[0] == '\0')
            fail("view_at refused without a reason");
        if (cuxfer_view_check(v, "fuzz:") == cudaSuccess && x < v->width &&
            y < v->height)
            fail("view_at refused an element inside a valid view");
        return;
    }
    if (x >= v->width || y >= v->height)
        fail("view_at accepted an element outside the view");
    if (view_span(v, &lo, &hi) <= 0)
        fail("view_at accepted an invalid view");
    a = (uintptr_t)p;
    if (a < lo || a + v->elem_size > hi)
        fail("view_at address outside the view's span");
}

static void do_copy2d(const cuxfer_view *d, const cuxfer_view *s,
                      size_t max_pitch)
{
    cudaError_t err;
    cuxfer_clear_reason();
    err = cuxfer_copy2d_check(d, s, max_pitch);
    if (err != cudaSuccess) {
        check_refusal(err);
        return;
    }
    if (do_check(d) != cudaSuccess || do_check(s) != cudaSuccess)
        fail("copy2d accepted an invalid view");
    if (d->width != s->width || d->height != s->height ||
        d->elem_size != s->elem_size)
        fail("copy2d accepted different extents");
    /* the bound is a real 2D copy's: dense views go as one range, an
     * empty copy queues nothing */
    if (max_pitch && s->height > 1 && cuxfer_view_row_bytes(s) > 0 &&
        !(d->pitch == cuxfer_view_row_bytes(d) && s->pitch == cuxfer_view_row_bytes(s)) &&
        (d->pitch > max_pitch || s->pitch > max_pitch))
        fail("copy2d accepted a pitch above the maximum");
    if (d->width && d->height) {
        /* accepted, so no row shares a byte: spot-check the first and the
         * last rows of both (tests/composition/rules checks it exactly) */
        size_t w = d->width * d->elem_size, last = d->height - 1;
        uintptr_t d0 = (uintptr_t)d->ptr, s0 = (uintptr_t)s->ptr;
        uintptr_t dl = d0 + last * d->pitch, sl = s0 + last * s->pitch;
        if ((d0 < s0 + w && s0 < d0 + w) || (dl < sl + w && sl < dl + w) ||
            (d0 < sl + w && sl < d0 + w) || (dl < s0 + w && s0 < dl + w))
            fail("copy2d accepted views whose rows share bytes");
    }
}

static void do_copy(uintptr_t d, uintptr_t s, size_t bytes)
{
    cudaError_t err;
    uintptr_t de = 0, se = 0;
    cuxfer_clear_reason();
    err = cuxfer_copy_check((const void *)d, (const void *)s, bytes);
    if (err != cudaSuccess) {
        check_refusal(err);
        return;
    }
    if (bytes == 0)
        return;
    if (!d || !s)
        fail("copy accepted a NULL pointer");
    if (__builtin_add_overflow(d, bytes, &de) ||
        __builtin_add_overflow(s, bytes, &se))
        fail("copy accepted a range that wraps");
    if (d < se && s < de)
        fail("copy accepted overlapping ranges");
}

static void do_class(size_t n)
{
    size_t c = cuxfer_pinned_pool_class_size(n);
    if (n == 0 || n > SIZE_MAX / 2) {
        /* No class: the pool refuses such requests. */
        if (c != 0)
            fail("class of 0 or more than SIZE_MAX / 2 bytes is not 0");
    } else if (n <= 64) {
        if (c != n)
            fail("class of a small request is not exact");
    } else if (c < n || c - n > n / 8) {
        fail("class is not within 12.5% above the request");
    }
}

static void do_policy(const uint8_t *p, size_t n)
{
    static const char *const names[] = {"allow", "warn", "error"};
    char *s = (char *)malloc(n + 1);
    int want = 0, got, i;
    size_t j;
    if (!s)
        return;
    memcpy(s, p, n);
    s[n] = '\0';
    for (i = 0; i < 3 && !want; ++i) {
        for (j = 0; names[i][j]; ++j) {
            char c = s[j];
            if (c >= 'A' && c <= 'Z')
                c = (char)(c + ('a' - 'A'));
            if (c != names[i][j])
                break;
        }
        if (!names[i][j] && s[j] == '\0')
            want = i + 1;
    }
    got = cuxfer_pageable_policy_parse(s);
    free(s);
    if (got != want)
        fail("pageable policy parse disagrees with the reference");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r;
    cuxfer_view v, w;
    cuxfer_roi roi;
    size_t a, b, c;
    unsigned op;
    r.p = data;
    r.n = size;
    cuxfer_clear_reason(); /* so a report never shows an old input's */
    op = next_byte(&r) % 8u;
    switch (op) {
    case 0:
        next_view(&r, &v);
        (void)do_check(&v);
        break;
    case 1:
        next_view(&r, &v);
        roi.x = next_size(&r);
        roi.y = next_size(&r);
        roi.width = next_size(&r);
        roi.height = next_size(&r);
        do_sub(&v, roi, 0);
        break;
    case 2:
        next_view(&r, &v);
        a = next_size(&r);
        b = next_size(&r);
        do_at(&v, a, b);
        break;
    case 3:
        next_view(&r, &v);
        next_view(&r, &w);
        do_copy2d(&v, &w, next_size(&r));
        break;
    case 4:
        a = next_size(&r);
        b = next_size(&r);
        c = next_size(&r);
        do_copy((uintptr_t)a, (uintptr_t)b, c);
        break;
    case 5:
        do_class(next_size(&r));
        break;
    case 6:
        do_policy(r.p, r.n);
        break;
    default:
        /* A NULL view and NULL outputs: refused, never dereferenced. */
        roi.x = roi.y = roi.width = roi.height = 0;
        if (cuxfer_view_check(NULL, "fuzz:") == cudaSuccess ||
            cuxfer_view_sub(NULL, roi, &v) == cudaSuccess ||
            cuxfer_view_at(NULL, 0, 0) != NULL ||
            cuxfer_copy2d_check(NULL, NULL, 0) == cudaSuccess)
            fail("accepted a NULL view");
        next_view(&r, &v);
        if (cuxfer_view_sub(&v, roi, NULL) == cudaSuccess)
            fail("accepted a NULL sub-view");
        break;
    }
    return 0;
}
