/*
 * test_segmented_convert.c - parsum_offsets_to_flags and
 * parsum_flags_to_offsets against the serial reference and against what
 * parsum.h says directly, for every segment length distribution of
 * test_seg_util.h (empty segments included) at n around multiples of 32
 * and 64, 1009 and 65537.
 *
 * offsets -> flags: exactly ceil(n / 32) words written (a poisoned guard
 * word after them must survive), bits past n cleared, bit 0 set even when
 * the first segments are empty; then back to offsets, which must be the
 * original ones without empty segments.
 * flags -> offsets: garbage in every bit outside the n flags and in
 * element 0's flag, bit offsets 0, 5 and 37; num_segments in host memory
 * and in the context's memory; offsets[k + 1] must stay poisoned; then
 * back to flags, whose bits must be the original flags of elements 1 ..
 * n-1 with bit 0 set.
 */
#include "test_seg_util.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t sizes_list(size_t *sizes)
{
    static const size_t list[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 1009,
                                  65537};
    size_t m = sizeof list / sizeof list[0];
    memcpy(sizes, list, sizeof list);
    return m;
}

/* Offsets without their empty segments: k + 1 values, returns k. */
static size_t drop_empty(const uint64_t *off, size_t nseg, size_t n,
                         uint64_t *out)
{
    size_t k = 0;
    out[0] = 0;
    if (n == 0)
        return 0;
    for (size_t s = 1; s <= nseg; s++)
        if (off[s] != out[k])
            out[++k] = off[s];
    return k;
}

/* parsum_offsets_to_flags into a poisoned buffer with one guard word;
 * returns a host copy of the words (words + 1), or NULL on failure. */
static uint32_t *to_flags(const uint64_t *off, size_t nseg, size_t n,
                          const char *what, size_t *failures)
{
    size_t words = n / 32 + (n % 32 != 0);
    void *doff = tu_dev_alloc((nseg + 1) * sizeof *off);
    uint32_t *dfl = tu_dev_alloc((words + 1) * 4);
    tu_upload(doff, off, (nseg + 1) * sizeof *off);
    tu_dev_poison(dfl, (words + 1) * 4);
    parsum_status st = parsum_offsets_to_flags(tu_ctx, doff, nseg, n, dfl);
    uint32_t *got = NULL;
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: offsets_to_flags returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    } else {
        got = tseg_download_copy(dfl, (words + 1) * 4);
        uint32_t poison;
        memset(&poison, TU_POISON, 4);
        if (got[words] != poison)
            tu_report(failures, "  %s: offsets_to_flags wrote past word "
                      "ceil(n / 32) - 1\n", what);
    }
    tu_dev_free(doff);
    tu_dev_free(dfl);
    return got;
}

/* parsum_flags_to_offsets (num_segments in host memory, or in context
 * memory with dev_count); returns a host copy of n + 2 offsets and the
 * count in *k, or NULL on failure. */
static uint64_t *to_offsets(const uint32_t *flags, size_t nwords,
                            size_t bit_offset, size_t n, bool dev_count,
                            size_t *k, const char *what, size_t *failures)
{
    tseg_desc desc;
    tseg_desc_flags(&desc, flags, nwords, bit_offset);
    uint64_t *doff = tu_dev_alloc((n + 2) * 8);
    size_t *dk = dev_count ? tu_dev_alloc(sizeof *dk) : NULL, hk;
    tu_dev_poison(doff, (n + 2) * 8);
    memset(&hk, TU_POISON, sizeof hk);
    if (dk != NULL)
        tu_dev_poison(dk, sizeof *dk);
    parsum_status st = parsum_flags_to_offsets(tu_ctx, &desc.dev, n, doff,
                                               dk != NULL ? dk : &hk);
    uint64_t *got = NULL;
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: flags_to_offsets returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    } else {
        got = tseg_download_copy(doff, (n + 2) * 8);
        if (dk != NULL)
            tu_download(&hk, dk, sizeof hk);
        *k = hk;
    }
    tseg_desc_free(&desc);
    tu_dev_free(doff);
    tu_dev_free(dk);
    return got;
}

static void offsets_to_flags_case(size_t n, int dist, size_t *failures)
{
    tu_rng r = tu_rng_for(n, (uint64_t)dist, 0xF1A6, 0);
    uint64_t *off;
    size_t nseg = tseg_offsets(&r, (tseg_dist)dist, n, &off);
    size_t words = n / 32 + (n % 32 != 0);
    uint32_t *want = tu_malloc((words + 1) * 4);
    parsum__ref_offsets_to_flags(off, nseg, n, want);
    char what[160];
    snprintf(what, sizeof what, "%s n=%zu %s segments (%zu) (seed 0x%llx)",
             parsum_backend_name(tu_backend), n,
             tseg_dist_name((tseg_dist)dist), nseg,
             (unsigned long long)tu_seed);
    uint32_t *got = to_flags(off, nseg, n, what, failures);
    if (got != NULL) {
        if (memcmp(want, got, words * 4) != 0)
            tu_report(failures, "  %s: offsets_to_flags differs from the "
                      "reference\n", what);
        /* parsum.h directly: bit 0 set, nothing past n. */
        if (n > 0 && ((got[0] & 1u) == 0 ||
                      (n % 32 != 0 && (got[words - 1] >> (n % 32)) != 0)))
            tu_report(failures, "  %s: bit 0 clear or bits past n set\n",
                      what);
        uint64_t *want_off = tu_malloc((nseg + 2) * 8);
        size_t wk = drop_empty(off, nseg, n, want_off), k = 0;
        uint64_t *back = to_offsets(got, words, 0, n, false, &k, what,
                                    failures);
        if (back != NULL &&
            (k != wk || memcmp(back, want_off, (wk + 1) * 8) != 0))
            tu_report(failures, "  %s: offsets -> flags -> offsets gives %zu "
                      "segments, not the %zu non-empty ones\n", what, k, wk);
        free(back);
        free(want_off);
        free(got);
    }
    free(want);
    free(off);
}

static void test_offsets_to_flags(void **state)
{
    (void)state;
    size_t sizes[16], failures = 0;
    size_t m = sizes_list(sizes);
    for (size_t k = 0; k < m; k++)
        for (int dist = 0; dist < TSEG_DIST_COUNT; dist++)
            if (failures < TSEG_MAX_FAILURES)
                offsets_to_flags_case(sizes[k], dist, &failures);
    assert_int_equal(failures, 0);
}

/* Compares flags_to_offsets' result with the reference and the guard. */
static void check_offsets(const uint64_t *want, size_t wk, const uint64_t *got,
                          size_t k, const char *what, size_t *failures)
{
    uint64_t poison;
    memset(&poison, TU_POISON, 8);
    if (k != wk)
        tu_report(failures, "  %s: num_segments = %zu, expected %zu\n", what,
                  k, wk);
    else if (memcmp(want, got, (wk + 1) * 8) != 0)
        tu_report(failures, "  %s: offsets differ from the reference\n",
                  what);
    else if (got[wk + 1] != poison)
        tu_report(failures, "  %s: wrote past offsets[num_segments]\n", what);
}

static void flags_to_offsets_case(size_t n, int dist, size_t bit_offset,
                                  size_t *failures)
{
    tu_rng r = tu_rng_for(n, (uint64_t)dist, bit_offset, 0x0FF5);
    uint64_t *off;
    size_t nseg = tseg_offsets(&r, (tseg_dist)dist, n, &off), nwords;
    uint32_t *fl = tseg_flags(&r, off, nseg, n, bit_offset, &nwords);
    parsum_segments hseg = {PARSUM_SEG_FLAGS, fl, bit_offset, NULL, 0};
    uint64_t *want = tu_malloc((n + 2) * 8);
    size_t wk = parsum__ref_flags_to_offsets(&hseg, n, want), k = 0;
    char what[160];
    bool ok = true;
    for (int dev_count = 0; dev_count < 2 && ok; dev_count++) {
        snprintf(what, sizeof what, "%s n=%zu %s segments flags@%zu "
                 "num_segments in %s memory (seed 0x%llx)",
                 parsum_backend_name(tu_backend), n,
                 tseg_dist_name((tseg_dist)dist), bit_offset,
                 dev_count ? "context" : "host", (unsigned long long)tu_seed);
        uint64_t *got = to_offsets(fl, nwords, bit_offset, n, dev_count != 0,
                                   &k, what, failures);
        ok = got != NULL;
        if (ok)
            check_offsets(want, wk, got, k, what, failures);
        free(got);
    }
    /* Back to flags: element i > 0 flagged exactly when fl says so. */
    uint32_t *back = ok ? to_flags(want, wk, n, what, failures) : NULL;
    for (size_t i = 0; back != NULL && i < n; i++) {
        bool flag = parsum__ref_flag(back, 0, i);
        if (flag != (i == 0 || parsum__ref_flag(fl, bit_offset, i))) {
            tu_report(failures, "  %s: flags -> offsets -> flags differs at "
                      "element %zu\n", what, i);
            break;
        }
    }
    free(back);
    free(want);
    free(fl);
    free(off);
}

static void test_flags_to_offsets(void **state)
{
    (void)state;
    static const size_t bit_offsets[] = {0, 5, 37};
    size_t sizes[16], failures = 0;
    size_t m = sizes_list(sizes);
    for (size_t k = 0; k < m; k++)
        for (int dist = 0; dist < TSEG_DIST_COUNT; dist++)
            for (int b = 0; b < 3 && failures < TSEG_MAX_FAILURES; b++)
                flags_to_offsets_case(sizes[k], dist, bit_offsets[b],
                                      &failures);
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_offsets_to_flags),
    cmocka_unit_test(test_flags_to_offsets),
};

PARSUM_TEST_MAIN(test_segmented_convert)
{
    tu_init("test_segmented_convert");
    return tu_finish(TU_RUN("test_segmented_convert", tests));
}
