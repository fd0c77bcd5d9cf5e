/* Command-line parsing for the krylov command: a table of options per
 * subcommand, strict number parsing, choice lists from the registries, the
 * help text generated from the same table, and the documented exit codes. */
#ifndef KR_DRIVERS_OPTIONS_H
#define KR_DRIVERS_OPTIONS_H

#include "krylov.h"

#include <stddef.h>
#include <stdio.h>

/* The exit codes of the command (also in --help and the README). */
enum {
    CLI_EXIT_OK = 0,      /* converged, or the command succeeded        */
    CLI_EXIT_NOCONV = 1,  /* the solve ran but did not converge         */
    CLI_EXIT_USAGE = 2,   /* bad command line                           */
    CLI_EXIT_INPUT = 3,   /* bad or unreadable input, wrong sizes       */
    CLI_EXIT_DEVICE = 4,  /* device or memory failure, CUDA not built   */
    CLI_EXIT_MISSING = 5, /* a program it needs is not installed (PETSc
                             for compare-petsc)                        */
    CLI_EXIT_HELP = -1    /* internal: --help was given; print it, exit 0 */
};

typedef enum cli_kind {
    CLI_FLAG,   /* int, set to 1; takes no value                         */
    CLI_STR,    /* const char *, any text                                */
    CLI_INT,    /* int in [min, max]                                     */
    CLI_REAL,   /* finite double in [min, max]                           */
    CLI_CHOICE, /* const char *, one of choices()                       */
    CLI_PETSC   /* a PETSc-style spelling of the option named by alias   */
} cli_kind;

/* One option: where its value goes in the command's options struct.
 * A CLI_PETSC entry ("-ksp_rtol") stands for the table's option named by
 * its alias ("--rtol") and takes that option's values, except that when
 * choices is set the value must be one of its "petsc" or "petsc=krylov"
 * entries (or, with min = 1, one of the target's own values); a
 * "petsc!why" entry refuses the value petsc, the error quoting why (a
 * PETSc name that would mislead: PETSc's bjacobi is not krylov's). Its
 * offset, max and arg are unused; help, if any, adds a remark. */
typedef struct cli_opt {
    const char *name;  /* "--rtol" or "-o"                                */
    const char *alias; /* a second spelling ("--output"), or NULL         */
    cli_kind kind;
    size_t offset; /* of the field in the options struct                  */
    double min, max;
    const char *const *(*choices)(void); /* CLI_CHOICE: NULL-terminated  */
    const char *arg;                     /* value's name in help: "X"    */
    const char *help;                    /* one line                     */
} cli_opt;

/* A subcommand's grammar: its options and its positional arguments. */
typedef struct cli_spec {
    const char *command; /* "solve"                                       */
    const cli_opt *opts; /* terminated by an entry with name NULL         */
    int max_pos;         /* most positional arguments accepted         */
    size_t help_offset;  /* int flag set by --help / -h                   */
} cli_spec;

/* Parses argv (after the subcommand) into out, whose fields already hold
 * the defaults; positional arguments go to pos[0..*npos). Returns 0, or
 * CLI_EXIT_USAGE after printing the error, or CLI_EXIT_HELP when --help was
 * given (the caller prints its help). */
int cli_parse(const cli_spec *spec, int argc, char **argv, void *out,
              const char **pos, int *npos);

/* Prints the option lines of the table, then -h/--help, with the defaults
 * found in defaults (an options struct filled with the default values),
 * then a "PETSc-style aliases" section when the table has CLI_PETSC
 * entries. */
void cli_print_options(FILE *f, const cli_opt *opts, const void *defaults);

/* Prints "  left   text", the text wrapped at 79 columns. */
void cli_print_help_line(FILE *f, const char *left, const char *text);

/* Prints "krylov: error: <message>" (printf-style) and returns
 * CLI_EXIT_USAGE, adding where to find the valid forms. */
int cli_usage_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "krylov: error: <message>" on stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The exit code a library status maps to (KR_OK -> 0). */
int cli_exit_code(kr_status st);

/* Writes "a, b, c" from a NULL-terminated list to f. */
void cli_print_list(FILE *f, const char *const *names);

/* The exit-code table, as printed in every --help. */
void cli_print_exit_codes(FILE *f);

/* --build: "env" ($KRYLOV_BUILD, else host), "host" or "device". */
const char *const *cli_build_names(void);
#define CLI_BUILD_HELP                                                         \
    "where the matrix format is built on the GPU: host (built on the host "    \
    "from CSR, then uploaded), device (the CSR uploaded once, pinned, and "    \
    "the format built from it by kernels; the matrix keeps that CSR, for "     \
    "the preconditioner), auto (device from 50000 nonzeros, else host), "      \
    "env = $KRYLOV_BUILD, else auto"
/* Applies a --build value to ctx ("env" leaves the context's own). */
kr_status cli_set_build(kr_ctx *ctx, const char *build);

#endif
