/* TEMPORARY placeholder while the method is being written. */
#include "core/error.h"
#include "solver/solver.h"
static kr_status s_(kr_solve_args *a, kr_result *r) { (void)r; return kr_fail(a->ctx, KR_ERR_UNSUPPORTED, "idr not written yet"); }
const kr_solver_ops kr_idr_ops = {.name = "idr", .summary = "", .solve = s_};
