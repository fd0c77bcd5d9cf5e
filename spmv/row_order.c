/* The row orders of spmv/row_order.h. Our reading of Mehrabi et al.'s
 * permutations, for a kernel that gives each row a sub-warp, a warp
 * KR_ORDER_WARP_ROWS rows and a thread block KR_ORDER_CTA_ROWS rows:
 *   plain    sorts rows by length, longest first, so rows of a warp have
 *            similar lengths and long rows are scheduled first;
 *   flipped  folds the sorted order (longest, shortest, 2nd longest, 2nd
 *            shortest, ...), so neighbouring rows even out each other;
 *   lpt      longest processing time first: rows, longest first, go to the
 *            least-loaded block of KR_ORDER_CTA_ROWS rows that has room,
 *            which balances the blocks' nonzeros;
 *   warp     the plain order, each warp filled with the rows nearest its
 *            first row by the Hamming distance of their 32-column block
 *            masks (rows of equal length that read the same rows of X);
 *   cta      A's order, each block filled the same way (a block's rows
 *            then share the rows of X they read, in cache);
 *   lpt-warp a hybrid: lpt's blocks, each cut into warps as warp does. */
#include "spmv/row_order.h"

#include "core/error.h"
#include "krylov.h"

#include <stdlib.h>
#include <string.h>

/* Candidates compared with a group's first row. */
#define WARP_WINDOW 32
#define CTA_WINDOW 128

static int32_t row_len(const kr_csr *A, int32_t i)
{
    return A->rowptr[i + 1] - A->rowptr[i];
}

int32_t kr_row_block_distance(const kr_csr *A, int32_t a, int32_t b)
{
    int32_t p = A->rowptr[a], pe = A->rowptr[a + 1];
    int32_t q = A->rowptr[b], qe = A->rowptr[b + 1], diff = 0;
    while (p < pe || q < qe) {
        int32_t ba = p < pe ? A->colind[p] / 32 : INT32_MAX;
        int32_t bb = q < qe ? A->colind[q] / 32 : INT32_MAX;
        int32_t blk = ba < bb ? ba : bb;
        diff += ba != bb;
        /* columns are sorted: skip the rest of this block in both rows */
        while (p < pe && A->colind[p] / 32 == blk)
            p++;
        while (q < qe && A->colind[q] / 32 == blk)
            q++;
    }
    return diff;
}

/* Stable counting sort by length, longest first. */
static kr_status order_plain(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    int32_t longest = 0;
    for (int32_t i = 0; i < A->nrows; i++)
        if (row_len(A, i) > longest) longest = row_len(A, i);
    int32_t *pos = calloc((size_t)longest + 1, sizeof *pos);
    if (!pos) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t i = 0; i < A->nrows; i++)
        pos[row_len(A, i)]++;
    int32_t start = 0;
    for (int32_t L = longest; L >= 0; L--) {
        int32_t count = pos[L];
        pos[L] = start;
        start += count;
    }
    for (int32_t i = 0; i < A->nrows; i++)
        order[pos[row_len(A, i)]++] = i;
    free(pos);
    return KR_OK;
}

static kr_status order_flipped(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    int32_t n = A->nrows;
    int32_t *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
    if (!sorted) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = order_plain(ctx, A, sorted);
    for (int32_t p = 0, lo = 0, hi = n - 1; st == KR_OK && p < n; p++)
        order[p] = p % 2 == 0 ? sorted[lo++] : sorted[hi--];
    free(sorted);
    return st;
}

/* A min-heap of blocks by (load, index), for lpt. */
typedef struct lpt_heap {
    int64_t *load;
    int32_t *blk, size;
} lpt_heap;

static int heap_less(const lpt_heap *h, int32_t a, int32_t b)
{
    int64_t la = h->load[h->blk[a]], lb = h->load[h->blk[b]];
    return la < lb || (la == lb && h->blk[a] < h->blk[b]);
}

static void heap_down(lpt_heap *h, int32_t i)
{
    for (;;) {
        int32_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < h->size && heap_less(h, l, m)) m = l;
        if (r < h->size && heap_less(h, r, m)) m = r;
        if (m == i) return;
        int32_t t = h->blk[i];
        h->blk[i] = h->blk[m];
        h->blk[m] = t;
        i = m;
    }
}

/* Places sorted rows: each to the least-loaded block with room; a full
 * block leaves the heap. Blocks' loads only grow, so the top sifts down. */
static void lpt_place(const kr_csr *A, const int32_t *sorted, lpt_heap *h,
                      int32_t *fill, int32_t *order)
{
    const int32_t n = A->nrows, C = KR_ORDER_CTA_ROWS;
    for (int32_t p = 0; p < n; p++) {
        int32_t b = h->blk[0];
        int32_t cap = n - b * C < C ? n - b * C : C;
        order[b * C + fill[b]++] = sorted[p];
        h->load[b] += row_len(A, sorted[p]);
        if (fill[b] == cap) h->blk[0] = h->blk[--h->size];
        heap_down(h, 0);
    }
}

static kr_status order_lpt(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    int32_t n = A->nrows, nb = (n + KR_ORDER_CTA_ROWS - 1) / KR_ORDER_CTA_ROWS;
    int32_t *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
    int32_t *fill = calloc((size_t)nb + 1, sizeof *fill);
    lpt_heap h = {calloc((size_t)nb + 1, sizeof(int64_t)),
                  malloc(((size_t)nb + 1) * sizeof(int32_t)), nb};
    kr_status st = KR_OK;
    if (!sorted || !fill || !h.load || !h.blk)
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    if (st == KR_OK) st = order_plain(ctx, A, sorted);
    if (st == KR_OK) {
        for (int32_t b = 0; b < nb; b++)
            h.blk[b] = b; /* all loads 0: already a heap */
        lpt_place(A, sorted, &h, fill, order);
    }
    free(sorted);
    free(fill);
    free(h.load);
    free(h.blk);
    return st;
}

void kr_row_block_distances(const kr_csr *A, int32_t seed, const int32_t *rows,
                            int32_t n, int32_t *stamp, int32_t mark,
                            int32_t *dist)
{
    int32_t seed_blocks = 0, last = -1;
    for (int32_t p = A->rowptr[seed]; p < A->rowptr[seed + 1]; p++)
        if (A->colind[p] / 32 != last) {
            last = A->colind[p] / 32;
            stamp[last] = mark;
            seed_blocks++;
        }
    for (int32_t i = 0; i < n; i++) {
        int32_t blocks = 0, shared = 0;
        last = -1;
        for (int32_t p = A->rowptr[rows[i]]; p < A->rowptr[rows[i] + 1]; p++)
            if (A->colind[p] / 32 != last) {
                last = A->colind[p] / 32;
                blocks++;
                shared += stamp[last] == mark;
            }
        dist[i] = seed_blocks + blocks - 2 * shared;
    }
}

/* Scratch of group_by_overlap. */
typedef struct overlap_work {
    char *taken;    /* per position of the segment */
    int32_t *out;   /* the regrouped segment       */
    int32_t *stamp; /* per 32-column block         */
    int32_t *cand;  /* window positions, rows, distances */
    int32_t *rows, *dist;
    int32_t mark;
} overlap_work;

/* The window: up to `window` positions after head not yet taken. */
static int32_t gather_window(const int32_t *seq, int32_t m, int32_t head,
                             int32_t window, overlap_work *w)
{
    int32_t n = 0;
    for (int32_t c = head + 1; c < m && n < window; c++)
        if (!w->taken[c]) {
            w->cand[n] = c;
            w->rows[n++] = seq[c];
        }
    return n;
}

/* Rewrites seq[0..m) in groups of `group`: each group is the first row not
 * yet taken and the rows nearest it by block distance among the next
 * `window` rows not taken (the earliest on ties). */
static void group_by_overlap(const kr_csr *A, int32_t *seq, int32_t m,
                             int32_t group, int32_t window, overlap_work *w)
{
    int32_t head = 0, p = 0;
    while (p < m) {
        while (w->taken[head])
            head++;
        w->taken[head] = 1;
        w->out[p++] = seq[head];
        int32_t n = gather_window(seq, m, head, window, w);
        kr_row_block_distances(A, seq[head], w->rows, n, w->stamp, ++w->mark,
                               w->dist);
        for (int32_t g = 1; g < group && p < m; g++) {
            int32_t best = -1;
            for (int32_t i = 0; i < n; i++)
                if (!w->taken[w->cand[i]] &&
                    (best < 0 || w->dist[i] < w->dist[best]))
                    best = i;
            w->taken[w->cand[best]] = 1;
            w->out[p++] = w->rows[best];
        }
    }
    memcpy(seq, w->out, (size_t)m * sizeof *seq);
}

static void free_work(overlap_work *w)
{
    free(w->taken);
    free(w->out);
    free(w->stamp);
    free(w->cand);
    free(w->rows);
    free(w->dist);
}

/* order (a first order) regrouped in segments of `segment` rows (or all
 * rows when 0), each into groups of `group` rows. */
static kr_status regroup(kr_ctx *ctx, const kr_csr *A, int32_t *order,
                         int32_t segment, int32_t group, int32_t window)
{
    int32_t n = A->nrows, seg = segment > 0 ? segment : (n > 0 ? n : 1);
    overlap_work w = {calloc((size_t)seg + 1, 1),
                      malloc(((size_t)seg + 1) * 4),
                      calloc((size_t)A->ncols / 32 + 1, 4),
                      malloc((size_t)window * 4),
                      malloc((size_t)window * 4),
                      malloc((size_t)window * 4),
                      0};
    kr_status st = KR_OK;
    if (!w.taken || !w.out || !w.stamp || !w.cand || !w.rows || !w.dist)
        st = kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    for (int32_t s = 0; st == KR_OK && s < n; s += seg) {
        int32_t m = n - s < seg ? n - s : seg;
        memset(w.taken, 0, (size_t)m);
        group_by_overlap(A, order + s, m, group, window, &w);
    }
    free_work(&w);
    return st;
}

static kr_status order_none(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    (void)ctx;
    for (int32_t i = 0; i < A->nrows; i++)
        order[i] = i;
    return KR_OK;
}

static kr_status order_warp(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    KR_TRY(order_plain(ctx, A, order));
    return regroup(ctx, A, order, 0, KR_ORDER_WARP_ROWS, WARP_WINDOW);
}

static kr_status order_cta(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    KR_TRY(order_none(ctx, A, order));
    return regroup(ctx, A, order, 0, KR_ORDER_CTA_ROWS, CTA_WINDOW);
}

static kr_status order_lpt_warp(kr_ctx *ctx, const kr_csr *A, int32_t *order)
{
    KR_TRY(order_lpt(ctx, A, order));
    return regroup(ctx, A, order, KR_ORDER_CTA_ROWS, KR_ORDER_WARP_ROWS,
                   WARP_WINDOW);
}

typedef struct order_entry {
    const char *name;
    kr_status (*make)(kr_ctx *ctx, const kr_csr *A, int32_t *order);
} order_entry;

static const order_entry ORDERS[] = {
    {"none", order_none},        {"plain", order_plain},
    {"flipped", order_flipped},  {"lpt", order_lpt},
    {"warp", order_warp},        {"cta", order_cta},
    {"lpt-warp", order_lpt_warp}};
#define NORDERS (sizeof ORDERS / sizeof ORDERS[0])

const char *const *kr_permute_names(void)
{
    static const char *names[NORDERS + 1];
    for (size_t i = 0; i < NORDERS; i++)
        names[i] = ORDERS[i].name;
    names[NORDERS] = NULL;
    return names;
}

static const order_entry *find_order(const char *name)
{
    for (size_t i = 0; name && i < NORDERS; i++)
        if (strcmp(ORDERS[i].name, name) == 0) return &ORDERS[i];
    return NULL;
}

int kr_row_order_known(const char *name) { return find_order(name) != NULL; }

kr_status kr_row_order(kr_ctx *ctx, const kr_csr *A, const char *name,
                       int32_t *order)
{
    const order_entry *e = find_order(name);
    if (!e)
        return kr_fail(ctx, KR_ERR_ARG, "unknown row order '%s'",
                       name ? name : "(null)");
    return e->make(ctx, A, order);
}
