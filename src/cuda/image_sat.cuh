/*
 * image_sat.cuh - the summed-area table kernels (image.cu), over tiles of
 * BAND rows x STRIP pixels (256 threads, 4 consecutive pixels each).
 *
 * Integer tables (uint32 / uint64 accumulators) take one pass,
 * sat_onepass_kernel (image_sat_onepass.cuh): tiles are claimed in row-major order; a tile reads
 * its pixels once for its row totals and column totals, learns what lies
 * to its left (per row) and above it (per column) by two decoupled
 * look-backs (Merrill & Garland 2016) along its band and down its strip,
 * then reads its pixels again (from L2) and writes its part of the table.
 * The image is read from memory once and the table written once; the
 * look-back vectors stay in L2. Sums modulo 2^bits are exactly
 * associative, so the timing-dependent grouping of the classic look-back
 * cannot change a bit of the result. The rows are written warp by warp
 * with no barrier (each warp's row carries come from the row totals of
 * the first pass) and with aligned 16-byte stores that need no shuffle:
 * the entry left of a thread's first pixel is its own first entry less
 * the column sum it keeps (store_row_own).
 *
 * Float tables (float64 accumulators) need a grouping that is a function
 * of the image size only, so they take three steps:
 *   1. sat_band_kernel: per tile, the column sums of its rows and the row
 *      totals of its strip (reads the image);
 *   2. sat_carry_* kernels: exclusive sums of the column sums down the
 *      bands, then prefix sums along each band's row: the table row just
 *      above each band; and exclusive sums of the strip row totals along
 *      each row: what each strip's rows start from (small arrays);
 *   3. sat_final_kernel: per tile, row prefix sums (block scan) started
 *      from the strip carry, added to running column sums started from the
 *      band's carry row, stored as the table (reads the image again).
 * The notes' row scans + transpose + row scans (seed 003) would move every
 * table entry four times. Accumulators: uint32 for U32 tables and uint64
 * for 64-bit integer ones (sums modulo 2^bits, as the header defines),
 * float64 for float tables.
 */
#ifndef PARSUM_IMAGE_SAT_CUH
#define PARSUM_IMAGE_SAT_CUH

#include "image_kernels.cuh"

namespace parsum_img {

/* Rows loaded ahead per group: about 64 bytes of raw data per thread in
 * flight (16 rows of u8 pixels), enough to cover the memory latency at
 * the occupancy these kernels get; SUB rows share one block scan. */
template <class Src, int CH>
struct rows_ahead {
    static constexpr int W = chunk<Src, CH>::WORDS;
    static constexpr int value = W >= 16 ? 1 : 16 / W > 8 ? 8 : 16 / W;
    static constexpr int SUB = value < 4 ? value : 4;
    /* Twice as deep (up to 16 rows, 128 bytes), for the one-pass kernel,
     * which has fewer blocks per multiprocessor to hide the latency. */
    static constexpr int deep = W >= 16 ? 2 : 32 / W > 16 ? 16 : 32 / W;
};

struct sat_geom {
    u64 strips, bands, band_rows;
};

/* The raw words of row r of a tile in the shared-memory cache of the
 * one-pass kernel: word k of thread i at (r * WORDS + k) * THREADS + i, so
 * a warp's accesses fall in distinct banks. */
__device__ __forceinline__ u32 *cache_at(u32 *cache, u64 r, int k, int words)
{
    return cache + ((unsigned)r * words + k) * THREADS + threadIdx.x;
}

/* Pass over one tile's pixels (rows y0 .. y1 - 1, this thread's PIX
 * pixels from px0): col gets this thread's column sums, part[r][warp] the
 * warp's share of row y0 + r's total (written by lane 0; the caller
 * synchronizes before reading it). With CACHE the raw words go to the
 * shared-memory cache too (cache_at). */
template <class Src, class Acc, int CH,
          int G = rows_ahead<Src, CH>::value, bool CACHE = false>
__device__ __forceinline__ void sat_tile_sums(const img_in &in,
                                              const term_args &ta, u64 px0,
                                              u64 y0, u64 y1,
                                              Acc (&col)[PIX][CH],
                                              Acc (*part)[WARPS][CH],
                                              u32 *cache = nullptr)
{
    constexpr int W = chunk<Src, CH>::WORDS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            col[j][c] = 0;
    for (u64 yg = y0; yg < y1; yg += G) {
        chunk<Src, CH> raw[G];
#pragma unroll
        for (int r = 0; r < G; r++)
            if (yg + r < y1)
                load_chunk<Src, CH>(in.data + (yg + r) * in.pitch, px0,
                                    in.width, ta.align, raw[r]);
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (yg + r >= y1)
                break;
            if constexpr (CACHE)
#pragma unroll
                for (int k = 0; k < W; k++)
                    *cache_at(cache, yg + r - y0, k, W) = raw[r].w[k];
            Acc t[PIX][CH];
            chunk_terms<Src, Acc, CH>(raw[r], px0, in.width, ta.sq, ta.off, t);
            Acc rt[CH];
#pragma unroll
            for (int c = 0; c < CH; c++) {
                rt[c] = 0;
#pragma unroll
                for (int j = 0; j < PIX; j++) {
                    col[j][c] += t[j][c];
                    rt[c] += t[j][c];
                }
                rt[c] = warp_sum(rt[c]);
            }

            if (lane == 0)
#pragma unroll
                for (int c = 0; c < CH; c++)
                    part[yg + r - y0][warp][c] = rt[c];
        }
    }
}

/* Row r's total (over the warps, in warp order) of sat_tile_sums' part. */
template <class Acc, int CH>
__device__ __forceinline__ Acc sat_row_total(Acc (*part)[WARPS][CH], u64 r,
                                             int c)
{
    Acc sum = 0;
    for (int w = 0; w < WARPS; w++)
        sum += part[r][w][c];
    return sum;
}

/* Step 1. colsum: [bands][width * CH]; rowtot: [height][strips][CH]. */
template <class Src, class Acc, int CH>
__global__ void __launch_bounds__(THREADS)
    sat_band_kernel(img_in in, sat_geom g, term_args ta, Acc *colsum,
                    Acc *rowtot)
{
    __shared__ Acc part[MAX_BAND][WARPS][CH];
    const u64 s = blockIdx.x, b = blockIdx.y;
    const u64 px0 = s * STRIP + threadIdx.x * PIX;
    const u64 y0 = b * g.band_rows;
    const u64 y1 = min(in.height, y0 + g.band_rows);
    Acc col[PIX][CH];
    sat_tile_sums<Src, Acc, CH>(in, ta, px0, y0, y1, col, part);
    __syncthreads();
    for (u64 i = threadIdx.x; i < (y1 - y0) * CH; i += THREADS)
        rowtot[((y0 + i / CH) * g.strips + s) * CH + i % CH] =
            sat_row_total<Acc, CH>(part, i / CH, (int)(i % CH));
    Acc *out = colsum + b * in.width * CH;
#pragma unroll
    for (int j = 0; j < PIX; j++)
        if (px0 + j < in.width)
#pragma unroll
            for (int c = 0; c < CH; c++)
                out[(px0 + j) * CH + c] = col[j][c];
}

/* Step 2a: exclusive sums down the bands, column by column (in place).
 * Sixteen bands are loaded before any is summed: the loop is a chain of
 * dependent loads otherwise, one memory latency per band. */
template <class Acc>
__global__ void sat_carry_down_kernel(Acc *colsum, u64 samples, u64 bands)
{
    constexpr int U = 16;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < samples;
         i += (u64)gridDim.x * blockDim.x) {
        Acc run = 0;
        for (u64 b0 = 0; b0 < bands; b0 += U) {
            Acc t[U];
#pragma unroll
            for (int k = 0; k < U; k++)
                t[k] = b0 + k < bands ? colsum[(b0 + k) * samples + i] : Acc(0);
#pragma unroll
            for (int k = 0; k < U; k++)
                if (b0 + k < bands) {
                    colsum[(b0 + k) * samples + i] = run;
                    run += t[k];
                }
        }
    }
}

/* Step 2a': exclusive sums of the strip row totals along each row. */
template <class Acc>
__global__ void sat_carry_strips_kernel(Acc *rowtot, u64 rows, u64 strips,
                                        int ch)
{
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < rows * ch;
         i += (u64)gridDim.x * blockDim.x) {
        u64 y = i / ch;
        int c = (int)(i % ch);
        Acc run = 0;
        for (u64 s = 0; s < strips; s++) {
            Acc *p = rowtot + (y * strips + s) * ch + c;
            Acc t = *p;
            *p = run;
            run += t;
        }
    }
}

/* Inclusive prefix sums over one strip of this thread's PIX values per
 * channel (in place), each plus base; returns the strip's totals in all.
 * Contains the barriers of block_excl_scan. */
template <class Acc, int CH>
__device__ __forceinline__ void sat_strip_prefix(Acc (&t)[PIX][CH],
                                                 const Acc (&base)[CH],
                                                 Acc (&all)[CH], Acc *sm)
{
    Acc tot[CH], excl[CH];
#pragma unroll
    for (int c = 0; c < CH; c++) {
        tot[c] = 0;
#pragma unroll
        for (int j = 0; j < PIX; j++) {
            tot[c] += t[j][c];
            t[j][c] = tot[c];
        }
    }
    block_excl_scan<Acc, CH>(tot, excl, all, sm);
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            t[j][c] += base[c] + excl[c];
}

/* Step 2b: inclusive prefix sums along each band's row (in place, one
 * block per band): the table row just above the band. */
template <class Acc, int CH>
__global__ void __launch_bounds__(THREADS)
    sat_carry_rows_kernel(Acc *colsum, u64 width)
{
    __shared__ Acc sm[WARPS * CH];
    Acc *row = colsum + blockIdx.x * width * CH;
    Acc carry[CH];
#pragma unroll
    for (int c = 0; c < CH; c++)
        carry[c] = 0;
    for (u64 base = 0; base < width; base += STRIP) {
        const u64 px0 = base + threadIdx.x * PIX;
        Acc t[PIX][CH], all[CH];
#pragma unroll
        for (int j = 0; j < PIX; j++)
#pragma unroll
            for (int c = 0; c < CH; c++)
                t[j][c] = px0 + j < width ? row[(px0 + j) * CH + c] : Acc(0);
        sat_strip_prefix<Acc, CH>(t, carry, all, sm);
#pragma unroll
        for (int j = 0; j < PIX; j++)
            if (px0 + j < width)
#pragma unroll
                for (int c = 0; c < CH; c++)
                    row[(px0 + j) * CH + c] = t[j][c];
#pragma unroll
        for (int c = 0; c < CH; c++)
            carry[c] += all[c];
    }
}

/* One thread's aligned 16-byte pieces of a table row at dst: its PIX
 * entries (pad 0), or first and its first PIX - 1 entries (pad 1, the
 * default layout shifted by one column). */
template <class Tab, class Acc, int CH>
__device__ __forceinline__ void store_piece(Tab *dst, int pad,
                                            const Acc (&first)[CH],
                                            const Acc (&acc)[PIX][CH])
{
    Tab v[PIX * CH];
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            v[j * CH + c] = (Tab)(pad ? (j == 0 ? first[c] : acc[j - 1][c])
                                      : acc[j][c]);
    constexpr int Q = PIX * CH * (int)sizeof(Tab) / 16;
    uint4 q[Q];
    memcpy(q, v, sizeof v);
    /* The intrinsic keeps each piece one 16-byte store: a plain uint4
     * assignment here was split into four 4-byte stores. */
#pragma unroll
    for (int i = 0; i < Q; i++)
        __stwb(reinterpret_cast<uint4 *>(dst) + i, q[i]);
}

/* Stores this thread's table entries of one row: pixel px0 + j goes to
 * column px0 + j + pad. With vec (the table's data and pitch are 16-byte
 * aligned) whole 16-byte pieces are written: in the default layout (pad 1)
 * a thread writes columns px0 .. px0 + 3, the first one its left
 * neighbour's last pixel (shuffled over); lane 0 has no neighbour in the
 * warp and writes its own pixels one by one, lane 31 its last one. */
template <class Tab, class Acc, int CH>
__device__ __forceinline__ void store_row(Tab *orow, u64 px0, u64 w, int pad,
                                          bool vec, const Acc (&acc)[PIX][CH])
{
    const int lane = threadIdx.x & 31;
    Acc prev[CH];
#pragma unroll
    for (int c = 0; c < CH; c++)
        prev[c] = shfl_up(acc[PIX - 1][c], 1);
    const bool has_prev = pad && lane != 0;
    const u64 first = px0; /* first column written (pad 1: a neighbour's pixel) */
    const u64 last_px = pad ? px0 + PIX - 2 : px0 + PIX - 1; /* pixel */
    if (vec && (has_prev || !pad) && last_px < w) {
        store_piece<Tab, Acc, CH>(orow + first * CH, pad, prev, acc);
    } else {
        if (has_prev && px0 - 1 < w)
#pragma unroll
            for (int c = 0; c < CH; c++)
                orow[px0 * CH + c] = (Tab)prev[c];
#pragma unroll
        for (int j = 0; j < PIX - pad; j++)
            if (px0 + j < w)
#pragma unroll
                for (int c = 0; c < CH; c++)
                    orow[(px0 + j + pad) * CH + c] = (Tab)acc[j][c];
    }
    /* The last pixel in the default layout: the next lane writes it as its
     * neighbour's, except across warps. */
    if (pad && lane == 31 && px0 + PIX - 1 < w)
#pragma unroll
        for (int c = 0; c < CH; c++)
            orow[(px0 + PIX) * CH + c] = (Tab)acc[PIX - 1][c];
}

/* The default layout's zero first row, this thread's part of it (and the
 * corner, by the first thread of the first strip). */
template <class Tab, int CH>
__device__ __forceinline__ void sat_zero_top(const img_out &tab, u64 px0,
                                             u64 w, u64 s)
{
    Tab *r0 = reinterpret_cast<Tab *>(tab.data);
    for (int j = 0; j < PIX; j++)
        if (px0 + j < w)
            for (int c = 0; c < CH; c++)
                r0[(px0 + j + 1) * CH + c] = Tab(0);
    if (s == 0 && threadIdx.x == 0)
        for (int c = 0; c < CH; c++)
            r0[c] = Tab(0);
}

/* Writes one tile's table rows y0 .. y1 - 1 (strip s; this thread's
 * pixels from px0). acc holds, per pixel, the table row just above the
 * band; strip_carry(y, c) is what row y's pixels left of the strip add up
 * to. pad: 1 for the default layout (zero first row and column, written
 * here), 0 for the inclusive one. sm: WARPS * CH * 4 values. */
template <class Src, class Acc, class Tab, int CH, class Carry>
__device__ __forceinline__ void sat_tile_rows(const img_in &in,
                                              const img_out &tab, int pad,
                                              const term_args &ta, u64 s,
                                              u64 px0, u64 y0, u64 y1,
                                              Acc (&acc)[PIX][CH],
                                              Carry strip_carry, Acc *sm)
{
    if (pad && y0 == 0)
        sat_zero_top<Tab, CH>(tab, px0, in.width, s);
    /* G rows loaded at once, all of them in one block scan (one pair of
     * barriers for G rows). */
    constexpr int G = rows_ahead<Src, CH>::SUB;
    for (u64 yg = y0; yg < y1; yg += G) {
        chunk<Src, CH> raw[G];
        Acc scv[G][CH];
#pragma unroll
        for (int r = 0; r < G; r++)
            if (yg + r < y1) {
                load_chunk<Src, CH>(in.data + (yg + r) * in.pitch, px0,
                                    in.width, ta.align, raw[r]);
#pragma unroll
                for (int c = 0; c < CH; c++)
                    scv[r][c] = strip_carry(yg + r, c);
            }
        Acc t[G][PIX][CH], tot[G * CH], excl[G * CH], all[G * CH];
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (yg + r < y1)
                chunk_terms<Src, Acc, CH>(raw[r], px0, in.width, ta.sq, ta.off,
                                          t[r]);
            else
#pragma unroll
                for (int j = 0; j < PIX; j++)
#pragma unroll
                    for (int c = 0; c < CH; c++)
                        t[r][j][c] = 0;
#pragma unroll
            for (int c = 0; c < CH; c++) {
                Acc run = 0;
#pragma unroll
                for (int j = 0; j < PIX; j++) {
                    run += t[r][j][c];
                    t[r][j][c] = run;
                }
                tot[r * CH + c] = run;
            }
        }
        block_excl_scan<Acc, G * CH>(tot, excl, all, sm);
#pragma unroll
        for (int r = 0; r < G; r++) {
            const u64 y = yg + r;
            if (y >= y1)
                break; /* uniform across the block */
            Tab *orow = reinterpret_cast<Tab *>(tab.data + (y + pad) * tab.pitch);
#pragma unroll
            for (int c = 0; c < CH; c++) {
                Acc base = scv[r][c] + excl[r * CH + c];
#pragma unroll
                for (int j = 0; j < PIX; j++)
                    acc[j][c] += base + t[r][j][c];
            }
            store_row<Tab, Acc, CH>(orow, px0, in.width, pad, ta.store_vec, acc);
            if (pad && s == 0 && threadIdx.x == 0)
                for (int c = 0; c < CH; c++)
                    orow[c] = Tab(0);
        }
    }
}

/* Step 3. carry_rows: [bands][width * CH] (step 2b); strip_carry:
 * [height][strips][CH] (step 2a'). */
template <class Src, class Acc, class Tab, int CH>
__global__ void __launch_bounds__(THREADS)
    sat_final_kernel(img_in in, img_out tab, int pad, sat_geom g,
                     term_args ta, const Acc *carry_rows,
                     const Acc *strip_carry)
{
    __shared__ Acc sm[WARPS * CH * 4];
    const u64 s = blockIdx.x, b = blockIdx.y;
    const u64 px0 = s * STRIP + threadIdx.x * PIX;
    const u64 y0 = b * g.band_rows;
    const u64 y1 = min(in.height, y0 + g.band_rows);
    Acc acc[PIX][CH];
    const Acc *cr = carry_rows + b * in.width * CH;
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            acc[j][c] = px0 + j < in.width ? cr[(px0 + j) * CH + c] : Acc(0);
    sat_tile_rows<Src, Acc, Tab, CH>(
        in, tab, pad, ta, s, px0, y0, y1, acc,
        [&](u64 y, int c) { return strip_carry[(y * g.strips + s) * CH + c]; },
        sm);
}

} /* namespace parsum_img */

#endif
