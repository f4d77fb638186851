/*
 * bench_cpu.c - `parsum bench reduce|scan` on the CPU (see bench_cpu.h).
 *
 * One measurement round times, on the same two buffers: parsum, the serial
 * loop, the multi-threaded memcpy, the same copy with non-temporal stores,
 * and the multi-threaded read. Warm-up rounds come first; the reported
 * figure of each is the median over the rounds. The copy bound of a scan
 * is the faster of the two copies. Interleaving the contestants inside
 * each round exposes them to the same machine noise, so their ratios are
 * steadier than their absolute times.
 *
 * Buffers: `a` holds the input and is never written after filling; `b` is
 * the scan output, the copy target, and for in-place scans the work buffer
 * (restored from `a` before each run, outside the timed region).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu.h"
#include "bench_cpu_util.h"
#include "bench_serial.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_data {
    parsum_context *ctx;
    const parsum_bench_args *args;
    int is_scan;
    int threads;
    size_t n;     /* elements */
    size_t size;  /* bytes per element */
    size_t bytes; /* n * size */
    void *a;      /* input */
    void *b;      /* output / copy target / in-place work buffer */
    unsigned char identity[8];
    unsigned char result[8]; /* last reduce result */
    uint64_t sink;           /* keeps the read loop's result alive */
    pb_scrub scrub;          /* cache eviction before each timed run */
} bench_data;

/* Medians of one measurement, seconds. */
#define NPARTS 5
typedef struct bench_result {
    double parsum, serial, copy, stream, read;
    int reps;
    const char *check; /* "exact" or why it was skipped */
} bench_result;

/* ---- serial loops: what a user writes without parsum ------------------ */

#define SCAN_LOOP(T, OP)                                                       \
    do {                                                                       \
        const T *x_ = (const T *)in;                                           \
        T *y_ = (T *)out;                                                      \
        T acc;                                                                 \
        memcpy(&acc, ident, sizeof acc);                                       \
        if (!rev && !excl)                                                     \
            for (size_t i = 0; i < n; i++) {                                   \
                T v = x_[i];                                                   \
                OP(T, acc, v);                                                 \
                y_[i] = acc;                                                   \
            }                                                                  \
        else if (!rev)                                                         \
            for (size_t i = 0; i < n; i++) {                                   \
                T v = x_[i];                                                   \
                y_[i] = acc;                                                   \
                OP(T, acc, v);                                                 \
            }                                                                  \
        else if (!excl)                                                        \
            for (size_t i = n; i-- > 0;) {                                     \
                T v = x_[i];                                                   \
                OP(T, acc, v);                                                 \
                y_[i] = acc;                                                   \
            }                                                                  \
        else                                                                   \
            for (size_t i = n; i-- > 0;) {                                     \
                T v = x_[i];                                                   \
                y_[i] = acc;                                                   \
                OP(T, acc, v);                                                 \
            }                                                                  \
    } while (0)

#define REDUCE_LOOP(T, OP)                                                     \
    do {                                                                       \
        const T *x_ = (const T *)in;                                           \
        T acc;                                                                 \
        memcpy(&acc, ident, sizeof acc);                                       \
        for (size_t i = 0; i < n; i++)                                         \
            OP(T, acc, x_[i]);                                                 \
        memcpy(out, &acc, sizeof acc);                                         \
    } while (0)

static void serial_scan(const void *in, void *out, size_t n,
                        parsum_dtype dtype, parsum_op op, unsigned flags,
                        const void *ident)
{
    int rev = (flags & PARSUM_REVERSE) != 0;
    int excl = (flags & PARSUM_EXCLUSIVE) != 0;
    ALL_DTYPES(SCAN_LOOP)
}

static void serial_reduce(const void *in, size_t n, parsum_dtype dtype,
                          parsum_op op, const void *ident, void *out)
{
    ALL_DTYPES(REDUCE_LOOP)
}

/* ---- data ------------------------------------------------------------- */

/* Random input: any bits for integers; floats in [0, 1), or within 1e-3
 * of 1 for products so that the running product stays a normal number. */
void pb_fill_input(void *p, size_t n, parsum_dtype dtype, parsum_op op,
                   int threads)
{
    size_t size = parsum_dtype_size(dtype);
    unsigned char *bytes = (unsigned char *)p;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t h = pb_hash64((uint64_t)i ^ 0x5eedull);
        double u = (double)(h >> 11) * 0x1.0p-53;
        if (op == PARSUM_PROD)
            u = 1.0 + (u - 0.5) * 1e-3;
        if (dtype == PARSUM_F32) {
            float f = (float)u;
            memcpy(bytes + i * size, &f, sizeof f);
        } else if (dtype == PARSUM_F64) {
            memcpy(bytes + i * size, &u, sizeof u);
        } else {
            memcpy(bytes + i * size, &h, size); /* low bytes, any order */
        }
    }
}

static int is_float(parsum_dtype dtype)
{
    return dtype == PARSUM_F32 || dtype == PARSUM_F64;
}

static int report_error(bench_data *d, parsum_status st)
{
    fprintf(stderr, "parsum bench: %s: %s\n", parsum_status_name(st),
            parsum_last_error(d->ctx));
    return 1;
}

/* ---- the four contestants --------------------------------------------- */

/* In-place scans overwrite their input: restore it (untimed). */
static void prepare(bench_data *d)
{
    if (d->is_scan && d->args->inplace)
        pb_copy(d->b, d->a, d->bytes, d->threads);
}

static parsum_status run_parsum(bench_data *d)
{
    const parsum_bench_args *g = d->args;
    if (!d->is_scan)
        return parsum_reduce(d->ctx, d->a, d->n, g->dtype, g->op, d->result);
    const void *in = g->inplace ? d->b : d->a;
    return parsum_scan(d->ctx, in, d->b, d->n, g->dtype, g->op, g->flags);
}

static void run_serial(bench_data *d)
{
    const parsum_bench_args *g = d->args;
    if (!d->is_scan) {
        serial_reduce(d->a, d->n, g->dtype, g->op, d->identity, d->result);
        return;
    }
    const void *in = g->inplace ? d->b : d->a;
    serial_scan(in, d->b, d->n, g->dtype, g->op, g->flags, d->identity);
}

/* One round: t[0..4] = parsum, serial, memcpy, stream copy, read, in
 * seconds; each run starts from an evicted cache when the data do not fit
 * in it. */
static int time_round(bench_data *d, double t[NPARTS])
{
    double t0;
    prepare(d);
    pb_scrub_run(&d->scrub, d->threads);
    t0 = pb_now();
    parsum_status st = run_parsum(d);
    t[0] = pb_now() - t0;
    if (st != PARSUM_OK)
        return report_error(d, st);
    prepare(d);
    pb_scrub_run(&d->scrub, d->threads);
    t0 = pb_now();
    run_serial(d);
    t[1] = pb_now() - t0;
    pb_scrub_run(&d->scrub, d->threads);
    t0 = pb_now();
    pb_copy(d->b, d->a, d->bytes, d->threads);
    t[2] = pb_now() - t0;
    pb_scrub_run(&d->scrub, d->threads);
    t0 = pb_now();
    pb_copy_stream(d->b, d->a, d->bytes, d->threads);
    t[3] = pb_now() - t0;
    pb_scrub_run(&d->scrub, d->threads);
    t0 = pb_now();
    d->sink += pb_read(d->a, d->bytes, d->threads);
    t[4] = pb_now() - t0;
    return 0;
}

static int measure(bench_data *d, bench_result *r)
{
    double t[NPARTS];
    /* Two warm-up rounds; the second, free of first-call costs, sizes the
     * number of timed rounds. */
    if (time_round(d, t) != 0 || time_round(d, t) != 0)
        return 1;
    int reps = d->args->reps > 0
                   ? d->args->reps
                   : pb_auto_reps(t[0] + t[1] + t[2] + t[3] + t[4]);
    double *v = (double *)malloc(NPARTS * (size_t)reps * sizeof *v);
    if (v == NULL) {
        fprintf(stderr, "parsum bench: out of memory for %d timings\n", reps);
        return 1;
    }
    for (int i = 0; i < reps; i++) {
        if (time_round(d, t) != 0) {
            free(v);
            return 1;
        }
        for (int k = 0; k < NPARTS; k++)
            v[(size_t)k * (size_t)reps + (size_t)i] = t[k];
    }
    r->parsum = pb_median(v, reps);
    r->serial = pb_median(v + reps, reps);
    r->copy = pb_median(v + 2 * (size_t)reps, reps);
    r->stream = pb_median(v + 3 * (size_t)reps, reps);
    r->read = pb_median(v + 4 * (size_t)reps, reps);
    r->reps = reps;
    free(v);
    return 0;
}

/* Compares parsum's result with the serial loop's. Float sums and
 * products are combined in another order, so they are not compared. */
static int verify(bench_data *d, bench_result *r)
{
    const parsum_bench_args *g = d->args;
    if (is_float(g->dtype) && (g->op == PARSUM_SUM || g->op == PARSUM_PROD)) {
        r->check = "skipped (float sum/prod: rounding differs)";
        return 0;
    }
    unsigned char got[8];
    uint64_t got_sum = 0, want_sum = 0;
    prepare(d);
    parsum_status st = run_parsum(d);
    if (st != PARSUM_OK)
        return report_error(d, st);
    if (d->is_scan)
        got_sum = pb_checksum(d->b, d->bytes, d->threads);
    memcpy(got, d->result, sizeof got);
    prepare(d);
    run_serial(d); /* the serial result replaces d->result / d->b */
    if (d->is_scan)
        want_sum = pb_checksum(d->b, d->bytes, d->threads);
    if (got_sum != want_sum || memcmp(got, d->result, d->size) != 0) {
        fprintf(stderr,
                "parsum bench: parsum's %s of n = %zu %s differs from the "
                "serial loop's\n",
                g->what, d->n, parsum_dtype_name(g->dtype));
        return 1;
    }
    r->check = "exact";
    return 0;
}

/* ---- output ----------------------------------------------------------- */

const char *pb_cpu_model(void)
{
    static char model[128] = "";
    if (model[0] != '\0')
        return model;
    snprintf(model, sizeof model, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return model;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += colon[1] == ' ' ? 2 : 1;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(model, sizeof model, "%s", colon);
            break;
        }
    }
    fclose(f);
    return model;
}

/* Bytes parsum moves: n*size read (+ n*size written for a scan). */
static double parsum_bytes(const bench_data *d)
{
    return (double)d->bytes * (d->is_scan ? 2.0 : 1.0);
}

static double gbs(double bytes, double seconds)
{
    return seconds > 0.0 ? bytes / seconds * 1e-9 : 0.0;
}

/* The bound's bandwidth: the faster copy (scan) or the read (reduce). */
static double bound_gbs(const bench_data *d, const bench_result *r)
{
    double copy = r->copy < r->stream ? r->copy : r->stream;
    return d->is_scan ? gbs(2.0 * (double)d->bytes, copy)
                      : gbs((double)d->bytes, r->read);
}

/* parsum's bandwidth as a fraction of its bound. */
static double bound_ratio(const bench_data *d, const bench_result *r)
{
    double bound = bound_gbs(d, r);
    return bound > 0.0 ? gbs(parsum_bytes(d), r->parsum) / bound : 0.0;
}

static void print_json(FILE *out, const bench_data *d, const bench_result *r)
{
    const parsum_bench_args *g = d->args;
    double pb = parsum_bytes(d), cb = 2.0 * (double)d->bytes;
    fprintf(out,
            "{\"what\":\"%s\",\"backend\":\"cpu\",\"cpu\":\"%s\","
            "\"n\":%zu,\"dtype\":\"%s\",\"op\":\"%s\",\"exclusive\":%s,"
            "\"reverse\":%s,\"inplace\":%s,\"misalign\":%s,\"threads\":%d,"
            "\"reps\":%d,\"bytes\":%.0f,",
            g->what, pb_cpu_model(), d->n, parsum_dtype_name(g->dtype),
            parsum_op_name(g->op),
            (g->flags & PARSUM_EXCLUSIVE) ? "true" : "false",
            (g->flags & PARSUM_REVERSE) ? "true" : "false",
            d->is_scan && g->inplace ? "true" : "false",
            g->misalign ? "true" : "false", d->threads, r->reps, pb);
    fprintf(out,
            "\"parsum_ms\":%.4f,\"parsum_gbs\":%.3f,\"serial_ms\":%.4f,"
            "\"serial_gbs\":%.3f,\"copy_ms\":%.4f,\"copy_gbs\":%.3f,"
            "\"stream_copy_ms\":%.4f,\"stream_copy_gbs\":%.3f,"
            "\"read_ms\":%.4f,\"read_gbs\":%.3f,\"bound\":\"%s\","
            "\"bound_gbs\":%.3f,\"ratio_to_bound\":%.4f,"
            "\"speedup_vs_serial\":%.3f,"
            "\"check\":\"%s\",\"cache_evicted\":%s}\n",
            r->parsum * 1e3, gbs(pb, r->parsum), r->serial * 1e3,
            gbs(pb, r->serial), r->copy * 1e3, gbs(cb, r->copy),
            r->stream * 1e3, gbs(cb, r->stream), r->read * 1e3,
            gbs((double)d->bytes, r->read), d->is_scan ? "copy" : "read",
            bound_gbs(d, r), bound_ratio(d, r),
            r->parsum > 0.0 ? r->serial / r->parsum : 0.0, r->check,
            d->scrub.bytes ? "true" : "false");
}

static void print_header(FILE *out, const bench_data *d, size_t n_shown)
{
    const parsum_bench_args *g = d->args;
    char nbuf[32];
    fprintf(out, "parsum bench %s: n = %s, %s %s", g->what,
            n_shown ? pb_format_count(n_shown, nbuf, sizeof nbuf) : "sweep",
            parsum_dtype_name(g->dtype), parsum_op_name(g->op));
    if (d->is_scan)
        fprintf(out, ", %s%s%s%s",
                (g->flags & PARSUM_EXCLUSIVE) ? "exclusive" : "inclusive",
                (g->flags & PARSUM_REVERSE) ? ", reverse" : "",
                g->inplace ? ", in place" : "",
                g->misalign ? ", values at 64k+16 bytes" : "");
    fprintf(out, "\nbackend cpu (%s), %d threads\n", pb_cpu_model(), d->threads);
}

static void print_block(FILE *out, const bench_data *d, const bench_result *r)
{
    double pb = parsum_bytes(d), cb = 2.0 * (double)d->bytes;
    fprintf(out, "median of %d runs after warm-up%s\n", r->reps,
            d->scrub.bytes ? ", cache evicted before each run" : "");
    fprintf(out, "  %-26s %12s %12s\n", "", "time", "bandwidth");
    fprintf(out, "  parsum_%-19s %9.3f ms %7.2f GB/s\n", d->args->what,
            r->parsum * 1e3, gbs(pb, r->parsum));
    fprintf(out, "  %-26s %9.3f ms %7.2f GB/s\n", "serial loop",
            r->serial * 1e3, gbs(pb, r->serial));
    fprintf(out, "  memcpy,      %3d threads   %9.3f ms %7.2f GB/s  "
                 "(read + write)\n",
            d->threads, r->copy * 1e3, gbs(cb, r->copy));
    fprintf(out, "  stream copy, %3d threads   %9.3f ms %7.2f GB/s  "
                 "(non-temporal stores)\n",
            d->threads, r->stream * 1e3, gbs(cb, r->stream));
    fprintf(out, "  read,        %3d threads   %9.3f ms %7.2f GB/s  "
                 "(read only)\n",
            d->threads, r->read * 1e3, gbs((double)d->bytes, r->read));
    fprintf(out, "  parsum / %s bandwidth   %9.1f %%%s\n",
            d->is_scan ? "copy" : "read", 100.0 * bound_ratio(d, r),
            d->is_scan ? "  (of the faster copy)" : "");
    fprintf(out, "  speedup over serial loop  %9.2fx\n",
            r->parsum > 0.0 ? r->serial / r->parsum : 0.0);
    fprintf(out, "  check                      %s\n", r->check);
}

static void print_row(FILE *out, const bench_data *d, const bench_result *r,
                      int first)
{
    double pb = parsum_bytes(d);
    char nbuf[32];
    if (first)
        fprintf(out, "%12s %10s %9s %9s %9s %9s %9s %8s %8s %5s\n", "n",
                "parsum ms", "GB/s", "serial", "memcpy", "stream", "read",
                "%bound", "speedup", "reps");
    fprintf(out,
            "%12s %10.4f %9.2f %9.2f %9.2f %9.2f %9.2f %7.1f%% %7.2fx %5d\n",
            pb_format_count(d->n, nbuf, sizeof nbuf), r->parsum * 1e3,
            gbs(pb, r->parsum), gbs(pb, r->serial),
            gbs(2.0 * (double)d->bytes, r->copy),
            gbs(2.0 * (double)d->bytes, r->stream),
            gbs((double)d->bytes, r->read), 100.0 * bound_ratio(d, r),
            r->parsum > 0.0 ? r->serial / r->parsum : 0.0, r->reps);
}

/* ---- driver ----------------------------------------------------------- */

/* Measures one size n: allocates, fills, times, checks, prints. */
static int bench_size(bench_data *d, size_t n, int row, int first_row,
                      FILE *out)
{
    const parsum_bench_args *g = d->args;
    bench_result r;
    int rc = 1;
    memset(&r, 0, sizeof r);
    d->n = n;
    if (n > SIZE_MAX / d->size) {
        fprintf(stderr, "parsum bench: n = %zu is too large\n", n);
        return 1;
    }
    d->bytes = n * d->size;
    d->a = d->b = NULL;
    size_t shift = g->misalign ? PB_MISALIGN : 0;
    parsum_status st = pb_alloc_shifted(d->ctx, &d->a, d->bytes, shift);
    if (st == PARSUM_OK)
        st = pb_alloc_shifted(d->ctx, &d->b, d->bytes, shift);
    if (st != PARSUM_OK) {
        report_error(d, st);
        goto done;
    }
    pb_fill_input(d->a, n, g->dtype, g->op, d->threads);
    pb_copy(d->b, d->a, d->bytes, d->threads); /* first touch of b */
    pb_scrub_init(&d->scrub, 2 * d->bytes, d->threads);
    if (measure(d, &r) != 0 || verify(d, &r) != 0)
        goto done;
    if (g->json)
        print_json(out, d, &r);
    else if (row)
        print_row(out, d, &r, first_row);
    else
        print_block(out, d, &r);
    fflush(out);
    rc = 0;
done:
    pb_scrub_free(&d->scrub);
    pb_free_shifted(d->ctx, d->a, shift);
    pb_free_shifted(d->ctx, d->b, shift);
    return rc;
}

static int bench_all(bench_data *d, FILE *out)
{
    static const size_t sweep[] = {(size_t)1 << 12, (size_t)1 << 16,
                                   (size_t)1 << 20, (size_t)1 << 24,
                                   (size_t)1 << 26};
    const parsum_bench_args *g = d->args;
    if (!g->json)
        print_header(out, d, g->n);
    if (g->n != 0)
        return bench_size(d, g->n, 0, 1, out);
    for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++)
        if (bench_size(d, sweep[i], 1, i == 0, out) != 0)
            return 1;
    return 0;
}

int parsum_bench_cpu(const parsum_bench_args *args, FILE *out)
{
    bench_data d;
    memset(&d, 0, sizeof d);
    d.args = args;
    d.is_scan = strcmp(args->what, "scan") == 0;
    d.size = parsum_dtype_size(args->dtype);
    parsum_status st = parsum_context_create(&d.ctx, PARSUM_BACKEND_CPU);
    if (st != PARSUM_OK) {
        fprintf(stderr, "parsum bench: %s: cannot create a CPU context\n",
                parsum_status_name(st));
        return 1;
    }
    int rc = 1;
    if (parsum_op_identity(args->dtype, args->op, d.identity) != PARSUM_OK) {
        fprintf(stderr, "parsum bench: op %s is not defined on dtype %s\n",
                parsum_op_name(args->op), parsum_dtype_name(args->dtype));
        rc = 2;
        goto done;
    }
    st = parsum_context_set_threads(d.ctx, args->threads);
    if (st != PARSUM_OK) {
        report_error(&d, st);
        goto done;
    }
    d.threads = parsum_context_threads(d.ctx);
    rc = bench_all(&d, out);
    if (d.sink == 0x5eed) /* practically never; keeps the reads alive */
        fprintf(out, " \n");
done:
    parsum_context_destroy(d.ctx);
    return rc;
}
