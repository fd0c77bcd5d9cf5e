/* kr_read_mtx: a Matrix Market file into host CSR. Entries are counted per
 * row (symmetric ones mirrored), placed, each row sorted by column (only if
 * it is not already) and duplicates summed in file order. */
#include "core/error.h"
#include "io/mtx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Array files are dense: their zeros are not entries. */
static void drop_zeros(kr_mtx_entries *E)
{
    int64_t w = 0;
    for (int64_t k = 0; k < E->n; k++) {
        if (E->val[k] == 0.0) continue;
        E->row[w] = E->row[k];
        E->col[w] = E->col[k];
        E->val[w] = E->val[k];
        w++;
    }
    E->n = w;
}

/* Stable sort of (c, v) by c: insertion sort for short rows, else a merge
 * sort through the scratch arrays tc, tv. */
static void sort_row(int32_t *c, double *v, int32_t n, int32_t *tc, double *tv)
{
    if (n <= 24) {
        for (int32_t k = 1; k < n; k++) {
            int32_t ck = c[k], t = k;
            double vk = v[k];
            for (; t > 0 && c[t - 1] > ck; t--) {
                c[t] = c[t - 1];
                v[t] = v[t - 1];
            }
            c[t] = ck;
            v[t] = vk;
        }
        return;
    }
    int32_t h = n / 2;
    sort_row(c, v, h, tc, tv);
    sort_row(c + h, v + h, n - h, tc, tv);
    int32_t a = 0, b = h, w = 0;
    while (a < h || b < n) {
        int from_a = b >= n || (a < h && c[a] <= c[b]);
        int32_t k = from_a ? a++ : b++;
        tc[w] = c[k];
        tv[w++] = v[k];
    }
    memcpy(c, tc, (size_t)n * sizeof *c);
    memcpy(v, tv, (size_t)n * sizeof *v);
}

static int row_sorted(const int32_t *c, int32_t n)
{
    for (int32_t k = 1; k < n; k++)
        if (c[k] < c[k - 1]) return 0;
    return 1;
}

static kr_status sort_rows(kr_ctx *ctx, const char *path, kr_csr *A)
{
    int32_t maxlen = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > maxlen) maxlen = len;
    }
    int32_t *tc = malloc(((size_t)maxlen + 1) * sizeof *tc);
    double *tv = malloc(((size_t)maxlen + 1) * sizeof *tv);
    kr_status st = KR_OK;
    if (!tc || !tv) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory sorting rows", path);
        goto done;
    }
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t lo = A->rowptr[i], len = A->rowptr[i + 1] - lo;
        if (!row_sorted(A->colind + lo, len))
            sort_row(A->colind + lo, A->val + lo, len, tc, tv);
    }
done:
    free(tc);
    free(tv);
    return st;
}

/* Sums equal columns of each sorted row in place and compacts. */
static kr_status merge_duplicates(kr_ctx *ctx, const char *path, kr_csr *A)
{
    int32_t w = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t lo = A->rowptr[i], hi = A->rowptr[i + 1], start = w;
        A->rowptr[i] = w;
        for (int32_t k = lo; k < hi; k++) {
            if (w > start && A->colind[w - 1] == A->colind[k]) {
                A->val[w - 1] += A->val[k];
                if (!isfinite(A->val[w - 1]))
                    return kr_fail(ctx, KR_ERR_FORMAT,
                                   "%s: duplicate entries of row %d, column "
                                   "%d sum to a value beyond double range",
                                   path, i + 1, A->colind[k] + 1);
                continue;
            }
            A->colind[w] = A->colind[k];
            A->val[w++] = A->val[k];
        }
    }
    A->rowptr[A->nrows] = w;
    A->nnz = w;
    return KR_OK;
}

/* Places every entry (and its mirror) in its row. rowptr[i] serves as
 * row i's cursor and ends as row i+1's start; a shift restores it, so the
 * only O(nrows) array is rowptr itself. */
static void fill(const kr_mtx_header *h, const kr_mtx_entries *E, kr_csr *A)
{
    int mirror = h->symmetry != KR_MTX_GENERAL;
    double sign = h->symmetry == KR_MTX_SKEW ? -1.0 : 1.0;
    int32_t *rp = A->rowptr;
    for (int64_t k = 0; k < E->n; k++) {
        rp[E->row[k] + 1]++;
        if (mirror && E->row[k] != E->col[k]) rp[E->col[k] + 1]++;
    }
    for (int32_t i = 0; i < A->nrows; i++)
        rp[i + 1] += rp[i];
    for (int64_t k = 0; k < E->n; k++) {
        int32_t i = E->row[k], j = E->col[k], p = rp[i]++;
        A->colind[p] = j;
        A->val[p] = E->val[k];
        if (!mirror || i == j) continue;
        p = rp[j]++;
        A->colind[p] = i;
        A->val[p] = sign * E->val[k];
    }
    memmove(rp + 1, rp, (size_t)A->nrows * sizeof *rp);
    rp[0] = 0;
}

static kr_status build_csr(kr_ctx *ctx, const char *path,
                           const kr_mtx_header *h, const kr_mtx_entries *E,
                           kr_csr *A)
{
    int64_t total = E->n;
    if (h->symmetry != KR_MTX_GENERAL)
        for (int64_t k = 0; k < E->n; k++)
            total += E->row[k] != E->col[k];
    if (total > INT32_MAX)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "%s:%ld: %lld entries expand to %lld nonzeros, more "
                       "than 32-bit indices allow (%d)",
                       path, h->size_line, (long long)E->n, (long long)total,
                       INT32_MAX);
    KR_TRY(kr_csr_alloc(ctx, h->nrows, h->ncols, (int32_t)total, A));
    fill(h, E, A);
    kr_status st;
    KR_CHECK(st, sort_rows(ctx, path, A), fail);
    KR_CHECK(st, merge_duplicates(ctx, path, A), fail);
    return KR_OK;
fail:
    kr_csr_free(A);
    return st;
}

kr_status kr_read_mtx_from(kr_ctx *ctx, kr_source *S, unsigned flags, kr_csr *A)
{
    memset(A, 0, sizeof *A);
    kr_mtx_header h;
    kr_mtx_entries E;
    KR_TRY(kr_mtx_load(ctx, S, flags, &h, &E));
    if (h.array) drop_zeros(&E);
    kr_status st = build_csr(ctx, S->path, &h, &E, A);
    kr_mtx_entries_free(&E);
    if (st != KR_OK) kr_csr_free(A);
    return st;
}

kr_status kr_read_mtx(kr_ctx *ctx, const char *path, kr_csr *A)
{
    if (!A) return kr_fail(ctx, KR_ERR_ARG, "kr_read_mtx: NULL matrix");
    memset(A, 0, sizeof *A);
    if (!path) return kr_fail(ctx, KR_ERR_ARG, "kr_read_mtx: NULL path");
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = kr_read_mtx_from(ctx, &S, 0, A);
    kr_source_close(&S);
    return st;
}
