/* Line reader for the Matrix Market readers: a kr_source serves plain and
 * gzip input alike; lines are cut in place in one growing buffer. */
#include "io/lines.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KR_LINES_CHUNK = 1 << 18 };
/* A Matrix Market line is short; a longer one means a binary or broken
 * file, and the cap keeps such a file from filling memory. */
#define KR_LINES_MAX ((size_t)1 << 24)

kr_status kr_lines_start(kr_ctx *ctx, kr_source *S, kr_lines *L)
{
    memset(L, 0, sizeof *L);
    L->src = S;
    L->path = S->path;
    /* Only uncompressed input of known size bounds its content; the
     * readers use it to reject absurd size lines. */
    L->file_size = S->size;
    L->buf = malloc(KR_LINES_CHUNK);
    if (!L->buf)
        return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory opening it",
                       L->path);
    L->cap = KR_LINES_CHUNK;
    return KR_OK;
}

kr_status kr_lines_open(kr_ctx *ctx, const char *path, kr_lines *L)
{
    kr_source own;
    KR_TRY(kr_source_open(ctx, path, &own));
    kr_status st = kr_lines_start(ctx, &own, L);
    L->own = own;
    L->src = &L->own;
    if (st != KR_OK) kr_lines_close(L);
    return st;
}

/* The source names the file; the line it failed on is added. */
static kr_status read_error(kr_ctx *ctx, kr_lines *L, kr_status st)
{
    const char *msg = ctx ? kr_ctx_error(ctx) : "";
    size_t n = strlen(L->path);
    if (strncmp(msg, L->path, n) != 0 || strncmp(msg + n, ": ", 2) != 0)
        return st;
    char rest[512];
    snprintf(rest, sizeof rest, "%s", msg + n + 2);
    return kr_fail(ctx, st, "%s:%ld: %s", L->path, L->line + 1, rest);
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
    size_t n = 0;
    kr_status st =
        kr_source_read(ctx, L->src, L->buf + L->end, L->cap - 1 - L->end, &n);
    if (st != KR_OK) return read_error(ctx, L, st);
    if (n == 0) L->eof = 1;
    /* One scan per chunk, so that lines need a NUL check only in files
     * that have one. */
    if (n > 0 && memchr(L->buf + L->end, '\0', n)) L->has_nul = 1;
    L->end += n;
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
    if (L->src == &L->own) kr_source_close(&L->own);
    free(L->buf);
    L->src = NULL;
    L->buf = NULL;
}

kr_status kr_read_lines(kr_ctx *ctx, const char *path, kr_line_fn fn,
                        void *user)
{
    if (!path || !fn)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_lines: %s is NULL",
                       path ? "fn" : "path");
    kr_lines L;
    memset(&L, 0, sizeof L); /* closed even when the open fails */
    kr_status st = kr_lines_open(ctx, path, &L);
    char *line = NULL;
    while (st == KR_OK) {
        st = kr_lines_next(ctx, &L, &line);
        if (st != KR_OK || !line || fn(user, line, L.line)) break;
    }
    kr_lines_close(&L);
    return st;
}
