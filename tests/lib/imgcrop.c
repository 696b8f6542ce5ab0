/* SPDX-License-Identifier: MIT */
/* The CPU reference for tests/roicopy/gpu.sh: crop an image on the CPU and
 * write it with roicopy's writer, so the GPU's output can be compared with
 * it byte for byte.
 *   imgcrop [--raw WxHxC --depth D] [--format F] INPUT WxH+X+Y OUTPUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/geometry.h"
#include "../../tools/image.h"

static int die(const char *what, const char *why)
{
    fprintf(stderr, "imgcrop: %s: %s\n", what, why);
    return 2;
}

int main(int argc, char **argv)
{
    char err[IMAGE_ERR_MAX];
    image_raw_spec raw = {0, 0, 0, 8}, *rawp = NULL;
    image_format to = (image_format)0;
    image_header in, out;
    geom_rect r;
    unsigned char *img, *crop;
    int i = 1, rc = 0;
    /* The same signal handling as roicopy: the writer is tested as roicopy
     * uses it. */
    image_install_signal_cleanup();
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--raw")) {
            rawp = &raw;
            if (geom_parse_shape(argv[i + 1], &raw.width, &raw.height,
                                 &raw.channels, err, sizeof err))
                return die("--raw", err);
        } else if (!strcmp(argv[i], "--depth")) {
            raw.depth = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--format")) {
            to = image_format_from_name(argv[i + 1]);
        } else {
            return die(argv[i], "unknown option");
        }
    }
    if (argc - i != 3)
        return die("usage", "imgcrop [--raw WxHxC --depth D] [--format F] "
                            "INPUT WxH+X+Y OUTPUT");
    if (image_parse_header(argv[i], rawp, &in, err, sizeof err))
        return die(argv[i], err);
    if (geom_parse_rect(argv[i + 1], &r, err, sizeof err))
        return die(argv[i + 1], err);
    if (r.x + r.width > in.width || r.y + r.height > in.height)
        return die(argv[i + 1], "outside the image");
    if (image_output_header(&in, r.width, r.height, to, &out, err, sizeof err))
        return die(argv[i + 2], err);
    img = (unsigned char *)malloc(in.total_bytes);
    crop = (unsigned char *)malloc(out.total_bytes);
    /* Every path frees both, so LeakSanitizer sees no leak on an error. */
    if (!img || !crop)
        rc = die(argv[i], "out of memory");
    else if (image_read_pixels(argv[i], &in, img, in.row_bytes, err, sizeof err))
        rc = die(argv[i], err);
    else {
        image_crop(crop, out.row_bytes, img, in.row_bytes, r.x, r.y, r.width,
                   r.height, in.pixel_bytes);
        if (image_write_atomic(argv[i + 2], &out, crop, out.row_bytes, err,
                               sizeof err))
            rc = die(argv[i + 2], err);
    }
    free(img);
    free(crop);
    return rc;
}
