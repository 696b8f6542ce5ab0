/* SPDX-License-Identifier: MIT */
/*
 * read-file.h - read_file(path): a whole file as a NUL-terminated string
 * the caller frees, or NULL (the tests that read man pages);
 * read_file_n(path, &n) the same with its length in bytes (the image
 * tests, whose files hold NUL bytes).
 */
#ifndef CUXFER_TESTS_READ_FILE_H
#define CUXFER_TESTS_READ_FILE_H
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"

static char *read_file_n(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *s = NULL;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        s = (char *)malloc((size_t)n + 1);
        if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
            free(s);
            s = NULL;
        }
        if (s) {
            s[n] = '\0';
            if (len)
                *len = (size_t)n;
        }
    }
    fclose(f);
    return s;
}

static TAP_UNUSED char *read_file(const char *path)
{
    return read_file_n(path, NULL);
}
#endif
