/*
 * test_custom.c - parsum_scan_custom and parsum_reduce_custom against the
 * serial reference (parsum__ref_scan_custom / parsum__ref_reduce_custom),
 * all four flag combinations, out of place and in place, outputs poisoned,
 * at the chunk boundaries of the custom element size; and inputs and
 * outputs off a 16-byte boundary, with guards around them.
 *
 * The operators are associative but NOT commutative, so any swap of
 * operands (a reverse scan combining in the wrong order, a carry applied
 * on the wrong side) changes the result:
 *   - composition of affine maps x -> a*x + b over uint32 (8-byte element),
 *     "f then g" = (f.a*g.a, g.a*f.b + g.b), identity (1, 0);
 *   - products of 3x3 matrices over uint64 (72-byte element), identity I;
 *   - "last non-zero byte" (1-byte element), identity 0;
 *   - 16 and 64 affine maps over uint64 side by side (256 bytes, the
 *     largest element on CUDA, and 1024 bytes, the largest on the CPU);
 * plus the seeds' example: the 3-D point (float x, y, z) farthest from the
 * origin, ties going to the earlier point, identity the origin (12-byte
 * element; integer coordinates keep the squared norms exact, so the CUDA
 * version compiled by NVRTC decides every tie the same way). The affine
 * maps over uint32 (aff32) and the 3-D point (pt3) are shared with
 * test_segmented_reduce.c: test_ops.h.
 *
 * Every operator also carries its CUDA source (cuda_type, cuda_type_name,
 * cuda_combine) for the CUDA backend. A case the backend answers with
 * PARSUM_ERR_UNSUPPORTED where parsum.h allows it (1024-byte elements on
 * CUDA) is reported as skipped.
 */
#include "test_ops.h"

#include "ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- aff32 and pt3 (test_ops.h) --------------------------------------- */
/* The case table's fills also take the element size (wide_fill_es needs
 * it); these two do not. */
static void aff32_fill_es(tu_rng *r, void *buf, size_t n, size_t es)
{
    (void)es;
    aff32_fill(r, buf, n);
}

static void pt3_fill_es(tu_rng *r, void *buf, size_t n, size_t es)
{
    (void)es;
    pt3_fill(r, buf, n);
}

/* ---- 3x3 matrices over uint64 (72 bytes) ------------------------------ */
typedef struct mat3 {
    uint64_t m[9];
} mat3;

static void mat3_combine(const void *pa, const void *pb, void *out,
                         void *user)
{
    mat3 x, y, r;
    (void)user;
    memcpy(&x, pa, sizeof x);
    memcpy(&y, pb, sizeof y);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[3 * i + j] = x.m[3 * i] * y.m[j] + x.m[3 * i + 1] * y.m[3 + j] +
                             x.m[3 * i + 2] * y.m[6 + j];
    memcpy(out, &r, sizeof r);
}

static const mat3 mat3_identity = {{1, 0, 0, 0, 1, 0, 0, 0, 1}};
static const parsum_custom_op mat3_op = {
    sizeof(mat3), &mat3_identity, mat3_combine, NULL,
    "struct M3 { unsigned long long m[9]; };", "M3",
    "M3 r; for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) "
    "r.m[3*i+j] = a.m[3*i]*b.m[j] + a.m[3*i+1]*b.m[3+j] + a.m[3*i+2]*b.m[6+j]; "
    "return r;"};

static void mat3_fill_es(tu_rng *r, void *buf, size_t n, size_t es)
{
    (void)es;
    uint64_t *p = buf;
    for (size_t i = 0; i < 9 * n; i++)
        p[i] = tu_next(r);
}

/* ---- last non-zero byte (1 byte) --------------------------------------- */
static void lastnz_combine(const void *pa, const void *pb, void *out,
                           void *user)
{
    uint8_t x, y;
    (void)user;
    memcpy(&x, pa, 1);
    memcpy(&y, pb, 1);
    uint8_t r = y != 0 ? y : x;
    memcpy(out, &r, 1);
}

static const uint8_t lastnz_identity = 0;
static const parsum_custom_op lastnz_op = {
    1, &lastnz_identity, lastnz_combine, NULL, "", "unsigned char",
    "return b != 0 ? b : a;"};

static void lastnz_fill_es(tu_rng *r, void *buf, size_t n, size_t es)
{
    (void)es;
    uint8_t *p = buf;
    for (size_t i = 0; i < n; i++) /* mostly zero, so runs carry over */
        p[i] = tu_below(r, 8) == 0 ? (uint8_t)(1 + tu_below(r, 255)) : 0;
}

/* ---- affine maps over uint64 side by side (128 to 1024 bytes) --------- */
/* user points to the number of maps (8, 16 or 64): elem_size = 16 * maps. */
#define WIDE_MAX_MAPS 64
static const int maps8 = 8, maps16 = 16, maps64 = 64;
static uint64_t wide_identity[2 * WIDE_MAX_MAPS]; /* a = 1, b = 0 (main) */

static void wide_combine(const void *pa, const void *pb, void *out, void *user)
{
    uint64_t f[2 * WIDE_MAX_MAPS], g[2 * WIDE_MAX_MAPS], r[2 * WIDE_MAX_MAPS];
    int maps = *(const int *)user;
    memcpy(f, pa, 16 * (size_t)maps);
    memcpy(g, pb, 16 * (size_t)maps);
    for (int k = 0; k < maps; k++) {
        r[2 * k] = f[2 * k] * g[2 * k];
        r[2 * k + 1] = g[2 * k] * f[2 * k + 1] + g[2 * k + 1];
    }
    memcpy(out, r, 16 * (size_t)maps);
}

#define WIDE_CUDA(MAPS, WORDS)                                               \
    "struct W { unsigned long long ab[" #WORDS "]; };", "W",                  \
        "W r; for (int k = 0; k < " #MAPS "; k++) { "                        \
        "r.ab[2*k] = a.ab[2*k] * b.ab[2*k]; "                                \
        "r.ab[2*k+1] = b.ab[2*k] * a.ab[2*k+1] + b.ab[2*k+1]; } return r;"
/* The largest element on a CUDA context (128 bytes), one above it (256)
 * and the largest on the CPU (1024). */
static const parsum_custom_op wide128_op = {
    128, wide_identity, wide_combine, (void *)&maps8, WIDE_CUDA(8, 16)};
static const parsum_custom_op wide256_op = {
    256, wide_identity, wide_combine, (void *)&maps16, WIDE_CUDA(16, 32)};
static const parsum_custom_op wide1024_op = {
    1024, wide_identity, wide_combine, (void *)&maps64, WIDE_CUDA(64, 128)};

static void wide_fill_es(tu_rng *r, void *buf, size_t n, size_t es)
{
    uint64_t *p = buf;
    for (size_t i = 0; i < es / 8 * n; i++)
        p[i] = tu_next(r) | ((i & 1) == 0); /* odd multipliers */
}
#define wide128_fill_es wide_fill_es
#define wide256_fill_es wide_fill_es
#define wide1024_fill_es wide_fill_es

/* ------------------------------------------------------------------------ */

typedef struct custom_case {
    const char *name;
    const parsum_custom_op *op;
    void (*fill)(tu_rng *r, void *buf, size_t n, size_t es);
    size_t max_n; /* sizes above this are left out (memory, time) */
} custom_case;

static const unsigned all_flags[4] = {
    PARSUM_INCLUSIVE, PARSUM_EXCLUSIVE, PARSUM_REVERSE,
    PARSUM_EXCLUSIVE | PARSUM_REVERSE};

/* Index of the first differing element of es bytes, or n. */
static size_t first_diff(const unsigned char *a, const unsigned char *b,
                         size_t n, size_t es)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i * es, b + i * es, es) != 0)
            return i;
    return n;
}

static void hex(const unsigned char *p, size_t es, char *buf)
{
    size_t k = es < 16 ? es : 16;
    for (size_t i = 0; i < k; i++)
        sprintf(buf + 2 * i, "%02x", p[i]);
    if (k < es)
        strcpy(buf + 2 * k, "...");
}

static void check_mismatch(const char *what, const unsigned char *want,
                           const unsigned char *got, size_t n, size_t es,
                           size_t *failures)
{
    size_t i = first_diff(want, got, n, es);
    if (i == n)
        return;
    size_t bad = 0;
    for (size_t j = i; j < n; j++)
        bad += memcmp(want + j * es, got + j * es, es) != 0;
    char hw[40], hg[40];
    hex(want + i * es, es, hw);
    hex(got + i * es, es, hg);
    tu_report(failures,
              "  MISMATCH %s: first at index %zu of %zu (%zu in all): "
              "expected bytes %s, got %s\n",
              what, i, n, bad, hw, hg);
}

/* False when the backend does not do this custom operator (the test is
 * then skipped): parsum.h allows that for elements above
 * PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE on CUDA, and for any custom operator on
 * a backend other than the CPU. */
static bool custom_supported(const parsum_custom_op *op)
{
    void *d = tu_dev_alloc(op->elem_size);
    tu_upload(d, op->identity, op->elem_size);
    parsum_status st = parsum_scan_custom(tu_ctx, d, d, 1, op, 0);
    tu_dev_free(d);
    if (tu_backend == PARSUM_BACKEND_CUDA &&
        op->elem_size > PARSUM_CUDA_CUSTOM_MAX_ELEM_SIZE) {
        if (st != PARSUM_ERR_UNSUPPORTED) {
            print_error("  %zu-byte elements on CUDA: %s, expected "
                        "PARSUM_ERR_UNSUPPORTED\n", op->elem_size,
                        parsum_status_name(st));
            fail();
        }
        printf("  %zu-byte elements: unsupported on CUDA, as documented\n",
               op->elem_size);
        return false;
    }
    if (st == PARSUM_ERR_UNSUPPORTED && tu_backend != PARSUM_BACKEND_CPU) {
        printf("  custom operators unsupported on %s: %s\n",
               parsum_backend_name(tu_backend), parsum_last_error(tu_ctx));
        return false;
    }
    TU_OK(st);
    return true;
}

static void check_custom(const custom_case *c, size_t n, size_t *failures)
{
    const parsum_custom_op *op = c->op;
    size_t es = op->elem_size, bytes = n * es;
    uint64_t name_hash = 1469598103934665603ULL; /* FNV-1a */
    for (const char *s = c->name; *s; s++)
        name_hash = (name_hash ^ (unsigned char)*s) * 1099511628211ULL;
    tu_rng r = tu_rng_for(es, n, 0xC057, name_hash);
    unsigned char *in = tu_malloc(bytes), *want = tu_malloc(bytes),
                  *got = tu_malloc(bytes);
    c->fill(&r, in, n, es);
    void *din = tu_dev_alloc(bytes), *dout = tu_dev_alloc(bytes);
    tu_upload(din, in, bytes);
    char what[200];

    for (int f = 0; f < 4; f++) {
        unsigned flags = all_flags[f];
        TU_OK(parsum__ref_scan_custom(in, want, n, op, flags));
        for (int inplace = 0; inplace < 2; inplace++) {
            snprintf(what, sizeof what, "scan_custom %s %s %s n=%zu %s "
                     "(seed 0x%llx)", parsum_backend_name(tu_backend),
                     c->name, tu_flags_name(flags), n,
                     inplace ? "in-place" : "out-of-place",
                     (unsigned long long)tu_seed);
            void *src = din;
            if (inplace) {
                tu_upload(dout, in, bytes);
                src = dout;
            } else {
                tu_dev_poison(dout, bytes);
            }
            parsum_status st = parsum_scan_custom(tu_ctx, src, dout, n, op, flags);
            if (st != PARSUM_OK) {
                tu_report(failures, "  %s: returned %s: %s\n", what,
                          parsum_status_name(st), parsum_last_error(tu_ctx));
                continue;
            }
            tu_download(got, dout, bytes);
            check_mismatch(what, want, got, n, es, failures);
        }
    }
    tu_download(got, din, bytes);
    if (memcmp(got, in, bytes) != 0)
        tu_report(failures, "  scan_custom %s n=%zu: out-of-place scans "
                  "modified the input\n", c->name, n);

    unsigned char *rw = tu_malloc(es), *rg = tu_malloc(es);
    parsum__ref_reduce_custom(in, n, op, rw);
    memset(rg, TU_POISON, es);
    snprintf(what, sizeof what, "reduce_custom %s %s n=%zu (seed 0x%llx)",
             parsum_backend_name(tu_backend), c->name, n,
             (unsigned long long)tu_seed);
    parsum_status st = parsum_reduce_custom(tu_ctx, din, n, op, rg);
    if (st != PARSUM_OK)
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
    else
        check_mismatch(what, rw, rg, 1, es, failures);

    tu_dev_free(din);
    tu_dev_free(dout);
    free(in);
    free(want);
    free(got);
    free(rw);
    free(rg);
}

static void test_custom_case(void **state)
{
    const custom_case *c = *state;
    if (!custom_supported(c->op))
        skip();
    size_t sizes[40], failures = 0;
    size_t m = tu_sizes(c->op->elem_size, sizes);
    size_t chunk = tu_chunk(c->op->elem_size);
    sizes[m++] = 5 * chunk + 3; /* one more boundary mix */
    atomic_store(&test_ops_bad_user, 0);
    for (size_t k = 0; k < m; k++)
        if (sizes[k] <= c->max_n)
            check_custom(c, sizes[k], &failures);
    if (atomic_load(&test_ops_bad_user))
        tu_report(&failures, "  %s: combine got a user pointer other than "
                  "op->user\n", c->name);
    assert_int_equal(failures, 0);
}

/* Inputs and outputs off a 16-byte boundary (aligned to the element's
 * fields only, 4 bytes here), every flag combination, over nine CPU
 * chunks (two threads or more) and the GPU's pipelined tiles, guards
 * around the output: the custom scans share the built-in scans' tile
 * code, whose reverse element-wise path once read out of bounds on such
 * pointers (test_scan.c, test_misaligned_out). */
static void test_custom_misaligned(void **state)
{
    (void)state;
    static const custom_case cases[] = {{"aff32", &aff32_op, aff32_fill_es, 0},
                                        {"pt3", &pt3_op, pt3_fill_es, 0}};
    static const size_t shifts[][2] = {{4, 12}, {20, 4}, {12, 36}};
    size_t failures = 0;
    char what[200];
    for (size_t c = 0; c < 2; c++) {
        const parsum_custom_op *op = cases[c].op;
        if (!custom_supported(op))
            continue;
        size_t es = op->elem_size, n = 9 * tu_chunk(es) + 77;
        tu_rng r = tu_rng_for(es, n, 0x5a11, c);
        unsigned char *in = tu_malloc(n * es), *want = tu_malloc(n * es),
                      *got = tu_malloc(n * es);
        cases[c].fill(&r, in, n, es);
        for (size_t k = 0; k < 3; k++) {
            tu_shifted i = tu_shifted_alloc(n * es, shifts[k][0]);
            tu_upload(i.out, in, n * es);
            for (int f = 0; f < 4; f++) {
                TU_OK(parsum__ref_scan_custom(in, want, n, op, all_flags[f]));
                tu_shifted o = tu_shifted_alloc(n * es, shifts[k][1]);
                snprintf(what, sizeof what, "scan_custom %s %s %s n=%zu in "
                         "at 64k+%zu, out at 64k+%zu bytes",
                         parsum_backend_name(tu_backend), cases[c].name,
                         tu_flags_name(all_flags[f]), n, shifts[k][0],
                         shifts[k][1]);
                parsum_status st = parsum_scan_custom(tu_ctx, i.out, o.out, n,
                                                      op, all_flags[f]);
                if (st != PARSUM_OK) {
                    tu_report(&failures, "  %s: returned %s: %s\n", what,
                              parsum_status_name(st),
                              parsum_last_error(tu_ctx));
                } else {
                    tu_download(got, o.out, n * es);
                    check_mismatch(what, want, got, n, es, &failures);
                    if (tu_shifted_guards(&o) + tu_shifted_guards(&i) != 0)
                        tu_report(&failures, "  %s: guard bytes written\n",
                                  what);
                }
                tu_shifted_free(&o);
            }
            tu_shifted_free(&i);
        }
        free(in);
        free(want);
        free(got);
    }
    assert_int_equal(failures, 0);
}

#define CC(NAME, MAXN) \
    {"custom_" #NAME, test_custom_case, NULL, NULL, \
     &(custom_case){#NAME, &NAME##_op, NAME##_fill_es, MAXN}}

static const struct CMUnitTest tests[] = {
    CC(aff32, (size_t)-1),
    CC(pt3, (size_t)-1),
    CC(lastnz, (size_t)-1),
    CC(mat3, 70000),
    CC(wide128, 20000),
    CC(wide256, 20000),
    CC(wide1024, 3000),
    cmocka_unit_test(test_custom_misaligned),
};

PARSUM_TEST_MAIN(test_custom)
{
    for (int k = 0; k < WIDE_MAX_MAPS; k++)
        wide_identity[2 * k] = 1;
    tu_init("test_custom");
    return tu_finish(TU_RUN("test_custom", tests));
}
