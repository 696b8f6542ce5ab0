/* SPDX-License-Identifier: MIT */
/*
 * netpbm.h - roicopy's netpbm codec (netpbm.c): binary PGM (P5), PPM (P6),
 * PAM (P7) and headerless raw files, through the codec interface of
 * image.h, as png-io.c and tiff-io.c are.  image.c's format table names
 * netpbm_codec in the rows of pgm, ppm, pam and raw.
 *
 * The header parser is libnetpbm's reading (pamfile is the oracle), with
 * every number range-checked and the file's size checked against the
 * pixels it promises.  Samples stay in the file's byte order in memory
 * (netpbm: big-endian; raw: host order); the writer swaps 16-bit samples
 * when h->big_endian differs from the file's order.  Row spans are read
 * with pread() (read_span), so roicopy reads only the rows an ROI needs.
 */
#ifndef ROICOPY_NETPBM_H
#define ROICOPY_NETPBM_H

#include <stddef.h>

#include "image.h"

/* The codec: no sniff (netpbm reads what no other codec claims, and
 * says what is wrong with it), the header of a P5/P6/P7 file, pixels and
 * spans of any of the four, and the writer of all four (h->format). */
extern const image_codec_ops netpbm_codec;

/* The header of a raw file that raw describes (--raw, --depth): the
 * file's size must be exactly the pixels'. */
int netpbm_read_raw_header(const char *path, const image_raw_spec *raw,
                           image_header *h, char *err, size_t errsz);

#endif
