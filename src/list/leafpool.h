/* SPDX-License-Identifier: Apache-2.0 */
/* leafpool.h - 4 KiB leaf slots carved from 2 MiB huge-page chunks, reused without faults. */
#ifndef STSD_LEAFPOOL_H
#define STSD_LEAFPOOL_H

#include <stddef.h>
#include <sys/types.h>

/* Why a pool: on this kind of VM a 4 KiB page fault costs ~10 us, so a 290 MB INITFILE
 * spent most of its time faulting in malloc'd leaves, and again on every reload because
 * glibc hands freed memory back. Chunks are 2 MiB aligned and advised as huge pages (one
 * fault each), and freed slots are reused while resident. Memory fresh from the kernel is
 * still slow here whatever the page size (the host backs it on first touch: ~0.5 s per
 * 300 MB), and memory handed back turns fresh again within seconds (the guest reports free
 * 8 MiB blocks to the host), so: a thread of the pool faults chunks in ahead of a big
 * load, on another CPU, and empty chunks beyond a reserve are kept for a grace period
 * before they go back, long enough for the next reload to find them.
 * Thread-safe: one mutex, taken once per batch of slots. */

#define LEAFPOOL_SLOT 4096u                      /* bytes per slot */
#define LEAFPOOL_CHUNK ((size_t)2 << 20)         /* bytes per chunk; slot 0 is its header */
#define LEAFPOOL_RESERVE_MIN ((size_t)64 << 20)  /* the shared pool's floor of empty chunks */
#define LEAFPOOL_GRACE_MS 30000u                 /* the shared pool's grace period */

/* Under AddressSanitizer the list engine takes its leaves from malloc instead, so ASan's
 * redzones still catch an overflow past a leaf; the pool itself still works (and poisons
 * the slots it holds), for its own tests. */
#if defined(__SANITIZE_ADDRESS__)
#define LEAFPOOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LEAFPOOL_ASAN 1
#endif
#endif
#ifndef LEAFPOOL_ASAN
#define LEAFPOOL_ASAN 0
#endif

typedef struct leafpool leafpool;

struct leafpool_opts {
    /* Empty chunks kept for reuse: max(reserve_min, a quarter of the bytes in use). */
    size_t reserve_min;
    /* Empty chunks beyond the reserve are unmapped grace_ms after the excess appeared,
     * so a list freed by a reload is there for the next one; 0: unmapped at once. */
    unsigned grace_ms;
    /* Nonzero: once the pool holds a few chunks, a thread faults some in ahead. */
    int prefault;
};

struct leafpool_stats {
    size_t chunks;       /* chunks holding memory (mapped and touched) */
    size_t empty_chunks; /* of them, with no slot handed out */
    size_t slots_used;   /* slots handed out and not yet given back */
    size_t peak_chunks;  /* most chunks ever held at once */
};

/* The process-wide pool the list engine uses: LEAFPOOL_RESERVE_MIN, LEAFPOOL_GRACE_MS,
 * prefault on. Never fails, never freed. */
leafpool *leafpool_shared(void);

/* A private pool (tests, tools). Returns NULL on ENOMEM. Free it with leafpool_destroy. */
leafpool *leafpool_create(const struct leafpool_opts *o);
/* Stops p's thread, unmaps p's chunks and frees p. Every slot must have been given back
 * first; chunks still holding slots are leaked, not pulled from under their users. */
void leafpool_destroy(leafpool *p);

/* Takes up to n slots of LEAFPOOL_SLOT bytes (16-aligned, contents undefined) into
 * out[]. Returns how many it took: n, fewer if the kernel ran out of memory midway, or 0
 * on ENOMEM. The caller gives each slot back with leafpool_give. */
size_t leafpool_take(leafpool *p, void **out, size_t n);
/* Gives back n slots taken from p. Never fails. */
void leafpool_give(leafpool *p, void *const *slots, size_t n);

/* A snapshot of p's counters, taken under its lock. */
void leafpool_stats(leafpool *p, struct leafpool_stats *out);

/* Allocation seam: address space is mapped only through this (default mmap); unit
 * tests swap it to inject ENOMEM. */
extern void *(*leafpool_mmap_fn)(void *addr, size_t len, int prot, int flags, int fd,
                                 off_t off);

#endif
