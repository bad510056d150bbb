/* SPDX-License-Identifier: Apache-2.0 */
/* recover_keys.h - the keys during a replay (recover_keys.c): key records applied in log
 * order, then handed over to the recovered state. Private to recover.c. */
#ifndef STSD_RECOVER_KEYS_H
#define STSD_RECOVER_KEYS_H

#include "recover.h"
#include "wal.h"

typedef struct rkeys rkeys;

/* Applies key record r (types WAL_KEY_*) to *m (made on first use). Returns 0, or -1 on
 * ENOMEM. */
int rkeys_apply(rkeys **m, const wal_rec *r);

/* Moves the keys that exist and their open leases into rs (sorted by name). Returns 0,
 * or -1 on ENOMEM (what was moved is rs's, freed by recover_free). */
int rkeys_hand_over(rkeys *m, recover_state *rs);

/* Frees m (NULL is fine). */
void rkeys_free(rkeys *m);

#endif
