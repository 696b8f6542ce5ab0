/* SPDX-License-Identifier: MIT */
/*
 * frames.c - the CPU services of roicopy (frames.h): messages, reading a
 * frame, --verify and the atomic write, the progress bar, bands.  Nothing
 * here calls back into roicopy.c or the copies (roicopy-gpu.c,
 * roicopy-ring.c, roicopy-tiles.c).
 */
#include "frames.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ----------------------------------------------------------- */

/* The progress bar's line is open (drawn, its newline still to come): a
 * message then starts a line of its own, and the bar is drawn again below
 * it.  Read and written under stderr's lock. */
static int bar_open;

/* roicopy_fail_keep's: per thread, so the ring's I/O threads keep
 * nothing. */
static __thread char **kept;

void roicopy_fail_keep(char **keep)
{
    kept = keep;
}

/* "NAME: message" (or "message" when name is NULL), malloc'd; NULL when
 * out of memory. */
static char *message_of(const char *name, const char *fmt, va_list ap)
{
    va_list again;
    size_t k = name ? strlen(name) + 2 : 0;
    char *s;
    int n;
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    s = n < 0 ? NULL : (char *)malloc(k + (size_t)n + 1);
    if (s) {
        if (name)
            (void)snprintf(s, k + 1, "%s: ", name);
        (void)vsnprintf(s + k, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    return s;
}

int roicopy_fail(int status, const char *file, const char *fmt, ...)
{
    va_list ap;
    /* An empty name is shown as "". */
    const char *name = !file ? NULL : *file ? roicopy_esc(file) : "\"\"";
    fflush(stdout);
    /* One line, whole: the ring's I/O threads may fail at once. */
    flockfile(stderr);
    if (bar_open) {
        fputc('\n', stderr);
        bar_open = 0;
    }
    if (name)
        fprintf(stderr, "roicopy: %s: ", name);
    else
        fprintf(stderr, "roicopy: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    funlockfile(stderr);
    if (status != RC_OK && kept && !*kept) {
        va_start(ap, fmt);
        *kept = message_of(name, fmt, ap);
        va_end(ap);
    }
    return status;
}

size_t roicopy_pitch_estimate(size_t row_bytes)
{
    return (row_bytes + ROICOPY_PITCH_ALIGN - 1) / ROICOPY_PITCH_ALIGN *
           ROICOPY_PITCH_ALIGN;
}

/* ---- frames and bands --------------------------------------------------- */

/* Without --streams, one pinned input is cut into bands of about
 * ROICOPY_BAND_BYTES, at most ROICOPY_AUTO_BANDS of them: band i's
 * download overlaps band i + 1's upload, so n bands keep both directions
 * busy but for the first upload and the last download, about n / (n + 1)
 * of the bidirectional link (doc/PERF.md has the measured curve). */
int roicopy_band_count(const roicopy_plan *p, const roicopy_frame *f)
{
    size_t n = (size_t)p->streams;
    if (!p->streams_given && p->nframes == 1 && !p->pageable) {
        size_t want = f->out.total_bytes / ROICOPY_BAND_BYTES; /* the ROI's */
        if (want > ROICOPY_AUTO_BANDS)
            want = ROICOPY_AUTO_BANDS;
        if (want > n)
            n = want;
    }
    return n > f->roi.height ? (int)f->roi.height : (int)n;
}

void roicopy_band_rows(size_t h, size_t n, size_t i, size_t *y0, size_t *y1)
{
    *y0 = h * i / n;
    *y1 = h * (i + 1) / n;
}

int roicopy_device_of(const roicopy_plan *p, size_t i)
{
    return p->devices[i % (size_t)p->ndevices];
}

int roicopy_read_frame(const roicopy_frame *f, void *dst, size_t dst_pitch)
{
    char err[IMAGE_ERR_MAX] = "";
    /* Only the ROI's rows: the copies and --verify read nothing else. */
    if (image_read_rows(f->input, &f->in, f->roi.y, f->roi.height, dst,
                        dst_pitch, err, sizeof err))
        return roicopy_fail(RC_INPUT, f->input, "%s", err);
    return RC_OK;
}

#ifdef ROICOPY_TEST_HOOKS
/* The test build's hook (frames.h): the installed roicopy has none. */
void roicopy_test_corrupt(unsigned char *byte)
{
    const char *e = getenv("ROICOPY_TEST_CORRUPT");
    if (e && *e == '1')
        *byte ^= 0x5a;
}
#endif

static int verify(const roicopy_frame *f, const void *crop,
                  size_t image_pitch, const void *roi, size_t roi_pitch)
{
    image_diff d;
    if (!image_compare(&f->out, crop, image_pitch, roi, roi_pitch, &d))
        return RC_OK;
    return roicopy_fail(RC_DIFF, f->output,
                        "--verify: first difference at x=%lu y=%lu channel "
                        "%lu: expected %.9g, got %.9g", (unsigned long)d.x,
                        (unsigned long)d.y, (unsigned long)d.channel,
                        d.expected, d.got);
}

int roicopy_finish_frame(const roicopy_plan *p, const roicopy_frame *f,
                         const void *image, size_t image_pitch, void *roi,
                         size_t roi_pitch)
{
    return roicopy_finish_frame_at(p, f,
                                   (const unsigned char *)image +
                                       f->roi.y * image_pitch +
                                       f->roi.x * f->in.pixel_bytes,
                                   image_pitch, roi, roi_pitch);
}

int roicopy_finish_frame_at(const roicopy_plan *p, const roicopy_frame *f,
                            const void *crop, size_t image_pitch, void *roi,
                            size_t roi_pitch)
{
    char err[IMAGE_ERR_MAX] = "";
    roicopy_test_corrupt((unsigned char *)roi + (f->out.height - 1) * roi_pitch +
                         f->out.row_bytes - 1);
    /* A frame that fails verification is not written: an existing output
     * is never replaced by wrong data. */
    if (p->verify && verify(f, crop, image_pitch, roi, roi_pitch))
        return RC_DIFF;
    if (image_write_atomic(f->output, &f->out, roi, roi_pitch, err,
                           sizeof err))
        return roicopy_fail(RC_OUTPUT, f->output, "%s", err);
    return RC_OK;
}

void roicopy_progress(const roicopy_plan *p, size_t done)
{
    enum { BAR = 40 };
    char bar[BAR + 1];
    size_t fill, i;
    if (!p->progress)
        return;
    fill = p->nframes ? done * BAR / p->nframes : BAR;
    for (i = 0; i < BAR; ++i)
        bar[i] = i < fill ? '#' : ' ';
    bar[BAR] = '\0';
    flockfile(stderr);
    fprintf(stderr, "\r[%s] %lu/%lu%s", bar, (unsigned long)done,
            (unsigned long)p->nframes, done == p->nframes ? "\n" : "");
    bar_open = done != p->nframes;
    fflush(stderr);
    funlockfile(stderr);
}
