/* The report of one solve, as aligned "key: value" text or as one JSON
 * object with the same fields. */
#ifndef KR_DRIVERS_REPORT_H
#define KR_DRIVERS_REPORT_H

#include "krylov.h"

#include <stdint.h>
#include <stdio.h>

typedef struct cli_report {
    const char *matrix; /* the file name or the generator spec        */
    int generated;      /* 1 when matrix is a generator spec          */
    int32_t n, nnz;
    kr_row_stats rows;
    const char *method;
    int s, restart;         /* shown for the methods that use them */
    int gap_restarts;       /* true-residual restarts allowed        */
    int breakdown_restarts; /* restarts allowed after a breakdown    */
    const char *precond, *device;
    const char *format;           /* the format that ran             */
    const char *format_requested; /* --format ("auto", ...)          */
    const char *format_reason;    /* why auto picked it, or ""       */
    const char *permutation;      /* --permute's row order ("none")  */
    const char *permute_reason;   /* --permute auto: the model's why */
    double permute_seconds;       /* computing it, in the matrix build */
    int threads;
    const kr_result *res;
    int have_forward;            /* the exact solution is known (b = A*ones) */
    double forward_inf;          /* ||x - 1||_inf                            */
    double forward_rel2;         /* ||x - 1||_2 / ||1||_2                    */
    double setup_seconds;        /* matrix and preconditioner build          */
    double matrix_build_seconds; /* the two parts of setup_seconds   */
    /* matrix_build_seconds' stages (kr_matrix_build_stages): the CSR's
     * upload (a device build; else 0) and the format's build */
    double upload_seconds, format_build_seconds;
    const char *build; /* "device" or "host": where the format was built */
    double precond_build_seconds;
    int32_t precond_blocks;   /* diagonal blocks (0: not a block
                                 preconditioner; then not reported)  */
    int32_t precond_singular; /* of them singular, replaced           */
    /* the preconditioner's view: its setup's timed stages, if any */
    const kr_precond_info *precond_info;
    /* --verbose with a block preconditioner: the blocks' condition
     * numbers (JSON only; the text is printed after setup); NULL
     * otherwise */
    const kr_block_cond_stats *cond;
} cli_report;

/* ||x - 1||_inf and ||x - 1||_2 / ||1||_2, for b = A*ones. */
void cli_forward_error(const double *x, int32_t n, double *err_inf,
                       double *err_rel2);

void cli_report_text(FILE *f, const cli_report *r);
/* The problem's part of the report (matrix, method, preconditioner,
 * format, device), which the report of several right-hand sides shares
 * (drivers/solve_multi.c). */
struct cli_json;
void cli_report_problem_text(FILE *f, const cli_report *r);
void cli_report_problem_json(struct cli_json *j, const cli_report *r);
void cli_report_json(FILE *f, const cli_report *r);

#endif
