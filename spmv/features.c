/* kr_csr_spmm_features: one pass over the rows. Two arrays over the
 * column blocks remember the last row and the last warp that touched each
 * block, so a row's distinct blocks, the blocks it shares with the row
 * before and its warp's distinct blocks are counted as the entries go by
 * (columns are sorted, so a row's entries of one block are consecutive). */
#include "core/error.h"
#include "krylov.h"

#include <stdlib.h>
#include <string.h>

/* A running min / sum / max. */
typedef struct acc3 {
    double min, sum, max;
    int64_t n;
} acc3;

static void acc_add(acc3 *a, double v)
{
    if (a->n == 0 || v < a->min) a->min = v;
    if (a->n == 0 || v > a->max) a->max = v;
    a->sum += v;
    a->n++;
}

static kr_stat3 acc_done(const acc3 *a)
{
    kr_stat3 s = {0.0, 0.0, 0.0};
    if (a->n > 0) {
        s.min = a->min;
        s.mean = a->sum / (double)a->n;
        s.max = a->max;
    }
    return s;
}

typedef struct feature_pass {
    int32_t *last_row;  /* per block: the last row touching it, or -1  */
    int32_t *last_warp; /* per block: the last warp touching it, or -1 */
    int32_t prev_blocks;
    int64_t warp_nnz, warp_blocks;
    int32_t warp_longest;
    acc3 row_nnz, warp_nnz_acc, imbalance, row_blocks, warp_blocks_acc, dist;
} feature_pass;

/* Row i: its blocks, those shared with row i-1, its warp's new blocks. */
static void pass_row(const kr_csr *A, int32_t i, feature_pass *p)
{
    int32_t blocks = 0, shared = 0, w = i / 32;
    for (int32_t q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
        int32_t b = A->colind[q] / 32;
        if (p->last_row[b] == i) continue; /* this row's block, seen */
        blocks++;
        shared += i > 0 && p->last_row[b] == i - 1;
        p->last_row[b] = i;
        p->warp_blocks += p->last_warp[b] != w;
        p->last_warp[b] = w;
    }
    int32_t len = A->rowptr[i + 1] - A->rowptr[i];
    acc_add(&p->row_nnz, len);
    acc_add(&p->row_blocks, blocks);
    if (i > 0) acc_add(&p->dist, p->prev_blocks + blocks - 2 * shared);
    p->prev_blocks = blocks;
    p->warp_nnz += len;
    if (len > p->warp_longest) p->warp_longest = len;
}

/* The warp ending at row i (exclusive) with `rows` rows. */
static void pass_warp(feature_pass *p, int32_t rows)
{
    acc_add(&p->warp_nnz_acc, (double)p->warp_nnz);
    acc_add(&p->warp_blocks_acc, (double)p->warp_blocks);
    if (p->warp_nnz > 0)
        acc_add(&p->imbalance,
                (double)rows * p->warp_longest / (double)p->warp_nnz);
    p->warp_nnz = p->warp_blocks = 0;
    p->warp_longest = 0;
}

kr_status kr_csr_spmm_features(kr_ctx *ctx, const kr_csr *A,
                               kr_spmm_features *f)
{
    if (!A) return kr_null_arg(ctx, "kr_csr_spmm_features", "A");
    if (!f) return kr_null_arg(ctx, "kr_csr_spmm_features", "f");
    size_t nb = (size_t)A->ncols / 32 + 1;
    feature_pass p;
    memset(&p, 0, sizeof p);
    p.last_row = malloc(nb * sizeof *p.last_row);
    p.last_warp = malloc(nb * sizeof *p.last_warp);
    if (!p.last_row || !p.last_warp) {
        free(p.last_row);
        free(p.last_warp);
        return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    memset(p.last_row, 0xff, nb * sizeof *p.last_row); /* all -1 */
    memset(p.last_warp, 0xff, nb * sizeof *p.last_warp);
    for (int32_t i = 0; i < A->nrows; i++) {
        pass_row(A, i, &p);
        if (i % 32 == 31 || i + 1 == A->nrows) pass_warp(&p, i % 32 + 1);
    }
    free(p.last_row);
    free(p.last_warp);
    memset(f, 0, sizeof *f);
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    double cells = (double)A->nrows * (double)A->ncols;
    f->density = cells > 0 ? A->nnz / cells : 0.0;
    f->row_nnz = acc_done(&p.row_nnz);
    f->warp_nnz = acc_done(&p.warp_nnz_acc);
    f->warp_imbalance = acc_done(&p.imbalance);
    f->row_blocks = acc_done(&p.row_blocks);
    f->warp_blocks = acc_done(&p.warp_blocks_acc);
    f->neighbour_distance = acc_done(&p.dist);
    return KR_OK;
}
