/* ELLPACK-R (Vazquez et al.): the host layout shared by the CPU and CUDA
 * implementations. Rows are padded to the width K of the longest row and
 * stored column-major, so that consecutive rows sit next to each other in
 * memory (one GPU thread per row reads coalesced); rl[i] says where row i
 * really ends, so padding is never computed with. */
#ifndef KR_SPMV_ELLR_H
#define KR_SPMV_ELLR_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kr_ellr_host {
    int32_t nrows, ncols, nnz;
    int32_t width; /* K = the longest row's length                     */
    double *val;   /* nrows*K, val[i + j*nrows]; padding 0              */
    int32_t *col;  /* nrows*K, same layout; padding points at column 0 */
    int32_t *rl;   /* nrows: the true length of row i                  */
} kr_ellr_host;

/* Builds E from A in O(nnz + nrows*K). Refuses (KR_ERR_UNSUPPORTED) when the
 * padded size nrows*K exceeds both 3*nnz and 4096 entries. */
kr_status kr_ellr_host_build(kr_ctx *ctx, const kr_csr *A, kr_ellr_host *E);
/* Frees the arrays and zeroes E; accepts NULL. */
void kr_ellr_host_free(kr_ellr_host *E);
/* KR_ERR_UNSUPPORTED, saying why, when padding nrows rows to K exceeds
 * both 3*nnz and 4096 entries (the refusal of both builds). */
kr_status kr_ellr_check_padding(kr_ctx *ctx, int32_t nrows, int32_t K,
                                int32_t nnz);

/* ELLR's layout built on the GPU (spmv/ellr_devbuild.cu) from the CSR in
 * device memory: the arrays of kr_ellr_host, entry for entry, in device
 * memory. */
typedef struct kr_ellr_dev {
    int32_t width;
    int64_t stored;
    double *val;
    int32_t *col;
    int32_t *rl;
} kr_ellr_dev;
/* On failure nothing is left allocated. */
kr_status kr_ellr_dev_build(kr_ctx *ctx, const kr_csr_view *A, kr_ellr_dev *E);
/* Entries stored, padding included: nrows*K. */
int64_t kr_ellr_host_stored(const kr_ellr_host *E);

#ifdef __cplusplus
}
#endif

#endif
