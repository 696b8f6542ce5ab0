/* SPDX-License-Identifier: MIT */
/*
 * input.h - opening an input for a codec (input.c), below every codec:
 * image.c's dispatch, netpbm.c, png-io.c and tiff-io.c call it (and
 * image_compute_sizes, declared in image.h, lives there too).
 */
#ifndef ROICOPY_INPUT_H
#define ROICOPY_INPUT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "image.h"

/* Open a regular file, or "-" (standard input, read once into an unlinked
 * temporary file and read again from its start each time), for reading;
 * *st is what is read.  Never blocks: the type is checked before open().
 * NULL with a sentence in err. */
FILE *image_open_input(const char *path, struct stat *st, char *err,
                       size_t errsz);

/* The path a library opens for an input: path itself, or for "-" the
 * spooled copy of standard input as /dev/fd/N (in buf, n bytes). */
const char *image_input_path(const char *path, char *buf, size_t n);

#endif
