/* bench solve --nrhs k (drivers/bench_multi.h). Setup (matrix and
 * preconditioner) is shared and not timed: the comparison is of the
 * solves, k kr_solve calls against one kr_solve_multi. */
#include "tools/bench/bench_multi.h"

#include "core/error.h"
#include "drivers/json.h"
#include "drivers/solve.h"
#include "tools/bench/bench_common.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The k columns, host: B row-major, and column j of it in b */
typedef struct multi_data {
    int32_t n;
    int k;
    double *B, *col;
    kr_vec *Bv, *Xv, *b, *x;
    kr_result *res, one;
    double *times[2]; /* per rep: the k singles, the multi */
} multi_data;

static kr_status data_make(kr_ctx *ctx, const kr_csr *A, int k, int reps,
                           multi_data *d)
{
    memset(d, 0, sizeof *d);
    d->n = A->nrows;
    d->k = k;
    size_t n = (size_t)A->nrows, nk = n * (size_t)k;
    d->B = malloc((nk + 1) * sizeof *d->B);
    d->col = malloc((2 * n + 1) * sizeof *d->col);
    double *x = malloc((nk + 1) * sizeof *x);
    d->res = calloc((size_t)k, sizeof *d->res);
    d->times[0] = malloc((size_t)reps * sizeof(double));
    d->times[1] = malloc((size_t)reps * sizeof(double));
    if (!d->B || !d->col || !x || !d->res || !d->times[0] || !d->times[1]) {
        free(x);
        return KR_ERR_NOMEM;
    }
    cli_multi_rhs(A, k, 1, d->B, x, d->col);
    free(x);
    kr_status st = kr_vec_create(ctx, (int32_t)nk, &d->Bv);
    if (st == KR_OK) st = kr_vec_create(ctx, (int32_t)nk, &d->Xv);
    if (st == KR_OK) st = kr_vec_create(ctx, d->n, &d->b);
    if (st == KR_OK) st = kr_vec_create(ctx, d->n, &d->x);
    if (st == KR_OK) st = kr_vec_upload(d->Bv, d->B);
    return st;
}

static void data_free(multi_data *d)
{
    kr_vec_destroy(d->Bv);
    kr_vec_destroy(d->Xv);
    kr_vec_destroy(d->b);
    kr_vec_destroy(d->x);
    free(d->B);
    free(d->col);
    free(d->res);
    free(d->times[0]);
    free(d->times[1]);
}

/* The k single solves; their seconds summed, results checked against the
 * multi solve's of rep 0 (rep >= 0) */
static kr_status singles(kr_ctx *ctx, kr_matrix *M, kr_precond *P,
                         const kr_solve_options *opt, multi_data *d, int rep,
                         bench_multi *out)
{
    double total = 0.0;
    for (int j = 0; j < d->k; j++) {
        for (int32_t i = 0; i < d->n; i++)
            d->col[i] = d->B[(size_t)i * (size_t)d->k + (size_t)j];
        KR_TRY(kr_vec_upload(d->b, d->col));
        KR_TRY(kr_vec_fill(d->x, 0.0));
        KR_TRY(kr_solve(ctx, M, P, d->b, d->x, opt, &d->one));
        total += d->one.solve_seconds;
        if (rep == 0) {
            out->single_its += d->one.iterations;
            out->single_conv += d->one.reason > 0;
            out->its_equal &= d->one.iterations == d->res[j].iterations;
        }
    }
    if (rep >= 0) d->times[0][rep] = total;
    return KR_OK;
}

static kr_status multi(kr_ctx *ctx, kr_matrix *M, kr_precond *P,
                       const kr_solve_options *opt, multi_data *d, int rep,
                       bench_multi *out)
{
    KR_TRY(kr_vec_fill(d->Xv, 0.0));
    KR_TRY(kr_solve_multi(ctx, M, P, d->k, d->Bv, d->Xv, opt, d->res));
    if (rep >= 0) d->times[1][rep] = d->res[0].solve_seconds;
    if (rep == 0)
        for (int j = 0; j < d->k; j++) {
            out->multi_its += d->res[j].iterations;
            out->multi_conv += d->res[j].reason > 0;
        }
    return KR_OK;
}

kr_status bench_multi_run(kr_ctx *ctx, const kr_csr *A, kr_matrix *M,
                          kr_precond *P, const kr_solve_options *opt, int k,
                          int reps, int warmup, int warmup_maxit,
                          bench_multi *out)
{
    memset(out, 0, sizeof *out);
    out->k = k;
    out->its_equal = 1;
    multi_data d;
    kr_status st = data_make(ctx, A, k, reps, &d);
    kr_solve_options o = *opt, w = *opt;
    if (w.maxit > warmup_maxit) w.maxit = warmup_maxit;
    for (int rep = -warmup; st == KR_OK && rep < reps; rep++) {
        const kr_solve_options *use = rep < 0 ? &w : &o;
        st = multi(ctx, M, P, use, &d, rep, out); /* rep 0 first: the singles
                                                     compare with it */
        if (st == KR_OK) st = singles(ctx, M, P, use, &d, rep, out);
    }
    if (st == KR_OK) {
        out->single_s = bench_median(d.times[0], reps);
        out->multi_s = bench_median(d.times[1], reps);
        out->ok = 1;
    }
    data_free(&d);
    return st;
}

void bench_multi_floors(bench_multi *b, double iter_bytes, double spmvs,
                        int32_t n, int32_t nnz, double copy_bps)
{
    double a_bytes = spmvs * (12.0 * nnz + 4.0 * ((double)n + 1));
    b->single_floor_s = iter_bytes / copy_bps;
    b->multi_floor_s = (iter_bytes - a_bytes + a_bytes / b->k) / copy_bps;
}

void bench_multi_md_header(FILE *f)
{
    fprintf(f, "\nSeveral right-hand sides (--nrhs): b_j = A x_j, x_j "
               "uniform in [-1, 1) (seed 1), x0 = 0; the same matrix and "
               "preconditioner for both; times are medians of the reps, "
               "solves only (no setup); us/col-it = time / column "
               "iterations summed; floors: the bytes per column-iteration "
               "over the copy bandwidth, A read once per iteration for all "
               "k columns in the multi solve and every vector pass per "
               "column; at the multi floor = the singles' time over the "
               "multi solve's floor, the most the multi solve can gain "
               "by bytes.\n\n"
               "| matrix | k | its (k singles) | its (multi) | each column "
               "equal | converged (singles / multi) | k singles ms | multi "
               "ms | speedup | singles us/col-it | multi us/col-it | floor "
               "us/col-it (singles / multi) | speedup at the multi floor "
               "|\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static double per_col_it(double s, long long its)
{
    return its > 0 ? s / (double)its * 1e6 : NAN;
}

void bench_multi_md_row(FILE *f, const char *name, const bench_multi *b)
{
    if (!b->ok) {
        fprintf(f, "| %s | %d | - | - | - | - | - | - | - | - | - | - | - |\n",
                name, b->k);
        return;
    }
    fprintf(f, "| %s | %d | %lld | %lld | %s | %d / %d | %.3f | %.3f | ", name,
            b->k, b->single_its, b->multi_its, b->its_equal ? "yes" : "no",
            b->single_conv, b->multi_conv, b->single_s * 1e3, b->multi_s * 1e3);
    bench_md_num(f, "%.2f", b->single_s / b->multi_s);
    fputs(" | ", f);
    bench_md_num(f, "%.3f", per_col_it(b->single_s, b->single_its));
    fputs(" | ", f);
    bench_md_num(f, "%.3f", per_col_it(b->multi_s, b->multi_its));
    fputs(" | ", f);
    bench_md_num(f, "%.3f", b->single_floor_s * 1e6);
    fputs(" / ", f);
    bench_md_num(f, "%.3f", b->multi_floor_s * 1e6);
    fputs(" | ", f);
    bench_md_num(f, "%.2f",
                 per_col_it(b->single_s, b->single_its) * 1e-6 /
                     b->multi_floor_s);
    fputs(" |\n", f);
}

void bench_multi_json(cli_json *j, const bench_multi *b)
{
    cli_json_open(j, "multi_rhs");
    cli_json_int(j, "k", b->k);
    cli_json_bool(j, "ok", b->ok);
    cli_json_int(j, "single_iterations_total", b->single_its);
    cli_json_int(j, "multi_iterations_total", b->multi_its);
    cli_json_bool(j, "each_column_equal_iterations", b->its_equal);
    cli_json_int(j, "single_columns_converged", b->single_conv);
    cli_json_int(j, "multi_columns_converged", b->multi_conv);
    cli_json_num(j, "single_solves_s", b->single_s);
    cli_json_num(j, "multi_solve_s", b->multi_s);
    cli_json_num(j, "speedup", b->ok ? b->single_s / b->multi_s : NAN);
    cli_json_num(j, "single_s_per_column_iteration",
                 per_col_it(b->single_s, b->single_its) * 1e-6);
    cli_json_num(j, "multi_s_per_column_iteration",
                 per_col_it(b->multi_s, b->multi_its) * 1e-6);
    cli_json_num(j, "single_floor_s_per_column_iteration", b->single_floor_s);
    cli_json_num(j, "multi_floor_s_per_column_iteration", b->multi_floor_s);
    cli_json_close(j);
}
