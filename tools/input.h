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

/* Call first, before anything is opened: open /dev/null on each of the
 * descriptors 0, 1 and 2 that is closed, so that no file opened later
 * takes its number (the spool of standard input as descriptor 1 would
 * receive the output written to "-").  Each is opened the other way round
 * (0 for writing, 1 and 2 for reading), so using it still fails with
 * EBADF, as the closed descriptor did. */
void image_reserve_std_fds(void);

/* 1 when descriptor n (0, 1 or 2) was closed at start (and holds the
 * /dev/null of image_reserve_std_fds), else 0. */
int image_std_fd_closed(int n);

/* The path a library opens for an input: path itself, or for "-" the
 * spooled copy of standard input as /dev/fd/N (in buf, n bytes). */
const char *image_input_path(const char *path, char *buf, size_t n);

#endif
