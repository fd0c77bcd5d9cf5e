/* Sparse matrix formats as plug-ins. A format is a table of functions for
 * each backend, registered by name in spmv/registry.c; nothing outside a
 * format's own two files (name.c, name.cu) knows its layout. */
#ifndef KR_SPMV_FORMAT_H
#define KR_SPMV_FORMAT_H

#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One device array of a format's layout (kr_format_ops.arrays). */
typedef struct kr_dev_array {
    const char *name;
    const void *data; /* device memory */
    size_t bytes;
} kr_dev_array;

/* For the arrays op: copies the first min(count, max) of all to out. */
static inline int kr_dev_arrays_put(const kr_dev_array *all, int count,
                                    kr_dev_array *out, int max)
{
    int n = 0;
    for (; n < count && n < max; n++)
        out[n] = all[n];
    return n;
}

struct kr_cg_dev;  /* core/backend.h */
struct kr_idr_dev; /* core/backend.h */
struct kr_gm_dev;  /* core/backend.h */

/* The arguments of gm_dir_apply: with c = s->inv (1 / the last norm, in
 * backend memory), v = c u and w = A (d .* v) (d NULL: w = A v), each
 * product rounded as the separate scaling, pointwise product and SpMV
 * round it; with V, also h = V^T w over V's first k columns (leading
 * dimension the matrix's rows; column k - 1 is v), as gemv_t_dev
 * computes it up to the order of its sums. Nothing once s->h.stop is set
 * (h aside, where the GPU's kernel leaves it to gemv_t_dev). w aliases
 * none of u, v and V, nor v u; u's contents are undefined after (the
 * CPU's composite keeps d .* v there). */
typedef struct kr_gm_dir {
    double *u;
    const double *d;
    double *v, *w;
    const double *V; /* NULL: no h */
    int k;
    double *h; /* backend memory, k entries */
    struct kr_gm_dev *s;
} kr_gm_dir;

typedef struct kr_format_ops {
    const char *name;
    /* Builds the format's data on the backend from host CSR. */
    kr_status (*build)(kr_ctx *ctx, const kr_csr *A, void **impl);
    /* y = alpha*A*x + beta*y; beta == 0 overwrites y */
    kr_status (*apply)(kr_ctx *ctx, void *impl, double alpha, const double *x,
                       double beta, double *y);
    size_t (*bytes)(const void *impl);
    void (*destroy)(kr_ctx *ctx, void *impl); /* accepts NULL */
    /* Entries stored, padding included (nnz for CSR). */
    int64_t (*stored)(const void *impl);
    /* Only for formats that pick another one (auto), else NULL: the
     * concrete format they built, and a sentence saying why. */
    const char *(*chosen)(const void *impl);
    const char *(*reason)(const void *impl);
    /* New values on the pattern impl was built from, in place; NULL where
     * kr_matrix_update_values builds the format again instead. */
    kr_status (*update_values)(kr_ctx *ctx, void *impl, const kr_csr *A);
    /* Formats that hold plain CSR in backend memory: fills *v, returns 1;
     * NULL or 0 otherwise. */
    int (*csr_view)(const void *impl, kr_csr_view *v);
    /* Y = A X for k columns at once (SpMM): X is ncols x k and Y nrows x k,
     * both row-major (row i's k values contiguous), Y overwritten. NULL
     * where the format has none: kr_matrix_apply_multi then refuses. */
    kr_status (*apply_multi)(kr_ctx *ctx, void *impl, int32_t k,
                             const double *X, double *Y);
    /* KR_BUILD_DEVICE (GPU tables only): builds the same layout as build,
     * entry for entry, by kernels from A's CSR in device memory. A stays
     * valid and unchanged until impl is destroyed (the kr_matrix owns it;
     * a format may point into it). NULL: the host build is used. */
    kr_status (*build_device)(kr_ctx *ctx, const kr_csr_view *A, void **impl);
    /* The layout's device arrays, for tests that compare a device build
     * with a host build: fills at most max entries, returns how many. */
    int (*arrays)(const void *impl, kr_dev_array *out, int max);
    /* CG's direction and mat-vec in one pass, for the iterations with
     * their scalars in backend memory (solver/cg.c): with beta = s->beta,
     * pn = z + beta p and q = A pn, then kr_cg_dev_alpha(s, pn.q); nothing
     * once s->h.stop is set. pn may alias neither z nor p. Optional, and
     * only where cg_dir_ok(impl) says 1 (e.g. not over PELLR's tiles). */
    int (*cg_dir_ok)(const void *impl);
    kr_status (*cg_dir_apply)(kr_ctx *ctx, void *impl, const double *z,
                              const double *p, double *pn, double *q,
                              struct kr_cg_dev *s);
    /* IDR(s)'s mat-vec with the projection that follows it, for the
     * iterations with their scalars in backend memory (solver/idr.c): y =
     * A x, then for k = 0 M(:,0) = P^T y and kr_idr_dev_orth (the
     * backend's idr_orth of step 0), for 0 < k < st->s h = P(:,0:k)^T y
     * and kr_idr_dev_h (its idr_h), for k = st->s kr_idr_dev_omega(st,
     * y.r, y.y) (its idr_omega); nothing once st->h.stop is set. y may
     * alias none of x, P and r. Optional, and only where idr_dots_ok(impl)
     * says 1. */
    int (*idr_dots_ok)(const void *impl);
    kr_status (*idr_dots_apply)(kr_ctx *ctx, void *impl, int k, const double *x,
                                double *y, const double *P, const double *r,
                                struct kr_idr_dev *st);
    /* GMRES's scaling, preconditioner, mat-vec and first Gram-Schmidt
     * projection in one pass, for the steps with their scalars in backend
     * memory (solver/gmres.c): see kr_gm_dir. Optional, and only where
     * gm_dir_ok(impl) says 1. */
    int (*gm_dir_ok)(const void *impl);
    kr_status (*gm_dir_apply)(kr_ctx *ctx, void *impl,
                              const struct kr_gm_dir *g);
} kr_format_ops;

typedef struct kr_format_entry {
    const char *name;
    const char *summary;                /* one line for --help              */
    const kr_format_ops *cpu;           /* CPU implementation               */
    const kr_format_ops *(*cuda)(void); /* CUDA implementation or NULL */
} kr_format_entry;

/* Looks a format up by name; NULL if unknown. */
const kr_format_entry *kr_format_find(const char *name);
/* The named format's table for ctx's backend; NULL if the name is unknown
 * or the format has no implementation there. */
const kr_format_ops *kr_format_backend_ops(const kr_ctx *ctx, const char *name);

struct kr_matrix {
    kr_ctx *ctx;
    const kr_format_ops *ops;
    void *impl;
    int32_t nrows, ncols, nnz;
    double build_seconds;
    const char *requested; /* the format's name; NULL: ops->name */
    uint64_t pattern; /* fingerprint of rowptr and colind (update_values) */
    /* KR_BUILD_DEVICE: the uploaded CSR the format was built from (owned;
     * rowptr NULL otherwise) and the seconds its upload took. */
    kr_csr_view dev;
    double upload_seconds;
    int pattern_later;        /* a device build: pattern not hashed yet */
    int host_checked;         /* 0: a device build checks A's rows on the GPU */
    char permute_reason[512]; /* permute "auto": the model's path; else "" */
    char format_reason[600];  /* format "auto" picked by the model; else "" */
    /* The longest row's entries and the rows longer than
     * KR_PERSIST_MAX_SKEW times the mean, where the persistent ops may run
     * (nrows <= KR_PERSIST_MAX_ROWS: they need rows of similar lengths,
     * kr_dev_persists), else -1: unknown. */
    int32_t longest_row, long_rows;
};

/* kr_matrix_csr_view without an error message: 1 and *v filled when M
 * holds its CSR in backend memory (its format's own arrays, or the CSR a
 * device build kept), else 0. */
int kr_matrix_backend_csr(const kr_matrix *M, kr_csr_view *v);
/* 1 for a kr_matrix_create_user operator (spmv/user.c). */
int kr_matrix_is_user(const kr_matrix *M);
/* A fingerprint of A's sizes, rowptr and colind. */
uint64_t kr_csr_pattern_hash(const kr_csr *A);
/* Builds the format M runs for new values on M's pattern: in place when
 * the format can, else a new build replacing the old one. */
kr_status kr_format_update_values(kr_ctx *ctx, const kr_format_ops *ops,
                                  void **impl, const kr_csr *A);

/* The formats with kernels of their own, one line each, in the order of
 * kr_format_names(): X(name, summary) for the tables kr_<name>_cpu_ops
 * (spmv/<name>.c) and kr_<name>_cuda_ops() (spmv/<name>.cu, or NULL from
 * spmv/cuda_stubs.c in a build without CUDA). auto and auto-probe, which
 * delegate, follow them in spmv/registry.c. */
#define KR_FORMAT_LIST(X)                                                      \
    X(csr, "compressed sparse rows (cuSPARSE on the GPU); the baseline")       \
    X(ellr, "ELLPACK-R: rows padded to the longest, column-major")             \
    X(pellr, "permuted ELLPACK-R: rows sorted by length, per-warp widths")     \
    X(vsr, "vectorized segment reduction: fixed nonzeros per warp (skew)")     \
    X(hyb, "ELL part of width K plus a COO remainder (segment-reduced)")

#define KR_DECLARE_FORMAT(name, summary)                                       \
    extern const kr_format_ops kr_##name##_cpu_ops;                            \
    const kr_format_ops *kr_##name##_cuda_ops(void);
KR_FORMAT_LIST(KR_DECLARE_FORMAT)
#undef KR_DECLARE_FORMAT
/* auto and auto-probe (spmv/auto.c): one table each for both backends, as
 * they only delegate to the format they pick. */
extern const kr_format_ops kr_auto_ops;
extern const kr_format_ops kr_auto_probe_ops;
const kr_format_ops *kr_auto_cuda_ops(void);
const kr_format_ops *kr_auto_probe_cuda_ops(void);

/* The largest I-node group of the CPU CSR format (rows). */
#define KR_INODE_MAX 6

/* The CPU CSR format's I-node groups (consecutive rows with one column
 * pattern, KR_INODE_MAX rows at most): how many, and the rows in them;
 * impl is a kr_matrix's impl built by kr_csr_cpu_ops. */
void kr_csr_cpu_inodes(const void *impl, int32_t *groups, int32_t *rows);

/* The CPU CSR kernel's AVX copy: on = 0 turns it off, 1 allows it again
 * (used when the CPU supports AVX), -1 leaves it; returns 1 when the AVX
 * copy runs. For tests, which compare both copies; not thread-safe. */
int kr_csr_cpu_use_avx(int on);
/* Its software prefetch: -1 for matrices that do not fit in caches (the
 * default), 0 never, 1 always. For tests; not thread-safe. */
void kr_csr_cpu_prefetch(int mode);

#ifdef __cplusplus
}
#endif

#endif
