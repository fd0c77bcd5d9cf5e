/* Whole-or-nothing output files through mkstemp and rename. */
#include "io/outfile.h"

#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { KR_OUT_BUFFER = 1 << 20 };

kr_status kr_outfile_open(kr_ctx *ctx, const char *path, kr_outfile *o)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    size_t len = strlen(path);
    o->tmp = malloc(len + sizeof ".tmp.XXXXXX");
    if (!o->tmp) return kr_fail(ctx, KR_ERR_NOMEM, "%s: out of memory", path);
    memcpy(o->tmp, path, len);
    memcpy(o->tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int err = errno;
        free(o->tmp); /* nothing was created */
        o->tmp = NULL;
        return kr_fail(ctx, KR_ERR_IO, "%s: cannot create a file there: %s",
                       path, strerror(err));
    }
    /* mkstemp makes the file private (0600); a replaced file keeps its
     * mode, a new one gets the usual 0644. */
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    o->f = fdopen(fd, "w");
    if (!o->f || fchmod(fd, mode) != 0) {
        if (!o->f) close(fd);
        return kr_outfile_fail(ctx, o);
    }
    setvbuf(o->f, NULL, _IOFBF, KR_OUT_BUFFER);
    return KR_OK;
}

kr_status kr_outfile_fail(kr_ctx *ctx, kr_outfile *o)
{
    int err = errno;
    kr_outfile_abort(o);
    return kr_fail(ctx, KR_ERR_IO, "%s: write failed: %s; nothing written",
                   o->path, strerror(err));
}

kr_status kr_outfile_commit(kr_ctx *ctx, kr_outfile *o)
{
    if (fflush(o->f) != 0 || ferror(o->f)) return kr_outfile_fail(ctx, o);
    /* EINVAL: the file system cannot sync (nothing more to wait for). */
    if (fsync(fileno(o->f)) != 0 && errno != EINVAL)
        return kr_outfile_fail(ctx, o);
    FILE *f = o->f;
    o->f = NULL;
    if (fclose(f) != 0 || rename(o->tmp, o->path) != 0)
        return kr_outfile_fail(ctx, o);
    free(o->tmp);
    o->tmp = NULL;
    return KR_OK;
}

void kr_outfile_abort(kr_outfile *o)
{
    if (!o) return;
    int err = errno; /* kept for the caller's message */
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    o->f = NULL;
    o->tmp = NULL;
    errno = err;
}
