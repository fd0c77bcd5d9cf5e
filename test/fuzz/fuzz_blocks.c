/* The block-sizes file of block-Jacobi (krylov solve --blocks FILE). */
#include "test/fuzz/fuzz.h"

#include <stdlib.h>

KR_FUZZ_TARGET(blocks)
{
    kr_ctx *ctx = kr_fuzz_ctx();
    kr_source S;
    if (kr_source_memory(ctx, "fuzz-blocks.mtx", data, size, &S) == KR_OK) {
        int32_t *sizes = NULL, count = -1;
        kr_status st = kr_read_block_sizes_from(ctx, &S, 32, &sizes, &count);
        kr_fuzz_expect(st == KR_OK || (sizes == NULL && count == 0));
        for (int32_t i = 0; st == KR_OK && i < count; i++)
            kr_fuzz_expect(sizes[i] >= 1 && sizes[i] <= 32);
        free(sizes);
    }
    kr_source_close(&S);
    return 0;
}
