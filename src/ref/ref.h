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

#ifdef __cplusplus
}
#endif

#endif
