/* The backend seam: every kernel the solvers and preconditioners need, as a
 * table of functions on raw arrays in the backend's memory. The CPU table is
 * the reference; the CUDA table (core/cuda_backend.cu, or the stubs of a
 * build without CUDA) has the same contract. Solvers call only these, so no
 * solver is written twice and none contains an #ifdef.
 *
 * Reductions return their result on the host and are deterministic for a
 * given n and thread or launch configuration. */
#ifndef KR_CORE_BACKEND_H
#define KR_CORE_BACKEND_H

#include "krylov.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The hash behind fill_random (splitmix64's finaliser on seed + (i+1)*phi),
 * shared by the CPU and CUDA backends so both give the same numbers. */
#ifdef __CUDACC__
#define KR_HOST_DEVICE __host__ __device__
#else
#define KR_HOST_DEVICE
#endif
static inline KR_HOST_DEVICE double kr_hash_uniform(uint64_t seed, int64_t i)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* Largest number of dot products fused into one pass by `dots`. */
#define KR_MAX_DOTS 4

/* Most columns a multi-column op takes (a column mask is 64 bits). */
#define KR_MULTI_MAX KR_MULTI_MAX_COLUMNS

/* Iterations a method may run on the device between two readbacks (the
 * size of kr_dev_head's ring of norms). A batch's readback leaves the GPU
 * idle for a host round trip, but longer batches of CG, BiCGSTAB and
 * IDR(s) measured no faster on an H100 (bcsstk18, 2026-11-27: 16 and 64
 * alike, and slower on short solves, whose first batches are launched
 * one kernel at a time before graph replay starts): they stop at
 * KR_BATCH_DEFAULT. GMRES runs its later cycles whole (m <= 32 steps). */
#define KR_BATCH_MAX 64
#define KR_BATCH_DEFAULT 16

/* Rows up to which a method whose backend has a persistent op (cg_persist,
 * idr_persist) runs its batches as one launch each; above, an iteration's
 * launches cost less than its memory traffic. */
#define KR_PERSIST_MAX_ROWS (1 << 18)
/* ... and whose rows have at most this many times the mean row's
 * entries, but for at most KR_PERSIST_LONG_ROWS rows of at most
 * KR_PERSIST_LONGEST: a warp of the persistent SpMV waits for its longest
 * row, and a block's warps sum at most LONG_ROWS_MAX (256) long rows of
 * its first chunk, a row a warp (core/cuda_persist.cuh). Measured on an
 * H100 (CG + Jacobi), before the blocks summed long rows: memplus
 * (longest 81 x the mean; 174 rows above 8 x) 17.8 us an iteration per
 * launch, 32 persistent; bcsstk38 (14 x; 2 rows above 8 x) 16.8 both
 * ways. */
#define KR_PERSIST_MAX_SKEW 8
#define KR_PERSIST_LONG_ROWS 256
#define KR_PERSIST_LONGEST 4096

/* Why a device-side iteration stopped (kr_dev_head.stop). */
enum {
    KR_DEV_RUNNING = 0,
    KR_DEV_STOP_CHECK = 1,     /* the last norm recorded met the stopping
                                  test: converged, NaN/Inf or dtol */
    KR_DEV_STOP_RHO = 2,       /* CG: the next rho is < 0 or not finite */
    KR_DEV_STOP_PQ = 3,        /* CG: p.q <= 0 or not finite: no alpha */
    KR_DEV_STOP_BREAKDOWN = 4, /* BiCGSTAB: rho, r0^.v or omega is 0 */
    KR_DEV_STOP_S_PENDING = 5, /* BiCGSTAB: s met the test, x += alpha p^
                                  still to do (bcgs_update does it) */
    KR_DEV_STOP_HAPPY = 6,     /* GMRES: a happy breakdown ends the cycle */
    KR_DEV_STOP_CYCLE = 7      /* GMRES: m steps done, the cycle ends */
};

/* What every method that keeps its scalars in backend memory shares
 * (first member of kr_cg_dev, kr_bcgs_dev). The host sets the thresholds
 * before a run and reads the struct back after each batch of iterations:
 * `rnorm[i % KR_BATCH_MAX]` holds the norm of the i-th iteration recorded,
 * so the host runs the stopping test, the monitor and the history on the
 * very numbers a per-iteration run would see. Once `stop` is set, every
 * later op returns at once: x stays at the iteration that stopped. */
typedef struct kr_dev_head {
    double atol;     /* converged when ||r|| <= atol or ||r|| <= rtol_b    */
    double rtol_b;   /* rtol * ||b||                                       */
    double div;      /* diverged when ||r|| > div (dtol * max(||b||, ||r0||),
                        or +Inf when dtol is 0)                            */
    int32_t done;    /* norms recorded since the run began                 */
    int32_t stop;    /* KR_DEV_*                                           */
    uint32_t ticket; /* grid-wide reductions: blocks finished (GPU only,
                        zero between ops)                                */
    double rnorm[KR_BATCH_MAX];
} kr_dev_head;

/* CG's scalars (cg_alpha, cg_update, cg_direction). */
typedef struct kr_cg_dev {
    kr_dev_head h;
    double rho;   /* r.z of the last update                              */
    double alpha; /* rho / p.q of the current iteration                  */
    double beta;  /* rho' / rho                                          */
    double pq;    /* p.q of the current iteration                        */
    double rr;    /* r.r, kept from mcg_step_a for mcg_step_b            */
    double xa;    /* mcg_step_bd: x += xa p in the direction's pass (the
                     iteration's alpha, or 0: x stays)                   */
} kr_cg_dev;

/* A block-diagonal operator in backend memory (block-Jacobi's inverses,
 * for the multi-column CG step that applies it in its update): block b
 * is rows starts[b]..starts[b+1]-1, at most 32, and its kb x kb entries
 * are column-major at inv + offs[b]. */
#define KR_MCG_BD_MAX 16 /* columns of kr_backend_ops.mcg_step_bd */
typedef struct kr_blockdiag {
    int32_t nb, max_k;
    const int32_t *starts;
    const int64_t *offs;
    const double *inv;
} kr_blockdiag;

/* BiCGSTAB's scalars (bcgs_alpha, bcgs_s, bcgs_omega, bcgs_update,
 * bcgs_direction). */
typedef struct kr_bcgs_dev {
    kr_dev_head h;
    double rho;   /* r0^.r                                               */
    double alpha; /* rho / r0^.v                                         */
    double omega; /* t.s / t.t (0 when t.t is 0)                         */
    double beta;  /* (rho'/rho) (alpha/omega)                            */
} kr_bcgs_dev;

/* Records ||r|| = rn; 1 when it meets the stopping test (dtol only with
 * `div`). */
static inline KR_HOST_DEVICE int kr_dev_record(kr_dev_head *h, double rn,
                                               int div)
{
    h->rnorm[h->done++ % KR_BATCH_MAX] = rn;
    return !isfinite(rn) || rn <= h->atol || rn <= h->rtol_b ||
           (div && rn > h->div);
}

/* The scalar steps of the ops below, one code for both backends. */
static inline KR_HOST_DEVICE void kr_cg_dev_alpha(kr_cg_dev *s, double pq)
{
    s->pq = pq;
    if (pq > 0)
        s->alpha = s->rho / pq;
    else
        s->h.stop = KR_DEV_STOP_PQ;
}

static inline KR_HOST_DEVICE void kr_cg_dev_update(kr_cg_dev *s, double rz,
                                                   double rr)
{
    if (kr_dev_record(&s->h, sqrt(rr), 1)) {
        s->h.stop = KR_DEV_STOP_CHECK;
        return;
    }
    s->beta = rz / s->rho;
    s->rho = rz;
    if (rz < 0 || !isfinite(rz)) s->h.stop = KR_DEV_STOP_RHO;
}

static inline KR_HOST_DEVICE void kr_bcgs_dev_alpha(kr_bcgs_dev *s, double rv)
{
    if (s->rho == 0.0 || rv == 0.0)
        s->h.stop = KR_DEV_STOP_BREAKDOWN;
    else
        s->alpha = s->rho / rv;
}

/* s.s: s meets the test (no dtol) and, when finite, x takes alpha p^ */
static inline KR_HOST_DEVICE void kr_bcgs_dev_s(kr_bcgs_dev *s, double ss)
{
    if (!isfinite(ss) || sqrt(ss) <= s->h.atol || sqrt(ss) <= s->h.rtol_b) {
        kr_dev_record(&s->h, sqrt(ss), 0);
        s->h.stop = isfinite(ss) ? KR_DEV_STOP_S_PENDING : KR_DEV_STOP_CHECK;
    }
}

static inline KR_HOST_DEVICE void kr_bcgs_dev_omega(kr_bcgs_dev *s, double ts,
                                                    double tt)
{
    s->omega = tt == 0.0 ? 0.0 : ts / tt;
}

/* after r = s - omega t: r.r and r0^.r */
static inline KR_HOST_DEVICE void kr_bcgs_dev_update(kr_bcgs_dev *s, double rr,
                                                     double rho)
{
    if (kr_dev_record(&s->h, sqrt(rr), 1)) {
        s->h.stop = KR_DEV_STOP_CHECK;
        return;
    }
    if (s->omega == 0.0) {
        s->h.stop = KR_DEV_STOP_BREAKDOWN;
        return;
    }
    s->beta = (rho / s->rho) * (s->alpha / s->omega);
    s->rho = rho;
}

/* GMRES(m)'s scalars (gm_step, gm_scale). In backend memory the struct
 * is followed by H ((m+1) x m, column-major), cs (m), sn (m), g (m+1) and
 * h2 (m+1): kr_gm_dev_bytes(m) in all. */
typedef struct kr_gm_dev {
    kr_dev_head h;
    int32_t m;     /* the restart length                                  */
    int32_t j;     /* steps done in this cycle (columns of H rotated)     */
    int32_t happy; /* the last step ended in a happy breakdown            */
    int32_t ended; /* gm_persist ended the cycle: x updated, r = b - A x
                      (in t) and rr = r.r computed                        */
    double inv;    /* 1 / H(j+1, j) of the last step: v_{j+1}'s scale        */
    double rr;     /* r.r of the new residual, where `ended`                 */
} kr_gm_dev;

/* The longest restart run with the scalars on the device: a step's
 * Gram-Schmidt passes are single launches (gemv_nt_dev, gm_update_step)
 * and the GPU's scalar step has room for its state; longer restarts take
 * the host path (solver/gmres.c). */
#define KR_GM_DEV_MAX_M 32

/* H(j+1,j) below this times the column's norm: A M^-1 v_j lies in the
 * space already built (round-off level after two orthogonalisations). */
#define KR_GM_HAPPY_TOL 1e-14

/* The doubles of the largest state, kr_gm_dev_bytes(KR_GM_DEV_MAX_M) / 8,
 * as a constant: the GPU's copies of it in shared memory are this size. */
#define KR_GM_DEV_MAX_DOUBLES                                                  \
    (sizeof(kr_gm_dev) / sizeof(double) +                                      \
     (KR_GM_DEV_MAX_M + 1) * KR_GM_DEV_MAX_M + 4 * KR_GM_DEV_MAX_M + 2)

static inline KR_HOST_DEVICE size_t kr_gm_dev_bytes(int m)
{
    size_t mm = (size_t)m;
    return sizeof(kr_gm_dev) + ((mm + 1) * mm + 4 * mm + 2) * sizeof(double);
}
static inline KR_HOST_DEVICE double *kr_gm_dev_H(kr_gm_dev *s)
{
    return (double *)(s + 1);
}

/* 1 if H(j+1,j) is negligible against column h: a happy breakdown. */
static inline KR_HOST_DEVICE int kr_gm_is_happy(const double *h, int j)
{
    double s = 0.0;
    for (int i = 0; i <= j + 1; i++)
        s += h[i] * h[i];
    return h[j + 1] <= KR_GM_HAPPY_TOL * sqrt(s);
}

/* Rotates column h (step j) by the previous rotations, makes the one that
 * zeroes H(j+1,j) and applies it to g. Returns 0 if R(j,j) would be 0.
 * The rotation's inputs are read one rotation ahead: the stores to h do
 * not touch them, so on the GPU (thread 0 of a persistent block) their
 * loads overlap the previous rotation's arithmetic; the sums are the
 * same. */
static inline KR_HOST_DEVICE int kr_gm_givens(double *h, double *cs, double *sn,
                                              double *g, int j)
{
    if (j > 0) {
        double hi = h[0], c = cs[0], s = sn[0], hn = h[1];
        for (int i = 0; i < j; i++) {
            double c1 = 0.0, s1 = 0.0, h1 = 0.0;
            if (i + 1 < j) {
                c1 = cs[i + 1];
                s1 = sn[i + 1];
                h1 = h[i + 2];
            }
            const double t = c * hi + s * hn;
            hi = -s * hi + c * hn;
            h[i] = t;
            c = c1;
            s = s1;
            hn = h1;
        }
        h[j] = hi;
    }
    double d = hypot(h[j], h[j + 1]);
    if (d == 0.0) return 0;
    cs[j] = h[j] / d;
    sn[j] = h[j + 1] / d;
    h[j] = d;
    h[j + 1] = 0.0;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
    return 1;
}

/* GMRES's step once column j holds h + h2 (the two Gram-Schmidt passes'
 * coefficients): H(j+1,j) = sqrt(vv), the rotations, the residual
 * estimate |g_{j+1}| recorded and tested; the stop code says how the
 * cycle goes on. */
static inline KR_HOST_DEVICE void kr_gm_dev_rotate(kr_gm_dev *s, double vv)
{
    int m = s->m, j = s->j;
    double *H = kr_gm_dev_H(s), *cs = H + (size_t)(m + 1) * (size_t)m;
    double *sn = cs + m, *g = sn + m;
    double *h = H + (size_t)j * (size_t)(m + 1);
    h[j + 1] = sqrt(vv);
    double hn = h[j + 1];
    int happy = kr_gm_is_happy(h, j);
    if (!kr_gm_givens(h, cs, sn, g, j)) {
        s->h.stop = KR_DEV_STOP_BREAKDOWN;
        return;
    }
    s->j = j + 1;
    s->happy = happy;
    s->inv = 1.0 / hn;
    if (kr_dev_record(&s->h, fabs(g[j + 1]), 1))
        s->h.stop = KR_DEV_STOP_CHECK;
    else if (happy)
        s->h.stop = KR_DEV_STOP_HAPPY;
    else if (j + 1 == m)
        s->h.stop = KR_DEV_STOP_CYCLE;
}

/* h2, the second pass's coefficients: in the state after g */
static inline KR_HOST_DEVICE double *kr_gm_dev_h2(kr_gm_dev *s)
{
    return kr_gm_dev_H(s) + (size_t)(s->m + 1) * (size_t)s->m + 3 * s->m + 1;
}

/* GMRES's step after the two Gram-Schmidt passes: column j += h2, then
 * kr_gm_dev_rotate. */
static inline KR_HOST_DEVICE void kr_gm_dev_step(kr_gm_dev *s, double vv)
{
    double *h = kr_gm_dev_H(s) + (size_t)s->j * (size_t)(s->m + 1);
    const double *h2 = kr_gm_dev_h2(s);
    for (int i = 0; i <= s->j; i++)
        h[i] += h2[i];
    kr_gm_dev_rotate(s, vv);
}

/* gm_persist's operands: A's CSR view, the restart m, the steps of the
 * batch, Jacobi's inverse diagonal d (or NULL), V (n x (m + 1)), t and z
 * (step outputs, by turns), b and x (NULL b: the host ends the cycle), the
 * state s in backend memory, the cycle's r (step 0's input; NULL: t), and
 * for a new cycle its state head and ||r|| beta (head NULL: s holds the
 * state). */
typedef struct kr_gm_launch {
    const kr_csr_view *A;
    int m, steps;
    const double *d;
    double *V, *t, *z;
    const double *b;
    double *x;
    kr_gm_dev *s;
    const double *r;
    const kr_gm_dev *head;
    double beta;
} kr_gm_launch;

/* ------------------------------------------------------------------
 * IDR(s) with its scalars in backend memory (the idr_* ops; the host
 * side is solver/idr.c). Begins here, ends at "end of IDR(s)".
 * ------------------------------------------------------------------ */

/* Shadow dimensions whose scalars stay on the device; a larger s takes
 * the host path (the GPU kernels keep one sum per column in registers). */
#define KR_IDR_DEV_MAX_S 8

/* A product that is never fused with an add into an FMA (nvcc contracts
 * a*b + c into one; the host does not), so that the scalar steps below
 * round alike on both sides. */
#ifdef __CUDA_ARCH__
#define KR_MUL(a, b) __dmul_rn((a), (b))
#else
#define KR_MUL(a, b) ((a) * (b))
#endif

/* IDR(s)'s scalars. In backend memory the struct is followed by M (s x s,
 * column-major, lower triangular: P^T G), f (s: P^T r), c (s: the small
 * system's solution) and h (s: projections P^T g_k), the order of the
 * host path's scratch: kr_idr_dev_bytes(s) in all. */
typedef struct kr_idr_dev {
    kr_dev_head h;
    int32_t s;
    int32_t pad;
    double om;    /* omega of the last dimension reduction (1 at a run's
                     start)                                              */
    double beta;  /* f_k / M_kk of the current step                      */
    double rnorm; /* ||r|| after the last step: omega's reference       */
    double kappa; /* the option: omega's safeguard                       */
} kr_idr_dev;

/* kr_idr_dev_bytes(KR_IDR_DEV_MAX_S) in doubles, as a constant */
#define KR_IDR_DEV_MAX_DOUBLES                                                 \
    (sizeof(kr_idr_dev) / sizeof(double) +                                     \
     KR_IDR_DEV_MAX_S * (KR_IDR_DEV_MAX_S + 3))

static inline KR_HOST_DEVICE size_t kr_idr_dev_bytes(int s)
{
    size_t ss = (size_t)s;
    return sizeof(kr_idr_dev) + (ss * ss + 3 * ss) * sizeof(double);
}
static inline KR_HOST_DEVICE double *kr_idr_dev_M(kr_idr_dev *st)
{
    return (double *)(st + 1);
}
static inline KR_HOST_DEVICE double *kr_idr_dev_f(kr_idr_dev *st)
{
    return kr_idr_dev_M(st) + (size_t)st->s * (size_t)st->s;
}
static inline KR_HOST_DEVICE double *kr_idr_dev_c(kr_idr_dev *st)
{
    return kr_idr_dev_f(st) + st->s;
}
static inline KR_HOST_DEVICE double *kr_idr_dev_hv(kr_idr_dev *st)
{
    return kr_idr_dev_c(st) + st->s;
}

/* The small dense steps, shared by the host path and the device ops.
 * c = M(k:s,k:s) \ f(k:s), M lower triangular */
static inline KR_HOST_DEVICE void
kr_idr_solve_c(int s, const double *M, const double *f, double *c, int k)
{
    for (int i = k; i < s; i++) {
        double t = f[i];
        for (int j = k; j < i; j++)
            t -= KR_MUL(M[i + j * s], c[j - k]);
        c[i - k] = t / M[i + i * s];
    }
}

/* h = M(0:k,0:k) \ h: the coefficients that make g_k orthogonal to
 * p_0..p_{k-1} */
static inline KR_HOST_DEVICE void kr_idr_solve_h(int s, const double *M,
                                                 double *h, int k)
{
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < i; j++)
            h[i] -= KR_MUL(M[i + j * s], h[j]);
        h[i] /= M[i + i * s];
    }
}

/* f(k+1:s) -= beta M(k+1:s,k): r -= beta g_k seen through P */
static inline KR_HOST_DEVICE void kr_idr_update_f(int s, const double *M,
                                                  double *f, double beta, int k)
{
    for (int i = k + 1; i < s; i++)
        f[i] -= KR_MUL(beta, M[i + k * s]);
}

/* omega minimising ||r - omega t||, enlarged when t and r are nearly
 * orthogonal (|cos| < kappa) so that the step keeps reducing r. */
static inline KR_HOST_DEVICE double kr_idr_omega(double tr, double tt,
                                                 double rnorm, double kappa)
{
    double rho = fabs(tr) / (sqrt(tt) * rnorm), om = tr / tt;
    return rho < kappa ? om * kappa / rho : om;
}

/* The scalar steps of the idr_* ops. idr_h: h holds P(:,0:k)^T g_k. */
static inline KR_HOST_DEVICE void kr_idr_dev_h(kr_idr_dev *st, int k)
{
    kr_idr_solve_h(st->s, kr_idr_dev_M(st), kr_idr_dev_hv(st), k);
}

/* idr_orth: M(k:s,k) holds P(:,k:s)^T g_k. Also makes the next step's f
 * and c, which need beta but not r.r, so that idr_update_vu can make
 * u_{k+1} in the pass that updates r (after the last step of a solve
 * they go unused). */
static inline KR_HOST_DEVICE void kr_idr_dev_orth(kr_idr_dev *st, int k)
{
    int s = st->s;
    double *M = kr_idr_dev_M(st), mkk = M[k + k * s], *f = kr_idr_dev_f(st);
    for (int i = 0; i < k; i++)
        M[i + k * s] = 0.0;
    if (mkk == 0.0) { /* g_k orthogonal to p_k: no step possible */
        st->h.stop = KR_DEV_STOP_BREAKDOWN;
        return;
    }
    st->beta = f[k] / mkk;
    kr_idr_update_f(s, M, f, st->beta, k);
    if (k + 1 < s) kr_idr_solve_c(s, M, f, kr_idr_dev_c(st), k + 1);
}

static inline KR_HOST_DEVICE void kr_idr_dev_omega(kr_idr_dev *st, double tr,
                                                   double tt)
{
    if (tr == 0.0 || tt == 0.0) /* omega would be 0 */
        st->h.stop = KR_DEV_STOP_BREAKDOWN;
    else
        st->om = kr_idr_omega(tr, tt, st->rnorm, st->kappa);
}

/* idr_update of step k (k = s: the dimension reduction, f = P^T r
 * already written): records and tests ||r||; a step keeps it for omega,
 * the reduction makes the next cycle's first c (a step's next c came
 * with its beta, in kr_idr_dev_orth). */
static inline KR_HOST_DEVICE void kr_idr_dev_update(kr_idr_dev *st, int k,
                                                    double rr)
{
    double rn = sqrt(rr);
    if (kr_dev_record(&st->h, rn, 1)) {
        st->h.stop = KR_DEV_STOP_CHECK;
        return;
    }
    int s = st->s;
    if (k < s)
        st->rnorm = rn;
    else
        kr_idr_solve_c(s, kr_idr_dev_M(st), kr_idr_dev_f(st), kr_idr_dev_c(st),
                       0);
}

/* The vectors of idr_persist: d the diagonal preconditioner's array
 * (NULL: none); P, G and U blocks of s columns of n entries. */
typedef struct kr_idr_vectors {
    const double *d, *P;
    double *x, *r, *v, *vh, *G, *U;
} kr_idr_vectors;

/* ----------------------------------------------- end of IDR(s) ---- */

typedef struct kr_backend_ops {
    const char *name;
    kr_status (*alloc)(kr_ctx *ctx, void **p, size_t bytes);
    void (*release)(kr_ctx *ctx, void *p); /* accepts NULL */
    kr_status (*upload)(kr_ctx *ctx, void *dst, const void *src, size_t bytes);
    kr_status (*download)(kr_ctx *ctx, void *dst, const void *src,
                          size_t bytes);
    kr_status (*copy)(kr_ctx *ctx, void *dst, const void *src, size_t bytes);
    /* x = a */
    kr_status (*fill)(kr_ctx *ctx, int32_t n, double a, double *x);
    /* y = a*x + b*y; b == 0 overwrites y (NaN in y does not propagate) */
    kr_status (*axpby)(kr_ctx *ctx, int32_t n, double a, const double *x,
                       double b, double *y);
    /* z = a*x + b*y + c*z; c == 0 overwrites z */
    kr_status (*axpbypcz)(kr_ctx *ctx, int32_t n, double a, const double *x,
                          double b, const double *y, double c, double *z);
    /* x += a*p; r += b*q  (the CG update, one pass) */
    kr_status (*axpy2)(kr_ctx *ctx, int32_t n, double a, const double *p,
                       double *x, double b, const double *q, double *r);
    /* y = d .* x */
    kr_status (*pointwise_mult)(kr_ctx *ctx, int32_t n, const double *d,
                                const double *x, double *y);
    /* out[j] = x[j] . y[j] for j < k <= KR_MAX_DOTS, in one pass */
    kr_status (*dots)(kr_ctx *ctx, int32_t n, int k, const double *const *x,
                      const double *const *y, double *out);
    /* h = V^T w, V is n x k column-major with leading dimension ld */
    kr_status (*gemv_t)(kr_ctx *ctx, int32_t n, int k, const double *V,
                        int64_t ld, const double *w, double *h);
    /* w += alpha * V h, h on the host (k entries) */
    kr_status (*gemv_n)(kr_ctx *ctx, int32_t n, int k, const double *V,
                        int64_t ld, const double *h, double alpha, double *w);
    /* The x and r update of CG and IDR, with a diagonal preconditioner, one
     * pass: x += a*p; r -= a*q; z = d .* r (d NULL: identity, z unused and may
     * be NULL); out = {r.z, r.r} (with d NULL, r.z = r.r). */
    kr_status (*xr_update)(kr_ctx *ctx, int32_t n, double a, const double *p,
                           const double *q, double *x, double *r,
                           const double *d, double *z, double *out);
    /* y += a*x, then out[0] = y.y and, when w is not NULL, out[1] = w.y,
     * in one pass (BiCGSTAB's s and r updates with their inner products) */
    kr_status (*axpy_dots)(kr_ctx *ctx, int32_t n, double a, const double *x,
                           double *y, const double *w, double *out);
    /* The iteration ops of CG and BiCGSTAB with their scalars in backend
     * memory (the structs above; the scalar steps are the kr_*_dev_*
     * functions). Each is a no-op once s->h.stop is set (bcgs_update
     * excepted, see there).
     * cg_alpha: kr_cg_dev_alpha(s, p.q) */
    kr_status (*cg_alpha)(kr_ctx *ctx, int32_t n, const double *p,
                          const double *q, kr_cg_dev *s);
    /* cg_update: xr_update with a = s->alpha, then
     * kr_cg_dev_update(s, r.z, r.r) */
    kr_status (*cg_update)(kr_ctx *ctx, int32_t n, const double *p,
                           const double *q, double *x, double *r,
                           const double *d, double *z, kr_cg_dev *s);
    /* cg_direction: p = z + s->beta * p (as axpby(1, z, beta, p)) */
    kr_status (*cg_direction)(kr_ctx *ctx, int32_t n, const double *z,
                              double *p, kr_cg_dev *s);
    /* cg_update_keep: cg_update, and keep = p (the fused iteration's
     * direction, written by the format's cg_dir_apply into a second
     * vector, becomes the next iteration's old one) */
    kr_status (*cg_update_keep)(kr_ctx *ctx, int32_t n, const double *p,
                                const double *q, double *x, double *r,
                                const double *d, double *z, double *keep,
                                kr_cg_dev *s);
    /* cg_step: cg_alpha, cg_update and cg_direction in one call */
    kr_status (*cg_step)(kr_ctx *ctx, int32_t n, double *p, const double *q,
                         double *x, double *r, const double *d, double *z,
                         const double *zk, kr_cg_dev *s);
    /* cg_persist: `iters` (1..KR_BATCH_MAX) of the fused iteration that
     * cg_dir_apply and cg_update_keep make (pn = zk + beta p, q = A pn,
     * then the update keeping p = pn; zk is z with d, else r) in one
     * launch, A read through its CSR view; stops where those would.
     * With `start`, CG's start-up first: z = d .* r (d NULL: z is r), p =
     * zk and s->rho = r.zk, stopping with KR_DEV_STOP_RHO where that is
     * < 0 or not finite (s->beta 0).
     * GPU only (core/cuda_persist_cg.cu), n <= KR_PERSIST_MAX_ROWS. */
    kr_status (*cg_persist)(kr_ctx *ctx, const kr_csr_view *A, int iters,
                            int start, const double *d, double *x, double *r,
                            double *z, double *p, double *pn, double *q,
                            kr_cg_dev *s);
    /* gemv_t and gemv_n with h in backend memory (no host round trip) */
    kr_status (*gemv_t_dev)(kr_ctx *ctx, int32_t n, int k, const double *V,
                            int64_t ld, const double *w, double *h);
    kr_status (*gemv_n_dev)(kr_ctx *ctx, int32_t n, int k, const double *V,
                            int64_t ld, const double *h, double alpha,
                            double *w);
    /* gemv_nt_dev: gemv_n_dev(alpha, h, w), then h2 = V^T w (gemv_t_dev),
     * in one pass over V on the GPU for k <= 32 */
    kr_status (*gemv_nt_dev)(kr_ctx *ctx, int32_t n, int k, const double *V,
                             int64_t ld, const double *h, double alpha,
                             double *w, double *h2);
    /* gm_update_step: w -= V h (gemv_n_dev), then gm_step(w); one pass on
     * the GPU for k <= 32 */
    kr_status (*gm_update_step)(kr_ctx *ctx, int32_t n, int k, const double *V,
                                int64_t ld, const double *h, double *w,
                                kr_gm_dev *s);
    /* gm_persist: g->steps (1..KR_BATCH_MAX, at most m - s->j) Arnoldi
     * steps of the fused device path (solver/gmres.c) in one launch: step
     * j = s->j takes u, step j - 1's unscaled vector (g->r for j = 0,
     * else t for even j, else z), writes v_j = s->inv u into V's column j
     * and w = A (d .* v_j) (d NULL: A v_j) into the other of t and z, then
     * h = V^T w, w -= V h, h2 = V^T w, w -= V h2 and kr_gm_dev_step(s,
     * w.w), as the fused step, gemv_nt_dev and gm_update_step do (the sums
     * in another order); stops where those would. With g->head (a new
     * cycle) the state comes in the launch, not from s: *head, g = (beta,
     * 0, ...), H and the rotations 0; a short solve saves two uploads.
     * See kr_gm_launch for the operands. With b (else NULL), a batch
     * that ends the cycle with k = s->j > 0 columns (the device's test
     * fired on a finite norm, a happy breakdown, a breakdown or m steps)
     * ends it as solver/gmres.c's update_x and residual would: x += d .*
     * (V(:, 0:k) y) with R y = g, then r = b - A x into t and r.r into
     * s->rr, and sets s->ended.
     * GPU only (core/cuda_persist_gmres.cu), for n <= KR_PERSIST_MAX_ROWS. */
    kr_status (*gm_persist)(kr_ctx *ctx, const kr_gm_launch *g);
    /* residual_norms: r = b - A x over A's CSR view, out[0] = b.b and
     * out[1] = r.r, in one launch and one download (the sums in an order
     * of their own). GPU only, for the small systems kr_dev_persists
     * takes, where the four launches of copy, SpMV and dots weigh. */
    kr_status (*residual_norms)(kr_ctx *ctx, const kr_csr_view *A,
                                const double *b, const double *x, double *r,
                                double *out);
    /* gm_step: kr_gm_dev_step(s, v.v); gm_scale: v = s->inv * v (as
     * axpby(inv, v, 0, v)) */
    kr_status (*gm_step)(kr_ctx *ctx, int32_t n, const double *v, kr_gm_dev *s);
    kr_status (*gm_scale)(kr_ctx *ctx, int32_t n, double *v,
                          const kr_gm_dev *s);
    /* bcgs_alpha: kr_bcgs_dev_alpha(s, rh.v) */
    kr_status (*bcgs_alpha)(kr_ctx *ctx, int32_t n, const double *rh,
                            const double *v, kr_bcgs_dev *s);
    /* bcgs_s: r -= s->alpha v, then kr_bcgs_dev_s(s, r.r) */
    kr_status (*bcgs_s)(kr_ctx *ctx, int32_t n, const double *v, double *r,
                        kr_bcgs_dev *s);
    /* bcgs_omega: kr_bcgs_dev_omega(s, t.r, t.t) */
    kr_status (*bcgs_omega)(kr_ctx *ctx, int32_t n, const double *t,
                            const double *r, kr_bcgs_dev *s);
    /* bcgs_update: with stop KR_DEV_STOP_S_PENDING, x += alpha ph (as
     * axpby(alpha, ph, 1, x)) and stop = KR_DEV_STOP_CHECK; else
     * x = alpha ph + omega sh + x (as axpbypcz), r += -omega t with r.r and
     * rh.r (as axpy_dots), then kr_bcgs_dev_update(s, r.r, rh.r) */
    kr_status (*bcgs_update)(kr_ctx *ctx, int32_t n, const double *ph,
                             const double *sh, const double *t,
                             const double *rh, double *x, double *r,
                             kr_bcgs_dev *s);
    /* bcgs_direction: p = r - beta omega v + beta p (as axpbypcz(1, r,
     * -beta*omega, v, beta, p)) */
    kr_status (*bcgs_direction)(kr_ctx *ctx, int32_t n, const double *r,
                                const double *v, double *p, kr_bcgs_dev *s);
    /* bcgs_persist: `iters` (1..KR_BATCH_MAX) of the iteration that
     * bcgs_alpha ... bcgs_direction make with M^-1 = diag(d) (d NULL:
     * none) in one launch, A read through its CSR view; stops where those
     * would, with the same state. The direction comes first, from beta and
     * omega (p' = r + beta (p - omega v) into pn, v' = A M^-1 p' into vn, then
     * p = pn and v = vn), so the first iteration of a run wants p = r, v = 0
     * and beta = omega = 0; t is scratch. GPU only
     * (core/cuda_persist_bicgstab.cu), for n <= KR_PERSIST_MAX_ROWS. */
    kr_status (*bcgs_persist)(kr_ctx *ctx, const kr_csr_view *A, int iters,
                              const double *d, const double *rh, double *x,
                              double *r, double *p, double *v, double *pn,
                              double *vn, double *t, kr_bcgs_dev *s);
    /* ---- IDR(s) with its scalars in backend memory (kr_idr_dev; the
     * scalar steps are the kr_idr_dev_* functions; s <= KR_IDR_DEV_MAX_S).
     * k is the step of the cycle (0 <= k < s; k = s: the dimension
     * reduction); P, G and U are blocks of s columns of n entries, u_k
     * and g_k their column k. Each op is a no-op once st->h.stop is set.
     * idr_v: v = r - G(:,k:s) c (as copy, then gemv_n with alpha -1) */
    kr_status (*idr_v)(kr_ctx *ctx, int32_t n, int k, const double *r,
                       const double *G, double *v, kr_idr_dev *st);
    /* idr_u: u_k = om vh + c_0 u_k (as axpby), then u_k += U(:,k+1:s)
     * c(1:) (as gemv_n with alpha 1) */
    kr_status (*idr_u)(kr_ctx *ctx, int32_t n, int k, const double *vh,
                       double *U, kr_idr_dev *st);
    /* idr_vu: idr_v, vh = d .* v (d NULL: vh = v), idr_u; one pass on the
     * GPU, which leaves the scratch v and vh unwritten */
    kr_status (*idr_vu)(kr_ctx *ctx, int32_t n, int k, const double *r,
                        const double *G, double *U, const double *d, double *v,
                        double *vh, kr_idr_dev *st);
    /* idr_h (k > 0): h = P(:,0:k)^T g_k (as gemv_t), then kr_idr_dev_h */
    kr_status (*idr_h)(kr_ctx *ctx, int32_t n, int k, const double *P,
                       const double *G, kr_idr_dev *st);
    /* idr_orth: for k > 0, g_k -= G(:,0:k) h, u_k -= U(:,0:k) h (as
     * gemv_n with alpha -1); then M(k:s,k) = P(:,k:s)^T g_k (as gemv_t)
     * and kr_idr_dev_orth; one pass on the GPU */
    kr_status (*idr_orth)(kr_ctx *ctx, int32_t n, int k, const double *P,
                          double *G, double *U, kr_idr_dev *st);
    /* idr_omega: kr_idr_dev_omega(st, v.r, v.v) (as dots) */
    kr_status (*idr_omega)(kr_ctx *ctx, int32_t n, const double *v,
                           const double *r, kr_idr_dev *st);
    /* idr_update: x += a p; r -= a q with r.r (as xr_update without d),
     * a = beta (k < s) or om (k = s); then z = d .* r (d NULL: z = r)
     * when z is not NULL; for k = s, f = P^T r (as gemv_t); then
     * kr_idr_dev_update(st, k, r.r); one pass on the GPU */
    kr_status (*idr_update)(kr_ctx *ctx, int32_t n, int k, const double *p,
                            const double *q, double *x, double *r,
                            const double *d, double *z, const double *P,
                            kr_idr_dev *st);
    /* idr_update_vu (k + 1 < s): idr_update of step k (a = beta, no z),
     * then idr_vu of step k + 1 (whose c kr_idr_dev_orth made); one pass
     * on the GPU, which leaves the scratch v and vh unwritten */
    kr_status (*idr_update_vu)(kr_ctx *ctx, int32_t n, int k, const double *p,
                               const double *q, double *x, double *r,
                               const double *G, double *U, const double *d,
                               double *v, double *vh, kr_idr_dev *st);
    /* idr_persist: `iters` (1..KR_BATCH_MAX) of the iterations the ops
     * above make with a diagonal preconditioner (idr_vu for step 0, the
     * SpMV with step 0's M column, h or omega, idr_orth for k > 0,
     * idr_update_vu or idr_update; solver/idr.c), the first at step
     * `phase` (0..s) of the cycle, in one launch, A read through its CSR
     * view; stops where those
     * would, the scratch v and vh written as idr_update and the SpMV
     * write them. GPU only (core/cuda_persist_idr.cu), for n <=
     * KR_PERSIST_MAX_ROWS. */
    kr_status (*idr_persist)(kr_ctx *ctx, const kr_csr_view *A, int iters,
                             int phase, int s, const kr_idr_vectors *w,
                             kr_idr_dev *st);
    /* ---- end of IDR(s)'s ops ---- */
    /* Runs fn(arg), which only enqueues backend work and must enqueue the
     * same work (same arrays, same scalars by address) every time. The
     * CUDA backend captures the first call made with an empty *slot as a
     * CUDA graph and replays it on later calls (a graph that cannot be
     * captured runs fn directly from then on); the CPU runs fn. */
    kr_status (*replay)(kr_ctx *ctx, void **slot, kr_status (*fn)(void *arg),
                        void *arg);
    void (*replay_free)(kr_ctx *ctx, void *slot); /* accepts NULL */
    /* x[i] = uniform in [-1, 1) from a counter-based hash of (seed, i): the
     * same numbers on every backend, made where x lives */
    kr_status (*fill_random)(kr_ctx *ctx, int32_t n, uint64_t seed, double *x);
    /* Benchmarks: runs fn(arg) reps times, times[i] = seconds of run i,
     * measured with events on the device (CUDA) or a wall clock (CPU). */
    kr_status (*time_runs)(kr_ctx *ctx, kr_status (*fn)(void *arg), void *arg,
                           int reps, double *times);

    /* ---- several right-hand sides (issue 19): blocks of k columns ----
     * A block is n x k row-major (entry (i, j) at i*k + j), 1 <= k <=
     * KR_MULTI_MAX. Bit j of `mask` set: column j takes part; the others
     * are neither written nor counted (their outputs are left as they
     * were). Per-column scalars are host arrays of k entries. On the CPU,
     * column j of every result is bit for bit what the single-vector op
     * named after "as" gives on column j (the same thread partition and
     * order of sums), so a multi-column solve repeats the single solves'
     * iterates; the GPU's sums may round differently.
     * mdots: out[p*k + j] = X[p](:,j) . Y[p](:,j), p < m <= KR_MAX_DOTS,
     * as dots(n, m, ...) */
    kr_status (*mdots)(kr_ctx *ctx, int32_t n, int k, int m,
                       const double *const *X, const double *const *Y,
                       uint64_t mask, double *out);
    /* Y(:,j) = a[j] X(:,j) + b[j] Y(:,j), as axpby (b[j] == 0 overwrites) */
    kr_status (*maxpby)(kr_ctx *ctx, int32_t n, int k, const double *a,
                        const double *X, const double *b, double *Y,
                        uint64_t mask);
    /* Z(:,j) = a[j] X + b[j] Y + c[j] Z, as axpbypcz */
    kr_status (*maxpbypcz)(kr_ctx *ctx, int32_t n, int k, const double *a,
                           const double *X, const double *b, const double *Y,
                           const double *c, double *Z, uint64_t mask);
    /* xr_update per column with a[j]; d (n entries, shared by the columns)
     * or NULL; out[j] = r.z, out[k + j] = r.r */
    kr_status (*mxr_update)(kr_ctx *ctx, int32_t n, int k, const double *a,
                            const double *P, const double *Q, double *X,
                            double *R, const double *d, double *Z,
                            uint64_t mask, double *out);
    /* axpy_dots per column: Y += a[j] X, out[j] = y.y and, with W,
     * out[k + j] = w.y */
    kr_status (*maxpy_dots)(kr_ctx *ctx, int32_t n, int k, const double *a,
                            const double *X, double *Y, const double *W,
                            uint64_t mask, double *out);
    /* h[l*k + j] = V_l(:,j) . W(:,j), l < nb, V_l = V + l*ldv: an n x k
     * block, or with `shared` one vector of n entries for every column
     * (IDR's shadow space); as gemv_t */
    kr_status (*mgemv_t)(kr_ctx *ctx, int32_t n, int k, int nb, const double *V,
                         int64_t ldv, int shared, const double *W,
                         uint64_t mask, double *h);
    /* W(:,j) += alpha * sum_l V_l(:,j) h[l*k + j], V_l = V + l*ldv n x k
     * blocks, h on the host; as gemv_n */
    kr_status (*mgemv_n)(kr_ctx *ctx, int32_t n, int k, int nb, const double *V,
                         int64_t ldv, const double *h, double alpha, double *W,
                         uint64_t mask);
    /* Y(i,j) = d[i] X(i,j) for every column (Jacobi over k columns) */
    kr_status (*mpointwise)(kr_ctx *ctx, int32_t n, int k, const double *d,
                            const double *X, double *Y);
    /* column j of a block: x = X(:,j) (to_block 0) or X(:,j) = x (1) */
    kr_status (*mcolumn)(kr_ctx *ctx, int32_t n, int k, int j, double *X,
                         double *x, int to_block);
    /* mcg_step: cg_step per column with the scalars in backend memory,
     * S[j] (k structs) for column j. A column takes part while it is in
     * mask and S[j].h.stop is 0 (re-read after each stage): p.q and
     * kr_cg_dev_alpha (as mdots), then the update with a = S[j].alpha and
     * kr_cg_dev_update(S + j, r.z, r.r) (as mxr_update), then P = Zk +
     * beta P (as maxpby with 1 and S[j].beta); the CUDA backend moves
     * x's update into the direction's pass (kr_cg_dev.xa), a column the
     * update stopped included. A column stopped before the step is
     * neither read nor written: it stays frozen. */
    kr_status (*mcg_step)(kr_ctx *ctx, int32_t n, int k, double *P,
                          const double *Q, double *X, double *R,
                          const double *d, double *Z, const double *Zk,
                          kr_cg_dev *S, uint64_t mask);
    /* mcg_step_a and mcg_step_b: mcg_step split around a preconditioner
     * that is not diagonal, which the caller applies between them (Z =
     * M^-1 R over the columns). mcg_step_a: p.q and kr_cg_dev_alpha, then
     * X += alpha P and R -= alpha Q (as maxpby) with r.r kept in S[j].rr;
     * mcg_step_b: r.z, kr_cg_dev_update(S + j, r.z, S[j].rr), then P = Z +
     * beta P. The sums as mdots's, each on its own. */
    kr_status (*mcg_step_a)(kr_ctx *ctx, int32_t n, int k, const double *P,
                            const double *Q, double *X, double *R, kr_cg_dev *S,
                            uint64_t mask);
    kr_status (*mcg_step_b)(kr_ctx *ctx, int32_t n, int k, double *P,
                            const double *R, const double *Z, kr_cg_dev *S,
                            uint64_t mask);
    /* mcg_step_bd (optional; k <= KR_MCG_BD_MAX): mcg_step with Z = M R for the
     * block-diagonal M, applied in the update's pass: p.q and
     * kr_cg_dev_alpha, then per block of rows R -= alpha Q, Z = M R with
     * r.z and r.r, kr_cg_dev_update, then X += alpha P and P = Z + beta P
     * in one pass (X also for a column the update stopped). Z's sums may be
     * ordered otherwise than the preconditioner's apply_multi orders them (the
     * CUDA kernel's are tensor-core tiles). */
    kr_status (*mcg_step_bd)(kr_ctx *ctx, int32_t n, int k, double *P,
                             const double *Q, double *X, double *R,
                             const kr_blockdiag *M, double *Z, kr_cg_dev *S,
                             uint64_t mask);
    /* ---- end of the several-right-hand-sides ops ---- */
} kr_backend_ops;

/* The CPU kernels (core/cpu_backend.c). */
const kr_backend_ops *kr_cpu_backend(void);

/* Sets up the CUDA backend in ctx (device, stream, handles, name), or
 * returns a status with a reason: KR_ERR_NOT_COMPILED in a build without
 * CUDA, KR_ERR_DEVICE when no usable GPU. */
kr_status kr_cuda_backend_init(kr_ctx *ctx);
void kr_cuda_backend_fini(kr_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
