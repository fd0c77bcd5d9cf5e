/* Preconditioners as operators z = P^{-1} r, registered by name in
 * precond/precond.c. "none" is the identity operator, so solver loops never
 * branch on whether there is a preconditioner. */
#ifndef KR_PRECOND_PRECOND_H
#define KR_PRECOND_PRECOND_H

#include "core/ctx.h"

/* What a preconditioner reports about itself (the view op): the public
 * kr_precond_info, and for one with diagonal blocks what the block
 * reports read (the blocks' rows, the replaced blocks, the inverses). */
typedef struct kr_precond_view {
    kr_precond_info info;
    const int32_t *starts;   /* info.blocks + 1 row starts, owned by impl */
    const int32_t *singular; /* info.blocks flags, 1 where the singular
                                policy replaced the block; owned by impl */
    /* The block inverses as n x n host CSR (every entry of every block),
     * for kr_precond_block_cond; NULL without blocks. */
    kr_status (*inverse_csr)(kr_ctx *ctx, const void *impl, kr_csr *B);
} kr_precond_view;

typedef struct kr_precond_ops {
    const char *name;
    const char *summary;
    /* Builds from the host A with options o (never NULL). dev, when not
     * NULL, is A in backend memory (a kr_matrix's own, kr_matrix_csr_view)
     * for a preconditioner that can read it there instead of uploading A;
     * the others ignore it. A is checked before (kr_csr_check), but with
     * dev only its sizes and row-pointer ends: a setup given dev that
     * reads A's rows checks them first. */
    kr_status (*setup)(kr_ctx *ctx, const kr_csr *A, const kr_csr_view *dev,
                       const kr_precond_options *o, void **impl);
    /* z = P^{-1} r; r and z are distinct arrays of n doubles */
    kr_status (*apply)(kr_ctx *ctx, void *impl, int32_t n, const double *r,
                       double *z);
    void (*destroy)(kr_ctx *ctx, void *impl);
    /* Optional (NULL: the preconditioner reads no option): sets the option
     * key from its text value in o (kr_precond_options_set); KR_ERR_ARG
     * for a bad value, KR_ERR_UNSUPPORTED for a key it does not read. With
     * o NULL (and ctx and value NULL) it only says, by KR_OK, that it
     * reads key. */
    kr_status (*set_option)(kr_ctx *ctx, kr_precond_options *o, const char *key,
                            const char *value);
    /* Optional (NULL: nothing to report): fills v (zeroed by the caller). */
    void (*view)(const void *impl, kr_precond_view *v);
    /* For a diagonal preconditioner: sets *d to its diagonal (NULL for the
     * identity) and returns 1, so solvers may fuse it into their updates;
     * NULL for preconditioners that are not diagonal. */
    int (*diagonal)(void *impl, const double **d);
    /* Optional: for a block-diagonal preconditioner whose blocks are in
     * backend memory, fills bd and returns 1, so a multi-column solve may
     * apply it inside its update (kr_backend_ops.mcg_step_bd); else 0. */
    int (*blockdiag)(void *impl, kr_blockdiag *bd);
    /* Optional: new values of A on the pattern impl was built for, in
     * place (no backend allocation); else update_values builds anew. */
    kr_status (*update_values)(kr_ctx *ctx, void *impl, const kr_csr *A);
    /* Optional (several right-hand sides): Z = P^{-1} R for the k columns
     * of the n x k row-major blocks R and Z (distinct), each column as
     * apply gives it; without it a multi-column solve applies the
     * preconditioner column by column. */
    kr_status (*apply_multi)(kr_ctx *ctx, void *impl, int32_t n, int k,
                             const double *R, double *Z);
} kr_precond_ops;

struct kr_precond {
    kr_ctx *ctx;
    const kr_precond_ops *ops;
    void *impl;
    int32_t n;
    kr_precond_options opt; /* as created, block_sizes dropped: for
                               kr_precond_update_values */
    kr_matrix *M;           /* kr_precond_create_matrix's matrix, borrowed */
};

/* 1 for a kr_precond_create_user preconditioner (precond/user.c). */
int kr_precond_is_user(const kr_precond *P);

const kr_precond_ops *kr_precond_find(const char *name);
/* What the preconditioner of a solve is, as a method's loop sees it
 * (kr_precond_kind): a diagonal one (kr_precond_ops.diagonal) is fused into the
 * updates. */
typedef enum kr_pc_kind {
    KR_PC_GENERAL = 0, /* applied as an operator                      */
    KR_PC_IDENTITY,    /* diagonal, no array: none                    */
    KR_PC_DIAGONAL     /* diagonal with its array d: jacobi           */
} kr_pc_kind;

kr_pc_kind kr_precond_kind(const kr_precond *P);

/* P's view (zeroed, then filled by its view op if it has one). */
void kr_precond_view_of(const kr_precond *P, kr_precond_view *v);

/* The preconditioners, one line each, in the order of kr_precond_names():
 * X(name) for the table kr_precond_<name>_ops in precond/<name>.c. */
#define KR_PRECOND_LIST(X) X(none) X(jacobi) X(bjacobi)

#define KR_DECLARE_PRECOND(name)                                               \
    extern const kr_precond_ops kr_precond_##name##_ops;
KR_PRECOND_LIST(KR_DECLARE_PRECOND)
#undef KR_DECLARE_PRECOND

#endif
