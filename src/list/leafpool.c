/* SPDX-License-Identifier: Apache-2.0 */
/* leafpool.c - 4 KiB leaf slots carved from 2 MiB huge-page chunks, reused without faults. */
#include "leafpool.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base/clock.h"
#include "base/thread.h"

#if LEAFPOOL_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define SLOTS ((uint32_t)(LEAFPOOL_CHUNK / LEAFPOOL_SLOT - 1)) /* slot 0 is the header */
/* A pool's first chunks stay on small pages, touched a slot at a time, so a pool serving
 * only small lists holds only what it touched; past them each chunk is one huge page. */
#define HUGE_AFTER 2u
/* Chunks the prefault thread keeps ready: chunks/8, at most AHEAD_MAX, so it starts only
 * once a pool holds 16 MiB, and what it holds beyond need stays small next to that. */
#define AHEAD_MAX 8u
/* Chunks of address space mapped at once, at most. */
#define REGION_MAX 16u

void *(*leafpool_mmap_fn)(void *, size_t, int, int, int, off_t) = mmap;

enum { ON_NONE, ON_AVAIL, ON_EMPTY };

/* The header of a chunk, in its first slot: a slot finds its chunk by masking. */
struct chunk {
    struct chunk *prev, *next; /* neighbours in the list named by on */
    void *free;                /* slots given back, linked through their first word */
    uint32_t used;             /* slots handed out */
    uint32_t fresh;            /* slots fresh..SLOTS-1 were never handed out */
    int on;                    /* ON_AVAIL: has room, in use; ON_EMPTY; ON_NONE: full */
};

enum { HELPER_NONE, HELPER_RUNNING, HELPER_FAILED };

struct leafpool {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the pool's thread waits here (CLOCK_MONOTONIC) */
    pthread_t helper;
    int helper_state, stop;
    struct leafpool_opts o;
    struct chunk *avail, *empty;
    size_t chunks, nempty, used, peak;
    size_t filling;           /* chunks being faulted in by the pool's thread */
    char *region;             /* address space mapped but not yet carved into chunks */
    size_t region_left;       /* chunks left there */
    int trimming;             /* an excess of empty chunks waits for trim_at */
    struct timespec trim_at;
};

/* ---- creation --------------------------------------------------------------------- */

static int pool_init(leafpool *p, const struct leafpool_opts *o)
{
    memset(p, 0, sizeof *p);
    p->o = *o;
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return -1;
    if (clock_cond_init(&p->wake) != 0)
        goto fail_lock;
    return 0;
fail_lock:
    pthread_mutex_destroy(&p->lock);
    return -1;
}

static leafpool shared;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_init(void)
{
    struct leafpool_opts o = {LEAFPOOL_RESERVE_MIN, LEAFPOOL_GRACE_MS, 1};
    /* Initialising a mutex and a condition variable without attributes beyond the clock
     * does not fail on Linux; should it, the pool could not work at all. */
    if (pool_init(&shared, &o) != 0)
        abort();
}

leafpool *leafpool_shared(void)
{
    pthread_once(&shared_once, shared_init);
    return &shared;
}

leafpool *leafpool_create(const struct leafpool_opts *o)
{
    leafpool *p = malloc(sizeof *p);
    if (!p)
        return NULL;
    if (pool_init(p, o) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* ---- chunk lists and address space ------------------------------------------------ */

static void unlink_chunk(struct chunk **head, struct chunk *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        *head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    c->on = ON_NONE;
}

static void push_chunk(struct chunk **head, struct chunk *c, int on)
{
    c->prev = NULL;
    c->next = *head;
    if (*head)
        (*head)->prev = c;
    *head = c;
    c->on = on;
}

/* Unmaps a list of chunks linked through next; takes no lock. */
static void unmap_chunks(struct chunk *c)
{
    while (c) {
        struct chunk *next = c->next;
        UNPOISON(c, LEAFPOOL_CHUNK);
        (void)munmap(c, LEAFPOOL_CHUNK); /* cannot fail on whole chunks we mapped */
        c = next;
    }
}

/* Address space for n chunks, 2 MiB aligned so that each can be one huge page and so that
 * a slot finds its header by masking: map a chunk more and trim. huge: advise huge pages.
 * NULL on ENOMEM. Touches nothing. */
static char *region_map(size_t n, int huge)
{
    size_t size = (n + 1) * LEAFPOOL_CHUNK;
    char *m = leafpool_mmap_fn(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)m + LEAFPOOL_CHUNK - 1) & ~(uintptr_t)(LEAFPOOL_CHUNK - 1));
    char *e = a + n * LEAFPOOL_CHUNK;
    /* Trimming cannot fail short of a kernel bug; an untrimmed piece would only waste
     * address space, never memory, since it is never touched. */
    if (a > m)
        (void)munmap(m, (size_t)(a - m));
    if (e < m + size)
        (void)munmap(e, (size_t)(m + size - e));
    if (huge)
        (void)madvise(a, n * LEAFPOOL_CHUNK, MADV_HUGEPAGE); /* advice: failure is harmless */
    return a;
}

/* The next never-touched chunk of address space (lock held), from the current region or
 * a new one. Regions grow with the pool up to REGION_MAX chunks, so a big load calls mmap
 * a few times, not once per chunk: mmap takes the address space's write lock and would
 * wait there for the other thread's faults. NULL on ENOMEM. */
static char *carve(leafpool *p)
{
    if (!p->region_left) {
        size_t n = p->chunks / 4;
        n = n < 1 ? 1 : n > REGION_MAX ? REGION_MAX : n;
        if (!(p->region = region_map(n, p->chunks >= HUGE_AFTER)))
            return NULL;
        p->region_left = n;
    }
    char *a = p->region;
    p->region += LEAFPOOL_CHUNK;
    p->region_left--;
    return a;
}

/* Makes the touched chunk at a part of p (lock held) and returns its header. */
static struct chunk *chunk_adopt(leafpool *p, char *a)
{
    struct chunk *c = (struct chunk *)a;
    memset(c, 0, sizeof *c);
    POISON(a + LEAFPOOL_SLOT, LEAFPOOL_CHUNK - LEAFPOOL_SLOT);
    if (++p->chunks > p->peak)
        p->peak = p->chunks;
    return c;
}

/* Empty chunks kept for good (lock held): a quarter of what is in use covers part of a
 * reload of a list that size, the floor covers small lists. */
static size_t reserve_chunks(const leafpool *p)
{
    size_t r = p->used * LEAFPOOL_SLOT / 4;
    if (r < p->o.reserve_min)
        r = p->o.reserve_min;
    return r / LEAFPOOL_CHUNK;
}

/* Faulted-in empty chunks the pool's thread keeps ready for takers (lock held). */
static size_t ahead(const leafpool *p)
{
    if (!p->o.prefault)
        return 0;
    size_t a = p->chunks / 8, r = reserve_chunks(p);
    a = a < AHEAD_MAX ? a : AHEAD_MAX;
    return a < r ? a : r;
}

/* Unlinks empty chunks beyond keep (lock held); the caller unmaps them without it. */
static struct chunk *trim(leafpool *p, size_t keep)
{
    struct chunk *drop = NULL;
    for (; p->nempty > keep; p->nempty--, p->chunks--) {
        struct chunk *c = p->empty;
        unlink_chunk(&p->empty, c);
        c->next = drop;
        drop = c;
    }
    p->trimming = 0;
    return drop;
}

/* ---- the pool's thread: prefaulting and delayed trimming ------------------------- */

/* Faults one chunk in (lock held, dropped meanwhile) and files it as empty. On a VM a
 * fresh page costs the host a fault and the guest a zeroing, ~0.5 s per 300 MB whatever
 * the page size: taking that here, on another CPU, overlaps it with the taker's parsing
 * and copying. Page faults, not MADV_POPULATE_WRITE: a fault locks only its region,
 * populating locks the whole address space and stalls the taker's mmaps. -1 on ENOMEM. */
static int prefault_one(leafpool *p)
{
    char *a = carve(p);
    if (!a)
        return -1;
    p->filling++;
    pthread_mutex_unlock(&p->lock);
    for (size_t off = 0; off < LEAFPOOL_CHUNK; off += LEAFPOOL_SLOT)
        ((volatile char *)a)[off] = 0;
    pthread_mutex_lock(&p->lock);
    p->filling--;
    push_chunk(&p->empty, chunk_adopt(p, a), ON_EMPTY);
    p->nempty++;
    return 0;
}

static int due(const struct timespec *at)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > at->tv_sec || (now.tv_sec == at->tv_sec && now.tv_nsec >= at->tv_nsec);
}

static void *helper_main(void *arg)
{
    leafpool *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        if (p->nempty + p->filling < ahead(p) && prefault_one(p) == 0)
            continue;
        if (p->trimming && due(&p->trim_at)) {
            struct chunk *drop = trim(p, reserve_chunks(p));
            pthread_mutex_unlock(&p->lock);
            unmap_chunks(drop);
            pthread_mutex_lock(&p->lock);
        } else if (p->trimming) {
            pthread_cond_timedwait(&p->wake, &p->lock, &p->trim_at);
        } else {
            /* Also where a failed prefault waits: for the next taker, not in a spin. */
            pthread_cond_wait(&p->wake, &p->lock);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Wakes the pool's thread, starting it on first need (lock held). Returns 0, or -1 if
 * there is no thread: takers then fault their own chunks and gives trim at once. */
static int helper_wake(leafpool *p)
{
    if (p->helper_state == HELPER_RUNNING) {
        pthread_cond_signal(&p->wake);
        return 0;
    }
    if (p->helper_state == HELPER_FAILED)
        return -1;
    /* Signals belong to the threads that wait for them, not to this one. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    p->helper_state = thread_start(&p->helper, "stsd-leafpool", helper_main, p) == 0
                          ? HELPER_RUNNING : HELPER_FAILED;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return p->helper_state == HELPER_RUNNING ? 0 : -1;
}

void leafpool_destroy(leafpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    if (p->helper_state == HELPER_RUNNING)
        pthread_join(p->helper, NULL);
    unmap_chunks(trim(p, 0));
    if (p->region_left)
        (void)munmap(p->region, p->region_left * LEAFPOOL_CHUNK);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* ---- taking and giving ------------------------------------------------------------ */

size_t leafpool_take(leafpool *p, void **out, size_t n)
{
    size_t got = 0;
    pthread_mutex_lock(&p->lock);
    while (got < n) {
        struct chunk *c = p->avail;
        if (!c) {
            /* Resident empty chunks first: reusing them costs no fault at all. */
            if ((c = p->empty) != NULL) {
                unlink_chunk(&p->empty, c);
                p->nempty--;
            } else {
                /* The pool's thread is behind: fault one in here, in parallel with it,
                 * and outside the lock, which a huge page's fault holds for ms. */
                char *a = carve(p);
                if (!a)
                    break;
                pthread_mutex_unlock(&p->lock);
                *(volatile char *)a = 0;
                pthread_mutex_lock(&p->lock);
                c = chunk_adopt(p, a);
            }
            push_chunk(&p->avail, c, ON_AVAIL);
        }
        /* Slots go out in address order from a fresh chunk: sequential first touches. */
        while (got < n && (c->free || c->fresh < SLOTS)) {
            void *s = c->free;
            if (s) {
                UNPOISON(s, LEAFPOOL_SLOT);
                c->free = *(void **)s;
            } else {
                s = (char *)c + (size_t)LEAFPOOL_SLOT * (1 + c->fresh++);
                UNPOISON(s, LEAFPOOL_SLOT);
            }
            c->used++;
            out[got++] = s;
        }
        if (!c->free && c->fresh == SLOTS)
            unlink_chunk(&p->avail, c);
    }
    p->used += got;
    if (p->nempty + p->filling < ahead(p))
        (void)helper_wake(p); /* without a thread, takers fault chunks in themselves */
    pthread_mutex_unlock(&p->lock);
    return got;
}

void leafpool_give(leafpool *p, void *const *slots, size_t n)
{
    struct chunk *drop = NULL;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < n; i++) {
        void *s = slots[i];
        struct chunk *c = (struct chunk *)((uintptr_t)s & ~(uintptr_t)(LEAFPOOL_CHUNK - 1));
        *(void **)s = c->free;
        c->free = s;
        POISON(s, LEAFPOOL_SLOT);
        if (c->on == ON_NONE)
            push_chunk(&p->avail, c, ON_AVAIL);
        if (--c->used == 0) {
            /* Start the chunk over: its slots go out in address order again. */
            c->free = NULL;
            c->fresh = 0;
            unlink_chunk(&p->avail, c);
            push_chunk(&p->empty, c, ON_EMPTY);
            p->nempty++;
        }
    }
    p->used -= n;
    size_t keep = reserve_chunks(p);
    if (p->nempty > keep && !p->trimming) {
        /* Memory the kernel takes back is slow to get again (see leafpool.h): keep the
         * excess a while, for a reload, unless there is no thread to trim it later. */
        if (p->o.grace_ms && helper_wake(p) == 0) {
            p->trim_at = clock_deadline_ns((uint64_t)p->o.grace_ms * 1000000u);
            p->trimming = 1;
        } else {
            drop = trim(p, keep);
        }
    }
    pthread_mutex_unlock(&p->lock);
    /* Unmapped outside the lock: other threads need not wait for the kernel. */
    unmap_chunks(drop);
}

void leafpool_stats(leafpool *p, struct leafpool_stats *out)
{
    pthread_mutex_lock(&p->lock);
    out->chunks = p->chunks;
    out->empty_chunks = p->nempty;
    out->slots_used = p->used;
    out->peak_chunks = p->peak;
    pthread_mutex_unlock(&p->lock);
}
