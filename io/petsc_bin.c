/* PETSc binary files (MatView/VecView with 32-bit PetscInt and real double
 * scalars): big-endian int32 class id and sizes, then the arrays. Readers
 * check the whole layout against the file size before allocating. */
#include "core/error.h"
#include "io/outfile.h"
#include "io/read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    KR_PETSC_MAT_ID = 1211216, /* MAT_FILE_CLASSID in petscmat.h */
    KR_PETSC_VEC_ID = 1211214, /* VEC_FILE_CLASSID in petscvec.h */
    KR_PETSC_CHUNK = 4096      /* values converted per fwrite       */
};

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* In-place conversions of arrays read raw from the file. */
static void int32_from_be(int32_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char b[4];
        memcpy(b, &a[i], 4);
        a[i] = (int32_t)get_be32(b);
    }
}

static void double_from_be(double *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char b[8];
        memcpy(b, &a[i], 8);
        uint64_t u = (uint64_t)get_be32(b) << 32 | get_be32(b + 4);
        memcpy(&a[i], &u, 8);
    }
}

static const char *class_name(uint32_t id)
{
    if (id == KR_PETSC_MAT_ID) return " (a PETSc matrix)";
    if (id == KR_PETSC_VEC_ID) return " (a PETSc vector)";
    return "";
}

/* Reads `hlen` header bytes; checks the class id first so a wrong kind of
 * file is named as such even when it is short. */
static kr_status read_header(kr_ctx *ctx, kr_source *S, uint32_t want,
                             unsigned char *hdr, size_t hlen)
{
    size_t got = 0;
    KR_TRY(kr_source_read(ctx, S, hdr, hlen, &got));
    if (got >= 4 && get_be32(hdr) != want) {
        uint32_t id = get_be32(hdr);
        unsigned char rev[4] = {hdr[3], hdr[2], hdr[1], hdr[0]};
        const char *what = get_be32(rev) == want
                               ? " (written little-endian? PETSc binary is "
                                 "big-endian)"
                               : class_name(id);
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: not a PETSc %s file: class id %u%s found, "
                       "expected %u%s",
                       S->path, want == KR_PETSC_MAT_ID ? "matrix" : "vector",
                       id, what, want, class_name(want));
    }
    if (got < hlen)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: truncated: expected a %zu-byte header, the input "
                       "has %zu bytes",
                       S->path, hlen, got);
    return KR_OK;
}

/* The input must hold exactly `expect` bytes: checked before allocating
 * when its size is known, and after reading otherwise (a pipe). */
static kr_status check_size(kr_ctx *ctx, const kr_source *S, long long expect)
{
    long long size = S->size;
    if (size < 0) return KR_OK;
    if (size < expect)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: truncated: expected %lld bytes, file has %lld",
                       S->path, expect, size);
    if (size > expect)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: %lld trailing bytes after the data: expected %lld "
                       "bytes, file has %lld",
                       S->path, size - expect, expect, size);
    return KR_OK;
}

static kr_status read_raw(kr_ctx *ctx, kr_source *S, void *dst, size_t bytes)
{
    size_t got = 0;
    KR_TRY(kr_source_read(ctx, S, dst, bytes, &got));
    if (got != bytes)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: truncated: the data ends %zu bytes early", S->path,
                       bytes - got);
    return KR_OK;
}

/* Nothing may follow the data (checked by reading when the size was not
 * known in advance). */
static kr_status expect_end(kr_ctx *ctx, kr_source *S)
{
    unsigned char extra;
    size_t got = 0;
    KR_TRY(kr_source_read(ctx, S, &extra, 1, &got));
    if (got)
        return kr_fail(ctx, KR_ERR_FORMAT, "%s: trailing bytes after the data",
                       S->path);
    return KR_OK;
}

/* Row lengths (read into rowptr[1..M]) to row pointers; a sum past nnz is
 * not stored, so the int32 pointers never wrap. */
static kr_status lengths_to_rowptr(kr_ctx *ctx, const char *path, kr_csr *A)
{
    int64_t sum = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t len = A->rowptr[i + 1];
        if (len < 0)
            return kr_fail(ctx, KR_ERR_FORMAT, "%s: row %d: negative length %d",
                           path, i, len);
        sum += len;
        if (sum <= A->nnz) A->rowptr[i + 1] = (int32_t)sum;
    }
    if (sum != A->nnz)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: row lengths sum to %lld, but the header says %d "
                       "nonzeros",
                       path, (long long)sum, A->nnz);
    return KR_OK;
}

static kr_status check_entries(kr_ctx *ctx, const char *path, const kr_csr *A)
{
    for (int32_t i = 0; i < A->nrows; i++)
        for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (A->colind[k] < 0 || A->colind[k] >= A->ncols)
                return kr_fail(ctx, KR_ERR_FORMAT,
                               "%s: row %d: column index %d outside 0..%d",
                               path, i, A->colind[k], A->ncols - 1);
            if (!isfinite(A->val[k]))
                return kr_fail(ctx, KR_ERR_FORMAT,
                               "%s: row %d, column %d: value is not finite",
                               path, i, A->colind[k]);
        }
    return KR_OK;
}

typedef struct col_val {
    int32_t col;
    double val;
} col_val;

static int by_col(const void *a, const void *b)
{
    int32_t x = ((const col_val *)a)->col, y = ((const col_val *)b)->col;
    return (x > y) - (x < y);
}

/* Sorts row i (at its old place lo..hi) and appends it, duplicates summed,
 * at *w. `tmp` holds at least hi - lo pairs. */
static void sort_row(kr_csr *A, int32_t lo, int32_t hi, col_val *tmp,
                     int32_t *w)
{
    int32_t len = hi - lo, sorted = 1;
    for (int32_t k = lo + 1; k < hi && sorted; k++)
        sorted = A->colind[k] > A->colind[k - 1];
    for (int32_t k = 0; k < len; k++)
        tmp[k] = (col_val){A->colind[lo + k], A->val[lo + k]};
    if (!sorted) qsort(tmp, (size_t)len, sizeof *tmp, by_col);
    for (int32_t k = 0; k < len; k++) {
        if (k > 0 && tmp[k].col == A->colind[*w - 1]) {
            A->val[*w - 1] += tmp[k].val;
            continue;
        }
        A->colind[*w] = tmp[k].col;
        A->val[*w] = tmp[k].val;
        (*w)++;
    }
}

/* PETSc writes sorted rows without duplicates; other writers may not. */
static kr_status sort_rows(kr_ctx *ctx, const char *path, kr_csr *A)
{
    int32_t maxlen = 0;
    for (int32_t i = 0; i < A->nrows; i++)
        if (A->rowptr[i + 1] - A->rowptr[i] > maxlen)
            maxlen = A->rowptr[i + 1] - A->rowptr[i];
    col_val *tmp = malloc(((size_t)maxlen + 1) * sizeof *tmp);
    if (!tmp) return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory", path);
    int32_t w = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t lo = A->rowptr[i], hi = A->rowptr[i + 1];
        A->rowptr[i] = w;
        sort_row(A, lo, hi, tmp, &w);
    }
    A->rowptr[A->nrows] = w;
    A->nnz = w;
    free(tmp);
    return KR_OK;
}

/* Reads `count` elements of `size` bytes into a new array *out with
 * `lead` zeroed elements in front and one spare behind. When the input's
 * size is unknown (a pipe, gzip) the array grows as the data arrives, so
 * a short input never costs what its header claims. */
static kr_status read_array(kr_ctx *ctx, kr_source *S, size_t lead,
                            size_t count, size_t size, void **out)
{
    enum { FIRST = 1 << 16 };
    size_t total = lead + count + 1;
    size_t cap = S->size >= 0 || total <= lead + FIRST ? total : lead + FIRST;
    unsigned char *a = calloc(cap, size);
    size_t have = 0;
    kr_status st = KR_OK;
    while (a && st == KR_OK && have < count) {
        if (lead + have + 1 == cap) {
            size_t grown = cap * 2 < total ? cap * 2 : total;
            unsigned char *b = realloc(a, grown * size);
            if (!b) break;
            a = b;
            cap = grown;
        }
        size_t want = cap - 1 - lead - have;
        if (want > count - have) want = count - have;
        st = read_raw(ctx, S, a + (lead + have) * size, want * size);
        have += want;
    }
    if (st == KR_OK && have < count)
        st = kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory for %zu values",
                     S->path, count);
    if (st != KR_OK) {
        free(a);
        return st;
    }
    *out = a;
    return KR_OK;
}

static kr_status read_mat_body(kr_ctx *ctx, kr_source *S, kr_csr *A)
{
    const char *path = S->path;
    size_t m = (size_t)A->nrows, nz = (size_t)A->nnz;
    void *p;
    KR_TRY(read_array(ctx, S, 1, m, 4, &p));
    A->rowptr = p;
    KR_TRY(read_array(ctx, S, 0, nz, 4, &p));
    A->colind = p;
    KR_TRY(read_array(ctx, S, 0, nz, 8, &p));
    A->val = p;
    KR_TRY(expect_end(ctx, S));
    int32_from_be(A->rowptr + 1, m);
    int32_from_be(A->colind, nz);
    double_from_be(A->val, nz);
    KR_TRY(lengths_to_rowptr(ctx, path, A));
    KR_TRY(check_entries(ctx, path, A));
    KR_TRY(sort_rows(ctx, path, A));
    kr_status st = kr_csr_check(ctx, A);
    if (st != KR_OK) kr_error_prefix(ctx, "%s", path);
    return st;
}

/* A linear system's matrix: square, not empty, and (fewer nonzeros than
 * rows proving an empty row) not singular; checked from the header. */
static kr_status check_system(kr_ctx *ctx, const char *path, int32_t M,
                              int32_t N, int32_t nz)
{
    if (M != N)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: the matrix is %d x %d (header); a linear system "
                       "needs a square matrix",
                       path, M, N);
    if (M == 0)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: the matrix is 0 x 0 (header): there is no system "
                       "to solve",
                       path);
    if (nz < M)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: %d rows but only %d nonzeros (header): some row "
                       "is empty, so the matrix is singular",
                       path, M, nz);
    return KR_OK;
}

static kr_status mat_sizes(kr_ctx *ctx, kr_source *S, unsigned flags,
                           const unsigned char *h, int32_t *M, int32_t *N,
                           int32_t *nz)
{
    *M = (int32_t)get_be32(h + 4);
    *N = (int32_t)get_be32(h + 8);
    *nz = (int32_t)get_be32(h + 12);
    if (*M < 0 || *N < 0 || *nz < 0)
        return kr_fail(ctx, KR_ERR_FORMAT,
                       "%s: negative size in the header: %d x %d with %d "
                       "nonzeros",
                       S->path, *M, *N, *nz);
    if (flags & KR_READ_SYSTEM) KR_TRY(check_system(ctx, S->path, *M, *N, *nz));
    KR_TRY(check_size(ctx, S, 16 + 4LL * *M + 12LL * *nz));
    char what[96];
    snprintf(what, sizeof what, "a %d x %d matrix with %d nonzeros", *M, *N,
             *nz);
    /* rowptr, colind and val, and the sort's scratch pairs */
    return kr_io_check_memory(ctx, S->path, 4.0 * *M + 28.0 * *nz, what);
}

kr_status kr_read_petsc_mat_from(kr_ctx *ctx, kr_source *S, unsigned flags,
                                 kr_csr *A)
{
    memset(A, 0, sizeof *A);
    unsigned char h[16];
    int32_t M, N, nz;
    kr_status st;
    KR_CHECK(st, read_header(ctx, S, KR_PETSC_MAT_ID, h, 16), done);
    KR_CHECK(st, mat_sizes(ctx, S, flags, h, &M, &N, &nz), done);
    A->nrows = M;
    A->ncols = N;
    A->nnz = nz;
    st = read_mat_body(ctx, S, A);
done:
    if (st != KR_OK) kr_csr_free(A);
    return st;
}

kr_status kr_read_petsc_mat(kr_ctx *ctx, const char *path, kr_csr *A)
{
    if (!path || !A)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_petsc_mat: NULL argument");
    memset(A, 0, sizeof *A);
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = kr_read_petsc_mat_from(ctx, &S, 0, A);
    kr_source_close(&S);
    return st;
}

kr_status kr_read_petsc_vec_from(kr_ctx *ctx, kr_source *S, int32_t *n,
                                 double **data)
{
    *n = 0;
    *data = NULL;
    unsigned char h[8];
    double *v = NULL;
    kr_status st;
    KR_CHECK(st, read_header(ctx, S, KR_PETSC_VEC_ID, h, 8), done);
    int32_t len = (int32_t)get_be32(h + 4);
    if (len < 0) {
        st = kr_fail(ctx, KR_ERR_FORMAT, "%s: negative vector length %d",
                     S->path, len);
        goto done;
    }
    KR_CHECK(st, check_size(ctx, S, 8 + 8LL * len), done);
    KR_CHECK(
        st,
        kr_io_check_memory(ctx, S->path, 8.0 * len, "a vector of this length"),
        done);
    void *p = NULL;
    KR_CHECK(st, read_array(ctx, S, 0, (size_t)len, 8, &p), done);
    v = p;
    KR_CHECK(st, expect_end(ctx, S), done);
    double_from_be(v, (size_t)len);
    for (int32_t i = 0; i < len && st == KR_OK; i++)
        if (!isfinite(v[i]))
            st = kr_fail(ctx, KR_ERR_FORMAT,
                         "%s: entry %d (0-based) is not finite", S->path, i);
done:
    if (st == KR_OK) {
        *n = len;
        *data = v;
    } else {
        free(v);
    }
    return st;
}

kr_status kr_read_petsc_vec(kr_ctx *ctx, const char *path, int32_t *n,
                            double **data)
{
    if (!path || !n || !data)
        return kr_fail(ctx, KR_ERR_ARG, "kr_read_petsc_vec: NULL argument");
    *n = 0;
    *data = NULL;
    kr_source S;
    KR_TRY(kr_source_open(ctx, path, &S));
    kr_status st = kr_read_petsc_vec_from(ctx, &S, n, data);
    kr_source_close(&S);
    return st;
}

/* ---------------------------------------------------------------- writers */

static int write_ints(kr_outfile *f, const int32_t *a, size_t n, int lengths)
{
    unsigned char buf[4 * KR_PETSC_CHUNK];
    for (size_t i = 0; i < n; i += KR_PETSC_CHUNK) {
        size_t m = n - i < KR_PETSC_CHUNK ? n - i : KR_PETSC_CHUNK;
        for (size_t k = 0; k < m; k++) /* lengths: a is a rowptr */
            put_be32(buf + 4 * k,
                     (uint32_t)(lengths ? a[i + k + 1] - a[i + k] : a[i + k]));
        if (kr_outfile_write(f, buf, 4 * m) != 0) return -1;
    }
    return 0;
}

static int write_doubles(kr_outfile *f, const double *a, size_t n)
{
    unsigned char buf[8 * KR_PETSC_CHUNK];
    for (size_t i = 0; i < n; i += KR_PETSC_CHUNK) {
        size_t m = n - i < KR_PETSC_CHUNK ? n - i : KR_PETSC_CHUNK;
        for (size_t k = 0; k < m; k++) {
            uint64_t u;
            memcpy(&u, &a[i + k], 8);
            put_be32(buf + 8 * k, (uint32_t)(u >> 32));
            put_be32(buf + 8 * k + 4, (uint32_t)u);
        }
        if (kr_outfile_write(f, buf, 8 * m) != 0) return -1;
    }
    return 0;
}

kr_status kr_write_petsc_mat(kr_ctx *ctx, const char *path, const kr_csr *A)
{
    if (!path) return kr_fail(ctx, KR_ERR_ARG, "kr_write_petsc_mat: NULL path");
    kr_status st = kr_csr_check(ctx, A);
    if (st != KR_OK) {
        kr_error_prefix(ctx, "%s: not written", path);
        return st;
    }
    int32_t h[4] = {KR_PETSC_MAT_ID, A->nrows, A->ncols, A->nnz};
    kr_outfile o;
    KR_TRY(kr_outfile_open(ctx, path, KR_OUT_PLAIN, &o));
    if (write_ints(&o, h, 4, 0) ||
        write_ints(&o, A->rowptr, (size_t)A->nrows, 1) ||
        write_ints(&o, A->colind, (size_t)A->nnz, 0) ||
        write_doubles(&o, A->val, (size_t)A->nnz))
        return kr_outfile_fail(ctx, &o);
    return kr_outfile_commit(ctx, &o);
}

kr_status kr_write_petsc_vec(kr_ctx *ctx, const char *path, int32_t n,
                             const double *data)
{
    if (!path || n < 0 || (n > 0 && !data))
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_write_petsc_vec: NULL path or data, or n < 0");
    for (int32_t i = 0; i < n; i++)
        if (!isfinite(data[i]))
            return kr_fail(ctx, KR_ERR_FORMAT,
                           "%s: not written: entry %d (0-based) is not finite",
                           path, i);
    int32_t h[2] = {KR_PETSC_VEC_ID, n};
    kr_outfile o;
    KR_TRY(kr_outfile_open(ctx, path, KR_OUT_PLAIN, &o));
    if (write_ints(&o, h, 2, 0) || write_doubles(&o, data, (size_t)n))
        return kr_outfile_fail(ctx, &o);
    return kr_outfile_commit(ctx, &o);
}
