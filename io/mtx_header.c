/* The Matrix Market header: the banner "%%MatrixMarket matrix FORMAT FIELD
 * SYMMETRY" (case-insensitive), comments, and the size line, checked
 * against 32-bit indices and, before anything is allocated, against the
 * size of the file. */
#include "core/error.h"
#include "io/mtx.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Fewest bytes of text an entry can take: "1 1\n" and "1\n". */
enum { KR_MTX_MIN_ENTRY = 4, KR_MTX_MIN_VALUE = 2 };

/* Copies up to `max` tokens of s into words (each cut to 31 chars). */
static int words(const char *s, char w[][32], int max)
{
    const char *b, *e;
    int n = 0;
    while (kr_mtx_token(&s, &b, &e)) {
        if (n < max) {
            size_t len = (size_t)(e - b) < 31 ? (size_t)(e - b) : 31;
            memcpy(w[n], b, len);
            w[n][len] = '\0';
        }
        n++;
    }
    return n;
}

static kr_status parse_format(kr_ctx *ctx, const char *path, char w[][32],
                              kr_mtx_header *h)
{
    if (strcasecmp(w[1], "matrix") != 0)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: unknown object '%s' in the banner; expected "
                       "'matrix'",
                       path, w[1]);
    if (strcasecmp(w[2], "coordinate") == 0)
        h->array = 0;
    else if (strcasecmp(w[2], "array") == 0)
        h->array = 1;
    else
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: unknown format '%s' in the banner; expected "
                       "'coordinate' or 'array'",
                       path, w[2]);
    return KR_OK;
}

static kr_status parse_field(kr_ctx *ctx, const char *path, char w[][32],
                             kr_mtx_header *h)
{
    if (strcasecmp(w[3], "real") == 0)
        h->field = KR_MTX_REAL;
    else if (strcasecmp(w[3], "integer") == 0)
        h->field = KR_MTX_INTEGER;
    else if (strcasecmp(w[3], "pattern") == 0)
        h->field = KR_MTX_PATTERN;
    else if (strcasecmp(w[3], "complex") == 0)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "%s:1: complex matrices are not supported (only "
                       "real, integer and pattern)",
                       path);
    else
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: unknown field '%s' in the banner; expected "
                       "'real', 'integer' or 'pattern'",
                       path, w[3]);
    if (h->field == KR_MTX_PATTERN && h->array)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: 'array' files cannot be 'pattern'", path);
    return KR_OK;
}

static kr_status parse_symmetry(kr_ctx *ctx, const char *path, char w[][32],
                                kr_mtx_header *h)
{
    if (strcasecmp(w[4], "general") == 0)
        h->symmetry = KR_MTX_GENERAL;
    else if (strcasecmp(w[4], "symmetric") == 0)
        h->symmetry = KR_MTX_SYMMETRIC;
    else if (strcasecmp(w[4], "skew-symmetric") == 0)
        h->symmetry = KR_MTX_SKEW;
    else if (strcasecmp(w[4], "hermitian") == 0)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "%s:1: hermitian matrices are not supported (they "
                       "are complex)",
                       path);
    else
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: unknown symmetry '%s' in the banner; expected "
                       "'general', 'symmetric' or 'skew-symmetric'",
                       path, w[4]);
    if (h->field == KR_MTX_PATTERN && h->symmetry == KR_MTX_SKEW)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: 'pattern' files cannot be 'skew-symmetric'",
                       path);
    return KR_OK;
}

static kr_status parse_banner(kr_ctx *ctx, kr_lines *L, kr_mtx_header *h)
{
    char *s, w[6][32];
    KR_TRY(kr_lines_next(ctx, L, &s));
    if (!s)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: empty file; expected the banner "
                       "'%%%%MatrixMarket matrix ...'",
                       L->path);
    /* A UTF-8 byte-order mark, as some editors save it, is not text. */
    if (!strncmp(s, "\xEF\xBB\xBF", 3)) s += 3;
    int n = words(s, w, 6);
    if (n == 0 || strcasecmp(w[0], "%%MatrixMarket") != 0)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: missing banner: the first line must start "
                       "with '%%%%MatrixMarket'",
                       L->path);
    if (n != 5)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:1: the banner has %d words; expected 5: "
                       "%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY",
                       L->path, n);
    KR_TRY(parse_format(ctx, L->path, w, h));
    KR_TRY(parse_field(ctx, L->path, w, h));
    return parse_symmetry(ctx, L->path, w, h);
}

/* Reads the `want` non-negative integers of the size line into v. One
 * too large for 64-bit arithmetic is refused as written in the file. */
static kr_status size_numbers(kr_ctx *ctx, kr_lines *L, int want, int64_t *v)
{
    char *s;
    do
        KR_TRY(kr_lines_next(ctx, L, &s));
    while (s && kr_mtx_skip_line(s));
    if (!s)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: file ends before the size line", L->path,
                       kr_lines_last(L));
    int n = kr_mtx_count_tokens(s);
    if (n != want)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: size line has %d numbers; expected %d (%s)",
                       L->path, L->line, n, want,
                       want == 3 ? "rows columns entries" : "rows columns");
    static const char *const names[3] = {"rows", "columns", "entries"};
    const char *p = s, *b = s, *e = s;
    for (int k = 0; k < want; k++) {
        kr_mtx_token(&p, &b, &e);
        int r = kr_mtx_int(b, e, &v[k]);
        if (r == KR_MTX_INT_BAD || v[k] < 0)
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "%s:%ld: size line: '%.*s' is not a "
                           "non-negative integer",
                           L->path, L->line, kr_mtx_toklen(b, e), b);
        if (r == KR_MTX_INT_HUGE || v[k] > INT32_MAX)
            return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                           "%s:%ld: size line: %.*s %s are more than 32-bit "
                           "indices allow (%d)",
                           L->path, L->line, kr_mtx_toklen(b, e), b, names[k],
                           INT32_MAX);
    }
    return KR_OK;
}

/* The values an array file stores: a triangle when symmetric. */
static int64_t array_count(const kr_mtx_header *h)
{
    int64_t n = h->nrows;
    if (h->symmetry == KR_MTX_SYMMETRIC) return n * (n + 1) / 2;
    if (h->symmetry == KR_MTX_SKEW) return n * (n - 1) / 2;
    return n * (int64_t)h->ncols;
}

/* Rejects sizes that overflow 32-bit indices after expansion. */
static kr_status check_overflow(kr_ctx *ctx, const kr_lines *L, int dense,
                                const kr_mtx_header *h)
{
    int64_t full = (int64_t)h->nrows * h->ncols;
    if ((h->array || dense) && full > INT32_MAX)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "%s:%ld: a dense %d x %d matrix has %lld values, more "
                       "than 32-bit indices allow (%d)",
                       L->path, h->size_line, h->nrows, h->ncols,
                       (long long)full, INT32_MAX);
    /* Expansion adds one entry per off-diagonal entry: at least
     * nstored - min(nstored, n) of them. */
    int64_t s = h->nstored, diag = s < h->nrows ? s : h->nrows;
    int64_t least = h->symmetry == KR_MTX_GENERAL ? s : 2 * s - diag;
    if (!h->array && least > INT32_MAX)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "%s:%ld: %lld entries%s are more than 32-bit indices "
                       "allow (%d)",
                       L->path, h->size_line, (long long)s,
                       s == least ? ""
                                  : " (twice as many after symmetric "
                                    "expansion)",
                       INT32_MAX);
    return KR_OK;
}

/* The rows a file's entries can reach: each stored entry fills one row,
 * or two when mirrored. Fewer than the rows prove an empty row. */
static int64_t rows_reached(const kr_mtx_header *h)
{
    if (h->array) return h->nstored > 0 ? h->nrows : 0;
    return h->symmetry == KR_MTX_GENERAL ? h->nstored : 2 * h->nstored;
}

/* A linear system's matrix: square, not empty, no empty row. */
static kr_status check_system(kr_ctx *ctx, const kr_lines *L,
                              const kr_mtx_header *h)
{
    if (h->nrows != h->ncols)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: the matrix is %d x %d; a linear system needs "
                       "a square matrix",
                       L->path, h->size_line, h->nrows, h->ncols);
    if (h->nrows == 0)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: the matrix is 0 x 0: there is no system to "
                       "solve",
                       L->path, h->size_line);
    if (rows_reached(h) < h->nrows)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: %d rows but only %lld entries: some row is "
                       "empty, so the matrix is singular",
                       L->path, h->size_line, h->nrows, (long long)h->nstored);
    return KR_OK;
}

/* Memory that the sizes demand (entries as read, row pointers and the
 * expanded CSR, or the dense array) is checked against the machine
 * before it is allocated: a tiny file may declare two billion rows. */
static kr_status check_memory(kr_ctx *ctx, const kr_lines *L, int dense,
                              const kr_mtx_header *h)
{
    /* Entries are allocated by the declared count only when the file's
     * size bounds it; otherwise they grow as they come. */
    double stored = L->file_size >= 0 ? (double)h->nstored : 0.0,
           expanded = h->symmetry == KR_MTX_GENERAL ? stored : 2 * stored;
    double need =
        dense ? 8.0 * h->nrows * (double)h->ncols + 16 * stored
              : 4.0 * ((double)h->nrows + 1.0) + 16 * stored + 12 * expanded;
    char where[512];
    snprintf(where, sizeof where, "%s:%ld", L->path, h->size_line);
    char what[96];
    snprintf(what, sizeof what, "a %d x %d matrix with %lld %s", h->nrows,
             h->ncols, (long long)h->nstored, h->array ? "values" : "entries");
    return kr_io_check_memory(ctx, where, need, what);
}

static kr_status check_sizes(kr_ctx *ctx, const kr_lines *L, unsigned flags,
                             const kr_mtx_header *h)
{
    int dense = (flags & KR_MTX_DENSE) != 0;
    if (h->symmetry != KR_MTX_GENERAL && h->nrows != h->ncols)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: a %s matrix must be square, but the size "
                       "line says %d x %d",
                       L->path, h->size_line,
                       h->symmetry == KR_MTX_SKEW ? "skew-symmetric"
                                                  : "symmetric",
                       h->nrows, h->ncols);
    KR_TRY(check_overflow(ctx, L, dense, h));
    if (flags & KR_READ_SYSTEM) KR_TRY(check_system(ctx, L, h));
    /* A declared count the file cannot hold is refused before any memory
     * is allocated for it. */
    long long min = h->array ? KR_MTX_MIN_VALUE : KR_MTX_MIN_ENTRY;
    if (L->file_size >= 0 && h->nstored > L->file_size / min)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: the size line declares %lld %s, but the "
                       "file has only %lld bytes",
                       L->path, h->size_line, (long long)h->nstored,
                       h->array ? "values" : "entries", L->file_size);
    return check_memory(ctx, L, dense, h);
}

kr_status kr_mtx_read_header(kr_ctx *ctx, kr_lines *L, unsigned flags,
                             kr_mtx_header *h)
{
    memset(h, 0, sizeof *h);
    KR_TRY(parse_banner(ctx, L, h));
    int64_t v[3] = {0, 0, 0};
    KR_TRY(size_numbers(ctx, L, h->array ? 2 : 3, v));
    h->size_line = L->line;
    h->nrows = (int32_t)v[0];
    h->ncols = (int32_t)v[1];
    h->nstored = h->array ? array_count(h) : v[2];
    return check_sizes(ctx, L, flags, h);
}
