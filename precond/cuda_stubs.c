/* Linked instead of precond/'s .cu files in a build without CUDA (CUDA=0):
 * the batched GJE has no GPU table, so callers need no #ifdef. */
#include "core/error.h"
#include "precond/gje_batch.h"

const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void) { return NULL; }
