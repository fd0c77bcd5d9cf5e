/* What the `krylov bench` subcommands (spmv, solve, gje) share: the options
 * every benchmark takes, the list of matrices (given or the default set),
 * loading one, the device and its copy bandwidth, the minimum-bytes model
 * of one SpMV, and output files written through a temporary name. */
#ifndef KR_TOOLS_BENCH_BENCH_COMMON_H
#define KR_TOOLS_BENCH_BENCH_COMMON_H

#include "drivers/json.h"
#include "drivers/options.h"
#include "krylov.h"
#include "tools/bench/timing.h"

#include <stddef.h>
#include <stdio.h>

/* Matrices with fewer nonzeros are launch-bound: marked "small" and kept
 * out of the main geometric means. */
#define BENCH_SMALL_NNZ 100000
/* Copies timed for the copy bandwidth (the median is taken). */
#define BENCH_COPY_REPS 21
/* The most matrices one run takes. */
#define BENCH_MAX_MATRICES 512

/* The options both subcommands have; each subcommand's struct starts with
 * these fields so BENCH_COMMON_OPTS(type) can fill its table. */
#define BENCH_COMMON_FIELDS                                                    \
    const char *gen_dummy, *device, *build, *json, *markdown;                  \
    int reps, threads, copy_mb, help

#define BENCH_COMMON_OPTS(T)                                                   \
    {"--gen",                                                                  \
     NULL,                                                                     \
     CLI_STR,                                                                  \
     offsetof(T, gen_dummy),                                                   \
     0,                                                                        \
     0,                                                                        \
     NULL,                                                                     \
     "SPEC",                                                                   \
     "a generated matrix (see krylov solve --help); may be repeated"},         \
        {"--device",         NULL, CLI_CHOICE,    offsetof(T, device), 0, 0,   \
         bench_device_names, "D",  "where to run"},                            \
        {"--build",       NULL, CLI_CHOICE,    offsetof(T, build), 0, 0,       \
         cli_build_names, "B",  CLI_BUILD_HELP},                               \
        {"--threads",                                                          \
         NULL,                                                                 \
         CLI_INT,                                                              \
         offsetof(T, threads),                                                 \
         0,                                                                    \
         1024,                                                                 \
         NULL,                                                                 \
         "T",                                                                  \
         "CPU threads, 0 = the OpenMP default"},                               \
        {"--json",                                                             \
         NULL,                                                                 \
         CLI_STR,                                                              \
         offsetof(T, json),                                                    \
         0,                                                                    \
         0,                                                                    \
         NULL,                                                                 \
         "FILE",                                                               \
         "write every number, the device, date and settings as JSON"},         \
        {"--markdown",                                                         \
         NULL,                                                                 \
         CLI_STR,                                                              \
         offsetof(T, markdown),                                                \
         0,                                                                    \
         0,                                                                    \
         NULL,                                                                 \
         "FILE",                                                               \
         "also write the Markdown report to FILE"},                            \
    {                                                                          \
        "--copy-mb", NULL, CLI_INT, offsetof(T, copy_mb), 0, 65536, NULL,      \
            "MB",                                                              \
            "buffer of the copy-bandwidth reference; 0 = 512 on the GPU "      \
            "(well above its L2), 256 on the CPU"                              \
    }

const char *const *bench_device_names(void);

/* One matrix to run: a file, or a generator spec. */
typedef struct bench_item {
    char *name;
    int generated;
} bench_item;

typedef struct bench_list {
    bench_item *items;
    int n;
} bench_list;

/* Takes every "--gen SPEC" / "--gen=SPEC" out of argv (they may repeat,
 * which cli_parse does not allow) into gens, the rest into rest (both
 * arrays of argc entries). Values of other options in `opts` are skipped,
 * so "--json --gen" keeps "--gen" as the file name. */
int bench_split_gens(const char *command, const cli_opt *opts, int argc,
                     char **argv, const char **gens, int *ngens, char **rest,
                     int *nrest);

/* The files and specs given, or when none, the default set: every .mtx in
 * $KRYLOV_MATRICES or ../shared/matrices (sorted), then poisson3d:160,
 * poisson3d27:110 and powerlaw:2000000. Returns an exit code. */
int bench_list_make(bench_list *l, const char **files, int nfiles,
                    const char **gens, int ngens);
/* The same with another list of generator specs (NULL-terminated) after
 * the folder's files in the default set. */
int bench_list_make_gens(bench_list *l, const char **files, int nfiles,
                         const char **gens, int ngens,
                         const char *const *defaults);
void bench_list_free(bench_list *l);

/* Every bench command's start: the context (bench_open), the copy
 * bandwidth of this run (bench_copy_bandwidth) and its date into date
 * (bench_utc_date, written even on failure). Returns an exit code. */
int bench_start(const char *device, const char *build, int threads, int copy_mb,
                kr_ctx **ctx, size_t *copy_bytes, double *copy_bps, char *date,
                size_t len);

/* Reads or generates item into A. Returns an exit code. */
int bench_load(const char *command, kr_ctx *ctx, const bench_item *item,
               kr_csr *A);

/* Measured device-to-device copy bandwidth, bytes read + written per
 * second, with copy_mb MB (0: the default for the device). */
int bench_copy_bandwidth(kr_ctx *ctx, int copy_mb, size_t *bytes,
                         double *bytes_per_s);

/* The JSON settings every bench report shares: the device asked for, the
 * threads, and the copy-bandwidth reference's buffer and repetitions. */
void bench_json_run(cli_json *j, const char *device, kr_ctx *ctx,
                    size_t copy_bytes);

/* Bytes one y = A x must move at least: values 8 B and column indices 4 B
 * per nonzero, row pointers 4 B (nrows + 1), x read once, y written once. */
double bench_spmv_min_bytes(int32_t nrows, int32_t ncols, int32_t nnz);
#define BENCH_SPMV_MODEL                                                       \
    "minimum bytes of y = A x: 12 B per nonzero (8 B value + 4 B column "      \
    "index) + 4 B * (nrows + 1) row pointers + 8 B * ncols (x read once) + "   \
    "8 B * nrows (y written once)"

/* x[i], a fixed pseudo-random sequence in [0.5, 1.5): never zero, not
 * constant, the same in every run. */
void bench_fill_x(double *x, int32_t n);

/* "2026-11-22T10:00:00Z" */
void bench_utc_date(char *buf, size_t len);

/* Prints the library's message (naming `what` when it does not) and
 * returns the exit code of st. */
int bench_lib_error(kr_ctx *ctx, kr_status st, const char *what);

/* 1 for statuses that stop the whole run (memory, device, not compiled);
 * other failures are reported in the matrix's row. */
int bench_fatal(kr_status st);

/* Writes the file as cli_write_text does (drivers/output.h). Returns an
 * exit code. */
int bench_write_file(const char *path, void (*emit)(FILE *, const void *),
                     const void *arg);

/* 0, or the exit code after the error when the --markdown or --json file
 * (either may be NULL) cannot be created: checked before the runs. */
int bench_check_outputs(const char *markdown, const char *json);

/* The report to stdout, then to the --markdown and --json files if asked
 * for; returns an exit code. */
int bench_outputs(const char *markdown, const char *json,
                  void (*emit_markdown)(FILE *, const void *),
                  void (*emit_json)(FILE *, const void *), const void *arg);

/* max |y - ref| / max |ref| over n entries (absolute when ref = 0): how
 * far a kernel's result is from the host reference. */
double bench_rel_diff(const double *y, const double *ref, size_t n);

/* Median of t[0..n), sorting t. */
double bench_median(double *t, int n);

/* Geometric mean of the finite positive values; NaN when none. */
double bench_geomean(const double *v, int n);

/* Prints a number with %.*f or "-" when not finite. */
void bench_md_num(FILE *f, const char *fmt, double v);

#endif
