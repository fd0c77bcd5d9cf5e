/* Inputs read once: raw bytes from a descriptor or a buffer, inflated when
 * they start with the gzip magic. zlib's gzdopen would hide the first
 * bytes that tell the format; driving inflate here keeps them. */
#include "io/source.h"

#include "core/error.h"
#include "core/memory.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { KR_SOURCE_CHUNK = 1 << 18 };

static const char *const stdin_name = "standard input";

static int gzip_magic(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/* Tops the raw window up from the descriptor (the unread bytes move to
 * the front of buf). */
static kr_status raw_fill(kr_ctx *ctx, kr_source *S)
{
    if (S->raw_eof) return KR_OK;
    memmove(S->buf, S->raw, S->raw_n);
    S->raw = S->buf;
    ssize_t got;
    do
        got = read(S->fd, S->buf + S->raw_n, KR_SOURCE_CHUNK - S->raw_n);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return kr_fail(ctx, KR_ERR_IO, "%s: read error: %s", S->path,
                       strerror(errno));
    if (got == 0) S->raw_eof = 1;
    S->raw_n += (size_t)got;
    return KR_OK;
}

/* Sets up inflate when the input starts with the gzip magic. */
static kr_status detect_gzip(kr_ctx *ctx, kr_source *S)
{
    while (S->raw_n < 2 && !S->raw_eof)
        KR_TRY(raw_fill(ctx, S));
    if (!gzip_magic(S->raw, S->raw_n)) return KR_OK;
    S->size = -1;
    S->z = calloc(1, sizeof *S->z);
    if (!S->z || inflateInit2(S->z, 15 + 16) != Z_OK) {
        free(S->z);
        S->z = NULL;
        return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory for gzip",
                       S->path);
    }
    return KR_OK;
}

kr_status kr_source_open(kr_ctx *ctx, const char *path, kr_source *S)
{
    memset(S, 0, sizeof *S);
    S->fd = -1;
    S->size = -1;
    int is_stdin = strcmp(path, "-") == 0;
    S->path = is_stdin ? stdin_name : path;
    S->fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY);
    if (S->fd < 0)
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot open: %s", S->path,
                       strerror(errno));
    struct stat st;
    int err = fstat(S->fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (err) {
        close(S->fd);
        S->fd = -1;
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot read: %s", S->path,
                       strerror(err));
    }
    /* Only a regular file has a size that bounds its content. */
    if (S_ISREG(st.st_mode)) S->size = (long long)st.st_size;
    S->buf = malloc(KR_SOURCE_CHUNK);
    if (!S->buf) {
        close(S->fd);
        S->fd = -1;
        return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory opening it",
                       S->path);
    }
    S->raw = S->buf;
    kr_status st2 = detect_gzip(ctx, S);
    if (st2 != KR_OK) kr_source_close(S);
    return st2;
}

kr_status kr_source_memory(kr_ctx *ctx, const char *name, const void *data,
                           size_t len, kr_source *S)
{
    memset(S, 0, sizeof *S);
    S->fd = -1;
    S->path = name;
    S->raw = data;
    S->raw_n = len;
    S->raw_eof = 1;
    S->size = (long long)len;
    return detect_gzip(ctx, S);
}

static kr_status read_plain(kr_ctx *ctx, kr_source *S, unsigned char *dst,
                            size_t n, size_t *got)
{
    while (*got < n) {
        if (S->raw_n == 0) {
            if (S->raw_eof) break;
            KR_TRY(raw_fill(ctx, S));
            continue;
        }
        size_t k = n - *got < S->raw_n ? n - *got : S->raw_n;
        memcpy(dst + *got, S->raw, k);
        S->raw += k;
        S->raw_n -= k;
        *got += k;
    }
    return KR_OK;
}

/* After a gzip member: another one may follow (as gzip -c a b makes);
 * anything else is ignored, as zlib's gzread does. */
static kr_status next_member(kr_ctx *ctx, kr_source *S)
{
    while (S->raw_n < 2 && !S->raw_eof)
        KR_TRY(raw_fill(ctx, S));
    if (gzip_magic(S->raw, S->raw_n))
        inflateReset(S->z);
    else
        S->z_end = 1;
    return KR_OK;
}

static kr_status read_gzip(kr_ctx *ctx, kr_source *S, unsigned char *dst,
                           size_t n, size_t *got)
{
    z_stream *z = S->z;
    while (*got < n && !S->z_end) {
        if (S->raw_n == 0 && !S->raw_eof) KR_TRY(raw_fill(ctx, S));
        if (S->raw_n == 0)
            return kr_fail(ctx, KR_ERR_IO,
                           "%s: read error: unexpected end of file (the "
                           "gzip data is cut short)",
                           S->path);
        size_t in = S->raw_n > 1u << 30 ? 1u << 30 : S->raw_n;
        size_t out = n - *got > 1u << 30 ? 1u << 30 : n - *got;
        z->next_in = (unsigned char *)S->raw;
        z->avail_in = (uInt)in;
        z->next_out = dst + *got;
        z->avail_out = (uInt)out;
        int ret = inflate(z, Z_NO_FLUSH);
        S->raw += in - z->avail_in;
        S->raw_n -= in - z->avail_in;
        *got += out - z->avail_out;
        if (ret == Z_STREAM_END)
            KR_TRY(next_member(ctx, S));
        else if (ret == Z_MEM_ERROR)
            return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory inflating",
                           S->path);
        else if (ret != Z_OK && !(ret == Z_BUF_ERROR && z->avail_in == 0))
            return kr_fail(ctx, KR_ERR_IO, "%s: read error: %s", S->path,
                           z->msg ? z->msg : "invalid gzip data");
    }
    return KR_OK;
}

static kr_status read_content(kr_ctx *ctx, kr_source *S, unsigned char *dst,
                              size_t n, size_t *got)
{
    return S->z ? read_gzip(ctx, S, dst, n, got)
                : read_plain(ctx, S, dst, n, got);
}

kr_status kr_source_read(kr_ctx *ctx, kr_source *S, void *dst, size_t n,
                         size_t *got)
{
    unsigned char *d = dst;
    *got = 0;
    size_t ahead = S->peek_end - S->peek_beg;
    if (ahead > 0) {
        size_t k = n < ahead ? n : ahead;
        memcpy(d, S->peek + S->peek_beg, k);
        S->peek_beg += k;
        *got = k;
    }
    return read_content(ctx, S, d, n, got);
}

kr_status kr_source_peek(kr_ctx *ctx, kr_source *S, void *dst, size_t n,
                         size_t *got)
{
    if (n > KR_SOURCE_PEEK) n = KR_SOURCE_PEEK;
    if (S->peek_end < n) KR_TRY(read_content(ctx, S, S->peek, n, &S->peek_end));
    *got = S->peek_end < n ? S->peek_end : n;
    memcpy(dst, S->peek, *got);
    return KR_OK;
}

int kr_source_gzip(const kr_source *S) { return S->z != NULL; }

void kr_source_close(kr_source *S)
{
    if (!S) return;
    if (S->z) {
        inflateEnd(S->z);
        free(S->z);
    }
    if (S->buf) close(S->fd); /* only descriptor inputs have a buffer */
    free(S->buf);
    memset(S, 0, sizeof *S);
    S->fd = -1;
}

kr_status kr_io_check_memory(kr_ctx *ctx, const char *where, double bytes,
                             const char *what)
{
    char full[768];
    snprintf(full, sizeof full, "%s: %s", where, what);
    return kr_host_mem_check(ctx, bytes, full);
}
