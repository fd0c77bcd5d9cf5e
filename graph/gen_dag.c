/* Random DAGs like the home-made ones of the GRAIL papers: "dag:N,DEG"
 * puts the vertices in a hidden random order and gives the vertex at
 * position p an out-degree uniform in 0..2*DEG (capped by the vertices
 * after it) with targets uniform among the later positions, so paths run
 * deep. Every vertex draws from its own seeded stream: the same graph for
 * any thread count. */
#include "core/error.h"
#include "graph/graph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct dag_spec {
    int64_t n, deg;
    uint64_t seed;
} dag_spec;

static int parse_int(const char **s, int64_t max, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(*s, &end, 10);
    if (end == *s || errno || x < 0 || x > max) return 0;
    *s = end;
    *v = x;
    return 1;
}

static kr_status parse_spec(kr_ctx *ctx, const char *spec, dag_spec *d)
{
    const char *s = spec;
    int64_t seed = 1;
    int ok = !strncmp(s, "dag:", 4);
    s += 4;
    ok = ok && parse_int(&s, INT32_MAX - 1, &d->n) && d->n >= 1 && *s++ == ',';
    ok = ok && parse_int(&s, 1000000, &d->deg);
    if (ok && *s == ',') {
        s++;
        ok = parse_int(&s, INT64_MAX, &seed);
    }
    if (!ok || *s || (double)d->n * (2.0 * (double)d->deg + 1) > 4e9)
        return kr_fail(ctx, KR_ERR_ARG,
                       "graph spec '%s': expected dag:N,DEG[,SEED] with "
                       "N >= 1, DEG >= 0 and N*(2*DEG+1) <= 4e9",
                       spec);
    d->seed = (uint64_t)seed;
    return KR_OK;
}

static uint64_t stream(const dag_spec *d, int64_t p)
{
    return kr_mix64(d->seed * 0x9e3779b97f4a7c15ull + (uint64_t)p + 1);
}

static int64_t draw_degree(const dag_spec *d, int64_t p, uint64_t *rng)
{
    *rng = kr_mix64(*rng);
    int64_t k = (int64_t)(*rng % (uint64_t)(2 * d->deg + 1));
    return k < d->n - 1 - p ? k : d->n - 1 - p;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Targets of position p into out (room for its drawn degree), sorted and
 * without repeats; returns how many. */
static int64_t draw_targets(const dag_spec *d, const int32_t *perm, int64_t p,
                            int32_t *out)
{
    uint64_t rng = stream(d, p);
    int64_t k = draw_degree(d, p, &rng);
    for (int64_t j = 0; j < k; j++) {
        rng = kr_mix64(rng);
        int64_t q = p + 1 + (int64_t)(rng % (uint64_t)(d->n - 1 - p));
        out[j] = perm[q];
    }
    qsort(out, (size_t)k, sizeof *out, cmp_i32);
    int64_t u = 0;
    for (int64_t j = 0; j < k; j++)
        if (u == 0 || out[j] != out[u - 1]) out[u++] = out[j];
    return u;
}

static void shuffle(int32_t *perm, int64_t n, uint64_t seed)
{
    uint64_t rng = kr_mix64(seed ^ 0x5bd1e995ull);
    for (int64_t i = 0; i < n; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = n - 1; i > 0; i--) {
        rng = kr_mix64(rng);
        int64_t j = (int64_t)(rng % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Slots by drawn degree, filled in parallel, then closed up where repeats
 * were dropped. */
static kr_status build(kr_ctx *ctx, const dag_spec *d, const int32_t *perm,
                       int64_t *kept, kr_graph **G)
{
    int32_t n = (int32_t)d->n;
    int64_t *start = malloc(((size_t)n + 1) * sizeof *start);
    if (!start) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    start[0] = 0;
    for (int64_t p = 0; p < n; p++) {
        uint64_t rng = stream(d, p);
        start[p + 1] = start[p] + draw_degree(d, p, &rng);
    }
    kr_graph *g;
    kr_status st = kr_graph_alloc(ctx, n, start[n], &g);
    if (st != KR_OK) {
        free(start);
        return st;
    }
    int nt = kr_ctx_threads(ctx);
#pragma omp parallel for schedule(dynamic, 1024) num_threads(nt)
    for (int64_t p = 0; p < n; p++)
        kept[p] = draw_targets(d, perm, p, g->adj + start[p]);
    /* close up in position order, then point each vertex at its edges */
    int64_t m = 0;
    for (int64_t p = 0; p < n; p++) {
        memmove(g->adj + m, g->adj + start[p],
                (size_t)kept[p] * sizeof(int32_t));
        start[p] = m;
        m += kept[p];
    }
    kr_graph *h;
    st = kr_graph_alloc(ctx, n, m, &h);
    if (st == KR_OK) {
        for (int64_t p = 0; p < n; p++)
            h->off[perm[p] + 1] = kept[p];
        for (int32_t v = 0; v < n; v++)
            h->off[v + 1] += h->off[v];
        for (int64_t p = 0; p < n; p++)
            memcpy(h->adj + h->off[perm[p]], g->adj + start[p],
                   (size_t)kept[p] * sizeof(int32_t));
        *G = h;
    }
    kr_graph_destroy(g);
    free(start);
    return st;
}

kr_status kr_graph_generate(kr_ctx *ctx, const char *spec, kr_graph **G)
{
    *G = NULL;
    dag_spec d;
    KR_TRY(parse_spec(ctx, spec ? spec : "", &d));
    int32_t *perm = malloc((size_t)d.n * sizeof *perm);
    int64_t *kept = malloc((size_t)d.n * sizeof *kept);
    kr_status st = KR_OK;
    if (!perm || !kept) st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    if (st == KR_OK) {
        shuffle(perm, d.n, d.seed);
        st = build(ctx, &d, perm, kept, G);
    }
    free(perm);
    free(kept);
    return st;
}
