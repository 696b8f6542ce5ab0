/* SPDX-License-Identifier: MIT */
/*
 * image-files.h - what the tests of roicopy's image code share (image-io,
 * image-rows, png-io, tiff-io): a scratch directory of the test's own
 * (scratch_open, scratch_close; path_of names a file in it), put_file and
 * get_file for whole files, header_of, an image header with its sizes
 * computed, and read_padded, a codec's pixels read through a padded pitch.  Each bails when the file system does not do as asked.
 */
#ifndef CUXFER_TESTS_IMAGE_FILES_H
#define CUXFER_TESTS_IMAGE_FILES_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "read-file.h"
#include "../../tools/image.h"

static char dir[64];

/* $TMPDIR/STEM.XXXXXX (or under /tmp): never in the source tree, which
 * distcheck makes read-only. */
static TAP_UNUSED void scratch_open(const char *stem)
{
    const char *t = getenv("TMPDIR");
    (void)snprintf(dir, sizeof dir, "%s/%s.XXXXXX", t && *t ? t : "/tmp", stem);
    if (!mkdtemp(dir))
        bail("mkdtemp %s: %s", dir, strerror(errno));
}

/* Remove the scratch directory, unless KEEP_TMP is set (to look at it). */
static TAP_UNUSED void scratch_close(void)
{
    char cmd[sizeof dir + 16];
    if (getenv("KEEP_TMP"))
        return;
    (void)snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
}

/* dir/name, in a buffer of the calling thread's own (image-rows writes
 * from 8 threads); valid until that thread's next call. */
static TAP_UNUSED const char *path_of(const char *name)
{
    static __thread char p[sizeof dir + 256];
    (void)snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static TAP_UNUSED void put_file(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0)
        bail("cannot write %s", path_of(name));
}

/* The whole file (the caller frees it) and its length in *n. */
static TAP_UNUSED unsigned char *get_file(const char *name, size_t *n)
{
    unsigned char *b = (unsigned char *)read_file_n(path_of(name), n);
    if (!b)
        bail("cannot read %s", path_of(name));
    return b;
}

/* A tight w x ht image of ch samples of `bytes` bytes (maxval 65535 for
 * 2-byte samples, else 255), in `format` (0: the codecs', which take no
 * netpbm format), samples in memory big-endian or not. */
static TAP_UNUSED void header_of(image_header *h, image_format format, size_t w, size_t ht,
                                 size_t ch, size_t bytes, int big_endian)
{
    char e[IMAGE_ERR_MAX];
    memset(h, 0, sizeof *h);
    h->format = format;
    h->width = w;
    h->height = ht;
    h->channels = ch;
    h->bytes = bytes;
    h->big_endian = big_endian;
    h->maxval = bytes == 2 ? 65535 : 255;
    if (image_compute_sizes(h, e, sizeof e))
        bail("header_of %zux%zu, %zu x %zu bytes: %s", w, ht, ch, bytes, e);
}

/* The pixels of name (header in h) read by a codec's read_pixels through a
 * pitch `pad` bytes wider than a row, which the reader must leave alone;
 * tightly packed (the caller frees them), or NULL when the reader fails
 * (its message in err). */
static TAP_UNUSED unsigned char *
read_padded(const char *name, const image_header *h, size_t pad,
            int (*read_pixels)(const char *path, const image_header *h, void *dst,
                               size_t dst_pitch, char *err, size_t errsz),
            char *err, size_t errsz)
{
    size_t pitch = h->row_bytes + pad, y;
    unsigned char *buf = (unsigned char *)malloc(pitch * h->height);
    unsigned char *tight = (unsigned char *)malloc(h->total_bytes);
    if (!buf || !tight)
        bail("out of memory");
    memset(buf, 0xEE, pitch * h->height);
    if (read_pixels(path_of(name), h, buf, pitch, err, errsz)) {
        free(buf);
        free(tight);
        return NULL;
    }
    for (y = 0; y < h->height; ++y) {
        if (buf[y * pitch + h->row_bytes] != 0xEE)
            bail("%s: the reader wrote into the pitch padding", name);
        memcpy(tight + y * h->row_bytes, buf + y * pitch, h->row_bytes);
    }
    free(buf);
    return tight;
}

#endif
