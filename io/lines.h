/* A line reader over a kr_source: plain and gzip-compressed files, pipes
 * and buffers through one code path, counting 1-based line numbers for
 * error messages. */
#ifndef KR_IO_LINES_H
#define KR_IO_LINES_H

#include "io/source.h"
#include "krylov.h"

#include <stddef.h>

typedef struct kr_lines {
    kr_source *src; /* &own, or a source the caller owns           */
    kr_source own;
    const char *path; /* borrowed; names the file in messages        */
    char *buf;        /* cap bytes; unread data is buf[beg..end)      */
    size_t cap, beg, end;
    long line;           /* number of the line last returned, 0 before  */
    int eof;             /* the source reported the end of the data     */
    int has_nul;         /* a NUL byte was read: lines are checked for it */
    long long file_size; /* bytes of an uncompressed regular file, else -1 */
} kr_lines;

/* Opens path for reading; a missing or unreadable file is KR_ERR_IO. */
kr_status kr_lines_open(kr_ctx *ctx, const char *path, kr_lines *L);
/* Reads the lines of S (borrowed: closed by its owner, not by L). */
kr_status kr_lines_start(kr_ctx *ctx, kr_source *S, kr_lines *L);
/* The next line, NUL-terminated, without "\n" or "\r\n"; *line = NULL at
 * the end of the file. The text stays valid until the next call. */
kr_status kr_lines_next(kr_ctx *ctx, kr_lines *L, char **line);
/* The line the file ended on (at least 1), for "file ends early" errors. */
long kr_lines_last(const kr_lines *L);
/* Closes the file; accepts a zeroed or already closed reader. */
void kr_lines_close(kr_lines *L);

#endif
