/* The public functions the krylov command uses instead of the internals
 * (drivers/ sees include/krylov.h only): preconditioner options by name
 * and what a preconditioner reports about itself, the line reader, the
 * text writer, the GPU rules of "auto" and the random query pairs. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void poisson(kr_ctx *ctx, const char *spec, kr_csr *A)
{
    ck_assert_int_eq(kr_generate(ctx, spec, A), KR_OK);
}

START_TEST(precond_options_by_name)
{
    kr_ctx *ctx = kt_cpu();
    kr_precond_options o, before;
    kr_precond_options_default(&o);
    ck_assert_int_eq(
        kr_precond_options_set(ctx, "bjacobi", &o, "block_size", "8"), KR_OK);
    ck_assert_int_eq(o.block_size, 8);
    ck_assert_int_eq(
        kr_precond_options_set(ctx, "bjacobi", &o, "singular", "identity"),
        KR_OK);
    ck_assert_int_eq(o.singular, KR_SINGULAR_IDENTITY);
    ck_assert_int_eq(
        kr_precond_options_set(ctx, "bjacobi", &o, "blocking", "scc"), KR_OK);
    ck_assert_int_eq(o.blocking, KR_BLOCKING_SCC);
    ck_assert_int_eq(kr_precond_options_set(ctx, "bjacobi", &o, "fixed", "1"),
                     KR_OK);
    ck_assert_int_eq(o.fixed, 1);
    ck_assert_uint_eq(o.size, sizeof o);
    /* refused values and keys change nothing */
    before = o;
    const char *bad[][2] = {{"block_size", "33"},
                            {"block_size", "8x"},
                            {"singular", "zero"},
                            {"fixed", "2"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_int_eq(
            kr_precond_options_set(ctx, "bjacobi", &o, bad[i][0], bad[i][1]),
            KR_ERR_ARG);
    ck_assert_int_eq(kr_precond_options_set(ctx, "bjacobi", &o, "colour", "1"),
                     KR_ERR_UNSUPPORTED);
    ck_assert_int_eq(
        kr_precond_options_set(ctx, "jacobi", &o, "block_size", "4"),
        KR_ERR_UNSUPPORTED);
    ck_assert_int_eq(kr_precond_options_set(ctx, "ilu", &o, "block_size", "4"),
                     KR_ERR_ARG);
    ck_assert(!memcmp(&o, &before, sizeof o));
    ck_assert(kr_precond_has_option("bjacobi", "block_sizes"));
    ck_assert(kr_precond_has_option("bjacobi", "singular"));
    ck_assert(!kr_precond_has_option("bjacobi", "colour"));
    ck_assert(!kr_precond_has_option("jacobi", "block_size"));
    ck_assert(!kr_precond_has_option("ilu", "block_size"));
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(options_by_name_build_what_the_struct_builds)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0};
    poisson(ctx, "poisson2d:20", &A);
    kr_precond_options by_name, by_struct;
    kr_precond_options_default(&by_name);
    kr_precond_options_default(&by_struct);
    ck_assert_int_eq(
        kr_precond_options_set(ctx, "bjacobi", &by_name, "block_size", "5"),
        KR_OK);
    ck_assert_int_eq(
        kr_precond_options_set(ctx, "bjacobi", &by_name, "fixed", "1"), KR_OK);
    by_struct.block_size = 5;
    by_struct.fixed = 1;
    kr_precond *P, *Q;
    ck_assert_int_eq(kr_precond_create_opts(ctx, &A, "bjacobi", &by_name, &P),
                     KR_OK);
    ck_assert_int_eq(kr_precond_create_opts(ctx, &A, "bjacobi", &by_struct, &Q),
                     KR_OK);
    int32_t nb = kr_precond_block_count(P);
    ck_assert_int_eq(nb, (400 + 4) / 5);
    ck_assert_int_eq(kr_precond_block_count(Q), nb);
    kr_precond_destroy(P);
    kr_precond_destroy(Q);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(precond_info_reports_blocks_and_stages)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0};
    poisson(ctx, "poisson2d:16", &A);
    kr_precond *P;
    ck_assert_int_eq(kr_precond_create(ctx, &A, "bjacobi", &P), KR_OK);
    kr_precond_info info;
    ck_assert_int_eq(kr_precond_get_info(P, &info), KR_OK);
    ck_assert_int_eq(info.blocks, kr_precond_block_count(P));
    ck_assert_int_gt(info.blocks, 0);
    ck_assert_int_eq(info.singular_blocks, 0);
    ck_assert_int_eq(info.stages, 3);
    const char *names[] = {"upload", "blocking", "invert"};
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(info.stage[i].name, names[i]);
        ck_assert(info.stage[i].seconds >= 0.0);
    }
    ck_assert(info.stage[0].seconds == 0.0); /* the CPU uploads nothing */
    kr_precond_destroy(P);
    ck_assert_int_eq(kr_precond_create(ctx, &A, "jacobi", &P), KR_OK);
    ck_assert_int_eq(kr_precond_get_info(P, &info), KR_OK);
    ck_assert_int_eq(info.blocks, 0);
    ck_assert_int_eq(info.stages, 0);
    kr_block_cond c;
    ck_assert_int_eq(kr_precond_block_cond(ctx, P, &A, &c), KR_ERR_ARG);
    ck_assert(strstr(kr_ctx_error(ctx), "no diagonal blocks"));
    kr_block_cond_free(&c);
    kr_precond_destroy(P);
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

typedef struct lines_seen {
    char text[4][32];
    long number[4];
    int n, stop_at;
} lines_seen;

static int keep_line(void *user, const char *line, long number)
{
    lines_seen *s = user;
    snprintf(s->text[s->n], sizeof s->text[0], "%s", line);
    s->number[s->n++] = number;
    return s->n == s->stop_at;
}

START_TEST(read_lines_numbers_and_stops)
{
    kr_ctx *ctx = kt_cpu();
    const char *dir = kt_tmpdir();
    const char *path = kt_write_file(dir, "q.txt", "1 2\r\n\n# c\n3 4");
    lines_seen s = {.stop_at = 0};
    ck_assert_int_eq(kr_read_lines(ctx, path, keep_line, &s), KR_OK);
    ck_assert_int_eq(s.n, 4);
    ck_assert_str_eq(s.text[0], "1 2");
    ck_assert_str_eq(s.text[1], "");
    ck_assert_str_eq(s.text[3], "3 4");
    ck_assert_int_eq(s.number[3], 4);
    lines_seen t = {.stop_at = 2};
    ck_assert_int_eq(kr_read_lines(ctx, path, keep_line, &t), KR_OK);
    ck_assert_int_eq(t.n, 2);
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none.txt", dir);
    ck_assert_int_eq(kr_read_lines(ctx, missing, keep_line, &t), KR_ERR_IO);
    ck_assert(strstr(kr_ctx_error(ctx), "none.txt"));
    kr_ctx_destroy(ctx);
}
END_TEST

static void emit_two_lines(FILE *f, const void *arg)
{
    fprintf(f, "%s\nsecond\n", (const char *)arg);
}

START_TEST(write_text_whole_or_refused)
{
    kr_ctx *ctx = kt_cpu();
    const char *dir = kt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    ck_assert_int_eq(kr_outfile_check(ctx, path), KR_OK);
    ck_assert_int_eq(kr_write_text(ctx, path, emit_two_lines, "first"), KR_OK);
    char *text = kt_slurp(path);
    ck_assert_str_eq(text, "first\nsecond\n");
    free(text);
    ck_assert(kt_no_tmp_files(dir));
    snprintf(path, sizeof path, "%s/no/such/dir/out.txt", dir);
    ck_assert_int_eq(kr_outfile_check(ctx, path), KR_ERR_IO);
    ck_assert_int_eq(kr_write_text(ctx, path, emit_two_lines, "x"), KR_ERR_IO);
    kr_ctx_destroy(ctx);
}
END_TEST

START_TEST(auto_gpu_pick_is_a_format)
{
    kr_ctx *ctx = kt_cpu();
    kr_csr A = {0};
    poisson(ctx, "poisson3d:12", &A);
    const char *format = NULL;
    char why[320];
    ck_assert_int_eq(kr_format_auto_gpu(ctx, &A, &format, why, sizeof why),
                     KR_OK);
    int known = 0;
    for (const char *const *p = kr_format_names(); *p; p++)
        known |= !strcmp(*p, format);
    ck_assert_msg(known, "'%s' is not a format", format);
    ck_assert_int_gt((int)strlen(why), 0);
    ck_assert_int_eq(kr_format_auto_gpu(ctx, NULL, &format, why, sizeof why),
                     KR_ERR_ARG);
    ck_assert_str_eq(format, "csr");
    kr_csr_free(&A);
    kr_ctx_destroy(ctx);
}
END_TEST

/* splitmix64, as the reference for the pairs' definition */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

START_TEST(random_pairs_are_seeded_and_in_range)
{
    enum { Q = 500 };
    int32_t a[2 * Q], b[2 * Q];
    kr_graph_random_pairs(1000, Q, 7, a);
    kr_graph_random_pairs(1000, Q, 7, b);
    ck_assert(!memcmp(a, b, sizeof a));
    for (int k = 0; k < 2 * Q; k++) {
        ck_assert(a[k] >= 0 && a[k] < 1000);
        ck_assert_int_eq(
            a[k], (int32_t)(mix(7 * 0x100000001b3ull + (uint64_t)k) % 1000));
    }
    kr_graph_random_pairs(1000, Q, 8, b);
    ck_assert(memcmp(a, b, sizeof a));
    kr_graph_random_pairs(0, Q, 7, b);
    for (int k = 0; k < 2 * Q; k++)
        ck_assert_int_eq(b[k], 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tool_api");
    TCase *tc = tcase_create("tool_api");
    tcase_set_timeout(tc, KT_HANG_GUARD_S);
    tcase_add_test(tc, precond_options_by_name);
    tcase_add_test(tc, options_by_name_build_what_the_struct_builds);
    tcase_add_test(tc, precond_info_reports_blocks_and_stages);
    tcase_add_test(tc, read_lines_numbers_and_stops);
    tcase_add_test(tc, write_text_whole_or_refused);
    tcase_add_test(tc, auto_gpu_pick_is_a_format);
    tcase_add_test(tc, random_pairs_are_seeded_and_in_range);
    suite_add_tcase(s, tc);
    return kt_run(s);
}
