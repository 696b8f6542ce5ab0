/* SPDX-License-Identifier: MIT */
/*
 * netpbm.c - roicopy's netpbm codec (netpbm.h): binary PGM (P5), PPM (P6)
 * and PAM (P7), and headerless raw files, whose pixels are read and
 * written the same way (one span of rows after the header).
 *
 * Strict on purpose: roicopy allocates pinned memory and device memory from
 * what a header says, so every number is range-checked, every product is
 * overflow-checked and the file must really hold the pixels the header
 * promises before anyone allocates for them.  libnetpbm (pamfile) is the
 * oracle for what a header means.
 */
#include "netpbm.h"
#include "input.h"
#include "say.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* libnetpbm reads a PAM header line with fgets() into 256 bytes. */
#define PAM_LINE_MAX 256
/* The digits of a number out of range shown in a message, at most. */
#define SHOWN_DIGITS 20

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* The file must hold total_bytes of pixels after the header. */
static int check_holds_pixels(const image_header *h, const struct stat *st,
                              char *err, size_t errsz)
{
    unsigned long long have = (unsigned long long)st->st_size;
    unsigned long long off = (unsigned long long)h->data_offset;
    unsigned long long need = (unsigned long long)h->total_bytes;
    if (have < off || have - off < need) {
        say(err, errsz, "needs %llu byte%s of pixels, the file has %llu "
            "(after a header of %llu bytes)", need, need == 1 ? "" : "s",
            have > off ? have - off : 0ULL, off);
        return -1;
    }
    return 0;
}

/* A number outside lo..max, named with its digits (n of them, the first
 * SHOWN_DIGITS shown) and the real range. */
static void say_out_of_range(char *err, size_t errsz, const char *what,
                             const char *name, const char *digits, size_t n,
                             unsigned long lo, unsigned long max)
{
    say(err, errsz, "%s: %s %.*s%s is out of range %lu..%lu", what, name,
        (int)(n < SHOWN_DIGITS ? n : SHOWN_DIGITS), digits,
        n > SHOWN_DIGITS ? "..." : "", lo, max);
}

/* ---- P5 / P6 ------------------------------------------------------------ */

/* libnetpbm's pm_getc(): a '#' starts a comment that runs to the end of
 * its line and reads as that line end. */
static int pnm_getc(FILE *f)
{
    int c = getc(f);
    if (c == '#')
        while ((c = getc(f)) != EOF && c != '\n' && c != '\r')
            ;
    return c;
}

/* libnetpbm's pm_getuint() skips only these four before a number; a
 * form feed or vertical tab there is junk (pamfile refuses it). */
static int pnm_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* libnetpbm's pm_getuint(): skip whitespace and comments, read decimal
 * digits, and consume the one character after them, whatever it is (a
 * comment counts as one: "255#c\n" ends the header at the newline).
 * Values beyond `max` are reported, with their digits, as out of range
 * lo..max. */
static int pnm_number(FILE *f, const char *name, unsigned long lo,
                      unsigned long max, unsigned long *out, char *err,
                      size_t errsz)
{
    char digits[SHOWN_DIGITS];
    size_t n = 0;
    unsigned long v = 0;
    int c, big = 0;
    while (pnm_space(c = pnm_getc(f)))
        ;
    if (c == EOF) {
        say(err, errsz, "truncated header: no %s", name);
        return -1;
    }
    if (c == '-') {
        say(err, errsz, "bad header: negative %s", name);
        return -1;
    }
    if (c < '0' || c > '9') {
        say(err, errsz, "bad header: expected %s, found %s", name,
            (c > 32 && c < 127) ? (char[]){'\'', (char)c, '\'', 0}
                                : "a control or non-ASCII byte");
        return -1;
    }
    for (; c >= '0' && c <= '9'; c = getc(f)) {
        if (n < sizeof digits)
            digits[n] = (char)c;
        ++n;
        if (v > (max - (unsigned long)(c - '0')) / 10)
            big = 1;
        else if (!big)
            v = v * 10 + (unsigned long)(c - '0');
    }
    if (c == '#')
        while ((c = getc(f)) != EOF && c != '\n' && c != '\r')
            ;
    if (big) {
        say_out_of_range(err, errsz, "bad header", name, digits, n, lo, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int check_maxval(unsigned long maxval, char *err, size_t errsz)
{
    if (maxval < 1 || maxval > 65535) {
        say(err, errsz, "bad header: maxval %lu is out of range 1..65535",
            maxval);
        return -1;
    }
    return 0;
}

static int parse_pnm(FILE *f, image_header *h, char *err, size_t errsz)
{
    unsigned long w, ht, maxval;
    if (pnm_number(f, "width", 1, IMAGE_MAX_DIM, &w, err, errsz) ||
        pnm_number(f, "height", 1, IMAGE_MAX_DIM, &ht, err, errsz) ||
        pnm_number(f, "maxval", 1, 65535, &maxval, err, errsz))
        return -1;
    if (w == 0 || ht == 0) {
        say(err, errsz, "bad header: zero dimension (%lux%lu)", w, ht);
        return -1;
    }
    if (check_maxval(maxval, err, errsz))
        return -1;
    h->width = w;
    h->height = ht;
    h->maxval = (unsigned)maxval;
    return 0;
}

/* ---- P7 (PAM) ----------------------------------------------------------- */

/* Read one header line into buf (PAM_LINE_MAX bytes) as libnetpbm's
 * fgets() does: up to its newline, but at most PAM_LINE_MAX - 1 bytes,
 * the last of which libnetpbm then overwrites with a newline.  A longer
 * line is so read as several of PAM_LINE_MAX - 2 bytes, a byte lost after
 * each: a long run of blanks is blank lines, the tail of a long comment a
 * line of its own (pamfile reads both so).  -1 at EOF. */
static int pam_line(FILE *f, char *buf)
{
    size_t k = 0;
    int c;
    while (k < PAM_LINE_MAX - 1 && (c = getc(f)) != EOF) {
        buf[k++] = (char)c;
        if (c == '\n')
            break;
    }
    if (k == 0)
        return -1;
    if (k == PAM_LINE_MAX - 1)
        buf[PAM_LINE_MAX - 2] = '\n';
    buf[k] = '\0';
    return 0;
}

/* isspace() in the C locale, as libnetpbm strips header lines. */
static int pam_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

static char *trim(char *s)
{
    char *e;
    while (pam_space(*s))
        ++s;
    e = s + strlen(s);
    while (e > s && pam_space(e[-1]))
        *--e = '\0';
    return s;
}

/* A PAM field value as libnetpbm reads it (strtol, base 10): an optional
 * '+', decimal digits, nothing else. */
static int pam_value(const char *key, const char *val, unsigned long max,
                     unsigned long *out, char *err, size_t errsz)
{
    unsigned long v = 0;
    const char *p = val, *digits;
    char shown[64];
    if (*p == '-') {
        say(err, errsz, "bad PAM header: negative %s", key);
        return -1;
    }
    if (*p == '+')
        ++p;
    if (*p < '0' || *p > '9') {
        say(err, errsz, "bad PAM header: %s needs a number, found \"%s\"",
            key, image_escape(val, shown, sizeof shown));
        return -1;
    }
    for (digits = p; *p >= '0' && *p <= '9'; ++p) {
        if (v > (max - (unsigned long)(*p - '0')) / 10) {
            say_out_of_range(err, errsz, "bad PAM header", key, digits,
                             strspn(digits, "0123456789"), 1, max);
            return -1;
        }
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (*p != '\0') {
        say(err, errsz, "bad PAM header: %s needs a number, found \"%s\"",
            key, image_escape(val, shown, sizeof shown));
        return -1;
    }
    *out = v;
    return 0;
}

/* TUPLTYPE lines accumulate, joined by a space (the PAM specification);
 * an empty one is an error, as in libnetpbm. */
static int pam_tupltype(image_header *h, const char *val, char *err,
                        size_t errsz)
{
    size_t have = strlen(h->tupltype), add = strlen(val);
    if (add == 0) {
        say(err, errsz, "bad PAM header: TUPLTYPE line without a tuple type");
        return -1;
    }
    if (have + (have ? 1 : 0) + add + 1 > sizeof h->tupltype) {
        say(err, errsz, "bad PAM header: TUPLTYPE is too long (at most %d "
            "bytes)", IMAGE_TUPLTYPE_MAX - 1);
        return -1;
    }
    if (have)
        h->tupltype[have++] = ' ';
    memcpy(h->tupltype + have, val, add + 1);
    return 0;
}

enum { PAM_W, PAM_H, PAM_D, PAM_M, PAM_NFIELDS };

/* A field given twice keeps its last value, as in libnetpbm. */
static int pam_field(const char *key, const char *val, unsigned long *vals,
                     int *seen, image_header *h, char *err, size_t errsz)
{
    static const char *names[PAM_NFIELDS] = {"WIDTH", "HEIGHT", "DEPTH",
                                             "MAXVAL"};
    static const unsigned long max[PAM_NFIELDS] = {
        IMAGE_MAX_DIM, IMAGE_MAX_DIM, IMAGE_MAX_DIM, 65535};
    char shown[64];
    int i;
    if (!strcmp(key, "TUPLTYPE"))
        return pam_tupltype(h, val, err, errsz);
    for (i = 0; i < PAM_NFIELDS; ++i) {
        if (strcmp(key, names[i]) != 0)
            continue;
        seen[i] = 1;
        return pam_value(key, val, max[i], &vals[i], err, errsz);
    }
    for (i = 0; key[i]; ++i)
        if ((unsigned char)key[i] < 32 || (unsigned char)key[i] > 126) {
            /* Pixel bytes where a header line should be. */
            say(err, errsz, "bad PAM header: no ENDHDR line before the "
                "binary data");
            return -1;
        }
    say(err, errsz, "bad PAM header: unknown keyword \"%s\"",
        image_escape(key, shown, sizeof shown));
    return -1;
}

/* The tuple types libnetpbm knows and what it requires of them: a
 * minimum DEPTH, or (BLACKANDWHITE) a maxval of 1.  Other tuple types are
 * taken as they are, as libnetpbm takes them. */
static int pam_check_tupltype(const image_header *h, char *err,
                              size_t errsz)
{
    static const struct {
        const char *name;
        unsigned long min_depth;
    } known[] = {{"GRAYSCALE_ALPHA", 2}, {"RGB", 3}, {"RGB_ALPHA", 4}};
    size_t i;
    if (!strcmp(h->tupltype, "BLACKANDWHITE") && h->maxval != 1) {
        say(err, errsz, "bad PAM header: TUPLTYPE BLACKANDWHITE needs "
            "MAXVAL 1, this has %u", h->maxval);
        return -1;
    }
    for (i = 0; i < sizeof known / sizeof *known; ++i)
        if (!strcmp(h->tupltype, known[i].name) &&
            h->channels < known[i].min_depth) {
            say(err, errsz, "bad PAM header: TUPLTYPE %s needs DEPTH %lu or "
                "more, this has %lu", known[i].name, known[i].min_depth,
                (unsigned long)h->channels);
            return -1;
        }
    return 0;
}

static int pam_check(const unsigned long *vals, const int *seen,
                     image_header *h, char *err, size_t errsz)
{
    static const char *names[PAM_NFIELDS] = {"WIDTH", "HEIGHT", "DEPTH",
                                             "MAXVAL"};
    int i;
    for (i = 0; i < PAM_NFIELDS; ++i)
        if (!seen[i]) {
            say(err, errsz, "bad PAM header: no %s line", names[i]);
            return -1;
        }
    if (vals[PAM_D] == 0) {
        say(err, errsz, "bad PAM header: DEPTH is 0");
        return -1;
    }
    if (vals[PAM_W] == 0 || vals[PAM_H] == 0) {
        say(err, errsz, "bad PAM header: zero dimension (%lux%lu)",
            vals[PAM_W], vals[PAM_H]);
        return -1;
    }
    if (check_maxval(vals[PAM_M], err, errsz))
        return -1;
    h->width = vals[PAM_W];
    h->height = vals[PAM_H];
    h->channels = vals[PAM_D];
    h->maxval = (unsigned)vals[PAM_M];
    return pam_check_tupltype(h, err, errsz);
}

#define PAM_LABEL_MAX 8

/* As libnetpbm: the rest of the magic number's line is ignored ("P7\r\n",
 * "P7 \n"); then lines until ENDHDR, where a line that starts with '#' is
 * a comment, a blank line is skipped and every other line is a keyword and
 * its value, both stripped of surrounding whitespace (CR included). */
static int parse_pam(FILE *f, image_header *h, char *err, size_t errsz)
{
    char line[PAM_LINE_MAX];
    unsigned long vals[PAM_NFIELDS] = {0, 0, 0, 0};
    int seen[PAM_NFIELDS] = {0, 0, 0, 0}, c;
    while ((c = getc(f)) != EOF && c != '\n')
        ;
    if (c == EOF) {
        say(err, errsz, "bad PAM header: no ENDHDR line");
        return -1;
    }
    for (;;) {
        char *s, *val;
        if (pam_line(f, line)) {
            say(err, errsz, "bad PAM header: no ENDHDR line");
            return -1;
        }
        if (line[0] == '#')
            continue;
        s = trim(line);
        if (*s == '\0')
            continue;
        val = s;
        while (*val && !pam_space(*val))
            ++val;
        if (*val)
            *val++ = '\0';
        /* libnetpbm keeps the first PAM_LABEL_MAX bytes of a keyword:
         * "TUPLTYPE# X" is a TUPLTYPE line (pamfile agrees). */
        if (strlen(s) > PAM_LABEL_MAX)
            s[PAM_LABEL_MAX] = '\0';
        if (!strcmp(s, "ENDHDR"))
            break;
        if (pam_field(s, trim(val), vals, seen, h, err, errsz))
            return -1;
    }
    return pam_check(vals, seen, h, err, errsz);
}

/* ---- header entry points ------------------------------------------------ */

static int parse_magic(FILE *f, image_header *h, char *err, size_t errsz)
{
    int a = getc(f), b = getc(f);
    if (a == EOF) {
        say(err, errsz, "empty file, not an image");
        return -1;
    }
    if (a == 'P' && (b == '1' || b == '2' || b == '3' || b == '4')) {
        say(err, errsz, "plain or bitmap netpbm (P%c) is not supported; use "
            "binary PGM (P5), PPM (P6) or PAM (P7)", b);
        return -1;
    }
    if (a != 'P' || (b != '5' && b != '6' && b != '7')) {
        say(err, errsz, "bad magic: not a binary PGM (P5), PPM (P6) or PAM "
            "(P7) file (use --raw for headerless data)");
        return -1;
    }
    h->format = b == '5' ? IMAGE_PGM : b == '6' ? IMAGE_PPM : IMAGE_PAM;
    h->channels = b == '5' ? 1 : b == '6' ? 3 : 0;
    return 0;
}

/* Another image after this one's pixels: a multi-image stream (what
 * --stack writes, or cat of two files), known as libnetpbm's
 * pnm_nextimage() knows it: whitespace, then a magic number.  roicopy
 * crops one image; taking the first alone would drop the others in
 * silence (pamcut crops every one).  Other bytes after the pixels are
 * left alone, as pamfile leaves them. */
static int check_one_image(FILE *f, const image_header *h, char *err,
                           size_t errsz)
{
    long next = h->data_offset + (long)h->total_bytes;
    int a, b;
    if (fseek(f, next, SEEK_SET) != 0)
        return 0; /* nothing to read there: no second image */
    while ((a = getc(f)) != EOF && pam_space((char)a))
        ++next;
    b = getc(f);
    if (a == 'P' && b >= '1' && b <= '7') {
        say(err, errsz, "holds more than one image (the next starts at "
            "byte %ld); roicopy crops one: split the stream with pamsplit",
            next);
        return -1;
    }
    return 0;
}

static int parse_netpbm(FILE *f, const struct stat *st, image_header *h,
                        char *err, size_t errsz)
{
    long off;
    if (parse_magic(f, h, err, errsz))
        return -1;
    if (h->format == IMAGE_PAM ? parse_pam(f, h, err, errsz)
                               : parse_pnm(f, h, err, errsz))
        return -1;
    h->bytes = h->maxval > 255 ? 2 : 1;
    h->big_endian = h->bytes == 2;
    off = ftell(f);
    if (off < 0) {
        say(err, errsz, "%s", strerror(errno));
        return -1;
    }
    h->data_offset = off;
    if (image_compute_sizes(h, err, errsz))
        return -1;
    return check_holds_pixels(h, st, err, errsz) ||
                   check_one_image(f, h, err, errsz)
               ? -1
               : 0;
}

/* The sizes --raw and --depth give, checked against the file's size. */
static int parse_raw(const image_raw_spec *raw, const struct stat *st,
                     image_header *h, char *err, size_t errsz)
{
    if (raw->depth != 8 && raw->depth != 16 && raw->depth != 32) {
        say(err, errsz, "raw depth %d is not 8, 16 or 32", raw->depth);
        return -1;
    }
    h->format = IMAGE_RAW;
    h->width = raw->width;
    h->height = raw->height;
    h->channels = raw->channels;
    h->bytes = (size_t)raw->depth / 8;
    h->is_float = raw->depth == 32;
    h->big_endian = host_is_big_endian();
    h->maxval = raw->depth == 8 ? 255 : raw->depth == 16 ? 65535 : 0;
    h->data_offset = 0;
    if (image_compute_sizes(h, err, errsz))
        return -1;
    if ((unsigned long long)st->st_size != (unsigned long long)h->total_bytes) {
        say(err, errsz, "--raw %lux%lux%lu --depth %d needs %llu bytes of "
            "pixels, the file has %llu", (unsigned long)raw->width,
            (unsigned long)raw->height, (unsigned long)raw->channels,
            raw->depth, (unsigned long long)h->total_bytes,
            (unsigned long long)st->st_size);
        return -1;
    }
    return 0;
}

static int netpbm_read_header(const char *path, unsigned page,
                              image_header *h, char *err, size_t errsz)
{
    struct stat st;
    FILE *f = image_open_input(path, &st, err, errsz);
    int rc;
    (void)page; /* one page: image.c refuses page > 0 before calling */
    if (!f)
        return -1;
    rc = parse_netpbm(f, &st, h, err, errsz);
    fclose(f);
    return rc;
}

int netpbm_read_raw_header(const char *path, const image_raw_spec *raw,
                           image_header *h, char *err, size_t errsz)
{
    struct stat st;
    FILE *f = image_open_input(path, &st, err, errsz);
    int rc;
    if (!f)
        return -1;
    rc = parse_raw(raw, &st, h, err, errsz);
    fclose(f);
    return rc;
}

/* ---- pixels ------------------------------------------------------------- */

/* Samples above maxval are refused, as libnetpbm refuses them (pamcut,
 * pamtopnm, pnmtopng), rather than copied into a netpbm file netpbm
 * cannot read or clamped into a PNG or TIFF.  A maxval that is the full
 * range of its sample size (255, 65535; raw files) admits every value:
 * nothing is looked at.  rows holds nrows rows from row y0, as read. */
static int check_maxval_samples(const image_header *h,
                                const unsigned char *rows, size_t pitch,
                                size_t y0, size_t nrows, char *err,
                                size_t errsz)
{
    unsigned long full = h->bytes == 1 ? 255UL : 65535UL, v;
    size_t n = h->width * h->channels, x, y;
    if (h->is_float || h->maxval == 0 || h->maxval >= full)
        return 0;
    for (y = 0; y < nrows; ++y) {
        const unsigned char *r = rows + y * pitch;
        for (x = 0; x < n; ++x) {
            v = image_sample(r + x * h->bytes, h->bytes, h->big_endian);
            if (v > h->maxval) {
                say(err, errsz, "sample value %lu exceeds maxval %u (row "
                    "%lu, column %lu)", v, h->maxval,
                    (unsigned long)(y0 + y), (unsigned long)(x / h->channels));
                return -1;
            }
        }
    }
    return 0;
}

static int netpbm_read_pixels(const char *path, const image_header *h,
                              void *dst, size_t dst_pitch, char *err,
                              size_t errsz)
{
    struct stat st;
    size_t y;
    int rc = 0;
    FILE *f = image_open_input(path, &st, err, errsz);
    if (!f)
        return -1;
    /* The file may have changed since its header was checked. */
    if (check_holds_pixels(h, &st, err, errsz) ||
        fseek(f, h->data_offset, SEEK_SET) != 0) {
        if (!err || !*err)
            say(err, errsz, "%s", strerror(errno));
        fclose(f);
        return -1;
    }
    if (dst_pitch == h->row_bytes) {
        if (fread(dst, 1, h->total_bytes, f) != h->total_bytes)
            rc = -1;
    } else {
        for (y = 0; y < h->height && rc == 0; ++y)
            if (fread((char *)dst + y * dst_pitch, 1, h->row_bytes, f) !=
                h->row_bytes)
                rc = -1;
    }
    if (rc)
        say(err, errsz, "%s", ferror(f) ? strerror(errno)
                                        : "truncated pixel data (the file shrank)");
    else
        rc = check_maxval_samples(h, (const unsigned char *)dst, dst_pitch, 0,
                                  h->height, err, errsz);
    fclose(f);
    return rc;
}

/* pread() all of n bytes at off, through short reads and EINTR; -1 with
 * errno (0 at end of file). */
static int pread_all(int fd, void *buf, size_t n, off_t off)
{
    char *p = (char *)buf;
    while (n > 0) {
        ssize_t k = pread(fd, p, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = 0;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

/* Rows [y0, y0 + nrows) alone (image.c checked the range), with pread()
 * of that span. */
static int netpbm_read_span(const char *path, const image_header *h,
                            size_t y0, size_t nrows, void *dst,
                            size_t dst_pitch, char *err, size_t errsz)
{
    struct stat st;
    size_t y;
    off_t base;
    int rc = 0, fd;
    FILE *f = image_open_input(path, &st, err, errsz);
    if (!f)
        return -1;
    if (check_holds_pixels(h, &st, err, errsz)) {
        fclose(f);
        return -1;
    }
    fd = fileno(f);
    base = (off_t)h->data_offset + (off_t)(y0 * h->row_bytes);
    errno = 0;
    if (dst_pitch == h->row_bytes)
        rc = pread_all(fd, dst, nrows * h->row_bytes, base);
    else
        for (y = 0; y < nrows && rc == 0; ++y)
            rc = pread_all(fd, (char *)dst + y * dst_pitch, h->row_bytes,
                           base + (off_t)(y * h->row_bytes));
    if (rc)
        say(err, errsz, "%s", errno ? strerror(errno)
                                    : "truncated pixel data (the file shrank)");
    else
        rc = check_maxval_samples(h, (const unsigned char *)dst, dst_pitch, y0,
                                  nrows, err, errsz);
    fclose(f);
    return rc;
}

/* ---- writing ------------------------------------------------------------ */

static int write_pnm_header(FILE *f, const image_header *h)
{
    return fprintf(f, "P%c\n%lu %lu\n%u\n", h->format == IMAGE_PGM ? '5' : '6',
                   (unsigned long)h->width, (unsigned long)h->height,
                   h->maxval) < 0;
}

static int write_pam_header(FILE *f, const image_header *h)
{
    return fprintf(f, "P7\nWIDTH %lu\nHEIGHT %lu\nDEPTH %lu\nMAXVAL %u\n"
                   "%s%s%sENDHDR\n", (unsigned long)h->width,
                   (unsigned long)h->height, (unsigned long)h->channels,
                   h->maxval, h->tupltype[0] ? "TUPLTYPE " : "",
                   h->tupltype, h->tupltype[0] ? "\n" : "") < 0;
}

/* Netpbm files hold 16-bit samples big-endian, raw files in host order. */
static int file_big_endian(const image_header *h)
{
    return h->format == IMAGE_RAW ? host_is_big_endian() : 1;
}

static int write_rows(FILE *f, const image_header *h, const void *pixels,
                      size_t pitch)
{
    const unsigned char *src = (const unsigned char *)pixels;
    int swap = h->bytes == 2 && h->big_endian != file_big_endian(h);
    unsigned char *row = NULL;
    size_t y, i;
    /* Rows back to back: one write of them all, not one a row (a batch
     * writes thousands of rows a frame on every thread). */
    if (!swap && pitch == h->row_bytes)
        return fwrite(src, 1, h->total_bytes, f) != h->total_bytes ? -1 : 0;
    if (swap && !(row = (unsigned char *)malloc(h->row_bytes)))
        return -1;
    for (y = 0; y < h->height; ++y) {
        const unsigned char *r = src + y * pitch;
        if (swap) {
            for (i = 0; i + 1 < h->row_bytes; i += 2) {
                row[i] = r[i + 1];
                row[i + 1] = r[i];
            }
            r = row;
        }
        if (fwrite(r, 1, h->row_bytes, f) != h->row_bytes) {
            free(row);
            return -1;
        }
    }
    free(row);
    return 0;
}

/* Header and rows into fd (through a stdio stream on a duplicate of it:
 * fd stays open, at the end of what was written). */
static int netpbm_write_fd(int fd, const image_header *h, const void *pixels,
                           size_t pitch, char *err, size_t errsz)
{
    int dfd = dup(fd), bad, saved;
    FILE *f = dfd >= 0 ? fdopen(dfd, "wb") : NULL;
    (void)err;
    (void)errsz;
    if (!f) {
        saved = errno;
        if (dfd >= 0)
            (void)close(dfd);
        errno = saved;
        return -1;
    }
    bad = (h->format == IMAGE_PAM   ? write_pam_header(f, h)
           : h->format == IMAGE_RAW ? 0
                                    : write_pnm_header(f, h)) ||
          write_rows(f, h, pixels, pitch) || fflush(f) != 0;
    saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    errno = saved;
    return bad ? -1 : 0;
}

const image_codec_ops netpbm_codec = {NULL, netpbm_read_header,
                                      netpbm_read_pixels, netpbm_write_fd,
                                      netpbm_read_span};
