/* SPDX-License-Identifier: Apache-2.0 */
/* log.c - timestamped log lines on stderr, as text or JSON, written with one call so
 * threads don't mix. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"

static log_level min_level = LOG_INFO;
static log_writer writer;
static const char *const names[] = {"debug", "info", "warn", "error"};

void log_set_writer(log_writer w)
{
    writer = w;
}

const char *log_level_name(log_level level)
{
    return names[(unsigned)level % 4];
}

void log_set_level(log_level level)
{
    min_level = level;
}

void log_msg(log_level level, const char *fmt, ...)
{
    if (level < min_level)
        return;
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (writer) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        writer(level, &ts, line);
        return;
    }
    localtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ld [%s] ", ts.tv_nsec / 1000000,
                  names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += m;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

/* ---- stsd.log.format=json: each message as one JSON object per line ---------------- */

/* The event is the message's first word: the command (INITFILE, SAVE, RESET, STOP) or the
 * part of stsd (journal, http, listening, stsd...) that speaks. */
static size_t event_len(const char *msg)
{
    size_t n = strcspn(msg, " :");
    return n ? n : strlen(msg);
}

static void write_json(log_level level, const struct timespec *ts, const char *msg)
{
    char when[64];
    struct tm tm;
    gmtime_r(&ts->tv_sec, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03ldZ", ts->tv_nsec / 1000000);
    buf b = BUF_INIT;
    json j;
    json_init(&j, &b);
    json_obj_begin(&j);
    json_key(&j, "time");
    json_cstr(&j, when);
    json_key(&j, "level");
    json_cstr(&j, log_level_name(level));
    json_key(&j, "event");
    json_str(&j, msg, event_len(msg));
    json_key(&j, "fields");
    json_obj_begin(&j);
    json_key(&j, "message");
    json_cstr(&j, msg);
    json_key(&j, "pid");
    json_int(&j, (long long)getpid());
    json_obj_end(&j);
    json_obj_end(&j);
    buf_append(&b, "\n", 1);
    if (!b.oom) {
        ssize_t w = write(STDERR_FILENO, b.data, b.len);
        (void)w;
    }
    buf_free(&b);
}

void log_json_install(int on)
{
    log_set_writer(on ? write_json : NULL);
}
