/* Internal to the CUDA backend's .cu files: the backend state kept in
 * ctx->backend and the macros that turn CUDA and cuSPARSE statuses
 * into krylov statuses with the call and the message. */
#ifndef KR_CORE_CUDA_H
#define KR_CORE_CUDA_H

#include "core/ctx.h"
#include "core/error.h"

#include <cuda_runtime.h>
#include <cusparse.h>

/* Device doubles for reduction partial sums and small results. */
#define KR_CUDA_SCRATCH (64 * 1024)
/* The last KR_CUDA_SCRATCH_TAIL doubles hold the ticket of GMRES's column
 * passes (gm_ticket, core/cuda_backend.cu) and, in the very last,
 * residual_norms' (core/cuda_residual.cu), which must stay zero between
 * launches: partial sums, from d_scratch + KR_MAX_DOTS, stay within
 * KR_CUDA_PARTIALS doubles. */
#define KR_CUDA_SCRATCH_TAIL 128
#define KR_CUDA_PARTIALS (KR_CUDA_SCRATCH - KR_MAX_DOTS - KR_CUDA_SCRATCH_TAIL)

typedef struct kr_cuda_alloc {
    void *p;
    size_t bytes;
} kr_cuda_alloc;

/* Kernels whose occupancy a context remembers: the persistent kernels,
 * 4 methods x 5 sub-warp widths. */
#define KR_CUDA_OCC_SLOTS 24

typedef struct kr_cuda_state {
    int device;
    cudaStream_t stream;
    cusparseHandle_t cusparse;
    cudaMemPool_t pool; /* every device allocation (cuda_backend.cu) */
    double *d_scratch;  /* KR_CUDA_SCRATCH doubles of device memory */
    double *h_scratch;  /* KR_CUDA_SCRATCH doubles of pinned host memory */
    int sm_count;
    int pdl; /* launch with programmatic dependence (KRYLOV_PDL=0: off) */
    /* Pinned staging of the device build's uploads (spmv/devbuild.cu):
     * two buffers taking turns, made on the first upload that stages and
     * kept, since making them (cudaHostAlloc) costs more than a 4 MiB
     * copy; freed with the context. */
    void *stage[2];
    cudaEvent_t stage_done[2]; /* buffer b's last DMA has finished */
    /* The record of live device allocations, so that kr_ctx_device_bytes
     * can say what the context holds. */
    kr_cuda_alloc *allocs;
    size_t nallocs, cap_allocs;
    /* Blocks an SM of each persistent kernel launched so far
     * (core/cuda_persist.cuh): the occupancy query costs the host a few
     * microseconds a launch, a short solve's fixed cost. */
    const void *occ_kernel[KR_CUDA_OCC_SLOTS];
    int occ_blocks[KR_CUDA_OCC_SLOTS];
} kr_cuda_state;

static inline kr_cuda_state *kr_cuda(kr_ctx *ctx)
{
    return (kr_cuda_state *)ctx->backend;
}

kr_status kr_cuda_fail(kr_ctx *ctx, const char *call, const char *what,
                       const char *file, int line);

#define KR_CUDA_TRY(ctx, call)                                                 \
    do {                                                                       \
        cudaError_t kr_e_ = (call);                                            \
        if (kr_e_ != cudaSuccess)                                              \
            return kr_cuda_fail(ctx, #call, cudaGetErrorString(kr_e_),         \
                                __FILE__, __LINE__);                           \
    } while (0)

#define KR_CUSPARSE_TRY(ctx, call)                                             \
    do {                                                                       \
        cusparseStatus_t kr_e_ = (call);                                       \
        if (kr_e_ != CUSPARSE_STATUS_SUCCESS)                                  \
            return kr_cuda_fail(ctx, #call, cusparseGetErrorString(kr_e_),     \
                                __FILE__, __LINE__);                           \
    } while (0)

/* After a kernel launch: launch-configuration errors surface here. */
#define KR_LAUNCH_CHECK(ctx) KR_CUDA_TRY(ctx, cudaGetLastError())

/* Programmatic dependent launch (sm_90): a kernel launched with
 * kr_launch_pdl may be scheduled while the kernel before it in the stream
 * still runs, which hides part of a launch's latency between the short
 * kernels of a small system's iteration (measured on an H100: two
 * dependent reduction kernels, 4.0 us a pair plain, 3.7 us so).
 * Such a kernel must call kr_pdl_wait before it touches global memory
 * that an earlier kernel writes: that waits for the kernel before it to
 * finish and its writes to be visible, so stream order holds as without
 * the attribute. Before the wait it may only read what no kernel of the
 * solve writes (the matrix, the Jacobi diagonal). kr_pdl_begin is the
 * wait, then letting its own successor be scheduled (which waits in
 * turn). Without the attribute both are no-ops. */
static __device__ __forceinline__ void kr_pdl_wait(void)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

static __device__ __forceinline__ void kr_pdl_begin(void)
{
    kr_pdl_wait();
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/* kernel<<<grid, block, 0, stream>>>(args...), with programmatic
 * dependence when the context allows it; only for kernels that start with
 * kr_pdl_begin. */
template <typename... Params, typename... Args>
static cudaError_t kr_launch_pdl(const kr_cuda_state *st, unsigned grid,
                                 unsigned block, void (*kernel)(Params...),
                                 Args &&...args)
{
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3(grid);
    c.blockDim = dim3(block);
    c.stream = st->stream;
    c.attrs = &attr;
    c.numAttrs = st->pdl ? 1 : 0;
    return cudaLaunchKernelEx(&c, kernel, static_cast<Args &&>(args)...);
}

#define KR_LAUNCH_PDL(ctx, grid, block, kernel, ...)                           \
    KR_CUDA_TRY(ctx, kr_launch_pdl(kr_cuda(ctx), (unsigned)(grid), block,      \
                                   kernel, __VA_ARGS__))

/* Blocks for a grid-stride loop over n entries. */
static inline int kr_grid(int64_t n, int block)
{
    int64_t g = (n + block - 1) / block;
    return (int)(g < 1 ? 1 : (g > 65535 ? 65535 : g));
}

#endif
