/*
 * image_sat_u8_split.cuh - the summed-area table of one-channel 8-bit
 * images into U32 tables in three kernels, on sat_u8_kernel's tiles (64
 * rows x 1024 pixels) and with its row pass (image_sat_u8.cuh), but with
 * the look-backs replaced by a carry step:
 *   1. sat_u8_sums_kernel: per tile, its row totals (and those of its left
 *      half), its column totals, the column sums of its rows above each
 *      row group (16-bit pairs) and its total: one read of the image, by
 *      sat_u8_kernel's first pass;
 *   2. sat_u8_carry_kernel: the column totals' exclusive sums down each
 *      strip, the tile totals' too, the row totals' exclusive sums along
 *      each band;
 *   3. sat_u8_rows_kernel: per tile, each warp (a row group of a half
 *      strip) starts its row pass from the carries, its pixels arriving by
 *      cp.async in a ring of shared memory (no registers held): no
 *      barrier, nothing waits for another tile.
 * The image is read twice (6 bytes a pixel move instead of 5); what it
 * saves is the one-pass kernel's look-back chains, which cost most where
 * the image is a few waves of tiles: on an H200, 4096^2 in 0.0386 ms
 * against 0.0430, 2048^2 0.0194 against 0.0234, but 8192^2 0.124 against
 * 0.121 and 16384^2 0.457 against 0.418 (image.cu picks by tile count).
 * Step 3 takes its tiles in the reverse order of step 1, so that the part
 * of the image step 1 read last is read again from L2.
 * All sums are modulo 2^32 and every grouping is fixed by the geometry.
 */
#ifndef PARSUM_IMAGE_SAT_U8_SPLIT_CUH
#define PARSUM_IMAGE_SAT_U8_SPLIT_CUH

#include "image_sat_u8.cuh"

namespace parsum_img {

/* Where the steps meet (scratch): per tile t = band * strips + strip, its
 * MAX_BAND row totals rt, those of its left half rtl and its rows' sums
 * left of the strip hx; STRIP column totals ct and the column sums above
 * the tile cx; per row group q = 1 .. U8_RGROUPS - 1 the column sums of
 * the tile's rows above q, as 16-bit pairs pq (layout of u8_first_pass's
 * cs: [q - 1][word k][thread i], thread i's columns 4 i .. 4 i + 3, word 0
 * columns + 0 and + 2, word 1 + 1 and + 3); its total tt and the totals
 * of the tiles above it in its strip tx. Step 1 writes rt, rtl, ct, pq,
 * tt; step 2 hx, cx, tx. */
struct sat_u8_carries {
    u32 *rt, *rtl, *hx, *ct, *cx, *pq, *tt, *tx;
};

/* Step 2's geometry: a column block takes U8C_LANES x 4 columns of a strip
 * down all its bands, in U8C_SEGS segments of bands (thread j U8C_LANES +
 * l: segment j, columns 4 l .. 4 l + 3); loads go U8C_BATCH at a time, all
 * issued before any store (stores to another array could alias them). */
constexpr int U8C_LANES = 8;
constexpr int U8C_SEGS = THREADS / U8C_LANES;
constexpr int U8C_CHUNKS = STRIP / (4 * U8C_LANES);
constexpr int U8C_BATCH = 8;

/* Step 1: sat_u8_kernel's first pass without the cache (its row totals
 * per half, 16-bit column sums per warp), then per column the prefix over
 * the row groups: pq for groups 1 .. 3, the totals ct. */
__global__ void __launch_bounds__(THREADS, U8_BLOCKS)
    sat_u8_sums_kernel(img_in in, sat_geom g, sat_u8_carries c)
{
    __shared__ u32 cs[WARPS][2 * U8_GROUPS][32];
    __shared__ u32 rowtot[MAX_BAND][2], half_tot[2];
    const int i = threadIdx.x, lane = i & 31, warp = i >> 5;
    const int half = warp & 1, q = warp >> 1;
    const u64 tile = blockIdx.x;
    const auto [b, s, x0, y0, xh, rows, rw, r0, nrows] =
        u8_place_of(tile, g, in, q, half);
    if (xh + U8_HALF <= in.width)
        u8_first_pass<true, false>(in, xh, y0 + r0, r0, nrows, rw, rowtot,
                                   cs[warp], nullptr);
    else
        u8_first_pass<false, false>(in, xh, y0 + r0, r0, nrows, rw, rowtot,
                                    cs[warp], nullptr);
    __syncthreads();
    if (i < MAX_BAND) {
        const u32 l = i < rows ? rowtot[i][0] : 0u;
        const u32 r = i < rows ? rowtot[i][1] : 0u;
        c.rt[tile * MAX_BAND + i] = l + r;
        c.rtl[tile * MAX_BAND + i] = l;
        const u32 t = warp_sum(l + r);
        if (lane == 0)
            half_tot[warp] = t;
    }
    /* Thread i: columns 4 i .. 4 i + 3, group (i / 32) % 4 of lane i % 32
     * in half i / 128, as u8_col_suffix. */
    const int hi = i / 128, mi = (i / 32) % 4;
    u32 pe = 0, po = 0;
#pragma unroll
    for (int k = 0; k < U8_RGROUPS; k++) {
        if (k > 0) {
            u32 *pq = c.pq + (tile * (U8_RGROUPS - 1) + k - 1) * 2 * THREADS;
            pq[i] = pe;
            pq[THREADS + i] = po;
        }
        pe += cs[2 * k + hi][mi][lane];
        po += cs[2 * k + hi][U8_GROUPS + mi][lane];
    }
    reinterpret_cast<uint4 *>(c.ct + tile * STRIP)[i] =
        make_uint4(pe & 0xffffu, po & 0xffffu, pe >> 16, po >> 16);
    __syncthreads();
    if (i == 0)
        c.tt[tile] = half_tot[0] + half_tot[1];
}

/* Step 2. Blocks [0, strips * U8C_CHUNKS): U8C_LANES x 4 columns of a
 * strip, with the strip's tile totals in the chunk-0 blocks' lane 0. Later
 * blocks: the row sums along the bands, a thread per (band, row). */
__global__ void __launch_bounds__(THREADS)
    sat_u8_carry_kernel(sat_geom g, sat_u8_carries c)
{
    __shared__ uint4 seg[U8C_SEGS][U8C_LANES];
    __shared__ u32 segt[U8C_SEGS];
    const int i = threadIdx.x;
    const u64 col_blocks = g.strips * U8C_CHUNKS;
    if (blockIdx.x >= col_blocks) {
        const u64 k = (blockIdx.x - col_blocks) * THREADS + i;
        const u64 b = k / MAX_BAND, r = k % MAX_BAND;
        if (b >= g.bands)
            return;
        const u64 at0 = b * g.strips * MAX_BAND + r;
        u32 x = 0;
        for (u64 s0 = 0; s0 < g.strips; s0 += U8C_BATCH) {
            u32 v[U8C_BATCH];
#pragma unroll
            for (int k2 = 0; k2 < U8C_BATCH; k2++)
                v[k2] = s0 + k2 < g.strips ? c.rt[at0 + (s0 + k2) * MAX_BAND] : 0u;
#pragma unroll
            for (int k2 = 0; k2 < U8C_BATCH; k2++)
                if (s0 + k2 < g.strips) {
                    c.hx[at0 + (s0 + k2) * MAX_BAND] = x;
                    x += v[k2];
                }
        }
        return;
    }
    const u64 s = blockIdx.x / U8C_CHUNKS;
    const int chunk = blockIdx.x % U8C_CHUNKS;
    const int l = i % U8C_LANES, j = i / U8C_LANES;
    const bool tot = chunk == 0 && l == 0;
    const u64 per = (g.bands + U8C_SEGS - 1) / U8C_SEGS;
    const u64 b0 = min(g.bands, j * per), b1 = min(g.bands, b0 + per);
    const u64 col = chunk * U8C_LANES + l; /* in uint4 units */
    auto ct_at = [&](u64 b) {
        return reinterpret_cast<const uint4 *>(c.ct + (b * g.strips + s) * STRIP) + col;
    };
    /* The segment's first U8C_BATCH bands stay in registers for the second
     * pass (all of it, unless the image has more than U8C_SEGS *
     * U8C_BATCH bands). */
    uint4 a0[U8C_BATCH];
    u32 t0[U8C_BATCH];
    auto load = [&](u64 bb, uint4 (&a)[U8C_BATCH], u32 (&at)[U8C_BATCH]) {
#pragma unroll
        for (int k = 0; k < U8C_BATCH; k++) {
            a[k] = bb + k < b1 ? *ct_at(bb + k) : make_uint4(0u, 0u, 0u, 0u);
            at[k] = tot && bb + k < b1 ? c.tt[(bb + k) * g.strips + s] : 0u;
        }
    };
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    u32 t = 0;
    for (u64 bb = b0; bb < b1; bb += U8C_BATCH) {
        uint4 a[U8C_BATCH];
        u32 at[U8C_BATCH];
        load(bb, a, at);
#pragma unroll
        for (int k = 0; k < U8C_BATCH; k++) {
            v.x += a[k].x, v.y += a[k].y, v.z += a[k].z, v.w += a[k].w;
            t += at[k];
            if (bb == b0)
                a0[k] = a[k], t0[k] = at[k];
        }
    }
    seg[j][l] = v;
    if (tot)
        segt[j] = t;
    __syncthreads();
    v = make_uint4(0u, 0u, 0u, 0u);
    t = 0;
#pragma unroll
    for (int k = 0; k < U8C_SEGS; k++)
        if (k < j) {
            const uint4 a = seg[k][l];
            v.x += a.x, v.y += a.y, v.z += a.z, v.w += a.w;
            if (tot)
                t += segt[k];
        }
    for (u64 bb = b0; bb < b1; bb += U8C_BATCH) {
        uint4 a[U8C_BATCH];
        u32 at[U8C_BATCH];
        if (bb == b0) {
#pragma unroll
            for (int k = 0; k < U8C_BATCH; k++)
                a[k] = a0[k], at[k] = t0[k];
        } else {
            load(bb, a, at);
        }
#pragma unroll
        for (int k = 0; k < U8C_BATCH; k++) {
            if (bb + k >= b1)
                break;
            reinterpret_cast<uint4 *>(c.cx + ((bb + k) * g.strips + s) * STRIP)[col] = v;
            v.x += a[k].x, v.y += a[k].y, v.z += a[k].z, v.w += a[k].w;
            if (tot) {
                c.tx[(bb + k) * g.strips + s] = t;
                t += at[k];
            }
        }
    }
}

/* Step 3's pixels: a warp's rw = 16 rows arrive by cp.async in 4 groups of
 * 4 rows, into a ring of U8R_SLOTS rows of shared memory (16 bytes a lane
 * a row): groups 0 and 1 are requested before the row pass, group k + 2
 * once group k's rows have been read (into its slots), and the pass waits
 * for each group before its first row. No registers hold pixels in
 * flight, and half the tile's 64 KB of shared memory is enough. Words
 * that start past the width read nothing (and are not stored). */
constexpr int U8R_SLOTS = 8;
/* Resident blocks per multiprocessor step 3 is compiled for (64
 * registers; 32 KB of ring a block). */
constexpr int U8R_BLOCKS = 4;
struct u8_src_ring {
    const unsigned char *p; /* the warp's first row, first column */
    u64 pitch, cols;        /* cols: the image's columns from p */
    int nrows;
    uint4 *ring;            /* the warp's U8R_SLOTS x 32 */
    __device__ void issue(int k) const
    {
        const int lane = threadIdx.x & 31;
        for (int r = 4 * k; r < 4 * k + 4 && r < nrows; r++) {
            u32 *dst = reinterpret_cast<u32 *>(ring + (r % U8R_SLOTS) * 32 + lane);
#pragma unroll
            for (int m = 0; m < U8_GROUPS; m++)
                cp_async<4>(dst + m, p + (u64)r * pitch + u8_col(m, lane),
                          u8_col(m, lane) < cols ? 4 : 0);
        }
        cp_async_commit();
    }
    __device__ uint4 operator()(int r) const
    {
        if (r % 4 == 0) {
            switch (r / 4) {
            case 0: cp_async_wait<1>(); break;
            case 1: issue(2); cp_async_wait<1>(); break;
            case 2: issue(3); cp_async_wait<1>(); break;
            default: cp_async_wait<0>(); break;
            }
        }
        return ring[(r % U8R_SLOTS) * 32 + (threadIdx.x & 31)];
    }
};

/* Step 3's row pass adds to row r of the warp the row's sum left of the
 * strip and, in the right half, the left half's row total: held by lane
 * (r0 + r) % 32 in v[(r0 + r) / 32]. */
struct u8_rowx_lanes {
    u32 v0, v1;
    int r0;
    __device__ u32 operator()(int r) const
    {
        const int k = r0 + r;
        return __shfl_sync(0xffffffffu, k < 32 ? v0 : v1, k & 31);
    }
};

/* The lane's 16 column sums above row group q of half h: the tile's cx
 * plus pq's 16-bit pairs (none for q = 0), into d[m][j]. */
__device__ __forceinline__ void u8_split_cols_above(const sat_u8_carries &c,
                                                    u64 tile, int q, int h,
                                                    u32 (&d)[U8_GROUPS][4])
{
    const int lane = threadIdx.x & 31;
    const u32 *pe =
        q > 0 ? c.pq + (tile * (U8_RGROUPS - 1) + q - 1) * 2 * THREADS : nullptr;
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++) {
        const int t = 128 * h + 32 * m + lane; /* step 1's thread */
        const uint4 v =
            __ldcg(reinterpret_cast<const uint4 *>(c.cx + tile * STRIP) + t);
        const u32 re = q > 0 ? __ldcg(pe + t) : 0u;
        const u32 ro = q > 0 ? __ldcg(pe + THREADS + t) : 0u;
        d[m][0] = v.x + (re & 0xffffu);
        d[m][1] = v.y + (ro & 0xffffu);
        d[m][2] = v.z + (re >> 16);
        d[m][3] = v.w + (ro >> 16);
    }
}

/* Step 3. Warp w: row group w / 2 of half w % 2, as in sat_u8_kernel;
 * tile blockIdx.x from the end. The block above-left is the sum of tx
 * over the strips to the left. */
template <bool PAD>
__global__ void __launch_bounds__(THREADS, U8R_BLOCKS)
    sat_u8_rows_kernel(img_in in, img_out tab, sat_geom g, sat_u8_carries c)
{
    extern __shared__ uint4 u8_cache[];
    const int i = threadIdx.x, lane = i & 31, warp = i >> 5;
    const int half = warp & 1, q = warp >> 1;
    const u64 tiles = g.bands * g.strips;
    const u64 tile = tiles - 1 - blockIdx.x;
    const auto [b, s, x0, y0, xh, rows, rw, r0, nrows] =
        u8_place_of(tile, g, in, q, half);
    if (PAD && b == 0)
        sat_zero_top<u32, 1>(tab, x0 + 4 * i, in.width, s);
    if (nrows == 0 || xh >= in.width)
        return;
    const u8_src_ring src{
        reinterpret_cast<const unsigned char *>(in.data) + (y0 + r0) * in.pitch + xh,
        in.pitch, in.width - xh, nrows,
        u8_cache + (u64)warp * U8R_SLOTS * 32};
    src.issue(0);
    src.issue(1);
    const u32 *hx = c.hx + tile * MAX_BAND, *rtl = c.rtl + tile * MAX_BAND;
    u32 v0 = __ldcg(hx + lane), v1 = __ldcg(hx + 32 + lane);
    /* The tile's rows above the warp's, left of the half strip. */
    const u32 h = warp_sum((lane < r0 ? v0 : 0u) + (lane + 32 < r0 ? v1 : 0u));
    if (half) {
        v0 += __ldcg(rtl + lane);
        v1 += __ldcg(rtl + 32 + lane);
    }
    u32 wx = 0;
    for (u64 k = lane; k < s; k += 32)
        wx += __ldcg(c.tx + b * g.strips + k);
    u32 base = warp_sum(wx) + h;
    u32 acc[U8_GROUPS][4], colc[U8_GROUPS];
    if (half) {
        u32 left[U8_GROUPS][4];
        u8_split_cols_above(c, tile, q, 0, left);
        base += u8_warp_total(left);
    }
    u8_split_cols_above(c, tile, q, half, acc);
    u8_row_start(acc, colc, base);
    const u8_rowx_lanes rowx{v0, v1, r0};
    if (xh + U8_HALF <= in.width)
        u8_row_pass<PAD, true>(in, tab, xh, y0 + r0, nrows, src, rowx, acc, colc);
    else
        u8_row_pass<PAD, false>(in, tab, xh, y0 + r0, nrows, src, rowx, acc, colc);
}

} /* namespace parsum_img */

#endif
