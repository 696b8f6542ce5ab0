/* SPDX-License-Identifier: MIT */
/* roicopy's PNG codec (tools/png-io.c), without a GPU: every layout it
 * writes reads back byte for byte, through a padded pitch, with 16-bit
 * samples in either byte order in memory; palette, 1-bit and interlaced
 * files written by libpng itself are expanded as documented; truncated,
 * corrupt (bad CRC) and forged (huge dimensions) files are refused with
 * libpng's message; writes refuse what PNG cannot hold. */
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <png.h>

#include "../tools/png-io.h"
#include "image-files.h"
#include "png-chunk.h"

static char err[IMAGE_ERR_MAX];

static int write_png(const char *name, const image_header *h, const void *px,
                     size_t pitch)
{
    int fd = open(path_of(name), O_WRONLY | O_CREAT | O_TRUNC, 0644), rc;
    if (fd < 0)
        bail("open %s: %s", name, strerror(errno));
    err[0] = '\0';
    rc = png_io_write_fd(fd, h, px, pitch, err, sizeof err);
    close(fd);
    return rc;
}

/* Read name with a padded pitch; returns tightly packed pixels or NULL. */
static unsigned char *read_png(const char *name, image_header *h)
{
    err[0] = '\0';
    if (png_io_read_header(path_of(name), h, err, sizeof err))
        return NULL;
    return read_padded(name, h, 5, png_io_read_pixels, err, sizeof err);
}

static void round_trip(size_t ch, size_t bytes, int big_endian)
{
    image_header h, got;
    size_t w = 37, ht = 23, i, pitch;
    unsigned char *px, *back;
    char name[64];
    (void)snprintf(name, sizeof name, "rt-%lu-%lu-%s.png", (unsigned long)ch,
                   (unsigned long)bytes, big_endian ? "be" : "le");
    header_of(&h, (image_format)0, w, ht, ch, bytes, big_endian);
    pitch = h.row_bytes + 3;
    px = (unsigned char *)malloc(pitch * ht);
    for (i = 0; i < pitch * ht; ++i)
        px[i] = (unsigned char)(i * 131 + (i >> 8) * 7 + ch);
    if (!ok(write_png(name, &h, px, pitch) == 0, "%s: written", name))
        diag("  %s", err);
    back = read_png(name, &got);
    if (!ok(back != NULL, "%s: read back", name)) {
        diag("  %s", err);
        free(px);
        return;
    }
    ok(got.width == w && got.height == ht && got.channels == ch &&
           got.bytes == bytes && got.big_endian == (bytes == 2) &&
           !got.is_float && got.maxval == (bytes == 2 ? 65535u : 255u),
       "%s: header %lux%lux%lu, %lu bytes", name, (unsigned long)got.width,
       (unsigned long)got.height, (unsigned long)got.channels,
       (unsigned long)got.bytes);
    {
        int same = 1;
        size_t y;
        for (y = 0; y < ht && same; ++y)
            for (i = 0; i < h.row_bytes && same; ++i) {
                /* little-endian rows come back big-endian */
                size_t j = (bytes == 2 && !big_endian) ? (i ^ 1) : i;
                same = back[y * got.row_bytes + i] == px[y * pitch + j];
            }
        ok(same, "%s: pixels byte-exact", name);
    }
    free(px);
    free(back);
}

/* ---- files written by libpng itself -------------------------------------- */

static void libpng_write(const char *name, png_uint_32 w, png_uint_32 ht,
                         int depth, int color, int interlace,
                         const png_color *pal, int npal,
                         const png_byte *trns, int ntrns, png_bytep *rows)
{
    FILE *f = fopen(path_of(name), "wb");
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL,
                                            NULL);
    png_infop info = png_create_info_struct(p);
    if (!f || !p || !info || setjmp(png_jmpbuf(p)))
        bail("libpng_write %s", name);
    png_init_io(p, f);
    png_set_IHDR(p, info, w, ht, depth, color, interlace,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (pal)
        png_set_PLTE(p, info, pal, npal);
    if (trns)
        png_set_tRNS(p, info, trns, ntrns, NULL);
    png_write_info(p, info);
    png_write_image(p, rows);
    png_write_end(p, NULL);
    png_destroy_write_struct(&p, &info);
    fclose(f);
}

static void palette_4bit(void)
{
    png_color pal[3] = {{10, 20, 30}, {200, 100, 0}, {1, 2, 3}};
    png_byte trns[3] = {255, 128, 0};
    png_byte r0[2] = {0x01, 0x20}, r1[2] = {0x12, 0x00};
    png_bytep rows[2] = {r0, r1};
    /* 3x2, 4-bit indices: row 0 = 0 1 2, row 1 = 1 2 0. */
    static const unsigned char want[2 * 3 * 4] = {
        10, 20, 30, 255, 200, 100, 0, 128, 1, 2, 3, 0,
        200, 100, 0, 128, 1, 2, 3, 0, 10, 20, 30, 255};
    image_header h;
    unsigned char *got;
    libpng_write("pal4.png", 3, 2, 4, PNG_COLOR_TYPE_PALETTE,
                 PNG_INTERLACE_NONE, pal, 3, trns, 3, rows);
    got = read_png("pal4.png", &h);
    if (!ok(got && h.channels == 4 && h.bytes == 1,
            "4-bit palette with tRNS: read as 8-bit RGBA"))
        diag("  %s", err);
    ok(got && memcmp(got, want, sizeof want) == 0,
       "4-bit palette: colours and alpha from PLTE and tRNS");
    free(got);
}

static void gray_1bit(void)
{
    png_byte r0[1] = {0xA0}, r1[1] = {0x60}; /* 1 0 1 / 0 1 1 */
    png_bytep rows[2] = {r0, r1};
    static const unsigned char want[6] = {255, 0, 255, 0, 255, 255};
    image_header h;
    unsigned char *got;
    libpng_write("gray1.png", 3, 2, 1, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, NULL, 0, NULL, 0, rows);
    got = read_png("gray1.png", &h);
    ok(got && h.channels == 1 && h.bytes == 1 && h.maxval == 255,
       "1-bit gray: read as 8-bit gray");
    ok(got && memcmp(got, want, sizeof want) == 0,
       "1-bit gray: 1 becomes 255");
    free(got);
}

static void interlaced(void)
{
    enum { W = 19, H = 13 };
    png_byte data[H][W * 3];
    png_bytep rows[H];
    image_header h;
    unsigned char *got;
    int y, x;
    for (y = 0; y < H; ++y) {
        for (x = 0; x < W * 3; ++x)
            data[y][x] = (png_byte)(y * 31 + x * 5);
        rows[y] = data[y];
    }
    libpng_write("adam7.png", W, H, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_ADAM7, NULL, 0, NULL, 0, rows);
    got = read_png("adam7.png", &h);
    if (!ok(got && h.width == W && h.height == H && h.channels == 3,
            "Adam7 interlaced: header"))
        diag("  %s", err);
    ok(got && memcmp(got, data, sizeof data) == 0,
       "Adam7 interlaced: pixels byte-exact");
    free(got);
}

/* ---- hostile files -------------------------------------------------------- */

static void refused(const char *name, const char *why)
{
    image_header h;
    unsigned char *got = read_png(name, &h);
    if (!ok(got == NULL && strstr(err, why) != NULL, "%s: refused (%s)", name,
            why))
        diag("  message \"%s\"", err);
    free(got);
}

/* The good file "rt-3-1-le.png" with a forged IHDR (CRC fixed up). */
static void forged_ihdr(const char *name, uint32_t w, uint32_t ht)
{
    size_t n;
    unsigned char *b = get_file("rt-3-1-le.png", &n);
    put32(b + 16, w);
    put32(b + 20, ht);
    put32(b + 29, png_crc32(b + 12, 17));
    put_file(name, b, n);
    free(b);
}

static void hostile(void)
{
    size_t n;
    unsigned char *b = get_file("rt-3-1-le.png", &n);
    put_file("trunc-header.png", b, 20);
    refused("trunc-header.png", "libpng: truncated file");
    put_file("trunc-pixels.png", b, n / 2);
    /* Found by the chunk walk of the header, before any decoding. */
    refused("trunc-pixels.png", "truncated: chunk IDAT");
    put_file("no-iend.png", b, n - 12);
    refused("no-iend.png", "before its IEND chunk");
    b[20] ^= 0x40; /* height, without fixing the CRC */
    put_file("bad-crc.png", b, n);
    refused("bad-crc.png", "CRC error");
    b[20] ^= 0x40;
    b[n / 2] ^= 0xFF; /* inside IDAT */
    put_file("bad-idat.png", b, n);
    refused("bad-idat.png", "chunk IDAT at byte");
    free(b);
    forged_ihdr("huge-width.png", 2000000, 1);
    refused("huge-width.png", "exceeds user limit");
    forged_ihdr("huge-area.png", 100000, 100000);
    refused("huge-area.png", "cannot hold 100000x100000 pixels");
    forged_ihdr("zero.png", 0, 5);
    refused("zero.png", "libpng: ");
    put_file("empty.png", "", 0);
    refused("empty.png", "truncated file");
    put_file("netpbm.png", "P5\n1 1\n255\n\0", 12);
    refused("netpbm.png", "Not a PNG file");
    refused("missing.png", "No such file");
    {
        char d[80];
        (void)snprintf(d, sizeof d, "sub.png");
        if (mkdir(path_of(d), 0755) != 0)
            bail("mkdir");
        refused(d, "is a directory");
    }
}

static void changed_underneath(void)
{
    image_header h, h2;
    unsigned char px[4 * 4 * 3] = {0}, buf[4 * 4 * 3];
    header_of(&h, (image_format)0, 4, 4, 3, 1, 0);
    write_png("moving.png", &h, px, h.row_bytes);
    if (png_io_read_header(path_of("moving.png"), &h2, err, sizeof err))
        bail("moving.png: %s", err);
    header_of(&h, (image_format)0, 4, 3, 3, 1, 0);
    write_png("moving.png", &h, px, h.row_bytes);
    err[0] = '\0';
    ok(png_io_read_pixels(path_of("moving.png"), &h2, buf, h2.row_bytes, err,
                          sizeof err) == -1 &&
           strstr(err, "changed") != NULL,
       "a file changed since its header: refused (%s)", err);
    ok(png_io_read_pixels(path_of("moving.png"), &h2, buf, 3, err,
                          sizeof err) == -1 && strstr(err, "pitch 3"),
       "a pitch shorter than a row: refused (%s)", err);
}

static void write_refusals(void)
{
    image_header h;
    unsigned char px[64] = {0};
    header_of(&h, (image_format)0, 2, 2, 1, 4, 0);
    h.is_float = 1;
    ok(write_png("float.png", &h, px, 8) == -1 && strstr(err, "float"),
       "float samples: refused (%s)", err);
    header_of(&h, (image_format)0, 2, 2, 5, 1, 0);
    ok(write_png("five.png", &h, px, 10) == -1 && strstr(err, "has 5"),
       "5 channels: refused (%s)", err);
    header_of(&h, (image_format)0, 2, 2, 3, 1, 0);
    err[0] = '\0';
    ok(png_io_write_fd(-1, &h, px, 6, err, sizeof err) == -1 &&
           strstr(err, "libpng: ") && strstr(err, strerror(EBADF)),
       "a bad descriptor: libpng's error path, errno's text (%s)", err);
    ok(png_io_sniff("\x89PNG\r\n\x1a\n", 8) && !png_io_sniff("P5\n", 3),
       "png_io_sniff knows the signature");
}

int main(void)
{
    static const size_t chans[4] = {1, 2, 3, 4};
    size_t c;
    scratch_open("png-io");
    plan(0);
    for (c = 0; c < 4; ++c) {
        round_trip(chans[c], 1, 0);
        round_trip(chans[c], 2, 1);
        round_trip(chans[c], 2, 0);
    }
    palette_4bit();
    gray_1bit();
    interlaced();
    hostile();
    changed_underneath();
    write_refusals();
    scratch_close();
    done_testing();
}
