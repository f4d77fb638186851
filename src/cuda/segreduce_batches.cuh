/*
 * segreduce_batches.cuh - the segmented reduce's walk of short segments
 * among longer ones (a power-law mix of lengths): batches of 128
 * consecutive segments a warp.
 *
 * Why. One segment a thread (segreduce_warps.cuh) serves shares of short
 * segments only while no segment of a round is long: a thread walking a
 * 60-element segment alone holds its whole round up for 15 load round
 * trips. In a power-law mix (mean about 5 elements, one segment in 150
 * longer than 64) nearly every round has such a segment, and the shares
 * went back to the tile walk, whose staging, window searches and block
 * scans per tile held them to about a fifth of the read bound. Here a
 * warp takes the next 128 segments (4 a lane: their offsets), and walks
 * their elements, which are contiguous, in chunks of 32 E elements: lane
 * l folds E consecutive elements (VPL 16-byte loads), restarting at each
 * segment head, and a segmented warp scan carries the partials across
 * lanes and chunks. No block barrier stands between batches; the next
 * batch's offsets are prefetched to L2 while the current one is walked.
 *
 * Heads: for each segment of the batch with elements whose first one b
 * lies in the chunk [c, c + 32 E), bit (b - c) of a per-warp mask in
 * shared memory, and at byte (b - c) its index within the batch, set by
 * the lane that owns the segment. A lane walking its elements thus knows
 * each segment it closes; the segment open at its start is the last one
 * with a head before it (a max-scan over the lanes). Every segment's
 * total goes to the warp's 128 slots in shared memory (res) where it
 * closes, the empty ones' where their lane finds them, and the warp
 * writes the batch's totals with one coalesced pass at its end.
 *
 * Long segments. A segment covering at least SEGRED_BDEFER whole chunks
 * would keep one warp busy long after the others: its whole chunks (the
 * span [c_a, c_b) on the chunk grid, after its first element) are left
 * out of the walk and folded by the whole block (as the tile walk's tiles
 * without an end are, TC elements a step) when the round of batches
 * ends; the segment's total is then (walked part) (+) (span), which
 * regroups its elements (commutative operators only, as every fast path
 * of the segmented reduce). A round is SEGRED_BROUND batches, one span at
 * most each, so the block's list of spans never overflows and which
 * spans are deferred depends on the offsets alone.
 *
 * Order within a segment: the lanes' runs in order, combined by the
 * scan's fixed tree; chunk partials left to right. Batches, chunks and
 * spans depend only on the offsets, n and the grid.
 */
#ifndef PARSUM_SEGREDUCE_BATCHES_CUH
#define PARSUM_SEGREDUCE_BATCHES_CUH

#include "segreduce_warps.cuh"

namespace parsum_k {

constexpr int SEGRED_BSEGS = 128; /* segments a batch: 4 a lane */
constexpr int SEGRED_BPL = SEGRED_BSEGS / 32;
constexpr u32 SEGRED_BDEFER = 4;  /* whole chunks of a segment: deferred */
constexpr u32 SEGRED_BROUND = 64; /* batches a round: spans a block */

#if defined(__CUDACC__)

template <class T, class C>
struct segred_bcfg {
    /* 16-byte vectors a lane and chunk: 2 for 1-byte values, whose head
     * indices (a byte an element of the chunk) would not fit sm.x at 4. */
    static constexpr int VPL = C::ES == 1 ? 2 : 4;
    static constexpr u32 E = (u32)VPL * C::V; /* elements a lane */
    static constexpr u32 CH = 32u * E;           /* elements a chunk */
    static constexpr u32 HW = CH / 32u;          /* head-mask words */
};

template <class T>
struct segred_defer {
    u64 j, lo, hi; /* segment j's span [lo, hi) */
    T part;        /* the walk's partial of segment j */
};

/* A batch's constants for its walk, the same in every lane. Positions
 * are relative to the share's first element rounded down to a vector
 * (rb): shares on this path hold fewer than 2^31 elements. */
struct segred_bctx {
    u64 j0;     /* first segment */
    u64 rb;     /* base of the relative positions */
    u32 r0, r1; /* the batch's elements */
    u32 da, db; /* the deferred segment's span */
    u64 dj;     /* the deferred segment (~0: none) */
    u32 dslot;  /* its entry in the block's list */
};

/* The walk's shared memory, laid over sm.x (unused on this path). */
template <class T, class C>
struct segred_bsmem {
    T res[C::NWARP][SEGRED_BSEGS]; /* the batch's totals */
    unsigned char hix[C::NWARP][segred_bcfg<T, C>::CH]; /* head's segment */
    u32 hm[C::NWARP][segred_bcfg<T, C>::HW];
    segred_defer<T> d[SEGRED_BROUND];
    segred_bctx ctx[C::NWARP];
};

template <class T, class C>
__device__ __forceinline__ segred_bsmem<T, C> &segred_bs(segred_smem<T> &sm)
{
    static_assert(sizeof(segred_bsmem<T, C>) <= sizeof(sm.x),
                  "the batch walk's shared memory fits in sm.x");
    return *reinterpret_cast<segred_bsmem<T, C> *>(sm.x);
}

/* One chunk [c, c + CH) of the batch (relative positions; bl: the lane's
 * segments' first elements, nzm: those with elements). open: the index
 * of the segment open at c (-1: none yet), cin: its partial. */
template <class T, class C, class Op>
__device__ __forceinline__ void segred_bchunk(
    segred_smem<T> &sm, const u32 (&bl)[SEGRED_BPL], u32 nzm, u32 c,
    const T *in, u64 n, bool vec, const T &pad, const Op &op, int tid,
    int &open, T &cin)
{
    typedef segred_bcfg<T, C> B;
    const int lane = tid & 31, warp = tid >> 5;
    segred_bsmem<T, C> &bs = segred_bs<T, C>(sm);
    const segred_bctx &bc = bs.ctx[warp];
    u32 *hm = bs.hm[warp];
    unsigned char *hix = bs.hix[warp];
    T *res = bs.res[warp];
    const u32 cl = c + (u32)lane * B::E;
    vec16 q[B::VPL];
#pragma unroll
    for (int v = 0; v < B::VPL; ++v) {
        const u32 base = cl + (u32)v * C::V;
        q[v] = vec16{0u, 0u, 0u, 0u};
        if (base < bc.r1 && base + C::V > bc.r0)
            q[v] = segred_load<T, C>(in, bc.rb + base, n, vec, pad);
    }
    /* The chunk's heads (in range only, whatever the offsets). */
    __syncwarp();
    for (u32 i = (u32)lane; i < B::HW; i += 32u)
        hm[i] = 0u;
    __syncwarp();
    const u32 hlo = c > bc.r0 ? c : bc.r0;
    const u32 hhi = c + B::CH < bc.r1 ? c + B::CH : bc.r1;
#pragma unroll
    for (int s = 0; s < SEGRED_BPL; ++s)
        if (((nzm >> s) & 1u) != 0u && bl[s] >= hlo && bl[s] < hhi) {
            const u32 p = bl[s] - c;
            atomicOr(&hm[p / 32u], 1u << (p % 32u));
            hix[p] = (unsigned char)(SEGRED_BPL * lane + s);
        }
    __syncwarp();
    static_assert(B::E <= 32u, "a lane's heads fit one mask word");
    const u32 bit = (u32)lane * B::E;
    const u64 hb = (u64)((hm[bit / 32u] >> (bit % 32u)) &
                         (B::E == 32 ? ~0u : (1u << B::E) - 1u));
    /* The lane's run: hp = the part of the segment open at its start,
     * acc = the part of its last segment; the segments inside it go to
     * res. */
    const u32 ilo = bc.r0 > cl ? min(bc.r0 - cl, B::E) : 0u;
    const u32 ihi = bc.r1 > cl ? min(bc.r1 - cl, B::E) : 0u;
    T acc = pad, hp = pad;
    int cur = -1; /* the segment of the lane's last head */
#pragma unroll
    for (int v = 0; v < B::VPL; ++v) {
        T t[C::V];
        memcpy(t, &q[v], sizeof t);
#pragma unroll
        for (u32 e = 0; e < C::V; ++e) {
            const u32 i = (u32)v * C::V + e;
            if (((hb >> i) & 1u) != 0u) {
                if (cur >= 0)
                    res[cur] = acc;
                else
                    hp = acc;
                cur = hix[cl - c + i];
                acc = t[e];
            } else if (i >= ilo && i < ihi) {
                acc = op(acc, t[e]);
            }
        }
    }
    const bool hd = cur >= 0;
    /* Segmented scan of (acc, hd) over the lanes, from cin; max-scan of
     * the last head's segment. */
    T sv = acc;
    int sf = hd ? 1 : 0, sx = cur;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T ov = shfl_up(sv, d);
        const int of = __shfl_up_sync(PARSUM_K_FULL_MASK, sf, d);
        const int ox = __shfl_up_sync(PARSUM_K_FULL_MASK, sx, d);
        if (lane >= d) {
            if (sf == 0)
                sv = op(ov, sv);
            sf |= of;
            sx = ox > sx ? ox : sx;
        }
    }
    const T ev = shfl_up(sv, 1);
    const int ef = __shfl_up_sync(PARSUM_K_FULL_MASK, sf, 1);
    int ex = __shfl_up_sync(PARSUM_K_FULL_MASK, sx, 1);
    const T cl_in = lane == 0 ? cin : ef != 0 ? ev : op(cin, ev);
    ex = lane == 0 || ex < open ? open : ex;
    const T tv = shfl_idx(sv, 31);
    const int tf = __shfl_sync(PARSUM_K_FULL_MASK, sf, 31);
    const int tx = __shfl_sync(PARSUM_K_FULL_MASK, sx, 31);
    cin = tf != 0 ? tv : op(cin, tv);
    open = tx > open ? tx : open;
    if (hd && ex >= 0)
        res[ex] = op(cl_in, hp);
}

/* Batch j0 (offsets o[s] = offsets[j0 + 4 lane + s]) of the share, whose
 * segment j's part is segred_wrange's [b, e). */
template <class T, class C, class Op>
__device__ __forceinline__ void segred_batch(
    segred_smem<T> &sm, u64 j0, const u64 (&o)[SEGRED_BPL + 1],
    const T *in, T *out, u64 n, u64 nseg, u64 e0, u64 s1, u64 e1, bool vec,
    const T &id, const T &pad, const Op &op, int tid)
{
    typedef segred_bcfg<T, C> B;
    const int lane = tid & 31, warp = tid >> 5;
    segred_bsmem<T, C> &bs = segred_bs<T, C>(sm);
    segred_bctx bc;
    bc.j0 = j0;
    bc.rb = e0 - e0 % C::V;
    u32 bl[SEGRED_BPL], el[SEGRED_BPL];
    u32 nzm = 0; /* this lane's segments with elements (in the share) */
    __syncwarp(); /* the last batch's res is written out */
#pragma unroll
    for (int s = 0; s < SEGRED_BPL; ++s) {
        const u64 j = j0 + (u64)(SEGRED_BPL * lane + s);
        u64 b, e;
        bool empty;
        segred_wrange(o[s], o[s + 1], j, s1, n, e0, e1, b, e, empty);
        bl[s] = (u32)(b - bc.rb);
        el[s] = (u32)(e - bc.rb);
        if (j > s1)
            continue;
        if (b < e)
            nzm |= 1u << s;
        else
            bs.res[warp][SEGRED_BPL * lane + s] = empty && j != s1 ? id : pad;
    }
    bc.r0 = __shfl_sync(PARSUM_K_FULL_MASK, bl[0], 0);
    {
        const u64 last = (s1 - j0 < (u64)SEGRED_BSEGS - 1u ? s1 - j0
                                                          : SEGRED_BSEGS - 1u);
        u32 le = el[0];
#pragma unroll
        for (int s = 1; s < SEGRED_BPL; ++s)
            if ((u64)s == last % SEGRED_BPL)
                le = el[s];
        bc.r1 = __shfl_sync(PARSUM_K_FULL_MASK, le, (int)(last / SEGRED_BPL));
    }
    const u32 cb0 = bc.r0 - bc.r0 % C::V;
    /* The segment with the most whole chunks after its first element. */
    u32 best = 0, bs_i = 0, ba = 0, bb = 0;
#pragma unroll
    for (int s = 0; s < SEGRED_BPL; ++s) {
        if (((nzm >> s) & 1u) == 0u || bl[s] < cb0 || el[s] < bl[s])
            continue;
        const u32 ca = cb0 + ((bl[s] - cb0) / B::CH + 1u) * B::CH;
        const u32 cz = cb0 + ((el[s] - cb0) / B::CH) * B::CH;
        const u32 k = cz > ca ? (cz - ca) / B::CH : 0u;
        if (k > best) {
            best = k;
            bs_i = (u32)(SEGRED_BPL * lane + s);
            ba = ca;
            bb = cz;
        }
    }
    u32 top = best;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const u32 t = __shfl_xor_sync(PARSUM_K_FULL_MASK, top, d);
        top = t > top ? t : top;
    }
    bc.dj = ~0ull;
    bc.da = bc.db = 0;
    bc.dslot = 0;
    if (top >= SEGRED_BDEFER) {
        const u32 who = __ballot_sync(PARSUM_K_FULL_MASK, best == top);
        const int src = __ffs((int)who) - 1;
        bc.dj = j0 + __shfl_sync(PARSUM_K_FULL_MASK, bs_i, src);
        bc.da = __shfl_sync(PARSUM_K_FULL_MASK, ba, src);
        bc.db = __shfl_sync(PARSUM_K_FULL_MASK, bb, src);
        u32 slot = 0;
        if (lane == 0)
            slot = atomicAdd(&sm.dcount, 1u);
        /* Below SEGRED_BROUND: one span at most a batch of the round. */
        bc.dslot = __shfl_sync(PARSUM_K_FULL_MASK, slot, 0);
        if (lane == 0) {
            bs.d[bc.dslot].j = bc.dj;
            bs.d[bc.dslot].lo = bc.rb + bc.da;
            bs.d[bc.dslot].hi = bc.rb + bc.db;
        }
    }
    const u32 r1 = bc.r1, da = bc.da, db = bc.db;
    const bool dfr = bc.dj != ~0ull;
    __syncwarp();
    if (lane == 0)
        bs.ctx[warp] = bc;
    __syncwarp();

    int open = -1;
    T cin = pad;
    for (u32 c = cb0; c < r1;) {
        if (c == da && dfr) {
            c = db;
            continue;
        }
        segred_bchunk<T, C, Op>(sm, bl, nzm, c, in, n, vec, pad, op, tid,
                                open, cin);
        c += B::CH;
    }
    if (lane == 0 && open >= 0)
        bs.res[warp][open] = cin;
    __syncwarp();
    /* The batch's totals: out, the block's carry (s1) or the deferred
     * span's entry. */
    for (u32 i = (u32)lane; i < (u32)SEGRED_BSEGS; i += 32u) {
        const u64 j = j0 + i;
        if (j > s1)
            break;
        const T v = bs.res[warp][i];
        if (j == bs.ctx[warp].dj)
            bs.d[bs.ctx[warp].dslot].part = v;
        else
            segred_put_total(sm, out, j, s1, nseg, v, false, v);
    }
}

/* The block's fold of [lo, hi), TC elements a step as the tile walk's
 * tiles without an end; in every thread. Out of line for the registers
 * (inlined into segred_batches, ptxas spilled 180 bytes there); called
 * once a deferred span. */
template <class T, class C, class Op>
__device__ __noinline__ T segred_bspan(const T *in, u64 lo, u64 hi, u64 n,
                                       bool vec, T pad, int tid)
{
    extern __shared__ __align__(16) unsigned char segred_dyn[];
    segred_smem<T> &sm = *reinterpret_cast<segred_smem<T> *>(segred_dyn);
    const Op op{};
    const T v = segred_fast_range<T, C>(pad, in, lo, hi, n, vec, pad, op, tid);
    return segred_block_reduce<T, C>(sm, v, tid & 31, tid >> 5, op);
}

/* offsets[j0 + 4 lane + s], s = 0 .. 4, as far as segment s1 needs them
 * (n past them). */
__device__ __forceinline__ void segred_bload(const u64 *offsets, u64 nseg,
                                             u64 n, u64 j0, u64 s1, int lane,
                                             u64 (&o)[SEGRED_BPL + 1])
{
#pragma unroll
    for (int s = 0; s <= SEGRED_BPL; ++s) {
        const u64 j = j0 + (u64)(SEGRED_BPL * lane + s);
        o[s] = j <= s1 + 1u && j <= nseg ? offsets[j] : n;
    }
}

/* The share's segments from sa (sa's part from e0, s1's up to e1) by
 * batches (see the file's head). Returns the block's carry (s1's part) in
 * every thread. Block-uniform. The shared memory is the kernel's dynamic
 * array, named here so that its accesses stay shared-memory ones when
 * the function is out of line (segred_batches). */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_batches_body(const u64 *offsets,
                                                 const T *in, T *out, u64 n,
                                                 u64 nseg, u64 sa, u64 e0,
                                                 u64 s1, u64 e1, bool vec,
                                                 T id, T pad, int tid)
{
    extern __shared__ __align__(16) unsigned char segred_dyn[];
    segred_smem<T> &sm = *reinterpret_cast<segred_smem<T> *>(segred_dyn);
    const Op op{};
    const int lane = tid & 31;
    segred_bsmem<T, C> &bs = segred_bs<T, C>(sm);
    if (tid == 0)
        sm.wcarry = pad; /* s1's part, when it has no elements */
    constexpr u64 RS = (u64)SEGRED_BROUND * SEGRED_BSEGS;
    for (u64 rbase = sa; rbase <= s1; rbase += RS) {
        __syncthreads(); /* earlier users of wnext, dcount and sm.x are done */
        if (tid == 0) {
            sm.wnext = 0u;
            sm.dcount = 0u;
        }
        __syncthreads();
        const u64 rlast = s1 - rbase < RS - 1u ? s1 : rbase + RS - 1u;
        auto grab = [&]() -> u64 {
            u32 i = 0;
            if (lane == 0)
                i = atomicAdd(&sm.wnext, 1u);
            return rbase +
                   (u64)__shfl_sync(PARSUM_K_FULL_MASK, i, 0) * SEGRED_BSEGS;
        };
        u64 j0 = grab();
        while (j0 <= rlast) {
            const u64 jn = grab();
            /* The next batch's offsets on their way to L2 (no registers
             * held through the walk). */
            if (jn <= rlast) {
                const u64 pj = jn + (u64)(SEGRED_BPL * lane);
                prefetch_l2(offsets + (pj < nseg ? pj : nseg));
            }
            u64 o[SEGRED_BPL + 1];
            segred_bload(offsets, nseg, n, j0, s1, lane, o);
            segred_batch<T, C, Op>(sm, j0, o, in, out, n, nseg, e0, s1, e1,
                                   vec, id, pad, op, tid);
            j0 = jn;
        }
        __syncthreads();
        const u32 nd = sm.dcount;
        for (u32 d = 0; d < nd; ++d) {
            const T r = segred_bspan<T, C, Op>(in, bs.d[d].lo, bs.d[d].hi, n,
                                               vec, pad, tid);
            if (tid == 0)
                segred_put_total(sm, out, bs.d[d].j, s1, nseg,
                                 op(bs.d[d].part, r), false, r);
        }
    }
    __syncthreads();
    return sm.wcarry;
}

template <class T, class C, class Op>
__device__ __noinline__ T segred_batches_call(const u64 *offsets, const T *in,
                                              T *out, u64 n, u64 nseg, u64 sa,
                                              u64 e0, u64 s1, u64 e1,
                                              bool vec, T id, T pad, int tid)
{
    return segred_batches_body<T, C, Op>(offsets, in, out, n, nseg, sa, e0,
                                         s1, e1, vec, id, pad, tid);
}

/* segred_batches_body inline for values of up to 4 bytes, out of line for
 * 8-byte ones. Why (H200, 2^26, the kernel's 80 registers): inline, the
 * 8-byte kernels' other paths lost to ptxas's allocation (one segment of
 * f64 0.28 -> 0.40 ms) and the batches ran slower (power law 0.65 -> 0.77
 * ms); out of line, the 4-byte kernels' single segment lost 13 % and the
 * batches 12 %. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_batches(const u64 *offsets, const T *in,
                                            T *out, u64 n, u64 nseg, u64 sa,
                                            u64 e0, u64 s1, u64 e1, bool vec,
                                            T id, T pad, int tid)
{
    if constexpr (sizeof(T) == 8)
        return segred_batches_call<T, C, Op>(offsets, in, out, n, nseg, sa,
                                             e0, s1, e1, vec, id, pad, tid);
    else
        return segred_batches_body<T, C, Op>(offsets, in, out, n, nseg, sa,
                                             e0, s1, e1, vec, id, pad, tid);
}

#endif /* __CUDACC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SEGREDUCE_BATCHES_CUH */
