/* The krylov command as a child process the test controls: started in a
 * folder with a umask, its output in files, signals at their defaults, so
 * a test can stop, signal and reap it. */
#ifndef KR_TEST_TESTPROC_H
#define KR_TEST_TESTPROC_H

#include <sys/types.h>

typedef struct kt_child {
    pid_t pid;
    char out[4096], err[4096]; /* files of its stdout and stderr */
} kt_child;

/* Starts $KRYLOV_BIN (kt_krylov_bin) with args (NULL-terminated) in dir,
 * its output in io/stdout and io/stderr, with umask mask and SIGINT and
 * SIGTERM at their defaults (a test runner may ignore them). */
kt_child kt_start(const char *dir, const char *io, mode_t mask,
                  const char *const *args);
/* Waits for it: its exit status, or 1000 + the signal that killed it. */
int kt_wait(const kt_child *c);
/* kt_start (umask 022) and kt_wait. */
int kt_run_krylov(const char *dir, const char *io, const char *const *args,
                  kt_child *c);
/* A fresh folder whose name stays valid (kt_tmpdir reuses its buffer). */
const char *kt_scratch_dir(void);
/* "dir/name" in one of 8 rotating buffers. */
const char *kt_in_dir(const char *dir, const char *name);
/* Sleeps 2 ms, between polls. */
void kt_nap(void);

#endif
