/* Per-block 1-norm condition numbers of a built preconditioner with
 * diagonal blocks (kr_precond_block_cond). Each block is extracted from
 * A again on the host and each inverse read back through the
 * preconditioner's view (inverse_csr), so the numbers describe what it
 * applies on either backend; which blocks the singular policy replaced
 * comes from the view too. */
#include "core/error.h"
#include "krylov.h"
#include "precond/gje.h"
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* max_j sum_i |D_ij| of a column-major k x k D; a NaN sticks */
static double norm1(int32_t k, const double *D)
{
    double m = 0.0;
    for (int32_t j = 0; j < k; j++) {
        double s = 0.0;
        for (int32_t i = 0; i < k; i++)
            s += fabs(D[i + (size_t)j * k]);
        if (s > m || isnan(s)) m = s;
    }
    return m;
}

/* Block (s, k) of X, the inverses as CSR (row s+i holds the block's k
 * entries, columns s..s+k-1 in order), into column-major Y. */
static void inverse_block(const kr_csr *X, int32_t s, int32_t k, double *Y)
{
    for (int32_t i = 0; i < k; i++) {
        const double *row = X->val + X->rowptr[s + i];
        for (int32_t j = 0; j < k; j++)
            Y[i + (size_t)j * k] = row[j];
    }
}

static kr_status check_args(kr_ctx *ctx, const kr_precond *P, const kr_csr *A,
                            const kr_block_cond *c, const kr_precond_view *v)
{
    if (!P || !A || !c)
        return kr_fail(ctx, KR_ERR_ARG, "kr_precond_block_cond: NULL argument");
    if (v->info.blocks <= 0 || !v->inverse_csr)
        return kr_fail(ctx, KR_ERR_ARG,
                       "block condition numbers: preconditioner '%s' has "
                       "no diagonal blocks",
                       P->ops->name);
    if (A->nrows != P->n || A->ncols != P->n)
        return kr_fail(ctx, KR_ERR_ARG,
                       "block condition numbers: the matrix is %d x %d, but "
                       "the %s preconditioner was built for %d x %d",
                       (int)A->nrows, (int)A->ncols, P->ops->name, (int)P->n,
                       (int)P->n);
    return KR_OK;
}

/* c's arrays, the block starts and the replaced flags from P's view. */
static kr_status blocks_of(kr_ctx *ctx, const kr_precond_view *v,
                           kr_block_cond *c)
{
    int32_t nb = v->info.blocks;
    size_t n1 = (size_t)nb + 1;
    c->starts = malloc(n1 * sizeof *c->starts);
    c->cond = malloc(n1 * sizeof *c->cond);
    c->replaced = calloc(n1, sizeof *c->replaced);
    if (!c->starts || !c->cond || !c->replaced)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "block condition numbers: out of host memory for %d "
                       "blocks",
                       (int)nb);
    c->nb = nb;
    memcpy(c->starts, v->starts, n1 * sizeof *c->starts);
    for (int32_t b = 0; b < nb; b++)
        c->replaced[b] = v->singular && v->singular[b] != 0;
    return KR_OK;
}

kr_status kr_precond_block_cond(kr_ctx *ctx, const kr_precond *P,
                                const kr_csr *A, kr_block_cond *c)
{
    if (c) memset(c, 0, sizeof *c);
    kr_precond_view v;
    if (P) kr_precond_view_of(P, &v);
    KR_TRY(check_args(ctx, P, A, c, &v));
    KR_TRY(blocks_of(ctx, &v, c));
    kr_csr X;
    KR_TRY(v.inverse_csr(ctx, P->impl, &X));
    double D[KR_GJE_MAX * KR_GJE_MAX], Y[KR_GJE_MAX * KR_GJE_MAX];
    for (int32_t b = 0; b < c->nb; b++) {
        int32_t s = c->starts[b], k = c->starts[b + 1] - s;
        if (c->replaced[b]) { /* the stand-in is no inverse of B_b */
            c->cond[b] = INFINITY;
            continue;
        }
        kr_gje_extract(A, s, k, D, KR_GJE_COL_MAJOR);
        inverse_block(&X, s, k, Y);
        c->cond[b] = norm1(k, D) * norm1(k, Y);
    }
    kr_csr_free(&X);
    return KR_OK;
}

void kr_block_cond_free(kr_block_cond *c)
{
    if (!c) return;
    free(c->starts);
    free(c->cond);
    free(c->replaced);
    memset(c, 0, sizeof *c);
}

/* Ascending, NaN after everything (an inverse that overflowed). */
static int cmp_cond(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    int na = isnan(a) != 0, nb = isnan(b) != 0;
    if (na || nb) return na - nb;
    return (a > b) - (a < b);
}

/* The inverted blocks' conds into v (m of them), counted into s. */
static int32_t gather(const kr_block_cond *c, double *v, kr_block_cond_stats *s)
{
    int32_t m = 0;
    for (int32_t b = 0; b < c->nb; b++) {
        double x = c->cond[b];
        if (c->replaced[b]) {
            s->replaced++;
            continue;
        }
        v[m++] = x;
        if (s->max_block < 0 || cmp_cond(&x, &c->cond[s->max_block]) > 0)
            s->max_block = b;
        s->high += !(x <= KR_COND_HIGH);
        s->extreme += !(x <= KR_COND_EXTREME);
    }
    return m;
}

kr_status kr_block_cond_summarize(kr_ctx *ctx, const kr_block_cond *c,
                                  kr_block_cond_stats *s)
{
    if (!c || !s)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_block_cond_summarize: NULL argument");
    *s = (kr_block_cond_stats){.blocks = c->nb,
                               .min = NAN,
                               .median = NAN,
                               .max = NAN,
                               .max_block = -1};
    double *v = malloc(((size_t)c->nb + 1) * sizeof *v);
    if (!v)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "block condition numbers: out of host memory for %d "
                       "blocks",
                       (int)c->nb);
    int32_t m = gather(c, v, s);
    if (m > 0) {
        qsort(v, (size_t)m, sizeof *v, cmp_cond);
        s->min = v[0];
        s->max = v[m - 1];
        /* halves first: two values near DBL_MAX must not overflow */
        s->median = m % 2 ? v[m / 2] : v[m / 2 - 1] / 2 + v[m / 2] / 2;
    }
    free(v);
    return KR_OK;
}
