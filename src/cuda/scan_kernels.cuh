/*
 * scan_kernels.cuh - the GPU scan kernel of parsum, written once for any
 * element type T and any associative operator Op, plain or segmented.
 *
 * Scan: one pass with decoupled look-back (D. Merrill, M. Garland, "Single-
 * pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002,
 * lookback.cuh). Every value a thread combines is a fixed function of the
 * input (and of n), or the operator is exactly associative, so results
 * are deterministic; operands are combined in sequence order (the earlier
 * one on the left), so non-commutative operators work too. Segmented
 * scans and reduces are the same kernel on (value, flag) pairs.
 */
#ifndef PARSUM_SCAN_KERNELS_CUH
#define PARSUM_SCAN_KERNELS_CUH

#ifndef __CUDACC_RTC__
#include "lookback.cuh"
#endif

namespace parsum_k {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* ------------------------------------------------------------------------ */
/* Segmented scans: policies of scan_kernel                                  */
/* ------------------------------------------------------------------------ */

/* A segmented scan is the plain scan of (value, flag) pairs under
 *   (v1, k1) (+) (v2, k2) = (k2 ? v2 : v1 (+) v2, k1 | k2)
 * (Schwartz; Blelloch 1990), which is associative whenever (+) is, so the
 * scan kernel and its look-back serve it unchanged. The reduce policy
 * counts heads instead (k1 + k2): the inclusive count at a run's last
 * element is the run's rank, which says where its total goes. */
template <class T, class Op>
struct seg_or_op {
    __device__ __forceinline__ seg_pair<T>
    operator()(const seg_pair<T> &a, const seg_pair<T> &b) const
    {
        seg_pair<T> r;
        r.v = b.k ? b.v : Op{}(a.v, b.v);
        r.k = a.k | b.k;
        return r;
    }
};

/* The left fold of (value, flag) pairs (lookback_left): every lane up to
 * the last flagged one is overwritten by it, so the fold starts there and
 * goes on over the values alone (one shuffle and one combine a step
 * instead of two shuffles, a combine and a select); the flags are ORed in
 * one reduction. The same bits as the pairwise fold. */
template <class T, class Op>
struct left_fold<seg_pair<T>, seg_or_op<T, Op>> {
    static __device__ __forceinline__ void
    run(seg_pair<T> &x, const seg_pair<T> &v, int l, const seg_or_op<T, Op> &)
    {
        const int lane = threadIdx.x & 31;
        const u32 k = lane >= l ? v.k : 0u;
        const unsigned heads = __ballot_sync(PARSUM_K_FULL_MASK, k != 0u);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        x.k |= __reduce_or_sync(PARSUM_K_FULL_MASK, k);
#else
        u32 o = k;
        for (int d = 16; d >= 1; d /= 2)
            o |= __shfl_xor_sync(PARSUM_K_FULL_MASK, o, d);
        x.k |= o;
#endif
        if (heads) {
            const int h = 31 - __clz((int)heads);
            x.v = shfl_idx(v.v, h);
            l = h + 1;
        }
        for (; l < 32; ++l)
            x.v = Op{}(x.v, shfl_idx(v.v, l));
    }
};

template <class T, class Op>
struct seg_count_op {
    __device__ __forceinline__ seg_pair<T>
    operator()(const seg_pair<T> &a, const seg_pair<T> &b) const
    {
        seg_pair<T> r;
        r.v = b.k ? b.v : Op{}(a.v, b.v);
        r.k = a.k + b.k;
        return r;
    }
};

/* MODE 0: plain scan (the element is the scan value). */
struct seg_none {
    static constexpr int MODE = 0;
    template <class T>
    using scan_t = T;
    template <class T, class Op>
    using scan_op = Op;
    template <class T>
    static __device__ __forceinline__ T make(const T &x, u32)
    {
        return x;
    }
    template <class T>
    static __device__ __forceinline__ T value(const T &s)
    {
        return s;
    }
};

/* MODE 1: segmented scan with packed head flags. */
struct seg_scan_flags {
    static constexpr int MODE = 1;
    template <class T>
    using scan_t = seg_pair<T>;
    template <class T, class Op>
    using scan_op = seg_or_op<T, Op>;
    template <class T>
    static __device__ __forceinline__ seg_pair<T> make(const T &x, u32 head)
    {
        seg_pair<T> r;
        r.v = x;
        r.k = head;
        return r;
    }
    template <class T>
    static __device__ __forceinline__ T value(const seg_pair<T> &s)
    {
        return s.v;
    }
};

/* MODE 2: segmented reduce (forward only): each run's total is written to
 * out[map ? map[k] : k] for the run of rank k, instead of the scan. */
struct seg_reduce_flags : seg_scan_flags {
    static constexpr int MODE = 2;
    template <class T, class Op>
    using scan_op = seg_count_op<T, Op>;
};

/* The flags of a thread's R vectors of V elements in a scan tile, row r's
 * vector starting at memory element m0 + r * 32 V (a reverse scan: m0 -
 * r * 32 V), in scan order: bit v of head[r] for the vector's element v (in
 * a reverse scan an element starts a segment when the next one in memory
 * does); bit v of tail[r]: element v ends its run (forward scans only).
 * Besides the flags as stored, element 0 always starts a segment and
 * element n (past the end) counts as a head; edge says whether the tile
 * may hold either (the first tile in memory, or one that reaches n), so
 * that the others skip those rules.
 * Rows are 32 V elements, i.e. V words of flags, apart, so every row's
 * window starts at the same bit of its word; all 2 R words are loaded
 * before any is used. Where the thread's words may pass the array's end,
 * their indices are clamped to its last word instead of branching per
 * load: a clamped word only supplies bits of positions at or past n,
 * which the rules override. */
template <int R, int V, bool REV>
__device__ __forceinline__ void seg_rows(const scan_args &a, u64 m0,
                                         bool edge, u32 (&head)[R],
                                         u32 (&tail)[R])
{
    constexpr u32 MASK = (1u << (V + 1)) - 1u;
    const u64 b = a.flag_off + m0;
    const u64 last = (a.flag_off + a.n - 1) >> 5; /* last word of the array */
    const u64 w0 = b >> 5;
    const u32 sh = (u32)b & 31u;
    /* the last word's index relative to w0 (negative for a thread whose
     * vectors all lie past n, by at most a tile) */
    const long long dl = (long long)(last - w0);
    const u32 *f = a.flags + w0;
    u32 lo[R], hi[R];
    if (!REV && dl > (R - 1) * V + 1) {
        /* No word past the array: constant offsets from one pointer (the
         * clamped indices below cost ten instructions a load). Reverse
         * scans keep the clamps: with both forms ptxas spilled there. */
#pragma unroll
        for (int r = 0; r < R; ++r) {
            lo[r] = f[r * V];
            hi[r] = f[r * V + 1];
        }
    } else {
        const int d = dl > (1 << 20) ? (1 << 20) : (int)dl;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int w = REV ? -(r * V) : r * V;
            lo[r] = f[min(w, d)];
            hi[r] = f[min(w + 1, d)];
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        u32 w = __funnelshift_r(lo[r], hi[r], sh) & MASK;
        if (edge) {
            const u64 m =
                REV ? m0 - (u64)r * 32u * V : m0 + (u64)r * 32u * V;
            if (m == 0)
                w |= 1u;
            if (m >= a.n)
                w = MASK;
            else if (a.n - m <= (u64)V)
                w |= MASK & ~((1u << (u32)(a.n - m)) - 1u);
        }
        if (REV) {
            head[r] = (__brev(w) >> (31 - V)) & ((1u << V) - 1u);
            tail[r] = 0u;
        } else {
            head[r] = w & ((1u << V) - 1u);
            tail[r] = w >> 1;
        }
    }
}

/* Segmented reduce: stores the total v of the run of rank k, whose last
 * element is m (see scan_args). */
template <class T>
__device__ __forceinline__ void store_run(const scan_args &a, u64 k, u64 m,
                                          const T &v)
{
    if (a.out_count != 0u && k >= a.out_count)
        return;
    T *dst = static_cast<T *>(a.out);
    dst[(a.map != nullptr && *a.map_on != 0u) ? a.map[k] : k] = v;
    if (a.keys != nullptr) {
        const unsigned char *src =
            static_cast<const unsigned char *>(a.keys) + m * a.key_size;
        unsigned char *kd =
            static_cast<unsigned char *>(a.keys_out) + k * a.key_size;
        switch (a.key_size) { /* keys are aligned to their size */
        case 1: *kd = *src; break;
        case 2: *(unsigned short *)kd = *(const unsigned short *)src; break;
        case 4: *(u32 *)kd = *(const u32 *)src; break;
        default: *(u64 *)kd = *(const u64 *)src; break;
        }
    }
    if (a.total != nullptr && m == a.n - 1u)
        *a.total = k + 1u;
}

/* ------------------------------------------------------------------------ */
/* Tile pieces shared by scan_kernel and scan_pipe_kernel                    */
/* ------------------------------------------------------------------------ */

/* The layout of a tile (see scan_kernel): warp w holds a contiguous chunk
 * of R rows, in row r lane l holds one vector of V consecutive elements;
 * offset(r) is the memory offset, within the tile, of the first element
 * of this thread's vector in scan row r. */
template <int R, int V, bool REV, int NWARP, bool ROW_IMM = false>
struct tile_layout {
    static constexpr u32 WARP_ITEMS = (u32)R * 32u * V;
    static constexpr u32 TILE = (u32)NWARP * WARP_ITEMS;
    int warp, lane;
    __device__ __forceinline__ u32 offset(int r) const
    {
        u32 fwd = (u32)warp * WARP_ITEMS + (u32)r * 32u * V + (u32)lane * V;
        return REV ? TILE - V - fwd : fwd;
    }
    /* The element of row r of a tile. With ROW_IMM, in a forward tile,
     * one pointer to row 0 plus a constant: four instructions a row fewer
     * than offset(r), a u32 sum the compiler must widen and scale anew
     * for every row. Reverse tiles keep offset(r): the pointer form made
     * ptxas spill there. Only the segmented pipelined scan sets ROW_IMM,
     * where it was measured (NOTES section 8, "Instructions"); reduce by
     * key lost 2 % with it (8 more bytes of spill), and the other kernels
     * keep offset(r) until measured with it (sm_90, nvcc 13.0). */
    template <class T>
    __device__ __forceinline__ T *row(T *base, int r) const
    {
        if constexpr (REV || !ROW_IMM)
            return base + offset(r);
        else
            return base + offset(0) + r * 32 * V;
    }
};

/* Loads this thread's elements of the tile at in (all loads issued before
 * any use); positions at or past rem (a partial tile) get pad. */
template <class T, int R, int V, bool REV, class L>
__device__ __forceinline__ void tile_load(T (&y)[R][V], const T *in,
                                          const L &lay, bool full, u64 rem,
                                          bool vec, const T &pad)
{
    if (full) {
        if (vec_capable(sizeof(T)) && vec) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                load_vec<T, V, REV>(y[r], lay.row(in, r));
        } else {
            /* Through the row's pointer, as load_vec: indexed by
             * offset(r) + (V - 1 - v), nvcc 13.0 widened the reverse
             * offset's u32 difference before adding the constant, and
             * read 2^32 elements past the tile (sm_90, 4-byte elements
             * off a 16-byte boundary; test_misaligned_out). */
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const T *p = lay.row(in, r);
#pragma unroll
                for (int v = 0; v < V; ++v)
                    y[r][v] = p[REV ? V - 1 - v : v];
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                u32 m = lay.offset(r) + (REV ? V - 1 - v : v);
                y[r][v] = m < rem ? in[m] : pad;
            }
    }
}

/* The converse. In a reverse scan the partial tile comes first and its
 * padding precedes in[n-1], whose exclusive output is the identity (the
 * scan gave it the fold of the padding). */
template <class T, int R, int V, bool REV, class L>
__device__ __forceinline__ void tile_store(T *out, const T (&y)[R][V],
                                           const L &lay, bool full, u64 rem,
                                           bool vec, bool excl, const T &id)
{
    if (full) {
        if (vec_capable(sizeof(T)) && vec) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                store_vec<T, V, REV>(lay.row(out, r), y[r]);
        } else { /* through the row's pointer: see tile_load */
#pragma unroll
            for (int r = 0; r < R; ++r) {
                T *p = lay.row(out, r);
#pragma unroll
                for (int v = 0; v < V; ++v)
                    p[REV ? V - 1 - v : v] = y[r][v];
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                u32 m = lay.offset(r) + (REV ? V - 1 - v : v);
                if (m < rem)
                    out[m] = (REV && excl && m == rem - 1) ? id : y[r][v];
            }
    }
}

/* The fold of a tile's NWARP warp totals w[0 .. NWARP-1], in warp order:
 * the tile's aggregate. */
template <int NWARP, class S, class Op>
__device__ __forceinline__ S fold_warp_totals(const S *w, const Op &op)
{
    S g = w[0];
#pragma unroll
    for (int i = 1; i < NWARP; ++i)
        g = op(g, w[i]);
    return g;
}

/* Thread and warp level of a tile: each row's lane-exclusive prefixes le
 * (valid for lane > 0), the row prefixes rp within the warp (valid for
 * r > 0), and the warp's total, returned. */
template <class S, int R, int V, class Op>
__device__ __forceinline__ S row_scans(const S (&x)[R][V], S (&le)[R],
                                       S (&rp)[R], int lane, const S &pad,
                                       const Op &op)
{
    S tot[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        S s = x[r][0];
#pragma unroll
        for (int v = 1; v < V; ++v)
            s = op(s, x[r][v]);
        tot[r] = s;
    }
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            S o = shfl_up(tot[r], d);
            if (lane >= d)
                tot[r] = op(o, tot[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        le[r] = shfl_up(tot[r], 1);    /* valid for lane > 0 */
        tot[r] = shfl_idx(tot[r], 31); /* row total */
    }
    rp[0] = pad;
    S wtot = tot[0];
#pragma unroll
    for (int r = 1; r < R; ++r) {
        rp[r] = wtot;
        wtot = op(wtot, tot[r]);
    }
    return wtot;
}

/* Blocks of scan_kernel an SM must hold at once: two for reverse plain
 * scans of 8-byte elements. Without the bound ptxas gave the reverse f64
 * scan 138 registers a thread (the forward one 127), so an SM held one
 * 256-thread block instead of two, and it ran 36 % slower than forward
 * on an H200 (1.96 against 1.45 ms at 2^28; bench/RESULTS.md). With it:
 * 128 registers and 24 bytes of spill. Everything else keeps no bound (0):
 * the forward f64 scan fits 127 registers without one, and with a bound
 * of 2 ptxas spilled 24 bytes there too (with 1, it took 138). */
template <class T, bool REV, class Seg>
__host__ __device__ constexpr int scan_kernel_min_blocks()
{
    return REV && Seg::MODE == 0 && sizeof(T) == 8 ? 2 : 0;
}

/*
 * One block scans one tile. Tiles are numbered c = 0, 1, ... in scan order
 * (handed out by an atomic counter, so a tile only ever waits for tiles
 * that are already running); tile c covers memory tile j = c (forward) or
 * j = num_tiles - 1 - c (reverse), i.e. elements [j * TILE, (j+1) * TILE),
 * the last memory tile being partial. Inside a tile, warp w holds a
 * contiguous warp chunk of R rows; in row r lane l holds one vector of V
 * consecutive elements, so each row of a warp moves 32 * 16 bytes with one
 * fully coalesced 16-byte access per lane. The scan order inside the tile
 * is (warp, row, lane, element) ascending; a reverse scan maps it onto
 * memory backwards, so all the combining code below is direction-free.
 *
 * Inclusive: out = in[first] (+) ... (+) in[i], the first element copied,
 * never combined with anything; exclusive: the inclusive scan shifted by
 * one, with id (the operator's identity) in the first position.
 *
 * pad fills positions that hold no element (the partial tile, look-back
 * slots before tile 0). It must be an identity bit for bit: pad (+) x ==
 * x (+) pad == x for every x (for a float sum that is -0.0, not +0.0; see
 * builtin_launch in launch.cu). Padding only ever precedes the first
 * element in scan order, or follows every element that is stored.
 */
template <class T, class Op, bool REV, int LOOKBACK, class Seg = seg_none>
__global__ void __launch_bounds__(policy_for(sizeof(T)).block,
                                  scan_kernel_min_blocks<T, REV, Seg>())
    scan_kernel(scan_args a, T id, T pad_elem)
{
    constexpr policy P = policy_for(sizeof(T));
    constexpr int BLOCK = P.block;
    constexpr int NWARP = BLOCK / 32;
    constexpr int MODE = Seg::MODE;
    constexpr int R = scan_rows(sizeof(T), MODE != 0);
    constexpr int V = vec_elems(sizeof(T));
    constexpr u32 WARP_ITEMS = (u32)R * 32u * V;
    constexpr u32 TILE = (u32)NWARP * WARP_ITEMS;
    static_assert(BLOCK % 32 == 0, "bad block");
    static_assert(MODE != 2 || !REV, "segmented reduce runs forward");
    /* S: what is scanned (the element, or a (value, flag) pair). */
    typedef typename Seg::template scan_t<T> S;
    typedef typename Seg::template scan_op<T, Op> SOp;

    const SOp op{};
    const S pad = Seg::make(pad_elem, 0u);
    __shared__ u32 s_tile;
    __shared__ alignas(16) unsigned char s_raw[(NWARP + 1) * sizeof(S)];
    S *s_wtot = reinterpret_cast<S *>(s_raw); /* per-warp totals */
    S *s_x = s_wtot + NWARP;                  /* the tile's prefix X(c) */

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const bool single = gridDim.x == 1;

    /* 1. Claim the next tile. */
    const u32 c = claim_tile(a.counter, s_tile, single, a.tile_base);
    const u64 j = REV ? (u64)(a.num_tiles - 1u - c) : (u64)c;
    const u64 tile_base = j * TILE;
    const bool full = tile_base + TILE <= a.n;
    const u64 rem = a.n - tile_base; /* valid elements if partial */
    const T *in = static_cast<const T *>(a.in) + tile_base;
    T *out = static_cast<T *>(a.out) + tile_base;

    const tile_layout<R, V, REV, NWARP> lay{warp, lane};
    auto offset = [&](int r) -> u32 { return lay.offset(r); };
    const bool vec = (a.options & OPT_VEC) != 0;

    /* 2. Load. */
    T y[R][V];
    tile_load<T, R, V, REV>(y, in, lay, full, rem, vec, pad_elem);
    /* Segment flags in scan order (seg_rows): bit v of head[r] for
     * y[r][v]; tail[r] (reduce): y[r][v] ends its run. */
    u32 head[R], tail[R];
    S x[R][V];
    if constexpr (MODE != 0)
        seg_rows<R, V, REV>(a, tile_base + offset(0),
                            tile_base == 0 || !(tile_base + TILE < a.n),
                            head, tail);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if constexpr (MODE == 0)
            head[r] = tail[r] = 0u;
#pragma unroll
        for (int v = 0; v < V; ++v)
            x[r][v] = Seg::make(y[r][v], (head[r] >> v) & 1u);
    }

    /* 3. Thread, warp and block level: lane exclusive prefixes le[r], row
     * prefixes rp[r] within the warp, the warp total. */
    S le[R], rp[R];
    const S wtot = row_scans<S, R, V>(x, le, rp, lane, pad, op);
    if (lane == 0)
        s_wtot[warp] = wtot;
    __syncthreads();

    /* Warp prefix wp (warps before this one) and, in warp 0, the tile
     * aggregate. Each is one sequential fold of the warp totals. */
    S wp = pad, agg = pad;
    if (warp == 0) {
        agg = s_wtot[0];
        for (int i = 1; i < NWARP; ++i)
            agg = op(agg, s_wtot[i]);
    } else {
        wp = s_wtot[0];
        for (int i = 1; i < warp; ++i)
            wp = op(wp, s_wtot[i]);
    }

    /* 4. Publish A(c), look back for X(c). LOOKBACK is 1 for the
     * deterministic two-level look-back, 2 for the classic one, 3 for the
     * classic one folded from the left, 4 for the left fold by groups
     * (lookback.cuh); 0 skips it, which
     * gives wrong results and exists only to time the tile code alone
     * (bench/gpu_tune.sh). */
    if (!single && warp == 0 && LOOKBACK != 0) {
        S xc = pad;
        if constexpr (LOOKBACK == 2)
            xc = lookback_classic(a, c, agg, pad, lane, op);
        else if constexpr (LOOKBACK == 3)
            xc = lookback_left(a, c, agg, pad, lane, op);
        else if constexpr (LOOKBACK == 4)
            xc = lookback_gleft(a, c, agg, pad, lane, op);
        else
            xc = lookback_groups(a, c, agg, pad, lane, op);
        if (lane == 0 && c > 0)
            *s_x = xc;
    }
    if (!single && LOOKBACK == 0 && tid == 0)
        *s_x = pad;
    if (!single)
        __syncthreads();

    /* 5. Each vector's prefix: X(c) (+) wp (+) rp[r] (+) le[r], parts that
     * cover no element left out; then the serial scan of the vector into
     * y. An exclusive output is the inclusive one shifted by one, the
     * identity first (and at every segment head). */
    bool has = c > 0;
    S p = has ? *s_x : pad;
    if (warp > 0) {
        p = has ? op(p, wp) : wp;
        has = true;
    }
    const bool excl = (a.options & OPT_EXCLUSIVE) != 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        S acc = p;
        bool hr = has;
        if (r > 0) {
            acc = hr ? op(acc, rp[r]) : rp[r];
            hr = true;
        }
        if (lane > 0) {
            acc = hr ? op(acc, le[r]) : le[r];
            hr = true;
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const bool first = !hr || ((head[r] >> v) & 1u);
            if (excl && MODE != 2)
                y[r][v] = first ? id : Seg::value(acc);
            acc = hr ? op(acc, x[r][v]) : x[r][v];
            hr = true;
            if (!excl || MODE == 2)
                y[r][v] = Seg::value(acc);
            if constexpr (MODE == 2) {
                /* The run's total goes to its slot: rank k - 1. */
                const u32 m = offset(r) + v;
                if (((tail[r] >> v) & 1u) && m < rem)
                    store_run<T>(a, (u64)acc.k - 1u, tile_base + m, y[r][v]);
            }
        }
    }
    if constexpr (MODE == 2)
        return;

    /* 6. Store. */
    tile_store<T, R, V, REV>(out, y, lay, full, rem, vec, excl, id);
}

/* ------------------------------------------------------------------------ */
/* Pipelined plain scan                                                      */
/* ------------------------------------------------------------------------ */

/* Memory offset of the first element of pipelined tile c (tiles are
 * numbered in scan order; a reverse scan takes them from the end). */
template <bool REV, u32 TILE>
__device__ __forceinline__ u64 pipe_tile_base(const scan_args &a, u32 c)
{
    return (REV ? (u64)(a.num_tiles - 1u - c) : (u64)c) * TILE;
}

/* The second half of a pipelined tile's look-back (its aggregate already
 * published by lookback_publish): 2 the classic one, 3 its left fold, 4
 * the left fold by groups. incl_known (2 and 3 only): the tile's
 * inclusive prefix is published already (lookback_classic). */
template <int LOOKBACK, class T, class Op>
__device__ __forceinline__ T pipe_lookback(const scan_args &a, u32 c,
                                           const T &agg, const T &pad,
                                           int lane, const Op &op,
                                           bool incl_known = false)
{
    static_assert(LOOKBACK >= 2 && LOOKBACK <= 4,
                  "pipelined: look-backs that wait for claimed tiles only");
    if constexpr (LOOKBACK == 4)
        return lookback_gleft<T, Op, true>(a, c, agg, pad, lane, op);
    else if constexpr (LOOKBACK == 3)
        return lookback_left<T, Op, true>(a, c, agg, pad, lane, op,
                                          incl_known);
    else
        return lookback_classic<T, Op, true>(a, c, agg, pad, lane, op,
                                             incl_known);
}

/* One tile of scan_pipe_kernel in the registers of its block: the
 * elements (scan order as in scan_kernel), per row the fold of what
 * precedes this thread's vector in its warp (ex[r] = rp[r] (+) le[r] of
 * row_scans; pad for row 0 of lane 0: one value per row, not two, which
 * keeps two tiles in 128 registers without spilling) and the tile
 * number. (The tile's aggregate is folded again from the warp totals in
 * shared memory when it is needed: a register less per tile.) */
template <class T, int R, int V>
struct pipe_tile {
    T y[R][V];
    T ex[R];
    u32 c;
};

/*
 * scan_pipe_kernel: the plain scan (MODE 0) of scan_kernel, with blocks
 * that stay resident and hold two tiles at a time. A block loads tile B
 * and publishes its aggregate as soon as its data are in, and only then
 * looks back for the tile A it loaded before and stores A. Tile A's
 * predecessors have had a whole load latency to publish, so the
 * look-back rarely waits, and no aggregate ever waits for a look-back (a
 * tile's aggregate depending on the previous tile of its block would chain
 * the blocks: see NOTES.md section 7). The grid may have any size; tiles
 * are handed out in order by the counter, so a tile only waits for tiles
 * already claimed, whose aggregates depend on their data alone.
 */
template <class T, class Op, bool REV, int LOOKBACK>
__global__ void __launch_bounds__(policy_for(sizeof(T)).block, 2)
    scan_pipe_kernel(scan_args a, T id, T pad)
{
    constexpr policy P = policy_for(sizeof(T));
    constexpr int BLOCK = P.block;
    constexpr int NWARP = BLOCK / 32;
    static_assert(LOOKBACK >= 2 && LOOKBACK <= 4,
                  "pipelined: look-backs that wait for claimed tiles only");
    constexpr int R = pipe_rows(sizeof(T));
    constexpr int V = vec_elems(sizeof(T));
    constexpr u32 WARP_ITEMS = (u32)R * 32u * V;
    constexpr u32 TILE = (u32)NWARP * WARP_ITEMS;
    static_assert(TILE == pipe_tile_elems(sizeof(T)), "tile");
    typedef pipe_tile<T, R, V> tile_t;

    const Op op{};
    __shared__ u32 s_tile;
    __shared__ alignas(16) unsigned char s_raw[(2 * NWARP + 1) * sizeof(T)];
    T *s_wtot = reinterpret_cast<T *>(s_raw); /* [2][NWARP] */
    T *s_x = s_wtot + 2 * NWARP;

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const bool excl = (a.options & OPT_EXCLUSIVE) != 0;
    const bool vec = vec_capable(sizeof(T)) && (a.options & OPT_VEC);

    const tile_layout<R, V, REV, NWARP> lay{warp, lane};
    auto tile_base = [&](u32 c) { return pipe_tile_base<REV, TILE>(a, c); };
    /* The aggregate of the tile whose warp totals are in s_wtot[buf]. */
    auto tile_agg = [&](int buf) {
        return fold_warp_totals<NWARP>(s_wtot + buf * NWARP, op);
    };
    /* Loads tile t.c and scans its rows; the warp totals go to
     * s_wtot[buf]. Ends with a barrier, after which warp 0 has the
     * aggregate and has published it. */
    auto load_local = [&](tile_t &t, int buf) {
        const u64 base = tile_base(t.c);
        const T *in = static_cast<const T *>(a.in) + base;
        tile_load<T, R, V, REV>(t.y, in, lay, base + TILE <= a.n, a.n - base,
                                vec, pad);
        T le[R], rp[R];
        const T wtot = row_scans<T, R, V>(t.y, le, rp, lane, pad, op);
#pragma unroll
        for (int r = 0; r < R; ++r)
            t.ex[r] = r == 0 ? (lane > 0 ? le[0] : pad)
                             : (lane > 0 ? op(rp[r], le[r]) : rp[r]);
        if (lane == 0)
            s_wtot[buf * NWARP + warp] = wtot;
        __syncthreads();
        if (warp == 0)
            lookback_publish(a, t.c, tile_agg(buf), lane);
    };
    /* Looks back for tile t.c, then scans and stores it. */
    auto finish = [&](tile_t &t, int buf) {
        if (warp == 0) {
            const T xc =
                pipe_lookback<LOOKBACK>(a, t.c, tile_agg(buf), pad, lane, op);
            if (lane == 0)
                *s_x = xc;
        }
        __syncthreads();
        T wp = pad;
        if (warp > 0) {
            wp = s_wtot[buf * NWARP];
            for (int i = 1; i < warp; ++i)
                wp = op(wp, s_wtot[buf * NWARP + i]);
        }
        bool has = t.c > 0;
        T p = has ? *s_x : pad;
        if (warp > 0) {
            p = has ? op(p, wp) : wp;
            has = true;
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            T acc = p;
            bool hr = has;
            if (r > 0 || lane > 0) {
                acc = hr ? op(acc, t.ex[r]) : t.ex[r];
                hr = true;
            }
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const T e = t.y[r][v];
                if (excl)
                    t.y[r][v] = hr ? acc : id;
                acc = hr ? op(acc, e) : e;
                hr = true;
                if (!excl)
                    t.y[r][v] = acc;
            }
        }
        const u64 base = tile_base(t.c);
        T *out = static_cast<T *>(a.out) + base;
        tile_store<T, R, V, REV>(out, t.y, lay, base + TILE <= a.n,
                                 a.n - base, vec, excl, id);
    };

    /* Claims with a barrier: finish() reads s_wtot[buf] (warp 0 before
     * its barrier, every warp after it), and the next load() of the same
     * buffer writes it. */
    two_tile_loop<tile_t, false>(a.num_tiles, a.counter, s_tile, load_local,
                                 finish, a.tile_base);
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SCAN_KERNELS_CUH */
