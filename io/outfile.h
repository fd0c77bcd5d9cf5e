/* Output files written whole or not at all where that is possible, and
 * the way a shell's `>` writes them where it is not.
 *
 * A new path or an existing regular file: the data goes to a temporary
 * file in the target's folder, renamed over the target once it is
 * complete and flushed to disk (a failure leaves the target as it was).
 * Symbolic links are followed, so the link stays and its target is
 * replaced. A new file gets 0666 less the umask, a replaced one keeps its
 * mode. Anything else that exists (a FIFO, a terminal, /dev/null, another
 * device) is written directly, and so are "-", /dev/stdout, /dev/stderr
 * and /dev/fd/N, through the process's own descriptor. The temporaries
 * of a process are listed where a signal handler can remove them
 * (kr_outfile_unlink_pending). */
#ifndef KR_IO_OUTFILE_H
#define KR_IO_OUTFILE_H

#include "krylov.h"

#include <stdio.h>
#include <zlib.h>

typedef struct kr_outfile {
    FILE *f;          /* plain output, open for writing; NULL with gz    */
    gzFile gz;        /* gzip output (KR_OUT_GZIP), else NULL            */
    int fd;           /* the descriptor under f or gz                    */
    const char *path; /* as given, for messages (borrowed)               */
    char *target;     /* path with symbolic links followed, owned        */
    char *tmp;        /* the temporary, owned; NULL when written directly */
    int slot;         /* tmp's entry in the pending list, -1 if none     */
} kr_outfile;

enum { KR_OUT_PLAIN = 0, KR_OUT_GZIP = 1 };

/* Opens path for writing (flags: KR_OUT_PLAIN or KR_OUT_GZIP). */
kr_status kr_outfile_open(kr_ctx *ctx, const char *path, int flags,
                          kr_outfile *o);
/* printf and fwrite to whichever stream o has; < 0 on failure. */
int kr_outfile_printf(kr_outfile *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int kr_outfile_write(kr_outfile *o, const void *buf, size_t bytes);
/* Reports a failed write (errno) and removes the temporary. */
kr_status kr_outfile_fail(kr_ctx *ctx, kr_outfile *o);
/* Flushes and closes; a temporary is synced and renamed over the target.
 * On failure removes the temporary and leaves the target as it was. */
kr_status kr_outfile_commit(kr_ctx *ctx, kr_outfile *o);
/* Closes and removes the temporary; accepts a closed or zeroed one. */
void kr_outfile_abort(kr_outfile *o);

/* kr_outfile_check (public: include/krylov.h): KR_ERR_IO, naming path and
 * why, when kr_outfile_open would fail to create it (no such folder, not
 * writable, a folder). Creates and removes a temporary where a rename
 * would go; never opens a FIFO or device. */

/* 1 when path ends in ".gz" (written compressed by the Matrix Market
 * writers). */
int kr_outfile_gzip_name(const char *path);

/* kr_outfile_unlink_pending (public) uses only atomic loads and unlink. */

#endif
