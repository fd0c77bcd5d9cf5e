/* Block-Jacobi, z = D^{-1} r with D the block diagonal of A (Anzt, Dongarra,
 * Flegar, Quintana-Orti 2018). One pipeline for both backends, with the
 * kernels behind precond/gje_batch.h: the CSR in backend memory (uploaded
 * on the GPU, the caller's own arrays on the CPU), the block partition
 * (on the GPU from 65,536 rows found on the device,
 * precond/blocking_dev.cu; else precond/blocking.c's pattern
 * flags on the backend, cut and merged on the host), extraction and
 * Gauss-Jordan inversion of every block in one pass, singular blocks replaced
 * or reported by the caller's policy, and the apply as a batched dense mat-vec.
 */
#include "precond/bjacobi.h"

#include "core/error.h"
#include "core/vec.h"
#include "precond/blocking.h"
#include "precond/blocking_dev.h"
#include "precond/gje.h"
#include "precond/gje_batch.h"
#include "precond/precond.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Singular blocks named in the error message. */
#define BJ_NAMED 4

typedef struct bj_impl {
    int32_t n;
    kr_gje_batch bb; /* the blocks                                      */
    double *inv;     /* backend memory: each inverse column-major, at
                        bb.h_offs[b]                                    */
    int32_t nsingular;
    int32_t *singular; /* host, nb: 1 where the policy replaced the block */
    const kr_gje_batch_ops *ops;
    /* wall-clock seconds of the setup's stages (each ends with the
     * device's work finished): A's upload (0 on the CPU or from the
     * matrix's own copy), the partition, extraction + inversion + policy */
    double upload_s, blocking_s, invert_s;
} bj_impl;

static void bj_free(kr_ctx *ctx, bj_impl *m)
{
    if (!m) return;
    kr_gje_batch_free(ctx, &m->bb);
    kr_dev_free(ctx, m->inv);
    free(m->singular);
    free(m);
}

/* Backend memory the setup needs only while it runs: A's arrays (the
 * caller's own on the CPU) and a scratch area for the pattern flags and
 * then the singular flags; on the GPU one allocation, since a setup's
 * fixed cost there is mostly allocations and transfers. */
typedef struct bj_setup_mem {
    kr_gje_csr A;
    void *scratch; /* 8 (n + 1) bytes: flags (n), then info (nb <= n)
                      and, after it, a copy of the block starts     */
    void *dev;     /* the allocation on the GPU, NULL on the CPU       */
    unsigned char *host_scratch;
    int uploaded; /* 1 when A was uploaded (no view of the matrix's)  */
} bj_setup_mem;

/* dev: the matrix's own CSR in backend memory, or NULL to upload A. */
static kr_status setup_mem(kr_ctx *ctx, const kr_csr *A, const kr_csr_view *dev,
                           bj_setup_mem *w)
{
    memset(w, 0, sizeof *w);
    w->A = (kr_gje_csr){A->nrows, A->nnz, A->rowptr, A->colind, A->val};
    size_t n1 = (size_t)A->nrows + 1, nnz = (size_t)A->nnz;
    size_t scratch = 8 * n1;
    if (ctx->device != KR_DEVICE_CUDA) {
        w->host_scratch = malloc(scratch);
        w->scratch = w->host_scratch;
        return w->scratch ? KR_OK
                          : kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    }
    if (dev) { /* A is on the device already: only the scratch */
        w->A = (kr_gje_csr){dev->nrows, dev->nnz, dev->rowptr, dev->colind,
                            dev->val};
        KR_TRY(ctx->ops->alloc(ctx, &w->dev, scratch));
        w->scratch = w->dev;
        return KR_OK;
    }
    w->uploaded = 1;
    /* val first (8-byte aligned), then rowptr, colind, scratch */
    size_t off_rp = nnz * 8, off_ci = off_rp + n1 * 4;
    size_t off_s = (off_ci + nnz * 4 + 7) / 8 * 8;
    KR_TRY(ctx->ops->alloc(ctx, &w->dev, off_s + scratch));
    char *base = w->dev;
    w->A.val = (const double *)base;
    w->A.rowptr = (const int32_t *)(base + off_rp);
    w->A.colind = (const int32_t *)(base + off_ci);
    w->scratch = base + off_s;
    KR_TRY(ctx->ops->upload(ctx, base, A->val, nnz * 8));
    KR_TRY(ctx->ops->upload(ctx, base + off_rp, A->rowptr, n1 * 4));
    KR_TRY(ctx->ops->upload(ctx, base + off_ci, A->colind, nnz * 4));
    return KR_OK;
}

static void setup_mem_free(kr_ctx *ctx, bj_setup_mem *w)
{
    if (w->dev) ctx->ops->release(ctx, w->dev);
    free(w->host_scratch);
}

/* Rows from which the device blocking pays: its 20-odd launches and
 * allocations cost a fixed 0.1-0.2 ms, the host pass about 3.5 ns a row
 * with its transfers (H100, 2026-11-27: poisson3d:160's blocking 23.6 ms
 * on the host, 13.5 ms on the device; the shared matrices, 5,000-50,000
 * rows, 0.15-0.2 ms slower on the device). */
#define BJ_DEVICE_BLOCKING_ROWS 65536

/* 1 for the supervariable blocking on the device: on a GPU from
 * BJ_DEVICE_BLOCKING_ROWS rows (but not at 2^31 - 1, where its counts
 * would overflow); $KRYLOV_BJACOBI_DEVICE_BLOCKING "1" or "0" sets it at
 * any other size (the host pass is the reference, and both can be
 * timed). */
static int device_blocking(const kr_ctx *ctx, int32_t n)
{
    const char *env = getenv("KRYLOV_BJACOBI_DEVICE_BLOCKING");
    /* the device pass counts n + 1 entries in an int32 */
    if (ctx->device != KR_DEVICE_CUDA || n <= 0 || n == INT32_MAX) return 0;
    if (env && (!strcmp(env, "0") || !strcmp(env, "1"))) return env[0] == '1';
    return n >= BJ_DEVICE_BLOCKING_ROWS;
}

/* Supervariable blocking: pattern flags on the backend, cut and merged on
 * the host. */
static kr_status supervariables(kr_ctx *ctx, const bj_impl *m,
                                const bj_setup_mem *w, int32_t max, int32_t *nb,
                                int32_t **starts)
{
    unsigned char *flags = malloc((size_t)m->n + 1);
    if (!flags) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = m->ops->pattern_flags(ctx, &w->A, w->scratch);
    if (st == KR_OK)
        st = ctx->ops->download(ctx, flags, w->scratch, (size_t)m->n);
    if (st == KR_OK)
        st = kr_blocking_from_flags(ctx, m->n, flags, max, nb, starts);
    free(flags);
    return st;
}

static kr_status partition(kr_ctx *ctx, const kr_csr *A, const bj_setup_mem *w,
                           const kr_precond_options *o, bj_impl *m)
{
    int32_t nb = 0, *starts = NULL;
    kr_status st;
    if (o->block_sizes)
        st = kr_blocking_given(ctx, A->nrows, o->block_sizes, o->nblocks, &nb,
                               &starts);
    else if (o->fixed)
        st = kr_blocking_fixed(ctx, A->nrows, o->block_size, &nb, &starts);
    else if (o->blocking == KR_BLOCKING_SCC)
        st = kr_blocking_scc(ctx, A, o->block_size, &nb, &starts);
    else if (device_blocking(ctx, m->n) &&
             (st = kr_blocking_dev_batch(ctx, &w->A, o->block_size, &m->bb)) !=
                 KR_ERR_NOMEM)
        return st; /* the batch is made, or a real error */
    else /* the host pass: below the size, or the device's scratch (about
          * 44 bytes a row) did not fit where the host's n bytes may */
        st = supervariables(ctx, m, w, o->block_size, &nb, &starts);
    if (st == KR_OK) st = kr_gje_batch_create(ctx, nb, starts, &m->bb);
    free(starts);
    return st;
}

/* The policy's stand-in for a singular block: 1/a_ii (or 1 where a_ii = 0)
 * on the diagonal for KR_SINGULAR_JACOBI, the identity otherwise. D is
 * diagonal, so the same in either layout. */
static void replace_block(const kr_csr *A, int32_t s, int32_t k,
                          kr_singular_policy policy, double *D)
{
    kr_gje_extract(A, s, k, D, KR_GJE_COL_MAJOR);
    for (int32_t i = 0; i < k; i++) {
        double aii = D[(size_t)i * k + i];
        for (int32_t j = 0; j < k; j++)
            D[(size_t)i * k + j] = 0.0;
        int scalar = policy == KR_SINGULAR_JACOBI && aii != 0.0;
        D[(size_t)i * k + i] = scalar ? 1.0 / aii : 1.0;
    }
}

/* KR_ERR_SINGULAR naming the first BJ_NAMED singular blocks. */
static kr_status singular_error(kr_ctx *ctx, const bj_impl *m,
                                const int32_t *bad)
{
    char list[512];
    size_t used = 0;
    int named = 0;
    const int32_t *starts = m->bb.h_starts;
    for (int32_t b = 0; b < m->bb.nb && named < BJ_NAMED; b++) {
        if (!bad[b]) continue;
        int32_t s = starts[b], e = starts[b + 1] - 1;
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
                   (int)m->nsingular, (int)m->bb.nb, list,
                   m->nsingular > named ? ", ..." : "");
}

/* Writes the stand-ins of the singular blocks first..last-1 (consecutive,
 * so their entries are too) with one upload. */
static kr_status replace_run(kr_ctx *ctx, const kr_csr *A,
                             kr_singular_policy policy, bj_impl *m,
                             int32_t first, int32_t last)
{
    const int64_t *offs = m->bb.h_offs;
    size_t len = (size_t)(offs[last] - offs[first]);
    double *D = malloc(len * sizeof *D);
    if (!D) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t b = first; b < last; b++) {
        int32_t s = m->bb.h_starts[b], k = m->bb.h_starts[b + 1] - s;
        replace_block(A, s, k, policy, D + (offs[b] - offs[first]));
    }
    kr_status st =
        ctx->ops->upload(ctx, m->inv + offs[first], D, len * sizeof *D);
    free(D);
    return st;
}

/* Counts the singular blocks and, unless the policy is an error, writes
 * each one's stand-in over its (unspecified) inverse, one upload per run
 * of consecutive singular blocks. */
static kr_status apply_policy(kr_ctx *ctx, const kr_csr *A,
                              kr_singular_policy policy, bj_impl *m,
                              const int32_t *bad)
{
    for (int32_t b = 0; b < m->bb.nb;) {
        if (!bad[b]) {
            b++;
            continue;
        }
        int32_t e = b;
        while (e < m->bb.nb && bad[e])
            e++;
        m->nsingular += e - b;
        if (policy != KR_SINGULAR_ERROR)
            KR_TRY(replace_run(ctx, A, policy, m, b, e));
        b = e;
    }
    if (m->nsingular > 0 && policy == KR_SINGULAR_ERROR)
        return singular_error(ctx, m, bad);
    return KR_OK;
}

/* bad[0..nb) = the blocks' info flags. A batch built on the device has
 * no host starts yet: they are copied behind the flags and come back in
 * the same download, so the device blocking costs no transfer of its own
 * but its header. */
static kr_status read_info(kr_ctx *ctx, const bj_setup_mem *w, bj_impl *m,
                           int32_t *bad)
{
    size_t nb = (size_t)m->bb.nb, count = nb;
    int32_t *d_info = w->scratch;
    if (!m->bb.h_starts) {
        count += nb + 1;
        KR_TRY(ctx->ops->copy(ctx, d_info + nb, m->bb.starts,
                              (nb + 1) * sizeof *d_info));
    }
    KR_TRY(m->ops->extract_invert(ctx, &m->bb, &w->A, m->inv, d_info));
    KR_TRY(ctx->ops->download(ctx, bad, d_info, count * sizeof *bad));
    if (count == nb) return KR_OK;
    return kr_gje_batch_set_host(ctx, &m->bb, bad + nb);
}

/* Extraction and inversion in one pass, then the singular policy. */
static kr_status invert_blocks(kr_ctx *ctx, const kr_csr *A,
                               const bj_setup_mem *w, kr_singular_policy policy,
                               bj_impl *m)
{
    size_t nb = (size_t)m->bb.nb;
    int32_t *bad = malloc((2 * nb + 2) * sizeof *bad);
    if (!bad) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = ctx->ops->alloc(ctx, (void **)&m->inv,
                                   ((size_t)m->bb.total + 1) * sizeof(double));
    if (st == KR_OK) st = read_info(ctx, w, m, bad);
    if (st == KR_OK) st = apply_policy(ctx, A, policy, m, bad);
    m->singular = bad; /* kept for the view */
    return st;
}

kr_status kr_bjacobi_inverse_csr(kr_ctx *ctx, const void *impl, kr_csr *B)
{
    const bj_impl *m = impl;
    const kr_gje_batch *bb = &m->bb;
    if (bb->total > INT32_MAX)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "bjacobi: the block inverses hold %lld entries, more "
                       "than a CSR matrix with 32-bit indices",
                       (long long)bb->total);
    double *inv = malloc(((size_t)bb->total + 1) * sizeof *inv);
    if (!inv) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st =
        ctx->ops->download(ctx, inv, m->inv, (size_t)bb->total * sizeof *inv);
    if (st == KR_OK) st = kr_csr_alloc(ctx, m->n, m->n, (int32_t)bb->total, B);
    for (int32_t b = 0; st == KR_OK && b < bb->nb; b++) {
        int32_t s = bb->h_starts[b], k = bb->h_starts[b + 1] - s;
        int64_t o = bb->h_offs[b], q = o;
        for (int32_t i = 0; i < k; i++) {
            for (int32_t j = 0; j < k; j++, q++) {
                B->colind[q] = s + j;
                B->val[q] = inv[o + i + (int64_t)j * k];
            }
            B->rowptr[s + i + 1] = (int32_t)q;
        }
    }
    free(inv);
    return st;
}

static kr_status check_build(kr_ctx *ctx, const kr_csr *A,
                             const kr_precond_options *o)
{
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: matrix is %d x %d, not square", A->nrows,
                       A->ncols);
    if (o->singular < KR_SINGULAR_JACOBI || o->singular > KR_SINGULAR_ERROR)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: unknown singular-block policy %d",
                       (int)o->singular);
    if (!kr_gje_batch_ops_for(ctx))
        return kr_fail(ctx, KR_ERR_NOT_COMPILED,
                       "bjacobi: no batched kernels for this device");
    return KR_OK;
}

/* The pipeline, each stage timed (the GPU's work is finished by the
 * download that ends each stage). */
static kr_status build_stages(kr_ctx *ctx, const kr_csr *A,
                              const kr_csr_view *dev,
                              const kr_precond_options *o, bj_impl *m)
{
    bj_setup_mem w;
    double t0 = kr_wtime();
    kr_status st = setup_mem(ctx, A, dev, &w);
    double t1 = kr_wtime();
    if (st == KR_OK) st = partition(ctx, A, &w, o, m);
    double t2 = kr_wtime();
    if (st == KR_OK) st = invert_blocks(ctx, A, &w, o->singular, m);
    double t3 = kr_wtime();
    /* on the CPU, or from the matrix's device CSR, nothing is uploaded:
     * setup_mem only allocates the flags' scratch, which the blocking uses */
    double up = w.uploaded ? t1 - t0 : 0.0;
    setup_mem_free(ctx, &w);
    m->upload_s = up;
    m->blocking_s = t2 - t0 - up;
    m->invert_s = t3 - t2;
    return st;
}

static kr_status bj_setup(kr_ctx *ctx, const kr_csr *A, const kr_csr_view *dev,
                          const kr_precond_options *o, void **impl)
{
    if (dev) KR_TRY(kr_csr_check(ctx, A)); /* see kr_precond_ops.setup */
    KR_TRY(check_build(ctx, A, o));
    bj_impl *m = calloc(1, sizeof *m);
    if (!m) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    m->n = A->nrows;
    m->ops = kr_gje_batch_ops_for(ctx);
    kr_status st = build_stages(ctx, A, dev, o, m);
    if (st != KR_OK) {
        bj_free(ctx, m);
        return st;
    }
    *impl = m;
    return KR_OK;
}

static kr_status bj_apply(kr_ctx *ctx, void *impl, int32_t n, const double *r,
                          double *z)
{
    bj_impl *m = impl;
    (void)n;
    return m->ops->apply(ctx, &m->bb, m->inv, r, z);
}

static kr_status bj_apply_multi(kr_ctx *ctx, void *impl, int32_t n, int k,
                                const double *R, double *Z)
{
    bj_impl *m = impl;
    (void)n;
    return m->ops->apply_multi(ctx, &m->bb, m->inv, k, R, Z);
}

static int bj_blockdiag(void *impl, kr_blockdiag *bd)
{
    const bj_impl *m = impl;
    if (m->bb.max_k > 32) return 0;
    *bd = (kr_blockdiag){.nb = m->bb.nb,
                         .max_k = m->bb.max_k,
                         .starts = m->bb.starts,
                         .offs = m->bb.offs,
                         .inv = m->inv};
    return 1;
}

static void bj_destroy(kr_ctx *ctx, void *impl) { bj_free(ctx, impl); }

static void bj_view(const void *impl, kr_precond_view *v)
{
    const bj_impl *m = impl;
    v->info.blocks = m->bb.nb;
    v->info.singular_blocks = m->nsingular;
    const kr_precond_stage stages[] = {
        {"upload", "upload of A", m->upload_s},
        {"blocking", "blocking", m->blocking_s},
        {"invert", "extract+invert", m->invert_s}};
    v->info.stages = (int)(sizeof stages / sizeof stages[0]);
    memcpy(v->info.stage, stages, sizeof stages);
    v->starts = m->bb.h_starts;
    v->singular = m->singular;
    v->inverse_csr = kr_bjacobi_inverse_csr;
}

/* An unsigned decimal in lo..hi, the whole of text. */
static int parse_int(const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

/* text's index in the NULL-terminated names, or -1. */
static int choice(const char *text, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(text, names[i])) return i;
    return -1;
}

static const char *const bj_keys[] = {"block_size", "fixed",       "singular",
                                      "blocking",   "block_sizes", NULL};
/* In the order of kr_singular_policy and kr_blocking. */
static const char *const singular_names[] = {"jacobi", "identity", "error",
                                             NULL};
static const char *const blocking_names[] = {"supervariable", "scc", NULL};

static kr_status bad_value(kr_ctx *ctx, const char *key, const char *value,
                           const char *valid)
{
    return kr_fail(ctx, KR_ERR_ARG, "bjacobi: option %s: '%s' is not %s", key,
                   value, valid);
}

static kr_status bj_set_option(kr_ctx *ctx, kr_precond_options *o,
                               const char *key, const char *value)
{
    int k = choice(key, bj_keys), v;
    if (k < 0)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "bjacobi: no option '%s' (block_size, fixed, "
                       "singular, blocking)",
                       key);
    if (!o) return KR_OK; /* only asked whether key is read */
    switch (k) {
    case 0:
        if (!parse_int(value, 1, KR_GJE_MAX, &v))
            return bad_value(ctx, key, value, "in 1..32");
        o->block_size = v;
        return KR_OK;
    case 1:
        if (!parse_int(value, 0, 1, &v))
            return bad_value(ctx, key, value, "0 or 1");
        o->fixed = v;
        return KR_OK;
    case 2:
        if ((v = choice(value, singular_names)) < 0)
            return bad_value(ctx, key, value, "jacobi, identity or error");
        o->singular = (kr_singular_policy)v;
        return KR_OK;
    case 3:
        if ((v = choice(value, blocking_names)) < 0)
            return bad_value(ctx, key, value, "supervariable or scc");
        o->blocking = (kr_blocking)v;
        return KR_OK;
    default:
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "bjacobi: block_sizes is an array: set "
                       "kr_precond_options.block_sizes and nblocks");
    }
}

const kr_precond_ops kr_precond_bjacobi_ops = {
    .name = "bjacobi",
    .summary = "block-Jacobi: supervariable blocks <= 32, Gauss-Jordan "
               "inverses",
    .setup = bj_setup,
    .apply = bj_apply,
    .destroy = bj_destroy,
    .set_option = bj_set_option,
    .view = bj_view,
    .apply_multi = bj_apply_multi,
    .blockdiag = bj_blockdiag,
};
