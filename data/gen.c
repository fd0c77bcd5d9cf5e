/* kr_generate: parses a spec "name:N[,param]", checks that n and nnz fit in
 * int32 before anything is allocated, and calls the generator's builder. */
#include "data/gen.h"

#include "core/error.h"
#include "core/memory.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H_POISSON2D                                                            \
    "  poisson2d:N            5-point 2D Laplacian, n = N^2 (SPD)"
#define H_POISSON3D                                                            \
    "  poisson3d:N            7-point 3D Laplacian, n = N^3 (SPD)"
#define H_POISSON27                                                            \
    "  poisson3d27:N          27-point 3D Laplacian, n = N^3 (SPD)"
#define H_CONVDIFF                                                             \
    "  convdiff2d:N[,peclet]  2D upwind convection-diffusion, velocity "       \
    "(peclet, peclet),\n"                                                      \
    "                         peclet >= 0 (default 10), n = N^2 "              \
    "(nonsymmetric M-matrix)"
#define H_ELASTICITY                                                           \
    "  elasticity3d:N         coupled 3D vector Laplacian, 3x3 node blocks, "  \
    "n = 3 N^3 (SPD)"
#define H_POWERLAW                                                             \
    "  powerlaw:N[,mean[,shape]]\n"                                            \
    "                         N random rows, power-law lengths of mean "       \
    "1 <= mean <= N\n"                                                         \
    "                         (default min(15, N)), Pareto shape 1 < shape "   \
    "<= 8 (default 1.5;\n"                                                     \
    "                         smaller: heavier tail), nonsymmetric, "          \
    "diagonally dominant"
#define H_BANDED                                                               \
    "  banded:N[,width[,seed]]\n"                                              \
    "                         row i spans columns i-l..i+u, l and u random "   \
    "in 0..width\n"                                                            \
    "                         (default min(8, N-1)), nonsymmetric, "           \
    "diagonally dominant"
#define H_BLOCKS                                                               \
    "  blocks:N[,size[,per_row[,seed]]]\n"                                     \
    "                         dense size x size blocks (default min(8, N)): "  \
    "the diagonal one\n"                                                       \
    "                         and per_row random others per block row "        \
    "(default 3, at most\n"                                                    \
    "                         the other block rows), nonsymmetric, "           \
    "diagonally dominant"
#define H_ARROW                                                                \
    "  arrow:N[,width]        the first width rows and columns full "          \
    "(default min(4, N))\n"                                                    \
    "                         plus the diagonal (SPD)"

/* Parameters longer than this are rejected rather than copied. */
#define FIELD_MAX 64
/* Parameters after N, at most. */
#define MAX_PARAMS 3

typedef struct gen_entry {
    const char *name;
    int nparams; /* optional parameters after N */
    double pdefault[MAX_PARAMS];
    /* n and nnz (upper bound) for valid N and p, saturating near 2^62 */
    void (*sizes)(int64_t N, const double *p, int64_t *n, int64_t *nnz);
    /* NULL when the first `given` parameters are acceptable for this N,
     * else the reason; defaults past them are lowered by the builder */
    const char *(*check)(int64_t N, const double *p, int given);
    kr_status (*build)(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A);
} gen_entry;

/* a*b for a, b >= 0, saturating at 2^62 so later sums cannot overflow */
static int64_t smul(int64_t a, int64_t b)
{
    const int64_t cap = INT64_C(1) << 62;
    if (a == 0 || b == 0) return 0;
    return a > cap / b ? cap : a * b;
}

/* Neighbour pairs per dimension: N self pairs and N-1 pairs per direction. */
static void sz_poisson2d(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    (void)p;
    *n = smul(N, N);
    *nnz = smul(N, 5 * N - 4); /* 5N^2 - 4N */
}

static void sz_poisson3d(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    (void)p;
    *n = smul(smul(N, N), N);
    *nnz = smul(smul(N, N), 7 * N - 6); /* 7N^3 - 6N^2 */
}

static void sz_poisson27(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    (void)p;
    *n = smul(smul(N, N), N);
    *nnz = smul(smul(3 * N - 2, 3 * N - 2), 3 * N - 2); /* (3N-2)^3 */
}

static void sz_elasticity(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    (void)p;
    *n = smul(3, smul(smul(N, N), N));
    *nnz = smul(9, smul(smul(N, N), 7 * N - 6)); /* 9 (7N^3 - 6N^2) */
}

/* The builder keeps nnz <= floor(mean * N). */
static void sz_powerlaw(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    double e = floor(p[0] * (double)N);
    *n = N;
    *nnz = e >= 0x1p62 ? INT64_C(1) << 62 : (int64_t)e;
}

/* Upper bounds: N rows of 2 width + 1, or of (per_row + 1) size. */
static void sz_banded(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    *n = N;
    *nnz = smul(N, 2 * (int64_t)p[0] + 1);
}

static void sz_blocks(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    *n = N;
    *nnz = smul(N, smul((int64_t)p[1] + 1, (int64_t)p[0]));
}

static void sz_arrow(int64_t N, const double *p, int64_t *n, int64_t *nnz)
{
    int64_t w = (int64_t)p[0] < N ? (int64_t)p[0] : N;
    *n = N;
    *nnz = smul(w, N) + smul(N - w, w + 1);
}

static const char *ck_peclet(int64_t N, const double *p, int given)
{
    (void)N;
    return given < 1 || p[0] >= 0 ? NULL : "peclet must be >= 0";
}

static const char *ck_powerlaw(int64_t N, const double *p, int given)
{
    if (given >= 1 && !(p[0] >= 1 && p[0] <= (double)N))
        return "mean must be in [1, N]";
    if (given >= 2 && !(p[1] > 1 && p[1] <= 8))
        return "shape must be in (1, 8]";
    return NULL;
}

static int is_count(double v, double lo, double hi)
{
    return v == floor(v) && v >= lo && v <= hi;
}

static const char *ck_seed(const double *p, int given, int at)
{
    return given <= at || is_count(p[at], 0, 0x1p53)
               ? NULL
               : "seed must be an integer in [0, 2^53]";
}

static const char *ck_banded(int64_t N, const double *p, int given)
{
    if (given >= 1 && !is_count(p[0], 0, (double)(N - 1)))
        return "width must be an integer in [0, N-1]";
    return ck_seed(p, given, 1);
}

static const char *ck_blocks(int64_t N, const double *p, int given)
{
    if (given >= 1 && !is_count(p[0], 1, (double)N))
        return "size must be an integer in [1, N]";
    double nb = ceil((double)N / (given >= 1 ? p[0] : 1));
    if (given >= 2 && !is_count(p[1], 0, nb - 1))
        return "per_row must be an integer in [0, block rows - 1]";
    return ck_seed(p, given, 2);
}

static const char *ck_arrow(int64_t N, const double *p, int given)
{
    return given < 1 || is_count(p[0], 1, (double)N)
               ? NULL
               : "width must be an integer in [1, N]";
}

static kr_status b_poisson2d(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    (void)p;
    return kr_gen_poisson2d(ctx, N, A);
}

static kr_status b_poisson3d(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    (void)p;
    return kr_gen_poisson3d(ctx, N, A);
}

static kr_status b_poisson27(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    (void)p;
    return kr_gen_poisson3d27(ctx, N, A);
}

static kr_status b_convdiff(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    return kr_gen_convdiff2d(ctx, N, p[0], A);
}

static kr_status b_elasticity(kr_ctx *ctx, int32_t N, const double *p,
                              kr_csr *A)
{
    (void)p;
    return kr_gen_elasticity3d(ctx, N, A);
}

static kr_status b_powerlaw(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    return kr_gen_powerlaw(ctx, N, p[0], p[1], A);
}

static int32_t at_most(double v, int64_t cap)
{
    return (int32_t)(v < (double)cap ? v : (double)cap);
}

static kr_status b_banded(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    return kr_gen_banded(ctx, N, at_most(p[0], N - 1), (uint64_t)p[1], A);
}

static kr_status b_blocks(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    int32_t size = at_most(p[0], N);
    int64_t nb = ((int64_t)N + size - 1) / size;
    return kr_gen_blocks(ctx, N, size, at_most(p[1], nb - 1), (uint64_t)p[2],
                         A);
}

static kr_status b_arrow(kr_ctx *ctx, int32_t N, const double *p, kr_csr *A)
{
    return kr_gen_arrow(ctx, N, at_most(p[0], N), A);
}

static const gen_entry generators[] = {
    {"poisson2d", 0, {0}, sz_poisson2d, NULL, b_poisson2d},
    {"poisson3d", 0, {0}, sz_poisson3d, NULL, b_poisson3d},
    {"poisson3d27", 0, {0}, sz_poisson27, NULL, b_poisson27},
    {"convdiff2d",
     1,
     {KR_GEN_PECLET_DEFAULT},
     sz_poisson2d,
     ck_peclet,
     b_convdiff},
    {"elasticity3d", 0, {0}, sz_elasticity, NULL, b_elasticity},
    {"powerlaw",
     2,
     {KR_GEN_MEAN_DEFAULT, KR_GEN_SHAPE_DEFAULT},
     sz_powerlaw,
     ck_powerlaw,
     b_powerlaw},
    {"banded", 2, {KR_GEN_BAND_DEFAULT, 0}, sz_banded, ck_banded, b_banded},
    {"blocks",
     3,
     {KR_GEN_BLOCK_DEFAULT, KR_GEN_BLOCKS_PER_ROW_DEFAULT, 0},
     sz_blocks,
     ck_blocks,
     b_blocks},
    {"arrow", 1, {KR_GEN_ARROW_DEFAULT}, sz_arrow, ck_arrow, b_arrow},
};

const char *kr_generator_help(void)
{
    return H_POISSON2D "\n" H_POISSON3D "\n" H_POISSON27 "\n" H_CONVDIFF
                       "\n" H_ELASTICITY "\n" H_POWERLAW "\n" H_BANDED
                       "\n" H_BLOCKS "\n" H_ARROW "\n";
}

int kr_gen_threads(const kr_ctx *ctx, int64_t work)
{
    if (work < 32768) return 1;
    int t = kr_ctx_threads(ctx);
    return t < 1 ? 1 : t;
}

static kr_status bad_spec(kr_ctx *ctx, const char *spec, const char *why)
{
    return kr_fail(ctx, KR_ERR_ARG,
                   "bad generator spec \"%.80s\": %s; valid forms:\n%s", spec,
                   why, kr_generator_help());
}

/* N: decimal digits only (no sign, no blanks), 1 <= N <= INT32_MAX. */
static const char *parse_n(const char *s, int64_t *N)
{
    if (!*s) return "N is missing";
    int64_t v = 0;
    for (const char *c = s; *c; c++) {
        if (!isdigit((unsigned char)*c))
            return "N must be a positive integer (digits only)";
        v = v * 10 + (*c - '0');
        if (v > INT32_MAX) return "N is larger than 2147483647";
    }
    if (v < 1) return "N must be at least 1";
    *N = v;
    return NULL;
}

/* A finite real written in full (strtod syntax, no leading blanks). */
static const char *parse_real(const char *s, double *p)
{
    char *end;
    if (!*s) return "a parameter after ',' is empty";
    if (isspace((unsigned char)*s)) return "a parameter starts with a blank";
    *p = strtod(s, &end);
    if (end == s || *end) return "a parameter is not a number";
    if (!isfinite(*p)) return "a parameter is not finite";
    return NULL;
}

static const gen_entry *find_gen(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof generators / sizeof *generators; i++)
        if (strlen(generators[i].name) == len &&
            memcmp(generators[i].name, name, len) == 0)
            return &generators[i];
    return NULL;
}

/* Splits "N[,p,...]" into the fields; returns the reason when malformed. */
static const char *parse_params(const gen_entry *g, const char *s, int64_t *N,
                                double *p)
{
    char field[FIELD_MAX];
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (len >= FIELD_MAX) return "N is too long";
    memcpy(field, s, len);
    field[len] = '\0';
    const char *why = parse_n(field, N);
    if (why) return why;
    memcpy(p, g->pdefault, sizeof g->pdefault);
    int given = 0;
    for (; comma; given++) {
        if (g->nparams == 0) return "this generator takes only N";
        if (given == g->nparams) return "too many parameters";
        s = comma + 1;
        comma = strchr(s, ',');
        len = comma ? (size_t)(comma - s) : strlen(s);
        if (len >= FIELD_MAX) return "a parameter is too long";
        memcpy(field, s, len);
        field[len] = '\0';
        why = parse_real(field, &p[given]);
        if (why) return why;
    }
    return g->check ? g->check(*N, p, given) : NULL;
}

/* Both sizes are checked in 64 bits before the builder allocates. */
static kr_status check_sizes(kr_ctx *ctx, const char *spec, const gen_entry *g,
                             int64_t N, const double *p)
{
    int64_t n, nnz;
    g->sizes(N, p, &n, &nnz);
    if (n <= INT32_MAX && nnz <= INT32_MAX) {
        char what[160];
        snprintf(what, sizeof what,
                 "generating %.80s (n = %" PRId64 ", nnz up to %" PRId64 ")",
                 spec, n, nnz);
        /* the CSR, and a vector of n doubles some generators use */
        return kr_host_mem_check(ctx, kr_csr_bytes(n, nnz) + 8.0 * n, what);
    }
    return kr_fail(ctx, KR_ERR_ARG,
                   "generator spec \"%.80s\" gives n = %" PRId64
                   " rows and %" PRId64
                   " nonzeros; both must be at most 2147483647 (int32 "
                   "indices)",
                   spec, n, nnz);
}

kr_status kr_generate(kr_ctx *ctx, const char *spec, kr_csr *A)
{
    if (!A)
        return kr_fail(ctx, KR_ERR_ARG, "kr_generate: the output A is NULL");
    memset(A, 0, sizeof *A);
    if (!spec) return kr_fail(ctx, KR_ERR_ARG, "kr_generate: spec is NULL");
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    const gen_entry *g = find_gen(spec, len);
    if (!g) return bad_spec(ctx, spec, "unknown generator name");
    if (!colon) return bad_spec(ctx, spec, "parameters missing (name:N)");
    int64_t N;
    double p[MAX_PARAMS];
    const char *why = parse_params(g, colon + 1, &N, p);
    if (why) return bad_spec(ctx, spec, why);
    KR_TRY(check_sizes(ctx, spec, g, N, p));
    kr_status st = g->build(ctx, (int32_t)N, p, A);
    if (st != KR_OK) kr_error_prefix(ctx, "generating %.80s", spec);
    return st;
}
