/* An input read once, front to back: a file, standard input ("-"), a pipe
 * or a memory buffer, gzip-compressed or not (recognised by its first two
 * bytes). Readers peek at the first bytes to tell the format, so nothing
 * is opened twice and pipes work. */
#ifndef KR_IO_SOURCE_H
#define KR_IO_SOURCE_H

#include "krylov.h"

#include <stddef.h>
#include <zlib.h>

enum { KR_SOURCE_PEEK = 16 };

typedef struct kr_source {
    const char *path; /* names the input in messages (borrowed)          */
    int fd;           /* -1 for a memory buffer                          */
    const unsigned char *raw; /* raw bytes not yet consumed: raw[0..n)  */
    size_t raw_n;
    unsigned char *buf; /* owned read buffer behind raw (fd inputs)      */
    int raw_eof;        /* no more raw bytes will come                   */
    z_stream *z;        /* inflate state of a gzip input, else NULL      */
    int z_end;          /* the last gzip member has ended                */
    unsigned char peek[KR_SOURCE_PEEK]; /* content read ahead by peek   */
    size_t peek_beg, peek_end;
    long long size; /* bytes of content when known (a regular uncompressed
                       file or a plain buffer), else -1                  */
} kr_source;

/* Opens path ("-" is standard input, left open on close). */
kr_status kr_source_open(kr_ctx *ctx, const char *path, kr_source *S);
/* A source over len bytes at data (borrowed), named `name` in messages. */
kr_status kr_source_memory(kr_ctx *ctx, const char *name, const void *data,
                           size_t len, kr_source *S);
/* Reads up to n bytes of content (decompressed); *got < n only at the end
 * of the input. */
kr_status kr_source_read(kr_ctx *ctx, kr_source *S, void *dst, size_t n,
                         size_t *got);
/* Copies the first content bytes (up to n <= KR_SOURCE_PEEK) into dst
 * without consuming them; *got < n when the input is shorter. Only before
 * the first read. */
kr_status kr_source_peek(kr_ctx *ctx, kr_source *S, void *dst, size_t n,
                         size_t *got);
/* 1 when the input is gzip-compressed. */
int kr_source_gzip(const kr_source *S);
/* Closes; accepts a zeroed or already closed source. */
void kr_source_close(kr_source *S);

/* Refuses, naming `where` and `what`, an allocation of `bytes` that
 * exceeds the memory available (core/memory.h: MemAvailable, lowered by
 * $KRYLOV_MEMORY_LIMIT): sizes read from a file are checked with it
 * before anything is allocated for them. */
kr_status kr_io_check_memory(kr_ctx *ctx, const char *where, double bytes,
                             const char *what);

#endif
