/* PETSc binary vectors, and any input read as a right-hand side (-b):
 * a PETSc vector or a Matrix Market array, told by the first bytes. */
#include "test/fuzz/fuzz.h"

#include <stdlib.h>

KR_FUZZ_TARGET(petsc_vec)
{
    kr_ctx *ctx = kr_fuzz_ctx();
    for (int pipe = 0; pipe < 2; pipe++) {
        kr_source S;
        if (kr_source_memory(ctx, "fuzz.bin", data, size, &S) != KR_OK)
            continue;
        if (pipe) S.size = -1;
        int32_t n = -1, cols = -1;
        double *v = NULL;
        kr_status st = pipe ? kr_read_vector_from(ctx, &S, &n, &cols, &v)
                            : kr_read_petsc_vec_from(ctx, &S, &n, &v);
        kr_fuzz_expect(st == KR_OK || (v == NULL && n == 0));
        free(v);
        kr_source_close(&S);
    }
    return 0;
}
