/* The --history CSV. Written to "<path>.tmp.<pid>" and renamed when
 * complete, so a failure never leaves a partial file under the real name. */
#include "drivers/history.h"

#include "drivers/options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int write_lines(FILE *f, const kr_result *res)
{
    fputs("iteration,residual_norm,relative_residual\n", f);
    for (int k = 0; k < res->history_len; k++) {
        double rel = res->bnorm > 0 ? res->history[k] / res->bnorm : 0.0;
        fprintf(f, "%d,%.17g,%.17g\n", k, res->history[k], rel);
    }
    return ferror(f) ? -1 : 0;
}

int cli_write_history(const char *path, const kr_result *res)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >=
        (int)sizeof tmp) {
        cli_error("%s: the file name is too long", path);
        return CLI_EXIT_INPUT;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        cli_error("%s: cannot write the history: %s", path, strerror(errno));
        return CLI_EXIT_INPUT;
    }
    int bad = write_lines(f, res);
    int saved = errno;
    if (fclose(f) != 0 && !bad) bad = -1, saved = errno;
    if (!bad && rename(tmp, path) != 0) bad = -1, saved = errno;
    if (!bad) return 0;
    remove(tmp);
    cli_error("%s: cannot write the history: %s", path, strerror(saved));
    return CLI_EXIT_INPUT;
}
