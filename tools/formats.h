/* SPDX-License-Identifier: MIT */
/*
 * formats.h - which image formats this roicopy was built with, for
 * `roicopy --version` (PNG and TIFF are optional: configure --with-png,
 * --with-tiff).
 */
#ifndef ROICOPY_FORMATS_H
#define ROICOPY_FORMATS_H

/* The names of the formats this build reads and writes, in the order of
 * image.c's table: "pgm ppm pam raw", then " png" and " tiff" when
 * compiled in.  These three lists register the codecs first; call them
 * from the main thread. */
const char *roicopy_formats(void);

/* The output extensions of those formats: ".pgm .ppm .pam .raw", then
 * " .png" and " .tif .tiff" when compiled in. */
const char *roicopy_format_exts(void);

/* The optional formats left out, each with the Debian package that
 * brings it ("tiff (libtiff-dev)"); "" when none is. */
const char *roicopy_formats_missing(void);

/* Hand the compiled-in codecs (png-io.c, tiff-io.c) to image.c's format
 * table (image_set_codec); before this, PNG and TIFF files fail with
 * "built without PNG support". */
void roicopy_register_codecs(void);

#endif
