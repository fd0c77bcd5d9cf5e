/* The readers over a kr_source (io/source.h), internal to the library and
 * the krylov command: each input is read once, front to back, so files,
 * pipes, standard input ("-") and memory buffers (the fuzz targets in
 * test/fuzz/) all go through the same code. The public kr_read_* functions
 * open a path and call these. */
#ifndef KR_IO_READ_H
#define KR_IO_READ_H

#include "io/source.h"
#include "krylov.h"

#include <stdint.h>

/* kr_read_flags (KR_READ_SYSTEM) and the *_path readers are public
 * (include/krylov.h). */

/* What the first bytes of an input say it is. */
typedef enum kr_input_kind {
    KR_INPUT_TEXT,         /* anything else: read as Matrix Market     */
    KR_INPUT_PETSC_MAT,    /* big-endian MAT_FILE_CLASSID              */
    KR_INPUT_PETSC_VEC,    /* big-endian VEC_FILE_CLASSID              */
    KR_INPUT_PETSC_SWAPPED /* a PETSc class id written little-endian   */
} kr_input_kind;

kr_status kr_input_kind_of(kr_ctx *ctx, kr_source *S, kr_input_kind *kind);

/* A sparse matrix from Matrix Market or PETSc binary, told apart by the
 * first bytes (after gunzip). */
kr_status kr_read_matrix_from(kr_ctx *ctx, kr_source *S, unsigned flags,
                              kr_csr *A);
/* A dense matrix (column-major) from Matrix Market, or an n x 1 one from a
 * PETSc binary vector. */
kr_status kr_read_vector_from(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                              int32_t *ncols, double **data);
/* kr_read_dense_mtx_from with the line of the size line (NULL: not
 * wanted). */
kr_status kr_read_dense_mtx_at(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                               int32_t *ncols, double **data, long *size_line);

kr_status kr_read_mtx_from(kr_ctx *ctx, kr_source *S, unsigned flags,
                           kr_csr *A);
kr_status kr_read_dense_mtx_from(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                                 int32_t *ncols, double **data);
kr_status kr_read_petsc_mat_from(kr_ctx *ctx, kr_source *S, unsigned flags,
                                 kr_csr *A);
kr_status kr_read_petsc_vec_from(kr_ctx *ctx, kr_source *S, int32_t *n,
                                 double **data);

/* Block sizes for block-Jacobi (`--blocks FILE`): a Matrix Market column
 * or row of integers in 1..max, into *sizes (free()) and *count. */
kr_status kr_read_block_sizes_from(kr_ctx *ctx, kr_source *S, int32_t max,
                                   int32_t **sizes, int32_t *count);

#endif
