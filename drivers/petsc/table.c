/* The comparison as one table (rows: iterations, reason, true residual,
 * times; columns: krylov, PETSc) or as one flat JSON object with the same
 * numbers (with --verbose, bjacobi's nested "block_conditions" summary),
 * plus the host-side residual and difference norms both use.
 * With bjacobi both also name the blocks and say when the two sides'
 * preconditioners differ (singular blocks), since the iteration counts
 * then compare different methods; likewise when krylov restarted from x
 * (after a breakdown or a residual gap), which PETSc does not. */
#include "drivers/block_cond.h"
#include "drivers/json.h"
#include "drivers/petsc/compare.h"
#include "krylov.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void cmp_judge(const solve_run *r, cmp_side *s)
{
    double bn = norm2(r->b, r->A.nrows);
    double rn = bn > 0 ? s->true_rel * bn : s->true_rel;
    double tol = fmax(r->o->rtol * bn, r->o->atol);
    s->converged = s->claims && rn <= tol;
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
    fprintf(f, "PETSc %s: %s + %s, SeqAIJ, 1 process\n", c->petsc_version,
            c->p.ksp, c->p.pc);
    if (c->blocks.count > 0) {
        char text[256];
        cli_blocks_text(&c->blocks, text, sizeof text);
        fprintf(f,
                "blocks (krylov's, given to PETSc by "
                "MatSetVariableBlockSizes):\n  %s\n",
                text);
    }
    fputc('\n', f);
}

/* krylov's stand-in for a singular block, in words */
static const char *stand_in(const solve_opts *o)
{
    return strcmp(o->bjacobi_singular, "identity") ? "scalar Jacobi"
                                                   : "the identity";
}

/* Why the two preconditioners differ, when they do. */
static void print_differ(FILE *f, const solve_run *r, const cmp_result *c)
{
    if (c->blocks.singular > 0)
        fprintf(f,
                "note: NOT LIKE FOR LIKE: krylov found %d of %d diagonal "
                "blocks singular (a Gauss-Jordan pivot <= k*eps*max|row|) "
                "and used %s on them (--bjacobi-singular %s); PETSc's "
                "PCVPBJACOBI inverts every block by LU with partial "
                "pivoting and fails only on an exactly zero pivot, so the "
                "preconditioners differ on those blocks\n",
                (int)c->blocks.singular, (int)c->blocks.count, stand_in(r->o),
                r->o->bjacobi_singular);
    if (c->p.pc_failed)
        fprintf(f,
                "note: PETSc's preconditioner setup failed (%s: an exactly "
                "zero pivot in a block), so its KSP stopped without "
                "iterating and set its x to Inf\n",
                c->p.pc_failed);
}

/* krylov's restarts from x, which PETSc's KSP does not make: from there on
 * the two sides run different iterations. */
static void print_restarts(FILE *f, const solve_run *r, const cmp_result *c)
{
    const kr_result *res = &r->res;
    if (res->breakdown_restarts > 0)
        fprintf(f,
                "note: krylov restarted from x after %d breakdown(s) "
                "(--breakdown-restarts %d); PETSc's %s has no such restart, "
                "so the two sides iterate differently from the first one "
                "on\n",
                res->breakdown_restarts, r->o->breakdown_restarts, c->p.ksp);
    if (res->true_residual_restarts > 0)
        fprintf(f,
                "note: krylov restarted from x %d time(s) where its residual "
                "met the tolerance and ||b - A x|| did not (--gap-restarts "
                "%d); PETSc's %s has no such check\n",
                res->true_residual_restarts, r->o->gap_restarts, c->p.ksp);
}

/* A side whose reason claims convergence that its true residual does not
 * bear out: counted as not converged (exit 1), and said so. */
static void print_false_claim(FILE *f, const solve_run *r, const char *who,
                              const cmp_side *s)
{
    if (!s->claims || s->converged) return;
    fprintf(f,
            "note: DISAGREEMENT: %s reports %s, but its true relative "
            "residual ||b - A x|| / ||b|| = %.4e misses the tolerance "
            "(rtol %g, atol %g): judged by the true residual, it did not "
            "converge\n",
            who, s->reason, s->true_rel, r->o->rtol, r->o->atol);
}

/* The singular-block row: krylov's count, PETSc's failure if any. */
static void print_singular(FILE *f, const cmp_result *c)
{
    const char *p = c->p.pc_failed;
    if (c->blocks.count == 0) return;
    fprintf(f, "%-26s %16d %16s\n", "singular blocks", (int)c->blocks.singular,
            !p                       ? "0"
            : strstr(p, "ZEROPIVOT") ? "zero pivot"
                                     : p);
}

void cmp_print_table(FILE *f, const solve_run *r, const cmp_result *c)
{
    const cmp_side *k = &c->k, *p = &c->p;
    print_header(f, r, c);
    fprintf(f, "%-26s %16s %16s\n", "", "krylov", "PETSc");
    fprintf(f, "%-26s %16d %16d\n", "iterations", k->iterations, p->iterations);
    fprintf(f, "%-26s %16s %16s\n", "reason", k->reason, p->reason);
    print_singular(f, c);
    fprintf(f, "%-26s %16.4e %16.4e\n", "true rel. residual", k->true_rel,
            p->true_rel);
    fprintf(f, "%-26s %16s %16s\n", "converged (true residual)",
            k->converged ? "yes" : "no", p->converged ? "yes" : "no");
    fprintf(f, "%-26s %16.6f %16.6f\n", "setup time (s)", k->setup_s,
            p->setup_s);
    fprintf(f, "%-26s %16.6f %16.6f\n", "solve time (s)", k->solve_s,
            p->solve_s);
    fprintf(f, "%-26s %16.4e %16.4e\n", "time per iteration (s)", per_it(k),
            per_it(p));
    if (isfinite(c->xdiff))
        fprintf(f, "\n||x_krylov - x_petsc|| / ||x_petsc|| = %.4e\n", c->xdiff);
    else
        fputs("\n||x_krylov - x_petsc|| / ||x_petsc|| = n/a (not finite)\n", f);
    if (c->note) fprintf(f, "note: %s\n", c->note);
    print_false_claim(f, r, "krylov", k);
    print_false_claim(f, r, "PETSc", p);
    print_differ(f, r, c);
    print_restarts(f, r, c);
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
    cli_json_bool(j, KEY("claims_converged"), s->claims);
    cli_json_bool(j, KEY("converged"), s->converged);
    cli_json_num(j, KEY("true_relative_residual"), s->true_rel);
    cli_json_num(j, KEY("setup_seconds"), s->setup_s);
    cli_json_num(j, KEY("solve_seconds"), s->solve_s);
    cli_json_num(j, KEY("seconds_per_iteration"), per_it(s));
#undef KEY
}

/* The blocks of bjacobi (null for the other preconditioners). */
static void blocks_json(cli_json *j, const solve_run *r, const cmp_result *c)
{
    const cli_blocks *b = &c->blocks;
    if (b->count == 0) {
        const char *keys[] = {"blocks",
                              "block_size_min",
                              "block_size_max",
                              "block_size_mean",
                              "krylov_singular_blocks",
                              "krylov_singular_policy"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            cli_json_null(j, keys[i]);
        return;
    }
    cli_json_int(j, "blocks", b->count);
    cli_json_int(j, "block_size_min", b->min);
    cli_json_int(j, "block_size_max", b->max);
    cli_json_num(j, "block_size_mean", b->mean);
    cli_json_int(j, "krylov_singular_blocks", b->singular);
    cli_json_str(j, "krylov_singular_policy", r->o->bjacobi_singular);
    if (r->have_cond) cli_block_conds_json(j, &r->cond);
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
    cli_json_int(&j, "krylov_true_residual_restarts",
                 r->res.true_residual_restarts);
    cli_json_int(&j, "krylov_breakdown_restarts", r->res.breakdown_restarts);
    if (c->p.pc_failed)
        cli_json_str(&j, "petsc_pc_failed", c->p.pc_failed);
    else
        cli_json_null(&j, "petsc_pc_failed");
    blocks_json(&j, r, c);
    cli_json_bool(&j, "same_preconditioner", cmp_same_precond(c));
    cli_json_num(&j, "solution_difference", c->xdiff);
    if (c->note)
        cli_json_str(&j, "note", c->note);
    else
        cli_json_null(&j, "note");
    cli_json_end(&j);
}
