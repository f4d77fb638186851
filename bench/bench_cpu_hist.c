/*
 * bench_cpu_hist.c - `parsum bench histogram` on the CPU (bench_cpu_hist.h).
 *
 * Cases (n samples each, so that every case reads the same number of
 * samples; RGBA has n / 4 pixels):
 *   u8 256 bins over [0, 256); RGBA u8, 4 x 256 bins; u32 uniform in 256,
 *   1024, 4096 and 65536 bins over [0, 2^32); u32 with every sample in one
 *   of 1024 bins (the worst case for atomics); f32 uniform in [0, 1), 1024
 *   bins.
 * Each is timed with every strategy (SORT_REDUCE_BY_KEY only up to 2^26
 * samples: it sorts them), a serial loop (what a user writes without
 * parsum: one counter array, no threads) and, in the same round, a
 * multi-threaded read of the input (pb_read), whose bandwidth is the
 * ceiling: a histogram reads its samples once and writes next to nothing.
 * Printed: milliseconds, Gelem/s (samples per second), GB/s and that as a
 * percentage of the read bandwidth. Every strategy's counts are checked
 * against the serial loop's.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu_hist.h"
#include "bench_cpu.h"
#include "bench_cpu_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_N ((size_t)1 << 28)
#define SORT_MAX_N ((size_t)1 << 26)
#define NSTRAT 4

typedef enum { C_U8, C_RGBA, C_U32, C_U32_ONE, C_F32 } case_kind;

typedef struct hcase {
    const char *name;
    case_kind kind;
    size_t nbins;
} hcase;

static const hcase cases[] = {
    {"u8 256", C_U8, 256},          {"rgba-u8 4x256", C_RGBA, 256},
    {"u32 256", C_U32, 256},        {"u32 1024", C_U32, 1024},
    {"u32 4096", C_U32, 4096},      {"u32 65536", C_U32, 65536},
    {"u32 1024 one-bin", C_U32_ONE, 1024}, {"f32 1024", C_F32, 1024},
};

typedef struct hbench {
    parsum_context *ctx;
    const parsum_bench_args *args;
    int threads;
    size_t n;     /* samples */
    void *in;     /* n samples of the case's dtype */
    uint64_t *counts[4], *want[4];
    pb_scrub scrub;
} hbench;

static size_t sample_size(case_kind k)
{
    return k == C_U8 || k == C_RGBA ? 1 : 4;
}

static void fill(hbench *b, const hcase *c)
{
    size_t n = b->n;
    if (sample_size(c->kind) == 1) {
        uint8_t *x = b->in;
        for (size_t i = 0; i < n; i++)
            x[i] = (uint8_t)pb_hash64(i);
    } else if (c->kind == C_F32) {
        float *x = b->in;
        for (size_t i = 0; i < n; i++)
            x[i] = (float)(pb_hash64(i) >> 40) * (1.0f / 16777216.0f);
    } else {
        uint32_t *x = b->in;
        uint32_t one = (uint32_t)(pb_hash64(7) >> 32);
        for (size_t i = 0; i < n; i++)
            x[i] = c->kind == C_U32_ONE ? one : (uint32_t)pb_hash64(i);
    }
}

static parsum_histogram_desc make_desc(const hcase *c)
{
    parsum_histogram_desc d;
    memset(&d, 0, sizeof d);
    d.channels = c->kind == C_RGBA ? 4 : 1;
    d.count_dtype = PARSUM_U64;
    d.sample_dtype = sample_size(c->kind) == 1 ? PARSUM_U8
                     : c->kind == C_F32        ? PARSUM_F32
                                               : PARSUM_U32;
    for (int ch = 0; ch < d.channels; ch++) {
        d.bins[ch].nbins = c->nbins;
        if (c->kind == C_F32) {
            d.bins[ch].lo.f64 = 0.0;
            d.bins[ch].hi.f64 = 1.0;
        } else {
            d.bins[ch].lo.i64 = 0;
            d.bins[ch].hi.i64 = sample_size(c->kind) == 1 ? 256 : (int64_t)1 << 32;
        }
    }
    return d;
}

/* The serial loop: what the case computes, written plainly. */
static void serial(const hbench *b, const hcase *c, uint64_t *const h[4])
{
    size_t n = b->n;
    int ch = c->kind == C_RGBA ? 4 : 1;
    for (int k = 0; k < ch; k++)
        memset(h[k], 0, c->nbins * 8);
    if (sample_size(c->kind) == 1) {
        const uint8_t *x = b->in;
        for (size_t i = 0; i + (size_t)ch <= n; i += (size_t)ch)
            for (int k = 0; k < ch; k++)
                h[k][x[i + (size_t)k]]++;
    } else if (c->kind == C_F32) {
        const float *x = b->in;
        for (size_t i = 0; i < n; i++)
            if (x[i] >= 0.0f && x[i] < 1.0f) {
                double t = (double)x[i] * (double)c->nbins;
                h[0][t >= (double)c->nbins ? c->nbins - 1 : (size_t)t]++;
            }
    } else {
        const uint32_t *x = b->in;
        unsigned sh = 0;
        while (((uint64_t)c->nbins << sh) < ((uint64_t)1 << 32))
            sh++;
        for (size_t i = 0; i < n; i++)
            h[0][x[i] >> sh]++;
    }
}

typedef struct hres {
    double t[NSTRAT + 2]; /* strategies, serial, read */
    int reps;
    int bad;
} hres;

static int run_case(hbench *b, const hcase *c, hres *r)
{
    parsum_histogram_desc d = make_desc(c);
    size_t pixels = b->n / (size_t)d.channels;
    int have_sort = b->n <= SORT_MAX_N;
    fill(b, c);
    void *cnt[4] = {NULL};
    for (int k = 0; k < d.channels; k++)
        cnt[k] = b->counts[k];
    serial(b, c, b->want);
    /* one untimed round, then the repetitions */
    double t0 = pb_now();
    for (int s = 0; s < NSTRAT; s++) {
        if (s == 3 && !have_sort)
            continue;
        d.strategy = (parsum_hist_strategy)s;
        parsum_status st = parsum_histogram(b->ctx, b->in, pixels, &d, cnt);
        if (st != PARSUM_OK) {
            fprintf(stderr, "parsum bench histogram: %s: %s\n",
                    parsum_status_name(st), parsum_last_error(b->ctx));
            return 1;
        }
        for (int k = 0; k < d.channels; k++)
            if (memcmp(b->counts[k], b->want[k], c->nbins * 8) != 0)
                r->bad = 1;
    }
    double per_round = pb_now() - t0;
    int reps = b->args->reps > 0 ? b->args->reps : pb_auto_reps(per_round * 1.5);
    double *tm = malloc(sizeof(double) * (size_t)reps * (NSTRAT + 2));
    if (tm == NULL)
        return 1;
    uint64_t sink = 0;
    for (int i = 0; i < reps; i++)
        for (int s = 0; s < NSTRAT + 2; s++) {
            if (s == 3 && !have_sort) {
                tm[s * reps + i] = 0;
                continue;
            }
            pb_scrub_run(&b->scrub, b->threads);
            double a = pb_now();
            if (s < NSTRAT) {
                d.strategy = (parsum_hist_strategy)s;
                (void)parsum_histogram(b->ctx, b->in, pixels, &d, cnt);
            } else if (s == NSTRAT) {
                serial(b, c, b->want);
            } else {
                sink += pb_read(b->in, b->n * sample_size(c->kind), b->threads);
            }
            tm[s * reps + i] = pb_now() - a;
        }
    for (int s = 0; s < NSTRAT + 2; s++)
        r->t[s] = pb_median(tm + s * reps, reps);
    r->reps = reps;
    b->scrub.sink += sink;
    free(tm);
    return 0;
}

static void print_row(FILE *out, const hbench *b, const hcase *c,
                      const hres *r)
{
    double bytes = (double)b->n * (double)sample_size(c->kind);
    double rd = bytes / r->t[NSTRAT + 1];
    static const char *const names[NSTRAT + 2] = {
        "auto", "atomic", "privatized", "sort", "serial", "read"};
    for (int s = 0; s < NSTRAT + 2; s++) {
        if (r->t[s] <= 0)
            continue;
        double gel = (double)b->n / r->t[s] / 1e9, gbs = bytes / r->t[s] / 1e9;
        if (b->args->json)
            fprintf(out,
                    "{\"bench\":\"histogram\",\"case\":\"%s\",\"n\":%zu,"
                    "\"threads\":%d,\"variant\":\"%s\",\"ms\":%.4f,"
                    "\"gelem_s\":%.4f,\"gb_s\":%.3f,\"pct_read\":%.1f,"
                    "\"reps\":%d,\"ok\":%s}\n",
                    c->name, b->n, b->threads, names[s], r->t[s] * 1e3, gel,
                    gbs, 100.0 * bytes / r->t[s] / rd, r->reps,
                    r->bad ? "false" : "true");
        else
            fprintf(out, "%-18s %-10s %10.3f %8.3f %8.2f %6.1f%%\n",
                    s == 0 ? c->name : "", names[s], r->t[s] * 1e3, gel, gbs,
                    100.0 * bytes / r->t[s] / rd);
    }
}

int parsum_bench_cpu_hist(const parsum_bench_args *args, FILE *out)
{
    hbench b;
    memset(&b, 0, sizeof b);
    b.args = args;
    b.n = args->n ? args->n : DEFAULT_N;
    b.n -= b.n % 4; /* whole RGBA pixels */
    if (b.n == 0) {
        fprintf(stderr, "parsum bench histogram: --n must be at least 4\n");
        return 2;
    }
    if (parsum_context_create(&b.ctx, PARSUM_BACKEND_CPU) != PARSUM_OK) {
        fprintf(stderr, "parsum bench histogram: cannot create a CPU context\n");
        return 1;
    }
    if (args->threads > 0)
        (void)parsum_context_set_threads(b.ctx, args->threads);
    b.threads = parsum_context_threads(b.ctx);
    b.in = malloc(b.n * 4);
    int rc = b.in == NULL;
    for (int k = 0; k < 4 && !rc; k++) {
        b.counts[k] = malloc(65536 * 8);
        b.want[k] = malloc(65536 * 8);
        rc = b.counts[k] == NULL || b.want[k] == NULL;
    }
    if (rc) {
        fprintf(stderr, "parsum bench histogram: out of memory\n");
    } else {
        pb_scrub_init(&b.scrub, b.n * 4, b.threads);
        if (!args->json)
            fprintf(out, "parsum bench histogram: n = %zu samples, backend cpu "
                         "(%s), %d threads; %% read = GB/s / the read loop's "
                         "GB/s (same run)\n%-18s %-10s %10s %8s %8s %7s\n",
                    b.n, pb_cpu_model(), b.threads, "case", "variant", "ms",
                    "Gelem/s", "GB/s", "% read");
    }
    int bad = 0;
    for (size_t i = 0; !rc && i < sizeof cases / sizeof *cases; i++) {
        hres r;
        memset(&r, 0, sizeof r);
        rc = run_case(&b, &cases[i], &r);
        if (!rc)
            print_row(out, &b, &cases[i], &r);
        if (r.bad) {
            fprintf(stderr, "parsum bench histogram: %s: parsum's counts "
                            "differ from the serial loop's\n", cases[i].name);
            bad = 1;
        }
        fflush(out);
    }
    pb_scrub_free(&b.scrub);
    for (int k = 0; k < 4; k++) {
        free(b.counts[k]);
        free(b.want[k]);
    }
    free(b.in);
    parsum_context_destroy(b.ctx);
    return rc || bad ? 1 : 0;
}
