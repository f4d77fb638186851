#define _POSIX_C_SOURCE 200809L
/*
 * test_histogram.c - parsum_histogram against the serial reference
 * (src/ref/ref_histogram.c), every strategy (AUTO, ATOMIC_GLOBAL,
 * PRIVATIZED, SORT_REDUCE_BY_KEY) on the same input, so that they are
 * also checked to agree bit for bit with each other.
 *
 *   dtypes     every sample dtype; uniform samples over a range a little
 *              wider than the bins' (some below lo, some at or above hi),
 *              all samples in one bin, Zipf-skewed (bin k with weight
 *              about 1 / k); every 13th sample an edge: lo, hi, lo - 1,
 *              hi - 1, a bin edge, the dtype's extremes, and for floats
 *              NaN, +-inf, -0.0 and the float just below hi
 *   bins       1, 2, 255, 256, 257, 1024, 65536 and 2^24, even bins whose
 *              width is a power of two (SHIFT), odd widths (DIV64), 64-bit
 *              ranges with odd bin counts (DIV128), range bins (levels) of
 *              every kind, 64-bit ones among them
 *   channels   1 to 4 interleaved, different bins per channel, some
 *              counts[c] NULL
 *   counts     U32 and U64, ACCUMULATE onto random counts (U32 near 2^32,
 *              so that the sums wrap), outputs poisoned otherwise
 *   sizes      0, 1, odd sizes, around the CPU's 2048-pixel blocks and its
 *              thread split, 10^6 unless PARSUM_TEST_QUICK; the private
 *              counters' flushes (PARSUM_CPU_HIST_ROUND) on small inputs;
 *              1, 2 and 3 threads.
 * Errors are in test_histogram_errors.c.
 */
#include "test_util.h"

#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const parsum_hist_strategy strategies[] = {
    PARSUM_HIST_AUTO, PARSUM_HIST_ATOMIC_GLOBAL, PARSUM_HIST_PRIVATIZED,
    PARSUM_HIST_SORT_REDUCE_BY_KEY};
static const char *const strategy_names[] = {"auto", "atomic", "privatized",
                                             "sort"};
static const char *const dtype_names[] = {"i8",  "u8",  "i16", "u16", "i32",
                                          "u32", "i64", "u64", "f32", "f64"};

/* ---- samples -------------------------------------------------------------- */

static bool is_u64(parsum_dtype d)
{
    return d == PARSUM_U64;
}

/* The dtype's value range, widened (signed kind). */
static void int_limits(parsum_dtype d, int64_t *mn, int64_t *mx)
{
    switch (d) {
    case PARSUM_I8: *mn = INT8_MIN; *mx = INT8_MAX; break;
    case PARSUM_U8: *mn = 0; *mx = UINT8_MAX; break;
    case PARSUM_I16: *mn = INT16_MIN; *mx = INT16_MAX; break;
    case PARSUM_U16: *mn = 0; *mx = UINT16_MAX; break;
    case PARSUM_I32: *mn = INT32_MIN; *mx = INT32_MAX; break;
    case PARSUM_U32: *mn = 0; *mx = UINT32_MAX; break;
    default: *mn = INT64_MIN; *mx = INT64_MAX; break;
    }
}

/* Stores a value of the sample's widened kind as element i of buf:
 * integers clamped to the dtype's range. */
static void put_i(parsum_dtype d, void *buf, size_t i, int64_t v)
{
    int64_t mn, mx;
    int_limits(d, &mn, &mx);
    v = v < mn ? mn : v > mx ? mx : v;
    switch (d) {
    case PARSUM_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case PARSUM_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case PARSUM_I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case PARSUM_U16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case PARSUM_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case PARSUM_U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    default: ((int64_t *)buf)[i] = v; break;
    }
}

static void put_f(parsum_dtype d, void *buf, size_t i, double v)
{
    if (d == PARSUM_F32)
        ((float *)buf)[i] = (float)v;
    else
        ((double *)buf)[i] = v;
}

typedef enum { DIST_UNIFORM, DIST_ONE_BIN, DIST_ZIPF, DIST_COUNT } dist;
static const char *const dist_names[] = {"uniform", "one-bin", "zipf"};

/* A random value in [a, b] (inclusive; a <= b) of the widened kinds. */
static int64_t rand_i(tu_rng *r, int64_t a, int64_t b)
{
    uint64_t span = (uint64_t)b - (uint64_t)a;
    uint64_t x = span == UINT64_MAX ? tu_next(r) : tu_below(r, span + 1);
    return (int64_t)((uint64_t)a + x);
}

static uint64_t rand_u(tu_rng *r, uint64_t a, uint64_t b)
{
    uint64_t span = b - a;
    return a + (span == UINT64_MAX ? tu_next(r) : tu_below(r, span + 1));
}

/* Log-uniform in [0, nbins): weight about 1 / (k + 1). */
static uint64_t zipf_bin(tu_rng *r, size_t nbins)
{
    double k = exp(tu_uniform(r) * log((double)nbins + 1.0)) - 1.0;
    uint64_t b = (uint64_t)k;
    return b >= nbins ? nbins - 1 : b;
}

/* Channel c's samples of n pixels (stride ch) for even bins b. */
static void gen_even(tu_rng *r, parsum_dtype d, dist ds,
                     const parsum_hist_bins *b, void *buf, size_t n, int ch,
                     int c)
{
    size_t nb = b->nbins;
    if (tu_is_float(d)) {
        double lo = b->lo.f64, hi = b->hi.f64, w = (hi - lo) / (double)nb;
        double one = lo + w * ((double)tu_below(r, nb) + 0.5);
        const double edge[] = {lo, hi, -0.0, NAN, INFINITY, -INFINITY,
                               nextafter(hi, -INFINITY), lo - w, hi + w};
        for (size_t p = 0; p < n; p++) {
            size_t i = p * (size_t)ch + (size_t)c;
            double v;
            if (tu_below(r, 13) == 0) {
                v = tu_below(r, 2) ? lo + w * (double)tu_below(r, nb + 1)
                                   : edge[tu_below(r, 9)];
            } else if (ds == DIST_UNIFORM) {
                v = lo - (hi - lo) / 8 + tu_uniform(r) * (hi - lo) * 1.25;
            } else if (ds == DIST_ONE_BIN) {
                v = one;
            } else {
                v = lo + w * ((double)zipf_bin(r, nb) + tu_uniform(r));
            }
            put_f(d, buf, i, v);
        }
        return;
    }
    if (is_u64(d)) {
        uint64_t lo = b->lo.u64, hi = b->hi.u64, w = (hi - lo) / nb;
        uint64_t slack = (hi - lo) / 8;
        uint64_t a0 = lo > slack ? lo - slack : 0;
        uint64_t a1 = hi < UINT64_MAX - slack ? hi + slack : UINT64_MAX;
        uint64_t one = lo + w * tu_below(r, nb);
        const uint64_t edge[] = {lo, hi, lo - 1, hi - 1, 0, UINT64_MAX};
        for (size_t p = 0; p < n; p++) {
            uint64_t v;
            if (tu_below(r, 13) == 0)
                v = tu_below(r, 2) ? lo + w * tu_below(r, nb) : edge[tu_below(r, 6)];
            else if (ds == DIST_UNIFORM)
                v = rand_u(r, a0, a1);
            else if (ds == DIST_ONE_BIN)
                v = one;
            else
                v = lo + w * zipf_bin(r, nb) + tu_below(r, w ? w : 1);
            ((uint64_t *)buf)[p * (size_t)ch + (size_t)c] = v;
        }
        return;
    }
    int64_t lo = b->lo.i64, hi = b->hi.i64, mn, mx;
    int_limits(d, &mn, &mx);
    uint64_t span = (uint64_t)hi - (uint64_t)lo, w = span / nb;
    uint64_t slack = span / 8;
    /* [lo - slack, hi + slack] within the dtype */
    int64_t a0 = (uint64_t)lo - (uint64_t)mn > slack ? (int64_t)((uint64_t)lo - slack) : mn;
    int64_t a1 = (uint64_t)mx - (uint64_t)hi > slack ? (int64_t)((uint64_t)hi + slack) : mx;
    int64_t one = (int64_t)((uint64_t)lo + w * tu_below(r, nb));
    const int64_t edge[] = {lo, hi, (int64_t)((uint64_t)lo - 1),
                            (int64_t)((uint64_t)hi - 1), mn, mx};
    for (size_t p = 0; p < n; p++) {
        int64_t v;
        if (tu_below(r, 13) == 0) {
            size_t e = tu_below(r, 6);
            /* lo - 1 and hi would wrap at the int64 extremes */
            bool wraps = (e == 2 && lo == INT64_MIN);
            v = tu_below(r, 2) || wraps
                    ? (int64_t)((uint64_t)lo + w * tu_below(r, nb))
                    : edge[e];
        } else if (ds == DIST_UNIFORM) {
            v = rand_i(r, a0, a1);
        } else if (ds == DIST_ONE_BIN) {
            v = one;
        } else {
            v = (int64_t)((uint64_t)lo + w * zipf_bin(r, nb)
                          + tu_below(r, w ? w : 1));
        }
        put_i(d, buf, p * (size_t)ch + (size_t)c, v);
    }
}

/* ---- running every strategy ---------------------------------------------- */

/* Runs d on the host samples (n pixels) with every strategy and compares
 * each result with the reference; init[c] (host, may be NULL) are the
 * counts an ACCUMULATE call starts from. use[c] false: counts[c] NULL.
 * Returns the mismatching cases. */
static size_t check_all(const char *what, const parsum_histogram_desc *d0,
                        const void *samples, size_t n, const bool use[4])
{
    size_t failures = 0, ss = parsum_dtype_size(d0->sample_dtype);
    size_t cs = parsum_dtype_size(d0->count_dtype);
    size_t total = n * (size_t)d0->channels;
    void *ds = tu_dev_alloc(total * ss);
    tu_upload(ds, samples, total * ss);
    void *init[4] = {NULL}, *want[4] = {NULL}, *got[4] = {NULL};
    void *dc[4] = {NULL};
    bool acc = (d0->flags & PARSUM_HIST_ACCUMULATE) != 0;
    tu_rng r = tu_rng_for(0x4157, n, d0->sample_dtype, d0->bins[0].nbins);
    for (int c = 0; c < d0->channels; c++) {
        if (!use[c])
            continue;
        size_t bytes = d0->bins[c].nbins * cs;
        init[c] = tu_malloc(bytes);
        want[c] = tu_malloc(bytes);
        got[c] = tu_malloc(bytes);
        for (size_t i = 0; i < d0->bins[c].nbins; i++) {
            uint64_t v = tu_next(&r);
            if (cs == 4)
                ((uint32_t *)init[c])[i] = (uint32_t)(v % 2 ? UINT32_MAX - (v >> 60) : v >> 40);
            else
                ((uint64_t *)init[c])[i] = v >> 8;
        }
        memcpy(want[c], init[c], bytes);
        dc[c] = tu_dev_alloc(bytes);
    }
    parsum__ref_histogram(samples, n, d0, want);
    for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
        parsum_histogram_desc d = *d0;
        d.strategy = strategies[s];
        for (int c = 0; c < d.channels; c++) {
            if (!use[c])
                continue;
            size_t bytes = d.bins[c].nbins * cs;
            if (acc)
                tu_upload(dc[c], init[c], bytes);
            else
                tu_dev_poison(dc[c], bytes);
        }
        parsum_status st = parsum_histogram(tu_ctx, ds, n, &d, dc);
        if (st != PARSUM_OK) {
            tu_report(&failures, "  %s %s: %s (%s)\n", what,
                      strategy_names[s], parsum_status_name(st),
                      parsum_last_error(tu_ctx));
            continue;
        }
        for (int c = 0; c < d.channels; c++) {
            if (!use[c])
                continue;
            tu_download(got[c], dc[c], d.bins[c].nbins * cs);
            char tag[300];
            snprintf(tag, sizeof tag, "%s %s channel %d", what,
                     strategy_names[s], c);
            if (tu_compare(d.count_dtype, want[c], got[c], d.bins[c].nbins,
                           NULL, tag) != 0)
                failures++;
        }
    }
    for (int c = 0; c < 4; c++) {
        free(init[c]);
        free(want[c]);
        free(got[c]);
        tu_dev_free(dc[c]);
    }
    tu_dev_free(ds);
    return failures;
}

static const bool all_used[4] = {true, true, true, true};

static parsum_histogram_desc desc1(parsum_dtype st, parsum_dtype ct,
                                   parsum_hist_bins b)
{
    parsum_histogram_desc d;
    memset(&d, 0, sizeof d);
    d.sample_dtype = st;
    d.channels = 1;
    d.count_dtype = ct;
    d.bins[0] = b;
    return d;
}

/* Even bins of a dtype for nbins: `odd` false, a power-of-two width
 * (SHIFT), chosen to cover about the dtype's range; true, an odd span
 * (DIV64; DIV128 for the 64-bit dtypes, whose span times nbins exceeds
 * 2^64). */
static parsum_hist_bins even_bins(parsum_dtype d, size_t nbins, bool odd)
{
    parsum_hist_bins b;
    memset(&b, 0, sizeof b);
    b.nbins = nbins;
    if (tu_is_float(d)) {
        b.lo.f64 = odd ? -3.7 : -64.0;
        b.hi.f64 = odd ? 1000.3 : 64.0;
        return b;
    }
    if (is_u64(d)) {
        b.lo.u64 = odd ? 12345 : (uint64_t)1 << 40;
        b.hi.u64 = odd ? UINT64_MAX - 77 : ((uint64_t)1 << 40) + ((uint64_t)nbins << 20);
        return b;
    }
    int64_t mn, mx;
    int_limits(d, &mn, &mx);
    if (odd) {
        b.lo.i64 = mn / 2 + 3;
        b.hi.i64 = mx - mx / 5;
        if ((uint64_t)b.hi.i64 - (uint64_t)b.lo.i64 < nbins) /* many bins */
            b.hi.i64 = b.lo.i64 + 3 * (int64_t)nbins + 1;
        return b;
    }
    /* width 2^s with nbins << s close to the dtype's span */
    uint64_t span = (uint64_t)mx - (uint64_t)mn;
    unsigned s = 0;
    while (s < 62 && ((uint64_t)nbins << (s + 1)) <= span / 2
           && ((uint64_t)nbins << (s + 1)) >> (s + 1) == nbins)
        s++;
    b.lo.i64 = mn / 4;
    b.hi.i64 = (int64_t)((uint64_t)b.lo.i64 + ((uint64_t)nbins << s));
    return b;
}

static void sizes_list(size_t *sz, size_t *count, bool big)
{
    static const size_t base[] = {0, 1, 2, 3, 31, 2047, 2048, 2049, 4099,
                                  65535, 65537, 200003};
    size_t k = 0;
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        sz[k++] = base[i];
    if (big && !tu_quick)
        sz[k++] = 1000003;
    *count = k;
}

/* One dtype: three distributions, the bin counts of the header's list,
 * both even modes, U32 and U64 counts in turn. */
static void run_dtype(parsum_dtype d, size_t *failures)
{
    static const size_t bins[] = {1, 2, 255, 256, 257, 1024, 65536};
    size_t sz[16], nsz;
    sizes_list(sz, &nsz, false);
    size_t maxn = 200003;
    void *buf = tu_malloc(maxn * parsum_dtype_size(d));
    int k = 0;
    for (size_t bi = 0; bi < sizeof bins / sizeof *bins; bi++)
        for (int odd = 0; odd < 2; odd++)
            for (int ds = 0; ds < DIST_COUNT; ds++, k++) {
                parsum_hist_bins b = even_bins(d, bins[bi], odd != 0);
                parsum_dtype ct = k % 2 ? PARSUM_U64 : PARSUM_U32;
                parsum_histogram_desc desc = desc1(d, ct, b);
                /* every size for some cases, two for the rest */
                size_t pick = (size_t)k % nsz;
                for (size_t si = 0; si < nsz; si++) {
                    if (bins[bi] > 1024 && si != pick && sz[si] != 65537)
                        continue;
                    if (bins[bi] <= 1024 && ds != DIST_UNIFORM && si % 3 != (size_t)k % 3)
                        continue;
                    size_t n = sz[si];
                    tu_rng r = tu_rng_for(d, bins[bi] * 4 + (size_t)odd, (uint64_t)ds, n);
                    gen_even(&r, d, (dist)ds, &b, buf, n, 1, 0);
                    char what[200];
                    snprintf(what, sizeof what, "%s %s %zu bins%s %s n=%zu",
                             dtype_names[d], dist_names[ds], bins[bi],
                             odd ? " (odd span)" : "", ct == PARSUM_U32 ? "u32" : "u64", n);
                    *failures += check_all(what, &desc, buf, n, all_used);
                }
            }
    free(buf);
}

#define DTYPE_TEST(name, dt)                                                 \
    static void test_even_##name(void **state)                               \
    {                                                                        \
        (void)state;                                                         \
        size_t failures = 0;                                                 \
        run_dtype(dt, &failures);                                            \
        assert_int_equal(failures, 0);                                       \
    }
DTYPE_TEST(i8, PARSUM_I8)
DTYPE_TEST(u8, PARSUM_U8)
DTYPE_TEST(i16, PARSUM_I16)
DTYPE_TEST(u16, PARSUM_U16)
DTYPE_TEST(i32, PARSUM_I32)
DTYPE_TEST(u32, PARSUM_U32)
DTYPE_TEST(i64, PARSUM_I64)
DTYPE_TEST(u64, PARSUM_U64)
DTYPE_TEST(f32, PARSUM_F32)
DTYPE_TEST(f64, PARSUM_F64)

/* ---- range bins ----------------------------------------------------------- */

/* nbins + 1 ascending levels of d's widened kind (host), with random gaps
 * (some of width 1), spread over a range a little narrower than the
 * samples'. */
static void *make_levels(tu_rng *r, parsum_dtype d, size_t nbins)
{
    void *lv = tu_malloc((nbins + 1) * 8);
    if (tu_is_float(d)) {
        double x = -100.0 - tu_uniform(r);
        for (size_t i = 0; i <= nbins; i++, x += 0.01 + tu_uniform(r) * 200.0 / (double)nbins)
            ((double *)lv)[i] = d == PARSUM_F32 ? (double)(float)x : x;
        return lv;
    }
    if (is_u64(d)) {
        /* 64-bit levels: gaps of up to 2^63 / nbins from near 2^62 */
        uint64_t x = ((uint64_t)1 << 62) + tu_below(r, 1000);
        for (size_t i = 0; i <= nbins; i++) {
            ((uint64_t *)lv)[i] = x;
            x += 1 + (tu_below(r, 4) ? tu_below(r, ((uint64_t)1 << 63) / nbins) : 0);
        }
        return lv;
    }
    int64_t mn, mx;
    int_limits(d, &mn, &mx);
    uint64_t span = ((uint64_t)mx - (uint64_t)mn) / 2;
    uint64_t gap = span / nbins / 2 > 1 ? span / nbins / 2 : 1;
    int64_t x = mn / 2;
    for (size_t i = 0; i <= nbins; i++) {
        ((int64_t *)lv)[i] = x;
        x = (int64_t)((uint64_t)x + 1 + (tu_below(r, 4) ? tu_below(r, 2 * gap) : 0));
    }
    return lv;
}

/* Samples for range bins: levels exactly, their neighbours, uniform over
 * a wider range, and for floats NaN and infinities. */
static void gen_range(tu_rng *r, parsum_dtype d, const void *lv, size_t nbins,
                      void *buf, size_t n, int ch, int c)
{
    for (size_t p = 0; p < n; p++) {
        size_t i = p * (size_t)ch + (size_t)c, l = tu_below(r, nbins + 1);
        int how = (int)tu_below(r, 4);
        if (tu_is_float(d)) {
            const double *L = lv;
            double span = L[nbins] - L[0];
            double v = how == 0   ? L[l]
                       : how == 1 ? nextafter(L[l], -INFINITY)
                       : how == 2 ? L[0] - span / 8 + tu_uniform(r) * span * 1.25
                                  : (const double[]){NAN, INFINITY, -INFINITY, L[nbins]}[tu_below(r, 4)];
            if (d == PARSUM_F32 && how == 1) /* the float below the level */
                v = (double)nextafterf((float)L[l], -INFINITY);
            put_f(d, buf, i, v);
        } else if (is_u64(d)) {
            const uint64_t *L = lv;
            uint64_t v = how == 0 ? L[l] : how == 1 ? L[l] - 1
                         : rand_u(r, L[0] / 2, L[nbins] + (L[nbins] - L[0]) / 8);
            ((uint64_t *)buf)[i] = v;
        } else {
            const int64_t *L = lv;
            uint64_t span = (uint64_t)L[nbins] - (uint64_t)L[0];
            int64_t v = how == 0 ? L[l] : how == 1 ? L[l] - 1
                        : rand_i(r, L[0] - (int64_t)(span / 8), L[nbins] + (int64_t)(span / 8));
            put_i(d, buf, i, v);
        }
    }
}

static void test_range_bins(void **state)
{
    (void)state;
    size_t failures = 0;
    static const size_t nbins[] = {1, 7, 256, 3001};
    static const size_t ns[] = {0, 1, 2049, 70001};
    size_t maxn = 70001;
    for (int d = 0; d < PARSUM_DTYPE_COUNT; d++) {
        void *buf = tu_malloc(maxn * 8);
        for (size_t bi = 0; bi < 4; bi++)
            for (size_t ni = 0; ni < 4; ni++) {
                tu_rng r = tu_rng_for(0x7a9e, (uint64_t)d, nbins[bi], ns[ni]);
                void *lv = make_levels(&r, (parsum_dtype)d, nbins[bi]);
                parsum_hist_bins b;
                memset(&b, 0, sizeof b);
                b.nbins = nbins[bi];
                b.levels = lv;
                parsum_histogram_desc desc = desc1(
                    (parsum_dtype)d, ni % 2 ? PARSUM_U64 : PARSUM_U32, b);
                gen_range(&r, (parsum_dtype)d, lv, nbins[bi], buf, ns[ni], 1, 0);
                char what[160];
                snprintf(what, sizeof what, "%s range bins %zu n=%zu",
                         dtype_names[d], nbins[bi], ns[ni]);
                failures += check_all(what, &desc, buf, ns[ni], all_used);
                free(lv);
            }
        free(buf);
    }
    assert_int_equal(failures, 0);
}

/* ---- 64-bit even bins: every integer mode -------------------------------- */

static void test_wide_even_modes(void **state)
{
    (void)state;
    size_t failures = 0;
    struct {
        parsum_dtype d;
        int64_t lo, hi; /* .i64, or .u64 bits */
        size_t nbins;
        const char *mode;
    } cases[] = {
        {PARSUM_I64, INT64_MIN, INT64_MAX, 3, "div128"},
        {PARSUM_I64, INT64_MIN, INT64_MAX, 1, "div64"},
        {PARSUM_I64, -((int64_t)1 << 62), (int64_t)1 << 62, 1000003, "div128"},
        {PARSUM_I64, -((int64_t)1 << 62), (int64_t)1 << 62, 1024, "shift"},
        {PARSUM_I64, -1000000007, 999999937, 999, "div64"},
        {PARSUM_U64, 0, -1, 257, "div128"},           /* [0, 2^64 - 1) */
        {PARSUM_U64, 5, (int64_t)1 << 40, 65537, "div64"},
        {PARSUM_U64, 0, INT64_MIN, 4096, "shift"},    /* [0, 2^63) */
        {PARSUM_I32, INT32_MIN, (int64_t)INT32_MAX + 1, 4096, "shift"},
        {PARSUM_U32, 0, (int64_t)1 << 32, 1024, "shift"},
        {PARSUM_U32, 0, (int64_t)1 << 32, 1000, "div64"},
        {PARSUM_I16, -30000, 30001, 60001, "div64"},
    };
    size_t n = 40009;
    void *buf = tu_malloc(n * 8);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        parsum_hist_bins b;
        memset(&b, 0, sizeof b);
        b.nbins = cases[k].nbins;
        b.lo.i64 = cases[k].lo;
        b.hi.i64 = cases[k].hi;
        for (int ds = 0; ds < DIST_COUNT; ds++) {
            tu_rng r = tu_rng_for(0x64b, k, (uint64_t)ds, 0);
            gen_even(&r, cases[k].d, (dist)ds, &b, buf, n, 1, 0);
            parsum_histogram_desc desc = desc1(
                cases[k].d, ds == 1 ? PARSUM_U32 : PARSUM_U64, b);
            char what[160];
            snprintf(what, sizeof what, "%s %s %zu bins (%s)",
                     dtype_names[cases[k].d], dist_names[ds], b.nbins,
                     cases[k].mode);
            failures += check_all(what, &desc, buf, n, all_used);
        }
    }
    free(buf);
    assert_int_equal(failures, 0);
}

/* SHIFT bins that hold every value of a narrow dtype (the CPU's fused
 * loop then drops its range compare), exactly or with room on either
 * side, against ones a value short (the compare stays); bin counts that
 * give the CPU four, two and one private copies; sizes around its
 * 16-sample unrolled steps; one and two channels. */
static void test_full_range_shift(void **state)
{
    (void)state;
    size_t failures = 0;
    static const parsum_dtype dts[] = {PARSUM_I8,  PARSUM_U8,  PARSUM_I16,
                                       PARSUM_U16, PARSUM_I32, PARSUM_U32};
    static const size_t bins[] = {1, 1024, 3000, 65536};
    static const size_t sizes[] = {15, 16, 17, 70001};
    size_t maxn = 70001 * 2;
    void *buf = tu_malloc(maxn * 4);
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
        int64_t mn, mx;
        int_limits(dts[di], &mn, &mx);
        uint64_t span = (uint64_t)(mx - mn) + 1;
        for (size_t bi = 0; bi < sizeof bins / sizeof *bins; bi++)
            for (int how = 0; how < 4; how++) {
                /* 0 exact, 1 wider, 2 lo one above the minimum, 3 hi at
                 * the maximum (excluding it) */
                uint64_t nb = bins[bi], s = 0;
                uint64_t need = how == 1 ? span + 12 : span;
                while ((nb << s) < need)
                    s++;
                if ((nb << s) != need && how != 1)
                    continue; /* no SHIFT bins of exactly the span */
                parsum_hist_bins b;
                memset(&b, 0, sizeof b);
                b.nbins = nb;
                b.lo.i64 = how == 1 ? mn - 5 : how == 2 ? mn + 1 : how == 3 ? mn - 1 : mn;
                b.hi.i64 = b.lo.i64 + (int64_t)(nb << s);
                for (int ch = 1; ch <= 2; ch++)
                    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                        size_t n = sizes[si];
                        tu_rng r = tu_rng_for(0xf011, di * 64 + bi * 4 + (size_t)how, (uint64_t)ch, n);
                        parsum_histogram_desc desc = desc1(dts[di], n % 2 ? PARSUM_U32 : PARSUM_U64, b);
                        desc.channels = ch;
                        desc.bins[1] = b;
                        for (int c = 0; c < ch; c++)
                            gen_even(&r, dts[di], c ? DIST_ONE_BIN : DIST_UNIFORM, &b, buf, n, ch, c);
                        char what[200];
                        snprintf(what, sizeof what, "%s %zu bins [%lld, %lld) %d ch n=%zu",
                                 dtype_names[dts[di]], b.nbins, (long long)b.lo.i64,
                                 (long long)b.hi.i64, ch, n);
                        failures += check_all(what, &desc, buf, n, all_used);
                    }
            }
    }
    free(buf);
    assert_int_equal(failures, 0);
}

/* ---- channels, NULL counts, ACCUMULATE ----------------------------------- */

static void test_channels(void **state)
{
    (void)state;
    size_t failures = 0;
    static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_I8, PARSUM_U16,
                                       PARSUM_I32, PARSUM_F32, PARSUM_F64};
    static const size_t ns[] = {0, 1, 3, 2047, 2049, 33333, 100003};
    void *buf = tu_malloc(100003 * 4 * 8);
    void *lv[4] = {NULL};
    int k = 0;
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++)
        for (int ch = 1; ch <= 4; ch++)
            for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++, k++) {
                parsum_dtype d = dts[di];
                tu_rng r = tu_rng_for(0xc4a, d, (uint64_t)ch, ns[ni]);
                parsum_histogram_desc desc;
                memset(&desc, 0, sizeof desc);
                desc.sample_dtype = d;
                desc.channels = ch;
                desc.count_dtype = k % 2 ? PARSUM_U32 : PARSUM_U64;
                desc.flags = k % 3 == 1 ? PARSUM_HIST_ACCUMULATE : 0;
                bool use[4] = {false, false, false, false};
                for (int c = 0; c < ch; c++) {
                    use[c] = ch == 1 || (k + c) % 3 != 0; /* some NULL */
                    static const size_t nb[] = {256, 17, 1024, 3};
                    size_t nbins = nb[(c + k) % 4];
                    if (c == 2 && ch > 2) { /* range bins */
                        lv[c] = make_levels(&r, d, nbins);
                        desc.bins[c].nbins = nbins;
                        desc.bins[c].levels = lv[c];
                        gen_range(&r, d, lv[c], nbins, buf, ns[ni], ch, c);
                    } else {
                        desc.bins[c] = even_bins(d, nbins, c == 1);
                        gen_even(&r, d, (dist)((c + k) % DIST_COUNT),
                                 &desc.bins[c], buf, ns[ni], ch, c);
                    }
                }
                bool any = false;
                for (int c = 0; c < ch; c++)
                    any |= use[c];
                if (!any)
                    use[0] = true;
                char what[160];
                snprintf(what, sizeof what, "%s %d channels%s n=%zu",
                         dtype_names[d], ch,
                         desc.flags ? " accumulate" : "", ns[ni]);
                failures += check_all(what, &desc, buf, ns[ni], use);
                for (int c = 0; c < 4; c++) {
                    free(lv[c]);
                    lv[c] = NULL;
                }
            }
    free(buf);
    assert_int_equal(failures, 0);
}

/* ---- many bins, large n, rounds, threads --------------------------------- */

static void test_many_bins(void **state)
{
    (void)state;
    size_t failures = 0;
    size_t nb = (size_t)1 << 24, n = tu_quick ? 300007 : 3000017;
    static const parsum_dtype dts[] = {PARSUM_U32, PARSUM_F32, PARSUM_U8};
    void *buf = tu_malloc(n * 4);
    for (size_t di = 0; di < 3; di++)
        for (int ds = 0; ds < DIST_COUNT; ds += 2) {
            parsum_dtype d = dts[di];
            parsum_hist_bins b = even_bins(d, nb, di == 1);
            tu_rng r = tu_rng_for(0x2424, d, (uint64_t)ds, 0);
            gen_even(&r, d, (dist)ds, &b, buf, n, 1, 0);
            parsum_histogram_desc desc = desc1(d, ds ? PARSUM_U64 : PARSUM_U32, b);
            desc.flags = ds ? PARSUM_HIST_ACCUMULATE : 0;
            char what[160];
            snprintf(what, sizeof what, "%s %s 2^24 bins n=%zu",
                     dtype_names[d], dist_names[ds], n);
            failures += check_all(what, &desc, buf, n, all_used);
        }
    free(buf);
    assert_int_equal(failures, 0);
}

static void test_large_n(void **state)
{
    (void)state;
    size_t failures = 0;
    size_t n = tu_quick ? 1000003 : 10000019;
    void *buf = tu_malloc(n * 4);
    static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_U32, PARSUM_F32};
    for (size_t di = 0; di < 3; di++) {
        parsum_dtype d = dts[di];
        parsum_hist_bins b = even_bins(d, di == 0 ? 256 : 4096, false);
        tu_rng r = tu_rng_for(0x1a6e, d, 0, 0);
        gen_even(&r, d, DIST_ZIPF, &b, buf, n, 1, 0);
        parsum_histogram_desc desc = desc1(d, PARSUM_U64, b);
        char what[160];
        snprintf(what, sizeof what, "%s zipf %zu bins n=%zu",
                 dtype_names[d], b.nbins, n);
        failures += check_all(what, &desc, buf, n, all_used);
    }
    free(buf);
    assert_int_equal(failures, 0);
}

/* The private counters are summed into the output after every round of
 * PARSUM_CPU_HIST_ROUND pixels per thread (2^31 by default, so that they
 * cannot wrap): a small round takes that path on small inputs, with U32
 * outputs that wrap across rounds. Other backends ignore the variable. */
static void test_rounds(void **state)
{
    (void)state;
    size_t failures = 0;
    size_t n = 100003;
    void *buf = tu_malloc(n * 4 * 8);
    static const char *const rounds[] = {"1", "777", "2048", "50001"};
    for (size_t ri = 0; ri < 4; ri++) {
        setenv("PARSUM_CPU_HIST_ROUND", rounds[ri], 1);
        static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_U32, PARSUM_F64};
        for (size_t di = 0; di < 3; di++)
            for (int ch = 1; ch <= 4; ch += 3) {
                parsum_dtype d = dts[di];
                size_t np = ri == 0 ? 3001 : n;
                parsum_histogram_desc desc;
                memset(&desc, 0, sizeof desc);
                desc.sample_dtype = d;
                desc.channels = ch;
                desc.count_dtype = di == 1 ? PARSUM_U64 : PARSUM_U32;
                desc.flags = di == 2 ? PARSUM_HIST_ACCUMULATE : 0;
                tu_rng r = tu_rng_for(0x40d, ri, d, (uint64_t)ch);
                for (int c = 0; c < ch; c++) {
                    desc.bins[c] = even_bins(d, c % 2 ? 255 : 1024, c % 2);
                    gen_even(&r, d, (dist)(c % DIST_COUNT), &desc.bins[c],
                             buf, np, ch, c);
                }
                char what[160];
                snprintf(what, sizeof what, "%s %d channels round %s n=%zu",
                         dtype_names[d], ch, rounds[ri], np);
                failures += check_all(what, &desc, buf, np, all_used);
            }
    }
    unsetenv("PARSUM_CPU_HIST_ROUND");
    free(buf);
    assert_int_equal(failures, 0);
}

static void test_threads(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CPU)
        skip();
    size_t failures = 0, n = 200003;
    void *buf = tu_malloc(n * 4);
    int saved = parsum_context_threads(tu_ctx);
    for (int t = 1; t <= 3; t++) {
        TU_OK(parsum_context_set_threads(tu_ctx, t));
        static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_I32};
        for (size_t di = 0; di < 2; di++) {
            parsum_hist_bins b = even_bins(dts[di], 1024, di == 1);
            tu_rng r = tu_rng_for(0x7d, dts[di], 0, 0);
            gen_even(&r, dts[di], DIST_UNIFORM, &b, buf, n, 1, 0);
            parsum_histogram_desc desc = desc1(dts[di], PARSUM_U32, b);
            char what[160];
            snprintf(what, sizeof what, "%s %d threads", dtype_names[dts[di]], t);
            failures += check_all(what, &desc, buf, n, all_used);
        }
    }
    TU_OK(parsum_context_set_threads(tu_ctx, saved));
    free(buf);
    assert_int_equal(failures, 0);
}

PARSUM_TEST_MAIN(test_histogram)
{
    tu_init("histogram");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_even_i8),    cmocka_unit_test(test_even_u8),
        cmocka_unit_test(test_even_i16),   cmocka_unit_test(test_even_u16),
        cmocka_unit_test(test_even_i32),   cmocka_unit_test(test_even_u32),
        cmocka_unit_test(test_even_i64),   cmocka_unit_test(test_even_u64),
        cmocka_unit_test(test_even_f32),   cmocka_unit_test(test_even_f64),
        cmocka_unit_test(test_range_bins), cmocka_unit_test(test_wide_even_modes),
        cmocka_unit_test(test_full_range_shift),
        cmocka_unit_test(test_channels),   cmocka_unit_test(test_many_bins),
        cmocka_unit_test(test_large_n),    cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_threads),
    };
    return tu_finish(TU_RUN("histogram", tests));
}
