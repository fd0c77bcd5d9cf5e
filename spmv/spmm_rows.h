/* The SpMM of the ELLPACK-like layouts (ellr, pellr, hyb's ELL part) on
 * the GPU, shared by spmv/ellr.cu, pellr.cu and hyb.cu (CUDA builds only,
 * so no stub): position p's len(p) entries lie at val[base(p) + j*stride],
 * base(p) = p and stride = rows for ELLPACK (off NULL), or base(p) =
 * off[p/32] + p%32 and stride 32 for PELLR's slices; the result goes to
 * row out[p] of Y (p when out is NULL). */
#ifndef KR_SPMV_SPMM_ROWS_H
#define KR_SPMV_SPMM_ROWS_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kr_ell_rows {
    int32_t rows;       /* positions                                  */
    int32_t width;      /* every position's length when len is NULL   */
    const int32_t *len; /* rows: each position's length, or NULL      */
    const int32_t *out; /* rows: Y's row of each position, or NULL    */
    const int64_t *off; /* PELLR's slice offsets, or NULL (ELLPACK)   */
    const double *val;  /* the entries, padding included              */
    const int32_t *col;
} kr_ell_rows;

/* Y[out(p), :] = sum_j val * X[col, :] over k columns (row-major X and Y
 * in device memory), each sum in the order j = 0, 1, ... as the CPU
 * kernels, on the context's stream. */
kr_status kr_ell_rows_spmm(kr_ctx *ctx, const kr_ell_rows *L, int32_t k,
                           const double *X, double *Y);

#ifdef __cplusplus
}
#endif

#endif
