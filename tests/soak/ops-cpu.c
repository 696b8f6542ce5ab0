/* SPDX-License-Identifier: MIT */
/*
 * ops-cpu.c - the soak's operations that need no device: views and ROIs,
 * the copy checks, cuxfer_rois's geometry, the pool's size classes, the
 * policies, and every refusal a stream-taking call must make before it
 * touches the GPU.  Each checks the answer against model.c and, where
 * memory moves, the arena byte for byte against its model: the kit's
 * addresses move the arena's bytes, the model's addresses the model's.
 */
#include "soak.h"
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t elems[] = {1, 1, 2, 3, 4, 8, 16, 64};


/* A valid view over arena bytes [off, ...) that fits, edge shapes likely. */
static void arena_view_es(soak_thread *t, unsigned char *base, cuxfer_view *v, size_t *off_out,
                          size_t es_force)
{
    size_t es = es_force ? es_force : elems[soak_below(t, sizeof elems / sizeof elems[0])];
    size_t w = soak_size(t, 48), h = soak_size(t, 24), row, pitch, off, need;
    row = w * es;
    pitch = soak_below(t, 3) == 0 ? row : row + soak_size(t, 40);
    if (pitch == 0)
        pitch = es;
    need = h ? (h - 1) * pitch + row : 0;
    if (need > t->arena_bytes / 2) {
        h = 1;
        need = row;
    }
    off = soak_below(t, t->arena_bytes - need + 1);
    memset(v, 0, sizeof *v);
    v->ptr = base + off;
    v->pitch = pitch;
    v->width = w;
    v->height = h;
    v->elem_size = es;
    v->kind = CUXFER_MEMORY_PAGEABLE;
    v->device = -1;
    *off_out = off;
}

static void arena_view(soak_thread *t, unsigned char *base, cuxfer_view *v, size_t *off_out)
{
    arena_view_es(t, base, v, off_out, 0);
}

static void say_view(char *b, size_t n, const char *name, const cuxfer_view *v,
                     const unsigned char *base)
{
    (void)snprintf(b, n, "%s{arena%+td pitch %zu w %zu h %zu es %zu}", name,
                   (const unsigned char *)v->ptr - base, v->pitch, v->width, v->height,
                   v->elem_size);
}

/* 1 when the reason holds the number num, not inside a longer one. */
static int reason_names_num(const char *num)
{
    const char *r = cuxfer_last_reason(), *p;
    size_t n = strlen(num);
    for (p = strstr(r, num); p; p = strstr(p + 1, num))
        if ((p == r || ((p[-1] < '0' || p[-1] > '9') && p[-1] != '-')) &&
            (p[n] < '0' || p[n] > '9'))
            return 1;
    return 0;
}

/* 1 when the reason names v: its decimal digits, not inside a longer number. */
static int reason_names(size_t v)
{
    char num[24];
    (void)snprintf(num, sizeof num, "%zu", v);
    return reason_names_num(num);
}

static int reason_names_int(long v)
{
    char num[24];
    (void)snprintf(num, sizeof num, "%ld", v);
    return reason_names_num(num);
}

/* man 3 cuxfer_check: "successful calls leave it alone".  mark_reason
 * puts a reason of the soak's own (a refusal it asks for) before a call,
 * reason_kept holds a success of that call to it. */
static void mark_reason(void)
{
    (void)cuxfer_view_check(NULL, "soak-mark");
}

static int reason_kept(soak_thread *t, cudaError_t got)
{
    if (got == cudaSuccess && strncmp(cuxfer_last_reason(), "soak-mark", 9) != 0)
        return soak_fail(t, "a successful call changed the reason to \"%s\"",
                         cuxfer_last_reason());
    return 0;
}

/* 1 when the reason holds p as %p writes it. */
static int reason_has_ptr(const void *p)
{
    char s[32];
    (void)snprintf(s, sizeof s, "%p", p);
    return strstr(cuxfer_last_reason(), s) != NULL;
}

/* The legacy, per-thread and 0 handles, valid without a device. */
static const cudaStream_t default_streams[] = {0, cudaStreamLegacy, cudaStreamPerThread};

/* man 3 cuxfer_view: a refused cuxfer_view_sub names the offending
 * values (x + width and the view's width, or the two that overflow);
 * checked where only one axis is wrong. */
static int sub_reason_ok(soak_thread *t, const cuxfer_view *v, cuxfer_roi r)
{
    size_t e;
    int xo = __builtin_add_overflow(r.x, r.width, &e), xbad = xo || e > v->width;
    int yo = __builtin_add_overflow(r.y, r.height, &e), ybad = yo || e > v->height;
    if (xbad == ybad)
        return 0;
    if (xbad ? (xo ? reason_names(r.x) && reason_names(r.width)
                   : reason_names(r.x + r.width) && reason_names(v->width))
             : (yo ? reason_names(r.y) && reason_names(r.height)
                   : reason_names(r.y + r.height) && reason_names(v->height)))
        return 0;
    return soak_fail(t, "the reason does not name the ROI's %s values: \"%s\"", xbad ? "x" : "y",
                     cuxfer_last_reason());
}

/* man 3 cuxfer_view, cuxfer_check: cuxfer_view_check's `what` starts its
 * reason, a row that does not fit is explained by its row bytes, width,
 * element size and pitch, and a reason longer than CUXFER_REASON_MAX is
 * cut to end in "...". */
static int check_reason_ok(soak_thread *t, const cuxfer_view *v, const char *what, cudaError_t err)
{
    const char *r = cuxfer_last_reason();
    size_t n = strlen(what);
    if (n >= CUXFER_REASON_MAX - 1) {
        if (strlen(r) != CUXFER_REASON_MAX - 1 || strcmp(r + CUXFER_REASON_MAX - 4, "...") != 0)
            return soak_fail(t, "a reason longer than %d bytes is not cut to end in \"...\"",
                             CUXFER_REASON_MAX);
        return 0;
    }
    if (strncmp(r, what, n) != 0)
        return soak_fail(t, "the reason does not start with \"%s\": \"%s\"", what, r);
    if (err == cudaErrorInvalidPitchValue &&
        !(reason_names(v->width * v->elem_size) && reason_names(v->width) &&
          reason_names(v->elem_size) && reason_names(v->pitch)))
        return soak_fail(t, "the pitch refusal does not give row bytes, width, element size "
                            "and pitch: \"%s\"", r);
    if (err == cudaErrorInvalidValue) { /* man 3 cuxfer_check: "naming the values" */
        size_t row, span;
        const char *which = NULL;
        if (v->elem_size < 1 || v->elem_size > CUXFER_ELEM_MAX) {
            if (!reason_names(v->elem_size))
                which = "the element size";
        } else if (!v->ptr) {
            if (!strstr(r + n, "NULL"))
                which = "the NULL pointer";
        } else if (__builtin_mul_overflow(v->width, v->elem_size, &row)) {
            if (!reason_names(v->width) || !reason_names(v->elem_size))
                which = "the width and element size";
        } else if (__builtin_mul_overflow(v->height - 1, v->pitch, &span) ||
                   __builtin_add_overflow(span, row, &span)) {
            if (!reason_names(v->height) || !reason_names(v->pitch))
                which = "the height and pitch";
        } else if (!reason_names(span) || !reason_has_ptr(v->ptr))
            which = "the span and where it starts";
        if (which)
            return soak_fail(t, "the refusal does not name %s: \"%s\"", which, r);
    }
    return 0;
}

/* man 3 cuxfer_check: a reason longer than CUXFER_REASON_MAX - 1 bytes is
 * cut to end in "...", one that fits is whole: a NULL view's refusal, its
 * `what` first, about as long as the room (the rest of the sentence
 * measured with a `what` of one byte). */
static int reason_cut_ok(soak_thread *t)
{
    char what[CUXFER_REASON_MAX + 8], rest[CUXFER_REASON_MAX];
    char full[sizeof what + sizeof rest]; /* both whole, as snprintf sees them */
    size_t s, n, len;
    const char *r;
    (void)cuxfer_view_check(NULL, "w");
    (void)snprintf(rest, sizeof rest, "%s", cuxfer_last_reason() + 1);
    s = strlen(rest);
    n = CUXFER_REASON_MAX - 1 - s - 2 + soak_below(t, 5); /* 509..513 bytes in all */
    memset(what, 'w', n);
    what[n] = '\0';
    soak_say(t, "cuxfer_view_check(NULL, \"w...\" of %zu bytes): a reason of %zu bytes", n, n + s);
    (void)cuxfer_view_check(NULL, what);
    r = cuxfer_last_reason();
    len = strlen(r);
    (void)snprintf(full, sizeof full, "%s%s", what, rest);
    if (n + s <= CUXFER_REASON_MAX - 1) {
        if (strcmp(r, full) != 0)
            return soak_fail(t, "a reason of %zu bytes, which fits, reads \"...%s\"", n + s,
                             len > 40 ? r + len - 40 : r);
    } else if (len != CUXFER_REASON_MAX - 1 || strncmp(r, full, CUXFER_REASON_MAX - 4) != 0 ||
               strcmp(r + CUXFER_REASON_MAX - 4, "...") != 0)
        return soak_fail(t, "a reason of %zu bytes is not cut to %d ending in \"...\": "
                            "\"...%s\" (%zu bytes)", n + s, CUXFER_REASON_MAX - 1,
                         len > 40 ? r + len - 40 : r, len);
    return 0;
}

/* Random numbers for cuxfer_view_init, valid or not. */
static int op_view(soak_thread *t)
{
    static char long_what[CUXFER_REASON_MAX + 16];
    cuxfer_view v, ms, ks;
    cuxfer_roi r;
    cudaError_t want, got, init;
    size_t off, x, y;
    void *kp, *mp;
    int kind = (int)soak_below(t, 5), device = (int)soak_below(t, 4) - 1;
    const char *what = "soak-view";
    int far = 0;
    char mark[CUXFER_REASON_MAX];
    arena_view(t, t->arena, &v, &off);
    if (!long_what[0])
        memset(long_what, 'w', sizeof long_what - 1); /* the same bytes from every thread */
    if (soak_below(t, 32) == 0)
        what = long_what;
    switch (soak_below(t, 10)) { /* one wrong number, sometimes */
    case 0: v.elem_size = soak_below(t, 2) ? 0 : CUXFER_ELEM_MAX + 1 + soak_below(t, 3); break;
    case 1: v.ptr = NULL; break;
    case 2: v.pitch = v.width * v.elem_size > 0 ? v.width * v.elem_size - 1 : 0; break;
    case 3:
        if (v.width && v.height && soak_below(t, 2)) { /* the span ends at the top, or one past */
            size_t span = (v.height - 1) * v.pitch + v.width * v.elem_size;
            v.ptr = (void *)(UINTPTR_MAX - span + 1 - soak_below(t, 3));
        } else
            v.ptr = (void *)(UINTPTR_MAX - soak_below(t, 4096));
        break;
    case 4: v.width = SIZE_MAX / (soak_below(t, 3) + 1); break;
    case 5: /* refused: an empty view of that height is valid, and its far
             * ROIs point past the object (UBSan's pointer-overflow) */
        if (v.width && v.pitch)
            v.height = SIZE_MAX / v.pitch + 2; /* (height - 1) x pitch overflows */
        break;
    case 6: /* an empty view so tall that its last rows' offsets overflow */
        v.width = 0;
        v.pitch += v.pitch < 2 ? 2 : 0;
        v.height = SIZE_MAX / v.pitch + 2 + soak_below(t, 3);
        far = 1;
        break;
    case 7: /* numbers that fit, a kind or a device cuxfer_view_init refuses */
        if (soak_below(t, 2))
            kind = soak_below(t, 2) ? -1 - (int)soak_below(t, 2) : 5 + (int)soak_below(t, 2);
        else
            device = -2 - (int)soak_below(t, 3);
        break;
    default: break;
    }
    soak_say(t, "cuxfer_view_init(ptr %p, pitch %zu, w %zu, h %zu, es %zu, kind %d, device %d)",
             v.ptr, v.pitch, v.width, v.height, v.elem_size, kind, device);
    want = model_view_check(&v);
    if (want == cudaSuccess)
        want = model_view_init_args(kind, device);
    memset(&ks, 0x5a, sizeof ks);
    got = cuxfer_view_init(&ks, v.ptr, v.pitch, v.width, v.height, v.elem_size,
                           (cuxfer_memkind)kind, device);
    if (soak_expect(t, want, got))
        return 1;
    init = got;
    if (soak_below(t, 16) == 0) { /* no view to write: refused, whatever the numbers */
        soak_say(t, "cuxfer_view_init(NULL, ptr %p, pitch %zu, w %zu, h %zu, es %zu, kind %d, "
                    "device %d)", v.ptr, v.pitch, v.width, v.height, v.elem_size, kind, device);
        if (soak_expect(t, cudaErrorInvalidValue,
                        cuxfer_view_init(NULL, v.ptr, v.pitch, v.width, v.height, v.elem_size,
                                         (cuxfer_memkind)kind, device)))
            return 1;
    }
    if (got == cudaSuccess && ((int)ks.kind != kind || ks.device != device || ks.flags != 0))
        return soak_fail(t, "the view holds kind %d, device %d, flags %u", (int)ks.kind,
                         ks.device, ks.flags);
    /* the same numbers, checked as a view and measured */
    want = model_view_check(&v);
    soak_say(t, "cuxfer_view_check(view{ptr %p, pitch %zu, w %zu, h %zu, es %zu}, \"%.16s\"); "
                "cuxfer_view_row_bytes", v.ptr, v.pitch, v.width, v.height, v.elem_size, what);
    got = cuxfer_view_check(&v, what);
    if (soak_expect(t, want, got) || (got != cudaSuccess && check_reason_ok(t, &v, what, got)))
        return 1;
    if (cuxfer_view_row_bytes(&v) != v.width * v.elem_size)
        return soak_fail(t, "cuxfer_view_row_bytes says %zu, width x elem_size is %zu",
                         cuxfer_view_row_bytes(&v), v.width * v.elem_size);
    if (init != cudaSuccess) {
        static const cuxfer_view zero;
        if (memcmp(&ks, &zero, sizeof ks) != 0)
            return soak_fail(t, "a refused view is not zeroed");
        return 0;
    }
    if (ks.ptr != v.ptr || ks.pitch != v.pitch || ks.width != v.width || ks.height != v.height ||
        ks.elem_size != v.elem_size)
        return soak_fail(t, "the view's fields differ from the arguments");
    /* an ROI, at and past the edges */
    r.x = soak_size(t, v.width + 1);
    r.y = soak_size(t, v.height + 1);
    r.width = soak_size(t, v.width + 1 - (r.x < v.width ? r.x : v.width));
    r.height = soak_size(t, v.height + 1 - (r.y < v.height ? r.y : v.height));
    if (soak_below(t, 16) == 0)
        r.x = SIZE_MAX - soak_below(t, 3);
    if (soak_below(t, 16) == 0)
        r.y = SIZE_MAX - soak_below(t, 3);
    if (far) { /* y x pitch overflows: refused before any pointer is made */
        r.y = v.height - soak_below(t, 2);
        r.height = 0;
    }
    /* a view that owns its memory: the sub-view owns nothing */
    ks.flags = soak_below(t, 4) ? 0 : CUXFER_VIEW_OWNS_HOST;
    v.flags = ks.flags;
    soak_say(t, "cuxfer_view_check(NULL, \"soak-mark\"); cuxfer_view_sub(NULL, roi, &sub); "
                "cuxfer_view_sub(&view, roi, NULL); cuxfer_view_at(NULL, 0, 0)");
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_view_sub(NULL, r, &ms)) ||
        soak_expect(t, cudaErrorInvalidValue, cuxfer_view_sub(&ks, r, NULL)))
        return 1;
    if (cuxfer_view_at(NULL, 0, 0) != NULL || !cuxfer_last_reason()[0])
        return soak_fail(t, "cuxfer_view_at(NULL) did not refuse with a reason");
    if (soak_below(t, 8) == 0 && reason_cut_ok(t))
        return 1;
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_view_check(NULL, "soak-mark")))
        return 1;
    if (strncmp(cuxfer_last_reason(), "soak-mark", 9) != 0)
        return soak_fail(t, "the reason does not start with \"soak-mark\": \"%s\"",
                         cuxfer_last_reason());
    (void)snprintf(mark, sizeof mark, "%s", cuxfer_last_reason());
    soak_say(t, "cuxfer_view_sub(view{pitch %zu w %zu h %zu es %zu flags %u}, "
                "roi{%zu, %zu, %zu, %zu})",
             v.pitch, v.width, v.height, v.elem_size, v.flags, r.x, r.y, r.width, r.height);
    want = model_view_sub(&v, r, &ms);
    got = cuxfer_view_sub(&ks, r, &ks);
    if (soak_expect(t, want, got))
        return 1;
    if (got != cudaSuccess && sub_reason_ok(t, &v, r))
        return 1;
    /* man 3 cuxfer_check: successful calls leave the reason alone */
    if (got == cudaSuccess && strcmp(cuxfer_last_reason(), mark) != 0)
        return soak_fail(t, "a successful cuxfer_view_sub changed the reason to \"%s\"",
                         cuxfer_last_reason());
    if (got == cudaSuccess && (ks.ptr != ms.ptr || ks.pitch != ms.pitch ||
                               ks.width != ms.width || ks.height != ms.height ||
                               ks.elem_size != ms.elem_size || ks.flags != ms.flags))
        return soak_fail(t, "sub-view {%p %zu %zu %zu} want {%p %zu %zu %zu}", ks.ptr, ks.pitch,
                         ks.width, ks.height, ms.ptr, ms.pitch, ms.width, ms.height);
    if (got != cudaSuccess)
        ks = v;
    x = soak_size(t, ks.width + 1);
    y = soak_size(t, ks.height + 1);
    soak_say(t, "cuxfer_view_at(view{pitch %zu w %zu h %zu es %zu}, %zu, %zu)", ks.pitch,
             ks.width, ks.height, ks.elem_size, x, y);
    kp = cuxfer_view_at(&ks, x, y);
    mp = model_view_at(&ks, x, y);
    if (kp != mp)
        return soak_fail(t, "cuxfer_view_at gave %p, want %p", kp, mp);
    if (!kp && !cuxfer_last_reason()[0])
        return soak_fail(t, "cuxfer_view_at refused without a reason");
    return 0;
}

/* man 3 cuxfer_copy2d_async: an overlap is refused with "dst 0x... and
 * src 0x... overlap: dst row 1 and src row 0 share bytes": the rows named
 * are rows of the views, and they do share a byte. */
static int overlap_reason_ok(soak_thread *t, const cuxfer_view *d, const cuxfer_view *s)
{
    const char *why = cuxfer_last_reason(), *p = strstr(why, "overlap: dst row ");
    size_t dr, sr, w = d->width * d->elem_size;
    uintptr_t a, b;
    if (!p || sscanf(p, "overlap: dst row %zu and src row %zu share bytes", &dr, &sr) != 2)
        return soak_fail(t, "an overlap refused without its rows: \"%s\"", why);
    a = (uintptr_t)d->ptr + dr * d->pitch;
    b = (uintptr_t)s->ptr + sr * s->pitch;
    if (dr >= d->height || sr >= s->height || !(a < b + w && b < a + w))
        return soak_fail(t, "dst row %zu and src row %zu share no byte: \"%s\"", dr, sr, why);
    return 0;
}

/* man 3 cuxfer_copy2d_async and cuxfer_check: a refused copy2d check's
 * reason names the values it refused: extents that differ in the form
 * "extents differ: dst 800x600 of 3-byte elements, src 800x601 of 3-byte
 * elements", the rows an overlap shares, and a pitch above max_pitch with
 * its side (the views are valid here: their own reasons are op_view's). */
static int copy2d_reason_ok(soak_thread *t, const cuxfer_view *d, const cuxfer_view *s,
                            size_t maxp)
{
    const char *r = cuxfer_last_reason(), *p;
    size_t v[6], row = d->width * d->elem_size;
    char side[48];
    if (d->width != s->width || d->height != s->height || d->elem_size != s->elem_size) {
        p = strstr(r, "extents differ: ");
        if (!p || sscanf(p, "extents differ: dst %zux%zu of %zu-byte elements, src %zux%zu of "
                            "%zu-byte elements", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6 ||
            v[0] != d->width || v[1] != d->height || v[2] != d->elem_size ||
            v[3] != s->width || v[4] != s->height || v[5] != s->elem_size)
            return soak_fail(t, "the refusal does not give dst %zux%zu of %zu-byte elements and "
                                "src %zux%zu of %zu-byte elements: \"%s\"", d->width, d->height,
                             d->elem_size, s->width, s->height, s->elem_size, r);
        return 0;
    }
    if (model_overlap(d, s))
        return overlap_reason_ok(t, d, s);
    if (strstr(r, "interleave"))
        return 0; /* copy2d_interleaved's */
    /* the pitch bound: a side above it, named with its pitch, and the bound */
    if (maxp && s->height > 1 && !(d->pitch == row && s->pitch == row)) {
        int named = 0;
        if (d->pitch > maxp) {
            (void)snprintf(side, sizeof side, "dst pitch %zu ", d->pitch);
            named |= strstr(r, side) != NULL;
        }
        if (s->pitch > maxp) {
            (void)snprintf(side, sizeof side, "src pitch %zu ", s->pitch);
            named |= strstr(r, side) != NULL;
        }
        if (!named || !reason_names(maxp))
            return soak_fail(t, "the refusal does not name a pitch above %zu (dst %zu, src %zu) "
                                "and the bound: \"%s\"", maxp, d->pitch, s->pitch, r);
    }
    return 0;
}

/* Views that interleave without sharing a byte (man 3
 * cuxfer_copy2d_async: with different pitches, views that interleave
 * over more than a million rows are refused, since the bounded test
 * cannot prove them disjoint): one-byte rows, dst's on bytes 4 i (or
 * 4 i + 2), src's on the odd bytes in between, never read.  Of 2^18 to
 * 999999 rows each (under the page's million) they are proved disjoint;
 * of 3 x 2^20 each they are refused, and the reason says they
 * interleave. */
static int copy2d_interleaved(soak_thread *t)
{
    cuxfer_view d, s;
    int many = (int)soak_below(t, 2);
    cudaError_t got;
    memset(&d, 0, sizeof d);
    d.ptr = (void *)(uintptr_t)(4096 + 2 * soak_below(t, 2));
    d.width = d.elem_size = 1;
    d.pitch = 4;
    d.height = many ? (size_t)3 << 20
                    : ((size_t)1 << 18) + soak_below(t, 999999 - ((size_t)1 << 18) + 1);
    d.kind = CUXFER_MEMORY_PAGEABLE;
    d.device = -1;
    s = d;
    s.ptr = (void *)(uintptr_t)(4096 + 1 + 2 * soak_below(t, 4));
    s.pitch = 2;
    if (soak_below(t, 2)) { /* either side */
        cuxfer_view x = d;
        d = s;
        s = x;
    }
    soak_say(t, "cuxfer_copy2d_check(dst{%p pitch %zu w 1 h %zu}, src{%p pitch %zu w 1 h %zu}, 0): "
                "rows interleaved, never read", d.ptr, d.pitch, d.height, s.ptr, s.pitch, s.height);
    got = cuxfer_copy2d_check(&d, &s, 0);
    if (soak_expect(t, many ? cudaErrorInvalidValue : cudaSuccess, got))
        return 1;
    if (many && !strstr(cuxfer_last_reason(), "interleave"))
        return soak_fail(t, "the refusal does not say the views interleave: \"%s\"",
                         cuxfer_last_reason());
    return 0;
}

/* Two ROIs of arena views, checked by cuxfer_copy2d_check and the model;
 * accepted, the kit's addresses move the arena and the model's the model. */
static int op_copy2d(soak_thread *t)
{
    cuxfer_view bd, bs, kd, ksv, md, msv;
    cuxfer_roi rd, rs;
    size_t od, os, y, w, h, maxp = 0;
    cudaError_t want, got, mwant;
    char a[128], b[128];
    if (soak_below(t, 1024) == 0)
        return copy2d_interleaved(t);
    arena_view(t, t->arena, &bd, &od);
    /* the same element size, or (refused) another one */
    arena_view_es(t, t->arena, &bs, &os, soak_below(t, 8) ? bd.elem_size : 0);
    if (soak_below(t, 4) == 0) { /* one buffer, nearby: overlap likely */
        bs = bd;
        bs.ptr = (unsigned char *)bd.ptr + soak_below(t, 2 * bd.pitch + 1);
        if ((unsigned char *)bs.ptr + (bs.height ? (bs.height - 1) * bs.pitch : 0) +
                bs.width * bs.elem_size > t->arena + t->arena_bytes)
            bs.ptr = bd.ptr;
    }
    w = bd.width < bs.width ? bd.width : bs.width;
    h = bd.height < bs.height ? bd.height : bs.height;
    rd.x = soak_below(t, bd.width - w + 1);
    rd.y = soak_below(t, bd.height - h + 1);
    rs.x = soak_below(t, bs.width - w + 1);
    rs.y = soak_below(t, bs.height - h + 1);
    rd.width = rs.width = w;
    rd.height = rs.height = h;
    if (soak_below(t, 8) == 0)
        rs.width += 1; /* extents differ (or the ROI exceeds the view) */
    else if (soak_below(t, 8) == 0)
        rs.height += 1; /* heights differ (or the ROI exceeds the view) */
    soak_say(t, "cuxfer_view_sub x2 then cuxfer_copy2d_check(%s roi{%zu,%zu}, %s roi{%zu,%zu}, %zux%zu)",
             (say_view(a, sizeof a, "dst", &bd, t->arena), a), rd.x, rd.y,
             (say_view(b, sizeof b, "src", &bs, t->arena), b), rs.x, rs.y, w, h);
    if (soak_expect(t, model_view_sub(&bd, rd, &md), cuxfer_view_sub(&bd, rd, &kd)))
        return 1;
    want = model_view_sub(&bs, rs, &msv);
    if (soak_expect(t, want, cuxfer_view_sub(&bs, rs, &ksv)))
        return 1;
    if (want != cudaSuccess)
        return 0;
    if (soak_below(t, 3) == 0) /* a pitch bound about the views' pitches */
        maxp = soak_size(t, (kd.pitch > ksv.pitch ? kd.pitch : ksv.pitch) + 1);
    soak_say(t, "cuxfer_copy2d_check(dst{pitch %zu w %zu h %zu es %zu}, src{pitch %zu w %zu h %zu "
                "es %zu}, max_pitch %zu)", kd.pitch, kd.width, kd.height, kd.elem_size, ksv.pitch,
             ksv.width, ksv.height, ksv.elem_size, maxp);
    mwant = model_copy2d_check(&md, &msv, maxp);
    mark_reason();
    got = cuxfer_copy2d_check(&kd, &ksv, maxp);
    if (soak_expect(t, mwant, got) || reason_kept(t, got))
        return 1;
    if (got != cudaSuccess) {
        if (copy2d_reason_ok(t, &kd, &ksv, maxp))
            return 1;
        /* and cuxfer_copy2d_async and cuxfer_copy2d refuse the same,
         * before any CUDA call (the device's pitch bound is its own) */
        mwant = model_copy2d_check(&md, &msv, 0);
        if (mwant == cudaSuccess)
            return 0;
        soak_say(t, "cuxfer_copy2d_async(dst, src, 0) with views the check refused");
        if (soak_expect(t, mwant, cuxfer_copy2d_async(&kd, &ksv, (cudaStream_t)0)))
            return 1;
        soak_say(t, "cuxfer_copy2d(dst, src) with views the check refused");
        return soak_expect(t, mwant, cuxfer_copy2d(&kd, &ksv));
    }
    if (!w || !h) { /* man 3 cuxfer_copy2d_async: "An empty copy succeeds
                     * without queueing anything", on any stream */
        cudaStream_t st = default_streams[soak_below(t, 3)];
        soak_say(t, "cuxfer_copy2d_async(dst, src, %p) and cuxfer_copy2d(dst, src) of %zux%zu: "
                    "nothing to copy", (void *)st, w, h);
        mark_reason();
        got = cuxfer_copy2d_async(&kd, &ksv, st);
        if (soak_expect(t, cudaSuccess, got) || reason_kept(t, got))
            return 1;
        got = cuxfer_copy2d(&kd, &ksv);
        if (soak_expect(t, cudaSuccess, got) || reason_kept(t, got))
            return 1;
    }
    /* move: the kit's rows in the arena, the model's in the model */
    soak_fill(t, t->scratch, w * kd.elem_size);
    for (y = 0; y < h && w; ++y) {
        unsigned char *dp = (unsigned char *)cuxfer_view_at(&kd, 0, y);
        const unsigned char *sp = (const unsigned char *)cuxfer_view_at(&ksv, 0, y);
        if (!dp || !sp)
            return soak_fail(t, "cuxfer_view_at refused row %zu of an accepted view", y);
        memcpy(dp, sp, w * kd.elem_size);
    }
    md.ptr = t->model + ((unsigned char *)md.ptr - t->arena);
    msv.ptr = t->model + ((unsigned char *)msv.ptr - t->arena);
    model_copy2d(&md, &msv);
    return soak_compare(t, t->arena, t->model, t->arena_bytes, "arena after a 2D copy");
}

/* man 3 cuxfer_check: a refused 1D copy's reason names what it refused:
 * the side that is NULL (dst when both are), a side that wraps around
 * with the size, or both pointers and the size of an overlap. */
static int copy_reason_ok(soak_thread *t, const void *d, const void *s, size_t n)
{
    const char *r = cuxfer_last_reason();
    int dw = (uintptr_t)d > UINTPTR_MAX - n, sw = (uintptr_t)s > UINTPTR_MAX - n;
    if (!d || !s) {
        if (!strstr(r, !d ? "dst is NULL" : "src is NULL"))
            return soak_fail(t, "the refusal does not name the NULL %s: \"%s\"",
                             !d ? "dst" : "src", r);
    } else if (dw || sw) {
        if (!reason_names(n) || !((dw && reason_has_ptr(d)) || (sw && reason_has_ptr(s))))
            return soak_fail(t, "the refusal does not name the %zu bytes at %p that wrap: \"%s\"",
                             n, dw ? d : s, r);
    } else if (!reason_names(n) || !reason_has_ptr(d) || !reason_has_ptr(s))
        return soak_fail(t, "the overlap's refusal does not name dst %p, src %p and %zu bytes: "
                            "\"%s\"", d, s, n, r);
    return 0;
}

static int op_copy1d(soak_thread *t)
{
    size_t n = soak_size(t, t->arena_bytes / 4), od = soak_below(t, t->arena_bytes - n + 1),
           os = soak_below(t, 4) == 0 ? od + soak_below(t, n + 1) : soak_below(t, t->arena_bytes - n + 1);
    unsigned char *d = t->arena + od, *s;
    cudaError_t want, got;
    if (os > t->arena_bytes - n)
        os = t->arena_bytes - n;
    s = t->arena + os;
    switch (soak_below(t, 12)) {
    case 0: d = NULL; break;
    case 1: s = NULL; break;
    case 2: s = (unsigned char *)(UINTPTR_MAX - soak_below(t, 64)); break;
    case 3: /* the last n bytes of the address space, and one past them */
        if (n)
            s = (unsigned char *)(UINTPTR_MAX - n + 1 - soak_below(t, 3));
        break;
    case 4:
        if (n)
            d = (unsigned char *)(UINTPTR_MAX - n + 1 - soak_below(t, 3));
        break;
    default: break;
    }
    soak_say(t, "cuxfer_copy_check(dst arena%+td, src arena%+td, %zu)", d - t->arena,
             s - t->arena, n);
    want = model_copy_check(d, s, n);
    mark_reason();
    got = cuxfer_copy_check(d, s, n);
    if (soak_expect(t, want, got) || reason_kept(t, got))
        return 1;
    if (got != cudaSuccess) {
        if (copy_reason_ok(t, d, s, n))
            return 1;
        soak_say(t, "cuxfer_copy_async(dst arena%+td, src arena%+td, %zu, 0) refused by the check",
                 d - t->arena, s - t->arena, n);
        if (soak_expect(t, want, cuxfer_copy_async(d, s, n, (cudaStream_t)0)))
            return 1;
        soak_say(t, "cuxfer_copy(dst arena%+td, src arena%+td, %zu) refused by the check",
                 d - t->arena, s - t->arena, n);
        return soak_expect(t, want, cuxfer_copy(d, s, n));
    }
    if (!n) { /* man 3 cuxfer_copy2d_async: "A copy of 0 bytes does nothing" */
        cudaStream_t st = default_streams[soak_below(t, 3)];
        int null = (int)soak_below(t, 4);
        soak_say(t, "cuxfer_copy_async(%s, %s, 0, %p) and cuxfer_copy: nothing to copy",
                 null & 1 ? "NULL" : "dst", null & 2 ? "NULL" : "src", (void *)st);
        mark_reason();
        got = cuxfer_copy_async(null & 1 ? NULL : d, null & 2 ? NULL : s, 0, st);
        if (soak_expect(t, cudaSuccess, got) || reason_kept(t, got))
            return 1;
        got = cuxfer_copy(null & 1 ? NULL : d, null & 2 ? NULL : s, 0);
        if (soak_expect(t, cudaSuccess, got) || reason_kept(t, got))
            return 1;
    }
    if (d != t->arena + od || s != t->arena + os)
        return 0; /* a pointer the check cannot know is unmapped */
    if (n) {
        memcpy(d, s, n);
        memcpy(t->model + od, t->model + os, n);
    }
    return soak_compare(t, t->arena, t->model, t->arena_bytes, "arena after a 1D copy");
}

/* Up to SOAK_MANY ROIs in a host view of at least 32 x 16 elements, for
 * the overlap check's other paths (man 3 cuxfer_rois): tiles of one size
 * on one lattice (a bitmap of cells, from 64 ROIs), or tiles of mixed sizes
 * a cell each (sorted, packed keys from 256); then, sometimes, one tile
 * doubled, moved off the lattice by one (either way: left of the
 * lattice's first column is off it too), grown or emptied, or a few
 * stretched to the view's right edge. */
#define SOAK_MANY 1152 /* 48 x 24 cells of 1 x 1 */
/* Built with AddressSanitizer (tests/soak/mutants.sh builds its asan
 * mutants so), the ROIs of a check end their allocation: a read past the
 * last one is a report.  Without, rois_wide puts an empty ROI after them. */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif
#ifdef SOAK_ASAN
#define SOAK_ROIS_AT_END(r, n) ((r) = (cuxfer_roi *)memmove((r) + SOAK_MANY - (n), (r), (n) * sizeof *(r)))
#else
#define SOAK_ROIS_AT_END(r, n) ((void)0)
#endif
static size_t many_rois(soak_thread *t, const cuxfer_view *host, cuxfer_roi *r)
{
    size_t cell[SOAK_MANY];
    int mixed = soak_below(t, 3) == 0;
    size_t tw = mixed ? 2 : 1 + soak_below(t, 3), th = 1 + soak_below(t, 2);
    size_t ox = soak_below(t, tw), oy = soak_below(t, th);
    size_t cols = (host->width - ox) / tw, rows = (host->height - oy) / th;
    size_t cells = cols * rows, n = 64 + soak_below(t, 700), i, j, k;
    if (n > cells)
        n = cells;
    for (i = 0; i < cells; ++i)
        cell[i] = i;
    for (i = 0; i < n; ++i) { /* n distinct cells, in random order */
        j = i + soak_below(t, cells - i);
        k = cell[i];
        cell[i] = cell[j];
        cell[j] = k;
        r[i].x = ox + cell[i] % cols * tw;
        r[i].y = oy + cell[i] / cols * th;
        r[i].width = tw;
        r[i].height = th;
        if (mixed) { /* a tile of its own size inside the cell */
            size_t dx = soak_below(t, tw), dy = soak_below(t, th);
            r[i].x += dx;
            r[i].y += dy;
            r[i].width = 1 + soak_below(t, tw - dx);
            r[i].height = 1 + soak_below(t, th - dy);
        }
    }
    i = soak_below(t, n);
    j = (i + 1 + soak_below(t, n - 1)) % n;
    switch (soak_below(t, 10)) {
    case 0: r[j] = r[i]; break;
    case 1: /* left, where it can, or right */
        r[i].x += r[i].x && (soak_below(t, 2) || r[i].x + r[i].width >= host->width) ? (size_t)-1 : 1;
        break;
    case 2: /* up or down */
        r[i].y += r[i].y && (soak_below(t, 2) || r[i].y + r[i].height >= host->height) ? (size_t)-1 : 1;
        break;
    case 3: r[i].width += 1; break;
    case 4: r[i].width = 0; break;
    case 5: r[i].height += 1; break;
    case 6: /* every 16th reaches the right edge: many strips for a few */
        for (k = 0; k < n; k += 16)
            r[k].width = host->width - r[k].x;
        break;
    default: break;
    }
    return n;
}

/* man 3 cuxfer_rois: reasons read "ROI 3 (x 993, y 792, 8x8) exceeds the
 * 1000x800 host view" and "ROI 0 (x 0, y 0, 8x8) overlaps ROI 3 (x 4, y
 * 4, 8x8) in the host destination": a reason of either form names ROIs as
 * they are, outside the view or meeting, the lower index first; a refusal
 * for overlap alone gives the second. */
static int rois_reason_ok(soak_thread *t, const cuxfer_view *host, const cuxfer_roi *r, size_t n,
                          int overlap_only)
{
    const char *why = cuxfer_last_reason(), *p = strstr(why, "ROI ");
    size_t a, b, v[8], hw, hh;
    if (p && sscanf(p, "ROI %zu (x %zu, y %zu, %zux%zu) overlaps ROI %zu (x %zu, y %zu, %zux%zu)",
                    &a, &v[0], &v[1], &v[2], &v[3], &b, &v[4], &v[5], &v[6], &v[7]) == 10) {
        if (a < b && b < n && v[0] == r[a].x && v[1] == r[a].y && v[2] == r[a].width &&
            v[3] == r[a].height && v[4] == r[b].x && v[5] == r[b].y && v[6] == r[b].width &&
            v[7] == r[b].height && model_rois_meet(&r[a], &r[b]))
            return 0;
    } else if (!overlap_only && p &&
               sscanf(p, "ROI %zu (x %zu, y %zu, %zux%zu) exceeds the %zux%zu host view", &a,
                      &v[0], &v[1], &v[2], &v[3], &hw, &hh) == 7) {
        if (a < n && v[0] == r[a].x && v[1] == r[a].y && v[2] == r[a].width &&
            v[3] == r[a].height && hw == host->width && hh == host->height &&
            model_roi_outside(&r[a], host->width, host->height))
            return 0;
    } else if (!overlap_only)
        return 0; /* another refusal: its reason is checked elsewhere */
    return soak_fail(t, "the reason names no such ROIs: \"%s\"", why);
}

/* cuxfer_rois_offsets against the model: sizes that overflow size_t are
 * refused, and a NULL array. */
static int rois_offsets(soak_thread *t)
{
    cuxfer_roi r[3];
    size_t off[4], moff[4], n = 1 + soak_below(t, 3), i,
           es = elems[soak_below(t, sizeof elems / sizeof elems[0])];
    cudaError_t want;
    for (i = 0; i < n; ++i) {
        r[i].x = r[i].y = 0;
        r[i].width = soak_below(t, 2) ? soak_size(t, 64) : SIZE_MAX / (1 + soak_below(t, 64));
        r[i].height = soak_below(t, 2) ? soak_size(t, 64) : 1 + soak_below(t, 3);
    }
    soak_say(t, "cuxfer_rois_offsets(%zu ROIs {%zux%zu ...}, es %zu, off)", n, r[0].width,
             r[0].height, es);
    want = model_rois_offsets(r, n, es, moff);
    if (soak_expect(t, want, cuxfer_rois_offsets(r, n, es, off)))
        return 1;
    for (i = 0; want == cudaSuccess && i <= n; ++i)
        if (off[i] != moff[i])
            return soak_fail(t, "offset %zu is %zu, want %zu", i, off[i], moff[i]);
    soak_say(t, "cuxfer_rois_offsets(%zu ROIs, es %zu, NULL)", n, es);
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_rois_offsets(r, n, es, NULL)))
        return 1;
    /* no array: refused, but for no ROIs (off[0] is then 0) */
    soak_say(t, "cuxfer_rois_offsets(NULL, %zu, es %zu, off)", n - 1, es);
    off[0] = 1;
    mark_reason();
    want = n == 1 ? cudaSuccess : cudaErrorInvalidValue;
    if (soak_expect(t, want, cuxfer_rois_offsets(NULL, n - 1, es, off)) ||
        reason_kept(t, want))
        return 1;
    if (want == cudaSuccess && off[0] != 0)
        return soak_fail(t, "the offsets of no ROIs end at %zu, not 0", off[0]);
    return 0;
}

/* cuxfer_rois_check and _offsets against the model; accepted, the tiles
 * move through the kit's sub-views and offsets, and the model's. */
static int rois_step(soak_thread *t, cuxfer_roi *r, size_t *off)
{
    cuxfer_view host, dense, mhost, sub;
    size_t n = soak_below(t, 13), i, y, total = 0, mtotal = 0, moff, hoff, cap;
    int dir = soak_below(t, 2) ? CUXFER_ROIS_H2D : CUXFER_ROIS_D2H, many = soak_below(t, 6) == 0;
    int no_total = soak_below(t, 8) == 0;
    const cuxfer_roi *rp = r;
    cudaError_t want, got;
    if (soak_below(t, 8) == 0 && rois_offsets(t))
        return 1;
    arena_view(t, t->arena, &host, &hoff);
    if (many) { /* a larger host view of small elements */
        host.elem_size = (size_t)1 << soak_below(t, 3);
        host.width = 32 + soak_below(t, 17);
        host.height = 16 + soak_below(t, 9);
        host.pitch = host.width * host.elem_size + soak_below(t, 9);
        hoff = soak_below(t, t->arena_bytes - ((host.height - 1) * host.pitch +
                                               host.width * host.elem_size) + 1);
        host.ptr = t->arena + hoff;
        n = many_rois(t, &host, r);
    }
    for (i = 0; !many && i < n; ++i) {
        r[i].x = soak_size(t, host.width + (soak_below(t, 10) == 0));
        r[i].y = soak_size(t, host.height + (soak_below(t, 10) == 0));
        r[i].width = soak_size(t, host.width > r[i].x ? host.width - r[i].x : 0);
        r[i].height = soak_size(t, host.height > r[i].y ? host.height - r[i].y : 0);
        if (soak_below(t, 20) == 0)
            r[i].width += 1;
    }
    cap = many ? t->arena_bytes / host.elem_size : soak_size(t, t->arena_bytes / host.elem_size);
    if (cap == 0)
        cap = 1;
    memset(&dense, 0, sizeof dense);
    dense.ptr = t->scratch;
    dense.elem_size = host.elem_size;
    dense.width = cap;
    dense.height = 1;
    dense.pitch = cap * host.elem_size;
    switch (soak_below(t, 24)) {
    case 0: case 1: case 2: case 3: /* a pitched dense view: refused when height > 1 */
        dense.width = cap / 2 + 1;
        dense.height = 2;
        dense.pitch = dense.width * host.elem_size + soak_below(t, 3);
        if (dense.pitch * 2 > t->arena_bytes)
            dense.height = 1;
        break;
    case 4: case 5: /* one row, pitched: contiguous all the same */
        dense.pitch += 1 + soak_below(t, 4);
        break;
    case 6: /* another element size */
        dense.elem_size = elems[soak_below(t, sizeof elems / sizeof elems[0])];
        dense.width = cap * host.elem_size / dense.elem_size;
        dense.pitch = dense.width * dense.elem_size;
        break;
    case 7: /* neither direction */
        dir = soak_below(t, 2) ? 2 + (int)soak_below(t, 3) : -1;
        break;
    case 8: /* no array: refused unless there are no ROIs */
        rp = NULL;
        break;
    default: break;
    }
    if (!many && dir == CUXFER_ROIS_D2H && n > 1 && soak_below(t, 3) == 0)
        r[1] = r[0]; /* two tiles on the same pixels */
    SOAK_ROIS_AT_END(r, n);
    if (rp)
        rp = r;
    soak_say(t, "cuxfer_rois_check(dir %d, host{pitch %zu w %zu h %zu es %zu}, %zu ROIs%s, "
                "dense{w %zu h %zu pitch %zu es %zu}, %s)",
             dir, host.pitch, host.width, host.height, host.elem_size, n, rp ? "" : " (NULL)",
             dense.width, dense.height, dense.pitch, dense.elem_size, no_total ? "NULL" : "&total");
    want = model_rois_check(dir, &host, rp, n, &dense, &mtotal);
    mark_reason();
    got = cuxfer_rois_check(dir, &host, rp, n, &dense, no_total ? NULL : &total);
    if (soak_expect(t, want, got) || reason_kept(t, got))
        return 1;
    if (got != cudaSuccess) {
        if (rp && rois_reason_ok(t, &host, r, n,
                                 model_rois_check(CUXFER_ROIS_H2D, &host, r, n, &dense, NULL) ==
                                         cudaSuccess && dir == CUXFER_ROIS_D2H))
            return 1;
        soak_say(t, "cuxfer_rois_copy_async with what cuxfer_rois_check refused (NULL plan)");
        got = cuxfer_rois_copy_async(NULL, dir, &host, rp, n, &dense, (cudaStream_t)0);
        if (got == cudaSuccess)
            return soak_fail(t, "cuxfer_rois_copy_async accepted arguments the check refuses");
        return 0;
    }
    if (!no_total && total != mtotal)
        return soak_fail(t, "total %zu bytes, want %zu", total, mtotal);
    soak_say(t, "cuxfer_rois_offsets(%zu ROIs%s, es %zu)", n, rp ? "" : " (NULL)",
             host.elem_size);
    mark_reason();
    got = cuxfer_rois_offsets(rp, n, host.elem_size, off);
    if (soak_expect(t, cudaSuccess, got) || reason_kept(t, got))
        return 1;
    for (i = 0, moff = 0; i < n; moff += r[i].width * r[i].height * host.elem_size, ++i)
        if (off[i] != moff)
            return soak_fail(t, "offset of ROI %zu is %zu, want %zu", i, off[i], moff);
    if (off[n] != mtotal)
        return soak_fail(t, "offsets end at %zu, want %zu", off[n], mtotal);
    /* move the tiles: the kit's way into scratch / the arena, the model's into scratch2 / model */
    soak_say(t, "the %zu tiles moved %s through cuxfer_view_sub and cuxfer_view_at", n,
             dir == CUXFER_ROIS_H2D ? "to the dense buffer" : "from the dense buffer");
    soak_fill(t, t->scratch, t->arena_bytes);
    memcpy(t->scratch2, t->scratch, t->arena_bytes);
    for (i = 0; i < n; ++i) {
        size_t w = r[i].width * host.elem_size;
        if (soak_expect(t, cudaSuccess, cuxfer_view_sub(&host, r[i], &sub)))
            return 1;
        for (y = 0; y < r[i].height && w; ++y) {
            unsigned char *hp = (unsigned char *)cuxfer_view_at(&sub, 0, y);
            if (!hp)
                return soak_fail(t, "cuxfer_view_at refused row %zu of tile %zu", y, i);
            if (dir == CUXFER_ROIS_H2D)
                memcpy(t->scratch + off[i] + y * w, hp, w);
            else
                memcpy(hp, t->scratch + off[i] + y * w, w);
        }
    }
    mhost = host;
    mhost.ptr = t->model + hoff;
    model_rois_pack(dir, &mhost, r, n, t->scratch2);
    if (soak_compare(t, t->scratch, t->scratch2, t->arena_bytes, "dense buffer"))
        return 1;
    return soak_compare(t, t->arena, t->model, t->arena_bytes, "arena after the tiles");
}

/* cuxfer_rois_check alone (nothing moves) on host views far larger than
 * the arena, at an address no byte of which is read, where the overlap
 * check's packed keys and strips meet their edges (man 3 cuxfer_rois: a
 * download's tiles disjoint, whatever their sizes):
 *   straddling: narrow tiles across every strip boundary of a power of
 *     two S and, on every other row, tiles of S + 2 across two, so that
 *     strips of S meet more than twice the tiles and the check must take
 *     wider ones (lopsided widths: the mean alone would take S);
 *   huge: a view of 2^20..2^40 columns whose rows leave the keys 0..3
 *     bits for strips, tiles scattered one a cell of a 64 x 32 grid;
 *   a column: a view of 2..64 columns, rows of one or two tiles from its
 *     top (one strip: the tiles are wide), and ROI 0 a whole row alone at
 *     2^b plus one of those rows (b 11..45): its key alone reaches a
 *     higher 11-bit digit of the sort than the others' (a sort that left
 *     that digit out would put it among their rows).
 * 64..555 tiles (from 256 the keys are packed), then, sometimes, one tile
 * doubled, moved onto another's corner or beside it, every tile emptied,
 * or the order shuffled. */
static int rois_wide(soak_thread *t, cuxfer_roi *r)
{
    cuxfer_view host, dense;
    size_t n = 0, want_n = soak_below(t, 2) ? 256 + soak_below(t, 300) : 64 + soak_below(t, 192);
    size_t i, j, k, mtotal = 0, total = 0;
    int dir = soak_below(t, 4) ? CUXFER_ROIS_D2H : CUXFER_ROIS_H2D, huge = soak_below(t, 2);
    int column = soak_below(t, 3) == 0;
    cudaError_t want, got;
    memset(&host, 0, sizeof host);
    host.ptr = (void *)(uintptr_t)4096; /* never read: only checked */
    host.elem_size = (size_t)1 << soak_below(t, 4);
    host.kind = CUXFER_MEMORY_PAGEABLE;
    host.device = -1;
    if (column) {
        size_t y, cut;
        host.width = 2 + soak_below(t, 63);
        for (n = 1, y = 0; n < want_n; ++y)
            for (k = 0, cut = soak_below(t, host.width); k < 2 && n < want_n; ++k) {
                r[n].x = k ? cut : 0;
                r[n].y = y;
                r[n].width = k ? host.width - cut : cut ? cut : host.width;
                r[n].height = 1;
                ++n;
                if (!cut) /* the whole row */
                    break;
            }
        r[0].x = 0;
        r[0].y = ((size_t)1 << (11 + soak_below(t, 35))) + soak_below(t, y);
        r[0].width = host.width;
        r[0].height = 1;
        host.height = r[0].y + 1 + soak_below(t, 3);
    } else if (!huge) {
        size_t s = 2 + soak_below(t, 5), S = (size_t)1 << s, strips = 8 + soak_below(t, 57), y;
        size_t jx = soak_below(t, 2), jw = soak_below(t, 2); /* reach further left, or wider */
        host.width = S * strips + 2 + soak_below(t, S);
        for (y = 0; n < want_n; ++y)
            for (k = 1; k < strips && n < want_n; k += 1 + (y & 1)) {
                r[n].x = k * S - 1 - jx;
                r[n].y = y;
                r[n].width = (y & 1 ? S + 2 : 2) + jx + jw * soak_below(t, 2);
                r[n].height = 1;
                ++n;
            }
        host.height = y + soak_below(t, 3);
    } else {
        size_t cell[64 * 32], xb = 20 + soak_below(t, 21), ib = want_n >= 256 ? 9 + (want_n >= 512) : 8,
               yb = 64 - xb - ib - soak_below(t, 4), cw, ch;
        if (yb > 30)
            yb = 30;
        if (yb < 6)
            yb = 6;
        host.width = ((size_t)1 << (xb - 1)) + soak_below(t, (size_t)1 << (xb - 1));
        host.height = ((size_t)1 << (yb - 1)) + soak_below(t, (size_t)1 << (yb - 1));
        host.elem_size = 1;
        cw = host.width / 64;
        ch = host.height / 32;
        for (i = 0; i < 64 * 32; ++i)
            cell[i] = i;
        for (n = 0; n < want_n; ++n) {
            j = n + soak_below(t, 64 * 32 - n);
            k = cell[n];
            cell[n] = cell[j];
            cell[j] = k;
            r[n].x = cell[n] % 64 * cw + soak_below(t, cw / 2);
            r[n].y = cell[n] / 64 * ch + soak_below(t, ch / 2);
            r[n].width = 1 + soak_below(t, cw / 2);
            r[n].height = 1 + soak_below(t, soak_below(t, 4) ? 4 : ch / 2);
        }
    }
    host.pitch = host.width * host.elem_size;
    i = soak_below(t, n);
    j = (i + 1 + soak_below(t, n - 1)) % n;
    switch (soak_below(t, 8)) {
    case 0: r[j] = r[i]; break;
    case 1: /* on the last pixel of tile i */
        r[j].x = r[i].x + r[i].width - 1;
        r[j].y = r[i].y + r[i].height - 1;
        break;
    case 2: /* just right of tile i */
        r[j].x = r[i].x + r[i].width;
        r[j].y = r[i].y;
        break;
    case 5: /* every tile empty: nothing to check, nothing to move */
        for (k = 0; k < n; ++k)
            if (soak_below(t, 2))
                r[k].width = 0;
            else
                r[k].height = 0;
        break;
    case 3: case 4: /* the order shuffled */
        for (k = n - 1; k > 0; --k) {
            cuxfer_roi x = r[k];
            size_t o = soak_below(t, k + 1);
            r[k] = r[o];
            r[o] = x;
        }
        break;
    default: break;
    }
#ifdef SOAK_ASAN
    SOAK_ROIS_AT_END(r, n);
#else
    memset(&r[n], 0, sizeof r[n]); /* past the last: empty (a read of it divides by 0) */
#endif
    memset(&dense, 0, sizeof dense);
    dense.ptr = (void *)(uintptr_t)4096;
    dense.elem_size = host.elem_size;
    dense.width = 1;
    for (k = 0; k < n; ++k)
        dense.width += r[k].width * r[k].height;
    dense.height = 1;
    dense.pitch = dense.width * dense.elem_size;
    soak_say(t, "cuxfer_rois_check(dir %d, host{w %zu h %zu es %zu, never read}, %zu %s ROIs "
                "{%zu, %zu, %zux%zu ...}, dense{w %zu})",
             dir, host.width, host.height, host.elem_size, n,
             column ? "column" : huge ? "scattered" : "straddling",
             r[0].x, r[0].y, r[0].width, r[0].height, dense.width);
    want = model_rois_check(dir, &host, r, n, &dense, &mtotal);
    got = cuxfer_rois_check(dir, &host, r, n, &dense, &total);
    if (soak_expect(t, want, got))
        return 1;
    if (got != cudaSuccess)
        return rois_reason_ok(t, &host, r, n,
                              model_rois_check(CUXFER_ROIS_H2D, &host, r, n, &dense, NULL) ==
                                      cudaSuccess && dir == CUXFER_ROIS_D2H);
    if (total != mtotal)
        return soak_fail(t, "total %zu bytes, want %zu", total, mtotal);
    return 0;
}

static int op_rois(soak_thread *t)
{
    cuxfer_roi *r = (cuxfer_roi *)malloc(SOAK_MANY * sizeof *r);
    size_t *off = (size_t *)malloc((SOAK_MANY + 1) * sizeof *off);
    int rc = !r || !off ? soak_fail(t, "no memory for %d ROIs", SOAK_MANY)
             : soak_below(t, 8) == 0 ? rois_wide(t, r) : rois_step(t, r, off);
    free(r);
    free(off);
    return rc;
}

/* cuxfer_view_alloc_host and _device refused before they allocate (man 3
 * cuxfer_view): no view, elem_size outside 1..CUXFER_ELEM_MAX, an empty
 * size, a row_align that is not a power of two (0 takes 1; host only), a
 * size that overflows size_t with the rows padded; what the model takes
 * would allocate, and is not made here. */
static int view_alloc_refusals(soak_thread *t)
{
    static const size_t aligns[] = {0, 1, 2, 3, 4, 6, 64, 96, 4096, (size_t)1 << 63};
    cuxfer_view v;
    int host = (int)soak_below(t, 2), null = soak_below(t, 8) == 0;
    size_t w = soak_below(t, 4) ? soak_size(t, 64) : SIZE_MAX / (1 + soak_below(t, 4)) - soak_below(t, 2);
    size_t h = soak_below(t, 4) ? soak_size(t, 64) : SIZE_MAX / (1 + soak_below(t, 4096));
    size_t es = soak_below(t, 4) ? elems[soak_below(t, sizeof elems / sizeof elems[0])]
                                 : CUXFER_ELEM_MAX + 1 - soak_below(t, 2) * (CUXFER_ELEM_MAX + 1);
    size_t align = host ? aligns[soak_below(t, sizeof aligns / sizeof aligns[0])] : 0;
    cudaError_t want = model_view_alloc_args(null ? NULL : &v, w, h, es, host, align);
    if (want == cudaSuccess)
        return 0; /* it would allocate */
    memset(&v, 0x5a, sizeof v); /* an owner's flags among the garbage */
    if (host)
        soak_say(t, "cuxfer_view_alloc_host(%s, %zu, %zu, %zu, %zu)", null ? "NULL" : "&v", w, h,
                 es, align);
    else
        soak_say(t, "cuxfer_view_alloc_device(%s, %zu, %zu, %zu)", null ? "NULL" : "&v", w, h, es);
    if (soak_expect(t, want, host ? cuxfer_view_alloc_host(null ? NULL : &v, w, h, es, align)
                                  : cuxfer_view_alloc_device(null ? NULL : &v, w, h, es)))
        return 1;
    /* man 3 cuxfer_check: the reason names the values refused (a NULL
     * view, then the element size, the alignment, an empty size, then the
     * size that overflows) */
    if (null ? !strstr(cuxfer_last_reason(), "NULL")
        : es < 1 || es > CUXFER_ELEM_MAX ? !reason_names(es)
        : host && align && (align & (align - 1)) ? !reason_names(align)
        : !reason_names(w) || !reason_names(h) || (w && h && !reason_names(es)))
        return soak_fail(t, "the refusal does not name the values it refused: \"%s\"",
                         cuxfer_last_reason());
    /* man 3 cuxfer_view: "the cuxfer_view_alloc_* functions zero the view
     * first, so a failed allocation leaves a view that is safe to free" */
    if (!null) {
        static const cuxfer_view zero;
        if (memcmp(&v, &zero, sizeof v) != 0)
            return soak_fail(t, "a refused allocation left the view set (flags %u)", v.flags);
    }
    return 0;
}

/* Allocations refused on the CPU, before any CUDA call: zero bytes, a
 * count x elem_size that overflows, unknown flags. */
static int op_alloc_refusals(soak_thread *t)
{
    void *p = (void *)1;
    static const size_t counts[] = {0, SIZE_MAX, SIZE_MAX / 2 + 1};
    size_t c = counts[soak_below(t, 3)], es = soak_below(t, 2) ? 2 : 0;
    unsigned flags = soak_below(t, 4) == 0 ? 0x80u << soak_below(t, 8) : 0u;
    if (flags && soak_below(t, 2)) { /* refused for the flags alone */
        c = 1 + soak_below(t, 64);
        es = 1 + soak_below(t, 8);
    }
    if (soak_below(t, 8) == 0) { /* nowhere to put the pointer: refused, any sizes */
        int dev = (int)soak_below(t, 2);
        c = soak_below(t, 2) ? c : 1 + soak_below(t, 64);
        es = soak_below(t, 2) ? es : 1 + soak_below(t, 8);
        soak_say(t, "cuxfer_%s_alloc(NULL, %zu, %zu%s)", dev ? "device" : "host", c, es,
                 dev ? "" : ", flags");
        return soak_expect(t, cudaErrorInvalidValue,
                           dev ? cuxfer_device_alloc(NULL, c, es)
                               : cuxfer_host_alloc(NULL, c, es, flags));
    }
    if (soak_below(t, 4) == 0)
        return view_alloc_refusals(t);
    soak_say(t, "cuxfer_host_alloc(&p, %zu, %zu, 0x%x)", c, es, flags);
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_host_alloc(&p, c, es, flags)))
        return 1;
    if (p)
        return soak_fail(t, "a refused allocation left *p = %p", p);
    p = (void *)1;
    if (c && es) /* flags cuxfer_device_alloc does not take: it would allocate */
        return 0;
    soak_say(t, "cuxfer_device_alloc(&p, %zu, %zu)", c, es);
    if (soak_expect(t, cudaErrorInvalidValue, cuxfer_device_alloc(&p, c, es)))
        return 1;
    if (p)
        return soak_fail(t, "a refused allocation left *p = %p", p);
    return 0;
}

static int op_class(soak_thread *t)
{
    size_t n = soak_below(t, 4) == 0 ? SIZE_MAX - soak_below(t, 2) : soak_size(t, (size_t)1 << (4 + soak_below(t, 30)));
    int exact;
    switch (soak_below(t, 6)) {
    case 0: n = SIZE_MAX / 2 - 1 + soak_below(t, 3); break; /* the last size a class holds */
    case 1: n = ((size_t)1 << (1 + soak_below(t, 62))) - 1 + soak_below(t, 3); break;
    default: break;
    }
    size_t want = model_class_size(n, &exact), got;
    soak_say(t, "cuxfer_pinned_pool_class_size(%zu)", n);
    got = cuxfer_pinned_pool_class_size(n);
    if (exact ? got != want : (got < n || got > want))
        return soak_fail(t, "class of %zu is %zu (want %s%zu)", n, got, exact ? "" : "n..", want);
    /* a class is its own class, where one holds it (not above SIZE_MAX / 2) */
    if (got && got <= SIZE_MAX / 2 && cuxfer_pinned_pool_class_size(got) != got)
        return soak_fail(t, "a class size %zu is not its own class", got);
    return 0;
}

static int op_policy(soak_thread *t)
{
    static const char *const words[] = {"allow", "warn", "error", "Allow", "WARN", "eRRor",
                                        "allowx", "war", "", "error ", "deny"};
    static const int want[] = {1, 2, 3, 1, 2, 3, 0, 0, 0, 0, 0};
    size_t i = soak_below(t, sizeof want / sizeof want[0]);
    int got, none = soak_below(t, 12) == 0; /* NULL: 0, as any other word */
    size_t bytes = soak_size(t, (size_t)1 << 40);
    float ms = (float)(1 + soak_below(t, 100000)) / 64.0f;
    static const float not_positive[] = {0.0f, -0.0f, -1.0f / 64.0f, -1e30f};
    double gb, mgb;
    soak_say(t, "cuxfer_pageable_policy_parse(%s%s%s)", none ? "" : "\"", none ? "NULL" : words[i],
             none ? "" : "\"");
    got = cuxfer_pageable_policy_parse(none ? NULL : words[i]);
    if (got != (none ? 0 : want[i]))
        return soak_fail(t, "got %d, want %d", got, none ? 0 : want[i]);
    /* the policies in effect: the environment's word when valid, else the
     * default, warn (the environment is read once; the soak never changes
     * it after its start) */
    soak_say(t, "cuxfer_pageable_policy(), cuxfer_default_stream_policy()");
    if (cuxfer_pageable_policy() != model_policy(getenv("CUXFER_PAGEABLE")) ||
        cuxfer_default_stream_policy() != model_policy(getenv("CUXFER_DEFAULT_STREAM")))
        return soak_fail(t, "policies %d and %d, the environment says %d and %d",
                         cuxfer_pageable_policy(), cuxfer_default_stream_policy(),
                         model_policy(getenv("CUXFER_PAGEABLE")),
                         model_policy(getenv("CUXFER_DEFAULT_STREAM")));
    { /* man 3 cuxfer_memory_kind: a word for each kind, "unknown" for what is none */
        static const char *const kw[] = {"unknown", "pageable host", "pinned host", "device",
                                         "managed"};
        int k = (int)soak_below(t, 8) - 2;
        const char *w = k >= 0 && k <= 4 ? kw[k] : "unknown", *name;
        soak_say(t, "cuxfer_memkind_name(%d)", k);
        name = cuxfer_memkind_name((cuxfer_memkind)k);
        if (!name || strcmp(name, w) != 0)
            return soak_fail(t, "cuxfer_memkind_name(%d) is \"%s\", the page says \"%s\"", k,
                             name ? name : "(null)", w);
    }
    if (soak_below(t, 8) == 0) /* "0 when ms is not positive" (man 3 cuxfer_timer) */
        ms = not_positive[soak_below(t, sizeof not_positive / sizeof not_positive[0])];
    soak_say(t, "cuxfer_gbps(%zu, %g)", bytes, (double)ms);
    gb = cuxfer_gbps(bytes, ms);
    mgb = ms > 0.0f ? (double)bytes / 1e9 / ((double)ms / 1e3) : 0.0;
    if (!(fabs(gb - mgb) <= 1e-9 * mgb))
        return soak_fail(t, "cuxfer_gbps gave %.17g GB/s, want %.17g", gb, mgb);
    return 0;
}

/* Objects never created (zeroed, or NULL where the page allows it): every
 * destroy is safe on them and leaves them zeroed, the queries answer 0. */
static int op_zeroed(soak_thread *t)
{
    union {
        cuxfer_graph g;
        cuxfer_latch l;
        cuxfer_pinned_pool pp;
        cuxfer_plan2d p;
        cuxfer_ring r;
        cuxfer_rois ro;
        cuxfer_stager st;
        cuxfer_stream_pool sp;
        cuxfer_timer tm;
        cuxfer_view v;
    } u;
    const unsigned char *bytes = (const unsigned char *)&u;
    static const char *const names[] = {
        "cuxfer_graph_destroy", "cuxfer_latch_destroy", "cuxfer_pinned_pool_destroy",
        "cuxfer_plan2d_destroy", "cuxfer_ring_destroy", "cuxfer_rois_destroy",
        "cuxfer_stager_destroy", "cuxfer_stream_pool_destroy", "cuxfer_timer_destroy",
        "cuxfer_view_free", "pool trim and stats", "ring slots and depth"};
    int which = (int)soak_below(t, sizeof names / sizeof names[0]), null = soak_below(t, 2) == 0;
    size_t i;
    cudaError_t got = cudaSuccess;
    memset(&u, 0, sizeof u);
    soak_say(t, "%s(%s)", names[which], null && (which == 5 || which >= 9) ? "NULL" : "zeroed");
    switch (which) {
    case 0: got = cuxfer_graph_destroy(&u.g); break;
    case 1: got = cuxfer_latch_destroy(&u.l); break;
    case 2: got = cuxfer_pinned_pool_destroy(&u.pp); break;
    case 3: got = cuxfer_plan2d_destroy(&u.p); break;
    case 4: got = cuxfer_ring_destroy(&u.r); break;
    case 5: got = cuxfer_rois_destroy(null ? NULL : &u.ro); break;
    case 6: got = cuxfer_stager_destroy(&u.st); break;
    case 7: got = cuxfer_stream_pool_destroy(&u.sp); break;
    case 8: got = cuxfer_timer_destroy(&u.tm); break;
    case 9: got = cuxfer_view_free(null ? NULL : &u.v); break;
    case 10: {
        cuxfer_pinned_pool_stats ps, zero;
        got = cuxfer_pinned_pool_trim(&u.pp);
        ps = cuxfer_pinned_pool_get_stats(&u.pp);
        memset(&zero, 0, sizeof zero);
        if (memcmp(&ps, &zero, sizeof ps) != 0)
            return soak_fail(t, "a pool never created has stats (in use %zu, reserved %zu)",
                             ps.in_use, ps.reserved);
        break;
    }
    default:
        if (cuxfer_ring_slots(null ? NULL : &u.r) != 0 || cuxfer_ring_depth(null ? NULL : &u.r) != 0)
            return soak_fail(t, "a ring never created has %d slots, depth %d",
                             cuxfer_ring_slots(&u.r), cuxfer_ring_depth(&u.r));
        break;
    }
    if (soak_expect(t, cudaSuccess, got))
        return 1;
    for (i = 0; i < sizeof u; ++i)
        if (bytes[i])
            return soak_fail(t, "the object is not zeroed after the call (byte %zu)", i);
    return 0;
}

/* cuxfer_rois_choose on a plan whose options are drawn and which has no
 * kernel (it was never created: the kernel is loaded on a device), a pure
 * call, against man 3 cuxfer_rois's rule (model_rois_choose). */
static int rois_choose(soak_thread *t)
{
    cuxfer_rois p, q;
    size_t n = soak_below(t, 3) ? soak_size(t, 40) : soak_size(t, SIZE_MAX), total, dtb;
    int got, want;
    memset(&p, 0, sizeof p);
    p.opt.strategy = (int)soak_below(t, 4);
    dtb = p.opt.direct_tile_bytes = soak_below(t, 2) ? (size_t)16 << 10 : soak_size(t, (size_t)3 << 20);
    /* a total about n tiles of the bound */
    if (n && dtb && n <= SIZE_MAX / dtb && soak_below(t, 2))
        total = n * dtb - 1 + soak_below(t, 3);
    else
        total = soak_size(t, soak_below(t, 2) ? (size_t)64 << 20 : SIZE_MAX);
    soak_say(t, "cuxfer_rois_choose(plan{strategy %d, direct_tile_bytes %zu, no kernel}, %zu, %zu)",
             p.opt.strategy, dtb, n, total);
    q = p;
    got = cuxfer_rois_choose(&p, n, total);
    want = model_rois_choose(p.opt.strategy, dtb, 0, n, total);
    if (got != want)
        return soak_fail(t, "chose %d, the rule says %d", got, want);
    if (memcmp(&p, &q, sizeof p) != 0)
        return soak_fail(t, "cuxfer_rois_choose changed the plan");
    return 0;
}

/* cuxfer_plan2d_choose on a plan whose public members (opt as created,
 * tuning assigned) are drawn: a pure call, so views of any kind and
 * shape, against the man page's rule (model_plan2d_choose).  Then the
 * built-in tuning, and cuxfer_plan2d_calibrate's refusals without a plan
 * (the GPU steps calibrate: ops-gpu.c). */
static int op_plan_choose(soak_thread *t)
{
    static const cuxfer_memkind kinds[] = {CUXFER_MEMORY_PAGEABLE, CUXFER_MEMORY_PINNED,
                                           CUXFER_MEMORY_DEVICE, CUXFER_MEMORY_MANAGED};
    static const char *const sname[] = {"AUTO", "DIRECT", "SPAN", "PACK"};
    cuxfer_plan2d p, q;
    cuxfer_plan2d_tuning d, before;
    cuxfer_view dv, sv;
    size_t es = elems[soak_below(t, sizeof elems / sizeof elems[0])], w, h, row, pitch;
    int got, want, dk, sk, null_plan;
    memset(&p, 0, sizeof p);
    p.opt.strategy = (int)soak_below(t, 4);
    /* created plans hold chunk_bytes >= 4096: multiples of 512, any size, the default */
    switch (soak_below(t, 4)) {
    case 0: p.opt.chunk_bytes = (size_t)8 << 20; break;
    case 1: p.opt.chunk_bytes = 4096 + soak_size(t, (size_t)12 << 20); break;
    default: p.opt.chunk_bytes = 512 * (8 + soak_below(t, 64)); break;
    }
    if (soak_below(t, 3))
        p.tuning = cuxfer_plan2d_default_tuning();
    else {
        p.tuning.span_max_row = soak_size(t, 96);
        p.tuning.pack_max_row = soak_size(t, 96);
        p.tuning.max_ratio = soak_size(t, 8);
        p.tuning.min_bytes = soak_size(t, 1 << 16);
    }
    w = soak_size(t, soak_below(t, 4) ? 48 : p.opt.chunk_bytes / es + 2);
    h = soak_size(t, soak_below(t, 2) ? 4 : 100000);
    if (soak_below(t, 4) == 0) { /* a row at an edge of the rule, of 1-byte elements */
        size_t slot = p.opt.chunk_bytes / 2 / 256 * 256, edge[4];
        edge[0] = p.opt.chunk_bytes;
        edge[1] = slot < ((size_t)4 << 20) ? slot : (size_t)4 << 20;
        edge[2] = p.tuning.span_max_row;
        edge[3] = p.tuning.pack_max_row;
        es = 1;
        w = edge[soak_below(t, 4)] + soak_below(t, 2);
        if (w && p.tuning.min_bytes && soak_below(t, 2)) /* about min_bytes in all */
            h = p.tuning.min_bytes / w + soak_below(t, 2);
    }
    row = w * es;
    pitch = row + (soak_below(t, 3) ? soak_size(t, 4 * row + 8) : 0);
    if (soak_below(t, 4) == 0) /* at the ratio's edge */
        pitch = p.tuning.max_ratio * row + soak_below(t, 2);
    if (pitch < row) /* a valid view */
        pitch = row;
    if (!pitch)
        pitch = es;
    dk = (int)soak_below(t, 4);
    sk = (int)soak_below(t, 4);
    memset(&dv, 0, sizeof dv);
    dv.ptr = t->arena;
    dv.pitch = row ? row : es;
    dv.width = w;
    dv.height = h;
    dv.elem_size = es;
    dv.kind = kinds[dk];
    sv = dv;
    sv.pitch = pitch;
    sv.kind = kinds[sk];
    soak_say(t, "cuxfer_plan2d_choose(plan{%s, chunk %zu, tuning span %zu pack %zu ratio %zu min %zu}, "
                "dst{%s w %zu h %zu es %zu}, src{%s pitch %zu})",
             sname[p.opt.strategy], p.opt.chunk_bytes, p.tuning.span_max_row,
             p.tuning.pack_max_row, p.tuning.max_ratio, p.tuning.min_bytes,
             cuxfer_memkind_name(dv.kind), w, h, es, cuxfer_memkind_name(sv.kind), pitch);
    q = p;
    got = cuxfer_plan2d_choose(&p, &dv, &sv);
    want = model_plan2d_choose(&p, dv.kind, sv.kind, row, h, pitch);
    if (got != want)
        return soak_fail(t, "chose %d, the rule says %d", got, want);
    if (memcmp(&p, &q, sizeof p) != 0)
        return soak_fail(t, "cuxfer_plan2d_choose changed the plan");
    soak_say(t, "cuxfer_plan2d_default_tuning()");
    d = cuxfer_plan2d_default_tuning();
    if (d.span_max_row != 32 || d.pack_max_row != 32 || d.max_ratio != 4 ||
        d.min_bytes != ((size_t)1 << 20))
        return soak_fail(t, "the built-in tuning is span %zu pack %zu ratio %zu min %zu, "
                            "the page says 32, 32, 4, 1 MiB",
                         d.span_max_row, d.pack_max_row, d.max_ratio, d.min_bytes);
    /* a plan never created: refused, its tuning kept */
    before = p.tuning;
    memset(&d, 0x5a, sizeof d);
    null_plan = (int)soak_below(t, 2);
    soak_say(t, "cuxfer_plan2d_calibrate(%s, 0, &out, NULL, NULL)",
             null_plan ? "NULL" : "a plan never created");
    if (soak_expect(t, cudaErrorInvalidValue,
                    cuxfer_plan2d_calibrate(null_plan ? NULL : &p, (cudaStream_t)0, &d, NULL,
                                            NULL)))
        return 1;
    if (memcmp(&p.tuning, &before, sizeof before) != 0)
        return soak_fail(t, "a refused calibration changed the plan's tuning");
    return rois_choose(t);
}

/* The argument checks made before any CUDA call: cuxfer_advise and
 * cuxfer_prefetch (a NULL pointer or 0 bytes, then a target below
 * CUXFER_CPU), cuxfer_peer_enable (a device below 0 or past the 64th). */
static int op_device_args(soak_thread *t)
{
    static const enum cudaMemoryAdvise advice[] = {
        cudaMemAdviseSetReadMostly, cudaMemAdviseUnsetReadMostly,
        cudaMemAdviseSetPreferredLocation, cudaMemAdviseUnsetPreferredLocation,
        cudaMemAdviseSetAccessedBy, cudaMemAdviseUnsetAccessedBy};
    const void *p = soak_below(t, 2) ? NULL : t->arena;
    size_t n = p ? soak_size(t, 64) : 1 + soak_size(t, 64);
    int target = soak_below(t, 2) ? -2 - (int)soak_below(t, 1000) : (int)soak_below(t, 3) - 1;
    int dev, peer;
    cudaError_t want = model_managed_args(p, n, target);
    if (want == cudaSuccess) { /* the rest asks the device: not here */
        n = 0;
        want = model_managed_args(p, n, target);
    }
    if (soak_below(t, 2)) {
        enum cudaMemoryAdvise a = advice[soak_below(t, sizeof advice / sizeof advice[0])];
        soak_say(t, "cuxfer_advise(%s, %zu, advice %d, target %d)", p ? "arena" : "NULL", n,
                 (int)a, target);
        if (soak_expect(t, want, cuxfer_advise(p, n, a, target)))
            return 1;
    } else {
        soak_say(t, "cuxfer_prefetch(%s, %zu, target %d, 0)", p ? "arena" : "NULL", n, target);
        if (soak_expect(t, want, cuxfer_prefetch(p, n, target, (cudaStream_t)0)))
            return 1;
    }
    /* the reason names what it refused: the NULL pointer, 0 bytes, the target */
    if (!p ? !strstr(cuxfer_last_reason(), "NULL")
        : !n ? strstr(cuxfer_last_reason(), "NULL") || !reason_names(0)
             : !reason_names_int(target))
        return soak_fail(t, "the refusal does not name the %s: \"%s\"",
                         !p ? "NULL pointer" : !n ? "0 bytes" : "target", cuxfer_last_reason());
    dev = soak_below(t, 2) ? -1 - (int)soak_below(t, 3) : 64 + (int)soak_below(t, 3);
    peer = (int)soak_below(t, 2);
    if (soak_below(t, 2)) {
        int k = dev;
        dev = peer;
        peer = k;
    }
    soak_say(t, "cuxfer_peer_enable(%d, %d)", dev, peer);
    return soak_expect(t, cudaErrorInvalidDevice, cuxfer_peer_enable(dev, peer));
}

/* man 3 cuxfer_stager: options out of range are refused and "the reason
 * names the value": the first of slots, slot_bytes, threads and strategy
 * outside its range (a zero field takes its default, which is in range). */
static int stager_reason_ok(soak_thread *t, const cuxfer_stager_options *o)
{
    int named;
    if (o->slots && (o->slots < 1 || o->slots > CUXFER_STAGER_MAX_SLOTS))
        named = reason_names_int(o->slots);
    else if (o->slot_bytes && (o->slot_bytes < 4096 || o->slot_bytes > ((size_t)1 << 30)))
        named = reason_names(o->slot_bytes);
    else if (o->threads && (o->threads < 1 || o->threads > CUXFER_STAGER_MAX_THREADS))
        named = reason_names_int(o->threads);
    else
        named = reason_names_int(o->strategy);
    return named ? 0 : soak_fail(t, "the refusal does not name the value out of range: \"%s\"",
                                 cuxfer_last_reason());
}

/* cuxfer_stager_options_resolve of drawn options (zero fields, edges,
 * out of range), NULL options, out the options themselves, against
 * model_stager_options. */
static int op_stager_options(soak_thread *t)
{
    static const size_t bytes[] = {0, 1, 4095, 4096, 4097, (size_t)16 << 20, (size_t)1 << 30,
                                   ((size_t)1 << 30) + 1, SIZE_MAX};
    cuxfer_stager_options o, out, want, given;
    int how = (int)soak_below(t, 4); /* 0: NULL options, 1: out is opt, 2: out NULL */
    cudaError_t mw, got;
    memset(&o, 0, sizeof o);
    o.slots = soak_below(t, 3) ? 0 : (int)soak_below(t, 68) - 1;
    o.slot_bytes = bytes[soak_below(t, sizeof bytes / sizeof bytes[0])];
    o.threads = soak_below(t, 3) ? 0 : (int)soak_below(t, 68) - 1;
    o.strategy = soak_below(t, 4) ? (int)soak_below(t, 3) : (int)soak_below(t, 6) - 1;
    soak_say(t, "cuxfer_stager_options_resolve(%s, %s{slots %d, slot_bytes %zu, threads %d, strategy %d})",
             how == 2 ? "NULL" : how == 1 ? "&opt" : "&out", how == 0 ? "NULL " : "", o.slots,
             o.slot_bytes, o.threads, o.strategy);
    mw = model_stager_options(how == 0 ? NULL : &o, &want);
    given = o; /* out may be the options themselves */
    if (how == 0)
        memset(&given, 0, sizeof given);
    if (how == 2)
        return soak_expect(t, cudaErrorInvalidValue, cuxfer_stager_options_resolve(NULL, &o));
    memset(&out, 0x5a, sizeof out);
    if (how == 1) {
        got = cuxfer_stager_options_resolve(&o, &o);
        out = o;
    } else
        got = cuxfer_stager_options_resolve(&out, how == 0 ? NULL : &o);
    if (soak_expect(t, mw, got))
        return 1;
    if (got != cudaSuccess && stager_reason_ok(t, &given))
        return 1;
    if (got != cudaSuccess && (out.slots || out.slot_bytes || out.threads || out.strategy))
        return soak_fail(t, "refused, but out holds {%d, %zu, %d, %d}, not zeroes (man 3 "
                         "cuxfer_stager: set on every path)", out.slots, out.slot_bytes,
                         out.threads, out.strategy);
    if (got == cudaSuccess && (out.slots != want.slots || out.slot_bytes != want.slot_bytes ||
                               out.threads != want.threads || out.strategy != want.strategy))
        return soak_fail(t, "resolved to {%d, %zu, %d, %d}, want {%d, %zu, %d, %d}", out.slots,
                         out.slot_bytes, out.threads, out.strategy, want.slots, want.slot_bytes,
                         want.threads, want.strategy);
    return 0;
}

/* An int about [lo, hi]: inside it mostly, just outside it sometimes. */
static int about(soak_thread *t, int lo, int hi)
{
    switch (soak_below(t, 6)) {
    case 0: return lo - 1 - (int)soak_below(t, 2);
    case 1: return hi + 1 + (int)soak_below(t, 2);
    default: return lo + (int)soak_below(t, (size_t)(hi - lo) + 1);
    }
}

/* The creations refused before anything is made, so without a device
 * (man 3 cuxfer_plan2d, cuxfer_rois, cuxfer_stager, cuxfer_ring,
 * cuxfer_stream_pool, cuxfer_pinned_pool): options out of range, a ring of
 * no or too many slots, a stream pool's count, flags or device, a pinned
 * pool's flags.  Options the model takes
 * are not created here: that would start CUDA, which the CPU mode never
 * does (its leak check counts descriptors and threads); ops-gpu.c creates
 * its plans. */
static int op_create_refusals(soak_thread *t)
{
    static const size_t chunks[] = {0, 1, 4095, 4096, 4097, (size_t)8 << 20};
    union {
        cuxfer_plan2d p;
        cuxfer_rois ro;
        cuxfer_stager st;
        cuxfer_ring r;
        cuxfer_stream_pool sp;
        cuxfer_pinned_pool pp;
    } u;
    const unsigned char *bytes = (const unsigned char *)&u;
    /* a flag: one of those a page takes, or any bit */
    unsigned bit = 1u << soak_below(t, 32);
    int which = (int)soak_below(t, 8), strategy = about(t, 0, 3), slots = about(t, 1, 1024);
    int named = 1; /* the reason names the value refused (where checked) */
    size_t chunk = chunks[soak_below(t, sizeof chunks / sizeof chunks[0])], i, size = 0;
    cudaError_t want = cudaSuccess, got = cudaSuccess;
    memset(&u, 0x5a, sizeof u);
    switch (which) {
    case 0:
    case 1: { /* the two plans' options follow one rule */
        int max = which ? CUXFER_ROIS_MAX_THREADS : CUXFER_PLAN_MAX_THREADS,
            last = which ? CUXFER_ROIS_KERNEL : CUXFER_PLAN_PACK, threads = about(t, 0, max);
        cuxfer_plan2d_options po;
        cuxfer_rois_options ro;
        memset(&po, 0, sizeof po);
        memset(&ro, 0, sizeof ro);
        po.strategy = ro.strategy = strategy;
        po.threads = ro.threads = threads;
        po.chunk_bytes = ro.chunk_bytes = chunk;
        soak_say(t, "%s(&p, {strategy %d, threads %d, chunk_bytes %zu})",
                 which ? "cuxfer_rois_create" : "cuxfer_plan2d_create", strategy, threads, chunk);
        want = model_team_options(strategy, last, threads, max, chunk);
        if (want != cudaSuccess)
            got = which ? cuxfer_rois_create(&u.ro, &ro) : cuxfer_plan2d_create(&u.p, &po);
        size = which ? sizeof u.ro : sizeof u.p;
        /* the reason names the first value refused (chunk 0 takes the default) */
        named = strategy < 0 || strategy > last ? reason_names_int(strategy)
                : threads < 0 || threads > max  ? reason_names_int(threads)
                                                : reason_names(chunk);
        break;
    }
    case 2: {
        cuxfer_stager_options o, out;
        memset(&o, 0, sizeof o);
        o.slots = about(t, 0, CUXFER_STAGER_MAX_SLOTS);
        o.slot_bytes = chunk;
        o.threads = about(t, 0, CUXFER_STAGER_MAX_THREADS);
        o.strategy = about(t, 0, 2);
        soak_say(t, "cuxfer_stager_create(&st, {slots %d, slot_bytes %zu, threads %d, "
                    "strategy %d})", o.slots, o.slot_bytes, o.threads, o.strategy);
        want = model_stager_options(&o, &out);
        if (want != cudaSuccess) {
            got = cuxfer_stager_create(&u.st, &o);
            if (got == want && stager_reason_ok(t, &o))
                return 1;
        }
        break; /* the page does not say what a refused stager holds */
    }
    case 3:
    case 4: { /* "the pool is left zeroed" */
        int count = about(t, 1, CUXFER_STREAM_POOL_MAX), device = about(t, 0, 3);
        unsigned flags = soak_below(t, 2) ? bit
                                          : soak_below(t, 2) ? CUXFER_STREAM_BLOCKING : 0;
        if (which == 3)
            soak_say(t, "cuxfer_stream_pool_create(&p, %d, 0x%x, 0)", count, flags);
        else
            soak_say(t, "cuxfer_stream_pool_create_on(&p, %d, %d, 0x%x, 0)", device, count,
                     flags);
        want = model_stream_pool_args(count, flags, which == 4, device);
        if (want != cudaSuccess)
            got = which == 3 ? cuxfer_stream_pool_create(&u.sp, count, flags, 0)
                             : cuxfer_stream_pool_create_on(&u.sp, device, count, flags, 0);
        size = sizeof u.sp;
        if (!model_stream_pool_args(count, 0, 0, 0)) /* the count is fine: flags or device */
            named = model_stream_pool_args(count, flags, 0, 0) || reason_names_int(device);
        else if (!model_stream_pool_args(1, flags, 0, 0))
            named = reason_names_int(count);
        break;
    }
    case 5: {
        cuxfer_pinned_pool_options o;
        memset(&o, 0, sizeof o);
        o.flags = bit;
        soak_say(t, "cuxfer_pinned_pool_create(&p, {flags 0x%x})", o.flags);
        want = model_pinned_pool_flags(bit);
        if (want != cudaSuccess)
            got = cuxfer_pinned_pool_create(&u.pp, &o);
        size = sizeof u.pp;
        break;
    }
    case 6: { /* a wrap: the count checked before the array is read */
        int count = about(t, 1, CUXFER_STREAM_POOL_MAX), null = soak_below(t, 8) == 0, k;
        /* as long as a count in range needs, one entry for the others: a
         * wrap that read before it checked would read past it (ASan) */
        int n = count >= 1 && count <= CUXFER_STREAM_POOL_MAX ? count : 1;
        cudaStream_t *arr = (cudaStream_t *)malloc((size_t)n * sizeof *arr);
        char count_text[48];
        if (!arr)
            return soak_fail(t, "out of memory");
        for (k = 0; k < n; ++k) /* a default stream one time in four (the rest name none) */
            arr[k] = soak_below(t, 4) ? (cudaStream_t)(uintptr_t)(0x1000 + 16 * k)
                                      : default_streams[soak_below(t, 3)];
        soak_say(t, "cuxfer_stream_pool_wrap(&p, %s, %d)", null ? "NULL" : "streams", count);
        want = model_stream_pool_wrap(null ? NULL : arr, count);
        if (want != cudaSuccess) {
            cuxfer_clear_reason();
            got = cuxfer_stream_pool_wrap(&u.sp, null ? NULL : arr, count);
        }
        free(arr);
        (void)snprintf(count_text, sizeof count_text, "count %d is outside", count);
        if (want != cudaSuccess && !null && n != count && !strstr(cuxfer_last_reason(), count_text))
            return soak_fail(t, "the refusal of count %d does not name it: \"%s\"", count,
                             cuxfer_last_reason());
        size = sizeof u.sp;
        break;
    }
    default: { /* and, sometimes, devices: NULL, or an entry that is no device */
        cuxfer_ring_options ro;
        int devs[3], nd = soak_below(t, 2) ? 0 : 1 + (int)soak_below(t, 3), k, null = 0;
        memset(&ro, 0, sizeof ro);
        for (k = 0; k < nd; ++k)
            devs[k] = soak_below(t, 3) ? (int)soak_below(t, 2)
                                        : soak_below(t, 2) ? -1 - (int)soak_below(t, 2)
                                                           : 64 + (int)soak_below(t, 2);
        ro.ndevices = nd;
        ro.devices = nd && (null = soak_below(t, 4) == 0) ? NULL : devs;
        if (!nd && soak_below(t, 8) == 0) /* "ndevices is negative" */
            ro.ndevices = -1 - (int)soak_below(t, 2);
        soak_say(t, "cuxfer_ring_create(&r, %d, 4096, 0, {ndevices %d, devices %s%d...})", slots,
                 ro.ndevices, null ? "NULL " : "", nd ? devs[0] : 0);
        want = slots < 1 || slots > 1024 || null || ro.ndevices < 0 ? cudaErrorInvalidValue
                                                                     : cudaSuccess;
        for (k = 0; want == cudaSuccess && k < nd; ++k)
            if (devs[k] < 0 || devs[k] >= 64) /* man 3 cuxfer_ring: before any CUDA call */
                want = cudaErrorInvalidDevice;
        if (want != cudaSuccess)
            got = cuxfer_ring_create(&u.r, slots, 4096, 0,
                                     soak_below(t, 2) || ro.ndevices ? &ro : NULL);
        size = sizeof u.r;
        if (slots < 1 || slots > 1024)
            named = reason_names_int(slots);
        else if (ro.ndevices < 0)
            named = reason_names_int(ro.ndevices);
        else if (want == cudaErrorInvalidDevice) /* the first entry that is no device */
            for (k = 0; k < nd; ++k)
                if (devs[k] < 0 || devs[k] >= 64) {
                    named = reason_names_int(devs[k]);
                    break;
                }
        break;
    }
    }
    if (want == cudaSuccess)
        return 0;
    if (soak_expect(t, want, got))
        return 1;
    if (!named) /* man 3 cuxfer_check: the reason names the values */
        return soak_fail(t, "the refusal does not name the value it refused: \"%s\"",
                         cuxfer_last_reason());
    /* "the plan left zeroed", "the ring is left zeroed": every byte, the
     * options given included */
    for (i = 0; i < size; ++i)
        if (bytes[i])
            return soak_fail(t, "a refused creation left byte %zu of the object set", i);
    return 0;
}

/* Fan-in and fan-out without a device (man 3 cuxfer_timer): refused for
 * their n or array, or, with n 0 or every stream the other side, done
 * without asking CUDA anything (the handles here name no stream at all).
 * What they do when CUDA is asked is ops-gpu.c's. */
static int op_stream_fan(soak_thread *t)
{
    /* n is about(0, 4): up to 6, the array's length */
    cudaStream_t arr[6], other = (cudaStream_t)(uintptr_t)(0x1000 + 16 * soak_below(t, 4));
    int n = about(t, 0, 4), null = soak_below(t, 6) == 0, out = (int)soak_below(t, 2), asks, i;
    cudaError_t want;
    for (i = 0; i < 6; ++i) /* the other side mostly, so the skips are met */
        arr[i] = soak_below(t, 4) ? other : (cudaStream_t)(uintptr_t)(0x2000 + 16 * i);
    if (out)
        soak_say(t, "cuxfer_stream_all_wait(%s, %d, %p)", null ? "NULL" : "streams", n,
                 (void *)other);
    else
        soak_say(t, "cuxfer_stream_wait_all(%p, %s, %d)", (void *)other, null ? "NULL" : "streams",
                 n);
    want = model_stream_fan(null ? NULL : arr, n, other, &asks);
    if (asks)
        return 0; /* CUDA would be asked about streams that do not exist */
    return soak_expect(t, want, out ? cuxfer_stream_all_wait(null ? NULL : arr, n, other)
                                    : cuxfer_stream_wait_all(other, null ? NULL : arr, n));
}

/* cuxfer_ring_slot_ms's refusals without a ring: a NULL slot or ms, a
 * slot of a ring without timing, a timed slot not yet submitted (its
 * start event a handle the refusal never reads); *ms is 0 unless timed. */
static int op_ring_ms_args(soak_thread *t)
{
    cuxfer_ring_slot slot;
    float ms = -1.0f;
    int how = (int)soak_below(t, 4), wait = soak_below(t, 2) ? CUXFER_WAIT : CUXFER_NOWAIT;
    memset(&slot, 0, sizeof slot);
    slot.index = (int)soak_below(t, 4);
    slot.uses = how == 3 ? 0 : soak_below(t, 3);
    if (how == 3)
        slot.start = slot.done = (cudaEvent_t)(uintptr_t)0x1000;
    soak_say(t, "cuxfer_ring_slot_ms(%s, %s, %s)",
             how == 0   ? "NULL"
             : how == 3 ? "a timed slot never submitted"
                        : "a slot without timing",
             wait == CUXFER_WAIT ? "CUXFER_WAIT" : "CUXFER_NOWAIT", how == 1 ? "NULL" : "&ms");
    if (soak_expect(t, cudaErrorInvalidValue,
                    cuxfer_ring_slot_ms(how == 0 ? NULL : &slot, wait, how == 1 ? NULL : &ms)))
        return 1;
    if (how != 1 && ms != 0.0f)
        return soak_fail(t, "a refusal left *ms = %g, not 0", (double)ms);
    return 0;
}

/* The calls on objects never created, zeroed or NULL (man 3
 * cuxfer_stream_pool, cuxfer_timer, cuxfer_on_complete, cuxfer_ring,
 * cuxfer_graph, cuxfer_pinned_pool, cuxfer_plan2d, cuxfer_stager): each
 * refuses with cudaErrorInvalidValue and a reason before anything else
 * (so without a device), sets the outputs it promises on every path
 * (stream, slot and buffer pointers NULL, ms NaN) and leaves the object
 * zeroed.  The stream is 0: none of them gets that far. */
static int op_unmade(soak_thread *t)
{
    union {
        cuxfer_stream_pool sp;
        cuxfer_timer tm;
        cuxfer_latch l;
        cuxfer_ring r;
        cuxfer_graph g;
        cuxfer_pinned_pool pp;
        cuxfer_plan2d p;
        cuxfer_stager st;
    } u;
    static const char *const names[] = {
        "cuxfer_stream_pool_next", "cuxfer_stream_pool_acquire", "cuxfer_stream_pool_release",
        "cuxfer_stream_pool_wait", "cuxfer_stream_wait_pool", "cuxfer_timer_start",
        "cuxfer_timer_stop", "cuxfer_timer_ms", "cuxfer_latch_arm", "cuxfer_latch_wait",
        "cuxfer_latch_expect", "cuxfer_ring_acquire", "cuxfer_ring_release",
        "cuxfer_ring_submit", "cuxfer_ring_set_depth", "cuxfer_ring_stream",
        "cuxfer_ring_slot_buffers", "cuxfer_ring_wait", "cuxfer_stream_wait_ring",
        "cuxfer_graph_launch", "cuxfer_pinned_pool_acquire", "cuxfer_pinned_pool_release",
        "cuxfer_plan2d_copy_async", "cuxfer_stage_h2d", "cuxfer_stage_d2h",
        "cuxfer_stager_wait", "cuxfer_stager_query"};
    const unsigned char *bytes = (const unsigned char *)&u;
    int which = (int)soak_below(t, sizeof names / sizeof names[0]);
    int null = soak_below(t, 3) == 0, out = soak_below(t, 5) != 0; /* NULL object; an output */
    int i = (int)soak_below(t, 6) - 1, wait = soak_below(t, 2) ? CUXFER_WAIT : CUXFER_NOWAIT;
    cudaStream_t s = (cudaStream_t)&u, *sp = out ? &s : NULL;
    cuxfer_ring_slot slot, *slotp = &slot;
    cuxfer_ring_job job;
    cuxfer_pinned_block blk;
    cuxfer_view dv, sv;
    void *h = t->arena, *d = t->arena;
    float ms = 1.0f;
    size_t n = 1 + soak_size(t, t->arena_bytes / 2), k;
    cudaError_t got = cudaSuccess;
    memset(&u, 0, sizeof u);
    memset(&slot, 0, sizeof slot);
    memset(&job, 0, sizeof job);
    memset(&blk, 0, sizeof blk);
    memset(&dv, 0, sizeof dv);
    dv.ptr = t->arena;
    dv.width = dv.pitch = dv.height = dv.elem_size = 1;
    sv = dv;
    sv.ptr = t->arena + 1;
    soak_say(t, "%s(%s, ...%s)", names[which], null ? "NULL" : "a zeroed object",
             out ? "" : " NULL outputs");
    mark_reason();
    cuxfer_clear_reason(); /* man 3 cuxfer_check: "empties it" */
    if (cuxfer_last_reason()[0])
        return soak_fail(t, "cuxfer_clear_reason left \"%s\"", cuxfer_last_reason());
    switch (which) {
    case 0: got = cuxfer_stream_pool_next(null ? NULL : &u.sp, sp); break;
    case 1: got = cuxfer_stream_pool_acquire(null ? NULL : &u.sp, wait, sp); break;
    case 2: got = cuxfer_stream_pool_release(null ? NULL : &u.sp, (cudaStream_t)0); break;
    case 3: got = cuxfer_stream_pool_wait(null ? NULL : &u.sp, (cudaStream_t)0); break;
    case 4: got = cuxfer_stream_wait_pool((cudaStream_t)0, null ? NULL : &u.sp); break;
    case 5: got = cuxfer_timer_start(null ? NULL : &u.tm, (cudaStream_t)0); break;
    case 6: got = cuxfer_timer_stop(null ? NULL : &u.tm, (cudaStream_t)0); break;
    case 7:
        ms = 1.0f;
        got = cuxfer_timer_ms(null ? NULL : &u.tm, wait, out ? &ms : NULL);
        if (out && !isnan(ms))
            return soak_fail(t, "a refused cuxfer_timer_ms left *ms = %g, not NaN", (double)ms);
        break;
    case 8: got = cuxfer_latch_arm(null ? NULL : &u.l, (cudaStream_t)0); break;
    case 9: got = cuxfer_latch_wait(null ? NULL : &u.l, (long)soak_below(t, 3) - 1); break;
    case 10: got = cuxfer_latch_expect(null ? NULL : &u.l, (unsigned)soak_below(t, 3)); break;
    case 11:
        got = cuxfer_ring_acquire(null ? NULL : &u.r, out ? &slotp : NULL);
        if (out && slotp)
            return soak_fail(t, "a refused cuxfer_ring_acquire left *slot set");
        break;
    case 12: got = cuxfer_ring_release(null ? NULL : &u.r, out ? &slot : NULL); break;
    case 13:
        job.h2d_bytes = soak_size(t, 64);
        got = cuxfer_ring_submit(null ? NULL : &u.r, out ? &slot : NULL,
                                 soak_below(t, 4) ? &job : NULL);
        break;
    case 14: got = cuxfer_ring_set_depth(null ? NULL : &u.r, i); break;
    case 15: got = cuxfer_ring_stream(null ? NULL : &u.r, i, sp); break;
    case 16: {
        int hd = soak_below(t, 4) != 0;
        got = cuxfer_ring_slot_buffers(null ? NULL : &u.r, i, out ? &h : NULL, hd ? &d : NULL);
        if ((out && h) || (hd && d))
            return soak_fail(t, "a refused cuxfer_ring_slot_buffers left a buffer set");
        break;
    }
    case 17: got = cuxfer_ring_wait(null ? NULL : &u.r, (cudaStream_t)0); break;
    case 18: got = cuxfer_stream_wait_ring((cudaStream_t)0, null ? NULL : &u.r); break;
    case 19: got = cuxfer_graph_launch(null ? NULL : &u.g, (cudaStream_t)0); break;
    case 20: { /* man 3 cuxfer_pinned_pool: "On every failure *blk is left zeroed" */
        static const cuxfer_pinned_block zero_blk;
        memset(&blk, 0x5a, sizeof blk);
        got = cuxfer_pinned_pool_acquire(null ? NULL : &u.pp, n, out ? &blk : NULL);
        if (out && memcmp(&blk, &zero_blk, sizeof blk) != 0)
            return soak_fail(t, "a refused cuxfer_pinned_pool_acquire left the block set");
        break;
    }
    case 21:
        got = cuxfer_pinned_pool_release(null ? NULL : &u.pp, out ? &blk : NULL,
                                         CUXFER_POOL_IDLE);
        break;
    case 22: got = cuxfer_plan2d_copy_async(null ? NULL : &u.p, &dv, &sv, (cudaStream_t)0); break;
    case 23: /* arguments valid but for the stager: two halves of the arena */
    case 24:
        n = 1 + soak_below(t, t->arena_bytes / 2);
        h = t->arena;
        d = t->arena + t->arena_bytes / 2;
        got = which == 23 ? cuxfer_stage_h2d(null ? NULL : &u.st, d, h, n, (cudaStream_t)0)
                          : cuxfer_stage_d2h(null ? NULL : &u.st, h, d, n, (cudaStream_t)0);
        h = d = NULL;
        break;
    case 25: got = cuxfer_stager_wait(null ? NULL : &u.st, (long)soak_below(t, 3) - 1); break;
    default: got = cuxfer_stager_query(null ? NULL : &u.st); break;
    }
    if (soak_expect(t, cudaErrorInvalidValue, got))
        return 1;
    if (!cuxfer_last_reason()[0])
        return soak_fail(t, "refused without a reason");
    if (out && s != NULL && (which <= 1 || which == 15))
        return soak_fail(t, "a refused %s left *s = %p, not NULL", names[which], (void *)s);
    for (k = 0; k < sizeof u; ++k)
        if (bytes[k])
            return soak_fail(t, "the refusal changed byte %zu of the object", k);
    return 0;
}

const soak_op soak_cpu_ops[] = {
    {"view", op_view},           {"copy2d-geometry", op_copy2d}, {"copy1d-geometry", op_copy1d},
    {"rois-geometry", op_rois},  {"alloc-refusals", op_alloc_refusals},
    {"pool-class", op_class},    {"policy-parse", op_policy},
    {"plan2d-choose", op_plan_choose}, {"device-args", op_device_args},
    {"stager-options", op_stager_options}, {"ring-ms-args", op_ring_ms_args},
    {"create-refusals", op_create_refusals}, {"stream-fan", op_stream_fan},
    {"zeroed-objects", op_zeroed}, {"unmade-objects", op_unmade},
};
const int soak_cpu_nops = (int)(sizeof soak_cpu_ops / sizeof soak_cpu_ops[0]);

