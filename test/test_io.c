/* Matrix Market input/output: every variant read against the dense matrix
 * it denotes, malformed files rejected with their status and "FILE:LINE",
 * bitwise round trips, all-or-nothing writes, and the shared real
 * matrices checked against an independent scan of their text. */
#include "io/read.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define H "%%MatrixMarket matrix coordinate real general\n"
#define HS "%%MatrixMarket matrix coordinate real symmetric\n"
#define HA "%%MatrixMarket matrix array real general\n"

static kr_ctx *ctx;

static void setup(void)
{
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
}

static void teardown(void)
{
    kr_ctx_destroy(ctx);
    ctx = NULL;
}

/* Asserts that A is valid CSR equal to the m x n row-major `want`. */
static void expect_dense(const kr_csr *A, int32_t m, int32_t n,
                         const double *want)
{
    ck_assert_msg(kr_csr_check(ctx, A) == KR_OK, "%s", kr_ctx_error(ctx));
    ck_assert_int_eq(A->nrows, m);
    ck_assert_int_eq(A->ncols, n);
    double *D = calloc((size_t)m * n + 1, sizeof *D);
    for (int32_t i = 0; i < m; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            D[(size_t)i * n + A->colind[k]] = A->val[k];
    for (int32_t i = 0; i < m; i++)
        for (int32_t j = 0; j < n; j++)
            ck_assert_msg(D[i * n + j] == want[i * n + j],
                          "A(%d,%d) = %g, expected %g", i + 1, j + 1,
                          D[i * n + j], want[i * n + j]);
    free(D);
}

/* Reads `text` as a file and checks its nnz and dense value. */
static void read_expect(const char *text, int32_t m, int32_t n, int32_t nnz,
                        const double *want)
{
    const char *path = kt_write_file(kt_tmpdir(), "a.mtx", text);
    kr_csr A;
    ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s", kr_ctx_error(ctx));
    ck_assert_int_eq(A.nnz, nnz);
    expect_dense(&A, m, n, want);
    kr_csr_free(&A);
}

/* ------------------------------------------------------------ variants */

START_TEST(read_coordinate_real_general)
{
    const double want[] = {1.5,     0, 0,  0.25, /* row 1 */
                           0,       0, -2, 0,    /* row 2 */
                           -0.7125, 0, 0,  300};
    read_expect("%%MatrixMarket matrix coordinate real general\n"
                "% a comment\n"
                "3 4 5\n"
                "1 1 1.5\n2 3 -2\n3 4 3e2\n1 4 .25\n3 1 -7.125E-1\n",
                3, 4, 5, want);
}
END_TEST

START_TEST(read_integer_and_pattern)
{
    const double wi[] = {7, 0, -3, 12};
    read_expect("%%MatrixMarket matrix coordinate integer general\n"
                "2 2 3\n1 1 7\n2 1 -3\n2 2 +12\n",
                2, 2, 3, wi);
    const double wp[] = {0, 1, 0, 1, 0, 0, 0, 1, 1};
    read_expect("%%MatrixMarket matrix coordinate pattern general\n"
                "3 3 4\n1 2\n2 1\n3 3\n3 2\n",
                3, 3, 4, wp);
}
END_TEST

START_TEST(read_symmetric)
{
    /* Lower triangle, mirrored, and a diagonal that must be stored once
     * (an entry above the diagonal is refused: read_malformed). */
    const double want[] = {4, -1, 0.5, -1, 5, -2, 0.5, -2, 0};
    read_expect("%%MatrixMarket matrix coordinate real symmetric\n"
                "3 3 5\n1 1 4\n2 1 -1\n3 2 -2\n2 2 5\n3 1 0.5\n",
                3, 3, 8, want);
    const double wp[] = {1, 1, 1, 0};
    read_expect("%%MatrixMarket matrix coordinate pattern symmetric\n"
                "2 2 2\n1 1\n2 1\n",
                2, 2, 3, wp);
}
END_TEST

START_TEST(read_skew_symmetric)
{
    const double want[] = {0, -3, 4, 3, 0, 0, -4, 0, 0};
    read_expect("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                "3 3 2\n2 1 3\n3 1 -4\n",
                3, 3, 4, want);
}
END_TEST

START_TEST(read_array_general)
{
    /* Column-major; the zero of a dense file is not a stored entry. */
    const double want[] = {1, 3, 5, 0, 4, 6};
    read_expect("%%MatrixMarket matrix array real general\n"
                "% comment\n2 3\n1\n0\n3\n4\n5\n6\n",
                2, 3, 5, want);
}
END_TEST

START_TEST(read_array_symmetric_and_skew)
{
    /* The lower triangle column by column: a11 a21 a31 a22 a32 a33. */
    const double want[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    read_expect("%%MatrixMarket matrix array real symmetric\n"
                "3 3\n1\n2\n3\n4\n5\n6\n",
                3, 3, 9, want);
    /* Skew: strictly below the diagonal, a21 a31 a32. */
    const double ws[] = {0, -1, -2, 1, 0, -3, 2, 3, 0};
    read_expect("%%MatrixMarket matrix array integer skew-symmetric\n"
                "3 3\n1\n2\n3\n",
                3, 3, 6, ws);
}
END_TEST

START_TEST(read_duplicates_summed)
{
    const double want[] = {3, 0, 0, 1};
    read_expect("%%MatrixMarket matrix coordinate real general\n"
                "2 2 4\n1 1 1\n1 1 2.5\n2 2 1\n1 1 -0.5\n",
                2, 2, 2, want);
    /* (2,1) twice in a symmetric file: one entry, summed, then mirrored
     * ((1,2) beside it is refused: read_malformed). */
    const double ws[] = {0, 3, 3, 0};
    read_expect("%%MatrixMarket matrix coordinate real symmetric\n"
                "2 2 2\n2 1 1\n2 1 2\n",
                2, 2, 2, ws);
}
END_TEST

START_TEST(read_comments_blank_crlf)
{
    const double want[] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
    read_expect("%%MatrixMarket matrix coordinate real general\r\n"
                "% comment\r\n\r\n   \r\n"
                "3 3 2\r\n\r\n% between entries\r\n"
                "\t1  1\t1.0  \r\n  \r\n3 3 2\r\n% trailing\r\n\r\n",
                3, 3, 2, want);
    /* No line end at all after the last entry. */
    read_expect("%%MatrixMarket matrix coordinate real general\n"
                "3 3 2\n1 1 1\n3 3 2",
                3, 3, 2, want);
}
END_TEST

START_TEST(read_upper_case_banner)
{
    const double want[] = {2, -1, -1, 2};
    read_expect("%%MATRIXMARKET MATRIX COORDINATE REAL SYMMETRIC\n"
                "2 2 3\n1 1 2\n2 1 -1\n2 2 2\n",
                2, 2, 4, want);
    read_expect("%%matrixmarket Matrix Coordinate Real Symmetric\n"
                "2 2 3\n1 1 2\n2 1 -1\n2 2 2\n",
                2, 2, 4, want);
}
END_TEST

START_TEST(read_explicit_zeros_kept)
{
    const double want[] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    const char *path =
        kt_write_file(kt_tmpdir(), "z.mtx",
                      "%%MatrixMarket matrix coordinate real general\n"
                      "3 3 4\n1 1 0\n2 2 0.0\n2 1 -0\n3 3 1\n");
    kr_csr A;
    ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
    ck_assert_int_eq(A.nnz, 4);
    expect_dense(&A, 3, 3, want);
    /* Row 2 holds columns 1 and 2, both zero, the first one -0. */
    ck_assert_int_eq(A.rowptr[1], 1);
    ck_assert_int_eq(A.rowptr[2], 3);
    ck_assert(signbit(A.val[1]) && A.colind[1] == 0);
    kr_csr_free(&A);
}
END_TEST

START_TEST(read_empty_and_1x1)
{
    const double zero[9] = {0};
    read_expect("%%MatrixMarket matrix coordinate real general\n3 3 0\n", 3, 3,
                0, zero);
    read_expect("%%MatrixMarket matrix coordinate real general\n0 0 0\n", 0, 0,
                0, zero);
    const double one[] = {-2.5};
    read_expect("%%MatrixMarket matrix coordinate real general\n"
                "1 1 1\n1 1 -2.5\n",
                1, 1, 1, one);
    read_expect("%%MatrixMarket matrix array real general\n1 1\n-2.5\n", 1, 1,
                1, one);
}
END_TEST

/* Rows far from sorted and long enough for the merge sort, with
 * duplicates that must be summed. */
START_TEST(read_unsorted_long_rows)
{
    enum { M = 3, N = 300, E = 2 * N + 2 };
    static char text[E * 32 + 128];
    double want[M * N] = {0};
    int len = snprintf(text, sizeof text,
                       "%%%%MatrixMarket matrix coordinate real general\n"
                       "%d %d %d\n",
                       M, N, E);
    uint64_t s = 5;
    for (int k = 0; k < 2 * N; k++) {
        int i = k % 2 ? 1 : 2, j = (int)((k * 7919L) % N);
        double v = (double)(kt_rand_u64(&s) % 1000 + 1) / 8.0;
        want[i * N + j] += v;
        len += snprintf(text + len, sizeof text - (size_t)len, "%d %d %.17g\n",
                        i + 1, j + 1, v);
    }
    want[0] += 2.0;
    want[N - 1] += 3.0;
    snprintf(text + len, sizeof text - (size_t)len, "1 %d 3\n1 1 2\n", N);
    int32_t nnz = 2;
    for (int k = N; k < M * N; k++)
        nnz += want[k] != 0.0;
    read_expect(text, M, N, nnz, want);
}
END_TEST

START_TEST(read_nul_byte)
{
    const char *dir = kt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/nul.mtx", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    static const char text[] = H "2 2 2\n1 1 1\n2 2 1\0junk\n";
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    kr_csr A;
    ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "nul.mtx:4: "));
}
END_TEST

static void write_gz(const char *path, const char *text)
{
    gzFile g = gzopen(path, "wb");
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(gzputs(g, text), (int)strlen(text));
    ck_assert_int_eq(gzclose(g), Z_OK);
}

START_TEST(read_gzip)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/s.mtx.gz", kt_tmpdir());
    write_gz(path, "%%MatrixMarket matrix coordinate real symmetric\r\n"
                   "% compressed\n3 3 4\n1 1 2\n2 1 -1\n3 3 7\n3 2 0.5\n");
    kr_csr A;
    ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s", kr_ctx_error(ctx));
    const double want[] = {2, -1, 0, -1, 0, 0.5, 0, 0.5, 7};
    ck_assert_int_eq(A.nnz, 6);
    expect_dense(&A, 3, 3, want);
    kr_csr_free(&A);
}
END_TEST

/* A large compressed file: its arrays grow past the first capacity. */
START_TEST(read_gzip_large)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/big.mtx.gz", kt_tmpdir());
    gzFile g = gzopen(path, "wb");
    ck_assert_ptr_nonnull(g);
    const int n = 150000;
    gzprintf(g, "%%%%MatrixMarket matrix coordinate integer general\n");
    gzprintf(g, "%d %d %d\n", n, n, n);
    for (int i = n; i >= 1; i--)
        gzprintf(g, "%d %d %d\n", i, n + 1 - i, i);
    ck_assert_int_eq(gzclose(g), Z_OK);
    kr_csr A;
    ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s", kr_ctx_error(ctx));
    ck_assert_int_eq(A.nnz, n);
    ck_assert_int_eq(kr_csr_check(ctx, &A), KR_OK);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(A.rowptr[i], i);
        ck_assert_int_eq(A.colind[i], n - 1 - i);
        ck_assert(A.val[i] == i + 1);
    }
    kr_csr_free(&A);
}
END_TEST

/* A compressed file declaring 2e9 entries but holding 3: the size is not
 * known, so nothing of that size may be allocated (ASan would abort). */
START_TEST(read_gzip_lying_size_line)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/lie.mtx.gz", kt_tmpdir());
    write_gz(path, "%%MatrixMarket matrix coordinate real general\n"
                   "10 10 2000000000\n1 1 1\n2 2 2\n3 3 3\n");
    kr_csr A;
    ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "lie.mtx.gz:5:"));
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "after 3 of the"));
    ck_assert_ptr_null(A.rowptr);
}
END_TEST

START_TEST(read_gzip_truncated)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/t.mtx.gz", kt_tmpdir());
    gzFile g = gzopen(path, "wb");
    ck_assert_ptr_nonnull(g);
    gzprintf(g, "%%%%MatrixMarket matrix coordinate real general\n");
    gzprintf(g, "5000 5000 5000\n");
    for (int i = 1; i <= 5000; i++)
        gzprintf(g, "%d %d %.17g\n", i, i, i / 7.0);
    ck_assert_int_eq(gzclose(g), Z_OK);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
    kr_csr A;
    kr_status s = kr_read_mtx(ctx, path, &A);
    ck_assert_msg(s == KR_ERR_IO, "status %s: %s", kr_status_name(s),
                  kr_ctx_error(ctx));
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "t.mtx.gz:"));
}
END_TEST

START_TEST(read_missing_file_and_directory)
{
    const char *dir = kt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/none.mtx", dir);
    kr_csr A;
    ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_ERR_IO);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), path));
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), strerror(ENOENT)));
    ck_assert_int_eq(kr_read_mtx(ctx, dir, &A), KR_ERR_IO);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), strerror(EISDIR)));
    int32_t m, n;
    double *D = NULL;
    ck_assert_int_eq(kr_read_dense_mtx(ctx, path, &m, &n, &D), KR_ERR_IO);
    ck_assert_ptr_null(D);
}
END_TEST

/* ------------------------------------------------------------ malformed */

typedef struct bad_case {
    const char *text;
    kr_status status;
    int line;           /* the 1-based line the message must name */
    const char *needle; /* more text the message must contain, or NULL */
} bad_case;

static const bad_case bad_cases[] = {
    {"", KR_ERR_FORMAT, 1, "empty"},
    {"3 3 1\n1 1 1\n", KR_ERR_FORMAT, 1, "banner"},
    {"% comment\n" H "1 1 1\n1 1 1\n", KR_ERR_FORMAT, 1, "banner"},
    {"%%MatrixMarket matrix coordinate real\n3 3 0\n", KR_ERR_FORMAT, 1,
     "expected 5"},
    {"%%MatrixMarket vector coordinate real general\n3 3 0\n", KR_ERR_FORMAT, 1,
     "'vector'"},
    {"%%MatrixMarket matrix sparse real general\n3 3 0\n", KR_ERR_FORMAT, 1,
     "'sparse'"},
    {"%%MatrixMarket matrix coordinate double general\n3 3 0\n", KR_ERR_FORMAT,
     1, "'double'"},
    {"%%MatrixMarket matrix coordinate real lower\n3 3 0\n", KR_ERR_FORMAT, 1,
     "'lower'"},
    {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
     KR_ERR_UNSUPPORTED, 1, "complex"},
    {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
     KR_ERR_UNSUPPORTED, 1, "hermitian"},
    {"%%MatrixMarket matrix array pattern general\n1 1\n1\n", KR_ERR_FORMAT, 1,
     "pattern"},
    {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
     KR_ERR_FORMAT, 1, "skew"},
    {H "% only a comment\n", KR_ERR_FORMAT, 2, "size line"},
    {H "% c\n3 3\n1 1 1\n", KR_ERR_FORMAT, 3, "size line"},
    {H "3 x 2\n", KR_ERR_FORMAT, 2, "'x'"},
    {H "-3 3 1\n1 1 1\n", KR_ERR_FORMAT, 2, "'-3'"},
    {H "3000000000 3 1\n1 1 1\n", KR_ERR_UNSUPPORTED, 2, "32-bit"},
    {H "10 10 2000000000\n1 1 1\n", KR_ERR_FORMAT, 2, "bytes"},
    {HA "100000 100000\n1\n", KR_ERR_UNSUPPORTED, 2, "32-bit"},
    {HS "10 10 1200000000\n1 1 1\n", KR_ERR_UNSUPPORTED, 2,
     "symmetric expansion"},
    {HS "3 4 1\n1 1 1\n", KR_ERR_FORMAT, 2, "square"},
    {H "10 10 2\n1 1 1\n2 2\n", KR_ERR_FORMAT, 4, "expected 3 numbers"},
    {H "10 10 2\n1 1 1 5\n2 2 1\n", KR_ERR_FORMAT, 3, "found 4"},
    {H "10 10 3\n1 1 1\n\n2 2 2\n% c\n3 12 1\n", KR_ERR_FORMAT, 7,
     "column index 12 out of range 1..10"},
    {H "10 10 1\n0 1 1\n", KR_ERR_FORMAT, 3, "row index 0 out of range"},
    {H "10 10 1\n1 -2 1\n", KR_ERR_FORMAT, 3, "column index -2"},
    {H "10 10 1\n11 1 1\n", KR_ERR_FORMAT, 3, "row index 11"},
    {H "10 10 1\n99999999999999999999999 1 1\n", KR_ERR_FORMAT, 3,
     "out of range"},
    {H "10 10 1\n1.5 1 1\n", KR_ERR_FORMAT, 3, "not an integer"},
    {H "10 10 1\n1 abc 1\n", KR_ERR_FORMAT, 3, "'abc' is not an integer"},
    {H "10 10 1\n1 1 1.2.3\n", KR_ERR_FORMAT, 3, "'1.2.3' is not a number"},
    {H "10 10 1\n1 1 abc\n", KR_ERR_FORMAT, 3, "'abc' is not a number"},
    {H "10 10 1\n1 1 1e\n", KR_ERR_FORMAT, 3, "'1e' is not a number"},
    {H "10 10 2\n1 1 1\n2 2 nan\n", KR_ERR_FORMAT, 4, "not finite"},
    {H "10 10 1\n1 1 -inf\n", KR_ERR_FORMAT, 3, "not finite"},
    {H "10 10 1\n1 1 1e999\n", KR_ERR_FORMAT, 3, "not finite"},
    {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
     KR_ERR_FORMAT, 3, "not an integer"},
    {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n",
     KR_ERR_FORMAT, 3, "found 3"},
    {H "10 10 2\n1 1 1\n2 2 1\n\n% c\n3 3 1\n", KR_ERR_FORMAT, 7,
     "more entries"},
    {H "10 10 3\n1 1 1\n2 2 1\n% end\n", KR_ERR_FORMAT, 5, "after 2 of the 3"},
    {H "10 10 3\n1 1 1\n2 2 1", KR_ERR_FORMAT, 4, "after 2 of the 3"},
    {H "10 10 1\n", KR_ERR_FORMAT, 2, "after 0 of the 1"},
    {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n"
     "2 1 1\n2 2 1\n",
     KR_ERR_FORMAT, 4, "diagonal"},
    {HA "2 2\n1\n2\n3\n", KR_ERR_FORMAT, 5, "after 3 of the 4 values"},
    {HA "2 2\n1 2\n3\n4\n", KR_ERR_FORMAT, 3, "expected 1 number"},
    {HA "2 2\n1\n2\n3\n4\n5\n", KR_ERR_FORMAT, 7, "more values"},
    {H "\r\n% c\r\n10 10 1\r\n\r\n1 x 1\r\n", KR_ERR_FORMAT, 6, "'x'"},
    /* issue 16, item 7: one triangle only, an entry and its mirror */
    {HS "3 3 1\n1 3 1\n", KR_ERR_FORMAT, 3, "(1, 3) is above the diagonal"},
    {HS "2 2 2\n2 1 1\n1 2 2\n", KR_ERR_FORMAT, 4, "mirror (2, 1)"},
    {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n"
     "2 3 1\n",
     KR_ERR_FORMAT, 3, "skew-symmetric file stores the lower"},
    /* item 12: the number in the file, not a clamped one, and no overflow */
    {HS "4 4 4611686018427387904\n1 1 1\n", KR_ERR_UNSUPPORTED, 2,
     "4611686018427387904 entries"},
    {HS "4 4 99999999999999999999999\n1 1 1\n", KR_ERR_UNSUPPORTED, 2,
     "99999999999999999999999 entries"},
    {H "3000000000000000000000 3 1\n1 1 1\n", KR_ERR_UNSUPPORTED, 2,
     "3000000000000000000000 rows"},
    /* item 13: decimal values only; no silent underflow to zero */
    {H "10 10 1\n1 1 0x1p3\n", KR_ERR_FORMAT, 3, "'0x1p3' is not a number"},
    {H "10 10 1\n1 1 0x10\n", KR_ERR_FORMAT, 3, "'0x10' is not a number"},
    {H "10 10 1\n1 1 infinity\n", KR_ERR_FORMAT, 3, "not finite"},
    {H "10 10 1\n1 1 .\n", KR_ERR_FORMAT, 3, "'.' is not a number"},
    {H "10 10 1\n1 1 1e-400\n", KR_ERR_FORMAT, 3, "'1e-400' underflows"},
    {HA "1 1\n-0.0001e-330\n", KR_ERR_FORMAT, 3, "underflows"},
    {"\xEF\xBB\xBF"
     "3 3 1\n1 1 1\n",
     KR_ERR_FORMAT, 1, "banner"},
};

START_TEST(read_malformed)
{
    const char *dir = kt_tmpdir();
    int ncases = (int)(sizeof bad_cases / sizeof bad_cases[0]);
    ck_assert_int_ge(ncases, 20);
    for (int c = 0; c < ncases; c++) {
        const bad_case *b = &bad_cases[c];
        char name[32], where[64];
        snprintf(name, sizeof name, "bad%02d.mtx", c);
        snprintf(where, sizeof where, "/%s:%d: ", name, b->line);
        const char *path = kt_write_file(dir, name, b->text);
        kr_csr A;
        kr_status s = kr_read_mtx(ctx, path, &A);
        const char *msg = kr_ctx_error(ctx);
        ck_assert_msg(s == b->status, "case %d: status %s, expected %s (%s)", c,
                      kr_status_name(s), kr_status_name(b->status), msg);
        ck_assert_msg(strstr(msg, where), "case %d: '%s' lacks '%s'", c, msg,
                      where);
        ck_assert_msg(!b->needle || strstr(msg, b->needle),
                      "case %d: '%s' lacks '%s'", c, msg, b->needle);
        ck_assert_ptr_null(A.rowptr);
        /* The dense reader shares the checks. */
        int32_t m = -1, n = -1;
        double *D = NULL;
        s = kr_read_dense_mtx(ctx, path, &m, &n, &D);
        ck_assert_msg(s == b->status && strstr(kr_ctx_error(ctx), where),
                      "case %d (dense): %s %s", c, kr_status_name(s),
                      kr_ctx_error(ctx));
        ck_assert_ptr_null(D);
    }
}
END_TEST

/* Values that are decimal, subnormal (not zero) or an exact zero are
 * kept; a UTF-8 byte-order mark before the banner is skipped. */
START_TEST(read_decimal_forms_and_bom)
{
    const double want[] = {1e-310, 0, 0, -0.0, 0, 0, 0, 0, 250};
    read_expect("\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n"
                "3 3 3\n1 1 1e-310\n2 1 -0.0e-999\n3 3 +2.5E2\n",
                3, 3, 3, want);
}
END_TEST

/* KR_READ_SYSTEM (krylov solve): a square, non-empty matrix without an
 * empty row; a file that proves an empty row by its size line alone is
 * refused before its rows are allocated (2e9 rows would take 8 GB). */
START_TEST(read_system_refusals)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {H "2000000000 2000000000 3\n1 1 1\n2 2 1\n3 3 1\n",
         ":2: 2000000000 rows but only 3 entries"},
        {HS "5 5 2\n1 1 1\n5 1 1\n", ":2: 5 rows but only 2 entries"},
        {H "2 3 2\n1 1 1\n2 2 1\n", ":2: the matrix is 2 x 3"},
        {H "0 0 0\n", ":2: the matrix is 0 x 0"},
        {HA "0 0\n", ":2: the matrix is 0 x 0"},
    };
    const char *dir = kt_tmpdir();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *path = kt_write_file(dir, "s.mtx", cases[c].text);
        kr_csr A;
        kr_status st = kr_read_matrix_path(ctx, path, KR_READ_SYSTEM, &A);
        ck_assert_msg(st == KR_ERR_FORMAT, "case %zu: %s (%s)", c,
                      kr_status_name(st), kr_ctx_error(ctx));
        ck_assert_msg(strstr(kr_ctx_error(ctx), cases[c].needle),
                      "case %zu: '%s' lacks '%s'", c, kr_ctx_error(ctx),
                      cases[c].needle);
        ck_assert_ptr_null(A.rowptr);
    }
    /* Without the flag, a file with empty rows or none is a matrix; with
     * it, an empty row the size line does not prove is the solve's. */
    const char *path = kt_write_file(dir, "e.mtx", H "3 3 1\n1 1 1\n");
    kr_csr A;
    ck_assert_int_eq(kr_read_matrix_path(ctx, path, 0, &A), KR_OK);
    ck_assert_int_eq(A.nnz, 1);
    kr_csr_free(&A);
    path = kt_write_file(dir, "f.mtx", H "3 3 3\n1 1 1\n2 2 1\n2 1 1\n");
    ck_assert_int_eq(kr_read_matrix_path(ctx, path, KR_READ_SYSTEM, &A), KR_OK);
    kr_csr_free(&A);
}
END_TEST

/* Sizes from a file are checked against the memory available before
 * anything is allocated for them; the refusal gives the bytes needed and
 * available. (32-bit indices cap what a file can ask for at about 16 GB,
 * so the check itself is called here with a larger need.) */
START_TEST(read_memory_estimated_first)
{
    ck_assert_int_eq(kr_io_check_memory(ctx, "f.mtx:2", 1e18, "a matrix"),
                     KR_ERR_NOMEM);
    const char *msg = kr_ctx_error(ctx);
    ck_assert_msg(strstr(msg, "f.mtx:2: a matrix needs 1000000000.00 GB") &&
                      strstr(msg, "available"),
                  "%s", msg);
    ck_assert_int_eq(kr_io_check_memory(ctx, "f.mtx:2", 1e6, "a matrix"),
                     KR_OK);
    const char *path = kt_write_file(
        kt_tmpdir(), "h.mtx", H "2000000000 2000000000 2000000000\n1 1 1\n");
    kr_csr A;
    ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_ERR_FORMAT); /* bytes */
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "h.mtx:2: "));
}
END_TEST

/* ---------------------------------------------------------------- dense */

START_TEST(read_dense_array_and_coordinate)
{
    const char *dir = kt_tmpdir();
    const char *p = kt_write_file(dir, "d.mtx",
                                  HA "3 2\n1\n2\n3\n-4\n5e-1\n"
                                     "6\n");
    int32_t m, n;
    double *D;
    ck_assert_msg(kr_read_dense_mtx(ctx, p, &m, &n, &D) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    const double want[] = {1, 2, 3, -4, 0.5, 6};
    ck_assert_int_eq(m, 3);
    ck_assert_int_eq(n, 2);
    for (int k = 0; k < 6; k++)
        ck_assert(D[k] == want[k]);
    free(D);
    /* Coordinate: missing entries are zero, symmetric ones mirrored,
     * duplicates summed; column-major result. */
    p = kt_write_file(dir, "c.mtx", HS "3 3 4\n1 1 2\n3 1 -1\n3 1 -1\n2 2 5\n");
    ck_assert_int_eq(kr_read_dense_mtx(ctx, p, &m, &n, &D), KR_OK);
    const double ws[] = {2, 0, -2, 0, 5, 0, -2, 0, 0};
    ck_assert_int_eq(m, 3);
    ck_assert_int_eq(n, 3);
    for (int k = 0; k < 9; k++)
        ck_assert(D[k] == ws[k]);
    free(D);
}
END_TEST

/* ----------------------------------------------------------- round trip */

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void expect_same_csr(const kr_csr *A, const kr_csr *B)
{
    ck_assert_int_eq(A->nrows, B->nrows);
    ck_assert_int_eq(A->ncols, B->ncols);
    ck_assert_int_eq(A->nnz, B->nnz);
    size_t nz = (size_t)A->nnz;
    ck_assert(memcmp(A->rowptr, B->rowptr,
                     ((size_t)A->nrows + 1) * sizeof *A->rowptr) == 0);
    ck_assert(memcmp(A->colind, B->colind, nz * sizeof *A->colind) == 0);
    ck_assert(memcmp(A->val, B->val, nz * sizeof *A->val) == 0);
}

START_TEST(write_read_round_trip)
{
    kr_csr A, B;
    kt_random_csr(ctx, 300, 200, 8, 0, 42, &A);
    /* Values whose shortest text is not obvious. */
    const double special[] = {-0.0,
                              0.1,
                              -1.0 / 3.0,
                              4.9e-324,
                              1e-310,
                              1.7976931348623157e308,
                              -2.2250738585072014e-308,
                              123456789.0};
    for (int k = 0; k < 8; k++)
        A.val[k * 37] = special[k];
    const char *dir = kt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/rt.mtx", dir);
    ck_assert_msg(kr_write_mtx(ctx, path, &A) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    ck_assert_int_eq(dir_entries(dir), 1);
    ck_assert_msg(kr_read_mtx(ctx, path, &B) == KR_OK, "%s", kr_ctx_error(ctx));
    expect_same_csr(&A, &B);
    kr_csr_free(&B);
    /* Overwriting replaces the file and leaves nothing else behind. */
    kr_csr C;
    kt_random_csr(ctx, 50, 50, 3, 1, 7, &C);
    ck_assert_int_eq(kr_write_mtx(ctx, path, &C), KR_OK);
    ck_assert_int_eq(kr_read_mtx(ctx, path, &B), KR_OK);
    expect_same_csr(&C, &B);
    ck_assert_int_eq(dir_entries(dir), 1);
    kr_csr_free(&A);
    kr_csr_free(&B);
    kr_csr_free(&C);
}
END_TEST

START_TEST(write_read_dense_round_trip)
{
    enum { M = 37, N = 5 };
    double X[M * N], *Y;
    uint64_t s = 9;
    for (int k = 0; k < M * N; k++)
        X[k] = kt_rand_uniform(&s) * 1e3;
    X[3] = -0.0;
    X[4] = 4.9e-324;
    const char *dir = kt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/x.mtx", dir);
    ck_assert_int_eq(kr_write_dense_mtx(ctx, path, M, N, X), KR_OK);
    int32_t m, n;
    ck_assert_msg(kr_read_dense_mtx(ctx, path, &m, &n, &Y) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    ck_assert_int_eq(m, M);
    ck_assert_int_eq(n, N);
    ck_assert(memcmp(X, Y, sizeof X) == 0);
    free(Y);
    ck_assert_int_eq(dir_entries(dir), 1);
    /* Non-finite data is refused before anything is written. */
    X[7] = NAN;
    snprintf(path, sizeof path, "%s/nan.mtx", dir);
    ck_assert_int_eq(kr_write_dense_mtx(ctx, path, M, N, X), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "row 8, column 1"));
    ck_assert_int_eq(dir_entries(dir), 1);
}
END_TEST

START_TEST(write_into_missing_directory)
{
    const char *dir = kt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/nodir/out.mtx", dir);
    kr_csr A;
    kt_random_csr(ctx, 20, 20, 3, 1, 3, &A);
    ck_assert_int_eq(kr_write_mtx(ctx, path, &A), KR_ERR_IO);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), path));
    double x[2] = {1, 2};
    ck_assert_int_eq(kr_write_dense_mtx(ctx, path, 2, 1, x), KR_ERR_IO);
    ck_assert_int_eq(dir_entries(dir), 0);
    /* Invalid CSR (unsorted row) is refused and writes nothing. */
    snprintf(path, sizeof path, "%s/bad.mtx", dir);
    int32_t t = A.colind[0];
    A.colind[0] = A.colind[1];
    A.colind[1] = t;
    ck_assert_int_ne(kr_write_mtx(ctx, path, &A), KR_OK);
    ck_assert_int_eq(dir_entries(dir), 0);
    kr_csr_free(&A);
}
END_TEST

START_TEST(write_into_read_only_directory)
{
    if (geteuid() == 0) {
        kt_skip("write_into_read_only_directory",
                "running as root, which ignores directory permissions");
        return;
    }
    const char *dir = kt_tmpdir();
    ck_assert_int_eq(chmod(dir, 0555), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/out.mtx", dir);
    kr_csr A;
    kt_random_csr(ctx, 20, 20, 3, 1, 3, &A);
    ck_assert_int_eq(kr_write_mtx(ctx, path, &A), KR_ERR_IO);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), strerror(EACCES)));
    ck_assert_int_eq(dir_entries(dir), 0);
    chmod(dir, 0755);
    kr_csr_free(&A);
}
END_TEST

/* A write that fails half-way (file size limit, like a full disk) reports
 * the error and leaves the old file untouched and no temporary. */
START_TEST(write_fails_midway)
{
    const char *dir = kt_tmpdir();
    const char *path = kt_write_file(dir, "old.mtx", H "1 1 1\n1 1 5\n");
    kr_csr A;
    kt_random_csr(ctx, 20000, 20000, 5, 1, 11, &A);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 1 << 16;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    kr_status s1 = kr_write_mtx(ctx, path, &A);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", kr_ctx_error(ctx));
    double *X = calloc(20000 * 5, sizeof *X);
    kr_status s2 = kr_write_dense_mtx(ctx, path, 20000, 5, X);
    setrlimit(RLIMIT_FSIZE, &old);
    free(X);
    ck_assert_int_eq(s1, KR_ERR_IO);
    ck_assert_int_eq(s2, KR_ERR_IO);
    ck_assert_msg(strstr(msg, path) && strstr(msg, strerror(EFBIG)), "%s", msg);
    ck_assert_int_eq(dir_entries(dir), 1);
    kr_csr B;
    ck_assert_int_eq(kr_read_mtx(ctx, path, &B), KR_OK);
    ck_assert_int_eq(B.nnz, 1);
    ck_assert(B.val[0] == 5.0);
    kr_csr_free(&A);
    kr_csr_free(&B);
}
END_TEST

/* --------------------------------------------------------- real matrices */

/* An independent plain scan of a coordinate file: symmetry, stored count,
 * diagonal count, and y = A*x from the text (symmetric entries mirrored). */
typedef struct scan {
    int symmetric;
    long stored, diagonal;
    int32_t n, m;
} scan;

static void scan_file(const char *path, scan *sc, double **y)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    memset(sc, 0, sizeof *sc);
    sc->symmetric = strstr(line, "symmetric") != NULL;
    long declared = -1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%') continue;
        if (declared < 0) {
            ck_assert_int_eq(
                sscanf(line, "%d %d %ld", &sc->m, &sc->n, &declared), 3);
            *y = calloc((size_t)sc->m + 1, sizeof **y);
            continue;
        }
        int i, j;
        double v;
        ck_assert_int_eq(sscanf(line, "%d %d %lf", &i, &j, &v), 3);
        sc->stored++;
        sc->diagonal += i == j;
        (*y)[i - 1] += v * sin(j);
        if (sc->symmetric && i != j) (*y)[j - 1] += v * sin(i);
    }
    fclose(f);
    ck_assert_int_eq(sc->stored, declared);
}

static void check_real_matrix(const char *path)
{
    double t = kr_wtime();
    kr_csr A;
    ck_assert_msg(kr_read_mtx(ctx, path, &A) == KR_OK, "%s", kr_ctx_error(ctx));
    t = kr_wtime() - t;
    ck_assert_msg(t < 1.0, "%s took %.2f s to read", path, t);
    ck_assert_msg(kr_csr_check(ctx, &A) == KR_OK, "%s: %s", path,
                  kr_ctx_error(ctx));
    scan sc;
    double *yref = NULL;
    scan_file(path, &sc, &yref);
    long want = sc.symmetric ? 2 * sc.stored - sc.diagonal : sc.stored;
    ck_assert_msg(A.nnz == want, "%s: nnz %d, expected %ld", path, A.nnz, want);
    ck_assert_int_eq(A.nrows, sc.m);
    ck_assert_int_eq(A.ncols, sc.n);
    double *x = malloc(sizeof *x * (size_t)A.ncols);
    double *y = malloc(sizeof *y * (size_t)A.nrows);
    for (int32_t j = 0; j < A.ncols; j++)
        x[j] = sin(j + 1);
    kr_csr_matvec(&A, x, y);
    double d = kt_rel_diff(A.nrows, y, yref);
    ck_assert_msg(d < 1e-12, "%s: A*x differs from the text by %g", path, d);
    free(x);
    free(y);
    free(yref);
    kr_csr_free(&A);
}

START_TEST(read_real_matrices)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("read_real_matrices", "no matrices folder (../shared/"
                                      "matrices or $KRYLOV_MATRICES)");
        return;
    }
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mtx") != 0) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        check_real_matrix(path);
        count++;
    }
    closedir(d);
    ck_assert_msg(count > 0, "no .mtx files in %s", dir);
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *t = tcase_create("mtx");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, read_coordinate_real_general);
    tcase_add_test(t, read_integer_and_pattern);
    tcase_add_test(t, read_symmetric);
    tcase_add_test(t, read_skew_symmetric);
    tcase_add_test(t, read_array_general);
    tcase_add_test(t, read_array_symmetric_and_skew);
    tcase_add_test(t, read_duplicates_summed);
    tcase_add_test(t, read_comments_blank_crlf);
    tcase_add_test(t, read_upper_case_banner);
    tcase_add_test(t, read_explicit_zeros_kept);
    tcase_add_test(t, read_empty_and_1x1);
    tcase_add_test(t, read_decimal_forms_and_bom);
    tcase_add_test(t, read_system_refusals);
    tcase_add_test(t, read_memory_estimated_first);
    tcase_add_test(t, read_unsorted_long_rows);
    tcase_add_test(t, read_nul_byte);
    tcase_add_test(t, read_gzip);
    tcase_add_test(t, read_gzip_large);
    tcase_add_test(t, read_gzip_lying_size_line);
    tcase_add_test(t, read_gzip_truncated);
    tcase_add_test(t, read_missing_file_and_directory);
    tcase_add_test(t, read_malformed);
    tcase_add_test(t, read_dense_array_and_coordinate);
    tcase_add_test(t, write_read_round_trip);
    tcase_add_test(t, write_read_dense_round_trip);
    tcase_add_test(t, write_into_missing_directory);
    tcase_add_test(t, write_into_read_only_directory);
    tcase_add_test(t, write_fails_midway);
    tcase_add_test(t, read_real_matrices);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return kt_run(io_suite()); }
