/* The FP64 tensor-core tile product, for kernels that multiply small dense
 * blocks (block-Jacobi's inversion, the multi-column CG update). */
#ifndef KR_CORE_CUDA_MMA_CUH
#define KR_CORE_CUDA_MMA_CUH

/* d = a b + c on one 8x8x4 tile: lane l gives a(l/4, l%4) and b(l%4, l/4)
 * and holds c, d(l/4, 2(l%4) + {0, 1}) (PTX mma.m8n8k4 .f64). */
static __device__ __forceinline__ double2 mma884(double a, double b, double2 c)
{
    double2 d;
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, "
        "{%3}, {%4, %5};"
        : "=d"(d.x), "=d"(d.y)
        : "d"(a), "d"(b), "d"(c.x), "d"(c.y));
    return d;
}

#endif
