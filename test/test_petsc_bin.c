/* PETSc binary files: bitwise round trips, the PETSc-written fixtures in
 * test/data, every class of malformed file rejected with a clear message,
 * whole-or-nothing writes, and `krylov solve` on .bin files end to end. */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MAT_FIXTURE "test/data/petsc_small_mat.bin"
#define VEC_FIXTURE "test/data/petsc_small_vec.bin"

static kr_ctx *new_ctx(void)
{
    kr_ctx *ctx = NULL;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    return ctx;
}

static const char *join(const char *dir, const char *name)
{
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

/* The whole file in a malloc'ed buffer; its length in *len. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*len + 1);
    ck_assert(b && fread(b, 1, *len, f) == *len);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert(f != NULL);
    ck_assert(fwrite(bytes, 1, len, f) == len);
    ck_assert_int_eq(fclose(f), 0);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

/* A fresh folder whose name outlives the next kt_tmpdir call. */
static const char *new_dir(void)
{
    static char dirs[8][64];
    static int next;
    char *d = dirs[next++ % 8];
    snprintf(d, sizeof dirs[0], "%s", kt_tmpdir());
    return d;
}

/* Nothing in dir but `keep` (NULL: nothing at all). */
static int dir_holds_only(const char *dir, const char *keep)
{
    DIR *d = opendir(dir);
    ck_assert(d != NULL);
    int ok = 1;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (!keep || strcmp(e->d_name, keep)))
            ok = 0;
    closedir(d);
    return ok;
}

static void assert_same_csr(const kr_csr *A, const kr_csr *B)
{
    ck_assert_int_eq(A->nrows, B->nrows);
    ck_assert_int_eq(A->ncols, B->ncols);
    ck_assert_int_eq(A->nnz, B->nnz);
    ck_assert(!memcmp(A->rowptr, B->rowptr, 4 * ((size_t)A->nrows + 1)));
    ck_assert(!memcmp(A->colind, B->colind, 4 * (size_t)A->nnz));
    ck_assert(!memcmp(A->val, B->val, 8 * (size_t)A->nnz));
}

/* Reading path as a matrix (or a vector) fails with `want` and a message
 * naming the file and containing `part`. */
static void expect_fail(kr_ctx *ctx, const char *path, int vec, kr_status want,
                        const char *part)
{
    kr_csr A;
    int32_t n = -1;
    double *v = NULL;
    kr_status st = vec ? kr_read_petsc_vec(ctx, path, &n, &v)
                       : kr_read_petsc_mat(ctx, path, &A);
    const char *msg = kr_ctx_error(ctx);
    ck_assert_msg(st == want, "%s: got %s (%s), want %s", path,
                  kr_status_name(st), msg, kr_status_name(want));
    ck_assert_msg(strstr(msg, path) && strstr(msg, part),
                  "message '%s' lacks the path or '%s'", msg, part);
    ck_assert(vec ? (v == NULL && n == 0) : (A.rowptr == NULL));
}

START_TEST(roundtrip_matrices)
{
    kr_ctx *ctx = new_ctx();
    const char *dir = kt_tmpdir(), *path = join(dir, "A.bin");
    const int32_t shapes[][3] = {
        {1, 1, 1}, {57, 57, 7}, {40, 93, 5}, {120, 31, 4}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        kr_csr A, B;
        kt_random_csr(ctx, shapes[s][0], shapes[s][1], shapes[s][2], 0, 100 + s,
                      &A);
        ck_assert_int_eq(kr_write_petsc_mat(ctx, path, &A), KR_OK);
        size_t len;
        free(slurp(path, &len));
        ck_assert_uint_eq(len, 16 + 4 * (size_t)A.nrows + 12 * (size_t)A.nnz);
        ck_assert_msg(kr_read_petsc_mat(ctx, path, &B) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        assert_same_csr(&A, &B);
        kr_csr_free(&A);
        kr_csr_free(&B);
    }
    /* Empty rows, an empty matrix. */
    kr_csr E, F;
    ck_assert_int_eq(kr_csr_alloc(ctx, 3, 2, 1, &E), KR_OK);
    E.rowptr[2] = E.rowptr[3] = 1;
    E.colind[0] = 1;
    E.val[0] = -0.0;
    ck_assert_int_eq(kr_write_petsc_mat(ctx, path, &E), KR_OK);
    ck_assert_int_eq(kr_read_petsc_mat(ctx, path, &F), KR_OK);
    assert_same_csr(&E, &F);
    kr_csr_free(&E);
    kr_csr_free(&F);
    ck_assert_int_eq(kr_csr_alloc(ctx, 0, 0, 0, &E), KR_OK);
    ck_assert_int_eq(kr_write_petsc_mat(ctx, path, &E), KR_OK);
    ck_assert_int_eq(kr_read_petsc_mat(ctx, path, &F), KR_OK);
    assert_same_csr(&E, &F);
    kr_csr_free(&E);
    kr_csr_free(&F);
    ck_assert(dir_holds_only(dir, "A.bin"));
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(roundtrip_vectors)
{
    kr_ctx *ctx = new_ctx();
    const char *path = join(kt_tmpdir(), "v.bin");
    uint64_t seed = 7;
    for (int32_t n = 0; n <= 5000; n += n < 10 ? 1 : 2477) {
        double *x = malloc(((size_t)n + 1) * sizeof *x), *y = NULL;
        for (int32_t i = 0; i < n; i++)
            x[i] = kt_rand_uniform(&seed) * pow(10.0, (double)(i % 40 - 20));
        if (n > 3) x[1] = -0.0, x[2] = 4.9e-324, x[3] = 1.7976931348623157e308;
        int32_t m = -1;
        ck_assert_int_eq(kr_write_petsc_vec(ctx, path, n, x), KR_OK);
        ck_assert_msg(kr_read_petsc_vec(ctx, path, &m, &y) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        ck_assert_int_eq(m, n);
        ck_assert(y != NULL && !memcmp(x, y, 8 * (size_t)n));
        free(x);
        free(y);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* The fixtures were written by PETSc 3.18 (test/data/README.md). */
START_TEST(read_petsc_fixtures)
{
    kr_ctx *ctx = new_ctx();
    kr_csr A;
    ck_assert_msg(kr_read_petsc_mat(ctx, MAT_FIXTURE, &A) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    const int32_t rowptr[] = {0, 2, 4, 4, 7, 8};
    const int32_t colind[] = {0, 2, 1, 5, 0, 3, 4, 4};
    const double val[] = {4.0, -1.0 / 3.0, 2.5, 1e-300, -7.0, 3.25, 1e10, 0.1};
    ck_assert_int_eq(A.nrows, 5);
    ck_assert_int_eq(A.ncols, 6);
    ck_assert_int_eq(A.nnz, 8);
    ck_assert(!memcmp(A.rowptr, rowptr, sizeof rowptr));
    ck_assert(!memcmp(A.colind, colind, sizeof colind));
    ck_assert(!memcmp(A.val, val, sizeof val));
    kr_csr_free(&A);

    int32_t n = 0;
    double *x = NULL;
    const double want[] = {1.0, -2.0, 1.0 / 3.0, 1e-310, 6.02214076e23};
    ck_assert_msg(kr_read_petsc_vec(ctx, VEC_FIXTURE, &n, &x) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    ck_assert_int_eq(n, 5);
    ck_assert(!memcmp(x, want, sizeof want));
    free(x);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(truncated_files_rejected)
{
    kr_ctx *ctx = new_ctx();
    const char *dir = kt_tmpdir(), *path = join(dir, "cut.bin");
    for (int vec = 0; vec <= 1; vec++) {
        size_t len;
        unsigned char *b = slurp(vec ? VEC_FIXTURE : MAT_FIXTURE, &len);
        const size_t cuts[] = {0, 2, 4, 7, 12, 17, 36, 40, 47, 100, 131};
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            if (cuts[c] >= len) continue;
            spit(path, b, cuts[c]);
            expect_fail(ctx, path, vec, KR_ERR_FORMAT, "truncated");
            char full[64];
            /* Past the header the message gives both sizes. */
            snprintf(full, sizeof full, "expected %zu bytes, file has %zu", len,
                     cuts[c]);
            if (cuts[c] >= (vec ? 8u : 16u))
                ck_assert_msg(strstr(kr_ctx_error(ctx), full), "%s",
                              kr_ctx_error(ctx));
        }
        free(b);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(wrong_class_id_rejected)
{
    kr_ctx *ctx = new_ctx();
    /* A vector file given as a matrix and the other way round. */
    expect_fail(ctx, VEC_FIXTURE, 0, KR_ERR_FORMAT,
                "class id 1211214 (a PETSc vector) found, expected 1211216");
    expect_fail(ctx, MAT_FIXTURE, 1, KR_ERR_FORMAT,
                "class id 1211216 (a PETSc matrix) found, expected 1211214");
    /* A Matrix Market file. */
    const char *dir = kt_tmpdir();
    const char *mtx = kt_write_file(
        dir, "a.mtx", "%%MatrixMarket matrix coordinate real general\n");
    expect_fail(ctx, mtx, 0, KR_ERR_FORMAT, "not a PETSc matrix file");
    kr_ctx_destroy(ctx);
}
END_TEST

/* A writer that forgot to byte-swap: every int and double little-endian. */
START_TEST(little_endian_rejected)
{
    kr_ctx *ctx = new_ctx();
    const char *path = join(kt_tmpdir(), "le.bin");
    int32_t h[6] = {1211216, 1, 1, 1, 1, 0};
    double one = 1.0;
    unsigned char b[32];
    memcpy(b, h, 24);
    memcpy(b + 24, &one, 8);
    spit(path, b, sizeof b);
    expect_fail(ctx, path, 0, KR_ERR_FORMAT, "little-endian");
    int32_t hv[2] = {1211214, 1};
    memcpy(b, hv, 8);
    memcpy(b + 8, &one, 8);
    spit(path, b, 16);
    expect_fail(ctx, path, 1, KR_ERR_FORMAT, "little-endian");
    /* Garbage bytes. */
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (unsigned char)(37 * i + 11);
    spit(path, b, sizeof b);
    expect_fail(ctx, path, 0, KR_ERR_FORMAT, "not a PETSc matrix file");
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(trailing_bytes_rejected)
{
    kr_ctx *ctx = new_ctx();
    const char *path = join(kt_tmpdir(), "long.bin");
    for (int vec = 0; vec <= 1; vec++) {
        size_t len;
        unsigned char *b = slurp(vec ? VEC_FIXTURE : MAT_FIXTURE, &len);
        b = realloc(b, len + 8);
        memset(b + len, 0, 8);
        spit(path, b, len + 1);
        expect_fail(ctx, path, vec, KR_ERR_FORMAT, "1 trailing bytes");
        spit(path, b, len + 8);
        expect_fail(ctx, path, vec, KR_ERR_FORMAT, "8 trailing bytes");
        free(b);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* Edits one int32 (at byte offset `at`) or one double of the fixture. */
static const char *edited(const char *dir, size_t at, uint32_t v, int dbl,
                          double d)
{
    size_t len;
    unsigned char *b = slurp(MAT_FIXTURE, &len);
    if (dbl) {
        uint64_t u;
        memcpy(&u, &d, 8);
        put32(b + at, (uint32_t)(u >> 32));
        put32(b + at + 4, (uint32_t)u);
    } else {
        put32(b + at, v);
    }
    const char *path = join(dir, "edit.bin");
    spit(path, b, len);
    free(b);
    return path;
}

START_TEST(bad_contents_rejected)
{
    kr_ctx *ctx = new_ctx();
    const char *dir = kt_tmpdir();
    /* Layout: 16 header, 20 row lengths (5), 32 columns (8), 64 values. */
    expect_fail(ctx, edited(dir, 36 + 4 * 3, 6, 0, 0), 0, KR_ERR_FORMAT,
                "row 1: column index 6 outside 0..5");
    expect_fail(ctx, edited(dir, 36 + 4 * 7, (uint32_t)-1, 0, 0), 0,
                KR_ERR_FORMAT, "row 4: column index -1 outside 0..5");
    expect_fail(ctx, edited(dir, 16 + 4 * 2, 1, 0, 0), 0, KR_ERR_FORMAT,
                "row lengths sum to 9, but the header says 8");
    expect_fail(ctx, edited(dir, 16 + 4 * 0, 1, 0, 0), 0, KR_ERR_FORMAT,
                "row lengths sum to 7");
    expect_fail(ctx, edited(dir, 16 + 4 * 4, (uint32_t)-3, 0, 0), 0,
                KR_ERR_FORMAT, "row 4: negative length -3");
    expect_fail(ctx, edited(dir, 4, (uint32_t)-5, 0, 0), 0, KR_ERR_FORMAT,
                "negative size");
    expect_fail(ctx, edited(dir, 68 + 8 * 5, 0, 1, NAN), 0, KR_ERR_FORMAT,
                "row 3, column 3: value is not finite");
    /* A header that promises 2^31-1 nonzeros is caught before allocating. */
    expect_fail(ctx, edited(dir, 12, 0x7fffffff, 0, 0), 0, KR_ERR_FORMAT,
                "truncated: expected 25769803800 bytes, file has 132");
    expect_fail(ctx, "no/such/dir/A.bin", 0, KR_ERR_IO,
                "No such file or directory");
    expect_fail(ctx, "no/such/dir/b.bin", 1, KR_ERR_IO,
                "No such file or directory");
    expect_fail(ctx, dir, 0, KR_ERR_IO, "Is a directory");
    kr_ctx_destroy(ctx);
}
END_TEST

/* Another writer's unsorted rows with repeated columns come out sorted,
 * the repeats summed, and pass kr_csr_check. */
START_TEST(unsorted_duplicates_summed)
{
    kr_ctx *ctx = new_ctx();
    const char *path = join(kt_tmpdir(), "dup.bin");
    /* 2 x 3: row 0 = (2, 1.0) (0, 2.0) (2, 0.5); row 1 = (1, 3.0) */
    const uint32_t ints[] = {1211216, 2, 3, 4, 3, 1, 2, 0, 2, 1};
    const double vals[] = {1.0, 2.0, 0.5, 3.0};
    unsigned char b[40 + 32];
    for (int i = 0; i < 10; i++)
        put32(b + 4 * i, ints[i]);
    for (int i = 0; i < 4; i++) {
        uint64_t u;
        memcpy(&u, &vals[i], 8);
        put32(b + 40 + 8 * i, (uint32_t)(u >> 32));
        put32(b + 44 + 8 * i, (uint32_t)u);
    }
    spit(path, b, sizeof b);
    kr_csr A;
    ck_assert_msg(kr_read_petsc_mat(ctx, path, &A) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    ck_assert_int_eq(A.nnz, 3);
    ck_assert_int_eq(A.rowptr[1], 2);
    ck_assert_int_eq(A.rowptr[2], 3);
    ck_assert(A.colind[0] == 0 && A.colind[1] == 2 && A.colind[2] == 1);
    ck_assert(A.val[0] == 2.0 && A.val[1] == 1.5 && A.val[2] == 3.0);
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_OK);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(failed_write_leaves_no_file)
{
    kr_ctx *ctx = new_ctx();
    const char *dir = kt_tmpdir();
    kr_csr A;
    kt_random_csr(ctx, 20, 20, 3, 1, 5, &A);
    double x[3] = {1.0, 2.0, 3.0};
    /* No such folder. */
    const char *nowhere = join(dir, "missing/A.bin");
    ck_assert_int_eq(kr_write_petsc_mat(ctx, nowhere, &A), KR_ERR_IO);
    ck_assert(strstr(kr_ctx_error(ctx), "missing/A.bin"));
    ck_assert_int_eq(kr_write_petsc_vec(ctx, join(dir, "missing/x.bin"), 3, x),
                     KR_ERR_IO);
    /* Invalid data: nothing written, an existing file left as it was. */
    const char *path = join(dir, "A.bin");
    ck_assert_int_eq(kr_write_petsc_mat(ctx, path, &A), KR_OK);
    size_t len0, len1;
    unsigned char *before = slurp(path, &len0);
    A.val[4] = INFINITY;
    ck_assert_int_eq(kr_write_petsc_mat(ctx, path, &A), KR_ERR_FORMAT);
    ck_assert(strstr(kr_ctx_error(ctx), "not written"));
    unsigned char *after = slurp(path, &len1);
    ck_assert(len0 == len1 && !memcmp(before, after, len0));
    x[1] = NAN;
    ck_assert_int_eq(kr_write_petsc_vec(ctx, join(dir, "x.bin"), 3, x),
                     KR_ERR_FORMAT);
    ck_assert(!kt_file_exists(join(dir, "x.bin")));
    ck_assert(dir_holds_only(dir, "A.bin"));
    free(before);
    free(after);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------ the command */

/* Runs krylov with the given arguments; stderr goes to dir/err.txt. */
static int krylov(const char *dir, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out.txt' 2>'%s/err.txt'",
             kt_krylov_bin(), args, dir, dir);
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double rel_residual(const kr_csr *A, const double *b, const double *x)
{
    double *r = malloc((size_t)A->nrows * sizeof *r), s = 0.0, t = 0.0;
    kr_csr_matvec(A, x, r);
    for (int32_t i = 0; i < A->nrows; i++) {
        s += (b[i] - r[i]) * (b[i] - r[i]);
        t += b[i] * b[i];
    }
    free(r);
    return sqrt(s / t);
}

START_TEST(cli_solves_petsc_files)
{
    kr_ctx *ctx = new_ctx();
    const char *dir = new_dir(), *io = new_dir();
    kr_csr A;
    kt_random_csr(ctx, 300, 300, 6, 1, 11, &A);
    int32_t n = A.nrows;
    double *b = malloc((size_t)n * sizeof *b), *x0 = calloc((size_t)n, 8);
    uint64_t seed = 3;
    for (int32_t i = 0; i < n; i++)
        b[i] = kt_rand_uniform(&seed), x0[i] = 0.5;
    ck_assert_int_eq(kr_write_petsc_mat(ctx, join(dir, "A.bin"), &A), KR_OK);
    ck_assert_int_eq(kr_write_petsc_vec(ctx, join(dir, "b.bin"), n, b), KR_OK);
    ck_assert_int_eq(kr_write_petsc_vec(ctx, join(dir, "x0.bin"), n, x0),
                     KR_OK);
    char args[2048];
    snprintf(args, sizeof args,
             "solve '%s/A.bin' -b '%s/b.bin' --x0 '%s/x0.bin' -o '%s/x.bin' "
             "--device cpu --rtol 1e-10",
             dir, dir, dir, dir);
    ck_assert_int_eq(krylov(io, args), 0);
    int32_t m = 0;
    double *x = NULL;
    ck_assert_msg(kr_read_petsc_vec(ctx, join(dir, "x.bin"), &m, &x) == KR_OK,
                  "%s", kr_ctx_error(ctx));
    ck_assert_int_eq(m, n);
    ck_assert_double_le(rel_residual(&A, b, x), 1e-9);
    free(x);
    /* Mixed: a PETSc matrix and a Matrix Market right-hand side. */
    ck_assert_int_eq(kr_write_dense_mtx(ctx, join(dir, "b.mtx"), n, 1, b),
                     KR_OK);
    snprintf(args, sizeof args,
             "solve '%s/A.bin' -b '%s/b.mtx' -o '%s/x.mtx' --device cpu", dir,
             dir, dir);
    ck_assert_int_eq(krylov(io, args), 0);
    int32_t rows = 0, cols = 0;
    ck_assert_int_eq(
        kr_read_dense_mtx(ctx, join(dir, "x.mtx"), &rows, &cols, &x), KR_OK);
    ck_assert(rows == n && cols == 1);
    ck_assert_double_le(rel_residual(&A, b, x), 1e-7);
    free(x);
    free(b);
    free(x0);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(cli_rejects_vector_as_matrix)
{
    const char *dir = new_dir(), *io = new_dir();
    char args[1024];
    snprintf(args, sizeof args, "solve '%s' -o '%s/x.bin' --device cpu",
             VEC_FIXTURE, dir);
    ck_assert_int_eq(krylov(io, args), 3);
    size_t len;
    char *err = (char *)slurp(join(io, "err.txt"), &len);
    err[len] = '\0';
    ck_assert_msg(strstr(err, VEC_FIXTURE) && strstr(err, "class id 1211214"),
                  "%s", err);
    free(err);
    ck_assert(dir_holds_only(dir, NULL));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("petsc_bin");
    TCase *t = tcase_create("petsc_bin");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, roundtrip_matrices);
    tcase_add_test(t, roundtrip_vectors);
    tcase_add_test(t, read_petsc_fixtures);
    tcase_add_test(t, truncated_files_rejected);
    tcase_add_test(t, wrong_class_id_rejected);
    tcase_add_test(t, little_endian_rejected);
    tcase_add_test(t, trailing_bytes_rejected);
    tcase_add_test(t, bad_contents_rejected);
    tcase_add_test(t, unsorted_duplicates_summed);
    tcase_add_test(t, failed_write_leaves_no_file);
    tcase_add_test(t, cli_solves_petsc_files);
    tcase_add_test(t, cli_rejects_vector_as_matrix);
    suite_add_tcase(s, t);
    return kt_run(s);
}
