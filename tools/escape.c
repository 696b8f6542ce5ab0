/* SPDX-License-Identifier: MIT */
/*
 * escape.c - untrusted text (file names, tuple types) made safe to print:
 * for a message (image_escape) and as a JSON string (image_json_string).
 * The one place roicopy escapes text; see escape.h.
 */
#include "escape.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n, i;
    unsigned long cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (i = 1; i < n; ++i) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

/* A C1 control (U+0080..U+009F): valid UTF-8, but a terminal may act on
 * it as on ESC [ (U+009B is CSI), so it is escaped as controls are. */
static int is_c1(const unsigned char *s, size_t len)
{
    return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

const char *image_escape(const char *text, char *buf, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t k = 0, len;
    if (n == 0)
        return buf;
    while (*s) {
        char piece[16];
        size_t plen;
        len = utf8_len(s);
        if (is_c1(s, len)) {
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x\\x%02x",
                                    s[0], s[1]);
        } else if (len > 1) {
            memcpy(piece, s, len);
            plen = len;
        } else if (len == 1 && *s == '\\') {
            memcpy(piece, "\\\\", 2);
            plen = 2;
        } else if (len == 1 && *s >= 0x20 && *s != 0x7f) {
            piece[0] = (char)*s;
            plen = 1;
        } else {
            len = 1;
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", *s);
        }
        if (k + plen + 4 >= n) { /* room for "..." and the NUL */
            memcpy(buf + k, "...", 3);
            k += 3;
            break;
        }
        memcpy(buf + k, piece, plen);
        k += plen;
        s += len;
    }
    buf[k] = '\0';
    return buf;
}

void image_json_string(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    fputc('"', f);
    while (*s) {
        size_t len = utf8_len(s);
        if (is_c1(s, len)) {
            fprintf(f, "\\u%04x", s[1]); /* U+0080..U+009F */
            s += len;
            continue;
        }
        if (len > 1) {
            fwrite(s, 1, len, f);
            s += len;
            continue;
        }
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s < 0x20 || len == 0)
            fprintf(f, "\\u%04x", *s); /* a control or a non-UTF-8 byte */
        else
            fputc(*s, f);
        ++s;
    }
    fputc('"', f);
}

const char *roicopy_esc(const char *text)
{
    /* A few buffers in turn, so one message may escape several names. */
    /* Per thread: the ring's I/O threads report errors too. */
    static __thread char bufs[4][4 * PATH_MAX + 8];
    static __thread unsigned next;
    char *b = bufs[next++ % 4];
    return image_escape(text, b, sizeof bufs[0]);
}
