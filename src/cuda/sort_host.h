/*
 * sort_host.h - what the host sides of the CUDA radix sorts (sort.cu,
 * segsort.cu) share: one sort of one array, as the plain sort runs it and
 * as the segmented sort runs it on each of its largest segments.
 */
#ifndef PARSUM_CUDA_SORT_HOST_H
#define PARSUM_CUDA_SORT_HOST_H

#include "cuda_internal.h"
#include "segsort_kernels.cuh"

#include <atomic>

/* One array: n keys from keys_in to keys_out (NULL: not wanted, values
 * then present), values of value_size bytes (indices: the values are the
 * input positions, written as uint64_t to values_out). In place allowed. */
struct parsum__cuda_sort_job {
    const void *keys_in;
    void *keys_out;
    const void *values_in;
    void *values_out;
    size_t n;
    parsum_dtype key_dtype;
    size_t value_size;
    bool indices;
    bool descending;
    unsigned begin_bit, end_bit;
};

parsum_sk::key_order parsum__cuda_sort_order(const parsum__cuda_sort_job &j);
/* The kernels' value mode (parsum_sk::V_*) and, for V_BYTES, the word
 * size values move in (divides the value size and both pointers). */
int parsum__cuda_sort_vmode(const parsum__cuda_sort_job &j, unsigned *vword);
/* The pointers' alignment to the key size (and perm's to 8 bytes). */
parsum_status parsum__cuda_sort_check(parsum_context *ctx,
                                      const parsum__cuda_sort_job &j,
                                      const char *fn);
/* Whether parsum__cuda_sort_run takes the one-block path (no scratch). */
bool parsum__cuda_sort_is_small(const parsum__cuda_sort_job &j);
/* Scratch parsum__cuda_sort_run needs for j on the onesweep path; never
 * smaller for a larger n with the same key and value layout. */
size_t parsum__cuda_sort_scratch_bytes(const parsum__cuda_sort_job &j);
/* Enqueues the sort on the context's stream; scratch: at least
 * parsum__cuda_sort_scratch_bytes(j) bytes unless j is small. */
parsum_status parsum__cuda_sort_run(parsum_context *ctx,
                                    const parsum__cuda_sort_job &j,
                                    void *scratch);

/* Occupancy of a kernel, asked once per device and kept: the query costs
 * host time on every call otherwise. Dynamic shared memory above the
 * default limit is granted on the same miss. */
struct parsum__cuda_occupancy_cache {
    std::atomic<long long> v{-1}; /* device << 32 | blocks per SM */
};

inline parsum_status parsum__cuda_occupancy(parsum_context *ctx,
                                            parsum__cuda_occupancy_cache &c,
                                            const void *kernel, int block,
                                            size_t smem, int *per_sm)
{
    const int dev = parsum__cuda_st(ctx)->device;
    const long long v = c.v.load(std::memory_order_relaxed);
    if (v >= 0 && (int)(v >> 32) == dev) {
        *per_sm = (int)(v & 0xFFFFFFFFll);
        return PARSUM_OK;
    }
    PARSUM_CUDA_TRY(ctx, cudaFuncSetAttribute(
                             kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)smem));
    int n = 0;
    PARSUM_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &n, kernel, block, smem));
    if (n < 1)
        return parsum__fail(ctx, PARSUM_ERR_INTERNAL,
                            "%s: a sort kernel of %d threads and %zu bytes "
                            "of shared memory cannot run on device %d",
                            parsum__cuda_st(ctx)->api, block, smem, dev);
    c.v.store((long long)dev << 32 | n, std::memory_order_relaxed);
    *per_sm = n;
    return PARSUM_OK;
}

/* The fields of a block or warp sort's arguments (parsum_sk::bs_args,
 * ws_args) that come from the job: keys, values, n, order, value
 * layout. */
template <class A>
A parsum__cuda_sort_args(const parsum__cuda_sort_job &j,
                         const parsum_sk::key_order &ko, unsigned vword)
{
    A x;
    x.kin = j.keys_in;
    x.kout = j.keys_out;
    x.vin = j.values_in;
    x.vout = j.values_out;
    x.n = j.n;
    x.ko = ko;
    x.vsize = (parsum_sk::u32)j.value_size;
    x.vword = vword;
    return x;
}

#endif
