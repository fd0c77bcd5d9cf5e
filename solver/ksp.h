/* The solver object behind kr_ksp_* and kr_solve: a method, its operator,
 * preconditioner and options, and the work the method needs, allocated at
 * setup and kept across solves. */
#ifndef KR_SOLVER_KSP_H
#define KR_SOLVER_KSP_H

#include "solver/solver.h"

struct kr_ksp {
    kr_ctx *ctx;
    const kr_solver_ops *method;
    kr_matrix *A;        /* borrowed                                      */
    kr_precond *P;       /* borrowed; NULL means `identity` below         */
    kr_precond identity; /* "none", for a solve without a preconditioner  */
    kr_solve_options opt;
    /* the work of the last setup: nvec vectors of n doubles (the method's,
     * then one for the true residual) and nhost host doubles */
    double *work;
    double *hwork;
    void *dstate; /* dstate_bytes of backend memory: device scalars */
    size_t dstate_bytes;
    int nvec;
    int32_t n;
    size_t nhost;
    /* the work of multi-column solves (solver/multi.c), kept while it is
     * large enough: backend doubles and host doubles */
    double *mwork;
    size_t mwork_len;
    double *mhwork;
    size_t mhwork_len;
};

/* Sets up k on ctx with the default options and method, nothing
 * allocated; kr_ksp_release frees what setup allocated. */
void kr_ksp_init(kr_ksp *k, kr_ctx *ctx);
void kr_ksp_release(kr_ksp *k);
/* The operator and preconditioner are set and fit together. */
kr_status kr_ksp_check_operators(kr_ksp *k);
/* One solve on the work of the last setup (which must fit the options). */
kr_status kr_ksp_run(kr_ksp *k, const kr_vec *b, kr_vec *x, kr_result *res);

/* From solver/solve.c: the options as this library reads them (in NULL:
 * the defaults; in->size decides which fields are read), their check, the
 * argument check of a solve, and the method by name. */
kr_status kr_solve_options_read(kr_ctx *ctx, const kr_solve_options *in,
                                kr_solve_options *out);
kr_status kr_solve_check_options(kr_ctx *ctx, const kr_solve_options *o);
kr_status kr_solve_check_args(kr_ctx *ctx, kr_matrix *A, kr_precond *P,
                              const kr_vec *b, const kr_vec *x);
kr_status kr_solve_find_method(kr_ctx *ctx, const char *name,
                               const kr_solver_ops **method);

/* Sets one option of o by name (solver/ksp_options.c); o is unchanged on
 * failure. Does not check ranges: the caller checks the result. */
kr_status kr_ksp_parse_option(kr_ctx *ctx, kr_solve_options *o, const char *key,
                              const char *value);

#endif
