/*
 * test_partition.c - parsum_partition3 and parsum_split_by_bit against the
 * serial reference (src/ref/ref_select.c): partition3 with flags, built-in
 * and custom predicates as either selector or both (counts in context
 * memory too), split_by_bit on every dtype at the low, a middle and the
 * top bit, with and without values (tags: stability checked on its own).
 * The two-way partitions are in test_select.c.
 */
#include "test_select_util.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* i32 keys, for partition3. */
static int negative(const void *x, void *user)
{
    (void)user;
    int32_t v;
    memcpy(&v, x, 4);
    return v < 0;
}
static const parsum_custom_pred negative_pred = {negative, NULL, "", "int",
                                                 "return x < 0;"};
static int mult3(const void *x, void *user)
{
    (void)user;
    int32_t v;
    memcpy(&v, x, 4);
    return v % 3 == 0;
}
static const parsum_custom_pred mult3_pred = {mult3, NULL, "", "int",
                                              "return x % 3 == 0;"};

/* ---- partition3 --------------------------------------------------------- */

static void check_partition3(const data *d, const selc *s1, const selc *s2,
                             size_t *failures)
{
    size_t n = d->n, ks = d->ks, want[2], got[2];
    unsigned char *w = tu_malloc(n * ks), *g = tu_malloc(n * ks);
    parsum__ref_buffers b = {d->keys, ks, NULL, 0, n, w, NULL, NULL};
    parsum__ref_partition3(&s1->host, &s2->host, &b, want);
    void *dout = tu_dev_alloc(n * ks), *dc = tu_dev_alloc(sizeof got);
    tu_dev_poison(dout, n * ks);
    tu_dev_poison(dc, sizeof got);
    char what[512];
    snprintf(what, sizeof what, "partition3 %s first=%s second=%s", d->tag,
             s1->name, s2->name);
    parsum_status st = parsum_partition3(tu_ctx, d->dkeys, dout, n, ks,
                                         &s1->dev, &s2->dev, dc);
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    } else {
        tu_download(got, dc, sizeof got);
        tu_download(g, dout, n * ks);
        if (got[0] != want[0] || got[1] != want[1])
            tu_report(failures, "  %s: counts %zu %zu, expected %zu %zu\n",
                      what, got[0], got[1], want[0], want[1]);
        else if (tseg_compare_bytes(w, g, n, ks, what) != 0)
            (*failures)++;
    }
    tu_dev_free(dout);
    tu_dev_free(dc);
    free(w);
    free(g);
}

static void test_partition3(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 100, 4097, 65537, 300007};
    size_t failures = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        tu_rng r = tu_rng_for(0x9a73, n, 0, 0);
        data d;
        tsel_data_random(&d, &r, n, 4, 0);
        snprintf(d.tag, sizeof d.tag, "%s n=%zu i32 (seed 0x%llx)",
                 parsum_backend_name(tu_backend), n,
                 (unsigned long long)tu_seed);
        unsigned char *f1 = tsel_make_flags(&r, n, 30, false);
        unsigned char *f2 = tsel_make_flags(&r, n, 50, true);
        selc sb, sbits, slt, sge, sneg, s3;
        tsel_selc_bytes(&sb, &r, f1, n);
        tsel_selc_bits(&sbits, &r, f2, n, 5);
        parsum_scalar z = {.i32 = 0}, one = {.i32 = 1 << 30};
        tsel_selc_pred(&slt, PARSUM_I32, PARSUM_PRED_LT, z, z);
        tsel_selc_pred(&sge, PARSUM_I32, PARSUM_PRED_GE, one, z);
        tsel_selc_custom(&sneg, &negative_pred, "x < 0");
        tsel_selc_custom(&s3, &mult3_pred, "x % 3 == 0");
        check_partition3(&d, &sb, &sbits, &failures);
        check_partition3(&d, &slt, &sge, &failures);
        check_partition3(&d, &sbits, &slt, &failures);
        check_partition3(&d, &sge, &sge, &failures); /* second takes none */
        /* custom predicates as either selector, or both */
        check_partition3(&d, &sneg, &sb, &failures);
        check_partition3(&d, &sbits, &s3, &failures);
        check_partition3(&d, &s3, &sneg, &failures);
        check_partition3(&d, &s3, &s3, &failures);
        tsel_selc_free(&sb);
        tsel_selc_free(&sbits);
        free(f1);
        free(f2);
        tsel_data_free(&d);
    }
    assert_int_equal(failures, 0);
}

/* ---- split by bit -------------------------------------------------------- */

static void check_split(const data *d, parsum_dtype dt, unsigned bit,
                        bool values, size_t *failures)
{
    size_t n = d->n, ks = d->ks, vs = values ? d->vs : 0, got = 0;
    unsigned char *wk = tu_malloc(n * ks), *wv = tu_malloc(n * vs);
    unsigned char *gk = tu_malloc(n * ks), *gv = tu_malloc(n * vs);
    selc s;
    parsum_scalar a = {.u32 = bit}, b = {.u32 = 0};
    tsel_selc_pred(&s, dt, PARSUM_PRED_BIT_CLEAR, a, b);
    parsum__ref_buffers rb = {d->keys, ks, d->vals, vs, n, wk,
                              values ? wv : NULL, NULL};
    size_t want = parsum__ref_partition(&s.host, &rb);
    void *dk = tu_dev_alloc(n * ks), *dv = tu_dev_alloc(n * vs + 1);
    tu_dev_poison(dk, n * ks);
    char what[300];
    snprintf(what, sizeof what, "split_by_bit %s %s bit %u%s", d->tag,
             parsum_dtype_name(dt), bit, values ? " with values" : "");
    parsum_status st = parsum_split_by_bit(
        tu_ctx, d->dkeys, values ? d->dvals : NULL, dk, values ? dv : NULL, n,
        dt, vs, bit, &got);
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    } else if (got != want) {
        tu_report(failures, "  %s: num_zeros %zu, expected %zu\n", what, got,
                  want);
    } else {
        tu_download(gk, dk, n * ks);
        tu_download(gv, dv, n * vs);
        if (tseg_compare_bytes(wk, gk, n, ks, what) != 0 ||
            (values && tseg_compare_bytes(wv, gv, n, vs, what) != 0) ||
            (values && tsel_check_tags(d, gk, (const uint64_t *)(void *)gv, want,
                                  n, false, what) != 0))
            (*failures)++;
    }
    tu_dev_free(dk);
    tu_dev_free(dv);
    free(wk);
    free(wv);
    free(gk);
    free(gv);
}

static void test_split_by_bit(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 1000, 65537};
    size_t failures = 0;
    for (int dt = 0; dt < PARSUM_DTYPE_COUNT; dt++) {
        size_t ks = parsum_dtype_size((parsum_dtype)dt);
        unsigned bits[3] = {0, (unsigned)(4 * ks - 1), (unsigned)(8 * ks - 1)};
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            tu_rng r = tu_rng_for(0x5b17, (uint64_t)dt, n, 0);
            data d;
            tsel_data_random(&d, &r, n, ks, 8);
            snprintf(d.tag, sizeof d.tag, "%s n=%zu (seed 0x%llx)",
                     parsum_backend_name(tu_backend), n,
                     (unsigned long long)tu_seed);
            for (int bi = 0; bi < 3; bi++)
                for (int v = 0; v < 2; v++)
                    check_split(&d, (parsum_dtype)dt, bits[bi], v != 0,
                                &failures);
            tsel_data_free(&d);
        }
    }
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_partition3),
    cmocka_unit_test(test_split_by_bit),
};

PARSUM_TEST_MAIN(test_partition)
{
    tu_init("test_partition");
    return tu_finish(TU_RUN("test_partition", tests));
}
