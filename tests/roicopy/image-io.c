/* SPDX-License-Identifier: MIT */
/* roicopy's image reader and writer, without a GPU: every bad header is
 * refused with the right sentence; what is written reads back the same in
 * every format and depth, with 16-bit samples in the right byte order; a
 * failed atomic write leaves the old output and no temporary file; the CPU
 * crop and the compare (the --verify reference) find the first difference. */
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image-files.h"
#include "../../tools/input.h"

static char err[IMAGE_ERR_MAX];

/* A header followed by `pixels` bytes of pattern. */
static void put_image(const char *name, const char *header, size_t pixels)
{
    size_t hn = strlen(header), i;
    unsigned char *buf = (unsigned char *)malloc(hn + pixels + 1);
    if (!buf)
        bail("out of memory");
    memcpy(buf, header, hn);
    for (i = 0; i < pixels; ++i)
        buf[hn + i] = (unsigned char)(i * 7 + 3);
    put_file(name, buf, hn + pixels);
    free(buf);
}

static void bad_header(const char *name, const char *header, size_t pixels,
                       const char *why)
{
    image_header h;
    int rc;
    put_image(name, header, pixels);
    err[0] = '\0';
    rc = image_parse_header(path_of(name), NULL, &h, err, sizeof err);
    if (!ok(rc == -1 && strstr(err, why) != NULL, "%s: refused (%s)", name,
            why))
        diag("  rc %d, message \"%s\"", rc, err);
}

static void good_header(const char *name, const char *header, size_t pixels,
                        size_t w, size_t hgt, size_t c, size_t bytes)
{
    image_header h;
    int rc;
    put_image(name, header, pixels);
    err[0] = '\0';
    rc = image_parse_header(path_of(name), NULL, &h, err, sizeof err);
    if (!ok(rc == 0 && h.width == w && h.height == hgt && h.channels == c &&
                h.bytes == bytes && h.data_offset == (long)strlen(header),
            "%s: %lux%lux%lu, %lu-byte samples, pixels at %lu", name,
            (unsigned long)w, (unsigned long)hgt, (unsigned long)c,
            (unsigned long)bytes, (unsigned long)strlen(header)))
        diag("  rc %d, message \"%s\"", rc, err);
}

static void test_headers(void)
{
    good_header("ok.pgm", "P5\n3 2\n255\n", 6, 3, 2, 1, 1);
    good_header("comments.pgm", "P5 # c1\n#c2\n3#c3\n 2\n#c4\n255\n", 6, 3, 2,
                1, 1);
    good_header("ok16.ppm", "P6\n2 2\n65535\n", 24, 2, 2, 3, 2);
    good_header("maxval1.pgm", "P5 1 1 1 ", 1, 1, 1, 1, 1);
    good_header("ok.pam", "P7\n# c\nWIDTH 2\nHEIGHT 1\nDEPTH 5\nMAXVAL 300\n"
                "TUPLTYPE X\nTUPLTYPE Y\nENDHDR\n", 20, 2, 1, 5, 2);
    bad_header("empty.pgm", "", 0, "empty file");
    bad_header("magic.pgm", "P9\n1 1\n255\n", 1, "bad magic");
    bad_header("png.pgm", "\x89PNG\r\n", 8, "bad magic");
    bad_header("plain.pgm", "P2\n1 1\n255\n", 4, "P2) is not supported");
    bad_header("zero-w.pgm", "P5\n0 4\n255\n", 0, "zero dimension");
    bad_header("zero-h.ppm", "P6\n4 0\n255\n", 0, "zero dimension");
    bad_header("neg.pgm", "P5\n-4 4\n255\n", 16, "negative width");
    bad_header("huge.pgm", "P5\n99999999999 4\n255\n", 16,
               "width 99999999999 is out of range 1..2147483647");
    bad_header("wide.ppm", "P6\n2000000000 1\n255\n", 16, "too long");
    bad_header("overflow.pam", "P7\nWIDTH 2147483647\nHEIGHT 2147483647\n"
               "DEPTH 2147483647\nMAXVAL 65535\nENDHDR\n", 16, "too long");
    bad_header("total.pgm", "P5\n2147483647 2147483647\n255\n", 16,
               "needs 4611686014132420609 bytes of pixels, the file has 16");
    bad_header("maxval0.pgm", "P5\n1 1\n0\n", 1, "maxval 0 is out of range");
    bad_header("maxval-big.pgm", "P5\n1 1\n65536\n", 2,
               "maxval 65536 is out of range 1..65535");
    bad_header("maxval-huge.pgm", "P5\n1 1\n1000001\n", 2,
               "maxval 1000001 is out of range 1..65535");
    /* libnetpbm reads maxval's terminator, whatever it is: here the end
     * of the file, so the one pixel is missing. */
    bad_header("no-sep.pgm", "P5\n1 1\n255", 0,
               "needs 1 byte of pixels, the file has 0");
    bad_header("letters.pgm", "P5\nab 1\n255\n", 1, "expected width");
    bad_header("short.pgm", "P5\n4 4\n255\n", 15,
               "needs 16 bytes of pixels, the file has 15");
    bad_header("short16.pgm", "P5\n4 4\n65535\n", 31,
               "needs 32 bytes of pixels, the file has 31");
    bad_header("no-header.pgm", "P5\n4", 0, "truncated header");
    bad_header("no-endhdr.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n",
               1, "no ENDHDR");
    bad_header("depth0.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 0\nMAXVAL 255\n"
               "ENDHDR\n", 1, "DEPTH is 0");
    bad_header("no-depth.pam", "P7\nWIDTH 1\nHEIGHT 1\nMAXVAL 255\nENDHDR\n",
               1, "no DEPTH");
    /* libnetpbm keeps the last of two WIDTH lines. */
    good_header("twice.pam", "P7\nWIDTH 9\nWIDTH 1\nHEIGHT 1\nDEPTH 1\n"
                "MAXVAL 255\nENDHDR\n", 1, 1, 1, 1, 1);
    bad_header("unknown.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
               "COLOR red\nENDHDR\n", 1, "unknown keyword \"COLOR\"");
    bad_header("junk.pam", "P7\nWIDTH 1x\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
               "ENDHDR\n", 1, "WIDTH needs a number, found \"1x\"");
    bad_header("maxval0.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 0\n"
               "ENDHDR\n", 1, "maxval 0 is out of range 1..65535");
    bad_header("short.pam", "P7\nWIDTH 2\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\n"
               "ENDHDR\n", 15, "needs 16 bytes of pixels, the file has 15");
}

static void test_inputs(void)
{
    image_header h;
    image_raw_spec raw = {4, 3, 2, 16};
    ok(image_parse_header(path_of("missing.pgm"), NULL, &h, err,
                          sizeof err) == -1 &&
           strstr(err, "No such file"), "a missing input is named as such");
    ok(image_parse_header(dir, NULL, &h, err, sizeof err) == -1 &&
           strstr(err, "is a directory"), "a directory is refused");
    ok(image_parse_header("/dev/null", NULL, &h, err, sizeof err) == -1 &&
           strstr(err, "is a character device"), "a device is refused, named");
    put_image("ok.raw", "", 48);
    ok(image_parse_header(path_of("ok.raw"), &raw, &h, err, sizeof err) == 0 &&
           h.total_bytes == 48 && h.bytes == 2 && h.format == IMAGE_RAW,
       "raw 4x3x2 at 16 bits is 48 bytes");
    raw.depth = 8;
    ok(image_parse_header(path_of("ok.raw"), &raw, &h, err, sizeof err) ==
               -1 && strstr(err, "needs 24 bytes of pixels, the file has 48"),
       "raw size disagreeing with --raw is refused");
    raw.depth = 32;
    ok(image_parse_header(path_of("ok.raw"), &raw, &h, err, sizeof err) ==
               -1 && strstr(err, "needs 96"),
       "raw too short for --depth 32 is refused");
}

/* Write h (pixels p, tight) to name, check the file's first bytes, read it
 * back and compare. */
static void round_trip(const char *name, image_header *h, const void *p,
                       const char *head)
{
    size_t head_len = strlen(head);
    image_header back;
    unsigned char file[512], got[256];
    FILE *f;
    size_t n;
    image_diff d;
    image_raw_spec raw;
    if (image_compute_sizes(h, err, sizeof err))
        bail("%s: %s", name, err);
    ok(image_write_atomic(path_of(name), h, p, h->row_bytes, err,
                          sizeof err) == 0, "%s: written", name);
    f = fopen(path_of(name), "rb");
    n = f ? fread(file, 1, sizeof file, f) : 0;
    if (f)
        fclose(f);
    ok(n == head_len + h->total_bytes && memcmp(file, head, head_len) == 0,
       "%s: header bytes and size are as netpbm writes them", name);
    raw.width = h->width;
    raw.height = h->height;
    raw.channels = h->channels;
    raw.depth = (int)h->bytes * 8;
    if (image_parse_header(path_of(name), h->format == IMAGE_RAW ? &raw : NULL,
                           &back, err, sizeof err) ||
        image_read_pixels(path_of(name), &back, got, back.row_bytes, err,
                          sizeof err)) {
        ok(0, "%s: reads back (%s)", name, err);
        return;
    }
    /* Compare in the byte order the reader reports; convert the original
     * when it was written in the other order. */
    if (back.big_endian != h->big_endian && h->bytes == 2) {
        unsigned char sw[256];
        size_t i;
        for (i = 0; i < h->total_bytes; i += 2) {
            sw[i] = ((const unsigned char *)p)[i + 1];
            sw[i + 1] = ((const unsigned char *)p)[i];
        }
        ok(!image_compare(&back, sw, back.row_bytes, got, back.row_bytes, &d),
           "%s: samples read back equal (byte order converted)", name);
    } else {
        ok(!image_compare(&back, p, back.row_bytes, got, back.row_bytes, &d),
           "%s: samples read back equal", name);
    }
    is_string(h->tupltype, back.tupltype, "%s: tupltype kept", name);
}

static int host_big_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 0;
}

/* Each format and depth, 3x2: the file, and its header as netpbm writes
 * it.  The last: big-endian samples in memory written as raw land in host
 * order on disk. */
static const struct {
    const char *name;
    image_format format;
    size_t channels, bytes;
    int big_endian;
    const char *tupltype, *head;
} writes[] = {
    {"w8.pgm", IMAGE_PGM, 1, 1, 0, "", "P5\n3 2\n255\n"},
    {"w16.ppm", IMAGE_PPM, 3, 2, 1, "", "P6\n3 2\n65535\n"},
    {"w.pam", IMAGE_PAM, 4, 1, 0, "RGB_ALPHA",
     "P7\nWIDTH 3\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"},
    {"w16be.raw", IMAGE_RAW, 2, 2, 1, "", ""},
};

static void test_writes(void)
{
    unsigned char px[64];
    image_header h;
    size_t i;
    for (i = 0; i < sizeof px; ++i)
        px[i] = (unsigned char)(i * 37 + 11);
    for (i = 0; i < sizeof writes / sizeof writes[0]; ++i) {
        header_of(&h, writes[i].format, 3, 2, writes[i].channels, writes[i].bytes,
                  writes[i].big_endian);
        strcpy(h.tupltype, writes[i].tupltype);
        round_trip(writes[i].name, &h, px, writes[i].head);
    }
    {
        unsigned char file[4];
        FILE *f = fopen(path_of("w16be.raw"), "rb");
        size_t n = f ? fread(file, 1, 4, f) : 0;
        if (f)
            fclose(f);
        ok(n == 4 && file[0] == px[host_big_endian() ? 0 : 1] &&
               file[1] == px[host_big_endian() ? 1 : 0],
           "16-bit big-endian samples land in host order in a raw file");
    }
}

/* The entries of d (but . and ..); dot_only: only the dot files. */
static int count_entries(const char *d, int dot_only)
{
    DIR *dp = opendir(d);
    struct dirent *e;
    int n = 0;
    if (!dp)
        return -1;
    while ((e = readdir(dp)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (!dot_only || e->d_name[0] == '.'))
            ++n;
    closedir(dp);
    return n;
}

static void test_atomic(void)
{
    static unsigned char big[1 << 16];
    char sub[128], out[160], buf[16];
    image_header h;
    struct rlimit old, lim;
    FILE *f;
    size_t n;
    header_of(&h, IMAGE_PGM, 256, 256, 1, 1, 0);
    (void)snprintf(sub, sizeof sub, "%s/atomic", dir);
    (void)snprintf(out, sizeof out, "%s/out.pgm", sub);
    if (mkdir(sub, 0777) != 0)
        bail("mkdir %s", sub);
    f = fopen(out, "wb");
    if (!f || fputs("precious", f) < 0 || fclose(f) != 0)
        bail("cannot write %s", out);
    /* A write that fails half-way: the file size limit stops it. */
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 1000;
    setrlimit(RLIMIT_FSIZE, &lim);
    ok(image_write_atomic(out, &h, big, h.row_bytes, err, sizeof err) == -1,
       "a write cut short fails (%s)", err);
    setrlimit(RLIMIT_FSIZE, &old);
    f = fopen(out, "rb");
    n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    ok(n == 8 && memcmp(buf, "precious", 8) == 0,
       "the existing output keeps its bytes");
    is_int(1, count_entries(sub, 0), "no temporary file is left behind");
    (void)snprintf(out, sizeof out, "%s/no/such/dir/out.pgm", dir);
    ok(image_write_atomic(out, &h, big, h.row_bytes, err, sizeof err) == -1 &&
           strstr(err, "temporary"), "a missing directory fails (%s)", err);
    ok(image_write_atomic(sub, &h, big, h.row_bytes, err, sizeof err) == -1,
       "a directory as output fails");
    is_int(1, count_entries(sub, 0), "still no temporary file");
    (void)snprintf(out, sizeof out, "%s/out.pgm", sub);
    ok(image_write_atomic(out, &h, big, h.row_bytes, err, sizeof err) == 0,
       "a write that can complete replaces the output");
    {
        struct stat st;
        ok(stat(out, &st) == 0 && (size_t)st.st_size == 15 + h.total_bytes,
           "with the whole image");
    }
}

static void test_crop_compare(void)
{
    /* 4x3 image, 2 channels of 16-bit big-endian samples. */
    unsigned char img[3][16], crop[2][8], want[2][8];
    image_header h;
    image_diff d = {0, 0, 0, 0, 0};
    size_t x, y;
    for (y = 0; y < 3; ++y)
        for (x = 0; x < 16; ++x)
            img[y][x] = (unsigned char)(y * 16 + x);
    image_crop(crop, sizeof crop[0], img, sizeof img[0], 2, 1, 2, 2, 4);
    for (y = 0; y < 2; ++y)
        for (x = 0; x < 8; ++x)
            want[y][x] = (unsigned char)((y + 1) * 16 + 8 + x);
    ok(memcmp(crop, want, sizeof want) == 0, "crop 2x2+2+1 of 4-byte pixels");
    header_of(&h, (image_format)0, 2, 2, 2, 2, 1);
    ok(image_compare(&h, want, 8, crop, 8, &d) == 0, "equal crops compare equal");
    crop[1][7] ^= 1; /* x 1, y 1, channel 1, low byte */
    ok(image_compare(&h, want, 8, crop, 8, &d) == 1 && d.x == 1 && d.y == 1 &&
           d.channel == 1, "first difference at x 1, y 1, channel 1");
    ok(d.expected == ((want[1][6] << 8) | want[1][7]) &&
           d.got == ((crop[1][6] << 8) | crop[1][7]),
       "both 16-bit values reported (%g, %g)", d.expected, d.got);
    crop[0][2] ^= 0x80; /* earlier: x 0, y 0, channel 1 high byte */
    ok(image_compare(&h, want, 8, crop, 8, &d) == 1 && d.x == 0 && d.y == 0 &&
           d.channel == 1, "the first difference in row order wins");
    {
        float a[2] = {1.5f, -2.25f}, b[2] = {1.5f, 3.0f};
        h.width = 2;
        h.height = 1;
        h.channels = 1;
        h.bytes = 4;
        h.is_float = 1;
        h.big_endian = host_big_endian();
        image_compute_sizes(&h, err, sizeof err);
        ok(image_compare(&h, a, 8, b, 8, &d) == 1 && d.x == 1 &&
               d.expected == -2.25 && d.got == 3.0,
           "float samples are reported as floats");
    }
}

static void test_output_header(void)
{
    image_header in, out;
    memset(&in, 0, sizeof in);
    in.format = IMAGE_PAM;
    in.width = 10;
    in.height = 10;
    in.channels = 4;
    in.bytes = 1;
    in.maxval = 255;
    strcpy(in.tupltype, "RGB_ALPHA");
    ok(image_output_header(&in, 5, 4, IMAGE_PPM, &out, err, sizeof err) ==
               -1 && strstr(err, "ppm holds 3 channels") &&
               strstr(err, "not 4 channels of 8-bit samples; pam or raw can"),
       "4 channels cannot become a PPM");
    ok(image_output_header(&in, 5, 4, IMAGE_PGM, &out, err, sizeof err) ==
               -1 && strstr(err, "pgm holds 1 channel") &&
               strstr(err, "pam or raw can"),
       "4 channels cannot become a PGM");
    ok(image_output_header(&in, 5, 4, (image_format)0, &out, err,
                           sizeof err) == 0 && out.format == IMAGE_PAM &&
           out.width == 5 && out.height == 4 && out.row_bytes == 20 &&
           !strcmp(out.tupltype, "RGB_ALPHA"),
       "keeping the format keeps the tupltype, with the ROI's size");
    in.format = IMAGE_PGM;
    in.channels = 1;
    in.tupltype[0] = '\0';
    ok(image_output_header(&in, 5, 4, IMAGE_PAM, &out, err, sizeof err) ==
               0 && !strcmp(out.tupltype, "GRAYSCALE"),
       "a PGM written as PAM is GRAYSCALE");
    in.format = IMAGE_RAW;
    in.bytes = 4;
    in.is_float = 1;
    ok(image_output_header(&in, 5, 4, IMAGE_PGM, &out, err, sizeof err) ==
               -1 && strstr(err, "float 32-bit samples; raw can"),
       "float samples cannot become PGM (%s)", err);
}

/* Headers libnetpbm (pamfile) accepts, and what it requires of tuple
 * types (issue 13, items 6 and 7). */
static void test_netpbm_fidelity(void)
{
    image_header h;
    good_header("maxval-comment.pgm", "P5\n3 2\n255#c\n", 6, 3, 2, 1, 1);
    good_header("maxval-comment-cr.pgm", "P5\n3 2\n255#c\r", 6, 3, 2, 1, 1);
    good_header("x-separated.pgm", "P5\n3x2\n255\n", 6, 3, 2, 1, 1);
    /* libnetpbm skips only space, tab, CR and LF before a number (pamfile
     * refuses a form feed there), but takes any one byte after it. */
    good_header("vt-ff-after.pgm", "P5 3\f2\v255\f", 6, 3, 2, 1, 1);
    bad_header("vt-before.pgm", "P5\v3 2\n255\n", 6,
               "bad header: expected width, found a control");
    bad_header("ff-before.pgm", "P5 3\n\f2\n255\n", 6,
               "bad header: expected height, found a control");
    good_header("crlf.pam", "P7\r\nWIDTH 2\r\nHEIGHT 1\r\nDEPTH 1\r\n"
                "MAXVAL 255\r\nENDHDR\r\n", 2, 2, 1, 1, 1);
    good_header("space.pam", "P7 \nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
                "ENDHDR\n", 2, 2, 1, 1, 1);
    good_header("plus.pam", "P7\nWIDTH +2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
                "ENDHDR junk\n", 2, 2, 1, 1, 1);
    good_header("rgb4.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\n"
                "TUPLTYPE RGB\nENDHDR\n", 4, 1, 1, 4, 1);
    good_header("bw.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 1\n"
                "TUPLTYPE BLACKANDWHITE\nENDHDR\n", 1, 1, 1, 1, 1);
    good_header("ctrl.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
                "TUPLTYPE a\001b\nENDHDR\n", 1, 1, 1, 1, 1);
    bad_header("rgba1.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
               "TUPLTYPE RGB_ALPHA\nENDHDR\n", 1,
               "TUPLTYPE RGB_ALPHA needs DEPTH 4 or more, this has 1");
    bad_header("rgb2.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 2\nMAXVAL 255\n"
               "TUPLTYPE RGB\nENDHDR\n", 2,
               "TUPLTYPE RGB needs DEPTH 3 or more, this has 2");
    bad_header("ga1.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
               "TUPLTYPE  GRAYSCALE_ALPHA \nENDHDR\n", 1,
               "TUPLTYPE GRAYSCALE_ALPHA needs DEPTH 2");
    bad_header("bw255.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
               "TUPLTYPE BLACKANDWHITE\nENDHDR\n", 1,
               "BLACKANDWHITE needs MAXVAL 1, this has 255");
    bad_header("empty-tt.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
               "TUPLTYPE\nENDHDR\n", 1, "TUPLTYPE line without a tuple type");
    bad_header("indented-comment.pam", "P7\n #c\nWIDTH 1\nHEIGHT 1\nDEPTH 1\n"
               "MAXVAL 255\nENDHDR\n", 1, "unknown keyword \"#c\"");
    bad_header("plus.pgm", "P5\n+2 1\n255\n", 2, "expected width, found '+'");
    put_image("ctrl2.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
              "TUPLTYPE a\033[31mb\nENDHDR\n", 1);
    ok(image_parse_header(path_of("ctrl2.pam"), NULL, &h, err, sizeof err) ==
               0 && !strcmp(h.tupltype, "a\033[31mb"),
       "a tuple type with an escape sequence is kept as it is");
    {
        char buf[64];
        is_string("a\\x1b[31mb", image_escape(h.tupltype, buf, sizeof buf),
                  "and escaped for messages");
        is_string("caf\xc3\xa9 \\\\ \\xff\\x0a",
                  image_escape("caf\xc3\xa9 \\ \xff\n", buf, sizeof buf),
                  "UTF-8 kept, backslash doubled, bad bytes as \\xNN");
        is_string("abcdefghi...", image_escape("abcdefghijklmnop", buf, 14),
                  "cut with ... to fit");
        /* U+009B is CSI: "\xc2\x9b" "2J" clears a terminal as ESC [ 2J
         * does.  C1 controls are controls, escaped byte by byte. */
        is_string("a\\xc2\\x9b2Jb\\xc2\\x85 \xc2\xa0",
                  image_escape("a\xc2\x9b" "2Jb\xc2\x85 \xc2\xa0", buf,
                               sizeof buf),
                  "C1 controls (U+0080..U+009F) as \\xNN, U+00A0 kept");
    }
    {
        char json[64] = "";
        FILE *f = fmemopen(json, sizeof json - 1, "w");
        if (f) {
            image_json_string(f, "a\xc2\x9b" "2J\xc2\xa0");
            fclose(f);
        }
        is_string("\"a\\u009b2J\xc2\xa0\"", json,
                  "JSON: a C1 control as \\u00XX, U+00A0 kept");
    }
}

/* "-" and the extension rule (items 10 and the netpbm convention). */
static void test_formats(void)
{
    image_header in;
    char can[64];
    static const struct {
        const char *path;
        int format;
        const char *what;
    } by_path[] = {
        {"a/b.pgm", IMAGE_PGM, ".pgm is pgm"},
        {"b.PPM", IMAGE_PPM, ".PPM is ppm"},
        {"/x.y/b.pam", IMAGE_PAM, ".pam is pam"},
        {"b.raw", IMAGE_RAW, ".raw is raw"},
        {"b.dat", 0, "unknown extension: 0"},
        {"dir.pgm/b", 0, "no extension: 0"},
        {".pgm", 0, "a dot file has no extension"},
        {"-", 0, "standard output: 0"},
    };
    size_t i;
    for (i = 0; i < sizeof by_path / sizeof by_path[0]; ++i)
        is_int(by_path[i].format, image_format_for_path(by_path[i].path), "%s", by_path[i].what);
    memset(&in, 0, sizeof in);
    in.channels = 3;
    in.bytes = 1;
    image_formats_holding(&in, can, sizeof can);
    is_string("ppm, pam or raw", can, "3 channels: ppm, pam or raw");
    in.channels = 1;
    in.bytes = 4;
    in.is_float = 1;
    image_formats_holding(&in, can, sizeof can);
    is_string("raw", can, "floats: raw only");
}

/* A FIFO as input never blocks; it is refused, named (item 1). */
static void test_fifo_input(void)
{
    image_header h;
    const char *fifo = path_of("in.fifo");
    if (mkfifo(fifo, 0600) != 0)
        bail("mkfifo %s", fifo);
    alarm(20); /* a hang is a failure, not a stuck test run */
    ok(image_parse_header(fifo, NULL, &h, err, sizeof err) == -1 &&
           strstr(err, "is a FIFO"), "a FIFO input is refused at once (%s)",
       err);
    alarm(0);
}

static unsigned file_mode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xffffu;
}

/* Item 2: a FIFO output is written into, not replaced. Item 5: modes. */
static void test_output_kinds(void)
{
    static unsigned char px[64];
    image_header h;
    char path[sizeof dir + 256], got[128];
    struct stat st;
    ssize_t n;
    int rfd;
    mode_t old;
    header_of(&h, IMAGE_PGM, 8, 8, 1, 1, 0);
    (void)snprintf(path, sizeof path, "%s", path_of("out.fifo"));
    if (mkfifo(path, 0600) != 0)
        bail("mkfifo %s", path);
    rfd = open(path, O_RDONLY | O_NONBLOCK);
    if (rfd < 0)
        bail("open %s", path);
    ok(image_write_atomic(path, &h, px, 8, err, sizeof err) == 0,
       "writing into a FIFO succeeds (%s)", err);
    n = read(rfd, got, sizeof got);
    close(rfd);
    ok(stat(path, &st) == 0 && S_ISFIFO(st.st_mode),
       "the FIFO is still a FIFO");
    ok(n == 11 + 64 && !memcmp(got, "P5\n8 8\n255\n", 11),
       "the reader got the image (%ld bytes)", (long)n);
    ok(image_write_atomic("/dev/null", &h, px, 8, err, sizeof err) == 0 &&
           stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
       "/dev/null is written into and stays a character device");

    (void)snprintf(path, sizeof path, "%s", path_of("m600.pgm"));
    put_file("m600.pgm", "x", 1);
    chmod(path, 0600);
    ok(image_write_atomic(path, &h, px, 8, err, sizeof err) == 0 &&
           file_mode(path) == 0600, "an existing 0600 output stays 0600 (%o)",
       file_mode(path));
    chmod(path, 0444);
    ok(image_write_atomic(path, &h, px, 8, err, sizeof err) == 0 &&
           file_mode(path) == 0444, "an existing 0444 output stays 0444 (%o)",
       file_mode(path));
    old = umask(027);
    (void)snprintf(path, sizeof path, "%s", path_of("new-umask.pgm"));
    ok(image_write_atomic(path, &h, px, 8, err, sizeof err) == 0 &&
           file_mode(path) == 0640, "a new output is 0666 & ~umask (%o)",
       file_mode(path));
    umask(old);
}

/* Item 3: a 255-byte output name works (the temporary name is cut). */
static void test_long_name(void)
{
    static unsigned char px[4];
    image_header h;
    char name[256], path[320];
    struct stat st;
    memset(name, 'n', 251);
    memcpy(name + 251, ".pgm", 5);
    (void)snprintf(path, sizeof path, "%s/%s", dir, name);
    header_of(&h, IMAGE_PGM, 2, 2, 1, 1, 0);
    ok(image_write_atomic(path, &h, px, 2, err, sizeof err) == 0 &&
           stat(path, &st) == 0 && st.st_size == 15,
       "a 255-byte output name is written (%s)", err);
    unlink(path);
}

/* The temporary files (dot files) in d. */
static int tmp_files(const char *d)
{
    return count_entries(d, 1);
}

static int hook_signal;
static void raise_hook(const char *tmp)
{
    (void)tmp;
    raise(hook_signal);
}

/* Item 4: every catchable fatal signal during a write, and a write past
 * RLIMIT_FSIZE, leave no temporary file. */
static void test_signals(void)
{
    static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE,
                               SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGABRT};
    static unsigned char px[4096];
    char sub[128], out[192];
    image_header h;
    size_t i;
    (void)snprintf(sub, sizeof sub, "%s/sig", dir);
    if (mkdir(sub, 0777) != 0)
        bail("mkdir %s", sub);
    (void)snprintf(out, sizeof out, "%s/out.pgm", sub);
    header_of(&h, IMAGE_PGM, 64, 64, 1, 1, 0);
    for (i = 0; i < sizeof sigs / sizeof *sigs; ++i) {
        int status = 0;
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit no_core = {0, 0};
            setrlimit(RLIMIT_CORE, &no_core);
            /* fatal here even when the test runs under nohup or in the
             * background, which ignore SIGHUP, SIGINT and SIGQUIT (the
             * cleanup leaves an ignored signal ignored) */
            signal(sigs[i], SIG_DFL);
            image_install_signal_cleanup();
            hook_signal = sigs[i];
            image_test_write_hook = raise_hook;
            (void)image_write_atomic(out, &h, px, 64, err, sizeof err);
            _exit(0);
        }
        waitpid(pid, &status, 0);
        ok(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i] &&
               tmp_files(sub) == 0,
           "signal %d mid-write: died of it, no temporary file left", sigs[i]);
    }
    {
        /* standard input's spool, between its mkstemp and its unlink */
        char spool[128];
        int status = 0;
        pid_t pid;
        (void)snprintf(spool, sizeof spool, "%s/spool", dir);
        if (mkdir(spool, 0777) != 0)
            bail("mkdir %s", spool);
        pid = fork();
        if (pid == 0) {
            struct stat st;
            int null = open("/dev/null", O_RDONLY);
            if (null < 0 || dup2(null, 0) < 0 || setenv("TMPDIR", spool, 1) != 0)
                _exit(9);
            signal(SIGTERM, SIG_DFL);
            image_install_signal_cleanup();
            hook_signal = SIGTERM;
            image_test_write_hook = raise_hook;
            (void)image_open_input("-", &st, err, sizeof err);
            _exit(0);
        }
        waitpid(pid, &status, 0);
        ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && count_entries(spool, 0) == 0,
           "signal mid-spool of standard input: died of it, no temporary file left");
    }
    {
        int status = 0;
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit lim = {1000, 1000};
            image_install_signal_cleanup();
            signal(SIGXFSZ, SIG_DFL); /* as a shell may leave it */
            image_install_signal_cleanup();
            setrlimit(RLIMIT_FSIZE, &lim);
            _exit(image_write_atomic(out, &h, px, 64, err, sizeof err) == -1 &&
                          strstr(err, "File too large")
                      ? 7
                      : 8);
        }
        waitpid(pid, &status, 0);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 7 &&
               tmp_files(sub) == 0,
           "past RLIMIT_FSIZE: EFBIG, not SIGXFSZ; no temporary file");
    }
}

/* A temporary file made with image_mkstemp_tracked (roicopy --stack's) is
 * removed by a fatal signal until it is released, and left alone after. */
static void test_tracked_temp(void)
{
    char sub[128], tmpl[192];
    const char *name = NULL;
    int fd, slot = -1, status = 0;
    pid_t pid;
    (void)snprintf(sub, sizeof sub, "%s/tracked", dir);
    if (mkdir(sub, 0777) != 0)
        bail("mkdir %s", sub);
    (void)snprintf(tmpl, sizeof tmpl, "%s/.stack.XXXXXX", sub);
    pid = fork();
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        image_install_signal_cleanup();
        if (image_mkstemp_tracked(tmpl, &name, &slot) < 0)
            _exit(3);
        if (tmp_files(sub) != 1)
            _exit(4); /* the file must exist before the signal */
        raise(SIGTERM);
        _exit(5);
    }
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && tmp_files(sub) == 0,
       "SIGTERM while a tracked temporary file exists: it is removed (status %#x)", status);
    fd = image_mkstemp_tracked(tmpl, &name, &slot);
    ok(fd >= 0 && name && strncmp(name, sub, strlen(sub)) == 0 && tmp_files(sub) == 1,
       "image_mkstemp_tracked makes the file from the template (%s)", name ? name : "-");
    if (fd >= 0)
        close(fd);
    image_temp_release(slot);
    image_signal_cleanup();
    ok(tmp_files(sub) == 1, "after image_temp_release the cleanup leaves it alone");
    if (name)
        unlink(name);
}

int main(void)
{
    scratch_open("image-io");
    plan(0);
    test_headers();
    test_inputs();
    test_writes();
    test_atomic();
    test_crop_compare();
    test_output_header();
    test_netpbm_fidelity();
    test_formats();
    test_fifo_input();
    test_output_kinds();
    test_tracked_temp();
    test_long_name();
    test_signals();
    scratch_close();
    done_testing();
}
