/* SPDX-License-Identifier: Apache-2.0 */
/* list.c - one list of lines: packed leaves in a slot deque under a Fenwick tree of counts. */
#include "list_core.h"

#include <stdlib.h>
#include <string.h>

/* ---- Fenwick tree over slots ------------------------------------------------------ */

static void fen_add(list *l, uint32_t slot, size_t delta)
{
    /* delta may be a wrapped negative number: unsigned arithmetic makes it subtract. */
    for (size_t i = (size_t)slot + 1; i <= l->scap; i += i & (~i + 1))
        l->fen[i] += delta;
}

/* Sum of the counts of slots [0, slot). */
static size_t fen_prefix(const list *l, uint32_t slot)
{
    size_t sum = 0;
    for (size_t i = slot; i; i &= i - 1)
        sum += l->fen[i];
    return sum;
}

/* Slot holding position pos of the tree's counts; *rem is pos within that slot. */
static uint32_t fen_find(const list *l, size_t pos, size_t *rem)
{
    size_t i = 0;
    for (size_t step = l->fen_top; step; step >>= 1) {
        size_t j = i + step;
        if (j <= l->scap && l->fen[j] <= pos) {
            i = j;
            pos -= l->fen[j];
        }
    }
    *rem = pos;
    return (uint32_t)i;
}

/* Pushes and pops at the ends change only the end leaves' n; the tree learns it here,
 * when a leaf stops being an end leaf, so those operations stay O(1). */
static void flush(list *l, struct leaf *L)
{
    if (L->fw != L->n) {
        fen_add(l, L->slot, (size_t)L->n - L->fw);
        L->fw = L->n;
    }
}

static void leaf_count(list *l, struct leaf *L, int delta)
{
    L->n = (uint16_t)(L->n + delta);
    if (L->slot != l->lo && L->slot != l->hi - 1)
        flush(l, L);
}

/* Leaf holding position pos (< count); *k is the line within it. */
static struct leaf *locate(const list *l, size_t pos, uint32_t *k)
{
    struct leaf *h = l->slot[l->lo], *t = l->slot[l->hi - 1];
    size_t tstart = l->count - t->n, rem;
    if (pos < h->n || pos >= tstart) {
        *k = (uint32_t)(pos < h->n ? pos : pos - tstart);
        return pos < h->n ? h : t;
    }
    /* A middle position: the tree's view differs from the truth only by the head. */
    uint32_t s = fen_find(l, pos - h->n + h->fw, &rem);
    *k = (uint32_t)rem;
    /* A middle leaf of a big list is likely cold, and the walk needs its header, then
     * its lines up to k: fetching the whole leaf at once (harmless past a smaller one)
     * makes it wait about one memory latency, not two. */
    const char *L = (const char *)l->slot[s];
    for (size_t off = 0; off < LEAF_BYTES; off += 64)
        __builtin_prefetch(L + off);
    return l->slot[s];
}

size_t list_leaf_rank(const list *l, const struct leaf *L)
{
    const struct leaf *h = l->slot[l->lo], *t = l->slot[l->hi - 1];
    if (L == h)
        return 0;
    if (L == t)
        return l->count - t->n;
    return fen_prefix(l, L->slot) - h->fw + h->n;
}

/* ---- slot deque and block table ------------------------------------------------- */

/* Lays the live leaves out afresh in the middle of a new deque with room at both ends
 * and no dead slots, and rebuilds the tree in O(slots). Returns 0, or -1 on ENOMEM
 * (l unchanged). Amortized O(1): the room it leaves is proportional to the leaves. */
static int slots_rebuild(list *l)
{
    if (l->nlive > (UINT32_MAX - 64) / 2)
        return -1;
    uint32_t cap = 2 * l->nlive + 16, lo = (cap - l->nlive) / 2, j = lo;
    struct leaf **ns = alloc_malloc_fn((size_t)cap * sizeof *ns);
    size_t *nf = alloc_malloc_fn(((size_t)cap + 1) * sizeof *nf);
    if (!ns || !nf) {
        free(ns);
        free(nf);
        return -1;
    }
    memset(ns, 0, (size_t)cap * sizeof *ns);
    memset(nf, 0, ((size_t)cap + 1) * sizeof *nf);
    for (uint32_t i = l->lo; i < l->hi; i++) {
        struct leaf *L = l->slot[i];
        if (L) {
            L->slot = j;
            L->fw = L->n;
            ns[j] = L;
            nf[++j] = L->n;
        }
    }
    for (size_t i = 1; i <= cap; i++)
        if (i + (i & (~i + 1)) <= cap)
            nf[i + (i & (~i + 1))] += nf[i];
    free(l->slot);
    free(l->fen);
    l->slot = ns;
    l->fen = nf;
    l->scap = cap;
    l->lo = lo;
    l->hi = j;
    l->ndead = 0;
    for (l->fen_top = 1; (size_t)l->fen_top * 2 <= cap; l->fen_top *= 2)
        ;
    return 0;
}

/* Makes sure a leaf id is free to take. Returns 0, or -1 on ENOMEM. */
static int blk_reserve(list *l)
{
    if (l->nfree || l->nblk < l->blkcap)
        return 0;
    if (l->blkcap >= NO_ID / 2)
        return -1;
    uint32_t cap = l->blkcap ? 2 * l->blkcap : 16;
    struct leaf **b = alloc_realloc_fn(l->blk, (size_t)cap * sizeof *b);
    if (!b)
        return -1;
    l->blk = b;
    uint32_t *f = alloc_realloc_fn(l->free_ids, (size_t)cap * sizeof *f);
    if (!f)
        return -1; /* the bigger blk array is kept; blkcap still tells the truth */
    l->free_ids = f;
    l->blkcap = cap;
    return 0;
}

/* A new empty leaf of cap data bytes attached at the front or back, or NULL on ENOMEM
 * (l unchanged). Records go at the data end of a front leaf, at the start of a back one. */
static struct leaf *leaf_attach(list *l, uint32_t cap, int front)
{
    int full = l->nlive == 0 ? l->scap < 2 : front ? l->lo == 0 : l->hi == l->scap;
    if ((full && slots_rebuild(l) < 0) || blk_reserve(l) < 0)
        return NULL;
    struct leaf *L = leaf_alloc(&l->mem, cap);
    if (!L)
        return NULL;
    L->head = L->tail = L->last = front ? cap : 0;
    L->n = 0;
    L->fw = 0;
    L->id = l->nfree ? l->free_ids[--l->nfree] : l->nblk++;
    l->blk[L->id] = L;
    L->prev = L->next = NO_ID;
    /* The old end leaf becomes a middle one: its count goes into the tree now. */
    struct leaf *old = l->nlive ? l->slot[front ? l->lo : l->hi - 1] : NULL;
    if (old) {
        flush(l, old);
        *(front ? &old->prev : &old->next) = L->id;
        *(front ? &L->next : &L->prev) = old->id;
    } else {
        l->lo = l->hi = l->scap / 2;
    }
    L->slot = old && front ? --l->lo : l->hi++;
    l->slot[L->slot] = L;
    l->nlive++;
    return L;
}

/* Frees an empty leaf and retires its slot and id. */
static void leaf_detach(list *l, struct leaf *L)
{
    uint32_t s = L->slot;
    if (L->prev != NO_ID)
        l->blk[L->prev]->next = L->next;
    if (L->next != NO_ID)
        l->blk[L->next]->prev = L->prev;
    flush(l, L); /* zeroes the tree's count of an end leaf */
    l->slot[s] = NULL;
    l->blk[L->id] = NULL;
    l->free_ids[l->nfree++] = L->id;
    leaf_release(&l->mem, L);
    l->nlive--;
    if (l->nlive == 0) {
        l->lo = l->hi = l->scap / 2;
        l->ndead = 0;
    } else if (s == l->lo) {
        while (!l->slot[++l->lo])
            l->ndead--;
    } else if (s == l->hi - 1) {
        while (!l->slot[--l->hi - 1])
            l->ndead--;
    } else {
        l->ndead++;
    }
    /* Compact when dead slots dominate or the deque is mostly empty; optional. */
    if (l->ndead > l->nlive + 16 || (l->scap > 64 && l->scap / 8 > l->nlive))
        (void)slots_rebuild(l);
}

/* Grows L to cap data bytes (see leaf_resize) and repoints the tables to where it went.
 * Returns the leaf, or NULL on ENOMEM (L unchanged). */
static struct leaf *resize(list *l, struct leaf *L, uint32_t cap)
{
    struct leaf *M = leaf_resize(&l->mem, L, cap);
    if (M)
        l->blk[M->id] = l->slot[M->slot] = M;
    return M;
}

/* ---- pushes --------------------------------------------------------------------- */

/* Makes need bytes of room at one end of the end leaf L, by moving its records (when it
 * is at most half full) or growing it (while smaller than a standard leaf). Returns L,
 * possibly moved, or NULL when the caller should start a new leaf instead. */
static struct leaf *leaf_room(list *l, struct leaf *L, size_t need, int front)
{
    if (L->n >= LEAF_MAX_LINES)
        return NULL;
    if (front ? L->head >= need : L->cap - L->tail >= need)
        return L;
    uint32_t used = leaf_used(L);
    /* Moving costs up to half a leaf, paid for by the half leaf of pushes before it. */
    if (used + need > L->cap || used > L->cap / 2) {
        if (L->cap >= LEAF_CAP || used + need > LEAF_CAP)
            return NULL;
        uint32_t total = (uint32_t)(sizeof *L + L->cap) * 2;
        uint32_t cap = total > LEAF_BYTES ? LEAF_CAP : total - (uint32_t)sizeof *L;
        if (!(L = resize(l, L, cap < used + need ? (uint32_t)(used + need) : cap)))
            return NULL;
        if (!front && L->cap - L->tail >= need)
            return L;
    }
    /* A lone leaf gets pushes at both ends, so it keeps its free room split. */
    uint32_t spare = L->cap - used, h = front ? spare : 0;
    if (l->nlive == 1 && spare / 2 >= need)
        h = spare / 2;
    leaf_place(L, h);
    return L;
}

static int push(list *l, const char *s, size_t len, int front, uint32_t tag)
{
    size_t need = len + 1;
    for (size_t v = len; v >= 0x80; v >>= 7)
        need++;
    if (len > LINE_MAX_LEN || (l->ix && index_reserve(l->ix, 1) < 0) ||
        (COLS_INDEXED(l) && list_cols_reserve(l->cols) < 0))
        return -1;
    struct leaf *L = NULL, *end = NULL;
    if (l->nlive) {
        end = l->slot[front ? l->lo : l->hi - 1];
        L = leaf_room(l, end, need, front);
    }
    if (!L && !(L = leaf_attach(l, leaf_new_cap(end, need), front)))
        return -1;
    unsigned char *p;
    if (front) {
        L->head -= (uint32_t)need;
        p = L->data + L->head;
        if (L->n == 0)
            L->last = L->head;
    } else {
        p = L->data + L->tail;
        L->last = L->tail;
        L->tail += (uint32_t)need;
    }
    size_t v = len;
    for (; v >= 0x80; v >>= 7)
        *p++ = (unsigned char)(v | 0x80);
    *p++ = (unsigned char)v;
    memcpy(p, s, len);
    leaf_count(l, L, 1);
    l->count++;
    l->bytes += len;
    if (l->ix)
        index_insert(l->ix, L->id, tag);
    if (COLS_INDEXED(l))
        list_cols_insert(l->cols, L->id, (const char *)p, len);
    return 0;
}

int list_push_front(list *l, const char *s, size_t len)
{
    return push(l, s, len, 1, l->ix ? index_hash(s, len) : 0);
}

int list_push_back(list *l, const char *s, size_t len)
{
    /* INITFILE's path, taken for most lines: a short line into room left in the tail
     * leaf, which as an end leaf keeps its count out of the tree. */
    struct leaf *L = l->nlive ? l->slot[l->hi - 1] : NULL;
    if (L && len < 0x80 && !l->ix && !COLS_INDEXED(l) && L->n < LEAF_MAX_LINES &&
        L->cap - L->tail > len) {
        unsigned char *p = L->data + L->tail;
        *p = (unsigned char)len;
        memcpy(p + 1, s, len);
        L->last = L->tail;
        L->tail += (uint32_t)len + 1;
        L->n++;
        l->count++;
        l->bytes += len;
        return 0;
    }
    return push(l, s, len, 0, l->ix ? index_hash(s, len) : 0);
}

/* ---- removal and merging ---------------------------------------------------------- */

/* Merges neighbours A (first) and B into whichever has more lines, so fewer index
 * entries move. Skipped, harmlessly, if growing the target fails. */
static void leaf_merge(list *l, struct leaf *A, struct leaf *B)
{
    uint32_t ua = leaf_used(A), ub = leaf_used(B);
    int into_a = A->n >= B->n;
    struct leaf *dst = into_a ? A : B, *src = into_a ? B : A;

    if (dst->cap < ua + ub && !(dst = resize(l, dst, LEAF_CAP)))
        return;
    *(into_a ? &A : &B) = dst;
    /* With every count in the tree, the end leaves need no special care below. */
    flush(l, l->slot[l->lo]);
    flush(l, l->slot[l->hi - 1]);
    if (l->ix || COLS_INDEXED(l)) {
        uint32_t off = src->head;
        for (uint32_t k = 0; k < src->n; k++) {
            size_t len;
            const char *p = rec_line(src, off, &len, &off);
            if (l->ix)
                index_move(l->ix, index_hash(p, len), src->id, dst->id);
            if (COLS_INDEXED(l))
                list_cols_move(l->cols, p, len, src->id, dst->id);
        }
    }
    if (into_a) {
        if (A->cap - A->tail < ub)
            leaf_place(A, 0);
        memcpy(A->data + A->tail, B->data + B->head, ub);
        A->last = A->tail + (B->last - B->head);
        A->tail += ub;
    } else {
        if (B->head < ua)
            leaf_place(B, B->cap - ub);
        B->head -= ua;
        memcpy(B->data + B->head, A->data + A->head, ua);
    }
    fen_add(l, dst->slot, src->n);
    fen_add(l, src->slot, (size_t)0 - src->n);
    dst->n = dst->fw = (uint16_t)(dst->n + src->n);
    src->n = 0;
    src->fw = 0;
    leaf_detach(l, src);
}

/* Whether neighbours A and B would fit in one standard leaf. */
static int fits(const struct leaf *A, const struct leaf *B)
{
    return A && B && leaf_used(A) + leaf_used(B) <= LEAF_CAP && A->n + B->n <= LEAF_MAX_LINES;
}

/* Removes line k of L, which starts at off; tag is its index tag when the index exists.
 * Never fails. A pop at either end of the list skips the merge check: that leaf is on
 * its way out. */
static void remove_at(list *l, struct leaf *L, uint32_t k, uint32_t off, uint32_t tag, int pop)
{
    size_t len;
    uint32_t end;
    const char *line = rec_line(L, off, &len, &end);
    uint32_t rs = end - off;

    if (l->ix)
        index_remove(l->ix, L->id, tag);
    if (COLS_INDEXED(l))
        list_cols_remove(l->cols, L->id, line, len);
    l->count--;
    l->bytes -= len;
    if (L->n == 1) {
        leaf_count(l, L, -1);
        leaf_detach(l, L);
        return;
    }
    if (k == 0) {
        L->head = end;
    } else if (k == L->n - 1u) {
        L->tail = off;
        L->last = leaf_seek(L, k - 1);
    } else if (off - L->head < L->tail - end) {
        memmove(L->data + L->head + rs, L->data + L->head, off - L->head);
        L->head += rs;
    } else {
        memmove(L->data + off, L->data + end, L->tail - end);
        L->tail -= rs;
        L->last -= rs;
    }
    leaf_count(l, L, -1);
    /* Keep leaves at least about half full after removals inside the list. */
    if (pop || leaf_used(L) * 2 >= L->cap)
        return;
    struct leaf *P = L->prev != NO_ID ? l->blk[L->prev] : NULL;
    struct leaf *N = L->next != NO_ID ? l->blk[L->next] : NULL;
    if (fits(P, L))
        leaf_merge(l, P, L);
    else if (fits(L, N))
        leaf_merge(l, L, N);
}

int list_remove(list *l, size_t pos)
{
    if (pos >= l->count)
        return -1;
    uint32_t k, tag = 0;
    struct leaf *L = locate(l, pos, &k);
    uint32_t off = leaf_seek(L, k);
    if (l->ix) {
        size_t len;
        const char *p = rec_line(L, off, &len, NULL);
        tag = index_hash(p, len);
    }
    remove_at(l, L, k, off, tag, pos == 0 || pos == l->count - 1);
    return 0;
}

int list_move_to_back(list *l, size_t pos)
{
    if (pos >= l->count)
        return -1;
    if (pos == l->count - 1)
        return 0;
    uint32_t k, end;
    struct leaf *L = locate(l, pos, &k);
    uint32_t off = leaf_seek(L, k);
    size_t len;
    const char *p = rec_line(L, off, &len, &end);

    if (L == l->slot[l->hi - 1]) {
        /* A push could move or fill this very leaf: rotate the record inside it. With at
         * least two lines here the leaf is a standard one, so the record fits the copy.
         * Same leaf, same line: the index needs no change. */
        unsigned char tmp[LEAF_BYTES];
        uint32_t rs = end - off;
        memcpy(tmp, L->data + off, rs);
        memmove(L->data + off, L->data + end, L->tail - end);
        memcpy(L->data + L->tail - rs, tmp, rs);
        L->last = L->tail - rs;
        return 0;
    }
    /* Pushing touches only the tail leaf or a new one, so p stays valid. */
    uint32_t tag = l->ix ? index_hash(p, len) : 0;
    if (push(l, p, len, 0, tag) < 0)
        return -1;
    remove_at(l, L, k, off, tag, pos == 0);
    return 0;
}

/* ---- reads ---------------------------------------------------------------------- */

list *list_create(void)
{
    list *l = alloc_malloc_fn(sizeof *l);
    if (l)
        memset(l, 0, sizeof *l);
    return l;
}

void list_free(list *l)
{
    if (!l)
        return;
    leaf_free_all(&l->mem, l->blk, l->nblk);
    free(l->blk);
    free(l->free_ids);
    free(l->slot);
    free(l->fen);
    index_free(l->ix);
    list_cols_free(l->cols);
    free(l);
}

size_t list_length(const list *l)
{
    return l->count;
}

size_t list_bytes(const list *l)
{
    return l->bytes;
}

size_t list_memory(const list *l)
{
    return sizeof *l + l->mem.bytes + (size_t)l->mem.nstash * LEAF_BYTES +
           (size_t)l->scap * (sizeof *l->slot + sizeof *l->fen) +
           (size_t)l->blkcap * (sizeof *l->blk + sizeof *l->free_ids) + index_memory(l->ix) +
           list_cols_memory(l->cols);
}

const char *list_get(const list *l, size_t pos, size_t *len)
{
    if (pos >= l->count)
        return NULL;
    uint32_t k;
    const struct leaf *L = locate(l, pos, &k);
    return rec_line(L, leaf_seek(L, k), len, NULL);
}

/* Calls fn on each line from the head; stops at a nonzero return, which it returns with
 * the line's position in *at. Walks leaves directly: no per-line position lookup. */
static int walk(const list *l, list_match_fn fn, void *ctx, size_t *at)
{
    size_t pos = 0;
    for (uint32_t i = l->lo; i < l->hi; i++) {
        const struct leaf *L = l->slot[i];
        uint32_t off = L ? L->head : 0;
        for (uint32_t k = 0; L && k < L->n; k++, pos++) {
            size_t len;
            const char *p = rec_line(L, off, &len, &off);
            int r = fn(p, len, ctx);
            if (r) {
                *at = pos;
                return r;
            }
        }
    }
    return 0;
}

ssize_t list_scan(const list *l, list_match_fn match, void *ctx)
{
    size_t at;
    int r = walk(l, match, ctx, &at);
    return r > 0 ? (ssize_t)at : r < 0 ? r : -1;
}

int list_foreach(const list *l, int (*fn)(const char *s, size_t len, void *ctx), void *ctx)
{
    size_t at;
    return walk(l, fn, ctx, &at);
}
