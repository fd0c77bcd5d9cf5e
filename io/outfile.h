/* Output files written whole or not at all: the text goes to a temporary
 * file in the target's folder, renamed over the target once it is complete
 * and flushed to disk. */
#ifndef KR_IO_OUTFILE_H
#define KR_IO_OUTFILE_H

#include "krylov.h"

#include <stdio.h>

typedef struct kr_outfile {
    FILE *f;          /* the temporary, open for writing         */
    const char *path; /* the target (borrowed)                   */
    char *tmp;        /* path + ".tmp.XXXXXX", owned             */
} kr_outfile;

/* Creates the temporary next to path. */
kr_status kr_outfile_open(kr_ctx *ctx, const char *path, kr_outfile *o);
/* Reports a failed write (errno) and removes the temporary. */
kr_status kr_outfile_fail(kr_ctx *ctx, kr_outfile *o);
/* Flushes, syncs and closes the temporary and renames it over path; on
 * failure removes it and leaves path as it was. */
kr_status kr_outfile_commit(kr_ctx *ctx, kr_outfile *o);
/* Closes and removes the temporary; accepts a closed or zeroed one. */
void kr_outfile_abort(kr_outfile *o);

#endif
