/* The row-wise pieces of IDR(s)'s vector ops, shared by the per-op kernels
 * (core/cuda_backend.cu) and the persistent batches
 * (core/cuda_persist_idr.cu), so that both compute the same expressions.
 * Fresh = true reads the blocks past the SM's L1 (__ldcg), for entries
 * another block wrote within the same launch. */
#ifndef KR_CORE_CUDA_IDR_CUH
#define KR_CORE_CUDA_IDR_CUH

#include "core/backend.h"

template <bool Fresh>
static __device__ __forceinline__ double idr_load(const double *p)
{
    return Fresh ? __ldcg(p) : *p;
}

/* coef[j] = a * src[j] for j < m, in shared memory (the products
 * cu_gemv_n makes on the host); the whole block calls it. */
static __device__ void idr_coeffs(double *coef, const double *src, int m,
                                  double a)
{
    if ((int)threadIdx.x < m) coef[threadIdx.x] = a * src[threadIdx.x];
    __syncthreads();
}

/* k_gemv_n's sum for row i: sum_j B(i, j) coef[j], j < m */
template <bool Fresh = false>
static __device__ double idr_rowsum(const double *B, int32_t n, int64_t i,
                                    const double *coef, int m)
{
    double t = 0.0;
    for (int j = 0; j < m; j++)
        t += idr_load<Fresh>(B + i + (int64_t)j * n) * coef[j];
    return t;
}

/* u_k's entry from vh_i: k_axpby's om vh + c0 u (c0 = 0: om vh alone, so
 * a NaN in u_k does not pass on), then k_gemv_n's + U(:,k+1:s) c(1:).
 * k_axpby rounds om vh before the sum is added: KR_MUL keeps nvcc from
 * fusing the two into an FMA here. */
template <bool Fresh = false>
static __device__ double idr_u_entry(double om, double vhi, double c0,
                                     double ui, const double *Un, int32_t n,
                                     int64_t i, const double *cu, int m)
{
    double y = c0 == 0.0 ? KR_MUL(om, vhi) : om * vhi + c0 * ui;
    if (m > 0) y += idr_rowsum<Fresh>(Un, n, i, cu, m);
    return y;
}

#endif
