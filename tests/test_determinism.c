/*
 * test_determinism.c - parsum promises the same result bits whatever the
 * thread count (parsum.h: chunks of a fixed size, combined in chunk order).
 * Checked here with 1, 2, 7 and 9 threads (parsum_context_set_threads;
 * from 8 threads the CPU scan claims its chunks as it starts them, below
 * a chunk ahead: both ways run), and for two runs with the same count,
 * for F32 SUM, F64 SUM, F32 PROD and I32 SUM: scans with all four flag
 * combinations, out of place and in place, and reduce, at sizes of one
 * chunk plus one (fewer chunks than threads), 5 chunks + 17, 16 chunks +
 * 5, 41 chunks + 3 (enough chunks for 9 threads to run at once) and below
 * one chunk.
 *
 * The float inputs are random non-integers (values near 1 for PROD), so
 * rounding depends on the evaluation order: any order that depends on the
 * thread split shows as differing bits. On CUDA set_threads has nothing
 * to set; the runs instead cap the pipelined scan's grid (the environment
 * variable PARSUM_CUDA_SCAN_BLOCKS, read when a context is set up: each
 * run gets a context of its own) at all resident blocks, 1 block, 3
 * blocks and all again, which changes how far back each tile's
 * look-back finds a published prefix, and add a size of
 * about 3 million elements (hundreds of tiles): a look-back whose
 * grouping followed its timing would show here.
 *
 * A second test runs exact-data scans with more threads than cores (3, 7
 * and 9) against the serial reference, since the other tests run with the
 * default count only.
 */
#include "test_util.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct det_case {
    parsum_dtype dtype;
    parsum_op op;
} det_case;

static const det_case det_cases[] = {{PARSUM_F32, PARSUM_SUM},
                                     {PARSUM_F64, PARSUM_SUM},
                                     {PARSUM_F32, PARSUM_PROD},
                                     {PARSUM_I32, PARSUM_SUM}};
static const int thread_counts[] = {1, 2, 7, 7, 9};
#define N_RUNS (sizeof thread_counts / sizeof thread_counts[0])
/* The CUDA runs' grid caps, per run ("" = no cap). */
static const char *const cuda_block_caps[N_RUNS] = {"", "1", "3", "", ""};

/* Results of one run: 4 scans out of place, 4 in place, then reduce. */
static unsigned char *run_all(parsum_dtype d, parsum_op op, const void *in,
                              size_t n, int threads, size_t *failures)
{
    size_t es = parsum_dtype_size(d), bytes = n * es;
    unsigned char *res = tu_malloc(8 * bytes + es);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    TU_OK(parsum_context_set_threads(tu_ctx, threads));
    if (tu_backend == PARSUM_BACKEND_CPU &&
        parsum_context_threads(tu_ctx) != threads)
        tu_report(failures, "  parsum_context_threads = %d after "
                  "set_threads(%d)\n", parsum_context_threads(tu_ctx), threads);
    tu_upload(din, in, bytes);
    for (unsigned f = 0; f < 4; f++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            void *src = din;
            if (inplace) {
                tu_upload(dout, in, bytes);
                src = dout;
            } else {
                tu_dev_poison(dout, bytes);
            }
            parsum_status st = parsum_scan(tu_ctx, src, dout, n, d, op, f);
            if (st != PARSUM_OK)
                tu_report(failures, "  scan %s %s %s n=%zu threads=%d: %s\n",
                          parsum_dtype_name(d), parsum_op_name(op),
                          tu_flags_name(f), n, threads,
                          parsum_status_name(st));
            tu_download(res + (2 * f + (unsigned)inplace) * bytes, dout, bytes);
        }
    }
    memset(res + 8 * bytes, TU_POISON, es);
    parsum_status st = parsum_reduce(tu_ctx, din, n, d, op, res + 8 * bytes);
    if (st != PARSUM_OK)
        tu_report(failures, "  reduce %s %s n=%zu threads=%d: %s\n",
                  parsum_dtype_name(d), parsum_op_name(op), n, threads,
                  parsum_status_name(st));
    tu_dev_free(din);
    tu_dev_free(dout);
    return res;
}

/* run_all for run number `run`: on CUDA under the run's grid cap, on a
 * context of its own (tu_cuda_context_capped) standing in for tu_ctx
 * meanwhile. */
static unsigned char *run_number(size_t run, parsum_dtype d, parsum_op op,
                                 const void *in, size_t n, size_t *failures)
{
    if (tu_backend != PARSUM_BACKEND_CUDA)
        return run_all(d, op, in, n, thread_counts[run], failures);
    parsum_context *mine = tu_cuda_context_capped(cuda_block_caps[run]);
    parsum_context *saved = tu_ctx;
    if (mine != NULL)
        tu_ctx = mine;
    unsigned char *res = run_all(d, op, in, n, thread_counts[run], failures);
    tu_ctx = saved;
    parsum_context_destroy(mine);
    return res;
}

static void test_thread_count_invariance(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t c = 0; c < sizeof det_cases / sizeof det_cases[0]; c++) {
        parsum_dtype d = det_cases[c].dtype;
        parsum_op op = det_cases[c].op;
        size_t es = parsum_dtype_size(d), chunk = tu_chunk(es);
        /* The CPU backend gives a thread at most one in 4 chunks (small
         * inputs run serially), so 9 threads need 36 chunks or more. */
        size_t sizes[] = {1009,           chunk + 1,      5 * chunk + 17,
                          16 * chunk + 5, 41 * chunk + 3, 3000017};
        size_t nsizes = sizeof sizes / sizeof sizes[0];
        if (tu_backend != PARSUM_BACKEND_CUDA)
            nsizes--; /* the last size is for the GPU's tiles */
        for (size_t k = 0; k < nsizes; k++) {
            size_t n = sizes[k], bytes = n * es;
            tu_rng r = tu_rng_for(d, op, n, TU_DATA_ROUNDING);
            void *in = tu_malloc(bytes);
            tu_fill(&r, d, op, TU_DATA_ROUNDING, in, n);
            unsigned char *base = run_number(0, d, op, in, n, &failures);
            for (size_t t = 1; t < N_RUNS; t++) {
                unsigned char *res = run_number(t, d, op, in, n, &failures);
                for (unsigned part = 0; part < 9; part++) {
                    size_t len = part < 8 ? n : 1;
                    char what[200];
                    snprintf(what, sizeof what,
                             "%s %s %s %s n=%zu: %d threads, grid cap "
                             "'%s' (run %zu) vs run 0 (seed 0x%llx)",
                             parsum_backend_name(tu_backend),
                             parsum_dtype_name(d), parsum_op_name(op),
                             part == 8 ? "reduce"
                                       : tu_flags_name(part / 2),
                             n, thread_counts[t], cuda_block_caps[t], t,
                             (unsigned long long)tu_seed);
                    /* Bit equality, NaN included: compare as bytes. */
                    const unsigned char *x = base + part * bytes;
                    const unsigned char *y = res + part * bytes;
                    if (memcmp(x, y, len * es) != 0) {
                        tu_compare(d, x, y, len, NULL, what);
                        tu_report(&failures, "  %s%s: result bits differ\n",
                                  what, part < 8 && (part & 1) ? " in-place"
                                                               : "");
                    }
                }
                free(res);
            }
            free(base);
            free(in);
        }
    }
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    assert_int_equal(failures, 0);
}

/* Exact data, 3, 7 and 9 threads, against the reference. */
static void test_many_threads_vs_ref(void **state)
{
    (void)state;
    static const det_case cases[] = {{PARSUM_I32, PARSUM_SUM},
                                     {PARSUM_U8, PARSUM_XOR},
                                     {PARSUM_F64, PARSUM_MAX},
                                     {PARSUM_I16, PARSUM_MIN},
                                     {PARSUM_F32, PARSUM_SUM}};
    static const int counts[] = {3, 7, 9};
    size_t failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        parsum_dtype d = cases[c].dtype;
        parsum_op op = cases[c].op;
        size_t es = parsum_dtype_size(d), n = 41 * tu_chunk(es) + 17;
        tu_rng r = tu_rng_for(d, op, n, TU_DATA_EXACT);
        unsigned char *in = tu_malloc(n * es), *want = tu_malloc(n * es);
        tu_fill(&r, d, op, TU_DATA_EXACT, in, n);
        for (size_t t = 0; t < 2; t++) {
            unsigned char *res = run_all(d, op, in, n, counts[t], &failures);
            for (unsigned f = 0; f < 4; f++) {
                parsum__ref_scan(in, want, n, d, op, f);
                for (unsigned inplace = 0; inplace < 2; inplace++) {
                    char what[160];
                    snprintf(what, sizeof what,
                             "scan %s %s %s n=%zu %s threads=%d (seed 0x%llx)",
                             parsum_dtype_name(d), parsum_op_name(op),
                             tu_flags_name(f), n,
                             inplace ? "in-place" : "out-of-place", counts[t],
                             (unsigned long long)tu_seed);
                    if (tu_compare_op(d, op, want,
                                      res + (2 * f + inplace) * n * es, n,
                                      what) != 0)
                        failures++;
                }
            }
            parsum__ref_reduce(in, n, d, op, want);
            if (tu_compare_op(d, op, want, res + 8 * n * es, 1, "reduce") != 0)
                failures++;
            free(res);
        }
        free(in);
        free(want);
    }
    TU_OK(parsum_context_set_threads(tu_ctx, 0));
    assert_int_equal(failures, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_thread_count_invariance),
    cmocka_unit_test(test_many_threads_vs_ref),
};

PARSUM_TEST_MAIN(test_determinism)
{
    tu_init("test_determinism");
    return tu_finish(TU_RUN("test_determinism", tests));
}
