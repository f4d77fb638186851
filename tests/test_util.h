/*
 * test_util.h - what every parsum test program shares: choosing the backend
 * (PARSUM_TEST_BACKEND=cpu|cuda, default cpu; exit 77 = "skipped" when the
 * backend is not present), a seeded PRNG, input generators tuned per dtype
 * and operator, output poisoning, element comparison with readable failure
 * reports, and round trips between host memory and the context's memory
 * (so one test source runs on the CPU and on a GPU alike).
 *
 * Environment:
 *   PARSUM_TEST_BACKEND  cpu (default) or cuda
 *   PARSUM_TEST_SEED     base seed of every random input (default fixed, so
 *                        runs are reproducible); printed at start and with
 *                        every mismatch
 *   PARSUM_TEST_QUICK=1  drop the largest sizes (10^6 and above)
 *   PARSUM_TEST_FILTER   run only the tests whose names match this cmocka
 *                        pattern (* and ? wildcards), e.g. for the slow
 *                        sanitizer runs
 */
#ifndef PARSUM_TEST_UTIL_H
#define PARSUM_TEST_UTIL_H

#include "parsum.h"
#include "test_main.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Exit status that CTest maps to "skipped" (SKIP_RETURN_CODE). */
#define TU_SKIP_EXIT 77
/* Byte written over outputs before a call, so unwritten elements show. */
#define TU_POISON 0xA5
/* Mismatches printed per check before the rest are only counted. */
#define TU_MAX_REPORTS 5

/* The context every test of the program uses, created by tu_init(). */
extern parsum_context *tu_ctx;
extern parsum_backend tu_backend;
extern uint64_t tu_seed;  /* base seed */
extern bool tu_quick;     /* PARSUM_TEST_QUICK set */

/* Reads the environment, creates tu_ctx and prints one line saying what
 * runs. Exits with TU_SKIP_EXIT when the asked-for backend is not built in
 * or has no device, and with 2 on a bad PARSUM_TEST_BACKEND. */
void tu_init(const char *program);
/* Destroys tu_ctx; returns rc unchanged (for `return tu_finish(rc);`). */
int tu_finish(int rc);
/* "scan (cpu)": the cmocka group name for a program on tu_backend. */
const char *tu_group_name(const char *program);
#define TU_RUN(program, tests) \
    cmocka_run_group_tests_name(tu_group_name(program), tests, NULL, NULL)

/* ---- PRNG: splitmix64 -------------------------------------------------- */
typedef struct tu_rng {
    uint64_t state;
} tu_rng;
/* A generator for one case, derived from the base seed and up to four
 * numbers naming the case (dtype, op, n, ...), so every case draws the same
 * input whatever ran before it: the base seed reproduces any case. */
tu_rng tu_rng_for(uint64_t a, uint64_t b, uint64_t c, uint64_t d);
uint64_t tu_next(tu_rng *r);
double tu_uniform(tu_rng *r); /* [0, 1) */
uint64_t tu_below(tu_rng *r, uint64_t bound); /* [0, bound) */

/* ---- dtypes ------------------------------------------------------------ */
bool tu_is_float(parsum_dtype d);
/* Number of ops defined on d (7 for integers, 4 for floats). */
int tu_op_count(parsum_dtype d);
/* "excl|rev" etc. */
const char *tu_flags_name(unsigned flags);
/* Element i of buf as a double (integers converted, may round for 64-bit). */
double tu_get(parsum_dtype d, const void *buf, size_t i);
/* Writes v (an integer value for integer dtypes) as element i of buf. */
void tu_set(parsum_dtype d, void *buf, size_t i, double v);
/* Formats element p as "value (0xbits)" into buf (at least 64 bytes). */
const char *tu_format(parsum_dtype d, const void *p, char *buf);

/* ---- inputs ------------------------------------------------------------ */
typedef enum tu_data {
    /* Values with which every evaluation order gives the same bits:
     * integers of all kinds (wrapping is exact); float SUM: integers in
     * [-8, 8] (exact for f32 while n * 8 < 2^24, so n < 2^21: the size
     * lists stay below); float PROD: +-1; float MIN/MAX: arbitrary floats with
     * repeats, +-0 and +-inf. Integer PROD uses odd values (products never
     * collapse to 0); AND and OR flip about 2*bits bits over the whole
     * array, so prefixes keep changing all along. */
    TU_DATA_EXACT,
    /* As EXACT, except float SUM (random magnitudes, non-integers) and
     * float PROD (values near 1): rounding depends on evaluation order. */
    TU_DATA_ROUNDING,
    /* Float MIN/MAX with about a quarter NaNs, NaN runs at both ends. */
    TU_DATA_NAN
} tu_data;
void tu_fill(tu_rng *r, parsum_dtype d, parsum_op op, tu_data kind, void *buf,
             size_t n);

/* ---- sizes ------------------------------------------------------------- */
/* Chunk length in elements of the CPU backend for elements of this size. */
size_t tu_chunk(size_t elem_size);
/* The standard size list for elements of elem_size bytes: 0 1 2 3 31 32 33,
 * chunk +-1, 2 and 3 chunks (+1), around 8 chunks, 1009, 65537 and, unless
 * quick, 1000003. Sorted, no duplicates; returns the count (<= 32). */
size_t tu_sizes(size_t elem_size, size_t *sizes);

/* ---- host buffers ------------------------------------------------------ */
/* malloc that fails the test on NULL; never returns NULL (even for 0). */
void *tu_malloc(size_t bytes);

/* ---- context memory ---------------------------------------------------- */
void *tu_dev_alloc(size_t bytes); /* fails the test if allocation fails */
void tu_dev_free(void *p);
void tu_upload(void *dev, const void *host, size_t bytes);
void tu_download(void *host, const void *dev, size_t bytes); /* syncs first */
void tu_dev_poison(void *dev, size_t bytes);

/* An output of `bytes` bytes in context memory that starts `shift` bytes
 * past a 64-byte boundary, with TU_GUARD poisoned bytes on either side;
 * all of it poisoned. tu_shifted_guards counts the guard bytes a call
 * changed (0 when it wrote only inside the output). */
#define TU_GUARD 256
typedef struct tu_shifted {
    unsigned char *base, *out;
    size_t bytes, shift;
} tu_shifted;
tu_shifted tu_shifted_alloc(size_t bytes, size_t shift);
size_t tu_shifted_guards(const tu_shifted *s);
void tu_shifted_free(tu_shifted *s);
/* The checks of a call that wrote n elements of d to o->out and returned
 * st: st is PARSUM_OK, the output equals want bit for bit and no guard
 * byte changed. Each failure is reported with `what` and counted in
 * *failures; got is host scratch of n elements. */
void tu_check_shifted(parsum_status st, const tu_shifted *o, parsum_dtype d,
                      const void *want, void *got, size_t n,
                      const char *what, size_t *failures);

/* A CUDA context whose pipelined scans run on a grid of at most `cap`
 * blocks (PARSUM_CUDA_SCAN_BLOCKS, read when a context is set up; unset
 * again here), to move every tile's look-back; NULL for cap "" (no cap:
 * keep tu_ctx). The caller destroys it. */
parsum_context *tu_cuda_context_capped(const char *cap);

/* ---- comparison -------------------------------------------------------- */
/* Compares n elements of d. bound == NULL: exact (bit equality; for floats
 * any two NaNs are equal). Otherwise |got[i] - want[i]| <= bound[i], with
 * NaN matching only NaN. Prints the first TU_MAX_REPORTS mismatches with
 * `what` (the case: backend, dtype, op, flags, n, seed) and returns the
 * number of mismatching elements. */
size_t tu_compare(parsum_dtype d, const void *want, const void *got, size_t n,
                  const double *bound, const char *what);
/* As tu_compare without bounds, except that float MIN/MAX compare values
 * (parsum.h: -0.0 and +0.0 "may be returned as either"). */
size_t tu_compare_op(parsum_dtype d, parsum_op op, const void *want,
                     const void *got, size_t n, const char *what);
/* One element: bit equality (bound < 0) or |want - got| <= bound (bound 0:
 * value equality); for floats any two NaNs are equal. */
bool tu_equal1(parsum_dtype d, const void *want, const void *got, double bound);

/* Counts a failed check: prints the message (printf format) and adds one
 * to *failures. Tests run all their cases, then assert failures == 0, so
 * one run lists every failing case. */
void tu_report(size_t *failures, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Asserts that st == PARSUM_OK, printing the status name and the
 * context's last error otherwise. */
#define TU_OK(expr)                                                          \
    do {                                                                     \
        parsum_status tu_st_ = (expr);                                       \
        if (tu_st_ != PARSUM_OK) {                                           \
            print_error("%s:%d: %s returned %s: %s\n", __FILE__, __LINE__,   \
                        #expr, parsum_status_name(tu_st_),                   \
                        parsum_last_error(tu_ctx));                          \
            fail();                                                          \
        }                                                                    \
    } while (0)

#endif
