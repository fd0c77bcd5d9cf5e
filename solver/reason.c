/* Names and sentences for the convergence reasons. */
#include "krylov.h"

const char *kr_reason_name(kr_reason r)
{
    switch (r) {
    case KR_ITERATING: return "ITERATING";
    case KR_CONVERGED_RTOL: return "CONVERGED_RTOL";
    case KR_CONVERGED_ATOL: return "CONVERGED_ATOL";
    case KR_CONVERGED_HAPPY_BREAKDOWN: return "CONVERGED_HAPPY_BREAKDOWN";
    case KR_CONVERGED_ZERO_RHS: return "CONVERGED_ZERO_RHS";
    case KR_DIVERGED_ITS: return "DIVERGED_ITS";
    case KR_DIVERGED_DTOL: return "DIVERGED_DTOL";
    case KR_DIVERGED_BREAKDOWN: return "DIVERGED_BREAKDOWN";
    case KR_DIVERGED_INDEFINITE_PC: return "DIVERGED_INDEFINITE_PC";
    case KR_DIVERGED_NANORINF: return "DIVERGED_NANORINF";
    case KR_DIVERGED_INDEFINITE_MAT: return "DIVERGED_INDEFINITE_MAT";
    case KR_DIVERGED_RESIDUAL_GAP: return "DIVERGED_RESIDUAL_GAP";
    case KR_INTERRUPTED: return "INTERRUPTED";
    }
    return "UNKNOWN_REASON";
}

const char *kr_reason_text(kr_reason r)
{
    switch (r) {
    case KR_ITERATING: return "still iterating";
    case KR_CONVERGED_RTOL: return "residual norm below rtol * ||b||";
    case KR_CONVERGED_ATOL: return "residual norm below atol";
    case KR_CONVERGED_HAPPY_BREAKDOWN:
        return "the Krylov space contains the exact solution";
    case KR_CONVERGED_ZERO_RHS: return "b = 0, so x = 0";
    case KR_DIVERGED_ITS: return "maximum number of iterations reached";
    case KR_DIVERGED_DTOL:
        return "residual norm grew above dtol times its "
               "start";
    case KR_DIVERGED_BREAKDOWN: return "breakdown: a zero inner product";
    case KR_DIVERGED_INDEFINITE_PC:
        return "the preconditioner is not positive definite (CG)";
    case KR_DIVERGED_NANORINF: return "a residual norm became NaN or Inf";
    case KR_DIVERGED_INDEFINITE_MAT:
        return "the matrix is not positive definite (CG)";
    case KR_DIVERGED_RESIDUAL_GAP:
        return "the true residual ||b - A x|| missed the tolerance the "
               "recursive residual met (a residual gap)";
    case KR_INTERRUPTED:
        return "stopped on request (interrupt or monitor); x is the "
               "current iterate";
    }
    return "unknown reason";
}
