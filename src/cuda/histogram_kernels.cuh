/*
 * histogram_kernels.cuh - the GPU histogram kernels (histogram.cu launches
 * them):
 *
 *  - hist_shared_kernel: the notes' "block-local then global" combination.
 *    Each block counts its share of the samples in shared memory, then adds
 *    its nonzero bins to the output with one atomic each. The shared
 *    histogram is replicated R times (R a power of two up to 32) and lane l
 *    uses copy l % R, laid out bin-major (bin * R + copy): with R = 32 every
 *    lane of a warp hits its own bank whatever the bins, so neither uniform
 *    data (bank conflicts) nor data piled into one bin (atomic collisions)
 *    serializes a warp.
 *  - hist_global_kernel: for bins that do not fit in shared memory, atomics
 *    on device memory: on the output itself (ATOMIC_GLOBAL, the notes'
 *    first method), or (PRIVATIZED) on one of K private copies, with the
 *    lanes of a warp that hit the same bin combined first (match_any), so
 *    that skewed data costs one atomic per warp rather than 32; then
 *    hist_sum_copies_kernel adds the copies to the output.
 *  - hist_ids_kernel, hist_add_runs_kernel: the steps of the composed
 *    SORT_REDUCE_BY_KEY strategy (src/hist/api_histogram.c).
 *
 * Bins come from hist_bins.h, the definition the CPU backend shares, except
 * for one fast path: integer samples of up to 32 bits in even bins of 2^s
 * values that lie inside the type's range (U8 in 256 bins, U32 in 1024 bins
 * over [0, 2^32)) use 32-bit arithmetic: key = x - the type's minimum,
 * d = key - lo_key (mod 2^32), in range iff d <= width - 1, bin = d >> s.
 * (x < lo wraps d to at least 2^32 - lo_key >= width: out of range.)
 */
#ifndef PARSUM_HISTOGRAM_KERNELS_CUH
#define PARSUM_HISTOGRAM_KERNELS_CUH

#include "../hist/hist_bins.h"

#include <stdint.h>

namespace parsum_h {

typedef unsigned int u32;
typedef unsigned long long u64;

constexpr u32 NONE = PARSUM__BIN_NONE;

struct fast_bins {
    u32 on;
    u32 lo_key;
    u32 wm1; /* width - 1 */
    u32 shift;
};

struct kargs {
    const void *samples;
    u64 nel;  /* samples (pixels x channels) */
    u64 head; /* samples before the first 16-byte boundary */
    u32 active; /* bit c: channel c is counted */
    u32 off[4]; /* first bin of channel c in the combined histogram */
    u32 total;  /* bins of all active channels */
    u32 rep;    /* shared: copies per bin (power of two <= 32) */
    u32 wide;   /* counts are u64 */
    u32 ncopies; /* global privatized: copies (0: atomics on the output) */
    void *counts[4];
    void *copies; /* ncopies x total counts of the count type */
    fast_bins fast[4];
    parsum__hist_plan plan[4];
};

/* The 32-bit key of an integer sample: x minus its type's minimum. */
template <class T> struct key_of;
template <> struct key_of<uint8_t> {
    static constexpr bool ok = true;
    __device__ static u32 k(uint8_t x) { return x; }
};
template <> struct key_of<uint16_t> {
    static constexpr bool ok = true;
    __device__ static u32 k(uint16_t x) { return x; }
};
template <> struct key_of<uint32_t> {
    static constexpr bool ok = true;
    __device__ static u32 k(uint32_t x) { return x; }
};
template <> struct key_of<int8_t> {
    static constexpr bool ok = true;
    __device__ static u32 k(int8_t x) { return (u32)(x + 128); }
};
template <> struct key_of<int16_t> {
    static constexpr bool ok = true;
    __device__ static u32 k(int16_t x) { return (u32)(x + 32768); }
};
template <> struct key_of<int32_t> {
    static constexpr bool ok = true;
    __device__ static u32 k(int32_t x) { return (u32)x ^ 0x80000000u; }
};
template <> struct key_of<int64_t> {
    static constexpr bool ok = false;
    __device__ static u32 k(int64_t) { return 0; }
};
template <> struct key_of<uint64_t> {
    static constexpr bool ok = false;
    __device__ static u32 k(uint64_t) { return 0; }
};
template <> struct key_of<float> {
    static constexpr bool ok = false;
    __device__ static u32 k(float) { return 0; }
};
template <> struct key_of<double> {
    static constexpr bool ok = false;
    __device__ static u32 k(double) { return 0; }
};

template <class T>
__device__ __forceinline__ u32 generic_bin(const parsum__hist_plan *p, T x)
{
    if constexpr (sizeof(T) == 8 && (T)-1 > (T)0)
        return parsum__bin_u64(p, (uint64_t)x);
    else if constexpr ((T)0.5 != (T)0)
        return parsum__bin_f64(p, (double)x);
    else
        return parsum__bin_i64(p, (int64_t)x);
}

template <class T>
__device__ __forceinline__ u32 bin_of(const kargs &L, u32 c, T x)
{
    if constexpr (key_of<T>::ok) {
        if (L.fast[c].on) {
            u32 d = key_of<T>::k(x) - L.fast[c].lo_key;
            return d <= L.fast[c].wm1 ? d >> L.fast[c].shift : NONE;
        }
    }
    return generic_bin<T>(&L.plan[c], x);
}

/* Calls f(sample, channel) for every sample of this thread's share: the
 * unaligned head and the tail one sample at a time, the body as 16-byte
 * vectors, two in flight per thread. */
template <class T, int C, class F>
__device__ __forceinline__ void for_samples(const kargs &L, F &&f)
{
    constexpr u32 VEC = 16 / sizeof(T);
    const T *s = static_cast<const T *>(L.samples);
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 nthreads = (u64)gridDim.x * blockDim.x;
    const u64 head = L.head < L.nel ? L.head : L.nel;
    const u64 nvec = (L.nel - head) / VEC;
    const u64 tail = head + nvec * VEC;
    for (u64 i = tid; i < head + (L.nel - tail); i += nthreads) {
        u64 e = i < head ? i : tail + (i - head);
        f(s[e], (u32)(e % C));
    }
    const uint4 *v = reinterpret_cast<const uint4 *>(s + head);
    const u32 c_head = (u32)(head % C);
    for (u64 i = tid; i < nvec; i += 2 * nthreads) {
        union {
            uint4 raw[2];
            T x[2][VEC];
        } u;
        const bool two = i + nthreads < nvec;
        u.raw[0] = __ldg(v + i);
        if (two)
            u.raw[1] = __ldg(v + i + nthreads);
#pragma unroll
        for (int r = 0; r < 2; r++) {
            if (r == 1 && !two)
                break;
            const u64 vi = i + r * nthreads;
            const u32 c0 = C == 1 ? 0 : (u32)((c_head + (vi % C) * (VEC % C)) % C);
#pragma unroll
            for (u32 j = 0; j < VEC; j++)
                f(u.x[r][j], (c0 + j) % C);
        }
    }
}

template <class T, int C>
__global__ void __launch_bounds__(256)
    hist_shared_kernel(const __grid_constant__ kargs L)
{
    extern __shared__ u32 sh[];
    const u32 slots = L.total * L.rep;
    for (u32 i = threadIdx.x; i < slots; i += blockDim.x)
        sh[i] = 0;
    __syncthreads();
    const u32 copy = threadIdx.x & (L.rep - 1);
    for_samples<T, C>(L, [&](T x, u32 c) {
        if (!(L.active >> c & 1u))
            return;
        u32 b = bin_of<T>(L, c, x);
        if (b != NONE)
            atomicAdd(&sh[(L.off[c] + b) * L.rep + copy], 1u);
    });
    __syncthreads();
    for (u32 g = threadIdx.x; g < L.total; g += blockDim.x) {
        u32 sum = 0;
        for (u32 r = 0; r < L.rep; r++)
            sum += sh[g * L.rep + (r + g) % L.rep];
        if (sum == 0)
            continue;
        u32 c = 0;
        while (c < 3 && (!(L.active >> c & 1u) || g >= L.off[c] + L.plan[c].nbins))
            c++;
        const u32 b = g - L.off[c];
        if (L.wide)
            atomicAdd(static_cast<u64 *>(L.counts[c]) + b, (u64)sum);
        else
            atomicAdd(static_cast<u32 *>(L.counts[c]) + b, sum);
    }
}

/* One increment of `by` at bin b of channel c: the output (ncopies 0) or
 * this block's private copy. */
__device__ __forceinline__ void add_global(const kargs &L, u32 c, u32 b,
                                           u32 by)
{
    if (L.ncopies == 0) {
        if (L.wide)
            atomicAdd(static_cast<u64 *>(L.counts[c]) + b, (u64)by);
        else
            atomicAdd(static_cast<u32 *>(L.counts[c]) + b, by);
        return;
    }
    const u64 at = (u64)(blockIdx.x % L.ncopies) * L.total + L.off[c] + b;
    if (L.wide)
        atomicAdd(static_cast<u64 *>(L.copies) + at, (u64)by);
    else
        atomicAdd(static_cast<u32 *>(L.copies) + at, by);
}

template <class T, int C>
__global__ void __launch_bounds__(256)
    hist_global_kernel(const __grid_constant__ kargs L)
{
    const u32 lane = threadIdx.x & 31u;
    for_samples<T, C>(L, [&](T x, u32 c) {
        u32 b = (L.active >> c & 1u) ? bin_of<T>(L, c, x) : NONE;
        if (L.ncopies == 0) { /* the notes' plain atomics */
            if (b != NONE)
                add_global(L, c, b, 1u);
            return;
        }
        /* Lanes with the same (channel, bin) add once, their count. */
        const u32 key = b == NONE ? NONE : L.off[c] + b;
        const u32 act = __activemask();
        const u32 peers = __match_any_sync(act, key);
        if (key != NONE && lane == (u32)(__ffs(peers) - 1))
            add_global(L, c, b, (u32)__popc(peers));
    });
}

/* counts[c][b] += the sum over the copies of bin off[c] + b. */
__global__ void hist_sum_copies_kernel(const __grid_constant__ kargs L)
{
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x; g < L.total;
         g += stride) {
        u32 c = 0;
        while (c < 3 && (!(L.active >> c & 1u) || g >= L.off[c] + L.plan[c].nbins))
            c++;
        const u64 b = g - L.off[c];
        if (L.wide) {
            u64 s = 0;
            for (u32 k = 0; k < L.ncopies; k++)
                s += static_cast<const u64 *>(L.copies)[(u64)k * L.total + g];
            static_cast<u64 *>(L.counts[c])[b] += s;
        } else {
            u32 s = 0;
            for (u32 k = 0; k < L.ncopies; k++)
                s += static_cast<const u32 *>(L.copies)[(u64)k * L.total + g];
            static_cast<u32 *>(L.counts[c])[b] += s;
        }
    }
}

/* ids[p] = bin of pixel p's channel-c sample, nbins for none. */
template <class T>
__global__ void hist_ids_kernel(const __grid_constant__ kargs L, u32 c,
                                u32 channels, u64 npix, u32 *ids)
{
    const T *s = static_cast<const T *>(L.samples);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < npix;
         p += stride) {
        u32 b = bin_of<T>(L, c, s[p * channels + c]);
        ids[p] = b == NONE ? L.plan[c].nbins : b;
    }
}

template <class Cnt>
__global__ void hist_add_runs_kernel(const u32 *keys, const u64 *lengths,
                                     u64 nruns, u32 nbins, Cnt *counts)
{
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x; r < nruns;
         r += stride)
        if (keys[r] < nbins)
            counts[keys[r]] += (Cnt)lengths[r];
}

} /* namespace parsum_h */

#endif
