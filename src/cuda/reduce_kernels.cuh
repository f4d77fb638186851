/*
 * reduce_kernels.cuh - the GPU reduce kernel of parsum: one pass with
 * per-block partials folded in order by the last block (see the kernel's
 * comment for the fixed grouping that makes it deterministic).
 */
#ifndef PARSUM_REDUCE_KERNELS_CUH
#define PARSUM_REDUCE_KERNELS_CUH

#ifndef __CUDACC_RTC__
#include "kernel_common.cuh"
#endif

namespace parsum_k {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* ------------------------------------------------------------------------ */
/* Reduce                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * The input is read in warp tiles of WT = 32 * U * V elements (row u, lane
 * l holds the vector at (u * 32 + l) * V: coalesced 16-byte loads). The
 * grid has G blocks of NWARP warps, GW = G * NWARP warps in all, and warp
 * g of the grid folds a fixed set of tiles:
 *
 *  ORDERED (custom operators, which may be non-commutative): the
 *    contiguous tiles [g * per, (g + 1) * per), in order, each folded in
 *    sequence order (vector, then an ordered warp reduction per row), so
 *    every fold keeps sequence order and the result is exactly
 *    in[0] (+) ... (+) in[n-1] for any associative operator.
 *  not ORDERED (the built-in operators, commutative in value): tiles g,
 *    g + GW, g + 2 GW, ... - all warps sweep the array together, as a
 *    streaming kernel should - and each lane folds its own elements in a
 *    fixed order; one warp reduction at the end.
 *
 * Then block b folds its warps' results in warp order into partial b, and
 * the last block to finish folds the G partials in order and writes the
 * result. Every grouping is a fixed function of n and G (the device's SM
 * count times the kernel's resident blocks per SM), never of timing:
 * results are bit-identical from run to run. pad (an identity bit for bit,
 * see scan_kernel) starts every fold and stands for the elements past n;
 * n > 0.
 */
template <class T, class Op>
__device__ __forceinline__ T block_reduce(T v, int lane, int warp,
                                          unsigned char *s_raw, const Op &op)
{
    constexpr int NWARP = policy_for(sizeof(T)).rblock / 32;
    T *s = reinterpret_cast<T *>(s_raw);
    v = warp_reduce(v, op);
    if (lane == 0)
        s[warp] = v;
    __syncthreads();
    T r = s[0];
    for (int i = 1; i < NWARP; ++i)
        r = op(r, s[i]);
    return r; /* the same in every thread */
}

/* Loads warp tile `base` (elements [base, base + WT)) into x; elements at
 * or past end become pad. */
template <class T, int U, int V>
__device__ __forceinline__ void load_warp_tile(T (&x)[U][V], const T *in,
                                               u64 base, u64 end, int lane,
                                               bool vec, const T &pad)
{
    constexpr u32 WT = 32u * U * V;
    if (base + WT <= end) {
        if (vec) {
#pragma unroll
            for (int u = 0; u < U; ++u)
                load_vec<T, V, false>(x[u],
                                      in + base + ((u32)u * 32u + lane) * V);
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int v = 0; v < V; ++v)
                    x[u][v] = in[base + ((u32)u * 32u + lane) * V + v];
        }
    } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                u64 i = base + ((u32)u * 32u + lane) * V + v;
                x[u][v] = i < end ? in[i] : pad;
            }
    }
}

template <class T, class Op, bool ORDERED>
__global__ void __launch_bounds__(policy_for(sizeof(T)).rblock)
    reduce_kernel(reduce_args a, T pad)
{
    constexpr policy P = policy_for(sizeof(T));
    constexpr int NWARP = P.rblock / 32;
    constexpr int U = P.rrows;
    constexpr int V = vec_elems(sizeof(T));
    constexpr u32 WT = 32u * U * V;

    const Op op{};
    __shared__ alignas(16) unsigned char s_raw[NWARP * sizeof(T)];
    __shared__ u32 s_last;

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const T *in = static_cast<const T *>(a.in);
    const bool vec = vec_capable(sizeof(T)) && (a.options & OPT_VEC);
    const u64 tiles = (a.n + WT - 1) / WT;
    const u64 g = (u64)blockIdx.x * NWARP + warp;

    T acc = pad;
    if (ORDERED) {
        u64 t = g * a.tiles_per_warp;
        u64 t_end = t + a.tiles_per_warp;
        if (t_end > tiles)
            t_end = tiles;
        for (; t < t_end; ++t) {
            T x[U][V];
            load_warp_tile<T, U, V>(x, in, t * WT, a.n, lane, vec, pad);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                T s = x[u][0];
#pragma unroll
                for (int v = 1; v < V; ++v)
                    s = op(s, x[u][v]);
                acc = op(acc, warp_reduce(s, op)); /* meaningful in lane 0 */
            }
        }
    } else {
        const u64 gw = (u64)a.num_blocks * NWARP;
        for (u64 t = g; t < tiles; t += gw) {
            T x[U][V];
            load_warp_tile<T, U, V>(x, in, t * WT, a.n, lane, vec, pad);
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int v = 0; v < V; ++v)
                    acc = op(acc, x[u][v]);
        }
        acc = warp_reduce(acc, op); /* lane 0 */
    }

    /* The block's warps in order (lane 0 holds its warp's result). */
    T *s = reinterpret_cast<T *>(s_raw);
    if (lane == 0)
        s[warp] = acc;
    __syncthreads();
    if (tid == 0) {
        T r = s[0];
        for (int i = 1; i < NWARP; ++i)
            r = op(r, s[i]);
        if (a.num_blocks == 1) {
            memcpy(a.result, &r, sizeof(T));
        } else {
            store_slot(a.partials, blockIdx.x, r);
            fence_gpu();
            s_last = atomicAdd(a.counter, 1u) == a.num_blocks - 1u;
        }
    }
    if (a.num_blocks == 1)
        return;
    __syncthreads();
    if (!s_last)
        return;

    /* The last block: thread t folds the contiguous run of partials
     * [t * per, (t + 1) * per), then the block folds the threads in order. */
    fence_gpu();
    const u32 per = (a.num_blocks + P.rblock - 1) / P.rblock;
    T v = pad;
    for (u32 i = 0; i < per; ++i) {
        u32 k = (u32)tid * per + i;
        if (k < a.num_blocks)
            v = op(v, load_slot<T>(a.partials, k));
    }
    __syncthreads(); /* s_raw is reused */
    T r = block_reduce(v, lane, warp, s_raw, op);
    if (tid == 0) {
        memcpy(a.result, &r, sizeof(T));
        *a.counter = 0u; /* ready for the next launch on this buffer */
    }
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_REDUCE_KERNELS_CUH */
