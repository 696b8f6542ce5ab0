/* SPDX-License-Identifier: MIT */
/* roicopy's geometry parsers accept exactly their grammar: every class of
 * malformed text (missing parts, signs, negatives, junk, overflow, zero
 * sizes) is refused with a message that quotes the text, and the
 * boundaries (0 offsets, GEOM_MAX) are accepted. */
#include "tap.h"

#include "../tools/geometry.h"

static char err[GEOM_ERR_MAX];

/* A rectangle that must parse to the given numbers. */
static void rect_ok(const char *s, size_t w, size_t h, size_t x, size_t y)
{
    geom_rect r = {99, 99, 99, 99};
    int rc;
    err[0] = '\0';
    rc = geom_parse_rect(s, &r, err, sizeof err);
    ok(rc == 0 && r.width == w && r.height == h && r.x == x && r.y == y,
       "rect \"%s\" -> %lux%lu+%lu+%lu", s, (unsigned long)w,
       (unsigned long)h, (unsigned long)x, (unsigned long)y);
    if (rc)
        diag("  error: %s", err);
}

/* A rectangle that must be refused with a message containing `why` and
 * quoting the text, leaving the output untouched. */
static void rect_bad(const char *s, const char *why)
{
    geom_rect r = {7, 7, 7, 7};
    char quoted[128];
    int rc;
    err[0] = '\0';
    rc = geom_parse_rect(s, &r, err, sizeof err);
    (void)snprintf(quoted, sizeof quoted, "\"%s\"", s);
    ok(rc == -1 && strstr(err, why) && strstr(err, quoted) && r.width == 7,
       "rect \"%s\" refused: %s", s, why);
    if (!(rc == -1 && strstr(err, why) && strstr(err, quoted)))
        diag("  rc %d, message: %s", rc, err);
}

static void test_rect(void)
{
    rect_ok("10x20+3+4", 10, 20, 3, 4);
    rect_ok("10x20", 10, 20, 0, 0);
    rect_ok("1x1+0+0", 1, 1, 0, 0);
    rect_ok("2147483647x1+2147483647+0", 2147483647UL, 1, 2147483647UL, 0);
    rect_ok("007x08+09+010", 7, 8, 9, 10); /* leading zeros are decimal */
    rect_bad("", "empty");
    rect_bad("x20", "missing width");
    rect_bad("10x", "missing height");
    rect_bad("10", "missing height");
    rect_bad("10x20+3", "missing Y offset");
    rect_bad("10x20+", "missing X offset");
    rect_bad("10x20+3+", "missing Y offset");
    rect_bad("-10x20", "negative width");
    rect_bad("10x-20", "negative height");
    rect_bad("10x20-3+4", "negative X offset");
    rect_bad("10x20+3-4", "negative Y offset");
    rect_bad("10x20+-3+4", "negative X offset");
    rect_bad("0x20", "width must be at least 1");
    rect_bad("10x0+1+1", "height must be at least 1");
    rect_bad("10x20+3+4z", "trailing \"z\"");
    rect_bad("10x20+3+4+5", "trailing \"+5\"");
    rect_bad("10X20", "unexpected \"X20\"");
    rect_bad(" 10x20", "missing width");
    rect_bad("+10x20", "missing width");
    rect_bad("10x20 ", "unexpected \" \"");
    rect_bad("2147483648x1", "too large");
    rect_bad("1x99999999999999999999999", "too large");
    rect_bad("1x1+18446744073709551617+0", "too large");
    rect_bad("10.5x20", "unexpected \".5x20\"");
    rect_bad("0x10x20", "width must be at least 1");
}

/* Sizes and points, both two numbers: what each text parses to, or the
 * part of the error that names what is wrong (NULL: it parses). */
static const struct pair_case {
    int (*parse)(const char *s, size_t *a, size_t *b, char *err, size_t errsz);
    const char *text;
    size_t a, b;
    const char *why, *name;
} pairs[] = {
    {geom_parse_size, "640x480", 640, 480, NULL, "size 640x480"},
    {geom_parse_size, "640x480+1+1", 0, 0, "trailing \"+1+1\"", "size refuses an offset"},
    {geom_parse_size, "640", 0, 0, "missing height", "size needs a height"},
    {geom_parse_point, "0,0", 0, 0, NULL, "point 0,0"},
    {geom_parse_point, "12,34", 12, 34, NULL, "point 12,34"},
    {geom_parse_point, "12", 0, 0, "missing Y", "point needs Y"},
    {geom_parse_point, "-1,2", 0, 0, "negative X", "point: negative X"},
    {geom_parse_point, "1,-2", 0, 0, "negative Y", "point: negative Y"},
    {geom_parse_point, "1,2,3", 0, 0, "trailing \",3\"", "point: trailing junk"},
};

/* pairs[from, to): each a point. */
static void pair_checks(size_t from, size_t to)
{
    size_t a = 0, b = 0, i;
    for (i = from; i < to; ++i) {
        const struct pair_case *p = &pairs[i];
        int rc = p->parse(p->text, &a, &b, err, sizeof err);
        ok(p->why ? rc == -1 && strstr(err, p->why) != NULL
                  : rc == 0 && a == p->a && b == p->b,
           "%s", p->name);
    }
}

static void test_size_shape_point(void)
{
    size_t a = 0, b = 0, c = 0;
    pair_checks(0, 3); /* the sizes */
    ok(geom_parse_shape("32x16x4", &a, &b, &c, err, sizeof err) == 0 &&
           a == 32 && b == 16 && c == 4, "shape 32x16x4");
    ok(geom_parse_shape("32x16", &a, &b, &c, err, sizeof err) == -1 &&
           strstr(err, "missing channels") && strstr(err, "\"32x16\""),
       "shape needs channels");
    ok(geom_parse_shape("32x16x0", &a, &b, &c, err, sizeof err) == -1 &&
           strstr(err, "channels must be at least 1"), "shape: 0 channels");
    ok(geom_parse_shape("32x16x4x1", &a, &b, &c, err, sizeof err) == -1 &&
           strstr(err, "trailing"), "shape: trailing junk");
    pair_checks(3, sizeof pairs / sizeof pairs[0]); /* the points */
}

static void test_uint_list(void)
{
    unsigned long v = 0, vals[4];
    size_t n = 0;
    ok(geom_parse_uint("64", 1, 64, "--streams", &v, err, sizeof err) == 0 &&
           v == 64, "uint at its maximum");
    ok(geom_parse_uint("65", 1, 64, "--streams", &v, err, sizeof err) == -1 &&
           strstr(err, "out of range 1..64") && strstr(err, "--streams"),
       "uint above its maximum names the option");
    ok(geom_parse_uint("0", 1, 64, "--streams", &v, err, sizeof err) == -1 &&
           strstr(err, "out of range 1..64"), "uint below its minimum");
    ok(geom_parse_uint("4k", 1, 64, "--streams", &v, err, sizeof err) == -1 &&
           strstr(err, "trailing \"k\""), "uint with a suffix");
    ok(geom_parse_uint("-3", 0, 64, "--device", &v, err, sizeof err) == -1 &&
           strstr(err, "negative"), "negative uint");
    ok(geom_parse_list("0,1,2", vals, 4, &n, err, sizeof err) == 0 && n == 3 &&
           vals[0] == 0 && vals[1] == 1 && vals[2] == 2, "list 0,1,2");
    ok(geom_parse_list("5", vals, 4, &n, err, sizeof err) == 0 && n == 1 &&
           vals[0] == 5, "list of one");
    ok(geom_parse_list("0,,2", vals, 4, &n, err, sizeof err) == -1 &&
           strstr(err, "\"0,,2\""), "list with an empty item");
    ok(geom_parse_list("0,1,", vals, 4, &n, err, sizeof err) == -1,
       "list with a trailing comma");
    ok(geom_parse_list("1,2,3,4,5", vals, 4, &n, err, sizeof err) == -1 &&
           strstr(err, "more than 4"), "list longer than its room");
}

int main(void)
{
    plan(0);
    test_rect();
    test_size_shape_point();
    test_uint_list();
    done_testing();
}
