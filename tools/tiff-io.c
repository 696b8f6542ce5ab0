/* SPDX-License-Identifier: MIT */
/*
 * tiff-io.c - roicopy's TIFF reader and writer, through libtiff (see
 * tiff-io.h).
 *
 * libtiff is driven through TIFFClientOpen on a descriptor we opened and
 * fstat()ed ourselves, with our own context as its client data: libtiff
 * hands that pointer to the error handler, so each file's message lands in
 * its own buffer even with several reader threads.  The handlers are set
 * once per process (pthread_once) and print nothing.
 */
#include "tiff-io.h"
#include "say.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tiffio.h>

/* A strip or tile buffer larger than this is a forged header. */
#define TIFF_IO_BLOCK_MAX (256ULL << 20)
/* deflate cannot compress better than 1032:1. */
#define TIFF_IO_DEFLATE_RATIO 1032ULL
/* An LZW code has at least 9 bits and decodes to at most 4096 bytes. */
#define TIFF_IO_LZW_RATIO 3641ULL
/* PackBits: a 2-byte run decodes to at most 128 bytes. */
#define TIFF_IO_PACKBITS_RATIO 64ULL
/* Any other compression (JPEG, LZMA, ZSTD, ...): zstd's RLE blocks, 128
 * KiB from 4 bytes, are the best any of them does. */
#define TIFF_IO_OTHER_RATIO 32768ULL
/* Pixels from here on go to a BigTIFF (classic offsets are 32-bit). */
#define TIFF_IO_BIG ((1ULL << 32) - (1ULL << 28))

typedef struct tiff_ctx {
    int fd;
    int decoding; /* reading pixels: a warning means wrong pixels */
    int have_msg;
    char msg[IMAGE_ERR_MAX];
} tiff_ctx;

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

int tiff_io_sniff(const void *head, size_t n)
{
    const unsigned char *p = (const unsigned char *)head;
    if (n < 4)
        return 0;
    return (p[0] == 'I' && p[1] == 'I' && (p[2] == 42 || p[2] == 43) &&
            p[3] == 0) ||
           (p[0] == 'M' && p[1] == 'M' && p[2] == 0 &&
            (p[3] == 42 || p[3] == 43));
}

/* ---- error handlers ----------------------------------------------------- */

static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* The first error of a file is the specific one ("Cannot read TIFF
 * header"), later ones repeat it less precisely. */
static void on_error(thandle_t client, const char *module, const char *fmt,
                     va_list ap)
{
    tiff_ctx *c = (tiff_ctx *)client;
    int k;
    if (!c || c->have_msg)
        return;
    k = snprintf(c->msg, sizeof c->msg, "libtiff: %.200s%s",
                 module ? module : "", module ? ": " : "");
    if (k > 0 && (size_t)k < sizeof c->msg)
        (void)vsnprintf(c->msg + k, sizeof c->msg - (size_t)k, fmt, ap);
    c->have_msg = 1;
}

/* While the header is read, a warning is about unknown tags and the like:
 * the pixels are still right.  While pixels are decoded it means they are
 * not ("Discarding N bytes to avoid buffer overrun", a short strip): an
 * error, never wrong pixels in silence. */
static void on_warning(thandle_t client, const char *module,
                       const char *fmt, va_list ap)
{
    tiff_ctx *c = (tiff_ctx *)client;
    /* An LZW strip that lacks its end code but holds every byte (old
     * writers) decodes right: tifftopnm takes it, so does roicopy. */
    if (c && c->decoding && !strstr(fmt, "not terminated with EOI"))
        on_error(client, module, fmt, ap);
}

static void install_handlers(void)
{
    (void)TIFFSetErrorHandler(NULL);
    (void)TIFFSetWarningHandler(NULL);
    (void)TIFFSetErrorHandlerExt(on_error);
    (void)TIFFSetWarningHandlerExt(on_warning);
}

/* ---- client I/O on a descriptor ------------------------------------------ */

static tmsize_t io_read(thandle_t h, void *buf, tmsize_t n)
{
    tiff_ctx *c = (tiff_ctx *)h;
    ssize_t k;
    do
        k = read(c->fd, buf, (size_t)n);
    while (k < 0 && errno == EINTR);
    return (tmsize_t)k;
}

static tmsize_t io_write(thandle_t h, void *buf, tmsize_t n)
{
    tiff_ctx *c = (tiff_ctx *)h;
    const char *p = (const char *)buf;
    size_t left = (size_t)n;
    while (left > 0) {
        ssize_t k = write(c->fd, p, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        left -= (size_t)k;
    }
    return n;
}

static toff_t io_seek(thandle_t h, toff_t off, int whence)
{
    tiff_ctx *c = (tiff_ctx *)h;
    off_t r;
    if (off > (toff_t)INT64_MAX)
        return (toff_t)-1;
    r = lseek(c->fd, (off_t)off, whence);
    return r < 0 ? (toff_t)-1 : (toff_t)r;
}

static int io_close(thandle_t h)
{
    (void)h; /* the caller owns the descriptor */
    return 0;
}

static toff_t io_size(thandle_t h)
{
    tiff_ctx *c = (tiff_ctx *)h;
    struct stat st;
    return fstat(c->fd, &st) == 0 ? (toff_t)st.st_size : 0;
}

static int io_map(thandle_t h, void **base, toff_t *size)
{
    (void)h;
    (void)base;
    (void)size;
    return 0; /* no mapping: reads go through io_read */
}

static void io_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h;
    (void)base;
    (void)size;
}

static TIFF *client_open(tiff_ctx *c, const char *mode)
{
    (void)pthread_once(&handlers_once, install_handlers);
    return TIFFClientOpen("tiff", mode, (thandle_t)c, io_read, io_write,
                          io_seek, io_close, io_size, io_map, io_unmap);
}

/* The library's message, or `fallback` when it gave none. */
static void say_lib(const tiff_ctx *c, char *err, size_t errsz,
                    const char *fallback)
{
    say(err, errsz, "%s", c->have_msg ? c->msg : fallback);
}

/* ---- reading ------------------------------------------------------------ */

typedef struct tiff_layout {
    uint16_t planar, compression;
    int tiled;
    uint32_t tw, th; /* tile size */
} tiff_layout;

static int open_input(tiff_ctx *c, const char *path, unsigned long long *size,
                      char *err, size_t errsz)
{
    struct stat st;
    memset(c, 0, sizeof *c);
    c->fd = open(path, O_RDONLY);
    if (c->fd < 0 || fstat(c->fd, &st) != 0) {
        say(err, errsz, "%s", strerror(errno));
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        say(err, errsz, S_ISDIR(st.st_mode) ? "is a directory, not an image "
                                              "file"
                                            : "is not a regular file");
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    *size = (unsigned long long)st.st_size;
    return 0;
}

static int check_samples(uint16_t bps, uint16_t fmt, uint16_t spp,
                         uint16_t photo, char *err, size_t errsz)
{
    int uint_ok = fmt == SAMPLEFORMAT_UINT && (bps == 8 || bps == 16);
    int float_ok = fmt == SAMPLEFORMAT_IEEEFP && bps == 32;
    if (!uint_ok && !float_ok) {
        say(err, errsz, "%u-bit samples of sample format %u are not "
            "supported (8/16-bit unsigned or 32-bit float only)",
            (unsigned)bps, (unsigned)fmt);
        return -1;
    }
    if (spp < 1 || spp > 4) {
        say(err, errsz, "%u samples a pixel are not supported (1 to 4)",
            (unsigned)spp);
        return -1;
    }
    if (photo != PHOTOMETRIC_MINISBLACK && photo != PHOTOMETRIC_RGB) {
        say(err, errsz, "photometric interpretation %u is not supported "
            "(min-is-black gray or RGB only; palette, min-is-white, CMYK "
            "and YCbCr would change the samples)", (unsigned)photo);
        return -1;
    }
    if (photo == PHOTOMETRIC_RGB && spp < 3) {
        say(err, errsz, "RGB with %u samples a pixel", (unsigned)spp);
        return -1;
    }
    /* Gray is one sample; 1 to 4 samples become gray, gray and alpha,
     * RGB and RGBA on the way out, so a min-is-black image of 3 or 4
     * would turn into color.  libtiff calls the samples past the first
     * extra samples (of no meaning without an ExtraSamples tag);
     * tifftopnm refuses gray of more than one sample. */
    if (photo == PHOTOMETRIC_MINISBLACK && spp > 2) {
        say(err, errsz, "photometric interpretation %u (min-is-black) with "
            "%u samples a pixel is not supported: gray is 1 sample, and "
            "the %u would be read as %s (min-is-black: 1 sample, or 2 for "
            "gray and alpha)", (unsigned)photo, (unsigned)spp,
            (unsigned)spp, spp == 3 ? "RGB" : "RGB and alpha");
        return -1;
    }
    return 0;
}

/* The strip or tile buffers libtiff will fill must be what h says, or the
 * copies below would run past them. */
static int check_layout(TIFF *tif, const image_header *h, tiff_layout *l,
                        char *err, size_t errsz)
{
    uint64_t per = l->planar == PLANARCONFIG_SEPARATE ? h->bytes
                                                      : h->pixel_bytes;
    if (l->tiled) {
        if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &l->tw) ||
            !TIFFGetField(tif, TIFFTAG_TILELENGTH, &l->th) || l->tw == 0 ||
            l->th == 0) {
            say(err, errsz, "tiled TIFF without a tile size");
            return -1;
        }
        if ((uint64_t)l->tw * l->th * per > TIFF_IO_BLOCK_MAX ||
            (uint64_t)TIFFTileSize64(tif) != (uint64_t)l->tw * l->th * per) {
            say(err, errsz, "tiles of %lux%lu are not supported",
                (unsigned long)l->tw, (unsigned long)l->th);
            return -1;
        }
        return 0;
    }
    if ((uint64_t)TIFFScanlineSize64(tif) != (uint64_t)h->width * per) {
        say(err, errsz, "scanlines of %llu bytes, expected %llu",
            (unsigned long long)TIFFScanlineSize64(tif),
            (unsigned long long)(h->width * per));
        return -1;
    }
    return 0;
}

/* The most bytes one byte of a compression's data can decode to. */
static unsigned long long expansion_bound(uint16_t compression)
{
    switch (compression) {
    case COMPRESSION_NONE: return 1;
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE: return TIFF_IO_DEFLATE_RATIO;
    case COMPRESSION_LZW: return TIFF_IO_LZW_RATIO;
    case COMPRESSION_PACKBITS: return TIFF_IO_PACKBITS_RATIO;
    default: return TIFF_IO_OTHER_RATIO;
    }
}

/* Compressed data cannot be smaller than its best ratio allows: a forged
 * size is refused here, before anything is allocated. */
static int check_holds(const image_header *h, uint16_t compression,
                       unsigned long long size, char *err, size_t errsz)
{
    unsigned long long ratio = expansion_bound(compression);
    unsigned long long need = (h->total_bytes + ratio - 1) / ratio;
    if (size < need) {
        say(err, errsz, "a file of %llu bytes cannot hold %lux%lu pixels of "
            "%lu bytes: truncated or forged", size, (unsigned long)h->width,
            (unsigned long)h->height, (unsigned long)h->pixel_bytes);
        return -1;
    }
    return 0;
}

/* The bytes uncompressed strip or tile i needs: its rows (the last strip
 * of a plane may have fewer) times a scanline of one plane or of all
 * (TIFFScanlineSize64 says which); a tile is always whole. */
static uint64_t raw_need(TIFF *tif, const image_header *h,
                         const tiff_layout *l, uint32_t i)
{
    uint32_t rps = 0, per_plane, y;
    if (l->tiled)
        return (uint64_t)TIFFTileSize64(tif);
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps);
    if (rps == 0 || rps > h->height)
        rps = (uint32_t)h->height;
    per_plane = (uint32_t)((h->height + rps - 1) / rps);
    y = (i % per_plane) * rps;
    return (uint64_t)(h->height - y < rps ? h->height - y : rps) *
           TIFFScanlineSize64(tif);
}

/* Every strip or tile's bytes lie inside the file (no decompression:
 * a corrupt compressed strip is found when it is decoded).  None is
 * empty, and an uncompressed one holds all its rows: libtiff reads an
 * uncompressed strip whole from its offset, whatever its byte count says
 * (a count of 0 at offset 0 would give the file's header as pixels). */
static int check_extents(TIFF *tif, const image_header *h,
                         const tiff_layout *l, unsigned long long size,
                         char *err, size_t errsz)
{
    uint32_t n = l->tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    uint32_t i;
    const char *what = l->tiled ? "tile" : "strip";
    for (i = 0; i < n; ++i) {
        int bad = 0;
        uint64_t off = TIFFGetStrileOffsetWithErr(tif, i, &bad);
        uint64_t cnt = bad ? 0 : TIFFGetStrileByteCountWithErr(tif, i, &bad);
        uint64_t need;
        if (bad || off > size || cnt > size - off) {
            say(err, errsz, "truncated: %s %lu (%llu bytes at byte %llu) "
                "lies past the end of the file (%llu bytes)", what,
                (unsigned long)i, (unsigned long long)cnt,
                (unsigned long long)off, size);
            return -1;
        }
        if (cnt == 0) {
            say(err, errsz, "%s %lu has a byte count of 0: no data",
                what, (unsigned long)i);
            return -1;
        }
        if (l->compression == COMPRESSION_NONE &&
            cnt < (need = raw_need(tif, h, l, i))) {
            say(err, errsz, "%s %lu has a byte count of %llu, less than "
                "the %llu bytes of its uncompressed pixels", what,
                (unsigned long)i, (unsigned long long)cnt,
                (unsigned long long)need);
            return -1;
        }
    }
    return 0;
}

/* The Predictor of LZW, deflate, LZMA and ZSTD data, which libtiff's
 * PredictorSetup checks only when the first strip is decoded: 1 (none),
 * 2 (horizontal differencing, any sample size roicopy reads) or 3
 * (floating point, float samples only).  Under another compression the tag
 * is no field of the codec's (an anonymous one, passed with a count) and
 * libtiff ignores it, as roicopy does. */
static int check_predictor(TIFF *tif, const image_header *h, char *err,
                           size_t errsz)
{
    const TIFFField *f = TIFFFindField(tif, TIFFTAG_PREDICTOR, TIFF_ANY);
    uint16_t p = PREDICTOR_NONE;
    if (!f || TIFFFieldPassCount(f) ||
        !TIFFGetField(tif, TIFFTAG_PREDICTOR, &p) || p == PREDICTOR_NONE ||
        p == PREDICTOR_HORIZONTAL ||
        (p == PREDICTOR_FLOATINGPOINT && h->is_float))
        return 0;
    if (p == PREDICTOR_FLOATINGPOINT)
        say(err, errsz, "predictor 3 (floating point) is for float samples, "
            "not %lu-bit unsigned ones", (unsigned long)h->bytes * 8);
    else
        say(err, errsz, "predictor %u is not supported (1 none, 2 "
            "horizontal differencing, 3 floating point)", (unsigned)p);
    return -1;
}

static int read_fields(TIFF *tif, image_header *h, tiff_layout *l,
                       unsigned long long size, char *err, size_t errsz)
{
    uint32_t w = 0, ht = 0;
    uint16_t bps = 1, spp = 1, fmt = SAMPLEFORMAT_UINT, photo, orient;
    memset(h, 0, sizeof *h);
    memset(l, 0, sizeof *l);
    (void)TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    (void)TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &ht);
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &l->planar);
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &l->compression);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photo))
        photo = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    if (check_samples(bps, fmt, spp, photo, err, errsz))
        return -1;
    /* Rows are read as stored: a file to be shown turned or mirrored
     * (tifftopnm turns it) would be cropped and written as stored. */
    if (TIFFGetField(tif, TIFFTAG_ORIENTATION, &orient) &&
        orient != ORIENTATION_TOPLEFT) {
        say(err, errsz, "orientation %u is not supported (only 1: row 0 at "
            "the top, column 0 at the left): the crop would be of the rows "
            "as stored, not of the image as shown (tifftopnm turns it)",
            (unsigned)orient);
        return -1;
    }
    if (w == 0 || ht == 0 || w > TIFF_IO_MAX_DIM || ht > TIFF_IO_MAX_DIM) {
        int bad_w = w == 0 || w > TIFF_IO_MAX_DIM;
        say(err, errsz, "%s %lu is out of range 1..%lu", bad_w ? "width"
            : "height", bad_w ? (unsigned long)w : (unsigned long)ht,
            TIFF_IO_MAX_DIM);
        return -1;
    }
    if (!TIFFIsCODECConfigured(l->compression)) {
        say(err, errsz, "compression %u is not built into this libtiff",
            (unsigned)l->compression);
        return -1;
    }
    /* The fax codecs and JBIG hold 1-bit samples only; libtiff's
     * Fax3SetupState refuses others when the first strip is decoded. */
    if (l->compression == COMPRESSION_CCITTRLE ||
        l->compression == COMPRESSION_CCITTFAX3 ||
        l->compression == COMPRESSION_CCITTFAX4 ||
        l->compression == COMPRESSION_CCITTRLEW ||
        l->compression == COMPRESSION_JBIG) {
        say(err, errsz, "compression %u (CCITT fax or JBIG) holds 1-bit "
            "samples, not %u-bit ones", (unsigned)l->compression,
            (unsigned)bps);
        return -1;
    }
    h->width = w;
    h->height = ht;
    h->channels = spp;
    h->bytes = bps / 8;
    h->is_float = fmt == SAMPLEFORMAT_IEEEFP;
    h->big_endian = host_is_big_endian();
    h->maxval = h->is_float ? 0 : bps == 16 ? 65535 : 255;
    l->tiled = TIFFIsTiled(tif);
    if (l->planar != PLANARCONFIG_SEPARATE)
        l->planar = PLANARCONFIG_CONTIG;
    if (image_compute_sizes(h, err, errsz) ||
        check_predictor(tif, h, err, errsz) ||
        check_layout(tif, h, l, err, errsz))
        return -1;
    return check_holds(h, l->compression, size, err, errsz) ||
                   check_extents(tif, h, l, size, err, errsz)
               ? -1
               : 0;
}

/* Open path at `page`; on success *tif is open (close it with TIFFClose,
 * then close c->fd). */
static int open_page(tiff_ctx *c, const char *path, unsigned page, TIFF **tif,
                     image_header *h, tiff_layout *l, char *err, size_t errsz)
{
    unsigned long long size;
    *tif = NULL;
    if (open_input(c, path, &size, err, errsz))
        return -1;
    *tif = client_open(c, "rm");
    if (!*tif) {
        say_lib(c, err, errsz, "not a TIFF file");
        return -1;
    }
    if (page > 0 && !TIFFSetDirectory(*tif, (tdir_t)page)) {
        int n = (int)TIFFNumberOfDirectories(*tif);
        say(err, errsz, "no page %u: the file has %d page%s (numbered from "
            "0)", page, n, n == 1 ? "" : "s");
        return -1;
    }
    return read_fields(*tif, h, l, size, err, errsz);
}

static void close_page(tiff_ctx *c, TIFF *tif)
{
    if (tif)
        TIFFClose(tif);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int tiff_io_read_header(const char *path, unsigned page, image_header *h,
                        char *err, size_t errsz)
{
    tiff_ctx c;
    tiff_layout l;
    TIFF *tif;
    int rc = open_page(&c, path, page, &tif, h, &l, err, errsz);
    close_page(&c, tif);
    return rc;
}

/* Copy `n` samples of `bytes` each from a one-plane run to every
 * `stride`-th sample of dst. */
static void scatter(unsigned char *dst, size_t stride, const unsigned char *src,
                    size_t n, size_t bytes)
{
    size_t i;
    for (i = 0; i < n; ++i)
        memcpy(dst + i * stride, src + i * bytes, bytes);
}

/* Whole strips with TIFFReadEncodedStrip, never scanline by scanline: a
 * PackBits run may cross a row boundary (the TIFF specification allows
 * it), and TIFFReadScanline then drops the rest of the run ("Discarding N
 * bytes") and returns wrong pixels. */
static int read_strips(TIFF *tif, tiff_ctx *c, const image_header *h,
                       const tiff_layout *l, unsigned char *dst, size_t pitch,
                       char *err, size_t errsz)
{
    int sep = l->planar == PLANARCONFIG_SEPARATE;
    size_t per = sep ? h->bytes : h->pixel_bytes, line = h->width * per;
    size_t planes = sep ? h->channels : 1, p, r, rows;
    uint32_t rps = 0, y;
    tstrip_t strip;
    unsigned char *buf;
    tmsize_t want, got;
    (void)TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps);
    if (rps == 0 || rps > h->height)
        rps = (uint32_t)h->height;
    if ((uint64_t)rps * line > TIFF_IO_BLOCK_MAX) {
        say(err, errsz, "strips of %lu rows are not supported",
            (unsigned long)rps);
        return -1;
    }
    if (!(buf = (unsigned char *)malloc((size_t)rps * line))) {
        say(err, errsz, "out of memory for a strip of %lu rows",
            (unsigned long)rps);
        return -1;
    }
    for (p = 0; p < planes; ++p)
        for (y = 0; y < h->height; y += rps) {
            rows = h->height - y < rps ? h->height - y : rps;
            want = (tmsize_t)(rows * line);
            strip = TIFFComputeStrip(tif, y, (uint16_t)p);
            got = TIFFReadEncodedStrip(tif, strip, buf, want);
            if (got != want || c->have_msg) {
                if (got >= 0 && got != want && !c->have_msg)
                    say(err, errsz, "strip %lu decodes to %lld bytes, "
                        "expected %lld", (unsigned long)strip,
                        (long long)got, (long long)want);
                else
                    say_lib(c, err, errsz, "cannot read a strip");
                free(buf);
                return -1;
            }
            for (r = 0; r < rows; ++r) {
                unsigned char *d = dst + (y + r) * pitch;
                if (sep)
                    scatter(d + p * h->bytes, h->pixel_bytes,
                            buf + r * line, h->width, h->bytes);
                else
                    memcpy(d, buf + r * line, line);
            }
        }
    free(buf);
    return 0;
}

static int read_tiles(TIFF *tif, tiff_ctx *c, const image_header *h,
                      const tiff_layout *l, unsigned char *dst, size_t pitch,
                      char *err, size_t errsz)
{
    int sep = l->planar == PLANARCONFIG_SEPARATE;
    size_t per = sep ? h->bytes : h->pixel_bytes;
    size_t planes = sep ? h->channels : 1, s, r;
    uint32_t tx, ty;
    unsigned char *tile = (unsigned char *)malloc((size_t)l->tw * l->th * per);
    if (!tile) {
        say(err, errsz, "out of memory for a %lux%lu tile",
            (unsigned long)l->tw, (unsigned long)l->th);
        return -1;
    }
    for (s = 0; s < planes; ++s)
        for (ty = 0; ty < h->height; ty += l->th)
            for (tx = 0; tx < h->width; tx += l->tw) {
                size_t rows = h->height - ty < l->th ? h->height - ty : l->th;
                size_t cols = h->width - tx < l->tw ? h->width - tx : l->tw;
                if (TIFFReadTile(tif, tile, tx, ty, 0, (uint16_t)s) < 0 ||
                    c->have_msg) {
                    say_lib(c, err, errsz, "cannot read a tile");
                    free(tile);
                    return -1;
                }
                for (r = 0; r < rows; ++r) {
                    unsigned char *d = dst + (ty + r) * pitch +
                                       tx * h->pixel_bytes;
                    const unsigned char *t = tile + r * l->tw * per;
                    if (sep)
                        scatter(d + s * h->bytes, h->pixel_bytes, t, cols,
                                h->bytes);
                    else
                        memcpy(d, t, cols * per);
                }
            }
    free(tile);
    return 0;
}

static int same_geometry(const image_header *a, const image_header *b)
{
    return a->width == b->width && a->height == b->height &&
           a->channels == b->channels && a->bytes == b->bytes &&
           a->is_float == b->is_float;
}

int tiff_io_read_pixels(const char *path, unsigned page,
                        const image_header *h, void *dst, size_t dst_pitch,
                        char *err, size_t errsz)
{
    tiff_ctx c;
    tiff_layout l;
    image_header now;
    TIFF *tif;
    int rc = -1;
    if (dst_pitch < h->row_bytes) {
        say(err, errsz, "pitch %lu is less than a row (%lu bytes)",
            (unsigned long)dst_pitch, (unsigned long)h->row_bytes);
        return -1;
    }
    if (open_page(&c, path, page, &tif, &now, &l, err, errsz) == 0) {
        /* An error libtiff got past while reading the directory (a tag
         * of a bad value, ignored: "Bad value 0 for ResolutionUnit") is
         * not the pixels': only one from here on fails them. */
        c.have_msg = 0;
        c.decoding = 1;
        if (!same_geometry(h, &now))
            say(err, errsz, "the file changed since its header was read");
        else if (l.tiled)
            rc = read_tiles(tif, &c, h, &l, (unsigned char *)dst, dst_pitch,
                            err, errsz);
        else
            rc = read_strips(tif, &c, h, &l, (unsigned char *)dst, dst_pitch,
                             err, errsz);
    }
    close_page(&c, tif);
    return rc;
}

/* ---- writing ------------------------------------------------------------ */

static int set_fields(TIFF *tif, const image_header *h)
{
    uint16_t extra = EXTRASAMPLE_UNASSALPHA;
    int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)h->width) &&
             TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)h->height) &&
             TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE,
                          (uint16_t)(h->bytes * 8)) &&
             TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL,
                          (uint16_t)h->channels) &&
             TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
                          h->is_float ? SAMPLEFORMAT_IEEEFP
                                      : SAMPLEFORMAT_UINT) &&
             TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                          h->channels >= 3 ? PHOTOMETRIC_RGB
                                           : PHOTOMETRIC_MINISBLACK) &&
             TIFFSetField(tif, TIFFTAG_COMPRESSION,
                          COMPRESSION_ADOBE_DEFLATE) &&
             TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP,
                          TIFFDefaultStripSize(tif, 0));
    if (ok && (h->channels == 2 || h->channels == 4))
        ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, (uint16_t)1, &extra);
    return ok ? 0 : -1;
}

/* One row, in host byte order, in a scratch buffer libtiff may modify. */
static void host_row(unsigned char *out, const unsigned char *in,
                     const image_header *h)
{
    size_t i, k;
    if (h->bytes == 1 || h->big_endian == host_is_big_endian()) {
        memcpy(out, in, h->row_bytes);
        return;
    }
    for (i = 0; i < h->row_bytes; i += h->bytes)
        for (k = 0; k < h->bytes; ++k)
            out[i + k] = in[i + h->bytes - 1 - k];
}

int tiff_io_write_fd(int fd, const image_header *h, const void *pixels,
                     size_t pitch, char *err, size_t errsz)
{
    tiff_ctx c;
    TIFF *tif;
    unsigned char *row;
    size_t y;
    int ok = (h->bytes == 1 || h->bytes == 2) ? !h->is_float
                                              : h->bytes == 4 && h->is_float;
    if (!ok) {
        say(err, errsz, "TIFF output holds 8/16-bit unsigned or 32-bit "
            "float samples, not %lu-byte %s ones", (unsigned long)h->bytes,
            h->is_float ? "float" : "integer");
        return -1;
    }
    if (h->channels < 1 || h->channels > 4 || h->width > UINT32_MAX ||
        h->height > UINT32_MAX) {
        say(err, errsz, "TIFF output holds 1 to 4 channels and 32-bit "
            "sizes, not %lux%lu with %lu channels", (unsigned long)h->width,
            (unsigned long)h->height, (unsigned long)h->channels);
        return -1;
    }
    memset(&c, 0, sizeof c);
    c.fd = fd;
    if (!(row = (unsigned char *)malloc(h->row_bytes))) {
        say(err, errsz, "out of memory");
        return -1;
    }
    tif = client_open(&c, (unsigned long long)h->total_bytes >= TIFF_IO_BIG
                              ? "w8" : "w");
    if (!tif) {
        say_lib(&c, err, errsz, "cannot start a TIFF file");
        free(row);
        return -1;
    }
    ok = set_fields(tif, h) == 0;
    for (y = 0; ok && y < h->height; ++y) {
        host_row(row, (const unsigned char *)pixels + y * pitch, h);
        /* netpbm's maxval 15 or 1023 to the full 8 or 16 bits, as
         * pamdepth does (TIFF has no maxval). */
        image_rescale_row(row, h->width * h->channels, h,
                          host_is_big_endian());
        ok = TIFFWriteScanline(tif, row, (uint32_t)y, 0) >= 0;
    }
    if (ok)
        ok = TIFFFlush(tif) == 1;
    if (!ok)
        say_lib(&c, err, errsz, "cannot write the TIFF file");
    TIFFClose(tif);
    free(row);
    return ok ? 0 : -1;
}
