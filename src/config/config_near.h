/* SPDX-License-Identifier: Apache-2.0 */
/* config_near.h - what config_near.c offers config.c: the known key an unknown one looks
 * like (config_key_lookalike's rules, over a table passed in). */
#ifndef STSD_CONFIG_NEAR_H
#define STSD_CONFIG_NEAR_H

#include <stddef.h>

#include "config_int.h"

/* The name of the row of keys[0..n) that key looks like a misspelling of, or NULL (key is
 * one of them, or like none): see config_key_lookalike in config/config.h. */
const char *conf_near_key(const char *key, const conf_key *keys, size_t n);

#endif
