/* The bench tool's timings (tools/bench/timing.h): the backend's
 * time_runs around one operation, reduced to median and minimum. */
#include "tools/bench/timing.h"

#include "core/error.h"
#include "core/median.h"
#include "core/vec.h"
#include "spmv/format.h"

#include <stdlib.h>

/* time_runs of op(arg), reps times, then the median and minimum. */
static kr_status time_median(kr_ctx *ctx, kr_status (*op)(void *), void *arg,
                             int reps, double *median_s, double *min_s)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = ctx->ops->time_runs(ctx, op, arg, reps, t);
    if (st == KR_OK) kr_median_min(t, reps, median_s, min_s);
    free(t);
    return st;
}

typedef struct apply_args {
    kr_matrix *M;
    int32_t k; /* 0: one SpMV */
    const double *x;
    double *y;
} apply_args;

static kr_status apply_once(void *arg)
{
    apply_args *a = arg;
    if (a->k > 0)
        return a->M->ops->apply_multi(a->M->ctx, a->M->impl, a->k, a->x, a->y);
    return a->M->ops->apply(a->M->ctx, a->M->impl, 1.0, a->x, 0.0, a->y);
}

/* warmup untimed runs, then reps timed by the backend */
static kr_status time_applies(apply_args *a, int warmup, int reps,
                              double *median_s, double *min_s)
{
    kr_status st = KR_OK;
    for (int i = 0; i < warmup && st == KR_OK; i++)
        st = apply_once(a);
    if (st == KR_OK)
        st = time_median(a->M->ctx, apply_once, a, reps, median_s, min_s);
    return st;
}

kr_status bench_time_apply(kr_matrix *M, const kr_vec *x, kr_vec *y, int warmup,
                           int reps, double *median_s, double *min_s)
{
    if (!M || !x || !y || warmup < 0 || reps < 1 || !median_s || !min_s)
        return kr_fail(M ? M->ctx : NULL, KR_ERR_ARG,
                       "bench_time_apply: bad arguments");
    if (x->n != M->ncols || y->n != M->nrows)
        return kr_fail(M->ctx, KR_ERR_ARG,
                       "matrix is %d x %d but x has %d "
                       "and y %d entries",
                       M->nrows, M->ncols, x->n, y->n);
    apply_args a = {M, 0, x->data, y->data};
    return time_applies(&a, warmup, reps, median_s, min_s);
}

kr_status bench_time_apply_multi(kr_matrix *M, int32_t k, const kr_vec *X,
                                 kr_vec *Y, int warmup, int reps,
                                 double *median_s, double *min_s)
{
    if (!M || warmup < 0 || reps < 1 || !median_s || !min_s)
        return kr_fail(M ? M->ctx : NULL, KR_ERR_ARG,
                       "bench_time_apply_multi: bad arguments");
    /* one checked apply: sizes, contexts, a kernel for the format */
    KR_TRY(kr_matrix_apply_multi(M, k, X, Y));
    apply_args a = {M, k, X->data, Y->data};
    return time_applies(&a, warmup, reps, median_s, min_s);
}

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

kr_status bench_time_copy(kr_ctx *ctx, size_t bytes, int reps,
                          double *bytes_per_s)
{
    if (!ctx || bytes < 8 || reps < 1 || !bytes_per_s)
        return kr_fail(ctx, KR_ERR_ARG, "bench_time_copy: bad arguments");
    double *src = NULL, *dst = NULL, median, min;
    kr_status st = kr_dev_zeros(ctx, bytes / 8, &src);
    if (st == KR_OK) st = kr_dev_zeros(ctx, bytes / 8, &dst);
    copy_args a = {ctx, dst, src, bytes / 8 * 8};
    if (st == KR_OK) st = copy_once(&a); /* warm-up */
    if (st == KR_OK) st = time_median(ctx, copy_once, &a, reps, &median, &min);
    if (st == KR_OK) *bytes_per_s = 2.0 * (double)a.bytes / median;
    kr_dev_free(ctx, src);
    kr_dev_free(ctx, dst);
    return st;
}

typedef struct floor_args {
    kr_ctx *ctx;
    double *element; /* one double on the device */
} floor_args;

/* One launch and one download, checked: the value read must be the one
 * just filled, so the download waited for the kernel. */
static kr_status launch_and_download(floor_args *a, double value)
{
    double read = 0.0;
    KR_TRY(a->ctx->ops->fill(a->ctx, 1, value, a->element));
    KR_TRY(a->ctx->ops->download(a->ctx, &read, a->element, sizeof read));
    if (read != value)
        return kr_fail(a->ctx, KR_ERR_DEVICE,
                       "setup floor: downloaded %g after filling %g", read,
                       value);
    return KR_OK;
}

/* Timed on the host: the backend's time_runs would time the launch
 * alone with events, not the wait a setup's download makes. */
static kr_status time_floor_runs(floor_args *a, int warmup, int reps, double *t)
{
    for (int i = -warmup; i < reps; i++) {
        double t0 = kr_wtime();
        KR_TRY(launch_and_download(a, (double)(i + warmup + 1)));
        if (i >= 0) t[i] = kr_wtime() - t0;
    }
    return KR_OK;
}

kr_status bench_time_setup_floor(kr_ctx *ctx, int warmup, int reps,
                                 double *median_s)
{
    if (!ctx || warmup < 0 || reps < 1 || !median_s)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bench_time_setup_floor: bad arguments");
    double *t = malloc((size_t)reps * sizeof *t), min;
    if (!t) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    floor_args a = {ctx, NULL};
    kr_status st = kr_dev_zeros(ctx, 1, &a.element);
    if (st == KR_OK) st = time_floor_runs(&a, warmup, reps, t);
    if (st == KR_OK) kr_median_min(t, reps, median_s, &min);
    kr_dev_free(ctx, a.element);
    free(t);
    return st;
}
