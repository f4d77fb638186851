/*
 * scan_kernels.cuh - the GPU scan and reduce kernels of parsum, written once
 * for any element type T and any associative operator Op.
 *
 * This file is compiled twice: by nvcc for the built-in dtypes (included by
 * src/cuda/kernels_inst.cuh) and, as text, by NVRTC for a custom operator
 * (embedded into the library by src/cuda/embed.cmake and prepended to the
 * user's type and combine body, see src/cuda/custom.cu). It therefore
 * includes no header at all, uses no standard-library name and defines
 * everything it needs inside namespace parsum_k.
 *
 * Scan: one pass with decoupled look-back (D. Merrill, M. Garland, "Single-
 * pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002),
 * made deterministic with a fixed two-level look-back; reduce: one pass with
 * per-block partials folded in order by the last block. The design and the
 * determinism argument are in src/cuda/NOTES.md; in short, every value a
 * thread combines is a fixed function of the input (and of n), never of the
 * timing, and operands are combined in sequence order (the earlier one on
 * the left), so non-commutative operators work too - except in the reduce
 * of a built-in operator, which is commutative and may be regrouped, in a
 * fixed way, for speed.
 *
 * Requirements on T: trivially copyable and default-constructible. Op must
 * provide `T operator()(const T &a, const T &b) const` computing a (+) b.
 */
#ifndef PARSUM_SCAN_KERNELS_CUH
#define PARSUM_SCAN_KERNELS_CUH

namespace parsum_k {

typedef unsigned int u32;
typedef unsigned long long u64;

/* ------------------------------------------------------------------------ */
/* Tuning: one table, looked up by element size.                            */
/* ------------------------------------------------------------------------ */

/* A tile of the scan is block * rows * vec_elems(size) elements: each
 * thread holds `rows` vectors of 16 bytes (vec_elems elements each) or,
 * for element sizes that do not divide 16, `rows` single elements. The
 * reduce streams through warp tiles of 32 * rrows * vec_elems elements.
 * Changing a row changes how float results are rounded (the grouping), never
 * whether they are deterministic. */
struct policy {
    u64 max_size;  /* this row serves element sizes up to max_size bytes */
    int block;     /* scan: threads per block */
    int rows;      /* scan: vectors (or elements) per thread */
    int rblock;    /* reduce: threads per block */
    int rrows;     /* reduce: vectors (or elements) per thread per step */
};

/* Rows per thread for 4- and 8-byte elements. Tuning runs
 * (bench/gpu_tune.sh) override them at build time; the defaults are the
 * measured best (bench/RESULTS.md). */
#ifndef PARSUM_K_ROWS4
#define PARSUM_K_ROWS4 8
#endif
#ifndef PARSUM_K_ROWS8
#define PARSUM_K_ROWS8 8
#endif

/* The table. A chain of conditionals rather than an array so that host and
 * device code can both evaluate it (nvcc forbids a host array in device
 * code, NVRTC any array outside constant evaluation). */
__host__ __device__ constexpr policy policy_for(u64 size)
{
    /* clang-format off */
    /*                    size  block rows           rblock rrows   scan elements/thread */
    return size <= 1 ? policy{   1,  256,   2,             256,   2 }  /* 32 x 1 byte   */
         : size <= 2 ? policy{   2,  256,   2,             256,   2 }  /* 16 x 2 bytes  */
         : size <= 4 ? policy{   4,  256, PARSUM_K_ROWS4,  256,   4 }  /* 4*ROWS4 x 4 bytes */
         : size <= 8 ? policy{   8,  256, PARSUM_K_ROWS8,  256,   4 }  /* 2*ROWS8 x 8 bytes */
         : size <= 16 ? policy{ 16,  256,   4,             256,   2 }  /*  4 x 16 bytes */
         : size <= 64 ? policy{ 64,  128,   2,             128,   1 }  /* custom types  */
         :              policy{256,  64,   1,              64,   1 }; /* <= 256 */
    /* clang-format on */
}

/* Elements per 16-byte vector; 1 where the size does not divide 16. */
__host__ __device__ constexpr int vec_elems(u64 size)
{
    return (size <= 16 && 16 % size == 0) ? (int)(16 / size) : 1;
}

/* True when a vector (vec_elems elements) can be moved as 16-byte words. */
__host__ __device__ constexpr bool vec_capable(u64 size)
{
    return (vec_elems(size) * size) % 16 == 0;
}

__host__ __device__ constexpr u64 scan_tile_elems(u64 size)
{
    return (u64)policy_for(size).block * policy_for(size).rows *
           vec_elems(size);
}

__host__ __device__ constexpr u64 reduce_warp_tile_elems(u64 size)
{
    return 32ull * policy_for(size).rrows * vec_elems(size);
}

/* Per-tile values (aggregate, inclusive prefix, reduce partials) live in
 * slots of whole 32-bit words so that they can be read word by word from
 * L2 whatever the element size. */
__host__ __device__ constexpr u64 slot_bytes(u64 size)
{
    return (size + 3) / 4 * 4;
}

/* The scan publishes per-tile values in descriptors. Elements of up to 8
 * bytes are packed with their status word into one 8- or 16-byte
 * descriptor {status, value} that is written and read with a single
 * access, so a reader that sees the status sees the value: no fence on
 * either side (CUB's ScanTileState does the same). Larger elements take a
 * value slot plus a separate status word, with GPU-scope fences between. */
__host__ __device__ constexpr bool desc_packed(u64 size)
{
    return size <= 8;
}

__host__ __device__ constexpr u64 desc_bytes(u64 size)
{
    return size <= 4 ? 8 : size <= 8 ? 16 : slot_bytes(size);
}

/* ------------------------------------------------------------------------ */
/* Kernel arguments (the host fills these; layout shared with host code).  */
/* ------------------------------------------------------------------------ */

enum : u32 {
    OPT_EXCLUSIVE = 1u, /* exclusive scan */
    OPT_VEC = 2u        /* in and out are 16-byte aligned: vector access */
};

enum : u32 { TILE_NONE = 0u, TILE_AGG = 1u, GROUP_AGG = 2u, GROUP_INCL = 3u };

struct scan_args {
    const void *in;
    void *out;
    u64 n;         /* elements, > 0 */
    u32 num_tiles; /* ceil(n / tile), < 2^31; the grid has this many blocks */
    u32 options;   /* OPT_* bits */
    u32 *counter;  /* next tile to hand out; zeroed before the launch */
    u32 *agg;      /* per-tile aggregate descriptors, desc_bytes each */
    u32 *incl;     /* per-tile inclusive-prefix descriptors */
    u32 *agg_status;  /* unpacked descriptors only: status words of agg */
    u32 *incl_status; /* and of incl; (packed: unused) */
    /* Statuses (packed descriptors or status words) are zeroed before the
     * launch. */
};

struct reduce_args {
    const void *in;
    u64 n;          /* elements (may be 0 only if the host passes it) */
    u64 tiles_per_warp; /* ordered reduce: warp tiles per warp */
    u32 num_blocks; /* grid size G */
    u32 options;    /* OPT_VEC */
    u32 *partials;  /* G slots */
    u32 *counter;   /* blocks done; 0 before the launch, reset to 0 after */
    void *result;   /* one element; any alignment */
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* ------------------------------------------------------------------------ */
/* Small device helpers                                                      */
/* ------------------------------------------------------------------------ */

#define PARSUM_K_FULL_MASK 0xffffffffu

struct alignas(16) vec16 {
    u32 x, y, z, w;
};

template <class T>
struct words {
    u32 w[(sizeof(T) + 3) / 4];
};

/* Loops over the 32-bit words of an element are unrolled for small types
 * only: a 1 KiB type would otherwise take minutes to compile. */
template <class T>
__host__ __device__ constexpr int word_unroll()
{
    return (sizeof(T) + 3) / 4 <= 16 ? (int)((sizeof(T) + 3) / 4) : 4;
}

template <class T>
__device__ __forceinline__ words<T> to_words(const T &v)
{
    words<T> r;
    r.w[(sizeof(T) + 3) / 4 - 1] = 0u; /* defined padding bytes */
    memcpy(r.w, &v, sizeof(T));
    return r;
}

template <class T>
__device__ __forceinline__ T from_words(const words<T> &r)
{
    T v;
    memcpy(&v, r.w, sizeof(T));
    return v;
}

template <class T>
__device__ __forceinline__ T shfl_idx(const T &v, int src)
{
    words<T> r = to_words(v);
#pragma unroll(word_unroll<T>())
    for (int i = 0; i < (int)((sizeof(T) + 3) / 4); ++i)
        r.w[i] = __shfl_sync(PARSUM_K_FULL_MASK, r.w[i], src);
    return from_words<T>(r);
}

template <class T>
__device__ __forceinline__ T shfl_up(const T &v, int d)
{
    words<T> r = to_words(v);
#pragma unroll(word_unroll<T>())
    for (int i = 0; i < (int)((sizeof(T) + 3) / 4); ++i)
        r.w[i] = __shfl_up_sync(PARSUM_K_FULL_MASK, r.w[i], d);
    return from_words<T>(r);
}

template <class T>
__device__ __forceinline__ T shfl_down(const T &v, int d)
{
    words<T> r = to_words(v);
#pragma unroll(word_unroll<T>())
    for (int i = 0; i < (int)((sizeof(T) + 3) / 4); ++i)
        r.w[i] = __shfl_down_sync(PARSUM_K_FULL_MASK, r.w[i], d);
    return from_words<T>(r);
}

/* Inter-block communication. Status words are read and written with
 * strong (relaxed, GPU-scope) accesses so that polling always reaches L2;
 * the values they guard are written before a GPU-scope fence and read
 * after one, through ld.global.cg (L2, never a stale L1 line). This is
 * the release/acquire-by-fence pattern of the PTX memory model. */
__device__ __forceinline__ u32 ld_status(const u32 *p)
{
    u32 v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(p)
                 : "memory");
    return v;
}

__device__ __forceinline__ void st_status(u32 *p, u32 v)
{
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
}

__device__ __forceinline__ void fence_gpu()
{
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

__device__ __forceinline__ u32 ld_cg(const u32 *p)
{
    u32 v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

template <class T>
__device__ __forceinline__ void store_slot(u32 *base, u64 idx, const T &v)
{
    constexpr int NW = (int)(slot_bytes(sizeof(T)) / 4);
    words<T> r = to_words(v);
    u32 *p = base + idx * NW;
#pragma unroll(word_unroll<T>())
    for (int i = 0; i < NW; ++i)
        p[i] = r.w[i];
}

template <class T>
__device__ __forceinline__ T load_slot(const u32 *base, u64 idx)
{
    constexpr int NW = (int)(slot_bytes(sizeof(T)) / 4);
    words<T> r;
    const u32 *p = base + idx * NW;
#pragma unroll(word_unroll<T>())
    for (int i = 0; i < NW; ++i)
        r.w[i] = ld_cg(p + i);
    return from_words<T>(r);
}

/* Loads the V elements of one vector starting at p (element order as in
 * memory, or reversed when REV) with 16-byte accesses; p is 16-byte
 * aligned. store_vec is the converse. */
template <class T, int V, bool REV>
__device__ __forceinline__ void load_vec(T (&x)[V], const T *p)
{
    if constexpr (V * sizeof(T) % 16 == 0) {
        constexpr int NQ = (int)(V * sizeof(T) / 16);
        vec16 q[NQ];
        const vec16 *s = reinterpret_cast<const vec16 *>(p);
#pragma unroll
        for (int i = 0; i < NQ; ++i)
            q[i] = s[i];
        T t[V];
        memcpy(t, q, sizeof t);
#pragma unroll
        for (int v = 0; v < V; ++v)
            x[v] = t[REV ? V - 1 - v : v];
    } else { /* not vector-capable: element by element */
#pragma unroll
        for (int v = 0; v < V; ++v)
            x[v] = p[REV ? V - 1 - v : v];
    }
}

template <class T, int V, bool REV>
__device__ __forceinline__ void store_vec(T *p, const T (&y)[V])
{
    if constexpr (V * sizeof(T) % 16 == 0) {
        constexpr int NQ = (int)(V * sizeof(T) / 16);
        T t[V];
#pragma unroll
        for (int v = 0; v < V; ++v)
            t[v] = y[REV ? V - 1 - v : v];
        vec16 q[NQ];
        memcpy(q, t, sizeof t);
        vec16 *d = reinterpret_cast<vec16 *>(p);
#pragma unroll
        for (int i = 0; i < NQ; ++i)
            d[i] = q[i];
    } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
            p[REV ? V - 1 - v : v] = y[v];
    }
}

/* Ordered warp reduction: lane 0 ends with v(lane 0) (+) ... (+) v(lane 31)
 * as a fixed binary tree, the lower lanes' values always on the left (the
 * other lanes end with partial folds that nobody uses). */
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, const Op &op)
{
#pragma unroll
    for (int m = 1; m < 32; m <<= 1) {
        T o = shfl_down(v, m);
        v = op(v, o);
    }
    return v;
}

/* ------------------------------------------------------------------------ */
/* Scan                                                                      */
/* ------------------------------------------------------------------------ */

/* Publishes value v with status st in descriptor idx of desc (status
 * words in status, for unpacked descriptors). */
template <class T>
__device__ __forceinline__ void publish(u32 *desc, u32 *status, u64 idx,
                                        u32 st, const T &v)
{
    if constexpr (sizeof(T) <= 4) {
        u32 w = 0u;
        memcpy(&w, &v, sizeof(T));
        asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %2};" ::"l"(
                         desc + idx * 2u),
                     "r"(st), "r"(w)
                     : "memory");
    } else if constexpr (sizeof(T) <= 8) {
        u64 w = 0u;
        memcpy(&w, &v, sizeof(T));
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(
                         desc + idx * 4u),
                     "l"((u64)st), "l"(w)
                     : "memory");
    } else {
        store_slot(desc, idx, v);
        fence_gpu();
        st_status(status + idx, st);
    }
}

/* Reads descriptor idx: returns its status and, when that is not
 * TILE_NONE, sets v to its value. */
template <class T>
__device__ __forceinline__ u32 peek(const u32 *desc, const u32 *status,
                                    u64 idx, T &v)
{
    if constexpr (sizeof(T) <= 4) {
        u32 st, w;
        asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];"
                     : "=r"(st), "=r"(w)
                     : "l"(desc + idx * 2u)
                     : "memory");
        memcpy(&v, &w, sizeof(T));
        return st;
    } else if constexpr (sizeof(T) <= 8) {
        u64 st, w;
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(st), "=l"(w)
                     : "l"(desc + idx * 4u)
                     : "memory");
        memcpy(&v, &w, sizeof(T));
        return (u32)st;
    } else {
        u32 st = ld_status(status + idx);
        if (st != TILE_NONE) {
            fence_gpu();
            v = load_slot<T>(desc, idx);
        }
        return st;
    }
}

/* Deterministic look-back (warp 0 of tile c; returns X(c) in lane 0,
 * meaningful for c > 0). Tiles form groups of 32 (g = c / 32,
 * p = c % 32). A tile's prefix is
 *   X(c) = GP(g-1) (+) fold(A(32g) .. A(c-1))
 * and the last tile of group g (p == 31) publishes, in its aggregate
 * descriptor, the group aggregate
 *   GA(g) = fold(A(32g) .. A(32g+30)) (+) A(c)
 * and, in its inclusive descriptor, the group prefix
 *   GP(g) = GP(g-32) (+) fold(GA(g-31) .. GA(g)).
 * Every value is a fixed function of the input (each fold is the same
 * ordered warp tree), so the result is deterministic, floats included.
 * A tile computes GP(g-1) itself from GA(g-32..g-1) and GP(g-33) rather
 * than waiting for group g-1 to publish it (same inputs, same tree, same
 * bits), and waits for all it needs at once: its group's aggregates, the
 * 32 group aggregates and GP(g-33), which is long published because
 * fewer than 32 groups of tiles are ever in flight. The last tile of a
 * group publishes GA(g) before it waits for anything outside its group:
 * otherwise each group would wait for the one before, a serial chain. */
template <class T, class Op>
__device__ __forceinline__ T lookback_groups(const scan_args &a, u32 c,
                                             const T &agg, const T &pad,
                                             int lane, const Op &op)
{
    const u32 g = c >> 5, pos = c & 31u;
    const bool last = pos == 31u;
    if (lane == 0 && !last)
        publish(a.agg, a.agg_status, c, TILE_AGG, agg);

    /* Lane i waits for A(32g + i) (i < pos), GA(g - 32 + i) (groups >= 0),
     * lane 0 for GP(g - 33) and, in the last tile, lane 1 for GP(g - 32).
     * A value not needed counts as present; the last tile defers the
     * values outside its group until it has published GA(g). */
    const long long gi = (long long)g - 32 + lane;
    T va = pad, vga = pad, vgp = pad, vgq = pad;
    bool has_a = (u32)lane >= pos;
    bool has_ga = last || gi < 0;
    bool has_gp = last || !(lane == 0 && g >= 33u);
    bool has_gq = true;
    auto wait_all = [&]() {
        for (;;) {
            if (!has_a)
                has_a = peek(a.agg, a.agg_status, (u64)g * 32u + lane,
                             va) >= TILE_AGG;
            if (!has_ga)
                has_ga = peek(a.agg, a.agg_status, (u64)gi * 32u + 31u,
                              vga) >= GROUP_AGG;
            if (!has_gp)
                has_gp = peek(a.incl, a.incl_status,
                              ((u64)g - 33u) * 32u + 31u, vgp) >= GROUP_INCL;
            if (!has_gq)
                has_gq = peek(a.incl, a.incl_status,
                              ((u64)g - 32u) * 32u + 31u, vgq) >= GROUP_INCL;
            if (__all_sync(PARSUM_K_FULL_MASK,
                           has_a && has_ga && has_gp && has_gq))
                return;
            __nanosleep(32);
        }
    };
    wait_all();
    T local = warp_reduce((u32)lane < pos ? va : pad, op); /* A(32g..c-1) */
    if (last) {
        const T ga = shfl_idx(op(local, agg), 0);
        if (lane == 0)
            publish(a.agg, a.agg_status, c, GROUP_AGG, ga);
        has_ga = gi < 0;
        has_gp = !(lane == 0 && g >= 33u);
        has_gq = !(lane == 1 && g >= 32u);
        wait_all();
        /* GP(g): lane i stands for GA(g - 31 + i), lane 31 for GA(g). */
        T w = shfl_down(vga, 1);
        T gfold = warp_reduce(lane == 31 ? ga : w, op);
        T gpq = shfl_idx(vgq, 1);
        if (lane == 0)
            publish(a.incl, a.incl_status, c, GROUP_INCL,
                    g >= 32u ? op(gpq, gfold) : gfold);
    }
    if (g == 0)
        return local;
    T gp = warp_reduce(vga, op); /* GA(g-32 .. g-1), pads before group 0 */
    if (g >= 33u)
        gp = op(vgp, gp); /* lane 0 */
    return pos > 0 ? op(gp, local) : gp;
}

/* Decoupled look-back as Merrill & Garland describe it (warp 0 of tile c;
 * returns X(c) in lane 0, meaningful for c > 0): publish A(c) (P(0) for
 * tile 0), then fold the predecessors 32 at a time, newest window first,
 * until a window holds a published inclusive prefix P(k); the fold starts
 * at the newest such k. The descriptor of tile c goes from A(c) to P(c),
 * replaced in one access. How far back a tile looks depends on timing, so
 * the grouping of X(c) does too: used only for operators whose result
 * cannot depend on the grouping (kernels_inst.cuh), and for packed
 * descriptors only (an unpacked value could change under a reader). */
template <class T, class Op>
__device__ __forceinline__ T lookback_classic(const scan_args &a, u32 c,
                                              const T &agg, const T &pad,
                                              int lane, const Op &op)
{
    static_assert(desc_packed(sizeof(T)), "classic look-back: packed only");
    if (lane == 0)
        publish(a.agg, a.agg_status, c, c == 0 ? GROUP_INCL : TILE_AGG, agg);
    if (c == 0)
        return agg;
    T x = pad;
    long long top = (long long)c; /* window: tiles top-32 .. top-1 */
    for (;;) {
        const long long t = top - 32 + lane;
        T v = pad;
        u32 st = GROUP_INCL; /* before tile 0: an identity, "inclusive" */
        bool have = t < 0;
        for (;;) {
            if (!have) {
                st = peek(a.agg, a.agg_status, (u64)t, v);
                have = st != TILE_NONE;
            }
            if (__all_sync(PARSUM_K_FULL_MASK, have))
                break;
            __nanosleep(32);
        }
        const u32 incl = __ballot_sync(PARSUM_K_FULL_MASK, st == GROUP_INCL);
        const int hi = incl ? 31 - __clz((int)incl) : -1;
        T w = warp_reduce(lane >= hi ? v : pad, op);
        x = op(w, x);
        if (incl)
            break;
        top -= 32;
    }
    if (lane == 0)
        publish(a.agg, a.agg_status, c, GROUP_INCL, op(x, agg));
    return x;
}

/*
 * One block scans one tile. Tiles are numbered c = 0, 1, ... in scan order
 * (handed out by an atomic counter, so a tile only ever waits for tiles
 * that are already running); tile c covers memory tile j = c (forward) or
 * j = num_tiles - 1 - c (reverse), i.e. elements [j * TILE, (j+1) * TILE),
 * the last memory tile being partial. Inside a tile, warp w holds a
 * contiguous warp chunk of R rows; in row r lane l holds one vector of V
 * consecutive elements, so each row of a warp moves 32 * 16 bytes with one
 * fully coalesced 16-byte access per lane. The scan order inside the tile
 * is (warp, row, lane, element) ascending; a reverse scan maps it onto
 * memory backwards, so all the combining code below is direction-free.
 *
 * Inclusive: out = in[first] (+) ... (+) in[i], the first element copied,
 * never combined with anything; exclusive: the inclusive scan shifted by
 * one, with id (the operator's identity) in the first position.
 *
 * pad fills positions that hold no element (the partial tile, look-back
 * slots before tile 0). It must be an identity bit for bit: pad (+) x ==
 * x (+) pad == x for every x (for a float sum that is -0.0, not +0.0; see
 * builtin_launch in launch.cu). Padding only ever precedes the first
 * element in scan order, or follows every element that is stored.
 */
template <class T, class Op, bool REV, int LOOKBACK>
__global__ void __launch_bounds__(policy_for(sizeof(T)).block)
    scan_kernel(scan_args a, T id, T pad)
{
    constexpr policy P = policy_for(sizeof(T));
    constexpr int BLOCK = P.block;
    constexpr int NWARP = BLOCK / 32;
    constexpr int R = P.rows;
    constexpr int V = vec_elems(sizeof(T));
    constexpr u32 WARP_ITEMS = (u32)R * 32u * V;
    constexpr u32 TILE = (u32)NWARP * WARP_ITEMS;
    static_assert(BLOCK % 32 == 0, "bad block");

    const Op op{};
    __shared__ u32 s_tile;
    __shared__ alignas(16) unsigned char s_raw[(NWARP + 1) * sizeof(T)];
    T *s_wtot = reinterpret_cast<T *>(s_raw); /* per-warp totals */
    T *s_x = s_wtot + NWARP;                  /* the tile's prefix X(c) */

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const bool single = gridDim.x == 1;

    /* 1. Claim the next tile. */
    u32 c = 0;
    if (!single) {
        if (tid == 0)
            s_tile = atomicAdd(a.counter, 1u);
        __syncthreads();
        c = s_tile;
    }
    const u64 j = REV ? (u64)(a.num_tiles - 1u - c) : (u64)c;
    const u64 tile_base = j * TILE;
    const bool full = tile_base + TILE <= a.n;
    const u64 rem = a.n - tile_base; /* valid elements if partial */
    const T *in = static_cast<const T *>(a.in) + tile_base;
    T *out = static_cast<T *>(a.out) + tile_base;

    /* Memory offset (within the tile) of the first element of this
     * thread's vector in scan row r. */
    auto offset = [&](int r) -> u32 {
        u32 fwd = (u32)warp * WARP_ITEMS + (u32)r * 32u * V + (u32)lane * V;
        return REV ? TILE - V - fwd : fwd;
    };

    /* 2. Load (all loads issued before any use). */
    T x[R][V];
    if (full) {
        if (vec_capable(sizeof(T)) && (a.options & OPT_VEC)) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                load_vec<T, V, REV>(x[r], in + offset(r));
        } else {
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int v = 0; v < V; ++v)
                    x[r][v] = in[offset(r) + (REV ? V - 1 - v : v)];
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                u32 m = offset(r) + (REV ? V - 1 - v : v);
                x[r][v] = m < rem ? in[m] : pad;
            }
    }

    /* 3. Thread, warp and block level: lane exclusive prefixes le[r], row
     * prefixes rp[r] within the warp, the warp total. */
    T le[R], tot[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        T s = x[r][0];
#pragma unroll
        for (int v = 1; v < V; ++v)
            s = op(s, x[r][v]);
        tot[r] = s;
    }
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            T o = shfl_up(tot[r], d);
            if (lane >= d)
                tot[r] = op(o, tot[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        le[r] = shfl_up(tot[r], 1);      /* valid for lane > 0 */
        tot[r] = shfl_idx(tot[r], 31);   /* row total */
    }
    T rp[R]; /* rp[r]: total of rows 0..r-1, valid for r > 0 */
    rp[0] = pad;
    T wtot = tot[0];
#pragma unroll
    for (int r = 1; r < R; ++r) {
        rp[r] = wtot;
        wtot = op(wtot, tot[r]);
    }
    if (lane == 0)
        s_wtot[warp] = wtot;
    __syncthreads();

    /* Warp prefix wp (warps before this one) and, in warp 0, the tile
     * aggregate. Each is one sequential fold of the warp totals. */
    T wp = pad, agg = pad;
    if (warp == 0) {
        agg = s_wtot[0];
        for (int i = 1; i < NWARP; ++i)
            agg = op(agg, s_wtot[i]);
    } else {
        wp = s_wtot[0];
        for (int i = 1; i < warp; ++i)
            wp = op(wp, s_wtot[i]);
    }

    /* 4. Publish A(c), look back for X(c). LOOKBACK is 1 for the
     * deterministic two-level look-back, 2 for the classic one (see the
     * functions above); 0 skips it, which gives wrong results and exists
     * only to time the tile code alone (bench/gpu_tune.sh). */
    if (!single && warp == 0 && LOOKBACK != 0) {
        T xc = pad;
        if constexpr (LOOKBACK == 2)
            xc = lookback_classic(a, c, agg, pad, lane, op);
        else
            xc = lookback_groups(a, c, agg, pad, lane, op);
        if (lane == 0 && c > 0)
            *s_x = xc;
    }
    if (!single && LOOKBACK == 0 && tid == 0)
        *s_x = pad;
    if (!single)
        __syncthreads();

    /* 5. Each vector's prefix: X(c) (+) wp (+) rp[r] (+) le[r], parts that
     * cover no element left out; then the serial scan of the vector. */
    bool has = c > 0;
    T p = has ? *s_x : pad;
    if (warp > 0) {
        p = has ? op(p, wp) : wp;
        has = true;
    }
    const bool excl = (a.options & OPT_EXCLUSIVE) != 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        T pr = p;
        bool hr = has;
        if (r > 0) {
            pr = hr ? op(pr, rp[r]) : rp[r];
            hr = true;
        }
        if (lane > 0) {
            pr = hr ? op(pr, le[r]) : le[r];
            hr = true;
        }
        T acc = hr ? op(pr, x[r][0]) : x[r][0];
        if (excl) { /* the inclusive scan shifted by one */
            T prev = acc;
            x[r][0] = hr ? pr : id;
#pragma unroll
            for (int v = 1; v < V; ++v) {
                T cur = op(prev, x[r][v]);
                x[r][v] = prev;
                prev = cur;
            }
        } else {
            x[r][0] = acc;
#pragma unroll
            for (int v = 1; v < V; ++v) {
                acc = op(acc, x[r][v]);
                x[r][v] = acc;
            }
        }
    }

    /* 6. Store. */
    if (full) {
        if (vec_capable(sizeof(T)) && (a.options & OPT_VEC)) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                store_vec<T, V, REV>(out + offset(r), x[r]);
        } else {
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int v = 0; v < V; ++v)
                    out[offset(r) + (REV ? V - 1 - v : v)] = x[r][v];
        }
    } else {
        /* In a reverse scan the partial tile comes first and its padding
         * precedes in[n-1], whose exclusive output is the identity (the
         * code above gave it the fold of the padding). */
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                u32 m = offset(r) + (REV ? V - 1 - v : v);
                if (m < rem)
                    out[m] = (REV && excl && m == rem - 1) ? id : x[r][v];
            }
    }
}

/* ------------------------------------------------------------------------ */
/* Reduce                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * The input is read in warp tiles of WT = 32 * U * V elements (row u, lane
 * l holds the vector at (u * 32 + l) * V: coalesced 16-byte loads). The
 * grid has G blocks of NWARP warps, GW = G * NWARP warps in all, and warp
 * g of the grid folds a fixed set of tiles:
 *
 *  ORDERED (custom operators, which may be non-commutative): the
 *    contiguous tiles [g * per, (g + 1) * per), in order, each folded in
 *    sequence order (vector, then an ordered warp reduction per row), so
 *    every fold keeps sequence order and the result is exactly
 *    in[0] (+) ... (+) in[n-1] for any associative operator.
 *  not ORDERED (the built-in operators, commutative in value): tiles g,
 *    g + GW, g + 2 GW, ... - all warps sweep the array together, as a
 *    streaming kernel should - and each lane folds its own elements in a
 *    fixed order; one warp reduction at the end.
 *
 * Then block b folds its warps' results in warp order into partial b, and
 * the last block to finish folds the G partials in order and writes the
 * result. Every grouping is a fixed function of n and G (the device's SM
 * count times the kernel's resident blocks per SM), never of timing:
 * results are bit-identical from run to run. pad (an identity bit for bit,
 * see scan_kernel) starts every fold and stands for the elements past n;
 * n > 0.
 */
template <class T, class Op>
__device__ __forceinline__ T block_reduce(T v, int lane, int warp,
                                          unsigned char *s_raw, const Op &op)
{
    constexpr int NWARP = policy_for(sizeof(T)).rblock / 32;
    T *s = reinterpret_cast<T *>(s_raw);
    v = warp_reduce(v, op);
    if (lane == 0)
        s[warp] = v;
    __syncthreads();
    T r = s[0];
    for (int i = 1; i < NWARP; ++i)
        r = op(r, s[i]);
    return r; /* the same in every thread */
}

/* Loads warp tile `base` (elements [base, base + WT)) into x; elements at
 * or past end become pad. */
template <class T, int U, int V>
__device__ __forceinline__ void load_warp_tile(T (&x)[U][V], const T *in,
                                               u64 base, u64 end, int lane,
                                               bool vec, const T &pad)
{
    constexpr u32 WT = 32u * U * V;
    if (base + WT <= end) {
        if (vec) {
#pragma unroll
            for (int u = 0; u < U; ++u)
                load_vec<T, V, false>(x[u],
                                      in + base + ((u32)u * 32u + lane) * V);
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int v = 0; v < V; ++v)
                    x[u][v] = in[base + ((u32)u * 32u + lane) * V + v];
        }
    } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                u64 i = base + ((u32)u * 32u + lane) * V + v;
                x[u][v] = i < end ? in[i] : pad;
            }
    }
}

template <class T, class Op, bool ORDERED>
__global__ void __launch_bounds__(policy_for(sizeof(T)).rblock)
    reduce_kernel(reduce_args a, T pad)
{
    constexpr policy P = policy_for(sizeof(T));
    constexpr int NWARP = P.rblock / 32;
    constexpr int U = P.rrows;
    constexpr int V = vec_elems(sizeof(T));
    constexpr u32 WT = 32u * U * V;

    const Op op{};
    __shared__ alignas(16) unsigned char s_raw[NWARP * sizeof(T)];
    __shared__ u32 s_last;

    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const T *in = static_cast<const T *>(a.in);
    const bool vec = vec_capable(sizeof(T)) && (a.options & OPT_VEC);
    const u64 tiles = (a.n + WT - 1) / WT;
    const u64 g = (u64)blockIdx.x * NWARP + warp;

    T acc = pad;
    if (ORDERED) {
        u64 t = g * a.tiles_per_warp;
        u64 t_end = t + a.tiles_per_warp;
        if (t_end > tiles)
            t_end = tiles;
        for (; t < t_end; ++t) {
            T x[U][V];
            load_warp_tile<T, U, V>(x, in, t * WT, a.n, lane, vec, pad);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                T s = x[u][0];
#pragma unroll
                for (int v = 1; v < V; ++v)
                    s = op(s, x[u][v]);
                acc = op(acc, warp_reduce(s, op)); /* meaningful in lane 0 */
            }
        }
    } else {
        const u64 gw = (u64)a.num_blocks * NWARP;
        for (u64 t = g; t < tiles; t += gw) {
            T x[U][V];
            load_warp_tile<T, U, V>(x, in, t * WT, a.n, lane, vec, pad);
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int v = 0; v < V; ++v)
                    acc = op(acc, x[u][v]);
        }
        acc = warp_reduce(acc, op); /* lane 0 */
    }

    /* The block's warps in order (lane 0 holds its warp's result). */
    T *s = reinterpret_cast<T *>(s_raw);
    if (lane == 0)
        s[warp] = acc;
    __syncthreads();
    if (tid == 0) {
        T r = s[0];
        for (int i = 1; i < NWARP; ++i)
            r = op(r, s[i]);
        if (a.num_blocks == 1) {
            memcpy(a.result, &r, sizeof(T));
        } else {
            store_slot(a.partials, blockIdx.x, r);
            fence_gpu();
            s_last = atomicAdd(a.counter, 1u) == a.num_blocks - 1u;
        }
    }
    if (a.num_blocks == 1)
        return;
    __syncthreads();
    if (!s_last)
        return;

    /* The last block: thread t folds the contiguous run of partials
     * [t * per, (t + 1) * per), then the block folds the threads in order. */
    fence_gpu();
    const u32 per = (a.num_blocks + P.rblock - 1) / P.rblock;
    T v = pad;
    for (u32 i = 0; i < per; ++i) {
        u32 k = (u32)tid * per + i;
        if (k < a.num_blocks)
            v = op(v, load_slot<T>(a.partials, k));
    }
    __syncthreads(); /* s_raw is reused */
    T r = block_reduce(v, lane, warp, s_raw, op);
    if (tid == 0) {
        memcpy(a.result, &r, sizeof(T));
        *a.counter = 0u; /* ready for the next launch on this buffer */
    }
}

#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_SCAN_KERNELS_CUH */
