/* SPDX-License-Identifier: MIT */
/*
 * say.h - the one say() of the tools' parsers (image.c, geometry.c,
 * png-io.c, tiff-io.c): write a message into the caller's error buffer.
 *
 * A static inline definition, so every file that parses shares this one
 * text without a new object to link: the fuzz targets and tests that build
 * image.c or geometry.c alone keep their source lists.
 */
#ifndef TOOLS_SAY_H
#define TOOLS_SAY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* printf fmt into err (errsz bytes, always terminated); nothing when err
 * is NULL or errsz 0, so callers need not check. */
static inline void say(char *err, size_t errsz, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline void say(char *err, size_t errsz, const char *fmt, ...)
{
    va_list ap;
    if (!err || errsz == 0)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(err, errsz, fmt, ap);
    va_end(ap);
}

#endif
