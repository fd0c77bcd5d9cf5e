/* The bytes one iteration of each Krylov method must move, counted from
 * the kernels solver/<method>.c calls: SpMVs at their minimum bytes,
 * preconditioner applications, and passes over vectors of n doubles. */
#ifndef KR_DRIVERS_BENCH_MODEL_H
#define KR_DRIVERS_BENCH_MODEL_H

#include <stdint.h>

typedef struct bench_iter_model {
    double spmvs;      /* SpMVs per iteration                          */
    double pcs;        /* preconditioner applications per iteration    */
    double vectors;    /* other passes over n doubles per iteration    */
    double pc_vectors; /* passes over n doubles of one application     */
    char text[768];    /* how it was counted, for the report           */
} bench_iter_model;

/* The model of `method` (s for IDR, restart for GMRES; GMRES's cost grows
 * with the basis, so it is averaged over the given iterations). Returns 0,
 * or -1 for a method without a model (the numbers are then NaN). */
int bench_iter_model_make(const char *method, const char *precond, int s,
                          int restart, int iterations, bench_iter_model *m);

/* Bytes of one iteration: spmvs * spmv_bytes + 8 B * n * (vectors + pcs *
 * pc_vectors). */
double bench_iter_bytes(const bench_iter_model *m, double spmv_bytes,
                        int32_t n);

#endif
