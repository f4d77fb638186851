/*
 * test_sort_custom.c - parsum_sort_custom against the serial reference
 * (parsum__ref_sort_custom, a stable merge sort), on the CPU callback and
 * on the CUDA source of the same orders:
 *
 *   records  8-byte {key, tag} records by key; tags are input positions,
 *            so the sorted output is unique and stability shows bit for
 *            bit. Orders: random, few distinct keys, all equal, sorted,
 *            reversed, sorted runs, organ pipe; sizes 0 1 2 3, the small
 *            sort's threshold -1 / +0 / +1, twice it +1, 1000, 10^5 and
 *            (unless quick) 10^6; out of place (poisoned) and in place
 *   strings  u32 indices into a table of fixed-width strings compared as
 *            strcmp does (the table in device memory through cuda_user on
 *            a GPU), with many shared prefixes and duplicates
 *   points   the notes' 12-byte 3-D points, by magnitude
 *   sizes    elements of 1, 3, 24, 100 and (CPU) 1024 bytes keyed by their
 *            first byte
 *   wide     the two-array split counts (PARSUM_SORT_CUSTOM_WIDE=1)
 *   rounds   rounds and comparisons stay within O(log n) and O(n log n)
 *            for every order; all equal takes two rounds; the same for 1,
 *            2 and 3 threads, and on a GPU the same rounds as on the CPU
 *   errors   every error parsum.h lists for parsum_sort_custom
 *   huge     2^31 + 4321 bytes on a GPU (PARSUM_TEST_SORT_HUGE=1).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "test_err_util.h"

#include "core/internal.h"
#include "ref/ref.h"
#include "sort/quicksort.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL PARSUM__QSORT_SMALL

/* ---- orders ------------------------------------------------------------- */

typedef struct rec {
    uint32_t key;
    uint32_t tag;
} rec;

/* Comparisons counted when user points to a counter. */
static int rec_less(const void *a, const void *b, void *user)
{
    rec x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    if (user != NULL)
        atomic_fetch_add_explicit((_Atomic uint64_t *)user, 1,
                                  memory_order_relaxed);
    return x.key < y.key;
}

static const parsum_comparator rec_cmp = {
    sizeof(rec), rec_less, NULL, "struct R { unsigned key, tag; };", "R",
    "return a.key < b.key;", NULL};

#define STR_W 12 /* bytes per string slot, NUL padded */

static int str_less(const void *a, const void *b, void *user)
{
    uint32_t i, k;
    memcpy(&i, a, 4);
    memcpy(&k, b, 4);
    const char *t = user;
    return strncmp(t + (size_t)i * STR_W, t + (size_t)k * STR_W, STR_W) < 0;
}

static const char str_cuda_less[] =
    "const unsigned char *s = (const unsigned char *)user + a * 12ull;\n"
    "const unsigned char *t = (const unsigned char *)user + b * 12ull;\n"
    "for (int i = 0; i < 12; ++i) {\n"
    "    if (s[i] != t[i]) return s[i] < t[i];\n"
    "    if (s[i] == 0) return false;\n"
    "}\n"
    "return false;";

typedef struct point3 {
    float x, y, z;
} point3;

static float mag2(const point3 *p)
{
    return p->x * p->x + p->y * p->y + p->z * p->z;
}

static int point_less(const void *a, const void *b, void *user)
{
    (void)user;
    point3 p, q;
    memcpy(&p, a, sizeof p);
    memcpy(&q, b, sizeof q);
    return mag2(&p) < mag2(&q);
}

static const parsum_comparator point_cmp = {
    sizeof(point3), point_less, NULL,
    "struct P { float x, y, z; };\n"
    "float mag2(const P &p) { return p.x * p.x + p.y * p.y + p.z * p.z; }",
    "P", "return mag2(a) < mag2(b);", NULL};

/* Elements of es bytes ordered by their first byte. */
static int byte0_less(const void *a, const void *b, void *user)
{
    (void)user;
    return *(const unsigned char *)a < *(const unsigned char *)b;
}

/* ---- one sort, checked -------------------------------------------------- */

/* Sorts host[0 .. n) on tu_ctx out of place and in place and compares both
 * with the reference; counts failures. */
static void check_sort(const void *host, size_t n, const parsum_comparator *c,
                       const char *what, size_t *failures)
{
    size_t es = c->elem_size, bytes = n * es;
    unsigned char *want = tu_malloc(bytes), *got = tu_malloc(bytes);
    assert_int_equal(parsum__ref_sort_custom(host, want, n, c), PARSUM_OK);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    tu_upload(din, host, bytes);
    for (int inplace = 0; inplace < 2; inplace++) {
        void *dst = inplace ? din : dout;
        if (!inplace)
            tu_dev_poison(dout, bytes);
        parsum_status st = parsum_sort_custom(tu_ctx, din, dst, n, c);
        if (st != PARSUM_OK) {
            tu_report(failures, "  %s n=%zu %s: returned %s: %s\n", what, n,
                      inplace ? "in place" : "out of place",
                      parsum_status_name(st), parsum_last_error(tu_ctx));
            continue;
        }
        tu_download(got, dst, bytes);
        for (size_t i = 0; i < n; i++)
            if (memcmp(want + i * es, got + i * es, es) != 0) {
                tu_report(failures,
                          "  %s n=%zu %s (%s, seed 0x%llx): element %zu "
                          "differs from the stable reference\n",
                          what, n, inplace ? "in place" : "out of place",
                          parsum_backend_name(tu_backend),
                          (unsigned long long)tu_seed, i);
                break;
            }
    }
    tu_dev_free(din);
    tu_dev_free(dout);
    free(want);
    free(got);
}

/* ---- records ------------------------------------------------------------ */

enum { R_RANDOM, R_FEW, R_EQUAL, R_SORTED, R_REVERSE, R_RUNS, R_ORGAN,
       R_COUNT };
static const char *const order_names[R_COUNT] = {
    "random", "few distinct", "all equal", "sorted", "reversed",
    "sorted runs", "organ pipe"};

static rec *make_records(int order, size_t n, uint64_t salt)
{
    tu_rng r = tu_rng_for(0x50a7, (uint64_t)order, n, salt ^ tu_seed);
    rec *v = tu_malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)tu_next(&r);
        switch (order) {
        case R_FEW: k %= 5; break;
        case R_EQUAL: k = 7; break;
        case R_SORTED: k = (uint32_t)(i / 3); break;
        case R_REVERSE: k = (uint32_t)(n - i); break;
        case R_RUNS: k = (uint32_t)(i % 1000); break;
        case R_ORGAN: k = (uint32_t)(i < n / 2 ? i : n - i); break;
        default: break;
        }
        v[i] = (rec){k, (uint32_t)i};
    }
    return v;
}

static void test_records(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 3, SMALL - 1, SMALL, SMALL + 1,
                            2 * SMALL + 1, 1000, 100000, 1000000};
    size_t ns = sizeof sizes / sizeof *sizes - (tu_quick ? 1 : 0);
    size_t failures = 0;
    for (int o = 0; o < R_COUNT; o++)
        for (size_t si = 0; si < ns; si++) {
            size_t n = sizes[si];
            /* The slow orders once at 10^6: random and few distinct. */
            if (n == 1000000 && o != R_RANDOM && o != R_FEW)
                continue;
            rec *v = make_records(o, n, 0);
            char what[64];
            snprintf(what, sizeof what, "records %s", order_names[o]);
            check_sort(v, n, &rec_cmp, what, &failures);
            free(v);
        }
    assert_int_equal(failures, 0);
}

/* ---- strings by index --------------------------------------------------- */

/* count strings of 0 .. STR_W - 1 letters from a 3-letter alphabet: many
 * shared prefixes and duplicates. */
static char *make_table(size_t count)
{
    tu_rng r = tu_rng_for(0x57a1, count, 0, tu_seed);
    char *t = tu_malloc(count * STR_W);
    memset(t, 0, count * STR_W);
    for (size_t i = 0; i < count; i++) {
        size_t len = tu_below(&r, STR_W);
        for (size_t k = 0; k < len; k++)
            t[i * STR_W + k] = (char)('a' + tu_below(&r, 3));
    }
    return t;
}

static void test_strings(void **state)
{
    (void)state;
    const size_t count = 5000;
    char *table = make_table(count);
    void *dtable = tu_dev_alloc(count * STR_W);
    tu_upload(dtable, table, count * STR_W);
    parsum_comparator c = {4,  str_less,      table, "", "unsigned",
                           str_cuda_less, dtable};
    const size_t sizes[] = {2, SMALL + 1, 1000, 100000};
    size_t failures = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        tu_rng r = tu_rng_for(0x57a2, n, 0, tu_seed);
        uint32_t *idx = tu_malloc(n * 4);
        for (size_t i = 0; i < n; i++)
            idx[i] = (uint32_t)tu_below(&r, count);
        check_sort(idx, n, &c, "strings by index", &failures);
        free(idx);
    }
    tu_dev_free(dtable);
    free(table);
    assert_int_equal(failures, 0);
}

/* ---- points and element sizes ------------------------------------------- */

static void test_points(void **state)
{
    (void)state;
    const size_t sizes[] = {3, 1000, 100000};
    size_t failures = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        tu_rng r = tu_rng_for(0x9017, n, 0, tu_seed);
        point3 *p = tu_malloc(n * sizeof *p);
        /* Coordinates from a small set: equal magnitudes are common, and
         * points of equal magnitude must keep their order. */
        for (size_t i = 0; i < n; i++)
            p[i] = (point3){(float)tu_below(&r, 7) - 3.0f,
                            (float)tu_below(&r, 7) - 3.0f,
                            (float)tu_below(&r, 7) - 3.0f};
        check_sort(p, n, &point_cmp, "points by magnitude", &failures);
        free(p);
    }
    assert_int_equal(failures, 0);
}

static void test_elem_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 3, 24, 100, 1024};
    size_t failures = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t es = sizes[k];
        if (tu_backend == PARSUM_BACKEND_CUDA &&
            es > PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE)
            continue;
        char type[96];
        snprintf(type, sizeof type, "struct E { unsigned char b[%zu]; };",
                 es);
        parsum_comparator c = {es, byte0_less, NULL, type, "E",
                               "return a.b[0] < b.b[0];", NULL};
        size_t n = es > 100 ? 3000 : 20000;
        tu_rng r = tu_rng_for(0xe1e5, es, n, tu_seed);
        unsigned char *v = tu_malloc(n * es);
        for (size_t i = 0; i < n * es; i++)
            v[i] = (unsigned char)tu_next(&r);
        char what[64];
        snprintf(what, sizeof what, "%zu-byte elements", es);
        check_sort(v, n, &c, what, &failures);
        free(v);
    }
    assert_int_equal(failures, 0);
}

static void test_wide(void **state)
{
    (void)state;
    size_t failures = 0;
    setenv(PARSUM__QSORT_WIDE_ENV, "1", 1);
    for (int o = R_RANDOM; o <= R_EQUAL; o++) {
        rec *v = make_records(o, 100000, 1);
        check_sort(v, 100000, &rec_cmp, "records, wide counts", &failures);
        free(v);
    }
    unsetenv(PARSUM__QSORT_WIDE_ENV);
    assert_int_equal(failures, 0);
}

/* ---- rounds and comparisons --------------------------------------------- */

/* Sorts v on ctx (a CPU context: host data) through the quicksort itself,
 * for its statistics; *compares counts the calls of less. */
static void stats_cpu(parsum_context *ctx, const rec *v, rec *out, size_t n,
                      parsum__qsort_stats *s, uint64_t *compares)
{
    _Atomic uint64_t count = 0;
    parsum_comparator c = rec_cmp;
    c.user = (void *)&count;
    assert_int_equal(parsum__quicksort(ctx, "test", v, out, n, &c, s),
                     PARSUM_OK);
    *compares = atomic_load(&count);
}

static void check_rounds(parsum_context *cpu, int o, size_t n,
                         size_t *failures)
{
    rec *v = make_records(o, n, 2), *out = tu_malloc(n * sizeof *out);
    rec *want = tu_malloc(n * sizeof *want);
    assert_int_equal(parsum__ref_sort_custom(v, want, n, &rec_cmp), PARSUM_OK);
    parsum__qsort_stats s0, s;
    uint64_t c0 = 0, c = 0;
    double lg = log2((double)n);
    for (int threads = 1; threads <= 3; threads++) {
        TU_OK(parsum_context_set_threads(cpu, threads));
        stats_cpu(cpu, v, out, n, threads == 1 ? &s0 : &s,
                  threads == 1 ? &c0 : &c);
        if (memcmp(out, want, n * sizeof *out) != 0)
            tu_report(failures, "  %s n=%zu, %d threads: wrong order\n",
                      order_names[o], n, threads);
        if (threads > 1 && (c != c0 || s.rounds != s0.rounds ||
                            s.small_parts != s0.small_parts))
            tu_report(failures, "  %s n=%zu: %d threads took %zu rounds and "
                      "%llu comparisons, 1 thread %zu and %llu\n",
                      order_names[o], n, threads, s.rounds,
                      (unsigned long long)c, s0.rounds,
                      (unsigned long long)c0);
    }
    printf("  %-12s n=%-8zu %3zu rounds, %5zu partitions at most, %.2f "
           "comparisons / (n log2 n)\n",
           order_names[o], n, s0.rounds, s0.max_segments,
           (double)c0 / ((double)n * lg));
    bool equal = o == R_EQUAL;
    /* All equal: a "less" round finds nothing below the pivot, an "equal"
     * round finishes everything. */
    if (equal ? s0.rounds != 2 || c0 > 2 * n + 3
              : s0.rounds > 3 * lg || (double)c0 > 1.5 * n * lg)
        tu_report(failures, "  %s n=%zu: %zu rounds and %llu comparisons, "
                  "more than expected\n",
                  order_names[o], n, s0.rounds, (unsigned long long)c0);
    if (tu_backend == PARSUM_BACKEND_CUDA) {
        /* The pivots come from the core: the same rounds on a GPU. */
        void *d = tu_dev_alloc(n * sizeof *v);
        tu_upload(d, v, n * sizeof *v);
        TU_OK(parsum__quicksort(tu_ctx, "test", d, d, n, &rec_cmp, &s));
        if (s.rounds != s0.rounds || s.max_segments != s0.max_segments)
            tu_report(failures, "  %s n=%zu: %zu rounds on the GPU, %zu on "
                      "the CPU\n", order_names[o], n, s.rounds, s0.rounds);
        tu_dev_free(d);
    }
    free(v);
    free(out);
    free(want);
}

static void test_rounds(void **state)
{
    (void)state;
    parsum_context *cpu = NULL;
    TU_OK(parsum_context_create(&cpu, PARSUM_BACKEND_CPU));
    size_t failures = 0;
    for (int o = 0; o < R_COUNT; o++)
        check_rounds(cpu, o, 100000, &failures);
    if (!tu_quick)
        check_rounds(cpu, R_RANDOM, 1000000, &failures);
    parsum_context_destroy(cpu);
    assert_int_equal(failures, 0);
}

/* ---- more than 2^31 elements -------------------------------------------- */

/* n = 2^31 + 4321 one-byte keys (a GPU only: the CPU callback would take
 * minutes; PARSUM_TEST_SORT_HUGE=1, CTest label "huge"). Every offset and
 * count on the path must be 64-bit; checked by the order and the number of
 * each byte value, block by block. Needs about 22 GB of context memory
 * (the elements, their copy and 8 bytes of counts each). */
#define HUGE_N (((size_t)1 << 31) + 4321)
#define HUGE_BLOCK ((size_t)64 << 20)

static int u8_less(const void *a, const void *b, void *user)
{
    (void)user;
    return *(const unsigned char *)a < *(const unsigned char *)b;
}

static void test_huge(void **state)
{
    (void)state;
    const char *on = getenv("PARSUM_TEST_SORT_HUGE");
    if (on == NULL || strcmp(on, "1") != 0 ||
        tu_backend != PARSUM_BACKEND_CUDA)
        skip();
    void *d = NULL;
    if (parsum_alloc(tu_ctx, &d, HUGE_N) != PARSUM_OK)
        skip();
    unsigned char *blk = tu_malloc(HUGE_BLOCK);
    uint64_t count[256] = {0};
    tu_rng r = tu_rng_for(0x4a9f, 0, 0, tu_seed);
    for (size_t off = 0; off < HUGE_N; off += HUGE_BLOCK) {
        size_t len = HUGE_N - off < HUGE_BLOCK ? HUGE_N - off : HUGE_BLOCK;
        for (size_t i = 0; i < len; i++) {
            blk[i] = (unsigned char)tu_next(&r);
            count[blk[i]]++;
        }
        tu_upload((char *)d + off, blk, len);
    }
    parsum_comparator c = {1, u8_less, NULL, "", "unsigned char",
                           "return a < b;", NULL};
    parsum__qsort_stats s;
    TU_OK(parsum__quicksort(tu_ctx, "test", d, d, HUGE_N, &c, &s));
    printf("  n = %zu: %zu rounds\n", HUGE_N, s.rounds);
    size_t failures = 0;
    unsigned prev = 0;
    for (size_t off = 0; off < HUGE_N; off += HUGE_BLOCK) {
        size_t len = HUGE_N - off < HUGE_BLOCK ? HUGE_N - off : HUGE_BLOCK;
        tu_download(blk, (char *)d + off, len);
        for (size_t i = 0; i < len; i++) {
            if (blk[i] < prev && failures++ < TU_MAX_REPORTS)
                printf("  element %zu (%u) after %u\n", off + i, blk[i],
                       prev);
            prev = blk[i];
            count[blk[i]]--;
        }
    }
    for (int v = 0; v < 256; v++)
        if (count[v] != 0)
            tu_report(&failures, "  value %d: %lld elements too many\n", v,
                      -(long long)count[v]);
    parsum_free(tu_ctx, d);
    free(blk);
    assert_int_equal(failures, 0);
}

/* ---- errors ------------------------------------------------------------- */

static int always_less(const void *a, const void *b, void *user)
{
    (void)a;
    (void)b;
    (void)user;
    return 1;
}

static void test_errors(void **state)
{
    (void)state;
    te_failures = 0;
    const size_t n = 100;
    rec *h = make_records(R_RANDOM, n + 1, 3);
    void *d = tu_dev_alloc((n + 1) * sizeof(rec));
    tu_upload(d, h, (n + 1) * sizeof(rec));
    parsum_comparator c = rec_cmp;
    EXPECT_STATUS(parsum_sort_custom(NULL, d, d, n, &c),
                  PARSUM_ERR_NULL_POINTER);
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, NULL),
               PARSUM_ERR_NULL_POINTER, "cmp");
    EXPECT_ERR(parsum_sort_custom(tu_ctx, NULL, d, n, &c),
               PARSUM_ERR_NULL_POINTER, "in");
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, NULL, n, &c),
               PARSUM_ERR_NULL_POINTER, "out");
    EXPECT_STATUS(parsum_sort_custom(tu_ctx, NULL, NULL, 0, &c), PARSUM_OK);
    c.elem_size = 0;
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
               PARSUM_ERR_INVALID_ARGUMENT, "elem_size");
    c.elem_size = PARSUM_CUSTOM_MAX_ELEM_SIZE + 1;
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
               PARSUM_ERR_INVALID_ARGUMENT, "elem_size");
    c = rec_cmp;
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, (char *)d + 4, n, &c),
               PARSUM_ERR_INVALID_ARGUMENT, "out");
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, SIZE_MAX / 4, &c),
               PARSUM_ERR_OVERFLOW, "n");
    if (tu_backend == PARSUM_BACKEND_CPU) {
        c.less = NULL;
        EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
                   PARSUM_ERR_INVALID_ARGUMENT, "less");
        c = rec_cmp;
        c.less = always_less;
    } else {
        c.cuda_less = NULL;
        EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
                   PARSUM_ERR_INVALID_ARGUMENT, "cuda_less");
        c = rec_cmp;
        c.cuda_type_name = NULL;
        EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
                   PARSUM_ERR_INVALID_ARGUMENT, "cuda_type_name");
        c = rec_cmp;
        c.cuda_less = "return a.no_such_field < b.key;";
        EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
                   PARSUM_ERR_COMPILE, "cuda_less");
        c = rec_cmp;
        c.cuda_type = "struct R { unsigned key, tag, pad; };";
        EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
                   PARSUM_ERR_INVALID_ARGUMENT, "elem_size");
        c = rec_cmp;
        c.elem_size = PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE + 8;
        EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, 4, &c),
                   PARSUM_ERR_UNSUPPORTED, "elem_size");
        c = rec_cmp;
        EXPECT_ERR(parsum_sort_custom(tu_ctx, h, h, n, &c),
                   PARSUM_ERR_WRONG_MEMORY_SPACE, "in");
        c.cuda_less = "return true;";
    }
    /* less(p, p) true: not a strict weak order, reported, not looped on. */
    EXPECT_ERR(parsum_sort_custom(tu_ctx, d, d, n, &c),
               PARSUM_ERR_INVALID_ARGUMENT, "cmp");
    tu_dev_free(d);
    free(h);
    assert_int_equal(te_failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_records),    cmocka_unit_test(test_strings),
    cmocka_unit_test(test_points),     cmocka_unit_test(test_elem_sizes),
    cmocka_unit_test(test_wide),       cmocka_unit_test(test_rounds),
    cmocka_unit_test(test_errors),     cmocka_unit_test(test_huge),
};

PARSUM_TEST_MAIN(test_sort_custom)
{
    tu_init("test_sort_custom");
    return tu_finish(TU_RUN("test_sort_custom", tests));
}
