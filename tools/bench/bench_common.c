/* The parts of `krylov bench` both subcommands share: repeated --gen, the
 * matrix list and its default set, the device and its copy bandwidth, the
 * SpMV byte model, and output files written through a temporary name. */
#include "tools/bench/bench_common.h"

#include "drivers/output.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const default_gens[] = {"poisson3d:160", "poisson3d27:110",
                                           "powerlaw:2000000", NULL};

const char *const *bench_device_names(void)
{
    static const char *const names[] = {"auto", "cpu", "cuda", NULL};
    return names;
}

/* 1 when arg names an option of opts that takes a separate value. */
static int takes_value(const cli_opt *opts, const char *arg)
{
    if (strchr(arg, '=')) return 0;
    for (const cli_opt *o = opts; o->name; o++)
        if (!strcmp(arg, o->name) || (o->alias && !strcmp(arg, o->alias)))
            return o->kind != CLI_FLAG;
    return 0;
}

int bench_split_gens(const char *command, const cli_opt *opts, int argc,
                     char **argv, const char **gens, int *ngens, char **rest,
                     int *nrest)
{
    int only_pos = 0;
    *ngens = *nrest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && !strncmp(a, "--gen=", 6)) {
            gens[(*ngens)++] = a + 6;
            continue;
        }
        if (!only_pos && !strcmp(a, "--gen")) {
            if (i + 1 >= argc)
                return cli_usage_error(command, "--gen needs a value (SPEC)");
            gens[(*ngens)++] = argv[++i];
            continue;
        }
        if (!strcmp(a, "--")) only_pos = 1;
        rest[(*nrest)++] = argv[i];
        if (!only_pos && takes_value(opts, a) && i + 1 < argc)
            rest[(*nrest)++] = argv[++i];
    }
    return 0;
}

static int add_item(bench_list *l, const char *name, int generated)
{
    if (l->n >= BENCH_MAX_MATRICES)
        return cli_usage_error("bench", "more than %d matrices",
                               BENCH_MAX_MATRICES);
    char *copy = malloc(strlen(name) + 1);
    if (!copy) {
        cli_error("out of host memory");
        return CLI_EXIT_DEVICE;
    }
    strcpy(copy, name);
    l->items[l->n++] = (bench_item){copy, generated};
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends dir/<name>.mtx for every such file, sorted by name. */
static int add_folder(bench_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0; /* no folder: the generated matrices only */
    char *names[BENCH_MAX_MATRICES];
    int n = 0, rc = 0;
    for (struct dirent *e; (e = readdir(d)) && n < BENCH_MAX_MATRICES;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".mtx"))
            names[n++] = e->d_name;
    }
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = add_item(l, path, 0);
    }
    closedir(d);
    return rc;
}

static int add_defaults(bench_list *l, const char *const *defaults)
{
    const char *env = getenv("KRYLOV_MATRICES");
    int rc = add_folder(l, env && *env ? env : "../shared/matrices");
    for (size_t i = 0; !rc && defaults[i]; i++)
        rc = add_item(l, defaults[i], 1);
    return rc;
}

int bench_list_make(bench_list *l, const char **files, int nfiles,
                    const char **gens, int ngens)
{
    return bench_list_make_gens(l, files, nfiles, gens, ngens, default_gens);
}

int bench_list_make_gens(bench_list *l, const char **files, int nfiles,
                         const char **gens, int ngens,
                         const char *const *defaults)
{
    l->n = 0;
    l->items = calloc(BENCH_MAX_MATRICES, sizeof *l->items);
    if (!l->items) {
        cli_error("out of host memory");
        return CLI_EXIT_DEVICE;
    }
    int rc = 0;
    for (int i = 0; i < nfiles && !rc; i++)
        rc = add_item(l, files[i], 0);
    for (int i = 0; i < ngens && !rc; i++)
        rc = add_item(l, gens[i], 1);
    if (!rc && nfiles + ngens == 0) rc = add_defaults(l, defaults);
    return rc;
}

void bench_list_free(bench_list *l)
{
    for (int i = 0; l->items && i < l->n; i++)
        free(l->items[i].name);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

int bench_lib_error(kr_ctx *ctx, kr_status st, const char *what)
{
    const char *msg = kr_ctx_error(ctx);
    if (!*msg) msg = kr_status_name(st);
    if (what && !strstr(msg, what))
        cli_error("%s: %s", what, msg);
    else
        cli_error("%s", msg);
    return cli_exit_code(st);
}

int bench_fatal(kr_status st)
{
    return st == KR_ERR_NOMEM || st == KR_ERR_DEVICE ||
           st == KR_ERR_NOT_COMPILED;
}

/* Opens the context on the named device with T threads; prints the
 * note of an automatic CPU fallback. Returns an exit code. */
static int bench_open(const char *device, const char *build, int threads,
                      kr_ctx **ctx)
{
    kr_device want = !strcmp(device, "cpu")    ? KR_DEVICE_CPU
                     : !strcmp(device, "cuda") ? KR_DEVICE_CUDA
                                               : KR_DEVICE_AUTO;
    kr_status st = kr_ctx_create(ctx, want);
    if (!*ctx) {
        cli_error("out of memory creating the context");
        return CLI_EXIT_DEVICE;
    }
    if (st == KR_OK) st = kr_ctx_set_threads(*ctx, threads);
    if (st == KR_OK) st = cli_set_build(*ctx, build);
    if (st != KR_OK) return bench_lib_error(*ctx, st, NULL);
    if (*kr_ctx_note(*ctx)) fprintf(stderr, "note: %s\n", kr_ctx_note(*ctx));
    return 0;
}

int bench_start(const char *device, const char *build, int threads, int copy_mb,
                kr_ctx **ctx, size_t *copy_bytes, double *copy_bps, char *date,
                size_t len)
{
    int rc = bench_open(device, build, threads, ctx);
    if (!rc) rc = bench_copy_bandwidth(*ctx, copy_mb, copy_bytes, copy_bps);
    bench_utc_date(date, len);
    return rc;
}

int bench_load(const char *command, kr_ctx *ctx, const bench_item *item,
               kr_csr *A)
{
    kr_status st = item->generated ? kr_generate(ctx, item->name, A)
                                   : kr_read_mtx(ctx, item->name, A);
    if (st == KR_ERR_ARG && item->generated) /* a bad SPEC */
        return cli_usage_error(command, "%s", kr_ctx_error(ctx));
    return st == KR_OK ? 0 : bench_lib_error(ctx, st, item->name);
}

void bench_json_run(cli_json *j, const char *device, kr_ctx *ctx,
                    size_t copy_bytes)
{
    cli_json_str(j, "device_requested", device);
    cli_json_int(j, "threads", kr_ctx_threads(ctx));
    cli_json_int(j, "copy_bytes", (long long)copy_bytes);
    cli_json_int(j, "copy_reps", BENCH_COPY_REPS);
    cli_json_num(j, "kernel_warmup_s", kr_ctx_warmup_seconds(ctx));
}

int bench_copy_bandwidth(kr_ctx *ctx, int copy_mb, size_t *bytes,
                         double *bytes_per_s)
{
    if (copy_mb == 0)
        copy_mb = kr_ctx_device(ctx) == KR_DEVICE_CUDA ? 512 : 256;
    *bytes = (size_t)copy_mb << 20;
    kr_status st = bench_time_copy(ctx, *bytes, BENCH_COPY_REPS, bytes_per_s);
    return st == KR_OK ? 0 : bench_lib_error(ctx, st, "copy bandwidth");
}

double bench_spmv_min_bytes(int32_t nrows, int32_t ncols, int32_t nnz)
{
    return 12.0 * nnz + 4.0 * ((double)nrows + 1) + 8.0 * ncols + 8.0 * nrows;
}

void bench_fill_x(double *x, int32_t n)
{
    uint64_t s = 0x6b7279ull; /* fixed seed: the same x in every run */
    for (int32_t i = 0; i < n; i++) {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x[i] = 0.5 + (double)(z >> 11) * 0x1.0p-53;
    }
}

void bench_utc_date(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int bench_write_file(const char *path, void (*emit)(FILE *, const void *),
                     const void *arg)
{
    return cli_write_text(path, emit, arg);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *t, int n)
{
    if (n < 1) return NAN;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double bench_geomean(const double *v, int n)
{
    double s = 0.0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) {
            s += log(v[i]);
            k++;
        }
    return k ? exp(s / k) : NAN;
}

void bench_md_num(FILE *f, const char *fmt, double v)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("-", f);
}

int bench_check_outputs(const char *markdown, const char *json)
{
    int rc = markdown ? cli_check_output("--markdown", markdown) : 0;
    return !rc && json ? cli_check_output("--json", json) : rc;
}

int bench_outputs(const char *markdown, const char *json,
                  void (*emit_markdown)(FILE *, const void *),
                  void (*emit_json)(FILE *, const void *), const void *arg)
{
    emit_markdown(stdout, arg);
    fflush(stdout);
    int rc = 0;
    if (markdown) rc = bench_write_file(markdown, emit_markdown, arg);
    if (!rc && json) rc = bench_write_file(json, emit_json, arg);
    return rc;
}

double bench_rel_diff(const double *y, const double *ref, size_t n)
{
    double d = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(y[i] - ref[i]));
        s = fmax(s, fabs(ref[i]));
    }
    return s > 0 ? d / s : d;
}
