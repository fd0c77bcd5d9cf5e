/* HYB: an ELL part of width K (column-major, padded) plus the entries
 * beyond K in each row, kept as a VSR plan (a CSR-like list of segments
 * reduced by VSR's segmented reduction). Internal to spmv/hyb.c and
 * spmv/hyb.cu. y is written in a fixed order: the ELL pass writes
 * y = alpha*ELL*x + beta*y for every row, then the VSR pass adds
 * alpha*COO*x to the rows that have a remainder. */
#ifndef KR_SPMV_HYB_H
#define KR_SPMV_HYB_H

#include "spmv/vsr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kr_hyb_host {
    int32_t nrows, width; /* width = K                                    */
    int32_t *ell_col;     /* nrows*K, entry j of row i at i + j*nrows;
                             padding: value 0, the row's last column (0
                             for an empty row)                           */
    double *ell_val;      /* nrows*K                                     */
    kr_vsr_plan coo;      /* the entries beyond K, row by row            */
} kr_hyb_host;

/* K: the largest width w >= 1 that at least a third of the rows reach
 * (3 * #{rows with length >= w} >= nrows); if there is none, the mean row
 * length rounded. O(nrows + longest row). */
kr_status kr_hyb_width(kr_ctx *ctx, const kr_csr *A, int32_t *K);

/* Splits A into the ELL part and the COO remainder's plan (built for the
 * device when for_device), in O(nnz + nrows*K). */
kr_status kr_hyb_host_build(kr_ctx *ctx, const kr_csr *A, int for_device,
                            kr_hyb_host *h);
void kr_hyb_host_free(kr_hyb_host *h); /* accepts NULL and zeroed structs */

/* HYB's layout built on the GPU (spmv/hyb_devbuild.cu) from the CSR in
 * device memory: the ELL arrays of kr_hyb_host (same width rule, same
 * padding) and the remainder's device plan, entry for entry. */
typedef struct kr_hyb_dev {
    int32_t width;
    int32_t *ell_col;
    double *ell_val;
    kr_vsr_dev *coo;
} kr_hyb_dev;
/* On failure nothing is left allocated. */
kr_status kr_hyb_dev_build(kr_ctx *ctx, const kr_csr_view *A, kr_hyb_dev *h);

#ifdef __cplusplus
}
#endif

#endif
