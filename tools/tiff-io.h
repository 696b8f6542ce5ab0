/* SPDX-License-Identifier: MIT */
/*
 * tiff-io.h - roicopy's TIFF reader and writer, through libtiff.
 *
 * The same shape as the netpbm functions of image.h: the header first,
 * then the pixels straight into the caller's buffer (pinned, with its own
 * row pitch).  `page` picks one image of a multi-page file (0, the first,
 * is the default of roicopy's --page).
 *
 * What is read: 8 and 16-bit unsigned integer and 32-bit IEEE float
 * samples, 1 to 4 samples a pixel (gray, gray+alpha, RGB, RGBA; min-is-
 * black or RGB photometric), strips or tiles, classic TIFF or BigTIFF, any
 * compression libtiff was built with (except JPEG-in-YCbCr and other
 * layouts that change the samples).  Planar-separate images are
 * interleaved while reading.  Samples are in host byte order in memory
 * (h->big_endian is the host's), float ones too (h->is_float = 1).
 *
 * Errors: libtiff's own message comes back in err, through a per-file
 * error handler (no global state on libtiff >= 4.5), never on stderr.
 * Functions return 0, or -1 with a sentence in err (not naming the file);
 * h->format is left 0: the caller sets its own format value.
 */
#ifndef ROICOPY_TIFF_IO_H
#define ROICOPY_TIFF_IO_H

#include <stddef.h>

#include "image.h"

/* Larger sides are refused as forged (libpng's default limit too). */
#define TIFF_IO_MAX_DIM 1000000UL

/* Parse and validate page `page` (0 = the first) of a TIFF file. */
int tiff_io_read_header(const char *path, unsigned page, image_header *h,
                        char *err, size_t errsz);

/* Decode page `page` of path (header in h, from tiff_io_read_header) into
 * dst, dst_pitch >= h->row_bytes bytes between rows.  Fails if the file no
 * longer matches h. */
int tiff_io_read_pixels(const char *path, unsigned page,
                        const image_header *h, void *dst, size_t dst_pitch,
                        char *err, size_t errsz);

/* Write h's pixels (rows pitch bytes apart, 16-bit samples in the order
 * h->big_endian says) as one deflate-compressed page to fd, which must be
 * a seekable file positioned at its start; BigTIFF when the pixels pass
 * 4 GB.  Keeps the sample type (8/16-bit unsigned, 32-bit float).  The
 * caller owns fd: it fsyncs, closes and renames (see output_write). */
int tiff_io_write_fd(int fd, const image_header *h, const void *pixels,
                     size_t pitch, char *err, size_t errsz);

/* 1 when the first bytes of a file are a TIFF or BigTIFF signature. */
int tiff_io_sniff(const void *head, size_t n);

#endif
