/* SPDX-License-Identifier: MIT */
/* roicopy's TIFF reader (tools/tiff-io.c) on the samples a photometric
 * interpretation does not explain, with files written by libtiff itself:
 * min-is-black (gray, one sample) with 3 or 4 samples a pixel, with or
 * without an ExtraSamples tag, contiguous or planar, is refused naming
 * the photometric and the sample count (roicopy would write its samples
 * out as RGB or RGBA; tifftopnm refuses it too); gray of 1 sample, gray
 * and alpha, RGB and RGB with alpha are read, their pixels byte-exact. */
#include "tap.h"

#include <stdint.h>

#include <tiffio.h>

#include "../tools/tiff-io.h"
#include "image-files.h"

static char err[IMAGE_ERR_MAX];

/* An 8-bit 5x3 TIFF of spp samples, sample s of pixel i being 7 * i + s;
 * nextra > 0 writes an ExtraSamples tag of that many entries of type
 * extra. */
static void write_tiff(const char *name, uint16_t photo, uint16_t spp,
                       uint16_t planar, uint16_t nextra, uint16_t extra)
{
    TIFF *t = TIFFOpen(path_of(name), "w");
    unsigned char row[5 * 4];
    uint16_t ex[4] = {extra, extra, extra, extra};
    uint32_t x, y;
    uint16_t p, s, planes = planar == PLANARCONFIG_SEPARATE ? spp : 1;
    if (!t)
        bail("TIFFOpen %s", name);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 5);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 3);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photo);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, planar);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 2);
    if (nextra)
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, nextra, ex);
    for (p = 0; p < planes; ++p)
        for (y = 0; y < 3; ++y) {
            for (x = 0; x < 5; ++x)
                for (s = 0; s < spp; ++s)
                    if (planes == 1)
                        row[x * spp + s] = (unsigned char)(7 * (y * 5 + x) + s);
                    else if (s == p)
                        row[x] = (unsigned char)(7 * (y * 5 + x) + s);
            if (TIFFWriteScanline(t, row, y, p) < 0)
                bail("TIFFWriteScanline %s", name);
        }
    TIFFClose(t);
}

static void refused(const char *name, uint16_t spp, const char *as)
{
    image_header h;
    char want[160];
    (void)snprintf(want, sizeof want, "photometric interpretation 1 "
                   "(min-is-black) with %u samples a pixel is not "
                   "supported: gray is 1 sample, and the %u would be read "
                   "as %s", (unsigned)spp, (unsigned)spp, as);
    err[0] = '\0';
    if (!ok(tiff_io_read_header(path_of(name), 0, &h, err, sizeof err) ==
                    -1 && strstr(err, want) != NULL,
            "%s: refused, naming the photometric and %u samples", name,
            (unsigned)spp))
        diag("  message \"%s\"", err);
}

static int page0_pixels(const char *path, const image_header *h, void *dst,
                        size_t dst_pitch, char *e, size_t esz)
{
    return tiff_io_read_pixels(path, 0, h, dst, dst_pitch, e, esz);
}

static void reads(const char *name, uint16_t spp)
{
    image_header h;
    unsigned char *px;
    size_t i, bad = 0;
    err[0] = '\0';
    px = tiff_io_read_header(path_of(name), 0, &h, err, sizeof err) == 0
             ? read_padded(name, &h, 3, page0_pixels, err, sizeof err)
             : NULL;
    for (i = 0; px && i < (size_t)15 * spp; ++i)
        bad += px[i] != (unsigned char)(7 * (i / spp) + i % spp);
    if (!ok(px && h.channels == spp && bad == 0,
            "%s: read as %u channels, pixels byte-exact", name,
            (unsigned)spp))
        diag("  %s", err);
    free(px);
}

int main(void)
{
    scratch_open("tiff-photometric");
    plan(0);
    write_tiff("gray3.tif", PHOTOMETRIC_MINISBLACK, 3, PLANARCONFIG_CONTIG, 0, 0);
    refused("gray3.tif", 3, "RGB");
    write_tiff("gray3-extra.tif", PHOTOMETRIC_MINISBLACK, 3,
               PLANARCONFIG_CONTIG, 2, EXTRASAMPLE_UNSPECIFIED);
    refused("gray3-extra.tif", 3, "RGB");
    write_tiff("gray3-planar.tif", PHOTOMETRIC_MINISBLACK, 3,
               PLANARCONFIG_SEPARATE, 0, 0);
    refused("gray3-planar.tif", 3, "RGB");
    write_tiff("gray4.tif", PHOTOMETRIC_MINISBLACK, 4, PLANARCONFIG_CONTIG,
               3, EXTRASAMPLE_UNASSALPHA);
    refused("gray4.tif", 4, "RGB and alpha");
    write_tiff("gray1.tif", PHOTOMETRIC_MINISBLACK, 1, PLANARCONFIG_CONTIG, 0, 0);
    reads("gray1.tif", 1);
    write_tiff("gray-alpha.tif", PHOTOMETRIC_MINISBLACK, 2,
               PLANARCONFIG_CONTIG, 1, EXTRASAMPLE_UNASSALPHA);
    reads("gray-alpha.tif", 2);
    write_tiff("rgb.tif", PHOTOMETRIC_RGB, 3, PLANARCONFIG_CONTIG, 0, 0);
    reads("rgb.tif", 3);
    write_tiff("rgb-planar.tif", PHOTOMETRIC_RGB, 3, PLANARCONFIG_SEPARATE, 0, 0);
    reads("rgb-planar.tif", 3);
    write_tiff("rgba.tif", PHOTOMETRIC_RGB, 4, PLANARCONFIG_CONTIG, 1,
               EXTRASAMPLE_ASSOCALPHA);
    reads("rgba.tif", 4);
    scratch_close();
    done_testing();
}
