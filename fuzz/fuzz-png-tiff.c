/* SPDX-License-Identifier: MIT */
/*
 * fuzz-png-tiff.c - libFuzzer target for roicopy's PNG and TIFF wrappers
 * (tools/png-io.c, tools/tiff-io.c).
 *
 * The readers take a path (they open() and fstat() a regular file, as
 * roicopy does): each input is written to one temporary file, unlinked at
 * once and reached as /proc/self/fd/N.  Every input goes through both
 * readers (each must refuse what is not its format, with a message); a
 * header that is accepted is checked for consistent sizes, and when the
 * pixels are small they are decoded with a padded pitch whose padding must
 * stay untouched, then written back through the writers and read again:
 * the round trip must give the same pixels.  TIFF: page 0, and page 1
 * when the last byte is odd.  Compiled with whichever codecs are present (HAVE_PNG, HAVE_TIFF).
 */
#include "../tools/image.h"
#include "scratch-file.h"
#ifdef HAVE_PNG
#include "../tools/png-io.h"
#endif
#ifdef HAVE_TIFF
#include "../tools/tiff-io.h"
#endif

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Pixels beyond this are not decoded: the wrappers' checks are what is
 * fuzzed, not the allocator. */
#define READ_MAX (1u << 20)
#define PAD 11

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void fail(const char *what);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz-png-tiff: %s\n", what);
    abort();
}

static void check_header(const image_header *h)
{
    if (h->width < 1 || h->height < 1 || h->channels < 1 || h->channels > 4)
        fail("accepted an empty image or more than 4 channels");
    if (h->bytes != 1 && h->bytes != 2 && h->bytes != 4)
        fail("sample size is not 1, 2 or 4");
    if ((h->bytes == 4) != (h->is_float != 0))
        fail("float flag and sample size disagree");
    if (h->pixel_bytes != h->channels * h->bytes ||
        h->row_bytes != h->width * h->pixel_bytes ||
        h->total_bytes / h->height != h->row_bytes)
        fail("inconsistent sizes");
}

typedef int (*read_fn)(const char *path, unsigned page, const image_header *h,
                       void *dst, size_t pitch, char *err, size_t errsz);
typedef int (*write_fn)(int fd, const image_header *h, const void *px,
                        size_t pitch, char *err, size_t errsz);
typedef int (*header_fn)(const char *path, unsigned page, image_header *h,
                         char *err, size_t errsz);

/* Decode with a padded pitch; 0 and the pixels, or -1. */
static int decode(read_fn rd, const char *path, unsigned page,
                  const image_header *h, unsigned char **out)
{
    char err[IMAGE_ERR_MAX] = "";
    size_t pitch = h->row_bytes + PAD, y, k;
    unsigned char *buf = (unsigned char *)malloc(pitch * h->height);
    *out = NULL;
    if (!buf)
        return -1;
    memset(buf, 0x5A, pitch * h->height);
    if (rd(path, page, h, buf, pitch, err, sizeof err) != 0) {
        if (err[0] == '\0')
            fail("pixels refused without a message");
        free(buf);
        return -1;
    }
    for (y = 0; y < h->height; ++y)
        for (k = h->row_bytes; k < pitch; ++k)
            if (buf[y * pitch + k] != 0x5A)
                fail("the reader wrote into the pitch padding");
    *out = buf;
    return 0;
}

static void exercise(header_fn hd, read_fn rd, write_fn wr, unsigned page)
{
    char err[IMAGE_ERR_MAX] = "";
    image_header h, h2;
    unsigned char *a = NULL, *b = NULL;
    image_diff d;
    if (hd(in_path, page, &h, err, sizeof err) != 0) {
        if (err[0] == '\0' || !memchr(err, '\0', sizeof err))
            fail("header refused without a message");
        return;
    }
    check_header(&h);
    if (h.total_bytes > READ_MAX || decode(rd, in_path, page, &h, &a) != 0)
        return;
    /* Write what was read, read it back: the same pixels. */
    if (scratch_open(&out_fd, "fuzz-png-tiff", out_path, sizeof out_path) != 0 ||
        ftruncate(out_fd, 0) != 0 || lseek(out_fd, 0, SEEK_SET) != 0) {
        free(a);
        return;
    }
    if (wr(out_fd, &h, a, h.row_bytes + PAD, err, sizeof err) != 0)
        fail("cannot write back what was read");
    if (hd(out_path, 0, &h2, err, sizeof err) != 0 ||
        decode(rd, out_path, 0, &h2, &b) != 0)
        fail("cannot read back what was written");
    if (h2.width != h.width || h2.height != h.height ||
        h2.channels != h.channels || h2.bytes != h.bytes)
        fail("the round trip changed the geometry");
    h2.big_endian = h.big_endian;
    if (image_compare(&h, a, h.row_bytes + PAD, b, h.row_bytes + PAD, &d))
        fail("the round trip changed the pixels");
    free(a);
    free(b);
}

#ifdef HAVE_PNG
static int png_header(const char *path, unsigned page, image_header *h,
                      char *err, size_t errsz)
{
    (void)page;
    return png_io_read_header(path, h, err, errsz);
}

static int png_read(const char *path, unsigned page, const image_header *h,
                    void *dst, size_t pitch, char *err, size_t errsz)
{
    (void)page;
    return png_io_read_pixels(path, h, dst, pitch, err, errsz);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Page 0 always; page 1 too when the last byte is odd. */
    unsigned pages = size && (data[size - 1] & 1) ? 2 : 1;
    if (scratch_open(&in_fd, "fuzz-png-tiff", in_path, sizeof in_path) != 0 ||
        scratch_fill(in_fd, data, size) != 0)
        return 0;
#ifdef HAVE_PNG
    exercise(png_header, png_read, png_io_write_fd, 0);
#endif
#ifdef HAVE_TIFF
    {
        unsigned p;
        for (p = 0; p < pages; ++p)
            exercise(tiff_io_read_header, tiff_io_read_pixels,
                     tiff_io_write_fd, p);
    }
#endif
    (void)pages;
    (void)exercise; /* built without either codec: nothing to fuzz */
    return 0;
}
