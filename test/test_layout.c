/* The source tree keeps its seams: the krylov command's code in drivers/
 * includes only include/krylov.h, its own headers and system headers (the
 * Makefile compiles it with -Iinclude alone; this test names the file and
 * line); no code outside precond/ and the tests compares a name with
 * "bjacobi"; libkrylov.so does not link cuBLAS (only the bench tool does).
 * Run from the repository root, as `make test` does; skipped otherwise. */
#include "testutil.h"

#include <ctype.h>
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The repository's own folders: an <...> include naming one of them is
 * not a system header. */
static const char *const repo_dirs[] = {
    "core", "io",    "spmv",    "precond", "solver",  "graph",
    "data", "tools", "drivers", "test",    "include", NULL};

static int is_repo_dir(const char *name, size_t len)
{
    for (int i = 0; repo_dirs[i]; i++)
        if (strlen(repo_dirs[i]) == len && !strncmp(repo_dirs[i], name, len))
            return 1;
    return 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* The header an #include line names, into name (with its delimiter in
 * *quoted: 1 for "", 0 for <>); 0 when line is no #include. */
static int included(const char *line, char *name, size_t len, int *quoted)
{
    while (isspace((unsigned char)*line))
        line++;
    if (*line++ != '#') return 0;
    while (isspace((unsigned char)*line))
        line++;
    if (strncmp(line, "include", 7)) return 0;
    line += 7;
    while (isspace((unsigned char)*line))
        line++;
    char close = *line == '"' ? '"' : *line == '<' ? '>' : 0;
    if (!close) return 0;
    const char *end = strchr(line + 1, close);
    if (!end) return 0;
    snprintf(name, len, "%.*s", (int)(end - line - 1), line + 1);
    *quoted = close == '"';
    return 1;
}

/* NULL when a file in dir may include name, else why not. */
static const char *include_refused(const char *dir, const char *name,
                                   int quoted)
{
    const char *slash = strchr(name, '/');
    if (!quoted)
        return slash && is_repo_dir(name, (size_t)(slash - name))
                   ? "a header of the library's tree"
                   : NULL;
    if (!strcmp(name, "krylov.h")) return NULL;
    if (slash) return "a header outside drivers/ (only krylov.h is public)";
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? NULL : "not a header of drivers/";
}

/* Every refused #include of text (a file of dir), reported as file:line
 * to report (unless NULL); the count. */
static int check_includes(const char *dir, const char *file, char *text,
                          FILE *report)
{
    int bad = 0, lineno = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[512];
        int quoted;
        lineno++;
        if (!included(line, name, sizeof name, &quoted)) continue;
        const char *why = include_refused(dir, name, quoted);
        if (why && report)
            fprintf(report, "%s/%s:%d: includes %s: %s\n", dir, file, lineno,
                    name, why);
        bad += why != NULL;
    }
    return bad;
}

START_TEST(include_rule_refuses_internal_headers)
{
    /* The rule itself, on lines of a made-up file, so that it can fail. */
    char ok[] = "#include \"krylov.h\"\n#include <stdio.h>\n"
                "#include <sys/stat.h>\n#include \"options.h\"\n";
    ck_assert_int_eq(check_includes("drivers", "ok.c", ok, NULL), 0);
    char bad[] = "#include \"core/ctx.h\"\n# include <precond/precond.h>\n"
                 "#include \"no_such_header.h\"\n#include \"../io/read.h\"\n";
    ck_assert_int_eq(check_includes("drivers", "bad.c", bad, NULL), 4);
}
END_TEST

START_TEST(drivers_include_the_public_header_only)
{
    DIR *d = opendir("drivers");
    if (!d) {
        kt_skip("drivers_include_the_public_header_only",
                "not run from the repository root");
        return;
    }
    int bad = 0, files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, ".c") && !ends_with(e->d_name, ".h"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "drivers/%s", e->d_name);
        char *text = kt_slurp(path);
        ck_assert_msg(text != NULL, "cannot read %s", path);
        bad += check_includes("drivers", e->d_name, text, stderr);
        files++;
        free(text);
    }
    closedir(d);
    ck_assert_int_gt(files, 10);
    ck_assert_msg(bad == 0,
                  "%d includes of internal headers in drivers/ "
                  "(listed on stderr)",
                  bad);
}
END_TEST

/* Lines of the files under dir (recursively) that compare a string with
 * "bjacobi", printed; the count. */
static int name_tests(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            found += name_tests(path);
            continue;
        }
        if (!ends_with(path, ".c") && !ends_with(path, ".h") &&
            !ends_with(path, ".cu"))
            continue;
        char *text = kt_slurp(path);
        int lineno = 0;
        for (char *line = text ? strtok(text, "\n") : NULL; line;
             line = strtok(NULL, "\n")) {
            lineno++;
            if (strstr(line, "cmp(") && strstr(line, "\"bjacobi\"")) {
                fprintf(stderr, "%s:%d: tests for the name bjacobi\n", path,
                        lineno);
                found++;
            }
        }
        free(text);
    }
    closedir(d);
    return found;
}

START_TEST(only_precond_knows_bjacobi_by_name)
{
    if (!kt_file_exists("precond/bjacobi.c")) {
        kt_skip("only_precond_knows_bjacobi_by_name",
                "not run from the repository root");
        return;
    }
    static const char *const dirs[] = {"core",   "io",      "spmv",
                                       "solver", "graph",   "data",
                                       "tools",  "drivers", "examples"};
    int found = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        found += name_tests(dirs[i]);
    ck_assert_msg(found == 0,
                  "%d places outside precond/ test for \"bjacobi\" (listed "
                  "on stderr): ask the preconditioner (kr_precond_get_info, "
                  "kr_precond_has_option) instead",
                  found);
}
END_TEST

START_TEST(library_does_not_link_cublas)
{
    char copy[4096], cmd[4400];
    snprintf(copy, sizeof copy, "%s", kt_krylov_bin());
    const char *dir = dirname(copy);
    snprintf(cmd, sizeof cmd, "%s/libkrylov.so", dir);
    if (!kt_file_exists(cmd) || system("nm --version >/dev/null 2>&1") != 0) {
        kt_skip("library_does_not_link_cublas", "no libkrylov.so or nm");
        return;
    }
    /* neither a needed library nor an undefined symbol of cuBLAS */
    snprintf(cmd, sizeof cmd,
             "{ readelf -d %s/libkrylov.so; nm -D --undefined-only "
             "%s/libkrylov.so; nm %s/libkrylov.a; } 2>/dev/null | "
             "grep -qi cublas",
             dir, dir, dir);
    ck_assert_msg(system(cmd) != 0,
                  "libkrylov names cuBLAS: only tools/bench may use it");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, include_rule_refuses_internal_headers);
    tcase_add_test(tc, drivers_include_the_public_header_only);
    tcase_add_test(tc, only_precond_knows_bjacobi_by_name);
    tcase_add_test(tc, library_does_not_link_cublas);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
