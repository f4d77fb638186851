/*
 * image_kernels.cuh - the CUDA kernels of the image functions (image.cu).
 *
 * Summed-area table in three steps over tiles of BAND rows x STRIP pixels
 * (256 threads, 4 consecutive pixels each):
 *   1. sat_band_kernel: per tile, the column sums of its rows and the row
 *      totals of its strip (reads the image);
 *   2. sat_carry_* kernels: exclusive sums of the column sums down the
 *      bands, then prefix sums along each band's row: the table row just
 *      above each band; and exclusive sums of the strip row totals along
 *      each row: what each strip's rows start from (small arrays);
 *   3. sat_final_kernel: per tile, row prefix sums (block scan) started
 *      from the strip carry, added to running column sums started from the
 *      band's carry row, stored as the table (reads the image again).
 * So the image is read twice and the table written once; the notes' row
 * scans + transpose + row scans (seed 003) would move every table entry
 * four times. Accumulators: uint32 for U32 tables and uint64 for 64-bit
 * integer ones (sums modulo 2^bits, as the header defines), float64 for
 * float tables; the float64 grouping depends only on the image size.
 *
 * The box filter is evaluated on a summed-area table of the image (in
 * scratch memory) with the border rules folded into the four corner
 * lookups: along one axis, the sum of the made-up sequence up to virtual
 * index k is a small integer combination of the table's prefix sums (whole
 * periods of WRAP / REFLECT / REFLECT_101, runs of the edge pixel for
 * CLAMP), so each output costs O(1) whatever the radius.
 */
#ifndef PARSUM_IMAGE_KERNELS_CUH
#define PARSUM_IMAGE_KERNELS_CUH

#include "kernel_common.cuh"

#include <cstdint>

namespace parsum_img {

using parsum_k::cp_async;
using parsum_k::cp_async_commit;
using parsum_k::cp_async_wait;
using parsum_k::cp_async_wait_all;
using parsum_k::shfl_up_add;
using parsum_k::warp_incl_sum;

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int PIX = 4;                    /* pixels per thread per row */
constexpr int STRIP = THREADS * PIX;      /* pixels per tile row */
constexpr int MAX_BAND = 64;              /* rows per tile, at most */

struct img_in {
    const char *data;
    u64 pitch; /* bytes */
    u64 width, height;
};

struct img_out {
    char *data;
    u64 pitch;
};

/* A sample as an accumulator term: integers modulo 2^bits (I32 sign-
 * extended first), floats in float64 less the offset; squared on demand. */
template <class Acc, class Src>
__device__ __forceinline__ Acc as_term(Src v, bool sq, double off)
{
    if constexpr (Acc(0.5) != Acc(0)) {
        double d = (double)v - off;
        return sq ? d * d : d;
    } else {
        Acc a = (Acc)(i64)v;
        return sq ? a * a : a;
    }
}

template <class T>
__device__ __forceinline__ T shfl_up(T v, int d)
{
    return __shfl_up_sync(0xffffffffu, v, d);
}

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int d)
{
    return __shfl_xor_sync(0xffffffffu, v, d);
}

/* The sum over the warp, in every lane; one instruction for 32-bit
 * integers (sm_80 and later), a fixed butterfly otherwise. */
template <class T>
__device__ __forceinline__ T warp_sum(T v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (sizeof(T) == 4 && T(0.5) == T(0))
        return (T)__reduce_add_sync(0xffffffffu, (unsigned)v);
    else
#endif
    {
#pragma unroll
        for (int d = 16; d > 0; d /= 2)
            v += shfl_xor(v, d);
        return v;
    }
}

/* Exclusive scan over the block of one value per channel per thread, in a
 * fixed order (deterministic for floats). smem: WARPS * CH values.
 * total gets the block's sum. Contains two __syncthreads. */
template <class Acc, int CH>
__device__ __forceinline__ void block_excl_scan(const Acc (&v)[CH],
                                                Acc (&excl)[CH],
                                                Acc (&total)[CH], Acc *smem)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Acc inc[CH];
#pragma unroll
    for (int c = 0; c < CH; c++) {
        inc[c] = v[c];
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            Acc o = shfl_up(inc[c], d);
            if (lane >= d)
                inc[c] += o;
        }
        if (lane == 31)
            smem[warp * CH + c] = inc[c];
    }
    __syncthreads();
    /* Lanes 0 .. WARPS - 1 of every warp scan the warp totals (a few
     * shuffles, instead of every thread adding up all of them). */
#pragma unroll
    for (int c = 0; c < CH; c++) {
        Acc wt = lane < WARPS ? smem[lane * CH + c] : Acc(0);
#pragma unroll
        for (int d = 1; d < WARPS; d *= 2) {
            Acc o = shfl_up(wt, d);
            if (lane >= d)
                wt += o;
        }
        Acc before = __shfl_sync(0xffffffffu, wt, warp > 0 ? warp - 1 : 0);
        total[c] = __shfl_sync(0xffffffffu, wt, WARPS - 1);
        excl[c] = (warp > 0 ? before : Acc(0)) + (inc[c] - v[c]);
    }
    __syncthreads();
}

/* The PIX pixels of one thread in one row, raw, as 32-bit words (PIX *
 * CH * sizeof(Src) is a multiple of 4): loaded as 16- or 4-byte vectors
 * when the image allows (align, from the host: the largest of 16, 4 that
 * divides both data and pitch, else 0), sample by sample otherwise and at
 * the end of a row. Raw words keep many rows in flight in few registers. */
template <class Src, int CH>
struct chunk {
    static constexpr int BYTES = PIX * CH * (int)sizeof(Src);
    static constexpr int WORDS = BYTES / 4;
    u32 w[WORDS];
};

template <class Src, int CH>
__device__ __forceinline__ void load_chunk(const char *row, u64 px0, u64 w,
                                           int align, chunk<Src, CH> &c)
{
    typedef chunk<Src, CH> C;
    const char *p = row + px0 * CH * sizeof(Src);
    if (px0 + PIX <= w && align >= 4) {
        if constexpr (C::WORDS % 4 == 0) {
            if (align >= 16) {
#pragma unroll
                for (int i = 0; i < C::WORDS / 4; i++) {
                    uint4 v = __ldg(reinterpret_cast<const uint4 *>(p) + i);
                    c.w[4 * i] = v.x;
                    c.w[4 * i + 1] = v.y;
                    c.w[4 * i + 2] = v.z;
                    c.w[4 * i + 3] = v.w;
                }
                return;
            }
        }
#pragma unroll
        for (int i = 0; i < C::WORDS; i++)
            c.w[i] = __ldg(reinterpret_cast<const u32 *>(p) + i);
        return;
    }
    Src v[PIX * CH];
#pragma unroll
    for (int k = 0; k < PIX * CH; k++)
        v[k] = px0 + k / CH < w ? reinterpret_cast<const Src *>(p)[k] : Src(0);
    memcpy(c.w, v, C::BYTES);
}

/* The terms of a chunk (0 past the width). */
template <class Src, class Acc, int CH>
__device__ __forceinline__ void chunk_terms(const chunk<Src, CH> &c, u64 px0,
                                            u64 w, bool sq, const double *off,
                                            Acc (&t)[PIX][CH])
{
    Src v[PIX * CH];
    memcpy(v, c.w, chunk<Src, CH>::BYTES);
    const bool full = px0 + PIX <= w;
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            t[j][c] = full || px0 + j < w
                          ? as_term<Acc>(v[j * CH + c], sq, off[c])
                          : Acc(0);
}

struct term_args {
    bool sq;
    bool store_vec; /* table data and pitch 16-byte aligned (store_row) */
    int align;      /* see load_chunk */
    double off[4];
};

/* Per-channel float64 sums of rows g, g + G, g + 2G ... for block g, in a
 * fixed order: the offset means (OFFSET_MEAN). part: [G][CH]. */
template <class Src, int CH>
__global__ void __launch_bounds__(THREADS)
    image_sum_kernel(img_in in, double *part)
{
    __shared__ double sm[THREADS];
    double acc[CH];
#pragma unroll
    for (int c = 0; c < CH; c++)
        acc[c] = 0;
    for (u64 y = blockIdx.x; y < in.height; y += gridDim.x) {
        const Src *r = reinterpret_cast<const Src *>(in.data + y * in.pitch);
        for (u64 x = threadIdx.x; x < in.width; x += THREADS)
#pragma unroll
            for (int c = 0; c < CH; c++)
                acc[c] += (double)r[x * CH + c];
    }
    for (int c = 0; c < CH; c++) {
        sm[threadIdx.x] = acc[c];
        __syncthreads();
        for (int h = THREADS / 2; h > 0; h /= 2) {
            if ((int)threadIdx.x < h)
                sm[threadIdx.x] += sm[threadIdx.x + h];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            part[blockIdx.x * CH + c] = sm[0];
        __syncthreads();
    }
}

/* A table of the default layout or the inclusive one, read as prefix sums:
 * P(i, j) = the sum over rows <= i, columns <= j (i, j >= -1). */
template <class Tab>
struct table_view {
    const char *data;
    u64 pitch;
    int ch;
    int pad; /* 1: default layout */
    __device__ __forceinline__ Tab P(i64 i, i64 j, int c) const
    {
        if (!pad && (i < 0 || j < 0))
            return Tab(0);
        const Tab *r = reinterpret_cast<const Tab *>(data + (u64)(i + pad) *
                                                               pitch);
        return r[(u64)(j + pad) * ch + c];
    }
};

struct rect64 {
    u64 x, y, width, height;
};

/* One thread per rectangle: clipped four-corner sums (or means). Acc:
 * uint64 for integer tables (I64 read as its bits), double for float. */
template <class Tab, class Acc>
__global__ void box_sums_kernel(table_view<Tab> t, u64 w, u64 h,
                                const rect64 *rects, u64 nrect, bool means,
                                bool add_off, term_args ta, bool i64_table,
                                void *out)
{
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < nrect;
         r += (u64)gridDim.x * blockDim.x) {
        rect64 rc = rects[r];
        u64 x0 = rc.x < w ? rc.x : w, y0 = rc.y < h ? rc.y : h;
        u64 x1 = rc.width > w - x0 ? w : x0 + rc.width;
        u64 y1 = rc.height > h - y0 ? h : y0 + rc.height;
        double area = (double)(x1 - x0) * (double)(y1 - y0);
        for (int c = 0; c < t.ch; c++) {
            Acc s = (Acc)t.P((i64)y1 - 1, (i64)x1 - 1, c) -
                    (Acc)t.P((i64)y0 - 1, (i64)x1 - 1, c) -
                    (Acc)t.P((i64)y1 - 1, (i64)x0 - 1, c) +
                    (Acc)t.P((i64)y0 - 1, (i64)x0 - 1, c);
            u64 o = r * t.ch + c;
            if constexpr (Acc(0.5) != Acc(0)) {
                double v = area == 0 ? 0.0 : (double)s;
                if (add_off)
                    v += ta.off[c] * area;
                static_cast<double *>(out)[o] = means ? v / area : v;
            } else {
                if (sizeof(Tab) == 4)
                    s = (u32)s;
                if (means)
                    static_cast<double *>(out)[o] =
                        (i64_table ? (double)(i64)s : (double)s) / area;
                else if (sizeof(Tab) == 4)
                    static_cast<u32 *>(out)[o] = (u32)s;
                else
                    static_cast<u64 *>(out)[o] = s;
            }
        }
    }
}

/* Border rule along one axis: the made-up sequence's sum up to virtual
 * index k (F(-1) = 0, F(k) - F(k - 1) = the sample at k) as terms
 * coef * P(idx), idx in [-1, n - 1] (P(-1) = 0 terms are dropped). */
struct terms {
    i64 coef[12];
    i64 idx[12];
    int n;
    __device__ __forceinline__ void add(i64 c, i64 i)
    {
        if (i >= 0 && c != 0) {
            coef[n] = c;
            idx[n] = i;
            n++;
        }
    }
};

__device__ __forceinline__ i64 floor_div(i64 a, i64 b)
{
    i64 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

__device__ __forceinline__ void border_terms(i64 k, i64 n, int border,
                                             i64 sign, terms &t)
{
    switch (border) {
    case 0: /* ZERO */
        if (k >= 0)
            t.add(sign, k < n ? k : n - 1);
        return;
    case 1: /* CLAMP */
        if (k < 0)
            t.add(sign * (k + 1), 0);
        else if (k < n)
            t.add(sign, k);
        else {
            t.add(sign * (k - n + 2), n - 1);
            t.add(-sign * (k - n + 1), n - 2);
        }
        return;
    case 4: { /* WRAP */
        i64 q = floor_div(k, n), r = k - q * n;
        t.add(sign * q, n - 1);
        t.add(sign, r);
        return;
    }
    case 2: { /* REFLECT, period 2n: a..z z..a */
        i64 q = floor_div(k, 2 * n), r = k - q * 2 * n;
        if (r < n) {
            t.add(sign * 2 * q, n - 1);
            t.add(sign, r);
        } else {
            t.add(sign * (2 * q + 2), n - 1);
            t.add(-sign, 2 * n - 2 - r);
        }
        return;
    }
    default: { /* REFLECT_101, period 2n - 2: a..z y..b */
        if (n == 1) {
            t.add(sign * (k + 1), 0);
            return;
        }
        i64 p = 2 * n - 2, q = floor_div(k, p), r = k - q * p;
        t.add(sign * q, n - 1);
        t.add(sign * q, n - 2);
        t.add(-sign * q, 0);
        if (r < n) {
            t.add(sign, r);
        } else {
            t.add(sign, n - 1);
            t.add(sign, n - 2);
            t.add(-sign, 2 * n - 3 - r);
        }
        return;
    }
    }
}

struct box_geom {
    u64 width, height;
    i64 rx, ry;
    int border;
    i64 area;
    double inv_area;
    /* Every rounded sum (sum + area / 2) of the image's samples is below
     * 2^24 (u8 and u16 images with small windows): box_mean divides in
     * float32 and 32-bit integers, inv_area_f = 1 / area rounded. */
    bool small;
    float inv_area_f;
};

/* The mean of a window sum: floats divided in float64; integers
 * floor((sum + area / 2) / area) exactly (the true sum fits in int64, so
 * the modular sum is it; U32 tables only serve unsigned images whose
 * window sums fit in 32 bits). The floating-point quotient is within one
 * of the true one and is corrected by one where its rounding crossed an
 * integer. In float32 (g.small): num < 2^24 converts exactly, 1 / area
 * and the product round with relative errors below 2^-24 and 2^-23, so
 * the quotient is off by less than (num / area) * 1.5 * 2^-23 < 3 / area:
 * below one for every odd area >= 3, and area 1 is exact. */
template <class Dst, class Tab, class Acc>
__device__ __forceinline__ Dst box_mean(Acc s, const box_geom &g)
{
    if constexpr (Acc(0.5) != Acc(0)) {
        return (Dst)(s / (double)g.area);
    } else {
        if (g.small) {
            const u32 area = (u32)g.area;
            const u32 num = (u32)s + area / 2;
            u32 q = (u32)__fmul_rz((float)num, g.inv_area_f);
            if (q * area > num)
                q--;
            else if ((q + 1) * area <= num)
                q++;
            return (Dst)q;
        }
        i64 v = sizeof(Tab) == 4 ? (i64)(u32)s : (i64)s;
        i64 num = v + g.area / 2;
        i64 q = (i64)floor((double)num * g.inv_area);
        if (q * g.area > num)
            q--;
        else if ((q + 1) * g.area <= num)
            q++;
        return (Dst)q;
    }
}

/* One thread per pixel: the window sum from the table through the border
 * terms of both axes, then the mean (integers: floor((sum + area / 2) /
 * area), exact; floats: float64 division, rounded once). */
template <class Dst, class Tab, class Acc, int CH>
__global__ void __launch_bounds__(THREADS)
    box_eval_kernel(table_view<Tab> t, box_geom g, img_out dst)
{
    for (i64 y = blockIdx.y; y < (i64)g.height; y += gridDim.y) {
        const bool inside_y = y - g.ry >= 0 && y + g.ry < (i64)g.height;
        Dst *orow = reinterpret_cast<Dst *>(dst.data + (u64)y * dst.pitch);
        for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x;
             x < (i64)g.width; x += (i64)gridDim.x * blockDim.x) {
            Dst *o = orow + (u64)x * CH;
            if (inside_y && x - g.rx >= 0 && x + g.rx < (i64)g.width) {
                /* Inside: four corners (row and column -1 are the table's
                 * zero row and column). */
#pragma unroll
                for (int c = 0; c < CH; c++) {
                    Acc s = (Acc)t.P(y + g.ry, x + g.rx, c) -
                            (Acc)t.P(y - g.ry - 1, x + g.rx, c) -
                            (Acc)t.P(y + g.ry, x - g.rx - 1, c) +
                            (Acc)t.P(y - g.ry - 1, x - g.rx - 1, c);
                    o[c] = box_mean<Dst, Tab>(s, g);
                }
                continue;
            }
            terms ty, tx;
            ty.n = tx.n = 0;
            border_terms(y + g.ry, (i64)g.height, g.border, 1, ty);
            border_terms(y - g.ry - 1, (i64)g.height, g.border, -1, ty);
            border_terms(x + g.rx, (i64)g.width, g.border, 1, tx);
            border_terms(x - g.rx - 1, (i64)g.width, g.border, -1, tx);
#pragma unroll
            for (int c = 0; c < CH; c++) {
                Acc s = 0;
                for (int a = 0; a < ty.n; a++) {
                    Acc row = 0;
                    for (int b = 0; b < tx.n; b++)
                        row += (Acc)tx.coef[b] *
                               (Acc)t.P(ty.idx[a], tx.idx[b], c);
                    s += (Acc)ty.coef[a] * row;
                }
                o[c] = box_mean<Dst, Tab>(s, g);
            }
        }
    }
}


/* The source index that virtual index i reads along an axis of n samples
 * under the border rule, or -1 (ZERO border outside): the rule of
 * parsum__ref_border_index. */
__device__ __forceinline__ i64 border_map(i64 i, i64 n, int border)
{
    if (i >= 0 && i < n)
        return i;
    switch (border) {
    case 0: return -1;
    case 1: return i < 0 ? 0 : n - 1;
    case 4: { i64 r = i % n; return r < 0 ? r + n : r; }
    case 2: {
        i64 p = 2 * n, k = i % p;
        k = k < 0 ? k + p : k;
        return k < n ? k : p - 1 - k;
    }
    default: {
        if (n == 1)
            return 0;
        i64 p = 2 * n - 2, k = i % p;
        k = k < 0 ? k + p : k;
        return k < n ? k : p - k;
    }
    }
}

/* The box filter for horizontal radii up to BOX_STREAM_MAX_RX, in one pass
 * over the image: a block owns a strip of STRIP virtual columns (its
 * outputs plus rx + 1 columns of halo on the left and rx on the right)
 * and a band of rows. Each thread keeps the vertical window sums of its 4
 * columns (add the row entering the window, subtract the row leaving it,
 * rows and columns mapped through the border rule); a block scan turns
 * them into row prefix sums P in shared memory, and an output is
 * P(i + 2 rx + 1) - P(i): the table's differences, without storing the
 * table. Reads each row twice (entering and leaving), writes once.
 * Rows go box_rows() at a time: their loads are issued together (one
 * memory latency per group, not per row) and their block scans share
 * barriers (the rows are scanned as box_rows() x CH channels). */
constexpr int BOX_STREAM_MAX_RX = 127;
constexpr u64 BOX_STREAM_BAND = 256;

/* Rows per group: as many as 16 KB of prefix sums allow, at most 4. */
template <class Acc, int CH>
__host__ __device__ constexpr int box_rows()
{
    return 16384 / (STRIP * (int)sizeof(Acc) * CH) >= 4   ? 4
           : 16384 / (STRIP * (int)sizeof(Acc) * CH) >= 2 ? 2
                                                          : 1;
}

/* Where prefix sum i of a strip lives in box_stream_kernel's shared
 * array: thread t's j-th at j * THREADS + t, so that its stores and its
 * loads at any fixed offset from its pixels fall in distinct banks (the
 * plain layout, 4 words per thread, costs four-way conflicts). */
__device__ __forceinline__ int box_slot(int i)
{
    return (i % PIX) * THREADS + i / PIX;
}

template <class Dst, class Acc, int CH>
__global__ void __launch_bounds__(THREADS)
    box_stream_kernel(img_in in, img_out dst, box_geom g, u64 band_rows)
{
    constexpr int K = box_rows<Acc, CH>();
    __shared__ Acc P[K][CH][STRIP];
    __shared__ Acc sm[WARPS * K * CH];
    const i64 W = (i64)in.width, H = (i64)in.height;
    const int ow = STRIP - 2 * (int)g.rx - 1; /* outputs per strip */
    const i64 x0 = (i64)blockIdx.x * ow;
    const i64 y0 = (i64)(blockIdx.y * band_rows);
    const i64 y1 = min(H, y0 + (i64)band_rows);
    i64 col[PIX];
#pragma unroll
    for (int j = 0; j < PIX; j++)
        col[j] = border_map(x0 - g.rx - 1 + PIX * (i64)threadIdx.x + j, W,
                            g.border);
    /* This thread's samples of virtual row yy (0 outside a ZERO border). */
    auto load_row = [&](i64 yy, Acc (&v)[PIX][CH]) {
        const i64 sy = border_map(yy, H, g.border);
        const Dst *r = reinterpret_cast<const Dst *>(
            in.data + (sy < 0 ? 0 : sy) * in.pitch);
#pragma unroll
        for (int j = 0; j < PIX; j++)
#pragma unroll
            for (int c = 0; c < CH; c++)
                v[j][c] = sy >= 0 && col[j] >= 0
                              ? as_term<Acc>(r[col[j] * CH + c], false, 0.0)
                              : Acc(0);
    };
    Acc cs[PIX][CH];
#pragma unroll
    for (int j = 0; j < PIX; j++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            cs[j][c] = 0;
#pragma unroll 4
    for (i64 dy = -g.ry; dy <= g.ry; dy++) {
        Acc v[PIX][CH];
        load_row(y0 + dy, v);
#pragma unroll
        for (int j = 0; j < PIX; j++)
#pragma unroll
            for (int c = 0; c < CH; c++)
                cs[j][c] += v[j][c];
    }
    for (i64 yg = y0; yg < y1; yg += K) {
        /* Rows entering and leaving the windows of rows yg .. yg + K - 1
         * (none for the band's first row, whose window is cs already). */
        Acc ent[K][PIX][CH], lev[K][PIX][CH];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const i64 y = yg + k;
            if (y > y0 && y < y1) {
                load_row(y + g.ry, ent[k]);
                load_row(y - g.ry - 1, lev[k]);
            } else {
#pragma unroll
                for (int j = 0; j < PIX; j++)
#pragma unroll
                    for (int c = 0; c < CH; c++)
                        ent[k][j][c] = lev[k][j][c] = 0;
            }
        }
        Acc loc[PIX][K * CH], tot[K * CH], excl[K * CH], all[K * CH];
#pragma unroll
        for (int k = 0; k < K; k++)
#pragma unroll
            for (int c = 0; c < CH; c++) {
                Acc run = 0;
#pragma unroll
                for (int j = 0; j < PIX; j++) {
                    cs[j][c] += ent[k][j][c] - lev[k][j][c];
                    run += cs[j][c];
                    loc[j][k * CH + c] = run;
                }
                tot[k * CH + c] = run;
            }
        block_excl_scan<Acc, K * CH>(tot, excl, all, sm);
#pragma unroll
        for (int k = 0; k < K; k++)
#pragma unroll
            for (int j = 0; j < PIX; j++)
#pragma unroll
                for (int c = 0; c < CH; c++)
                    P[k][c][box_slot(PIX * threadIdx.x + j)] =
                        excl[k * CH + c] + loc[j][k * CH + c];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < K; k++) {
            const i64 y = yg + k;
            if (y >= y1)
                break;
            Dst *orow = reinterpret_cast<Dst *>(dst.data + (u64)y * dst.pitch);
#pragma unroll
            for (int j = 0; j < PIX; j++) {
                const int i = PIX * (int)threadIdx.x + j;
                if (i < ow && x0 + i < W)
#pragma unroll
                    for (int c = 0; c < CH; c++) {
                        Acc sum = P[k][c][box_slot(i + 2 * (int)g.rx + 1)] -
                                  P[k][c][box_slot(i)];
                        orow[(x0 + i) * CH + c] =
                            box_mean<Dst, Acc>(sum, g);
                    }
            }
        }
        __syncthreads(); /* P is rewritten by the next group */
    }
}

} /* namespace parsum_img */

#endif
