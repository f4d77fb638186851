/*
 * test_sort_errors.c - bad arguments to parsum_sort, parsum_sort_indices
 * and parsum_segmented_sort get the documented status and a fresh message
 * naming the argument, and the context keeps working (test_err_util.h).
 *
 * Covered: NULL context, desc, keys, outputs, values, perm and offsets
 * (and NULL allowed where parsum.h says so: n == 0, values with
 * value_size 0, keys_out with values or with perm); unknown key dtypes,
 * flags; value sizes above 16; bit ranges empty, reversed or past the
 * key; value_size with parsum_sort_indices; sizes that overflow; every
 * output partially overlapping an input or another output (in place
 * allowed); offsets not starting at 0, decreasing or not ending at n (CPU:
 * a CUDA context does not read them); on CUDA, host memory where device
 * memory is needed.
 */
#include "test_err_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context buffers of 8000 bytes: keys, values, outputs, offsets. */
static void *dk, *dv, *dout, *dvout, *doff;
static const parsum_status np = PARSUM_ERR_NULL_POINTER,
                           ia = PARSUM_ERR_INVALID_ARGUMENT,
                           ov = PARSUM_ERR_OVERFLOW,
                           bd = PARSUM_ERR_INVALID_DTYPE;
static const parsum_sort_desc u32 = {.key_dtype = PARSUM_U32};
static const parsum_sort_desc u32v4 = {.key_dtype = PARSUM_U32,
                                       .value_size = 4};

static int setup(void **state)
{
    (void)state;
    te_failures = 0;
    dk = tu_dev_alloc(8000);
    dv = tu_dev_alloc(8000);
    dout = tu_dev_alloc(8000);
    dvout = tu_dev_alloc(8000);
    doff = tu_dev_alloc(8000);
    tu_dev_poison(dk, 8000);
    tu_dev_poison(dv, 8000);
    uint64_t off[4] = {0, 3, 3, 10}; /* valid for n = 10, 3 segments */
    tu_upload(doff, off, sizeof off);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_dev_free(dk);
    tu_dev_free(dv);
    tu_dev_free(dout);
    tu_dev_free(dvout);
    tu_dev_free(doff);
    return 0;
}

static void test_null(void **state)
{
    (void)state;
    uint64_t *perm = dvout;
    EXPECT_STATUS(parsum_sort(NULL, dk, NULL, dout, NULL, 10, &u32), np);
    EXPECT_STATUS(parsum_sort_indices(NULL, dk, dout, perm, 10, &u32), np);
    EXPECT_STATUS(parsum_segmented_sort(NULL, dk, NULL, dout, NULL, 10, doff, 3, &u32), np);
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, dout, NULL, 10, NULL), np, "desc");
    EXPECT_ERR(parsum_sort(tu_ctx, NULL, NULL, dout, NULL, 10, &u32), np, "keys_in");
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, NULL, NULL, 10, &u32), np, "keys_out");
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, dout, dvout, 10, &u32v4), np, "values_in");
    EXPECT_ERR(parsum_sort(tu_ctx, dk, dv, dout, NULL, 10, &u32v4), np, "values_out");
    EXPECT_ERR(parsum_sort_indices(tu_ctx, dk, dout, NULL, 10, &u32), np, "perm");
    EXPECT_ERR(parsum_sort_indices(tu_ctx, NULL, dout, perm, 10, &u32), np, "keys_in");
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, NULL, dout, NULL, 10, NULL, 3, &u32), np, "offsets");
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, NULL, dout, NULL, 0, NULL, 0, &u32), np, "offsets");
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, dv, dout, NULL, 10, doff, 3, &u32v4), np, "values_out");
    assert_int_equal(te_failures, 0);
}

/* NULL where the header allows it. */
static void test_allowed(void **state)
{
    (void)state;
    uint64_t zero = 0, *perm = dvout;
    void *dzero = tu_dev_alloc(8);
    tu_upload(dzero, &zero, 8);
    EXPECT_STATUS(parsum_sort(tu_ctx, NULL, NULL, NULL, NULL, 0, &u32), PARSUM_OK);
    EXPECT_STATUS(parsum_sort(tu_ctx, dk, (void *)1, dout, (void *)1, 10, &u32), PARSUM_OK);
    EXPECT_STATUS(parsum_sort(tu_ctx, dk, dv, NULL, dvout, 10, &u32v4), PARSUM_OK);
    EXPECT_STATUS(parsum_sort(tu_ctx, dk, dv, dk, dv, 10, &u32v4), PARSUM_OK);
    EXPECT_STATUS(parsum_sort_indices(tu_ctx, dk, NULL, perm, 10, &u32), PARSUM_OK);
    EXPECT_STATUS(parsum_sort_indices(tu_ctx, dk, dk, perm, 10, &u32), PARSUM_OK);
    EXPECT_STATUS(parsum_sort_indices(tu_ctx, NULL, NULL, NULL, 0, &u32), PARSUM_OK);
    EXPECT_STATUS(parsum_segmented_sort(tu_ctx, NULL, NULL, NULL, NULL, 0, dzero, 0, &u32), PARSUM_OK);
    EXPECT_STATUS(parsum_segmented_sort(tu_ctx, dk, NULL, dk, NULL, 10, doff, 3, &u32), PARSUM_OK);
    tu_dev_free(dzero);
    assert_int_equal(te_failures, 0);
}

static void test_desc(void **state)
{
    (void)state;
    parsum_sort_desc d = u32;
    d.key_dtype = (parsum_dtype)42;
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, dout, NULL, 10, &d), bd, "desc->key_dtype");
    d = u32;
    d.value_size = PARSUM_SORT_MAX_VALUE_SIZE + 1;
    EXPECT_ERR(parsum_sort(tu_ctx, dk, dv, dout, dvout, 10, &d), ia, "desc->value_size");
    d = u32;
    d.flags = PARSUM_EXCLUSIVE;
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, dout, NULL, 10, &d), ia, "desc->flags");
    unsigned bad[][2] = {{5, 5}, {6, 5}, {0, 33}, {32, 33}, {1, 0}};
    for (size_t i = 0; i < 5; i++) {
        d = u32;
        d.begin_bit = bad[i][0];
        d.end_bit = bad[i][1];
        EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, dout, NULL, 10, &d), ia, "desc->begin_bit");
    }
    d = u32;
    d.key_dtype = PARSUM_U8;
    d.end_bit = 9;
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, NULL, dout, NULL, 10, doff, 3, &d), ia, "desc->end_bit");
    d.end_bit = 8;
    EXPECT_STATUS(parsum_sort(tu_ctx, dk, NULL, dout, NULL, 10, &d), PARSUM_OK);
    EXPECT_ERR(parsum_sort_indices(tu_ctx, dk, dout, dvout, 10, &u32v4), ia, "desc->value_size");
    assert_int_equal(te_failures, 0);
}

static void test_overflow(void **state)
{
    (void)state;
    size_t huge = SIZE_MAX / 2;
    parsum_sort_desc d = {.key_dtype = PARSUM_U64, .value_size = 16};
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, dout, NULL, huge, &d), ov, "keys_in");
    d.key_dtype = PARSUM_U8;
    EXPECT_ERR(parsum_sort(tu_ctx, dk, dv, dout, dvout, huge, &d), ov, "values_in");
    EXPECT_ERR(parsum_sort_indices(tu_ctx, dk, NULL, dvout, huge, &u32), ov, "keys_in");
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, NULL, dout, NULL, 10, doff, SIZE_MAX, &u32), ov, "num_segments");
    assert_int_equal(te_failures, 0);
}

static void test_overlap(void **state)
{
    (void)state;
    char *k = dk, *v = dv, *o = dout;
    EXPECT_ERR(parsum_sort(tu_ctx, k, NULL, k + 4, NULL, 10, &u32), ia, "keys_out");
    EXPECT_ERR(parsum_sort(tu_ctx, k + 4, NULL, k, NULL, 10, &u32), ia, "keys_out");
    EXPECT_ERR(parsum_sort(tu_ctx, k, v, o, v + 4, 10, &u32v4), ia, "values_out");
    EXPECT_ERR(parsum_sort(tu_ctx, k, v, o, k, 10, &u32v4), ia, "values_out");
    EXPECT_ERR(parsum_sort(tu_ctx, k, v, v, o, 10, &u32v4), ia, "keys_out");
    EXPECT_ERR(parsum_sort(tu_ctx, k, v, o, o + 36, 10, &u32v4), ia, "keys_out");
    EXPECT_ERR(parsum_sort_indices(tu_ctx, k, o, (uint64_t *)(void *)(o + 8), 10, &u32), ia, "keys_out");
    EXPECT_ERR(parsum_sort_indices(tu_ctx, k, NULL, (uint64_t *)(void *)k, 10, &u32), ia, "perm");
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, k, NULL, doff, NULL, 10, doff, 3, &u32), ia, "offsets");
    EXPECT_STATUS(parsum_sort(tu_ctx, k, NULL, k + 40, NULL, 10, &u32), PARSUM_OK);
    assert_int_equal(te_failures, 0);
}

/* Offsets values: checked on a CPU context only (host memory). */
static void test_offsets(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CPU)
        skip();
    uint64_t bad[][4] = {{1, 3, 3, 10}, {0, 5, 3, 10}, {0, 3, 3, 9}};
    const char *word[] = {"offsets[0]", "offsets[2]", "offsets[3]"};
    for (size_t i = 0; i < 3; i++) {
        tu_upload(doff, bad[i], sizeof bad[i]);
        EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, NULL, dout, NULL, 10, doff, 3, &u32), ia, word[i]);
    }
    assert_int_equal(te_failures, 0);
}

/* CUDA: host memory where the context's memory is needed. */
static void test_wrong_memory_space(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    const parsum_status wm = PARSUM_ERR_WRONG_MEMORY_SPACE;
    unsigned char *h = tu_malloc(8000);
    EXPECT_ERR(parsum_sort(tu_ctx, h, NULL, dout, NULL, 10, &u32), wm, "keys_in");
    EXPECT_ERR(parsum_sort(tu_ctx, dk, NULL, h, NULL, 10, &u32), wm, "keys_out");
    EXPECT_ERR(parsum_sort(tu_ctx, dk, h, dout, dvout, 10, &u32v4), wm, "values_in");
    EXPECT_ERR(parsum_sort_indices(tu_ctx, dk, dout, (uint64_t *)(void *)h, 10, &u32), wm, "perm");
    EXPECT_ERR(parsum_segmented_sort(tu_ctx, dk, NULL, dout, NULL, 10, (const uint64_t *)(void *)h, 3, &u32), wm, "offsets");
    free(h);
    assert_int_equal(te_failures, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
static const struct CMUnitTest tests[] = {
    T(test_null),     T(test_allowed), T(test_desc),
    T(test_overflow), T(test_overlap), T(test_offsets),
    T(test_wrong_memory_space),
};

PARSUM_TEST_MAIN(test_sort_errors)
{
    tu_init("test_sort_errors");
    return tu_finish(TU_RUN("test_sort_errors", tests));
}
