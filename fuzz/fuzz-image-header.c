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
 * roicopy does.  Checks: the sizes the parser reports are consistent, the
 * file holds the pixels it promised, and an accepted PAM's tuple type fits
 * its DEPTH and MAXVAL as libnetpbm requires.  The input, as text, also
 * goes through the extension rule, the message escaper (no control byte
 * may come out) and the JSON string writer (valid UTF-8 must come out).
 */
#include "../tools/image.h"
#include "scratch-file.h"

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

/* libnetpbm's requirements of the tuple types it knows. */
static void check_tupltype(const image_header *h)
{
    const char *t = h->tupltype;
    if (h->format != IMAGE_PAM)
        return;
    if ((!strcmp(t, "GRAYSCALE_ALPHA") && h->channels < 2) ||
        (!strcmp(t, "RGB") && h->channels < 3) ||
        (!strcmp(t, "RGB_ALPHA") && h->channels < 4) ||
        (!strcmp(t, "BLACKANDWHITE") && h->maxval != 1))
        fail("accepted a tuple type that does not fit DEPTH or MAXVAL");
}

/* Is s[0..n) valid UTF-8 (RFC 3629)? */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0, k, len;
    while (i < n) {
        unsigned c = s[i];
        unsigned long cp;
        if (c < 0x80) {
            ++i;
            continue;
        }
        len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        if (c < 0xc2 || c > 0xf4 || i + len > n)
            return 0;
        cp = c & (0x7f >> len);
        for (k = 1; k < len; ++k) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return 0;
        i += len;
    }
    return 1;
}

/* The input as a file name or tuple type: untrusted text. */
static void exercise_text(const uint8_t *data, size_t size)
{
    static char text[1024], esc[256];
    static char json[8 * 1024 + 3];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1, i;
    FILE *f;
    memcpy(text, data, n);
    text[n] = '\0';
    (void)image_format_for_path(text);
    image_escape(text, esc, sizeof esc);
    for (i = 0; esc[i]; ++i)
        if ((unsigned char)esc[i] < 0x20 || esc[i] == 0x7f ||
            ((unsigned char)esc[i] == 0xc2 &&
             (unsigned char)esc[i + 1] >= 0x80 &&
             (unsigned char)esc[i + 1] < 0xa0))
            fail("a control character came out of image_escape");
    if (i >= sizeof esc)
        fail("image_escape overran its buffer");
    f = fmemopen(json, sizeof json - 1, "w");
    if (!f)
        return;
    image_json_string(f, text);
    fflush(f);
    i = (size_t)ftell(f);
    fclose(f);
    if (i < 2 || json[0] != '"' || json[i - 1] != '"' ||
        !valid_utf8((const unsigned char *)json, i))
        fail("image_json_string wrote an invalid JSON string");
    for (n = 0; n < i; ++n)
        if ((unsigned char)json[n] < 0x20)
            fail("a raw control byte in a JSON string");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[IMAGE_ERR_MAX];
    image_header h;
    image_raw_spec raw;
    if (scratch_open(&scratch_fd, "fuzz-image", scratch_path, sizeof scratch_path) != 0 ||
        scratch_fill(scratch_fd, data, size) != 0)
        return 0;
    err[0] = '\0';
    exercise_text(data, size);
    if (image_parse_header(scratch_path, NULL, &h, err, sizeof err) == 0) {
        check_sizes(&h, size);
        check_tupltype(&h);
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
