/* The PETSc side of compare-petsc: A as a SeqAIJ matrix built from the same
 * host CSR, the same b and x0, and a KSP configured to mean what krylov's
 * options mean (method, preconditioner, tolerances, restart), stopping on
 * the unpreconditioned residual relative to ||b|| as krylov does (PETSc's
 * default test uses ||b|| for a zero and a nonzero initial guess alike).
 * krylov's bjacobi is PETSc's PCVPBJACOBI on the partition krylov built,
 * passed by MatSetVariableBlockSizes: PETSc's PCBJACOBI is another method
 * (a sub-KSP with ILU per large block). */
#include "drivers/options.h"
#include "drivers/petsc/compare.h"
#include "krylov.h"

#include <petscksp.h>
#include <string.h>

/* A krylov method and the KSP that matches it. */
typedef struct ksp_match {
    const char *method;
    KSPType type;
    const char *type_name;
    PCSide side;
    const char *note;
} ksp_match;

static const ksp_match matches[] = {
    {"cg", KSPCG, "KSPCG", PC_LEFT, NULL},
    {"gmres", KSPGMRES, "KSPGMRES", PC_RIGHT, NULL},
    {"bicgstab", KSPBCGS, "KSPBCGS", PC_RIGHT, NULL},
    {"idr", KSPBCGSL, "KSPBCGSL", PC_RIGHT,
     "PETSc 3.18 has no IDR(s): the PETSc column is BiCGStab(l) (KSPBCGSL) "
     "with l = s, a different method; with right preconditioning (e.g. "
     "jacobi) PETSc 3.18.5's KSPBCGSL was seen to return an x whose true "
     "residual is far above the one it reports"},
};

/* A krylov preconditioner and the PC that matches it. */
typedef struct pc_match {
    const char *precond;
    PCType type;
    const char *type_name;
} pc_match;

static const pc_match pcs[] = {
    {"none", PCNONE, "PCNONE"},
    {"jacobi", PCJACOBI, "PCJACOBI"},
    {"bjacobi", PCVPBJACOBI, "PCVPBJACOBI"},
};

/* Everything PETSc allocates; destroyed together. */
typedef struct petsc_objs {
    Mat A;
    Vec b, x;
    KSP ksp;
} petsc_objs;

typedef struct petsc_monitor {
    FILE *f;
    double bnorm;
} petsc_monitor;

static const ksp_match *match_of(const char *method)
{
    for (size_t i = 0; i < sizeof matches / sizeof matches[0]; i++)
        if (!strcmp(matches[i].method, method)) return &matches[i];
    return NULL;
}

static const pc_match *pc_of(const char *precond)
{
    for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
        if (!strcmp(pcs[i].precond, precond)) return &pcs[i];
    return NULL;
}

/* krylov's partition of P's rows onto M, for PCVPBJACOBI: the blocks as
 * built, whichever of --block-size, --blocks or the default chose them. */
static PetscErrorCode set_blocks(Mat M, const kr_precond *P)
{
    PetscInt nb = kr_precond_block_count(P), *bs;
    int32_t *sizes;
    PetscFunctionBeginUser;
    PetscCall(PetscMalloc2(nb + 1, &bs, nb + 1, &sizes));
    PetscCheck(kr_precond_block_sizes(P, sizes) == KR_OK, PETSC_COMM_SELF,
               PETSC_ERR_ARG_WRONG, "krylov's preconditioner has no blocks");
    for (PetscInt b = 0; b < nb; b++)
        bs[b] = sizes[b];
    /* PETSc copies the sizes (3.18 too: MatGetVariableBlockSizes hands
     * back its own array) */
    PetscCall(MatSetVariableBlockSizes(M, nb, bs));
    PetscCall(PetscFree2(bs, sizes));
    PetscFunctionReturn(0);
}

static PetscErrorCode make_mat(const kr_csr *A, Mat *M)
{
    PetscInt n = A->nrows, *ia, *ja;
    PetscFunctionBeginUser;
    PetscCall(PetscMalloc2(n + 1, &ia, A->nnz + 1, &ja));
    for (PetscInt i = 0; i <= n; i++)
        ia[i] = A->rowptr[i];
    for (PetscInt k = 0; k < A->nnz; k++)
        ja[k] = A->colind[k];
    PetscCall(MatCreate(PETSC_COMM_SELF, M));
    PetscCall(MatSetSizes(*M, n, n, n, n));
    PetscCall(MatSetType(*M, MATSEQAIJ));
    PetscCall(MatSeqAIJSetPreallocationCSR(*M, ia, ja, A->val));
    PetscCall(PetscFree2(ia, ja));
    PetscFunctionReturn(0);
}

static PetscErrorCode make_vec(const double *h, PetscInt n, Vec *v)
{
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, v));
    PetscCall(VecGetArrayWrite(*v, &a));
    if (n > 0) memcpy(a, h, (size_t)n * sizeof *a);
    PetscCall(VecRestoreArrayWrite(*v, &a));
    PetscFunctionReturn(0);
}

static PetscErrorCode monitor(KSP ksp, PetscInt it, PetscReal rnorm, void *u)
{
    petsc_monitor *m = u;
    (void)ksp;
    if (it == 0) fputs("PETSc:\n  it    ||r||/||b||\n", m->f);
    fprintf(m->f, "%4d    %.6e\n", (int)it,
            m->bnorm > 0 ? rnorm / m->bnorm : rnorm);
    return 0;
}

static PetscErrorCode configure(KSP ksp, const solve_opts *o,
                                const ksp_match *m)
{
    PC pc;
    PetscFunctionBeginUser;
    PetscCall(KSPSetType(ksp, m->type));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, pc_of(o->precond)->type));
    PetscCall(KSPSetPCSide(ksp, m->side));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    /* krylov's dtol = 0 turns the test off; PETSc has no such value */
    PetscCall(KSPSetTolerances(ksp, o->rtol, o->atol,
                               o->dtol > 0 ? o->dtol : PETSC_MAX_REAL,
                               o->maxit));
    PetscCall(KSPSetInitialGuessNonzero(ksp, o->x0 ? PETSC_TRUE : PETSC_FALSE));
    if (!strcmp(o->method, "gmres"))
        PetscCall(KSPGMRESSetRestart(ksp, o->restart));
    if (!strcmp(o->method, "idr")) PetscCall(KSPBCGSLSetEll(ksp, o->s));
    PetscFunctionReturn(0);
}

/* *name = the PCFailedReason of ksp's PC after setup, NULL when none.
 * PCVPBJACOBI's LU does not stop on an exactly zero pivot (3.18.5, unlike
 * its man page): the PC records it, and KSPSolve then ends
 * DIVERGED_PC_FAILED with x set to Inf. */
static PetscErrorCode pc_failure(KSP ksp, const char **name)
{
    PC pc;
    PCFailedReason failed;
    PetscFunctionBeginUser;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetFailedReason(pc, &failed));
    *name = failed == PC_NOERROR ? NULL
            : failed < 0         ? "SETUP_ERROR" /* not in PCFailedReasons */
                                 : PCFailedReasons[failed];
    PetscFunctionReturn(0);
}

/* Builds and sets up the matrix, vectors and KSP (timed as setup). */
static PetscErrorCode build(const solve_run *r, const double *x0,
                            const ksp_match *m, petsc_objs *po,
                            petsc_monitor *mon, cmp_side *p)
{
    PetscFunctionBeginUser;
    double t0 = kr_wtime();
    PetscCall(make_mat(&r->A, &po->A));
    if (kr_precond_block_count(r->P) > 0) PetscCall(set_blocks(po->A, r->P));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &po->ksp));
    PetscCall(KSPSetOperators(po->ksp, po->A, po->A));
    PetscCall(configure(po->ksp, r->o, m));
    if (mon->f) PetscCall(KSPMonitorSet(po->ksp, monitor, mon, NULL));
    PetscCall(KSPSetUp(po->ksp));
    p->setup_s = kr_wtime() - t0;
    PetscCall(pc_failure(po->ksp, &p->pc_failed));
    PetscCall(make_vec(r->b, r->A.nrows, &po->b));
    PetscCall(make_vec(x0, r->A.nrows, &po->x));
    PetscFunctionReturn(0);
}

/* Solves (timed) and copies the solution and the outcome out. */
static PetscErrorCode run(petsc_objs *po, int32_t n, double *x, cmp_side *p)
{
    KSPConvergedReason reason;
    PetscInt its;
    const PetscScalar *a;
    PetscFunctionBeginUser;
    double t0 = kr_wtime();
    PetscCall(KSPSolve(po->ksp, po->b, po->x));
    p->solve_s = kr_wtime() - t0;
    PetscCall(KSPGetConvergedReason(po->ksp, &reason));
    PetscCall(KSPGetIterationNumber(po->ksp, &its));
    p->reason = KSPConvergedReasons[reason];
    p->claims = reason > 0;
    p->iterations = (int)its;
    PetscCall(VecGetArrayRead(po->x, &a));
    if (n > 0) memcpy(x, a, (size_t)n * sizeof *x);
    PetscCall(VecRestoreArrayRead(po->x, &a));
    PetscFunctionReturn(0);
}

static PetscErrorCode solve_all(const solve_run *r, const double *x0,
                                const ksp_match *m, double *x, cmp_side *p)
{
    petsc_objs po = {0};
    const solve_opts *o = r->o;
    petsc_monitor mon = {o->monitor ? (o->json ? stderr : stdout) : NULL,
                         r->res.bnorm};
    PetscErrorCode ierr = build(r, x0, m, &po, &mon, p);
    if (!ierr) ierr = run(&po, r->A.nrows, x, p);
    if (!ierr && o->view)
        ierr = KSPView(po.ksp, o->json ? PETSC_VIEWER_STDERR_SELF
                                       : PETSC_VIEWER_STDOUT_SELF);
    if (mon.f) fflush(mon.f);
    KSPDestroy(&po.ksp);
    VecDestroy(&po.b);
    VecDestroy(&po.x);
    MatDestroy(&po.A);
    return ierr;
}

int cmp_check(const solve_opts *o)
{
    if (!match_of(o->method))
        return cli_usage_error(
            "compare-petsc", "no PETSc method matches --method %s", o->method);
    if (!pc_of(o->precond))
        return cli_usage_error("compare-petsc",
                               "--precond %s has no PETSc counterpart here "
                               "(use none, jacobi or bjacobi)",
                               o->precond);
    if (o->save_on_interrupt) /* the comparison installs no handler */
        return cli_usage_error("compare-petsc",
                               "--save-on-interrupt is for krylov solve");
    return 0;
}

int cmp_petsc_solve(const solve_run *r, const double *x0, double *x,
                    cmp_result *c)
{
    const ksp_match *m = match_of(r->o->method);
    const pc_match *pm = pc_of(r->o->precond);
    cmp_side *p = &c->p;
    if (!m || !pm) return cmp_check(r->o);
    c->note = m->note;
    snprintf(p->ksp, sizeof p->ksp, "%s", m->type_name);
    snprintf(p->pc, sizeof p->pc, "%s", pm->type_name);
    if (solve_all(r, x0, m, x, p)) {
        cli_error("PETSc failed (its message is above)");
        return CLI_EXIT_DEVICE;
    }
    return 0;
}

int cmp_same_precond(const cmp_result *c)
{
    return c->blocks.singular == 0 && !c->p.pc_failed;
}
