/* krylov gen SPEC -o A.mtx: builds a test matrix with kr_generate and
 * writes it in the format its name asks for (drivers/output.h), through a
 * temporary file, so a failure or an interrupt leaves no partial output.
 * The output is checked before the matrix is built. */
#include "commands.h"
#include "interrupt.h"
#include "krylov.h"
#include "options.h"
#include "output.h"

#include <stddef.h>
#include <stdio.h>

typedef struct gen_opts {
    const char *out;
    int threads;
    int help;
} gen_opts;

#define OFF(field) offsetof(gen_opts, field)

static const cli_opt gen_table[] = {
    {"-o", "--output", CLI_STR, OFF(out), 0, 0, NULL, "FILE",
     "the file to write (required): PETSc binary when FILE ends in .bin, "
     "else Matrix Market (coordinate real general), gzip-compressed when "
     "it ends in .gz"},
    {"--threads", NULL, CLI_INT, OFF(threads), 0, 1024, NULL, "T",
     "CPU threads for the generator, 0 = the OpenMP default"},
    {NULL, NULL, CLI_FLAG, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec gen_spec = {"gen", gen_table, 1, OFF(help)};

static void print_help(void)
{
    gen_opts defaults = {0};
    printf("usage: krylov gen SPEC -o A.mtx\n\n"
           "Writes the test matrix SPEC as a Matrix Market file (coordinate "
           "real general),\nor as PETSc binary (-o A.bin). An interrupt "
           "(SIGINT, SIGTERM) leaves no file\nand exits 130.\n\n"
           "options:\n");
    cli_print_options(stdout, gen_table, &defaults);
    printf("\ngenerators (SPEC):\n%s\n", kr_generator_help());
    cli_print_exit_codes(stdout);
    printf("\nexample:\n  krylov gen poisson3d:32 -o poisson3d_32.mtx\n");
}

/* Generates and writes; returns the exit code. */
static int generate(kr_ctx *ctx, const char *spec, const gen_opts *o)
{
    kr_csr A = {0};
    kr_status st = kr_ctx_set_threads(ctx, o->threads);
    if (*kr_ctx_note(ctx)) fprintf(stderr, "note: %s\n", kr_ctx_note(ctx));
    if (st == KR_OK) st = kr_generate(ctx, spec, &A);
    if (st == KR_ERR_ARG) { /* a bad SPEC is a bad command line */
        cli_usage_error("gen", "%s", kr_ctx_error(ctx));
        return CLI_EXIT_USAGE;
    }
    if (st == KR_OK) st = cli_write_matrix(ctx, o->out, &A);
    if (st == KR_OK) /* on stderr when the matrix went to stdout */
        fprintf(cli_output_is_stdout(o->out) ? stderr : stdout,
                "wrote %s: %s, n = %d, nnz = %d\n", o->out, spec, (int)A.nrows,
                (int)A.nnz);
    else
        cli_error("%s", kr_ctx_error(ctx));
    kr_csr_free(&A);
    return cli_exit_code(st);
}

int cli_cmd_gen(int argc, char **argv)
{
    gen_opts o = {0};
    const char *spec[1];
    int npos;
    int rc = cli_parse(&gen_spec, argc, argv, &o, spec, &npos);
    if (rc == CLI_EXIT_HELP) {
        print_help();
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if (npos != 1)
        return cli_usage_error("gen", "the generator SPEC is missing");
    if (!o.out) return cli_usage_error("gen", "-o FILE is required");
    cli_interrupt_install();
    rc = cli_check_output("-o", o.out);
    if (rc) return rc;
    kr_ctx *ctx = NULL;
    kr_status st = kr_ctx_create(&ctx, KR_DEVICE_CPU);
    rc = st == KR_OK ? generate(ctx, spec[0], &o) : cli_exit_code(st);
    if (st != KR_OK) cli_error("%s", ctx ? kr_ctx_error(ctx) : "out of memory");
    kr_ctx_destroy(ctx);
    return rc;
}
