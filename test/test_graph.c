/* The reachability module (graph/): every GRAIL answer against a plain BFS
 * on random DAGs, random graphs full of cycles, the GRAIL papers' graphs
 * (../shared/graphs) and the matrix graphs of ../shared/matrices; label
 * containment on reachable pairs; SCCs against mutual reachability; a
 * 10^7-vertex chain; malformed .gra files; the quotient graph of a block
 * partition; SCC-aware blocking. */
#include "graph/grail.h"
#include "graph/graph.h"
#include "precond/blocking.h"
#include "testgraph.h"
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------------- helpers */

/* For `sources` random u, kr_reach_query(u, v) and the batch against BFS
 * for every v (or `targets` random v when the graph is large), and the
 * labels of every reachable pair nested. Returns the reachable pairs. */
static int64_t check_against_bfs(kr_ctx *ctx, const kr_graph *G, int sources,
                                 int targets, uint64_t seed, const char *what)
{
    kr_reach *R;
    ck_assert_int_eq(kr_reach_create(ctx, G, NULL, &R), KR_OK);
    int32_t n = G->n;
    unsigned char *seen = malloc((size_t)n + 1), *ans = malloc((size_t)n + 1);
    int32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
    int32_t *pairs = malloc(((size_t)n + 1) * 2 * sizeof *pairs);
    int32_t lo_u[16], hi_u[16], lo_v[16], hi_v[16];
    int64_t reachable = 0;
    uint64_t rng = seed;
    for (int s = 0; s < sources && n > 0; s++) {
        int32_t u = (int32_t)(kt_rand_u64(&rng) % (uint64_t)n);
        for (int tries = 0; tries < 50 && G->off[u + 1] == G->off[u]; tries++)
            u = (int32_t)(kt_rand_u64(&rng) % (uint64_t)n); /* not a sink */
        int32_t reached = kt_bfs(G, u, seen, queue);
        int32_t q = targets > 0 && targets < n ? targets : n;
        for (int32_t k = 0; k < q; k++) { /* half of them reachable */
            uint64_t r = kt_rand_u64(&rng);
            pairs[2 * k] = u;
            pairs[2 * k + 1] = q == n  ? k
                               : k % 2 ? queue[r % (uint64_t)reached]
                                       : (int32_t)(r % (uint64_t)n);
        }
        ck_assert_int_eq(kr_reach_query_batch(ctx, R, q, pairs, ans, NULL),
                         KR_OK);
        kr_reach_labels(R, u, lo_u, hi_u);
        for (int32_t k = 0; k < q; k++) {
            int32_t v = pairs[2 * k + 1];
            int single = kr_reach_query(R, u, v);
            if (single != seen[v] || ans[k] != seen[v])
                ck_abort_msg("%s (seed %llu): %d -> %d: bfs %d, query %d, "
                             "batch %d",
                             what, (unsigned long long)seed, (int)u, (int)v,
                             seen[v], single, ans[k]);
            if (!seen[v]) continue;
            reachable++;
            kr_reach_labels(R, v, lo_v, hi_v);
            for (int i = 0; i < 5; i++)
                if (lo_v[i] < lo_u[i] || hi_v[i] > hi_u[i])
                    ck_abort_msg("%s: label %d of %d not inside %d's", what, i,
                                 (int)v, (int)u);
        }
    }
    free(seen);
    free(ans);
    free(queue);
    free(pairs);
    kr_reach_destroy(R);
    return reachable;
}

/* m random edges on n vertices; with `local`, targets near the source so
 * that many short cycles form. */
static kr_graph *random_graph(kr_ctx *ctx, int32_t n, int64_t m, int local,
                              uint64_t seed)
{
    int32_t *src = malloc((size_t)m * sizeof *src);
    int32_t *dst = malloc((size_t)m * sizeof *dst);
    uint64_t rng = seed;
    for (int64_t e = 0; e < m; e++) {
        src[e] = (int32_t)(kt_rand_u64(&rng) % (uint64_t)n);
        int32_t off = (int32_t)(kt_rand_u64(&rng) % 9) - 4;
        dst[e] = local ? (src[e] + off + n) % n
                       : (int32_t)(kt_rand_u64(&rng) % (uint64_t)n);
    }
    kr_graph *G;
    ck_assert_int_eq(kr_graph_from_edges(ctx, n, m, src, dst, &G), KR_OK);
    free(src);
    free(dst);
    return G;
}

/* ----------------------------------------------------- queries vs BFS */

START_TEST(queries_random_dags)
{
    kr_ctx *ctx = kt_cpu();
    const char *specs[] = {"dag:2000,2,7", "dag:3000,5,11", "dag:500,20,3",
                           "dag:1,0", "dag:5,1"};
    for (int i = 0; i < 5; i++) {
        kr_graph *G;
        ck_assert_int_eq(kr_graph_generate(ctx, specs[i], &G), KR_OK);
        int32_t comp[8] = {0}, nc = 0;
        if (G->n <= 8) { /* a DAG: every vertex its own SCC */
            kr_graph_scc(ctx, G, comp, &nc);
            ck_assert_int_eq(nc, G->n);
        }
        check_against_bfs(ctx, G, 60, 0, 100 + i, specs[i]);
        kr_graph_destroy(G);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(queries_cyclic_graphs)
{
    kr_ctx *ctx = kt_cpu();
    for (int i = 0; i < 6; i++) {
        uint64_t seed = 0x5eed + i;
        printf("queries_cyclic_graphs: seed %llu\n", (unsigned long long)seed);
        kr_graph *G =
            random_graph(ctx, 1500 + 500 * i, 1800 + 700 * i, i % 2, seed);
        check_against_bfs(ctx, G, 40, 0, seed, "cyclic");
        kr_graph_destroy(G);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(generator_is_seeded)
{
    kr_ctx *ctx = kt_cpu();
    kr_graph *A, *B, *C;
    ck_assert_int_eq(kr_graph_generate(ctx, "dag:1000,4,9", &A), KR_OK);
    kr_ctx_set_threads(ctx, 1);
    ck_assert_int_eq(kr_graph_generate(ctx, "dag:1000,4,9", &B), KR_OK);
    ck_assert_int_eq(kr_graph_generate(ctx, "dag:1000,4,10", &C), KR_OK);
    ck_assert_int_eq(A->m, B->m);
    ck_assert(!memcmp(A->off, B->off, 1001 * sizeof *A->off));
    ck_assert(!memcmp(A->adj, B->adj, (size_t)A->m * sizeof *A->adj));
    ck_assert(A->m != C->m ||
              memcmp(A->adj, C->adj, (size_t)A->m * sizeof *A->adj));
    /* average out-degree about DEG */
    ck_assert(A->m > 3000 && A->m < 4200);
    kr_graph_destroy(C);
    const char *bad[] = {"dag:",     "dag:0,3",   "dag:10",          "dag:10,x",
                         "tree:5,2", "dag:10,2,", "dag:3000000000,2"};
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(kr_graph_generate(ctx, bad[i], &C), KR_ERR_ARG);
    kr_graph_destroy(A);
    kr_graph_destroy(B);
    kr_ctx_destroy(ctx);
}
END_TEST

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

START_TEST(queries_shared_graphs)
{
    const char *dir = getenv("KRYLOV_GRAPHS");
    if (!dir) dir = "../shared/graphs";
    DIR *d = opendir(dir);
    if (!d) {
        kt_skip("queries_shared_graphs", "no ../shared/graphs");
        return;
    }
    kr_ctx *ctx = kt_cpu();
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".gra.gz")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kr_graph *G;
        ck_assert_msg(kr_graph_read_gra(ctx, path, &G) == KR_OK, "%s",
                      kr_ctx_error(ctx));
        int large = G->n > 100000;
        int64_t r = check_against_bfs(ctx, G, large ? 4 : 25, large ? 20000 : 0,
                                      77, e->d_name);
        printf("queries_shared_graphs: %s: n %d, m %lld, %lld reachable "
               "pairs checked\n",
               e->d_name, (int)G->n, (long long)G->m, (long long)r);
        kr_graph_destroy(G);
        count++;
    }
    closedir(d);
    ck_assert_int_ge(count, 1);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(queries_matrix_graphs)
{
    const char *dir = kt_matrices_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        kt_skip("queries_matrix_graphs", "no ../shared/matrices");
        return;
    }
    kr_ctx *ctx = kt_cpu();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".mtx")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kr_csr A = {0};
        ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
        kr_graph *G;
        ck_assert_int_eq(kr_graph_from_csr(ctx, &A, &G), KR_OK);
        /* edge j -> i for each off-diagonal a_ij */
        int64_t offdiag = 0;
        for (int32_t i = 0; i < A.nrows; i++)
            for (int32_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++)
                offdiag += A.colind[k] != i && A.val[k] != 0.0;
        ck_assert_int_eq(G->m, offdiag);
        if (A.nnz > 1 && A.colind[0] != 0) {
            int32_t j = A.colind[0], found = 0;
            for (int64_t k = G->off[j]; k < G->off[j + 1]; k++)
                found |= G->adj[k] == 0;
            ck_assert(found);
        }
        check_against_bfs(ctx, G, 6, 0, 5, e->d_name);
        kr_graph_destroy(G);
        kr_csr_free(&A);
    }
    closedir(d);
    kr_ctx_destroy(ctx);
}
END_TEST

/* --------------------------------------------------------------- SCCs */

START_TEST(scc_equals_mutual_reachability)
{
    kr_ctx *ctx = kt_cpu();
    for (int i = 0; i < 8; i++) {
        uint64_t seed = 900 + i;
        int32_t n = 400;
        kr_graph *G = random_graph(ctx, n, 300 + 60 * i, i % 2, seed);
        int32_t *comp = malloc(n * sizeof *comp), nc;
        ck_assert_int_eq(kr_graph_scc(ctx, G, comp, &nc), KR_OK);
        unsigned char *R = malloc((size_t)n * n);
        int32_t queue[400];
        for (int32_t u = 0; u < n; u++)
            kt_bfs(G, u, R + (size_t)u * n, queue);
        int32_t classes = 0;
        for (int32_t u = 0; u < n; u++) {
            int32_t first = u;
            for (int32_t v = 0; v < n; v++) {
                int same = R[(size_t)u * n + v] && R[(size_t)v * n + u];
                if (same != (comp[u] == comp[v]))
                    ck_abort_msg("seed %llu: %d, %d: mutual %d, comp %d %d",
                                 (unsigned long long)seed, (int)u, (int)v, same,
                                 (int)comp[u], (int)comp[v]);
                if (same && v < first) first = v;
            }
            classes += first == u;
        }
        ck_assert_int_eq(classes, nc);
        for (int32_t u = 0; u < n; u++) /* topological numbering */
            for (int64_t k = G->off[u]; k < G->off[u + 1]; k++)
                ck_assert_int_le(comp[u], comp[G->adj[k]]);
        free(R);
        free(comp);
        kr_graph_destroy(G);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* A chain of 10^7 vertices (and the same closed into one cycle) goes
 * 10^7 levels deep: no recursion may follow it. */
START_TEST(long_chain_no_overflow)
{
    kr_ctx *ctx = kt_cpu();
    int32_t n = 10000000;
    int32_t *src = malloc((size_t)n * sizeof *src);
    int32_t *dst = malloc((size_t)n * sizeof *dst);
    for (int32_t i = 0; i < n; i++) {
        src[i] = i;
        dst[i] = i + 1 < n ? i + 1 : 0;
    }
    for (int cycle = 0; cycle < 2; cycle++) {
        kr_graph *G;
        ck_assert_int_eq(
            kr_graph_from_edges(ctx, n, cycle ? n : n - 1, src, dst, &G),
            KR_OK);
        kr_reach *R;
        kr_reach_options o;
        kr_reach_options_default(&o);
        o.labels = 2;
        ck_assert_int_eq(kr_reach_create(ctx, G, &o, &R), KR_OK);
        kr_reach_info info;
        kr_reach_get_info(R, &info);
        ck_assert_int_eq(info.components, cycle ? 1 : n);
        ck_assert_int_eq(kr_reach_query(R, 0, n - 1), 1);
        ck_assert_int_eq(kr_reach_query(R, n - 1, 0), cycle);
        ck_assert_int_eq(kr_reach_query(R, 5, 4), cycle);
        kr_reach_destroy(R);
        kr_graph_destroy(G);
    }
    free(src);
    free(dst);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------ .gra files */

START_TEST(gra_reads_and_rejects)
{
    kr_ctx *ctx = kt_cpu();
    const char *dir = kt_tmpdir();
    kr_graph *G;
    const char *ok = kt_write_file(dir, "ok.gra",
                                   "graph_for_greach\n4\n0: 1 2 #\n2: 3 #\n\n"
                                   "1: #\n3: #\n");
    ck_assert_int_eq(kr_graph_read_gra(ctx, ok, &G), KR_OK);
    ck_assert_int_eq(G->n, 4);
    ck_assert_int_eq(G->m, 3);
    ck_assert_int_eq(G->adj[G->off[2]], 3);
    kr_graph_destroy(G);
    struct {
        const char *text, *line;
    } bad[] = {
        {"graph_for_grech\n1\n0: #\n", ":1:"},
        {"graph_for_greach\n-3\n", ":2:"},
        {"graph_for_greach\n2\n0: 1 #\n1: 2 #\n", ":4:"},
        {"graph_for_greach\n2\n0: 1\n1: #\n", ":3:"},
        {"graph_for_greach\n2\n0: 1 #\n0: #\n", ":4:"},
        {"graph_for_greach\n2\n0 1 #\n1: #\n", ":3:"},
        {"graph_for_greach\n3\n0: 1 #\n1: #\n", ":4:"},
        {"graph_for_greach\n1\n0: #\n1: #\n", ":4:"},
        {"graph_for_greach\n2\n0: 1x #\n1: #\n", ":3:"},
        {"graph_for_greach\n2\n0: 1 # 5\n1: #\n", ":3:"},
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%d.gra", i);
        const char *p = kt_write_file(dir, name, bad[i].text);
        ck_assert_int_eq(kr_graph_read_gra(ctx, p, &G), KR_ERR_FORMAT);
        ck_assert_ptr_null(G);
        ck_assert_msg(strstr(kr_ctx_error(ctx), bad[i].line), "case %d: %s", i,
                      kr_ctx_error(ctx));
    }
    ck_assert_int_eq(kr_graph_read_gra(ctx, "/nonexistent.gra", &G), KR_ERR_IO);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------ block analysis */

/* 6 x 6: blocks {0,1} {2,3} {4,5}; block 1 depends on 0, block 2 on 1;
 * with a_05 != 0 the three blocks form one cycle. */
static void block_matrix(kr_ctx *ctx, int cyclic, kr_csr *A)
{
    double a[36] = {0};
    for (int i = 0; i < 6; i++)
        a[i * 6 + i] = 4;
    a[0 * 6 + 1] = a[1 * 6 + 0] = 1; /* inside block 0 */
    a[2 * 6 + 1] = 1;                /* 1 -> 2: block 0 -> block 1 */
    a[5 * 6 + 3] = 1;                /* block 1 -> block 2 */
    if (cyclic) a[0 * 6 + 5] = 1;    /* block 2 -> block 0 */
    kt_dense_csr(ctx, 6, a, A);
}

START_TEST(block_analysis_small)
{
    kr_ctx *ctx = kt_cpu();
    int32_t starts[4] = {0, 2, 4, 6};
    for (int cyclic = 0; cyclic < 2; cyclic++) {
        kr_csr A;
        block_matrix(ctx, cyclic, &A);
        kr_block_analysis a;
        ck_assert_int_eq(kr_block_analyze(ctx, &A, 3, starts, &a), KR_OK);
        ck_assert_int_eq(a.nblocks, 3);
        ck_assert_int_eq(a.dependencies, 2 + cyclic);
        ck_assert_int_eq(a.block_triangular, !cyclic);
        ck_assert_int_eq(a.groups, cyclic ? 1 : 3);
        ck_assert_int_eq(a.largest_group, cyclic ? 3 : 1);
        ck_assert_int_eq(a.depth, cyclic ? 1 : 3);
        ck_assert_int_eq(a.max_width, 1);
        ck_assert_int_eq(a.weak_components, 1);
        ck_assert_int_eq(a.nnz, 10 + cyclic);
        ck_assert_int_eq(a.nnz_inside, 8);
        kr_graph *Q;
        ck_assert_int_eq(kr_graph_quotient(ctx, &A, 3, starts, &Q), KR_OK);
        kr_reach *R;
        ck_assert_int_eq(kr_reach_create(ctx, Q, NULL, &R), KR_OK);
        ck_assert_int_eq(kr_reach_query(R, 0, 2), 1);
        ck_assert_int_eq(kr_reach_query(R, 2, 0), cyclic);
        kr_reach_destroy(R);
        kr_graph_destroy(Q);
        kr_block_analysis_free(&a);
        kr_csr_free(&A);
    }
    int32_t bad[3] = {0, 3, 5};
    kr_csr A;
    block_matrix(ctx, 0, &A);
    kr_block_analysis a;
    ck_assert_int_eq(kr_block_analyze(ctx, &A, 2, bad, &a), KR_ERR_ARG);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Diagonal blocks in a block-diagonal random matrix: level widths sum to
 * the groups, components as many as blocks. */
START_TEST(block_analysis_independent)
{
    kr_ctx *ctx = kt_cpu();
    int32_t n = 40, nb = 10, starts[11];
    double *a = calloc((size_t)n * n, sizeof *a);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i / 4 * 4; j < i / 4 * 4 + 4; j++)
            a[i * n + j] = i == j ? 5 : 1;
    for (int32_t b = 0; b <= nb; b++)
        starts[b] = 4 * b;
    kr_csr A;
    kt_dense_csr(ctx, n, a, &A);
    kr_block_analysis r;
    ck_assert_int_eq(kr_block_analyze(ctx, &A, nb, starts, &r), KR_OK);
    ck_assert_int_eq(r.weak_components, 10);
    ck_assert_int_eq(r.depth, 1);
    ck_assert_int_eq(r.max_width, 10);
    ck_assert_int_eq(r.nnz_inside, r.nnz);
    ck_assert(r.block_triangular);
    kr_block_analysis_free(&r);
    kr_csr_free(&A);
    free(a);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Random matrices and partitions against brute force on the block level:
 * the quotient's edges, its strongly connected groups (mutual reachability
 * by Warshall's closure), block-triangularity, the longest path (levels)
 * and the entries inside blocks. */
START_TEST(block_analysis_random)
{
    kr_ctx *ctx = kt_cpu();
    for (int trial = 0; trial < 20; trial++) {
        uint64_t seed = 4000 + trial, rng = seed;
        int32_t n = 60 + trial * 7, nb = 0, starts[400];
        kr_csr A;
        kt_random_csr(ctx, n, n, 1 + trial % 3, 1, seed, &A);
        for (int32_t r = 0; r < n; nb++) { /* blocks of 1..6 rows */
            starts[nb] = r;
            r += 1 + (int32_t)(kt_rand_u64(&rng) % 6);
            if (r > n) r = n;
        }
        starts[nb] = n;
        unsigned char *R = calloc((size_t)nb * nb, 1);
        int32_t *blk = malloc((size_t)n * sizeof *blk);
        for (int32_t b = 0; b < nb; b++)
            for (int32_t i = starts[b]; i < starts[b + 1]; i++)
                blk[i] = b;
        int64_t inside = 0, edges = 0;
        for (int32_t i = 0; i < n; i++)
            for (int32_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++) {
                int32_t c = blk[A.colind[k]], b = blk[i];
                inside += b == c;
                if (b != c && A.val[k] != 0.0 && !R[(size_t)c * nb + b]) {
                    R[(size_t)c * nb + b] = 1;
                    edges++;
                }
            }
        kr_block_analysis a;
        ck_assert_int_eq(kr_block_analyze(ctx, &A, nb, starts, &a), KR_OK);
        ck_assert_int_eq(a.dependencies, edges);
        ck_assert_int_eq(a.nnz_inside, inside);
        for (int32_t k = 0; k < nb; k++) /* Warshall: R = reachability */
            for (int32_t i = 0; i < nb; i++)
                if (R[(size_t)i * nb + k])
                    for (int32_t j = 0; j < nb; j++)
                        R[(size_t)i * nb + j] |= R[(size_t)k * nb + j];
        int32_t groups = 0, cyclic = 0, widths = 0;
        for (int32_t i = 0; i < nb; i++) {
            int32_t first = i, size = 1;
            for (int32_t j = 0; j < nb; j++)
                if (j != i && R[(size_t)i * nb + j] && R[(size_t)j * nb + i]) {
                    size++;
                    if (j < first) first = j;
                }
            groups += first == i;
            cyclic += first == i && size > 1;
        }
        for (int32_t l = 0; l < a.depth; l++)
            widths += a.level_widths[l];
        ck_assert_msg(a.groups == groups && a.cyclic_groups == cyclic,
                      "seed %llu: groups %d/%d, cyclic %d/%d",
                      (unsigned long long)seed, (int)a.groups, (int)groups,
                      (int)a.cyclic_groups, (int)cyclic);
        ck_assert_int_eq(a.block_triangular, cyclic == 0);
        ck_assert_int_eq(widths, groups);
        ck_assert_int_ge(a.depth, 1);
        kr_block_analysis_free(&a);
        free(R);
        free(blk);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* -------------------------------------------------------- SCC blocking */

START_TEST(scc_blocking_respects_components)
{
    kr_ctx *ctx = kt_cpu();
    const char *dir = kt_matrices_dir();
    const char *names[] = {"sherman3.mtx", "lnsp3937.mtx", "cavity10.mtx",
                           "west2021.mtx"};
    for (int i = 0; i < 4 && dir; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        kr_csr A = {0};
        if (kr_read_mtx(ctx, path, &A) != KR_OK) continue;
        kr_graph *G;
        ck_assert_int_eq(kr_graph_from_csr(ctx, &A, &G), KR_OK);
        int32_t *comp = malloc((size_t)A.nrows * sizeof *comp), nc;
        ck_assert_int_eq(kr_graph_scc(ctx, G, comp, &nc), KR_OK);
        for (int32_t max = 4; max <= 32; max *= 2) {
            int32_t nb, *starts;
            ck_assert_int_eq(kr_blocking_scc(ctx, &A, max, &nb, &starts),
                             KR_OK);
            ck_assert_int_eq(starts[0], 0);
            ck_assert_int_eq(starts[nb], A.nrows);
            for (int32_t b = 0; b < nb; b++) {
                int32_t s = starts[b], e = starts[b + 1];
                ck_assert(e > s && e - s <= max);
                for (int32_t r = s + 1; r < e; r++)
                    ck_assert_int_eq(comp[r], comp[s]);
                /* a run of one SCC that fits is one block */
                int32_t rs = s, re = e;
                while (rs > 0 && comp[rs - 1] == comp[s])
                    rs--;
                while (re < A.nrows && comp[re] == comp[s])
                    re++;
                if (re - rs <= max) ck_assert(rs == s && re == e);
            }
            free(starts);
        }
        free(comp);
        kr_graph_destroy(G);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------- the GPU */

static int64_t max_out_degree(const kr_graph *G)
{
    int64_t most = 0;
    for (int32_t v = 0; v < G->n; v++)
        if (G->off[v + 1] - G->off[v] > most) most = G->off[v + 1] - G->off[v];
    return most;
}

/* The GPU index (labels by level sweeps, batched bit-parallel queries)
 * against the CPU index on q random and q reachable-by-BFS pairs. */
/* go: the GPU index's options (NULL: the defaults). */
static void gpu_against_cpu(kr_ctx *cpu, kr_ctx *gpu, const kr_graph *G,
                            int64_t q, uint64_t seed, const char *what,
                            const kr_reach_options *go)
{
    kr_reach *C, *R;
    ck_assert_int_eq(kr_reach_create(cpu, G, NULL, &C), KR_OK);
    ck_assert_msg(kr_reach_create(gpu, G, go, &R) == KR_OK, "%s",
                  kr_ctx_error(gpu));
    int32_t n = G->n;
    int32_t *pairs = malloc((size_t)q * 2 * sizeof *pairs);
    unsigned char *seen = malloc((size_t)n + 1);
    int32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
    uint64_t rng = seed;
    int32_t u = 0, reached = 1;
    for (int64_t k = 0; k < q; k++) {
        if (k % 1000 == 0) { /* a fresh source for the reachable half */
            u = (int32_t)(kt_rand_u64(&rng) % (uint64_t)n);
            reached = kt_bfs(G, u, seen, queue);
        }
        uint64_t r = kt_rand_u64(&rng);
        pairs[2 * k] = k % 2 ? u : (int32_t)(r % (uint64_t)n);
        pairs[2 * k + 1] = k % 2 ? queue[(r >> 20) % (uint64_t)reached]
                                 : (int32_t)((r >> 32) % (uint64_t)n);
    }
    unsigned char *a = malloc((size_t)q), *b = malloc((size_t)q);
    ck_assert_int_eq(kr_reach_query_batch(cpu, C, q, pairs, a, NULL), KR_OK);
    int64_t by_labels;
    ck_assert_msg(kr_reach_query_batch(gpu, R, q, pairs, b, &by_labels) ==
                      KR_OK,
                  "%s", kr_ctx_error(gpu));
    if (kr_reach_warp_queries(go ? go->gpu_variants : 0)) {
        /* the warps searched what the labels left, or handed it on */
        ck_assert_int_eq(R->warp_searched + R->warp_fallbacks, q - by_labels);
        /* a 4-entry stack must overflow where a search meets a vertex
         * with many children; a sparse graph's searches may fit it */
        if (getenv("KRYLOV_REACH_WARP_STACK") && max_out_degree(G) >= 64)
            ck_assert_msg(q - by_labels < 100 || R->warp_fallbacks > 0,
                          "%s: a 4-entry stack never overflowed", what);
        else
            ck_assert_msg(q == by_labels || R->warp_searched > 0,
                          "%s: no query searched by a warp", what);
    }
    int32_t lo_u[16], hi_u[16], lo_v[16], hi_v[16];
    int64_t yes = 0;
    for (int64_t k = 0; k < q; k++) {
        if (a[k] != b[k])
            ck_abort_msg("%s (seed %llu): %d -> %d: cpu %d, gpu %d", what,
                         (unsigned long long)seed, (int)pairs[2 * k],
                         (int)pairs[2 * k + 1], a[k], b[k]);
        if (!a[k]) continue;
        yes++;
        kr_reach_labels(R, pairs[2 * k], lo_u, hi_u);
        kr_reach_labels(R, pairs[2 * k + 1], lo_v, hi_v);
        for (int i = 0; i < 5; i++)
            ck_assert(lo_u[i] <= lo_v[i] && hi_v[i] <= hi_u[i]);
    }
    printf("gpu: %s (seed %llu): %lld queries, %lld reachable, %lld by "
           "labels: equal\n",
           what, (unsigned long long)seed, (long long)q, (long long)yes,
           (long long)by_labels);
    free(pairs);
    free(seen);
    free(queue);
    free(a);
    free(b);
    kr_reach_destroy(C);
    kr_reach_destroy(R);
}

START_TEST(gpu_matches_cpu)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_matches_cpu");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    char spec[64];
    snprintf(spec, sizeof spec, "dag:20000,8,%llu", (unsigned long long)seed);
    kr_graph *G;
    ck_assert_int_eq(kr_graph_generate(cpu, spec, &G), KR_OK);
    gpu_against_cpu(cpu, gpu, G, 20000, seed, spec, NULL);
    kr_graph_destroy(G);
    for (int i = 0; i < 4; i++) {
        G = random_graph(cpu, 5000 + 3000 * i, 6000 + 4000 * i, i % 2,
                         seed + i);
        gpu_against_cpu(cpu, gpu, G, 20000, seed + i, "cyclic", NULL);
        kr_graph_destroy(G);
    }
    const char *dir = getenv("KRYLOV_GRAPHS");
    if (!dir) dir = "../shared/graphs";
    const char *names[] = {"citeseer.scc.gra.gz", "uniprotenc_22m.scc.gra.gz",
                           "kegg_dag_uniq.gra.gz", "ba10k5d.gra.gz"};
    for (int i = 0; i < 4; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (kr_graph_read_gra(cpu, path, &G) != KR_OK) continue;
        gpu_against_cpu(cpu, gpu, G, 100000, seed, names[i], NULL);
        kr_graph_destroy(G);
    }
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

/* The labeling variants (status-array levels, out-degree bins) and the
 * warp-per-query search answer as the CPU index does; dag:3000,700 has
 * vertices of every degree class. Rounds 1-3 (the labeling variants)
 * search bit-parallel, 4 and 5 a warp per query; 5 runs with a 4-entry
 * stack, so that most searches overflow and go to the bit-parallel
 * search. */
START_TEST(gpu_variants_match_cpu)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_variants_match_cpu");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    uint64_t seed = (uint64_t)time(NULL);
    kr_reach_options o;
    kr_reach_options_default(&o);
    for (unsigned v = 1; v <= 5; v++) {
        o.gpu_variants =
            v < 4 ? v | KR_REACH_GPU_BIT_QUERIES : KR_REACH_GPU_WARP_QUERIES;
        if (v == 5) setenv("KRYLOV_REACH_WARP_STACK", "4", 1);
        char spec[64];
        const char *shapes[] = {"dag:20000,8", "dag:3000,700"};
        for (int i = 0; i < 2; i++) {
            snprintf(spec, sizeof spec, "%s,%llu", shapes[i],
                     (unsigned long long)(seed + v));
            kr_graph *G;
            ck_assert_int_eq(kr_graph_generate(cpu, spec, &G), KR_OK);
            printf("gpu_variants_match_cpu: variants %u\n", v);
            gpu_against_cpu(cpu, gpu, G, 20000, seed + v, spec, &o);
            kr_graph_destroy(G);
        }
        kr_graph *G = random_graph(cpu, 8000, 12000, 1, seed + v);
        gpu_against_cpu(cpu, gpu, G, 20000, seed + v, "cyclic", &o);
        kr_graph_destroy(G);
    }
    unsetenv("KRYLOV_REACH_WARP_STACK");
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

START_TEST(reach_rejects_unknown_variants)
{
    kr_ctx *ctx = kt_cpu();
    kr_graph *G;
    ck_assert_int_eq(kr_graph_generate(ctx, "dag:100,2", &G), KR_OK);
    kr_reach_options o;
    kr_reach_options_default(&o);
    o.gpu_variants = 16;
    kr_reach *R;
    ck_assert_int_eq(kr_reach_create(ctx, G, &o, &R), KR_ERR_ARG);
    ck_assert_ptr_null(R);
    kr_graph_destroy(G);
    kr_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("graph");
    TCase *t = tcase_create("graph");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, queries_random_dags);
    tcase_add_test(t, queries_cyclic_graphs);
    tcase_add_test(t, generator_is_seeded);
    tcase_add_test(t, queries_shared_graphs);
    tcase_add_test(t, queries_matrix_graphs);
    tcase_add_test(t, scc_equals_mutual_reachability);
    tcase_add_test(t, long_chain_no_overflow);
    tcase_add_test(t, gra_reads_and_rejects);
    tcase_add_test(t, block_analysis_small);
    tcase_add_test(t, block_analysis_independent);
    tcase_add_test(t, block_analysis_random);
    tcase_add_test(t, scc_blocking_respects_components);
    tcase_add_test(t, gpu_matches_cpu);
    tcase_add_test(t, gpu_variants_match_cpu);
    tcase_add_test(t, reach_rejects_unknown_variants);
    suite_add_tcase(s, t);
    return kt_run(s);
}
