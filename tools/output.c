/* SPDX-License-Identifier: MIT */
/*
 * output.c - roicopy's output files (output.h): a temporary file beside
 * the output, removed on any failure and by the signal handler, synced and
 * renamed over the output, then its directory synced (at once, or once a
 * batch); descriptor outputs (-, /dev/stdout, /dev/fd/N), character
 * devices and FIFOs written in place (a socket, which open() cannot open,
 * is refused).  Single frames, --tiles and
 * --stack all write through output_write(); nothing else in tools/ syncs
 * or renames.
 */
/* fchmod(), fchown() and mkstemp() are XSI/POSIX.1-2008. */
#define _XOPEN_SOURCE 700

#include "output.h"
#include "escape.h"
#include "say.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

const char *image_file_type(unsigned mode)
{
    mode_t m = (mode_t)mode;
    if (S_ISREG(m))
        return "a regular file";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
#ifdef S_ISSOCK
    if (S_ISSOCK(m))
        return "a socket";
#endif
#ifdef S_ISLNK
    if (S_ISLNK(m))
        return "a symbolic link";
#endif
    return "not a regular file";
}

/* ---- temporary files and signals --------------------------------------- */

/* The temporary files being written, one entry per writing thread (roicopy
 * writes outputs on several threads); the signal handler removes every
 * live one.  An entry is claimed with an atomic exchange, then its state
 * goes from free to being made (the file's name written and mkstemp()
 * called, with every signal blocked in that thread) to live.  The handler
 * first marks the process dying, so that no writer makes a file after it
 * has looked (a writer that finds it dying waits for the end instead), and
 * waits out an entry being made on another thread before it looks at it:
 * a file made while the handler went through the entries, by a writer it
 * had passed, used to outlive the process. */
#define OUTPUT_MAX_WRITERS 128
enum { TMP_FREE, TMP_MAKING, TMP_LIVE };
static char tmp_names[OUTPUT_MAX_WRITERS][PATH_MAX + 32];
static int tmp_state[OUTPUT_MAX_WRITERS];
static int tmp_claimed[OUTPUT_MAX_WRITERS];
static int dying; /* a fatal signal is being handled */

/* A writer that cannot go on because the process is dying of a signal
 * (its temporary file removed under it) waits for the end, saying nothing. */
static void wait_if_dying(void)
{
    if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST))
        for (;;)
            (void)pause();
}

static int tmp_claim(void)
{
    int i;
    for (;;) {
        for (i = 0; i < OUTPUT_MAX_WRITERS; ++i) {
            int zero = 0;
            if (__atomic_compare_exchange_n(&tmp_claimed[i], &zero, 1, 0,
                                            __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
                return i;
        }
        (void)sched_yield(); /* more writers than entries: wait for one */
    }
}

static void tmp_unclaim(int i)
{
    __atomic_store_n(&tmp_state[i], TMP_FREE, __ATOMIC_SEQ_CST);
    __atomic_store_n(&tmp_claimed[i], 0, __ATOMIC_SEQ_CST);
}

void (*image_test_write_hook)(const char *tmp);

int image_mkstemp_tracked(const char *tmpl, const char **name, int *slot)
{
    int i = tmp_claim(), fd, saved;
    size_t n = strlen(tmpl);
    sigset_t all, old;
    if (n >= sizeof tmp_names[0]) {
        tmp_unclaim(i);
        errno = ENAMETOOLONG;
        return -1;
    }
    /* A signal is taken after the file is live, or by another thread,
     * whose handler waits for it to be. */
    (void)sigfillset(&all);
    (void)pthread_sigmask(SIG_BLOCK, &all, &old);
    __atomic_store_n(&tmp_state[i], TMP_MAKING, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST)) {
        tmp_unclaim(i);
        wait_if_dying();
    }
    memcpy(tmp_names[i], tmpl, n + 1);
    fd = mkstemp(tmp_names[i]);
    saved = errno;
    if (fd < 0)
        tmp_unclaim(i);
    else
        __atomic_store_n(&tmp_state[i], TMP_LIVE, __ATOMIC_SEQ_CST);
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        errno = saved;
        return -1;
    }
    *name = tmp_names[i];
    *slot = i;
    return fd;
}

void image_temp_release(int slot)
{
    if (slot >= 0 && slot < OUTPUT_MAX_WRITERS)
        tmp_unclaim(slot);
}

void image_signal_cleanup(void)
{
    int i, s;
    for (i = 0; i < OUTPUT_MAX_WRITERS; ++i) {
        /* mkstemp() on another thread, whose signals are blocked: a
         * moment. */
        while ((s = __atomic_load_n(&tmp_state[i], __ATOMIC_SEQ_CST)) ==
               TMP_MAKING)
            ;
        if (s == TMP_LIVE)
            (void)unlink(tmp_names[i]);
    }
}

static void on_fatal_signal(int sig)
{
    __atomic_store_n(&dying, 1, __ATOMIC_SEQ_CST);
    image_signal_cleanup();
    (void)signal(sig, SIG_DFL);
    (void)raise(sig); /* delivered, with its default action, on return */
}

void image_install_signal_cleanup(void)
{
    /* Every signal whose default action ends the process and that can be
     * caught. */
    static const int sigs[] = {
        SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
        SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU,
        SIGVTALRM, SIGPROF, SIGSYS,
#ifdef SIGPOLL
        SIGPOLL,
#endif
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
#ifdef SIGPWR
        SIGPWR,
#endif
    };
    struct sigaction sa, old;
    size_t i;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    /* A signal ignored at start (nohup, a shell's background job) stays
     * ignored: it would not have ended the process. */
    for (i = 0; i < sizeof sigs / sizeof *sigs; ++i)
        if (sigaction(sigs[i], NULL, &old) == 0 &&
            !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue;
        else
            (void)sigaction(sigs[i], &sa, NULL);
    /* A write past RLIMIT_FSIZE then fails with EFBIG, and the temporary
     * file is removed like after any failed write. */
    (void)signal(SIGXFSZ, SIG_IGN);
}

/* ---- renaming and directories ------------------------------------------ */

/* The temporary name ".BASE.XXXXXX" beside path; BASE is cut short so
 * that the name fits in NAME_MAX whatever the length of path's own name. */
static int temp_name(const char *path, char *tmp, size_t n)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    int keep = (int)strlen(base), k;
    if (keep > IMAGE_NAME_MAX - 8)
        keep = IMAGE_NAME_MAX - 8;
    if (!slash)
        k = snprintf(tmp, n, ".%.*s.XXXXXX", keep, base);
    else
        k = snprintf(tmp, n, "%.*s/.%.*s.XXXXXX", (int)(slash - path), path,
                     keep, base);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* umask() can only be read by setting it.  Writers on several threads
 * (after image_defer_dir_sync(1)) use the value read then, so that none
 * sees, or leaves, a umask of 0; a single writer reads it each time. */
static mode_t umask_value;
static int dirs_deferred;

static mode_t read_umask(void)
{
    mode_t m = umask(0);
    (void)umask(m);
    return m;
}

static mode_t creation_mode(void)
{
    return (mode_t)0666 & ~(dirs_deferred ? umask_value : read_umask());
}

/* Deferred directory syncs (image_defer_dir_sync): the directories of the
 * outputs renamed since, each once. */
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static char **dirs_pending;
static size_t ndirs_pending;

void image_defer_dir_sync(int on)
{
    if (on)
        umask_value = read_umask(); /* before any writer thread starts */
    dirs_deferred = on;
}

static void dir_name(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        (void)snprintf(dir, n, ".");
    else if (slash == path)
        (void)snprintf(dir, n, "/");
    else
        (void)snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* fsync path's directory now: best effort, the data itself is already
 * synced. */
static void sync_dir(const char *path)
{
    char dir[PATH_MAX];
    int fd;
    dir_name(path, dir, sizeof dir);
    fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Remember path's directory for image_sync_dirs(); 0, or -1 when out of
 * memory (the caller then syncs it at once). */
static int defer_dir(const char *path)
{
    char dir[PATH_MAX], *copy, **grown;
    size_t i;
    int rc = 0;
    dir_name(path, dir, sizeof dir);
    pthread_mutex_lock(&dirs_lock);
    for (i = 0; i < ndirs_pending; ++i)
        if (!strcmp(dirs_pending[i], dir))
            break;
    if (i == ndirs_pending) {
        copy = strdup(dir);
        grown = copy ? (char **)realloc(dirs_pending, (ndirs_pending + 1) *
                                                          sizeof *grown)
                     : NULL;
        if (grown) {
            dirs_pending = grown;
            dirs_pending[ndirs_pending++] = copy;
        } else {
            free(copy);
            rc = -1;
        }
    }
    pthread_mutex_unlock(&dirs_lock);
    return rc;
}

int image_sync_dirs(char *err, size_t errsz)
{
    size_t i;
    int rc = 0;
    pthread_mutex_lock(&dirs_lock);
    for (i = 0; i < ndirs_pending; ++i) {
        int fd = open(dirs_pending[i], O_RDONLY);
        if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
            if (rc == 0)
                say(err, errsz, "%s: cannot sync the directory: %s",
                    roicopy_esc(dirs_pending[i]), strerror(errno));
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
        free(dirs_pending[i]);
    }
    free(dirs_pending);
    dirs_pending = NULL;
    ndirs_pending = 0;
    pthread_mutex_unlock(&dirs_lock);
    return rc;
}

/* ---- descriptor outputs ------------------------------------------------ */

/* "N" of the descriptor names below, or -1: only digits, no sign. */
static int fd_number(const char *s)
{
    long v = 0;
    if (!*s)
        return -1;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9' || v > 65535)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v > 65535 ? -1 : (int)v;
}

static int fd_name(const char *p)
{
    char self[64];
    size_t n;
    if (!strcmp(p, "/dev/stdout"))
        return 1;
    if (!strcmp(p, "/dev/stderr"))
        return 2;
    if (!strcmp(p, "/dev/stdin"))
        return 0;
    if (!strncmp(p, "/dev/fd/", 8))
        return fd_number(p + 8);
    if (!strncmp(p, "/proc/self/fd/", 14))
        return fd_number(p + 14);
    if (!strncmp(p, "/proc/thread-self/fd/", 21))
        return fd_number(p + 21);
    n = (size_t)snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    if (n < sizeof self && !strncmp(p, self, n))
        return fd_number(p + n);
    return -1;
}

int image_output_fd(const char *path)
{
    char cur[PATH_MAX], link[PATH_MAX];
    struct stat st;
    int hops, fd;
    ssize_t k;
    if (!strcmp(path, "-"))
        return 1;
    if (strlen(path) >= sizeof cur)
        return -1;
    memcpy(cur, path, strlen(path) + 1);
    /* Follow symbolic links of the last component (/dev/stdout is one to
     * /proc/self/fd/1, whose own link names the file behind the
     * descriptor, not a path to rename over). */
    for (hops = 0; hops < 40; ++hops) {
        if ((fd = fd_name(cur)) >= 0)
            return fd;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return -1;
        k = readlink(cur, link, sizeof link - 1);
        if (k < 0)
            return -1;
        link[k] = '\0';
        if (link[0] == '/') {
            memcpy(cur, link, (size_t)k + 1);
        } else {
            char *slash = strrchr(cur, '/');
            size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
            if (keep + (size_t)k + 1 > sizeof cur)
                return -1;
            memcpy(cur + keep, link, (size_t)k + 1);
        }
    }
    return -1;
}

/* ---- writing ------------------------------------------------------------ */

/* write() into fd, then fd synced (files only) and closed.  A writer's
 * own sentence in err comes back with errno 0; otherwise errno says what
 * failed. */
static int write_close(int fd, output_writer write, void *ctx, int sync,
                       char *err, size_t errsz)
{
    int saved;
    if (write(fd, ctx, err, errsz) != 0) {
        saved = err && *err ? 0 : errno;
        (void)close(fd);
        errno = saved;
        return -1;
    }
    if ((sync && fsync(fd) != 0) || close(fd) != 0) {
        saved = errno;
        if (sync)
            (void)close(fd); /* EBADF after a successful close: harmless */
        errno = saved;
        return -1;
    }
    return 0;
}

/* The message of a failed write_close, unless the writer said its own. */
static void say_write_failed(int saved, char *err, size_t errsz)
{
    if (saved || !err || !*err)
        say(err, errsz, "cannot write: %s",
            saved ? strerror(saved) : "write error");
}

/* Standard output, a descriptor named by path (/dev/stdout, /dev/fd/N),
 * a character device or a FIFO: written into, never replaced
 * (there is nothing to rename over). */
static int write_in_place(const char *path, output_writer write, void *ctx,
                          char *err, size_t errsz)
{
    int n = image_output_fd(path);
    int fd = n >= 0 ? dup(n) : open(path, O_WRONLY | O_NOCTTY);
    if (fd < 0) {
        say(err, errsz, "%s", strerror(errno));
        return -1;
    }
    errno = 0;
    if (err && errsz)
        err[0] = '\0';
    if (write_close(fd, write, ctx, 0, err, errsz) != 0) {
        say_write_failed(errno, err, errsz);
        return -1;
    }
    return 0;
}

int output_write(const char *path, output_writer write, void *ctx,
                 char *err, size_t errsz)
{
    struct stat st;
    mode_t mode;
    char tmpl[sizeof tmp_names[0]];
    const char *tmp;
    int fd, saved, exists, slot;
    if (image_output_fd(path) >= 0)
        return write_in_place(path, write, ctx, err, errsz);
    exists = stat(path, &st) == 0;
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
        return write_in_place(path, write, ctx, err, errsz);
    if (exists && !S_ISREG(st.st_mode)) {
        say(err, errsz, "is %s; only regular files, character devices "
            "and FIFOs are written",
            image_file_type((unsigned)st.st_mode));
        return -1;
    }
    /* An existing output keeps its permissions (and, where allowed, its
     * owner); a new one gets 0666 less the umask, as open() would. */
    mode = exists ? (st.st_mode & 07777) : creation_mode();
    if (temp_name(path, tmpl, sizeof tmpl)) {
        say(err, errsz, "path is too long");
        return -1;
    }
    fd = image_mkstemp_tracked(tmpl, &tmp, &slot);
    if (fd < 0) {
        say(err, errsz, "cannot create a temporary file: %s", strerror(errno));
        return -1;
    }
    /* Keep the owner where allowed, else at least the group; neither is
     * fatal (an ordinary user cannot give a file away). */
    if (exists && fchown(fd, st.st_uid, st.st_gid) != 0 &&
        fchown(fd, (uid_t)-1, st.st_gid) != 0)
        errno = 0;
    if (image_test_write_hook)
        image_test_write_hook(tmp);
    errno = 0;
    if (err && errsz)
        err[0] = '\0';
    if (fchmod(fd, mode) != 0 ||
        write_close(fd, write, ctx, 1, err, errsz) != 0 ||
        rename(tmp, path) != 0) {
        saved = errno;
        wait_if_dying(); /* the handler removed tmp: no message */
        (void)unlink(tmp);
        tmp_unclaim(slot);
        say_write_failed(saved, err, errsz);
        return -1;
    }
    tmp_unclaim(slot);
    if (!dirs_deferred || defer_dir(path) != 0)
        sync_dir(path);
    return 0;
}
