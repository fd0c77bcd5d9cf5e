/* Permuted ELLPACK-R (Wang & Gu 2020): the host layout shared by the CPU and
 * CUDA implementations. Rows are sorted by length, longest first (a stable
 * counting sort), and cut into slices of 32 consecutive sorted rows, one GPU
 * warp each. Every slice has its own width w_s (its first row's length) and
 * is stored column-major within itself: val[off[s] + lane + j*32]. So one
 * long row pads only its own slice, never the whole matrix. */
#ifndef KR_SPMV_PELLR_H
#define KR_SPMV_PELLR_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KR_PELLR_SLICE 32

typedef struct kr_pellr_host {
    int32_t nrows, ncols, nnz;
    int32_t nslices; /* ceil(nrows / 32)                                */
    int32_t *perm;   /* nrows: perm[k] = original row of sorted row k    */
    int32_t *rl;     /* nslices*32: length of sorted row k; 0 past nrows */
    int32_t *width;  /* nslices: w_s = the longest row of slice s        */
    int64_t *off;    /* nslices + 1: off[s+1] = off[s] + 32*w_s          */
    double *val;     /* off[nslices] entries; padding 0                  */
    int32_t *col;    /* off[nslices] entries; padding points at column 0 */
} kr_pellr_host;

/* Builds P from A in O(nnz + nrows + max row length). */
kr_status kr_pellr_host_build(kr_ctx *ctx, const kr_csr *A, kr_pellr_host *P);
/* Frees the arrays and zeroes P; accepts NULL. */
void kr_pellr_host_free(kr_pellr_host *P);
/* Entries stored, padding included: the sum of 32*w_s. */
int64_t kr_pellr_host_stored(const kr_pellr_host *P);
/* Bytes of the arrays (as uploaded to a device). */
size_t kr_pellr_host_bytes(const kr_pellr_host *P);

/* PELLR's layout built on the GPU (spmv/pellr_devbuild.cu) from the CSR in
 * device memory: kr_pellr_host's arrays, entry for entry, in device
 * memory (perm, rl, width, off, val, col as there). */
typedef struct kr_pellr_dev {
    int32_t nslices;
    int64_t stored; /* off[nslices] */
    int32_t *perm, *rl, *width;
    int64_t *off;
    double *val;
    int32_t *col;
} kr_pellr_dev;
/* On failure nothing is left allocated. */
kr_status kr_pellr_dev_build(kr_ctx *ctx, const kr_csr_view *A,
                             kr_pellr_dev *P);
/* Frees the arrays left in P (NULL ones skipped) and zeroes P. */
void kr_pellr_dev_free(kr_ctx *ctx, kr_pellr_dev *P);
/* *count = the slices s < nslices with width[s] >= min_width and
 * (double)width[s] >= min_wide (a prefix: widths do not grow). Also
 * counts the SpMM's long rows over rl's first nrows entries. */
kr_status kr_pellr_dev_count_wide(kr_ctx *ctx, const int32_t *width,
                                  int32_t nslices, int32_t min_width,
                                  double min_wide, int32_t *count);

#ifdef __cplusplus
}
#endif

#endif
