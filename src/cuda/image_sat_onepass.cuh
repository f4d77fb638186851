/*
 * image_sat_onepass.cuh - the one-pass summed-area table of integer
 * accumulators (sat_onepass_kernel; the idea at the top of image_sat.cuh):
 * decoupled look-backs along the band and down the strip, then the rows.
 */
#ifndef PARSUM_IMAGE_SAT_ONEPASS_CUH
#define PARSUM_IMAGE_SAT_ONEPASS_CUH

#include "image_sat.cuh"
#include "lookback.cuh"

#include <type_traits>

namespace parsum_img {

/* Look-back state of the one-pass table, per tile t = band * strips +
 * strip (status words zeroed before the launch, with the tile counter):
 *   hst[t], hagg/hinc[t][MAX_BAND * CH]: the tile's row totals, and those
 *     plus everything left of it in the band (per row);
 *   vst[t], vagg/vinc[t][STRIP * CH]: the tile's column totals, and those
 *     plus everything above it in the strip (per column);
 *   wagg/winc[t][CH]: what the band's rows left of the tile add up to,
 *     and that plus the same for every band above: the block of the image
 *     above and left of the tile, once the bands above are added (under
 *     vst here; sat_u8_kernel packs them with a status of their own, wpk). */
template <class Acc>
struct sat_lb {
    u32 *counter, *hst, *vst;
    /* sat_u8_kernel only: w per tile with its status in one word (status
     * in the low half, SAT_AGG: wagg, SAT_INC: winc, in the high half). */
    unsigned long long *wpk;
    /* sat_u8_kernel only: tile values that carry their own tag (value in
     * the low half, tag | 1 in the high half; no status word, no fence):
     * hwt[t][0..63] the row totals, hwt[t][64..127] the inclusive row
     * sums; vwt[t][2 i], [2 i + 1] thread i's column totals (16-bit
     * pairs). */
    unsigned long long *hwt, *vwt;
    Acc *hagg, *hinc, *vagg, *vinc, *wagg, *winc;
    /* Status words tagged with the call (sat_u8_kernel; sat_lb_take in
     * image.cu, parsum__cuda_tagged_status): a word holds status | tag, and a word with another tag
     * reads as unpublished, so the words need no zeroing before a call;
     * tile_base: what the never-reset counter held when the call began.
     * Both 0 for status words zeroed before the call. */
    u32 tag, tile_base;
};

constexpr u32 SAT_AGG = 1, SAT_INC = 2;

/* Status words are read through parsum_k::status_of (lookback.cuh), the
 * scan's: 0 unless this call (sat_lb::tag) wrote the word. */

/* Whether a look-back window of one warp can be summed, lane k holding
 * the status v of the k-th predecessor: every one up to the nearest
 * inclusive one has published; last: that one's lane (-1: none in the
 * window, all 32 are summed and the look-back goes on). */
__device__ __forceinline__ bool sat_window_ready(u32 v, int &last)
{
    const unsigned inc = __ballot_sync(0xffffffffu, v == SAT_INC);
    const unsigned none = __ballot_sync(0xffffffffu, v == 0u);
    last = __ffs(inc) - 1;
    const unsigned need =
        last < 0 || last == 31 ? 0xffffffffu : (2u << last) - 1u;
    return (none & need) == 0u;
}

/* Waits until the window of predecessors pred(base) .. pred(base + 31)
 * (those below n; lane k reads pred(base + k)'s status, tagged with tag)
 * can be summed (sat_window_ready), then fences so that their values can
 * be read. Returns the nearest inclusive one's lane, -1 if none. Past the
 * first tile of the band or strip there is nothing to add, which ends the
 * look-back like an inclusive value. */
template <class Pred>
__device__ __forceinline__ int sat_window_wait(const u32 *st, u64 n, u64 base,
                                               Pred pred, u32 tag)
{
    const int lane = threadIdx.x & 31;
    int last;
    for (;;) {
        const u32 v = base + lane < n
                          ? parsum_k::status_of(
                                parsum_k::ld_status(st + pred(base + lane)), tag)
                          : SAT_INC;
        if (sat_window_ready(v, last))
            break;
    }
    parsum_k::fence_gpu();
    return last;
}

/* Decoupled look-back of one warp (all lanes call; warp-uniform n):
 * pred(k) is the tile k + 1 steps back, for k < n; add(p, inc) adds tile
 * p's values, its inclusive ones when inc. Lane k reads the status of
 * pred(base + k), so a window of 32 predecessors costs one round trip:
 * up to the nearest inclusive one, all must have published (else read
 * again); their values are then added nearest first. Tile values are
 * read with __ldcg only: they were written by other multiprocessors after
 * this one may have cached the lines in L1. UNROLL: predecessors whose
 * values are loaded together. */
template <int UNROLL = 4, class Pred, class Add>
__device__ __forceinline__ void sat_lookback(const u32 *st, u64 n, Pred pred,
                                             Add add, u32 tag = 0)
{
    for (u64 base = 0; base < n; base += 32) {
        const int last = sat_window_wait(st, n, base, pred, tag);
        const int cnt = last < 0 ? 32 : last + 1;
#pragma unroll UNROLL
        for (int j = 0; j < cnt; j++)
            if (base + j < n)
                add(pred(base + j), j == last);
        if (last >= 0)
            return;
    }
}

/* Makes this block's stores before the call visible, then sets status v
 * of tile t (one thread; tag: sat_lb::tag). Contains a barrier. */
__device__ __forceinline__ void sat_post(u32 *st, u64 t, u32 v, u32 tag = 0)
{
    parsum_k::fence_gpu();
    __syncthreads();
    if (threadIdx.x == 0)
        parsum_k::st_status(st + t, v | tag);
}

/* The exclusive sums along the band of the tile's row totals (threads i <
 * MAX_BAND * CH, whole warps, each own one; rt: the tile's own).
 * Publishes the inclusive ones. */
template <class Acc, int CH>
__device__ __forceinline__ Acc sat_lookback_rows(const sat_lb<Acc> &lb,
                                                 u64 tile, u64 s, Acc rt)
{
    constexpr int NH = MAX_BAND * CH;
    const int i = threadIdx.x;
    Acc x = 0;
    if (i < NH) {
        sat_lookback(
            lb.hst, s, [&](u64 k) { return tile - 1 - k; },
            [&](u64 p, bool inc) {
                x += __ldcg((inc ? lb.hinc : lb.hagg) + p * NH + i);
            });
        lb.hinc[tile * NH + i] = x + rt;
    }
    sat_post(lb.hst, tile, SAT_INC);
    return x;
}

/* The exclusive sums down the strip of the tile's column totals col and
 * of w (the same per channel), into vx and wx; publishes the inclusive
 * ones. */
template <class Acc, int CH>
__device__ __forceinline__ void sat_lookback_cols(const sat_lb<Acc> &lb,
                                                  u64 tile, u64 b, u64 strips,
                                                  const Acc (&col)[PIX][CH],
                                                  const Acc (&w)[CH],
                                                  Acc (&vx)[PIX][CH],
                                                  Acc (&wx)[CH])
{
    constexpr int NV = STRIP * CH;
    const u64 me = threadIdx.x * PIX * CH;
#pragma unroll
    for (int c = 0; c < CH; c++) {
        wx[c] = 0;
#pragma unroll
        for (int j = 0; j < PIX; j++)
            vx[j][c] = 0;
    }
    sat_lookback(
        lb.vst, b, [&](u64 k) { return tile - (k + 1) * strips; },
        [&](u64 p, bool inc) {
            const Acc *vs = (inc ? lb.vinc : lb.vagg) + p * NV + me;
            const Acc *ws = (inc ? lb.winc : lb.wagg) + p * CH;
#pragma unroll
            for (int c = 0; c < CH; c++) {
                wx[c] += __ldcg(ws + c);
#pragma unroll
                for (int j = 0; j < PIX; j++)
                    vx[j][c] += __ldcg(vs + j * CH + c);
            }
        });
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            lb.vinc[tile * NV + me + j * CH + c] = vx[j][c] + col[j][c];
    if (threadIdx.x < CH)
        lb.winc[tile * CH + threadIdx.x] = wx[threadIdx.x] + w[threadIdx.x];
    sat_post(lb.vst, tile, SAT_INC);
}

/* Inclusive sum over the warp's lanes (lower lanes first). */
template <class Acc>
__device__ __forceinline__ Acc warp_incl_scan(Acc v)
{
    if constexpr (std::is_same<Acc, u32>::value) {
#pragma unroll
        for (int d = 1; d < 32; d *= 2)
            shfl_up_add(v, d);
    } else {
        const int lane = threadIdx.x & 31;
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            Acc o = shfl_up(v, d);
            if (lane >= d)
                v += o;
        }
    }
    return v;
}

/* One table row of this thread from sat_tile_rows_warp: acc[j] is pixel
 * px0 + j's entry, before = the entry left of px0 (0 at the left edge).
 * A full chunk is stored as one aligned piece per 16 bytes without any
 * shuffle: in the default layout (pad 1) the thread writes columns px0 ..
 * px0 + PIX - 1, i.e. before and its first PIX - 1 pixels, and the last
 * pixel of the row is written by its owner once more; otherwise (partial
 * chunk, unaligned table) pixel by pixel. */
template <class Tab, class Acc, int CH>
__device__ __forceinline__ void store_row_own(Tab *orow, u64 px0, u64 w,
                                              int pad, bool vec,
                                              const Acc (&acc)[PIX][CH],
                                              const Acc (&before)[CH])
{
    if (vec && px0 + PIX <= w) {
        store_piece<Tab, Acc, CH>(orow + px0 * CH, pad, before, acc);
        if (pad && px0 + PIX == w)
#pragma unroll
            for (int c = 0; c < CH; c++)
                orow[w * CH + c] = (Tab)acc[PIX - 1][c];
        return;
    }
    if (pad && px0 < w)
#pragma unroll
        for (int c = 0; c < CH; c++)
            orow[px0 * CH + c] = (Tab)before[c];
#pragma unroll
    for (int j = 0; j < PIX; j++)
        if (px0 + j < w && (pad == 0 || j + 1 < PIX || px0 + PIX == w))
#pragma unroll
            for (int c = 0; c < CH; c++)
                orow[(px0 + j + pad) * CH + c] = (Tab)acc[j][c];
}

/* G rows of sat_tile_rows_warp (FULL: all of them below y1, so no row
 * check breaks the unrolled loop and the compiler may overlap the rows'
 * independent work). */
template <bool FULL, bool CACHE, class Src, class Acc, class Tab, int CH>
__device__ __forceinline__ void sat_rows_group(const img_in &in,
                                               const img_out &tab, int pad,
                                               const term_args &ta, u64 px0,
                                               u64 y0, u64 yg, u64 y1,
                                               Acc (&acc)[PIX][CH],
                                               Acc (&colc)[CH],
                                               Acc (*rc)[WARPS][CH],
                                               u32 *cache)
{
    constexpr int G = rows_ahead<Src, CH>::value;
    constexpr int W = chunk<Src, CH>::WORDS;
    const int warp = threadIdx.x >> 5;
    chunk<Src, CH> raw[G];
#pragma unroll
    for (int r = 0; r < G; r++)
        if (FULL || yg + r < y1) {
            if constexpr (CACHE) {
#pragma unroll
                for (int k = 0; k < W; k++)
                    raw[r].w[k] = *cache_at(cache, yg + r - y0, k, W);
            } else {
                load_chunk<Src, CH>(in.data + (yg + r) * in.pitch, px0,
                                    in.width, ta.align, raw[r]);
            }
        }
#pragma unroll
    for (int r = 0; r < G; r++) {
        const u64 y = yg + r;
        if (!FULL && y >= y1)
            break; /* uniform across the block */
        Acc t[PIX][CH], before[CH];
        chunk_terms<Src, Acc, CH>(raw[r], px0, in.width, ta.sq, ta.off, t);
#pragma unroll
        for (int c = 0; c < CH; c++) {
            colc[c] += t[0][c];
            Acc run = 0;
#pragma unroll
            for (int j = 0; j < PIX; j++) {
                run += t[j][c];
                t[j][c] = run;
            }
            Acc base = rc[y - y0][warp][c] + (warp_incl_scan(run) - run);
#pragma unroll
            for (int j = 0; j < PIX; j++)
                acc[j][c] += base + t[j][c];
            before[c] = acc[0][c] - colc[c];
        }
        Tab *orow = reinterpret_cast<Tab *>(tab.data + (y + pad) * tab.pitch);
        store_row_own<Tab, Acc, CH>(orow, px0, in.width, pad, ta.store_vec,
                                    acc, before);
    }
}

/* sat_tile_rows without block scans: each warp writes its own 128 pixels
 * of every row, starting from rc[r][warp], what row y0 + r adds up to
 * left of the warp's pixels (strip carry plus the warps before it), so
 * warps never wait for each other and keep G rows of loads in flight.
 * colc follows the column of px0 (its sum from the top of the image):
 * acc[0] less it is the entry left of px0, which the aligned stores
 * need (store_row_own). */
template <bool CACHE, class Src, class Acc, class Tab, int CH>
__device__ __forceinline__ void sat_tile_rows_warp(const img_in &in,
                                                   const img_out &tab, int pad,
                                                   const term_args &ta, u64 s,
                                                   u64 px0, u64 y0, u64 y1,
                                                   Acc (&acc)[PIX][CH],
                                                   Acc (&colc)[CH],
                                                   Acc (*rc)[WARPS][CH],
                                                   u32 *cache)
{
    if (pad && y0 == 0)
        sat_zero_top<Tab, CH>(tab, px0, in.width, s);
    constexpr int G = rows_ahead<Src, CH>::value;
    for (u64 yg = y0; yg < y1; yg += G) {
        if (yg + G <= y1)
            sat_rows_group<true, CACHE, Src, Acc, Tab, CH>(
                in, tab, pad, ta, px0, y0, yg, y1, acc, colc, rc, cache);
        else
            sat_rows_group<false, CACHE, Src, Acc, Tab, CH>(
                in, tab, pad, ta, px0, y0, yg, y1, acc, colc, rc, cache);
    }
}

/* Blocks per multiprocessor the one-pass kernel is compiled for: the
 * register budget. With the pixels cached in shared memory the row pass
 * keeps no loads in flight and needs fewer registers. */
template <class Acc, int CH, bool CACHE>
__host__ __device__ constexpr int sat_onepass_blocks()
{
    return sizeof(Acc) * CH > 4 ? 1 : CACHE ? 3 : 2;
}

/* The whole table in one pass (integer accumulators; see the top). With
 * CACHE the tile's raw pixels stay in dynamic shared memory between the
 * two passes (band_rows * THREADS * WORDS words) instead of being read
 * again from L2. */
template <class Src, class Acc, class Tab, int CH, bool CACHE>
__global__ void __launch_bounds__(THREADS,
                                  (sat_onepass_blocks<Acc, CH, CACHE>()))
    sat_onepass_kernel(img_in in, img_out tab, int pad, sat_geom g,
                       term_args ta, sat_lb<Acc> lb)
{
    extern __shared__ u32 cache[];
    __shared__ Acc part[MAX_BAND][WARPS][CH];
    __shared__ Acc hx[MAX_BAND * CH]; /* row carries from the left */
    __shared__ Acc sm[WARPS * CH];
    __shared__ u32 s_tile;
    constexpr int NH = MAX_BAND * CH, NV = STRIP * CH;
    const u64 tile = parsum_k::claim_tile(lb.counter, s_tile, false);
    const u64 b = tile / g.strips, s = tile % g.strips;
    const u64 px0 = s * STRIP + threadIdx.x * PIX;
    const u64 y0 = b * g.band_rows;
    const u64 y1 = min(in.height, y0 + g.band_rows);
    const u64 me = threadIdx.x * PIX * CH;
    const int i = threadIdx.x;

    Acc col[PIX][CH];
    sat_tile_sums<Src, Acc, CH, rows_ahead<Src, CH>::deep, CACHE>(
        in, ta, px0, y0, y1, col, part, cache);
    __syncthreads();
    /* Row totals first: the next tile of the band waits for them. */
    Acc rt = 0;
    if (i < NH) {
        rt = (u64)(i / CH) < y1 - y0 ? sat_row_total<Acc, CH>(part, i / CH, i % CH)
                                     : Acc(0);
        lb.hagg[tile * NH + i] = rt;
    }
    if (s > 0)
        sat_post(lb.hst, tile, SAT_AGG);
    const Acc x = sat_lookback_rows<Acc, CH>(lb, tile, s, rt);
    if (i < NH) {
        hx[i] = x;
        /* part becomes the row carries of sat_tile_rows_warp. */
        Acc run = x;
        for (int w = 0; w < WARPS; w++) {
            Acc p = part[i / CH][w][i % CH];
            part[i / CH][w][i % CH] = run;
            run += p;
        }
    }
    __syncthreads();
    Acc w[CH];
#pragma unroll
    for (int c = 0; c < CH; c++) {
        w[c] = 0;
        for (u64 r = 0; r < y1 - y0; r++)
            w[c] += hx[r * CH + c];
    }
    /* Column totals and w: the tile below waits for them. */
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            lb.vagg[tile * NV + me + j * CH + c] = col[j][c];
    if (i < CH)
        lb.wagg[tile * CH + i] = w[i];
    if (b > 0)
        sat_post(lb.vst, tile, SAT_AGG);
    Acc vx[PIX][CH], wx[CH], all[CH];
    sat_lookback_cols<Acc, CH>(lb, tile, b, g.strips, col, w, vx, wx);
    /* The table row above the band: the block above-left (wx) plus the
     * strip's column sums above the band, summed along the strip. */
    Acc colc[CH];
#pragma unroll
    for (int c = 0; c < CH; c++)
        colc[c] = vx[0][c];
    sat_strip_prefix<Acc, CH>(vx, wx, all, sm);
    sat_tile_rows_warp<CACHE, Src, Acc, Tab, CH>(in, tab, pad, ta, s, px0,
                                                 y0, y1, vx, colc, part, cache);
}

} /* namespace parsum_img */

#endif
