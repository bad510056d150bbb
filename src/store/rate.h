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

/* Seconds until a list of `lines` lines is empty at these rates, or -1 when it is not
 * draining (net removal rate <= 0) or already empty. */
double rate_empty_in(uint64_t lines, double added_per_s, double removed_per_s);

#endif
