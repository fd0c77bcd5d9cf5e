/* `--verbose`: block-Jacobi's diagonal blocks and their 1-norm condition
 * numbers (kr_precond_block_cond), as a summary and one line per block,
 * and the summary as a member of the JSON report. */
#ifndef KR_DRIVERS_BLOCK_COND_H
#define KR_DRIVERS_BLOCK_COND_H

#include "json.h"
#include "solve.h"

#include <stdio.h>

/* The summary's thresholds as include/krylov.h writes them ("1e8"),
 * for the help, the text and the JSON keys. */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)
#define CLI_COND_HIGH CLI_STR(KR_COND_HIGH)
#define CLI_COND_EXTREME CLI_STR(KR_COND_EXTREME)

/* Prints the report for r's preconditioner to f (for a preconditioner
 * without blocks, one line saying so) and keeps the summary in r->cond
 * (r->have_cond = 1). The report is a diagnostic, so a failure to make it
 * is a warning on stderr, not an error: the solve goes on. */
void cli_block_conds(FILE *f, solve_run *r);

/* "block_conditions": {...}, the summary, into the open JSON object. */
void cli_block_conds_json(cli_json *j, const kr_block_cond_stats *s);

#endif
