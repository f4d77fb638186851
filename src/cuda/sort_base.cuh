/*
 * sort_base.cuh - what the GPU radix sort's kernels (sort_kernels.cuh) and
 * the segmented sort's (segsort_kernels.cuh) share: key and value modes,
 * the tuning policies, the argument blocks the host fills (sort.cu,
 * segsort.cu), and the device pieces: ordered keys and digits, warp and
 * block ranking helpers. The design is described at the top of
 * sort_kernels.cuh.
 */
#ifndef PARSUM_SORT_BASE_CUH
#define PARSUM_SORT_BASE_CUH

#include "sort/sort_keys.h"

#include <stdint.h>
#include <string.h>

#include <type_traits>

#if defined(__CUDACC__)
/* ld_status / st_status: the look-back descriptors' relaxed accesses */
#include "kernel_common.cuh"
#endif

namespace parsum_sk {

typedef unsigned int u32;
typedef unsigned long long u64;

constexpr int RADIX_BITS = 8;
constexpr u32 RADIX = 1u << RADIX_BITS;
constexpr int MAX_PASSES = 8;
constexpr u32 FULL = 0xFFFFFFFFu;

/* Look-back descriptor: status in bits 31..30, count below. */
constexpr u32 ST_AGG = 1u << 30;
constexpr u32 ST_INC = 2u << 30;
constexpr u32 COUNT_MASK = (1u << 30) - 1u;

/* How a key's raw bits become its ordered bits. */
enum : u32 { KC_UNSIGNED = 0, KC_SIGNED = 1, KC_FLOAT = 2 };

/* How values move: none, as one 4- or 8-byte word, or as vword-sized
 * words (1, 2, 4 or 8 bytes) of any value_size up to 16. */
enum : int { V_NONE = 0, V_4 = 1, V_8 = 2, V_BYTES = 3 };

/* Buffers a pass reads or writes: the caller's input, the scratch buffer,
 * the output; B_GEN: the values are the keys' input positions. */
enum : u32 { B_IN = 0, B_TMP = 1, B_OUT = 2, B_GEN = 3 };

/* What sort_copy_kernel does for keys or values. */
enum : u32 { C_NONE = 0, C_IN_TMP = 1, C_IN_OUT = 2, C_GEN_OUT = 3 };

/* ------------------------------------------------------------------------ */
/* Tuning: policy data, by key size and value mode.                          */
/* ------------------------------------------------------------------------ */

/* Bytes per value a kernel is built for (V_BYTES: the largest). */
__host__ __device__ constexpr int value_bytes(int v)
{
    return v == V_NONE ? 0 : v == V_4 ? 4 : v == V_8 ? 8 : 16;
}

struct tile_policy {
    int block;      /* threads; a multiple of 32, at least RADIX */
    int items;      /* keys per thread */
    int min_blocks; /* resident blocks per multiprocessor to compile for */
};

/* The onesweep tile and its ranking, as variants that one build carries
 * so that they can be compared on a device without rebuilding (sort.cu
 * picks one per call; PARSUM_SORT_VARIANT overrides). Items per thread
 * shrink as the bytes per key grow, so that registers and the shared
 * exchange buffer stay in bounds.
 *   match: 0 finds the lanes sharing a digit with match.any, whose cost
 *          grows with the number of distinct values in the warp (about 30
 *          of 32 for random 8-bit digits); 1 with one ballot per digit
 *          bit, a fixed cost; 2 with a shared-memory OR of lane bits
 *          per digit (warp_rank_or), fewer instructions than 1.
 *   lbw:   look-back window: predecessors' descriptors read per step
 *          (variant 5 also has kernels reading one: os_args.lbw).
 * Variant 0 is compiled for every key and value layout; the others only
 * for the layouts that the benchmarks time (os_variant_built). */
struct os_policy {
    int block, items, min_blocks, match, lbw;
};
struct os_variant {
    int block, min_blocks, match, lbw;
    int items4, items8, items16, items24; /* by key + value bytes */
    int min_blocks4; /* min_blocks for 4 bytes a key (and value) */
};
constexpr int OS_VARIANTS = 6;
/* Variant 5's resident blocks for layouts wider than 4 bytes a key and
 * value (a tuning knob: 3 caps registers at 56, measured slower). */
#ifndef PARSUM_SORT_MB8
#define PARSUM_SORT_MB8 2
#endif
__host__ __device__ constexpr os_variant os_variant_of(int var)
{
    /* 0: CUB's sm90 tile (384 x 21 for 4-byte keys), ballot matching.
     * 1: the same ranked with match.any (what ballots save).
     * 2: 512 x 15, two blocks (64 registers): more warps to hide latency.
     * 3: 256 x 12, four blocks: small tiles, for n of a few million.
     * 4: 384 x 10, two blocks: half tiles, same occupancy as 0.
     * 5: 0's tile ranked by shared-memory OR masks (match 2), three
     *    blocks per multiprocessor for 4-byte keys (56 registers: the
     *    occupancy CUB's pass has; at two, 80 registers, the same
     *    instructions issued at 0.8 of CUB's rate). Wider layouts stay at
     *    two (PARSUM_SORT_MB8): at three, 56 registers spilled, and u32
     *    pairs and u64 keys ran 19 % and 22 % slower. */
    return var == 5   ? os_variant{384, PARSUM_SORT_MB8, 2, 4, 21, 17, 12, 9, 3}
           : var == 1 ? os_variant{384, 2, 0, 4, 21, 17, 12, 9, 2}
           : var == 2 ? os_variant{512, 2, 1, 4, 15, 11, 8, 6, 2}
           : var == 3 ? os_variant{256, 4, 1, 4, 12, 9, 6, 5, 4}
           : var == 4 ? os_variant{384, 2, 1, 4, 10, 8, 6, 5, 2}
                      : os_variant{384, 2, 1, 4, 21, 17, 12, 9, 2};
}

__host__ __device__ constexpr os_policy onesweep_policy(int ks, int v,
                                                        int var = 0)
{
    return os_policy{
        os_variant_of(var).block,
        ks + value_bytes(v) <= 4    ? os_variant_of(var).items4
        : ks + value_bytes(v) <= 8  ? os_variant_of(var).items8
        : ks + value_bytes(v) <= 16 ? os_variant_of(var).items16
                                    : os_variant_of(var).items24,
        ks + value_bytes(v) <= 4 ? os_variant_of(var).min_blocks4
                                 : os_variant_of(var).min_blocks,
        os_variant_of(var).match,
        os_variant_of(var).lbw};
}

/* Layouts the variants other than 0 are built for: 4-byte keys alone or
 * with 4-byte values, 8-byte keys alone. */
__host__ __device__ constexpr bool os_variant_built(int var, int ks, int v)
{
    return var == 0 ||
           (var > 0 && var < OS_VARIANTS &&
            ((ks == 4 && (v == V_NONE || v == V_4)) ||
             (ks == 8 && v == V_NONE)));
}

/* One block sorting a whole tile in shared memory: the small sort (n up
 * to the tile) and the segmented sort's medium segments. Two shapes: a
 * small one for segments just above the warp sort, a large one. */
#ifndef PARSUM_SORT_BS_SMALL_ITEMS
#define PARSUM_SORT_BS_SMALL_ITEMS 2 /* 256 x 2 = 512 keys */
#endif
#ifndef PARSUM_SORT_BS_LARGE_BLOCK
#define PARSUM_SORT_BS_LARGE_BLOCK 512
#endif
#ifndef PARSUM_SORT_BS_LARGE_ITEMS
#define PARSUM_SORT_BS_LARGE_ITEMS 8 /* 4096 keys */
#endif
__host__ __device__ constexpr tile_policy block_sort_policy(bool large)
{
    return large ? tile_policy{PARSUM_SORT_BS_LARGE_BLOCK,
                               PARSUM_SORT_BS_LARGE_ITEMS, 1}
                 : tile_policy{256, PARSUM_SORT_BS_SMALL_ITEMS, 1};
}

/* The histogram kernel: threads per block; chunks of HIST_CHUNK_TILES
 * onesweep tiles per block step (a portion is a whole number of chunks,
 * so a chunk never straddles two portions). */
constexpr int HIST_BLOCK = 512;
constexpr u32 HIST_CHUNK_TILES = 4;

/* Largest portion: counts must stay below 2^30 (COUNT_MASK). */
constexpr u64 PORTION_LIMIT = (1ull << 30) - 1;

/* ------------------------------------------------------------------------ */
/* Argument blocks (shared with the host).                                   */
/* ------------------------------------------------------------------------ */

/* Which buffers a pass uses, written by sort_plan_kernel. */
struct route {
    u32 active; /* 0: the pass is skipped */
    u32 seq;    /* rank among the active passes */
    u32 ksrc, kdst, vsrc, vdst; /* B_* */
};

/* How keys of one call are ordered: digit of pass p =
 * ((ord(key) >> (begin_bit + 8p)) & mask_p) ^ (descending ? mask_p : 0). */
struct key_order {
    u32 kc;
    u32 begin_bit, end_bit;
    u32 descending;
    u32 passes;
};

struct hist_args {
    const void *keys;
    u64 n;
    u64 chunk;        /* keys per chunk */
    u64 portion_size; /* keys per portion, a multiple of chunk */
    key_order ko;
    u32 *hist; /* [portions][MAX_PASSES][RADIX], zeroed */
};

struct plan_args {
    const u32 *hist;
    u64 *base;     /* [MAX_PASSES][portions][RADIX] */
    route *routes; /* [MAX_PASSES] */
    u32 *copy;     /* [2]: C_* for keys, values */
    u64 n;
    u32 passes, portions;
    u32 k_inplace, v_inplace, has_values, gen;
};

struct copy_args {
    const void *kin;
    void *ktmp, *kout;
    const void *vin;
    void *vtmp, *vout;
    u64 n;
    u32 ks, vs;
    const u32 *copy;
};

struct os_args {
    const void *kin;
    void *ktmp, *kout;
    const void *vin;
    void *vtmp, *vout;
    u64 first; /* this portion's first key */
    u64 count; /* its keys */
    u32 num_tiles, max_tiles;
    u32 pass, portion, portions;
    key_order ko;
    u32 vsize, vword; /* V_BYTES */
    const u64 *base;
    const route *routes;
    u32 *desc[2];
    u32 *counter[2];
    /* Not in place: no copy kernel was launched, and the launches of the
     * last pass do the copy the plan asks for when every pass is skipped
     * (each portion's launch its own keys). */
    u32 fold_copy;
    const u32 *copy;
    u32 pos32; /* every output position fits 32 bits (n <= 2^32) */
    u32 lbw;   /* host side: 1 launches the one-step look-back kernels
                * where they are built (sort_os.cuh, passes_t) */
};

#if defined(__CUDACC__)

/* ------------------------------------------------------------------------ */
/* Keys and digits                                                           */
/* ------------------------------------------------------------------------ */

template <class K>
__device__ __forceinline__ K ord_of(K b, u32 kc)
{
    if constexpr (sizeof(K) == 1) {
        return kc == KC_SIGNED ? (K)parsum__ord_i8(b) : b;
    } else if constexpr (sizeof(K) == 2) {
        return kc == KC_SIGNED ? (K)parsum__ord_i16(b) : b;
    } else if constexpr (sizeof(K) == 4) {
        return kc == KC_FLOAT    ? (K)parsum__ord_f32(b)
               : kc == KC_SIGNED ? (K)parsum__ord_i32(b)
                                 : b;
    } else {
        return kc == KC_FLOAT    ? (K)parsum__ord_f64(b)
               : kc == KC_SIGNED ? (K)parsum__ord_i64(b)
                                 : b;
    }
}

/* Pass `pass`'s digit: bits [shift, shift + RADIX_BITS) of the ordered
 * key, cut at end_bit; mask 0 for a pass past end_bit. */
__device__ __forceinline__ void pass_digit_bits(const key_order &ko, u32 pass,
                                                u32 &shift, u32 &mask)
{
    shift = ko.begin_bit + (u32)RADIX_BITS * pass;
    u32 bits = ko.end_bit > shift ? ko.end_bit - shift : 0u;
    if (bits > (u32)RADIX_BITS)
        bits = RADIX_BITS;
    mask = (1u << bits) - 1u;
}

/* One pass's digit parameters. For 4- and 8-byte keys the three orders
 * are one branch-free formula with per-call masks (the key class is a
 * run-time value, and selecting among three transforms costs every key
 * about twice the instructions, three times per pass):
 *   NaN (floats only; nan_above is all-ones otherwise): sign dropped,
 *   ord = b ^ ((sign ? fmask : 0) | smask), digit from ord ^ fa,
 * where fmask = ~smask-bit for floats, smask = the sign bit for signed
 * and float keys, fa = all-ones when descending (flipping every bit
 * before the shift flips exactly the digit's bits). */
struct digit_fn {
    u32 kc, shift, mask, flip;
    u64 fmask, smask, fa, nan_above;
    __device__ __forceinline__ digit_fn(const key_order &ko, u32 pass)
    {
        kc = ko.kc;
        pass_digit_bits(ko, pass, shift, mask);
        flip = ko.descending ? mask : 0u;
        const bool fl = kc == KC_FLOAT;
        fmask = fl ? ~0ull : 0ull;
        smask = kc == KC_UNSIGNED ? 0ull : ~0ull;
        fa = ko.descending ? ~0ull : 0ull;
        nan_above = fl ? 0ull : ~0ull; /* width-dependent part below */
    }
    /* int_digit_fn's signature, so that a kernel may take either */
    __device__ __forceinline__ digit_fn(const key_order &ko, u32 pass, int)
        : digit_fn(ko, pass)
    {
    }
    template <class K>
    __device__ __forceinline__ u32 operator()(K b) const
    {
        if constexpr (sizeof(K) >= 4) {
            constexpr K SIGN = (K)1 << (sizeof(K) * 8 - 1);
            constexpr K INF = sizeof(K) == 4 ? (K)0x7F800000u
                                             : (K)0x7FF0000000000000ull;
            const K lim = (K)nan_above | INF;
            const K mag = b & ~SIGN;
            if (mag > lim)
                b = mag;
            const K neg = (K)((typename std::make_signed<K>::type)b >>
                              (sizeof(K) * 8 - 1));
            const K o = b ^ ((neg & (K)fmask & ~SIGN) | ((K)smask & SIGN)) ^
                        (K)fa;
            return (u32)(o >> shift) & mask;
        } else {
            return ((u32)(ord_of(b, kc) >> shift) & mask) ^ flip;
        }
    }
};

/* The digit of an integer key (KC_UNSIGNED or KC_SIGNED) in two
 * instructions, where digit_fn's run-time formula takes about eight (its
 * NaN test and sign select are for floats): ord = b ^ x0 with x0 the
 * sign bit for signed keys, all bits flipped when descending, and
 * (ord >> shift) & mask = ((b >> shift) ^ (x0 >> shift)) & mask. The
 * onesweep kernel takes it when the key class is known to be an integer
 * at compile time (its KD parameter); the histogram kernel applies it to
 * a float key's ordered bits (ord_of) too, where x0 only flips for
 * descending. */
struct int_digit_fn {
    u32 shift, xs, mask;
    int_digit_fn() = default;
    __device__ __forceinline__ int_digit_fn(const key_order &ko, u32 pass,
                                            int key_bytes)
    {
        pass_digit_bits(ko, pass, shift, mask);
        const u64 sign = ko.kc == KC_SIGNED
                             ? 1ull << (key_bytes * 8 - 1)
                             : 0ull;
        const u64 x0 = sign ^ (ko.descending ? ~0ull : 0ull);
        xs = shift < 64u ? (u32)(x0 >> shift) : 0u;
    }
    template <class K>
    __device__ __forceinline__ u32 operator()(K b) const
    {
        return ((u32)(b >> shift) ^ xs) & mask;
    }
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

/* Exclusive prefix over threads 0..RADIX-1 of x (threads beyond RADIX
 * pass 0 and get garbage). Every thread of the block must call it; wsum
 * holds RADIX / 32 words. */
template <class T>
__device__ __forceinline__ T scan_digits(T x, T *wsum)
{
    const u32 tid = threadIdx.x, lane = tid & 31u, w = tid >> 5;
    T inc = x;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        T y = __shfl_up_sync(FULL, inc, o);
        if (lane >= o)
            inc += y;
    }
    if (w < RADIX / 32 && lane == 31u)
        wsum[w] = inc;
    __syncthreads();
    T pre = 0;
    if (tid < RADIX)
        for (u32 k = 0; k < w; ++k)
            pre += wsum[k];
    __syncthreads();
    return pre + inc - x;
}

/* Ranks a warp's ITEMS x 32 digits in input order (item-major, then lane):
 * rank[i] = keys of the same digit before this one in the warp. wb: the
 * warp's RADIX counters, zeroed; left holding the warp's digit counts.
 * dig[i] >= RADIX marks an item that takes no part. The lowest lane of
 * each group of equal digits bumps the counter with one shared atomic.
 * MATCH 0 finds the groups with match.any; MATCH 1 with one ballot per
 * digit bit (see os_variant_of). */
template <int ITEMS, int MATCH = 1>
__device__ __forceinline__ void warp_rank(const u32 (&dig)[ITEMS], u32 *wb,
                                          u32 (&rank)[ITEMS])
{
    const u32 lane = threadIdx.x & 31u;
    const u32 lt = (1u << lane) - 1u;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const u32 d = dig[i];
        u32 peers;
        if constexpr (MATCH == 0) {
            /* Items out of range are RADIX + lane: alone in the warp. */
            peers = __match_any_sync(FULL, d < RADIX ? d : RADIX + lane);
        } else {
            const bool ok = d < RADIX;
            peers = __ballot_sync(FULL, ok);
#pragma unroll
            for (int bit = 0; bit < RADIX_BITS; ++bit) {
                const u32 m = __ballot_sync(FULL, (d >> bit) & 1u);
                peers &= ((d >> bit) & 1u) ? m : ~m;
            }
            if (!ok)
                peers = 1u << lane;
        }
        const int leader = __ffs(peers) - 1;
        u32 old = 0;
        if (lane == (u32)leader && d < RADIX)
            old = atomicAdd(&wb[d], (u32)__popc(peers));
        old = __shfl_sync(FULL, old, leader);
        rank[i] = old + (u32)__popc(peers & lt);
        /* The next item's leader may be another lane. */
        __syncwarp();
    }
}

/* warp_rank's MATCH 2 (os_variant_of), by half-warps: the lanes of a
 * half-warp sharing a digit are found by each lane OR-ing its bit into
 * the digit's word in shared memory and reading the word back; the lowest
 * lane of the group then clears the mask and adds the group to the count,
 * which shares the word (mask in bits 0-15, count in bits 16-31). About 6
 * instructions per item where ballots take about 40. One 32-bit word per
 * digit, not a (mask, count) pair of a 32-lane mask: the pass was bound by
 * the shared-memory pipe, where the pairs' 8-byte loads and stores at
 * random digits took 5.8 wavefronts each (2 without bank conflicts).
 * The caller gives each half-warp its own half of the warp's positions
 * and entries, and adds half 1's ranks to half 0's counts (so the order
 * is stable).
 *
 * ent: the half-warp's RADIX + 1 words (0 on entry; on return the masks
 * are 0 and the counts those of the half-warp); word RADIX takes the
 * items past the end of a partial tile (digit_of(i) == RADIX), so that
 * no item needs a branch. The counts are the half-warp's own and only
 * the lowest lane of a group writes its digit's word, so plain loads and
 * stores do. rank[i] is returned with the digit in bits 16 and up (a
 * half-warp ranks fewer than 2^16 keys), so that the tile scatter need
 * not recompute it. digit_of(i) is called once per item, inside the loop:
 * digits computed up front would hold ITEMS more registers across it (the
 * kernel's occupancy is set by its registers). */
template <int ITEMS, class DigitOf>
__device__ __forceinline__ void warp_rank_or(const DigitOf &digit_of, u32 *ent,
                                             u32 (&rank)[ITEMS])
{
    static_assert(16 * ITEMS < (1 << 16), "16-bit counts");
    const u32 bit = 1u << (threadIdx.x & 15u);
    const u32 lt = bit - 1u;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const u32 d = digit_of(i);
        atomicOr(&ent[d], bit);
        __syncwarp();
        const u32 x = ent[d];
        __syncwarp();
        const u32 m = x & 0xFFFFu;
        const u32 below = m & lt;
        if (below == 0u)
            ent[d] = (x & 0xFFFF0000u) + ((u32)__popc(m) << 16);
        rank[i] = (d << 16) + (x >> 16) + (u32)__popc(below);
        /* The next item may OR into the word just cleared. */
        __syncwarp();
    }
}

/* After warp_rank in every warp (and a barrier): for digit d = tid < RADIX
 * turns wbins[w][d] into the keys of digit d in warps before w and
 * returns the tile's count of d (0 for the other threads). */
template <int NW>
__device__ __forceinline__ u32 digit_totals(u32 *wbins)
{
    const u32 d = threadIdx.x;
    u32 run = 0;
    if (d < RADIX) {
#pragma unroll
        for (int w = 0; w < NW; ++w) {
            const u32 c = wbins[w * RADIX + d];
            wbins[w * RADIX + d] = run;
            run += c;
        }
    }
    return run;
}

/* Copies the value_size bytes of value i from src to value j of dst in
 * words of vword bytes (vword divides vsize and both pointers). */
__device__ __forceinline__ void copy_value(void *dst, u64 j, const void *src,
                                           u64 i, u32 vsize, u32 vword)
{
    const u32 nw = vsize / vword;
    switch (vword) {
    case 8: {
        const u64 *s = (const u64 *)src + i * nw;
        u64 *d = (u64 *)dst + j * nw;
        for (u32 k = 0; k < nw; ++k)
            d[k] = s[k];
        break;
    }
    case 4: {
        const u32 *s = (const u32 *)src + i * nw;
        u32 *d = (u32 *)dst + j * nw;
        for (u32 k = 0; k < nw; ++k)
            d[k] = s[k];
        break;
    }
    case 2: {
        const unsigned short *s = (const unsigned short *)src + i * nw;
        unsigned short *d = (unsigned short *)dst + j * nw;
        for (u32 k = 0; k < nw; ++k)
            d[k] = s[k];
        break;
    }
    default: {
        const unsigned char *s = (const unsigned char *)src + i * nw;
        unsigned char *d = (unsigned char *)dst + j * nw;
        for (u32 k = 0; k < nw; ++k)
            d[k] = s[k];
        break;
    }
    }
}

template <int V>
struct value_word;
template <>
struct value_word<V_4> {
    typedef u32 type;
};
template <>
struct value_word<V_8> {
    typedef u64 type;
};

#endif /* __CUDACC__ */

} /* namespace parsum_sk */

#endif
