/* cmd_match.h - FIND_MODE turned into the store's matcher: substring, equality, or a
 * pcre2 regex (found anywhere, or matching the whole line). Private to cmd/. */
#ifndef STSD_CMD_MATCH_H
#define STSD_CMD_MATCH_H

#include <stddef.h>

#include "list/rx.h"
#include "store/store.h"

typedef struct cmd_matcher {
    store_matcher m;          /* what the store calls; points into this struct */
    rx *re;                   /* the compiled regex (the cache's reference), or NULL */
    const char *needle;       /* SUBSTRING's and EQUALS's pattern (not owned) */
    size_t len;
} cmd_matcher;

/* Sets cm up for mode (FIND_SUBSTRING...) and pattern[0..len), which must outlive it;
 * cm must not move afterwards. Returns 0, or -1 if a regex does not compile (cm is then
 * empty). */
int cmd_matcher_init(cmd_matcher *cm, int mode, const char *pattern, size_t len);

/* Releases cm's regex. */
void cmd_matcher_free(cmd_matcher *cm);

#endif
