/* Output files (issue 16, items 3, 4 and 13): writers follow symbolic
 * links, write FIFOs, devices and descriptors directly and honour the
 * umask; the format follows the name (.gz, .bin) in every command; a bad
 * output is refused before the work; an option word is not a file name. */
#include "io/outfile.h"
#include "testproc.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static mode_t mode_of(const char *path)
{
    struct stat st;
    ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
    return st.st_mode;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void small_matrix(kr_ctx *ctx, kr_csr *A)
{
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:5", A), KR_OK);
}

static void assert_same_csr(const kr_csr *A, const kr_csr *B)
{
    ck_assert_int_eq(A->nrows, B->nrows);
    ck_assert_int_eq(A->nnz, B->nnz);
    for (int32_t i = 0; i <= A->nrows; i++)
        ck_assert_int_eq(A->rowptr[i], B->rowptr[i]);
    for (int32_t k = 0; k < A->nnz; k++) {
        ck_assert_int_eq(A->colind[k], B->colind[k]);
        ck_assert(A->val[k] == B->val[k]);
    }
}

static int starts_with_bytes(const char *path, const unsigned char *magic,
                             size_t n)
{
    unsigned char buf[8] = {0};
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s missing", path);
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    return got == n && memcmp(buf, magic, n) == 0;
}

static const unsigned char gzip_magic[] = {0x1f, 0x8b};
static const unsigned char petsc_mat_magic[] = {0x00, 0x12, 0x7b, 0x50};

/* ------------------------------------------------ item 3: where it goes */

START_TEST(symlink_followed_link_kept)
{
    const char *dir = kt_scratch_dir(), *other = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0}, B = {0};
    small_matrix(ctx, &A);
    /* a relative link into another folder, whose target exists */
    char target[4096], rel[4096];
    snprintf(target, sizeof target, "%s", kt_in_dir(other, "real.mtx"));
    ck_assert(kt_write_file(other, "real.mtx", "old\n") != NULL);
    snprintf(rel, sizeof rel, "../%s/real.mtx", strrchr(other, '/') + 1);
    ck_assert_int_eq(symlink(rel, kt_in_dir(dir, "link.mtx")), 0);
    ck_assert_int_eq(kr_write_mtx(ctx, kt_in_dir(dir, "link.mtx"), &A), KR_OK);
    ck_assert_msg(S_ISLNK(mode_of(kt_in_dir(dir, "link.mtx"))),
                  "the link was replaced by a file");
    ck_assert_int_eq(kr_read_mtx(ctx, target, &B), KR_OK);
    assert_same_csr(&A, &B);
    kr_csr_free(&B);
    /* a dangling link: its target is created, as the shell's > does */
    ck_assert_int_eq(
        symlink(kt_in_dir(other, "new.mtx"), kt_in_dir(dir, "d.mtx")), 0);
    ck_assert_int_eq(kr_write_mtx(ctx, kt_in_dir(dir, "d.mtx"), &A), KR_OK);
    ck_assert(S_ISLNK(mode_of(kt_in_dir(dir, "d.mtx"))));
    ck_assert(S_ISREG(mode_of(kt_in_dir(other, "new.mtx"))));
    ck_assert(kt_no_tmp_files(dir) && kt_no_tmp_files(other));
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(fifo_and_device_written_directly)
{
    const char *dir = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    const char *fifo = kt_in_dir(dir, "x.fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    /* a reader first, so the writer's open does not wait for one */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    ck_assert(rd >= 0);
    double x[3] = {1.5, -2.0, 0.25};
    ck_assert_int_eq(kr_write_dense_mtx(ctx, fifo, 3, 1, x), KR_OK);
    char buf[4096] = {0};
    ssize_t got = read(rd, buf, sizeof buf - 1);
    close(rd);
    ck_assert_msg(got > 0 && strstr(buf, "array real general\n3 1\n1.5\n-2\n"),
                  "read from the FIFO: '%s'", buf);
    ck_assert_msg(S_ISFIFO(mode_of(fifo)), "the FIFO was replaced");
    /* a link to /dev/null: the device stays a device, the link a link */
    ck_assert_msg(S_ISCHR(mode_of("/dev/null")),
                  "this machine's /dev/null is not a device before the test: "
                  "something replaced it");
    ck_assert_int_eq(symlink("/dev/null", kt_in_dir(dir, "null.mtx")), 0);
    ck_assert_int_eq(
        kr_write_dense_mtx(ctx, kt_in_dir(dir, "null.mtx"), 3, 1, x), KR_OK);
    ck_assert(S_ISLNK(mode_of(kt_in_dir(dir, "null.mtx"))));
    ck_assert(S_ISCHR(mode_of("/dev/null")));
    ck_assert(kt_no_tmp_files(dir));
    kr_ctx_destroy(ctx);
}
END_TEST

/* /dev/fd/N is the process's descriptor: written there, from its current
 * offset, never replaced. */
START_TEST(descriptor_names_write_to_the_descriptor)
{
    kr_ctx *ctx = kt_cpu();
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    char name[64];
    snprintf(name, sizeof name, "/dev/fd/%d", p[1]);
    double x[2] = {3.0, 4.0};
    ck_assert_msg(kr_write_dense_mtx(ctx, name, 2, 1, x) == KR_OK, "%s",
                  kr_ctx_error(ctx));
    close(p[1]);
    char buf[512] = {0};
    ssize_t got = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    ck_assert_msg(got > 0 && strstr(buf, "2 1\n3\n4\n"), "'%s'", buf);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(umask_honoured_mode_kept)
{
    const char *dir = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    double x[1] = {1.0};
    static const mode_t masks[] = {077, 022, 027};
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "new%d.mtx", i);
        umask(masks[i]);
        ck_assert_int_eq(kr_write_dense_mtx(ctx, kt_in_dir(dir, name), 1, 1, x),
                         KR_OK);
        ck_assert_msg((mode_of(kt_in_dir(dir, name)) & 0777) ==
                          (0666 & ~masks[i]),
                      "umask %03o gave mode %03o", (unsigned)masks[i],
                      (unsigned)(mode_of(kt_in_dir(dir, name)) & 0777));
    }
    /* a replaced file keeps its mode, whatever the umask */
    const char *old = kt_write_file(dir, "old.mtx", "x\n");
    ck_assert_int_eq(chmod(old, 0640), 0);
    umask(0);
    ck_assert_int_eq(
        kr_write_dense_mtx(ctx, kt_in_dir(dir, "old.mtx"), 1, 1, x), KR_OK);
    ck_assert_int_eq(mode_of(kt_in_dir(dir, "old.mtx")) & 0777, 0640);
    umask(022);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(check_refuses_bad_outputs_and_creates_nothing)
{
    const char *dir = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    ck_assert_int_eq(kr_outfile_check(ctx, "/nonexistent-krylov/x.mtx"),
                     KR_ERR_IO);
    ck_assert(strstr(kr_ctx_error(ctx), "/nonexistent-krylov/x.mtx"));
    ck_assert_int_eq(kr_outfile_check(ctx, dir), KR_ERR_IO);
    ck_assert(strstr(kr_ctx_error(ctx), "directory"));
    ck_assert_int_eq(kr_outfile_check(ctx, kt_in_dir(dir, "ok.mtx")), KR_OK);
    ck_assert_int_eq(kr_outfile_check(ctx, "/dev/stdout"), KR_OK);
    ck_assert_int_eq(count_entries(dir), 0);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ----------------------------------------- item 13: format by the name */

START_TEST(gz_name_writes_gzip)
{
    const char *dir = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0}, B = {0};
    small_matrix(ctx, &A);
    const char *path = kt_in_dir(dir, "a.mtx.gz");
    ck_assert_int_eq(kr_write_mtx(ctx, path, &A), KR_OK);
    ck_assert(starts_with_bytes(path, gzip_magic, 2));
    ck_assert_int_eq(kr_read_mtx(ctx, path, &B), KR_OK);
    assert_same_csr(&A, &B);
    double x[2] = {0.1, -7.0}, *y = NULL;
    int32_t n = 0, m = 0;
    path = kt_in_dir(dir, "x.mtx.gz");
    ck_assert_int_eq(kr_write_dense_mtx(ctx, path, 2, 1, x), KR_OK);
    ck_assert(starts_with_bytes(path, gzip_magic, 2));
    ck_assert_int_eq(kr_read_dense_mtx(ctx, path, &n, &m, &y), KR_OK);
    ck_assert(n == 2 && m == 1 && y[0] == x[0] && y[1] == x[1]);
    free(y);
    ck_assert(kt_no_tmp_files(dir));
    kr_csr_free(&A);
    kr_csr_free(&B);
    kr_ctx_destroy(ctx);
}
END_TEST

/* ------------------------------------ item 4: outputs checked first */

START_TEST(bad_output_refused_before_the_solve)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
    kt_child c;
    const char *const solve_o[] = {
        "solve",    "--gen", "poisson2d:30",
        "--method", "cg",    "--device",
        "cpu",      "-o",    "/nonexistent-krylov/x.mtx",
        NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, solve_o, &c), 3);
    char *out = kt_slurp(c.out), *err = kt_slurp(c.err);
    ck_assert_msg(strstr(err, "/nonexistent-krylov/x.mtx"), "%s", err);
    ck_assert_msg(!strstr(out, "iterations"), "it solved first:\n%s", out);
    free(out);
    free(err);
    const char *const solve_h[] = {"solve",    "--gen", "poisson2d:30",
                                   "--device", "cpu",   "--history",
                                   dir,        NULL}; /* a folder */
    ck_assert_int_eq(kt_run_krylov(dir, io, solve_h, &c), 3);
    out = kt_slurp(c.out);
    err = kt_slurp(c.err);
    ck_assert_msg(strstr(err, dir) && strstr(err, "directory"), "%s", err);
    ck_assert_msg(!strstr(out, "iterations"), "it solved first:\n%s", out);
    free(out);
    free(err);
    const char *const gen[] = {"gen", "poisson2d:30", "-o",
                               "/nonexistent-krylov/a.mtx", NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, gen, &c), 3);
    err = kt_slurp(c.err);
    ck_assert_msg(strstr(err, "/nonexistent-krylov/a.mtx"), "%s", err);
    free(err);
    ck_assert_int_eq(count_entries(dir), 0);
}
END_TEST

/* bench's --json and --markdown files too: no run before the refusal */
START_TEST(bench_bad_output_refused_before_the_runs)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
    kt_child c;
    const char *const args[] = {
        "bench",    "solve", "--gen",  "poisson2d:10",
        "--device", "cpu",   "--json", "/nonexistent-krylov/b.json",
        NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, args, &c), 3);
    char *out = kt_slurp(c.out), *err = kt_slurp(c.err);
    ck_assert_msg(strstr(err, "/nonexistent-krylov/b.json"), "%s", err);
    ck_assert_msg(!out || !*out, "it ran first:\n%s", out);
    free(out);
    free(err);
}
END_TEST

/* --------------------------- item 13: option words, format by the name */

START_TEST(option_word_is_not_a_file_name)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
    kt_child c;
    const char *const args[] = {"solve", "--gen", "poisson2d:4", "--device",
                                "cpu",   "-o",    "--json",      NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, args, &c), 2);
    char *err = kt_slurp(c.err);
    ck_assert_msg(strstr(err, "./--json"), "%s", err);
    free(err);
    ck_assert_int_eq(count_entries(dir), 0);
    /* spelled as a path, it is a file name */
    const char *const path[] = {"gen", "poisson2d:4", "-o", "./--json", NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, path, &c), 0);
    ck_assert(kt_file_exists(kt_in_dir(dir, "--json")));
}
END_TEST

START_TEST(gen_and_solve_pick_the_format_by_name)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir();
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0}, B = {0};
    ck_assert_int_eq(kr_generate(ctx, "poisson2d:6", &A), KR_OK);
    kt_child c;
    const char *const gz[] = {"gen", "poisson2d:6", "-o", "p.mtx.gz", NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, gz, &c), 0);
    ck_assert(starts_with_bytes(kt_in_dir(dir, "p.mtx.gz"), gzip_magic, 2));
    ck_assert_int_eq(kr_read_mtx(ctx, kt_in_dir(dir, "p.mtx.gz"), &B), KR_OK);
    assert_same_csr(&A, &B);
    kr_csr_free(&B);
    const char *const bin[] = {"gen", "poisson2d:6", "-o", "p.bin", NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, bin, &c), 0);
    ck_assert(starts_with_bytes(kt_in_dir(dir, "p.bin"), petsc_mat_magic, 4));
    ck_assert_int_eq(kr_read_petsc_mat(ctx, kt_in_dir(dir, "p.bin"), &B),
                     KR_OK);
    assert_same_csr(&A, &B);
    kr_csr_free(&B);
    const char *const solve[] = {"solve", "p.bin", "--method", "cg", "--device",
                                 "cpu",   "-o",    "x.mtx.gz", NULL};
    ck_assert_int_eq(kt_run_krylov(dir, io, solve, &c), 0);
    ck_assert(starts_with_bytes(kt_in_dir(dir, "x.mtx.gz"), gzip_magic, 2));
    int32_t n = 0, m = 0;
    double *x = NULL;
    ck_assert_int_eq(
        kr_read_dense_mtx(ctx, kt_in_dir(dir, "x.mtx.gz"), &n, &m, &x), KR_OK);
    ck_assert(n == 36 && m == 1);
    for (int i = 0; i < n; i++) /* b = A*ones */
        ck_assert_msg(fabs(x[i] - 1.0) < 1e-6, "x[%d] = %g", i, x[i]);
    free(x);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* The CLI's history file goes through the same writer: umask, links. */
START_TEST(cli_history_honours_umask_and_links)
{
    const char *dir = kt_scratch_dir(), *io = kt_scratch_dir(),
               *other = kt_scratch_dir();
    ck_assert_int_eq(
        symlink(kt_in_dir(other, "h.csv"), kt_in_dir(dir, "h.csv")), 0);
    const char *const args[] = {"solve", "--gen",     "poisson2d:4", "--device",
                                "cpu",   "--history", "h.csv",       "-o",
                                "x.mtx", NULL};
    kt_child c = kt_start(dir, io, 027, args);
    ck_assert_int_eq(kt_wait(&c), 0);
    ck_assert(S_ISLNK(mode_of(kt_in_dir(dir, "h.csv"))));
    ck_assert_int_eq(mode_of(kt_in_dir(other, "h.csv")) & 0777, 0640);
    ck_assert_int_eq(mode_of(kt_in_dir(dir, "x.mtx")) & 0777, 0640);
    char *h = kt_slurp(kt_in_dir(other, "h.csv"));
    ck_assert(h && !strncmp(h, "iteration,residual_norm", 23));
    free(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("outfile");
    TCase *lib = tcase_create("library");
    tcase_add_test(lib, symlink_followed_link_kept);
    tcase_add_test(lib, fifo_and_device_written_directly);
    tcase_add_test(lib, descriptor_names_write_to_the_descriptor);
    tcase_add_test(lib, umask_honoured_mode_kept);
    tcase_add_test(lib, check_refuses_bad_outputs_and_creates_nothing);
    tcase_add_test(lib, gz_name_writes_gzip);
    suite_add_tcase(s, lib);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, KT_HANG_GUARD_S);
    tcase_add_test(cli, bad_output_refused_before_the_solve);
    tcase_add_test(cli, bench_bad_output_refused_before_the_runs);
    tcase_add_test(cli, option_word_is_not_a_file_name);
    tcase_add_test(cli, gen_and_solve_pick_the_format_by_name);
    tcase_add_test(cli, cli_history_honours_umask_and_links);
    suite_add_tcase(s, cli);
    return s;
}

int main(void) { return kt_run(suite()); }
