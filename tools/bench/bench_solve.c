/* krylov bench solve: for every matrix, --reps full solves (matrix build,
 * preconditioner build, kr_solve from x0 = 0 with b = A*ones, as krylov
 * solve does), reporting the median setup and iteration times, the time
 * per iteration, and next to it the bytes an iteration must move (the
 * method's own model, kr_solver_ops.iter_model), the time those bytes take at
 * the copy bandwidth measured in the same run, and measured / floor. */
#include "tools/bench/bench.h"
#include "tools/bench/bench_common.h"
#include "tools/bench/bench_model.h"
#include "tools/bench/bench_multi.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct solve_opts {
    BENCH_COMMON_FIELDS;
    const char *method, *precond, *format;
    int s, restart, maxit, warmup, breakdown_restarts;
    int nrhs; /* > 0: also k right-hand sides together against k singles */
    double rtol, atol;
} solve_opts;

/* Iterations of a warm-up solve at most: it is there to load the kernels
 * and fill the memory pool, not to converge. */
#define WARMUP_MAXIT 100

/* The setup floor's runs (bench_time_setup_floor): the untimed ones load
 * the fill kernel if the context did not, then the median of the rest. */
#define FLOOR_WARMUP 5
#define FLOOR_REPS 50

typedef struct solve_row {
    const bench_item *item;
    int32_t n, nnz;
    int ok;               /* the solves ran; else note says why not   */
    char note[256];       /* "failed: <message>", "not square", ...   */
    char chosen[32];      /* the concrete format (--format auto picks)   */
    char format_why[640]; /* why auto picked it, or ""               */
    int iterations, its_varied, restarts;
    int breakdown_restarts;   /* restarts from x after a breakdown */
    int32_t blocks, singular; /* the preconditioner's diagonal blocks */
    kr_pc_kind pc_kind;       /* as the method's loop sees it          */
    kr_reason reason;
    double true_rel; /* ||b - A x|| / ||b||                     */
    double setup_s, matrix_s, precond_s, solve_s, per_iter_s; /* medians */
    double upload_s; /* median: bjacobi's upload of A (part of precond_s) */
    /* medians: matrix_s's stages (kr_matrix_build_stages), the CSR's
     * upload (a device build; else 0) and the format's build */
    double csr_upload_s, format_s;
    double spmv_bytes, iter_bytes, floor_s, ratio;
    bench_iter_model model;
    bench_multi multi; /* --nrhs */
} solve_row;

typedef struct solve_run {
    const solve_opts *o;
    bench_list list;
    kr_ctx *ctx;
    size_t copy_bytes;
    double copy_bps;
    double setup_floor_s; /* one launch + one download; NAN on the CPU */
    char date[32];
    solve_row *rows;
    int nrows;
} solve_run;

/* One matrix while its solves run; t holds each rep's times. */
#define SOLVE_TIMES 8
typedef struct solve_mat {
    kr_csr A;
    kr_vec *b, *x;
    /* setup, matrix, precond, solve, per iteration, bjacobi's upload,
     * the matrix's CSR upload, its format build */
    double *t[SOLVE_TIMES];
} solve_mat;

#define OFF(field) offsetof(solve_opts, field)

static const cli_opt solve_table[] = {
    {"--method", NULL, CLI_CHOICE, OFF(method), 0, 0, kr_method_names, "M",
     "Krylov method"},
    {"--precond", NULL, CLI_CHOICE, OFF(precond), 0, 0, kr_precond_names, "P",
     "preconditioner"},
    {"--format", NULL, CLI_CHOICE, OFF(format), 0, 0, kr_format_names, "F",
     "sparse matrix format, as in krylov solve; each row names the one that "
     "ran"},
    {"--rtol", NULL, CLI_REAL, OFF(rtol), 0, INFINITY, NULL, "X",
     "converged when ||r|| <= max(rtol*||b||, atol)"},
    {"--atol", NULL, CLI_REAL, OFF(atol), 0, INFINITY, NULL, "X",
     "absolute residual tolerance"},
    {"--maxit", NULL, CLI_INT, OFF(maxit), 0, INT_MAX, NULL, "N",
     "maximum number of iterations"},
    {"--breakdown-restarts", NULL, CLI_INT, OFF(breakdown_restarts), 0, 100,
     NULL, "N",
     "restarts from x after a breakdown, as in krylov solve (the rows give "
     "the count)"},
    {"--s", NULL, CLI_INT, OFF(s), 1, 64, NULL, "S",
     "IDR(s) shadow space dimension"},
    {"--restart", NULL, CLI_INT, OFF(restart), 1, 1000, NULL, "M",
     "GMRES restart length"},
    {"--reps", NULL, CLI_INT, OFF(reps), 1, 1000, NULL, "N",
     "solves per matrix (setup included); medians are reported"},
    {"--warmup", NULL, CLI_INT, OFF(warmup), 0, 100, NULL, "N",
     "untimed runs per matrix before the reps: the whole setup and at most "
     "100 iterations, so that one-time costs (loading the GPU kernels, "
     "filling the memory pool) stay out of the medians"},
    {"--nrhs", NULL, CLI_INT, OFF(nrhs), 0, KR_MULTI_MAX_COLUMNS, NULL, "K",
     "also solve K right-hand sides (b_j = A x_j, x_j random, seed 1) "
     "together (kr_solve_multi) and as K single solves, on the same matrix "
     "and preconditioner, --reps times each: a second table gives both "
     "times, the speedup and the time per column per iteration; 0: off"},
    BENCH_COMMON_OPTS(solve_opts),
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec solve_spec = {"bench solve", solve_table,
                                    BENCH_MAX_MATRICES, OFF(help)};

static void solve_defaults(solve_opts *o)
{
    kr_solve_options d;
    kr_solve_options_default(&d);
    memset(o, 0, sizeof *o);
    o->method = d.method;
    o->s = d.s;
    o->restart = d.restart;
    o->rtol = d.rtol;
    o->atol = d.atol;
    o->maxit = d.maxit;
    o->breakdown_restarts = d.breakdown_restarts;
    o->precond = "jacobi";
    o->format = KR_FORMAT_DEFAULT;
    o->device = "auto";
    o->build = "env";
    o->reps = 3;
    o->warmup = 1;
}

static void print_help(void)
{
    solve_opts d;
    solve_defaults(&d);
    printf("usage: krylov bench solve [A.mtx ...] [--gen SPEC ...] "
           "[options]\n\n"
           "Solves A x = b (b = A*ones, x0 = 0, as krylov solve does) --reps "
           "times per\nmatrix, after --warmup untimed runs, and reports the "
           "medians of the setup\n(matrix build + preconditioner build), the "
           "iterations and the time per\niteration, next to the bytes one "
           "iteration must move (SpMVs at their\nminimum bytes, "
           "preconditioner and vector passes counted from\n"
           "solver/<method>.c; the model is printed with the results), the "
           "time those\nbytes take at the copy bandwidth measured in the same "
           "run, and measured /\nfloor. On a GPU it also measures the setup "
           "floor: one kernel launch plus one\n8-byte download, "
           "synchronised (setup_floor_s). A solve that does not\nconverge "
           "is reported, not an error (exit 0). The default matrix set is\n"
           "that of 'krylov bench spmv'.\n\n"
           "options:\n");
    cli_print_options(stdout, solve_table, &d);
    printf("\n");
    cli_print_exit_codes(stdout);
    printf("\nexample:\n  krylov bench solve --gen poisson3d:64 --method cg "
           "--reps 5 --json solve.json\n");
}

static int parse(solve_run *r, solve_opts *o, int argc, char **argv)
{
    const char *gens[argc + 1], *files[argc + 1];
    char *rest[argc + 1];
    int ngens, nrest, nfiles;
    solve_defaults(o);
    int rc = bench_split_gens("bench solve", solve_table, argc, argv, gens,
                              &ngens, rest, &nrest);
    if (!rc) rc = cli_parse(&solve_spec, nrest, rest, o, files, &nfiles);
    if (rc == CLI_EXIT_HELP) print_help();
    if (!rc) rc = bench_check_outputs(o->markdown, o->json);
    if (!rc) rc = bench_list_make(&r->list, files, nfiles, gens, ngens);
    return rc;
}

static void solver_options(const solve_opts *o, kr_solve_options *opt)
{
    kr_solve_options_default(opt);
    opt->method = o->method;
    opt->s = o->s;
    opt->restart = o->restart;
    opt->rtol = o->rtol;
    opt->atol = o->atol;
    opt->maxit = o->maxit;
    opt->breakdown_restarts = o->breakdown_restarts;
}

/* A status that ends this matrix's row (or, if fatal, the run). */
static int row_failed(solve_run *r, solve_row *row, kr_status st)
{
    if (bench_fatal(st)) return bench_lib_error(r->ctx, st, row->item->name);
    snprintf(row->note, sizeof row->note, "failed: %s", kr_ctx_error(r->ctx));
    fprintf(stderr, "bench solve: %s: %s\n", row->item->name, row->note);
    return 0;
}

static void record(solve_row *row, solve_mat *m, int rep, const double *t,
                   const kr_result *res)
{
    for (int i = 0; i < 4; i++)
        m->t[i][rep] = t[i];
    m->t[5][rep] = t[4];
    m->t[6][rep] = t[5];
    m->t[7][rep] = t[6];
    m->t[4][rep] = res->iterations ? t[3] / res->iterations : NAN;
    if (rep == 0) {
        row->iterations = res->iterations;
        row->restarts = res->true_residual_restarts;
        row->breakdown_restarts = res->breakdown_restarts;
        row->reason = res->reason;
        row->true_rel = res->bnorm > 0 ? res->true_rnorm / res->bnorm : NAN;
    }
    row->its_varied |= res->iterations != row->iterations;
}

static void note_format(solve_row *row, const kr_matrix *M)
{
    snprintf(row->chosen, sizeof row->chosen, "%s", kr_matrix_format(M));
    snprintf(row->format_why, sizeof row->format_why, "%s",
             kr_matrix_format_reason(M));
}

static void note_blocks(solve_row *row, const kr_precond *P)
{
    row->blocks = kr_precond_block_count(P);
    row->singular = kr_precond_singular_blocks(P);
    row->pc_kind = kr_precond_kind(P);
}

/* The part of P's setup that uploaded A (its stage "upload"), 0 when
 * it has none. */
static double upload_seconds(const kr_precond *P)
{
    kr_precond_info info;
    if (!P || kr_precond_get_info(P, &info) != KR_OK) return 0.0;
    for (int i = 0; i < info.stages; i++)
        if (!strcmp(info.stage[i].name, "upload")) return info.stage[i].seconds;
    return 0.0;
}

/* A device build (--build device) sets the preconditioner up from the
 * matrix's CSR view; a host build from host CSR, as before. */
static kr_status make_precond(solve_run *r, kr_matrix *M, const kr_csr *A,
                              kr_precond **P)
{
    if (kr_ctx_build(r->ctx) != KR_BUILD_HOST)
        return kr_precond_create_matrix(r->ctx, M, A, r->o->precond, NULL, P);
    return kr_precond_create(r->ctx, A, r->o->precond, P);
}

/* One solve, setup included; t = setup, matrix, precond, solve seconds.
 * rep < 0: a warm-up, capped at WARMUP_MAXIT iterations and not recorded. */
static kr_status one_rep(solve_run *r, solve_row *row, solve_mat *m, int rep)
{
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_result res = {0};
    kr_solve_options opt;
    solver_options(r->o, &opt);
    if (rep < 0 && opt.maxit > WARMUP_MAXIT) opt.maxit = WARMUP_MAXIT;
    double t0 = kr_wtime();
    kr_status st = kr_matrix_create(r->ctx, &m->A, r->o->format, &M);
    double t1 = kr_wtime();
    if (st == KR_OK && rep == 0) note_format(row, M);
    if (st == KR_OK) st = make_precond(r, M, &m->A, &P);
    double t2 = kr_wtime();
    if (st == KR_OK && rep == 0) note_blocks(row, P);
    if (st == KR_OK) st = kr_vec_fill(m->x, 0.0);
    if (st == KR_OK) st = kr_solve(r->ctx, M, P, m->b, m->x, &opt, &res);
    double t[7] = {t2 - t0, t1 - t0, t2 - t1, res.solve_seconds,
                   upload_seconds(P)};
    kr_matrix_build_stages(M, &t[5], &t[6]);
    if (st == KR_OK && rep >= 0) record(row, m, rep, t, &res);
    kr_result_free(&res);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    return st;
}

/* b = A*ones on the device, x allocated; the time arrays. Returns an exit
 * code: nothing here fails but for memory or the device. */
static int prepare(solve_run *r, const solve_row *row, solve_mat *m)
{
    size_t n = (size_t)m->A.nrows + 1;
    double *ones = malloc(n * sizeof *ones), *b = malloc(n * sizeof *b);
    int bad = !ones || !b;
    for (int i = 0; i < SOLVE_TIMES; i++) {
        m->t[i] = malloc((size_t)r->o->reps * sizeof(double));
        bad |= !m->t[i];
    }
    if (bad) {
        free(ones);
        free(b);
        cli_error("out of host memory");
        return CLI_EXIT_DEVICE;
    }
    for (size_t i = 0; i < n; i++)
        ones[i] = 1.0;
    kr_csr_matvec(&m->A, ones, b);
    kr_status st = kr_vec_create(r->ctx, m->A.nrows, &m->b);
    if (st == KR_OK) st = kr_vec_create(r->ctx, m->A.nrows, &m->x);
    if (st == KR_OK) st = kr_vec_upload(m->b, b);
    free(ones);
    free(b);
    return st == KR_OK ? 0 : bench_lib_error(r->ctx, st, row->item->name);
}

static void finish_row(solve_run *r, solve_row *row, solve_mat *m)
{
    int reps = r->o->reps;
    row->ok = 1;
    row->setup_s = bench_median(m->t[0], reps);
    row->matrix_s = bench_median(m->t[1], reps);
    row->precond_s = bench_median(m->t[2], reps);
    row->solve_s = bench_median(m->t[3], reps);
    row->per_iter_s = bench_median(m->t[4], reps);
    row->upload_s = bench_median(m->t[5], reps);
    row->csr_upload_s = bench_median(m->t[6], reps);
    row->format_s = bench_median(m->t[7], reps);
    kr_solve_options opt;
    solver_options(r->o, &opt);
    bench_iter_model_make(&opt, row->n, row->pc_kind, row->iterations,
                          &row->model);
    row->spmv_bytes = bench_spmv_min_bytes(row->n, row->n, row->nnz);
    row->iter_bytes = bench_iter_bytes(&row->model, row->spmv_bytes, row->n);
    row->floor_s = row->iter_bytes / r->copy_bps;
    row->ratio = row->per_iter_s / row->floor_s;
    if (row->multi.ok)
        bench_multi_floors(&row->multi, row->iter_bytes, row->model.spmvs,
                           row->n, row->nnz, r->copy_bps);
    if (row->its_varied)
        snprintf(row->note, sizeof row->note, "iterations varied between reps");
}

static void mat_free(solve_mat *m)
{
    kr_vec_destroy(m->b);
    kr_vec_destroy(m->x);
    for (int i = 0; i < SOLVE_TIMES; i++)
        free(m->t[i]);
    kr_csr_free(&m->A);
}

/* --nrhs: the multi-column solve against the single solves, one setup */
static kr_status run_multi(solve_run *r, solve_row *row, solve_mat *m)
{
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_solve_options opt;
    solver_options(r->o, &opt);
    kr_status st = kr_matrix_create(r->ctx, &m->A, r->o->format, &M);
    if (st == KR_OK) st = kr_precond_create(r->ctx, &m->A, r->o->precond, &P);
    if (st == KR_OK)
        st = bench_multi_run(r->ctx, &m->A, M, P, &opt, r->o->nrhs, r->o->reps,
                             r->o->warmup, WARMUP_MAXIT, &row->multi);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    return st;
}

static int run_solves(solve_run *r, solve_row *row, solve_mat *m)
{
    int rc = prepare(r, row, m);
    if (rc) return rc;
    kr_status st = KR_OK;
    for (int rep = -r->o->warmup; rep < r->o->reps && st == KR_OK; rep++)
        st = one_rep(r, row, m, rep);
    if (st == KR_OK && r->o->nrhs) st = run_multi(r, row, m);
    if (st != KR_OK) return row_failed(r, row, st);
    finish_row(r, row, m);
    return 0;
}

static int run_matrix(solve_run *r, int k)
{
    solve_mat m = {0};
    solve_row *row = &r->rows[r->nrows];
    memset(row, 0, sizeof *row);
    row->item = &r->list.items[k];
    int rc = bench_load("bench solve", r->ctx, row->item, &m.A);
    if (!rc) {
        r->nrows++;
        row->n = m.A.nrows;
        row->nnz = m.A.nnz;
        fprintf(stderr, "bench solve: [%d/%d] %s (n %d, nnz %d)\n", k + 1,
                r->list.n, row->item->name, (int)m.A.nrows, (int)m.A.nnz);
    }
    if (!rc && m.A.nrows != m.A.ncols)
        snprintf(row->note, sizeof row->note, "skipped: %d x %d, not square",
                 (int)m.A.nrows, (int)m.A.ncols);
    else if (!rc)
        rc = run_solves(r, row, &m);
    mat_free(&m);
    return rc;
}

/* ------------------------------------------------------------ output */

/* What no device setup can go below, to read the setup times against. */
static void md_setup_floor(FILE *f, const solve_run *r)
{
    if (isnan(r->setup_floor_s)) {
        fprintf(f, "- setup floor: none on the CPU backend (no kernel "
                   "launch; setup_floor_s is null in JSON)\n");
        return;
    }
    fprintf(f,
            "- setup floor: %.1f us, one kernel launch (a fill of one "
            "element) + one 8-byte download, synchronised; host wall clock, "
            "median of %d after %d untimed\n",
            r->setup_floor_s * 1e6, FLOOR_REPS, FLOOR_WARMUP);
}

static void md_header(FILE *f, const solve_run *r)
{
    const solve_opts *o = r->o;
    fprintf(f,
            "# krylov bench solve\n\n"
            "- device: %s\n- date (UTC): %s\n"
            "- settings: method %s, precond %s, format %s, rtol %g, atol %g, "
            "maxit %d, s %d, restart %d, breakdown restarts %d, reps %d, "
            "warmup %d, threads %d; b = A*ones, x0 = 0\n"
            "- copy bandwidth: %.2f GB/s (device-to-device copy of %zu MiB, "
            "bytes read + written, median of %d)\n"
            "- times are medians of the reps, after the warm-up runs (each "
            "the whole setup and at most %d iterations, untimed); setup = "
            "matrix build + preconditioner build (the note splits it: the "
            "CSR's upload, a device build's only, the format's build, the "
            "preconditioner's build); build %s; ms/it = solve time / "
            "iterations\n"
            "- floor = bytes per iteration / copy bandwidth; SpMV bytes: %s\n",
            kr_ctx_device_name(r->ctx), r->date, o->method, o->precond,
            o->format, o->rtol, o->atol, o->maxit, o->s, o->restart,
            o->breakdown_restarts, o->reps, o->warmup, kr_ctx_threads(r->ctx),
            r->copy_bps * 1e-9, r->copy_bytes >> 20, BENCH_COPY_REPS,
            WARMUP_MAXIT,
            kr_ctx_build(r->ctx) == KR_BUILD_HOST     ? "host"
            : kr_ctx_build(r->ctx) == KR_BUILD_DEVICE ? "device"
                                                      : "auto",
            BENCH_SPMV_MODEL);
    if (kr_ctx_warmup_seconds(r->ctx) > 0)
        fprintf(f,
                "- context creation loaded the solvers' kernels in %.3f ms "
                "(not in any setup; KRYLOV_WARMUP=0 skips it)\n",
                kr_ctx_warmup_seconds(r->ctx) * 1e3);
    md_setup_floor(f, r);
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].ok) { /* GMRES's depends on the iterations: in JSON */
            fprintf(f, "- bytes per iteration: %s\n", r->rows[i].model.text);
            break;
        }
    fputc('\n', f);
}

/* The restarts from x a solve made, for the note column. */
static void md_restarts(FILE *f, const solve_row *w)
{
    if (w->restarts > 0)
        fprintf(f, "; %d true-residual restart(s)", w->restarts);
    if (w->breakdown_restarts > 0)
        fprintf(f, "; %d breakdown restart(s)", w->breakdown_restarts);
}

static void md_row(FILE *f, const solve_row *w)
{
    fprintf(f, "| %s | %d | %d |", w->item->name, (int)w->n, (int)w->nnz);
    if (!w->ok) {
        fprintf(f, " - | - | - | - | - | - | - | - | - | - | %s |\n", w->note);
        return;
    }
    fprintf(f, " %d | %s | %.2e | %.3f | %.3f | %.3f | ", w->iterations,
            kr_reason_name(w->reason), w->true_rel, w->setup_s * 1e3,
            w->solve_s * 1e3, (w->setup_s + w->solve_s) * 1e3);
    /* after 0 iterations there is no time per iteration: "-", not nan */
    bench_md_num(f, "%.4f", w->per_iter_s * 1e3);
    fprintf(f, " | %.3f | %.4f | ", w->iter_bytes / 1048576.0,
            w->floor_s * 1e3);
    bench_md_num(f, "%.2f", w->ratio);
    fprintf(f,
            " | format %s; setup: upload %.3f, format %.3f, precond "
            "%.3f ms",
            w->chosen, w->csr_upload_s * 1e3, w->format_s * 1e3,
            w->precond_s * 1e3);
    md_restarts(f, w);
    fprintf(f, "%s%s |\n", *w->note ? "; " : "", w->note);
}

static void write_markdown(FILE *f, const void *arg)
{
    const solve_run *r = arg;
    md_header(f, r);
    fprintf(f, "| matrix | n | nnz | its | reason | true rel. res. | setup ms "
               "| solve ms | total ms | ms/it | MB/it | floor ms/it | "
               "measured/floor | note |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < r->nrows; i++)
        md_row(f, &r->rows[i]);
    if (!r->o->nrhs) return;
    bench_multi_md_header(f);
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].ok)
            bench_multi_md_row(f, r->rows[i].item->name, &r->rows[i].multi);
}

static void json_row(FILE *f, const solve_row *w, int nrhs)
{
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "matrix", w->item->name);
    cli_json_bool(&j, "generated", w->item->generated);
    cli_json_int(&j, "n", w->n);
    cli_json_int(&j, "nnz", w->nnz);
    cli_json_str(&j, "status", w->ok ? "ok" : "skipped");
    cli_json_str(&j, "note", w->note);
    if (w->ok) {
        cli_json_int(&j, "iterations", w->iterations);
        cli_json_bool(&j, "iterations_varied", w->its_varied);
        cli_json_str(&j, "reason", kr_reason_name(w->reason));
        cli_json_num(&j, "true_relative_residual", w->true_rel);
        cli_json_int(&j, "true_residual_restarts", w->restarts);
        cli_json_int(&j, "breakdown_restarts", w->breakdown_restarts);
        cli_json_int(&j, "precond_blocks", w->blocks);
        cli_json_int(&j, "precond_singular_blocks", w->singular);
        cli_json_num(&j, "setup_s", w->setup_s);
        cli_json_num(&j, "matrix_build_s", w->matrix_s);
        cli_json_num(&j, "matrix_upload_s", w->csr_upload_s);
        cli_json_num(&j, "format_build_s", w->format_s);
        cli_json_num(&j, "precond_build_s", w->precond_s);
        if (w->blocks > 0) /* bjacobi: what of its build was A's upload */
            cli_json_num(&j, "precond_upload_s", w->upload_s);
        cli_json_num(&j, "solve_s", w->solve_s);
        cli_json_num(&j, "time_to_solution_s", w->setup_s + w->solve_s);
        cli_json_num(&j, "seconds_per_iteration", w->per_iter_s);
        cli_json_num(&j, "spmv_min_bytes", w->spmv_bytes);
        cli_json_num(&j, "spmvs_per_iteration", w->model.spmvs);
        cli_json_num(&j, "precond_per_iteration", w->model.pcs);
        cli_json_num(&j, "vector_passes_per_iteration", w->model.vectors);
        cli_json_num(&j, "bytes_per_iteration", w->iter_bytes);
        cli_json_num(&j, "floor_seconds_per_iteration", w->floor_s);
        cli_json_num(&j, "measured_over_floor", w->ratio);
        cli_json_str(&j, "bytes_model", w->model.text);
        cli_json_str(&j, "format_chosen", w->chosen);
        cli_json_str(&j, "format_reason", w->format_why);
        if (nrhs) bench_multi_json(&j, &w->multi);
    }
    cli_json_end(&j);
}

static void json_settings(cli_json *j, const solve_run *r)
{
    const solve_opts *o = r->o;
    cli_json_open(j, "settings");
    cli_json_str(j, "method", o->method);
    cli_json_str(j, "precond", o->precond);
    cli_json_str(j, "format", o->format);
    cli_json_num(j, "rtol", o->rtol);
    cli_json_num(j, "atol", o->atol);
    cli_json_int(j, "maxit", o->maxit);
    cli_json_int(j, "s", o->s);
    cli_json_int(j, "restart", o->restart);
    cli_json_int(j, "breakdown_restarts_max", o->breakdown_restarts);
    cli_json_int(j, "reps", o->reps);
    cli_json_int(j, "warmup", o->warmup);
    cli_json_int(j, "nrhs", o->nrhs);
    bench_json_run(j, o->device, r->ctx, r->copy_bytes);
    cli_json_close(j);
}

static void write_json(FILE *f, const void *arg)
{
    const solve_run *r = arg;
    cli_json j;
    cli_json_begin(&j, f);
    cli_json_str(&j, "command", "bench solve");
    cli_json_str(&j, "krylov_version", KR_VERSION_STRING);
    cli_json_str(&j, "device", kr_ctx_device_name(r->ctx));
    cli_json_str(&j, "date_utc", r->date);
    json_settings(&j, r);
    cli_json_num(&j, "copy_bytes_per_s", r->copy_bps);
    cli_json_num(&j, "setup_floor_s", r->setup_floor_s); /* NAN: null */
    cli_json_str(&j, "spmv_bytes_model", BENCH_SPMV_MODEL);
    cli_json_key(&j, "rows");
    fputc('[', f);
    for (int i = 0; i < r->nrows; i++) {
        fputs(i ? "," : "", f);
        json_row(f, &r->rows[i], r->o->nrhs);
    }
    fputc(']', f);
    cli_json_end(&j);
}

/* The setup floor on a GPU context; NAN on the CPU, which launches
 * nothing. Returns an exit code. */
static int measure_setup_floor(solve_run *r)
{
    r->setup_floor_s = NAN;
    if (kr_ctx_device(r->ctx) != KR_DEVICE_CUDA) return 0;
    kr_status st = bench_time_setup_floor(r->ctx, FLOOR_WARMUP, FLOOR_REPS,
                                          &r->setup_floor_s);
    return st == KR_OK ? 0 : bench_lib_error(r->ctx, st, "setup floor");
}

static int run_all(solve_run *r)
{
    int rc = bench_start(r->o->device, r->o->build, r->o->threads,
                         r->o->copy_mb, &r->ctx, &r->copy_bytes, &r->copy_bps,
                         r->date, sizeof r->date);
    if (!rc) rc = measure_setup_floor(r);
    if (!rc) {
        r->rows = calloc((size_t)r->list.n + 1, sizeof *r->rows);
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

int cli_bench_solve(int argc, char **argv)
{
    solve_opts o;
    solve_run r = {.o = &o};
    int rc = parse(&r, &o, argc, argv);
    if (!rc) rc = run_all(&r);
    free(r.rows);
    kr_ctx_destroy(r.ctx);
    bench_list_free(&r.list);
    return rc == CLI_EXIT_HELP ? CLI_EXIT_OK : rc;
}
