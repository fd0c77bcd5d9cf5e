/* Solver options by name, for kr_ksp_set_option: the `krylov solve` names
 * and PETSc's -ksp_* spellings of the same options, so a program can pass
 * its own command line or configuration file through. */
#include "core/error.h"
#include "solver/ksp.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OPT_INT, OPT_REAL, OPT_SEED, OPT_METHOD } opt_kind;

typedef struct opt_key {
    const char *name;  /* krylov's, dashes as underscores */
    const char *petsc; /* PETSc's, or NULL */
    opt_kind kind;
    size_t offset;
} opt_key;

#define OFF(field) offsetof(kr_solve_options, field)

static const opt_key keys[] = {
    {"method", "ksp_type", OPT_METHOD, OFF(method)},
    {"rtol", "ksp_rtol", OPT_REAL, OFF(rtol)},
    {"atol", "ksp_atol", OPT_REAL, OFF(atol)},
    {"dtol", "ksp_divtol", OPT_REAL, OFF(dtol)},
    {"maxit", "ksp_max_it", OPT_INT, OFF(maxit)},
    {"restart", "ksp_gmres_restart", OPT_INT, OFF(restart)},
    {"s", NULL, OPT_INT, OFF(s)},
    {"kappa", NULL, OPT_REAL, OFF(kappa)},
    {"seed", NULL, OPT_SEED, OFF(seed)},
    {"gap_restarts", NULL, OPT_INT, OFF(gap_restarts)},
    {"breakdown_restarts", NULL, OPT_INT, OFF(breakdown_restarts)},
    {"keep_history", NULL, OPT_INT, OFF(keep_history)},
};

#define NKEYS (sizeof keys / sizeof keys[0])

/* "--gap-restarts" -> "gap_restarts": leading dashes dropped, the others
 * made underscores. 0 when the key does not fit. */
static int normalise(const char *key, char *out, size_t len)
{
    key += strspn(key, "-");
    size_t n = strlen(key);
    if (n == 0 || n >= len) return 0;
    for (size_t i = 0; i <= n; i++)
        out[i] = key[i] == '-' ? '_' : key[i];
    return 1;
}

static const opt_key *find_key(const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].name, name) ||
            (keys[i].petsc && !strcmp(keys[i].petsc, name)))
            return &keys[i];
    return NULL;
}

static kr_status unknown_key(kr_ctx *ctx, const char *key)
{
    char list[512];
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < NKEYS && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s%s%s",
                                 i ? ", " : "", keys[i].name,
                                 keys[i].petsc ? "/" : "",
                                 keys[i].petsc ? keys[i].petsc : "");
    return kr_fail(ctx, KR_ERR_ARG, "unknown solver option '%s' (valid: %s)",
                   key, list);
}

static kr_status bad_value(kr_ctx *ctx, const char *key, const char *value,
                           const char *what)
{
    return kr_fail(ctx, KR_ERR_ARG, "solver option %s: '%s' is not %s", key,
                   value, what);
}

static kr_status parse_int(kr_ctx *ctx, const char *key, const char *v,
                           int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < INT_MIN || x > INT_MAX)
        return bad_value(ctx, key, v, "an integer");
    *out = (int)x;
    return KR_OK;
}

static kr_status parse_real(kr_ctx *ctx, const char *key, const char *v,
                            double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno == ERANGE)
        return bad_value(ctx, key, v, "a number");
    *out = x;
    return KR_OK;
}

static kr_status parse_seed(kr_ctx *ctx, const char *key, const char *v,
                            uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v || *end || errno || strchr(v, '-'))
        return bad_value(ctx, key, v, "an integer >= 0");
    *out = (uint64_t)x;
    return KR_OK;
}

/* The method's registry name; PETSc calls BiCGSTAB "bcgs". */
static kr_status parse_method(kr_ctx *ctx, const char *v, const char **out)
{
    const kr_solver_ops *m;
    KR_TRY(kr_solve_find_method(ctx, strcmp(v, "bcgs") ? v : "bicgstab", &m));
    *out = m->name;
    return KR_OK;
}

kr_status kr_ksp_parse_option(kr_ctx *ctx, kr_solve_options *o, const char *key,
                              const char *value)
{
    char name[64];
    const opt_key *k =
        normalise(key, name, sizeof name) ? find_key(name) : NULL;
    if (!k) return unknown_key(ctx, key);
    char *field = (char *)o + k->offset;
    switch (k->kind) {
    case OPT_INT: return parse_int(ctx, key, value, (int *)field);
    case OPT_REAL: return parse_real(ctx, key, value, (double *)field);
    case OPT_SEED: return parse_seed(ctx, key, value, (uint64_t *)field);
    case OPT_METHOD: return parse_method(ctx, value, (const char **)field);
    }
    return unknown_key(ctx, key);
}
