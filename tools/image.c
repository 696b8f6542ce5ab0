/* SPDX-License-Identifier: MIT */
/*
 * image.c - roicopy's strict netpbm (P5, P6, P7) and raw image I/O.
 *
 * Strict on purpose: roicopy allocates pinned memory and device memory from
 * what a header says, so every number is range-checked, every product is
 * overflow-checked and the file must really hold the pixels the header
 * promises before anyone allocates for them.
 */
#include "image.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* netpbm keeps header lines short; a longer one is garbage, not a header. */
#define PAM_LINE_MAX 1024

static void say(char *err, size_t errsz, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void say(char *err, size_t errsz, const char *fmt, ...)
{
    va_list ap;
    if (!err || errsz == 0)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(err, errsz, fmt, ap);
    va_end(ap);
}

static int mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* ---- formats ------------------------------------------------------------ */

image_format image_format_from_name(const char *name)
{
    if (!strcmp(name, "pgm"))
        return IMAGE_PGM;
    if (!strcmp(name, "ppm"))
        return IMAGE_PPM;
    if (!strcmp(name, "pam"))
        return IMAGE_PAM;
    if (!strcmp(name, "raw"))
        return IMAGE_RAW;
    return (image_format)0;
}

const char *image_format_name(image_format f)
{
    switch (f) {
    case IMAGE_PGM: return "pgm";
    case IMAGE_PPM: return "ppm";
    case IMAGE_PAM: return "pam";
    case IMAGE_RAW: return "raw";
    }
    return "?";
}

const char *image_format_ext(image_format f) { return image_format_name(f); }

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

/* ---- opening inputs ----------------------------------------------------- */

/* Open a regular file for reading.  open() then fstat() on the descriptor,
 * so what is checked is what is read. */
static FILE *open_input(const char *path, struct stat *st, char *err,
                        size_t errsz)
{
    FILE *f;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        say(err, errsz, "%s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, st) != 0) {
        say(err, errsz, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISDIR(st->st_mode)) {
        say(err, errsz, "is a directory, not an image file");
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st->st_mode)) {
        say(err, errsz, "is not a regular file");
        close(fd);
        return NULL;
    }
    f = fdopen(fd, "rb");
    if (!f) {
        say(err, errsz, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

/* The file must hold total_bytes of pixels after the header. */
static int check_holds_pixels(const image_header *h, const struct stat *st,
                              char *err, size_t errsz)
{
    unsigned long long have = (unsigned long long)st->st_size;
    unsigned long long off = (unsigned long long)h->data_offset;
    unsigned long long need = (unsigned long long)h->total_bytes;
    if (have < off || have - off < need) {
        say(err, errsz, "truncated pixel data: the header promises %llu bytes "
            "of pixels after byte %llu, the file has %llu", need, off,
            have > off ? have - off : 0ULL);
        return -1;
    }
    return 0;
}

/* ---- P5 / P6 ------------------------------------------------------------ */

/* Skip whitespace and '#' comments (to end of line), the netpbm rule for
 * anywhere between header tokens.  Returns the first other character. */
static int pnm_skip(FILE *f)
{
    int c;
    for (;;) {
        c = getc(f);
        if (c == '#') {
            while ((c = getc(f)) != EOF && c != '\n' && c != '\r')
                ;
            if (c == EOF)
                return EOF;
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r' &&
                   c != '\v' && c != '\f') {
            return c;
        }
    }
}

/* Read one header number named `name`; values beyond `max` saturate and
 * are reported as too large.  Leaves the character after the digits
 * unread. */
static int pnm_number(FILE *f, const char *name, unsigned long max,
                      unsigned long *out, char *err, size_t errsz)
{
    unsigned long v = 0;
    int c = pnm_skip(f), big = 0;
    if (c == EOF) {
        say(err, errsz, "truncated header: no %s", name);
        return -1;
    }
    if (c == '-') {
        say(err, errsz, "bad header: negative %s", name);
        return -1;
    }
    if (c < '0' || c > '9') {
        say(err, errsz, "bad header: expected %s, found '%c'", name,
            (c >= 32 && c < 127) ? c : '?');
        return -1;
    }
    for (; c >= '0' && c <= '9'; c = getc(f)) {
        if (v > (max - (unsigned long)(c - '0')) / 10)
            big = 1;
        else if (!big)
            v = v * 10 + (unsigned long)(c - '0');
    }
    if (c != EOF)
        ungetc(c, f);
    if (big) {
        say(err, errsz, "bad header: %s is too large (at most %lu)", name, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int check_maxval(unsigned long maxval, char *err, size_t errsz)
{
    if (maxval < 1 || maxval > 65535) {
        say(err, errsz, "bad header: maxval %lu is out of range (1..65535)",
            maxval);
        return -1;
    }
    return 0;
}

static int parse_pnm(FILE *f, image_header *h, char *err, size_t errsz)
{
    unsigned long w, ht, maxval;
    int c;
    if (pnm_number(f, "width", IMAGE_MAX_DIM, &w, err, errsz) ||
        pnm_number(f, "height", IMAGE_MAX_DIM, &ht, err, errsz) ||
        pnm_number(f, "maxval", 1000000UL, &maxval, err, errsz))
        return -1;
    if (w == 0 || ht == 0) {
        say(err, errsz, "bad header: zero dimension (%lux%lu)", w, ht);
        return -1;
    }
    if (check_maxval(maxval, err, errsz))
        return -1;
    /* Exactly one whitespace character separates maxval from the pixels;
     * anything else would shift every byte. */
    c = getc(f);
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        say(err, errsz, "bad header: maxval must be followed by one "
            "whitespace character");
        return -1;
    }
    h->width = w;
    h->height = ht;
    h->maxval = (unsigned)maxval;
    return 0;
}

/* ---- P7 (PAM) ----------------------------------------------------------- */

/* Read one header line into buf, without its newline; -1 at EOF or when it
 * does not fit. */
static int pam_line(FILE *f, char *buf, size_t n, int *too_long)
{
    size_t k = 0;
    int c;
    *too_long = 0;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (k + 1 >= n) {
            *too_long = 1;
            return -1;
        }
        buf[k++] = (char)c;
    }
    if (c == EOF && k == 0)
        return -1;
    buf[k] = '\0';
    return 0;
}

static char *trim(char *s)
{
    char *e;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        ++s;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* A PAM field value: one decimal number and nothing else. */
static int pam_value(const char *key, const char *val, unsigned long max,
                     unsigned long *out, char *err, size_t errsz)
{
    unsigned long v = 0;
    const char *p = val;
    if (*p == '-') {
        say(err, errsz, "bad PAM header: negative %s", key);
        return -1;
    }
    if (*p < '0' || *p > '9') {
        say(err, errsz, "bad PAM header: %s needs a number", key);
        return -1;
    }
    for (; *p >= '0' && *p <= '9'; ++p) {
        if (v > (max - (unsigned long)(*p - '0')) / 10) {
            say(err, errsz, "bad PAM header: %s is too large (at most %lu)",
                key, max);
            return -1;
        }
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (*p != '\0') {
        say(err, errsz, "bad PAM header: junk after %s value", key);
        return -1;
    }
    *out = v;
    return 0;
}

/* TUPLTYPE lines accumulate, joined by a space (the PAM specification). */
static int pam_tupltype(image_header *h, const char *val, char *err,
                        size_t errsz)
{
    size_t have = strlen(h->tupltype), add = strlen(val);
    if (have + (have ? 1 : 0) + add + 1 > sizeof h->tupltype) {
        say(err, errsz, "bad PAM header: TUPLTYPE is too long");
        return -1;
    }
    if (have)
        h->tupltype[have++] = ' ';
    memcpy(h->tupltype + have, val, add + 1);
    return 0;
}

enum { PAM_W, PAM_H, PAM_D, PAM_M, PAM_NFIELDS };

static int pam_field(const char *key, const char *val, unsigned long *vals,
                     int *seen, image_header *h, char *err, size_t errsz)
{
    static const char *names[PAM_NFIELDS] = {"WIDTH", "HEIGHT", "DEPTH",
                                             "MAXVAL"};
    static const unsigned long max[PAM_NFIELDS] = {
        IMAGE_MAX_DIM, IMAGE_MAX_DIM, IMAGE_MAX_DIM, 1000000UL};
    int i;
    if (!strcmp(key, "TUPLTYPE"))
        return pam_tupltype(h, val, err, errsz);
    for (i = 0; i < PAM_NFIELDS; ++i) {
        if (strcmp(key, names[i]) != 0)
            continue;
        if (seen[i]) {
            say(err, errsz, "bad PAM header: %s given twice", key);
            return -1;
        }
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
    say(err, errsz, "bad PAM header: unknown keyword \"%.40s\"", key);
    return -1;
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
    return 0;
}

static int parse_pam(FILE *f, image_header *h, char *err, size_t errsz)
{
    char line[PAM_LINE_MAX];
    unsigned long vals[PAM_NFIELDS] = {0, 0, 0, 0};
    int seen[PAM_NFIELDS] = {0, 0, 0, 0}, too_long;
    if (getc(f) != '\n') {
        say(err, errsz, "bad PAM header: P7 must be followed by a newline");
        return -1;
    }
    for (;;) {
        char *s, *val;
        if (pam_line(f, line, sizeof line, &too_long)) {
            say(err, errsz, too_long ? "bad PAM header: line too long"
                                     : "bad PAM header: no ENDHDR line");
            return -1;
        }
        s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        if (!strcmp(s, "ENDHDR"))
            break;
        val = s + strcspn(s, " \t");
        if (*val)
            *val++ = '\0';
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
    return check_holds_pixels(h, st, err, errsz);
}

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
        say(err, errsz, "raw file is %llu bytes but --raw %lux%lux%lu "
            "--depth %d needs %llu",
            (unsigned long long)st->st_size, (unsigned long)raw->width,
            (unsigned long)raw->height, (unsigned long)raw->channels,
            raw->depth, (unsigned long long)h->total_bytes);
        return -1;
    }
    return 0;
}

int image_parse_header(const char *path, const image_raw_spec *raw,
                       image_header *h, char *err, size_t errsz)
{
    struct stat st;
    FILE *f;
    int rc;
    memset(h, 0, sizeof *h);
    f = open_input(path, &st, err, errsz);
    if (!f)
        return -1;
    rc = raw ? parse_raw(raw, &st, h, err, errsz)
             : parse_netpbm(f, &st, h, err, errsz);
    fclose(f);
    return rc;
}

int image_read_pixels(const char *path, const image_header *h, void *dst,
                      size_t dst_pitch, char *err, size_t errsz)
{
    struct stat st;
    size_t y;
    int rc = 0;
    FILE *f = open_input(path, &st, err, errsz);
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
    fclose(f);
    return rc;
}

/* ---- output header ------------------------------------------------------ */

/* A TUPLTYPE for a PAM written from something that had none. */
static const char *default_tupltype(size_t channels)
{
    switch (channels) {
    case 1: return "GRAYSCALE";
    case 2: return "GRAYSCALE_ALPHA";
    case 3: return "RGB";
    case 4: return "RGB_ALPHA";
    default: return "";
    }
}

int image_output_header(const image_header *in, size_t width, size_t height,
                        image_format to, image_header *out, char *err,
                        size_t errsz)
{
    *out = *in;
    out->format = to ? to : in->format;
    out->width = width;
    out->height = height;
    out->data_offset = 0;
    if (out->format != IMAGE_RAW && in->is_float) {
        say(err, errsz, "--format %s cannot hold 32-bit float samples (use "
            "raw)", image_format_name(out->format));
        return -1;
    }
    if (out->format == IMAGE_PGM && in->channels != 1) {
        say(err, errsz, "--format pgm needs 1 channel, the input has %lu",
            (unsigned long)in->channels);
        return -1;
    }
    if (out->format == IMAGE_PPM && in->channels != 3) {
        say(err, errsz, "--format ppm needs 3 channels, the input has %lu",
            (unsigned long)in->channels);
        return -1;
    }
    if (out->format != IMAGE_PAM)
        out->tupltype[0] = '\0';
    else if (in->format != IMAGE_PAM)
        (void)snprintf(out->tupltype, sizeof out->tupltype, "%s",
                       default_tupltype(in->channels));
    return image_compute_sizes(out, err, errsz);
}

/* ---- atomic write ------------------------------------------------------- */

/* The temporary file being written, for image_signal_cleanup(). */
static char tmp_in_progress[PATH_MAX + 32];
static volatile sig_atomic_t tmp_active;

void image_signal_cleanup(void)
{
    if (tmp_active)
        (void)unlink(tmp_in_progress);
}

static int write_header(FILE *f, const image_header *h)
{
    switch (h->format) {
    case IMAGE_PGM:
    case IMAGE_PPM:
        return fprintf(f, "P%c\n%lu %lu\n%u\n",
                       h->format == IMAGE_PGM ? '5' : '6',
                       (unsigned long)h->width, (unsigned long)h->height,
                       h->maxval) < 0;
    case IMAGE_PAM:
        return fprintf(f, "P7\nWIDTH %lu\nHEIGHT %lu\nDEPTH %lu\nMAXVAL %u\n"
                       "%s%s%sENDHDR\n", (unsigned long)h->width,
                       (unsigned long)h->height, (unsigned long)h->channels,
                       h->maxval, h->tupltype[0] ? "TUPLTYPE " : "",
                       h->tupltype, h->tupltype[0] ? "\n" : "") < 0;
    case IMAGE_RAW:
        return 0;
    }
    return 1;
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

/* Split path into its directory ("." when none) and make the temporary
 * name ".BASE.XXXXXX" beside it. */
static int temp_name(const char *path, char *tmp, size_t n)
{
    const char *slash = strrchr(path, '/');
    int k;
    if (!slash)
        k = snprintf(tmp, n, ".%s.XXXXXX", path);
    else
        k = snprintf(tmp, n, "%.*s/.%s.XXXXXX", (int)(slash - path), path,
                     slash + 1);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

static void sync_dir_of(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int fd;
    if (!slash)
        (void)snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        (void)snprintf(dir, sizeof dir, "/");
    else
        (void)snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd); /* best effort: the data itself is already synced */
        close(fd);
    }
}

static mode_t creation_mode(void)
{
    mode_t m = umask(0);
    (void)umask(m);
    return (mode_t)0666 & ~m;
}

static int write_temp(int fd, const image_header *h, const void *pixels,
                      size_t pitch)
{
    FILE *f = fdopen(fd, "wb");
    int bad;
    if (!f) {
        close(fd);
        return -1;
    }
    bad = fchmod(fd, creation_mode()) != 0 || write_header(f, h) ||
          write_rows(f, h, pixels, pitch) || fflush(f) != 0 ||
          fsync(fileno(f)) != 0;
    if (fclose(f) != 0)
        bad = 1;
    return bad ? -1 : 0;
}

int image_write_atomic(const char *path, const image_header *h,
                       const void *pixels, size_t pitch, char *err,
                       size_t errsz)
{
    int fd, saved;
    if (temp_name(path, tmp_in_progress, sizeof tmp_in_progress)) {
        say(err, errsz, "path is too long");
        return -1;
    }
    tmp_active = 1;
    fd = mkstemp(tmp_in_progress);
    if (fd < 0) {
        saved = errno;
        tmp_active = 0;
        say(err, errsz, "cannot create a temporary file: %s", strerror(saved));
        return -1;
    }
    errno = 0;
    if (write_temp(fd, h, pixels, pitch) != 0 ||
        rename(tmp_in_progress, path) != 0) {
        saved = errno;
        (void)unlink(tmp_in_progress);
        tmp_active = 0;
        say(err, errsz, "cannot write: %s",
            saved ? strerror(saved) : "write error");
        return -1;
    }
    tmp_active = 0;
    sync_dir_of(path);
    return 0;
}

/* ---- crop and compare --------------------------------------------------- */

void image_crop(void *dst, size_t dst_pitch, const void *src,
                size_t src_pitch, size_t x, size_t y, size_t w, size_t h,
                size_t pixel_bytes)
{
    size_t r;
    for (r = 0; r < h; ++r)
        memcpy((char *)dst + r * dst_pitch,
               (const char *)src + (y + r) * src_pitch + x * pixel_bytes,
               w * pixel_bytes);
}

static double sample_value(const image_header *h, const unsigned char *p)
{
    if (h->bytes == 1)
        return p[0];
    if (h->bytes == 2)
        return h->big_endian ? (p[0] << 8 | p[1]) : (p[1] << 8 | p[0]);
    {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
}

int image_compare(const image_header *h, const void *expected,
                  size_t expected_pitch, const void *got, size_t got_pitch,
                  image_diff *d)
{
    size_t y, i;
    for (y = 0; y < h->height; ++y) {
        const unsigned char *e =
            (const unsigned char *)expected + y * expected_pitch;
        const unsigned char *g = (const unsigned char *)got + y * got_pitch;
        if (memcmp(e, g, h->row_bytes) == 0)
            continue;
        for (i = 0; e[i] == g[i]; ++i)
            ;
        i -= i % h->bytes; /* the start of the differing sample */
        d->y = y;
        d->x = i / h->pixel_bytes;
        d->channel = (i % h->pixel_bytes) / h->bytes;
        d->expected = sample_value(h, e + i);
        d->got = sample_value(h, g + i);
        return 1;
    }
    return 0;
}
