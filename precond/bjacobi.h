/* Block-Jacobi internals shared with its tests, benchmarks and
 * precond/bjacobi_cond.c: the block-diagonal inverse as host CSR, the
 * setup's stage times, and which blocks the singular policy replaced. */
#ifndef KR_PRECOND_BJACOBI_H
#define KR_PRECOND_BJACOBI_H

#include "core/ctx.h"

/* B = blockdiag(D_b^{-1}) as n x n CSR with every entry of every block
 * (explicit zeros included), built from the host copy that impl (a
 * "bjacobi" preconditioner's impl) keeps. B is overwritten; free it with
 * kr_csr_free. */
kr_status kr_bjacobi_inverse_csr(kr_ctx *ctx, const void *impl, kr_csr *B);

/* Wall-clock seconds of the setup's stages (each ends with the device's
 * work finished): the CSR's upload to the GPU (0 on the CPU), the block
 * partition, extraction + inversion + singular policy, and the whole. */
typedef struct kr_bjacobi_times {
    double upload, blocking, invert, total;
} kr_bjacobi_times;
/* The stages of P's setup when P is a "bjacobi" preconditioner: returns 1
 * and fills *t; else returns 0 and zeroes it. */
int kr_bjacobi_get_times(const kr_precond *P, kr_bjacobi_times *t);

/* One flag per block (block_count of them), owned by impl: 1 where the
 * block was singular (precond/gje.h's pivot rule), so that the policy's
 * stand-in (scalar Jacobi or the identity), not an inverse, is applied;
 * else 0. */
const int32_t *kr_bjacobi_singular_flags(const void *impl);

#endif
