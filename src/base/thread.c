/* SPDX-License-Identifier: Apache-2.0 */
/* thread.c - threads started and named in one call. */
#include "base/thread.h"

#include <errno.h>

int thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(t, NULL, fn, arg);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    pthread_setname_np(*t, name);     /* a name is for people: its failure is not ours */
    return 0;
}
