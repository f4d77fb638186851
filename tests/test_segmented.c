/*
 * test_segmented.c - parsum_segmented_scan against the serial reference
 * (src/ref: every segment scanned on its own as a separate array).
 *
 * Every dtype x operator, the four flag combinations, out of place (output
 * poisoned, input checked unchanged) and in place (above 70000 elements
 * with the offsets only, for time), for each segment length
 * distribution of test_seg_util.h, with the segments given as CSR offsets
 * and as packed head flags, at bit offset 0 and at an offset that is not a
 * word boundary (5 or 37: the first word or words are skipped), with
 * random garbage in every bit outside the n flags and in element 0's own
 * flag. Sizes: 0 1 31 33 63 65, a CPU chunk +-1, 1009 and 65537 (n not a
 * multiple of 32 or 64, segments straddling chunk boundaries); the longer
 * list of tu_sizes() up to 10^6 for a few cases; NaN inputs for float
 * MIN/MAX. Inputs are TU_DATA_EXACT, so results compare exactly.
 *
 * Inputs of about 3 million elements (hundreds of GPU tiles) for one
 * operator per element size and float SUM (three of them on the CPU): on
 * CUDA also with the pipelined scan's grid
 * capped at 1 and at 3 blocks (PARSUM_CUDA_SCAN_BLOCKS, read when a context
 * is set up), so that each block runs many tiles in turn, and tiles whose
 * first element is a head, tiles with heads inside and tiles with none
 * (the one-segment distribution) meet in every combination.
 *
 * Runs of one-element segments longer than a CPU chunk, broken by empty
 * and longer segments (the CPU's all-heads chunks). Outputs that start
 * off a vector boundary, with guards around them.
 *
 * Also: the notes' worked example (parsum.h) on every dtype against its
 * literal expected output; float SUM with rounding inputs bit-identical
 * for 1, 2 and 7 threads and from run to run (on CUDA also under every
 * grid cap, about 3 million elements), and within the error bound
 * that parsum.h states per segment.
 */
#include "test_seg_util.h"

#include "ref/ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan_case {
    parsum_dtype dtype;
    parsum_op op;
} scan_case;

static const unsigned all_flags[4] = {
    PARSUM_INCLUSIVE, PARSUM_EXCLUSIVE, PARSUM_REVERSE,
    PARSUM_EXCLUSIVE | PARSUM_REVERSE};

/* Context buffers and host scratch of one input. */
typedef struct bufs {
    parsum_dtype d;
    parsum_op op;
    const unsigned char *in;
    size_t n, bytes;
    unsigned char *want, *got;
    void *din, *dout;
} bufs;

static void bufs_init(bufs *b, parsum_dtype d, parsum_op op,
                      const unsigned char *in, size_t n)
{
    b->d = d;
    b->op = op;
    b->in = in;
    b->n = n;
    b->bytes = n * parsum_dtype_size(d);
    b->want = tu_malloc(b->bytes);
    b->got = tu_malloc(b->bytes);
    b->din = tu_dev_alloc(b->bytes);
    b->dout = tu_dev_alloc(b->bytes);
    tu_upload(b->din, in, b->bytes);
}

static void bufs_free(bufs *b)
{
    free(b->want);
    free(b->got);
    tu_dev_free(b->din);
    tu_dev_free(b->dout);
}

/* Inputs above this many elements are scanned in place with the offsets
 * description only (out of place with every description), to keep the
 * run time in bounds. */
#define LIGHT_N 70000

/* One call of the backend (in place or not) with one description against
 * b->want; returns false if the call failed. */
static bool check_call(bufs *b, const tseg_desc *desc, unsigned flags,
                       bool inplace, const char *tag, size_t *failures)
{
    char what[256];
    snprintf(what, sizeof what,
             "segmented_scan %s %s %s %s n=%zu %s %s %s (seed 0x%llx)",
             parsum_backend_name(tu_backend), parsum_dtype_name(b->d),
             parsum_op_name(b->op), tu_flags_name(flags), b->n, desc->name,
             tag, inplace ? "in-place" : "out-of-place",
             (unsigned long long)tu_seed);
    void *src = b->din;
    if (inplace) {
        tu_upload(b->dout, b->in, b->bytes);
        src = b->dout;
    } else {
        tu_dev_poison(b->dout, b->bytes);
    }
    parsum_status st = parsum_segmented_scan(tu_ctx, src, b->dout, b->n, b->d,
                                             b->op, &desc->dev, flags);
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
        return false;
    }
    tu_download(b->got, b->dout, b->bytes);
    if (tu_compare_op(b->d, b->op, b->want, b->got, b->n, what) != 0)
        (*failures)++;
    return true;
}

/* The four flag combinations over the descriptions of one segmentation
 * (descs[0] the offsets; the reference result is the same for all, and is
 * computed from each for small n as a check of the reference itself). */
static void check_descs(bufs *b, const tseg_desc *descs, int ndesc,
                        const char *tag, size_t *failures)
{
    bool ok = true;
    for (int f = 0; f < 4 && ok; f++) {
        unsigned flags = all_flags[f];
        TU_OK(parsum__ref_seg_scan(b->in, b->want, b->n, b->d, b->op, NULL,
                                   &descs[0].host, flags));
        for (int k = 1; k < ndesc && b->n <= 4096; k++) {
            TU_OK(parsum__ref_seg_scan(b->in, b->got, b->n, b->d, b->op, NULL,
                                       &descs[k].host, flags));
            if (memcmp(b->want, b->got, b->bytes) != 0)
                tu_report(failures, "  reference: %s and %s differ (%s)\n",
                          descs[0].name, descs[k].name, tag);
        }
        for (int k = 0; k < ndesc && ok; k++) {
            ok = check_call(b, &descs[k], flags, false, tag, failures);
            if (ok && (k == 0 || b->n <= LIGHT_N))
                ok = check_call(b, &descs[k], flags, true, tag, failures);
        }
    }
    tu_download(b->got, b->din, b->bytes);
    if (ok && memcmp(b->got, b->in, b->bytes) != 0)
        tu_report(failures, "  segmented_scan %s %s n=%zu %s: out-of-place "
                  "scans modified the input\n", parsum_dtype_name(b->d),
                  parsum_op_name(b->op), b->n, tag);
}

/* One input under every distribution, as offsets, as flags at bit 0 and
 * as flags at a bit offset that is not a word boundary. */
static void check_input(parsum_dtype d, parsum_op op, const void *in,
                        size_t n, const char *data_tag, size_t *failures)
{
    bufs b;
    bufs_init(&b, d, op, in, n);
    for (int dist = 0; dist < TSEG_DIST_COUNT; dist++) {
        if (*failures >= TSEG_MAX_FAILURES)
            break;
        tu_rng r = tu_rng_for(d, n, (uint64_t)dist, 0x5e9);
        uint64_t *off;
        size_t nseg = tseg_offsets(&r, (tseg_dist)dist, n, &off);
        char tag[64];
        snprintf(tag, sizeof tag, "%s segments (%zu), %s data",
                 tseg_dist_name((tseg_dist)dist), nseg, data_tag);
        tseg_desc descs[3];
        tseg_desc_offsets(&descs[0], off, nseg);
        size_t bit_offsets[2] = {0, dist % 2 ? 37 : 5};
        for (int k = 0; k < 2; k++) {
            size_t nwords;
            uint32_t *fl = tseg_flags(&r, off, nseg, n, bit_offsets[k],
                                      &nwords);
            tseg_desc_flags(&descs[k + 1], fl, nwords, bit_offsets[k]);
            free(fl);
        }
        check_descs(&b, descs, 3, tag, failures);
        for (int k = 0; k < 3; k++)
            tseg_desc_free(&descs[k]);
        free(off);
    }
    bufs_free(&b);
}

static void run_sizes(const scan_case *c, const size_t *sizes, size_t m,
                      tu_data kind, const char *tag)
{
    size_t failures = 0;
    for (size_t k = 0; k < m && failures < TSEG_MAX_FAILURES; k++) {
        size_t n = sizes[k];
        tu_rng r = tu_rng_for(c->dtype, c->op, n, kind);
        void *in = tu_malloc(n * parsum_dtype_size(c->dtype));
        tu_fill(&r, c->dtype, c->op, kind, in, n);
        check_input(c->dtype, c->op, in, n, tag, &failures);
        free(in);
    }
    assert_int_equal(failures, 0);
}

/* One (dtype, op) over the short size list. */
static void test_seg_scan_case(void **state)
{
    const scan_case *c = *state;
    size_t ch = tu_chunk(parsum_dtype_size(c->dtype));
    size_t sizes[] = {0, 1, 31, 33, 63, 65, ch - 1, ch + 1, 1009, 65537};
    run_sizes(c, sizes, sizeof sizes / sizeof sizes[0], TU_DATA_EXACT,
              "exact");
}

/* The whole tu_sizes() list (to 10^6 unless quick) for a few cases. */
static void test_seg_scan_long_sizes(void **state)
{
    (void)state;
    static const scan_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                      {PARSUM_F64, PARSUM_MAX},
                                      {PARSUM_U8, PARSUM_XOR}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t sizes[32];
        size_t m = tu_sizes(parsum_dtype_size(cases[k].dtype), sizes);
        run_sizes(&cases[k], sizes, m, TU_DATA_EXACT, "exact");
    }
}

/* Hundreds of tiles per call, on CUDA with grids of all resident blocks,
 * one block and three blocks (each on a context of its own). Not quick:
 * too slow for the CPU under the sanitizers. */
static void test_seg_scan_tiles(void **state)
{
    (void)state;
    static const scan_case cases[] = {
        {PARSUM_I32, PARSUM_SUM}, {PARSUM_U8, PARSUM_XOR},
        {PARSUM_U16, PARSUM_MIN}, {PARSUM_I64, PARSUM_MAX},
        {PARSUM_U64, PARSUM_SUM}, {PARSUM_F32, PARSUM_MAX},
        {PARSUM_F64, PARSUM_MIN}, {PARSUM_F32, PARSUM_SUM},
        {PARSUM_F64, PARSUM_SUM}};
    if (tu_quick)
        skip();
    const size_t n = 3000017;
    const bool gpu = tu_backend == PARSUM_BACKEND_CUDA;
    const int ncaps = gpu ? TSEG_GRID_CAPS : 1;
    /* The CPU's chunks are the same code at every size: three cases. */
    const size_t ncases = gpu ? sizeof cases / sizeof cases[0] : 3;
    size_t failures = 0;
    for (size_t k = 0; k < ncases; k++) {
        const scan_case *c = &cases[k];
        tu_rng r = tu_rng_for(c->dtype, c->op, n, 0x7113);
        void *in = tu_malloc(n * parsum_dtype_size(c->dtype));
        tu_fill(&r, c->dtype, c->op, TU_DATA_EXACT, in, n);
        for (int g = 0; g < ncaps && failures < TSEG_MAX_FAILURES; g++) {
            parsum_context *mine =
                tu_cuda_context_capped(tseg_grid_caps[g]);
            parsum_context *saved = tu_ctx;
            if (mine != NULL)
                tu_ctx = mine;
            char tag[64];
            snprintf(tag, sizeof tag, "exact, grid cap '%s'",
                     tseg_grid_caps[g]);
            check_input(c->dtype, c->op, in, n, tag, &failures);
            tu_ctx = saved;
            parsum_context_destroy(mine);
        }
        free(in);
    }
    assert_int_equal(failures, 0);
}

/* Runs of one-element segments of one to three CPU chunks and more, each
 * followed by an empty segment or not, some with an empty segment inside,
 * between segments of 50 or more elements; two empty segments at n. The
 * CPU marks a chunk of one-element segments without visiting its offsets
 * one by one (seg_bits.c) and must take the general path where an empty
 * segment or a longer one breaks the run. Returns the segment count. */
static size_t one_element_runs(size_t n, size_t chunk, uint64_t **out)
{
    size_t cap = n + 64, k = 0;
    uint64_t *o = tu_malloc((cap + 1) * sizeof *o), pos = 0;
    o[0] = 0;
    for (size_t b = 0; pos < n && k + 8 < cap; b++) {
        size_t run = chunk * (b % 3 + 1) + (b * 37) % 64;
        for (size_t i = 0; i < run && pos < n && k + 8 < cap; i++) {
            o[++k] = ++pos;
            if (b % 4 == 3 && i == run / 2)
                o[++k] = pos; /* an empty segment inside the run */
        }
        if (b % 2 == 1 && pos < n)
            o[++k] = pos; /* and one at its end */
        pos = pos + 50 + b < n ? pos + 50 + b : n;
        o[++k] = pos;
    }
    if (o[k] < n)
        o[++k] = n;
    o[++k] = n;
    o[++k] = n;
    *out = o;
    return k;
}

static void test_seg_scan_one_element_runs(void **state)
{
    (void)state;
    static const scan_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                      {PARSUM_F64, PARSUM_MAX},
                                      {PARSUM_U8, PARSUM_SUM}};
    size_t failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        parsum_dtype d = cases[c].dtype;
        size_t chunk = tu_chunk(parsum_dtype_size(d));
        size_t n = tu_quick ? 4 * chunk + 17 : 9 * chunk + 17;
        tu_rng r = tu_rng_for(d, cases[c].op, n, 0x0e1e);
        unsigned char *in = tu_malloc(n * parsum_dtype_size(d));
        tu_fill(&r, d, cases[c].op, TU_DATA_EXACT, in, n);
        uint64_t *off;
        size_t nseg = one_element_runs(n, chunk, &off);
        bufs b;
        bufs_init(&b, d, cases[c].op, in, n);
        tseg_desc descs[2];
        tseg_desc_offsets(&descs[0], off, nseg);
        size_t nwords;
        uint32_t *fl = tseg_flags(&r, off, nseg, n, 0, &nwords);
        tseg_desc_flags(&descs[1], fl, nwords, 0);
        free(fl);
        check_descs(&b, descs, 2, "runs of one-element segments", &failures);
        tseg_desc_free(&descs[0]);
        tseg_desc_free(&descs[1]);
        bufs_free(&b);
        free(off);
        free(in);
    }
    assert_int_equal(failures, 0);
}

/* Outputs that start off a vector boundary, as in test_scan.c's
 * test_misaligned_out: every misalignment by whole elements within 64
 * bytes, each flag combination, segments of 1 to 8 elements (blocks with
 * heads) and one segment (blocks without), over nine CPU chunks (two
 * threads or more) and a tail; guards around the output. */
static void test_seg_scan_misaligned_out(void **state)
{
    (void)state;
    static const parsum_dtype dts[] = {PARSUM_U8, PARSUM_I16, PARSUM_F32,
                                       PARSUM_I64};
    static const tseg_dist dists[] = {TSEG_RAND8, TSEG_ONE};
    size_t failures = 0;
    char what[200];
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
        parsum_dtype d = dts[t];
        size_t es = parsum_dtype_size(d), n = 9 * tu_chunk(es) + 77;
        tu_rng r = tu_rng_for(d, PARSUM_SUM, n, 0x5a11);
        unsigned char *in = tu_malloc(n * es), *want = tu_malloc(n * es),
                      *got = tu_malloc(n * es);
        tu_fill(&r, d, PARSUM_SUM, TU_DATA_EXACT, in, n);
        void *din = tu_dev_alloc(n * es);
        tu_upload(din, in, n * es);
        for (size_t k = 0; k < 2; k++) {
            uint64_t *off;
            size_t nseg = tseg_offsets(&r, dists[k], n, &off), nwords;
            uint32_t *fl = tseg_flags(&r, off, nseg, n, 0, &nwords);
            tseg_desc desc;
            tseg_desc_flags(&desc, fl, nwords, 0);
            for (int f = 0; f < 4; f++) {
                TU_OK(parsum__ref_seg_scan(in, want, n, d, PARSUM_SUM, NULL,
                                           &desc.host, all_flags[f]));
                for (size_t shift = es; shift < 64; shift += es) {
                    tu_shifted o = tu_shifted_alloc(n * es, shift);
                    snprintf(what, sizeof what, "segmented_scan %s %s sum %s "
                             "%s n=%zu out at 64k+%zu bytes",
                             parsum_backend_name(tu_backend),
                             parsum_dtype_name(d), tu_flags_name(all_flags[f]),
                             tseg_dist_name(dists[k]), n, shift);
                    parsum_status st = parsum_segmented_scan(
                        tu_ctx, din, o.out, n, d, PARSUM_SUM, &desc.dev,
                        all_flags[f]);
                    tu_check_shifted(st, &o, d, want, got, n, what,
                                     &failures);
                    tu_shifted_free(&o);
                }
            }
            tseg_desc_free(&desc);
            free(fl);
            free(off);
        }
        tu_dev_free(din);
        free(in);
        free(want);
        free(got);
    }
    assert_int_equal(failures, 0);
}

/* Float MIN/MAX with NaN runs: NaN operands are ignored within a segment,
 * and an all-NaN segment stays NaN. */
static void test_seg_scan_nan(void **state)
{
    (void)state;
    static const scan_case cases[] = {{PARSUM_F32, PARSUM_MIN},
                                      {PARSUM_F32, PARSUM_MAX},
                                      {PARSUM_F64, PARSUM_MIN},
                                      {PARSUM_F64, PARSUM_MAX}};
    for (size_t k = 0; k < 4; k++) {
        size_t ch = tu_chunk(parsum_dtype_size(cases[k].dtype));
        size_t sizes[] = {3, 33, ch + 1, 20000};
        run_sizes(&cases[k], sizes, 4, TU_DATA_NAN, "NaN");
    }
}

/* parsum.h's example, on every dtype (the values fit in i8), through both
 * descriptions and the reference, against the literal expected output. */
static void test_worked_example(void **state)
{
    (void)state;
    static const int in_v[16] = {3, 1, 4, 1, 5, 2, 1, 3, 4, 0, 2, 6, 1, 0, 3, 4};
    static const int out_v[16] = {3, 4, 8, 1, 6, 8, 9, 12,
                                  16, 0, 2, 6, 1, 1, 4, 8};
    /* Heads at 0 3 9 11 12: bits 0x1a09. */
    static const uint32_t flags[1] = {0x1a09u};
    static const uint64_t offsets[6] = {0, 3, 9, 11, 12, 16};
    size_t failures = 0;
    for (int d = 0; d < PARSUM_DTYPE_COUNT; d++) {
        parsum_dtype dt = (parsum_dtype)d;
        size_t es = parsum_dtype_size(dt);
        unsigned char in[16 * 8], want[16 * 8], got[16 * 8];
        for (size_t i = 0; i < 16; i++) {
            tu_set(dt, in, i, in_v[i]);
            tu_set(dt, want, i, out_v[i]);
        }
        tseg_desc desc[2];
        tseg_desc_flags(&desc[0], flags, 1, 0);
        tseg_desc_offsets(&desc[1], offsets, 5);
        void *din = tu_dev_alloc(16 * es), *dout = tu_dev_alloc(16 * es);
        tu_upload(din, in, 16 * es);
        for (int k = 0; k < 2; k++) {
            char what[128];
            snprintf(what, sizeof what, "worked example %s %s (reference)",
                     parsum_dtype_name(dt), desc[k].name);
            TU_OK(parsum__ref_seg_scan(in, got, 16, dt, PARSUM_SUM, NULL,
                                       &desc[k].host, 0));
            if (tu_compare(dt, want, got, 16, NULL, what) != 0)
                failures++;
            snprintf(what, sizeof what, "worked example %s %s (%s)",
                     parsum_dtype_name(dt), desc[k].name,
                     parsum_backend_name(tu_backend));
            tu_dev_poison(dout, 16 * es);
            parsum_status st = parsum_segmented_scan(
                tu_ctx, din, dout, 16, dt, PARSUM_SUM, &desc[k].dev, 0);
            if (st != PARSUM_OK) {
                tu_report(&failures, "  %s: returned %s: %s\n", what,
                          parsum_status_name(st), parsum_last_error(tu_ctx));
            } else {
                tu_download(got, dout, 16 * es);
                if (tu_compare(dt, want, got, 16, NULL, what) != 0)
                    failures++;
            }
            tseg_desc_free(&desc[k]);
        }
        tu_dev_free(din);
        tu_dev_free(dout);
    }
    assert_int_equal(failures, 0);
}

/* The float error bound of parsum.h per segment: a prefix of k terms is
 * within k * eps * sum|x| (plus the rounding of the reference itself) of
 * the exact sum, the sum restarting at each head. */
static void sum_bounds(parsum_dtype d, const unsigned char *in, size_t n,
                       const parsum_segments *seg, unsigned flags,
                       unsigned char *want, double *bound)
{
    double eps = d == PARSUM_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
    int excl = (flags & PARSUM_EXCLUSIVE) != 0;
    size_t s = 0; /* offsets: the segment that holds element i */
    for (size_t i = 0; i < n;) {
        size_t e = i + 1;
        if (seg->kind == PARSUM_SEG_OFFSETS) {
            while (seg->offsets[s + 1] <= i)
                s++;
            e = (size_t)seg->offsets[s + 1];
        } else {
            while (e < n &&
                   !parsum__ref_flag(seg->flags, seg->flags_bit_offset, e))
                e++;
        }
        long double acc = 0, abs_acc = 0;
        for (size_t k = 0; k < e - i; k++) {
            size_t j = (flags & PARSUM_REVERSE) ? e - 1 - k : i + k;
            long double x = tu_get(d, in, j);
            if (!excl) {
                acc += x;
                abs_acc += fabsl(x);
            }
            tu_set(d, want, j, (double)acc);
            bound[j] = (double)((long double)(k + !excl) * eps * abs_acc +
                                eps * fabsl(acc));
            if (excl) {
                acc += x;
                abs_acc += fabsl(x);
            }
        }
        i = e;
    }
}

/* Results of the four scans of one input with `threads` threads. */
static unsigned char *seg_run(const bufs *b, const parsum_segments *dseg,
                              int threads, size_t *failures)
{
    unsigned char *res = tu_malloc(4 * b->bytes);
    TU_OK(parsum_context_set_threads(tu_ctx, threads));
    for (int f = 0; f < 4; f++) {
        tu_dev_poison(b->dout, b->bytes);
        parsum_status st = parsum_segmented_scan(tu_ctx, b->din, b->dout, b->n,
                                                 b->d, PARSUM_SUM, dseg,
                                                 all_flags[f]);
        if (st != PARSUM_OK)
            tu_report(failures, "  segmented_scan %s sum %s threads=%d: %s: "
                      "%s\n", parsum_dtype_name(b->d),
                      tu_flags_name(all_flags[f]), threads,
                      parsum_status_name(st), parsum_last_error(tu_ctx));
        tu_download(res + (size_t)f * b->bytes, b->dout, b->bytes);
    }
    return res;
}

/* A float SUM input with rounding data and its segments as flags at bit
 * offset 5, uploaded (the determinism tests). */
typedef struct round_input {
    unsigned char *in;
    uint64_t *off;
    uint32_t *fl;
    tseg_desc desc;
    bufs b;
} round_input;

static void round_input_init(round_input *ri, parsum_dtype d, size_t n,
                             tseg_dist dist, uint64_t seed)
{
    tu_rng r = tu_rng_for(d, n, dist, seed);
    ri->in = tu_malloc(n * parsum_dtype_size(d));
    tu_fill(&r, d, PARSUM_SUM, TU_DATA_ROUNDING, ri->in, n);
    size_t nseg = tseg_offsets(&r, dist, n, &ri->off), nwords;
    ri->fl = tseg_flags(&r, ri->off, nseg, n, 5, &nwords);
    tseg_desc_flags(&ri->desc, ri->fl, nwords, 5);
    bufs_init(&ri->b, d, PARSUM_SUM, ri->in, n);
}

static void round_input_free(round_input *ri)
{
    bufs_free(&ri->b);
    tseg_desc_free(&ri->desc);
    free(ri->fl);
    free(ri->off);
    free(ri->in);
}

/* Float SUM with rounding inputs: the same bits for 1, 2, 7 and again 7
 * threads, and every output within the documented bound. */
static void test_determinism(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 7, 7};
    static const tseg_dist dists[] = {TSEG_POWER, TSEG_RAND8, TSEG_ONE};
    size_t failures = 0;
    for (int di = 0; di < 2; di++) {
        parsum_dtype d = di ? PARSUM_F64 : PARSUM_F32;
        /* 17 chunks: enough for several threads of the CPU backend. */
        size_t es = parsum_dtype_size(d), n = 17 * tu_chunk(es) + 5;
        for (int k = 0; k < 3 && failures < TSEG_MAX_FAILURES; k++) {
            round_input ri;
            round_input_init(&ri, d, n, dists[k], 0xde7);
            unsigned char *want = tu_malloc(n * es);
            double *bound = tu_malloc(n * sizeof *bound);
            unsigned char *first =
                seg_run(&ri.b, &ri.desc.dev, threads[0], &failures);
            for (int t = 1; t < 4; t++) {
                unsigned char *res =
                    seg_run(&ri.b, &ri.desc.dev, threads[t], &failures);
                if (memcmp(res, first, 4 * ri.b.bytes) != 0)
                    tu_report(&failures, "  segmented_scan %s sum n=%zu %s "
                              "segments: %d threads differ from %d\n",
                              parsum_dtype_name(d), n,
                              tseg_dist_name(dists[k]), threads[t],
                              threads[0]);
                free(res);
            }
            for (int f = 0; f < 4; f++) {
                char what[160];
                sum_bounds(d, ri.in, n, &ri.desc.host, all_flags[f], want,
                           bound);
                snprintf(what, sizeof what, "segmented_scan %s sum %s n=%zu "
                         "%s segments, rounding data: error bound",
                         parsum_dtype_name(d), tu_flags_name(all_flags[f]), n,
                         tseg_dist_name(dists[k]));
                if (tu_compare(d, want, first + (size_t)f * ri.b.bytes, n,
                               bound, what) != 0)
                    failures++;
            }
            TU_OK(parsum_context_set_threads(tu_ctx, 0));
            free(first);
            free(want);
            free(bound);
            round_input_free(&ri);
        }
    }
    assert_int_equal(failures, 0);
}

/* CUDA: float SUM with rounding inputs over hundreds of tiles gives the
 * same bits under every grid cap (each moves every tile's look-back). */
static void test_determinism_grids(void **state)
{
    (void)state;
    static const tseg_dist dists[] = {TSEG_RAND8, TSEG_ONE, TSEG_POWER};
    if (tu_backend != PARSUM_BACKEND_CUDA || tu_quick)
        skip();
    size_t failures = 0;
    const size_t n = 3000017;
    for (int di = 0; di < 2; di++) {
        parsum_dtype d = di ? PARSUM_F64 : PARSUM_F32;
        for (int k = 0; k < 3 && failures < TSEG_MAX_FAILURES; k++) {
            round_input ri;
            round_input_init(&ri, d, n, dists[k], 0x9e1d);
            unsigned char *first = NULL;
            for (int g = 0; g < TSEG_GRID_CAPS; g++) {
                parsum_context *mine =
                tu_cuda_context_capped(tseg_grid_caps[g]);
                parsum_context *saved = tu_ctx;
                if (mine != NULL)
                    tu_ctx = mine;
                unsigned char *res =
                    seg_run(&ri.b, &ri.desc.dev, 0, &failures);
                tu_ctx = saved;
                parsum_context_destroy(mine);
                if (first == NULL) {
                    first = res;
                    continue;
                }
                if (memcmp(res, first, 4 * ri.b.bytes) != 0)
                    tu_report(&failures, "  segmented_scan %s sum n=%zu %s "
                              "segments: grid cap '%s' differs from none\n",
                              parsum_dtype_name(d), n,
                              tseg_dist_name(dists[k]), tseg_grid_caps[g]);
                free(res);
            }
            free(first);
            round_input_free(&ri);
        }
    }
    assert_int_equal(failures, 0);
}

#define SC(D, O)                                                             \
    {"seg_scan_" #D "_" #O, test_seg_scan_case, NULL, NULL,                  \
     &(scan_case){PARSUM_##D, PARSUM_##O}}
#define INT_CASES(D)                                                         \
    SC(D, SUM), SC(D, PROD), SC(D, MIN), SC(D, MAX), SC(D, AND), SC(D, OR),  \
        SC(D, XOR)
#define FLOAT_CASES(D) SC(D, SUM), SC(D, PROD), SC(D, MIN), SC(D, MAX)

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_worked_example),
    INT_CASES(I8),   INT_CASES(U8),   INT_CASES(I16),  INT_CASES(U16),
    INT_CASES(I32),  INT_CASES(U32),  INT_CASES(I64),  INT_CASES(U64),
    FLOAT_CASES(F32), FLOAT_CASES(F64),
    cmocka_unit_test(test_seg_scan_long_sizes),
    cmocka_unit_test(test_seg_scan_tiles),
    cmocka_unit_test(test_seg_scan_one_element_runs),
    cmocka_unit_test(test_seg_scan_misaligned_out),
    cmocka_unit_test(test_seg_scan_nan),
    cmocka_unit_test(test_determinism),
    cmocka_unit_test(test_determinism_grids),
};

PARSUM_TEST_MAIN(test_segmented)
{
    tu_init("test_segmented");
    return tu_finish(TU_RUN("test_segmented", tests));
}
