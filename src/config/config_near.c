/* SPDX-License-Identifier: Apache-2.0 */
/* config_near.c - keys that look like ours but are not: a misspelt key gets named. */
#include "config_near.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Longer keys are compared by their last part only: none of ours is near that long. */
#define NEAR_MAX_LEN 96
/* Edits (insert, delete, substitute, swap two neighbours) a misspelling may be away. */
#define NEAR_EDITS 2

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

/* The optimal-string-alignment distance between a and b (letter case aside), or
 * NEAR_EDITS + 1 once it is known to be larger. Three rows of the table are enough. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > NEAR_MAX_LEN || lb > NEAR_MAX_LEN)
        return NEAR_EDITS + 1;
    if ((la > lb ? la - lb : lb - la) > NEAR_EDITS)
        return NEAR_EDITS + 1;
    int rows[3][NEAR_MAX_LEN + 1];
    int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int ca = tolower((unsigned char)a[i - 1]), best = (int)i;
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            int d = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb));
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
            if (d < best)
                best = d;
        }
        if (best > NEAR_EDITS)
            return NEAR_EDITS + 1;   /* every path through this row is already too long */
        int *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* The part after the last dot (the whole key if it has none). */
static const char *last_part(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}

/* Whether key[0..n) equals word, letter case aside. */
static int part_is(const char *part, size_t n, const char *word)
{
    return n == strlen(word) && strncasecmp(part, word, n) == 0;
}

/* Whether the parts before key's last one read as one of our prefixes gone wrong:
 * "jmeter..." with an "sts" part (jmeter.sts., jmeterPlugins.sts.), a first part within
 * two edits of jmeterPlugin (jmeterPlugins.port), jmeterPlugin.<key>, or a first part
 * "sts" or "stsd...".
 * JMeter's own keys (jmeterengine.nongui.port, jmeter.save.saveresults.*) have none of
 * these, so a shared jmeter.properties stays quiet. */
static int prefix_looks_ours(const char *key)
{
    const char *dot = strchr(key, '.'), *end = strrchr(key, '.');
    if (!dot || dot == key || !end[1])
        return 0;
    size_t n = (size_t)(dot - key);
    char first[NEAR_MAX_LEN + 1];
    if (part_is(key, n, "sts") || (n >= 4 && strncasecmp(key, "stsd", 4) == 0))
        return 1;
    if (n < 6 || strncasecmp(key, "jmeter", 6) != 0 || n > NEAR_MAX_LEN)
        return 0;
    memcpy(first, key, n);
    first[n] = '\0';
    /* jmeterPlugin.<plugin>.* may belong to another plugin: only jmeterPlugin.<key> (the
     * ".sts" left out) is ours gone wrong; jmeterPlugins., jmeterPlugn. are ours misspelt. */
    if (strcasecmp(first, "jmeterPlugin") == 0) {
        if (end == dot)
            return 1;
    } else if (edit_distance(first, "jmeterPlugin") <= NEAR_EDITS) {
        return 1;
    }
    /* An "sts" part anywhere between the first and the last. */
    for (const char *p = dot + 1; p < end;) {
        const char *q = strchr(p, '.');
        if (part_is(p, (size_t)(q - p), "sts"))
            return 1;
        p = q + 1;
    }
    return 0;
}

const char *conf_near_key(const char *key, const conf_key *keys, size_t n)
{
    const char *best = NULL;
    int best_d = NEAR_EDITS + 1;
    if (!key || !*key)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i].name, key) == 0)
            return NULL;
    for (size_t i = 0; i < n; i++) {
        int d = edit_distance(key, keys[i].name);
        if (d < best_d) {
            best_d = d;
            best = keys[i].name;
        }
    }
    if (best)
        return best;
    if (!prefix_looks_ours(key))
        return NULL;
    const char *tail = last_part(key);
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(tail, last_part(keys[i].name)) == 0)
            return keys[i].name;
    return NULL;
}
