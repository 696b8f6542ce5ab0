/* SPDX-License-Identifier: MIT */
/*
 * geometry.c - strict parsers for roicopy's command-line geometry.
 *
 * strtoul would accept leading spaces, a sign and wrap-around, so numbers
 * are scanned by hand: digits only, checked against GEOM_MAX as they grow.
 */
#include "geometry.h"
#include "say.h"

#include <stdio.h>
#include <string.h>

enum { NUM_OK, NUM_NONE, NUM_NEG, NUM_BIG };

/* Scan decimal digits at *p, advancing it.  A '-' where a number should
 * start is reported as NUM_NEG so the message can say "negative". */
static int scan_num(const char **p, unsigned long *out)
{
    const char *q = *p;
    unsigned long v = 0;
    int big = 0;
    if (*q == '-')
        return NUM_NEG;
    if (*q < '0' || *q > '9')
        return NUM_NONE;
    for (; *q >= '0' && *q <= '9'; ++q) {
        if (!big && v > (GEOM_MAX - (unsigned long)(*q - '0')) / 10)
            big = 1;
        if (!big)
            v = v * 10 + (unsigned long)(*q - '0');
    }
    *p = q;
    *out = v;
    return big ? NUM_BIG : NUM_OK;
}

/* The context every field parse shares: the whole argument (for messages),
 * what kind of argument it is and its grammar. */
typedef struct field_ctx {
    const char *text;
    const char *kind;
    const char *grammar;
    char *err;
    size_t errsz;
} field_ctx;

/* Parse one number named `name` at *p, at least `min`.  The messages name
 * the argument, the field and, for overflow, the digits. */
static int field(const field_ctx *c, const char **p, const char *name,
                 unsigned long min, unsigned long *v)
{
    const char *start = *p;
    switch (scan_num(p, v)) {
    case NUM_NEG:
        say(c->err, c->errsz, "bad %s \"%s\": negative %s", c->kind, c->text,
            name);
        return -1;
    case NUM_NONE:
        say(c->err, c->errsz, "bad %s \"%s\": missing %s (expected %s)",
            c->kind, c->text, name, c->grammar);
        return -1;
    case NUM_BIG:
        say(c->err, c->errsz,
            "bad %s \"%s\": %s %.*s is too large (at most %lu)", c->kind,
            c->text, name, (int)(*p - start), start, GEOM_MAX);
        return -1;
    default:
        break;
    }
    if (*v < min) {
        say(c->err, c->errsz, "bad %s \"%s\": %s must be at least %lu",
            c->kind, c->text, name, min);
        return -1;
    }
    return 0;
}

/* Expect the separator `sep` at *p.  A '-' in place of '+' is a negative
 * offset; anything else is named. */
static int sep(const field_ctx *c, const char **p, char want,
               const char *next)
{
    if (**p == want) {
        ++*p;
        return 0;
    }
    if (want == '+' && **p == '-')
        say(c->err, c->errsz, "bad %s \"%s\": negative %s", c->kind, c->text,
            next);
    else if (**p == '\0')
        say(c->err, c->errsz, "bad %s \"%s\": missing %s (expected %s)",
            c->kind, c->text, next, c->grammar);
    else
        say(c->err, c->errsz,
            "bad %s \"%s\": unexpected \"%s\" before %s (expected %s)",
            c->kind, c->text, *p, next, c->grammar);
    return -1;
}

static int end(const field_ctx *c, const char *p)
{
    if (*p == '\0')
        return 0;
    say(c->err, c->errsz, "bad %s \"%s\": trailing \"%s\" (expected %s)",
        c->kind, c->text, p, c->grammar);
    return -1;
}

static int null_arg(const char *s, const char *kind, char *err, size_t errsz)
{
    if (s && *s)
        return 0;
    say(err, errsz, "bad %s \"\": empty", kind);
    return -1;
}

int geom_parse_rect(const char *s, geom_rect *r, char *err, size_t errsz)
{
    field_ctx c = {s, "geometry", "WIDTHxHEIGHT[+X+Y]", err, errsz};
    unsigned long w, h, x = 0, y = 0;
    const char *p = s;
    if (null_arg(s, c.kind, err, errsz) ||
        field(&c, &p, "width", 1, &w) || sep(&c, &p, 'x', "height") ||
        field(&c, &p, "height", 1, &h))
        return -1;
    if (*p != '\0') {
        if (sep(&c, &p, '+', "X offset") || field(&c, &p, "X offset", 0, &x) ||
            sep(&c, &p, '+', "Y offset") || field(&c, &p, "Y offset", 0, &y) ||
            end(&c, p))
            return -1;
    }
    r->width = w;
    r->height = h;
    r->x = x;
    r->y = y;
    return 0;
}

/* Two numbers and the separator between them: "AxB", "X,Y". */
static int parse_pair(const char *s, const char *kind, const char *form,
                      const char *first, char sepch, const char *second,
                      unsigned long min, size_t *a, size_t *b, char *err,
                      size_t errsz)
{
    field_ctx c = {s, kind, form, err, errsz};
    unsigned long va, vb;
    const char *p = s;
    if (null_arg(s, c.kind, err, errsz) || field(&c, &p, first, min, &va) ||
        sep(&c, &p, sepch, second) || field(&c, &p, second, min, &vb) ||
        end(&c, p))
        return -1;
    *a = va;
    *b = vb;
    return 0;
}

int geom_parse_size(const char *s, size_t *w, size_t *h, char *err,
                    size_t errsz)
{
    return parse_pair(s, "size", "WIDTHxHEIGHT", "width", 'x', "height", 1,
                      w, h, err, errsz);
}

int geom_parse_shape(const char *s, size_t *w, size_t *h, size_t *ch,
                     char *err, size_t errsz)
{
    field_ctx c = {s, "shape", "WIDTHxHEIGHTxCHANNELS", err, errsz};
    unsigned long a, b, d;
    const char *p = s;
    if (null_arg(s, c.kind, err, errsz) || field(&c, &p, "width", 1, &a) ||
        sep(&c, &p, 'x', "height") || field(&c, &p, "height", 1, &b) ||
        sep(&c, &p, 'x', "channels") || field(&c, &p, "channels", 1, &d) ||
        end(&c, p))
        return -1;
    *w = a;
    *h = b;
    *ch = d;
    return 0;
}

int geom_parse_point(const char *s, size_t *x, size_t *y, char *err,
                     size_t errsz)
{
    return parse_pair(s, "position", "X,Y", "X", ',', "Y", 0, x, y, err,
                      errsz);
}

int geom_parse_uint(const char *s, unsigned long min, unsigned long max,
                    const char *what, unsigned long *out, char *err,
                    size_t errsz)
{
    field_ctx c = {s, "number", "a decimal number", err, errsz};
    unsigned long v;
    const char *p = s;
    char kind[64];
    (void)snprintf(kind, sizeof kind, "%s value", what);
    c.kind = kind;
    if (null_arg(s, kind, err, errsz) || field(&c, &p, "value", 0, &v) ||
        end(&c, p))
        return -1;
    /* Ranges read "out of range MIN..MAX" in every roicopy message. */
    if (v < min || v > max) {
        say(err, errsz, "bad %s \"%s\": out of range %lu..%lu", kind, s, min,
            max);
        return -1;
    }
    *out = v;
    return 0;
}

int geom_parse_list(const char *s, unsigned long *vals, size_t max,
                    size_t *n, char *err, size_t errsz)
{
    field_ctx c = {s, "list", "numbers separated by commas", err, errsz};
    const char *p = s;
    size_t k = 0;
    if (null_arg(s, c.kind, err, errsz))
        return -1;
    for (;;) {
        unsigned long v;
        if (k == max) {
            say(err, errsz, "bad list \"%s\": more than %lu values", s,
                (unsigned long)max);
            return -1;
        }
        if (field(&c, &p, "value", 0, &v))
            return -1;
        vals[k++] = v;
        if (*p == '\0')
            break;
        if (sep(&c, &p, ',', "value"))
            return -1;
    }
    *n = k;
    return 0;
}
