/* Error reporting inside the library: a failing function records a message
 * in the context and returns its status, in one expression. */
#ifndef KR_CORE_ERROR_H
#define KR_CORE_ERROR_H

#include "krylov.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KR_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define KR_PRINTF_LIKE(f, a)
#endif

/* Records the message (printf-style) in ctx (if not NULL) and returns s. */
kr_status kr_fail(kr_ctx *ctx, kr_status s, const char *fmt, ...)
    KR_PRINTF_LIKE(3, 4);

/* KR_ERR_ARG with "FUNC: ARG is NULL" (ctx may be NULL). */
kr_status kr_null_arg(kr_ctx *ctx, const char *func, const char *arg);

/* Adds "context: " in front of the current message (for nested failures). */
void kr_error_prefix(kr_ctx *ctx, const char *fmt, ...) KR_PRINTF_LIKE(2, 3);

/* Writes "a, b, c" from a NULL-terminated name list into buf. */
void kr_join_names(const char *const *names, char *buf, size_t len);

/* Evaluates a kr_status expression and returns it from the caller if not OK. */
#define KR_TRY(expr)                                                           \
    do {                                                                       \
        kr_status kr_try_s_ = (expr);                                          \
        if (kr_try_s_ != KR_OK) return kr_try_s_;                              \
    } while (0)

/* Same, but jumps to a cleanup label with the status stored in `st`. */
#define KR_CHECK(st, expr, label)                                              \
    do {                                                                       \
        (st) = (expr);                                                         \
        if ((st) != KR_OK) goto label;                                         \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
