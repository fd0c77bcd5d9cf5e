/* SpMM, Y = A X for k columns (kr_matrix_apply_multi): every format, in
 * A's order and in every row order, against k separate SpMVs of the same
 * matrix and against a plain host loop of A, for k from 1 to beyond 64,
 * on stencils, power-law rows (long rows crossing VSR chunks),
 * rectangular matrices, empty rows and shared matrices; SpMV with alpha
 * and beta through the orders; the orders themselves (bijections, their
 * definitions, the block distance by brute force), new values, argument
 * errors, krylov solve --permute; the SpMM features against explicit
 * block flags. X is random from a seed named on failure (the GPU tests
 * draw a fresh one and print it). On the CPU the SpMM sums each entry in
 * the order its SpMV does, so the two agree bit for bit; on the GPU
 * (skipped visibly without one) each entry must lie within the rounding
 * bound of host_reference. PELLR's GPU SpMM cuts long rows into pieces:
 * the rule and the piece lists are checked here on the CPU, and
 * gpu_long_rows runs the split against k CPU SpMVs. */
#include "spmv/format.h"
#include "spmv/pellr.h"
#include "spmv/row_order.h"
#include "spmv/spmm_rows.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const FORMATS[] = {"csr", "ellr", "pellr",
                                      "vsr", "hyb",  "auto"};
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])
/* The last, 130, only on the GPU (the CPU skips it to save time): its
 * staged SpMM kernel takes 128 columns a pass, and 130 needs a second,
 * partial one. */
static const int32_t KS[] = {1,  2,  3,  4,  7,  8,   16,
                             31, 32, 33, 64, 65, 100, 130};
#define NKS (sizeof KS / sizeof KS[0])
/* Fewer for the format x order products. */
static const int32_t KS_PERMUTED[] = {1, 3, 8, 33};
#define NKS_PERMUTED (sizeof KS_PERMUTED / sizeof KS_PERMUTED[0])

/* One matrix under test: a generator spec, or NULL with a builder. */
typedef struct case_matrix {
    const char *name;
    void (*make)(kr_ctx *ctx, kr_csr *A);
} case_matrix;

static void gen(kr_ctx *ctx, const char *spec, kr_csr *A)
{
    ck_assert_msg(kr_generate(ctx, spec, A) == KR_OK, "%s: %s", spec,
                  kr_ctx_error(ctx));
}
static void make_poisson2d(kr_ctx *c, kr_csr *A) { gen(c, "poisson2d:23", A); }
static void make_poisson3d(kr_ctx *c, kr_csr *A) { gen(c, "poisson3d:9", A); }
static void make_elastic(kr_ctx *c, kr_csr *A) { gen(c, "elasticity3d:4", A); }
static void make_powerlaw(kr_ctx *c, kr_csr *A)
{
    gen(c, "powerlaw:3000,40", A);
}
static void make_wide(kr_ctx *c, kr_csr *A)
{
    kt_random_csr(c, 150, 700, 12, 0, 5, A);
}
static void make_tall(kr_ctx *c, kr_csr *A)
{
    kt_random_csr(c, 900, 120, 6, 0, 6, A);
}

/* Empty rows between a row of 2000 entries (many VSR chunks) and short
 * rows, 77 columns fewer than rows. */
static void make_ragged(kr_ctx *ctx, kr_csr *A)
{
    const int32_t n = 400, m = 2100;
    int32_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += i == 7 ? 2000 : (i % 5 == 0 ? 0 : 1 + i % 13);
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, nnz, A), KR_OK);
    uint64_t s = 3;
    int32_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = i == 7 ? 2000 : (i % 5 == 0 ? 0 : 1 + i % 13);
        for (int32_t j = 0; j < len; j++) {
            A->colind[at] = (int32_t)((int64_t)j * m / len + i % 3) % m;
            if (j > 0 && A->colind[at] <= A->colind[at - 1])
                A->colind[at] = A->colind[at - 1] + 1;
            A->val[at++] = kt_rand_uniform(&s);
        }
        A->rowptr[i + 1] = at;
    }
}

/* Row i's length in make_long_rows: rows of 1000+ entries at scattered
 * places, rows of 63, 64 and 65 (about two pieces of PELLR's GPU SpMM),
 * rows of 3 and empty rows. */
static int32_t long_rows_len(int32_t i)
{
    switch (i) {
    case 11: return 2400;
    case 350: return 1500;
    case 699: return 1100;
    case 40: return 63;
    case 41: return 64;
    case 42: return 65;
    default: return i % 9 == 0 ? 0 : 3;
    }
}

/* 700 x 2500, the long rows' columns spread over the whole width. */
static void make_long_rows(kr_ctx *ctx, kr_csr *A)
{
    const int32_t n = 700, m = 2500;
    int32_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += long_rows_len(i);
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, nnz, A), KR_OK);
    uint64_t s = 5;
    int32_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = long_rows_len(i);
        /* steps of (m - 7) / len >= 1: increasing, below m */
        for (int32_t j = 0; j < len; j++) {
            A->colind[at] = (int32_t)((int64_t)j * (m - 7) / len) + i % 7;
            A->val[at++] = kt_rand_uniform(&s);
        }
        A->rowptr[i + 1] = at;
    }
}

static const case_matrix CASES[] = {{"poisson2d:23", make_poisson2d},
                                    {"poisson3d:9", make_poisson3d},
                                    {"elasticity3d:4", make_elastic},
                                    {"powerlaw:3000,40", make_powerlaw},
                                    {"random 150 x 700", make_wide},
                                    {"random 900 x 120", make_tall},
                                    {"ragged with empty rows", make_ragged},
                                    {"long rows among short", make_long_rows}};
#define NCASES (sizeof CASES / sizeof CASES[0])

static const char *const SHARED[] = {"bcsstk08.mtx", "memplus.mtx",
                                     "west2021.mtx", "orani678.mtx"};
#define NSHARED (sizeof SHARED / sizeof SHARED[0])

/* Row-major X (ncols x k):
 * ref = A X by the plain loop, and bound = 4 len_i eps sum_j |a_ij x_jc|,
 * twice the classical bound gamma_len for one summation order, so any
 * two orders (and fused multiply-adds) of a correct kernel stay within. */
static void host_reference(const kr_csr *A, int32_t k, const double *X,
                           double *ref, double *bound)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        for (int32_t c = 0; c < k; c++) {
            double s = 0.0, abs = 0.0;
            for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                double t = A->val[p] * X[(size_t)A->colind[p] * k + c];
                s += t;
                abs += fabs(t);
            }
            ref[(size_t)i * k + c] = s;
            bound[(size_t)i * k + c] = 4.0 * len * DBL_EPSILON * abs;
        }
    }
}

typedef struct spmm_run {
    kr_ctx *ctx;
    const kr_csr *A;
    kr_matrix *M;
    const char *what; /* names the matrix, format and permutation */
    uint64_t seed;
    const int32_t *ks; /* the k to try */
    size_t nks;
} spmm_run;

/* Y by apply_multi, and Ycols by k SpMVs of X's columns. */
static void apply_both(const spmm_run *r, int32_t k, const double *X, double *Y,
                       double *Ycols)
{
    int32_t n = r->A->nrows, m = r->A->ncols;
    kr_vec *vX, *vY, *x, *y;
    ck_assert_int_eq(kr_vec_create(r->ctx, m * k, &vX), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, n * k, &vY), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, m, &x), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, n, &y), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vX, X), KR_OK);
    ck_assert_int_eq(kr_vec_fill(vY, NAN), KR_OK); /* Y is overwritten */
    ck_assert_msg(kr_matrix_apply_multi(r->M, k, vX, vY) == KR_OK,
                  "%s, k = %d: %s", r->what, (int)k, kr_ctx_error(r->ctx));
    ck_assert_int_eq(kr_vec_download(vY, Y), KR_OK);
    double *col = malloc(((size_t)(n > m ? n : m) + 1) * sizeof *col);
    for (int32_t c = 0; c < k; c++) {
        for (int32_t j = 0; j < m; j++)
            col[j] = X[(size_t)j * k + c];
        ck_assert_int_eq(kr_vec_upload(x, col), KR_OK);
        ck_assert_int_eq(kr_vec_fill(y, NAN), KR_OK);
        ck_assert_int_eq(kr_matrix_apply(r->M, 1.0, x, 0.0, y), KR_OK);
        ck_assert_int_eq(kr_vec_download(y, col), KR_OK);
        for (int32_t i = 0; i < n; i++)
            Ycols[(size_t)i * k + c] = col[i];
    }
    free(col);
    kr_vec_destroy(vX);
    kr_vec_destroy(vY);
    kr_vec_destroy(x);
    kr_vec_destroy(y);
}

/* Every k of KS: the SpMM equals the k SpMVs (bitwise on the CPU) and
 * the host loop within the bound. */
static void check_matrix(const spmm_run *r)
{
    int32_t n = r->A->nrows, m = r->A->ncols;
    int exact = kr_ctx_device(r->ctx) == KR_DEVICE_CPU;
    for (size_t t = 0; t < r->nks; t++) {
        int32_t k = r->ks[t];
        size_t nk = (size_t)n * k + 1, mk = (size_t)m * k + 1;
        double *X = malloc(mk * 8), *Y = malloc(nk * 8), *Yc = malloc(nk * 8);
        double *ref = malloc(nk * 8), *bound = malloc(nk * 8);
        uint64_t s = r->seed + (uint64_t)k;
        for (size_t j = 0; j + 1 < mk; j++)
            X[j] = kt_rand_uniform(&s);
        host_reference(r->A, k, X, ref, bound);
        apply_both(r, k, X, Y, Yc);
        /* Check records every assertion, so scan first, assert once */
        size_t e = 0;
        while (e + 1 < nk && (!exact || memcmp(&Y[e], &Yc[e], 8) == 0) &&
               fabs(Y[e] - ref[e]) <= bound[e] &&
               fabs(Yc[e] - ref[e]) <= bound[e])
            e++;
        ck_assert_msg(e + 1 == nk,
                      "%s, X from seed %llu, k = %d: Y(%d,%d) = %.17g, its "
                      "SpMV %.17g, the host loop %.17g (required: within "
                      "%.3g of the host loop%s)",
                      r->what, (unsigned long long)(r->seed + (uint64_t)k),
                      (int)k, (int)(e / (size_t)k) + 1,
                      (int)(e % (size_t)k) + 1, Y[e], Yc[e], ref[e], bound[e],
                      exact ? ", SpMM = SpMV bit for bit" : "");
        free(X);
        free(Y);
        free(Yc);
        free(ref);
        free(bound);
    }
}

/* y = alpha A x + beta y0 through M against the host loop, within the
 * bound scaled by |alpha| plus the rounding of the final sum. */
static void check_alpha_beta(const spmm_run *r)
{
    int32_t n = r->A->nrows, m = r->A->ncols;
    double *x = malloc(((size_t)m + 1) * 8), *y = malloc(((size_t)n + 1) * 8);
    double *ref = malloc(((size_t)n + 1) * 8), *b = malloc(((size_t)n + 1) * 8);
    double *y0 = malloc(((size_t)n + 1) * 8);
    uint64_t s = r->seed;
    for (int32_t j = 0; j < m; j++)
        x[j] = kt_rand_uniform(&s);
    for (int32_t i = 0; i < n; i++)
        y0[i] = kt_rand_uniform(&s);
    host_reference(r->A, 1, x, ref, b);
    kr_vec *vx, *vy;
    ck_assert_int_eq(kr_vec_create(r->ctx, m, &vx), KR_OK);
    ck_assert_int_eq(kr_vec_create(r->ctx, n, &vy), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vx, x), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vy, y0), KR_OK);
    ck_assert_int_eq(kr_matrix_apply(r->M, -2.0, vx, 0.5, vy), KR_OK);
    ck_assert_int_eq(kr_vec_download(vy, y), KR_OK);
    int32_t i = 0;
    while (i < n && fabs(y[i] - (-2.0 * ref[i] + 0.5 * y0[i])) <=
                        2.0 * b[i] + 4.0 * DBL_EPSILON *
                                         (2.0 * fabs(ref[i]) + fabs(y0[i])))
        i++;
    ck_assert_msg(i == n, "%s, seed %llu: y(%d) = %.17g for -2 A x + y0/2",
                  r->what, (unsigned long long)r->seed, (int)i + 1,
                  i < n ? y[i] : 0.0);
    kr_vec_destroy(vx);
    kr_vec_destroy(vy);
    free(x);
    free(y);
    free(ref);
    free(b);
    free(y0);
}

/* A in one format and row order; NULL when ellr refuses A's padding. */
static kr_matrix *make_matrix(kr_ctx *ctx, const kr_csr *A, const char *name,
                              const char *format, const char *order)
{
    kr_matrix_options o;
    kr_matrix_options_default(&o);
    o.format = format;
    o.permute = order;
    kr_matrix *M;
    kr_status st = kr_matrix_create_opts(ctx, A, &o, &M);
    if (st == KR_ERR_UNSUPPORTED && strcmp(format, "ellr") == 0) return NULL;
    ck_assert_msg(st == KR_OK, "%s, %s, %s: %s", name, format,
                  order ? order : "no order", kr_ctx_error(ctx));
    ck_assert_str_eq(kr_matrix_permutation(M), order ? order : "none");
    ck_assert_str_eq(kr_matrix_format_requested(M), format);
    ck_assert(kr_matrix_permute_seconds(M) >= 0.0);
    ck_assert(kr_matrix_permute_seconds(M) <= kr_matrix_build_seconds(M));
    return M;
}

/* Each format of FORMATS on A in A's order (every k of KS), then in
 * every row order (KS_PERMUTED), each also through alpha and beta. */
static void check_formats(kr_ctx *ctx, const kr_csr *A, const char *name,
                          uint64_t seed)
{
    const char *const *orders = kr_permute_names();
    size_t nks = kr_ctx_device(ctx) == KR_DEVICE_CPU ? NKS - 1 : NKS;
    for (size_t f = 0; f < NFORMATS; f++)
        for (size_t o = 0; orders[o]; o++) {
            const char *order = o == 0 ? NULL : orders[o];
            kr_matrix *M = make_matrix(ctx, A, name, FORMATS[f], order);
            if (!M) continue;
            char what[256];
            snprintf(what, sizeof what, "%s as %s, rows in order %s", name,
                     FORMATS[f], order ? order : "none");
            spmm_run r = {ctx,
                          A,
                          M,
                          what,
                          seed + f * 16 + o,
                          o == 0 ? KS : KS_PERMUTED,
                          o == 0 ? nks : NKS_PERMUTED};
            check_matrix(&r);
            check_alpha_beta(&r);
            kr_matrix_destroy(M);
        }
}

static void check_cases(kr_ctx *ctx, uint64_t seed)
{
    for (size_t i = 0; i < NCASES; i++) {
        kr_csr A;
        CASES[i].make(ctx, &A);
        check_formats(ctx, &A, CASES[i].name, seed);
        kr_csr_free(&A);
    }
}

static void check_shared(kr_ctx *ctx, const char *test, uint64_t seed)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip(test, "no matrix folder");
        return;
    }
    for (size_t i = 0; i < NSHARED; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, SHARED[i]);
        kr_csr A;
        ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        check_formats(ctx, &A, SHARED[i], seed);
        kr_csr_free(&A);
    }
}

/* The GPU tests draw X afresh each run, from a seed they print (a failure
 * names the seed of its X as well). */
static uint64_t fresh_seed(const char *test)
{
    uint64_t seed = (uint64_t)time(NULL) * 1000003u;
    printf("%s: seed %llu\n", test, (unsigned long long)seed);
    return seed;
}

START_TEST(cpu_generated)
{
    kr_ctx *ctx = kt_cpu();
    check_cases(ctx, 1000);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(cpu_shared)
{
    kr_ctx *ctx = kt_cpu();
    check_shared(ctx, "cpu_shared", 1000);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Also with 4 columns a lane forced (KRYLOV_SPMM_QUADS=1): on matrices
 * this small the SpMM would pick 2. */
START_TEST(gpu_generated)
{
    kr_ctx *ctx = kt_gpu_or_skip("gpu_generated");
    if (!ctx) return;
    check_cases(ctx, fresh_seed("gpu_generated"));
    setenv("KRYLOV_SPMM_QUADS", "1", 1);
    check_cases(ctx, fresh_seed("gpu_generated, 4 columns a lane"));
    unsetenv("KRYLOV_SPMM_QUADS");
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(gpu_shared)
{
    kr_ctx *ctx = kt_gpu_or_skip("gpu_shared");
    if (!ctx) return;
    check_shared(ctx, "gpu_shared", fresh_seed("gpu_shared"));
    kr_ctx_destroy(ctx);
}
END_TEST

/* PELLR's GPU SpMM cuts long rows into pieces and adds the pieces' sums
 * in a finish kernel, so a split row's sum runs in another order than the
 * CPU's: there it must match k CPU SpMVs within host_reference's bound,
 * no longer bit for bit. The k repeat 8 after 64 (a work array wider than
 * k) and end with 65 (beyond the split's limit: unsplit). */
static const int32_t KS_LONG[] = {1, 3, 4, 8, 31, 32, 33, 64, 8, 65};
#define NKS_LONG (sizeof KS_LONG / sizeof KS_LONG[0])

/* Y of the GPU SpMM against Yc of the CPU SpMVs and the host loop. */
static void compare_long(const char *what, uint64_t seed, int32_t k,
                         size_t count, const double *Y, const double *Yc,
                         const double *ref, const double *bound)
{
    size_t e = 0;
    while (e < count && fabs(Y[e] - Yc[e]) <= bound[e] &&
           fabs(Y[e] - ref[e]) <= bound[e])
        e++;
    ck_assert_msg(e == count,
                  "%s, X from seed %llu, k = %d: GPU Y(%d,%d) = %.17g, the "
                  "CPU SpMV %.17g, the host loop %.17g (required: within "
                  "%.3g of both)",
                  what, (unsigned long long)seed, (int)k, (int)(e / k) + 1,
                  (int)(e % k) + 1, Y[e], Yc[e], ref[e], bound[e]);
}

/* G (a GPU pellr matrix of A) against C (A as pellr on the CPU): for each
 * k of KS_LONG, the GPU SpMM within the bound of k CPU SpMVs, which still
 * equal the CPU SpMM bit for bit. */
static void check_long(kr_matrix *G, kr_matrix *C, const kr_csr *A,
                       const char *what, uint64_t seed)
{
    int32_t n = A->nrows, m = A->ncols;
    for (size_t t = 0; t < NKS_LONG; t++) {
        int32_t k = KS_LONG[t];
        size_t nk = (size_t)n * k + 1, mk = (size_t)m * k + 1;
        double *X = malloc(mk * 8), *Y = malloc(nk * 8), *Yg = malloc(nk * 8);
        double *Yc = malloc(nk * 8), *Ycs = malloc(nk * 8);
        double *ref = malloc(nk * 8), *bound = malloc(nk * 8);
        uint64_t s = seed + (uint64_t)k;
        for (size_t j = 0; j + 1 < mk; j++)
            X[j] = kt_rand_uniform(&s);
        host_reference(A, k, X, ref, bound);
        spmm_run rg = {G->ctx, A, G, what, seed, KS_LONG, NKS_LONG};
        spmm_run rc = {C->ctx, A, C, what, seed, KS_LONG, NKS_LONG};
        apply_both(&rg, k, X, Y, Yg);
        apply_both(&rc, k, X, Ycs, Yc);
        ck_assert_msg(memcmp(Ycs, Yc, (nk - 1) * 8) == 0,
                      "%s, k = %d: the CPU SpMM differs from its SpMVs", what,
                      (int)k);
        compare_long(what, seed + (uint64_t)k, k, nk - 1, Y, Yc, ref, bound);
        compare_long(what, seed + (uint64_t)k, k, nk - 1, Yg, Yc, ref, bound);
        free(X);
        free(Y);
        free(Yg);
        free(Yc);
        free(Ycs);
        free(ref);
        free(bound);
    }
}

/* A as pellr on the GPU, built on the host and on the device, with its
 * long rows split, against the CPU. */
static void check_long_builds(kr_ctx *g, kr_ctx *cpu, const kr_csr *A,
                              const char *name, uint64_t seed)
{
    kr_matrix *C;
    ck_assert_int_eq(kr_matrix_create(cpu, A, "pellr", &C), KR_OK);
    const kr_build builds[] = {KR_BUILD_HOST, KR_BUILD_DEVICE};
    for (int b = 0; b < 2; b++) {
        char what[160];
        snprintf(what, sizeof what, "%s as pellr, built on the %s", name,
                 b ? "device" : "host");
        ck_assert_int_eq(kr_ctx_set_build(g, builds[b]), KR_OK);
        kr_matrix *G;
        ck_assert_msg(kr_matrix_create(g, A, "pellr", &G) == KR_OK, "%s: %s",
                      what, kr_ctx_error(g));
        int32_t rows;
        ck_assert_msg(kr_matrix_split_pieces(G, &rows) > 0 && rows > 0,
                      "%s: no long row was split", what);
        check_long(G, C, A, what, seed);
        kr_matrix_destroy(G);
    }
    ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_HOST), KR_OK);
    kr_matrix_destroy(C);
}

START_TEST(gpu_long_rows)
{
    kr_ctx *g = kt_gpu_or_skip("gpu_long_rows");
    if (!g) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = fresh_seed("gpu_long_rows");
    kr_csr A;
    make_long_rows(g, &A);
    check_long_builds(g, cpu, &A, "long rows among short", seed);
    kr_csr_free(&A);
    gen(g, "arrow:3000,4", &A);
    check_long_builds(g, cpu, &A, "arrow:3000,4", seed + 1);
    kr_csr_free(&A);
    const char *dir = kt_matrices_dir();
    const char *const real[] = {"memplus.mtx", "bcsstk38.mtx"};
    for (size_t i = 0; dir && i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, real[i]);
        ck_assert_msg(kr_read_mtx(g, path, &A) == KR_OK, "%s", kr_ctx_error(g));
        check_long_builds(g, cpu, &A, real[i], seed + 2 + i);
        kr_csr_free(&A);
    }
    if (!dir) printf("gpu_long_rows: no matrix folder, generated ones only\n");
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(g);
}
END_TEST

/* The rows PELLR's GPU SpMM splits, counted by brute force over A's rows
 * in A's order: at least KR_SPMM_LONG_MIN entries and KR_SPMM_LONG_FACTOR
 * times the mean. */
static int32_t long_rows_brute(const kr_csr *A)
{
    int32_t count = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        if (len >= KR_SPMM_LONG_MIN &&
            (double)len >= KR_SPMM_LONG_FACTOR * ((double)A->nnz / A->nrows))
            count++;
    }
    return count;
}

/* The split of A's PELLR layout: the count by brute force, and pieces of
 * KR_SPMM_PIECE entries (the last one 1..KR_SPMM_PIECE) that cover each
 * long row exactly, in order. Returns the rows split. */
static int32_t check_split_lists(kr_ctx *ctx, const kr_csr *A, const char *name)
{
    kr_pellr_host P;
    ck_assert_int_eq(kr_pellr_host_build(ctx, A, &P), KR_OK);
    int32_t nsplit = kr_ell_split_count(P.rl, P.nrows, P.nnz);
    ck_assert_msg(nsplit == long_rows_brute(A), "%s: %d rows split, %d long",
                  name, (int)nsplit, (int)long_rows_brute(A));
    int32_t *start, *piece, count;
    ck_assert_int_eq(
        kr_ell_split_lists(ctx, P.rl, nsplit, &start, &piece, &count), KR_OK);
    ck_assert_int_eq(start[0], 0);
    ck_assert_int_eq(start[nsplit], count);
    for (int32_t p = 0; p < nsplit; p++) {
        int32_t pieces = start[p + 1] - start[p];
        ck_assert_msg(pieces >= 2 &&
                          (int64_t)(pieces - 1) * KR_SPMM_PIECE < P.rl[p] &&
                          P.rl[p] <= (int64_t)pieces * KR_SPMM_PIECE,
                      "%s: row %d of %d entries in %d pieces", name,
                      (int)P.perm[p] + 1, (int)P.rl[p], (int)pieces);
        for (int32_t q = start[p]; q < start[p + 1]; q++) {
            int32_t first = (q - start[p]) * KR_SPMM_PIECE;
            int32_t end =
                q + 1 < start[p + 1] ? first + KR_SPMM_PIECE : P.rl[p];
            ck_assert_int_eq(piece[3 * q], p);
            ck_assert_int_eq(piece[3 * q + 1], first);
            ck_assert_int_eq(piece[3 * q + 2], end);
        }
    }
    free(start);
    free(piece);
    kr_pellr_host_free(&P);
    return nsplit;
}

START_TEST(split_rule_and_pieces)
{
    kr_ctx *ctx = kt_cpu();
    for (size_t i = 0; i < NCASES; i++) {
        kr_csr A;
        CASES[i].make(ctx, &A);
        int32_t nsplit = check_split_lists(ctx, &A, CASES[i].name);
        /* even rows have none; 2400 entries against a mean of 10 do */
        if (CASES[i].make == make_poisson3d) ck_assert_int_eq(nsplit, 0);
        if (CASES[i].make == make_long_rows) ck_assert_int_ge(nsplit, 3);
        kr_csr_free(&A);
    }
    kr_csr A;
    gen(ctx, "arrow:3000,4", &A);
    ck_assert_int_eq(check_split_lists(ctx, &A, "arrow:3000,4"), 4);
    kr_csr_free(&A);
    const char *dir = kt_matrices_dir();
    const char *const real[] = {"memplus.mtx", "bcsstk38.mtx"};
    for (size_t i = 0; dir && i < 2; i++) { /* gpu_long_rows needs rows */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, real[i]);
        ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
        ck_assert_int_gt(check_split_lists(ctx, &A, real[i]), 0);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every order of every generated case is a bijection of 0..n-1; plain is
 * sorted longest first; flipped alternates plain's two ends; a block of
 * lpt never carries more nonzeros than plain's first (the 32 longest). */
START_TEST(orders_are_bijections)
{
    kr_ctx *ctx = kt_cpu();
    const char *const *orders = kr_permute_names();
    for (size_t i = 0; i < NCASES; i++) {
        kr_csr A;
        CASES[i].make(ctx, &A);
        int32_t n = A.nrows;
        int32_t *ord = malloc((size_t)n * 4), *plain = malloc((size_t)n * 4);
        char *seen = malloc((size_t)n);
        ck_assert_int_eq(kr_row_order(ctx, &A, "plain", plain), KR_OK);
        for (size_t o = 0; orders[o]; o++) {
            ck_assert_int_eq(kr_row_order(ctx, &A, orders[o], ord), KR_OK);
            memset(seen, 0, (size_t)n);
            for (int32_t p = 0; p < n; p++) {
                ck_assert_msg(ord[p] >= 0 && ord[p] < n && !seen[ord[p]],
                              "%s, order %s: position %d holds row %d twice "
                              "or out of range",
                              CASES[i].name, orders[o], (int)p + 1,
                              (int)ord[p] + 1);
                seen[ord[p]] = 1;
            }
        }
        for (int32_t p = 1; p < n; p++)
            ck_assert_int_ge(A.rowptr[plain[p - 1] + 1] -
                                 A.rowptr[plain[p - 1]],
                             A.rowptr[plain[p] + 1] - A.rowptr[plain[p]]);
        ck_assert_int_eq(kr_row_order(ctx, &A, "flipped", ord), KR_OK);
        for (int32_t p = 0; p < n; p++)
            ck_assert_int_eq(ord[p],
                             p % 2 ? plain[n - 1 - p / 2] : plain[p / 2]);
        ck_assert_int_eq(kr_row_order(ctx, &A, "lpt", ord), KR_OK);
        int64_t top = 0;
        for (int32_t p = 0; p < n && p < KR_ORDER_CTA_ROWS; p++)
            top += A.rowptr[plain[p] + 1] - A.rowptr[plain[p]];
        for (int32_t b = 0; b < n; b += KR_ORDER_CTA_ROWS) {
            int64_t load = 0;
            for (int32_t p = b; p < n && p < b + KR_ORDER_CTA_ROWS; p++)
                load += A.rowptr[ord[p] + 1] - A.rowptr[ord[p]];
            ck_assert_int_le(load, top);
        }
        free(ord);
        free(plain);
        free(seen);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* The block distance against a count over explicit block flags, and the
 * stamped distances of one row to many (the grouping's) against both. */
START_TEST(block_distance_brute_force)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 60, 300, 9, 0, 21, &A);
    const int32_t nb = (300 + 31) / 32;
    int32_t stamp[16] = {0}, rows[60], dist[60];
    for (int32_t b = 0; b < A.nrows; b++)
        rows[b] = b;
    for (int32_t a = 0; a < A.nrows; a++) {
        kr_row_block_distances(&A, a, rows, A.nrows, stamp, a + 1, dist);
        for (int32_t b = 0; b < A.nrows; b++) {
            char fa[16] = {0}, fb[16] = {0};
            for (int32_t p = A.rowptr[a]; p < A.rowptr[a + 1]; p++)
                fa[A.colind[p] / 32] = 1;
            for (int32_t p = A.rowptr[b]; p < A.rowptr[b + 1]; p++)
                fb[A.colind[p] / 32] = 1;
            int32_t d = 0;
            for (int32_t j = 0; j < nb; j++)
                d += fa[j] != fb[j];
            ck_assert_int_eq(kr_row_block_distance(&A, a, b), d);
            ck_assert_int_eq(dist[b], d);
        }
    }
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* New values through a permuted matrix; unknown orders and bad option
 * sizes refused with the valid names. */
START_TEST(permuted_update_and_errors)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    gen(ctx, "powerlaw:500,8", &A);
    kr_matrix_options o;
    kr_matrix_options_default(&o);
    o.format = "vsr";
    o.permute = "lpt-warp";
    kr_matrix *M;
    ck_assert_int_eq(kr_matrix_create_opts(ctx, &A, &o, &M), KR_OK);
    for (int32_t p = 0; p < A.nnz; p++)
        A.val[p] = 1.0 + p % 7;
    ck_assert_int_eq(kr_matrix_update_values(M, &A), KR_OK);
    char what[] = "powerlaw:500,8 as vsr in lpt-warp after new values";
    spmm_run r = {ctx, &A, M, what, 77, KS_PERMUTED, NKS_PERMUTED};
    check_matrix(&r);
    kr_csr_view v;
    ck_assert_int_eq(kr_matrix_csr_view(M, &v), KR_ERR_UNSUPPORTED);
    kr_matrix_destroy(M);
    o.permute = "sideways";
    ck_assert_int_eq(kr_matrix_create_opts(ctx, &A, &o, &M), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "'sideways'"));
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "lpt-warp"));
    o.permute = "cta";
    o.size = 3;
    ck_assert_int_eq(kr_matrix_create_opts(ctx, &A, &o, &M), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_create_opts(ctx, &A, NULL, &M), KR_OK);
    ck_assert_str_eq(kr_matrix_permutation(M), "none");
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* krylov solve --permute: the report names the order and its time; with
 * csr on the CPU each row is summed as before, so the iterations match. */
START_TEST(solve_with_row_orders)
{
    const char *const *orders = kr_permute_names();
    double iterations = -1;
    for (size_t o = 0; orders[o]; o++) {
        kt_output r = kt_command(NULL, kt_krylov_bin(), NULL,
                                 "solve --gen powerlaw:800,9 --device cpu "
                                 "--format csr --method bicgstab --json "
                                 "--permute %s",
                                 orders[o]);
        ck_assert_msg(r.rc == 0, "%s: %s", orders[o], r.err);
        char want[64];
        snprintf(want, sizeof want, "\"permutation\": \"%s\"", orders[o]);
        ck_assert_msg(strstr(r.out, want), "%s", r.out);
        ck_assert(kt_num_after(r.out, "\"permute_seconds\"") >= 0.0);
        double it = kt_num_after(r.out, "\"iterations\"");
        if (iterations < 0) iterations = it;
        ck_assert_msg(it == iterations, "%s: %g iterations, none: %g",
                      orders[o], it, iterations);
        kt_output_free(&r);
    }
    kt_output r = kt_command(NULL, kt_krylov_bin(), NULL,
                             "solve --gen poisson2d:9 --device cpu "
                             "--permute cta --format hyb");
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "row order:               cta\n"));
    kt_output_free(&r);
    r = kt_command(NULL, kt_krylov_bin(), NULL,
                   "solve --gen poisson2d:9 --permute diagonal");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "lpt-warp"));
    kt_output_free(&r);
}
END_TEST

/* ---------------------------------------------- features, brute force */

/* flags[b] = 1 for each 32-column block rows [r0, r1) of A touch. */
static int32_t count_blocks(const kr_csr *A, int32_t r0, int32_t r1,
                            char *flags)
{
    int32_t nb = A->ncols / 32 + 1, n = 0;
    memset(flags, 0, (size_t)nb);
    for (int32_t i = r0; i < r1; i++)
        for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            flags[A->colind[p] / 32] = 1;
    for (int32_t b = 0; b < nb; b++)
        n += flags[b];
    return n;
}

static void expect3(const kr_stat3 *s, double lo, double sum, double hi,
                    int64_t n, const char *what)
{
    double mean = n ? sum / (double)n : 0.0;
    if (!n) lo = hi = 0.0;
    ck_assert_msg(s->min == lo && s->max == hi &&
                      fabs(s->mean - mean) <= 1e-12 * fabs(mean),
                  "%s: min %g mean %g max %g, expected %g %g %g", what, s->min,
                  s->mean, s->max, lo, mean, hi);
}

typedef struct brute3 {
    double lo, sum, hi;
    int64_t n;
} brute3;

static void brute_add(brute3 *b, double v)
{
    b->lo = b->n == 0 || v < b->lo ? v : b->lo;
    b->hi = b->n == 0 || v > b->hi ? v : b->hi;
    b->sum += v;
    b->n++;
}

/* Every feature by explicit block flags per row and per warp. */
static void check_features(kr_ctx *ctx, const kr_csr *A, const char *name)
{
    kr_spmm_features f;
    ck_assert_int_eq(kr_csr_spmm_features(ctx, A, &f), KR_OK);
    char *fa = malloc((size_t)A->ncols / 32 + 1);
    char *fb = malloc((size_t)A->ncols / 32 + 1);
    brute3 rn = {0}, rb = {0}, wn = {0}, wb = {0}, wi = {0}, nd = {0};
    for (int32_t i = 0; i < A->nrows; i++) {
        brute_add(&rn, A->rowptr[i + 1] - A->rowptr[i]);
        brute_add(&rb, count_blocks(A, i, i + 1, fa));
        if (i == 0) continue;
        count_blocks(A, i - 1, i, fb);
        int32_t d = 0;
        for (int32_t b = 0; b <= A->ncols / 32; b++)
            d += fa[b] != fb[b];
        brute_add(&nd, d);
    }
    for (int32_t r0 = 0; r0 < A->nrows; r0 += 32) {
        int32_t r1 = r0 + 32 < A->nrows ? r0 + 32 : A->nrows, longest = 0;
        int64_t nnz = A->rowptr[r1] - A->rowptr[r0];
        for (int32_t i = r0; i < r1; i++)
            if (A->rowptr[i + 1] - A->rowptr[i] > longest)
                longest = A->rowptr[i + 1] - A->rowptr[i];
        brute_add(&wn, (double)nnz);
        brute_add(&wb, count_blocks(A, r0, r1, fa));
        if (nnz > 0) brute_add(&wi, (double)(r1 - r0) * longest / nnz);
    }
    ck_assert_int_eq(f.nnz, A->nnz);
    ck_assert(fabs(f.density - (double)A->nnz / A->nrows / A->ncols) <= 1e-15);
    expect3(&f.row_nnz, rn.lo, rn.sum, rn.hi, rn.n, name);
    expect3(&f.row_blocks, rb.lo, rb.sum, rb.hi, rb.n, name);
    expect3(&f.neighbour_distance, nd.lo, nd.sum, nd.hi, nd.n, name);
    expect3(&f.warp_nnz, wn.lo, wn.sum, wn.hi, wn.n, name);
    expect3(&f.warp_blocks, wb.lo, wb.sum, wb.hi, wb.n, name);
    expect3(&f.warp_imbalance, wi.lo, wi.sum, wi.hi, wi.n, name);
    free(fa);
    free(fb);
}

START_TEST(features_brute_force)
{
    kr_ctx *ctx = kt_cpu();
    for (size_t i = 0; i < NCASES; i++) {
        kr_csr A;
        CASES[i].make(ctx, &A);
        check_features(ctx, &A, CASES[i].name);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* krylov analyze reports the features (text and JSON). */
START_TEST(analyze_reports_features)
{
    const char *dir = kt_tmpdir();
    kt_output r = kt_command(NULL, kt_krylov_bin(), dir,
                             "gen poisson2d:10 -o %s/p.mtx", dir);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    kt_output_free(&r);
    r = kt_command(NULL, kt_krylov_bin(), dir, "analyze %s/p.mtx --json", dir);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    const char *f = strstr(r.out, "\"spmm_features\"");
    ck_assert_ptr_nonnull(f);
    /* 460 nonzeros over 100 rows */
    ck_assert_double_eq_tol(kt_num_after(strstr(f, "\"row_nnz\""), "\"mean\""),
                            4.6, 1e-12);
    kt_output_free(&r);
    r = kt_command(NULL, kt_krylov_bin(), dir, "analyze %s/p.mtx", dir);
    ck_assert_ptr_nonnull(strstr(r.out, "spmm:         warp imbalance mean"));
    kt_output_free(&r);
}
END_TEST

static kr_status identity_op(void *user, const kr_vec *x, kr_vec *y)
{
    (void)user;
    memcpy(kr_vec_data(y), kr_vec_data(x), 20 * sizeof(double));
    return KR_OK;
}

/* k < 1, wrong sizes, X == Y, NULL, another context, a user operator. */
START_TEST(argument_errors)
{
    kr_ctx *ctx = kt_cpu(), *other = kt_cpu();
    kr_csr A;
    kt_random_csr(ctx, 30, 20, 4, 0, 8, &A);
    kr_matrix *M, *U;
    ck_assert_int_eq(kr_matrix_create(ctx, &A, "csr", &M), KR_OK);
    kr_vec *X, *Y, *Xo, *Ybad;
    ck_assert_int_eq(kr_vec_create(ctx, 20 * 3, &X), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 30 * 3, &Y), KR_OK);
    ck_assert_int_eq(kr_vec_create(ctx, 30 * 2, &Ybad), KR_OK);
    ck_assert_int_eq(kr_vec_create(other, 20 * 3, &Xo), KR_OK);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 0, X, Y), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "k = 0"));
    ck_assert_int_eq(kr_matrix_apply_multi(M, -1, X, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, Ybad), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "X needs 60"));
    ck_assert_int_eq(kr_matrix_apply_multi(M, 2, X, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, X), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, NULL, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, NULL), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(NULL, 3, X, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, Xo, Y), KR_ERR_ARG);
    ck_assert_int_eq(kr_matrix_apply_multi(M, 3, X, Y), KR_OK);
    ck_assert_int_eq(kr_matrix_create_user(ctx, 20, 20, identity_op, NULL, &U),
                     KR_OK);
    ck_assert_int_eq(kr_matrix_apply_multi(U, 3, X, Xo), KR_ERR_ARG);
    kr_vec *X2;
    ck_assert_int_eq(kr_vec_create(ctx, 20 * 3, &X2), KR_OK);
    ck_assert_int_eq(kr_matrix_apply_multi(U, 3, X, X2), KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "user"));
    kr_vec_destroy(X2);
    kr_matrix_destroy(U);
    kr_vec_destroy(X);
    kr_vec_destroy(Y);
    kr_vec_destroy(Xo);
    kr_vec_destroy(Ybad);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(other);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spmm");
    TCase *tc = tcase_create("spmm");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, cpu_generated);
    tcase_add_test(tc, cpu_shared);
    tcase_add_test(tc, gpu_generated);
    tcase_add_test(tc, gpu_shared);
    tcase_add_test(tc, gpu_long_rows);
    tcase_add_test(tc, split_rule_and_pieces);
    tcase_add_test(tc, argument_errors);
    tcase_add_test(tc, orders_are_bijections);
    tcase_add_test(tc, block_distance_brute_force);
    tcase_add_test(tc, permuted_update_and_errors);
    tcase_add_test(tc, solve_with_row_orders);
    tcase_add_test(tc, features_brute_force);
    tcase_add_test(tc, analyze_reports_features);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
