/* log_json.c - stsd.log.format=json: each log message as one JSON object per line. */
#include "base/log_json.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"

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
