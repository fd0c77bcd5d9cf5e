/* The SpMM of the ELLPACK-like layouts (ellr, pellr, hyb's ELL part) on
 * the GPU, shared by spmv/ellr.cu, pellr.cu and hyb.cu (the kernels and
 * kr_ell_split_build / _free in CUDA builds only, so no stub; the split
 * rule and piece lists in spmv/spmm_split.c, every build): position p's len(p)
 * entries lie at val[base(p) + j*stride], base(p) = p and stride = rows for
 * ELLPACK (off NULL), or base(p) = off[p/32] + p%32 and stride 32 for PELLR's
 * slices; the result goes to row out[p] of Y (p when out is NULL).
 *
 * Long rows: a layout whose positions are sorted longest first (PELLR)
 * may cut its first positions into pieces of KR_SPMM_PIECE entries (a
 * kr_ell_split), so that one row of 574 entries is not 574 dependent
 * steps of one sub-warp while the rest of the GPU idles. Each piece is a
 * task of its own writing its partial row of Y to a work array; a finish
 * kernel adds each row's pieces in piece order (deterministic) and writes
 * Y. */
#ifndef KR_SPMV_SPMM_ROWS_H
#define KR_SPMV_SPMM_ROWS_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entries of one piece (-D to tune). */
#ifndef KR_SPMM_PIECE
#define KR_SPMM_PIECE 32
#endif
/* A sorted position is long, and cut, when its length is at least
 * KR_SPMM_LONG_MIN (two pieces) and KR_SPMM_LONG_FACTOR times the mean
 * row length nnz / nrows. Only spmv/spmm_split.c and the tests read these
 * three (the kernels read each piece's bounds from its list): tune them
 * with make CFLAGS=-D..., which reaches both. */
#ifndef KR_SPMM_LONG_FACTOR
#define KR_SPMM_LONG_FACTOR 2
#endif
#define KR_SPMM_LONG_MIN (2 * KR_SPMM_PIECE)

/* The long positions [0, nsplit) of a layout, cut into pieces (device
 * arrays). The work array grows to the largest k (at most
 * KR_MULTI_MAX_COLUMNS) seen by kr_ell_rows_spmm, so a later SpMM with no
 * more columns allocates nothing; a larger k runs unsplit. */
typedef struct kr_ell_split {
    int32_t nsplit;       /* positions cut                               */
    int32_t npieces;      /* pieces of all of them                       */
    int32_t *piece;       /* 3*npieces: (position, first j, end j)       */
    int32_t *piece_start; /* nsplit + 1: the pieces of position p        */
    double *part;         /* npieces x part_k: each piece's partial row  */
    int32_t part_k;       /* columns part has room for (0: none yet)     */
} kr_ell_split;

typedef struct kr_ell_rows {
    int32_t rows;       /* positions                                  */
    int32_t width;      /* every position's length when len is NULL   */
    const int32_t *len; /* rows: each position's length, or NULL      */
    const int32_t *out; /* rows: Y's row of each position, or NULL    */
    const int64_t *off; /* PELLR's slice offsets, or NULL (ELLPACK)   */
    const double *val;  /* the entries, padding included              */
    const int32_t *col;
    kr_ell_split *split; /* the long positions' pieces, or NULL       */
} kr_ell_rows;

/* Y[out(p), :] = sum_j val * X[col, :] over k columns (row-major X and Y
 * in device memory), on the context's stream. An unsplit row is summed in
 * the order j = 0, 1, ... as the CPU kernels; a split row piece by piece,
 * each piece in that order, then the pieces in order. */
kr_status kr_ell_rows_spmm(kr_ctx *ctx, const kr_ell_rows *L, int32_t k,
                           const double *X, double *Y);

/* Positions [0, nsplit) of lengths len (host memory, nonincreasing, each
 * long by the rule above) cut into pieces, their lists uploaded; S is
 * zeroed first, so nsplit = 0 gives an empty split. */
kr_status kr_ell_split_build(kr_ctx *ctx, const int32_t *len, int32_t nsplit,
                             kr_ell_split *S);
/* Frees S's device arrays (NULL ones skipped) and zeroes S. */
void kr_ell_split_free(kr_ctx *ctx, kr_ell_split *S);
/* The rule's length threshold for nnz entries over nrows rows: a
 * position is long when (double)len >= this, the larger of
 * KR_SPMM_LONG_MIN and KR_SPMM_LONG_FACTOR times the mean. */
double kr_ell_split_min_len(int64_t nnz, int32_t nrows);
/* The long positions of len (host memory, nrows lengths sorted longest
 * first, nnz in all): the length of their prefix. */
int32_t kr_ell_split_count(const int32_t *len, int32_t nrows, int64_t nnz);
/* The pieces of positions [0, nsplit) of lengths len, in host memory
 * (free()): start (nsplit + 1) holds position p's first piece, piece
 * (3 * count) each piece's (position, first j, end j): entries
 * first <= j < end, KR_SPMM_PIECE of them but in a row's last piece. On
 * failure nothing is left allocated. */
kr_status kr_ell_split_lists(kr_ctx *ctx, const int32_t *len, int32_t nsplit,
                             int32_t **start, int32_t **piece, int32_t *count);
/* The pieces of M's SpMM, and in *rows the rows cut, from the "piece"
 * and "piece_start" arrays of its layout (kr_format_ops.arrays): GPU
 * pellr's; 0 for every other format and backend. For tests and bench. */
int32_t kr_matrix_split_pieces(const kr_matrix *M, int32_t *rows);

#ifdef __cplusplus
}
#endif

#endif
