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
