/* TEMPORARY placeholder while the method is being written. */
#include "core/error.h"
#include "solver/solver.h"
static kr_status s_(kr_solve_args *a, kr_result *r) { (void)r; return kr_fail(a->ctx, KR_ERR_UNSUPPORTED, "gmres not written yet"); }
const kr_solver_ops kr_gmres_ops = {.name = "gmres", .summary = "", .solve = s_};
