/*
 * bench_cuda_sort.cu - `parsum bench sort --backend cuda`: parsum's radix
 * sorts against CUB's on the same device buffers in the same run, with
 * cudaMemcpy device-to-device of the same bytes as the bandwidth yardstick.
 *
 * Cases (n = --n, default 2^28):
 *   u32 keys, n                 vs cub::DeviceRadixSort::SortKeys
 *   u32 keys / u32 values, n    vs cub::DeviceRadixSort::SortPairs
 *   u64 keys, n                 vs SortKeys
 *   f32 keys in [-1, 1), n      vs SortKeys
 *   u32 keys, 2^20 (latency)    vs SortKeys
 *   u32 keys, 2^24 in 2^20 segments (random cuts: lengths ~ exponential,
 *     mean 16) and in 16 equal segments
 *                               vs cub::DeviceSegmentedSort::StableSortKeys
 * Every output is compared bit for bit with CUB's before timing (CUB's
 * radix order equals parsum's for these inputs: no NaNs). "copy" is the
 * time cudaMemcpy takes to copy the keys and values once; Gkeys/s is n
 * over the median time.
 */
#include "bench_args.h"
#include "bench_cuda.h"
#include "bench_cuda_util.cuh"

#include <cub/cub.cuh>

#include <algorithm>
#include <functional>
#include <random>

namespace {

using namespace pbc;

/* CUB's temporary storage, grown as needed and shared by the cases. */
struct cub_tmp {
    void *p = nullptr;
    size_t bytes = 0;
    void *get(size_t need)
    {
        if (need > bytes) {
            cudaFree(p);
            p = nullptr;
            bytes = 0;
            BC(cudaMalloc(&p, need));
            bytes = need;
        }
        return p;
    }
    ~cub_tmp() { cudaFree(p); }
};

/* The buffers every case works in: sized for the largest one. */
struct bufs {
    void *keys, *vals, *out_keys, *out_vals, *ref_keys, *ref_vals;
    uint64_t *offsets;
};

template <class T>
size_t count_bad(const void *a, const void *b, size_t n,
                 unsigned long long *d_stats)
{
    BC(cudaMemset(d_stats, 0, 2 * sizeof(unsigned long long)));
    compare_kernel<T><<<1024, 256>>>(static_cast<const T *>(a),
                                     static_cast<const T *>(b), n, CMP_BITS,
                                     0.0, d_stats, d_stats + 1);
    BC(cudaGetLastError());
    unsigned long long bad = 0;
    BC(cudaMemcpy(&bad, d_stats, sizeof bad, cudaMemcpyDeviceToHost));
    return (size_t)bad;
}

double copy_ms(void *dst, const void *src, size_t bytes, int reps)
{
    return median_ms(reps, [&]() {
        BC(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
    });
}

void report(const char *name, size_t n, double ms, double cub_ms,
            double cp_ms, size_t bad)
{
    printf("%-24s n %11zu  parsum %9.3f ms %7.2f Gkeys/s  cub %9.3f ms "
           "%7.2f Gkeys/s  x%5.2f  copy %8.3f ms (%4.0f %%)%s\n",
           name, n, ms, n / (ms * 1e6), cub_ms, n / (cub_ms * 1e6),
           cub_ms / ms, cp_ms, 100.0 * cp_ms / ms,
           bad ? "  DIFFERS FROM CUB" : "");
    if (bad) {
        fprintf(stderr, "parsum bench sort: %s: %zu elements differ from "
                        "CUB\n",
                name, bad);
        throw bench_error();
    }
}

template <class K, int KIND>
void fill(void *p, size_t n, uint64_t seed)
{
    fill_kernel<K><<<1024, 256>>>(static_cast<K *>(p), n, seed, KIND);
    BC(cudaGetLastError());
}

template <class K>
void keys_case(parsum_context *ctx, const char *name, parsum_dtype dt,
               const bufs &b, size_t n, int reps, cub_tmp &tmp,
               unsigned long long *d_stats)
{
    const K *in = static_cast<const K *>(b.keys);
    K *out = static_cast<K *>(b.out_keys), *ref = static_cast<K *>(b.ref_keys);
    size_t need = 0;
    BC(cub::DeviceRadixSort::SortKeys(nullptr, need, in, ref, n));
    void *t = tmp.get(need);
    auto cub_run = [&]() {
        size_t bytes = need;
        BC(cub::DeviceRadixSort::SortKeys(t, bytes, in, ref, n));
    };
    parsum_sort_desc d = {dt, 0, 0, 0, 0};
    auto ours = [&]() {
        PS(ctx, parsum_sort(ctx, in, nullptr, out, nullptr, n, &d));
    };
    cub_run();
    ours();
    BC(cudaDeviceSynchronize());
    const size_t bad = count_bad<K>(out, ref, n, d_stats);
    const double cub_ms = median_ms(reps, cub_run);
    const double ms = median_ms(reps, ours);
    report(name, n, ms, cub_ms, copy_ms(b.ref_vals, in, n * sizeof(K), reps),
           bad);
}

void pairs_case(parsum_context *ctx, const bufs &b, size_t n, int reps,
                cub_tmp &tmp, unsigned long long *d_stats)
{
    typedef uint32_t K;
    const K *in = static_cast<const K *>(b.keys);
    const K *vin = static_cast<const K *>(b.vals);
    K *out = static_cast<K *>(b.out_keys), *ref = static_cast<K *>(b.ref_keys);
    K *vout = static_cast<K *>(b.out_vals), *vref = static_cast<K *>(b.ref_vals);
    size_t need = 0;
    BC(cub::DeviceRadixSort::SortPairs(nullptr, need, in, ref, vin, vref, n));
    void *t = tmp.get(need);
    auto cub_run = [&]() {
        size_t bytes = need;
        BC(cub::DeviceRadixSort::SortPairs(t, bytes, in, ref, vin, vref, n));
    };
    parsum_sort_desc d = {PARSUM_U32, sizeof(K), 0, 0, 0};
    auto ours = [&]() {
        PS(ctx, parsum_sort(ctx, in, vin, out, vout, n, &d));
    };
    cub_run();
    ours();
    BC(cudaDeviceSynchronize());
    const size_t bad = count_bad<K>(out, ref, n, d_stats) +
                       count_bad<K>(vout, vref, n, d_stats);
    const double cub_ms = median_ms(reps, cub_run);
    const double ms = median_ms(reps, ours);
    /* copy yardstick: keys and values, 8 bytes per pair */
    report("u32/u32 pairs", n, ms, cub_ms,
           copy_ms(b.out_vals, b.keys, n * 8, reps), bad);
}

/* Offsets of nseg segments over n keys: random cuts, or equal parts. */
void make_offsets(uint64_t *d_off, size_t n, size_t nseg, bool random)
{
    std::vector<uint64_t> off(nseg + 1);
    off[0] = 0;
    off[nseg] = n;
    if (random) {
        std::mt19937_64 rng(0x5eedULL);
        for (size_t s = 1; s < nseg; s++)
            off[s] = rng() % (n + 1);
        std::sort(off.begin() + 1, off.end() - 1);
    } else {
        for (size_t s = 1; s < nseg; s++)
            off[s] = (uint64_t)((unsigned __int128)n * s / nseg);
    }
    BC(cudaMemcpy(d_off, off.data(), off.size() * 8, cudaMemcpyHostToDevice));
}

void seg_case(parsum_context *ctx, const char *name, const bufs &b, size_t n,
              size_t nseg, bool random, int reps, cub_tmp &tmp,
              unsigned long long *d_stats)
{
    typedef uint32_t K;
    make_offsets(b.offsets, n, nseg, random);
    const K *in = static_cast<const K *>(b.keys);
    K *out = static_cast<K *>(b.out_keys), *ref = static_cast<K *>(b.ref_keys);
    const uint64_t *off = b.offsets;
    size_t need = 0;
    BC(cub::DeviceSegmentedSort::StableSortKeys(nullptr, need, in, ref,
                                                (int64_t)n, (int64_t)nseg, off,
                                                off + 1));
    void *t = tmp.get(need);
    auto cub_run = [&]() {
        size_t bytes = need;
        BC(cub::DeviceSegmentedSort::StableSortKeys(t, bytes, in, ref,
                                                    (int64_t)n, (int64_t)nseg,
                                                    off, off + 1));
    };
    parsum_sort_desc d = {PARSUM_U32, 0, 0, 0, 0};
    auto ours = [&]() {
        PS(ctx, parsum_segmented_sort(ctx, in, nullptr, out, nullptr, n, off,
                                      nseg, &d));
    };
    cub_run();
    ours();
    BC(cudaDeviceSynchronize());
    const size_t bad = count_bad<K>(out, ref, n, d_stats);
    const double cub_ms = median_ms(reps, cub_run);
    const double ms = median_ms(reps, ours);
    report(name, n, ms, cub_ms, copy_ms(b.ref_vals, in, n * sizeof(K), reps),
           bad);
}

} /* namespace */

int parsum_bench_cuda_sort(const parsum_bench_args *args)
{
    parsum_context *ctx = NULL;
    cudaDeviceProp prop;
    unsigned long long *d_stats = NULL;
    unsigned *d_sink = NULL;
    if (!open_device(&ctx, &prop, &d_stats, &d_sink))
        return 1;
    const size_t n = args->n ? args->n : (size_t)1 << 28;
    const size_t n_lat = (size_t)1 << 20, n_seg = (size_t)1 << 24;
    const size_t nmax = std::max(n, n_seg);
    const int reps = args->reps > 0 ? args->reps : 10;
    int rc = 0;
    bufs b = {};
    try {
        cub_tmp tmp;
        BC(cudaMalloc(&b.keys, nmax * 8));
        BC(cudaMalloc(&b.vals, nmax * 4));
        BC(cudaMalloc(&b.out_keys, nmax * 8));
        BC(cudaMalloc(&b.out_vals, nmax * 8));
        BC(cudaMalloc(&b.ref_keys, nmax * 8));
        BC(cudaMalloc(&b.ref_vals, nmax * 8));
        BC(cudaMalloc(&b.offsets, ((size_t)1 << 20) * 8 + 8));
        printf("parsum bench sort (cuda): %s, n = %zu, median of %d; x = CUB "
               "time / parsum time, copy = cudaMemcpy of the same bytes\n",
               prop.name, n, reps);
        fill<uint32_t, FILL_BITS>(b.keys, n, 1);
        fill<uint32_t, FILL_BITS>(b.vals, n, 2);
        keys_case<uint32_t>(ctx, "u32 keys", PARSUM_U32, b, n, reps, tmp,
                            d_stats);
        pairs_case(ctx, b, n, reps, tmp, d_stats);
        fill<uint64_t, FILL_BITS>(b.keys, n, 3);
        keys_case<uint64_t>(ctx, "u64 keys", PARSUM_U64, b, n, reps, tmp,
                            d_stats);
        fill<float, FILL_SIGNED>(b.keys, n, 4);
        keys_case<float>(ctx, "f32 keys", PARSUM_F32, b, n, reps, tmp,
                         d_stats);
        fill<uint32_t, FILL_BITS>(b.keys, nmax, 5);
        keys_case<uint32_t>(ctx, "u32 keys 2^20", PARSUM_U32, b, n_lat, reps,
                            tmp, d_stats);
        seg_case(ctx, "seg 2^24 in 2^20", b, n_seg, (size_t)1 << 20, true,
                 reps, tmp, d_stats);
        seg_case(ctx, "seg 2^24 in 16", b, n_seg, 16, false, reps, tmp,
                 d_stats);
    } catch (const bench_error &) {
        rc = 1;
    }
    cudaFree(b.keys);
    cudaFree(b.vals);
    cudaFree(b.out_keys);
    cudaFree(b.out_vals);
    cudaFree(b.ref_keys);
    cudaFree(b.ref_vals);
    cudaFree(b.offsets);
    close_device(ctx, d_stats, d_sink);
    return rc;
}
