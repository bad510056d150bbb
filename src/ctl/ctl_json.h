/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_json.h - a small JSON reader for the server's answers (stsd writes them with
 * base/json; stsctl only reads them). */
#ifndef STSCTL_JSON_H
#define STSCTL_JSON_H

#include <stddef.h>

typedef enum cj_type { CJ_NULL, CJ_BOOL, CJ_NUMBER, CJ_STRING, CJ_ARRAY, CJ_OBJECT } cj_type;

typedef struct cj {
    cj_type type;
    char *s;            /* STRING: the decoded bytes; NUMBER: the text as sent; NUL-ended */
    size_t len;         /* of s */
    int b;              /* BOOL */
    size_t n;           /* ARRAY, OBJECT: the number of items */
    struct cj **items;
    char **keys;        /* OBJECT: the key of each item */
} cj;

/* Parses text[0..len): the whole of it must be one value. Returns the tree (free with
 * cj_free), or NULL if it is not JSON or memory ran out. */
cj *cj_parse(const char *text, size_t len);

void cj_free(cj *v);

/* The member key of object v, or NULL (also when v is NULL or not an object). */
const cj *cj_get(const cj *v, const char *key);

#endif
