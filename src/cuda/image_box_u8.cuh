/*
 * image_box_u8.cuh - the box filter of one-channel 8-bit images
 * (box_u8_kernel), radii up to 127 on both axes: the common case (grey
 * images), which the general kernel (box_stream_kernel, image_kernels.cuh)
 * ran at about 70 instructions per output pixel: byte loads and stores
 * with 64-bit addresses, a border mapping per pixel, a block scan per row.
 *
 * Every warp works alone, without a block barrier: it owns a strip of
 * 512 columns (BU8_STRIP) and a band of rows. Lane l holds 4 groups of 4
 * columns, group m at strip column 128 m + 4 l, so each of the warp's row
 * loads (4 bytes a lane) and output stores (4 outputs a lane) is one
 * contiguous 128-byte access.
 *   - Vertical: the window sums of a lane's 4 columns live as two 16-bit
 *     fields of a word per pair of columns (2 ry + 1 <= 255 rows of bytes
 *     sum to at most 65025; the word's arithmetic is linear, so a field
 *     that stays in range never carries into its neighbour): per row one
 *     add of the entering row and one subtract of the leaving row a word.
 *   - Horizontal: the 4 sums' prefix inside a lane, a warp scan per group
 *     (the 4 groups' scans are independent), the groups chained by their
 *     totals: the strip's row prefix P, written to the warp's 2 KB of
 *     shared memory. Output i of the strip is P(i + s + rx) - P(i + s -
 *     rx - 1): the strip's loaded columns start s columns left of its
 *     first output.
 *   - The mean of a window sum below 2^24 by one 64-bit multiply and a
 *     shift (m and the shift of Granlund and Montgomery, exact for every
 *     numerator below 2^24), four outputs per 4-byte store.
 *   - A row's loads are issued one row ahead (its latency hides behind the
 *     row before), and each warp-scan step is a shuffle whose predicate
 *     guards the add (two instructions, not three).
 * s is a multiple of 4 at least rx + 1 and the strip's first output a
 * multiple of 4, so loads and stores are aligned 4-byte accesses where the
 * image rows are 4-byte aligned (image.cu takes this kernel only then).
 * Rows outside the image go through the border rule once per row. The
 * lanes of the first and last strips whose groups are not wholly inside
 * the image ("edge groups") read the two aligned words that hold their
 * mapped columns by cp.async into shared memory and pick the bytes with
 * one byte permute when the row is used, so that their loads are in
 * flight a row ahead like everyone else's: byte loads through the rule,
 * waited for on each row, made those two strips' warps ~3x slower than
 * the others and set the kernel's time (one wave: the slowest warp ends
 * it).
 *
 * Bands alternate in direction: band 2k is processed bottom-up and band 2k
 * + 1 top-down, so two neighbouring bands start (and finish) at their
 * common edge at the same time and the window rows both read there come
 * from DRAM once.
 */
#ifndef PARSUM_IMAGE_BOX_U8_CUH
#define PARSUM_IMAGE_BOX_U8_CUH

#include "image_kernels.cuh"

namespace parsum_img {

constexpr int BU8_GROUPS = 4;                   /* groups of 4 a lane */
constexpr int BU8_STRIP = 32 * 4 * BU8_GROUPS;  /* columns of a warp */
constexpr int BU8_WARPS = 8;                    /* warps per block */
constexpr int BU8_MAX_R = 127;
/* Narrower images take the general kernel (bu8_col's one reflection). */
constexpr int BU8_MIN_WIDTH = 256;
/* Resident blocks per multiprocessor the kernel is compiled for (80
 * registers). 8 groups a lane (1024-column strips, less halo) spilled
 * heavily at 80 registers and at 128. */
constexpr int BU8_BLOCKS = 3;

struct box_u8_geom {
    int width, height, rx, ry, border;
    int s;            /* columns loaded left of a strip's first output */
    int ow;           /* outputs per strip, a multiple of 4 */
    int strips, band_rows;
    u32 mul;          /* mean = (sum * mul + addend) >> shift */
    u64 addend;       /* (area / 2) * mul: rounds to nearest */
    int shift;
};

/* The row read for virtual row y under the border rule (NULL: a ZERO
 * border's made-up zeros). */
__device__ __forceinline__ const unsigned char *
bu8_row(const img_in &in, int y, const box_u8_geom &g)
{
    i64 sy = y;
    if ((unsigned)y >= (unsigned)g.height)
        sy = border_map(y, g.height, g.border);
    return sy < 0 ? nullptr
                  : reinterpret_cast<const unsigned char *>(in.data) +
                        (u64)sy * in.pitch;
}

/* The column virtual column x reads under the border rule, or -1 (ZERO
 * border): border_map without its divisions, for x within one image width
 * of the image (box_u8_fits asks for width >= BU8_MIN_WIDTH > rx + 3). */
__device__ __forceinline__ int bu8_col(int x, int w, int border)
{
    if ((unsigned)x < (unsigned)w)
        return x;
    switch (border) {
    case 0: return -1;                                  /* ZERO */
    case 1: return x < 0 ? 0 : w - 1;                   /* CLAMP */
    case 2: return x < 0 ? -1 - x : 2 * w - 1 - x;      /* REFLECT */
    case 3: return x < 0 ? -x : 2 * w - 2 - x;          /* REFLECT_101 */
    default: return x < 0 ? x + w : x - w;              /* WRAP */
    }
}

/* Where an edge group (a lane's group of 4 columns that is needed but not
 * wholly inside the image) finds its bytes: the 4 virtual columns x .. x +
 * 3 (x a multiple of 4) map under the border rule to columns that lie in
 * at most two aligned words of the row (checked for every width from 256,
 * radius to 127 and border: a mirror or a wrap of an aligned group of 4
 * touches at most two words, and a group straddling the right edge is
 * its own word and one more), so the group is __byte_perm(word o0, word
 * o1, sel) & zm. zm == 0: every column is a ZERO border's made-up zero. */
struct bu8_edge {
    int o0, o1; /* byte offsets of the two aligned words in the row */
    u32 sel, zm;
};

__device__ __noinline__ bu8_edge bu8_edge_of(int x, int width, int border)
{
    bu8_edge d = {0, 0, 0, 0};
    int w0 = -1, w1 = -1;
    for (int j = 0; j < 4; j++) {
        const int c = bu8_col(x + j, width, border);
        if (c < 0)
            continue;
        const int q = c >> 2;
        if (w0 < 0)
            w0 = q;
        int b = c & 3;
        if (q != w0) {
            w1 = q; /* the second word (there is no third) */
            b += 4;
        }
        d.sel |= (u32)b << (4 * j);
        d.zm |= 0xffu << (8 * j);
    }
    d.o0 = 4 * max(w0, 0);
    d.o1 = 4 * (w1 < 0 ? max(w0, 0) : w1);
    return d;
}

/* Edge groups are at most BU8_EDGES per lane: left of the image only group
 * 0 (s <= 128), right of its last whole word at most two (they lie within
 * 130 columns: x + 3 >= width, x < width + rx). Their descriptors and
 * their words in flight (cp.async: no registers held while they travel;
 * two rows' worth, the entering and the leaving row) live in shared
 * memory, per warp. */
constexpr int BU8_EDGES = 3;
struct bu8_edge_smem {
    bu8_edge desc[BU8_EDGES][32];
    u32 word[2][BU8_EDGES][2][32]; /* [row kind][edge][word][lane] */
};

/* A lane's 4 bytes of one row for each of its groups: lane's group m at
 * image columns gx0 + 128 m .. + 3 of row r (NULL: a ZERO border's zeros).
 * EDGE: groups that no output needs (clear in ld) read nothing; the words
 * of edge groups (needed, not wholly inside the image: clear in in) go to
 * the warp's shared slots of this row kind, and bu8_take completes them
 * once they have arrived. LAST: the row's last use (the row leaving the
 * window). */
template <bool EDGE, bool LAST>
__device__ __forceinline__ void bu8_fetch(u32 (&v)[BU8_GROUPS],
                                          const unsigned char *r, int gx0,
                                          u32 in, u32 ld, bu8_edge_smem *es,
                                          int kind)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int m = 0; m < BU8_GROUPS; m++)
        v[m] = 0;
    if (EDGE && r == nullptr) {
        for (int e = 0; e < __popc(ld & ~in); e++)
            es->word[kind][e][0][lane] = es->word[kind][e][1][lane] = 0;
        return;
    }
    if (r == nullptr)
        return;
    const u32 *p = reinterpret_cast<const u32 *>(r + gx0);
#pragma unroll
    for (int m = 0; m < BU8_GROUPS; m++) {
        if (EDGE && !(ld >> m & 1))
            continue;
        if (!EDGE || (in >> m & 1)) {
            v[m] = LAST ? __ldcs(p + 32 * m) : __ldg(p + 32 * m);
            continue;
        }
        const int e = __popc(ld & ~in & ((1u << m) - 1));
        const bu8_edge d = es->desc[e][lane];
        if (d.zm != 0) {
            cp_async<4>(&es->word[kind][e][0][lane], r + d.o0);
            cp_async<4>(&es->word[kind][e][1][lane], r + d.o1);
        }
    }
}

/* The edge groups of a row fetched into slots of this kind, after
 * cp_async_wait_all. */
template <bool EDGE>
__device__ __forceinline__ void bu8_take(u32 (&v)[BU8_GROUPS], u32 in, u32 ld,
                                         const bu8_edge_smem *es, int kind)
{
    if (!EDGE)
        return;
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int m = 0; m < BU8_GROUPS; m++) {
        if (!((ld & ~in) >> m & 1))
            continue;
        const int e = __popc(ld & ~in & ((1u << m) - 1));
        const bu8_edge &d = es->desc[e][lane];
        v[m] = __byte_perm(es->word[kind][e][0][lane],
                           es->word[kind][e][1][lane], d.sel) &
               d.zm;
    }
}

/* Bytes of v as 16-bit fields: (b0, b1) and (b2, b3). */
__device__ __forceinline__ u32 bu8_lo(u32 v) { return __byte_perm(v, 0, 0x5150); }
__device__ __forceinline__ u32 bu8_hi(u32 v) { return __byte_perm(v, 0, 0x5352); }

/* Strip column c's prefix lives at (c % 4) * BU8_Q + c / 4 of the warp's
 * array, so that the warp's stores (fixed c % 4) and its loads at any
 * fixed offset from its columns hit 32 distinct banks. */
constexpr int BU8_Q = BU8_STRIP / 4;

template <bool EDGE>
__device__ __forceinline__ void
bu8_band(const img_in &in, const img_out &dst, const box_u8_geom &g, int x0,
         int ybeg, int yend, int dir, u32 inmask, u32 ldmask, u32 *P,
         bu8_edge_smem *es)
{
    const int lane = threadIdx.x & 31;
    /* Image column of lane's group m: gx0 + 128 m. */
    const int gx0 = x0 - g.s + 4 * lane;
    /* Outputs of lane's group m (strip outputs 128 m + 4 lane ..): all four
     * in the image (bit m of full) or only some (bit m of part). */
    u32 full = 0, part = 0;
#pragma unroll
    for (int m = 0; m < BU8_GROUPS; m++) {
        const int i = 128 * m + 4 * lane, x = x0 + i;
        if (i < g.ow && x + 3 < g.width)
            full |= 1u << m;
        else if (i < g.ow && x < g.width)
            part |= 1u << m;
    }
    u32 cs[BU8_GROUPS][2];
#pragma unroll
    for (int m = 0; m < BU8_GROUPS; m++)
        cs[m][0] = cs[m][1] = 0;
    /* The first row's window, two rows of loads in flight. */
    for (int y = ybeg - g.ry; y <= ybeg + g.ry; y += 2) {
        u32 a[BU8_GROUPS], b[BU8_GROUPS];
        bu8_fetch<EDGE, false>(a, bu8_row(in, y, g), gx0, inmask, ldmask, es, 0);
        bu8_fetch<EDGE, false>(
            b, y + 1 <= ybeg + g.ry ? bu8_row(in, y + 1, g) : nullptr, gx0,
            inmask, ldmask, es, 1);
        if (EDGE) {
            cp_async_wait_all();
            bu8_take<EDGE>(a, inmask, ldmask, es, 0);
            bu8_take<EDGE>(b, inmask, ldmask, es, 1);
        }
#pragma unroll
        for (int m = 0; m < BU8_GROUPS; m++) {
            cs[m][0] += bu8_lo(a[m]) + bu8_lo(b[m]);
            cs[m][1] += bu8_hi(a[m]) + bu8_hi(b[m]);
        }
    }
    /* Per-lane shared addresses of the two prefix values output j needs:
     * column i + A (A = s + rx) and i + B (B = s - rx - 1), i = 128 m + 4
     * lane; both offsets are the same for every lane. */
    const int A = g.s + g.rx, B = g.s - g.rx - 1;
    int pa[4], pb[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        pa[j] = ((j + A) & 3) * BU8_Q + ((j + A) >> 2) + lane;
        pb[j] = ((j + B) & 3) * BU8_Q + ((j + B) >> 2) + lane;
    }
    /* The rows entering and leaving the next row's window, loaded one row
     * ahead so that their latency hides behind this row's work. */
    u32 ne[BU8_GROUPS], nl[BU8_GROUPS];
    auto fetch_next = [&](int y) {
        bu8_fetch<EDGE, false>(ne, bu8_row(in, y + dir * g.ry, g), gx0,
                               inmask, ldmask, es, 0);
        bu8_fetch<EDGE, true>(nl, bu8_row(in, y - dir * (g.ry + 1), g), gx0,
                              inmask, ldmask, es, 1);
    };
    if (ybeg + dir != yend)
        fetch_next(ybeg + dir);
    for (int y = ybeg;; y += dir) {
        if (y != ybeg) {
            u32 e[BU8_GROUPS], l[BU8_GROUPS];
#pragma unroll
            for (int m = 0; m < BU8_GROUPS; m++)
                e[m] = ne[m], l[m] = nl[m];
            if (EDGE) {
                cp_async_wait_all();
                bu8_take<EDGE>(e, inmask, ldmask, es, 0);
                bu8_take<EDGE>(l, inmask, ldmask, es, 1);
            }
            if (y + dir != yend)
                fetch_next(y + dir);
#pragma unroll
            for (int m = 0; m < BU8_GROUPS; m++) {
                cs[m][0] = cs[m][0] + bu8_lo(e[m]) - bu8_lo(l[m]);
                cs[m][1] = cs[m][1] + bu8_hi(e[m]) - bu8_hi(l[m]);
            }
        }
        /* The row prefix of the strip into P. */
        u32 base = 0;
#pragma unroll
        for (int m = 0; m < BU8_GROUPS; m++) {
            const u32 c0 = cs[m][0] & 0xffffu, p1 = c0 + (cs[m][0] >> 16);
            const u32 p2 = p1 + (cs[m][1] & 0xffffu), p3 = p2 + (cs[m][1] >> 16);
            const u32 inc = warp_incl_sum(p3);
            const u32 ex = base + inc - p3;
            base += __shfl_sync(0xffffffffu, inc, 31);
            u32 *q = P + 32 * m + lane;
            q[0] = ex + c0;
            q[BU8_Q] = ex + p1;
            q[2 * BU8_Q] = ex + p2;
            q[3 * BU8_Q] = ex + p3;
        }
        __syncwarp();
        unsigned char *op = reinterpret_cast<unsigned char *>(dst.data) +
                            (u64)y * dst.pitch + x0 + 4 * lane;
#pragma unroll
        for (int m = 0; m < BU8_GROUPS; m++) {
            if (!((full | part) >> m & 1))
                continue;
            u32 word = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const u32 sum = P[pa[j] + 32 * m] - P[pb[j] + 32 * m];
                const u32 q = (u32)(((u64)sum * g.mul + g.addend) >> g.shift);
                word |= q << (8 * j);
            }
            if (full >> m & 1) {
                __stcs(reinterpret_cast<u32 *>(op + 128 * m), word);
            } else {
                const int x = x0 + 128 * m + 4 * lane;
                for (int j = 0; x + j < g.width; j++)
                    op[128 * m + j] = (unsigned char)(word >> (8 * j));
            }
        }
        if (y + dir == yend)
            break;
        __syncwarp(); /* P is rewritten by the next row */
    }
}

/* One warp per (strip, band): warp w of block b takes item 8 b + w, strip
 * item % strips, band item / strips. */
__global__ void __launch_bounds__(32 * BU8_WARPS, BU8_BLOCKS)
    box_u8_kernel(img_in in, img_out dst, box_u8_geom g, int items)
{
    __shared__ u32 prefix[BU8_WARPS][BU8_STRIP];
    __shared__ bu8_edge_smem edge_smem[BU8_WARPS];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int item = blockIdx.x * BU8_WARPS + warp;
    if (item >= items)
        return;
    const int strip = item % g.strips, band = item / g.strips;
    const int x0 = strip * g.ow;
    const int y0 = band * g.band_rows;
    const int y1 = min(g.height, y0 + g.band_rows);
    /* Which groups hold columns some output needs (ld) and which lie
     * wholly inside the image (in). */
    u32 inmask = 0, ldmask = 0;
#pragma unroll
    for (int m = 0; m < BU8_GROUPS; m++) {
        const int c = 128 * m + 4 * lane, x = x0 - g.s + c;
        if (c < g.s + g.ow + g.rx && x < g.width + g.rx)
            ldmask |= 1u << m;
        if (x >= 0 && x + 3 < g.width)
            inmask |= 1u << m;
    }
    /* Unneeded groups may lie past the image: only a warp whose every
     * group is inside loads without checks. */
    const bool edge = !__all_sync(0xffffffffu, inmask == (1u << BU8_GROUPS) - 1);
    const int dir = band & 1 ? 1 : -1;
    const int ybeg = dir > 0 ? y0 : y1 - 1, yend = dir > 0 ? y1 : y0 - 1;
    if (edge) {
        /* The edge groups' word addresses and byte selections, the same
         * for every row. */
        bu8_edge_smem *es = &edge_smem[warp];
        const u32 em = ldmask & ~inmask;
        for (int m = 0, e = 0; m < BU8_GROUPS; m++)
            if (em >> m & 1)
                es->desc[e++][lane] =
                    bu8_edge_of(x0 - g.s + 128 * m + 4 * lane, g.width, g.border);
        bu8_band<true>(in, dst, g, x0, ybeg, yend, dir, inmask, ldmask,
                       prefix[warp], es);
    } else {
        bu8_band<false>(in, dst, g, x0, ybeg, yend, dir, inmask, ldmask,
                        prefix[warp], nullptr);
    }
}

} /* namespace parsum_img */

#endif
