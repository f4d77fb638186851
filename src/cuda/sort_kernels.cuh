/*
 * sort_kernels.cuh - the GPU radix sort (sort.cu launches these; the
 * segmented sort's own kernels are in segsort_kernels.cuh and build on the
 * pieces here).
 *
 * Onesweep (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit
 * Radix Sort for GPUs", 2022): 8-bit digits, least significant first.
 *
 *  1. sort_hist_kernel reads the keys once and counts the digits of every
 *     pass (one 256-bin histogram per pass and per portion, see below).
 *  2. sort_plan_kernel (one block) turns the counts into each digit's
 *     first output position per pass and portion, marks a pass whose
 *     digit is the same for every key as skipped, and decides on the
 *     device which buffer every remaining pass reads and writes (so the
 *     host never waits to learn which passes run).
 *  3. sort_copy_kernel does the copy that the plan may ask for (all passes
 *     skipped; or sorting in place with an odd number of passes left,
 *     where the data first move to the scratch buffer).
 *  4. Per pass (and portion) onesweep_kernel: a block claims the next tile
 *     from a counter, ranks its keys by digit (per warp with match_any,
 *     then across the warps), publishes its per-digit counts, learns from
 *     the decoupled look-back (Merrill & Garland 2016; here one chain per
 *     digit) how many keys of each digit the earlier tiles hold, sorts the
 *     tile locally in shared memory and writes every key straight to its
 *     final place in the pass's output; then the values the same way.
 *
 * Stability: keys are ranked in input order within the tile (warp by
 * warp, item by item, lane by lane, which is exactly input order for the
 * warp-striped layout below), and tiles in tile order through the
 * look-back, so every pass is a stable counting sort.
 *
 * Keys move as their original bits; each pass recomputes the ordered bits
 * (src/sort/sort_keys.h), since that transform loses a NaN's sign.
 *
 * Portions: a look-back descriptor packs a 2-bit status and a 30-bit count
 * into one 32-bit word (one store publishes both, no fence), so a pass
 * runs over portions of fewer than 2^30 keys, one launch each, with every
 * portion's digit bases computed up front by the plan. Tile numbers count
 * from 0 in each portion and never overflow.
 *
 * Look-back memory is zeroed once per call: launch s uses descriptor array
 * s % 2 and clears array (s + 1) % 2 for launch s + 1 as it goes.
 *
 * Determinism: every count is an integer sum and every position a fixed
 * function of the input; the result never depends on timing.
 */
#ifndef PARSUM_SORT_KERNELS_CUH
#define PARSUM_SORT_KERNELS_CUH

#include "sort_base.cuh"

namespace parsum_sk {

#if defined(__CUDACC__)

/* The plain (non-template) kernels here and in segsort_kernels.cuh are
 * static: sort.cu and segsort.cu both include them. */

/* ------------------------------------------------------------------------ */
/* 1. Histogram of every pass                                                */
/* ------------------------------------------------------------------------ */

/* Every pass's digit of a key by int_digit_fn, its parameters worked out
 * once per thread, from the key itself for integer keys (INT) and from its
 * ordered bits for floats (ord_of). The first version worked the shift
 * and mask out per key and pass and took the key class at run time
 * (H100, 2^28 u32 keys: 621 us against 455 for CUB's histogram kernel;
 * 495 us now). */
template <class K, bool INT>
struct hist_digits {
    static constexpr int NP =
        (int)sizeof(K) < MAX_PASSES ? (int)sizeof(K) : MAX_PASSES;
    int_digit_fn pass[NP];
    u32 passes, kc;
    __device__ __forceinline__ explicit hist_digits(const key_order &ko)
        : pass{}, passes(ko.passes), kc(ko.kc)
    {
#pragma unroll
        for (int p = 0; p < NP; ++p)
            pass[p] = int_digit_fn(ko, (u32)p, (int)sizeof(K));
    }
    /* Counts every pass's digit of key b into h ([MAX_PASSES][RADIX]). */
    __device__ __forceinline__ void count(K b, u32 *h) const
    {
        const K o = INT ? b : ord_of(b, kc);
#pragma unroll
        for (int p = 0; p < NP; ++p)
            if ((u32)p < passes)
                atomicAdd(&h[p * RADIX + pass[p](o)], 1u);
    }
};

/* Keys are read as 16-byte words, HIST_UNROLL of them in flight per
 * thread (one scalar load at a time left the kernel waiting on memory),
 * and counted into one of two copies of the counters (even and odd warps)
 * so that fewer atomics meet on one word. */
constexpr int HIST_UNROLL = 4;
constexpr int HIST_PARTS = 2;

/* INT: integer keys (KC_UNSIGNED, KC_SIGNED), hist_digits. Four blocks
 * per multiprocessor (the grid hist_t launches) fit keys of up to 4 bytes
 * in 32 registers; 8-byte keys' 8 passes of parameters take three. */
template <class K, bool INT>
__global__ void __launch_bounds__(HIST_BLOCK, sizeof(K) <= 4 ? 4 : 3)
    sort_hist_kernel(hist_args a)
{
    const hist_digits<K, INT> hd(a.ko);
    constexpr u32 VK = 16 / sizeof(K); /* keys per 16-byte word */
    __shared__ u32 sh[HIST_PARTS * MAX_PASSES * RADIX];
    const u32 passes = a.ko.passes;
    const u64 nchunks = (a.n + a.chunk - 1) / a.chunk;
    const K *keys = static_cast<const K *>(a.keys);
    /* Chunks start at multiples of 16 bytes from keys (a chunk is a
     * multiple of 128 keys). */
    const bool vec = ((uintptr_t)keys & 15u) == 0;
    u32 *mine = sh + ((threadIdx.x >> 5) % HIST_PARTS) * (MAX_PASSES * RADIX);
    for (u64 c = blockIdx.x; c < nchunks; c += gridDim.x) {
        for (u32 j = threadIdx.x; j < HIST_PARTS * MAX_PASSES * RADIX;
             j += HIST_BLOCK)
            sh[j] = 0;
        __syncthreads();
        const u64 lo = c * a.chunk;
        const u64 hi = lo + a.chunk < a.n ? lo + a.chunk : a.n;
        u64 i = lo + threadIdx.x;
        if (vec) {
            const uint4 *v = reinterpret_cast<const uint4 *>(keys + lo);
            const u32 nv = (u32)((hi - lo) / VK);
            u32 q = threadIdx.x;
            for (; q + (HIST_UNROLL - 1) * HIST_BLOCK < nv;
                 q += HIST_UNROLL * HIST_BLOCK) {
                uint4 x[HIST_UNROLL];
#pragma unroll
                for (int u = 0; u < HIST_UNROLL; ++u)
                    x[u] = v[q + (u32)u * HIST_BLOCK];
#pragma unroll
                for (int u = 0; u < HIST_UNROLL; ++u) {
                    K k[VK];
                    memcpy(k, &x[u], 16);
#pragma unroll
                    for (u32 e = 0; e < VK; ++e)
                        hd.count(k[e], mine);
                }
            }
            for (; q < nv; q += HIST_BLOCK) {
                const uint4 x = v[q];
                K k[VK];
                memcpy(k, &x, 16);
#pragma unroll
                for (u32 e = 0; e < VK; ++e)
                    hd.count(k[e], mine);
            }
            i = lo + (u64)nv * VK + threadIdx.x;
        }
        for (; i < hi; i += HIST_BLOCK)
            hd.count(keys[i], mine);
        __syncthreads();
        u32 *dst = a.hist + (lo / a.portion_size) * (MAX_PASSES * RADIX);
        for (u32 j = threadIdx.x; j < passes * RADIX; j += HIST_BLOCK) {
            u32 t = 0;
#pragma unroll
            for (int q = 0; q < HIST_PARTS; ++q)
                t += sh[q * MAX_PASSES * RADIX + j];
            if (t != 0)
                atomicAdd(&dst[j], t);
        }
        __syncthreads();
    }
}

/* ------------------------------------------------------------------------ */
/* 2. Plan: digit bases, skipped passes, buffer routes                       */
/* ------------------------------------------------------------------------ */

/* One block of RADIX threads. */
static __global__ void __launch_bounds__(RADIX) sort_plan_kernel(plan_args a)
{
    __shared__ u64 wsum[RADIX / 32];
    __shared__ u32 active[MAX_PASSES];
    const u32 d = threadIdx.x;
    for (u32 p = 0; p < a.passes; ++p) {
        u64 tot = 0;
        for (u32 q = 0; q < a.portions; ++q)
            tot += a.hist[((u64)q * MAX_PASSES + p) * RADIX + d];
        /* One digit holding every key: the pass would move nothing. */
        const int trivial = __syncthreads_or(tot == a.n);
        u64 run = scan_digits<u64>(tot, wsum);
        for (u32 q = 0; q < a.portions; ++q) {
            a.base[((u64)p * a.portions + q) * RADIX + d] = run;
            run += a.hist[((u64)q * MAX_PASSES + p) * RADIX + d];
        }
        if (d == 0)
            active[p] = trivial ? 0u : 1u;
    }
    __syncthreads();
    if (d != 0)
        return;
    u32 m = 0;
    for (u32 p = 0; p < a.passes; ++p)
        m += active[p];
    /* The active passes alternate between the scratch buffer and the
     * output, ending in the output. In place, an odd count would make the
     * first pass write the buffer it reads: the input is first copied to
     * the scratch buffer and the passes start from there. */
    const bool kpre = a.k_inplace && (m & 1u);
    const bool vpre = a.has_values && a.v_inplace && (m & 1u);
    u32 ksrc = kpre ? B_TMP : B_IN;
    u32 vsrc = a.gen ? B_GEN : vpre ? B_TMP : B_IN;
    u32 j = 0;
    for (u32 p = 0; p < MAX_PASSES; ++p) {
        route r = {0u, 0u, 0u, 0u, 0u, 0u};
        if (p < a.passes && active[p]) {
            const u32 dst = ((m - 1u - j) & 1u) ? B_TMP : B_OUT;
            r.active = 1u;
            r.seq = j;
            r.ksrc = ksrc;
            r.kdst = dst;
            r.vsrc = vsrc;
            r.vdst = dst;
            ksrc = vsrc = dst;
            ++j;
        }
        a.routes[p] = r;
    }
    if (m == 0) {
        a.copy[0] = a.k_inplace ? C_NONE : C_IN_OUT;
        a.copy[1] = !a.has_values ? C_NONE
                    : a.gen       ? C_GEN_OUT
                    : a.v_inplace ? C_NONE
                                  : C_IN_OUT;
    } else {
        a.copy[0] = kpre ? C_IN_TMP : C_NONE;
        a.copy[1] = vpre ? C_IN_TMP : C_NONE;
    }
}

/* ------------------------------------------------------------------------ */
/* 3. The copy the plan may ask for                                          */
/* ------------------------------------------------------------------------ */

__device__ __forceinline__ void copy_bytes(void *dst, const void *src,
                                           u64 bytes)
{
    const u64 tid = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 done = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 15u) == 0) {
        const u64 nv = bytes / 16;
        const uint4 *s = static_cast<const uint4 *>(src);
        uint4 *d = static_cast<uint4 *>(dst);
        for (u64 i = tid; i < nv; i += stride)
            d[i] = s[i];
        done = nv * 16;
    }
    const unsigned char *s = static_cast<const unsigned char *>(src);
    unsigned char *d = static_cast<unsigned char *>(dst);
    for (u64 i = done + tid; i < bytes; i += stride)
        d[i] = s[i];
}

static __global__ void sort_copy_kernel(copy_args a)
{
    const u32 ck = a.copy[0], cv = a.copy[1];
    if (ck != C_NONE)
        copy_bytes(ck == C_IN_TMP ? a.ktmp : a.kout, a.kin, a.n * a.ks);
    if (cv == C_GEN_OUT) {
        const u64 stride = (u64)gridDim.x * blockDim.x;
        u64 *out = static_cast<u64 *>(a.vout);
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < a.n;
             i += stride)
            out[i] = i;
    } else if (cv != C_NONE) {
        copy_bytes(cv == C_IN_TMP ? a.vtmp : a.vout, a.vin, a.n * a.vs);
    }
}

/* ------------------------------------------------------------------------ */
/* 4. One onesweep pass over one portion                                     */
/* ------------------------------------------------------------------------ */

/* Dynamic shared memory of onesweep_kernel<K, V, VAR, ..>, byte offsets.
 * wbins: the warps' digit counters (match 2: RADIX + 1 words per
 * half-warp, warp_rank_or). exch: the locally sorted keys, then values.
 * With match 2 the two share one region: the counters are dead once
 * turned into the first slots, which get a small array of their own (a
 * block of u32 keys takes 46 KB instead of 71). */
struct os_smem {
    size_t slots, gbase, wsum, exch, total;
};
__host__ __device__ constexpr size_t os_wbins_bytes(int block, int match)
{
    return (size_t)(block / 32) * (match == 2 ? 2 * (RADIX + 1) : RADIX) * 4;
}
__host__ __device__ constexpr os_smem onesweep_layout(int ks, int v, int block,
                                                      int items, int match)
{
    const size_t wb = os_wbins_bytes(block, match);
    const size_t ex = (size_t)block * items * (size_t)(ks + value_bytes(v));
    const size_t region =
        match == 2 ? ((wb > ex ? wb : ex) + 15) / 16 * 16 : wb;
    const size_t slots = region;
    const size_t gbase =
        slots + (match == 2 ? (size_t)2 * (block / 32) * RADIX * 2 : 0);
    const size_t wsum = gbase + RADIX * 8;
    const size_t exch = match == 2 ? 0 : wsum + 64;
    const size_t total = match == 2 ? wsum + 64 : exch + ex;
    return os_smem{slots, gbase, wsum, exch, total};
}
__host__ __device__ constexpr size_t onesweep_smem(int ks, int v, int block,
                                                   int items, int match)
{
    return onesweep_layout(ks, v, block, items, match).total;
}

/* The copy of one portion that a plan with every pass skipped asks for
 * (fold_copy): keys and values (or positions) from the input to the
 * output. */
__device__ __forceinline__ void copy_portion(const os_args &a, u32 ks)
{
    const u32 ck = a.copy[0], cv = a.copy[1];
    if (ck == C_IN_OUT)
        copy_bytes(static_cast<unsigned char *>(a.kout) + a.first * ks,
                   static_cast<const unsigned char *>(a.kin) + a.first * ks,
                   a.count * ks);
    if (cv == C_GEN_OUT) {
        const u64 stride = (u64)gridDim.x * blockDim.x;
        u64 *out = static_cast<u64 *>(a.vout);
        for (u64 i = a.first + blockIdx.x * (u64)blockDim.x + threadIdx.x;
             i < a.first + a.count; i += stride)
            out[i] = i;
    } else if (cv == C_IN_OUT) {
        copy_bytes(static_cast<unsigned char *>(a.vout) + a.first * a.vsize,
                   static_cast<const unsigned char *>(a.vin) +
                       a.first * a.vsize,
                   a.count * a.vsize);
    }
}

/* Decoupled look-back for digit d = threadIdx.x < RADIX of tile `tile`
 * (> 0): the keys of digit d in the portion's earlier tiles. LBW
 * predecessors' descriptors are loaded together per step, so a walk over
 * many tiles that published only their own counts waits for one load
 * latency per LBW tiles, not per tile; the step ends at the first
 * descriptor not yet written (the next step starts there) or at an
 * inclusive one. */
template <int LBW>
__device__ __forceinline__ u64 look_back(const u32 *desc, u32 tile)
{
    const u32 d = threadIdx.x;
    u64 excl = 0;
    u32 t = tile - 1u; /* the nearest predecessor not yet added */
    for (;;) {
        u32 v[LBW];
#pragma unroll
        for (int k = 0; k < LBW; ++k)
            v[k] = t >= (u32)k ? parsum_k::ld_status(
                                     desc + (u64)(t - (u32)k) * RADIX + d)
                               : ST_INC; /* never reached: tile 0 is INC */
        bool stop = false, done = false;
        u32 used = 0;
#pragma unroll
        for (int k = 0; k < LBW; ++k) {
            if (!stop) {
                const u32 st = v[k] & ~COUNT_MASK;
                if (st == 0u) {
                    stop = true;
                } else {
                    excl += v[k] & COUNT_MASK;
                    ++used;
                    if (st == ST_INC)
                        stop = done = true;
                }
            }
        }
        if (done)
            return excl;
        t -= used;
    }
}

/* KD 1: the keys are integers (KC_UNSIGNED or KC_SIGNED), digits by
 * int_digit_fn; KD 0: any class, by digit_fn. LBW: descriptors the
 * look-back reads a step (the policy's lbw, or 1: sort.cu,
 * lookback_one_step). */
template <class K, int V, int VAR, int KD, int LBW>
__global__ void
__launch_bounds__(onesweep_policy((int)sizeof(K), V, VAR).block,
                  onesweep_policy((int)sizeof(K), V, VAR).min_blocks)
    onesweep_kernel(os_args a)
{
    constexpr os_policy P = onesweep_policy((int)sizeof(K), V, VAR);
    constexpr int BLOCK = P.block, ITEMS = P.items;
    constexpr int NW = BLOCK / 32;
    constexpr u32 TILE = (u32)BLOCK * ITEMS;
    static_assert(BLOCK % 32 == 0 && BLOCK >= (int)RADIX, "block shape");
    /* wbins words per warp; with match 2 (warp_rank_or) half-warp h's
     * entry for digit d is word WPW * w + (RADIX + 1) * h + d. */
    constexpr bool M2 = P.match == 2;
    constexpr u32 WPW = M2 ? 2u * (RADIX + 1u) : RADIX;
    constexpr u32 ISTEP = M2 ? 16u : 32u; /* positions between items */
    static_assert(!M2 || TILE < (1u << 16), "16-bit ranks and slots");
    constexpr os_smem L = onesweep_layout((int)sizeof(K), V, BLOCK, ITEMS,
                                          P.match);
    extern __shared__ __align__(16) unsigned char smem[];
    u32 *wbins = reinterpret_cast<u32 *>(smem);
    /* match 2: the first tile slot of (half h, warp w, digit d) */
    unsigned short *slots = reinterpret_cast<unsigned short *>(smem + L.slots);
    u64 *gbase = reinterpret_cast<u64 *>(smem + L.gbase);
    u32 *wsum = reinterpret_cast<u32 *>(smem + L.wsum);
    u32 *s_tile = wsum + RADIX / 32;
    unsigned char *exch = smem + L.exch;
    /* the counter of digit d in warp k (half-warp h with match 2,
     * where it is the high half of the word) */
    auto count_at = [&](u32 k, u32 h, u32 d) -> u32 {
        return M2 ? wbins[WPW * k + (RADIX + 1u) * h + d] >> 16
                  : wbins[WPW * k + d];
    };

    const route r = a.routes[a.pass];
    if (!r.active) {
        if (a.fold_copy && a.pass + 1u == a.ko.passes)
            copy_portion(a, (u32)sizeof(K));
        return;
    }
    const u32 seq = r.seq * a.portions + a.portion;
    u32 *desc = a.desc[seq & 1u];
    u32 *dnext = a.desc[(seq + 1u) & 1u];
    u32 *counter = a.counter[seq & 1u];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *a.counter[(seq + 1u) & 1u] = 0u; /* the next launch's */

    /* Selects, not an indexed array: that would live in local memory. */
    auto kbuf = [&](u32 b) {
        return b == B_IN ? a.kin : b == B_TMP ? (const void *)a.ktmp
                                              : (const void *)a.kout;
    };
    auto vbuf = [&](u32 b) {
        return b == B_IN ? a.vin : b == B_TMP ? (const void *)a.vtmp
                                              : (const void *)a.vout;
    };
    /* The source is read from this portion's keys (tile offsets t0 count
     * from a.first); the destination is the whole output: base (and so
     * gbase) holds global positions in [0, n), so kdst and vdst are NOT
     * offset by a.first (doing so wrote up to a.first keys past the end
     * of the buffers for every portion but the first, i.e. above 2^30
     * keys). */
    const K *ksrc = static_cast<const K *>(kbuf(r.ksrc)) + a.first;
    K *kdst = const_cast<K *>(static_cast<const K *>(kbuf(r.kdst)));
    const bool gen = r.vsrc == B_GEN;
    const void *vsrc = gen ? nullptr : vbuf(r.vsrc);
    void *vdst = V == V_NONE ? nullptr : const_cast<void *>(vbuf(r.vdst));
    const u64 *base = a.base + ((u64)a.pass * a.portions + a.portion) * RADIX;
    typedef typename std::conditional<KD == 1, int_digit_fn, digit_fn>::type
        dfn;
    const dfn dg(a.ko, a.pass, (int)sizeof(K));

    const u32 tid = threadIdx.x, lane = tid & 31u, w = tid >> 5;
    K *xk = reinterpret_cast<K *>(exch);
    for (;;) {
        if (tid == 0)
            *s_tile = atomicAdd(counter, 1u);
        for (u32 j = tid; j < WPW * NW; j += BLOCK)
            wbins[j] = 0;
        __syncthreads();
        const u32 tile = *s_tile;
        if (tile >= a.num_tiles)
            break;
        const u64 t0 = (u64)tile * TILE;
        const u32 valid =
            a.count - t0 < (u64)TILE ? (u32)(a.count - t0) : TILE;
        /* Warp w holds positions [w, w + 1) * 32 * ITEMS, item i of lane
         * l at position w * 32 * ITEMS + i * 32 + l (warp-striped); with
         * match 2 each half-warp h = l / 16 holds its own half, item i of
         * lane l at w * 32 * ITEMS + h * 16 * ITEMS + i * 16 + l % 16
         * (warp_rank_or ranks the halves apart). Either way a load
         * instruction reads whole 64-byte pieces. */
        const u32 wpos = (u32)w * 32u * ITEMS +
                         (M2 ? (lane >> 4) * 16u * ITEMS + (lane & 15u) : lane);
        K key[ITEMS];
        u32 rk[ITEMS];
        /* Word values are loaded with the keys, so that they arrive while
         * the keys are ranked: loaded after the ranking, each value's
         * shared-memory store waited for its load (u32 pairs: half the
         * pass's stalls). */
        typedef typename value_word<V == V_8 ? V_8 : V_4>::type VW;
        constexpr int VITEMS = V == V_4 || V == V_8 ? ITEMS : 1;
        VW val[VITEMS];
        if constexpr (V == V_4 || V == V_8) {
            if (!gen) {
                const VW *vs = static_cast<const VW *>(vsrc) + a.first;
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) {
                    const u32 p = wpos + (u32)i * ISTEP;
                    val[i] = p < valid ? vs[t0 + p] : (VW)0;
                }
            }
        }
        if constexpr (P.match == 2) {
            if (valid == TILE) {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i)
                    key[i] = ksrc[t0 + wpos + (u32)i * ISTEP];
                warp_rank_or<ITEMS>([&](int i) { return dg(key[i]); },
                                    wbins + WPW * w +
                                        (RADIX + 1u) * (lane >> 4),
                                    rk);
            } else {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) {
                    const u32 p = wpos + (u32)i * ISTEP;
                    key[i] = p < valid ? ksrc[t0 + p] : (K)0;
                }
                warp_rank_or<ITEMS>(
                    [&](int i) {
                        return wpos + (u32)i * ISTEP < valid ? dg(key[i])
                                                           : RADIX;
                    },
                    wbins + WPW * w + (RADIX + 1u) * (lane >> 4), rk);
            }
        } else {
            u32 dig[ITEMS];
            if (valid == TILE) {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i)
                    key[i] = ksrc[t0 + wpos + (u32)i * ISTEP];
#pragma unroll
                for (int i = 0; i < ITEMS; ++i)
                    dig[i] = dg(key[i]);
            } else {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) {
                    const u32 p = wpos + (u32)i * ISTEP;
                    key[i] = p < valid ? ksrc[t0 + p] : (K)0;
                    dig[i] = p < valid ? dg(key[i]) : RADIX;
                }
            }
            warp_rank<ITEMS, P.match>(dig, wbins + w * RADIX, rk);
        }
        __syncthreads();
        u32 cnt = 0;
        if (tid < RADIX) {
#pragma unroll
            for (int k = 0; k < NW; ++k)
                cnt += count_at(k, 0, tid) + (M2 ? count_at(k, 1, tid) : 0u);
            /* Publish early: later tiles wait on this, not on our
             * look-back. */
            parsum_k::st_status(desc + (u64)tile * RADIX + tid,
                                (tile == 0 ? ST_INC : ST_AGG) | cnt);
        }
        const u32 ex = scan_digits<u32>(cnt, wsum);
        /* The tile slot of warp w's first key of digit d (per half-warp
         * with match 2), so that placing a key takes one shared read. */
        if (tid < RADIX) {
            u32 run = ex;
#pragma unroll
            for (int k = 0; k < NW; ++k) {
                const u32 c = count_at(k, 0, tid);
                if constexpr (M2) {
                    const u32 cb = count_at(k, 1, tid);
                    slots[k * RADIX + tid] = (unsigned short)run;
                    slots[(NW + k) * RADIX + tid] = (unsigned short)(run + c);
                    run += c + cb;
                } else {
                    wbins[WPW * k + tid] = run;
                    run += c;
                }
            }
        }
        __syncthreads();
        /* Digits are recomputed rather than kept (registers are what
         * limits the blocks per multiprocessor here), except where match 2
         * packed them into the ranks for free. */
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            if (wpos + (u32)i * ISTEP < valid) {
                const u32 d = M2 ? rk[i] >> 16 : dg(key[i]);
                const u32 r = M2 ? rk[i] & 0xFFFFu : rk[i];
                const u32 pos =
                    (M2 ? (u32)slots[((lane >> 4) * NW + w) * RADIX + d]
                        : count_at(w, 0, d)) +
                    r;
                xk[pos] = key[i];
                rk[i] = pos;
            }
        }
        /* Values to their tile slots, in their own part of the exchange
         * buffer, so that no value waits in registers for the look-back. */
        if constexpr (V == V_4 || V == V_8) {
            VW *xv = reinterpret_cast<VW *>(exch + (size_t)TILE * sizeof(K));
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 p = wpos + (u32)i * ISTEP;
                if (p < valid)
                    xv[rk[i]] = gen ? (VW)(a.first + t0 + p) : val[i];
            }
        } else if constexpr (V == V_BYTES) {
            const unsigned char *vs =
                static_cast<const unsigned char *>(vsrc) + a.first * a.vsize;
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 p = wpos + (u32)i * ISTEP;
                if (p < valid)
                    copy_value(exch + (size_t)TILE * sizeof(K), rk[i], vs,
                               t0 + p, a.vsize, a.vword);
            }
        }
        if (tid < RADIX) {
            u64 excl = 0;
            if (tile > 0) {
                excl = look_back<LBW>(desc, tile);
                parsum_k::st_status(desc + (u64)tile * RADIX + tid,
                                    ST_INC | (u32)(excl + cnt));
            }
            /* Position of tile-local slot j of digit d: gbase[d] + j
             * (mod 2^64; mod 2^32 when every position fits 32 bits). */
            const u64 g = base[tid] + excl - ex;
            if (a.pos32)
                reinterpret_cast<u32 *>(gbase)[tid] = (u32)g;
            else
                gbase[tid] = g;
            dnext[(u64)tile * RADIX + tid] = 0u;
        }
        __syncthreads();
        /* Keys and values from the locally sorted tile: runs of one digit
         * land in consecutive addresses. */
        K *kd = kdst;
        auto scatter = [&](const auto &at_of) {
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 j = (u32)i * BLOCK + tid;
                if (j < valid) {
                    const K k = xk[j];
                    const auto at = at_of(dg(k), j);
                    kd[at] = k;
                    if constexpr (V == V_4 || V == V_8) {
                        const VW *xv = reinterpret_cast<const VW *>(
                            exch + (size_t)TILE * sizeof(K));
                        static_cast<VW *>(vdst)[at] = xv[j];
                    } else if constexpr (V == V_BYTES) {
                        copy_value(vdst, at, exch + (size_t)TILE * sizeof(K),
                                   j, a.vsize, a.vword);
                    }
                }
            }
        };
        /* 32-bit positions (n <= 2^32, nearly always): half the shared
         * bytes per base and one multiply-add per address, not three
         * 64-bit operations. */
        if (a.pos32) {
            const u32 *g32 = reinterpret_cast<const u32 *>(gbase);
            scatter([&](u32 d, u32 j) { return g32[d] + j; });
        } else {
            scatter([&](u32 d, u32 j) { return gbase[d] + (u64)j; });
        }
        __syncthreads(); /* shared memory is reused by the next tile */
    }
    /* Descriptor rows the next launch may use beyond our tiles. */
    const u64 stride = (u64)gridDim.x * BLOCK;
    for (u64 x = (u64)a.num_tiles * RADIX + blockIdx.x * (u64)BLOCK + tid;
         x < (u64)a.max_tiles * RADIX; x += stride)
        dnext[x] = 0u;
}

#endif /* __CUDACC__ */

} /* namespace parsum_sk */

#endif
