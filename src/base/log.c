/* log.c - timestamped log lines on stderr, written with one call so threads don't mix. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

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
