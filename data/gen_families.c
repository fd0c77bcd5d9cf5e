/* The SpMM training families: banded (random band widths per row), blocks
 * (dense blocks scattered over the block rows) and arrow (dense first rows
 * and columns plus the diagonal). Each random number comes from a
 * splitmix64 stream keyed by the seed and the row (or block row), so a
 * matrix depends on its spec only, not on the thread count. Off-diagonal
 * values of banded and blocks are uniform in [-1, 1) and a_ii = 1 + sum
 * |a_ij| (strictly diagonally dominant); arrow is symmetric with -1 off
 * the diagonal and a_ii = 1 + (row length - 1) (so SPD). */
#include "core/error.h"
#include "data/gen.h"

#include <stdlib.h>
#include <string.h>

#define BAND_KEY 0x62616e6465643031ull
#define BLOCK_KEY 0x626c6f636b733031ull

static uint64_t stream(uint64_t key, uint64_t seed, int32_t i, uint64_t part)
{
    return kr_gen_mix64(key ^ kr_gen_mix64(seed) ^
                        kr_gen_mix64(((uint64_t)(uint32_t)i << 2) | part));
}

/* rowptr[i + 1] = len[i] summed; len is rowptr + 1 on entry. */
static void scan_lengths(kr_csr *A)
{
    for (int32_t i = 0; i < A->nrows; i++)
        A->rowptr[i + 1] += A->rowptr[i];
}

/* Allocates A for the row lengths in len (n of them, nnz in total). */
static kr_status alloc_from_lengths(kr_ctx *ctx, int32_t n, const int32_t *len,
                                    kr_csr *A)
{
    int64_t nnz = 0;
    for (int32_t i = 0; i < n; i++)
        nnz += len[i];
    KR_TRY(kr_csr_alloc(ctx, n, n, (int32_t)nnz, A));
    memcpy(A->rowptr + 1, len, sizeof *len * (size_t)n);
    scan_lengths(A);
    return KR_OK;
}

/* ---------------------------------------------------------------- banded */

static void band_of(uint64_t seed, int32_t i, int32_t N, int32_t width,
                    int32_t *lo, int32_t *hi)
{
    uint64_t s = stream(BAND_KEY, seed, i, 0);
    int32_t l = kr_gen_below(&s, width + 1), u = kr_gen_below(&s, width + 1);
    *lo = i - l < 0 ? 0 : i - l;
    *hi = (int64_t)i + u >= N ? N - 1 : i + u;
}

kr_status kr_gen_banded(kr_ctx *ctx, int32_t N, int32_t width, uint64_t seed,
                        kr_csr *A)
{
    int nt = kr_gen_threads(ctx, (int64_t)N * (width + 1));
    int32_t *len = malloc(sizeof *len * (size_t)N);
    if (!len)
        return kr_fail(ctx, KR_ERR_NOMEM,
                       "banded: out of host memory for %d row lengths", N);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t i = 0; i < N; i++) {
        int32_t lo, hi;
        band_of(seed, i, N, width, &lo, &hi);
        len[i] = hi - lo + 1;
    }
    kr_status st = alloc_from_lengths(ctx, N, len, A);
    free(len);
    if (st != KR_OK) return st;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t i = 0; i < N; i++) {
        int32_t lo, hi, *col = A->colind + A->rowptr[i];
        band_of(seed, i, N, width, &lo, &hi);
        for (int32_t j = lo; j <= hi; j++)
            col[j - lo] = j;
        uint64_t s = stream(BAND_KEY, seed, i, 1);
        kr_gen_dominant_values(&s, hi - lo + 1, i - lo, A->val + A->rowptr[i]);
    }
    return KR_OK;
}

/* ---------------------------------------------------------------- blocks */

/* Block row I's block columns, sorted: I and per_row others of nb. */
static void blocks_of(uint64_t seed, int32_t I, int32_t nb, int32_t per_row,
                      int32_t *out)
{
    uint64_t s = stream(BLOCK_KEY, seed, I, 0);
    kr_gen_sample_with(&s, per_row, nb, I, out);
}

static int32_t block_width(int32_t J, int32_t size, int32_t N)
{
    int64_t end = (int64_t)(J + 1) * size;
    return (int32_t)((end > N ? N : end) - (int64_t)J * size);
}

/* Row i's columns and values, its block row's columns in bc. */
static void fill_block_row(uint64_t seed, int32_t i, int32_t size, int32_t N,
                           const int32_t *bc, int32_t nbc, int32_t *col,
                           double *val)
{
    int32_t p = 0, diag = 0;
    for (int32_t t = 0; t < nbc; t++)
        for (int32_t j = bc[t] * size;
             j < bc[t] * size + block_width(bc[t], size, N); j++) {
            if (j == i) diag = p;
            col[p++] = j;
        }
    uint64_t s = stream(BLOCK_KEY, seed, i, 1);
    kr_gen_dominant_values(&s, p, diag, val);
}

kr_status kr_gen_blocks(kr_ctx *ctx, int32_t N, int32_t size, int32_t per_row,
                        uint64_t seed, kr_csr *A)
{
    int32_t nb = (int32_t)(((int64_t)N + size - 1) / size);
    int nt = kr_gen_threads(ctx, (int64_t)N * size * (per_row + 1));
    int32_t *bc = malloc(sizeof *bc * ((size_t)nb * (per_row + 1)));
    int32_t *len = malloc(sizeof *len * (size_t)N);
    kr_status st = KR_OK;
    if (!bc || !len) {
        st = kr_fail(ctx, KR_ERR_NOMEM,
                     "blocks: out of host memory for %d block rows", nb);
        goto done;
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t I = 0; I < nb; I++)
        blocks_of(seed, I, nb, per_row, bc + (size_t)I * (per_row + 1));
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t i = 0; i < N; i++) {
        const int32_t *b = bc + (size_t)(i / size) * (per_row + 1);
        len[i] = 0;
        for (int32_t t = 0; t <= per_row; t++)
            len[i] += block_width(b[t], size, N);
    }
    st = alloc_from_lengths(ctx, N, len, A);
    if (st != KR_OK) goto done;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t i = 0; i < N; i++)
        fill_block_row(seed, i, size, N,
                       bc + (size_t)(i / size) * (per_row + 1), per_row + 1,
                       A->colind + A->rowptr[i], A->val + A->rowptr[i]);
done:
    free(bc);
    free(len);
    return st;
}

/* ----------------------------------------------------------------- arrow */

kr_status kr_gen_arrow(kr_ctx *ctx, int32_t N, int32_t width, kr_csr *A)
{
    int64_t nnz = (int64_t)width * N + (int64_t)(N - width) * (width + 1);
    KR_TRY(kr_csr_alloc(ctx, N, N, (int32_t)nnz, A));
    int nt = kr_gen_threads(ctx, nnz);
    for (int32_t i = 0; i < N; i++)
        A->rowptr[i + 1] = i < width ? N : width + 1;
    scan_lengths(A);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int32_t i = 0; i < N; i++) {
        int32_t *col = A->colind + A->rowptr[i];
        double *val = A->val + A->rowptr[i];
        int32_t len = A->rowptr[i + 1] - A->rowptr[i];
        for (int32_t t = 0; t < len; t++) {
            col[t] = i < width || t < width ? t : i;
            val[t] = col[t] == i ? (double)len : -1.0;
        }
    }
    return KR_OK;
}
