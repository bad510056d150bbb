/* result.h - what a command answers, in results (never bytes): shared by the command
 * table, the parking of requests that wait, and the page formatter. */
#ifndef STSD_RESULT_H
#define STSD_RESULT_H

#include "base/buf.h"

typedef struct park_lot park_lot;
typedef struct park_slot park_slot;

typedef enum reply_kind {
    REPLY_OK,       /* text is the payload */
    REPLY_KO,       /* text is the message after "Error : " */
    REPLY_LINES,    /* text holds lines (store_next_line format): READMULTI's page */
    REPLY_LISTING,  /* text holds entries (same format): STATUS's and CONFIG's page */
    REPLY_HELP,     /* the help page */
} reply_kind;

typedef struct cmd_result {
    reply_kind kind;
    buf text;       /* owned; reused across requests by whoever owns the result */
    int stop;       /* STOP: shut the server down once this answer is sent */
    struct park_slot *park;  /* set by a handler that parked the request (server/park.h):
                              * the answer comes later, through the slot */
} cmd_result;

#endif
