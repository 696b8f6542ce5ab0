/* SPDX-License-Identifier: MIT */
/*
 * fuzz-image-header.c - libFuzzer target for roicopy's netpbm (P5, P6, P7)
 * and raw header parsing (tools/image.c).
 *
 * image_parse_header() only takes a path (it open()s and fstat()s a regular
 * file, so fmemopen cannot stand in): each input is written to one
 * temporary file, unlinked at once and reached as /proc/self/fd/N, so no
 * file is ever left behind.  The whole input is parsed as netpbm; then its
 * first bytes describe a --raw/--depth spec and the same file is parsed as
 * raw.  When a header is accepted and the pixels are small, they are read
 * (with a padded pitch), cropped, compared and given an output header, as
 * roicopy does.  Checks: the sizes the parser reports are consistent and
 * the file holds the pixels it promised.
 */
#include "../tools/image.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Pixels beyond this are not read: the parser's checks are what is fuzzed,
 * not the allocator. */
#define READ_MAX (1u << 20)

static int scratch_fd = -1;
static char scratch_path[64];

static void fail(const char *what)
{
    fprintf(stderr, "fuzz-image-header: %s\n", what);
    abort();
}

static int scratch_open(void)
{
    char tmpl[4096];
    const char *dir = getenv("TMPDIR");
    if (scratch_fd >= 0)
        return 0;
    (void)snprintf(tmpl, sizeof tmpl, "%s/fuzz-image.XXXXXX",
                   dir && *dir ? dir : "/tmp");
    scratch_fd = mkstemp(tmpl);
    if (scratch_fd < 0)
        return -1;
    (void)unlink(tmpl);
    (void)snprintf(scratch_path, sizeof scratch_path, "/proc/self/fd/%d",
                   scratch_fd);
    return 0;
}

static int scratch_fill(const uint8_t *data, size_t size)
{
    size_t off = 0;
    if (ftruncate(scratch_fd, 0) != 0)
        return -1;
    while (off < size) {
        ssize_t k = pwrite(scratch_fd, data + off, size - off, (off_t)off);
        if (k <= 0)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

static void check_sizes(const image_header *h, size_t file_size)
{
    if (h->width < 1 || h->height < 1 || h->channels < 1)
        fail("accepted an empty image");
    if (h->bytes != 1 && h->bytes != 2 && h->bytes != 4)
        fail("sample size is not 1, 2 or 4");
    if (h->pixel_bytes != h->channels * h->bytes ||
        h->row_bytes != h->width * h->pixel_bytes ||
        h->row_bytes / h->width != h->pixel_bytes ||
        h->total_bytes / h->height != h->row_bytes ||
        h->row_bytes > IMAGE_MAX_ROW_BYTES)
        fail("inconsistent sizes");
    if (h->data_offset < 0 || (size_t)h->data_offset > file_size ||
        file_size - (size_t)h->data_offset < h->total_bytes)
        fail("accepted a file that does not hold its pixels");
    if (h->format != IMAGE_RAW && (h->maxval < 1 || h->maxval > 65535))
        fail("accepted a maxval outside 1..65535");
    if (memchr(h->tupltype, '\0', sizeof h->tupltype) == NULL)
        fail("TUPLTYPE not terminated");
}

/* Read, crop, compare and describe the output, as roicopy does. */
static void exercise(const image_header *h, unsigned pad)
{
    char err[IMAGE_ERR_MAX];
    size_t pitch = h->row_bytes + pad, w, ht;
    unsigned char *a, *b;
    image_header out;
    image_diff d;
    if (h->total_bytes > READ_MAX || pitch * h->height > 2 * READ_MAX)
        return;
    a = (unsigned char *)calloc(1, pitch * h->height);
    b = (unsigned char *)calloc(1, h->total_bytes);
    if (!a || !b) {
        free(a);
        free(b);
        return;
    }
    if (image_read_pixels(scratch_path, h, a, pitch, err, sizeof err) == 0) {
        /* The crop of the whole image, tightly packed, equals the file. */
        image_crop(b, h->row_bytes, a, pitch, 0, 0, h->width, h->height,
                   h->pixel_bytes);
        if (image_compare(h, a, pitch, b, h->row_bytes, &d) != 0)
            fail("a full crop differs from its source");
        if (h->total_bytes) {
            b[h->total_bytes - 1] ^= 1;
            if (image_compare(h, a, pitch, b, h->row_bytes, &d) != 1 ||
                d.y != h->height - 1 || d.x != h->width - 1)
                fail("image_compare missed the last byte");
        }
    }
    w = h->width > 1 ? h->width / 2 : 1;
    ht = h->height > 1 ? h->height / 2 : 1;
    (void)image_output_header(h, w, ht, (image_format)(pad % 5), &out, err,
                              sizeof err);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[IMAGE_ERR_MAX];
    image_header h;
    image_raw_spec raw;
    if (scratch_open() != 0 || scratch_fill(data, size) != 0)
        return 0;
    err[0] = '\0';
    if (image_parse_header(scratch_path, NULL, &h, err, sizeof err) == 0) {
        check_sizes(&h, size);
        exercise(&h, size ? data[size - 1] % 9 : 0);
    } else if (err[0] == '\0' || !memchr(err, '\0', sizeof err)) {
        fail("netpbm: failure without a message");
    }
    if (size >= 4) {
        /* --raw WxHxC --depth D from the first four bytes. */
        static const int depths[4] = {8, 16, 32, 24};
        raw.width = (size_t)data[0] + 1;
        raw.height = (size_t)data[1] + 1;
        raw.channels = (size_t)(data[2] % 5);
        raw.depth = depths[data[3] % 4];
        err[0] = '\0';
        if (image_parse_header(scratch_path, &raw, &h, err, sizeof err) == 0) {
            check_sizes(&h, size);
            if (h.total_bytes != size)
                fail("raw: size differs from the file");
            exercise(&h, data[3] % 7);
        } else if (err[0] == '\0') {
            fail("raw: failure without a message");
        }
    }
    return 0;
}
