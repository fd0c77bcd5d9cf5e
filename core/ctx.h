/* The context: which backend runs the kernels, its handles, and the last
 * error message. One per thread of use; not shared between threads. */
#ifndef KR_CORE_CTX_H
#define KR_CORE_CTX_H

#include "core/backend.h"
#include "krylov.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KR_MSG_LEN 1024
#define KR_SCRATCH (256 * 64)

struct kr_ctx {
    kr_device device;          /* KR_DEVICE_CPU or KR_DEVICE_CUDA, resolved */
    const kr_backend_ops *ops; /* the kernels of that device                */
    void *backend;             /* backend state (CUDA handles), or NULL     */
    int threads;               /* CPU threads, 0 = OpenMP default           */
    size_t device_bytes;       /* GPU memory held now (CUDA backend)        */
    size_t device_bytes_peak;  /* the most it held at once                   */
    kr_build build;            /* where kr_matrix_create builds (GPU)        */
    size_t alloc_count;        /* backend allocations made (ops->alloc)      */
    size_t free_count;         /* backend releases made (ops->release)       */
    double *scratch;           /* KR_SCRATCH doubles of host memory for the
                                  partial sums of CPU reductions            */
    char device_name[128];
    char error[KR_MSG_LEN];
    char note[KR_MSG_LEN];
    double warmup_s; /* the CUDA backend's kernel loading at creation */
};

/* 1 when the environment variable `name` is "0": how an optimisation is
 * switched off to compare (KRYLOV_PDL, KRYLOV_CG_FUSED, KRYLOV_WARMUP...) */
int kr_env_off(const char *name);

#ifdef __cplusplus
}
#endif

#endif
