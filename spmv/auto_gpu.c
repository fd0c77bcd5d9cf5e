/* kr_format_auto_gpu: the GPU rules of "auto" (spmv/auto.c) on a host CSR,
 * for reports made where there is no GPU (krylov analyze). */
#include "core/error.h"
#include "spmv/auto.h"

#include <stdio.h>

kr_status kr_format_auto_gpu(kr_ctx *ctx, const kr_csr *A, const char **format,
                             char *why, size_t len)
{
    if (format) *format = "csr";
    if (why && len) why[0] = '\0';
    if (!A || !format || (!why && len))
        return kr_fail(ctx, KR_ERR_ARG, "kr_format_auto_gpu: %s is NULL",
                       !A        ? "A"
                       : !format ? "format"
                                 : "why");
    kr_auto_features f;
    KR_TRY(kr_auto_features_of(ctx, A, &f));
    kr_auto_choice c;
    kr_auto_rule_gpu(&f, &c);
    *format = c.format;
    if (len) snprintf(why, len, "%s", c.why);
    return KR_OK;
}
