/* A preconditioner's diagonal blocks in a few numbers, for the reports that
 * name them (-ksp_view, compare-petsc's table and JSON): a partition may
 * have a million blocks, so the reports show count, range, mean and the
 * most frequent sizes, not the list. */
#ifndef KR_DRIVERS_BLOCK_SUMMARY_H
#define KR_DRIVERS_BLOCK_SUMMARY_H

#include "krylov.h"

#include <stddef.h>
#include <stdint.h>

/* The most frequent sizes kept. */
#define CLI_BLOCK_COMMON 3

typedef struct cli_blocks {
    int32_t count;    /* blocks; 0 for a preconditioner without blocks */
    int32_t min, max; /* smallest and largest block size               */
    double mean;      /* rows / count                                   */
    int32_t singular; /* blocks the singular policy replaced            */
    /* the most frequent sizes, most frequent first (ties: the larger
     * size first), and how many blocks have each; 0 after the last */
    int32_t common[CLI_BLOCK_COMMON], common_n[CLI_BLOCK_COMMON];
} cli_blocks;

/* Summarises P's blocks into *b (all zero when P has none). Returns 0, or
 * -1 when out of host memory (then b->count is 0). */
int cli_blocks_of(const kr_precond *P, cli_blocks *b);

/* "602 blocks, sizes 1..3, mean 2.99 (601 of size 3, 1 of size 1)" into
 * buf, with ", ..." when more sizes occur than are listed. */
void cli_blocks_text(const cli_blocks *b, char *buf, size_t len);

#endif
