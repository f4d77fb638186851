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

#ifdef __cplusplus
}
#endif

#endif
