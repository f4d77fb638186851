/*
 * test_segmented_errors.c - bad arguments to the segmented and keyed
 * operations get the documented status and a fresh message naming the
 * argument, and the context keeps working (as test_errors.c checks for
 * scan and reduce; the harness both use is test_err_util.h).
 *
 * Covered: NULL context; NULL data, segments, flags, offsets (always read,
 * even for zero elements), outputs and counts; unknown dtype, op, flags
 * bits, seg->kind, key dtypes that are not integers; malformed offsets on
 * the CPU (not starting at 0, decreasing, not ending at n; the first bad
 * index named, also deep into a long array); overlaps (partial in/out,
 * segments or keys under an output, outputs under inputs or each other);
 * sizes that overflow, a flags_bit_offset past the address space; custom
 * operators without identity or callback; n == 0 with NULL data (allowed);
 * on CUDA, host memory where device memory is needed.
 */
#include "test_err_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context buffers: din and dout of 8000 bytes; doff the offsets
 * {0, 4, 10} (two segments of 10 elements), dflags four flag words with
 * the same heads. */
static void *din, *dout, *dflags;
static uint64_t *doff;
static parsum_segments seg_off, seg_fl;
static const parsum_status np = PARSUM_ERR_NULL_POINTER,
                           ia = PARSUM_ERR_INVALID_ARGUMENT,
                           ov = PARSUM_ERR_OVERFLOW;

static int setup(void **state)
{
    (void)state;
    te_failures = 0;
    din = tu_dev_alloc(8000);
    dout = tu_dev_alloc(8000);
    dflags = tu_dev_alloc(64);
    doff = tu_dev_alloc(64);
    tu_dev_poison(din, 8000);
    static const uint64_t off[3] = {0, 4, 10};
    static const uint32_t fl[4] = {0x11u, 0, 0, 0};
    tu_upload(doff, off, sizeof off);
    tu_upload(dflags, fl, sizeof fl);
    parsum_segments o = {PARSUM_SEG_OFFSETS, NULL, 0, doff, 2};
    parsum_segments f = {PARSUM_SEG_FLAGS, dflags, 0, NULL, 0};
    seg_off = o;
    seg_fl = f;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_dev_free(din);
    tu_dev_free(dout);
    tu_dev_free(dflags);
    tu_dev_free(doff);
    return 0;
}

static void test_null_context(void **state)
{
    (void)state;
    size_t k;
    EXPECT_STATUS(parsum_segmented_scan(NULL, din, dout, 10, PARSUM_I32, PARSUM_SUM, &seg_off, 0), np);
    EXPECT_STATUS(parsum_segmented_scan_custom(NULL, din, dout, 10, &te_add_op, &seg_off, 0), np);
    EXPECT_STATUS(parsum_segmented_reduce(NULL, din, dout, doff, 2, PARSUM_I32, PARSUM_SUM), np);
    EXPECT_STATUS(parsum_segmented_reduce_custom(NULL, din, dout, doff, 2, &te_add_op), np);
    EXPECT_STATUS(parsum_scan_by_key(NULL, din, PARSUM_I32, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), np);
    EXPECT_STATUS(parsum_reduce_by_key(NULL, din, PARSUM_I32, din, 10, PARSUM_I32, PARSUM_SUM, dout, dout, &k), np);
    EXPECT_STATUS(parsum_offsets_to_flags(NULL, doff, 2, 10, dflags), np);
    EXPECT_STATUS(parsum_flags_to_offsets(NULL, &seg_fl, 10, doff, &k), np);
    assert_int_equal(te_failures, 0);
}

static void test_null_pointers(void **state)
{
    (void)state;
    char *o = dout;
    size_t k;
    parsum_segments s = seg_fl;
    s.flags = NULL;
    parsum_segments so = seg_off;
    so.offsets = NULL;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, NULL, dout, 10, PARSUM_I32, PARSUM_SUM, &seg_off, 0), np, "in");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, NULL, 10, PARSUM_I32, PARSUM_SUM, &seg_off, 0), np, "out");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, NULL, 0), np, "seg");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), np, "flags");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &so, 0), np, "offsets");
    so.num_segments = 0; /* offsets are read even for no segment */
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, NULL, NULL, 0, PARSUM_I32, PARSUM_SUM, &so, 0), np, "offsets");
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &te_add_op, NULL, 0), np, "seg");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, NULL, 2, PARSUM_I32, PARSUM_SUM), np, "offsets");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, NULL, 0, PARSUM_I32, PARSUM_SUM), np, "offsets");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, NULL, doff, 2, PARSUM_I32, PARSUM_SUM), np, "out");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, NULL, dout, doff, 2, PARSUM_I32, PARSUM_SUM), np, "in");
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, NULL, doff, 2, &te_add_op), np, "out");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, NULL, PARSUM_I32, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), np, "keys");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, o + 4000, PARSUM_I32, NULL, dout, 10, PARSUM_I32, PARSUM_SUM, 0), np, "in");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, din, PARSUM_I32, din, NULL, 10, PARSUM_I32, PARSUM_SUM, 0), np, "out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, NULL, PARSUM_I32, din, 10, PARSUM_I32, PARSUM_SUM, dout, o + 4000, &k), np, "keys_in");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I32, NULL, 10, PARSUM_I32, PARSUM_SUM, dout, o + 4000, &k), np, "values_in");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I32, din, 10, PARSUM_I32, PARSUM_SUM, NULL, o + 4000, &k), np, "keys_out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I32, din, 10, PARSUM_I32, PARSUM_SUM, dout, NULL, &k), np, "values_out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I32, din, 10, PARSUM_I32, PARSUM_SUM, dout, o + 4000, NULL), np, "num_runs");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, NULL, 2, 10, dflags), np, "offsets");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, doff, 2, 10, NULL), np, "flags");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, NULL, 10, dout, &k), np, "seg");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &s, 10, dout, &k), np, "flags");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &seg_fl, 10, NULL, &k), np, "offsets");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &seg_fl, 0, NULL, &k), np, "offsets");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &seg_fl, 10, dout, NULL), np, "num_segments");
    assert_int_equal(te_failures, 0);
}

static void test_bad_enums(void **state)
{
    (void)state;
    const parsum_status bd = PARSUM_ERR_INVALID_DTYPE, bo = PARSUM_ERR_INVALID_OP,
                        mm = PARSUM_ERR_DTYPE_OP_MISMATCH;
    char *o = dout;
    size_t k;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, (parsum_dtype)42, PARSUM_SUM, &seg_off, 0), bd, "dtype");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, (parsum_op)7, &seg_off, 0), bo, "op");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_F32, PARSUM_XOR, &seg_off, 0), mm, "op");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, doff, 2, (parsum_dtype)-1, PARSUM_SUM), bd, "dtype");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, doff, 2, PARSUM_F64, PARSUM_AND), mm, "op");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, din, PARSUM_I32, din, dout, 10, PARSUM_I32, (parsum_op)-1, 0), bo, "op");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I32, din, 10, PARSUM_F32, PARSUM_OR, dout, o + 4000, &k), mm, "op");
    static const unsigned bad_flags[] = {4u, 0x100u, ~0u};
    for (int i = 0; i < 3; i++) {
        EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &seg_off, bad_flags[i]), ia, "flags");
        EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &te_add_op, &seg_fl, bad_flags[i]), ia, "flags");
        EXPECT_ERR(parsum_scan_by_key(tu_ctx, din, PARSUM_U8, din, dout, 10, PARSUM_I32, PARSUM_SUM, bad_flags[i]), ia, "flags");
    }
    static const int bad_kinds[] = {2, -1, 1000};
    for (int i = 0; i < 3; i++) {
        parsum_segments s = seg_off;
        s.kind = (parsum_seg_kind)bad_kinds[i];
        EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "kind");
        EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &te_add_op, &s, 0), ia, "kind");
        EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &s, 10, dout, &k), ia, "kind");
    }
    /* flags_to_offsets converts flags only. */
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &seg_off, 10, dout, &k), ia, "kind");
    static const int bad_keys[] = {PARSUM_F32, PARSUM_F64, 42, -1};
    for (int i = 0; i < 4; i++) {
        parsum_dtype kd = (parsum_dtype)bad_keys[i];
        EXPECT_ERR(parsum_scan_by_key(tu_ctx, din, kd, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), bd, "key_dtype");
        EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, kd, din, 10, PARSUM_I32, PARSUM_SUM, dout, o + 4000, &k), bd, "key_dtype");
    }
    assert_int_equal(te_failures, 0);
}

/* CPU contexts read the offsets and reject malformed ones. */
static void test_bad_offsets(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CPU)
        skip(); /* CUDA does not read device memory to check them */
    uint64_t bad_start[3] = {1, 4, 10}, decreasing[5] = {0, 4, 6, 5, 10},
             short_end[3] = {0, 4, 9};
    uint32_t fl[4];
    parsum_segments s = seg_off;
    s.offsets = bad_start;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "[0]");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, bad_start, 2, PARSUM_I32, PARSUM_SUM), ia, "[0]");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, bad_start, 2, 10, fl), ia, "[0]");
    s.offsets = decreasing;
    s.num_segments = 4;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "[3]");
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &te_add_op, &s, 0), ia, "[3]");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, decreasing, 4, PARSUM_I32, PARSUM_SUM), ia, "[3]");
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, dout, decreasing, 4, &te_add_op), ia, "[3]");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, decreasing, 4, 10, fl), ia, "[3]");
    s.offsets = short_end;
    s.num_segments = 2;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "[2]");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, short_end, 2, 10, fl), ia, "[2]");
    /* Deep in a long array: the first decrease is named. */
    size_t m = 100000;
    uint64_t *big = tu_malloc((m + 1) * 8);
    for (size_t i = 0; i <= m; i++)
        big[i] = i / 4;
    big[77777] = 0;
    big[90001] = 0;
    unsigned char *hin = tu_malloc(m), *hout = tu_malloc(m);
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, hin, hout, big, m, PARSUM_I8, PARSUM_MAX), ia, "[77777]");
    free(big);
    free(hin);
    free(hout);
    /* Long enough for the check to run in parts on 2 threads (8 parts of
     * ceil(m / 8) offsets): a decrease right at the start of part 3 (its
     * pair straddles parts 2 and 3) is named before one in part 6. */
    m = ((size_t)1 << 21) + 13;
    size_t per = (m + 7) / 8;
    big = tu_malloc((m + 1) * 8);
    for (size_t i = 0; i <= m; i++)
        big[i] = i / 4;
    big[m] = m / 4;
    big[3 * per] = 0;
    big[6 * per + 5] = 1;
    hin = tu_malloc(m);
    hout = tu_malloc(m);
    char want[32];
    snprintf(want, sizeof want, "[%zu]", 3 * per);
    TU_OK(parsum_context_set_threads(tu_ctx, 2));
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, hin, hout, big, m, PARSUM_I8, PARSUM_MAX), ia, want);
    big[3 * per] = big[3 * per - 1]; /* now only the one in part 6 */
    snprintf(want, sizeof want, "[%zu]", 6 * per + 5);
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, hin, hout, big, m, PARSUM_I8, PARSUM_MAX), ia, want);
    big[6 * per + 5] = big[6 * per + 4]; /* none left: accepted */
    EXPECT_STATUS(parsum_segmented_reduce(tu_ctx, hin, hout, big, m, PARSUM_I8, PARSUM_MAX), PARSUM_OK);
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    free(big);
    free(hin);
    free(hout);
    assert_int_equal(te_failures, 0);
}

static void test_overlap(void **state)
{
    (void)state;
    char *b = din, *o = dout;
    size_t k;
    /* Partial in/out overlap; in place is fine. */
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, b, b + 4, 10, PARSUM_I32, PARSUM_SUM, &seg_off, 0), ia, "out");
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, b + 4, b, 10, &te_add_op, &seg_fl, 0), ia, "out");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, o + 4000, PARSUM_I32, b, b + 8, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "out");
    EXPECT_STATUS(parsum_segmented_scan(tu_ctx, b, b, 10, PARSUM_I32, PARSUM_SUM, &seg_off, 0), PARSUM_OK);
    EXPECT_STATUS(parsum_scan_by_key(tu_ctx, o + 4000, PARSUM_I32, b, b, 10, PARSUM_I32, PARSUM_SUM, 0), PARSUM_OK);
    /* The segments or the keys under out: the flag word actually read
     * (flags advanced by flags_bit_offset / 32 words), the offsets. */
    parsum_segments s = seg_fl;
    s.flags = (const uint32_t *)(o + 16);
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "out");
    s.flags = (const uint32_t *)(o + 8);
    s.flags_bit_offset = 64; /* reads the word at o + 16 */
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, o + 16, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "out");
    EXPECT_STATUS(parsum_segmented_scan(tu_ctx, din, o + 20, 10, PARSUM_I32, PARSUM_SUM, &s, 0), PARSUM_OK);
    static const uint64_t off[3] = {0, 4, 10};
    tu_upload(o + 32, off, sizeof off);
    s = seg_off;
    s.offsets = (const uint64_t *)(o + 32);
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ia, "out");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, o + 20, PARSUM_I32, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "keys");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, dout, PARSUM_I32, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "keys");
    /* Segmented reduce: out over in (a CUDA context knows only that in's
     * first element is read) or over the offsets. */
    if (tu_backend == PARSUM_BACKEND_CPU)
        EXPECT_ERR(parsum_segmented_reduce(tu_ctx, b, b + 8, doff, 2, PARSUM_I32, PARSUM_SUM), ia, "out");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, b, b, doff, 2, PARSUM_I32, PARSUM_SUM), ia, "out");
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, b + 4, b, doff, 2, &te_add_op), ia, "out");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, (char *)doff + 8, doff, 2, PARSUM_I32, PARSUM_SUM), ia, "out");
    /* reduce_by_key: every output apart from every other buffer. */
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, b, PARSUM_I32, o, 10, PARSUM_I32, PARSUM_SUM, b + 36, o + 4000, &k), ia, "keys_out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, b, PARSUM_I32, o, 10, PARSUM_I32, PARSUM_SUM, o + 8, o + 4000, &k), ia, "keys_out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, b, PARSUM_I32, o, 10, PARSUM_I32, PARSUM_SUM, o + 4000, b, &k), ia, "values_out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, b, PARSUM_I32, o, 10, PARSUM_I32, PARSUM_SUM, o + 4000, o, &k), ia, "values_out");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, b, PARSUM_I32, o, 10, PARSUM_I32, PARSUM_SUM, o + 4000, o + 4020, &k), ia, "values_out");
    /* Conversions. */
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, doff, 2, 10, (uint32_t *)((char *)doff + 16)), ia, "flags");
    s = seg_fl;
    s.flags = (const uint32_t *)(o + 80);
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &s, 10, (uint64_t *)(o + 40), &k), ia, "offsets");
    assert_int_equal(te_failures, 0);
}

static void test_overflow(void **state)
{
    (void)state;
    size_t k;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, SIZE_MAX / 2, PARSUM_I32, PARSUM_SUM, &seg_fl, 0), ov, "n");
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, SIZE_MAX / 3, &te_add_op, &seg_fl, 0), ov, "n");
    parsum_segments s = seg_off;
    s.num_segments = SIZE_MAX;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ov, "num_segments");
    s.num_segments = SIZE_MAX / 8;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ov, "num_segments");
    /* Flags near the top of the address space, whose bit offset points
     * past its end (never dereferenced: the check comes first). */
    s = seg_fl;
    s.flags = (const uint32_t *)(UINTPTR_MAX - 63);
    s.flags_bit_offset = (size_t)1 << 20;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), ov, "flags_bit_offset");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &s, 10, dout, &k), ov, "flags_bit_offset");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, doff, SIZE_MAX, PARSUM_I32, PARSUM_SUM), ov, "num_segments");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, doff, SIZE_MAX / 6, PARSUM_I64, PARSUM_SUM), ov, "num_segments");
    /* The offsets' size fits, out's (1024-byte elements) does not; checked
     * before any offset is read. */
    static unsigned char big_identity[1024];
    parsum_custom_op big = te_add_op;
    big.elem_size = 1024;
    big.identity = big_identity;
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, dout, doff, SIZE_MAX / 1000, &big), ov, "num_segments");
    /* Values (in place) fit, keys (8 bytes each) do not. */
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, dout, PARSUM_U64, din, din, SIZE_MAX / 4, PARSUM_U8, PARSUM_SUM, 0), ov, "n");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I64, din, SIZE_MAX / 4, PARSUM_U8, PARSUM_SUM, dout, dout, &k), ov, "n");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, doff, SIZE_MAX, 10, dflags), ov, "num_segments");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &seg_fl, SIZE_MAX, dout, &k), ov, "n");
    assert_int_equal(te_failures, 0);
}

static void test_custom_op_errors(void **state)
{
    (void)state;
    parsum_custom_op op = te_add_op;
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, NULL, &seg_off, 0), np, "op");
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, dout, doff, 2, NULL), np, "op");
    op.elem_size = 0;
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &op, &seg_off, 0), ia, "elem_size");
    op.elem_size = PARSUM_CUSTOM_MAX_ELEM_SIZE + 1;
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, dout, doff, 2, &op), ia, "elem_size");
    op = te_add_op;
    op.identity = NULL;
    EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &op, &seg_fl, 0), np, "identity");
    EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, dout, doff, 2, &op), np, "identity");
    if (tu_backend == PARSUM_BACKEND_CPU) {
        op = te_add_op;
        op.combine = NULL;
        EXPECT_ERR(parsum_segmented_scan_custom(tu_ctx, din, dout, 10, &op, &seg_off, 0), np, "combine");
        EXPECT_ERR(parsum_segmented_reduce_custom(tu_ctx, din, dout, doff, 2, &op), np, "combine");
    }
    assert_int_equal(te_failures, 0);
}

/* n == 0 (or no segment): NULL data is fine; counts are still written. */
static void test_empty_inputs(void **state)
{
    (void)state;
    parsum_segments s = seg_fl, so = seg_off;
    s.flags = NULL;
    s.flags_bit_offset = 12345;
    static const uint64_t zeros[3] = {0, 0, 0};
    uint64_t *dz = tu_dev_alloc(sizeof zeros);
    tu_upload(dz, zeros, sizeof zeros);
    so.offsets = dz;
    so.num_segments = 2; /* two empty segments */
    EXPECT_STATUS(parsum_segmented_scan(tu_ctx, NULL, NULL, 0, PARSUM_F32, PARSUM_MAX, &s, PARSUM_EXCLUSIVE), PARSUM_OK);
    EXPECT_STATUS(parsum_segmented_scan(tu_ctx, NULL, NULL, 0, PARSUM_U8, PARSUM_AND, &so, PARSUM_REVERSE), PARSUM_OK);
    EXPECT_STATUS(parsum_segmented_scan_custom(tu_ctx, NULL, NULL, 0, &te_add_op, &s, 0), PARSUM_OK);
    EXPECT_STATUS(parsum_segmented_reduce(tu_ctx, NULL, NULL, dz, 0, PARSUM_I16, PARSUM_MIN), PARSUM_OK);
    EXPECT_STATUS(parsum_scan_by_key(tu_ctx, NULL, PARSUM_I8, NULL, NULL, 0, PARSUM_F64, PARSUM_SUM, 0), PARSUM_OK);
    EXPECT_STATUS(parsum_offsets_to_flags(tu_ctx, dz, 2, 0, NULL), PARSUM_OK);
    /* Empty segments only, in NULL: each output the identity (CPU: in is
     * never read; CUDA cannot know that, parsum asks for in there). */
    if (tu_backend == PARSUM_BACKEND_CPU) {
        int16_t out[2] = {5, 5};
        EXPECT_STATUS(parsum_segmented_reduce(tu_ctx, NULL, out, dz, 2, PARSUM_I16, PARSUM_MIN), PARSUM_OK);
        if (out[0] != INT16_MAX || out[1] != INT16_MAX)
            tu_report(&te_failures, "  empty segments reduce to %d %d, not the "
                      "identity\n", out[0], out[1]);
    }
    size_t k;
    memset(&k, TU_POISON, sizeof k);
    EXPECT_STATUS(parsum_reduce_by_key(tu_ctx, NULL, PARSUM_U16, NULL, 0, PARSUM_I32, PARSUM_SUM, NULL, NULL, &k), PARSUM_OK);
    if (k != 0)
        tu_report(&te_failures, "  reduce_by_key of n = 0: num_runs = %zu\n",
                  k);
    memset(&k, TU_POISON, sizeof k);
    uint64_t *doff1 = tu_dev_alloc(8), o0;
    tu_dev_poison(doff1, 8);
    EXPECT_STATUS(parsum_flags_to_offsets(tu_ctx, &s, 0, doff1, &k), PARSUM_OK);
    tu_download(&o0, doff1, 8);
    if (k != 0 || o0 != 0)
        tu_report(&te_failures, "  flags_to_offsets of n = 0: num_segments = "
                  "%zu, offsets[0] = %llu\n", k, (unsigned long long)o0);
    tu_dev_free(doff1);
    tu_dev_free(dz);
    assert_int_equal(te_failures, 0);
}

/* CUDA: host memory where the context's memory is needed. */
static void test_wrong_memory_space(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    const parsum_status wm = PARSUM_ERR_WRONG_MEMORY_SPACE;
    static const uint64_t hoff[3] = {0, 4, 10};
    static const uint32_t hfl[1] = {0x11};
    unsigned char *h = tu_malloc(4000);
    size_t k;
    parsum_segments s = seg_off, f = seg_fl;
    s.offsets = hoff;
    f.flags = hfl;
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &s, 0), wm, "offsets");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM, &f, 0), wm, "flags");
    EXPECT_ERR(parsum_segmented_scan(tu_ctx, h, dout, 10, PARSUM_I32, PARSUM_SUM, &seg_fl, 0), wm, "in");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, dout, hoff, 2, PARSUM_I32, PARSUM_SUM), wm, "offsets");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, din, h, doff, 2, PARSUM_I32, PARSUM_SUM), wm, "out");
    EXPECT_ERR(parsum_segmented_reduce(tu_ctx, h, dout, doff, 2, PARSUM_I32, PARSUM_SUM), wm, "in");
    EXPECT_ERR(parsum_scan_by_key(tu_ctx, h, PARSUM_I32, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), wm, "keys");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_I32, din, 10, PARSUM_I32, PARSUM_SUM, h, dout, &k), wm, "keys_out");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, hoff, 2, 10, dflags), wm, "offsets");
    EXPECT_ERR(parsum_offsets_to_flags(tu_ctx, doff, 2, 10, (uint32_t *)h), wm, "flags");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &f, 10, dout, &k), wm, "flags");
    EXPECT_ERR(parsum_flags_to_offsets(tu_ctx, &seg_fl, 10, (uint64_t *)h, &k), wm, "offsets");
    free(h);
    assert_int_equal(te_failures, 0);
}

/* CUDA: reduce by key needs keys aligned to their type. */
static void test_misaligned_keys(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    unsigned char *k1 = (unsigned char *)din + 2, *o = dout;
    size_t k;
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, k1, PARSUM_U32, din, 10, PARSUM_I32, PARSUM_SUM, o, o + 4000, &k), ia, "keys_in");
    EXPECT_ERR(parsum_reduce_by_key(tu_ctx, din, PARSUM_U64, din, 10, PARSUM_I32, PARSUM_SUM, o + 4, o + 4000, &k), ia, "keys_out");
    assert_int_equal(te_failures, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
static const struct CMUnitTest tests[] = {
    T(test_null_context), T(test_null_pointers), T(test_bad_enums),
    T(test_bad_offsets),  T(test_overlap),       T(test_overflow),
    T(test_custom_op_errors), T(test_empty_inputs),
    T(test_wrong_memory_space), T(test_misaligned_keys),
};

PARSUM_TEST_MAIN(test_segmented_errors)
{
    tu_init("test_segmented_errors");
    return tu_finish(TU_RUN("test_segmented_errors", tests));
}
