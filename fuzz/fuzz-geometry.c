/* SPDX-License-Identifier: MIT */
/*
 * fuzz-geometry.c - libFuzzer target for roicopy's command-line geometry
 * parsers (tools/geometry.c).
 *
 * Input: four control bytes, then the argument text (up to the first NUL):
 *   [0] which parser, mod 6: 0 rect, 1 size, 2 shape, 3 point, 4 uint,
 *       5 list (seeds use the digits '0'..'5')
 *   [1] size of the error buffer (0..255; it is malloc'd at exactly that
 *       size, so ASan sees any write past it)
 *   [2] list: most values accepted (mod 17)
 *   [3] uint: the [min, max] range (low 2 bits min, next 3 bits max)
 * Beyond memory safety it checks what the parsers promise: results within
 * GEOM_MAX and their minimums, the same values after printing and parsing
 * again, and on failure a terminated, non-empty message.
 */
#include "../tools/geometry.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIST_MAX 16

static void fail(const char *what, const char *text)
{
    fprintf(stderr, "fuzz-geometry: %s (input \"%s\")\n", what, text);
    abort();
}

static void check_err(const char *err, size_t errsz, const char *text)
{
    if (errsz == 0)
        return;
    if (memchr(err, '\0', errsz) == NULL)
        fail("error message not terminated", text);
    if (errsz > 1 && err[0] == '\0')
        fail("failure without a message", text);
}

static void check_dim(size_t v, size_t min, const char *text)
{
    if (v < min || v > GEOM_MAX)
        fail("value outside its range", text);
}

/* Print the parsed values canonically and parse them again. */
static void round_trip(int which, const size_t *v, size_t n, const char *text)
{
    char buf[LIST_MAX * 12 + 64], err[GEOM_ERR_MAX];
    size_t a, b, c, i, len = 0;
    geom_rect r;
    unsigned long vals[LIST_MAX];
    switch (which) {
    case 0:
        (void)snprintf(buf, sizeof buf, "%lux%lu+%lu+%lu", (unsigned long)v[0],
                       (unsigned long)v[1], (unsigned long)v[2],
                       (unsigned long)v[3]);
        if (geom_parse_rect(buf, &r, err, sizeof err) || r.width != v[0] ||
            r.height != v[1] || r.x != v[2] || r.y != v[3])
            fail("rect does not survive a round trip", text);
        break;
    case 1: /* a size WxH, and a point X,Y: two numbers each */
    case 3:
        (void)snprintf(buf, sizeof buf, which == 1 ? "%lux%lu" : "%lu,%lu",
                       (unsigned long)v[0], (unsigned long)v[1]);
        if ((which == 1 ? geom_parse_size : geom_parse_point)(buf, &a, &b, err, sizeof err) ||
            a != v[0] || b != v[1])
            fail(which == 1 ? "size does not survive a round trip"
                            : "point does not survive a round trip",
                 text);
        break;
    case 2:
        (void)snprintf(buf, sizeof buf, "%lux%lux%lu", (unsigned long)v[0],
                       (unsigned long)v[1], (unsigned long)v[2]);
        if (geom_parse_shape(buf, &a, &b, &c, err, sizeof err) || a != v[0] ||
            b != v[1] || c != v[2])
            fail("shape does not survive a round trip", text);
        break;
    case 5:
        for (i = 0; i < n; ++i)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lu",
                                    i ? "," : "", (unsigned long)v[i]);
        if (geom_parse_list(buf, vals, LIST_MAX, &a, err, sizeof err) ||
            a != n)
            fail("list does not survive a round trip", text);
        for (i = 0; i < n; ++i)
            if (vals[i] != v[i])
                fail("list does not survive a round trip", text);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned long maxes[8] = {0, 1, 2, 64, 100, GEOM_MAX,
                                           GEOM_MAX + 1UL, ULONG_MAX};
    size_t errsz, listmax, n = 0, i, len;
    unsigned long umin, umax, uval, vals[LIST_MAX];
    size_t v[LIST_MAX];
    int which, rc = -1;
    char *text, *err;
    geom_rect r;
    if (size < 4)
        return 0;
    which = data[0] % 6;
    errsz = data[1];
    listmax = data[2] % (LIST_MAX + 1);
    umin = data[3] & 3u;
    umax = maxes[(data[3] >> 2) & 7u];
    data += 4;
    size -= 4;
    len = 0;
    while (len < size && data[len] != 0)
        ++len;
    /* Exact-size copies: an overread or overwrite is an ASan report. */
    text = (char *)malloc(len + 1);
    err = (char *)malloc(errsz ? errsz : 1);
    if (!text || !err) {
        free(text);
        free(err);
        return 0;
    }
    memcpy(text, data, len);
    text[len] = '\0';
    if (errsz)
        memset(err, 'X', errsz);
    switch (which) {
    case 0:
        rc = geom_parse_rect(text, &r, err, errsz);
        if (rc == 0) {
            v[0] = r.width, v[1] = r.height, v[2] = r.x, v[3] = r.y;
            check_dim(v[0], 1, text), check_dim(v[1], 1, text);
            check_dim(v[2], 0, text), check_dim(v[3], 0, text);
        }
        break;
    case 1: /* a size (each at least 1), and a point (each at least 0) */
    case 3:
        rc = (which == 1 ? geom_parse_size : geom_parse_point)(text, &v[0], &v[1], err, errsz);
        if (rc == 0)
            check_dim(v[0], which == 1, text), check_dim(v[1], which == 1, text);
        break;
    case 2:
        rc = geom_parse_shape(text, &v[0], &v[1], &v[2], err, errsz);
        if (rc == 0) {
            check_dim(v[0], 1, text), check_dim(v[1], 1, text);
            check_dim(v[2], 1, text);
        }
        break;
    case 4:
        rc = geom_parse_uint(text, umin, umax, "--fuzz", &uval, err, errsz);
        if (rc == 0 && (uval < umin || uval > umax || uval > GEOM_MAX))
            fail("uint outside [min, max]", text);
        break;
    case 5:
        rc = geom_parse_list(text, vals, listmax, &n, err, errsz);
        if (rc == 0) {
            if (n == 0 || n > listmax)
                fail("list count outside 1..max", text);
            for (i = 0; i < n; ++i) {
                check_dim(vals[i], 0, text);
                v[i] = vals[i];
            }
        }
        break;
    }
    if (rc == 0)
        round_trip(which, v, n, text);
    else if (rc == -1)
        check_err(err, errsz, text);
    else
        fail("return value is neither 0 nor -1", text);
    free(text);
    free(err);
    return 0;
}
