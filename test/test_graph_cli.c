/* The graph commands: `krylov analyze` on every shared matrix, its SCC
 * counts against Kosaraju's algorithm written here (and the counts it gave,
 * fixed in a table), and `krylov reach`: answers against a BFS, malformed
 * graphs and query files rejected with exit 3 and the line, --help. */
#include "graph/graph.h"
#include "testgraph.h"
#include "testjson.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------- Kosaraju, the reference */

/* Post-order of an iterative DFS over G from every vertex in turn. */
static void finish_order(const kr_graph *G, int32_t *order)
{
    int32_t n = G->n, count = 0, top;
    unsigned char *seen = calloc((size_t)n + 1, 1);
    int32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    int64_t *next = malloc(((size_t)n + 1) * sizeof *next);
    for (int32_t r = 0; r < n; r++) {
        if (seen[r]) continue;
        seen[r] = 1;
        stack[0] = r;
        next[r] = G->off[r];
        top = 1;
        while (top) {
            int32_t v = stack[top - 1];
            if (next[v] == G->off[v + 1]) {
                order[count++] = v;
                top--;
                continue;
            }
            int32_t w = G->adj[next[v]++];
            if (!seen[w]) {
                seen[w] = 1;
                next[w] = G->off[w];
                stack[top++] = w;
            }
        }
    }
    free(seen);
    free(stack);
    free(next);
}

/* SCC count and the largest SCC: DFS on the reverse graph in decreasing
 * finish time; each tree is one component. */
static int32_t kosaraju(kr_ctx *ctx, const kr_graph *G, int32_t *largest)
{
    int32_t n = G->n;
    int32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    finish_order(G, order);
    kr_graph *T;
    ck_assert_int_eq(kr_graph_transpose(ctx, G, &T), KR_OK);
    unsigned char *seen = calloc((size_t)n + 1, 1);
    int32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    int32_t count = 0;
    *largest = 0;
    for (int32_t k = n - 1; k >= 0; k--) {
        int32_t r = order[k], top = 0, size = 0;
        if (seen[r]) continue;
        seen[r] = 1;
        stack[top++] = r;
        while (top) {
            int32_t v = stack[--top];
            size++;
            for (int64_t e = T->off[v]; e < T->off[v + 1]; e++)
                if (!seen[T->adj[e]]) {
                    seen[T->adj[e]] = 1;
                    stack[top++] = T->adj[e];
                }
        }
        count++;
        if (size > *largest) *largest = size;
    }
    kr_graph_destroy(T);
    free(order);
    free(seen);
    free(stack);
    return count;
}

/* ------------------------------------------------------------ analyze */

/* SCCs and the largest SCC of each shared matrix (2026-11-24); each is
 * recomputed below by Kosaraju's algorithm, independent of graph/scc.c. */
static const struct {
    const char *name;
    int32_t sccs, largest;
} known[] = {
#include "test_graph_cli_sccs.inc"
};

START_TEST(analyze_every_matrix)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("analyze_every_matrix", "no ../shared/matrices");
        return;
    }
    kr_ctx *ctx = kt_cpu();
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.mtx", dir, known[i].name);
        kr_csr A = {0};
        ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
        kr_graph *G;
        ck_assert_int_eq(kr_graph_from_csr(ctx, &A, &G), KR_OK);
        int32_t largest, sccs = kosaraju(ctx, G, &largest);
        ck_assert_msg(sccs == known[i].sccs && largest == known[i].largest,
                      "%s: Kosaraju %d (largest %d), table %d (%d)",
                      known[i].name, (int)sccs, (int)largest,
                      (int)known[i].sccs, (int)known[i].largest);
        kt_output r =
            kt_command("", kt_krylov_bin(), NULL, "analyze '%s' --json", path);
        ck_assert_msg(r.rc == 0, "%s: exit %d: %s", path, r.rc, r.err);
        const char *end = kt_json_value(r.out);
        ck_assert_ptr_nonnull(end);
        ck_assert_int_eq((int)kt_json_num(r.out, end, "sccs"), sccs);
        ck_assert_int_eq((int)kt_json_num(r.out, end, "largest_scc"), largest);
        ck_assert_int_eq((int)kt_json_num(r.out, end, "n"), A.nrows);
        printf("analyze_every_matrix: %s: %d SCCs, largest %d, %.2f ms\n",
               known[i].name, (int)sccs, (int)largest,
               1e3 * kt_json_num(r.out, end, "seconds"));
        kt_output_free(&r);
        r = kt_command("", kt_krylov_bin(), NULL,
                       "analyze '%s' --json --scc fwbw", path);
        ck_assert_msg(r.rc == 0, "%s --scc fwbw: exit %d: %s", path, r.rc,
                      r.err);
        end = kt_json_value(r.out);
        char method[32];
        kt_json_str(r.out, end, "scc_method", method, sizeof method);
        ck_assert_str_eq(method, "fwbw-cpu");
        ck_assert_int_eq((int)kt_json_num(r.out, end, "sccs"), sccs);
        ck_assert_int_eq((int)kt_json_num(r.out, end, "largest_scc"), largest);
        kt_output_free(&r);
        kr_graph_destroy(G);
        kr_csr_free(&A);
    }
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(analyze_text_and_errors)
{
    const char *dir = kt_tmpdir();
    const char *m = kt_write_file(dir, "a.mtx",
                                  "%%MatrixMarket matrix coordinate real "
                                  "general\n3 3 4\n1 1 2\n2 1 1\n3 2 1\n"
                                  "3 3 2\n");
    kt_output r = kt_command("", kt_krylov_bin(), NULL, "analyze '%s'", m);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "3 strongly connected components"));
    ck_assert_ptr_nonnull(strstr(r.out, "rows 2)"));
    ck_assert_ptr_nonnull(strstr(r.out, "bjacobi, not jacobi"));
    ck_assert_ptr_nonnull(strstr(r.out, "block-triangular"));
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "analyze '%s/none.mtx'", dir);
    ck_assert_int_eq(r.rc, 3);
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "analyze");
    ck_assert_int_eq(r.rc, 2);
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "analyze --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--json"));
    ck_assert_ptr_nonnull(strstr(r.out, "--blocking"));
    kt_output_free(&r);
}
END_TEST

/* -------------------------------------------------------------- reach */

/* 0 -> 1 -> 2, 2 -> 1 (a cycle), 3 isolated, 4 -> 0. */
static const char *small_gra =
    "graph_for_greach\n5\n0: 1 #\n1: 2 #\n2: 1 #\n3: #\n4: 0 #\n";

START_TEST(reach_answers_queries)
{
    const char *dir = kt_tmpdir();
    char g[1024];
    snprintf(g, sizeof g, "%s", kt_write_file(dir, "g.gra", small_gra));
    const char *q = kt_write_file(dir, "q.txt",
                                  "# u v\n0 2\n2 0\n2 1 0\n4 2\n3 3\n\n1 3\n");
    kt_output r = kt_command("", kt_krylov_bin(), NULL,
                             "reach '%s' --queries '%s'", g, q);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "1\n0\n1\n1\n1\n0\n");
    kt_output_free(&r);
    const char *methods[] = {"fwbw", "auto", "tarjan"};
    for (int i = 0; i < 3; i++) {
        r = kt_command("", kt_krylov_bin(), NULL,
                       "reach '%s' --queries '%s' --scc %s", g, q, methods[i]);
        ck_assert_msg(r.rc == 0, "%s", r.err);
        ck_assert_str_eq(r.out, "1\n0\n1\n1\n1\n0\n");
        kt_output_free(&r);
    }
    r = kt_command("", kt_krylov_bin(), NULL,
                   "reach '%s' --queries '%s' --scc kosaraju", g, q);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "tarjan, fwbw, auto"));
    kt_output_free(&r);
    q = kt_write_file(dir, "q1.txt", "1 3\n5 1\n");
    r = kt_command("", kt_krylov_bin(), NULL,
                   "reach '%s' --queries '%s' --one-based --labels 2", g, q);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "1\n1\n");
    kt_output_free(&r);
}
END_TEST

/* --random on a matrix's graph: each "u v a" line against a BFS. */
START_TEST(reach_random_matrix)
{
    const char *dir = kt_matrices_dir();
    if (!dir) {
        kt_skip("reach_random_matrix", "no ../shared/matrices");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/west2021.mtx", dir);
    kt_output r = kt_command("", kt_krylov_bin(), NULL,
                             "reach '%s' --random 300 --seed 4", path);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0};
    ck_assert_int_eq(kr_read_mtx(ctx, path, &A), KR_OK);
    kr_graph *G;
    ck_assert_int_eq(kr_graph_from_csr(ctx, &A, &G), KR_OK);
    unsigned char *seen = malloc((size_t)G->n);
    int32_t *queue = malloc((size_t)G->n * sizeof *queue);
    const char *p = r.out;
    int u, v, a, lines = 0, n;
    while (sscanf(p, "%d %d %d\n%n", &u, &v, &a, &n) == 3) {
        kt_bfs(G, u, seen, queue);
        ck_assert_msg(a == seen[v], "%d -> %d: reach %d, bfs %d", u, v, a,
                      seen[v]);
        p += n;
        lines++;
    }
    ck_assert_int_eq(lines, 300);
    free(seen);
    free(queue);
    kr_graph_destroy(G);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
    kt_output_free(&r);
}
END_TEST

START_TEST(reach_rejects_bad_input)
{
    const char *dir = kt_tmpdir();
    char g[1024];
    snprintf(g, sizeof g, "%s", kt_write_file(dir, "g.gra", small_gra));
    const char *bad =
        kt_write_file(dir, "bad.gra", "graph_for_greach\n3\n0: 1 #\n1: 7 #\n");
    kt_output r =
        kt_command("", kt_krylov_bin(), NULL, "reach '%s' --random 3", bad);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_ptr_nonnull(strstr(r.err, "bad.gra:4:"));
    kt_output_free(&r);
    const char *q = kt_write_file(dir, "q.txt", "0 1\n0 x\n");
    r = kt_command("", kt_krylov_bin(), NULL, "reach '%s' --queries '%s'", g,
                   q);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_ptr_nonnull(strstr(r.err, "q.txt:2:"));
    kt_output_free(&r);
    q = kt_write_file(dir, "q2.txt", "0 1\n\n0 5\n");
    r = kt_command("", kt_krylov_bin(), NULL, "reach '%s' --queries '%s'", g,
                   q);
    ck_assert_int_eq(r.rc, 3);
    ck_assert_ptr_nonnull(strstr(r.err, "q2.txt:3: vertex 5"));
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "reach '%s'", g);
    ck_assert_int_eq(r.rc, 2);
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "reach --gen dag:5 --random 2");
    ck_assert_int_eq(r.rc, 2);
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL,
                   "reach '%s' --block-size 4 "
                   "--random 2",
                   g);
    ck_assert_int_eq(r.rc, 2);
    kt_output_free(&r);
}
END_TEST

/* Blocks {1,2} {3,4} {5,6}: block 1 feeds block 2, block 2 feeds 3. */
START_TEST(reach_blocks)
{
    const char *dir = kt_tmpdir();
    char m[1024], b[1024];
    snprintf(m, sizeof m, "%s",
             kt_write_file(dir, "a.mtx",
                           "%%MatrixMarket matrix coordinate real general\n"
                           "6 6 10\n1 1 4\n2 2 4\n3 3 4\n4 4 4\n5 5 4\n"
                           "6 6 4\n1 2 1\n2 1 1\n3 2 1\n6 4 1\n"));
    snprintf(b, sizeof b, "%s",
             kt_write_file(dir, "b.mtx",
                           "%%MatrixMarket matrix array real general\n"
                           "3 1\n2\n2\n2\n"));
    const char *q = kt_write_file(dir, "q.txt", "0 2\n2 0\n1 2\n2 1\n");
    kt_output r =
        kt_command("", kt_krylov_bin(), NULL,
                   "reach '%s' --blocks '%s' --queries '%s'", m, b, q);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "1\n0\n1\n0\n");
    kt_output_free(&r);
    q = kt_write_file(dir, "q3.txt", "0 3\n");
    r = kt_command("", kt_krylov_bin(), NULL,
                   "reach '%s' --blocks '%s' --queries '%s'", m, b, q);
    ck_assert_int_eq(r.rc, 3); /* only 3 blocks */
    kt_output_free(&r);
}
END_TEST

START_TEST(reach_bench_and_help)
{
    kt_output r = kt_command("", kt_krylov_bin(), NULL,
                             "reach --gen dag:3000,4 --bench --random 2000");
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "decided by labels"));
    ck_assert_ptr_nonnull(strstr(r.out, "| cpu (1 thread"));
    kt_output_free(&r);
    r = kt_command("", kt_krylov_bin(), NULL, "reach --help");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--one-based"));
    ck_assert_ptr_nonnull(strstr(r.out, "--bench"));
    kt_output_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("graph_cli");
    TCase *t = tcase_create("graph_cli");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, analyze_every_matrix);
    tcase_add_test(t, analyze_text_and_errors);
    tcase_add_test(t, reach_answers_queries);
    tcase_add_test(t, reach_random_matrix);
    tcase_add_test(t, reach_rejects_bad_input);
    tcase_add_test(t, reach_blocks);
    tcase_add_test(t, reach_bench_and_help);
    suite_add_tcase(s, t);
    return kt_run(s);
}
