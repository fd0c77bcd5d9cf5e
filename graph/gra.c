/* GRAIL's text graph format (.gra, .gra.gz):
 *
 *   graph_for_greach
 *   N
 *   0: 5 17 #        vertex 0 has edges 0 -> 5 and 0 -> 17
 *
 * read through the project's line reader, so every error names file:line.
 * Vertex lines may come in any order but each vertex once; blank lines are
 * skipped. */
#include "core/error.h"
#include "graph/graph.h"
#include "io/lines.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct gra_read {
    kr_ctx *ctx;
    kr_lines L;
    int32_t n;
    int64_t m, cap;
    int32_t *src, *dst;
    unsigned char *seen; /* a line for vertex v was read */
} gra_read;

static kr_status bad(gra_read *r, const char *what, const char *text)
{
    return kr_fail(r->ctx, KR_ERR_FORMAT, "%s:%ld: %s%s%.40s%s", r->L.path,
                   r->L.line, what, text ? " near '" : "", text ? text : "",
                   text ? "'" : "");
}

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* A non-negative decimal below limit at *s; advances *s past it. */
static int parse_index(const char **s, int64_t limit, int64_t *value)
{
    const char *p = *s;
    int64_t v = 0;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        if (v >= limit) return 0;
    }
    *s = p;
    *value = v;
    return 1;
}

static kr_status add_edge(gra_read *r, int32_t u, int32_t v)
{
    if (r->m == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 1024;
        int32_t *s = realloc(r->src, (size_t)cap * sizeof *s);
        if (s) r->src = s;
        int32_t *d = s ? realloc(r->dst, (size_t)cap * sizeof *d) : NULL;
        if (!d) return kr_fail(r->ctx, KR_ERR_NOMEM, "out of host memory");
        r->dst = d;
        r->cap = cap;
    }
    r->src[r->m] = u;
    r->dst[r->m++] = v;
    return KR_OK;
}

static kr_status header(gra_read *r)
{
    char *line;
    KR_TRY(kr_lines_next(r->ctx, &r->L, &line));
    const char *magic = "graph_for_greach";
    if (!line || strncmp(skip_space(line), magic, strlen(magic)) ||
        *skip_space(skip_space(line) + strlen(magic)))
        return bad(r, "the first line is not 'graph_for_greach'", NULL);
    KR_TRY(kr_lines_next(r->ctx, &r->L, &line));
    if (!line) return bad(r, "the file ends before the vertex count", NULL);
    const char *s = skip_space(line);
    int64_t n;
    if (!parse_index(&s, INT32_MAX, &n) || *skip_space(s))
        return bad(r, "the vertex count is not an integer in 0..2^31-2", line);
    r->n = (int32_t)n;
    r->seen = calloc((size_t)n + 1, 1);
    if (!r->seen) return kr_fail(r->ctx, KR_ERR_NOMEM, "out of host memory");
    return KR_OK;
}

/* "v: w1 w2 ... #" */
static kr_status vertex_line(gra_read *r, const char *line)
{
    const char *s = skip_space(line);
    int64_t u, w;
    if (!parse_index(&s, r->n, &u))
        return bad(r, "expected a vertex number in 0..N-1 and ':'", line);
    if (*s != ':') return bad(r, "expected ':' after the vertex", line);
    if (r->seen[u]) return bad(r, "a second line for this vertex", line);
    r->seen[u] = 1;
    for (s = skip_space(s + 1); *s != '#'; s = skip_space(s)) {
        const char *at = s;
        if (!*s) return bad(r, "the line does not end with '#'", line);
        if (!parse_index(&s, r->n, &w) ||
            !(isspace((unsigned char)*s) || *s == '#'))
            return bad(r, "an edge target is not a vertex in 0..N-1", at);
        KR_TRY(add_edge(r, (int32_t)u, (int32_t)w));
    }
    if (*skip_space(s + 1)) return bad(r, "text after '#'", s);
    return KR_OK;
}

static kr_status body(gra_read *r)
{
    int32_t lines = 0;
    char *line;
    for (;;) {
        KR_TRY(kr_lines_next(r->ctx, &r->L, &line));
        if (!line) break;
        if (!*skip_space(line)) continue;
        if (lines == r->n)
            return bad(r, "more vertex lines than the vertex count", line);
        KR_TRY(vertex_line(r, line));
        lines++;
    }
    if (lines < r->n)
        return kr_fail(r->ctx, KR_ERR_FORMAT,
                       "%s:%ld: the file ends after %d of %d vertex lines",
                       r->L.path, kr_lines_last(&r->L), (int)lines, (int)r->n);
    return KR_OK;
}

kr_status kr_graph_read_gra(kr_ctx *ctx, const char *path, kr_graph **G)
{
    *G = NULL;
    gra_read r = {.ctx = ctx};
    kr_status st;
    KR_CHECK(st, kr_lines_open(ctx, path, &r.L), done);
    KR_CHECK(st, header(&r), done);
    KR_CHECK(st, body(&r), done);
    st = kr_graph_from_edges(ctx, r.n, r.m, r.src, r.dst, G);
done:
    kr_lines_close(&r.L);
    free(r.src);
    free(r.dst);
    free(r.seen);
    return st;
}
