/* Helpers shared by the Check test programs. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "testutil.h"

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *kt_matrices_dir(void)
{
    const char *env = getenv("KRYLOV_MATRICES");
    if (env && *env) return is_dir(env) ? env : NULL;
    return is_dir("../shared/matrices") ? "../shared/matrices" : NULL;
}

void kt_skip(const char *test, const char *reason)
{
    printf("SKIP: %s: %s\n", test, reason);
    fflush(stdout);
    const char *log = getenv("KT_SKIP_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "%s: %s\n", test, reason);
        fclose(f);
    }
}

/* Folders made by kt_tmpdir in this process, removed when it exits (Check
 * runs each test in a child process, which exits through exit()). */
#define KT_MAX_TMPDIRS 256
static char tmpdirs[KT_MAX_TMPDIRS][64];
static int ntmpdirs;

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_tmpdirs(void)
{
    for (int i = 0; i < ntmpdirs; i++)
        nftw(tmpdirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    ntmpdirs = 0;
}

const char *kt_tmpdir(void)
{
    static char dir[64];
    strcpy(dir, "/tmp/krylov-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    if (ntmpdirs == 0) atexit(remove_tmpdirs);
    if (ntmpdirs < KT_MAX_TMPDIRS) strcpy(tmpdirs[ntmpdirs++], dir);
    return dir;
}

const char *kt_write_file(const char *dir, const char *name, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        abort();
    }
    fputs(text, f);
    fclose(f);
    return path;
}

uint64_t kt_rand_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double kt_rand_uniform(uint64_t *s)
{
    return (double)(kt_rand_u64(s) >> 11) * 0x1.0p-52 - 1.0;
}

double *kt_rand_vector(int32_t n, uint64_t *state)
{
    double *v = malloc(((size_t)n + 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int32_t i = 0; i < n; i++)
        v[i] = kt_rand_uniform(state);
    return v;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Row i: the diagonal (if square) plus up to per_row-1 random columns. */
static int32_t random_row(int32_t i, int32_t n, int32_t m, int per_row,
                          uint64_t *s, int32_t *cols)
{
    int32_t len = 0;
    if (i < m) cols[len++] = i;
    for (int k = 1; k < per_row && m > 0; k++) {
        int32_t j = (int32_t)(kt_rand_u64(s) % (uint64_t)m);
        int dup = 0;
        for (int32_t t = 0; t < len; t++)
            dup |= cols[t] == j;
        if (!dup) cols[len++] = j;
    }
    (void)n;
    qsort(cols, (size_t)len, sizeof *cols, cmp_i32);
    return len;
}

void kt_random_csr(kr_ctx *ctx, int32_t n, int32_t m, int per_row, int dominant,
                   uint64_t seed, kr_csr *A)
{
    uint64_t s = seed;
    int32_t *cols = malloc(sizeof(int32_t) * (size_t)(per_row + 1));
    ck_assert_int_eq(kr_csr_alloc(ctx, n, m, n * per_row, A), KR_OK);
    int32_t nnz = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = random_row(i, n, m, per_row, &s, cols);
        double offsum = 0.0;
        int32_t diag = -1;
        for (int32_t t = 0; t < len; t++) {
            A->colind[nnz + t] = cols[t];
            A->val[nnz + t] = kt_rand_uniform(&s);
            if (cols[t] == i)
                diag = nnz + t;
            else
                offsum += fabs(A->val[nnz + t]);
        }
        if (dominant && diag >= 0) A->val[diag] = 1.0 + 2.0 * offsum;
        nnz += len;
        A->rowptr[i + 1] = nnz;
    }
    A->nnz = nnz;
    free(cols);
}

double kt_rel_diff(int32_t n, const double *a, const double *b)
{
    double d = 0.0, scale = 1.0;
    for (int32_t i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > d || isnan(a[i] - b[i])) d = fabs(a[i] - b[i]);
        if (fabs(b[i]) > scale) scale = fabs(b[i]);
    }
    return isnan(d) ? INFINITY : d / scale;
}

int kt_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

const char *kt_krylov_bin(void)
{
    const char *b = getenv("KRYLOV_BIN");
    return b && *b ? b : "build/krylov";
}

char *kt_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    ck_assert(s && fread(s, 1, (size_t)len, f) == (size_t)len);
    s[len] = '\0';
    fclose(f);
    return s;
}

int kt_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int kt_no_tmp_files(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int clean = 1;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp")) clean = 0;
    closedir(d);
    return clean;
}

kt_output kt_vcommand(const char *env, const char *bin, const char *io_dir,
                      const char *fmt, va_list ap)
{
    char args[2048], cmd[4096], out[512], err[512];
    const char *dir = io_dir ? io_dir : kt_tmpdir();
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "%s'%s' %s >'%s' 2>'%s'", env ? env : "", bin,
             args, out, err);
    int status = system(cmd);
    kt_output r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, kt_slurp(out),
                   kt_slurp(err)};
    ck_assert_msg(r.out && r.err, "no output captured for: %s", cmd);
    return r;
}

kt_output kt_command(const char *env, const char *bin, const char *io_dir,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kt_output r = kt_vcommand(env, bin, io_dir, fmt, ap);
    va_end(ap);
    return r;
}

void kt_output_free(kt_output *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

kr_ctx *kt_cpu(void)
{
    kr_ctx *ctx = NULL;
    ck_assert_int_eq(kr_ctx_create(&ctx, KR_DEVICE_CPU), KR_OK);
    return ctx;
}

kr_ctx *kt_gpu_or_skip(const char *test)
{
    kr_ctx *ctx;
    if (kr_ctx_create(&ctx, KR_DEVICE_CUDA) == KR_OK) return ctx;
    char why[600];
    snprintf(why, sizeof why, "no usable GPU: %s", kr_ctx_error(ctx));
    kt_skip(test, why);
    kr_ctx_destroy(ctx);
    return NULL;
}

int kt_monitor_record(int it, double rnorm, void *user)
{
    kt_monitor_log *l = user;
    ck_assert(l->count < KT_MONLOG);
    l->it[l->count] = it;
    l->rnorm[l->count] = rnorm;
    l->count++;
    return 0;
}

void kt_dense_csr(kr_ctx *ctx, int32_t n, const double *a, kr_csr *A)
{
    int32_t nnz = 0, q = 0;
    for (int64_t i = 0; i < (int64_t)n * n; i++)
        nnz += a[i] != 0.0;
    ck_assert_int_eq(kr_csr_alloc(ctx, n, n, nnz, A), KR_OK);
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (a[(int64_t)i * n + j] != 0.0) {
                A->colind[q] = j;
                A->val[q++] = a[(int64_t)i * n + j];
            }
        A->rowptr[i + 1] = q;
    }
}

double kt_host_residual(const kr_csr *A, const double *b, const double *x)
{
    int32_t n = A->nrows;
    double *r = malloc(sizeof(double) * ((size_t)n + 1)), s = 0.0;
    ck_assert(r != NULL);
    kr_csr_matvec(A, x, r);
    for (int32_t i = 0; i < n; i++)
        s += (b[i] - r[i]) * (b[i] - r[i]);
    free(r);
    return sqrt(s);
}

double kt_num_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    ck_assert_msg(p != NULL, "no '%s' in:\n%s", key, text);
    p += strlen(key);
    while (*p == ' ' || *p == ':' || *p == '"')
        p++;
    char *end;
    double v = strtod(p, &end);
    ck_assert_msg(end != p, "no number after '%s'", key);
    return v;
}
