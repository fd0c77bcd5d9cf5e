/* Readers that tell the format from the first bytes, so that an input is
 * opened and read once (pipes, standard input), and the block-sizes file
 * of block-Jacobi. */
#include "io/read.h"

#include "core/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    KR_PETSC_MAT_CLASSID = 1211216, /* MAT_FILE_CLASSID in petscmat.h */
    KR_PETSC_VEC_CLASSID = 1211214  /* VEC_FILE_CLASSID in petscvec.h */
};

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

kr_status kr_input_kind_of(kr_ctx *ctx, kr_source *S, kr_input_kind *kind)
{
    unsigned char h[4];
    size_t got = 0;
    *kind = KR_INPUT_TEXT;
    KR_TRY(kr_source_peek(ctx, S, h, 4, &got));
    if (got < 4) return KR_OK;
    unsigned char rev[4] = {h[3], h[2], h[1], h[0]};
    uint32_t id = be32(h), swapped = be32(rev);
    if (id == KR_PETSC_MAT_CLASSID)
        *kind = KR_INPUT_PETSC_MAT;
    else if (id == KR_PETSC_VEC_CLASSID)
        *kind = KR_INPUT_PETSC_VEC;
    else if (swapped == KR_PETSC_MAT_CLASSID || swapped == KR_PETSC_VEC_CLASSID)
        *kind = KR_INPUT_PETSC_SWAPPED;
    return KR_OK;
}

kr_status kr_read_matrix_from(kr_ctx *ctx, kr_source *S, unsigned flags,
                              kr_csr *A)
{
    memset(A, 0, sizeof *A);
    kr_input_kind kind;
    KR_TRY(kr_input_kind_of(ctx, S, &kind));
    /* Any PETSc class id goes to the PETSc reader, which names a vector
     * or a little-endian file as such. */
    return kind == KR_INPUT_TEXT ? kr_read_mtx_from(ctx, S, flags, A)
                                 : kr_read_petsc_mat_from(ctx, S, flags, A);
}

kr_status kr_read_matrix_path(kr_ctx *ctx, const char *path, unsigned flags,
                              kr_csr *A)
{
    if (!path || !A)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_matrix: NULL argument");
    memset(A, 0, sizeof *A);
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = kr_read_matrix_from(ctx, &S, flags, A);
    kr_source_close(&S);
    return st;
}

static kr_status read_vector_at(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                                int32_t *ncols, double **data, long *size_line)
{
    *data = NULL;
    *nrows = *ncols = 0;
    if (size_line) *size_line = 0;
    kr_input_kind kind;
    KR_TRY(kr_input_kind_of(ctx, S, &kind));
    if (kind == KR_INPUT_TEXT)
        return kr_read_dense_mtx_at(ctx, S, nrows, ncols, data, size_line);
    KR_TRY(kr_read_petsc_vec_from(ctx, S, nrows, data));
    *ncols = 1;
    return KR_OK;
}

kr_status kr_read_vector_from(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                              int32_t *ncols, double **data)
{
    return read_vector_at(ctx, S, nrows, ncols, data, NULL);
}

kr_status kr_read_vector_path_at(kr_ctx *ctx, const char *path, int32_t *nrows,
                                 int32_t *ncols, double **data, long *size_line)
{
    if (!path || !nrows || !ncols || !data)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_vector: NULL argument");
    *data = NULL;
    *nrows = *ncols = 0;
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = read_vector_at(ctx, &S, nrows, ncols, data, size_line);
    kr_source_close(&S);
    return st;
}

kr_status kr_read_vector_path(kr_ctx *ctx, const char *path, int32_t *nrows,
                              int32_t *ncols, double **data)
{
    return kr_read_vector_path_at(ctx, path, nrows, ncols, data, NULL);
}

/* Every size an integer in 1..max, the sizes one row or one column. */
static kr_status check_block_sizes(kr_ctx *ctx, const char *path, int32_t rows,
                                   int32_t cols, const double *v, int32_t max,
                                   int32_t *sizes)
{
    if (rows != 1 && cols != 1)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: block sizes must be one column or one row, not "
                       "%d x %d",
                       path, rows, cols);
    int64_t count = (int64_t)rows * cols;
    for (int64_t i = 0; i < count; i++) {
        if (!(v[i] == floor(v[i]) && v[i] >= 1 && v[i] <= max))
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "%s: block size %lld is %g, not an integer in "
                           "1..%d",
                           path, (long long)i + 1, v[i], max);
        sizes[i] = (int32_t)v[i];
    }
    return KR_OK;
}

kr_status kr_read_block_sizes_from(kr_ctx *ctx, kr_source *S, int32_t max,
                                   int32_t **sizes, int32_t *count)
{
    *sizes = NULL;
    *count = 0;
    int32_t rows = 0, cols = 0;
    double *v = NULL;
    KR_TRY(kr_read_dense_mtx_from(ctx, S, &rows, &cols, &v));
    size_t n = (size_t)rows * (size_t)cols;
    int32_t *out = malloc((n + 1) * sizeof *out);
    kr_status st =
        out ? check_block_sizes(ctx, S->path, rows, cols, v, max, out)
            : kr_fail(ctx, KR_ERR_NOMEM,
                      "%s: out of memory for %zu block "
                      "sizes",
                      S->path, n);
    free(v);
    if (st != KR_OK) {
        free(out);
        return st;
    }
    *sizes = out;
    *count = (int32_t)n;
    return KR_OK;
}

kr_status kr_read_block_sizes_path(kr_ctx *ctx, const char *path, int32_t max,
                                   int32_t **sizes, int32_t *count)
{
    if (!path || !sizes || !count)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_block_sizes: NULL argument");
    *sizes = NULL;
    *count = 0;
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = kr_read_block_sizes_from(ctx, &S, max, sizes, count);
    kr_source_close(&S);
    return st;
}
