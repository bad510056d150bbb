/* SPDX-License-Identifier: Apache-2.0 */
/* rate.h - lines added and removed per second over a sliding window of ten 1-second
 * buckets, kept per list by the store (under the list's lock). */
#ifndef STSD_RATE_H
#define STSD_RATE_H

#include <stdint.h>

#define RATE_SLOTS 10

typedef struct rate_window {
    int64_t start_ms;              /* when counting began */
    int64_t sec[RATE_SLOTS];       /* the second each bucket counts (-1: none yet) */
    uint64_t added[RATE_SLOTS];
    uint64_t removed[RATE_SLOTS];
} rate_window;

/* Milliseconds on a monotonic clock (cheap: the coarse clock, ~4 ms steps). */
int64_t rate_now_ms(void);

/* Empties w; counting starts at now_ms. */
void rate_init(rate_window *w, int64_t now_ms);

/* Counts added and removed lines at now_ms. */
void rate_count(rate_window *w, int64_t now_ms, uint64_t added, uint64_t removed);

/* Lines per second over the last RATE_SLOTS seconds up to now_ms (fewer while the window
 * is younger than that; at least one second is assumed). */
void rate_get(const rate_window *w, int64_t now_ms, double *added_per_s,
              double *removed_per_s);

/* The seconds that always make the drain's trend (see rate_drain). */
#define RATE_TREND_S 3

/* Net lines removed per second (removed minus added) in the present trend at now_ms: over
 * the last RATE_TREND_S seconds, extended back over the older seconds of the window
 * while each of them drained as well. So a fill followed by a steady drain, or an idle
 * list that starts draining, shows the drain's own rate RATE_TREND_S seconds after it
 * starts, not a mix with what came before. <= 0: not draining (growing, idle, balanced). */
double rate_drain(const rate_window *w, int64_t now_ms);

/* Seconds until a list of `lines` lines is empty at drain_per_s (rate_drain), or -1 when
 * it is not draining (drain_per_s <= 0) or already empty. */
double rate_empty_in(uint64_t lines, double drain_per_s);

#endif
