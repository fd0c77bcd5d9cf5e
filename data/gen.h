/* Internal interface of the test-problem generators: data/gen.c parses the
 * spec and checks sizes, the builders below assume valid arguments whose n
 * and nnz fit in int32. */
#ifndef KR_DATA_GEN_H
#define KR_DATA_GEN_H

#include "krylov.h"

#include <stdint.h>

/* Defaults of the optional parameters after N. */
#define KR_GEN_PECLET_DEFAULT 10.0
#define KR_GEN_MEAN_DEFAULT 15.0
#define KR_GEN_SHAPE_DEFAULT 1.5
#define KR_GEN_BAND_DEFAULT 8.0
#define KR_GEN_BLOCK_DEFAULT 8.0
#define KR_GEN_BLOCKS_PER_ROW_DEFAULT 3.0
#define KR_GEN_ARROW_DEFAULT 4.0

/* Structured grids, N points per dimension, lexicographic (x fastest). */
kr_status kr_gen_poisson2d(kr_ctx *ctx, int32_t N, kr_csr *A);
kr_status kr_gen_poisson3d(kr_ctx *ctx, int32_t N, kr_csr *A);
kr_status kr_gen_poisson3d27(kr_ctx *ctx, int32_t N, kr_csr *A);
kr_status kr_gen_convdiff2d(kr_ctx *ctx, int32_t N, double peclet, kr_csr *A);
kr_status kr_gen_elasticity3d(kr_ctx *ctx, int32_t N, kr_csr *A);

/* N rows with power-law lengths of mean about `mean` (1 <= mean <= N, and
 * mean * N <= INT32_MAX, checked by the caller), Pareto shape `shape`. */
kr_status kr_gen_powerlaw(kr_ctx *ctx, int32_t N, double mean, double shape,
                          kr_csr *A);

/* The SpMM training families (data/gen_families.c), arguments checked by
 * the caller: row i spans [i - l_i, i + u_i] with l_i, u_i uniform in
 * [0, width]; dense size x size blocks, the diagonal one and `per_row`
 * random others per block row; the first `width` rows and columns full
 * plus the diagonal. */
kr_status kr_gen_banded(kr_ctx *ctx, int32_t N, int32_t width, uint64_t seed,
                        kr_csr *A);
kr_status kr_gen_blocks(kr_ctx *ctx, int32_t N, int32_t size, int32_t per_row,
                        uint64_t seed, kr_csr *A);
kr_status kr_gen_arrow(kr_ctx *ctx, int32_t N, int32_t width, kr_csr *A);

/* Random numbers (data/gen_random.c): splitmix64 steps; uniform in [0, m)
 * for m < 2^32; uniform in [-1, 1); k distinct sorted values of [0, m),
 * every k-subset equally likely. */
uint64_t kr_gen_mix64(uint64_t z);
uint64_t kr_gen_next64(uint64_t *s);
int32_t kr_gen_below(uint64_t *s, int32_t m);
double kr_gen_uniform_pm1(uint64_t *s);
void kr_gen_sample_sorted(uint64_t *s, int32_t k, int32_t m, int32_t *out);
/* out[0..k]: k distinct values of [0, m) other than self, and self, sorted;
 * returns self's position. */
int32_t kr_gen_sample_with(uint64_t *s, int32_t k, int32_t m, int32_t self,
                           int32_t *out);
/* val[0..len): off-diagonals uniform in [-1, 1), val[diag] = 1 + the sum
 * of their magnitudes (strict diagonal dominance). */
void kr_gen_dominant_values(uint64_t *s, int32_t len, int32_t diag,
                            double *val);

/* Threads for a loop over `work` items: 1 when small, else the context's. */
int kr_gen_threads(const kr_ctx *ctx, int64_t work);

#endif
