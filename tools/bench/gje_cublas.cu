/* The cuBLAS baseline of `krylov bench gje` (tools/bench/gje_cublas.h): one
 * group per block size present, each with its slices of three arrays of
 * device pointers (into in, work and out), its pivots and its info
 * arrays. Everything is allocated and uploaded at creation, so a timed run
 * is the cuBLAS calls alone. */
#include "core/cuda.h"
#include "tools/bench/gje_cublas.h"

#include <cublas_v2.h>
#include <stdlib.h>
#include <string.h>

#define CUBLAS_TRY(ctx, call)                                                  \
    do {                                                                       \
        cublasStatus_t kr_e_ = (call);                                         \
        if (kr_e_ != CUBLAS_STATUS_SUCCESS)                                    \
            return kr_cuda_fail(ctx, #call, cublasGetStatusString(kr_e_),      \
                                __FILE__, __LINE__);                           \
    } while (0)

typedef struct gje_group {
    int k, count;
    double **a;  /* count pointers into in (matinv reads them)            */
    double **w;  /* count pointers into work (getrf's in-place LU)        */
    double **c;  /* count pointers into out                               */
    int *piv;    /* k * count pivots of getrf                             */
    int *info_f; /* count: getrf's info                                   */
    int *info_i; /* count: getri's or matinv's info                       */
} gje_group;

struct kr_gje_cublas {
    cublasHandle_t cublas; /* the baseline's own, on the context's stream */
    int ngroups;
    gje_group g[KR_GJE_MAX];
    const double *in;
    double *work;
    size_t bytes;  /* of in and work                                    */
    int32_t nb;    /* blocks                                             */
    int64_t nrows; /* pivots before the info entries in ints             */
    int last_lu;   /* 1 when the last run was getrf + getri, 0 matinv    */
    double **ptrs; /* device, 3 nb: the pointer arrays the groups slice */
    int *ints;     /* device, nrows pivots then 2 nb info entries       */
};

/* first[k] = where the blocks of size k begin in group order. */
static void group_starts(const kr_gje_batch *bb, int32_t *count, int32_t *first)
{
    memset(count, 0, (KR_GJE_MAX + 1) * sizeof *count);
    for (int32_t b = 0; b < bb->nb; b++)
        count[bb->h_starts[b + 1] - bb->h_starts[b]]++;
    first[0] = 0;
    for (int k = 1; k <= KR_GJE_MAX; k++)
        first[k] = first[k - 1] + count[k - 1];
}

/* The groups' slices of h->ptrs and h->ints. */
static void plan_groups(kr_gje_cublas *h, const kr_gje_batch *bb,
                        const int32_t *count, const int32_t *first)
{
    int64_t piv = 0;
    for (int k = 1; k <= KR_GJE_MAX; k++) {
        if (!count[k]) continue;
        gje_group *g = &h->g[h->ngroups++];
        g->k = k;
        g->count = count[k];
        g->a = h->ptrs + first[k];
        g->w = h->ptrs + h->nb + first[k];
        g->c = h->ptrs + 2 * (int64_t)h->nb + first[k];
        g->piv = h->ints + piv;
        g->info_f = h->ints + bb->nrows + first[k];
        g->info_i = h->ints + bb->nrows + h->nb + first[k];
        piv += (int64_t)k * count[k];
    }
}

/* The three pointer arrays on the host, then one upload. */
static kr_status upload_pointers(kr_ctx *ctx, kr_gje_cublas *h,
                                 const kr_gje_batch *bb, const double *in,
                                 double *work, double *out, int32_t *first)
{
    size_t nb = (size_t)bb->nb;
    const double **hp = (const double **)malloc((3 * nb + 1) * sizeof *hp);
    if (!hp) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t f = first[bb->h_starts[b + 1] - bb->h_starts[b]]++;
        int64_t o = bb->h_offs[b];
        hp[f] = in + o;
        hp[nb + f] = work + o;
        hp[2 * nb + f] = out + o;
    }
    kr_status st = ctx->ops->upload(ctx, h->ptrs, hp, 3 * nb * sizeof *hp);
    free(hp);
    return st;
}

static kr_status alloc_arrays(kr_ctx *ctx, kr_gje_cublas *h,
                              const kr_gje_batch *bb)
{
    size_t nb = (size_t)bb->nb, nrows = (size_t)bb->nrows;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&h->ptrs, 3 * nb * sizeof(double *)));
    return ctx->ops->alloc(ctx, (void **)&h->ints,
                           (nrows + 2 * nb) * sizeof(int));
}

/* The baseline's cuBLAS handle on the context's stream: contexts make
 * none, so that the library does not link cuBLAS. */
static kr_status cublas_handle(kr_ctx *ctx, kr_gje_cublas *h)
{
    CUBLAS_TRY(ctx, cublasCreate(&h->cublas));
    CUBLAS_TRY(ctx, cublasSetStream(h->cublas, kr_cuda(ctx)->stream));
    return KR_OK;
}

kr_status kr_gje_cublas_create(kr_ctx *ctx, const kr_gje_batch *bb,
                               const double *in, double *work, double *out,
                               kr_gje_cublas **out_h)
{
    *out_h = NULL;
    if (ctx->device != KR_DEVICE_CUDA)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "the cuBLAS baseline needs a CUDA context");
    kr_gje_cublas *h = (kr_gje_cublas *)calloc(1, sizeof *h);
    if (!h) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    h->in = in;
    h->work = work;
    h->bytes = (size_t)bb->total * sizeof(double);
    h->nb = bb->nb;
    h->nrows = bb->nrows;
    int32_t count[KR_GJE_MAX + 1], first[KR_GJE_MAX + 1];
    group_starts(bb, count, first);
    kr_status st = cublas_handle(ctx, h);
    if (st == KR_OK) st = alloc_arrays(ctx, h, bb);
    if (st == KR_OK) {
        plan_groups(h, bb, count, first);
        st = upload_pointers(ctx, h, bb, in, work, out, first);
    }
    if (st != KR_OK) {
        kr_gje_cublas_destroy(ctx, h);
        return st;
    }
    *out_h = h;
    return KR_OK;
}

void kr_gje_cublas_destroy(kr_ctx *ctx, kr_gje_cublas *h)
{
    if (!h) return;
    ctx->ops->release(ctx, h->ptrs);
    ctx->ops->release(ctx, h->ints);
    if (h->cublas) cublasDestroy(h->cublas);
    free(h);
}

int kr_gje_cublas_groups(const kr_gje_cublas *h) { return h->ngroups; }

kr_status kr_gje_cublas_reset(kr_ctx *ctx, kr_gje_cublas *h)
{
    return ctx->ops->copy(ctx, h->work, h->in, h->bytes);
}

kr_status kr_gje_cublas_getrf_getri(kr_ctx *ctx, kr_gje_cublas *h)
{
    cublasHandle_t cb = h->cublas;
    for (int i = 0; i < h->ngroups; i++) {
        const gje_group *g = &h->g[i];
        CUBLAS_TRY(ctx, cublasDgetrfBatched(cb, g->k, g->w, g->k, g->piv,
                                            g->info_f, g->count));
        CUBLAS_TRY(ctx, cublasDgetriBatched(cb, g->k, g->w, g->k, g->piv, g->c,
                                            g->k, g->info_i, g->count));
    }
    h->last_lu = 1;
    return KR_OK;
}

kr_status kr_gje_cublas_matinv(kr_ctx *ctx, kr_gje_cublas *h)
{
    cublasHandle_t cb = h->cublas;
    for (int i = 0; i < h->ngroups; i++) {
        const gje_group *g = &h->g[i];
        CUBLAS_TRY(ctx, cublasDmatinvBatched(cb, g->k, g->a, g->k, g->c, g->k,
                                             g->info_i, g->count));
    }
    h->last_lu = 0;
    return KR_OK;
}

kr_status kr_gje_cublas_singular(kr_ctx *ctx, kr_gje_cublas *h,
                                 int32_t *singular)
{
    size_t nb = (size_t)h->nb;
    int *info = (int *)malloc((2 * nb + 1) * sizeof *info);
    if (!info) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = ctx->ops->download(ctx, info, h->ints + h->nrows,
                                      2 * nb * sizeof *info);
    *singular = 0;
    for (size_t b = 0; st == KR_OK && b < nb; b++)
        *singular += (h->last_lu && info[b] != 0) || info[nb + b] != 0;
    free(info);
    return st;
}
