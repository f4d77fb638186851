/*
 * test_seg_util.h - what the segmented-operation tests share: segment
 * length distributions, CSR offsets and packed head flags made from them
 * (with garbage around the bits that count), their copies in the
 * context's memory, and byte-wise comparison for custom elements.
 *
 * Distributions (issue 4 asks for each):
 *   len1   every segment of length 1 (n segments)
 *   rand8  lengths drawn uniformly from 1..8
 *   one    a single segment of length n
 *   power  Pareto lengths, P(len >= L) = L^-1/2, capped by what is left:
 *          mostly short segments and a few of a sizeable part of n
 *   empty  lengths 0..16, a third of them 0, plus empty segments at the
 *          start and two at the end (offsets only: packed flags cannot
 *          express an empty segment, their flags are those of the
 *          non-empty ones)
 */
#ifndef PARSUM_TEST_SEG_UTIL_H
#define PARSUM_TEST_SEG_UTIL_H

#include "test_util.h"

typedef enum tseg_dist {
    TSEG_LEN1,
    TSEG_RAND8,
    TSEG_ONE,
    TSEG_POWER,
    TSEG_EMPTY,
    TSEG_DIST_COUNT
} tseg_dist;

/* After this many failures a test stops trying more cases (one missing
 * backend slot would otherwise print thousands of lines). */
#define TSEG_MAX_FAILURES 12

/* Caps on the CUDA scan grid for tu_cuda_context_capped: none, one block
 * (every tile of the grid in turn), three blocks. */
#define TSEG_GRID_CAPS 3
extern const char *const tseg_grid_caps[TSEG_GRID_CAPS];

const char *tseg_dist_name(tseg_dist dist);

/* Offsets of a segmentation of n elements drawn from dist: returns the
 * number of segments k and stores a malloc'ed array of k + 1 values. */
size_t tseg_offsets(tu_rng *r, tseg_dist dist, size_t n, uint64_t **offsets);

/* Packed head flags of the segmentation `offsets`, element 0 at bit
 * bit_offset of word 0: every bit outside [bit_offset, bit_offset + n) is
 * random, and so is element 0's own bit (it starts a segment whatever
 * it is). Returns a malloc'ed array of *nwords words. */
uint32_t *tseg_flags(tu_rng *r, const uint64_t *offsets, size_t nseg,
                     size_t n, size_t bit_offset, size_t *nwords);

/* A segment description on the host (for the reference) and its copy in
 * the context's memory (for the call). */
typedef struct tseg_desc {
    parsum_segments host, dev;
    void *host_mem, *dev_mem;
    char name[32]; /* "offsets" or "flags@37" */
} tseg_desc;
/* The arrays are copied: the caller keeps its own. */
void tseg_desc_offsets(tseg_desc *d, const uint64_t *offsets, size_t nseg);
void tseg_desc_flags(tseg_desc *d, const uint32_t *flags, size_t nwords,
                     size_t bit_offset);
void tseg_desc_free(tseg_desc *d);

/* Compares n elements of es bytes; reports the first mismatch (with
 * `what`) and returns the number of mismatching elements. */
size_t tseg_compare_bytes(const void *want, const void *got, size_t n,
                          size_t es, const char *what);

/* A host copy of n bytes of context memory at dev (freed by the caller). */
void *tseg_download_copy(const void *dev, size_t bytes);

#endif
