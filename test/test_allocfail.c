/* Allocation-failure injection: this program is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strdup
 * (and, in a CUDA build, --wrap=cudaMallocFromPoolAsync), so every host
 * allocation the library makes goes through the wrappers below, which can fail
 * the Nth one; the library has no hooks for it. Each scenario (reading each
 * format, writing, building every matrix format and preconditioner,
 * solving with every method) first runs once to count its allocations,
 * then once per N failing the Nth: it must return KR_ERR_NOMEM with a
 * message (or KR_OK where the library has a fallback, e.g. auto's csr),
 * free every block it took (counted here, and by LeakSanitizer under
 * make SANITIZE=1) and leave no output file. */
#include "core/ctx.h"
#include "core/error.h"
#include "io/read.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------------ wrappers */

void *__real_malloc(size_t n);
void *__real_calloc(size_t m, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t m, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__real_strdup(const char *s);
char *__wrap_strdup(const char *s);

/* Counting is on while `armed`; the allocation numbered `fail_at` (from
 * 1) fails, once; `live` counts blocks taken and not yet freed. */
static struct {
    int armed;
    long count, fail_at, live, failed;
} host;

static int host_fails(void)
{
    if (!__atomic_load_n(&host.armed, __ATOMIC_RELAXED)) return 0;
    long k = __atomic_add_fetch(&host.count, 1, __ATOMIC_RELAXED);
    if (k != host.fail_at) return 0;
    __atomic_add_fetch(&host.failed, 1, __ATOMIC_RELAXED);
    return 1;
}

static void live_add(long d)
{
    if (__atomic_load_n(&host.armed, __ATOMIC_RELAXED))
        __atomic_add_fetch(&host.live, d, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t n)
{
    if (host_fails()) return NULL;
    void *p = __real_malloc(n);
    if (p) live_add(1);
    return p;
}

void *__wrap_calloc(size_t m, size_t n)
{
    if (host_fails()) return NULL;
    void *p = __real_calloc(m, n);
    if (p) live_add(1);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (host_fails()) return NULL;
    void *q = __real_realloc(p, n);
    if (q && !p) live_add(1);
    return q;
}

char *__wrap_strdup(const char *s)
{
    if (host_fails()) return NULL;
    char *p = __real_strdup(s);
    if (p) live_add(1);
    return p;
}

void __wrap_free(void *p)
{
    if (p) live_add(-1);
    __real_free(p);
}

#ifdef KR_TEST_CUDA
/* Device allocations (the CUDA backend allocates from a stream-ordered
 * pool): from the Nth on, every one fails, since the backend retries
 * once after trimming the pool. */
int __real_cudaMallocFromPoolAsync(void **p, size_t n, void *pool, void *s);
int __wrap_cudaMallocFromPoolAsync(void **p, size_t n, void *pool, void *s);
static struct {
    int armed;
    long count, fail_from;
} dev;

int __wrap_cudaMallocFromPoolAsync(void **p, size_t n, void *pool, void *s)
{
    if (dev.armed && ++dev.count >= dev.fail_from && dev.fail_from > 0) {
        *p = NULL;
        return 2; /* cudaErrorMemoryAllocation */
    }
    return __real_cudaMallocFromPoolAsync(p, n, pool, s);
}
#endif

/* ----------------------------------------------------------- scenarios */

typedef struct scenario {
    const char *name;
    kr_device device;
    kr_status (*run)(const struct scenario *sc, kr_ctx *ctx);
    const char *format, *precond, *method, *path;
} scenario;

static char last_error[1024];
static char files[4][512]; /* mtx, mtx.gz, petsc mat, petsc vec */
static char outdir[512];

/* A context, the scenario, and the checks that need the context: what
 * the backend holds must be back to zero before it is destroyed. */
static kr_status run_scenario(const scenario *sc, long *device_left)
{
    kr_ctx *ctx = NULL;
    kr_status st = kr_ctx_create(&ctx, sc->device);
    /* what the context holds itself (its scratch) is not the scenario's */
    long own = ctx ? (long)ctx->device_bytes : 0;
    if (st == KR_OK) st = kr_ctx_set_threads(ctx, 1);
    if (st == KR_OK) st = sc->run(sc, ctx);
    /* kr_ctx_create's own failure has no context to hold a message */
    snprintf(last_error, sizeof last_error, "%s",
             ctx ? kr_ctx_error(ctx) : "(no context)");
    *device_left = ctx ? (long)ctx->device_bytes - own : 0;
    kr_ctx_destroy(ctx);
    return st;
}

static kr_status read_sparse(const scenario *sc, kr_ctx *ctx)
{
    kr_csr A;
    kr_status st = kr_read_matrix_path(ctx, sc->path, KR_READ_SYSTEM, &A);
    kr_csr_free(&A);
    return st;
}

static kr_status read_vector(const scenario *sc, kr_ctx *ctx)
{
    int32_t n, m;
    double *v = NULL;
    kr_status st = kr_read_vector_path(ctx, sc->path, &n, &m, &v);
    free(v);
    return st;
}

/* Writes one kind of file (sc->path: mtx, petsc, dense, vec) into
 * outdir; a failure must leave nothing there. */
static kr_status write_file(const scenario *sc, kr_ctx *ctx)
{
    kr_csr A;
    char path[600];
    snprintf(path, sizeof path, "%s/w.%s", outdir, sc->path);
    kr_status st = kr_generate(ctx, "poisson2d:4", &A);
    double v[16] = {1, 2, 3};
    if (st != KR_OK) return st;
    if (!strcmp(sc->path, "mtx"))
        st = kr_write_mtx(ctx, path, &A);
    else if (!strcmp(sc->path, "petsc"))
        st = kr_write_petsc_mat(ctx, path, &A);
    else if (!strcmp(sc->path, "dense"))
        st = kr_write_dense_mtx(ctx, path, 16, 1, v);
    else
        st = kr_write_petsc_vec(ctx, path, 16, v);
    kr_csr_free(&A);
    return st;
}

/* Generate, build the format and the preconditioner, solve. */
static kr_status solve(const scenario *sc, kr_ctx *ctx)
{
    kr_csr A;
    kr_matrix *M = NULL;
    kr_precond *P = NULL;
    kr_vec *b = NULL, *x = NULL;
    kr_result res;
    memset(&res, 0, sizeof res);
    /* CG needs a symmetric positive definite matrix */
    const char *gen =
        strcmp(sc->method, "cg") ? "convdiff2d:6,5" : "poisson2d:6";
    kr_status st = kr_generate(ctx, gen, &A);
    if (st == KR_OK) st = kr_matrix_create(ctx, &A, sc->format, &M);
    if (st == KR_OK) st = kr_precond_create(ctx, &A, sc->precond, &P);
    if (st == KR_OK) st = kr_vec_create(ctx, A.nrows, &b);
    if (st == KR_OK) st = kr_vec_create(ctx, A.nrows, &x);
    if (st == KR_OK) st = kr_vec_fill(b, 1.0);
    if (st == KR_OK) {
        kr_solve_options o;
        kr_solve_options_default(&o);
        o.method = sc->method;
        o.keep_history = 1;
        o.restart = 8;
        st = kr_solve(ctx, M, P, b, x, &o, &res);
        if (st == KR_OK && res.reason <= 0)
            st = kr_fail(ctx, KR_ERR_BREAKDOWN, "%s did not converge: %s",
                         sc->method, kr_reason_name(res.reason));
    }
    kr_result_free(&res);
    kr_vec_destroy(x);
    kr_vec_destroy(b);
    kr_precond_destroy(P);
    kr_matrix_destroy(M);
    kr_csr_free(&A);
    return st;
}

/* 1 when outdir holds no file. */
static int outdir_empty(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "[ -z \"$(ls -A '%s')\" ]", outdir);
    return system(cmd) == 0;
}

static void clear_outdir(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/* '%s'/.*tmp* 2>/dev/null", outdir,
             outdir);
    ck_assert(system(cmd) >= 0);
}

/* ---------------------------------------------------------------- sweep */

static void host_arm(long fail_at)
{
    host.count = host.live = host.failed = 0;
    host.fail_at = fail_at;
    __atomic_store_n(&host.armed, 1, __ATOMIC_SEQ_CST);
}

static void host_disarm(void)
{
    __atomic_store_n(&host.armed, 0, __ATOMIC_SEQ_CST);
}

/* Fails the host allocations 1..N of sc in turn. */
static void sweep_host(const scenario *sc)
{
    long device_left;
    host_arm(0);
    kr_status st = run_scenario(sc, &device_left);
    long total = host.count, live = host.live;
    host_disarm();
    ck_assert_msg(st == KR_OK, "%s: %s", sc->name, last_error);
    ck_assert_msg(live == 0, "%s: %ld blocks not freed", sc->name, live);
    ck_assert_msg(total > 0, "%s: no allocation seen: not wrapped?", sc->name);
    long ok_after_failure = 0;
    for (long n = 1; n <= total; n++) {
        clear_outdir();
        host_arm(n);
        st = run_scenario(sc, &device_left);
        live = host.live;
        long failed = host.failed;
        host_disarm();
        ck_assert_msg(st == KR_OK || st == KR_ERR_NOMEM,
                      "%s: allocation %ld of %ld failed: status %s (%s)",
                      sc->name, n, total, kr_status_name(st), last_error);
        ck_assert_msg(st == KR_OK || !failed || last_error[0],
                      "%s: allocation %ld: KR_ERR_NOMEM without a message",
                      sc->name, n);
        ck_assert_msg(live == 0,
                      "%s: allocation %ld of %ld failed (%s): %ld "
                      "blocks not freed",
                      sc->name, n, total, last_error, live);
        ck_assert_msg(device_left == 0,
                      "%s: allocation %ld: %ld device "
                      "bytes not freed",
                      sc->name, n, device_left);
        ck_assert_msg(st == KR_OK || outdir_empty(),
                      "%s: allocation %ld failed, but a file was left in %s",
                      sc->name, n, outdir);
        ok_after_failure += st == KR_OK && failed;
    }
    printf("allocfail: %s %s: %ld host allocations failed in turn, %ld "
           "absorbed by a fallback\n",
           sc->name,
           sc->run == write_file ? sc->path
           : sc->method          ? sc->method
                                 : "",
           total, ok_after_failure);
}

#ifdef KR_TEST_CUDA
/* Fails the device allocations from the Nth on, N = 1..count. */
static void sweep_device(const scenario *sc)
{
    long device_left;
    dev.count = 0;
    dev.fail_from = 0;
    dev.armed = 1;
    kr_status st = run_scenario(sc, &device_left);
    long total = dev.count;
    dev.armed = 0;
    ck_assert_msg(st == KR_OK, "%s: %s", sc->name, last_error);
    for (long n = 1; n <= total; n++) {
        dev.count = 0;
        dev.fail_from = n;
        dev.armed = 1;
        st = run_scenario(sc, &device_left);
        dev.armed = 0;
        ck_assert_msg(st == KR_ERR_NOMEM || st == KR_OK,
                      "%s: device allocation %ld of %ld failed: status %s "
                      "(%s)",
                      sc->name, n, total, kr_status_name(st), last_error);
        ck_assert_msg(device_left == 0,
                      "%s: device allocation %ld: %ld "
                      "bytes not freed",
                      sc->name, n, device_left);
    }
}
#endif

/* Files to read, written before anything is armed. */
static void setup(void)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A;
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:5", &A), KR_OK);
    char dir[512]; /* kt_tmpdir's buffer is reused */
    snprintf(dir, sizeof dir, "%s", kt_tmpdir());
    snprintf(outdir, sizeof outdir, "%s", kt_tmpdir());
    snprintf(files[0], sizeof files[0], "%s/a.mtx", dir);
    snprintf(files[1], sizeof files[1], "%s/a.mtx.gz", dir);
    snprintf(files[2], sizeof files[2], "%s/a.bin", dir);
    snprintf(files[3], sizeof files[3], "%s/b.bin", dir);
    ck_assert_int_eq(kr_write_mtx(ctx, files[0], &A), KR_OK);
    ck_assert_int_eq(kr_write_petsc_mat(ctx, files[2], &A), KR_OK);
    double v[25] = {1};
    ck_assert_int_eq(kr_write_petsc_vec(ctx, files[3], 25, v), KR_OK);
    char *text = kt_slurp(files[0]);
    gzFile g = gzopen(files[1], "wb");
    ck_assert(text && g && gzputs(g, text) > 0 && gzclose(g) == Z_OK);
    free(text);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}

START_TEST(reading)
{
    setup();
    scenario sc[] = {
        {"read mtx", KR_DEVICE_CPU, read_sparse, 0, 0, 0, files[0]},
        {"read mtx.gz", KR_DEVICE_CPU, read_sparse, 0, 0, 0, files[1]},
        {"read petsc mat", KR_DEVICE_CPU, read_sparse, 0, 0, 0, files[2]},
        {"read petsc vec", KR_DEVICE_CPU, read_vector, 0, 0, 0, files[3]},
        {"read dense mtx", KR_DEVICE_CPU, read_vector, 0, 0, 0, files[0]},
    };
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++)
        sweep_host(&sc[i]);
}
END_TEST

START_TEST(writing)
{
    setup();
    static const char *const kinds[] = {"mtx", "petsc", "dense", "vec"};
    for (int k = 0; k < 4; k++) {
        scenario sc = {"write", KR_DEVICE_CPU, write_file, 0, 0, 0, kinds[k]};
        sweep_host(&sc);
    }
}
END_TEST

/* Every format (with jacobi, cg), every preconditioner (csr, gmres) and
 * every method (auto, jacobi): each appears in at least one sweep. */
static const scenario solves[] = {
    {"csr", KR_DEVICE_CPU, solve, "csr", "jacobi", "bicgstab", 0},
    {"ellr", KR_DEVICE_CPU, solve, "ellr", "jacobi", "bicgstab", 0},
    {"pellr", KR_DEVICE_CPU, solve, "pellr", "jacobi", "bicgstab", 0},
    {"vsr", KR_DEVICE_CPU, solve, "vsr", "jacobi", "bicgstab", 0},
    {"hyb", KR_DEVICE_CPU, solve, "hyb", "jacobi", "bicgstab", 0},
    {"auto", KR_DEVICE_CPU, solve, "auto", "jacobi", "bicgstab", 0},
    {"none", KR_DEVICE_CPU, solve, "csr", "none", "gmres", 0},
    {"bjacobi", KR_DEVICE_CPU, solve, "csr", "bjacobi", "gmres", 0},
    {"cg", KR_DEVICE_CPU, solve, "auto", "jacobi", "cg", 0},
    {"gmres", KR_DEVICE_CPU, solve, "auto", "jacobi", "gmres", 0},
    {"idr", KR_DEVICE_CPU, solve, "auto", "jacobi", "idr", 0},
};

START_TEST(building_and_solving)
{
    setup();
    scenario sc = solves[_i];
    sweep_host(&sc);
}
END_TEST

START_TEST(device_allocations)
{
#ifdef KR_TEST_CUDA
    kr_ctx *probe = kt_gpu_or_skip("device_allocations");
    if (!probe) return;
    kr_ctx_destroy(probe);
    for (size_t i = 0; i < sizeof solves / sizeof *solves; i++) {
        scenario sc = solves[i];
        sc.device = KR_DEVICE_CUDA;
        sweep_device(&sc);
    }
#else
    kt_skip("device_allocations", "built without CUDA: no device allocator "
                                  "to wrap");
#endif
}
END_TEST

int main(void)
{
    Suite *s = suite_create("allocfail");
    TCase *t = tcase_create("allocfail");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, reading);
    tcase_add_test(t, writing);
    tcase_add_loop_test(t, building_and_solving, 0,
                        (int)(sizeof solves / sizeof *solves));
    tcase_add_test(t, device_allocations);
    suite_add_tcase(s, t);
    return kt_run(s);
}
