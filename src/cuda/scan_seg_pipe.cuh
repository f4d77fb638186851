/*
 * scan_seg_pipe.cuh - the segmented scan with packed head flags on the
 * pipelined scan (scan_pipe_kernel's two tiles per resident block, and its
 * tile size), for the built-in operators whose look-back is the classic
 * one or its left fold.
 *
 * scan_kernel scans (value, flag) pairs, so a tile holds a pair per
 * element and takes half the plain scan's rows; pipelined, those half
 * tiles doubled the look-backs and lost (NOTES.md section 8). Here the
 * flags never become pairs per element: a thread keeps its elements'
 * heads as one bit mask (R * V <= 32 bits), the warp scans of each row
 * find the segment's first lane from one ballot, so only the values move
 * through the shuffles, and the row prefixes keep their flags as bits. A
 * tile then needs the plain tile's registers and keeps its size. Pairs
 * appear only inside a tile: warp totals and the tile's aggregate, under
 * (v1, k1) (+) (v2, k2) = (k2 ? v2 : v1 (+) v2, k1 | k2).
 *
 * A tile that contains a head knows its inclusive prefix without looking
 * back: it is its aggregate (everything before the last head drops out),
 * so such a tile publishes it as inclusive at once, and a tile whose first
 * element is a head skips its look-back altogether. The bits published
 * are the ones the look-back would have published, so the left fold's
 * determinism (lookback.cuh) is kept.
 *
 * The look-back then needs no flags: a descriptor published as an
 * aggregate is always of a tile without a head (flag 0), and the fold of
 * a look-back starts at an inclusive one, whose flag no later step reads.
 * So under the pair operator every step it takes is the value operator
 * on the values, and descriptors may hold values alone, as the plain
 * scan's do; a tile with a head that does look back (its first element
 * is no head) then does not publish again (incl_known): its inclusive
 * prefix is its aggregate, published already. The left fold (LOOKBACK 3,
 * float sums and products) takes values alone: H200, f32, one segment
 * of n 74 -> 80 % of copy, its folds one shuffle and one add a tile
 * instead of seg_or_op's ballot, OR-reduction and select. The classic
 * look-back keeps pairs: with values alone i32 lost 2 points on one
 * segment (83 -> 81 %) and i64 gained nothing (NOTES section 8).
 */
#ifndef PARSUM_SCAN_SEG_PIPE_CUH
#define PARSUM_SCAN_SEG_PIPE_CUH

#include <type_traits>

#include "scan_kernels.cuh"

namespace parsum_k {

/* One tile of scan_seg_pipe_kernel in the registers of its block: the
 * elements (scan order as in scan_kernel), their heads (bit r * V + v for
 * y[r][v]), per row the segmented fold of what precedes this thread's
 * vector in its warp, ex[r] = (rp[r], its flag) (+) (le[r], its flag) of
 * seg_pipe_rows, with its flag in kb (bit r: ex[r] covers a head; ex[0]
 * of lane 0 covers nothing), and the tile number. One value per row, not
 * two, and the aggregate folded again from shared memory when it is
 * needed: two tiles fit 128 registers with fewer spills (as in
 * scan_pipe_kernel). */
template <class T, int R, int V>
struct seg_pipe_tile {
    T y[R][V];
    T ex[R];
    u32 head;
    u32 kb;
    u32 c;
};

/* (v, k) := (v, k) (+) (w, kw) under the pair operator. */
template <class T, class Op>
__device__ __forceinline__ void seg_fold(T &v, bool &k, const T &w, bool kw,
                                         const Op &op)
{
    v = kw ? w : op(v, w);
    k = k || kw;
}

/* The rows of a segmented pipelined tile (elements y, heads head as in
 * seg_pipe_tile): per row, the fold of this thread's vector from its last
 * head, then the warp's segmented scan of those over the lanes, each lane
 * combining only lanes at or after its segment's first (any[r]: the lanes
 * whose vector in row r has a head). Sets each row's lane-exclusive
 * prefix le (valid for lane > 0) and row prefix rp within the warp (valid
 * for r > 0), with their flags in kb (bit r: le[r] covers a head, bit
 * 16 + r: rp[r] does); returns the value of the warp's total, wk its
 * flag. */
template <class T, int R, int V, class Op>
__device__ __forceinline__ T seg_pipe_rows(const T (&y)[R][V], u32 head,
                                           T (&le)[R], T (&rp)[R], u32 &kb,
                                           const u32 (&any)[R], int lane,
                                           const T &pad, const Op &op,
                                           bool &wk)
{
    const u32 below = (1u << lane) - 1u; /* lanes before this one */
    T tv[R];
    int first[R]; /* the last lane <= this one whose vector has a head */
    u32 rk = 0u;  /* bit r: row r of the warp has a head */
    kb = 0u;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        T s = y[r][0];
#pragma unroll
        for (int v = 1; v < V; ++v)
            s = ((head >> (r * V + v)) & 1u) ? y[r][v] : op(s, y[r][v]);
        tv[r] = s;
        const u32 b = any[r];
        const u32 upto = b & (below | (1u << lane));
        first[r] = upto ? 31 - __clz((int)upto) : -1;
        if (b & below)
            kb |= 1u << r;
        if (b)
            rk |= 1u << r;
    }
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const T o = shfl_up(tv[r], d);
            if (lane - d >= first[r] && lane >= d)
                tv[r] = op(o, tv[r]);
        }
    }
    T rt[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        le[r] = shfl_up(tv[r], 1);  /* valid for lane > 0 */
        rt[r] = shfl_idx(tv[r], 31); /* row total */
    }
    rp[0] = pad;
    T wv = rt[0];
    wk = rk & 1u;
#pragma unroll
    for (int r = 1; r < R; ++r) {
        rp[r] = wv;
        if (wk)
            kb |= 1u << (16 + r);
        seg_fold(wv, wk, rt[r], ((rk >> r) & 1u) != 0u, op);
    }
    return wv;
}

/* The first pass of a tile's rows for one warp (seg_pipe_rows with the
 * tile's heads head and the rows' head lanes any), then each row's
 * lane-exclusive fold ex[r] = (rp[r], its flag) (+) (le[r], its flag)
 * with its flag in t.kb. Returns the warp total's value, wk its flag.
 * A warp without a head calls it with head and any constant zero
 * (PARSUM_K_SEG_PLAIN_WARPS): every head test and select then folds
 * away, leaving the plain scan's instructions. */
template <class T, int R, int V, class Op>
__device__ __forceinline__ T seg_pipe_ex(seg_pipe_tile<T, R, V> &t, u32 head,
                                         const u32 (&any)[R], int lane,
                                         const T &pad, const Op &op, bool &wk)
{
    T le[R], rp[R];
    u32 kb;
    const T wv =
        seg_pipe_rows<T, R, V>(t.y, head, le, rp, kb, any, lane, pad, op, wk);
    t.kb = 0u;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const bool kl = lane > 0 && ((kb >> r) & 1u);
        const bool kr = r > 0 && ((kb >> (16 + r)) & 1u);
        if (r == 0)
            t.ex[r] = lane > 0 ? le[0] : pad;
        else if (lane == 0)
            t.ex[r] = rp[r];
        else
            t.ex[r] = kl ? le[r] : op(rp[r], le[r]);
        if (kl || kr)
            t.kb |= 1u << r;
    }
    return wv;
}

/* The second pass of a segmented pipelined tile: each element's output
 * (the inclusive fold, or the exclusive one if excl) from the prefix p of
 * the warp's first element (has: p covers at least one element), the row
 * prefixes ex with their flags kb, and the heads (seg_pipe_tile). Inlined
 * with a constant excl, it is a copy without the per-element select. */
template <int R, int V, class T, class Op>
__device__ __forceinline__ void seg_pipe_out(T (&y)[R][V], const T (&ex)[R],
                                             u32 head, u32 kb, const T &p,
                                             bool has, int lane, const T &id,
                                             const Op &op, bool excl)
{
#pragma unroll
    for (int r = 0; r < R; ++r) {
        T acc = p;
        bool hr = has;
        if (r > 0 || lane > 0) {
            const bool k = (kb >> r) & 1u;
            acc = (hr && !k) ? op(acc, ex[r]) : ex[r];
            hr = true;
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const T e = y[r][v];
            const bool h = (head >> (r * V + v)) & 1u;
            if (excl)
                y[r][v] = (hr && !h) ? acc : id;
            acc = (hr && !h) ? op(acc, e) : e;
            hr = true;
            if (!excl)
                y[r][v] = acc;
        }
    }
}

/* seg_pipe_out as scan_seg_pipe_kernel calls it: with a constant excl
 * (two copies, one a call takes, instead of a select of the inclusive or
 * the exclusive value per element: 2.5-4 % more of the copy bound for
 * i32 and i64 on an H200), except for the left fold's kernels (float
 * sums and products, LOOKBACK 3), which keep the one copy: there the two
 * lost 5-7 % (NOTES section 8). Inlined with head and kb constant zero
 * (a warp without a head), the plain scan's instructions remain. */
template <int LOOKBACK, int R, int V, class T, class Op>
__device__ __forceinline__ void seg_pipe_out_call(T (&y)[R][V],
                                                  const T (&ex)[R], u32 head,
                                                  u32 kb, const T &p, bool has,
                                                  int lane, const T &id,
                                                  const Op &op, bool excl)
{
    if (LOOKBACK == 3)
        seg_pipe_out(y, ex, head, kb, p, has, lane, id, op, excl);
    else if (excl)
        seg_pipe_out(y, ex, head, kb, p, has, lane, id, op, true);
    else
        seg_pipe_out(y, ex, head, kb, p, has, lane, id, op, false);
}

/* The end of a segmented pipelined tile's first half (scan_seg_pipe_kernel,
 * rbk_pipe_kernel): lane 0 of each warp stores the warp's total w, thread
 * 0 whether the tile starts with a head; after the barrier warp 0 folds
 * the warp totals in order and returns the tile's aggregate (other warps
 * get their own w back). */
template <int NWARP, class S, class Op>
__device__ __forceinline__ S seg_pipe_aggregate(S *s_wtot, u32 *s_lead,
                                                int buf, int warp, int lane,
                                                const S &w, u32 head,
                                                const Op &op)
{
    if (lane == 0)
        s_wtot[buf * NWARP + warp] = w;
    if (threadIdx.x == 0)
        s_lead[buf] = head & 1u;
    __syncthreads();
    S g = w;
    if (warp == 0) {
        g = s_wtot[buf * NWARP];
        for (int i = 1; i < NWARP; ++i)
            g = op(g, s_wtot[buf * NWARP + i]);
    }
    return g;
}

/* Rows and resident blocks of scan_seg_pipe_kernel: the plain pipe's for
 * values of up to 4 bytes; for 8-byte values PARSUM_K_SEG_PIPE_ROWS8 rows
 * at PARSUM_K_SEG_PIPE_BLOCKS8 blocks a multiprocessor. Why: with the
 * plain pipe's 6 rows, two tiles a thread of 8-byte values took 128
 * registers, two blocks a multiprocessor, and the look-back's latency set
 * the pace (NOTES section 8); 4 rows fit three blocks in 80 registers
 * without a spill, more tiles in flight: 2-7 % more of the copy bound on
 * an H200. The host sizes tiles and state from seg_pipe_tile_elems
 * (parsum__cuda_kernels::seg_pipe_tile). */
#ifndef PARSUM_K_SEG_PIPE_ROWS8
#define PARSUM_K_SEG_PIPE_ROWS8 4
#endif
#ifndef PARSUM_K_SEG_PIPE_BLOCKS8
#define PARSUM_K_SEG_PIPE_BLOCKS8 3
#endif
__host__ __device__ constexpr int seg_pipe_rows_for(u64 size)
{
    return size == 8 ? PARSUM_K_SEG_PIPE_ROWS8 : pipe_rows(size);
}

/* Whether a warp of scan_seg_pipe_kernel whose part of the tile holds no
 * head takes the plain scan's instructions in both passes (a warp-uniform
 * branch; 0 for measurements). */
#ifndef PARSUM_K_SEG_PLAIN_WARPS
#define PARSUM_K_SEG_PLAIN_WARPS 1
#endif

/* Whether scan_seg_pipe_kernel tries each tile's look-back early, while
 * the next tile loads (early_prefix; 0 for measurements). */
#ifndef PARSUM_K_SEG_EARLY
#define PARSUM_K_SEG_EARLY 1
#endif

__host__ __device__ constexpr int seg_pipe_min_blocks(u64 size)
{
    return size == 8 ? PARSUM_K_SEG_PIPE_BLOCKS8 : 2;
}

__host__ __device__ constexpr u64 seg_pipe_tile_elems(u64 size)
{
    return rows_tile_elems(size, seg_pipe_rows_for(size));
}

/*
 * scan_seg_pipe_kernel: scan_kernel's segmented scan (MODE 1) with the
 * blocks and tile loop of scan_pipe_kernel (see there for why tile B's
 * aggregate is published before tile A's look-back). LOOKBACK: 2 classic,
 * 3 the left fold (deterministic for rounding operators).
 */
template <class T, class Op, bool REV, int LOOKBACK>
__global__ void __launch_bounds__(policy_for(sizeof(T)).block,
                                  seg_pipe_min_blocks(sizeof(T)))
    scan_seg_pipe_kernel(scan_args a, T id, T pad)
{
    constexpr policy P = policy_for(sizeof(T));
    constexpr int BLOCK = P.block;
    constexpr int NWARP = BLOCK / 32;
    static_assert(LOOKBACK == 2 || LOOKBACK == 3,
                  "pipelined: classic look-backs only");
    constexpr int R = seg_pipe_rows_for(sizeof(T));
    constexpr int V = vec_elems(sizeof(T));
    static_assert(R * V <= 32, "heads: one mask word per tile");
    static_assert(R <= 16, "flags of le and rp: one word");
    constexpr u32 WARP_ITEMS = (u32)R * 32u * V;
    constexpr u32 TILE = (u32)NWARP * WARP_ITEMS;
    static_assert(TILE == seg_pipe_tile_elems(sizeof(T)), "tile");
    typedef seg_pipe_tile<T, R, V> tile_t;
    typedef seg_pair<T> S;
    /* Descriptors: values alone for the left fold, else pairs (above). */
    constexpr bool VALUES = LOOKBACK == 3;
    typedef typename std::conditional<VALUES, T, S>::type D;

    const Op op{};
    const seg_or_op<T, Op> sop{};
    __shared__ u32 s_tile;
    __shared__ u32 s_lead[2]; /* per buffer: the tile starts with a head */
    __shared__ u32 s_try[2];  /* per buffer: its tile, for early_prefix */
    __shared__ u32 s_xc;      /* the tile whose X(c) early_prefix found */
    __shared__ alignas(16) unsigned char s_raw[(2 * NWARP + 1) * sizeof(S)];
    S *s_wtot = reinterpret_cast<S *>(s_raw); /* [2][NWARP] */
    D *s_x = reinterpret_cast<D *>(s_wtot + 2 * NWARP); /* X(c) */

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const bool excl = (a.options & OPT_EXCLUSIVE) != 0;
    const bool vec = vec_capable(sizeof(T)) && (a.options & OPT_VEC);

    const tile_layout<R, V, REV, NWARP, true> lay{warp, lane};
    auto tile_base = [&](u32 c) { return pipe_tile_base<REV, TILE>(a, c); };

    /* Warp 0, while a tile's loads are in flight: the tile loaded before
     * it (pending, in buffer pb, finished next) takes its X(c) now if the
     * tile before it, c - 1, has published an inclusive prefix: X(c) is
     * then that prefix (the value every look-back here returns when c - 1
     * is inclusive, the left fold's bits included). So short segments,
     * whose tiles nearly all follow a tile with a head, take the
     * look-back's round trip off the path from one tile's loads to the
     * next's (NOTES section 8, "The look-back while the next tile
     * loads"). Tried only when the pending tile holds a head but does not
     * start with one (s_try): such a tile has published its inclusive
     * prefix already, so nothing else waits for its look-back, and
     * inside long segments c - 1 is seldom inclusive in time. */
    auto early_prefix = [&](int pb) {
        const u32 pc = s_try[pb]; /* ~0u: not to be tried */
        bool ok = false;
        if (pc != ~0u) {
            D v;
            if (peek(a.agg, a.agg_status, (u64)pc - 1u, v, a.tag) ==
                GROUP_INCL) {
                ok = true;
                if (lane == 0)
                    *s_x = v;
            }
        }
        if (lane == 0)
            s_xc = ok ? pc : ~0u;
    };

    /* Loads tile t.c and its heads, scans its rows; the warp totals go to
     * s_wtot[buf]. Ends with a barrier, after which warp 0 has the
     * aggregate and has published it. */
    auto load_local = [&](tile_t &t, int buf) {
        const u64 base = tile_base(t.c);
        const T *in = static_cast<const T *>(a.in) + base;
        tile_load<T, R, V, REV>(t.y, in, lay, base + TILE <= a.n, a.n - base,
                                vec, pad);
        u32 hr[R], tr[R];
        seg_rows<R, V, REV>(a, base + lay.offset(0),
                            base == 0 || !(base + TILE < a.n), hr, tr);
        if (PARSUM_K_SEG_EARLY && warp == 0)
            early_prefix(buf ^ 1);
        t.head = 0u;
#pragma unroll
        for (int r = 0; r < R; ++r)
            t.head |= hr[r] << (r * V);
        u32 any[R]; /* per row: the lanes whose vector has a head */
        u32 anyw = 0u;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            any[r] = __ballot_sync(PARSUM_K_FULL_MASK, hr[r] != 0u);
            anyw |= any[r];
        }
        bool wk;
        T wv;
        if (PARSUM_K_SEG_PLAIN_WARPS && anyw == 0u) {
            const u32 none[R] = {};
            wv = seg_pipe_ex<T, R, V>(t, 0u, none, lane, pad, op, wk);
        } else {
            wv = seg_pipe_ex<T, R, V>(t, t.head, any, lane, pad, op, wk);
        }
        const S g = seg_pipe_aggregate<NWARP>(
            s_wtot, s_lead, buf, warp, lane, S{wv, wk ? 1u : 0u}, t.head, sop);
        /* With a head in the tile the aggregate is the inclusive prefix;
         * tile 0's is inclusive anyway. */
        if (warp == 0 && lane == 0) {
            const u32 st = (t.c == 0 || g.k) ? GROUP_INCL : TILE_AGG;
            if constexpr (VALUES)
                publish(a.agg, a.agg_status, t.c, st, g.v, a.tag);
            else
                publish(a.agg, a.agg_status, t.c, st, g, a.tag);
            /* tried early: a tile with a head that needs a prefix */
            s_try[buf] = (g.k && t.c > 0 && !(t.head & 1u)) ? t.c : ~0u;
        }
    };
    /* The aggregate of the tile whose warp totals are in s_wtot[buf]
     * (seg_pipe_aggregate's fold, again). */
    auto tile_agg = [&](int buf) {
        return fold_warp_totals<NWARP>(s_wtot + buf * NWARP, sop);
    };

    /* Looks back for tile t.c (unless its first element is a head), then
     * scans and stores it. */
    auto finish = [&](tile_t &t, int buf) {
        const bool lead = s_lead[buf] != 0u;
        if (warp == 0 && t.c > 0 && !lead &&
            !(PARSUM_K_SEG_EARLY && s_xc == t.c)) {
            const S ta = tile_agg(buf);
            D xc;
            if constexpr (VALUES)
                xc = pipe_lookback<LOOKBACK>(a, t.c, ta.v, pad, lane, op,
                                             ta.k != 0u);
            else
                xc = pipe_lookback<LOOKBACK>(a, t.c, ta, S{pad, 0u}, lane,
                                             sop);
            if (lane == 0)
                *s_x = xc;
        }
        __syncthreads();
        /* p: the prefix of this warp's first element, X(c) and the warps
         * before it; has: p covers at least one element. A lead tile's
         * head resets every prefix, so X(c) is left out there. */
        T p = pad;
        bool has = t.c > 0 && !lead;
        if (has) {
            if constexpr (VALUES)
                p = *s_x;
            else
                p = s_x->v;
        }
        for (int i = 0; i < warp; ++i) {
            const S w = s_wtot[buf * NWARP + i];
            p = (has && !w.k) ? op(p, w.v) : w.v;
            has = true;
        }
        /* A warp without a head (heads and row flags zero in every lane,
         * as load_local found) takes the second pass with both constant
         * zero (seg_pipe_ex). */
        if (PARSUM_K_SEG_PLAIN_WARPS &&
            __all_sync(PARSUM_K_FULL_MASK, (t.head | t.kb) == 0u))
            seg_pipe_out_call<LOOKBACK>(t.y, t.ex, 0u, 0u, p, has, lane, id,
                                        op, excl);
        else
            seg_pipe_out_call<LOOKBACK>(t.y, t.ex, t.head, t.kb, p, has, lane,
                                        id, op, excl);
        const u64 base = tile_base(t.c);
        T *out = static_cast<T *>(a.out) + base;
        tile_store<T, R, V, REV>(out, t.y, lay, base + TILE <= a.n,
                                 a.n - base, vec, excl, id);
    };

    if (tid == 0) { /* before the first claim's barrier */
        s_try[0] = s_try[1] = ~0u;
        s_xc = ~0u;
    }
    two_tile_loop<tile_t, false>(a.num_tiles, a.counter, s_tile, load_local,
                                 finish, a.tile_base);
}

} /* namespace parsum_k */

#endif /* PARSUM_SCAN_SEG_PIPE_CUH */
