/* A tiny JSON writer: strings escaped per RFC 8259 (quote, backslash and
 * control characters), numbers with the fewest digits (15 to 17) that read
 * back exactly, NaN and Inf as null since JSON has no spelling for them. */
#include "json.h"

#include <math.h>
#include <stdlib.h>

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c;
         c++) {
        switch (*c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*c < 0x20)
                fprintf(f, "\\u%04x", *c);
            else
                fputc(*c, f);
        }
    }
    fputc('"', f);
}

/* A newline and two spaces per level. */
static void indent(cli_json *j, int level)
{
    fprintf(j->f, "\n%*s", 2 * level, "");
}

void cli_json_key(cli_json *j, const char *key)
{
    if (!j->first) fputc(',', j->f);
    indent(j, j->depth + 1);
    j->first = 0;
    put_string(j->f, key);
    fputs(": ", j->f);
}

void cli_json_begin(cli_json *j, FILE *f)
{
    j->f = f;
    j->first = 1;
    j->depth = 0;
    fputc('{', f);
}

void cli_json_end(cli_json *j) { fputs(j->first ? "}\n" : "\n}\n", j->f); }

void cli_json_str(cli_json *j, const char *key, const char *value)
{
    cli_json_key(j, key);
    put_string(j->f, value);
}

void cli_json_num(cli_json *j, const char *key, double value)
{
    cli_json_key(j, key);
    if (!isfinite(value)) {
        fputs("null", j->f);
        return;
    }
    char buf[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, value);
        if (strtod(buf, NULL) == value) break;
    }
    fputs(buf, j->f);
}

void cli_json_int(cli_json *j, const char *key, long long value)
{
    cli_json_key(j, key);
    fprintf(j->f, "%lld", value);
}

void cli_json_bool(cli_json *j, const char *key, int value)
{
    cli_json_key(j, key);
    fputs(value ? "true" : "false", j->f);
}

void cli_json_null(cli_json *j, const char *key)
{
    cli_json_key(j, key);
    fputs("null", j->f);
}

void cli_json_open(cli_json *j, const char *key)
{
    cli_json_key(j, key);
    fputc('{', j->f);
    j->first = 1;
    j->depth++;
}

void cli_json_close(cli_json *j)
{
    j->depth--;
    if (!j->first) indent(j, j->depth + 1);
    fputc('}', j->f);
    j->first = 0;
}
