/* Preconditioners as operators z = P^{-1} r, registered by name in
 * precond/precond.c. "none" is the identity operator, so solver loops never
 * branch on whether there is a preconditioner. */
#ifndef KR_PRECOND_PRECOND_H
#define KR_PRECOND_PRECOND_H

#include "core/ctx.h"

typedef struct kr_precond_ops {
    const char *name;
    const char *summary;
    kr_status (*build)(kr_ctx *ctx, const kr_csr *A, void **impl);
    /* z = P^{-1} r; r and z are distinct arrays of n doubles */
    kr_status (*apply)(kr_ctx *ctx, void *impl, int32_t n, const double *r,
                       double *z);
    void (*destroy)(kr_ctx *ctx, void *impl);
    /* For a diagonal preconditioner: sets *d to its diagonal (NULL for the
     * identity) and returns 1, so solvers may fuse it into their updates;
     * NULL for preconditioners that are not diagonal. */
    int (*diagonal)(void *impl, const double **d);
    /* Added later; NULL in preconditioners that take no options or have no
     * blocks. build_opts, when set, is used instead of build (o is never
     * NULL there). */
    kr_status (*build_opts)(kr_ctx *ctx, const kr_csr *A,
                            const kr_precond_options *o, void **impl);
    /* Optional: build_opts reading A from the CSR dev in backend memory
     * (a kr_matrix's own, kr_matrix_csr_view) instead of uploading it; the
     * host A is still given for host-side steps. */
    kr_status (*build_view)(kr_ctx *ctx, const kr_csr *A,
                            const kr_csr_view *dev, const kr_precond_options *o,
                            void **impl);
    /* Optional: new values of A on the pattern impl was built for, in
     * place (no backend allocation); else update_values builds anew. */
    kr_status (*update_values)(kr_ctx *ctx, void *impl, const kr_csr *A);
    int32_t (*singular_blocks)(const void *impl);
    int32_t (*block_count)(const void *impl);
    void (*block_sizes)(const void *impl, int32_t *sizes);
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

/* The preconditioners, one line each, in the order of kr_precond_names():
 * X(name) for the table kr_precond_<name>_ops in precond/<name>.c. */
#define KR_PRECOND_LIST(X) X(none) X(jacobi) X(bjacobi)

#define KR_DECLARE_PRECOND(name)                                               \
    extern const kr_precond_ops kr_precond_##name##_ops;
KR_PRECOND_LIST(KR_DECLARE_PRECOND)
#undef KR_DECLARE_PRECOND

#endif
