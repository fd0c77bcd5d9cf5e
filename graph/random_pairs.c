/* Random query pairs (kr_graph_random_pairs): one splitmix64 value per
 * entry from the seed and the entry's index, so any entry can be made
 * alone and the set does not depend on how it is made. */
#include "graph/graph.h"

void kr_graph_random_pairs(int32_t n, int64_t q, uint64_t seed, int32_t *pairs)
{
    for (int64_t k = 0; k < 2 * q; k++)
        pairs[k] =
            n > 0 ? (int32_t)(kr_mix64(seed * 0x100000001b3ull + (uint64_t)k) %
                              (uint64_t)n)
                  : 0;
}
