/*
 * reduce_by_key_pipe.cuh - reduce by key in one pass over keys and values,
 * on the pipelined segmented scan's tiles (scan_seg_pipe.cuh).
 *
 * The general path turns the keys into head flags (one pass over the
 * keys) and runs scan_kernel in reduce mode over values and flags, which
 * then reads each run's key again: keys are read twice, flags written and
 * read, and the tiles are scan_kernel's half-size segmented ones. Here a
 * tile loads its keys with its values and compares them where they are:
 * element i starts a run when i == 0 or keys[i] != keys[i-1]. The values
 * are scanned as
 * in scan_seg_pipe_kernel; the tile's aggregate is a (value, head count)
 * pair under seg_count_op, so the look-back gives each tile the number of
 * runs that started before it, and a run's total goes to values_out[r] at
 * its last element, r being the count of heads up to it minus one.
 *
 * The keys go to shared memory with cp.async (a buffer per tile in
 * flight, dynamic shared memory: rbk_smem_bytes), so they hold no
 * registers while the tile waits for its look-back; each warp copies and
 * reads its own chunk (no block barrier for them), heads and tails are
 * found there (the key before a thread's vector is a neighbour's; those
 * beside the chunk come from memory), and the keys and totals of the runs
 * that end in a warp's chunk are staged there in rank order, so that they
 * leave with consecutive stores.
 *
 * Every tile looks back (a run's rank depends on every head before it, so
 * the segmented scan's early inclusive prefix does not apply).
 * Forward only; values of 4 or 8 bytes, keys of 4 or 8 bytes (K = u32 or
 * u64, compared bit for bit); n < 2^32 (ranks and counts are 32-bit).
 */
#ifndef PARSUM_REDUCE_BY_KEY_PIPE_CUH
#define PARSUM_REDUCE_BY_KEY_PIPE_CUH

#include "scan_seg_pipe.cuh"

namespace parsum_k {

/* V keys from p (global or shared memory), aligned to V * sizeof(K)
 * bytes (8, 16 or 32). */
template <class K, int V>
__device__ __forceinline__ void load_keys(K (&k)[V], const K *p)
{
    constexpr int B = V * (int)sizeof(K);
    static_assert(B == 8 || B % 16 == 0, "key vectors of 8 or 16n bytes");
    if constexpr (B == 8) {
        const uint2 w = *reinterpret_cast<const uint2 *>(p);
        memcpy(k, &w, 8);
    } else {
        load_vec<K, V, false>(k, p);
    }
}

/* Head counts add up exactly in any grouping. */
struct count_add {
    __device__ __forceinline__ u32 operator()(u32 x, u32 y) const
    {
        return x + y;
    }
};

/* One tile of rbk_pipe_kernel in registers: the values y, their heads and
 * tails (bit r * V + v: y[r][v] starts / ends a run), the row scans of
 * seg_pipe_rows (le, rp, kb), per row the heads before this thread's
 * vector within its warp (16 bits per row, two rows a word), the tile
 * number and (warp 0) the aggregate. */
template <class T, int R, int V>
struct rbk_tile {
    T y[R][V];
    T le[R];
    T rp[R];
    u32 cnt[(R + 1) / 2];
    u32 head;
    u32 tail;
    u32 kb;
    seg_pair<T> agg;
    u32 c;
};

/* Rows of rbk_pipe_kernel's tiles: the pipelined scan's, but 6 for
 * 4-byte values (8 rows spilled 140-200 bytes of the 128 registers that
 * two tiles per thread allow; 6 rows 16-64 bytes, CUDA 13.0; NOTES.md
 * section 8 has the times). */
#ifndef PARSUM_K_RBK_ROWS4
#define PARSUM_K_RBK_ROWS4 6
#endif
__host__ __device__ constexpr int rbk_rows(u64 value_size)
{
    return value_size == 4 ? PARSUM_K_RBK_ROWS4 : pipe_rows(value_size);
}

__host__ __device__ constexpr u64 rbk_tile_elems(u64 value_size)
{
    return rows_tile_elems(value_size, rbk_rows(value_size));
}

/* The dynamic shared memory rbk_pipe_kernel<T, K> needs: the keys of
 * two tiles and a tile of values (run totals, staged). */
__host__ __device__ constexpr u64 rbk_smem_bytes(u64 value_size,
                                                 u64 key_size)
{
    return rbk_tile_elems(value_size) * (2u * key_size + value_size);
}

/*
 * rbk_pipe_kernel: reduce by key of a.in (values, T) under Op with keys
 * a.keys (K); run totals to a.out, run keys to a.keys_out, the run count
 * to *a.total. The blocks and tile loop are scan_pipe_kernel's (tile B's
 * aggregate is published before tile A's look-back). LOOKBACK: 2 classic,
 * 3 the left fold (deterministic for rounding operators).
 */
template <class T, class K, class Op, int LOOKBACK>
__global__ void __launch_bounds__(policy_for(sizeof(T)).block, 2)
    rbk_pipe_kernel(scan_args a, T id, T pad)
{
    (void)id;
    constexpr policy P = policy_for(sizeof(T));
    constexpr int BLOCK = P.block;
    constexpr int NWARP = BLOCK / 32;
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values");
    static_assert(sizeof(K) == 4 || sizeof(K) == 8, "4- or 8-byte keys");
    constexpr int R = rbk_rows(sizeof(T));
    constexpr int V = vec_elems(sizeof(T));
    static_assert(R * V <= 32, "heads: one mask word per tile");
    constexpr u32 WARP_ITEMS = (u32)R * 32u * V;
    static_assert(WARP_ITEMS < 65536u, "per-row counts: 16 bits");
    constexpr u32 TILE = (u32)NWARP * WARP_ITEMS;
    static_assert(TILE == rbk_tile_elems(sizeof(T)), "tile");
    typedef rbk_tile<T, R, V> tile_t;
    typedef seg_pair<T> S;

    const Op op{};
    const seg_count_op<T, Op> cop{};
    /* LOOKBACK 3 (float SUM, PROD): the left fold is deterministic but
     * folds one descriptor at a time, through every tile back to the
     * newest inclusive prefix, and a (value, count) pair's prefix is
     * inclusive only after its own look-back. So the two split: counts
     * (exact, any grouping) take the classic look-back on descriptors of
     * their own (a.incl, unused by the pipelined look-backs), and values,
     * with head flags, the left fold of scan_seg_pipe_kernel, where a
     * tile with a head is inclusive at once and a tile starting with one
     * needs no prefix at all. */
    constexpr bool SPLIT = LOOKBACK == 3;
    scan_args counts = a;
    counts.agg = a.incl;
    __shared__ u32 s_lead[2]; /* per buffer: the tile starts with a head */
    __shared__ u32 s_tile;
    __shared__ alignas(16) unsigned char s_raw[(2 * NWARP + 1) * sizeof(S)];
    extern __shared__ __align__(16) unsigned char s_dyn[];
    S *s_wtot = reinterpret_cast<S *>(s_raw); /* [2][NWARP] */
    S *s_x = s_wtot + 2 * NWARP;
    /* buffers 0 and 1: the keys of the two tiles in flight; buffer 2: the
     * staged run totals (rbk_smem_bytes) */
    auto stage = [&](int buf) -> K * {
        return reinterpret_cast<K *>(s_dyn) + (u32)buf * TILE;
    };

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const bool vec = (a.options & OPT_VEC) != 0; /* values and keys */
    const u32 below = (1u << lane) - 1u;
    const tile_layout<R, V, false, NWARP> lay{warp, lane};
    const K *keys = static_cast<const K *>(a.keys);

    /* Loads tile t.c (values to registers, keys to shared memory), finds
     * its heads and tails, scans its rows; the warp totals go to
     * s_wtot[buf]. Ends with a barrier, after which warp 0 has the
     * aggregate and has published it. */
    auto load_local = [&](tile_t &t, int buf) {
        const u64 base = pipe_tile_base<false, TILE>(a, t.c);
        const bool full = base + TILE <= a.n;
        const u64 rem = a.n - base;
        /* Keys to shared memory (cp.async: no registers while in flight),
         * each warp its own chunk, so that a warp waits for its own keys
         * only; positions past n repeat the last key, so that no head (and
         * no run end but n - 1's, by the edge rule below) lies there.
         * The keys just before and after the chunk from memory (lanes 0
         * and 31). Values to registers. */
        K *sk = stage(buf);
        const K *kin = keys + base;
        if (full && vec) {
#pragma unroll
            for (int r = 0; r < R; ++r) {
                K *d = sk + lay.offset(r);
                const K *g = kin + lay.offset(r);
                if constexpr (V * sizeof(K) == 8) {
                    cp_async<8>(d, g);
                } else {
#pragma unroll
                    for (int q = 0; q < (int)(V * sizeof(K) / 16); ++q)
                        cp_async<16>(d + q * (16 / sizeof(K)),
                                     g + q * (16 / sizeof(K)));
                }
            }
        } else {
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const u64 m = lay.offset(r) + (u32)v;
                    sk[m] = kin[m < rem ? m : rem - 1u];
                }
        }
        const u64 c0 = base + (u64)warp * WARP_ITEMS; /* the chunk */
        const u64 c1 = c0 + WARP_ITEMS;
        K kprev = K(0), knext = K(0);
        if (lane == 0 && c0 > 0)
            kprev = keys[c0 <= a.n ? c0 - 1u : a.n - 1u];
        if (lane == 31)
            knext = keys[c1 < a.n ? c1 : a.n - 1u];
        tile_load<T, R, V, false>(t.y, static_cast<const T *>(a.in) + base,
                                  lay, full, rem, vec, pad);
        cp_async_wait_all();
        __syncwarp();

        /* Heads and tails: element i starts a run when its key differs
         * from the one before (bit V of h: the element after the vector),
         * and ends one when the next starts one; element 0 starts one,
         * n - 1 ends one. */
        t.head = 0u;
        t.tail = 0u;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const K *p = sk + lay.offset(r);
            K k[V];
            load_keys<K, V>(k, p);
            const K before = (r == 0 && lane == 0) ? kprev : p[-1];
            const K after = (r == R - 1 && lane == 31) ? knext : p[V];
            u32 h = k[0] != before ? 1u : 0u;
#pragma unroll
            for (int v = 1; v < V; ++v)
                h |= (k[v] != k[v - 1] ? 1u : 0u) << v;
            h |= (after != k[V - 1] ? 1u : 0u) << V;
            t.head |= (h & ((1u << V) - 1u)) << (r * V);
            t.tail |= (h >> 1) << (r * V);
        }
        if (c0 == 0 && lane == 0)
            t.head |= 1u;
        if (!(base + TILE < a.n)) {
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const u64 d = rem - 1u - lay.offset(r);
                if (d < (u64)V)
                    t.tail |= 1u << (r * V + (u32)d);
            }
        }
        /* Per row: the heads before this lane's vector (ballots of each
         * vector position), the row's count and the lanes with a head. */
        u32 any[R];
        u32 pre = 0u; /* heads in the rows before, within the warp */
#pragma unroll
        for (int r = 0; r < R; ++r) {
            u32 ex = 0u, tt = 0u, o = 0u;
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const u32 b = __ballot_sync(PARSUM_K_FULL_MASK,
                                            (t.head >> (r * V + v)) & 1u);
                ex += __popc(b & below);
                tt += __popc(b);
                o |= b;
            }
            any[r] = o;
            if (r % 2 == 0)
                t.cnt[r / 2] = pre + ex;
            else
                t.cnt[r / 2] |= (pre + ex) << 16;
            pre += tt;
        }
        bool wk;
        const T wv = seg_pipe_rows<T, R, V>(t.y, t.head, t.le, t.rp, t.kb,
                                            any, lane, pad, op, wk);
        const S g = seg_pipe_aggregate<NWARP>(s_wtot, s_lead, buf, warp,
                                              lane, S{wv, pre}, t.head, cop);
        if (warp == 0) {
            t.agg = g;
            if constexpr (SPLIT) {
                /* the count, and the value with a head flag: inclusive at
                 * once in a tile with a head */
                lookback_publish(counts, t.c, g.k, lane);
                if (lane == 0)
                    publish(a.agg, a.agg_status, t.c,
                            (t.c == 0 || g.k) ? GROUP_INCL : TILE_AGG,
                            S{g.v, g.k ? 1u : 0u}, a.tag);
            } else {
                lookback_publish(a, t.c, g, lane);
            }
        }
    };

    /* Looks back for tile t.c (warp 0) and writes the keys and totals of
     * the runs that end in it. Everything but the prefix of the run that
     * enters a warp's chunk from before is known without the look-back,
     * so the other warps stage their runs while warp 0 looks back. */
    auto finish = [&](tile_t &t, int buf) {
        const bool lead = SPLIT && (s_lead[buf] != 0u);
        if (warp == 0) {
            S xc;
            if constexpr (SPLIT) {
                xc.k = t.c > 0 ? pipe_lookback<2>(counts, t.c, t.agg.k, 0u,
                                                  lane, count_add{})
                               : 0u;
                xc.v = pad;
                if (t.c > 0 && !lead)
                    xc.v = pipe_lookback<LOOKBACK>(
                               a, t.c, S{t.agg.v, t.agg.k ? 1u : 0u},
                               S{pad, 0u}, lane, seg_or_op<T, Op>{})
                               .v;
            } else {
                xc = pipe_lookback<LOOKBACK>(a, t.c, t.agg, S{pad, 0u}, lane,
                                             cop);
            }
            if (lane == 0)
                *s_x = xc;
        }
        /* The warp's run ends: nt of them, ranks r0 onwards (below); the
         * run ending at a tail is the warp's (heads up to it) - j0'th, j0
         * = the warp's first element starts a run. Each head but the
         * first ends a run in the warp, and so does the warp's last run
         * if it ends there: at the chunk's end, or at n - 1. */
        const u64 base = pipe_tile_base<false, TILE>(a, t.c);
        const bool edge = !(base + TILE < a.n);
        const u64 c0 = base + (u32)warp * WARP_ITEMS;
        const bool has_end = edge && c0 < a.n && a.n - c0 <= WARP_ITEMS;
        const u32 j0 = __shfl_sync(PARSUM_K_FULL_MASK, t.head & 1u, 0);
        u32 lt = __shfl_sync(PARSUM_K_FULL_MASK,
                             (t.tail >> (R * V - 1)) & 1u, 31);
        if (has_end)
            lt = 1u; /* n - 1 is in this warp's chunk */
        const u32 nt = s_wtot[buf * NWARP + warp].k - j0 + lt;
        /* Their keys and totals are staged in shared memory in rank
         * order, then stored with consecutive accesses: the keys in
         * place in the warp's part of the tile's key buffer (row by row:
         * a slot never lies past its element's position, so once a row's
         * keys are read, its writes reach no key still to be read), the
         * totals in the warp's part of the value buffer. The totals are
         * folded from the warp's first element (the values scanned as in
         * scan_seg_pipe_kernel, without the warp's prefix); only the
         * first, when j0 == 0, lacks the part before the warp. */
        K *skw = stage(buf) + (u32)warp * WARP_ITEMS;
        T *svw = reinterpret_cast<T *>(stage(2)) + (u32)warp * WARP_ITEMS;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u32 cw = (t.cnt[r / 2] >> (16 * (r % 2))) & 0xffffu;
            const u32 h = (t.head >> (r * V)) & ((1u << V) - 1u);
            const u32 tr = (t.tail >> (r * V)) & ((1u << V) - 1u);
            const u32 pos = (u32)r * 32u * V + (u32)lane * V;
            K kk[V];
#pragma unroll
            for (int v = 0; v < V; ++v)
                kk[v] = ((tr >> v) & 1u) ? skw[pos + v] : K(0);
            T acc = pad;
            bool hr = false;
            if (r > 0) {
                acc = t.rp[r];
                hr = true;
            }
            if (lane > 0) {
                const bool k = (t.kb >> r) & 1u;
                acc = (hr && !k) ? op(acc, t.le[r]) : t.le[r];
                hr = true;
            }
            T tot[V];
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const T e = t.y[r][v];
                const bool hv = (h >> v) & 1u;
                acc = (hr && !hv) ? op(acc, e) : e;
                hr = true;
                tot[v] = acc;
            }
            __syncwarp();
#pragma unroll
            for (int v = 0; v < V; ++v)
                if ((tr >> v) & 1u) {
                    /* heads in the warp up to here, less j0 */
                    const u32 sl = cw + __popc(h & ((2u << v) - 1u)) - j0;
                    skw[sl] = kk[v];
                    svw[sl] = tot[v];
                }
        }
        __syncthreads();
        /* p: the value prefix of this warp's first element (has: it covers
         * an element), q: the heads before the warp (q >= 1 when j0 == 0,
         * so r0 >= 0). */
        T p = pad;
        bool has = t.c > 0 && !lead;
        u32 q = 0u;
        if (t.c > 0) {
            const S x = *s_x;
            p = x.v;
            q = x.k;
        }
        for (int i = 0; i < warp; ++i) {
            const S w = s_wtot[buf * NWARP + i];
            p = (has && !w.k) ? op(p, w.v) : w.v;
            has = true;
            q += w.k;
        }
        const u64 r0 = (u64)q + j0 - 1u;
        if (lane == 0) {
            if (j0 == 0u && nt > 0u && has)
                svw[0] = op(p, svw[0]);
            if (has_end)
                *a.total = r0 + nt;
        }
        __syncwarp();
        K *ko = static_cast<K *>(a.keys_out) + r0;
        T *vo = static_cast<T *>(a.out) + r0;
#pragma unroll 1
        for (u32 i = (u32)lane; i < nt; i += 32u) {
            ko[i] = skw[i];
            vo[i] = svw[i];
        }
    };

    two_tile_loop<tile_t, false>(a.num_tiles, a.counter, s_tile, load_local,
                                 finish, a.tile_base);
}

} /* namespace parsum_k */

#endif /* PARSUM_REDUCE_BY_KEY_PIPE_CUH */
