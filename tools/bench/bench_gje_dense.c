/* bench gje, part 1: batches of random dense blocks inverted by our
 * batched Gauss-Jordan elimination and, on the GPU, by cuBLAS
 * (tools/bench/gje_cublas.h) in the same run, each result checked on a sample
 * of blocks on the host.
 *
 * The blocks: for a k x k block, a random derangement p of 0..k-1 puts
 * one large entry +-(k + 1 + u), u in [0, 1), at (p(j), j) for each column
 * j; the diagonal holds 1e-3 * u (|u| < 1) and every other entry is
 * uniform in [-1, 1). Row p(j) then has one large entry and k - 1 entries
 * below 1 in magnitude, so the block is a row permutation of a matrix
 * diagonally dominant by a margin of at least 2: it is well conditioned
 * (infinity-norm condition below 2k + 1), yet every diagonal pivot is tiny,
 * so an inversion that does not pivot fails the residual check. A 1 x 1
 * block is +-(1 + u). Each block draws from its own hashed stream of
 * (seed, batch, block), so the data is the same for any thread count and
 * fresh for every batch. */
#include "core/error.h"
#include "core/vec.h"
#include "tools/bench/bench_gje.h"
#include "tools/bench/gje_cublas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One batch while it runs. */
typedef struct dense_batch {
    gje_run *r;
    gje_dense_row *row;
    kr_gje_batch bb;
    double *h_in;      /* host: the blocks                                */
    double *in, *out;  /* backend memory                                  */
    double *work;      /* backend memory: cuBLAS's LU (GPU only)          */
    int32_t *info;     /* backend memory                                  */
    int32_t *sample;   /* the sampled blocks                              */
    int64_t *soffs;    /* their offsets in the sample buffers             */
    double *ours, *cb; /* host: our and cuBLAS's sampled inverses         */
    kr_gje_cublas *cublas;
} dense_batch;

/* ------------------------------------------------------- random data */

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double uniform(uint64_t *s)
{
    return (double)(next_u64(s) >> 11) * 0x1.0p-52 - 1.0;
}

static uint64_t stream(const gje_run *r, int batch, int64_t b)
{
    uint64_t s = (uint64_t)r->o->seed * 0x2545f4914f6cdd1dull;
    s ^= (uint64_t)(batch + 1) << 40;
    return s ^ (uint64_t)b * 0x632be59bd9b4e019ull;
}

/* A random derangement of 0..k-1 (k >= 2): a shuffle whose fixed points
 * are then swapped with the next entry (neither becomes fixed). */
static void derangement(int32_t k, uint64_t *s, int32_t *p)
{
    for (int32_t i = 0; i < k; i++)
        p[i] = i;
    for (int32_t i = k - 1; i > 0; i--) {
        int32_t j = (int32_t)(next_u64(s) % (uint64_t)(i + 1));
        int32_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    for (int32_t i = 0; i < k; i++)
        if (p[i] == i) {
            int32_t j = (i + 1) % k, t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
}

/* One k x k column-major block (see the top of the file). */
static void random_block(int32_t k, uint64_t s, double *B)
{
    if (k == 1) {
        double u = uniform(&s);
        B[0] = (u < 0 ? -1.0 : 1.0) * (1.0 + fabs(u));
        return;
    }
    int32_t p[KR_GJE_MAX];
    derangement(k, &s, p);
    for (int32_t j = 0; j < k; j++)
        for (int32_t i = 0; i < k; i++)
            B[i + (size_t)j * k] = i == j ? 1e-3 * uniform(&s) : uniform(&s);
    for (int32_t j = 0; j < k; j++) {
        double u = uniform(&s);
        B[p[j] + (size_t)j * k] = (u < 0 ? -1.0 : 1.0) * (k + 1 + fabs(u));
    }
}

static void random_blocks(const gje_run *r, int batch, const kr_gje_batch *bb,
                          double *data)
{
#pragma omp parallel for num_threads(kr_ctx_threads(r->ctx)) schedule(static)
    for (int32_t b = 0; b < bb->nb; b++)
        random_block(bb->h_starts[b + 1] - bb->h_starts[b], stream(r, batch, b),
                     data + bb->h_offs[b]);
}

/* Block starts: every block lo rows, or each uniformly random in lo..hi. */
static int32_t *random_starts(const gje_run *r, int batch, int32_t nb, int lo,
                              int hi)
{
    int32_t *starts = malloc(((size_t)nb + 1) * sizeof *starts);
    if (!starts) return NULL;
    uint64_t s = stream(r, batch, -1);
    starts[0] = 0;
    for (int32_t b = 0; b < nb; b++) {
        int32_t k = lo + (int32_t)(next_u64(&s) % (uint64_t)(hi - lo + 1));
        starts[b + 1] = starts[b] + k;
    }
    return starts;
}

/* ---------------------------------------------------------- checking */

double gje_residual(int32_t k, const double *B, const double *X)
{
    double nb = 0.0, nx = 0.0, nr = 0.0;
    for (int32_t i = 0; i < k; i++) {
        double sb = 0.0, sx = 0.0, sr = 0.0;
        for (int32_t j = 0; j < k; j++) {
            double bx = 0.0;
            for (int32_t l = 0; l < k; l++)
                bx += B[i + (size_t)l * k] * X[l + (size_t)j * k];
            sr += fabs(bx - (i == j));
            sb += fabs(B[i + (size_t)j * k]);
            sx += fabs(X[i + (size_t)j * k]);
        }
        nb = fmax(nb, sb);
        nx = fmax(nx, sx);
        nr = fmax(nr, sr);
        if (!isfinite(sx) || !isfinite(sr)) return INFINITY;
    }
    return nr / (nb * nx);
}

/* Evenly spaced blocks (the first included) and their sample offsets. */
static int pick_sample(dense_batch *d)
{
    int32_t nb = d->bb.nb, n = d->r->o->check < nb ? d->r->o->check : nb;
    d->sample = malloc(((size_t)n + 1) * sizeof *d->sample);
    d->soffs = malloc(((size_t)n + 1) * sizeof *d->soffs);
    if (!d->sample || !d->soffs) return 0;
    d->soffs[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t b = (int32_t)((int64_t)i * nb / n);
        int64_t k = d->bb.h_starts[b + 1] - d->bb.h_starts[b];
        d->sample[i] = b;
        d->soffs[i + 1] = d->soffs[i] + k * k;
    }
    d->row->sampled = n;
    d->ours = malloc(((size_t)d->soffs[n] + 1) * sizeof *d->ours);
    d->cb = malloc(((size_t)d->soffs[n] + 1) * sizeof *d->cb);
    return d->ours && d->cb;
}

/* buf = the sampled blocks of the backend array dev. */
static kr_status download_sample(dense_batch *d, const double *dev, double *buf)
{
    kr_ctx *ctx = d->r->ctx;
    kr_status st = KR_OK;
    for (int32_t i = 0; st == KR_OK && i < d->row->sampled; i++) {
        int64_t len = d->soffs[i + 1] - d->soffs[i];
        st = ctx->ops->download(ctx, buf + d->soffs[i],
                                dev + d->bb.h_offs[d->sample[i]],
                                (size_t)len * sizeof *buf);
    }
    return st;
}

static double sample_residual(const dense_batch *d, const double *buf)
{
    double worst = 0.0;
    for (int32_t i = 0; i < d->row->sampled; i++) {
        int32_t b = d->sample[i];
        int32_t k = d->bb.h_starts[b + 1] - d->bb.h_starts[b];
        double res =
            gje_residual(k, d->h_in + d->bb.h_offs[b], buf + d->soffs[i]);
        worst = isnan(res) || res > worst ? res : worst;
    }
    return worst;
}

/* max |a - b| / max |b| over the sample */
static double sample_diff(const dense_batch *d, const double *a,
                          const double *b)
{
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < d->soffs[d->row->sampled]; i++) {
        double e = fabs(a[i] - b[i]);
        diff = isnan(e) || e > diff ? e : diff;
        scale = fmax(scale, fabs(b[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

/* Blocks whose info entry is not 0. */
static kr_status count_singular(dense_batch *d, int32_t *count)
{
    kr_ctx *ctx = d->r->ctx;
    size_t nb = (size_t)d->bb.nb;
    int32_t *h = malloc((nb + 1) * sizeof *h);
    if (!h) return KR_ERR_NOMEM;
    kr_status st = ctx->ops->download(ctx, h, d->info, nb * sizeof *h);
    *count = 0;
    for (size_t b = 0; st == KR_OK && b < nb; b++)
        *count += h[b] != 0;
    free(h);
    return st;
}

/* ------------------------------------------------------------ timing */

static kr_status run_ours(void *arg)
{
    dense_batch *d = arg;
    return d->r->ops->invert(d->r->ctx, &d->bb, d->in, d->out, d->info);
}

static kr_status run_lu(void *arg)
{
    dense_batch *d = arg;
    return kr_gje_cublas_getrf_getri(d->r->ctx, d->cublas);
}

static kr_status run_matinv(void *arg)
{
    dense_batch *d = arg;
    return kr_gje_cublas_matinv(d->r->ctx, d->cublas);
}

/* getrf factorises in place: work = in is restored before every run,
 * outside the timed region, so each timed call is one run. */
static kr_status time_lu(dense_batch *d, double *median)
{
    kr_ctx *ctx = d->r->ctx;
    int reps = d->r->o->reps;
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) return kr_fail(ctx, KR_ERR_NOMEM, "out of host memory");
    kr_status st = KR_OK;
    for (int i = 0; st == KR_OK && i < d->r->o->warmup; i++) {
        st = kr_gje_cublas_reset(ctx, d->cublas);
        if (st == KR_OK) st = run_lu(d);
    }
    for (int i = 0; st == KR_OK && i < reps; i++) {
        st = kr_gje_cublas_reset(ctx, d->cublas);
        if (st == KR_OK) st = ctx->ops->time_runs(ctx, run_lu, d, 1, t + i);
    }
    if (st == KR_OK) *median = bench_median(t, reps);
    free(t);
    return st;
}

/* ----------------------------------------------------------- a batch */

static kr_status check_ours(dense_batch *d)
{
    gje_dense_row *w = d->row;
    KR_TRY(count_singular(d, &w->singular_ours));
    KR_TRY(download_sample(d, d->out, d->ours));
    w->res_ours = sample_residual(d, d->ours);
    return KR_OK;
}

/* cuBLAS writes into out: our sample was downloaded before. */
static kr_status cublas_lu(dense_batch *d)
{
    gje_dense_row *w = d->row;
    KR_TRY(time_lu(d, &w->lu_s));
    KR_TRY(kr_gje_cublas_singular(d->r->ctx, d->cublas, &w->singular_lu));
    KR_TRY(download_sample(d, d->out, d->cb));
    w->res_lu = sample_residual(d, d->cb);
    w->diff_lu = sample_diff(d, d->ours, d->cb);
    return KR_OK;
}

static kr_status cublas_matinv(dense_batch *d)
{
    gje_dense_row *w = d->row;
    const gje_opts *o = d->r->o;
    double min;
    KR_TRY(gje_time(d->r->ctx, run_matinv, d, o->warmup, o->reps, &w->matinv_s,
                    &min));
    KR_TRY(kr_gje_cublas_singular(d->r->ctx, d->cublas, &w->singular_matinv));
    KR_TRY(download_sample(d, d->out, d->cb));
    w->res_matinv = sample_residual(d, d->cb);
    return KR_OK;
}

/* The baseline's failures go in the row: they do not void our numbers. */
static void run_cublas(dense_batch *d)
{
    gje_dense_row *w = d->row;
    kr_ctx *ctx = d->r->ctx;
    if (kr_ctx_device(ctx) != KR_DEVICE_CUDA) {
        snprintf(w->cublas_note, sizeof w->cublas_note, "n/a: CPU");
        return;
    }
    kr_status st = ctx->ops->alloc(ctx, (void **)&d->work,
                                   (size_t)d->bb.total * sizeof(double));
    if (st == KR_OK)
        st = kr_gje_cublas_create(ctx, &d->bb, d->in, d->work, d->out,
                                  &d->cublas);
    if (st == KR_OK) w->groups = kr_gje_cublas_groups(d->cublas);
    if (st == KR_OK) st = cublas_lu(d);
    if (st == KR_OK) st = cublas_matinv(d);
    if (st != KR_OK)
        snprintf(w->cublas_note, sizeof w->cublas_note, "cuBLAS failed: %s",
                 *kr_ctx_error(ctx) ? kr_ctx_error(ctx) : kr_status_name(st));
}

static void metrics(dense_batch *d)
{
    gje_dense_row *w = d->row;
    const kr_gje_batch *bb = &d->bb;
    w->flops = w->floor_bytes = 0.0;
    for (int32_t b = 0; b < bb->nb; b++) {
        double k = bb->h_starts[b + 1] - bb->h_starts[b];
        w->flops += 2.0 * k * k * k;
        w->floor_bytes += 16.0 * k * k;
    }
    w->nb = bb->nb;
    w->mean_k = (double)bb->nrows / bb->nb;
    w->floor_s = w->floor_bytes / d->r->copy_bps;
}

static void verdict(gje_dense_row *w)
{
    if (w->singular_ours > 0) {
        w->failed = 1;
        snprintf(w->note, sizeof w->note,
                 "FAIL: %d blocks reported singular (none is)",
                 (int)w->singular_ours);
    } else if (!(w->res_ours <= GJE_RESIDUAL_TOL)) {
        w->failed = 1;
        snprintf(w->note, sizeof w->note, "FAIL: residual %.3g > %g",
                 w->res_ours, GJE_RESIDUAL_TOL);
    }
    if (w->failed) fprintf(stderr, "warning: bench gje: %s\n", w->note);
}

static kr_status setup(dense_batch *d, int index)
{
    gje_run *r = d->r;
    gje_dense_row *w = d->row;
    int32_t nb = gje_batch_blocks(r->o, w->hi);
    int32_t *starts = random_starts(r, index, nb, w->lo, w->hi);
    if (!starts)
        return kr_fail(r->ctx, KR_ERR_NOMEM,
                       "out of host memory for %d "
                       "blocks",
                       (int)nb);
    kr_status st = kr_gje_batch_create(r->ctx, nb, starts, &d->bb);
    free(starts);
    KR_TRY(st);
    size_t bytes = (size_t)d->bb.total * sizeof(double);
    d->h_in = malloc(bytes + sizeof(double));
    if (!d->h_in || !pick_sample(d))
        return kr_fail(r->ctx, KR_ERR_NOMEM,
                       "out of host memory for a "
                       "batch of %zu MB",
                       bytes >> 20);
    random_blocks(r, index, &d->bb, d->h_in);
    KR_TRY(kr_dev_upload_new(r->ctx, d->h_in, bytes, (void **)&d->in));
    KR_TRY(r->ctx->ops->alloc(r->ctx, (void **)&d->out, bytes));
    return r->ctx->ops->alloc(r->ctx, (void **)&d->info,
                              (size_t)nb * sizeof(int32_t));
}

static void free_batch(dense_batch *d)
{
    kr_ctx *ctx = d->r->ctx;
    kr_gje_cublas_destroy(ctx, d->cublas);
    kr_dev_free(ctx, d->in);
    kr_dev_free(ctx, d->out);
    kr_dev_free(ctx, d->work);
    kr_dev_free(ctx, d->info);
    kr_gje_batch_free(ctx, &d->bb);
    free(d->h_in);
    free(d->sample);
    free(d->soffs);
    free(d->ours);
    free(d->cb);
}

static void init_row(gje_dense_row *w, int lo, int hi)
{
    memset(w, 0, sizeof *w);
    w->lo = lo;
    w->hi = hi;
    w->lu_s = w->matinv_s = NAN;
    w->res_lu = w->res_matinv = w->diff_lu = NAN;
}

static int run_batch(gje_run *r, int lo, int hi, int index, int count)
{
    gje_dense_row *w = &r->dense_rows[r->ndense++];
    init_row(w, lo, hi);
    dense_batch d = {.r = r, .row = w};
    kr_status st = setup(&d, index);
    if (st == KR_OK)
        fprintf(stderr, "bench gje: [%d/%d] sizes %d..%d, %d blocks, %.1f MB\n",
                index + 1, count, lo, hi, (int)d.bb.nb,
                16.0 * (double)d.bb.total / 1048576.0);
    if (st == KR_OK)
        st = gje_time(r->ctx, run_ours, &d, r->o->warmup, r->o->reps,
                      &w->ours_s, &w->ours_min_s);
    if (st == KR_OK) st = check_ours(&d);
    if (st == KR_OK) {
        run_cublas(&d);
        metrics(&d);
        verdict(w);
    }
    free_batch(&d);
    return st == KR_OK ? 0 : bench_lib_error(r->ctx, st, "bench gje");
}

int gje_run_dense(gje_run *r)
{
    int count = r->nsizes + r->nmixes, rc = 0;
    for (int i = 0; !rc && i < r->nsizes; i++)
        rc = run_batch(r, r->sizes[i], r->sizes[i], i, count);
    for (int i = 0; !rc && i < r->nmixes; i++)
        rc = run_batch(r, r->mix_lo[i], r->mix_hi[i], r->nsizes + i, count);
    return rc;
}
