/* SPDX-License-Identifier: Apache-2.0 */
/* dataset_text.c - LOAD: a file sent in a request becomes a list as INITFILE makes one
 * from the dataset directory (same charset, same line rules). */
#include "dataset/dataset.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>

#include "dataset_core.h"

/* Converts text[0..len) from charset cs to UTF-8 into a malloc'd *out of *out_len bytes. */
static dataset_rc to_utf8(const char *cs, const char *text, size_t len, char **out,
                          size_t *out_len)
{
    iconv_t cd = iconv_open("UTF-8", cs);
    if (cd == (iconv_t)-1)
        return errno == ENOMEM ? DATASET_NOMEM : DATASET_CHARSET;
    dataset_rc rc = DATASET_OK;
    size_t cap = len + len / 2 + 64;
    char *mem = NULL;
    char *in = (char *)text;
    size_t inleft = len, used = 0;
    for (;;) {
        char *bigger = realloc(mem, cap);
        if (!bigger) {
            rc = DATASET_NOMEM;
            break;
        }
        mem = bigger;
        char *o = mem + used;
        size_t oleft = cap - used;
        size_t r = iconv(cd, &in, &inleft, &o, &oleft);
        used = (size_t)(o - mem);
        if (r != (size_t)-1)
            break;
        if (errno != E2BIG) {
            rc = errno == EILSEQ || errno == EINVAL ? DATASET_CHARSET : DATASET_NOMEM;
            break;
        }
        if (cap > SIZE_MAX / 2) {
            rc = DATASET_NOMEM;
            break;
        }
        cap *= 2;
    }
    iconv_close(cd);
    if (rc != DATASET_OK) {
        free(mem);
        return rc;
    }
    *out = mem;
    *out_len = used;
    return DATASET_OK;
}

dataset_rc dataset_load_text(dataset *d, const char *text, size_t len, list **out)
{
    char *converted = NULL;
    size_t clen = 0;
    dataset_rc rc = DATASET_OK;
    *out = NULL;
    if (d->read_cs && !(d->read_ascii && dataset_ascii_only(text, len))) {
        rc = to_utf8(d->read_cs, text, len, &converted, &clen);
        if (rc != DATASET_OK)
            return rc;
        text = converted;
        len = clen;
    }
    size_t bom = dataset_bom_len(text, len);
    text += bom;
    len -= bom;
    list *l = list_create();
    rc = l ? dataset_parse_until_stop(d, text, len, l) : DATASET_NOMEM;
    if (rc != DATASET_OK)
        list_free(l);
    else
        *out = l;
    free(converted);
    return rc;
}
