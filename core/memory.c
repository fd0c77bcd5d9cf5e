/* Host memory checks before large allocations (see memory.h). */
#include "core/memory.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* MemAvailable in bytes, or 0 when /proc/meminfo does not say. */
static double meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0.0;
    char line[256];
    double kib = 0.0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
    fclose(f);
    return kib * 1024.0;
}

static double physical_bytes(void)
{
#ifdef _SC_PHYS_PAGES
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0) return (double)pages * (double)size;
#endif
    return 0.0;
}

/* $KRYLOV_MEMORY_LIMIT in bytes, 0 when unset or not a size. */
static double env_limit(void)
{
    const char *s = getenv("KRYLOV_MEMORY_LIMIT");
    if (!s || !*s) return 0.0;
    char *end;
    double v = strtod(s, &end);
    double unit = *end == 'K'   ? 1024.0
                  : *end == 'M' ? 1048576.0
                  : *end == 'G' ? 1073741824.0
                                : 1.0;
    if (unit > 1.0) end++;
    return (*end || !(v > 0)) ? 0.0 : v * unit;
}

double kr_host_available_bytes(void)
{
    double have = meminfo_available();
    if (have <= 0) have = physical_bytes();
    double cap = env_limit();
    if (cap > 0 && (have <= 0 || cap < have)) have = cap;
    return have;
}

kr_status kr_host_mem_check(kr_ctx *ctx, double bytes, const char *what)
{
    if (bytes < KR_MEM_CHECK_MIN) return KR_OK;
    double have = kr_host_available_bytes();
    if (have <= 0 || bytes <= have) return KR_OK;
    return kr_fail(ctx, KR_ERR_NOMEM,
                   "%s needs %.2f GB of memory, but only %.2f GB is "
                   "available",
                   what, bytes / 1e9, have / 1e9);
}
