/* Block-structure analysis: the quotient graph of a block partition
 * (vertex = diagonal block) and what it says about the partition: which
 * blocks depend on which, strongly connected block groups, whether a block
 * forward substitution in topological order would be exact, the levels a
 * level-scheduled block sweep would run, weak components, and the share
 * of entries inside the diagonal blocks. */
#include "core/error.h"
#include "graph/graph.h"
#include "precond/blocking.h"

#include <stdlib.h>
#include <string.h>

/* block_of[i] for every row, from the block starts. */
static int32_t *block_map(int32_t nb, const int32_t *starts)
{
    int32_t *b = malloc(((size_t)starts[nb] + 1) * sizeof *b);
    if (!b) return NULL;
    for (int32_t k = 0; k < nb; k++)
        for (int32_t i = starts[k]; i < starts[k + 1]; i++)
            b[i] = k;
    return b;
}

static kr_status check_partition(kr_ctx *ctx, const kr_csr *A, int32_t nb,
                                 const int32_t *starts)
{
    if (!A || A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG, "blocks: the matrix is not square");
    if (nb < 0 || !starts || starts[0] != 0 || starts[nb] != A->nrows)
        return kr_fail(ctx, KR_ERR_ARG,
                       "blocks: the partition does not cover rows 1..%d",
                       (int)A->nrows);
    for (int32_t k = 0; k < nb; k++)
        if (starts[k + 1] <= starts[k])
            return kr_fail(ctx, KR_ERR_ARG, "blocks: block %d is empty",
                           (int)k + 1);
    return KR_OK;
}

kr_status kr_graph_quotient(kr_ctx *ctx, const kr_csr *A, int32_t nb,
                            const int32_t *starts, kr_graph **Q)
{
    *Q = NULL;
    KR_TRY(check_partition(ctx, A, nb, starts));
    kr_graph *G;
    KR_TRY(kr_graph_from_csr(ctx, A, &G));
    int32_t *b = block_map(nb, starts);
    kr_status st = b ? kr_graph_condense(ctx, G, b, nb, Q)
                     : kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    free(b);
    kr_graph_destroy(G);
    return st;
}

/* Group sizes: the largest and how many hold more than one block. */
static void group_sizes(const int32_t *group, int32_t nb, int32_t ngroups,
                        int32_t *size, kr_block_analysis *a)
{
    memset(size, 0, (size_t)ngroups * sizeof *size);
    for (int32_t k = 0; k < nb; k++)
        size[group[k]]++;
    a->largest_group = 0;
    a->cyclic_groups = 0;
    for (int32_t g = 0; g < ngroups; g++) {
        if (size[g] > a->largest_group) a->largest_group = size[g];
        a->cyclic_groups += size[g] > 1;
    }
    a->block_triangular = a->cyclic_groups == 0;
}

/* Longest-path levels of the group DAG (ids are a topological order). */
static kr_status levels(kr_ctx *ctx, const kr_graph *D, int32_t *level,
                        kr_block_analysis *a)
{
    memset(level, 0, ((size_t)D->n + 1) * sizeof *level);
    a->depth = D->n ? 1 : 0;
    for (int32_t g = 0; g < D->n; g++)
        for (int64_t e = D->off[g]; e < D->off[g + 1]; e++)
            if (level[D->adj[e]] < level[g] + 1) {
                level[D->adj[e]] = level[g] + 1;
                if (level[g] + 2 > a->depth) a->depth = level[g] + 2;
            }
    a->level_widths = calloc((size_t)a->depth + 1, sizeof *a->level_widths);
    if (!a->level_widths) return kr_fail(ctx, KR_ERR_NOMEM, "out of memory");
    a->max_width = 0;
    for (int32_t g = 0; g < D->n; g++)
        if (++a->level_widths[level[g]] > a->max_width)
            a->max_width = a->level_widths[level[g]];
    return KR_OK;
}

static void count_inside(const kr_csr *A, const int32_t *starts, int32_t nb,
                         kr_block_analysis *a)
{
    a->nnz = A->nnz;
    a->nnz_inside = 0;
    for (int32_t k = 0; k < nb; k++)
        for (int32_t i = starts[k]; i < starts[k + 1]; i++)
            for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
                a->nnz_inside +=
                    A->colind[p] >= starts[k] && A->colind[p] < starts[k + 1];
}

kr_status kr_block_analyze(kr_ctx *ctx, const kr_csr *A, int32_t nb,
                           const int32_t *starts, kr_block_analysis *a)
{
    memset(a, 0, sizeof *a);
    kr_graph *Q = NULL, *D = NULL;
    KR_TRY(kr_graph_quotient(ctx, A, nb, starts, &Q));
    int32_t *group = malloc(((size_t)nb + 1) * sizeof *group);
    int32_t *work = malloc(((size_t)nb + 1) * sizeof *work);
    kr_status st = KR_OK;
    if (!group || !work) {
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
        goto done;
    }
    a->nblocks = nb;
    a->dependencies = Q->m;
    KR_CHECK(st, kr_graph_scc(ctx, Q, group, &a->groups), done);
    group_sizes(group, nb, a->groups, work, a);
    KR_CHECK(st, kr_graph_condense(ctx, Q, group, a->groups, &D), done);
    KR_CHECK(st, levels(ctx, D, work, a), done);
    KR_CHECK(st, kr_graph_weak_components(ctx, Q, &a->weak_components), done);
    count_inside(A, starts, nb, a);
done:
    kr_graph_destroy(Q);
    kr_graph_destroy(D);
    free(group);
    free(work);
    if (st != KR_OK) kr_block_analysis_free(a);
    return st;
}

void kr_block_analysis_free(kr_block_analysis *a)
{
    if (!a) return;
    free(a->level_widths);
    a->level_widths = NULL;
}

kr_status kr_block_partition(kr_ctx *ctx, const kr_csr *A,
                             const kr_precond_options *o, int32_t *nb,
                             int32_t **starts)
{
    kr_precond_options def;
    kr_precond_options_default(&def);
    if (!o) o = &def;
    if (!A || A->nrows != A->ncols)
        return kr_fail(ctx, KR_ERR_ARG, "blocks: the matrix is not square");
    if (o->block_sizes)
        return kr_blocking_given(ctx, A->nrows, o->block_sizes, o->nblocks, nb,
                                 starts);
    if (o->fixed)
        return kr_blocking_fixed(ctx, A->nrows, o->block_size, nb, starts);
    if (o->blocking == KR_BLOCKING_SCC)
        return kr_blocking_scc(ctx, A, o->block_size, nb, starts);
    return kr_blocking_supervariables(ctx, A, o->block_size, nb, starts);
}
