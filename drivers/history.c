/* The --history CSV, written whole or not at all (drivers/output.h). */
#include "history.h"

#include "output.h"

#include <stdio.h>

static void write_lines(FILE *f, const void *arg)
{
    const kr_result *res = arg;
    fputs("iteration,residual_norm,relative_residual\n", f);
    for (int k = 0; k < res->history_len; k++) {
        double rel = res->bnorm > 0 ? res->history[k] / res->bnorm : 0.0;
        fprintf(f, "%d,%.17g,%.17g\n", k, res->history[k], rel);
    }
}

int cli_write_history(const char *path, const kr_result *res)
{
    return cli_write_text(path, write_lines, res);
}
