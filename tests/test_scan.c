/*
 * test_scan.c - parsum_scan and parsum_reduce against the serial reference
 * (src/ref, the test oracle) on every dtype x operator, all four flag
 * combinations (inclusive/exclusive x forward/reverse), out of place and in
 * place, at sizes that hit every boundary of the CPU backend's chunking
 * (0..3, 31..33, chunk +-1, 2 and 3 chunks, around 8 chunks), primes and,
 * unless PARSUM_TEST_QUICK is set, 10^6 and 10^7. Outputs that start off
 * a vector boundary, with guards around them.
 *
 * Why: the backends cut the input into chunks, lanes and sub-chunks and
 * stitch the pieces together; off-by-one and carry bugs show only at some
 * sizes and some flags. Outputs are poisoned (0xA5 bytes) before each call
 * so that an element the backend forgot to write shows as a mismatch, and
 * the input is checked to be unchanged by out-of-place calls.
 *
 * The inputs are chosen so that every evaluation order gives the same bits
 * (test_util.h, TU_DATA_EXACT), hence exact comparison for floats too
 * (float MIN/MAX compare values: parsum.h lets -0.0 and +0.0 stand for
 * each other, and any NaN for any other). A
 * separate test checks float SUM on general random floats against a
 * higher-precision serial sum with the error bound parsum documents, and
 * another checks MIN/MAX on inputs full of NaNs (NaN operands are ignored).
 */
#include "test_util.h"

#include "ref/ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan_case {
    parsum_dtype dtype;
    parsum_op op;
} scan_case;

static const unsigned all_flags[4] = {
    PARSUM_INCLUSIVE, PARSUM_EXCLUSIVE, PARSUM_REVERSE,
    PARSUM_EXCLUSIVE | PARSUM_REVERSE};

/* Checks scan (4 flags x out of place / in place) and reduce of one host
 * input against the reference; counts failures. `tag` names the input. */
static void check_input(parsum_dtype d, parsum_op op, const void *in,
                        size_t n, const char *tag, size_t *failures)
{
    size_t es = parsum_dtype_size(d), bytes = n * es;
    unsigned char *want = tu_malloc(bytes), *got = tu_malloc(bytes);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    char what[256];
    tu_upload(din, in, bytes);

    for (int f = 0; f < 4; f++) {
        unsigned flags = all_flags[f];
        parsum__ref_scan(in, want, n, d, op, flags);
        for (int inplace = 0; inplace < 2; inplace++) {
            snprintf(what, sizeof what,
                     "scan %s %s %s %s n=%zu %s (%s data, seed 0x%llx)",
                     parsum_backend_name(tu_backend), parsum_dtype_name(d),
                     parsum_op_name(op), tu_flags_name(flags), n,
                     inplace ? "in-place" : "out-of-place", tag,
                     (unsigned long long)tu_seed);
            void *src = din;
            if (inplace) {
                tu_upload(dout, in, bytes);
                src = dout;
            } else {
                tu_dev_poison(dout, bytes);
            }
            parsum_status st = parsum_scan(tu_ctx, src, dout, n, d, op, flags);
            if (st != PARSUM_OK) {
                tu_report(failures, "  %s: returned %s: %s\n", what,
                          parsum_status_name(st), parsum_last_error(tu_ctx));
                continue;
            }
            tu_download(got, dout, bytes);
            if (tu_compare_op(d, op, want, got, n, what) != 0)
                (*failures)++;
        }
    }

    /* Out-of-place calls must leave the input alone. */
    tu_download(got, din, bytes);
    if (memcmp(got, in, bytes) != 0)
        tu_report(failures, "  scan %s %s %s n=%zu: out-of-place scans "
                  "modified the input\n", parsum_backend_name(tu_backend),
                  parsum_dtype_name(d), parsum_op_name(op), n);

    /* Reduce into a poisoned host element. */
    unsigned char rw[8], rg[8];
    parsum__ref_reduce(in, n, d, op, rw);
    memset(rg, TU_POISON, sizeof rg);
    snprintf(what, sizeof what, "reduce %s %s %s n=%zu (%s data, seed 0x%llx)",
             parsum_backend_name(tu_backend), parsum_dtype_name(d),
             parsum_op_name(op), n, tag, (unsigned long long)tu_seed);
    parsum_status st = parsum_reduce(tu_ctx, din, n, d, op, rg);
    if (st != PARSUM_OK)
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    else if (tu_compare_op(d, op, rw, rg, 1, what) != 0)
        (*failures)++;

    tu_dev_free(din);
    tu_dev_free(dout);
    free(want);
    free(got);
}

/* One (dtype, op) over the whole size list. */
static void test_scan_case(void **state)
{
    const scan_case *c = *state;
    size_t sizes[32], failures = 0;
    size_t m = tu_sizes(parsum_dtype_size(c->dtype), sizes);
    for (size_t k = 0; k < m; k++) {
        size_t n = sizes[k];
        tu_rng r = tu_rng_for(c->dtype, c->op, n, TU_DATA_EXACT);
        void *in = tu_malloc(n * parsum_dtype_size(c->dtype));
        tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in, n);
        check_input(c->dtype, c->op, in, n, "exact", &failures);
        free(in);
    }
    assert_int_equal(failures, 0);
}

/* Outputs that start off a vector boundary (malloc gives 16 bytes): every
 * misalignment by whole elements within 64 bytes, each flag combination,
 * over nine chunks of the CPU backend (two threads or more) and a tail.
 * Large outputs are streamed, and the aligned stores are then cut across
 * the blocks (kernels_type.inc, FN(sink)); run under
 * PARSUM_CPU_STREAM_BYTES=0 (the _stream tests) that path is taken here.
 * The guards around the output catch a vector written past a chunk's
 * end. */
static void test_misaligned_out(void **state)
{
    (void)state;
    static const parsum_dtype dts[] = {PARSUM_U8,  PARSUM_I16, PARSUM_I32,
                                       PARSUM_F32, PARSUM_I64, PARSUM_F64};
    size_t failures = 0;
    char what[200];
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
        parsum_dtype d = dts[t];
        size_t es = parsum_dtype_size(d), n = 9 * tu_chunk(es) + 77;
        tu_rng r = tu_rng_for(d, PARSUM_SUM, n, TU_DATA_EXACT);
        unsigned char *in = tu_malloc(n * es), *want = tu_malloc(n * es),
                      *got = tu_malloc(n * es);
        tu_fill(&r, d, PARSUM_SUM, TU_DATA_EXACT, in, n);
        void *din = tu_dev_alloc(n * es);
        tu_upload(din, in, n * es);
        for (int f = 0; f < 4; f++) {
            parsum__ref_scan(in, want, n, d, PARSUM_SUM, all_flags[f]);
            for (size_t shift = es; shift < 64; shift += es) {
                tu_shifted o = tu_shifted_alloc(n * es, shift);
                snprintf(what, sizeof what, "scan %s %s sum %s n=%zu out at "
                         "64k+%zu bytes", parsum_backend_name(tu_backend),
                         parsum_dtype_name(d), tu_flags_name(all_flags[f]), n,
                         shift);
                parsum_status st = parsum_scan(tu_ctx, din, o.out, n, d,
                                               PARSUM_SUM, all_flags[f]);
                tu_check_shifted(st, &o, d, want, got, n, what, &failures);
                tu_shifted_free(&o);
            }
        }
        tu_dev_free(din);
        free(in);
        free(want);
        free(got);
    }
    assert_int_equal(failures, 0);
}

/* 10^7 elements, I32 SUM (wrapping) and F64 SUM (exact integer data). */
static void test_ten_million(void **state)
{
    (void)state;
    if (tu_quick)
        skip();
    static const scan_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                      {PARSUM_F64, PARSUM_SUM}};
    size_t n = 10000000, failures = 0;
    for (size_t k = 0; k < 2; k++) {
        tu_rng r = tu_rng_for(cases[k].dtype, cases[k].op, n, TU_DATA_EXACT);
        void *in = tu_malloc(n * parsum_dtype_size(cases[k].dtype));
        tu_fill(&r, cases[k].dtype, cases[k].op, TU_DATA_EXACT, in, n);
        check_input(cases[k].dtype, cases[k].op, in, n, "exact", &failures);
        free(in);
    }
    assert_int_equal(failures, 0);
}

/* Calls in a row whose look-back state overlaps: on the GPU the plain
 * scan's tile descriptors are not zeroed between calls but tagged with
 * the call (src/cuda/NOTES.md section 2), so a descriptor a larger or
 * earlier call left behind, of the same dtype or another of the same
 * descriptor size, must read as unpublished. Sizes alternate between many
 * tiles and a few, dtypes between 4- and 8-byte values, the data change
 * every call. PARSUM_CUDA_TAG_FIRST near 2^30 runs this through the
 * buffer's periodic re-zeroing. */
static void test_state_reuse(void **state)
{
    (void)state;
    static const scan_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                      {PARSUM_F64, PARSUM_SUM},
                                      {PARSUM_U8, PARSUM_MAX},
                                      {PARSUM_F32, PARSUM_SUM},
                                      {PARSUM_I64, PARSUM_XOR}};
    static const size_t sizes[] = {(size_t)1 << 21, 3 * 8192 + 5, 70001,
                                   (size_t)1 << 20, 2 * 8192 + 1};
    const size_t max = (size_t)1 << 21;
    size_t failures = 0;
    unsigned char *in = tu_malloc(max * 8), *want = tu_malloc(max * 8),
                  *got = tu_malloc(max * 8);
    void *din = tu_dev_alloc(max * 8), *dout = tu_dev_alloc(max * 8);
    char what[200];
    for (int round = 0; round < 12; round++) {
        const scan_case *c = &cases[round % 5];
        const size_t n = sizes[(round * 3) % 5];
        const size_t es = parsum_dtype_size(c->dtype);
        const unsigned flags = all_flags[round % 4];
        tu_rng r = tu_rng_for(c->dtype, c->op, n, 1000 + round);
        tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in, n);
        parsum__ref_scan(in, want, n, c->dtype, c->op, flags);
        tu_upload(din, in, n * es);
        tu_dev_poison(dout, n * es);
        TU_OK(parsum_scan(tu_ctx, din, dout, n, c->dtype, c->op, flags));
        tu_download(got, dout, n * es);
        snprintf(what, sizeof what, "scan %s %s %s %s n=%zu, call %d of a row",
                 parsum_backend_name(tu_backend), parsum_dtype_name(c->dtype),
                 parsum_op_name(c->op), tu_flags_name(flags), n, round);
        if (tu_compare_op(c->dtype, c->op, want, got, n, what) != 0)
            failures++;
    }
    tu_dev_free(din);
    tu_dev_free(dout);
    free(in);
    free(want);
    free(got);
    assert_int_equal(failures, 0);
}

/* parsum.h, checked without the reference: "a NaN operand yields the other
 * operand ... the result is NaN only if all operands are NaN", so on an
 * all-NaN input every inclusive prefix and the reduce are NaN, and an
 * exclusive scan is the identity first, then NaN. */
static void check_all_nan_documented(parsum_dtype d, parsum_op op, size_t n,
                                     size_t *failures)
{
    size_t es = parsum_dtype_size(d), bytes = n * es;
    unsigned char *in = tu_malloc(bytes), *want = tu_malloc(bytes),
                  *got = tu_malloc(bytes), id[8], red[8];
    for (size_t i = 0; i < n; i++)
        tu_set(d, in, i, NAN);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    tu_upload(din, in, bytes);
    TU_OK(parsum_op_identity(d, op, id));
    char what[200];
    for (int f = 0; f < 4; f++) {
        unsigned flags = all_flags[f];
        memcpy(want, in, bytes);
        if (flags & PARSUM_EXCLUSIVE)
            memcpy(want + ((flags & PARSUM_REVERSE) ? n - 1 : 0) * es, id, es);
        tu_dev_poison(dout, bytes);
        TU_OK(parsum_scan(tu_ctx, din, dout, n, d, op, flags));
        tu_download(got, dout, bytes);
        snprintf(what, sizeof what, "scan %s %s %s %s n=%zu all-NaN input "
                 "(documented: NaN unless no operand)",
                 parsum_backend_name(tu_backend), parsum_dtype_name(d),
                 parsum_op_name(op), tu_flags_name(flags), n);
        if (tu_compare_op(d, op, want, got, n, what) != 0)
            (*failures)++;
    }
    TU_OK(parsum_reduce(tu_ctx, din, n, d, op, red));
    snprintf(what, sizeof what, "reduce %s %s %s n=%zu all-NaN input "
             "(documented: NaN)", parsum_backend_name(tu_backend),
             parsum_dtype_name(d), parsum_op_name(op), n);
    if (tu_compare_op(d, op, in, red, 1, what) != 0)
        (*failures)++;
    tu_dev_free(din);
    tu_dev_free(dout);
    free(in);
    free(want);
    free(got);
}

/* MIN/MAX on floats with NaNs against the reference: ~25% NaN with NaN runs
 * at both ends, all NaN, and all NaN but one number in the middle (long
 * all-NaN prefixes and suffixes that cross chunk boundaries). */
static void test_nan_minmax(void **state)
{
    (void)state;
    static const parsum_dtype dts[] = {PARSUM_F32, PARSUM_F64};
    static const parsum_op ops[] = {PARSUM_MIN, PARSUM_MAX};
    size_t failures = 0;
    for (int i = 0; i < 2; i++) {
        size_t c = tu_chunk(parsum_dtype_size(dts[i]));
        size_t sizes[] = {1, 2, 3, 5, 33, c - 1, c + 1, 3 * c + 1, 65537};
        for (int j = 0; j < 2; j++) {
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                size_t n = sizes[k];
                tu_rng r = tu_rng_for(dts[i], ops[j], n, TU_DATA_NAN);
                void *in = tu_malloc(n * parsum_dtype_size(dts[i]));
                tu_fill(&r, dts[i], ops[j], TU_DATA_NAN, in, n);
                check_input(dts[i], ops[j], in, n, "NaN", &failures);
                /* All NaN, but one number in the middle. */
                for (size_t e = 0; e < n; e++)
                    tu_set(dts[i], in, e, NAN);
                check_input(dts[i], ops[j], in, n, "all-NaN", &failures);
                tu_set(dts[i], in, n / 2, -2.5);
                check_input(dts[i], ops[j], in, n, "one-number-NaN", &failures);
                free(in);
                check_all_nan_documented(dts[i], ops[j], n, &failures);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* Float SUM on random (non-integer, mixed magnitude) floats against a
 * serial sum in higher precision (double for f32, long double for f64),
 * within k * eps * (|x_1| + ... + |x_k|) for a prefix of k terms: the
 * bound of any summation order, which parsum documents. */
static void test_float_sum_error_bound(void **state)
{
    (void)state;
    static const parsum_dtype dts[] = {PARSUM_F32, PARSUM_F64};
    size_t failures = 0;
    for (int i = 0; i < 2; i++) {
        parsum_dtype d = dts[i];
        size_t es = parsum_dtype_size(d);
        double eps = d == PARSUM_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
        size_t c = tu_chunk(es);
        size_t sizes[] = {1000, 3 * c + 7, 65537, tu_quick ? 1 : 1000003};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            tu_rng r = tu_rng_for(d, PARSUM_SUM, n, TU_DATA_ROUNDING);
            unsigned char *in = tu_malloc(n * es), *want = tu_malloc(n * es),
                          *got = tu_malloc(n * es);
            double *bound = tu_malloc(n * sizeof *bound);
            tu_fill(&r, d, PARSUM_SUM, TU_DATA_ROUNDING, in, n);
            void *din = tu_dev_alloc(n * es), *dout = tu_dev_alloc(n * es);
            tu_upload(din, in, n * es);
            char what[200];
            for (int f = 0; f < 4; f++) {
                unsigned flags = all_flags[f];
                int excl = (flags & PARSUM_EXCLUSIVE) != 0;
                long double acc = 0, abs_acc = 0;
                for (size_t s = 0; s < n; s++) {
                    size_t e = (flags & PARSUM_REVERSE) ? n - 1 - s : s;
                    long double x = tu_get(d, in, e);
                    if (!excl) {
                        acc += x;
                        abs_acc += fabsl(x);
                    }
                    tu_set(d, want, e, (double)acc);
                    /* s (+1 inclusive) terms; rounding `want` itself to
                     * the dtype costs eps * |acc| more. */
                    bound[e] = (double)((long double)(s + !excl) * eps * abs_acc +
                                        eps * fabsl(acc));
                    if (excl) {
                        acc += x;
                        abs_acc += fabsl(x);
                    }
                }
                tu_dev_poison(dout, n * es);
                snprintf(what, sizeof what,
                         "scan %s %s sum %s n=%zu random floats (seed 0x%llx)",
                         parsum_backend_name(tu_backend), parsum_dtype_name(d),
                         tu_flags_name(flags), n, (unsigned long long)tu_seed);
                parsum_status st =
                    parsum_scan(tu_ctx, din, dout, n, d, PARSUM_SUM, flags);
                if (st != PARSUM_OK) {
                    tu_report(&failures, "  %s: returned %s\n", what,
                              parsum_status_name(st));
                    continue;
                }
                tu_download(got, dout, n * es);
                if (tu_compare(d, want, got, n, bound, what) != 0)
                    failures++;
            }
            /* Reduce: the whole sum, same bound. */
            long double acc = 0, abs_acc = 0;
            for (size_t s = 0; s < n; s++) {
                acc += tu_get(d, in, s);
                abs_acc += fabsl((long double)tu_get(d, in, s));
            }
            unsigned char rw[8], rg[8];
            tu_set(d, rw, 0, (double)acc);
            double rb = (double)((long double)n * eps * abs_acc + eps * fabsl(acc));
            memset(rg, TU_POISON, sizeof rg);
            TU_OK(parsum_reduce(tu_ctx, din, n, d, PARSUM_SUM, rg));
            snprintf(what, sizeof what,
                     "reduce %s %s sum n=%zu random floats (seed 0x%llx)",
                     parsum_backend_name(tu_backend), parsum_dtype_name(d), n,
                     (unsigned long long)tu_seed);
            if (tu_compare(d, rw, rg, 1, &rb, what) != 0)
                failures++;
            tu_dev_free(din);
            tu_dev_free(dout);
            free(in);
            free(want);
            free(got);
            free(bound);
        }
    }
    assert_int_equal(failures, 0);
}

/* Reduce may write its result to the context's memory too (device memory
 * on CUDA; on the CPU that is host memory again). */
static void test_reduce_result_in_context_memory(void **state)
{
    (void)state;
    static const scan_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                      {PARSUM_F64, PARSUM_MAX},
                                      {PARSUM_U8, PARSUM_XOR},
                                      {PARSUM_I64, PARSUM_PROD}};
    size_t failures = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        parsum_dtype d = cases[k].dtype;
        size_t es = parsum_dtype_size(d);
        size_t sizes[] = {0, 1000, 3 * tu_chunk(es) + 1};
        for (size_t j = 0; j < 3; j++) {
            size_t n = sizes[j];
            tu_rng r = tu_rng_for(d, cases[k].op, n, 77);
            void *in = tu_malloc(n * es);
            tu_fill(&r, d, cases[k].op, TU_DATA_EXACT, in, n);
            void *din = tu_dev_alloc(n * es), *dres = tu_dev_alloc(es);
            tu_upload(din, in, n * es);
            tu_dev_poison(dres, es);
            unsigned char rw[8], rg[8];
            parsum__ref_reduce(in, n, d, cases[k].op, rw);
            TU_OK(parsum_reduce(tu_ctx, din, n, d, cases[k].op, dres));
            tu_download(rg, dres, es);
            char what[160];
            snprintf(what, sizeof what,
                     "reduce %s %s %s n=%zu into context memory (seed 0x%llx)",
                     parsum_backend_name(tu_backend), parsum_dtype_name(d),
                     parsum_op_name(cases[k].op), n, (unsigned long long)tu_seed);
            if (tu_compare_op(d, cases[k].op, rw, rg, 1, what) != 0)
                failures++;
            tu_dev_free(din);
            tu_dev_free(dres);
            free(in);
        }
    }
    assert_int_equal(failures, 0);
}

#define SC(D, O)                                                             \
    {"scan_" #D "_" #O, test_scan_case, NULL, NULL,                          \
     &(scan_case){PARSUM_##D, PARSUM_##O}}
#define INT_CASES(D)                                                         \
    SC(D, SUM), SC(D, PROD), SC(D, MIN), SC(D, MAX), SC(D, AND), SC(D, OR),  \
        SC(D, XOR)
#define FLOAT_CASES(D) SC(D, SUM), SC(D, PROD), SC(D, MIN), SC(D, MAX)

static const struct CMUnitTest tests[] = {
    INT_CASES(I8),   INT_CASES(U8),   INT_CASES(I16),  INT_CASES(U16),
    INT_CASES(I32),  INT_CASES(U32),  INT_CASES(I64),  INT_CASES(U64),
    FLOAT_CASES(F32), FLOAT_CASES(F64),
    cmocka_unit_test(test_nan_minmax),
    cmocka_unit_test(test_float_sum_error_bound),
    cmocka_unit_test(test_reduce_result_in_context_memory),
    cmocka_unit_test(test_ten_million),
    cmocka_unit_test(test_state_reuse),
    cmocka_unit_test(test_misaligned_out),
};

PARSUM_TEST_MAIN(test_scan)
{
    tu_init("test_scan");
    return tu_finish(TU_RUN("test_scan", tests));
}
