/* The command's output files: the format by the name (the same rule in
 * every command), the check before the work, text files. All go through
 * io/outfile.c (temporary and rename, links followed, FIFOs and devices
 * written directly, the umask honoured). */
#ifndef KR_DRIVERS_OUTPUT_H
#define KR_DRIVERS_OUTPUT_H

#include "krylov.h"

#include <stdio.h>

/* A matrix or vector to path: PETSc binary when the name ends in ".bin",
 * else Matrix Market (gzip-compressed when it ends in ".gz"). */
kr_status cli_write_matrix(kr_ctx *ctx, const char *path, const kr_csr *A);
kr_status cli_write_vector(kr_ctx *ctx, const char *path, int32_t n,
                           const double *x);

/* 1 when path names standard output ("-", /dev/stdout, /dev/fd/1). */
int cli_output_is_stdout(const char *path);

/* 0, or the exit code 3 after printing why path cannot be written (no
 * such folder, not writable, a folder), naming the option what ("-o");
 * for checking outputs before the work. */
int cli_check_output(const char *what, const char *path);

/* A text file written by emit; 0 or the exit code after the error. */
int cli_write_text(const char *path, void (*emit)(FILE *, const void *),
                   const void *arg);

#endif
