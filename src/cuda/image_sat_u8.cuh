/*
 * image_sat_u8.cuh - the one-pass summed-area table of one-channel 8-bit
 * images into U32 tables (sat_u8_kernel), the common case (grey images,
 * the face detector's and the box filter's tables), which the general
 * one-pass kernel (image_sat_onepass.cuh) left at under half the copy
 * bandwidth: with 4 pixels per thread it spent about 38 instructions per
 * pixel, most of them on a warp scan per row and unpacking.
 *
 * Tiles of 64 rows x 1024 pixels (geom_u8) and the look-back state of the
 * general kernel, with these changes to the look-backs:
 *   - the block above-left of a tile (w) has a look-back of its own, on
 *     words that pack value and status (no fences), so a tile publishes
 *     its column totals as soon as its first pass ends, not after its row
 *     look-back, and the tile below walks less far up the strip (at 4096
 *     x 4096, 4 strips, it had walked about 30 tiles up);
 *   - a tile's row totals, its inclusive row sums and its column totals
 *     are tagged words (sat_lb::hwt, vwt: the value in the low half, the
 *     call's tag | 1 in the high half, written and read as relaxed 8-byte
 *     words), so none of them waits for a fence, a barrier or a status
 *     word: a reader takes a word whose tag is not this call's as not yet
 *     written and reads it again. Under the table's write traffic a round
 *     trip to L2 took about 3 us (globaltimer stamps per tile), and the
 *     status protocol cost three of them per look-back (poll, values, the
 *     publisher's fence): 0.1172-0.1175 -> 0.1108-0.1117 ms at 8192^2 on
 *     an H200, 0.416 -> 0.395 ms at 16384^2. Only the inclusive column
 *     vectors keep a status word and a fence (4 KB a tile; as tagged words
 *     they were slower).
 * Inside a tile:
 *   - warp w owns rows q rw .. q rw + rw - 1 of the tile (q = w / 2, rw =
 *     band rows / 4) in half h = w % 2 of the strip (512 columns); lane l
 *     owns 4 groups of 4 pixels, group m at column 512 h + 128 m + 4 l, so
 *     that a warp's loads (4 bytes a lane) and table stores (16 bytes a
 *     lane) are contiguous;
 *   - prefix sums inside a group of 4 are one dp4a each (the byte dot
 *     product with 1, 1 1, 1 1 1, 1 1 1 1 accumulated onto the group's
 *     base), and the 4 groups' lane prefixes go through 2 warp scans of
 *     two 16-bit fields (4 bytes sum to at most 1020, 32 lanes' to at most
 *     32640; each scan step a shuffle with a predicate, shfl_up_add):
 *     about 5 instructions per pixel and row; the right half's
 *     rows start from the left half's row totals of the first pass, so the
 *     two warps of a row group never wait for each other;
 *   - column sums of a warp's rows are kept as 16-bit pairs (16 rows of
 *     bytes sum to at most 4080, a tile's 64 rows to 16320); their suffix
 *     sums over the row groups give each warp the column sums above its
 *     rows within the tile;
 *   - the first pass's row totals by a reduce-scatter of 8 rows at a time
 *     over the warp's shuffles (u8_rows_reduce), not a warp reduction per
 *     row;
 *   - the tile's pixels stay in shared memory between the two passes (64
 *     KB at 64 rows; three blocks per multiprocessor).
 * All sums are modulo 2^32 (exactly associative), as in the general kernel,
 * so the result does not depend on the look-backs' timing.
 *
 * Used when the image's data and pitch are multiples of 4 bytes and the
 * table's of 16 (image.cu); PARSUM_CUDA_SAT_U8=0 sends these images to
 * the general kernel instead (measurements, and a test of that path).
 */
#ifndef PARSUM_IMAGE_SAT_U8_CUH
#define PARSUM_IMAGE_SAT_U8_CUH

#include "image_sat_onepass.cuh"

namespace parsum_img {

constexpr int U8_GROUPS = 4;           /* groups of 4 pixels per lane */
constexpr int U8_HALF = STRIP / 2;     /* columns of a warp */
constexpr int U8_RGROUPS = WARPS / 2;  /* row groups of a tile */
/* Resident blocks per multiprocessor the kernel is compiled for (80
 * registers a thread; the 64 KB cache fits three). Four, at 64 registers
 * and bands of 44 rows, was slower: 0.138 against 0.125 ms at 8192^2. */
constexpr int U8_BLOCKS = 3;

/* Column of lane's group m within its warp's half strip. */
__device__ __forceinline__ u32 u8_col(int m, int lane)
{
    return 128u * (u32)m + 4u * (u32)lane;
}

/* Where warp q * 2 + half of a block works on tile `tile` (row group q of
 * half strip half): band b, strip s, the tile's first column x0 and row
 * y0, the warp's first column xh, the tile's rows in the image, rows per
 * row group rw, the warp's first tile row r0 and its rows in the image. */
struct u8_place {
    u64 b, s, x0, y0, xh;
    int rows, rw, r0, nrows;
};

__device__ __forceinline__ u8_place u8_place_of(u64 tile, const sat_geom &g,
                                                const img_in &in, int q,
                                                int half)
{
    u8_place w;
    w.b = tile / g.strips;
    w.s = tile % g.strips;
    w.x0 = w.s * STRIP;
    w.y0 = w.b * g.band_rows;
    w.xh = w.x0 + half * U8_HALF;
    w.rows = (int)min((u64)g.band_rows, in.height - w.y0);
    w.rw = (int)g.band_rows / U8_RGROUPS;
    w.r0 = q * w.rw;
    w.nrows = max(0, min(w.rw, w.rows - w.r0));
    return w;
}

/* The warp's total of the lane's 16 values. */
__device__ __forceinline__ u32 u8_warp_total(const u32 (&v)[U8_GROUPS][4])
{
    u32 t = 0;
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            t += v[m][j];
    return warp_sum(t);
}

/* The lane's 4 words of one row of a half strip that the width w cuts
 * (from column x0; zero past w). row must be 4-byte aligned. */
__device__ __forceinline__ uint4 u8_load_row(const char *row, u64 x0, u64 w)
{
    const int lane = threadIdx.x & 31;
    const unsigned char *p = reinterpret_cast<const unsigned char *>(row) + x0;
    u32 raw[U8_GROUPS];
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++) {
        const u64 c = x0 + u8_col(m, lane);
        if (c + 4 <= w) {
            raw[m] = __ldg(reinterpret_cast<const u32 *>(p + u8_col(m, lane)));
        } else {
            u32 v = 0;
            for (int j = 0; j < 4; j++)
                if (c + j < w)
                    v |= (u32)p[u8_col(m, lane) + j] << (8 * j);
            raw[m] = v;
        }
    }
    return make_uint4(raw[0], raw[1], raw[2], raw[3]);
}

/* The shared-memory copy of row r of warp w: one 16-byte piece per lane,
 * the lanes' pieces contiguous (no bank conflicts). */
__device__ __forceinline__ uint4 *u8_cache_at(uint4 *cache, int rw, int r)
{
    return cache + ((threadIdx.x >> 5) * rw + r) * 32 + (threadIdx.x & 31);
}

__device__ __forceinline__ u32 u8_word(const uint4 &v, int m)
{
    return m == 0 ? v.x : m == 1 ? v.y : m == 2 ? v.z : v.w;
}

/* The totals over the warp of 8 rows without a reduction per row: t[k] is
 * the lane's part of row k, and each shuffle step hands half of the rows
 * to the partner lane (a reduce-scatter): 9 shuffles in all, against 8
 * warp reductions (REDUX), whose throughput is low. Returns the total of
 * row a = lane bits 4, 3, 2. */
__device__ __forceinline__ u32 u8_rows_reduce(u32 (&t)[8])
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int n = 4, d = 16; n >= 1; n /= 2, d /= 2) {
        const bool up = lane & d;
#pragma unroll
        for (int k = 0; k < n; k++) {
            const u32 send = up ? t[k] : t[k + n];
            const u32 keep = up ? t[k + n] : t[k];
            t[k] = keep + __shfl_xor_sync(0xffffffffu, send, d);
        }
    }
    u32 v = t[0];
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v;
}

/* First pass of a warp: its nrows rows from image row y (tile row r0),
 * loaded 8 at a time; its half's row totals into rowtot[r][half], the
 * column sums of its rows as 16-bit pairs into cs (word m: columns 4 l +
 * 0 and + 2 of group m; word 4 + m: + 1 and + 3), the pixels into the
 * cache. FULL (the half strip inside the width): all the warp's rows are
 * requested at once by cp.async straight into the cache and read from it
 * (one round trip to memory instead of one per 8 rows; 0.5-1 % faster at
 * 8192^2 on an H200). */
template <bool FULL>
__device__ __forceinline__ void u8_first_pass(const img_in &in, u64 x0,
                                              u64 y, int r0, int nrows,
                                              int rw, u32 (*rowtot)[2],
                                              u32 (*cs)[32], uint4 *cache)
{
    constexpr int G = 8;
    const int lane = threadIdx.x & 31, half = (threadIdx.x >> 5) & 1;
    u32 e[U8_GROUPS], o[U8_GROUPS];
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++)
        e[m] = o[m] = 0;
    if (FULL) {
        /* Every row of the warp in flight at once, straight into the
         * cache, one commit group per G rows. */
        const unsigned char *p =
            reinterpret_cast<const unsigned char *>(in.data) + y * in.pitch + x0;
        for (int rb = 0; rb < nrows; rb += G) {
            for (int r = rb; r < rb + G && r < nrows; r++) {
                u32 *dst = reinterpret_cast<u32 *>(u8_cache_at(cache, rw, r));
#pragma unroll
                for (int m = 0; m < U8_GROUPS; m++)
                    cp_async<4>(dst + m, p + (u64)r * in.pitch + u8_col(m, lane));
            }
            cp_async_commit();
        }
    }
    for (int rb = 0; rb < nrows; rb += G) {
        uint4 raw[G];
        if (FULL) {
            if (rb + G < nrows)
                cp_async_wait<1>();
            else
                cp_async_wait<0>();
        }
#pragma unroll
        for (int r = 0; r < G; r++)
            raw[r] = rb + r >= nrows ? make_uint4(0u, 0u, 0u, 0u)
                     : FULL ? *u8_cache_at(cache, rw, rb + r)
                            : u8_load_row(in.data + (y + rb + r) * in.pitch,
                                          x0, in.width);
        u32 sum[G];
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (!FULL && rb + r < nrows)
                *u8_cache_at(cache, rw, rb + r) = raw[r];
            sum[r] = 0;
#pragma unroll
            for (int m = 0; m < U8_GROUPS; m++) {
                const u32 v = u8_word(raw[r], m);
                e[m] += __byte_perm(v, 0u, 0x4240);
                o[m] += __byte_perm(v, 0u, 0x4341);
                sum[r] = __dp4a(v, 0x01010101u, sum[r]);
            }
        }
        const u32 tot = u8_rows_reduce(sum);
        const int a = (lane >> 2) & 7;
        if ((lane & 3) == 0 && rb + a < nrows)
            rowtot[r0 + rb + a][half] = tot;
    }
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++) {
        cs[m][lane] = e[m];
        cs[U8_GROUPS + m][lane] = o[m];
    }
}

/* Stores a group's 4 entries of one table row: o is the row from the
 * warp's first column, c the group's column there, rem the pixels of the
 * row from there; pixel c goes to column c + PAD. With PAD the aligned
 * piece holds the entry left of the group (before) and its first 3; the
 * group's last entry is the next group's before, and the row's last pixel
 * is written on its own. */
template <bool PAD, bool FULL>
__device__ __forceinline__ void u8_store_group(u32 *o, u32 c, u64 rem,
                                               const u32 (&a)[4], u32 before)
{
    if (FULL || c + 4 <= rem) {
        const uint4 q = PAD ? make_uint4(before, a[0], a[1], a[2])
                            : make_uint4(a[0], a[1], a[2], a[3]);
        /* Evict-first: the table is not read back here, and the look-back
         * vectors and cached pixels keep L2 (0.1239 against 0.1256 ms at
         * 8192^2 with write-back stores). */
        __stcs(reinterpret_cast<uint4 *>(o + c), q);
        if (PAD && c + 4 == rem)
            o[rem] = a[3];
    } else if (c < rem) {
        if (PAD)
            o[c] = before;
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (c + j < rem)
                o[c + j + PAD] = a[j];
    }
}

/* What the row pass adds to each of its rows at the strip's left: rowx(r)
 * for the warp's row r. Sat_u8_kernel's: the row's sum left of the strip
 * (hx) and, in the right half, the left half's row total. */
struct u8_rowx_shared {
    const u32 *hx;
    const u32 (*rowtot)[2];
    int r0, half;
    __device__ u32 operator()(int r) const
    {
        return hx[r0 + r] + (half ? rowtot[r0 + r][0] : 0u);
    }
};

/* The row pass's pixels from the tile's cache (sat_u8_kernel). */
struct u8_src_cache {
    uint4 *cache;
    int rw;
    __device__ uint4 operator()(int r) const { return *u8_cache_at(cache, rw, r); }
};

/* Second pass of a warp: its rows from image row y, acc starting as the
 * table row just above them (colc: column sums of each group's first
 * column down to that row); row r's pixels are src(r) (called for r = 0,
 * 1, ... in turn), and it starts from rowx(r). */
template <bool PAD, bool FULL, class Src, class RowX>
__device__ __forceinline__ void u8_row_pass(const img_in &in,
                                            const img_out &tab, u64 x0, u64 y,
                                            int nrows, Src src, RowX rowx,
                                            u32 (&acc)[U8_GROUPS][4],
                                            u32 (&colc)[U8_GROUPS])
{
    const int lane = threadIdx.x & 31;
    constexpr u32 M[4] = {0x1u, 0x101u, 0x10101u, 0x1010101u};
    const u64 rem = in.width - x0;
    for (int r = 0; r < nrows; r++) {
        const uint4 raw = src(r);
        /* Groups m and m + 2 share a scan: m in the low 16 bits. */
        u32 p[2], inc[2];
#pragma unroll
        for (int k = 0; k < 2; k++) {
            p[k] = __dp4a(u8_word(raw, k), 0x01010101u, 0u) |
                   __dp4a(u8_word(raw, k + 2), 0x01010101u, 0u) << 16;
            inc[k] = p[k];
        }
#pragma unroll
        for (int d = 1; d < 32; d *= 2)
#pragma unroll
            for (int k = 0; k < 2; k++)
                shfl_up_add(inc[k], d);
        u32 g = rowx(r);
        u32 *orow = reinterpret_cast<u32 *>(tab.data + (y + r + PAD) * tab.pitch) + x0;
#pragma unroll
        for (int m = 0; m < U8_GROUPS; m++) {
            const int k = m & 1, sh = m < 2 ? 0 : 16;
            const u32 base = g + (((inc[k] - p[k]) >> sh) & 0xffffu);
            g += (__shfl_sync(0xffffffffu, inc[k], 31) >> sh) & 0xffffu;
            const u32 v = u8_word(raw, m);
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[m][j] += __dp4a(v, M[j], base);
            u32 before = 0;
            if (PAD) {
                colc[m] = __dp4a(v, 1u, colc[m]);
                before = acc[m][0] - colc[m];
            }
            u8_store_group<PAD, FULL>(orow, u8_col(m, lane), rem, acc[m],
                                      before);
        }
    }
}

/* The lane's 16 column values of its half from vinc (the tile's inclusive
 * column sums down the strip, from the half's first column) less cs (16-bit
 * pairs, as u8_first_pass lays them out), into d[m][j]. */
__device__ __forceinline__ void u8_cols_above(const u32 *vinc,
                                              const u32 (*cs)[32],
                                              u32 (&d)[U8_GROUPS][4])
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++) {
        const uint4 v =
            __ldcg(reinterpret_cast<const uint4 *>(vinc + u8_col(m, lane)));
        const u32 re = cs[m][lane], ro = cs[U8_GROUPS + m][lane];
        d[m][0] = v.x - (re & 0xffffu);
        d[m][1] = v.y - (ro & 0xffffu);
        d[m][2] = v.z - (re >> 16);
        d[m][3] = v.w - (ro >> 16);
    }
}

/* acc, the column sums above the warp's first row for the lane's 16
 * columns, becomes the table row just above it: the prefix along the half
 * strip (groups m' < m of every lane, group m of the lanes before) from
 * base; colc: each group's first column sum. */
__device__ __forceinline__ void u8_row_start(u32 (&acc)[U8_GROUPS][4],
                                             u32 (&colc)[U8_GROUPS], u32 base)
{
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++) {
        colc[m] = acc[m][0];
#pragma unroll
        for (int j = 1; j < 4; j++)
            acc[m][j] += acc[m][j - 1];
    }
#pragma unroll
    for (int m = 0; m < U8_GROUPS; m++) {
        const u32 t = acc[m][3];
        const u32 inc = warp_incl_scan(t);
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[m][j] += base + inc - t;
        base += __shfl_sync(0xffffffffu, inc, 31);
    }
}

/* The rows of a warp (second pass): the table row just above them is the
 * block above-left plus the rows' left sums above (base), plus the prefix
 * along the strip of the column sums above the warp's rows: vinc less
 * what the tile's rows from the warp's row group down add (cs_me; cs_left:
 * the same for the left half, which the right half's prefix starts from). */
template <bool PAD, bool FULL>
__device__ __forceinline__ void u8_tile_rows(const img_in &in,
                                             const img_out &tab,
                                             const u32 *vinc,
                                             const u32 (*cs_me)[32],
                                             const u32 (*cs_left)[32],
                                             u32 base, u64 x0, u64 y, int r0,
                                             int nrows, int rw, const u32 *hx,
                                             const u32 (*rowtot)[2],
                                             uint4 *cache)
{
    const int half = (threadIdx.x >> 5) & 1;
    u32 acc[U8_GROUPS][4], colc[U8_GROUPS];
    if (half) {
        u32 left[U8_GROUPS][4];
        u8_cols_above(vinc, cs_left, left);
        base += u8_warp_total(left);
    }
    u8_cols_above(vinc + half * U8_HALF, cs_me, acc);
    u8_row_start(acc, colc, base);
    u8_row_pass<PAD, FULL>(in, tab, x0 + half * U8_HALF, y, nrows,
                           u8_src_cache{cache, rw},
                           u8_rowx_shared{hx, rowtot, r0, half}, acc, colc);
}

/* The same for a half strip that the width cuts, kept out of line so that
 * its checks do not cost the full ones' loop registers. */
template <bool PAD>
__device__ __noinline__ void u8_tile_rows_partial(
    const img_in in, const img_out tab, const u32 *vinc,
    const u32 (*cs_me)[32], const u32 (*cs_left)[32], u32 base, u64 x0, u64 y,
    int r0, int nrows, int rw, const u32 *hx, const u32 (*rowtot)[2],
    uint4 *cache)
{
    u8_tile_rows<PAD, false>(in, tab, vinc, cs_me, cs_left, base, x0, y, r0,
                             nrows, rw, hx, rowtot, cache);
}

/* Publishes w, what the band's rows left of the tile add up to, with
 * status st (one thread): value and status in one 64-bit word, so no
 * fence has to order them. */
__device__ __forceinline__ void u8_publish_w(const sat_lb<u32> &lb, u64 tile,
                                             u32 w, u32 st)
{
    parsum_k::st_status(lb.wpk + tile, (u64)w << 32 | (st | lb.tag));
}

/* The block above-left of the tile (a warp; every warp takes it itself,
 * so that no barrier waits for it): the sum of w over the tiles above,
 * looked back up the strip as sat_lookback does, but from the packed
 * words alone: lane k polls the k-th tile up, and once every tile up to
 * the nearest inclusive one has published, their values are in hand. */
__device__ __forceinline__ u32 u8_lookback_corner(const sat_lb<u32> &lb,
                                                  u64 tile, u64 b, u64 strips)
{
    const int lane = threadIdx.x & 31;
    u32 x = 0;
    for (u64 base = 0; base < b; base += 32) {
        u64 v;
        int last;
        for (;;) {
            v = base + lane < b
                    ? parsum_k::ld_status(lb.wpk + tile - (base + lane + 1) * strips)
                    : (u64)SAT_INC;
            if (sat_window_ready(parsum_k::status_of((u32)v, lb.tag), last))
                break;
        }
        const int cnt = last < 0 ? 32 : last + 1;
        x += warp_sum(lane < cnt ? (u32)(v >> 32) : 0u);
        if (last >= 0)
            break;
    }
    return x;
}

/* Column tiles whose tagged totals a thread loads at once in the column
 * look-back (8: 12 bytes spilled at 80 registers and 0.5-1 % slower on an
 * H200 at 8192^2 and 16384^2). */
constexpr int U8_CB = 6;
/* Tagged words a tile has in sat_lb::hwt (row totals, inclusive row
 * sums) and vwt (column totals, two per thread). */
constexpr int U8_HW = 2 * MAX_BAND, U8_VW = 2 * THREADS;

/* The high half of this call's tagged words: tag | 1, never 0, so that a
 * zeroed word reads as unwritten also when the status words are zeroed
 * before the call (tag 0). */
__device__ __forceinline__ unsigned long long u8_tw_high(u32 tag)
{
    return (unsigned long long)(tag | 1u) << 32;
}

/* Whether tagged word w was written in the call whose high half is hi. */
__device__ __forceinline__ bool u8_tw_ok(unsigned long long w, unsigned long long hi)
{
    return (w >> 32) == (hi >> 32);
}

__device__ __forceinline__ ulonglong2 u8_ld_tw2(const unsigned long long *p)
{
    ulonglong2 v;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(v.x), "=l"(v.y)
                 : "l"(p)
                 : "memory");
    return v;
}

__device__ __forceinline__ void u8_st_tw2(unsigned long long *p, ulonglong2 v)
{
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p),
                 "l"(v.x), "l"(v.y)
                 : "memory");
}

/* The row look-back on tagged words (threads i < MAX_BAND, row i): walks
 * left from the tile, 8 predecessors' inclusive and total words loaded at
 * once, adding totals until an inclusive sum turns up (or the band's first
 * tile is passed); a word not yet written is read again. Every thread
 * walks on its own and may stop at a different tile: the sums are the same.
 * hx[i] = the sum left of the tile; publishes the inclusive one without a
 * fence. Contains a barrier, after which hx is complete. */
__device__ __forceinline__ void u8_lookback_rows(const sat_lb<u32> &lb,
                                                 u64 tile, u64 s, u32 rt,
                                                 u32 *hx, unsigned long long hi)
{
    constexpr int B = 8;
    const int i = threadIdx.x;
    if (i < MAX_BAND) {
        u32 x = 0;
        u64 k = 0;
        bool fin = false;
        while (!fin && k < s) {
            unsigned long long inc[B], agg[B];
#pragma unroll
            for (int j = 0; j < B; j++) {
                const unsigned long long *w = lb.hwt + (tile - 1 - (k + j)) * U8_HW + i;
                inc[j] = k + j < s ? parsum_k::ld_status(w + MAX_BAND) : 0ull;
                agg[j] = k + j < s ? parsum_k::ld_status(w) : 0ull;
            }
            bool go = true;
            u64 adv = 0;
#pragma unroll
            for (int j = 0; j < B; j++) {
                if (go && k + j < s) {
                    if (u8_tw_ok(inc[j], hi)) {
                        x += (u32)inc[j];
                        fin = true;
                        go = false;
                    } else if (u8_tw_ok(agg[j], hi)) {
                        x += (u32)agg[j];
                        adv++;
                    } else {
                        go = false;
                    }
                }
            }
            k += adv;
        }
        parsum_k::st_status(lb.hwt + tile * U8_HW + MAX_BAND + i, hi | (x + rt));
        hx[i] = x;
    }
    __syncthreads();
}

/* Publishes the column sums down the strip through the tile (columns 4 i
 * .. 4 i + 3 of thread i): those above it, looked back for, plus col, the
 * tile's own. Lane k of each warp polls the k-th tile up for an inclusive
 * status (a tile sets it after its vinc vector and a fence); the totals of
 * the tiles before the nearest such one are tagged words of 16-bit pairs
 * (64 rows of bytes sum to at most 16320; thread i's two words hold
 * columns 4 i and 4 i + 2, 4 i + 1 and 4 i + 3), U8_CB tiles' loaded at
 * once and read again until all are written. Warps may find different
 * nearest inclusive tiles: the sums are the same. Contains a barrier
 * (sat_post). Inclusive vectors as tagged words too (8 KB a tile, no
 * fence before the status) were slower: 0.1179-0.1190 against
 * 0.1118-0.1128 ms at 8192^2 on an H200. */
__device__ __forceinline__ void u8_lookback_cols(const sat_lb<u32> &lb,
                                                 u64 tile, u64 b, u64 strips,
                                                 const uint4 &col,
                                                 unsigned long long hi)
{
    constexpr int B = U8_CB;
    const int lane = threadIdx.x & 31;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    for (u64 base = 0; base < b; base += 32) {
        const u32 st =
            base + lane < b
                ? parsum_k::status_of(
                      parsum_k::ld_status(lb.vst + tile - (base + lane + 1) * strips),
                      lb.tag)
                : SAT_INC;
        const int last = __ffs(__ballot_sync(0xffffffffu, st == SAT_INC)) - 1;
        const int nagg = last < 0 ? 32 : last;
        uint4 x = make_uint4(0u, 0u, 0u, 0u);
        if (last >= 0 && base + last < b) {
            parsum_k::fence_gpu();
            x = __ldcg(reinterpret_cast<const uint4 *>(
                           lb.vinc + (tile - (base + last + 1) * strips) * STRIP) +
                       threadIdx.x);
        }
        for (int j0 = 0; j0 < nagg; j0 += B) {
            ulonglong2 a[B];
            bool all;
            do {
                all = true;
#pragma unroll
                for (int k = 0; k < B; k++) {
                    a[k] = j0 + k < nagg
                               ? u8_ld_tw2(lb.vwt +
                                           (tile - (base + j0 + k + 1) * strips) * U8_VW +
                                           2 * threadIdx.x)
                               : make_ulonglong2(hi, hi);
                    all = all && u8_tw_ok(a[k].x, hi) && u8_tw_ok(a[k].y, hi);
                }
            } while (!all);
#pragma unroll
            for (int k = 0; k < B; k++) {
                const u32 ax = (u32)a[k].x, ay = (u32)a[k].y;
                v.x += ax & 0xffffu, v.y += ay & 0xffffu;
                v.z += ax >> 16, v.w += ay >> 16;
            }
        }
        v.x += x.x, v.y += x.y, v.z += x.z, v.w += x.w;
        if (last >= 0)
            break;
    }
    __stcg(reinterpret_cast<uint4 *>(lb.vinc + tile * STRIP) + threadIdx.x,
           make_uint4(v.x + col.x, v.y + col.y, v.z + col.z, v.w + col.w));
    sat_post(lb.vst, tile, SAT_INC, lb.tag);
}

/* Suffix sums of the warps' column sums over the row groups, in place:
 * cs[2 q + h] becomes what rows q rw and below add to each column of half
 * h, cs[h] the tile's column totals. Thread i takes columns 4 i .. 4 i +
 * 3 (group (i / 32) % 4 of lane i % 32 in half i / 128) and returns their
 * totals as 16-bit pairs: x columns 4 i and 4 i + 2, y 4 i + 1 and 4 i + 3. */
__device__ __forceinline__ uint2 u8_col_suffix(u32 (*cs)[2 * U8_GROUPS][32])
{
    const int i = threadIdx.x, lane = i & 31;
    const int hi = i / 128, mi = (i / 32) % 4;
    u32 se = 0, so = 0;
#pragma unroll
    for (int q = U8_RGROUPS - 1; q >= 0; q--) {
        u32 (*c)[32] = cs[2 * q + hi];
        se += c[mi][lane];
        c[mi][lane] = se;
        so += c[U8_GROUPS + mi][lane];
        c[U8_GROUPS + mi][lane] = so;
    }
    return make_uint2(se, so);
}

/* Thread i's 4 column totals from u8_col_suffix's pairs. */
__device__ __forceinline__ uint4 u8_col_unpack(uint2 p)
{
    return make_uint4(p.x & 0xffffu, p.y & 0xffffu, p.x >> 16, p.y >> 16);
}

/* The whole table (see the top). band_rows = 4 rw; the dynamic shared
 * memory holds the tile's pixels, band_rows rows of 1024 bytes. */
template <bool PAD>
__global__ void __launch_bounds__(THREADS, U8_BLOCKS)
    sat_u8_kernel(img_in in, img_out tab, sat_geom g, sat_lb<u32> lb)
{
    extern __shared__ uint4 u8_cache[];
    __shared__ u32 cs[WARPS][2 * U8_GROUPS][32];
    __shared__ u32 rowtot[MAX_BAND][2], hx[MAX_BAND];
    __shared__ u32 s_tile;
    const int i = threadIdx.x, lane = i & 31, warp = i >> 5;
    const int half = warp & 1, q = warp >> 1;
    const u64 tile =
        (u32)(parsum_k::claim_tile(lb.counter, s_tile, false) - lb.tile_base);
    const auto [b, s, x0, y0, xh, rows, rw, r0, nrows] =
        u8_place_of(tile, g, in, q, half);
    const bool full = xh + U8_HALF <= in.width;

    if (full)
        u8_first_pass<true>(in, xh, y0 + r0, r0, nrows, rw, rowtot, cs[warp],
                            u8_cache);
    else
        u8_first_pass<false>(in, xh, y0 + r0, r0, nrows, rw, rowtot, cs[warp],
                             u8_cache);
    __syncthreads();
    const u32 rt = i < rows && i < MAX_BAND ? rowtot[i][0] + rowtot[i][1] : 0u;
    const uint2 colp = u8_col_suffix(cs);
    /* The tile's totals as tagged words: the tiles to the right and below
     * may read them as soon as they are written (no fence, no status). */
    const unsigned long long hi = u8_tw_high(lb.tag);
    if (i < MAX_BAND)
        parsum_k::st_status(lb.hwt + tile * U8_HW + i, hi | rt);
    u8_st_tw2(lb.vwt + tile * U8_VW + 2 * i,
              make_ulonglong2(hi | colp.x, hi | colp.y));
    u8_lookback_rows(lb, tile, s, rt, hx, hi);
    u32 w = 0;
    if (warp == 0) {
        w = warp_sum(hx[lane] + hx[lane + 32]);
        if (lane == 0)
            u8_publish_w(lb, tile, w, SAT_AGG);
    }
    u8_lookback_cols(lb, tile, b, g.strips, u8_col_unpack(colp), hi);
    const u32 wx = u8_lookback_corner(lb, tile, b, g.strips);
    if (i == 0)
        u8_publish_w(lb, tile, wx + w, SAT_INC);
    if (PAD && b == 0)
        sat_zero_top<u32, 1>(tab, x0 + 4 * i, in.width, s);
    if (nrows == 0 || xh >= in.width)
        return;
    /* The left sums of the tile's rows above the warp's. */
    u32 h = (lane < r0 ? hx[lane] : 0u) + (lane + 32 < r0 ? hx[lane + 32] : 0u);
    h = warp_sum(h);
    const u32 *vinc = lb.vinc + tile * STRIP;
    if (full)
        u8_tile_rows<PAD, true>(in, tab, vinc, cs[warp], cs[warp - half],
                                wx + h, x0, y0 + r0, r0, nrows, rw, hx,
                                rowtot, u8_cache);
    else
        u8_tile_rows_partial<PAD>(in, tab, vinc, cs[warp], cs[warp - half],
                                  wx + h, x0, y0 + r0, r0, nrows, rw, hx,
                                  rowtot, u8_cache);
}

} /* namespace parsum_img */

#endif
