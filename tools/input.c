/* SPDX-License-Identifier: MIT */
/*
 * input.c - what every codec needs of an input (input.h): the file opened
 * (a regular file, checked before it is opened so that a FIFO never
 * blocks; standard input spooled once into an unlinked temporary file),
 * and the sizes of an image, overflow-checked.
 */
/* mkstemp() is XSI/POSIX.1-2008. */
#define _XOPEN_SOURCE 700

#include "input.h"
#include "escape.h"
#include "output.h"
#include "say.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static int mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

int image_compute_sizes(image_header *h, char *err, size_t errsz)
{
    size_t pix, row, total;
    if (h->width == 0 || h->height == 0 || h->channels == 0) {
        say(err, errsz, "image is empty (%lux%lu, %lu channels)",
            (unsigned long)h->width, (unsigned long)h->height,
            (unsigned long)h->channels);
        return -1;
    }
    if (h->width > IMAGE_MAX_DIM || h->height > IMAGE_MAX_DIM ||
        h->channels > IMAGE_MAX_DIM) {
        say(err, errsz, "image is too large (%lux%lu, %lu channels; at most "
            "%lu each)", (unsigned long)h->width, (unsigned long)h->height,
            (unsigned long)h->channels, IMAGE_MAX_DIM);
        return -1;
    }
    if (!mul_ok(h->channels, h->bytes, &pix) || !mul_ok(h->width, pix, &row) ||
        row > IMAGE_MAX_ROW_BYTES) {
        say(err, errsz, "a row of %lu pixels x %lu channels x %lu bytes is "
            "too long (at most %lu bytes)", (unsigned long)h->width,
            (unsigned long)h->channels, (unsigned long)h->bytes,
            IMAGE_MAX_ROW_BYTES);
        return -1;
    }
    if (!mul_ok(h->height, row, &total) || total > (size_t)LONG_MAX) {
        say(err, errsz, "image size %lu rows x %lu bytes overflows",
            (unsigned long)h->height, (unsigned long)row);
        return -1;
    }
    h->pixel_bytes = pix;
    h->row_bytes = row;
    h->total_bytes = total;
    return 0;
}

/* The standard descriptors found closed by image_reserve_std_fds. */
static int std_closed[3];

void image_reserve_std_fds(void)
{
    int n, fd;
    for (n = 0; n < 3; ++n) {
        if (fcntl(n, F_GETFD) >= 0 || errno != EBADF)
            continue;
        std_closed[n] = 1;
        /* open() takes the lowest free number: n, the lower ones being
         * open by now (unless there is no /dev/null at all). */
        fd = open("/dev/null", (n == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY);
        if (fd >= 0 && fd != n) {
            (void)dup2(fd, n);
            (void)close(fd);
        }
        /* No /dev/null: n stays closed, and the checks still know it. */
    }
}

int image_std_fd_closed(int n)
{
    return n >= 0 && n < 3 && std_closed[n];
}

/* Standard input ("-"), copied once into an unlinked temporary file so it
 * can be parsed, then read again when its pixels are wanted, as a path
 * can.  The file is made tracked, as an output's is: a fatal signal
 * before the unlink removes it. */
static int stdin_fd = -1;

static int spool_stdin(char *err, size_t errsz)
{
    char tmpl[PATH_MAX], buf[65536];
    const char *dir = getenv("TMPDIR"), *name;
    ssize_t k;
    int fd, slot;
    if (stdin_fd >= 0)
        return 0;
    if (!dir || !*dir)
        dir = "/tmp";
    if (snprintf(tmpl, sizeof tmpl, "%s/roicopy-stdin.XXXXXX", dir) >=
        (int)sizeof tmpl) {
        say(err, errsz, "TMPDIR is too long");
        return -1;
    }
    fd = image_mkstemp_tracked(tmpl, &name, &slot);
    if (fd < 0) {
        say(err, errsz, "cannot keep standard input in %s (TMPDIR): %s",
            roicopy_esc(dir), strerror(errno));
        return -1;
    }
    if (image_test_write_hook)
        image_test_write_hook(name);
    (void)unlink(name);
    image_temp_release(slot);
    for (;;) {
        k = read(0, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (write(fd, buf, (size_t)k) != k) {
            say(err, errsz, "cannot keep standard input: %s",
                strerror(errno));
            close(fd);
            return -1;
        }
    }
    if (k < 0) {
        /* EBADF when it was closed (image_reserve_std_fds) */
        say(err, errsz, "standard input: %s", strerror(errno));
        close(fd);
        return -1;
    }
    stdin_fd = fd;
    return 0;
}

/* Open a regular file (or "-") for reading.  Never blocks: the type is
 * checked with stat() before open(), open() is non-blocking and fstat()
 * on the descriptor checks again what is really read. */
FILE *image_open_input(const char *path, struct stat *st, char *err,
                       size_t errsz)
{
    FILE *f;
    int fd;
    if (!strcmp(path, "-")) {
        if (spool_stdin(err, errsz) || (fd = dup(stdin_fd)) < 0 ||
            lseek(fd, 0, SEEK_SET) != 0) {
            if (!err || !*err)
                say(err, errsz, "%s", strerror(errno));
            return NULL;
        }
    } else {
        if (stat(path, st) != 0) {
            say(err, errsz, "%s", strerror(errno));
            return NULL;
        }
        if (!S_ISREG(st->st_mode)) {
            say(err, errsz, "is %s, not a regular file",
                image_file_type((unsigned)st->st_mode));
            return NULL;
        }
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
            say(err, errsz, "%s", strerror(errno));
            return NULL;
        }
    }
    if (fstat(fd, st) != 0) {
        say(err, errsz, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st->st_mode)) { /* replaced since stat() */
        say(err, errsz, "is %s, not a regular file",
            image_file_type((unsigned)st->st_mode));
        close(fd);
        return NULL;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    f = fdopen(fd, "rb");
    if (!f) {
        say(err, errsz, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

/* The path a library opens for an input: standard input is its spooled
 * copy, reached through /dev/fd. */
const char *image_input_path(const char *path, char *buf, size_t n)
{
    if (strcmp(path, "-") != 0)
        return path;
    (void)snprintf(buf, n, "/dev/fd/%d", stdin_fd);
    return buf;
}
