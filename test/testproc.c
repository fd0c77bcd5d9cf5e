/* Child processes of the tests (test/testproc.h). */
#include "testproc.h"

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The binary as an absolute path: the child changes its folder. */
static void absolute_bin(char *bin, size_t len)
{
    const char *given = kt_krylov_bin();
    char cwd[2048] = "";
    if (given[0] != '/') ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(bin, len, "%s%s%s", cwd, *cwd ? "/" : "", given);
    ck_assert_msg(access(bin, X_OK) == 0, "no %s", bin);
}

/* In the child: output files, folder, umask, default signals, exec. */
static void exec_child(const kt_child *c, const char *dir, mode_t mask,
                       const char *const *argv)
{
    int o = open(c->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(c->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || chdir(dir) != 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    umask(mask);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

kt_child kt_start(const char *dir, const char *io, mode_t mask,
                  const char *const *args)
{
    kt_child c;
    char bin[4096];
    absolute_bin(bin, sizeof bin);
    snprintf(c.out, sizeof c.out, "%s/stdout", io);
    snprintf(c.err, sizeof c.err, "%s/stderr", io);
    const char *argv[40] = {bin};
    for (int i = 0; args[i]; i++) {
        ck_assert(i < 38);
        argv[i + 1] = args[i];
    }
    c.pid = fork();
    ck_assert(c.pid >= 0);
    if (c.pid == 0) exec_child(&c, dir, mask, argv);
    return c;
}

int kt_wait(const kt_child *c)
{
    int status;
    while (waitpid(c->pid, &status, 0) < 0)
        ck_assert(errno == EINTR);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

int kt_run_krylov(const char *dir, const char *io, const char *const *args,
                  kt_child *c)
{
    *c = kt_start(dir, io, 022, args);
    return kt_wait(c);
}

const char *kt_scratch_dir(void)
{
    static char dirs[32][64];
    static int n;
    ck_assert(n < 32);
    snprintf(dirs[n], sizeof dirs[0], "%s", kt_tmpdir());
    return dirs[n++];
}

const char *kt_in_dir(const char *dir, const char *name)
{
    static char paths[8][4096];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

void kt_nap(void)
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
}
