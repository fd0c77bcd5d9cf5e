/* Block partitions summarised: one pass for the range, one histogram of
 * the sizes for the most frequent ones. */
#include "block_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CLI_BLOCK_COMMON largest counts of hist[1..max] into b->common. */
static void most_common(const int32_t *hist, int32_t max, cli_blocks *b)
{
    for (int c = 0; c < CLI_BLOCK_COMMON; c++) {
        int32_t best = 0;
        for (int32_t k = max; k >= 1; k--) {
            int taken = 0;
            for (int d = 0; d < c; d++)
                taken |= b->common[d] == k;
            if (!taken && hist[k] > (best ? hist[best] : 0)) best = k;
        }
        b->common[c] = best;
        b->common_n[c] = best ? hist[best] : 0;
    }
}

/* Range, mean and histogram of sizes[0..count). */
static int summarise(const int32_t *sizes, cli_blocks *b)
{
    int64_t rows = 0;
    b->min = b->max = sizes[0];
    for (int32_t i = 0; i < b->count; i++) {
        rows += sizes[i];
        if (sizes[i] < b->min) b->min = sizes[i];
        if (sizes[i] > b->max) b->max = sizes[i];
    }
    b->mean = (double)rows / b->count;
    int32_t *hist = calloc((size_t)b->max + 1, sizeof *hist);
    if (!hist) return -1;
    for (int32_t i = 0; i < b->count; i++)
        hist[sizes[i]]++;
    most_common(hist, b->max, b);
    free(hist);
    return 0;
}

int cli_blocks_of(const kr_precond *P, cli_blocks *b)
{
    memset(b, 0, sizeof *b);
    int32_t count = kr_precond_block_count(P);
    if (count <= 0) return 0;
    int32_t *sizes = malloc((size_t)count * sizeof *sizes);
    int rc = sizes && kr_precond_block_sizes(P, sizes) == KR_OK ? 0 : -1;
    b->count = count;
    if (!rc) rc = summarise(sizes, b);
    free(sizes);
    if (rc) memset(b, 0, sizeof *b);
    b->singular = rc ? 0 : kr_precond_singular_blocks(P);
    return rc;
}

void cli_blocks_text(const cli_blocks *b, char *buf, size_t len)
{
    size_t used =
        (size_t)snprintf(buf, len,
                         "%d blocks, sizes %d..%d, "
                         "mean %.2f (",
                         (int)b->count, (int)b->min, (int)b->max, b->mean);
    for (int c = 0; c < CLI_BLOCK_COMMON && b->common[c] && used < len; c++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d of size %d",
                                 c ? ", " : "", (int)b->common_n[c],
                                 (int)b->common[c]);
    int32_t listed = 0;
    for (int c = 0; c < CLI_BLOCK_COMMON; c++)
        listed += b->common_n[c];
    if (listed < b->count && used < len)
        used += (size_t)snprintf(buf + used, len - used, ", ...");
    if (used < len) snprintf(buf + used, len - used, ")");
}
