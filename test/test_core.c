/* The core on the CPU: backend kernels against plain loops, CSR checks and
 * SpMV, Jacobi, the context and registry messages, and CG end to end. */
#include "backend_check.h"
#include "core/ctx.h"
#include "spmv/format.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(backend_kernels)
{
    const int32_t sizes[] = {0, 1, 31, 33, 1000, 70001};
    kr_ctx *ctx = kt_cpu();
    for (int t = 1; t <= 2; t++) {
        kr_ctx_set_threads(ctx, t);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            kt_check_backend(ctx, sizes[i], 1000 + i, 1e-13);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Dots give the same bits on every call with the same thread count. */
START_TEST(dots_deterministic)
{
    kr_ctx *ctx = kt_cpu();
    kr_ctx_set_threads(ctx, 2);
    int32_t n = 100000;
    double *x = malloc(n * sizeof *x), r1, r2;
    uint64_t s = 5;
    for (int32_t i = 0; i < n; i++)
        x[i] = kt_rand_uniform(&s);
    const double *xs[1] = {x};
    for (int rep = 0; rep < 5; rep++) {
        ck_assert_int_eq(ctx->ops->dots(ctx, n, 1, xs, xs, &r1), KR_OK);
        ck_assert_int_eq(ctx->ops->dots(ctx, n, 1, xs, xs, &r2), KR_OK);
        ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
    }
    free(x);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(csr_spmv_shapes)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    const int32_t shapes[][3] = {
        {1, 1, 1}, {5, 7, 3}, {33, 33, 4}, {200, 50, 9}, {1000, 1000, 12}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        kt_random_csr(ctx, shapes[i][0], shapes[i][1], shapes[i][2], 0, 7 + i,
                      &A);
        kt_check_spmv_all(ctx, &A, 11 + i, 1e-13);
        kr_csr_free(&A);
    }
    /* empty rows, nnz = 0, n = 0 */
    ck_assert_int_eq(kr_csr_alloc(ctx, 4, 4, 0, &A), KR_OK);
    kt_check_spmv_all(ctx, &A, 3, 0.0);
    kr_csr_free(&A);
    ck_assert_int_eq(kr_csr_alloc(ctx, 0, 0, 0, &A), KR_OK);
    kt_check_spmv_all(ctx, &A, 3, 0.0);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every format on every real matrix, against the plain CSR loop. */
START_TEST(formats_real_matrices)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("formats_real_matrices", "no matrix folder");
        return;
    }
    kr_ctx *ctx = kt_cpu();
    ck_assert_int_gt(kt_check_spmv_files(ctx, dir, 99, 1e-12), 0);

    kr_ctx_destroy(ctx);
}
END_TEST

/* The plain loop the CPU CSR kernel must match bit for bit: one running
 * sum per row in column order, then alpha*s (+ beta*y). */
static void plain_spmv(const kr_csr *A, double alpha, const double *x,
                       double beta, double *y)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            s += A->val[k] * x[A->colind[k]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

/* A sorted random pattern of len distinct columns in [0, m). */
static void random_pattern(int32_t len, int32_t m, uint64_t *s, int32_t *cols)
{
    int32_t c = 0;
    for (int32_t j = 0; j < len; j++) {
        int32_t room = m - c - (len - j); /* columns left to skip */
        c +=
            room > 0 ? (int32_t)(kt_rand_u64(s) % (uint64_t)(room / 4 + 1)) : 0;
        cols[j] = c++;
    }
}

/* n x m rows in runs: I-node groups of 2..9 rows with one random pattern
 * each (longer ones split at KR_INODE_MAX), single rows, and runs of empty
 * rows; row lengths 0..maxlen. Counts the rows meant to be grouped. */
static void inode_csr(kr_ctx *ctx, int32_t n, int32_t m, int32_t maxlen,
                      uint64_t seed, kr_csr *A, int32_t *grouped)
{
    uint64_t s = seed;
    int32_t *cols = malloc(((size_t)maxlen + 1) * sizeof *cols);
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, n * maxlen, A), KR_OK);
    int32_t nnz = 0, i = 0;
    *grouped = 0;
    while (i < n) {
        int kind = (int)(kt_rand_u64(&s) % 10);
        int32_t rows = kind < 6   ? 2 + (int32_t)(kt_rand_u64(&s) % 8)
                       : kind < 9 ? 1 + (int32_t)(kt_rand_u64(&s) % 5)
                                  : 1 + (int32_t)(kt_rand_u64(&s) % 3);
        if (rows > n - i) rows = n - i;
        int32_t len = kind == 9 ? 0 : (int32_t)(kt_rand_u64(&s) % (maxlen + 1));
        if (len > m) len = m;
        if (kind < 6) random_pattern(len, m, &s, cols);
        for (int32_t r = 0; r < rows; r++, i++) {
            if (kind >= 6 && kind < 9) { /* single rows: own lengths */
                len = 1 + (int32_t)(kt_rand_u64(&s) % maxlen);
                if (len > m) len = m;
                random_pattern(len, m, &s, cols);
            }
            for (int32_t j = 0; j < len; j++) {
                A->colind[nnz] = cols[j];
                A->val[nnz++] = kt_rand_uniform(&s);
            }
            A->rowptr[i + 1] = nnz;
        }
        if (kind < 6 && rows > 1) /* a last piece of 1 row is no group */
            *grouped += rows - (rows % KR_INODE_MAX == 1);
    }
    A->nnz = nnz;
    free(cols);
}

/* y = alpha*A*x + beta*y by the CPU csr format equals plain_spmv bit for
 * bit (and kr_csr_matvec for alpha 1, beta 0), y poisoned where beta = 0. */
static void check_csr_bitwise(kr_ctx *ctx, const kr_csr *A, uint64_t seed,
                              const char *what)
{
    const double coef[][2] = {{1.0, 0.0}, {-1.0, 0.0}, {-2.0, 0.5}, {0.0, 3.0},
                              {0.5, 1.0}, {1.0, -1.0}, {3.0, 0.0}};
    int32_t n = A->nrows;
    uint64_t s = seed;
    double *x = malloc(((size_t)A->ncols + 1) * sizeof *x);
    double *y0 = malloc(((size_t)n + 1) * sizeof *y0);
    double *y = malloc(((size_t)n + 1) * sizeof *y);
    double *ref = malloc(((size_t)n + 1) * sizeof *ref);
    for (int32_t j = 0; j < A->ncols; j++)
        x[j] = kt_rand_uniform(&s) * (1 + j % 7);
    for (int32_t i = 0; i < n; i++)
        y0[i] = kt_rand_uniform(&s);
    kr_matrix *M;
    kr_vec *vx, *vy;
    ck_assert_int_eq(kr_matrix_create(ctx, A, "csr", &M), KR_OK);
    kr_vec_create(ctx, A->ncols, &vx);
    kr_vec_create(ctx, n, &vy);
    kr_vec_upload(vx, x);
    for (size_t c = 0; c < sizeof coef / sizeof *coef; c++) {
        double al = coef[c][0], be = coef[c][1];
        if (be == 0.0)
            kr_vec_fill(vy, NAN);
        else
            kr_vec_upload(vy, y0);
        ck_assert_int_eq(kr_matrix_apply(M, al, vx, be, vy), KR_OK);
        kr_vec_download(vy, y);
        memcpy(ref, y0, (size_t)n * sizeof *ref);
        plain_spmv(A, al, x, be, ref);
        for (int32_t i = 0; i < n; i++)
            ck_assert_msg(memcmp(&y[i], &ref[i], sizeof y[i]) == 0,
                          "%s (%d threads, avx %d), alpha %g beta %g: row "
                          "%d is %.17g, the column-order loop gives %.17g",
                          what, kr_ctx_threads(ctx), kr_csr_cpu_use_avx(-1), al,
                          be, i, y[i], ref[i]);
        if (al == 1.0 && be == 0.0) {
            kr_csr_matvec(A, x, ref);
            ck_assert(memcmp(y, ref, (size_t)n * sizeof *y) == 0);
        }
    }
    kr_vec_destroy(vx);
    kr_vec_destroy(vy);
    kr_matrix_destroy(M);
    free(x);
    free(y0);
    free(y);
    free(ref);
}

/* Every thread count and every kernel copy: with and without AVX (where
 * the CPU has it) and software prefetch. */
static void check_csr_bitwise_all(kr_ctx *ctx, const kr_csr *A, uint64_t seed,
                                  const char *what)
{
    for (int copy = 0; copy < 4; copy++) {
        kr_csr_cpu_use_avx(copy & 1);
        kr_csr_cpu_prefetch(copy >> 1);
        for (int t = 1; t <= 3; t++) {
            kr_ctx_set_threads(ctx, t);
            check_csr_bitwise(ctx, A, seed + (uint64_t)t, what);
        }
    }
    kr_csr_cpu_use_avx(1);
    kr_csr_cpu_prefetch(-1);
    kr_ctx_set_threads(ctx, 0);
}

/* I-node groups of every size, single and empty rows: the grouped kernel
 * adds each row in column order like the plain loop, bit for bit. */
START_TEST(csr_inode_bitwise)
{
    kr_ctx *ctx = kt_cpu();
    /* small ones, and one with nnz >= 50000 so that two threads run */
    const int32_t shapes[][3] = {{1, 1, 1},      {7, 7, 3},
                                 {40, 40, 12},   {300, 90, 40},
                                 {500, 500, 70}, {4000, 4000, 40}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        kr_csr A;
        int32_t meant, groups, rows;
        inode_csr(ctx, shapes[i][0], shapes[i][1], shapes[i][2], 40 + i, &A,
                  &meant);
        kr_matrix *M;
        ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
        kr_csr_cpu_inodes(M->impl, &groups, &rows);
        kr_matrix_destroy(M);
        /* adjacent runs may share a pattern (empty rows): at least these */
        ck_assert_int_ge(rows, meant);
        ck_assert_int_le(rows, A.nrows);
        ck_assert_int_le(groups * 2, rows);
        ck_assert_int_ge(groups * KR_INODE_MAX, rows);
        if (A.nrows >= 300) ck_assert_int_gt(groups, 10);
        check_csr_bitwise_all(ctx, &A, 70 + i, "generated");
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* The same on the real matrices with I-nodes (bcsstk16: 1829 groups of up
 * to 5 rows in PETSc, 4629 of its 4884 rows in groups). */
START_TEST(csr_inode_real_matrices)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("csr_inode_real_matrices", "no matrix folder");
        return;
    }
    const char *names[] = {"bcsstk16", "bcsstk38", "nasa4704", "cavity10"};
    kr_ctx *ctx = kt_cpu();
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[4096];
        kr_csr A;
        snprintf(path, sizeof path, "%s/%s.mtx", dir, names[i]);
        ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        kr_matrix *M;
        int32_t groups, rows;
        ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
        kr_csr_cpu_inodes(M->impl, &groups, &rows);
        kr_matrix_destroy(M);
        ck_assert_msg(rows > A.nrows / 2, "%s: %d of %d rows in %d groups",
                      names[i], rows, A.nrows, groups);
        check_csr_bitwise_all(ctx, &A, 90 + i, names[i]);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(csr_check_names_row)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 10, 10, 3, 1, 1, &A);
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_OK);
    int32_t k = A.rowptr[6];
    A.colind[k] = 10; /* out of range in row 6, numbered 7 from 1 */
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "row 7"));
    A.colind[k] = 0;
    A.val[k] = NAN;
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "not finite"));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The row statistics the persistent path's rule reads (kr_dev_persists):
 * M's longest row and its rows above KR_PERSIST_MAX_SKEW x the mean equal
 * a brute-force count; above KR_PERSIST_MAX_ROWS rows both are -1. */
START_TEST(matrix_long_rows)
{
    kr_ctx *ctx = kt_cpu();
    const char *specs[] = {"arrow:3000,12", "poisson2d:50", "banded:4000,12",
                           "poisson2d:513"};
    for (int t = 0; t < 4; t++) {
        kr_csr A;
        kr_matrix *M;
        ck_assert_int_eq(kr_generate(ctx, specs[t], &A), KR_OK);
        ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
        int32_t longest = 0, count = 0;
        double mean = (double)A.nnz / A.nrows;
        for (int32_t i = 0; i < A.nrows; i++) {
            int32_t len = A.rowptr[i + 1] - A.rowptr[i];
            if (len > longest) longest = len;
            count += len > KR_PERSIST_MAX_SKEW * mean;
        }
        int known = A.nrows <= KR_PERSIST_MAX_ROWS;
        ck_assert_int_eq(M->longest_row, known ? longest : -1);
        ck_assert_int_eq(M->long_rows, known ? count : -1);
        if (t == 0) ck_assert_int_eq(count, 12); /* the arrow's full rows */
        kr_matrix_destroy(M);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(jacobi_apply_and_zero_diagonal)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 50, 50, 4, 1, 9, &A);
    kr_precond *P;
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    kr_vec *r, *z;
    double rh[50], zh[50];
    for (int i = 0; i < 50; i++)
        rh[i] = i - 20.5;
    kr_vec_create(ctx, 50, &r);
    kr_vec_create(ctx, 50, &z);
    kr_vec_upload(r, rh);
    ck_assert_int_eq(kr_precond_apply(P, r, z), KR_OK);
    kr_vec_download(z, zh);
    for (int32_t i = 0; i < 50; i++)
        for (int32_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++)
            if (A.colind[k] == i)
                ck_assert_double_eq_tol(zh[i], rh[i] / A.val[k], 1e-14);
    kr_precond_destroy(P);
    /* zero the diagonal of row index 17: setup names row 18 (1-based) */
    for (int32_t k = A.rowptr[17]; k < A.rowptr[18]; k++)
        if (A.colind[k] == 17) A.val[k] = 0.0;
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_ERR_SINGULAR);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "row 18 (1-based)"));
    ck_assert_ptr_null(P);
    kr_vec_destroy(r);
    kr_vec_destroy(z);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(unknown_names_list_choices)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 5, 5, 2, 1, 2, &A);
    kr_matrix *M;
    kr_precond *P;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "nosuch", &M), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "csr"));
    ck_assert_int_eq(kr_precond_create(ctx, &A, "ilu", &P), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "jacobi"));
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "none", &P), KR_OK);
    kr_vec *b, *x;
    kr_vec_create(ctx, 5, &b);
    kr_vec_create(ctx, 5, &x);
    kr_vec_fill(b, 1.0);
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "minres";
    kr_result res;
    ck_assert_int_eq(kr_solve(ctx, M, P, b, x, &o, &res), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "bicgstab"));
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    kr_matrix_destroy(M);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(context_devices)
{
    kr_ctx *ctx;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_AUTO), KR_OK);
    if (kr_ctx_device(ctx) == KR_DEVICE_CPU && kr_built_with_cuda())
        ck_assert_ptr_nonnull(strstr(kr_ctx_note(ctx), "using the CPU"));
    kr_ctx_destroy(ctx);
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_CUDA);
    if (!kr_built_with_cuda()) {
        ck_assert_int_eq(st, KR_ERR_NOT_COMPILED);
        ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "without CUDA"));
    } else if (st != KR_OK) {
        ck_assert_int_eq(st, KR_ERR_DEVICE);
    }
    kr_ctx_destroy(ctx);
    ck_assert_str_eq(kr_status_name(KR_ERR_FORMAT), "KR_ERR_FORMAT");
    ck_assert_str_eq(kr_reason_name(KR_DIVERGED_ITS), "DIVERGED_ITS");
}
END_TEST

/* SPD: B + B^T with a dominant diagonal; CG meets rtol by the true residual */
START_TEST(cg_random_spd)
{
    kr_ctx *ctx = kt_cpu();
    int32_t n = 400;
    kr_csr B, A;
    kt_random_csr(ctx, n, n, 5, 0, 21, &B);
    double *dense = calloc((size_t)n * n, sizeof *dense);
    for (int32_t i = 0; i < n; i++)
        for (int32_t k = B.rowptr[i]; k < B.rowptr[i + 1]; k++) {
            dense[(size_t)i * n + B.colind[k]] += B.val[k];
            dense[(size_t)B.colind[k] * n + i] += B.val[k];
        }
    int32_t nnz = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        nnz += dense[i] != 0.0;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, nnz + n, &A), KR_OK);
    nnz = 0;
    for (int32_t i = 0; i < n; i++) {
        double off = 0.0;
        for (int32_t j = 0; j < n; j++)
            if (j != i) off += fabs(dense[(size_t)i * n + j]);
        for (int32_t j = 0; j < n; j++) {
            double v = j == i ? off + 0.1 : dense[(size_t)i * n + j];
            if (v == 0.0) continue;
            A.colind[nnz] = j;
            A.val[nnz++] = v;
        }
        A.rowptr[i + 1] = nnz;
    }
    A.nnz = nnz;
    double *xt = malloc(n * sizeof *xt), *bh = malloc(n * sizeof *bh);
    uint64_t s = 3;
    for (int32_t i = 0; i < n; i++)
        xt[i] = kt_rand_uniform(&s);
    kr_csr_matvec(&A, xt, bh);
    kr_matrix *M;
    kr_precond *P;
    kr_vec *b, *x;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    kr_vec_create(ctx, n, &b);
    kr_vec_create(ctx, n, &x);
    kr_vec_upload(b, bh);
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "cg";
    kr_result res;
    ck_assert_int_eq(kr_solve(ctx, M, P, b, x, &o, &res), KR_OK);
    ck_assert_int_eq(res.reason, KR_CONVERGED_RTOL);
    ck_assert(res.true_rnorm <= 1.01e-8 * res.bnorm);
    ck_assert(res.iterations > 1 && res.iterations < 200);
    kr_vec_download(x, bh);
    ck_assert(kt_rel_diff(n, bh, xt) < 1e-6);
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    kr_matrix_destroy(M);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_csr_free(&B);
    free(dense);
    free(xt);
    free(bh);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The kernel warm-up at context creation: none on the CPU; on the GPU it
 * runs unless KRYLOV_WARMUP=0, and a context without it still solves. */
START_TEST(context_warmup)
{
    kr_ctx *cpu = kt_cpu();
    ck_assert(kr_ctx_warmup_seconds(cpu) == 0.0);
    ck_assert(kr_ctx_warmup_seconds(NULL) == 0.0);
    kr_ctx_destroy(cpu);
    kr_ctx *gpu = kt_gpu_or_skip("context_warmup");
    if (!gpu) return;
    ck_assert(kr_ctx_warmup_seconds(gpu) > 0.0);
    kr_ctx_destroy(gpu);
    ck_assert_int_eq(setenv("KRYLOV_WARMUP", "0", 1), 0);
    gpu = kt_gpu_or_skip("context_warmup");
    ck_assert_ptr_nonnull(gpu);
    ck_assert(kr_ctx_warmup_seconds(gpu) == 0.0);
    kt_check_backend(gpu, 1000, 99, 1e-13);
    kr_ctx_destroy(gpu);
    unsetenv("KRYLOV_WARMUP");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, backend_kernels);
    tcase_add_test(tc, dots_deterministic);
    tcase_add_test(tc, context_warmup);
    tcase_add_test(tc, csr_spmv_shapes);
    tcase_add_test(tc, matrix_long_rows);
    tcase_add_test(tc, formats_real_matrices);
    tcase_add_test(tc, csr_inode_bitwise);
    tcase_add_test(tc, csr_inode_real_matrices);
    tcase_add_test(tc, csr_check_names_row);
    tcase_add_test(tc, jacobi_apply_and_zero_diagonal);
    tcase_add_test(tc, unknown_names_list_choices);
    tcase_add_test(tc, context_devices);
    tcase_add_test(tc, cg_random_spd);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
