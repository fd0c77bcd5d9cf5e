/* The options parser of krylov solve (and compare-petsc): the input is the
 * argument list, one argument per line. */
#include "drivers/options.h"
#include "drivers/solve.h"
#include "test/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

enum { KR_FUZZ_MAX_ARGS = 64 };

KR_FUZZ_TARGET(options)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[KR_FUZZ_MAX_ARGS + 1];
    int argc = 0;
    for (char *p = text; argc < KR_FUZZ_MAX_ARGS;) {
        argv[argc++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    argv[argc] = NULL;
    solve_opts o;
    const char *matrix = NULL;
    int rc = cli_solve_parse(size % 2 ? "solve" : "compare-petsc", argc, argv,
                             &o, &matrix);
    kr_fuzz_expect(rc == 0 || rc == CLI_EXIT_USAGE || rc == CLI_EXIT_HELP);
    /* What was accepted lies in the documented ranges. */
    if (rc == 0)
        kr_fuzz_expect(o.rtol >= 0 && o.atol >= 0 && o.maxit >= 0 &&
                       (matrix != NULL) != (o.gen != NULL));
    free(text);
    return 0;
}
