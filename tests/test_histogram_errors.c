/*
 * test_histogram_errors.c - every error of parsum_histogram's Errors list
 * (parsum.h) gets the documented status and a fresh message naming the
 * argument, and the context keeps working (the harness of
 * test_err_util.h); the NULL and empty cases the header allows succeed.
 */
#include "test_err_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void *dsamp, *dc0, *dc1;
static const parsum_status np = PARSUM_ERR_NULL_POINTER,
                           ia = PARSUM_ERR_INVALID_ARGUMENT,
                           ov = PARSUM_ERR_OVERFLOW,
                           bd = PARSUM_ERR_INVALID_DTYPE;

/* 1000 U8 samples; counts of 256 U32 (dc0) and 256 U64 (dc1). */
static int setup(void **state)
{
    (void)state;
    te_failures = 0;
    dsamp = tu_dev_alloc(4000);
    dc0 = tu_dev_alloc(256 * 8);
    dc1 = tu_dev_alloc(256 * 8);
    tu_dev_poison(dsamp, 4000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_dev_free(dsamp);
    tu_dev_free(dc0);
    tu_dev_free(dc1);
    return 0;
}

static parsum_histogram_desc good(void)
{
    parsum_histogram_desc d;
    memset(&d, 0, sizeof d);
    d.sample_dtype = PARSUM_U8;
    d.channels = 1;
    d.count_dtype = PARSUM_U32;
    for (int c = 0; c < 4; c++) {
        d.bins[c].nbins = 256;
        d.bins[c].lo.i64 = 0;
        d.bins[c].hi.i64 = 256;
    }
    return d;
}

static void test_null_and_allowed(void **state)
{
    (void)state;
    parsum_histogram_desc d = good();
    void *counts[4] = {dc0, NULL, NULL, NULL};
    void *none[4] = {NULL, NULL, NULL, NULL};
    EXPECT_STATUS(parsum_histogram(NULL, dsamp, 10, &d, counts), np);
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, NULL, counts), np, "d");
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, NULL), np, "counts");
    EXPECT_ERR(parsum_histogram(tu_ctx, NULL, 10, &d, counts), np, "samples");
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, none), np, "counts");
    d.channels = 2;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, none), np, "counts");
    /* allowed: samples NULL with n == 0, and NULL channels beside others */
    EXPECT_STATUS(parsum_histogram(tu_ctx, NULL, 0, &d, counts), PARSUM_OK);
    void *second[4] = {NULL, dc0, NULL, NULL};
    EXPECT_STATUS(parsum_histogram(tu_ctx, dsamp, 10, &d, second), PARSUM_OK);
    te_check_usable(__LINE__);
    assert_int_equal(te_failures, 0);
}

static void test_enums(void **state)
{
    (void)state;
    void *counts[4] = {dc0, NULL, NULL, NULL};
    parsum_histogram_desc d = good();
    d.sample_dtype = (parsum_dtype)PARSUM_DTYPE_COUNT;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), bd, "sample_dtype");
    d = good();
    d.sample_dtype = (parsum_dtype)-1;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), bd, "sample_dtype");
    d = good();
    d.count_dtype = PARSUM_I32;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "count_dtype");
    d.count_dtype = PARSUM_F64;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "count_dtype");
    d = good();
    d.channels = 0;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "channels");
    d.channels = 5;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "channels");
    d = good();
    d.strategy = (parsum_hist_strategy)4;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "strategy");
    d.strategy = (parsum_hist_strategy)-1;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "strategy");
    d = good();
    d.flags = 2;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "flags");
    te_check_usable(__LINE__);
    assert_int_equal(te_failures, 0);
}

static void test_bins(void **state)
{
    (void)state;
    void *counts[4] = {dc0, NULL, NULL, NULL};
    void *counts2[4] = {dc0, dc1, NULL, NULL};
    parsum_histogram_desc d = good();
    d.bins[0].nbins = 0;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "nbins");
    d.bins[0].nbins = ((size_t)1 << 31) + 1;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "nbins");
    /* channel 1's bins are checked too, and named */
    d = good();
    d.channels = 2;
    d.bins[1].nbins = 0;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts2), ia, "bins[1]");
    d = good();
    d.bins[0].lo.i64 = 256;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "lo");
    d.bins[0].lo.i64 = 300;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "lo");
    d = good();
    d.sample_dtype = PARSUM_U64;
    d.bins[0].lo.u64 = UINT64_MAX;
    d.bins[0].hi.u64 = 5;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "lo");
    d = good();
    d.sample_dtype = PARSUM_F32;
    d.bins[0].lo.f64 = NAN;
    d.bins[0].hi.f64 = 1.0;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "lo");
    d.bins[0].lo.f64 = 2.0;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "lo");
    d.bins[0].lo.f64 = -INFINITY;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "lo");
    /* levels not strictly ascending, or NaN */
    int64_t li[4] = {0, 5, 5, 9};
    d = good();
    d.bins[0].nbins = 3;
    d.bins[0].levels = li;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "levels[1]");
    double lf[4] = {0.0, 1.0, NAN, 3.0};
    d.sample_dtype = PARSUM_F64;
    d.bins[0].levels = lf;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "levels[1]");
    uint64_t lu[4] = {0, 7, 3, 9};
    d.sample_dtype = PARSUM_U64;
    d.bins[0].levels = lu;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, counts), ia, "levels[1]");
    te_check_usable(__LINE__);
    assert_int_equal(te_failures, 0);
}

static void test_buffers(void **state)
{
    (void)state;
    parsum_histogram_desc d = good();
    /* n * channels overflowing */
    void *counts[4] = {dc0, NULL, NULL, NULL};
    d.channels = 4;
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, SIZE_MAX / 2, &d, counts), ov, "n");
    /* counts overlapping the samples, or each other */
    d = good();
    void *over[4] = {(char *)dsamp + 64, NULL, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 1000, &d, over), ia, "counts[0]");
    d.channels = 2;
    void *both[4] = {dc0, (char *)dc0 + 512, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, both), ia, "counts[1]");
    void *same[4] = {dc0, dc0, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, same), ia, "counts[1]");
    te_check_usable(__LINE__);
    assert_int_equal(te_failures, 0);
}

static void test_alignment(void **state)
{
    (void)state;
    parsum_histogram_desc d = good();
    void *odd[4] = {(char *)dc0 + 2, NULL, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, odd), ia, "counts[0]");
    d.count_dtype = PARSUM_U64;
    void *odd8[4] = {(char *)dc1 + 4, NULL, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 10, &d, odd8), ia, "counts[0]");
    d = good();
    d.sample_dtype = PARSUM_U32;
    void *counts[4] = {dc0, NULL, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, (char *)dsamp + 1, 10, &d, counts), ia,
               "samples");
    te_check_usable(__LINE__);
    assert_int_equal(te_failures, 0);
}

/* Host memory handed to a CUDA context. */
static void test_wrong_space(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    static unsigned char host[1000];
    static uint32_t hcounts[256];
    parsum_histogram_desc d = good();
    void *counts[4] = {dc0, NULL, NULL, NULL};
    void *hc[4] = {hcounts, NULL, NULL, NULL};
    EXPECT_ERR(parsum_histogram(tu_ctx, host, 1000, &d, counts),
               PARSUM_ERR_WRONG_MEMORY_SPACE, "samples");
    EXPECT_ERR(parsum_histogram(tu_ctx, dsamp, 1000, &d, hc),
               PARSUM_ERR_WRONG_MEMORY_SPACE, "counts[0]");
    te_check_usable(__LINE__);
    assert_int_equal(te_failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_null_and_allowed, setup, teardown),
    cmocka_unit_test_setup_teardown(test_enums, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bins, setup, teardown),
    cmocka_unit_test_setup_teardown(test_buffers, setup, teardown),
    cmocka_unit_test_setup_teardown(test_alignment, setup, teardown),
    cmocka_unit_test_setup_teardown(test_wrong_space, setup, teardown),
};

PARSUM_TEST_MAIN(test_histogram_errors)
{
    tu_init("test_histogram_errors");
    return tu_finish(TU_RUN("test_histogram_errors", tests));
}
