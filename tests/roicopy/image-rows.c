/* SPDX-License-Identifier: MIT */
/* tests/roicopy/image-rows.c - what roicopy's end-to-end speed rests on, on the
 * CPU: image_read_rows/image_read_span read exactly the rows asked for
 * (and nothing else lands in the buffer), a shrunk file is an error, and
 * image_write_atomic from 8 threads at once with the directory fsync
 * deferred (image_defer_dir_sync, image_sync_dirs) writes every file
 * whole, with the right mode and no temporary file left. */
#include "tap.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image-files.h"

#define W 7
#define H 9
#define THREADS 8
#define PER_THREAD 12


/* A PGM whose pixel (x, y) is y * 16 + x. */
static void make_pgm(const char *path)
{
    FILE *f = fopen(path, "wb");
    int x, y;
    if (!f)
        bail("cannot write %s", path);
    fprintf(f, "P5\n%d %d\n255\n", W, H);
    for (y = 0; y < H; ++y)
        for (x = 0; x < W; ++x)
            fputc(y * 16 + x, f);
    fclose(f);
}

static int rows_hold(const unsigned char *buf, size_t pitch, size_t y0,
                     size_t n, size_t first_row_at)
{
    size_t y, x;
    for (y = 0; y < n; ++y)
        for (x = 0; x < W; ++x)
            if (buf[(first_row_at + y) * pitch + x] != (y0 + y) * 16 + x)
                return 0;
    return 1;
}

typedef struct writer {
    int id;
    int failures;
} writer;

static void *write_many(void *arg)
{
    writer *w = (writer *)arg;
    unsigned char px[4 * 3];
    image_header h;
    char name[64], err[IMAGE_ERR_MAX];
    int i;
    header_of(&h, IMAGE_PGM, 4, 3, 1, 1, 0);
    for (i = 0; i < PER_THREAD; ++i) {
        memset(px, w->id * PER_THREAD + i, sizeof px);
        (void)snprintf(name, sizeof name, "w%d-%d.pgm", w->id, i);
        if (image_write_atomic(path_of(name), &h, px, 4, err, sizeof err))
            ++w->failures;
    }
    return NULL;
}

int main(void)
{
    unsigned char buf[H * 16], span[3 * W];
    char err[IMAGE_ERR_MAX];
    image_header h;
    pthread_t t[THREADS];
    writer w[THREADS];
    DIR *d;
    struct dirent *e;
    int i, temps = 0, good = 0, failures = 0;
    mode_t um;
    plan(12);
    scratch_open("image-rows");
    make_pgm(path_of("a.pgm"));
    if (image_parse_header(path_of("a.pgm"), NULL, &h, err, sizeof err))
        bail("%s", err);

    memset(buf, 0xee, sizeof buf);
    ok(image_read_rows(path_of("a.pgm"), &h, 3, 4, buf, 16, err,
                       sizeof err) == 0 && rows_hold(buf, 16, 3, 4, 3),
       "image_read_rows: rows 3..6 land at their own rows (pitch 16)");
    ok(buf[2 * 16] == 0xee && buf[7 * 16] == 0xee && buf[3 * 16 + W] == 0xee,
       "rows 2 and 7 and the pitch's padding are not touched");
    memset(buf, 0xee, sizeof buf);
    ok(image_read_rows(path_of("a.pgm"), &h, 0, H, buf, W, err,
                       sizeof err) == 0 && rows_hold(buf, W, 0, H, 0),
       "image_read_rows: the whole image, packed");
    memset(span, 0xee, sizeof span);
    ok(image_read_span(path_of("a.pgm"), &h, 6, 3, span, W, err,
                       sizeof err) == 0 && rows_hold(span, W, 6, 3, 0),
       "image_read_span: rows 6..8 at the start of a 3-row buffer");
    ok(image_read_span(path_of("a.pgm"), &h, 7, 3, span, W, err,
                       sizeof err) == -1,
       "image_read_span: rows past the image are refused (%s)", err);
    if (truncate(path_of("a.pgm"), 11 + 5 * W) != 0)
        bail("truncate");
    err[0] = '\0';
    ok(image_read_rows(path_of("a.pgm"), &h, 3, 4, buf, 16, err,
                       sizeof err) == -1,
       "a file that shrank since its header was read fails");
    contains(err, "needs", "and says how many bytes it needs");
    (void)unlink(path_of("a.pgm"));

    um = umask(022);
    image_defer_dir_sync(1);
    for (i = 0; i < THREADS; ++i) {
        w[i].id = i;
        w[i].failures = 0;
        if (pthread_create(&t[i], NULL, write_many, &w[i]) != 0)
            bail("pthread_create");
    }
    for (i = 0; i < THREADS; ++i) {
        (void)pthread_join(t[i], NULL);
        failures += w[i].failures;
    }
    is_int(0, failures, "8 threads x 12 atomic writes at once succeed");
    ok(image_sync_dirs(err, sizeof err) == 0, "image_sync_dirs: the directory is synced once");
    image_defer_dir_sync(0);
    (void)umask(um);
    d = opendir(dir);
    if (!d)
        bail("opendir %s", dir);
    while ((e = readdir(d)) != NULL) {
        unsigned char px[12], want[12];
        struct stat st;
        int a, b;
        image_header r;
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' ||
                                    (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (e->d_name[0] == '.') {
            ++temps;
            continue;
        }
        if (sscanf(e->d_name, "w%d-%d.pgm", &a, &b) != 2 ||
            image_parse_header(path_of(e->d_name), NULL, &r, err,
                               sizeof err) ||
            image_read_pixels(path_of(e->d_name), &r, px, 4, err,
                              sizeof err) ||
            stat(path_of(e->d_name), &st) != 0)
            continue;
        memset(want, a * PER_THREAD + b, sizeof want);
        if (!memcmp(px, want, sizeof want) && (st.st_mode & 0777) == 0644)
            ++good;
        (void)unlink(path_of(e->d_name));
    }
    closedir(d);
    is_int(THREADS * PER_THREAD, good,
           "every file holds its own pixels, mode 0644 (umask 022)");
    is_int(0, temps, "no temporary file is left");
    ok(rmdir(dir) == 0, "nothing else is left in the directory");
    done_testing();
}
