/* Shared by the libFuzzer targets (test/fuzz/fuzz_*.c) and their replay
 * in test/test_fuzz_replay.c: each target is a function
 * kr_fuzz_NAME(data, size); with KR_FUZZ_MAIN defined the file also
 * defines libFuzzer's entry point, calling it. */
#ifndef KR_TEST_FUZZ_H
#define KR_TEST_FUZZ_H

#include "io/read.h"
#include "krylov.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef KR_FUZZ_MAIN
#define KR_FUZZ_TARGET(name)                                                   \
    int kr_fuzz_##name(const uint8_t *data, size_t size);                      \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);              \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)               \
    {                                                                          \
        return kr_fuzz_##name(data, size);                                     \
    }                                                                          \
    int kr_fuzz_##name(const uint8_t *data, size_t size)
#else
#define KR_FUZZ_TARGET(name)                                                   \
    int kr_fuzz_##name(const uint8_t *data, size_t size)
#endif

/* One CPU context for all inputs (created on first use; a context holds
 * no state that one read could leave for the next). The readers may
 * take 256 MB at most (KRYLOV_MEMORY_LIMIT, core/memory.h): a small
 * input claiming 2e9 rows is refused for memory instead of filling the
 * fuzzer's. */
static inline kr_ctx *kr_fuzz_ctx(void)
{
    static kr_ctx *ctx;
    if (!ctx && (setenv("KRYLOV_MEMORY_LIMIT", "256M", 1) != 0 ||
                 kr_ctx_create(&ctx, KR_DEVICE_CPU) != KR_OK))
        __builtin_trap();
    return ctx;
}

/* A failed read must leave its outputs empty and a message. */
static inline void kr_fuzz_expect(int cond)
{
    if (!cond) __builtin_trap();
}

#endif
