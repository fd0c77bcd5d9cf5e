/* PETSc-style spellings and reports for `krylov solve`: the -ksp_type and
 * -pc_type values krylov shares with PETSc (bcgs is PETSc's BiCGSTAB,
 * vpbjacobi its variable-size point-block Jacobi = krylov's bjacobi), and
 * -ksp_view / -ksp_converged_reason output worded as PETSc words it, so
 * scripts that read PETSc's lines read ours. */
#include "petsc_style.h"

#include "block_summary.h"

#include <string.h>

const char *const *cli_petsc_ksp_types(void)
{
    static const char *const types[] = {"cg", "gmres", "bcgs=bicgstab", NULL};
    return types;
}

/* PETSc's bjacobi solves large blocks by a sub-KSP (ILU(0) by default);
 * krylov's bjacobi inverts small diagonal blocks exactly, as PETSc's
 * vpbjacobi does. Taking "bjacobi" at its name would run a different
 * preconditioner than the PETSc command line asked for. */
const char *const *cli_petsc_pc_types(void)
{
    static const char *const types[] = {
        "none", "jacobi", "vpbjacobi=bjacobi",
        "bjacobi!PETSc's bjacobi is block Jacobi with ILU subdomain solves, "
        "which krylov does not have; krylov's bjacobi (small diagonal blocks "
        "inverted exactly) is PETSc's vpbjacobi: use -pc_type vpbjacobi",
        NULL};
    return types;
}

void cli_print_converged_reason(FILE *f, kr_reason reason, int iterations)
{
    fprintf(f, "Linear solve %s due to %s iterations %d\n",
            reason > 0 ? "converged" : "did not converge",
            kr_reason_name(reason), iterations);
}

static void print_type(FILE *f, const solve_opts *o)
{
    fprintf(f, "  type: %s", o->method);
    if (!strcmp(o->method, "gmres")) fprintf(f, ", restart=%d", o->restart);
    if (!strcmp(o->method, "idr")) fprintf(f, ", s=%d", o->s);
    fputc('\n', f);
}

/* block-Jacobi's partition, which the options only bound (--block-size) */
static void print_blocks(FILE *f, const solve_run *r)
{
    cli_blocks b;
    char text[256];
    if (cli_blocks_of(r->P, &b) || b.count == 0) return;
    cli_blocks_text(&b, text, sizeof text);
    fprintf(f, "  diagonal blocks: %s\n", text);
    if (b.singular)
        fprintf(f, "  singular blocks: %d, replaced (--bjacobi-singular %s)\n",
                (int)b.singular, r->o->bjacobi_singular);
}

void cli_print_view(FILE *f, const solve_run *r)
{
    const solve_opts *o = r->o;
    fputs("KSP Object: krylov\n", f);
    print_type(f, o);
    fprintf(f, "  maximum iterations=%d, initial guess is %s\n", o->maxit,
            o->x0 ? "nonzero" : "zero");
    fprintf(f, "  tolerances: relative=%g, absolute=%g, divergence=%g\n",
            o->rtol, o->atol, o->dtol);
    fputs("  converged when ||b - A x|| <= max(rtol*||b||, atol) "
          "(UNPRECONDITIONED norm)\n",
          f);
    fprintf(f,
            "  restarts from x when the true residual misses it: at most "
            "%d\n",
            o->gap_restarts);
    fprintf(f, "  restarts from x after a breakdown: at most %d\n",
            o->breakdown_restarts);
    fprintf(f, "PC Object: krylov\n  type: %s\n", o->precond);
    print_blocks(f, r);
    fprintf(f, "Mat Object: %s\n  rows=%d, cols=%d, nnz=%d, format: %s\n",
            r->name, (int)r->A.nrows, (int)r->A.ncols, (int)r->A.nnz,
            r->M ? kr_matrix_format(r->M) : o->format);
    fprintf(f, "device: %s\n", kr_ctx_device_name(r->ctx));
}

void cli_solve_petsc_reports(const solve_run *r)
{
    FILE *f = r->o->json ? stderr : stdout;
    if (r->o->view) cli_print_view(f, r);
    if (r->o->converged_reason)
        cli_print_converged_reason(f, r->res.reason, r->res.iterations);
    fflush(f);
}
