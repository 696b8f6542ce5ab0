/* SPDX-License-Identifier: MIT */
/*
 * geometry.h - strict parsers for roicopy's command-line geometry.
 *
 * Every parser takes the whole argument, accepts nothing but what its
 * grammar allows (no signs, no spaces, no trailing junk, no overflow) and on
 * failure writes one sentence naming the offending text into err, as it
 * was given: the caller escapes the sentence when it prints it
 * (roicopy_esc; this file is built alone, without escape.c).  Numbers
 * are decimal and at most GEOM_MAX, so any product of two fits in 64 bits
 * and any single value fits in an int.
 */
#ifndef ROICOPY_GEOMETRY_H
#define ROICOPY_GEOMETRY_H

#include <stddef.h>

/* Largest accepted value: dimensions and offsets must fit in an int. */
#define GEOM_MAX 2147483647UL

/* Room for any message the parsers write. */
#define GEOM_ERR_MAX 256

typedef struct geom_rect {
    size_t width, height, x, y;
} geom_rect;

/* "WxH+X+Y" (ImageMagick geometry) or "WxH" (offset +0+0).  Width and
 * height must be at least 1.  Returns 0, or -1 with err set. */
int geom_parse_rect(const char *s, geom_rect *r, char *err, size_t errsz);

/* "WxH", both at least 1 (--canvas). */
int geom_parse_size(const char *s, size_t *w, size_t *h, char *err,
                    size_t errsz);

/* "WIDTHxHEIGHTxCHANNELS", all at least 1 (--raw). */
int geom_parse_shape(const char *s, size_t *w, size_t *h, size_t *c,
                     char *err, size_t errsz);

/* "X,Y", both at least 0 (--place). */
int geom_parse_point(const char *s, size_t *x, size_t *y, char *err,
                     size_t errsz);

/* One decimal integer in [min, max]; what names the option in the message
 * ("--streams"). */
int geom_parse_uint(const char *s, unsigned long min, unsigned long max,
                    const char *what, unsigned long *out, char *err,
                    size_t errsz);

/* "0,1,2": at most max values, each in [0, GEOM_MAX]; *n gets the count. */
int geom_parse_list(const char *s, unsigned long *vals, size_t max,
                    size_t *n, char *err, size_t errsz);

#endif
