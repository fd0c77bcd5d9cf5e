/* The host half of the pinned staging (spmv/devbuild.cu): one thread
 * copies pageable memory at a fraction of the PCIe rate, so each chunk is
 * split over the context's threads. */
#include "spmv/devbuild.h"

#include <string.h>

/* Below this a chunk is copied by one thread: starting a team costs more. */
#define KR_COPY_PARALLEL_MIN (1 << 20)

void kr_host_copy_parallel(const kr_ctx *ctx, void *dst, const void *src,
                           size_t bytes)
{
    int threads = bytes < KR_COPY_PARALLEL_MIN ? 1 : kr_ctx_threads(ctx);
    size_t piece = (bytes + (size_t)threads - 1) / (size_t)threads;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int t = 0; t < threads; t++) {
        size_t at = (size_t)t * piece;
        if (at < bytes) {
            size_t len = bytes - at < piece ? bytes - at : piece;
            memcpy((char *)dst + at, (const char *)src + at, len);
        }
    }
}
