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
#include "say.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* netpbm keeps header lines short; a longer one is garbage, not a header. */
#define PAM_LINE_MAX 1024

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

static int write_pnm_header(FILE *f, const image_header *h);
static int write_pam_header(FILE *f, const image_header *h);
static int write_no_header(FILE *f, const image_header *h);
static int pgm_holds(const image_header *in);
static int ppm_holds(const image_header *in);
static int pam_holds(const image_header *in);
static int raw_holds(const image_header *in);
static int png_holds(const image_header *in);
static int tiff_holds(const image_header *in);

/* Every output format in one place: its name, the file extensions that
 * select it (image_format_for_path), what samples it can hold and how its
 * header is written.  A new codec adds one row. */
typedef struct image_codec {
    image_format format;
    const char *name;
    const char *ext[3];                       /* without the dot */
    int (*holds)(const image_header *in);     /* can it hold in's samples */
    const char *needs;                        /* what it holds, for messages */
    int (*write_header)(FILE *f, const image_header *h);
} image_codec;

static const image_codec codecs[] = {
    {IMAGE_PGM, "pgm", {"pgm", NULL, NULL}, pgm_holds,
     "1 channel of 8- or 16-bit samples", write_pnm_header},
    {IMAGE_PPM, "ppm", {"ppm", NULL, NULL}, ppm_holds,
     "3 channels of 8- or 16-bit samples", write_pnm_header},
    {IMAGE_PAM, "pam", {"pam", NULL, NULL}, pam_holds,
     "8- or 16-bit samples", write_pam_header},
    {IMAGE_RAW, "raw", {"raw", NULL, NULL}, raw_holds, "any samples",
     write_no_header},
    /* Library codecs: the code is registered by image_set_codec(); the
     * rows are always here, so that .png names PNG (and says how to get
     * it) in a program built without libpng. */
    {IMAGE_PNG, "png", {"png", NULL, NULL}, png_holds,
     "1 to 4 channels of 8- or 16-bit samples", NULL},
    {IMAGE_TIFF, "tiff", {"tif", "tiff", NULL}, tiff_holds,
     "1 to 4 channels of 8- or 16-bit or 32-bit float samples", NULL},
};
#define NCODECS (sizeof codecs / sizeof *codecs)

static const image_codec *codec_of(image_format f)
{
    size_t i;
    for (i = 0; i < NCODECS; ++i)
        if (codecs[i].format == f)
            return &codecs[i];
    return NULL;
}

static int pgm_holds(const image_header *in)
{
    return !in->is_float && in->channels == 1;
}
static int ppm_holds(const image_header *in)
{
    return !in->is_float && in->channels == 3;
}
static int pam_holds(const image_header *in) { return !in->is_float; }
static int raw_holds(const image_header *in)
{
    (void)in;
    return 1;
}
static int png_holds(const image_header *in)
{
    return !in->is_float && in->channels >= 1 && in->channels <= 4;
}
static int tiff_holds(const image_header *in)
{
    return in->channels >= 1 && in->channels <= 4;
}

static const image_codec_ops *png_ops, *tiff_ops;

int image_set_codec(image_format f, const image_codec_ops *ops)
{
    if (f == IMAGE_PNG)
        png_ops = ops;
    else if (f == IMAGE_TIFF)
        tiff_ops = ops;
    else
        return -1;
    return 0;
}

/* The registered code of a library format, NULL for the built-in ones
 * (and for a library format this program was built without). */
static const image_codec_ops *ops_of(image_format f)
{
    return f == IMAGE_PNG ? png_ops : f == IMAGE_TIFF ? tiff_ops : NULL;
}

static int is_library_format(image_format f)
{
    return f == IMAGE_PNG || f == IMAGE_TIFF;
}

int image_format_built(image_format f)
{
    return codec_of(f) && (!is_library_format(f) || ops_of(f));
}

/* The message for a library format this program was built without. */
static void say_not_built(char *err, size_t errsz, const char *prefix,
                          image_format f);

image_format image_format_from_name(const char *name)
{
    size_t i, j;
    for (i = 0; i < NCODECS; ++i)
        if (!strcmp(name, codecs[i].name))
            return codecs[i].format;
    /* An extension names its format too: "tif". */
    for (i = 0; i < NCODECS; ++i)
        for (j = 0; j < 3 && codecs[i].ext[j]; ++j)
            if (!strcmp(name, codecs[i].ext[j]))
                return codecs[i].format;
    return (image_format)0;
}

const char *image_format_name(image_format f)
{
    const image_codec *c = codec_of(f);
    return c ? c->name : "?";
}

const char *image_format_ext(image_format f)
{
    const image_codec *c = codec_of(f);
    return c ? c->ext[0] : "?";
}

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int same_ext(const char *a, const char *b)
{
    for (; *a && *b; ++a, ++b)
        if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* The extension rule, in one place: the text after the last '.' of the
 * last path component, compared without regard to ASCII case. */
image_format image_format_for_path(const char *path)
{
    const char *base = strrchr(path, '/'), *dot;
    size_t i, j;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return (image_format)0;
    for (i = 0; i < NCODECS; ++i)
        for (j = 0; j < 3 && codecs[i].ext[j]; ++j)
            if (same_ext(dot + 1, codecs[i].ext[j]))
                return codecs[i].format;
    return (image_format)0;
}

int image_format_holds(image_format f, const image_header *in)
{
    const image_codec *c = codec_of(f);
    return c && c->holds(in);
}

void image_formats_holding(const image_header *in, char *buf, size_t n)
{
    size_t i, k = 0, count = 0, total = 0;
    for (i = 0; i < NCODECS; ++i)
        total += codecs[i].holds(in) && image_format_built(codecs[i].format);
    buf[0] = '\0';
    for (i = 0; i < NCODECS && k < n; ++i) {
        int w;
        if (!codecs[i].holds(in) || !image_format_built(codecs[i].format))
            continue;
        ++count;
        w = snprintf(buf + k, n - k, "%s%s",
                     count == 1 ? "" : count == total ? " or " : ", ",
                     codecs[i].name);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

int image_needs_rescale(const image_header *h)
{
    return !h->is_float && h->maxval != 0 &&
           ((h->bytes == 1 && h->maxval != 255) ||
            (h->bytes == 2 && h->maxval != 65535));
}

void image_rescale_row(unsigned char *row, size_t n, const image_header *h,
                       int big_endian)
{
    unsigned long full = h->bytes == 1 ? 255UL : 65535UL, m = h->maxval, v;
    size_t i;
    if (!image_needs_rescale(h))
        return;
    for (i = 0; i < n; ++i) {
        unsigned char *p = row + i * h->bytes;
        if (h->bytes == 1)
            v = p[0];
        else
            v = big_endian ? (unsigned long)p[0] << 8 | p[1]
                           : (unsigned long)p[1] << 8 | p[0];
        v = v >= m ? full : (v * full + m / 2) / m;
        if (h->bytes == 1) {
            p[0] = (unsigned char)v;
        } else if (big_endian) {
            p[0] = (unsigned char)(v >> 8);
            p[1] = (unsigned char)v;
        } else {
            p[1] = (unsigned char)(v >> 8);
            p[0] = (unsigned char)v;
        }
    }
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

/* ---- opening inputs ----------------------------------------------------- */

const char *image_file_type(unsigned mode)
{
    mode_t m = (mode_t)mode;
    if (S_ISREG(m))
        return "a regular file";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
#ifdef S_ISSOCK
    if (S_ISSOCK(m))
        return "a socket";
#endif
#ifdef S_ISLNK
    if (S_ISLNK(m))
        return "a symbolic link";
#endif
    return "not a regular file";
}

/* Standard input ("-"), copied once into an unlinked temporary file so it
 * can be parsed, then read again when its pixels are wanted, as a path
 * can. */
static int stdin_fd = -1;

static int spool_stdin(char *err, size_t errsz)
{
    char tmpl[PATH_MAX], buf[65536];
    const char *dir = getenv("TMPDIR");
    ssize_t k;
    int fd;
    if (stdin_fd >= 0)
        return 0;
    if (snprintf(tmpl, sizeof tmpl, "%s/roicopy-stdin.XXXXXX",
                 dir && *dir ? dir : "/tmp") >= (int)sizeof tmpl) {
        say(err, errsz, "TMPDIR is too long");
        return -1;
    }
    fd = mkstemp(tmpl);
    if (fd < 0) {
        say(err, errsz, "cannot keep standard input in %s: %s", tmpl,
            strerror(errno));
        return -1;
    }
    (void)unlink(tmpl);
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
        say(err, errsz, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    stdin_fd = fd;
    return 0;
}

/* Open a regular file (or "-") for reading.  Never blocks: the type is
 * checked with stat() before open(), open() is non-blocking and fstat()
 * on the descriptor checks again what is really read. */
static FILE *open_input(const char *path, struct stat *st, char *err,
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

/* The file must hold total_bytes of pixels after the header. */
static int check_holds_pixels(const image_header *h, const struct stat *st,
                              char *err, size_t errsz)
{
    unsigned long long have = (unsigned long long)st->st_size;
    unsigned long long off = (unsigned long long)h->data_offset;
    unsigned long long need = (unsigned long long)h->total_bytes;
    if (have < off || have - off < need) {
        say(err, errsz, "needs %llu bytes of pixels, the file has %llu "
            "(after a header of %llu bytes)", need,
            have > off ? have - off : 0ULL, off);
        return -1;
    }
    return 0;
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
 * Values beyond `max` are reported as out of range lo..max. */
static int pnm_number(FILE *f, const char *name, unsigned long lo,
                      unsigned long max, unsigned long *out, char *err,
                      size_t errsz)
{
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
        if (v > (max - (unsigned long)(c - '0')) / 10)
            big = 1;
        else if (!big)
            v = v * 10 + (unsigned long)(c - '0');
    }
    if (c == '#')
        while ((c = getc(f)) != EOF && c != '\n' && c != '\r')
            ;
    if (big) {
        say(err, errsz, "bad header: %s is out of range %lu..%lu", name, lo,
            max);
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
        pnm_number(f, "maxval", 1, 1000000UL, &maxval, err, errsz))
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
    const char *p = val;
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
    for (; *p >= '0' && *p <= '9'; ++p) {
        if (v > (max - (unsigned long)(*p - '0')) / 10) {
            say(err, errsz, "bad PAM header: %s is out of range 1..%lu", key,
                max);
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
        IMAGE_MAX_DIM, IMAGE_MAX_DIM, IMAGE_MAX_DIM, 1000000UL};
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
    int seen[PAM_NFIELDS] = {0, 0, 0, 0}, too_long, c;
    while ((c = getc(f)) != EOF && c != '\n')
        ;
    if (c == EOF) {
        say(err, errsz, "bad PAM header: no ENDHDR line");
        return -1;
    }
    for (;;) {
        char *s, *val;
        if (pam_line(f, line, sizeof line, &too_long)) {
            say(err, errsz, too_long ? "bad PAM header: line too long"
                                     : "bad PAM header: no ENDHDR line");
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
        say(err, errsz, "--raw %lux%lux%lu --depth %d needs %llu bytes of "
            "pixels, the file has %llu", (unsigned long)raw->width,
            (unsigned long)raw->height, (unsigned long)raw->channels,
            raw->depth, (unsigned long long)h->total_bytes,
            (unsigned long long)st->st_size);
        return -1;
    }
    return 0;
}

/* PNG's and TIFF's (and BigTIFF's) signatures, known even without the
 * libraries, to say what a file is that this program cannot read. */
static image_format sniff_library_format(const unsigned char *b, size_t n)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G',
                                             '\r', '\n', 0x1a, '\n'};
    if (png_ops ? png_ops->sniff(b, n)
                : n >= 8 && !memcmp(b, png_sig, 8))
        return IMAGE_PNG;
    if (tiff_ops ? tiff_ops->sniff(b, n)
                 : n >= 4 && ((b[0] == 'I' && b[1] == 'I' &&
                               (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
                              (b[0] == 'M' && b[1] == 'M' && b[2] == 0 &&
                               (b[3] == 42 || b[3] == 43))))
        return IMAGE_TIFF;
    return (image_format)0;
}

static void say_not_built(char *err, size_t errsz, const char *prefix,
                          image_format f)
{
    say(err, errsz,
        "%sbuilt without %s support (install %s and configure again)",
        prefix, f == IMAGE_PNG ? "PNG" : "TIFF",
        f == IMAGE_PNG ? "libpng-dev" : "libtiff-dev");
}

/* The path a library opens for an input: standard input is its spooled
 * copy, reached through /dev/fd. */
static const char *library_path(const char *path, char *buf, size_t n)
{
    if (strcmp(path, "-") != 0)
        return path;
    (void)snprintf(buf, n, "/dev/fd/%d", stdin_fd);
    return buf;
}

static int parse_library(const char *path, image_format fmt, unsigned page,
                         image_header *h, char *err, size_t errsz)
{
    const image_codec_ops *ops = ops_of(fmt);
    char dev[64];
    if (!ops) {
        say_not_built(err, errsz, fmt == IMAGE_PNG ? "a PNG file, but "
                                                   : "a TIFF file, but ",
                      fmt);
        return -1;
    }
    if (page > 0 && fmt != IMAGE_TIFF) {
        say(err, errsz, "no page %u: a PNG file has one page (0)", page);
        return -1;
    }
    if (ops->read_header(library_path(path, dev, sizeof dev), page, h, err,
                         errsz))
        return -1;
    h->format = fmt;
    h->page = page;
    return 0;
}

int image_parse_input(const char *path, const image_raw_spec *raw,
                      unsigned page, image_header *h, char *err,
                      size_t errsz)
{
    unsigned char head[16];
    struct stat st;
    image_format lib;
    size_t n;
    FILE *f;
    int rc;
    memset(h, 0, sizeof *h);
    f = open_input(path, &st, err, errsz);
    if (!f)
        return -1;
    if (raw) {
        rc = parse_raw(raw, &st, h, err, errsz);
        fclose(f);
        return rc;
    }
    n = fread(head, 1, sizeof head, f);
    lib = sniff_library_format(head, n);
    if (lib) {
        fclose(f);
        return parse_library(path, lib, page, h, err, errsz);
    }
    if (page > 0) {
        fclose(f);
        say(err, errsz, "no page %u: a netpbm file has one page (0)", page);
        return -1;
    }
    rewind(f);
    rc = parse_netpbm(f, &st, h, err, errsz);
    fclose(f);
    return rc;
}

int image_parse_header(const char *path, const image_raw_spec *raw,
                       image_header *h, char *err, size_t errsz)
{
    return image_parse_input(path, raw, 0, h, err, errsz);
}

int image_read_pixels(const char *path, const image_header *h, void *dst,
                      size_t dst_pitch, char *err, size_t errsz)
{
    struct stat st;
    size_t y;
    int rc = 0;
    FILE *f;
    if (is_library_format(h->format)) {
        const image_codec_ops *ops = ops_of(h->format);
        char dev[64];
        if (!ops) {
            say_not_built(err, errsz, "", h->format);
            return -1;
        }
        return ops->read_pixels(library_path(path, dev, sizeof dev), h, dst,
                                dst_pitch, err, errsz);
    }
    f = open_input(path, &st, err, errsz);
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

int image_read_rows(const char *path, const image_header *h, size_t y0,
                    size_t nrows, void *dst, size_t dst_pitch, char *err,
                    size_t errsz)
{
    if (is_library_format(h->format) || y0 > h->height ||
        nrows > h->height - y0)
        return image_read_pixels(path, h, dst, dst_pitch, err, errsz);
    return image_read_span(path, h, y0, nrows,
                           (char *)dst + y0 * dst_pitch, dst_pitch, err,
                           errsz);
}

int image_read_span(const char *path, const image_header *h, size_t y0,
                    size_t nrows, void *dst, size_t dst_pitch, char *err,
                    size_t errsz)
{
    struct stat st;
    size_t y;
    off_t base;
    int rc = 0, fd;
    FILE *f;
    if (is_library_format(h->format) || y0 > h->height ||
        nrows > h->height - y0) {
        say(err, errsz, "rows %lu..%lu cannot be read alone from this file",
            (unsigned long)y0, (unsigned long)(y0 + nrows));
        return -1;
    }
    f = open_input(path, &st, err, errsz);
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

/* A PNG or TIFF output reads 1 to 4 channels as gray, gray and alpha, RGB
 * and RGB with alpha: a known tuple type that means something else (CMYK,
 * a GRAYSCALE of 3 planes, RGB with a 4th plane that is not alpha) would
 * be misread.  Unknown tuple types keep their channels' count alone. */
static int tupltype_misread(const image_header *in)
{
    static const struct {
        const char *name;
        size_t depth; /* 0: never */
    } known[] = {{"GRAYSCALE", 1},       {"BLACKANDWHITE", 1},
                 {"GRAYSCALE_ALPHA", 2}, {"BLACKANDWHITE_ALPHA", 2},
                 {"RGB", 3},             {"RGB_ALPHA", 4},
                 {"CMYK", 0},            {"CMYK_ALPHA", 0}};
    size_t i;
    if (in->format != IMAGE_PAM)
        return 0;
    for (i = 0; i < sizeof known / sizeof *known; ++i)
        if (!strcmp(in->tupltype, known[i].name))
            return known[i].depth != in->channels;
    return 0;
}

int image_output_header(const image_header *in, size_t width, size_t height,
                        image_format to, image_header *out, char *err,
                        size_t errsz)
{
    const image_codec *c;
    *out = *in;
    out->format = to ? to : in->format;
    out->width = width;
    out->height = height;
    out->data_offset = 0;
    c = codec_of(out->format);
    if (!c) {
        say(err, errsz, "unknown output format %d", (int)out->format);
        return -1;
    }
    if (!image_format_built(out->format)) {
        say_not_built(err, errsz, out->format == IMAGE_PNG ? "png: "
                                                           : "tiff: ",
                      out->format);
        return -1;
    }
    if (!c->holds(in)) {
        char can[128];
        image_formats_holding(in, can, sizeof can);
        say(err, errsz, "%s holds %s, not %lu channel%s of %s%lu-bit samples;"
            " %s can", c->name, c->needs, (unsigned long)in->channels,
            in->channels == 1 ? "" : "s", in->is_float ? "float " : "",
            (unsigned long)in->bytes * 8, can);
        return -1;
    }
    if (is_library_format(out->format) && tupltype_misread(in)) {
        say(err, errsz, "%s cannot represent tuple type \"%s\" with %lu "
            "channel%s: its channels would be read as %s; pam or raw can "
            "hold it", c->name, in->tupltype, (unsigned long)in->channels,
            in->channels == 1 ? "" : "s", default_tupltype(in->channels));
        return -1;
    }
    if (out->format != IMAGE_PAM)
        out->tupltype[0] = '\0';
    else if (in->format != IMAGE_PAM)
        (void)snprintf(out->tupltype, sizeof out->tupltype, "%s",
                       default_tupltype(in->channels));
    return image_compute_sizes(out, err, errsz);
}

/* ---- writing ------------------------------------------------------------ */

/* The temporary file being written, for the signal handler. */
/* The temporary files being written, one entry per writing thread (roicopy
 * writes outputs on several threads); the signal handler removes every
 * active one.  An entry is claimed with an atomic exchange, filled, then
 * marked active. */
#define IMAGE_MAX_WRITERS 128
static char tmp_names[IMAGE_MAX_WRITERS][PATH_MAX + 32];
static volatile sig_atomic_t tmp_live[IMAGE_MAX_WRITERS];
static int tmp_claimed[IMAGE_MAX_WRITERS];

static int tmp_claim(void)
{
    int i;
    for (;;) {
        for (i = 0; i < IMAGE_MAX_WRITERS; ++i) {
            int zero = 0;
            if (__atomic_compare_exchange_n(&tmp_claimed[i], &zero, 1, 0,
                                            __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
                return i;
        }
        (void)sched_yield(); /* more writers than entries: wait for one */
    }
}

static void tmp_unclaim(int i)
{
    tmp_live[i] = 0;
    __atomic_store_n(&tmp_claimed[i], 0, __ATOMIC_SEQ_CST);
}

void (*image_test_write_hook)(const char *tmp);

int image_mkstemp_tracked(const char *tmpl, const char **name, int *slot)
{
    int i = tmp_claim(), fd, saved;
    size_t n = strlen(tmpl);
    if (n >= sizeof tmp_names[0]) {
        tmp_unclaim(i);
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp_names[i], tmpl, n + 1);
    tmp_live[i] = 1; /* before the file exists: a signal now unlinks nothing */
    fd = mkstemp(tmp_names[i]);
    if (fd < 0) {
        saved = errno;
        tmp_unclaim(i);
        errno = saved;
        return -1;
    }
    *name = tmp_names[i];
    *slot = i;
    return fd;
}

void image_temp_release(int slot)
{
    if (slot >= 0 && slot < IMAGE_MAX_WRITERS)
        tmp_unclaim(slot);
}

void image_signal_cleanup(void)
{
    int i;
    for (i = 0; i < IMAGE_MAX_WRITERS; ++i)
        if (tmp_live[i])
            (void)unlink(tmp_names[i]);
}

static void on_fatal_signal(int sig)
{
    image_signal_cleanup();
    (void)signal(sig, SIG_DFL);
    (void)raise(sig); /* delivered, with its default action, on return */
}

void image_install_signal_cleanup(void)
{
    /* Every signal whose default action ends the process and that can be
     * caught. */
    static const int sigs[] = {
        SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
        SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU,
        SIGVTALRM, SIGPROF, SIGSYS,
#ifdef SIGPOLL
        SIGPOLL,
#endif
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
#ifdef SIGPWR
        SIGPWR,
#endif
    };
    struct sigaction sa, old;
    size_t i;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    /* A signal ignored at start (nohup, a shell's background job) stays
     * ignored: it would not have ended the process. */
    for (i = 0; i < sizeof sigs / sizeof *sigs; ++i)
        if (sigaction(sigs[i], NULL, &old) == 0 &&
            !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue;
        else
            (void)sigaction(sigs[i], &sa, NULL);
    /* A write past RLIMIT_FSIZE then fails with EFBIG, and the temporary
     * file is removed like after any failed write. */
    (void)signal(SIGXFSZ, SIG_IGN);
}

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

static int write_no_header(FILE *f, const image_header *h)
{
    (void)f;
    (void)h;
    return 0;
}

static int write_header(FILE *f, const image_header *h)
{
    const image_codec *c = codec_of(h->format);
    return c && c->write_header ? c->write_header(f, h) : 1;
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

/* The temporary name ".BASE.XXXXXX" beside path; BASE is cut short so
 * that the name fits in NAME_MAX whatever the length of path's own name. */
static int temp_name(const char *path, char *tmp, size_t n)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    int keep = (int)strlen(base), k;
    if (keep > IMAGE_NAME_MAX - 8)
        keep = IMAGE_NAME_MAX - 8;
    if (!slash)
        k = snprintf(tmp, n, ".%.*s.XXXXXX", keep, base);
    else
        k = snprintf(tmp, n, "%.*s/.%.*s.XXXXXX", (int)(slash - path), path,
                     keep, base);
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

/* umask() can only be read by setting it.  Writers on several threads
 * (after image_defer_dir_sync(1)) use the value read then, so that none
 * sees, or leaves, a umask of 0; a single writer reads it each time. */
static mode_t umask_value;
static int dirs_deferred;

static mode_t read_umask(void)
{
    mode_t m = umask(0);
    (void)umask(m);
    return m;
}

static mode_t creation_mode(void)
{
    return (mode_t)0666 & ~(dirs_deferred ? umask_value : read_umask());
}

/* Deferred directory syncs (image_defer_dir_sync): the directories of the
 * outputs renamed since, each once. */
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static char **dirs_pending;
static size_t ndirs_pending;

void image_defer_dir_sync(int on)
{
    if (on)
        umask_value = read_umask(); /* before any writer thread starts */
    dirs_deferred = on;
}

static void dir_name(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        (void)snprintf(dir, n, ".");
    else if (slash == path)
        (void)snprintf(dir, n, "/");
    else
        (void)snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* Remember path's directory for image_sync_dirs(); 0, or -1 when out of
 * memory (the caller then syncs it at once). */
static int defer_dir(const char *path)
{
    char dir[PATH_MAX], *copy, **grown;
    size_t i;
    int rc = 0;
    dir_name(path, dir, sizeof dir);
    pthread_mutex_lock(&dirs_lock);
    for (i = 0; i < ndirs_pending; ++i)
        if (!strcmp(dirs_pending[i], dir))
            break;
    if (i == ndirs_pending) {
        copy = strdup(dir);
        grown = copy ? (char **)realloc(dirs_pending, (ndirs_pending + 1) *
                                                          sizeof *grown)
                     : NULL;
        if (grown) {
            dirs_pending = grown;
            dirs_pending[ndirs_pending++] = copy;
        } else {
            free(copy);
            rc = -1;
        }
    }
    pthread_mutex_unlock(&dirs_lock);
    return rc;
}

int image_sync_dirs(char *err, size_t errsz)
{
    size_t i;
    int rc = 0;
    pthread_mutex_lock(&dirs_lock);
    for (i = 0; i < ndirs_pending; ++i) {
        int fd = open(dirs_pending[i], O_RDONLY);
        if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
            if (rc == 0)
                say(err, errsz, "%s: cannot sync the directory: %s",
                    dirs_pending[i], strerror(errno));
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
        free(dirs_pending[i]);
    }
    free(dirs_pending);
    dirs_pending = NULL;
    ndirs_pending = 0;
    pthread_mutex_unlock(&dirs_lock);
    return rc;
}

/* A library format into fd, which is closed: the codec's own message
 * in err on failure (errno 0), else errno says what failed. */
static int write_library_fd(int fd, const image_header *h,
                            const void *pixels, size_t pitch, int sync,
                            char *err, size_t errsz)
{
    const image_codec_ops *ops = ops_of(h->format);
    int saved;
    if (!ops) {
        close(fd);
        say_not_built(err, errsz, "", h->format);
        errno = 0;
        return -1;
    }
    if (ops->write_fd(fd, h, pixels, pitch, err, errsz) != 0) {
        close(fd);
        errno = 0;
        return -1;
    }
    if ((sync && fsync(fd) != 0) || close(fd) != 0) {
        saved = errno;
        if (sync)
            (void)close(fd); /* EBADF after a successful close: harmless */
        errno = saved;
        return -1;
    }
    return 0;
}

/* Header and rows into fd, which is closed; sync only for files.  A
 * codec's own failure leaves its sentence in err and errno 0. */
static int write_fd(int fd, const image_header *h, const void *pixels,
                    size_t pitch, int sync, char *err, size_t errsz)
{
    FILE *f;
    int bad;
    if (is_library_format(h->format))
        return write_library_fd(fd, h, pixels, pitch, sync, err, errsz);
    f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        return -1;
    }
    bad = write_header(f, h) || write_rows(f, h, pixels, pitch) ||
          fflush(f) != 0 || (sync && fsync(fileno(f)) != 0);
    if (fclose(f) != 0)
        bad = 1;
    return bad ? -1 : 0;
}

/* "N" of the descriptor names below, or -1: only digits, no sign. */
static int fd_number(const char *s)
{
    long v = 0;
    if (!*s)
        return -1;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9' || v > 65535)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v > 65535 ? -1 : (int)v;
}

static int fd_name(const char *p)
{
    char self[64];
    size_t n;
    if (!strcmp(p, "/dev/stdout"))
        return 1;
    if (!strcmp(p, "/dev/stderr"))
        return 2;
    if (!strcmp(p, "/dev/stdin"))
        return 0;
    if (!strncmp(p, "/dev/fd/", 8))
        return fd_number(p + 8);
    if (!strncmp(p, "/proc/self/fd/", 14))
        return fd_number(p + 14);
    if (!strncmp(p, "/proc/thread-self/fd/", 21))
        return fd_number(p + 21);
    n = (size_t)snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    if (n < sizeof self && !strncmp(p, self, n))
        return fd_number(p + n);
    return -1;
}

int image_output_fd(const char *path)
{
    char cur[PATH_MAX], link[PATH_MAX];
    struct stat st;
    int hops, fd;
    ssize_t k;
    if (!strcmp(path, "-"))
        return 1;
    if (strlen(path) >= sizeof cur)
        return -1;
    memcpy(cur, path, strlen(path) + 1);
    /* Follow symbolic links of the last component (/dev/stdout is one to
     * /proc/self/fd/1, whose own link names the file behind the
     * descriptor, not a path to rename over). */
    for (hops = 0; hops < 40; ++hops) {
        if ((fd = fd_name(cur)) >= 0)
            return fd;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return -1;
        k = readlink(cur, link, sizeof link - 1);
        if (k < 0)
            return -1;
        link[k] = '\0';
        if (link[0] == '/') {
            memcpy(cur, link, (size_t)k + 1);
        } else {
            char *slash = strrchr(cur, '/');
            size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
            if (keep + (size_t)k + 1 > sizeof cur)
                return -1;
            memcpy(cur + keep, link, (size_t)k + 1);
        }
    }
    return -1;
}

/* Standard output, a descriptor named by path (/dev/stdout, /dev/fd/N),
 * a character device, a FIFO or a socket: written into, never replaced
 * (there is nothing to rename over). */
static int write_in_place(const char *path, const image_header *h,
                          const void *pixels, size_t pitch, char *err,
                          size_t errsz)
{
    int n = image_output_fd(path);
    int fd = n >= 0 ? dup(n) : open(path, O_WRONLY | O_NOCTTY);
    int saved;
    if (fd < 0) {
        say(err, errsz, "%s", strerror(errno));
        return -1;
    }
    errno = 0;
    if (err && errsz)
        err[0] = '\0';
    if (write_fd(fd, h, pixels, pitch, 0, err, errsz) != 0) {
        saved = errno;
        if (saved || !err || !*err)
            say(err, errsz, "cannot write: %s",
                saved ? strerror(saved) : "write error");
        return -1;
    }
    return 0;
}

int image_write_atomic(const char *path, const image_header *h,
                       const void *pixels, size_t pitch, char *err,
                       size_t errsz)
{
    struct stat st;
    mode_t mode;
    char tmpl[sizeof tmp_names[0]];
    const char *tmp;
    int fd, saved, exists, slot;
    if (image_output_fd(path) >= 0)
        return write_in_place(path, h, pixels, pitch, err, errsz);
    exists = stat(path, &st) == 0;
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
                   S_ISSOCK(st.st_mode)))
        return write_in_place(path, h, pixels, pitch, err, errsz);
    if (exists && !S_ISREG(st.st_mode)) {
        say(err, errsz, "is %s; only regular files, character devices, "
            "FIFOs and sockets are written",
            image_file_type((unsigned)st.st_mode));
        return -1;
    }
    /* An existing output keeps its permissions (and, where allowed, its
     * owner); a new one gets 0666 less the umask, as open() would. */
    mode = exists ? (st.st_mode & 07777) : creation_mode();
    if (temp_name(path, tmpl, sizeof tmpl)) {
        say(err, errsz, "path is too long");
        return -1;
    }
    fd = image_mkstemp_tracked(tmpl, &tmp, &slot);
    if (fd < 0) {
        say(err, errsz, "cannot create a temporary file: %s", strerror(errno));
        return -1;
    }
    /* Keep the owner where allowed, else at least the group; neither is
     * fatal (an ordinary user cannot give a file away). */
    if (exists && fchown(fd, st.st_uid, st.st_gid) != 0 &&
        fchown(fd, (uid_t)-1, st.st_gid) != 0)
        errno = 0;
    if (image_test_write_hook)
        image_test_write_hook(tmp);
    errno = 0;
    if (err && errsz)
        err[0] = '\0';
    if (fchmod(fd, mode) != 0 ||
        write_fd(fd, h, pixels, pitch, 1, err, errsz) != 0 ||
        rename(tmp, path) != 0) {
        saved = errno;
        (void)unlink(tmp);
        tmp_unclaim(slot);
        if (saved || !err || !*err)
            say(err, errsz, "cannot write: %s",
                saved ? strerror(saved) : "write error");
        return -1;
    }
    tmp_unclaim(slot);
    if (!dirs_deferred || defer_dir(path) != 0)
        sync_dir_of(path);
    return 0;
}

/* ---- untrusted text ------------------------------------------------------ */

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

const char *image_escape(const char *text, char *buf, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t k = 0, len;
    if (n == 0)
        return buf;
    while (*s) {
        char piece[8];
        size_t plen;
        len = utf8_len(s);
        if (len > 1) {
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
