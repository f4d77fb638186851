/*
 * sort_custom_kernels.cuh - the kernels of the comparison-sort slots
 * (internal.h, parsum__qsort_args) for any element type T and order Less.
 * The order exists only as the user's CUDA source, so these kernels are
 * never compiled by nvcc into the library: sort_custom.cu embeds this text
 * (embed.cmake) after the user's type and less function and compiles the
 * whole with NVRTC, once per comparator and context.
 *
 * Element loops are balanced by elements: a tile of blockDim.x active
 * indices finds the partitions it spans once (thread 0, binary search in
 * the offsets), and each thread then searches only among those, usually
 * one or two. Partitions are never empty.
 * Self-contained (no headers): NVRTC gets no standard library.
 */
#ifndef PARSUM_SORT_CUSTOM_KERNELS_CUH
#define PARSUM_SORT_CUSTOM_KERNELS_CUH

namespace parsum_qs {

typedef unsigned long long u64;

/* The slot's arguments as one kernel parameter (host and device agree on
 * this layout: pointers and 64-bit integers only). eq_to: where the
 * scatter writes equal elements (fin, or dst when fin is being read). */
struct args {
    const void *src;
    void *dst;
    void *fin;
    void *eq_to;
    const u64 *start;
    const u64 *act_off;
    const u64 *sample;
    const u64 *reuse;
    u64 nseg;
    u64 m;
    const void *prev_pivots;
    void *pivots;
    u64 *cnt;
    u64 *cnt_eq;
    u64 *totals;
    const u64 *parts;
    u64 nparts;
    const void *user;
};

/* The last s in [lo, hi) with off[s] <= j. */
__device__ __forceinline__ u64 seg_in(const u64 *off, u64 lo, u64 hi, u64 j)
{
    while (hi - lo > 1) {
        u64 mid = lo + (hi - lo) / 2;
        if (off[mid] <= j)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Calls body(j, s) for every active index j with its partition s, tile by
 * tile over the grid. Every thread of the block must call it. */
template <class Body>
__device__ __forceinline__ void for_active(const args &a, Body body)
{
    __shared__ u64 range[2];
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 t0 = (u64)blockIdx.x * blockDim.x; t0 < a.m; t0 += step) {
        __syncthreads(); /* the previous tile is done with range */
        if (threadIdx.x == 0) {
            u64 last = t0 + blockDim.x - 1 < a.m ? t0 + blockDim.x - 1
                                                 : a.m - 1;
            range[0] = seg_in(a.act_off, 0, a.nseg, t0);
            range[1] = seg_in(a.act_off, range[0], a.nseg, last) + 1;
        }
        __syncthreads();
        u64 j = t0 + threadIdx.x;
        if (j < a.m)
            body(j, seg_in(a.act_off, range[0], range[1], j));
    }
}

const u64 NO_REUSE = ~0ull;

template <class T, class Less>
__global__ void pivot_kernel(args a)
{
    const T *src = static_cast<const T *>(a.src);
    T *piv = static_cast<T *>(a.pivots);
    Less less;
    for (u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x; s < a.nseg;
         s += (u64)gridDim.x * blockDim.x) {
        if (a.reuse[s] != NO_REUSE) {
            piv[s] = static_cast<const T *>(a.prev_pivots)[a.reuse[s]];
            continue;
        }
        u64 x = a.sample[3 * s], y = a.sample[3 * s + 1],
            z = a.sample[3 * s + 2];
        if (less(src[y], src[x], a.user)) {
            u64 t = x;
            x = y;
            y = t;
        }
        if (less(src[z], src[y], a.user))
            y = less(src[z], src[x], a.user) ? x : z;
        piv[s] = src[y];
    }
}

template <class T, class Less>
__global__ void classify_kernel(args a)
{
    const T *src = static_cast<const T *>(a.src);
    Less less;
    for_active(a, [&](u64 j, u64 s) {
        const T x = src[a.start[s] + (j - a.act_off[s])];
        const T p = static_cast<const T *>(a.pivots)[s];
        const bool eq_split = a.reuse[s] != NO_REUSE;
        bool lt = !eq_split && less(x, p, a.user);
        bool eq = eq_split && !less(p, x, a.user);
        if (a.cnt_eq != nullptr) {
            a.cnt[j] = lt;
            a.cnt_eq[j] = eq;
        } else {
            a.cnt[j] = lt ? (1ull << 32) : (u64)eq;
        }
    });
}

/* Inclusive less and equal counts of active index j. */
__device__ __forceinline__ void counts_at(const args &a, u64 j, u64 &lt,
                                          u64 &eq)
{
    if (a.cnt_eq != nullptr) {
        lt = a.cnt[j];
        eq = a.cnt_eq[j];
    } else {
        lt = a.cnt[j] >> 32;
        eq = a.cnt[j] & 0xffffffffull;
    }
}

/* Where active index j of partition s goes: its position, and whether it
 * is an equal element (0 less, 1 equal, 2 greater in *cls). */
__device__ __forceinline__ u64 destination(const args &a, u64 j, u64 s,
                                           int *cls)
{
    u64 first = a.act_off[s], tl, te, lt, eq, plt = 0, peq = 0;
    counts_at(a, a.act_off[s + 1] - 1, tl, te);
    counts_at(a, j, lt, eq);
    if (j > first)
        counts_at(a, j - 1, plt, peq);
    u64 base = a.start[s];
    if (lt != plt) {
        *cls = 0;
        return base + lt - 1;
    }
    if (eq != peq) {
        *cls = 1;
        return base + tl + eq - 1;
    }
    *cls = 2;
    return base + tl + te + (j - first - lt - eq);
}

template <class T>
__global__ void scatter_kernel(args a)
{
    const T *src = static_cast<const T *>(a.src);
    T *dst = static_cast<T *>(a.dst);
    T *eq_to = static_cast<T *>(a.eq_to);
    for_active(a, [&](u64 j, u64 s) {
        int cls;
        u64 pos = destination(a, j, s, &cls);
        (cls == 1 ? eq_to : dst)[pos] = src[a.start[s] + (j - a.act_off[s])];
        if (j == a.act_off[s + 1] - 1) {
            u64 tl, te;
            counts_at(a, j, tl, te);
            a.totals[2 * s] = tl;
            a.totals[2 * s + 1] = te;
        }
    });
}

/* After scatter_kernel with eq_to == dst: the equal elements on to fin. */
template <class T>
__global__ void equal_kernel(args a)
{
    const T *dst = static_cast<const T *>(a.dst);
    T *fin = static_cast<T *>(a.fin);
    for_active(a, [&](u64 j, u64 s) {
        int cls;
        u64 pos = destination(a, j, s, &cls);
        if (cls == 1)
            fin[pos] = dst[pos];
    });
}

/* One thread per part: binary insertion sort (stable: each element goes
 * after the equal ones already placed), src part -> dst part, in place
 * when they are the same. */
template <class T, class Less>
__global__ void finish_kernel(args a)
{
    Less less;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < a.nparts;
         k += (u64)gridDim.x * blockDim.x) {
        u64 b = a.parts[2 * k], len = a.parts[2 * k + 1];
        const T *from = static_cast<const T *>(a.src) + b;
        T *to = static_cast<T *>(a.dst) + b;
        for (u64 i = 0; i < len; i++) {
            const T x = from[i];
            u64 lo = 0, hi = i;
            while (lo < hi) {
                u64 mid = lo + (hi - lo) / 2;
                if (less(x, to[mid], a.user))
                    hi = mid;
                else
                    lo = mid + 1;
            }
            for (u64 q = i; q > lo; q--)
                to[q] = to[q - 1];
            to[lo] = x;
        }
    }
}

} /* namespace parsum_qs */

#endif
