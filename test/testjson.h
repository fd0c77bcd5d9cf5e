/* A small JSON reader for the tests of the commands' --json output:
 * enough to check that a document parses and to read members of objects
 * found by key. */
#ifndef KR_TEST_TESTJSON_H
#define KR_TEST_TESTJSON_H

#include <stddef.h>

/* The end of the JSON value at p, or NULL if it is malformed. */
const char *kt_json_value(const char *p);
/* The text after "key": inside [obj, end), or NULL. */
const char *kt_json_member(const char *obj, const char *end, const char *key);
/* The number of key in [obj, end) (NaN for null); fails the test when the
 * key is missing. */
double kt_json_num(const char *obj, const char *end, const char *key);
/* Copies the string value of key into buf; fails the test when missing. */
void kt_json_str(const char *obj, const char *end, const char *key, char *buf,
                 size_t len);
/* The objects of the first array named key (checking first that the
 * whole document parses): their starts and ends; returns how many. */
int kt_json_objects(const char *json, const char *key, const char **start,
                    const char **stop, int max);

#endif
