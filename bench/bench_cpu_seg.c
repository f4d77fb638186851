/*
 * bench_cpu_seg.c - `parsum bench segscan|segreduce|scanbykey|reducebykey`
 * on the CPU (see bench_cpu.h).
 *
 * For each segment-length distribution (bench_segments.h) one round
 * times, on the same buffers: parsum's segmented operation, parsum's plain
 * scan or reduce of the same n elements (the CPU target is the
 * segmented operation within 15 % of that throughput), a serial loop, the
 * two copies and the read of bench_cpu.c; the figures are medians over the
 * rounds, cache evicted before each run.
 *
 * Bytes each operation must move (its GB/s):
 *   segscan      n*size read + n*size written + the flags (n / 8 bytes) or
 *                the offsets ((segments + 1) * 8 bytes)
 *   segreduce    n*size + the offsets read, segments * size written
 *   scanbykey    n*size + n*4 (u32 keys) read, n*size written
 *   reducebykey  n*size + n*4 read, runs * (size + 4) written
 * Its bound is the faster copy (scans) or the read (reductions). The keys
 * of the by-key benchmarks are u32: the segment index.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu.h"
#include "bench_cpu_util.h"
#include "bench_segments.h"
#include "bench_serial.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SEGSCAN, SEGREDUCE, SCANBYKEY, REDUCEBYKEY };
#define NPARTS 6 /* parsum, plain, serial, memcpy, stream copy, read */
#define SEED 0x5e65e65eull

typedef struct seg_bench {
    parsum_context *ctx;
    const parsum_bench_args *args;
    int kind, is_scan, threads;
    size_t n, size, bytes;
    void *a, *b;       /* values in, values out (also the copy target) */
    uint64_t *offsets; /* n + 1 */
    uint32_t *flags;   /* ceil(n / 32) */
    uint32_t *keys, *keys_out;
    size_t nseg, runs;
    parsum_segments seg;
    unsigned char identity[8], result[8];
    uint64_t sink;
    pb_scrub scrub;
} seg_bench;

typedef struct seg_result {
    double t[NPARTS]; /* medians, seconds */
    int reps;
    const char *check;
} seg_result;

/* ---- serial loops ------------------------------------------------------ */

#define HEAD_AT(i) ((i) == 0 || ((flags[(i) >> 5] >> ((i) & 31)) & 1u) != 0)
#define KEY_HEAD_AT(i) ((i) == 0 || keys[i] != keys[(i) - 1])

/* One step of a segmented scan at element i with head h. */
#define SEG_STEP(T, OP, i, h)                                                  \
    do {                                                                       \
        T v_ = x_[i];                                                          \
        if (excl) {                                                            \
            if (h)                                                             \
                acc = id_;                                                     \
            y_[i] = acc;                                                       \
            OP(T, acc, v_);                                                    \
        } else {                                                               \
            if (h)                                                             \
                acc = v_;                                                      \
            else                                                               \
                OP(T, acc, v_);                                                \
            y_[i] = acc;                                                       \
        }                                                                      \
    } while (0)

/* Backward, element i starts a segment when i + 1 does forward. */
#define SEG_SCAN_LOOP(T, OP, HEAD)                                             \
    do {                                                                       \
        const T *x_ = (const T *)in;                                           \
        T *y_ = (T *)out;                                                      \
        T acc, id_;                                                            \
        memcpy(&id_, ident, sizeof id_);                                       \
        acc = id_;                                                             \
        if (!rev)                                                              \
            for (size_t i = 0; i < n; i++)                                     \
                SEG_STEP(T, OP, i, HEAD(i));                                   \
        else                                                                   \
            for (size_t i = n; i-- > 0;)                                       \
                SEG_STEP(T, OP, i, i + 1 == n || HEAD(i + 1));                 \
    } while (0)
#define FLAG_SCAN_LOOP(T, OP) SEG_SCAN_LOOP(T, OP, HEAD_AT)
#define KEY_SCAN_LOOP(T, OP) SEG_SCAN_LOOP(T, OP, KEY_HEAD_AT)

#define SEG_REDUCE_LOOP(T, OP)                                                 \
    do {                                                                       \
        const T *x_ = (const T *)in;                                           \
        T *y_ = (T *)out;                                                      \
        for (size_t s = 0; s < nseg; s++) {                                    \
            T acc;                                                             \
            memcpy(&acc, ident, sizeof acc);                                   \
            for (uint64_t i = offsets[s]; i < offsets[s + 1]; i++)             \
                OP(T, acc, x_[i]);                                             \
            y_[s] = acc;                                                       \
        }                                                                      \
    } while (0)

#define KEY_REDUCE_LOOP(T, OP)                                                 \
    do {                                                                       \
        const T *x_ = (const T *)in;                                           \
        T *y_ = (T *)out;                                                      \
        T acc = 0;                                                             \
        size_t r_ = 0;                                                         \
        for (size_t i = 0; i < n; i++) {                                       \
            if (KEY_HEAD_AT(i)) {                                              \
                if (i > 0)                                                     \
                    y_[r_ - 1] = acc;                                          \
                keys_out[r_++] = keys[i];                                      \
                acc = x_[i];                                                   \
            } else {                                                           \
                OP(T, acc, x_[i]);                                             \
            }                                                                  \
        }                                                                      \
        if (n > 0)                                                             \
            y_[r_ - 1] = acc;                                                  \
        runs = r_;                                                             \
    } while (0)

static void serial_flag_scan(const void *in, void *out, size_t n,
                             const uint32_t *flags, parsum_dtype dtype,
                             parsum_op op, unsigned fl, const void *ident)
{
    int rev = (fl & PARSUM_REVERSE) != 0, excl = (fl & PARSUM_EXCLUSIVE) != 0;
    ALL_DTYPES(FLAG_SCAN_LOOP)
}

static void serial_key_scan(const void *in, void *out, size_t n,
                            const uint32_t *keys, parsum_dtype dtype,
                            parsum_op op, unsigned fl, const void *ident)
{
    int rev = (fl & PARSUM_REVERSE) != 0, excl = (fl & PARSUM_EXCLUSIVE) != 0;
    ALL_DTYPES(KEY_SCAN_LOOP)
}

static void serial_seg_reduce(const void *in, void *out,
                              const uint64_t *offsets, size_t nseg,
                              parsum_dtype dtype, parsum_op op,
                              const void *ident)
{
    ALL_DTYPES(SEG_REDUCE_LOOP)
}

static size_t serial_key_reduce(const void *in, void *out, size_t n,
                                const uint32_t *keys, uint32_t *keys_out,
                                parsum_dtype dtype, parsum_op op)
{
    size_t runs = 0;
    ALL_DTYPES(KEY_REDUCE_LOOP)
    return runs;
}

/* ---- the contestants --------------------------------------------------- */

static int report_error(const seg_bench *d, parsum_status st)
{
    fprintf(stderr, "parsum bench: %s: %s\n", parsum_status_name(st),
            parsum_last_error(d->ctx));
    return 1;
}

static void prepare(seg_bench *d)
{
    if (d->is_scan && d->args->inplace)
        pb_copy(d->b, d->a, d->bytes, d->threads);
}

static const void *scan_input(const seg_bench *d)
{
    return d->args->inplace ? d->b : d->a;
}

static parsum_status run_parsum(seg_bench *d)
{
    const parsum_bench_args *g = d->args;
    switch (d->kind) {
    case SEGSCAN:
        return parsum_segmented_scan(d->ctx, scan_input(d), d->b, d->n,
                                     g->dtype, g->op, &d->seg, g->flags);
    case SEGREDUCE:
        return parsum_segmented_reduce(d->ctx, d->a, d->b, d->offsets,
                                       d->nseg, g->dtype, g->op);
    case SCANBYKEY:
        return parsum_scan_by_key(d->ctx, d->keys, PARSUM_U32, scan_input(d),
                                  d->b, d->n, g->dtype, g->op, g->flags);
    default:
        return parsum_reduce_by_key(d->ctx, d->keys, PARSUM_U32, d->a, d->n,
                                    g->dtype, g->op, d->keys_out, d->b,
                                    &d->runs);
    }
}

/* The plain operation on the same elements: what the target compares to. */
static parsum_status run_plain(seg_bench *d)
{
    const parsum_bench_args *g = d->args;
    if (d->is_scan)
        return parsum_scan(d->ctx, scan_input(d), d->b, d->n, g->dtype, g->op,
                           g->flags);
    return parsum_reduce(d->ctx, d->a, d->n, g->dtype, g->op, d->result);
}

static void run_serial(seg_bench *d)
{
    const parsum_bench_args *g = d->args;
    switch (d->kind) {
    case SEGSCAN:
        serial_flag_scan(scan_input(d), d->b, d->n, d->flags, g->dtype, g->op,
                         g->flags, d->identity);
        break;
    case SEGREDUCE:
        serial_seg_reduce(d->a, d->b, d->offsets, d->nseg, g->dtype, g->op,
                          d->identity);
        break;
    case SCANBYKEY:
        serial_key_scan(scan_input(d), d->b, d->n, d->keys, g->dtype, g->op,
                        g->flags, d->identity);
        break;
    default:
        d->runs = serial_key_reduce(d->a, d->b, d->n, d->keys, d->keys_out,
                                    g->dtype, g->op);
        break;
    }
}

/* One round: t[k] for each part, in seconds. */
static int time_round(seg_bench *d, double t[NPARTS])
{
    double t0;
    parsum_status st;
    for (int k = 0; k < NPARTS; k++) {
        if (k <= 2)
            prepare(d);
        pb_scrub_run(&d->scrub, d->threads);
        t0 = pb_now();
        switch (k) {
        case 0: st = run_parsum(d); break;
        case 1: st = run_plain(d); break;
        case 2: run_serial(d); st = PARSUM_OK; break;
        case 3:
            pb_copy(d->b, d->a, d->bytes, d->threads);
            st = PARSUM_OK;
            break;
        case 4:
            pb_copy_stream(d->b, d->a, d->bytes, d->threads);
            st = PARSUM_OK;
            break;
        default:
            d->sink += pb_read(d->a, d->bytes, d->threads);
            st = PARSUM_OK;
            break;
        }
        t[k] = pb_now() - t0;
        if (st != PARSUM_OK)
            return report_error(d, st);
    }
    return 0;
}

static int measure(seg_bench *d, seg_result *r)
{
    double t[NPARTS];
    if (time_round(d, t) != 0 || time_round(d, t) != 0)
        return 1;
    double round = 0.0;
    for (int k = 0; k < NPARTS; k++)
        round += t[k];
    int reps = d->args->reps > 0 ? d->args->reps : pb_auto_reps(round);
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
    for (int k = 0; k < NPARTS; k++)
        r->t[k] = pb_median(v + (size_t)k * (size_t)reps, reps);
    r->reps = reps;
    free(v);
    return 0;
}

/* Output elements of the segmented operation. */
static size_t out_count(const seg_bench *d)
{
    if (d->kind == SEGREDUCE)
        return d->nseg;
    return d->kind == REDUCEBYKEY ? d->runs : d->n;
}

/* parsum's output against the serial loop's (integers and float min/max;
 * float sums and products are combined in another order). */
static int verify(seg_bench *d, seg_result *r)
{
    const parsum_bench_args *g = d->args;
    int flt = g->dtype == PARSUM_F32 || g->dtype == PARSUM_F64;
    if (flt && (g->op == PARSUM_SUM || g->op == PARSUM_PROD)) {
        r->check = "skipped (float sum/prod: rounding differs)";
        return 0;
    }
    prepare(d);
    parsum_status st = run_parsum(d);
    if (st != PARSUM_OK)
        return report_error(d, st);
    size_t cnt = out_count(d), runs = d->runs;
    uint64_t got = pb_checksum(d->b, cnt * d->size, d->threads);
    uint64_t got_keys =
        d->kind == REDUCEBYKEY ? pb_checksum(d->keys_out, runs * 4, 1) : 0;
    prepare(d);
    run_serial(d);
    uint64_t want = pb_checksum(d->b, out_count(d) * d->size, d->threads);
    uint64_t want_keys =
        d->kind == REDUCEBYKEY ? pb_checksum(d->keys_out, d->runs * 4, 1) : 0;
    if (got != want || got_keys != want_keys || runs != d->runs) {
        fprintf(stderr,
                "parsum bench: parsum's %s of n = %zu %s differs from the "
                "serial loop's\n",
                g->what, d->n, parsum_dtype_name(g->dtype));
        return 1;
    }
    r->check = "exact";
    return 0;
}

/* ---- output ------------------------------------------------------------ */

static double gbs(double bytes, double seconds)
{
    return seconds > 0.0 ? bytes / seconds * 1e-9 : 0.0;
}

/* Bytes the segmented operation moves (file comment). */
static double seg_bytes(const seg_bench *d)
{
    double v = (double)d->bytes, n = (double)d->n;
    double offs = 8.0 * ((double)d->nseg + 1.0);
    switch (d->kind) {
    case SEGSCAN:
        return 2.0 * v + (d->args->seg_offsets
                              ? offs
                              : 4.0 * (double)((d->n + 31) / 32));
    case SEGREDUCE:
        return v + offs + (double)d->nseg * (double)d->size;
    case SCANBYKEY:
        return 2.0 * v + 4.0 * n;
    default:
        return v + 4.0 * n + (double)d->runs * (4.0 + (double)d->size);
    }
}

static double plain_bytes(const seg_bench *d)
{
    return (double)d->bytes * (d->is_scan ? 2.0 : 1.0);
}

static double bound_gbs(const seg_bench *d, const seg_result *r)
{
    double copy = r->t[3] < r->t[4] ? r->t[3] : r->t[4];
    return d->is_scan ? gbs(2.0 * (double)d->bytes, copy)
                      : gbs((double)d->bytes, r->t[5]);
}

static void print_header(FILE *out, const seg_bench *d)
{
    const parsum_bench_args *g = d->args;
    char nbuf[32];
    fprintf(out, "parsum bench %s: n = %s, %s %s", g->what,
            pb_format_count(d->n, nbuf, sizeof nbuf),
            parsum_dtype_name(g->dtype), parsum_op_name(g->op));
    if (d->is_scan)
        fprintf(out, ", %s%s%s%s",
                (g->flags & PARSUM_EXCLUSIVE) ? "exclusive" : "inclusive",
                (g->flags & PARSUM_REVERSE) ? ", reverse" : "",
                g->inplace ? ", in place" : "",
                g->misalign ? ", values at 64k+16 bytes" : "");
    if (d->kind == SEGSCAN)
        fprintf(out, ", segments as %s",
                g->seg_offsets ? "offsets" : "packed flags");
    if (d->kind == SCANBYKEY || d->kind == REDUCEBYKEY)
        fprintf(out, ", u32 keys");
    fprintf(out, "\nbackend cpu (%s), %d threads; plain = parsum_%s of the "
                 "same n; ratio = plain time / %s time (target >= 0.85)\n",
            pb_cpu_model(), d->threads, d->is_scan ? "scan" : "reduce",
            g->what);
    fprintf(out, "%-12s %10s %10s %8s %10s %8s %7s %8s %8s %7s %5s  %s\n",
            "segments", "count", "parsum ms", "GB/s", "plain ms", "GB/s",
            "ratio", "serial", d->is_scan ? "copy" : "read", "%bound",
            "reps", "check");
}

static void print_row(FILE *out, const seg_bench *d, pb_seg_dist dist,
                      const seg_result *r)
{
    double sb = seg_bytes(d), bound = bound_gbs(d, r);
    fprintf(out,
            "%-12s %10zu %10.3f %8.2f %10.3f %8.2f %7.3f %8.2f %8.2f "
            "%6.1f%% %5d  %s\n",
            pb_seg_dist_name(dist), d->kind == REDUCEBYKEY ? d->runs : d->nseg,
            r->t[0] * 1e3, gbs(sb, r->t[0]), r->t[1] * 1e3,
            gbs(plain_bytes(d), r->t[1]), r->t[0] > 0 ? r->t[1] / r->t[0] : 0,
            gbs(sb, r->t[2]), bound,
            bound > 0 ? 100.0 * gbs(sb, r->t[0]) / bound : 0.0, r->reps,
            r->check);
}

static void print_json(FILE *out, const seg_bench *d, pb_seg_dist dist,
                       const seg_result *r)
{
    const parsum_bench_args *g = d->args;
    double sb = seg_bytes(d), bound = bound_gbs(d, r);
    fprintf(out,
            "{\"what\":\"%s\",\"backend\":\"cpu\",\"cpu\":\"%s\",\"n\":%zu,"
            "\"dtype\":\"%s\",\"op\":\"%s\",\"exclusive\":%s,\"reverse\":%s,"
            "\"inplace\":%s,\"misalign\":%s,\"segments\":\"%s\","
            "\"seg_kind\":\"%s\","
            "\"count\":%zu,\"threads\":%d,\"reps\":%d,\"bytes\":%.0f,",
            g->what, pb_cpu_model(), d->n, parsum_dtype_name(g->dtype),
            parsum_op_name(g->op),
            (g->flags & PARSUM_EXCLUSIVE) ? "true" : "false",
            (g->flags & PARSUM_REVERSE) ? "true" : "false",
            d->is_scan && g->inplace ? "true" : "false",
            g->misalign ? "true" : "false", pb_seg_dist_name(dist),
            d->kind == SEGSCAN ? (g->seg_offsets ? "offsets" : "flags")
                               : (d->kind == SEGREDUCE ? "offsets" : "keys"),
            d->kind == REDUCEBYKEY ? d->runs : d->nseg, d->threads, r->reps,
            sb);
    fprintf(out,
            "\"parsum_ms\":%.4f,\"parsum_gbs\":%.3f,\"plain_ms\":%.4f,"
            "\"plain_gbs\":%.3f,\"ratio_to_plain\":%.4f,\"serial_ms\":%.4f,"
            "\"copy_gbs\":%.3f,\"stream_copy_gbs\":%.3f,\"read_gbs\":%.3f,"
            "\"bound_gbs\":%.3f,\"ratio_to_bound\":%.4f,\"check\":\"%s\"}\n",
            r->t[0] * 1e3, gbs(sb, r->t[0]), r->t[1] * 1e3,
            gbs(plain_bytes(d), r->t[1]),
            r->t[0] > 0 ? r->t[1] / r->t[0] : 0.0, r->t[2] * 1e3,
            gbs(2.0 * (double)d->bytes, r->t[3]),
            gbs(2.0 * (double)d->bytes, r->t[4]),
            gbs((double)d->bytes, r->t[5]), bound,
            bound > 0 ? gbs(sb, r->t[0]) / bound : 0.0, r->check);
}

/* ---- driver ------------------------------------------------------------ */

/* Segments of one distribution into the buffers, then time and print. */
static int bench_dist(seg_bench *d, pb_seg_dist dist, FILE *out)
{
    seg_result r;
    memset(&r, 0, sizeof r);
    d->nseg = pb_seg_offsets(dist, d->n, SEED, d->offsets);
    if (d->flags != NULL)
        pb_seg_flags(d->offsets, d->nseg, d->n, d->flags);
    if (d->keys != NULL)
        pb_seg_keys(d->offsets, d->nseg, 4, d->keys);
    memset(&d->seg, 0, sizeof d->seg);
    if (d->args->seg_offsets) {
        d->seg.kind = PARSUM_SEG_OFFSETS;
        d->seg.offsets = d->offsets;
        d->seg.num_segments = d->nseg;
    } else {
        d->seg.kind = PARSUM_SEG_FLAGS;
        d->seg.flags = d->flags;
    }
    if (measure(d, &r) != 0 || verify(d, &r) != 0)
        return 1;
    if (d->args->json)
        print_json(out, d, dist, &r);
    else
        print_row(out, d, dist, &r);
    fflush(out);
    return 0;
}

/* Where the values in and out start past a 64-byte boundary. */
static size_t value_shift(const seg_bench *d)
{
    return d->args->misalign ? PB_MISALIGN : 0;
}

static int alloc_all(seg_bench *d)
{
    size_t n = d->n;
    void *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    size_t bytes[6] = {d->bytes, d->bytes, (n + 1) * sizeof(uint64_t),
                       (n + 31) / 32 * sizeof(uint32_t), 0, 0};
    if (d->kind == SCANBYKEY || d->kind == REDUCEBYKEY)
        bytes[4] = n * sizeof(uint32_t);
    if (d->kind == REDUCEBYKEY)
        bytes[5] = n * sizeof(uint32_t);
    for (int i = 0; i < 6; i++) {
        if (bytes[i] == 0)
            continue;
        parsum_status st = pb_alloc_shifted(d->ctx, &p[i], bytes[i],
                                            i < 2 ? value_shift(d) : 0);
        if (st != PARSUM_OK)
            return report_error(d, st);
    }
    d->a = p[0];
    d->b = p[1];
    d->offsets = (uint64_t *)p[2];
    d->flags = (uint32_t *)p[3];
    d->keys = (uint32_t *)p[4];
    d->keys_out = (uint32_t *)p[5];
    return 0;
}

static void free_all(seg_bench *d)
{
    void *p[6] = {d->a, d->b, d->offsets, d->flags, d->keys, d->keys_out};
    for (int i = 0; i < 6; i++)
        pb_free_shifted(d->ctx, p[i], i < 2 ? value_shift(d) : 0);
}

static int kind_of(const char *what)
{
    if (strcmp(what, "segscan") == 0)
        return SEGSCAN;
    if (strcmp(what, "segreduce") == 0)
        return SEGREDUCE;
    if (strcmp(what, "scanbykey") == 0)
        return SCANBYKEY;
    return REDUCEBYKEY;
}

static int bench_all(seg_bench *d, FILE *out)
{
    const parsum_bench_args *g = d->args;
    if (d->n > SIZE_MAX / 8 / d->size) {
        fprintf(stderr, "parsum bench: n = %zu is too large\n", d->n);
        return 1;
    }
    d->bytes = d->n * d->size;
    if (alloc_all(d) != 0)
        return 1;
    pb_fill_input(d->a, d->n, g->dtype, g->op, d->threads);
    pb_copy(d->b, d->a, d->bytes, d->threads); /* first touch of b */
    pb_scrub_init(&d->scrub, 2 * d->bytes, d->threads);
    if (!g->json)
        print_header(out, d);
    int rc = 0;
    for (int k = 0; k < PB_SEG_DIST_COUNT && rc == 0; k++)
        if (g->seg_dist < 0 || g->seg_dist == k)
            rc = bench_dist(d, (pb_seg_dist)k, out);
    pb_scrub_free(&d->scrub);
    return rc;
}

int parsum_bench_cpu_segmented(const parsum_bench_args *args, FILE *out)
{
    seg_bench d;
    memset(&d, 0, sizeof d);
    d.args = args;
    d.kind = kind_of(args->what);
    d.is_scan = d.kind == SEGSCAN || d.kind == SCANBYKEY;
    d.size = parsum_dtype_size(args->dtype);
    d.n = args->n;
    parsum_status st = parsum_context_create(&d.ctx, PARSUM_BACKEND_CPU);
    if (st != PARSUM_OK) {
        fprintf(stderr, "parsum bench: %s: cannot create a CPU context\n",
                parsum_status_name(st));
        return 1;
    }
    int rc = 1;
    parsum_op_identity(args->dtype, args->op, d.identity);
    st = parsum_context_set_threads(d.ctx, args->threads);
    if (st != PARSUM_OK) {
        report_error(&d, st);
        goto done;
    }
    d.threads = parsum_context_threads(d.ctx);
    rc = bench_all(&d, out);
    free_all(&d);
    if (d.sink == 0x5eed) /* practically never; keeps the reads alive */
        fprintf(out, " \n");
done:
    parsum_context_destroy(d.ctx);
    return rc;
}
