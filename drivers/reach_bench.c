/* krylov reach --bench: the GRAIL index of one graph built and queried on
 * one CPU core, on all cores and on the GPU, in the same run, with the
 * answers of every configuration checked against the first. */
#include "graph_cli.h"
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_QUERY_RUNS 3

typedef struct bench_row {
    char what[96];
    double scc_s, label_s, query_s;
    kr_scc_info scc;
    int64_t by_labels;
    size_t bytes, device_bytes;
    int ok;
    char why[160];
} bench_row;

typedef struct bench_setup {
    kr_graph *G;
    const int32_t *pairs;
    int64_t q;
    kr_reach_options ro;
    unsigned char *first, *ans; /* answers of the first row, and this one's */
    int have_first;
} bench_setup;

/* Builds the index on ctx, answers the batch BENCH_QUERY_RUNS times (the
 * fastest counts) and compares the answers with the first row's. */
static int bench_one(kr_ctx *ctx, bench_setup *b, bench_row *row)
{
    kr_reach *R = NULL;
    kr_status st = kr_reach_create(ctx, b->G, &b->ro, &R);
    row->query_s = 1e30;
    for (int k = 0; st == KR_OK && k < BENCH_QUERY_RUNS; k++) {
        double t0 = kr_wtime();
        st = kr_reach_query_batch(ctx, R, b->q, b->pairs, b->ans,
                                  &row->by_labels);
        double t = kr_wtime() - t0;
        if (t < row->query_s) row->query_s = t;
    }
    if (st != KR_OK) {
        snprintf(row->why, sizeof row->why, "%s", kr_ctx_error(ctx));
        kr_reach_destroy(R);
        return 0;
    }
    kr_reach_info info;
    kr_reach_get_info(R, &info);
    row->scc_s = info.scc_seconds;
    row->scc = info.scc;
    row->label_s = info.label_seconds;
    row->bytes = info.bytes;
    row->device_bytes = info.device_bytes;
    row->ok = 1;
    kr_reach_destroy(R);
    if (!b->have_first) {
        memcpy(b->first, b->ans, (size_t)b->q);
        b->have_first = 1;
    } else if (b->q && memcmp(b->first, b->ans, (size_t)b->q)) {
        cli_error("%s: the answers differ from the first configuration's",
                  row->what);
        return CLI_EXIT_DEVICE;
    }
    return 0;
}

/* A small index built and queried once before the timed one, so that the
 * GPU's timings leave out loading its kernels (done on first launch). */
static void warm_up(kr_ctx *ctx)
{
    kr_graph *G = NULL;
    kr_reach *R = NULL;
    int32_t pairs[2000];
    unsigned char ans[1000];
    for (int k = 0; k < 2000; k++)
        pairs[k] = (k * 7919) % 2000;
    if (kr_graph_generate(ctx, "dag:2000,4", &G) == KR_OK &&
        kr_reach_create(ctx, G, NULL, &R) == KR_OK)
        kr_reach_query_batch(ctx, R, 1000, pairs, ans, NULL);
    kr_reach_destroy(R);
    kr_graph_destroy(G);
}

/* One configuration: a context on the device with the threads. */
static int bench_config(bench_setup *b, kr_device dev, int threads,
                        bench_row *row)
{
    kr_ctx *ctx = NULL;
    kr_status st = kr_ctx_create(&ctx, dev);
    if (st == KR_OK) st = kr_ctx_set_threads(ctx, threads);
    int rc = 0;
    if (st == KR_OK) {
        snprintf(row->what, sizeof row->what, "%s", kr_ctx_device_name(ctx));
        if (dev == KR_DEVICE_CUDA) warm_up(ctx);
        rc = bench_one(ctx, b, row);
    } else {
        snprintf(row->what, sizeof row->what, "%s",
                 dev == KR_DEVICE_CUDA ? "gpu" : "cpu");
        snprintf(row->why, sizeof row->why, "%s",
                 ctx ? kr_ctx_error(ctx) : "out of memory");
    }
    kr_ctx_destroy(ctx);
    return rc;
}

static int64_t count_reachable(const bench_setup *b)
{
    int64_t r = 0;
    for (int64_t k = 0; k < b->q; k++)
        r += b->first[k];
    return r;
}

static void print_table(const bench_setup *b, const char *name,
                        const bench_row *rows, int nrows)
{
    kr_reach_options ro = b->ro;
    printf("graph: %s: %d vertices, %lld edges\n", name,
           (int)kr_graph_vertices(b->G), (long long)kr_graph_edges(b->G));
    printf("queries: %lld, %lld reachable; labels d = %d\n", (long long)b->q,
           (long long)count_reachable(b), ro.labels);
    printf("(GPU: after a warm-up index on dag:2000,4, so that kernel loading "
           "is not timed; its labeling includes the DAG's upload and the "
           "labels' download; its queries the host pre-filter, on all "
           "threads; decided by labels: on the host)\n\n");
    printf("| device | SCCs s | SCCs by | SCC + condense s | labeling s | "
           "queries s (best of %d) | us/query | decided by labels | index "
           "MiB (host / GPU) |\n",
           BENCH_QUERY_RUNS);
    printf("|---|---:|---|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = rows + i;
        if (!r->ok) {
            printf("| %s | not run: %s | | | | | | | |\n", r->what, r->why);
            continue;
        }
        char by[128];
        cli_scc_describe(&r->scc, by, sizeof by);
        printf("| %s | %.4f | %s | %.4f | %.4f | %.5f | %.3f | %.1f%% | %.1f / "
               "%.1f |\n",
               r->what, r->scc.seconds, by, r->scc_s, r->label_s, r->query_s,
               b->q ? r->query_s / (double)b->q * 1e6 : 0.0,
               b->q ? 100.0 * (double)r->by_labels / (double)b->q : 0.0,
               (double)r->bytes / 1048576.0,
               (double)r->device_bytes / 1048576.0);
    }
}

int cli_reach_bench(kr_graph *G, const char *name, const int32_t *pairs,
                    int64_t q, const kr_reach_options *ro, int threads)
{
    bench_setup b = {
        G, pairs, q, *ro, malloc((size_t)q + 1), malloc((size_t)q + 1), 0};
    if (!b.first || !b.ans) {
        free(b.first);
        free(b.ans);
        cli_error("out of memory");
        return CLI_EXIT_DEVICE;
    }
    bench_row rows[3] = {{.ok = 0}};
    int rc = bench_config(&b, KR_DEVICE_CPU, 1, &rows[0]);
    if (!rc) rc = bench_config(&b, KR_DEVICE_CPU, threads, &rows[1]);
    if (!rc) rc = bench_config(&b, KR_DEVICE_CUDA, threads, &rows[2]);
    if (!rc && !rows[0].ok) {
        cli_error("%s", rows[0].why);
        rc = CLI_EXIT_DEVICE;
    }
    if (!rc) print_table(&b, name, rows, 3);
    free(b.first);
    free(b.ans);
    return rc;
}
