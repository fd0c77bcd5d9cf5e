/* The comparison as one table (rows: iterations, reason, true residual,
 * times; columns: krylov, PETSc) or as one flat JSON object with the same
 * numbers, plus the host-side residual and difference norms both use. */
#include "drivers/json.h"
#include "drivers/petsc/compare.h"
#include "krylov.h"

#include <math.h>
#include <stdlib.h>

static double norm2(const double *v, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

double cmp_true_rel(const kr_csr *A, const double *b, const double *x)
{
    int32_t n = A->nrows;
    double *r = malloc(((size_t)n + 1) * sizeof *r);
    if (!r) return NAN;
    kr_csr_matvec(A, x, r);
    for (int32_t i = 0; i < n; i++)
        r[i] = b[i] - r[i];
    double bn = norm2(b, n), rn = norm2(r, n);
    free(r);
    return bn > 0 ? rn / bn : rn;
}

double cmp_rel_diff(const double *x, const double *y, int32_t n)
{
    double d = 0.0;
    for (int32_t i = 0; i < n; i++)
        d += (x[i] - y[i]) * (x[i] - y[i]);
    double yn = norm2(y, n);
    return yn > 0 ? sqrt(d) / yn : sqrt(d);
}

static double per_it(const cmp_side *s)
{
    return s->iterations > 0 ? s->solve_s / s->iterations : NAN;
}

static void print_header(FILE *f, const solve_run *r, const cmp_result *c)
{
    const solve_opts *o = r->o;
    fprintf(f, "matrix %s%s, n = %d, nnz = %d\n", r->name,
            o->gen ? " (generated)" : "", (int)r->A.nrows, (int)r->A.nnz);
    fprintf(f,
            "rtol %g, atol %g, dtol %g, maxit %d; stop when ||b - A x|| <= "
            "max(rtol*||b||, atol)\n",
            o->rtol, o->atol, o->dtol, o->maxit);
    fprintf(f, "krylov: %s + %s, format %s, %s\n", c->k.ksp, c->k.pc,
            r->M ? kr_matrix_format(r->M) : o->format,
            kr_ctx_device_name(r->ctx));
    fprintf(f, "PETSc %s: %s + %s, SeqAIJ, 1 process\n\n", c->petsc_version,
            c->p.ksp, c->p.pc);
}

void cmp_print_table(FILE *f, const solve_run *r, const cmp_result *c)
{
    const cmp_side *k = &c->k, *p = &c->p;
    print_header(f, r, c);
    fprintf(f, "%-26s %16s %16s\n", "", "krylov", "PETSc");
    fprintf(f, "%-26s %16d %16d\n", "iterations", k->iterations, p->iterations);
    fprintf(f, "%-26s %16s %16s\n", "reason", k->reason, p->reason);
    fprintf(f, "%-26s %16.4e %16.4e\n", "true rel. residual", k->true_rel,
            p->true_rel);
    fprintf(f, "%-26s %16.6f %16.6f\n", "setup time (s)", k->setup_s,
            p->setup_s);
    fprintf(f, "%-26s %16.6f %16.6f\n", "solve time (s)", k->solve_s,
            p->solve_s);
    fprintf(f, "%-26s %16.4e %16.4e\n", "time per iteration (s)", per_it(k),
            per_it(p));
    fprintf(f, "\n||x_krylov - x_petsc|| / ||x_petsc|| = %.4e\n", c->xdiff);
    if (c->note) fprintf(f, "note: %s\n", c->note);
    if (kr_ctx_device(r->ctx) == KR_DEVICE_CPU && kr_ctx_threads(r->ctx) != 1)
        fputs("note: PETSc runs on one core; for a like-for-like timing run "
              "with --threads 1\n",
              f);
}

static void side_json(cli_json *j, const char *who, const cmp_side *s)
{
    char key[64];
#define KEY(name) (snprintf(key, sizeof key, "%s_%s", who, name), key)
    cli_json_str(j, KEY("method"), s->ksp);
    cli_json_str(j, KEY("precond"), s->pc);
    cli_json_int(j, KEY("iterations"), s->iterations);
    cli_json_str(j, KEY("reason"), s->reason);
    cli_json_bool(j, KEY("converged"), s->converged);
    cli_json_num(j, KEY("true_relative_residual"), s->true_rel);
    cli_json_num(j, KEY("setup_seconds"), s->setup_s);
    cli_json_num(j, KEY("solve_seconds"), s->solve_s);
    cli_json_num(j, KEY("seconds_per_iteration"), per_it(s));
#undef KEY
}

void cmp_print_json(FILE *f, const solve_run *r, const cmp_result *c)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "matrix", r->name);
    cli_json_bool(&j, "generated", r->o->gen != NULL);
    cli_json_int(&j, "n", r->A.nrows);
    cli_json_int(&j, "nnz", r->A.nnz);
    cli_json_num(&j, "rtol", r->o->rtol);
    cli_json_num(&j, "atol", r->o->atol);
    cli_json_int(&j, "maxit", r->o->maxit);
    cli_json_str(&j, "device", kr_ctx_device_name(r->ctx));
    cli_json_int(&j, "threads", kr_ctx_threads(r->ctx));
    cli_json_str(&j, "petsc_version", c->petsc_version);
    side_json(&j, "krylov", &c->k);
    side_json(&j, "petsc", &c->p);
    cli_json_num(&j, "solution_difference", c->xdiff);
    if (c->note)
        cli_json_str(&j, "note", c->note);
    else
        cli_json_null(&j, "note");
    cli_json_end(&j);
}
