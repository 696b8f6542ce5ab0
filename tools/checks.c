/* SPDX-License-Identifier: MIT */
/*
 * checks.c - output paths and regions, checked before anything is copied
 * (checks.h), so errors read the same with or without a GPU.
 */
/* realpath() is XSI, beyond the project's _POSIX_C_SOURCE. */
#define _XOPEN_SOURCE 700

#include "checks.h"

#include "formats.h"
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The directory part of path ("." when none). */
static char *dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    size_t n = s ? (s == path ? 1 : (size_t)(s - path)) : 1;
    char *d = (char *)malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s ? path : ".", n);
    d[n] = '\0';
    return d;
}

static const dir_cache *look_at_dir(dir_cache *c, const char *out)
{
    char *dir = dir_of(out);
    if (!dir)
        return NULL;
    if (c->dir && !strcmp(c->dir, dir)) {
        free(dir);
        return c;
    }
    free(c->dir);
    free(c->real);
    c->dir = dir;
    c->real = NULL;
    c->rc = stat(dir, &c->st) == 0 ? 0 : errno;
    if (c->rc == 0 && S_ISDIR(c->st.st_mode))
        c->real = realpath(dir, NULL);
    return c;
}

/* Name problems that open() or rename() would only report at the end. */
int roicopy_check_output_name(const char *out)
{
    const char *base = base_name(out);
    size_t len = strlen(out);
    if (len == 0)
        return roicopy_fail(RC_OUTPUT, "\"\"", "the output name is empty");
    if (*base == '\0')
        return roicopy_fail(RC_OUTPUT, out, "ends in '/': an output names a "
                            "file, not a directory");
    if (strlen(base) > IMAGE_NAME_MAX)
        return roicopy_fail(RC_OUTPUT, out, "the file name is %lu bytes "
                            "long, out of range 1..%d",
                            (unsigned long)strlen(base), IMAGE_NAME_MAX);
    /* The temporary file is ".BASE.XXXXXX" in the same directory. */
    if (len + 9 >= PATH_MAX)
        return roicopy_fail(RC_OUTPUT, out, "the path is %lu bytes long, "
                            "out of range 1..%d with the temporary name's 9 "
                            "more", (unsigned long)len, PATH_MAX - 10);
    return 0;
}

/* The identity of an existing output, for the checks across frames: two
 * frames into one FIFO are caught as two into one file are. */
static void know_output(frame_check *c, const struct stat *st)
{
    c->out_known = 1;
    c->out_dev = st->st_dev;
    c->out_ino = st->st_ino;
}

/* A regular output that the file system will not let go: immutable or
 * append-only (chattr +i, +a), whose rename() over it fails with EPERM
 * even for root, after the copies.  NULL where it may be replaced (or
 * the flags cannot be read). */
static const char *flags_forbid_replace(const char *out)
{
#if defined(__linux__) && defined(FS_IOC_GETFLAGS)
    int fd = open(out, O_RDONLY | O_NONBLOCK | O_NOCTTY), flags = 0, got;
    if (fd < 0)
        return NULL;
    got = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    close(fd);
    if (got && (flags & FS_IMMUTABLE_FL))
        return "immutable (chattr +i)";
    if (got && (flags & FS_APPEND_FL))
        return "append-only (chattr +a)";
#else
    (void)out;
#endif
    return NULL;
}

/* An existing output: what it is, and whether roicopy may write it. */
static int check_existing_output(const char *out, const struct stat *st,
                                 const dir_cache *d, frame_check *c)
{
    uid_t me = geteuid();
    const char *flag;
    if (S_ISDIR(st->st_mode))
        return roicopy_fail(RC_OUTPUT, out, "is a directory");
    if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)) {
        c->out_in_place = 1;
        know_output(c, st);
        if (access(out, W_OK) != 0)
            return roicopy_fail(RC_OUTPUT, out, "%s: %s",
                                image_file_type((unsigned)st->st_mode),
                                strerror(errno));
        return 0;
    }
    if (!S_ISREG(st->st_mode))
        return roicopy_fail(RC_OUTPUT, out, "is %s; roicopy writes regular "
                            "files (replaced), character devices and FIFOs "
                            "(written in place)%s",
                            image_file_type((unsigned)st->st_mode),
                            S_ISSOCK(st->st_mode)
                                ? "; a socket cannot be opened as a file"
                                : "");
    know_output(c, st);
    if ((d->st.st_mode & S_ISVTX) && me != 0 && st->st_uid != me &&
        d->st.st_uid != me)
        return roicopy_fail(RC_OUTPUT, out, "is owned by user %lu in the "
                            "sticky directory %s: only its owner may "
                            "replace it", (unsigned long)st->st_uid,
                            roicopy_esc(d->dir));
    if ((flag = flags_forbid_replace(out)) != NULL)
        return roicopy_fail(RC_OUTPUT, out, "is %s: it cannot be replaced",
                            flag);
    return 0;
}

/* -, /dev/stdout, /dev/fd/N...: the descriptor must be open for
 * writing.  A standard one closed at start holds /dev/null now (input.h),
 * which must not pass for the caller's output. */
static int check_output_fd(const char *out, int n)
{
    int fl = fcntl(n, F_GETFL);
    if (fl < 0 || image_std_fd_closed(n))
        return roicopy_fail(RC_OUTPUT, out, "names descriptor %d, which is "
                            "not open", n);
    if ((fl & O_ACCMODE) == O_RDONLY)
        return roicopy_fail(RC_OUTPUT, out, "names descriptor %d, which is "
                            "open for reading only", n);
    return 0;
}

int roicopy_check_output(const char *out, dir_cache *dc, frame_check *c)
{
    struct stat st;
    const dir_cache *d;
    int rc, n;
    /* "-" too: written into the descriptor, never renamed over (image.h). */
    if ((n = image_output_fd(out)) >= 0) {
        c->out_in_place = 1;
        /* What the descriptor holds may be an input (>> a.pgm). */
        if ((rc = check_output_fd(out, n)) == 0 && fstat(n, &st) == 0)
            know_output(c, &st);
        return rc;
    }
    if ((rc = roicopy_check_output_name(out)) != 0)
        return rc;
    if (!(d = look_at_dir(dc, out)))
        return roicopy_fail(RC_OUTPUT, out, "out of memory");
    if (d->rc)
        return roicopy_fail(RC_OUTPUT, out, "directory %s: %s",
                            roicopy_esc(d->dir), strerror(d->rc));
    if (!S_ISDIR(d->st.st_mode))
        return roicopy_fail(RC_OUTPUT, out, "%s is not a directory",
                            roicopy_esc(d->dir));
    if (stat(out, &st) == 0) {
        if ((rc = check_existing_output(out, &st, d, c)) != 0 ||
            c->out_in_place)
            return rc;
    } else if (errno != ENOENT) {
        return roicopy_fail(RC_OUTPUT, out, "%s", strerror(errno));
    }
    if (access(d->dir, W_OK | X_OK) != 0)
        return roicopy_fail(RC_OUTPUT, out, "directory %s is not writable: "
                            "%s", roicopy_esc(d->dir), strerror(errno));
    if (d->real) {
        size_t n = strlen(d->real) + strlen(base_name(out)) + 2;
        c->out_canon = (char *)malloc(n);
        if (c->out_canon)
            (void)snprintf(c->out_canon, n, "%s/%s", d->real, base_name(out));
    }
    return 0;
}

int roicopy_check_output_path(const char *out, const char *input)
{
    static dir_cache dc; /* every tile output shares one directory */
    frame_check c;
    struct stat in_st;
    int rc;
    memset(&c, 0, sizeof c);
    rc = roicopy_check_output(out, &dc, &c);
    free(c.out_canon);
    if (!rc && c.out_known && strcmp(input, "-") != 0 &&
        stat(input, &in_st) == 0 && in_st.st_dev == c.out_dev &&
        in_st.st_ino == c.out_ino)
        rc = roicopy_fail(RC_OUTPUT, out, "is also an input (%s)",
                          roicopy_esc(input));
    return rc;
}

int roicopy_check_rect(const char *input, const image_header *in,
                       const geom_rect *r, const char *what)
{
    if (r->x >= in->width || r->y >= in->height)
        return roicopy_fail(RC_USAGE, input,
                            "%s %lux%lu+%lu+%lu is outside the %lux%lu "
                            "image", what, (unsigned long)r->width,
                            (unsigned long)r->height, (unsigned long)r->x,
                            (unsigned long)r->y, (unsigned long)in->width,
                            (unsigned long)in->height);
    if (r->width > in->width - r->x || r->height > in->height - r->y)
        return roicopy_fail(RC_USAGE, input,
                            "%s %lux%lu+%lu+%lu is partly outside the "
                            "%lux%lu image (it spans columns %lu..%lu, rows "
                            "%lu..%lu)", what, (unsigned long)r->width,
                            (unsigned long)r->height, (unsigned long)r->x,
                            (unsigned long)r->y, (unsigned long)in->width,
                            (unsigned long)in->height, (unsigned long)r->x,
                            (unsigned long)(r->x + r->width - 1),
                            (unsigned long)r->y,
                            (unsigned long)(r->y + r->height - 1));
    return 0;
}

/* The longest existing prefix of dir, cut at a '/': the ancestor a
 * missing DIR would be made in ("." for a relative name with none).  A
 * symbolic link to nothing exists (mkdir -p cannot make it), and is
 * returned for the caller's stat() to refuse. */
static char *existing_ancestor(const char *dir, struct stat *st)
{
    char *a = strdup(dir), *s;
    while (a) {
        s = strrchr(a, '/');
        while (s && s > a && s[-1] == '/')
            --s;
        if (!s) {
            free(a);
            a = strdup(".");
        } else {
            s[s == a] = '\0'; /* "/x": the root */
        }
        if (!a || stat(a, st) == 0 || errno != ENOENT || lstat(a, st) == 0 ||
            !strcmp(a, ".") || !strcmp(a, "/"))
            return a;
    }
    return NULL;
}

/* Whether a ".." follows dir's existing ancestor a: "new/.." is "."
 * once new is made, and its files (the inputs among them) were never
 * checked, since a DIR still to be made holds only new outputs. */
static int climbs_back(const char *dir, const char *a)
{
    size_t n = strlen(a);
    const char *p = strncmp(dir, a, n) == 0 ? dir + n : dir;
    while (*p) {
        size_t k;
        while (*p == '/')
            ++p;
        k = strcspn(p, "/");
        if (k == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += k;
    }
    return 0;
}

/* -o '': stat() says ENOENT and the nearest ancestor would be ".", so it
 * would pass for a directory to make, and DIR/NAME is then /NAME. */
static int empty_outdir(void)
{
    return roicopy_fail(RC_OUTPUT, "\"\"", "the -o directory name is empty");
}

int roicopy_check_outdir(const char *dir, int *missing)
{
    struct stat st;
    char *a;
    int rc = 0;
    *missing = 0;
    if (*dir == '\0')
        return empty_outdir();
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode)
                   ? 0
                   : roicopy_fail(RC_OUTPUT, dir,
                                  "-o needs a directory, this is %s",
                                  image_file_type((unsigned)st.st_mode));
    if (errno != ENOENT)
        return roicopy_fail(RC_OUTPUT, dir, "%s", strerror(errno));
    /* DIR itself a link to nothing: the ancestor is DIR. */
    if (!(a = lstat(dir, &st) == 0 ? strdup(dir)
                                   : existing_ancestor(dir, &st)))
        return roicopy_fail(RC_OUTPUT, dir, "out of memory");
    if (stat(a, &st) != 0) {
        int e = errno;
        rc = roicopy_fail(RC_OUTPUT, dir, "cannot be made: %s: %s%s",
                          roicopy_esc(a), strerror(e),
                          lstat(a, &st) == 0 ? " (a symbolic link to "
                                               "nothing)"
                                             : "");
    } else if (!S_ISDIR(st.st_mode))
        rc = roicopy_fail(RC_OUTPUT, dir, "cannot be made: %s is not a "
                          "directory", roicopy_esc(a));
    else if (access(a, W_OK | X_OK) != 0)
        rc = roicopy_fail(RC_OUTPUT, dir, "cannot be made: directory %s is "
                          "not writable: %s", roicopy_esc(a), strerror(errno));
    else if (climbs_back(dir, a))
        rc = roicopy_fail(RC_OUTPUT, dir, "cannot be made: its \"..\" would "
                          "lead back out of a directory still to be made, "
                          "where files were not checked; name it without "
                          "\"..\"");
    free(a);
    *missing = !rc;
    return rc;
}

int roicopy_make_outdir(const char *dir)
{
    char *d, *s;
    int rc = 0;
    if (*dir == '\0') /* the loop starts past the first byte */
        return empty_outdir();
    if (!(d = strdup(dir)))
        return roicopy_fail(RC_OUTPUT, dir, "out of memory");
    /* Each parent in turn, then DIR itself (s at its end). */
    for (s = d + 1;; ++s) {
        if (*s != '/' && *s != '\0')
            continue;
        if (s[-1] != '/') {
            char c = *s;
            *s = '\0';
            if (mkdir(d, 0777) != 0 && errno != EEXIST) {
                rc = roicopy_fail(RC_OUTPUT, dir, "cannot make %s: %s",
                                  roicopy_esc(d), strerror(errno));
                break;
            }
            *s = c;
        }
        if (*s == '\0')
            break;
    }
    free(d);
    return rc;
}

int roicopy_output_format(const char *path, image_format *to)
{
    const char *base = strrchr(path, '/'), *dot;
    *to = image_format_for_path(path);
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    /* ".name" and ".." have no extension (".." is a directory). */
    if (*to || !dot || dot == base || !strcmp(base, ".."))
        return 0;
    return roicopy_fail(RC_USAGE, path, "unknown output extension \"%s\": "
                        "this build writes %s (or give --format)",
                        roicopy_esc(dot), roicopy_format_exts());
}
