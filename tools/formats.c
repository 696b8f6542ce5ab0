/* SPDX-License-Identifier: MIT */
/* formats.c - the image formats compiled into roicopy (see formats.h): the
 * library codecs registered, and the lists read from image.c's table. */
#include "formats.h"

#include "image.h"
#ifdef HAVE_PNG
#include "png-io.h"
#endif
#ifdef HAVE_TIFF
#include "tiff-io.h"
#endif

#include <stdio.h>
#include <string.h>

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
                                           tiff_pixels, tiff_io_write_fd,
                                           NULL};
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

/* The three lists, made once (on the main thread) from the table. */
static char built[128], exts[128], missing[128];

/* Append the word w to list, a space before all but the first. */
static void add(char *list, size_t n, const char *prefix, const char *w,
                const char *package)
{
    size_t k = strlen(list);
    (void)snprintf(list + k, n - k, "%s%s%s%s%s%s", k ? " " : "", prefix, w,
                   package ? " (" : "", package ? package : "",
                   package ? ")" : "");
}

static void make_lists(void)
{
    image_format f;
    const char *e;
    size_t i, j;
    if (built[0])
        return;
    roicopy_register_codecs();
    for (i = 0; (f = image_format_nth(i)) != 0; ++i) {
        if (!image_format_built(f)) {
            add(missing, sizeof missing, "", image_format_name(f),
                image_format_package(f));
            continue;
        }
        add(built, sizeof built, "", image_format_name(f), NULL);
        for (j = 0; (e = image_format_ext_nth(f, j)) != NULL; ++j)
            add(exts, sizeof exts, ".", e, NULL);
    }
}

const char *roicopy_formats(void)
{
    make_lists();
    return built;
}

const char *roicopy_format_exts(void)
{
    make_lists();
    return exts;
}

const char *roicopy_formats_missing(void)
{
    make_lists();
    return missing;
}
