/* kr_write_mtx: host CSR to "coordinate real general", values printed with
 * 17 significant digits so that reading them back gives the same bits. */
#include "core/error.h"
#include "io/outfile.h"

kr_status kr_write_mtx(kr_ctx *ctx, const char *path, const kr_csr *A)
{
    if (!path) return kr_fail(ctx, KR_ERR_ARG, "kr_write_mtx: NULL path");
    kr_status st = kr_csr_check(ctx, A);
    if (st != KR_OK) {
        kr_error_prefix(ctx, "%s: not written", path);
        return st;
    }
    kr_outfile o;
    KR_TRY(kr_outfile_open(
        ctx, path, kr_outfile_gzip_name(path) ? KR_OUT_GZIP : KR_OUT_PLAIN,
        &o));
    if (kr_outfile_printf(&o,
                          "%%%%MatrixMarket matrix coordinate real general\n"
                          "%d %d %d\n",
                          A->nrows, A->ncols, A->nnz) < 0)
        return kr_outfile_fail(ctx, &o);
    for (int32_t i = 0; i < A->nrows; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (kr_outfile_printf(&o, "%d %d %.17g\n", i + 1, A->colind[k] + 1,
                                  A->val[k]) < 0)
                return kr_outfile_fail(ctx, &o);
    return kr_outfile_commit(ctx, &o);
}
