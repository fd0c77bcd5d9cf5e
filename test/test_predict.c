/* Tests of the row-order predictor: the tree walk and its checks on a
 * hand-made model, the refusal of permute "auto" without a trained model,
 * and the whole training pipeline: bench/spmm_train.py on the committed
 * fixture (CPU timings of `krylov bench spmm`, test/fixtures/spmm_train),
 * its C compiled into a shared object and loaded here, and every
 * sample's pick by the C walk equal to the trainer's. */
#include "spmv/predict.h"
#include "testutil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* nnz <= 1000 ? (k <= 8 ? ellr/none : ellr/lpt) : pellr/warp */
static const char *const formats2[] = {"ellr", "pellr"};
static const kr_tree_node nodes5[] = {
    {2, 1000.0, 1, 4, NULL, NULL},    {22, 8.0, 2, 3, NULL, NULL},
    {-1, 0.0, 0, 0, "ellr", "none"},  {-1, 0.0, 0, 0, "ellr", "lpt"},
    {-1, 0.0, 0, 0, "pellr", "warp"},
};
static const char *const orders5[] = {
    NULL, NULL, NULL, NULL, "none", "plain", "lpt", NULL, "plain", "warp",
};

static kr_tree_model small_model(void)
{
    kr_tree_model m = {"hand-made",
                       KR_PREDICT_NFEATURES,
                       kr_predict_feature_names(),
                       2,
                       formats2,
                       5,
                       nodes5,
                       orders5};
    return m;
}

static void features_of(const char *spec, int32_t k, double *x)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kr_spmm_features f;
    ck_assert_int_eq(kr_generate(ctx, spec, &A), KR_OK);
    ck_assert_int_eq(kr_csr_spmm_features(ctx, &A, &f), KR_OK);
    kr_predict_features(&f, k, x);
    ck_assert(x[0] == A.nrows && x[2] == A.nnz && x[22] == k);
    ck_assert(x[5] == f.row_nnz.mean && x[21] == f.neighbour_distance.max);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}

START_TEST(test_walk)
{
    kr_tree_model m = small_model();
    kr_ctx *ctx = kt_cpu();
    ck_assert_int_eq(kr_predict_check(ctx, &m), KR_OK);
    double x[KR_PREDICT_NFEATURES];
    char path[256];
    features_of("poisson2d:10", 4, x); /* nnz 460 */
    ck_assert_int_eq(kr_predict_leaf(&m, x, path, sizeof path), 2);
    ck_assert_msg(!strcmp(path, "nnz <= 1000 (460), k <= 8 (4)"), "%s", path);
    features_of("poisson2d:10", 16, x);
    ck_assert_int_eq(kr_predict_leaf(&m, x, path, sizeof path), 3);
    features_of("poisson2d:20", 8, x); /* nnz 1920 */
    ck_assert_int_eq(kr_predict_leaf(&m, x, path, sizeof path), 4);
    ck_assert_int_eq(kr_predict_leaf(&m, x, path, 8), 4); /* path cut */
    ck_assert_int_eq(strlen(path), 7);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The leaf's choice, or its order for a named format; an untimed format
 * and an empty model are refused with a reason. */
START_TEST(test_choice)
{
    kr_tree_model m = small_model();
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    kr_prediction p;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:20", &A), KR_OK);
    ck_assert_int_eq(kr_predict_choice(ctx, &m, &A, 8, NULL, &p), KR_OK);
    ck_assert(!strcmp(p.format, "pellr") && !strcmp(p.order, "warp"));
    ck_assert_msg(strstr(p.reason, "hand-made") &&
                      strstr(p.reason, "nnz > 1000 (1920)"),
                  "%s", p.reason);
    ck_assert_int_eq(kr_predict_choice(ctx, &m, &A, 8, "ellr", &p), KR_OK);
    ck_assert(!strcmp(p.format, "ellr") && !strcmp(p.order, "plain"));
    ck_assert_int_eq(kr_predict_choice(ctx, &m, &A, 8, "vsr", &p),
                     KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "'vsr'"));
    m.nnodes = 0;
    ck_assert_int_eq(kr_predict_choice(ctx, &m, &A, 8, NULL, &p),
                     KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "bench/spmm_train.py"));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* A model of other features, or with a child before its parent, or a
 * leaf without a choice, is refused, naming what is wrong. */
START_TEST(test_check)
{
    kr_ctx *ctx = kt_cpu();
    kr_tree_model m = small_model();
    m.nfeatures = 22;
    ck_assert_int_eq(kr_predict_check(ctx, &m), KR_ERR_UNSUPPORTED);
    const char *names[KR_PREDICT_NFEATURES];
    memcpy(names, kr_predict_feature_names(), sizeof names);
    names[4] = "row_len.min";
    m = small_model();
    m.features = names;
    ck_assert_int_eq(kr_predict_check(ctx, &m), KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "feature 5"));
    kr_tree_node bad[5];
    memcpy(bad, nodes5, sizeof bad);
    bad[1].left = 0; /* a loop */
    m = small_model();
    m.nodes = bad;
    ck_assert_int_eq(kr_predict_check(ctx, &m), KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "node 2"));
    memcpy(bad, nodes5, sizeof bad);
    bad[3].order = NULL;
    ck_assert_int_eq(kr_predict_check(ctx, &m), KR_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "node 4"));
    kr_ctx_destroy(ctx);
}
END_TEST

/* Without a trained model in the build, permute "auto" is refused with
 * the way to train one; with one, it builds and says why. */
START_TEST(test_auto_in_build)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:20", &A), KR_OK);
    kr_matrix_options o;
    kr_matrix_options_default(&o);
    o.permute = "auto";
    o.columns = 8;
    kr_matrix *M = NULL;
    kr_status st = kr_matrix_create_opts(ctx, &A, &o, &M);
    if (!kr_row_order_model_trained()) {
        ck_assert_int_eq(st, KR_ERR_UNSUPPORTED);
        ck_assert_ptr_null(M);
        ck_assert_msg(strstr(kr_ctx_error(ctx),
                             "no trained row-order model in this build; "
                             "train it with bench/spmm_train.py on GPU "
                             "timings"),
                      "%s", kr_ctx_error(ctx));
    } else {
        ck_assert_msg(st == KR_OK, "%s", kr_ctx_error(ctx));
        ck_assert(strstr(kr_matrix_permutation_reason(M), "row-order model"));
    }
    kr_matrix_destroy(M);
    o.permute = "lpt"; /* a named order gives no reason */
    ck_assert_int_eq(kr_matrix_create_opts(ctx, &A, &o, &M), KR_OK);
    ck_assert_str_eq(kr_matrix_permutation_reason(M), "");
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* krylov solve --permute auto: a usage error (exit 2) saying how to train
 * a model, before any work; with a model, the report says why. */
START_TEST(test_solve_auto)
{
    kt_output r = kt_command(NULL, kt_krylov_bin(), NULL,
                             "solve --gen poisson2d:9 --device cpu "
                             "--permute auto");
    if (!kr_row_order_model_trained()) {
        ck_assert_int_eq(r.rc, 2);
        ck_assert_msg(strstr(r.err, "--permute auto: no trained row-order "
                                    "model in this build; train it with "
                                    "bench/spmm_train.py on GPU timings"),
                      "%s", r.err);
    } else {
        ck_assert_msg(r.rc == 0, "%s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "row order choice:"));
    }
    kt_output_free(&r);
}
END_TEST

/* ------------------------------------------------------------- pipeline */

static int run(const char *cmd)
{
    int rc = system(cmd);
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

/* One checks line: 23 features, then the format and order. */
static int read_check(FILE *f, double *x, char *format, char *order)
{
    for (int i = 0; i < KR_PREDICT_NFEATURES; i++)
        if (fscanf(f, "%lf", &x[i]) != 1) return 0;
    return fscanf(f, "%31s %31s", format, order) == 2;
}

START_TEST(test_pipeline)
{
    if (run("command -v python3 >/dev/null && command -v cc >/dev/null")) {
        kt_skip("test_pipeline", "python3 or cc is not installed");
        return;
    }
    const char *dir = kt_tmpdir();
    char cmd[2048], so[512];
    snprintf(cmd, sizeof cmd,
             "python3 bench/spmm_train.py test/fixtures/spmm_train "
             "--symbol kt_model --c %s/model.c --checks %s/checks.txt "
             "--report %s/report.md --formats csr,ellr --depth 3 --min-leaf 2 "
             ">%s/train.log",
             dir, dir, dir, dir);
    ck_assert_msg(run(cmd) == 0, "%s failed", cmd);
    snprintf(so, sizeof so, "%s/model.so", dir);
    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -Iinclude -I. "
             "%s/model.c -o %s",
             dir, so);
    ck_assert_msg(run(cmd) == 0, "%s failed", cmd);
    void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    const kr_tree_model *m = dlsym(lib, "kt_model");
    ck_assert_ptr_nonnull(m);
    kr_ctx *ctx = kt_cpu();
    ck_assert_msg(kr_predict_check(ctx, m) == KR_OK, "%s", kr_ctx_error(ctx));
    ck_assert_int_gt(m->nnodes, 1); /* the fixture has something to split */
    snprintf(cmd, sizeof cmd, "%s/checks.txt", dir);
    FILE *f = fopen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    double x[KR_PREDICT_NFEATURES];
    char format[32], order[32];
    int n = 0;
    while (read_check(f, x, format, order)) {
        int32_t leaf = kr_predict_leaf(m, x, NULL, 0);
        ck_assert_msg(!strcmp(m->nodes[leaf].format, format) &&
                          !strcmp(m->nodes[leaf].order, order),
                      "sample %d: C picks %s/%s, the trainer %s/%s", n + 1,
                      m->nodes[leaf].format, m->nodes[leaf].order, format,
                      order);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 20); /* 10 matrices x k = 4, 16 */
    kr_ctx_destroy(ctx);
    dlclose(lib);
}
END_TEST

static Suite *predict_suite(void)
{
    Suite *s = suite_create("predict");
    TCase *tc = tcase_create("tree");
    tcase_add_test(tc, test_walk);
    tcase_add_test(tc, test_choice);
    tcase_add_test(tc, test_check);
    tcase_add_test(tc, test_auto_in_build);
    tcase_add_test(tc, test_solve_auto);
    tcase_add_test(tc, test_pipeline);
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kt_run(predict_suite()); }
