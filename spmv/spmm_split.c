/* Which rows of a length-sorted layout the GPU SpMM cuts into pieces, and
 * the pieces' lists (spmv/spmm_rows.h): host code in every build, so the
 * CPU tests check the rule and the lists the CUDA build uploads. The only
 * reader of the KR_SPMM_* constants: the kernels take each piece's bounds
 * from its list, so `make CFLAGS=-DKR_SPMM_PIECE=64` tunes them all. */
#include "core/error.h"
#include "spmv/format.h"
#include "spmv/spmm_rows.h"

#include <stdlib.h>
#include <string.h>

double kr_ell_split_min_len(int64_t nnz, int32_t nrows)
{
    double wide = nrows > 0 ? KR_SPMM_LONG_FACTOR * ((double)nnz / nrows) : 0;
    return wide > KR_SPMM_LONG_MIN ? wide : KR_SPMM_LONG_MIN;
}

int32_t kr_ell_split_count(const int32_t *len, int32_t nrows, int64_t nnz)
{
    const double min_len = kr_ell_split_min_len(nnz, nrows);
    int32_t p = 0;
    while (p < nrows && (double)len[p] >= min_len)
        p++;
    return p;
}

kr_status kr_ell_split_lists(kr_ctx *ctx, const int32_t *len, int32_t nsplit,
                             int32_t **start, int32_t **piece, int32_t *count)
{
    *piece = NULL;
    *count = 0;
    *start = malloc(((size_t)nsplit + 1) * sizeof **start);
    if (!*start) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    int64_t n = 0;
    for (int32_t p = 0; p < nsplit; p++) {
        (*start)[p] = (int32_t)n; /* n <= the entries, an int32 */
        n += (len[p] + KR_SPMM_PIECE - 1) / KR_SPMM_PIECE;
    }
    (*start)[nsplit] = (int32_t)n;
    *piece = malloc(((size_t)n * 3 + 1) * sizeof **piece);
    if (!*piece) {
        free(*start);
        *start = NULL;
        return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    for (int32_t p = 0; p < nsplit; p++)
        for (int32_t q = (*start)[p]; q < (*start)[p + 1]; q++) {
            int32_t first = (q - (*start)[p]) * KR_SPMM_PIECE;
            int32_t *t = *piece + 3 * (int64_t)q;
            t[0] = p;
            t[1] = first;
            t[2] =
                len[p] - first < KR_SPMM_PIECE ? len[p] : first + KR_SPMM_PIECE;
        }
    *count = (int32_t)n;
    return KR_OK;
}

int32_t kr_matrix_split_pieces(const kr_matrix *M, int32_t *rows)
{
    *rows = 0;
    kr_dev_array a[16];
    int n = M->ops->arrays ? M->ops->arrays(M->impl, a, 16) : 0;
    int32_t pieces = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(a[i].name, "piece") == 0)
            pieces = (int32_t)(a[i].bytes / 12);
        if (strcmp(a[i].name, "piece_start") == 0 && a[i].bytes > 0)
            *rows = (int32_t)(a[i].bytes / 4) - 1;
    }
    return pieces;
}
