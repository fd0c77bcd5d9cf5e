/* The entry lines of a Matrix Market file, read into 0-based triplets.
 * Each line is checked: field count, integer indices in range, finite
 * numbers that use the whole token; the count must match the size line. */
#include "core/error.h"
#include "io/mtx.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* First capacity when the file size is unknown (gzip): the size line is
 * then not trusted with an allocation, the arrays grow as entries come. */
enum { KR_MTX_FIRST_CAP = 1 << 16 };

void kr_mtx_entries_free(kr_mtx_entries *E)
{
    if (!E) return;
    free(E->row);
    free(E->col);
    free(E->val);
    memset(E, 0, sizeof *E);
}

static kr_status resize(kr_ctx *ctx, const kr_lines *L, kr_mtx_entries *E,
                        int64_t cap)
{
    size_t c = (size_t)(cap > 0 ? cap : 1);
    int32_t *r = realloc(E->row, c * sizeof *r);
    if (r) E->row = r;
    int32_t *k = realloc(E->col, c * sizeof *k);
    if (k) E->col = k;
    double *v = realloc(E->val, c * sizeof *v);
    if (v) E->val = v;
    if (!r || !k || !v)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "%s:%ld: out of memory for %lld matrix entries", L->path,
                       L->line, (long long)cap);
    E->cap = cap;
    return KR_OK;
}

static kr_status push(kr_ctx *ctx, const kr_lines *L, const kr_mtx_header *h,
                      kr_mtx_entries *E, int32_t i, int32_t j, double v)
{
    if (E->n == E->cap) {
        int64_t cap = E->cap > 0 ? 2 * E->cap : 1;
        KR_TRY(resize(ctx, L, E, cap < h->nstored ? cap : h->nstored));
    }
    E->row[E->n] = i;
    E->col[E->n] = j;
    E->val[E->n] = v;
    E->n++;
    return KR_OK;
}

static kr_status bad_count(kr_ctx *ctx, const kr_lines *L, const char *s,
                           int want, const char *what)
{
    return kr_fail(ctx, KR_ERR_FORMAT,
                   "%s:%ld: expected %d number%s (%s), found %d", L->path,
                   L->line, want, want == 1 ? "" : "s", what,
                   kr_mtx_count_tokens(s));
}

/* A 1-based index token in 1..n into a 0-based index. */
static kr_status parse_index(kr_ctx *ctx, const kr_lines *L, const char *what,
                             const char *b, const char *e, int32_t n,
                             int32_t *out)
{
    int64_t v;
    int r = kr_mtx_int(b, e, &v);
    if (r == KR_MTX_INT_BAD)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: %s index '%.*s' is not an integer", L->path,
                       L->line, what, kr_mtx_toklen(b, e), b);
    if (r == KR_MTX_INT_HUGE || v < 1 || v > n)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: %s index %.*s out of range 1..%d", L->path,
                       L->line, what, kr_mtx_toklen(b, e), b, n);
    *out = (int32_t)(v - 1);
    return KR_OK;
}

/* Matrix Market values are decimal: [sign] digits [. digits] [e [sign]
 * digits]. strtod also takes hex floats, "inf" and "nan"; those are
 * refused. Returns NULL when [b, e) is decimal, else why not. */
static const char *decimal_syntax(const char *b, const char *e)
{
    const char *p = b;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (e - p >= 3 && (!strncasecmp(p, "nan", 3) || !strncasecmp(p, "inf", 3)))
        return "not finite (NaN or Inf)";
    int digits = 0;
    for (; p < e && isdigit((unsigned char)*p); p++)
        digits++;
    if (p < e && *p == '.')
        for (p++; p < e && isdigit((unsigned char)*p); p++)
            digits++;
    if (digits > 0 && p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        const char *d = p;
        while (p < e && isdigit((unsigned char)*p))
            p++;
        if (p == d) digits = 0;
    }
    return digits > 0 && p == e ? NULL : "not a number (values are decimal)";
}

/* 1 when the mantissa of a decimal token has a nonzero digit. */
static int nonzero_digit(const char *b, const char *e)
{
    for (; b < e && *b != 'e' && *b != 'E'; b++)
        if (*b >= '1' && *b <= '9') return 1;
    return 0;
}

static kr_status parse_value(kr_ctx *ctx, const kr_lines *L,
                             const kr_mtx_header *h, const char *b,
                             const char *e, double *out)
{
    if (h->field == KR_MTX_INTEGER) {
        int64_t v;
        int r = kr_mtx_int(b, e, &v);
        if (r != KR_MTX_INT_OK)
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "%s:%ld: value '%.*s' is not an integer in "
                           "range (the field is 'integer')",
                           L->path, L->line, kr_mtx_toklen(b, e), b);
        *out = (double)v;
        return KR_OK;
    }
    const char *why = decimal_syntax(b, e);
    if (why)
        return kr_fail(ctx, KR_ERR_FORMAT, "%s:%ld: value '%.*s' is %s",
                       L->path, L->line, kr_mtx_toklen(b, e), b, why);
    double x = strtod(b, NULL);
    if (!isfinite(x))
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: value '%.*s' is not finite (beyond the range "
                       "of double)",
                       L->path, L->line, kr_mtx_toklen(b, e), b);
    if (x == 0.0 && nonzero_digit(b, e))
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: value '%.*s' underflows to zero (below "
                       "4.9e-324, the smallest double)",
                       L->path, L->line, kr_mtx_toklen(b, e), b);
    *out = x;
    return KR_OK;
}

static kr_status coord_line(kr_ctx *ctx, const kr_lines *L,
                            const kr_mtx_header *h, const char *s,
                            kr_mtx_entries *E)
{
    int want = h->field == KR_MTX_PATTERN ? 2 : 3;
    const char *what = want == 2 ? "row column" : "row column value";
    const char *p = s, *b[4], *e[4];
    for (int k = 0; k < want; k++)
        if (!kr_mtx_token(&p, &b[k], &e[k]))
            return bad_count(ctx, L, s, want, what);
    if (kr_mtx_token(&p, &b[3], &e[3])) return bad_count(ctx, L, s, want, what);
    int32_t i, j;
    double v = 1.0;
    KR_TRY(parse_index(ctx, L, "row", b[0], e[0], h->nrows, &i));
    KR_TRY(parse_index(ctx, L, "column", b[1], e[1], h->ncols, &j));
    if (want == 3) KR_TRY(parse_value(ctx, L, h, b[2], e[2], &v));
    if (i == j && h->symmetry == KR_MTX_SKEW)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: diagonal entry (%d, %d) in a skew-symmetric "
                       "file; its diagonal must be zero and not stored",
                       L->path, L->line, i + 1, j + 1);
    /* The format stores one triangle; an entry above the diagonal would
     * be mirrored silently, and next to its mirror would double it. */
    if (i < j && h->symmetry != KR_MTX_GENERAL)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: entry (%d, %d) is above the diagonal, but a "
                       "%s file stores the lower triangle only (its mirror "
                       "(%d, %d) is implied)",
                       L->path, L->line, i + 1, j + 1,
                       h->symmetry == KR_MTX_SKEW ? "skew-symmetric"
                                                  : "symmetric",
                       j + 1, i + 1);
    return push(ctx, L, h, E, i, j, v);
}

static kr_status ends_early(kr_ctx *ctx, const kr_lines *L,
                            const kr_mtx_header *h, const kr_mtx_entries *E)
{
    return kr_fail(ctx, KR_ERR_FORMAT,
                   "%s:%ld: file ends after %lld of the %lld %s that the "
                   "size line (line %ld) declares",
                   L->path, kr_lines_last(L), (long long)E->n,
                   (long long)h->nstored, h->array ? "values" : "entries",
                   h->size_line);
}

static kr_status read_coord(kr_ctx *ctx, kr_lines *L, const kr_mtx_header *h,
                            kr_mtx_entries *E)
{
    while (E->n < h->nstored) {
        char *s;
        KR_TRY(kr_lines_next(ctx, L, &s));
        if (!s) return ends_early(ctx, L, h, E);
        if (kr_mtx_skip_line(s)) continue;
        KR_TRY(coord_line(ctx, L, h, s, E));
    }
    return KR_OK;
}

/* Array files list columns top to bottom; symmetric ones the lower
 * triangle with the diagonal, skew-symmetric ones without it. */
static kr_status read_array(kr_ctx *ctx, kr_lines *L, const kr_mtx_header *h,
                            kr_mtx_entries *E)
{
    int32_t skew = h->symmetry == KR_MTX_SKEW, j = 0;
    int32_t i = skew;
    while (E->n < h->nstored) {
        char *s;
        KR_TRY(kr_lines_next(ctx, L, &s));
        if (!s) return ends_early(ctx, L, h, E);
        if (kr_mtx_skip_line(s)) continue;
        const char *p = s, *b, *e, *xb, *xe;
        if (!kr_mtx_token(&p, &b, &e) || kr_mtx_token(&p, &xb, &xe))
            return bad_count(ctx, L, s, 1, "one value per line");
        double v;
        KR_TRY(parse_value(ctx, L, h, b, e, &v));
        KR_TRY(push(ctx, L, h, E, i, j, v));
        if (++i >= h->nrows) {
            j++;
            i = h->symmetry == KR_MTX_GENERAL ? 0 : j + skew;
        }
    }
    return KR_OK;
}

/* After the last entry only comments and blank lines may follow. */
static kr_status expect_end(kr_ctx *ctx, kr_lines *L, const kr_mtx_header *h)
{
    for (;;) {
        char *s;
        KR_TRY(kr_lines_next(ctx, L, &s));
        if (!s) return KR_OK;
        if (kr_mtx_skip_line(s)) continue;
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s:%ld: more %s than the %lld that the size line "
                       "(line %ld) declares",
                       L->path, L->line, h->array ? "values" : "entries",
                       (long long)h->nstored, h->size_line);
    }
}

kr_status kr_mtx_load(kr_ctx *ctx, kr_source *S, unsigned flags,
                      kr_mtx_header *h, kr_mtx_entries *E)
{
    memset(E, 0, sizeof *E);
    kr_lines L;
    KR_TRY(kr_lines_start(ctx, S, &L));
    kr_status st;
    KR_CHECK(st, kr_mtx_read_header(ctx, &L, flags, h), done);
    int64_t cap = h->nstored;
    if (L.file_size < 0 && cap > KR_MTX_FIRST_CAP) cap = KR_MTX_FIRST_CAP;
    KR_CHECK(st, resize(ctx, &L, E, cap), done);
    if (h->array)
        KR_CHECK(st, read_array(ctx, &L, h, E), done);
    else
        KR_CHECK(st, read_coord(ctx, &L, h, E), done);
    st = expect_end(ctx, &L, h);
done:
    kr_lines_close(&L);
    if (st != KR_OK) kr_mtx_entries_free(E);
    return st;
}
