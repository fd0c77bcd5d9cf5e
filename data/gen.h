/* Internal interface of the test-problem generators: data/gen.c parses the
 * spec and checks sizes, the builders below assume valid arguments whose n
 * and nnz fit in int32. */
#ifndef KR_DATA_GEN_H
#define KR_DATA_GEN_H

#include "krylov.h"

#include <stdint.h>

/* Default of the optional second parameter of convdiff2d and powerlaw. */
#define KR_GEN_PECLET_DEFAULT 10.0
#define KR_GEN_MEAN_DEFAULT 15.0

/* Structured grids, N points per dimension, lexicographic (x fastest). */
kr_status kr_gen_poisson2d(kr_ctx *ctx, int32_t N, kr_csr *A);
kr_status kr_gen_poisson3d(kr_ctx *ctx, int32_t N, kr_csr *A);
kr_status kr_gen_poisson3d27(kr_ctx *ctx, int32_t N, kr_csr *A);
kr_status kr_gen_convdiff2d(kr_ctx *ctx, int32_t N, double peclet, kr_csr *A);
kr_status kr_gen_elasticity3d(kr_ctx *ctx, int32_t N, kr_csr *A);

/* N rows with power-law lengths of mean about `mean` (1 <= mean <= N, and
 * mean * N <= INT32_MAX, checked by the caller). */
kr_status kr_gen_powerlaw(kr_ctx *ctx, int32_t N, double mean, kr_csr *A);

/* Threads for a loop over `work` items: 1 when small, else the context's. */
int kr_gen_threads(const kr_ctx *ctx, int64_t work);

#endif
