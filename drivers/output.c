/* Output files of the command, through the library's writers. */
#include "output.h"

#include "options.h"

#include <string.h>

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

kr_status cli_write_matrix(kr_ctx *ctx, const char *path, const kr_csr *A)
{
    return ends_with(path, ".bin") ? kr_write_petsc_mat(ctx, path, A)
                                   : kr_write_mtx(ctx, path, A);
}

kr_status cli_write_vector(kr_ctx *ctx, const char *path, int32_t n,
                           const double *x)
{
    return ends_with(path, ".bin") ? kr_write_petsc_vec(ctx, path, n, x)
                                   : kr_write_dense_mtx(ctx, path, n, 1, x);
}

int cli_output_is_stdout(const char *path)
{
    return !strcmp(path, "-") || !strcmp(path, "/dev/stdout") ||
           !strcmp(path, "/dev/fd/1") || !strcmp(path, "/proc/self/fd/1");
}

/* A context for the messages of the file layer (a CPU one is cheap). */
static kr_ctx *message_ctx(void)
{
    kr_ctx *ctx = NULL;
    if (kr_ctx_create(&ctx, KR_DEVICE_CPU) == KR_OK) return ctx;
    kr_ctx_destroy(ctx);
    cli_error("out of memory");
    return NULL;
}

int cli_check_output(const char *what, const char *path)
{
    kr_ctx *ctx = message_ctx();
    if (!ctx) return CLI_EXIT_DEVICE;
    kr_status st = kr_outfile_check(ctx, path);
    if (st != KR_OK) cli_error("%s: %s", what, kr_ctx_error(ctx));
    kr_ctx_destroy(ctx);
    return cli_exit_code(st);
}

int cli_write_text(const char *path, void (*emit)(FILE *, const void *),
                   const void *arg)
{
    kr_ctx *ctx = message_ctx();
    if (!ctx) return CLI_EXIT_DEVICE;
    kr_status st = kr_write_text(ctx, path, emit, arg);
    if (st != KR_OK) cli_error("%s", kr_ctx_error(ctx));
    kr_ctx_destroy(ctx);
    return cli_exit_code(st);
}
