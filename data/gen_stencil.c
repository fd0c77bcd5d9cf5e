/* Constant-coefficient stencils on N^d grids with Dirichlet boundaries
 * (neighbours outside the grid are dropped): the Poisson matrices, upwind
 * convection-diffusion and a coupled 3x3-block vector Laplacian. Rows are
 * counted and filled in place, one grid line per OpenMP iteration. */
#include "core/error.h"
#include "data/gen.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PTS 27
#define MAX_B 3

/* Offsets are listed in increasing column order, so every row comes out
 * sorted: with |dx|, |dy| <= 1 < N, the column p + dx + N dy + N^2 dz
 * orders by (dz, dy, dx). */
typedef struct stencil {
    int b;                            /* unknowns per node (node-major)    */
    int npts;                         /* offsets used                      */
    int off[MAX_PTS][3];              /* dx, dy, dz                        */
    double w[MAX_PTS][MAX_B * MAX_B]; /* b x b block per offset, by rows */
} stencil;

static int inside(int64_t v, int64_t N) { return v >= 0 && v < N; }

/* b^2 * sum over offsets of the nodes whose neighbour is inside. */
static int64_t stencil_nnz(const stencil *s, int64_t N, int64_t nz)
{
    int64_t total = 0;
    for (int o = 0; o < s->npts; o++) {
        int64_t c = 1;
        for (int d = 0; d < 3; d++) {
            int64_t len = d == 2 ? nz : N;
            c *= len - abs(s->off[o][d]);
        }
        if (c > 0) total += c;
    }
    return total * s->b * s->b;
}

/* Rows of grid line (y, z): row lengths into rowptr[row + 1]. */
static void count_line(const stencil *s, int64_t N, int64_t nz, int64_t y,
                       int64_t z, int32_t *rowptr)
{
    for (int64_t x = 0; x < N; x++) {
        int32_t len = 0;
        for (int o = 0; o < s->npts; o++)
            len += inside(x + s->off[o][0], N) && inside(y + s->off[o][1], N) &&
                   inside(z + s->off[o][2], nz);
        int64_t p = x + N * (y + N * z);
        for (int a = 0; a < s->b; a++)
            rowptr[s->b * p + a + 1] = len * s->b;
    }
}

static void fill_line(const stencil *s, int64_t N, int64_t nz, int64_t y,
                      int64_t z, kr_csr *A)
{
    int b = s->b;
    for (int64_t x = 0; x < N; x++) {
        int64_t p = x + N * (y + N * z);
        for (int a = 0; a < b; a++) {
            int32_t k = A->rowptr[b * p + a];
            for (int o = 0; o < s->npts; o++) {
                const int *d = s->off[o];
                if (!inside(x + d[0], N) || !inside(y + d[1], N) ||
                    !inside(z + d[2], nz))
                    continue;
                int64_t q = p + d[0] + N * (d[1] + N * d[2]);
                for (int c = 0; c < b; c++, k++) {
                    A->colind[k] = (int32_t)(b * q + c);
                    A->val[k] = s->w[o][a * b + c];
                }
            }
        }
    }
}

/* N^2 (dims = 2) or N^3 (dims = 3) nodes; sizes were checked by gen.c. */
static kr_status build(kr_ctx *ctx, const stencil *s, int32_t N, int dims,
                       kr_csr *A)
{
    int64_t nz = dims == 3 ? N : 1, lines = (int64_t)N * nz;
    int64_t n = (int64_t)s->b * N * lines;
    KR_TRY(kr_csr_alloc(ctx, (int32_t)n, (int32_t)n,
                        (int32_t)stencil_nnz(s, N, nz), A));
    int nt = kr_gen_threads(ctx, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t l = 0; l < lines; l++)
        count_line(s, N, nz, l % N, l / N, A->rowptr);
    for (int64_t i = 0; i < n; i++)
        A->rowptr[i + 1] += A->rowptr[i];
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t l = 0; l < lines; l++)
        fill_line(s, N, nz, l % N, l / N, A);
    return KR_OK;
}

static void add_pt(stencil *s, int dx, int dy, int dz, const double *w)
{
    int o = s->npts++;
    s->off[o][0] = dx;
    s->off[o][1] = dy;
    s->off[o][2] = dz;
    memcpy(s->w[o], w, sizeof(double) * (size_t)(s->b * s->b));
}

/* 5-point stencil with centre c and south, west, east, north weights. */
static void five_point(stencil *s, double c, double sw, double ww, double ew,
                       double nw)
{
    memset(s, 0, sizeof *s);
    s->b = 1;
    add_pt(s, 0, -1, 0, &sw);
    add_pt(s, -1, 0, 0, &ww);
    add_pt(s, 0, 0, 0, &c);
    add_pt(s, 1, 0, 0, &ew);
    add_pt(s, 0, 1, 0, &nw);
}

kr_status kr_gen_poisson2d(kr_ctx *ctx, int32_t N, kr_csr *A)
{
    stencil s;
    five_point(&s, 4, -1, -1, -1, -1);
    return build(ctx, &s, N, 2, A);
}

/* -Laplace(u) + b . grad(u) = f on the unit square, b = (peclet, peclet),
 * h = 1/(N+1), multiplied by h^2 so diffusion is the (4, -1) stencil. The
 * convection is upwinded (b > 0: backward differences),
 * h^2 * b_x (u_P - u_W) / h = peclet h (u_P - u_W), and likewise in y:
 *   centre 4 + 2 peclet h, west = south = -(1 + peclet h), east = north = -1.
 * Off-diagonals are <= 0 and the row sums >= 0 (> 0 at the boundary), so the
 * matrix is an irreducibly diagonally dominant M-matrix for any peclet >= 0. */
kr_status kr_gen_convdiff2d(kr_ctx *ctx, int32_t N, double peclet, kr_csr *A)
{
    double ph = peclet / ((double)N + 1.0);
    stencil s;
    five_point(&s, 4 + 2 * ph, -1 - ph, -1 - ph, -1, -1);
    return build(ctx, &s, N, 2, A);
}

/* The 7 points of the 3D Laplacian, centre block `c`, neighbour blocks
 * m[d] for the two neighbours in direction d. */
static void seven_point(stencil *s, int b, const double *c,
                        const double m[3][MAX_B * MAX_B])
{
    memset(s, 0, sizeof *s);
    s->b = b;
    add_pt(s, 0, 0, -1, m[2]);
    add_pt(s, 0, -1, 0, m[1]);
    add_pt(s, -1, 0, 0, m[0]);
    add_pt(s, 0, 0, 0, c);
    add_pt(s, 1, 0, 0, m[0]);
    add_pt(s, 0, 1, 0, m[1]);
    add_pt(s, 0, 0, 1, m[2]);
}

kr_status kr_gen_poisson3d(kr_ctx *ctx, int32_t N, kr_csr *A)
{
    const double c = 6, m[3][MAX_B * MAX_B] = {{-1}, {-1}, {-1}};
    stencil s;
    seven_point(&s, 1, &c, m);
    return build(ctx, &s, N, 3, A);
}

/* All 26 neighbours -1, centre 26: symmetric, weakly diagonally dominant
 * and irreducible with positive boundary row sums, hence SPD. */
kr_status kr_gen_poisson3d27(kr_ctx *ctx, int32_t N, kr_csr *A)
{
    stencil s;
    memset(&s, 0, sizeof s);
    s.b = 1;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                double w = dx == 0 && dy == 0 && dz == 0 ? 26 : -1;
                add_pt(&s, dx, dy, dz, &w);
            }
    return build(ctx, &s, N, 3, A);
}

/* A = sum_d T_d (x) M_d, unknown 3p + a for component a of node p, where
 * T_d is the Dirichlet 1D second difference tridiag(-1, 2, -1) along grid
 * direction d (identity along the others) and the 3x3 coupling is
 *   M_d = I + e_d e_d^T + 0.5 * 1 1^T:
 * a vector Laplacian (mu = 1), extra stiffness of component d along
 * direction d (the d^2 u_d / dx_d^2 part of (lambda + mu) grad div, with
 * lambda + mu = 1), and a coupling of all components that makes every
 * block dense, so the 3 rows of a node share one column pattern.
 * SPD: T_d and M_d are SPD (I plus positive semidefinite terms), a
 * Kronecker product of SPD matrices is SPD (its eigenvalues are products
 * of theirs), and so is a sum of SPD matrices. Centre block 2 sum_d M_d =
 * 8 I + 3 1 1^T, neighbour blocks along direction d: -M_d. */
kr_status kr_gen_elasticity3d(kr_ctx *ctx, int32_t N, kr_csr *A)
{
    double c[MAX_B * MAX_B], m[3][MAX_B * MAX_B];
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            c[a * 3 + e] = (a == e ? 8.0 : 0.0) + 3.0;
            for (int d = 0; d < 3; d++)
                m[d][a * 3 + e] = -((a == e) + (a == e && a == d) + 0.5);
        }
    stencil s;
    seven_point(&s, 3, c, (const double(*)[MAX_B * MAX_B]) m);
    return build(ctx, &s, N, 3, A);
}
