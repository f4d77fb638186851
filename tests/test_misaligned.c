/*
 * test_misaligned.c - every primitive family besides the plain and
 * segmented scans with its inputs AND its outputs placed off a 16-byte
 * boundary, against the serial reference (src/ref), with guards around
 * every array:
 *   reduce               the input
 *   segmented_reduce     the values and the totals (offsets aligned)
 *   scan_by_key          keys, values and output (all four flag sets)
 *   reduce_by_key        keys, values, keys_out and values_out
 *   select, select_by_key, select_indices, partition, partition_by_key,
 *   partition_unstable(_by_key), partition3, split_by_bit
 *                        keys, values, outputs, indices and the flag
 *                        bytes of a BYTES selector (and a predicate)
 *   unique, unique_by_key, run_length_encode, run_length_nontrivial
 *                        keys, values, outputs, lengths and offsets
 *   histogram            samples and each channel's counts, every strategy
 *   sort, sort_indices, segmented_sort
 *                        keys and values in and out, the permutation
 *                        (segment offsets aligned)
 * Each array starts a whole number of elements past a 64-byte boundary
 * but off 16 bytes: 4 and 12 bytes for 4-byte elements, 8 and 24 for
 * 8-byte ones, and 1, 5 and 13 (odd) for bytes; the arrays of one call
 * take different shifts, so that inputs and outputs are misaligned
 * against each other too. Sizes: 1000 elements, and nine CPU chunks
 * plus 77 (chunks on two or more threads on the CPU, the multi-tile
 * pipelined kernels on a GPU) for the smallest element of the call.
 *
 * Why: buffers from malloc or sub-arrays (buf + 1) are aligned to their
 * element type only. One GPU path (reverse scans) read far out of bounds
 * on such buffers and CPU paths were slow on them; test_scan.c and
 * test_segmented.c check the scans' outputs (test_misaligned_out,
 * test_seg_scan_misaligned_out), this program the rest. Every array sits
 * between TU_GUARD poisoned bytes (tu_shifted_alloc) that must stay
 * poisoned (they catch stray writes; a read past an array lands in its
 * guards and shows only if it changes a result); inputs must come back
 * unchanged; outputs are poisoned before the call, and those the header
 * sizes for the worst case (selections, unique, run-length encodings)
 * must stay poison past the elements written, as test_select.c and
 * test_unique.c require. Inputs are exact (TU_DATA_EXACT, integer
 * dtypes, or values that are only moved), so results compare bit for
 * bit.
 *
 * Two files: this one holds the helpers both share (test_misaligned.h)
 * and the reduce, segmented reduce, by-key, histogram and sort tests;
 * test_misaligned_select.c the selection, partition, unique and
 * run-length encoding tests.
 */
#include "test_misaligned.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shifted arrays ----------------------------------------------------- */

/* The shifts (bytes past a 64-byte boundary) for es-byte elements. */
static size_t shift_list(size_t es, const size_t **list)
{
    static const size_t s1[] = {1, 5, 13}, s2[] = {2, 6}, s4[] = {4, 12},
                        s8[] = {8, 24};
    switch (es) {
    case 1: *list = s1; return 3;
    case 2: *list = s2; return 2;
    case 4: *list = s4; return 2;
    default: *list = s8; return 2;
    }
}

/* The shift of an array of es-byte elements in round `round`; arrays of
 * one call pass different roles (0 inputs, 1 outputs, ...) to differ. */
size_t tmis_shift_of(size_t es, size_t round, size_t role)
{
    const size_t *list;
    size_t m = shift_list(es, &list);
    return list[(round + role) % m];
}

/* Rounds that give every array of elements of size a or b each shift. */
size_t tmis_rounds_for(size_t a, size_t b)
{
    const size_t *list;
    size_t ma = shift_list(a, &list), mb = shift_list(b, &list);
    return ma > mb ? ma : mb;
}

/* The two sizes of a call whose smallest element has es bytes. */
void tmis_sizes_for(size_t es, size_t sizes[2])
{
    sizes[0] = 1000;
    sizes[1] = 9 * tu_chunk(es) + 77;
}

arr tmis_arr_out(const char *name, size_t cap, parsum_dtype d, size_t shift)
{
    arr a;
    a.d = d;
    a.es = parsum_dtype_size(d);
    a.cap = cap;
    a.host = NULL;
    a.name = name;
    a.s = tu_shifted_alloc(cap * a.es, shift);
    return a;
}

arr tmis_arr_in(const char *name, const void *host, size_t n, parsum_dtype d,
                size_t shift)
{
    arr a = tmis_arr_out(name, n, d, shift);
    a.host = host;
    tu_upload(a.s.out, host, n * a.es);
    return a;
}

/* The array as uint64_t (indices, lengths, offsets, permutations). */
uint64_t *tmis_u64p(const arr *a)
{
    return (uint64_t *)(void *)a->s.out;
}

void tmis_arr_free(arr *a)
{
    tu_shifted_free(&a->s);
}

void tmis_check_guards(const arr *a, const char *what, size_t *failures)
{
    size_t bad = tu_shifted_guards(&a->s);
    if (bad != 0)
        tu_report(failures, "  %s: %zu guard bytes around %s (at 64k+%zu) "
                  "written\n", what, bad, a->name, a->s.shift);
}

/* An input: unchanged, guards intact. */
void tmis_check_in(const arr *a, const char *what, size_t *failures)
{
    size_t bytes = a->cap * a->es;
    unsigned char *got = tu_malloc(bytes);
    tu_download(got, a->s.out, bytes);
    for (size_t i = 0; i < bytes; i++) {
        if (got[i] != ((const unsigned char *)a->host)[i]) {
            tu_report(failures, "  %s: input %s (at 64k+%zu) modified, first "
                      "at element %zu\n", what, a->name, a->s.shift,
                      i / a->es);
            break;
        }
    }
    free(got);
    tmis_check_guards(a, what, failures);
}

/* An output: its first k elements equal want; with rest_poison the rest
 * of its room is still poison; guards intact. */
void tmis_check_out(const arr *a, const void *want, size_t k,
                    bool rest_poison, const char *what, size_t *failures)
{
    size_t bytes = a->cap * a->es;
    unsigned char *got = tu_malloc(bytes);
    char w[400];
    snprintf(w, sizeof w, "%s, %s at 64k+%zu", what, a->name, a->s.shift);
    tu_download(got, a->s.out, bytes);
    if (tu_compare(a->d, want, got, k, NULL, w) != 0)
        (*failures)++;
    for (size_t i = k * a->es; rest_poison && i < bytes; i++) {
        if (got[i] != TU_POISON) {
            tu_report(failures, "  %s: element %zu written, past the %zu "
                      "results\n", w, i / a->es, k);
            break;
        }
    }
    free(got);
    tmis_check_guards(a, what, failures);
}

bool tmis_call_ok(parsum_status st, const char *what, size_t *failures)
{
    if (st == PARSUM_OK)
        return true;
    tu_report(failures, "  %s: returned %s: %s\n", what,
              parsum_status_name(st), parsum_last_error(tu_ctx));
    return false;
}

bool tmis_count_ok(size_t got, size_t want, const char *name,
                   const char *what, size_t *failures)
{
    if (got == want)
        return true;
    tu_report(failures, "  %s: %s = %zu, expected %zu\n", what, name, got,
              want);
    return false;
}

/* ---- inputs ------------------------------------------------------------- */

/* n random elements of d (TU_DATA_EXACT for SUM). */
void *tmis_random_data(tu_rng *r, parsum_dtype d, size_t n)
{
    void *p = tu_malloc(n * parsum_dtype_size(d));
    tu_fill(r, d, PARSUM_SUM, TU_DATA_EXACT, p, n);
    return p;
}

/* n keys of d in runs drawn from dist; each run's key is the previous
 * one with one random bit flipped (so consecutive runs always differ). */
void *tmis_run_keys(tu_rng *r, parsum_dtype d, size_t n, tseg_dist dist)
{
    size_t ks = parsum_dtype_size(d);
    unsigned char *keys = tu_malloc(n * ks), key[8];
    uint64_t *off;
    size_t nseg = tseg_offsets(r, dist, n, &off);
    uint64_t v = tu_next(r);
    memcpy(key, &v, sizeof key);
    for (size_t s = 0; s < nseg; s++) {
        size_t bit = (size_t)tu_below(r, 8 * ks);
        key[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        for (uint64_t i = off[s]; i < off[s + 1]; i++)
            memcpy(keys + i * ks, key, ks);
    }
    free(off);
    return keys;
}

/* The unsigned dtype of es-byte elements (moved, never combined). */
parsum_dtype tmis_raw_dtype(size_t es)
{
    return es == 1 ? PARSUM_U8 : es == 2 ? PARSUM_U16
                   : es == 4 ? PARSUM_U32 : PARSUM_U64;
}

/* ---- rounds ------------------------------------------------------------- */

void tmis_each_round(size_t a, size_t b,
                     void (*fn)(size_t n, size_t round, void *arg),
                     void *arg)
{
    size_t sizes[2];
    tmis_sizes_for(a < b ? a : b, sizes);
    for (size_t j = 0; j < 2; j++)
        for (size_t round = 0; round < tmis_rounds_for(a, b); round++)
            fn(sizes[j], round, arg);
}

/* A case of a test of one dtype as its callback gets it: the dtype and
 * the test's count of failures. */
typedef struct one_dt {
    parsum_dtype d;
    size_t *failures;
} one_dt;

/* tmis_each_round for each of the count dtypes of dts, whose calls also
 * hold elements of `other` bytes (0: none), with the dtype's one_dt as
 * fn's arg; returns the failures. */
static size_t each_dtype(const parsum_dtype *dts, size_t count, size_t other,
                         void (*fn)(size_t n, size_t round, void *arg))
{
    size_t failures = 0;
    for (size_t t = 0; t < count; t++) {
        one_dt a = {dts[t], &failures};
        size_t es = parsum_dtype_size(dts[t]);
        tmis_each_round(es, other > 0 ? other : es, fn, &a);
    }
    return failures;
}

/* ---- reduce ------------------------------------------------------------- */

static void check_reduce(parsum_dtype d, size_t n, size_t round,
                         size_t *failures)
{
    size_t es = parsum_dtype_size(d);
    tu_rng r = tu_rng_for(0x6ed0, d, n, round);
    void *in = tmis_random_data(&r, d, n);
    unsigned char want[8], got[8];
    parsum__ref_reduce(in, n, d, PARSUM_SUM, want);
    memset(got, TU_POISON, sizeof got);
    arr a = tmis_arr_in("in", in, n, d, tmis_shift_of(es, round, 0));
    char what[300];
    snprintf(what, sizeof what, "reduce %s %s sum n=%zu in at 64k+%zu "
             "(seed 0x%llx)", parsum_backend_name(tu_backend),
             parsum_dtype_name(d), n, a.s.shift, (unsigned long long)tu_seed);
    if (tmis_call_ok(parsum_reduce(tu_ctx, a.s.out, n, d, PARSUM_SUM, got),
                     what, failures)) {
        if (tu_compare(d, want, got, 1, NULL, what) != 0)
            (*failures)++;
        tmis_check_in(&a, what, failures);
    }
    tmis_arr_free(&a);
    free(in);
}

/* The dtypes of the reduce and segmented reduce tests. */
static const parsum_dtype reduce_dts[] = {PARSUM_U8, PARSUM_I32, PARSUM_F64};
static const size_t n_reduce_dts = sizeof reduce_dts / sizeof reduce_dts[0];

static void reduce_round(size_t n, size_t round, void *arg)
{
    const one_dt *a = arg;
    check_reduce(a->d, n, round, a->failures);
}

static void test_reduce(void **state)
{
    (void)state;
    assert_int_equal(each_dtype(reduce_dts, n_reduce_dts, 0, reduce_round), 0);
}

/* ---- segmented reduce --------------------------------------------------- */

static void check_seg_reduce(parsum_dtype d, tseg_dist dist, size_t n,
                             size_t round, size_t *failures)
{
    size_t es = parsum_dtype_size(d);
    tu_rng r = tu_rng_for(0x5e6d, d, n, round * 8 + dist);
    void *in = tmis_random_data(&r, d, n);
    uint64_t *off;
    size_t nseg = tseg_offsets(&r, dist, n, &off);
    void *want = tu_malloc(nseg * es);
    parsum__ref_seg_reduce(in, want, off, nseg, d, PARSUM_SUM, NULL);
    uint64_t *doff = tu_dev_alloc((nseg + 1) * 8);
    tu_upload(doff, off, (nseg + 1) * 8);
    arr a = tmis_arr_in("in", in, n, d, tmis_shift_of(es, round, 0));
    arr o = tmis_arr_out("out", nseg, d, tmis_shift_of(es, round, 1));
    char what[300];
    snprintf(what, sizeof what, "segmented_reduce %s %s sum %s n=%zu "
             "(%zu segments) in at 64k+%zu out at 64k+%zu (seed 0x%llx)",
             parsum_backend_name(tu_backend), parsum_dtype_name(d),
             tseg_dist_name(dist), n, nseg, a.s.shift, o.s.shift,
             (unsigned long long)tu_seed);
    if (tmis_call_ok(parsum_segmented_reduce(tu_ctx, a.s.out, o.s.out, doff,
                                             nseg, d, PARSUM_SUM),
                     what, failures)) {
        tmis_check_out(&o, want, nseg, false, what, failures);
        tmis_check_in(&a, what, failures);
    }
    tmis_arr_free(&a);
    tmis_arr_free(&o);
    tu_dev_free(doff);
    free(want);
    free(off);
    free(in);
}

static void seg_reduce_round(size_t n, size_t round, void *arg)
{
    static const tseg_dist dists[] = {TSEG_RAND8, TSEG_POWER};
    const one_dt *a = arg;
    for (size_t j = 0; j < 2; j++)
        check_seg_reduce(a->d, dists[j], n, round, a->failures);
}

static void test_segmented_reduce(void **state)
{
    (void)state;
    assert_int_equal(
        each_dtype(reduce_dts, n_reduce_dts, 0, seg_reduce_round), 0);
}

/* ---- scan_by_key and reduce_by_key -------------------------------------- */

/* A case of test_by_key as its callback gets it: key and value dtypes,
 * and the test's count of failures. */
typedef struct by_key_case {
    parsum_dtype kd, vd;
    size_t *failures;
} by_key_case;

static const unsigned all_flags[4] = {
    PARSUM_INCLUSIVE, PARSUM_EXCLUSIVE, PARSUM_REVERSE,
    PARSUM_EXCLUSIVE | PARSUM_REVERSE};

void tmis_keyed_make(keyed *k, parsum_dtype kd, parsum_dtype vd, size_t n,
                     size_t round)
{
    tu_rng r = tu_rng_for(0x6e7d, kd * 16 + vd, n, round);
    k->kd = kd;
    k->vd = vd;
    k->n = n;
    k->ks = parsum_dtype_size(kd);
    k->vs = parsum_dtype_size(vd);
    k->round = round;
    k->keys = tmis_run_keys(&r, kd, n, TSEG_RAND8);
    k->vals = tmis_random_data(&r, vd, n);
    k->K = tmis_arr_in("keys", k->keys, n, kd,
                       tmis_shift_of(k->ks, round, 0));
    k->V = tmis_arr_in("values", k->vals, n, vd,
                       tmis_shift_of(k->vs, round, 0));
    snprintf(k->tag, sizeof k->tag, "%s keys %s at 64k+%zu values %s at "
             "64k+%zu n=%zu (seed 0x%llx)", parsum_backend_name(tu_backend),
             parsum_dtype_name(kd), k->K.s.shift, parsum_dtype_name(vd),
             k->V.s.shift, n, (unsigned long long)tu_seed);
}

void tmis_keyed_free(keyed *k)
{
    tmis_arr_free(&k->K);
    tmis_arr_free(&k->V);
    free(k->keys);
    free(k->vals);
}

static void check_scan_by_key(const keyed *k, size_t *failures)
{
    void *want = tu_malloc(k->n * k->vs);
    char what[400];
    for (int f = 0; f < 4; f++) {
        parsum__ref_scan_by_key(k->keys, k->kd, k->vals, want, k->n, k->vd,
                                PARSUM_SUM, all_flags[f]);
        arr o = tmis_arr_out("out", k->n, k->vd,
                             tmis_shift_of(k->vs, k->round, 1));
        snprintf(what, sizeof what, "scan_by_key sum %s %s", k->tag,
                 tu_flags_name(all_flags[f]));
        if (tmis_call_ok(parsum_scan_by_key(tu_ctx, k->K.s.out, k->kd,
                                            k->V.s.out, o.s.out, k->n, k->vd,
                                            PARSUM_SUM, all_flags[f]),
                         what, failures)) {
            tmis_check_out(&o, want, k->n, false, what, failures);
            tmis_check_in(&k->K, what, failures);
            tmis_check_in(&k->V, what, failures);
        }
        tmis_arr_free(&o);
    }
    free(want);
}

static void check_reduce_by_key(const keyed *k, size_t *failures)
{
    void *wk = tu_malloc(k->n * k->ks), *wv = tu_malloc(k->n * k->vs);
    size_t runs = parsum__ref_reduce_by_key(k->keys, k->kd, k->vals, k->n,
                                            k->vd, PARSUM_SUM, wk, wv);
    arr ko = tmis_arr_out("keys_out", k->n, k->kd,
                          tmis_shift_of(k->ks, k->round, 1));
    arr vo = tmis_arr_out("values_out", k->n, k->vd,
                          tmis_shift_of(k->vs, k->round, 1));
    size_t got = 0;
    char what[400];
    snprintf(what, sizeof what, "reduce_by_key sum %s", k->tag);
    if (tmis_call_ok(parsum_reduce_by_key(tu_ctx, k->K.s.out, k->kd,
                                          k->V.s.out, k->n, k->vd, PARSUM_SUM,
                                          ko.s.out, vo.s.out, &got),
                     what, failures) &&
        tmis_count_ok(got, runs, "num_runs", what, failures)) {
        /* Room for n: only the runs are specified, so only the guards
         * are checked past them. */
        tmis_check_out(&ko, wk, runs, false, what, failures);
        tmis_check_out(&vo, wv, runs, false, what, failures);
        tmis_check_in(&k->K, what, failures);
        tmis_check_in(&k->V, what, failures);
    }
    tmis_arr_free(&ko);
    tmis_arr_free(&vo);
    free(wk);
    free(wv);
}

static void by_key_round(size_t n, size_t round, void *arg)
{
    const by_key_case *c = arg;
    keyed k;
    tmis_keyed_make(&k, c->kd, c->vd, n, round);
    check_scan_by_key(&k, c->failures);
    check_reduce_by_key(&k, c->failures);
    tmis_keyed_free(&k);
}

static void test_by_key(void **state)
{
    (void)state;
    static const parsum_dtype cases[][2] = {{PARSUM_U8, PARSUM_I32},
                                            {PARSUM_I64, PARSUM_F64},
                                            {PARSUM_I32, PARSUM_U8}};
    size_t failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        by_key_case a = {cases[c][0], cases[c][1], &failures};
        tmis_each_round(parsum_dtype_size(a.kd), parsum_dtype_size(a.vd),
                        by_key_round, &a);
    }
    assert_int_equal(failures, 0);
}

/* ---- histogram ---------------------------------------------------------- */

static const parsum_hist_strategy strategies[] = {
    PARSUM_HIST_AUTO, PARSUM_HIST_ATOMIC_GLOBAL, PARSUM_HIST_PRIVATIZED,
    PARSUM_HIST_SORT_REDUCE_BY_KEY};
static const char *const strategy_names[] = {"auto", "atomic", "privatized",
                                             "sort"};

/* U8 samples, one channel of 256 bins, U32 counts; or I32 samples, two
 * channels (1000 bins over [-2^30, 2^30) and 37 over the whole range),
 * U64 counts. */
static void hist_desc(parsum_dtype sd, parsum_histogram_desc *h)
{
    memset(h, 0, sizeof *h);
    h->sample_dtype = sd;
    if (sd == PARSUM_U8) {
        h->channels = 1;
        h->count_dtype = PARSUM_U32;
        h->bins[0].nbins = 256;
        h->bins[0].lo.i64 = 0;
        h->bins[0].hi.i64 = 256;
    } else {
        h->channels = 2;
        h->count_dtype = PARSUM_U64;
        h->bins[0].nbins = 1000;
        h->bins[0].lo.i64 = -((int64_t)1 << 30);
        h->bins[0].hi.i64 = (int64_t)1 << 30;
        h->bins[1].nbins = 37;
        h->bins[1].lo.i64 = INT32_MIN;
        h->bins[1].hi.i64 = (int64_t)INT32_MAX + 1;
    }
}

static void check_histogram(parsum_dtype sd, size_t n, size_t round,
                            size_t *failures)
{
    parsum_histogram_desc h;
    hist_desc(sd, &h);
    size_t ss = parsum_dtype_size(sd), cs = parsum_dtype_size(h.count_dtype);
    size_t ns = n * (size_t)h.channels;
    tu_rng r = tu_rng_for(0x4157, sd, n, round);
    void *samples = tmis_random_data(&r, sd, ns);
    void *want[4] = {NULL, NULL, NULL, NULL};
    for (int c = 0; c < h.channels; c++)
        want[c] = tu_malloc(h.bins[c].nbins * cs);
    parsum__ref_histogram(samples, n, &h, want);
    arr in = tmis_arr_in("samples", samples, ns, sd,
                         tmis_shift_of(ss, round, 0));
    for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++) {
        h.strategy = strategies[s];
        arr co[2];
        void *dc[4] = {NULL, NULL, NULL, NULL};
        for (int c = 0; c < h.channels; c++) {
            co[c] = tmis_arr_out(c == 0 ? "counts[0]" : "counts[1]",
                                 h.bins[c].nbins, h.count_dtype,
                                 tmis_shift_of(cs, round, 1 + (size_t)c));
            dc[c] = co[c].s.out;
        }
        char what[400];
        snprintf(what, sizeof what, "histogram %s %s %d channel(s) %s counts "
                 "%s n=%zu samples at 64k+%zu (seed 0x%llx)",
                 parsum_backend_name(tu_backend), parsum_dtype_name(sd),
                 h.channels, parsum_dtype_name(h.count_dtype),
                 strategy_names[s], n, in.s.shift,
                 (unsigned long long)tu_seed);
        if (tmis_call_ok(parsum_histogram(tu_ctx, in.s.out, n, &h, dc), what,
                         failures)) {
            for (int c = 0; c < h.channels; c++)
                tmis_check_out(&co[c], want[c], h.bins[c].nbins, false, what,
                               failures);
            tmis_check_in(&in, what, failures);
        }
        for (int c = 0; c < h.channels; c++)
            tmis_arr_free(&co[c]);
    }
    tmis_arr_free(&in);
    for (int c = 0; c < h.channels; c++)
        free(want[c]);
    free(samples);
}

static void histogram_round(size_t n, size_t round, void *arg)
{
    const one_dt *a = arg;
    check_histogram(a->d, n, round, a->failures);
}

static void test_histogram(void **state)
{
    (void)state;
    static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_I32};
    /* Rounds for the samples and 8-byte elements (the counts). */
    assert_int_equal(each_dtype(dts, sizeof dts / sizeof dts[0], 8,
                                histogram_round),
                     0);
}

/* ---- sorting ------------------------------------------------------------ */

typedef enum sort_kind { SORT_PLAIN, SORT_INDICES, SORT_SEGMENTED } sort_kind;
static const char *const sort_names[] = {"sort", "sort_indices",
                                         "segmented_sort"};

/* The inputs of a sort: keys (floats: arbitrary values with repeats,
 * signed zeros and infinities), values of vs bytes, segment offsets. */
typedef struct sorts {
    parsum_dtype kd;
    size_t n, ks, vs, round, nseg;
    void *keys, *vals;
    uint64_t *off, *doff;
    arr K, V;
} sorts;

static void sorts_make(sorts *s, parsum_dtype kd, size_t vs, size_t n,
                       size_t round)
{
    tu_rng r = tu_rng_for(0x5027, kd * 32 + vs, n, round);
    s->kd = kd;
    s->n = n;
    s->ks = parsum_dtype_size(kd);
    s->vs = vs;
    s->round = round;
    s->keys = tu_malloc(n * s->ks);
    tu_fill(&r, kd, PARSUM_MIN, TU_DATA_EXACT, s->keys, n);
    s->vals = vs > 0 ? tmis_random_data(&r, tmis_raw_dtype(vs), n) : NULL;
    s->nseg = tseg_offsets(&r, TSEG_POWER, n, &s->off);
    s->doff = tu_dev_alloc((s->nseg + 1) * 8);
    tu_upload(s->doff, s->off, (s->nseg + 1) * 8);
    s->K = tmis_arr_in("keys_in", s->keys, n, kd,
                       tmis_shift_of(s->ks, round, 0));
    if (vs > 0)
        s->V = tmis_arr_in("values_in", s->vals, n, tmis_raw_dtype(vs),
                           tmis_shift_of(vs, round, 0));
}

static void sorts_free(sorts *s)
{
    tmis_arr_free(&s->K);
    if (s->vs > 0)
        tmis_arr_free(&s->V);
    tu_dev_free(s->doff);
    free(s->off);
    free(s->keys);
    free(s->vals);
}

static parsum_status sort_call(const sorts *s, sort_kind kind,
                               const parsum_sort_desc *desc, void *ko,
                               void *vo, uint64_t *perm)
{
    const void *V = s->vs > 0 ? s->V.s.out : NULL;
    switch (kind) {
    case SORT_PLAIN:
        return parsum_sort(tu_ctx, s->K.s.out, V, ko, vo, s->n, desc);
    case SORT_INDICES:
        return parsum_sort_indices(tu_ctx, s->K.s.out, ko, perm, s->n, desc);
    default:
        return parsum_segmented_sort(tu_ctx, s->K.s.out, V, ko, vo, s->n,
                                     s->doff, s->nseg, desc);
    }
}

static void check_sort(const sorts *s, sort_kind kind, size_t *failures)
{
    size_t vs = kind == SORT_INDICES ? 0 : s->vs, n = s->n;
    parsum_sort_desc desc = {.key_dtype = s->kd, .value_size = vs};
    void *wk = tu_malloc(n * s->ks), *wv = tu_malloc(n * (vs ? vs : 1));
    uint64_t *wp = tu_malloc(n * 8);
    bool seg = kind == SORT_SEGMENTED;
    assert_int_equal(parsum__ref_sort(s->keys, vs ? s->vals : NULL, wk,
                                      vs ? wv : NULL, wp, n, &desc,
                                      seg ? s->off : NULL, seg ? s->nseg : 0),
                     PARSUM_OK);
    arr ko = tmis_arr_out("keys_out", n, s->kd,
                          tmis_shift_of(s->ks, s->round, 1));
    arr vo = tmis_arr_out("values_out", vs ? n : 0,
                          tmis_raw_dtype(vs ? vs : 1),
                          tmis_shift_of(vs ? vs : 1, s->round, 1));
    arr po = tmis_arr_out("perm", kind == SORT_INDICES ? n : 0, PARSUM_U64,
                          tmis_shift_of(8, s->round, 1));
    char what[400];
    int len = snprintf(what, sizeof what, "%s %s %s keys at 64k+%zu",
                       sort_names[kind], parsum_backend_name(tu_backend),
                       parsum_dtype_name(s->kd), s->K.s.shift);
    if (vs > 0)
        len += snprintf(what + len, sizeof what - (size_t)len, ", %zu-byte "
                        "values at 64k+%zu", vs, s->V.s.shift);
    snprintf(what + len, sizeof what - (size_t)len, " n=%zu%s (seed 0x%llx)",
             n, seg ? " power-law segments" : "", (unsigned long long)tu_seed);
    if (tmis_call_ok(sort_call(s, kind, &desc, ko.s.out,
                               vs ? vo.s.out : NULL, tmis_u64p(&po)),
                     what, failures)) {
        tmis_check_out(&ko, wk, n, false, what, failures);
        if (vs > 0) {
            tmis_check_out(&vo, wv, n, false, what, failures);
            tmis_check_in(&s->V, what, failures);
        }
        if (kind == SORT_INDICES)
            tmis_check_out(&po, wp, n, false, what, failures);
        tmis_check_in(&s->K, what, failures);
    }
    tmis_arr_free(&ko);
    tmis_arr_free(&vo);
    tmis_arr_free(&po);
    free(wk);
    free(wv);
    free(wp);
}

/* A case of test_sort as its callback gets it: key dtype, value bytes
 * (0: none) and the test's count of failures. */
typedef struct sort_case {
    parsum_dtype kd;
    size_t vs;
    size_t *failures;
} sort_case;

static void sort_round(size_t n, size_t round, void *arg)
{
    const sort_case *c = arg;
    sorts s;
    sorts_make(&s, c->kd, c->vs, n, round);
    check_sort(&s, SORT_PLAIN, c->failures);
    check_sort(&s, SORT_INDICES, c->failures);
    check_sort(&s, SORT_SEGMENTED, c->failures);
    sorts_free(&s);
}

static void test_sort(void **state)
{
    (void)state;
    /* Key dtype and value bytes. */
    static const struct {
        parsum_dtype kd;
        size_t vs;
    } cases[] = {{PARSUM_U8, 0}, {PARSUM_I32, 8}, {PARSUM_F64, 1}};
    size_t failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t ks = parsum_dtype_size(cases[c].kd), vs = cases[c].vs;
        sort_case a = {cases[c].kd, vs, &failures};
        /* Without values, the keys alone set the sizes and rounds. */
        tmis_each_round(ks, vs > 0 ? vs : ks, sort_round, &a);
    }
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_reduce),
    cmocka_unit_test(test_segmented_reduce),
    cmocka_unit_test(test_by_key),
    /* In test_misaligned_select.c; named without the tmis_ prefix. */
    {"test_select_partition", tmis_test_select_partition, NULL, NULL, NULL},
    {"test_unique_rle", tmis_test_unique_rle, NULL, NULL, NULL},
    cmocka_unit_test(test_histogram),
    cmocka_unit_test(test_sort),
};

PARSUM_TEST_MAIN(test_misaligned)
{
    tu_init("test_misaligned");
    return tu_finish(TU_RUN("test_misaligned", tests));
}
