/* Vectors inside the library: n doubles in the backend's memory. A view
 * borrows memory (a column of a block) and is never freed. */
#ifndef KR_CORE_VEC_H
#define KR_CORE_VEC_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kr_vec {
    kr_ctx *ctx;
    int32_t n;
    double *data; /* backend memory                     */
    int owned;    /* 1 if kr_vec_destroy frees `data`   */
};

/* Allocates `count` doubles of backend memory, zero-filled. */
kr_status kr_dev_zeros(kr_ctx *ctx, size_t count, double **p);
void kr_dev_free(kr_ctx *ctx, void *p);
/* Allocates backend memory and copies `bytes` from host memory into it. */
kr_status kr_dev_upload_new(kr_ctx *ctx, const void *host, size_t bytes,
                            void **p);

#ifdef __cplusplus
}
#endif

#endif
