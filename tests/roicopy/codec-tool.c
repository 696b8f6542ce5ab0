/* SPDX-License-Identifier: MIT */
/*
 * codec-tool.c - the test driver of tests/roicopy/png-tiff-interop.sh: reads and
 * writes images through roicopy's codecs (tools/png-io.c, tools/tiff-io.c)
 * and its netpbm reader, chosen by extension (.png, .tif/.tiff, anything
 * else netpbm).
 *
 *   codec-tool info IN [PAGE]        prints "W H CHANNELS BYTES FLOAT"
 *   codec-tool cmp A B [PAGE_OF_A]   exit 0 when the pixels are equal
 *                                    (16-bit samples compared by value),
 *                                    1 at the first difference
 *   codec-tool convert IN OUT [PAGE] decode IN, encode OUT
 *   codec-tool formats               the formats compiled in
 *   codec-tool cut-idat IN OUT       IN's PNG with its first IDAT cut to
 *                                    half its data and later IDATs
 *                                    dropped, every length and CRC right:
 *                                    only decoding the pixels finds it
 *
 * Errors print "codec-tool: FILE: message" and exit 3, as roicopy does
 * for a bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/formats.h"
#include "../tools/image.h"
#include "png-chunk.h"
#ifdef HAVE_PNG
#include "../tools/png-io.h"
#endif
#ifdef HAVE_TIFF
#include "../tools/tiff-io.h"
#endif

enum kind { K_NETPBM, K_PNG, K_TIFF };

static enum kind kind_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcmp(dot, ".png"))
        return K_PNG;
    if (dot && (!strcmp(dot, ".tif") || !strcmp(dot, ".tiff")))
        return K_TIFF;
    return K_NETPBM;
}

static void die(const char *path, const char *msg)
{
    fprintf(stderr, "codec-tool: %s: %s\n", path, msg);
    exit(3);
}

static void read_header(const char *path, unsigned page, image_header *h)
{
    char err[IMAGE_ERR_MAX] = "";
    int rc = -1;
    (void)page;
    switch (kind_of(path)) {
    case K_NETPBM: rc = image_parse_header(path, NULL, h, err, sizeof err); break;
#ifdef HAVE_PNG
    case K_PNG: rc = png_io_read_header(path, h, err, sizeof err); break;
#endif
#ifdef HAVE_TIFF
    case K_TIFF: rc = tiff_io_read_header(path, page, h, err, sizeof err); break;
#endif
    default: die(path, "format not compiled in");
    }
    if (rc)
        die(path, err);
}

/* Read the whole image, tightly packed, with a padded pitch on the way to
 * check that the readers honour it. */
static unsigned char *read_image(const char *path, unsigned page,
                                 image_header *h)
{
    char err[IMAGE_ERR_MAX] = "";
    unsigned char *buf, *tight;
    size_t pitch, y;
    int rc = -1;
    read_header(path, page, h);
    pitch = h->row_bytes + 13;
    buf = (unsigned char *)malloc(pitch * h->height);
    tight = (unsigned char *)malloc(h->total_bytes);
    if (!buf || !tight)
        die(path, "out of memory");
    memset(buf, 0xA5, pitch * h->height);
    switch (kind_of(path)) {
    case K_NETPBM: rc = image_read_pixels(path, h, buf, pitch, err, sizeof err); break;
#ifdef HAVE_PNG
    case K_PNG: rc = png_io_read_pixels(path, h, buf, pitch, err, sizeof err); break;
#endif
#ifdef HAVE_TIFF
    case K_TIFF: rc = tiff_io_read_pixels(path, page, h, buf, pitch, err, sizeof err); break;
#endif
    default: break;
    }
    if (rc)
        die(path, err);
    for (y = 0; y < h->height; ++y) {
        size_t k;
        for (k = h->row_bytes; k < pitch; ++k)
            if (buf[y * pitch + k] != 0xA5)
                die(path, "the reader wrote past the end of a row");
        memcpy(tight + y * h->row_bytes, buf + y * pitch, h->row_bytes);
    }
    free(buf);
    return tight;
}

/* 16-bit samples to big-endian, so that files read with different byte
 * orders compare by value. */
static void to_big_endian(image_header *h, unsigned char *p)
{
    size_t i;
    if (h->bytes != 2 || h->big_endian)
        return;
    for (i = 0; i + 1 < h->total_bytes; i += 2) {
        unsigned char t = p[i];
        p[i] = p[i + 1];
        p[i + 1] = t;
    }
    h->big_endian = 1;
}

static int cmd_cmp(const char *a, const char *b, unsigned page)
{
    image_header ha, hb;
    image_diff d;
    unsigned char *pa = read_image(a, page, &ha), *pb = read_image(b, 0, &hb);
    int rc = 0;
    to_big_endian(&ha, pa);
    to_big_endian(&hb, pb);
    if (ha.width != hb.width || ha.height != hb.height ||
        ha.channels != hb.channels || ha.bytes != hb.bytes ||
        ha.is_float != hb.is_float) {
        printf("geometry differs: %lux%lux%lu %lu-byte%s vs %lux%lux%lu "
               "%lu-byte%s\n", (unsigned long)ha.width,
               (unsigned long)ha.height, (unsigned long)ha.channels,
               (unsigned long)ha.bytes, ha.is_float ? " float" : "",
               (unsigned long)hb.width, (unsigned long)hb.height,
               (unsigned long)hb.channels, (unsigned long)hb.bytes,
               hb.is_float ? " float" : "");
        rc = 1;
    } else if (image_compare(&ha, pa, ha.row_bytes, pb, hb.row_bytes, &d)) {
        printf("pixels differ at x=%lu y=%lu channel %lu: %g vs %g\n",
               (unsigned long)d.x, (unsigned long)d.y,
               (unsigned long)d.channel, d.expected, d.got);
        rc = 1;
    }
    free(pa);
    free(pb);
    return rc;
}

static int write_fd_file(const char *path, const image_header *h,
                         const unsigned char *p)
{
    char err[IMAGE_ERR_MAX] = "";
    int rc = -1, fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        die(path, strerror(errno));
    (void)h;
    (void)p;
#ifdef HAVE_PNG
    if (kind_of(path) == K_PNG)
        rc = png_io_write_fd(fd, h, p, h->row_bytes, err, sizeof err);
#endif
#ifdef HAVE_TIFF
    if (kind_of(path) == K_TIFF)
        rc = tiff_io_write_fd(fd, h, p, h->row_bytes, err, sizeof err);
#endif
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        (void)snprintf(err, sizeof err, "%s", strerror(errno));
    }
    if (rc) {
        (void)unlink(path);
        die(path, err[0] ? err : "format not compiled in");
    }
    return 0;
}

static int cmd_convert(const char *in, const char *out, unsigned page)
{
    char err[IMAGE_ERR_MAX] = "";
    image_header h, o;
    unsigned char *p = read_image(in, page, &h);
    if (kind_of(out) != K_NETPBM) {
        write_fd_file(out, &h, p);
    } else {
        const char *dot = strrchr(out, '.');
        image_format f = dot ? image_format_from_name(dot + 1) : IMAGE_PAM;
        if (h.format == 0)
            h.format = IMAGE_PAM;
        if (image_output_header(&h, h.width, h.height, f ? f : IMAGE_PAM, &o,
                                err, sizeof err) ||
            image_write_atomic(out, &o, p, h.row_bytes, err, sizeof err))
            die(out, err);
    }
    free(p);
    return 0;
}

static int cmd_cut_idat(const char *in, const char *out)
{
    FILE *f = fopen(in, "rb");
    unsigned char *b, *o;
    size_t n, at = 8, w = 8;
    int seen = 0;
    if (!f)
        die(in, strerror(errno));
    b = (unsigned char *)malloc(1 << 26);
    o = (unsigned char *)malloc(1 << 26);
    if (!b || !o)
        die(in, "out of memory");
    n = fread(b, 1, 1 << 26, f);
    fclose(f);
    if (n < 8 || memcmp(b, "\x89PNG", 4) != 0)
        die(in, "not a PNG");
    memcpy(o, b, 8);
    while (at + 12 <= n) {
        uint32_t len = get32(b + at);
        if (at + 12 + len > n)
            die(in, "a chunk runs past the end");
        if (!memcmp(b + at + 4, "IDAT", 4)) {
            if (!seen) {
                uint32_t half = len / 2;
                put32(o + w, half);
                memcpy(o + w + 4, b + at + 4, 4 + half);
                put32(o + w + 8 + half, png_crc32(o + w + 4, 4 + half));
                w += 12 + half;
            }
            seen = 1;
        } else {
            memcpy(o + w, b + at, 12 + len);
            w += 12 + len;
        }
        at += 12 + len;
    }
    f = fopen(out, "wb");
    if (!f || fwrite(o, 1, w, f) != w || fclose(f) != 0)
        die(out, strerror(errno));
    free(b);
    free(o);
    return seen ? 0 : 3;
}

int main(int argc, char **argv)
{
    unsigned page = 0;
    if (argc == 2 && !strcmp(argv[1], "formats")) {
        printf("%s\n", roicopy_formats());
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "info")) {
        image_header h;
        if (argc > 3)
            page = (unsigned)strtoul(argv[3], NULL, 10);
        read_header(argv[2], page, &h);
        printf("%lu %lu %lu %lu %d\n", (unsigned long)h.width,
               (unsigned long)h.height, (unsigned long)h.channels,
               (unsigned long)h.bytes, h.is_float);
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "cmp")) {
        if (argc > 4)
            page = (unsigned)strtoul(argv[4], NULL, 10);
        return cmd_cmp(argv[2], argv[3], page);
    }
    if (argc == 4 && !strcmp(argv[1], "cut-idat"))
        return cmd_cut_idat(argv[2], argv[3]);
    if (argc >= 4 && !strcmp(argv[1], "convert")) {
        if (argc > 4)
            page = (unsigned)strtoul(argv[4], NULL, 10);
        return cmd_convert(argv[2], argv[3], page);
    }
    fprintf(stderr, "usage: codec-tool info IN [PAGE] | cmp A B [PAGE] | "
            "convert IN OUT [PAGE] | cut-idat IN OUT\n");
    return 2;
}
