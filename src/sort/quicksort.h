/*
 * quicksort.h - the iterative quicksort behind parsum_sort_custom
 * (quicksort.c), for the public function and for the tests, which read
 * its statistics.
 */
#ifndef PARSUM_QUICKSORT_H
#define PARSUM_QUICKSORT_H

#include "core/internal.h"

#include <stddef.h>
#include <stdint.h>

/* What one sort did. */
typedef struct parsum__qsort_stats {
    size_t rounds;       /* rounds of the segmented split */
    size_t max_segments; /* most partitions split in one round */
    size_t small_parts;  /* partitions finished by the small sort */
} parsum__qsort_stats;

/* Environment variable that forces the two-array form of the split counts
 * (internal.h, parsum__qsort_args: "wide"), which otherwise only segments
 * of 2^32 or more elements take: set to 1 so the tests run it on small
 * inputs. */
#define PARSUM__QSORT_WIDE_ENV "PARSUM_SORT_CUSTOM_WIDE"

/* Sorts n > 0 validated elements of in into out (out may be in) by cmp on
 * ctx's backend, whose comparison-sort slots and seg_scan are present. fn
 * names the public function in messages; stats may be NULL. */
parsum_status parsum__quicksort(parsum_context *ctx, const char *fn,
                                const void *in, void *out, size_t n,
                                const parsum_comparator *cmp,
                                parsum__qsort_stats *stats);

#endif
