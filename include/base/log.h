/* SPDX-License-Identifier: Apache-2.0 */
/* log.h - one-line log messages to stderr, with a timestamp and a level: text lines, or
 * JSON objects (stsd.log.format=json) for journald and log shippers. */
#ifndef STSD_LOG_H
#define STSD_LOG_H

struct timespec;

typedef enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

/* Messages below this level are dropped (LOG_INFO by default; tests may raise it). */
void log_set_level(log_level level);
/* Writes one whole log line (without its '\n') for a message instead of the text format:
 * how JSON lines are made, by a room above. ts is the wall-clock time of the message. */
typedef void (*log_writer)(log_level level, const struct timespec *ts, const char *msg);
/* Sends every message to w from now on (NULL: back to text lines). Call before threads
 * start logging. */
void log_set_writer(log_writer w);
/* The name of a level: "debug", "info", "warn", "error". */
const char *log_level_name(log_level level);

void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* on: from now on every message is written as one JSON line (time, level, event, fields);
 * off: as text. */
void log_json_install(int on);

#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
