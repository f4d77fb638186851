/*
 * test_util.c - backend selection, PRNG, input generators, poisoning,
 * comparison and host <-> context copies shared by the test programs (see
 * test_util.h).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "test_util.h"

#include "cpu/cpu.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

parsum_context *tu_ctx;
parsum_backend tu_backend = PARSUM_BACKEND_CPU;
uint64_t tu_seed = 0x5eed2024c0ffeeULL;
bool tu_quick;

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

void tu_init(const char *program)
{
    const char *be = getenv("PARSUM_TEST_BACKEND");
    if (be == NULL || *be == '\0' || strcmp(be, "cpu") == 0) {
        tu_backend = PARSUM_BACKEND_CPU;
    } else if (strcmp(be, "cuda") == 0) {
        tu_backend = PARSUM_BACKEND_CUDA;
    } else {
        fprintf(stderr, "%s: PARSUM_TEST_BACKEND = \"%s\"; expected cpu or "
                        "cuda\n",
                program, be);
        exit(2);
    }
    const char *seed = getenv("PARSUM_TEST_SEED");
    if (seed != NULL && *seed != '\0')
        tu_seed = strtoull(seed, NULL, 0);
    const char *quick = getenv("PARSUM_TEST_QUICK");
    tu_quick = quick != NULL && *quick != '\0' && strcmp(quick, "0") != 0;
    const char *filter = getenv("PARSUM_TEST_FILTER");
    if (filter != NULL && *filter != '\0')
        cmocka_set_test_filter(filter);

    parsum_status st = parsum_context_create(&tu_ctx, tu_backend);
    if (st != PARSUM_OK) {
        if (tu_backend == PARSUM_BACKEND_CUDA &&
            (st == PARSUM_ERR_UNSUPPORTED || st == PARSUM_ERR_NO_DEVICE)) {
            printf("%s: SKIPPED: no CUDA backend here (%s: %s)\n", program,
                   parsum_status_name(st), parsum_status_string(st));
            exit(TU_SKIP_EXIT);
        }
        fprintf(stderr, "%s: parsum_context_create(%s) failed: %s\n",
                program, parsum_backend_name(tu_backend),
                parsum_status_name(st));
        exit(1);
    }
    printf("%s: backend %s, %d threads, seed 0x%" PRIx64
           " (PARSUM_TEST_SEED)%s\n",
           program, parsum_backend_name(tu_backend),
           parsum_context_threads(tu_ctx), tu_seed,
           tu_quick ? ", quick" : "");
    fflush(stdout);
}

int tu_finish(int rc)
{
    parsum_context_destroy(tu_ctx);
    tu_ctx = NULL;
    return rc;
}

const char *tu_group_name(const char *program)
{
    static char name[128];
    snprintf(name, sizeof name, "%s (%s)", program,
             parsum_backend_name(tu_backend));
    return name;
}

/* ------------------------------------------------------------------------ */
/* PRNG                                                                      */
/* ------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

tu_rng tu_rng_for(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t s = mix64(tu_seed);
    s = mix64(s ^ (a + 0x9E3779B97F4A7C15ULL));
    s = mix64(s ^ (b + 0x632BE59BD9B4E019ULL));
    s = mix64(s ^ (c + 0x8CB92BA72F3D8DD7ULL));
    s = mix64(s ^ (d + 0xD1B54A32D192ED03ULL));
    tu_rng r = {s};
    return r;
}

uint64_t tu_next(tu_rng *r)
{
    r->state += 0x9E3779B97F4A7C15ULL;
    return mix64(r->state);
}

double tu_uniform(tu_rng *r)
{
    return (double)(tu_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t tu_below(tu_rng *r, uint64_t bound)
{
    return bound == 0 ? 0 : tu_next(r) % bound;
}

/* ------------------------------------------------------------------------ */
/* Elements                                                                  */
/* ------------------------------------------------------------------------ */

bool tu_is_float(parsum_dtype d)
{
    return d == PARSUM_F32 || d == PARSUM_F64;
}

int tu_op_count(parsum_dtype d)
{
    return tu_is_float(d) ? 4 : PARSUM_OP_COUNT;
}

const char *tu_flags_name(unsigned flags)
{
    switch (flags) {
    case 0: return "incl";
    case PARSUM_EXCLUSIVE: return "excl";
    case PARSUM_REVERSE: return "incl|rev";
    case PARSUM_EXCLUSIVE | PARSUM_REVERSE: return "excl|rev";
    }
    return "?";
}

/* Stores the low bits of v as element i of an integer dtype (typed stores,
 * so the value does not depend on byte order). */
static void store_bits(parsum_dtype d, void *buf, size_t i, uint64_t v)
{
    switch (parsum_dtype_size(d)) {
    case 1: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case 2: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    default: ((uint64_t *)buf)[i] = v; break;
    }
}

double tu_get(parsum_dtype d, const void *buf, size_t i)
{
    switch (d) {
    case PARSUM_I8: return ((const int8_t *)buf)[i];
    case PARSUM_U8: return ((const uint8_t *)buf)[i];
    case PARSUM_I16: return ((const int16_t *)buf)[i];
    case PARSUM_U16: return ((const uint16_t *)buf)[i];
    case PARSUM_I32: return ((const int32_t *)buf)[i];
    case PARSUM_U32: return ((const uint32_t *)buf)[i];
    case PARSUM_I64: return (double)((const int64_t *)buf)[i];
    case PARSUM_U64: return (double)((const uint64_t *)buf)[i];
    case PARSUM_F32: return ((const float *)buf)[i];
    case PARSUM_F64: return ((const double *)buf)[i];
    }
    return 0;
}

void tu_set(parsum_dtype d, void *buf, size_t i, double v)
{
    switch (d) {
    case PARSUM_F32: ((float *)buf)[i] = (float)v; break;
    case PARSUM_F64: ((double *)buf)[i] = v; break;
    default: store_bits(d, buf, i, (uint64_t)(int64_t)v); break;
    }
}

const char *tu_format(parsum_dtype d, const void *p, char *buf)
{
    switch (d) {
    case PARSUM_I8: case PARSUM_I16: case PARSUM_I32: case PARSUM_I64: {
        int64_t v = 0;
        switch (parsum_dtype_size(d)) {
        case 1: { int8_t x; memcpy(&x, p, 1); v = x; break; }
        case 2: { int16_t x; memcpy(&x, p, 2); v = x; break; }
        case 4: { int32_t x; memcpy(&x, p, 4); v = x; break; }
        default: memcpy(&v, p, 8); break;
        }
        snprintf(buf, 64, "%" PRId64, v);
        break;
    }
    case PARSUM_U8: case PARSUM_U16: case PARSUM_U32: case PARSUM_U64: {
        uint64_t v = 0;
        switch (parsum_dtype_size(d)) {
        case 1: { uint8_t x; memcpy(&x, p, 1); v = x; break; }
        case 2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
        case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
        default: memcpy(&v, p, 8); break;
        }
        snprintf(buf, 64, "%" PRIu64 " (0x%" PRIx64 ")", v, v);
        break;
    }
    case PARSUM_F32: {
        float f;
        uint32_t b;
        memcpy(&f, p, 4);
        memcpy(&b, p, 4);
        snprintf(buf, 64, "%.9g (0x%08" PRIx32 ")", (double)f, b);
        break;
    }
    case PARSUM_F64: {
        double f;
        uint64_t b;
        memcpy(&f, p, 8);
        memcpy(&b, p, 8);
        snprintf(buf, 64, "%.17g (0x%016" PRIx64 ")", f, b);
        break;
    }
    default:
        snprintf(buf, 64, "?");
    }
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                    */
/* ------------------------------------------------------------------------ */

/* An arbitrary finite float, with repeats, signed zeros and infinities
 * often enough that ties and extremes occur (MIN/MAX inputs). */
static double any_float(tu_rng *r, parsum_dtype d)
{
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY,
                                      1.5, -1.5, 1e-30, -1e30};
    if (tu_below(r, 8) == 0) {
        double v = specials[tu_below(r, 8)];
        if (d == PARSUM_F32 && tu_below(r, 8) == 0)
            v = tu_below(r, 2) ? FLT_MAX : -FLT_MAX;
        return v;
    }
    double m = 1.0 + tu_uniform(r);
    int e = (int)tu_below(r, 61) - 30;
    return (tu_below(r, 2) ? -1.0 : 1.0) * ldexp(m, e);
}

static void fill_float(tu_rng *r, parsum_dtype d, parsum_op op, tu_data kind,
                       void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v;
        if (kind == TU_DATA_NAN && (i < 3 || i + 2 >= n || tu_below(r, 4) == 0))
            v = tu_below(r, 2) ? NAN : -NAN;
        else if (op == PARSUM_MIN || op == PARSUM_MAX)
            v = any_float(r, d);
        else if (kind == TU_DATA_EXACT && op == PARSUM_SUM)
            v = (double)((int)tu_below(r, 17) - 8);
        else if (kind == TU_DATA_EXACT) /* PROD */
            v = tu_below(r, 2) ? 1.0 : -1.0;
        else if (op == PARSUM_SUM)
            v = (2.0 * tu_uniform(r) - 1.0) * ldexp(1.0, (int)tu_below(r, 13) - 6);
        else /* PROD near 1: a random walk of the log that stays in range */
            v = 1.0 + (2.0 * tu_uniform(r) - 1.0) * (1.0 / 64);
        tu_set(d, buf, i, v);
    }
}

void tu_fill(tu_rng *r, parsum_dtype d, parsum_op op, tu_data kind, void *buf,
             size_t n)
{
    if (tu_is_float(d)) {
        fill_float(r, d, op, kind, buf, n);
        return;
    }
    unsigned bits = 8 * (unsigned)parsum_dtype_size(d);
    uint64_t ones = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    /* AND / OR: an element flips one bit with probability 2*bits/n, so
     * about 2*bits flips are spread over the whole array. */
    uint64_t flip_num = 2 * (uint64_t)bits;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = tu_next(r);
        bool flip = tu_below(r, n) < flip_num;
        uint64_t bit = (uint64_t)1 << tu_below(r, bits);
        switch (op) {
        case PARSUM_PROD: v |= 1; break;
        case PARSUM_AND: v = flip ? ones & ~bit : ones; break;
        case PARSUM_OR: v = flip ? bit : 0; break;
        default: break;
        }
        store_bits(d, buf, i, v);
    }
}

/* ------------------------------------------------------------------------ */
/* Sizes                                                                     */
/* ------------------------------------------------------------------------ */

size_t tu_chunk(size_t elem_size)
{
    return parsum__cpu_chunk_elems(elem_size);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

size_t tu_sizes(size_t elem_size, size_t *sizes)
{
    size_t c = tu_chunk(elem_size);
    size_t list[] = {0,         1,         2,         3,         31,
                     32,        33,        c - 1,     c,         c + 1,
                     2 * c,     3 * c + 1, 8 * c - 1, 8 * c,     8 * c + 1,
                     1009,      65537,     1000003};
    size_t m = sizeof list / sizeof list[0];
    if (tu_quick)
        m--; /* 1000003 is last */
    qsort(list, m, sizeof list[0], cmp_size);
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (k == 0 || list[i] != sizes[k - 1])
            sizes[k++] = list[i];
    return k;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

void *tu_malloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) {
        print_error("tu_malloc: out of host memory (%zu bytes)\n", bytes);
        fail();
    }
    return p;
}

void *tu_dev_alloc(size_t bytes)
{
    void *p = NULL;
    TU_OK(parsum_alloc(tu_ctx, &p, bytes > 0 ? bytes : 64));
    if (p == NULL) {
        print_error("parsum_alloc returned PARSUM_OK and NULL\n");
        fail();
    }
    return p;
}

void tu_dev_free(void *p)
{
    parsum_free(tu_ctx, p);
}

void tu_upload(void *dev, const void *host, size_t bytes)
{
    TU_OK(parsum_copy(tu_ctx, dev, host, bytes, PARSUM_COPY_HOST_TO_CONTEXT));
}

void tu_download(void *host, const void *dev, size_t bytes)
{
    TU_OK(parsum_synchronize(tu_ctx));
    TU_OK(parsum_copy(tu_ctx, host, dev, bytes, PARSUM_COPY_CONTEXT_TO_HOST));
}

parsum_context *tu_cuda_context_capped(const char *cap)
{
    if (cap[0] == '\0')
        return NULL;
    parsum_context *ctx = NULL;
    setenv("PARSUM_CUDA_SCAN_BLOCKS", cap, 1);
    TU_OK(parsum_context_create(&ctx, PARSUM_BACKEND_CUDA));
    unsetenv("PARSUM_CUDA_SCAN_BLOCKS");
    return ctx;
}

void tu_dev_poison(void *dev, size_t bytes)
{
    void *h = tu_malloc(bytes);
    memset(h, TU_POISON, bytes);
    tu_upload(dev, h, bytes);
    free(h);
}

tu_shifted tu_shifted_alloc(size_t bytes, size_t shift)
{
    tu_shifted s;
    size_t total = 2 * TU_GUARD + shift + bytes;
    s.base = tu_dev_alloc(total); /* parsum_alloc: 64-byte aligned */
    s.out = s.base + TU_GUARD + shift;
    s.bytes = bytes;
    s.shift = shift;
    tu_dev_poison(s.base, total);
    return s;
}

size_t tu_shifted_guards(const tu_shifted *s)
{
    size_t lo = TU_GUARD + s->shift, total = lo + s->bytes + TU_GUARD;
    unsigned char *h = tu_malloc(total);
    tu_download(h, s->base, total);
    size_t bad = 0;
    for (size_t i = 0; i < total; i++)
        if ((i < lo || i >= lo + s->bytes) && h[i] != TU_POISON)
            bad++;
    free(h);
    return bad;
}

void tu_check_shifted(parsum_status st, const tu_shifted *o, parsum_dtype d,
                      const void *want, void *got, size_t n,
                      const char *what, size_t *failures)
{
    if (st != PARSUM_OK) {
        tu_report(failures, "  %s: returned %s: %s\n", what,
                  parsum_status_name(st), parsum_last_error(tu_ctx));
        return;
    }
    tu_download(got, o->out, n * parsum_dtype_size(d));
    if (tu_compare(d, want, got, n, NULL, what) != 0)
        (*failures)++;
    size_t bad = tu_shifted_guards(o);
    if (bad != 0)
        tu_report(failures, "  %s: %zu guard bytes written\n", what, bad);
}

void tu_shifted_free(tu_shifted *s)
{
    tu_dev_free(s->base);
    s->base = s->out = NULL;
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

bool tu_equal1(parsum_dtype d, const void *want, const void *got, double bound)
{
    size_t size = parsum_dtype_size(d);
    if (!tu_is_float(d))
        return memcmp(want, got, size) == 0;
    double w = tu_get(d, want, 0), g = tu_get(d, got, 0);
    if (isnan(w) || isnan(g))
        return isnan(w) && isnan(g);
    if (bound < 0)
        return memcmp(want, got, size) == 0;
    return w == g || fabs(w - g) <= bound;
}

/* bound: per-element bounds or NULL; without them, value_eq picks value
 * equality (bound 0: -0.0 == +0.0) over bit equality (bound -1). */
static size_t compare(parsum_dtype d, const void *want, const void *got,
                      size_t n, const double *bound, bool value_eq,
                      const char *what)
{
    size_t size = parsum_dtype_size(d), bad = 0;
    const unsigned char *w = want, *g = got;
    if (memcmp(want, got, n * size) == 0)
        return 0; /* the common case, fast */
    for (size_t i = 0; i < n; i++) {
        double b = bound != NULL ? bound[i] : value_eq ? 0.0 : -1.0;
        if (tu_equal1(d, w + i * size, g + i * size, b))
            continue;
        if (bad < TU_MAX_REPORTS) {
            char bw[64], bg[64], bb[40] = "";
            if (bound != NULL)
                snprintf(bb, sizeof bb, " (bound %.3g)", bound[i]);
            print_error("  MISMATCH %s: index %zu of %zu: expected %s, got "
                        "%s%s\n",
                        what, i, n, tu_format(d, w + i * size, bw),
                        tu_format(d, g + i * size, bg), bb);
        }
        bad++;
    }
    if (bad > TU_MAX_REPORTS)
        print_error("  ... %s: %zu mismatching elements in all\n", what, bad);
    return bad;
}

size_t tu_compare(parsum_dtype d, const void *want, const void *got, size_t n,
                  const double *bound, const char *what)
{
    return compare(d, want, got, n, bound, false, what);
}

size_t tu_compare_op(parsum_dtype d, parsum_op op, const void *want,
                     const void *got, size_t n, const char *what)
{
    bool value_eq = tu_is_float(d) && (op == PARSUM_MIN || op == PARSUM_MAX);
    return compare(d, want, got, n, NULL, value_eq, what);
}

void tu_report(size_t *failures, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_error(fmt, ap);
    va_end(ap);
    (*failures)++;
}
