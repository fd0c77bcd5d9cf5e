/* Output files: through a temporary renamed over the target (regular
 * files and new paths, symbolic links followed), or directly (FIFOs,
 * devices, the process's descriptors). See io/outfile.h. */
#include "io/outfile.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    KR_OUT_BUFFER = 1 << 20,
    KR_OUT_MAX_LINKS = 40, /* as the kernel's limit on a path's links */
    KR_OUT_NAME_TRIES = 100
};

/* ---- the temporaries a signal handler may have to remove ---- */

enum { PENDING_SLOTS = 8, PENDING_LEN = 4096 };
enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };
static char pending_path[PENDING_SLOTS][PENDING_LEN];
static atomic_int pending_state[PENDING_SLOTS];

/* Lists tmp before it is created, so that no moment has it on disk and
 * unlisted. Returns the slot, or -1 (too long, or all slots in use: the
 * file is then only removed by the normal paths). */
static int pending_add(const char *tmp)
{
    size_t len = strlen(tmp);
    if (len >= PENDING_LEN) return -1;
    for (int i = 0; i < PENDING_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&pending_state[i], &expect,
                                            SLOT_FILLING))
            continue;
        memcpy(pending_path[i], tmp, len + 1);
        atomic_store(&pending_state[i], SLOT_READY);
        return i;
    }
    return -1;
}

static void pending_drop(int slot)
{
    if (slot >= 0) atomic_store(&pending_state[slot], SLOT_FREE);
}

void kr_outfile_unlink_pending(void)
{
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (atomic_load(&pending_state[i]) == SLOT_READY)
            unlink(pending_path[i]);
}

/* ---- where the data goes ---- */

/* The descriptor "-", /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N names, else -1. Written through the descriptor itself:
 * opening the name anew would start at offset 0 of a redirected file. */
static int fd_name(const char *p)
{
    if (!strcmp(p, "-") || !strcmp(p, "/dev/stdout")) return 1;
    if (!strcmp(p, "/dev/stderr")) return 2;
    const char *digits = !strncmp(p, "/dev/fd/", 8)          ? p + 8
                         : !strncmp(p, "/proc/self/fd/", 14) ? p + 14
                                                             : NULL;
    if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits))
        return -1;
    long fd = strtol(digits, NULL, 10);
    return fd <= 1024 ? (int)fd : -1;
}

/* The folder part of p with its slash ("a/b/" of "a/b/c"), "" if none. */
static size_t dir_len(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? (size_t)(slash - p) + 1 : 0;
}

/* The text of the link at p, resolved against p's folder (malloc'ed). */
static char *link_target(const char *p, size_t size_hint)
{
    size_t cap = size_hint + 2;
    char *link = NULL;
    for (;;) {
        char *grown = realloc(link, cap);
        if (!grown) break;
        link = grown;
        ssize_t got = readlink(p, link, cap);
        if (got < 0) break;
        if ((size_t)got < cap) {
            link[got] = '\0';
            if (link[0] == '/') return link;
            size_t d = dir_len(p);
            char *joined = malloc(d + (size_t)got + 1);
            if (joined) {
                memcpy(joined, p, d);
                memcpy(joined + d, link, (size_t)got + 1);
            }
            free(link);
            return joined;
        }
        cap *= 2;
    }
    free(link);
    return NULL;
}

/* Follows the symbolic links from path to the file they end at (which
 * may not exist yet: writing creates it, as the shell's `>` does). Stops
 * at a descriptor name (*fd set) or a link under /proc, which only the
 * kernel can follow (*magic set). */
static kr_status follow_links(kr_ctx *ctx, const char *path, char **target,
                              int *fd, int *magic)
{
    char *cur = strdup(path);
    *fd = -1;
    *magic = 0;
    for (int hops = 0; cur; hops++) {
        struct stat st;
        *fd = fd_name(cur);
        if (*fd >= 0 || lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) break;
        if (!strncmp(cur, "/proc/", 6)) {
            *magic = 1;
            break;
        }
        if (hops == KR_OUT_MAX_LINKS) {
            free(cur);
            return kr_fail(ctx, KR_ERR_IO,
                           "%s: more than %d symbolic links to follow", path,
                           KR_OUT_MAX_LINKS);
        }
        char *next = link_target(cur, (size_t)st.st_size);
        int err = errno;
        free(cur);
        if (!next && err != ENOMEM)
            return kr_fail(ctx, KR_ERR_IO, "%s: cannot read a link: %s", path,
                           strerror(err));
        cur = next;
    }
    if (!cur) return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory", path);
    *target = cur;
    return KR_OK;
}

/* "<target>.tmp.<pid>.<6 letters>": the pid keeps two processes apart,
 * the letters (a counter mixed with the clock) two files of one. */
static void temp_name(char *tmp, const char *target, size_t len)
{
    static atomic_uint counter;
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t h = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull +
                 atomic_fetch_add(&counter, 1u) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    char letters[7];
    for (int i = 0; i < 6; i++, h /= 36)
        letters[i] = abc[h % 36];
    letters[6] = '\0';
    snprintf(tmp, len, "%s.tmp.%ld.%s", target, (long)getpid(), letters);
}

/* Creates a new temporary next to o->target with the permissions the
 * umask gives a new file (open's 0666), listed as pending. */
static kr_status create_temp(kr_ctx *ctx, kr_outfile *o)
{
    size_t len = strlen(o->target) + 64;
    o->tmp = malloc(len);
    if (!o->tmp)
        return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory", o->path);
    for (int tries = 0; tries < KR_OUT_NAME_TRIES; tries++) {
        temp_name(o->tmp, o->target, len);
        o->slot = pending_add(o->tmp);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd >= 0) return KR_OK;
        int err = errno;
        pending_drop(o->slot);
        o->slot = -1;
        if (err != EEXIST) {
            errno = err;
            break;
        }
    }
    int err = errno;
    free(o->tmp);
    o->tmp = NULL;
    return kr_fail(ctx, KR_ERR_IO, "%s: cannot create a file there: %s",
                   o->path, strerror(err));
}

/* What exists at o->target decides how it is written: *direct for a
 * non-regular file, *mode the mode to keep (-1 for a new file). */
static kr_status inspect(kr_ctx *ctx, const kr_outfile *o, int *direct,
                         int *mode)
{
    struct stat st;
    *direct = 0;
    *mode = -1;
    if (stat(o->target, &st) != 0) {
        if (errno == ENOENT) return KR_OK; /* created; see create_temp */
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot write there: %s", o->path,
                       strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return kr_fail(ctx, KR_ERR_IO, "%s: is a directory", o->path);
    if (access(o->target, W_OK) != 0)
        return kr_fail(ctx, KR_ERR_IO, "%s: not writable: %s", o->path,
                       strerror(errno));
    *direct = !S_ISREG(st.st_mode);
    *mode = (int)(st.st_mode & 07777);
    return KR_OK;
}

/* Finds where path leads and opens the descriptor o->fd there. */
static kr_status open_fd(kr_ctx *ctx, const char *path, kr_outfile *o)
{
    int fd, magic, direct, mode;
    KR_TRY(follow_links(ctx, path, &o->target, &fd, &magic));
    if (fd >= 0) {
        o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (o->fd >= 0) return KR_OK;
        return kr_fail(ctx, KR_ERR_IO, "%s: descriptor %d: %s", path, fd,
                       strerror(errno));
    }
    if (magic) {
        o->fd = open(o->target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (o->fd >= 0) return KR_OK;
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot open: %s", path,
                       strerror(errno));
    }
    KR_TRY(inspect(ctx, o, &direct, &mode));
    if (direct) {
        o->fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (o->fd >= 0) return KR_OK;
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot open: %s", path,
                       strerror(errno));
    }
    KR_TRY(create_temp(ctx, o));
    if (mode >= 0 && fchmod(o->fd, (mode_t)mode) != 0)
        return kr_outfile_fail(ctx, o);
    return KR_OK;
}

kr_status kr_outfile_open(kr_ctx *ctx, const char *path, int flags,
                          kr_outfile *o)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = -1;
    o->slot = -1;
    kr_status st = open_fd(ctx, path, o);
    if (st != KR_OK) {
        kr_outfile_abort(o);
        return st;
    }
    if (flags & KR_OUT_GZIP) {
        o->gz = gzdopen(o->fd, "wb");
        if (o->gz) gzbuffer(o->gz, KR_OUT_BUFFER);
    } else {
        o->f = fdopen(o->fd, "w");
        if (o->f) setvbuf(o->f, NULL, _IOFBF, KR_OUT_BUFFER);
    }
    if (!o->f && !o->gz) {
        if (!errno) errno = ENOMEM;
        return kr_outfile_fail(ctx, o);
    }
    return KR_OK;
}

int kr_outfile_printf(kr_outfile *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = o->gz ? gzvprintf(o->gz, fmt, ap) : vfprintf(o->f, fmt, ap);
    va_end(ap);
    return o->gz && n <= 0 ? -1 : n;
}

int kr_outfile_write(kr_outfile *o, const void *buf, size_t bytes)
{
    if (o->gz)
        return bytes == 0 || gzfwrite(buf, 1, bytes, o->gz) == bytes ? 0 : -1;
    return fwrite(buf, 1, bytes, o->f) == bytes ? 0 : -1;
}

kr_status kr_outfile_fail(kr_ctx *ctx, kr_outfile *o)
{
    int err = errno;
    int direct = o->tmp == NULL;
    kr_outfile_abort(o);
    return kr_fail(ctx, KR_ERR_IO, "%s: write failed: %s; %s", o->path,
                   strerror(err),
                   direct ? "the output is incomplete" : "nothing written");
}

/* Flushes everything to o->fd and syncs it (a temporary only: pipes and
 * devices cannot sync), leaving the stream open. */
static int flush_all(kr_outfile *o)
{
    if (o->gz ? gzflush(o->gz, Z_FINISH) != Z_OK
              : fflush(o->f) != 0 || ferror(o->f))
        return -1;
    /* EINVAL: the file system cannot sync (nothing more to wait for). */
    return o->tmp && fsync(o->fd) != 0 && errno != EINVAL ? -1 : 0;
}

/* Closes the stream (and o->fd with it); 0 or -1 with errno. */
static int close_stream(kr_outfile *o)
{
    int bad = 0;
    if (o->gz) {
        int z = gzclose(o->gz);
        bad = z != Z_OK;
        if (bad && z != Z_ERRNO) errno = EIO;
    } else if (o->f) {
        bad = fclose(o->f) != 0;
    } else if (o->fd >= 0) {
        close(o->fd);
    }
    o->gz = NULL;
    o->f = NULL;
    o->fd = -1;
    return bad ? -1 : 0;
}

kr_status kr_outfile_commit(kr_ctx *ctx, kr_outfile *o)
{
    if (flush_all(o) != 0 || close_stream(o) != 0)
        return kr_outfile_fail(ctx, o);
    if (o->tmp && rename(o->tmp, o->target) != 0)
        return kr_outfile_fail(ctx, o);
    pending_drop(o->slot); /* after the rename: never a moment unlisted */
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return KR_OK;
}

void kr_outfile_abort(kr_outfile *o)
{
    if (!o) return;
    int err = errno; /* kept for the caller's message */
    close_stream(o);
    if (o->tmp) unlink(o->tmp);
    pending_drop(o->slot);
    free(o->tmp);
    free(o->target);
    o->slot = -1;
    o->tmp = o->target = NULL;
    errno = err;
}

kr_status kr_outfile_check(kr_ctx *ctx, const char *path)
{
    kr_outfile o = {.path = path, .fd = -1, .slot = -1};
    int fd, magic, direct, mode;
    kr_status st = follow_links(ctx, path, &o.target, &fd, &magic);
    int flags = st == KR_OK && fd >= 0 ? fcntl(fd, F_GETFL) : O_WRONLY;
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
        st = kr_fail(ctx, KR_ERR_IO,
                     "%s: descriptor %d is not open for "
                     "writing",
                     path, fd);
    if (st != KR_OK || fd >= 0 || magic) {
        free(o.target);
        return st;
    }
    st = inspect(ctx, &o, &direct, &mode);
    if (st == KR_OK && !direct) st = create_temp(ctx, &o);
    kr_outfile_abort(&o); /* removes the probe */
    return st;
}

int kr_outfile_gzip_name(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && !strcmp(path + n - 3, ".gz");
}

kr_status kr_write_text(kr_ctx *ctx, const char *path, kr_emit_fn emit,
                        const void *arg)
{
    if (!path || !emit)
        return kr_fail(ctx, KR_ERR_ARG, "kr_write_text: %s is NULL",
                       path ? "emit" : "path");
    kr_outfile o;
    kr_status st = kr_outfile_open(ctx, path, KR_OUT_PLAIN, &o);
    if (st != KR_OK) return st;
    emit(o.f, arg);
    return ferror(o.f) ? kr_outfile_fail(ctx, &o) : kr_outfile_commit(ctx, &o);
}
