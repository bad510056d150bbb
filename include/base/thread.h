/* SPDX-License-Identifier: Apache-2.0 */
/* thread.h - starting stsd's threads, each under its name (top -H, perf, /proc/PID/task). */
#ifndef STSD_THREAD_H
#define STSD_THREAD_H

#include <pthread.h>

/* Starts fn(arg) on a new joinable thread, stored in *t, and names it name (at most 15
 * bytes: "stsd-" and what it does; a name that does not fit is left off, the thread
 * runs anyway). Returns 0, or -1 with errno set (EAGAIN, ...) and no thread started.
 * The new thread inherits the caller's signal mask. */
int thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

#endif
