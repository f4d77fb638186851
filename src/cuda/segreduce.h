/*
 * segreduce.h - the segmented reduce of the built-in operators without
 * look-back (segreduce.cu, segreduce_kernels.cuh), called by
 * parsum__cuda_seg_reduce in segmented.cu. C++ (CUDA) only.
 */
#ifndef PARSUM_CUDA_SEGREDUCE_H
#define PARSUM_CUDA_SEGREDUCE_H

#include "cuda_internal.h"

/* out[s] = fold of in[offsets[s] .. offsets[s + 1]) under the built-in
 * (dtype, op), the identity for an empty segment, s < nseg; arguments
 * checked by the core, 0 < nseg. Enqueued on the context's stream; never
 * waits for the device. */
parsum_status parsum__cuda_seg_reduce_builtin(parsum_context *ctx,
                                              const void *in, void *out,
                                              const uint64_t *offsets,
                                              size_t nseg, parsum_dtype dtype,
                                              parsum_op op);

#endif /* PARSUM_CUDA_SEGREDUCE_H */
