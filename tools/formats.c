/* SPDX-License-Identifier: MIT */
/* formats.c - the image formats compiled into roicopy (see formats.h). */
#include "formats.h"

#include "image.h"
#ifdef HAVE_PNG
#include "png-io.h"
#endif
#ifdef HAVE_TIFF
#include "tiff-io.h"
#endif

/* Each optional format's name, its extensions and the package that
 * brings it, present or not. */
#ifdef HAVE_PNG
#define FORMATS_PNG " png"
#define EXTS_PNG " .png"
#define MISSING_PNG ""
#else
#define FORMATS_PNG ""
#define EXTS_PNG ""
#define MISSING_PNG " png (libpng-dev)"
#endif
#ifdef HAVE_TIFF
#define FORMATS_TIFF " tiff"
#define EXTS_TIFF " .tif .tiff"
#define MISSING_TIFF ""
#else
#define FORMATS_TIFF ""
#define EXTS_TIFF ""
#define MISSING_TIFF " tiff (libtiff-dev)"
#endif

const char *roicopy_formats(void)
{
    return "pgm ppm pam raw" FORMATS_PNG FORMATS_TIFF;
}

const char *roicopy_format_exts(void)
{
    return ".pgm .ppm .pam .raw" EXTS_PNG EXTS_TIFF;
}

const char *roicopy_formats_missing(void)
{
    const char *m = MISSING_PNG MISSING_TIFF;
    return *m ? m + 1 : m;
}

#ifdef HAVE_PNG
/* A PNG has one page; image.c refuses page > 0 before calling. */
static int png_header(const char *path, unsigned page, image_header *h,
                      char *err, size_t errsz)
{
    (void)page;
    return png_io_read_header(path, h, err, errsz);
}

static const image_codec_ops png_codec = {png_io_sniff, png_header,
                                          png_io_read_pixels,
                                          png_io_write_fd, NULL};
#endif

#ifdef HAVE_TIFF
static int tiff_pixels(const char *path, const image_header *h, void *dst,
                       size_t dst_pitch, char *err, size_t errsz)
{
    return tiff_io_read_pixels(path, h->page, h, dst, dst_pitch, err, errsz);
}

static const image_codec_ops tiff_codec = {tiff_io_sniff, tiff_io_read_header,
                                           tiff_pixels, tiff_io_write_fd, NULL};
#endif

void roicopy_register_codecs(void)
{
#ifdef HAVE_PNG
    (void)image_set_codec(IMAGE_PNG, &png_codec);
#endif
#ifdef HAVE_TIFF
    (void)image_set_codec(IMAGE_TIFF, &tiff_codec);
#endif
}
