/* VSR, vectorized segment reduction (Huang et al.): CSR cut into chunks of
 * a fixed number of nonzeros (KR_VSR_CHUNK), one chunk per warp, whatever
 * the rows. Internal to spmv/vsr.c, spmv/vsr.cu and HYB, whose COO part is
 * a VSR plan over the entries beyond the ELL width.
 *
 * Rows wholly inside a chunk are written by the chunk. A row crossing a
 * chunk boundary (a "span") gets partial sums: each chunk c writes two
 * slots, part[2c] (its first segment when that row began in an earlier
 * chunk) and part[2c+1] (its last segment when that row began in c and goes
 * on past c), 0 when unused. A span from chunk a to chunk b then owns the
 * contiguous slots part[2a+1 .. 2b], summed in a fixed order by a fix-up
 * pass, so results never depend on timing and no atomics touch y. */
#ifndef KR_SPMV_VSR_H
#define KR_SPMV_VSR_H

#include "core/ctx.h"
#include "spmv/format.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzeros per chunk: 32 lanes times KR_VSR_STEPS coalesced steps. */
#define KR_VSR_STEPS 8
#define KR_VSR_CHUNK (32 * KR_VSR_STEPS)
/* Spans with more slots than this are "long": first in the span arrays,
 * summed by a whole warp on the GPU (the short ones by one thread). */
#define KR_VSR_LONG_SPAN 32

/* Host arrays of a VSR matrix. `for_device` at build picks the row lookup:
 * the CPU kernel walks rowptr from chunk_row; the GPU kernel uses one head
 * bit per nonzero and ordinals of nonempty rows (no rowptr on the device). */
typedef struct kr_vsr_plan {
    int32_t nrows, nnz, nchunks;
    int32_t *colind;    /* nnz                                           */
    double *val;        /* nnz                                           */
    int32_t *rowptr;    /* nrows + 1 (CPU), else NULL                    */
    int32_t *chunk_row; /* nchunks: row of each chunk's first nonzero    */
    uint32_t *heads;    /* ceil(nnz/32) words, bit k: nonzero k starts a
                           row (GPU), else NULL                          */
    int32_t *chunk_ord; /* nchunks: (rows started before the chunk) - 1 (GPU) */
    int32_t *nzrow;     /* nonempty rows in order; NULL when none empty
                           (then ordinal = row) (GPU)                    */
    int32_t nspans;     /* rows crossing a chunk boundary                */
    int32_t nlong;      /* of which long: the first nlong (see above)    */
    int32_t *span_row;  /* nspans                                        */
    int32_t *span_lo;   /* nspans: first slot of part (2a + 1)           */
    int32_t *span_hi;   /* nspans: last slot of part (2b), inclusive     */
    int32_t nempty;     /* rows without entries                          */
    int32_t *empty;     /* nempty row indices                            */
    double *part;       /* 2*nchunks partial sums (CPU kernel)           */
    double *mpart;      /* the SpMM's slots and per-thread sums (CPU),
                           grown on demand; mpart_cap doubles            */
    size_t mpart_cap;
} kr_vsr_plan;

/* Builds the plan of an nrows-row CSR (arrays copied) in O(nnz + nrows). */
kr_status kr_vsr_plan_build(kr_ctx *ctx, int32_t nrows, const int32_t *rowptr,
                            const int32_t *colind, const double *val,
                            int for_device, kr_vsr_plan *p);
void kr_vsr_plan_free(kr_vsr_plan *p); /* accepts NULL and zeroed plans */
/* Bytes the plan holds. */
size_t kr_vsr_plan_bytes(const kr_vsr_plan *p);

/* y = alpha*A*x + beta*y on the CPU (plan built with for_device = 0);
 * beta == 0 overwrites y. With empty_rows = 0, rows without entries are
 * left untouched (HYB adds its COO part with beta = 1 that way). */
void kr_vsr_plan_apply(kr_ctx *ctx, kr_vsr_plan *p, double alpha,
                       const double *x, double beta, double *y, int empty_rows);

/* Y = A X for k columns (row-major) on the CPU, with kr_vsr_plan_apply's
 * chunks, slots and fix-up order, so each column equals that SpMV's
 * result bit for bit. add = 0 overwrites Y (empty rows 0); add = 1 adds
 * A X to Y and leaves rows without entries alone (HYB's remainder).
 * KR_ERR_NOMEM when the scratch cannot grow. */
kr_status kr_vsr_plan_apply_multi(kr_ctx *ctx, kr_vsr_plan *p, int32_t k,
                                  const double *X, double *Y, int add);

/* The plan on the GPU (spmv/vsr.cu; CUDA builds only): the arrays of a
 * plan built for_device, in device memory. */
typedef struct kr_vsr_dev {
    int32_t nrows, nnz, nchunks, nspans, nlong, nempty;
    double *val;
    int32_t *col;
    uint32_t *heads;
    int32_t *chunk_ord, *nzrow; /* nzrow NULL when no row is empty */
    int32_t *span_row, *span_lo, *span_hi, *empty;
    double *part;     /* 2*nchunks */
    double *mpart;    /* the SpMM's slots, 2*nchunks*k, grown on demand */
    size_t mpart_cap; /* doubles */
    size_t bytes;
} kr_vsr_dev;
kr_status kr_vsr_dev_create(kr_ctx *ctx, const kr_vsr_plan *p,
                            kr_vsr_dev **out);
void kr_vsr_dev_destroy(kr_ctx *ctx, kr_vsr_dev *d); /* accepts NULL */
size_t kr_vsr_dev_bytes(const kr_vsr_dev *d);
/* Same contract as kr_vsr_plan_apply, on the context's stream. */
kr_status kr_vsr_dev_apply(kr_ctx *ctx, const kr_vsr_dev *d, double alpha,
                           const double *x, double beta, double *y,
                           int empty_rows);
/* The same device plan built on the GPU (spmv/vsr_devbuild.cu) from an
 * nrows-row CSR of nnz entries in device memory (arrays copied), entry
 * for entry what kr_vsr_dev_create makes of kr_vsr_plan_build's plan. */
kr_status kr_vsr_dev_build(kr_ctx *ctx, int32_t nrows, int32_t nnz,
                           const int32_t *rowptr, const int32_t *colind,
                           const double *val, kr_vsr_dev **out);
/* Its layout arrays (part excluded), for kr_format_ops.arrays. */
int kr_vsr_dev_arrays(const kr_vsr_dev *d, kr_dev_array *a, int max);
/* Same contract as kr_vsr_plan_apply_multi, on the context's stream (the
 * slots' scratch grows in d). */
kr_status kr_vsr_dev_apply_multi(kr_ctx *ctx, kr_vsr_dev *d, int32_t k,
                                 const double *X, double *Y, int add);

#ifdef __cplusplus
}
#endif

#endif
