/* Linked instead of spmv/'s .cu files in a build without CUDA (CUDA=0):
 * every format's CUDA table is absent (NULL), so kr_matrix_create says the
 * format has no implementation there, and callers need no #ifdef. */
#include "spmv/format.h"

#include <stddef.h>

#define KR_FORMAT_STUB(name, summary)                                          \
    const kr_format_ops *kr_##name##_cuda_ops(void) { return NULL; }
KR_FORMAT_LIST(KR_FORMAT_STUB)
