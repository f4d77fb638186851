/*
 * bench_cuda_hist.cu - `parsum bench histogram --backend cuda`: parsum's
 * histogram strategies against CUB's DeviceHistogram on the same device
 * samples in the same run, and against the time to read the samples once.
 *
 * Cases (--n samples in all, default 2^28):
 *   u8, 256 bins over [0, 256)              vs cub HistogramEven
 *   u8 RGBA, 4 x 256 bins                   vs cub MultiHistogramEven<4, 4>
 *   u32, 1024 bins over [0, 2^32), uniform  vs cub HistogramEven
 *   u32, 1024 bins, every sample in bin 12 (skewed)
 *   u32, 65536 and 2^24 bins, uniform       (CUB as far as it runs)
 *   f32, 1024 bins over [0, 1)
 * Each parsum strategy is timed (SORT_REDUCE_BY_KEY only up to 2^26
 * samples: its one split per bit is for teaching, not speed). Counts are
 * compared with CUB's (or AUTO's where CUB did not run) before timing.
 * GB/s counts the sample bytes read; "read %" is that over a plain read of
 * the same bytes. Median of the runs.
 */
#include "bench_args.h"
#include "bench_cuda.h"
#include "bench_cuda_util.cuh"

#include <cub/cub.cuh>

#include <cstdlib>
#include <functional>
#include <string>

namespace {

using namespace pbc;

struct hcase {
    const char *name;
    parsum_dtype dtype;
    int channels;
    size_t nbins;
    int skew; /* all samples equal */
    int cub;  /* run CUB (0: it fails, see below) */
};

template <class T>
__global__ void hist_fill_kernel(T *p, size_t n, uint64_t seed, int skew)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        uint64_t h = mix64(seed ^ mix64(i));
        if constexpr (std::is_floating_point<T>::value)
            p[i] = (T)((double)(h >> 11) * 0x1p-53);
        else
            p[i] = (T)(skew ? (uint64_t)12 << 22 : h);
    }
}

/* Sizes CUB's call (call(NULL, bytes)), grows the shared temporary
 * storage to fit, and sets *run to the timed call; false when CUB refuses
 * the case or the storage cannot be had. */
template <class Call>
bool cub_prepare(Call call, void **d_tmp, size_t *tmp_bytes,
                 std::function<void()> *run)
{
    size_t need = 0;
    if (call(NULL, need) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    if (need > *tmp_bytes) {
        cudaFree(*d_tmp);
        if (cudaMalloc(d_tmp, need) != cudaSuccess) {
            *d_tmp = NULL;
            *tmp_bytes = 0;
            cudaGetLastError();
            return false;
        }
        *tmp_bytes = need;
    }
    void *tmp = *d_tmp;
    size_t tb = *tmp_bytes;
    *run = [=]() mutable { BC(call(tmp, tb)); };
    return true;
}

/* CUB's histogram of the case into d_counts (int counters, per channel at
 * nbins stride); false when CUB cannot run it (memory). */
template <class T>
bool cub_hist(const hcase &c, const T *d_in, size_t n, int *d_counts,
              void **d_tmp, size_t *tmp_bytes, std::function<void()> *run)
{
    int num_levels = (int)c.nbins + 1;
    if (c.channels == 4) {
        ::cuda::std::array<int, 4> nl = {num_levels, num_levels, num_levels,
                                         num_levels};
        ::cuda::std::array<unsigned, 4> lo = {0, 0, 0, 0},
                                        hi = {256, 256, 256, 256};
        ::cuda::std::array<int *, 4> outs = {d_counts, d_counts + c.nbins,
                                             d_counts + 2 * c.nbins,
                                             d_counts + 3 * c.nbins};
        auto call = [=](void *tmp, size_t &bytes) {
            return cub::DeviceHistogram::MultiHistogramEven<4, 4>(
                tmp, bytes, (const unsigned char *)d_in, outs, nl, lo, hi,
                (int64_t)(n / 4));
        };
        return cub_prepare(call, d_tmp, tmp_bytes, run);
    }
    typedef typename std::conditional<std::is_floating_point<T>::value, double,
                                      long long>::type L;
    L lo = 0, hi = std::is_floating_point<T>::value ? (L)1
                   : sizeof(T) == 1                  ? (L)256
                                                     : (L)(1ll << 32);
    auto call = [=](void *tmp, size_t &bytes) {
        return cub::DeviceHistogram::HistogramEven(tmp, bytes, d_in, d_counts,
                                                   num_levels, lo, hi,
                                                   (int64_t)n);
    };
    return cub_prepare(call, d_tmp, tmp_bytes, run);
}

parsum_histogram_desc desc_of(const hcase &c, parsum_hist_strategy s)
{
    parsum_histogram_desc d;
    memset(&d, 0, sizeof d);
    d.sample_dtype = c.dtype;
    d.channels = c.channels;
    d.count_dtype = PARSUM_U32;
    d.strategy = s;
    for (int k = 0; k < c.channels; k++) {
        d.bins[k].nbins = c.nbins;
        if (c.dtype == PARSUM_F32) {
            d.bins[k].lo.f64 = 0.0;
            d.bins[k].hi.f64 = 1.0;
        } else {
            d.bins[k].lo.i64 = 0;
            d.bins[k].hi.i64 = c.dtype == PARSUM_U8 ? 256 : (int64_t)1 << 32;
        }
    }
    return d;
}

template <class T>
void run_case(parsum_context *ctx, const hcase &c, size_t n, int reps,
              double read_gbs, void **d_tmp, size_t *tmp_bytes)
{
    T *d_in = NULL;
    unsigned *d_ours = NULL, *d_ref = NULL;
    size_t nc = c.nbins * c.channels;
    BC(cudaMalloc(&d_in, n * sizeof(T)));
    BC(cudaMalloc(&d_ours, nc * 4));
    BC(cudaMalloc(&d_ref, nc * 4));
    hist_fill_kernel<T><<<1024, 256>>>(d_in, n, 0x5eed, c.skew);
    BC(cudaGetLastError());
    std::function<void()> cub_run;
    bool have_cub = c.cub && cub_hist<T>(c, d_in, n, (int *)d_ref, d_tmp,
                                         tmp_bytes, &cub_run);
    double cub_ms = 0;
    if (have_cub) {
        cub_run();
        BC(cudaDeviceSynchronize());
        cub_ms = median_ms(reps, cub_run);
    }
    const double bytes = (double)n * sizeof(T);
    static const parsum_hist_strategy strats[] = {
        PARSUM_HIST_AUTO, PARSUM_HIST_PRIVATIZED, PARSUM_HIST_ATOMIC_GLOBAL,
        PARSUM_HIST_SORT_REDUCE_BY_KEY};
    static const char *snames[] = {"auto", "privatized", "atomic", "sort"};
    for (int s = 0; s < 4; s++) {
        if (strats[s] == PARSUM_HIST_SORT_REDUCE_BY_KEY && n > ((size_t)1 << 26))
            continue;
        parsum_histogram_desc d = desc_of(c, strats[s]);
        void *counts[4] = {NULL, NULL, NULL, NULL};
        for (int k = 0; k < c.channels; k++)
            counts[k] = d_ours + k * c.nbins;
        size_t pixels = n / c.channels;
        auto ours = [&]() {
            PS(ctx, parsum_histogram(ctx, d_in, pixels, &d, counts));
        };
        ours();
        BC(cudaDeviceSynchronize());
        if (!have_cub && s == 0)
            BC(cudaMemcpy(d_ref, d_ours, nc * 4, cudaMemcpyDeviceToDevice));
        std::vector<unsigned> a(nc), b(nc);
        BC(cudaMemcpy(a.data(), d_ours, nc * 4, cudaMemcpyDeviceToHost));
        BC(cudaMemcpy(b.data(), d_ref, nc * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < nc; i++)
            bad += a[i] != b[i];
        double ms = median_ms(reps, ours);
        double g = gbs(bytes, ms * 1e-3);
        printf("%-28s %-10s %9.3f ms %8.1f GB/s %5.1f %% read", c.name,
               snames[s], ms, g, 100.0 * g / read_gbs);
        if (have_cub)
            printf("   cub %9.3f ms %8.1f GB/s  x%5.2f", cub_ms,
                   gbs(bytes, cub_ms * 1e-3), cub_ms / ms);
        else
            printf("   cub did not run");
        printf("%s\n", bad ? "  COUNTS DIFFER" : "");
        if (bad)
            throw bench_error();
    }
    cudaFree(d_in);
    cudaFree(d_ours);
    cudaFree(d_ref);
}

} /* namespace */

int parsum_bench_cuda_hist(const parsum_bench_args *args)
{
    parsum_context *ctx = NULL;
    cudaDeviceProp prop;
    unsigned long long *d_stats = NULL;
    unsigned *d_sink = NULL;
    if (!open_device(&ctx, &prop, &d_stats, &d_sink))
        return 1;
    size_t n = args->n ? args->n : (size_t)1 << 28;
    n -= n % 4;
    int reps = args->reps > 0 ? args->reps : 10;
    void *d_tmp = NULL;
    size_t tmp_bytes = 0;
    int rc = 0;
    try {
        /* read bound: the largest case's bytes (4 n), streamed once */
        uint4 *d_buf = NULL;
        size_t rb = n * 4;
        BC(cudaMalloc(&d_buf, rb));
        BC(cudaMemset(d_buf, 1, rb));
        double rms = median_ms(reps, [&]() {
            read_kernel<<<prop.multiProcessorCount * 8, 512>>>(d_buf, rb / 16,
                                                             d_sink);
        });
        cudaFree(d_buf);
        double read_gbs = gbs((double)rb, rms * 1e-3);
        printf("parsum bench histogram (cuda): %s, n = %zu samples, read "
               "%.1f GB/s, u32 counts, median of %d\n",
               prop.name, n, read_gbs, reps);
        const hcase cases[] = {
            {"u8 256 bins", PARSUM_U8, 1, 256, 0, 1},
            {"u8 rgba 4x256 bins", PARSUM_U8, 4, 256, 0, 1},
            {"u32 1024 bins", PARSUM_U32, 1, 1024, 0, 1},
            {"u32 1024 bins skewed", PARSUM_U32, 1, 1024, 1, 1},
            {"u32 256 bins", PARSUM_U32, 1, 256, 0, 1},
            {"u32 65536 bins", PARSUM_U32, 1, 65536, 0, 1},
            /* CUB 3.0's HistogramEven stops with an illegal memory access
             * here (2^26 samples, H200), which ends the process's CUDA
             * context: PARSUM_BENCH_CUB_2P24=1 runs it anyway, last. */
            {"f32 1024 bins", PARSUM_F32, 1, 1024, 0, 1},
            {"u32 2^24 bins", PARSUM_U32, 1, (size_t)1 << 24, 0,
             getenv("PARSUM_BENCH_CUB_2P24") != NULL},
        };
        for (const hcase &c : cases) {
            if (c.dtype == PARSUM_U8)
                run_case<uint8_t>(ctx, c, n, reps, read_gbs, &d_tmp, &tmp_bytes);
            else if (c.dtype == PARSUM_U32)
                run_case<uint32_t>(ctx, c, n, reps, read_gbs, &d_tmp, &tmp_bytes);
            else
                run_case<float>(ctx, c, n, reps, read_gbs, &d_tmp, &tmp_bytes);
        }
    } catch (const bench_error &) {
        rc = 1;
    }
    cudaFree(d_tmp);
    close_device(ctx, d_stats, d_sink);
    return rc;
}
