/* The batched Gauss-Jordan table (precond/gje_batch.h): the CPU reference
 * on variable-size batches, and the GPU kernels against it on fresh random
 * data with poisoned outputs: every size 1..32 and mixes, blocks that need
 * pivoting, blocks whose pivot candidates all tie (Hadamard), singular
 * blocks reported exactly, extraction from CSR with entries outside the
 * blocks and long rows, the apply for every size class, and the pattern
 * flags of the supervariable blocking. GPU tests are skipped, visibly,
 * without a usable GPU. */
#include "core/vec.h"
#include "precond/bjacobi.h"
#include "precond/blocking.h"
#include "precond/gje_batch.h"
#include "precond/precond.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KMAX KR_GJE_MAX

/* ------------------------------------------------------------ helpers */

/* starts of nb blocks with the given sizes (cycled) */
static int32_t *starts_of(int32_t nb, const int32_t *sizes, int32_t nsizes)
{
    int32_t *s = malloc(((size_t)nb + 1) * sizeof *s);
    s[0] = 0;
    for (int32_t b = 0; b < nb; b++)
        s[b + 1] = s[b] + sizes[b % nsizes];
    return s;
}

/* Random column-major blocks whose diagonal is tiny (so pivoting is
 * needed); `singular` makes every 7th block singular. */
static double *random_blocks(const kr_gje_batch *bb, uint64_t seed,
                             int singular)
{
    double *B = malloc(((size_t)bb->total + 1) * sizeof *B);
    uint64_t st = seed;
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        double *D = B + bb->h_offs[b];
        for (int32_t e = 0; e < k * k; e++)
            D[e] = kt_rand_uniform(&st);
        for (int32_t i = 0; i < k; i++)
            D[i + i * k] *= 1e-6;
        if (!singular || b % 7 != 3) continue;
        /* a zero row or a zero column: singular in any arithmetic (a row
         * repeated is singular only up to rounding) */
        int32_t r = (int32_t)(kt_rand_u64(&st) % (uint64_t)k);
        for (int32_t j = 0; j < k; j++)
            D[b % 2 ? r + j * k : j + r * k] = 0.0;
    }
    return B;
}

static double norm1(int32_t k, const double *D) /* column-major */
{
    double m = 0.0;
    for (int32_t j = 0; j < k; j++) {
        double s = 0.0;
        for (int32_t i = 0; i < k; i++)
            s += fabs(D[i + j * k]);
        m = fmax(m, s);
    }
    return m;
}

/* max |B X - I| over the block, column-major */
static double residual(int32_t k, const double *B, const double *X)
{
    double m = 0.0;
    for (int32_t i = 0; i < k; i++)
        for (int32_t j = 0; j < k; j++) {
            double s = i == j ? -1.0 : 0.0;
            for (int32_t l = 0; l < k; l++)
                s += B[i + l * k] * X[l + j * k];
            m = fmax(m, fabs(s));
        }
    return m;
}

typedef struct dev_batch {
    double *in, *out;
    int32_t *info;
} dev_batch;

/* Uploads B, poisons out and info, runs ops->invert, downloads both. */
static void run_invert(kr_ctx *ctx, const kr_gje_batch *bb, const double *B,
                       double *X, int32_t *info)
{
    const kr_gje_batch_ops *ops = kr_gje_batch_ops_for(ctx);
    size_t bytes = ((size_t)bb->total + 1) * sizeof(double);
    dev_batch d;
    ck_assert_int_eq(kr_dev_upload_new(ctx, B, bytes, (void **)&d.in), KR_OK);
    ck_assert_int_eq(ctx->ops->alloc(ctx, (void **)&d.out, bytes), KR_OK);
    ck_assert_int_eq(
        ctx->ops->alloc(ctx, (void **)&d.info, (size_t)bb->nb * 4 + 4), KR_OK);
    ctx->ops->fill(ctx, (int32_t)bb->total, NAN, d.out);
    ctx->ops->fill(ctx, bb->nb / 2, NAN, (double *)d.info); /* poison */
    ck_assert_int_eq(ops->invert(ctx, bb, d.in, d.out, d.info), KR_OK);
    ctx->ops->download(ctx, X, d.out, (size_t)bb->total * sizeof(double));
    ctx->ops->download(ctx, info, d.info, (size_t)bb->nb * 4);
    kr_dev_free(ctx, d.in);
    kr_dev_free(ctx, d.out);
    kr_dev_free(ctx, d.info);
}

/* Every non-singular block: B X = I to rounding (relative to cond_1). */
static void check_inverses(const kr_gje_batch *bb, const double *B,
                           const double *X, const int32_t *info)
{
    for (int32_t b = 0; b < bb->nb; b++) {
        if (info[b]) continue;
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        const double *D = B + bb->h_offs[b], *Y = X + bb->h_offs[b];
        double cond = norm1(k, D) * norm1(k, Y);
        ck_assert_msg(residual(k, D, Y) <= 64.0 * k * DBL_EPSILON * cond,
                      "block %d (k = %d): |BX - I| = %g, cond %g", (int)b,
                      (int)k, residual(k, D, Y), cond);
    }
}

/* ------------------------------------------------------------ CPU */

/* The CPU table on a mixed batch: inverses, and exactly the singular
 * blocks flagged (every 7th from 3, by construction). */
START_TEST(cpu_batch_inverts_and_flags)
{
    kr_ctx *ctx = kt_cpu();
    int32_t sizes[KMAX];
    for (int32_t k = 0; k < KMAX; k++)
        sizes[k] = k + 1;
    int32_t *s = starts_of(700, sizes, KMAX);
    kr_gje_batch bb;
    ck_assert_int_eq(kr_gje_batch_create(ctx, 700, s, &bb), KR_OK);
    double *B = random_blocks(&bb, 11, 1);
    double *X = malloc(((size_t)bb.total + 1) * sizeof *X);
    int32_t *info = malloc(700 * sizeof *info);
    run_invert(ctx, &bb, B, X, info);
    for (int32_t b = 0; b < 700; b++)
        ck_assert_msg(info[b] == (b % 7 == 3), "block %d info %d", (int)b,
                      (int)info[b]);
    check_inverses(&bb, B, X, info);
    free(B);
    free(X);
    free(info);
    free(s);
    kr_gje_batch_free(ctx, &bb);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Size classes hold each block once, in the class of its size. */
START_TEST(batch_classes)
{
    kr_ctx *ctx = kt_cpu();
    const int32_t sizes[] = {3, 1, 32, 17, 2, 16, 9, 5, 4, 8, 33 - 1};
    int32_t *s = starts_of(200, sizes, 11);
    kr_gje_batch bb;
    ck_assert_int_eq(kr_gje_batch_create(ctx, 200, s, &bb), KR_OK);
    ck_assert_int_eq(bb.max_k, 32);
    int *seen = calloc(200, sizeof *seen);
    for (int c = 0; c < KR_GJE_CLASSES; c++)
        for (int32_t q = bb.class_start[c]; q < bb.class_start[c + 1]; q++) {
            int32_t b = bb.h_order[q], k = s[b + 1] - s[b];
            ck_assert_int_eq(kr_gje_class(k), c);
            ck_assert(k <= kr_gje_class_rows(c) &&
                      (c == 0 || k > kr_gje_class_rows(c - 1)));
            seen[b]++;
        }
    for (int32_t b = 0; b < 200; b++)
        ck_assert_int_eq(seen[b], 1);
    kr_gje_batch_free(ctx, &bb);
    int32_t bad[] = {0, 3, 3 + 33};
    ck_assert_int_eq(kr_gje_batch_create(ctx, 2, bad, &bb), KR_ERR_ARG);
    ck_assert_ptr_nonnull(
        strstr(kr_ctx_error(ctx),
               "block 2 (rows from 4, numbered from 1) has 33 rows"));
    free(seen);
    free(s);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------ GPU */

static void gpu_vs_cpu_invert(kr_ctx *g, kr_ctx *c, int32_t nb,
                              const int32_t *sizes, int32_t nsizes,
                              int singular, uint64_t seed)
{
    int32_t *s = starts_of(nb, sizes, nsizes);
    kr_gje_batch bg, bc;
    ck_assert_int_eq(kr_gje_batch_create(g, nb, s, &bg), KR_OK);
    ck_assert_int_eq(kr_gje_batch_create(c, nb, s, &bc), KR_OK);
    double *B = random_blocks(&bc, seed, singular);
    size_t bytes = ((size_t)bc.total + 1) * sizeof(double);
    double *Xg = malloc(bytes), *Xc = malloc(bytes);
    int32_t *ig = malloc((size_t)nb * 4 + 4), *ic = malloc((size_t)nb * 4 + 4);
    run_invert(g, &bg, B, Xg, ig);
    run_invert(c, &bc, B, Xc, ic);
    for (int32_t b = 0; b < nb; b++) {
        ck_assert_msg(ig[b] == ic[b], "block %d: GPU info %d, CPU %d", (int)b,
                      (int)ig[b], (int)ic[b]);
        if (ic[b]) continue;
        int32_t k = s[b + 1] - s[b];
        const double *D = B + bc.h_offs[b];
        double cond = norm1(k, D) * norm1(k, Xc + bc.h_offs[b]);
        double diff = kt_rel_diff(k * k, Xg + bc.h_offs[b], Xc + bc.h_offs[b]);
        ck_assert_msg(diff <= 64.0 * k * DBL_EPSILON * cond,
                      "block %d (k = %d): GPU vs CPU %g, cond %g", (int)b,
                      (int)k, diff, cond);
    }
    check_inverses(&bc, B, Xg, ig);
    free(B);
    free(Xg);
    free(Xc);
    free(ig);
    free(ic);
    free(s);
    kr_gje_batch_free(g, &bg);
    kr_gje_batch_free(c, &bc);
}

/* Uniform batches of every size 1..32 (counts not a multiple of a warp's
 * blocks), then variable mixes, with and without singular blocks. Sizes
 * above 16 run the blocked tensor-core kernel, the others the row kernel. */
START_TEST(gpu_invert_matches_cpu)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_invert_matches_cpu");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    uint64_t seed = (uint64_t)kr_wtime();
    for (int32_t k = 1; k <= KMAX; k++)
        gpu_vs_cpu_invert(g, c, 257 + k, &k, 1, k % 2, seed + (uint64_t)k);
    int32_t mix[KMAX];
    uint64_t st = seed;
    for (int32_t i = 0; i < KMAX; i++)
        mix[i] = 1 + (int32_t)(kt_rand_u64(&st) % KMAX);
    gpu_vs_cpu_invert(g, c, 5003, mix, KMAX, 0, seed + 100);
    gpu_vs_cpu_invert(g, c, 5003, mix, KMAX, 1, seed + 101);
    const int32_t small[] = {1, 3, 2, 4, 3}, large[] = {17, 32, 25, 31};
    gpu_vs_cpu_invert(g, c, 999, small, 5, 1, seed + 102);
    gpu_vs_cpu_invert(g, c, 999, large, 4, 1, seed + 103);
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

/* Sylvester Hadamard blocks (k = 1, 2, 4, 8, 16, 32) with their rows
 * shuffled and random signs: every column of every step ties, in the high
 * word and the low word, so the pivot search's tie path (lowest eligible
 * lane) runs at each step. B B^T = k I, so the inverse is B^T / k. */
static double *hadamard_blocks(const kr_gje_batch *bb, uint64_t seed)
{
    double *B = malloc(((size_t)bb->total + 1) * sizeof *B);
    uint64_t st = seed;
    int32_t perm[KMAX];
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t k = bb->h_starts[b + 1] - bb->h_starts[b];
        for (int32_t i = 0; i < k; i++)
            perm[i] = i;
        for (int32_t i = k - 1; i > 0; i--) {
            int32_t j = (int32_t)(kt_rand_u64(&st) % (uint64_t)(i + 1));
            int32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        double *D = B + bb->h_offs[b];
        for (int32_t i = 0; i < k; i++) {
            double sign = kt_rand_u64(&st) & 1 ? -1.0 : 1.0;
            for (int32_t j = 0; j < k; j++) /* H(r, j) = (-1)^popcount(r&j) */
                D[i + j * k] =
                    sign * (__builtin_popcount((unsigned)(perm[i] & j)) & 1
                                ? -1.0
                                : 1.0);
        }
    }
    return B;
}

/* Hadamard blocks of every power-of-two size on ctx's backend: none
 * flagged, every inverse B^T / k (cond 1, so to a few ulps). */
static void hadamard_inverts(kr_ctx *ctx)
{
    const int32_t sizes[] = {1, 2, 4, 8, 16, 32};
    const int32_t nb = 6 * 97;
    int32_t *s = starts_of(nb, sizes, 6);
    kr_gje_batch bb;
    ck_assert_int_eq(kr_gje_batch_create(ctx, nb, s, &bb), KR_OK);
    double *B = hadamard_blocks(&bb, (uint64_t)kr_wtime());
    double *X = malloc(((size_t)bb.total + 1) * sizeof *X);
    int32_t *info = malloc((size_t)nb * sizeof *info);
    run_invert(ctx, &bb, B, X, info);
    for (int32_t b = 0; b < nb; b++) {
        int32_t k = s[b + 1] - s[b];
        const double *D = B + bb.h_offs[b], *Y = X + bb.h_offs[b];
        ck_assert_msg(!info[b], "block %d (k = %d) flagged singular", (int)b,
                      (int)k);
        for (int32_t i = 0; i < k; i++)
            for (int32_t j = 0; j < k; j++)
                ck_assert_msg(fabs(Y[i + j * k] - D[j + i * k] / k) <=
                                  8.0 * k * DBL_EPSILON,
                              "block %d (k = %d) entry (%d, %d): %g, B^T/k %g",
                              (int)b, (int)k, (int)i, (int)j, Y[i + j * k],
                              D[j + i * k] / k);
    }
    free(B);
    free(X);
    free(info);
    free(s);
    kr_gje_batch_free(ctx, &bb);
}

START_TEST(cpu_pivot_ties)
{
    kr_ctx *c = kt_cpu();
    hadamard_inverts(c);
    kr_ctx_destroy(c);
}
END_TEST

START_TEST(gpu_pivot_ties)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_pivot_ties");
    if (!g) return;
    hadamard_inverts(g);
    kr_ctx_destroy(g);
}
END_TEST

/* A random CSR with rows longer than a warp, entries left and right of
 * each block, some empty rows (so some blocks are singular). */
static void blocky_csr(kr_ctx *ctx, int32_t n, uint64_t seed, kr_csr *A)
{
    kt_random_csr(ctx, n, n, 40, 1, seed, A);
    for (int32_t i = 7; i < n; i += 101) /* empty rows */
        for (int32_t q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
            A->val[q] = 0.0;
}

/* A's arrays in ctx's memory (copies, also on the CPU). */
static kr_gje_csr csr_on(kr_ctx *ctx, const kr_csr *A)
{
    kr_gje_csr D = {A->nrows, A->nnz, NULL, NULL, NULL};
    size_t n1 = (size_t)A->nrows + 1, nnz = (size_t)A->nnz + 1;
    ck_assert_int_eq(
        kr_dev_upload_new(ctx, A->rowptr, n1 * 4, (void **)&D.rowptr), KR_OK);
    ck_assert_int_eq(
        kr_dev_upload_new(ctx, A->colind, nnz * 4, (void **)&D.colind), KR_OK);
    ck_assert_int_eq(kr_dev_upload_new(ctx, A->val, nnz * 8, (void **)&D.val),
                     KR_OK);
    return D;
}

static void csr_free(kr_ctx *ctx, kr_gje_csr *D)
{
    kr_dev_free(ctx, (void *)D->rowptr);
    kr_dev_free(ctx, (void *)D->colind);
    kr_dev_free(ctx, (void *)D->val);
}

static void extract_on(kr_ctx *ctx, const kr_csr *A, const int32_t *s,
                       int32_t nb, double **X, int32_t **info)
{
    const kr_gje_batch_ops *ops = kr_gje_batch_ops_for(ctx);
    kr_gje_batch bb;
    ck_assert_int_eq(kr_gje_batch_create(ctx, nb, s, &bb), KR_OK);
    kr_gje_csr D = csr_on(ctx, A);
    double *dX;
    int32_t *di;
    ck_assert_int_eq(
        ctx->ops->alloc(ctx, (void **)&dX, (size_t)bb.total * 8 + 8), KR_OK);
    ck_assert_int_eq(ctx->ops->alloc(ctx, (void **)&di, (size_t)nb * 4 + 4),
                     KR_OK);
    ctx->ops->fill(ctx, (int32_t)bb.total, NAN, dX);
    ck_assert_int_eq(ops->extract_invert(ctx, &bb, &D, dX, di), KR_OK);
    *X = malloc((size_t)bb.total * 8 + 8);
    *info = malloc((size_t)nb * 4 + 4);
    ctx->ops->download(ctx, *X, dX, (size_t)bb.total * 8);
    ctx->ops->download(ctx, *info, di, (size_t)nb * 4);
    kr_dev_free(ctx, dX);
    kr_dev_free(ctx, di);
    csr_free(ctx, &D);
    kr_gje_batch_free(ctx, &bb);
}

START_TEST(gpu_extract_invert_matches_cpu)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_extract_invert_matches_cpu");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    uint64_t seed = (uint64_t)kr_wtime();
    /* every size class (precond/gje_batch.h), at and past its edges */
    const int32_t sizes[] = {5, 32, 1, 13, 8, 27, 3, 16, 2, 31, 12, 24, 21};
    const int32_t nb = 101;
    int32_t *s = starts_of(nb, sizes, 13);
    s[nb] = s[nb - 1] + 17; /* n not a multiple of anything used */
    const int32_t n = s[nb];
    kr_csr A;
    blocky_csr(c, n, seed, &A);
    double *Xg, *Xc;
    int32_t *ig, *ic, singular = 0;
    extract_on(g, &A, s, nb, &Xg, &ig);
    extract_on(c, &A, s, nb, &Xc, &ic);
    int64_t off = 0;
    for (int32_t b = 0; b < nb; b++) {
        int32_t k = s[b + 1] - s[b];
        ck_assert_int_eq(ig[b], ic[b]);
        singular += ic[b];
        if (!ic[b]) {
            double D[KMAX * KMAX];
            kr_gje_extract(&A, s[b], k, D, KR_GJE_COL_MAJOR);
            double cond = norm1(k, D) * norm1(k, Xc + off);
            ck_assert_msg(kt_rel_diff(k * k, Xg + off, Xc + off) <=
                              64.0 * k * DBL_EPSILON * cond,
                          "block %d", (int)b);
        }
        off += (int64_t)k * k;
    }
    ck_assert_int_gt(singular, 0); /* the empty rows were met */
    free(Xg);
    free(Xc);
    free(ig);
    free(ic);
    free(s);
    kr_csr_free(&A);
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

/* Z = blockdiag(X) R on ctx: k = 0 by apply (one column), else by
 * apply_multi over k columns (row-major n x k); Z poisoned first. */
static void apply_on(kr_ctx *ctx, const int32_t *s, int32_t nb, const double *X,
                     int k, const double *r, double *z)
{
    kr_gje_batch bb;
    ck_assert_int_eq(kr_gje_batch_create(ctx, nb, s, &bb), KR_OK);
    double *dX, *dr, *dz;
    size_t n = (size_t)s[nb] * (size_t)(k ? k : 1);
    ck_assert_int_eq(
        kr_dev_upload_new(ctx, X, (size_t)bb.total * 8 + 8, (void **)&dX),
        KR_OK);
    ck_assert_int_eq(kr_dev_upload_new(ctx, r, n * 8 + 8, (void **)&dr), KR_OK);
    ck_assert_int_eq(kr_dev_zeros(ctx, n + 1, &dz), KR_OK);
    ctx->ops->fill(ctx, (int32_t)n, NAN, dz);
    const kr_gje_batch_ops *ops = kr_gje_batch_ops_for(ctx);
    ck_assert_int_eq(k ? ops->apply_multi(ctx, &bb, dX, k, dr, dz)
                       : ops->apply(ctx, &bb, dX, dr, dz),
                     KR_OK);
    ctx->ops->download(ctx, z, dz, n * 8);
    kr_dev_free(ctx, dX);
    kr_dev_free(ctx, dr);
    kr_dev_free(ctx, dz);
    kr_gje_batch_free(ctx, &bb);
}

/* nb blocks of random sizes up to width (0: any size), the first of the
 * width itself; their entries in *total. */
static int32_t *random_starts(uint64_t *st, int32_t nb, int32_t width,
                              int64_t *total)
{
    int32_t sizes[64];
    for (int i = 0; i < 64; i++)
        sizes[i] =
            1 + (int32_t)(kt_rand_u64(st) % (uint64_t)(width ? width : KMAX));
    sizes[0] = width ? width : KMAX;
    int32_t *s = starts_of(nb, sizes, 64);
    *total = 0;
    for (int32_t b = 0; b < nb; b++)
        *total += (int64_t)(s[b + 1] - s[b]) * (s[b + 1] - s[b]);
    return s;
}

/* z = blockdiag(X) r on the GPU and the CPU, one batch per apply width
 * (largest block 1, 2, 3, 7, 16, 32) and a mix. */
START_TEST(gpu_apply_matches_cpu)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_apply_matches_cpu");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    uint64_t st = (uint64_t)kr_wtime();
    printf("gpu_apply_matches_cpu: seed %llu\n", (unsigned long long)st);
    const int32_t widths[] = {1, 2, 3, 7, 16, 32, 0};
    for (int t = 0; t < 7; t++) {
        int64_t total;
        int32_t nb = 3001 + t, *s = random_starts(&st, nb, widths[t], &total);
        double *X = malloc((size_t)total * 8 + 8);
        double *r = malloc((size_t)s[nb] * 8 + 8);
        double *zg = malloc((size_t)s[nb] * 8 + 8);
        double *zc = malloc((size_t)s[nb] * 8 + 8);
        for (int64_t e = 0; e < total; e++)
            X[e] = kt_rand_uniform(&st);
        for (int32_t i = 0; i < s[nb]; i++)
            r[i] = kt_rand_uniform(&st);
        apply_on(g, s, nb, X, 0, r, zg);
        apply_on(c, s, nb, X, 0, r, zc);
        ck_assert_msg(kt_rel_diff(s[nb], zg, zc) <= 1e-14, "width %d: %g",
                      widths[t], kt_rel_diff(s[nb], zg, zc));
        free(X);
        free(r);
        free(zg);
        free(zc);
        free(s);
    }
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

/* k_gje_apply_multi against the CPU's apply_multi: blocks of one width
 * or of mixed widths, k columns (seed printed). */
START_TEST(gpu_apply_multi_matches_cpu)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_apply_multi_matches_cpu");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    uint64_t st = (uint64_t)kr_wtime();
    printf("gpu_apply_multi_matches_cpu: seed %llu\n", (unsigned long long)st);
    /* k = 1, 2, 3, 8, 16 and 33: every width of column chunk (1 to 32
     * columns a pass, idle lanes past k, a second pass) */
    const int32_t widths[] = {1, 7, 32, 0, 0, 13};
    const int ks[] = {1, 3, 8, 33, 16, 2};
    for (int t = 0; t < 6; t++) {
        int64_t total;
        int32_t nb = 1001 + t, *s = random_starts(&st, nb, widths[t], &total);
        size_t nk = (size_t)s[nb] * (size_t)ks[t];
        double *X = malloc((size_t)total * 8 + 8), *R = malloc(nk * 8 + 8);
        double *zg = malloc(nk * 8 + 8), *zc = malloc(nk * 8 + 8);
        for (int64_t e = 0; e < total; e++)
            X[e] = 2.0 * kt_rand_uniform(&st) - 1.0;
        for (size_t e = 0; e < nk; e++)
            R[e] = kt_rand_uniform(&st);
        apply_on(g, s, nb, X, ks[t], R, zg);
        apply_on(c, s, nb, X, ks[t], R, zc);
        size_t e = 0;
        while (e < nk && fabs(zg[e] - zc[e]) <= 1e-12 * (1 + fabs(zc[e])))
            e++;
        ck_assert_msg(
            e == nk, "width %d, k = %d: Z entry %zu gpu %.17g cpu %.17g",
            widths[t], ks[t], e, e < nk ? zg[e] : 0.0, e < nk ? zc[e] : 0.0);
        free(X);
        free(R);
        free(zg);
        free(zc);
        free(s);
    }
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

/* Pattern flags (the parallel half of the supervariable blocking) equal
 * on both backends, and so the blocks of a bjacobi built on the GPU. */
static unsigned char *flags_on(kr_ctx *ctx, const kr_csr *A)
{
    kr_gje_csr D = csr_on(ctx, A);
    size_t n1 = (size_t)A->nrows + 1;
    unsigned char *d, *h = malloc(n1);
    ck_assert_int_eq(ctx->ops->alloc(ctx, (void **)&d, n1), KR_OK);
    ck_assert_int_eq(kr_gje_batch_ops_for(ctx)->pattern_flags(ctx, &D, d),
                     KR_OK);
    ctx->ops->download(ctx, h, d, (size_t)A->nrows);
    kr_dev_free(ctx, d);
    csr_free(ctx, &D);
    return h;
}

START_TEST(gpu_blocking_matches_cpu)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_blocking_matches_cpu");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    const char *specs[] = {"elasticity3d:7", "poisson3d:9", "powerlaw:3000"};
    for (int t = 0; t < 3; t++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(c, specs[t], &A), KR_OK);
        unsigned char *fg = flags_on(g, &A), *fc = flags_on(c, &A);
        ck_assert_int_eq(memcmp(fg, fc, (size_t)A.nrows), 0);
        kr_precond *Pg, *Pc;
        ck_assert_int_eq(kr_precond_create(g, &A, "bjacobi", &Pg), KR_OK);
        ck_assert_int_eq(kr_precond_create(c, &A, "bjacobi", &Pc), KR_OK);
        int32_t nb = kr_precond_block_count(Pc);
        ck_assert_int_eq(kr_precond_block_count(Pg), nb);
        int32_t *sg = malloc((size_t)nb * 4 + 4),
                *sc = malloc((size_t)nb * 4 + 4);
        kr_precond_block_sizes(Pg, sg);
        kr_precond_block_sizes(Pc, sc);
        ck_assert_int_eq(memcmp(sg, sc, (size_t)nb * 4), 0);
        kr_csr Xg, Xc;
        ck_assert_int_eq(kr_bjacobi_inverse_csr(g, Pg->impl, &Xg), KR_OK);
        ck_assert_int_eq(kr_bjacobi_inverse_csr(c, Pc->impl, &Xc), KR_OK);
        ck_assert_int_eq(Xg.nnz, Xc.nnz);
        ck_assert_double_le(kt_rel_diff(Xc.nnz, Xg.val, Xc.val), 1e-12);
        kr_csr_free(&Xg);
        kr_csr_free(&Xc);
        free(sg);
        free(sc);
        free(fg);
        free(fc);
        kr_precond_destroy(Pg);
        kr_precond_destroy(Pc);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

/* Singular policies on the GPU: the same blocks reported, the same
 * stand-ins written, the same message. */
START_TEST(gpu_singular_policies)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_singular_policies");
    if (!g) return;
    kr_ctx *c = kt_cpu();
    kr_csr A;
    blocky_csr(c, 3000, 5, &A);
    kr_precond_options o;
    kr_precond_options_default(&o);
    o.block_size = 24;
    o.fixed = 1;
    for (int pol = KR_SINGULAR_JACOBI; pol <= KR_SINGULAR_ERROR; pol++) {
        o.singular = (kr_singular_policy)pol;
        kr_precond *Pg = NULL, *Pc = NULL;
        kr_status sg = kr_precond_create_opts(g, &A, "bjacobi", &o, &Pg);
        kr_status sc = kr_precond_create_opts(c, &A, "bjacobi", &o, &Pc);
        ck_assert_int_eq(sg, sc);
        if (pol == KR_SINGULAR_ERROR) {
            ck_assert_int_eq(sg, KR_ERR_SINGULAR);
            ck_assert_str_eq(kr_ctx_error(g), kr_ctx_error(c));
            continue;
        }
        ck_assert_int_gt(kr_precond_singular_blocks(Pc), 0);
        ck_assert_int_eq(kr_precond_singular_blocks(Pg),
                         kr_precond_singular_blocks(Pc));
        kr_csr Xg, Xc;
        ck_assert_int_eq(kr_bjacobi_inverse_csr(g, Pg->impl, &Xg), KR_OK);
        ck_assert_int_eq(kr_bjacobi_inverse_csr(c, Pc->impl, &Xc), KR_OK);
        ck_assert_double_le(kt_rel_diff(Xc.nnz, Xg.val, Xc.val), 1e-12);
        kr_csr_free(&Xg);
        kr_csr_free(&Xc);
        kr_precond_destroy(Pg);
        kr_precond_destroy(Pc);
    }
    kr_csr_free(&A);
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gje_batch");
    TCase *tc = tcase_create("gje_batch");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, cpu_batch_inverts_and_flags);
    tcase_add_test(tc, batch_classes);
    tcase_add_test(tc, gpu_invert_matches_cpu);
    tcase_add_test(tc, cpu_pivot_ties);
    tcase_add_test(tc, gpu_pivot_ties);
    tcase_add_test(tc, gpu_extract_invert_matches_cpu);
    tcase_add_test(tc, gpu_apply_matches_cpu);
    tcase_add_test(tc, gpu_apply_multi_matches_cpu);
    tcase_add_test(tc, gpu_blocking_matches_cpu);
    tcase_add_test(tc, gpu_singular_policies);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
