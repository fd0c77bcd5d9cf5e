/* The reachability reference the graph tests share: a plain BFS. */
#ifndef KR_TEST_TESTGRAPH_H
#define KR_TEST_TESTGRAPH_H

#include "graph/graph.h"

/* seen[v] = 1 for every v that u reaches (u included), by BFS; queue holds
 * n entries. Returns how many vertices u reaches. */
int32_t kt_bfs(const kr_graph *G, int32_t u, unsigned char *seen,
               int32_t *queue);

#endif
