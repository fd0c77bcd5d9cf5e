/* Command-line parsing: "--opt value" and "--opt=value", numbers parsed
 * strictly (the whole token, in range), choices checked against the
 * library's registries so the messages list exactly what is accepted. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("krylov: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("krylov: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "(run 'krylov%s%s --help' for the usage)\n",
            command ? " " : "", command ? command : "");
    return CLI_EXIT_USAGE;
}

int cli_exit_code(kr_status st)
{
    switch (st) {
    case KR_OK: return CLI_EXIT_OK;
    case KR_ERR_NOMEM:
    case KR_ERR_DEVICE:
    case KR_ERR_NOT_COMPILED: return CLI_EXIT_DEVICE;
    default: return CLI_EXIT_INPUT;
    }
}

void cli_print_list(FILE *f, const char *const *names)
{
    for (int i = 0; names && names[i]; i++)
        fprintf(f, "%s%s", i ? ", " : "", names[i]);
}

void cli_print_exit_codes(FILE *f)
{
    fputs("exit codes:\n"
          "  0  success (solve: converged)\n"
          "  1  the solve did not converge (the reason is printed; -o "
          "still writes\n"
          "     the last iterate)\n"
          "  2  usage error: unknown option or command, missing or bad "
          "value\n"
          "  3  input error: unreadable or malformed file, wrong sizes, "
          "non-square\n"
          "     matrix, zero diagonal for jacobi, unwritable output\n"
          "  4  device or memory error, or CUDA asked for but not built in\n"
          "  5  a program the command needs is not installed "
          "(compare-petsc\n"
          "     without PETSc)\n"
          "  130  interrupted (SIGINT or SIGTERM); no partial output file is "
          "left\n",
          f);
}

static const cli_opt *find_opt(const cli_opt *opts, const char *name,
                               size_t len)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (strlen(o->name) == len && memcmp(o->name, name, len) == 0) return o;
        if (o->alias && o->kind != CLI_PETSC && strlen(o->alias) == len &&
            memcmp(o->alias, name, len) == 0)
            return o;
    }
    return NULL;
}

/* Length of the PETSc name at the head of a map entry ("petsc",
 * "petsc=krylov" or "petsc!why"). */
static size_t key_len(const char *entry) { return strcspn(entry, "=!"); }

/* A "petsc!why" entry names a PETSc value krylov refuses, with the reason. */
static int refused(const char *entry) { return entry[key_len(entry)] == '!'; }

static int in_map(const char *const *map, const char *v)
{
    for (int i = 0; map[i]; i++)
        if (key_len(map[i]) == strlen(v) && !strncmp(map[i], v, strlen(v)))
            return 1;
    return 0;
}

/* " <cg,gmres,bcgs,bicgstab,idr>": the values a PETSc-style option takes. */
static size_t petsc_values(const cli_opt *opts, const cli_opt *p, char *buf,
                           size_t len)
{
    const char *const *v = p->choices();
    size_t used = 0;
    for (int i = 0; v[i] && used < len; i++)
        if (!refused(v[i]))
            used +=
                (size_t)snprintf(buf + used, len - used, "%s%.*s",
                                 used ? "," : " <", (int)key_len(v[i]), v[i]);
    const cli_opt *t = find_opt(opts, p->alias, strlen(p->alias));
    const char *const *own = t && t->choices ? t->choices() : NULL;
    for (int i = 0; p->min == 1 && own && own[i] && used < len; i++)
        if (!in_map(v, own[i]))
            used += (size_t)snprintf(buf + used, len - used, ",%s", own[i]);
    if (used < len) used += (size_t)snprintf(buf + used, len - used, ">");
    return used;
}

/* "-ksp_type <cg,gmres,...>, -ksp_rtol, ..." into buf: the PETSc-style
 * options of the table, with the values of those that take a list. */
static void petsc_list(const cli_opt *opts, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const cli_opt *o = opts; o->name && used < len; o++) {
        if (o->kind != CLI_PETSC) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 used ? ", " : "", o->name);
        if (o->choices && used < len)
            used += petsc_values(opts, o, buf + used, len - used);
    }
}

static int has_petsc(const cli_opt *opts)
{
    for (const cli_opt *o = opts; o->name; o++)
        if (o->kind == CLI_PETSC) return 1;
    return 0;
}

/* what is "-pc_type ilu" or "-mat_type": never silently ignored; why, when
 * not NULL, says why a value PETSc has is refused and what to use. */
static int unsupported_petsc(const cli_spec *spec, const char *what,
                             const char *why)
{
    char list[1024];
    petsc_list(spec->opts, list, sizeof list);
    return cli_usage_error(spec->command,
                           "unsupported PETSc-style option '%s'%s%s "
                           "(supported: %s)",
                           what, why ? ": " : "", why ? why : "", list);
}

static int unknown_option(const cli_spec *spec, const char *arg, size_t len)
{
    char list[1024] = "";
    size_t used = 0;
    if (arg[1] != '-' && has_petsc(spec->opts)) {
        snprintf(list, sizeof list, "%.*s", (int)len, arg);
        return unsupported_petsc(spec, list, NULL);
    }
    for (const cli_opt *o = spec->opts; o->name && used < sizeof list; o++)
        if (o->kind != CLI_PETSC)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     used ? ", " : "", o->name);
    return cli_usage_error(spec->command,
                           "unknown option '%.*s' for '%s' "
                           "(valid: %s, --help)",
                           (int)len, arg, spec->command, list);
}

/* The whole token is one base-10 integer, no blanks. */
static int parse_long(const char *s, long *v)
{
    char *end;
    if (!*s || isspace((unsigned char)*s)) return 0;
    errno = 0;
    *v = strtol(s, &end, 10);
    return *end == '\0' && errno == 0;
}

/* The whole token is one finite decimal number, no blanks: strtod also
 * takes hex floats ("0x10" is 16) and "inf", which no user means as a
 * tolerance; an underflow ("1e-400" becomes 0) is refused too. */
static int parse_real(const char *s, double *v)
{
    char *end;
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s)) return 0;
    errno = 0;
    *v = strtod(s, &end);
    return *end == '\0' && errno != ERANGE && isfinite(*v);
}

static int bad_number(const cli_spec *spec, const cli_opt *o, const char *v)
{
    const char *what = o->kind == CLI_INT ? "an integer" : "a finite number";
    if (o->max >= (double)INT_MAX || isinf(o->max))
        return cli_usage_error(spec->command, "%s: '%s' is not %s >= %g",
                               o->name, v, what, o->min);
    return cli_usage_error(spec->command, "%s: '%s' is not %s in %g..%g",
                           o->name, v, what, o->min, o->max);
}

static int set_choice(const cli_spec *spec, const cli_opt *o, const char *v,
                      void *field)
{
    const char *const *names = o->choices();
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], v) == 0) {
            *(const char **)field = names[i];
            return 0;
        }
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; names[i] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i ? ", " : "", names[i]);
    return cli_usage_error(spec->command, "%s: unknown value '%s' (valid: %s)",
                           o->name, v, list);
}

static int set_value(const cli_spec *spec, const cli_opt *o, const char *v,
                     void *out)
{
    void *field = (char *)out + o->offset;
    long l;
    double d;
    switch (o->kind) {
    case CLI_FLAG: *(int *)field = 1; return 0;
    case CLI_STR: *(const char **)field = v; return 0;
    case CLI_CHOICE: return set_choice(spec, o, v, field);
    case CLI_PETSC: return 0; /* translated by parse_petsc first */
    case CLI_INT:
        if (!parse_long(v, &l) || l < o->min || l > o->max)
            return bad_number(spec, o, v);
        *(int *)field = (int)l;
        return 0;
    case CLI_REAL:
        if (!parse_real(v, &d) || d < o->min || d > o->max)
            return bad_number(spec, o, v);
        *(double *)field = d;
        return 0;
    }
    return 0;
}

/* The krylov value a PETSc-style value v stands for, or NULL (with *why
 * set when the map refuses v on purpose). */
static const char *petsc_value(const cli_opt *p, const cli_opt *target,
                               const char *v, const char **why)
{
    const char *const *map = p->choices();
    *why = NULL;
    for (int i = 0; map[i]; i++) {
        size_t n = key_len(map[i]);
        if (strlen(v) != n || strncmp(map[i], v, n)) continue;
        if (refused(map[i])) {
            *why = map[i] + n + 1;
            return NULL;
        }
        return map[i][n] ? map[i] + n + 1 : map[i];
    }
    const char *const *own = target->choices ? target->choices() : NULL;
    for (int i = 0; p->min == 1 && own && own[i]; i++)
        if (!strcmp(own[i], v)) return own[i];
    return NULL;
}

/* A PETSc-style option p: sets its target with the (translated) value v,
 * errors naming p. */
static int parse_petsc(const cli_spec *spec, const cli_opt *p, const char *v,
                       void *out)
{
    const cli_opt *target = find_opt(spec->opts, p->alias, strlen(p->alias));
    if (!target || target->kind == CLI_PETSC)
        return cli_usage_error(spec->command, "%s: no option %s", p->name,
                               p->alias);
    if (v && p->choices) {
        const char *why;
        const char *k = petsc_value(p, target, v, &why);
        if (!k) {
            char what[256];
            snprintf(what, sizeof what, "%s %s", p->name, v);
            return unsupported_petsc(spec, what, why);
        }
        v = k;
    }
    cli_opt named = *target; /* so a bad value's message names p */
    named.name = p->name;
    return set_value(spec, &named, v, out);
}

static int takes_value(const cli_spec *spec, const cli_opt *o)
{
    if (o->kind == CLI_PETSC)
        o = find_opt(spec->opts, o->alias, strlen(o->alias));
    return o && o->kind != CLI_FLAG && o->kind != CLI_PETSC;
}

/* "-x" or "--x": taken as a forgotten value ("-o --json"), not as a
 * file name; "-" alone (standard input or output) is a value. */
static int looks_like_option(const char *v) { return v[0] == '-' && v[1]; }

/* One option at argv[*i]; advances *i past its value. */
static int parse_option(const cli_spec *spec, int argc, char **argv, int *i,
                        void *out)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const cli_opt *o = find_opt(spec->opts, arg, len);
    if (!o) return unknown_option(spec, arg, len);
    if (o->kind == CLI_PETSC && !takes_value(spec, o)) {
        if (eq)
            return cli_usage_error(spec->command, "%s takes no value", o->name);
        return parse_petsc(spec, o, NULL, out);
    }
    if (o->kind == CLI_PETSC) {
        if (eq) return parse_petsc(spec, o, eq + 1, out);
        if (*i + 1 >= argc)
            return cli_usage_error(spec->command, "%s needs a value", o->name);
        *i += 1;
        return parse_petsc(spec, o, argv[*i], out);
    }
    if (o->kind == CLI_FLAG) {
        if (eq)
            return cli_usage_error(spec->command, "%s takes no value", o->name);
        return set_value(spec, o, NULL, out);
    }
    if (eq) return set_value(spec, o, eq + 1, out);
    if (*i + 1 >= argc)
        return cli_usage_error(spec->command, "%s needs a value (%s)", o->name,
                               o->arg);
    *i += 1;
    if (o->kind == CLI_STR && looks_like_option(argv[*i]))
        return cli_usage_error(spec->command,
                               "%s needs a value (%s), but '%s' looks like an "
                               "option (for a file of that name write "
                               "./%s)",
                               o->name, o->arg, argv[*i], argv[*i]);
    return set_value(spec, o, argv[*i], out);
}

int cli_parse(const cli_spec *spec, int argc, char **argv, void *out,
              const char **pos, int *npos)
{
    int only_pos = 0;
    *npos = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int rc = 0;
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
        } else if (!only_pos && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            *(int *)((char *)out + spec->help_offset) = 1;
        } else if (!only_pos && a[0] == '-' && a[1] != '\0') {
            rc = parse_option(spec, argc, argv, &i, out);
        } else if (*npos < spec->max_pos) {
            pos[(*npos)++] = a;
        } else {
            rc = cli_usage_error(spec->command, "unexpected argument '%s'", a);
        }
        if (rc) return rc;
    }
    return *(int *)((char *)out + spec->help_offset) ? CLI_EXIT_HELP : 0;
}

/* " (1..64, " or " (>= 0, " */
static int print_range(char *buf, size_t len, const cli_opt *o)
{
    if (o->max >= (double)INT_MAX || isinf(o->max))
        return snprintf(buf, len, " (>= %g, ", o->min);
    return snprintf(buf, len, " (%g..%g, ", o->min, o->max);
}

static void append_list(char *buf, size_t len, const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    }
}

/* Appends "(1..64, default 4)", "(a, b; default a)", or nothing. */
static void append_default(char *buf, size_t len, const cli_opt *o,
                           const void *defaults)
{
    const void *field = (const char *)defaults + o->offset;
    const char *s = NULL;
    size_t used = strlen(buf);
    switch (o->kind) {
    case CLI_FLAG:
    case CLI_PETSC: return;
    case CLI_STR:
        s = *(const char *const *)field;
        if (s) snprintf(buf + used, len - used, " (default %s)", s);
        return;
    case CLI_CHOICE:
        s = *(const char *const *)field;
        snprintf(buf + used, len - used, " (");
        append_list(buf, len, o->choices());
        used = strlen(buf);
        snprintf(buf + used, len - used, "; default %s)", s ? s : "none");
        return;
    case CLI_INT:
        used += (size_t)print_range(buf + used, len - used, o);
        if (used < len)
            snprintf(buf + used, len - used, "default %d)",
                     *(const int *)field);
        return;
    case CLI_REAL:
        used += (size_t)print_range(buf + used, len - used, o);
        if (used < len)
            snprintf(buf + used, len - used, "default %g)",
                     *(const double *)field);
        return;
    }
}

void cli_print_help_line(FILE *f, const char *left, const char *text)
{
    enum { INDENT = 25, WIDTH = 79 };
    int col = fprintf(f, "  %-*s", INDENT - 3, left);
    if (col >= INDENT) { /* a long left part: the text starts below it */
        fprintf(f, "\n%*s", INDENT - 1, "");
        col = INDENT - 1;
    }
    const char *p = text;
    while (*p) {
        size_t word = strcspn(p, " ");
        if (col + 1 + (int)word > WIDTH && col > INDENT - 1) {
            fprintf(f, "\n%*s", INDENT - 1, "");
            col = INDENT - 1;
        }
        col += fprintf(f, " %.*s", (int)word, p);
        p += word;
        p += strspn(p, " ");
    }
    fputc('\n', f);
}

/* "same as --method: cg, gmres, bcgs (= bicgstab), or any --method value" */
static void petsc_help(const cli_opt *p, char *text, size_t len)
{
    size_t used = (size_t)snprintf(text, len, "same as %s", p->alias);
    const char *const *v = p->choices ? p->choices() : NULL;
    for (int i = 0, listed = 0; v && v[i] && used < len; i++) {
        size_t n = key_len(v[i]);
        if (refused(v[i])) continue; /* the option's help says why */
        used += (size_t)snprintf(
            text + used, len - used, "%s%.*s%s%s%s", listed++ ? ", " : ": ",
            (int)n, v[i], v[i][n] ? " (= " : "", v[i][n] ? v[i] + n + 1 : "",
            v[i][n] ? ")" : "");
    }
    if (v && p->min == 1 && used < len)
        used += (size_t)snprintf(text + used, len - used, ", or any %s value",
                                 p->alias);
    if (p->help && used < len)
        snprintf(text + used, len - used, "; %s", p->help);
}

static void print_petsc(FILE *f, const cli_opt *opts)
{
    if (!has_petsc(opts)) return;
    fputs("\nPETSc-style aliases (a PETSc command line works unchanged; any "
          "other\nsingle-dash option is an error):\n",
          f);
    for (const cli_opt *o = opts; o->name; o++) {
        if (o->kind != CLI_PETSC) continue;
        const cli_opt *t = find_opt(opts, o->alias, strlen(o->alias));
        char left[64], text[512];
        snprintf(left, sizeof left, "%s%s%s", o->name, t && t->arg ? " " : "",
                 t && t->arg ? t->arg : "");
        petsc_help(o, text, sizeof text);
        cli_print_help_line(f, left, text);
    }
}

void cli_print_options(FILE *f, const cli_opt *opts, const void *defaults)
{
    for (const cli_opt *o = opts; o->name; o++) {
        char left[64], text[1024];
        if (o->kind == CLI_PETSC) continue;
        snprintf(left, sizeof left, "%s%s%s%s%s", o->name, o->alias ? ", " : "",
                 o->alias ? o->alias : "", o->arg ? " " : "",
                 o->arg ? o->arg : "");
        snprintf(text, sizeof text, "%s", o->help);
        append_default(text, sizeof text, o, defaults);
        cli_print_help_line(f, left, text);
    }
    cli_print_help_line(f, "-h, --help", "this text");
    print_petsc(f, opts);
}

const char *const *cli_build_names(void)
{
    static const char *const names[] = {"env", "host", "device", "auto", NULL};
    return names;
}

kr_status cli_set_build(kr_ctx *ctx, const char *build)
{
    if (!build || !strcmp(build, "env")) return KR_OK;
    kr_build b = !strcmp(build, "device") ? KR_BUILD_DEVICE
                 : !strcmp(build, "auto") ? KR_BUILD_AUTO
                                          : KR_BUILD_HOST;
    return kr_ctx_set_build(ctx, b);
}
