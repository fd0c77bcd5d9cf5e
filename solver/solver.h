/* Krylov methods as plug-ins, registered by name in solver/solve.c, and
 * the stopping test they share. */
#ifndef KR_SOLVER_SOLVER_H
#define KR_SOLVER_SOLVER_H

#include "core/vec.h"
#include "precond/precond.h"
#include "spmv/format.h"

#include <stdio.h> /* the methods write kr_iter_model.text */

/* What a method sees: the operator, the preconditioner, the options, and
 * the stopping test's thresholds, already computed from ||b||. */
typedef struct kr_solve_args {
    kr_ctx *ctx;
    kr_matrix *A;
    kr_precond *P;
    const double *b; /* backend memory, n entries */
    double *x;       /* backend memory, n entries; initial guess on entry */
    int32_t n;
    const kr_solve_options *opt;
    double bnorm;   /* ||b|| of the system the method solves          */
    double bnorm_m; /* ||b|| of the caller's b = bnorm_m * 2^bnorm_e  */
    int bnorm_e;
    double scale;      /* b and x were scaled by this power of two (1: not
                          scaled); norms shown to the user are divided by it
                          (see run_scaled in solve.c) */
    double r0norm;     /* ||r_0||, set by kr_solver_check at iteration 0 */
    double run_r0norm; /* ||b - A x|| this run started from (its first
                          residual, set by kr_solver_check at it = 0) */
    int it0;           /* iterations done before this run (a restart from x
                          after a residual gap or a breakdown): methods count
                          from 0, kr_solver_check numbers from it0 */
    double *work;      /* the method's work vectors, allocated at setup
                          (kr_solver_ops.workspace): backend memory */
    double *hwork;     /* the method's host scratch, allocated at setup */
    double *check;     /* n doubles for the true residual after a run */
    int check_ready;   /* 1: check holds b - A x for this x and check_rr
                          its r.r, for the next run's start to take
                          (kr_start_residual) */
    double check_rr;
    int true_ready; /* 1: the run ended by computing ||b - A x|| of
                       its x (true_rn), so the solve need not */
    double true_rn;
    void *dstate;        /* KR_DSTATE_BYTES of backend memory for the scalars
                            a method keeps on the device (kr_cg_dev) */
    int defer_interrupt; /* 1: kr_solver_check ignores opt->interrupt (an
                            iteration the device has already gone past) */
} kr_solve_args;

/* The traffic of one iteration of a method, counted from the kernels its
 * file calls: SpMVs, preconditioner applications (each applied as an
 * operator), and other passes over vectors of n doubles, a read or a
 * write each (a dot of two vectors 2, of a vector with itself 1). Stated
 * next to each method's code (kr_solver_ops.iter_model), so that the byte
 * floor of `krylov bench solve` follows the method it describes. */
typedef struct kr_iter_model {
    double spmvs;   /* SpMVs per iteration                          */
    double pcs;     /* preconditioner applications per iteration    */
    double vectors; /* other passes over n doubles per iteration    */
    char text[768]; /* how it was counted, for reports              */
} kr_iter_model;

/* Backend memory a solver object sets aside for a method's device
 * scalars. */
#define KR_DSTATE_BYTES 1024

struct kr_multi;

typedef struct kr_solver_ops {
    const char *name;
    const char *summary;
    /* Runs the iteration from the x in args (any x0: the method starts
     * from r = b - A x). Sets res->reason, iterations and rnorm; records
     * every residual through kr_solver_check. */
    kr_status (*solve)(kr_solve_args *args, kr_result *res);
    /* The work solve needs for n unknowns with options o: nvec vectors of
     * n doubles in backend memory (args->work, not zeroed between solves)
     * and nhost doubles of host memory (args->hwork). */
    void (*workspace)(const kr_solve_options *o, int32_t n, int *nvec,
                      size_t *nhost);
    /* Optional: bytes of backend memory the method keeps its device
     * scalars in (args->dstate), when more than KR_DSTATE_BYTES. */
    size_t (*dstate_bytes)(const kr_solve_options *o);
    /* The traffic of one iteration (kr_iter_model) for n unknowns with
     * options o and a preconditioner of kind pc; where it varies between
     * iterations (GMRES's growing basis) the mean over `iterations`. */
    void (*iter_model)(const kr_solve_options *o, int32_t n, kr_pc_kind pc,
                       int iterations, kr_iter_model *m);
    /* Several right-hand sides (solver/multi.h): runs the columns of m->run
     * together, each as solve runs one (same iterates on the CPU), */
    kr_status (*solve_multi)(struct kr_multi *m);
    /* its work for n unknowns and k columns: nblk blocks of n*k doubles,
     * nvec vectors of n and nhost host doubles */
    void (*workspace_multi)(const kr_solve_options *o, int32_t n, int k,
                            int *nblk, int *nvec, size_t *nhost);
} kr_solver_ops;

const kr_solver_ops *kr_solver_find(const char *name);

/* The methods, one line each, in the order of kr_method_names(): X(name)
 * for the table kr_<name>_ops in solver/<name>.c. */
#define KR_METHOD_LIST(X) X(cg) X(gmres) X(idr) X(bicgstab)

#define KR_DECLARE_METHOD(name) extern const kr_solver_ops kr_##name##_ops;
KR_METHOD_LIST(KR_DECLARE_METHOD)
#undef KR_DECLARE_METHOD

/* The stopping test for the method's iteration `it` (0 at its start), that
 * is iteration a->it0 + it of the solve, with residual norm rnorm: records
 * it (monitor, history[a->it0 + it]) and returns KR_ITERATING or the
 * reason to stop: rtol/atol met, NaN/Inf, divergence, or maxit reached. */
kr_reason kr_solver_check(kr_solve_args *a, kr_result *res, int it,
                          double rnorm);

/* Runs the method from args->x to the end of the solve: b = 0, the true
 * residual after each run, the restarts (solver/solve.c). */
kr_status kr_solver_run(kr_solve_args *a, const kr_solver_ops *method,
                        kr_result *res);
/* After a run that stopped with res->reason and res->true_rnorm: 1 to
 * restart the method from x (counted in res), 0 to end (res->reason may
 * become KR_DIVERGED_RESIDUAL_GAP or KR_INTERRUPTED). */
int kr_solver_restart_due(const kr_solve_args *a, kr_result *res);

/* r = b - A x into r, and r.r into *rr (rr NULL: not wanted): at the
 * start of a run copied from args->check where the solve's first round
 * trip or the last run's true residual left them for this x, else (and
 * later in a run) computed. */
kr_status kr_start_residual(kr_solve_args *a, double *r, double *rr);
/* The same with ||r|| as kr_norm2 gives it. */
kr_status kr_start_residual_norm(kr_solve_args *a, double *r, double *rnorm);
/* A run that ended by computing rr = r.r of r = b - A x for its final x
 * hands it over as the solve's true residual (taken where its square root
 * is the norm without scaling; rr < 0: none). */
void kr_solver_end_residual(kr_solve_args *a, double rr);

/* 1 when the caller asked the solve to stop (kr_solve_options.interrupt);
 * kr_solver_check tests it at every iteration. */
int kr_solver_interrupted(const kr_solve_args *a);

/* 1 when rnorm meets the tolerance, max(rtol*||b||, atol). */
int kr_solver_converged(const kr_solve_args *a, double rnorm);

/* ||x||_2 through the backend's fused dots, scaled where the squares
 * would under- or overflow (so a vector of 1e-170s or 1e200s has its true
 * norm); kr_norm2_exp gives it as m * 2^e, for norms beyond DBL_MAX. */
kr_status kr_norm2(kr_ctx *ctx, int32_t n, const double *x, double *nrm);
kr_status kr_norm2_exp(kr_ctx *ctx, int32_t n, const double *x, double *m,
                       int *e);

/* A run whose scalars stay in backend memory (solver/devloop.c). */
typedef struct kr_dev_loop {
    const char *name;
    kr_status (*enqueue)(void *arg); /* enqueues *nb iterations */
    void *arg;
    int *nb;
    void *host;   /* host copy of the state (kr_dev_head first), set up by
                     the method; uploaded to args->dstate at the start */
    size_t bytes; /* its size */
    /* the method's own reason for a stop code other than STOP_CHECK: sets
     * *why, returns 1 (0: unknown code) */
    int (*reason)(const void *host, kr_reason *why);
    /* Optional (0 or 1: unused): the work of an iteration repeats with
     * this period (IDR(s): s + 1), so a batch's work depends on where in
     * the period it starts; *phase (iterations enqueued so far, modulo
     * period) is set before each batch, and full batches replay one graph
     * per phase. At most KR_DEV_MAX_PERIOD. */
    int period;
    int *phase;
    /* Optional: a batch is one launch that stops where the device's test
     * fires (a persistent op: cg_persist, gm_persist, ...), so iterations after
     * a stop cost nothing and no graph is needed; batches are then KR_BATCH_MAX
     * long from the first (one when a monitor is set). */
    int whole;
} kr_dev_loop;

#define KR_DEV_MAX_PERIOD 32

/* Whether a method's device batches may run as one persistent launch each
 * (the backend's *_persist ops): a small system (KR_PERSIST_MAX_ROWS),
 * rows of similar lengths (KR_PERSIST_MAX_SKEW) but for a few
 * (KR_PERSIST_LONG_ROWS, KR_PERSIST_LONGEST), A's CSR in backend memory,
 * into *csr. KRYLOV_PERSIST=0 turns it off, for the tests and
 * benchmarks that compare. The method checks that its op exists. */
int kr_dev_persists(const kr_solve_args *a, kr_csr_view *csr);

/* The thresholds of kr_solver_check as the device tests them (the same
 * products, so the same doubles); a->r0norm must be set. */
void kr_dev_head_init(const kr_solve_args *a, kr_dev_head *h);
/* The longest batch of device iterations: `usual` (at most KR_BATCH_MAX),
 * or KRYLOV_BATCH's value (1..KR_BATCH_MAX, for benchmarks that compare). */
int kr_dev_batch_cap(int usual);
kr_status kr_dev_loop_run(kr_solve_args *a, kr_result *res, kr_dev_loop *L);

/* Shorthands for the backend kernels on arrays of length n. */
kr_status kr_spmv(const kr_solve_args *a, double alpha, const double *x,
                  double beta, double *y);
kr_status kr_pc(const kr_solve_args *a, const double *r, double *z);
#define KR_WORK(block, n, i) ((block) + (size_t)(i) * (size_t)(n))

#endif
