/* Batched Gauss-Jordan elimination for block-Jacobi: many small dense
 * blocks (1..KR_GJE_MAX rows, sizes may vary) inverted, extracted from CSR
 * and inverted in one pass, and applied as z = D^{-1} r. Each backend
 * implements the same table (precond/gje_batch.c on the CPU, the
 * reference; precond/gje_batch.cu on the GPU, or NULL in a build without
 * CUDA), and every pointer in these calls is backend memory.
 *
 * Storage: block b has k_b = starts[b+1] - starts[b] rows and its k_b^2
 * entries at offs[b], column-major (entry (i, j) at offs[b] + i + j*k_b).
 * Inverses are written in the same layout. info[b] = 1 when block b is
 * singular by kr_gje_invert's rule (precond/gje.h), else 0; a singular
 * block's output is unspecified. */
#ifndef KR_PRECOND_GJE_BATCH_H
#define KR_PRECOND_GJE_BATCH_H

#include "core/ctx.h"
#include "precond/gje.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size classes: class c holds the blocks of kr_gje_class_rows(c - 1) < k <=
 * kr_gje_class_rows(c) rows: 1, 2, 4, 8, then steps of 4 up to 32. A GPU
 * kernel gives a block of class c p = kr_gje_lanes(k) lanes (the next power
 * of two) and each lane a row of kr_gje_class_rows(c) registers, so the
 * elimination's steps and row updates cost about k^2, not p^2 (a block of
 * 17 rows would otherwise cost as much as one of 32); classes above 16
 * rows take a blocked kernel on the tensor cores, padded to a multiple of
 * 8 rows. */
#define KR_GJE_CLASSES 10
#define KR_GJE_CLASS_ROWS(c) ((c) < 4 ? 1 << (c) : 4 * ((c)-1))

typedef struct kr_gje_batch {
    int32_t nb;    /* blocks                                             */
    int32_t max_k; /* the largest block                                  */
    int64_t nrows; /* sum of k_b                                         */
    int64_t total; /* sum of k_b^2: entries of the whole batch           */
    /* backend memory, one allocation (dev) */
    int64_t *offs;   /* nb + 1: block b's entries begin at offs[b]      */
    int32_t *starts; /* nb + 1: block b is rows starts[b]..starts[b+1]-1 */
    int32_t *order;  /* nb: block numbers grouped by size class          */
    void *dev;
    /* host memory */
    int32_t *h_starts, *h_order;
    int64_t *h_offs;
    int32_t class_start[KR_GJE_CLASSES + 1]; /* order[class_start[c]..
                                                class_start[c+1]) */
} kr_gje_batch;

/* Builds the batch for the nb blocks whose starts (nb + 1 entries, host,
 * starts[0] = 0, increasing, each size 1..KR_GJE_MAX) are given. */
kr_status kr_gje_batch_create(kr_ctx *ctx, int32_t nb, const int32_t *starts,
                              kr_gje_batch *bb);
void kr_gje_batch_free(kr_ctx *ctx, kr_gje_batch *bb); /* accepts zeroed */

/* Fills the host arrays of a batch built on the device
 * (kr_blocking_dev_batch) from its starts (nb + 1, host, read back);
 * KR_ERR_DEVICE when they do not give the sizes the device found. */
kr_status kr_gje_batch_set_host(kr_ctx *ctx, kr_gje_batch *bb,
                                const int32_t *starts);

/* A CSR matrix in backend memory (the host kr_csr itself on the CPU). */
typedef struct kr_gje_csr {
    int32_t nrows, nnz;
    const int32_t *rowptr, *colind;
    const double *val;
} kr_gje_csr;

typedef struct kr_gje_batch_ops {
    const char *name;
    /* flags[i] = 1 when row i starts a new column pattern: i = 0, or row
     * i's sorted column indices differ from row i-1's; else 0. */
    kr_status (*pattern_flags)(kr_ctx *ctx, const kr_gje_csr *A,
                               unsigned char *flags);
    /* out = the inverses of the dense blocks in `in` (same layout). */
    kr_status (*invert)(kr_ctx *ctx, const kr_gje_batch *bb, const double *in,
                        double *out, int32_t *info);
    /* out = the inverses of A's diagonal blocks A(s:s+k, s:s+k), extracted,
     * inverted and written in one pass. */
    kr_status (*extract_invert)(kr_ctx *ctx, const kr_gje_batch *bb,
                                const kr_gje_csr *A, double *out,
                                int32_t *info);
    /* z = blockdiag(inv) r over the batch's rows (z, r distinct). */
    kr_status (*apply)(kr_ctx *ctx, const kr_gje_batch *bb, const double *inv,
                       const double *r, double *z);
    /* Z = blockdiag(inv) R for the k columns of the row-major blocks R and
     * Z (nrows x k, distinct), each column as apply gives it. */
    kr_status (*apply_multi)(kr_ctx *ctx, const kr_gje_batch *bb,
                             const double *inv, int k, const double *R,
                             double *Z);
} kr_gje_batch_ops;

const kr_gje_batch_ops *kr_gje_batch_cpu_ops(void);
const kr_gje_batch_ops *kr_gje_batch_cuda_ops(void); /* NULL without CUDA */
/* The table for ctx's device. */
const kr_gje_batch_ops *kr_gje_batch_ops_for(kr_ctx *ctx);

/* The largest block of size class c (0 <= c < KR_GJE_CLASSES). */
static inline int32_t kr_gje_class_rows(int c) { return KR_GJE_CLASS_ROWS(c); }

/* The size class of a block of k rows (1 <= k <= KR_GJE_MAX). */
static inline int kr_gje_class(int32_t k)
{
    int c = 0;
    while (kr_gje_class_rows(c) < k)
        c++;
    return c;
}

/* Lanes a GPU kernel gives a block of k rows: the next power of two. */
static inline int32_t kr_gje_lanes(int32_t k)
{
    int32_t p = 1;
    while (p < k)
        p *= 2;
    return p;
}

#ifdef __cplusplus
}
#endif

#endif
