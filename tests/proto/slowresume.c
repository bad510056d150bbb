/* SPDX-License-Identifier: Apache-2.0 */
/* slowresume.c - LD_PRELOAD shim for test_hangup: with $STSD_SLOW_RESUME_MS, every
 * MHD_resume_connection returns that long after the real one has run. The connection
 * resumes at once, so its thread answers, closes and frees it while the thread that
 * resumed it is still inside the call: the window of issue 35, held open for as long as
 * the test needs to make the interleaving happen every time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

struct MHD_Connection;

void MHD_resume_connection(struct MHD_Connection *c)
{
    static void (*real)(struct MHD_Connection *);
    if (!real)
        real = (void (*)(struct MHD_Connection *))dlsym(RTLD_NEXT, "MHD_resume_connection");
    if (!real)
        abort();
    real(c);
    const char *ms = getenv("STSD_SLOW_RESUME_MS");
    long n = ms ? strtol(ms, NULL, 10) : 0;
    if (n > 0) {
        struct timespec t = {n / 1000, (n % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
}
