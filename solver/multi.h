/* Several right-hand sides solved together (kr_solve_multi): k
 * independent systems A x_j = b_j that share every SpMM and preconditioner
 * application, each column with its own scalars, stopping test, reason and
 * restarts. Not block Krylov: no search space is shared. */
#ifndef KR_SOLVER_MULTI_H
#define KR_SOLVER_MULTI_H

#include "solver/solver.h"

/* A multi-column solve as a method sees it. Blocks are n x k row-major. */
typedef struct kr_multi {
    kr_ctx *ctx;
    kr_matrix *A;
    kr_precond *P;
    int32_t n;
    int k;
    const double *B; /* backend memory, n x k */
    double *X;       /* backend memory, n x k; initial guesses on entry */
    const kr_solve_options *opt; /* monitor and history off */
    /* per column: what kr_solver_check reads and writes (thresholds, it0,
     * r0norm) and the column's result */
    kr_solve_args col[KR_MULTI_MAX];
    kr_result *res;
    /* the columns still iterating in this run: a method clears a column's
     * bit when it stops (kr_multi_check, kr_multi_stop) and never touches
     * a column outside it */
    uint64_t run;
    double *work;        /* the method's blocks (workspace_multi), backend    */
    double *vecs;        /* the method's shared vectors of n entries, backend */
    double *hwork;       /* the method's host doubles                         */
    double *check;       /* n x k block for the true residuals                */
    double *col1, *col2; /* n entries each: one column (fallback paths) */
    void *dstate;        /* k * KR_DSTATE_BYTES of backend memory: the columns'
                            device scalars (kr_multi_dev_loop_run) */
} kr_multi;

/* Column j's bit. */
#define KR_COL(j) ((uint64_t)1 << (j))
/* for (j = each column set in mask) */
#define KR_FOR_COLS(j, mask, k)                                                \
    for (int j = 0; j < (k); j++)                                              \
        if ((mask) >> j & 1)

/* The stopping test of column j at the run's iteration it: records the
 * result and, when it stops, clears the column from m->run. */
kr_reason kr_multi_check(kr_multi *m, int j, int it, double rnorm);
/* Stops column j with a method's own reason (a breakdown). */
void kr_multi_stop(kr_multi *m, int j, kr_reason why);

/* Y = A X (the format's SpMM, or column by column where it has none). */
kr_status kr_multi_spmm(kr_multi *m, uint64_t mask, const double *X, double *Y);
/* Z = P^-1 R for the columns of mask (every column when the
 * preconditioner has apply_multi, which is one batched application). */
kr_status kr_multi_pc(kr_multi *m, uint64_t mask, const double *R, double *Z);
/* R = B - A X */
kr_status kr_multi_residual(kr_multi *m, uint64_t mask, double *R);
/* out[j] = ||X(:,j)|| as kr_norm2 gives it, for the columns of mask. */
kr_status kr_multi_norms(kr_multi *m, uint64_t mask, const double *X,
                         double *out);

/* The methods' multi-column loops (solver/NAME_multi.c), each mirroring
 * its single-system loop; the workspace functions as workspace_multi. */
#define KR_DECLARE_MULTI(name)                                                 \
    kr_status kr_##name##_solve_multi(kr_multi *m);                            \
    void kr_##name##_workspace_multi(const kr_solve_options *o, int32_t n,     \
                                     int k, int *nblk, int *nvec,              \
                                     size_t *nhost);
KR_METHOD_LIST(KR_DECLARE_MULTI)
#undef KR_DECLARE_MULTI

/* IDR(s)'s pieces that its multi-column loop shares (solver/idr.c): the
 * shadow space P (s orthonormal columns of n, column-major) from the
 * seed (scratch: s * s doubles of backend memory), and its dimension
 * for n. Its small dense steps (kr_idr_solve_c, kr_idr_solve_h,
 * kr_idr_omega) are core/backend.h's, shared with the device-scalar ops. */
kr_status kr_idr_shadow_space(kr_ctx *ctx, int32_t n, int s, uint64_t seed,
                              double *P, double *scratch);
int kr_idr_shadow_dim(const kr_solve_options *o, int32_t n);

/* CG's reason for a device stop other than STOP_CHECK (kr_cg_dev's
 * rho or p.q; solver/cg.c), for the single and the multi-column loops. */
int kr_cg_dev_reason(const void *state, kr_reason *why);

/* Per-column scalars that are the same for every column. */
void kr_multi_fill(double *s, int k, double v);
/* Block i of the method's work. */
double *kr_multi_block(const kr_multi *m, int i);

/* A multi-column run whose per-column scalars stay in backend memory
 * (solver/multi_devloop.c): devloop.c's batches with one state per
 * column, each column tested on the host on the norms its state
 * recorded. */
typedef struct kr_multi_dev_loop {
    const char *name;
    kr_status (*enqueue)(void *arg); /* enqueues *nb iterations */
    void *arg;
    int *nb;
    /* the host copy of the k states, `size` bytes apart (kr_dev_head
     * first in each), set up by the method: a column outside m->run
     * starts stopped; uploaded to m->dstate at the start */
    void *host;
    size_t size;
    /* the method's reason for a stop code other than STOP_CHECK */
    int (*reason)(const void *state, kr_reason *why);
} kr_multi_dev_loop;

/* Whether multi-column loops keep their scalars in backend memory
 * (KRYLOV_MULTI_DEVICE=0: no, the host-scalar loops, to compare). */
int kr_multi_device_on(const kr_multi *m);
kr_status kr_multi_dev_loop_run(kr_multi *m, kr_multi_dev_loop *L);

/* Runs method over the k columns: b = 0, the true residuals, the restarts
 * per column as kr_solver_run does for one. */
kr_status kr_multi_run(kr_multi *m, const kr_solver_ops *method);

#endif
