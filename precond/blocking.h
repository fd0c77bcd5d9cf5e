/* Block partitions of the unknowns for block-Jacobi: consecutive rows cut
 * into blocks of at most KR_BLOCK_MAX rows, given as nb and the nb + 1 block
 * starts (starts[0] = 0, starts[nb] = n; block b is rows
 * starts[b] .. starts[b+1]-1). */
#ifndef KR_PRECOND_BLOCKING_H
#define KR_PRECOND_BLOCKING_H

#include "core/ctx.h"

/* The largest block: a warp of the GPU kernels. */
#define KR_BLOCK_MAX 32

/* Supervariable agglomeration (Anzt et al. 2018): consecutive rows with
 * identical column patterns form a supervariable (of at most max rows);
 * adjacent supervariables are then merged greedily, left to right, while
 * the block stays <= max rows. A is square; 1 <= max <= KR_BLOCK_MAX.
 * *starts is malloc'ed (nb + 1 entries), freed with free(). */
kr_status kr_blocking_supervariables(kr_ctx *ctx, const kr_csr *A, int32_t max,
                                     int32_t *nb, int32_t **starts);

/* The same from flags[i] = 1 where row i's column pattern differs from row
 * i-1's (flags[0] = 1), host memory, as kr_gje_batch_ops.pattern_flags
 * computes them on either backend. */
kr_status kr_blocking_from_flags(kr_ctx *ctx, int32_t n,
                                 const unsigned char *flags, int32_t max,
                                 int32_t *nb, int32_t **starts);

/* SCC-aware blocking: a block never holds rows of two strongly connected
 * components of A's graph (edge j -> i for a_ij != 0). Blocks are runs of
 * consecutive rows, so each maximal run of rows in one SCC is cut on its
 * own: a run of at most max rows is one block, a longer one is cut into
 * supervariables merged greedily as kr_blocking_supervariables does, never
 * past the run's end. */
kr_status kr_blocking_scc(kr_ctx *ctx, const kr_csr *A, int32_t max,
                          int32_t *nb, int32_t **starts);

/* Blocks of k rows, the last one shorter when k does not divide n. */
kr_status kr_blocking_fixed(kr_ctx *ctx, int32_t n, int32_t k, int32_t *nb,
                            int32_t **starts);

/* The caller's sizes (each 1..KR_BLOCK_MAX) in order; they must sum to n,
 * else KR_ERR_ARG. */
kr_status kr_blocking_given(kr_ctx *ctx, int32_t n, const int32_t *sizes,
                            int32_t nsizes, int32_t *nb, int32_t **starts);

#endif
