/*
 * bench_cuda_util.cuh - what the CUDA benchmarks (bench_cuda.cu,
 * bench_cuda_seg.cu, bench_cuda_select.cu, ...) share: error checks that
 * throw bench_error, random device inputs, an order-independent checksum,
 * element comparison, a streaming read kernel (the bandwidth bound of
 * reductions) and the L2 flush between timed calls.
 */
#ifndef PARSUM_BENCH_CUDA_UTIL_CUH
#define PARSUM_BENCH_CUDA_UTIL_CUH

#include "parsum.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

namespace pbc {

struct bench_error {};

inline void cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "parsum bench: %s failed: %s (%s) at %s:%d\n",
                call, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
        throw bench_error();
    }
}
#define BC(call) pbc::cuda_check((call), #call, __FILE__, __LINE__)

inline void parsum_check(parsum_context *ctx, parsum_status s, const char *call)
{
    if (s != PARSUM_OK) {
        fprintf(stderr, "parsum bench: %s: %s: %s\n", call,
                parsum_status_name(s), parsum_last_error(ctx));
        throw bench_error();
    }
}
#define PS(ctx, call) pbc::parsum_check((ctx), (call), #call)

/* ---- cache state between timed calls ----------------------------------- */

/* Writes a buffer of twice the L2 size before a timed call, so that no
 * variant starts with part of its input in the cache. Without it the
 * variant timed second in a round finds the tail of the input the first
 * one just read (a few % of a 1 GiB input on a 50-60 MB L2), which
 * favours whichever runs second (nvbench flushes the same way). Inputs
 * that fit in L2 are meant to be timed warm: active() says false there. */
struct l2_flush {
    void *buf = nullptr;
    size_t bytes = 0, l2 = 0;
    l2_flush()
    {
        int dev = 0, size = 0;
        BC(cudaGetDevice(&dev));
        BC(cudaDeviceGetAttribute(&size, cudaDevAttrL2CacheSize, dev));
        l2 = (size_t)size;
        bytes = 2 * l2;
        BC(cudaMalloc(&buf, bytes > 0 ? bytes : 1));
    }
    ~l2_flush() { cudaFree(buf); }
    l2_flush(const l2_flush &) = delete;
    l2_flush &operator=(const l2_flush &) = delete;
    /* True when data_bytes (what the timed calls touch) exceed L2. */
    bool active(size_t data_bytes) const { return data_bytes > l2; }
    void operator()(bool on, cudaStream_t s = 0) const
    {
        if (on)
            BC(cudaMemsetAsync(buf, 0, bytes, s));
    }
};

/* ---- device helpers ---------------------------------------------------- */

__host__ __device__ inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

enum fill_kind { FILL_BITS = 0, FILL_NEAR_ONE = 1, FILL_SIGNED = 2 };

template <class T>
__device__ inline T make_value(uint64_t h, int kind)
{
    if constexpr (std::is_floating_point<T>::value) {
        double u = (double)(h >> 11) * 0x1p-53; /* [0, 1) */
        if (kind == FILL_NEAR_ONE)
            return (T)(1.0 + (u - 0.5) * 0x1p-10);
        if (kind == FILL_SIGNED)
            return (T)(2.0 * u - 1.0);
        return (T)u;
    } else {
        (void)kind;
        return (T)h;
    }
}

template <class T>
__global__ void fill_kernel(T *p, size_t n, uint64_t seed, int kind)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += stride)
        p[i] = make_value<T>(mix64(seed ^ mix64(i)), kind);
}

/* An order-independent 64-bit checksum of the bits of n elements. */
template <class T>
__global__ void hash_kernel(const T *p, size_t n, unsigned long long *out)
{
    unsigned long long acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        uint64_t bits = 0;
        T v = p[i];
        memcpy(&bits, &v, sizeof(T));
        acc += mix64(bits ^ mix64(i + 1));
    }
    for (int m = 16; m > 0; m >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, m);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, acc);
}

enum cmp_mode { CMP_BITS = 0, CMP_VALUE = 1, CMP_REL = 2 };

/* Counts the elements where a and b disagree; first_bad gets the lowest
 * such index. */
template <class T>
__global__ void compare_kernel(const T *a, const T *b, size_t n, int mode,
                               double tol, unsigned long long *bad,
                               unsigned long long *first_bad)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        T x = a[i], y = b[i];
        bool ok;
        if (mode == CMP_BITS) {
            uint64_t bx = 0, by = 0;
            memcpy(&bx, &x, sizeof(T));
            memcpy(&by, &y, sizeof(T));
            ok = bx == by;
        } else if (mode == CMP_VALUE) {
            ok = x == y || (x != x && y != y);
        } else {
            double dx = (double)x, dy = (double)y;
            double scale = fmax(fabs(dx), fabs(dy));
            ok = dx == dy || fabs(dx - dy) <= tol * scale ||
                 (dx != dx && dy != dy);
        }
        if (!ok) {
            atomicAdd(bad, 1ull);
            atomicMin(first_bad, (unsigned long long)i);
        }
    }
}

/* Streams bytes/16 16-byte words; the result is kept only so that the
 * loads cannot be removed. */
static __global__ void read_kernel(const uint4 *p, size_t nvec, unsigned *sink)
{
    unsigned acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride],
              d = p[i + 3 * stride];
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^
               c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < nvec; i += stride) {
        uint4 a = p[i];
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

inline double median(std::vector<double> v)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/* Median over reps timed runs of f (after two untimed ones), in ms, by
 * events on the legacy default stream; before() is queued ahead of each
 * start event. */
template <class B, class F>
double median_ms_after(int reps, B before, F f)
{
    cudaEvent_t a, b;
    BC(cudaEventCreate(&a));
    BC(cudaEventCreate(&b));
    f();
    f();
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        before();
        BC(cudaEventRecord(a));
        f();
        BC(cudaEventRecord(b));
        BC(cudaEventSynchronize(b));
        float ms;
        BC(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    BC(cudaEventDestroy(a));
    BC(cudaEventDestroy(b));
    return median(t);
}

template <class F>
double median_ms(int reps, F f)
{
    return median_ms_after(reps, [] {}, f);
}

/* Holds the device for ns nanoseconds (one thread). */
static __global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}

/* Median device time of f, as median_ms, with the L2 flushed before each
 * run when cold (see l2_flush), then a 50 us spin queued before the start
 * event, so that the host's part of f (argument checks, scratch,
 * launches) is done before the device reaches the start event and the
 * time is the device's alone (as nvbench measures). median_ms leaves that
 * host time in: it matters for calls that take tens of microseconds. */
template <class F>
double median_device_ms(int reps, bool cold, F f)
{
    const l2_flush flush;
    return median_ms_after(
        reps,
        [&] {
            flush(cold);
            spin_kernel<<<1, 1>>>(50000ull);
            BC(cudaGetLastError());
        },
        f);
}

/* What every CUDA benchmark opens: a CUDA context, its device made
 * current and described, and small device buffers for statistics (4
 * counters) and a sink. Returns false (message on stderr) on failure,
 * having released what it took. */
inline bool open_device(parsum_context **ctx, cudaDeviceProp *prop,
                        unsigned long long **d_stats, unsigned **d_sink)
{
    *ctx = NULL;
    *d_stats = NULL;
    *d_sink = NULL;
    parsum_status st = parsum_context_create(ctx, PARSUM_BACKEND_CUDA);
    if (st != PARSUM_OK) {
        fprintf(stderr, "parsum bench: cannot create a CUDA context: %s (%s)\n",
                parsum_status_name(st), parsum_status_string(st));
        return false;
    }
    try {
        int dev = 0;
        PS(*ctx, parsum_context_cuda_device(*ctx, &dev));
        BC(cudaSetDevice(dev));
        BC(cudaGetDeviceProperties(prop, dev));
        BC(cudaMalloc(d_stats, 4 * sizeof(unsigned long long)));
        BC(cudaMalloc(d_sink, sizeof(unsigned)));
    } catch (const bench_error &) {
        cudaFree(*d_stats);
        parsum_context_destroy(*ctx);
        *ctx = NULL;
        *d_stats = NULL;
        return false;
    }
    return true;
}

inline void close_device(parsum_context *ctx, unsigned long long *d_stats,
                         unsigned *d_sink)
{
    cudaFree(d_stats);
    cudaFree(d_sink);
    parsum_context_destroy(ctx);
}

inline double gbs(double bytes, double s)
{
    return s > 0.0 ? bytes / s * 1e-9 : 0.0;
}

} /* namespace pbc */

#endif
