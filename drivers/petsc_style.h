/* What krylov offers PETSc users: the values the PETSc-style options
 * -ksp_type and -pc_type take, and the -ksp_view and -ksp_converged_reason
 * reports in PETSc's words. */
#ifndef KR_DRIVERS_PETSC_STYLE_H
#define KR_DRIVERS_PETSC_STYLE_H

#include "krylov.h"
#include "solve.h"

#include <stdio.h>

/* "petsc" or "petsc=krylov" entries for CLI_PETSC options. */
const char *const *cli_petsc_ksp_types(void);
const char *const *cli_petsc_pc_types(void);

/* "Linear solve converged due to CONVERGED_RTOL iterations 158" */
void cli_print_converged_reason(FILE *f, kr_reason reason, int iterations);

/* The solver configuration: method, restart or s, tolerances,
 * preconditioner, format, device. */
void cli_print_view(FILE *f, const solve_run *r);

/* --view and --converged-reason after a solve (on stderr with --json). */
void cli_solve_petsc_reports(const solve_run *r);

#endif
