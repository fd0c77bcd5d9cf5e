/* Context creation and device selection: the backend is chosen once here,
 * after which every kernel call goes through ctx->ops. */
#include "core/ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/error.h"

/* The cores this process may run on (its affinity mask, as OpenMP sees
 * it). */
static int cores_available(void)
{
#ifdef _OPENMP
    int n = omp_get_num_procs();
    return n > 0 ? n : 1;
#else
    return 1;
#endif
}

static void set_cpu(kr_ctx *ctx)
{
    ctx->device = KR_DEVICE_CPU;
    ctx->ops = kr_cpu_backend();
    int t = kr_ctx_threads(ctx);
    snprintf(ctx->device_name, sizeof ctx->device_name, "cpu (%d thread%s)", t,
             t == 1 ? "" : "s");
}

/* $KRYLOV_BUILD picks the context's first kr_build; unset or empty is
 * auto, anything but "host", "device" or "auto" an error naming it. */
static kr_status build_from_env(kr_ctx *ctx)
{
    const char *v = getenv("KRYLOV_BUILD");
    ctx->build = KR_BUILD_AUTO;
    if (!v || !*v || !strcmp(v, "auto")) return KR_OK;
    if (!strcmp(v, "device") || !strcmp(v, "host")) {
        ctx->build = !strcmp(v, "host") ? KR_BUILD_HOST : KR_BUILD_DEVICE;
        return KR_OK;
    }
    return kr_fail(ctx, KR_ERR_ARG,
                   "KRYLOV_BUILD is '%s'; it must be 'host', 'device' or "
                   "'auto'",
                   v);
}

kr_status kr_ctx_create(kr_ctx **out, kr_device want)
{
    if (!out) return KR_ERR_ARG;
    kr_ctx *ctx = calloc(1, sizeof *ctx);
    *out = ctx;
    if (!ctx) return KR_ERR_NOMEM;
    ctx->scratch = malloc(KR_SCRATCH * sizeof(double));
    if (!ctx->scratch) {
        free(ctx);
        *out = NULL;
        return KR_ERR_NOMEM;
    }
    set_cpu(ctx);
    KR_TRY(build_from_env(ctx));
    if (want == KR_DEVICE_CPU) return KR_OK;
    if (want != KR_DEVICE_AUTO && want != KR_DEVICE_CUDA)
        return kr_fail(ctx, KR_ERR_ARG, "unknown device %d", (int)want);
    kr_status st = kr_cuda_backend_init(ctx);
    if (st == KR_OK) return KR_OK;
    if (want == KR_DEVICE_CUDA) return st;
    /* note = "no usable GPU (<reason>); using the CPU", reason cut to fit */
    char reason[KR_MSG_LEN / 2];
    memcpy(reason, ctx->error, sizeof reason);
    reason[sizeof reason - 1] = '\0';
    snprintf(ctx->note, sizeof ctx->note, "no usable GPU (%s); using the CPU",
             reason);
    ctx->error[0] = '\0';
    set_cpu(ctx);
    return KR_OK;
}

void kr_ctx_destroy(kr_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->device == KR_DEVICE_CUDA) kr_cuda_backend_fini(ctx);
    free(ctx->scratch);
    free(ctx);
}

const char *kr_ctx_error(const kr_ctx *ctx) { return ctx ? ctx->error : ""; }
const char *kr_ctx_note(const kr_ctx *ctx) { return ctx ? ctx->note : ""; }
double kr_ctx_warmup_seconds(const kr_ctx *ctx)
{
    return ctx ? ctx->warmup_s : 0.0;
}
/* Getters accept NULL (a failed create) and give a neutral value. */
kr_device kr_ctx_device(const kr_ctx *ctx)
{
    return ctx ? ctx->device : KR_DEVICE_CPU;
}
const char *kr_ctx_device_name(const kr_ctx *ctx)
{
    return ctx ? ctx->device_name : "";
}

kr_status kr_ctx_set_threads(kr_ctx *ctx, int threads)
{
    if (!ctx) return KR_ERR_ARG;
    if (threads < 0)
        return kr_fail(ctx, KR_ERR_ARG, "thread count %d is negative", threads);
    int cores = cores_available();
    if (threads > cores) { /* more threads than cores only wait on each other */
        size_t len = strlen(ctx->note);
        snprintf(ctx->note + len, sizeof ctx->note - len,
                 "%s%d threads asked for, capped at the %d cores available",
                 len ? "; " : "", threads, cores);
        threads = cores;
    }
    ctx->threads = threads;
    if (ctx->device == KR_DEVICE_CPU) set_cpu(ctx);
    return KR_OK;
}

kr_status kr_ctx_set_build(kr_ctx *ctx, kr_build where)
{
    if (!ctx) return KR_ERR_ARG;
    if (where != KR_BUILD_HOST && where != KR_BUILD_DEVICE &&
        where != KR_BUILD_AUTO)
        return kr_fail(ctx, KR_ERR_ARG,
                       "kr_ctx_set_build: %d is not KR_BUILD_HOST, "
                       "KR_BUILD_DEVICE or KR_BUILD_AUTO",
                       (int)where);
    ctx->build = where;
    return KR_OK;
}

kr_build kr_ctx_build(const kr_ctx *ctx)
{
    return ctx ? ctx->build : KR_BUILD_HOST;
}

size_t kr_ctx_device_bytes(const kr_ctx *ctx, size_t *peak)
{
    if (peak) *peak = ctx ? ctx->device_bytes_peak : 0;
    return ctx ? ctx->device_bytes : 0;
}

size_t kr_ctx_alloc_count(const kr_ctx *ctx, size_t *frees)
{
    if (frees) *frees = ctx ? ctx->free_count : 0;
    return ctx ? ctx->alloc_count : 0;
}

int kr_ctx_threads(const kr_ctx *ctx)
{
    if (ctx && ctx->threads > 0) return ctx->threads;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

double kr_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int kr_env_off(const char *name)
{
    const char *v = getenv(name);
    return v && !strcmp(v, "0");
}
