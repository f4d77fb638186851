/*
 * segreduce_stream.cuh - the segmented reduce's walk of short segments
 * among longer ones (a power-law mix of lengths) as one stream of
 * elements a warp.
 *
 * Where. A block whose share averages under 64 bytes a segment starts
 * one segment a thread (segreduce_warps.cuh) and hands the rest of its
 * share here at the first round with a long segment; a block whose share
 * averages 64 to 512 bytes a segment (short segments with a long one
 * among them) streams its whole share. Before, the first went to batches
 * of 128 segments a warp (segreduce_batches.cuh, still there under
 * PARSUM_CUDA_SEGRED_STREAM=0) and the second to the tile walk, whose
 * staging, window searches and block scans per tile ran short segments
 * at about a fifth of the read bound: in a power-law mix those blocks
 * finished last, and 8-byte values ran at 30 % of the read bound.
 *
 * How. The share's path (elements, and W per segment end, as the block
 * shares are cut) is split into one contiguous piece a warp, and the warp
 * walks its elements in chunks of 32 E from start to end: the heads of
 * each chunk come from the next offsets in turn (a cursor, never a
 * search), a long segment is only a run of chunks without a head, and no
 * barrier stands between chunks.
 *
 * A chunk [c, c + 32 E): the warp loads the offsets of the next segments
 * 32 at a time (KB batches in flight together), and for each segment j
 * with elements whose first one b lies in the chunk sets bit b - c of the
 * warp's head mask and, at position b - c, the index of the segment that
 * head closes (the last segment with elements before j; relative to the
 * warp's first segment). Empty segments get the identity where the
 * cursor passes them. A chunk inside the piece first tries a lean cursor
 * that only sets the bits: if the mask then holds as many heads as the
 * cursor took offsets, none was empty and the full cursor would have
 * found the same, else the full cursor runs from the same point (the
 * full cursor had taken 40 % of the stream's instructions; the lean one
 * takes about half as many).
 * Lane l folds the chunk's elements [c + l E, c + (l + 1) E), restarting
 * at each head. Without an empty segment in the chunk the heads are
 * consecutive segments, so a lane numbers its closings from the heads
 * before it (a popcount scan over the lanes), stages what each head
 * closes in shared memory by number (predicated stores, no branch), and
 * the warp writes all of the chunk's totals out coalesced at its end;
 * with an empty segment a lane reads each head's entry and writes at
 * once. A segmented warp scan gives each
 * lane the part of the segment open at its start, which completes the
 * segment its first head closes. Elements outside the warp's piece are
 * pad (folded like the others). The walk counts segments from the
 * warp's first in 32-bit registers. While a chunk is folded, the next
 * chunk's elements are already loading and its offsets' lines are asked
 * of L2.
 *
 * The warp's first segment (open at its start) and its last (open at
 * its end) are left to the block: warp w leaves (the part of its first
 * segment, whether that segment ended in it, the part of its last), and
 * one thread chains the warps in order, writes the first segments' totals
 * and returns the share's carry, s1's part.
 *
 * Order within a segment: lane runs in element order, combined by the
 * warp scan's fixed tree, chunks left to right, then warps in order;
 * every cut depends on the offsets, n and the grid alone, so results are
 * bit-identical run to run. The scan regroups (commutative operators, as
 * every fast path of the segmented reduce).
 */
#ifndef PARSUM_SEGREDUCE_STREAM_CUH
#define PARSUM_SEGREDUCE_STREAM_CUH

#include "segreduce_warps.cuh"

namespace parsum_k {

#if defined(__CUDACC__)

/* Batches of 32 offsets the heads' cursor loads together (a round; more
 * rounds when a chunk has more heads): 3 for values of up to 4 bytes, 2
 * for 8-byte ones (about 90 and 45 heads a chunk at the power law's mean
 * of 5.5 elements). H200, power law, with the lean cursor: 4-byte values
 * 3 against 4 batches a round up to 4 points of the read bound better or
 * the same. Macros for measurements. */
#ifndef PARSUM_K_SEGRED_SKB4
#define PARSUM_K_SEGRED_SKB4 3
#endif
#ifndef PARSUM_K_SEGRED_SKB8
#define PARSUM_K_SEGRED_SKB8 2
#endif

template <class T, class C>
struct segred_scfg {
    /* 16 elements a lane (8 for 8-byte values): one head-mask word per
     * two lanes (one per four), as many 16-byte loads as that takes. */
    static constexpr u32 E = C::ES == 8 ? 8u : 16u;
    static constexpr int VPL = (int)(E / C::V);
    static constexpr u32 CH = 32u * E; /* elements a chunk */
    static constexpr u32 HW = CH / 32u; /* head-mask words */
    static constexpr int KB =
        C::ES == 8 ? PARSUM_K_SEGRED_SKB8 : PARSUM_K_SEGRED_SKB4;
};

/* Whether a block streams its share [(s0, e0), (s1, e1)] from the start:
 * short segments on average (under SEGRED_WAVG_BYTES, where one segment
 * a warp would idle lanes) that one segment a thread does not take
 * (segred_lanes_take), i.e. a long segment among short ones. */
template <class C>
__device__ __forceinline__ bool segred_stream_take(u64 s0, u64 e0, u64 s1,
                                                   u64 e1)
{
    return s1 > s0 && e1 >= e0 && e1 - e0 < (1ull << 31) &&
           s1 - s0 < (1ull << 31) &&
           (e1 - e0) * C::ES < (s1 - s0 + 1) * SEGRED_WAVG_BYTES;
}

/* The stream's shared memory, laid over sm.x (unused on this path). */
template <class T, class C>
struct segred_ssmem {
    /* A chunk's heads: the segment each closes (read when the chunk has
     * an empty segment), or the totals staged by its closing's number
     * (without one). */
    union {
        u32 cpos[segred_scfg<T, C>::CH];
        T res[segred_scfg<T, C>::CH];
    } u[C::NWARP];
    u32 hm[C::NWARP][segred_scfg<T, C>::HW];
    u64 cs[C::NWARP + 1], ce[C::NWARP + 1]; /* the warps' cuts */
    T hp[C::NWARP], tp[C::NWARP]; /* first segment's part, last's */
    u32 emp[C::NWARP];            /* the first segment is empty */
};

template <class T, class C>
__device__ __forceinline__ segred_ssmem<T, C> &segred_ss(segred_smem<T> &sm)
{
    static_assert(sizeof(segred_ssmem<T, C>) <= sizeof(sm.x),
                  "the stream's shared memory fits in sm.x");
    return *reinterpret_cast<segred_ssmem<T, C> *>(sm.x);
}

/* The cut at path point k of the share [(sa, ea), (s1, e1)] (Q(sa) = ea
 * + W sa, Q(s) = offsets[s] + W s after it), searched by one warp, 32
 * probes a step. */
template <class C>
__device__ __forceinline__ void segred_scut(const u64 *offsets, u64 n,
                                            u64 sa, u64 ea, u64 s1, u64 e1,
                                            u64 k, int lane, u64 &s, u64 &e)
{
    u64 lo = sa, hi = s1;
    while (lo < hi) {
        const u64 step = (hi - lo + 32) / 32;
        const u64 p = lo + (u64)lane * step;
        bool ok = p == lo;
        if (p > lo && p <= hi) {
            u64 o = offsets[p];
            o = o < n ? o : n;
            ok = o + C::W * p <= k;
        }
        const u32 b = __ballot_sync(PARSUM_K_FULL_MASK, ok);
        lo += (u64)(31 - __clz((int)b)) * step;
        hi = lo + step - 1 < hi ? lo + step - 1 : hi;
    }
    u64 st = ea;
    if (lo > sa) {
        st = offsets[lo];
        st = st < n ? st : n;
    }
    u64 en = e1;
    if (lo < s1) {
        en = offsets[lo + 1];
        en = en < n ? en : n;
    }
    const u64 q = st + C::W * lo;
    u64 x = q <= k ? st + (k - q) : st;
    x = x < en ? x : en;
    x = x > ea ? x : ea;
    s = lo;
    e = x < e1 ? x : e1;
}

/* The lane's vectors of chunk c (zero outside the piece). */
template <class T, class C>
__device__ __forceinline__ void segred_sload(
    vec16 (&q)[segred_scfg<T, C>::VPL], const T *in, u64 n, u64 rb, u32 rlo,
    u32 rhi, u32 c, bool vec, const T &pad, int lane)
{
    typedef segred_scfg<T, C> S;
    const u32 cl = c + (u32)lane * S::E;
    if (vec && c + S::CH <= rhi) {
        /* A chunk inside the piece (rlo < V: the vectors straddling it
         * are masked later): plain 16-byte loads. */
#pragma unroll
        for (int v = 0; v < S::VPL; ++v) {
            const uint4 r = __ldg(reinterpret_cast<const uint4 *>(
                in + rb + cl + (u32)v * C::V));
            q[v] = vec16{r.x, r.y, r.z, r.w};
        }
        return;
    }
#pragma unroll
    for (int v = 0; v < S::VPL; ++v) {
        const u32 base = cl + (u32)v * C::V;
        q[v] = vec16{0u, 0u, 0u, 0u};
        if (base < rhi && base + C::V > rlo)
            q[v] = segred_load<T, C>(in, rb + base, n, vec, pad);
    }
}

/* Offset o as a position of the piece relative to rb, clamped into
 * [rlo, rhi]: o - rb in 32 bits when its high word is zero, else rlo (o
 * below rb) or rhi (o at least 2^32 past it). */
__device__ __forceinline__ u32 segred_spos(u64 o, u64 rb, u32 rlo, u32 rhi)
{
    const u64 d = o - rb;
    const u32 hi = (u32)(d >> 32), lo = (u32)d;
    const u32 mid = lo < rlo ? rlo : lo > rhi ? rhi : lo;
    return hi == 0u ? mid : (hi >> 31) != 0u ? rlo : rhi;
}

/* The heads of chunk [c, c + CH) of the warp's piece [rlo, rhi)
 * (positions relative to rb; segments relative to the piece's first,
 * ofs = offsets + sw, sxr its last): the mask hm and the closed segments
 * cp of the segments from the cursor j whose first element lies in the
 * chunk; the empty ones among them get the identity. Advances j past
 * them and lnz (the last segment with a head) to the last of them.
 * Returns whether one was empty (warp-uniform). Relative indices keep
 * the walk in 32-bit registers (a piece has under 2^31 segments). */
template <class T, class C>
__device__ __forceinline__ bool segred_sheads(
    segred_ssmem<T, C> &ss, const u64 *ofs, T *outw, u32 nsr, u64 rb,
    u32 rlo, u32 rhi, u32 sxr, u32 c, const T &id, int lane, int warp,
    u32 &j, u32 &lnz)
{
    typedef segred_scfg<T, C> S;
    u32 *hm = ss.hm[warp];
    u32 *cp = ss.u[warp].cpos;
    const u32 cend = c + S::CH;
    const u32 below = (1u << lane) - 1u;
    __syncwarp(); /* the last chunk's heads and totals are read */
    if ((u32)lane < S::HW)
        hm[lane] = 0u;
    __syncwarp();
    bool emp = false; /* the chunk passed an empty segment */
    for (bool more = true; more;) {
        /* The starts of segments j + 32 k + lane, k < KB, and of j + 32
         * KB (the next segment's start comes from the lane above);
         * segments past sxr start at rhi. */
        u32 b[S::KB];
#pragma unroll
        for (int k = 0; k < S::KB; ++k) {
            const u32 jj = j + (u32)(32 * k + lane);
            b[k] = jj <= sxr ? segred_spos(ofs[jj], rb, rlo, rhi) : rhi;
        }
        const u32 jl = j + (u32)(32 * S::KB);
        const u32 bl = jl <= sxr ? segred_spos(ofs[jl], rb, rlo, rhi) : rhi;
#pragma unroll
        for (int k = 0; k < S::KB; ++k) {
            if (!more)
                break;
            const u32 jb = j + (u32)(32 * k), jj = jb + (u32)lane;
            const u32 bn = __shfl_sync(PARSUM_K_FULL_MASK,
                                       k + 1 < S::KB ? b[k + 1 < S::KB ? k + 1 : k]
                                                     : bl,
                                       0);
            u32 e = __shfl_down_sync(PARSUM_K_FULL_MASK, b[k], 1);
            e = lane == 31 ? bn : e;
            const bool take = jj <= sxr && b[k] < cend;
            const u32 tm = __ballot_sync(PARSUM_K_FULL_MASK, take);
            /* the leading lanes that take (all of them but for invalid
             * offsets) */
            const u32 cnt = (u32)__popc(tm & ~(tm + 1u));
            const bool mine = (u32)lane < cnt;
            const bool head = mine && b[k] < e && b[k] >= c;
            const u32 hmk = __ballot_sync(PARSUM_K_FULL_MASK, head);
            if (head) {
                const u32 hbl = hmk & below; /* heads of the lanes before */
                const u32 p = b[k] - c;
                cp[p] = hbl != 0u ? jb + (u32)(31 - __clz((int)hbl)) : lnz;
                atomicOr(&hm[p / 32u], 1u << (p % 32u));
            }
            const bool em = mine && !head && jj < sxr;
            if (em && jj < nsr)
                outw[jj] = id;
            emp = emp || __any_sync(PARSUM_K_FULL_MASK, em);
            if (hmk != 0u)
                lnz = jb + (u32)(31 - __clz((int)hmk));
            if (cnt < 32u) {
                j = jb + cnt;
                more = false;
            }
        }
        if (more)
            j += (u32)(32 * S::KB);
    }
    __syncwarp();
    return emp;
}

/* The heads of an interior chunk [c, c + CH) (c + CH <= rhi) as
 * segred_sheads finds them when no segment among them is empty, at about
 * half of its instructions: each offset the cursor takes sets its bit
 * and nothing else, neither the segment it closes nor the empty-segment
 * tests. Takes the same offsets as segred_sheads (those that start before
 * cend, clamped as segred_spos clamps) and advances j past them, but sets
 * a bit only for an offset at or after the chunk's first element of the
 * piece, max(c, rlo). Every taken offset set a bit of its own exactly when
 * the mask holds j - j0 bits (j0: j before): the heads were then j0, j0 +
 * 1, ... in order and segred_sheads would have found the same mask with
 * no empty segment, so the caller compares the counts and otherwise runs
 * segred_sheads from j0 instead (an empty segment, or offsets not as the
 * API states them). */
template <class T, class C>
__device__ __forceinline__ void segred_sheads_lean(segred_ssmem<T, C> &ss,
                                                   const u64 *ofs, u64 rb,
                                                   u32 rlo, u32 sxr, u32 c,
                                                   int lane, int warp, u32 &j)
{
    typedef segred_scfg<T, C> S;
    u32 *hm = ss.hm[warp];
    const u32 lo = c > rlo ? c : rlo;
    const u64 base = rb + lo;
    const u32 lim = c + S::CH - lo; /* taken: o - base < lim */
    const u32 off = lo - c;         /* bit of o: o - base + off */
    __syncwarp(); /* the last chunk's heads and totals are read */
    if ((u32)lane < S::HW)
        hm[lane] = 0u;
    __syncwarp();
    for (bool more = true; more;) {
        u64 d[S::KB];
#pragma unroll
        for (int k = 0; k < S::KB; ++k) {
            const u32 jj = j + (u32)(32 * k + lane);
            d[k] = jj <= sxr ? ofs[jj] - base : (u64)lim;
        }
#pragma unroll
        for (int k = 0; k < S::KB; ++k) {
            const bool below = (long long)d[k] < 0; /* taken, no head */
            const bool take = below || d[k] < (u64)lim;
            const u32 tm = __ballot_sync(PARSUM_K_FULL_MASK, take);
            const u32 cnt = (u32)__popc(tm & ~(tm + 1u));
            if ((u32)lane < cnt && !below) {
                const u32 p = (u32)d[k] + off;
                atomicOr(&hm[p / 32u], 1u << (p % 32u));
            }
            if (cnt < 32u) {
                j += (u32)(32 * k) + cnt;
                more = false;
                break;
            }
        }
        if (more)
            j += (u32)(32 * S::KB);
    }
    __syncwarp();
}

/* The lane's fold of its E elements q with head bits hb: acc = the part
 * of its last segment, hd = whether it has a head. LOOK false (no empty
 * segment in the chunk): the lane's heads close its closings k0, k0 + 1,
 * ... in turn, and each head stages what it closes in res[k0], res[k0 +
 * 1], ... without a branch (the first one the part of the segment open
 * at the lane's start, which the caller completes; tracking that part in
 * a register of its own instead cost two more instructions an element).
 * LOOK true: hp = the part of the segment open at the lane's start, the
 * segments that begin and end in the lane are written at once to
 * outw[cp[position]], and cf is set to the segment its first head
 * closes. */
template <class T, class C, class Op, bool LOOK>
__device__ __forceinline__ void segred_sfold(
    const vec16 (&q)[segred_scfg<T, C>::VPL], u32 hb, const u32 *cp,
    T *outw, T *res, u32 k0, const T &pad, const Op &op, int lane, T &acc,
    T &hp, bool &hd, u32 &cf)
{
    typedef segred_scfg<T, C> S;
    acc = pad;
    hp = pad;
    hd = false;
    u32 k = k0;
#pragma unroll
    for (int v = 0; v < S::VPL; ++v) {
        T t[C::V];
        memcpy(t, &q[v], sizeof t);
#pragma unroll
        for (u32 x = 0; x < C::V; ++x) {
            const u32 i = (u32)v * C::V + x;
            const bool h = ((hb >> i) & 1u) != 0u;
            if constexpr (LOOK) {
                if (h) {
                    const u32 ci = cp[(u32)lane * S::E + i];
                    if (hd) {
                        outw[ci] = acc;
                    } else {
                        hp = acc;
                        cf = ci;
                    }
                    hd = true;
                    acc = t[x];
                } else {
                    acc = op(acc, t[x]);
                }
            } else {
                if (h)
                    res[k] = acc;
                k += h ? 1u : 0u;
                const T f = op(acc, t[x]);
                acc = h ? t[x] : f;
            }
        }
    }
    if constexpr (!LOOK)
        hd = hb != 0u;
}

/* One chunk [c, c + CH) of the warp's piece (see segred_sheads): q its
 * lane's vectors, cin the part of the segment open at c, seen whether
 * the piece has had a head. */
template <class T, class C, class Op>
__device__ __forceinline__ void segred_schunk(
    vec16 (&q)[segred_scfg<T, C>::VPL], segred_ssmem<T, C> &ss,
    const u64 *ofs, T *outw, u32 nsr, const T *in, u64 n, bool vec, u64 rb,
    u32 rlo, u32 rhi, u32 sxr, u32 c, const T &id, const T &pad,
    const Op &op, int lane, int warp, u32 &j, u32 &lnz, T &cin, bool &seen)
{
    typedef segred_scfg<T, C> S;
    const u32 cl = c + (u32)lane * S::E;
    const u32 j0 = j, lnz0 = lnz;
    bool emp = false;
    /* Interior chunks try the lean cursor first (segred_sheads_lean says
     * when its mask stands). */
    const bool lean = c + S::CH <= rhi;
    if (lean)
        segred_sheads_lean<T, C>(ss, ofs, rb, rlo, sxr, c, lane, warp, j);
    else
        emp = segred_sheads<T, C>(ss, ofs, outw, nsr, rb, rlo, rhi, sxr, c,
                                  id, lane, warp, j, lnz);
    /* The next chunk's heads start at j: the lines of its offsets (two
     * chunks' worth at the power law's mean) are asked of L2 now, so that
     * they wait on L2 rather than on DRAM. (Copied into shared memory by
     * cp.async instead, or with the chunk's elements too: no faster, or
     * 1.3-1.5x slower.) */
    if (lane < 16 && j + 16u * (u32)lane <= sxr)
        prefetch_l2(ofs + j + 16u * (u32)lane);
    const u32 bit = (u32)lane * S::E;
    const u32 hmask = S::E == 32u ? ~0u : (1u << S::E) - 1u;
    u32 hb = (ss.hm[warp][bit / 32u] >> (bit % 32u)) & hmask;
    u32 pc = (u32)__popc(hb);
    u32 inc = warp_incl_sum(pc);
    if (lean) {
        if (__shfl_sync(PARSUM_K_FULL_MASK, inc, 31) == j - j0) {
            if (j != j0)
                lnz = j - 1u;
        } else {
            j = j0;
            emp = segred_sheads<T, C>(ss, ofs, outw, nsr, rb, rlo, rhi, sxr,
                                      c, id, lane, warp, j, lnz);
            hb = (ss.hm[warp][bit / 32u] >> (bit % 32u)) & hmask;
            pc = (u32)__popc(hb);
            inc = warp_incl_sum(pc);
        }
    }
    /* Elements outside the piece fold as pad. */
    if (c < rlo || c + S::CH > rhi) {
#pragma unroll
        for (int v = 0; v < S::VPL; ++v) {
            T t[C::V];
            memcpy(t, &q[v], sizeof t);
#pragma unroll
            for (u32 x = 0; x < C::V; ++x) {
                const u32 i = cl + (u32)v * C::V + x;
                if (i < rlo || i >= rhi)
                    t[x] = pad;
            }
            memcpy(&q[v], t, sizeof t);
        }
    }
    T acc, hp;
    bool hd;
    u32 cf = 0; /* the segment the lane's first head closes */
    T *res = ss.u[warp].res;
    /* No empty segment: the chunk's heads are segments j0, j0 + 1, ...,
     * so the r-th closing is segment closed(r), and the lane counts its
     * closings from the heads before it. */
    const auto closed = [&](u32 r) { return r == 0u ? lnz0 : j0 + r - 1u; };
    const u32 ex0 = inc - pc;
    if (!emp) {
        cf = closed(ex0);
        segred_sfold<T, C, Op, false>(q, hb, nullptr, outw, res, ex0, pad,
                                      op, lane, acc, hp, hd, cf);
    } else {
        segred_sfold<T, C, Op, true>(q, hb, ss.u[warp].cpos, outw, nullptr,
                                     0u, pad, op, lane, acc, hp, hd, cf);
    }
    /* The next chunk's elements, in q as soon as it is free: they travel
     * during the scan, the totals' writes and the next chunk's heads.
     * (Loaded a chunk ahead instead, held in registers through this
     * chunk's walk, they made ptxas spill 180-330 bytes and power law
     * ran 1.4-2.5x slower; copied into shared memory by cp.async a chunk
     * ahead, 1.3-1.5x slower.) */
    if (c + S::CH < rhi)
        segred_sload<T, C>(q, in, n, rb, rlo, rhi, c + S::CH, vec, pad, lane);
    /* Segmented scan of (acc, hd) over the lanes, from cin. */
    T sv = acc;
    int sf = hd ? 1 : 0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T ov = shfl_up(sv, d);
        const int of = __shfl_up_sync(PARSUM_K_FULL_MASK, sf, d);
        if (lane >= d) {
            if (sf == 0)
                sv = op(ov, sv);
            sf |= of;
        }
    }
    const T ev = shfl_up(sv, 1);
    const int ef = __shfl_up_sync(PARSUM_K_FULL_MASK, sf, 1);
    const T lin = lane == 0 ? cin : ef != 0 ? ev : op(cin, ev);
    if (hd) {
        const T v = op(lin, emp ? hp : res[ex0]);
        if (cf == 0u)
            ss.hp[warp] = v; /* the piece's first head closes sw */
        else if (emp)
            outw[cf] = v;
        else
            res[ex0] = v;
    }
    if (!emp) {
        /* The staged totals, closing r to segment closed(r), coalesced. */
        const u32 nh = __shfl_sync(PARSUM_K_FULL_MASK, inc, 31);
        __syncwarp();
        for (u32 r = (u32)lane; r < nh; r += 32u) {
            const u32 sg = closed(r);
            if (sg != 0u)
                outw[sg] = res[r];
        }
    }
    const T tv = shfl_idx(sv, 31);
    const int tf = __shfl_sync(PARSUM_K_FULL_MASK, sf, 31);
    cin = tf != 0 ? tv : op(cin, tv);
    seen = seen || tf != 0;
}

/* The warps' cuts of the share [(sa, e0), (s1, e1)] into ss.cs / ss.ce
 * (warp w's piece runs from cut w to cut w + 1), by equal path. */
template <class T, class C>
__device__ __forceinline__ void segred_scuts(segred_ssmem<T, C> &ss,
                                             const u64 *offsets, u64 n,
                                             u64 sa, u64 e0, u64 s1, u64 e1,
                                             int lane, int warp)
{
    u64 ea = offsets[sa];
    ea = ea < n ? ea : n;
    ea = ea > e0 ? ea : e0;
    ea = ea < e1 ? ea : e1;
    const u64 ka = ea + C::W * sa;
    u64 kb = e1 + C::W * s1;
    kb = kb > ka ? kb : ka;
    if (warp == 0) {
        if (lane == 0) {
            ss.cs[0] = sa;
            ss.ce[0] = ea;
            ss.cs[C::NWARP] = s1;
            ss.ce[C::NWARP] = e1;
        }
    } else {
        u64 s, e;
        segred_scut<C>(offsets, n, sa, ea, s1, e1,
                       ka + (kb - ka) * (u64)warp / C::NWARP, lane, s, e);
        if (lane == 0) {
            ss.cs[warp] = s;
            ss.ce[warp] = e;
        }
    }
}

/* The share's carry (s1's part): the warps' first and last segments
 * chained in order, the first ones' totals written (thread 0). */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_schain(segred_smem<T> &sm,
                                           const segred_ssmem<T, C> &ss,
                                           T *out, u64 s1, u64 nseg,
                                           const T &id, const T &pad,
                                           const Op &op)
{
    T cv = pad;
    for (int w = 0; w < C::NWARP; ++w) {
        const u64 s = ss.cs[w];
        if (ss.cs[w + 1] > s) {
            segred_put_total(sm, out, s, s1, nseg, op(cv, ss.hp[w]),
                             ss.emp[w] != 0u, id);
            cv = ss.tp[w];
        } else {
            cv = op(cv, ss.hp[w]);
        }
    }
    return cv;
}

/* The share's segments from sa (sa's part from e0, s1's up to e1) as one
 * stream a warp (see the file's head). Returns the block's carry (s1's
 * part) in every thread. Block-uniform. Needs e1 - e0 < 2^31 and s1 - sa
 * < 2^31. */
template <class T, class C, class Op>
__device__ __forceinline__ T segred_stream_body(const u64 *offsets,
                                                const T *in, T *out, u64 n,
                                                u64 nseg, u64 sa, u64 e0,
                                                u64 s1, u64 e1, bool vec,
                                                T id, T pad, int tid)
{
    extern __shared__ __align__(16) unsigned char segred_dyn[];
    segred_smem<T> &sm = *reinterpret_cast<segred_smem<T> *>(segred_dyn);
    typedef segred_scfg<T, C> S;
    const Op op{};
    const int lane = tid & 31, warp = tid >> 5;
    segred_ssmem<T, C> &ss = segred_ss<T, C>(sm);
    __syncthreads(); /* earlier users of sm.x are done */
    segred_scuts<T, C>(ss, offsets, n, sa, e0, s1, e1, lane, warp);
    __syncthreads();
    const u64 sw = ss.cs[warp], ew = ss.ce[warp];
    u64 sx = ss.cs[warp + 1], ex = ss.ce[warp + 1];
    sx = sx > sw ? sx : sw; /* only invalid offsets reorder the cuts */
    ex = ex > ew ? ex : ew;
    const u64 rb = ew - ew % C::V;
    const u32 rlo = (u32)(ew - rb), rhi = (u32)(ex - rb);
    if (lane == 0) {
        ss.hp[warp] = pad;
        u32 em = 0u;
        if (sw < sx) {
            u64 o = offsets[sw], o1 = offsets[sw + 1];
            o = o < n ? o : n;
            o1 = o1 < n ? o1 : n;
            em = o == o1 ? 1u : 0u;
        }
        ss.emp[warp] = em;
    }
    __syncwarp();
    /* Segments relative to sw from here on. */
    const u64 *ofs = offsets + sw;
    T *outw = out + sw;
    const u32 sxr = (u32)(sx - sw);
    const u64 nr = nseg - sw; /* sw <= sx <= nseg */
    const u32 nsr = nr < (u64)~0u ? (u32)nr : ~0u;
    u32 j = 1u, lnz = 0u;
    T cin = pad;
    bool seen = false;
    vec16 q[S::VPL];
    segred_sload<T, C>(q, in, n, rb, rlo, rhi, 0u, vec, pad, lane);
    for (u32 c = 0; c < rhi; c += S::CH) {
        segred_schunk<T, C, Op>(q, ss, ofs, outw, nsr, in, n, vec, rb, rlo,
                                rhi, sxr, c, id, pad, op, lane, warp, j, lnz,
                                cin, seen);
    }
    /* Segments the cursor did not reach: empty ones at the piece's end. */
    for (u32 jj = j + (u32)lane; jj < sxr; jj += 32u)
        if (jj < nsr)
            outw[jj] = id;
    if (lane == 0) {
        T t = pad;
        if (!seen)
            ss.hp[warp] = cin;
        else if (lnz == sxr)
            t = cin;
        else if (lnz < nsr)
            outw[lnz] = cin;
        ss.tp[warp] = t;
    }
    __syncthreads();
    if (tid == 0)
        sm.wcarry = segred_schain<T, C, Op>(sm, ss, out, s1, nseg, id, pad, op);
    __syncthreads();
    return sm.wcarry;
}

/* Out of line: registers of its own (the kernel's other ways keep
 * theirs). */
template <class T, class C, class Op>
__device__ __noinline__ T segred_stream_call(const u64 *offsets, const T *in,
                                             T *out, u64 n, u64 nseg, u64 sa,
                                             u64 e0, u64 s1, u64 e1,
                                             bool vec, T id, T pad, int tid)
{
    return segred_stream_body<T, C, Op>(offsets, in, out, n, nseg, sa, e0,
                                        s1, e1, vec, id, pad, tid);
}

#endif /* __CUDACC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SEGREDUCE_STREAM_CUH */
