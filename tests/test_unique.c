/*
 * test_unique.c - parsum_unique, _unique_by_key, _run_length_encode and
 * _run_length_nontrivial against the serial reference (src/ref), for keys
 * of 1, 2, 3, 4, 8, 12, 16, 24 and 100 bytes (the dtypes and odd structs)
 * in runs drawn from four distributions:
 *   len1   every run of length 1 (nothing to drop)
 *   rand8  lengths 1..8
 *   one    a single run of n
 *   power  Pareto lengths: mostly short runs and a few long ones, many
 *          across CPU chunks
 * Each run's key differs from the one before in a single random bit, so a
 * comparison that skips a byte (or a bit) merges runs. Values are tags
 * (value = index), so unique_by_key must keep the first of each run.
 * Outputs are poisoned and must stay poison past the runs written; counts
 * go to host memory and, once per input, to context memory. Floats are
 * compared bit for bit: -0.0 and +0.0 start different runs, NaNs with the
 * same bits form one. The same results for 1, 2 and 3 threads.
 */
#include "test_seg_util.h"

#include "cpu/cpu.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct input {
    size_t n, ks;
    unsigned char *keys;
    uint64_t *tags;
    void *dkeys, *dtags;
    char tag[200];
} input;

/* Runs of dist; each run's key is the previous one with one bit flipped. */
static void input_make(input *in, tseg_dist dist, size_t n, size_t ks)
{
    tu_rng r = tu_rng_for(0x0417, (uint64_t)dist, n, ks);
    in->n = n;
    in->ks = ks;
    in->keys = tu_malloc(n * ks);
    in->tags = tu_malloc(n * 8);
    uint64_t *off;
    size_t nseg = tseg_offsets(&r, dist, n, &off);
    unsigned char *key = tu_malloc(ks);
    for (size_t b = 0; b < ks; b++)
        key[b] = (unsigned char)tu_next(&r);
    for (size_t s = 0; s < nseg; s++) {
        size_t bit = (size_t)tu_below(&r, 8 * ks);
        key[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        for (uint64_t i = off[s]; i < off[s + 1]; i++)
            memcpy(in->keys + i * ks, key, ks);
    }
    for (size_t i = 0; i < n; i++)
        in->tags[i] = i;
    free(key);
    free(off);
    in->dkeys = tu_dev_alloc(n * ks);
    in->dtags = tu_dev_alloc(n * 8);
    tu_upload(in->dkeys, in->keys, n * ks);
    tu_upload(in->dtags, in->tags, n * 8);
    snprintf(in->tag, sizeof in->tag, "%s n=%zu %zu-byte keys, %s runs "
             "(seed 0x%llx)", parsum_backend_name(tu_backend), n, ks,
             tseg_dist_name(dist), (unsigned long long)tu_seed);
}

static void input_free(input *in)
{
    free(in->keys);
    free(in->tags);
    tu_dev_free(in->dkeys);
    tu_dev_free(in->dtags);
}

/* ---- one call against the reference ------------------------------------- */

typedef enum op_kind {
    OP_UNIQUE,
    OP_UNIQUE_BY_KEY,
    OP_UNIQUE_VALUES_ONLY, /* unique_by_key, keys_out NULL */
    OP_RLE,
    OP_RLE_LENGTHS_ONLY,   /* unique_out NULL */
    OP_NONTRIVIAL,
    OP_KINDS
} op_kind;

static const char *const op_names[OP_KINDS] = {
    "unique", "unique_by_key", "unique_by_key (values only)",
    "run_length_encode", "run_length_encode (lengths only)",
    "run_length_nontrivial"};

/* Outputs: keys (n), values or lengths (n), offsets (n / 2), count. */
typedef struct outs {
    void *dk, *dv, *doff, *dn;
    unsigned char *wk, *gk;
    uint64_t *wv, *gv, *woff, *goff;
} outs;

static void outs_alloc(outs *o, const input *in)
{
    size_t n = in->n;
    o->dk = tu_dev_alloc(n * in->ks);
    o->dv = tu_dev_alloc(n * 8);
    o->doff = tu_dev_alloc(n * 8);
    o->dn = tu_dev_alloc(sizeof(size_t));
    o->wk = tu_malloc(n * in->ks);
    o->gk = tu_malloc(n * in->ks);
    o->wv = tu_malloc(n * 8);
    o->gv = tu_malloc(n * 8);
    o->woff = tu_malloc(n * 8);
    o->goff = tu_malloc(n * 8);
}

static void outs_free(outs *o)
{
    tu_dev_free(o->dk);
    tu_dev_free(o->dv);
    tu_dev_free(o->doff);
    tu_dev_free(o->dn);
    free(o->wk);
    free(o->gk);
    free(o->wv);
    free(o->gv);
    free(o->woff);
    free(o->goff);
}

static parsum_status call_op(op_kind op, const input *in, outs *o,
                             size_t *cnt)
{
    size_t n = in->n, ks = in->ks;
    switch (op) {
    case OP_UNIQUE:
        return parsum_unique(tu_ctx, in->dkeys, o->dk, n, ks, cnt);
    case OP_UNIQUE_BY_KEY:
    case OP_UNIQUE_VALUES_ONLY:
        return parsum_unique_by_key(tu_ctx, in->dkeys, in->dtags,
                                    op == OP_UNIQUE_BY_KEY ? o->dk : NULL,
                                    o->dv, n, ks, 8, cnt);
    case OP_RLE:
    case OP_RLE_LENGTHS_ONLY:
        return parsum_run_length_encode(tu_ctx, in->dkeys, n, ks,
                                        op == OP_RLE ? o->dk : NULL, o->dv,
                                        cnt);
    default:
        return parsum_run_length_nontrivial(tu_ctx, in->dkeys, n, ks,
                                            o->doff, o->dv, cnt);
    }
}

/* want[0 .. count) == got, and got's bytes from count to total are still
 * poison. */
static size_t check_out(const void *want, const void *got, size_t count,
                        size_t total, size_t es, const char *what)
{
    size_t bad = tseg_compare_bytes(want, got, count, es, what);
    const unsigned char *g = got;
    for (size_t i = count * es; i < total * es; i++)
        if (g[i] != TU_POISON) {
            print_error("  %s: element %zu past the output was written\n",
                        what, i / es);
            return bad + 1;
        }
    return bad;
}

static void check_op(op_kind op, const input *in, outs *o, bool dev_count,
                     size_t *failures)
{
    size_t n = in->n, ks = in->ks, got;
    char what[300];
    snprintf(what, sizeof what, "%s %s%s", op_names[op], in->tag,
             dev_count ? " (count in context memory)" : "");
    tu_dev_poison(o->dk, n * ks);
    tu_dev_poison(o->dv, n * 8);
    tu_dev_poison(o->doff, n * 8);
    tu_dev_poison(o->dn, sizeof(size_t));
    memset(&got, TU_POISON, sizeof got);
    parsum_status st = call_op(op, in, o, dev_count ? o->dn : &got);
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
        return;
    }
    if (dev_count)
        tu_download(&got, o->dn, sizeof got);
    bool by_key = op == OP_UNIQUE_BY_KEY || op == OP_UNIQUE_VALUES_ONLY;
    bool rle = op == OP_RLE || op == OP_RLE_LENGTHS_ONLY;
    parsum__ref_buffers b = {in->keys, ks, in->tags, 8, n, o->wk,
                             by_key ? o->wv : NULL, NULL};
    size_t k = parsum__ref_runs(&b, op == OP_NONTRIVIAL,
                                rle || op == OP_NONTRIVIAL ? o->wv : NULL,
                                op == OP_NONTRIVIAL ? o->woff : NULL);
    if (got != k) {
        tu_report(failures, "  %s: count %zu, expected %zu\n", what, got, k);
        return;
    }
    bool keys_out = op == OP_UNIQUE || op == OP_UNIQUE_BY_KEY || op == OP_RLE;
    tu_download(o->gk, o->dk, n * ks);
    tu_download(o->gv, o->dv, n * 8);
    tu_download(o->goff, o->doff, n * 8);
    size_t bad = check_out(o->wk, o->gk, keys_out ? k : 0, n, ks, what);
    bad += check_out(o->wv, o->gv, op == OP_UNIQUE ? 0 : k, n, 8, what);
    bad += check_out(o->woff, o->goff, op == OP_NONTRIVIAL ? k : 0, n, 8,
                     what);
    if (bad != 0)
        (*failures)++;
}

static void check_all(const input *in, size_t *failures)
{
    outs o;
    outs_alloc(&o, in);
    for (int op = 0; op < OP_KINDS && *failures < TSEG_MAX_FAILURES; op++)
        check_op((op_kind)op, in, &o, op == OP_RLE, failures);
    outs_free(&o);
}

/* ---- the cases ----------------------------------------------------------- */

/* The CPU chunk of run_length_encode with unique_out: keys read and
 * written, lengths written. */
static size_t rle_chunk(size_t ks)
{
    return parsum__select_chunk(2 * ks + 8);
}

static uint32_t bits32(const float *f)
{
    uint32_t b;
    memcpy(&b, f, 4);
    return b;
}

static void test_runs(void **state)
{
    (void)state;
    static const size_t key_sizes[] = {1, 2, 3, 4, 8, 12, 16, 24, 100};
    size_t failures = 0;
    for (size_t ki = 0; ki < sizeof key_sizes / sizeof *key_sizes; ki++) {
        size_t ks = key_sizes[ki];
        size_t ch = rle_chunk(ks);
        /* the GPU tiles: 4096 (8-byte keys, keys of several words) and
         * 8192 elements */
        size_t sizes[] = {0,      1,    2,    63,   64,   65,
                          ch - 1, ch,   ch + 1, 4095, 4097, 8191,
                          8192,   8193, 3 * ch + 17,  65537, 999983};
        size_t m = sizeof sizes / sizeof *sizes;
        if (tu_quick || ks > 16)
            m--; /* 999983 is last */
        for (size_t si = 0; si < m; si++)
            for (int dist = 0; dist < TSEG_EMPTY; dist++) {
                if (failures >= TSEG_MAX_FAILURES)
                    break;
                input in;
                input_make(&in, (tseg_dist)dist, sizes[si], ks);
                check_all(&in, &failures);
                input_free(&in);
            }
    }
    assert_int_equal(failures, 0);
}

/* Floats are compared bit for bit, as the header says. */
static void test_float_bits(void **state)
{
    (void)state;
    float nan1, nan2;
    uint32_t b1 = 0x7fc00001u, b2 = 0x7fc00002u;
    memcpy(&nan1, &b1, 4);
    memcpy(&nan2, &b2, 4);
    const float in[] = {0.0f, -0.0f, -0.0f, nan1, nan1, nan2, 1.0f, 1.0f,
                        0.0f};
    /* runs: 0 | -0 -0 | nan1 nan1 | nan2 | 1 1 | 0 */
    const uint64_t want_len[] = {1, 2, 2, 1, 2, 1};
    const size_t idx[] = {0, 1, 3, 5, 6, 8};
    enum { N = sizeof in / sizeof in[0], R = 6 };
    size_t failures = 0, k = 0;
    float got[N];
    uint64_t len[N];
    void *din = tu_dev_alloc(sizeof in), *dout = tu_dev_alloc(sizeof in),
         *dlen = tu_dev_alloc(sizeof len);
    tu_upload(din, in, sizeof in);
    TU_OK(parsum_run_length_encode(tu_ctx, din, N, 4, dout, dlen, &k));
    tu_download(got, dout, sizeof got);
    tu_download(len, dlen, sizeof len);
    if (k != R)
        tu_report(&failures, "  f32 run_length_encode: %zu runs, expected "
                  "%d\n", k, R);
    for (size_t r = 0; r < R && k == R; r++)
        if (memcmp(&got[r], &in[idx[r]], 4) != 0 || len[r] != want_len[r])
            tu_report(&failures, "  f32 run %zu: bits 0x%08x length %llu, "
                      "expected 0x%08x length %llu\n", r,
                      bits32(&got[r]),
                      (unsigned long long)len[r],
                      bits32(&in[idx[r]]),
                      (unsigned long long)want_len[r]);
    tu_dev_free(din);
    tu_dev_free(dout);
    tu_dev_free(dlen);
    /* and random arrays of such values, f32 and f64, against the
     * reference */
    for (int d = 0; d < 2; d++) {
        size_t ks = d ? 8 : 4, n = 70001;
        tu_rng r = tu_rng_for(0xf10a, ks, n, 0);
        input x;
        input_make(&x, TSEG_RAND8, n, ks);
        static const double sp[] = {0.0, -0.0, NAN, -NAN, 1.0};
        for (size_t i = 0; i < n; i++)
            tu_set(d ? PARSUM_F64 : PARSUM_F32, x.keys, i,
                   sp[tu_below(&r, 5)]);
        tu_upload(x.dkeys, x.keys, n * ks);
        snprintf(x.tag, sizeof x.tag, "%s n=%zu %s of +-0 and NaN",
                 parsum_backend_name(tu_backend), n, d ? "f64" : "f32");
        check_all(&x, &failures);
        input_free(&x);
    }
    assert_int_equal(failures, 0);
}

static void test_threads(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 3};
    size_t failures = 0;
    for (int t = 0; t < 3; t++) {
        TU_OK(parsum_context_set_threads(tu_ctx, threads[t]));
        for (int dist = 0; dist < TSEG_EMPTY; dist++) {
            input in;
            input_make(&in, (tseg_dist)dist,
                       9 * rle_chunk(4) + 3, 4);
            char more[40];
            snprintf(more, sizeof more, ", %d threads", threads[t]);
            strncat(in.tag, more, sizeof in.tag - strlen(in.tag) - 1);
            check_all(&in, &failures);
            input_free(&in);
        }
    }
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_runs),
    cmocka_unit_test(test_float_bits),
    cmocka_unit_test(test_threads),
};

PARSUM_TEST_MAIN(test_unique)
{
    tu_init("test_unique");
    return tu_finish(TU_RUN("test_unique", tests));
}
