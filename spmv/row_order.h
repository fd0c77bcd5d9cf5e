/* Row orders for SpMM and SpMV (after Mehrabi et al., "Learning sparse
 * matrix row permutations for efficient SpMM on GPU architectures"): which
 * of A's rows each position of the permuted matrix holds. A kr_matrix
 * made with one is built on the reordered rows and scatters its results
 * back (spmv/permuted.c), so callers never see permuted vectors. */
#ifndef KR_SPMV_ROW_ORDER_H
#define KR_SPMV_ROW_ORDER_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows one warp of the SpMM kernels holds (four 8-lane sub-warps) and
 * rows one thread block holds (eight warps): the groups the warp- and
 * CTA-aware orders fill. */
#define KR_ORDER_WARP_ROWS 4
#define KR_ORDER_CTA_ROWS 32

/* 1 if name is one of kr_permute_names(). */
int kr_row_order_known(const char *name);

/* order[p] = the row of A at position p, a permutation of 0..nrows-1, by
 * the named order (which must be known). O(nnz + nrows log nrows) for the
 * length orders; the overlap orders compare each row with at most a
 * window of 32 (warp) or 128 (cta) candidates. */
kr_status kr_row_order(kr_ctx *ctx, const kr_csr *A, const char *name,
                       int32_t *order);

/* The number of distinct 32-column blocks rows a and b do not share (the
 * Hamming distance of their 32-column block masks), by merging the rows. */
int32_t kr_row_block_distance(const kr_csr *A, int32_t a, int32_t b);
/* dist[i] = kr_row_block_distance(A, seed, rows[i]) for i < n, in
 * O(len(seed) + sum len(rows[i])): the seed's blocks are marked in stamp
 * (ncols/32 + 1 entries, each != mark on entry; left == mark). */
void kr_row_block_distances(const kr_csr *A, int32_t seed, const int32_t *rows,
                            int32_t n, int32_t *stamp, int32_t mark,
                            int32_t *dist);

#ifdef __cplusplus
}
#endif

#endif
