/*
 * bench_segments.h - segment-length distributions for the segmented
 * benchmarks (`parsum bench segscan|segreduce|scanbykey|reducebykey`):
 * offsets, packed head flags and keys of the same segments, generated on
 * the host, deterministically from a seed. Plain C without OpenMP, so that
 * the CPU and the CUDA benchmarks can share it.
 *
 * The distributions (issue 4 names the first five):
 *   len1         every segment has 1 element (n segments)
 *   len1-8       lengths uniform in 1..8 (mean 4.5)
 *   one          one segment of n elements
 *   powerlaw     Pareto lengths, P(L >= x) = x^-1.2 for x >= 1 (most
 *                segments of 1-3 elements, a few of millions; mean about 6
 *                before the cap at what is left of n)
 *   uniform1000  lengths uniform in 1..1999 (mean 1000)
 * The last segment is cut to what is left of n.
 */
#ifndef PARSUM_BENCH_SEGMENTS_H
#define PARSUM_BENCH_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pb_seg_dist {
    PB_SEG_LEN1 = 0,
    PB_SEG_LEN1_8,
    PB_SEG_ONE,
    PB_SEG_POWERLAW,
    PB_SEG_UNIFORM1000,
    PB_SEG_DIST_COUNT
} pb_seg_dist;

/* "len1", "len1-8", "one", "powerlaw", "uniform1000"; NULL if out of range. */
const char *pb_seg_dist_name(pb_seg_dist d);
/* The name's distribution into *out: 0, or -1 for an unknown name. */
int pb_seg_dist_parse(const char *name, pb_seg_dist *out);

/* Writes offsets[0 .. k] of the segments of distribution d over n
 * elements (offsets[0] = 0, offsets[k] = n; room for n + 1 values) and
 * returns k, the segment count (0 for n == 0). The same (d, n, seed)
 * always gives the same segments. */
size_t pb_seg_offsets(pb_seg_dist d, size_t n, uint64_t seed,
                      uint64_t *offsets);

/* Packed head flags of those segments in parsum's layout (bit i % 32 of
 * word i / 32 for element i, least significant bit first, bit offset 0):
 * ceil(n / 32) words, bits past n clear. */
void pb_seg_flags(const uint64_t *offsets, size_t nseg, size_t n,
                  uint32_t *flags);

/* Keys whose runs are the segments: the elements of segment s get the key
 * s, truncated to key_size bytes (1, 2, 4 or 8; consecutive segments still
 * differ), little-endian. */
void pb_seg_keys(const uint64_t *offsets, size_t nseg, size_t key_size,
                 void *keys);

#ifdef __cplusplus
}
#endif

#endif
