/*
 * tbb_peer.cpp - parsum against oneTBB, the usual CPU peer: tbb::parallel_scan
 * (inclusive sum) and tbb::parallel_reduce (sum) on i32 and f64, next to
 * parsum_scan / parsum_reduce and the machine's bandwidth bound measured in
 * the same run (multi-threaded memcpy for scans: n*size read + n*size
 * written; multi-threaded read for reductions: n*size read). All run on
 * the same data with the same thread count; figures are medians of
 * repeated runs after a warm-up. Also stream compaction (keep x < 4 of
 * the i32 input, digits 0..7: half of them): parsum_select against the pack TBB's own
 * documentation builds from parallel_scan (count in the pre-scan, write
 * in the final scan), n*4 read + k*4 written, bound as for scans. And
 * sorting n random u32 keys: parsum_sort (out of place) against
 * tbb::parallel_sort (in place, so each run first copies the keys: that
 * copy's median time is subtracted), counted as n*4 read + n*4 written,
 * i.e. in copies of the keys (an LSD radix sort makes one per pass).
 *
 *   parsum_bench_tbb [--n N] [--threads T] [--reps R]
 *
 * Built only when TBB is found; TBB is linked into this program alone.
 */
#include "bench_cpu_util.h"
#include "parsum.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_scan.h>
#include <tbb/parallel_sort.h>
#include <tbb/version.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <vector>

namespace {

struct Options {
    size_t n = size_t(1) << 26;
    int threads = 0;
    int reps = 0;
};

/* Medians of one case, seconds. */
struct Row {
    const char *name;
    double parsum, tbb, bound;
    double bytes; /* bytes the primitive moves */
    bool scan;
    bool agree;
};

/* i32 sums wrap modulo 2^32 (as in parsum) without signed overflow. */
inline int32_t add(int32_t a, int32_t b)
{
    return static_cast<int32_t>(static_cast<uint32_t>(a) +
                                static_cast<uint32_t>(b));
}
inline double add(double a, double b) { return a + b; }

void fill(int32_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = static_cast<int32_t>(pb_hash64(i) % 8);
}
void fill(double *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = static_cast<double>(pb_hash64(i) >> 11) * 0x1.0p-53;
}

parsum_dtype dtype_of(int32_t) { return PARSUM_I32; }
parsum_dtype dtype_of(double) { return PARSUM_F64; }

template <typename T> void tbb_scan(const T *in, T *out, size_t n)
{
    tbb::parallel_scan(
        tbb::blocked_range<size_t>(0, n), T(0),
        [in, out](const tbb::blocked_range<size_t> &r, T sum, bool is_final) {
            for (size_t i = r.begin(); i < r.end(); i++) {
                sum = add(sum, in[i]);
                if (is_final)
                    out[i] = sum;
            }
            return sum;
        },
        [](T a, T b) { return add(a, b); });
}

template <typename T> T tbb_reduce(const T *in, size_t n)
{
    return tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, n), T(0),
        [in](const tbb::blocked_range<size_t> &r, T sum) {
            for (size_t i = r.begin(); i < r.end(); i++)
                sum = add(sum, in[i]);
            return sum;
        },
        [](T a, T b) { return add(a, b); });
}

/* The elements x < 4 of in, packed into out in order; returns how many.
 * The pre-scan pass counts, the final pass writes at the running count. */
size_t tbb_select(const int32_t *in, int32_t *out, size_t n)
{
    return tbb::parallel_scan(
        tbb::blocked_range<size_t>(0, n), size_t(0),
        [in, out](const tbb::blocked_range<size_t> &r, size_t k,
                  bool is_final) {
            for (size_t i = r.begin(); i < r.end(); i++)
                if (in[i] < 4) {
                    if (is_final)
                        out[k] = in[i];
                    k++;
                }
            return k;
        },
        [](size_t a, size_t b) { return a + b; });
}

/* Times fn() `reps` times after a warm-up, each run preceded by an
 * untimed cache eviction (when the data do not fit in the cache); returns
 * the median. A reps of 0 is replaced by a count that takes about 1.5 s
 * (at least 5). */
double median_time(const std::function<bool()> &fn, pb_scrub *scrub,
                   int threads, int *reps, bool *ok)
{
    pb_scrub_run(scrub, threads);
    double t0 = pb_now();
    *ok = fn() && *ok;
    double warm = pb_now() - t0;
    if (*reps <= 0)
        *reps = pb_auto_reps(3.0 * warm);
    std::vector<double> t(static_cast<size_t>(*reps));
    for (double &x : t) {
        pb_scrub_run(scrub, threads);
        t0 = pb_now();
        *ok = fn() && *ok;
        x = pb_now() - t0;
    }
    return pb_median(t.data(), *reps);
}

struct Bench {
    parsum_context *ctx = nullptr;
    Options opt;
    int threads = 1;
    uint64_t sink = 0;
    pb_scrub scrub{};
};

template <typename T>
Row run_case(Bench &b, const T *in, T *out, bool scan, const char *name)
{
    const size_t n = b.opt.n, bytes = n * sizeof(T);
    const parsum_dtype dt = dtype_of(T());
    Row row{name, 0, 0, 0, double(bytes) * (scan ? 2.0 : 1.0), scan, true};
    bool ok = true;
    int reps = b.opt.reps;
    T pr = T(0), tr = T(0);
    uint64_t psum = 0, tsum = 0;
    auto run_parsum = [&] {
        return (scan ? parsum_scan(b.ctx, in, out, n, dt, PARSUM_SUM, 0)
                     : parsum_reduce(b.ctx, in, n, dt, PARSUM_SUM, &pr)) ==
               PARSUM_OK;
    };
    auto run_tbb = [&] {
        if (scan)
            tbb_scan(in, out, n);
        else
            tr = tbb_reduce(in, n);
        return true;
    };
    auto run_bound = [&] {
        if (scan)
            pb_copy(out, in, bytes, b.threads);
        else
            b.sink += pb_read(in, bytes, b.threads);
        return true;
    };
    auto run_stream = [&] {
        pb_copy_stream(out, in, bytes, b.threads);
        return true;
    };
    row.parsum = median_time(run_parsum, &b.scrub, b.threads, &reps, &ok);
    if (scan)
        psum = pb_checksum(out, bytes, b.threads);
    row.tbb = median_time(run_tbb, &b.scrub, b.threads, &reps, &ok);
    if (scan)
        tsum = pb_checksum(out, bytes, b.threads);
    row.bound = median_time(run_bound, &b.scrub, b.threads, &reps, &ok);
    if (scan) /* the faster of memcpy and the streaming copy */
        row.bound = std::min(row.bound, median_time(run_stream, &b.scrub,
                                                    b.threads, &reps, &ok));
    /* Integer results must match exactly; float sums are combined in a
     * different order, so only the reductions are compared, loosely. */
    if (dt == PARSUM_I32)
        row.agree = ok && psum == tsum && pr == tr;
    else
        row.agree = ok && (scan || (double(pr) - double(tr)) *
                                           (double(pr) - double(tr)) <=
                                       1e-18 * double(tr) * double(tr));
    return row;
}

/* Stream compaction of i32: x < 4 (half of the digits 0..7). */
Row run_select(Bench &b, const int32_t *in, int32_t *out)
{
    const size_t n = b.opt.n, bytes = n * sizeof(int32_t);
    parsum_selector neg{};
    neg.kind = PARSUM_SELECT_PREDICATE;
    neg.dtype = PARSUM_I32;
    neg.pred = PARSUM_PRED_LT;
    neg.a.i32 = 4;
    bool ok = true;
    int reps = b.opt.reps;
    size_t pk = 0, tk = 0;
    auto run_parsum = [&] {
        return parsum_select(b.ctx, in, out, n, 4, &neg, &pk) == PARSUM_OK;
    };
    auto run_tbb = [&] {
        tk = tbb_select(in, out, n);
        return true;
    };
    auto run_copy = [&] {
        pb_copy(out, in, bytes, b.threads);
        return true;
    };
    auto run_stream = [&] {
        pb_copy_stream(out, in, bytes, b.threads);
        return true;
    };
    Row row{"select i32 50%", 0, 0, 0, 0, true, true};
    row.parsum = median_time(run_parsum, &b.scrub, b.threads, &reps, &ok);
    uint64_t psum = pb_checksum(out, pk * 4, b.threads);
    row.tbb = median_time(run_tbb, &b.scrub, b.threads, &reps, &ok);
    uint64_t tsum = pb_checksum(out, tk * 4, b.threads);
    row.bound = std::min(
        median_time(run_copy, &b.scrub, b.threads, &reps, &ok),
        median_time(run_stream, &b.scrub, b.threads, &reps, &ok));
    /* the bound moves n*4 in and n*4 out; parsum and TBB n*4 in, k*4 out */
    row.bytes = double(bytes) + double(pk) * 4.0;
    row.bound *= row.bytes / (2.0 * double(bytes));
    row.agree = ok && pk == tk && psum == tsum;
    return row;
}

/* n random u32 keys sorted: parsum_sort against tbb::parallel_sort. */
Row run_sort(Bench &b)
{
    const size_t n = b.opt.n, bytes = n * sizeof(uint32_t);
    std::vector<uint32_t> keys(n), pout(n), tout(n);
    for (size_t i = 0; i < n; i++)
        keys[i] = static_cast<uint32_t>(pb_hash64(i ^ 0x5eedull));
    pb_copy(pout.data(), keys.data(), bytes, b.threads); /* first touch */
    pb_copy(tout.data(), keys.data(), bytes, b.threads);
    parsum_sort_desc d{};
    d.key_dtype = PARSUM_U32;
    bool ok = true;
    int reps = b.opt.reps;
    auto run_parsum = [&] {
        return parsum_sort(b.ctx, keys.data(), nullptr, pout.data(), nullptr,
                           n, &d) == PARSUM_OK;
    };
    auto run_tbb = [&] {
        pb_copy(tout.data(), keys.data(), bytes, b.threads);
        tbb::parallel_sort(tout.begin(), tout.end());
        return true;
    };
    auto run_copy = [&] {
        pb_copy(tout.data(), keys.data(), bytes, b.threads);
        return true;
    };
    auto run_stream = [&] {
        pb_copy_stream(tout.data(), keys.data(), bytes, b.threads);
        return true;
    };
    Row row{"sort u32", 0, 0, 0, 2.0 * double(bytes), true, true};
    row.parsum = median_time(run_parsum, &b.scrub, b.threads, &reps, &ok);
    row.tbb = median_time(run_tbb, &b.scrub, b.threads, &reps, &ok);
    uint64_t tsum = pb_checksum(tout.data(), bytes, b.threads);
    double copy = median_time(run_copy, &b.scrub, b.threads, &reps, &ok);
    row.tbb -= copy;
    row.bound = std::min(copy, median_time(run_stream, &b.scrub, b.threads,
                                           &reps, &ok));
    row.agree = ok && pb_checksum(pout.data(), bytes, b.threads) == tsum;
    return row;
}

template <typename T>
bool run_type(Bench &b, const char *scan_name, const char *reduce_name,
              std::vector<Row> &rows)
{
    void *in = nullptr, *out = nullptr;
    const size_t bytes = b.opt.n * sizeof(T);
    if (parsum_alloc(b.ctx, &in, bytes) != PARSUM_OK ||
        parsum_alloc(b.ctx, &out, bytes) != PARSUM_OK) {
        std::fprintf(stderr, "parsum_bench_tbb: %s\n",
                     parsum_last_error(b.ctx));
        parsum_free(b.ctx, in);
        return false;
    }
    fill(static_cast<T *>(in), b.opt.n);
    pb_copy(out, in, bytes, b.threads); /* first touch */
    pb_scrub_init(&b.scrub, 2 * bytes, b.threads);
    rows.push_back(run_case<T>(b, static_cast<const T *>(in),
                               static_cast<T *>(out), true, scan_name));
    rows.push_back(run_case<T>(b, static_cast<const T *>(in),
                               static_cast<T *>(out), false, reduce_name));
    if (dtype_of(T()) == PARSUM_I32)
        rows.push_back(run_select(b, static_cast<const int32_t *>(in),
                                  static_cast<int32_t *>(out)));
    pb_scrub_free(&b.scrub);
    parsum_free(b.ctx, in);
    parsum_free(b.ctx, out);
    return true;
}

void print_rows(const Bench &b, const std::vector<Row> &rows)
{
    char nbuf[32];
    std::printf("parsum %s vs oneTBB %d.%d: n = %s, %d threads, median of "
                "repeated runs\n",
                parsum_version(), TBB_VERSION_MAJOR, TBB_VERSION_MINOR,
                pb_format_count(b.opt.n, nbuf, sizeof nbuf), b.threads);
    std::printf("bound: the faster of a multi-threaded memcpy and a copy "
                "with non-temporal stores for scans and select (read +\n"
                "write; for select its time scaled to the bytes select "
                "moves), a multi-threaded read for reductions%s\n\n",
                b.opt.n * 16 >= (size_t(1) << 26)
                    ? "; cache evicted before each run of large data"
                    : "");
    std::printf("%-16s %10s %8s %10s %8s %8s %9s %9s %8s %6s\n", "case",
                "parsum ms", "GB/s", "tbb ms", "GB/s", "bound", "parsum/b",
                "tbb/b", "vs tbb", "check");
    for (const Row &r : rows) {
        double pg = r.bytes / r.parsum * 1e-9, tg = r.bytes / r.tbb * 1e-9;
        double bg = r.bytes / r.bound * 1e-9;
        std::printf("%-16s %10.3f %8.2f %10.3f %8.2f %8.2f %8.1f%% %8.1f%% "
                    "%7.2fx %6s\n",
                    r.name, r.parsum * 1e3, pg, r.tbb * 1e3, tg, bg,
                    100.0 * pg / bg, 100.0 * tg / bg, r.tbb / r.parsum,
                    r.agree ? "ok" : "FAIL");
    }
}

int usage(const char *msg, const char *arg)
{
    std::fprintf(stderr,
                 "parsum_bench_tbb: %s%s\nusage: parsum_bench_tbb [--n N] "
                 "[--threads T] [--reps R]\n",
                 msg, arg);
    return 2;
}

int parse(int argc, char **argv, Options &o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
            usage("parsum vs TBB scan/reduce/select/sort", "");
            std::exit(0);
        }
        if (i + 1 >= argc)
            return usage("unknown option or missing value: ", a);
        const char *v = argv[++i];
        if (!std::strcmp(a, "--n")) {
            if (pb_parse_count(v, &o.n) != 0)
                return usage("bad --n: ", v);
        } else if (!std::strcmp(a, "--threads")) {
            o.threads = std::atoi(v);
            if (o.threads < 1)
                return usage("bad --threads: ", v);
        } else if (!std::strcmp(a, "--reps")) {
            o.reps = std::atoi(v);
            if (o.reps < 1)
                return usage("bad --reps: ", v);
        } else {
            return usage("unknown option: ", a);
        }
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Bench b;
    if (int rc = parse(argc, argv, b.opt))
        return rc;
    parsum_status st = parsum_context_create(&b.ctx, PARSUM_BACKEND_CPU);
    if (st != PARSUM_OK) {
        std::fprintf(stderr, "parsum_bench_tbb: %s\n", parsum_status_name(st));
        return 1;
    }
    if (b.opt.threads > 0)
        parsum_context_set_threads(b.ctx, b.opt.threads);
    b.threads = parsum_context_threads(b.ctx);
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<size_t>(b.threads));
    std::vector<Row> rows;
    bool ok = run_type<int32_t>(b, "scan i32 sum", "reduce i32 sum", rows) &&
              run_type<double>(b, "scan f64 sum", "reduce f64 sum", rows);
    if (ok) {
        pb_scrub_init(&b.scrub, 3 * b.opt.n * sizeof(uint32_t), b.threads);
        rows.push_back(run_sort(b));
        pb_scrub_free(&b.scrub);
    }
    if (ok)
        print_rows(b, rows);
    for (const Row &r : rows)
        ok = ok && r.agree;
    if (b.sink == 0x5eed)
        std::printf(" \n");
    parsum_context_destroy(b.ctx);
    return ok ? 0 : 1;
}
