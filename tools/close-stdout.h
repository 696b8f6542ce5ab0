/* SPDX-License-Identifier: MIT */
/*
 * close-stdout.h - the one check of standard output at exit, roicopy's
 * and xferbench's: what was printed may not have reached it (a full disk,
 * a closed pipe), and a run whose output is lost must not say it
 * succeeded.  Each tool says it and picks its status.
 *
 * A static inline definition, as say.h, so both tools share this text
 * without a new object to link.
 */
#ifndef TOOLS_CLOSE_STDOUT_H
#define TOOLS_CLOSE_STDOUT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Checks and closes standard output, as GNU tools do at exit (ferror,
 * then fflush and fclose): NULL when everything printed reached it, else
 * why not.  A standard output closed before the run (EBADF) with nothing
 * printed is no failure. */
static inline const char *close_stdout_failure(void)
{
    int bad = ferror(stdout), saved = 0;
    if (fflush(stdout) != 0) {
        bad = 1;
        saved = errno;
    }
    if (fclose(stdout) != 0 && errno != EBADF && !bad) {
        bad = 1;
        saved = errno;
    }
    if (!bad)
        return NULL;
    return saved ? strerror(saved) : "write error";
}

#endif
