/* What `krylov reach` and `krylov analyze` share: the device choice, the
 * graph input (.mtx, .gra(.gz), a generator spec, or a matrix's block
 * quotient graph), block sizes from a file, and library errors as exit
 * codes. */
#ifndef KR_DRIVERS_GRAPH_CLI_H
#define KR_DRIVERS_GRAPH_CLI_H

#include "krylov.h"

const char *const *cli_graph_device_names(void);
const char *const *cli_blocking_names(void);
kr_device cli_graph_device(const char *name);
kr_blocking cli_blocking_of(const char *name);
/* --scc: tarjan, fwbw, auto (kr_scc_method's order) */
const char *const *cli_scc_names(void);
kr_scc_method cli_scc_of(const char *name);
/* What ran, e.g. "fwbw-gpu: 12 passes, 3 rounds, 0 vertices to Tarjan". */
void cli_scc_describe(const kr_scc_info *info, char *buf, size_t size);

/* Prints the library's message (prefixed with path when it lacks it) and
 * returns the exit code of st. */
int cli_lib_error(kr_ctx *ctx, kr_status st, const char *path);

/* 1 when path names a GRAIL .gra or .gra.gz file. */
int cli_is_gra(const char *path);

/* --blocks FILE: an nb x 1 (or 1 x nb) Matrix Market array of integers
 * 1..32 into *sizes (malloc'ed). Returns an exit code (0 when read). */
int cli_read_block_sizes(kr_ctx *ctx, const char *path, int32_t **sizes,
                         int32_t *nb);

/* The block partition for --blocks FILE, else bjacobi's blocking with
 * largest block k. Returns an exit code. */
int cli_partition(kr_ctx *ctx, const kr_csr *A, const char *blocks_file, int k,
                  kr_blocking blocking, int32_t *nb, int32_t **starts);

/* krylov reach --bench: the index built and the q queries answered on one
 * CPU core, on `threads` cores (0: all) and on the GPU when there is one;
 * prints the table and returns an exit code. */
int cli_reach_bench(kr_graph *G, const char *name, const int32_t *pairs,
                    int64_t q, const kr_reach_options *ro, int threads);

#endif
