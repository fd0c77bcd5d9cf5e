/* Setup on the device (KR_BUILD_DEVICE): A's CSR uploaded once through
 * pinned staging, and the pieces every format's device build shares
 * (row lengths, scans, the stable sort by length, row statistics, HYB's
 * width). spmv/devbuild.cu; the functions C files call have CPU-only
 * stubs in spmv/cuda_stubs.c. Internal to spmv/ and its tests. */
#ifndef KR_SPMV_DEVBUILD_H
#define KR_SPMV_DEVBUILD_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Uploads A's rowptr, colind and val into new device arrays described by
 * *dev: through two pinned buffers, each chunk copied from the pageable
 * arrays by the host's threads while the previous chunk's DMA runs. A may
 * be freed on return. On failure *dev holds nothing. */
kr_status kr_dev_csr_upload(kr_ctx *ctx, const kr_csr *A, kr_csr_view *dev);
/* A's values over dev's (same pattern), the same way. */
kr_status kr_dev_csr_upload_values(kr_ctx *ctx, const kr_csr *A,
                                   kr_csr_view *dev);
/* Frees what kr_dev_csr_upload made and zeroes *dev; accepts a zeroed one. */
void kr_dev_csr_free(kr_ctx *ctx, kr_csr_view *dev);
/* Bytes of the arrays of *dev. */
size_t kr_dev_csr_bytes(const kr_csr_view *dev);
/* The first row of the CSR in device memory that fails kr_csr_check's row
 * checks (row pointers in order and within nnz, columns in range and
 * strictly increasing, finite values), by a kernel; nrows when none. */
kr_status kr_dev_csr_first_bad(kr_ctx *ctx, const kr_csr_view *A,
                               int32_t *first);
/* Waits for the context's stream: a timed stage ends with its work. */
kr_status kr_dev_sync(kr_ctx *ctx);

/* kr_csr_row_stats of the CSR in device memory: integer sums by a
 * reduction, then the host's formulas, so the result is the host's. */
kr_status kr_dev_row_stats(kr_ctx *ctx, const kr_csr_view *A, kr_row_stats *st);
/* kr_hyb_width's K for the CSR in device memory: the ceil(n/3)-th longest
 * row (by a sort of the row lengths), the rounded mean if that is 0. */
kr_status kr_dev_hyb_width(kr_ctx *ctx, const kr_csr_view *A, int32_t *K);

/* The pieces below are called from the formats' .cu files only. */

/* len[i] = row i's length, i < A->nrows. */
kr_status kr_dev_row_lengths(kr_ctx *ctx, const kr_csr_view *A, int32_t *len);
/* out[i] = in[0] + ... + in[i-1], i < n (exclusive prefix sums). */
kr_status kr_dev_exclusive_sum_i32(kr_ctx *ctx, const int32_t *in, int32_t *out,
                                   int32_t n);
kr_status kr_dev_exclusive_sum_i64(kr_ctx *ctx, const int64_t *in, int64_t *out,
                                   int32_t n);
/* Rows by length, longest first, equal lengths in row order (a stable
 * sort): perm[k] is the row at place k, sorted_len[k] its length. len has
 * n entries, none above maxlen. */
kr_status kr_dev_sort_rows(kr_ctx *ctx, const int32_t *len, int32_t n,
                           int32_t maxlen, int32_t *perm, int32_t *sorted_len);
/* count int32 of device memory at src into host *dst (waits). */
kr_status kr_dev_read_i32(kr_ctx *ctx, const int32_t *src, int32_t *dst,
                          size_t count);

/* Copies bytes with the context's host threads (spmv/devbuild_host.c):
 * the pinned staging's share of the upload. */
void kr_host_copy_parallel(const kr_ctx *ctx, void *dst, const void *src,
                           size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
