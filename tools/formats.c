/* SPDX-License-Identifier: MIT */
/* formats.c - the image formats compiled into roicopy (see formats.h). */
#include "formats.h"

#ifdef HAVE_PNG
#define FORMATS_PNG " png"
#else
#define FORMATS_PNG ""
#endif
#ifdef HAVE_TIFF
#define FORMATS_TIFF " tiff"
#else
#define FORMATS_TIFF ""
#endif

const char *roicopy_formats(void)
{
    return "pgm ppm pam raw" FORMATS_PNG FORMATS_TIFF;
}
