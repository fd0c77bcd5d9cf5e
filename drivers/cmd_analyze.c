/* krylov analyze A.mtx: one report on a matrix's structure: sizes, row
 * lengths, the diagonal, symmetry, diagonal dominance, the strongly
 * connected components of its graph, the dependencies between the blocks
 * bjacobi would use, and the format, preconditioner and method krylov
 * recommends, each with its reason. Text, or one JSON object. */
#include "commands.h"
#include "features_json.h"
#include "graph_cli.h"
#include "json.h"
#include "krylov.h"
#include "options.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct analyze_opts {
    const char *device, *blocks, *blocking, *scc;
    int block_size, json, help;
} analyze_opts;

#define OFF(field) offsetof(analyze_opts, field)

static const cli_opt analyze_table[] = {
    {"--json", NULL, CLI_FLAG, OFF(json), 0, 0, NULL, NULL,
     "one JSON object instead of the text report"},
    {"--device", NULL, CLI_CHOICE, OFF(device), 0, 0, cli_graph_device_names,
     "D",
     "whose `auto` format pick to report: the CPU's (csr), the GPU rules', "
     "or auto for both (the analysis itself runs on the CPU; no GPU is "
     "needed)"},
    {"--block-size", NULL, CLI_INT, OFF(block_size), 1, 32, NULL, "K",
     "largest block of the partition analysed (bjacobi's)"},
    {"--blocking", NULL, CLI_CHOICE, OFF(blocking), 0, 0, cli_blocking_names,
     "B", "how the partition is cut, as bjacobi --blocking"},
    {"--scc", NULL, CLI_CHOICE, OFF(scc), 0, 0, cli_scc_names, "M",
     "how the strongly connected components are found, on the CPU: tarjan, "
     "or fwbw (forward-backward with trimming, OpenMP); auto is tarjan "
     "there"},
    {"--blocks", NULL, CLI_STR, OFF(blocks), 0, 0, NULL, "FILE",
     "analyse these block sizes instead (Matrix Market array nb x 1, "
     "integers 1..32 summing to n)"},
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec analyze_spec = {"analyze", analyze_table, 1, OFF(help)};

static void defaults(analyze_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->blocking = "supervariable";
    o->scc = "tarjan";
    o->block_size = 32;
}

static void print_help(void)
{
    analyze_opts d;
    defaults(&d);
    printf("usage: krylov analyze A.mtx [--json] [--device D]\n\n"
           "Reports a square matrix's structure in one pass: size, nnz, row "
           "lengths, empty\nrows, zero or missing diagonal entries (the first "
           "rows, 1-based), pattern and\nnumerical symmetry, diagonal "
           "dominance, the strongly connected components of\nits graph (edge "
           "j -> i for a_ij != 0), reducibility, weak components, the\n"
           "block partition bjacobi would use and the dependencies between "
           "its blocks\n(block-triangular or not, SCC groups of blocks, "
           "levels of a block sweep), the\nformat `auto` picks, and the "
           "preconditioner and method krylov recommends, each\nwith its "
           "reason.\n\noptions:\n");
    cli_print_options(stdout, analyze_table, &d);
    printf("\n");
    cli_print_exit_codes(stdout);
    printf("\nexample:\n  krylov analyze sherman3.mtx --json\n");
}

/* ------------------------------------------------------------- numbers */

#define FIRST_ROWS 5

typedef struct analysis {
    kr_row_stats rows;
    int32_t bad_diag, first_bad[FIRST_ROWS]; /* zero or missing a_ii */
    int positive_diag;                       /* every a_ii > 0       */
    int64_t offdiag, mirrored, mirrored_equal;
    int32_t dominant; /* rows with |a_ii| >= sum_{j != i} |a_ij| */
    int32_t sccs, largest_scc, weak;
    kr_scc_info scc;
    int32_t nb;
    kr_block_analysis blocks;
    const char *gpu_format; /* what "auto" picks on a GPU, and why */
    char gpu_why[320];
    kr_spmm_features spmm; /* for SpMM's kernels and row orders */
    char precond[160], method[160];
    double seconds;
} analysis;

/* Entry (i, j)'s value when row i holds column j. */
static int find_entry(const kr_csr *A, int32_t i, int32_t j, double *v)
{
    int32_t lo = A->rowptr[i], hi = A->rowptr[i + 1] - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (A->colind[mid] == j) {
            *v = A->val[mid];
            return 1;
        }
        if (A->colind[mid] < j)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

static void row_facts(const kr_csr *A, int32_t i, analysis *a)
{
    double diag = 0.0, off = 0.0, mirror;
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
        int32_t j = A->colind[k];
        if (j == i) {
            diag = A->val[k];
            continue;
        }
        off += fabs(A->val[k]);
        a->offdiag++;
        if (find_entry(A, j, i, &mirror)) {
            a->mirrored++;
            a->mirrored_equal += mirror == A->val[k];
        }
    }
    if (diag == 0.0 && a->bad_diag++ < FIRST_ROWS)
        a->first_bad[a->bad_diag - 1] = i + 1;
    if (!(diag > 0.0)) a->positive_diag = 0;
    a->dominant += fabs(diag) >= off;
}

static kr_status graph_facts(kr_ctx *ctx, const kr_csr *A, kr_scc_method method,
                             analysis *a)
{
    kr_graph *G;
    kr_status st = kr_graph_from_csr(ctx, A, &G);
    if (st != KR_OK) return st;
    int32_t *comp = malloc(((size_t)A->nrows + 1) * sizeof *comp);
    int32_t *size = calloc((size_t)A->nrows + 1, sizeof *size);
    if (!comp || !size) st = KR_ERR_NOMEM;
    if (st == KR_OK)
        st = kr_graph_scc_with(ctx, G, method, comp, &a->sccs, &a->scc);
    for (int32_t v = 0; st == KR_OK && v < A->nrows; v++)
        if (++size[comp[v]] > a->largest_scc) a->largest_scc = size[comp[v]];
    if (st == KR_OK) st = kr_graph_weak_components(ctx, G, &a->weak);
    free(comp);
    free(size);
    kr_graph_destroy(G);
    return st;
}

static void recommend(const kr_csr *A, analysis *a)
{
    int symmetric = a->mirrored_equal == a->offdiag;
    if (symmetric && a->positive_diag)
        snprintf(a->method, sizeof a->method,
                 "cg (symmetric with positive diagonal)");
    else
        snprintf(a->method, sizeof a->method,
                 "idr (%s; gmres when IDR(4) "
                 "stagnates)",
                 symmetric ? "symmetric, but a diagonal entry "
                             "is not positive: not SPD"
                           : "nonsymmetric");
    double mean_block = a->nb ? (double)A->nrows / a->nb : 0.0;
    if (a->bad_diag)
        snprintf(a->precond, sizeof a->precond,
                 "bjacobi (zero diagonal in %d rows: bjacobi, not jacobi)",
                 (int)a->bad_diag);
    else if (mean_block >= 2.0)
        snprintf(a->precond, sizeof a->precond,
                 "bjacobi (diagonal blocks of %.1f rows on average couple "
                 "unknowns jacobi would treat alone)",
                 mean_block);
    else
        snprintf(a->precond, sizeof a->precond,
                 "jacobi (nonzero diagonal; blocks of %.1f rows on average "
                 "add little)",
                 mean_block);
}

static int analyze(kr_ctx *ctx, const kr_csr *A, const analyze_opts *o,
                   analysis *a)
{
    double t0 = kr_wtime();
    kr_csr_row_stats(A, &a->rows);
    a->positive_diag = 1;
    for (int32_t i = 0; i < A->nrows; i++)
        row_facts(A, i, a);
    kr_status st = graph_facts(ctx, A, cli_scc_of(o->scc), a);
    if (st != KR_OK) return cli_lib_error(ctx, st, NULL);
    int32_t *starts = NULL;
    int rc = cli_partition(ctx, A, o->blocks, o->block_size,
                           cli_blocking_of(o->blocking), &a->nb, &starts);
    if (!rc) st = kr_block_analyze(ctx, A, a->nb, starts, &a->blocks);
    free(starts);
    if (!rc && st != KR_OK) rc = cli_lib_error(ctx, st, NULL);
    if (!rc)
        kr_format_auto_gpu(ctx, A, &a->gpu_format, a->gpu_why,
                           sizeof a->gpu_why);
    if (!rc) st = kr_csr_spmm_features(ctx, A, &a->spmm);
    if (!rc && st != KR_OK) rc = cli_lib_error(ctx, st, NULL);
    if (!rc) recommend(A, a);
    a->seconds = kr_wtime() - t0;
    return rc;
}

/* ------------------------------------------------------------- report */

static double pct(int64_t part, int64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 100.0;
}

static void text_diagonal(const analysis *a)
{
    if (!a->bad_diag) {
        printf("diagonal:     no zero or missing entry%s\n",
               a->positive_diag ? ", all positive" : "");
        return;
    }
    printf("diagonal:     %d rows with a zero or missing entry (rows",
           (int)a->bad_diag);
    for (int k = 0; k < a->bad_diag && k < FIRST_ROWS; k++)
        printf("%s %d", k ? "," : "", (int)a->first_bad[k]);
    printf("%s)\n", a->bad_diag > FIRST_ROWS ? ", ..." : "");
}

static void text_blocks(const analyze_opts *o, const analysis *a)
{
    const kr_block_analysis *b = &a->blocks;
    printf("blocks:       %d (%s, at most %d rows)\n", (int)b->nblocks,
           o->blocks ? o->blocks : o->blocking, o->block_size);
    printf("  dependencies %lld between blocks; %.1f%% of nonzeros inside "
           "blocks\n",
           (long long)b->dependencies, pct(b->nnz_inside, b->nnz));
    printf("  %s: %d block groups (SCCs), the largest of %d blocks, %d "
           "with cycles\n",
           b->block_triangular ? "block-triangular (block forward "
                                 "substitution in topological order is "
                                 "exact)"
                               : "not block-triangular",
           (int)b->groups, (int)b->largest_group, (int)b->cyclic_groups);
    printf("  levels of a block sweep: %d, widest %d groups; %d independent "
           "components\n",
           (int)b->depth, (int)b->max_width, (int)b->weak_components);
}

static void print_text(const char *name, const kr_csr *A, const analyze_opts *o,
                       const analysis *a)
{
    printf("matrix:       %s: %d x %d, %d nonzeros\n", name, (int)A->nrows,
           (int)A->ncols, (int)A->nnz);
    printf("row lengths:  min %d, mean %.2f, max %d, std %.2f; %d empty "
           "rows\n",
           (int)a->rows.min, a->rows.mean, (int)a->rows.max, a->rows.stddev,
           (int)a->rows.empty_rows);
    text_diagonal(a);
    printf("symmetry:     pattern %.1f%% of off-diagonal entries mirrored; "
           "numerically %s (%.1f%% equal to their mirror)\n",
           pct(a->mirrored, a->offdiag),
           a->mirrored_equal == a->offdiag ? "symmetric" : "nonsymmetric",
           pct(a->mirrored_equal, a->offdiag));
    printf("dominance:    %.1f%% of rows diagonally dominant\n",
           pct(a->dominant, A->nrows));
    printf("graph:        %d strongly connected components, the largest of "
           "%d rows; %s; %d weak components\n",
           (int)a->sccs, (int)a->largest_scc,
           a->sccs > 1 ? "reducible" : "irreducible", (int)a->weak);
    char by[128];
    cli_scc_describe(&a->scc, by, sizeof by);
    printf("sccs by:      %s, %.2f ms\n", by, a->scc.seconds * 1e3);
    text_blocks(o, a);
    if (strcmp(o->device, "cuda"))
        printf("format:       auto on the CPU: csr (the other formats are "
               "reference kernels there)\n");
    if (strcmp(o->device, "cpu"))
        printf("format:       auto on a GPU: %s (%s)\n", a->gpu_format,
               a->gpu_why);
    printf("spmm:         warp imbalance mean %.2f, max %.2f; 32-column "
           "blocks per row mean %.2f, per warp mean %.1f; neighbour rows "
           "differ in %.2f blocks (mean)\n",
           a->spmm.warp_imbalance.mean, a->spmm.warp_imbalance.max,
           a->spmm.row_blocks.mean, a->spmm.warp_blocks.mean,
           a->spmm.neighbour_distance.mean);
    printf("precond:      %s\n", a->precond);
    printf("method:       %s\n", a->method);
    printf("analysis:     %.1f ms\n", a->seconds * 1e3);
}

static void json_blocks(cli_json *j, const analysis *a)
{
    const kr_block_analysis *b = &a->blocks;
    cli_json_open(j, "blocks");
    cli_json_int(j, "count", b->nblocks);
    cli_json_int(j, "dependencies", b->dependencies);
    cli_json_bool(j, "block_triangular", b->block_triangular);
    cli_json_int(j, "groups", b->groups);
    cli_json_int(j, "largest_group", b->largest_group);
    cli_json_int(j, "cyclic_groups", b->cyclic_groups);
    cli_json_int(j, "depth", b->depth);
    cli_json_int(j, "max_level_width", b->max_width);
    cli_json_int(j, "weak_components", b->weak_components);
    cli_json_num(j, "nnz_inside_share", pct(b->nnz_inside, b->nnz) / 100.0);
    cli_json_close(j);
}

static void print_json(const char *name, const kr_csr *A, const analyze_opts *o,
                       const analysis *a)
{
    cli_json j;
    cli_json_begin(&j, stdout);
    cli_json_str(&j, "command", "analyze");
    cli_json_str(&j, "matrix", name);
    cli_json_int(&j, "n", A->nrows);
    cli_json_int(&j, "nnz", A->nnz);
    cli_json_open(&j, "row_length");
    cli_json_int(&j, "min", a->rows.min);
    cli_json_num(&j, "mean", a->rows.mean);
    cli_json_int(&j, "max", a->rows.max);
    cli_json_num(&j, "std", a->rows.stddev);
    cli_json_close(&j);
    cli_json_int(&j, "empty_rows", a->rows.empty_rows);
    cli_json_int(&j, "zero_diagonal_rows", a->bad_diag);
    cli_json_key(&j, "first_zero_diagonal_rows");
    fputc('[', stdout);
    for (int k = 0; k < a->bad_diag && k < FIRST_ROWS; k++)
        printf("%s%d", k ? ", " : "", (int)a->first_bad[k]);
    fputc(']', stdout);
    cli_json_num(&j, "pattern_symmetry", pct(a->mirrored, a->offdiag) / 100);
    cli_json_bool(&j, "symmetric", a->mirrored_equal == a->offdiag);
    cli_json_num(&j, "dominant_rows_share", pct(a->dominant, A->nrows) / 100);
    cli_json_int(&j, "sccs", a->sccs);
    cli_json_int(&j, "largest_scc", a->largest_scc);
    cli_json_bool(&j, "reducible", a->sccs > 1);
    cli_json_str(&j, "scc_method", a->scc.method);
    cli_json_num(&j, "scc_seconds", a->scc.seconds);
    cli_json_int(&j, "weak_components", a->weak);
    json_blocks(&j, a);
    if (strcmp(o->device, "cuda")) cli_json_str(&j, "format_cpu", "csr");
    if (strcmp(o->device, "cpu")) {
        cli_json_str(&j, "format_gpu", a->gpu_format);
        cli_json_str(&j, "format_gpu_reason", a->gpu_why);
    }
    cli_json_spmm_features(&j, "spmm_features", &a->spmm);
    cli_json_str(&j, "precond", a->precond);
    cli_json_str(&j, "method", a->method);
    cli_json_num(&j, "seconds", a->seconds);
    cli_json_end(&j);
}

static int run(kr_ctx *ctx, const char *path, const analyze_opts *o)
{
    kr_csr A = {0};
    kr_status st = kr_read_mtx(ctx, path, &A);
    if (st != KR_OK) return cli_lib_error(ctx, st, path);
    int rc = 0;
    if (A.nrows != A.ncols) {
        cli_error("%s: the matrix is %d x %d, not square", path, (int)A.nrows,
                  (int)A.ncols);
        rc = CLI_EXIT_INPUT;
    }
    analysis a;
    memset(&a, 0, sizeof a);
    if (!rc) rc = analyze(ctx, &A, o, &a);
    if (!rc && o->json) print_json(path, &A, o, &a);
    if (!rc && !o->json) print_text(path, &A, o, &a);
    kr_block_analysis_free(&a.blocks);
    kr_csr_free(&A);
    return rc;
}

int cli_cmd_analyze(int argc, char **argv)
{
    analyze_opts o;
    defaults(&o);
    const char *pos[1];
    int npos;
    int rc = cli_parse(&analyze_spec, argc, argv, &o, pos, &npos);
    if (rc == CLI_EXIT_HELP) {
        print_help();
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if (npos != 1) return cli_usage_error("analyze", "the matrix is missing");
    kr_ctx *ctx = NULL;
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_CPU);
    rc = st == KR_OK ? run(ctx, pos[0], &o) : cli_lib_error(ctx, st, NULL);
    kr_ctx_destroy(ctx);
    return rc;
}
