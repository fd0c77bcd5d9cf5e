/* Block-Jacobi's supervariable blocking on the GPU (precond/blocking_dev.cu)
 * against the host's (precond/blocking.c) and the host batch
 * (kr_gje_batch_create), entry for entry: random matrices made of runs of
 * rows with one pattern (supervariables of every length, cut at every
 * maximum block size), generated and shared matrices, and the preconditioner
 * with KRYLOV_BJACOBI_DEVICE_BLOCKING 1 and 0. Skipped, visibly, without
 * a GPU; the random tests print their seed. */
#include "precond/blocking.h"
#include "precond/blocking_dev.h"
#include "precond/gje_batch.h"
#include "spmv/devbuild.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many distinct columns in a run's pattern. */
#define RUN_COLS 6

/* Rows of A in runs of 1..40 (cut at n) sharing a pattern: the run's
 * first row and up to RUN_COLS - 1 random columns, sorted, no repeats;
 * values 1 (only the pattern is compared). */
static void runs_csr(kr_ctx *ctx, int32_t n, uint64_t *st, kr_csr *A)
{
    int32_t *len = malloc(sizeof *len * ((size_t)n + 1));
    int32_t(*cols)[RUN_COLS] = malloc(sizeof *cols * ((size_t)n + 1));
    ck_assert(len && cols);
    int64_t nnz = 0;
    for (int32_t i = 0; i < n;) {
        int32_t run = 1 + (int32_t)(kt_rand_u64(st) % 40), m = 0;
        int32_t extra = (int32_t)(kt_rand_u64(st) % RUN_COLS);
        for (int32_t q = 0; q <= extra; q++) {
            int32_t c = q ? (int32_t)(kt_rand_u64(st) % (uint64_t)n) : i, p = m;
            while (p > 0 && cols[i][p - 1] > c)
                p--;
            if (p > 0 && cols[i][p - 1] == c) continue;
            memmove(cols[i] + p + 1, cols[i] + p, sizeof(int32_t) * (m - p));
            cols[i][p] = c;
            m++;
        }
        for (int32_t r = i; r < i + run && r < n; r++) {
            memcpy(cols[r], cols[i], sizeof cols[i]);
            len[r] = m;
            nnz += m;
        }
        i += run;
    }
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, (int32_t)nnz, A), KR_OK);
    A->rowptr[0] = 0;
    for (int32_t r = 0; r < n; r++) {
        int32_t at = A->rowptr[r];
        for (int32_t q = 0; q < len[r]; q++) {
            A->colind[at + q] = cols[r][q];
            A->val[at + q] = 1.0;
        }
        A->rowptr[r + 1] = at + len[r];
    }
    free(len);
    free(cols);
}

/* The device batch's arrays read back (nb + 1 entries each). */
static void read_batch(kr_ctx *g, const kr_gje_batch *bb, int32_t **starts,
                       int64_t **offs, int32_t **order)
{
    size_t nb1 = (size_t)bb->nb + 1;
    *starts = malloc(nb1 * sizeof **starts);
    *offs = malloc(nb1 * sizeof **offs);
    *order = malloc(nb1 * sizeof **order);
    ck_assert(*starts && *offs && *order);
    ck_assert_int_eq(g->ops->download(g, *starts, bb->starts, nb1 * 4), KR_OK);
    ck_assert_int_eq(g->ops->download(g, *offs, bb->offs, nb1 * 8), KR_OK);
    ck_assert_int_eq(g->ops->download(g, *order, bb->order, (nb1 - 1) * 4),
                     KR_OK);
}

/* The device's blocks and batch of A (max rows) equal the host's. */
static void compare_blocking(kr_ctx *g, const kr_csr *A, int32_t max,
                             const char *what)
{
    kr_ctx *cpu = kt_cpu();
    int32_t nb, *starts;
    ck_assert_int_eq(kr_blocking_supervariables(cpu, A, max, &nb, &starts),
                     KR_OK);
    kr_gje_batch hb;
    ck_assert_int_eq(kr_gje_batch_create(cpu, nb, starts, &hb), KR_OK);
    kr_csr_view v;
    ck_assert_int_eq(kr_dev_csr_upload(g, A, &v), KR_OK);
    kr_gje_csr dA = {v.nrows, v.nnz, v.rowptr, v.colind, v.val};
    kr_gje_batch db;
    ck_assert_msg(kr_blocking_dev_batch(g, &dA, max, &db) == KR_OK, "%s: %s",
                  what, kr_ctx_error(g));
    ck_assert_msg(db.nb == nb,
                  "%s, max %d: %d blocks on the GPU, %d on the "
                  "host",
                  what, (int)max, (int)db.nb, (int)nb);
    int32_t *ds, *dor;
    int64_t *doffs;
    read_batch(g, &db, &ds, &doffs, &dor);
    for (int32_t b = 0; b <= nb; b++)
        ck_assert_msg(ds[b] == starts[b] && doffs[b] == hb.h_offs[b],
                      "%s, max %d: block %d starts at row %d (offset %lld) "
                      "on the GPU, %d (%lld) on the host",
                      what, (int)max, (int)b + 1, (int)ds[b] + 1,
                      (long long)doffs[b], (int)starts[b] + 1,
                      (long long)hb.h_offs[b]);
    ck_assert_int_eq(memcmp(dor, hb.h_order, (size_t)nb * 4), 0);
    ck_assert_int_eq(
        memcmp(db.class_start, hb.class_start, sizeof db.class_start), 0);
    ck_assert_int_eq(db.max_k, hb.max_k);
    ck_assert_int_eq(db.total, hb.total);
    ck_assert_int_eq(db.nrows, hb.nrows);
    /* and the host arrays made from the starts read back are the host's */
    ck_assert_int_eq(kr_gje_batch_set_host(g, &db, ds), KR_OK);
    ck_assert_int_eq(memcmp(db.h_order, hb.h_order, (size_t)nb * 4), 0);
    free(ds);
    free(doffs);
    free(dor);
    free(starts);
    kr_gje_batch_free(g, &db);
    kr_gje_batch_free(cpu, &hb);
    kr_dev_csr_free(g, &v);
    kr_ctx_destroy(cpu);
}

/* 1 when rows i - 1 and i of A have one column pattern. */
static int same_row_pattern(const kr_csr *A, int32_t i)
{
    int32_t a = A->rowptr[i - 1], b = A->rowptr[i], len = b - a;
    if (A->rowptr[i + 1] - b != len) return 0;
    for (int32_t q = 0; q < len; q++)
        if (A->colind[a + q] != A->colind[b + q]) return 0;
    return 1;
}

/* The host reference checked by its definition on runs matrices (so that
 * the GPU's comparisons with it mean something; runs on any machine):
 * every block is whole supervariables (a block boundary wherever the
 * pattern changes), at most max rows, and could not take the next
 * supervariable without exceeding max, a supervariable being a run of one
 * pattern cut every max rows. */
START_TEST(host_blocking_by_definition)
{
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)kr_wtime(), st = seed;
    printf("host_blocking_by_definition: seed %llu\n",
           (unsigned long long)seed);
    for (int t = 0; t < 64; t++) {
        int32_t n = 1 + (int32_t)(kt_rand_u64(&st) % 3000);
        int32_t max = 1 + t % KR_BLOCK_MAX, nb, *s;
        kr_csr A;
        runs_csr(cpu, n, &st, &A);
        ck_assert_int_eq(kr_blocking_supervariables(cpu, &A, max, &nb, &s),
                         KR_OK);
        /* sv[i] = 1 where a supervariable opens at row i */
        unsigned char *sv = calloc((size_t)n + 1, 1);
        for (int32_t i = 0, open = 0; i < n; i++) {
            if (i == 0 || !same_row_pattern(&A, i) || i - open == max)
                open = i, sv[i] = 1;
        }
        sv[n] = 1;
        ck_assert_int_eq(s[0], 0);
        ck_assert_int_eq(s[nb], n);
        for (int32_t b = 0; b < nb; b++) {
            int32_t k = s[b + 1] - s[b], next = s[b + 1] + 1;
            ck_assert_msg(k >= 1 && k <= max && sv[s[b]],
                          "seed %llu case %d: block %d (rows %d..%d, max %d)",
                          (unsigned long long)seed, t, (int)b + 1,
                          (int)s[b] + 1, (int)s[b + 1], (int)max);
            for (int32_t i = s[b] + 1; i < s[b + 1]; i++)
                ck_assert(i - s[b] < max && (sv[i] || same_row_pattern(&A, i)));
            while (next <= n && !sv[next])
                next++;
            ck_assert_msg(b == nb - 1 || next - s[b] > max,
                          "seed %llu case %d: block %d could take the next "
                          "supervariable",
                          (unsigned long long)seed, t, (int)b + 1);
        }
        free(sv);
        free(s);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(cpu);
}
END_TEST

/* Sizes where the device's chunks of rows begin and end. */
static const int32_t edge_sizes[] = {1,   2,   31,  32,  33,  127,
                                     128, 129, 255, 256, 257, 4097};

START_TEST(device_blocking_random)
{
    kr_ctx *g = kt_gpu_or_skip("device_blocking_random");
    if (!g) return;
    uint64_t seed = (uint64_t)kr_wtime(), st = seed;
    printf("device_blocking_random: seed %llu\n", (unsigned long long)seed);
    size_t nedge = sizeof edge_sizes / sizeof *edge_sizes;
    for (int t = 0; t < 96; t++) {
        int32_t n = (size_t)t < nedge ? edge_sizes[t]
                                      : 1 + (int32_t)(kt_rand_u64(&st) % 60000);
        int32_t max = 1 + t % KR_BLOCK_MAX;
        kr_csr A;
        runs_csr(g, n, &st, &A);
        char what[128];
        snprintf(what, sizeof what, "runs n=%d (seed %llu, case %d)", (int)n,
                 (unsigned long long)seed, t);
        compare_blocking(g, &A, max, what);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(g);
}
END_TEST

/* Generated matrices (elasticity3d: supervariables of 3 rows) and every
 * square shared matrix, at several maximum sizes. */
START_TEST(device_blocking_matrices)
{
    kr_ctx *g = kt_gpu_or_skip("device_blocking_matrices");
    if (!g) return;
    const int32_t maxes[] = {1, 3, 4, 13, 32};
    const char *specs[] = {"elasticity3d:7", "poisson3d:20", "poisson2d:50"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(g, specs[s], &A), KR_OK);
        for (size_t m = 0; m < sizeof maxes / sizeof *maxes; m++)
            compare_blocking(g, &A, maxes[m], specs[s]);
        kr_csr_free(&A);
    }
    const char *dir = kt_matrices_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) kt_skip("device_blocking_matrices", "no shared matrices folder");
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mtx")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kr_csr A;
        ck_assert_msg(kr_read_mtx(g, path, &A) == KR_OK, "%s", kr_ctx_error(g));
        for (size_t m = 0; A.nrows == A.ncols && m < 5; m++)
            compare_blocking(g, &A, maxes[m], e->d_name);
        kr_csr_free(&A);
    }
    if (d) closedir(d);
    kr_ctx_destroy(g);
}
END_TEST

/* What block-Jacobi built from a GPU matrix gives, with the device
 * blocking (knob "1": these matrices are below its default size) or the
 * host pass (knob "0"). */
typedef struct bj_result {
    int32_t nb, singular, *sizes;
    double *z;
    char error[512]; /* the message of the error policy's refusal */
} bj_result;

static void set_knob(const char *knob)
{
    if (knob)
        setenv("KRYLOV_BJACOBI_DEVICE_BLOCKING", knob, 1);
    else
        unsetenv("KRYLOV_BJACOBI_DEVICE_BLOCKING");
}

/* Block sizes, singular blocks and z = P^-1 r with the default policy,
 * then the error policy's message (empty when no block is singular). */
static void bjacobi_on_gpu(kr_ctx *g, const kr_csr *A, const char *knob,
                           const double *r, bj_result *out)
{
    set_knob(knob);
    kr_matrix *M;
    kr_precond *P;
    kr_vec *rv, *zv;
    ck_assert_int_eq(kr_matrix_create(g, A, "csr", &M), KR_OK);
    ck_assert_msg(kr_precond_create_matrix(g, M, A, "bjacobi", NULL, &P) ==
                      KR_OK,
                  "%s", kr_ctx_error(g));
    out->nb = kr_precond_block_count(P);
    out->singular = kr_precond_singular_blocks(P);
    out->sizes = malloc(sizeof(int32_t) * (size_t)A->nrows);
    out->z = malloc(sizeof(double) * (size_t)A->nrows);
    ck_assert(out->sizes && out->z);
    ck_assert_int_eq(kr_precond_block_sizes(P, out->sizes), KR_OK);
    ck_assert_int_eq(kr_vec_create(g, A->nrows, &rv), KR_OK);
    ck_assert_int_eq(kr_vec_create(g, A->nrows, &zv), KR_OK);
    kr_vec_upload(rv, r);
    kr_vec_fill(zv, NAN);
    ck_assert_int_eq(kr_precond_apply(P, rv, zv), KR_OK);
    kr_vec_download(zv, out->z);
    kr_vec_destroy(rv);
    kr_vec_destroy(zv);
    kr_precond_destroy(P);
    kr_precond_options o;
    kr_precond_options_default(&o);
    o.singular = KR_SINGULAR_ERROR;
    kr_status st = kr_precond_create_matrix(g, M, A, "bjacobi", &o, &P);
    ck_assert_int_eq(st, out->singular ? KR_ERR_SINGULAR : KR_OK);
    snprintf(out->error, sizeof out->error, "%s",
             st == KR_OK ? "" : kr_ctx_error(g));
    if (st == KR_OK) kr_precond_destroy(P);
    kr_matrix_destroy(M);
    set_knob(NULL);
}

/* The device blocking and the host pass give the same preconditioner,
 * also with singular blocks (rows zeroed in elasticity3d: its pattern,
 * and so its blocks, unchanged). */
START_TEST(device_blocking_knob)
{
    kr_ctx *g = kt_gpu_or_skip("device_blocking_knob");
    if (!g) return;
    uint64_t seed = (uint64_t)kr_wtime(), st = seed;
    printf("device_blocking_knob: seed %llu\n", (unsigned long long)seed);
    const char *specs[] = {"elasticity3d:8", "poisson3d:24", "elasticity3d:8"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        kr_csr A;
        ck_assert_int_eq(kr_generate(g, specs[s], &A), KR_OK);
        for (int32_t q = 0; s == 2 && q < 3; q++) {
            int32_t row = 7 + 500 * q;
            for (int32_t k = A.rowptr[row]; k < A.rowptr[row + 1]; k++)
                A.val[k] = 0.0;
        }
        int32_t n = A.nrows;
        double *r = kt_rand_vector(n, &st);
        bj_result res[2];
        bjacobi_on_gpu(g, &A, "1", r, &res[0]);
        bjacobi_on_gpu(g, &A, "0", r, &res[1]);
        ck_assert_int_eq(res[0].nb, res[1].nb);
        ck_assert_int_eq(res[0].singular, res[1].singular);
        ck_assert(s < 2 || res[0].singular > 0);
        ck_assert_int_eq(
            memcmp(res[0].sizes, res[1].sizes, sizeof(int32_t) * res[0].nb), 0);
        ck_assert_int_eq(memcmp(res[0].z, res[1].z, sizeof(double) * n), 0);
        ck_assert_str_eq(res[0].error, res[1].error);
        for (int k = 0; k < 2; k++) {
            free(res[k].sizes);
            free(res[k].z);
        }
        free(r);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("blocking_dev");
    TCase *t = tcase_create("core");
    tcase_add_test(t, host_blocking_by_definition);
    tcase_add_test(t, device_blocking_random);
    tcase_add_test(t, device_blocking_matrices);
    tcase_add_test(t, device_blocking_knob);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return kt_run(suite()); }
