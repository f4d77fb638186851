/*
 * bench_cuda_seg.cu - `parsum bench segscan|segreduce|scanbykey|reducebykey
 * --backend cuda`: parsum's segmented and keyed operations against CUB on
 * the same device buffers in the same run, for each segment-length
 * distribution of bench_segments.h.
 *
 *   segscan      parsum_segmented_scan (packed flags, or offsets with
 *                --seg-kind offsets) vs cub::DeviceScan::InclusiveSumByKey
 *                over keys with the same runs (CUB has no flag-based
 *                segmented scan); bound: cudaMemcpy of the values
 *   scanbykey    parsum_scan_by_key (u32 keys) vs InclusiveSumByKey
 *   segreduce    parsum_segmented_reduce vs cub::DeviceSegmentedReduce::Sum;
 *                bound: the streaming read of the values
 *   reducebykey  parsum_reduce_by_key (u32 keys) vs
 *                cub::DeviceReduce::ReduceByKey
 * Also timed in the same rounds: parsum's plain scan or reduce of the same
 * values (issue 4 asks the segmented ones to keep up with them). Op SUM
 * only (the peer's); inclusive, forward. Results are compared with CUB's
 * before timing (exactly for integers, relatively for floats).
 */
#include "bench_args.h"
#include "bench_cuda.h"
#include "bench_cuda_util.cuh"
#include "bench_segments.h"

#include <cub/cub.cuh>

namespace {

using namespace pbc;

enum seg_what { SEGSCAN, SCANBYKEY, SEGREDUCE, REDUCEBYKEY };

struct seg_result {
    size_t nseg = 0, runs = 0;
    double parsum = 0, peer = 0, plain = 0, bound = 0; /* seconds */
    double bytes = 0, bound_bytes = 0;
    int reps = 0;
    const char *check = "unchecked";
    bool ok = true;
};

/* Device buffers of one measurement. */
template <class T>
struct seg_bufs {
    T *in = nullptr, *out = nullptr, *peer_out = nullptr, *plain_out = nullptr;
    uint64_t *offsets = nullptr;
    uint32_t *flags = nullptr, *keys = nullptr, *keys_out = nullptr,
             *peer_keys = nullptr;
    size_t *runs = nullptr;
    int *peer_runs = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    ~seg_bufs()
    {
        cudaFree(in);
        cudaFree(out);
        cudaFree(peer_out);
        cudaFree(plain_out);
        cudaFree(offsets);
        cudaFree(flags);
        cudaFree(keys);
        cudaFree(keys_out);
        cudaFree(peer_keys);
        cudaFree(runs);
        cudaFree(peer_runs);
        cudaFree(tmp);
    }
};

/* One CUB call for `what`; tmp == NULL asks for the temporary size. */
template <class T>
cudaError_t cub_seg(seg_what what, seg_bufs<T> &b, void *tmp, size_t &tb,
                    int n, int nseg)
{
    switch (what) {
    case SEGSCAN:
    case SCANBYKEY:
        return cub::DeviceScan::InclusiveSumByKey(tmp, tb, b.keys, b.in,
                                                  b.peer_out, n);
    case SEGREDUCE:
        return cub::DeviceSegmentedReduce::Sum(tmp, tb, b.in, b.peer_out, nseg,
                                               b.offsets, b.offsets + 1);
    case REDUCEBYKEY:
        return cub::DeviceReduce::ReduceByKey(tmp, tb, b.keys, b.peer_keys,
                                              b.in, b.peer_out, b.peer_runs,
                                              cuda::std::plus<T>{}, n);
    }
    return cudaErrorInvalidValue;
}

template <class T>
void run_parsum(parsum_context *ctx, seg_what what, const parsum_bench_args *g,
                seg_bufs<T> &b, size_t n, size_t nseg)
{
    parsum_segments seg;
    memset(&seg, 0, sizeof seg);
    switch (what) {
    case SEGSCAN:
        if (g->seg_offsets) {
            seg.kind = PARSUM_SEG_OFFSETS;
            seg.offsets = b.offsets;
            seg.num_segments = nseg;
        } else {
            seg.kind = PARSUM_SEG_FLAGS;
            seg.flags = b.flags;
        }
        PS(ctx, parsum_segmented_scan(ctx, b.in, b.out, n, g->dtype, g->op,
                                      &seg, 0u));
        break;
    case SCANBYKEY:
        PS(ctx, parsum_scan_by_key(ctx, b.keys, PARSUM_U32, b.in, b.out, n,
                                   g->dtype, g->op, 0u));
        break;
    case SEGREDUCE:
        PS(ctx, parsum_segmented_reduce(ctx, b.in, b.out, b.offsets, nseg,
                                        g->dtype, g->op));
        break;
    case REDUCEBYKEY:
        PS(ctx, parsum_reduce_by_key(ctx, b.keys, PARSUM_U32, b.in, n,
                                     g->dtype, g->op, b.keys_out, b.out,
                                     b.runs));
        break;
    }
}

/* Compares parsum's output with CUB's; false (and a message) if they
 * differ. */
template <class T>
bool check(parsum_context *ctx, seg_what what, seg_bufs<T> &b, size_t n,
           size_t nseg, size_t *runs_out, unsigned long long *d_stats,
           int blocks)
{
    size_t count = (what == SEGSCAN || what == SCANBYKEY) ? n : nseg;
    if (what == REDUCEBYKEY) {
        size_t mine = 0;
        int theirs = 0;
        BC(cudaMemcpy(&mine, b.runs, sizeof mine, cudaMemcpyDeviceToHost));
        BC(cudaMemcpy(&theirs, b.peer_runs, sizeof theirs,
                      cudaMemcpyDeviceToHost));
        if (mine != (size_t)theirs) {
            fprintf(stderr, "parsum bench: %zu runs, CUB found %d\n", mine,
                    theirs);
            return false;
        }
        count = mine;
        *runs_out = mine;
    }
    (void)ctx;
    const bool fl = std::is_floating_point<T>::value;
    unsigned long long init[2] = {0ull, ~0ull};
    BC(cudaMemcpy(d_stats, init, sizeof init, cudaMemcpyHostToDevice));
    compare_kernel<T><<<blocks, 256>>>(b.out, b.peer_out, count,
                                       fl ? CMP_REL : CMP_BITS,
                                       sizeof(T) == 4 ? 1e-3 : 1e-9, d_stats,
                                       d_stats + 1);
    if (what == REDUCEBYKEY)
        compare_kernel<uint32_t><<<blocks, 256>>>(b.keys_out, b.peer_keys,
                                                  count, CMP_BITS, 0.0,
                                                  d_stats, d_stats + 1);
    BC(cudaGetLastError());
    BC(cudaMemcpy(init, d_stats, sizeof init, cudaMemcpyDeviceToHost));
    if (init[0] != 0) {
        fprintf(stderr,
                "parsum bench: parsum and CUB disagree on %llu of %zu "
                "outputs (first at %llu)\n",
                init[0], count, init[1]);
        return false;
    }
    return true;
}

struct seg_env {
    const parsum_bench_args *args;
    seg_what what;
    parsum_context *ctx;
    cudaDeviceProp prop;
    unsigned long long *d_stats;
    unsigned *d_sink;
    int blocks;
};

/* Uploads the distribution's segments (offsets, flags, u32 keys). */
template <class T>
size_t upload_segments(seg_bufs<T> &b, pb_seg_dist d, size_t n)
{
    std::vector<uint64_t> off(n + 1);
    size_t nseg = pb_seg_offsets(d, n, 0x5e65eedull, off.data());
    std::vector<uint32_t> fl((n + 31) / 32), keys(n);
    pb_seg_flags(off.data(), nseg, n, fl.data());
    pb_seg_keys(off.data(), nseg, 4, keys.data());
    BC(cudaMalloc(&b.offsets, (nseg + 1) * sizeof(uint64_t)));
    BC(cudaMalloc(&b.flags, fl.size() * 4 + 4));
    BC(cudaMalloc(&b.keys, n * 4));
    BC(cudaMemcpy(b.offsets, off.data(), (nseg + 1) * 8,
                  cudaMemcpyHostToDevice));
    BC(cudaMemcpy(b.flags, fl.data(), fl.size() * 4, cudaMemcpyHostToDevice));
    BC(cudaMemcpy(b.keys, keys.data(), n * 4, cudaMemcpyHostToDevice));
    return nseg;
}

template <class T>
void measure(seg_env &e, pb_seg_dist d, size_t n, seg_result &r)
{
    const parsum_bench_args *g = e.args;
    const bool scan = e.what == SEGSCAN || e.what == SCANBYKEY;
    seg_bufs<T> b;
    const size_t nseg = upload_segments(b, d, n);
    const size_t outn = scan ? n : (e.what == SEGREDUCE ? nseg : n);
    BC(cudaMalloc(&b.in, n * sizeof(T)));
    BC(cudaMalloc(&b.out, outn * sizeof(T) + 16));
    BC(cudaMalloc(&b.peer_out, outn * sizeof(T) + 16));
    BC(cudaMalloc(&b.plain_out, n * sizeof(T) + 16));
    BC(cudaMalloc(&b.keys_out, n * 4 + 4));
    BC(cudaMalloc(&b.peer_keys, n * 4 + 4));
    BC(cudaMalloc(&b.runs, sizeof(size_t)));
    BC(cudaMalloc(&b.peer_runs, sizeof(int)));
    fill_kernel<T><<<e.blocks, 256>>>(b.in, n, 0x5eed2026ull + n, FILL_BITS);
    BC(cudaGetLastError());
    BC(cub_seg<T>(e.what, b, nullptr, b.tmp_bytes, (int)n, (int)nseg));
    BC(cudaMalloc(&b.tmp, b.tmp_bytes + 16));

    run_parsum<T>(e.ctx, e.what, g, b, n, nseg);
    size_t t = b.tmp_bytes;
    BC(cub_seg<T>(e.what, b, b.tmp, t, (int)n, (int)nseg));
    BC(cudaDeviceSynchronize());
    r.ok = check<T>(e.ctx, e.what, b, n, nseg, &r.runs, e.d_stats, e.blocks);
    r.check = r.ok ? "ok (= CUB)" : "MISMATCH vs CUB";

    /* Each timed call starts with the L2 flushed (pbc::l2_flush). */
    cudaEvent_t ev[8];
    for (cudaEvent_t &x : ev)
        BC(cudaEventCreate(&x));
    const int reps = g->reps > 0 ? g->reps : 20;
    const pbc::l2_flush flush;
    const bool cold = flush.active(2 * n * sizeof(T));
    std::vector<double> tp, tc, tplain, tb;
    for (int rep = -2; rep < reps; ++rep) {
        flush(cold);
        BC(cudaEventRecord(ev[0]));
        run_parsum<T>(e.ctx, e.what, g, b, n, nseg);
        BC(cudaEventRecord(ev[1]));
        size_t t2 = b.tmp_bytes;
        flush(cold);
        BC(cudaEventRecord(ev[2]));
        BC(cub_seg<T>(e.what, b, b.tmp, t2, (int)n, (int)nseg));
        BC(cudaEventRecord(ev[3]));
        flush(cold);
        BC(cudaEventRecord(ev[4]));
        if (scan)
            PS(e.ctx, parsum_scan(e.ctx, b.in, b.plain_out, n, g->dtype,
                                  g->op, 0u));
        else
            PS(e.ctx, parsum_reduce(e.ctx, b.in, n, g->dtype, g->op,
                                    b.plain_out));
        BC(cudaEventRecord(ev[5]));
        flush(cold);
        BC(cudaEventRecord(ev[6]));
        if (scan) {
            BC(cudaMemcpyAsync(b.plain_out, b.in, n * sizeof(T),
                               cudaMemcpyDeviceToDevice));
        } else {
            read_kernel<<<e.blocks, 256>>>(
                reinterpret_cast<const uint4 *>(b.in), n * sizeof(T) / 16,
                e.d_sink);
            BC(cudaGetLastError());
        }
        BC(cudaEventRecord(ev[7]));
        BC(cudaEventSynchronize(ev[7]));
        if (rep < 0)
            continue;
        float ms[4];
        for (int i = 0; i < 4; ++i)
            BC(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
        tp.push_back(ms[0] * 1e-3);
        tc.push_back(ms[1] * 1e-3);
        tplain.push_back(ms[2] * 1e-3);
        tb.push_back(ms[3] * 1e-3);
    }
    for (cudaEvent_t x : ev)
        cudaEventDestroy(x);
    r.nseg = nseg;
    r.reps = reps;
    r.parsum = median(tp);
    r.peer = median(tc);
    r.plain = median(tplain);
    r.bound = median(tb);
    const double es = (double)sizeof(T);
    if (scan) { /* values in and out, plus flags / offsets / keys */
        r.bytes = 2.0 * n * es;
        if (e.what == SCANBYKEY)
            r.bytes += 4.0 * n;
        else if (g->seg_offsets)
            r.bytes += 8.0 * (nseg + 1) + n / 8.0;
        else
            r.bytes += n / 8.0;
        r.bound_bytes = 2.0 * n * es;
    } else {
        r.bytes = n * es;
        if (e.what == SEGREDUCE)
            r.bytes += nseg * (8.0 + es);
        else
            r.bytes += 4.0 * n + r.runs * (4.0 + es);
        r.bound_bytes = n * es;
    }
}

void print_header(FILE *out, const seg_env &e, size_t n)
{
    const parsum_bench_args *g = e.args;
    const bool scan = e.what == SEGSCAN || e.what == SCANBYKEY;
    fprintf(out, "parsum bench %s (cuda): %s %s, n = %zu%s\ndevice %s\n",
            g->what, parsum_dtype_name(g->dtype), parsum_op_name(g->op), n,
            e.what == SEGSCAN ? (g->seg_offsets ? ", offsets" : ", flags")
                              : "",
            e.prop.name);
    fprintf(out, "GB/s counts every byte that must move (values, flags, "
                 "offsets, keys); plain = parsum_%s of the same values; "
                 "median of the runs\n",
            scan ? "scan" : "reduce");
    fprintf(out, "%-12s %10s %10s %8s %10s %9s %10s %10s %9s %8s  %s\n",
            "segments", "count", "parsum ms", "GB/s", "cub ms", "cub/ours",
            "plain ms", "seg/plain", scan ? "copy GB/s" : "read GB/s",
            "%bound", "check");
}

void print_row(FILE *out, const seg_env &e, pb_seg_dist d, const seg_result &r)
{
    const double mine = gbs(r.bytes, r.parsum);
    const double bound = gbs(r.bound_bytes, r.bound);
    if (e.args->json) {
        fprintf(out,
                "{\"what\":\"%s\",\"backend\":\"cuda\",\"device\":\"%s\","
                "\"dtype\":\"%s\",\"seg\":\"%s\",\"segments\":%zu,"
                "\"parsum_ms\":%.5f,\"parsum_gbs\":%.2f,\"cub_ms\":%.5f,"
                "\"speedup_vs_cub\":%.4f,\"plain_ms\":%.5f,"
                "\"bound_gbs\":%.2f,\"ratio_to_bound\":%.4f,\"check\":\"%s\"}\n",
                e.args->what, e.prop.name, parsum_dtype_name(e.args->dtype),
                pb_seg_dist_name(d), r.nseg, r.parsum * 1e3, mine,
                r.peer * 1e3, r.parsum > 0 ? r.peer / r.parsum : 0.0,
                r.plain * 1e3, bound, bound > 0 ? mine / bound : 0.0,
                r.check);
        return;
    }
    fprintf(out,
            "%-12s %10zu %10.4f %8.1f %10.4f %8.3fx %10.4f %9.3fx %9.1f "
            "%7.1f%%  %s\n",
            pb_seg_dist_name(d), r.nseg, r.parsum * 1e3, mine, r.peer * 1e3,
            r.parsum > 0 ? r.peer / r.parsum : 0.0, r.plain * 1e3,
            r.plain > 0 ? r.parsum / r.plain : 0.0, bound,
            bound > 0 ? 100.0 * mine / bound : 0.0, r.check);
}

template <class T>
int run_typed(seg_env &e)
{
    const parsum_bench_args *g = e.args;
    const size_t n = g->n != 0 ? g->n : ((size_t)1 << 26);
    if (n >= ((size_t)1 << 31)) {
        fprintf(stderr, "parsum bench: the CUB peer takes int sizes: "
                        "n must be below 2^31\n");
        return 2;
    }
    if (!g->json)
        print_header(stdout, e, n);
    int rc = 0;
    for (int d = 0; d < PB_SEG_DIST_COUNT; ++d) {
        if (g->seg_dist >= 0 && d != g->seg_dist)
            continue;
        seg_result r;
        measure<T>(e, (pb_seg_dist)d, n, r);
        print_row(stdout, e, (pb_seg_dist)d, r);
        fflush(stdout);
        if (!r.ok)
            rc = 1;
    }
    return rc;
}

} /* namespace */

extern "C" int parsum_bench_cuda_segmented(const parsum_bench_args *args)
{
    seg_env e;
    memset(&e, 0, sizeof e);
    e.args = args;
    if (strcmp(args->what, "segscan") == 0)
        e.what = SEGSCAN;
    else if (strcmp(args->what, "scanbykey") == 0)
        e.what = SCANBYKEY;
    else if (strcmp(args->what, "segreduce") == 0)
        e.what = SEGREDUCE;
    else if (strcmp(args->what, "reducebykey") == 0)
        e.what = REDUCEBYKEY;
    else
        return 2;
    if (args->op != PARSUM_SUM || args->flags != 0u || args->inplace) {
        fprintf(stderr, "parsum bench %s --backend cuda: the CUB peer is "
                        "measured for --op sum, inclusive, forward, out of "
                        "place only\n",
                args->what);
        return 2;
    }
    if (!open_device(&e.ctx, &e.prop, &e.d_stats, &e.d_sink))
        return 1;
    e.blocks = e.prop.multiProcessorCount * 8;
    int rc = 1;
    try {
        switch (args->dtype) {
        case PARSUM_I32: rc = run_typed<int32_t>(e); break;
        case PARSUM_U32: rc = run_typed<uint32_t>(e); break;
        case PARSUM_F32: rc = run_typed<float>(e); break;
        case PARSUM_F64: rc = run_typed<double>(e); break;
        case PARSUM_I64: rc = run_typed<int64_t>(e); break;
        default:
            fprintf(stderr, "parsum bench %s --backend cuda: dtype %s is not "
                            "measured (i32 u32 i64 f32 f64 are)\n",
                    args->what, parsum_dtype_name(args->dtype));
            rc = 2;
        }
    } catch (const bench_error &) {
        rc = 1;
    }
    close_device(e.ctx, e.d_stats, e.d_sink);
    return rc;
}
