/* krylov reach G [--queries FILE | --random Q] [--bench]: builds the GRAIL
 * index of a graph (a matrix's, a .gra file's, a generated DAG's, or the
 * quotient graph of a matrix's block partition) and answers "does u reach
 * v", one 0/1 line per query; --bench times labeling and a query batch on
 * one CPU core, all cores and the GPU instead. */
#include "commands.h"
#include "graph_cli.h"
#include "krylov.h"
#include "options.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reach_opts {
    const char *gen, *queries, *blocks, *device, *scc, *gpu_labeling,
        *gpu_queries;
    int random, labels, seed, one_based, bench, block_size, threads, help;
} reach_opts;

#define OFF(field) offsetof(reach_opts, field)

/* in the order of their kr_reach_options.gpu_variants flags (0 to 3) */
static const char *const *gpu_labeling_names(void)
{
    static const char *const names[] = {"queue", "status-levels", "degree-bins",
                                        "both", NULL};
    return names;
}

static const char *const *gpu_query_names(void)
{
    static const char *const names[] = {"bits", "warp", NULL};
    return names;
}

static unsigned gpu_variants_of(const char *name)
{
    const char *const *names = gpu_labeling_names();
    for (unsigned i = 0; names[i]; i++)
        if (!strcmp(name, names[i])) return i;
    return 0;
}

static const cli_opt reach_table[] = {
    {"--gen", NULL, CLI_STR, OFF(gen), 0, 0, NULL, "SPEC",
     "generate the graph instead: dag:N,DEG[,SEED] (N vertices, average "
     "out-degree DEG, edges to random later vertices of a hidden order)"},
    {"--queries", NULL, CLI_STR, OFF(queries), 0, 0, NULL, "FILE",
     "one query 'u v' per line (does u reach v; a third column is ignored, "
     "blank and '#' lines skipped), 0-based vertex numbers"},
    {"--one-based", NULL, CLI_FLAG, OFF(one_based), 0, 0, NULL, NULL,
     "the query file numbers vertices from 1, as Matrix Market rows"},
    {"--random", NULL, CLI_INT, OFF(random), 1, 100000000, NULL, "Q",
     "Q uniformly random queries instead; each output line is then 'u v "
     "answer' (0-based)"},
    {"--seed", NULL, CLI_INT, OFF(seed), 0, 2147483647, NULL, "S",
     "seed of --random and of the labels' random traversals"},
    {"--labels", NULL, CLI_INT, OFF(labels), 1, 16, NULL, "d",
     "interval labels per vertex"},
    {"--blocks", NULL, CLI_STR, OFF(blocks), 0, 0, NULL, "FILE",
     "matrix input: query blocks, not unknowns: the quotient graph of these "
     "block sizes (Matrix Market array nb x 1, integers 1..32 summing to n); "
     "block numbers as vertex numbers"},
    {"--block-size", NULL, CLI_INT, OFF(block_size), 0, 32, NULL, "K",
     "matrix input: the same with bjacobi's supervariable blocks of at most K "
     "rows (0: unknowns, no blocks)"},
    {"--device", NULL, CLI_CHOICE, OFF(device), 0, 0, cli_graph_device_names,
     "D",
     "where the index is built and the batch answered (cuda: GPU labeling "
     "and queries, after a host pass that answers what the labels decide)"},
    {"--scc", NULL, CLI_CHOICE, OFF(scc), 0, 0, cli_scc_names, "M",
     "how the strongly connected components are found: tarjan (on the "
     "host), fwbw (forward-backward with trimming where --device runs: "
     "OpenMP or CUDA kernels; slower than tarjan on deep graphs), auto "
     "(fwbw on a GPU from 2^22 edges, a provisional threshold; else "
     "tarjan)"},
    {"--gpu-labeling", NULL, CLI_CHOICE, OFF(gpu_labeling), 0, 0,
     gpu_labeling_names, "V",
     "GPU labeling variant (the others answer alike; their speed is not "
     "measured yet): queue (depth levels from a "
     "queue, a warp per vertex), status-levels (levels from status arrays, "
     "every pass over all vertices), degree-bins (a thread, warp or block per "
     "vertex by out-degree), or both"},
    {"--gpu-queries", NULL, CLI_CHOICE, OFF(gpu_queries), 0, 0, gpu_query_names,
     "Q",
     "GPU search of the queries the labels leave open: warp (a warp per "
     "query, the host index's pruned search) or bits (64 queries per word "
     "of bit-parallel frontiers, slower on deep graphs)"},
    {"--threads", NULL, CLI_INT, OFF(threads), 0, 1024, NULL, "T",
     "CPU threads, 0 = the OpenMP default"},
    {"--bench", NULL, CLI_FLAG, OFF(bench), 0, 0, NULL, NULL,
     "print timings instead of answers: SCCs and labeling, and the query "
     "batch (100000 random queries unless --queries or --random), on one "
     "CPU core, on all cores and on the GPU, the index memory and the share "
     "the labels decided"},
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec reach_spec = {"reach", reach_table, 1, OFF(help)};

static void defaults(reach_opts *o)
{
    memset(o, 0, sizeof *o);
    o->labels = 5;
    o->seed = 1;
    o->device = "auto";
    o->scc = "tarjan";
    o->gpu_labeling = "queue";
    o->gpu_queries = "warp";
}

static void print_help(void)
{
    reach_opts d;
    defaults(&d);
    printf("usage: krylov reach G [--queries FILE | --random Q] [options]\n"
           "       krylov reach --gen dag:N,DEG [--random Q] [options]\n\n"
           "Answers reachability queries on a directed graph with the GRAIL "
           "index (Yildirim,\nChaoji, Zaki 2010): strongly connected "
           "components condensed into a DAG, d\nrandomized interval labels "
           "per vertex, then a label-pruned search. G is a\nMatrix Market "
           "matrix (edge j -> i for each a_ij != 0, i != j: x_i depends on "
           "x_j)\nor a GRAIL .gra / .gra.gz file. Prints one line per query, "
           "in order: 1 when u\nreaches v (every vertex reaches itself), "
           "else 0.\n\noptions:\n");
    cli_print_options(stdout, reach_table, &d);
    printf("\n");
    cli_print_exit_codes(stdout);
    printf("\nexamples:\n"
           "  krylov reach citeseer.scc.gra.gz --queries q.txt\n"
           "  krylov reach A.mtx --block-size 32 --random 10   # block "
           "dependencies\n"
           "  krylov reach --gen dag:1000000,50 --bench\n");
}

/* ------------------------------------------------------------- input */

typedef struct reach_run {
    const reach_opts *o;
    const char *name;
    kr_ctx *ctx;
    kr_graph *G;
    int64_t q;
    int32_t *pairs;
    int random;
} reach_run;

static int load_matrix_graph(reach_run *r)
{
    kr_csr A = {0};
    kr_status st = kr_read_mtx(r->ctx, r->name, &A);
    if (st != KR_OK) return cli_lib_error(r->ctx, st, r->name);
    int rc = 0;
    if (r->o->blocks || r->o->block_size) {
        int32_t nb, *starts = NULL;
        rc = cli_partition(r->ctx, &A, r->o->blocks,
                           r->o->block_size ? r->o->block_size : 32,
                           KR_BLOCKING_SUPERVARIABLE, &nb, &starts);
        if (!rc) st = kr_graph_quotient(r->ctx, &A, nb, starts, &r->G);
        free(starts);
    } else {
        st = kr_graph_from_csr(r->ctx, &A, &r->G);
    }
    kr_csr_free(&A);
    if (!rc && st != KR_OK) rc = cli_lib_error(r->ctx, st, r->name);
    return rc;
}

static int load_graph(reach_run *r)
{
    kr_status st;
    if (r->o->gen) {
        st = kr_graph_generate(r->ctx, r->o->gen, &r->G);
        if (st == KR_ERR_ARG)
            return cli_usage_error("reach", "%s", kr_ctx_error(r->ctx));
    } else if (cli_is_gra(r->name)) {
        if (r->o->blocks || r->o->block_size)
            return cli_usage_error("reach", "--blocks and --block-size need "
                                            "a matrix, not a .gra graph");
        st = kr_graph_read_gra(r->ctx, r->name, &r->G);
    } else {
        return load_matrix_graph(r);
    }
    return st == KR_OK ? 0 : cli_lib_error(r->ctx, st, r->name);
}

static int add_pair(reach_run *r, int64_t *cap, int64_t u, int64_t v)
{
    if (r->q == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        int32_t *p = realloc(r->pairs, (size_t)*cap * 2 * sizeof *p);
        if (!p) {
            cli_error("out of memory for %lld queries", (long long)*cap);
            return CLI_EXIT_DEVICE;
        }
        r->pairs = p;
    }
    r->pairs[2 * r->q] = (int32_t)u;
    r->pairs[2 * r->q++ + 1] = (int32_t)v;
    return 0;
}

/* "u v" or "u v x": the vertices, shifted to 0-based. */
static int parse_query(reach_run *r, long number, const char *line, int64_t *u,
                       int64_t *v)
{
    char *end;
    long long a = strtoll(line, &end, 10), b = 0;
    int ok = end != line;
    if (ok) {
        const char *p = end;
        b = strtoll(p, &end, 10);
        ok = end != p && (!*end || isspace((unsigned char)*end));
    }
    if (ok && *end) {
        const char *p = end;
        (void)strtoll(p, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        ok = !*end;
    }
    int32_t n = kr_graph_vertices(r->G), base = r->o->one_based;
    if (!ok) {
        cli_error("%s:%ld: expected 'u v' (two vertex numbers)", r->o->queries,
                  number);
        return CLI_EXIT_INPUT;
    }
    if (a < base || b < base || a >= n + base || b >= n + base) {
        cli_error("%s:%ld: vertex %lld is not in %d..%d", r->o->queries, number,
                  a < base || a >= n + base ? a : b, base, n - 1 + base);
        return CLI_EXIT_INPUT;
    }
    *u = a - base;
    *v = b - base;
    return 0;
}

/* The state of reading a queries file line by line. */
typedef struct query_reader {
    reach_run *r;
    int64_t cap;
    int rc; /* an exit code once a line is refused */
} query_reader;

static int query_line(void *user, const char *line, long number)
{
    query_reader *qr = user;
    int64_t u, v;
    while (isspace((unsigned char)*line))
        line++;
    if (!*line || *line == '#') return 0;
    qr->rc = parse_query(qr->r, number, line, &u, &v);
    if (!qr->rc) qr->rc = add_pair(qr->r, &qr->cap, u, v);
    return qr->rc;
}

static int read_queries(reach_run *r)
{
    query_reader qr = {r, 0, 0};
    kr_status st = kr_read_lines(r->ctx, r->o->queries, query_line, &qr);
    if (st != KR_OK) return cli_lib_error(r->ctx, st, r->o->queries);
    return qr.rc;
}

static int random_queries(reach_run *r, int64_t q)
{
    uint64_t n = (uint64_t)kr_graph_vertices(r->G), s = (uint64_t)r->o->seed;
    r->pairs = malloc(((size_t)q + 1) * 2 * sizeof *r->pairs);
    if (!r->pairs) {
        cli_error("out of memory for %lld queries", (long long)q);
        return CLI_EXIT_DEVICE;
    }
    kr_graph_random_pairs((int32_t)n, q, s, r->pairs);
    r->q = n ? q : 0;
    r->random = 1;
    return 0;
}

static int load_queries(reach_run *r)
{
    if (r->o->queries) return read_queries(r);
    if (r->o->random) return random_queries(r, r->o->random);
    if (r->o->bench) return random_queries(r, 100000);
    return 0;
}

/* ------------------------------------------------------------ answers */

static void reach_options(const reach_opts *o, kr_reach_options *ro)
{
    kr_reach_options_default(ro);
    ro->labels = o->labels;
    ro->seed = (uint64_t)o->seed;
    ro->scc = cli_scc_of(o->scc);
    ro->gpu_variants = gpu_variants_of(o->gpu_labeling);
    if (!strcmp(o->gpu_queries, "bits"))
        ro->gpu_variants |= KR_REACH_GPU_BIT_QUERIES;
}

static int answer(reach_run *r)
{
    kr_reach_options ro;
    reach_options(r->o, &ro);
    kr_reach *R = NULL;
    unsigned char *ans = malloc((size_t)r->q + 1);
    kr_status st = ans ? kr_reach_create(r->ctx, r->G, &ro, &R) : KR_ERR_NOMEM;
    if (st == KR_OK)
        st = kr_reach_query_batch(r->ctx, R, r->q, r->pairs, ans, NULL);
    for (int64_t k = 0; st == KR_OK && k < r->q; k++) {
        if (r->random)
            printf("%d %d %d\n", (int)r->pairs[2 * k], (int)r->pairs[2 * k + 1],
                   ans[k]);
        else
            printf("%d\n", ans[k]);
    }
    kr_reach_destroy(R);
    free(ans);
    return st == KR_OK ? 0 : cli_lib_error(r->ctx, st, NULL);
}

static int run(reach_run *r)
{
    int rc = load_graph(r);
    if (!rc) rc = load_queries(r);
    kr_reach_options ro;
    reach_options(r->o, &ro);
    if (!rc && r->o->bench)
        rc = cli_reach_bench(r->G, r->o->gen ? r->o->gen : r->name, r->pairs,
                             r->q, &ro, r->o->threads);
    else if (!rc)
        rc = answer(r);
    return rc;
}

static int check_args(const reach_opts *o, int npos)
{
    if (npos + (o->gen != NULL) != 1)
        return cli_usage_error("reach", "give one graph: G or --gen SPEC");
    if (o->queries && o->random)
        return cli_usage_error("reach", "--queries and --random exclude each "
                                        "other");
    if (!o->queries && !o->random && !o->bench)
        return cli_usage_error("reach", "no queries: give --queries FILE, "
                                        "--random Q or --bench");
    if (o->gen && (o->blocks || o->block_size))
        return cli_usage_error("reach", "--blocks and --block-size need a "
                                        "matrix");
    return 0;
}

int cli_cmd_reach(int argc, char **argv)
{
    reach_opts o;
    defaults(&o);
    const char *pos[1];
    int npos;
    int rc = cli_parse(&reach_spec, argc, argv, &o, pos, &npos);
    if (rc == CLI_EXIT_HELP) {
        print_help();
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if ((rc = check_args(&o, npos))) return rc;
    reach_run r = {.o = &o, .name = npos ? pos[0] : NULL};
    kr_device dev = o.bench ? KR_DEVICE_CPU : cli_graph_device(o.device);
    kr_status st = kr_ctx_create(&r.ctx, dev);
    if (!r.ctx) {
        cli_error("out of memory creating the context");
        return CLI_EXIT_DEVICE;
    }
    if (st == KR_OK) st = kr_ctx_set_threads(r.ctx, o.threads);
    if (st != KR_OK)
        rc = cli_lib_error(r.ctx, st, NULL);
    else
        rc = run(&r);
    kr_graph_destroy(r.G);
    free(r.pairs);
    kr_ctx_destroy(r.ctx);
    return rc;
}
