/*
 * ref.h - the serial reference implementations: plain loops, one element
 * at a time through parsum__combine_scalar, obviously correct and slow.
 * They are the oracle of the tests and fill every slot a faster backend
 * has not (BLIS's reference kernels play the same part). Arguments are
 * trusted (validated by the caller); all pointers are host memory.
 */
#ifndef PARSUM_REF_H
#define PARSUM_REF_H

#include "parsum.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void parsum__ref_reduce(const void *in, size_t n, parsum_dtype dtype,
                        parsum_op op, void *result);
void parsum__ref_scan(const void *in, void *out, size_t n,
                      parsum_dtype dtype, parsum_op op, unsigned flags);
void parsum__ref_reduce_custom(const void *in, size_t n,
                               const parsum_custom_op *op, void *result);
/* Returns PARSUM_ERR_OUT_OF_MEMORY only if a temporary element cannot be
 * allocated. */
parsum_status parsum__ref_scan_custom(const void *in, void *out, size_t n,
                                      const parsum_custom_op *op,
                                      unsigned flags);

/* Segmented and keyed operations (parsum.h, "Segmented and keyed
 * operations"), each segment handed to the plain reference scan or reduce
 * above as a separate array, so their meaning is the one the header gives
 * in words. custom == NULL selects the built-in (dtype, op). seg may have
 * any flags_bit_offset (no normalisation needed). */
/* The head flag of element i of packed flags starting at bit bit_offset. */
bool parsum__ref_flag(const uint32_t *flags, size_t bit_offset, size_t i);
/* Returns PARSUM_ERR_OUT_OF_MEMORY only as parsum__ref_scan_custom. */
parsum_status parsum__ref_seg_scan(const void *in, void *out, size_t n,
                                   parsum_dtype dtype, parsum_op op,
                                   const parsum_custom_op *custom,
                                   const parsum_segments *seg,
                                   unsigned flags);
void parsum__ref_seg_reduce(const void *in, void *out,
                            const uint64_t *offsets, size_t num_segments,
                            parsum_dtype dtype, parsum_op op,
                            const parsum_custom_op *custom);
void parsum__ref_scan_by_key(const void *keys, parsum_dtype key_dtype,
                             const void *in, void *out, size_t n,
                             parsum_dtype dtype, parsum_op op,
                             unsigned flags);
/* Returns the number of runs. */
size_t parsum__ref_reduce_by_key(const void *keys_in, parsum_dtype key_dtype,
                                 const void *values_in, size_t n,
                                 parsum_dtype dtype, parsum_op op,
                                 void *keys_out, void *values_out);
void parsum__ref_offsets_to_flags(const uint64_t *offsets,
                                  size_t num_segments, size_t n,
                                  uint32_t *flags);
/* Writes offsets[0 .. k] and returns k, the number of segments. */
size_t parsum__ref_flags_to_offsets(const parsum_segments *seg, size_t n,
                                    uint64_t *offsets);

/* Selection, partition, unique and run-length encoding (parsum.h,
 * "Selection, partition, unique and run-length encoding"): each element
 * looked at once per group, in input order. Selectors may have any
 * bit_offset. */
/* The predicate of parsum.h on the key x of dtype d. */
bool parsum__ref_pred(parsum_dtype d, parsum_pred p, const void *x,
                      const parsum_scalar *a, const parsum_scalar *b);
/* Whether sel selects element i of keys (key_size bytes each; keys are
 * read only by PREDICATE and CUSTOM selectors). */
bool parsum__ref_selected(const parsum_selector *sel, const void *keys,
                          size_t key_size, size_t i);

/* The arrays of a call: n keys (the elements themselves for the calls
 * without values) and optional values; each output NULL when not
 * wanted. */
typedef struct parsum__ref_buffers {
    const void *keys;
    size_t key_size;
    const void *values;
    size_t value_size;
    size_t n;
    void *keys_out;
    void *values_out;
    uint64_t *indices_out;
} parsum__ref_buffers;

/* Select (and by key, and indices): returns the number selected. */
size_t parsum__ref_select(const parsum_selector *sel,
                          const parsum__ref_buffers *b);
/* Stable partition: the selected, then the others; returns the number
 * selected. */
size_t parsum__ref_partition(const parsum_selector *sel,
                             const parsum__ref_buffers *b);
/* parsum_partition_unstable: the selected in order, then the others in
 * reverse order (the first of them last); returns the number selected. */
size_t parsum__ref_partition_unstable(const parsum_selector *sel,
                                      const parsum__ref_buffers *b);
/* Three groups: first's, second's among the rest, the rest. */
void parsum__ref_partition3(const parsum_selector *first,
                            const parsum_selector *second,
                            const parsum__ref_buffers *b, size_t counts[2]);
/* Runs of bitwise-equal consecutive keys (all, or those of length >= 2):
 * the first key and value of each, its length and offset (each output
 * NULL when not wanted). Returns the number of runs written. */
size_t parsum__ref_runs(const parsum__ref_buffers *b, bool nontrivial,
                        uint64_t *lengths, uint64_t *offsets);

/* Images (parsum.h, "Images"): descriptors have pitch resolved (not 0). */
double parsum__ref_sample_f64(const parsum_image *im, size_t x, size_t y,
                              int c);
int64_t parsum__ref_sample_i64(const parsum_image *im, size_t x, size_t y,
                               int c);
/* Each channel's float64 mean, summed row by row, left to right. */
void parsum__ref_image_mean(const parsum_image *src, double *mean);
/* Returns PARSUM_ERR_OUT_OF_MEMORY if its two rows of column sums cannot
 * be allocated. */
parsum_status parsum__ref_integral(const parsum_image *src,
                                   const parsum_image *table, bool inclusive,
                                   bool squared, const double *offset);
void parsum__ref_box_sums(const parsum_image *table, bool inclusive,
                          bool means, bool squared, const double *offset,
                          const parsum_rect *rects, size_t nrect, void *out);
/* The source index that position i (possibly outside [0, n)) reads under
 * border; *zero is set for ZERO borders outside the image. */
size_t parsum__ref_border_index(int64_t i, size_t n, parsum_border border,
                                bool *zero);
void parsum__ref_box_filter(const parsum_image *src, const parsum_image *dst,
                            size_t rx, size_t ry, parsum_border border);

/* Histograms (host memory, valid arguments): the bin of one sample under
 * b (-1: none), and parsum_histogram itself. */
int64_t parsum__ref_hist_bin(const parsum_hist_bins *b, parsum_dtype dtype,
                             const void *sample);
void parsum__ref_histogram(const void *samples, size_t n,
                           const parsum_histogram_desc *d,
                           void *const counts[]);

/* Tone mapping (parsum_tonemap) of host image src into host image dst, in
 * float64 (ref_tonemap.c; p NULL: defaults). Returns
 * PARSUM_ERR_INVALID_ARGUMENT with *first_bad = y * width + x of the first
 * pixel with a NaN or infinite sample (else UINT64_MAX), or
 * PARSUM_ERR_OUT_OF_MEMORY. */
parsum_status parsum__ref_tonemap(const parsum_image *src,
                                  const parsum_image *dst,
                                  const parsum_tonemap_params *p,
                                  uint64_t *first_bad);

/* Sorting (parsum.h, "Sorting"; ref_sort.c): a stable merge sort of the
 * positions by each key's selected ordered bits (src/sort/sort_keys.h).
 * perm (n values) receives the sorting permutation; keys_out (may be NULL)
 * the sorted keys; values_out (value_size > 0, may be NULL) the values.
 * offsets NULL: one segment; else num_segments + 1 valid offsets and each
 * segment sorted on its own. Returns PARSUM_ERR_OUT_OF_MEMORY only. */
parsum_status parsum__ref_sort(const void *keys_in, const void *values_in,
                               void *keys_out, void *values_out,
                               uint64_t *perm, size_t n,
                               const parsum_sort_desc *desc,
                               const uint64_t *offsets, size_t num_segments);
/* The same order with a comparator (cmp->less): a stable merge sort. */
parsum_status parsum__ref_sort_custom(const void *in, void *out, size_t n,
                                      const parsum_comparator *cmp);

#ifdef __cplusplus
}
#endif

#endif
