/*
 * test_sort.c - parsum_sort, parsum_sort_indices and parsum_segmented_sort
 * against the reference (src/ref/ref_sort.c), on every dtype, for keys
 * drawn as
 *   random   random bits (floats: NaNs, infinities and denormals included)
 *   few      eight distinct values (long runs of equal keys: stability)
 *   sorted / reverse   already in (reverse) order
 *   equal    one value
 *   special  the extremes: +-0, +-inf, NaNs of both signs and payloads,
 *            denormals, min and max (integers: 0, +-1, min, max)
 * with keys only, in place, pairs of values of 1, 3, 4, 8, 12 and 16 bytes
 * (each value tags its input position, so stability shows in the values),
 * values without keys, and the permutation; ascending and descending; all
 * bits and bit ranges. Outputs are poisoned first. Independently of the
 * reference's transform, full-range results are also checked to be in
 * value order (the order parsum.h states in words). The CPU backend gives
 * the same bits for 1, 2, 3 and 7 threads.
 */
#include "test_seg_util.h"

#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum kdist {
    KD_RANDOM,
    KD_FEW,
    KD_SORTED,
    KD_REVERSE,
    KD_EQUAL,
    KD_SPECIAL,
    KD_COUNT
} kdist;

static const char *const kdist_names[KD_COUNT] = {
    "random", "few", "sorted", "reverse", "equal", "special"};

static const parsum_dtype all_dtypes[] = {
    PARSUM_I8,  PARSUM_U8,  PARSUM_I16, PARSUM_U16, PARSUM_I32,
    PARSUM_U32, PARSUM_I64, PARSUM_U64, PARSUM_F32, PARSUM_F64};
#define NDTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

/* What a call writes and how. */
typedef enum mode {
    M_KEYS,        /* keys_in -> keys_out */
    M_INPLACE,     /* keys sorted in place, with values in place too */
    M_PAIRS,       /* keys and values to new buffers */
    M_VALUES_ONLY, /* keys_out NULL */
    M_INDICES,     /* parsum_sort_indices, keys too */
    M_PERM_ONLY,   /* parsum_sort_indices, keys_out NULL */
    M_COUNT
} mode;

static const char *const mode_names[M_COUNT] = {
    "keys", "in-place", "pairs", "values-only", "indices", "perm-only"};

static size_t failures;

/* ---- inputs ------------------------------------------------------------ */

/* The special values of d, as raw bits. */
static size_t special_bits(parsum_dtype d, uint64_t *v)
{
    size_t k = 0;
    if (d == PARSUM_F32) {
        static const uint32_t f[] = {
            0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
            0xFFC00000u, 0x7F800001u, 0xFFC00123u, 0x00000001u, 0x80000001u,
            0x007FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            v[k++] = f[i];
    } else if (d == PARSUM_F64) {
        static const uint64_t f[] = {
            0, 0x8000000000000000ull, 0x7FF0000000000000ull,
            0xFFF0000000000000ull, 0x7FF8000000000000ull,
            0xFFF8000000000000ull, 0x7FF0000000000001ull,
            0xFFF8000000000123ull, 1, 0x8000000000000001ull,
            0x000FFFFFFFFFFFFFull, 0x7FEFFFFFFFFFFFFFull,
            0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull,
            0xBFF0000000000000ull};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            v[k++] = f[i];
    } else {
        unsigned bits = 8u * (unsigned)parsum_dtype_size(d);
        uint64_t all = bits == 64 ? ~0ull : (1ull << bits) - 1;
        uint64_t top = 1ull << (bits - 1);
        /* 0, 1, all ones (-1 / max), top (min / 2^(b-1)), top - 1. */
        v[k++] = 0;
        v[k++] = 1;
        v[k++] = all;
        v[k++] = top;
        v[k++] = top - 1;
        v[k++] = 2;
    }
    return k;
}

static void set_bits(parsum_dtype d, void *buf, size_t i, uint64_t b)
{
    size_t ks = parsum_dtype_size(d);
    /* Little-endian hosts only (as the whole test suite). */
    memcpy((char *)buf + i * ks, &b, ks);
}

static void make_keys(parsum_dtype d, kdist kd, size_t n, void *keys)
{
    tu_rng r = tu_rng_for(0x5047, (uint64_t)d, (uint64_t)kd, n);
    uint64_t pool[16];
    size_t npool = 0;
    if (kd == KD_SPECIAL)
        npool = special_bits(d, pool);
    else if (kd == KD_FEW || kd == KD_EQUAL) {
        npool = kd == KD_FEW ? 8 : 1;
        for (size_t i = 0; i < npool; i++)
            pool[i] = tu_next(&r);
    }
    for (size_t i = 0; i < n; i++)
        set_bits(d, keys, i,
                 npool ? pool[tu_below(&r, npool)] : tu_next(&r));
    if (kd == KD_SORTED || kd == KD_REVERSE) {
        parsum_sort_desc desc = {.key_dtype = d};
        if (kd == KD_REVERSE)
            desc.flags = PARSUM_DESCENDING;
        void *tmp = tu_malloc(n * parsum_dtype_size(d));
        assert_int_equal(parsum__ref_sort(keys, NULL, tmp, NULL, NULL, n,
                                          &desc, NULL, 0),
                         PARSUM_OK);
        memcpy(keys, tmp, n * parsum_dtype_size(d));
        free(tmp);
    }
}

/* Value i: its position in the first 8 bytes (as far as they go), then
 * bytes derived from it, so every byte of a value is checked. */
static void make_values(size_t n, size_t vs, unsigned char *v)
{
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < vs; b++)
            v[i * vs + b] = b < 8 ? (unsigned char)(i >> (8 * b))
                                  : (unsigned char)(i * 131 + b * 7);
}

/* ---- the order in words (independent of sort_keys.h) --------------------- */

/* -1, 0, 1 as a sorts before, with or after b in ascending order. */
static int value_cmp(parsum_dtype d, const void *a, const void *b)
{
    if (d == PARSUM_F32 || d == PARSUM_F64) {
        double x = tu_get(d, a, 0), y = tu_get(d, b, 0);
        if (isnan(x) || isnan(y)) {
            if (!isnan(x))
                return -1;
            if (!isnan(y))
                return 1;
            uint64_t px = 0, py = 0; /* payloads without the sign */
            memcpy(&px, a, parsum_dtype_size(d));
            memcpy(&py, b, parsum_dtype_size(d));
            uint64_t m = d == PARSUM_F32 ? 0x7FFFFFFFull
                                         : 0x7FFFFFFFFFFFFFFFull;
            px &= m;
            py &= m;
            return px < py ? -1 : px > py;
        }
        if (x != y)
            return x < y ? -1 : 1;
        return signbit(x) == signbit(y) ? 0 : (signbit(x) ? -1 : 1);
    }
    if (d == PARSUM_U64) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
    }
    double x = tu_get(d, a, 0), y = tu_get(d, b, 0);
    if (d == PARSUM_I64) {
        int64_t p = *(const int64_t *)a, q = *(const int64_t *)b;
        return p < q ? -1 : p > q;
    }
    return x < y ? -1 : x > y;
}

static void check_value_order(parsum_dtype d, const void *keys, size_t n,
                              bool descending, const char *what)
{
    size_t ks = parsum_dtype_size(d);
    for (size_t i = 1; i < n; i++) {
        int c = value_cmp(d, (const char *)keys + (i - 1) * ks,
                          (const char *)keys + i * ks);
        if (descending ? c < 0 : c > 0) {
            char f1[64], f2[64];
            tu_report(&failures, "%s: keys[%zu] = %s and keys[%zu] = %s "
                      "are out of order",
                      what, i - 1,
                      tu_format(d, (const char *)keys + (i - 1) * ks, f1), i,
                      tu_format(d, (const char *)keys + i * ks, f2));
            return;
        }
    }
}

/* ---- one call against the reference ------------------------------------- */

typedef struct scase {
    parsum_dtype d;
    kdist kd;
    size_t n;
    mode m;
    size_t vs; /* value size for M_INPLACE / M_PAIRS / M_VALUES_ONLY */
    unsigned flags, begin, end;
    const uint64_t *offsets; /* NULL: parsum_sort(_indices) */
    size_t nseg;
    const char *segs; /* distribution name for messages */
} scase;

static void describe(const scase *c, char *buf, size_t len)
{
    snprintf(buf, len,
             "%s %s n=%zu %s keys, %s, value %zu B, %s, bits [%u, %u)%s%s "
             "(seed 0x%llx)",
             parsum_backend_name(tu_backend), parsum_dtype_name(c->d), c->n,
             kdist_names[c->kd], mode_names[c->m], c->vs,
             c->flags ? "descending" : "ascending", c->begin, c->end,
             c->offsets ? ", segments " : "", c->offsets ? c->segs : "",
             (unsigned long long)tu_seed);
}

static parsum_status call(const scase *c, const parsum_sort_desc *desc,
                          void *dk_in, void *dv_in, void *dk_out,
                          void *dv_out, uint64_t *dperm, void *doff)
{
    switch (c->m) {
    case M_INDICES:
    case M_PERM_ONLY:
        return parsum_sort_indices(tu_ctx, dk_in, dk_out, dperm, c->n, desc);
    default:
        if (c->offsets != NULL)
            return parsum_segmented_sort(tu_ctx, dk_in, dv_in, dk_out, dv_out,
                                         c->n, doff, c->nseg, desc);
        return parsum_sort(tu_ctx, dk_in, dv_in, dk_out, dv_out, c->n,
                           desc);
    }
}

static void run_case(const scase *c)
{
    char what[320];
    describe(c, what, sizeof what);
    size_t n = c->n, ks = parsum_dtype_size(c->d);
    bool values = c->m == M_INPLACE || c->m == M_PAIRS ||
                  c->m == M_VALUES_ONLY;
    bool perm = c->m == M_INDICES || c->m == M_PERM_ONLY;
    bool keys_out = c->m != M_VALUES_ONLY && c->m != M_PERM_ONLY;
    size_t vs = values ? c->vs : 0;
    parsum_sort_desc desc = {.key_dtype = c->d, .value_size = vs,
                             .flags = c->flags, .begin_bit = c->begin,
                             .end_bit = c->end};

    void *keys = tu_malloc(n * ks);
    unsigned char *vals = tu_malloc(n * vs);
    make_keys(c->d, c->kd, n, keys);
    make_values(n, vs, vals);
    void *want_k = tu_malloc(n * ks);
    unsigned char *want_v = tu_malloc(n * vs);
    uint64_t *want_p = tu_malloc(n * 8);
    assert_int_equal(parsum__ref_sort(keys, vals, want_k, want_v, want_p, n,
                                      &desc, c->offsets, c->nseg),
                     PARSUM_OK);

    void *dk_in = tu_dev_alloc(n * ks), *dv_in = tu_dev_alloc(n * vs);
    void *dk_out = tu_dev_alloc(n * ks), *dv_out = tu_dev_alloc(n * vs);
    uint64_t *dperm = tu_dev_alloc(n * 8);
    size_t offb = c->offsets ? (c->nseg + 1) * 8 : 0;
    void *doff = tu_dev_alloc(offb);
    tu_upload(dk_in, keys, n * ks);
    tu_upload(dv_in, vals, n * vs);
    if (offb > 0)
        tu_upload(doff, c->offsets, offb);
    tu_dev_poison(dk_out, n * ks);
    tu_dev_poison(dv_out, n * vs);
    tu_dev_poison(dperm, n * 8);
    bool inplace = c->m == M_INPLACE;
    parsum_status st = call(c, &desc, dk_in, dv_in,
                            keys_out ? (inplace ? dk_in : dk_out) : NULL,
                            inplace ? dv_in : dv_out, dperm, doff);
    if (st != PARSUM_OK) {
        tu_report(&failures, "%s: returned %s: %s", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    } else {
        if (keys_out) {
            void *got = tseg_download_copy(inplace ? dk_in : dk_out, n * ks);
            if (tseg_compare_bytes(want_k, got, n, ks, what) != 0)
                failures++;
            else if (c->begin == 0 && c->end == 0 && c->offsets == NULL)
                check_value_order(c->d, got, n, c->flags != 0, what);
            free(got);
        }
        if (vs > 0) {
            void *got = tseg_download_copy(inplace ? dv_in : dv_out, n * vs);
            if (tseg_compare_bytes(want_v, got, n, vs, what) != 0)
                failures++;
            free(got);
        }
        if (perm) {
            void *got = tseg_download_copy(dperm, n * 8);
            if (tseg_compare_bytes(want_p, got, n, 8, what) != 0)
                failures++;
            free(got);
        }
        if (!inplace) { /* inputs untouched */
            void *got = tseg_download_copy(dk_in, n * ks);
            if (tseg_compare_bytes(keys, got, n, ks, what) != 0)
                tu_report(&failures, "%s: keys_in was modified", what);
            free(got);
        }
    }
    free(keys);
    free(vals);
    free(want_k);
    free(want_v);
    free(want_p);
    tu_dev_free(dk_in);
    tu_dev_free(dv_in);
    tu_dev_free(dk_out);
    tu_dev_free(dv_out);
    tu_dev_free(dperm);
    tu_dev_free(doff);
}

/* ---- the tests ---------------------------------------------------------- */

/* Every dtype, every size of the standard list, random keys: the radix
 * passes, the small-n paths and the tile boundaries. */
static void test_sizes(void **state)
{
    (void)state;
    failures = 0;
    for (size_t t = 0; t < NDTYPES && failures < TSEG_MAX_FAILURES; t++) {
        size_t sizes[32];
        size_t ns = tu_sizes(parsum_dtype_size(all_dtypes[t]), sizes);
        for (size_t i = 0; i < ns; i++) {
            scase c = {.d = all_dtypes[t], .kd = KD_RANDOM, .n = sizes[i],
                       .m = M_KEYS};
            run_case(&c);
            c.m = M_PAIRS;
            c.vs = 4;
            c.flags = PARSUM_DESCENDING;
            run_case(&c);
        }
    }
    assert_int_equal(failures, 0);
}

/* Every distribution x mode x order, at a size of several tiles. */
static void test_modes(void **state)
{
    (void)state;
    failures = 0;
    static const size_t vsizes[] = {1, 3, 4, 8, 12, 16};
    for (size_t t = 0; t < NDTYPES && failures < TSEG_MAX_FAILURES; t++)
        for (int kd = 0; kd < KD_COUNT; kd++)
            for (int m = 0; m < M_COUNT; m++)
                for (unsigned fl = 0; fl <= PARSUM_DESCENDING;
                     fl += PARSUM_DESCENDING) {
                    size_t n = 20011 + (size_t)kd * 7 + (size_t)m;
                    scase c = {.d = all_dtypes[t], .kd = (kdist)kd, .n = n,
                               .m = (mode)m, .flags = fl,
                               .vs = vsizes[(t + (size_t)kd + (size_t)m) % 6]};
                    run_case(&c);
                }
    assert_int_equal(failures, 0);
}

/* Bit ranges: the low byte only, a middle range, the top bit, one bit. */
static void test_bit_ranges(void **state)
{
    (void)state;
    failures = 0;
    for (size_t t = 0; t < NDTYPES; t++) {
        unsigned bits = 8u * (unsigned)parsum_dtype_size(all_dtypes[t]);
        unsigned ranges[][2] = {{0, bits / 2},       {1, bits - 1},
                                {bits - 1, bits},    {bits / 2, bits / 2 + 1},
                                {3, bits},           {0, bits}};
        for (size_t r = 0; r < 6; r++)
            for (int m = M_KEYS; m <= M_PAIRS; m++) {
                scase c = {.d = all_dtypes[t], .kd = KD_RANDOM, .n = 70001,
                           .m = (mode)m, .vs = 8, .begin = ranges[r][0],
                           .end = ranges[r][1],
                           .flags = r % 2 ? PARSUM_DESCENDING : 0};
                run_case(&c);
            }
    }
    assert_int_equal(failures, 0);
}

/* Segmented sort over each length distribution (empty segments
 * included), several dtypes and modes. */
static void test_segmented(void **state)
{
    (void)state;
    failures = 0;
    static const parsum_dtype dts[] = {PARSUM_U32, PARSUM_F32, PARSUM_I64,
                                       PARSUM_U8, PARSUM_F64, PARSUM_I16};
    size_t sizes[] = {0, 1, 33, 5003, 300007, 2000003};
    size_t nsizes = tu_quick ? 5 : 6;
    for (int dist = 0; dist < TSEG_DIST_COUNT; dist++)
        for (size_t si = 0; si < nsizes; si++)
            for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
                if (failures >= TSEG_MAX_FAILURES)
                    break;
                size_t n = sizes[si];
                if (n > 400000 && t > 1)
                    continue; /* the big size for two dtypes only */
                tu_rng r = tu_rng_for(0x5e65, (uint64_t)dist, n, t);
                uint64_t *off;
                size_t nseg = tseg_offsets(&r, (tseg_dist)dist, n, &off);
                static const mode modes[] = {M_KEYS, M_INPLACE, M_PAIRS,
                                             M_VALUES_ONLY};
                mode m = modes[(si + t) % 4];
                scase c = {.d = dts[t], .kd = t % 2 ? KD_FEW : KD_RANDOM,
                           .n = n, .m = m, .vs = t % 3 == 0 ? 4 : 12,
                           .flags = (si + t) % 3 == 1 ? PARSUM_DESCENDING : 0,
                           .offsets = off, .nseg = nseg,
                           .segs = tseg_dist_name((tseg_dist)dist)};
                run_case(&c);
                free(off);
            }
    assert_int_equal(failures, 0);
}

/* The same bits for any thread count (CPU; once on a GPU). */
static void test_threads(void **state)
{
    (void)state;
    failures = 0;
    static const int threads[] = {1, 2, 3, 7};
    int nt = tu_backend == PARSUM_BACKEND_CPU ? 4 : 1;
    size_t n = tu_quick ? 300007 : 3000017;
    for (int i = 0; i < nt; i++) {
        if (tu_backend == PARSUM_BACKEND_CPU)
            TU_OK(parsum_context_set_threads(tu_ctx, threads[i]));
        scase c = {.d = PARSUM_U32, .kd = KD_RANDOM, .n = n, .m = M_PAIRS,
                   .vs = 8};
        run_case(&c);
        c.d = PARSUM_F64;
        c.m = M_INDICES;
        run_case(&c);
        tu_rng r = tu_rng_for(0x7417, n, 0, 0);
        uint64_t *off;
        size_t nseg = tseg_offsets(&r, TSEG_POWER, n, &off);
        scase s = {.d = PARSUM_I32, .kd = KD_RANDOM, .n = n, .m = M_KEYS,
                   .offsets = off, .nseg = nseg, .segs = "power"};
        run_case(&s);
        free(off);
    }
    if (tu_backend == PARSUM_BACKEND_CPU)
        TU_OK(parsum_context_set_threads(tu_ctx, 0));
    assert_int_equal(failures, 0);
}

/* The notes' small examples, spelled out. */
static void test_examples(void **state)
{
    (void)state;
    float in[] = {3.5f, -0.0f, 1.0f, 0.0f, -INFINITY, NAN, 1.0f, -2.0f};
    float want[] = {-INFINITY, -2.0f, -0.0f, 0.0f, 1.0f, 1.0f, 3.5f, NAN};
    uint64_t want_perm[] = {4, 7, 1, 3, 2, 6, 0, 5};
    size_t n = 8;
    void *dk = tu_dev_alloc(sizeof in), *dout = tu_dev_alloc(sizeof in);
    uint64_t *dp = tu_dev_alloc(sizeof want_perm);
    tu_upload(dk, in, sizeof in);
    parsum_sort_desc desc = {.key_dtype = PARSUM_F32};
    TU_OK(parsum_sort_indices(tu_ctx, dk, dout, dp, n, &desc));
    float got[8];
    uint64_t perm[8];
    tu_download(got, dout, sizeof got);
    tu_download(perm, dp, sizeof perm);
    assert_memory_equal(got, want, sizeof got); /* NaN bits included */
    assert_memory_equal(perm, want_perm, sizeof perm);
    tu_dev_free(dk);
    tu_dev_free(dout);
    tu_dev_free(dp);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_examples),  cmocka_unit_test(test_sizes),
    cmocka_unit_test(test_modes),     cmocka_unit_test(test_bit_ranges),
    cmocka_unit_test(test_segmented), cmocka_unit_test(test_threads),
};

PARSUM_TEST_MAIN(test_sort)
{
    tu_init("test_sort");
    return tu_finish(TU_RUN("test_sort", tests));
}
