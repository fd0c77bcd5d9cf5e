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

#ifdef __cplusplus
}
#endif

#endif
