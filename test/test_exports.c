/* libkrylov.so exports exactly the functions include/krylov.h declares:
 * no internal kr_ helper, no symbol of the CUDA runtime linked into it
 * (which would clash with a program's own), and nothing missing. */
#include "testutil.h"

#include <ctype.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXNAMES 1024

typedef struct names {
    char *v[MAXNAMES];
    int n;
} names;

static int has(const names *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return 1;
    return 0;
}

static void add(names *s, const char *name, size_t len)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)len, name);
    if (has(s, buf)) return;
    ck_assert_int_lt(s->n, MAXNAMES);
    s->v[s->n++] = strdup(buf);
}

/* Every "kr_name(" in the header: the functions it declares (not "kr_status
 * (*fn)(...)", a pointer type). */
static void header_names(const char *text, names *s)
{
    for (const char *p = strstr(text, "kr_"); p; p = strstr(p + 1, "kr_")) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_')
            len++;
        const char *q = p + len;
        while (*q == ' ')
            q++;
        if (*q == '(' && q[1] != '*') add(s, p, len);
    }
}

/* The dynamic symbols the library defines (nm -D --defined-only). */
static void exported_names(const char *lib, names *s)
{
    char cmd[4200], line[512];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", lib);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", addr, type, name) == 3)
            add(s, name, strlen(name));
    }
    ck_assert_int_eq(pclose(p), 0);
}

START_TEST(shared_library_exports_the_header)
{
    char *header = kt_slurp("include/krylov.h");
    if (!header) {
        kt_skip("shared_library_exports_the_header",
                "not run from the repository root");
        return;
    }
    char copy[4096], lib[4200];
    snprintf(copy, sizeof copy, "%s", kt_krylov_bin());
    snprintf(lib, sizeof lib, "%s/libkrylov.so", dirname(copy));
    if (!kt_file_exists(lib) || system("nm --version >/dev/null 2>&1") != 0) {
        kt_skip("shared_library_exports_the_header", "no libkrylov.so or nm");
        free(header);
        return;
    }
    names declared = {0}, exported = {0};
    header_names(header, &declared);
    exported_names(lib, &exported);
    ck_assert_int_gt(declared.n, 50);
    for (int i = 0; i < exported.n; i++)
        ck_assert_msg(has(&declared, exported.v[i]),
                      "%s exports %s, which include/krylov.h does not declare",
                      lib, exported.v[i]);
    for (int i = 0; i < declared.n; i++)
        ck_assert_msg(has(&exported, declared.v[i]),
                      "include/krylov.h declares %s, which %s does not export",
                      declared.v[i], lib);
    for (int i = 0; i < declared.n; i++)
        free(declared.v[i]);
    for (int i = 0; i < exported.n; i++)
        free(exported.v[i]);
    free(header);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exports");
    TCase *tc = tcase_create("exports");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, shared_library_exports_the_header);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
