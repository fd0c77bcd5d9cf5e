/* Host CSR: allocation, validation, the reference mat-vec, row statistics. */
#include "core/csr.h"

#include "core/error.h"
#include "core/memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kr_status kr_csr_alloc(kr_ctx *ctx, int32_t nrows, int32_t ncols, int32_t nnz,
                       kr_csr *A)
{
    if (!A) return kr_fail(ctx, KR_ERR_ARG, "kr_csr_alloc: NULL matrix");
    memset(A, 0, sizeof *A);
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_csr_alloc: negative size %d x %d, nnz %d", nrows,
                       ncols, nnz);
    char what[128];
    snprintf(what, sizeof what, "a %d x %d matrix with %d nonzeros", nrows,
             ncols, nnz);
    KR_TRY(kr_host_mem_check(ctx, kr_csr_bytes(nrows, nnz), what));
    A->rowptr = calloc((size_t)nrows + 1, sizeof *A->rowptr);
    A->colind = malloc(((size_t)nnz + 1) * sizeof *A->colind);
    A->val = malloc(((size_t)nnz + 1) * sizeof *A->val);
    if (!A->rowptr || !A->colind || !A->val) {
        kr_csr_free(A);
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "out of host memory for a %d x %d matrix with %d "
                       "nonzeros",
                       nrows, ncols, nnz);
    }
    A->nrows = nrows;
    A->ncols = ncols;
    A->nnz = nnz;
    return KR_OK;
}

void kr_csr_free(kr_csr *A)
{
    if (!A) return;
    free(A->rowptr);
    free(A->colind);
    free(A->val);
    memset(A, 0, sizeof *A);
}

/* Row i's checks; ctx NULL: the verdict only. Messages number rows and
 * columns from 1. lo < 0 cannot happen after
 * valid rows, but the rows are checked in parallel, and a row after an
 * invalid one must not read outside colind. */
static kr_status check_row(kr_ctx *ctx, const kr_csr *A, int32_t i)
{
    int32_t lo = A->rowptr[i], hi = A->rowptr[i + 1];
    if (lo < 0 || hi < lo || hi > A->nnz)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "CSR row %d: row pointers %d..%d out of order or past "
                       "nnz %d",
                       i + 1, lo, hi, A->nnz);
    for (int32_t k = lo; k < hi; k++) {
        int32_t j = A->colind[k];
        if (j < 0 || j >= A->ncols)
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "CSR row %d: column %d outside 1..%d", i + 1, j + 1,
                           A->ncols);
        if (k > lo && j <= A->colind[k - 1])
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "CSR row %d: columns not strictly increasing at "
                           "column %d",
                           i + 1, j + 1);
        if (!isfinite(A->val[k]))
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "CSR row %d, column %d: value is not finite", i + 1,
                           j + 1);
    }
    return KR_OK;
}

/* The first row that fails its checks, nrows when none does: the rows are
 * checked by the context's threads (a matrix of 28M nonzeros took a
 * single thread over 200 ms), and the smallest failing row is the one a
 * sequential check would name. */
static int32_t first_bad_row(const kr_ctx *ctx, const kr_csr *A)
{
    int threads = A->nnz < 1000000 ? 1 : kr_ctx_threads(ctx);
    int32_t first = A->nrows;
#pragma omp parallel for schedule(static) reduction(min                        \
                                                    : first)                   \
    num_threads(threads)
    for (int32_t i = 0; i < A->nrows; i++)
        if (i < first && check_row(NULL, A, i) != KR_OK) first = i;
    return first;
}

kr_status kr_csr_check_row(kr_ctx *ctx, const kr_csr *A, int32_t i)
{
    return check_row(ctx, A, i);
}

kr_status kr_csr_check_head(kr_ctx *ctx, const kr_csr *A)
{
    if (!A || A->nrows < 0 || A->ncols < 0 || A->nnz < 0)
        return kr_fail(ctx, KR_ERR_ARG,
                       "CSR matrix is NULL or has a negative "
                       "size");
    if (!A->rowptr || (A->nnz > 0 && (!A->colind || !A->val)))
        return kr_fail(ctx, KR_ERR_ARG, "CSR matrix has NULL arrays");
    if (A->rowptr[0] != 0 || A->rowptr[A->nrows] != A->nnz)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "CSR row pointers start at %d and end at %d; expected "
                       "0 and nnz = %d",
                       A->rowptr[0], A->rowptr[A->nrows], A->nnz);
    return KR_OK;
}

kr_status kr_csr_check(kr_ctx *ctx, const kr_csr *A)
{
    KR_TRY(kr_csr_check_head(ctx, A));
    int32_t bad = first_bad_row(ctx, A);
    return bad < A->nrows ? check_row(ctx, A, bad) : KR_OK;
}

void kr_csr_matvec(const kr_csr *A, const double *x, double *y)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            s += A->val[k] * x[A->colind[k]];
        y[i] = s;
    }
}

int32_t kr_csr_rows_longer(const kr_csr *A, double len)
{
    int32_t count = 0;
    for (int32_t i = 0; i < A->nrows; i++)
        count += A->rowptr[i + 1] - A->rowptr[i] > len;
    return count;
}

void kr_csr_row_stats(const kr_csr *A, kr_row_stats *st)
{
    memset(st, 0, sizeof *st);
    if (A->nrows == 0) return;
    double sum = 0.0, sum2 = 0.0;
    st->min = INT32_MAX;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        if (len < st->min) st->min = len;
        if (len > st->max) st->max = len;
        if (len == 0) st->empty_rows++;
        sum += len;
        sum2 += (double)len * len;
    }
    st->mean = sum / A->nrows;
    double var = sum2 / A->nrows - st->mean * st->mean;
    st->stddev = var > 0 ? sqrt(var) : 0.0;
}
