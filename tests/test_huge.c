/*
 * test_huge.c - one input longer than 2^31 elements: n = 2^31 + 1234567
 * bytes of I8, SUM (wrapping). parsum counts in size_t everywhere; an int
 * index or a 32-bit offset anywhere on the path (chunk count, chunk start,
 * a GPU tile index) breaks here and nowhere else.
 *
 * Checked: parsum_reduce of the whole array, an in-place inclusive scan and
 * an in-place reverse exclusive scan, against plain typed serial loops.
 * Then a U8 SUM segmented scan in place with packed head flags (a head
 * every 1000 elements, at word boundaries, and a segment across 2^31),
 * checked against a running sum that restarts at each head, and a
 * parsum_select of the U8 input by packed bits (about half of it, bit
 * offset 5) into a second buffer of the same size (and the same as a
 * parsum_partition_unstable, the rejected bytes from the end down), and
 * a U8 histogram (AUTO strategy, U64 counts) of the input; then a U8 sort into a
 * second buffer and a segmented sort in place (two segments, the boundary
 * just below 2^31), checked by order and value counts; last, the input
 * seen as a 65536-wide U8 image (more than 2^31 pixels) and its inclusive
 * U32 summed-area table (8.6 GB), checked against a closed form.
 * Memory: the one context buffer (2.15 GB, device memory on CUDA), the
 * packed flags (268 MB, context memory), for the select its output (2.15
 * GB more), for the table 8.6 GB (context memory), and 64 MiB host
 * blocks: input, flags and selection bits are regenerated block by block
 * from the PRNG when checking, instead of being kept.
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

/* ---- segmented scan ------------------------------------------------- */

/* Head flags of the segmented case, words [off / 32, (off + len + 31) / 32)
 * of the packed array (off a multiple of 32): a head every 1000 elements,
 * at bits 31, 32 and 63 of every 2^24 elements (segments that start and
 * end at word boundaries), and one at 2^31 + 5, so that the segment from
 * 2^31 - 648 to 2^31 + 5 crosses the 2^31 boundary. */
static void gen_flags(size_t off, size_t len, uint32_t *words)
{
    size_t nw = (len + 31) / 32;
    memset(words, 0, nw * sizeof *words);
    for (size_t i = (off + 999) / 1000 * 1000; i < off + len; i += 1000)
        words[(i - off) / 32] |= 1u << (i % 32);
    static const size_t extra[] = {31, 32, 63};
    for (size_t base = off & ~(((size_t)1 << 24) - 1); base < off + len;
         base += (size_t)1 << 24)
        for (int k = 0; k < 3; k++)
            if (base + extra[k] >= off && base + extra[k] < off + len)
                words[(base + extra[k] - off) / 32] |= 1u << (extra[k] % 32);
    size_t special = ((size_t)1 << 31) + 5;
    if (special >= off && special < off + len)
        words[(special - off) / 32] |= 1u << (special % 32);
}

/* Checks the in-place segmented inclusive scan against a running sum that
 * restarts at every head, regenerating input and flags block by block. */
static size_t check_segmented(unsigned char *blk, unsigned char *got,
                              uint32_t *words)
{
    unsigned char acc = 0;
    size_t bad = 0;
    for (size_t off = 0, b = 0; off < HUGE_N; off += BLOCK, b++) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_block(b, blk, len);
        gen_flags(off, len, words);
        tu_download(got, huge_buf + off, len);
        for (size_t i = 0; i < len; i++) {
            bool head = off + i == 0 || ((words[i / 32] >> (i % 32)) & 1u);
            acc = head ? blk[i] : (unsigned char)(acc + blk[i]);
            if (got[i] != acc) {
                if (bad < TU_MAX_REPORTS)
                    print_error("  MISMATCH u8 sum segmented incl n=%zu "
                                "in-place: index %zu: expected %d, got %d\n",
                                HUGE_N, off + i, acc, got[i]);
                bad++;
            }
        }
    }
    return bad;
}

/* U8 SUM segmented scan, in place, with packed head flags (268 MB of
 * them, in the context's memory) over the whole > 2^31 input: bit
 * indices and word indices above 2^31 / 2^26 must not wrap. */
static void test_huge_segmented_u8_sum(void **state)
{
    (void)state;
    size_t nwords = (HUGE_N + 31) / 32;
    void *p = NULL;
    if (parsum_alloc(tu_ctx, &p, nwords * 4) != PARSUM_OK || p == NULL)
        skip(); /* the 2^31 buffer fits, its flags not: nothing to test */
    uint32_t *dflags = p;
    unsigned char *blk = tu_malloc(BLOCK), *got = tu_malloc(BLOCK);
    uint32_t *words = tu_malloc(BLOCK / 8);
    for (size_t off = 0; off < HUGE_N; off += BLOCK) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_flags(off, len, words);
        tu_upload(dflags + off / 32, words, (len + 31) / 32 * 4);
    }
    (void)upload_input(blk);
    parsum_segments seg = {PARSUM_SEG_FLAGS, dflags, 0, NULL, 0};
    size_t failures = 0;
    TU_OK(parsum_segmented_scan(tu_ctx, huge_buf, huge_buf, HUGE_N,
                                PARSUM_U8, PARSUM_SUM, &seg,
                                PARSUM_INCLUSIVE));
    if (check_segmented(blk, got, words) != 0)
        tu_report(&failures, "  segmented inclusive scan wrong\n");
    parsum_free(tu_ctx, dflags);
    free(blk);
    free(got);
    free(words);
    assert_int_equal(failures, 0);
}

/* ---- select ----------------------------------------------------------- */

/* Selection bits: word w of the packed array is a hash of w (about half
 * the bits set); element i has bit SEL_BIT0 + i, so that the bit offset is
 * normalised at every index. */
#define SEL_BIT0 ((size_t)5)

static uint32_t sel_word(size_t w)
{
    tu_rng r = tu_rng_for(0x5e1, w / 4096, 0, 0);
    uint32_t v = 0;
    for (size_t k = 0; k <= w % 4096; k++) /* one stream per 4096 words */
        v = (uint32_t)tu_next(&r);
    return v;
}

/* Words [w0, w0 + count) of the selection bits. */
static void gen_sel_words(size_t w0, size_t count, uint32_t *words)
{
    tu_rng r = tu_rng_for(0x5e1, w0 / 4096, 0, 0);
    for (size_t k = 0; k < w0 % 4096; k++)
        (void)tu_next(&r);
    for (size_t i = 0; i < count; i++) {
        if ((w0 + i) % 4096 == 0)
            r = tu_rng_for(0x5e1, (w0 + i) / 4096, 0, 0);
        words[i] = (uint32_t)tu_next(&r);
    }
}

/* A block of out in host memory, [base, base + have), downloaded as the
 * output is walked: forward from p, or (down) the block ending at p. */
typedef struct out_window {
    unsigned char *buf;
    size_t base, have;
} out_window;

static unsigned char out_at(out_window *w, const unsigned char *dout,
                            size_t p, bool down)
{
    if (p < w->base || p - w->base >= w->have) {
        w->base = !down ? p : p + 1 >= BLOCK ? p + 1 - BLOCK : 0;
        w->have = !down ? (HUGE_N - p < BLOCK ? HUGE_N - p : BLOCK)
                        : p + 1 - w->base;
        tu_download(w->buf, dout + w->base, w->have);
    }
    return w->buf[p - w->base];
}

/* In one walk of the input: the r-th selected byte against out[r] and,
 * with rest (got_rest not NULL), the r-th rejected one against
 * out[HUGE_N - 1 - r] (where parsum_partition_unstable puts it). Returns
 * the mismatches; *nsel and *nrest the bytes of each part. */
static size_t check_part(const unsigned char *dout, unsigned char *blk,
                         unsigned char *got, unsigned char *got_rest,
                         uint32_t *words, size_t *nsel, size_t *nrest)
{
    out_window ws = {got, 0, 0}, wr = {got_rest, 0, 0};
    size_t cnt[2] = {0, 0}, bad = 0;
    for (size_t off = 0, b = 0; off < HUGE_N; off += BLOCK, b++) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_block(b, blk, len);
        size_t w0 = (SEL_BIT0 + off) / 32;
        gen_sel_words(w0, (SEL_BIT0 + off + len) / 32 - w0 + 1, words);
        for (size_t i = 0; i < len; i++) {
            size_t bit = SEL_BIT0 + off + i;
            bool rest = ((words[bit / 32 - w0] >> (bit % 32)) & 1u) == 0;
            if (rest && got_rest == NULL)
                continue;
            size_t p = rest ? HUGE_N - 1 - cnt[1] : cnt[0];
            unsigned char g = out_at(rest ? &wr : &ws, dout, p, rest);
            if (g != blk[i] && bad++ < TU_MAX_REPORTS)
                print_error("  MISMATCH %s u8 bits n=%zu: output %zu (input "
                            "%zu): expected %d, got %d\n",
                            rest ? "partition_unstable rest" : "selected",
                            HUGE_N, p, off + i, blk[i], g);
            cnt[rest]++;
        }
    }
    *nsel = cnt[0];
    *nrest = cnt[1];
    return bad;
}

/* parsum_select of U8 data by packed bits over the whole > 2^31 input:
 * bit and word indices above 2^31, the chain of chunk counts and the
 * output positions must not wrap. Memory: the output (2.15 GB) and the
 * bits (268 MB) besides the input, context memory. */
static void test_huge_select_u8_bits(void **state)
{
    (void)state;
    size_t nwords = (SEL_BIT0 + HUGE_N + 31) / 32;
    void *pb = NULL, *po = NULL;
    if (parsum_alloc(tu_ctx, &pb, nwords * 4) != PARSUM_OK || pb == NULL ||
        parsum_alloc(tu_ctx, &po, HUGE_N) != PARSUM_OK || po == NULL) {
        parsum_free(tu_ctx, pb);
        skip(); /* the input fits, the output not: nothing to test */
    }
    unsigned char *blk = tu_malloc(BLOCK), *got = tu_malloc(BLOCK);
    uint32_t *words = tu_malloc(BLOCK / 8 + 64);
    for (size_t w = 0; w < nwords; w += BLOCK / 32) {
        size_t cnt = nwords - w < BLOCK / 32 ? nwords - w : BLOCK / 32;
        gen_sel_words(w, cnt, words);
        tu_upload((uint32_t *)pb + w, words, cnt * 4);
    }
    if (sel_word(nwords - 1) != words[(nwords - 1) % (BLOCK / 32)])
        fail_msg("gen_sel_words and sel_word disagree");
    (void)upload_input(blk);
    parsum_selector sel;
    memset(&sel, 0, sizeof sel);
    sel.kind = PARSUM_SELECT_BITS;
    sel.bits = pb;
    sel.bit_offset = SEL_BIT0;
    size_t k = 0, want = 0, failures = 0;
    TU_OK(parsum_select(tu_ctx, huge_buf, po, HUGE_N, 1, &sel, &k));
    size_t none = 0;
    if (check_part(po, blk, got, NULL, words, &want, &none) != 0)
        tu_report(&failures, "  select u8 by bits wrong\n");
    if (k != want)
        tu_report(&failures, "  select u8 by bits: num_selected %zu, "
                  "expected %zu\n", k, want);
    /* the same selection as a one-pass partition: the selected part as
     * above, the rejected ones from the end down */
    size_t kp = 0, rest = 0;
    TU_OK(parsum_partition_unstable(tu_ctx, huge_buf, po, HUGE_N, 1, &sel,
                                    &kp));
    size_t psel = 0;
    unsigned char *got_rest = tu_malloc(BLOCK);
    if (check_part(po, blk, got, got_rest, words, &psel, &rest) != 0)
        tu_report(&failures, "  partition_unstable u8 by bits wrong\n");
    free(got_rest);
    if (kp != want || psel != want || rest != HUGE_N - want)
        tu_report(&failures, "  partition_unstable u8 by bits: "
                  "num_selected %zu, expected %zu\n", kp, want);
    parsum_free(tu_ctx, pb);
    parsum_free(tu_ctx, po);
    free(blk);
    free(got);
    free(words);
    assert_int_equal(failures, 0);
}

/* ---- histogram -------------------------------------------------------- */

/* parsum_histogram of the U8 input with the backend's AUTO strategy and
 * U64 counts: 256 bins, and one bin that counts every sample (HUGE_N, a
 * count above 2^31), against counts of the regenerated input. */
static void test_huge_histogram_u8(void **state)
{
    (void)state;
    unsigned char *blk = tu_malloc(BLOCK);
    uint64_t *want = tu_malloc(256 * 8), *got = tu_malloc(257 * 8);
    void *dc = tu_dev_alloc(257 * 8);
    size_t failures = 0;
    (void)upload_input(blk);
    memset(want, 0, 256 * 8);
    for (size_t off = 0, b = 0; off < HUGE_N; off += BLOCK, b++) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_block(b, blk, len);
        for (size_t i = 0; i < len; i++)
            want[blk[i]]++;
    }
    parsum_histogram_desc d;
    memset(&d, 0, sizeof d);
    d.sample_dtype = PARSUM_U8;
    d.channels = 1;
    d.count_dtype = PARSUM_U64;
    d.bins[0].nbins = 256;
    d.bins[0].hi.i64 = 256;
    void *counts[4] = {dc, NULL, NULL, NULL};
    TU_OK(parsum_histogram(tu_ctx, huge_buf, HUGE_N, &d, counts));
    tu_download(got, dc, 256 * 8);
    if (tu_compare(PARSUM_U64, want, got, 256, NULL,
                   "histogram u8 256 bins n > 2^31") != 0)
        failures++;
    d.bins[0].nbins = 1;
    counts[0] = (uint64_t *)dc + 256;
    TU_OK(parsum_histogram(tu_ctx, huge_buf, HUGE_N, &d, counts));
    tu_download(got, (uint64_t *)dc + 256, 8);
    if (got[0] != HUGE_N)
        tu_report(&failures, "  histogram u8 1 bin: %llu, expected %zu\n",
                  (unsigned long long)got[0], HUGE_N);
    tu_dev_free(dc);
    free(blk);
    free(want);
    free(got);
    assert_int_equal(failures, 0);
}

/* ---- sort -------------------------------------------------------------- */

/* Value counts of the input, for positions below split and from split on. */
static void count_input(unsigned char *blk, size_t split, uint64_t *lo,
                        uint64_t *hi)
{
    memset(lo, 0, 256 * 8);
    memset(hi, 0, 256 * 8);
    for (size_t off = 0, b = 0; off < HUGE_N; off += BLOCK, b++) {
        size_t len = HUGE_N - off < BLOCK ? HUGE_N - off : BLOCK;
        gen_block(b, blk, len);
        for (size_t i = 0; i < len; i++)
            (off + i < split ? lo : hi)[blk[i]]++;
    }
}

/* Checks that sorted[from .. to) (context memory) is the ascending run of
 * want[v] copies of each value v. Returns the number of problems. */
static size_t check_sorted_run(const unsigned char *sorted, size_t from,
                               size_t to, const uint64_t *want,
                               unsigned char *blk, const char *what)
{
    uint64_t got[256];
    memset(got, 0, sizeof got);
    size_t bad = 0;
    unsigned prev = 0;
    for (size_t off = from; off < to; off += BLOCK) {
        size_t len = to - off < BLOCK ? to - off : BLOCK;
        tu_download(blk, sorted + off, len);
        for (size_t i = 0; i < len; i++) {
            if (blk[i] < prev && bad++ == 0)
                printf("  %s: element %zu = %u after %u\n", what, off + i,
                       blk[i], prev);
            prev = blk[i];
            got[blk[i]]++;
        }
    }
    for (int v = 0; v < 256; v++)
        if (got[v] != want[v] && bad++ < 3)
            printf("  %s: %llu copies of %d, expected %llu\n", what,
                   (unsigned long long)got[v], v,
                   (unsigned long long)want[v]);
    return bad;
}

/* parsum_sort of the U8 input into a second buffer, then a segmented sort
 * in place with a segment boundary just below 2^31: positions, histogram
 * offsets and segment bounds above 2^31. Memory: the output (2.15 GB)
 * besides the input, plus the sort's own scratch of about the same. */
static void test_huge_sort_u8(void **state)
{
    (void)state;
    void *po = NULL, *doff = NULL;
    if (parsum_alloc(tu_ctx, &po, HUGE_N) != PARSUM_OK || po == NULL)
        skip();
    size_t split = ((size_t)1 << 31) - 3, failures = 0;
    unsigned char *blk = tu_malloc(BLOCK);
    uint64_t *lo = tu_malloc(256 * 8), *hi = tu_malloc(256 * 8);
    uint64_t all[256];
    count_input(blk, split, lo, hi);
    for (int v = 0; v < 256; v++)
        all[v] = lo[v] + hi[v];
    (void)upload_input(blk);
    parsum_sort_desc d = {.key_dtype = PARSUM_U8};
    parsum_status st = parsum_sort(tu_ctx, huge_buf, NULL, po, NULL, HUGE_N,
                                   &d);
    if (st == PARSUM_ERR_OUT_OF_MEMORY) {
        parsum_free(tu_ctx, po);
        skip(); /* no room for the scratch */
    }
    TU_OK(st);
    failures += check_sorted_run(po, 0, HUGE_N, all, blk, "sort u8");
    parsum_free(tu_ctx, po);
    uint64_t off[3] = {0, split, HUGE_N};
    doff = tu_dev_alloc(sizeof off);
    tu_upload(doff, off, sizeof off);
    TU_OK(parsum_segmented_sort(tu_ctx, huge_buf, NULL, huge_buf, NULL,
                                HUGE_N, doff, 2, &d));
    failures += check_sorted_run(huge_buf, 0, split, lo, blk,
                                 "segmented sort u8, segment 0");
    failures += check_sorted_run(huge_buf, split, HUGE_N, hi, blk,
                                 "segmented sort u8, segment 1");
    tu_dev_free(doff);
    free(blk);
    free(lo);
    free(hi);
    assert_int_equal(failures, 0);
}

/* ---- summed-area table --------------------------------------------- */

/* The U8 image of the table case: HUGE_N bytes seen as rows of HW pixels
 * (HH rows, more than 2^31 pixels), pixel (x, y) = x % 5 + 3 y % 7, whose
 * inclusive table has a closed form: T(x, y) = (y + 1) A(x) + (x + 1) B(y)
 * with A, B the prefix sums of the two terms (mod 2^32 for a U32 table). */
#define HW ((size_t)65536)
#define HH (HUGE_N / HW)

static unsigned char sat_px(size_t x, size_t y)
{
    return (unsigned char)(x % 5 + (3 * y) % 7);
}

/* A U32 inclusive table (8.6 GB) of the > 2^31-pixel image: row and tile
 * indices, row offsets and the look-back state past 2^31, every entry
 * checked against the closed form, 256 rows at a time. */
static void test_huge_integral_u8(void **state)
{
    (void)state;
    parsum_image src = {.data = huge_buf, .width = HW, .height = HH,
                        .pitch = HW, .channels = 1, .dtype = PARSUM_U8,
                        .where = tu_backend == PARSUM_BACKEND_CUDA
                                     ? PARSUM_MEM_DEVICE
                                     : PARSUM_MEM_HOST};
    parsum_image tab;
    if (parsum_image_alloc(tu_ctx, &tab, HW, HH, 1, PARSUM_U32) != PARSUM_OK)
        skip(); /* no room for the table */
    const size_t rows = BLOCK / HW;
    unsigned char *blk = tu_malloc(BLOCK);
    for (size_t y0 = 0; y0 < HH; y0 += rows) {
        size_t n = HH - y0 < rows ? HH - y0 : rows;
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < HW; x++)
                blk[y * HW + x] = sat_px(x, y0 + y);
        tu_upload(huge_buf + y0 * HW, blk, n * HW);
    }
    free(blk);
    parsum_status st =
        parsum_integral(tu_ctx, &src, &tab, PARSUM_INTEGRAL_INCLUSIVE, NULL);
    if (st == PARSUM_ERR_OUT_OF_MEMORY) {
        parsum_image_free(tu_ctx, &tab);
        skip(); /* no room for the scratch */
    }
    TU_OK(st);
    uint32_t *a = tu_malloc(HW * sizeof *a), *bsum = tu_malloc(HH * sizeof *bsum);
    uint32_t acc = 0;
    for (size_t x = 0; x < HW; x++)
        a[x] = acc += (uint32_t)(x % 5);
    acc = 0;
    for (size_t y = 0; y < HH; y++)
        bsum[y] = acc += (uint32_t)((3 * y) % 7);
    const size_t trows = BLOCK / (HW * 4);
    uint32_t *got = tu_malloc(trows * HW * sizeof *got);
    size_t bad = 0, failures = 0;
    for (size_t y0 = 0; y0 < HH; y0 += trows) {
        size_t n = HH - y0 < trows ? HH - y0 : trows;
        for (size_t y = 0; y < n; y++)
            tu_download(got + y * HW,
                        (const char *)tab.data + (y0 + y) * tab.pitch, HW * 4);
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < HW; x++) {
                const size_t yy = y0 + y;
                const uint32_t want = (uint32_t)(yy + 1) * a[x] +
                                      (uint32_t)(x + 1) * bsum[yy];
                if (got[y * HW + x] != want) {
                    if (bad < TU_MAX_REPORTS)
                        print_error("  MISMATCH integral u8 -> u32 %zu x %zu "
                                    "inclusive: (%zu, %zu): expected %u, "
                                    "got %u\n",
                                    HW, HH, x, yy, want, got[y * HW + x]);
                    bad++;
                }
            }
    }
    if (bad != 0)
        tu_report(&failures, "  integral: %zu wrong entries\n", bad);
    free(a);
    free(bsum);
    free(got);
    parsum_image_free(tu_ctx, &tab);
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_huge_i8_sum),
    cmocka_unit_test(test_huge_segmented_u8_sum),
    cmocka_unit_test(test_huge_select_u8_bits),
    cmocka_unit_test(test_huge_histogram_u8),
    cmocka_unit_test(test_huge_sort_u8),
    cmocka_unit_test(test_huge_integral_u8),
};

PARSUM_TEST_MAIN(test_huge)
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
