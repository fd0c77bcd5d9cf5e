/* Matrix Market parsing shared by the sparse and the dense readers: the
 * header (banner and size line) and the entries, as 0-based triplets in
 * file order, every line checked and named in errors as "path:line". */
#ifndef KR_IO_MTX_H
#define KR_IO_MTX_H

#include "io/lines.h"
#include "io/read.h"
#include "krylov.h"

#include <stdint.h>

typedef enum { KR_MTX_REAL, KR_MTX_INTEGER, KR_MTX_PATTERN } kr_mtx_field;
typedef enum { KR_MTX_GENERAL, KR_MTX_SYMMETRIC, KR_MTX_SKEW } kr_mtx_symmetry;

typedef struct kr_mtx_header {
    int array; /* 1: array (dense, column-major), 0: coordinate */
    kr_mtx_field field;
    kr_mtx_symmetry symmetry;
    int32_t nrows, ncols;
    int64_t nstored; /* entries (coordinate) or values (array) that follow */
    long size_line;  /* line number of the size line                       */
} kr_mtx_header;

/* Entries as stored in the file, 0-based. Symmetric and skew-symmetric
 * files are not expanded here: the consumer mirrors off-diagonal entries. */
typedef struct kr_mtx_entries {
    int32_t *row, *col; /* n entries each (cap allocated) */
    double *val;
    int64_t n, cap;
} kr_mtx_entries;

/* A kr_read_flags bit for the dense reader: rows*cols must fit 32-bit
 * indices for coordinate files as well. */
enum { KR_MTX_DENSE = 1u << 8 };

/* Reads a whole input into h and E (E is freed on failure); flags are
 * KR_MTX_DENSE and kr_read_flags. */
kr_status kr_mtx_load(kr_ctx *ctx, kr_source *S, unsigned flags,
                      kr_mtx_header *h, kr_mtx_entries *E);
void kr_mtx_entries_free(kr_mtx_entries *E);

/* Reads the banner and the size line and checks them (mtx_header.c). */
kr_status kr_mtx_read_header(kr_ctx *ctx, kr_lines *L, unsigned flags,
                             kr_mtx_header *h);

/* ---- token helpers: a line is cut into tokens without being modified */

static inline int kr_mtx_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Finds the next token at or after *p: [*b, *e). Returns 0 at the end. */
static inline int kr_mtx_token(const char **p, const char **b, const char **e)
{
    const char *s = *p;
    while (kr_mtx_space(*s))
        s++;
    if (*s == '\0') return 0;
    *b = s;
    while (*s && !kr_mtx_space(*s))
        s++;
    *e = s;
    *p = s;
    return 1;
}

/* 1 when the line is blank or a comment (first non-blank character %). */
static inline int kr_mtx_skip_line(const char *s)
{
    while (kr_mtx_space(*s))
        s++;
    return *s == '\0' || *s == '%';
}

enum { KR_MTX_INT_BAD = 0, KR_MTX_INT_OK = 1, KR_MTX_INT_HUGE = 2 };

/* Parses [b, e) as a decimal integer with an optional sign. Returns
 * KR_MTX_INT_OK, KR_MTX_INT_BAD (not an integer) or KR_MTX_INT_HUGE
 * (beyond +-2^62, *v saturated). */
static inline int kr_mtx_int(const char *b, const char *e, int64_t *v)
{
    int neg = *b == '-';
    if (*b == '-' || *b == '+') b++;
    if (b == e) return KR_MTX_INT_BAD;
    int64_t x = 0;
    int huge = 0;
    for (; b < e; b++) {
        unsigned d = (unsigned)(*b - '0');
        if (d > 9) return KR_MTX_INT_BAD;
        if (x > ((int64_t)1 << 62) / 10)
            huge = 1;
        else
            x = x * 10 + (int64_t)d;
    }
    if (huge) x = (int64_t)1 << 62;
    *v = neg ? -x : x;
    return huge ? KR_MTX_INT_HUGE : KR_MTX_INT_OK;
}

/* Length to print of a token in a message: at most 40 characters. */
static inline int kr_mtx_toklen(const char *b, const char *e)
{
    return e - b > 40 ? 40 : (int)(e - b);
}

/* Number of tokens on a line, for "expected 3 numbers, found 4". */
static inline int kr_mtx_count_tokens(const char *s)
{
    const char *b, *e;
    int n = 0;
    while (kr_mtx_token(&s, &b, &e))
        n++;
    return n;
}

#endif
