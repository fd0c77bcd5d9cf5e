/* PETSc-style spellings and reports for `krylov solve`: the -ksp_type and
 * -pc_type values krylov shares with PETSc (bcgs is PETSc's BiCGSTAB), and
 * -ksp_view / -ksp_converged_reason output worded as PETSc words it, so
 * scripts that read PETSc's lines read ours. */
#include "drivers/petsc_style.h"

#include <string.h>

const char *const *cli_petsc_ksp_types(void)
{
    static const char *const types[] = {"cg", "gmres", "bcgs=bicgstab", NULL};
    return types;
}

const char *const *cli_petsc_pc_types(void)
{
    static const char *const types[] = {"none", "jacobi", NULL};
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
    fprintf(f, "PC Object: krylov\n  type: %s\n", o->precond);
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
