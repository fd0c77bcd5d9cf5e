/* The --history file: one CSV line per iteration's residual norm. */
#ifndef KR_DRIVERS_HISTORY_H
#define KR_DRIVERS_HISTORY_H

#include "krylov.h"

/* Writes "iteration,residual_norm,relative_residual" and res->history to
 * path as cli_write_text does. Returns the exit code (0, or 3 after
 * printing the error). */
int cli_write_history(const char *path, const kr_result *res);

#endif
