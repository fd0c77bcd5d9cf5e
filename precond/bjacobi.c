/* Block-Jacobi, z = D^{-1} r with D the block diagonal of A (Anzt, Dongarra,
 * Flegar, Quintana-Orti 2018). Setup on the host: block partition
 * (precond/blocking.c), extraction of each diagonal block and its inverse
 * by Gauss-Jordan elimination (precond/gje.c), singular blocks replaced
 * or reported by the caller's policy. Apply: on the CPU a dense mat-vec
 * per block, OpenMP over blocks, straight from the host copy (the CPU
 * backend's memory is host memory); on the GPU, for now, the inverse as a
 * CSR matrix through the "csr" format's CUDA ops. */
#include "precond/bjacobi.h"

#include "core/error.h"
#include "precond/blocking.h"
#include "precond/gje.h"
#include "precond/precond.h"
#include "spmv/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many stored inverse entries the CPU apply runs on one thread. */
#define BJ_SERIAL_ENTRIES 50000
/* Singular blocks named in the error message. */
#define BJ_NAMED 4

typedef struct bj_impl {
    int32_t n, nb;
    int32_t
        *starts;   /* host, nb + 1: block b is rows starts[b]..starts[b+1]-1 */
    int64_t *offs; /* host, nb + 1: block b's inverse at inv + offs[b]       */
    double *inv;   /* host, each inverse k x k row-major                     */
    int32_t nsingular; /* blocks the singular policy replaced            */
    const kr_format_ops *gpu; /* CUDA backend: the "csr" format's ops       */
    void *gpu_impl;           /* the inverse as a CSR matrix on the GPU       */
} bj_impl;

static void bj_free(kr_ctx *ctx, bj_impl *m)
{
    if (!m) return;
    if (m->gpu) m->gpu->destroy(ctx, m->gpu_impl);
    free(m->starts);
    free(m->offs);
    free(m->inv);
    free(m);
}

static kr_status partition(kr_ctx *ctx, const kr_csr *A,
                           const kr_precond_options *o, bj_impl *m)
{
    if (o->block_sizes)
        return kr_blocking_given(ctx, A->nrows, o->block_sizes, o->nblocks,
                                 &m->nb, &m->starts);
    if (o->fixed)
        return kr_blocking_fixed(ctx, A->nrows, o->block_size, &m->nb,
                                 &m->starts);
    return kr_blocking_supervariables(ctx, A, o->block_size, &m->nb,
                                      &m->starts);
}

/* offs[b] = sum of k^2 over the blocks before b, and the inverse storage. */
static kr_status alloc_inverses(kr_ctx *ctx, bj_impl *m)
{
    m->offs = malloc(((size_t)m->nb + 1) * sizeof *m->offs);
    if (!m->offs) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    m->offs[0] = 0;
    for (int32_t b = 0; b < m->nb; b++) {
        int64_t k = m->starts[b + 1] - m->starts[b];
        m->offs[b + 1] = m->offs[b] + k * k;
    }
    m->inv = malloc(((size_t)m->offs[m->nb] + 1) * sizeof *m->inv);
    if (!m->inv) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    return KR_OK;
}

/* The policy's stand-in for a singular block: 1/a_ii (or 1 where a_ii = 0)
 * on the diagonal for KR_SINGULAR_JACOBI, the identity otherwise. */
static void replace_block(const kr_csr *A, int32_t s, int32_t k,
                          kr_singular_policy policy, double *D)
{
    kr_gje_extract(A, s, k, D, KR_GJE_ROW_MAJOR);
    for (int32_t i = 0; i < k; i++) {
        double aii = D[(size_t)i * k + i];
        for (int32_t j = 0; j < k; j++)
            D[(size_t)i * k + j] = 0.0;
        int scalar = policy == KR_SINGULAR_JACOBI && aii != 0.0;
        D[(size_t)i * k + i] = scalar ? 1.0 / aii : 1.0;
    }
}

/* Extracts and inverts every block; bad[b] = 1 for the singular ones. */
static void invert_all(const kr_csr *A, bj_impl *m, int threads,
                       unsigned char *bad)
{
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
    for (int32_t b = 0; b < m->nb; b++) {
        int32_t s = m->starts[b], k = m->starts[b + 1] - s;
        double *D = m->inv + m->offs[b];
        kr_gje_extract(A, s, k, D, KR_GJE_ROW_MAJOR);
        bad[b] = kr_gje_invert(k, D, KR_GJE_ROW_MAJOR) != KR_OK;
    }
}

/* KR_ERR_SINGULAR naming the first BJ_NAMED singular blocks. */
static kr_status singular_error(kr_ctx *ctx, const bj_impl *m,
                                const unsigned char *bad)
{
    char list[512];
    size_t used = 0;
    int named = 0;
    for (int32_t b = 0; b < m->nb && named < BJ_NAMED; b++) {
        if (!bad[b]) continue;
        int32_t s = m->starts[b], e = m->starts[b + 1] - 1;
        used += (size_t)snprintf(list + used, sizeof list - used,
                                 "%sblock %d (rows %d..%d, 1-based %d..%d)",
                                 named ? ", " : "", (int)b, (int)s, (int)e,
                                 (int)s + 1, (int)e + 1);
        if (used >= sizeof list) break;
        named++;
    }
    return kr_fail(ctx, KR_ERR_SINGULAR,
                   "bjacobi: %d of %d diagonal blocks singular (a pivot "
                   "|p| <= k*eps*max_j|b_pj| of its row): %s%s",
                   (int)m->nsingular, (int)m->nb, list,
                   m->nsingular > named ? ", ..." : "");
}

static kr_status invert_blocks(kr_ctx *ctx, const kr_csr *A,
                               kr_singular_policy policy, bj_impl *m)
{
    unsigned char *bad = calloc((size_t)m->nb + 1, 1);
    if (!bad) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    invert_all(A, m, kr_ctx_threads(ctx), bad);
    for (int32_t b = 0; b < m->nb; b++) {
        if (!bad[b]) continue;
        m->nsingular++;
        if (policy != KR_SINGULAR_ERROR)
            replace_block(A, m->starts[b], m->starts[b + 1] - m->starts[b],
                          policy, m->inv + m->offs[b]);
    }
    kr_status st = KR_OK;
    if (m->nsingular > 0 && policy == KR_SINGULAR_ERROR)
        st = singular_error(ctx, m, bad);
    free(bad);
    return st;
}

kr_status kr_bjacobi_inverse_csr(kr_ctx *ctx, const void *impl, kr_csr *B)
{
    const bj_impl *m = impl;
    if (m->offs[m->nb] > INT32_MAX)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "bjacobi: the block inverses hold %lld entries, more "
                       "than a CSR matrix with 32-bit indices",
                       (long long)m->offs[m->nb]);
    KR_TRY(kr_csr_alloc(ctx, m->n, m->n, (int32_t)m->offs[m->nb], B));
    for (int32_t b = 0; b < m->nb; b++) {
        int32_t s = m->starts[b], k = m->starts[b + 1] - s;
        int64_t q = m->offs[b];
        for (int32_t i = 0; i < k; i++) {
            for (int32_t j = 0; j < k; j++, q++) {
                B->colind[q] = s + j;
                B->val[q] = m->inv[q];
            }
            B->rowptr[s + i + 1] = (int32_t)q;
        }
    }
    return KR_OK;
}

/* The CUDA apply for now: the inverse as CSR through the "csr" format. */
static kr_status upload_gpu(kr_ctx *ctx, bj_impl *m)
{
    const kr_format_entry *e = kr_format_find("csr");
    const kr_format_ops *ops = e && e->cuda ? e->cuda() : NULL;
    if (!ops)
        return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                       "bjacobi: the csr format has no CUDA implementation");
    kr_csr B = {0};
    kr_status st = kr_bjacobi_inverse_csr(ctx, m, &B);
    if (st == KR_OK) st = ops->build(ctx, &B, &m->gpu_impl);
    if (st == KR_OK) m->gpu = ops;
    kr_csr_free(&B);
    return st;
}

static kr_status bj_build_opts(kr_ctx *ctx, const kr_csr *A,
                               const kr_precond_options *o, void **impl)
{
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: matrix is %d x %d, not square", A->nrows,
                       A->ncols);
    if (o->singular < KR_SINGULAR_JACOBI || o->singular > KR_SINGULAR_ERROR)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: unknown singular-block policy %d",
                       (int)o->singular);
    bj_impl *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    m->n = A->nrows;
    kr_status st;
    KR_CHECK(st, partition(ctx, A, o, m), fail);
    KR_CHECK(st, alloc_inverses(ctx, m), fail);
    KR_CHECK(st, invert_blocks(ctx, A, o->singular, m), fail);
    if (ctx->device == KR_DEVICE_CUDA) KR_CHECK(st, upload_gpu(ctx, m), fail);
    *impl = m;
    return KR_OK;
fail:
    bj_free(ctx, m);
    return st;
}

static kr_status bj_build(kr_ctx *ctx, const kr_csr *A, void **impl)
{
    kr_precond_options o;
    kr_precond_options_default(&o);
    return bj_build_opts(ctx, A, &o, impl);
}

/* z = D^{-1} r, block by block: z_b = inv_b r_b, each entry one sum in
 * column order. */
static void apply_cpu(const bj_impl *m, int threads, const double *r, double *z)
{
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int32_t b = 0; b < m->nb; b++) {
        int32_t s = m->starts[b], k = m->starts[b + 1] - s;
        const double *D = m->inv + m->offs[b];
        const double *rb = r + s;
        for (int32_t i = 0; i < k; i++) {
            double sum = 0.0;
            for (int32_t j = 0; j < k; j++)
                sum += D[(size_t)i * k + j] * rb[j];
            z[s + i] = sum;
        }
    }
}

static kr_status bj_apply(kr_ctx *ctx, void *impl, int32_t n, const double *r,
                          double *z)
{
    bj_impl *m = impl;
    (void)n;
    if (m->gpu) return m->gpu->apply(ctx, m->gpu_impl, 1.0, r, 0.0, z);
    int threads = m->offs[m->nb] < BJ_SERIAL_ENTRIES ? 1 : kr_ctx_threads(ctx);
    apply_cpu(m, threads, r, z);
    return KR_OK;
}

static void bj_destroy(kr_ctx *ctx, void *impl) { bj_free(ctx, impl); }

static int32_t bj_singular_blocks(const void *impl)
{
    return ((const bj_impl *)impl)->nsingular;
}

static int32_t bj_block_count(const void *impl)
{
    return ((const bj_impl *)impl)->nb;
}

static void bj_block_sizes(const void *impl, int32_t *sizes)
{
    const bj_impl *m = impl;
    for (int32_t b = 0; b < m->nb; b++)
        sizes[b] = m->starts[b + 1] - m->starts[b];
}

const kr_precond_ops kr_precond_bjacobi_ops = {
    .name = "bjacobi",
    .summary = "block-Jacobi: supervariable blocks <= 32, Gauss-Jordan "
               "inverses",
    .build = bj_build,
    .apply = bj_apply,
    .destroy = bj_destroy,
    .diagonal = NULL,
    .build_opts = bj_build_opts,
    .singular_blocks = bj_singular_blocks,
    .block_count = bj_block_count,
    .block_sizes = bj_block_sizes,
};
