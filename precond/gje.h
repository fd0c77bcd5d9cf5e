/* Dense block inversion for block-Jacobi: Gauss-Jordan elimination with
 * implicit pivoting on one k x k block (Anzt, Dongarra, Flegar,
 * Quintana-Orti 2018), and the extraction of a diagonal block from CSR.
 * This is the reference the GPU kernels are tested against. */
#ifndef KR_PRECOND_GJE_H
#define KR_PRECOND_GJE_H

#include "krylov.h"

#include <stdint.h>

/* The largest block kr_gje_invert takes (a warp of the GPU kernels). */
#define KR_GJE_MAX 32

typedef enum kr_gje_layout {
    KR_GJE_ROW_MAJOR = 0, /* entry (i, j) at B[i*k + j] */
    KR_GJE_COL_MAJOR      /* entry (i, j) at B[i + j*k] */
} kr_gje_layout;

/* B = B^{-1} in place, B k x k (1 <= k <= KR_GJE_MAX) in the given layout.
 * Step c (c = 0..k-1) takes as pivot row the row not pivoted yet with the
 * largest |b_ic| (the first such row on ties); rows never move, the pivot
 * order is recorded and undone when the result is written back.
 * The block is singular when a pivot d taken from row p has
 *   |d| <= k * eps * max_j |b_pj|      (eps = DBL_EPSILON),
 * the largest entry of row p of B on entry (so a zero row is singular),
 * or d is not finite; then the function returns KR_ERR_SINGULAR and leaves
 * B unspecified. The threshold is relative to the pivot's own row, not to
 * the whole block, so that blocks whose rows differ in scale by many orders
 * (sherman3 has rows holding only 1e-10 next to rows of 1e4) are inverted,
 * as scalar Jacobi would. It records no message (it has no context): the
 * caller names the block.
 * k outside 1..KR_GJE_MAX gives KR_ERR_ARG. */
kr_status kr_gje_invert(int32_t k, double *B, kr_gje_layout layout);

/* The pivot threshold of kr_gje_invert for a row of a k x k block whose
 * largest entry magnitude is rmax: k * DBL_EPSILON * rmax. */
double kr_gje_threshold(int32_t k, double rmax);

/* D = A(s:s+k, s:s+k), dense k x k in the layout: zeros where A has no
 * entry. A's column indices are sorted in each row. */
void kr_gje_extract(const kr_csr *A, int32_t s, int32_t k, double *D,
                    kr_gje_layout layout);

#endif
