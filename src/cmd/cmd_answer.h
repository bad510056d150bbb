/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_answer.h - the answers commands give: the reference's messages, KO builders, and
 * the shapes of READ's, FIND's and listing answers. Private to cmd/. */
#ifndef STSD_CMD_ANSWER_H
#define STSD_CMD_ANSWER_H

#include <stddef.h>

#include "base/json.h"
#include "cmd/result.h"
#include "hold/commit.h"
#include "dataset/dataset.h"
#include "store/store.h"

/* The reference's messages, byte for byte (typos included: test plans match them). */
#define MSG_UNKNOWN        "unknown command !"
#define MSG_NO_FILENAME    "FILENAME parameter was missing !"
#define MSG_NO_NAME        "NAME parameter was missing !"
#define MSG_ILLEGAL        "Illegal character found !"
#define MSG_TOO_LONG       "Maximum size reached (128) !"
#define MSG_READ_MODE      "READ_MODE value has to be FIRST, LAST or RANDOM !"
#define MSG_KEEP           "KEEP value has to be TRUE or FALSE !"
#define MSG_FIND_KEEP      "KEEP has to be TRUE or FALSE !"
#define MSG_ADD_MODE       "ADD_MODE value has to be FIRST or LAST !"
#define MSG_UNIQUE         "UNIQUE value has to be TRUE or FALSE !"
#define MSG_NO_LINE        "LINE parameter was missing !"
#define MSG_EMPTY_FIND     "Cant't find empty line !"
#define MSG_FIND_MODE      "FIND_MODE value has to be EQUALS, SUBSTRING, REGEX_FIND or REGEX_MATCH !"
#define MSG_REGEX          "Regex compile error !"
#define MSG_DB_EMPTY       "Database was empty !"
#define MSG_NO_LIST        "LinkedList not found !"
/* Ours, for cases the reference never reports. */
#define MSG_NOMEM          "Out of memory, nothing changed !"
/* INITFILE or LOAD cut short by STOP or SIGTERM: the list keeps what it had. */
#define MSG_FILE_STOPPING  "Server is stopping: the file was not read to its end, the list is unchanged !"
#define MSG_JOURNAL        COMMIT_NOT_DURABLE
#define MSG_LINE_TOO_LONG  "LINE is too long !"
#define MSG_LINE_BREAK     "LINE must not hold a line break (CR or LF) !"
#define MSG_FORMAT         "FORMAT value has to be HTML or JSON !"
#define MSG_NO_FILE        "FILE parameter was missing !"
/* The keys' (SET, INCR, DONE, ACK/RELEASE with NAME). */
#define MSG_VALUE_LONG     "VALUE is too long !"
#define MSG_NO_LEASE_ID    "LEASE parameter was missing !"
#define MSG_FULL_KEYS      "Key limit reached (stsd.maxKeys or stsd.maxBytes), nothing changed !"

/* An OK whose text is payload. */
void cmd_ok(cmd_result *r, const char *payload);
/* A KO with message msg; status is its HTTP status when answered in JSON. */
void cmd_ko(cmd_result *r, unsigned status, const char *msg);
/* A 400 KO with a printf-formatted message. */
__attribute__((format(printf, 2, 3)))
void cmd_ko_format(cmd_result *r, const char *fmt, ...);
/* The KO for store error rc concerning list name[0..len). */
void cmd_ko_store(cmd_result *r, store_rc rc, const char *name, size_t len);
/* The KO for dataset error rc (INITFILE, LOAD, SAVE, FILES). */
void cmd_ko_dataset(cmd_result *r, dataset_rc rc);

/* READ's and READMULTI's answer to the store's rc (lines in r->text, count as set). */
void cmd_read_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen, long n,
                     size_t count, int multi);
/* FIND's answer to the store's rc (the line in r->text). */
void cmd_find_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen);
/* A count's answer (LENGTH, LEASES): n, or the KO for the store's rc. */
void cmd_count_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen, size_t n);
/* The reference's "Illegal character found !" KO (400); in JSON it says which byte of
 * parameter param (s[0..len), a name the dataset's rules or a NUL refused) and where. */
void cmd_ko_illegal(cmd_result *r, const char *param, const char *s, size_t len);
/* The reference's "Regex compile error !" KO (400); in JSON with pcre2's message and the
 * offset where pattern[0..len) stopped compiling (whole as rx_get's). */
void cmd_ko_regex(cmd_result *r, const char *pattern, size_t len, int whole);
/* Adds header name: value (C strings) to r's answer; out of memory sets r->headers.oom. */
void cmd_header(cmd_result *r, const char *name, const char *value);
/* Appends s[0..len) percent-encoded, every byte but A-Z a-z 0-9 - . _ ~ as %XX: any
 * bytes (UTF-8 or not, line breaks, ';') become one header line's worth of tokens that
 * a JMeter Regular Expression Extractor can take and __urldecode turn back (X-STS-Value,
 * X-STS-Field-*). Returns 0, or -1 on ENOMEM. */
int cmd_percent(buf *out, const char *s, size_t len);
/* Adds the lease ids in ids (uint64_t each) as r's X-STS-Lease header. */
void cmd_lease_ids(cmd_result *r, const buf *ids);

/* Appends one entry of a page listing (store_next_line format): "<a><sep><v>". */
void cmd_entry(buf *b, const char *a, size_t alen, const char *sep, const char *v,
               size_t vlen);
void cmd_entry_s(buf *b, const char *a, const char *sep, const char *v);

/* Starts a JSON answer {"ok":true, ...} in r's text, written through j. */
void cmd_json_start(cmd_result *r, json *j);
/* A name as "name" (invalid UTF-8 shown as U+FFFD), plus "name_base64" with its exact
 * bytes when it is not UTF-8. */
void cmd_json_name(json *j, const char *name);

#endif
