/* SPDX-License-Identifier: MIT */
/*
 * png-io.c - roicopy's PNG reader and writer, through libpng (see png-io.h).
 *
 * libpng reports errors by longjmp()ing out of the failing call: each entry
 * point keeps everything it must free in one context struct reached through
 * a pointer, so nothing that setjmp() could roll back is lost, and the one
 * cleanup path frees it all.
 */
#include "png-io.h"
#include "say.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <png.h>

/* Ancillary chunks (text, ICC profiles) are skipped past this size: a
 * decompression bomb in a zTXt chunk is not our pixels' business. */
#define PNG_IO_CHUNK_MAX (8UL << 20)
/* deflate cannot compress better than 1032:1; with slack for headers. */
#define PNG_IO_DEFLATE_RATIO 1032ULL

typedef struct png_ctx {
    png_structp png;
    png_infop info;
    FILE *f;       /* reading */
    int fd;        /* writing */
    png_bytep *rows;
    unsigned char *swap_row;
    char msg[IMAGE_ERR_MAX];
    char warning[IMAGE_ERR_MAX / 2]; /* the last one, for context */
    unsigned long long file_size;
} png_ctx;

int png_io_sniff(const void *head, size_t n)
{
    return n >= 8 && png_sig_cmp((png_const_bytep)head, 0, 8) == 0;
}

/* ---- libpng callbacks --------------------------------------------------- */

static void on_error(png_structp png, png_const_charp msg)
{
    png_ctx *c = (png_ctx *)png_get_error_ptr(png);
    /* libpng says why an IHDR is invalid in warnings just before the
     * error ("Image width exceeds user limit in IHDR"): keep the why. */
    (void)snprintf(c->msg, sizeof c->msg, "libpng: %.200s%s%s%s",
                   msg ? msg : "error", c->warning[0] ? " (" : "",
                   c->warning, c->warning[0] ? ")" : "");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    /* Warnings (a bad ancillary CRC, a skipped chunk) are not errors: the
     * pixels are still right.  Kept silent, the last one explains an
     * error that follows. */
    png_ctx *c = (png_ctx *)png_get_error_ptr(png);
    (void)snprintf(c->warning, sizeof c->warning, "%.200s",
                   msg ? msg : "warning");
}

static void on_read(png_structp png, png_bytep data, size_t n)
{
    png_ctx *c = (png_ctx *)png_get_io_ptr(png);
    if (fread(data, 1, n, c->f) != n)
        png_error(png, ferror(c->f) ? strerror(errno)
                                    : "truncated file (unexpected end of data)");
}

static void on_write(png_structp png, png_bytep data, size_t n)
{
    png_ctx *c = (png_ctx *)png_get_io_ptr(png);
    while (n > 0) {
        ssize_t k = write(c->fd, data, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            png_error(png, k < 0 ? strerror(errno) : "write returned 0");
        data += k;
        n -= (size_t)k;
    }
}

static void on_flush(png_structp png) { (void)png; }

static void ctx_free(png_ctx *c)
{
    if (c->png)
        png_destroy_read_struct(&c->png, c->info ? &c->info : NULL, NULL);
    if (c->f)
        fclose(c->f);
    free(c->rows);
    free(c->swap_row);
}

static void ctx_free_write(png_ctx *c)
{
    if (c->png)
        png_destroy_write_struct(&c->png, c->info ? &c->info : NULL);
    free(c->rows);
    free(c->swap_row);
}

/* ---- reading ------------------------------------------------------------ */

static int open_file(png_ctx *c, const char *path, char *err, size_t errsz)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        say(err, errsz, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        say(err, errsz, S_ISDIR(st.st_mode) ? "is a directory, not an image "
                                              "file"
                                            : "is not a regular file");
        close(fd);
        return -1;
    }
    c->file_size = (unsigned long long)st.st_size;
    c->f = fdopen(fd, "rb");
    if (!c->f) {
        say(err, errsz, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    return 0;
}

/* Create the read struct and read up to the pixels, with the transforms
 * that give 8 or 16 bits of gray, gray+alpha, RGB or RGBA.  The caller has
 * called setjmp(). */
static void read_info(png_ctx *c)
{
    int color, depth;
    png_set_read_fn(c->png, c, on_read);
    png_set_user_limits(c->png, PNG_IO_MAX_DIM, PNG_IO_MAX_DIM);
    png_set_chunk_malloc_max(c->png, PNG_IO_CHUNK_MAX);
#ifdef PNG_HANDLE_AS_UNKNOWN_SUPPORTED
    /* roicopy copies pixels and nothing else: every chunk but IHDR, PLTE,
     * tRNS, IDAT and IEND (num_chunks -1) is skipped unread.  libpng 1.6
     * allocates a text chunk's declared length before it reads a byte of
     * it, past the chunk malloc limit: an 84-byte file whose zTXt claims
     * 1.8 GB cost that much memory (found by fuzz-png-tiff). */
    png_set_keep_unknown_chunks(c->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
#endif
    png_read_info(c->png, c->info);
    color = png_get_color_type(c->png, c->info);
    depth = png_get_bit_depth(c->png, c->info);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(c->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(c->png);
    if (png_get_valid(c->png, c->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(c->png);
    (void)png_set_interlace_handling(c->png);
    png_read_update_info(c->png, c->info);
}

/* The file's header as an image_header; -1 when it is not what the
 * transforms promise or too large to be real. */
static int fill_header(png_ctx *c, image_header *h, char *err, size_t errsz)
{
    png_uint_32 w = png_get_image_width(c->png, c->info);
    png_uint_32 ht = png_get_image_height(c->png, c->info);
    int depth = png_get_bit_depth(c->png, c->info);
    unsigned long long raw, bound;
    memset(h, 0, sizeof *h);
    h->width = w;
    h->height = ht;
    h->channels = png_get_channels(c->png, c->info);
    h->bytes = depth == 16 ? 2 : 1;
    h->big_endian = h->bytes == 2;
    h->maxval = depth == 16 ? 65535 : 255;
    if ((depth != 8 && depth != 16) || h->channels < 1 || h->channels > 4) {
        say(err, errsz, "unsupported PNG layout after expansion: %d bits, "
            "%lu channels", depth, (unsigned long)h->channels);
        return -1;
    }
    if (image_compute_sizes(h, err, errsz))
        return -1;
    if (png_get_rowbytes(c->png, c->info) != h->row_bytes) {
        say(err, errsz, "libpng rows are %lu bytes, expected %lu",
            (unsigned long)png_get_rowbytes(c->png, c->info),
            (unsigned long)h->row_bytes);
        return -1;
    }
    /* The decompressed stream is at least one filter byte per row plus the
     * packed pixels (fewer bits than h says for palette and low-depth gray:
     * count one bit a pixel, the least a PNG can store). */
    raw = (unsigned long long)ht * (1ULL + ((unsigned long long)w + 7) / 8);
    bound = PNG_IO_DEFLATE_RATIO * c->file_size + 65536ULL;
    if (raw > bound) {
        say(err, errsz, "a file of %llu bytes cannot hold %lux%lu pixels "
            "(deflate compresses at most %llu:1): truncated or forged",
            c->file_size, (unsigned long)w, (unsigned long)ht,
            PNG_IO_DEFLATE_RATIO);
        return -1;
    }
    return 0;
}

/* Open path and read its header into h (the png struct stays open in c
 * for png_io_read_pixels).  Returns 0 or -1. */
static int begin_read(png_ctx *c, const char *path, image_header *h,
                      char *err, size_t errsz)
{
    memset(c, 0, sizeof *c);
    if (open_file(c, path, err, errsz))
        return -1;
    c->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, on_error,
                                    on_warning);
    if (!c->png || !(c->info = png_create_info_struct(c->png))) {
        say(err, errsz, "libpng: out of memory");
        return -1;
    }
    if (setjmp(png_jmpbuf(c->png))) {
        say(err, errsz, "%s", c->msg);
        return -1;
    }
    read_info(c);
    return fill_header(c, h, err, errsz);
}

/* PNG's CRC-32 (ISO 3309), one byte at a time from a table. */
static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    static int ready;
    size_t i;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        uint32_t t[256], c;
        int k, b;
        for (k = 0; k < 256; ++k) {
            for (c = (uint32_t)k, b = 0; b < 8; ++b)
                c = c & 1 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
            t[k] = c;
        }
        memcpy(table, t, sizeof t); /* the same bytes on every thread */
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    for (i = 0; i < n; ++i)
        crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/* A chunk type is 4 ASCII letters (PNG 5.4). */
static int chunk_type_ok(const char *t)
{
    int i;
    for (i = 0; i < 4; ++i)
        if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')))
            return 0;
    return 1;
}

/* Every chunk from the signature to IEND: its type 4 letters (IHDR the
 * first alone), its length within the file, its CRC right, at least one
 * IDAT and the IDATs consecutive (PNG 11.2.4:
 * libpng stops with "Not enough image data" at a chunk between two IDATs
 * of an unfinished stream, and calls an IDAT after another chunk "Too
 * many IDATs found" once the stream is done, an error it only warns of
 * when reading).  No decompression: this costs one
 * read of the file, so every input is checked before the first CUDA call;
 * a zlib stream that is corrupt but has right CRCs is found only when the
 * pixels are decoded. */
static int check_chunks(png_ctx *c, char *err, size_t errsz)
{
    unsigned char head[8], buf[65536];
    unsigned long long at = 8, broke_at = 0;
    unsigned long nidat = 0;
    char broke[5] = ""; /* the chunk that ended the run of IDATs */
    if (fseek(c->f, 8, SEEK_SET) != 0) {
        say(err, errsz, "%s", strerror(errno));
        return -1;
    }
    for (;;) {
        uint32_t len, crc, left;
        char type[5];
        if (fread(head, 1, 8, c->f) != 8) {
            say(err, errsz, "truncated: the file ends after %llu bytes, "
                "before its IEND chunk", c->file_size);
            return -1;
        }
        len = be32(head);
        memcpy(type, head + 4, 4);
        type[4] = '\0';
        if (len > 0x7FFFFFFFU || at + 12 + len > c->file_size) {
            say(err, errsz, "truncated: chunk %.4s at byte %llu claims %lu "
                "bytes, past the end of the file (%llu bytes)",
                image_escape(type, (char[32]){0}, 32), at,
                (unsigned long)len, c->file_size);
            return -1;
        }
        /* What png_read_end() refuses after the pixels, so only once
         * they are decoded: a type not of letters, a second IHDR
         * (before the IDATs, png_read_info() has refused them). */
        if (!chunk_type_ok(type) || (at > 8 && !memcmp(type, "IHDR", 4))) {
            say(err, errsz, "chunk %s at byte %llu: %s",
                image_escape(type, (char[32]){0}, 32), at,
                chunk_type_ok(type) ? "out of place (a PNG has one IHDR, "
                                      "its first chunk)"
                                    : "invalid chunk type (4 ASCII "
                                      "letters)");
            return -1;
        }
        crc = crc_update(0xFFFFFFFFU, head + 4, 4);
        for (left = len; left > 0;) {
            size_t k = left < sizeof buf ? left : sizeof buf;
            if (fread(buf, 1, k, c->f) != k) {
                say(err, errsz, "%s", ferror(c->f) ? strerror(errno)
                                                   : "the file shrank");
                return -1;
            }
            crc = crc_update(crc, buf, k);
            left -= (uint32_t)k;
        }
        if (fread(head, 1, 4, c->f) != 4 || be32(head) != (crc ^ 0xFFFFFFFFU)) {
            say(err, errsz, "chunk %s at byte %llu: CRC error",
                image_escape(type, (char[32]){0}, 32), at);
            return -1;
        }
        if (memcmp(type, "IDAT", 4) != 0) {
            if (nidat > 0 && !broke[0]) {
                memcpy(broke, type, sizeof broke);
                broke_at = at;
            }
        } else if (broke[0]) {
            say(err, errsz, "chunk IDAT at byte %llu follows chunk %s at "
                "byte %llu, after the image data: the PNG specification "
                "requires consecutive IDAT chunks", at,
                image_escape(broke, (char[32]){0}, 32), broke_at);
            return -1;
        } else {
            ++nidat;
        }
        if (!memcmp(type, "IEND", 4))
            break;
        at += 12ULL + len;
    }
    if (nidat == 0) {
        say(err, errsz, "no IDAT chunk: the file has no pixel data");
        return -1;
    }
    return 0;
}

int png_io_read_header(const char *path, image_header *h, char *err,
                       size_t errsz)
{
    png_ctx c;
    int rc = begin_read(&c, path, h, err, errsz);
    if (rc == 0)
        rc = check_chunks(&c, err, errsz);
    ctx_free(&c);
    return rc;
}

static int same_geometry(const image_header *a, const image_header *b)
{
    return a->width == b->width && a->height == b->height &&
           a->channels == b->channels && a->bytes == b->bytes;
}

/* Decode every row (all passes of an interlaced file) and the chunks
 * after the pixels.  Its own function so that setjmp() has no local that
 * changes after it. */
static int decode_rows(png_ctx *c, char *err, size_t errsz)
{
    if (setjmp(png_jmpbuf(c->png))) {
        say(err, errsz, "%s", c->msg);
        return -1;
    }
    png_read_image(c->png, c->rows);
    png_read_end(c->png, NULL);
    return 0;
}

int png_io_read_pixels(const char *path, const image_header *h, void *dst,
                       size_t dst_pitch, char *err, size_t errsz)
{
    png_ctx c;
    image_header now;
    size_t y;
    int rc = -1;
    if (dst_pitch < h->row_bytes) {
        say(err, errsz, "pitch %lu is less than a row (%lu bytes)",
            (unsigned long)dst_pitch, (unsigned long)h->row_bytes);
        return -1;
    }
    if (begin_read(&c, path, &now, err, errsz))
        goto out;
    if (!same_geometry(h, &now)) {
        say(err, errsz, "the file changed since its header was read");
        goto out;
    }
    c.rows = (png_bytep *)malloc(h->height * sizeof *c.rows);
    if (!c.rows) {
        say(err, errsz, "out of memory for %lu row pointers",
            (unsigned long)h->height);
        goto out;
    }
    for (y = 0; y < h->height; ++y)
        c.rows[y] = (png_bytep)dst + y * dst_pitch;
    rc = decode_rows(&c, err, errsz);
out:
    ctx_free(&c);
    return rc;
}

/* ---- writing ------------------------------------------------------------ */

static void write_rows(png_ctx *c, const image_header *h,
                       const unsigned char *pixels, size_t pitch)
{
    size_t y, i;
    for (y = 0; y < h->height; ++y) {
        const unsigned char *r = pixels + y * pitch;
        if (c->swap_row && h->bytes == 2 && !h->big_endian) {
            for (i = 0; i + 1 < h->row_bytes; i += 2) {
                c->swap_row[i] = r[i + 1];
                c->swap_row[i + 1] = r[i];
            }
            r = c->swap_row;
        } else if (c->swap_row) {
            memcpy(c->swap_row, r, h->row_bytes);
            r = c->swap_row;
        }
        /* netpbm's maxval 15 or 1023: to the full 8 or 16 bits, as
         * pnmtopng and pamdepth do (PNG has no maxval). */
        if (c->swap_row)
            image_rescale_row(c->swap_row, h->width * h->channels, h, 1);
        png_write_row(c->png, r);
    }
}

/* The libpng calls, under one setjmp() with no local that changes. */
static int encode(png_ctx *c, const image_header *h, const void *pixels,
                  size_t pitch, char *err, size_t errsz)
{
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY,
                                 PNG_COLOR_TYPE_GRAY_ALPHA,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
    if (setjmp(png_jmpbuf(c->png))) {
        say(err, errsz, "%s", c->msg);
        return -1;
    }
    png_set_write_fn(c->png, c, on_write, on_flush);
    png_set_IHDR(c->png, c->info, (png_uint_32)h->width,
                 (png_uint_32)h->height, (int)h->bytes * 8,
                 types[h->channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(c->png, c->info);
    write_rows(c, h, (const unsigned char *)pixels, pitch);
    png_write_end(c->png, NULL);
    return 0;
}

int png_io_write_fd(int fd, const image_header *h, const void *pixels,
                    size_t pitch, char *err, size_t errsz)
{
    png_ctx c;
    int rc = -1;
    if (h->is_float || (h->bytes != 1 && h->bytes != 2)) {
        say(err, errsz, "PNG cannot hold %s samples (8 or 16-bit integers "
            "only)", h->is_float ? "32-bit float" : "these");
        return -1;
    }
    if (h->channels < 1 || h->channels > 4) {
        say(err, errsz, "PNG holds 1 to 4 channels, the image has %lu",
            (unsigned long)h->channels);
        return -1;
    }
    if (h->width > PNG_UINT_31_MAX || h->height > PNG_UINT_31_MAX) {
        say(err, errsz, "%lux%lu is too large for PNG",
            (unsigned long)h->width, (unsigned long)h->height);
        return -1;
    }
    memset(&c, 0, sizeof c);
    c.fd = fd;
    /* libpng writes 16-bit samples big-endian from big-endian rows: swap a
     * copy of each row when the samples are in the other order, or when
     * they are rescaled. */
    if (((h->bytes == 2 && !h->big_endian) || image_needs_rescale(h)) &&
        !(c.swap_row = (unsigned char *)malloc(h->row_bytes))) {
        say(err, errsz, "out of memory");
        return -1;
    }
    c.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c, on_error,
                                    on_warning);
    if (!c.png || !(c.info = png_create_info_struct(c.png)))
        say(err, errsz, "libpng: out of memory");
    else
        rc = encode(&c, h, pixels, pitch, err, errsz);
    ctx_free_write(&c);
    return rc;
}
