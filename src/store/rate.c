/* SPDX-License-Identifier: Apache-2.0 */
/* rate.c - per-list add/remove rates over a 10 s window of 1 s buckets, and the recent
 * drain that time to empty follows. */
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

/* Net lines removed over the seconds [from_s, to_s] (to_s possibly partial, up to now_ms),
 * per second of that span; the span starts no earlier than counting did. */
static double net_drain(const rate_window *w, int64_t now_ms, int64_t from_s, int64_t to_s)
{
    int64_t net = 0;
    for (int i = 0; i < RATE_SLOTS; i++)
        if (w->sec[i] >= from_s && w->sec[i] <= to_s)
            net += (int64_t)w->removed[i] - (int64_t)w->added[i];
    int64_t from = from_s * 1000 > w->start_ms ? from_s * 1000 : w->start_ms;
    int64_t span = now_ms - from;
    if (span < 1000)
        span = 1000;
    return (double)net * 1000.0 / (double)span;
}

/* The net of one whole second (0 if it was not counted, or has left the window). */
static int64_t second_net(const rate_window *w, int64_t sec)
{
    int i = (int)(sec % RATE_SLOTS);
    return w->sec[i] == sec ? (int64_t)w->removed[i] - (int64_t)w->added[i] : 0;
}

double rate_drain(const rate_window *w, int64_t now_ms)
{
    int64_t s = now_ms / 1000;
    /* The last RATE_TREND_S seconds (the current one as far as it has gone) decide: a
     * fill or an idle stretch before them is not the present trend. Older seconds join
     * only while each of them drained too, so that a steady drain is averaged over up to
     * the whole window and a change is followed within RATE_TREND_S seconds. */
    int64_t from = s - (RATE_TREND_S - 1);
    while (from > s - (RATE_SLOTS - 1) && second_net(w, from - 1) > 0)
        from--;
    return net_drain(w, now_ms, from, s);
}

double rate_empty_in(uint64_t lines, double drain_per_s)
{
    if (lines == 0 || drain_per_s <= 0)
        return -1;
    return (double)lines / drain_per_s;
}
