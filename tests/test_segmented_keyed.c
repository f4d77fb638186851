/*
 * test_segmented_keyed.c - parsum_scan_by_key and parsum_reduce_by_key
 * against the serial reference (src/ref), for every value dtype x
 * operator and every key dtype (I8 .. U64), with four kinds of keys:
 *   runs      random keys in runs of 1..8
 *   hibit     long runs (Pareto lengths) whose keys differ from the run
 *             before only in the key type's top bit or only in bit 0, so
 *             a comparison on fewer bits, or on a converted value, fails
 *   distinct  every key differs from the one before (no two in a run)
 *   equal     one run of n
 * Scan: the four flag combinations, out of place (output poisoned, values
 * checked unchanged) and in place. Reduce: keys_out and values_out
 * poisoned, num_runs in host memory and in the context's memory, n == 0.
 * Sizes 0 1 33 1009 for every key dtype; a CPU chunk + 1 and 65537 for
 * one key dtype per case. Also float SUM with rounding data: the same bits
 * for 1, 2 and 7 threads (and, on CUDA, under every grid cap); reduce by
 * key over hundreds of tiles.
 */
#include "test_seg_util.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct val_case {
    parsum_dtype dtype;
    parsum_op op;
} val_case;

typedef enum key_kind { KEYS_RUNS, KEYS_HIBIT, KEYS_DISTINCT, KEYS_EQUAL } key_kind;
#define KEY_KINDS 4
static const char *const key_kind_names[KEY_KINDS] = {"runs", "hibit",
                                                      "distinct", "equal"};

static const unsigned all_flags[4] = {
    PARSUM_INCLUSIVE, PARSUM_EXCLUSIVE, PARSUM_REVERSE,
    PARSUM_EXCLUSIVE | PARSUM_REVERSE};

static void store_key(size_t ks, void *buf, size_t i, uint64_t v)
{
    switch (ks) {
    case 1: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case 2: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    default: ((uint64_t *)buf)[i] = v; break;
    }
}

static void fill_keys(tu_rng *r, parsum_dtype kd, key_kind kind, void *keys,
                      size_t n)
{
    size_t ks = parsum_dtype_size(kd);
    uint64_t top = (uint64_t)1 << (8 * ks - 1), v = tu_next(r);
    size_t left = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        if (kind == KEYS_DISTINCT) {
            v = i * 0x9E3779B97F4A7C15ULL; /* odd multiplier: i differ */
        } else if (kind != KEYS_EQUAL && left == 0) {
            if (kind == KEYS_RUNS) {
                left = 1 + (size_t)tu_below(r, 8);
                v = tu_next(r);
            } else {
                double u = 1.0 - tu_uniform(r), l = 1.0 / (u * u);
                left = l >= (double)n ? n : (size_t)l;
                v ^= run++ % 2 ? top : 1;
            }
        }
        left -= left > 0;
        store_key(ks, keys, i, v);
    }
}

/* One input: keys of kd, values of the case. */
typedef struct input {
    parsum_dtype kd, d;
    parsum_op op;
    size_t n, ks, es;
    unsigned char *keys, *vals;
    void *dkeys, *dvals;
    char tag[160];
} input;

static void input_make(input *in, const val_case *c, parsum_dtype kd,
                       key_kind kind, size_t n)
{
    in->kd = kd;
    in->d = c->dtype;
    in->op = c->op;
    in->n = n;
    in->ks = parsum_dtype_size(kd);
    in->es = parsum_dtype_size(c->dtype);
    tu_rng r = tu_rng_for(kd * 16 + (unsigned)kind, c->dtype, c->op, n);
    in->keys = tu_malloc(n * in->ks);
    in->vals = tu_malloc(n * in->es);
    fill_keys(&r, kd, kind, in->keys, n);
    tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in->vals, n);
    in->dkeys = tu_dev_alloc(n * in->ks);
    in->dvals = tu_dev_alloc(n * in->es);
    tu_upload(in->dkeys, in->keys, n * in->ks);
    tu_upload(in->dvals, in->vals, n * in->es);
    snprintf(in->tag, sizeof in->tag, "%s %s %s n=%zu %s %s keys (seed "
             "0x%llx)", parsum_backend_name(tu_backend),
             parsum_dtype_name(c->dtype), parsum_op_name(c->op), n,
             parsum_dtype_name(kd), key_kind_names[kind],
             (unsigned long long)tu_seed);
}

static void input_free(input *in)
{
    free(in->keys);
    free(in->vals);
    tu_dev_free(in->dkeys);
    tu_dev_free(in->dvals);
}

static void check_scan_by_key(const input *in, size_t *failures)
{
    size_t bytes = in->n * in->es;
    unsigned char *want = tu_malloc(bytes), *got = tu_malloc(bytes);
    void *dout = tu_dev_alloc(bytes);
    char what[256];
    bool ok = true;
    for (int f = 0; f < 4 && ok; f++) {
        parsum__ref_scan_by_key(in->keys, in->kd, in->vals, want, in->n,
                                in->d, in->op, all_flags[f]);
        for (int inplace = 0; inplace < 2 && ok; inplace++) {
            snprintf(what, sizeof what, "scan_by_key %s %s %s", in->tag,
                     tu_flags_name(all_flags[f]),
                     inplace ? "in-place" : "out-of-place");
            if (inplace)
                tu_upload(dout, in->vals, bytes);
            else
                tu_dev_poison(dout, bytes);
            parsum_status st = parsum_scan_by_key(
                tu_ctx, in->dkeys, in->kd, inplace ? dout : in->dvals, dout,
                in->n, in->d, in->op, all_flags[f]);
            ok = st == PARSUM_OK;
            if (!ok) {
                tu_report(failures, "  %s: returned %s: %s\n", what,
                          parsum_status_name(st), parsum_last_error(tu_ctx));
                break;
            }
            tu_download(got, dout, bytes);
            if (tu_compare_op(in->d, in->op, want, got, in->n, what) != 0)
                (*failures)++;
        }
    }
    tu_download(got, in->dvals, bytes);
    if (ok && memcmp(got, in->vals, bytes) != 0)
        tu_report(failures, "  scan_by_key %s: out-of-place scans modified "
                  "the values\n", in->tag);
    tu_dev_free(dout);
    free(want);
    free(got);
}

/* reduce_by_key into poisoned outputs; num_runs in context memory when
 * dev_count. */
static void check_reduce_by_key(const input *in, bool dev_count,
                                size_t *failures)
{
    size_t n = in->n, kb = n * in->ks, vb = n * in->es;
    unsigned char *wk = tu_malloc(kb), *wv = tu_malloc(vb);
    size_t runs = parsum__ref_reduce_by_key(in->keys, in->kd, in->vals, n,
                                            in->d, in->op, wk, wv);
    void *dko = tu_dev_alloc(kb), *dvo = tu_dev_alloc(vb);
    size_t *dn = dev_count ? tu_dev_alloc(sizeof *dn) : NULL, got_runs;
    tu_dev_poison(dko, kb);
    tu_dev_poison(dvo, vb);
    memset(&got_runs, TU_POISON, sizeof got_runs);
    if (dn != NULL)
        tu_dev_poison(dn, sizeof *dn);
    char what[256];
    snprintf(what, sizeof what, "reduce_by_key %s num_runs in %s memory",
             in->tag, dev_count ? "context" : "host");
    parsum_status st = parsum_reduce_by_key(
        tu_ctx, in->dkeys, in->kd, in->dvals, n, in->d, in->op, dko, dvo,
        dn != NULL ? dn : &got_runs);
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    } else {
        if (dn != NULL)
            tu_download(&got_runs, dn, sizeof got_runs);
        if (got_runs != runs) {
            tu_report(failures, "  %s: num_runs = %zu, expected %zu\n", what,
                      got_runs, runs);
        } else {
            unsigned char *gk = tseg_download_copy(dko, kb),
                          *gv = tseg_download_copy(dvo, vb);
            if (tseg_compare_bytes(wk, gk, runs, in->ks, what) != 0 ||
                tu_compare_op(in->d, in->op, wv, gv, runs, what) != 0)
                (*failures)++;
            free(gk);
            free(gv);
        }
    }
    tu_dev_free(dko);
    tu_dev_free(dvo);
    tu_dev_free(dn);
    free(wk);
    free(wv);
}

static void test_keyed_case(void **state)
{
    const val_case *c = *state;
    size_t ch = tu_chunk(parsum_dtype_size(c->dtype)), failures = 0;
    /* The big sizes for one key dtype each, which rotates with the case. */
    int rot = (int)c->dtype * PARSUM_OP_COUNT + (int)c->op;
    for (int kd = PARSUM_I8; kd <= PARSUM_U64; kd++) {
        size_t sizes[6] = {0, 1, 33, 1009, 0, 0}, m = 4;
        if (kd == rot % 8)
            sizes[m++] = ch + 1;
        if (kd == (rot + 3) % 8)
            sizes[m++] = 65537;
        for (size_t k = 0; k < m; k++) {
            for (int kind = 0; kind < KEY_KINDS; kind++) {
                if (failures >= TSEG_MAX_FAILURES)
                    break;
                input in;
                input_make(&in, c, (parsum_dtype)kd, (key_kind)kind,
                           sizes[k]);
                check_scan_by_key(&in, &failures);
                check_reduce_by_key(&in, kind == KEYS_RUNS && k == 2,
                                    &failures);
                input_free(&in);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* Keys of one kind and float values with rounding data, on the host and
 * in the context's memory, with room for reduce_by_key's outputs. */
typedef struct round_keyed {
    size_t n, ks, es;
    unsigned char *keys, *vals;
    void *dk, *dv, *dko, *dvo;
} round_keyed;

static void round_keyed_init(round_keyed *b, tu_rng *r, parsum_dtype d,
                             parsum_dtype kd, key_kind kind, size_t n)
{
    b->n = n;
    b->ks = parsum_dtype_size(kd);
    b->es = parsum_dtype_size(d);
    b->keys = tu_malloc(n * b->ks);
    b->vals = tu_malloc(n * b->es);
    fill_keys(r, kd, kind, b->keys, n);
    tu_fill(r, d, PARSUM_SUM, TU_DATA_ROUNDING, b->vals, n);
    b->dk = tu_dev_alloc(n * b->ks);
    b->dv = tu_dev_alloc(n * b->es);
    b->dko = tu_dev_alloc(n * b->ks);
    b->dvo = tu_dev_alloc(n * b->es);
    tu_upload(b->dk, b->keys, n * b->ks);
    tu_upload(b->dv, b->vals, n * b->es);
}

static void round_keyed_free(round_keyed *b)
{
    tu_dev_free(b->dk);
    tu_dev_free(b->dv);
    tu_dev_free(b->dko);
    tu_dev_free(b->dvo);
    free(b->keys);
    free(b->vals);
}

/* Float SUM with rounding data: scan_by_key and reduce_by_key give the
 * same bits for 1, 2, 7 and 9 threads (41 chunks: the CPU gives a thread
 * at least 4; from 8 threads reduce_by_key claims its chunks as it starts
 * them, below a chunk ahead). */
static void test_keyed_determinism(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 7, 9};
    enum { NT = sizeof threads / sizeof threads[0] };
    size_t failures = 0;
    for (int di = 0; di < 2; di++) {
        parsum_dtype d = di ? PARSUM_F64 : PARSUM_F32;
        size_t es = parsum_dtype_size(d), n = 41 * tu_chunk(es) + 11;
        tu_rng r = tu_rng_for(d, n, 0xde7, 3);
        round_keyed b;
        round_keyed_init(&b, &r, d, PARSUM_U32, KEYS_HIBIT, n);
        void *dk = b.dk, *dv = b.dv, *dko = b.dko, *dvo = b.dvo;
        unsigned char *res[NT];
        for (int t = 0; t < NT; t++) {
            res[t] = tu_malloc(5 * n * es);
            memset(res[t], 0, 5 * n * es);
            TU_OK(parsum_context_set_threads(tu_ctx, threads[t]));
            for (unsigned f = 0; f < 4; f++) {
                tu_dev_poison(dvo, n * es);
                TU_OK(parsum_scan_by_key(tu_ctx, dk, PARSUM_U32, dv, dvo, n,
                                         d, PARSUM_SUM, f));
                tu_download(res[t] + f * n * es, dvo, n * es);
            }
            size_t runs = 0;
            TU_OK(parsum_reduce_by_key(tu_ctx, dk, PARSUM_U32, dv, n, d,
                                       PARSUM_SUM, dko, dvo, &runs));
            tu_download(res[t] + 4 * n * es, dvo, (runs < n ? runs : n) * es);
            if (t > 0 && memcmp(res[t], res[0], 5 * n * es) != 0)
                tu_report(&failures, "  by_key %s sum n=%zu: %d threads "
                          "differ from 1\n", parsum_dtype_name(d), n,
                          threads[t]);
        }
        TU_OK(parsum_context_set_threads(tu_ctx, 0));
        for (int t = 0; t < NT; t++)
            free(res[t]);
        round_keyed_free(&b);
    }
    assert_int_equal(failures, 0);
}

/* Runs check_reduce_by_key on in with the keys and values at an
 * element offset of 1 in fresh device buffers: aligned to their types but
 * not to 16 bytes (the CUDA one-pass kernel then loads element by
 * element). */
static void check_reduce_by_key_offset(input *in, size_t *failures)
{
    unsigned char *dk = tu_dev_alloc((in->n + 1) * in->ks),
                  *dv = tu_dev_alloc((in->n + 1) * in->es);
    tu_upload(dk + in->ks, in->keys, in->n * in->ks);
    tu_upload(dv + in->es, in->vals, in->n * in->es);
    void *keys = in->dkeys, *vals = in->dvals;
    in->dkeys = dk + in->ks;
    in->dvals = dv + in->es;
    size_t len = strlen(in->tag);
    snprintf(in->tag + len, sizeof in->tag - len, ", offset 1");
    check_reduce_by_key(in, false, failures);
    in->tag[len] = '\0';
    in->dkeys = keys;
    in->dvals = vals;
    tu_dev_free(dk);
    tu_dev_free(dv);
}

/* Reduce by key over about 3 million elements, every kind of keys: on
 * CUDA the one-pass kernel (4- and 8-byte values and keys, float SUM
 * with its split look-back; I32 PROD with U16 keys takes the general
 * path) with hundreds of tiles, under grid
 * caps of none, 1 and 3 blocks (each block then runs many tiles, and
 * runs cross tiles and blocks), with keys and values not 16-byte
 * aligned, and at sizes one past a tile and of whole tiles. Not quick:
 * too slow for the CPU under the sanitizers. */
static void test_reduce_by_key_tiles(void **state)
{
    (void)state;
    static const struct {
        val_case v;
        parsum_dtype kd;
    } cases[] = {
        {{PARSUM_I32, PARSUM_SUM}, PARSUM_U32},
        {{PARSUM_F32, PARSUM_MAX}, PARSUM_I64},
        {{PARSUM_U32, PARSUM_XOR}, PARSUM_U64},
        {{PARSUM_I64, PARSUM_MIN}, PARSUM_I32},
        {{PARSUM_U64, PARSUM_SUM}, PARSUM_U64},
        {{PARSUM_F64, PARSUM_MAX}, PARSUM_U32},
        {{PARSUM_I32, PARSUM_PROD}, PARSUM_U16},
        {{PARSUM_F32, PARSUM_SUM}, PARSUM_U32},
        {{PARSUM_F64, PARSUM_SUM}, PARSUM_I64},
    };
    if (tu_quick)
        skip();
    const size_t n = 3000017;
    const bool gpu = tu_backend == PARSUM_BACKEND_CUDA;
    /* The CPU's path does not depend on the dtypes: two cases. */
    const size_t ncases = gpu ? sizeof cases / sizeof cases[0] : 2;
    const int ncaps = gpu ? TSEG_GRID_CAPS : 1;
    size_t failures = 0;
    for (size_t k = 0; k < ncases; k++) {
        for (int kind = 0; kind < KEY_KINDS; kind++) {
            if (failures >= TSEG_MAX_FAILURES)
                break;
            input in;
            input_make(&in, &cases[k].v, cases[k].kd, (key_kind)kind, n);
            size_t len = strlen(in.tag);
            for (int g = 0; g < ncaps; g++) {
                parsum_context *mine =
                    tu_cuda_context_capped(tseg_grid_caps[g]);
                parsum_context *saved = tu_ctx;
                if (mine != NULL)
                    tu_ctx = mine;
                snprintf(in.tag + len, sizeof in.tag - len,
                         ", grid cap '%s'", tseg_grid_caps[g]);
                check_reduce_by_key(&in, g == 1, &failures);
                if (g == 0 && kind == KEYS_RUNS)
                    check_reduce_by_key_offset(&in, &failures);
                tu_ctx = saved;
                parsum_context_destroy(mine);
            }
            input_free(&in);
            /* The one-pass kernel's edges: a last tile of one element
             * (tiles of 6144 elements for 4-byte values, 3072 for 8-byte
             * ones), and whole tiles only. */
            static const size_t edge_sizes[] = {6145, 3073, 307200};
            for (size_t e = 0; e < 3; e++) {
                input_make(&in, &cases[k].v, cases[k].kd, (key_kind)kind,
                           edge_sizes[e]);
                check_reduce_by_key(&in, false, &failures);
                input_free(&in);
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* CUDA: float SUM reduce by key with rounding data gives the same bits
 * under every grid cap (a different grid moves every tile's look-back,
 * which must never move a result bit). */
static void test_reduce_by_key_grids(void **state)
{
    (void)state;
    if (tu_backend != PARSUM_BACKEND_CUDA || tu_quick)
        skip();
    const size_t n = 3000017;
    size_t failures = 0;
    for (int di = 0; di < 4; di++) {
        parsum_dtype d = di % 2 ? PARSUM_F64 : PARSUM_F32;
        key_kind kind = di < 2 ? KEYS_HIBIT : KEYS_EQUAL;
        size_t es = parsum_dtype_size(d);
        tu_rng r = tu_rng_for(d, n, 0x9b7, (unsigned)kind);
        round_keyed b;
        round_keyed_init(&b, &r, d, PARSUM_U64, kind, n);
        unsigned char *first = NULL;
        size_t first_runs = 0;
        for (int g = 0; g < TSEG_GRID_CAPS; g++) {
            parsum_context *mine = tu_cuda_context_capped(tseg_grid_caps[g]);
            parsum_context *saved = tu_ctx;
            if (mine != NULL)
                tu_ctx = mine;
            size_t runs = 0;
            tu_dev_poison(b.dvo, n * es);
            TU_OK(parsum_reduce_by_key(tu_ctx, b.dk, PARSUM_U64, b.dv, n, d,
                                       PARSUM_SUM, b.dko, b.dvo, &runs));
            tu_ctx = saved;
            parsum_context_destroy(mine);
            unsigned char *res = tseg_download_copy(b.dvo, runs * es);
            if (first == NULL) {
                first = res;
                first_runs = runs;
                continue;
            }
            if (runs != first_runs || memcmp(res, first, runs * es) != 0)
                tu_report(&failures, "  reduce_by_key %s sum n=%zu %s "
                          "keys: grid cap '%s' differs from none\n",
                          parsum_dtype_name(d), n, key_kind_names[kind],
                          tseg_grid_caps[g]);
            free(res);
        }
        free(first);
        round_keyed_free(&b);
    }
    assert_int_equal(failures, 0);
}

#define KC(D, O)                                                             \
    {"by_key_" #D "_" #O, test_keyed_case, NULL, NULL,                       \
     &(val_case){PARSUM_##D, PARSUM_##O}}
#define INT_CASES(D)                                                         \
    KC(D, SUM), KC(D, PROD), KC(D, MIN), KC(D, MAX), KC(D, AND), KC(D, OR),  \
        KC(D, XOR)
#define FLOAT_CASES(D) KC(D, SUM), KC(D, PROD), KC(D, MIN), KC(D, MAX)

static const struct CMUnitTest tests[] = {
    INT_CASES(I8),   INT_CASES(U8),   INT_CASES(I16),  INT_CASES(U16),
    INT_CASES(I32),  INT_CASES(U32),  INT_CASES(I64),  INT_CASES(U64),
    FLOAT_CASES(F32), FLOAT_CASES(F64),
    cmocka_unit_test(test_keyed_determinism),
    cmocka_unit_test(test_reduce_by_key_tiles),
    cmocka_unit_test(test_reduce_by_key_grids),
};

PARSUM_TEST_MAIN(test_segmented_keyed)
{
    tu_init("test_segmented_keyed");
    return tu_finish(TU_RUN("test_segmented_keyed", tests));
}
