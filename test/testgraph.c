/* The graph tests' BFS reference (testgraph.h). */
#include "testgraph.h"

#include <string.h>

int32_t kt_bfs(const kr_graph *G, int32_t u, unsigned char *seen,
               int32_t *queue)
{
    memset(seen, 0, (size_t)G->n);
    int32_t head = 0, tail = 0;
    queue[tail++] = u;
    seen[u] = 1;
    while (head < tail) {
        int32_t x = queue[head++];
        for (int64_t e = G->off[x]; e < G->off[x + 1]; e++)
            if (!seen[G->adj[e]]) {
                seen[G->adj[e]] = 1;
                queue[tail++] = G->adj[e];
            }
    }
    return tail;
}
