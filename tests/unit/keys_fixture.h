/* SPDX-License-Identifier: Apache-2.0 */
/* keys_fixture.h - a store with its keys attached (meet/keys.h), as stsd's own is: the
 * unit tests that reach the keys, directly or through the journal, make theirs here. */
#ifndef STSD_TEST_KEYS_FIXTURE_H
#define STSD_TEST_KEYS_FIXTURE_H

#include <stdlib.h>

#include "meet/keys.h"
#include "store/store.h"

/* store_create(lim) with keys; aborts on ENOMEM (a test cannot go on without it). */
static inline store *keyed_store(const store_limits *lim)
{
    store *st = store_create(lim);
    if (!st || keys_attach(st) != 0)
        abort();
    return st;
}

#endif
