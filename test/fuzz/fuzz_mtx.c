/* Matrix Market input (plain or gzip, told by its first bytes) through the
 * sparse reader, the dense reader and the reader krylov solve uses. */
#include "test/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

KR_FUZZ_TARGET(mtx)
{
    kr_ctx *ctx = kr_fuzz_ctx();
    kr_source S;
    kr_csr A;
    if (kr_source_memory(ctx, "fuzz.mtx", data, size, &S) == KR_OK) {
        kr_status st = kr_read_mtx_from(ctx, &S, 0, &A);
        kr_fuzz_expect(st == KR_OK ? kr_csr_check(ctx, &A) == KR_OK
                                   : A.rowptr == NULL && *kr_ctx_error(ctx));
        kr_csr_free(&A);
    }
    kr_source_close(&S);
    if (kr_source_memory(ctx, "fuzz.mtx", data, size, &S) == KR_OK) {
        int32_t m = -1, n = -1;
        double *D = NULL;
        kr_status st = kr_read_dense_mtx_from(ctx, &S, &m, &n, &D);
        kr_fuzz_expect(st == KR_OK || (D == NULL && m == 0 && n == 0));
        free(D);
    }
    kr_source_close(&S);
    if (kr_source_memory(ctx, "fuzz.mtx", data, size, &S) == KR_OK) {
        kr_status st = kr_read_matrix_from(ctx, &S, KR_READ_SYSTEM, &A);
        kr_fuzz_expect(st != KR_OK || (A.nrows == A.ncols && A.nrows > 0 &&
                                       kr_csr_check(ctx, &A) == KR_OK));
        kr_csr_free(&A);
    }
    kr_source_close(&S);
    return 0;
}
