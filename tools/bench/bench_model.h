/* The bytes one iteration of a Krylov method must move: the method's own
 * count of its kernels (kr_solver_ops.iter_model, next to its code in
 * solver/<method>.c), SpMVs at their minimum bytes, and the passes of one
 * preconditioner application by its kind. */
#ifndef KR_TOOLS_BENCH_BENCH_MODEL_H
#define KR_TOOLS_BENCH_BENCH_MODEL_H

#include "precond/precond.h"

#include <stdint.h>

typedef struct bench_iter_model {
    double spmvs;      /* SpMVs per iteration                          */
    double pcs;        /* preconditioner applications per iteration    */
    double vectors;    /* other passes over n doubles per iteration    */
    double pc_vectors; /* passes over n doubles of one application     */
    char text[900];    /* how it was counted, for the report           */
} bench_iter_model;

/* The model of o's method (its s and restart) for n unknowns and a
 * preconditioner of kind pc; GMRES's cost grows with the basis, so it is
 * averaged over the given iterations. Returns 0, or -1 for a method
 * without a model (the numbers are then NaN). */
int bench_iter_model_make(const kr_solve_options *o, int32_t n, kr_pc_kind pc,
                          int iterations, bench_iter_model *m);

/* Bytes of one iteration: spmvs * spmv_bytes + 8 B * n * (vectors + pcs *
 * pc_vectors). */
double bench_iter_bytes(const bench_iter_model *m, double spmv_bytes,
                        int32_t n);

#endif
