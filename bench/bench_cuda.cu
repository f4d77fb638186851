/*
 * bench_cuda.cu - the CUDA benchmark behind `parsum bench scan|reduce
 * --backend cuda` (see bench_cuda.h).
 *
 * For each size it measures, in one run and on the same device buffers:
 *   parsum   parsum_scan / parsum_reduce on a CUDA context (public API)
 *   CUB      cub::DeviceScan::InclusiveSum / ExclusiveSum / InclusiveScan /
 *            ExclusiveScan (reverse scans through reverse iterators),
 *            cub::DeviceReduce::Sum / Max, for u8 i32 f32 f64 with sum and
 *            max (other pairs: parsum only, as CUB instantiations are slow
 *            to compile)
 *   copy     cudaMemcpyAsync device to device: the bound of a scan, which
 *            reads and writes every element once
 *   read     a plain 16-byte streaming read kernel: the bound of a reduce
 * Times come from CUDA events around each call, after warm-up, as the
 * median of many runs, the variants interleaved run by run. Inputs are
 * random (never zeros), generated on the device. Before timing, parsum's
 * result is compared with CUB's (exactly for integers and min/max, to a
 * relative 1e-3 (f32) or 1e-9 (f64) for float sums and products); after
 * timing, a checksum of parsum's last output must equal the first's
 * (determinism). Sizes whose buffers fit in L2 are marked: their times
 * are latencies rather than bandwidths.
 */
#include "bench_cuda.h"
#include "bench_cuda_util.cuh"

#include "parsum.h"

#include <cub/cub.cuh>
#include <cuda/functional>
#include <cuda/std/iterator>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

namespace {

using namespace pbc;

/* ---- the CUB peer ------------------------------------------------------- */

template <class T>
constexpr bool peer_dtype()
{
    return std::is_same<T, uint8_t>::value || std::is_same<T, int32_t>::value ||
           std::is_same<T, float>::value || std::is_same<T, double>::value;
}

bool peer_op(parsum_op op)
{
    return op == PARSUM_SUM || op == PARSUM_MAX;
}

/* One CUB scan or reduce; tmp == NULL asks for the temporary size. */
template <class T, class In, class Out>
cudaError_t cub_scan_it(void *tmp, size_t &tb, In in, Out out, int n,
                        parsum_op op, bool excl, T init)
{
    if (op == PARSUM_SUM)
        return excl ? cub::DeviceScan::ExclusiveSum(tmp, tb, in, out, n)
                    : cub::DeviceScan::InclusiveSum(tmp, tb, in, out, n);
    return excl ? cub::DeviceScan::ExclusiveScan(tmp, tb, in, out,
                                                 cuda::maximum<T>{}, init, n)
                : cub::DeviceScan::InclusiveScan(tmp, tb, in, out,
                                                 cuda::maximum<T>{}, n);
}

template <class T>
cudaError_t cub_call(void *tmp, size_t &tb, const T *in, T *out, int n,
                     bool scan, parsum_op op, unsigned flags, T init)
{
    if constexpr (peer_dtype<T>()) {
        if (!scan)
            return op == PARSUM_SUM
                       ? cub::DeviceReduce::Sum(tmp, tb, in, out, n)
                       : cub::DeviceReduce::Max(tmp, tb, in, out, n);
        bool excl = (flags & PARSUM_EXCLUSIVE) != 0;
        if (flags & PARSUM_REVERSE)
            return cub_scan_it<T>(tmp, tb,
                                  cuda::std::make_reverse_iterator(in + n),
                                  cuda::std::make_reverse_iterator(out + n),
                                  n, op, excl, init);
        return cub_scan_it<T>(tmp, tb, in, out, n, op, excl, init);
    } else {
        (void)tmp, (void)tb, (void)in, (void)out, (void)n, (void)scan,
            (void)op, (void)flags, (void)init;
        return cudaErrorNotSupported;
    }
}

/* ---- measurement ------------------------------------------------------- */

struct result {
    size_t n = 0;
    int reps = 0;
    double parsum = 0, peer = -1, copy = 0, read = -1; /* seconds */
    const char *check = "unchecked";
    bool ok = true;
};

struct env {
    const parsum_bench_args *args;
    bool scan;
    parsum_context *ctx;
    cudaDeviceProp prop;
    unsigned long long *d_stats; /* [0] bad count, [1] first bad, [2] hash */
    unsigned *d_sink;
    int fill_blocks;
};

template <class T>
unsigned long long checksum(env &e, const T *p, size_t n)
{
    BC(cudaMemset(e.d_stats + 2, 0, sizeof(unsigned long long)));
    hash_kernel<T><<<e.fill_blocks, 256>>>(p, n, e.d_stats + 2);
    BC(cudaGetLastError());
    unsigned long long h = 0;
    BC(cudaMemcpy(&h, e.d_stats + 2, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

/* Compares n elements of a and b on the device; returns the mismatch count
 * and the first mismatching index. */
template <class T>
unsigned long long compare(env &e, const T *a, const T *b, size_t n, int mode,
                           double tol, unsigned long long *first)
{
    unsigned long long init[2] = {0ull, ~0ull};
    BC(cudaMemcpy(e.d_stats, init, sizeof init, cudaMemcpyHostToDevice));
    compare_kernel<T><<<e.fill_blocks, 256>>>(a, b, n, mode, tol, e.d_stats,
                                              e.d_stats + 1);
    BC(cudaGetLastError());
    BC(cudaMemcpy(init, e.d_stats, sizeof init, cudaMemcpyDeviceToHost));
    *first = init[1];
    return init[0];
}

int auto_reps(size_t bytes)
{
    double r = 16e9 / (double)(bytes > 0 ? bytes : 1);
    return (int)std::min(400.0, std::max(15.0, r));
}

template <class T>
void measure(env &e, size_t n, result &r)
{
    const parsum_bench_args *g = e.args;
    const size_t bytes = n * sizeof(T);
    const bool inplace = e.scan && g->inplace;
    const unsigned flags = e.scan ? g->flags : 0u;
    const bool peer = peer_dtype<T>() && peer_op(g->op) && n < (1u << 31);
    const bool is_float = std::is_floating_point<T>::value;
    T ident;
    PS(e.ctx, parsum_op_identity(g->dtype, g->op, &ident));

    /* Buffers: src (the input, never written by a timed call), a (parsum's
     * output or in-place buffer), b (CUB's), results and temporaries. */
    T *src = NULL, *a = NULL, *b = NULL, *res = NULL;
    void *tmp = NULL;
    size_t tb = 0;
    std::vector<cudaEvent_t> ev(8, nullptr);
    auto cleanup = [&]() {
        for (cudaEvent_t x : ev)
            if (x)
                cudaEventDestroy(x);
        cudaFree(src);
        cudaFree(a);
        cudaFree(b);
        cudaFree(res);
        cudaFree(tmp);
    };
    try {
        BC(cudaMalloc(&src, bytes));
        BC(cudaMalloc(&a, bytes));
        if (peer)
            BC(cudaMalloc(&b, bytes));
        BC(cudaMalloc(&res, 2 * sizeof(T)));
        if (peer) {
            BC(cub_call<T>(NULL, tb, src, e.scan ? b : res, (int)n, e.scan,
                           g->op, flags, ident));
            BC(cudaMalloc(&tmp, tb > 0 ? tb : 1));
        }
        for (cudaEvent_t &x : ev)
            BC(cudaEventCreate(&x));

        int kind = FILL_BITS;
        if (is_float && g->op == PARSUM_PROD)
            kind = FILL_NEAR_ONE;
        else if (is_float && (g->op == PARSUM_MIN || g->op == PARSUM_MAX))
            kind = FILL_SIGNED;
        fill_kernel<T><<<e.fill_blocks, 256>>>(src, n, 0x5eed2026ull + n,
                                               kind);
        BC(cudaGetLastError());

        /* One call of each variant; `into` is parsum's result buffer. */
        auto run_parsum = [&]() {
            if (e.scan)
                PS(e.ctx, parsum_scan(e.ctx, inplace ? a : src, a, n,
                                      g->dtype, g->op, flags));
            else
                PS(e.ctx, parsum_reduce(e.ctx, src, n, g->dtype, g->op, res));
        };
        auto run_peer = [&]() {
            size_t t = tb;
            BC(cub_call<T>(tmp, t, inplace ? b : src, e.scan ? b : res + 1,
                           (int)n, e.scan, g->op, flags, ident));
        };

        /* Check against CUB, and remember parsum's bits. */
        if (inplace)
            BC(cudaMemcpy(a, src, bytes, cudaMemcpyDeviceToDevice));
        run_parsum();
        BC(cudaDeviceSynchronize());
        const T *mine = e.scan ? a : res;
        const size_t count = e.scan ? n : 1;
        unsigned long long h0 = checksum(e, mine, count);
        if (peer) {
            if (inplace)
                BC(cudaMemcpy(b, src, bytes, cudaMemcpyDeviceToDevice));
            run_peer();
            BC(cudaDeviceSynchronize());
            int mode = CMP_BITS;
            double tol = 0.0;
            if (is_float) {
                if (g->op == PARSUM_MIN || g->op == PARSUM_MAX) {
                    mode = CMP_VALUE;
                } else {
                    mode = CMP_REL;
                    tol = sizeof(T) == 4 ? 1e-3 : 1e-9;
                }
            }
            unsigned long long first = 0;
            unsigned long long bad = compare(e, mine, e.scan ? b : res + 1,
                                             count, mode, tol, &first);
            if (bad != 0) {
                fprintf(stderr,
                        "parsum bench: n = %zu: parsum and CUB disagree on "
                        "%llu of %zu elements (first at index %llu)\n",
                        n, bad, count, first);
                r.check = "MISMATCH vs CUB";
                r.ok = false;
            } else {
                r.check = "ok (= CUB)";
            }
        }

        /* Timing: warm-up, then reps rounds of every variant. */
        const int reps = g->reps > 0 ? g->reps : auto_reps(bytes);
        std::vector<double> tp, tc, tcopy, tread;
        const size_t nvec = bytes / 16;
        const pbc::l2_flush flush;
        const bool cold = flush.active(e.scan ? 2 * bytes : bytes);
        for (int rep = -3; rep < reps; ++rep) {
            float ms = 0.0f;
            flush(cold);
            BC(cudaEventRecord(ev[0]));
            BC(cudaMemcpyAsync(a, src, bytes, cudaMemcpyDeviceToDevice));
            BC(cudaEventRecord(ev[1]));
            flush(cold);
            BC(cudaEventRecord(ev[2]));
            run_parsum();
            BC(cudaEventRecord(ev[3]));
            if (peer) {
                if (inplace)
                    BC(cudaMemcpyAsync(b, src, bytes,
                                       cudaMemcpyDeviceToDevice));
                flush(cold);
                BC(cudaEventRecord(ev[4]));
                run_peer();
                BC(cudaEventRecord(ev[5]));
            }
            if (!e.scan) {
                flush(cold);
                BC(cudaEventRecord(ev[6]));
                read_kernel<<<e.fill_blocks, 256>>>(
                    reinterpret_cast<const uint4 *>(src), nvec, e.d_sink);
                BC(cudaGetLastError());
                BC(cudaEventRecord(ev[7]));
            }
            BC(cudaEventSynchronize(e.scan ? (peer ? ev[5] : ev[3]) : ev[7]));
            if (rep < 0)
                continue;
            BC(cudaEventElapsedTime(&ms, ev[0], ev[1]));
            tcopy.push_back(ms * 1e-3);
            BC(cudaEventElapsedTime(&ms, ev[2], ev[3]));
            tp.push_back(ms * 1e-3);
            if (peer) {
                BC(cudaEventElapsedTime(&ms, ev[4], ev[5]));
                tc.push_back(ms * 1e-3);
            }
            if (!e.scan) {
                BC(cudaEventElapsedTime(&ms, ev[6], ev[7]));
                tread.push_back(ms * 1e-3);
            }
        }
        BC(cudaDeviceSynchronize());
        /* The last run had the same input as the checked one. */
        if (checksum(e, mine, count) != h0) {
            fprintf(stderr, "parsum bench: n = %zu: parsum's result changed "
                            "between runs (not deterministic)\n", n);
            r.check = "NOT DETERMINISTIC";
            r.ok = false;
        }
        r.n = n;
        r.reps = reps;
        r.parsum = median(tp);
        r.copy = median(tcopy);
        if (peer)
            r.peer = median(tc);
        if (!e.scan)
            r.read = median(tread);
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
}

/* ---- output ------------------------------------------------------------ */

void print_header(FILE *out, const env &e)
{
    const parsum_bench_args *g = e.args;
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    fprintf(out, "parsum bench %s (cuda): %s %s", g->what,
            parsum_dtype_name(g->dtype), parsum_op_name(g->op));
    if (e.scan)
        fprintf(out, ", %s%s%s",
                (g->flags & PARSUM_EXCLUSIVE) ? "exclusive" : "inclusive",
                (g->flags & PARSUM_REVERSE) ? ", reverse" : "",
                g->inplace ? ", in place" : "");
    fprintf(out,
            "\ndevice %s: %d SMs, %.0f MB L2, %.1f GB; CUDA runtime %d.%d, "
            "driver %d.%d; parsum %s\n",
            e.prop.name, e.prop.multiProcessorCount,
            e.prop.l2CacheSize / 1048576.0,
            (double)e.prop.totalGlobalMem / 1e9, rt / 1000, (rt % 1000) / 10,
            drv / 1000, (drv % 1000) / 10, parsum_version());
    fprintf(out, "GB/s counts bytes read + written (scan: 2 x n x size, "
                 "reduce: n x size); median of the runs; * = fits in L2 "
                 "(latency)\n");
    fprintf(out, "%13s %10s %8s %10s %8s %9s %9s %8s %5s  %s\n", "n",
            "parsum ms", "GB/s", "cub ms", "GB/s", "cub/ours",
            e.scan ? "copy GB/s" : "read GB/s", "%bound", "reps", "check");
}

void print_row(FILE *out, const env &e, const result &r)
{
    size_t size = parsum_dtype_size(e.args->dtype);
    double bytes = (double)r.n * (double)size * (e.scan ? 2.0 : 1.0);
    double bound_s = e.scan ? r.copy : r.read;
    double bound_gbs = e.scan ? gbs(2.0 * (double)r.n * size, r.copy)
                              : gbs((double)r.n * size, r.read);
    double mine = gbs(bytes, r.parsum);
    bool l2 = 2.0 * (double)r.n * size <= (double)e.prop.l2CacheSize;
    char nbuf[32];
    snprintf(nbuf, sizeof nbuf, "%zu%s", r.n, l2 ? "*" : "");
    char cub_ms[16] = "n/a", cub_gbs[16] = "n/a", ratio[16] = "n/a";
    if (r.peer >= 0.0) {
        snprintf(cub_ms, sizeof cub_ms, "%.4f", r.peer * 1e3);
        snprintf(cub_gbs, sizeof cub_gbs, "%.1f", gbs(bytes, r.peer));
        snprintf(ratio, sizeof ratio, "%.3fx",
                 r.parsum > 0.0 ? r.peer / r.parsum : 0.0);
    }
    fprintf(out, "%13s %10.4f %8.1f %10s %8s %9s %9.1f %7.1f%% %5d  %s\n",
            nbuf, r.parsum * 1e3, mine, cub_ms, cub_gbs, ratio, bound_gbs,
            bound_s > 0.0 && bound_gbs > 0.0 ? 100.0 * mine / bound_gbs : 0.0,
            r.reps, r.check);
}

void print_json(FILE *out, const env &e, const result &r)
{
    const parsum_bench_args *g = e.args;
    size_t size = parsum_dtype_size(g->dtype);
    double bytes = (double)r.n * (double)size * (e.scan ? 2.0 : 1.0);
    double copy_gbs = gbs(2.0 * (double)r.n * size, r.copy);
    double read_gbs = r.read > 0.0 ? gbs((double)r.n * size, r.read) : 0.0;
    double bound = e.scan ? copy_gbs : read_gbs;
    fprintf(out,
            "{\"what\":\"%s\",\"backend\":\"cuda\",\"device\":\"%s\","
            "\"n\":%zu,\"dtype\":\"%s\",\"op\":\"%s\",\"exclusive\":%s,"
            "\"reverse\":%s,\"inplace\":%s,\"reps\":%d,\"bytes\":%.0f,"
            "\"in_l2\":%s,",
            g->what, e.prop.name, r.n, parsum_dtype_name(g->dtype),
            parsum_op_name(g->op),
            e.scan && (g->flags & PARSUM_EXCLUSIVE) ? "true" : "false",
            e.scan && (g->flags & PARSUM_REVERSE) ? "true" : "false",
            e.scan && g->inplace ? "true" : "false", r.reps, bytes,
            2.0 * (double)r.n * size <= (double)e.prop.l2CacheSize ? "true"
                                                                   : "false");
    fprintf(out, "\"parsum_ms\":%.5f,\"parsum_gbs\":%.2f,", r.parsum * 1e3,
            gbs(bytes, r.parsum));
    if (r.peer >= 0.0)
        fprintf(out,
                "\"cub_ms\":%.5f,\"cub_gbs\":%.2f,\"speedup_vs_cub\":%.4f,",
                r.peer * 1e3, gbs(bytes, r.peer),
                r.parsum > 0.0 ? r.peer / r.parsum : 0.0);
    else
        fprintf(out, "\"cub_ms\":null,\"cub_gbs\":null,"
                     "\"speedup_vs_cub\":null,");
    fprintf(out,
            "\"copy_ms\":%.5f,\"copy_gbs\":%.2f,\"read_ms\":%.5f,"
            "\"read_gbs\":%.2f,\"bound\":\"%s\",\"ratio_to_bound\":%.4f,"
            "\"check\":\"%s\"}\n",
            r.copy * 1e3, copy_gbs, r.read > 0.0 ? r.read * 1e3 : 0.0,
            read_gbs, e.scan ? "copy" : "read",
            bound > 0.0 ? gbs(bytes, r.parsum) / bound : 0.0, r.check);
}

template <class T>
int run_typed(env &e, FILE *out)
{
    const parsum_bench_args *g = e.args;
    std::vector<size_t> sizes;
    if (g->n != 0)
        sizes.push_back(g->n);
    else
        for (int p = 16; p <= 30; p += 2)
            sizes.push_back((size_t)1 << p);
    if (!g->json)
        print_header(out, e);
    int rc = 0;
    for (size_t n : sizes) {
        size_t freeb = 0, total = 0;
        BC(cudaMemGetInfo(&freeb, &total));
        double need = 3.3 * (double)n * sizeof(T) + (64 << 20);
        if (need > 0.9 * (double)freeb) {
            if (g->n != 0) {
                fprintf(stderr, "parsum bench: n = %zu needs about %.1f GB "
                                "of device memory, %.1f GB are free\n",
                        n, need / 1e9, freeb / 1e9);
                return 1;
            }
            fprintf(out, "%13zu  skipped: needs about %.1f GB of device "
                         "memory\n", n, need / 1e9);
            continue;
        }
        result r;
        measure<T>(e, n, r);
        if (g->json)
            print_json(out, e, r);
        else
            print_row(out, e, r);
        fflush(out);
        if (!r.ok)
            rc = 1;
    }
    return rc;
}

int run(env &e, FILE *out)
{
    switch (e.args->dtype) {
    case PARSUM_I8: return run_typed<int8_t>(e, out);
    case PARSUM_U8: return run_typed<uint8_t>(e, out);
    case PARSUM_I16: return run_typed<int16_t>(e, out);
    case PARSUM_U16: return run_typed<uint16_t>(e, out);
    case PARSUM_I32: return run_typed<int32_t>(e, out);
    case PARSUM_U32: return run_typed<uint32_t>(e, out);
    case PARSUM_I64: return run_typed<int64_t>(e, out);
    case PARSUM_U64: return run_typed<uint64_t>(e, out);
    case PARSUM_F32: return run_typed<float>(e, out);
    case PARSUM_F64: return run_typed<double>(e, out);
    }
    fprintf(stderr, "parsum bench: unknown dtype %d\n", (int)e.args->dtype);
    return 2;
}

} /* namespace */

extern "C" int parsum_bench_cuda(const parsum_bench_args *args, FILE *out)
{
    env e;
    memset(&e, 0, sizeof e);
    e.args = args;
    e.scan = strcmp(args->what, "scan") == 0;
    unsigned char idbuf[8];
    if (parsum_op_identity(args->dtype, args->op, idbuf) != PARSUM_OK) {
        fprintf(stderr, "parsum bench: op %s is not defined on dtype %s\n",
                parsum_op_name(args->op), parsum_dtype_name(args->dtype));
        return 2;
    }
    if (!open_device(&e.ctx, &e.prop, &e.d_stats, &e.d_sink))
        return 1;
    e.fill_blocks = e.prop.multiProcessorCount * 8;
    int rc = 1;
    try {
        rc = run(e, out);
    } catch (const bench_error &) {
        rc = 1;
    }
    close_device(e.ctx, e.d_stats, e.d_sink);
    return rc;
}
