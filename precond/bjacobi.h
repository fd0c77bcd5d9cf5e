/* Block-Jacobi internals shared with its tests: the block-diagonal
 * inverse as host CSR (also the view's inverse_csr). Stage times, blocks
 * and the replaced blocks are reported through the view
 * (kr_precond_get_info, kr_precond_block_cond). */
#ifndef KR_PRECOND_BJACOBI_H
#define KR_PRECOND_BJACOBI_H

#include "core/ctx.h"

/* B = blockdiag(D_b^{-1}) as n x n CSR with every entry of every block
 * (explicit zeros included), built from the host copy that impl (a
 * "bjacobi" preconditioner's impl) keeps. B is overwritten; free it with
 * kr_csr_free. */
kr_status kr_bjacobi_inverse_csr(kr_ctx *ctx, const void *impl, kr_csr *B);

#endif
