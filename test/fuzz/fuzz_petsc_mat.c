/* PETSc binary matrices, as a file (size known) and as a pipe would give
 * them (size unknown: the body is checked while reading). */
#include "test/fuzz/fuzz.h"

KR_FUZZ_TARGET(petsc_mat)
{
    kr_ctx *ctx = kr_fuzz_ctx();
    for (int pipe = 0; pipe < 2; pipe++) {
        kr_source S;
        if (kr_source_memory(ctx, "fuzz.bin", data, size, &S) != KR_OK)
            continue;
        if (pipe) S.size = -1;
        kr_csr A;
        kr_status st =
            kr_read_petsc_mat_from(ctx, &S, pipe ? KR_READ_SYSTEM : 0, &A);
        kr_fuzz_expect(st == KR_OK ? kr_csr_check(ctx, &A) == KR_OK
                                   : A.rowptr == NULL && *kr_ctx_error(ctx));
        kr_csr_free(&A);
        kr_source_close(&S);
    }
    return 0;
}
