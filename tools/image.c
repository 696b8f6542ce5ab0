/* SPDX-License-Identifier: MIT */
/*
 * image.c - roicopy's image formats (image.h): the one table of formats,
 * the dispatch to each format's codec (netpbm.c built in; png-io.c and
 * tiff-io.c registered by formats.c), the output header of a crop, and
 * the CPU crop and compare.  Opening inputs is input.c's, the output file
 * output.c's, escaping escape.c's.
 */
#include "image.h"
#include "input.h"
#include "netpbm.h"
#include "say.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- formats ------------------------------------------------------------ */

static int pgm_holds(const image_header *in);
static int ppm_holds(const image_header *in);
static int pam_holds(const image_header *in);
static int raw_holds(const image_header *in);
static int png_holds(const image_header *in);
static int tiff_holds(const image_header *in);
static int png_signature(const unsigned char *b, size_t n);
static int tiff_signature(const unsigned char *b, size_t n);

/* Every format in one place: its name, the file extensions that select it
 * (image_format_for_path), what samples it can hold, and its codec.  A new
 * format is one codec file (the image_codec_ops of image.h) and one row
 * here. */
typedef struct image_codec {
    image_format format;
    const char *name;
    const char *ext[3];                       /* without the dot */
    int (*holds)(const image_header *in);     /* can it hold in's samples */
    const char *needs;                        /* what it holds, for messages */
    const image_codec_ops *builtin;           /* NULL: registered, if built */
    /* Registered (library) codecs: what a file is called in messages, its
     * signature (known without the library, to say what a file is that
     * this program cannot read), the package that brings the library and
     * whether it has pages (--page). */
    const char *kind;
    int (*signature)(const unsigned char *head, size_t n);
    const char *package;
    int pages;
} image_codec;

static const image_codec codecs[] = {
    {IMAGE_PGM, "pgm", {"pgm", NULL, NULL}, pgm_holds,
     "1 channel of 8- or 16-bit samples", &netpbm_codec, "netpbm", NULL,
     NULL, 0},
    {IMAGE_PPM, "ppm", {"ppm", NULL, NULL}, ppm_holds,
     "3 channels of 8- or 16-bit samples", &netpbm_codec, "netpbm", NULL,
     NULL, 0},
    {IMAGE_PAM, "pam", {"pam", NULL, NULL}, pam_holds,
     "8- or 16-bit samples", &netpbm_codec, "netpbm", NULL, NULL, 0},
    {IMAGE_RAW, "raw", {"raw", NULL, NULL}, raw_holds, "any samples",
     &netpbm_codec, "raw", NULL, NULL, 0},
    /* Library codecs: the code is registered by image_set_codec(); the
     * rows are always here, so that .png names PNG (and says how to get
     * it) in a program built without libpng. */
    {IMAGE_PNG, "png", {"png", NULL, NULL}, png_holds,
     "1 to 4 channels of 8- or 16-bit samples", NULL, "PNG", png_signature,
     "libpng-dev", 0},
    {IMAGE_TIFF, "tiff", {"tif", "tiff", NULL}, tiff_holds,
     "1 to 4 channels of 8- or 16-bit or 32-bit float samples", NULL, "TIFF",
     tiff_signature, "libtiff-dev", 1},
};
#define NCODECS (sizeof codecs / sizeof *codecs)

/* The codes registered for the rows without a built-in one. */
static const image_codec_ops *registered[NCODECS];

static const image_codec *codec_of(image_format f)
{
    size_t i;
    for (i = 0; i < NCODECS; ++i)
        if (codecs[i].format == f)
            return &codecs[i];
    return NULL;
}

/* The code of a format: built in, registered, or NULL (a library format
 * this program was built without). */
static const image_codec_ops *ops_of(const image_codec *c)
{
    return !c ? NULL : c->builtin ? c->builtin : registered[c - codecs];
}

static int pgm_holds(const image_header *in)
{
    return !in->is_float && in->channels == 1;
}
static int ppm_holds(const image_header *in)
{
    return !in->is_float && in->channels == 3;
}
static int pam_holds(const image_header *in) { return !in->is_float; }
static int raw_holds(const image_header *in)
{
    (void)in;
    return 1;
}
static int png_holds(const image_header *in)
{
    return !in->is_float && in->channels >= 1 && in->channels <= 4;
}
static int tiff_holds(const image_header *in)
{
    return in->channels >= 1 && in->channels <= 4;
}

static int png_signature(const unsigned char *b, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    return n >= 8 && !memcmp(b, sig, 8);
}

/* TIFF's and BigTIFF's, either byte order. */
static int tiff_signature(const unsigned char *b, size_t n)
{
    return n >= 4 && ((b[0] == 'I' && b[1] == 'I' &&
                       (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
                      (b[0] == 'M' && b[1] == 'M' && b[2] == 0 &&
                       (b[3] == 42 || b[3] == 43)));
}

int image_set_codec(image_format f, const image_codec_ops *ops)
{
    const image_codec *c = codec_of(f);
    if (!c || c->builtin)
        return -1;
    registered[c - codecs] = ops;
    return 0;
}

int image_format_built(image_format f)
{
    return ops_of(codec_of(f)) != NULL;
}

/* The message for a library format this program was built without (or a
 * format the table lacks). */
static void say_not_built(char *err, size_t errsz, const char *prefix,
                          const image_codec *c)
{
    if (!c) {
        say(err, errsz, "%sunknown format", prefix);
        return;
    }
    say(err, errsz,
        "%sbuilt without %s support (install %s and configure again)",
        prefix, c->kind, c->package);
}

image_format image_format_from_name(const char *name)
{
    size_t i, j;
    for (i = 0; i < NCODECS; ++i)
        if (!strcmp(name, codecs[i].name))
            return codecs[i].format;
    /* An extension names its format too: "tif". */
    for (i = 0; i < NCODECS; ++i)
        for (j = 0; j < 3 && codecs[i].ext[j]; ++j)
            if (!strcmp(name, codecs[i].ext[j]))
                return codecs[i].format;
    return (image_format)0;
}

const char *image_format_name(image_format f)
{
    const image_codec *c = codec_of(f);
    return c ? c->name : "?";
}

const char *image_format_ext(image_format f)
{
    const char *e = image_format_ext_nth(f, 0);
    return e ? e : "?";
}

image_format image_format_nth(size_t i)
{
    return i < NCODECS ? codecs[i].format : (image_format)0;
}

const char *image_format_ext_nth(image_format f, size_t j)
{
    const image_codec *c = codec_of(f);
    return c && j < 3 ? c->ext[j] : NULL;
}

const char *image_format_package(image_format f)
{
    const image_codec *c = codec_of(f);
    return c ? c->package : NULL;
}

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int same_ext(const char *a, const char *b)
{
    for (; *a && *b; ++a, ++b)
        if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* The extension rule, in one place: the text after the last '.' of the
 * last path component, compared without regard to ASCII case. */
image_format image_format_for_path(const char *path)
{
    const char *base = strrchr(path, '/'), *dot;
    size_t i, j;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return (image_format)0;
    for (i = 0; i < NCODECS; ++i)
        for (j = 0; j < 3 && codecs[i].ext[j]; ++j)
            if (same_ext(dot + 1, codecs[i].ext[j]))
                return codecs[i].format;
    return (image_format)0;
}

int image_format_holds(image_format f, const image_header *in)
{
    const image_codec *c = codec_of(f);
    return c && c->holds(in);
}

void image_formats_holding(const image_header *in, char *buf, size_t n)
{
    size_t i, k = 0, count = 0, total = 0;
    for (i = 0; i < NCODECS; ++i)
        total += codecs[i].holds(in) && image_format_built(codecs[i].format);
    buf[0] = '\0';
    for (i = 0; i < NCODECS && k < n; ++i) {
        int w;
        if (!codecs[i].holds(in) || !image_format_built(codecs[i].format))
            continue;
        ++count;
        w = snprintf(buf + k, n - k, "%s%s",
                     count == 1 ? "" : count == total ? " or " : ", ",
                     codecs[i].name);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

int image_needs_rescale(const image_header *h)
{
    return !h->is_float && h->maxval != 0 &&
           ((h->bytes == 1 && h->maxval != 255) ||
            (h->bytes == 2 && h->maxval != 65535));
}

void image_rescale_row(unsigned char *row, size_t n, const image_header *h,
                       int big_endian)
{
    unsigned long full = h->bytes == 1 ? 255UL : 65535UL, m = h->maxval, v;
    size_t i;
    if (!image_needs_rescale(h))
        return;
    for (i = 0; i < n; ++i) {
        unsigned char *p = row + i * h->bytes;
        v = image_sample(p, h->bytes, big_endian);
        /* Samples above maxval are refused when read (netpbm.c), so
         * v > m never comes here from a file; the top keeps a caller's
         * stray value from wrapping. */
        v = v >= m ? full : (v * full + m / 2) / m;
        if (h->bytes == 1) {
            p[0] = (unsigned char)v;
        } else if (big_endian) {
            p[0] = (unsigned char)(v >> 8);
            p[1] = (unsigned char)v;
        } else {
            p[1] = (unsigned char)(v >> 8);
            p[0] = (unsigned char)v;
        }
    }
}

/* ---- reading ------------------------------------------------------------ */

/* The library format whose signature head has (through its codec when
 * registered), or NULL: netpbm's parser then says what the file is. */
static const image_codec *sniff(const unsigned char *head, size_t n)
{
    size_t i;
    for (i = 0; i < NCODECS; ++i) {
        const image_codec_ops *ops = ops_of(&codecs[i]);
        if (!codecs[i].signature)
            continue;
        if (ops && ops->sniff ? ops->sniff(head, n)
                              : codecs[i].signature(head, n))
            return &codecs[i];
    }
    return NULL;
}

/* The path a codec opens: a library's reaches standard input through
 * /dev/fd (input.c's spooled copy). */
static const char *codec_path(const image_codec *c, const char *path,
                              char *buf, size_t n)
{
    return c->builtin ? path : image_input_path(path, buf, n);
}

int image_parse_input(const char *path, const image_raw_spec *raw,
                      unsigned page, image_header *h, char *err,
                      size_t errsz)
{
    unsigned char head[16];
    char prefix[64], dev[64];
    const image_codec *c;
    const image_codec_ops *ops;
    struct stat st;
    size_t n;
    FILE *f;
    memset(h, 0, sizeof *h);
    if (raw)
        return netpbm_read_raw_header(path, raw, h, err, errsz);
    f = image_open_input(path, &st, err, errsz);
    if (!f)
        return -1;
    n = fread(head, 1, sizeof head, f);
    fclose(f);
    c = sniff(head, n);
    if (!c)
        c = codec_of(IMAGE_PGM); /* netpbm: P5, P6, P7, or says what not */
    ops = ops_of(c);
    if (!ops) {
        (void)snprintf(prefix, sizeof prefix, "a %s file, but ", c->kind);
        say_not_built(err, errsz, prefix, c);
        return -1;
    }
    if (page > 0 && !c->pages) {
        say(err, errsz, "no page %u: a %s file has one page (0)", page,
            c->kind);
        return -1;
    }
    if (ops->read_header(codec_path(c, path, dev, sizeof dev), page, h, err,
                         errsz))
        return -1;
    if (!h->format)
        h->format = c->format;
    h->page = page;
    return 0;
}

int image_parse_header(const char *path, const image_raw_spec *raw,
                       image_header *h, char *err, size_t errsz)
{
    return image_parse_input(path, raw, 0, h, err, errsz);
}

int image_read_pixels(const char *path, const image_header *h, void *dst,
                      size_t dst_pitch, char *err, size_t errsz)
{
    const image_codec *c = codec_of(h->format);
    const image_codec_ops *ops = ops_of(c);
    char dev[64];
    if (!ops) {
        say_not_built(err, errsz, "", c);
        return -1;
    }
    return ops->read_pixels(codec_path(c, path, dev, sizeof dev), h, dst,
                            dst_pitch, err, errsz);
}

/* The codec that reads rows alone (read_span), or NULL. */
static const image_codec_ops *span_reader(const image_header *h, size_t y0,
                                          size_t nrows)
{
    const image_codec_ops *ops = ops_of(codec_of(h->format));
    return ops && ops->read_span && y0 <= h->height &&
                   nrows <= h->height - y0
               ? ops
               : NULL;
}

int image_can_read_span(const image_header *h)
{
    return span_reader(h, 0, h->height) != NULL;
}

int image_read_rows(const char *path, const image_header *h, size_t y0,
                    size_t nrows, void *dst, size_t dst_pitch, char *err,
                    size_t errsz)
{
    if (!span_reader(h, y0, nrows))
        return image_read_pixels(path, h, dst, dst_pitch, err, errsz);
    return image_read_span(path, h, y0, nrows,
                           (char *)dst + y0 * dst_pitch, dst_pitch, err,
                           errsz);
}

int image_read_span(const char *path, const image_header *h, size_t y0,
                    size_t nrows, void *dst, size_t dst_pitch, char *err,
                    size_t errsz)
{
    const image_codec_ops *ops = span_reader(h, y0, nrows);
    if (!ops) {
        say(err, errsz, "rows %lu..%lu cannot be read alone from this file",
            (unsigned long)y0, (unsigned long)(y0 + nrows));
        return -1;
    }
    return ops->read_span(path, h, y0, nrows, dst, dst_pitch, err, errsz);
}

/* ---- output header ------------------------------------------------------ */

/* A TUPLTYPE for a PAM written from something that had none. */
static const char *default_tupltype(size_t channels)
{
    switch (channels) {
    case 1: return "GRAYSCALE";
    case 2: return "GRAYSCALE_ALPHA";
    case 3: return "RGB";
    case 4: return "RGB_ALPHA";
    default: return "";
    }
}

/* A PNG or TIFF output reads 1 to 4 channels as gray, gray and alpha, RGB
 * and RGB with alpha: a known tuple type that means something else (CMYK,
 * a GRAYSCALE of 3 planes, RGB with a 4th plane that is not alpha) would
 * be misread.  Unknown tuple types keep their channels' count alone. */
static int tupltype_misread(const image_header *in)
{
    static const struct {
        const char *name;
        size_t depth; /* 0: never */
    } known[] = {{"GRAYSCALE", 1},       {"BLACKANDWHITE", 1},
                 {"GRAYSCALE_ALPHA", 2}, {"BLACKANDWHITE_ALPHA", 2},
                 {"RGB", 3},             {"RGB_ALPHA", 4},
                 {"CMYK", 0},            {"CMYK_ALPHA", 0}};
    size_t i;
    if (in->format != IMAGE_PAM)
        return 0;
    for (i = 0; i < sizeof known / sizeof *known; ++i)
        if (!strcmp(in->tupltype, known[i].name))
            return known[i].depth != in->channels;
    return 0;
}

int image_output_header(const image_header *in, size_t width, size_t height,
                        image_format to, image_header *out, char *err,
                        size_t errsz)
{
    const image_codec *c;
    *out = *in;
    out->format = to ? to : in->format;
    out->width = width;
    out->height = height;
    out->data_offset = 0;
    c = codec_of(out->format);
    if (!c) {
        say(err, errsz, "unknown output format %d", (int)out->format);
        return -1;
    }
    if (!image_format_built(out->format)) {
        char prefix[32];
        (void)snprintf(prefix, sizeof prefix, "%s: ", c->name);
        say_not_built(err, errsz, prefix, c);
        return -1;
    }
    if (!c->holds(in)) {
        char can[128];
        image_formats_holding(in, can, sizeof can);
        say(err, errsz, "%s holds %s, not %lu channel%s of %s%lu-bit samples;"
            " %s can", c->name, c->needs, (unsigned long)in->channels,
            in->channels == 1 ? "" : "s", in->is_float ? "float " : "",
            (unsigned long)in->bytes * 8, can);
        return -1;
    }
    if (!c->builtin && tupltype_misread(in)) {
        say(err, errsz, "%s cannot represent tuple type \"%s\" with %lu "
            "channel%s: its channels would be read as %s; pam or raw can "
            "hold it", c->name, in->tupltype, (unsigned long)in->channels,
            in->channels == 1 ? "" : "s", default_tupltype(in->channels));
        return -1;
    }
    if (out->format != IMAGE_PAM)
        out->tupltype[0] = '\0';
    else if (in->format != IMAGE_PAM)
        (void)snprintf(out->tupltype, sizeof out->tupltype, "%s",
                       default_tupltype(in->channels));
    return image_compute_sizes(out, err, errsz);
}

/* ---- writing ------------------------------------------------------------ */

int image_write_fd(int fd, const image_header *h, const void *pixels,
                   size_t pitch, char *err, size_t errsz)
{
    const image_codec *c = codec_of(h->format);
    const image_codec_ops *ops = ops_of(c);
    if (!ops) {
        say_not_built(err, errsz, "", c);
        errno = 0;
        return -1;
    }
    return ops->write_fd(fd, h, pixels, pitch, err, errsz);
}

typedef struct image_write {
    const image_header *h;
    const void *pixels;
    size_t pitch;
} image_write;

static int write_image(int fd, void *ctx, char *err, size_t errsz)
{
    const image_write *w = (const image_write *)ctx;
    return image_write_fd(fd, w->h, w->pixels, w->pitch, err, errsz);
}

int image_write_atomic(const char *path, const image_header *h,
                       const void *pixels, size_t pitch, char *err,
                       size_t errsz)
{
    image_write w;
    w.h = h;
    w.pixels = pixels;
    w.pitch = pitch;
    return output_write(path, write_image, &w, err, errsz);
}

/* ---- crop and compare --------------------------------------------------- */

void image_crop(void *dst, size_t dst_pitch, const void *src,
                size_t src_pitch, size_t x, size_t y, size_t w, size_t h,
                size_t pixel_bytes)
{
    size_t r;
    for (r = 0; r < h; ++r)
        memcpy((char *)dst + r * dst_pitch,
               (const char *)src + (y + r) * src_pitch + x * pixel_bytes,
               w * pixel_bytes);
}

static double sample_value(const image_header *h, const unsigned char *p)
{
    if (h->bytes == 1)
        return p[0];
    if (h->bytes == 2)
        return h->big_endian ? (p[0] << 8 | p[1]) : (p[1] << 8 | p[0]);
    {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
}

int image_compare(const image_header *h, const void *expected,
                  size_t expected_pitch, const void *got, size_t got_pitch,
                  image_diff *d)
{
    size_t y, i;
    for (y = 0; y < h->height; ++y) {
        const unsigned char *e =
            (const unsigned char *)expected + y * expected_pitch;
        const unsigned char *g = (const unsigned char *)got + y * got_pitch;
        if (memcmp(e, g, h->row_bytes) == 0)
            continue;
        for (i = 0; e[i] == g[i]; ++i)
            ;
        i -= i % h->bytes; /* the start of the differing sample */
        d->y = y;
        d->x = i / h->pixel_bytes;
        d->channel = (i % h->pixel_bytes) / h->bytes;
        d->expected = sample_value(h, e + i);
        d->got = sample_value(h, g + i);
        return 1;
    }
    return 0;
}
