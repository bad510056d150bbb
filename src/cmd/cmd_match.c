/* cmd_match.c - the matchers FIND, waiting FINDs and PEEK's MATCH share. */
#include "cmd_match.h"

#include <string.h>

#include "cmd_param.h"

static int substring_match(const char *s, size_t len, void *ctx)
{
    const cmd_matcher *cm = ctx;
    return memmem(s, len, cm->needle, cm->len) != NULL;
}

int cmd_matcher_init(cmd_matcher *cm, int mode, const char *pattern, size_t len)
{
    memset(cm, 0, sizeof *cm);
    cm->needle = pattern;
    cm->len = len;
    if (mode == FIND_EQUALS) {
        cm->m.equal = pattern;
        cm->m.equal_len = len;
    } else if (mode == FIND_REGEX_FIND || mode == FIND_REGEX_MATCH) {
        cm->re = rx_get(pattern, len, mode == FIND_REGEX_MATCH);
        if (!cm->re)
            return -1;
        cm->m.match = rx_match;
        cm->m.ctx = cm->re;
    } else {
        cm->m.match = substring_match;
        cm->m.ctx = cm;
    }
    return 0;
}

void cmd_matcher_free(cmd_matcher *cm)
{
    rx_release(cm->re);
    cm->re = NULL;
}
