/* Benchmark support in the library: the copy bandwidth that every SpMV
 * figure is compared with, measured on the context's device. */
#include "core/bench.h"

#include "core/error.h"
#include "core/vec.h"

#include <stdlib.h>

typedef struct copy_args {
    kr_ctx *ctx;
    void *dst;
    const void *src;
    size_t bytes;
} copy_args;

static kr_status copy_once(void *arg)
{
    copy_args *a = arg;
    return a->ctx->ops->copy(a->ctx, a->dst, a->src, a->bytes);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void kr_median_min(double *t, int n, double *median, double *min)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    *min = t[0];
}

kr_status kr_ctx_copy_bandwidth(kr_ctx *ctx, size_t bytes, int reps,
                                double *bytes_per_s)
{
    if (!ctx || bytes < 8 || reps < 1 || !bytes_per_s)
        return kr_fail(ctx, KR_ERR_ARG, "kr_ctx_copy_bandwidth: bad arguments");
    double *src = NULL, *dst = NULL, *t = malloc((size_t)reps * sizeof *t);
    kr_status st = t ? KR_OK : kr_fail(ctx, KR_ERR_NOMEM, "out of memory");
    if (st == KR_OK) st = kr_dev_zeros(ctx, bytes / 8, &src);
    if (st == KR_OK) st = kr_dev_zeros(ctx, bytes / 8, &dst);
    copy_args a = {ctx, dst, src, bytes / 8 * 8};
    if (st == KR_OK) st = copy_once(&a); /* warm-up */
    if (st == KR_OK) st = ctx->ops->time_runs(ctx, copy_once, &a, reps, t);
    if (st == KR_OK) {
        double median, min;
        kr_median_min(t, reps, &median, &min);
        *bytes_per_s = 2.0 * (double)a.bytes / median;
    }
    kr_dev_free(ctx, src);
    kr_dev_free(ctx, dst);
    free(t);
    return st;
}
