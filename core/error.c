/* Status names and the context's message buffer. */
#include "core/error.h"

#include "core/ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *kr_status_name(kr_status s)
{
    switch (s) {
    case KR_OK: return "KR_OK";
    case KR_ERR_ARG: return "KR_ERR_ARG";
    case KR_ERR_IO: return "KR_ERR_IO";
    case KR_ERR_FORMAT: return "KR_ERR_FORMAT";
    case KR_ERR_SINGULAR: return "KR_ERR_SINGULAR";
    case KR_ERR_BREAKDOWN: return "KR_ERR_BREAKDOWN";
    case KR_ERR_NOMEM: return "KR_ERR_NOMEM";
    case KR_ERR_DEVICE: return "KR_ERR_DEVICE";
    case KR_ERR_NOT_COMPILED: return "KR_ERR_NOT_COMPILED";
    case KR_ERR_UNSUPPORTED: return "KR_ERR_UNSUPPORTED";
    }
    return "KR_ERR_UNKNOWN";
}

kr_status kr_fail(kr_ctx *ctx, kr_status s, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
    }
    return s;
}

kr_status kr_null_arg(kr_ctx *ctx, const char *func, const char *arg)
{
    return kr_fail(ctx, KR_ERR_ARG, "%s: %s is NULL", func, arg);
}

void kr_error_prefix(kr_ctx *ctx, const char *fmt, ...)
{
    if (!ctx) return;
    char prefix[KR_MSG_LEN], old[KR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, ctx->error, sizeof old);
    snprintf(ctx->error, sizeof ctx->error, "%s: %s", prefix, old);
}

void kr_join_names(const char *const *names, char *buf, size_t len)
{
    if (len == 0) return;
    buf[0] = '\0';
    for (const char *const *n = names; *n; n++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", n == names ? "" : ", ", *n);
    }
}
