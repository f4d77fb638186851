/*
 * test_errors.c - bad input gets a status and a message, never a crash or a
 * silent wrong answer; and the small functions of the API do what parsum.h
 * says.
 *
 * Every rejected call is checked for (1) the documented status, (2) a
 * non-empty parsum_last_error() that names the bad argument as a word
 * ("in", "out", "result", "dtype", "op", "flags", "elem_size", ...) and is
 * fresh (before each call an unrelated error is recorded, which must be
 * replaced), and (3) a context that still works: a correct scan follows
 * (the harness, shared with test_segmented_errors.c: test_err_util.h).
 *
 * Also covered: NULL data with n == 0 (allowed; reduce gives the
 * identity), status names and strings for every entry of
 * PARSUM_STATUS_TABLE and for unknown values, dtype sizes and names,
 * operator names and identities for every combination, context creation,
 * threads, caller workspace (fitting and too small, misaligned), reserve,
 * alloc/copy argument checks, the CUDA-only context functions (unsupported
 * on the CPU) and, on CUDA, host pointers given as data, misaligned
 * elements and custom operators with missing or broken CUDA source.
 */
#include "test_err_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context buffers of 1000 8-byte elements for the calls below. */
static void *din, *dout;
static unsigned char result[1024];

static int setup(void **state)
{
    (void)state;
    te_failures = 0;
    din = tu_dev_alloc(8000);
    dout = tu_dev_alloc(8000);
    tu_dev_poison(din, 8000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_dev_free(din);
    tu_dev_free(dout);
    return 0;
}

static void test_null_context(void **state)
{
    (void)state;
    void *p = NULL;
    const parsum_status np = PARSUM_ERR_NULL_POINTER;
    EXPECT_STATUS(parsum_scan(NULL, din, dout, 10, PARSUM_I32, PARSUM_SUM, 0), np);
    EXPECT_STATUS(parsum_reduce(NULL, din, 10, PARSUM_I32, PARSUM_SUM, result), np);
    EXPECT_STATUS(parsum_scan_custom(NULL, din, dout, 10, &te_add_op, 0), np);
    EXPECT_STATUS(parsum_reduce_custom(NULL, din, 10, &te_add_op, result), np);
    EXPECT_STATUS(parsum_context_set_threads(NULL, 2), np);
    EXPECT_STATUS(parsum_context_reserve(NULL, 100), np);
    EXPECT_STATUS(parsum_context_set_workspace(NULL, NULL, 0), np);
    EXPECT_STATUS(parsum_alloc(NULL, &p, 100), np);
    EXPECT_STATUS(parsum_copy(NULL, result, result, 1, PARSUM_COPY_HOST_TO_HOST), np);
    EXPECT_STATUS(parsum_synchronize(NULL), np);
    const char *m = parsum_last_error(NULL);
    if (m == NULL || *m == '\0')
        tu_report(&te_failures, "  parsum_last_error(NULL) is empty\n");
    assert_int_equal(te_failures, 0);
}

static void test_null_buffers(void **state)
{
    (void)state;
    const parsum_status np = PARSUM_ERR_NULL_POINTER;
    EXPECT_ERR(parsum_scan(tu_ctx, NULL, dout, 10, PARSUM_I32, PARSUM_SUM, 0), np, "in");
    EXPECT_ERR(parsum_scan(tu_ctx, din, NULL, 10, PARSUM_I32, PARSUM_SUM, 0), np, "out");
    EXPECT_ERR(parsum_reduce(tu_ctx, NULL, 10, PARSUM_F64, PARSUM_MAX, result), np, "in");
    EXPECT_ERR(parsum_reduce(tu_ctx, din, 10, PARSUM_F64, PARSUM_MAX, NULL), np, "result");
    EXPECT_ERR(parsum_reduce(tu_ctx, din, 0, PARSUM_F64, PARSUM_MAX, NULL), np, "result");
    EXPECT_ERR(parsum_scan_custom(tu_ctx, NULL, dout, 10, &te_add_op, 0), np, "in");
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, NULL, 10, &te_add_op, 0), np, "out");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, NULL, 10, &te_add_op, result), np, "in");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 10, &te_add_op, NULL), np, "result");

    /* n == 0: NULL data is fine, and reduce gives the identity. */
    for (int d = 0; d < PARSUM_DTYPE_COUNT; d++) {
        for (int op = 0; op < tu_op_count((parsum_dtype)d); op++) {
            unsigned char id[8];
            EXPECT_STATUS(parsum_scan(tu_ctx, NULL, NULL, 0, (parsum_dtype)d,
                                      (parsum_op)op, PARSUM_EXCLUSIVE), PARSUM_OK);
            memset(result, TU_POISON, 8);
            EXPECT_STATUS(parsum_reduce(tu_ctx, NULL, 0, (parsum_dtype)d,
                                        (parsum_op)op, result), PARSUM_OK);
            TU_OK(parsum_op_identity((parsum_dtype)d, (parsum_op)op, id));
            if (memcmp(id, result, parsum_dtype_size((parsum_dtype)d)) != 0)
                tu_report(&te_failures, "  reduce %s %s of n = 0 is not the "
                          "identity\n", parsum_dtype_name((parsum_dtype)d),
                          parsum_op_name((parsum_op)op));
        }
    }
    parsum_status st = parsum_scan_custom(tu_ctx, NULL, NULL, 0, &te_add_op, 0);
    bool unsup = st == PARSUM_ERR_UNSUPPORTED && tu_backend != PARSUM_BACKEND_CPU;
    if (!unsup) {
        EXPECT_STATUS(st, PARSUM_OK);
        memset(result, TU_POISON, 4);
        EXPECT_STATUS(parsum_reduce_custom(tu_ctx, NULL, 0, &te_add_op, result),
                      PARSUM_OK);
        if (memcmp(result, te_add_op.identity, 4) != 0)
            tu_report(&te_failures, "  reduce_custom of n = 0 is not the identity\n");
    }
    assert_int_equal(te_failures, 0);
}

static void test_bad_enums(void **state)
{
    (void)state;
    const parsum_status bd = PARSUM_ERR_INVALID_DTYPE, bo = PARSUM_ERR_INVALID_OP;
    const parsum_status mm = PARSUM_ERR_DTYPE_OP_MISMATCH,
                        ia = PARSUM_ERR_INVALID_ARGUMENT;
    EXPECT_ERR(parsum_scan(tu_ctx, din, dout, 10, (parsum_dtype)42, PARSUM_SUM, 0), bd, "dtype");
    EXPECT_ERR(parsum_scan(tu_ctx, din, dout, 10, (parsum_dtype)-1, PARSUM_SUM, 0), bd, "dtype");
    EXPECT_ERR(parsum_reduce(tu_ctx, din, 10, (parsum_dtype)42, PARSUM_SUM, result), bd, "dtype");
    EXPECT_ERR(parsum_scan(tu_ctx, din, dout, 10, PARSUM_I32, (parsum_op)42, 0), bo, "op");
    EXPECT_ERR(parsum_scan(tu_ctx, din, dout, 10, PARSUM_I32, (parsum_op)-1, 0), bo, "op");
    EXPECT_ERR(parsum_reduce(tu_ctx, din, 10, PARSUM_U8, (parsum_op)7, result), bo, "op");
    for (int d = PARSUM_F32; d <= PARSUM_F64; d++) {
        for (int op = PARSUM_AND; op <= PARSUM_XOR; op++) {
            EXPECT_ERR(parsum_scan(tu_ctx, din, dout, 10, (parsum_dtype)d,
                                   (parsum_op)op, 0), mm, "op");
            EXPECT_ERR(parsum_reduce(tu_ctx, din, 10, (parsum_dtype)d,
                                     (parsum_op)op, result), mm, "op");
        }
    }
    static const unsigned bad_flags[] = {4u, 0x100u, 0x80000000u, ~0u};
    for (int k = 0; k < 4; k++) {
        EXPECT_ERR(parsum_scan(tu_ctx, din, dout, 10, PARSUM_I32, PARSUM_SUM,
                               bad_flags[k]), ia, "flags");
        EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &te_add_op,
                                      bad_flags[k]), ia, "flags");
    }
    assert_int_equal(te_failures, 0);
}

static void test_overlap(void **state)
{
    (void)state;
    const parsum_status ia = PARSUM_ERR_INVALID_ARGUMENT;
    char *b = din;
    EXPECT_ERR(parsum_scan(tu_ctx, b, b + 4, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "out");
    EXPECT_ERR(parsum_scan(tu_ctx, b + 4, b, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "out");
    EXPECT_ERR(parsum_scan(tu_ctx, b, b + 1, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "out");
    EXPECT_ERR(parsum_scan(tu_ctx, b, b + 36, 10, PARSUM_I32, PARSUM_SUM,
                           PARSUM_REVERSE), ia, "out");
    EXPECT_ERR(parsum_scan_custom(tu_ctx, b, b + 8, 10, &te_add_op, 0), ia, "out");
    /* Adjacent but disjoint is fine. */
    EXPECT_STATUS(parsum_scan(tu_ctx, b, b + 40, 10, PARSUM_I32, PARSUM_SUM, 0),
                  PARSUM_OK);
    EXPECT_STATUS(parsum_scan(tu_ctx, b + 40, b, 10, PARSUM_I32, PARSUM_SUM, 0),
                  PARSUM_OK);
    assert_int_equal(te_failures, 0);
}

static void test_custom_op_errors(void **state)
{
    (void)state;
    const parsum_status ia = PARSUM_ERR_INVALID_ARGUMENT, np = PARSUM_ERR_NULL_POINTER;
    parsum_custom_op op = te_add_op;
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, NULL, 0), np, "op");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 10, NULL, result), np, "op");
    op.elem_size = 0;
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0), ia, "elem_size");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 10, &op, result), ia, "elem_size");
    op.elem_size = PARSUM_CUSTOM_MAX_ELEM_SIZE + 1;
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 2, &op, 0), ia, "elem_size");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 2, &op, result), ia, "elem_size");
    op = te_add_op;
    op.identity = NULL;
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0), np, "identity");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 10, &op, result), np, "identity");
    if (tu_backend == PARSUM_BACKEND_CPU) {
        op = te_add_op;
        op.combine = NULL;
        EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0), np, "combine");
        EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 10, &op, result), np, "combine");
    }
    assert_int_equal(te_failures, 0);
}

static void test_overflow(void **state)
{
    (void)state;
    const parsum_status ov = PARSUM_ERR_OVERFLOW;
    EXPECT_ERR(parsum_scan(tu_ctx, din, dout, SIZE_MAX / 2, PARSUM_I32, PARSUM_SUM, 0), ov, "n");
    EXPECT_ERR(parsum_reduce(tu_ctx, din, SIZE_MAX / 2, PARSUM_I32, PARSUM_SUM, result), ov, "n");
    EXPECT_ERR(parsum_scan(tu_ctx, din, din, SIZE_MAX / 8 + 1, PARSUM_U64, PARSUM_XOR, 0), ov, "n");
    EXPECT_ERR(parsum_reduce(tu_ctx, din, SIZE_MAX, PARSUM_I16, PARSUM_MIN, result), ov, "n");
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, SIZE_MAX / 3, &te_add_op, 0), ov, "n");
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, SIZE_MAX / 3, &te_add_op, result), ov, "n");
    assert_int_equal(te_failures, 0);
}

static void test_context_functions(void **state)
{
    (void)state;
    parsum_context *c = (parsum_context *)&te_failures; /* must become NULL */
    EXPECT_STATUS(parsum_context_create(&c, (parsum_backend)7), PARSUM_ERR_INVALID_ARGUMENT);
    if (c != NULL)
        tu_report(&te_failures,
                  "  failed parsum_context_create left *ctx set\n");
    EXPECT_STATUS(parsum_context_create(&c, (parsum_backend)-1), PARSUM_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(parsum_context_create(NULL, PARSUM_BACKEND_CPU), PARSUM_ERR_NULL_POINTER);
    TU_OK(parsum_context_create(&c, PARSUM_BACKEND_AUTO));
    if (parsum_context_backend(c) == PARSUM_BACKEND_AUTO)
        tu_report(&te_failures, "  an AUTO context reports backend AUTO\n");
    parsum_context_destroy(c);
    parsum_context_destroy(NULL);
    parsum_free(tu_ctx, NULL);
    parsum_free(NULL, NULL);
    if (parsum_context_backend(tu_ctx) != tu_backend)
        tu_report(&te_failures, "  parsum_context_backend is %d, created as "
                  "%d\n", (int)parsum_context_backend(tu_ctx), (int)tu_backend);
    if (strcmp(parsum_backend_name(PARSUM_BACKEND_CPU), "cpu") != 0 ||
        strcmp(parsum_backend_name(PARSUM_BACKEND_CUDA), "cuda") != 0)
        tu_report(&te_failures, "  parsum_backend_name is wrong\n");
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", PARSUM_VERSION_MAJOR,
             PARSUM_VERSION_MINOR, PARSUM_VERSION_PATCH);
    if (strcmp(parsum_version(), version) != 0)
        tu_report(&te_failures, "  parsum_version() = %s, header says %s\n",
                  parsum_version(), version);

    /* Threads. */
    int before = parsum_context_threads(tu_ctx);
    if (before < 1)
        tu_report(&te_failures, "  parsum_context_threads = %d\n", before);
    EXPECT_ERR(parsum_context_set_threads(tu_ctx, -1), PARSUM_ERR_INVALID_ARGUMENT, "threads");
    if (parsum_context_threads(tu_ctx) != before)
        tu_report(&te_failures, "  set_threads(-1) changed the thread count\n");
    TU_OK(parsum_context_set_threads(tu_ctx, 3));
    if (tu_backend == PARSUM_BACKEND_CPU && parsum_context_threads(tu_ctx) != 3)
        tu_report(&te_failures, "  set_threads(3) gives %d threads\n",
                  parsum_context_threads(tu_ctx));
    te_check_usable(__LINE__);
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    if (parsum_context_threads(tu_ctx) != before)
        tu_report(&te_failures, "  set_threads(0) gives %d threads, not the "
                  "default %d\n", parsum_context_threads(tu_ctx), before);

    /* Memory helpers. */
    unsigned char h[64], g[64];
    for (int i = 0; i < 64; i++)
        h[i] = (unsigned char)(3 * i + 1);
    EXPECT_ERR(parsum_alloc(tu_ctx, NULL, 16), PARSUM_ERR_NULL_POINTER, "ptr");
    EXPECT_ERR(parsum_copy(tu_ctx, g, h, 64, (parsum_copy_kind)7), PARSUM_ERR_INVALID_ARGUMENT, "kind");
    EXPECT_ERR(parsum_copy(tu_ctx, NULL, h, 64, PARSUM_COPY_HOST_TO_CONTEXT), PARSUM_ERR_NULL_POINTER, "dst");
    EXPECT_ERR(parsum_copy(tu_ctx, dout, NULL, 64, PARSUM_COPY_CONTEXT_TO_CONTEXT), PARSUM_ERR_NULL_POINTER, "src");
    EXPECT_STATUS(parsum_copy(tu_ctx, NULL, NULL, 0, PARSUM_COPY_HOST_TO_HOST), PARSUM_OK);
    tu_upload(din, h, 64);
    TU_OK(parsum_copy(tu_ctx, dout, din, 64, PARSUM_COPY_CONTEXT_TO_CONTEXT));
    tu_download(g, dout, 64);
    TU_OK(parsum_copy(tu_ctx, g + 32, g, 32, PARSUM_COPY_HOST_TO_HOST));
    if (memcmp(g, h, 32) != 0 || memcmp(g + 32, h, 32) != 0)
        tu_report(&te_failures, "  parsum_copy round trip lost data\n");
    TU_OK(parsum_synchronize(tu_ctx));
    assert_int_equal(te_failures, 0);
}

static void test_status_names(void **state)
{
    (void)state;
    int count = 0;
#define CHECK_STATUS(name, value, msg)                                        \
    if ((int)name != value || strcmp(parsum_status_name(name), #name) != 0 || \
        strcmp(parsum_status_string(name), msg) != 0)                         \
        tu_report(&te_failures, "  status %s: name \"%s\", string \"%s\"\n", \
                  #name, parsum_status_name(name), parsum_status_string(name)); \
    count++;
    PARSUM_STATUS_TABLE(CHECK_STATUS)
#undef CHECK_STATUS
    if (count < 16)
        tu_report(&te_failures, "  PARSUM_STATUS_TABLE has %d entries\n",
                  count);
    static const int unknown[] = {-1, 16, 1000};
    for (int k = 0; k < 3; k++) {
        const char *n = parsum_status_name((parsum_status)unknown[k]);
        const char *s = parsum_status_string((parsum_status)unknown[k]);
        if (n == NULL || strcmp(n, "PARSUM_UNKNOWN_STATUS") != 0 || s == NULL ||
            *s == '\0')
            tu_report(&te_failures, "  unknown status %d: name %s, string %s\n",
                      unknown[k], n ? n : "(null)", s ? s : "(null)");
    }
    assert_int_equal(te_failures, 0);
}

/* The identity parsum.h documents for (d, op), written to out. */
static void documented_identity(parsum_dtype d, parsum_op op, void *out)
{
    size_t es = parsum_dtype_size(d);
    bool is_signed = d == PARSUM_I8 || d == PARSUM_I16 || d == PARSUM_I32 ||
                     d == PARSUM_I64;
    switch (op) {
    case PARSUM_SUM: case PARSUM_OR: case PARSUM_XOR:
        memset(out, 0, es);
        tu_set(d, out, 0, 0.0); /* +0.0 for floats */
        break;
    case PARSUM_AND:
        memset(out, 0xff, es);
        break;
    case PARSUM_PROD:
        tu_set(d, out, 0, 1.0);
        break;
    case PARSUM_MIN: case PARSUM_MAX: {
        bool largest = op == PARSUM_MIN;
        if (tu_is_float(d)) {
            tu_set(d, out, 0, largest ? INFINITY : -INFINITY);
        } else {
            /* All ones; signed: clear (max) or keep only (min) the sign. */
            unsigned char *p = out;
            memset(p, largest ? 0xff : 0x00, es);
            if (is_signed) {
                uint64_t v = largest ? (~(uint64_t)0 >> (65 - 8 * es))
                                     : ((uint64_t)1 << (8 * es - 1));
                switch (es) {
                case 1: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
                case 2: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
                case 4: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
                default: memcpy(out, &v, 8); break;
                }
            }
        }
        break;
    }
    }
}

static void test_types(void **state)
{
    (void)state;
    static const size_t sizes[PARSUM_DTYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    static const char *const names[PARSUM_DTYPE_COUNT] = {
        "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"};
    static const char *const ops[PARSUM_OP_COUNT] = {"sum", "prod", "min", "max",
                                                     "and", "or", "xor"};
    for (int d = 0; d < PARSUM_DTYPE_COUNT; d++) {
        const char *n = parsum_dtype_name((parsum_dtype)d);
        if (parsum_dtype_size((parsum_dtype)d) != sizes[d] || n == NULL ||
            strcmp(n, names[d]) != 0)
            tu_report(&te_failures, "  dtype %d: size %zu name %s\n", d,
                      parsum_dtype_size((parsum_dtype)d), n ? n : "(null)");
        for (int op = 0; op < PARSUM_OP_COUNT; op++) {
            unsigned char want[8], got[8];
            memset(got, TU_POISON, 8);
            parsum_status st = parsum_op_identity((parsum_dtype)d, (parsum_op)op, got);
            if (tu_is_float((parsum_dtype)d) && op >= PARSUM_AND) {
                if (st != PARSUM_ERR_DTYPE_OP_MISMATCH)
                    tu_report(&te_failures, "  identity %s %s: %s\n", names[d],
                              ops[op], parsum_status_name(st));
                continue;
            }
            documented_identity((parsum_dtype)d, (parsum_op)op, want);
            if (st != PARSUM_OK || memcmp(want, got, sizes[d]) != 0) {
                char bw[64], bg[64];
                tu_report(&te_failures, "  identity %s %s: %s, %s (want %s)\n",
                          names[d], ops[op], parsum_status_name(st),
                          tu_format((parsum_dtype)d, got, bg),
                          tu_format((parsum_dtype)d, want, bw));
            }
        }
    }
    for (int op = 0; op < PARSUM_OP_COUNT; op++) {
        const char *n = parsum_op_name((parsum_op)op);
        if (n == NULL || strcmp(n, ops[op]) != 0)
            tu_report(&te_failures, "  op %d: name %s\n", op, n ? n : "(null)");
    }
    if (parsum_dtype_size((parsum_dtype)10) != 0 ||
        parsum_dtype_name((parsum_dtype)10) != NULL ||
        parsum_dtype_size((parsum_dtype)-1) != 0 ||
        parsum_op_name((parsum_op)7) != NULL ||
        parsum_op_name((parsum_op)-1) != NULL)
        tu_report(&te_failures,
                  "  unknown dtype/op: size or name not 0/NULL\n");
    unsigned char id[8];
    EXPECT_STATUS(parsum_op_identity(PARSUM_I32, PARSUM_SUM, NULL), PARSUM_ERR_NULL_POINTER);
    EXPECT_STATUS(parsum_op_identity((parsum_dtype)10, PARSUM_SUM, id), PARSUM_ERR_INVALID_DTYPE);
    EXPECT_STATUS(parsum_op_identity(PARSUM_I32, (parsum_op)7, id), PARSUM_ERR_INVALID_OP);
    assert_int_equal(te_failures, 0);
}

/* Scans of several sizes, checked against a plain loop (I64 SUM). */
static void scans_work(const char *when)
{
    size_t chunk = tu_chunk(8);
    size_t sizes[] = {1000, 3 * chunk + 1, 40 * chunk + 3};
    for (size_t k = 0; k < 3; k++) {
        size_t n = sizes[k];
        int64_t *h = tu_malloc(n * 8), *g = tu_malloc(n * 8);
        for (size_t i = 0; i < n; i++)
            h[i] = (int64_t)(i % 1000) - 400;
        void *d = tu_dev_alloc(n * 8);
        tu_upload(d, h, n * 8);
        parsum_status st = parsum_scan(tu_ctx, d, d, n, PARSUM_I64, PARSUM_SUM,
                                       PARSUM_EXCLUSIVE);
        tu_download(g, d, n * 8);
        int64_t acc = 0;
        size_t bad = n;
        for (size_t i = 0; i < n && st == PARSUM_OK; i++) {
            if (g[i] != acc) {
                bad = i;
                break;
            }
            acc += h[i];
        }
        if (st != PARSUM_OK || bad != n)
            tu_report(&te_failures, "  %s: scan n=%zu: %s, first bad index "
                      "%zu\n", when, n, parsum_status_name(st), bad);
        int64_t total = 0;
        st = parsum_reduce(tu_ctx, d, n, PARSUM_I64, PARSUM_MAX, &total);
        if (st != PARSUM_OK)
            tu_report(&te_failures, "  %s: reduce n=%zu: %s\n", when, n,
                      parsum_status_name(st));
        tu_dev_free(d);
        free(h);
        free(g);
    }
}

static void test_workspace(void **state)
{
    (void)state;
    size_t mib = (size_t)1 << 20;
    char *ws = tu_dev_alloc(mib);
    TU_OK(parsum_context_set_workspace(tu_ctx, ws, mib));
    if (parsum_context_scratch_size(tu_ctx) < mib)
        tu_report(&te_failures, "  scratch_size %zu after a 1 MiB workspace\n",
                  parsum_context_scratch_size(tu_ctx));
    scans_work("1 MiB workspace");
    TU_OK(parsum_context_set_workspace(tu_ctx, ws, 64));
    scans_work("64-byte workspace");
    EXPECT_ERR(parsum_context_set_workspace(tu_ctx, ws + 1, mib - 64),
               PARSUM_ERR_INVALID_ARGUMENT, "workspace");
    EXPECT_ERR(parsum_context_set_workspace(tu_ctx, ws + 32, mib - 64),
               PARSUM_ERR_INVALID_ARGUMENT, "workspace");
    EXPECT_ERR(parsum_context_set_workspace(tu_ctx, NULL, 100),
               PARSUM_ERR_NULL_POINTER, "workspace");
    TU_OK(parsum_context_set_workspace(tu_ctx, ws + 64, mib - 64));
    scans_work("offset workspace");
    TU_OK(parsum_context_set_workspace(tu_ctx, NULL, 0));
    scans_work("workspace detached");
    tu_dev_free(ws);
    scans_work("workspace freed");
    assert_int_equal(te_failures, 0);
}

static void test_reserve(void **state)
{
    (void)state;
    size_t mib = (size_t)1 << 20;
    TU_OK(parsum_context_reserve(tu_ctx, 0));
    TU_OK(parsum_context_reserve(tu_ctx, 4 * mib));
    if (parsum_context_scratch_size(tu_ctx) < 4 * mib)
        tu_report(&te_failures, "  scratch_size %zu after reserve(4 MiB)\n",
                  parsum_context_scratch_size(tu_ctx));
    TU_OK(parsum_context_reserve(tu_ctx, mib)); /* never shrinks */
    if (parsum_context_scratch_size(tu_ctx) < 4 * mib)
        tu_report(&te_failures, "  reserve(1 MiB) shrank the arena\n");
    scans_work("after reserve");
    EXPECT_ERR(parsum_context_reserve(tu_ctx, SIZE_MAX),
               PARSUM_ERR_OUT_OF_MEMORY, "bytes");
    if (parsum_context_scratch_size(tu_ctx) < 4 * mib)
        tu_report(&te_failures, "  a failed reserve lost the arena\n");
    scans_work("after a failed reserve");
    assert_int_equal(te_failures, 0);
}

/* CUDA: host memory given where device memory is needed. */
static void test_wrong_memory_space(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    const parsum_status wm = PARSUM_ERR_WRONG_MEMORY_SPACE;
    unsigned char *h = tu_malloc(4000);
    EXPECT_ERR(parsum_scan(tu_ctx, h, dout, 100, PARSUM_I32, PARSUM_SUM, 0), wm, "in");
    EXPECT_ERR(parsum_scan(tu_ctx, din, h, 100, PARSUM_I32, PARSUM_SUM, 0), wm, "out");
    EXPECT_ERR(parsum_reduce(tu_ctx, h, 100, PARSUM_I32, PARSUM_SUM, result), wm, "in");
    free(h);
    assert_int_equal(te_failures, 0);
}

/* The CUDA-only context functions: PARSUM_ERR_UNSUPPORTED on the CPU; on
 * CUDA, the device and stream a context starts with, and bad ordinals. */
static void test_cuda_context_functions(void **state)
{
    (void)state;
    int dev = -1;
    void *stream = &dev;
    if (tu_backend == PARSUM_BACKEND_CPU) {
        const parsum_status un = PARSUM_ERR_UNSUPPORTED;
        EXPECT_STATUS(parsum_context_set_cuda_device(tu_ctx, 0), un);
        EXPECT_STATUS(parsum_context_cuda_device(tu_ctx, &dev), un);
        EXPECT_STATUS(parsum_context_set_cuda_stream(tu_ctx, NULL), un);
        EXPECT_STATUS(parsum_context_cuda_stream(tu_ctx, &stream), un);
        te_check_usable(__LINE__);
    } else {
        TU_OK(parsum_context_cuda_device(tu_ctx, &dev));
        TU_OK(parsum_context_cuda_stream(tu_ctx, &stream));
        if (dev < 0 || stream != NULL)
            tu_report(&te_failures, "  new CUDA context: device %d, stream %p "
                      "(expected the current device and NULL)\n", dev, stream);
        EXPECT_ERR(parsum_context_set_cuda_device(tu_ctx, 100000),
                   PARSUM_ERR_INVALID_ARGUMENT, "device");
        EXPECT_ERR(parsum_context_set_cuda_device(tu_ctx, -1),
                   PARSUM_ERR_INVALID_ARGUMENT, "device");
        TU_OK(parsum_context_set_cuda_stream(tu_ctx, NULL));
        TU_OK(parsum_context_set_cuda_device(tu_ctx, dev));
        te_check_usable(__LINE__);
    }
    assert_int_equal(te_failures, 0);
}

/* CUDA: misaligned element pointers, and custom operators without (or
 * with broken, or mis-sized) CUDA source. */
static void test_cuda_argument_errors(void **state)
{
    (void)state;
    TE_GPU_ONLY();
    const parsum_status ia = PARSUM_ERR_INVALID_ARGUMENT;
    char *b = din, *o = dout;
    EXPECT_ERR(parsum_scan(tu_ctx, b + 2, o, 10, PARSUM_I32, PARSUM_SUM, 0), ia, "in");
    EXPECT_ERR(parsum_scan(tu_ctx, b, o + 4, 10, PARSUM_F64, PARSUM_SUM, 0), ia, "out");
    EXPECT_ERR(parsum_reduce(tu_ctx, b + 1, 10, PARSUM_U16, PARSUM_MAX, result), ia, "in");
    parsum_custom_op op = te_add_op;
    op.cuda_combine = NULL;
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0), ia, "cuda_combine");
    op = te_add_op;
    op.cuda_type_name = NULL;
    EXPECT_ERR(parsum_reduce_custom(tu_ctx, din, 10, &op, result), ia, "cuda_type_name");
    op = te_add_op;
    op.cuda_combine = "return a +* b;";
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0),
               PARSUM_ERR_COMPILE, "cuda_combine");
    op = te_add_op;
    op.cuda_type = "struct Bad { int x }";
    op.cuda_type_name = "Bad";
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0),
               PARSUM_ERR_COMPILE, "cuda_type");
    op = te_add_op;
    op.elem_size = 8; /* but sizeof(unsigned int) is 4 */
    EXPECT_ERR(parsum_scan_custom(tu_ctx, din, dout, 10, &op, 0), ia, "elem_size");
    assert_int_equal(te_failures, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
static const struct CMUnitTest tests[] = {
    T(test_null_context), T(test_null_buffers), T(test_bad_enums),
    T(test_overlap),      T(test_custom_op_errors), T(test_overflow),
    T(test_context_functions), T(test_status_names), T(test_types),
    T(test_workspace),    T(test_reserve),      T(test_wrong_memory_space),
    T(test_cuda_context_functions), T(test_cuda_argument_errors),
};

PARSUM_TEST_MAIN(test_errors)
{
    tu_init("test_errors");
    return tu_finish(TU_RUN("test_errors", tests));
}
