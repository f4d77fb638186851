/*
 * select_kernels.cuh - the GPU kernel of the selection family: select,
 * partition (two- and three-way), split by bit, unique and the run starts
 * and ends behind the run-length encodings.
 *
 * One pass with decoupled look-back, as the scan (lookback.cuh): a block
 * takes the next tile of SEL_TILE elements, decides for each element its
 * group (G = 1: selected or dropped; G = 2: selected, rejected; G = 3:
 * first, second, rest), counts the groups, learns from the look-back how
 * many elements of each group precede the tile, and writes every element
 * straight to its final place. Elements are striped over the block
 * (element i * SEL_BLOCK + tid of the tile is item i of thread tid), so
 * the 32 lanes of a warp hold 32 consecutive elements: their
 * destinations within a group are consecutive too, and each store
 * instruction writes at most G contiguous runs (coalesced) without
 * staging in shared memory.
 *
 * The tile's look-back value is its count of group 0 (G <= 2: group 1 is
 * "the elements before, minus group 0"), or for G = 3 the counts of
 * groups 0 and 1 packed in the halves of one u64 (n < 2^32, checked by the
 * host), so the sum of packed values never carries and the classic
 * look-back on u64 SUM serves all three. Integer sums are exact in any
 * order: the result is deterministic.
 *
 * A partition needs the totals of the groups before its first tile is
 * written (the rejected elements follow all selected ones): the host runs
 * select_count_kernel first. parsum_partition_unstable's (a.rev) does not:
 * its rejected elements fill the output from the end down.
 */
#ifndef PARSUM_SELECT_KERNELS_CUH
#define PARSUM_SELECT_KERNELS_CUH

#ifndef __CUDACC_RTC__
#include "lookback.cuh"
#endif

namespace parsum_k {

/* Selector kinds on the device: parsum_select_kind's values, then the
 * run boundaries of the runs slot (keys compared bit for bit). */
enum : u32 {
    SK_BYTES = 0,
    SK_BITS = 1,
    SK_PRED = 2,
    SK_CUSTOM = 3,
    SK_HEAD = 4,    /* first element of a run */
    SK_NT_HEAD = 5, /* first element of a run of length >= 2 */
    SK_NT_TAIL = 6  /* last element of a run of length >= 2 */
};

/* Predicates: parsum_pred's values. */
enum : u32 {
    SP_LT = 0,
    SP_LE,
    SP_GT,
    SP_GE,
    SP_EQ,
    SP_NE,
    SP_NONZERO,
    SP_IN_RANGE,
    SP_BIT_SET,
    SP_BIT_CLEAR
};

/* Key dtypes: parsum_dtype's values. */
enum : u32 { SD_I8 = 0, SD_U8, SD_I16, SD_U16, SD_I32, SD_U32, SD_I64,
             SD_U64, SD_F32, SD_F64 };

struct sel_desc {
    u32 kind;
    u32 pred;  /* SK_PRED */
    u32 dtype; /* SK_PRED */
    u32 bit;   /* SK_PRED, BIT_SET/CLEAR */
    u64 a, b;  /* SK_PRED: the constants' bits, in the low bytes */
    const unsigned char *bytes; /* SK_BYTES */
    const u32 *bits;            /* SK_BITS */
    u64 bit_off;                /* SK_BITS, < 32 */
};

struct select_kargs {
    u64 n;         /* > 0 */
    u32 num_tiles; /* the grid */
    sel_desc s0, s1; /* s1: G == 3 only */
    const void *keys; /* may be NULL when no selector and no output reads it */
    u32 key_size, key_word; /* element bytes; the word it is moved in */
    const void *values;
    u32 value_size, value_word;
    void *keys_out;   /* each output NULL when not wanted */
    void *values_out;
    u64 *idx_out;
    const u64 *totals; /* G >= 2: group totals from select_count_kernel */
    u64 *count_out;    /* G == 1 or rev: the selected count (device) */
    /* G == 2, parsum_partition_unstable: the rejected element of rank r
     * among the rejected goes to n - 1 - r, so no totals are needed and
     * the pass publishes its count like a select */
    u32 rev;
    u32 *counter;      /* tile counter and look-back descriptors, zeroed */
    u32 *desc;
    /* select_tile_kernel, run starts only: idx_out receives run lengths
     * (a tile's last run: its start), and run_first[2c], [2c + 1] the
     * rank and start of tile c's first run (rank ~0: none); NULL
     * otherwise. */
    u64 *run_first;
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

constexpr int SEL_BLOCK = 256;
constexpr int SEL_ITEMS = 16;
constexpr int SEL_NWARP = SEL_BLOCK / 32;
constexpr u32 SEL_TILE = (u32)SEL_BLOCK * SEL_ITEMS;

template <int S>
struct uint_of;
template <>
struct uint_of<1> {
    typedef unsigned char type;
};
template <>
struct uint_of<2> {
    typedef unsigned short type;
};
template <>
struct uint_of<4> {
    typedef u32 type;
};
template <>
struct uint_of<8> {
    typedef u64 type;
};

template <class T, class U>
__device__ __forceinline__ T bits_as(U u)
{
    T t;
    memcpy(&t, &u, sizeof(T));
    return t;
}

/* Bit i of the result: predicate p on key x[i] of type T (raw bits U),
 * for the items i with bit i of valid set (N <= 32). One loop per
 * predicate, so the predicate costs no branch per element. */
template <class T, class U, int N>
__device__ __forceinline__ u32 pred_items(const sel_desc &s, const U (&x)[N],
                                          u32 valid)
{
    const T a = bits_as<T>((U)s.a), b = bits_as<T>((U)s.b);
    u32 r = 0u;
#define PARSUM_K_PRED_LOOP(expr)                                             \
    _Pragma("unroll") for (int i = 0; i < N; ++i)                            \
    {                                                                        \
        const T v = bits_as<T>(x[i]);                                        \
        const U raw = x[i];                                                  \
        (void)v;                                                             \
        (void)raw;                                                           \
        r |= (u32)(bool)(expr) << i;                                         \
    }
    switch (s.pred) {
    case SP_LT: PARSUM_K_PRED_LOOP(v < a); break;
    case SP_LE: PARSUM_K_PRED_LOOP(v <= a); break;
    case SP_GT: PARSUM_K_PRED_LOOP(v > a); break;
    case SP_GE: PARSUM_K_PRED_LOOP(v >= a); break;
    case SP_EQ: PARSUM_K_PRED_LOOP(v == a); break;
    case SP_NE: PARSUM_K_PRED_LOOP(v != a); break;
    case SP_NONZERO: PARSUM_K_PRED_LOOP(v != (T)0); break;
    case SP_IN_RANGE: PARSUM_K_PRED_LOOP(a <= v && v < b); break;
    case SP_BIT_SET: PARSUM_K_PRED_LOOP((raw >> s.bit) & 1u); break;
    default: PARSUM_K_PRED_LOOP(!((raw >> s.bit) & 1u)); break;
    }
#undef PARSUM_K_PRED_LOOP
    return r & valid;
}

/* The predicate on keys of KS bytes: dispatch on the selector's dtype
 * (one of the dtypes of that size). */
template <int KS, int N>
__device__ __forceinline__ u32
pred_dispatch(const sel_desc &s, const typename uint_of<KS>::type (&x)[N],
              u32 valid)
{
    typedef typename uint_of<KS>::type U;
    if constexpr (KS == 1) {
        return s.dtype == SD_I8 ? pred_items<signed char, U>(s, x, valid)
                                : pred_items<unsigned char, U>(s, x, valid);
    } else if constexpr (KS == 2) {
        return s.dtype == SD_I16 ? pred_items<short, U>(s, x, valid)
                                 : pred_items<unsigned short, U>(s, x, valid);
    } else if constexpr (KS == 4) {
        return s.dtype == SD_I32   ? pred_items<int, U>(s, x, valid)
               : s.dtype == SD_F32 ? pred_items<float, U>(s, x, valid)
                                   : pred_items<u32, U>(s, x, valid);
    } else {
        return s.dtype == SD_I64   ? pred_items<long long, U>(s, x, valid)
               : s.dtype == SD_F64 ? pred_items<double, U>(s, x, valid)
                                   : pred_items<u64, U>(s, x, valid);
    }
}

/* Keys i and j (element indices) equal bit for bit; W is a word of the
 * key (key_size a multiple of sizeof(W), keys aligned to it). */
template <class W>
__device__ __forceinline__ bool words_equal(const W *keys, u32 nw, u64 i,
                                            u64 j)
{
    const W *p = keys + i * nw;
    const W *q = keys + j * nw;
    bool eq = true;
    for (u32 w = 0; w < nw; ++w)
        eq &= p[w] == q[w];
    return eq;
}

/* Run boundaries (SK_HEAD, SK_NT_HEAD, SK_NT_TAIL) of this thread's items,
 * keys moved in words W. */
template <class W>
__device__ __forceinline__ u32 run_items(const select_kargs &a, u32 kind,
                                         u64 m0, u32 valid)
{
    const W *k = static_cast<const W *>(a.keys);
    const u32 nw = a.key_size / (u32)sizeof(W);
    u32 r = 0u;
#pragma unroll
    for (int i = 0; i < SEL_ITEMS; ++i) {
        if (!((valid >> i) & 1u))
            continue;
        const u64 m = m0 + (u64)i * SEL_BLOCK;
        const bool head = m == 0 || !words_equal(k, nw, m, m - 1);
        bool f;
        if (kind == SK_HEAD)
            f = head;
        else if (kind == SK_NT_HEAD)
            f = head && m + 1 < a.n && words_equal(k, nw, m + 1, m);
        else
            f = !head && (m + 1 == a.n || !words_equal(k, nw, m + 1, m));
        r |= (u32)f << i;
    }
    return r;
}

/* Selector s for this thread's items (m0 + i * SEL_BLOCK), except
 * predicates (evaluated on the loaded keys). Run boundaries only in the
 * kernels without a predicate key (KS == 0), which the runs slot uses. */
template <int KS>
__device__ __forceinline__ u32 flags_items(const select_kargs &a,
                                           const sel_desc &s, u64 m0,
                                           u32 valid)
{
    u32 r = 0u;
    if (s.kind == SK_BYTES) {
#pragma unroll
        for (int i = 0; i < SEL_ITEMS; ++i)
            if ((valid >> i) & 1u)
                r |= (u32)(s.bytes[m0 + (u64)i * SEL_BLOCK] != 0) << i;
    } else if (s.kind == SK_BITS) {
#pragma unroll
        for (int i = 0; i < SEL_ITEMS; ++i) {
            const u64 b = s.bit_off + m0 + (u64)i * SEL_BLOCK;
            if ((valid >> i) & 1u)
                r |= ((s.bits[b >> 5] >> (b & 31u)) & 1u) << i;
        }
    } else if constexpr (KS == 0) {
        switch (a.key_word) {
        case 1: r = run_items<unsigned char>(a, s.kind, m0, valid); break;
        case 2: r = run_items<unsigned short>(a, s.kind, m0, valid); break;
        case 4: r = run_items<u32>(a, s.kind, m0, valid); break;
        default: r = run_items<u64>(a, s.kind, m0, valid); break;
        }
    }
    return r;
}

/* Run boundaries from keys held in registers (single-word keys of S
 * bytes, striped: lane l's neighbours in memory are lanes l - 1 and
 * l + 1 of the same item; lanes 0 and 31 read theirs from memory). */
template <int S>
__device__ __forceinline__ u32
run_items_reg(const select_kargs &a, u32 kind, u64 m0, u32 valid,
              const typename uint_of<S>::type (&x)[SEL_ITEMS])
{
    typedef typename uint_of<S>::type U;
    typedef typename uint_of<(S == 8 ? 8 : 4)>::type SH; /* shuffled as */
    const U *k = static_cast<const U *>(a.keys);
    const int lane = (int)(threadIdx.x & 31u);
    u32 r = 0u;
#pragma unroll
    for (int i = 0; i < SEL_ITEMS; ++i) {
        U prev = (U)__shfl_up_sync(PARSUM_K_FULL_MASK, (SH)x[i], 1);
        U next = (U)__shfl_down_sync(PARSUM_K_FULL_MASK, (SH)x[i], 1);
        if (!((valid >> i) & 1u))
            continue;
        const u64 m = m0 + (u64)i * SEL_BLOCK;
        if (lane == 0 && m > 0)
            prev = k[m - 1];
        if (lane == 31 && m + 1 < a.n)
            next = k[m + 1];
        const bool head = m == 0 || x[i] != prev;
        const bool next_head = m + 1 >= a.n || next != x[i];
        const bool f = kind == SK_HEAD      ? head
                       : kind == SK_NT_HEAD ? head && !next_head
                                            : !head && next_head;
        r |= (u32)f << i;
    }
    return r;
}

/* Group masks of this thread's items: sel0 (first selector), sel1
 * (second, G == 3), from the loaded keys x (KS > 0). */
template <int KS, int G>
__device__ __forceinline__ void evaluate(const select_kargs &a, u64 m0,
                                         u32 valid,
                                         typename uint_of<KS == 0 ? 1 : KS>::type
                                             (&x)[SEL_ITEMS],
                                         u32 &sel0, u32 &sel1)
{
    constexpr int S = KS == 0 ? 1 : KS;
    if (a.s0.kind == SK_PRED)
        sel0 = pred_dispatch<S>(a.s0, x, valid);
    else if (KS > 0 && a.s0.kind >= SK_HEAD)
        sel0 = run_items_reg<S>(a, a.s0.kind, m0, valid, x);
    else
        sel0 = flags_items<KS>(a, a.s0, m0, valid);
    sel1 = 0u;
    if constexpr (G == 3)
        sel1 = a.s1.kind == SK_PRED ? pred_dispatch<S>(a.s1, x, valid)
                                    : flags_items<KS>(a, a.s1, m0, valid);
}

/* Loads this thread's keys when a selector is a predicate (KS > 0). */
template <int KS>
__device__ __forceinline__ void
load_keys(const select_kargs &a, u64 m0, u32 valid,
          typename uint_of<KS == 0 ? 1 : KS>::type (&x)[SEL_ITEMS])
{
    typedef typename uint_of<KS == 0 ? 1 : KS>::type U;
    const U *k = static_cast<const U *>(a.keys);
#pragma unroll
    for (int i = 0; i < SEL_ITEMS; ++i) {
        x[i] = 0;
        if (KS > 0 && ((valid >> i) & 1u))
            x[i] = k[m0 + (u64)i * SEL_BLOCK];
    }
}

/* Copies the items in `items` of this thread from src (element m0 + i *
 * SEL_BLOCK) to element dst(i) of out; elements of size bytes moved in
 * words W. */
template <class W, class D>
__device__ __forceinline__ void move_items_w(const void *src, void *out,
                                             u32 size, u64 m0, u32 items,
                                             const D &dst)
{
    const W *s = static_cast<const W *>(src);
    W *d = static_cast<W *>(out);
    const u32 nw = size / (u32)sizeof(W);
#pragma unroll
    for (int i = 0; i < SEL_ITEMS; ++i) {
        if (!((items >> i) & 1u))
            continue;
        const u64 m = m0 + (u64)i * SEL_BLOCK;
        const u64 to = dst(i);
        for (u32 w = 0; w < nw; ++w)
            d[to * nw + w] = s[m * nw + w];
    }
}

template <class D>
__device__ __forceinline__ void move_items(const void *src, void *out,
                                           u32 size, u32 word, u64 m0,
                                           u32 items, const D &dst)
{
    switch (word) {
    case 16: move_items_w<uint4>(src, out, size, m0, items, dst); break;
    case 8: move_items_w<u64>(src, out, size, m0, items, dst); break;
    case 4: move_items_w<u32>(src, out, size, m0, items, dst); break;
    case 2:
        move_items_w<unsigned short>(src, out, size, m0, items, dst);
        break;
    default:
        move_items_w<unsigned char>(src, out, size, m0, items, dst);
        break;
    }
}

struct count_sum {
    __device__ __forceinline__ u64 operator()(u64 x, u64 y) const
    {
        return x + y;
    }
};

__device__ __forceinline__ u32 lanemask_lt()
{
    u32 m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/* Bits of this thread's items that are valid (below n). */
__device__ __forceinline__ u32 valid_items(u64 n, u64 m0)
{
    if (m0 >= n)
        return 0u;
    const u64 left = (n - m0 + SEL_BLOCK - 1) / SEL_BLOCK; /* items < n */
    return left >= SEL_ITEMS ? (1u << SEL_ITEMS) - 1u : (1u << left) - 1u;
}

/* Where item i of a thread goes (select_kernel step 4): a functor with a
 * forced-inline call, holding copies of the ballots (references would
 * take the arrays' address and move them to local memory). */
template <int G>
struct sel_dest {
    const u32 *s_off;
    u32 b0[SEL_ITEMS];
    u32 b1[SEL_ITEMS];
    u32 sel0, g1, lt;
    int warp;
    bool rev; /* G == 2: the rest reversed from rtop (= n - 1) down */
    u64 base, x0, x1, t0, t1, rtop;
    __device__ __forceinline__ u64 operator()(int i) const
    {
        const u32 off = s_off[i * SEL_NWARP + warp];
        const u64 o0 = x0 + (off & 0xffffu);
        if ((sel0 >> i) & 1u)
            return o0 + (u64)__popc(b0[i] & lt);
        const u64 o1 = x1 + (off >> 16);
        if (G == 3 && ((g1 >> i) & 1u))
            return t0 + o1 + (u64)__popc(b1[i] & lt);
        /* the rest (G == 2: group 1, G == 3: group 2): the elements
         * before this (item, warp) minus groups 0 and 1 */
        const u64 before = base + (u64)i * SEL_BLOCK + (u64)warp * 32u;
        const u32 rest = ~(b0[i] | b1[i]);
        const u64 r = (before - o0 - o1) + (u64)__popc(rest & lt);
        if (G == 2 && rev)
            return rtop - r;
        return t0 + t1 + r;
    }
};

/* KS: bytes of the key a predicate reads (0: no predicate). */
template <int KS, int G>
__global__ void __launch_bounds__(SEL_BLOCK) select_kernel(select_kargs a)
{
    typedef typename uint_of<KS == 0 ? 1 : KS>::type U;
    __shared__ u32 s_tile;
    __shared__ u32 s_off[SEL_ITEMS * SEL_NWARP]; /* exclusive, packed */
    __shared__ u32 s_tot;
    __shared__ u64 s_x;

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const bool single = gridDim.x == 1;

    const u32 c = claim_tile(a.counter, s_tile, single);
    const u64 base = (u64)c * SEL_TILE;
    const u64 m0 = base + (u64)tid;
    const u32 valid = valid_items(a.n, m0);

    /* 1. Groups: g0 = selected (first selector), g1 = G == 2: the rest,
     * G == 3: selected by the second among the rest. */
    U x[SEL_ITEMS];
    if constexpr (KS > 0)
        load_keys<KS>(a, m0, valid, x);
    u32 sel0, sel1;
    evaluate<KS, G>(a, m0, valid, x, sel0, sel1);
    const u32 g1 = G == 3 ? sel1 & ~sel0 : 0u;

    /* 2. Per (item, warp) counts, packed: group 0 in the low 16 bits,
     * group 1 (G == 3) in the high ones (a tile holds < 2^16 elements). */
    u32 b0[SEL_ITEMS], b1[SEL_ITEMS];
#pragma unroll
    for (int i = 0; i < SEL_ITEMS; ++i) {
        b0[i] = __ballot_sync(PARSUM_K_FULL_MASK, (sel0 >> i) & 1u);
        b1[i] = G == 3 ? __ballot_sync(PARSUM_K_FULL_MASK, (g1 >> i) & 1u)
                       : 0u;
        if (lane == 0)
            s_off[i * SEL_NWARP + warp] =
                (u32)__popc(b0[i]) | ((u32)__popc(b1[i]) << 16);
    }
    __syncthreads();

    /* 3. Exclusive scan of the packed counts in (item, warp) order, by
     * warp 0; then the look-back for the tile's prefix. */
    if (warp == 0) {
        constexpr int PER = SEL_ITEMS * SEL_NWARP / 32;
        u32 v[PER], sum = 0u;
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            v[k] = s_off[lane * PER + k];
            sum += v[k];
        }
        u32 incl = sum;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const u32 o = __shfl_up_sync(PARSUM_K_FULL_MASK, incl, d);
            if (lane >= d)
                incl += o;
        }
        u32 run = incl - sum;
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            s_off[lane * PER + k] = run;
            run += v[k];
        }
        const u32 tot = __shfl_sync(PARSUM_K_FULL_MASK, incl, 31);
        const u64 agg = G == 3 ? ((u64)(tot >> 16) << 32) | (tot & 0xffffu)
                               : (u64)(tot & 0xffffu);
        u64 xc = 0u;
        if (!single) {
            scan_args la;
            memset(&la, 0, sizeof la);
            la.agg = a.desc;
            xc = lookback_classic(la, c, agg, (u64)0, lane, count_sum{});
        }
        if (lane == 0) {
            s_x = c > 0 ? xc : 0u;
            s_tot = tot;
        }
    }
    __syncthreads();

    /* 4. Destinations, computed where they are used (an array of them
     * would live in local memory). Group prefixes before the tile: x0
     * (group 0), x1 (group 1); the rest is what precedes minus those. */
    const u64 xc = s_x;
    const u64 x0 = G == 3 ? (xc & 0xffffffffull) : xc;
    const u64 x1 = G == 3 ? (xc >> 32) : 0u;
    u64 t0 = 0u, t1 = 0u;
    const bool rev = G == 2 && a.rev != 0u;
    if (G >= 2 && !rev) {
        t0 = a.totals[0];
        if constexpr (G == 3)
            t1 = a.totals[1];
    }
    if (G == 1 || rev) {
        if (tid == 0 && c == a.num_tiles - 1u)
            *a.count_out = x0 + (s_tot & 0xffffu);
    }
    const u32 lt = lanemask_lt();
    /* Items that are written: all valid ones, or (G == 1) the selected. */
    const u32 out_items = G >= 2 ? valid : sel0;
    sel_dest<G> dest;
    dest.s_off = s_off;
#pragma unroll
    for (int i = 0; i < SEL_ITEMS; ++i) {
        dest.b0[i] = b0[i];
        dest.b1[i] = b1[i];
    }
    dest.sel0 = sel0;
    dest.g1 = g1;
    dest.lt = lt;
    dest.warp = warp;
    dest.base = base;
    dest.x0 = x0;
    dest.x1 = x1;
    dest.t0 = t0;
    dest.t1 = t1;
    dest.rev = rev;
    dest.rtop = a.n - 1u;

    /* 5. Move keys, values, indices. Keys in registers (a predicate's or
     * a run test's) go straight from there when keys_out is aligned to
     * them. */
    if (a.keys_out != nullptr) {
        if (KS > 0 && a.key_word == (u32)KS) {
#pragma unroll
            for (int i = 0; i < SEL_ITEMS; ++i)
                if ((out_items >> i) & 1u)
                    static_cast<U *>(a.keys_out)[dest(i)] = x[i];
        } else {
            move_items(a.keys, a.keys_out, a.key_size, a.key_word, m0,
                       out_items, dest);
        }
    }
    if (a.values_out != nullptr)
        move_items(a.values, a.values_out, a.value_size, a.value_word, m0,
                   out_items, dest);
    if (a.idx_out != nullptr) {
#pragma unroll
        for (int i = 0; i < SEL_ITEMS; ++i)
            if ((out_items >> i) & 1u)
                a.idx_out[dest(i)] = m0 + (u64)i * SEL_BLOCK;
    }
}

/* Group totals for a partition: totals[0] += group 0, totals[1] += group 1
 * (G == 3); tiles handed out grid-stride; totals zeroed before. */
template <int KS, int G>
__global__ void __launch_bounds__(SEL_BLOCK)
    select_count_kernel(select_kargs a, u64 *totals)
{
    typedef typename uint_of<KS == 0 ? 1 : KS>::type U;
    __shared__ u64 s_sum[2][SEL_NWARP];
    const int tid = (int)threadIdx.x;
    u64 c0 = 0u, c1 = 0u;
    for (u64 t = blockIdx.x; t < a.num_tiles; t += gridDim.x) {
        const u64 m0 = t * SEL_TILE + (u64)tid;
        const u32 valid = valid_items(a.n, m0);
        U x[SEL_ITEMS];
        if constexpr (KS > 0)
            load_keys<KS>(a, m0, valid, x);
        u32 sel0, sel1;
        evaluate<KS, G>(a, m0, valid, x, sel0, sel1);
        c0 += (u64)__popc(sel0);
        c1 += (u64)__popc(sel1 & ~sel0);
    }
    for (int d = 16; d > 0; d >>= 1) {
        c0 += __shfl_down_sync(PARSUM_K_FULL_MASK, c0, d);
        c1 += __shfl_down_sync(PARSUM_K_FULL_MASK, c1, d);
    }
    if ((tid & 31) == 0) {
        s_sum[0][tid >> 5] = c0;
        s_sum[1][tid >> 5] = c1;
    }
    __syncthreads();
    if (tid == 0) {
        u64 s0 = 0u, s1 = 0u;
        for (int w = 0; w < SEL_NWARP; ++w) {
            s0 += s_sum[0][w];
            s1 += s_sum[1][w];
        }
        atomicAdd(&totals[0], s0);
        if (G == 3)
            atomicAdd(&totals[1], s1);
    }
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SELECT_KERNELS_CUH */
