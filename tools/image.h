/* SPDX-License-Identifier: MIT */
/*
 * image.h - roicopy's image formats: the header of an image, the format
 * table and the codec interface every format implements (netpbm.c built
 * in; png-io.c and tiff-io.c registered), reading and writing whole
 * images through it.
 *
 * Reading is split in two so that every input can be validated before any
 * memory is allocated or any CUDA call is made:
 *   image_parse_header()  opens the file, checks the header, the sizes and
 *                         that the file holds all the pixel bytes;
 *   image_read_pixels()   reads the pixels straight into the caller's buffer
 *                         (pinned, with its own row pitch).
 * Samples stay in the file's byte order in memory (netpbm: big-endian;
 * raw: host order); image_write_atomic() converts when the output format
 * wants the other order.  Functions return 0, or -1 with a sentence (not
 * naming the file: the caller prefixes it) in err.
 */
#ifndef ROICOPY_IMAGE_H
#define ROICOPY_IMAGE_H

#include <stddef.h>
#include <stdio.h>

/* Escaping and the output file are modules of their own (escape.c,
 * output.c), below this one; every user of image.h has them. */
#include "escape.h"
#include "output.h"

#define IMAGE_ERR_MAX 512
/* libnetpbm keeps 256 bytes of tuple type. */
#define IMAGE_TUPLTYPE_MAX 256
/* Dimensions must fit in an int; one row must fit in 2^31 bytes, the limit
 * of the row arithmetic in netpbm and of a signed 32-bit pitch. */
#define IMAGE_MAX_DIM 2147483647UL
#define IMAGE_MAX_ROW_BYTES 2147483647UL

typedef enum image_format {
    IMAGE_PGM = 1, /* P5 */
    IMAGE_PPM,     /* P6 */
    IMAGE_PAM,     /* P7 */
    IMAGE_RAW,     /* headerless, described by --raw and --depth */
    IMAGE_PNG,     /* through libpng (tools/png-io.c), when built with it */
    IMAGE_TIFF     /* through libtiff (tools/tiff-io.c), when built with it */
} image_format;

typedef struct image_header {
    image_format format;
    size_t width, height, channels;
    size_t bytes;      /* per sample: 1, 2 or 4 */
    int is_float;      /* raw --depth 32 */
    int big_endian;    /* samples in memory are big-endian (netpbm 16-bit) */
    unsigned maxval;   /* 1..65535; raw: 255 or 65535 (0 for float) */
    char tupltype[IMAGE_TUPLTYPE_MAX]; /* PAM TUPLTYPE, "" when none */
    long data_offset;  /* where the pixels start in the file */
    unsigned page;     /* TIFF: the page read (--page), else 0 */
    size_t pixel_bytes; /* channels * bytes */
    size_t row_bytes;   /* width * pixel_bytes */
    size_t total_bytes; /* height * row_bytes */
} image_header;

/* What --raw and --depth say about a headerless file. */
typedef struct image_raw_spec {
    size_t width, height, channels;
    int depth; /* 8, 16 or 32 (float) */
} image_raw_spec;

/* Formats live in one table in image.c (name, extensions, what samples
 * each can hold, its header writer); these functions read it. */

/* "pgm", "ppm", "pam", "raw" -> format, or 0 when unknown. */
image_format image_format_from_name(const char *name);
const char *image_format_name(image_format f);
/* The usual file extension of a format, without the dot. */
const char *image_format_ext(image_format f);

/* The table's formats in its order: the i-th, or 0 past the last. */
image_format image_format_nth(size_t i);

/* Extension j (0, 1, ...) of format f without the dot; NULL past its
 * last. */
const char *image_format_ext_nth(image_format f, size_t j);

/* The package that brings the library of format f ("libpng-dev"); NULL
 * for a built-in format. */
const char *image_format_package(image_format f);

/* The extension rule: the format an output named path gets when no
 * --format is given (".pgm" .ppm .pam .raw, any ASCII case), or 0 when the
 * extension is missing or unknown (the input's format is kept). */
image_format image_format_for_path(const char *path);

/* Can format f hold in's samples (channels, size, float)? */
int image_format_holds(image_format f, const image_header *in);

/* The names of the formats that can hold in's samples, "pam or raw". */
void image_formats_holding(const image_header *in, char *buf, size_t n);

/* A format's code.  image.c's format table has a row for each format;
 * netpbm's codec (tools/netpbm.c) is built in, the codecs of libraries
 * (tools/png-io.c, tools/tiff-io.c) are linked only where the library is
 * and tools/formats.c registers them (roicopy_register_codecs).  Until a
 * codec is registered, its format fails with "built without PNG support
 * (install libpng-dev and configure again)". */
typedef struct image_codec_ops {
    int (*sniff)(const void *head, size_t n);
    int (*read_header)(const char *path, unsigned page, image_header *h,
                       char *err, size_t errsz);
    int (*read_pixels)(const char *path, const image_header *h, void *dst,
                       size_t dst_pitch, char *err, size_t errsz);
    /* fd: a new file (or standard output) at offset 0; the caller syncs,
     * closes and renames. */
    int (*write_fd)(int fd, const image_header *h, const void *pixels,
                    size_t pitch, char *err, size_t errsz);
    /* Optional (NULL: the image is decoded whole): rows [y0, y0 + nrows)
     * alone, row y0 at dst. */
    int (*read_span)(const char *path, const image_header *h, size_t y0,
                     size_t nrows, void *dst, size_t dst_pitch, char *err,
                     size_t errsz);
} image_codec_ops;

/* Register the code of format f (a row without a built-in codec: PNG,
 * TIFF); -1 for other formats. */
int image_set_codec(image_format f, const image_codec_ops *ops);

/* 1 when format f can be read and written by this program. */
int image_format_built(image_format f);

/* 1 when h's integer samples must be rescaled to fill their 8 or 16 bits
 * (a maxval other than 255 or 65535) for a format without a maxval (PNG,
 * TIFF). */
int image_needs_rescale(const image_header *h);

/* One sample of `bytes` (1 or 2) bytes at p, big-endian or host order
 * as big_endian says (2-byte ones).  Inline: the codecs read samples too,
 * and image.c calls them, never they it (tests/roicopy/tools-no-cycle.sh). */
static inline unsigned long image_sample(const unsigned char *p, size_t bytes,
                                         int big_endian)
{
    if (bytes == 1)
        return p[0];
    return big_endian ? (unsigned long)p[0] << 8 | p[1]
                      : (unsigned long)p[1] << 8 | p[0];
}

/* Rescale the n samples of row (h->bytes each, big-endian or host order
 * as big_endian says) from 0..h->maxval to 0..255 or 0..65535, rounding
 * as pamdepth and pnmtopng do.  Samples above maxval are refused when a
 * file is read (netpbm.c); one passed here anyway becomes the top. */
void image_rescale_row(unsigned char *row, size_t n, const image_header *h,
                       int big_endian);

/* Fill sizes (pixel, row, total bytes) from width, height, channels and
 * bytes with overflow checks and the row limit. */
int image_compute_sizes(image_header *h, char *err, size_t errsz);

/* Parse and validate the header of path.  raw == NULL: the file is netpbm;
 * otherwise a raw file whose size must be exactly what raw describes.
 * path "-" is standard input, read once into an unlinked temporary file;
 * any other path must be a regular file, checked before it is opened (a
 * FIFO never blocks the call). */
int image_parse_header(const char *path, const image_raw_spec *raw,
                       image_header *h, char *err, size_t errsz);

/* image_parse_header, and page `page` of a multi-page file (TIFF; other
 * formats have only page 0).  Without raw, the format is known by its
 * first bytes (a PNG named .dat is still a PNG). */
int image_parse_input(const char *path, const image_raw_spec *raw,
                      unsigned page, image_header *h, char *err,
                      size_t errsz);

/* Read the pixels of a file whose header was parsed into h, row by row
 * into dst (dst_pitch >= h->row_bytes bytes between rows). */
int image_read_pixels(const char *path, const image_header *h, void *dst,
                      size_t dst_pitch, char *err, size_t errsz);

/* Read only rows [y0, y0 + nrows) of the image (the rows an ROI needs)
 * to where they belong in dst: row y at dst + y * dst_pitch.  netpbm and
 * raw files are read with pread() of that span alone; PNG and TIFF are
 * decoded whole. */
int image_read_rows(const char *path, const image_header *h, size_t y0,
                    size_t nrows, void *dst, size_t dst_pitch, char *err,
                    size_t errsz);

/* 1 when h's format reads rows alone (image_read_span): netpbm and raw;
 * 0 for PNG and TIFF. */
int image_can_read_span(const image_header *h);

/* The same rows of a netpbm or raw file, row y0 at dst (a buffer of
 * nrows rows); -1 for PNG and TIFF, which are decoded whole. */
int image_read_span(const char *path, const image_header *h, size_t y0,
                    size_t nrows, void *dst, size_t dst_pitch, char *err,
                    size_t errsz);

/* The header of the output of a crop: in's samples, the ROI's size, the
 * format `to` (0 = keep in's).  Checks that `to` can hold the samples
 * (pgm needs 1 channel, ppm 3, netpbm no float); the message names the
 * formats that can. */
int image_output_header(const image_header *in, size_t width, size_t height,
                        image_format to, image_header *out, char *err,
                        size_t errsz);

/* Write h and the pixels (rows pitch bytes apart, samples in the byte order
 * h->big_endian says) through h->format's codec into fd, from its current
 * offset; fd stays open.  -1 with the codec's sentence in err, or with err
 * empty and errno saying why. */
int image_write_fd(int fd, const image_header *h, const void *pixels,
                   size_t pitch, char *err, size_t errsz);

/* image_write_fd into path through output_write (output.h): a temporary
 * file synced and renamed over path, or a descriptor written in place. */
int image_write_atomic(const char *path, const image_header *h,
                       const void *pixels, size_t pitch, char *err,
                       size_t errsz);

/* CPU reference crop: copy the w x h pixels at (x, y) of src (row pitch
 * src_pitch) to dst (row pitch dst_pitch).  pixel_bytes per pixel. */
void image_crop(void *dst, size_t dst_pitch, const void *src,
                size_t src_pitch, size_t x, size_t y, size_t w, size_t h,
                size_t pixel_bytes);

/* The first difference between two images of one header's geometry
 * (width, height, channels, bytes, byte order): its position and both
 * sample values. */
typedef struct image_diff {
    size_t x, y, channel;
    double expected, got; /* sample values (float samples as floats) */
} image_diff;

/* Returns 0 when equal, 1 with *d filled at the first difference in row
 * order. */
int image_compare(const image_header *h, const void *expected,
                  size_t expected_pitch, const void *got, size_t got_pitch,
                  image_diff *d);

#endif
