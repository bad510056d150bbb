/* SPDX-License-Identifier: Apache-2.0 */
/* list_core.h - what list.c (the deque) offers list_index.c (lookups). */
#ifndef STSD_LIST_CORE_H
#define STSD_LIST_CORE_H

#include "list_int.h"

/* Position of the first line of L in l (list.c). */
size_t list_leaf_rank(const list *l, const struct leaf *L);

#endif
