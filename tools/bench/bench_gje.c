/* krylov bench gje: batched Gauss-Jordan inversion (precond/gje_batch.h)
 * on random dense batches against cuBLAS, and the block-Jacobi stages
 * (blocking, extraction + inversion, application) on real matrices against
 * a generic SpMV of the same block-diagonal matrix. This file parses the
 * options and drives the two parts. */
#include "tools/bench/bench_gje.h"

#include "tools/bench/bench.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_gens[] = {"elasticity3d:60", NULL};

static const char *const *part_names(void)
{
    static const char *const names[] = {"both", "dense", "matrices", NULL};
    return names;
}

#define OFF(field) offsetof(gje_opts, field)

static const cli_opt gje_table[] = {
    {"--part", NULL, CLI_CHOICE, OFF(part), 0, 0, part_names, "P",
     "dense = the random batches only, matrices = the matrices only"},
    {"--sizes", NULL, CLI_STR, OFF(sizes), 0, 0, NULL, "LIST",
     "uniform batches: block sizes K and ranges A-B in 1..32, comma-"
     "separated; 'all' = 1-32, 'none' = no uniform batch"},
    {"--mixes", NULL, CLI_STR, OFF(mixes), 0, 0, NULL, "LIST",
     "variable-size batches: ranges A-B (1 <= A < B <= 32), each block's "
     "size uniformly random in A..B; 'none' = no mixed batch"},
    {"--batch", NULL, CLI_INT, OFF(batch), 1, INT_MAX, NULL, "N",
     "blocks per batch whose largest block has <= 16 rows; batches with "
     "larger blocks take 2N/5 (so 500,000 and 200,000 by default, as in "
     "BENCHMARKS.md)"},
    {"--reps", NULL, CLI_INT, OFF(reps), 1, 10000, NULL, "N",
     "timed runs of each measurement (the median is reported)"},
    {"--warmup", NULL, CLI_INT, OFF(warmup), 0, 10000, NULL, "N",
     "untimed runs first"},
    {"--check", NULL, CLI_INT, OFF(check), 1, INT_MAX, NULL, "N",
     "blocks per batch or matrix whose inverse is checked on the host"},
    {"--seed", NULL, CLI_INT, OFF(seed), 0, INT_MAX, NULL, "S",
     "seed of the random blocks (each batch draws fresh ones from it)"},
    {"--block-size", NULL, CLI_INT, OFF(block_size), 1, KR_GJE_MAX, NULL, "K",
     "matrices: largest block of the supervariable blocking"},
    BENCH_COMMON_OPTS(gje_opts),
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec gje_spec = {"bench gje", gje_table, BENCH_MAX_MATRICES,
                                  OFF(help)};

static void gje_defaults(gje_opts *o)
{
    memset(o, 0, sizeof *o);
    o->part = "both";
    o->sizes = "1,2,3,4,8,12,16,24,32";
    o->mixes = "1-32,1-8,17-32";
    o->batch = 500000;
    o->reps = 10;
    o->warmup = 2;
    o->check = 1000;
    o->seed = 1;
    o->block_size = KR_GJE_MAX;
    o->device = "auto";
    o->build = "env";
}

static void print_about(void)
{
    printf("usage: krylov bench gje [A.mtx ...] [--gen SPEC ...] [options]\n\n"
           "Part 1 (dense): batches of random k x k blocks (column-major; each "
           "block a\nrow-permuted diagonally dominant matrix with small "
           "entries on its diagonal,\nso inverting it needs pivoting; fresh "
           "data per batch) inverted by our\nbatched Gauss-Jordan "
           "elimination, and on the GPU, in the same run, by\n"
           "cublasDgetrfBatched + cublasDgetriBatched and by "
           "cublasDmatinvBatched. cuBLAS\ntakes one size per call: a "
           "variable-size batch is one call per size group,\ntheir times "
           "summed. Times are medians of --reps runs after --warmup (CUDA\n"
           "events on the GPU, a wall clock on the CPU); getrf overwrites its "
           "input, which\nis copied back before each run, outside the timed "
           "region. Every batch is\nchecked: --check sampled inverses on the "
           "host, and every block's singular\nflag (none is singular).\n\n"
           "Part 2 (matrices): per matrix, supervariable blocking (host, wall "
           "clock), the\npattern flags, extraction + inversion and "
           "application of the block-Jacobi\noperator (median of --reps), "
           "the application's effective bandwidth, next to\nthe csr format's "
           "SpMV (cuSPARSE on the GPU) of the same block-diagonal "
           "matrix,\nand the whole bjacobi setup through "
           "kr_precond_create_opts.\n\nWith no matrix given: every .mtx in "
           "$KRYLOV_MATRICES (else ../shared/matrices),\nthen --gen "
           "elasticity3d:60.\n\n");
    cli_print_help_line(stdout, "GFLOP/s model:", GJE_FLOP_MODEL);
    cli_print_help_line(stdout, "memory floor:", GJE_FLOOR_MODEL);
    cli_print_help_line(stdout, "apply bytes:", GJE_APPLY_MODEL);
    cli_print_help_line(stdout, "residual:", GJE_RESIDUAL_MODEL);
}

static void print_help(void)
{
    gje_opts d;
    gje_defaults(&d);
    print_about();
    printf("\noptions:\n");
    cli_print_options(stdout, gje_table, &d);
    printf("\n");
    cli_print_exit_codes(stdout);
    printf("\nexample:\n  krylov bench gje --sizes 4,16 --mixes 1-8 --batch "
           "100000 --part dense --json gje.json\n");
}

int32_t gje_batch_blocks(const gje_opts *o, int hi)
{
    int64_t n = hi <= 16 ? o->batch : (int64_t)o->batch * 2 / 5;
    return n < 1 ? 1 : (int32_t)n;
}

/* ------------------------------------------------ --sizes and --mixes */

/* "A-B" or "K" into lo..hi; 0 when malformed. */
static int parse_range(const char *tok, int *lo, int *hi)
{
    char *end;
    long a = strtol(tok, &end, 10), b = a;
    if (end == tok) return 0;
    if (*end == '-') {
        const char *q = end + 1;
        b = strtol(q, &end, 10);
        if (end == q) return 0;
    }
    if (*end || a < 1 || b > KR_GJE_MAX || a > b) return 0;
    *lo = (int)a;
    *hi = (int)b;
    return 1;
}

static int add_size(gje_run *r, int k)
{
    for (int i = 0; i < r->nsizes; i++)
        if (r->sizes[i] == k)
            return cli_usage_error("bench gje", "--sizes: %d listed twice", k);
    r->sizes[r->nsizes++] = k;
    return 0;
}

static int size_token(gje_run *r, const char *tok)
{
    int lo, hi, rc = 0;
    if (!strcmp(tok, "all")) tok = "1-32";
    if (!parse_range(tok, &lo, &hi))
        return cli_usage_error("bench gje",
                               "--sizes: '%s' is not a size or range in "
                               "1..32 (K or A-B), 'all' or 'none'",
                               tok);
    for (int k = lo; !rc && k <= hi; k++)
        rc = add_size(r, k);
    return rc;
}

static int mix_token(gje_run *r, const char *tok)
{
    int lo, hi;
    if (!parse_range(tok, &lo, &hi) || lo == hi)
        return cli_usage_error("bench gje",
                               "--mixes: '%s' is not a range A-B with 1 <= A "
                               "< B <= 32, or 'none'",
                               tok);
    if (r->nmixes >= GJE_MAX_MIXES)
        return cli_usage_error("bench gje", "--mixes: more than %d ranges",
                               GJE_MAX_MIXES);
    r->mix_lo[r->nmixes] = lo;
    r->mix_hi[r->nmixes++] = hi;
    return 0;
}

/* Calls each(r, token) for the comma-separated tokens of list. */
static int each_token(gje_run *r, const char *list,
                      int (*each)(gje_run *, const char *))
{
    if (!strcmp(list, "none")) return 0;
    char buf[512];
    if (strlen(list) >= sizeof buf)
        return cli_usage_error("bench gje", "option value too long: '%.40s...'",
                               list);
    strcpy(buf, list);
    int rc = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t && !rc;
         t = strtok_r(NULL, ",", &save))
        rc = each(r, t);
    return rc;
}

/* ------------------------------------------------------------ parsing */

/* Rows of a batch whose largest block has hi rows, at most. */
static int64_t batch_rows(const gje_opts *o, int hi)
{
    return (int64_t)gje_batch_blocks(o, hi) * hi;
}

/* Block starts are int32: a batch holds at most INT32_MAX rows. */
static int check_rows(const gje_run *r)
{
    int64_t rows = 0;
    for (int i = 0; r->dense && i < r->nsizes + r->nmixes; i++) {
        int hi = i < r->nsizes ? r->sizes[i] : r->mix_hi[i - r->nsizes];
        int64_t n = batch_rows(r->o, hi);
        rows = n > rows ? n : rows;
    }
    if (rows <= INT32_MAX) return 0;
    return cli_usage_error("bench gje",
                           "--batch %d: a batch would have %lld rows, more "
                           "than 32-bit block starts hold",
                           r->o->batch, (long long)rows);
}

static int parse_lists(gje_run *r, int nmatrices)
{
    const gje_opts *o = r->o;
    r->dense = strcmp(o->part, "matrices") != 0;
    r->matrices = strcmp(o->part, "dense") != 0;
    if (!r->matrices && nmatrices > 0)
        return cli_usage_error("bench gje", "matrices given, but --part dense "
                                            "runs none");
    int rc = each_token(r, o->sizes, size_token);
    if (!rc) rc = each_token(r, o->mixes, mix_token);
    if (!rc) rc = check_rows(r);
    return rc;
}

static int parse(gje_run *r, gje_opts *o, int argc, char **argv)
{
    const char *gens[argc + 1], *files[argc + 1];
    char *rest[argc + 1];
    int ngens, nrest, nfiles = 0;
    gje_defaults(o);
    int rc = bench_split_gens("bench gje", gje_table, argc, argv, gens, &ngens,
                              rest, &nrest);
    if (!rc) rc = cli_parse(&gje_spec, nrest, rest, o, files, &nfiles);
    if (rc == CLI_EXIT_HELP) print_help();
    if (!rc) rc = bench_check_outputs(o->markdown, o->json);
    if (!rc) rc = parse_lists(r, nfiles + ngens);
    if (!rc && r->matrices)
        rc = bench_list_make_gens(&r->list, files, nfiles, gens, ngens,
                                  default_gens);
    return rc;
}

/* ---------------------------------------------------------------- run */

kr_status gje_time(kr_ctx *ctx, kr_status (*fn)(void *), void *arg, int warmup,
                   int reps, double *median, double *min)
{
    kr_status st = KR_OK;
    for (int i = 0; i < warmup && st == KR_OK; i++)
        st = fn(arg);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) return KR_ERR_NOMEM;
    if (st == KR_OK) st = ctx->ops->time_runs(ctx, fn, arg, reps, t);
    if (st == KR_OK) {
        *median = bench_median(t, reps); /* sorts t */
        *min = t[0];
    }
    free(t);
    return st;
}

static int open_ops(gje_run *r)
{
    r->ops = kr_gje_batch_ops_for(r->ctx);
    if (r->ops) return 0;
    cli_error("bench gje: this build has no batched Gauss-Jordan kernels "
              "for %s (run with --device cpu)",
              kr_ctx_device_name(r->ctx));
    return CLI_EXIT_DEVICE;
}

static int run_all(gje_run *r)
{
    int rc = bench_start(r->o->device, r->o->build, r->o->threads,
                         r->o->copy_mb, &r->ctx, &r->copy_bytes, &r->copy_bps,
                         r->date, sizeof r->date);
    if (!rc) rc = open_ops(r);
    /* matrices first: a bad file or spec stops the run before the long
     * dense part */
    if (!rc && r->matrices) rc = gje_run_matrices(r);
    if (!rc && r->dense) rc = gje_run_dense(r);
    if (!rc)
        rc = bench_outputs(r->o->markdown, r->o->json, gje_write_markdown,
                           gje_write_json, r);
    return rc;
}

int cli_bench_gje(int argc, char **argv)
{
    gje_opts o;
    gje_run *r = calloc(1, sizeof *r);
    if (!r) {
        cli_error("out of host memory");
        return CLI_EXIT_DEVICE;
    }
    r->o = &o;
    int rc = parse(r, &o, argc, argv);
    if (!rc) rc = run_all(r);
    free(r->mat_rows);
    kr_ctx_destroy(r->ctx);
    bench_list_free(&r->list);
    free(r);
    return rc == CLI_EXIT_HELP ? CLI_EXIT_OK : rc;
}
