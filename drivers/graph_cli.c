/* Helpers of the graph commands (reach, analyze). */
#include "graph_cli.h"

#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const *cli_graph_device_names(void)
{
    static const char *const names[] = {"auto", "cpu", "cuda", NULL};
    return names;
}

/* in the order of kr_blocking */
const char *const *cli_blocking_names(void)
{
    static const char *const names[] = {"supervariable", "scc", NULL};
    return names;
}

/* in the order of kr_scc_method */
const char *const *cli_scc_names(void)
{
    static const char *const names[] = {"tarjan", "fwbw", "auto", NULL};
    return names;
}

kr_scc_method cli_scc_of(const char *name)
{
    const char *const *names = cli_scc_names();
    for (int i = 0; names[i]; i++)
        if (!strcmp(name, names[i])) return (kr_scc_method)i;
    return KR_SCC_TARJAN;
}

void cli_scc_describe(const kr_scc_info *info, char *buf, size_t size)
{
    if (!strcmp(info->method, "tarjan")) {
        snprintf(buf, size, "tarjan");
        return;
    }
    snprintf(buf, size, "%s: %d passes, %d rounds, %d vertices to Tarjan",
             info->method, (int)info->passes, (int)info->rounds,
             (int)info->host_rest);
}

kr_device cli_graph_device(const char *name)
{
    if (!strcmp(name, "cpu")) return KR_DEVICE_CPU;
    if (!strcmp(name, "cuda")) return KR_DEVICE_CUDA;
    return KR_DEVICE_AUTO;
}

kr_blocking cli_blocking_of(const char *name)
{
    return name && !strcmp(name, "scc") ? KR_BLOCKING_SCC
                                        : KR_BLOCKING_SUPERVARIABLE;
}

int cli_lib_error(kr_ctx *ctx, kr_status st, const char *path)
{
    const char *msg = kr_ctx_error(ctx);
    if (!*msg) msg = kr_status_name(st);
    if (path && !strstr(msg, path))
        cli_error("%s: %s", path, msg);
    else
        cli_error("%s", msg);
    return cli_exit_code(st);
}

int cli_is_gra(const char *path)
{
    size_t n = strlen(path);
    return (n >= 4 && !strcmp(path + n - 4, ".gra")) ||
           (n >= 7 && !strcmp(path + n - 7, ".gra.gz"));
}

int cli_read_block_sizes(kr_ctx *ctx, const char *path, int32_t **sizes,
                         int32_t *nb)
{
    *sizes = NULL;
    kr_status st = kr_read_block_sizes_path(ctx, path, 32, sizes, nb);
    return st == KR_OK ? 0 : cli_lib_error(ctx, st, path);
}

int cli_partition(kr_ctx *ctx, const kr_csr *A, const char *blocks_file, int k,
                  kr_blocking blocking, int32_t *nb, int32_t **starts)
{
    kr_precond_options po;
    kr_precond_options_default(&po);
    po.block_size = k;
    po.blocking = blocking;
    int32_t *sizes = NULL;
    if (blocks_file) {
        int rc = cli_read_block_sizes(ctx, blocks_file, &sizes, &po.nblocks);
        if (rc) {
            free(sizes);
            return rc;
        }
        po.block_sizes = sizes;
    }
    kr_status st = kr_block_partition(ctx, A, &po, nb, starts);
    free(sizes);
    return st == KR_OK ? 0 : cli_lib_error(ctx, st, blocks_file);
}
