/* SPDX-License-Identifier: MIT */
/*
 * mksamples.c - makes roicopy's bundled samples (samples/) and the random
 * images the tests need.
 *
 *   mksamples DIR
 *       writes the bundled set into DIR, byte for byte what samples/ holds
 *       (tests/roicopy/samples-reproducible.sh checks it);
 *   mksamples image FORMAT WxHxC MAXVAL|float SEED PATH
 *       writes one image of pseudo-random content: FORMAT pgm|ppm|pam|raw,
 *       MAXVAL 1..65535 (raw: 255 or 65535, host byte order) or "float"
 *       (raw only).
 *
 * Content is a gradient plus noise from a fixed xorshift generator, so it
 * is the same on every machine, and no two positions or channels are
 * likely to match by accident.  The headers carry comments, which the
 * reader must skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geometry.h"
#include "image.h"

typedef struct spec {
    image_format format;
    size_t w, h, c;
    unsigned maxval; /* 0 = float */
    unsigned seed;
    const char *tupltype;
} spec;

static unsigned rng_state;

static unsigned rng(void)
{
    unsigned x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng_state = x;
}

static size_t sample_bytes(const spec *s)
{
    return s->maxval == 0 ? 4 : s->maxval > 255 ? 2 : 1;
}

/* One sample: a diagonal gradient per channel plus up to 1/8 noise. */
static double sample(const spec *s, size_t x, size_t y, size_t ch)
{
    double g = (double)(x * (ch + 1) + y * (s->c - ch)) /
               (double)(s->w * (ch + 1) + s->h * (s->c - ch));
    double n = (double)(rng() % 1024) / 1024.0;
    return g * 0.875 + n * 0.125;
}

static void put_sample(const spec *s, unsigned char *p, double v)
{
    unsigned u;
    if (s->maxval == 0) {
        float f = (float)(v * 2.0 - 0.5); /* negative and > 1 too */
        memcpy(p, &f, sizeof f);
        return;
    }
    u = (unsigned)(v * s->maxval + 0.5);
    if (u > s->maxval)
        u = s->maxval;
    if (sample_bytes(s) == 1) {
        p[0] = (unsigned char)u;
    } else if (s->format != IMAGE_RAW) { /* netpbm: big-endian */
        p[0] = (unsigned char)(u >> 8);
        p[1] = (unsigned char)u;
    } else {
        unsigned short h = (unsigned short)u; /* raw: host order */
        memcpy(p, &h, sizeof h);
    }
}

static int write_header(FILE *f, const spec *s)
{
    switch (s->format) {
    case IMAGE_PGM:
    case IMAGE_PPM:
        return fprintf(f, "P%c\n# made by cuxfer's mksamples, seed %u\n"
                       "%lu %lu\n# maxval next\n%u\n",
                       s->format == IMAGE_PGM ? '5' : '6', s->seed,
                       (unsigned long)s->w, (unsigned long)s->h,
                       s->maxval) < 0;
    case IMAGE_PAM:
        return fprintf(f, "P7\n# made by cuxfer's mksamples, seed %u\n"
                       "WIDTH %lu\nHEIGHT %lu\nDEPTH %lu\nMAXVAL %u\n%s%s%s"
                       "ENDHDR\n", s->seed, (unsigned long)s->w,
                       (unsigned long)s->h, (unsigned long)s->c, s->maxval,
                       s->tupltype ? "TUPLTYPE " : "",
                       s->tupltype ? s->tupltype : "",
                       s->tupltype ? "\n" : "") < 0;
    case IMAGE_RAW:
        return 0;
    case IMAGE_PNG: /* mksamples writes netpbm and raw only */
    case IMAGE_TIFF:
        return 1;
    }
    return 1;
}

static int make(const spec *s, const char *path)
{
    size_t b = sample_bytes(s), x, y, ch;
    unsigned char buf[4];
    FILE *f = fopen(path, "wb");
    int bad;
    if (!f) {
        perror(path);
        return 1;
    }
    rng_state = s->seed * 2654435761u + 1u;
    bad = write_header(f, s);
    for (y = 0; y < s->h && !bad; ++y)
        for (x = 0; x < s->w && !bad; ++x)
            for (ch = 0; ch < s->c && !bad; ++ch) {
                put_sample(s, buf, sample(s, x, y, ch));
                bad = fwrite(buf, 1, b, f) != b;
            }
    if (fclose(f) != 0 || bad) {
        perror(path);
        return 1;
    }
    return 0;
}

/* The bundled set: odd sizes, every format, 8 and 16 bits, a raw file. */
static int bundled(const char *dir)
{
    static const struct {
        const char *name;
        spec s;
    } set[] = {
        {"gray-97x61.pgm", {IMAGE_PGM, 97, 61, 1, 255, 1, NULL}},
        {"rgb-80x60.ppm", {IMAGE_PPM, 80, 60, 3, 255, 2, NULL}},
        {"rgba-64x48.pam", {IMAGE_PAM, 64, 48, 4, 255, 3, "RGB_ALPHA"}},
        {"gray16-61x47.pgm", {IMAGE_PGM, 61, 47, 1, 65535, 4, NULL}},
        {"rgb-45x33x3.raw", {IMAGE_RAW, 45, 33, 3, 255, 5, NULL}},
    };
    char path[4096];
    size_t i;
    for (i = 0; i < sizeof set / sizeof *set; ++i) {
        (void)snprintf(path, sizeof path, "%s/%s", dir, set[i].name);
        if (make(&set[i].s, path))
            return 1;
    }
    return 0;
}

static int one_image(char **argv)
{
    char err[GEOM_ERR_MAX];
    unsigned long mv = 0, seed;
    spec s;
    memset(&s, 0, sizeof s);
    s.format = image_format_from_name(argv[0]);
    if (!s.format || geom_parse_shape(argv[1], &s.w, &s.h, &s.c, err,
                                      sizeof err)) {
        fprintf(stderr, "mksamples: %s\n", s.format ? err : "bad format");
        return 2;
    }
    if (strcmp(argv[2], "float") != 0 &&
        geom_parse_uint(argv[2], 1, 65535, "MAXVAL", &mv, err, sizeof err)) {
        fprintf(stderr, "mksamples: %s\n", err);
        return 2;
    }
    if (geom_parse_uint(argv[3], 0, GEOM_MAX, "SEED", &seed, err,
                        sizeof err)) {
        fprintf(stderr, "mksamples: %s\n", err);
        return 2;
    }
    s.maxval = (unsigned)mv;
    s.seed = (unsigned)seed;
    if (s.format == IMAGE_PAM)
        s.tupltype = s.c == 4 ? "RGB_ALPHA" : s.c == 1 ? "GRAYSCALE" : NULL;
    return make(&s, argv[4]);
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return bundled(argv[1]);
    if (argc == 7 && !strcmp(argv[1], "image"))
        return one_image(argv + 2);
    fprintf(stderr, "usage: mksamples DIR\n"
                    "       mksamples image FORMAT WxHxC MAXVAL|float SEED "
                    "PATH\n");
    return 2;
}
