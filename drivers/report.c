/* The solve report. Text and JSON print the same fields; quantities that
 * are undefined (b = 0, no iterations, unknown solution) are "n/a" in text
 * and null in JSON. */
#include "report.h"

#include "block_cond.h"
#include "json.h"

#include <math.h>
#include <string.h>

#define KEY_WIDTH 24

static int uses_s(const char *method) { return strcmp(method, "idr") == 0; }
static int uses_restart(const char *method)
{
    return strcmp(method, "gmres") == 0;
}

static double ratio(double a, double b) { return b != 0 ? a / b : NAN; }

static double per_iteration(const cli_report *r)
{
    return r->res->iterations > 0 ? r->res->solve_seconds / r->res->iterations
                                  : NAN;
}

static void key(FILE *f, const char *k) { fprintf(f, "%-*s ", KEY_WIDTH, k); }

/* "key: 1.234e-09", or "key: n/a" when not finite */
static void line_num(FILE *f, const char *k, const char *fmt, double v,
                     const char *unit)
{
    key(f, k);
    if (isfinite(v)) {
        fprintf(f, fmt, v);
        fprintf(f, "%s\n", unit);
    } else {
        fputs("n/a\n", f);
    }
}

/* The preconditioner's timed setup stages under "precond build"; a stage
 * that took no time (the upload of A where nothing was uploaded) is left
 * out of the text. */
static void text_stages(FILE *f, const kr_precond_info *info)
{
    for (int i = 0; info && i < info->stages; i++) {
        const kr_precond_stage *s = &info->stage[i];
        char k[96];
        snprintf(k, sizeof k, "    %s:", s->label);
        if (s->seconds > 0.0) line_num(f, k, "%.6f", s->seconds, " s");
    }
}

void cli_report_problem_text(FILE *f, const cli_report *r)
{
    key(f, "matrix:");
    fprintf(f, "%s%s\n", r->matrix, r->generated ? " (generated)" : "");
    key(f, "rows (n):");
    fprintf(f, "%d\n", (int)r->n);
    key(f, "nonzeros:");
    fprintf(f, "%d\n", (int)r->nnz);
    key(f, "row length:");
    fprintf(f, "min %d, mean %.2f, max %d, std %.2f\n", (int)r->rows.min,
            r->rows.mean, (int)r->rows.max, r->rows.stddev);
    key(f, "method:");
    if (uses_s(r->method))
        fprintf(f, "%s (s = %d)\n", r->method, r->s);
    else if (uses_restart(r->method))
        fprintf(f, "%s (restart = %d)\n", r->method, r->restart);
    else
        fprintf(f, "%s\n", r->method);
    key(f, "preconditioner:");
    fprintf(f, "%s\n", r->precond);
    if (r->precond_blocks > 0) {
        key(f, "preconditioner blocks:");
        fprintf(f, "%d (%d singular)\n", (int)r->precond_blocks,
                (int)r->precond_singular);
    }
    key(f, "format:");
    fprintf(f, "%s\n", r->format);
    if (*r->format_reason) {
        key(f, "format choice:");
        fprintf(f, "%s\n", r->format_reason);
    }
    key(f, "row order:");
    fprintf(f, "%s\n", r->permutation);
    if (r->permute_reason && *r->permute_reason) {
        key(f, "row order choice:");
        fprintf(f, "%s\n", r->permute_reason);
    }
    key(f, "device:");
    fprintf(f, "%s\n", r->device);
    key(f, "threads:");
    fprintf(f, "%d\n", r->threads);
}

static void text_outcome(FILE *f, const cli_report *r)
{
    const kr_result *res = r->res;
    key(f, "iterations:");
    fprintf(f, "%d\n", res->iterations);
    key(f, "reason:");
    fprintf(f, "%s (%s)\n", kr_reason_name(res->reason),
            kr_reason_text(res->reason));
    key(f, "true-residual restarts:");
    fprintf(f, "%d (at most %d)\n", res->true_residual_restarts,
            r->gap_restarts);
    key(f, "breakdown restarts:");
    fprintf(f, "%d (at most %d)\n", res->breakdown_restarts,
            r->breakdown_restarts);
    line_num(f, "recursive rel. residual:", "%.4e",
             ratio(res->rnorm, res->bnorm), "");
    line_num(f, "true rel. residual:", "%.4e",
             ratio(res->true_rnorm, res->bnorm), "");
    if (r->have_forward) {
        line_num(f, "forward error (inf):", "%.4e", r->forward_inf, "");
        line_num(f, "forward error (rel. 2):", "%.4e", r->forward_rel2, "");
    }
    line_num(f, "setup time:", "%.6f", r->setup_seconds, " s");
    line_num(f, "  matrix build:", "%.6f", r->matrix_build_seconds, " s");
    if (strcmp(r->build, "device") == 0) /* a host build uploads its layout */
        line_num(f, "    CSR upload:", "%.6f", r->upload_seconds, " s");
    key(f, "    format build:");
    fprintf(f, "%.6f s (%s)\n", r->format_build_seconds, r->build);
    if (strcmp(r->permutation, "none") != 0)
        line_num(f, "    row order:", "%.6f", r->permute_seconds, " s");
    line_num(f, "  precond build:", "%.6f", r->precond_build_seconds, " s");
    text_stages(f, r->precond_info);
    line_num(f, "solve time:", "%.6f", res->solve_seconds, " s");
    line_num(f, "time per iteration:", "%.3e", per_iteration(r), " s");
}

void cli_forward_error(const double *x, int32_t n, double *err_inf,
                       double *err_rel2)
{
    double mx = 0.0, sum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double d = fabs(x[i] - 1.0);
        if (d > mx || isnan(d)) mx = d;
        sum += d * d;
    }
    *err_inf = mx;
    *err_rel2 = n > 0 ? sqrt(sum / n) : 0.0;
}

void cli_report_text(FILE *f, const cli_report *r)
{
    cli_report_problem_text(f, r);
    text_outcome(f, r);
}

void cli_report_problem_json(cli_json *j, const cli_report *r)
{
    cli_json_str(j, "matrix", r->matrix);
    cli_json_bool(j, "generated", r->generated);
    cli_json_int(j, "n", r->n);
    cli_json_int(j, "nnz", r->nnz);
    cli_json_int(j, "row_length_min", r->rows.min);
    cli_json_num(j, "row_length_mean", r->rows.mean);
    cli_json_int(j, "row_length_max", r->rows.max);
    cli_json_num(j, "row_length_std", r->rows.stddev);
    cli_json_str(j, "method", r->method);
    if (uses_s(r->method)) cli_json_int(j, "s", r->s);
    if (uses_restart(r->method)) cli_json_int(j, "restart", r->restart);
    cli_json_int(j, "gap_restarts", r->gap_restarts);
    cli_json_int(j, "breakdown_restarts_max", r->breakdown_restarts);
    cli_json_str(j, "preconditioner", r->precond);
    if (r->precond_blocks > 0) {
        cli_json_int(j, "precond_blocks", r->precond_blocks);
        cli_json_int(j, "precond_singular_blocks", r->precond_singular);
        if (r->cond) cli_block_conds_json(j, r->cond);
    }
    cli_json_str(j, "format", r->format);
    cli_json_str(j, "format_requested", r->format_requested);
    cli_json_str(j, "format_reason", r->format_reason);
    cli_json_str(j, "permutation", r->permutation);
    cli_json_str(j, "permutation_reason",
                 r->permute_reason ? r->permute_reason : "");
    cli_json_str(j, "device", r->device);
    cli_json_int(j, "threads", r->threads);
}

static void json_outcome(cli_json *j, const cli_report *r)
{
    const kr_result *res = r->res;
    cli_json_int(j, "iterations", res->iterations);
    cli_json_str(j, "reason", kr_reason_name(res->reason));
    cli_json_str(j, "reason_text", kr_reason_text(res->reason));
    cli_json_bool(j, "converged", res->reason > 0);
    cli_json_int(j, "true_residual_restarts", res->true_residual_restarts);
    cli_json_int(j, "breakdown_restarts", res->breakdown_restarts);
    cli_json_num(j, "recursive_relative_residual",
                 ratio(res->rnorm, res->bnorm));
    cli_json_num(j, "true_relative_residual",
                 ratio(res->true_rnorm, res->bnorm));
    cli_json_num(j, "forward_error_inf",
                 r->have_forward ? r->forward_inf : NAN);
    cli_json_num(j, "forward_error_rel2",
                 r->have_forward ? r->forward_rel2 : NAN);
    cli_json_num(j, "setup_seconds", r->setup_seconds);
    cli_json_num(j, "matrix_build_seconds", r->matrix_build_seconds);
    cli_json_num(j, "matrix_upload_seconds", r->upload_seconds);
    cli_json_num(j, "format_build_seconds", r->format_build_seconds);
    cli_json_str(j, "build", r->build);
    cli_json_num(j, "permute_seconds", r->permute_seconds);
    cli_json_num(j, "precond_build_seconds", r->precond_build_seconds);
    for (int i = 0; r->precond_info && i < r->precond_info->stages; i++) {
        const kr_precond_stage *s = &r->precond_info->stage[i];
        char key[96];
        snprintf(key, sizeof key, "precond_%s_seconds", s->name);
        cli_json_num(j, key, s->seconds);
    }
    cli_json_num(j, "solve_seconds", res->solve_seconds);
    cli_json_num(j, "seconds_per_iteration", per_iteration(r));
}

void cli_report_json(FILE *f, const cli_report *r)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_report_problem_json(&j, r);
    json_outcome(&j, r);
    cli_json_end(&j);
}
