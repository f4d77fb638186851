/*
 * demo.c - `parsum demo`: a short tour of scan, reduce and selection,
 * after the examples of the lecture notes parsum grew from: cutting a
 * sandwich (prefix sums give the cut positions), balancing a checkbook (a
 * running sum), line of sight (a max-scan of angles), a timed reduce and
 * scan over many random values, a custom operator (the 3-D point farthest
 * from the origin), and two selections: the compaction of the nonzero
 * values and the separation of a string into upper and lower case.
 *
 * All data go through parsum_alloc / parsum_copy, so the same code runs on
 * the CPU and on a GPU.
 */
#include "cli.h"

#include "bench_cpu_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_DEFAULT_N ((size_t)100000000)
#define DEMO_POINTS ((size_t)1000000)

/* ---- helpers: host arrays in, host arrays out ------------------------- */

/* Copies n elements of `size` bytes to the context, applies scan (out not
 * NULL) or reduce, and copies the result back. */
static parsum_status on_context(parsum_context *ctx, const void *in,
                                void *out, size_t n, size_t size,
                                parsum_dtype dtype, parsum_op op,
                                unsigned flags, void *result)
{
    void *buf = NULL;
    size_t bytes = n * size;
    parsum_status st = parsum_alloc(ctx, &buf, bytes);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, buf, in, bytes, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK && out != NULL) {
        st = parsum_scan(ctx, buf, buf, n, dtype, op, flags); /* in place */
        if (st == PARSUM_OK)
            st = parsum_copy(ctx, out, buf, bytes,
                             PARSUM_COPY_CONTEXT_TO_HOST);
    } else if (st == PARSUM_OK) {
        st = parsum_reduce(ctx, buf, n, dtype, op, result);
    }
    parsum_free(ctx, buf);
    return st;
}

static parsum_status host_scan(parsum_context *ctx, const void *in,
                               void *out, size_t n, parsum_dtype dtype,
                               parsum_op op, unsigned flags)
{
    return on_context(ctx, in, out, n, parsum_dtype_size(dtype), dtype, op,
                      flags, NULL);
}

static parsum_status host_reduce(parsum_context *ctx, const void *in,
                                 size_t n, parsum_dtype dtype, parsum_op op,
                                 void *result)
{
    return on_context(ctx, in, NULL, n, parsum_dtype_size(dtype), dtype, op,
                      0, result);
}

/* ---- 1. the sandwich --------------------------------------------------- */

static int demo_sandwich(parsum_context *ctx)
{
    static const int32_t want[10] = {3, 5, 2, 7, 10, 4, 3, 0, 8, 1};
    int32_t cuts[10], total = 0;
    parsum_status st = host_scan(ctx, want, cuts, 10, PARSUM_I32, PARSUM_SUM,
                                 PARSUM_EXCLUSIVE);
    if (st == PARSUM_OK)
        st = host_reduce(ctx, want, 10, PARSUM_I32, PARSUM_SUM, &total);
    if (st != PARSUM_OK)
        return cli_runtime_error("demo: sandwich", st, ctx);
    printf("1. Cutting a sandwich (exclusive scan, i32 sum)\n"
           "   Ten people want pieces of a 100-inch sandwich. The prefix\n"
           "   sums of the lengths give every cut position at once, so ten\n"
           "   knives can cut together instead of one after the other.\n");
    printf("   inches wanted:   ");
    for (int i = 0; i < 10; i++)
        printf("%4d", (int)want[i]);
    printf("\n   cut positions:   ");
    for (int i = 0; i < 10; i++)
        printf("%4d", (int)cuts[i]);
    printf("\n   the last piece ends at %d inches (reduce)\n\n", (int)total);
    return CLI_EXIT_OK;
}

/* ---- 2. the checkbook -------------------------------------------------- */

static void print_cents(int64_t cents, int sign)
{
    int64_t a = cents < 0 ? -cents : cents;
    const char *s = cents < 0 ? "-" : (sign ? "+" : " ");
    char buf[40];
    snprintf(buf, sizeof buf, "%s%lld.%02lld", s, (long long)(a / 100),
             (long long)(a % 100));
    printf("%12s", buf);
}

static int demo_checkbook(parsum_context *ctx)
{
    static const char *what[] = {"deposit",  "deposit", "groceries",
                                 "rent",     "coffee",  "deposit",
                                 "books",    "salary",  "bicycle",
                                 "dinner"};
    static const int64_t cents[] = {2000,  500,   -1100, -900,   -300,
                                    1500,  -475,  120050, -39999, -1250};
    enum { COUNT = sizeof cents / sizeof cents[0] };
    int64_t balance[COUNT];
    parsum_status st = host_scan(ctx, cents, balance, COUNT, PARSUM_I64,
                                 PARSUM_SUM, PARSUM_INCLUSIVE);
    if (st != PARSUM_OK)
        return cli_runtime_error("demo: checkbook", st, ctx);
    printf("2. Balancing a checkbook (inclusive scan, i64 sum of cents)\n"
           "   The balance after each entry is the running sum of the\n"
           "   entries so far.\n");
    printf("    #  entry        %12s%12s\n", "amount", "balance");
    for (int i = 0; i < COUNT; i++) {
        printf("   %2d  %-11s  ", i + 1, what[i]);
        print_cents(cents[i], 1);
        print_cents(balance[i], 0);
        printf("\n");
    }
    printf("\n");
    return CLI_EXIT_OK;
}

/* ---- 3. line of sight -------------------------------------------------- */

static int demo_line_of_sight(parsum_context *ctx)
{
    static const double alt[] = {101, 104, 110, 108, 115, 125,
                                 120, 122, 140, 135, 150, 160};
    enum { COUNT = sizeof alt / sizeof alt[0] };
    const double h0 = 102.0, step = 100.0, deg = 180.0 / 3.14159265358979;
    double angle[COUNT], horizon[COUNT], before[COUNT];
    for (int i = 0; i < COUNT; i++)
        angle[i] = atan((alt[i] - h0) / (step * (i + 1)));
    parsum_status st = host_scan(ctx, angle, horizon, COUNT, PARSUM_F64,
                                 PARSUM_MAX, PARSUM_INCLUSIVE);
    if (st == PARSUM_OK)
        st = host_scan(ctx, angle, before, COUNT, PARSUM_F64, PARSUM_MAX,
                       PARSUM_EXCLUSIVE);
    if (st != PARSUM_OK)
        return cli_runtime_error("demo: line of sight", st, ctx);
    printf("3. Line of sight (max-scan of angles, f64)\n"
           "   An observer %.0f m up looks along a ray. A point is visible\n"
           "   iff its angle is >= the largest angle before it (exclusive\n"
           "   max-scan); the inclusive max-scan is the horizon so far.\n",
           h0);
    printf("   %8s  %8s  %10s %10s %9s\n", "distance", "altitude", "angle",
           "max before", "horizon");
    for (int i = 0; i < COUNT; i++) {
        char prev[24];
        if (isinf(before[i]))
            snprintf(prev, sizeof prev, "%s", "-inf");
        else
            snprintf(prev, sizeof prev, "%.2f", before[i] * deg);
        printf("   %6.0f m  %6.0f m  %6.2f deg %10s %9.2f   %s\n",
               step * (i + 1), alt[i], angle[i] * deg, prev,
               horizon[i] * deg, angle[i] >= before[i] ? "visible" : "hidden");
    }
    printf("\n");
    return CLI_EXIT_OK;
}

/* ---- 4. many random values, timed -------------------------------------- */

/* Fills h with pseudo-random digits 0..9; returns their exact sum. */
static int64_t fill_digits(int32_t *h, size_t n)
{
    int64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (size_t i = 0; i < n; i++) {
        h[i] = (int32_t)(pb_hash64(i) % 10);
        sum += h[i];
    }
    return sum;
}

typedef struct big_job {
    void *in, *out;
    size_t n;
    int32_t sum;
} big_job;

static parsum_status big_run(parsum_context *ctx, big_job *j, int scan)
{
    if (!scan)
        return parsum_reduce(ctx, j->in, j->n, PARSUM_I32, PARSUM_SUM,
                             &j->sum);
    parsum_status st = parsum_scan(ctx, j->in, j->out, j->n, PARSUM_I32,
                                   PARSUM_SUM, PARSUM_INCLUSIVE);
    return st == PARSUM_OK ? parsum_synchronize(ctx) : st;
}

/* Median time of 5 runs after a warm-up. */
static parsum_status big_time(parsum_context *ctx, big_job *j, int scan,
                              double *seconds)
{
    double t[5];
    parsum_status st = big_run(ctx, j, scan);
    for (int k = 0; k < 5 && st == PARSUM_OK; k++) {
        double t0 = pb_now();
        st = big_run(ctx, j, scan);
        t[k] = pb_now() - t0;
    }
    *seconds = st == PARSUM_OK ? pb_median(t, 5) : 0.0;
    return st;
}

static parsum_status big_prepare(parsum_context *ctx, big_job *j,
                                 int64_t *expect)
{
    size_t bytes = j->n * sizeof(int32_t);
    int32_t *h = (int32_t *)malloc(bytes);
    if (h == NULL)
        return PARSUM_ERR_OUT_OF_MEMORY;
    *expect = fill_digits(h, j->n);
    parsum_status st = parsum_alloc(ctx, &j->in, bytes);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, j->in, h, bytes, PARSUM_COPY_HOST_TO_CONTEXT);
    free(h);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &j->out, bytes);
    return st;
}

static int demo_big(parsum_context *ctx, size_t n)
{
    big_job j = {NULL, NULL, n, 0};
    int64_t expect = 0;
    int32_t last = 0;
    double tr = 0.0, ts = 0.0;
    char nbuf[32];
    parsum_status st = big_prepare(ctx, &j, &expect);
    if (st == PARSUM_OK)
        st = big_time(ctx, &j, 0, &tr);
    if (st == PARSUM_OK)
        st = big_time(ctx, &j, 1, &ts);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, &last, (int32_t *)j.out + (n - 1), sizeof last,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    parsum_free(ctx, j.in);
    parsum_free(ctx, j.out);
    if (st != PARSUM_OK)
        return cli_runtime_error("demo: random values", st, ctx);
    /* i32 sums wrap modulo 2^32, as parsum defines them. */
    int32_t want = (int32_t)(uint32_t)(uint64_t)expect;
    double bytes = (double)n * sizeof(int32_t);
    printf("4. Reduce and scan over %s random i32 digits 0..9 "
           "(median of 5 runs)\n",
           pb_format_count(n, nbuf, sizeof nbuf));
    printf("   reduce (sum):        %11ld  %9.2f ms  %7.2f GB/s\n",
           (long)j.sum, tr * 1e3, bytes / tr * 1e-9);
    printf("   scan, last element:  %11ld  %9.2f ms  %7.2f GB/s "
           "(read + write)\n",
           (long)last, ts * 1e3, 2.0 * bytes / ts * 1e-9);
    printf("   serial check:        %11ld  %s\n\n", (long)want,
           j.sum == want && last == want ? "agrees" : "DIFFERS");
    return j.sum == want && last == want ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

/* ---- 5. a custom operator ---------------------------------------------- */

typedef struct point3 {
    float x, y, z;
} point3;

static float mag2(const point3 *p)
{
    return p->x * p->x + p->y * p->y + p->z * p->z;
}

/* The operand farther from the origin; the earlier one on a tie. */
static void farther(const void *a, const void *b, void *out, void *user)
{
    point3 pa, pb;
    (void)user;
    memcpy(&pa, a, sizeof pa);
    memcpy(&pb, b, sizeof pb);
    memcpy(out, mag2(&pa) >= mag2(&pb) ? &pa : &pb, sizeof pa);
}

static const point3 origin = {0.0f, 0.0f, 0.0f};

static const parsum_custom_op farthest_op = {
    .elem_size = sizeof(point3),
    .identity = &origin,
    .combine = farther,
    .user = NULL,
    /* The same operator for the CUDA backend (compiled at run time). */
    .cuda_type = "struct P { float x, y, z; };\n"
                 "__device__ inline float mag2(const P &p)\n"
                 "{ return p.x * p.x + p.y * p.y + p.z * p.z; }\n",
    .cuda_type_name = "P",
    .cuda_combine = "return mag2(a) >= mag2(b) ? a : b;",
};

static parsum_status reduce_points(parsum_context *ctx, const point3 *pts,
                                   size_t n, point3 *best, double *seconds)
{
    void *buf = NULL;
    parsum_status st = parsum_alloc(ctx, &buf, n * sizeof *pts);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, buf, pts, n * sizeof *pts,
                         PARSUM_COPY_HOST_TO_CONTEXT);
    double t0 = pb_now();
    if (st == PARSUM_OK)
        st = parsum_reduce_custom(ctx, buf, n, &farthest_op, best);
    *seconds = pb_now() - t0;
    parsum_free(ctx, buf);
    return st;
}

static point3 *random_points(size_t n, point3 *serial_best)
{
    point3 *p = (point3 *)malloc(n * sizeof *p);
    if (p == NULL)
        return NULL;
    *serial_best = origin;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = pb_hash64(i + 12345);
        p[i].x = (float)((int)(h & 0xffff) - 32768) / 256.0f;
        p[i].y = (float)((int)((h >> 16) & 0xffff) - 32768) / 256.0f;
        p[i].z = (float)((int)((h >> 32) & 0xffff) - 32768) / 256.0f;
        farther(serial_best, &p[i], serial_best, NULL);
    }
    return p;
}

static int custom_error(parsum_context *ctx, parsum_status st)
{
    if (st == PARSUM_ERR_UNSUPPORTED) {
        printf("   (skipped: %s)\n\n", parsum_last_error(ctx));
        return CLI_EXIT_OK;
    }
    return cli_runtime_error("demo: custom operator", st, ctx);
}

static int demo_custom(parsum_context *ctx)
{
    static const point3 few[] = {{1, 2, 2},  {-3, 0, 4},       {0, -6, 0.5f},
                                 {2, -2, -5.5f}, {6, 0, 0.25f}, {-1, -1, -1}};
    enum { COUNT = sizeof few / sizeof few[0] };
    point3 best, want;
    double t;
    printf("5. A custom operator: the 3-D point farthest from the origin\n"
           "   (parsum_reduce_custom with a C callback; on a GPU the same\n"
           "   operator is given as CUDA source)\n   points:");
    for (int i = 0; i < COUNT; i++)
        printf("%s (%g, %g, %g)", i > 0 && i % 3 == 0 ? "\n          " : "",
               few[i].x, few[i].y, few[i].z);
    printf("\n");
    parsum_status st = reduce_points(ctx, few, COUNT, &best, &t);
    if (st != PARSUM_OK)
        return custom_error(ctx, st);
    printf("   farthest of these: (%g, %g, %g), |p| = %.3f\n", best.x, best.y,
           best.z, sqrt(mag2(&best)));
    point3 *many = random_points(DEMO_POINTS, &want);
    if (many == NULL)
        return cli_runtime_error("demo: custom operator",
                                 PARSUM_ERR_OUT_OF_MEMORY, NULL);
    st = reduce_points(ctx, many, DEMO_POINTS, &best, &t);
    free(many);
    if (st != PARSUM_OK)
        return custom_error(ctx, st);
    int same = memcmp(&best, &want, sizeof best) == 0;
    printf("   farthest of %zu random points: (%g, %g, %g), |p| = %.3f\n"
           "   in %.2f ms; the serial loop %s\n\n",
           DEMO_POINTS, best.x, best.y, best.z, sqrt(mag2(&best)), t * 1e3,
           same ? "agrees" : "DIFFERS");
    return same ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

/* ---- 6. stream compaction ------------------------------------------------ */

/* PARSUM_ERR_UNSUPPORTED (a backend without the selection functions yet)
 * skips a section; anything else is an error. */
static int select_error(parsum_context *ctx, const char *what,
                        parsum_status st)
{
    if (st == PARSUM_ERR_UNSUPPORTED) {
        printf("   (skipped: %s)\n\n", parsum_last_error(ctx));
        return CLI_EXIT_OK;
    }
    return cli_runtime_error(what, st, ctx);
}

/* in (n elements of size bytes) to the context, one of parsum_select,
 * _select_indices (idx not NULL) or _partition (partition set) into
 * context memory, and the result back into out / idx. */
static parsum_status host_select(parsum_context *ctx, const void *in,
                                 void *out, uint64_t *idx, size_t n,
                                 size_t size, const parsum_selector *sel,
                                 int partition, size_t *k)
{
    void *din = NULL, *dout = NULL;
    size_t ob = idx != NULL ? n * sizeof *idx : n * size;
    parsum_status st = parsum_alloc(ctx, &din, n * size);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &dout, ob);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, din, in, n * size, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK && idx != NULL)
        st = parsum_select_indices(ctx, din, n, size, sel, (uint64_t *)dout,
                                   k);
    else if (st == PARSUM_OK && partition)
        st = parsum_partition(ctx, din, dout, n, size, sel, k);
    else if (st == PARSUM_OK)
        st = parsum_select(ctx, din, dout, n, size, sel, k);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, idx != NULL ? (void *)idx : out, dout, ob,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    parsum_free(ctx, din);
    parsum_free(ctx, dout);
    return st;
}

static int demo_compaction(parsum_context *ctx)
{
    static const int32_t in[16] = {0, 7, 0, 0, 4, 0, 1, 0,
                                   0, 0, 8, 4, 0, 0, 6, 0};
    int32_t flags[16], addr[16], out[16];
    uint64_t pos[16];
    size_t k = 0, k2 = 0;
    parsum_selector gt0;
    memset(&gt0, 0, sizeof gt0);
    gt0.kind = PARSUM_SELECT_PREDICATE;
    gt0.dtype = PARSUM_I32;
    gt0.pred = PARSUM_PRED_GT; /* the notes' predicate: x > 0 */
    gt0.a.i32 = 0;
    printf("6. Stream compaction (parsum_select, predicate x > 0)\n"
           "   Keep the elements that pass, packed in order. A scan of the\n"
           "   0/1 flags tells every kept element where to go, so all of\n"
           "   them move at once.\n");
    for (int i = 0; i < 16; i++)
        flags[i] = in[i] > 0;
    parsum_status st = host_scan(ctx, flags, addr, 16, PARSUM_I32, PARSUM_SUM,
                                 PARSUM_EXCLUSIVE);
    if (st == PARSUM_OK)
        st = host_select(ctx, in, out, NULL, 16, 4, &gt0, 0, &k);
    if (st == PARSUM_OK)
        st = host_select(ctx, in, NULL, pos, 16, 4, &gt0, 0, &k2);
    if (st != PARSUM_OK)
        return select_error(ctx, "demo: stream compaction", st);
    printf("   input:           ");
    for (int i = 0; i < 16; i++)
        printf("%2d", (int)in[i]);
    printf("\n   flags (x > 0):   ");
    for (int i = 0; i < 16; i++)
        printf("%2d", (int)flags[i]);
    printf("\n   exclusive scan:  ");
    for (int i = 0; i < 16; i++)
        printf("%2d", (int)addr[i]);
    printf("\n   selected (%zu):   ", k);
    for (size_t i = 0; i < k; i++)
        printf("%2d", (int)out[i]);
    printf("\n   at positions:    ");
    for (size_t i = 0; i < k2; i++)
        printf("%3d", (int)pos[i]);
    /* the notes' answer */
    static const int32_t want[6] = {7, 4, 1, 8, 4, 6};
    static const uint64_t want_pos[6] = {1, 4, 6, 10, 11, 14};
    int ok = k == 6 && k2 == 6 && memcmp(out, want, sizeof want) == 0 &&
             memcmp(pos, want_pos, sizeof want_pos) == 0;
    printf("\n   %s\n\n", ok ? "as in the notes" : "DIFFERS from the notes");
    return ok ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

/* ---- 7. string separation ------------------------------------------------ */

static int demo_separation(parsum_context *ctx)
{
    static const char text[] = "aPreREcFIoXoSUIMS";
    enum { N = sizeof text - 1 };
    char out[N + 1];
    size_t k = 0;
    parsum_selector upper;
    memset(&upper, 0, sizeof upper);
    upper.kind = PARSUM_SELECT_PREDICATE;
    upper.dtype = PARSUM_U8;
    upper.pred = PARSUM_PRED_IN_RANGE; /* 'A' <= c < 'Z' + 1 */
    upper.a.u8 = 'A';
    upper.b.u8 = 'Z' + 1;
    printf("7. String separation (parsum_partition, 'A' <= c <= 'Z')\n"
           "   Upper case first, then lower case, each in its original\n"
           "   order (a stable partition: the selected, then the rest).\n");
    parsum_status st = host_select(ctx, text, out, NULL, N, 1, &upper, 1, &k);
    if (st != PARSUM_OK)
        return select_error(ctx, "demo: string separation", st);
    out[N] = '\0';
    printf("   input:      %s\n   upper case: ", text);
    for (int i = 0; i < N; i++)
        printf("%c", text[i] >= 'A' && text[i] <= 'Z' ? '1' : '0');
    int ok = k == 11 && memcmp(out, "PREFIXSUIMSarecoo", N) == 0;
    printf("\n   separated:  %.*s|%s  (%zu upper case)%s\n\n", (int)k, out,
           out + k, k, ok ? "" : "  DIFFERS from a serial loop");
    return ok ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

/* ---- 8. radix sort ------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts n random u32 keys with parsum_sort (median of 3 runs) and a
 * prefix of them with qsort, for scale; checks order and checksums. */
static int demo_sort(parsum_context *ctx, size_t n)
{
    if (n > ((size_t)1 << 25))
        n = (size_t)1 << 25; /* a few hundred ms on two cores */
    size_t m = n < ((size_t)1 << 22) ? n : ((size_t)1 << 22);
    size_t bytes = n * sizeof(uint32_t);
    uint32_t *h = (uint32_t *)malloc(bytes ? bytes : 1);
    void *d = NULL;
    if (h == NULL)
        return cli_runtime_error("demo: radix sort", PARSUM_ERR_OUT_OF_MEMORY,
                                 NULL);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = (uint32_t)pb_hash64(i + 777);
        sum += h[i];
    }
    parsum_sort_desc desc = {.key_dtype = PARSUM_U32};
    double t[3];
    parsum_status st = parsum_alloc(ctx, &d, bytes);
    for (int k = 0; k < 3 && st == PARSUM_OK; k++) {
        st = parsum_copy(ctx, d, h, bytes, PARSUM_COPY_HOST_TO_CONTEXT);
        double t0 = pb_now();
        if (st == PARSUM_OK)
            st = parsum_sort(ctx, d, NULL, d, NULL, n, &desc);
        if (st == PARSUM_OK)
            st = parsum_synchronize(ctx);
        t[k] = pb_now() - t0;
    }
    double tq = pb_now();
    qsort(h, m, sizeof *h, cmp_u32);
    tq = pb_now() - tq;
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, h, d, bytes, PARSUM_COPY_CONTEXT_TO_HOST);
    parsum_free(ctx, d);
    if (st != PARSUM_OK) {
        free(h);
        return cli_runtime_error("demo: radix sort", st, ctx);
    }
    int ok = 1;
    uint64_t got = 0;
    for (size_t i = 0; i < n; i++) {
        got += h[i];
        ok &= i == 0 || h[i - 1] <= h[i];
    }
    ok &= got == sum;
    free(h);
    double ts = pb_median(t, 3);
    char nbuf[32], mbuf[32];
    printf("8. Radix sort (parsum_sort) of %s random u32 keys\n"
           "   Four passes of 8-bit digits, each a stable split of all the\n"
           "   keys by a histogram and its scan.\n",
           pb_format_count(n, nbuf, sizeof nbuf));
    printf("   parsum_sort:  %9.2f ms  %8.1f Mkeys/s (median of 3)\n",
           ts * 1e3, (double)n / ts * 1e-6);
    printf("   qsort:        %9.2f ms  %8.1f Mkeys/s (%s keys, one thread)\n",
           tq * 1e3, (double)m / tq * 1e-6,
           pb_format_count(m, mbuf, sizeof mbuf));
    printf("   %s\n\n", ok ? "in order, same keys" : "NOT SORTED");
    return ok ? CLI_EXIT_OK : CLI_EXIT_RUNTIME;
}

/* ---- the command ------------------------------------------------------- */

static int parse_demo_args(int argc, char **argv, parsum_backend *backend,
                           size_t *n)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if ((m = cli_option_value(argc, argv, &i, "--backend", &v)) != 0) {
            if (m < 0 || cli_parse_backend(v, backend) != 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_option_value(argc, argv, &i, "--n", &v)) != 0) {
            if (m < 0 || cli_parse_count("--n", v, n) != 0)
                return CLI_EXIT_USAGE;
        } else {
            return cli_usage_error("demo: unknown option '%s'", argv[i]);
        }
    }
    return CLI_EXIT_OK;
}

int cli_demo(int argc, char **argv)
{
    parsum_backend backend = PARSUM_BACKEND_AUTO;
    size_t n = DEMO_DEFAULT_N;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_usage_demo();
            return CLI_EXIT_OK;
        }
    }
    int rc = parse_demo_args(argc, argv, &backend, &n);
    if (rc != CLI_EXIT_OK)
        return rc;
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, backend);
    if (st != PARSUM_OK)
        return cli_runtime_error("demo: creating a context", st, NULL);
    parsum_backend used = parsum_context_backend(ctx);
    printf("parsum %s demo on the %s backend", parsum_version(),
           parsum_backend_name(used));
    if (used == PARSUM_BACKEND_CPU)
        printf(" (%d threads)", parsum_context_threads(ctx));
    printf("\n\n");
    rc = demo_sandwich(ctx);
    if (rc == CLI_EXIT_OK)
        rc = demo_checkbook(ctx);
    if (rc == CLI_EXIT_OK)
        rc = demo_line_of_sight(ctx);
    if (rc == CLI_EXIT_OK)
        rc = demo_big(ctx, n);
    if (rc == CLI_EXIT_OK)
        rc = demo_custom(ctx);
    if (rc == CLI_EXIT_OK)
        rc = demo_compaction(ctx);
    if (rc == CLI_EXIT_OK)
        rc = demo_separation(ctx);
    if (rc == CLI_EXIT_OK)
        rc = demo_sort(ctx, n);
    parsum_context_destroy(ctx);
    return rc;
}
