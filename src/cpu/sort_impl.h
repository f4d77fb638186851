/*
 * sort_impl.h - what the CPU radix sort's drivers share: sort_call.c (a
 * call's key format, value mode and scratch), sort.c (the radix sort of
 * one array, the sort slot), sort_small.c (the small sorts) and
 * sort_seg.c (the segmented sort slot, which sorts each segment with
 * them).
 */
#ifndef PARSUM_CPU_SORT_IMPL_H
#define PARSUM_CPU_SORT_IMPL_H

#include "../core/internal.h"
#include "cpu.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most elements parsum__sort_small sorts. */
#define PARSUM__SORT_SMALL_MAX 512

/* Bytes of a thread's local buffer, in which the MSD-first sort sorts a
 * bucket or a part of one (sort.c). Parts of up to this many bytes sorted
 * fastest on the development machine (2 MiB of L2 cache per core): 1 MiB
 * took 1.7 times the CPU time for 2^28 u32 keys, 256 KiB 1.1 times. */
#define PARSUM__SORT_LOCAL_BYTES ((size_t)128 << 10)
/* Blocks per thread of a parallel sort (parsum__sort_blocks). */
#define PARSUM__SORT_BLOCKS_PER_THREAD 4

/* The scratch of one block of a sort (every area) and of one thread (the
 * first `threads` areas of a call):
 *   hist  the block's counts of every digit (PARSUM__SORT_RADIX_MAX
 *         counters per digit), tot the sums over the blocks, cnt the
 *         block's counts of the current pass's digit, pos its positions,
 *         start scratch of the write-combining kernel;
 *   stage the thread's write-combining groups, local its bucket buffer
 *         (both NULL for sorts that stay in the cache). */
typedef struct parsum__sort_area {
    size_t *hist, *tot, *cnt, *pos, *start;
    unsigned char *stage;
    /* a bucket of the MSD pass (sort.c): local_cap keys, then their
     * values, sorted here in the cache */
    unsigned char *local;
    size_t local_cap;
} parsum__sort_area;

/* One call's arrays, key format and scratch; a sort of the elements
 * [off, off + m) of them (a segment, or all) sees the same offset of each
 * array and of the temporaries.
 *   vm    value mode of the whole sort (cpu.h): NONE, V4, V8, V16, ANY, or
 *         IDX64 for parsum_sort_indices (values_out is the permutation);
 *   idx32 the permutation's positions fit in uint32_t: passes before the
 *         last carry those;
 *   kt1, kt2, vt  temporaries of the full length (kt2 only without
 *         keys_out: the keys then need two). */
typedef struct parsum__sort_call {
    const parsum__sort_args *a;
    const parsum__cpu_sort_kernels *k;
    int kind;
    size_t kb;
    uint64_t flip;
    unsigned begin, end;
    int vm;
    size_t vs;
    bool idx32;
    unsigned char *kt1, *kt2, *vt;
    parsum__sort_area *areas;
    int nareas;
    int threads; /* threads a parallel sort of one array may use */
} parsum__sort_call;

/* Sets up c for the call a: key format and value mode, and the scratch
 * (carved from one request) of sorts on up to `threads` threads: the areas
 * of their blocks, the first `threads` of them each thread's own (0: no
 * scratch, for the small sorts). */
parsum_status parsum__sort_call_init(parsum_context *ctx,
                                     parsum__sort_call *c,
                                     const parsum__sort_args *a,
                                     int threads);

/* Threads worth using for a sort of n elements, at most `threads`. */
int parsum__sort_threads(size_t n, int threads);

/* Blocks of a sort on nt threads: several per thread, handed out from a
 * shared counter, so that a thread the system holds back (a busy machine)
 * delays a pass by one block, not by its whole share. */
int parsum__sort_blocks(int nt);

/* Bytes of keys and values above which a sort goes through the
 * write-combining scatter (sort_call.c). */
size_t parsum__sort_wc_threshold(void);

/* Bytes of a thread's local buffer of the MSD-first sort (sort_call.c):
 * PARSUM__SORT_LOCAL_BYTES unless the environment says otherwise. */
size_t parsum__sort_local_bytes(void);

/* Bytes of a value in the value temporary: the positions of
 * parsum_sort_indices travel as uint32_t when they fit. */
static inline size_t parsum__sort_temp_vs(const parsum__sort_call *c)
{
    return c->idx32 ? 4 : c->vs;
}

/* Sorts elements [off, off + m) of c's arrays: a radix sort on nt
 * threads (areas: all of c's), or in the calling thread (nt 1, areas:
 * that thread's own). */
void parsum__sort_radix(const parsum__sort_call *c, size_t off, size_t m,
                        int nt, parsum__sort_area *areas);

/* Up to how many elements parsum__sort_small beats the radix sort for c's
 * keys (at most PARSUM__SORT_SMALL_MAX), and that sort of the m elements
 * at off (sort_small.c). Uses no scratch. */
size_t parsum__sort_small_max(const parsum__sort_call *c);
void parsum__sort_small(const parsum__sort_call *c, size_t off, size_t m);

/* Copies m elements at off to the outputs unchanged (m keys of one sort
 * whose selected bits are all equal, or a segment of one element). */
void parsum__sort_identity(const parsum__sort_call *c, size_t off, size_t m,
                           int nt);

#endif
