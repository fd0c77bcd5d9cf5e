/* Line reader for the Matrix Market readers: gzdopen serves plain and gzip
 * files alike; lines are cut in place in one growing buffer. */
#include "io/lines.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { KR_LINES_CHUNK = 1 << 18 };
/* A Matrix Market line is short; a longer one means a binary or broken
 * file, and the cap keeps such a file from filling memory. */
#define KR_LINES_MAX ((size_t)1 << 24)

kr_status kr_lines_open(kr_ctx *ctx, const char *path, kr_lines *L)
{
    memset(L, 0, sizeof *L);
    L->path = path;
    L->file_size = -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot open: %s", path,
                       strerror(errno));
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (err) {
        close(fd);
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot read: %s", path,
                       strerror(err));
    }
    L->gz = gzdopen(fd, "rb");
    L->buf = malloc(KR_LINES_CHUNK);
    if (!L->gz || !L->buf) {
        if (!L->gz) close(fd);
        kr_lines_close(L);
        return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory opening it", path);
    }
    L->cap = KR_LINES_CHUNK;
    gzbuffer(L->gz, KR_LINES_CHUNK);
    /* Only an uncompressed regular file has a size that bounds its
     * content; the readers use it to reject absurd size lines. */
    if (S_ISREG(st.st_mode) && gzdirect(L->gz))
        L->file_size = (long long)st.st_size;
    return KR_OK;
}

static kr_status read_error(kr_ctx *ctx, kr_lines *L)
{
    int errnum = Z_OK;
    const char *msg = gzerror(L->gz, &errnum);
    /* zlib names the stream "<fd:N>: "; the path is named already. */
    const char *cut = msg[0] == '<' ? strstr(msg, ": ") : NULL;
    if (cut) msg = cut + 2;
    return kr_fail(ctx, KR_ERR_IO, "%s:%ld: read error: %s", L->path,
                   L->line + 1, errnum == Z_ERRNO ? strerror(errno) : msg);
}

/* Moves the unread tail to the front and reads more behind it. */
static kr_status refill(kr_ctx *ctx, kr_lines *L)
{
    size_t have = L->end - L->beg;
    memmove(L->buf, L->buf + L->beg, have);
    L->beg = 0;
    L->end = have;
    if (L->end + 1 >= L->cap) {
        if (L->cap >= KR_LINES_MAX)
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "%s:%ld: line longer than %zu bytes; not a "
                           "Matrix Market file?",
                           L->path, L->line + 1, KR_LINES_MAX);
        char *nb = realloc(L->buf, L->cap * 2);
        if (!nb)
            return kr_fail(ctx, KR_ERR_NOMEM, "%s:%ld: out of memory", L->path,
                           L->line + 1);
        L->buf = nb;
        L->cap *= 2;
    }
    /* One byte stays free for the NUL after a last line without "\n". */
    int n = gzread(L->gz, L->buf + L->end, (unsigned)(L->cap - 1 - L->end));
    if (n < 0) return read_error(ctx, L);
    if (n == 0) {
        int errnum = Z_OK;
        gzerror(L->gz, &errnum);
        if (errnum != Z_OK) return read_error(ctx, L);
        L->eof = 1;
    }
    /* One scan per chunk, so that lines need a NUL check only in files
     * that have one. */
    if (n > 0 && memchr(L->buf + L->end, '\0', (size_t)n)) L->has_nul = 1;
    L->end += (size_t)n;
    return KR_OK;
}

static kr_status finish(kr_ctx *ctx, kr_lines *L, char *s, size_t len,
                        char **line)
{
    L->line++;
    if (len > 0 && s[len - 1] == '\r') s[--len] = '\0';
    if (L->has_nul && strlen(s) != len)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: line contains a NUL byte; not a text file?",
                       L->path, L->line);
    *line = s;
    return KR_OK;
}

kr_status kr_lines_next(kr_ctx *ctx, kr_lines *L, char **line)
{
    *line = NULL;
    for (;;) {
        char *s = L->buf + L->beg;
        char *nl = memchr(s, '\n', L->end - L->beg);
        if (nl) {
            *nl = '\0';
            L->beg = (size_t)(nl + 1 - L->buf);
            return finish(ctx, L, s, (size_t)(nl - s), line);
        }
        if (L->eof) {
            if (L->beg == L->end) return KR_OK;
            size_t len = L->end - L->beg;
            L->buf[L->end] = '\0';
            L->beg = L->end;
            return finish(ctx, L, s, len, line);
        }
        KR_TRY(refill(ctx, L));
    }
}

long kr_lines_last(const kr_lines *L) { return L->line > 0 ? L->line : 1; }

void kr_lines_close(kr_lines *L)
{
    if (!L) return;
    if (L->gz) gzclose(L->gz);
    free(L->buf);
    L->gz = NULL;
    L->buf = NULL;
}
