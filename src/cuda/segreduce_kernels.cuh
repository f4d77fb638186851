/*
 * segreduce_kernels.cuh - the segmented reduce over CSR offsets without a
 * look-back: every block folds its own share of the input, writes the
 * totals of the segments that end in it, and leaves one carry (the
 * partial of the segment still open at its end); the last block to finish
 * folds the carries in block order and completes the segments that cross
 * block boundaries.
 *
 * Work is split by cost, not by elements: the "merge path" of the input
 * is the sequence, segment by segment, of its elements (cost 1 each) and
 * of the segment's end (cost W, the bytes of an offset and an output in
 * element units). Point k of the path is the cut (s, e): segment s is
 * open, elements before e are consumed, s's end is not; s is the last
 * segment with Q(s) = offsets[s] + W s <= k and e = min(offsets[s] + k -
 * Q(s), offsets[s + 1]). Block b takes the path [b P, (b + 1) P) for P =
 * ceil(cost / G) (G resident blocks), so one huge segment, millions of
 * one-element segments and runs of empty segments all cost the same per
 * byte, and the grid size does not depend on n (offsets[nseg], which the
 * kernel reads on the device: the host never waits for it).
 *
 * Inside a block the path is cut into tiles of TC = 256 x IPT cost. A
 * run of tiles without a segment end (inside a long segment) is a plain
 * reduce: 16-byte vectors streamed through shared memory by asynchronous
 * copies, folded per thread (segreduce_run.cuh), and one block reduction
 * per run. Another tile is staged in shared memory (elements, and the
 * offsets of the segments it can reach, the "window"); thread t takes the path [t IPT, (t + 1) IPT) of the tile,
 * finds its cut by binary search in the window, folds its elements in
 * order, writes the segments that start and end inside it, and hands
 * (partial of its last segment, whether it ended one) to a segmented scan
 * over the block's threads, which gives each thread the partial of the
 * segment it started in. A tile with few ends (long segments) is not
 * staged: each thread folds a contiguous piece of its elements, copied
 * ahead by cp.async into a slot of its own, and enters the same scan;
 * such a tile takes the next tile's path too when that adds few ends
 * (segred_tile_pieces). A block whose share holds only segments of
 * moderate length folds it one segment a warp instead, a block whose
 * share holds short ones one segment a thread (segreduce_warps.cuh) and,
 * once long ones appear among them, one stream of elements a warp
 * (segreduce_stream.cuh), which also takes shares of short segments with
 * a long one among them (batches of segments a warp, segreduce_batches.cuh,
 * did that work before and still do under PARSUM_CUDA_SEGRED_STREAM=0).
 * The kernel itself, which puts these pieces
 * together, and the last block's fix-up are in segreduce.cu.
 *
 * Every fold keeps sequence order within a thread, and the combining
 * trees (threads, warps, tiles, blocks) are fixed functions of the
 * offsets, n and G: results are bit-identical run to run. The fast tiles
 * fold a thread's strided vectors into one value, which assumes a
 * commutative operator (the built-in ones are, in value).
 *
 * Offsets are not checked: every offset read is clamped to n, every
 * staged index to its tile, and only out[0 .. nseg) is written, so
 * invalid offsets give unspecified results but no access outside in, out
 * and offsets.
 */
#ifndef PARSUM_SEGREDUCE_KERNELS_CUH
#define PARSUM_SEGREDUCE_KERNELS_CUH

#ifndef __CUDACC_RTC__
#include "kernel_common.cuh"
#endif

namespace parsum_k {

/* Resident blocks per multiprocessor that the kernel is built for
 * (__launch_bounds__), for every element size: three, at up to 85
 * registers a thread. Four (64 registers) made 4-byte values spill 72-84
 * bytes and ran them 3-9 % slower (H200, 2026-11-27); 8-byte values
 * spilled 80-160 bytes at 64. The host launches this many per
 * multiprocessor. */
constexpr int SEGRED_BLOCKS_PER_SM = 3;

struct segred_args {
    const void *in;
    void *out;
    const u64 *offsets; /* nseg + 1 values; n = offsets[nseg] */
    u64 nseg;           /* > 0 */
    u32 num_blocks;     /* G */
    u32 options;        /* OPT_VEC: in is 16-byte aligned */
    u64 *carry_seg;     /* G: block b's first segment, bit 63: b ended it */
    u32 *carry_val;     /* G slots: the partial of the segment open at b's end */
    u32 *counter;       /* blocks done; 0 before the launch, reset after */
};

/* segred_args.options beside OPT_VEC: blocks may fold their share by
 * warps (segreduce_warps.cuh); cleared by PARSUM_CUDA_SEGRED_WARPS=0. */
constexpr u32 OPT_SEGRED_WARPS = 4u;
/* Short segments among long ones by one stream a warp
 * (segreduce_stream.cuh) rather than by batches (segreduce_batches.cuh);
 * cleared by PARSUM_CUDA_SEGRED_STREAM=0. */
constexpr u32 OPT_SEGRED_STREAM = 8u;

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

template <class T>
struct segred_cfg {
    static constexpr int BLOCK = 256;
    static constexpr int NWARP = BLOCK / 32;
    static constexpr u32 ES = (u32)sizeof(T);
    static constexpr u32 V = (u32)vec_elems(sizeof(T));
    /* Path per thread and tile: 32 to 64 bytes of elements. */
    static constexpr u32 IPT = ES <= 1 ? 32u : ES <= 4 ? 16u : 8u;
    static constexpr u32 TC = BLOCK * IPT;
    /* A segment end moves 8 offset bytes and one output element. */
    static constexpr u64 W = (8u + 2u * ES - 1u) / ES;
    /* A tile reaches at most TC / W segment ends: the window holds their
     * offsets and one more. */
    static constexpr u32 WIN = TC / (u32)W + 3u;
    /* Staged elements: one padding element per 128 bytes, so that threads
     * walking their own runs of IPT elements hit different banks. */
    static constexpr u32 PADK = 128u / ES;
    static constexpr u32 XCAP = TC + V;
    static constexpr u32 XSLOTS = XCAP + XCAP / PADK + 1u;
    /* Vectors per thread of a tile (a tile may start mid-vector). */
    static constexpr int ROWS = (int)((TC / V + BLOCK - 1) / BLOCK) + 1;
    /* A tile with at most SPARSE segment ends is folded by pieces of IPT
     * (or 2 IPT) contiguous elements a thread (segred_tile_pieces), each
     * copied to the thread's own slot of RSTRIDE bytes in sm.x (16 bytes
     * of padding a slot keep a warp's 16-byte reads free of bank
     * conflicts). */
    static constexpr u32 SPARSE = 16u;
    static constexpr int RVEC = (int)(IPT / V);
    /* Such a tile may take the next tile's path too (two pieces a thread:
     * the tile's fixed work, window search and block scan, then serves
     * twice the elements), so a slot holds 2 IPT elements. */
    static constexpr u32 RSTRIDE = 2u * IPT * ES + 16u;
    static constexpr u32 XBYTES =
        XSLOTS * ES > BLOCK * RSTRIDE ? XSLOTS * ES : BLOCK * RSTRIDE;
    static_assert(16 % sizeof(T) == 0, "built-in element sizes only");
};

/* The kernel's shared memory, dynamic (segreduce.cu sizes it): about 38
 * KB for 1-byte values, 56 KB for 8-byte and 62 KB for 4-byte ones. */
template <class T>
struct segred_smem {
    /* Staged elements (segred_stage) or the threads' pieces. */
    alignas(16) T x[segred_cfg<T>::XBYTES / sizeof(T)];
    u64 win[2][segred_cfg<T>::WIN]; /* current window, next one */
    u64 cut_e[segred_cfg<T>::BLOCK];
    u32 cut_j[segred_cfg<T>::BLOCK];
    T red[segred_cfg<T>::NWARP];
    u32 redf[segred_cfg<T>::NWARP];
    u64 bcast[4];
    u32 last;
    u32 wnext; /* the warps' next segment (segreduce_warps.cuh) */
    T wcarry;  /* and the block's carry from them */
    u32 dcount; /* spans deferred by the batches (segreduce_batches.cuh) */
};

template <class C>
__device__ __forceinline__ u32 segred_slot(u32 i)
{
    return i + i / C::PADK;
}

/* The cut at path point k, searched over all of offsets by one warp
 * (32 probes per step: 7 dependent loads for 2^32 segments). */
template <class C>
__device__ __forceinline__ void segred_find(const u64 *offsets, u64 nseg,
                                            u64 n, u64 k, int lane, u64 &s,
                                            u64 &e)
{
    u64 lo = 0, hi = nseg;
    while (lo < hi) {
        const u64 step = (hi - lo + 32) / 32;
        const u64 p = lo + (u64)lane * step;
        bool ok = false;
        if (p <= hi) {
            u64 o = offsets[p];
            o = o < n ? o : n;
            ok = o + C::W * p <= k;
        }
        const u32 b = __ballot_sync(PARSUM_K_FULL_MASK, ok);
        const u64 last = b != 0u ? (u64)(31 - __clz((int)b)) : 0ull;
        lo += last * step;
        hi = lo + step - 1 < hi ? lo + step - 1 : hi;
    }
    u64 o = offsets[lo], o1 = lo < nseg ? offsets[lo + 1] : n;
    o = o < n ? o : n;
    o1 = o1 < n ? o1 : n;
    const u64 q = o + C::W * lo;
    const u64 x = q <= k ? o + (k - q) : o;
    s = lo;
    e = x < o1 ? x : o1;
}

/* Window entry j: offsets[st + j] clamped to n (the window is filled by
 * asynchronous copies, so the clamp happens here). */
__device__ __forceinline__ u64 segred_wv(const u64 *win, u32 j, u64 n)
{
    const u64 o = win[j];
    return o < n ? o : n;
}

/* The cut at path point k from the window (win[j] = offsets[st + j]), the
 * answer known to lie in [lo, hi]. The probes skip the clamp to n: with
 * valid offsets it changes nothing, with invalid ones the answer stays in
 * [lo, hi] and the cut's element is clamped. */
template <class C>
__device__ __forceinline__ void segred_wcut(const u64 *win, u64 st, u32 lo,
                                            u32 hi, u64 n, u64 k, u32 &j,
                                            u64 &e)
{
    const u64 ws = C::W * st;
    while (lo < hi) {
        const u32 mid = (lo + hi + 1) >> 1;
        if (win[mid] + (C::W * mid + ws) <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    const u64 o = segred_wv(win, lo, n), o1 = segred_wv(win, lo + 1, n);
    const u64 q = o + C::W * (st + lo);
    const u64 x = q <= k ? o + (k - q) : o;
    j = lo;
    e = x < o1 ? x : o1;
}

/* segred_wcut for the answer in [0, hi], searched by the whole warp (32
 * probes per step: 3 steps for a full window instead of 11). The first
 * step probes entries 0 .. 31, which settles a tile of a few ends in one
 * conflict-free read. */
template <class C>
__device__ __forceinline__ void segred_wcut_warp(const u64 *win, u64 st,
                                                 u32 hi, u64 n, u64 k,
                                                 int lane, u32 &j, u64 &e)
{
    const u64 ws = C::W * st;
    u32 lo = 0;
    {
        const u32 p = (u32)lane;
        const bool ok = p <= hi && win[p] + (C::W * p + ws) <= k;
        const u32 b = __ballot_sync(PARSUM_K_FULL_MASK, ok);
        lo = b != 0u ? (u32)(31 - __clz((int)b)) : 0u;
        if (lo < 31u)
            hi = lo;
    }
    while (lo < hi) {
        const u32 step = (hi - lo + 32) / 32;
        const u32 p = lo + (u32)lane * step;
        const bool ok = p <= hi && win[p] + (C::W * p + ws) <= k;
        const u32 b = __ballot_sync(PARSUM_K_FULL_MASK, ok);
        lo += (b != 0u ? (u32)(31 - __clz((int)b)) : 0u) * step;
        hi = lo + step - 1 < hi ? lo + step - 1 : hi;
    }
    segred_wcut<C>(win, st, lo, lo, n, k, j, e);
}

/* The 16 bytes of elements [base, base + V); elements at or past n read
 * as pad. */
template <class T, class C>
__device__ __forceinline__ vec16 segred_load(const T *in, u64 base, u64 n,
                                             bool vec, const T &pad)
{
    if (vec && base + C::V <= n) {
        const uint4 r = __ldg(reinterpret_cast<const uint4 *>(in + base));
        return vec16{r.x, r.y, r.z, r.w};
    }
    T t[C::V];
#pragma unroll
    for (u32 v = 0; v < C::V; ++v)
        t[v] = base + v < n ? in[base + v] : pad;
    vec16 q;
    memcpy(&q, t, sizeof q);
    return q;
}

/* This thread's vectors r BLOCK + tid (those below nvec) of the range
 * from element a0, all loads issued before any is used. */
template <class T, class C>
__device__ __forceinline__ void segred_load_rows(vec16 (&q)[C::ROWS],
                                                 const T *in, u64 a0, u64 nvec,
                                                 u64 n, bool vec, const T &pad,
                                                 int tid)
{
#pragma unroll
    for (int r = 0; r < C::ROWS; ++r) {
        const u64 vi = (u64)r * C::BLOCK + (u64)tid;
        if (vi < nvec)
            q[r] = segred_load<T, C>(in, a0 + vi * C::V, n, vec, pad);
    }
}

/* acc (+) those of the V elements of vector q, which starts at element
 * b, that lie in [e0, e1). */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_fold_vec(T acc, const vec16 &q, u64 b,
                                             u64 e0, u64 e1, const Op &op)
{
    T t[C::V];
    memcpy(t, &q, sizeof t);
    if (b >= e0 && b + C::V <= e1) {
#pragma unroll
        for (u32 v = 0; v < C::V; ++v)
            acc = op(acc, t[v]);
    } else {
#pragma unroll
        for (u32 v = 0; v < C::V; ++v)
            if (b + v >= e0 && b + v < e1)
                acc = op(acc, t[v]);
    }
    return acc;
}

/* acc (+) the elements [e0, e1) (at most TC), each thread folding its
 * vectors r BLOCK + tid of the vector-aligned range, in row order. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_fast(T acc, const T *in, u64 e0, u64 e1,
                                         u64 n, bool vec, const T &pad,
                                         const Op &op, int tid)
{
    const u64 a0 = e0 - e0 % C::V;
    const u64 nvec = (e1 - a0 + C::V - 1) / C::V;
    vec16 q[C::ROWS];
    segred_load_rows<T, C>(q, in, a0, nvec, n, vec, pad, tid);
#pragma unroll
    for (int r = 0; r < C::ROWS; ++r) {
        const u64 vi = (u64)r * C::BLOCK + (u64)tid;
        if (vi < nvec)
            acc = segred_fold_vec<T, C>(acc, q[r], a0 + vi * C::V, e0, e1,
                                        op);
    }
    return acc;
}

/* acc (+) the elements [e0, e1), any length: segred_fast a tile at a
 * time. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_fast_range(T acc, const T *in, u64 e0,
                                               u64 e1, u64 n, bool vec,
                                               const T &pad, const Op &op,
                                               int tid)
{
    for (u64 x = e0; x < e1; x += C::TC)
        acc = segred_fast<T, C>(acc, in, x, e1 - x > C::TC ? x + C::TC : e1,
                                n, vec, pad, op, tid);
    return acc;
}

/* Stages the nvec vectors from element a0 (a multiple of V) into sm.x:
 * element a0 + i at segred_slot(i). */
template <class T, class C>
__device__ __forceinline__ void segred_stage(segred_smem<T> &sm, const T *in,
                                             u64 a0, u64 nvec, u64 n,
                                             bool vec, const T &pad, int tid)
{
    vec16 q[C::ROWS];
    segred_load_rows<T, C>(q, in, a0, nvec, n, vec, pad, tid);
#pragma unroll
    for (int r = 0; r < C::ROWS; ++r) {
        const u32 vi = (u32)r * C::BLOCK + (u32)tid;
        if (vi < nvec) {
            T t[C::V];
            memcpy(t, &q[r], sizeof t);
#pragma unroll
            for (u32 v = 0; v < C::V; ++v)
                sm.x[segred_slot<C>(vi * C::V + v)] = t[v];
        }
    }
}

/* Block reduction in thread order (fixed tree); the result in every
 * thread. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_block_reduce(segred_smem<T> &sm, T v,
                                                 int lane, int warp,
                                                 const Op &op)
{
    v = warp_reduce(v, op);
    __syncthreads(); /* earlier readers of sm.red are done */
    if (lane == 0)
        sm.red[warp] = v;
    __syncthreads();
    T r = sm.red[0];
    for (int w = 1; w < C::NWARP; ++w)
        r = op(r, sm.red[w]);
    return r;
}

/* Exclusive scan over the block's threads of (v, f) under
 * (v1, f1) . (v2, f2) = (f2 ? v2 : v1 (+) v2, f1 | f2), starting from
 * (carry, false): a thread whose f is set starts a new segment. Returns
 * the thread's exclusive value; total = the value after the last thread. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_scan(segred_smem<T> &sm, T v, bool f,
                                         const T &carry, T &total, int lane,
                                         int warp, const Op &op)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T ov = shfl_up(v, d);
        const bool of = __shfl_up_sync(PARSUM_K_FULL_MASK, (int)f, d) != 0;
        if (lane >= d) {
            if (!f)
                v = op(ov, v);
            f = f || of;
        }
    }
    __syncthreads(); /* earlier readers of sm.red are done */
    if (lane == 31) {
        sm.red[warp] = v;
        sm.redf[warp] = f ? 1u : 0u;
    }
    __syncthreads();
    T p = carry, t = carry;
    for (int w = 0; w < C::NWARP; ++w) {
        if (w == warp)
            p = t;
        t = sm.redf[w] != 0u ? sm.red[w] : op(t, sm.red[w]);
    }
    total = t;
    const T iv = shfl_up(v, 1);
    const bool ifl = __shfl_up_sync(PARSUM_K_FULL_MASK, (int)f, 1) != 0;
    if (lane == 0)
        return p;
    return ifl ? iv : op(p, iv);
}

/* The per-block state of the walk along the path. Windows: buffer wb of
 * sm.win holds offsets[win_s .. win_s + wjmax + 1] (WEND: up to the
 * block's last segment); with PF, the other buffer is filling with the
 * window of the next tile's first segment (pf_jmax, PF_END). */
enum : u32 { SEGRED_WB = 1u, SEGRED_WEND = 2u, SEGRED_PF = 4u,
             SEGRED_PF_END = 8u };

template <class T>
struct segred_walk {
    u64 st;    /* open segment at the current cut */
    u64 et;    /* and the cut's element */
    T carry;   /* partial (this block only) of segment st */
    u64 win_s; /* window */
    u32 wjmax;
    u32 pf_jmax;
    u32 bits; /* SEGRED_* */
    u32 jmax; /* view from st: win[j] = offsets[st + j] for j <= jmax + 1 */
    const u64 *win;
    /* The pieces in sm.x (maybe still in flight) are those of a tile from
     * element pf_a0 (~0: none). */
    u64 pf_a0;
};

/* Whether the window serves a tile starting in segment s: a tile reaches
 * at most TC / W segment ends past s. */
template <class T, class C>
__device__ __forceinline__ bool segred_covers(const segred_walk<T> &w, u64 s)
{
    if (s < w.win_s || s - w.win_s > w.wjmax)
        return false;
    return (w.bits & SEGRED_WEND) != 0u ||
           w.wjmax - (u32)(s - w.win_s) >= C::TC / (u32)C::W + 1u;
}

/* Starts filling the other buffer with the window of segment s (the
 * block's segments end at s_end); segred_use_window waits for it. */
template <class T, class C>
__device__ __forceinline__ void segred_fill(segred_smem<T> &sm,
                                            segred_walk<T> &w,
                                            const u64 *offsets, u64 nseg,
                                            u64 n, u64 s, u64 s_end, int tid)
{
    const u64 reach = s_end > s ? s_end - s : 0;
    const bool end = reach <= C::WIN - 2;
    w.pf_jmax = end ? (u32)reach : C::WIN - 2;
    w.bits = (w.bits & (SEGRED_WB | SEGRED_WEND)) | SEGRED_PF |
             (end ? SEGRED_PF_END : 0u);
    u64 *dst = sm.win[(w.bits & SEGRED_WB) ^ 1u];
    for (u32 j = (u32)tid; j <= w.pf_jmax + 1; j += C::BLOCK) {
        if (s + j <= nseg)
            cp_async<8>(dst + j, offsets + s + j);
        else
            dst[j] = n;
    }
    cp_async_commit();
}

/* Makes w.win a window for segment w.st: the current one, the one
 * filling, or a new one (waited for). Block-uniform. */
template <class T, class C>
__device__ __forceinline__ void segred_use_window(segred_smem<T> &sm,
                                                  segred_walk<T> &w,
                                                  const u64 *offsets,
                                                  u64 nseg, u64 n, u64 s_end,
                                                  int tid)
{
    if (!segred_covers<T, C>(w, w.st)) {
        /* The other buffer was last read before the barrier that made it
         * the other one: free to fill. */
        /* A fill started by the last tile is for w.st (its end). */
        if ((w.bits & SEGRED_PF) == 0u)
            segred_fill<T, C>(sm, w, offsets, nseg, n, w.st, s_end, tid);
        cp_async_wait_all();
        __syncthreads();
        w.win_s = w.st;
        w.wjmax = w.pf_jmax;
        w.bits = ((w.bits & SEGRED_WB) ^ SEGRED_WB) |
                 ((w.bits & SEGRED_PF_END) != 0u ? SEGRED_WEND : 0u);
    }
    const u32 base = (u32)(w.st - w.win_s);
    w.win = sm.win[w.bits & SEGRED_WB] + base;
    w.jmax = w.wjmax - base;
}

/* The end of a tile with segment ends, once each thread has folded its
 * piece: acc is the partial of the segment open at the piece's end, head
 * that of the segment st + j0 open at its start, and the piece ended
 * segments st + j0 .. st + j1 - 1 (st + j0's total, if it ended, is
 * written here; the later ones were). carry: the block's partial of
 * segment st before the tile. Returns the partial of the segment open at
 * the tile's end. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_tile_end(segred_smem<T> &sm,
                                             const u64 *win, u64 st, T *out,
                                             u64 n, u64 nseg, const T &carry,
                                             const T &acc, const T &head,
                                             u32 j0, u32 j1, const T &id,
                                             const Op &op, int tid)
{
    const bool ended = j1 > j0;
    T total;
    const T excl = segred_scan<T, C>(sm, acc, ended, carry, total, tid & 31,
                                     tid >> 5, op);
    if (ended) {
        const u64 s = st + j0;
        if (s < nseg)
            out[s] = segred_wv(win, j0, n) == segred_wv(win, j0 + 1, n)
                         ? id
                         : op(excl, head);
    }
    return total;
}

template <class T>
struct segred_piece {
    T acc, head;
};

/* Starts copying the warp's pieces of np IPT elements of the tile from
 * element a0 (those of threads 32 warp .. 32 warp + 31: 32 np IPT
 * elements from a0 + 32 warp np IPT) into their slots, lane l taking
 * vectors l, l + 32, ... of them so that each copy instruction reads 512
 * contiguous bytes (a lane copying its own piece made every instruction
 * touch twice the sectors it used):
 * asynchronous 16-byte copies of the whole vectors of a 16-byte-aligned
 * input, loads and stores for the others (a vector that n cuts: a copy of
 * fewer bytes reads only those, but the memory checker takes it for a
 * 16-byte read). Elements past n are never folded. A vector's lane is the
 * same for every tile, so a lane's own wait orders its copies into a
 * slot; the lanes that read them wait at a __syncwarp. Commits a group. */
template <class T, class C>
__device__ __forceinline__ void segred_pieces_fill(unsigned char *wslots,
                                                   const T *in, u64 a0, u32 np,
                                                   u64 n, bool vec,
                                                   const T &pad, int tid)
{
    const u32 lane = (u32)tid & 31u;
    const u32 nv = np * (u32)C::RVEC; /* vectors a piece (a power of 2) */
    const u32 sh = 31u - (u32)__clz((int)nv);
    const u64 wb = a0 + (u64)(tid >> 5) * (32u * C::IPT * np);
    __syncwarp(); /* the slots' last readers are done */
#pragma unroll
    for (int r = 0; r < 2 * C::RVEC; ++r) {
        const u32 c = (u32)r * 32u + lane;
        const u64 p = wb + (u64)c * C::V;
        if ((u32)r >= nv || p >= n)
            break;
        unsigned char *dst =
            wslots + (c >> sh) * C::RSTRIDE + (c & (nv - 1u)) * 16u;
        if (vec && p + C::V <= n)
            cp_async<16>(dst, in + p);
        else
            *reinterpret_cast<vec16 *>(dst) =
                segred_load<T, C>(in, p, n, vec, pad);
    }
    cp_async_commit();
}

/* segred_tile_pieces's walk of a piece [lo, hi) of the slot's elements
 * (element p at x[p - c0]) that an end cuts or the tile's edge trims (a
 * few pieces a tile), a segment closed at each of ends j0 .. j1 - 1
 * between them; returns the partials of the piece's last and first
 * segments. Out of line, so that the common piece keeps its registers. */
template <class T, class C, class Op>
__device__ __noinline__ segred_piece<T>
segred_piece_walk(const u64 *win, u64 st, const T *x, u64 c0, T *out, u64 n,
                  u64 nseg, u64 lo, u64 hi, u32 j0, u32 j1, T id, T pad)
{
    const Op op{};
    segred_piece<T> r{pad, pad};
    u32 j = j0;
    u64 bj = j < j1 ? segred_wv(win, j + 1, n) : ~0ull; /* next end */
    auto close = [&]() {
        if (j == j0) {
            r.head = r.acc;
        } else {
            const u64 s = st + j;
            if (s < nseg)
                out[s] = segred_wv(win, j, n) == bj ? id : r.acc;
        }
        r.acc = pad;
        ++j;
        bj = j < j1 ? segred_wv(win, j + 1, n) : ~0ull;
    };
    for (u64 p = lo; p < hi; ++p) {
        while (bj <= p)
            close();
        r.acc = op(r.acc, x[p - c0]);
    }
    while (j < j1)
        close();
    return r;
}

/* A tile of elements [ebase, eend) with jt <= SPARSE segment ends (long
 * segments, as uniform 1000-element ones: about 4 ends in 4096 elements),
 * folded by pieces instead of staged: thread t owns elements [c0, c1),
 * c0 = a0 + t np IPT, c1 = c0 + np IPT (np = 1, or 2 for a tile that
 * took the next tile's path too; the tile must fit: ebase % V + cnt <= np
 * TC), which its warp copies into the thread's slot of sm.x; it counts
 * the tile's ends at or before c0 and c1 in the window (win[j + 1] = the
 * end of segment st + j) and folds its elements in order, closing a
 * segment at each end between them; a piece with no end inside, nearly
 * every piece, is one fold. A warp's copies go only to its own slots, so
 * no block barrier waits for them (a __syncwarp does), and once the warp
 * has read its pieces it starts copying those of the next tile (from
 * etile, two pieces a thread, when next), so that tile's loads are in
 * flight during this one's scan. The staged walk (segred_tile) instead
 * stops the whole block at a barrier for every tile's loads. Updates the
 * walk (carry, st, et, pf_a0). */
template <class T, class C, class Op>
__device__ __forceinline__ void segred_tile_pieces(
    segred_smem<T> &sm, segred_walk<T> &w, const T *in, T *out, u64 n,
    u64 nseg, u32 jt, u32 np, u64 ebase, u64 eend, u64 etile, bool next,
    bool vec, const T &id, const T &pad, const Op &op, int tid)
{
    const u64 *win = w.win;
    const u64 a0 = ebase - ebase % C::V;
    const u64 c0 = a0 + (u64)tid * C::IPT * np, c1 = c0 + C::IPT * np;
    unsigned char *wslots = reinterpret_cast<unsigned char *>(sm.x) +
                            (u32)(tid & ~31) * C::RSTRIDE;
    const unsigned char *slot = wslots + (u32)(tid & 31) * C::RSTRIDE;
    if (w.pf_a0 != a0 || np != 2u) {
        /* Not copied ahead (the copies ahead are of two pieces a thread):
         * a copy still in flight to the slots lands first. */
        if (w.pf_a0 != ~0ull)
            cp_async_wait_all();
        segred_pieces_fill<T, C>(wslots, in, a0, np, n, vec, pad, tid);
    }
    cp_async_wait_all();
    __syncwarp(); /* the other lanes' copies into this lane's slot */
    /* Ends before the piece and through it; thread 0 owns the ends at the
     * tile's first element. */
    u32 j0 = 0, j1 = 0;
    for (u32 j = 0; j < jt; ++j) {
        const u64 b = segred_wv(win, j + 1, n);
        j0 += b <= c0 ? 1u : 0u;
        j1 += b <= c1 ? 1u : 0u;
    }
    if (tid == 0)
        j0 = 0;
    const u64 lo = c0 > ebase ? c0 : ebase, hi = c1 < eend ? c1 : eend;
    segred_piece<T> pc{pad, pad};
    if (j1 == j0 && lo == c0 && hi == c1) {
#pragma unroll
        for (int r = 0; r < 2 * C::RVEC; ++r) {
            if ((u32)r >= np * (u32)C::RVEC)
                break;
            const vec16 q = *reinterpret_cast<const vec16 *>(slot + 16 * r);
            T t[C::V];
            memcpy(t, &q, sizeof t);
#pragma unroll
            for (u32 v = 0; v < C::V; ++v)
                pc.acc = op(pc.acc, t[v]);
        }
    } else if (lo < hi || j1 > j0) {
        pc = segred_piece_walk<T, C, Op>(win, w.st,
                                         reinterpret_cast<const T *>(slot), c0,
                                         out, n, nseg, lo, hi, j0, j1, id,
                                         pad);
    }
    /* The slot is read (the walk above included): the next tile's piece
     * may come in. */
    w.pf_a0 = ~0ull;
    if (next) {
        w.pf_a0 = etile - etile % C::V;
        segred_pieces_fill<T, C>(wslots, in, w.pf_a0, 2u, n, vec, pad, tid);
    }
    w.carry = segred_tile_end<T, C>(sm, win, w.st, out, n, nseg, w.carry,
                                    pc.acc, pc.head, j0, j1, id, op, tid);
    w.st += jt;
    w.et = etile;
}

/* One tile with segment ends: path [k, kt1) of the block's [.., k1), or
 * [k, kt1 + TC) for a tile of few ends that takes the next tile's path
 * too. Returns where the path goes on. */
template <class T, class C, class Op>
__device__ u64 segred_tile(segred_smem<T> &sm, segred_walk<T> &w,
                           const T *in, T *out, const u64 *offsets, u64 n,
                           u64 nseg, u64 s_end, u64 k, u64 kt1, u64 k1,
                           bool vec, const T &id, const T &pad, const Op &op,
                           int tid)
{
    const int lane = tid & 31;
    const u64 *win = w.win;
    u32 jt;
    u64 etile;
    segred_wcut_warp<C>(win, w.st, w.jmax, n, kt1, lane, jt, etile);
    const u64 ebase = w.et;
    u64 cnt = etile > ebase ? etile - ebase : 0;
    cnt = cnt < C::TC ? cnt : C::TC; /* only invalid offsets clamp */
    u32 np = jt <= C::SPARSE && ebase % C::V + cnt <= C::TC ? 1u : 0u;
    if (np != 0u && kt1 < k1) {
        /* Two pieces a thread if the next tile's path adds few ends too.
         * The window holds at least SPARSE + 2 entries from st unless it
         * reaches the block's last segment, so a cut found at or below
         * SPARSE is the cut. */
        const u64 kt2 = k1 - kt1 > C::TC ? kt1 + C::TC : k1;
        const u32 hi = w.jmax < C::SPARSE + 1u ? w.jmax : C::SPARSE + 1u;
        u32 j2;
        u64 e2;
        segred_wcut_warp<C>(win, w.st, hi, n, kt2, lane, j2, e2);
        u64 c2 = e2 > ebase ? e2 - ebase : 0;
        if (j2 <= C::SPARSE && ebase % C::V + c2 <= 2 * C::TC) {
            np = 2u;
            kt1 = kt2;
            jt = j2;
            etile = e2;
            cnt = c2;
        }
    }
    const u64 eend = ebase + cnt;
    const u64 a0 = ebase - ebase % C::V;
    const u64 nvec = cnt > 0 ? (eend - a0 + C::V - 1) / C::V : 0;
    /* The next tile's window loads while this one is worked on (the
     * other buffer's readers finished before segred_use_window's barrier
     * made it the other one). */
    if (kt1 < k1 && !segred_covers<T, C>(w, w.st + jt))
        segred_fill<T, C>(sm, w, offsets, nseg, n, w.st + jt, s_end, tid);
    if (np != 0u) {
        segred_tile_pieces<T, C>(sm, w, in, out, n, nseg, jt, np, ebase, eend,
                                 etile, kt1 < k1, vec, id, pad, op, tid);
        return kt1;
    }
    if (w.pf_a0 != ~0ull) { /* pieces copied ahead for nothing */
        cp_async_wait_all();
        w.pf_a0 = ~0ull;
    }
    __syncthreads(); /* the last tile's readers of sm.x, sm.cut_* are done */
    segred_stage<T, C>(sm, in, a0, nvec, n, vec, pad, tid);
    /* Path d = kk - k into the tile has passed j segment ends and at most
     * cnt elements, and the tile may start inside an end: d - cnt - W <
     * W j < d + W. */
    const u64 d = (u64)tid * C::IPT < kt1 - k ? (u64)tid * C::IPT : kt1 - k;
    const u64 kk = k + d;
    u32 jlo = d > cnt + C::W ? (u32)((d - cnt) / C::W) - 1u : 0u;
    u32 jhi = (u32)((d + C::W - 1) / C::W);
    jhi = jhi < jt ? jhi : jt;
    jlo = jlo < jhi ? jlo : jhi;
    u32 j0;
    u64 e0;
    segred_wcut<C>(win, w.st, jlo, jhi, n, kk, j0, e0);
    sm.cut_j[tid] = j0;
    sm.cut_e[tid] = e0;
    __syncthreads();
    u32 j1 = jt;
    u64 e1 = etile;
    if (tid + 1 < C::BLOCK) {
        j1 = sm.cut_j[tid + 1];
        e1 = sm.cut_e[tid + 1];
    }

    /* This thread's path: the rest of segment st + j0 (its "head", which
     * may have begun before), whole segments, the start of st + j1. */
    T acc = pad, head = pad;
    u64 e = e0 > ebase ? e0 : ebase;
    u64 lo = segred_wv(win, j0, n);
    for (u32 j = j0; j < j1; ++j) {
        const u64 hi = segred_wv(win, j + 1, n);
        const u64 stop = hi < eend ? hi : eend;
        for (; e < stop; ++e)
            acc = op(acc, sm.x[segred_slot<C>((u32)(e - a0))]);
        if (j == j0) {
            head = acc;
        } else {
            const u64 s = w.st + j;
            if (s < nseg)
                out[s] = lo == hi ? id : acc;
        }
        acc = pad;
        lo = hi;
    }
    const u64 stop = e1 < eend ? e1 : eend;
    for (; e < stop; ++e)
        acc = op(acc, sm.x[segred_slot<C>((u32)(e - a0))]);

    w.carry = segred_tile_end<T, C>(sm, win, w.st, out, n, nseg, w.carry,
                                    acc, head, j0, j1, id, op, tid);
    w.st += jt;
    w.et = etile;
    return kt1;
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SEGREDUCE_KERNELS_CUH */
