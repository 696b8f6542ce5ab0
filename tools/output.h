/* SPDX-License-Identifier: MIT */
/*
 * output.h - roicopy's output files, in one module (output.c): the
 * temporary file, the signal cleanup, the fsync and rename, the directory
 * sync, and outputs that are descriptors (-, /dev/stdout, /dev/fd/N).
 * What goes into a file is the caller's (image_write_atomic: one image
 * through its codec; roicopy --stack: a netpbm stream).  Functions return
 * 0, or -1 with a sentence (not naming the file) in err.
 */
#ifndef ROICOPY_OUTPUT_H
#define ROICOPY_OUTPUT_H

#include <stddef.h>

/* The longest file name (one path component) roicopy writes: NAME_MAX on
 * Linux.  The temporary name beside it is cut to fit. */
#define IMAGE_NAME_MAX 255

/* Write the content into fd (a new file, or the descriptor of an output
 * written in place, at its current offset); do not close it.  0, or -1
 * with a sentence in err, or with err empty and errno saying why. */
typedef int (*output_writer)(int fd, void *ctx, char *err, size_t errsz);

/* write() to a temporary file in path's directory, fsync it and rename it
 * over path.  On any failure the temporary file is removed and an
 * existing path is left as it was.  An existing output keeps its mode
 * (and owner where allowed); a new one gets 0666 & ~umask.  path "-"
 * (standard output), a descriptor's name (image_output_fd), an existing
 * character device or FIFO is written in place, never replaced; any
 * other non-regular file is refused (a socket too: open() fails on one
 * with ENXIO). */
int output_write(const char *path, output_writer write, void *ctx,
                 char *err, size_t errsz);

/* The descriptor an output path names: 1 for "-", N for /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N (and symbolic links to them);
 * -1 for any other path.  Such an output is written into that
 * descriptor, as "-" is, never replaced. */
int image_output_fd(const char *path);

/* What a stat() mode is, in words: "a FIFO", "a character device"... */
const char *image_file_type(unsigned mode);

/* on: output_write() still fsyncs each file before its rename, but
 * leaves the fsync of the directory to image_sync_dirs(), once per
 * directory for a whole batch.  Writers on several threads at once are
 * safe either way. */
void image_defer_dir_sync(int on); /* call before the writer threads start */

/* fsync every directory an output was renamed into since
 * image_defer_dir_sync(1); -1 with the first failure in err. */
int image_sync_dirs(char *err, size_t errsz);

/* Remove the temporary files of the writes in progress (async-signal-
 * safe: unlink() calls). */
void image_signal_cleanup(void);

/* Catch every catchable signal that would end the process, remove the
 * temporary file and die of the signal; ignore SIGXFSZ so that a write
 * past RLIMIT_FSIZE fails with EFBIG (and cleans up) instead. */
void image_install_signal_cleanup(void);

/* mkstemp(3) of the template `tmpl` (ending in XXXXXX) whose file
 * image_signal_cleanup removes until image_temp_release(*slot): the
 * temporary file of output_write.  *name is the file's name, valid until
 * the release.  -1 with errno on failure (ENAMETOOLONG for a template
 * longer than PATH_MAX + 31). */
int image_mkstemp_tracked(const char *tmpl, const char **name, int *slot);
void image_temp_release(int slot);

/* Test hook: called with the temporary file's name (an output's, or
 * standard input's spool) once it exists, before anything is written to it
 * (tests/roicopy/image-io.c raises signals there). */
extern void (*image_test_write_hook)(const char *tmp);

#endif
