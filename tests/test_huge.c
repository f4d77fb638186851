/*
 * test_huge.c - one input longer than 2^31 elements: n = 2^31 + 1234567
 * bytes of I8, SUM (wrapping). parsum counts in size_t everywhere; an int
 * index or a 32-bit offset anywhere on the path (chunk count, chunk start,
 * a GPU tile index) breaks here and nowhere else.
 *
 * Checked: parsum_reduce of the whole array, an in-place inclusive scan and
 * an in-place reverse exclusive scan, against plain typed serial loops.
 * Memory: the one context buffer (2.15 GB, device memory on CUDA) plus two
 * 64 MiB host blocks: the input is regenerated block by block from the
 * PRNG when checking, instead of being kept.
 *
 * Registered in CTest with LABELS "huge" (run once per CI job, left out of
 * the sanitizer build with `ctest -LE huge`); exits 77 ("skipped") when the
 * buffer cannot be allocated.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HUGE_N (((size_t)1 << 31) + 1234567)
#define BLOCK ((size_t)64 << 20)

static unsigned char *huge_buf; /* context memory, HUGE_N bytes */

/* Block b of the input (bytes [b*BLOCK, b*BLOCK + len)). */
static void gen_block(size_t b, unsigned char *buf, size_t len)
{
    tu_rng r = tu_rng_for(0x4a9e, b, 0, 0);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = tu_next(&r);
        for (size_t k = 0; k < 8 && i + k < len; k++)
            buf[i + k] = (unsigned char)(v >> (8 * k));
    }
}

/* Uploads the input; returns its wrapping sum. */
static unsigned char upload_input(unsigned char *blk)
{
    unsigned acc = 0;
    for (size_t off = 0, b = 0; off < HUGE_N; off += BLOCK, b++) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_block(b, blk, len);
        for (size_t i = 0; i < len; i++)
            acc += blk[i];
        tu_upload(huge_buf + off, blk, len);
    }
    return (unsigned char)acc;
}

/* Checks the in-place result against the serial scan of the regenerated
 * input: forward inclusive (want = prefix) or reverse exclusive (want =
 * total - prefix). Returns the number of mismatching elements. */
static size_t check_result(unsigned reverse_exclusive, unsigned char total,
                           unsigned char *blk, unsigned char *got)
{
    unsigned char acc = 0;
    size_t bad = 0;
    for (size_t off = 0, b = 0; off < HUGE_N; off += BLOCK, b++) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_block(b, blk, len);
        tu_download(got, huge_buf + off, len);
        for (size_t i = 0; i < len; i++) {
            acc = (unsigned char)(acc + blk[i]);
            unsigned char want =
                reverse_exclusive ? (unsigned char)(total - acc) : acc;
            if (got[i] != want) {
                if (bad < TU_MAX_REPORTS)
                    print_error("  MISMATCH i8 sum %s n=%zu in-place: index "
                                "%zu: expected %d, got %d\n",
                                reverse_exclusive ? "excl|rev" : "incl",
                                HUGE_N, off + i, (int)(signed char)want,
                                (int)(signed char)got[i]);
                bad++;
            }
        }
    }
    return bad;
}

static void test_huge_i8_sum(void **state)
{
    (void)state;
    unsigned char *blk = tu_malloc(BLOCK), *got = tu_malloc(BLOCK);
    size_t failures = 0;

    unsigned char total = upload_input(blk);
    int8_t red = 0;
    TU_OK(parsum_reduce(tu_ctx, huge_buf, HUGE_N, PARSUM_I8, PARSUM_SUM, &red));
    if ((unsigned char)red != total)
        tu_report(&failures, "  reduce i8 sum n=%zu: expected %d, got %d\n",
                  HUGE_N, (int)(signed char)total, (int)red);

    TU_OK(parsum_scan(tu_ctx, huge_buf, huge_buf, HUGE_N, PARSUM_I8,
                      PARSUM_SUM, PARSUM_INCLUSIVE));
    if (check_result(0, total, blk, got) != 0)
        tu_report(&failures, "  inclusive scan wrong\n");

    (void)upload_input(blk);
    TU_OK(parsum_scan(tu_ctx, huge_buf, huge_buf, HUGE_N, PARSUM_I8,
                      PARSUM_SUM, PARSUM_EXCLUSIVE | PARSUM_REVERSE));
    if (check_result(1, total, blk, got) != 0)
        tu_report(&failures, "  reverse exclusive scan wrong\n");

    free(blk);
    free(got);
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_huge_i8_sum),
};

int main(void)
{
    tu_init("test_huge");
    void *p = NULL;
    if (parsum_alloc(tu_ctx, &p, HUGE_N) != PARSUM_OK || p == NULL) {
        printf("test_huge: SKIPPED: cannot allocate %zu bytes (%s)\n", HUGE_N,
               parsum_last_error(tu_ctx));
        return tu_finish(TU_SKIP_EXIT);
    }
    huge_buf = p;
    int rc = TU_RUN("test_huge", tests);
    parsum_free(tu_ctx, huge_buf);
    return tu_finish(rc);
}
