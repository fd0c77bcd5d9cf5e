/* Supervariable blocking on the GPU (precond/blocking_dev.cu; a stub in
 * precond/cuda_stubs.c without CUDA): the blocks of
 * kr_blocking_supervariables, found and batched on the device so that the
 * host waits for one small download instead of passing over n flags. */
#ifndef KR_PRECOND_BLOCKING_DEV_H
#define KR_PRECOND_BLOCKING_DEV_H

#include "core/ctx.h"
#include "precond/gje_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bb = the batch of A's supervariable blocks of at most max rows (1..
 * KR_BLOCK_MAX), A square and in device memory. Pattern comparison, cut,
 * merge and the batch's arrays (offs, starts, order) all run on the
 * context's stream; the host downloads one header (nb, max_k, total,
 * class_start). bb's host arrays (h_starts, h_offs, h_order) are left
 * NULL: kr_gje_batch_set_host fills them from starts read back later. */
kr_status kr_blocking_dev_batch(kr_ctx *ctx, const kr_gje_csr *A, int32_t max,
                                kr_gje_batch *bb);

#ifdef __cplusplus
}
#endif

#endif
