/* Gauss-Jordan inversion of a small dense block with implicit pivoting, and
 * extraction of a diagonal block from CSR. Written plainly on purpose: it
 * is the test oracle of the batched GPU kernel.
 *
 * The elimination works on a tableau T (a copy of B) and pivots, at step c,
 * on entry (p_c, c) where p_c is a row not pivoted yet. The step is the
 * in-place Gauss-Jordan "exchange" of unknown x_c with equation p_c:
 *   T(p,c) = 1/d, T(p,j) = T(p,j)/d, T(i,c) = -T(i,c)/d,
 *   T(i,j) = T(i,j) - T(i,c)*T(p,j)/d      (i != p, j != c, d = T(p,c)).
 * After k steps every unknown has been exchanged, and
 * T(p_r, c) = (B^{-1})(r, p_c): the inverse is T with its rows and its
 * columns put back in pivot order, which is what the write-back does. */
#include "precond/gje.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

/* position of entry (i, j) of a k x k block */
static inline size_t at(int32_t k, kr_gje_layout layout, int32_t i, int32_t j)
{
    return layout == KR_GJE_ROW_MAJOR ? (size_t)i * k + j : (size_t)j * k + i;
}

double kr_gje_threshold(int32_t k, double rmax)
{
    return (double)k * DBL_EPSILON * rmax;
}

/* The row, among those not pivoted yet, with the largest |T(i, c)|. */
static int32_t pick_pivot(int32_t k, const double *T, int32_t c,
                          const unsigned char *pivoted)
{
    int32_t p = -1;
    double best = -1.0;
    for (int32_t i = 0; i < k; i++) {
        double v = fabs(T[(size_t)i * k + c]);
        if (!pivoted[i] && (v > best || p < 0)) {
            best = v;
            p = i;
        }
    }
    return p;
}

/* The exchange step on pivot (p, c) of the row-major tableau T. */
static void exchange(int32_t k, double *T, int32_t p, int32_t c)
{
    double *rowp = T + (size_t)p * k;
    double d = rowp[c];
    for (int32_t j = 0; j < k; j++)
        if (j != c) rowp[j] /= d;
    for (int32_t i = 0; i < k; i++) {
        if (i == p) continue;
        double *row = T + (size_t)i * k;
        double f = row[c];
        for (int32_t j = 0; j < k; j++)
            if (j != c) row[j] -= f * rowp[j];
        row[c] = -f / d;
    }
    rowp[c] = 1.0 / d;
}

kr_status kr_gje_invert(int32_t k, double *B, kr_gje_layout layout)
{
    if (k < 1 || k > KR_GJE_MAX || !B) return KR_ERR_ARG;
    double T[KR_GJE_MAX * KR_GJE_MAX];
    double tiny[KR_GJE_MAX]; /* the singularity threshold of each row */
    unsigned char pivoted[KR_GJE_MAX] = {0};
    int32_t perm[KR_GJE_MAX]; /* perm[c] = p_c, the pivot row of step c */
    for (int32_t i = 0; i < k; i++) {
        double rmax = 0.0;
        for (int32_t j = 0; j < k; j++) {
            T[(size_t)i * k + j] = B[at(k, layout, i, j)];
            rmax = fmax(rmax, fabs(T[(size_t)i * k + j]));
        }
        tiny[i] = kr_gje_threshold(k, rmax);
    }
    for (int32_t c = 0; c < k; c++) {
        int32_t p = pick_pivot(k, T, c, pivoted);
        double d = T[(size_t)p * k + c];
        /* written so that NaN fails the test too */
        if (!(fabs(d) > tiny[p]) || !isfinite(d)) return KR_ERR_SINGULAR;
        exchange(k, T, p, c);
        pivoted[p] = 1;
        perm[c] = p;
    }
    /* (B^{-1})(r, perm[c]) = T(perm[r], c) */
    for (int32_t r = 0; r < k; r++)
        for (int32_t c = 0; c < k; c++)
            B[at(k, layout, r, perm[c])] = T[(size_t)perm[r] * k + c];
    return KR_OK;
}

void kr_gje_extract(const kr_csr *A, int32_t s, int32_t k, double *D,
                    kr_gje_layout layout)
{
    for (int32_t i = 0; i < k; i++) {
        for (int32_t j = 0; j < k; j++)
            D[at(k, layout, i, j)] = 0.0;
        for (int32_t q = A->rowptr[s + i]; q < A->rowptr[s + i + 1]; q++) {
            int32_t j = A->colind[q] - s;
            if (j >= k) break; /* sorted: the rest lie right of the block */
            if (j >= 0) D[at(k, layout, i, j)] = A->val[q];
        }
    }
}
