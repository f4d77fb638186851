/*
 * test_segmented_reduce.c - parsum_segmented_reduce, the custom-operator
 * variants of segmented scan and reduce, against the serial reference
 * (src/ref).
 *
 * Segmented reduce: every dtype x operator over the segment length
 * distributions of test_seg_util.h (empty segments included), the output
 * poisoned and one guard element past num_segments that must stay
 * poisoned, and over a million or more elements in segments of 0-1999
 * elements with a few longer ones (the GPU kernel's segment-a-warp blocks
 * beside its tile-walking ones); empty segments also checked against
 * parsum_op_identity itself,
 * num_segments == 0; float SUM with rounding data bit-identical for 1, 2
 * and 7 threads and within parsum_reduce's bound per segment. A few
 * million elements in segments of every length, empty ones among them, so
 * that segment ends meet the GPU kernel's tile and block edges, from an
 * aligned and a misaligned input, and float sums bit-identical from call
 * to call there; 2^24 elements of short segments with long ones among
 * them (the GPU kernel's warp streams, or many rounds of its batches a
 * block under PARSUM_CUDA_SEGRED_STREAM=0), float sums
 * bit-identical there too; with PARSUM_TEST_SEG_HUGE=1 on CUDA, more
 * than 2^31 elements.
 *
 * Custom operators (associative, not commutative, so an operand swap
 * shows): affine maps over uint32 and the seeds' farthest 3-D point, each
 * with its CUDA source (test_ops.h, shared with test_custom.c), for
 * segmented scan (4 flag combinations, in and out of place, offsets and
 * flags) and segmented reduce.
 *
 * The conversions between offsets and flags are in
 * test_segmented_convert.c.
 */
#include "test_seg_util.h"
#include "test_ops.h"

#include "ref/ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct red_case {
    parsum_dtype dtype;
    parsum_op op;
} red_case;

static const unsigned all_flags[4] = {
    PARSUM_INCLUSIVE, PARSUM_EXCLUSIVE, PARSUM_REVERSE,
    PARSUM_EXCLUSIVE | PARSUM_REVERSE};

/* One segmented reduce of host input `in` over host offsets; the result
 * (nseg elements) is downloaded into got. Returns false if the call
 * failed (reported). */
static bool run_reduce(parsum_dtype d, parsum_op op,
                       const parsum_custom_op *custom, const void *in,
                       size_t n, const uint64_t *off, size_t nseg,
                       unsigned char *got, const char *what, size_t *failures)
{
    size_t es = custom != NULL ? custom->elem_size : parsum_dtype_size(d);
    void *din = tu_dev_alloc(n * es), *dout = tu_dev_alloc((nseg + 1) * es);
    void *doff = tu_dev_alloc((nseg + 1) * sizeof *off);
    tu_upload(din, in, n * es);
    tu_upload(doff, off, (nseg + 1) * sizeof *off);
    tu_dev_poison(dout, (nseg + 1) * es);
    parsum_status st =
        custom != NULL
            ? parsum_segmented_reduce_custom(tu_ctx, din, dout, doff, nseg,
                                             custom)
            : parsum_segmented_reduce(tu_ctx, din, dout, doff, nseg, d, op);
    bool ok = st == PARSUM_OK;
    if (!ok)
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    else
        tu_download(got, dout, (nseg + 1) * es);
    unsigned char *guard = got + nseg * es;
    for (size_t b = 0; ok && b < es; b++) {
        if (guard[b] != TU_POISON) {
            tu_report(failures, "  %s: wrote past out[num_segments - 1]\n",
                      what);
            break;
        }
    }
    tu_dev_free(din);
    tu_dev_free(dout);
    tu_dev_free(doff);
    return ok;
}

/* Empty segments hold the identity, checked without the reference. */
static void check_empty_identity(parsum_dtype d, parsum_op op,
                                 const uint64_t *off, size_t nseg,
                                 const unsigned char *got, const char *what,
                                 size_t *failures)
{
    size_t es = parsum_dtype_size(d);
    unsigned char id[8];
    TU_OK(parsum_op_identity(d, op, id));
    for (size_t s = 0; s < nseg; s++) {
        if (off[s] == off[s + 1] && memcmp(got + s * es, id, es) != 0) {
            tu_report(failures, "  %s: empty segment %zu is not the "
                      "identity\n", what, s);
            return;
        }
    }
}

/* One case over the n elements of `in` and the given offsets, against
 * the reference; label names the segmentation in reports. */
static void check_reduce_offsets(const red_case *c, const unsigned char *in,
                                 size_t n, const uint64_t *off, size_t nseg,
                                 const char *label, size_t *failures)
{
    size_t es = parsum_dtype_size(c->dtype);
    unsigned char *want = tu_malloc((nseg + 1) * es),
                  *got = tu_malloc((nseg + 1) * es);
    parsum__ref_seg_reduce(in, want, off, nseg, c->dtype, c->op, NULL);
    char what[200];
    snprintf(what, sizeof what, "segmented_reduce %s %s %s n=%zu %s "
             "segments (%zu) (seed 0x%llx)",
             parsum_backend_name(tu_backend), parsum_dtype_name(c->dtype),
             parsum_op_name(c->op), n, label, nseg,
             (unsigned long long)tu_seed);
    if (run_reduce(c->dtype, c->op, NULL, in, n, off, nseg, got, what,
                   failures)) {
        if (tu_compare_op(c->dtype, c->op, want, got, nseg, what) != 0)
            (*failures)++;
        check_empty_identity(c->dtype, c->op, off, nseg, got, what, failures);
    }
    free(want);
    free(got);
}

static void check_reduce_sizes(const red_case *c, const size_t *sizes,
                               size_t m, size_t *failures)
{
    size_t es = parsum_dtype_size(c->dtype);
    for (size_t k = 0; k < m && *failures < TSEG_MAX_FAILURES; k++) {
        size_t n = sizes[k];
        for (int dist = 0; dist < TSEG_DIST_COUNT; dist++) {
            tu_rng r = tu_rng_for(c->dtype, c->op, n, 0x7ed0 + (unsigned)dist);
            unsigned char *in = tu_malloc(n * es);
            tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in, n);
            uint64_t *off;
            size_t nseg = tseg_offsets(&r, (tseg_dist)dist, n, &off);
            check_reduce_offsets(c, in, n, off, nseg,
                                 tseg_dist_name((tseg_dist)dist), failures);
            free(in);
            free(off);
        }
    }
}

/* Appends offset o to *off (k + 1 values so far, capacity *cap). */
static void push_offset(uint64_t **off, size_t *k, size_t *cap, uint64_t o)
{
    if (*k + 2 > *cap) {
        *cap *= 2;
        *off = realloc(*off, *cap * sizeof **off);
        if (*off == NULL)
            fail_msg("out of host memory");
    }
    (*off)[++*k] = o;
}

/* Offsets of segments whose lengths len(r, k) (segment k) fill n
 * elements, the last cut at n. Returns the segment count. */
static size_t drawn_offsets(tu_rng *r, size_t n,
                            uint64_t (*len)(tu_rng *r, size_t k),
                            uint64_t **out)
{
    size_t k = 0, cap = 1024;
    uint64_t *off = tu_malloc(cap * sizeof *off), at = 0;
    off[0] = 0;
    while (at < n) {
        uint64_t l = len(r, k);
        at = at + l < n ? at + l : n;
        push_offset(&off, &k, &cap, at);
    }
    *out = off;
    return k;
}

/* Segments of moderate length: 0-1999 elements (mean 900, a tenth of
 * them empty), every 50th one of 5000-40000. On the GPU most blocks'
 * shares then hold segments of a few hundred to a few thousand bytes
 * only, which the kernel folds one segment a warp
 * (src/cuda/segreduce_warps.cuh), and the long ones put their blocks on
 * the tile walk, so both meet in one call. */
static uint64_t mid_len(tu_rng *r, size_t k)
{
    return k % 50 == 49           ? 5000 + tu_below(r, 35001)
           : tu_below(r, 10) == 0 ? 0
                                  : tu_below(r, 2000);
}

/* A short/long mix: 0-3 elements mostly, every 8th segment of 4-40, every
 * long_every-th of 65-3000 and every huge_every-th of huge_min-40000. */
static uint64_t short_long_mix(tu_rng *r, size_t k, size_t huge_every,
                               uint64_t huge_min, size_t long_every)
{
    return k % huge_every == huge_every - 1
               ? huge_min + tu_below(r, 40001 - huge_min)
           : k % long_every == long_every - 1 ? 65 + tu_below(r, 2936)
           : k % 8 == 7                       ? 4 + tu_below(r, 37)
                                              : tu_below(r, 4);
}

/* Short segments with long ones among them, a power-law-like mix: 0-3
 * elements mostly, every 8th of 4-40, every 500th of 65-3000 and every
 * 20000th of 5000-40000 (mean about 7). On the GPU the shares average
 * under 64 bytes a segment, so a block starts one segment a thread and
 * hands the rest of its share to one stream a warp at the first long one
 * (src/cuda/segreduce_stream.cuh; under PARSUM_CUDA_SEGRED_STREAM=0 to
 * the batches of 128 segments a warp, src/cuda/segreduce_batches.cuh,
 * whose longest segments are folded partly by the whole block). */
static uint64_t short_long_len(tu_rng *r, size_t k)
{
    return short_long_mix(r, k, 20000, 5000, 500);
}

static void test_seg_reduce_case(void **state)
{
    const red_case *c = *state;
    size_t es = parsum_dtype_size(c->dtype), ch = tu_chunk(es), failures = 0;
    size_t sizes[] = {0, 1, 31, 33, 65, ch - 1, ch + 1, 1009, 65537};
    check_reduce_sizes(c, sizes, sizeof sizes / sizeof sizes[0], &failures);
    size_t n = tu_quick ? 1000003 : 3000017;
    tu_rng r = tu_rng_for(c->dtype, c->op, n, 0x3d1d);
    unsigned char *in = tu_malloc(n * es);
    tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in, n);
    uint64_t *off;
    size_t nseg = drawn_offsets(&r, n, mid_len, &off);
    check_reduce_offsets(c, in, n, off, nseg, "mid-length", &failures);
    free(off);
    nseg = drawn_offsets(&r, n, short_long_len, &off);
    check_reduce_offsets(c, in, n, off, nseg, "short and long", &failures);
    free(in);
    free(off);
    assert_int_equal(failures, 0);
}

/* tu_sizes() to 10^6 for a few cases, and num_segments == 0. */
static void test_seg_reduce_long_and_none(void **state)
{
    (void)state;
    static const red_case cases[] = {{PARSUM_I64, PARSUM_SUM},
                                     {PARSUM_F32, PARSUM_MIN},
                                     {PARSUM_U16, PARSUM_AND}};
    size_t failures = 0;
    for (size_t k = 0; k < 3; k++) {
        size_t sizes[32];
        size_t m = tu_sizes(parsum_dtype_size(cases[k].dtype), sizes);
        check_reduce_sizes(&cases[k], sizes, m, &failures);
    }
    /* run_reduce checks that out[0], past the last segment, is not
     * written. */
    uint64_t zero = 0;
    unsigned char got[8];
    (void)run_reduce(PARSUM_I32, PARSUM_SUM, NULL, NULL, 0, &zero, 0, got,
                     "segmented_reduce i32 sum num_segments=0", &failures);
    assert_int_equal(failures, 0);
}

/* Float SUM with rounding inputs: the same bits for 1, 2 and 7 threads,
 * and each segment within n_s * eps * sum|x| of its exact sum. */
static void test_seg_reduce_determinism(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 7};
    size_t failures = 0;
    for (int di = 0; di < 2; di++) {
        parsum_dtype d = di ? PARSUM_F64 : PARSUM_F32;
        size_t es = parsum_dtype_size(d), n = 6 * tu_chunk(es) + 3;
        double eps = di ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
        tu_rng r = tu_rng_for(d, n, 0xde7, 2);
        unsigned char *in = tu_malloc(n * es);
        tu_fill(&r, d, PARSUM_SUM, TU_DATA_ROUNDING, in, n);
        uint64_t *off;
        size_t nseg = tseg_offsets(&r, TSEG_POWER, n, &off);
        unsigned char *res[3], *want = tu_malloc(nseg * es + es);
        double *bound = tu_malloc((nseg + 1) * sizeof *bound);
        for (size_t s = 0; s < nseg; s++) {
            long double acc = 0, abs_acc = 0;
            for (uint64_t i = off[s]; i < off[s + 1]; i++) {
                acc += tu_get(d, in, (size_t)i);
                abs_acc += fabsl((long double)tu_get(d, in, (size_t)i));
            }
            tu_set(d, want, s, (double)acc);
            bound[s] = (double)((long double)(off[s + 1] - off[s]) * eps *
                                abs_acc + eps * fabsl(acc));
        }
        for (int t = 0; t < 3; t++) {
            res[t] = tu_malloc((nseg + 1) * es);
            TU_OK(parsum_context_set_threads(tu_ctx, threads[t]));
            if (!run_reduce(d, PARSUM_SUM, NULL, in, n, off, nseg, res[t],
                            "segmented_reduce float sum (determinism)",
                            &failures))
                memset(res[t], 0, (nseg + 1) * es);
            if (t > 0 && memcmp(res[t], res[0], nseg * es) != 0)
                tu_report(&failures, "  segmented_reduce %s sum n=%zu: %d "
                          "threads differ from 1\n", parsum_dtype_name(d), n,
                          threads[t]);
        }
        TU_OK(parsum_context_set_threads(tu_ctx, 0));
        if (tu_compare(d, want, res[0], nseg, bound,
                       "segmented_reduce float sum: error bound") != 0)
            failures++;
        for (int t = 0; t < 3; t++)
            free(res[t]);
        free(in);
        free(off);
        free(want);
        free(bound);
    }
    assert_int_equal(failures, 0);
}

/* ---- tile and block edges ------------------------------------------- */

/* A segmentation of n elements whose segment ends and empty segments fall
 * on every kind of position relative to the tiles (a few thousand
 * elements) and blocks of the CUDA kernel, whatever the device's size: in
 * rotation, 2000 segments of 0-8 elements, one of 100000-300000 (many
 * tiles), 3000 of 1, 500 empty ones, 200 of 1-1999, one of 0-49999 then
 * an empty one, 400 of 0, 15, 16, 17, 31, 32, 33 or 1-700 elements (tiles
 * with a few ends, some empty, next to the kernel's per-thread pieces of
 * 8, 16 or 32 elements); the segment that crosses n is cut there and
 * three empty segments end the list. Returns the segment count. */
static size_t edge_offsets(tu_rng *r, size_t n, uint64_t **out)
{
    size_t k = 0, cap = 1024;
    uint64_t *off = tu_malloc(cap * sizeof *off), at = 0;
    off[0] = 0;
    static const uint64_t near_piece[7] = {0, 15, 16, 17, 31, 32, 33};
    for (int phase = 0; at < n; phase = (phase + 1) % 7) {
        size_t count = phase == 0 ? 2000 : phase == 2 ? 3000
                     : phase == 3 ? 500 : phase == 4 ? 200
                     : phase == 6 ? 400 : 1;
        for (size_t i = 0; i < count && at < n; i++) {
            uint64_t pick = phase == 6 ? tu_below(r, 10) : 0;
            uint64_t len = phase == 0 ? tu_below(r, 9)
                         : phase == 1 ? 100000 + tu_below(r, 200001)
                         : phase == 2 ? 1
                         : phase == 3 ? 0
                         : phase == 4 ? 1 + tu_below(r, 1999)
                         : phase == 5 ? tu_below(r, 50000)
                         : pick < 7 ? near_piece[pick]
                                    : 1 + tu_below(r, 700);
            at = at + len < n ? at + len : n;
            push_offset(&off, &k, &cap, at);
            if (phase == 5)
                push_offset(&off, &k, &cap, at);
        }
    }
    for (int i = 0; i < 3; i++)
        push_offset(&off, &k, &cap, n);
    *out = off;
    return k;
}

/* Segmented reduce over edge_offsets at a few million elements, from a
 * 16-byte-aligned input and from one misaligned by one element. */
static void test_seg_reduce_tile_edges(void **state)
{
    (void)state;
    static const red_case cases[] = {
        {PARSUM_I32, PARSUM_SUM}, {PARSUM_F64, PARSUM_SUM},
        {PARSUM_U8, PARSUM_XOR},  {PARSUM_I16, PARSUM_MAX},
        {PARSUM_U64, PARSUM_PROD}, {PARSUM_F32, PARSUM_MIN}};
    const size_t n = tu_quick ? 700001 : 5000077;
    size_t failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        parsum_dtype d = cases[c].dtype;
        parsum_op op = cases[c].op;
        size_t es = parsum_dtype_size(d);
        tu_rng r = tu_rng_for(d, op, n, 0xed9e);
        unsigned char *in = tu_malloc(n * es);
        tu_fill(&r, d, op, TU_DATA_EXACT, in, n);
        uint64_t *off;
        size_t nseg = edge_offsets(&r, n, &off);
        unsigned char *want = tu_malloc((nseg + 1) * es),
                      *got = tu_malloc((nseg + 1) * es);
        parsum__ref_seg_reduce(in, want, off, nseg, d, op, NULL);
        char what[200];
        for (int shift = 0; shift < 2; shift++) {
            snprintf(what, sizeof what, "segmented_reduce %s %s %s n=%zu "
                     "tile-edge segments (%zu)%s (seed 0x%llx)",
                     parsum_backend_name(tu_backend), parsum_dtype_name(d),
                     parsum_op_name(op), n, nseg,
                     shift ? ", input one element off 16-byte alignment" : "",
                     (unsigned long long)tu_seed);
            unsigned char *din = tu_dev_alloc((n + 1) * es);
            void *dout = tu_dev_alloc((nseg + 1) * es),
                 *doff = tu_dev_alloc((nseg + 1) * sizeof *off);
            tu_upload(din + shift * es, in, n * es);
            tu_upload(doff, off, (nseg + 1) * sizeof *off);
            tu_dev_poison(dout, (nseg + 1) * es);
            parsum_status st = parsum_segmented_reduce(
                tu_ctx, din + shift * es, dout, doff, nseg, d, op);
            if (st != PARSUM_OK) {
                tu_report(&failures, "  %s: returned %s: %s\n", what,
                          parsum_status_name(st), parsum_last_error(tu_ctx));
            } else {
                tu_download(got, dout, (nseg + 1) * es);
                if (tu_compare_op(d, op, want, got, nseg, what) != 0)
                    failures++;
                check_empty_identity(d, op, off, nseg, got, what, &failures);
                for (size_t b = 0; b < es; b++)
                    if (got[nseg * es + b] != TU_POISON) {
                        tu_report(&failures, "  %s: wrote past "
                                  "out[num_segments - 1]\n", what);
                        break;
                    }
            }
            tu_dev_free(din);
            tu_dev_free(dout);
            tu_dev_free(doff);
        }
        free(in);
        free(off);
        free(want);
        free(got);
    }
    assert_int_equal(failures, 0);
}

/* Two float SUM calls over the same input and offsets give the same
 * bits; label names the segmentation in reports. */
static void check_repeatable(parsum_dtype d, const unsigned char *in,
                             size_t n, const uint64_t *off, size_t nseg,
                             const char *label, size_t *failures)
{
    size_t es = parsum_dtype_size(d);
    unsigned char *res[2];
    char what[160];
    snprintf(what, sizeof what, "segmented_reduce %s sum n=%zu %s "
             "(repeatability)", parsum_dtype_name(d), n, label);
    for (int t = 0; t < 2; t++) {
        res[t] = tu_malloc((nseg + 1) * es);
        if (!run_reduce(d, PARSUM_SUM, NULL, in, n, off, nseg, res[t], what,
                        failures))
            memset(res[t], 0, (nseg + 1) * es);
    }
    if (memcmp(res[0], res[1], nseg * es) != 0)
        tu_report(failures, "  %s: two calls differ\n", what);
    free(res[0]);
    free(res[1]);
}

/* Float SUM with rounding inputs over edge_offsets: the same bits from
 * two calls (the GPU's grouping is a function of the input and the
 * device only). */
static void test_seg_reduce_edges_repeatable(void **state)
{
    (void)state;
    const size_t n = tu_quick ? 700001 : 5000077;
    size_t failures = 0;
    for (int di = 0; di < 2; di++) {
        parsum_dtype d = di ? PARSUM_F64 : PARSUM_F32;
        size_t es = parsum_dtype_size(d);
        tu_rng r = tu_rng_for(d, n, 0x5eed, 3);
        unsigned char *in = tu_malloc(n * es);
        tu_fill(&r, d, PARSUM_SUM, TU_DATA_ROUNDING, in, n);
        uint64_t *off;
        size_t nseg = edge_offsets(&r, n, &off);
        check_repeatable(d, in, n, off, nseg, "tile-edge segments",
                         &failures);
        free(in);
        free(off);
    }
    assert_int_equal(failures, 0);
}

/* Short segments with long ones among them at a size where the GPU's
 * blocks hold shares of tens of thousands of segments: 0-3 elements
 * mostly, every 8th of 4-40, every 400th of 65-3000 and every 6000th of
 * 9000-40000 (mean about 12). Such a share averages under 64 bytes a
 * segment (4-byte values and smaller), so the block starts one segment a
 * thread and hands the rest to one stream a warp
 * (src/cuda/segreduce_stream.cuh), and shares around the longest
 * segments (64 to 512 bytes a segment) stream from their start: every
 * warp of a block crosses long and short segments and many chunks. Under
 * PARSUM_CUDA_SEGRED_STREAM=0 the batches (src/cuda/segreduce_batches.cuh)
 * take the same shares, whose rounds defer the long segments' spans to
 * the whole block: many rounds of batches and many deferred spans a
 * block, which the smaller mixes above do not reach. */
static uint64_t short_long_large_len(tu_rng *r, size_t k)
{
    return short_long_mix(r, k, 6000, 9000, 400);
}

static void test_seg_reduce_short_long_large(void **state)
{
    (void)state;
    static const red_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                     {PARSUM_U8, PARSUM_XOR},
                                     {PARSUM_U16, PARSUM_MAX},
                                     {PARSUM_F32, PARSUM_SUM},
                                     {PARSUM_I64, PARSUM_MIN}};
    const size_t n = ((size_t)1 << 24) + 3;
    size_t failures = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const red_case *c = &cases[k];
        size_t es = parsum_dtype_size(c->dtype);
        tu_rng r = tu_rng_for(c->dtype, c->op, n, 0x1157);
        unsigned char *in = tu_malloc(n * es);
        tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in, n);
        uint64_t *off;
        size_t nseg = drawn_offsets(&r, n, short_long_large_len, &off);
        check_reduce_offsets(c, in, n, off, nseg, "short and long, large",
                             &failures);
        if (c->dtype == PARSUM_F32) {
            /* Which warp takes a batch varies from call to call; the
             * bits must not. */
            tu_fill(&r, c->dtype, c->op, TU_DATA_ROUNDING, in, n);
            check_repeatable(c->dtype, in, n, off, nseg,
                             "short and long segments", &failures);
        }
        free(in);
        free(off);
    }
    assert_int_equal(failures, 0);
}

/* More than 2^31 elements (2.1 GB of U8, CUDA only, when
 * PARSUM_TEST_SEG_HUGE=1): a segment of nearly 2^31 elements, one-element
 * segments and an empty one around element 2^31, a segment of 2^20 and
 * short ones to the end; in[i] is a hash of i, so the reference needs no
 * host copy. */
#define SEG_HUGE_N (((size_t)1 << 31) + ((size_t)1 << 20) + 4321)
#define SEG_HUGE_BLOCK ((size_t)64 << 20)

static unsigned char seg_huge_value(uint64_t i)
{
    return (unsigned char)((i * 0x9E3779B97F4A7C15ull) >> 56);
}

static void test_seg_reduce_huge(void **state)
{
    (void)state;
    const char *on = getenv("PARSUM_TEST_SEG_HUGE");
    if (on == NULL || strcmp(on, "1") != 0 ||
        tu_backend != PARSUM_BACKEND_CUDA)
        skip();
    const uint64_t two31 = (uint64_t)1 << 31;
    size_t k = 0, cap = 1024;
    uint64_t *off = tu_malloc(cap * sizeof *off);
    off[0] = 0;
    push_offset(&off, &k, &cap, 1000);
    push_offset(&off, &k, &cap, two31 - 50);
    for (int i = 0; i < 100; i++)
        push_offset(&off, &k, &cap, off[k] + 1);
    push_offset(&off, &k, &cap, off[k]);
    push_offset(&off, &k, &cap, two31 + ((uint64_t)1 << 20));
    tu_rng r = tu_rng_for(0x5e6, 0x4a9e, 0, tu_seed);
    while (off[k] < SEG_HUGE_N) {
        uint64_t at = off[k] + 1 + tu_below(&r, 8);
        push_offset(&off, &k, &cap, at < SEG_HUGE_N ? at : SEG_HUGE_N);
    }
    push_offset(&off, &k, &cap, SEG_HUGE_N);
    const size_t nseg = k;
    void *din = NULL;
    if (parsum_alloc(tu_ctx, &din, SEG_HUGE_N) != PARSUM_OK) {
        free(off);
        skip();
    }
    unsigned char *blk = tu_malloc(SEG_HUGE_BLOCK);
    for (size_t at = 0; at < SEG_HUGE_N; at += SEG_HUGE_BLOCK) {
        size_t len = SEG_HUGE_N - at < SEG_HUGE_BLOCK ? SEG_HUGE_N - at
                                                       : SEG_HUGE_BLOCK;
        for (size_t i = 0; i < len; i++)
            blk[i] = seg_huge_value(at + i);
        tu_upload((char *)din + at, blk, len);
    }
    free(blk);
    unsigned char *got = tu_malloc(nseg + 1);
    void *dout = tu_dev_alloc(nseg + 1), *doff = tu_dev_alloc((nseg + 1) * 8);
    tu_upload(doff, off, (nseg + 1) * 8);
    tu_dev_poison(dout, nseg + 1);
    size_t failures = 0;
    TU_OK(parsum_segmented_reduce(tu_ctx, din, dout, doff, nseg, PARSUM_U8,
                                  PARSUM_SUM));
    tu_download(got, dout, nseg + 1);
    for (size_t s = 0; s < nseg && failures < TSEG_MAX_FAILURES; s++) {
        unsigned char want = 0;
        for (uint64_t i = off[s]; i < off[s + 1]; i++)
            want = (unsigned char)(want + seg_huge_value(i));
        if (got[s] != want)
            tu_report(&failures, "  segmented_reduce u8 sum n=%zu: segment "
                      "%zu [%llu, %llu) gives %u, not %u\n", SEG_HUGE_N, s,
                      (unsigned long long)off[s],
                      (unsigned long long)off[s + 1], got[s], want);
    }
    if (got[nseg] != TU_POISON)
        tu_report(&failures, "  segmented_reduce u8 sum n=%zu: wrote past "
                  "out[num_segments - 1]\n", SEG_HUGE_N);
    parsum_free(tu_ctx, din);
    tu_dev_free(dout);
    tu_dev_free(doff);
    free(got);
    free(off);
    assert_int_equal(failures, 0);
}

/* ---- custom operators (aff32 and pt3 of test_ops.h) ------------------ */

typedef struct custom_case {
    const char *name;
    const parsum_custom_op *op;
    void (*fill)(tu_rng *r, void *buf, size_t n);
} custom_case;

/* Segmented scan with a custom operator: 4 flags x in/out of place. */
static void check_custom_scan(const custom_case *c, const unsigned char *in,
                              size_t n, const tseg_desc *desc,
                              const char *tag, size_t *failures)
{
    size_t es = c->op->elem_size, bytes = n * es;
    unsigned char *want = tu_malloc(bytes), *got = tu_malloc(bytes);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    tu_upload(din, in, bytes);
    char what[200];
    for (int f = 0; f < 4 && *failures < TSEG_MAX_FAILURES; f++) {
        TU_OK(parsum__ref_seg_scan(in, want, n, PARSUM_U8, PARSUM_SUM, c->op,
                                   &desc->host, all_flags[f]));
        for (int inplace = 0; inplace < 2; inplace++) {
            snprintf(what, sizeof what, "segmented_scan_custom %s %s %s n=%zu "
                     "%s %s %s (seed 0x%llx)", parsum_backend_name(tu_backend),
                     c->name, tu_flags_name(all_flags[f]), n, desc->name, tag,
                     inplace ? "in-place" : "out-of-place",
                     (unsigned long long)tu_seed);
            if (inplace)
                tu_upload(dout, in, bytes);
            else
                tu_dev_poison(dout, bytes);
            parsum_status st = parsum_segmented_scan_custom(
                tu_ctx, inplace ? dout : din, dout, n, c->op, &desc->dev,
                all_flags[f]);
            if (st != PARSUM_OK) {
                tu_report(failures, "  %s: returned %s: %s\n", what,
                          parsum_status_name(st), parsum_last_error(tu_ctx));
                continue;
            }
            tu_download(got, dout, bytes);
            if (tseg_compare_bytes(want, got, n, es, what) != 0)
                (*failures)++;
        }
    }
    tu_dev_free(din);
    tu_dev_free(dout);
    free(want);
    free(got);
}

static void check_custom_input(const custom_case *c, size_t n, int dist,
                               size_t *failures)
{
    size_t es = c->op->elem_size;
    tu_rng r = tu_rng_for(es, n, (uint64_t)dist, 0xC05E);
    unsigned char *in = tu_malloc(n * es);
    c->fill(&r, in, n);
    uint64_t *off;
    size_t nseg = tseg_offsets(&r, (tseg_dist)dist, n, &off), nwords;
    char tag[64];
    snprintf(tag, sizeof tag, "%s segments (%zu)",
             tseg_dist_name((tseg_dist)dist), nseg);
    tseg_desc desc;
    tseg_desc_offsets(&desc, off, nseg);
    check_custom_scan(c, in, n, &desc, tag, failures);
    tseg_desc_free(&desc);
    uint32_t *fl = tseg_flags(&r, off, nseg, n, 37, &nwords);
    tseg_desc_flags(&desc, fl, nwords, 37);
    check_custom_scan(c, in, n, &desc, tag, failures);
    tseg_desc_free(&desc);

    unsigned char *want = tu_malloc((nseg + 1) * es),
                  *got = tu_malloc((nseg + 1) * es);
    parsum__ref_seg_reduce(in, want, off, nseg, PARSUM_U8, PARSUM_SUM, c->op);
    char what[200];
    snprintf(what, sizeof what, "segmented_reduce_custom %s %s n=%zu %s "
             "(seed 0x%llx)", parsum_backend_name(tu_backend), c->name, n, tag,
             (unsigned long long)tu_seed);
    if (run_reduce(PARSUM_U8, PARSUM_SUM, c->op, in, n, off, nseg, got, what,
                   failures) &&
        tseg_compare_bytes(want, got, nseg, es, what) != 0)
        (*failures)++;
    free(want);
    free(got);
    free(fl);
    free(off);
    free(in);
}

static void test_custom_case(void **state)
{
    const custom_case *c = *state;
    size_t ch = tu_chunk(c->op->elem_size), failures = 0;
    size_t sizes[] = {0, 1, 33, ch - 1, ch + 1, 1009, 3 * ch + 5};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int dist = 0; dist < TSEG_DIST_COUNT; dist++)
            if (failures < TSEG_MAX_FAILURES)
                check_custom_input(c, sizes[k], dist, &failures);
    assert_int_equal(failures, 0);
}

#define RC(D, O)                                                             \
    {"seg_reduce_" #D "_" #O, test_seg_reduce_case, NULL, NULL,              \
     &(red_case){PARSUM_##D, PARSUM_##O}}
#define INT_CASES(D)                                                         \
    RC(D, SUM), RC(D, PROD), RC(D, MIN), RC(D, MAX), RC(D, AND), RC(D, OR),  \
        RC(D, XOR)
#define FLOAT_CASES(D) RC(D, SUM), RC(D, PROD), RC(D, MIN), RC(D, MAX)
#define CC(NAME)                                                             \
    {"custom_" #NAME, test_custom_case, NULL, NULL,                          \
     &(custom_case){#NAME, &NAME##_op, NAME##_fill}}

static const struct CMUnitTest tests[] = {
    INT_CASES(I8),   INT_CASES(U8),   INT_CASES(I16),  INT_CASES(U16),
    INT_CASES(I32),  INT_CASES(U32),  INT_CASES(I64),  INT_CASES(U64),
    FLOAT_CASES(F32), FLOAT_CASES(F64),
    cmocka_unit_test(test_seg_reduce_long_and_none),
    cmocka_unit_test(test_seg_reduce_determinism),
    cmocka_unit_test(test_seg_reduce_tile_edges),
    cmocka_unit_test(test_seg_reduce_edges_repeatable),
    cmocka_unit_test(test_seg_reduce_short_long_large),
    cmocka_unit_test(test_seg_reduce_huge),
    CC(aff32),
    CC(pt3),
};

PARSUM_TEST_MAIN(test_segmented_reduce)
{
    tu_init("test_segmented_reduce");
    return tu_finish(TU_RUN("test_segmented_reduce", tests));
}
