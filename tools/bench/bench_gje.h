/* Internal to `krylov bench gje` (tools/bench/bench_gje*.c): its options, the
 * rows of its two tables and the run that holds them. bench_gje.c parses
 * and drives, bench_gje_dense.c times random dense batches against cuBLAS,
 * bench_gje_matrix.c times the block-Jacobi stages on real matrices, and
 * bench_gje_report.c writes Markdown and JSON. */
#ifndef KR_TOOLS_BENCH_BENCH_GJE_H
#define KR_TOOLS_BENCH_BENCH_GJE_H

#include "precond/gje_batch.h"
#include "tools/bench/bench_common.h"

/* Most uniform sizes (1..32) and variable-size mixes one run takes. */
#define GJE_MAX_MIXES 16
#define GJE_MAX_BATCHES (KR_GJE_MAX + GJE_MAX_MIXES)
/* A sampled block whose ||B X - I||_inf / (||B||_inf ||X||_inf) exceeds
 * this fails the check: the random blocks have condition numbers below
 * 2k + 1 (see bench_gje_dense.c), so a backward-stable inversion stays
 * near k * eps, about 1e-14. */
#define GJE_RESIDUAL_TOL 1e-12
/* An applied block-Jacobi z whose max |z - z_ref| / max |z_ref| exceeds
 * this fails (z_ref from the same inverses on the host, in double). */
#define GJE_APPLY_TOL 1e-12

#define GJE_FLOP_MODEL "2 k^3 flops per k x k block"
#define GJE_FLOOR_MODEL                                                        \
    "16 k^2 bytes per block (the block read once, its inverse written "        \
    "once) over the copy bandwidth"
#define GJE_APPLY_MODEL                                                        \
    "8 B * sum k^2 (inverses) + 16 B * n (r read, z written) + 12 B per "      \
    "block (starts 4 B + offsets 8 B)"
#define GJE_RESIDUAL_MODEL                                                     \
    "max over the sampled blocks of ||B X - I||_inf / (||B||_inf "             \
    "||X||_inf), on the host in double"

typedef struct gje_opts {
    BENCH_COMMON_FIELDS;
    const char *sizes, *mixes, *part;
    int batch, warmup, check, seed, block_size;
} gje_opts;

/* One batch of random dense blocks: sizes lo..hi (lo == hi: uniform). */
typedef struct gje_dense_row {
    int lo, hi;
    int32_t nb;
    double mean_k, flops, floor_bytes;
    double ours_s, ours_min_s, floor_s;
    double lu_s, matinv_s; /* cuBLAS; NaN when not run */
    int groups;            /* cuBLAS calls per inversion (size groups) */
    int32_t sampled;
    int32_t singular_ours, singular_lu, singular_matinv;
    double res_ours, res_lu, res_matinv, diff_lu;
    int failed;
    char cublas_note[192]; /* "n/a: CPU", a cuBLAS error */
    char note[256];        /* "FAIL: ..." */
} gje_dense_row;

/* One matrix: the block-Jacobi stages. */
typedef struct gje_matrix_row {
    const bench_item *item;
    int32_t n, nnz, nb, max_k, singular;
    int refused;
    int done; /* every stage ran: the numbers below are set   */
    double mean_k;
    double blocking_s, flags_s, extract_s, apply_s, apply_bytes, spmv_s;
    double precond_s;
    int32_t precond_nb, precond_singular;
    int32_t sampled;           /* blocks sampled for the check          */
    int32_t checked;           /* of them not singular: residual taken  */
    int32_t singular_mismatch; /* sampled blocks whose singular flag
                                  differs from the reference's           */
    int32_t flag_mismatch;     /* rows whose pattern flag is wrong       */
    double res, res_ref;       /* residuals: ours, the reference's       */
    double apply_diff;
    int failed;
    char note[256];
} gje_matrix_row;

typedef struct gje_run {
    const gje_opts *o;
    int sizes[KR_GJE_MAX], nsizes;
    int mix_lo[GJE_MAX_MIXES], mix_hi[GJE_MAX_MIXES], nmixes;
    int dense, matrices; /* the parts to run */
    bench_list list;
    kr_ctx *ctx;
    const kr_gje_batch_ops *ops;
    size_t copy_bytes;
    double copy_bps;
    char date[32];
    gje_dense_row dense_rows[GJE_MAX_BATCHES];
    int ndense;
    gje_matrix_row *mat_rows;
    int nmats;
} gje_run;

/* Blocks in a batch whose largest block is hi rows. */
int32_t gje_batch_blocks(const gje_opts *o, int hi);

/* The dense batches and the matrices; each returns an exit code. */
int gje_run_dense(gje_run *r);
int gje_run_matrices(gje_run *r);

/* ||B X - I||_inf / (||B||_inf ||X||_inf) of one k x k column-major
 * block and its computed inverse; +Inf when X is not finite. */
double gje_residual(int32_t k, const double *B, const double *X);

/* Times fn(arg): `warmup` untimed runs, then `reps` timed ones (CUDA
 * events on the GPU, a wall clock on the CPU); median and minimum. */
kr_status gje_time(kr_ctx *ctx, kr_status (*fn)(void *), void *arg, int warmup,
                   int reps, double *median, double *min);

void gje_write_markdown(FILE *f, const void *run);
void gje_write_json(FILE *f, const void *run);

#endif
