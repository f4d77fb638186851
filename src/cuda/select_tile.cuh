/*
 * select_tile.cuh - the main kernel of select, two-way partition, unique
 * and the run boundaries of the run-length encodings (G = 1 or 2 groups;
 * the three-way partition and keys that are not one aligned word keep
 * select_kernel in select_kernels.cuh).
 *
 * Layout: the scan's (tile_layout in scan_kernels.cuh). Warp w of the
 * block holds a contiguous chunk of R rows, in row r lane l holds one
 * vector of V consecutive keys, loaded with one 16-byte access when the
 * keys are 16-byte aligned (tile_load, as the scan). A thread's items are
 * numbered r * V + v: one u32 holds the selection of all of them.
 *
 * Ranks: per row, a lane counts its selected items; one warp scan per
 * two rows (two 16-bit fields per word) gives each vector the number of
 * selected items before it in the warp's chunk; the warp totals in shared
 * memory give the warps before. Every kept key then goes to shared
 * memory at its rank within the tile (partition: the rejected ones after
 * the selected, at their rank among the rejected; one predicated store
 * per item, no branch), and the block writes the tile's output runs with
 * consecutive threads on consecutive aligned 16-byte vectors of the
 * output, read from shared memory at whatever offset the run has there
 * (st_read16). The staging needs only the tile's own counts, so it runs
 * while warp 0 looks back for the tile's prefix. Values and indices go
 * through a map of the kept elements' positions in the tile (u16, in the
 * same shared buffer after the keys are written), the values gathered
 * from global memory word by word.
 *
 * Pipelining: scan_pipe_kernel's (two_tile_loop, NOTES.md section 7). A
 * resident block loads tile B, evaluates the selector, counts and
 * publishes B's count, and only then looks back for the tile A it loaded
 * before and writes A. No aggregate waits for a look-back.
 *
 * Partition (G = 2): the rejected elements follow all selected ones, so
 * select_tile_count_kernel first counts every tile (same tiles, same
 * selector), publishes each count as the tile's aggregate in the look-back
 * descriptors and adds up the total. The main pass then only folds
 * published values: its look-back never waits, so it finishes tile A
 * while B's loads are in flight and counts B afterwards.
 */
#ifndef PARSUM_SELECT_TILE_CUH
#define PARSUM_SELECT_TILE_CUH

#include "scan_kernels.cuh"
#include "select_kernels.cuh"

namespace parsum_k {

#if defined(__CUDACC__)

constexpr int ST_BLOCK = 256;
constexpr int ST_NWARP = ST_BLOCK / 32;

/* Keys per vector and rows per thread for keys of ks bytes held in
 * registers (0: none, the selector reads flags only). R * V <= 32 (the
 * selection mask), a row's count fits 16 bits (32 * V <= 512). */
__host__ __device__ constexpr int st_vec(int ks)
{
    return ks == 0 ? 4 : 16 / ks;
}
__host__ __device__ constexpr int st_rows(int ks)
{
    return ks == 1 ? 2 : ks == 2 ? 4 : 8;
}
__host__ __device__ constexpr u32 st_tile(int ks)
{
    return (u32)ST_BLOCK * (u32)st_rows(ks) * (u32)st_vec(ks);
}
/* Shared staging: the tile's keys (and up to 3 vectors of alignment
 * gaps, see st_write), or its u16 map. */
__host__ __device__ constexpr u32 st_buf_bytes(int ks)
{
    return st_tile(ks) * (u32)(ks > 2 ? ks : 2) + 64u;
}

/* One tile in the registers of its block. */
template <int KS>
struct st_tile_t {
    typedef typename uint_of<KS == 0 ? 1 : KS>::type U;
    static constexpr int R = st_rows(KS);
    static constexpr int V = st_vec(KS);
    U y[R][V];
    u32 sel;   /* bit r * V + v: item (r, v) is in group 0 */
    u32 valid; /* bit r * V + v: item (r, v) is below n */
    /* Row r's group-0 items before this thread's vector in the warp's
     * chunk: 16 bits per row, two rows per word. */
    u32 off[(R + 1) / 2];
    u32 c;
};

/* Flag bytes p[0 .. V) (vector vv of valid items): one load of V bytes
 * when p is aligned to V and the vector is whole. */
template <int V>
__device__ __forceinline__ u32 st_bytes(const unsigned char *p, u32 vv,
                                        bool aligned)
{
    constexpr u32 VM = (1u << V) - 1u;
    u32 r = 0u;
    if (aligned && vv == VM) {
        u32 w[(V + 3) / 4];
        if constexpr (V == 16) {
            const vec16 q = *reinterpret_cast<const vec16 *>(p);
            w[0] = q.x;
            w[1] = q.y;
            w[2] = q.z;
            w[3] = q.w;
        } else if constexpr (V == 8) {
            const uint2 q = *reinterpret_cast<const uint2 *>(p);
            w[0] = q.x;
            w[1] = q.y;
        } else if constexpr (V == 4) {
            w[0] = *reinterpret_cast<const u32 *>(p);
        } else {
            w[0] = *reinterpret_cast<const unsigned short *>(p);
        }
#pragma unroll
        for (int v = 0; v < V; ++v)
            r |= (u32)(((w[v / 4] >> (8 * (v % 4))) & 0xffu) != 0u) << v;
    } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
            if ((vv >> v) & 1u)
                r |= (u32)(p[v] != 0) << v;
    }
    return r;
}

/* Selection bits of elements e .. e + V - 1 (vv: the valid ones, not
 * empty, so e < n and the word of bit e exists). */
template <int V>
__device__ __forceinline__ u32 st_bits(const sel_desc &s, u64 e, u64 n,
                                       u32 vv)
{
    const u64 b = s.bit_off + e;
    const u64 w = b >> 5;
    const u32 sh = (u32)(b & 31u);
    u64 x = (u64)s.bits[w] >> sh;
    if (sh + (u32)V > 32u && w + 1u <= ((s.bit_off + n - 1u) >> 5))
        x |= (u64)s.bits[w + 1u] << (32u - sh);
    return (u32)x & vv;
}

/* Run boundaries (SK_HEAD, SK_NT_HEAD, SK_NT_TAIL) of the items in y.
 * The neighbours of a vector's ends come from the adjacent lanes, across
 * rows from lane 31 / lane 0 of the adjacent row, and at the ends of the
 * warp's chunk from memory. */
template <int KS, int R, int V, class L>
__device__ __forceinline__ u32
st_runs(const select_kargs &a, u32 kind,
        const typename uint_of<KS>::type (&y)[R][V], u64 base, const L &lay,
        int lane, u32 valid)
{
    typedef typename uint_of<KS>::type U;
    const U *k = static_cast<const U *>(a.keys);
    u32 f = 0u;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        U before = shfl_up(y[r][V - 1], 1);
        U after = shfl_down(y[r][0], 1);
        const U wrap_up = shfl_idx(y[r > 0 ? r - 1 : 0][V - 1], 31);
        const U wrap_dn = shfl_idx(y[r < R - 1 ? r + 1 : 0][0], 0);
        const u64 m0 = base + lay.offset(r);
        if (lane == 0)
            before = r > 0 ? wrap_up
                           : (((valid >> (r * V)) & 1u) && m0 > 0 ? k[m0 - 1]
                                                                  : (U)0);
        if (lane == 31)
            after = r < R - 1 ? wrap_dn : (m0 + V < a.n ? k[m0 + V] : (U)0);
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const U x = y[r][v];
            const U p = v > 0 ? y[r][v > 0 ? v - 1 : 0] : before;
            const U q = v < V - 1 ? y[r][v < V - 1 ? v + 1 : 0] : after;
            const u64 m = m0 + (u64)v;
            const bool head = m == 0 || x != p;
            const bool next_head = m + 1u >= a.n || q != x;
            const bool g = kind == SK_HEAD      ? head
                           : kind == SK_NT_HEAD ? head && !next_head
                                                : !head && next_head;
            f |= (u32)g << (r * V + v);
        }
    }
    return f & valid;
}

/* Loads tile t.c's keys (KS > 0 and load): t.y and t.valid. The loads are
 * only issued here: nothing waits for them before st_eval. */
template <int KS, class L>
__device__ __forceinline__ void st_load(const select_kargs &a,
                                        st_tile_t<KS> &t, const L &lay,
                                        bool load, bool vec)
{
    typedef typename st_tile_t<KS>::U U;
    constexpr int R = st_tile_t<KS>::R;
    constexpr int V = st_tile_t<KS>::V;
    constexpr u32 TILE = st_tile(KS);
    const u64 base = (u64)t.c * TILE;
    const bool full = base + TILE <= a.n;
    const u64 rem = a.n - base;
    /* Valid items: all but in the last tile, where row r keeps the
     * first rem - offset(r) of its V (clamped to 0 .. V). */
    t.valid = R * V == 32 ? ~0u : (1u << (R * V)) - 1u;
    if (!full) {
        t.valid = 0u;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u32 o = lay.offset(r);
            const u32 k = o >= rem ? 0u : rem - o >= (u64)V ? (u32)V
                                                            : (u32)(rem - o);
            t.valid |= ((1u << k) - 1u) << (r * V);
        }
    }
    if constexpr (KS > 0) {
        if (load)
            tile_load<U, R, V, false>(t.y, static_cast<const U *>(a.keys) +
                                               base,
                                      lay, full, rem, vec, (U)0);
    }
}

/* Evaluates the first selector on tile t (loaded by st_load): t.sel. */
template <int KS, class L>
__device__ __forceinline__ void st_eval(const select_kargs &a,
                                        st_tile_t<KS> &t, const L &lay,
                                        int lane)
{
    typedef typename st_tile_t<KS>::U U;
    constexpr int R = st_tile_t<KS>::R;
    constexpr int V = st_tile_t<KS>::V;
    constexpr u32 TILE = st_tile(KS);
    constexpr u32 VM = (1u << V) - 1u;
    const u64 base = (u64)t.c * TILE;
    const sel_desc &s = a.s0;
    if constexpr (KS > 0) {
        if (s.kind == SK_PRED) {
            t.sel = pred_dispatch<KS>(
                s, reinterpret_cast<const U(&)[R * V]>(t.y), t.valid);
            return;
        }
        if (s.kind >= SK_HEAD) {
            t.sel = st_runs<KS, R, V>(a, s.kind, t.y, base, lay, lane,
                                      t.valid);
            return;
        }
    }
    u32 f = 0u;
    if (s.kind == SK_BYTES) {
        const bool al = ((u64)s.bytes & (u64)(V - 1)) == 0;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u32 vv = (t.valid >> (r * V)) & VM;
            if (vv != 0u)
                f |= st_bytes<V>(s.bytes + base + lay.offset(r), vv, al)
                     << (r * V);
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u32 vv = (t.valid >> (r * V)) & VM;
            if (vv != 0u)
                f |= st_bits<V>(s, base + lay.offset(r), a.n, vv) << (r * V);
        }
    }
    t.sel = f;
}

template <int KS, class L>
__device__ __forceinline__ void st_load_eval(const select_kargs &a,
                                             st_tile_t<KS> &t, const L &lay,
                                             int lane, bool load, bool vec)
{
    st_load<KS>(a, t, lay, load, vec);
    st_eval<KS>(a, t, lay, lane);
}

/* Each row's count of selected items before this thread's vector in the
 * warp's chunk (off, 16-bit fields); returns the warp's count. */
template <int R, int V>
__device__ __forceinline__ u32 st_row_offsets(u32 sel, int lane,
                                              u32 (&off)[(R + 1) / 2])
{
    constexpr int P = (R + 1) / 2;
    constexpr u32 VM = (1u << V) - 1u;
    u32 cnt[P], inc[P];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const u32 lo = (u32)__popc((sel >> (2 * k * V)) & VM);
        const u32 hi =
            2 * k + 1 < R ? (u32)__popc((sel >> ((2 * k + 1) * V)) & VM) : 0u;
        cnt[k] = inc[k] = lo | (hi << 16);
    }
#pragma unroll
    for (int d = 1; d < 32; d <<= 1)
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const u32 o = __shfl_up_sync(PARSUM_K_FULL_MASK, inc[k], d);
            if (lane >= d)
                inc[k] += o;
        }
    u32 run = 0u;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const u32 tot = __shfl_sync(PARSUM_K_FULL_MASK, inc[k], 31);
        const u32 ex = inc[k] - cnt[k];
        const u32 lo = run + (ex & 0xffffu);
        run += tot & 0xffffu;
        const u32 hi = run + (ex >> 16);
        run += tot >> 16;
        off[k] = lo | (hi << 16);
    }
    return run;
}

/* Where the tile's kept element j (in staging order) goes. */
struct st_dest {
    u64 x0; /* group 0 before the tile */
    u64 r0; /* G == 2: where the tile's rejected elements start */
    u32 n0; /* the tile's group 0 */
    __device__ __forceinline__ u64 operator()(u32 j) const
    {
        return j < n0 ? x0 + j : r0 + (j - n0);
    }
};

/* dst[dest(j) * nw + w] = src[(base + map[j]) * nw + w] for the cnt kept
 * elements (nw words W each), consecutive threads on consecutive words. */
template <class W>
__device__ __forceinline__ void st_gather_w(const void *src, void *dst,
                                            u32 size, u64 base,
                                            const unsigned short *map,
                                            u32 cnt, const st_dest &dest)
{
    const W *s = static_cast<const W *>(src);
    W *d = static_cast<W *>(dst);
    const u32 nw = size / (u32)sizeof(W);
    const u32 total = cnt * nw;
    for (u32 q = threadIdx.x; q < total; q += ST_BLOCK) {
        const u32 j = nw == 1u ? q : q / nw;
        const u32 w = q - j * nw;
        d[dest(j) * nw + w] = s[(base + map[j]) * nw + w];
    }
}

__device__ __forceinline__ void st_gather(const void *src, void *dst,
                                          u32 size, u32 word, u64 base,
                                          const unsigned short *map, u32 cnt,
                                          const st_dest &dest)
{
    switch (word) {
    case 16: st_gather_w<vec16>(src, dst, size, base, map, cnt, dest); break;
    case 8: st_gather_w<u64>(src, dst, size, base, map, cnt, dest); break;
    case 4: st_gather_w<u32>(src, dst, size, base, map, cnt, dest); break;
    case 2:
        st_gather_w<unsigned short>(src, dst, size, base, map, cnt, dest);
        break;
    default:
        st_gather_w<unsigned char>(src, dst, size, base, map, cnt, dest);
        break;
    }
}

/* if (p) the shared-memory word at addr = v, as one predicated store:
 * the staging loop then has no branch per item. */
template <class U>
__device__ __forceinline__ void st_shared_if(u32 p, u32 addr, U v)
{
    if constexpr (sizeof(U) == 8)
        asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0;"
                     " @q st.shared.u64 [%1], %2;}" ::"r"(p),
                     "r"(addr), "l"((u64)v)
                     : "memory");
    else if constexpr (sizeof(U) == 4)
        asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0;"
                     " @q st.shared.u32 [%1], %2;}" ::"r"(p),
                     "r"(addr), "r"((u32)v)
                     : "memory");
    else if constexpr (sizeof(U) == 2)
        asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0;"
                     " @q st.shared.u16 [%1], %2;}" ::"r"(p),
                     "r"(addr), "h"((unsigned short)v)
                     : "memory");
    else
        asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0;"
                     " @q st.shared.u8 [%1], %2;}" ::"r"(p),
                     "r"(addr), "r"((u32)v)
                     : "memory");
}

/* Stages val(r, v), of type W (the key, or the item's u16 position in the
 * tile), for every kept item of tile t at its local position in s_buf:
 * group 0 by rank from 0, the rest (G == 2) by rank among the rest from
 * n0 (REV: from rtop, the tile's valid items less one, down, so that the
 * staged rest is in reverse order). Needs only the tile's own counts, not
 * its prefix. The position of item (r, v) is its row's base plus the
 * selected items before it in the vector: one predicated store per item,
 * no branch. */
template <int KS, int G, bool REV, class W, class L, class F>
__device__ __forceinline__ void st_stage(const st_tile_t<KS> &t,
                                         const L &lay, u32 wp, u32 n0,
                                         u32 rtop, unsigned char *s_buf,
                                         const F &val)
{
    constexpr int R = st_tile_t<KS>::R;
    constexpr int V = st_tile_t<KS>::V;
    constexpr u32 VM = (1u << V) - 1u;
    constexpr u32 WS = (u32)sizeof(W);
    const u32 sb = (u32)__cvta_generic_to_shared(s_buf);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const u32 field = (t.off[r / 2] >> (16 * (r % 2))) & 0xffffu;
        const u32 below = wp + field; /* group 0 before the vector */
        const u32 m = (t.sel >> (r * V)) & VM;
        const u32 live = G == 1 ? m : (t.valid >> (r * V)) & VM;
        const u32 a0 = sb + below * WS;
        /* the rejected: after all n0, at their rank among the rejected
         * (REV: at rtop less that rank) */
        const u32 rk = lay.offset(r) - below;
        const u32 a1 = sb + (REV ? rtop - rk : n0 + rk) * WS;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const u32 k = (u32)__popc(m & ((1u << v) - 1u));
            u32 addr = a0 + k * WS;
            if (G == 2 && !((m >> v) & 1u))
                addr = REV ? a1 - ((u32)v - k) * WS : a1 + ((u32)v - k) * WS;
            st_shared_if<W>(live & (1u << v), addr, val(r, v));
        }
    }
}

/* The 16 bytes of shared memory from byte b of s on, any alignment (two
 * aligned loads and funnel shifts; up to 16 bytes past the end of the
 * bytes used are read, inside the buffer's slack). */
template <int KS>
__device__ __forceinline__ vec16 st_read16(const unsigned char *s, u32 b)
{
    const vec16 *q = reinterpret_cast<const vec16 *>(s) + (b >> 4);
    const u32 sh = b & 15u;
    const vec16 p0 = q[0];
    if (sh == 0u)
        return p0;
    const vec16 p1 = q[1];
    const u32 w[8] = {p0.x, p0.y, p0.z, p0.w, p1.x, p1.y, p1.z, p1.w};
    /* keys of 4 and 8 bytes shift by whole words only */
    const u32 bs = KS >= 4 ? 0u : (sh & 3u) * 8u;
    vec16 r;
    switch (sh >> 2) {
#define PARSUM_ST_FUNNEL(WS)                                                 \
    case WS:                                                                 \
        r.x = __funnelshift_r(w[WS], w[WS + 1], bs);                         \
        r.y = __funnelshift_r(w[WS + 1], w[WS + 2], bs);                     \
        r.z = __funnelshift_r(w[WS + 2], w[WS + 3], bs);                     \
        r.w = __funnelshift_r(w[WS + 3], w[WS + 4], bs);                     \
        break;
        PARSUM_ST_FUNNEL(0)
        PARSUM_ST_FUNNEL(1)
        PARSUM_ST_FUNNEL(2)
    default:
        PARSUM_ST_FUNNEL(3)
#undef PARSUM_ST_FUNNEL
    }
    return r;
}

/* out[g0 + i] = sk[s0 + i] for i < cnt (sk: the staged keys at s_buf):
 * consecutive threads on consecutive aligned 16-byte vectors of the
 * output, each read from shared memory at whatever offset the run has
 * there; the partial vectors at either end element by element. */
template <class U, int V>
__device__ __forceinline__ void st_store_run(U *out, const unsigned char *s_buf,
                                             u32 s0, u32 cnt, u64 g0)
{
    const U *sk = reinterpret_cast<const U *>(s_buf);
    /* elements of the first output vector before g0 */
    const u32 lead = (u32)(((u64)out / sizeof(U) + g0) % (u64)V);
    U *ob = out + g0 - lead; /* 16-byte aligned */
    const u32 nvec = (lead + cnt + (u32)V - 1u) / (u32)V;
    for (u32 q = threadIdx.x; q < nvec; q += ST_BLOCK) {
        const u32 lo = q * (u32)V; /* run index lo - lead */
        if (lo >= lead && lo - lead + (u32)V <= cnt) {
            *reinterpret_cast<vec16 *>(ob + lo) = st_read16<(int)sizeof(U)>(
                s_buf, (s0 + lo - lead) * (u32)sizeof(U));
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const u32 p = lo + (u32)v;
                if (p >= lead && p - lead < cnt)
                    ob[p] = sk[s0 + p - lead];
            }
        }
    }
}

/* Writes tile t (keys staged by st_stage before a barrier, offsets and
 * warp totals in s_wtot) once its group-0 prefix x0 is known. Ends after
 * its last read of shared memory, without a barrier. REV: the rest goes
 * below n - (the rest before the tile), staged in reverse already. */
template <int KS, int G, bool REV, class L>
__device__ __forceinline__ void st_write(const select_kargs &a,
                                         const st_tile_t<KS> &t, const L &lay,
                                         u32 wp, u32 n0, u64 x0,
                                         unsigned char *s_buf)
{
    typedef typename st_tile_t<KS>::U U;
    constexpr int V = st_tile_t<KS>::V;
    constexpr u32 TILE = st_tile(KS);
    const u64 base = (u64)t.c * TILE;
    const u32 nvalid = a.n - base < TILE ? (u32)(a.n - base) : TILE;
    const u32 cnt = G == 1 ? n0 : nvalid;
    st_dest dest;
    dest.x0 = x0;
    dest.n0 = n0;
    dest.r0 = G != 2 ? 0u
              : REV  ? a.n - (base - x0) - (u64)(cnt - n0)
                     : a.totals[0] + (base - x0);
    const int tid = (int)threadIdx.x;

    bool staged = false;
    if constexpr (KS > 0) {
        if (a.keys_out != nullptr) {
            /* the keys staged by st_stage: group 0 from 0, the rest from n0 */
            U *out = static_cast<U *>(a.keys_out);
            st_store_run<U, V>(out, s_buf, 0u, n0, x0);
            if (G == 2)
                st_store_run<U, V>(out, s_buf, n0, cnt - n0, dest.r0);
            staged = true;
        }
    }
    const bool gather_keys = KS == 0 && a.keys_out != nullptr;
    if (!gather_keys && a.values_out == nullptr && a.idx_out == nullptr)
        return;
    if (staged)
        __syncthreads(); /* every read of the staged keys is done */
    st_stage<KS, G, REV, unsigned short>(
        t, lay, wp, n0, nvalid - 1u, s_buf, [&](int r, int v) {
            return (unsigned short)(lay.offset(r) + (u32)v);
        });
    __syncthreads();
    const unsigned short *map = reinterpret_cast<unsigned short *>(s_buf);
    if (G == 1 && a.run_first != nullptr) {
        /* Run lengths from the next start in the tile; the tile's last
         * run gets its start, finished by run_fix_kernel. */
        for (u32 j = (u32)tid; j < cnt; j += ST_BLOCK)
            a.idx_out[x0 + j] = j + 1u < cnt ? (u64)(map[j + 1u] - map[j])
                                             : base + map[j];
        if (tid == 0) {
            a.run_first[2u * (u64)t.c] = cnt > 0u ? x0 : ~0ull;
            a.run_first[2u * (u64)t.c + 1u] = cnt > 0u ? base + map[0] : 0u;
        }
    } else if (a.idx_out != nullptr) {
        for (u32 j = (u32)tid; j < cnt; j += ST_BLOCK)
            a.idx_out[dest(j)] = base + map[j];
    }
    if (gather_keys)
        st_gather(a.keys, a.keys_out, a.key_size, a.key_word, base, map, cnt,
                  dest);
    if (a.values_out != nullptr)
        st_gather(a.values, a.values_out, a.value_size, a.value_word, base,
                  map, cnt, dest);
}

/*
 * G = 1: select, unique, run starts and ends (count to count_out). G = 2:
 * partition, after select_tile_count_kernel (totals[0] and every tile's
 * count published); with REV (parsum_partition_unstable) in one pass
 * like G = 1, the rest reversed from the end. KS: bytes of the keys held
 * in registers (for the selector or the output), 0 for none. Any grid
 * size: tiles are claimed in order from the counter.
 */
template <int KS, int G, bool REV>
__global__ void __launch_bounds__(ST_BLOCK, 2)
    select_tile_kernel(select_kargs a)
{
    /* one pass, each tile's count published by the tile itself */
    constexpr bool ONE_PASS = G == 1 || REV;
    static_assert(!REV || G == 2, "REV is a two-way partition");
    constexpr int R = st_tile_t<KS>::R;
    constexpr int V = st_tile_t<KS>::V;
    static_assert(G == 1 || G == 2, "groups");
    static_assert(R * V <= 32, "selection mask");
    typedef st_tile_t<KS> tile_t;
    /* 16-byte aligned each: the compiler reads s_wtot with 16-byte loads,
     * which must not take in s_tile (written meanwhile by one thread). */
    __shared__ alignas(16) u32 s_tile;
    __shared__ alignas(16) u32 s_wtot[2][ST_NWARP];
    __shared__ u64 s_x;
    __shared__ alignas(16) unsigned char s_buf[st_buf_bytes(KS)];

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const tile_layout<R, V, false, ST_NWARP> lay{warp, lane};
    const bool vec = ((u64)a.keys & 15u) == 0;
    scan_args la;
    memset(&la, 0, sizeof la);
    la.agg = a.desc;

    const bool stage_keys = KS > 0 && a.keys_out != nullptr;

    /* Group 0 in the warps before this one (wp) and in the tile (n0). */
    auto totals = [&](int buf, u32 &wp, u32 &n0) {
        wp = n0 = 0u;
#pragma unroll
        for (int i = 0; i < ST_NWARP; ++i) {
            const u32 w = s_wtot[buf][i];
            wp += i < warp ? w : 0u;
            n0 += w;
        }
    };
    /* Loads and counts tile t; ends with a barrier, after which (G == 1)
     * warp 0 has published the tile's count. */
    auto count_local = [&](tile_t &t, int buf) {
        st_eval<KS>(a, t, lay, lane);
        const u32 wt = st_row_offsets<R, V>(t.sel, lane, t.off);
        if (lane == 0)
            s_wtot[buf][warp] = wt;
        __syncthreads();
        if (ONE_PASS && warp == 0) {
            u32 agg = 0u;
#pragma unroll
            for (int i = 0; i < ST_NWARP; ++i)
                agg += s_wtot[buf][i];
            lookback_publish(la, t.c, (u64)agg, lane);
        }
    };
    auto load_local = [&](tile_t &t, int buf) {
        st_load<KS>(a, t, lay, true, vec);
        count_local(t, buf);
    };
    /* Stages tile t's keys while warp 0 looks back for its prefix (the
     * staging needs only the tile's own counts), then writes it. The
     * shared buffer is free: the last reads of the tile before ended
     * before load_local's barrier. */
    auto finish = [&](const tile_t &t, int buf) {
        u32 wp, n0;
        totals(buf, wp, n0);
        if (warp == 0) {
            const u64 xc = lookback_classic<u64, count_sum, true>(
                la, t.c, (u64)n0, (u64)0, lane, count_sum{});
            if (lane == 0)
                s_x = t.c > 0 ? xc : 0u;
        }
        const u64 base = (u64)t.c * st_tile(KS);
        const u32 rtop = (a.n - base < st_tile(KS) ? (u32)(a.n - base)
                                                   : st_tile(KS)) - 1u;
        if (stage_keys)
            st_stage<KS, G, REV, typename tile_t::U>(
                t, lay, wp, n0, rtop, s_buf,
                [&](int r, int v) { return t.y[r][v]; });
        __syncthreads();
        const u64 x0 = s_x;
        if (ONE_PASS && tid == 0 && t.c == a.num_tiles - 1u)
            *a.count_out = x0 + n0;
        st_write<KS, G, REV>(a, t, lay, wp, n0, x0, s_buf);
    };

    /* scan_pipe_kernel's order: a tile's count is published before the
     * look-back of the tile loaded before it. Tiles claimed one ahead
     * (H200, 2^28 u32: select 1.08x -> 1.16x CUB; the scan loses with it,
     * NOTES.md section 9): finish() reads s_wtot before its barrier only,
     * and the staged keys are written after load()'s. */
    if constexpr (ONE_PASS) {
        two_tile_loop<tile_t, true>(a.num_tiles, a.counter, s_tile,
                                    load_local, finish);
    } else {
        /* The partition: every count is published by the count pass, so
         * the look-back never waits and B's count need not come first.
         * B's loads are issued, A is finished meanwhile, then B counted
         * (count_local's barrier ends A's reads of shared memory). */
        tile_t A, B;
        A.c = claim_tile(a.counter, s_tile, false);
        if (A.c >= a.num_tiles)
            return;
        load_local(A, 0);
        for (;;) {
            B.c = claim_tile(a.counter, s_tile, false);
            const bool more_b = B.c < a.num_tiles;
            if (more_b)
                st_load<KS>(a, B, lay, true, vec);
            finish(A, 0);
            if (!more_b)
                return;
            count_local(B, 1);
            A.c = claim_tile(a.counter, s_tile, false);
            const bool more_a = A.c < a.num_tiles;
            if (more_a)
                st_load<KS>(a, A, lay, true, vec);
            finish(B, 1);
            if (!more_a)
                return;
            count_local(A, 0);
        }
    }
}

/* The partition's first pass: every tile's group-0 count, published as
 * the tile's look-back aggregate (tile 0 as its inclusive prefix), and
 * their sum added to totals[0] (zeroed before). Tiles grid-stride. Keys
 * are loaded only for a selector that reads them. */
template <int KS>
__global__ void __launch_bounds__(ST_BLOCK, 4)
    select_tile_count_kernel(select_kargs a, u64 *totals)
{
    constexpr int R = st_tile_t<KS>::R;
    constexpr int V = st_tile_t<KS>::V;
    __shared__ u32 s_w[ST_NWARP];
    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const tile_layout<R, V, false, ST_NWARP> lay{warp, lane};
    const bool vec = ((u64)a.keys & 15u) == 0;
    const bool load = a.s0.kind == SK_PRED || a.s0.kind >= SK_HEAD;
    scan_args la;
    memset(&la, 0, sizeof la);
    la.agg = a.desc;
    u64 sum = 0u;
    st_tile_t<KS> t;
    for (u32 c = blockIdx.x; c < a.num_tiles; c += gridDim.x) {
        t.c = c;
        st_load_eval<KS>(a, t, lay, lane, load, vec);
        const u32 k =
            __reduce_add_sync(PARSUM_K_FULL_MASK, (u32)__popc(t.sel));
        if (lane == 0)
            s_w[warp] = k;
        __syncthreads();
        if (warp == 0) {
            const u32 tc = __reduce_add_sync(PARSUM_K_FULL_MASK,
                                             lane < ST_NWARP ? s_w[lane] : 0u);
            lookback_publish(la, c, (u64)tc, lane);
            sum += tc;
        }
        __syncthreads();
    }
    if (tid == 0 && sum != 0u)
        atomicAdd(totals, sum);
}

#endif /* __CUDACC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SELECT_TILE_CUH */
