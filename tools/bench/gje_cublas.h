/* cuBLAS's batched inversion, the baseline `krylov bench gje` measures our
 * batched Gauss-Jordan elimination against: cublasDgetrfBatched followed by
 * cublasDgetriBatched, and cublasDmatinvBatched (k <= 32), on the
 * column-major blocks of a kr_gje_batch. cuBLAS takes one block size per
 * call, so the blocks are grouped by size and each group is one call; its
 * arrays of device pointers into the batch (cuBLAS's interface) are built
 * once, at creation, outside any timed region. CUDA contexts only; a build
 * without CUDA links stubs (tools/bench/cuda_stubs.c) that return
 * KR_ERR_NOT_COMPILED. The baseline makes its own cuBLAS handle, so the
 * library never links cuBLAS. */
#ifndef KR_TOOLS_BENCH_GJE_CUBLAS_H
#define KR_TOOLS_BENCH_GJE_CUBLAS_H

#include "precond/gje_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kr_gje_cublas kr_gje_cublas;

/* Plans the calls for bb's blocks in `in` (read only), `work` (where getrf
 * factorises in place) and `out` (the inverses): device arrays of
 * bb->total doubles in bb's layout. KR_ERR_UNSUPPORTED on a CPU context. */
kr_status kr_gje_cublas_create(kr_ctx *ctx, const kr_gje_batch *bb,
                               const double *in, double *work, double *out,
                               kr_gje_cublas **h);
void kr_gje_cublas_destroy(kr_ctx *ctx, kr_gje_cublas *h); /* accepts NULL */

/* Size groups, so cuBLAS calls per inversion (getrf + getri: twice this). */
int kr_gje_cublas_groups(const kr_gje_cublas *h);

/* work = in: getrf overwrites its input, so this precedes every run. */
kr_status kr_gje_cublas_reset(kr_ctx *ctx, kr_gje_cublas *h);

/* out = the inverses by LU: getrf on work, then getri from work into out,
 * one pair of calls per size group, queued on the context's stream. */
kr_status kr_gje_cublas_getrf_getri(kr_ctx *ctx, kr_gje_cublas *h);

/* out = the inverses of in by matinvBatched, one call per size group. */
kr_status kr_gje_cublas_matinv(kr_ctx *ctx, kr_gje_cublas *h);

/* *singular = the blocks that cuBLAS's last run (of the two above)
 * reported singular through its info arrays (a zero pivot of getrf). */
kr_status kr_gje_cublas_singular(kr_ctx *ctx, kr_gje_cublas *h,
                                 int32_t *singular);

#ifdef __cplusplus
}
#endif

#endif
