/* krylov solve: parse, load the problem (A from a file or a generator, b
 * and x0 from files or defaults), set up the matrix and preconditioner,
 * solve, report, and write the solution and history. Without -b the
 * right-hand side is A*ones, so the forward error is known too. Files are
 * Matrix Market or PETSc binary, told apart by their first bytes. */
#include "block_cond.h"
#include "commands.h"
#include "graph_cli.h"
#include "history.h"
#include "interrupt.h"
#include "krylov.h"
#include "options.h"
#include "output.h"
#include "petsc_style.h"
#include "report.h"
#include "solve.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const *device_names(void)
{
    static const char *const names[] = {"auto", "cpu", "cuda", NULL};
    return names;
}

/* --bjacobi-singular, in the order of kr_singular_policy */
static const char *const *singular_names(void)
{
    static const char *const names[] = {"jacobi", "identity", "error", NULL};
    return names;
}

#define OFF(field) offsetof(solve_opts, field)

/* The row orders and "auto" (the trained model's pick). */
static const char *const *permute_choices(void)
{
    static const char *names[64];
    if (!names[0]) {
        int n = 0;
        for (const char *const *p = kr_permute_names(); *p && n < 62; p++)
            names[n++] = *p;
        names[n] = "auto";
    }
    return names;
}

static const cli_opt solve_table[] = {
    {"-b", "--rhs", CLI_STR, OFF(rhs), 0, 0, NULL, "FILE",
     "right-hand side, n x 1 or a PETSc binary vector (default: b = A*ones, "
     "then the forward error ||x - 1|| is reported); a Matrix Market array "
     "n x k (k = 2..64) holds k right-hand sides, solved together (one "
     "SpMM and one preconditioner application per iteration, each column "
     "with its own scalars and stopping test) and reported column by "
     "column"},
    {"--nrhs", NULL, CLI_INT, OFF(nrhs), 1, KR_MULTI_MAX_COLUMNS, NULL, "K",
     "solve K generated right-hand sides together: b_j = A x_j for random "
     "x_j (uniform in [-1, 1), --rhs-seed), so each column's forward error "
     "||x_j - x_j*|| is reported; not with -b"},
    {"--rhs-seed", NULL, CLI_INT, OFF(rhs_seed), 0, INT_MAX, NULL, "S",
     "seed of --nrhs's solutions x_j (printed in the report)"},
    {"--x0", NULL, CLI_STR, OFF(x0), 0, 0, NULL, "FILE",
     "initial guess, n x 1 (n x k with k right-hand sides) (default: 0)"},
    {"-o", "--output", CLI_STR, OFF(out), 0, 0, NULL, "FILE",
     "write the solution x (PETSc binary when FILE ends in .bin, else Matrix "
     "Market, gzip-compressed when it ends in .gz; k right-hand sides: the "
     "n x k solution, Matrix Market only); also when not converged "
     "(the last iterate, exit 1), never after an error or an interrupt "
     "(unless --save-on-interrupt); checked before the work"},
    {"--save-on-interrupt", NULL, CLI_FLAG, OFF(save_on_interrupt), 0, 0, NULL,
     NULL,
     "when SIGINT or SIGTERM stops the solve (reason INTERRUPTED, exit "
     "130), still write -o (the current iterate) and --history"},
    {"--gen", NULL, CLI_STR, OFF(gen), 0, 0, NULL, "SPEC",
     "generate A (see below) instead of reading A.mtx"},
    {"--method", NULL, CLI_CHOICE, OFF(method), 0, 0, kr_method_names, "M",
     "Krylov method"},
    {"--s", NULL, CLI_INT, OFF(s), 1, 64, NULL, "S",
     "IDR(s) shadow space dimension"},
    {"--restart", NULL, CLI_INT, OFF(restart), 1, 1000, NULL, "M",
     "GMRES restart length"},
    {"--precond", NULL, CLI_CHOICE, OFF(precond), 0, 0, kr_precond_names, "P",
     "preconditioner"},
    {"--block-size", NULL, CLI_INT, OFF(block_size), 1, 32, NULL, "K",
     "bjacobi: largest diagonal block (supervariable blocks merged up to K "
     "rows)"},
    {"--blocks", NULL, CLI_STR, OFF(blocks), 0, 0, NULL, "FILE",
     "bjacobi: the block sizes instead, a Matrix Market array (nb x 1) of "
     "integers 1..32 summing to n"},
    {"--blocking", NULL, CLI_CHOICE, OFF(blocking), 0, 0, cli_blocking_names,
     "B",
     "bjacobi: supervariable blocks, or scc: no block across a change of "
     "strongly connected component of A's graph (long SCC runs cut by "
     "supervariables)"},
    {"--bjacobi-singular", NULL, CLI_CHOICE, OFF(bjacobi_singular), 0, 0,
     singular_names, "P",
     "bjacobi: a singular diagonal block gets scalar Jacobi, the identity, "
     "or is an error (a warning counts the replaced blocks)"},
    {"--format", NULL, CLI_CHOICE, OFF(format), 0, 0, kr_format_names, "F",
     "sparse matrix format; auto picks one per matrix from its row lengths "
     "(csr on the CPU, where the others are reference kernels; with several "
     "right-hand sides on the GPU, the SpMM model trained on H200 timings "
     "picks it), auto-probe also times the close candidates on the GPU; "
     "the report says which and why"},
    {"--permute", NULL, CLI_CHOICE, OFF(permute), 0, 0, permute_choices, "R",
     "row order the format is built in (Mehrabi et al.: plain = longest "
     "rows first, flipped, lpt, warp, cta, lpt-warp; see README); results "
     "come back in A's order; the report names it and its build time; auto: "
     "the trained row-order model picks it (and the format under --format "
     "auto) and the report says why; refused in a build without a model"},
    {"--rtol", NULL, CLI_REAL, OFF(rtol), 0, INFINITY, NULL, "X",
     "converged when ||r|| <= max(rtol*||b||, atol)"},
    {"--atol", NULL, CLI_REAL, OFF(atol), 0, INFINITY, NULL, "X",
     "absolute residual tolerance"},
    {"--dtol", NULL, CLI_REAL, OFF(dtol), 0, INFINITY, NULL, "X",
     "diverged when ||r|| > dtol*max(||b||, ||r0||); 0 turns it off"},
    {"--maxit", NULL, CLI_INT, OFF(maxit), 0, INT_MAX, NULL, "N",
     "maximum number of iterations"},
    {"--gap-restarts", NULL, CLI_INT, OFF(gap_restarts), 0, 100, NULL, "N",
     "when the method converged but the true residual ||b - A x|| misses "
     "the tolerance, restart it from x up to N times (within --maxit); if "
     "it still misses: DIVERGED_RESIDUAL_GAP, exit 1"},
    {"--breakdown-restarts", NULL, CLI_INT, OFF(breakdown_restarts), 0, 100,
     NULL, "N",
     "when the method breaks down (a zero inner product) after iterations "
     "that reduced ||b - A x||, restart it from x with r = b - A x "
     "(BiCGSTAB: also its new shadow vector) up to N times (within "
     "--maxit); a breakdown without that progress (e.g. at once) ends the "
     "solve: DIVERGED_BREAKDOWN, exit 1"},
    {"--monitor", NULL, CLI_FLAG, OFF(monitor), 0, 0, NULL, NULL,
     "print ||r||/||b|| at every iteration (to stderr with --json)"},
    {"--history", NULL, CLI_STR, OFF(history), 0, 0, NULL, "FILE",
     "write the residual history as CSV (columns iteration, "
     "residual_norm, relative_residual); checked before the work"},
    {"--device", NULL, CLI_CHOICE, OFF(device), 0, 0, device_names, "D",
     "auto = the GPU when usable, else the CPU (with a note)"},
    {"--build", NULL, CLI_CHOICE, OFF(build), 0, 0, cli_build_names, "B",
     CLI_BUILD_HELP},
    {"--json", NULL, CLI_FLAG, OFF(json), 0, 0, NULL, NULL,
     "print the report as one JSON object"},
    {"--threads", NULL, CLI_INT, OFF(threads), 0, 1024, NULL, "T",
     "CPU threads, 0 = the OpenMP default"},
    {"--converged-reason", NULL, CLI_FLAG, OFF(converged_reason), 0, 0, NULL,
     NULL, "print PETSc's 'Linear solve converged due to ...' line"},
    {"--view", NULL, CLI_FLAG, OFF(view), 0, 0, NULL, NULL,
     "print the solver configuration (to stderr with --json)"},
    {"--verbose", NULL, CLI_FLAG, OFF(verbose), 0, 0, NULL, NULL,
     "bjacobi: after setup, print each diagonal block's condition number "
     "||B||_1 ||B^-1||_1 (B^-1 the inverse applied): min, median, max, the "
     "counts above " CLI_COND_HIGH " and " CLI_COND_EXTREME ", then one "
     "line per block, singular blocks marked replaced; to stderr with "
     "--json, whose object gains \"block_conditions\" (the summary); other "
     "preconditioners: one line saying there are no blocks"},
    /* PETSc's spellings (drivers/options.h, CLI_PETSC) */
    {"-ksp_type", "--method", CLI_PETSC, 0, 1, 0, cli_petsc_ksp_types, NULL,
     NULL},
    {"-pc_type", "--precond", CLI_PETSC, 0, 0, 0, cli_petsc_pc_types, NULL,
     "-pc_type bjacobi is refused: PETSc's bjacobi solves its blocks with "
     "ILU, krylov's is PETSc's vpbjacobi"},
    {"-ksp_rtol", "--rtol", CLI_PETSC, 0, 0, 0, NULL, NULL, NULL},
    {"-ksp_atol", "--atol", CLI_PETSC, 0, 0, 0, NULL, NULL, NULL},
    {"-ksp_divtol", "--dtol", CLI_PETSC, 0, 0, 0, NULL, NULL,
     "PETSc compares with ||r0||, krylov with max(||b||, ||r0||)"},
    {"-ksp_max_it", "--maxit", CLI_PETSC, 0, 0, 0, NULL, NULL, NULL},
    {"-ksp_gmres_restart", "--restart", CLI_PETSC, 0, 0, 0, NULL, NULL, NULL},
    {"-ksp_monitor", "--monitor", CLI_PETSC, 0, 0, 0, NULL, NULL, NULL},
    {"-ksp_converged_reason", "--converged-reason", CLI_PETSC, 0, 0, 0, NULL,
     NULL, NULL},
    {"-ksp_view", "--view", CLI_PETSC, 0, 0, 0, NULL, NULL, NULL},
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

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
    o->dtol = d.dtol;
    o->maxit = d.maxit;
    o->gap_restarts = d.gap_restarts;
    o->breakdown_restarts = d.breakdown_restarts;
    o->precond = "jacobi";
    o->format = KR_FORMAT_DEFAULT;
    o->permute = "none";
    o->device = "auto";
    o->build = "env";
    o->block_size = 32;
    o->bjacobi_singular = "jacobi";
    o->blocking = "supervariable";
    o->rhs_seed = 1;
}

static void print_help(void)
{
    printf(
        "usage: krylov solve A.mtx [options]\n"
        "       krylov solve --gen SPEC [options]\n\n"
        "Solves A x = b (A square, Matrix Market .mtx or .mtx.gz) and "
        "reports the matrix,\nthe method, iterations, the reason it "
        "stopped, the recursive and true\nrelative residuals, the forward "
        "error (when b = A*ones), setup and solve times.\nPETSc binary "
        "files (MatView/VecView output) are recognised by their "
        "content.\nEach input is read once, so it may be a pipe: '-' "
        "is standard input (for A or -b).\nSIGINT or SIGTERM during the "
        "solve stops it at the next iteration (reason\nINTERRUPTED): the "
        "report is printed, nothing is written (see --save-on-interrupt),"
        "\nexit 130; a second signal, or one outside the solve, exits 130 "
        "at once.\nSeveral right-hand sides (-b with an n x k array, or --nrhs "
        "k) are solved\ntogether and reported column by column.\n\n"
        "options:\n");
    cli_solve_print_options(stdout);
    printf(
        "\nexamples:\n  krylov solve --gen poisson3d:32 --method cg "
        "--precond jacobi -o x.mtx\n"
        "  krylov solve --gen poisson3d:32 --method cg --nrhs 16 -o X.mtx\n");
}

/* Prints the context's message, naming path when the message does not. */
static int lib_error(kr_ctx *ctx, kr_status st, const char *path)
{
    return cli_lib_error(ctx, st, path);
}

void cli_solve_print_options(FILE *f)
{
    solve_opts d;
    solve_defaults(&d);
    cli_print_options(f, solve_table, &d);
    fprintf(f, "\ngenerators (--gen SPEC):\n%s\n", kr_generator_help());
    cli_print_exit_codes(f);
}

/* Options that only one method or some preconditioners read. */
typedef struct scoped_opt {
    const char *name, *alias; /* alias: the PETSc spelling, or NULL */
    int of_method;            /* 1: owner is a method, 0: preconditioners */
    const char *owner;        /* the method, or the preconditioners' option
                                 key (kr_precond_has_option)               */
} scoped_opt;

static const scoped_opt scoped[] = {
    {"--restart", "-ksp_gmres_restart", 1, "gmres"},
    {"--s", NULL, 1, "idr"},
    {"--block-size", NULL, 0, "block_size"},
    {"--blocks", NULL, 0, "block_sizes"},
    {"--bjacobi-singular", NULL, 0, "singular"},
};

/* Whether the chosen method or preconditioner reads s; *owners names
 * what does ("gmres", or the preconditioners that read the key). */
static int reads_option(const scoped_opt *s, const solve_opts *o, char *owners,
                        size_t len)
{
    if (s->of_method) {
        snprintf(owners, len, "%s", s->owner);
        return !strcmp(o->method, s->owner);
    }
    owners[0] = '\0';
    for (const char *const *p = kr_precond_names(); *p; p++)
        if (kr_precond_has_option(*p, s->owner))
            snprintf(owners + strlen(owners), len - strlen(owners), "%s%s",
                     *owners ? ", " : "", *p);
    return kr_precond_has_option(o->precond, s->owner);
}

/* 1 when argv holds the option `name`, alone or as name=value. */
static int given(int argc, char **argv, const char *name)
{
    size_t len = name ? strlen(name) : 0;
    for (int i = 0; len && i < argc; i++)
        if (!strncmp(argv[i], name, len) &&
            (argv[i][len] == '\0' || argv[i][len] == '='))
            return 1;
    return 0;
}

/* An option that the chosen method or preconditioner does not read is
 * ignored, as PETSc ignores unused options, but said so at once (PETSc
 * says it at the end with -options_left) rather than silently. */
static void warn_unused(const char *command, int argc, char **argv,
                        const solve_opts *o)
{
    for (size_t i = 0; i < sizeof scoped / sizeof scoped[0]; i++) {
        const scoped_opt *s = &scoped[i];
        const char *chosen = s->of_method ? o->method : o->precond;
        char owners[128];
        if (reads_option(s, o, owners, sizeof owners)) continue;
        if (given(argc, argv, s->name) || given(argc, argv, s->alias))
            fprintf(stderr,
                    "krylov %s: warning: %s applies to %s %s only; ignored "
                    "with %s\n",
                    command, s->name, s->of_method ? "--method" : "--precond",
                    owners, chosen);
    }
}

int cli_solve_parse(const char *command, int argc, char **argv, solve_opts *o,
                    const char **matrix)
{
    int npos;
    cli_spec spec = {command, solve_table, 1, OFF(help)};
    solve_defaults(o);
    int rc = cli_parse(&spec, argc, argv, o, matrix, &npos);
    if (rc) return rc;
    if (npos == 0 && !o->gen)
        return cli_usage_error(command, "the matrix is missing: give A.mtx "
                                        "or --gen SPEC");
    if (npos == 1 && o->gen)
        return cli_usage_error(command,
                               "give either A.mtx ('%s') or --gen "
                               "'%s', not both",
                               *matrix, o->gen);
    if (npos == 0) *matrix = NULL;
    warn_unused(command, argc, argv, o);
    return 0;
}

static kr_device device_of(const char *name)
{
    if (!strcmp(name, "cpu")) return KR_DEVICE_CPU;
    if (!strcmp(name, "cuda")) return KR_DEVICE_CUDA;
    return KR_DEVICE_AUTO;
}

static int open_context(solve_run *r)
{
    kr_status st = kr_ctx_create(&r->ctx, device_of(r->o->device));
    if (!r->ctx) {
        cli_error("out of memory creating the context");
        return CLI_EXIT_DEVICE;
    }
    if (st == KR_OK) st = kr_ctx_set_threads(r->ctx, r->o->threads);
    if (st == KR_OK) st = cli_set_build(r->ctx, r->o->build);
    if (st != KR_OK) return lib_error(r->ctx, st, NULL);
    if (*kr_ctx_note(r->ctx))
        fprintf(stderr, "note: %s\n", kr_ctx_note(r->ctx));
    return 0;
}

static int load_matrix(solve_run *r)
{
    kr_status st;
    if (r->o->gen) {
        st = kr_generate(r->ctx, r->o->gen, &r->A);
        if (st == KR_ERR_ARG) /* a bad SPEC is a bad command line */
            return cli_usage_error("solve", "%s", kr_ctx_error(r->ctx));
    } else {
        /* Read once, the format told by the first bytes: pipes work. */
        st = kr_read_matrix_path(r->ctx, r->name, KR_READ_SYSTEM, &r->A);
    }
    if (st != KR_OK) return lib_error(r->ctx, st, r->o->gen ? NULL : r->name);
    if (r->A.nrows != r->A.ncols) {
        cli_error("%s: the matrix is %d x %d; solve needs a square matrix",
                  r->name, (int)r->A.nrows, (int)r->A.ncols);
        return CLI_EXIT_INPUT;
    }
    return 0;
}

/* An n x 1 vector from path into *v (malloc'ed). */
static int read_vector(solve_run *r, const char *path, const char *what,
                       double **v)
{
    int32_t rows = 0, cols = 1;
    kr_status st = kr_read_vector_path(r->ctx, path, &rows, &cols, v);
    if (st != KR_OK) return lib_error(r->ctx, st, path);
    if (rows == r->A.nrows && cols == 1) return 0;
    cli_error("%s: %s is %d x %d, but the matrix %s is %d x %d, so it must "
              "be %d x 1",
              path, what, (int)rows, (int)cols, r->name, (int)r->A.nrows,
              (int)r->A.ncols, (int)r->A.nrows);
    return CLI_EXIT_INPUT;
}

static int out_of_memory(size_t n)
{
    cli_error("out of host memory for vectors of %zu entries", n);
    return CLI_EXIT_DEVICE;
}

/* b = A*ones, so the exact solution is ones. */
static int ones_rhs(solve_run *r)
{
    size_t n = (size_t)r->A.nrows;
    double *ones = malloc((n + 1) * sizeof *ones);
    r->b = malloc((n + 1) * sizeof *r->b);
    if (!ones || !r->b) {
        free(ones);
        return out_of_memory(n);
    }
    for (size_t i = 0; i < n; i++)
        ones[i] = 1.0;
    kr_csr_matvec(&r->A, ones, r->b);
    free(ones);
    return 0;
}

/* -b: n x 1, or n x k (k = 2..64) for several right-hand sides where the
 * command takes them; a wrong size names the file's size line. */
static int read_rhs(solve_run *r)
{
    const char *path = r->o->rhs;
    int32_t rows = 0, cols = 1, n = r->A.nrows;
    long line = 0;
    double *v = NULL;
    kr_status st =
        kr_read_vector_path_at(r->ctx, path, &rows, &cols, &v, &line);
    if (st != KR_OK) return lib_error(r->ctx, st, path);
    if (rows == n && cols == 1) {
        r->b = v;
        return 0;
    }
    if (rows == n && cols > 1 && cols <= KR_MULTI_MAX_COLUMNS && r->allow_multi)
        return cli_multi_take(r, v, cols);
    free(v);
    char where[32] = "";
    if (line > 0) snprintf(where, sizeof where, ":%ld", line);
    if (r->allow_multi)
        cli_error("%s%s: the right-hand side (-b) is %d x %d, but the matrix "
                  "%s is %d x %d, so it must be %d x k, k = 1..%d",
                  path, where, (int)rows, (int)cols, r->name, (int)n, (int)n,
                  (int)n, KR_MULTI_MAX_COLUMNS);
    else
        cli_error("%s%s: the right-hand side (-b) is %d x %d, but the matrix "
                  "%s is %d x %d, so it must be %d x 1",
                  path, where, (int)rows, (int)cols, r->name, (int)n, (int)n,
                  (int)n);
    return CLI_EXIT_INPUT;
}

/* b from -b or A*ones; x0 from --x0 or zeros (several right-hand sides:
 * drivers/solve_multi.c). */
static int load_vectors(solve_run *r)
{
    if (r->o->nrhs && !r->allow_multi) {
        cli_error("--nrhs: this command takes one right-hand side");
        return CLI_EXIT_USAGE;
    }
    int rc = r->o->nrhs  ? cli_multi_generate(r)
             : r->o->rhs ? read_rhs(r)
                         : ones_rhs(r);
    if (rc) return rc;
    if (r->k) return cli_multi_x0(r);
    if (r->o->x0)
        return read_vector(r, r->o->x0, "the initial guess (--x0)", &r->x);
    r->x = calloc((size_t)r->A.nrows + 1, sizeof *r->x);
    return r->x ? 0 : out_of_memory((size_t)r->A.nrows);
}

/* --blocks FILE: an nb x 1 (or 1 x nb) Matrix Market array of integer
 * sizes in 1..32, into *sizes (malloc'ed); the library checks they sum to
 * n. */
static int read_blocks(solve_run *r, int32_t **sizes, int32_t *nb)
{
    kr_status st =
        kr_read_block_sizes_path(r->ctx, r->o->blocks, 32, sizes, nb);
    return st == KR_OK ? 0 : lib_error(r->ctx, st, NULL);
}

static kr_singular_policy singular_policy(const char *name)
{
    if (!strcmp(name, "identity")) return KR_SINGULAR_IDENTITY;
    if (!strcmp(name, "error")) return KR_SINGULAR_ERROR;
    return KR_SINGULAR_JACOBI;
}

static void warn_singular(const solve_run *r)
{
    int32_t bad = kr_precond_singular_blocks(r->P);
    if (bad > 0)
        fprintf(stderr,
                "warning: %s: %d of %d diagonal blocks are singular; "
                "they use %s instead (--bjacobi-singular)\n",
                kr_precond_name(r->P), (int)bad,
                (int)kr_precond_block_count(r->P),
                strcmp(r->o->bjacobi_singular, "identity") ? "scalar Jacobi"
                                                           : "the identity");
}

static int setup(solve_run *r)
{
    kr_precond_options po;
    kr_precond_options_default(&po);
    po.block_size = r->o->block_size;
    po.singular = singular_policy(r->o->bjacobi_singular);
    po.blocking = cli_blocking_of(r->o->blocking);
    int32_t *sizes = NULL;
    if (r->o->blocks && kr_precond_has_option(r->o->precond, "block_sizes")) {
        int rc = read_blocks(r, &sizes, &po.nblocks);
        if (rc) {
            free(sizes);
            return rc;
        }
        po.block_sizes = sizes;
    }
    double t0 = kr_wtime();
    kr_matrix_options mo;
    kr_matrix_options_default(&mo);
    mo.format = r->o->format;
    mo.permute = r->o->permute;
    mo.columns = r->k > 0 ? r->k : 1;
    kr_status st = kr_matrix_create_opts(r->ctx, &r->A, &mo, &r->M);
    double t1 = kr_wtime();
    if (st == KR_OK)
        st = kr_precond_create_matrix(r->ctx, r->M, &r->A, r->o->precond, &po,
                                      &r->P);
    double t2 = kr_wtime();
    r->matrix_seconds = t1 - t0;
    r->precond_seconds = t2 - t1;
    r->setup_seconds = t2 - t0;
    /* block sizes that do not fit A: the fault is the --blocks file's */
    int blocks_wrong = sizes != NULL && r->M && st == KR_ERR_ARG;
    free(sizes);
    if (st != KR_OK)
        return lib_error(r->ctx, st, blocks_wrong ? r->o->blocks : r->name);
    warn_singular(r);
    if (r->o->verbose) cli_block_conds(r->o->json ? stderr : stdout, r);
    return 0;
}

typedef struct monitor_state {
    FILE *f;
    double bnorm;
    int header_done;
} monitor_state;

static int monitor(int it, double rnorm, void *user)
{
    monitor_state *m = user;
    if (!m->header_done) fputs("  it    ||r||/||b||\n", m->f);
    m->header_done = 1;
    fprintf(m->f, "%4d    %.6e\n", it, m->bnorm > 0 ? rnorm / m->bnorm : rnorm);
    return 0;
}

static double host_norm(const double *v, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

static void solver_options(const solve_run *r, monitor_state *m,
                           kr_solve_options *opt)
{
    const solve_opts *o = r->o;
    kr_solve_options_default(opt);
    opt->method = o->method;
    opt->s = o->s;
    opt->restart = o->restart;
    opt->rtol = o->rtol;
    opt->atol = o->atol;
    opt->dtol = o->dtol;
    opt->maxit = o->maxit;
    opt->gap_restarts = o->gap_restarts;
    opt->breakdown_restarts = o->breakdown_restarts;
    opt->keep_history = o->history != NULL;
    opt->interrupt = cli_interrupt_flag();
    if (!o->monitor) return;
    m->f = o->json ? stderr : stdout;
    m->bnorm = host_norm(r->b, r->A.nrows);
    opt->monitor = monitor;
    opt->monitor_user = m;
}

void cli_solve_options(const solve_run *r, kr_solve_options *opt)
{
    monitor_state m = {0}; /* several right-hand sides refuse --monitor */
    solver_options(r, &m, opt);
    opt->monitor = NULL;
}

static int solve(solve_run *r)
{
    kr_vec *b = NULL, *x = NULL;
    kr_solve_options opt;
    monitor_state m = {0};
    solver_options(r, &m, &opt);
    kr_status st = kr_vec_create(r->ctx, r->A.nrows, &b);
    if (st == KR_OK) st = kr_vec_create(r->ctx, r->A.nrows, &x);
    if (st == KR_OK) st = kr_vec_upload(b, r->b);
    if (st == KR_OK) st = kr_vec_upload(x, r->x);
    if (st == KR_OK) {
        cli_interrupt_arm(); /* a signal now stops the solve, see finish */
        st = kr_solve(r->ctx, r->M, r->P, b, x, &opt, &r->res);
        cli_interrupt_disarm();
    }
    if (st == KR_OK) st = kr_vec_download(x, r->x);
    fflush(m.f ? m.f : stdout);
    kr_vec_destroy(b);
    kr_vec_destroy(x);
    return st == KR_OK ? 0 : lib_error(r->ctx, st, NULL);
}

void cli_solve_report_problem(const solve_run *r, cli_report *rep)
{
    memset(rep, 0, sizeof *rep);
    kr_csr_row_stats(&r->A, &rep->rows);
    rep->matrix = r->name;
    rep->generated = r->o->gen != NULL;
    rep->n = r->A.nrows;
    rep->nnz = r->A.nnz;
    rep->method = r->o->method;
    rep->s = r->o->s;
    rep->restart = r->o->restart;
    rep->gap_restarts = r->o->gap_restarts;
    rep->breakdown_restarts = r->o->breakdown_restarts;
    rep->precond = r->o->precond;
    rep->format = kr_matrix_format(r->M);
    rep->format_requested = r->o->format;
    rep->format_reason = kr_matrix_format_reason(r->M);
    rep->permutation = kr_matrix_permutation(r->M);
    rep->permute_reason = kr_matrix_permutation_reason(r->M);
    rep->permute_seconds = kr_matrix_permute_seconds(r->M);
    rep->device = kr_ctx_device_name(r->ctx);
    rep->threads = kr_ctx_threads(r->ctx);
    rep->precond_blocks = kr_precond_block_count(r->P);
    rep->precond_singular = kr_precond_singular_blocks(r->P);
    rep->setup_seconds = r->setup_seconds;
    rep->matrix_build_seconds = r->matrix_seconds;
    kr_matrix_build_stages(r->M, &rep->upload_seconds,
                           &rep->format_build_seconds);
    rep->build = rep->upload_seconds > 0.0 ? "device" : "host";
    rep->precond_build_seconds = r->precond_seconds;
}

static void report(const solve_run *r)
{
    kr_precond_info info;
    kr_precond_get_info(r->P, &info);
    cli_report rep;
    cli_solve_report_problem(r, &rep);
    rep.res = &r->res;
    rep.have_forward = r->o->rhs == NULL;
    rep.precond_info = info.stages ? &info : NULL;
    rep.cond = r->have_cond ? &r->cond : NULL;
    if (rep.have_forward)
        cli_forward_error(r->x, r->A.nrows, &rep.forward_inf,
                          &rep.forward_rel2);
    if (r->o->json)
        cli_report_json(stdout, &rep);
    else
        cli_report_text(stdout, &rep);
    fflush(stdout);
}

/* -o and --history, checked before the work so that a bad path costs
 * no solve. */
static int check_outputs(const solve_opts *o)
{
    int rc = o->out ? cli_check_output("-o", o->out) : 0;
    if (!rc && o->history) rc = cli_check_output("--history", o->history);
    return rc;
}

static int write_outputs(solve_run *r)
{
    if (r->res.reason == KR_INTERRUPTED && !r->o->save_on_interrupt) return 0;
    if (r->o->out) {
        kr_status st = cli_write_vector(r->ctx, r->o->out, r->A.nrows, r->x);
        if (st != KR_OK) return lib_error(r->ctx, st, r->o->out);
    }
    if (r->o->history) return cli_write_history(r->o->history, &r->res);
    return 0;
}

static void run_free(solve_run *r)
{
    cli_multi_free(r);
    kr_result_free(&r->res);
    kr_precond_destroy(r->P);
    kr_matrix_destroy(r->M);
    free(r->b);
    free(r->x);
    kr_csr_free(&r->A);
    kr_ctx_destroy(r->ctx);
}

static int finish(const solve_run *r)
{
    if (r->res.reason > 0) return CLI_EXIT_OK;
    if (r->res.reason == KR_INTERRUPTED) {
        const char *out = r->o->save_on_interrupt ? r->o->out : NULL;
        fprintf(stderr, "krylov: interrupted after %d iterations; %s%s\n",
                r->res.iterations,
                out ? "the current iterate is in " : "nothing written",
                out         ? out
                : r->o->out ? " (--save-on-interrupt keeps the "
                              "current iterate)"
                            : "");
        return CLI_EXIT_INTERRUPTED;
    }
    fprintf(stderr, "krylov: not converged: %s (%s) after %d iterations\n",
            kr_reason_name(r->res.reason), kr_reason_text(r->res.reason),
            r->res.iterations);
    return CLI_EXIT_NOCONV;
}

int cli_cmd_solve(int argc, char **argv)
{
    solve_opts o;
    const char *matrix = NULL;
    int rc = cli_solve_parse("solve", argc, argv, &o, &matrix);
    if (rc == CLI_EXIT_HELP) print_help();
    if (rc) return rc == CLI_EXIT_HELP ? CLI_EXIT_OK : rc;
    if (o.save_on_interrupt && !o.out)
        return cli_usage_error("solve", "--save-on-interrupt needs -o FILE");
    if (o.nrhs && o.rhs)
        return cli_usage_error("solve", "give -b FILE or --nrhs K, not both");
    if (!strcmp(o.permute, "auto") && !kr_row_order_model_trained())
        return cli_usage_error("solve",
                               "--permute auto: no trained row-order model in "
                               "this build; train it with bench/spmm_train.py "
                               "on GPU timings");
    cli_interrupt_install();
    solve_run r = {.o = &o, .name = matrix ? matrix : o.gen, .allow_multi = 1};
    rc = check_outputs(&o);
    if (!rc) rc = open_context(&r);
    if (!rc) rc = load_matrix(&r);
    if (!rc) rc = load_vectors(&r);
    if (!rc && r.k) rc = cli_multi_options(&r);
    if (!rc) rc = setup(&r);
    if (!rc && r.k) {
        rc = cli_multi_run(&r);
        run_free(&r);
        return rc;
    }
    if (!rc) rc = solve(&r);
    if (!rc) cli_solve_petsc_reports(&r);
    if (!rc) report(&r);
    if (!rc) rc = write_outputs(&r);
    if (!rc) rc = finish(&r);
    run_free(&r);
    return rc;
}

/* The steps above, for krylov-petsc (drivers/solve.h). */
int cli_solve_load(solve_run *r)
{
    int rc = check_outputs(r->o);
    if (!rc) rc = open_context(r);
    if (!rc) rc = load_matrix(r);
    if (!rc) rc = load_vectors(r);
    return rc;
}

int cli_solve_setup(solve_run *r) { return setup(r); }
int cli_solve_solve(solve_run *r) { return solve(r); }
int cli_solve_write(solve_run *r) { return write_outputs(r); }
void cli_solve_free(solve_run *r) { run_free(r); }
