/*
 * segsort_kernels.cuh - sorts that one block or one warp finishes alone:
 * the small sort (a whole array of up to one tile, for low latency) and
 * the segmented sort's kernels (segsort.cu and sort.cu launch them).
 *
 *  - block_sort_kernel: one block sorts up to BLOCK * ITEMS keys in
 *    shared memory: keys and values are read once, every pass ranks the
 *    keys (warp_rank of sort_kernels.cuh, the onesweep tile's ranking)
 *    and moves only their 32-bit tile positions, and the sorted keys and
 *    values are written once at the end. Either one range [0, n) or,
 *    looping over a list, one segment after another.
 *  - warp_sort_kernel: G lanes (8, 16 or 32) sort a segment of at most G
 *    keys, or a warp one of at most 128 (4 a lane): each lane counts, for
 *    each of its keys, the keys that must precede it (smaller, or equal
 *    and earlier: stable), which is its output slot; the keys are read
 *    from shared memory, a 16-byte piece per broadcast load.
 *  - seg_classify_kernel: the segments' lengths put each segment in one
 *    list per size class (block-aggregated atomics; the order within a
 *    list varies from run to run, the result does not), and checks the
 *    offsets.
 *
 * Offsets are read as they are: a segment is clamped to [0, n) and one
 * whose end lies before its start is empty, so no kernel touches memory
 * outside the arrays whatever the offsets hold.
 */
#ifndef PARSUM_SEGSORT_KERNELS_CUH
#define PARSUM_SEGSORT_KERNELS_CUH

#include "sort_kernels.cuh"

namespace parsum_sk {

/* Segment size classes: at most 8 keys (warp sort, groups of 8 lanes),
 * 16 (groups of 16), 32 (a warp), 64 (a warp, 2 keys a lane), 128 (a
 * warp, 4 keys a lane), the small block tile, the large block tile, and
 * larger (onesweep per segment, launched by the host). Empty segments are in no list. Segments of a few
 * dozen keys are common (random cuts with a mean of 16 give one in seven
 * above 32): a block with its barriers per pass costs them far more than
 * one warp working from registers. */
enum : int { SC_W8 = 0, SC_W16 = 1, SC_W32 = 2, SC_W64 = 3, SC_W128 = 4,
             SC_BS = 5, SC_BL = 6, SC_HUGE = 7, SC_COUNT = 8 };

struct bs_args {
    const void *kin;
    void *kout; /* NULL: keys not wanted */
    const void *vin;
    void *vout;
    u64 n;
    /* NULL: sort the one range [0, n). Else the segments list[0 ..
     * *list_count) of offsets. */
    const u64 *offsets;
    const u32 *list;
    const u32 *list_count;
    key_order ko;
    u32 vsize, vword; /* V_BYTES */
    u32 gen;          /* values are input positions (single range only) */
};

struct ws_args {
    const void *kin;
    void *kout;
    const void *vin;
    void *vout;
    u64 n;
    /* The segments list[0 .. *list_count), each as begin << 8 | length
     * (at most 128 keys), clamped to [0, n) by the classification. */
    const u64 *list;
    const u32 *list_count;
    key_order ko;
    u32 vsize, vword;
};

struct classify_args {
    const u64 *offsets;
    u64 num_segments;
    u64 n;
    u32 limit[SC_HUGE]; /* largest length of each class below SC_HUGE */
    /* [SC_BS][num_segments]: the warp classes' segments as begin << 8 |
     * length, so that a warp sort reads one word, not the list entry and
     * then, waiting for it, two offsets. */
    u64 *wlists;
    u32 *blists; /* [SC_HUGE - SC_BS][num_segments]: segment numbers */
    u32 *counts;        /* [SC_COUNT], zeroed */
    u32 *bad;           /* set when the offsets are not valid, zeroed */
    u64 *huge;          /* (begin, end) of each huge segment */
    u64 huge_cap;       /* entries huge can hold */
    /* The first huge_first_cap entries again, next to the counts: the
     * host reads them with the counts in one copy. */
    u64 *huge_first;
    u64 huge_first_cap;
};

#if defined(__CUDACC__)

/* A segment's bounds [b, e) from its offsets o, o1: both clamped to n,
 * and e not below b (a decreasing pair is an empty segment). */
__device__ __forceinline__ void seg_clamp(u64 o, u64 o1, u64 n, u64 &b,
                                          u64 &e)
{
    b = o < n ? o : n;
    e = o1 < n ? o1 : n;
    e = e < b ? b : e;
}

__device__ __forceinline__ void seg_bounds(const u64 *off, u64 s, u64 n,
                                           u64 &b, u64 &e)
{
    seg_clamp(off[s], off[s + 1], n, b, e);
}

/* ------------------------------------------------------------------------ */
/* Block sort                                                                */
/* ------------------------------------------------------------------------ */

__host__ __device__ constexpr size_t block_sort_smem(int ks, int v, int block,
                                                     int items)
{
    return (size_t)(block / 32) * RADIX * 4 + RADIX * 4 + 64 +
           (size_t)block * items * (size_t)(ks + value_bytes(v) + 4);
}

template <class K, int V, int BLOCK, int ITEMS>
__device__ __forceinline__ void block_sort_range(const bs_args &a, u64 b,
                                                 u32 len, unsigned char *smem)
{
    constexpr int NW = BLOCK / 32;
    constexpr u32 TILE = (u32)BLOCK * ITEMS;
    u32 *wbins = reinterpret_cast<u32 *>(smem);
    u32 *texcl = wbins + NW * RADIX;
    u32 *wsum = texcl + RADIX;
    u32 *s_idx = wsum + 16;
    K *s_keys = reinterpret_cast<K *>(s_idx + TILE);
    unsigned char *s_vals = reinterpret_cast<unsigned char *>(s_keys + TILE);
    const u32 tid = threadIdx.x, lane = tid & 31u, w = tid >> 5;

    const K *kin = static_cast<const K *>(a.kin) + b;
    for (u32 j = tid; j < len; j += BLOCK)
        s_keys[j] = kin[j];
    if constexpr (V == V_4 || V == V_8) {
        typedef typename value_word<V>::type VW;
        if (!a.gen) {
            const VW *vin = static_cast<const VW *>(a.vin) + b;
            for (u32 j = tid; j < len; j += BLOCK)
                reinterpret_cast<VW *>(s_vals)[j] = vin[j];
        }
    } else if constexpr (V == V_BYTES) {
        const unsigned char *vin =
            static_cast<const unsigned char *>(a.vin) + b * a.vsize;
        for (u32 j = tid; j < len; j += BLOCK)
            copy_value(s_vals, j, vin, j, a.vsize, a.vword);
    }
    /* Everything is read before anything is written: in place is safe. */
    const u32 wpos = (u32)w * 32u * ITEMS + lane;
    u32 idx[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        idx[i] = wpos + (u32)i * 32u;
    for (u32 pass = 0; pass < a.ko.passes; ++pass) {
        for (u32 j = tid; j < (u32)NW * RADIX; j += BLOCK)
            wbins[j] = 0;
        __syncthreads();
        const digit_fn dg(a.ko, pass);
        u32 dig[ITEMS], rk[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            dig[i] = wpos + (u32)i * 32u < len ? dg(s_keys[idx[i]])
                                               : RADIX + lane;
        warp_rank<ITEMS>(dig, wbins + w * RADIX, rk);
        __syncthreads();
        const u32 cnt = digit_totals<NW>(wbins);
        const u32 ex = scan_digits<u32>(cnt, wsum);
        if (tid < RADIX)
            texcl[tid] = ex;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const u32 d = dig[i];
            if (d < RADIX)
                s_idx[texcl[d] + wbins[w * RADIX + d] + rk[i]] = idx[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            if (wpos + (u32)i * 32u < len)
                idx[i] = s_idx[wpos + (u32)i * 32u];
    }
    /* s_idx[j]: the tile position of the j-th key in order. */
    if (a.kout != nullptr) {
        K *kout = static_cast<K *>(a.kout) + b;
        for (u32 j = tid; j < len; j += BLOCK)
            kout[j] = s_keys[s_idx[j]];
    }
    if constexpr (V == V_4 || V == V_8) {
        typedef typename value_word<V>::type VW;
        VW *vout = static_cast<VW *>(a.vout) + b;
        for (u32 j = tid; j < len; j += BLOCK) {
            const u32 src = s_idx[j];
            vout[j] = a.gen ? (VW)(b + src)
                            : reinterpret_cast<const VW *>(s_vals)[src];
        }
    } else if constexpr (V == V_BYTES) {
        unsigned char *vout =
            static_cast<unsigned char *>(a.vout) + b * a.vsize;
        for (u32 j = tid; j < len; j += BLOCK)
            copy_value(vout, j, s_vals, s_idx[j], a.vsize, a.vword);
    }
}

template <class K, int V, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) block_sort_kernel(bs_args a)
{
    static_assert(BLOCK % 32 == 0 && BLOCK >= (int)RADIX, "block shape");
    extern __shared__ __align__(16) unsigned char smem[];
    if (a.offsets == nullptr) {
        block_sort_range<K, V, BLOCK, ITEMS>(a, 0, (u32)a.n, smem);
        return;
    }
    const u32 count = *a.list_count;
    for (u32 k = blockIdx.x; k < count; k += gridDim.x) {
        u64 b, e;
        seg_bounds(a.offsets, a.list[k], a.n, b, e);
        block_sort_range<K, V, BLOCK, ITEMS>(a, b, (u32)(e - b), smem);
        __syncthreads(); /* shared memory is reused by the next segment */
    }
}

/* ------------------------------------------------------------------------ */
/* Warp sort                                                                 */
/* ------------------------------------------------------------------------ */

/* A value of up to 16 bytes in registers. */
struct vbytes {
    unsigned char b[16];
};

/* The word keys are compared in: their selected ordered bits. */
template <int KS>
struct cmp_word {
    typedef u32 type;
};
template <>
struct cmp_word<8> {
    typedef u64 type;
};

/* A 16-byte piece of compare words in shared memory. */
template <class O>
struct alignas(16) word_piece {
    static constexpr int N = 16 / (int)sizeof(O);
    O w[N];
};

/* rank += 1 when e < o: one compare and one predicated add (written as
 * rank += (e < o), ptxas made it a compare, an add and a select: a third
 * of the warp sorts' instructions are these). */
__device__ __forceinline__ void count_smaller(u32 e, u32 o, u32 &rank)
{
    asm("{\n\t.reg .pred p;\n\tsetp.lt.u32 p, %1, %2;\n\t@p add.u32 %0, %0, 1;\n\t}"
        : "+r"(rank)
        : "r"(e), "r"(o));
}
__device__ __forceinline__ void count_smaller(u64 e, u64 o, u32 &rank)
{
    asm("{\n\t.reg .pred p;\n\tsetp.lt.u64 p, %1, %2;\n\t@p add.u32 %0, %0, 1;\n\t}"
        : "+r"(rank)
        : "l"(e), "l"(o));
}

/* Adds to rank[i] the number of the compare words in the 16-byte piece at
 * src + q (a broadcast load: the same address for every lane of the
 * group) that are smaller than the lane's key i (word o[i]), for i < NI.
 * EXACT also counts the equal words at positions before pos[i], so that
 * the count is the key's slot in a stable order; without it, equal keys
 * get the same count. Padding words are ~0: never smaller, and at
 * positions past every key. */
template <bool EXACT, int NI, class O, int IT>
__device__ __forceinline__ void rank_piece(const O *src, u32 q,
                                           const O (&o)[IT],
                                           const u32 (&pos)[IT],
                                           u32 (&rank)[IT])
{
    typedef word_piece<O> P;
    const P e = *reinterpret_cast<const P *>(src + q);
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int k = 0; k < P::N; ++k) {
            if constexpr (EXACT)
                rank[i] += (e.w[k] < o[i]) |
                           ((e.w[k] == o[i]) & (q + k < pos[i]));
            else
                count_smaller(e.w[k], o[i], rank[i]);
        }
}

/* Words a group pads its compare words to, where a lane holds several keys
 * (IT > 1): two pieces, compared between two loop tests. */
template <class O>
__host__ __device__ constexpr u32 pad_words()
{
    return 32 / sizeof(O);
}

/* rank_piece over the segment's len words at src. MAXQ > 0: a lane of one
 * key in a group of MAXQ lanes, whose MAXQ words are all written (keys,
 * then ~0): up to 32 bytes of them are compared without a test (cheaper
 * than a test per piece for segments of more than half the group), more in
 * pairs of pieces up to len. Else pairs of pieces up to len, padded to
 * pad_words. The loop over pairs is not unrolled: with every piece in
 * flight at once a lane of one key needed 48 registers, five blocks a
 * multiprocessor instead of eight. */
template <bool EXACT, int NI, int MAXQ, class O, int IT>
__device__ __forceinline__ void rank_keys(const O *src, u32 len,
                                          const O (&o)[IT],
                                          const u32 (&pos)[IT],
                                          u32 (&rank)[IT])
{
    constexpr u32 N = word_piece<O>::N;
    if constexpr (MAXQ > 0 && MAXQ * sizeof(O) <= 32) {
#pragma unroll
        for (u32 q = 0; q < (u32)MAXQ; q += N)
            rank_piece<EXACT, NI>(src, q, o, pos, rank);
    } else {
#pragma unroll 1
        for (u32 q = 0; q < len; q += 2 * N) {
            rank_piece<EXACT, NI>(src, q, o, pos, rank);
            rank_piece<EXACT, NI>(src, q + N, o, pos, rank);
        }
    }
}

/* rank_keys for the first ni keys of every lane (NI .. IT of them). */
template <bool EXACT, int NI, class O, int IT>
__device__ __forceinline__ void rank_first(u32 ni, const O *src, u32 len,
                                           const O (&o)[IT],
                                           const u32 (&pos)[IT],
                                           u32 (&rank)[IT])
{
    if constexpr (NI == IT) {
        rank_keys<EXACT, IT, 0>(src, len, o, pos, rank);
    } else {
        if (ni <= (u32)NI)
            rank_keys<EXACT, NI, 0>(src, len, o, pos, rank);
        else
            rank_first<EXACT, NI + 1>(ni, src, len, o, pos, rank);
    }
}

/* rank_keys for the keys a lane holds: its one key of a segment of at
 * most G (all G words), or ceil(len / 32) of them where IT > 1 (len is
 * then the warp's). */
template <bool EXACT, int G, class O, int IT>
__device__ __forceinline__ void rank_held(const O *src, u32 len,
                                          const O (&o)[IT],
                                          const u32 (&pos)[IT],
                                          u32 (&rank)[IT])
{
#pragma unroll
    for (int i = 0; i < IT; ++i)
        rank[i] = 0;
    if constexpr (IT == 1)
        rank_keys<EXACT, 1, G>(src, len, o, pos, rank);
    else
        rank_first<EXACT, 1>((len + 31) / 32, src, len, o, pos, rank);
}

/* Writes the group's compare words to its slots: word o[i] at position
 * pos[i] < len, and ~0 (no key is smaller) in every other slot of a
 * group of one key a lane, up to a multiple of pad_words otherwise. */
template <class O, int IT>
__device__ __forceinline__ void put_words(O *words, u32 len, u32 r,
                                          const O (&o)[IT],
                                          const u32 (&pos)[IT])
{
    if constexpr (IT == 1) {
        words[r] = r < len ? o[0] : ~(O)0;
    } else {
        constexpr u32 PW = pad_words<O>();
#pragma unroll
        for (int i = 0; i < IT; ++i)
            if (pos[i] < len)
                words[pos[i]] = o[i];
        if (len % PW != 0 && r < PW - len % PW)
            words[len + r] = ~(O)0;
    }
}

/* Whether two of a group's keys got the same count (rank_held without
 * EXACT: then the group holds equal keys), for every group of the warp
 * (warp-uniform): the counts, one bit each in the group's G bits of the
 * warp's words (count / 32: the word, G * IT <= 128 bits a group), cover
 * fewer bits than the group has keys. */
template <int G, int IT>
__device__ __forceinline__ bool counts_repeat(const u32 (&rank)[IT],
                                              const u32 (&pos)[IT], u32 len)
{
    const u32 lane = threadIdx.x & 31u;
    const u32 base = (lane / G) * G; /* the group's first bit, IT == 1 */
    u32 covered = 0, keys = 0;
#pragma unroll
    for (int w = 0; w < IT; ++w) {
        u32 m = 0;
#pragma unroll
        for (int i = 0; i < IT; ++i) {
            const u32 at = base + rank[i];
            if (pos[i] < len && at / 32 == (u32)w)
                m |= 1u << (at % 32);
        }
        covered += __popc(__reduce_or_sync(FULL, m));
        keys += __popc(__ballot_sync(FULL, pos[w] < len));
    }
    return covered != keys;
}

/* One turn of a group of a warp sort: its segment [b, b + len) and the
 * lane's keys (positions i G + r) and values. */
template <class K, class VW, int IT>
struct warp_seg {
    u64 b;
    u32 len;
    K key[IT];
    VW val[IT];
    vbytes vb;
};

/* The turn of list word x (begin << 8 | length; 0: no segment) for lane r
 * of its group. */
template <class K, int V, int G, class VW, int IT>
__device__ __forceinline__ void load_warp_seg(const ws_args &a, u64 x, u32 r,
                                              warp_seg<K, VW, IT> &t)
{
    t.b = x >> 8;
    t.len = (u32)(x & 0xffu);
#pragma unroll
    for (int i = 0; i < IT; ++i) {
        const u32 p = (u32)i * G + r;
        t.key[i] = 0;
        t.val[i] = 0;
        if (p < t.len) {
            t.key[i] = static_cast<const K *>(a.kin)[t.b + p];
            if constexpr (V == V_4 || V == V_8)
                t.val[i] = static_cast<const VW *>(a.vin)[t.b + p];
        }
    }
    if constexpr (V == V_BYTES) {
        const bool valid = r < t.len;
        const unsigned char *src =
            static_cast<const unsigned char *>(a.vin) + (t.b + r) * a.vsize;
#pragma unroll
        for (u32 c = 0; c < 16; ++c)
            t.vb.b[c] = valid && c < a.vsize ? src[c] : (unsigned char)0;
    }
}

/* G lanes sort a segment of at most G * IT keys: lane r holds the keys at
 * positions i * G + r (coalesced reads) and counts, for each, the keys
 * that must precede it (smaller, or equal and earlier: stable), which is
 * its output slot. The keys' compare words go to the group's slots in
 * shared memory and every lane reads them all back (rank_keys), only as
 * far as the segment goes and only for the keys it holds. The first count
 * is of smaller keys alone (one compare a pair); where two keys of a
 * group get the same count (equal keys; counts_repeat), the warp counts
 * again with the positions. (The first version broadcast every key with a
 * shuffle and compared it with all IT keys of every lane: 180 M warp
 * instructions for the 33-128-key segments of 2^24 keys in 2^20 random
 * cuts, 330 of the 610 us the segmented sort took there under Nsight
 * Compute.) IT > 1 only with G == 32 (one segment per warp, so loop
 * bounds are uniform) and values that fit a register. */
template <class K, int V, int G, int IT>
__global__ void __launch_bounds__(256) warp_sort_kernel(ws_args a)
{
    static_assert(G == 8 || G == 16 || G == 32, "group size");
    static_assert(IT == 1 || (G == 32 && V != V_BYTES), "items per lane");
    typedef typename cmp_word<(int)sizeof(K)>::type O;
    constexpr u32 GPB = 256 / G; /* groups per block */
    /* A group's compare words and the pads: G words for one key a lane,
     * else G IT and pad_words more; whole 16-byte pieces either way, so
     * that every group's slots start 16-byte aligned. */
    constexpr u32 SLOTS = (u32)G * IT + (IT == 1 ? 0u : pad_words<O>());
    __shared__ __align__(16) O s_words[GPB * SLOTS];
    O *words = s_words + (threadIdx.x / G) * SLOTS;
    const u32 count = *a.list_count;
    const u32 r = threadIdx.x % G;
    /* The compared value: the selected bits of the ordered key. */
    const u32 nbits = a.ko.end_bit - a.ko.begin_bit;
    const O rmask = nbits >= 8 * sizeof(O) ? (O)~(O)0
                                            : (O)(((O)1 << nbits) - 1u);
    const O rflip = a.ko.descending ? rmask : (O)0;
    /* The loop runs while any group of the warp has a segment, so that
     * every lane takes part in the warp's barriers. */
    const u64 first_of_warp = (u64)blockIdx.x * GPB + (threadIdx.x & ~31u) / G;
    const u64 stride = (u64)gridDim.x * GPB;
    typedef typename value_word<V == V_8 ? V_8 : V_4>::type VW;
    /* The group's list word for the warp's turn g0 (0, which no segment
     * has, past the list's end). */
    auto word_at = [&](u64 g0) -> u64 {
        const u64 g = g0 + (threadIdx.x & 31u) / G;
        return g < count ? a.list[g] : 0ull;
    };
    /* A turn's keys and values are loaded during the turn before, and its
     * list word two turns ahead: no turn waits for memory but at the
     * start (the loads of a turn were two round trips in a row). */
    warp_seg<K, VW, IT> cur;
    load_warp_seg<K, V, G>(a, word_at(first_of_warp), r, cur);
    u64 xn = word_at(first_of_warp + stride);
    for (u64 g0 = first_of_warp; g0 < count; g0 += stride) {
        warp_seg<K, VW, IT> nxt;
        load_warp_seg<K, V, G>(a, xn, r, nxt);
        xn = word_at(g0 + 2 * stride);
        const u64 b = cur.b;
        const u32 len = cur.len;
        O o[IT];
#pragma unroll
        for (int i = 0; i < IT; ++i)
            o[i] = ((O)(ord_of(cur.key[i], a.ko.kc) >> a.ko.begin_bit) &
                    rmask) ^
                   rflip;
        u32 pos[IT], rank[IT];
#pragma unroll
        for (int i = 0; i < IT; ++i)
            pos[i] = (u32)i * G + r;
        put_words(words, len, r, o, pos);
        __syncwarp();
        rank_held<false, G>(words, len, o, pos, rank);
        if (counts_repeat<G, IT>(rank, pos, len))
            rank_held<true, G>(words, len, o, pos, rank);
        /* Every lane has read its keys and values before any is written. */
        __syncwarp();
#pragma unroll
        for (int i = 0; i < IT; ++i) {
            if ((u32)i * G + r < len) {
                if (a.kout != nullptr)
                    static_cast<K *>(a.kout)[b + rank[i]] = cur.key[i];
                if constexpr (V == V_4 || V == V_8) {
                    static_cast<VW *>(a.vout)[b + rank[i]] = cur.val[i];
                } else if constexpr (V == V_BYTES) {
                    unsigned char *dst = static_cast<unsigned char *>(a.vout) +
                                         (b + rank[i]) * a.vsize;
#pragma unroll
                    for (u32 c = 0; c < 16; ++c)
                        if (c < a.vsize)
                            dst[c] = cur.vb.b[c];
                }
            }
        }
        cur = nxt;
    }
}

/* ------------------------------------------------------------------------ */
/* Classification                                                            */
/* ------------------------------------------------------------------------ */

/* The classification's blocks: eight warps of 32 lanes. */
constexpr int SC_WARPS = 8;

/* Segment s's class (-1: empty) and its bounds clamped to [0, n); raises
 * *a.bad when its offsets decrease. */
__device__ __forceinline__ int seg_class(const classify_args &a, u64 s,
                                         u64 &b, u64 &e)
{
    const u64 o = a.offsets[s], o1 = a.offsets[s + 1];
    if (o1 < o)
        atomicOr(a.bad, 1u);
    seg_clamp(o, o1, a.n, b, e);
    const u64 len = e - b;
    if (len == 0)
        return -1;
    int cls = SC_HUGE;
    for (int c = SC_HUGE - 1; c >= 0; --c)
        if (len <= a.limit[c])
            cls = c;
    return cls;
}

/* Each warp takes a contiguous range of segments, 32 at a time: it counts
 * its segments of each class (lane c holds class c's count), the block
 * turns the warps' counts into each warp's first slot per class with one
 * global atomic per class (none for a class the block lacks), and the
 * warp walks its range again (the offsets now in L2), writing each
 * segment to its list. The first version claimed room once per 256
 * segments, the block waiting for each atomic in turn between barriers;
 * this one and the device copy it made unneeded (huge_first) took 3-8 us
 * off the sort of 2^24 keys in 2^20 segments (Nsight Compute times a
 * first, cold call's classification at 20-23 us either way). */
static __global__ void __launch_bounds__(SC_WARPS * 32)
seg_classify_kernel(classify_args a)
{
    __shared__ u32 s_first[SC_WARPS][SC_COUNT];
    __shared__ u32 s_base[SC_COUNT];
    const u32 tid = threadIdx.x, lane = tid & 31u, wid = tid >> 5;
    if (blockIdx.x == 0 && tid == 0 &&
        (a.offsets[0] != 0 || a.offsets[a.num_segments] < a.n ||
         a.offsets[a.num_segments] > a.n))
        atomicOr(a.bad, 1u);
    const u64 nwarps = (u64)gridDim.x * SC_WARPS;
    const u64 per = ((a.num_segments + nwarps - 1) / nwarps + 31) / 32 * 32;
    u64 w0 = ((u64)blockIdx.x * SC_WARPS + wid) * per;
    w0 = w0 < a.num_segments ? w0 : a.num_segments;
    const u64 w1 = a.num_segments - w0 < per ? a.num_segments : w0 + per;
    u32 cnt = 0;
#pragma unroll 4
    for (u64 s0 = w0; s0 < w1; s0 += 32) {
        const u64 s = s0 + lane;
        u64 b, e;
        const int cls = s < w1 ? seg_class(a, s, b, e) : -1;
#pragma unroll
        for (int c = 0; c < SC_COUNT; ++c) {
            const u32 m = __ballot_sync(FULL, cls == c);
            if (lane == (u32)c)
                cnt += (u32)__popc(m);
        }
    }
    if (lane < (u32)SC_COUNT)
        s_first[wid][lane] = cnt;
    __syncthreads();
    if (tid < (u32)SC_COUNT) {
        u32 run = 0;
        for (int w = 0; w < SC_WARPS; ++w) {
            const u32 x = s_first[w][tid];
            s_first[w][tid] = run;
            run += x;
        }
        s_base[tid] = run != 0u ? atomicAdd(&a.counts[tid], run) : 0u;
    }
    __syncthreads();
    /* Lane c: the next slot of class c in its list. */
    u32 next = lane < (u32)SC_COUNT ? s_base[lane] + s_first[wid][lane] : 0u;
    const u32 below = (1u << lane) - 1u;
#pragma unroll 4
    for (u64 s0 = w0; s0 < w1; s0 += 32) {
        const u64 s = s0 + lane;
        u64 b = 0, e = 0;
        const int cls = s < w1 ? seg_class(a, s, b, e) : -1;
        u32 at = 0;
#pragma unroll
        for (int c = 0; c < SC_COUNT; ++c) {
            const u32 m = __ballot_sync(FULL, cls == c);
            const u32 first = __shfl_sync(FULL, next, c);
            if (cls == c)
                at = first + (u32)__popc(m & below);
            if (lane == (u32)c)
                next += (u32)__popc(m);
        }
        if (cls >= 0 && cls < SC_BS) {
            a.wlists[(u64)cls * a.num_segments + at] = b << 8 | (e - b);
        } else if (cls >= SC_BS && cls < SC_HUGE) {
            a.blists[(u64)(cls - SC_BS) * a.num_segments + at] = (u32)s;
        } else if (cls == SC_HUGE && at < a.huge_cap) {
            a.huge[2 * (u64)at] = b;
            a.huge[2 * (u64)at + 1] = e;
            if (at < a.huge_first_cap) {
                a.huge_first[2 * (u64)at] = b;
                a.huge_first[2 * (u64)at + 1] = e;
            }
        }
    }
}

#endif /* __CUDACC__ */

} /* namespace parsum_sk */

#endif
