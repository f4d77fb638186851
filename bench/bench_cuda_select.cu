/*
 * bench_cuda_select.cu - `parsum bench select|partition|partition_unstable|
 * unique|rle --backend cuda`: parsum's selection family against CUB on
 * the same device buffers in the same run.
 *
 *   select     parsum_select, predicate x < (the middle of the dtype's
 *              range: 50 % of random keys) vs cub::DeviceSelect::If
 *   partition  parsum_partition (same predicate) vs cub::DevicePartition::If
 *              (which writes the rejected elements in reverse order; the
 *              check compares accordingly), and vs a stable partition
 *              from CUB: DeviceSelect::If of the kept elements, then of
 *              the rejected ones behind them (their offset, the kept
 *              count, known from the check run, so no synchronization)
 *   partition_unstable  parsum_partition_unstable vs
 *              cub::DevicePartition::If: the same contract (the rejected
 *              part reversed), outputs compared as they are
 *   unique     parsum_unique vs cub::DeviceSelect::Unique, keys in runs of
 *              1 to 8 equal elements
 *   rle        parsum_run_length_encode vs cub::DeviceRunLengthEncode::Encode
 *              on the same keys
 * Bound: cudaMemcpy of the input, device to device (copy GB/s counts the
 * bytes read and written). GB/s of an operation counts the elements read
 * and written (select: n in, k out; partition: n in, n out; unique: n in,
 * k out; rle: n in, k keys and k 8-byte lengths out). Median of the runs;
 * results are compared with CUB's before timing.
 */
#include "bench_args.h"
#include "bench_cuda.h"
#include "bench_cuda_util.cuh"

#include <cub/cub.cuh>

namespace {

using namespace pbc;

enum sel_what { SELECT, PARTITION, PARTITION_UNSTABLE, UNIQUE, RLE };

template <class T>
struct less_than {
    T a;
    __host__ __device__ bool operator()(const T &x) const
    {
        return x < a;
    }
};

template <class T>
struct not_less_than {
    T a;
    __host__ __device__ bool operator()(const T &x) const
    {
        return !(x < a);
    }
};

/* Random keys (select, partition) or keys in runs of 1 to 8 (unique,
 * rle): run r covers a hash-chosen length, its key a hash of r. */
template <class T>
__global__ void run_keys_kernel(T *p, size_t n, uint64_t seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        /* blocks of 8 elements split at a hashed point: runs of 1..8 */
        const size_t blk = i / 8;
        const unsigned cut = (unsigned)(mix64(seed ^ blk) % 8);
        const size_t r = 2 * blk + ((i % 8) >= cut);
        p[i] = make_value<T>(mix64(seed + r), FILL_BITS);
    }
}

template <class T>
T middle()
{
    if constexpr (std::is_floating_point<T>::value)
        return (T)0.5;
    else if constexpr (std::is_signed<T>::value)
        return (T)0;
    else
        return (T)(((T)~(T)0) / 2 + 1);
}

template <class T>
void make_selector(parsum_selector *s, parsum_dtype dt)
{
    memset(s, 0, sizeof *s);
    s->kind = PARSUM_SELECT_PREDICATE;
    s->dtype = dt;
    s->pred = PARSUM_PRED_LT;
    T m = middle<T>();
    memcpy(&s->a, &m, sizeof m);
}

template <class T>
struct bufs {
    T *in = nullptr, *out = nullptr, *peer = nullptr, *copy = nullptr;
    T *stable = nullptr; /* partition: CUB's stable partition */
    uint64_t *len = nullptr;
    int *peer_len = nullptr;
    size_t *count = nullptr;
    int *peer_count = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    ~bufs()
    {
        cudaFree(in);
        cudaFree(out);
        cudaFree(peer);
        cudaFree(copy);
        cudaFree(stable);
        cudaFree(len);
        cudaFree(peer_len);
        cudaFree(count);
        cudaFree(peer_count);
        cudaFree(tmp);
    }
};

template <class T>
cudaError_t cub_call(sel_what w, bufs<T> &b, void *tmp, size_t &tb, int n)
{
    less_than<T> pred{middle<T>()};
    switch (w) {
    case SELECT:
        return cub::DeviceSelect::If(tmp, tb, b.in, b.peer, b.peer_count, n,
                                     pred);
    case PARTITION:
    case PARTITION_UNSTABLE:
        return cub::DevicePartition::If(tmp, tb, b.in, b.peer, b.peer_count,
                                        n, pred);
    case UNIQUE:
        return cub::DeviceSelect::Unique(tmp, tb, b.in, b.peer, b.peer_count,
                                         n);
    default:
        return cub::DeviceRunLengthEncode::Encode(tmp, tb, b.in, b.peer,
                                                  b.peer_len, b.peer_count, n);
    }
}

/* A stable partition by CUB: the kept elements, then the rejected ones
 * behind them (k: the kept count). */
template <class T>
cudaError_t cub_stable(bufs<T> &b, void *tmp, size_t &tb, int n, int k)
{
    size_t t1 = tb, t2 = tb;
    cudaError_t e = cub::DeviceSelect::If(tmp, t1, b.in, b.stable,
                                          b.peer_count, n,
                                          less_than<T>{middle<T>()});
    if (e == cudaSuccess)
        e = cub::DeviceSelect::If(tmp, t2, b.in, b.stable + k, b.peer_count,
                                  n, not_less_than<T>{middle<T>()});
    if (tmp == nullptr) /* a size query: the larger of the two */
        tb = t1 > t2 ? t1 : t2;
    return e;
}

template <class T>
void parsum_call(parsum_context *ctx, sel_what w, parsum_dtype dt, bufs<T> &b,
                 size_t n)
{
    parsum_selector s;
    make_selector<T>(&s, dt);
    switch (w) {
    case SELECT:
        PS(ctx, parsum_select(ctx, b.in, b.out, n, sizeof(T), &s, b.count));
        break;
    case PARTITION:
        PS(ctx, parsum_partition(ctx, b.in, b.out, n, sizeof(T), &s, b.count));
        break;
    case PARTITION_UNSTABLE:
        PS(ctx, parsum_partition_unstable(ctx, b.in, b.out, n, sizeof(T), &s,
                                          b.count));
        break;
    case UNIQUE:
        PS(ctx, parsum_unique(ctx, b.in, b.out, n, sizeof(T), b.count));
        break;
    default:
        PS(ctx, parsum_run_length_encode(ctx, b.in, n, sizeof(T), b.out, b.len,
                                         b.count));
        break;
    }
}

/* parsum's result against CUB's: the same count and elements (partition:
 * CUB's rejected part reversed; rle: lengths too). */
template <class T>
bool same(sel_what w, bufs<T> &b, size_t n, size_t *k_out)
{
    size_t k = 0;
    int pk = 0;
    BC(cudaMemcpy(&k, b.count, sizeof k, cudaMemcpyDeviceToHost));
    BC(cudaMemcpy(&pk, b.peer_count, sizeof pk, cudaMemcpyDeviceToHost));
    *k_out = k;
    if (k != (size_t)pk)
        return false;
    const bool part = w == PARTITION || w == PARTITION_UNSTABLE;
    const size_t m = part ? n : k;
    std::vector<T> x(m), y(m);
    BC(cudaMemcpy(x.data(), b.out, m * sizeof(T), cudaMemcpyDeviceToHost));
    BC(cudaMemcpy(y.data(), b.peer, m * sizeof(T), cudaMemcpyDeviceToHost));
    if (w == PARTITION)
        std::reverse(y.begin() + (long)k, y.end());
    if (memcmp(x.data(), y.data(), m * sizeof(T)) != 0)
        return false;
    if (w == RLE) {
        std::vector<uint64_t> l(k);
        std::vector<int> pl(k);
        BC(cudaMemcpy(l.data(), b.len, k * 8, cudaMemcpyDeviceToHost));
        BC(cudaMemcpy(pl.data(), b.peer_len, k * sizeof(int),
                      cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < k; ++i)
            if (l[i] != (uint64_t)pl[i])
                return false;
    }
    return true;
}

struct result {
    double parsum = 0, peer = 0, copy = 0, bytes = 0;
    double stable = 0; /* partition: CUB's stable partition */
    bool stable_ok = false;
    size_t k = 0;
    bool ok = false;
};

template <class T>
result measure(parsum_context *ctx, sel_what w, parsum_dtype dt, size_t n,
               int reps, int blocks)
{
    result r;
    bufs<T> b;
    BC(cudaMalloc(&b.in, n * sizeof(T)));
    BC(cudaMalloc(&b.out, n * sizeof(T)));
    BC(cudaMalloc(&b.peer, n * sizeof(T)));
    BC(cudaMalloc(&b.copy, n * sizeof(T)));
    BC(cudaMalloc(&b.len, n * 8));
    BC(cudaMalloc(&b.peer_len, n * sizeof(int)));
    BC(cudaMalloc(&b.count, sizeof(size_t)));
    BC(cudaMalloc(&b.peer_count, sizeof(int)));
    if (w == SELECT || w == PARTITION || w == PARTITION_UNSTABLE)
        fill_kernel<T><<<blocks, 256>>>(b.in, n, 0x5e1ec7ull + n, FILL_BITS);
    else
        run_keys_kernel<T><<<blocks, 256>>>(b.in, n, 0x5e1ec7ull + n);
    BC(cudaGetLastError());
    BC(cub_call<T>(w, b, nullptr, b.tmp_bytes, (int)n));
    BC(cudaMalloc(&b.tmp, b.tmp_bytes + 16));

    parsum_call<T>(ctx, w, dt, b, n);
    size_t tb = b.tmp_bytes;
    BC(cub_call<T>(w, b, b.tmp, tb, (int)n));
    BC(cudaDeviceSynchronize());
    r.ok = same<T>(w, b, n, &r.k);
    void *stmp = nullptr;
    size_t stb = 0;
    const bool stable = w == PARTITION;
    if (stable) {
        BC(cudaMalloc(&b.stable, n * sizeof(T)));
        BC(cub_stable<T>(b, nullptr, stb, (int)n, (int)r.k));
        BC(cudaMalloc(&stmp, stb + 16));
        size_t t = stb;
        BC(cub_stable<T>(b, stmp, t, (int)n, (int)r.k));
        std::vector<T> x(n), y(n);
        BC(cudaMemcpy(x.data(), b.out, n * sizeof(T), cudaMemcpyDeviceToHost));
        BC(cudaMemcpy(y.data(), b.stable, n * sizeof(T),
                      cudaMemcpyDeviceToHost));
        r.stable_ok = memcmp(x.data(), y.data(), n * sizeof(T)) == 0;
    }

    /* Each timed call starts with the L2 flushed (pbc::l2_flush). */
    cudaEvent_t ev[8];
    for (cudaEvent_t &e : ev)
        BC(cudaEventCreate(&e));
    const pbc::l2_flush flush;
    const bool cold = flush.active(2 * n * sizeof(T));
    std::vector<double> tp, tc, tm, ts;
    for (int rep = -2; rep < reps; ++rep) {
        flush(cold);
        BC(cudaEventRecord(ev[0]));
        parsum_call<T>(ctx, w, dt, b, n);
        BC(cudaEventRecord(ev[1]));
        tb = b.tmp_bytes;
        flush(cold);
        BC(cudaEventRecord(ev[2]));
        BC(cub_call<T>(w, b, b.tmp, tb, (int)n));
        BC(cudaEventRecord(ev[3]));
        flush(cold);
        BC(cudaEventRecord(ev[4]));
        BC(cudaMemcpyAsync(b.copy, b.in, n * sizeof(T),
                           cudaMemcpyDeviceToDevice));
        BC(cudaEventRecord(ev[5]));
        if (stable) {
            flush(cold);
            BC(cudaEventRecord(ev[6]));
            size_t t = stb;
            BC(cub_stable<T>(b, stmp, t, (int)n, (int)r.k));
            BC(cudaEventRecord(ev[7]));
        }
        BC(cudaEventSynchronize(ev[stable ? 7 : 5]));
        if (rep < 0)
            continue;
        float ms[4];
        for (int i = 0; i < (stable ? 4 : 3); ++i)
            BC(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
        tp.push_back(ms[0] * 1e-3);
        tc.push_back(ms[1] * 1e-3);
        tm.push_back(ms[2] * 1e-3);
        if (stable)
            ts.push_back(ms[3] * 1e-3);
    }
    cudaFree(stmp);
    if (stable)
        r.stable = median(ts);
    for (cudaEvent_t e : ev)
        cudaEventDestroy(e);
    r.parsum = median(tp);
    r.peer = median(tc);
    r.copy = median(tm);
    const double es = (double)sizeof(T);
    r.bytes = n * es +
              (w == PARTITION || w == PARTITION_UNSTABLE ? n : r.k) * es +
              (w == RLE ? 8.0 * r.k : 0.0);
    return r;
}

template <class T>
int run_typed(parsum_context *ctx, sel_what w, const parsum_bench_args *g,
              const cudaDeviceProp &prop)
{
    std::vector<size_t> sizes;
    if (g->n != 0)
        sizes.push_back(g->n);
    else
        for (int e = 16; e <= 28; e += 4)
            sizes.push_back((size_t)1 << e);
    if (!g->json) {
        printf("parsum bench %s (cuda): %s, device %s\n", g->what,
               parsum_dtype_name(g->dtype), prop.name);
        printf("GB/s: elements read + written; copy: cudaMemcpy D2D of the "
               "input (read + write); median of the runs\n");
        printf("%12s %10s %10s %8s %10s %9s %9s %8s  %s\n", "n", "kept",
               "parsum ms", "GB/s", "cub ms", "cub/ours", "copy GB/s",
               "%copy", "check");
    }
    int rc = 0;
    const int reps = g->reps > 0 ? g->reps : 20;
    for (size_t n : sizes) {
        if (n >= ((size_t)1 << 31)) {
            fprintf(stderr, "parsum bench: the CUB peer takes int sizes: n "
                            "must be below 2^31\n");
            return 2;
        }
        result r = measure<T>(ctx, w, g->dtype, n, reps,
                              prop.multiProcessorCount * 8);
        const double mine = gbs(r.bytes, r.parsum);
        const double copy = gbs(2.0 * n * sizeof(T), r.copy);
        const char *check = r.ok ? "ok (= CUB)" : "MISMATCH vs CUB";
        if (g->json)
            printf("{\"what\":\"%s\",\"backend\":\"cuda\",\"device\":\"%s\","
                   "\"dtype\":\"%s\",\"n\":%zu,\"kept\":%zu,"
                   "\"parsum_ms\":%.5f,\"parsum_gbs\":%.2f,\"cub_ms\":%.5f,"
                   "\"speedup_vs_cub\":%.4f,\"copy_gbs\":%.2f,"
                   "\"ratio_to_copy\":%.4f,\"check\":\"%s\"}\n",
                   g->what, prop.name, parsum_dtype_name(g->dtype), n, r.k,
                   r.parsum * 1e3, mine, r.peer * 1e3,
                   r.parsum > 0 ? r.peer / r.parsum : 0.0, copy,
                   copy > 0 ? mine / copy : 0.0, check);
        else
            printf("%12zu %10zu %10.4f %8.1f %10.4f %8.3fx %9.1f %7.1f%%  "
                   "%s\n",
                   n, r.k, r.parsum * 1e3, mine, r.peer * 1e3,
                   r.parsum > 0 ? r.peer / r.parsum : 0.0, copy,
                   copy > 0 ? 100.0 * mine / copy : 0.0, check);
        if (w == PARTITION && !g->json)
            printf("%12s stable partition by CUB (DeviceSelect::If twice): "
                   "%.4f ms, cub/ours %.3fx  %s\n",
                   "", r.stable * 1e3,
                   r.parsum > 0 ? r.stable / r.parsum : 0.0,
                   r.stable_ok ? "ok (= parsum)" : "MISMATCH vs parsum");
        fflush(stdout);
        if (!r.ok || (w == PARTITION && !r.stable_ok))
            rc = 1;
    }
    return rc;
}

} /* namespace */

extern "C" int parsum_bench_cuda_select(const parsum_bench_args *args)
{
    sel_what w;
    if (strcmp(args->what, "select") == 0)
        w = SELECT;
    else if (strcmp(args->what, "partition") == 0)
        w = PARTITION;
    else if (strcmp(args->what, "partition_unstable") == 0)
        w = PARTITION_UNSTABLE;
    else if (strcmp(args->what, "unique") == 0)
        w = UNIQUE;
    else if (strcmp(args->what, "rle") == 0)
        w = RLE;
    else
        return 2;
    parsum_context *ctx;
    cudaDeviceProp prop;
    unsigned long long *d_stats;
    unsigned *d_sink;
    if (!open_device(&ctx, &prop, &d_stats, &d_sink))
        return 1;
    int rc = 1;
    try {
        switch (args->dtype) {
        case PARSUM_I32: rc = run_typed<int32_t>(ctx, w, args, prop); break;
        case PARSUM_U32: rc = run_typed<uint32_t>(ctx, w, args, prop); break;
        case PARSUM_F32: rc = run_typed<float>(ctx, w, args, prop); break;
        case PARSUM_U8: rc = run_typed<uint8_t>(ctx, w, args, prop); break;
        case PARSUM_U64: rc = run_typed<uint64_t>(ctx, w, args, prop); break;
        case PARSUM_F64: rc = run_typed<double>(ctx, w, args, prop); break;
        default:
            fprintf(stderr, "parsum bench %s --backend cuda: dtypes i32, u32, "
                            "f32, u8, u64, f64\n",
                    args->what);
            rc = 2;
        }
    } catch (const bench_error &) {
        rc = 1;
    }
    close_device(ctx, d_stats, d_sink);
    return rc;
}
