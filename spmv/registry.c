/* The formats krylov knows, by name. Adding a format: its two files and one
 * line in KR_FORMAT_LIST (spmv/format.h). */
#include "spmv/format.h"

#include <string.h>

#define KR_FORMAT_ENTRY(name, summary)                                         \
    {#name, summary, &kr_##name##_cpu_ops, kr_##name##_cuda_ops},
static const kr_format_entry formats[] = {
    KR_FORMAT_LIST(KR_FORMAT_ENTRY){
        "auto", "picks one of the above per matrix from its row lengths",
        &kr_auto_ops, kr_auto_cuda_ops},
    {"auto-probe", "auto, and on the GPU times the close candidates",
     &kr_auto_probe_ops, kr_auto_probe_cuda_ops},
};

#undef KR_FORMAT_ENTRY

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
