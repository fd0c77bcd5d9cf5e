/* The two halves of kr_csr_check (core/csr.c), for a device build that
 * checks the indices on the GPU (spmv/matrix.c), and a row count the
 * persistent ops' rule needs: internal. */
#ifndef KR_CORE_CSR_H
#define KR_CORE_CSR_H

#include "core/ctx.h"

/* kr_csr_check's checks that read no row: sizes, arrays, rowptr[0] and
 * rowptr[nrows]. */
kr_status kr_csr_check_head(kr_ctx *ctx, const kr_csr *A);
/* Row i's checks, with kr_csr_check's message (rows numbered from 1). */
kr_status kr_csr_check_row(kr_ctx *ctx, const kr_csr *A, int32_t i);
/* The rows of more than len entries. */
int32_t kr_csr_rows_longer(const kr_csr *A, double len);

#endif
