/* SPDX-License-Identifier: MIT */
/*
 * checks.h - the checks roicopy makes before any copy, shared by the
 * command line (roicopy.c) and the many-region mode (roicopy-tiles.c): a
 * region inside the input, and an output path roicopy may write.
 *
 * They print their message (roicopy_fail) and return the exit status;
 * they call nothing of roicopy's but frames.c.
 */
#ifndef ROICOPY_CHECKS_H
#define ROICOPY_CHECKS_H

#include <sys/stat.h>
#include <sys/types.h>

#include "frames.h"

/* What validation learns about one frame, for the checks across frames. */
typedef struct frame_check {
    int status;                 /* the worst problem of the frame, or 0 */
    int skip;                   /* --skip-existing: the output exists */
    int in_known;               /* in_dev/in_ino hold the input's identity */
    dev_t in_dev;
    ino_t in_ino;
    int out_known;              /* out_dev/out_ino hold the identity of
                                   an existing output (a regular file, or
                                   one written in place) */
    int out_in_place;           /* standard output, a device or a FIFO */
    dev_t out_dev;
    ino_t out_ino;
    char *out_canon;            /* realpath(dir)/base, NULL when unknown */
    char *error;                /* the frame's first message (kept by
                                   roicopy_fail_keep), for -k's --json */
} frame_check;

/* The last output directory looked at: with -o, every output shares it,
 * so it is checked (and resolved) once, not once per input. */
typedef struct dir_cache {
    char *dir;
    int rc;          /* 0, or the errno of stat() */
    struct stat st;
    char *real;      /* realpath(dir) */
} dir_cache;

/* An output path: its name, its directory (looked at through dc, which
 * keeps the last one), and what exists there.  What it learns goes into c
 * (for the checks across frames); the status, the message printed. */
int roicopy_check_output(const char *out, dir_cache *dc, frame_check *c);

/* The checks of roicopy.c shared with the tiles: a region (`what`: "ROI",
 * "tile") inside the input, and an output path (name, directory, an
 * existing file roicopy may replace, not the input).  The status, with the
 * message printed. */
int roicopy_check_rect(const char *input, const image_header *in,
                       const geom_rect *r, const char *what);
int roicopy_check_output_path(const char *out, const char *input);

/* The checks of an output's name alone: not empty, not ending in '/', a
 * last component of at most IMAGE_NAME_MAX bytes, a path that stays under
 * PATH_MAX with the temporary name's.  roicopy_check_output makes them;
 * an output in a -o DIR still to be made, where nothing else can be
 * looked at yet, gets these.  The status, with the message printed. */
int roicopy_check_output_name(const char *out);

/* An output's format from its extension (image_format_for_path's rule:
 * the text after the last '.' of the last component, in any ASCII case).
 * No extension: 0, *to 0 (the input's format is kept).  An extension that
 * names no format of this build (o.jpg): the usage error, naming the
 * extensions it knows, printed. */
int roicopy_output_format(const char *path, image_format *to);

/* -o DIR, before the outputs in it are checked.  An empty name: the
 * output error (it would put the outputs under /).  A directory: 0, *missing
 * 0.  Missing but makeable (its nearest existing ancestor a writable
 * directory): 0, *missing 1, and the outputs in it are new.  Anything else
 * (a file, an ancestor that is a file or not writable): the output error,
 * its message printed. */
int roicopy_check_outdir(const char *dir, int *missing);

/* Make the missing DIR and its missing parents (mkdir -p: mode 0777 less
 * the umask), once every check has passed.  The status, with the message
 * printed. */
int roicopy_make_outdir(const char *dir);

#endif
