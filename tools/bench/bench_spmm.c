/* krylov bench spmm: times Y = A X (kr_matrix_apply_multi) for every
 * matrix, number of columns k, format and row order after a warm-up
 * (median and minimum of many runs, CUDA events on the GPU), against csr
 * in A's order (cusparseSpMM on the GPU) in the same run; reports GFLOP/s,
 * effective bandwidth by the minimum-bytes model against the copy
 * bandwidth measured in the same run, build and row-order times, and the
 * geometric mean over the large matrices of each choice's and of the best
 * krylov choice's speedup per k. Markdown on stdout, JSON on request.
 * Self-contained beside bench_spmv.c (it shares only bench_common). */
#include "drivers/features_json.h"
#include "spmv/spmm_rows.h"
#include "tools/bench/bench.h"
#include "tools/bench/bench_common.h"
#include "tools/bench/timing.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 32
#define MAX_KS 16

typedef struct spmm_opts {
    BENCH_COMMON_FIELDS;
    const char *formats, *permute, *ks;
    int warmup;
} spmm_opts;

typedef struct spmm_row {
    const bench_item *item;
    int32_t nrows, ncols, nnz, k;
    const char *format, *order;
    int refused;
    char note[768];
    char chosen[32]; /* the concrete format that ran */
    double median_s, min_s, gflops, gbps, pct_copy, speedup;
    double build_s, order_s, rel_err, min_bytes;
} spmm_row;

typedef struct spmm_run {
    const spmm_opts *o;
    const char *formats[MAX_NAMES], *orders[MAX_NAMES];
    int nformats, norders, nks;
    int32_t ks[MAX_KS];
    bench_list list;
    kr_ctx *ctx;
    size_t copy_bytes;
    double copy_bps;
    char date[32];
    spmm_row *rows;
    int nrows;
    kr_spmm_features *features; /* per matrix of the list */
} spmm_run;

/* One matrix's data: X and the reference Y for each k. */
typedef struct spmm_mat {
    const bench_item *item;
    kr_csr A;
    double *X[MAX_KS], *Yref[MAX_KS], *Y; /* host */
    kr_vec *vX[MAX_KS], *vY[MAX_KS];
} spmm_mat;

#define OFF(field) offsetof(spmm_opts, field)

static const cli_opt spmm_table[] = {
    {"--k", NULL, CLI_STR, OFF(ks), 0, 0, NULL, "K,K,...",
     "numbers of columns of X (1..1024 each)"},
    {"--formats", NULL, CLI_STR, OFF(formats), 0, 0, NULL, "F,F,...",
     "formats to time (default: every registered format); csr in A's "
     "order always runs, as the baseline"},
    {"--permute", NULL, CLI_STR, OFF(permute), 0, 0, NULL, "R,R,...",
     "row orders to build each format in (see the list below); each "
     "result comes back in A's order"},
    {"--reps", NULL, CLI_INT, OFF(reps), 1, INT_MAX, NULL, "N",
     "timed applications per matrix, k, format and order"},
    {"--warmup", NULL, CLI_INT, OFF(warmup), 0, INT_MAX, NULL, "N",
     "untimed applications first"},
    BENCH_COMMON_OPTS(spmm_opts),
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec spmm_spec = {"bench spmm", spmm_table, BENCH_MAX_MATRICES,
                                   OFF(help)};

/* With no matrix given: the shared folder's, then these. */
static const char *const default_gens[] = {"poisson3d:128", "poisson3d27:96",
                                           "elasticity3d:48",
                                           "powerlaw:1000000", NULL};

#define BENCH_SPMM_MODEL                                                       \
    "minimum bytes of Y = A X: 12 B per nonzero + 4 B * (nrows + 1) row "      \
    "pointers + 8 B * ncols * k (X read once) + 8 B * nrows * k (Y written "   \
    "once)"

static void spmm_defaults(spmm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 30;
    o->warmup = 5;
    o->device = "auto";
    o->build = "env";
    o->ks = "4,8,16,32";
    o->permute = "none";
}

static void print_help(void)
{
    spmm_opts d;
    spmm_defaults(&d);
    printf("usage: krylov bench spmm [A.mtx ...] [--gen SPEC ...] "
           "[options]\n\n"
           "Times Y = A X (X of k columns, row-major) for every matrix, k, "
           "format and row\norder: median and minimum of --reps runs after "
           "--warmup (CUDA events on the\nGPU, a wall clock on the CPU), "
           "GFLOP/s (2 nnz k / median), effective GB/s\nby the minimum-bytes "
           "model and its percentage of the copy bandwidth measured\nin the "
           "same run, speedup over csr in A's order (cusparseSpMM on the "
           "GPU) at\nthe same k, build and row-order times. Each result is "
           "checked against a\nhost loop. The summary gives, per k, the "
           "geometric mean over the large\nmatrices (nnz >= 100000) of each "
           "format and order's speedup, and of the\nbest krylov choice (any "
           "format but csr, any order) per matrix.\n\n"
           "With no matrix given: every .mtx in $KRYLOV_MATRICES (else "
           "../shared/matrices),\nthen --gen poisson3d:128, poisson3d27:96, "
           "elasticity3d:48, powerlaw:1000000.\n\n");
    cli_print_help_line(stdout, "GB/s model:", BENCH_SPMM_MODEL);
    printf("\noptions:\n");
    cli_print_options(stdout, spmm_table, &d);
    printf("\nformats: ");
    cli_print_list(stdout, kr_format_names());
    printf("\nrow orders: ");
    cli_print_list(stdout, kr_permute_names());
    printf("\n\n");
    cli_print_exit_codes(stdout);
    printf("\nexample:\n  krylov bench spmm --gen poisson3d:64 --k 8,32 "
           "--permute none,lpt --json spmm.json\n");
}

/* ------------------------------------------------------------ options */

/* Index of name in the NULL-terminated list, or -1. */
static int find_name(const char *const *all, const char *name)
{
    for (int i = 0; all[i]; i++)
        if (!strcmp(all[i], name)) return i;
    return -1;
}

/* "a, b, c" from the NULL-terminated list, cut to len. */
static void join_names(const char *const *all, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; all[i]; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", all[i]);
    }
}

/* Splits "a,b,c" into names of `all` (each once), or takes every name of
 * all when s is NULL. */
static int parse_names(const char *option, const char *s,
                       const char *const *all, const char **out, int *n)
{
    char list[512];
    join_names(all, list, sizeof list);
    *n = 0;
    for (int i = 0; !s && all[i] && *n < MAX_NAMES; i++)
        out[(*n)++] = all[i];
    while (s) {
        const char *comma = strchr(s, ',');
        char name[64];
        snprintf(name, sizeof name, "%.*s",
                 (int)(comma ? (size_t)(comma - s) : strlen(s)), s);
        int at = find_name(all, name);
        for (int i = 0; at >= 0 && i < *n; i++)
            if (out[i] == all[at]) at = -2;
        if (at < 0 || *n >= MAX_NAMES)
            return cli_usage_error(
                "bench spmm", "%s: %s '%s' (valid: %s)", option,
                at == -2 ? "listed twice:" : "unknown", name, list);
        out[(*n)++] = all[at];
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int parse_ks(spmm_run *r)
{
    const char *s = r->o->ks;
    r->nks = 0;
    while (s && *s) {
        char *end;
        long k = strtol(s, &end, 10);
        if (end == s || (*end && *end != ',') || k < 1 || k > 1024 ||
            r->nks >= MAX_KS)
            return cli_usage_error("bench spmm",
                                   "--k: '%s' is not a list of at most %d "
                                   "numbers 1..1024",
                                   r->o->ks, MAX_KS);
        r->ks[r->nks++] = (int32_t)k;
        s = *end ? end + 1 : NULL;
    }
    if (r->nks == 0)
        return cli_usage_error("bench spmm", "--k: no number given");
    return 0;
}

static int parse(spmm_run *r, spmm_opts *o, int argc, char **argv)
{
    const char *gens[argc + 1], *files[argc + 1];
    char *rest[argc + 1];
    int ngens, nrest, nfiles;
    spmm_defaults(o);
    int rc = bench_split_gens("bench spmm", spmm_table, argc, argv, gens,
                              &ngens, rest, &nrest);
    if (!rc) rc = cli_parse(&spmm_spec, nrest, rest, o, files, &nfiles);
    if (rc == CLI_EXIT_HELP) print_help();
    if (!rc) rc = bench_check_outputs(o->markdown, o->json);
    if (!rc) rc = parse_ks(r);
    if (!rc)
        rc = parse_names("--formats", o->formats, kr_format_names(), r->formats,
                         &r->nformats);
    if (!rc)
        rc = parse_names("--permute", o->permute, kr_permute_names(), r->orders,
                         &r->norders);
    if (!rc)
        rc = bench_list_make_gens(&r->list, files, nfiles, gens, ngens,
                                  default_gens);
    return rc;
}

/* ------------------------------------------------------------ running */

/* Y = A X by the plain host loop, the reference every result is checked
 * against. */
static void host_spmm(const kr_csr *A, int32_t k, const double *X, double *Y)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        double *y = Y + (size_t)i * k;
        for (int32_t c = 0; c < k; c++)
            y[c] = 0.0;
        for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            for (int32_t c = 0; c < k; c++)
                y[c] += A->val[p] * X[(size_t)A->colind[p] * k + c];
    }
}

static int make_vectors(spmm_run *r, spmm_mat *m)
{
    int32_t kmax = 0;
    for (int t = 0; t < r->nks; t++)
        kmax = r->ks[t] > kmax ? r->ks[t] : kmax;
    m->Y = malloc(((size_t)m->A.nrows * kmax + 1) * sizeof *m->Y);
    kr_status st = m->Y ? KR_OK : KR_ERR_NOMEM;
    for (int t = 0; st == KR_OK && t < r->nks; t++) {
        size_t nx = (size_t)m->A.ncols * r->ks[t];
        size_t ny = (size_t)m->A.nrows * r->ks[t];
        m->X[t] = malloc((nx + 1) * sizeof(double));
        m->Yref[t] = malloc((ny + 1) * sizeof(double));
        if (!m->X[t] || !m->Yref[t] || nx > INT32_MAX || ny > INT32_MAX) {
            cli_error("%s: X or Y of k = %d columns too large for this host "
                      "or for 32-bit vector sizes",
                      m->item->name, (int)r->ks[t]);
            return CLI_EXIT_DEVICE;
        }
        bench_fill_x(m->X[t], (int32_t)nx);
        host_spmm(&m->A, r->ks[t], m->X[t], m->Yref[t]);
        st = kr_vec_create(r->ctx, (int32_t)nx, &m->vX[t]);
        if (st == KR_OK) st = kr_vec_create(r->ctx, (int32_t)ny, &m->vY[t]);
        if (st == KR_OK) st = kr_vec_upload(m->vX[t], m->X[t]);
    }
    return st == KR_OK ? 0 : bench_lib_error(r->ctx, st, m->item->name);
}

static void mat_free(spmm_mat *m)
{
    for (int t = 0; t < MAX_KS; t++) {
        kr_vec_destroy(m->vX[t]);
        kr_vec_destroy(m->vY[t]);
        free(m->X[t]);
        free(m->Yref[t]);
    }
    free(m->Y);
    kr_csr_free(&m->A);
}

static spmm_row *new_row(spmm_run *r, const spmm_mat *m, int t,
                         const char *format, const char *order)
{
    spmm_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof *row);
    row->item = m->item;
    row->nrows = m->A.nrows;
    row->ncols = m->A.ncols;
    row->nnz = m->A.nnz;
    row->k = r->ks[t];
    row->format = format;
    row->order = order;
    row->min_bytes = 12.0 * m->A.nnz + 4.0 * (m->A.nrows + 1.0) +
                     8.0 * row->k * ((double)m->A.ncols + m->A.nrows);
    row->speedup = NAN;
    return row;
}

/* GPU pellr's long rows cut into pieces for its SpMM, as the note "N
 * long rows in P pieces" (k beyond KR_MULTI_MAX_COLUMNS runs unsplit). */
static void split_note(const kr_matrix *M, spmm_row *row)
{
    int32_t rows, pieces = kr_matrix_split_pieces(M, &rows);
    if (pieces > 0 && row->k <= KR_MULTI_MAX_COLUMNS)
        snprintf(row->note, sizeof row->note, "%d long rows in %d pieces",
                 (int)rows, (int)pieces);
}

static void fill_metrics(spmm_run *r, spmm_row *row, const kr_matrix *M,
                         const spmm_mat *m, int t)
{
    row->gflops = 2.0 * row->nnz * row->k / row->median_s * 1e-9;
    row->gbps = row->min_bytes / row->median_s * 1e-9;
    row->pct_copy = 100.0 * row->min_bytes / row->median_s / r->copy_bps;
    row->build_s = kr_matrix_build_seconds(M);
    row->order_s = kr_matrix_permute_seconds(M);
    snprintf(row->chosen, sizeof row->chosen, "%s", kr_matrix_format(M));
    row->rel_err =
        bench_rel_diff(m->Y, m->Yref[t], (size_t)m->A.nrows * (size_t)row->k);
    if (row->rel_err > 1e-10) { /* a wrong kernel's time means nothing */
        snprintf(row->note, sizeof row->note,
                 "WRONG RESULT: max relative difference %.3g from the host "
                 "loop",
                 row->rel_err);
        fprintf(stderr, "warning: %s/%s on %s, k = %d: %s\n", row->format,
                row->order, row->item->name, (int)row->k, row->note);
    } else if (strcmp(row->chosen, row->format) != 0) {
        snprintf(row->note, sizeof row->note, "ran %s", row->chosen);
    } else {
        split_note(M, row);
    }
}

/* A refusal (a format that does not take A, or has no SpMM there) is a
 * result; other failures stop the run. */
static int refused(spmm_run *r, spmm_row *row, kr_status st)
{
    if (st != KR_ERR_UNSUPPORTED)
        return bench_lib_error(r->ctx, st, row->item->name);
    row->refused = 1;
    snprintf(row->note, sizeof row->note, "refused: %s", kr_ctx_error(r->ctx));
    return 0;
}

static int time_k(spmm_run *r, spmm_mat *m, kr_matrix *M, int t, spmm_row *row)
{
    kr_status st =
        bench_time_apply_multi(M, r->ks[t], m->vX[t], m->vY[t], r->o->warmup,
                               r->o->reps, &row->median_s, &row->min_s);
    if (st == KR_OK) st = kr_vec_download(m->vY[t], m->Y);
    if (st != KR_OK) return refused(r, row, st);
    fill_metrics(r, row, M, m, t);
    return 0;
}

/* One format in one order, built once, timed at every k. */
static int run_choice(spmm_run *r, spmm_mat *m, const char *format,
                      const char *order)
{
    kr_matrix_options mo;
    kr_matrix_options_default(&mo);
    mo.format = format;
    mo.permute = order;
    kr_matrix *M = NULL;
    kr_status st = kr_matrix_create_opts(r->ctx, &m->A, &mo, &M);
    int rc = 0;
    for (int t = 0; !rc && t < r->nks; t++) {
        spmm_row *row = new_row(r, m, t, format, order);
        rc = st == KR_OK ? time_k(r, m, M, t, row) : refused(r, row, st);
    }
    kr_matrix_destroy(M);
    return rc;
}

static int is_baseline(const spmm_row *w)
{
    return !strcmp(w->format, "csr") && !strcmp(w->order, "none");
}

/* speedup = the baseline's median / the row's, same matrix and k */
static void speedups(spmm_row *rows, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (is_baseline(&rows[j]) && !rows[j].refused && !rows[i].refused &&
                rows[j].k == rows[i].k)
                rows[i].speedup = rows[j].median_s / rows[i].median_s;
}

static int run_matrix(spmm_run *r, int i)
{
    spmm_mat m = {.item = &r->list.items[i]};
    int first = r->nrows;
    int rc = bench_load("bench spmm", r->ctx, m.item, &m.A);
    if (!rc)
        fprintf(stderr, "bench spmm: [%d/%d] %s (%d x %d, nnz %d)\n", i + 1,
                r->list.n, m.item->name, (int)m.A.nrows, (int)m.A.ncols,
                (int)m.A.nnz);
    kr_status st =
        rc ? KR_OK : kr_csr_spmm_features(r->ctx, &m.A, &r->features[i]);
    if (st != KR_OK) rc = bench_lib_error(r->ctx, st, m.item->name);
    if (!rc) rc = make_vectors(r, &m);
    if (!rc) rc = run_choice(r, &m, "csr", "none"); /* the baseline first */
    for (int f = 0; !rc && f < r->nformats; f++)
        for (int o = 0; !rc && o < r->norders; o++)
            if (strcmp(r->formats[f], "csr") || strcmp(r->orders[o], "none"))
                rc = run_choice(r, &m, r->formats[f], r->orders[o]);
    speedups(r->rows + first, r->nrows - first);
    mat_free(&m);
    return rc;
}

/* ------------------------------------------------------------ summary */

static int large(const spmm_row *w) { return w->nnz >= BENCH_SMALL_NNZ; }

/* Geometric mean of the speedups of format/order at k over the large
 * matrices; n gets their number. */
static double choice_mean(const spmm_run *r, const char *format,
                          const char *order, int32_t k, int *n)
{
    double v[BENCH_MAX_MATRICES];
    *n = 0;
    for (int i = 0; i < r->nrows; i++) {
        const spmm_row *w = &r->rows[i];
        if (w->k == k && large(w) && !strcmp(w->format, format) &&
            !strcmp(w->order, order) && isfinite(w->speedup) &&
            *n < BENCH_MAX_MATRICES)
            v[(*n)++] = w->speedup;
    }
    return bench_geomean(v, *n);
}

/* The geometric mean over the large matrices of each one's best krylov
 * choice (any format but csr, any order) at k. */
static double best_mean(const spmm_run *r, int32_t k, int *n)
{
    double v[BENCH_MAX_MATRICES];
    *n = 0;
    for (int i = 0; i < r->nrows;) {
        const bench_item *item = r->rows[i].item;
        double best = NAN;
        for (; i < r->nrows && r->rows[i].item == item; i++) {
            const spmm_row *w = &r->rows[i];
            if (w->k == k && large(w) && strcmp(w->format, "csr") &&
                isfinite(w->speedup) && !(best >= w->speedup))
                best = w->speedup;
        }
        if (isfinite(best) && *n < BENCH_MAX_MATRICES) v[(*n)++] = best;
    }
    return bench_geomean(v, *n);
}

/* ------------------------------------------------------------ output */

static void md_header(FILE *f, const spmm_run *r)
{
    fprintf(f,
            "# krylov bench spmm\n\n- device: %s\n- date (UTC): %s\n"
            "- settings: reps %d, warmup %d, threads %d, k %s, formats ",
            kr_ctx_device_name(r->ctx), r->date, r->o->reps, r->o->warmup,
            kr_ctx_threads(r->ctx), r->o->ks);
    for (int i = 0; i < r->nformats; i++)
        fprintf(f, "%s%s", i ? "," : "", r->formats[i]);
    fprintf(f, ", row orders ");
    for (int i = 0; i < r->norders; i++)
        fprintf(f, "%s%s", i ? "," : "", r->orders[i]);
    fprintf(f,
            "\n- copy bandwidth: %.2f GB/s (device-to-device copy of %zu "
            "MiB, bytes read + written, median of %d)\n- GB/s = %s, over the "
            "median time; %% copy = GB/s over the copy bandwidth\n"
            "- vs csr = the median of csr in A's order (cusparseSpMM on the "
            "GPU) at the same k over the row's, same run\n"
            "- large: nnz >= %d (the summary's matrices)\n\n",
            r->copy_bps * 1e-9, r->copy_bytes >> 20, BENCH_COPY_REPS,
            BENCH_SPMM_MODEL, BENCH_SMALL_NNZ);
}

static void md_row(FILE *f, const spmm_row *w)
{
    fprintf(f, "| %s | %d | %d | %d | %s | %s |", w->item->name, (int)w->nrows,
            (int)w->nnz, (int)w->k, w->format, w->order);
    if (w->refused) {
        fprintf(f, " - | - | - | - | - | - | - | - | %s |\n", w->note);
        return;
    }
    fprintf(f, " %.2f | %.2f | %.2f | %.1f | %.1f | ", w->median_s * 1e6,
            w->min_s * 1e6, w->gflops, w->gbps, w->pct_copy);
    bench_md_num(f, "%.3f", w->speedup);
    fprintf(f, " | %.3f | %.3f | %s |\n", w->build_s * 1e3, w->order_s * 1e3,
            w->note);
}

static void md_summary(FILE *f, const spmm_run *r)
{
    fprintf(f, "\n## Geometric-mean speedup over csr, large matrices "
               "(number of matrices)\n\n| format | row order |");
    for (int t = 0; t < r->nks; t++)
        fprintf(f, " k = %d |", (int)r->ks[t]);
    fprintf(f, "\n|---|---|");
    for (int t = 0; t < r->nks; t++)
        fprintf(f, "---|");
    for (int i = 0; i < r->nformats; i++)
        for (int o = 0; o < r->norders; o++) {
            fprintf(f, "\n| %s | %s |", r->formats[i], r->orders[o]);
            for (int t = 0; t < r->nks; t++) {
                int n;
                double g =
                    choice_mean(r, r->formats[i], r->orders[o], r->ks[t], &n);
                fputc(' ', f);
                bench_md_num(f, "%.3f", g);
                fprintf(f, " (%d) |", n);
            }
        }
    fprintf(f, "\n| best krylov choice per matrix | any |");
    for (int t = 0; t < r->nks; t++) {
        int n;
        double g = best_mean(r, r->ks[t], &n);
        fputc(' ', f);
        bench_md_num(f, "%.3f", g);
        fprintf(f, " (%d) |", n);
    }
    fputc('\n', f);
}

static void write_markdown(FILE *f, const void *arg)
{
    const spmm_run *r = arg;
    md_header(f, r);
    fprintf(f, "| matrix | rows | nnz | k | format | row order | median us | "
               "min us | GFLOP/s | GB/s | %% copy | vs csr | build ms | "
               "order ms | note |\n|---|---|---|---|---|---|---|---|---|---|"
               "---|---|---|---|---|\n");
    for (int i = 0; i < r->nrows; i++)
        md_row(f, &r->rows[i]);
    md_summary(f, r);
}

static void json_row(FILE *f, const spmm_row *w)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "matrix", w->item->name);
    cli_json_bool(&j, "generated", w->item->generated);
    cli_json_bool(&j, "large", large(w));
    cli_json_int(&j, "nrows", w->nrows);
    cli_json_int(&j, "ncols", w->ncols);
    cli_json_int(&j, "nnz", w->nnz);
    cli_json_int(&j, "k", w->k);
    cli_json_str(&j, "format", w->format);
    cli_json_str(&j, "permutation", w->order);
    cli_json_str(&j, "status", w->refused ? "refused" : "ok");
    cli_json_str(&j, "note", w->note);
    cli_json_num(&j, "min_bytes", w->min_bytes);
    if (!w->refused) {
        cli_json_str(&j, "format_chosen", w->chosen);
        cli_json_num(&j, "median_s", w->median_s);
        cli_json_num(&j, "min_s", w->min_s);
        cli_json_num(&j, "gflops", w->gflops);
        cli_json_num(&j, "gbytes_per_s", w->gbps);
        cli_json_num(&j, "percent_of_copy", w->pct_copy);
        cli_json_num(&j, "speedup_vs_csr", w->speedup);
        cli_json_num(&j, "build_s", w->build_s);
        cli_json_num(&j, "permute_s", w->order_s);
        cli_json_num(&j, "max_rel_diff_from_reference", w->rel_err);
    }
    cli_json_end(&j);
}

/* "matrices": each matrix's SpMM features (kr_csr_spmm_features). */
static void json_features(cli_json *j, const spmm_run *r)
{
    cli_json_key(j, "matrices");
    fputc('[', j->f);
    for (int i = 0; i < r->list.n; i++) {
        const kr_spmm_features *f = &r->features[i];
        cli_json s;
        fputs(i ? "," : "", j->f);
        cli_json_begin(&s, j->f);
        cli_json_str(&s, "matrix", r->list.items[i].name);
        cli_json_int(&s, "nrows", f->nrows);
        cli_json_int(&s, "ncols", f->ncols);
        cli_json_int(&s, "nnz", f->nnz);
        cli_json_spmm_features(&s, "features", f);
        cli_json_end(&s);
    }
    fputc(']', j->f);
}

static void json_summary(cli_json *j, const spmm_run *r)
{
    cli_json_key(j, "summary");
    fputc('[', j->f);
    int first = 1;
    for (int t = 0; t < r->nks; t++)
        for (int i = 0; i <= r->nformats; i++)
            for (int o = 0; o < (i < r->nformats ? r->norders : 1); o++) {
                int n;
                double g = i < r->nformats
                               ? choice_mean(r, r->formats[i], r->orders[o],
                                             r->ks[t], &n)
                               : best_mean(r, r->ks[t], &n);
                cli_json s;
                fputs(first ? "" : ",", j->f);
                first = 0;
                cli_json_begin(&s, j->f);
                cli_json_int(&s, "k", r->ks[t]);
                cli_json_str(&s, "format",
                             i < r->nformats ? r->formats[i] : "best krylov");
                cli_json_str(&s, "permutation",
                             i < r->nformats ? r->orders[o] : "any");
                cli_json_num(&s, "geomean_speedup_large", g);
                cli_json_int(&s, "matrices_large", n);
                cli_json_end(&s);
            }
    fputc(']', j->f);
}

static void write_json(FILE *f, const void *arg)
{
    const spmm_run *r = arg;
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "command", "bench spmm");
    cli_json_str(&j, "krylov_version", KR_VERSION_STRING);
    cli_json_str(&j, "device", kr_ctx_device_name(r->ctx));
    cli_json_str(&j, "date_utc", r->date);
    cli_json_open(&j, "settings");
    cli_json_int(&j, "reps", r->o->reps);
    cli_json_int(&j, "warmup", r->o->warmup);
    cli_json_str(&j, "k", r->o->ks);
    bench_json_run(&j, r->o->device, r->ctx, r->copy_bytes);
    cli_json_int(&j, "large_nnz_from", BENCH_SMALL_NNZ);
    cli_json_close(&j);
    cli_json_num(&j, "copy_bytes_per_s", r->copy_bps);
    cli_json_str(&j, "bytes_model", BENCH_SPMM_MODEL);
    cli_json_key(&j, "rows");
    fputc('[', f);
    for (int i = 0; i < r->nrows; i++) {
        fputs(i ? "," : "", f);
        json_row(f, &r->rows[i]);
    }
    fputc(']', f);
    json_summary(&j, r);
    json_features(&j, r);
    cli_json_end(&j);
}

static int run_all(spmm_run *r)
{
    int rc = bench_start(r->o->device, r->o->build, r->o->threads,
                         r->o->copy_mb, &r->ctx, &r->copy_bytes, &r->copy_bps,
                         r->date, sizeof r->date);
    if (!rc) {
        size_t per = ((size_t)r->nformats * r->norders + 1) * (size_t)r->nks;
        r->rows = calloc((size_t)r->list.n * per + 1, sizeof *r->rows);
        r->features = calloc((size_t)r->list.n + 1, sizeof *r->features);
        if (!r->rows || !r->features) {
            cli_error("out of host memory for the results");
            rc = CLI_EXIT_DEVICE;
        }
    }
    for (int i = 0; !rc && i < r->list.n; i++)
        rc = run_matrix(r, i);
    if (!rc)
        rc = bench_outputs(r->o->markdown, r->o->json, write_markdown,
                           write_json, r);
    return rc;
}

int cli_bench_spmm(int argc, char **argv)
{
    spmm_opts o;
    spmm_run r = {.o = &o};
    int rc = parse(&r, &o, argc, argv);
    if (!rc) rc = run_all(&r);
    free(r.rows);
    free(r.features);
    kr_ctx_destroy(r.ctx);
    bench_list_free(&r.list);
    return rc == CLI_EXIT_HELP ? CLI_EXIT_OK : rc;
}
