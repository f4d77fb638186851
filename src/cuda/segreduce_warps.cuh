/*
 * segreduce_warps.cuh - the segmented reduce's other ways through a
 * block's share of the path than the tile walk: one warp a segment, for
 * shares whose segments are all of moderate length (uniform 1000-element
 * segments), and one thread a segment, for shares of short segments
 * (the end of the file).
 *
 * Why. The tile walk (segreduce_kernels.cuh) pays a window search, an
 * ends count and a block scan per tile whatever the segments; with a few
 * ends a tile that fixed work, not memory, set the pace (uniform
 * 1000-element segments at about half the read bound, 0.72-0.95x CUB's
 * one-block-per-segment reduce). A warp that owns a whole segment needs
 * none of it: 16-byte loads across its lanes, a few of them in flight,
 * one warp reduction, one store. It is only safe where no segment is
 * long (one warp on a long segment would hold up the block) and pays
 * only where segments are not short (a warp per one-element segment
 * wastes 31 lanes), so a block takes it when its share has at least
 * SEGRED_WAVG_BYTES of elements per segment on average and no segment
 * longer than SEGRED_WLONG_BYTES within the share; every other block
 * walks tiles as before. The choice depends on the offsets, n and the
 * grid, as the tiles do, so results stay bit-identical run to run.
 *
 * Order of a segment's fold: lane l folds its head element (l < V, the
 * elements before the first 16-byte boundary), then its vectors l, l +
 * 32, ... in order, then its tail element; the warp reduction (fixed tree)
 * combines the lanes. That regroups a segment's elements, so, as for the
 * tiles' plain-reduce runs, it serves commutative operators only (the
 * built-in ones).
 */
#ifndef PARSUM_SEGREDUCE_WARPS_CUH
#define PARSUM_SEGREDUCE_WARPS_CUH

#include "segreduce_kernels.cuh"

#include <type_traits>

namespace parsum_k {

/* A block folds its share by warps when the share has at least this
 * many bytes of elements per segment (its ended segments and the open
 * one) and no segment (within the share) longer than SEGRED_WLONG_BYTES.
 * 512 bytes is one 16-byte vector a lane: below that most lanes idle. */
constexpr u64 SEGRED_WAVG_BYTES = 512;
constexpr u64 SEGRED_WLONG_BYTES = 32768;
/* Vectors a lane has in flight: 8 (4 KB a warp), 4 for 8-byte values,
 * where 8 made the kernel spill. */
template <class T>
__host__ __device__ constexpr int segred_wunroll()
{
    return sizeof(T) == 8 ? 4 : 8;
}

#if defined(__CUDACC__)

/* Segment j's part [b, e) of the block's share, from element e0 of
 * segment s0 to element e1 of segment s1 (j in [s0, s1]), offsets
 * clamped to n; o, o1 = offsets[j], offsets[j + 1] (o1 unused for
 * j = s1). empty: the whole segment is (its output is the identity). */
__device__ __forceinline__ void segred_wrange(u64 o, u64 o1, u64 j, u64 s1,
                                              u64 n, u64 e0, u64 e1, u64 &b,
                                              u64 &e, bool &empty)
{
    o = o < n ? o : n;
    o1 = o1 < n ? o1 : n;
    empty = o == o1;
    b = o > e0 ? o : e0;
    b = b < e1 ? b : e1;
    if (j == s1)
        o1 = e1;
    o1 = o1 > b ? o1 : b;
    e = o1 < e1 ? o1 : e1;
}

/* offsets[j], offsets[j + 1] (or n for j + 1 past nseg). */
__device__ __forceinline__ void segred_wload(const u64 *offsets, u64 nseg,
                                             u64 n, u64 j, u64 &o, u64 &o1)
{
    o = offsets[j];
    o1 = j < nseg ? offsets[j + 1] : n;
}

/* Segment j's total v (its part of the share): the block's carry when j
 * is the share's last segment s1, else out[j] (j < nseg), the identity
 * id when the whole segment is empty. */
template <class T>
__device__ __forceinline__ void segred_put_total(segred_smem<T> &sm, T *out,
                                                 u64 j, u64 s1, u64 nseg,
                                                 const T &v, bool empty,
                                                 const T &id)
{
    if (j == s1)
        sm.wcarry = v;
    else if (j < nseg)
        out[j] = empty ? id : v;
}

/* Whether the block folds its share [(s0, e0), (s1, e1)] by warps (see
 * the file's head). Block-uniform; resets the warps' segment counter. */
template <class T, class C>
__device__ __forceinline__ bool segred_warps_take(segred_smem<T> &sm,
                                                  const u64 *offsets,
                                                  u64 nseg, u64 n, u64 s0,
                                                  u64 e0, u64 s1, u64 e1,
                                                  int tid)
{
    const u64 ends = s1 - s0;
    if (s1 <= s0 || ends >= (1ull << 30) || e1 <= e0 ||
        (e1 - e0) * C::ES < (ends + 1) * SEGRED_WAVG_BYTES)
        return false;
    bool lng = false;
    for (u64 j = s0 + (u64)tid; j <= s1; j += C::BLOCK) {
        u64 o, o1, b, e;
        bool empty;
        segred_wload(offsets, nseg, n, j, o, o1);
        segred_wrange(o, o1, j, s1, n, e0, e1, b, e, empty);
        lng = lng || (e - b) * C::ES > SEGRED_WLONG_BYTES;
    }
    if (tid == 0)
        sm.wnext = 0u;
    return __syncthreads_or(lng ? 1 : 0) == 0;
}

/* The fold of [b, e) by one warp (see the file's head for the order);
 * the result in lane 0. e - b <= SEGRED_WLONG_BYTES / sizeof(T), so
 * indices within the segment are 32-bit. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_warp_fold(const T *in, u64 b, u64 e,
                                              bool vec, const T &pad,
                                              const Op &op, int lane)
{
    constexpr int U = segred_wunroll<T>();
    const u32 len = (u32)(e - b);
    const T *x = in + b;
    T acc = pad;
    if (vec) {
        /* Elements [h, h + 32 V nv) are whole vectors. */
        const u32 mis = (u32)(b % C::V);
        u32 h = mis != 0u ? C::V - mis : 0u;
        h = h < len ? h : len;
        const u32 nv = (len - h) / C::V;
        const u32 t0 = h + nv * C::V;
        if ((u32)lane < h)
            acc = op(acc, x[lane]);
        const uint4 *src = reinterpret_cast<const uint4 *>(x + h);
        for (u32 base = (u32)lane; base < nv; base += 32u * U) {
            uint4 q[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                if (base + 32u * u < nv)
                    q[u] = __ldg(src + base + 32u * u);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if (base + 32u * u < nv) {
                    T t[C::V];
                    memcpy(t, &q[u], sizeof t);
#pragma unroll
                    for (u32 v = 0; v < C::V; ++v)
                        acc = op(acc, t[v]);
                }
            }
        }
        if (t0 + (u32)lane < len)
            acc = op(acc, x[t0 + (u32)lane]);
    } else {
        for (u32 p = (u32)lane; p < len; p += 32u * U) {
            T t[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                if (p + 32u * u < len)
                    t[u] = x[p + 32u * u];
#pragma unroll
            for (int u = 0; u < U; ++u)
                if (p + 32u * u < len)
                    acc = op(acc, t[u]);
        }
    }
    return warp_reduce(acc, op);
}

/* The block's share [(s0, e0), (s1, e1)] folded by warps: each warp takes
 * the next segment from a shared counter (so that segments of different
 * lengths balance), loads the offsets of the one after it before folding
 * it, writes out[j] for the segments the share ends (s0's part from e0,
 * which the last block completes as for the tiles) and hands the part of
 * s1, the block's carry, to every thread. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_warps(segred_smem<T> &sm, const u64 *offsets,
                          const T *in, T *out, u64 n, u64 nseg, u64 s0,
                          u64 e0, u64 s1, u64 e1, bool vec, const T &id,
                          const T &pad, const Op &op, int tid)
{
    const int lane = tid & 31;
    auto grab = [&]() -> u64 {
        u32 i = 0;
        if (lane == 0)
            i = atomicAdd(&sm.wnext, 1u);
        return s0 + (u64)__shfl_sync(PARSUM_K_FULL_MASK, i, 0);
    };
    u64 j = grab(), o = 0, o1 = 0;
    if (j <= s1)
        segred_wload(offsets, nseg, n, j, o, o1);
    while (j <= s1) {
        const u64 jn = grab();
        u64 on = 0, on1 = 0;
        if (jn <= s1)
            segred_wload(offsets, nseg, n, jn, on, on1);
        u64 b, e;
        bool empty;
        segred_wrange(o, o1, j, s1, n, e0, e1, b, e, empty);
        const T r = segred_warp_fold<T, C, Op>(in, b, e, vec, pad, op, lane);
        if (lane == 0)
            segred_put_total(sm, out, j, s1, nseg, r, empty, id);
        j = jn;
        o = on;
        o1 = on1;
    }
    __syncthreads();
    return sm.wcarry;
}

/* ---- short segments: one segment a thread ------------------------------ */

/* Why: on shares of short segments the tile walk stages every tile's
 * elements with the block stopped at a barrier, then each thread
 * searches the window for its cut, walks its piece and enters a block
 * scan: about a third of the read bound for one-element segments, a
 * quarter for 1-8 elements. A thread that owns whole segments needs none
 * of that: the offsets of its segment (neighbouring threads, neighbouring
 * offsets), the first elements of all its rows loaded at once, one
 * store.
 *
 * A block whose share averages fewer than SEGRED_LAVG_BYTES of elements
 * a segment folds it one segment a thread, in rounds of SEGRED_LROWS x
 * BLOCK segments (row r, thread t: segment base + r BLOCK + t, so that
 * offsets, elements and outputs are read and written by neighbouring
 * threads), as long as no segment of a round is longer than
 * SEGRED_LMAX elements; the first round that has one hands the rest of
 * the share to one stream a warp (segreduce_stream.cuh; the batches of
 * segreduce_batches.cuh under PARSUM_CUDA_SEGRED_STREAM=0). */
constexpr u64 SEGRED_LAVG_BYTES = 64;
constexpr u32 SEGRED_LMAX = 64;
constexpr int SEGRED_LROWS = 4;

/* Whether the block starts on its share [(s0, e0), (s1, e1)] by threads
 * (block-uniform: values every thread has). Fewer than 2^31 elements,
 * so that the streams (segreduce_stream.cuh) or the batches
 * (segreduce_batches.cuh) may take over with 32-bit positions. */
template <class C>
__device__ __forceinline__ bool segred_lanes_take(u64 s0, u64 e0, u64 s1,
                                                  u64 e1)
{
    return s1 > s0 && e1 >= e0 && e1 - e0 < (1ull << 31) &&
           (e1 - e0) * C::ES < (s1 - s0 + 1) * SEGRED_LAVG_BYTES;
}

/* The rounds, with positions relative to the share and the elements
 * loaded in waves. Returns true when they reached s1 (the block's carry,
 * s1's part, then in every thread); false when a round had a segment of
 * more than SEGRED_LMAX elements: the segments before hand_s are done.
 *
 * Why: the first rounds (segred_lanes, removed 2026-11-28) clamped every
 * bound in 64 bits to n and to the share, and tested the share's first
 * and last segments per row: about 130 instructions per one-element
 * segment, which made them instruction-bound. Here the offsets are
 * clamped once into [e0, e1] and
 * made relative to e0 (32 bits: shares of fewer than 2^31 elements), so
 * the first and last segments need no case of their own (s1's end is e1,
 * its offset past it is not read), and the rows address their elements
 * from one pointer. A round's elements come in waves of segred_lwave a
 * row, the loads of all rows of a wave in flight together; a missing
 * element is pad, folded like the others (a select, not a branch). */

/* Elements a row and wave: 4 for 8-byte values, 2 for smaller ones, and
 * 4 for 4-byte values on a dense share, one averaging at least
 * SEGRED_LWIDE_AVG elements a segment (segred_lanes_fold). The width is a
 * function of the share, so results stay bit-identical run to run.
 * H200, 2^26, three rounds in one call (2026-11-28, stop 40): with 4,
 * 8-byte values' 1-8-element segments went from 68-75 to 76-83 % of the
 * read bound (i64) and 69-75 to 76-79 % (f64), one-element ones 78-83
 * to 83-87 % and 78-82 to 84-88 %, power law 1-2 points lower; 4-byte
 * values gained on 1-8 elements with 4 for i32 (66-75 -> 73-84 %) but
 * lost 4-7 points on one-element segments (the predicated loads of every
 * row's first wave); 8 a row lost 17 points there. So the width is
 * chosen by the share's average (one out-of-line function for each
 * width): i32 1-8-element segments went from 63-73 to 76-86 % (2^28: 67
 * -> 77 %), len1 as it was. f32 gained nothing from 4 a row (64-73 %)
 * until each row's elements were folded as a tree (segred_row_fold),
 * 2026-11-29: the row's folds were a chain of dependent float adds,
 * which integers, whose adds the compiler may regroup, never had. */
constexpr u64 SEGRED_LWIDE_AVG = 3;
template <class T>
__host__ __device__ constexpr int segred_lwave(bool dense)
{
    return sizeof(T) == 8 || (dense && sizeof(T) == 4) ? 4 : 2;
}

/* acc := acc (+) the F elements of a row's wave. 4-byte floats fold them
 * as a tree first, ((t0 (+) t1) (+) (t2 (+) t3)): a fixed grouping (so
 * results stay bit-identical run to run, within parsum_reduce's bound)
 * with a shorter chain of dependent adds than the fold in order, which
 * the other types keep. H200, f32 SUM, 1-8-element segments at 4 a row
 * (stop 41, bench/RESULTS.md): 62-66 % of the read bound in order, 79-84
 * % as a tree; f64 as trees lost 4-6 points there (NOTES section 8). */
template <class T, int F, class Op>
__device__ __forceinline__ void segred_row_fold(T &acc, const T (&t)[F],
                                                const Op &op)
{
    if constexpr (std::is_floating_point<T>::value && sizeof(T) == 4) {
        static_assert(F == 2 || F == 4, "a row's tree: 2 or 4 elements");
        T u[F];
#pragma unroll
        for (int f = 0; f < F; ++f)
            u[f] = t[f];
#pragma unroll
        for (int w = F / 2; w >= 1; w /= 2)
#pragma unroll
            for (int i = 0; i < w; ++i)
                u[i] = op(u[2 * i], u[2 * i + 1]);
        acc = op(acc, u[0]);
    } else {
#pragma unroll
        for (int f = 0; f < F; ++f)
            acc = op(acc, t[f]);
    }
}

template <class T, class C, class Op, int F>
__device__ __forceinline__ bool segred_lanes_waves(
    segred_smem<T> &sm, const u64 *offsets, const T *in, T *out, u64 nseg,
    u64 s0, u64 e0, u64 s1, u64 e1, const T &id, const T &pad, const Op &op,
    int tid, T &carry, u64 &hand_s)
{
    constexpr int R = SEGRED_LROWS;
    constexpr u64 RB = (u64)R * C::BLOCK;
    const T *x = in + e0;
    const u32 span = (u32)(e1 - e0);
    auto rel = [&](u64 v) -> u32 {
        v = v > e0 ? v - e0 : 0;
        return v < span ? (u32)v : span;
    };
    /* Raw offsets of the next round, loaded with this round's elements. */
    u64 o[R], o1[R];
    auto load_offsets = [&](u64 base) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u64 j = base + (u64)r * C::BLOCK + (u64)tid;
            o[r] = o1[r] = e1;
            if (j <= s1)
                o[r] = offsets[j];
            if (j < s1)
                o1[r] = offsets[j + 1];
        }
    };
    load_offsets(s0);
    for (u64 base = s0; base <= s1; base += RB) {
        u32 b[R], len[R], mx = 0;
        bool lng = false;
        unsigned empty = 0;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u64 j = base + (u64)r * C::BLOCK + (u64)tid;
            b[r] = rel(o[r]);
            const u32 e = rel(o1[r]);
            len[r] = e > b[r] ? e - b[r] : 0u;
            /* Empty: the whole segment, not a first one begun before e0
             * (its part here is the partial the last block completes). */
            if (len[r] == 0u && (j != s0 || o[r] >= e0))
                empty |= 1u << r;
            if (j > s1)
                len[r] = 0;
            lng = lng || len[r] > SEGRED_LMAX;
            mx = len[r] > mx ? len[r] : mx;
        }
        if (__syncthreads_or(lng ? 1 : 0) != 0) {
            hand_s = base;
            return false;
        }
        T acc[R], t[R][F];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            acc[r] = pad;
#pragma unroll
            for (int f = 0; f < F; ++f)
                t[r][f] = (u32)f < len[r] ? x[b[r] + (u32)f] : pad;
        }
        load_offsets(base + RB);
        for (u32 q = 0;;) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                segred_row_fold<T, F>(acc[r], t[r], op);
            q += F;
            if (q >= mx)
                break;
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int f = 0; f < F; ++f)
                    t[r][f] = q + (u32)f < len[r] ? x[b[r] + q + (u32)f]
                                                   : pad;
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u64 j = base + (u64)r * C::BLOCK + (u64)tid;
            if (j <= s1)
                segred_put_total(sm, out, j, s1, nseg, acc[r],
                                 ((empty >> r) & 1u) != 0u, id);
        }
    }
    __syncthreads();
    carry = sm.wcarry;
    return true;
}

/* Whether the rounds run in a function of their own (no registers of the
 * rest of the kernel): PARSUM_K_SEGRED_LANES4 / PARSUM_K_SEGRED_LANES8 for
 * values of up to 4 / of 8 bytes, 1 inline, 2 out of line (measured the
 * faster for every size: NOTES section 8). */
#ifndef PARSUM_K_SEGRED_LANES4
#define PARSUM_K_SEGRED_LANES4 2
#endif
#ifndef PARSUM_K_SEGRED_LANES8
#define PARSUM_K_SEGRED_LANES8 2
#endif

template <class T, class C, class Op, int F>
__device__ __noinline__ bool segred_lanes_waves_call(
    segred_smem<T> &sm, const u64 *offsets, const T *in, T *out, u64 nseg,
    u64 s0, u64 e0, u64 s1, u64 e1, T id, T pad, int tid, T &carry,
    u64 &hand_s)
{
    return segred_lanes_waves<T, C, Op, F>(sm, offsets, in, out, nseg, s0,
                                           e0, s1, e1, id, pad, Op{}, tid,
                                           carry, hand_s);
}

/* The rounds of width F, inline or out of line. */
template <class T, class C, class Op, int F>
__device__ __forceinline__ bool segred_lanes_rounds(
    segred_smem<T> &sm, const u64 *offsets, const T *in, T *out, u64 nseg,
    u64 s0, u64 e0, u64 s1, u64 e1, const T &id, const T &pad,
    const Op &op, int tid, T &carry, u64 &hand_s)
{
    constexpr int way =
        sizeof(T) == 8 ? PARSUM_K_SEGRED_LANES8 : PARSUM_K_SEGRED_LANES4;
    if constexpr (way == 2)
        return segred_lanes_waves_call<T, C, Op, F>(sm, offsets, in, out,
                                                    nseg, s0, e0, s1, e1, id,
                                                    pad, tid, carry, hand_s);
    else
        return segred_lanes_waves<T, C, Op, F>(sm, offsets, in, out, nseg, s0,
                                               e0, s1, e1, id, pad, op, tid,
                                               carry, hand_s);
}

/* The share [(s0, e0), (s1, e1)] one segment a thread (segred_lanes_waves),
 * the rounds as wide as the share's density asks. */
template <class T, class C, class Op>
__device__ __forceinline__ bool segred_lanes_fold(
    segred_smem<T> &sm, const u64 *offsets, const T *in, T *out, u64 nseg,
    u64 s0, u64 e0, u64 s1, u64 e1, const T &id, const T &pad,
    const Op &op, int tid, T &carry, u64 &hand_s)
{
    constexpr int FD = segred_lwave<T>(true), FS = segred_lwave<T>(false);
    if constexpr (FD != FS) {
        if (e1 - e0 >= SEGRED_LWIDE_AVG * (s1 - s0 + 1u))
            return segred_lanes_rounds<T, C, Op, FD>(sm, offsets, in, out,
                                                     nseg, s0, e0, s1, e1, id,
                                                     pad, op, tid, carry,
                                                     hand_s);
    }
    return segred_lanes_rounds<T, C, Op, FS>(sm, offsets, in, out, nseg, s0,
                                             e0, s1, e1, id, pad, op, tid,
                                             carry, hand_s);
}

#endif /* __CUDACC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SEGREDUCE_WARPS_CUH */
