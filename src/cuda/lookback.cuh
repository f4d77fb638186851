/*
 * lookback.cuh - how a scan tile learns the prefix of everything before
 * it: per-tile descriptors and the decoupled look-backs (Merrill &
 * Garland 2016): the classic one, the same made deterministic by folding
 * from the left, and the deterministic two-level one.
 * src/cuda/NOTES.md has the design and the determinism argument.
 */
#ifndef PARSUM_LOOKBACK_CUH
#define PARSUM_LOOKBACK_CUH

#ifndef __CUDACC_RTC__
#include "kernel_common.cuh"
#endif

namespace parsum_k {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* Nanoseconds a look-back waits between two polls of descriptors that are
 * not published yet (0: poll again at once); a tuning knob (NOTES 7). */
#ifndef PARSUM_K_POLL_NS
#define PARSUM_K_POLL_NS 32
#endif

/* Windows of 32 descriptors lookback_left keeps in registers for 8-byte
 * values and segmented pairs of 4-byte ones (a tuning knob; 2 for smaller
 * values). */
#ifndef PARSUM_K_LEFT_W8
#define PARSUM_K_LEFT_W8 1
#endif

/* Groups of 32 tiles before its own that lookback_gleft reads in its
 * first round trip (a knob: 1 makes its further reach, lookback_gprefix,
 * the common path, which a test build uses). */
#ifndef PARSUM_K_GLEFT_K
#define PARSUM_K_GLEFT_K 3
#endif

__device__ __forceinline__ void poll_pause()
{
#if PARSUM_K_POLL_NS > 0
    __nanosleep(PARSUM_K_POLL_NS);
#endif
}

/* ------------------------------------------------------------------------ */
/* Scan                                                                      */
/* ------------------------------------------------------------------------ */

/* The next tile number, handed out in order by the counter (so a tile
 * only ever waits for tiles already claimed); every thread of the block
 * gets it. A grid of one block has only tile 0 and needs no counter. The
 * counter starts at base (a tagged one is never reset: scan_args). */
__device__ __forceinline__ u32 claim_tile(u32 *counter, u32 &s_tile,
                                          bool single, u32 base = 0u)
{
    if (single)
        return 0u;
    if (threadIdx.x == 0)
        s_tile = atomicAdd(counter, 1u) - base;
    __syncthreads();
    return s_tile;
}

/* The loop of a block that keeps two tiles, A and B, in fixed registers
 * (written out for both roles so that neither is indexed): while one
 * tile's loads are in flight (load(t, buffer)) the other is finished
 * (finish(t, buffer)). Tile numbers come from *counter in claim order;
 * tiles from num_tiles on end the loop. load() ends with a barrier,
 * finish() contains one.
 *
 * AHEAD = false: the block claims a tile (thread 0's atomic, then a
 * barrier that also ends the last finish()'s reads of shared memory)
 * right before loading it. AHEAD = true: thread 32 claims the next tile
 * one tile ahead, when the loads of a tile are issued; the number is
 * written to s_tile after load()'s barrier (every thread has read the
 * last one by then) and read after finish()'s; no barrier is spent on the
 * claim, so whatever the following load() writes to shared memory,
 * finish() must have read before its own barrier; and s_tile, written by
 * one thread while the others run, must not share a 16-byte block with
 * anything they read (the compiler may load that block whole: declare it
 * alignas(16), as select_tile_kernel does). The counter starts at base;
 * every block takes exactly one number of num_tiles or more. */
template <class Tile, bool AHEAD, class Load, class Finish>
__device__ __forceinline__ void two_tile_loop(u32 num_tiles, u32 *counter,
                                              u32 &s_tile, Load &load,
                                              Finish &finish, u32 base = 0u)
{
    constexpr unsigned PF = 32u; /* AHEAD: blocks of at least 64 threads */
    Tile A, B;
    u32 pf = 0u;
    /* the next tile number for every thread */
    auto next = [&]() -> u32 {
        if (!AHEAD)
            return claim_tile(counter, s_tile, false, base);
        return s_tile;
    };
    auto ahead = [&]() {
        if (AHEAD && threadIdx.x == PF)
            pf = atomicAdd(counter, 1u) - base;
    };
    auto hand_over = [&]() {
        if (AHEAD && threadIdx.x == PF)
            s_tile = pf;
    };
    A.c = claim_tile(counter, s_tile, false, base);
    if (A.c >= num_tiles)
        return;
    ahead();
    load(A, 0);
    hand_over();
    if (AHEAD)
        __syncthreads();
    for (;;) {
        B.c = next();
        ahead();
        const bool more_b = B.c < num_tiles;
        if (more_b)
            load(B, 1);
        else if (AHEAD)
            __syncthreads();
        hand_over();
        finish(A, 0);
        if (!more_b)
            return;
        A.c = next();
        ahead();
        const bool more_a = A.c < num_tiles;
        if (more_a)
            load(A, 0);
        else if (AHEAD)
            __syncthreads();
        hand_over();
        finish(B, 1);
        if (!more_a)
            return;
    }
}

/* Publishes value v with status st in descriptor idx of desc (status
 * words in status, for unpacked descriptors), tagged with tag
 * (scan_args::tag). */
template <class T>
__device__ __forceinline__ void publish(u32 *desc, u32 *status, u64 idx,
                                        u32 st, const T &v, u32 tag)
{
    st |= tag;
    if constexpr (sizeof(T) <= 4) {
        u32 w = 0u;
        memcpy(&w, &v, sizeof(T));
        asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %2};" ::"l"(
                         desc + idx * 2u),
                     "r"(st), "r"(w)
                     : "memory");
    } else if constexpr (sizeof(T) <= 8) {
        u64 w = 0u;
        memcpy(&w, &v, sizeof(T));
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(
                         desc + idx * 4u),
                     "l"((u64)st), "l"(w)
                     : "memory");
    } else if constexpr (packed_desc<T>::value) { /* {status, k, value} */
        u32 w[4];
        memcpy(&w[2], &v, 8);       /* the value, first in the pair */
        memcpy(&w[1], reinterpret_cast<const unsigned char *>(&v) + 8, 4);
        asm volatile("st.relaxed.gpu.global.v4.u32 [%0], {%1, %2, %3, %4};" ::
                         "l"(desc + idx * 4u),
                     "r"(st), "r"(w[1]), "r"(w[2]), "r"(w[3])
                     : "memory");
    } else {
        store_slot(desc, idx, v);
        fence_gpu();
        st_status(status + idx, st);
    }
}

/* The status a word holds for the call tagged tag: TILE_NONE when
 * another call wrote it. */
__device__ __forceinline__ u32 status_of(u32 word, u32 tag)
{
    return (word & ~3u) == tag ? word & 3u : TILE_NONE;
}

/* Reads descriptor idx: returns its status (for the call tagged tag) and,
 * when that is not TILE_NONE, sets v to its value. */
template <class T>
__device__ __forceinline__ u32 peek(const u32 *desc, const u32 *status,
                                    u64 idx, T &v, u32 tag)
{
    if constexpr (sizeof(T) <= 4) {
        u32 st, w;
        asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];"
                     : "=r"(st), "=r"(w)
                     : "l"(desc + idx * 2u)
                     : "memory");
        memcpy(&v, &w, sizeof(T));
        return status_of(st, tag);
    } else if constexpr (sizeof(T) <= 8) {
        u64 st, w;
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(st), "=l"(w)
                     : "l"(desc + idx * 4u)
                     : "memory");
        memcpy(&v, &w, sizeof(T));
        return status_of((u32)st, tag);
    } else if constexpr (packed_desc<T>::value) {
        u32 w[4];
        asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                     : "l"(desc + idx * 4u)
                     : "memory");
        unsigned char *p = reinterpret_cast<unsigned char *>(&v);
        memcpy(p, &w[2], 8);
        memcpy(p + 8, &w[1], 4);
        return status_of(w[0], tag);
    } else {
        const u32 st = status_of(ld_status(status + idx), tag);
        if (st != TILE_NONE) {
            fence_gpu();
            v = load_slot<T>(desc, idx);
        }
        return st;
    }
}

/* Deterministic look-back (warp 0 of tile c; returns X(c) in lane 0,
 * meaningful for c > 0). Tiles form groups of 32 (g = c / 32,
 * p = c % 32). A tile's prefix is
 *   X(c) = GP(g-1) (+) fold(A(32g) .. A(c-1))
 * and the last tile of group g (p == 31) publishes, in its aggregate
 * descriptor, the group aggregate
 *   GA(g) = fold(A(32g) .. A(32g+30)) (+) A(c)
 * and, in its inclusive descriptor, the group prefix
 *   GP(g) = GP(g-32) (+) fold(GA(g-31) .. GA(g)).
 * Every value is a fixed function of the input (each fold is the same
 * ordered warp tree), so the result is deterministic, floats included.
 * A tile computes GP(g-1) itself from GA(g-32..g-1) and GP(g-33) rather
 * than waiting for group g-1 to publish it (same inputs, same tree, same
 * bits), and waits for all it needs at once: its group's aggregates, the
 * 32 group aggregates and GP(g-33), which is long published because
 * fewer than 32 groups of tiles are ever in flight. The last tile of a
 * group publishes GA(g) before it waits for anything outside its group:
 * otherwise each group would wait for the one before, a serial chain. */
template <class T, class Op>
__device__ __forceinline__ T lookback_groups(const scan_args &a, u32 c,
                                             const T &agg, const T &pad,
                                             int lane, const Op &op)
{
    const u32 g = c >> 5, pos = c & 31u;
    const bool last = pos == 31u;
    if (lane == 0 && !last)
        publish(a.agg, a.agg_status, c, TILE_AGG, agg, a.tag);

    /* Lane i waits for A(32g + i) (i < pos), GA(g - 32 + i) (groups >= 0),
     * lane 0 for GP(g - 33) and, in the last tile, lane 1 for GP(g - 32).
     * A value not needed counts as present; the last tile defers the
     * values outside its group until it has published GA(g). */
    const long long gi = (long long)g - 32 + lane;
    T va = pad, vga = pad, vgp = pad, vgq = pad;
    bool has_a = (u32)lane >= pos;
    bool has_ga = last || gi < 0;
    bool has_gp = last || !(lane == 0 && g >= 33u);
    bool has_gq = true;
    auto wait_all = [&]() {
        for (;;) {
            if (!has_a)
                has_a = peek(a.agg, a.agg_status, (u64)g * 32u + lane,
                             va, a.tag) >= TILE_AGG;
            if (!has_ga)
                has_ga = peek(a.agg, a.agg_status, (u64)gi * 32u + 31u,
                              vga, a.tag) >= GROUP_AGG;
            if (!has_gp)
                has_gp = peek(a.incl, a.incl_status,
                              ((u64)g - 33u) * 32u + 31u, vgp,
                              a.tag) >= GROUP_INCL;
            if (!has_gq)
                has_gq = peek(a.incl, a.incl_status,
                              ((u64)g - 32u) * 32u + 31u, vgq,
                              a.tag) >= GROUP_INCL;
            if (__all_sync(PARSUM_K_FULL_MASK,
                           has_a && has_ga && has_gp && has_gq))
                return;
            poll_pause();
        }
    };
    wait_all();
    T local = warp_reduce((u32)lane < pos ? va : pad, op); /* A(32g..c-1) */
    if (last) {
        const T ga = shfl_idx(op(local, agg), 0);
        if (lane == 0)
            publish(a.agg, a.agg_status, c, GROUP_AGG, ga, a.tag);
        has_ga = gi < 0;
        has_gp = !(lane == 0 && g >= 33u);
        has_gq = !(lane == 1 && g >= 32u);
        wait_all();
        /* GP(g): lane i stands for GA(g - 31 + i), lane 31 for GA(g). */
        T w = shfl_down(vga, 1);
        T gfold = warp_reduce(lane == 31 ? ga : w, op);
        T gpq = shfl_idx(vgq, 1);
        if (lane == 0)
            publish(a.incl, a.incl_status, c, GROUP_INCL,
                    g >= 32u ? op(gpq, gfold) : gfold, a.tag);
    }
    if (g == 0)
        return local;
    T gp = warp_reduce(vga, op); /* GA(g-32 .. g-1), pads before group 0 */
    if (g >= 33u)
        gp = op(vgp, gp); /* lane 0 */
    return pos > 0 ? op(gp, local) : gp;
}

/* Reads descriptor t of this lane into v once every lane's descriptor is
 * published (a warp-wide wait); returns the lanes that hold an inclusive
 * prefix. Tiles before 0 (t < 0) read as inclusive pads: an identity. */
template <class T>
__device__ __forceinline__ u32 wait_window(const scan_args &a, long long t,
                                           const T &pad, T &v)
{
    u32 st = GROUP_INCL;
    bool have = t < 0;
    v = pad;
    for (;;) {
        if (!have) {
            st = peek(a.agg, a.agg_status, (u64)t, v, a.tag);
            have = st != TILE_NONE;
        }
        if (__all_sync(PARSUM_K_FULL_MASK, have))
            break;
        poll_pause();
    }
    return __ballot_sync(PARSUM_K_FULL_MASK, st == GROUP_INCL);
}

/* The first half of the classic look-backs (lookback_classic,
 * lookback_left, lookback_gleft): publishes A(c) (P(0) for tile 0). A
 * tile whose block has other work to do before it needs the prefix
 * (scan_pipe_kernel) calls it early and the look-back later with PRE
 * set, which skips it. Warp 0. */
template <class T>
__device__ __forceinline__ void lookback_publish(const scan_args &a, u32 c,
                                                 const T &agg, int lane)
{
    if (lane == 0)
        publish(a.agg, a.agg_status, c, c == 0 ? GROUP_INCL : TILE_AGG, agg,
                a.tag);
}

/* Decoupled look-back as Merrill & Garland describe it (warp 0 of tile c;
 * returns X(c) in lane 0, meaningful for c > 0): publish A(c) (P(0) for
 * tile 0), then fold the predecessors 32 at a time, newest window first,
 * until a window holds a published inclusive prefix P(k); the fold starts
 * at the newest such k. The descriptor of tile c goes from A(c) to P(c),
 * replaced in one access. How far back a tile looks depends on timing, so
 * the grouping of X(c) does too: used only for operators whose result
 * cannot depend on the grouping (kernels_inst.cuh), and for packed
 * descriptors only (an unpacked value could change under a reader).
 * incl_known: tile c has published its inclusive prefix already (a
 * segmented tile with a head, scan_seg_pipe_kernel), so it is not
 * published again; lookback_left takes the same argument. */
template <class T, class Op, bool PRE = false>
__device__ __forceinline__ T lookback_classic(const scan_args &a, u32 c,
                                              const T &agg, const T &pad,
                                              int lane, const Op &op,
                                              bool incl_known = false)
{
    static_assert(packed_desc<T>::value, "classic look-back: packed only");
    if (!PRE)
        lookback_publish(a, c, agg, lane);
    if (c == 0)
        return agg;
    T x = pad;
    long long top = (long long)c; /* window: tiles top-32 .. top-1 */
    for (;;) {
        T v;
        const u32 incl = wait_window(a, top - 32 + lane, pad, v);
        const int hi = incl ? 31 - __clz((int)incl) : -1;
        T w = warp_reduce(lane >= hi ? v : pad, op);
        x = op(w, x);
        if (incl)
            break;
        top -= 32;
    }
    if (lane == 0 && !incl_known)
        publish(a.agg, a.agg_status, c, GROUP_INCL, op(x, agg), a.tag);
    return x;
}

/* x := x (+) v(l) (+) v(l + 1) .. (+) v(31), folded from the left, v(m)
 * being lane m's v (all lanes call; the result in every lane). A
 * specialization may take a shorter way to the same bits (seg_or_op's,
 * scan_kernels.cuh). */
template <class T, class Op>
struct left_fold {
    static __device__ __forceinline__ void run(T &x, const T &v, int l,
                                               const Op &op)
    {
        for (; l < 32; ++l)
            x = op(x, shfl_idx(v, l));
    }
};

/* The fold of warp 0's 32 values by warp_reduce's fixed tree (lane 0's
 * value first), in every lane: a group's GA, or a tile's own group. */
template <class T, class Op>
__device__ __forceinline__ T group_tree(const T &v, const Op &op)
{
    return shfl_idx(warp_reduce(v, op), 0);
}

/* GP(h) of lookback_gleft (h >= 0; every lane of warp 0): from the
 * newest group j <= h whose last tile has published GP(j) (or GP(0) =
 * GA(0)), GA(j+1) .. GA(h) from their aggregates, folded from the left.
 * The GAs of the newest 32 groups stay in registers (lane i: GA(h-i));
 * beyond them (more than 1024 tiles in flight) windows are read a second
 * time, oldest first, a window whose last tile has published by then
 * giving its GP directly (the same bits as the fold). */
template <class T, class Op>
__device__ __forceinline__ T lookback_gprefix(const scan_args &a,
                                              long long h, const T &pad,
                                              int lane, const Op &op)
{
    constexpr u32 TOP = 1u << 31;
    T keep = pad, x = pad;
    int depth = 0;
    long long j = h;
    for (;;) {
        T v;
        const u32 incl = wait_window(a, j * 32 + lane, pad, v);
        if (incl & TOP) {
            x = shfl_idx(v, 31);
            break;
        }
        const T ga = group_tree(v, op);
        if (j == 0) {
            x = ga;
            break;
        }
        if (depth == 32) { /* GP(j): find an older one, fold up to j */
            long long f = j - 1;
            for (;; --f) {
                T w;
                const u32 fi = wait_window(a, f * 32 + lane, pad, w);
                if (fi & TOP) {
                    x = shfl_idx(w, 31);
                    break;
                }
                if (f == 0) {
                    x = group_tree(w, op);
                    break;
                }
            }
            for (long long k = f + 1; k < j; ++k) {
                T w;
                const u32 ki = wait_window(a, k * 32 + lane, pad, w);
                x = (ki & TOP) ? shfl_idx(w, 31) : op(x, group_tree(w, op));
            }
            x = op(x, ga);
            break;
        }
        if (lane == depth)
            keep = ga;
        ++depth;
        --j;
    }
    for (int i = depth - 1; i >= 0; --i)
        x = op(x, shfl_idx(keep, i));
    return x;
}

/* The classic look-back made deterministic for any associative operator,
 * floats included (warp 0 of tile c; returns X(c) in every lane,
 * meaningful for c > 0). The inclusive prefix tile k publishes is the
 * left fold L(k+1) = (..((A(0) (+) A(1)) (+) A(2)) ..) (+) A(k), and a
 * tile that finds the newest published one, P(k), continues that very
 * fold: X(c) = (..(P(k) (+) A(k+1)) ..) (+) A(c-1) = L(c). Which k it
 * finds depends on timing; the bits of L(c) do not (by induction on c;
 * NOTES.md section 3). The price is a sequential fold of the c-1-k
 * aggregates after P(k) instead of a tree (as many as the newest prefix
 * lags behind the tile; not measured).
 *
 * Like the classic look-back it goes back as far as it must, so no tile
 * ever waits for a look-back but its own (a bounded reach would make the
 * newest prefix advance at most that many tiles per round trip, which
 * measured 0.61x CUB for f64 with a reach of 64 tiles). The newest
 * windows of 32 descriptors (two; one for 8-byte values) stay in
 * registers; beyond them a window is read once to find the inclusive
 * prefix and again, oldest first, to fold it (a descriptor read twice may
 * have turned from A(m) into P(m) = L(m+1) in between; the fold then
 * restarts from it, which is the same fold). */
template <class T, class Op, bool PRE = false>
__device__ __forceinline__ T lookback_left(const scan_args &a, u32 c,
                                           const T &agg, const T &pad,
                                           int lane, const Op &op,
                                           bool incl_known = false)
{
    static_assert(packed_desc<T>::value, "left look-back: packed only");
    constexpr int W = sizeof(T) <= 4 ? 2 : PARSUM_K_LEFT_W8; /* registers */
    if (!PRE)
        lookback_publish(a, c, agg, lane);
    if (c == 0)
        return agg;
    /* Window w holds tiles c - 32 (w + 1) .. c - 32 w - 1, one per lane;
     * waits until all are published, returns the lanes holding P(m).
     * Lanes before tile 0 count as inclusive but are never folded: tile 0
     * is inclusive and in the same window, above them. */
    auto read_window = [&](long long w, T &v) -> u32 {
        return wait_window(a, (long long)c - 32 * (w + 1) + lane, pad, v);
    };
    /* x := the fold continued through window v: from its newest inclusive
     * prefix if it has one, else from x. All lanes take part. */
    auto fold = [&](T &x, const T &v, u32 incl) {
        int l = 0;
        if (incl) {
            const int hi = 31 - __clz((int)incl);
            x = shfl_idx(v, hi);
            l = hi + 1;
        }
        left_fold<T, Op>::run(x, v, l, op);
    };
    T v[W];
    u32 inc[W];
    int nw = W;
#pragma unroll
    for (int w = 0; w < W; ++w) {
        inc[w] = read_window(w, v[w]);
        if (inc[w]) {
            nw = w;
            break;
        }
    }
    T x = pad;
    if (nw == W) { /* no prefix in the newest windows: further back */
        long long far = W;
        T vf;
        u32 incf;
        for (;; ++far) {
            incf = read_window(far, vf);
            if (incf)
                break;
        }
        fold(x, vf, incf);
        for (long long w = far - 1; w >= W; --w) {
            incf = read_window(w, vf);
            fold(x, vf, incf);
        }
    }
#pragma unroll
    for (int w = W - 1; w >= 0; --w)
        if (w <= nw)
            fold(x, v[w], w == nw ? inc[w] : 0u);
    if (lane == 0 && !incl_known)
        publish(a.agg, a.agg_status, c, GROUP_INCL, op(x, agg), a.tag);
    return x;
}

/* The left fold by groups (4): deterministic like lookback_left, for any
 * associative operator (warp 0 of tile c; returns X(c) in every lane,
 * meaningful for c > 0), but its sequential steps are whole groups of 32
 * tiles, not tiles. With g = c / 32, p = c % 32:
 *   GA(h) = tree(A(32h) .. A(32h+31))     (warp_reduce, lane i: A(32h+i))
 *   GP(0) = GA(0), GP(h) = GP(h-1) (+) GA(h)
 *   X(c)  = GP(g-1) (+) tree(A(32g) .. A(c-1))
 * (no GP(g-1) term in group 0, no tree for p = 0). The last tile of group
 * g publishes GP(g) in its descriptor (GROUP_INCL), and a tile that needs
 * GP(h) takes it from there when it is published, else computes GA(h)
 * from the 32 aggregates (the same tree, the same bits) and goes on to
 * GP(h-1): every value is a fixed function of the input whatever the
 * timing (NOTES.md section 3). Nobody waits for a prefix, only for
 * aggregates, which every tile publishes first (a look-back that waited
 * for one of the last few group prefixes measured 0.55-0.67x CUB: NOTES
 * section 7).
 *
 * Why: lookback_left continues the newest published prefix one aggregate
 * at a time, and that prefix ran 27-37 tiles behind (NOTES.md section
 * 3): a chain of that many shuffles and combines per tile, after up to
 * two round trips. Here a tile reads its own group's aggregates and the
 * three groups before it in one round trip (GP(g-1) is published 1-32
 * tiles back, GP(g-3) 65-96) and combines by trees. */
template <class T, class Op, bool PRE = false>
__device__ __forceinline__ T lookback_gleft(const scan_args &a, u32 c,
                                            const T &agg, const T &pad,
                                            int lane, const Op &op)
{
    static_assert(packed_desc<T>::value, "group look-back: packed only");
    if (!PRE)
        lookback_publish(a, c, agg, lane);
    if (c == 0)
        return agg;
    const u32 g = c >> 5, p = c & 31u;
    constexpr u32 TOP = 1u << 31; /* lane 31: a group's last tile */
    constexpr int K = PARSUM_K_GLEFT_K; /* groups read in one round trip */
    /* One round trip: lane l reads A(32g + l) (l < p) and descriptor
     * 32 (g-1-k) + l of each of the K groups before. */
    T v0 = pad, v[K];
    u32 st[K];
    bool h0 = (u32)lane >= p, h[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        v[k] = pad;
        st[k] = TILE_NONE;
        h[k] = g < (u32)k + 1u;
    }
    for (;;) {
        if (!h0)
            h0 = peek(a.agg, a.agg_status, (u64)c - p + lane, v0, a.tag) !=
                 TILE_NONE;
        bool all = h0;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (!h[k]) {
                st[k] = peek(a.agg, a.agg_status,
                             ((u64)g - 1u - (u64)k) * 32u + lane, v[k], a.tag);
                h[k] = st[k] != TILE_NONE;
            }
            all = all && h[k];
        }
        if (__all_sync(PARSUM_K_FULL_MASK, all))
            break;
        poll_pause();
    }
    if ((u32)lane >= p)
        v0 = pad;
    /* GP(g-1): from the newest of those groups whose last tile has
     * published GP (or group 0), else from further back; then the GAs of
     * the groups after it, oldest first. */
    T gp = pad;
    if (g >= 1u) {
        int kb = K;
#pragma unroll
        for (int k = K - 1; k >= 0; --k) {
            if (g < (u32)k + 1u)
                continue;
            const bool incl = (__ballot_sync(PARSUM_K_FULL_MASK,
                                             st[k] == GROUP_INCL) &
                               TOP) != 0u;
            if (incl || g == (u32)k + 1u)
                kb = k;
        }
        if (kb == K) {
            gp = lookback_gprefix<T, Op>(a, (long long)g - 1 - K, pad, lane,
                                         op);
        }
#pragma unroll
        for (int k = K - 1; k >= 0; --k) {
            if (k > kb)
                continue;
            if (k == kb && kb < K) {
                /* the ballot again: fewer instructions than flags kept
                 * from the loop above (PTX of both compared) */
                const bool incl = (__ballot_sync(PARSUM_K_FULL_MASK,
                                                 st[k] == GROUP_INCL) &
                                   TOP) != 0u;
                gp = incl ? shfl_idx(v[k], 31) : group_tree(v[k], op);
            } else {
                gp = op(gp, group_tree(v[k], op));
            }
        }
    }
    T x = gp;
    if (p > 0u) {
        const T local = group_tree(v0, op);
        x = g >= 1u ? op(gp, local) : local;
    }
    if (p == 31u) {
        const T ga = group_tree(lane == 31 ? agg : v0, op);
        if (lane == 0)
            publish(a.agg, a.agg_status, c, GROUP_INCL,
                    g >= 1u ? op(gp, ga) : ga, a.tag);
    }
    return x;
}

/* The look-back a scan of S under a rounding (or unknown) operator uses:
 * the left-fold classic one (3) where S fits a packed descriptor, else
 * the two-level one (1). Both are deterministic. */
template <class S>
__host__ __device__ constexpr int lookback_det()
{
    return packed_desc<S>::value ? 3 : 1;
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_LOOKBACK_CUH */
