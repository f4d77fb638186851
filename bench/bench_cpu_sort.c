/*
 * bench_cpu_sort.c - `parsum bench sort` on the CPU (bench_cpu_sort.h).
 *
 * Cases, n keys each (out of place: keys_in and values_in stay as they
 * are):
 *   u32 keys, u32/u32 pairs, u64 keys, f32 keys (any sign, exponents
 *   over 2^-16 .. 2^15), all random; segmented u32 keys in 2^20 segments
 *   (lengths 1 to about 2 n / 2^20, 64 on average at n = 2^26) and in 16
 *   segments.
 * Each is timed (median of repeated runs after a warm-up, the cache
 * evicted before each run of large data) for parsum_sort (or
 * parsum_segmented_sort), a multi-threaded memcpy and a copy with
 * non-temporal stores of the keys and values, and once for glibc's qsort
 * (serial, not stable; the pairs as 8-byte records) on the first
 * min(n, 2^24) keys: its Mkeys/s is for that many, said in the row.
 *
 * The floor: an LSD radix sort reads and writes all keys and values once
 * per pass, so it can take no less than passes x the time of one copy of
 * them at the faster copy's bandwidth. Passes: the CPU backend's digits of
 * 11 bits (src/cpu/sort.c): 3 for 32-bit keys, 6 for 64-bit ones (random
 * keys leave no digit constant, so none is skipped). Segments small enough
 * to be sorted in the cache cross memory once: the many-segment case's
 * floor is one copy. (Arrays whose top-digit buckets fit the cache are
 * sorted MSD first, src/cpu/sort.c, and cross memory about twice instead:
 * the row also gives parsum's time in copies, for any other floor.)
 * Printed: ms, Mkeys/s, the floor, parsum's time over it and in copies.
 *
 * Checks (every case): the output is in order (within each segment) and
 * holds the same keys (and pairs) as the input, by an order-independent
 * checksum.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu_sort.h"
#include "bench_cpu.h"
#include "bench_cpu_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_N ((size_t)1 << 26)
#define QSORT_MAX_N ((size_t)1 << 24)
#define CPU_DIGIT_BITS 11

typedef struct scase {
    const char *name;
    parsum_dtype dtype;
    size_t value_size;
    size_t nseg; /* 0: not segmented */
} scase;

static const scase cases[] = {
    {"u32 keys", PARSUM_U32, 0, 0},       {"u32/u32 pairs", PARSUM_U32, 4, 0},
    {"u64 keys", PARSUM_U64, 0, 0},       {"f32 keys", PARSUM_F32, 0, 0},
    {"u32 2^20 segs", PARSUM_U32, 0, (size_t)1 << 20},
    {"u32 16 segs", PARSUM_U32, 0, 16},
};

typedef struct sbench {
    parsum_context *ctx;
    const parsum_bench_args *args;
    int threads;
    size_t n;
    unsigned char *keys, *keys_out, *vals, *vals_out, *qbuf;
    uint64_t *off;
    pb_scrub scrub;
} sbench;

/* An unsigned integer that orders as the key does (no NaNs here). */
static uint64_t ord_key(const scase *c, const unsigned char *p)
{
    if (c->dtype == PARSUM_U64) {
        uint64_t k;
        memcpy(&k, p, 8);
        return k;
    }
    uint32_t k;
    memcpy(&k, p, 4);
    if (c->dtype == PARSUM_F32)
        k = k >> 31 ? ~k : k | 0x80000000u;
    return k;
}

static void fill(sbench *b, const scase *c)
{
    size_t n = b->n, ks = parsum_dtype_size(c->dtype);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = pb_hash64(i ^ 0x5eedull);
        if (c->dtype == PARSUM_F32) {
            double m = (double)(h >> 11) * 0x1p-53 - 0.5;
            float f = (float)(m * (double)((uint64_t)1 << (h & 31)) / 65536.0);
            memcpy(b->keys + i * 4, &f, 4);
        } else {
            memcpy(b->keys + i * ks, &h, ks);
        }
    }
    if (c->value_size)
        for (size_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)i;
            memcpy(b->vals + i * 4, &v, 4);
        }
    if (c->nseg) {
        /* segment s starts near s * avg, shifted by less than avg / 2 */
        size_t avg = n / c->nseg;
        b->off[0] = 0;
        for (size_t s = 1; s < c->nseg; s++)
            b->off[s] = s * avg + (avg > 1 ? pb_hash64(s) % avg - avg / 2 : 0);
        b->off[c->nseg] = n;
    }
}

/* Order-independent checksum of the keys (with their values). */
static uint64_t multiset(const sbench *b, const scase *c,
                         const unsigned char *k, const unsigned char *v)
{
    size_t ks = parsum_dtype_size(c->dtype);
    uint64_t sum = 0;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t x = 0, y = 0;
        memcpy(&x, k + i * ks, ks);
        if (v != NULL)
            memcpy(&y, v + i * c->value_size, c->value_size);
        sum += pb_hash64(x ^ pb_hash64(y));
    }
    return sum;
}

static int check(const sbench *b, const scase *c)
{
    size_t ks = parsum_dtype_size(c->dtype);
    size_t s = 1; /* the next segment start to pass */
    for (size_t i = 1; i < b->n; i++) {
        if (c->nseg) {
            while (s < c->nseg && b->off[s] < i)
                s++;
            if (s < c->nseg && b->off[s] == i)
                continue; /* a segment starts here */
        }
        if (ord_key(c, b->keys_out + i * ks) <
            ord_key(c, b->keys_out + (i - 1) * ks))
            return 0;
    }
    const unsigned char *v = c->value_size ? b->vals : NULL;
    const unsigned char *vo = c->value_size ? b->vals_out : NULL;
    return multiset(b, c, b->keys, v) == multiset(b, c, b->keys_out, vo);
}

static parsum_status run_parsum(sbench *b, const scase *c)
{
    parsum_sort_desc d = {c->dtype, c->value_size, 0, 0, 0};
    const void *vin = c->value_size ? b->vals : NULL;
    void *vout = c->value_size ? b->vals_out : NULL;
    if (c->nseg)
        return parsum_segmented_sort(b->ctx, b->keys, vin, b->keys_out, vout,
                                     b->n, b->off, c->nseg, &d);
    return parsum_sort(b->ctx, b->keys, vin, b->keys_out, vout, b->n, &d);
}

/* ---- glibc qsort -------------------------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    return (a > b) - (a < b);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a, b;
    memcpy(&a, x, 8);
    memcpy(&b, y, 8);
    return (a > b) - (a < b);
}

static int cmp_f32(const void *x, const void *y)
{
    float a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    return (a > b) - (a < b);
}

/* qsort of the first qn keys (records of key and value for pairs), each
 * segment on its own; returns the seconds it took. */
static double run_qsort(sbench *b, const scase *c, size_t qn)
{
    size_t ks = parsum_dtype_size(c->dtype), rs = ks + c->value_size;
    int (*cmp)(const void *, const void *) =
        c->dtype == PARSUM_U64 ? cmp_u64 : c->dtype == PARSUM_F32 ? cmp_f32
                                                                  : cmp_u32;
    for (size_t i = 0; i < qn; i++) {
        memcpy(b->qbuf + i * rs, b->keys + i * ks, ks);
        if (c->value_size)
            memcpy(b->qbuf + i * rs + ks, b->vals + i * c->value_size,
                   c->value_size);
    }
    double t0 = pb_now();
    if (c->nseg == 0) {
        qsort(b->qbuf, qn, rs, cmp);
    } else {
        for (size_t s = 0; s < c->nseg && b->off[s] < qn; s++) {
            size_t e = b->off[s + 1] < qn ? b->off[s + 1] : qn;
            qsort(b->qbuf + b->off[s] * rs, e - b->off[s], rs, cmp);
        }
    }
    return pb_now() - t0;
}

/* ---- one case ------------------------------------------------------------------ */

typedef struct sres {
    double t_parsum, t_copy, t_stream, t_qsort;
    size_t qn;
    int reps, ok;
} sres;

static int run_case(sbench *b, const scase *c, sres *r)
{
    size_t bytes = b->n * (parsum_dtype_size(c->dtype) + c->value_size);
    size_t kbytes = b->n * parsum_dtype_size(c->dtype);
    fill(b, c);
    double t0 = pb_now();
    parsum_status st = run_parsum(b, c); /* warm-up, and the check */
    if (st != PARSUM_OK) {
        fprintf(stderr, "parsum bench sort: %s: %s\n", parsum_status_name(st),
                parsum_last_error(b->ctx));
        return 1;
    }
    double per_round = 3 * (pb_now() - t0);
    r->ok = check(b, c);
    int reps = b->args->reps > 0 ? b->args->reps : pb_auto_reps(per_round);
    double *tm = malloc(sizeof(double) * (size_t)reps * 3);
    if (tm == NULL)
        return 1;
    for (int i = 0; i < reps; i++)
        for (int v = 0; v < 3; v++) {
            pb_scrub_run(&b->scrub, b->threads);
            double a = pb_now();
            if (v == 0)
                (void)run_parsum(b, c);
            else if (v == 1) {
                pb_copy(b->keys_out, b->keys, kbytes, b->threads);
                pb_copy(b->vals_out, b->vals, bytes - kbytes, b->threads);
            } else {
                pb_copy_stream(b->keys_out, b->keys, kbytes, b->threads);
                pb_copy_stream(b->vals_out, b->vals, bytes - kbytes,
                               b->threads);
            }
            tm[v * reps + i] = pb_now() - a;
        }
    r->t_parsum = pb_median(tm, reps);
    r->t_copy = pb_median(tm + reps, reps);
    r->t_stream = pb_median(tm + 2 * reps, reps);
    r->reps = reps;
    free(tm);
    r->qn = b->n < QSORT_MAX_N ? b->n : QSORT_MAX_N;
    r->t_qsort = run_qsort(b, c, r->qn);
    return 0;
}

static void print_case(FILE *out, const sbench *b, const scase *c,
                       const sres *r)
{
    size_t ks = parsum_dtype_size(c->dtype);
    double bytes = (double)b->n * (double)(ks + c->value_size);
    unsigned passes = (unsigned)((8 * ks + CPU_DIGIT_BITS - 1) / CPU_DIGIT_BITS);
    if (c->nseg && b->n / c->nseg <= 4096)
        passes = 1; /* each segment sorted in the cache */
    double copy = r->t_copy < r->t_stream ? r->t_copy : r->t_stream;
    double floor = passes * copy, n = (double)b->n;
    char qn[24];
    pb_format_count(r->qn, qn, sizeof qn);
    if (b->args->json) {
        fprintf(out,
                "{\"bench\":\"sort\",\"case\":\"%s\",\"n\":%zu,\"threads\":%d,"
                "\"parsum_ms\":%.3f,\"mkeys_s\":%.2f,\"qsort_n\":%zu,"
                "\"qsort_mkeys_s\":%.2f,\"memcpy_ms\":%.3f,"
                "\"stream_copy_ms\":%.3f,\"copy_gb_s\":%.3f,\"passes\":%u,"
                "\"floor_ms\":%.3f,\"over_floor\":%.3f,\"reps\":%d,"
                "\"ok\":%s}\n",
                c->name, b->n, b->threads, r->t_parsum * 1e3,
                n / r->t_parsum / 1e6, r->qn, (double)r->qn / r->t_qsort / 1e6,
                r->t_copy * 1e3, r->t_stream * 1e3, 2 * bytes / copy / 1e9,
                passes, floor * 1e3, r->t_parsum / floor, r->reps,
                r->ok ? "true" : "false");
        return;
    }
    fprintf(out, "%-15s %-12s %10.3f %9.2f   %u passes, floor %.3f ms, "
                 "%.2fx floor (%.1f copies)%s\n",
            c->name, "parsum", r->t_parsum * 1e3, n / r->t_parsum / 1e6,
            passes, floor * 1e3, r->t_parsum / floor, r->t_parsum / copy,
            r->ok ? "" : "  CHECK FAILED");
    fprintf(out, "%-15s %-12s %10.3f %9.2f   on %s keys, serial\n", "",
            "qsort", r->t_qsort * 1e3, (double)r->qn / r->t_qsort / 1e6, qn);
    fprintf(out, "%-15s %-12s %10.3f %9s   %.2f GB/s (read + write)\n", "",
            "memcpy", r->t_copy * 1e3, "", 2 * bytes / r->t_copy / 1e9);
    fprintf(out, "%-15s %-12s %10.3f %9s   %.2f GB/s (non-temporal stores)\n",
            "", "stream copy", r->t_stream * 1e3, "",
            2 * bytes / r->t_stream / 1e9);
}

static int alloc_all(sbench *b)
{
    size_t n = b->n;
    b->keys = malloc(n * 8);
    b->keys_out = malloc(n * 8);
    b->vals = malloc(n * 4);
    b->vals_out = malloc(n * 4);
    b->qbuf = malloc((n < QSORT_MAX_N ? n : QSORT_MAX_N) * 8);
    b->off = malloc(((size_t)1 << 20) * 8 + 8);
    return b->keys && b->keys_out && b->vals && b->vals_out && b->qbuf &&
           b->off;
}

static void free_all(sbench *b)
{
    free(b->keys);
    free(b->keys_out);
    free(b->vals);
    free(b->vals_out);
    free(b->qbuf);
    free(b->off);
}

int parsum_bench_cpu_sort(const parsum_bench_args *args, FILE *out)
{
    sbench b;
    memset(&b, 0, sizeof b);
    b.args = args;
    b.n = args->n ? args->n : DEFAULT_N;
    if (parsum_context_create(&b.ctx, PARSUM_BACKEND_CPU) != PARSUM_OK) {
        fprintf(stderr, "parsum bench sort: cannot create a CPU context\n");
        return 1;
    }
    if (args->threads > 0)
        (void)parsum_context_set_threads(b.ctx, args->threads);
    b.threads = parsum_context_threads(b.ctx);
    int rc = !alloc_all(&b);
    if (rc) {
        fprintf(stderr, "parsum bench sort: out of memory\n");
    } else {
        pb_scrub_init(&b.scrub, b.n * 16, b.threads);
        char nb[24];
        if (!args->json)
            fprintf(out, "parsum bench sort: n = %s keys, backend cpu (%s), "
                         "%d threads; floor = passes x one copy of the keys "
                         "and values at the faster copy's bandwidth\n"
                         "%-15s %-12s %10s %9s\n",
                    pb_format_count(b.n, nb, sizeof nb), pb_cpu_model(),
                    b.threads, "case", "variant", "ms", "Mkeys/s");
    }
    int bad = 0;
    for (size_t i = 0; !rc && i < sizeof cases / sizeof *cases; i++) {
        const scase *c = &cases[i];
        if (c->nseg > b.n)
            continue; /* fewer keys than segments */
        sres r;
        memset(&r, 0, sizeof r);
        rc = run_case(&b, c, &r);
        if (rc)
            break;
        print_case(out, &b, c, &r);
        if (!r.ok) {
            fprintf(stderr, "parsum bench sort: %s: the output is not the "
                            "sorted input\n", c->name);
            bad = 1;
        }
        fflush(out);
    }
    pb_scrub_free(&b.scrub);
    free_all(&b);
    parsum_context_destroy(b.ctx);
    return rc || bad ? 1 : 0;
}
