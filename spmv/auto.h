/* Automatic format selection: the cheap features of a host CSR (the
 * feature set of Mehrabi et al.: n, nnz, row-length mean, standard
 * deviation and maximum), the rules that map them to a format on the GPU,
 * and the short timed probe of close candidates. The library reaches it
 * through the formats "auto" and "auto-probe" (spmv/auto.c); the pieces
 * are here so that tests can check each one on a machine without a GPU. */
#ifndef KR_SPMV_AUTO_H
#define KR_SPMV_AUTO_H

#include "core/ctx.h"
#include "spmv/format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kr_auto_features {
    int32_t n, nnz;
    int32_t max;      /* longest row                                      */
    double mean, std; /* row length                                       */
    int hyb_full;     /* HYB's width rule takes the longest row (a third of
                         the rows or more are that long): HYB has no COO
                         remainder and is a single ELL kernel            */
} kr_auto_features;

/* O(nrows + longest row). */
kr_status kr_auto_features_of(kr_ctx *ctx, const kr_csr *A,
                              kr_auto_features *f);
/* The same features of a CSR in device memory, by reductions and a sort
 * of the row lengths on the GPU (spmv/devbuild.cu); equal to the host's. */
kr_status kr_auto_features_of_dev(kr_ctx *ctx, const kr_csr_view *A,
                                  kr_auto_features *f);

#define KR_AUTO_WHY_LEN 320

typedef struct kr_auto_choice {
    const char *format; /* the rules' pick                               */
    const char *rival;  /* a close second a probe should time, or NULL   */
    char why[KR_AUTO_WHY_LEN];
} kr_auto_choice;

/* The rules for the CUDA backend (thresholds and their evidence in
 * spmv/auto.c). Picks only formats that never refuse a matrix. */
void kr_auto_rule_gpu(const kr_auto_features *f, kr_auto_choice *c);

/* Probes are only run up to this many nonzeros: building three formats
 * of 1M nonzeros takes tens of milliseconds (the H100 build times of bench
 * spmv), a fair price for a solve; far more is not. */
#define KR_AUTO_PROBE_MAX_NNZ (1 << 20)

/* Builds each of the n candidate formats on ctx, times a few applications
 * of each (the backend's time_runs), keeps the fastest in *ops / *impl and
 * frees the others. A candidate that refuses the matrix or fails to build
 * is skipped (median_s[i] = NAN); KR_ERR_UNSUPPORTED when all are. */
kr_status kr_auto_probe(kr_ctx *ctx, const kr_csr *A, const char *const *cands,
                        int n, double *median_s, const kr_format_ops **ops,
                        void **impl);

/* What the build of "auto" (probe = 0) or "auto-probe" (1) does once the
 * rules chose c: the data for kr_auto_ops / kr_auto_probe_ops. A pick that
 * fails to build falls back to csr, saying so in the reason. */
kr_status kr_auto_build_choice(kr_ctx *ctx, const kr_csr *A,
                               const kr_auto_choice *c, int probe, void **impl);

#ifdef __cplusplus
}
#endif

#endif
