/* bench solve --nrhs k: k right-hand sides solved together
 * (kr_solve_multi) against k single solves (kr_solve) of the same
 * columns, on one matrix and preconditioner, in the same run. */
#ifndef KR_DRIVERS_BENCH_MULTI_H
#define KR_DRIVERS_BENCH_MULTI_H

#include "krylov.h"

#include <stdio.h>

typedef struct bench_multi {
    int k;
    int ok;
    double single_s, multi_s;        /* medians: the k singles, the multi  */
    long long single_its, multi_its; /* column iterations, summed (rep 0)  */
    int single_conv, multi_conv;     /* columns converged                  */
    int its_equal; /* every column took its single solve's iterations */
    /* Byte floors per column-iteration (the method's iter_model over the
     * copy bandwidth of the run): a single solve's, and the multi solve's,
     * where A's 12 B per nonzero and row pointers are read once for all k
     * columns and every vector pass stays per column; NaN when unknown. */
    double single_floor_s, multi_floor_s;
} bench_multi;

/* b_j = A x_j for seeded random x_j (j < k), x0 = 0; warmup untimed runs
 * (maxit capped at warmup_maxit), then reps timed ones of each. */
kr_status bench_multi_run(kr_ctx *ctx, const kr_csr *A, kr_matrix *M,
                          kr_precond *P, const kr_solve_options *opt, int k,
                          int reps, int warmup, int warmup_maxit,
                          bench_multi *out);

/* The floors of a solve whose iteration moves iter_bytes, spmvs SpMVs of
 * an n x n matrix with nnz nonzeros, at copy_bps bytes per second. */
void bench_multi_floors(bench_multi *b, double iter_bytes, double spmvs,
                        int32_t n, int32_t nnz, double copy_bps);

/* The markdown table's header and row, and the row's JSON members. */
void bench_multi_md_header(FILE *f);
void bench_multi_md_row(FILE *f, const char *name, const bench_multi *b);
struct cli_json;
void bench_multi_json(struct cli_json *j, const bench_multi *b);

#endif
