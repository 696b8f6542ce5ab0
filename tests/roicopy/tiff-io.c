/* SPDX-License-Identifier: MIT */
/* roicopy's TIFF codec (tools/tiff-io.c), without a GPU: what it writes
 * (8/16-bit unsigned, 32-bit float, 1 to 4 samples, either byte order in
 * memory) reads back byte for byte through a padded pitch; files written
 * by libtiff itself in every layout the reader promises (strips, tiles
 * with partial edge tiles, planar-separate strips and tiles, BigTIFF, LZW,
 * several pages) decode to the same pixels; layouts it refuses are
 * refused with a reason, and truncated, corrupt and forged files with
 * libtiff's message or the size check's. */
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tiffio.h>

#include "../tools/tiff-io.h"
#include "image-files.h"

static char err[IMAGE_ERR_MAX];

/* A test image: geometry, sample type and how libtiff stores it. */
typedef struct spec {
    uint32_t w, h;
    uint16_t spp, bps, fmt, photo, planar, compression;
    uint32_t tw, th; /* 0: strips */
    uint32_t rows_per_strip;
    unsigned seed;
} spec;

static size_t bytes_of(const spec *s) { return s->bps / 8; }

/* Pixels in host order, tightly packed, contig. */
static unsigned char *pattern(const spec *s)
{
    size_t b = bytes_of(s), n = (size_t)s->w * s->h * s->spp, i;
    unsigned char *p = (unsigned char *)malloc(n * b);
    if (!p)
        bail("out of memory");
    for (i = 0; i < n; ++i) {
        uint32_t v = (uint32_t)(i * 2654435761u + s->seed * 977u);
        if (b == 1) {
            p[i] = (unsigned char)(v >> 13);
        } else if (b == 2) {
            uint16_t u = (uint16_t)(v >> 7);
            memcpy(p + 2 * i, &u, 2);
        } else {
            float f = (float)(v % 100003u) / 7.0f - 3000.0f;
            memcpy(p + 4 * i, &f, 4);
        }
    }
    return p;
}

static void set_fields(TIFF *t, const spec *s)
{
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, s->w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, s->h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, s->spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, s->bps);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, s->fmt);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, s->photo);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, s->planar);
    TIFFSetField(t, TIFFTAG_COMPRESSION, s->compression);
    if (s->spp == 2 || s->spp == 4) {
        uint16_t ex = EXTRASAMPLE_UNASSALPHA;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &ex);
    }
    if (s->tw) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, s->tw);
        TIFFSetField(t, TIFFTAG_TILELENGTH, s->th);
    } else {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP,
                     s->rows_per_strip ? s->rows_per_strip : 5);
    }
}

/* One sample plane (or all samples when contig) of a w x h region. */
static void gather(unsigned char *out, const unsigned char *px, const spec *s,
                   uint32_t x0, uint32_t y0, uint32_t w, uint32_t h,
                   uint32_t out_w, int plane)
{
    size_t b = bytes_of(s), pix = b * s->spp;
    uint32_t y, x;
    memset(out, 0, (size_t)out_w * h * (plane < 0 ? pix : b));
    for (y = 0; y < h && y0 + y < s->h; ++y)
        for (x = 0; x < w && x0 + x < s->w; ++x) {
            const unsigned char *src =
                px + ((size_t)(y0 + y) * s->w + x0 + x) * pix;
            if (plane < 0)
                memcpy(out + ((size_t)y * out_w + x) * pix, src, pix);
            else
                memcpy(out + ((size_t)y * out_w + x) * b, src + plane * b, b);
        }
}

static void write_page(TIFF *t, const spec *s, const unsigned char *px)
{
    int sep = s->planar == PLANARCONFIG_SEPARATE;
    int planes = sep ? s->spp : 1, p;
    size_t b = bytes_of(s), per = sep ? b : b * s->spp;
    unsigned char *buf;
    uint32_t x, y;
    set_fields(t, s);
    buf = (unsigned char *)malloc(
        (s->tw ? (size_t)s->tw * s->th : s->w) * per);
    for (p = 0; p < planes; ++p) {
        if (s->tw) {
            for (y = 0; y < s->h; y += s->th)
                for (x = 0; x < s->w; x += s->tw) {
                    gather(buf, px, s, x, y, s->tw, s->th, s->tw,
                           sep ? p : -1);
                    if (TIFFWriteTile(t, buf, x, y, 0, (uint16_t)p) < 0)
                        bail("TIFFWriteTile");
                }
        } else {
            for (y = 0; y < s->h; ++y) {
                gather(buf, px, s, 0, y, s->w, 1, s->w, sep ? p : -1);
                if (TIFFWriteScanline(t, buf, y, (uint16_t)p) < 0)
                    bail("TIFFWriteScanline");
            }
        }
    }
    free(buf);
    if (!TIFFWriteDirectory(t))
        bail("TIFFWriteDirectory");
}

/* Write pages[0..n) with libtiff itself; mode "w" or "w8" (BigTIFF). */
static void libtiff_write(const char *name, const char *mode,
                          const spec *pages, int n)
{
    TIFF *t = TIFFOpen(path_of(name), mode);
    int i;
    if (!t)
        bail("TIFFOpen %s", name);
    for (i = 0; i < n; ++i) {
        unsigned char *px = pattern(&pages[i]);
        write_page(t, &pages[i], px);
        free(px);
    }
    TIFFClose(t);
}

static int tiff_page_pixels(const char *path, const image_header *h, void *dst,
                            size_t dst_pitch, char *e, size_t esz)
{
    return tiff_io_read_pixels(path, h->page, h, dst, dst_pitch, e, esz);
}

/* Read page of name with a padded pitch; tightly packed pixels or NULL. */
static unsigned char *read_tiff(const char *name, unsigned page,
                                image_header *h)
{
    err[0] = '\0';
    if (tiff_io_read_header(path_of(name), page, h, err, sizeof err))
        return NULL;
    h->page = page;
    return read_padded(name, h, 7, tiff_page_pixels, err, sizeof err);
}

static void decodes(const char *name, unsigned page, const spec *s,
                    const char *what)
{
    image_header h;
    unsigned char *want = pattern(s), *got = read_tiff(name, page, &h);
    size_t n = (size_t)s->w * s->h * s->spp * bytes_of(s);
    if (!ok(got != NULL && h.width == s->w && h.height == s->h &&
                h.channels == s->spp && h.bytes == bytes_of(s) &&
                h.is_float == (s->fmt == SAMPLEFORMAT_IEEEFP),
            "%s: header", what))
        diag("  %s", err);
    ok(got && memcmp(got, want, n) == 0, "%s: pixels byte-exact", what);
    free(want);
    free(got);
}

static spec base(uint32_t w, uint32_t h, uint16_t spp, uint16_t bps)
{
    spec s = {.w = w, .h = h, .spp = spp, .bps = bps,
              .fmt = bps == 32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT,
              .photo = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK,
              .planar = PLANARCONFIG_CONTIG, .compression = COMPRESSION_NONE,
              .seed = spp * 10u + bps};
    return s;
}

static void layouts(void)
{
    spec s = base(37, 23, 3, 8), pages[3];
    libtiff_write("strips.tif", "w", &s, 1);
    decodes("strips.tif", 0, &s, "RGB8 strips of 5 rows, uncompressed");
    s.tw = 16;
    s.th = 16;
    libtiff_write("tiles.tif", "w", &s, 1);
    decodes("tiles.tif", 0, &s, "RGB8 16x16 tiles with partial edge tiles");
    s.planar = PLANARCONFIG_SEPARATE;
    libtiff_write("sep-tiles.tif", "w", &s, 1);
    decodes("sep-tiles.tif", 0, &s, "RGB8 planar-separate tiles");
    s = base(37, 23, 4, 16);
    s.planar = PLANARCONFIG_SEPARATE;
    s.compression = COMPRESSION_LZW;
    libtiff_write("sep-strips.tif", "w", &s, 1);
    decodes("sep-strips.tif", 0, &s, "RGBA16 planar-separate LZW strips");
    s = base(41, 17, 2, 32);
    s.compression = COMPRESSION_ADOBE_DEFLATE;
    libtiff_write("big.tif", "w8", &s, 1);
    decodes("big.tif", 0, &s, "BigTIFF gray+alpha float32, deflate");
    pages[0] = base(9, 7, 1, 8);
    pages[1] = base(31, 11, 3, 16);
    pages[2] = base(5, 40, 4, 8);
    pages[2].tw = 16;
    pages[2].th = 16;
    libtiff_write("pages.tif", "w", pages, 3);
    decodes("pages.tif", 0, &pages[0], "page 0 of 3 (the default)");
    decodes("pages.tif", 1, &pages[1], "page 1 of 3");
    decodes("pages.tif", 2, &pages[2], "page 2 of 3 (tiled)");
    {
        image_header h;
        err[0] = '\0';
        ok(tiff_io_read_header(path_of("pages.tif"), 3, &h, err,
                               sizeof err) == -1 &&
               strstr(err, "no page 3: the file has 3 pages"),
           "page 3 of 3: refused (%s)", err);
    }
}

static void write_fd(const char *name, const image_header *h, const void *px,
                     size_t pitch, int *rc)
{
    int fd = open(path_of(name), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bail("open %s", name);
    err[0] = '\0';
    *rc = tiff_io_write_fd(fd, h, px, pitch, err, sizeof err);
    close(fd);
}

static void round_trip(size_t ch, size_t bytes, int is_float, int swapped)
{
    image_header h, got;
    size_t i, y, pitch, w = 29, ht = 19;
    unsigned char *px, *back;
    char name[64];
    int rc;
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    (void)snprintf(name, sizeof name, "rt-%lu-%lu%s%s.tif", (unsigned long)ch,
                   (unsigned long)bytes, is_float ? "f" : "",
                   swapped ? "-swapped" : "");
    /* samples in host order, or not */
    header_of(&h, (image_format)0, w, ht, ch, bytes, swapped ? first == 1 : first == 0);
    h.is_float = is_float;
    pitch = h.row_bytes + 9;
    px = (unsigned char *)malloc(pitch * ht);
    for (i = 0; i < pitch * ht; ++i)
        px[i] = (unsigned char)(i * 193 + ch + bytes);
    if (is_float) /* finite floats: any bit pattern would do, NaNs too */
        for (i = 0; i + 3 < pitch * ht; i += 4)
            px[i + (first == 1 ? 3 : 0)] &= 0x3F;
    write_fd(name, &h, px, pitch, &rc);
    if (!ok(rc == 0, "%s: written", name))
        diag("  %s", err);
    back = read_tiff(name, 0, &got);
    if (!ok(back && got.width == w && got.height == ht &&
                got.channels == ch && got.bytes == bytes &&
                got.is_float == is_float,
            "%s: read back, same sample type", name)) {
        diag("  %s", err);
        free(px);
        free(back);
        return;
    }
    rc = 1;
    for (y = 0; y < ht && rc; ++y)
        for (i = 0; i < h.row_bytes && rc; ++i) {
            size_t j = swapped ? i - i % bytes + (bytes - 1 - i % bytes) : i;
            rc = back[y * got.row_bytes + i] == px[y * pitch + j];
        }
    ok(rc, "%s: pixels byte-exact (host order in memory)", name);
    free(px);
    free(back);
}

static void refused(const char *name, unsigned page, const char *why)
{
    image_header h;
    unsigned char *got = read_tiff(name, page, &h);
    if (!ok(got == NULL && strstr(err, why) != NULL, "%s: refused (%s)", name,
            why))
        diag("  message \"%s\"", err);
    free(got);
}

/* A header describing s over one raw strip of 16 bytes. */
static void forged(const char *name, const spec *s)
{
    TIFF *t = TIFFOpen(path_of(name), "w");
    unsigned char strip[16] = {0};
    if (!t)
        bail("TIFFOpen %s", name);
    set_fields(t, s);
    if (TIFFWriteRawStrip(t, 0, strip, sizeof strip) < 0 ||
        !TIFFWriteDirectory(t))
        bail("forged %s", name);
    TIFFClose(t);
}

/* Well-formed 8x8 files in layouts the reader refuses, and why. */
static const struct {
    const char *name;
    uint16_t spp, bps, fmt, photo;
    const char *why;
} refused_layouts[] = {
    {"int16.tif", 1, 16, SAMPLEFORMAT_INT, PHOTOMETRIC_MINISBLACK,
     "16-bit samples of sample format 2"},
    {"white.tif", 1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, "photometric interpretation 0"},
    {"five.tif", 5, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, "5 samples a pixel"},
};

static void refusals(void)
{
    spec s;
    size_t n, i;
    unsigned char *b;
    for (i = 0; i < sizeof refused_layouts / sizeof refused_layouts[0]; ++i) {
        s = base(8, 8, refused_layouts[i].spp, 8);
        s.bps = refused_layouts[i].bps;
        s.fmt = refused_layouts[i].fmt;
        s.photo = refused_layouts[i].photo;
        libtiff_write(refused_layouts[i].name, "w", &s, 1);
        refused(refused_layouts[i].name, 0, refused_layouts[i].why);
    }
    s = base(16, 16, 3, 8);
    s.compression = COMPRESSION_ADOBE_DEFLATE;
    libtiff_write("good.tif", "w", &s, 1);
    b = get_file("good.tif", &n);
    put_file("trunc.tif", b, 100);
    refused("trunc.tif", 0, "libtiff: ");
    put_file("trunc-head.tif", b, 6);
    refused("trunc-head.tif", 0, "libtiff: ");
    free(b);
    put_file("empty.tif", "", 0);
    refused("empty.tif", 0, "libtiff: ");
    put_file("png.tif", "\x89PNG\r\n\x1a\n........", 16);
    refused("png.tif", 0, "libtiff: ");
    refused("missing.tif", 0, "No such file");
    /* Forged sizes: an uncompressed 100000x100000 in a few hundred bytes,
     * and a side beyond the limit. */
    s = base(100000, 100000, 1, 8);
    s.rows_per_strip = 100000;
    forged("huge.tif", &s);
    refused("huge.tif", 0, "cannot hold 100000x100000");
    s.w = 2000000;
    s.h = 1;
    forged("wide.tif", &s);
    refused("wide.tif", 0, "out of range");
    {
        image_header h;
        unsigned char px[64] = {0};
        int rc;
        header_of(&h, (image_format)0, 2, 2, 5, 1, 0);
        write_fd("w5.tif", &h, px, 10, &rc);
        ok(rc == -1 && strstr(err, "5 channels"), "write 5 channels: "
           "refused (%s)", err);
        header_of(&h, (image_format)0, 2, 2, 1, 4, 0);
        write_fd("wi32.tif", &h, px, 8, &rc);
        ok(rc == -1 && strstr(err, "4-byte integer"), "write 32-bit "
           "integers: refused (%s)", err);
        header_of(&h, (image_format)0, 2, 2, 1, 1, 0);
        err[0] = '\0';
        rc = tiff_io_write_fd(-1, &h, px, 2, err, sizeof err);
        ok(rc == -1 && err[0], "write to a bad descriptor: refused (%s)",
           err);
    }
    ok(tiff_io_sniff("II*\0", 4) && tiff_io_sniff("MM\0+", 4) &&
           !tiff_io_sniff("P5\n1", 4),
       "tiff_io_sniff knows classic and BigTIFF, both byte orders");
}

int main(void)
{
    size_t c;
    scratch_open("tiff-io");
    plan(0);
    for (c = 1; c <= 4; ++c) {
        round_trip(c, 1, 0, 0);
        round_trip(c, 2, 0, 0);
        round_trip(c, 2, 0, 1);
        round_trip(c, 4, 1, 0);
    }
    layouts();
    refusals();
    scratch_close();
    done_testing();
}
