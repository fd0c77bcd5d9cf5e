/* The formats krylov knows, by name. Adding a format: its two files and one
 * line here. */
#include "spmv/format.h"

#include <string.h>

static const kr_format_entry formats[] = {
    {"csr", "compressed sparse rows (cuSPARSE on the GPU); the baseline",
     &kr_csr_cpu_ops, kr_csr_cuda_ops},
};

#define NFORMATS (sizeof formats / sizeof formats[0])

const kr_format_entry *kr_format_find(const char *name)
{
    for (size_t i = 0; name && i < NFORMATS; i++)
        if (strcmp(formats[i].name, name) == 0) return &formats[i];
    return NULL;
}

const char *const *kr_format_names(void)
{
    static const char *names[NFORMATS + 1];
    for (size_t i = 0; i < NFORMATS; i++)
        names[i] = formats[i].name;
    names[NFORMATS] = NULL;
    return names;
}
