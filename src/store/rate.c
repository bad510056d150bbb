/* rate.c - per-list add/remove rates over a 10 s window of 1 s buckets. */
#include "rate.h"

#include <time.h>

int64_t rate_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rate_init(rate_window *w, int64_t now_ms)
{
    w->start_ms = now_ms;
    for (int i = 0; i < RATE_SLOTS; i++) {
        w->sec[i] = -1;
        w->added[i] = w->removed[i] = 0;
    }
}

void rate_count(rate_window *w, int64_t now_ms, uint64_t added, uint64_t removed)
{
    int64_t s = now_ms / 1000;
    int i = (int)(s % RATE_SLOTS);
    if (w->sec[i] != s) {          /* the bucket last counted an older second: reuse it */
        w->sec[i] = s;
        w->added[i] = w->removed[i] = 0;
    }
    w->added[i] += added;
    w->removed[i] += removed;
}

void rate_get(const rate_window *w, int64_t now_ms, double *added_per_s,
              double *removed_per_s)
{
    int64_t s = now_ms / 1000, oldest = s - (RATE_SLOTS - 1);
    uint64_t a = 0, r = 0;
    for (int i = 0; i < RATE_SLOTS; i++)
        if (w->sec[i] >= oldest && w->sec[i] <= s) {
            a += w->added[i];
            r += w->removed[i];
        }
    /* The window runs from the start of its oldest second (or from when counting began,
     * if later) to now: the current second counts only as far as it has gone. */
    int64_t from = oldest * 1000 > w->start_ms ? oldest * 1000 : w->start_ms;
    int64_t span = now_ms - from;
    if (span < 1000)
        span = 1000;
    *added_per_s = (double)a * 1000.0 / (double)span;
    *removed_per_s = (double)r * 1000.0 / (double)span;
}

double rate_empty_in(uint64_t lines, double added_per_s, double removed_per_s)
{
    double drain = removed_per_s - added_per_s;
    if (lines == 0 || drain <= 0)
        return -1;
    return (double)lines / drain;
}
