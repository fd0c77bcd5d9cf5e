/* Condition numbers of block-Jacobi's diagonal blocks in the 1-norm,
 * cond_1(B_b) = ||B_b||_1 ||B_b^{-1}||_1, B_b the block of A (as
 * kr_gje_extract reads it) and B_b^{-1} the inverse the preconditioner
 * applies (read back from the backend). The inverse is the computed one,
 * so the number is an estimate: its relative error grows like
 * cond * eps, which still tells 1e12 from 1e14. What `krylov solve
 * --verbose` reports. */
#ifndef KR_PRECOND_BJACOBI_COND_H
#define KR_PRECOND_BJACOBI_COND_H

#include "krylov.h"

/* Thresholds of the summary. An inverse with cond > 1e8 keeps about half
 * of double's 16 digits (error ~ cond * eps ~ 1e-8), one with cond > 1e12
 * about 4: there the preconditioner applies mostly rounding. Written as
 * plain literals so that reports can quote them as written. */
#define KR_BJACOBI_COND_HIGH 1e8
#define KR_BJACOBI_COND_EXTREME 1e12

typedef struct kr_bjacobi_cond {
    int32_t nb;              /* blocks                                      */
    int32_t *starts;         /* nb + 1: block b is rows starts[b]..
                                starts[b+1]-1 (0-based)                     */
    double *cond;            /* nb: cond_1(B_b); INFINITY where replaced    */
    unsigned char *replaced; /* nb: 1 where B_b was singular and the
                                policy's stand-in (scalar Jacobi or the
                                identity), not an inverse, is applied       */
} kr_bjacobi_cond;

/* c = the condition numbers of the blocks of P, a "bjacobi" preconditioner
 * built from the host CSR A (the same matrix). Fails with KR_ERR_ARG for
 * another preconditioner or a matrix of another size, and with the status
 * of kr_bjacobi_inverse_csr when the inverses cannot be read back. c is
 * overwritten; free it with kr_bjacobi_cond_free (also after a failure). */
kr_status kr_bjacobi_cond_compute(kr_ctx *ctx, const kr_precond *P,
                                  const kr_csr *A, kr_bjacobi_cond *c);
void kr_bjacobi_cond_free(kr_bjacobi_cond *c);

/* c in a few numbers. min, median (the mean of the two middle values for
 * an even count), max and the counts above the thresholds are over the
 * inverted blocks only: a replaced block has no inverse to measure. A
 * non-finite cond (an inverse that overflowed) counts as above both. */
typedef struct kr_bjacobi_cond_stats {
    int32_t blocks, replaced;
    double min, median, max; /* NaN when every block was replaced */
    int32_t max_block;       /* the block of max; -1 when none    */
    int32_t high, extreme;   /* cond > KR_BJACOBI_COND_HIGH, _EXTREME */
} kr_bjacobi_cond_stats;

kr_status kr_bjacobi_cond_summarize(kr_ctx *ctx, const kr_bjacobi_cond *c,
                                    kr_bjacobi_cond_stats *s);

#endif
