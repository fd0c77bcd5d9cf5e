/* krylov: preconditioned Krylov solvers for sparse Ax = b on GPUs and CPUs.
 *
 * This is the one public header. Handles are opaque except the host CSR
 * matrix, which is a plain struct users fill or receive from the readers.
 * Every fallible function returns a kr_status; the context keeps a message
 * with the detail (file, line, row), read with kr_ctx_error(). The library
 * never prints and never exits. */
#ifndef KRYLOV_H
#define KRYLOV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KR_VERSION_MAJOR 0
#define KR_VERSION_MINOR 1
#define KR_VERSION_PATCH 0
#define KR_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- status */

typedef enum kr_status {
    KR_OK = 0,
    KR_ERR_ARG,          /* an argument is invalid (NULL, size mismatch...) */
    KR_ERR_IO,           /* a file cannot be opened, read or written         */
    KR_ERR_FORMAT,       /* malformed input: file syntax, bad index, NaN     */
    KR_ERR_SINGULAR,     /* zero diagonal entry or singular diagonal block   */
    KR_ERR_BREAKDOWN,    /* numerical breakdown outside a solve              */
    KR_ERR_NOMEM,        /* host or device allocation failed                 */
    KR_ERR_DEVICE,       /* CUDA, cuBLAS or cuSPARSE reported an error       */
    KR_ERR_NOT_COMPILED, /* the feature needs a build option not used        */
    KR_ERR_UNSUPPORTED   /* valid input the library does not handle          */
} kr_status;

/* "KR_ERR_FORMAT" etc.; never NULL. */
const char *kr_status_name(kr_status s);

/* --------------------------------------------------------------- context */

typedef enum kr_device {
    KR_DEVICE_AUTO = 0, /* the GPU when one is usable, else the CPU */
    KR_DEVICE_CPU,
    KR_DEVICE_CUDA
} kr_device;

typedef struct kr_ctx kr_ctx;

/* Creates a context on the requested device. With KR_DEVICE_AUTO and no
 * usable GPU it falls back to the CPU and records why in kr_ctx_note().
 * On failure *ctx is still a valid CPU context holding the message (unless
 * the status is KR_ERR_NOMEM and *ctx is NULL); destroy it either way. */
kr_status kr_ctx_create(kr_ctx **ctx, kr_device want);
void kr_ctx_destroy(kr_ctx *ctx);

/* The message of the last failure, "" when none. */
const char *kr_ctx_error(const kr_ctx *ctx);
/* A remark for the user, such as the reason for a CPU fallback, "" if none. */
const char *kr_ctx_note(const kr_ctx *ctx);
kr_device kr_ctx_device(const kr_ctx *ctx);
/* "cpu (4 threads)" or the GPU's model name. */
const char *kr_ctx_device_name(const kr_ctx *ctx);
/* Seconds kr_ctx_create spent loading the solvers' vector and iteration
 * kernels onto the GPU. CUDA loads a kernel at its first launch (about
 * 0.4 ms each in a fresh process); the context does it up front, so that
 * no solve pays it. 0 on the CPU, and when the environment variable
 * KRYLOV_WARMUP is 0 at the context's creation. */
double kr_ctx_warmup_seconds(const kr_ctx *ctx);
/* Threads for CPU kernels; 0 means the OpenMP default. More threads than
 * the cores this process may run on are capped at that count, and
 * kr_ctx_note() says so. */
kr_status kr_ctx_set_threads(kr_ctx *ctx, int threads);
int kr_ctx_threads(const kr_ctx *ctx);
/* Where kr_matrix_create builds a format's layout on a GPU context.
 * KR_BUILD_HOST: on the host from the CSR, then the layout is uploaded. KR_BUILD_DEVICE: the CSR is uploaded once (pinned, chunked
 * staging) and the layout is built from it by kernels, entry for entry the
 * host's; the matrix then keeps that device CSR, so kr_matrix_csr_view
 * works for every format (A is held twice for ellr, pellr, vsr and hyb;
 * kr_matrix_bytes counts it) and the preconditioners set up from it.
 * "auto-probe" and the CPU backend build on the host either way.
 * KR_BUILD_AUTO (the default): the device build from KR_BUILD_AUTO_MIN_NNZ
 * nonzeros, the host build below (on an H200 the device build's fixed
 * ~0.2 ms made it the slower one under about 3e4 nonzeros, 10x the faster
 * at 3e7). A new context starts from $KRYLOV_BUILD ("host", "device" or
 * "auto"; unset = auto). */
typedef enum kr_build {
    KR_BUILD_HOST = 0,
    KR_BUILD_DEVICE = 1,
    KR_BUILD_AUTO = 2
} kr_build;
#define KR_BUILD_AUTO_MIN_NNZ 50000
kr_status kr_ctx_set_build(kr_ctx *ctx, kr_build where);
kr_build kr_ctx_build(const kr_ctx *ctx);
/* GPU memory the context holds now, and (in *peak, if not NULL) the most
 * it held at once; 0 on the CPU. */
size_t kr_ctx_device_bytes(const kr_ctx *ctx, size_t *peak);
/* 1 when the library was built with CUDA. */
int kr_built_with_cuda(void);
/* Allocations the context's backend made since its creation (host memory
 * on the CPU backend; on the GPU each one a cudaMallocFromPoolAsync from
 * the context's pool), and in *frees (if not NULL) the memory it released.
 * A solver object makes none between its solves (kr_ksp). */
size_t kr_ctx_alloc_count(const kr_ctx *ctx, size_t *frees);
/* The cudaStream_t the context's kernels run on, as a void *; NULL on the
 * CPU. A user operator or preconditioner that launches GPU work puts it on
 * this stream (or synchronises it first), so that it is ordered with the
 * library's kernels, which run on a non-blocking stream. */
void *kr_ctx_cuda_stream(const kr_ctx *ctx);

/* -------------------------------------------------------------- host CSR */

/* Compressed sparse rows, 0-based, column indices sorted within each row,
 * no duplicates. Arrays are owned by the struct once filled by the library. */
typedef struct kr_csr {
    int32_t nrows;
    int32_t ncols;
    int32_t nnz;
    int32_t *rowptr; /* nrows + 1 entries, rowptr[0] = 0, rowptr[nrows] = nnz */
    int32_t *colind; /* nnz entries                                          */
    double *val;     /* nnz entries                                          */
} kr_csr;

/* Allocates the three arrays (rowptr zeroed); A is overwritten. */
kr_status kr_csr_alloc(kr_ctx *ctx, int32_t nrows, int32_t ncols, int32_t nnz,
                       kr_csr *A);
/* Frees the arrays and zeroes the struct; accepts NULL and zeroed structs. */
void kr_csr_free(kr_csr *A);
/* Checks the invariants above and finite values; the message names the row. */
kr_status kr_csr_check(kr_ctx *ctx, const kr_csr *A);
/* y = A*x on the host, the plain reference loop. */
void kr_csr_matvec(const kr_csr *A, const double *x, double *y);

typedef struct kr_row_stats {
    int32_t min, max;
    double mean, stddev;
    int32_t empty_rows;
} kr_row_stats;
void kr_csr_row_stats(const kr_csr *A, kr_row_stats *st);

/* Minimum, mean and maximum of one feature. */
typedef struct kr_stat3 {
    double min, mean, max;
} kr_stat3;
/* The sparsity pattern in the terms an SpMM's speed depends on (after
 * Mehrabi et al.'s Table II): size, load balance and locality. A warp is
 * 32 consecutive rows (the last one may hold fewer), a block of columns
 * 32 consecutive columns. Statistics over no item are 0. */
typedef struct kr_spmm_features {
    int32_t nrows, ncols, nnz;
    double density;              /* nnz / (nrows * ncols)                 */
    kr_stat3 row_nnz;            /* nonzeros per row                      */
    kr_stat3 warp_nnz;           /* nonzeros per warp                     */
    kr_stat3 warp_imbalance;     /* per warp with nonzeros: rows x longest
                                    row / nonzeros (1 = even rows)        */
    kr_stat3 row_blocks;         /* column blocks a row touches           */
    kr_stat3 warp_blocks;        /* column blocks a warp's rows touch     */
    kr_stat3 neighbour_distance; /* per row after the first: blocks it or
                                    the row before touches but not both
                                    (Hamming distance of block masks)     */
} kr_spmm_features;
/* The features of A's pattern, in one pass over the entries. */
kr_status kr_csr_spmm_features(kr_ctx *ctx, const kr_csr *A,
                               kr_spmm_features *f);

/* ------------------------------------------------------------ file input */

/* Reads a Matrix Market file (.mtx, or .mtx.gz through zlib): coordinate or
 * array; real, integer or pattern; general, symmetric or skew-symmetric
 * (expanded to full storage). Duplicate entries are summed. */
kr_status kr_read_mtx(kr_ctx *ctx, const char *path, kr_csr *A);
/* Writes coordinate real general, gzip-compressed when path ends in ".gz".
 * How every writer below writes path: a new file or an existing regular
 * one through a temporary in its folder renamed over it at the end (a
 * failure leaves no partial file; a new file gets 0666 less the umask, an
 * existing one keeps its mode); symbolic links followed (the link stays,
 * its target is replaced); a FIFO or device, and "-", /dev/stdout,
 * /dev/stderr, /dev/fd/N (the process's descriptor), written directly. */
kr_status kr_write_mtx(kr_ctx *ctx, const char *path, const kr_csr *A);

/* Reads a dense matrix (n x k, column-major into a new array *data freed with
 * free()) from a Matrix Market array file or a coordinate file. */
kr_status kr_read_dense_mtx(kr_ctx *ctx, const char *path, int32_t *nrows,
                            int32_t *ncols, double **data);
/* Writes "array real general" (gzip-compressed when path ends in ".gz"). */
kr_status kr_write_dense_mtx(kr_ctx *ctx, const char *path, int32_t nrows,
                             int32_t ncols, const double *data);

/* Reads a PETSc binary matrix (MatView, 32-bit indices, real double,
 * big-endian); class id, sizes and file length are checked before
 * allocating. Rows come out sorted, duplicates summed. */
kr_status kr_read_petsc_mat(kr_ctx *ctx, const char *path, kr_csr *A);
/* Writes A as a PETSc binary matrix that MatLoad reads (as kr_write_mtx
 * writes a path, never compressed). */
kr_status kr_write_petsc_mat(kr_ctx *ctx, const char *path, const kr_csr *A);
/* Reads a PETSc binary vector (VecView) into a new array *data of *n
 * doubles, freed with free(). */
kr_status kr_read_petsc_vec(kr_ctx *ctx, const char *path, int32_t *n,
                            double **data);
/* Writes n doubles as a PETSc binary vector (as kr_write_petsc_mat). */
kr_status kr_write_petsc_vec(kr_ctx *ctx, const char *path, int32_t n,
                             const double *data);

/* What kr_read_matrix_path checks besides the file's syntax. */
typedef enum kr_read_flags {
    /* The matrix of a linear system: refused, naming the line (Matrix
     * Market) or the header (PETSc), when not square, 0 x 0, or when its
     * size line declares fewer entries than rows, which proves an empty
     * row (singular) before anything is allocated for the rows. An empty
     * row found otherwise is left to the solve (a consistent singular
     * system can be solved; Jacobi names the zero diagonal). */
    KR_READ_SYSTEM = 1u << 0
} kr_read_flags;

/* The readers of the krylov command. Each reads its input once, front to
 * back: a file (gzip told by its first bytes), a pipe, or standard input
 * for path "-". A sparse matrix from Matrix Market or PETSc binary, told
 * apart by the first bytes; flags: 0 or KR_READ_SYSTEM. */
kr_status kr_read_matrix_path(kr_ctx *ctx, const char *path, unsigned flags,
                              kr_csr *A);
/* A dense matrix (column-major, into a new array *data freed with free())
 * from Matrix Market, or an n x 1 one from a PETSc binary vector. */
kr_status kr_read_vector_path(kr_ctx *ctx, const char *path, int32_t *nrows,
                              int32_t *ncols, double **data);
/* kr_read_vector_path that also gives the line of the size line (0 for a
 * PETSc binary vector), for messages about the sizes. */
kr_status kr_read_vector_path_at(kr_ctx *ctx, const char *path, int32_t *nrows,
                                 int32_t *ncols, double **data,
                                 long *size_line);
/* Block sizes for block-Jacobi (kr_precond_options.block_sizes): a Matrix
 * Market column or row of integers in 1..max, into *sizes (freed with
 * free()) and *count. */
kr_status kr_read_block_sizes_path(kr_ctx *ctx, const char *path, int32_t max,
                                   int32_t **sizes, int32_t *count);
/* Calls fn for each line of a text file (as the readers above read path),
 * without its "\n" or "\r\n", with its number from 1. fn returns 0 to go
 * on; nonzero stops the reading, and kr_read_lines returns KR_OK. */
typedef int (*kr_line_fn)(void *user, const char *line, long number);
kr_status kr_read_lines(kr_ctx *ctx, const char *path, kr_line_fn fn,
                        void *user);

/* KR_ERR_IO, naming path and why, when path cannot be written as the
 * writers write it (above); nothing is left behind. For programs that
 * check their outputs before long work. */
kr_status kr_outfile_check(kr_ctx *ctx, const char *path);
/* Writes a text file as the writers write path: emit(f, arg) prints the
 * whole text to f; a failed write (ferror) is KR_ERR_IO and leaves no
 * partial file. */
typedef void (*kr_emit_fn)(FILE *f, const void *arg);
kr_status kr_write_text(kr_ctx *ctx, const char *path, kr_emit_fn emit,
                        const void *arg);
/* Removes the temporaries of the outputs being written; async-signal-safe,
 * for a signal handler that ends the program. */
void kr_outfile_unlink_pending(void);

/* ------------------------------------------------------------ generators */

/* Builds a test matrix from a spec such as "poisson3d:64". The list of specs
 * and their parameters is kr_generator_help(). */
kr_status kr_generate(kr_ctx *ctx, const char *spec, kr_csr *A);
const char *kr_generator_help(void);

/* --------------------------------------------------------------- vectors */

typedef struct kr_vec kr_vec;

/* A dense vector of n doubles on the context's device, zero-filled. */
kr_status kr_vec_create(kr_ctx *ctx, int32_t n, kr_vec **v);
void kr_vec_destroy(kr_vec *v);
int32_t kr_vec_size(const kr_vec *v);
/* Copies n doubles from / to host memory. */
kr_status kr_vec_upload(kr_vec *v, const double *host);
kr_status kr_vec_download(const kr_vec *v, double *host);
kr_status kr_vec_fill(kr_vec *v, double value);
/* The n doubles of v in the backend's memory: a device pointer on the GPU,
 * host memory on the CPU. For user operators and preconditioners. */
double *kr_vec_data(const kr_vec *v);

/* --------------------------------------------------------------- matrices */

typedef struct kr_matrix kr_matrix;

/* The format kr_matrix_create uses when given NULL, and krylov solve's
 * default: "auto" picks a format per matrix from its row lengths (csr on the
 * CPU backend) and never picks one that refuses the matrix. */
#define KR_FORMAT_DEFAULT "auto"

/* Builds the matrix in the named format ("csr", ..., "auto", "auto-probe";
 * NULL means KR_FORMAT_DEFAULT) on the context's device. The CSR is copied;
 * the caller may free it afterwards. "auto" chooses from the row-length
 * mean, standard deviation and maximum, n and nnz; "auto-probe" also times
 * the close candidates on the GPU (so its pick may vary between runs). */
kr_status kr_matrix_create(kr_ctx *ctx, const kr_csr *A, const char *format,
                           kr_matrix **M);
/* Row orders for the SpMM and SpMV kernels (after Mehrabi et al.), by
 * name, NULL-terminated: "none" (A's order), "plain" (longest rows first),
 * "flipped", "lpt", "warp", "cta", "lpt-warp"; docs/ARCHITECTURE.md
 * defines each. */
const char *const *kr_permute_names(void);

/* Options of kr_matrix_create_opts. */
typedef struct kr_matrix_options {
    size_t size;         /* sizeof(kr_matrix_options) as the program was
                            built: set it with kr_matrix_options_default;
                            the library reads only the fields within it */
    const char *format;  /* as kr_matrix_create's; NULL: KR_FORMAT_DEFAULT */
    const char *permute; /* a kr_permute_names() order; NULL or "none": A's
                            own order. The format is built on the reordered
                            rows once, and every apply puts each result
                            back in A's row order, so vectors are never
                            permuted for the caller. "auto": the trained
                            row-order model picks the order (and the format
                            when format is NULL or "auto"); refused with
                            KR_ERR_UNSUPPORTED when the build has no
                            trained model (kr_row_order_model_trained) */
    int32_t columns;     /* the k of the SpMMs to come (0: 1): for permute
                            "auto", and for format "auto" on the GPU, where
                            k > 1 lets the trained model pick the format
                            (A's order kept unless permute is "auto") */
} kr_matrix_options;
void kr_matrix_options_default(kr_matrix_options *o);
/* kr_matrix_create with options; o NULL means the defaults. */
kr_status kr_matrix_create_opts(kr_ctx *ctx, const kr_csr *A,
                                const kr_matrix_options *o, kr_matrix **M);
/* The row order M runs with ("none" unless made with one). */
const char *kr_matrix_permutation(const kr_matrix *M);
/* Why: for permute "auto", the model and the tree's path to its pick;
 * otherwise "". */
const char *kr_matrix_permutation_reason(const kr_matrix *M);
/* 1 when this build holds a row-order model trained on GPU timings
 * (bench/spmm_train.py), so that permute "auto" can run; else 0. */
int kr_row_order_model_trained(void);
/* Seconds spent computing that order in the build (0 for "none"); part of
 * kr_matrix_build_seconds. */
double kr_matrix_permute_seconds(const kr_matrix *M);

void kr_matrix_destroy(kr_matrix *M);
/* y = alpha*M*x + beta*y */
kr_status kr_matrix_apply(kr_matrix *M, double alpha, const kr_vec *x,
                          double beta, kr_vec *y);
/* Y = A X for k right-hand sides at once, reading A once: X holds the
 * ncols x k and Y the nrows x k values, row-major (row i's k values are
 * contiguous), in vectors of ncols*k and nrows*k entries; Y is
 * overwritten. KR_ERR_UNSUPPORTED for a format without a multi-column
 * kernel (the message names it). */
kr_status kr_matrix_apply_multi(kr_matrix *M, int32_t k, const kr_vec *X,
                                kr_vec *Y);
/* The concrete format that runs: "pellr" for a matrix created as "auto"
 * that picked PELLR; the name given to kr_matrix_create otherwise. */
const char *kr_matrix_format(const kr_matrix *M);
/* The name given to kr_matrix_create ("auto", "csr", ...). */
const char *kr_matrix_format_requested(const kr_matrix *M);
/* Why an automatic choice picked kr_matrix_format(M), e.g. "auto: vsr
 * (skewed rows: ...)"; "" when the caller named the format. */
const char *kr_matrix_format_reason(const kr_matrix *M);
int32_t kr_matrix_rows(const kr_matrix *M);
int32_t kr_matrix_cols(const kr_matrix *M);
/* Bytes the format holds on its device, plus the CSR a device build keeps
 * (KR_BUILD_DEVICE, formats other than csr). */
size_t kr_matrix_bytes(const kr_matrix *M);
/* Seconds spent converting from CSR in kr_matrix_create. */
double kr_matrix_build_seconds(const kr_matrix *M);
/* kr_matrix_create's stages, in seconds, adding up to
 * kr_matrix_build_seconds: the upload of A's CSR (a device build,
 * KR_BUILD_DEVICE; else 0) and the format's build (on the host, the upload
 * of its layout included, or on the device from the CSR). */
void kr_matrix_build_stages(const kr_matrix *M, double *upload_s,
                            double *format_s);
/* Entries the format stores (padding included) over nnz; 1 for CSR. */
double kr_matrix_padding_ratio(const kr_matrix *M);

/* What KR_FORMAT_DEFAULT ("auto") picks for A on a GPU, worked out on any
 * machine: the format's name into *format (a static string) and the rules'
 * reason into why[0..len). On failure *format is "csr" and why is "". */
kr_status kr_format_auto_gpu(kr_ctx *ctx, const kr_csr *A, const char **format,
                             char *why, size_t len);

/* A non-owning description of CSR arrays in the backend's memory (device
 * pointers on the GPU), as cuSPARSE's generic API describes a matrix. */
typedef struct kr_csr_view {
    int32_t nrows, ncols, nnz;
    const int32_t *rowptr; /* nrows + 1 */
    const int32_t *colind; /* nnz       */
    const double *val;     /* nnz       */
} kr_csr_view;
/* The CSR arrays M holds, if its format keeps them in that form: csr on
 * the GPU (and "auto" when it picked csr there), and every format built on
 * the GPU with KR_BUILD_DEVICE (the uploaded CSR it was built from). Valid
 * until M is destroyed; its values follow kr_matrix_update_values.
 * KR_ERR_UNSUPPORTED otherwise (ellr, pellr, vsr, hyb built on the host,
 * the CPU csr, whose values are regrouped for its kernel, user operators). */
kr_status kr_matrix_csr_view(const kr_matrix *M, kr_csr_view *v);

/* A user's operator (matrix-free): y = A x, where x (ncols entries) and y
 * (nrows entries) are distinct vectors of the context (kr_vec_data gives
 * their memory; on the GPU, work on kr_ctx_cuda_stream). A status other
 * than KR_OK stops whatever called it, which returns that status. */
typedef kr_status (*kr_operator_fn)(void *user, const kr_vec *x, kr_vec *y);
/* A kr_matrix whose apply calls fn: usable wherever a kr_matrix is (every
 * method, kr_solve, kr_ksp, kr_matrix_apply). kr_matrix_format says
 * "user"; it holds one scratch vector of nrows entries, for applies with
 * alpha != 1 or beta != 0 (y = alpha*A*x + beta*y). */
kr_status kr_matrix_create_user(kr_ctx *ctx, int32_t nrows, int32_t ncols,
                                kr_operator_fn fn, void *user, kr_matrix **M);
/* New values on the pattern M was created from: A has the same sizes,
 * rowptr and colind (checked against a fingerprint of the pattern kept at
 * creation: KR_ERR_ARG when it differs). The format that runs is rebuilt
 * from A (an "auto" matrix keeps its pick); the handle stays valid, so
 * solver objects and preconditioners that use M go on using it. Not for
 * user operators (KR_ERR_UNSUPPORTED). */
kr_status kr_matrix_update_values(kr_matrix *M, const kr_csr *A);

/* ------------------------------------------------------- preconditioners */

typedef struct kr_precond kr_precond;

/* Builds the named preconditioner ("none", "jacobi", ...) for A. */
kr_status kr_precond_create(kr_ctx *ctx, const kr_csr *A, const char *name,
                            kr_precond **P);
void kr_precond_destroy(kr_precond *P);
/* z = P^{-1} r */
kr_status kr_precond_apply(kr_precond *P, const kr_vec *r, kr_vec *z);
const char *kr_precond_name(const kr_precond *P);

/* What block-Jacobi ("bjacobi") does with a diagonal block that is singular
 * (a Gauss-Jordan pivot d from row p with |d| <= k * eps * max_j |b_pj|,
 * for a k x k block; so a zero row, or rows that repeat, make it singular):
 * scalar Jacobi on its rows (1/a_ii, or 1 where a_ii = 0 too), the
 * identity on its rows, or fail with KR_ERR_SINGULAR naming the blocks. */
typedef enum kr_singular_policy {
    KR_SINGULAR_JACOBI = 0,
    KR_SINGULAR_IDENTITY,
    KR_SINGULAR_ERROR
} kr_singular_policy;

/* How block-Jacobi cuts the rows into blocks when no sizes are given. */
typedef enum kr_blocking {
    KR_BLOCKING_SUPERVARIABLE = 0, /* rows with one pattern, merged to K */
    KR_BLOCKING_SCC                /* never across a change of strongly
                                      connected component of the matrix
                                      graph; long runs by supervariables */
} kr_blocking;

/* Options of the preconditioners that take any (others ignore them). */
typedef struct kr_precond_options {
    size_t size;                 /* sizeof(kr_precond_options) as the
                                    program was built: set it with
                                    kr_precond_options_default; the library
                                    reads only the fields within it, so a
                                    program built against an older header
                                    keeps working                           */
    int block_size;              /* max block size 1..32; default 32          */
    const int32_t *block_sizes;  /* the caller's blocks (sizes sum to n) or
                                    NULL for supervariable blocking           */
    int32_t nblocks;             /* entries of block_sizes                    */
    int fixed;                   /* 1: blocks of exactly block_size rows (the
                                    last one shorter); default 0              */
    kr_singular_policy singular; /* default KR_SINGULAR_JACOBI              */
    kr_blocking blocking;        /* default KR_BLOCKING_SUPERVARIABLE       */
} kr_precond_options;

void kr_precond_options_default(kr_precond_options *o);
/* kr_precond_create with options; o NULL means the defaults.
 * kr_precond_create(ctx, A, name, P) is this with the defaults. */
kr_status kr_precond_create_opts(kr_ctx *ctx, const kr_csr *A, const char *name,
                                 const kr_precond_options *o, kr_precond **P);
/* Diagonal blocks the singular policy replaced (0 for preconditioners
 * without blocks). */
int32_t kr_precond_singular_blocks(const kr_precond *P);
/* Number of diagonal blocks (0 for preconditioners without blocks), and
 * their sizes in order into sizes[0..count) (KR_ERR_UNSUPPORTED for
 * preconditioners without blocks). */
int32_t kr_precond_block_count(const kr_precond *P);
kr_status kr_precond_block_sizes(const kr_precond *P, int32_t *sizes);

/* Options by name, for the preconditioner `name`: "block_size" (1..32),
 * "fixed" (0 or 1), "singular" ("jacobi", "identity", "error") and
 * "blocking" ("supervariable", "scc") for block-Jacobi (the block sizes
 * themselves go in block_sizes and nblocks). KR_ERR_ARG for a value out
 * of range, KR_ERR_UNSUPPORTED for a key the preconditioner does not
 * read; o is changed only on success. */
kr_status kr_precond_options_set(kr_ctx *ctx, const char *name,
                                 kr_precond_options *o, const char *key,
                                 const char *value);
/* 1 when the preconditioner `name` reads the option key ("block_sizes"
 * included), else 0. */
int kr_precond_has_option(const char *name, const char *key);

/* One timed stage of a preconditioner's setup. */
typedef struct kr_precond_stage {
    const char *name;  /* a key for reports: "upload", "blocking", ...    */
    const char *label; /* a few words for people: "upload of A", ...      */
    double seconds;    /* wall clock, the device's work finished          */
} kr_precond_stage;

#define KR_PRECOND_MAX_STAGES 8

/* What a preconditioner says about itself; a field that does not apply to
 * it is 0. */
typedef struct kr_precond_info {
    int32_t blocks;          /* diagonal blocks (kr_precond_block_count)  */
    int32_t singular_blocks; /* of them replaced by the singular policy   */
    int stages;              /* timed stages of its setup, in order       */
    kr_precond_stage stage[KR_PRECOND_MAX_STAGES];
} kr_precond_info;
kr_status kr_precond_get_info(const kr_precond *P, kr_precond_info *info);

/* Thresholds of kr_block_cond_stats. An inverse with cond > 1e8 keeps
 * about half of double's 16 digits (error ~ cond * eps ~ 1e-8), one with
 * cond > 1e12 about 4: there the preconditioner applies mostly rounding.
 * Plain literals, so that reports can quote them as written. */
#define KR_COND_HIGH 1e8
#define KR_COND_EXTREME 1e12

/* The 1-norm condition numbers of the diagonal blocks of a preconditioner
 * with blocks, cond_1(B_b) = ||B_b||_1 ||B_b^-1||_1, B_b the block of A
 * and B_b^-1 the inverse the preconditioner applies (read back from the
 * backend). The inverse is the computed one, so the number is an
 * estimate: its relative error grows like cond * eps, which still tells
 * 1e12 from 1e14. */
typedef struct kr_block_cond {
    int32_t nb;              /* blocks                                      */
    int32_t *starts;         /* nb + 1: block b is rows starts[b]..
                                starts[b+1]-1 (0-based)                     */
    double *cond;            /* nb: cond_1(B_b); INFINITY where replaced    */
    unsigned char *replaced; /* nb: 1 where B_b was singular and the
                                policy's stand-in (scalar Jacobi or the
                                identity), not an inverse, is applied       */
} kr_block_cond;

/* c = the condition numbers of the blocks of P, built from the host CSR A
 * (the same matrix). KR_ERR_ARG for a preconditioner without blocks or a
 * matrix of another size; the status of reading the inverses back when
 * that fails. c is overwritten; free it with kr_block_cond_free (also
 * after a failure). */
kr_status kr_precond_block_cond(kr_ctx *ctx, const kr_precond *P,
                                const kr_csr *A, kr_block_cond *c);
void kr_block_cond_free(kr_block_cond *c);

/* c in a few numbers. min, median (the mean of the two middle values for
 * an even count), max and the counts above the thresholds are over the
 * inverted blocks only: a replaced block has no inverse to measure. A
 * non-finite cond (an inverse that overflowed) counts as above both. */
typedef struct kr_block_cond_stats {
    int32_t blocks, replaced;
    double min, median, max; /* NaN when every block was replaced */
    int32_t max_block;       /* the block of max; -1 when none    */
    int32_t high, extreme;   /* cond > KR_COND_HIGH, KR_COND_EXTREME */
} kr_block_cond_stats;
kr_status kr_block_cond_summarize(kr_ctx *ctx, const kr_block_cond *c,
                                  kr_block_cond_stats *s);

/* kr_precond_create_opts for the matrix M made from A: where M holds its
 * CSR in backend memory (kr_matrix_csr_view), the preconditioner reads it
 * there instead of uploading A again (block-Jacobi's pattern and blocks on
 * the GPU; with KR_BUILD_DEVICE also Jacobi's diagonal). A must be the host
 * CSR M was made from, same values: it is still read for what runs on the
 * host (Jacobi's diagonal in a host build, a singular block's stand-in).
 * A's rows are checked where they are read (not by Jacobi from M's device
 * CSR, which reads M's values, not A's). kr_precond_update_values then
 * uses M again, so update M's values first. */
kr_status kr_precond_create_matrix(kr_ctx *ctx, kr_matrix *M, const kr_csr *A,
                                   const char *name,
                                   const kr_precond_options *o, kr_precond **P);

/* A user's preconditioner: z = P^-1 r on distinct vectors of n entries of
 * the context (see kr_operator_fn). */
typedef kr_status (*kr_precond_fn)(void *user, const kr_vec *r, kr_vec *z);
/* A kr_precond whose apply calls fn; kr_precond_name says "user". */
kr_status kr_precond_create_user(kr_ctx *ctx, int32_t n, kr_precond_fn fn,
                                 void *user, kr_precond **P);
/* Rebuilds P for new values of A on the pattern P was built from (after
 * kr_matrix_update_values, say), with the options it was created with and
 * without analysing the pattern again: block-Jacobi keeps its blocks.
 * A user preconditioner: KR_ERR_UNSUPPORTED. */
kr_status kr_precond_update_values(kr_precond *P, const kr_csr *A);

/* ----------------------------------------------------------------- solve */

/* Why a solve stopped. Positive: converged; negative: did not. The values
 * follow PETSc's KSPConvergedReason where both have the case. */
typedef enum kr_reason {
    KR_ITERATING = 0,
    KR_CONVERGED_RTOL = 2,            /* ||r|| <= rtol*||b||                 */
    KR_CONVERGED_ATOL = 3,            /* ||r|| <= atol                       */
    KR_CONVERGED_HAPPY_BREAKDOWN = 5, /* exact solution in the Krylov space  */
    KR_CONVERGED_ZERO_RHS = 6,        /* b = 0, so x = 0                     */
    KR_DIVERGED_ITS = -3,             /* maximum iterations reached          */
    KR_DIVERGED_DTOL = -4,            /* ||r|| > dtol*||b||                  */
    KR_DIVERGED_BREAKDOWN = -5,       /* a zero inner product stopped it     */
    KR_DIVERGED_INDEFINITE_PC = -8,   /* CG: preconditioner not SPD          */
    KR_DIVERGED_NANORINF = -9,        /* a norm became NaN or infinite       */
    KR_DIVERGED_INDEFINITE_MAT = -10, /* CG: matrix not SPD                  */
    /* The recursive residual met the tolerance but ||b - A x|| did not,
     * also after the allowed restarts (no PETSc counterpart, so a value
     * clear of PETSc's range) */
    KR_DIVERGED_RESIDUAL_GAP = -20,
    /* Stopped on request: the monitor returned nonzero, or
     * kr_solve_options.interrupt pointed at a nonzero value; x is the
     * current iterate (krylov's own reason) */
    KR_INTERRUPTED = -30
} kr_reason;

/* "CONVERGED_RTOL" etc. */
const char *kr_reason_name(kr_reason r);
/* A sentence for users: "relative residual below rtol". */
const char *kr_reason_text(kr_reason r);

/* Called once per iteration (and for iteration 0) with ||r_k||; when a
 * restart (gap_restarts, breakdown_restarts) begins at iteration k, called
 * again for k with the true residual the method continues from. Returns 0
 * to go on; nonzero stops the solve with KR_INTERRUPTED (unless ||r_k||
 * already met the tolerance, which stops it converged). */
typedef int (*kr_monitor_fn)(int iteration, double rnorm, void *user);

typedef struct kr_solve_options {
    size_t size;        /* sizeof(kr_solve_options) as the program was
                           built: set it with kr_solve_options_default; the
                           library reads only the fields within it (later
                           ones keep their defaults), so a program built
                           against an older header keeps working */
    const char *method; /* "cg", "gmres", "idr", "bicgstab"; default "idr"   */
    double rtol;        /* default 1e-8                                       */
    double atol;        /* default 0                                          */
    double dtol;        /* divergence when ||r|| > dtol*||b||; default 1e5    */
    int maxit;          /* default 10000                                      */
    int restart;        /* GMRES restart length m; default 30                 */
    int s;              /* IDR(s) shadow space dimension; default 4           */
    double kappa;       /* IDR(s) omega safeguard; default 0.7                */
    uint64_t seed;      /* IDR(s) shadow space generator seed; default 1      */
    int keep_history;   /* store ||r_k|| per iteration in the result          */
    kr_monitor_fn monitor;
    void *monitor_user;
    /* When a method stops converged but the true residual ||b - A x||
     * misses the same tolerance, the method restarts from x (r = b - A x),
     * with the iterations left, up to this many times (0..100); default 3.
     * If the true residual still misses: KR_DIVERGED_RESIDUAL_GAP. */
    int gap_restarts;
    /* When a method stops with KR_DIVERGED_BREAKDOWN, the method restarts
     * from x (r = b - A x; BiCGSTAB takes r as its new shadow vector r0^),
     * with the iterations left, up to this many times (0..100); default 3.
     * Only after a run (the first or a restart) whose iterations brought
     * ||b - A x|| below the residual it started from: a breakdown after a
     * run that left it no smaller (or not finite), e.g. before its first
     * iteration, ends the solve with KR_DIVERGED_BREAKDOWN. A restarted
     * run stops for any reason a solve does (dtol still compares with
     * the solve's ||r_0||), and x is then its last iterate. */
    int breakdown_restarts;
    /* Checked on the host, once per iteration (CG with Jacobi or none,
     * BiCGSTAB, GMRES: once per batch of up to 16 iterations run on the
     * device):
     * nonzero stops the solve with KR_INTERRUPTED, x the iterate reported
     * (set it from a signal handler or another thread). NULL: never. */
    const volatile int *interrupt;
} kr_solve_options;

void kr_solve_options_default(kr_solve_options *opt);

typedef struct kr_result {
    kr_reason reason;
    int iterations;
    double bnorm;         /* ||b||                                          */
    double rnorm;         /* the solver's own (recursive) residual norm     */
    double true_rnorm;    /* ||b - A x|| recomputed at the end              */
    double solve_seconds; /* wall time of kr_solve                          */
    double *history;      /* ||r_k||, k = 0..history_len-1, if asked for;
                             at a restart, the true residual replaces the
                             recursive one of that iteration             */
    int history_len;
    int true_residual_restarts; /* restarts made (see gap_restarts)       */
    int breakdown_restarts;     /* restarts made (see
                                   kr_solve_options.breakdown_restarts)   */
} kr_result;

/* Solves A x = b; x holds the initial guess on entry. A reason that is not
 * converged is not an error: the status is KR_OK and res->reason says why.
 * A solver object (kr_ksp below) made and destroyed for the one call: it
 * allocates the method's work each time; use a kr_ksp to solve many. */
kr_status kr_solve(kr_ctx *ctx, kr_matrix *A, kr_precond *P, const kr_vec *b,
                   kr_vec *x, const kr_solve_options *opt, kr_result *res);
void kr_result_free(kr_result *res);

/* ---------------------------------------------------------- solver object */

/* A solver object, as PETSc's KSP: a method on a context with its
 * operator, preconditioner and options. kr_ksp_setup allocates every work
 * vector and scratch array once; then any number of kr_ksp_solve calls
 * allocate nothing on the backend (kr_ctx_alloc_count does not move; the
 * history, when asked for, is the result's own host array). Changing the
 * method, restart or s, or an operator of another size, makes the next
 * setup (or solve) allocate again; tolerances and the rest do not. */
typedef struct kr_ksp kr_ksp;

/* method: "cg", "gmres", "idr", "bicgstab", or NULL for the default; the
 * options start as kr_solve_options_default with that method. */
kr_status kr_ksp_create(kr_ctx *ctx, const char *method, kr_ksp **ksp);
void kr_ksp_destroy(kr_ksp *ksp);
/* The operator and the preconditioner are borrowed: they must outlive
 * their use by the object. A NULL preconditioner means none. Any kr_matrix
 * and kr_precond work, the user ones (kr_matrix_create_user,
 * kr_precond_create_user) included. */
kr_status kr_ksp_set_operator(kr_ksp *ksp, kr_matrix *A);
kr_status kr_ksp_set_precond(kr_ksp *ksp, kr_precond *P);
/* All options at once (checked as kr_solve checks them), or one by name:
 * the `krylov solve` option names with or without their dashes ("restart",
 * "--gap-restarts", "gap_restarts") and PETSc's ("-ksp_type",
 * "ksp_gmres_restart", ...); keys: method (ksp_type; PETSc's bcgs is
 * bicgstab), rtol (ksp_rtol), atol (ksp_atol), dtol (ksp_divtol), maxit
 * (ksp_max_it), restart (ksp_gmres_restart), s, kappa, seed, gap_restarts,
 * breakdown_restarts, keep_history (0 or 1). An unknown key or a value
 * out of range is KR_ERR_ARG and changes nothing. The monitor and the
 * interrupt flag are set through kr_ksp_set_options. */
kr_status kr_ksp_set_options(kr_ksp *ksp, const kr_solve_options *opt);
kr_status kr_ksp_set_option(kr_ksp *ksp, const char *key, const char *value);
/* The options in force, into *opt, whose size field says how much to
 * write: call kr_solve_options_default(opt) first. */
kr_status kr_ksp_get_options(const kr_ksp *ksp, kr_solve_options *opt);
/* Allocates the work of the method for the operator (and checks that the
 * operator and preconditioner fit together). Called by kr_ksp_solve when
 * needed; calling it first keeps the allocations out of the first solve. */
kr_status kr_ksp_setup(kr_ksp *ksp);
/* Solves A x = b as kr_solve does; x holds the initial guess. */
kr_status kr_ksp_solve(kr_ksp *ksp, const kr_vec *b, kr_vec *x, kr_result *res);

/* ------------------------------------------- several right-hand sides */

/* The most columns one multi-column solve takes. */
#define KR_MULTI_MAX_COLUMNS 64

/* Solves A x_j = b_j for the k columns of B together (1 <= k <=
 * KR_MULTI_MAX_COLUMNS): B and X hold n x k values row-major (row i's k
 * values contiguous, as kr_matrix_apply_multi takes them), X the initial
 * guesses on entry. Independent systems, not block Krylov: each iteration
 * makes one SpMM (kr_matrix_apply_multi; column by column for a format or
 * user operator without one) and one preconditioner application over the
 * k columns (none, jacobi and bjacobi batched; others column by column),
 * and every column has its own scalars, stopping test, reason and
 * restarts, as kr_solve has for one system: a column that stops is no
 * longer updated, and on the CPU each column takes the iterations its own
 * kr_solve takes. res[j] is column j's result (bnorm, rnorm, true_rnorm,
 * iterations, reason, restarts; the relative residuals are rnorm / bnorm
 * and true_rnorm / bnorm); every solve_seconds is the whole call's. A
 * column with b = 0 gets x = 0 and KR_CONVERGED_ZERO_RHS; a column whose
 * ||b|| lies beyond 2^+-500 is solved on its own. No history is kept and
 * the monitor is not called; the interrupt flag stops every column. */
kr_status kr_solve_multi(kr_ctx *ctx, kr_matrix *A, kr_precond *P, int32_t k,
                         const kr_vec *B, kr_vec *X,
                         const kr_solve_options *opt, kr_result *res);
/* kr_solve_multi with the object's method, operator, preconditioner and
 * options. The block work (about as many n x k blocks as the method has
 * vectors) is allocated at the first call and kept while later calls fit
 * in it. */
kr_status kr_ksp_solve_multi(kr_ksp *ksp, int32_t k, const kr_vec *B, kr_vec *X,
                             kr_result *res);

/* -------------------------------------------------------------- registry */

/* NULL-terminated lists of the names the library accepts. */
const char *const *kr_format_names(void);
const char *const *kr_precond_names(void);
const char *const *kr_method_names(void);

/* Wall-clock seconds from a monotonic clock. */
double kr_wtime(void);

/* ------------------------------------------------ graphs and reachability */

/* A directed graph on vertices 0..n-1 (GRAIL reachability, graph/). Build
 * once, query many: kr_reach_create indexes a graph; the index answers
 * "does u reach v" one at a time or in batches. */
typedef struct kr_graph kr_graph;

/* The matrix graph of a square A: edge j -> i when a_ij != 0 and i != j
 * (x_i depends on x_j). */
kr_status kr_graph_from_csr(kr_ctx *ctx, const kr_csr *A, kr_graph **G);
/* From m edges src[e] -> dst[e], vertices 0..n-1 (checked). */
kr_status kr_graph_from_edges(kr_ctx *ctx, int32_t n, int64_t m,
                              const int32_t *src, const int32_t *dst,
                              kr_graph **G);
/* Reads GRAIL's text format (.gra, or .gra.gz through zlib):
 * "graph_for_greach", the vertex count N, then one line "v: w1 w2 ... #"
 * per vertex. A malformed file is KR_ERR_FORMAT naming file:line. */
kr_status kr_graph_read_gra(kr_ctx *ctx, const char *path, kr_graph **G);
/* A generated graph: "dag:N,DEG[,SEED]" is a random DAG of N vertices and
 * average out-degree DEG (edges from each vertex to uniformly random later
 * vertices of a hidden random order: deep), the same for a seed on any
 * thread count. A bad spec is KR_ERR_ARG. */
kr_status kr_graph_generate(kr_ctx *ctx, const char *spec, kr_graph **G);
void kr_graph_destroy(kr_graph *G);
int32_t kr_graph_vertices(const kr_graph *G);
int64_t kr_graph_edges(const kr_graph *G);
/* The out-neighbours of v: *count of them at *out (borrowed). */
void kr_graph_out(const kr_graph *G, int32_t v, const int32_t **out,
                  int64_t *count);

/* q pseudo-random vertex pairs of a graph of n vertices into pairs[0..2q)
 * (u, v, u, v, ...), the same for a seed on every machine: query sets for
 * tests and benchmarks of kr_reach. All zero when n is 0. */
void kr_graph_random_pairs(int32_t n, int64_t q, uint64_t seed, int32_t *pairs);

/* Strongly connected components without recursion (iterative Tarjan):
 * comp[v] in 0..*ncomp-1, numbered in a topological order of the
 * condensation (an edge u -> v has comp[u] <= comp[v]): by level (the
 * longest path from a source of the condensation), then by the least
 * vertex. Every method below numbers them so: the same comp[] whichever
 * ran. */
kr_status kr_graph_scc(kr_ctx *ctx, const kr_graph *G, int32_t *comp,
                       int32_t *ncomp);

/* Which algorithm finds the SCCs (kr_graph_scc_with, kr_reach_options). */
typedef enum kr_scc_method {
    KR_SCC_TARJAN = 0, /* iterative Tarjan on the host: the default        */
    KR_SCC_FWBW,       /* forward-backward reachability with trimming, all
                          subproblems at once, where ctx runs: OpenMP on
                          the CPU, CUDA kernels on the GPU (not yet run on
                          a GPU); what a pass budget leaves (long chains)
                          goes to Tarjan on the host                      */
    KR_SCC_AUTO        /* FWBW on a CUDA context for graphs of 2^22 edges
                          or more (a provisional threshold, to be measured
                          on the GPU), else Tarjan                         */
} kr_scc_method;

typedef struct kr_scc_info {
    const char *method; /* what ran: "tarjan", "fwbw-cpu" or "fwbw-gpu"  */
    int32_t passes;     /* fwbw: data-parallel trim and reach passes     */
    int32_t rounds;     /* fwbw: pivot rounds                            */
    int32_t host_rest;  /* fwbw: vertices left to Tarjan by the budget   */
    double seconds;     /* the components and their numbering            */
} kr_scc_info;

/* kr_graph_scc by a chosen method; info (may be NULL) says what ran. */
kr_status kr_graph_scc_with(kr_ctx *ctx, const kr_graph *G,
                            kr_scc_method method, int32_t *comp, int32_t *ncomp,
                            kr_scc_info *info);
/* Components of the graph with edge directions ignored. */
kr_status kr_graph_weak_components(kr_ctx *ctx, const kr_graph *G,
                                   int32_t *count);

typedef struct kr_reach_options {
    int labels;        /* d, interval labels per vertex, 1..16; default 5 */
    uint64_t seed;     /* of the randomized traversals; default 1          */
    kr_scc_method scc; /* how the SCCs are found; default KR_SCC_TARJAN */
    unsigned gpu_variants; /* KR_REACH_GPU_* flags: GPU labeling variants
                              of Quer and Calabrese (their speed not yet
                              measured, so off by default) and the GPU
                              search of the queries; default 0: queue
                              labeling, a warp per query                */
} kr_reach_options;

/* Depth levels from status arrays (every pass scans all vertices) instead
 * of a queue the level's parents fill. */
#define KR_REACH_GPU_STATUS_LEVELS 1u
/* Each level's labels in three launches by out-degree (a thread, a warp
 * or a block per vertex) instead of a warp per vertex. */
#define KR_REACH_GPU_DEGREE_BINS 2u
/* The queries the labels leave open searched a warp per query (the host
 * index's pruned search, a warp scanning each vertex's edges, a private
 * visited bitset and a bounded stack per warp; a query that outgrows its
 * stack goes to the bit-parallel search): the default since it measured
 * 7-100x one CPU core on an H100 (2026-11-27), the flag kept for older
 * programs; it overrides KR_REACH_GPU_BIT_QUERIES. */
#define KR_REACH_GPU_WARP_QUERIES 4u
/* Instead, 64 queries per word of bit-parallel frontiers (atomicOr), the
 * search of Quer and Calabrese: 6-15x one core on an H200, slower than
 * the warps on deep graphs. */
#define KR_REACH_GPU_BIT_QUERIES 8u
void kr_reach_options_default(kr_reach_options *o);

/* The GRAIL index of a graph: its SCCs condensed into a DAG, d randomized
 * interval labels per DAG vertex (Yildirim, Chaoji, Zaki 2010). SCCs are
 * found as o->scc says (on the host by default); the labels are built where ctx
 * runs: min-post labels of d randomized iterative DFS on the CPU, [min, max]
 * post-order labels of d random spanning trees by the level sweeps of Quer and
 * Calabrese on the GPU (the index then keeps ctx: destroy it before ctx). The
 * index keeps its own copy of what it needs; G may be destroyed after. */
typedef struct kr_reach kr_reach;
kr_status kr_reach_create(kr_ctx *ctx, const kr_graph *G,
                          const kr_reach_options *o, kr_reach **R);
void kr_reach_destroy(kr_reach *R);
/* 1 when u reaches v (every vertex reaches itself), 0 when not, -1 when u
 * or v is out of range. Uses the index's one workspace: not for
 * concurrent calls (kr_reach_query_batch is). */
int kr_reach_query(kr_reach *R, int32_t u, int32_t v);
/* Answers q queries pairs[2k] -> pairs[2k+1] into answer[k] (0 or 1), on
 * the CPU with the context's threads, or on the GPU for an index built on
 * one (after a host pass that answers what the labels decide); the
 * number decided without a search (the topological order, the labels and,
 * on the CPU, the traversals' tree ranges) goes to *by_labels when not
 * NULL. */
kr_status kr_reach_query_batch(kr_ctx *ctx, kr_reach *R, int64_t q,
                               const int32_t *pairs, unsigned char *answer,
                               int64_t *by_labels);

typedef struct kr_reach_info {
    int32_t vertices;     /* of the graph                          */
    int32_t components;   /* SCCs: vertices of the DAG             */
    int32_t largest;      /* vertices of the largest SCC           */
    int64_t dag_edges;    /* edges of the condensation             */
    int labels;           /* d                                     */
    size_t bytes;         /* host memory of the index              */
    size_t device_bytes;  /* GPU memory of the index (0 on the CPU) */
    double scc_seconds;   /* SCCs and condensation                 */
    double label_seconds; /* the d labelings                       */
    kr_scc_info scc;      /* how the SCCs were found               */
} kr_reach_info;
void kr_reach_get_info(const kr_reach *R, kr_reach_info *info);
/* The DAG vertex (SCC) of v, and its labels: lo[i] <= hi[i], i < d. */
int32_t kr_reach_component(const kr_reach *R, int32_t v);
void kr_reach_labels(const kr_reach *R, int32_t v, int32_t *lo, int32_t *hi);

/* ------------------------------------------------ block-structure analysis */

/* The quotient graph of a block partition of a square A (block b is rows
 * starts[b] .. starts[b+1]-1, nb blocks): vertex = diagonal block, edge
 * c -> b when some a_ij != 0 with i in block b and j in block c != b. */
kr_status kr_graph_quotient(kr_ctx *ctx, const kr_csr *A, int32_t nb,
                            const int32_t *starts, kr_graph **Q);

typedef struct kr_block_analysis {
    int32_t nblocks;
    int64_t dependencies;  /* edges of the quotient graph            */
    int32_t groups;        /* its SCCs: strongly connected block groups */
    int32_t largest_group; /* blocks in the largest                  */
    int32_t cyclic_groups; /* groups of more than one block          */
    int block_triangular;  /* 1 when every group is one block: block
                              forward substitution in topological order
                              solves A exactly                        */
    int32_t depth;         /* levels of the group DAG                */
    int32_t *level_widths; /* groups per level, depth entries        */
    int32_t max_width;
    int32_t weak_components; /* of the quotient graph                  */
    int64_t nnz, nnz_inside; /* entries of A, and those inside blocks  */
} kr_block_analysis;

/* Analyses the partition; free a->level_widths with
 * kr_block_analysis_free. */
kr_status kr_block_analyze(kr_ctx *ctx, const kr_csr *A, int32_t nb,
                           const int32_t *starts, kr_block_analysis *a);
void kr_block_analysis_free(kr_block_analysis *a);
/* The partition bjacobi would make for A with options o (NULL: the
 * defaults): *starts malloc'ed with *nb + 1 entries, freed with free(). */
kr_status kr_block_partition(kr_ctx *ctx, const kr_csr *A,
                             const kr_precond_options *o, int32_t *nb,
                             int32_t **starts);

#ifdef __cplusplus
}
#endif
#endif /* KRYLOV_H */
