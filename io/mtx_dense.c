/* Dense matrices (n x k, column-major) from and to Matrix Market files:
 * read from "array" or "coordinate" files (missing entries are zero),
 * written as "array real general". */
#include "core/error.h"
#include "io/mtx.h"
#include "io/outfile.h"
#include "io/read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scatters the entries (and mirrors) into D; coordinate duplicates add. */
static kr_status scatter(kr_ctx *ctx, const char *path, const kr_mtx_header *h,
                         const kr_mtx_entries *E, double *D)
{
    size_t ld = (size_t)h->nrows;
    int mirror = h->symmetry != KR_MTX_GENERAL;
    double sign = h->symmetry == KR_MTX_SKEW ? -1.0 : 1.0;
    for (int64_t k = 0; k < E->n; k++) {
        size_t i = (size_t)E->row[k], j = (size_t)E->col[k];
        double *d = &D[i + j * ld];
        /* Assigned, not added, for array files: keeps the sign of -0.0. */
        *d = h->array ? E->val[k] : *d + E->val[k];
        if (!isfinite(*d))
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "%s: duplicate entries of row %zu, column %zu "
                           "sum to a value beyond double range",
                           path, i + 1, j + 1);
        if (mirror && i != j) D[j + i * ld] = sign * *d;
    }
    return KR_OK;
}

kr_status kr_read_dense_mtx_from(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                                 int32_t *ncols, double **data)
{
    return kr_read_dense_mtx_at(ctx, S, nrows, ncols, data, NULL);
}

kr_status kr_read_dense_mtx_at(kr_ctx *ctx, kr_source *S, int32_t *nrows,
                               int32_t *ncols, double **data, long *size_line)
{
    *data = NULL;
    *nrows = *ncols = 0;
    kr_mtx_header h;
    kr_mtx_entries E;
    KR_TRY(kr_mtx_load(ctx, S, KR_MTX_DENSE, &h, &E));
    size_t size = (size_t)h.nrows * (size_t)h.ncols;
    double *D = calloc(size > 0 ? size : 1, sizeof *D);
    kr_status st = KR_OK;
    if (!D)
        st = kr_fail(ctx, KR_ERR_NOMEM,
                     "%s: out of memory for a dense %d x %d matrix", S->path,
                     h.nrows, h.ncols);
    else
        st = scatter(ctx, S->path, &h, &E, D);
    kr_mtx_entries_free(&E);
    if (st != KR_OK) {
        free(D);
        return st;
    }
    *data = D;
    *nrows = h.nrows;
    *ncols = h.ncols;
    if (size_line) *size_line = h.size_line;
    return KR_OK;
}

kr_status kr_read_dense_mtx(kr_ctx *ctx, const char *path, int32_t *nrows,
                            int32_t *ncols, double **data)
{
    if (!nrows || !ncols || !data || !path)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_dense_mtx: NULL argument");
    *data = NULL;
    *nrows = *ncols = 0;
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = kr_read_dense_mtx_from(ctx, &S, nrows, ncols, data);
    kr_source_close(&S);
    return st;
}

/* Non-finite values would make a file that no reader accepts. */
static kr_status check_dense(kr_ctx *ctx, const char *path, int32_t nrows,
                             int32_t ncols, const double *data)
{
    if (nrows < 0 || ncols < 0 || (!data && nrows > 0 && ncols > 0))
        return kr_fail(ctx, KR_ERR_ARG,
                       "%s: not written: bad dense matrix (%d x %d, data "
                       "%s)",
                       path, nrows, ncols, data ? "given" : "NULL");
    size_t size = (size_t)nrows * (size_t)ncols;
    for (size_t k = 0; k < size; k++)
        if (!isfinite(data[k]))
            return kr_fail(ctx, KR_ERR_ARG,
                           "%s: not written: row %zu, column %zu is not "
                           "finite",
                           path, k % (size_t)nrows + 1, k / (size_t)nrows + 1);
    return KR_OK;
}

kr_status kr_write_dense_mtx(kr_ctx *ctx, const char *path, int32_t nrows,
                             int32_t ncols, const double *data)
{
    if (!path) return kr_fail(ctx, KR_ERR_ARG, "kr_write_dense_mtx: NULL path");
    KR_TRY(check_dense(ctx, path, nrows, ncols, data));
    kr_outfile o;
    KR_TRY(kr_outfile_open(
        ctx, path, kr_outfile_gzip_name(path) ? KR_OUT_GZIP : KR_OUT_PLAIN,
        &o));
    if (kr_outfile_printf(&o,
                          "%%%%MatrixMarket matrix array real general\n%d %d\n",
                          nrows, ncols) < 0)
        return kr_outfile_fail(ctx, &o);
    size_t size = (size_t)nrows * (size_t)ncols;
    for (size_t k = 0; k < size; k++)
        if (kr_outfile_printf(&o, "%.17g\n", data[k]) < 0)
            return kr_outfile_fail(ctx, &o);
    return kr_outfile_commit(ctx, &o);
}
