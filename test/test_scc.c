/* Strongly connected components: the forward-backward steps (CPU, and
 * the GPU's when one is usable) give exactly Tarjan's component map after
 * the shared numbering, on random graphs with many cycles, DAGs, chains
 * and cycles of 10^7 vertices, the shared graphs and the shared matrices;
 * the numbering is the promised one (checked independently); the GPU steps
 * match the CPU steps pass by pass. */
#include "graph/scc.h"
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ graphs */

/* k planted groups, each a random cycle with extra inner edges, joined by
 * edges that mostly go forward in a hidden order of the groups; the few
 * backward ones merge groups into larger SCCs. Many cycles, many SCCs. */
static kr_graph *planted_graph(kr_ctx *ctx, int32_t n, int32_t k, uint64_t seed)
{
    int32_t *group = malloc((size_t)n * sizeof *group);
    int32_t *src = malloc((size_t)4 * n * sizeof *src);
    int32_t *dst = malloc((size_t)4 * n * sizeof *dst);
    uint64_t rng = seed;
    for (int32_t v = 0; v < n; v++)
        group[v] = (int32_t)(kt_rand_u64(&rng) % (uint64_t)k);
    int64_t m = 0;
    for (int32_t v = 0; v < n; v++) { /* v to the next member of its group */
        int32_t w = v + 1;
        while (w < n && group[w] != group[v])
            w++;
        if (w < n && kt_rand_u64(&rng) % 8) {
            src[m] = v;
            dst[m++] = w;
        }
    }
    for (int32_t v = 0; v < n; v++) { /* and back to its group's first */
        int32_t f = 0;
        while (group[f] != group[v])
            f++;
        if (f != v && kt_rand_u64(&rng) % 3 == 0) {
            src[m] = v;
            dst[m++] = f;
        }
    }
    for (int32_t e = 0; e < 2 * n; e++) { /* between groups */
        int32_t a = (int32_t)(kt_rand_u64(&rng) % (uint64_t)n);
        int32_t b = (int32_t)(kt_rand_u64(&rng) % (uint64_t)n);
        int back = kt_rand_u64(&rng) % 50 == 0;
        if ((group[a] < group[b]) != back || group[a] == group[b]) continue;
        src[m] = a;
        dst[m++] = b;
    }
    kr_graph *G;
    ck_assert_int_eq(kr_graph_from_edges(ctx, n, m, src, dst, &G), KR_OK);
    free(group);
    free(src);
    free(dst);
    return G;
}

/* 0 -> 1 -> ... -> n-1, or backwards, or closed into a cycle. */
static kr_graph *chain(kr_ctx *ctx, int32_t n, int backwards, int cycle)
{
    int32_t *src = malloc((size_t)n * sizeof *src);
    int32_t *dst = malloc((size_t)n * sizeof *dst);
    for (int32_t i = 0; i < n; i++) {
        src[i] = backwards ? (i + 1) % n : i;
        dst[i] = backwards ? i : (i + 1) % n;
    }
    kr_graph *G;
    ck_assert_int_eq(
        kr_graph_from_edges(ctx, n, cycle ? n : n - 1, src, dst, &G), KR_OK);
    free(src);
    free(dst);
    return G;
}

/* ------------------------------------------------------------ checks */

/* The numbering kr_graph_scc promises, recomputed in comp's own order:
 * every edge goes forward, and components come by (level, least vertex),
 * the level being the longest path from a source of the condensation. */
static void check_numbering(const kr_graph *G, const int32_t *comp, int32_t nc,
                            const char *what)
{
    int32_t *least = malloc(((size_t)nc + 1) * sizeof *least);
    int32_t *level = calloc((size_t)nc + 1, sizeof *level);
    int64_t *first = calloc((size_t)nc + 2, sizeof *first);
    int32_t *order = malloc(((size_t)G->n + 1) * sizeof *order);
    for (int32_t c = 0; c < nc; c++)
        least[c] = INT32_MAX;
    for (int32_t v = 0; v < G->n; v++) {
        ck_assert_msg(comp[v] >= 0 && comp[v] < nc, "%s: comp[%d] = %d", what,
                      (int)v, (int)comp[v]);
        if (v < least[comp[v]]) least[comp[v]] = v;
        first[comp[v] + 1]++;
    }
    for (int32_t c = 0; c < nc; c++)
        first[c + 1] += first[c];
    for (int32_t v = 0; v < G->n; v++)
        order[first[comp[v]]++] = v;
    for (int32_t c = 0; c < nc; c++) /* first[c] is now c's end */
        for (int64_t i = c ? first[c - 1] : 0; i < first[c]; i++) {
            int32_t u = order[i];
            for (int64_t e = G->off[u]; e < G->off[u + 1]; e++) {
                int32_t d = comp[G->adj[e]];
                ck_assert_msg(d >= c, "%s: edge %d -> %d goes back (%d > %d)",
                              what, (int)u, (int)G->adj[e], (int)c, (int)d);
                if (d > c && level[d] < level[c] + 1) level[d] = level[c] + 1;
            }
        }
    for (int32_t c = 1; c < nc; c++)
        ck_assert_msg(level[c - 1] < level[c] ||
                          (level[c - 1] == level[c] && least[c - 1] < least[c]),
                      "%s: components %d and %d out of order", what, (int)c - 1,
                      (int)c);
    free(least);
    free(level);
    free(first);
    free(order);
}

/* The steps' components with no pass budget: FW-BW alone, no Tarjan. */
static void fwbw_unbounded(kr_ctx *ctx, const kr_graph *G,
                           const kr_fwbw_steps *steps, int32_t *comp,
                           int32_t *nc)
{
    kr_fwbw_steps all = *steps;
    all.max_passes = INT32_MAX;
    kr_fwbw_stats stats;
    ck_assert_int_eq(kr_scc_fwbw(ctx, G, &all, comp, &stats), KR_OK);
    ck_assert_int_eq(stats.host_rest, 0);
    ck_assert_int_eq(kr_scc_number(ctx, G, comp, comp, nc), KR_OK);
}

/* Tarjan's map against FW-BW's on ctx (its device's steps), with the
 * default budget and with none (unbounded: only where passes are cheap). */
static void compare_with_tarjan(kr_ctx *ctx, const kr_graph *G, int unbounded,
                                const char *what)
{
    size_t n = (size_t)G->n + 1;
    int32_t *ct = malloc(n * 4), *cf = malloc(n * 4), nt, nf;
    kr_scc_info ti, fi;
    ck_assert_int_eq(kr_graph_scc_with(ctx, G, KR_SCC_TARJAN, ct, &nt, &ti),
                     KR_OK);
    ck_assert_str_eq(ti.method, "tarjan");
    ck_assert_int_eq(kr_graph_scc_with(ctx, G, KR_SCC_FWBW, cf, &nf, &fi),
                     KR_OK);
    const char *expect =
        kr_ctx_device(ctx) == KR_DEVICE_CUDA ? "fwbw-gpu" : "fwbw-cpu";
    ck_assert_str_eq(fi.method, expect);
    ck_assert_int_eq(nf, nt);
    ck_assert_msg(!memcmp(ct, cf, (size_t)G->n * 4),
                  "%s: %s's map differs from Tarjan's", what, fi.method);
    if (unbounded) {
        fwbw_unbounded(ctx, G,
                       kr_ctx_device(ctx) == KR_DEVICE_CUDA
                           ? &kr_fwbw_cuda_steps
                           : &kr_fwbw_cpu_steps,
                       cf, &nf);
        ck_assert_int_eq(nf, nt);
        ck_assert_msg(!memcmp(ct, cf, (size_t)G->n * 4),
                      "%s: unbounded %s differs from Tarjan", what, fi.method);
    }
    printf("%s: %d vertices, %lld edges, %d SCCs; %s: %d passes, %d rounds, "
           "%d to Tarjan: equal\n",
           what, (int)G->n, (long long)G->m, (int)nt, fi.method, (int)fi.passes,
           (int)fi.rounds, (int)fi.host_rest);
    check_numbering(G, ct, nt, what);
    free(ct);
    free(cf);
}

/* -------------------------------------------------------- CPU against */

START_TEST(fwbw_random_cyclic)
{
    kr_ctx *ctx = kt_cpu();
    for (int i = 0; i < 12; i++) {
        uint64_t seed = 4200 + (uint64_t)i;
        int32_t n = 300 + 1700 * i, k = 1 + (i * 37) % 400;
        printf("fwbw_random_cyclic: seed %llu, n %d, %d groups\n",
               (unsigned long long)seed, (int)n, (int)k);
        kr_graph *G = planted_graph(ctx, n, k, seed);
        char what[64];
        snprintf(what, sizeof what, "planted seed %llu",
                 (unsigned long long)seed);
        compare_with_tarjan(ctx, G, 1, what);
        kr_graph_destroy(G);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(fwbw_dags)
{
    kr_ctx *ctx = kt_cpu();
    const char *specs[] = {"dag:1,0", "dag:7,2,3", "dag:5000,3,5",
                           "dag:20000,8,9"};
    for (int i = 0; i < 4; i++) {
        kr_graph *G;
        ck_assert_int_eq(kr_graph_generate(ctx, specs[i], &G), KR_OK);
        int32_t *comp = malloc((size_t)G->n * 4), nc;
        ck_assert_int_eq(
            kr_graph_scc_with(ctx, G, KR_SCC_FWBW, comp, &nc, NULL), KR_OK);
        ck_assert_int_eq(nc, G->n); /* every vertex its own SCC */
        compare_with_tarjan(ctx, G, 1, specs[i]);
        free(comp);
        kr_graph_destroy(G);
    }
    kr_graph *E; /* no vertices at all */
    int32_t none = 0;
    ck_assert_int_eq(kr_graph_from_edges(ctx, 0, 0, NULL, NULL, &E), KR_OK);
    ck_assert_int_eq(kr_graph_scc_with(ctx, E, KR_SCC_FWBW, NULL, &none, NULL),
                     KR_OK);
    ck_assert_int_eq(none, 0);
    kr_graph_destroy(E);
    kr_ctx_destroy(ctx);
}
END_TEST

/* 10^7 vertices: no stack overflow, and the pass budget hands the chain to
 * Tarjan instead of one pass a vertex. */
static void chains_of_ten_million(kr_ctx *ctx)
{
    int32_t n = 10000000;
    int32_t *comp = malloc((size_t)n * sizeof *comp), nc;
    for (int shape = 0; shape < 3; shape++) {
        int backwards = shape == 1, cycle = shape == 2;
        kr_graph *G = chain(ctx, n, backwards, cycle);
        kr_scc_info info;
        ck_assert_int_eq(
            kr_graph_scc_with(ctx, G, KR_SCC_FWBW, comp, &nc, &info), KR_OK);
        ck_assert_int_eq(nc, cycle ? 1 : n);
        for (int32_t v = 0; v < n; v++)
            if (comp[v] != (cycle ? 0 : backwards ? n - 1 - v : v))
                ck_abort_msg("%s chain: comp[%d] = %d", info.method, (int)v,
                             (int)comp[v]);
        ck_assert(info.host_rest > 0);
        printf("%s %s: %d passes, %d to Tarjan, %.2f s\n", info.method,
               cycle       ? "cycle"
               : backwards ? "backward chain"
                           : "chain",
               (int)info.passes, (int)info.host_rest, info.seconds);
        kr_graph_destroy(G);
    }
    free(comp);
}

START_TEST(fwbw_long_chain_and_cycle)
{
    kr_ctx *ctx = kt_cpu();
    chains_of_ten_million(ctx);
    kr_ctx_destroy(ctx);
}
END_TEST

static void on_shared_graphs(kr_ctx *ctx, int unbounded)
{
    const char *dir = getenv("KRYLOV_GRAPHS");
    if (!dir) dir = "../shared/graphs";
    DIR *d = opendir(dir);
    if (!d) {
        kt_skip("shared graphs", "no ../shared/graphs");
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".gra")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kr_graph *G;
        ck_assert_int_eq(kr_graph_read_gra(ctx, path, &G), KR_OK);
        compare_with_tarjan(ctx, G, unbounded, e->d_name);
        kr_graph_destroy(G);
    }
    closedir(d);
}

START_TEST(fwbw_shared_graphs)
{
    kr_ctx *ctx = kt_cpu();
    on_shared_graphs(ctx, 1);
    kr_ctx_destroy(ctx);
}
END_TEST

/* Every shared matrix; the reducible ones (bcsstk18, cavity10, lnsp3937,
 * mhd4800b, sherman3, sherman5, utm5940, ...) have many SCCs. */
static void on_shared_matrices(kr_ctx *ctx, int unbounded)
{
    const char *dir = kt_matrices_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        kt_skip("shared matrices", "no ../shared/matrices");
        return;
    }
    struct dirent *e;
    int reducible = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".mtx")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kr_csr A = {0};
        kr_graph *G;
        ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
        if (A.nrows != A.ncols) {
            kr_csr_free(&A);
            continue;
        }
        ck_assert_int_eq(kr_graph_from_csr(ctx, &A, &G), KR_OK);
        int32_t *comp = malloc((size_t)A.nrows * 4), nc;
        ck_assert_int_eq(kr_graph_scc(ctx, G, comp, &nc), KR_OK);
        reducible += nc > 1;
        compare_with_tarjan(ctx, G, unbounded, e->d_name);
        free(comp);
        kr_graph_destroy(G);
        kr_csr_free(&A);
    }
    closedir(d);
    ck_assert_int_ge(reducible, 7);
}

START_TEST(fwbw_shared_matrices)
{
    kr_ctx *ctx = kt_cpu();
    on_shared_matrices(ctx, 1);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The condensation, and the reachability index, from either map. */
static void check_condensation(kr_ctx *ctx, const kr_graph *G)
{
    size_t n = (size_t)G->n + 1;
    int32_t *ct = malloc(n * 4), *cf = malloc(n * 4), nt, nf;
    kr_graph *Dt, *Df;
    ck_assert_int_eq(kr_graph_scc(ctx, G, ct, &nt), KR_OK);
    ck_assert_int_eq(kr_graph_scc_with(ctx, G, KR_SCC_FWBW, cf, &nf, NULL),
                     KR_OK);
    ck_assert_int_eq(kr_graph_condense(ctx, G, ct, nt, &Dt), KR_OK);
    ck_assert_int_eq(kr_graph_condense(ctx, G, cf, nf, &Df), KR_OK);
    ck_assert_int_eq(Dt->n, Df->n);
    ck_assert_int_eq(Dt->m, Df->m);
    ck_assert(!memcmp(Dt->off, Df->off, ((size_t)Dt->n + 1) * 8));
    ck_assert(!memcmp(Dt->adj, Df->adj, (size_t)Dt->m * 4));
    kr_reach_options o;
    kr_reach_options_default(&o);
    o.scc = KR_SCC_FWBW;
    kr_reach *R;
    ck_assert_int_eq(kr_reach_create(ctx, G, &o, &R), KR_OK);
    kr_reach_info info;
    kr_reach_get_info(R, &info);
    ck_assert(!strncmp(info.scc.method, "fwbw", 4));
    ck_assert_int_eq(info.components, nt);
    ck_assert_int_eq(info.dag_edges, Dt->m);
    for (int32_t v = 0; v < G->n; v++)
        ck_assert_int_eq(kr_reach_component(R, v), ct[v]);
    kr_reach_destroy(R);
    kr_graph_destroy(Dt);
    kr_graph_destroy(Df);
    free(ct);
    free(cf);
}

START_TEST(fwbw_condensation)
{
    kr_ctx *ctx = kt_cpu();
    for (int i = 0; i < 4; i++) {
        kr_graph *G = planted_graph(ctx, 3000 + 2000 * i, 50 + 100 * i,
                                    777 + (uint64_t)i);
        check_condensation(ctx, G);
        kr_graph_destroy(G);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(scc_choice_and_errors)
{
    kr_ctx *ctx = kt_cpu();
    kr_graph *G = planted_graph(ctx, 500, 20, 31);
    int32_t comp[500], nc;
    kr_scc_info info;
    ck_assert_int_eq(kr_graph_scc_with(ctx, G, KR_SCC_AUTO, comp, &nc, &info),
                     KR_OK);
    ck_assert_str_eq(info.method, "tarjan"); /* the CPU's choice */
    ck_assert_int_eq(
        kr_graph_scc_with(ctx, G, (kr_scc_method)7, comp, &nc, NULL),
        KR_ERR_ARG);
    kr_graph_destroy(G);
    /* a map that splits the cycle 0 -> 1 -> 2 -> 0 is no SCC map */
    int32_t src[] = {0, 1, 2}, dst[] = {1, 2, 0}, bad[] = {0, 1, 1};
    ck_assert_int_eq(kr_graph_from_edges(ctx, 3, 3, src, dst, &G), KR_OK);
    ck_assert_int_eq(kr_scc_number(ctx, G, bad, comp, &nc), KR_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(kr_ctx_error(ctx), "cycle"));
    kr_graph_destroy(G);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The GPU's level passes, done here one after another (a pass only
 * releases components of its own level, so the order inside does not
 * matter), stopped after `passes`; the host's kr_scc_levels and
 * kr_scc_rank finish, as after the GPU's budget. */
static void finish_after(kr_ctx *ctx, const kr_graph *G, const int32_t *raw,
                         int32_t passes, int32_t *comp, int32_t *nc)
{
    int32_t n = G->n, *name = malloc((size_t)n * 4 + 4);
    int32_t *least = malloc((size_t)n * 4 + 4),
            *level = malloc((size_t)n * 4 + 4);
    int32_t *indeg = calloc((size_t)n + 1, 4);
    for (int32_t v = 0; v < n; v++)
        least[v] = INT32_MAX;
    for (int32_t v = 0; v < n; v++)
        if (v < least[raw[v]]) least[raw[v]] = v;
    for (int32_t v = 0; v < n; v++)
        name[v] = least[raw[v]];
    for (int32_t u = 0; u < n; u++)
        for (int64_t e = G->off[u]; e < G->off[u + 1]; e++)
            indeg[name[G->adj[e]]] += name[G->adj[e]] != name[u];
    for (int32_t v = 0; v < n; v++)
        level[v] = name[v] == v && !indeg[v] ? 0 : -1;
    for (int32_t L = 0; L < passes; L++)
        for (int32_t u = 0; u < n; u++) {
            if (level[name[u]] != L) continue;
            for (int64_t e = G->off[u]; e < G->off[u + 1]; e++) {
                int32_t d = name[G->adj[e]];
                if (d != name[u] && --indeg[d] == 0) level[d] = L + 1;
            }
        }
    ck_assert_int_eq(kr_scc_levels(ctx, G, name, level, indeg, passes), KR_OK);
    ck_assert_int_eq(kr_scc_rank(ctx, n, name, level, comp, nc), KR_OK);
    free(name);
    free(least);
    free(level);
    free(indeg);
}

START_TEST(numbering_finishes_from_any_level)
{
    kr_ctx *ctx = kt_cpu();
    kr_graph *graphs[3] = {planted_graph(ctx, 6000, 300, 5150),
                           chain(ctx, 3000, 1, 0), NULL};
    ck_assert_int_eq(kr_graph_generate(ctx, "dag:4000,4,2", &graphs[2]), KR_OK);
    const int32_t passes[] = {0, 1, 2, 7, 60, 5000};
    for (int g = 0; g < 3; g++) {
        const kr_graph *G = graphs[g];
        size_t n = (size_t)G->n;
        int32_t *raw = malloc(n * 4), *ref = malloc(n * 4),
                *got = malloc(n * 4);
        int32_t nr, nref, ngot;
        ck_assert_int_eq(kr_scc_tarjan(ctx, G, raw, &nr), KR_OK);
        ck_assert_int_eq(kr_scc_number(ctx, G, raw, ref, &nref), KR_OK);
        for (int i = 0; i < 6; i++) {
            finish_after(ctx, G, raw, passes[i], got, &ngot);
            ck_assert_int_eq(ngot, nref);
            ck_assert_msg(!memcmp(ref, got, n * 4),
                          "graph %d: finished after %d passes: differs", g,
                          (int)passes[i]);
        }
        free(raw);
        free(ref);
        free(got);
        kr_graph_destroy(graphs[g]);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------- step by step */

typedef struct stepper {
    kr_ctx *ctx;
    const kr_fwbw_steps *steps;
    void *state;
    int32_t *sub, *label;
} stepper;

static void same_state(stepper *a, stepper *b, int32_t n, const char *step)
{
    ck_assert_int_eq(a->steps->result(a->ctx, a->state, a->sub, a->label),
                     KR_OK);
    ck_assert_int_eq(b->steps->result(b->ctx, b->state, b->sub, b->label),
                     KR_OK);
    ck_assert_msg(!memcmp(a->sub, b->sub, (size_t)n * 4) &&
                      !memcmp(a->label, b->label, (size_t)n * 4),
                  "%s and %s differ after %s", a->steps->name, b->steps->name,
                  step);
}

static void lockstep_trim(stepper *s, int32_t n, int64_t *active)
{
    int64_t ra, rb;
    do {
        ck_assert_int_eq(s[0].steps->trim(s[0].ctx, s[0].state, &ra), KR_OK);
        ck_assert_int_eq(s[1].steps->trim(s[1].ctx, s[1].state, &rb), KR_OK);
        ck_assert_int_eq(ra, rb);
        same_state(&s[0], &s[1], n, "trim");
        *active -= ra;
    } while (ra);
}

static void lockstep_round(stepper *s, int32_t n, int64_t *active)
{
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(s[i].steps->elect(s[i].ctx, s[i].state), KR_OK);
    same_state(&s[0], &s[1], n, "elect");
    int ga = 1, gb;
    for (int32_t level = 1; ga; level++) {
        ck_assert_int_eq(s[0].steps->reach(s[0].ctx, s[0].state, level, &ga),
                         KR_OK);
        ck_assert_int_eq(s[1].steps->reach(s[1].ctx, s[1].state, level, &gb),
                         KR_OK);
        ck_assert_int_eq(ga, gb);
    }
    int64_t pa, pb;
    ck_assert_int_eq(s[0].steps->split(s[0].ctx, s[0].state, &pa), KR_OK);
    ck_assert_int_eq(s[1].steps->split(s[1].ctx, s[1].state, &pb), KR_OK);
    ck_assert_int_eq(pa, pb);
    same_state(&s[0], &s[1], n, "split");
    *active -= pa;
}

/* Two implementations (or thread counts) of the steps run side by side:
 * every counter and the whole state agree after every step, to the end. */
static void lockstep(stepper *s, const kr_graph *G, const char *what)
{
    kr_graph *T;
    int32_t n = G->n;
    ck_assert_int_eq(kr_graph_transpose(s[0].ctx, G, &T), KR_OK);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(s[i].steps->create(s[i].ctx, G, T, &s[i].state),
                         KR_OK);
        s[i].sub = malloc((size_t)n * 4);
        s[i].label = malloc((size_t)n * 4);
    }
    int64_t active = n;
    int rounds = 0;
    while (active) {
        lockstep_trim(s, n, &active);
        if (active) lockstep_round(s, n, &active), rounds++;
    }
    int32_t *ct = malloc((size_t)n * 4), nt, nc;
    ck_assert_int_eq(kr_graph_scc(s[0].ctx, G, ct, &nt), KR_OK);
    ck_assert_int_eq(kr_scc_number(s[0].ctx, G, s[0].label, s[0].label, &nc),
                     KR_OK);
    ck_assert_int_eq(nc, nt);
    ck_assert(!memcmp(ct, s[0].label, (size_t)n * 4));
    printf("lockstep %s / %s: %s: %d rounds, same state after every step\n",
           s[0].steps->name, s[1].steps->name, what, rounds);
    for (int i = 0; i < 2; i++) {
        s[i].steps->destroy(s[i].ctx, s[i].state);
        free(s[i].sub);
        free(s[i].label);
    }
    free(ct);
    kr_graph_destroy(T);
}

/* Planted graphs, each run through steps `sa` on a and `sb` on b side by
 * side. */
static void lockstep_planted(kr_ctx *a, const kr_fwbw_steps *sa, kr_ctx *b,
                             const kr_fwbw_steps *sb, uint64_t seed, int runs,
                             const char *test)
{
    for (int i = 0; i < runs; i++) {
        printf("%s: seed %llu\n", test,
               (unsigned long long)(seed + (uint64_t)i));
        kr_graph *G =
            planted_graph(a, 4000 + 12000 * i, 30 + 200 * i, seed + i);
        stepper s[2] = {{a, sa, NULL, NULL, NULL}, {b, sb, NULL, NULL, NULL}};
        lockstep(s, G, "planted");
        kr_graph_destroy(G);
    }
}

START_TEST(fwbw_steps_same_on_any_thread_count)
{
    kr_ctx *one = kt_cpu(), *all = kt_cpu();
    ck_assert_int_eq(kr_ctx_set_threads(one, 1), KR_OK);
    ck_assert_int_eq(kr_ctx_set_threads(all, 2), KR_OK);
    lockstep_planted(one, &kr_fwbw_cpu_steps, all, &kr_fwbw_cpu_steps, 61, 3,
                     "fwbw_steps_same_on_any_thread_count");
    kr_ctx_destroy(one);
    kr_ctx_destroy(all);
}
END_TEST

/* ------------------------------------------------------------ the GPU */

START_TEST(gpu_steps_match_cpu_steps)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_steps_match_cpu_steps");
    if (!gpu) return;
    kr_ctx *cpu = kt_cpu();
    lockstep_planted(cpu, &kr_fwbw_cpu_steps, gpu, &kr_fwbw_cuda_steps,
                     (uint64_t)time(NULL), 4, "gpu_steps_match_cpu_steps");
    kr_ctx_destroy(cpu);
    kr_ctx_destroy(gpu);
}
END_TEST

START_TEST(gpu_scc_equals_tarjan)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_scc_equals_tarjan");
    if (!gpu) return;
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 0; i < 6; i++) {
        printf("gpu_scc_equals_tarjan: seed %llu\n",
               (unsigned long long)(seed + (uint64_t)i));
        kr_graph *G = planted_graph(gpu, 1000 + 9000 * i, 1 + 97 * i, seed + i);
        compare_with_tarjan(gpu, G, 1, "planted");
        check_condensation(gpu, G);
        kr_graph_destroy(G);
    }
    kr_graph *G;
    ck_assert_int_eq(kr_graph_generate(gpu, "dag:100000,6", &G), KR_OK);
    compare_with_tarjan(gpu, G, 1, "dag:100000,6");
    kr_graph_destroy(G);
    on_shared_graphs(gpu, 1);
    on_shared_matrices(gpu, 1);
    chains_of_ten_million(gpu);
    kr_ctx_destroy(gpu);
}
END_TEST

static int by_value(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The same graph up to the order of each vertex's out-edges. */
static void same_rows(const kr_graph *A, const kr_graph *B, const char *what)
{
    ck_assert_int_eq(A->n, B->n);
    ck_assert_int_eq(A->m, B->m);
    ck_assert(!memcmp(A->off, B->off, ((size_t)A->n + 1) * 8));
    int32_t *a = malloc((size_t)A->m * 4 + 4),
            *b = malloc((size_t)A->m * 4 + 4);
    memcpy(a, A->adj, (size_t)A->m * 4);
    memcpy(b, B->adj, (size_t)A->m * 4);
    for (int32_t v = 0; v < A->n; v++) {
        size_t k = (size_t)(A->off[v + 1] - A->off[v]);
        qsort(a + A->off[v], k, 4, by_value);
        qsort(b + A->off[v], k, 4, by_value);
    }
    ck_assert_msg(!memcmp(a, b, (size_t)A->m * 4), "%s: condensations differ",
                  what);
    free(a);
    free(b);
}

/* The GPU's numbering and condensation against the host's, from Tarjan's
 * raw map (named differently from the numbered one). */
static void gpu_number_and_condense(kr_ctx *gpu, const kr_graph *G,
                                    const char *what)
{
    size_t n = (size_t)G->n + 1;
    int32_t *raw = malloc(n * 4), *ch = malloc(n * 4), *cg = malloc(n * 4);
    int32_t nr, nh, ng;
    ck_assert_int_eq(kr_scc_tarjan(gpu, G, raw, &nr), KR_OK);
    ck_assert_int_eq(kr_scc_number(gpu, G, raw, ch, &nh), KR_OK);
    ck_assert_int_eq(kr_scc_cuda_number(gpu, G, raw, cg, &ng), KR_OK);
    ck_assert_int_eq(ng, nh);
    ck_assert_msg(!memcmp(ch, cg, (size_t)G->n * 4),
                  "%s: the GPU's numbering differs", what);
    kr_graph *Dh, *Dg;
    ck_assert_int_eq(kr_graph_condense(gpu, G, ch, nh, &Dh), KR_OK);
    ck_assert_int_eq(kr_graph_condense_cuda(gpu, G, ch, nh, &Dg), KR_OK);
    same_rows(Dh, Dg, what);
    printf("%s: %d SCCs, %lld DAG edges: the GPU's numbering and "
           "condensation equal the host's\n",
           what, (int)nh, (long long)Dh->m);
    kr_graph_destroy(Dh);
    kr_graph_destroy(Dg);
    free(raw);
    free(ch);
    free(cg);
}

START_TEST(gpu_numbering_and_condensation)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_numbering_and_condensation");
    if (!gpu) return;
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 0; i < 4; i++) {
        printf("gpu_numbering_and_condensation: seed %llu\n",
               (unsigned long long)(seed + (uint64_t)i));
        kr_graph *G =
            planted_graph(gpu, 2000 + 30000 * i, 5 + 200 * i, seed + i);
        gpu_number_and_condense(gpu, G, "planted");
        kr_graph_destroy(G);
    }
    const char *specs[] = {"dag:1,0", "dag:200000,10"};
    for (int i = 0; i < 2; i++) {
        kr_graph *G;
        ck_assert_int_eq(kr_graph_generate(gpu, specs[i], &G), KR_OK);
        gpu_number_and_condense(gpu, G, specs[i]);
        kr_graph_destroy(G);
    }
    /* 10^7 levels: the host finishes after the GPU's passes */
    kr_graph *C = chain(gpu, 10000000, 1, 0);
    gpu_number_and_condense(gpu, C, "backward chain");
    kr_graph_destroy(C);
    kr_ctx_destroy(gpu);
}
END_TEST

/* KR_SCC_AUTO: Tarjan below the threshold, the GPU's steps above it. */
START_TEST(gpu_auto_choice)
{
    kr_ctx *gpu = kt_gpu_or_skip("gpu_auto_choice");
    if (!gpu) return;
    uint64_t seed = (uint64_t)time(NULL);
    printf("gpu_auto_choice: seed %llu\n", (unsigned long long)seed);
    kr_graph *small = planted_graph(gpu, 2000, 40, seed), *big;
    int32_t *comp = malloc((size_t)2000000 * 4), nc;
    kr_scc_info info;
    ck_assert_int_eq(
        kr_graph_scc_with(gpu, small, KR_SCC_AUTO, comp, &nc, &info), KR_OK);
    ck_assert_str_eq(info.method, "tarjan");
    char spec[64];
    snprintf(spec, sizeof spec, "dag:1000000,%d,%llu",
             (int)(KR_SCC_GPU_MIN_EDGES / 1000000 + 1),
             (unsigned long long)seed);
    ck_assert_int_eq(kr_graph_generate(gpu, spec, &big), KR_OK);
    ck_assert_int_ge(big->m, KR_SCC_GPU_MIN_EDGES);
    ck_assert_int_eq(kr_graph_scc_with(gpu, big, KR_SCC_AUTO, comp, &nc, &info),
                     KR_OK);
    ck_assert_str_eq(info.method, "fwbw-gpu");
    compare_with_tarjan(gpu, big, 0, spec);
    free(comp);
    kr_graph_destroy(small);
    kr_graph_destroy(big);
    kr_ctx_destroy(gpu);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scc");
    TCase *t = tcase_create("scc");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, fwbw_random_cyclic);
    tcase_add_test(t, fwbw_dags);
    tcase_add_test(t, fwbw_long_chain_and_cycle);
    tcase_add_test(t, fwbw_shared_graphs);
    tcase_add_test(t, fwbw_shared_matrices);
    tcase_add_test(t, fwbw_condensation);
    tcase_add_test(t, scc_choice_and_errors);
    tcase_add_test(t, numbering_finishes_from_any_level);
    tcase_add_test(t, fwbw_steps_same_on_any_thread_count);
    tcase_add_test(t, gpu_steps_match_cpu_steps);
    tcase_add_test(t, gpu_scc_equals_tarjan);
    tcase_add_test(t, gpu_numbering_and_condensation);
    tcase_add_test(t, gpu_auto_choice);
    suite_add_tcase(s, t);
    return kt_run(s);
}
