/* bench gje, part 2: the block-Jacobi stages on each matrix, through the
 * batched interface (precond/gje_batch.h) so each stage is timed alone:
 * supervariable blocking (host, wall clock), the pattern flags a device
 * blocking would start from, extraction + inversion, and the application
 * z = D^{-1} r with its effective bandwidth; next to them the csr format's
 * SpMV of the same block-diagonal matrix (cuSPARSE on the GPU), and the
 * whole setup through the public API (kr_precond_create_opts "bjacobi").
 * Results are checked on the host: the pattern flags against a plain loop,
 * a sample of inverses against the reference inversion (precond/gje.h),
 * and the applied z against the same inverses applied in double. */
#include "core/error.h"
#include "core/vec.h"
#include "precond/blocking.h"
#include "tools/bench/bench_gje.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One matrix while it runs. */
typedef struct mat_run {
    gje_run *r;
    gje_matrix_row *row;
    kr_csr A;        /* host                                          */
    kr_gje_csr dA;   /* A in backend memory                           */
    int32_t *starts; /* host, from the blocking                       */
    kr_gje_batch bb;
    unsigned char *flags; /* backend memory, n                         */
    double *inv;          /* backend memory, the inverses              */
    int32_t *info;        /* backend memory                            */
    double *h_inv;        /* host copies of inv and info               */
    int32_t *h_info;
    kr_vec *vr, *vz; /* r (bench_fill_x) and z                      */
} mat_run;

static kr_status nomem(kr_ctx *ctx)
{
    return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
}

/* ----------------------------------------------------------- stages */

/* Supervariable blocking on the host: the median of --reps wall-clock
 * runs; m->starts keeps the last partition. */
static kr_status time_blocking(mat_run *m)
{
    int reps = m->r->o->reps;
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) return nomem(m->r->ctx);
    kr_status st = KR_OK;
    for (int i = 0; st == KR_OK && i < reps; i++) {
        free(m->starts);
        m->starts = NULL;
        double t0 = kr_wtime();
        st = kr_blocking_supervariables(m->r->ctx, &m->A, m->r->o->block_size,
                                        &m->row->nb, &m->starts);
        t[i] = kr_wtime() - t0;
    }
    if (st == KR_OK) m->row->blocking_s = bench_median(t, reps);
    free(t);
    return st;
}

static kr_status upload_csr(mat_run *m)
{
    kr_ctx *ctx = m->r->ctx;
    const kr_csr *A = &m->A;
    m->dA = (kr_gje_csr){.nrows = A->nrows, .nnz = A->nnz};
    KR_TRY(kr_dev_upload_new(ctx, A->rowptr,
                             ((size_t)A->nrows + 1) * sizeof(int32_t),
                             (void **)&m->dA.rowptr));
    KR_TRY(kr_dev_upload_new(ctx, A->colind, (size_t)A->nnz * sizeof(int32_t),
                             (void **)&m->dA.colind));
    return kr_dev_upload_new(ctx, A->val, (size_t)A->nnz * sizeof(double),
                             (void **)&m->dA.val);
}

static kr_status run_flags(void *arg)
{
    mat_run *m = arg;
    return m->r->ops->pattern_flags(m->r->ctx, &m->dA, m->flags);
}

static kr_status run_extract(void *arg)
{
    mat_run *m = arg;
    return m->r->ops->extract_invert(m->r->ctx, &m->bb, &m->dA, m->inv,
                                     m->info);
}

static kr_status run_apply(void *arg)
{
    mat_run *m = arg;
    return m->r->ops->apply(m->r->ctx, &m->bb, m->inv, m->vr->data,
                            m->vz->data);
}

static kr_status alloc_stages(mat_run *m)
{
    kr_ctx *ctx = m->r->ctx;
    size_t n = (size_t)m->A.nrows;
    KR_TRY(ctx->ops->alloc(ctx, (void **)&m->flags, n + 1));
    KR_TRY(kr_gje_batch_create(ctx, m->row->nb, m->starts, &m->bb));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&m->inv,
                           (size_t)m->bb.total * sizeof(double)));
    KR_TRY(ctx->ops->alloc(ctx, (void **)&m->info,
                           (size_t)m->bb.nb * sizeof(int32_t)));
    KR_TRY(kr_vec_create(ctx, m->A.nrows, &m->vr));
    KR_TRY(kr_vec_create(ctx, m->A.nrows, &m->vz));
    double *x = malloc((n + 1) * sizeof *x);
    if (!x) return nomem(ctx);
    bench_fill_x(x, m->A.nrows);
    kr_status st = kr_vec_upload(m->vr, x);
    free(x);
    return st;
}

static kr_status time_stages(mat_run *m)
{
    gje_matrix_row *w = m->row;
    kr_ctx *ctx = m->r->ctx;
    int warm = m->r->o->warmup, reps = m->r->o->reps;
    double min;
    KR_TRY(time_blocking(m));
    KR_TRY(upload_csr(m));
    KR_TRY(alloc_stages(m));
    KR_TRY(gje_time(ctx, run_flags, m, warm, reps, &w->flags_s, &min));
    KR_TRY(gje_time(ctx, run_extract, m, warm, reps, &w->extract_s, &min));
    return gje_time(ctx, run_apply, m, warm, reps, &w->apply_s, &min);
}

/* ----------------------------------------------------------- checks */

static kr_status download_results(mat_run *m)
{
    kr_ctx *ctx = m->r->ctx;
    size_t total = (size_t)m->bb.total, nb = (size_t)m->bb.nb;
    m->h_inv = malloc((total + 1) * sizeof *m->h_inv);
    m->h_info = malloc((nb + 1) * sizeof *m->h_info);
    if (!m->h_inv || !m->h_info) return nomem(ctx);
    KR_TRY(ctx->ops->download(ctx, m->h_inv, m->inv, total * sizeof(double)));
    KR_TRY(ctx->ops->download(ctx, m->h_info, m->info, nb * sizeof(int32_t)));
    m->row->singular = 0;
    for (size_t b = 0; b < nb; b++)
        m->row->singular += m->h_info[b] != 0;
    return KR_OK;
}

/* 1 when row i's sorted column indices differ from row i-1's. */
static int new_pattern(const kr_csr *A, int32_t i)
{
    if (i == 0) return 1;
    int32_t a = A->rowptr[i - 1], b = A->rowptr[i], e = A->rowptr[i + 1];
    return b - a != e - b ||
           memcmp(A->colind + a, A->colind + b, (size_t)(e - b) * 4) != 0;
}

static kr_status check_flags(mat_run *m)
{
    kr_ctx *ctx = m->r->ctx;
    size_t n = (size_t)m->A.nrows;
    unsigned char *f = malloc(n + 1);
    if (!f) return nomem(ctx);
    kr_status st = ctx->ops->download(ctx, f, m->flags, n);
    m->row->flag_mismatch = 0;
    for (int32_t i = 0; st == KR_OK && i < m->A.nrows; i++)
        m->row->flag_mismatch += (f[i] != 0) != new_pattern(&m->A, i);
    free(f);
    return st;
}

/* Block b against the reference: its residual and the reference's (NaN
 * when either calls it singular); returns 1 when they disagree on that. */
static int check_block(const mat_run *m, int32_t b, double *res,
                       double *res_ref)
{
    double B[KR_GJE_MAX * KR_GJE_MAX], R[KR_GJE_MAX * KR_GJE_MAX];
    int32_t s = m->bb.h_starts[b], k = m->bb.h_starts[b + 1] - s;
    kr_gje_extract(&m->A, s, k, B, KR_GJE_COL_MAJOR);
    memcpy(R, B, (size_t)k * k * sizeof *R);
    int ref_bad = kr_gje_invert(k, R, KR_GJE_COL_MAJOR) != KR_OK;
    int bad = m->h_info[b] != 0;
    *res = *res_ref = NAN;
    if (!bad && !ref_bad) {
        *res = gje_residual(k, B, m->h_inv + m->bb.h_offs[b]);
        *res_ref = gje_residual(k, B, R);
    }
    return bad != ref_bad;
}

/* --check evenly spaced blocks (the first included). */
static void check_inverses(mat_run *m)
{
    gje_matrix_row *w = m->row;
    int32_t nb = m->bb.nb, n = m->r->o->check < nb ? m->r->o->check : nb;
    w->sampled = n;
    w->res = w->res_ref = NAN; /* until a block is checked */
    for (int32_t i = 0; i < n; i++) {
        double res, ref;
        w->singular_mismatch +=
            check_block(m, (int32_t)((int64_t)i * nb / n), &res, &ref);
        if (isnan(res)) continue;
        if (w->checked++ == 0 || res > w->res) w->res = res;
        if (isnan(w->res_ref) || ref > w->res_ref) w->res_ref = ref;
    }
}

/* z against the downloaded inverses applied on the host, over the rows of
 * the blocks that are not singular (their inverses are unspecified). */
static kr_status check_apply(mat_run *m)
{
    size_t n = (size_t)m->A.nrows;
    double *r = malloc((n + 1) * sizeof *r), *z = malloc((n + 1) * sizeof *z);
    kr_status st = r && z ? kr_vec_download(m->vz, z) : nomem(m->r->ctx);
    double diff = 0.0, scale = 0.0;
    if (st == KR_OK) bench_fill_x(r, m->A.nrows);
    for (int32_t b = 0; st == KR_OK && b < m->bb.nb; b++) {
        int32_t s = m->bb.h_starts[b], k = m->bb.h_starts[b + 1] - s;
        const double *D = m->h_inv + m->bb.h_offs[b];
        for (int32_t i = 0; !m->h_info[b] && i < k; i++) {
            double ref = 0.0;
            for (int32_t j = 0; j < k; j++)
                ref += D[i + (size_t)j * k] * r[s + j];
            double e = fabs(z[s + i] - ref);
            diff = isnan(e) || e > diff ? e : diff;
            scale = fmax(scale, fabs(ref));
        }
    }
    m->row->apply_diff = scale > 0 ? diff / scale : diff;
    free(r);
    free(z);
    return st;
}

/* ----------------------------------------- the generic SpMV and the API */

/* blockdiag(inverses) as host CSR, every entry of every block; singular
 * blocks (unspecified inverses) as the identity: only the time matters. */
static kr_status block_csr(mat_run *m, kr_csr *B)
{
    const kr_gje_batch *bb = &m->bb;
    KR_TRY(
        kr_csr_alloc(m->r->ctx, m->A.nrows, m->A.nrows, (int32_t)bb->total, B));
    for (int32_t b = 0; b < bb->nb; b++) {
        int32_t s = bb->h_starts[b], k = bb->h_starts[b + 1] - s;
        const double *D = m->h_inv + bb->h_offs[b];
        int64_t q = bb->h_offs[b];
        for (int32_t i = 0; i < k; i++) {
            for (int32_t j = 0; j < k; j++, q++) {
                B->colind[q] = s + j;
                B->val[q] = m->h_info[b] ? (double)(i == j) : D[i + j * k];
            }
            B->rowptr[s + i + 1] = (int32_t)q;
        }
    }
    return KR_OK;
}

static kr_status time_spmv(mat_run *m)
{
    gje_matrix_row *w = m->row;
    if (m->bb.total > INT32_MAX) {
        snprintf(w->note, sizeof w->note,
                 "SpMV skipped: %lld block entries "
                 "exceed 32-bit CSR",
                 (long long)m->bb.total);
        return KR_OK;
    }
    kr_csr B = {0};
    kr_matrix *M = NULL;
    double min;
    kr_status st = block_csr(m, &B);
    if (st == KR_OK) st = kr_matrix_create(m->r->ctx, &B, "csr", &M);
    if (st == KR_OK)
        st = bench_time_apply(M, m->vr, m->vz, m->r->o->warmup, m->r->o->reps,
                              &w->spmv_s, &min);
    kr_matrix_destroy(M);
    kr_csr_free(&B);
    return st;
}

/* The whole bjacobi setup as users get it (wall clock). The download
 * after it waits for any work it left queued on the device. */
static kr_status time_precond(mat_run *m)
{
    gje_matrix_row *w = m->row;
    kr_precond_options po;
    kr_precond_options_default(&po);
    po.block_size = m->r->o->block_size;
    kr_precond *P = NULL;
    double one, t0 = kr_wtime();
    kr_status st = kr_precond_create_opts(m->r->ctx, &m->A, "bjacobi", &po, &P);
    if (st == KR_OK)
        st = m->r->ctx->ops->download(m->r->ctx, &one, m->vr->data, sizeof one);
    w->precond_s = kr_wtime() - t0;
    if (st == KR_OK) {
        w->precond_nb = kr_precond_block_count(P);
        w->precond_singular = kr_precond_singular_blocks(P);
    }
    kr_precond_destroy(P);
    return st;
}

/* ---------------------------------------------------------- a matrix */

/* Appends "; " and the formatted text to the row's note. */
static void add_note(gje_matrix_row *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_note(gje_matrix_row *w, const char *fmt, ...)
{
    size_t used = strlen(w->note);
    if (used)
        used += (size_t)snprintf(w->note + used, sizeof w->note - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    if (used < sizeof w->note)
        vsnprintf(w->note + used, sizeof w->note - used, fmt, ap);
    va_end(ap);
}

static void verdict(gje_matrix_row *w)
{
    double tol = fmax(GJE_RESIDUAL_TOL, 100.0 * w->res_ref);
    int bad_res = w->checked > 0 && !(w->res <= tol);
    w->failed =
        w->flag_mismatch > 0 || bad_res || !(w->apply_diff <= GJE_APPLY_TOL);
    if (w->flag_mismatch)
        add_note(w, "FAIL: %d pattern flags wrong", (int)w->flag_mismatch);
    if (bad_res) add_note(w, "FAIL: residual %.3g > %.3g", w->res, tol);
    if (!(w->apply_diff <= GJE_APPLY_TOL))
        add_note(w, "FAIL: apply differs by %.3g (> %g)", w->apply_diff,
                 GJE_APPLY_TOL);
    if (w->singular_mismatch)
        add_note(w,
                 "%d sampled blocks singular by one of ours and the "
                 "reference only",
                 (int)w->singular_mismatch);
    if (w->precond_nb != w->nb)
        add_note(w, "bjacobi made %d blocks, the blocking %d",
                 (int)w->precond_nb, (int)w->nb);
    if (w->failed)
        fprintf(stderr, "warning: bench gje: %s: %s\n", w->item->name, w->note);
}

static void metrics(mat_run *m)
{
    gje_matrix_row *w = m->row;
    w->mean_k = (double)m->A.nrows / (m->bb.nb ? m->bb.nb : 1);
    w->max_k = m->bb.max_k;
    w->apply_bytes = 8.0 * (double)m->bb.total + 16.0 * m->A.nrows +
                     12.0 * ((double)m->bb.nb + 1);
}

static kr_status run_stages(mat_run *m)
{
    KR_TRY(time_stages(m));
    KR_TRY(download_results(m));
    KR_TRY(check_flags(m));
    check_inverses(m);
    KR_TRY(check_apply(m));
    KR_TRY(time_spmv(m));
    KR_TRY(time_precond(m));
    metrics(m);
    verdict(m->row);
    m->row->done = 1;
    return KR_OK;
}

static void free_mat(mat_run *m)
{
    kr_ctx *ctx = m->r->ctx;
    kr_dev_free(ctx, (void *)m->dA.rowptr);
    kr_dev_free(ctx, (void *)m->dA.colind);
    kr_dev_free(ctx, (void *)m->dA.val);
    kr_dev_free(ctx, m->flags);
    kr_dev_free(ctx, m->inv);
    kr_dev_free(ctx, m->info);
    kr_gje_batch_free(ctx, &m->bb);
    kr_vec_destroy(m->vr);
    kr_vec_destroy(m->vz);
    free(m->starts);
    free(m->h_inv);
    free(m->h_info);
    kr_csr_free(&m->A);
}

/* A status that does not stop the run goes in the row. */
static int row_status(mat_run *m, kr_status st)
{
    if (st == KR_OK) return 0;
    if (bench_fatal(st))
        return bench_lib_error(m->r->ctx, st, m->row->item->name);
    m->row->failed = 1;
    snprintf(m->row->note, sizeof m->row->note, "failed: %s",
             kr_ctx_error(m->r->ctx));
    return 0;
}

static int run_matrix(gje_run *r, int index)
{
    gje_matrix_row *w = &r->mat_rows[r->nmats++];
    mat_run m = {.r = r, .row = w};
    w->item = &r->list.items[index];
    int rc = bench_load("bench gje", r->ctx, w->item, &m.A);
    if (rc) return rc;
    w->n = m.A.nrows;
    w->nnz = m.A.nnz;
    fprintf(stderr, "bench gje: [%d/%d] %s (%d x %d, nnz %d)\n", index + 1,
            r->list.n, w->item->name, (int)m.A.nrows, (int)m.A.ncols,
            (int)m.A.nnz);
    if (m.A.nrows != m.A.ncols) {
        w->refused = 1;
        snprintf(w->note, sizeof w->note, "refused: not square (%d x %d)",
                 (int)m.A.nrows, (int)m.A.ncols);
    } else {
        rc = row_status(&m, run_stages(&m));
    }
    free_mat(&m);
    return rc;
}

int gje_run_matrices(gje_run *r)
{
    r->mat_rows = calloc((size_t)r->list.n + 1, sizeof *r->mat_rows);
    if (!r->mat_rows) {
        cli_error("out of host memory for the results");
        return CLI_EXIT_DEVICE;
    }
    int rc = 0;
    for (int i = 0; !rc && i < r->list.n; i++)
        rc = run_matrix(r, i);
    return rc;
}
