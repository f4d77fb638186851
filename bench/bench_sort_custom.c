/*
 * bench_sort_custom.c - parsum_sort_custom on the CPU against the serial
 * sorts of the same comparator: parsum's reference merge sort (stable,
 * src/ref/ref_sort.c: about n log2 n comparisons, the fewest a comparison
 * sort needs) and glibc's qsort (a merge sort too while its buffer fits;
 * stability not promised). Two orders:
 *   records  16-byte {u64 key, u64 tag} records by key
 *   strings  u32 indices into a table of 2^16 strings of 4 to 15 letters
 *            from a 4-letter alphabet, compared with strcmp (long common
 *            prefixes: costly comparisons through an indirection)
 * Prints, per order, the median wall time of the runs, Melem/s,
 * comparisons per element, Mcomparisons/s and the median CPU time of the
 * process (all threads: the work, which a loaded machine does not
 * inflate as it does the wall time), and checks every output against the
 * reference.
 *
 * Where a CUDA device is present, the same two sorts also run on it
 * (the orders as CUDA source, the string table in device memory through
 * cuda_user; the first call, which compiles the order, is left out of the
 * timing), checked against the reference too.
 *
 *   parsum_bench_sort_custom [n (default 2^22)] [reps (default 3)]
 * Threads: OMP_NUM_THREADS (default all). A sort runs a few parallel
 * regions per round with host work between them; on a machine whose cores
 * are busy with other work, set OMP_WAIT_POLICY=PASSIVE (as the tests do),
 * or libgomp's spinning workers take the core that work needs.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "parsum.h"
#include "ref/ref.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct record {
    uint64_t key, tag;
} record;

/* Counts when `counting` is set, through one relaxed atomic: it costs a
 * little, so the timed runs leave it off. */
static _Atomic uint64_t compares;
static int counting;

static int rec_less(const void *a, const void *b, void *user)
{
    (void)user;
    if (counting)
        atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    return ((const record *)a)->key < ((const record *)b)->key;
}

static int rec_cmp3(const void *a, const void *b)
{
    uint64_t x = ((const record *)a)->key, y = ((const record *)b)->key;
    if (counting)
        atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    return (x > y) - (x < y);
}

#define NSTR 65536
#define STR_W 16
static char table[NSTR][STR_W];

static int str_less(const void *a, const void *b, void *user)
{
    (void)user;
    if (counting)
        atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    return strcmp(table[*(const uint32_t *)a], table[*(const uint32_t *)b]) <
           0;
}

static int str_cmp3(const void *a, const void *b)
{
    if (counting)
        atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    return strcmp(table[*(const uint32_t *)a], table[*(const uint32_t *)b]);
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

static double cpu_now(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { PARSUM, MERGE, QSORT };
static const char *const names[] = {"parsum_sort_custom", "serial merge sort",
                                    "glibc qsort"};

/* One run of sorter `who`; returns seconds, or -1 on failure. */
static double run(int who, parsum_context *ctx, const void *in, void *out,
                  size_t n, const parsum_comparator *c,
                  int (*cmp3)(const void *, const void *))
{
    double t0 = now();
    if (who == PARSUM) {
        parsum_status st = parsum_sort_custom(ctx, in, out, n, c);
        if (st != PARSUM_OK) {
            fprintf(stderr, "%s\n", parsum_last_error(ctx));
            return -1;
        }
    } else if (who == MERGE) {
        if (parsum__ref_sort_custom(in, out, n, c) != PARSUM_OK)
            return -1;
    } else {
        memcpy(out, in, n * c->elem_size);
        qsort(out, n, c->elem_size, cmp3);
    }
    return now() - t0;
}

/* The sorts on a GPU: wall time (the call waits for the sort) of device
 * data, median of reps after one untimed call. */
static void bench_gpu(const char *what, const void *in, size_t n,
                      const parsum_comparator *c, int reps)
{
    parsum_context *g = NULL;
    if (parsum_context_create(&g, PARSUM_BACKEND_CUDA) != PARSUM_OK)
        return;
    size_t bytes = n * c->elem_size;
    void *din = NULL, *dout = NULL;
    unsigned char *want = malloc(bytes), *got = malloc(bytes);
    double *t = malloc((size_t)reps * sizeof *t);
    parsum_status st = want && got && t ? PARSUM_OK : PARSUM_ERR_OUT_OF_MEMORY;
    if (st == PARSUM_OK)
        st = parsum_alloc(g, &din, bytes);
    if (st == PARSUM_OK)
        st = parsum_alloc(g, &dout, bytes);
    if (st == PARSUM_OK)
        st = parsum_copy(g, din, in, bytes, PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK)
        st = parsum_sort_custom(g, din, dout, n, c);
    for (int r = 0; st == PARSUM_OK && r < reps; r++) {
        double t0 = now();
        st = parsum_sort_custom(g, din, dout, n, c);
        t[r] = now() - t0;
    }
    if (st == PARSUM_OK)
        st = parsum_copy(g, got, dout, bytes, PARSUM_COPY_CONTEXT_TO_HOST);
    if (st != PARSUM_OK) {
        printf("  GPU: %s: %s\n", parsum_status_name(st), parsum_last_error(g));
    } else {
        parsum__ref_sort_custom(in, want, n, c);
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-20s %8.1f ms  %6.2f Melem/s  %s (GPU: %s)\n",
               names[PARSUM], 1e3 * t[reps / 2], (double)n / t[reps / 2] / 1e6,
               memcmp(want, got, bytes) == 0
                   ? "same as reference"
                   : "DIFFERS from the stable reference",
               what);
    }
    parsum_free(g, din);
    parsum_free(g, dout);
    parsum_context_destroy(g);
    free(want);
    free(got);
    free(t);
}

static void bench(const char *what, parsum_context *ctx, const void *in,
                  size_t n, const parsum_comparator *c,
                  int (*cmp3)(const void *, const void *), int reps)
{
    size_t bytes = n * c->elem_size;
    void *want = malloc(bytes), *got = malloc(bytes);
    double *t = malloc((size_t)reps * sizeof *t);
    double *cpu = malloc((size_t)reps * sizeof *cpu);
    if (want == NULL || got == NULL || t == NULL || cpu == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    parsum__ref_sort_custom(in, want, n, c);
    printf("%s, n = %zu, %zu-byte elements:\n", what, n, c->elem_size);
    for (int who = PARSUM; who <= QSORT; who++) {
        counting = 1;
        compares = 0;
        if (run(who, ctx, in, got, n, c, cmp3) < 0)
            exit(1);
        counting = 0;
        uint64_t cc = compares;
        /* qsort is not stable: only the keys' order can be checked, and
         * the reference's keys are that order. */
        int ok = memcmp(got, want, bytes) == 0;
        for (int r = 0; r < reps; r++) {
            double c0 = cpu_now();
            t[r] = run(who, ctx, in, got, n, c, cmp3);
            cpu[r] = cpu_now() - c0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        qsort(cpu, (size_t)reps, sizeof *cpu, cmp_double);
        double med = t[reps / 2];
        printf("  %-20s %8.1f ms  %6.2f Melem/s  %6.2f cmp/elem  %6.1f "
               "Mcmp/s  CPU %8.1f ms  %s\n",
               names[who], 1e3 * med, (double)n / med / 1e6,
               (double)cc / (double)n, (double)cc / med / 1e6,
               1e3 * cpu[reps / 2],
               ok ? "same as reference" : "DIFFERS from the stable reference");
    }
    free(want);
    free(got);
    free(t);
    free(cpu);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtod(argv[1], NULL) : (size_t)1 << 22;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1)
        reps = 1;
    parsum_context *ctx = NULL;
    if (parsum_context_create(&ctx, PARSUM_BACKEND_CPU) != PARSUM_OK)
        return 1;
    printf("parsum_sort_custom on the CPU, %d threads\n",
           parsum_context_threads(ctx));
    uint64_t s = 42;
    record *recs = malloc(n * sizeof *recs);
    uint32_t *idx = malloc(n * sizeof *idx);
    if (recs == NULL || idx == NULL)
        return 1;
    for (size_t i = 0; i < n; i++)
        recs[i] = (record){rng(&s), i};
    for (size_t i = 0; i < NSTR; i++) {
        size_t len = 4 + rng(&s) % 12;
        for (size_t k = 0; k < len; k++)
            table[i][k] = (char)('a' + rng(&s) % 4);
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)(rng(&s) % NSTR);
    parsum_comparator rc = {sizeof(record), rec_less, NULL,
                            "struct Rec { unsigned long long key, tag; };",
                            "Rec", "return a.key < b.key;", NULL};
    parsum_comparator sc = {4, str_less, NULL, "", "unsigned",
                            "const char *s = (const char *)user + a * 16ull;\n"
                            "const char *t = (const char *)user + b * 16ull;\n"
                            "while (*s != 0 && *s == *t) { ++s; ++t; }\n"
                            "return (unsigned char)*s < (unsigned char)*t;",
                            NULL};
    bench("records by a u64 key", ctx, recs, n, &rc, rec_cmp3, reps);
    bench_gpu("records by a u64 key", recs, n, &rc, reps);
    bench("u32 indices into a string table, strcmp", ctx, idx, n, &sc,
          str_cmp3, reps);
    parsum_context *g = NULL;
    void *dtable = NULL;
    if (parsum_context_create(&g, PARSUM_BACKEND_CUDA) == PARSUM_OK &&
        parsum_alloc(g, &dtable, sizeof table) == PARSUM_OK &&
        parsum_copy(g, dtable, table, sizeof table,
                    PARSUM_COPY_HOST_TO_CONTEXT) == PARSUM_OK) {
        /* The table lives on with g's allocation while bench_gpu's own
         * context reads it (same device). */
        sc.cuda_user = dtable;
        bench_gpu("strings by index", idx, n, &sc, reps);
    }
    if (g != NULL) {
        parsum_free(g, dtable);
        parsum_context_destroy(g);
    }
    free(recs);
    free(idx);
    parsum_context_destroy(ctx);
    return 0;
}
