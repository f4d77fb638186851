/*
 * test_select.c - parsum_select, _select_by_key, _select_indices,
 * _partition, _partition_by_key and _partition_unstable(_by_key) against
 * the serial reference (src/ref/ref_select.c); partition3 and the split
 * by bit are in test_partition.c, the shared inputs in
 * test_select_util.c.
 *
 *   flags      byte flags and packed bits (bit_offset 0, and 13 + 32 so
 *              that the words start inside the array and the bits inside
 *              a word), selectivity 0 %, 1 %, 50 %, 99 %, 100 %, random
 *              and clustered (runs of selected and rejected elements),
 *              n around the CPU chunk and the usual tile sizes (0, 1, 31,
 *              32, 33, 1023..1025, 4095..4097, 8191..8193, 16385,
 *              65535..65537, chunk - 1 .. chunk + 1, 999983, and 10^7
 *              unless PARSUM_TEST_QUICK); the values are tags (value =
 *              original index), so stability is checked on its own as
 *              well as against the reference
 *   predicates every dtype with every built-in predicate, constants drawn
 *              from the data (floats with NaN, -0.0, +-inf among them)
 *   sizes      element and value sizes 1 .. 1024 bytes (3, 12, 24 ...)
 *   offsets    key outputs aligned to the key size but not to 16 bytes
 *   custom     custom predicates on 12-byte points, bytes and 1024-byte
 *              keys (the CPU callback, and its CUDA source compiled at
 *              run time on a GPU), and more distinct predicates than a
 *              CUDA context keeps compiled
 *   threads    counts in context memory, and the same output for 1, 2
 *              and 3 threads.
 * Outputs are poisoned first: select must leave everything past the k
 * selected elements untouched; a partition writes all n.
 */
#include "test_select_util.h"

#include "cpu/cpu.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one call against the reference ------------------------------------- */

typedef enum op_kind {
    OP_SELECT,       /* parsum_select on the keys */
    OP_BY_KEY,       /* parsum_select_by_key, keys and values out */
    OP_VALUES_ONLY,  /* parsum_select_by_key with keys_out NULL */
    OP_INDICES,      /* parsum_select_indices */
    OP_PARTITION,    /* parsum_partition on the keys */
    OP_PARTITION_BY_KEY,
    OP_UNSTABLE,        /* parsum_partition_unstable on the keys */
    OP_UNSTABLE_BY_KEY, /* parsum_partition_unstable_by_key */
    OP_KINDS
} op_kind;

static const char *const op_names[OP_KINDS] = {
    "select", "select_by_key", "select_by_key (values only)",
    "select_indices", "partition", "partition_by_key",
    "partition_unstable", "partition_unstable_by_key"};

static bool op_has_values(op_kind op)
{
    return op == OP_BY_KEY || op == OP_VALUES_ONLY ||
           op == OP_PARTITION_BY_KEY || op == OP_UNSTABLE_BY_KEY;
}

/* A partition writes all n elements. */
static bool op_is_partition(op_kind op)
{
    return op == OP_PARTITION || op == OP_PARTITION_BY_KEY ||
           op == OP_UNSTABLE || op == OP_UNSTABLE_BY_KEY;
}

static parsum_status call_op(op_kind op, const data *d, const selc *s,
                             void *ko, void *vo, uint64_t *io, size_t *cnt)
{
    size_t n = d->n, ks = d->ks, vs = d->vs;
    switch (op) {
    case OP_SELECT:
        return parsum_select(tu_ctx, d->dkeys, ko, n, ks, &s->dev, cnt);
    case OP_BY_KEY:
    case OP_VALUES_ONLY:
        return parsum_select_by_key(tu_ctx, d->dkeys, d->dvals,
                                    op == OP_BY_KEY ? ko : NULL, vo, n, ks,
                                    vs, &s->dev, cnt);
    case OP_INDICES: /* in is read only by predicates */
        return parsum_select_indices(
            tu_ctx, s->dev.kind >= PARSUM_SELECT_PREDICATE ? d->dkeys : NULL,
            n, ks, &s->dev, io, cnt);
    case OP_PARTITION:
        return parsum_partition(tu_ctx, d->dkeys, ko, n, ks, &s->dev, cnt);
    case OP_PARTITION_BY_KEY:
        return parsum_partition_by_key(tu_ctx, d->dkeys, d->dvals, ko, vo, n,
                                       ks, vs, &s->dev, cnt);
    case OP_UNSTABLE:
        return parsum_partition_unstable(tu_ctx, d->dkeys, ko, n, ks, &s->dev,
                                         cnt);
    default:
        return parsum_partition_unstable_by_key(tu_ctx, d->dkeys, d->dvals,
                                                ko, vo, n, ks, vs, &s->dev,
                                                cnt);
    }
}

/* The first `count` bytes of got are want; the rest, up to `bytes`, are
 * still poison. */
static size_t check_bytes(const void *want, const void *got, size_t count,
                          size_t bytes, size_t es, const char *what)
{
    size_t bad = tseg_compare_bytes(want, got, count / es, es, what);
    const unsigned char *g = got;
    for (size_t i = count; i < bytes; i++)
        if (g[i] != TU_POISON) {
            print_error("  %s: byte %zu (element %zu) past the output was "
                        "written\n", what, i, i / es);
            return bad + 1;
        }
    return bad;
}

typedef struct outs {
    void *ko, *vo, *io, *dn;
    size_t kshift; /* keys are written from element kshift of ko on */
    unsigned char *wk, *wv, *gk, *gv;
    uint64_t *wi, *gi;
} outs;

static void outs_alloc_shifted(outs *o, const data *d, size_t kshift)
{
    size_t n = d->n;
    o->kshift = kshift;
    o->ko = tu_dev_alloc((n + kshift) * d->ks);
    o->vo = tu_dev_alloc(n * (d->vs > 0 ? d->vs : 1));
    o->io = tu_dev_alloc(n * 8);
    o->dn = tu_dev_alloc(2 * sizeof(size_t));
    o->wk = tu_malloc(n * d->ks);
    o->gk = tu_malloc(n * d->ks);
    o->wv = tu_malloc(n * d->vs);
    o->gv = tu_malloc(n * d->vs);
    o->wi = tu_malloc(n * 8);
    o->gi = tu_malloc(n * 8);
}

static void outs_alloc(outs *o, const data *d)
{
    outs_alloc_shifted(o, d, 0);
}

static void outs_free(outs *o)
{
    tu_dev_free(o->ko);
    tu_dev_free(o->vo);
    tu_dev_free(o->io);
    tu_dev_free(o->dn);
    free(o->wk);
    free(o->gk);
    free(o->wv);
    free(o->gv);
    free(o->wi);
    free(o->gi);
}

/* The expected result of op: its count. */
static size_t ref_op(op_kind op, const data *d, const selc *s, outs *o)
{
    parsum__ref_buffers b = {d->keys, d->ks, d->vals, d->vs, d->n,
                             o->wk, NULL, NULL};
    if (op_has_values(op))
        b.values_out = o->wv;
    if (op == OP_INDICES)
        b.indices_out = o->wi;
    if (op == OP_PARTITION || op == OP_PARTITION_BY_KEY)
        return parsum__ref_partition(&s->host, &b);
    if (op == OP_UNSTABLE || op == OP_UNSTABLE_BY_KEY)
        return parsum__ref_partition_unstable(&s->host, &b);
    return parsum__ref_select(&s->host, &b);
}

/* Runs op on poisoned outputs (count in context memory when dev_count)
 * and compares with the reference. */
static void check_op(op_kind op, const data *d, const selc *s, outs *o,
                     bool dev_count, size_t *failures)
{
    size_t n = d->n, got = 0;
    unsigned char *ko = (unsigned char *)o->ko + o->kshift * d->ks;
    char what[400];
    snprintf(what, sizeof what, "%s %s sel=%s%s", op_names[op], d->tag,
             s->name, dev_count ? " (count in context memory)" : "");
    tu_dev_poison(ko, n * d->ks);
    tu_dev_poison(o->vo, n * d->vs);
    tu_dev_poison(o->io, n * 8);
    tu_dev_poison(o->dn, 2 * sizeof(size_t));
    memset(&got, TU_POISON, sizeof got);
    parsum_status st = call_op(op, d, s, ko, o->vo, o->io,
                               dev_count ? (size_t *)o->dn : &got);
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
        return;
    }
    if (dev_count)
        tu_download(&got, o->dn, sizeof got);
    size_t k = ref_op(op, d, s, o);
    if (got != k) {
        tu_report(failures, "  %s: count %zu, expected %zu\n", what, got, k);
        return;
    }
    bool part = op_is_partition(op);
    size_t cnt = part ? n : k, bad = 0;
    tu_download(o->gk, ko, n * d->ks);
    tu_download(o->gv, o->vo, n * d->vs);
    tu_download(o->gi, o->io, n * 8);
    if (op != OP_INDICES && op != OP_VALUES_ONLY)
        bad += check_bytes(o->wk, o->gk, cnt * d->ks, n * d->ks, d->ks, what);
    else /* keys_out was not given: nothing may have been written */
        bad += check_bytes(o->wk, o->gk, 0, n * d->ks, d->ks, what);
    if (op_has_values(op)) {
        bad += check_bytes(o->wv, o->gv, cnt * d->vs, n * d->vs, d->vs, what);
        if (d->tags && bad == 0)
            bad += tsel_check_tags(d, op == OP_VALUES_ONLY ? NULL : o->gk,
                              (const uint64_t *)(void *)o->gv, k, cnt,
                              op == OP_UNSTABLE_BY_KEY, what);
    }
    if (op == OP_INDICES) {
        bad += check_bytes(o->wi, o->gi, k * 8, n * 8, 8, what);
        if (bad == 0)
            bad += tsel_check_tags(d, NULL, o->gi, k, k, false, what);
    }
    if (bad != 0)
        (*failures)++;
}

static void check_all_ops(const data *d, const selc *s, outs *o,
                          size_t *failures)
{
    for (int op = 0; op < OP_KINDS && *failures < TSEG_MAX_FAILURES; op++)
        if (d->vs > 0 || !op_has_values((op_kind)op))
            check_op((op_kind)op, d, s, o, op == OP_BY_KEY, failures);
}

/* ---- flags: selectivity x distribution x size --------------------------- */

/* The sizes of test_flags: tile sizes, the CPU chunks of 4-byte keys
 * alone and with 8-byte values, a prime near 10^6 and 10^7. */
static size_t flag_sizes(size_t *sizes)
{
    size_t c = parsum__select_chunk(4), v = parsum__select_chunk(12);
    size_t list[] = {0,     1,     31,    32,    33,    1023,  1024,
                     1025,  4095,  4096,  4097,  8191,  8192,  8193,
                     16385, 65535, 65536, 65537, c - 1, c,     c + 1,
                     v - 1, v,     v + 1, 999983, 10000000};
    size_t m = sizeof list / sizeof list[0];
    if (tu_quick)
        m -= 2;
    memcpy(sizes, list, m * sizeof *sizes);
    return m;
}

static void test_flags(void **state)
{
    (void)state;
    static const int pcts[] = {0, 1, 50, 99, 100};
    size_t sizes[32], ns = flag_sizes(sizes), failures = 0;
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si];
        bool big = n >= 999983;
        data d;
        tu_rng r = tu_rng_for(0xf1a9, n, 0, 0);
        tsel_data_random(&d, &r, n, 4, 8);
        outs o;
        outs_alloc(&o, &d);
        for (int pi = 0; pi < 5; pi++) {
            for (int cl = 0; cl < 2; cl++) {
                /* the largest sizes: two mixes only (10^7: one) */
                if (big && !((pcts[pi] == 50 && !cl) ||
                             (pcts[pi] == 1 && cl && n < 10000000)))
                    continue;
                unsigned char *f = tsel_make_flags(&r, n, pcts[pi], cl != 0);
                for (int kind = n < 10000000 ? 0 : 2; kind < 3; kind++) {
                    selc s;
                    if (kind == 0)
                        tsel_selc_bytes(&s, &r, f, n);
                    else
                        tsel_selc_bits(&s, &r, f, n, kind == 1 ? 0 : 13 + 32);
                    snprintf(d.tag, sizeof d.tag, "%s n=%zu u32 keys, u64 "
                             "tags, %d%% %s (seed 0x%llx)",
                             parsum_backend_name(tu_backend), n, pcts[pi],
                             cl ? "clustered" : "random",
                             (unsigned long long)tu_seed);
                    check_all_ops(&d, &s, &o, &failures);
                    tsel_selc_free(&s);
                }
                free(f);
            }
        }
        outs_free(&o);
        tsel_data_free(&d);
    }
    assert_int_equal(failures, 0);
}

/* ---- every dtype with every predicate ----------------------------------- */

/* Float keys with the special values a comparison can trip on. */
static void special_floats(tu_rng *r, parsum_dtype dt, unsigned char *keys,
                           size_t n)
{
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN,
                                1.0, -1.0};
    for (size_t i = 0; i < n; i++) {
        double v = tu_below(r, 4) == 0
                       ? sp[tu_below(r, 8)]
                       : (double)((int)tu_below(r, 41) - 20) / 4.0;
        tu_set(dt, keys, i, v);
    }
}

/* a and b for predicate p: keys of the data (so that EQ finds some),
 * ordered for IN_RANGE half the time; a bit for BIT_SET/CLEAR. */
static void draw_constants(tu_rng *r, const data *d, parsum_dtype dt,
                           parsum_pred p, parsum_scalar *a, parsum_scalar *b)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    size_t ks = d->ks;
    if (p == PARSUM_PRED_BIT_SET || p == PARSUM_PRED_BIT_CLEAR) {
        a->u32 = (uint32_t)tu_below(r, 8 * ks);
        return;
    }
    if (d->n == 0)
        return;
    memcpy(a, d->keys + tu_below(r, d->n) * ks, ks);
    memcpy(b, d->keys + tu_below(r, d->n) * ks, ks);
    if (p == PARSUM_PRED_IN_RANGE && tu_below(r, 2) &&
        tu_get(dt, a, 0) > tu_get(dt, b, 0)) {
        parsum_scalar t = *a;
        *a = *b;
        *b = t;
    }
}

static void test_predicates(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 33, 1025, 4097, 8191, 65537};
    size_t failures = 0;
    for (int dt = 0; dt < PARSUM_DTYPE_COUNT; dt++) {
        size_t ks = parsum_dtype_size((parsum_dtype)dt);
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            tu_rng r = tu_rng_for(0x9ed, (uint64_t)dt, n, 0);
            data d;
            tsel_data_random(&d, &r, n, ks, 8);
            if (tu_is_float((parsum_dtype)dt)) {
                special_floats(&r, (parsum_dtype)dt, d.keys, n);
                tu_upload(d.dkeys, d.keys, n * ks);
            } else if (tu_below(&r, 2)) { /* small values: repeats, 0 */
                for (size_t i = 0; i < n; i++)
                    tu_set((parsum_dtype)dt, d.keys, i,
                           (double)((int)tu_below(&r, 7) - 3));
                tu_upload(d.dkeys, d.keys, n * ks);
            }
            outs o;
            outs_alloc(&o, &d);
            for (int p = 0; p <= PARSUM_PRED_BIT_CLEAR; p++) {
                parsum_scalar a, b;
                draw_constants(&r, &d, (parsum_dtype)dt, (parsum_pred)p, &a,
                               &b);
                selc s;
                tsel_selc_pred(&s, (parsum_dtype)dt, (parsum_pred)p, a, b);
                snprintf(d.tag, sizeof d.tag, "%s n=%zu (seed 0x%llx)",
                         parsum_backend_name(tu_backend), n,
                         (unsigned long long)tu_seed);
                check_all_ops(&d, &s, &o, &failures);
            }
            outs_free(&o);
            tsel_data_free(&d);
        }
    }
    assert_int_equal(failures, 0);
}

/* ---- element and value sizes ------------------------------------------- */

/* One random case, every op against the reference: n keys of ks bytes
 * with values of vs bytes, flags of pct % (clustered or not) given as
 * bytes or as bits from bit_offset on, key outputs written from element
 * kshift of their allocation. */
static void check_random_case(tu_rng *r, size_t n, size_t ks, size_t vs,
                              size_t kshift, int pct, bool clustered,
                              bool bytes, size_t bit_offset, size_t *failures)
{
    data d;
    tsel_data_random(&d, r, n, ks, vs);
    outs o;
    outs_alloc_shifted(&o, &d, kshift);
    unsigned char *f = tsel_make_flags(r, n, pct, clustered);
    selc s;
    if (bytes)
        tsel_selc_bytes(&s, r, f, n);
    else
        tsel_selc_bits(&s, r, f, n, bit_offset);
    snprintf(d.tag, sizeof d.tag, "%s n=%zu key_size=%zu value_size=%zu, "
             "keys out at element %zu (seed 0x%llx)",
             parsum_backend_name(tu_backend), n, ks, vs, kshift,
             (unsigned long long)tu_seed);
    check_all_ops(&d, &s, &o, failures);
    tsel_selc_free(&s);
    free(f);
    outs_free(&o);
    tsel_data_free(&d);
}

static void test_elem_sizes(void **state)
{
    (void)state;
    static const size_t ks_list[] = {1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 1024};
    static const size_t vs_list[] = {16, 3, 1, 24, 2, 12, 4, 1024, 8, 5, 1};
    size_t failures = 0;
    for (size_t i = 0; i < sizeof ks_list / sizeof *ks_list; i++) {
        size_t ks = ks_list[i], vs = vs_list[i];
        size_t ch = tu_chunk(ks + vs);
        size_t sizes[] = {65, ch / 64 * 64 + 1, 3 * ch + 7};
        for (int si = 0; si < 3; si++) {
            size_t n = sizes[si] < 200000 ? sizes[si] : 200000;
            tu_rng r = tu_rng_for(0x512e, ks, vs, n);
            check_random_case(&r, n, ks, vs, 0, si == 1 ? 50 : 30, si == 2,
                              si == 1, 7, &failures);
        }
    }
    assert_int_equal(failures, 0);
}

/* Key outputs aligned to the key size but not to 16 bytes (the GPU's
 * 16-byte stores then start at a different place in every run): keys of
 * 1, 2, 4 and 8 bytes written from element 1 (and 3, 7) of an
 * allocation, sizes across several GPU tiles (8192 elements). */
static void test_output_offsets(void **state)
{
    (void)state;
    static const size_t ks_list[] = {1, 2, 4, 8};
    static const size_t shifts[] = {1, 3, 7};
    size_t failures = 0;
    for (size_t i = 0; i < 4; i++)
        for (size_t si = 0; si < 3; si++) {
            size_t ks = ks_list[i], n = 3 * 8192 + 4099 + si;
            if (ks * shifts[si] >= 16)
                continue;
            tu_rng r = tu_rng_for(0x0ff5, ks, shifts[si], n);
            check_random_case(&r, n, ks, 8, shifts[si], si == 1 ? 90 : 50,
                              si == 2, false, 0, &failures);
        }
    assert_int_equal(failures, 0);
}

/* ---- custom predicates ------------------------------------------------- */

/* Each predicate twice: the C callback (CPU context, and the reference)
 * and its CUDA source (CUDA context, compiled at first use). */

typedef struct point3 {
    float x, y, z;
} point3;

/* Points above the plane z = *(float *)user. */
static int above(const void *x, void *user)
{
    point3 p;
    memcpy(&p, x, sizeof p);
    return p.z > *(const float *)user;
}

static float plane = 0.25f;
static const parsum_custom_pred above_pred = {
    above, &plane, "struct P { float x, y, z; };", "P",
    "return x.z > 0.25f;"};

/* 1-byte keys, a helper function in cuda_type. */
static int low_bits(const void *x, void *user)
{
    (void)user;
    return (*(const unsigned char *)x & 3u) == 1u;
}
static const parsum_custom_pred low_bits_pred = {
    low_bits, NULL,
    "inline bool low_is_one(unsigned char c) { return (c & 3u) == 1u; }",
    "unsigned char", "return low_is_one(x);"};

/* 1024-byte keys (the largest elements), one byte deep inside looked at. */
static int deep_byte(const void *x, void *user)
{
    (void)user;
    return (((const unsigned char *)x)[1000] & 1u) != 0;
}
static const parsum_custom_pred deep_byte_pred = {
    deep_byte, NULL, "struct Big { unsigned char b[1024]; };", "Big",
    "return (x.b[1000] & 1u) != 0;"};

static void test_custom(void **state)
{
    (void)state;
    static const struct {
        const parsum_custom_pred *cp;
        size_t ks, max_n;
        const char *name;
    } preds[] = {
        {&above_pred, sizeof(point3), 50021, "z > 0.25 on 12-byte points"},
        {&low_bits_pred, 1, 50021, "(x & 3) == 1 on bytes"},
        {&deep_byte_pred, 1024, 3000, "byte 1000 odd on 1024-byte keys"},
    };
    static const size_t sizes[] = {0, 1, 64, 1000, 50021};
    size_t failures = 0;
    for (size_t pi = 0; pi < sizeof preds / sizeof *preds; pi++) {
        size_t ks = preds[pi].ks;
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si] < preds[pi].max_n ? sizes[si]
                                                   : preds[pi].max_n;
            tu_rng r = tu_rng_for(0xc057, n, ks, 0);
            data d;
            tsel_data_random(&d, &r, n, ks, 8);
            if (preds[pi].cp == &above_pred) {
                for (size_t i = 0; i < n; i++) {
                    point3 p = {(float)tu_uniform(&r), (float)tu_uniform(&r),
                                (float)tu_uniform(&r) - 0.25f};
                    memcpy(d.keys + i * sizeof p, &p, sizeof p);
                }
                tu_upload(d.dkeys, d.keys, n * sizeof(point3));
            }
            outs o;
            outs_alloc(&o, &d);
            selc s;
            tsel_selc_custom(&s, preds[pi].cp, preds[pi].name);
            snprintf(d.tag, sizeof d.tag, "%s n=%zu key_size=%zu (seed "
                     "0x%llx)",
                     parsum_backend_name(tu_backend), n, ks,
                     (unsigned long long)tu_seed);
            check_all_ops(&d, &s, &o, &failures);
            outs_free(&o);
            tsel_data_free(&d);
        }
    }
    assert_int_equal(failures, 0);
}

/* More distinct predicates than a CUDA context keeps compiled (32), used
 * in turn and then the first again: modules are dropped and rebuilt while
 * the results stay right. Thresholds go to the callback through user and
 * into the CUDA source as text. */
static int below_user(const void *x, void *user)
{
    uint32_t v;
    memcpy(&v, x, 4);
    return v < *(const uint32_t *)user;
}

static void test_custom_many(void **state)
{
    (void)state;
    enum { NPRED = 34 };
    size_t n = 1000, failures = 0;
    tu_rng r = tu_rng_for(0xca5e, n, 0, 0);
    data d;
    tsel_data_random(&d, &r, n, 4, 8);
    outs o;
    outs_alloc(&o, &d);
    static uint32_t limit[NPRED];
    static char src[NPRED][64];
    static parsum_custom_pred cp[NPRED];
    for (int i = 0; i <= NPRED && failures < TSEG_MAX_FAILURES; i++) {
        int k = i % NPRED;
        limit[k] = (uint32_t)(((uint64_t)k * 0xffffffffu) / (NPRED - 1));
        snprintf(src[k], sizeof src[k], "return x < %uu;", limit[k]);
        cp[k] = (parsum_custom_pred){below_user, &limit[k], "", "unsigned",
                                     src[k]};
        selc s;
        tsel_selc_custom(&s, &cp[k], src[k]);
        snprintf(d.tag, sizeof d.tag, "%s n=%zu predicate %d of %d (seed "
                 "0x%llx)",
                 parsum_backend_name(tu_backend), n, k, NPRED,
                 (unsigned long long)tu_seed);
        check_op(i % 2 ? OP_PARTITION_BY_KEY : OP_SELECT, &d, &s, &o, false,
                 &failures);
    }
    outs_free(&o);
    tsel_data_free(&d);
    assert_int_equal(failures, 0);
}

/* ---- the same output for any thread count ------------------------------ */

static void test_threads(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 3};
    size_t n = 7 * tu_chunk(12) + 5, failures = 0;
    tu_rng r = tu_rng_for(0x7472, n, 0, 0);
    data d;
    tsel_data_random(&d, &r, n, 4, 8);
    unsigned char *f = tsel_make_flags(&r, n, 50, false);
    selc s;
    tsel_selc_bits(&s, &r, f, n, 3);
    outs o;
    outs_alloc(&o, &d);
    for (int t = 0; t < 3; t++) {
        TU_OK(parsum_context_set_threads(tu_ctx, threads[t]));
        snprintf(d.tag, sizeof d.tag, "%s n=%zu %d threads (seed 0x%llx)",
                 parsum_backend_name(tu_backend), n, threads[t],
                 (unsigned long long)tu_seed);
        check_all_ops(&d, &s, &o, &failures);
    }
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    outs_free(&o);
    tsel_selc_free(&s);
    free(f);
    tsel_data_free(&d);
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_flags),       cmocka_unit_test(test_predicates),
    cmocka_unit_test(test_elem_sizes),  cmocka_unit_test(test_output_offsets),
    cmocka_unit_test(test_custom),
    cmocka_unit_test(test_custom_many),
    cmocka_unit_test(test_threads),
};

PARSUM_TEST_MAIN(test_select)
{
    tu_init("test_select");
    return tu_finish(TU_RUN("test_select", tests));
}
