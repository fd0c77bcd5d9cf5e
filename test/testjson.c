/* The JSON reader of test/testjson.h: a recursive check of the grammar
 * (objects, arrays, strings, numbers, literals) and plain searches for
 * members. */
#include "testjson.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *json_string(const char *p)
{
    if (*p++ != '"') return NULL;
    for (; *p && *p != '"'; p++)
        if (*p == '\\' && !*++p) return NULL;
    return *p == '"' ? p + 1 : NULL;
}

/* Members or elements up to `close`, each `value` or `"key": value`. */
static const char *json_seq(const char *p, char close, int keyed)
{
    p = skip_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (keyed) {
            p = json_string(skip_ws(p));
            if (!p) return NULL;
            p = skip_ws(p);
            if (*p++ != ':') return NULL;
        }
        p = kt_json_value(p);
        if (!p) return NULL;
        p = skip_ws(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
    }
}

const char *kt_json_value(const char *p)
{
    p = skip_ws(p);
    if (*p == '{') return json_seq(p, '}', 1);
    if (*p == '[') return json_seq(p, ']', 0);
    if (*p == '"') return json_string(p);
    for (const char *lit = "true\0false\0null\0"; *lit; lit += strlen(lit) + 1)
        if (!strncmp(p, lit, strlen(lit))) return p + strlen(lit);
    char *end;
    strtod(p, &end);
    return end > p ? end : NULL;
}

const char *kt_json_member(const char *obj, const char *end, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(obj, pat);
    return p && p < end ? p + strlen(pat) : NULL;
}

double kt_json_num(const char *obj, const char *end, const char *key)
{
    const char *p = kt_json_member(obj, end, key);
    ck_assert_msg(p != NULL, "no key '%s' in %.*s", key, (int)(end - obj), obj);
    if (!strncmp(p, "null", 4)) return NAN;
    return strtod(p, NULL);
}

void kt_json_str(const char *obj, const char *end, const char *key, char *buf,
                 size_t len)
{
    const char *p = kt_json_member(obj, end, key);
    ck_assert_msg(p && *p == '"', "no string '%s'", key);
    const char *q = json_string(p);
    snprintf(buf, len, "%.*s", (int)(q - p - 2), p + 1);
}

int kt_json_objects(const char *json, const char *key, const char **start,
                    const char **stop, int max)
{
    ck_assert_msg(kt_json_value(json) != NULL, "the JSON does not parse");
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": [", key);
    const char *p = strstr(json, pat);
    ck_assert_msg(p != NULL, "no array '%s'", key);
    p += strlen(pat);
    int n = 0;
    for (p = skip_ws(p); *p == '{' && n < max; p = skip_ws(p)) {
        start[n] = p;
        stop[n] = kt_json_value(p);
        p = skip_ws(stop[n++]);
        if (*p == ',') p++;
    }
    return n;
}
