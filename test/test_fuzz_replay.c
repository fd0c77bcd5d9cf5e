/* The fuzz targets (test/fuzz/fuzz_*.c) replayed on their seed corpus
 * (test/fuzz/corpus/TARGET/) and on every input a fuzzing run found to
 * crash (test/fuzz/regress/TARGET/), each input in a child process so a
 * crash names its file; under `make SANITIZE=1` a leak or a UBSan report
 * fails the input too. Run from the repository root. */
#include "test/fuzz/fuzz_blocks.c"
#include "test/fuzz/fuzz_mtx.c"
#include "test/fuzz/fuzz_options.c"
#include "test/fuzz/fuzz_petsc_mat.c"
#include "test/fuzz/fuzz_petsc_vec.c"
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*fuzz_fn)(const uint8_t *, size_t);

/* The whole file (free()) and its length, or NULL. */
static char *slurp_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *s = malloc(cap);
    while (s && (got = fread(s + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) free(s);
            s = t;
        }
    }
    fclose(f);
    *len = n;
    return s;
}

/* Runs fn on the file in a child whose output (the option parser's
 * errors, a sanitizer's report) goes to a log that is printed only when
 * the child fails; returns 0 when it exited cleanly. */
static int replay_one(fuzz_fn fn, const char *path, const char *log)
{
    size_t len = 0;
    char *data = slurp_bytes(path, &len);
    ck_assert_msg(data != NULL, "%s: cannot read", path);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        if (!freopen(log, "w", stderr) || dup2(fileno(stderr), 1) < 0) _exit(2);
        fn((const uint8_t *)data, len);
        exit(0); /* LeakSanitizer checks at exit */
    }
    free(data);
    int status = 0;
    ck_assert(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char *out = slurp_bytes(log, &len);
    fprintf(stderr, "%s: %.*s\n", path, out ? (int)len : 0, out ? out : "");
    free(out);
    return 1;
}

/* Replays every file of dir; returns how many there were. */
static int replay_dir(fuzz_fn fn, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    /* Not in a kt_tmpdir folder: the child's exit removes those. */
    char log[] = "/tmp/krylov-replay-XXXXXX";
    int fd = mkstemp(log);
    ck_assert(fd >= 0);
    close(fd);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ck_assert_msg(replay_one(fn, path, log) == 0,
                      "%s: the fuzz target failed on it (crash, sanitizer "
                      "report or leak; its output is above)",
                      path);
        n++;
    }
    closedir(d);
    unlink(log);
    return n;
}

static void replay(const char *name, fuzz_fn fn)
{
    char dir[256];
    snprintf(dir, sizeof dir, "test/fuzz/corpus/%s", name);
    int seeds = replay_dir(fn, dir);
    ck_assert_msg(seeds > 0,
                  "%s: no seed corpus (run from the repository "
                  "root)",
                  dir);
    snprintf(dir, sizeof dir, "test/fuzz/regress/%s", name);
    replay_dir(fn, dir);
}

START_TEST(replay_mtx) { replay("fuzz_mtx", kr_fuzz_mtx); }
END_TEST

START_TEST(replay_petsc_mat) { replay("fuzz_petsc_mat", kr_fuzz_petsc_mat); }
END_TEST

START_TEST(replay_petsc_vec) { replay("fuzz_petsc_vec", kr_fuzz_petsc_vec); }
END_TEST

START_TEST(replay_blocks) { replay("fuzz_blocks", kr_fuzz_blocks); }
END_TEST

START_TEST(replay_options) { replay("fuzz_options", kr_fuzz_options); }
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz_replay");
    TCase *t = tcase_create("replay");
    tcase_set_timeout(t, KT_HANG_GUARD_S);
    tcase_add_test(t, replay_mtx);
    tcase_add_test(t, replay_petsc_mat);
    tcase_add_test(t, replay_petsc_vec);
    tcase_add_test(t, replay_blocks);
    tcase_add_test(t, replay_options);
    suite_add_tcase(s, t);
    return kt_run(s);
}
