/* The formats "auto" and "auto-probe": build picks a concrete format from
 * the matrix's cheap features (and, for auto-probe, times close
 * candidates), builds it, and every other call is passed on to it. Both
 * tables serve both backends, as nothing here touches device data except
 * through the picked format and the backend's own kernels.
 *
 * The GPU rules come from bench spmv on an H100 (bench/results/
 * gpu-spmv-2026-11-22.md, 30 SuiteSparse matrices and three large
 * generated ones). What the timings show, and the kernels explain:
 *   - PELLR (a thread per row, rows sorted by length, one launch) is the
 *     fastest or within 10% of it on every matrix whose rows are even
 *     (longest <= 6.6x the mean there) and short (mean < 30), but for two
 *     where HYB wins (below): 22 matrices, the 27-point stencil included.
 *   - Skewed rows (longest 13.9x to 4615x the mean: bcsstk08, bcsstk38,
 *     memplus, orani678, hangGlider_2, adder_dcop_32, power-law) make
 *     PELLR's warps of long rows lag or split into a second kernel (0.55x
 *     to 0.77x of VSR on the large ones); VSR, a fixed 256 nonzeros per
 *     warp, is best or within 1% of the best on all seven.
 *   - Long rows (mean 59, bcsstk16) over few rows (4884): a thread per row
 *     walked ~60 entries serially while most of the GPU idled (VSR 1.21x
 *     cuSPARSE, PELLR 1.01x). Since PELLR shares each slice of a small
 *     matrix among up to 8 warps (spmv/pellr.cu), it is the faster there:
 *     on an H200 (gpu-spmv-h200-2026-11-27.md) bcsstk16 8.0 against VSR's
 *     10.3 us, bcsstk14 6.5 against 9.7, cavity10 7.0 against 9.7, and
 *     crystm01, whose uniform rows went to HYB, 5.5 against 6.3.
 *   - HYB is best where a third of the rows or more are as long as the
 *     longest (over few rows, only where they are too short for PELLR to
 *     split: olm1000, mean 4, 4.3 against 5.3 us on the H200): its ELL
 *     part then holds every entry and it is one kernel
 *     without lengths or permutation (7-point stencil 1.49x vs PELLR
 *     1.31x; crystm01 1.75x vs 1.55x), and within 4% on the three others
 *     (olm1000, rdb3200l, 27-point stencil), whose padding or size made
 *     PELLR slightly better. With a COO remainder HYB adds VSR's launches
 *     and is never best.
 *   - ELLR is never needed: where it wins (sherman1, sherman3) PELLR is
 *     within 7%, and ELLR refuses uneven matrices.
 * The standard deviation is reported but decides nothing: PELLR's sort
 * makes a spread of lengths cheap; the longest rows are what hurt it. */
#include "spmv/auto.h"

#include "core/error.h"
#include "core/median.h"
#include "spmv/devbuild.h"
#include "spmv/hyb.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest row over mean row length above which rows count as skewed
 * (VSR): between the largest ratio where PELLR won (6.6, add32) and the
 * smallest where it lost by more than 10% (13.9, bcsstk38). */
#define AUTO_SKEW 8.0
/* Fewer rows than this leave an H100 (132 SMs x 2048 threads) more than
 * half idle at one thread per row: per-thread latency, not bytes, then
 * bounds PELLR and HYB. */
#define AUTO_FEW_ROWS 131072
/* Mean row length at or above which few rows go to VSR: a row of a full
 * warp's width or more is better shared by a warp than walked by one
 * thread (bcsstk16 at 59: VSR 1.21x vs 1.01x; 29-35: within 4%). */
#define AUTO_LONG_MEAN 32.0
/* HYB's padding (longest / mean) allowed over few rows, where it costs
 * latency rather than bytes: crystm01 (1.25) and olm1000 (1.50) held. */
#define AUTO_HYB_PAD 1.5
/* Over few rows HYB only for rows shorter than this mean: from it on
 * PELLR splits its slices among warps (PELLR_SPLIT_MIN_STEPS * 2 * 2 in
 * spmv/pellr.cu: a second split) and wins (crystm01 at 21.6). */
#define AUTO_SPLIT_MEAN 8.0
/* Over many rows the time is bytes: HYB's padding, 12 B x (longest -
 * mean) per row, must stay under half of what PELLR reads besides the
 * nonzeros, 8 B per row (length and permutation). Half, because the byte
 * count alone misjudged the 27-point stencil (5.9 B: HYB 2% slower) by a
 * few per cent; the 7-point one (0.4 B) gave HYB 14%. */
#define AUTO_PELLR_ROW_BYTES 8.0
#define AUTO_HYB_ROW_BYTES (AUTO_PELLR_ROW_BYTES / 2)
/* A feature within this factor of its threshold makes the rules unsure:
 * auto-probe then times the rival too. */
#define AUTO_NEAR 1.5
/* Probe: untimed, then timed applications of each candidate. */
#define AUTO_PROBE_WARMUP 3
#define AUTO_PROBE_REPS 15

#define AUTO_REASON_LEN 640

typedef struct auto_impl {
    const kr_format_ops *ops; /* the picked format, for ctx's backend */
    void *impl;               /* its data                              */
    char reason[AUTO_REASON_LEN];
} auto_impl;

static void features_from(int32_t n, int32_t nnz, const kr_row_stats *s,
                          int32_t K, kr_auto_features *f)
{
    f->n = n;
    f->nnz = nnz;
    f->max = s->max;
    f->mean = s->mean;
    f->std = s->stddev;
    f->hyb_full = nnz > 0 && K == s->max;
}

kr_status kr_auto_features_of(kr_ctx *ctx, const kr_csr *A, kr_auto_features *f)
{
    kr_row_stats s;
    kr_csr_row_stats(A, &s);
    int32_t K = 0;
    KR_TRY(kr_hyb_width(ctx, A, &K));
    features_from(A->nrows, A->nnz, &s, K, f);
    return KR_OK;
}

kr_status kr_auto_features_of_dev(kr_ctx *ctx, const kr_csr_view *A,
                                  kr_auto_features *f)
{
    kr_row_stats s;
    KR_TRY(kr_dev_row_stats(ctx, A, &s));
    int32_t K = 0;
    KR_TRY(kr_dev_hyb_width(ctx, A, &K));
    features_from(A->nrows, A->nnz, &s, K, f);
    return KR_OK;
}

/* Appends to the string in buf (printf-style), cut at len. */
static void cat(char *buf, size_t len, const char *fmt, ...)
    KR_PRINTF_LIKE(3, 4);

static void cat(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ the rules */

static int near(double v, double threshold)
{
    return v > threshold / AUTO_NEAR && v < threshold * AUTO_NEAR;
}

static double skew_of(const kr_auto_features *f) { return f->max / f->mean; }

static int few_rows(const kr_auto_features *f) { return f->n < AUTO_FEW_ROWS; }

static void pick(kr_auto_choice *c, const char *format, const char *rival)
{
    c->format = format;
    c->rival = rival;
}

static int hyb_fits(const kr_auto_features *f)
{
    if (!f->hyb_full) return 0;
    if (few_rows(f))
        return f->max <= AUTO_HYB_PAD * f->mean && f->mean < AUTO_SPLIT_MEAN;
    return 12.0 * (f->max - f->mean) < AUTO_HYB_ROW_BYTES;
}

static void rule_skewed(const kr_auto_features *f, kr_auto_choice *c)
{
    pick(c, "vsr", near(skew_of(f), AUTO_SKEW) ? "pellr" : NULL);
    snprintf(c->why, sizeof c->why,
             "skewed rows: the longest, %d, is %.1fx the mean %.2f (> %.0fx); "
             "VSR gives every warp 256 nonzeros whatever the rows",
             (int)f->max, skew_of(f), f->mean, AUTO_SKEW);
}

static void rule_uniform(const kr_auto_features *f, kr_auto_choice *c)
{
    pick(c, "hyb", "pellr");
    cat(c->why, sizeof c->why,
        "uniform rows: a third or more are as long as the longest, %d, so "
        "HYB is one ELL kernel; ",
        (int)f->max);
    if (few_rows(f))
        cat(c->why, sizeof c->why,
            "padding %.2f <= %.1f over %d rows (latency-bound) of mean %.2f "
            "< %.0f, too short for PELLR to split",
            skew_of(f), AUTO_HYB_PAD, (int)f->n, f->mean, AUTO_SPLIT_MEAN);
    else
        cat(c->why, sizeof c->why,
            "its padding, %.1f B per row, is under half of PELLR's %.0f B of "
            "lengths and permutation",
            12.0 * (f->max - f->mean), AUTO_PELLR_ROW_BYTES);
}

static void rule_long_rows(const kr_auto_features *f, kr_auto_choice *c)
{
    pick(c, "pellr", "vsr");
    snprintf(c->why, sizeof c->why,
             "long rows (mean %.2f >= %.0f) over few rows (%d < %d): PELLR "
             "shares each slice of 32 sorted rows among up to 8 warps, so "
             "long rows do not leave the GPU idle",
             f->mean, AUTO_LONG_MEAN, (int)f->n, AUTO_FEW_ROWS);
}

/* PELLR's rival: VSR near the skew or row-length thresholds (or for long
 * rows over many rows, untested), else HYB when it is one kernel. */
static const char *pellr_rival(const kr_auto_features *f)
{
    int long_rows =
        few_rows(f) ? near(f->mean, AUTO_LONG_MEAN) : f->mean >= AUTO_LONG_MEAN;
    if (near(skew_of(f), AUTO_SKEW) || long_rows) return "vsr";
    return f->hyb_full ? "hyb" : NULL;
}

static void rule_even(const kr_auto_features *f, kr_auto_choice *c)
{
    pick(c, "pellr", pellr_rival(f));
    cat(c->why, sizeof c->why,
        "even rows: the longest, %d, is %.1fx the mean %.2f (<= %.0fx), ",
        (int)f->max, skew_of(f), f->mean, AUTO_SKEW);
    if (few_rows(f))
        cat(c->why, sizeof c->why, "and short (mean < %.0f)", AUTO_LONG_MEAN);
    else
        cat(c->why, sizeof c->why, "over %d rows that fill the GPU", (int)f->n);
    cat(c->why, sizeof c->why,
        ": PELLR's sorted rows fill its warps, in one launch");
}

void kr_auto_rule_gpu(const kr_auto_features *f, kr_auto_choice *c)
{
    memset(c, 0, sizeof *c);
    if (f->nnz == 0) {
        pick(c, "csr", NULL);
        snprintf(c->why, sizeof c->why, "no nonzeros");
    } else if (skew_of(f) > AUTO_SKEW) {
        rule_skewed(f, c);
    } else if (few_rows(f) && f->mean >= AUTO_LONG_MEAN) {
        rule_long_rows(f, c); /* HYB would walk long rows serially */
    } else if (hyb_fits(f)) {
        rule_uniform(f, c);
    } else {
        rule_even(f, c);
    }
}

/* The CPU backend's csr kernel is the tuned one (four rows at a time,
 * OpenMP) and adds each row in PETSc's order, which keeps iteration counts
 * equal to PETSc's; the other formats' CPU kernels are references. bench
 * spmv --device cpu --threads 1 (the shared matrices and three generated
 * ones): geometric means vsr 0.91x, pellr 0.70x, hyb 0.51x, ellr 0.46x of
 * csr. Only power-law rows went the other way (vsr 1.17x, hyb up to 1.5x
 * on smaller ones): csr's one running sum per row is a chain of dependent
 * adds on a long row. That is accepted for PETSc's order. */
static void rule_cpu(kr_auto_choice *c)
{
    memset(c, 0, sizeof *c);
    pick(c, "csr", NULL);
    snprintf(c->why, sizeof c->why,
             "CPU backend: csr is its tuned kernel and adds rows in PETSc's "
             "order; the other formats' CPU kernels are references (0.46x to "
             "0.91x of csr)");
}

/* ------------------------------------------------------------ the probe */

typedef struct probe_run {
    kr_ctx *ctx;
    const kr_format_ops *ops;
    void *impl;
    const double *x;
    double *y;
} probe_run;

static kr_status probe_apply(void *arg)
{
    probe_run *p = arg;
    return p->ops->apply(p->ctx, p->impl, 1.0, p->x, 0.0, p->y);
}

static kr_status probe_time(probe_run *p, double *median_s)
{
    double t[AUTO_PROBE_REPS], min_s;
    for (int i = 0; i < AUTO_PROBE_WARMUP; i++)
        KR_TRY(probe_apply(p));
    KR_TRY(p->ctx->ops->time_runs(p->ctx, probe_apply, p, AUTO_PROBE_REPS, t));
    kr_median_min(t, AUTO_PROBE_REPS, median_s, &min_s);
    return KR_OK;
}

/* x (random, as values do not change the time) and y on the backend. */
static kr_status probe_vectors(kr_ctx *ctx, const kr_csr *A, probe_run *p)
{
    double *x = NULL, *y = NULL;
    size_t nx = (size_t)A->ncols + 1, ny = (size_t)A->nrows + 1;
    kr_status st = ctx->ops->alloc(ctx, (void **)&x, nx * sizeof *x);
    if (st == KR_OK) st = ctx->ops->alloc(ctx, (void **)&y, ny * sizeof *y);
    if (st == KR_OK) st = ctx->ops->fill_random(ctx, A->ncols, 7, x);
    p->x = x;
    p->y = y;
    return st;
}

static void probe_vectors_free(kr_ctx *ctx, probe_run *p)
{
    ctx->ops->release(ctx, (void *)p->x);
    ctx->ops->release(ctx, p->y);
}

/* Candidate i: built and timed, kept in *best if faster than it. A build
 * that fails is a skip; a failing run ends the probe. */
static kr_status probe_one(probe_run *p, const kr_csr *A, const char *name,
                           double *median_s, probe_run *best, double *best_s)
{
    *median_s = NAN;
    p->ops = kr_format_backend_ops(p->ctx, name);
    if (!p->ops || p->ops->build(p->ctx, A, &p->impl) != KR_OK) return KR_OK;
    kr_status st = probe_time(p, median_s);
    if (st == KR_OK && (!best->ops || *median_s < *best_s)) {
        if (best->ops) best->ops->destroy(p->ctx, best->impl);
        *best = *p, *best_s = *median_s;
    } else {
        p->ops->destroy(p->ctx, p->impl);
    }
    return st;
}

kr_status kr_auto_probe(kr_ctx *ctx, const kr_csr *A, const char *const *cands,
                        int n, double *median_s, const kr_format_ops **ops,
                        void **impl)
{
    probe_run p = {.ctx = ctx}, best = {.ctx = ctx};
    double best_s = INFINITY;
    kr_status st = probe_vectors(ctx, A, &p);
    for (int i = 0; i < n; i++)
        median_s[i] = NAN;
    for (int i = 0; i < n && st == KR_OK; i++)
        st = probe_one(&p, A, cands[i], &median_s[i], &best, &best_s);
    probe_vectors_free(ctx, &p);
    if (st == KR_OK && !best.ops)
        st = kr_fail(ctx, KR_ERR_UNSUPPORTED,
                     "auto: none of the %d probed formats could be built", n);
    if (st != KR_OK && best.ops) best.ops->destroy(ctx, best.impl);
    if (st != KR_OK) return st;
    *ops = best.ops;
    *impl = best.impl;
    return KR_OK;
}

/* --------------------------------------------------------------- build */

static kr_status choose(kr_ctx *ctx, const kr_csr *A, kr_auto_choice *c)
{
    if (ctx->device != KR_DEVICE_CUDA) {
        rule_cpu(c);
        return KR_OK;
    }
    kr_auto_features f;
    KR_TRY(kr_auto_features_of(ctx, A, &f));
    kr_auto_rule_gpu(&f, c);
    return KR_OK;
}

/* "; probe medians pellr 7.80 us, vsr 10.21 us, csr n/a" */
static void append_probe(char *buf, size_t len, const char *const *cands,
                         const double *t, int n)
{
    for (int i = 0; i < n; i++) {
        cat(buf, len, "%s%s ", i ? ", " : "; probe medians ", cands[i]);
        if (isnan(t[i]))
            cat(buf, len, "n/a");
        else
            cat(buf, len, "%.2f us", t[i] * 1e6);
    }
}

/* The rules' pick, its rival, and csr (the baseline), each once. */
static int probe_candidates(const kr_auto_choice *c, const char **cands)
{
    int n = 0;
    cands[n++] = c->format;
    if (c->rival) cands[n++] = c->rival;
    if (strcmp(c->format, "csr") != 0) cands[n++] = "csr";
    return n;
}

static kr_status build_probed(kr_ctx *ctx, const kr_csr *A,
                              const kr_auto_choice *c, auto_impl *a)
{
    const char *cands[3];
    double t[3];
    int n = probe_candidates(c, cands);
    KR_TRY(kr_auto_probe(ctx, A, cands, n, t, &a->ops, &a->impl));
    cat(a->reason, sizeof a->reason, "auto-probe: %s (the rules said %s: %s",
        a->ops->name, c->format, c->why);
    append_probe(a->reason, sizeof a->reason, cands, t, n);
    cat(a->reason, sizeof a->reason, ")");
    return KR_OK;
}

/* Why auto-probe runs no probe, or NULL when it should run one. */
static const char *no_probe(const kr_ctx *ctx, const kr_csr *A,
                            const kr_auto_choice *c)
{
    if (ctx->device != KR_DEVICE_CUDA) return "no probe on the CPU";
    if (!c->rival) return "no probe: the rules are clear";
    if (A->nnz > KR_AUTO_PROBE_MAX_NNZ) return "no probe: too many nonzeros";
    return NULL;
}

/* What auto builds from: host CSR, or (a device build) CSR in device
 * memory. */
typedef struct auto_src {
    const kr_csr *A;
    const kr_csr_view *dev;
} auto_src;

static kr_status build_named(kr_ctx *ctx, const auto_src *src,
                             const char *format, auto_impl *a)
{
    a->ops = kr_format_backend_ops(ctx, format);
    if (!a->ops || (src->dev && !a->ops->build_device))
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "auto: format '%s' has no %s on %s", format,
                       a->ops ? "device build" : "implementation",
                       ctx->device_name);
    if (src->dev) return a->ops->build_device(ctx, src->dev, &a->impl);
    return a->ops->build(ctx, src->A, &a->impl);
}

/* The rules' pick; when it fails to build (a refusal, or the memory its
 * padding needs) csr, which stores exactly the nonzeros and refuses no
 * matrix, takes over, so auto fails only where csr fails. A device error
 * is not retried: the device may be unusable. */
static kr_status build_ruled(kr_ctx *ctx, const auto_src *src,
                             const kr_auto_choice *c, const char *name,
                             const char *note, auto_impl *a)
{
    kr_status st = build_named(ctx, src, c->format, a);
    if (st == KR_OK || st == KR_ERR_DEVICE || !strcmp(c->format, "csr")) {
        cat(a->reason, sizeof a->reason, "%s: %s (%s%s%s)", name, c->format,
            c->why, note ? "; " : "", note ? note : "");
        return st;
    }
    cat(a->reason, sizeof a->reason,
        "%s: csr (the rules said %s: %s; it failed, %s: %s)", name, c->format,
        c->why, kr_status_name(st), kr_ctx_error(ctx));
    return build_named(ctx, src, "csr", a);
}

kr_status kr_auto_build_choice(kr_ctx *ctx, const kr_csr *A,
                               const kr_auto_choice *c, int probe, void **out)
{
    auto_impl *a = calloc(1, sizeof *a);
    if (!a) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    const char *name = probe ? "auto-probe" : "auto";
    const char *skip = probe ? no_probe(ctx, A, c) : NULL;
    kr_status st = KR_OK;
    const auto_src src = {A, NULL};
    if (probe && !skip) st = build_probed(ctx, A, c, a);
    if (st == KR_OK && !a->ops) st = build_ruled(ctx, &src, c, name, skip, a);
    if (st != KR_OK) {
        free(a);
        return st;
    }
    *out = a;
    return KR_OK;
}

static kr_status auto_build_with(kr_ctx *ctx, const kr_csr *A, int probe,
                                 void **out)
{
    kr_auto_choice c;
    KR_TRY(choose(ctx, A, &c));
    return kr_auto_build_choice(ctx, A, &c, probe, out);
}

static kr_status auto_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    return auto_build_with(ctx, A, 0, out);
}

static kr_status auto_probe_build(kr_ctx *ctx, const kr_csr *A, void **out)
{
    return auto_build_with(ctx, A, 1, out);
}

/* KR_BUILD_DEVICE: the features by reductions over the device CSR (no
 * host pass), the same rules, the pick built on the device. auto-probe
 * has no device build: its probe builds candidates from host CSR. */
static kr_status auto_build_device(kr_ctx *ctx, const kr_csr_view *A,
                                   void **out)
{
    kr_auto_features f;
    KR_TRY(kr_auto_features_of_dev(ctx, A, &f));
    kr_auto_choice c;
    kr_auto_rule_gpu(&f, &c);
    auto_impl *a = calloc(1, sizeof *a);
    if (!a) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    const auto_src src = {NULL, A};
    kr_status st = build_ruled(ctx, &src, &c, "auto", NULL, a);
    if (st != KR_OK) {
        free(a);
        return st;
    }
    *out = a;
    return KR_OK;
}

static int auto_arrays(const void *impl, kr_dev_array *out, int max)
{
    const auto_impl *a = impl;
    return a->ops->arrays ? a->ops->arrays(a->impl, out, max) : 0;
}

/* ---------------------------------------------- passed on to the pick */

static kr_status auto_apply(kr_ctx *ctx, void *impl, double alpha,
                            const double *x, double beta, double *y)
{
    auto_impl *a = impl;
    return a->ops->apply(ctx, a->impl, alpha, x, beta, y);
}

static int auto_cg_dir_ok(const void *impl)
{
    const auto_impl *a = impl;
    return a->ops->cg_dir_ok && a->ops->cg_dir_ok(a->impl);
}

static kr_status auto_cg_dir_apply(kr_ctx *ctx, void *impl, const double *z,
                                   const double *p, double *pn, double *q,
                                   struct kr_cg_dev *s)
{
    auto_impl *a = impl;
    return a->ops->cg_dir_apply(ctx, a->impl, z, p, pn, q, s);
}

static int auto_idr_dots_ok(const void *impl)
{
    const auto_impl *a = impl;
    return a->ops->idr_dots_ok && a->ops->idr_dots_ok(a->impl);
}

static kr_status auto_idr_dots_apply(kr_ctx *ctx, void *impl, int k,
                                     const double *x, double *y,
                                     const double *P, const double *r,
                                     struct kr_idr_dev *st)
{
    auto_impl *a = impl;
    return a->ops->idr_dots_apply(ctx, a->impl, k, x, y, P, r, st);
}

static int auto_gm_dir_ok(const void *impl)
{
    const auto_impl *a = impl;
    return a->ops->gm_dir_ok && a->ops->gm_dir_ok(a->impl);
}

static kr_status auto_gm_dir_apply(kr_ctx *ctx, void *impl, const kr_gm_dir *g)
{
    auto_impl *a = impl;
    return a->ops->gm_dir_apply(ctx, a->impl, g);
}

static size_t auto_bytes(const void *impl)
{
    const auto_impl *a = impl;
    return a->ops->bytes(a->impl);
}

static int64_t auto_stored(const void *impl)
{
    const auto_impl *a = impl;
    return a->ops->stored(a->impl);
}

static void auto_destroy(kr_ctx *ctx, void *impl)
{
    auto_impl *a = impl;
    if (!a) return;
    a->ops->destroy(ctx, a->impl);
    free(a);
}

/* the pick stays: only its values change */
static kr_status auto_update_values(kr_ctx *ctx, void *impl, const kr_csr *A)
{
    auto_impl *a = impl;
    return kr_format_update_values(ctx, a->ops, &a->impl, A);
}

static int auto_csr_view(const void *impl, kr_csr_view *v)
{
    const auto_impl *a = impl;
    return a->ops->csr_view ? a->ops->csr_view(a->impl, v) : 0;
}

static kr_status auto_apply_multi(kr_ctx *ctx, void *impl, int32_t k,
                                  const double *X, double *Y)
{
    auto_impl *a = impl;
    if (!a->ops->apply_multi)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "format %s (picked by auto) has no multi-column "
                       "kernel on this backend",
                       a->ops->name);
    return a->ops->apply_multi(ctx, a->impl, k, X, Y);
}

static const char *auto_chosen(const void *impl)
{
    return ((const auto_impl *)impl)->ops->name;
}

static const char *auto_reason(const void *impl)
{
    return ((const auto_impl *)impl)->reason;
}

/* What auto and auto-probe both pass on to the format they chose. */
#define AUTO_FORWARDS                                                          \
    .arrays = auto_arrays, .apply = auto_apply, .bytes = auto_bytes,           \
    .destroy = auto_destroy, .stored = auto_stored, .chosen = auto_chosen,     \
    .reason = auto_reason, .update_values = auto_update_values,                \
    .csr_view = auto_csr_view, .apply_multi = auto_apply_multi,                \
    .cg_dir_ok = auto_cg_dir_ok, .cg_dir_apply = auto_cg_dir_apply,            \
    .idr_dots_ok = auto_idr_dots_ok, .idr_dots_apply = auto_idr_dots_apply,    \
    .gm_dir_ok = auto_gm_dir_ok, .gm_dir_apply = auto_gm_dir_apply

const kr_format_ops kr_auto_ops = {
    .name = "auto",
    .build = auto_build,
    .build_device = auto_build_device,
    AUTO_FORWARDS,
};

const kr_format_ops kr_auto_probe_ops = {
    .name = "auto-probe",
    .build = auto_probe_build,
    AUTO_FORWARDS,
};

/* In a build without CUDA there is no CUDA backend to serve. */
const kr_format_ops *kr_auto_cuda_ops(void)
{
    return kr_built_with_cuda() ? &kr_auto_ops : NULL;
}

const kr_format_ops *kr_auto_probe_cuda_ops(void)
{
    return kr_built_with_cuda() ? &kr_auto_probe_ops : NULL;
}
