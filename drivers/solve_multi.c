/* krylov solve with several right-hand sides: -b B.mtx with k > 1 columns,
 * or --nrhs k generated ones (b_j = A x_j for seeded random x_j, so each
 * column's forward error is known). The k systems are solved together by
 * kr_solve_multi; the report has one line (one JSON object of "columns")
 * per column; -o writes the n x k solution. */
#include "graph_cli.h"
#include "interrupt.h"
#include "json.h"
#include "krylov.h"
#include "options.h"
#include "report.h"
#include "solve.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *new_block(const solve_run *r)
{
    size_t count = (size_t)r->A.nrows * (size_t)r->k;
    double *p = calloc(count + 1, sizeof *p);
    if (!p) cli_error("out of host memory for %zu values", count);
    return p;
}

/* column-major (files) to row-major (the library's blocks), or back */
static void transpose(int32_t n, int k, const double *from, double *to,
                      int to_rows)
{
    for (int32_t i = 0; i < n; i++)
        for (int j = 0; j < k; j++) {
            size_t rm = (size_t)i * (size_t)k + (size_t)j;
            size_t cm = (size_t)j * (size_t)n + (size_t)i;
            if (to_rows)
                to[rm] = from[cm];
            else
                to[cm] = from[rm];
        }
}

int cli_multi_take(solve_run *r, double *cols, int k)
{
    r->k = k;
    r->B = new_block(r);
    if (r->B) transpose(r->A.nrows, k, cols, r->B, 1);
    free(cols);
    return r->B ? 0 : CLI_EXIT_DEVICE;
}

/* splitmix64: the solutions x_j, the same for a seed on every machine */
static double next_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

void cli_multi_rhs(const kr_csr *A, int k, uint64_t seed, double *B,
                   double *Xtrue, double *col)
{
    int32_t n = A->nrows;
    double *x = col + n; /* col holds 2n doubles: x_j, then b_j */
    for (int j = 0; j < k; j++) {
        for (int32_t i = 0; i < n; i++)
            x[i] = Xtrue[(size_t)i * k + j] = next_uniform(&seed);
        kr_csr_matvec(A, x, col);
        for (int32_t i = 0; i < n; i++)
            B[(size_t)i * k + j] = col[i];
    }
}

int cli_multi_generate(solve_run *r)
{
    int32_t n = r->A.nrows;
    r->k = r->o->nrhs;
    r->B = new_block(r);
    r->Xtrue = new_block(r);
    double *col = malloc((2 * (size_t)n + 1) * sizeof *col);
    int ok = r->B && r->Xtrue && col;
    if (ok)
        cli_multi_rhs(&r->A, r->k, (uint64_t)r->o->rhs_seed, r->B, r->Xtrue,
                      col);
    else if (r->B && r->Xtrue)
        cli_error("out of host memory for the right-hand sides");
    free(col);
    return ok ? 0 : CLI_EXIT_DEVICE;
}

int cli_multi_x0(solve_run *r)
{
    r->X = new_block(r);
    if (!r->X) return CLI_EXIT_DEVICE;
    if (!r->o->x0) return 0;
    int32_t rows = 0, cols = 0, n = r->A.nrows;
    long line = 0;
    double *v = NULL;
    kr_status st =
        kr_read_vector_path_at(r->ctx, r->o->x0, &rows, &cols, &v, &line);
    if (st != KR_OK) return cli_lib_error(r->ctx, st, r->o->x0);
    if (rows == n && cols == r->k) {
        transpose(n, r->k, v, r->X, 1);
        free(v);
        return 0;
    }
    free(v);
    char where[32] = "";
    if (line > 0) snprintf(where, sizeof where, ":%ld", line);
    cli_error("%s%s: the initial guess (--x0) is %d x %d, but with %d "
              "right-hand sides and the matrix %d x %d it must be %d x %d",
              r->o->x0, where, (int)rows, (int)cols, r->k, (int)n, (int)n,
              (int)n, r->k);
    return CLI_EXIT_INPUT;
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

int cli_multi_options(const solve_run *r)
{
    const solve_opts *o = r->o;
    const char *one = o->history            ? "--history"
                      : o->monitor          ? "--monitor"
                      : o->converged_reason ? "--converged-reason"
                      : o->view             ? "--view"
                                            : NULL;
    if (one)
        return cli_usage_error("solve",
                               "%s reports one solve; with %d right-hand "
                               "sides the report lists each column",
                               one, r->k);
    if (o->out && ends_with(o->out, ".bin"))
        return cli_usage_error("solve",
                               "-o %s: a PETSc binary vector holds one "
                               "column; write the %d columns to a Matrix "
                               "Market file (.mtx or .mtx.gz)",
                               o->out, r->k);
    return 0;
}

/* ||x_j - x_j*||_inf and ||x_j - x_j*||_2 / ||x_j*||_2 */
static void forward_errors(const solve_run *r, int j, double *inf, double *rel)
{
    double mx = 0.0, d2 = 0.0, t2 = 0.0;
    for (int32_t i = 0; i < r->A.nrows; i++) {
        size_t e = (size_t)i * (size_t)r->k + (size_t)j;
        double d = fabs(r->X[e] - r->Xtrue[e]);
        if (d > mx || isnan(d)) mx = d;
        d2 += d * d;
        t2 += r->Xtrue[e] * r->Xtrue[e];
    }
    *inf = mx;
    *rel = t2 > 0 ? sqrt(d2 / t2) : NAN;
}

static double ratio(double a, double b) { return b != 0 ? a / b : NAN; }

/* The column loop's totals: converged columns, iterations. */
static void totals(const solve_run *r, int *conv, long long *its, int *most)
{
    *conv = 0;
    *its = 0;
    *most = 0;
    for (int j = 0; j < r->k; j++) {
        *conv += r->mres[j].reason > 0;
        *its += r->mres[j].iterations;
        if (r->mres[j].iterations > *most) *most = r->mres[j].iterations;
    }
}

static void text_column(FILE *f, const solve_run *r, int j)
{
    const kr_result *c = &r->mres[j];
    fprintf(f, "%6d %10d  %-22s %12.4e %12.4e", j + 1, c->iterations,
            kr_reason_name(c->reason), ratio(c->rnorm, c->bnorm),
            ratio(c->true_rnorm, c->bnorm));
    if (r->Xtrue) {
        double inf, rel;
        forward_errors(r, j, &inf, &rel);
        fprintf(f, " %12.4e %12.4e", inf, rel);
    }
    fputc('\n', f);
}

static void text_report(FILE *f, const solve_run *r, const cli_report *rep)
{
    int conv, most;
    long long its;
    totals(r, &conv, &its, &most);
    cli_report_problem_text(f, rep);
    if (r->Xtrue)
        fprintf(f,
                "%-24s %d generated: b_j = A x_j, x_j uniform in [-1, 1), "
                "seed %d\n",
                "right-hand sides:", r->k, r->o->rhs_seed);
    else
        fprintf(f, "%-24s %d (the columns of %s)\n", "right-hand sides:", r->k,
                r->o->rhs);
    fprintf(f, "%-24s %d of %d\n", "columns converged:", conv, r->k);
    fprintf(f, "%-24s %.6f s\n", "setup time:", r->setup_seconds);
    double t = r->mres[0].solve_seconds;
    fprintf(f, "%-24s %.6f s (all columns together)\n", "solve time:", t);
    if (its > 0)
        fprintf(f, "%-24s %.3e s\n", "time per column-iter.:", t / its);
    fprintf(f, "%6s %10s  %-22s %12s %12s", "column", "iterations", "reason",
            "recursive", "true");
    if (r->Xtrue) fprintf(f, " %12s %12s", "fwd err inf", "fwd err rel2");
    fprintf(f, "\n%6s %10s  %-22s %12s %12s\n", "", "", "", "rel. resid.",
            "rel. resid.");
    for (int j = 0; j < r->k; j++)
        text_column(f, r, j);
}

static void json_column(FILE *f, const solve_run *r, int j)
{
    const kr_result *c = &r->mres[j];
    cli_json o;
    cli_json_begin(&o, f);
    cli_json_int(&o, "column", j + 1);
    cli_json_int(&o, "iterations", c->iterations);
    cli_json_str(&o, "reason", kr_reason_name(c->reason));
    cli_json_str(&o, "reason_text", kr_reason_text(c->reason));
    cli_json_bool(&o, "converged", c->reason > 0);
    cli_json_int(&o, "true_residual_restarts", c->true_residual_restarts);
    cli_json_int(&o, "breakdown_restarts", c->breakdown_restarts);
    cli_json_num(&o, "recursive_relative_residual", ratio(c->rnorm, c->bnorm));
    cli_json_num(&o, "true_relative_residual", ratio(c->true_rnorm, c->bnorm));
    double inf = NAN, rel = NAN;
    if (r->Xtrue) forward_errors(r, j, &inf, &rel);
    cli_json_num(&o, "forward_error_inf", inf);
    cli_json_num(&o, "forward_error_rel2", rel);
    cli_json_end(&o);
}

static void json_report(FILE *f, const solve_run *r, const cli_report *rep)
{
    int conv, most;
    long long its;
    totals(r, &conv, &its, &most);
    double t = r->mres[0].solve_seconds;
    cli_json j;
    cli_json_begin(&j, f);
    cli_report_problem_json(&j, rep);
    cli_json_int(&j, "nrhs", r->k);
    cli_json_str(&j, "rhs", r->Xtrue ? "generated" : r->o->rhs);
    if (r->Xtrue)
        cli_json_int(&j, "rhs_seed", r->o->rhs_seed);
    else
        cli_json_null(&j, "rhs_seed");
    cli_json_int(&j, "columns_converged", conv);
    cli_json_bool(&j, "converged", conv == r->k);
    cli_json_int(&j, "iterations", most);
    cli_json_int(&j, "iterations_total", its);
    cli_json_num(&j, "setup_seconds", r->setup_seconds);
    cli_json_num(&j, "matrix_build_seconds", r->matrix_seconds);
    cli_json_num(&j, "precond_build_seconds", r->precond_seconds);
    cli_json_num(&j, "solve_seconds", t);
    cli_json_num(&j, "seconds_per_column_iteration", its > 0 ? t / its : NAN);
    cli_json_key(&j, "columns");
    fputc('[', f);
    for (int c = 0; c < r->k; c++) {
        fputs(c ? "," : "", f);
        json_column(f, r, c);
    }
    fputc(']', f);
    cli_json_end(&j);
}

static void report(const solve_run *r)
{
    cli_report rep;
    cli_solve_report_problem(r, &rep);
    if (r->o->json)
        json_report(stdout, r, &rep);
    else
        text_report(stdout, r, &rep);
    fflush(stdout);
}

/* kr_solve_multi on the device, X back on the host */
static int solve_all(solve_run *r)
{
    kr_ctx *ctx = r->ctx;
    int32_t nk = r->A.nrows * r->k;
    kr_vec *B = NULL, *X = NULL;
    kr_solve_options opt;
    cli_solve_options(r, &opt);
    r->mres = calloc((size_t)r->k, sizeof *r->mres);
    if (!r->mres) {
        cli_error("out of host memory");
        return CLI_EXIT_DEVICE;
    }
    kr_status st = kr_vec_create(ctx, nk, &B);
    if (st == KR_OK) st = kr_vec_create(ctx, nk, &X);
    if (st == KR_OK) st = kr_vec_upload(B, r->B);
    if (st == KR_OK) st = kr_vec_upload(X, r->X);
    if (st == KR_OK) {
        cli_interrupt_arm();
        st = kr_solve_multi(ctx, r->M, r->P, r->k, B, X, &opt, r->mres);
        cli_interrupt_disarm();
    }
    if (st == KR_OK) st = kr_vec_download(X, r->X);
    kr_vec_destroy(B);
    kr_vec_destroy(X);
    return st == KR_OK ? 0 : cli_lib_error(ctx, st, NULL);
}

static int interrupted(const solve_run *r)
{
    for (int j = 0; j < r->k; j++)
        if (r->mres[j].reason == KR_INTERRUPTED) return 1;
    return 0;
}

/* -o: the n x k solution as a Matrix Market array */
static int write_solution(solve_run *r)
{
    if (!r->o->out || (interrupted(r) && !r->o->save_on_interrupt)) return 0;
    int32_t n = r->A.nrows;
    double *cm = new_block(r);
    if (!cm) return CLI_EXIT_DEVICE;
    transpose(n, r->k, r->X, cm, 0);
    kr_status st = kr_write_dense_mtx(r->ctx, r->o->out, n, r->k, cm);
    free(cm);
    return st == KR_OK ? 0 : cli_lib_error(r->ctx, st, r->o->out);
}

static int exit_code(const solve_run *r)
{
    int conv, most;
    long long its;
    totals(r, &conv, &its, &most);
    if (interrupted(r)) {
        fprintf(stderr, "krylov: interrupted; %s\n",
                r->o->out && r->o->save_on_interrupt
                    ? "the current iterates are in the -o file"
                    : "nothing written");
        return CLI_EXIT_INTERRUPTED;
    }
    if (conv == r->k) return CLI_EXIT_OK;
    for (int j = 0; j < r->k; j++)
        if (r->mres[j].reason <= 0) {
            fprintf(stderr,
                    "krylov: not converged: %d of %d columns, the first "
                    "column %d: %s (%s) after %d iterations\n",
                    r->k - conv, r->k, j + 1, kr_reason_name(r->mres[j].reason),
                    kr_reason_text(r->mres[j].reason), r->mres[j].iterations);
            break;
        }
    return CLI_EXIT_NOCONV;
}

int cli_multi_run(solve_run *r)
{
    int rc = solve_all(r);
    if (rc) return rc;
    report(r);
    rc = write_solution(r);
    return rc ? rc : exit_code(r);
}

void cli_multi_free(solve_run *r)
{
    free(r->B);
    free(r->X);
    free(r->Xtrue);
    free(r->mres);
    r->B = r->X = r->Xtrue = NULL;
    r->mres = NULL;
}
