/* SPDX-License-Identifier: MIT */
/*
 * scratch-file.h - the file the file-reading fuzz targets (fuzz-image-header,
 * fuzz-png-tiff) hand the code under test: made once, unlinked at once (so
 * no run leaves one behind), and named /proc/self/fd/N for the readers
 * that take a path; scratch_fill rewrites it with each input.
 */
#ifndef CUXFER_FUZZ_SCRATCH_FILE_H
#define CUXFER_FUZZ_SCRATCH_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* Make *fd (once: nothing to do when it is open) under $TMPDIR or /tmp,
 * from the name stem, and put its /proc path in path[n]; 0 or -1. */
static int scratch_open(int *fd, const char *stem, char *path, size_t n)
{
    char tmpl[4096];
    const char *dir = getenv("TMPDIR");
    if (*fd >= 0)
        return 0;
    (void)snprintf(tmpl, sizeof tmpl, "%s/%s.XXXXXX", dir && *dir ? dir : "/tmp", stem);
    *fd = mkstemp(tmpl);
    if (*fd < 0)
        return -1;
    (void)unlink(tmpl);
    (void)snprintf(path, n, "/proc/self/fd/%d", *fd);
    return 0;
}

/* The file holds exactly data[0, size); 0 or -1. */
static int scratch_fill(int fd, const uint8_t *data, size_t size)
{
    size_t off = 0;
    if (ftruncate(fd, 0) != 0)
        return -1;
    while (off < size) {
        ssize_t k = pwrite(fd, data + off, size - off, (off_t)off);
        if (k <= 0)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

#endif
