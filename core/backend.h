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

/* Iterations a method may run on the device between two readbacks. */
#define KR_BATCH_MAX 16

/* Why a device-side iteration stopped (kr_cg_dev.stop). */
enum {
    KR_DEV_RUNNING = 0,
    KR_DEV_STOP_CHECK = 1, /* ||r|| of the last iteration met the stopping
                              test: converged, NaN/Inf or dtol */
    KR_DEV_STOP_RHO = 2,   /* the next iteration's rho is < 0 or not finite */
    KR_DEV_STOP_PQ = 3     /* p.q <= 0 or not finite: no alpha */
};

/* The scalars of a CG run, kept in backend memory so that iterations need
 * no host round trip (cg_alpha, cg_update, cg_direction). The host sets
 * the thresholds and zeroes `done` before each batch and reads the struct
 * back after it: `rnorm` holds the ||r|| of each iteration done, so the
 * host runs the stopping test, the monitor and the history on exactly the
 * numbers a per-iteration run would see. Once `stop` is set, every later
 * op returns at once: x stays at the iteration that stopped. */
typedef struct kr_cg_dev {
    double rho;      /* r.z of the last update                             */
    double alpha;    /* rho / p.q of the current iteration                 */
    double beta;     /* rho' / rho                                         */
    double pq;       /* p.q of the current iteration                       */
    double atol;     /* converged when ||r|| <= atol or ||r|| <= rtol_b    */
    double rtol_b;   /* rtol * ||b||                                       */
    double div;      /* diverged when ||r|| > div (dtol * max(||b||, ||r0||),
                        or +Inf when dtol is 0)                            */
    int32_t done;    /* iterations completed in this batch                 */
    int32_t stop;    /* KR_DEV_*                                           */
    uint32_t ticket; /* grid-wide reductions: blocks finished (GPU only,
                        zero between ops)                                */
    uint32_t pad;
    double rnorm[KR_BATCH_MAX];
} kr_cg_dev;

/* The scalar steps of cg_alpha and cg_update (backend.h's contract), one
 * code for both backends. */
static inline KR_HOST_DEVICE void kr_cg_dev_alpha(kr_cg_dev *s, double pq)
{
    s->pq = pq;
    if (pq > 0)
        s->alpha = s->rho / pq;
    else
        s->stop = KR_DEV_STOP_PQ;
}

static inline KR_HOST_DEVICE void kr_cg_dev_update(kr_cg_dev *s, double rz,
                                                   double rr)
{
    double rn = sqrt(rr);
    s->rnorm[s->done++ % KR_BATCH_MAX] = rn;
    if (!isfinite(rn) || rn <= s->atol || rn <= s->rtol_b || rn > s->div) {
        s->stop = KR_DEV_STOP_CHECK;
        return;
    }
    s->beta = rz / s->rho;
    s->rho = rz;
    if (rz < 0 || !isfinite(rz)) s->stop = KR_DEV_STOP_RHO;
}

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
    /* CG with its scalars in backend memory (kr_cg_dev s); each is a no-op
     * once s->stop is set.
     * cg_alpha: pq = p.q; s->pq = pq; pq > 0: s->alpha = s->rho / pq, else
     * s->stop = KR_DEV_STOP_PQ. */
    kr_status (*cg_alpha)(kr_ctx *ctx, int32_t n, const double *p,
                          const double *q, kr_cg_dev *s);
    /* cg_update: xr_update with a = s->alpha, then rn = sqrt(r.r) goes to
     * s->rnorm[s->done++ % KR_BATCH_MAX]; if rn is not finite, rn <= s->atol,
     * rn <= s->rtol_b or rn > s->div: s->stop = KR_DEV_STOP_CHECK; else
     * s->beta = r.z / s->rho, s->rho = r.z, and s->stop = KR_DEV_STOP_RHO
     * when that rho is < 0 or not finite. */
    kr_status (*cg_update)(kr_ctx *ctx, int32_t n, const double *p,
                           const double *q, double *x, double *r,
                           const double *d, double *z, kr_cg_dev *s);
    /* cg_direction: p = z + s->beta * p (as axpby(1, z, beta, p)) */
    kr_status (*cg_direction)(kr_ctx *ctx, int32_t n, const double *z,
                              double *p, kr_cg_dev *s);
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
