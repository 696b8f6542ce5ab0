/* SPDX-License-Identifier: MIT */
/*
 * replay-main.c - a main() for fuzz targets where clang's libFuzzer runtime
 * is absent: calls LLVMFuzzerTestOneInput once on each FILE, and on every
 * file of each DIRECTORY argument (not recursive).  A crash or abort in the
 * target ends the run with that signal; tests/fuzz/regressions.sh reports
 * it.  Built with the project's CFLAGS, so under .ci/sanitize.sh the
 * replay runs with ASan and UBSan too.  `--sanitized` exits 0 when built
 * with AddressSanitizer (a proxy for "the sanitizers are on": .ci/sanitize.sh
 * turns on ASan and UBSan together), 1 otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(__SANITIZE_ADDRESS__)
#define REPLAY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_SANITIZED 1
#endif
#endif
#ifndef REPLAY_SANITIZED
#define REPLAY_SANITIZED 0
#endif

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            unsigned char *nb;
            cap = cap ? cap * 2 : 4096;
            nb = (unsigned char *)realloc(buf, cap);
            if (!nb) {
                fprintf(stderr, "replay: %s: out of memory\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    /* An exact-size copy, so ASan sees reads past the input's end. */
    {
        unsigned char *exact = (unsigned char *)malloc(n ? n : 1);
        if (!exact) {
            free(buf);
            return -1;
        }
        if (n)
            memcpy(exact, buf, n);
        free(buf);
        fprintf(stderr, "replay: %s (%lu bytes)\n", path, (unsigned long)n);
        (void)LLVMFuzzerTestOneInput(exact, n);
        free(exact);
    }
    return 0;
}

static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
            (int)sizeof path)
            continue;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && replay_file(path))
            rc = -1;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int i, rc = 0;
    if (argc == 2 && strcmp(argv[1], "--sanitized") == 0)
        return REPLAY_SANITIZED ? 0 : 1;
    for (i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            rc = 1;
        } else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                       : replay_file(argv[i])) {
            rc = 1;
        }
    }
    return rc;
}
