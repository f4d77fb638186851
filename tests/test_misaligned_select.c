/*
 * test_misaligned_select.c - the second half of test_misaligned (whose
 * description heads test_misaligned.c): select, select_by_key,
 * select_indices, partition, partition_by_key, partition_unstable
 * (_by_key), partition3, split_by_bit, unique, unique_by_key,
 * run_length_encode and run_length_nontrivial with every array off a
 * 16-byte boundary, through the helpers of test_misaligned.h.
 */
#include "test_misaligned.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- selection, partition, unique, run-length encoding ------------------ */

/* Keys in runs of 1..8 (so unique and the run-length encodings have runs
 * to find), values, and the flag bytes of a BYTES selector, each at its
 * own shift; two selectors: a predicate on the keys and the flag bytes. */
typedef struct sdata {
    keyed k;
    unsigned char *flags;
    arr F;
    parsum_selector sel_host[2], sel_dev[2];
    const char *sel_name[2];
} sdata;

static void sdata_make(sdata *d, parsum_dtype kd, parsum_dtype vd, size_t n,
                       size_t round)
{
    tmis_keyed_make(&d->k, kd, vd, n, round);
    tu_rng r = tu_rng_for(0x5e1c, kd * 16 + vd, n, round);
    d->flags = tu_malloc(n);
    for (size_t i = 0; i < n; i++)
        d->flags[i] = tu_below(&r, 2) ? (unsigned char)(1 + tu_below(&r, 255))
                                      : 0;
    d->F = tmis_arr_in("flag bytes", d->flags, n, PARSUM_U8,
                       tmis_shift_of(1, round, 2));
    /* Predicate: the key's top bit clear (about half of the runs). */
    parsum_selector p = {.kind = PARSUM_SELECT_PREDICATE, .dtype = kd,
                         .pred = PARSUM_PRED_BIT_CLEAR};
    p.a.u32 = 8 * (unsigned)d->k.ks - 1;
    parsum_selector b = {.kind = PARSUM_SELECT_BYTES, .bytes = d->flags};
    d->sel_host[0] = d->sel_dev[0] = p;
    d->sel_host[1] = d->sel_dev[1] = b;
    d->sel_dev[1].bytes = d->F.s.out;
    d->sel_name[0] = "predicate bit_clear(top)";
    d->sel_name[1] = "flag bytes";
}

static void sdata_free(sdata *d)
{
    tmis_keyed_free(&d->k);
    tmis_arr_free(&d->F);
    free(d->flags);
}

/* The calls with keys_out (and values_out), one count. */
typedef enum sop {
    SOP_SELECT,
    SOP_SELECT_BY_KEY,
    SOP_PARTITION,
    SOP_PARTITION_BY_KEY,
    SOP_UNSTABLE,
    SOP_UNSTABLE_BY_KEY,
    SOP_SPLIT_BY_BIT,
    SOP_UNIQUE,
    SOP_UNIQUE_BY_KEY,
    SOP_COUNT
} sop;

static const struct {
    const char *name;
    bool values, selector, fills; /* fills: writes all n (partitions) */
} sops[SOP_COUNT] = {
    {"select", false, true, false},
    {"select_by_key", true, true, false},
    {"partition", false, true, true},
    {"partition_by_key", true, true, true},
    {"partition_unstable", false, true, true},
    {"partition_unstable_by_key", true, true, true},
    {"split_by_bit", true, false, true},
    {"unique", false, false, false},
    {"unique_by_key", true, false, false},
};

/* split_by_bit's bit: the lowest bit of the top byte (keys of a run
 * differ in one random bit, so both groups are long). */
static unsigned split_bit(const keyed *k)
{
    return 8 * (unsigned)k->ks - 8;
}

static size_t sop_ref(sop op, const sdata *d, const parsum_selector *sel,
                      void *wk, void *wv)
{
    const keyed *k = &d->k;
    bool v = sops[op].values;
    parsum__ref_buffers b = {k->keys, k->ks, v ? k->vals : NULL,
                             v ? k->vs : 0, k->n, wk, v ? wv : NULL, NULL};
    parsum_selector bit = {.kind = PARSUM_SELECT_PREDICATE, .dtype = k->kd,
                           .pred = PARSUM_PRED_BIT_CLEAR};
    bit.a.u32 = split_bit(k);
    switch (op) {
    case SOP_SELECT: case SOP_SELECT_BY_KEY:
        return parsum__ref_select(sel, &b);
    case SOP_PARTITION: case SOP_PARTITION_BY_KEY:
        return parsum__ref_partition(sel, &b);
    case SOP_UNSTABLE: case SOP_UNSTABLE_BY_KEY:
        return parsum__ref_partition_unstable(sel, &b);
    case SOP_SPLIT_BY_BIT:
        return parsum__ref_partition(&bit, &b);
    default:
        return parsum__ref_runs(&b, false, NULL, NULL);
    }
}

static parsum_status sop_call(sop op, const sdata *d,
                              const parsum_selector *sel, void *ko, void *vo,
                              size_t *count)
{
    const keyed *k = &d->k;
    const void *K = k->K.s.out, *V = k->V.s.out;
    size_t n = k->n, ks = k->ks, vs = k->vs;
    switch (op) {
    case SOP_SELECT:
        return parsum_select(tu_ctx, K, ko, n, ks, sel, count);
    case SOP_SELECT_BY_KEY:
        return parsum_select_by_key(tu_ctx, K, V, ko, vo, n, ks, vs, sel,
                                    count);
    case SOP_PARTITION:
        return parsum_partition(tu_ctx, K, ko, n, ks, sel, count);
    case SOP_PARTITION_BY_KEY:
        return parsum_partition_by_key(tu_ctx, K, V, ko, vo, n, ks, vs, sel,
                                       count);
    case SOP_UNSTABLE:
        return parsum_partition_unstable(tu_ctx, K, ko, n, ks, sel, count);
    case SOP_UNSTABLE_BY_KEY:
        return parsum_partition_unstable_by_key(tu_ctx, K, V, ko, vo, n, ks,
                                                vs, sel, count);
    case SOP_SPLIT_BY_BIT:
        return parsum_split_by_bit(tu_ctx, K, V, ko, vo, n, k->kd, vs,
                                   split_bit(k), count);
    case SOP_UNIQUE:
        return parsum_unique(tu_ctx, K, ko, n, ks, count);
    default:
        return parsum_unique_by_key(tu_ctx, K, V, ko, vo, n, ks, vs, count);
    }
}

/* One call of op (selector s when it takes one) into shifted outputs. */
static void check_sop(const sdata *d, sop op, int s, size_t *failures)
{
    const keyed *k = &d->k;
    void *wk = tu_malloc(k->n * k->ks), *wv = tu_malloc(k->n * k->vs);
    size_t want = sop_ref(op, d, &d->sel_host[s], wk, wv), got = 0;
    arr ko = tmis_arr_out("keys_out", k->n, k->kd,
                          tmis_shift_of(k->ks, k->round, 1));
    arr vo = tmis_arr_out("values_out", k->n, k->vd,
                          tmis_shift_of(k->vs, k->round, 1));
    char what[400];
    snprintf(what, sizeof what, "%s %s%s%s", sops[op].name, k->tag,
             sops[op].selector ? " sel=" : "",
             sops[op].selector ? d->sel_name[s] : "");
    if (sops[op].selector && s == 1)
        snprintf(what + strlen(what), sizeof what - strlen(what),
                 " at 64k+%zu", d->F.s.shift);
    if (tmis_call_ok(sop_call(op, d, &d->sel_dev[s], ko.s.out,
                              sops[op].values ? vo.s.out : NULL, &got),
                     what, failures) &&
        tmis_count_ok(got, want, "count", what, failures)) {
        size_t cnt = sops[op].fills ? k->n : want;
        tmis_check_out(&ko, wk, cnt, true, what, failures);
        /* Keys-only calls must not touch values_out (never passed). */
        tmis_check_out(&vo, wv, sops[op].values ? cnt : 0, true, what,
                       failures);
        tmis_check_in(&k->K, what, failures);
        if (sops[op].values)
            tmis_check_in(&k->V, what, failures);
        if (sops[op].selector && s == 1)
            tmis_check_in(&d->F, what, failures);
    }
    tmis_arr_free(&ko);
    tmis_arr_free(&vo);
    free(wk);
    free(wv);
}

/* select_indices: the indices at a shifted address too. */
static void check_indices(const sdata *d, int s, size_t *failures)
{
    const keyed *k = &d->k;
    uint64_t *wi = tu_malloc(k->n * 8);
    parsum__ref_buffers b = {k->keys, k->ks, NULL, 0, k->n, NULL, NULL, wi};
    size_t want = parsum__ref_select(&d->sel_host[s], &b), got = 0;
    arr io = tmis_arr_out("indices", k->n, PARSUM_U64,
                          tmis_shift_of(8, k->round, 1));
    char what[400];
    snprintf(what, sizeof what, "select_indices %s sel=%s", k->tag,
             d->sel_name[s]);
    if (tmis_call_ok(parsum_select_indices(tu_ctx, k->K.s.out, k->n, k->ks,
                                           &d->sel_dev[s], tmis_u64p(&io),
                                           &got),
                     what, failures) &&
        tmis_count_ok(got, want, "num_selected", what, failures)) {
        tmis_check_out(&io, wi, want, true, what, failures);
        tmis_check_in(&k->K, what, failures);
        if (s == 1)
            tmis_check_in(&d->F, what, failures);
    }
    tmis_arr_free(&io);
    free(wi);
}

/* partition3: the predicate first, then the flag bytes. */
static void check_partition3(const sdata *d, size_t *failures)
{
    const keyed *k = &d->k;
    void *wk = tu_malloc(k->n * k->ks);
    parsum__ref_buffers b = {k->keys, k->ks, NULL, 0, k->n, wk, NULL, NULL};
    size_t want[2], got[2] = {0, 0};
    parsum__ref_partition3(&d->sel_host[0], &d->sel_host[1], &b, want);
    arr ko = tmis_arr_out("out", k->n, k->kd,
                          tmis_shift_of(k->ks, k->round, 1));
    char what[400];
    snprintf(what, sizeof what, "partition3 %s sel=%s, %s at 64k+%zu",
             k->tag, d->sel_name[0], d->sel_name[1], d->F.s.shift);
    if (tmis_call_ok(parsum_partition3(tu_ctx, k->K.s.out, ko.s.out, k->n,
                                       k->ks, &d->sel_dev[0], &d->sel_dev[1],
                                       got),
                     what, failures) &&
        tmis_count_ok(got[0], want[0], "counts[0]", what, failures) &&
        tmis_count_ok(got[1], want[1], "counts[1]", what, failures)) {
        tmis_check_out(&ko, wk, k->n, false, what, failures);
        tmis_check_in(&k->K, what, failures);
        tmis_check_in(&d->F, what, failures);
    }
    tmis_arr_free(&ko);
    free(wk);
}

/* run_length_encode (unique_out and lengths) or run_length_nontrivial
 * (offsets and lengths, room for n / 2 each). */
static void check_rle(const sdata *d, bool nontrivial, size_t *failures)
{
    const keyed *k = &d->k;
    size_t cap = nontrivial ? k->n / 2 : k->n;
    void *wk = tu_malloc(k->n * k->ks);
    uint64_t *wl = tu_malloc(k->n * 8), *wo = tu_malloc(k->n * 8);
    parsum__ref_buffers b = {k->keys, k->ks, NULL, 0, k->n,
                             nontrivial ? NULL : wk, NULL, NULL};
    size_t want = parsum__ref_runs(&b, nontrivial, wl, wo), got = 0;
    arr uo = tmis_arr_out("unique_out", cap, k->kd,
                          tmis_shift_of(k->ks, k->round, 1));
    arr lo = tmis_arr_out("lengths", cap, PARSUM_U64,
                          tmis_shift_of(8, k->round, 1));
    arr oo = tmis_arr_out("offsets", cap, PARSUM_U64,
                          tmis_shift_of(8, k->round, 0));
    char what[400];
    snprintf(what, sizeof what, "run_length_%s %s",
             nontrivial ? "nontrivial" : "encode", k->tag);
    parsum_status st =
        nontrivial ? parsum_run_length_nontrivial(tu_ctx, k->K.s.out, k->n,
                                                  k->ks, tmis_u64p(&oo),
                                                  tmis_u64p(&lo), &got)
                   : parsum_run_length_encode(tu_ctx, k->K.s.out, k->n, k->ks,
                                              uo.s.out, tmis_u64p(&lo), &got);
    if (tmis_call_ok(st, what, failures) &&
        tmis_count_ok(got, want, "num_runs", what, failures)) {
        tmis_check_out(&lo, wl, want, true, what, failures);
        tmis_check_out(&uo, wk, nontrivial ? 0 : want, true, what, failures);
        tmis_check_out(&oo, wo, nontrivial ? want : 0, true, what, failures);
        tmis_check_in(&k->K, what, failures);
    }
    tmis_arr_free(&uo);
    tmis_arr_free(&lo);
    tmis_arr_free(&oo);
    free(wk);
    free(wl);
    free(wo);
}

/* ---- the rounds of the tests -------------------------------------------- */

/* What a test of this file checks on the data of one round. */
typedef void sdata_checks(const sdata *d, size_t *failures);

/* A case of a test of this file as its callback gets it: key and value
 * dtypes, the test's checks and its count of failures. */
typedef struct sel_case {
    parsum_dtype kd, vd;
    sdata_checks *checks;
    size_t *failures;
} sel_case;

/* The key and value dtypes of both tests of this file. */
static const parsum_dtype cases[][2] = {{PARSUM_U8, PARSUM_F64},
                                        {PARSUM_I32, PARSUM_U8}};

static void sdata_round(size_t n, size_t round, void *arg)
{
    const sel_case *c = arg;
    sdata d;
    sdata_make(&d, c->kd, c->vd, n, round);
    c->checks(&d, c->failures);
    sdata_free(&d);
}

/* Runs checks on every round of each case; none may fail. */
static void run_checks(sdata_checks *checks)
{
    size_t failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sel_case a = {cases[c][0], cases[c][1], checks, &failures};
        tmis_each_round(parsum_dtype_size(a.kd), parsum_dtype_size(a.vd),
                        sdata_round, &a);
    }
    assert_int_equal(failures, 0);
}

/* ---- the tests ---------------------------------------------------------- */

static void select_partition_checks(const sdata *d, size_t *failures)
{
    static const sop ops[] = {SOP_SELECT,   SOP_SELECT_BY_KEY,
                              SOP_PARTITION, SOP_PARTITION_BY_KEY,
                              SOP_UNSTABLE, SOP_UNSTABLE_BY_KEY};
    for (int s = 0; s < 2; s++) {
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            check_sop(d, ops[o], s, failures);
        check_indices(d, s, failures);
    }
    check_partition3(d, failures);
    check_sop(d, SOP_SPLIT_BY_BIT, 0, failures);
}

void tmis_test_select_partition(void **state)
{
    (void)state;
    run_checks(select_partition_checks);
}

static void unique_rle_checks(const sdata *d, size_t *failures)
{
    check_sop(d, SOP_UNIQUE, 0, failures);
    check_sop(d, SOP_UNIQUE_BY_KEY, 0, failures);
    check_rle(d, false, failures);
    check_rle(d, true, failures);
}

void tmis_test_unique_rle(void **state)
{
    (void)state;
    run_checks(unique_rle_checks);
}
