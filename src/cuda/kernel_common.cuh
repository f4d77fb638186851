/*
 * kernel_common.cuh - what the GPU kernels of parsum share: the tuning
 * table, the kernel argument blocks (shared with host code), and small
 * device helpers (shuffles of any type, strong loads and stores, vector
 * loads, the ordered warp reduction).
 *
 * The kernel headers (kernel_common, lookback, scan_kernels,
 * reduce_kernels .cuh) are compiled twice: by nvcc for the built-in dtypes
 * (included by src/cuda/kernels_inst.cuh) and, as text, by NVRTC for a
 * custom operator (embedded into the library in this order by
 * src/cuda/embed.cmake and followed by the user's type and combine body,
 * see src/cuda/custom.cu). They therefore include nothing but each other
 * (and that only outside NVRTC), use no standard-library name and define
 * everything inside namespace parsum_k.
 *
 * Requirements on T: trivially copyable and default-constructible. Op must
 * provide `T operator()(const T &a, const T &b) const` computing a (+) b.
 */
#ifndef PARSUM_KERNEL_COMMON_CUH
#define PARSUM_KERNEL_COMMON_CUH

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
#define PARSUM_K_ROWS8 12
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

/* Rows per thread of a scan tile; segmented scans carry a (value, flag)
 * pair per element in registers, twice the state, so they take half the
 * rows (and keep the occupancy of the plain scan). */
__host__ __device__ constexpr int scan_rows(u64 size, bool seg)
{
    return seg ? (policy_for(size).rows + 1) / 2 : policy_for(size).rows;
}

/* Rows of scan_pipe_kernel, which holds two tiles per thread (two
 * blocks of 256 threads per multiprocessor in 128 registers). Sizes other
 * than 4 and 8 bytes keep the rows of scan_kernel. */
#ifndef PARSUM_K_PIPE_ROWS4
#define PARSUM_K_PIPE_ROWS4 8
#endif
#ifndef PARSUM_K_PIPE_ROWS8
#define PARSUM_K_PIPE_ROWS8 6
#endif
__host__ __device__ constexpr int pipe_rows(u64 size)
{
    return size <= 2   ? scan_rows(size, false)
           : size <= 4 ? PARSUM_K_PIPE_ROWS4
           : size <= 8 ? PARSUM_K_PIPE_ROWS8
                       : scan_rows(size, false);
}

/* Elements of a tile of `rows` 16-byte vectors a thread of elements of
 * `size` bytes. */
__host__ __device__ constexpr u64 rows_tile_elems(u64 size, int rows)
{
    return (u64)policy_for(size).block * rows * vec_elems(size);
}

__host__ __device__ constexpr u64 pipe_tile_elems(u64 size)
{
    return rows_tile_elems(size, pipe_rows(size));
}

__host__ __device__ constexpr u64 scan_tile_elems(u64 size, bool seg = false)
{
    return rows_tile_elems(size, scan_rows(size, seg));
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

/* The scan publishes per-tile values in descriptors. Values of up to 8
 * bytes are packed with their status word into one 8- or 16-byte
 * descriptor {status, value} that is written and read with a single
 * access, so a reader that sees the status sees the value: no fence on
 * either side (CUB's ScanTileState does the same); so are the segmented
 * pairs of 8-byte values ({status, flag, value}: pair_value == 8). Larger
 * values take a value slot plus a separate status word, with GPU-scope
 * fences between. */
__host__ __device__ constexpr bool desc_packed(u64 size, u64 pair_value = 0)
{
    return size <= 8 || (size == 16 && pair_value == 8);
}

__host__ __device__ constexpr u64 desc_bytes(u64 size, u64 pair_value = 0)
{
    return size <= 4 ? 8 : desc_packed(size, pair_value) ? 16 : slot_bytes(size);
}

/* A segmented scan's element: the value and its flag (or head count). */
template <class T>
struct seg_pair {
    T v;
    u32 k;
};

/* Whether a scanned type has packed descriptors (see desc_packed). */
template <class T>
struct packed_desc {
    static constexpr bool value = sizeof(T) <= 8;
};
template <class X>
struct packed_desc<seg_pair<X>> {
    static constexpr bool value =
        sizeof(seg_pair<X>) <= 8 ||
        (sizeof(seg_pair<X>) == 16 && sizeof(X) == 8);
};

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
    u32 *counter;  /* next tile to hand out (minus tile_base) */
    u32 *agg;      /* per-tile aggregate descriptors, desc_bytes each */
    u32 *incl;     /* per-tile inclusive-prefix descriptors */
    u32 *agg_status;  /* unpacked descriptors only: status words of agg */
    u32 *incl_status; /* and of incl; (packed: unused) */
    /* Statuses (packed descriptors or status words) are zeroed before the
     * launch, the counter too (tag = tile_base = 0); or, for the plain
     * scan, they carry the call's tag (bits 2-31 of every status word
     * this call writes; a word with another tag reads as TILE_NONE) and
     * the counter, never reset, starts at tile_base
     * (parsum__cuda_tagged_status). */
    u32 tag;
    u32 tile_base;
    /* Segmented scans (policies seg_scan_flags, seg_reduce_flags below). */
    const u32 *flags; /* packed head flags; element i is bit flag_off + i */
    u64 flag_off;     /* < 32 */
    /* Reduce: the total of the run of rank k goes to out[k], or to
     * out[map[k]] when map is given and *map_on is not 0 (segments with
     * empty ones among them); keys_out[k] = keys[last element of the run]
     * when keys is given (key_size bytes each); *total = the run count. */
    const u64 *map;
    const u32 *map_on;
    const void *keys;
    void *keys_out;
    u32 key_size;
    u64 *total;
    u64 out_count; /* reduce: runs of rank >= out_count are dropped (only
                      invalid offsets make any); 0: no limit */
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

/* One step of a 32-bit inclusive warp scan: v += v of lane - d where that
 * lane exists. The shuffle's predicate says whether it does, so the step
 * is two instructions (shuffle, predicated add) instead of three. */
__device__ __forceinline__ void shfl_up_add(u32 &v, int d)
{
    asm("{ .reg .u32 t; .reg .pred p;\n"
        "  shfl.sync.up.b32 t|p, %0, %1, 0, 0xffffffff;\n"
        "  @p add.u32 %0, %0, t; }"
        : "+r"(v)
        : "r"(d));
}

/* Inclusive sum of a 32-bit value over the warp's lanes (lower lanes
 * first), in shfl_up_add steps. */
__device__ __forceinline__ u32 warp_incl_sum(u32 v)
{
#pragma unroll
    for (int d = 1; d < 32; d *= 2)
        shfl_up_add(v, d);
    return v;
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

/* The same for a 64-bit word (a value packed with its status). */
__device__ __forceinline__ unsigned long long ld_status(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
    return v;
}

__device__ __forceinline__ void st_status(unsigned long long *p,
                                          unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v)
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

/* Asynchronous copies of BYTES (4, 8 or 16) bytes from global to shared
 * memory (cp.async, sm_80 and later): no register holds the data while it
 * travels, so a load can be in flight across other work. With n, only the
 * first n bytes are read and the rest of the destination is zeroed (n = 0
 * reads nothing). Both addresses BYTES-aligned. Before sm_80: plain
 * copies, and the waits do nothing. */
template <int BYTES>
__device__ __forceinline__ void cp_async(void *dst, const void *src)
{
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async size");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(
                     (u32)__cvta_generic_to_shared(dst)),
                 "l"(src), "n"(BYTES)
                 : "memory");
#else
    memcpy(dst, src, BYTES);
#endif
}

template <int BYTES>
__device__ __forceinline__ void cp_async(void *dst, const void *src, int n)
{
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async size");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(
                     (u32)__cvta_generic_to_shared(dst)),
                 "l"(src), "n"(BYTES), "r"(n)
                 : "memory");
#else
    unsigned char *d = static_cast<unsigned char *>(dst);
    const unsigned char *s = static_cast<const unsigned char *>(src);
    for (int i = 0; i < BYTES; ++i)
        d[i] = i < n ? s[i] : 0;
#endif
}

__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/* Waits until at most N of this thread's committed groups are in flight. */
template <int N>
__device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

/* Waits for all of this thread's copies, committed or not. */
__device__ __forceinline__ void cp_async_wait_all()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/* Asks L2 for the line holding p: nothing waits for it and no register
 * holds it, so a later load of data a walk will need soon misses only to
 * L2. */
__device__ __forceinline__ void prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
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


#endif /* __CUDACC__ || __CUDACC_RTC__ */

} /* namespace parsum_k */

#endif /* PARSUM_KERNEL_COMMON_CUH */
