/* krylov compare-petsc: runs build/krylov-petsc, the separate program that
 * links PETSc, found next to this binary, with the same arguments. The
 * krylov command itself never links PETSc, so it runs where PETSc is not
 * installed (the GPU machines) and says how to get the comparison. */
#include "commands.h"
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "<folder of /proc/self/exe>/krylov-petsc" into buf; 0 if not found. */
static int sibling(char *buf, size_t len)
{
    const char *name = "/krylov-petsc";
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash || (size_t)(slash - buf) + strlen(name) + 1 > len) return 0;
    strcpy(slash, name);
    return access(buf, X_OK) == 0;
}

int cli_cmd_compare_petsc(int argc, char **argv)
{
    char path[4096];
    if (!sibling(path, sizeof path)) {
        cli_error("compare-petsc needs PETSc: install it with `sudo apt-get "
                  "install petsc-dev` and rebuild (make)");
        return CLI_EXIT_MISSING;
    }
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) return CLI_EXIT_DEVICE;
    args[0] = path;
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    fflush(NULL);
    execv(path, args);
    cli_error("cannot run %s", path); /* execv returns only on failure */
    free(args);
    return CLI_EXIT_DEVICE;
}
