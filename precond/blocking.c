/* Block partitions for block-Jacobi: supervariable agglomeration on the
 * CSR pattern, fixed sizes, or sizes the caller gives. The pattern
 * comparison (O(nnz)) runs in parallel on the backend (kr_gje_batch_ops's
 * pattern_flags); cutting and merging supervariables is one O(n) pass on
 * the host over those flags: the CPU backend's, and the reference of the
 * GPU's device blocking (precond/blocking_dev.cu). */
#include "precond/blocking.h"

#include "core/error.h"
#include "graph/graph.h"
#include "precond/gje_batch.h"

#include <stdlib.h>
#include <string.h>

static kr_status alloc_starts(kr_ctx *ctx, int32_t count, int32_t **starts)
{
    *starts = malloc(((size_t)count + 1) * sizeof **starts);
    if (!*starts) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    return KR_OK;
}

static kr_status check_max(kr_ctx *ctx, int32_t max)
{
    if (max >= 1 && max <= KR_BLOCK_MAX) return KR_OK;
    return kr_fail(ctx, KR_ERR_ARG, "bjacobi: block size %d is not in 1..%d",
                   (int)max, KR_BLOCK_MAX);
}

/* sv[0..*nsv] = supervariable starts: a row opens a new one when its
 * pattern differs from the previous row's or the current one is full. */
static int32_t supervariables(int32_t n, const unsigned char *flags,
                              int32_t max, int32_t *sv)
{
    int32_t nsv = 0;
    for (int32_t i = 0; i < n; i++)
        if (i == 0 || flags[i] || i - sv[nsv - 1] >= max) sv[nsv++] = i;
    sv[nsv] = n;
    return nsv;
}

kr_status kr_blocking_from_flags(kr_ctx *ctx, int32_t n,
                                 const unsigned char *flags, int32_t max,
                                 int32_t *nb, int32_t **starts)
{
    KR_TRY(check_max(ctx, max));
    int32_t *s;
    KR_TRY(alloc_starts(ctx, n, &s));
    int32_t nsv = supervariables(n, flags, max, s);
    /* merge in place: block b keeps absorbing supervariables while they fit */
    int32_t b = 0;
    for (int32_t v = 0; v < nsv; v++)
        if (b == 0 || s[v + 1] - s[b - 1] > max) s[b++] = s[v];
    s[b] = n;
    *nb = b;
    *starts = s;
    return KR_OK;
}

kr_status kr_blocking_supervariables(kr_ctx *ctx, const kr_csr *A, int32_t max,
                                     int32_t *nb, int32_t **starts)
{
    KR_TRY(check_max(ctx, max));
    if (A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: matrix is %d x %d, not square", A->nrows,
                       A->ncols);
    unsigned char *flags = malloc((size_t)A->nrows + 1);
    if (!flags) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_gje_csr H = {A->nrows, A->nnz, A->rowptr, A->colind, A->val};
    kr_status st = kr_gje_batch_cpu_ops()->pattern_flags(ctx, &H, flags);
    if (st == KR_OK)
        st = kr_blocking_from_flags(ctx, A->nrows, flags, max, nb, starts);
    free(flags);
    return st;
}

/* Appends the blocks of rows [s, e) to starts[*nb..]: one block when the
 * run fits, else its supervariables merged while they fit. */
static void cut_run(int32_t s, int32_t e, const unsigned char *flags,
                    int32_t max, int32_t *starts, int32_t *nb)
{
    int32_t open = *nb; /* first block of this run */
    int32_t sv = s;     /* start of the current supervariable */
    for (int32_t i = s; i <= e; i++) {
        int boundary = i == e || (i > s && (flags[i] || i - sv >= max));
        if (!boundary && i > s) continue;
        if (i > s) { /* supervariable [sv, i) ends: merge or open */
            if (*nb == open || i - starts[*nb - 1] > max) starts[(*nb)++] = sv;
        }
        sv = i;
    }
}

static kr_status scc_runs(kr_ctx *ctx, const kr_csr *A, const int32_t *comp,
                          int32_t max, int32_t *nb, int32_t **starts)
{
    int32_t n = A->nrows;
    unsigned char *flags = malloc((size_t)n + 1);
    if (!flags) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_gje_csr H = {A->nrows, A->nnz, A->rowptr, A->colind, A->val};
    kr_status st = kr_gje_batch_cpu_ops()->pattern_flags(ctx, &H, flags);
    if (st == KR_OK) st = alloc_starts(ctx, n, starts);
    if (st == KR_OK) {
        int32_t count = 0;
        for (int32_t s = 0, e; s < n; s = e) {
            for (e = s + 1; e < n && comp[e] == comp[s]; e++)
                ;
            if (e - s <= max)
                (*starts)[count++] = s;
            else
                cut_run(s, e, flags, max, *starts, &count);
        }
        (*starts)[count] = n;
        *nb = count;
    }
    free(flags);
    return st;
}

kr_status kr_blocking_scc(kr_ctx *ctx, const kr_csr *A, int32_t max,
                          int32_t *nb, int32_t **starts)
{
    KR_TRY(check_max(ctx, max));
    kr_graph *G;
    KR_TRY(kr_graph_from_csr(ctx, A, &G));
    int32_t *comp = malloc(((size_t)A->nrows + 1) * sizeof *comp);
    int32_t ncomp;
    kr_status st = comp ? kr_graph_scc(ctx, G, comp, &ncomp)
                        : kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_graph_destroy(G);
    if (st == KR_OK) st = scc_runs(ctx, A, comp, max, nb, starts);
    free(comp);
    return st;
}

kr_status kr_blocking_fixed(kr_ctx *ctx, int32_t n, int32_t k, int32_t *nb,
                            int32_t **starts)
{
    KR_TRY(check_max(ctx, k));
    int32_t count = n / k + (n % k != 0);
    KR_TRY(alloc_starts(ctx, count, starts));
    for (int32_t b = 0; b < count; b++)
        (*starts)[b] = b * k;
    (*starts)[count] = n;
    *nb = count;
    return KR_OK;
}

kr_status kr_blocking_given(kr_ctx *ctx, int32_t n, const int32_t *sizes,
                            int32_t nsizes, int32_t *nb, int32_t **starts)
{
    if (nsizes < 0 || (nsizes > 0 && !sizes))
        return kr_fail(ctx, KR_ERR_ARG, "bjacobi: no block sizes given");
    int64_t sum = 0;
    for (int32_t b = 0; b < nsizes; b++) {
        if (sizes[b] < 1 || sizes[b] > KR_BLOCK_MAX)
            return kr_fail(ctx, KR_ERR_ARG,
                           "bjacobi: block %d has size %d, not in 1..%d",
                           (int)b + 1, (int)sizes[b], KR_BLOCK_MAX);
        sum += sizes[b];
    }
    if (sum != n)
        return kr_fail(ctx, KR_ERR_ARG,
                       "bjacobi: the %d block sizes sum to %lld, but the "
                       "matrix has %d rows",
                       (int)nsizes, (long long)sum, (int)n);
    KR_TRY(alloc_starts(ctx, nsizes, starts));
    (*starts)[0] = 0;
    for (int32_t b = 0; b < nsizes; b++)
        (*starts)[b + 1] = (*starts)[b] + sizes[b];
    *nb = nsizes;
    return KR_OK;
}
