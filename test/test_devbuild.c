/* Setup on the device (KR_BUILD_DEVICE): every format built on the GPU
 * from the uploaded CSR equals its host build entry for entry (every
 * device array downloaded and compared), auto's statistics equal the
 * host's, and Jacobi / block-Jacobi set up from any format's CSR view
 * equal those set up from host CSR. The GPU tests skip visibly without a
 * GPU; the switch itself, and the rules the device build relies on (HYB's
 * width as an order statistic, PELLR's order as a stable sort), are
 * checked on the CPU. */
#include "precond/precond.h"
#include "spmv/auto.h"
#include "spmv/devbuild.h"
#include "spmv/format.h"
#include "spmv/hyb.h"
#include "spmv/pellr.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARRAYS 16

static const char *const formats[] = {"csr", "ellr", "pellr",
                                      "vsr", "hyb",  "auto"};
#define NFORMATS (sizeof formats / sizeof *formats)

/* ------------------------------------------------------------ matrices */

/* Row i has i % period entries (0 for every period-th row: empty rows),
 * random columns in [0, ncols), sorted by construction. */
static void uneven_csr(kr_ctx *ctx, int32_t n, int32_t ncols, int32_t period,
                       uint64_t seed, kr_csr *A)
{
    int64_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += i % period < ncols ? i % period : ncols;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, ncols, (int32_t)nnz, A), KR_OK);
    uint64_t s = seed;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = i % period < ncols ? i % period : ncols;
        int32_t step = ncols / (len + 1) > 0 ? ncols / (len + 1) : 1;
        int32_t first = (int32_t)(kt_rand_u64(&s) % (uint64_t)step);
        for (int32_t j = 0; j < len; j++) {
            A->colind[k] = first + j * step;
            A->val[k++] = kt_rand_uniform(&s);
        }
        A->rowptr[i + 1] = k;
    }
}

typedef struct case_matrix {
    char name[64];
    kr_csr A;
} case_matrix;

/* Generated stencils, powerlaw (long rows), empty rows, rectangular
 * shapes, and the shared matrices when the folder is there. */
static int load_cases(kr_ctx *ctx, uint64_t seed, case_matrix *c, int max)
{
    const char *specs[] = {"poisson2d:40",      "poisson3d:12",
                           "poisson3d27:10",    "elasticity3d:6",
                           "powerlaw:20000,12", "powerlaw:3000,200"};
    int n = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs && n < max; i++, n++) {
        snprintf(c[n].name, sizeof c[n].name, "%s", specs[i]);
        ck_assert_int_eq(kr_generate(ctx, specs[i], &c[n].A), KR_OK);
    }
    const int32_t shapes[][3] = {
        {1, 1, 2},       {0, 5, 1},      {7, 3, 4},          {33, 100, 40},
        {5000, 5000, 9}, {4000, 300, 7}, {100000, 100000, 3}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes && n < max; i++) {
        snprintf(c[n].name, sizeof c[n].name, "uneven %dx%d/%d", shapes[i][0],
                 shapes[i][1], shapes[i][2]);
        uneven_csr(ctx, shapes[i][0], shapes[i][1], shapes[i][2], seed + i,
                   &c[n++].A);
    }
    const char *dir = kt_matrices_dir();
    const char *names[] = {"bcsstk18", "memplus", "utm5940", "cage9",
                           "rdb3200l", "add32",   "olm1000", "orani678"};
    for (size_t i = 0; dir && i < sizeof names / sizeof *names && n < max;
         i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.mtx", dir, names[i]);
        if (!kt_file_exists(path)) continue;
        snprintf(c[n].name, sizeof c[n].name, "%s", names[i]);
        ck_assert_msg(kr_read_mtx(ctx, path, &c[n].A) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        n++;
    }
    return n;
}

static void free_cases(case_matrix *c, int n)
{
    for (int i = 0; i < n; i++)
        kr_csr_free(&c[i].A);
}

/* ------------------------------------------------ layouts, entry for entry */

static void *download(kr_ctx *ctx, const kr_dev_array *a)
{
    void *h = malloc(a->bytes + 1);
    ck_assert_ptr_nonnull(h);
    if (a->bytes)
        ck_assert_int_eq(ctx->ops->download(ctx, h, a->data, a->bytes), KR_OK);
    return h;
}

/* Every array of the two builds' layouts, byte for byte. */
static void same_arrays(kr_ctx *ctx, const kr_matrix *H, const kr_matrix *D,
                        const char *what)
{
    kr_dev_array ah[MAX_ARRAYS], ad[MAX_ARRAYS];
    ck_assert_ptr_nonnull(H->ops->arrays);
    int nh = H->ops->arrays(H->impl, ah, MAX_ARRAYS);
    int nd = D->ops->arrays(D->impl, ad, MAX_ARRAYS);
    ck_assert_msg(nh == nd && nh > 0, "%s: %d arrays against %d", what, nd, nh);
    for (int i = 0; i < nh; i++) {
        ck_assert_str_eq(ah[i].name, ad[i].name);
        ck_assert_msg(ah[i].bytes == ad[i].bytes,
                      "%s: array %s has %zu bytes, the host build's %zu", what,
                      ad[i].name, ad[i].bytes, ah[i].bytes);
        unsigned char *h = download(ctx, &ah[i]), *d = download(ctx, &ad[i]);
        size_t at = 0;
        while (at < ah[i].bytes && h[at] == d[at])
            at++;
        ck_assert_msg(at == ah[i].bytes,
                      "%s: array %s differs first at byte %zu of %zu", what,
                      ad[i].name, at + 1, ah[i].bytes);
        free(h);
        free(d);
    }
}

/* Both builds of A in format f: the same refusal, or the same layout,
 * pick, size (plus the kept CSR) and products. */
static void compare_builds(kr_ctx *g, const kr_csr *A, const char *f,
                           const char *name, uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof what, "%s in %s (seed %llu)", name, f,
             (unsigned long long)seed);
    kr_matrix *H = NULL, *D = NULL;
    ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_HOST), KR_OK);
    kr_status sh = kr_matrix_create(g, A, f, &H);
    ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_DEVICE), KR_OK);
    kr_status sd = kr_matrix_create(g, A, f, &D);
    ck_assert_msg(sh == sd, "%s: host build %s, device build %s (%s)", what,
                  kr_status_name(sh), kr_status_name(sd), kr_ctx_error(g));
    if (sh != KR_OK) return;
    ck_assert_str_eq(kr_matrix_format(H), kr_matrix_format(D));
    ck_assert_double_eq(kr_matrix_padding_ratio(H), kr_matrix_padding_ratio(D));
    same_arrays(g, H, D, what);
    kr_csr_view own, v;
    int holds_csr = H->ops->csr_view && H->ops->csr_view(H->impl, &own);
    size_t kept = holds_csr ? 0 : kr_dev_csr_bytes(&D->dev);
    ck_assert_uint_eq(kr_matrix_bytes(D), kr_matrix_bytes(H) + kept);
    ck_assert_int_eq(kr_matrix_csr_view(D, &v), KR_OK);
    ck_assert_int_eq(v.nnz, A->nnz);
    double up, fmt;
    kr_matrix_build_stages(D, &up, &fmt);
    ck_assert(up >= 0.0 && fmt >= 0.0);
    kr_matrix_destroy(H);
    kr_matrix_destroy(D);
}

START_TEST(devbuild_layouts_equal_host)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_layouts_equal_host");
    if (!g) return;
    uint64_t seed = (uint64_t)kr_wtime();
    printf("devbuild_layouts_equal_host: seed %llu\n",
           (unsigned long long)seed);
    case_matrix c[32];
    int n = load_cases(g, seed, c, 32);
    for (int i = 0; i < n; i++)
        for (size_t f = 0; f < NFORMATS; f++)
            compare_builds(g, &c[i].A, formats[f], c[i].name, seed);
    free_cases(c, n);
    kr_ctx_destroy(g);
}
END_TEST

START_TEST(devbuild_auto_statistics)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_auto_statistics");
    if (!g) return;
    uint64_t seed = (uint64_t)kr_wtime();
    printf("devbuild_auto_statistics: seed %llu\n", (unsigned long long)seed);
    case_matrix c[32];
    int n = load_cases(g, seed, c, 32);
    for (int i = 0; i < n; i++) {
        kr_auto_features h, d;
        ck_assert_int_eq(kr_auto_features_of(g, &c[i].A, &h), KR_OK);
        kr_csr_view v;
        ck_assert_int_eq(kr_dev_csr_upload(g, &c[i].A, &v), KR_OK);
        ck_assert_int_eq(kr_auto_features_of_dev(g, &v, &d), KR_OK);
        kr_dev_csr_free(g, &v);
        ck_assert_msg(
            h.n == d.n && h.nnz == d.nnz && h.max == d.max &&
                h.mean == d.mean && h.std == d.std && h.hyb_full == d.hyb_full,
            "%s: device statistics differ from the host's", c[i].name);
    }
    free_cases(c, n);
    kr_ctx_destroy(g);
}
END_TEST

/* ------------------------------------------- preconditioners from the view */

static int solve_its(kr_ctx *g, kr_matrix *M, kr_precond *P, const kr_csr *A,
                     const double *b)
{
    kr_vec *vb, *vx;
    ck_assert_int_eq(kr_vec_create(g, A->nrows, &vb), KR_OK);
    ck_assert_int_eq(kr_vec_create(g, A->nrows, &vx), KR_OK);
    ck_assert_int_eq(kr_vec_upload(vb, b), KR_OK);
    ck_assert_int_eq(kr_vec_fill(vx, 0.0), KR_OK);
    kr_solve_options o;
    kr_solve_options_default(&o);
    o.method = "cg";
    o.rtol = 1e-10;
    kr_result r = {0};
    ck_assert_int_eq(kr_solve(g, M, P, vb, vx, &o, &r), KR_OK);
    int its = r.iterations;
    kr_result_free(&r);
    kr_vec_destroy(vb);
    kr_vec_destroy(vx);
    return its;
}

/* P from M's view (M device-built in format f) against P from host CSR on
 * a host-built csr matrix: the same iterations. Jacobi's diagonals are
 * also compared entry for entry. Both solves take the launches per step
 * (KRYLOV_PERSIST=0): the device-built matrix keeps a CSR view, which
 * would give it the persistent batches, whose sums round otherwise. */
static void compare_precond(kr_ctx *g, const kr_csr *A, const double *b,
                            const char *f, const char *pc)
{
    kr_matrix *H, *D;
    kr_precond *PH, *PD;
    ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_HOST), KR_OK);
    ck_assert_int_eq(kr_matrix_create(g, A, f, &H), KR_OK);
    ck_assert_int_eq(kr_precond_create(g, A, pc, &PH), KR_OK);
    ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_DEVICE), KR_OK);
    ck_assert_int_eq(kr_matrix_create(g, A, f, &D), KR_OK);
    ck_assert_int_eq(kr_precond_create_matrix(g, D, A, pc, NULL, &PD), KR_OK);
    const double *dh, *dd;
    if (PH->ops->diagonal && PH->ops->diagonal(PH->impl, &dh) && dh) {
        ck_assert(PD->ops->diagonal(PD->impl, &dd) && dd);
        kr_dev_array ah = {"d", dh, (size_t)A->nrows * 8};
        kr_dev_array ad = {"d", dd, (size_t)A->nrows * 8};
        double *h = download(g, &ah), *d = download(g, &ad);
        ck_assert_int_eq(memcmp(h, d, ah.bytes), 0);
        free(h);
        free(d);
    }
    setenv("KRYLOV_PERSIST", "0", 1);
    int ih = solve_its(g, H, PH, A, b), id = solve_its(g, D, PD, A, b);
    unsetenv("KRYLOV_PERSIST");
    ck_assert_msg(ih == id,
                  "%s + %s: %d iterations from the view, %d from "
                  "host CSR",
                  f, pc, id, ih);
    kr_precond_destroy(PH);
    kr_precond_destroy(PD);
    kr_matrix_destroy(H);
    kr_matrix_destroy(D);
}

START_TEST(devbuild_precond_from_view)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_precond_from_view");
    if (!g) return;
    uint64_t s = (uint64_t)kr_wtime();
    printf("devbuild_precond_from_view: seed %llu\n", (unsigned long long)s);
    const char *specs[] = {"poisson3d:16", "elasticity3d:6"};
    for (size_t m = 0; m < 2; m++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(g, specs[m], &A), KR_OK);
        double *b = kt_rand_vector(A.nrows, &s);
        for (size_t f = 0; f < NFORMATS; f++) {
            compare_precond(g, &A, b, formats[f], "jacobi");
            compare_precond(g, &A, b, formats[f], "bjacobi");
        }
        free(b);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(g);
}
END_TEST

/* A zero diagonal is refused from the view as from host CSR, row named. */
START_TEST(devbuild_jacobi_zero_diagonal)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_jacobi_zero_diagonal");
    if (!g) return;
    kr_csr A;
    ck_assert_int_eq(kr_generate(g, "poisson2d:10", &A), KR_OK);
    for (int32_t k = A.rowptr[41]; k < A.rowptr[42]; k++)
        if (A.colind[k] == 41) A.val[k] = 0.0;
    ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_DEVICE), KR_OK);
    kr_matrix *M;
    ck_assert_int_eq(kr_matrix_create(g, &A, "ellr", &M), KR_OK);
    kr_precond *P = NULL;
    ck_assert_int_eq(kr_precond_create_matrix(g, M, &A, "jacobi", NULL, &P),
                     KR_ERR_SINGULAR);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(g), "row 42 (1-based)"));
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(g);
}
END_TEST

/* A row's last entry whose column can move one to the right. */
static int32_t last_movable(const kr_csr *A)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t k = A->rowptr[i + 1] - 1;
        if (k >= A->rowptr[i] && A->colind[k] + 1 < A->ncols) return k;
    }
    ck_abort_msg("no movable entry");
    return 0;
}

/* New values through a device build: the kept CSR follows, and the
 * rebuilt layout equals a host build of the new values. */
START_TEST(devbuild_update_values)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_update_values");
    if (!g) return;
    kr_csr A;
    ck_assert_int_eq(kr_generate(g, "powerlaw:5000,10", &A), KR_OK);
    for (size_t f = 0; f < NFORMATS; f++) {
        ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_DEVICE), KR_OK);
        kr_matrix *D;
        if (kr_matrix_create(g, &A, formats[f], &D) != KR_OK) continue;
        for (int32_t k = 0; k < A.nnz; k++)
            A.val[k] *= 2.0;
        ck_assert_int_eq(kr_matrix_update_values(D, &A), KR_OK);
        ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_HOST), KR_OK);
        kr_matrix *H;
        ck_assert_int_eq(kr_matrix_create(g, &A, formats[f], &H), KR_OK);
        same_arrays(g, H, D, formats[f]);
        /* the pattern a device build fingerprints late is still checked */
        int32_t last = last_movable(&A), keep = A.colind[last];
        A.colind[last]++; /* still sorted, another pattern */
        ck_assert_int_eq(kr_matrix_update_values(D, &A), KR_ERR_ARG);
        A.colind[last] = keep;
        kr_matrix_destroy(H);
        kr_matrix_destroy(D);
    }
    kr_csr_free(&A);
    kr_ctx_destroy(g);
}
END_TEST

/* device bytes at d equal host bytes at h */
static void same_as_host(kr_ctx *g, const void *d, const void *h, size_t bytes,
                         const char *what)
{
    kr_dev_array a = {what, d, bytes};
    unsigned char *got = download(g, &a);
    size_t at = 0;
    while (at < bytes && got[at] == ((const unsigned char *)h)[at])
        at++;
    ck_assert_msg(at == bytes, "%s differs first at byte %zu of %zu", what,
                  at + 1, bytes);
    free(got);
}

/* A CSR of more than STAGE_MIN (4 MiB) goes through the pinned staging,
 * its values (over 16 MiB) in two chunks, the two buffers taking turns;
 * the other tests' matrices are all smaller. Random values, so that a
 * chunk copied to the wrong place cannot match by chance. */
START_TEST(devbuild_staged_upload)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_staged_upload");
    if (!g) return;
    uint64_t s = (uint64_t)kr_wtime();
    printf("devbuild_staged_upload: seed %llu\n", (unsigned long long)s);
    kr_csr A;
    ck_assert_int_eq(kr_generate(g, "poisson3d:70", &A), KR_OK);
    ck_assert_uint_gt((size_t)A.nnz * 8, (size_t)16 << 20);
    for (int32_t k = 0; k < A.nnz; k++)
        A.val[k] = kt_rand_uniform(&s);
    kr_csr_view v;
    ck_assert_int_eq(kr_dev_csr_upload(g, &A, &v), KR_OK);
    same_as_host(g, v.rowptr, A.rowptr, ((size_t)A.nrows + 1) * 4, "rowptr");
    same_as_host(g, v.colind, A.colind, (size_t)A.nnz * 4, "colind");
    same_as_host(g, v.val, A.val, (size_t)A.nnz * 8, "val");
    for (int32_t k = 0; k < A.nnz; k++)
        A.val[k] = kt_rand_uniform(&s);
    ck_assert_int_eq(kr_dev_csr_upload_values(g, &A, &v), KR_OK);
    same_as_host(g, v.val, A.val, (size_t)A.nnz * 8, "new val");
    kr_dev_csr_free(g, &v);
    kr_csr_free(&A);
    kr_ctx_destroy(g);
}
END_TEST

/* KR_BUILD_AUTO: a host build under KR_BUILD_AUTO_MIN_NNZ nonzeros (no
 * upload stage), a device build from it, and the same solve either way
 * as with the build named. */
START_TEST(devbuild_auto_by_size)
{
    kr_ctx *g = kt_gpu_or_skip("devbuild_auto_by_size");
    if (!g) return;
    const char *specs[] = {"poisson3d:10", "poisson3d:30"};
    for (int i = 0; i < 2; i++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(g, specs[i], &A), KR_OK);
        int device = A.nnz >= KR_BUILD_AUTO_MIN_NNZ;
        ck_assert_int_eq(device, i); /* one of each */
        ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_AUTO), KR_OK);
        kr_matrix *M;
        ck_assert_int_eq(kr_matrix_create(g, &A, "pellr", &M), KR_OK);
        double up = -1.0, fmt = -1.0;
        kr_matrix_build_stages(M, &up, &fmt);
        ck_assert_msg((up > 0.0) == device, "%s: upload %g s, nnz %d", specs[i],
                      up, (int)A.nnz);
        kr_csr_view v;
        ck_assert_int_eq(kr_matrix_csr_view(M, &v) == KR_OK, device);
        kr_matrix_destroy(M);
        kr_csr_free(&A);
    }
    kr_ctx_set_build(g, KR_BUILD_HOST);
    kr_ctx_destroy(g);
}
END_TEST

/* ------------------------------------------------------- on the CPU */

START_TEST(devbuild_switch)
{
    unsetenv("KRYLOV_BUILD");
    kr_ctx *c = NULL;
    ck_assert_int_eq(kr_ctx_create(&c, KR_DEVICE_CPU), KR_OK);
    ck_assert_int_eq(kr_ctx_build(c), KR_BUILD_AUTO);
    ck_assert_int_eq(kr_ctx_set_build(c, KR_BUILD_DEVICE), KR_OK);
    ck_assert_int_eq(kr_ctx_build(c), KR_BUILD_DEVICE);
    ck_assert_int_eq(kr_ctx_set_build(c, (kr_build)7), KR_ERR_ARG);
    ck_assert_int_eq(kr_ctx_build(c), KR_BUILD_DEVICE);
    ck_assert_int_eq(kr_ctx_set_build(c, KR_BUILD_AUTO), KR_OK);
    ck_assert_int_eq(kr_ctx_build(c), KR_BUILD_AUTO);
    kr_ctx_destroy(c);
    const char *names[] = {"device", "auto", "host"};
    const kr_build builds[] = {KR_BUILD_DEVICE, KR_BUILD_AUTO, KR_BUILD_HOST};
    for (int i = 0; i < 3; i++) {
        setenv("KRYLOV_BUILD", names[i], 1);
        ck_assert_int_eq(kr_ctx_create(&c, KR_DEVICE_CPU), KR_OK);
        ck_assert_int_eq(kr_ctx_build(c), builds[i]);
        kr_ctx_destroy(c);
    }
    setenv("KRYLOV_BUILD", "gpu", 1);
    ck_assert_int_eq(kr_ctx_create(&c, KR_DEVICE_CPU), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(c), "KRYLOV_BUILD is 'gpu'"));
    kr_ctx_destroy(c);
    unsetenv("KRYLOV_BUILD");
    ck_assert_int_eq(kr_ctx_build(NULL), KR_BUILD_HOST);
}
END_TEST

/* On the CPU backend the switch changes nothing: the same layouts (the
 * solves take the same iterations), no upload stage, no CSR view. */
START_TEST(devbuild_cpu_ignores_switch)
{
    kr_ctx *c = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(c, "poisson3d:10", &A), KR_OK);
    uint64_t s = (uint64_t)kr_wtime();
    double *b = malloc((size_t)A.nrows * sizeof *b);
    for (int32_t i = 0; i < A.nrows; i++)
        b[i] = kt_rand_uniform(&s);
    for (size_t f = 0; f < NFORMATS; f++) {
        kr_matrix *M[2];
        int its[2];
        for (int d = 0; d < 2; d++) {
            ck_assert_int_eq(
                kr_ctx_set_build(c, d ? KR_BUILD_DEVICE : KR_BUILD_HOST),
                KR_OK);
            ck_assert_int_eq(kr_matrix_create(c, &A, formats[f], &M[d]), KR_OK);
            kr_precond *P;
            ck_assert_int_eq(
                kr_precond_create_matrix(c, M[d], &A, "jacobi", NULL, &P),
                KR_OK);
            its[d] = solve_its(c, M[d], P, &A, b);
            kr_precond_destroy(P);
        }
        ck_assert_int_eq(its[0], its[1]);
        ck_assert_uint_eq(kr_matrix_bytes(M[0]), kr_matrix_bytes(M[1]));
        double up = -1.0, fmt = -1.0;
        kr_matrix_build_stages(M[1], &up, &fmt);
        ck_assert(up == 0.0);
        ck_assert(fmt >= 0.0 && fmt == kr_matrix_build_seconds(M[1]));
        kr_csr_view v;
        ck_assert_int_eq(kr_matrix_csr_view(M[1], &v), KR_ERR_UNSUPPORTED);
        kr_matrix_destroy(M[0]);
        kr_matrix_destroy(M[1]);
    }
    free(b);
    kr_csr_free(&A);
    kr_ctx_destroy(c);
}
END_TEST

static int desc_then_row(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* (length, row) */
    if (x[0] != y[0]) return x[0] < y[0] ? 1 : -1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The device builds' two order facts, checked against the host builds:
 * HYB's K is the ceil(n/3)-th longest row (else the rounded mean), and
 * PELLR's permutation is a stable sort by length, longest first. */
START_TEST(devbuild_order_rules)
{
    kr_ctx *c = kt_cpu();
    uint64_t seed = (uint64_t)kr_wtime();
    printf("devbuild_order_rules: seed %llu\n", (unsigned long long)seed);
    case_matrix cs[32];
    int n = load_cases(c, seed, cs, 32);
    for (int i = 0; i < n; i++) {
        const kr_csr *A = &cs[i].A;
        int64_t *lr = malloc(((size_t)A->nrows + 1) * 2 * sizeof *lr);
        for (int32_t r = 0; r < A->nrows; r++) {
            lr[2 * r] = A->rowptr[r + 1] - A->rowptr[r];
            lr[2 * r + 1] = r;
        }
        qsort(lr, (size_t)A->nrows, 2 * sizeof *lr, desc_then_row);
        int32_t K, want = 0;
        ck_assert_int_eq(kr_hyb_width(c, A, &K), KR_OK);
        if (A->nrows > 0) {
            want = (int32_t)lr[2 * ((A->nrows + 2) / 3 - 1)];
            if (want == 0)
                want = (int32_t)(((int64_t)2 * A->nnz + A->nrows) /
                                 (2 * (int64_t)A->nrows));
        }
        ck_assert_msg(K == want, "%s: K %d, order statistic %d", cs[i].name, K,
                      want);
        kr_pellr_host P;
        ck_assert_int_eq(kr_pellr_host_build(c, A, &P), KR_OK);
        for (int32_t k = 0; k < A->nrows; k++)
            ck_assert_int_eq(P.perm[k], (int32_t)lr[2 * k + 1]);
        kr_pellr_host_free(&P);
        free(lr);
    }
    free_cases(cs, n);
    kr_ctx_destroy(c);
}
END_TEST

/* A device build checks the rows of its uploaded copy by a kernel: a
 * defect is refused with the host check's very message. */
static void device_build_refuses(kr_ctx *g, const kr_csr *A, const char *want)
{
    kr_matrix *M = NULL;
    ck_assert_int_eq(kr_matrix_create(g, A, "pellr", &M), KR_ERR_FORMAT);
    ck_assert_ptr_null(M);
    ck_assert_str_eq(kr_ctx_error(g), want);
}

/* kr_csr_check runs over the rows in parallel on large matrices: it still
 * names the first bad row, whichever thread found which; so does the
 * device build's kernel (on a GPU). */
START_TEST(devbuild_csr_check_first_row)
{
    kr_ctx *c = kt_cpu();
    kr_ctx *g = kt_gpu_or_skip("devbuild_csr_check_first_row (gpu part)");
    if (g) ck_assert_int_eq(kr_ctx_set_build(g, KR_BUILD_DEVICE), KR_OK);
    ck_assert_int_eq(kr_ctx_set_threads(c, 4), KR_OK);
    kr_csr A;
    ck_assert_int_eq(kr_generate(c, "poisson3d:70", &A), KR_OK);
    ck_assert_int_ge(A.nnz, 1000000); /* the parallel check */
    ck_assert_int_eq(kr_csr_check(c, &A), KR_OK);
    if (g) {
        kr_matrix *M;
        ck_assert_int_eq(kr_matrix_create(g, &A, "pellr", &M), KR_OK);
        kr_matrix_destroy(M);
    }
    const int32_t rows[] = {250000, 4000, 180000};
    for (int t = 0; t < 3; t++) { /* late, then earlier defects added */
        int32_t k = A.rowptr[rows[t]];
        if (t == 1) A.val[k] = NAN;
        if (t == 2) A.colind[k] = A.ncols;
        if (t == 0) A.colind[k + 1] = A.colind[k];
        /* rows numbered from 1 */
        const char *want[] = {"CSR row 250001: columns not strictly",
                              "CSR row 4001, column", "CSR row 4001, column"};
        ck_assert_int_eq(kr_csr_check(c, &A), KR_ERR_FORMAT);
        ck_assert_msg(strstr(kr_ctx_error(c), want[t]), "%s", kr_ctx_error(c));
        if (g) device_build_refuses(g, &A, kr_ctx_error(c));
    }
    /* row pointers out of order before all of them */
    A.rowptr[1000] = A.rowptr[1001] + 1;
    ck_assert_int_eq(kr_csr_check(c, &A), KR_ERR_FORMAT);
    ck_assert_msg(strstr(kr_ctx_error(c), "CSR row 1000"), "%s",
                  kr_ctx_error(c));
    if (g) device_build_refuses(g, &A, kr_ctx_error(c));
    kr_csr_free(&A);
    kr_ctx_destroy(c);
    kr_ctx_destroy(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("devbuild");
    TCase *t = tcase_create("devbuild");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, devbuild_switch);
    tcase_add_test(t, devbuild_cpu_ignores_switch);
    tcase_add_test(t, devbuild_order_rules);
    tcase_add_test(t, devbuild_csr_check_first_row);
    tcase_add_test(t, devbuild_layouts_equal_host);
    tcase_add_test(t, devbuild_auto_statistics);
    tcase_add_test(t, devbuild_precond_from_view);
    tcase_add_test(t, devbuild_jacobi_zero_diagonal);
    tcase_add_test(t, devbuild_update_values);
    tcase_add_test(t, devbuild_staged_upload);
    tcase_add_test(t, devbuild_auto_by_size);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return kt_run(suite()); }
