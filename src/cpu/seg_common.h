/*
 * seg_common.h - what the CPU's chained passes (scan.c, select.c and the
 * segmented operations' files) share: the chain of per-chunk prefixes (a
 * slot per chunk, a flag set with release order once the chunk's prefix is
 * in it) and the order chunks are claimed in, the thread count for a job,
 * and counting and finding a chunk's heads.
 */
#ifndef PARSUM_CPU_SEG_COMMON_H
#define PARSUM_CPU_SEG_COMMON_H

#include "../core/internal.h"
#include "cpu.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARSUM__CPU_RELAX() _mm_pause()
#else
#define PARSUM__CPU_RELAX() ((void)0)
#endif

#define PARSUM__ROUND64(x) (((x) + 63) & ~(size_t)63)

/* Slots: slot_bytes apart, the flag in the first cache line, the payload
 * (prefix value, run count ...) from byte 8 on, the value at byte 64. */
static inline atomic_int *parsum__slot_flag(unsigned char *slots,
                                            size_t slot_bytes, size_t c)
{
    return (atomic_int *)(void *)(slots + c * slot_bytes);
}

static inline void parsum__slot_wait(unsigned char *slots, size_t slot_bytes,
                                     size_t c)
{
    atomic_int *f = parsum__slot_flag(slots, slot_bytes, c);
    unsigned spins = 0;
    while (atomic_load_explicit(f, memory_order_acquire) == 0) {
        if (++spins < 256)
            PARSUM__CPU_RELAX();
        else
            sched_yield(); /* more threads than cores: let the producer run */
    }
}

static inline void parsum__slot_publish(unsigned char *slots,
                                        size_t slot_bytes, size_t c)
{
    atomic_store_explicit(parsum__slot_flag(slots, slot_bytes, c), 1,
                          memory_order_release);
}

/* Whether the threads of a chained pass (nt of them) claim their next
 * chunk a chunk ahead, to prefetch it while they finish the current one,
 * or each chunk when they start it. A chunk claimed ahead is read only
 * after its thread's current chunk is done, while the threads holding
 * later chunks wait for its prefix: with many threads that wait dominates
 * (16-core Xeon, 16 threads, 2^28 i32: scan 50-82 -> 77-87 % of copy,
 * reduce by key 1.1-1.8x faster), while a few threads need the prefetch
 * to keep one core reading and writing at once (the scan on 2 cores: 96 %
 * of copy ahead, 80 % at start); 4 to 12 threads measured about the same
 * either way (bench/RESULTS.md). */
#define PARSUM__CLAIM_AT_START_THREADS 8

static inline int parsum__claim_ahead(int nt)
{
    return nt < PARSUM__CLAIM_AT_START_THREADS;
}

/* A chained pass's chunks come from the counter *next in increasing
 * order. A thread takes its first with parsum__claim; at the top of each
 * round parsum__claim_next gives the chunk to prefetch (claimed now when
 * claiming ahead, else none: nchunks), and at the end parsum__claim_after
 * the chunk to do next (that one, or a fresh claim). A chunk only ever
 * waits for lower chunks, all held by running threads: no deadlock. */
static inline size_t parsum__claim(atomic_size_t *next)
{
    return atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
}

static inline size_t parsum__claim_next(atomic_size_t *next, size_t nchunks,
                                        int ahead)
{
    return ahead ? parsum__claim(next) : nchunks;
}

static inline size_t parsum__claim_after(atomic_size_t *next, size_t claimed,
                                         int ahead)
{
    return ahead ? claimed : parsum__claim(next);
}

/* Threads for nchunks chunks: one per 4 chunks at most, as scan.c does
 * (below that a parallel region costs more than it saves). */
static inline int parsum__seg_workers(const parsum_context *ctx,
                                      size_t nchunks)
{
    size_t most = nchunks / 4 > 0 ? nchunks / 4 : 1;
    return (size_t)ctx->threads < most ? ctx->threads : (int)most;
}

/* log2 of an element size of 1, 2, 4 or 8 bytes: the index of the
 * size-only kernels (key_diff, compress). */
static inline int parsum__log2_size(size_t size)
{
    return size >= 8 ? 3 : size >= 4 ? 2 : size >= 2 ? 1 : 0;
}

/* Set bits among the first len bits of w (bits above len clear). */
static inline size_t parsum__count_heads(const uint64_t *w, size_t len)
{
    size_t c = 0;
    for (size_t i = 0; i < (len + 63) / 64; i++)
        c += parsum__popcount64(w[i]);
    return c;
}

/* First and last set bit among the first len bits of w (bits above len
 * clear); returns 0 when none is set. */
static inline int parsum__find_heads(const uint64_t *w, size_t len,
                                     size_t *first, size_t *last)
{
    size_t nw = (len + 63) / 64, i = 0;
    while (i < nw && w[i] == 0)
        i++;
    if (i == nw)
        return 0;
    *first = 64 * i + (size_t)__builtin_ctzll(w[i]);
    size_t k = nw - 1;
    while (w[k] == 0)
        k--;
    *last = 64 * k + 63 - (size_t)__builtin_clzll(w[k]);
    return 1;
}

#endif
