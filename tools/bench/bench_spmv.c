/* krylov bench spmv: times y = A x for every matrix and format after a
 * warm-up (median and minimum of many runs, CUDA events on the GPU), and
 * reports GFLOP/s, effective bandwidth by the minimum-bytes model against
 * the copy bandwidth measured in the same run, speedup over csr, build
 * time, device bytes and padding; Markdown on stdout, JSON on request. */
#include "tools/bench/bench.h"
#include "tools/bench/bench_common.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FORMATS 32

typedef struct spmv_opts {
    BENCH_COMMON_FIELDS;
    const char *formats;
    const char *permute; /* the row order every format is built in */
    int warmup;
} spmv_opts;

typedef struct spmv_row {
    const bench_item *item;
    int32_t nrows, ncols, nnz;
    const char *format;
    int refused;
    int automatic;    /* the format chose another (auto): see reason */
    char note[768];   /* "refused: <message>", a wrong result, the choice */
    char chosen[32];  /* the concrete format that ran             */
    char reason[640]; /* why an automatic format chose it, or ""  */
    double median_s, min_s, gflops, gbps, pct_copy, speedup;
    double build_s, padding, rel_err, min_bytes;
    size_t bytes;
} spmv_row;

typedef struct spmv_run {
    const spmv_opts *o;
    const char *formats[MAX_FORMATS];
    int nformats;
    bench_list list;
    kr_ctx *ctx;
    size_t copy_bytes;
    double copy_bps;
    char date[32];
    spmv_row *rows;
    int nrows;
} spmv_run;

/* One matrix's data while its formats run. */
typedef struct spmv_mat {
    const bench_item *item;
    kr_csr A;
    double *x, *y, *yref; /* host */
    kr_vec *vx, *vy;
} spmv_mat;

#define OFF(field) offsetof(spmv_opts, field)

static const cli_opt spmv_table[] = {
    {"--formats", NULL, CLI_STR, OFF(formats), 0, 0, NULL, "F,F,...",
     "formats to time (default: every registered format)"},
    {"--permute", NULL, CLI_CHOICE, OFF(permute), 0, 0, kr_permute_names, "R",
     "the row order every format (csr too) is built in; results come back "
     "in A's order (bench spmm compares several orders in one run)"},
    {"--reps", NULL, CLI_INT, OFF(reps), 1, INT_MAX, NULL, "N",
     "timed applications per matrix and format"},
    {"--warmup", NULL, CLI_INT, OFF(warmup), 0, INT_MAX, NULL, "N",
     "untimed applications first"},
    BENCH_COMMON_OPTS(spmv_opts),
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec spmv_spec = {"bench spmv", spmv_table, BENCH_MAX_MATRICES,
                                   OFF(help)};

static void spmv_defaults(spmv_opts *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 50;
    o->warmup = 10;
    o->device = "auto";
    o->build = "env";
    o->permute = "none";
}

static void print_help(void)
{
    spmv_opts d;
    spmv_defaults(&d);
    printf(
        "usage: krylov bench spmv [A.mtx ...] [--gen SPEC ...] "
        "[options]\n\n"
        "Times y = A x for every matrix and format: median and minimum of "
        "--reps runs\nafter --warmup (CUDA events on the GPU, a wall clock "
        "on the CPU), GFLOP/s\n(2 nnz / median), effective GB/s by the "
        "minimum-bytes model, its percentage\nof the device-to-device copy "
        "bandwidth measured in the same run, speedup\nover csr, build "
        "time, device bytes and padding. A format that refuses a\nmatrix "
        "gets 'refused: <reason>' in its row. Matrices with nnz < 100000 "
        "are\nlaunch-bound, marked 'small' and summarised apart. The automatic "
        "formats\n(auto, auto-probe) are timed like the others; their rows "
        "name the format they\nchose and why, and a last table compares "
        "them with each matrix's fastest\nformat (how often within 10%%) "
        "and gives the geometric mean of the best krylov\nformat per "
        "matrix.\n\n"
        "With no matrix given: every .mtx in $KRYLOV_MATRICES (else "
        "../shared/matrices),\nthen --gen poisson3d:160, poisson3d27:110, "
        "powerlaw:2000000.\n\n");
    cli_print_help_line(stdout, "GB/s model:", BENCH_SPMV_MODEL);
    printf("\noptions:\n");
    cli_print_options(stdout, spmv_table, &d);
    printf("\nformats: ");
    cli_print_list(stdout, kr_format_names());
    printf("\n\n");
    cli_print_exit_codes(stdout);
    printf("\nexample:\n  krylov bench spmv --gen poisson3d:64 --formats "
           "csr --json spmv.json\n");
}

static int known_format(const char *name)
{
    for (const char *const *f = kr_format_names(); *f; f++)
        if (!strcmp(*f, name)) return 1;
    return 0;
}

static int bad_format(const char *name, const char *why)
{
    char list[512] = "";
    const char *const *all = kr_format_names();
    for (int i = 0; all[i]; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                 all[i]);
    }
    return cli_usage_error("bench spmv", "--formats: %s '%s' (valid: %s)", why,
                           name, list);
}

/* Splits --formats into registered names, or takes them all. */
static int parse_formats(spmv_run *r)
{
    const char *const *all = kr_format_names();
    const char *s = r->o->formats;
    r->nformats = 0;
    for (int i = 0; !s && all[i] && i < MAX_FORMATS; i++)
        r->formats[r->nformats++] = all[i];
    while (s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)len, s);
        if (!known_format(name)) return bad_format(name, "unknown format");
        for (int i = 0; i < r->nformats; i++)
            if (!strcmp(r->formats[i], name))
                return bad_format(name, "listed twice:");
        for (int i = 0; all[i]; i++)
            if (!strcmp(all[i], name) && r->nformats < MAX_FORMATS)
                r->formats[r->nformats++] = all[i];
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int parse(spmv_run *r, spmv_opts *o, int argc, char **argv)
{
    const char *gens[argc + 1], *files[argc + 1];
    char *rest[argc + 1];
    int ngens, nrest, nfiles;
    spmv_defaults(o);
    int rc = bench_split_gens("bench spmv", spmv_table, argc, argv, gens,
                              &ngens, rest, &nrest);
    if (!rc) rc = cli_parse(&spmv_spec, nrest, rest, o, files, &nfiles);
    if (rc == CLI_EXIT_HELP) print_help();
    if (!rc) rc = bench_check_outputs(o->markdown, o->json);
    if (!rc) rc = parse_formats(r);
    if (!rc) rc = bench_list_make(&r->list, files, nfiles, gens, ngens);
    return rc;
}

static spmv_row *new_row(spmv_run *r, const spmv_mat *m, const char *format)
{
    spmv_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof *row);
    row->item = m->item;
    row->nrows = m->A.nrows;
    row->ncols = m->A.ncols;
    row->nnz = m->A.nnz;
    row->format = format;
    row->min_bytes = bench_spmv_min_bytes(m->A.nrows, m->A.ncols, m->A.nnz);
    row->speedup = NAN;
    return row;
}

static void fill_metrics(spmv_run *r, spmv_row *row, kr_matrix *M,
                         const spmv_mat *m)
{
    row->gflops = 2.0 * row->nnz / row->median_s * 1e-9;
    row->gbps = row->min_bytes / row->median_s * 1e-9;
    row->pct_copy = 100.0 * row->min_bytes / row->median_s / r->copy_bps;
    row->build_s = kr_matrix_build_seconds(M);
    row->bytes = kr_matrix_bytes(M);
    row->padding = kr_matrix_padding_ratio(M);
    row->rel_err = bench_rel_diff(m->y, m->yref, (size_t)m->A.nrows);
    if (row->rel_err > 1e-10) { /* a wrong kernel's time means nothing */
        snprintf(row->note, sizeof row->note,
                 "WRONG RESULT: max relative difference %.3g from the "
                 "reference",
                 row->rel_err);
        fprintf(stderr, "warning: %s on %s: %s\n", row->format, row->item->name,
                row->note);
    }
}

/* The concrete format, and for an automatic one why: also the row's note
 * (unless a wrong result takes the note over). */
static void note_choice(spmv_row *row, const kr_matrix *M)
{
    snprintf(row->chosen, sizeof row->chosen, "%s", kr_matrix_format(M));
    snprintf(row->reason, sizeof row->reason, "%s", kr_matrix_format_reason(M));
    row->automatic = *row->reason != '\0';
    snprintf(row->note, sizeof row->note, "%s", row->reason);
}

static int run_format(spmv_run *r, spmv_mat *m, const char *format)
{
    spmv_row *row = new_row(r, m, format);
    kr_matrix *M = NULL;
    kr_matrix_options mo;
    kr_matrix_options_default(&mo);
    mo.format = format;
    mo.permute = r->o->permute;
    kr_status st = kr_matrix_create_opts(r->ctx, &m->A, &mo, &M);
    if (st == KR_ERR_UNSUPPORTED) { /* a refusal is a result, not an error */
        row->refused = 1;
        snprintf(row->note, sizeof row->note, "refused: %s",
                 kr_ctx_error(r->ctx));
        return 0;
    }
    if (st == KR_OK) note_choice(row, M);
    if (st == KR_OK)
        st = bench_time_apply(M, m->vx, m->vy, r->o->warmup, r->o->reps,
                              &row->median_s, &row->min_s);
    if (st == KR_OK) st = kr_vec_download(m->vy, m->y);
    if (st == KR_OK) fill_metrics(r, row, M, m);
    kr_matrix_destroy(M);
    return st == KR_OK ? 0 : bench_lib_error(r->ctx, st, m->item->name);
}

/* speedup = csr's median / the format's median, for one matrix's rows */
static void speedups(spmv_row *rows, int n)
{
    const spmv_row *csr = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].format, "csr") && !rows[i].refused) csr = &rows[i];
    for (int i = 0; csr && i < n; i++)
        if (!rows[i].refused)
            rows[i].speedup = csr->median_s / rows[i].median_s;
}

static int host_vectors(spmv_mat *m)
{
    size_t nr = (size_t)m->A.nrows + 1, nc = (size_t)m->A.ncols + 1;
    m->x = malloc(nc * sizeof *m->x);
    m->y = malloc(nr * sizeof *m->y);
    m->yref = malloc(nr * sizeof *m->yref);
    if (!m->x || !m->y || !m->yref) {
        cli_error("out of host memory for vectors of %zu entries", nr + nc);
        return CLI_EXIT_DEVICE;
    }
    bench_fill_x(m->x, m->A.ncols);
    kr_csr_matvec(&m->A, m->x, m->yref);
    return 0;
}

static int device_vectors(spmv_run *r, spmv_mat *m)
{
    kr_status st = kr_vec_create(r->ctx, m->A.ncols, &m->vx);
    if (st == KR_OK) st = kr_vec_create(r->ctx, m->A.nrows, &m->vy);
    if (st == KR_OK) st = kr_vec_upload(m->vx, m->x);
    return st == KR_OK ? 0 : bench_lib_error(r->ctx, st, m->item->name);
}

static void mat_free(spmv_mat *m)
{
    kr_vec_destroy(m->vx);
    kr_vec_destroy(m->vy);
    free(m->x);
    free(m->y);
    free(m->yref);
    kr_csr_free(&m->A);
}

static int run_matrix(spmv_run *r, int k)
{
    spmv_mat m = {.item = &r->list.items[k]};
    int first = r->nrows;
    int rc = bench_load("bench spmv", r->ctx, m.item, &m.A);
    if (!rc)
        fprintf(stderr, "bench spmv: [%d/%d] %s (%d x %d, nnz %d)\n", k + 1,
                r->list.n, m.item->name, (int)m.A.nrows, (int)m.A.ncols,
                (int)m.A.nnz);
    if (!rc) rc = host_vectors(&m);
    if (!rc) rc = device_vectors(r, &m);
    for (int i = 0; !rc && i < r->nformats; i++)
        rc = run_format(r, &m, r->formats[i]);
    speedups(r->rows + first, r->nrows - first);
    mat_free(&m);
    return rc;
}

/* ------------------------------------------------------------ output */

enum { G_LARGE, G_LARGE_FILES, G_SMALL, NGROUPS };

static int in_group(const spmv_row *row, int g)
{
    int small = row->nnz < BENCH_SMALL_NNZ;
    if (g == G_SMALL) return small;
    return !small && (g == G_LARGE || !row->item->generated);
}

/* Geometric-mean speedup over csr of format's rows in group g. */
static double group_mean(const spmv_run *r, const char *format, int g, int *n)
{
    double v[BENCH_MAX_MATRICES];
    *n = 0;
    for (int i = 0; i < r->nrows; i++) {
        const spmv_row *row = &r->rows[i];
        if (!strcmp(row->format, format) && in_group(row, g) &&
            isfinite(row->speedup) && *n < BENCH_MAX_MATRICES)
            v[(*n)++] = row->speedup;
    }
    return bench_geomean(v, *n);
}

static int refusals(const spmv_run *r, const char *format)
{
    int n = 0;
    for (int i = 0; i < r->nrows; i++)
        n += r->rows[i].refused && !strcmp(r->rows[i].format, format);
    return n;
}

static void md_header(FILE *f, const spmv_run *r)
{
    fprintf(f,
            "# krylov bench spmv\n\n"
            "- device: %s\n- date (UTC): %s\n"
            "- settings: reps %d, warmup %d, threads %d, row order %s, "
            "formats ",
            kr_ctx_device_name(r->ctx), r->date, r->o->reps, r->o->warmup,
            kr_ctx_threads(r->ctx), r->o->permute);
    for (int i = 0; i < r->nformats; i++)
        fprintf(f, "%s%s", i ? "," : "", r->formats[i]);
    fprintf(f,
            "\n- copy bandwidth: %.2f GB/s (device-to-device copy of %zu "
            "MiB, bytes read + written, median of %d)\n"
            "- GB/s = %s, over the median time; %% copy = GB/s over the copy "
            "bandwidth\n"
            "- GFLOP/s = 2 nnz / median time; vs csr = csr median / format "
            "median, same run\n"
            "- small: nnz < %d, launch-bound; summarised apart\n\n",
            r->copy_bps * 1e-9, r->copy_bytes >> 20, BENCH_COPY_REPS,
            BENCH_SPMV_MODEL, BENCH_SMALL_NNZ);
}

static void md_row(FILE *f, const spmv_row *w)
{
    fprintf(f, "| %s | %d | %d | %s |", w->item->name, (int)w->nrows,
            (int)w->nnz, w->format);
    if (w->refused) {
        fprintf(f, " - | - | - | - | - | - | - | - | - | %s%s |\n",
                w->nnz < BENCH_SMALL_NNZ ? "small; " : "", w->note);
        return;
    }
    fprintf(f, " %.2f | %.2f | %.2f | %.1f | %.1f | ", w->median_s * 1e6,
            w->min_s * 1e6, w->gflops, w->gbps, w->pct_copy);
    bench_md_num(f, "%.3f", w->speedup);
    fprintf(f, " | %.3f | %.1f | %.3f | %s%s%s |\n", w->build_s * 1e3,
            (double)w->bytes / 1048576.0, w->padding,
            w->nnz < BENCH_SMALL_NNZ ? "small" : "",
            w->nnz < BENCH_SMALL_NNZ && *w->note ? "; " : "", w->note);
}

static void md_summary(FILE *f, const spmv_run *r)
{
    fprintf(f, "\n## Geometric-mean speedup over csr (number of matrices)\n\n"
               "| format | large (nnz >= 1e5) | large, from files | small "
               "(launch-bound) | refused |\n|---|---|---|---|---|\n");
    for (int i = 0; i < r->nformats; i++) {
        fprintf(f, "| %s |", r->formats[i]);
        for (int g = 0; g < NGROUPS; g++) {
            int n;
            double mean = group_mean(r, r->formats[i], g, &n);
            fputc(' ', f);
            bench_md_num(f, "%.3f", mean);
            fprintf(f, " (%d) |", n);
        }
        fprintf(f, " %d |\n", refusals(r, r->formats[i]));
    }
}

/* ------------------------------------- automatic against the best */

/* Where the rows of the matrix of row i end: its rows are consecutive. */
static int matrix_end(const spmv_run *r, int i)
{
    int j = i + 1;
    while (j < r->nrows && r->rows[j].item == r->rows[i].item)
        j++;
    return j;
}

/* The best speedup over csr among a matrix's rows of concrete formats:
 * krylov's own (with_csr = 0) or all of them (1, csr counting 1); NaN when
 * none ran. */
static double best_speedup(const spmv_row *rows, int n, int with_csr)
{
    double best = NAN;
    for (int i = 0; i < n; i++) {
        const spmv_row *w = &rows[i];
        int csr = !strcmp(w->format, "csr");
        if (w->automatic || !isfinite(w->speedup) || (csr && !with_csr))
            continue;
        if (isnan(best) || w->speedup > best) best = w->speedup;
    }
    return best;
}

static const spmv_row *row_of(const spmv_row *rows, int n, const char *format)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].format, format)) return &rows[i];
    return NULL;
}

/* Geometric mean over the matrices of group g of the best krylov format's
 * speedup over csr (each matrix its own best). */
static double best_krylov_mean(const spmv_run *r, int g, int *n)
{
    double v[BENCH_MAX_MATRICES];
    *n = 0;
    for (int i = 0; i < r->nrows; i = matrix_end(r, i)) {
        double b = best_speedup(&r->rows[i], matrix_end(r, i) - i, 0);
        if (in_group(&r->rows[i], g) && isfinite(b) && *n < BENCH_MAX_MATRICES)
            v[(*n)++] = b;
    }
    return bench_geomean(v, *n);
}

/* An automatic format on the matrices of one group: how many it ran on,
 * on how many its median was within 10% of the best format's (csr
 * included), and the geometric mean of best median / its median. */
typedef struct auto_stat {
    int n, within;
    double of_best;
} auto_stat;

static void auto_stats(const spmv_run *r, const char *format, int g,
                       auto_stat *s)
{
    double v[BENCH_MAX_MATRICES];
    memset(s, 0, sizeof *s);
    for (int i = 0; i < r->nrows; i = matrix_end(r, i)) {
        int n = matrix_end(r, i) - i;
        const spmv_row *a = row_of(&r->rows[i], n, format);
        double best = best_speedup(&r->rows[i], n, 1);
        if (!in_group(&r->rows[i], g) || !a || !isfinite(a->speedup) ||
            !isfinite(best) || s->n >= BENCH_MAX_MATRICES)
            continue;
        s->within += a->speedup * 1.1 >= best; /* time <= 1.1 x best's */
        v[s->n++] = a->speedup / best;
    }
    s->of_best = bench_geomean(v, s->n);
}

/* 1 when some row of format ran as an automatic choice. */
static int is_automatic(const spmv_run *r, const char *format)
{
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].automatic && !strcmp(r->rows[i].format, format))
            return 1;
    return 0;
}

static void md_auto_rows(FILE *f, const spmv_run *r, const char *format)
{
    fprintf(f, "| %s: within 10%% of the best |", format);
    for (int g = 0; g < NGROUPS; g++) {
        auto_stat s;
        auto_stats(r, format, g, &s);
        fprintf(f, " %d of %d |", s.within, s.n);
    }
    fprintf(f, "\n| %s: best median / its median, geomean |", format);
    for (int g = 0; g < NGROUPS; g++) {
        auto_stat s;
        auto_stats(r, format, g, &s);
        fputc(' ', f);
        bench_md_num(f, "%.3f", s.of_best);
        fprintf(f, " |");
    }
    fputc('\n', f);
}

static void md_auto(FILE *f, const spmv_run *r)
{
    fprintf(f, "\n## Automatic choice against the best format per matrix\n\n"
               "best krylov format = each matrix's fastest format other than "
               "csr and the automatic ones; the best = the same with csr; "
               "within 10%% = median at most 1.1x the best's\n\n"
               "| | large (nnz >= 1e5) | large, from files | small "
               "(launch-bound) |\n|---|---|---|---|\n"
               "| best krylov format per matrix: geomean speedup over csr |");
    for (int g = 0; g < NGROUPS; g++) {
        int n;
        double mean = best_krylov_mean(r, g, &n);
        fputc(' ', f);
        bench_md_num(f, "%.3f", mean);
        fprintf(f, " (%d) |", n);
    }
    fputc('\n', f);
    for (int i = 0; i < r->nformats; i++)
        if (is_automatic(r, r->formats[i])) md_auto_rows(f, r, r->formats[i]);
}

static void write_markdown(FILE *f, const void *arg)
{
    const spmv_run *r = arg;
    md_header(f, r);
    fprintf(f, "| matrix | rows | nnz | format | median us | min us | GFLOP/s "
               "| GB/s | %% copy | vs csr | build ms | MB | padding | note "
               "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
               "\n");
    for (int i = 0; i < r->nrows; i++)
        md_row(f, &r->rows[i]);
    md_summary(f, r);
    md_auto(f, r);
}

static void json_row(FILE *f, const spmv_row *w)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "matrix", w->item->name);
    cli_json_bool(&j, "generated", w->item->generated);
    cli_json_bool(&j, "small", w->nnz < BENCH_SMALL_NNZ);
    cli_json_int(&j, "nrows", w->nrows);
    cli_json_int(&j, "ncols", w->ncols);
    cli_json_int(&j, "nnz", w->nnz);
    cli_json_str(&j, "format", w->format);
    cli_json_str(&j, "status", w->refused ? "refused" : "ok");
    cli_json_str(&j, "note", w->note);
    cli_json_num(&j, "min_bytes", w->min_bytes);
    if (!w->refused) {
        cli_json_num(&j, "median_s", w->median_s);
        cli_json_num(&j, "min_s", w->min_s);
        cli_json_num(&j, "gflops", w->gflops);
        cli_json_num(&j, "gbytes_per_s", w->gbps);
        cli_json_num(&j, "percent_of_copy", w->pct_copy);
        cli_json_num(&j, "speedup_vs_csr", w->speedup);
        cli_json_num(&j, "build_s", w->build_s);
        cli_json_int(&j, "device_bytes", (long long)w->bytes);
        cli_json_num(&j, "padding_ratio", w->padding);
        cli_json_num(&j, "max_rel_diff_from_reference", w->rel_err);
        cli_json_str(&j, "format_chosen", w->chosen);
        cli_json_str(&j, "format_reason", w->reason);
    }
    cli_json_end(&j);
}

static void json_settings(cli_json *j, const spmv_run *r)
{
    char formats[512] = "";
    for (int i = 0; i < r->nformats; i++) {
        size_t used = strlen(formats);
        snprintf(formats + used, sizeof formats - used, "%s%s", i ? "," : "",
                 r->formats[i]);
    }
    cli_json_open(j, "settings");
    cli_json_int(j, "reps", r->o->reps);
    cli_json_int(j, "warmup", r->o->warmup);
    cli_json_str(j, "formats", formats);
    cli_json_str(j, "permutation", r->o->permute);
    bench_json_run(j, r->o->device, r->ctx, r->copy_bytes);
    cli_json_int(j, "small_nnz_below", BENCH_SMALL_NNZ);
    cli_json_close(j);
}

static const char *const group_keys[NGROUPS] = {"large", "large_from_files",
                                                "small"};

static void json_summary(cli_json *j, const spmv_run *r)
{
    cli_json_key(j, "summary");
    fputc('[', j->f);
    for (int i = 0; i < r->nformats; i++) {
        cli_json s;
        fputs(i ? "," : "", j->f);
        cli_json_begin(&s, j->f);
        cli_json_str(&s, "format", r->formats[i]);
        for (int g = 0; g < NGROUPS; g++) {
            char key[64];
            int n;
            double mean = group_mean(r, r->formats[i], g, &n);
            snprintf(key, sizeof key, "geomean_speedup_%s", group_keys[g]);
            cli_json_num(&s, key, mean);
            snprintf(key, sizeof key, "matrices_%s", group_keys[g]);
            cli_json_int(&s, key, n);
        }
        cli_json_int(&s, "refused", refusals(r, r->formats[i]));
        cli_json_end(&s);
    }
    fputc(']', j->f);
}

static void json_auto_format(cli_json *j, const spmv_run *r, const char *format)
{
    cli_json s;
    cli_json_begin(&s, j->f);
    cli_json_str(&s, "format", format);
    for (int g = 0; g < NGROUPS; g++) {
        char key[64];
        auto_stat a;
        auto_stats(r, format, g, &a);
        snprintf(key, sizeof key, "matrices_%s", group_keys[g]);
        cli_json_int(&s, key, a.n);
        snprintf(key, sizeof key, "within_10pct_of_best_%s", group_keys[g]);
        cli_json_int(&s, key, a.within);
        snprintf(key, sizeof key, "geomean_best_over_auto_time_%s",
                 group_keys[g]);
        cli_json_num(&s, key, a.of_best);
    }
    cli_json_end(&s);
}

/* "best_krylov_format": geomean speedups of each matrix's fastest krylov
 * format; "automatic": each automatic format against the best. */
static void json_auto_summary(cli_json *j, const spmv_run *r)
{
    cli_json_open(j, "best_krylov_format");
    for (int g = 0; g < NGROUPS; g++) {
        char key[64];
        int n;
        double mean = best_krylov_mean(r, g, &n);
        snprintf(key, sizeof key, "geomean_speedup_%s", group_keys[g]);
        cli_json_num(j, key, mean);
        snprintf(key, sizeof key, "matrices_%s", group_keys[g]);
        cli_json_int(j, key, n);
    }
    cli_json_close(j);
    cli_json_key(j, "automatic");
    fputc('[', j->f);
    for (int i = 0, k = 0; i < r->nformats; i++) {
        if (!is_automatic(r, r->formats[i])) continue;
        fputs(k++ ? "," : "", j->f);
        json_auto_format(j, r, r->formats[i]);
    }
    fputc(']', j->f);
}

static void write_json(FILE *f, const void *arg)
{
    const spmv_run *r = arg;
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "command", "bench spmv");
    cli_json_str(&j, "krylov_version", KR_VERSION_STRING);
    cli_json_str(&j, "device", kr_ctx_device_name(r->ctx));
    cli_json_str(&j, "date_utc", r->date);
    json_settings(&j, r);
    cli_json_num(&j, "copy_bytes_per_s", r->copy_bps);
    cli_json_str(&j, "bytes_model", BENCH_SPMV_MODEL);
    cli_json_key(&j, "rows");
    fputc('[', f);
    for (int i = 0; i < r->nrows; i++) {
        fputs(i ? "," : "", f);
        json_row(f, &r->rows[i]);
    }
    fputc(']', f);
    json_summary(&j, r);
    json_auto_summary(&j, r);
    cli_json_end(&j);
}

static int run_all(spmv_run *r)
{
    int rc = bench_start(r->o->device, r->o->build, r->o->threads,
                         r->o->copy_mb, &r->ctx, &r->copy_bytes, &r->copy_bps,
                         r->date, sizeof r->date);
    if (!rc) {
        r->rows = calloc((size_t)r->list.n * (size_t)r->nformats + 1,
                         sizeof *r->rows);
        if (!r->rows) cli_error("out of host memory for the results");
        if (!r->rows) rc = CLI_EXIT_DEVICE;
    }
    for (int k = 0; !rc && k < r->list.n; k++)
        rc = run_matrix(r, k);
    if (!rc)
        rc = bench_outputs(r->o->markdown, r->o->json, write_markdown,
                           write_json, r);
    return rc;
}

int cli_bench_spmv(int argc, char **argv)
{
    spmv_opts o;
    spmv_run r = {.o = &o};
    int rc = parse(&r, &o, argc, argv);
    if (!rc) rc = run_all(&r);
    free(r.rows);
    kr_ctx_destroy(r.ctx);
    bench_list_free(&r.list);
    return rc == CLI_EXIT_HELP ? CLI_EXIT_OK : rc;
}
