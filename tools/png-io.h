/* SPDX-License-Identifier: MIT */
/*
 * png-io.h - roicopy's PNG reader and writer, through libpng.
 *
 * The same shape as the netpbm functions of image.h: the header first (so
 * every input is validated before anything is allocated), then the pixels
 * straight into the caller's buffer (pinned, with its own row pitch).
 *
 * What is read: gray, gray+alpha, RGB and RGBA at 8 and 16 bits, interlaced
 * or not.  Palette images become RGB (RGBA when they have a tRNS chunk),
 * 1/2/4-bit gray is scaled to 8 bits (a 1-bit 1 becomes 255), a tRNS chunk
 * of a gray or RGB image becomes an alpha channel.  Gamma, sBIT and colour
 * chunks are ignored: the samples are the file's.  16-bit samples stay in
 * the file's byte order in memory (big-endian, h->big_endian = 1), as for
 * 16-bit netpbm, so PNG <-> PGM/PPM/PAM needs no swap.
 *
 * Hostile files: libpng's errors (CRC, bad IHDR, truncated data) come back
 * as the sentence in err; dimensions beyond PNG_IO_MAX_DIM are refused by
 * libpng (png_set_user_limits); a file too small to hold its pixels even at
 * deflate's best ratio is refused before anything is allocated.
 *
 * Functions return 0, or -1 with a sentence in err (not naming the file).
 * h->format is left 0: the caller sets its own format value.  Safe to call
 * from several threads at once (no global state).
 */
#ifndef ROICOPY_PNG_IO_H
#define ROICOPY_PNG_IO_H

#include <stddef.h>

#include "image.h"

/* libpng's own default user limit: 1,000,000 pixels a side. */
#define PNG_IO_MAX_DIM 1000000UL

/* Parse and validate the header of a PNG file. */
int png_io_read_header(const char *path, image_header *h, char *err,
                       size_t errsz);

/* Decode the pixels of path (whose header png_io_read_header put in h) row
 * by row into dst, dst_pitch >= h->row_bytes bytes between rows.  Fails if
 * the file no longer matches h. */
int png_io_read_pixels(const char *path, const image_header *h, void *dst,
                       size_t dst_pitch, char *err, size_t errsz);

/* Write h's pixels (rows pitch bytes apart, 16-bit samples in the order
 * h->big_endian says) as a deflate-compressed PNG to fd, from its current
 * offset.  The caller owns fd: it flushes, fsyncs, closes and renames (see
 * output_write).  1 to 4 channels of 8 or 16 bits; no float. */
int png_io_write_fd(int fd, const image_header *h, const void *pixels,
                    size_t pitch, char *err, size_t errsz);

/* 1 when the first bytes of a file are PNG's signature. */
int png_io_sniff(const void *head, size_t n);

#endif
