/*
 * opencv_peer.cpp - parsum's image functions against OpenCV, the usual
 * peer for them on the CPU: cv::integral (CV_8U -> CV_32S, and the sum +
 * squared sum variant, CV_32S + CV_64F) against parsum_integral (u8 ->
 * u32; plus u8 -> f64 SQUARED for the variant), and cv::blur (BORDER_
 * REFLECT_101, OpenCV's default, BORDER_CONSTANT and BORDER_REPLICATE;
 * parsum's REFLECT_101, ZERO and CLAMP) against parsum_box_filter, radius
 * 1, 3, 7 and 15, on the same u8 images (parsum reads the cv::Mat's pixels
 * in place, its step as the pitch). OpenCV runs with its default thread
 * count and with cv::setNumThreads(1); parsum with the context's. Also the
 * faster of a multi-threaded memcpy and a non-temporal copy moving the
 * same bytes (integral 5 bytes per pixel, 13 with the squared sums; blur 2),
 * so each row shows parsum's share of the copy bandwidth. Figures are
 * medians of repeated runs after a warm-up, the cache evicted before each
 * run of large data.
 *
 * Checks: integral tables bit for bit (CV_32S wraps as parsum's U32; the
 * squared sums are exact integers in float64); blur outputs may differ by
 * one where OpenCV rounds a half differently (it scales the sum by a
 * fixed-point or float reciprocal), so the row shows the largest
 * difference and "ok" when it is at most 1.
 *
 *   parsum_bench_opencv [--n SIDE|sweep] [--threads T] [--reps R]
 *
 * Built only when OpenCV (core, imgproc) is found; OpenCV is linked into
 * this program alone.
 */
#include "bench_cpu_util.h"
#include "parsum.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Options {
    std::vector<size_t> sides{8192};
    int threads = 0;
    int reps = 0;
};

struct Row {
    std::string name;
    size_t side;
    double parsum, cv, cv1, bound; /* medians, seconds */
    double bytes;                  /* bytes the operation moves */
    int maxdiff;                   /* largest |parsum - OpenCV| */
    bool ok;
};

struct Bench {
    parsum_context *ctx = nullptr;
    Options opt;
    int threads = 1, cv_threads = 1;
    pb_scrub scrub{};
};

/* Times fn() `reps` times after a warm-up, each run preceded by the cache
 * eviction; returns the median. reps 0: about 1.5 s worth, at least 5. */
double median_time(Bench &b, const std::function<bool()> &fn, bool *ok)
{
    pb_scrub_run(&b.scrub, b.threads);
    double t0 = pb_now();
    *ok = fn() && *ok;
    double warm = pb_now() - t0;
    int reps = b.opt.reps > 0 ? b.opt.reps : pb_auto_reps(4.0 * warm);
    std::vector<double> t(static_cast<size_t>(reps));
    for (double &x : t) {
        pb_scrub_run(&b.scrub, b.threads);
        t0 = pb_now();
        *ok = fn() && *ok;
        x = pb_now() - t0;
    }
    return pb_median(t.data(), reps);
}

/* OpenCV with its default thread count, then with one thread. */
void time_cv(Bench &b, Row &r, const std::function<bool()> &fn, bool *ok)
{
    r.cv = median_time(b, fn, ok);
    cv::setNumThreads(1);
    r.cv1 = median_time(b, fn, ok);
    cv::setNumThreads(b.cv_threads);
}

/* The faster copy of `bytes` bytes moved (half read, half written) within
 * buf (at least bytes / 2 * 2 long). */
double time_bound(Bench &b, unsigned char *buf, size_t bytes, bool *ok)
{
    size_t half = bytes / 2;
    double a = median_time(b, [&] {
        pb_copy(buf + half, buf, half, b.threads);
        return true;
    }, ok);
    double s = median_time(b, [&] {
        pb_copy_stream(buf + half, buf, half, b.threads);
        return true;
    }, ok);
    return std::min(a, s);
}

/* Random bytes, the same on every run. */
void fill(cv::Mat &m)
{
    for (int y = 0; y < m.rows; y++)
        for (int x = 0; x < m.cols; x++)
            m.at<uint8_t>(y, x) = static_cast<uint8_t>(
                pb_hash64(uint64_t(y) * uint64_t(m.cols) + uint64_t(x)));
}

std::string cpu_model()
{
    std::string model = "unknown CPU";
    FILE *f = std::fopen("/proc/cpuinfo", "r");
    if (f == nullptr)
        return model;
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
        const char *colon = std::strchr(line, ':');
        if (std::strncmp(line, "model name", 10) == 0 && colon != nullptr) {
            model = colon + (colon[1] == ' ' ? 2 : 1);
            model.erase(model.find_last_not_of("\n") + 1);
            break;
        }
    }
    std::fclose(f);
    return model;
}

parsum_image wrap(const cv::Mat &m, parsum_dtype d)
{
    parsum_image im{};
    im.data = m.data;
    im.width = static_cast<size_t>(m.cols);
    im.height = static_cast<size_t>(m.rows);
    im.pitch = m.step;
    im.channels = 1;
    im.dtype = d;
    im.where = PARSUM_MEM_HOST;
    return im;
}

bool same_bits(const cv::Mat &a, const cv::Mat &b)
{
    size_t row = static_cast<size_t>(a.cols) * a.elemSize();
    for (int y = 0; y < a.rows; y++)
        if (std::memcmp(a.ptr(y), b.ptr(y), row) != 0)
            return false;
    return true;
}

int max_diff(const cv::Mat &a, const cv::Mat &b)
{
    cv::Mat d;
    cv::absdiff(a, b, d);
    double mx = 0;
    cv::minMaxLoc(d, nullptr, &mx);
    return static_cast<int>(mx);
}

bool integral_rows(Bench &b, const cv::Mat &src, size_t side,
                   std::vector<Row> &rows)
{
    int n = static_cast<int>(side);
    cv::Mat sum(n + 1, n + 1, CV_32S), sq(n + 1, n + 1, CV_64F);
    cv::Mat psum(n + 1, n + 1, CV_32S), psq(n + 1, n + 1, CV_64F);
    sum = 0;
    sq = 0;
    psum = 0;
    psq = 0;
    parsum_image s = wrap(src, PARSUM_U8), t = wrap(psum, PARSUM_U32);
    parsum_image t2 = wrap(psq, PARSUM_F64);
    double px = double(side) * double(side);
    bool ok = true;
    Row r{"integral u8->u32", side, 0, 0, 0, 0, 5 * px, 0, true};
    r.parsum = median_time(b, [&] {
        return parsum_integral(b.ctx, &s, &t, 0, nullptr) == PARSUM_OK;
    }, &ok);
    time_cv(b, r, [&] {
        cv::integral(src, sum, CV_32S);
        return true;
    }, &ok);
    r.ok = ok && same_bits(sum, psum);
    r.bound = time_bound(b, sq.data, static_cast<size_t>(r.bytes), &ok);
    rows.push_back(r);
    Row q{"integral +sqsum f64", side, 0, 0, 0, 0, 13 * px, 0, true};
    q.parsum = median_time(b, [&] {
        return parsum_integral(b.ctx, &s, &t, 0, nullptr) == PARSUM_OK &&
               parsum_integral(b.ctx, &s, &t2, PARSUM_INTEGRAL_SQUARED,
                               nullptr) == PARSUM_OK;
    }, &ok);
    time_cv(b, q, [&] {
        cv::integral(src, sum, sq, CV_32S, CV_64F);
        return true;
    }, &ok);
    q.ok = ok && same_bits(sum, psum) && same_bits(sq, psq);
    q.bound = r.bound * 13.0 / 5.0;
    rows.push_back(q);
    return true;
}

void blur_rows(Bench &b, const cv::Mat &src, size_t side,
               std::vector<Row> &rows)
{
    struct Border {
        int cv;
        parsum_border ps;
        const char *name;
    };
    static const Border borders[] = {
        {cv::BORDER_REFLECT_101, PARSUM_BORDER_REFLECT_101, "reflect101"},
        {cv::BORDER_CONSTANT, PARSUM_BORDER_ZERO, "constant"},
        {cv::BORDER_REPLICATE, PARSUM_BORDER_CLAMP, "replicate"}};
    static const int radii[] = {1, 3, 7, 15};
    int n = static_cast<int>(side);
    cv::Mat dst(n, n, CV_8U), pdst(n, n, CV_8U);
    dst = 0;
    pdst = 0;
    parsum_image s = wrap(src, PARSUM_U8), d = wrap(pdst, PARSUM_U8);
    double px = double(side) * double(side);
    bool bok = true;
    cv::Mat scratch(n, n, CV_8U); /* the copies' buffer */
    scratch = 0;
    double bound = 2.0 * time_bound(b, scratch.data, side * side, &bok);
    for (const Border &bd : borders)
        for (int rad : radii) {
            bool ok = true;
            Row r{"blur r=" + std::to_string(rad) + " " + bd.name, side, 0, 0,
                  0, 0, 2 * px, 0, true};
            size_t ru = static_cast<size_t>(rad);
            r.parsum = median_time(b, [&] {
                return parsum_box_filter(b.ctx, &s, &d, ru, ru, bd.ps) ==
                       PARSUM_OK;
            }, &ok);
            cv::Size k(2 * rad + 1, 2 * rad + 1);
            time_cv(b, r, [&] {
                cv::blur(src, dst, k, cv::Point(-1, -1), bd.cv);
                return true;
            }, &ok);
            r.bound = bound;
            r.maxdiff = max_diff(dst, pdst);
            r.ok = ok && r.maxdiff <= 1;
            rows.push_back(r);
        }
}

void print_rows(const Bench &b, const std::vector<Row> &rows)
{
    std::printf("parsum %s vs OpenCV %s on %s: u8 images, parsum %d threads, "
                "OpenCV %d threads (default) and 1\n",
                parsum_version(), CV_VERSION, cpu_model().c_str(), b.threads,
                b.cv_threads);
    std::printf("speedup = OpenCV's faster time / parsum's; %%copy = parsum "
                "GB/s / the faster copy's GB/s (same bytes)\n\n");
    std::printf("%-22s %6s %10s %7s %10s %10s %8s %7s %5s %s\n", "case",
                "side", "parsum ms", "Gpx/s", "cv ms", "cv1 ms", "speedup",
                "%copy", "diff", "check");
    for (const Row &r : rows) {
        double px = double(r.side) * double(r.side);
        double best = std::min(r.cv, r.cv1);
        std::printf("%-22s %6zu %10.3f %7.3f %10.3f %10.3f %7.2fx %6.1f%% "
                    "%5d %s\n",
                    r.name.c_str(), r.side, r.parsum * 1e3,
                    px / r.parsum * 1e-9, r.cv * 1e3, r.cv1 * 1e3,
                    best / r.parsum, 100.0 * r.bound / r.parsum, r.maxdiff,
                    r.ok ? "ok" : "FAIL");
    }
}

int usage(const char *msg, const char *arg)
{
    std::fprintf(stderr,
                 "parsum_bench_opencv: %s%s\nusage: parsum_bench_opencv "
                 "[--n SIDE|sweep] [--threads T] [--reps R]\n",
                 msg, arg);
    return 2;
}

int parse(int argc, char **argv, Options &o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
            usage("parsum vs OpenCV integral and blur", "");
            std::exit(0);
        }
        if (i + 1 >= argc)
            return usage("unknown option or missing value: ", a);
        const char *v = argv[++i];
        if (!std::strcmp(a, "--n")) {
            size_t side = 0;
            if (!std::strcmp(v, "sweep"))
                o.sides = {1024, 2048, 4096, 8192};
            else if (pb_parse_count(v, &side) != 0 || side > 32768)
                return usage("bad --n (the side, at most 32768): ", v);
            else
                o.sides = {side};
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
        std::fprintf(stderr, "parsum_bench_opencv: %s\n",
                     parsum_status_name(st));
        return 1;
    }
    if (b.opt.threads > 0)
        parsum_context_set_threads(b.ctx, b.opt.threads);
    b.threads = parsum_context_threads(b.ctx);
    b.cv_threads = cv::getNumThreads();
    std::vector<Row> rows;
    for (size_t side : b.opt.sides) {
        int n = static_cast<int>(side);
        cv::Mat src(n, n, CV_8U);
        fill(src);
        /* working set: the source and the largest output (f64 table) */
        pb_scrub_init(&b.scrub, side * side * 9, b.threads);
        integral_rows(b, src, side, rows);
        blur_rows(b, src, side, rows);
        pb_scrub_free(&b.scrub);
    }
    print_rows(b, rows);
    bool ok = true;
    for (const Row &r : rows)
        ok = ok && r.ok;
    parsum_context_destroy(b.ctx);
    return ok ? 0 : 1;
}
