/*
 * test_select_errors.c - bad arguments to the selection, partition,
 * unique and run-length functions get the documented status and a fresh
 * message naming the argument, and the context keeps working (the harness
 * of test_err_util.h).
 *
 * Covered: NULL context; NULL data, outputs, selectors, flag arrays,
 * custom predicates and counts (and NULL allowed where the header says
 * so: n == 0, keys_out and unique_out, in of select_indices with flags);
 * element, key and value sizes 0 or too large (on CUDA above 128 bytes:
 * unsupported); unknown select kinds, predicates, dtypes; a predicate
 * dtype of another size than the keys; a BIT_SET / BIT_CLEAR or split
 * bit out of range; custom predicates without callback (CPU) or source
 * (CUDA), and on CUDA with source that does not compile (at n == 0 too),
 * a type of another size than the keys, keys not aligned for the type;
 * sizes that overflow, a bit_offset past the address space;
 * every output overlapping an input or another output (in place
 * included, which these functions do not allow), the counts included;
 * on CUDA, host memory where device memory is needed.
 */
#include "test_err_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context buffers: din, dout and dval of 8000 bytes, dflags 8 words. */
static void *din, *dout, *dval, *dflags;
static parsum_selector bytes_sel, bits_sel, pred_sel, custom_sel;
static const parsum_status np = PARSUM_ERR_NULL_POINTER,
                           ia = PARSUM_ERR_INVALID_ARGUMENT,
                           ov = PARSUM_ERR_OVERFLOW,
                           bd = PARSUM_ERR_INVALID_DTYPE;

/* A valid call must succeed; on a CUDA context it may instead report
 * that the backend does not have the operation yet (its slot is empty
 * until the CUDA kernels exist), which is checked by the message. */
#define EXPECT_VALID(call)                                                   \
    do {                                                                     \
        parsum_status st_ = (call);                                          \
        bool absent_ = st_ == PARSUM_ERR_UNSUPPORTED &&                      \
                       tu_backend == PARSUM_BACKEND_CUDA &&                  \
                       strstr(parsum_last_error(tu_ctx), "not available") != \
                           NULL;                                             \
        if (st_ != PARSUM_OK && !absent_)                                    \
            tu_report(&te_failures, "  line %d: %s returned %s (%s)\n",      \
                      __LINE__, #call, parsum_status_name(st_),              \
                      parsum_last_error(tu_ctx));                            \
    } while (0)

static int odd(const void *x, void *user)
{
    (void)user;
    return (*(const unsigned char *)x & 1) != 0;
}

static const parsum_custom_pred odd_pred = {odd, NULL, "", "unsigned int",
                                            "return (x & 1u) != 0;"};

static int setup(void **state)
{
    (void)state;
    te_failures = 0;
    din = tu_dev_alloc(8000);
    dout = tu_dev_alloc(8000);
    dval = tu_dev_alloc(8000);
    dflags = tu_dev_alloc(32);
    tu_dev_poison(din, 8000);
    tu_dev_poison(dval, 8000);
    tu_dev_poison(dflags, 32);
    memset(&bytes_sel, 0, sizeof bytes_sel);
    bytes_sel.kind = PARSUM_SELECT_BYTES;
    bytes_sel.bytes = dflags;
    bits_sel = bytes_sel;
    bits_sel.kind = PARSUM_SELECT_BITS;
    bits_sel.bits = dflags;
    bits_sel.bit_offset = 3;
    pred_sel = bytes_sel;
    pred_sel.kind = PARSUM_SELECT_PREDICATE;
    pred_sel.dtype = PARSUM_I32;
    pred_sel.pred = PARSUM_PRED_GT;
    pred_sel.a.i32 = 5;
    custom_sel = bytes_sel;
    custom_sel.kind = PARSUM_SELECT_CUSTOM;
    custom_sel.custom = &odd_pred;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_dev_free(din);
    tu_dev_free(dout);
    tu_dev_free(dval);
    tu_dev_free(dflags);
    return 0;
}

static void test_null_context(void **state)
{
    (void)state;
    size_t k, c[2];
    uint64_t *o = dout;
    EXPECT_STATUS(parsum_select(NULL, din, dout, 10, 4, &bytes_sel, &k), np);
    EXPECT_STATUS(parsum_select_by_key(NULL, din, dval, dout, o + 100, 10, 4, 4, &bytes_sel, &k), np);
    EXPECT_STATUS(parsum_select_indices(NULL, din, 10, 4, &bytes_sel, o, &k), np);
    EXPECT_STATUS(parsum_partition(NULL, din, dout, 10, 4, &bytes_sel, &k), np);
    EXPECT_STATUS(parsum_partition_by_key(NULL, din, dval, dout, o + 100, 10, 4, 4, &bytes_sel, &k), np);
    EXPECT_STATUS(parsum_partition_unstable(NULL, din, dout, 10, 4, &bytes_sel, &k), np);
    EXPECT_STATUS(parsum_partition_unstable_by_key(NULL, din, dval, dout, o + 100, 10, 4, 4, &bytes_sel, &k), np);
    EXPECT_STATUS(parsum_partition3(NULL, din, dout, 10, 4, &bytes_sel, &pred_sel, c), np);
    EXPECT_STATUS(parsum_split_by_bit(NULL, din, NULL, dout, NULL, 10, PARSUM_U32, 0, 3, &k), np);
    EXPECT_STATUS(parsum_unique(NULL, din, dout, 10, 4, &k), np);
    EXPECT_STATUS(parsum_unique_by_key(NULL, din, dval, dout, o + 100, 10, 4, 4, &k), np);
    EXPECT_STATUS(parsum_run_length_encode(NULL, din, 10, 4, dout, o + 100, &k), np);
    EXPECT_STATUS(parsum_run_length_nontrivial(NULL, din, 10, 4, o, o + 100, &k), np);
    assert_int_equal(te_failures, 0);
}

static void test_null_pointers(void **state)
{
    (void)state;
    size_t k, c[2];
    uint64_t *o = dout;
    parsum_selector s = bytes_sel;
    EXPECT_ERR(parsum_select(tu_ctx, NULL, dout, 10, 4, &bytes_sel, &k), np, "in");
    EXPECT_ERR(parsum_select(tu_ctx, din, NULL, 10, 4, &bytes_sel, &k), np, "out");
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, NULL, &k), np, "sel");
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &bytes_sel, NULL), np, "num_selected");
    s.bytes = NULL;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), np, "bytes");
    s = bits_sel;
    s.bits = NULL;
    EXPECT_ERR(parsum_partition(tu_ctx, din, dout, 10, 4, &s, &k), np, "bits");
    s = custom_sel;
    s.custom = NULL;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), np, "custom");
    EXPECT_ERR(parsum_select_by_key(tu_ctx, NULL, dval, dout, o + 100, 10, 4, 4, &bytes_sel, &k), np, "keys_in");
    EXPECT_ERR(parsum_select_by_key(tu_ctx, din, NULL, dout, o + 100, 10, 4, 4, &bytes_sel, &k), np, "values_in");
    EXPECT_ERR(parsum_select_by_key(tu_ctx, din, dval, dout, NULL, 10, 4, 4, &bytes_sel, &k), np, "values_out");
    EXPECT_ERR(parsum_select_indices(tu_ctx, din, 10, 4, &bytes_sel, NULL, &k), np, "indices");
    EXPECT_ERR(parsum_select_indices(tu_ctx, NULL, 10, 4, &pred_sel, o, &k), np, "in");
    EXPECT_ERR(parsum_partition_by_key(tu_ctx, din, dval, dout, NULL, 10, 4, 4, &pred_sel, &k), np, "values_out");
    EXPECT_ERR(parsum_partition_unstable(tu_ctx, din, dout, 10, 4, NULL, &k), np, "sel");
    EXPECT_ERR(parsum_partition_unstable(tu_ctx, din, NULL, 10, 4, &pred_sel, &k), np, "out");
    EXPECT_ERR(parsum_partition_unstable(tu_ctx, din, dout, 10, 4, &pred_sel, NULL), np, "num_selected");
    EXPECT_ERR(parsum_partition_unstable_by_key(tu_ctx, din, NULL, dout, o + 100, 10, 4, 4, &pred_sel, &k), np, "values_in");
    EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, NULL, &pred_sel, c), np, "first");
    EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &bytes_sel, NULL, c), np, "second");
    EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &bytes_sel, &pred_sel, NULL), np, "counts");
    s = bits_sel;
    s.bits = NULL;
    EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &bytes_sel, &s, c), np, "second->bits");
    /* keys only (value_size 0): keys_out is the only output */
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, NULL, NULL, NULL, 10, PARSUM_U32, 0, 3, &k), np, "keys_out");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, NULL, NULL, dout, NULL, 10, PARSUM_U32, 0, 3, &k), np, "keys_in");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, NULL, dout, o + 100, 10, PARSUM_U32, 8, 3, &k), np, "values_in");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, dval, dout, NULL, 10, PARSUM_U32, 8, 3, &k), np, "values_out");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, NULL, dout, NULL, 10, PARSUM_U32, 0, 3, NULL), np, "num_zeros");
    EXPECT_ERR(parsum_unique(tu_ctx, NULL, dout, 10, 4, &k), np, "in");
    EXPECT_ERR(parsum_unique(tu_ctx, din, NULL, 10, 4, &k), np, "out");
    EXPECT_ERR(parsum_unique(tu_ctx, din, dout, 10, 4, NULL), np, "num_unique");
    EXPECT_ERR(parsum_unique_by_key(tu_ctx, din, NULL, dout, o + 100, 10, 4, 4, &k), np, "values_in");
    EXPECT_ERR(parsum_unique_by_key(tu_ctx, din, dval, dout, NULL, 10, 4, 4, &k), np, "values_out");
    EXPECT_ERR(parsum_run_length_encode(tu_ctx, din, 10, 4, dout, NULL, &k), np, "lengths");
    EXPECT_ERR(parsum_run_length_encode(tu_ctx, din, 10, 4, dout, o + 100, NULL), np, "num_runs");
    EXPECT_ERR(parsum_run_length_nontrivial(tu_ctx, din, 10, 4, NULL, o + 100, &k), np, "offsets");
    EXPECT_ERR(parsum_run_length_nontrivial(tu_ctx, din, 10, 4, o, NULL, &k), np, "lengths");
    if (tu_backend == PARSUM_BACKEND_CPU) {
        parsum_custom_pred cp = odd_pred;
        cp.pred = NULL;
        s = custom_sel;
        s.custom = &cp;
        EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), np, "pred");
    }
    assert_int_equal(te_failures, 0);
}

/* NULL is fine where nothing is read or written, and the counts are 0. */
static void test_allowed(void **state)
{
    (void)state;
    size_t k, c[2];
    uint64_t *o = dout;
    parsum_selector s = bits_sel;
    s.bits = NULL;
    s.bit_offset = 12345;
#define ZERO_COUNT(call, count)                                              \
    do {                                                                     \
        memset(&(count), TU_POISON, sizeof(count));                          \
        EXPECT_STATUS(call, PARSUM_OK);                                      \
        if ((count) != 0)                                                    \
            tu_report(&te_failures, "  line %d: count %zu for n = 0\n",      \
                      __LINE__, (size_t)(count));                            \
    } while (0)
    if (tu_backend == PARSUM_BACKEND_CPU) { /* counts in host memory */
        ZERO_COUNT(parsum_select(tu_ctx, NULL, NULL, 0, 4, &s, &k), k);
        ZERO_COUNT(parsum_select_by_key(tu_ctx, NULL, NULL, NULL, NULL, 0, 4, 4, &bytes_sel, &k), k);
        ZERO_COUNT(parsum_select_indices(tu_ctx, NULL, 0, 4, &pred_sel, NULL, &k), k);
        ZERO_COUNT(parsum_partition(tu_ctx, NULL, NULL, 0, 4, &custom_sel, &k), k);
        ZERO_COUNT(parsum_partition_unstable(tu_ctx, NULL, NULL, 0, 4, &pred_sel, &k), k);
        ZERO_COUNT(parsum_partition_unstable_by_key(tu_ctx, NULL, NULL, NULL, NULL, 0, 4, 4, &bits_sel, &k), k);
        ZERO_COUNT(parsum_partition3(tu_ctx, NULL, NULL, 0, 4, &s, &pred_sel, c), c[0]);
        ZERO_COUNT(parsum_split_by_bit(tu_ctx, NULL, NULL, NULL, NULL, 0, PARSUM_F64, 0, 63, &k), k);
        ZERO_COUNT(parsum_unique(tu_ctx, NULL, NULL, 0, 3, &k), k);
        ZERO_COUNT(parsum_unique_by_key(tu_ctx, NULL, NULL, NULL, NULL, 0, 4, 8, &k), k);
        ZERO_COUNT(parsum_run_length_encode(tu_ctx, NULL, 0, 4, NULL, NULL, &k), k);
        ZERO_COUNT(parsum_run_length_nontrivial(tu_ctx, NULL, 0, 4, NULL, NULL, &k), k);
        /* one element: no run of two, offsets and lengths have room 0 */
        ZERO_COUNT(parsum_run_length_nontrivial(tu_ctx, din, 1, 4, NULL, NULL, &k), k);
        /* select_indices reads in only for predicates */
        EXPECT_STATUS(parsum_select_indices(tu_ctx, NULL, 10, 0, &bytes_sel, o, &k), PARSUM_OK);
        /* keys_out and unique_out may be NULL */
        EXPECT_STATUS(parsum_select_by_key(tu_ctx, din, dval, NULL, dout, 10, 4, 4, &pred_sel, &k), PARSUM_OK);
        EXPECT_STATUS(parsum_partition_by_key(tu_ctx, din, dval, NULL, dout, 10, 4, 4, &bits_sel, &k), PARSUM_OK);
        EXPECT_STATUS(parsum_partition_unstable_by_key(tu_ctx, din, dval, NULL, dout, 10, 4, 4, &bits_sel, &k), PARSUM_OK);
        EXPECT_STATUS(parsum_split_by_bit(tu_ctx, din, dval, NULL, dout, 10, PARSUM_I16, 4, 15, &k), PARSUM_OK);
        EXPECT_STATUS(parsum_unique_by_key(tu_ctx, din, dval, NULL, dout, 10, 4, 4, &k), PARSUM_OK);
        EXPECT_STATUS(parsum_run_length_encode(tu_ctx, din, 10, 4, NULL, o, &k), PARSUM_OK);
    }
#undef ZERO_COUNT
    assert_int_equal(te_failures, 0);
}

static void test_sizes(void **state)
{
    (void)state;
    size_t k, c[2];
    uint64_t *o = dout;
    static const size_t bad[] = {0, PARSUM_CUSTOM_MAX_ELEM_SIZE + 1};
    for (int i = 0; i < 2; i++) {
        size_t z = bad[i];
        EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, z, &bytes_sel, &k), ia, "elem_size");
        EXPECT_ERR(parsum_select_by_key(tu_ctx, din, dval, dout, o + 100, 10, z, 4, &bytes_sel, &k), ia, "key_size");
        EXPECT_ERR(parsum_select_by_key(tu_ctx, din, dval, dout, o + 100, 10, 4, z, &bytes_sel, &k), ia, "value_size");
        EXPECT_ERR(parsum_select_indices(tu_ctx, din, 10, z, &custom_sel, o, &k), ia, "elem_size");
        EXPECT_ERR(parsum_partition(tu_ctx, din, dout, 10, z, &bits_sel, &k), ia, "elem_size");
        EXPECT_ERR(parsum_partition_by_key(tu_ctx, din, dval, dout, o + 100, 10, 4, z, &bytes_sel, &k), ia, "value_size");
        EXPECT_ERR(parsum_partition_unstable(tu_ctx, din, dout, 10, z, &bits_sel, &k), ia, "elem_size");
        EXPECT_ERR(parsum_partition_unstable_by_key(tu_ctx, din, dval, dout, o + 100, 10, 4, z, &bytes_sel, &k), ia, "value_size");
        EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, z, &bytes_sel, &bits_sel, c), ia, "elem_size");
        EXPECT_ERR(parsum_unique(tu_ctx, din, dout, 10, z, &k), ia, "elem_size");
        EXPECT_ERR(parsum_unique_by_key(tu_ctx, din, dval, dout, o + 100, 10, z, 4, &k), ia, "key_size");
        EXPECT_ERR(parsum_unique_by_key(tu_ctx, din, dval, dout, o + 100, 10, 4, z, &k), ia, "value_size");
        EXPECT_ERR(parsum_run_length_encode(tu_ctx, din, 10, z, dout, o + 100, &k), ia, "elem_size");
        EXPECT_ERR(parsum_run_length_nontrivial(tu_ctx, din, 10, z, o, o + 100, &k), ia, "elem_size");
    }
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, dval, dout, o + 100, 10, PARSUM_U32, PARSUM_CUSTOM_MAX_ELEM_SIZE + 1, 3, &k), ia, "value_size");
    assert_int_equal(te_failures, 0);
}

/* CUDA: a custom predicate needs its source only (no callback), and
 * elements of any size up to PARSUM_CUSTOM_MAX_ELEM_SIZE are moved, not
 * only those up to the custom operators' limit. */
static void test_cuda_sizes(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    size_t k;
    static const parsum_custom_pred cp = {NULL, NULL, "", "unsigned",
                                          "return x != 0u;"};
    parsum_selector s = bytes_sel;
    s.kind = PARSUM_SELECT_CUSTOM;
    s.custom = &cp;
    EXPECT_STATUS(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), PARSUM_OK);
    assert_int_equal(parsum_select(tu_ctx, din, dout, 10,
                                   PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE + 1,
                                   &bytes_sel, &k),
                     PARSUM_OK);
    assert_int_equal(te_failures, 0);
}

static void test_bad_selectors(void **state)
{
    (void)state;
    size_t k, c[2];
    uint64_t *o = dout;
    static const int bad_kinds[] = {4, -1, 1000};
    for (int i = 0; i < 3; i++) {
        parsum_selector s = bytes_sel;
        s.kind = (parsum_select_kind)bad_kinds[i];
        EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "sel->kind");
        EXPECT_ERR(parsum_select_indices(tu_ctx, din, 10, 4, &s, o, &k), ia, "sel->kind");
        EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &bytes_sel, &s, c), ia, "second->kind");
    }
    parsum_selector s = pred_sel;
    s.pred = (parsum_pred)10;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "sel->pred");
    s.pred = (parsum_pred)-1;
    EXPECT_ERR(parsum_partition(tu_ctx, din, dout, 10, 4, &s, &k), ia, "sel->pred");
    s = pred_sel;
    s.dtype = (parsum_dtype)10;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), bd, "sel->dtype");
    s.dtype = (parsum_dtype)-3;
    EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &s, &bytes_sel, c), bd, "first->dtype");
    /* the predicate's dtype must have the keys' size */
    s.dtype = PARSUM_F64;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "dtype");
    s.dtype = PARSUM_U8;
    EXPECT_ERR(parsum_select_by_key(tu_ctx, din, dval, dout, o + 100, 10, 2, 4, &s, &k), ia, "key_size");
    /* bits of BIT_SET / BIT_CLEAR and of the split */
    s = pred_sel;
    s.pred = PARSUM_PRED_BIT_SET;
    s.a.u32 = 32;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "a.u32");
    s.pred = PARSUM_PRED_BIT_CLEAR;
    s.dtype = PARSUM_I8;
    s.a.u32 = 8;
    EXPECT_ERR(parsum_partition(tu_ctx, din, dout, 10, 1, &s, &k), ia, "a.u32");
    s.a.u32 = 7; /* the top bit is fine */
    EXPECT_VALID(parsum_partition(tu_ctx, din, dout, 10, 1, &s, &k));
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, NULL, dout, NULL, 10, PARSUM_U8, 0, 8, &k), ia, "bit");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, NULL, dout, NULL, 10, PARSUM_F32, 0, 32, &k), ia, "bit");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, din, NULL, dout, NULL, 10, (parsum_dtype)10, 0, 3, &k), bd, "key_dtype");
    /* custom predicates: the source on CUDA */
    if (tu_backend == PARSUM_BACKEND_CUDA) {
        parsum_custom_pred cp = odd_pred;
        cp.cuda_pred = NULL;
        s = custom_sel;
        s.custom = &cp;
        EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "cuda_pred");
        cp = odd_pred;
        cp.cuda_type_name = NULL;
        EXPECT_ERR(parsum_partition(tu_ctx, din, dout, 10, 4, &s, &k), ia, "cuda_type_name");
        /* compile errors carry NVRTC's log, which names the user's text */
        const parsum_status ce = PARSUM_ERR_COMPILE;
        cp = odd_pred;
        cp.cuda_pred = "return (x +* 1u) != 0;";
        EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ce, "cuda_pred");
        EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &bytes_sel, &s, c), ce, "cuda_pred");
        EXPECT_ERR(parsum_select(tu_ctx, NULL, NULL, 0, 4, &s, &k), ce, "cuda_pred");
        cp = odd_pred;
        cp.cuda_type = "struct Bad { int x }";
        cp.cuda_type_name = "Bad";
        cp.cuda_pred = "return x.x != 0;";
        EXPECT_ERR(parsum_select_indices(tu_ctx, din, 10, 4, &s, o, &k), ce, "cuda_type");
        /* sizeof(T) must be the key size */
        cp = odd_pred;
        cp.cuda_type_name = "unsigned long long";
        EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "cuda_type_name");
        EXPECT_ERR(parsum_partition_by_key(tu_ctx, din, dval, dout, o + 100, 10, 4, 4, &s, &k), ia, "cuda_type_name");
        EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &s, &pred_sel, c), ia, "cuda_type_name");
        /* the keys aligned for T (4 bytes here) */
        EXPECT_ERR(parsum_select(tu_ctx, (char *)din + 2, dout, 10, 4, &custom_sel, &k), ia, "aligned");
        EXPECT_ERR(parsum_partition3(tu_ctx, (char *)din + 1, dout, 10, 4, &bytes_sel, &custom_sel, c), ia, "aligned");
        /* and the context still serves a good one */
        EXPECT_STATUS(parsum_select(tu_ctx, din, dout, 10, 4, &custom_sel, &k), PARSUM_OK);
        EXPECT_STATUS(parsum_partition3(tu_ctx, din, dout, 10, 4, &custom_sel, &custom_sel, c), PARSUM_OK);
    }
    assert_int_equal(te_failures, 0);
}

static void test_overflow(void **state)
{
    (void)state;
    size_t k;
    uint64_t *o = dout;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, SIZE_MAX / 2, 4, &bytes_sel, &k), ov, "n");
    EXPECT_ERR(parsum_select_by_key(tu_ctx, din, dval, NULL, dout, SIZE_MAX / 4, 1, 8, &bits_sel, &k), ov, "n");
    EXPECT_ERR(parsum_select_indices(tu_ctx, NULL, SIZE_MAX / 4, 1, &bits_sel, o, &k), ov, "n");
    EXPECT_ERR(parsum_partition(tu_ctx, din, dout, SIZE_MAX / 1000, 1024, &bytes_sel, &k), ov, "n");
    EXPECT_ERR(parsum_partition_unstable(tu_ctx, din, dout, SIZE_MAX / 1000, 1024, &bytes_sel, &k), ov, "n");
    EXPECT_ERR(parsum_unique(tu_ctx, din, dout, SIZE_MAX / 3, 12, &k), ov, "n");
    EXPECT_ERR(parsum_run_length_encode(tu_ctx, din, SIZE_MAX / 4, 1, NULL, o, &k), ov, "n");
    EXPECT_ERR(parsum_run_length_nontrivial(tu_ctx, din, SIZE_MAX / 2, 1, o, o + 100, &k), ov, "n / 2");
    /* bits near the top of the address space whose bit offset points past
     * its end (never dereferenced: the check comes first) */
    parsum_selector s = bits_sel;
    s.bits = (const uint32_t *)(UINTPTR_MAX - 63);
    s.bit_offset = (size_t)1 << 20;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ov, "bit_offset");
    assert_int_equal(te_failures, 0);
}

static void test_overlap(void **state)
{
    (void)state;
    char *b = din, *out = dout, *v = dval;
    uint64_t *o = dout;
    size_t k, c[2];
    parsum_selector s = bytes_sel;
    /* no in-place operation, no partial overlap */
    EXPECT_ERR(parsum_select(tu_ctx, b, b, 10, 4, &bytes_sel, &k), ia, "out");
    EXPECT_ERR(parsum_select(tu_ctx, b, b + 36, 10, 4, &bytes_sel, &k), ia, "out");
    EXPECT_ERR(parsum_partition(tu_ctx, b + 36, b, 10, 4, &pred_sel, &k), ia, "out");
    EXPECT_ERR(parsum_partition_unstable(tu_ctx, b, b, 10, 4, &pred_sel, &k), ia, "out");
    EXPECT_ERR(parsum_partition_unstable_by_key(tu_ctx, b, v, out, v + 20, 10, 4, 4, &pred_sel, &k), ia, "values_out");
    EXPECT_VALID(parsum_select(tu_ctx, b, b + 40, 10, 4, &pred_sel, &k));
    /* the flags under an output: bytes, and the bit word actually read */
    s.bytes = (const uint8_t *)(out + 30);
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), ia, "out");
    s = bits_sel;
    s.bits = (const uint32_t *)(out + 8);
    s.bit_offset = 64 + 3; /* reads the word at out + 16 */
    EXPECT_ERR(parsum_select_indices(tu_ctx, NULL, 10, 4, &s, (uint64_t *)(out + 16), &k), ia, "indices");
    EXPECT_VALID(parsum_select_indices(tu_ctx, NULL, 10, 4, &s, (uint64_t *)(out + 24), &k));
    EXPECT_ERR(parsum_partition3(tu_ctx, din, out + 8, 10, 4, &bytes_sel, &s, c), ia, "out");
    /* outputs of the keyed calls against every input and each other */
    EXPECT_ERR(parsum_select_by_key(tu_ctx, b, v, b + 20, out, 10, 4, 4, &pred_sel, &k), ia, "keys_out");
    EXPECT_ERR(parsum_select_by_key(tu_ctx, b, v, v + 20, out, 10, 4, 4, &pred_sel, &k), ia, "keys_out");
    EXPECT_ERR(parsum_select_by_key(tu_ctx, b, v, out, out + 20, 10, 4, 4, &pred_sel, &k), ia, "keys_out");
    EXPECT_ERR(parsum_partition_by_key(tu_ctx, b, v, out, v, 10, 4, 4, &bits_sel, &k), ia, "values_out");
    EXPECT_ERR(parsum_partition_by_key(tu_ctx, b, v, out, b + 4, 10, 4, 4, &bits_sel, &k), ia, "values_out");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, b, v, out, out + 36, 10, PARSUM_U32, 4, 1, &k), ia, "values_out");
    EXPECT_ERR(parsum_split_by_bit(tu_ctx, b, NULL, b + 4, NULL, 10, PARSUM_U32, 0, 1, &k), ia, "keys_out");
    EXPECT_ERR(parsum_unique(tu_ctx, b, b, 10, 4, &k), ia, "out");
    EXPECT_ERR(parsum_unique_by_key(tu_ctx, b, v, out, out + 4, 10, 4, 4, &k), ia, "keys_out");
    EXPECT_ERR(parsum_unique_by_key(tu_ctx, b, v, NULL, v + 8, 10, 4, 4, &k), ia, "values_out");
    EXPECT_ERR(parsum_run_length_encode(tu_ctx, b, 10, 4, out, o + 2, &k), ia, "lengths");
    EXPECT_ERR(parsum_run_length_encode(tu_ctx, b, 10, 4, NULL, (uint64_t *)(b + 8), &k), ia, "lengths");
    EXPECT_ERR(parsum_run_length_nontrivial(tu_ctx, b, 10, 4, o, o + 4, &k), ia, "lengths");
    EXPECT_VALID(parsum_run_length_nontrivial(tu_ctx, b, 10, 4, o, o + 5, &k));
    /* a count inside an output or an input (host memory on the CPU; on
     * CUDA, device memory is a valid place for it too) */
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &pred_sel, (size_t *)(void *)(out + 8)), ia, "num_selected");
    EXPECT_ERR(parsum_partition3(tu_ctx, din, dout, 10, 4, &pred_sel, &bits_sel, (size_t *)(void *)(b + 32)), ia, "counts");
    EXPECT_ERR(parsum_run_length_encode(tu_ctx, b, 10, 4, NULL, o, (size_t *)(void *)(o + 9)), ia, "num_runs");
    assert_int_equal(te_failures, 0);
}

/* CUDA: host memory where the context's memory is needed. */
static void test_wrong_memory_space(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    const parsum_status wm = PARSUM_ERR_WRONG_MEMORY_SPACE;
    unsigned char *h = tu_malloc(4000);
    size_t k;
    parsum_selector s = bytes_sel;
    s.bytes = h;
    EXPECT_ERR(parsum_select(tu_ctx, din, dout, 10, 4, &s, &k), wm, "bytes");
    s = bits_sel;
    s.bits = (const uint32_t *)(void *)h;
    EXPECT_ERR(parsum_partition(tu_ctx, din, dout, 10, 4, &s, &k), wm, "bits");
    EXPECT_ERR(parsum_select(tu_ctx, h, dout, 10, 4, &pred_sel, &k), wm, "in");
    EXPECT_ERR(parsum_select_indices(tu_ctx, din, 10, 4, &pred_sel, (uint64_t *)(void *)h, &k), wm, "indices");
    EXPECT_ERR(parsum_unique_by_key(tu_ctx, din, dval, NULL, h, 10, 4, 4, &k), wm, "values_out");
    EXPECT_ERR(parsum_run_length_nontrivial(tu_ctx, din, 10, 4, (uint64_t *)(void *)h, dout, &k), wm, "offsets");
    free(h);
    assert_int_equal(te_failures, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
static const struct CMUnitTest tests[] = {
    T(test_null_context), T(test_null_pointers), T(test_allowed),
    T(test_sizes),        T(test_cuda_sizes),    T(test_bad_selectors),
    T(test_overflow),     T(test_overlap),       T(test_wrong_memory_space),
};

PARSUM_TEST_MAIN(test_select_errors)
{
    tu_init("test_select_errors");
    return tu_finish(TU_RUN("test_select_errors", tests));
}
