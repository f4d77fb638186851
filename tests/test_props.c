/*
 * test_props.c - algebraic properties of a backend's own results, on
 * inputs where float rounding depends on evaluation order (random
 * non-integer floats for SUM, values near 1 for PROD):
 *
 *  1. the last element of an inclusive scan (the first, for a reverse
 *     scan) equals parsum_reduce of the same input: exact for integers and
 *     MIN/MAX, within the documented rounding bound for float SUM/PROD;
 *  2. a reverse scan of x equals the reverse of the forward scan of
 *     reversed x: exact for integers and MIN/MAX, within a bound for float
 *     SUM/PROD (exact only if the backend's order is mirror-symmetric,
 *     which parsum does not promise);
 *  3. exclusive[i] == inclusive[i-1] and exclusive[0] == identity (mirrored
 *     for reverse scans), EXACTLY for every dtype on the CPU, floats
 *     included (parsum.h promises it there); on CUDA exact for integers and
 *     MIN/MAX, and for float SUM/PROD within the rounding bound (its
 *     look-back combines a tile's prefix in another fixed order than the
 *     previous tile's last output, as parsum.h documents).
 *
 * Why: the comparison with the serial reference (test_scan.c) uses inputs
 * for which every order gives the same bits; these checks tie the
 * primitives together where rounding can differ.
 */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prop_case {
    parsum_dtype dtype;
    parsum_op op;
} prop_case;

/* Absolute rounding bounds (factor * k * eps * magnitude) for each element
 * of a float SUM/PROD scan result `ref`, k the number of terms, the
 * magnitude the sum of |x| (SUM) or |ref| (PROD); NULL means exact. */
static double *rounding_bounds(parsum_dtype d, parsum_op op, const void *in,
                               const void *ref, size_t n, unsigned flags,
                               double factor)
{
    if (!tu_is_float(d) || (op != PARSUM_SUM && op != PARSUM_PROD))
        return NULL;
    double eps = d == PARSUM_F32 ? FLT_EPSILON : DBL_EPSILON;
    double *b = tu_malloc((n > 0 ? n : 1) * sizeof *b);
    double abs_acc = 0;
    for (size_t s = 0; s < n; s++) {
        size_t i = (flags & PARSUM_REVERSE) ? n - 1 - s : s;
        abs_acc += fabs(tu_get(d, in, i));
        double mag = op == PARSUM_SUM ? abs_acc : fabs(tu_get(d, ref, i));
        b[i] = factor * (double)(s + 1) * eps * mag;
    }
    return b;
}

/* Compares within bounds b, or (b NULL) exactly, float MIN/MAX by value. */
static size_t cmp(parsum_dtype d, parsum_op op, const void *want,
                  const void *got, size_t n, const double *b, const char *what)
{
    return b != NULL ? tu_compare(d, want, got, n, b, what)
                     : tu_compare_op(d, op, want, got, n, what);
}

/* Scan of a host input on the backend, result in host memory. */
static bool scan_host(parsum_dtype d, parsum_op op, const void *in, void *out,
                      size_t n, unsigned flags, size_t *failures)
{
    size_t bytes = n * parsum_dtype_size(d);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    tu_upload(din, in, bytes);
    tu_dev_poison(dout, bytes);
    parsum_status st = parsum_scan(tu_ctx, din, dout, n, d, op, flags);
    if (st == PARSUM_OK)
        tu_download(out, dout, bytes);
    else
        tu_report(failures, "  scan %s %s %s n=%zu returned %s: %s\n",
                  parsum_dtype_name(d), parsum_op_name(op),
                  tu_flags_name(flags), n, parsum_status_name(st),
                  parsum_last_error(tu_ctx));
    tu_dev_free(din);
    tu_dev_free(dout);
    return st == PARSUM_OK;
}

static void reverse_elems(void *buf, size_t n, size_t es)
{
    unsigned char *p = buf, t[8];
    for (size_t i = 0; i < n / 2; i++) {
        memcpy(t, p + i * es, es);
        memcpy(p + i * es, p + (n - 1 - i) * es, es);
        memcpy(p + (n - 1 - i) * es, t, es);
    }
}

static void check_props(parsum_dtype d, parsum_op op, size_t n,
                        size_t *failures)
{
    size_t es = parsum_dtype_size(d), bytes = n * es;
    tu_rng r = tu_rng_for(d, op, n, TU_DATA_ROUNDING);
    unsigned char *in = tu_malloc(bytes), *rin = tu_malloc(bytes);
    unsigned char *s[4], *t = tu_malloc(bytes);
    tu_fill(&r, d, op, TU_DATA_ROUNDING, in, n);
    memcpy(rin, in, bytes);
    reverse_elems(rin, n, es);
    char what[200];
    const char *be = parsum_backend_name(tu_backend);
    const char *dn = parsum_dtype_name(d), *on = parsum_op_name(op);
    unsigned long long seed = (unsigned long long)tu_seed;

    /* s[flags]: the four scans of in. */
    bool ok = true;
    for (unsigned f = 0; f < 4; f++) {
        s[f] = tu_malloc(bytes);
        ok = scan_host(d, op, in, s[f], n, f, failures) && ok;
    }
    if (!ok)
        goto out;

    /* 1. inclusive end == reduce. */
    unsigned char red[8];
    void *din = tu_dev_alloc(bytes);
    tu_upload(din, in, bytes);
    parsum_status st = parsum_reduce(tu_ctx, din, n, d, op, red);
    tu_dev_free(din);
    if (st != PARSUM_OK) {
        tu_report(failures, "  reduce %s %s n=%zu returned %s\n", dn, on, n,
                  parsum_status_name(st));
    } else if (n > 0) {
        double *b = rounding_bounds(d, op, in, s[0], n, 0, 2.0);
        snprintf(what, sizeof what,
                 "%s %s %s n=%zu: inclusive[n-1] vs reduce (seed 0x%llx)", be,
                 dn, on, n, seed);
        if (cmp(d, op, s[0] + (n - 1) * es, red, 1, b ? &b[n - 1] : NULL,
                what) != 0)
            (*failures)++;
        free(b);
        b = rounding_bounds(d, op, in, s[PARSUM_REVERSE], n, PARSUM_REVERSE,
                            2.0);
        snprintf(what, sizeof what,
                 "%s %s %s n=%zu: reverse inclusive[0] vs reduce (seed "
                 "0x%llx)", be, dn, on, n, seed);
        if (cmp(d, op, s[PARSUM_REVERSE], red, 1, b ? &b[0] : NULL, what) != 0)
            (*failures)++;
        free(b);
    }

    /* 2. reverse scan of x == reverse(forward scan of reversed x). */
    for (unsigned excl = 0; excl < 2; excl++) {
        unsigned rf = PARSUM_REVERSE | excl;
        if (!scan_host(d, op, rin, t, n, excl, failures))
            continue;
        reverse_elems(t, n, es);
        double *b = rounding_bounds(d, op, in, s[rf], n, rf, 2.0);
        snprintf(what, sizeof what,
                 "%s %s %s n=%zu: %s scan vs reversed forward scan of "
                 "reversed input (seed 0x%llx)", be, dn, on, n,
                 tu_flags_name(rf), seed);
        if (cmp(d, op, s[rf], t, n, b, what) != 0)
            (*failures)++;
        free(b);
    }

    /* 3. exclusive == shifted inclusive, exactly. */
    if (n > 0) {
        unsigned char id[8];
        TU_OK(parsum_op_identity(d, op, id));
        for (unsigned rev = 0; rev < 2; rev++) {
            const unsigned char *inc = s[rev ? PARSUM_REVERSE : 0];
            const unsigned char *exc =
                s[PARSUM_EXCLUSIVE | (rev ? PARSUM_REVERSE : 0)];
            /* want = identity followed by inclusive shifted by one. */
            if (rev) {
                memcpy(t, inc + es, bytes - es);
                memcpy(t + bytes - es, id, es);
            } else {
                memcpy(t, id, es);
                memcpy(t + es, inc, bytes - es);
            }
            snprintf(what, sizeof what,
                     "%s %s %s n=%zu: %s vs shifted %s (seed 0x%llx)", be, dn,
                     on, n, rev ? "excl|rev" : "excl",
                     rev ? "incl|rev" : "incl", seed);
            double *b3 = NULL;
            if (tu_backend == PARSUM_BACKEND_CUDA)
                b3 = rounding_bounds(d, op, in, t, n,
                                     rev ? PARSUM_REVERSE : 0, 2.0);
            if (tu_compare(d, t, exc, n, b3, what) != 0)
                (*failures)++;
            free(b3);
        }
    }

out:
    for (unsigned f = 0; f < 4; f++)
        free(s[f]);
    free(in);
    free(rin);
    free(t);
}

static void test_props_case(void **state)
{
    const prop_case *c = *state;
    size_t chunk = tu_chunk(parsum_dtype_size(c->dtype));
    size_t sizes[] = {1,         2,         33,    chunk - 1, chunk + 1,
                      3 * chunk + 1, 8 * chunk + 1, 65537};
    size_t failures = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        check_props(c->dtype, c->op, sizes[k], &failures);
    assert_int_equal(failures, 0);
}

#define PC(D, O)                                                             \
    {"props_" #D "_" #O, test_props_case, NULL, NULL,                        \
     &(prop_case){PARSUM_##D, PARSUM_##O}}
#define INT_CASES(D)                                                         \
    PC(D, SUM), PC(D, PROD), PC(D, MIN), PC(D, MAX), PC(D, AND), PC(D, OR),  \
        PC(D, XOR)
#define FLOAT_CASES(D) PC(D, SUM), PC(D, PROD), PC(D, MIN), PC(D, MAX)

static const struct CMUnitTest tests[] = {
    INT_CASES(I8),  INT_CASES(U8),  INT_CASES(I16), INT_CASES(U16),
    INT_CASES(I32), INT_CASES(U32), INT_CASES(I64), INT_CASES(U64),
    FLOAT_CASES(F32), FLOAT_CASES(F64),
};

PARSUM_TEST_MAIN(test_props)
{
    tu_init("test_props");
    return tu_finish(TU_RUN("test_props", tests));
}
