/* A tiny JSON writer for the command's --json output: one flat or nested
 * object, strings escaped, non-finite numbers written as null. */
#ifndef KR_DRIVERS_JSON_H
#define KR_DRIVERS_JSON_H

#include <stdio.h>

typedef struct cli_json {
    FILE *f;
    int first; /* no member written yet in the open object */
    int depth; /* nested objects open (cli_json_open)        */
} cli_json;

void cli_json_begin(cli_json *j, FILE *f);
/* Closes the object and ends the line. */
void cli_json_end(cli_json *j);
void cli_json_str(cli_json *j, const char *key, const char *value);
void cli_json_num(cli_json *j, const char *key, double value);
void cli_json_int(cli_json *j, const char *key, long long value);
void cli_json_bool(cli_json *j, const char *key, int value);
void cli_json_null(cli_json *j, const char *key);
/* "key": alone, for a value the caller writes itself (an array). */
void cli_json_key(cli_json *j, const char *key);
/* "key": { ... }: members written until cli_json_close go into it. */
void cli_json_open(cli_json *j, const char *key);
void cli_json_close(cli_json *j);

#endif
