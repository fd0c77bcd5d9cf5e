/* The formats krylov knows, by name. Adding a format: its two files and one
 * line here. */
#include "spmv/format.h"

#include <string.h>

static const kr_format_entry formats[] = {
    {"csr", "compressed sparse rows (cuSPARSE on the GPU); the baseline",
     &kr_csr_cpu_ops, kr_csr_cuda_ops},
    {"ellr", "ELLPACK-R: rows padded to the longest, column-major",
     &kr_ellr_cpu_ops, kr_ellr_cuda_ops},
    {"pellr", "permuted ELLPACK-R: rows sorted by length, per-warp widths",
     &kr_pellr_cpu_ops, kr_pellr_cuda_ops},
    {"vsr", "vectorized segment reduction: fixed nonzeros per warp (skew)",
     &kr_vsr_cpu_ops, kr_vsr_cuda_ops},
    {"hyb", "ELL part of width K plus a COO remainder (segment-reduced)",
     &kr_hyb_cpu_ops, kr_hyb_cuda_ops},
    {"auto", "picks one of the above per matrix from its row lengths",
     &kr_auto_ops, kr_auto_cuda_ops},
    {"auto-probe", "auto, and on the GPU times the close candidates",
     &kr_auto_probe_ops, kr_auto_probe_cuda_ops},
};

#define NFORMATS (sizeof formats / sizeof formats[0])

const kr_format_entry *kr_format_find(const char *name)
{
    for (size_t i = 0; name && i < NFORMATS; i++)
        if (strcmp(formats[i].name, name) == 0) return &formats[i];
    return NULL;
}

const kr_format_ops *kr_format_backend_ops(const kr_ctx *ctx, const char *name)
{
    const kr_format_entry *e = kr_format_find(name);
    if (!e) return NULL;
    if (ctx->device != KR_DEVICE_CUDA) return e->cpu;
    return e->cuda ? e->cuda() : NULL;
}

const char *const *kr_format_names(void)
{
    static const char *names[NFORMATS + 1];
    for (size_t i = 0; i < NFORMATS; i++)
        names[i] = formats[i].name;
    names[NFORMATS] = NULL;
    return names;
}
