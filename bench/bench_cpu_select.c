/*
 * bench_cpu_select.c - `parsum bench select|partition|partition_unstable|
 * unique|rle` on the CPU (see bench_cpu.h).
 *
 * One round times, on the same buffers: parsum's call, a serial loop
 * doing the same (what a user writes without parsum), a multi-threaded
 * memcpy of the input and the same copy with non-temporal stores; the
 * figures are medians over the rounds, cache evicted before each run when
 * the data do not fit in it, and parsum's output is checked against the
 * serial loop's.
 *
 * Inputs: select and partition keep the elements x < t of random data
 * (bench_cpu.c's input: any bits for integers, floats in [0, 1)), t the
 * constant that selects --selectivity percent of them; --select-by bytes
 * or bits takes the same elements through a flag array instead. unique
 * and rle run on keys whose runs are the segments of bench_segments.h
 * (--seg).
 *
 * Bytes each must move (its GB/s), against the faster copy's bandwidth
 * (n*size read + n*size written): the CPU target is select at 50 %
 * at 60 % or more of it, which counts 6 bytes per 4-byte element.
 *   select     n*size read + k*size written (+ the flags: n, or n / 8)
 *   partition  n*size read + n*size written (+ the flags); the same for
 *              partition_unstable (parsum_partition_unstable, whose serial
 *              loop fills the rejected part from the end in one pass)
 *   unique     n*size read + runs*size written
 *   rle        n*size read + runs*(size + 8) written (values, lengths)
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_cpu.h"
#include "bench_cpu_util.h"
#include "bench_segments.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SELECT, PARTITION, PARTITION_UNSTABLE, UNIQUE, RLE };
/* select and the partitions: elements chosen by x < t or by flags */
#define SELECTS(kind) ((kind) <= PARTITION_UNSTABLE)
#define NPARTS 4 /* parsum, serial, memcpy, stream copy */
#define SEED 0x5e1ec7ull

typedef struct sel_bench {
    parsum_context *ctx;
    const parsum_bench_args *args;
    int kind, threads;
    size_t n, size, bytes;
    void *a, *b;        /* input; output and copy target */
    uint64_t *lengths;  /* rle */
    uint64_t *offsets;  /* unique, rle: the segments (n + 1) */
    uint8_t *flags;     /* --select-by bytes */
    uint32_t *bits;     /* --select-by bits */
    parsum_selector sel;
    unsigned char threshold[8];
    int pct;            /* selectivity of this row */
    size_t count;       /* selected elements or runs of the last call */
    pb_scrub scrub;
} sel_bench;

typedef struct sel_result {
    double t[NPARTS]; /* medians, seconds */
    int reps;
} sel_result;

/* ---- serial loops -------------------------------------------------------- */

#define IS_SEL(i)                                                           \
    (by == 1   ? flags[i] != 0                                              \
     : by == 2 ? ((bits[(i) >> 5] >> ((i) & 31)) & 1u) != 0                 \
               : x_[i] < t_)

/* Select or partition on the elements of type T (partition 2: the
 * rejected ones from the end down, parsum_partition_unstable's order). */
#define SELECT_LOOP(T)                                                      \
    do {                                                                    \
        const T *x_ = (const T *)in;                                        \
        T *y_ = (T *)out, t_;                                               \
        memcpy(&t_, thr, sizeof t_);                                        \
        size_t k_ = 0;                                                      \
        if (!partition) {                                                   \
            for (size_t i = 0; i < n; i++)                                  \
                if (IS_SEL(i))                                              \
                    y_[k_++] = x_[i];                                       \
            return k_;                                                      \
        }                                                                   \
        if (partition == 2) {                                               \
            size_t e_ = n;                                                  \
            for (size_t i = 0; i < n; i++) {                                \
                if (IS_SEL(i))                                              \
                    y_[k_++] = x_[i];                                       \
                else                                                        \
                    y_[--e_] = x_[i];                                       \
            }                                                               \
            return k_;                                                      \
        }                                                                   \
        for (size_t i = 0; i < n; i++)                                      \
            k_ += IS_SEL(i);                                                \
        size_t s_ = 0, r_ = k_;                                             \
        for (size_t i = 0; i < n; i++) {                                    \
            if (IS_SEL(i))                                                  \
                y_[s_++] = x_[i];                                           \
            else                                                            \
                y_[r_++] = x_[i];                                           \
        }                                                                   \
        return k_;                                                          \
    } while (0)

static size_t serial_select(const void *in, void *out, size_t n,
                            parsum_dtype dtype, const void *thr, int by,
                            const uint8_t *flags, const uint32_t *bits,
                            int partition)
{
    switch (dtype) {
    case PARSUM_I8: SELECT_LOOP(int8_t);
    case PARSUM_U8: SELECT_LOOP(uint8_t);
    case PARSUM_I16: SELECT_LOOP(int16_t);
    case PARSUM_U16: SELECT_LOOP(uint16_t);
    case PARSUM_I32: SELECT_LOOP(int32_t);
    case PARSUM_U32: SELECT_LOOP(uint32_t);
    case PARSUM_I64: SELECT_LOOP(int64_t);
    case PARSUM_U64: SELECT_LOOP(uint64_t);
    case PARSUM_F32: SELECT_LOOP(float);
    case PARSUM_F64: SELECT_LOOP(double);
    }
    return 0;
}
#undef SELECT_LOOP
#undef IS_SEL

/* Keys compared bit for bit: as unsigned integers of their size. */
#define RUNS_LOOP(T)                                                        \
    do {                                                                    \
        const T *x_ = (const T *)in;                                        \
        T *y_ = (T *)out;                                                   \
        size_t r_ = 0, h_ = 0;                                              \
        for (size_t i = 0; i < n; i++) {                                    \
            if (i > 0 && x_[i] == x_[i - 1])                                \
                continue;                                                   \
            if (lengths != NULL && r_ > 0)                                  \
                lengths[r_ - 1] = i - h_;                                   \
            y_[r_++] = x_[i];                                               \
            h_ = i;                                                         \
        }                                                                   \
        if (lengths != NULL && r_ > 0)                                      \
            lengths[r_ - 1] = n - h_;                                       \
        return r_;                                                          \
    } while (0)

static size_t serial_runs(const void *in, void *out, uint64_t *lengths,
                          size_t n, size_t size)
{
    switch (size) {
    case 1: RUNS_LOOP(uint8_t);
    case 2: RUNS_LOOP(uint16_t);
    case 4: RUNS_LOOP(uint32_t);
    default: RUNS_LOOP(uint64_t);
    }
}
#undef RUNS_LOOP

/* ---- the contestants ----------------------------------------------------- */

static int report_error(const sel_bench *d, parsum_status st)
{
    fprintf(stderr, "parsum bench: %s: %s\n", parsum_status_name(st),
            parsum_last_error(d->ctx));
    return 1;
}

static parsum_status run_parsum(sel_bench *d)
{
    switch (d->kind) {
    case SELECT:
        return parsum_select(d->ctx, d->a, d->b, d->n, d->size, &d->sel,
                             &d->count);
    case PARTITION:
        return parsum_partition(d->ctx, d->a, d->b, d->n, d->size, &d->sel,
                                &d->count);
    case PARTITION_UNSTABLE:
        return parsum_partition_unstable(d->ctx, d->a, d->b, d->n, d->size,
                                         &d->sel, &d->count);
    case UNIQUE:
        return parsum_unique(d->ctx, d->a, d->b, d->n, d->size, &d->count);
    default:
        return parsum_run_length_encode(d->ctx, d->a, d->n, d->size, d->b,
                                        d->lengths, &d->count);
    }
}

static void run_serial(sel_bench *d)
{
    if (d->kind == UNIQUE || d->kind == RLE) {
        d->count = serial_runs(d->a, d->b, d->kind == RLE ? d->lengths : NULL,
                               d->n, d->size);
        return;
    }
    d->count = serial_select(d->a, d->b, d->n, d->args->dtype, d->threshold,
                             d->args->select_by, d->flags, d->bits,
                             d->kind == PARTITION            ? 1
                             : d->kind == PARTITION_UNSTABLE ? 2
                                                             : 0);
}

/* One round: t[k] for each part, in seconds. */
static int time_round(sel_bench *d, double t[NPARTS])
{
    for (int k = 0; k < NPARTS; k++) {
        parsum_status st = PARSUM_OK;
        pb_scrub_run(&d->scrub, d->threads);
        double t0 = pb_now();
        switch (k) {
        case 0: st = run_parsum(d); break;
        case 1: run_serial(d); break;
        case 2: pb_copy(d->b, d->a, d->bytes, d->threads); break;
        default: pb_copy_stream(d->b, d->a, d->bytes, d->threads); break;
        }
        t[k] = pb_now() - t0;
        if (st != PARSUM_OK)
            return report_error(d, st);
    }
    return 0;
}

static int measure(sel_bench *d, sel_result *r)
{
    double t[NPARTS];
    if (time_round(d, t) != 0 || time_round(d, t) != 0)
        return 1;
    int reps = d->args->reps > 0 ? d->args->reps
                                 : pb_auto_reps(t[0] + t[1] + t[2] + t[3]);
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

/* Bytes of output: k elements (select, unique), n (partition), runs
 * elements and lengths (rle). */
static size_t out_bytes(const sel_bench *d)
{
    if (d->kind == PARTITION || d->kind == PARTITION_UNSTABLE)
        return d->bytes;
    return d->count * d->size;
}

/* parsum's output against the serial loop's, exactly. */
static int verify(sel_bench *d)
{
    parsum_status st = run_parsum(d);
    if (st != PARSUM_OK)
        return report_error(d, st);
    size_t k = d->count;
    uint64_t got = pb_checksum(d->b, out_bytes(d), d->threads);
    uint64_t got_len =
        d->kind == RLE ? pb_checksum(d->lengths, k * 8, d->threads) : 0;
    run_serial(d);
    uint64_t want = pb_checksum(d->b, out_bytes(d), d->threads);
    uint64_t want_len =
        d->kind == RLE ? pb_checksum(d->lengths, d->count * 8, d->threads)
                       : 0;
    if (k != d->count || got != want || got_len != want_len) {
        fprintf(stderr, "parsum bench: parsum's %s of n = %zu %s differs "
                        "from the serial loop's (count %zu, serial %zu)\n",
                d->args->what, d->n, parsum_dtype_name(d->args->dtype), k,
                d->count);
        return 1;
    }
    return 0;
}

/* ---- output -------------------------------------------------------------- */

static double gbs(double bytes, double seconds)
{
    return seconds > 0.0 ? bytes / seconds * 1e-9 : 0.0;
}

/* Bytes the operation moves (file comment). */
static double moved(const sel_bench *d)
{
    double v = (double)d->bytes, k = (double)d->count, s = (double)d->size;
    double fl = d->args->select_by == 1   ? (double)d->n
                : d->args->select_by == 2 ? (double)d->n / 8.0
                                          : 0.0;
    switch (d->kind) {
    case SELECT: return v + k * s + fl;
    case PARTITION:
    case PARTITION_UNSTABLE: return 2.0 * v + fl;
    case UNIQUE: return v + k * s;
    default: return v + k * (s + 8.0);
    }
}

static double copy_gbs(const sel_bench *d, const sel_result *r)
{
    double t = r->t[2] < r->t[3] ? r->t[2] : r->t[3];
    return gbs(2.0 * (double)d->bytes, t);
}

static const char *by_name(int by)
{
    return by == 1 ? "bytes" : by == 2 ? "bits" : "predicate x < t";
}

static void print_header(FILE *out, const sel_bench *d)
{
    const parsum_bench_args *g = d->args;
    char nbuf[32];
    fprintf(out, "parsum bench %s: n = %s, %s", g->what,
            pb_format_count(d->n, nbuf, sizeof nbuf),
            parsum_dtype_name(g->dtype));
    if (SELECTS(d->kind))
        fprintf(out, ", selected by %s", by_name(g->select_by));
    fprintf(out, "\nbackend cpu (%s), %d threads; %%copy = parsum GB/s / "
                 "the faster copy's GB/s (n*size read + written)\n",
            pb_cpu_model(), d->threads);
    fprintf(out, "%-12s %11s %10s %8s %10s %8s %8s %8s %7s %5s\n",
            SELECTS(d->kind) ? "selectivity" : "runs", "count",
            "parsum ms", "GB/s", "serial ms", "GB/s", "vs ser", "copy",
            "%copy", "reps");
}

static void row_name(const sel_bench *d, int dist, char *buf, size_t len)
{
    if (SELECTS(d->kind))
        snprintf(buf, len, "%d%%", d->pct);
    else
        snprintf(buf, len, "%s", pb_seg_dist_name((pb_seg_dist)dist));
}

static void print_row(FILE *out, const sel_bench *d, int dist,
                      const sel_result *r)
{
    char name[32];
    row_name(d, dist, name, sizeof name);
    double mb = moved(d), cg = copy_gbs(d, r);
    fprintf(out, "%-12s %11zu %10.3f %8.2f %10.3f %8.2f %7.2fx %8.2f "
                 "%6.1f%% %5d\n",
            name, d->count, r->t[0] * 1e3, gbs(mb, r->t[0]), r->t[1] * 1e3,
            gbs(mb, r->t[1]), r->t[0] > 0 ? r->t[1] / r->t[0] : 0.0, cg,
            cg > 0 ? 100.0 * gbs(mb, r->t[0]) / cg : 0.0, r->reps);
}

static void print_json(FILE *out, const sel_bench *d, int dist,
                       const sel_result *r)
{
    const parsum_bench_args *g = d->args;
    char name[32];
    row_name(d, dist, name, sizeof name);
    double mb = moved(d), cg = copy_gbs(d, r);
    fprintf(out,
            "{\"what\":\"%s\",\"backend\":\"cpu\",\"cpu\":\"%s\",\"n\":%zu,"
            "\"dtype\":\"%s\",\"select_by\":\"%s\",\"case\":\"%s\","
            "\"count\":%zu,\"threads\":%d,\"reps\":%d,\"bytes\":%.0f,",
            g->what, pb_cpu_model(), d->n, parsum_dtype_name(g->dtype),
            SELECTS(d->kind) ? by_name(g->select_by) : "runs", name,
            d->count, d->threads, r->reps, mb);
    fprintf(out,
            "\"parsum_ms\":%.4f,\"parsum_gbs\":%.3f,\"serial_ms\":%.4f,"
            "\"serial_gbs\":%.3f,\"copy_gbs\":%.3f,\"stream_copy_gbs\":%.3f,"
            "\"ratio_to_copy\":%.4f,\"speedup_vs_serial\":%.3f,"
            "\"check\":\"exact\"}\n",
            r->t[0] * 1e3, gbs(mb, r->t[0]), r->t[1] * 1e3, gbs(mb, r->t[1]),
            gbs(2.0 * (double)d->bytes, r->t[2]),
            gbs(2.0 * (double)d->bytes, r->t[3]),
            cg > 0 ? gbs(mb, r->t[0]) / cg : 0.0,
            r->t[0] > 0 ? r->t[1] / r->t[0] : 0.0);
}

/* ---- inputs -------------------------------------------------------------- */

/* The constant t with x < t for pct percent of bench_cpu.c's input. */
static void make_threshold(parsum_dtype dt, int pct, unsigned char *thr)
{
    double f = pct / 100.0;
    size_t size = parsum_dtype_size(dt);
    memset(thr, 0, 8);
    if (dt == PARSUM_F32) {
        float v = (float)f;
        memcpy(thr, &v, 4);
        return;
    }
    if (dt == PARSUM_F64) {
        memcpy(thr, &f, 8);
        return;
    }
    int is_signed = dt == PARSUM_I8 || dt == PARSUM_I16 || dt == PARSUM_I32 ||
                    dt == PARSUM_I64;
    /* unsigned: f * 2^bits; signed: the same shifted down by 2^(bits-1),
     * as two's complement bits (the top bit flipped) */
    double span = 1.0;
    for (size_t b = 0; b < 8 * size; b++)
        span *= 2.0;
    double u = f * span;
    uint64_t v = u >= span ? ~(uint64_t)0 : (uint64_t)u;
    if (size < 8 && u >= span)
        v = ((uint64_t)1 << (8 * size)) - 1;
    if (is_signed)
        v ^= (uint64_t)1 << (8 * size - 1);
    memcpy(thr, &v, size); /* little-endian: the low bytes */
}

/* The selector of this row: the predicate x < t, or flags set for pct
 * percent of the elements, drawn independently of the data. */
static void make_selector(sel_bench *d)
{
    const parsum_bench_args *g = d->args;
    make_threshold(g->dtype, d->pct, d->threshold);
    memset(&d->sel, 0, sizeof d->sel);
    d->sel.kind = PARSUM_SELECT_PREDICATE;
    d->sel.dtype = g->dtype;
    d->sel.pred = PARSUM_PRED_LT;
    memcpy(&d->sel.a, d->threshold, 8);
    if (g->select_by == 0)
        return;
    if (d->bits != NULL)
        memset(d->bits, 0, (d->n + 31) / 32 * 4);
    for (size_t i = 0; i < d->n; i++) {
        int on = pb_hash64(i ^ SEED) % 100 < (uint64_t)d->pct;
        if (d->flags != NULL)
            d->flags[i] = (uint8_t)on;
        else
            d->bits[i / 32] |= (uint32_t)on << (i % 32);
    }
    d->sel.kind = g->select_by == 1 ? PARSUM_SELECT_BYTES : PARSUM_SELECT_BITS;
    d->sel.bytes = d->flags;
    d->sel.bits = d->bits;
}

/* Keys whose runs are the segments of dist, as the element type's bits. */
static void make_runs(sel_bench *d, int dist)
{
    size_t nseg = pb_seg_offsets((pb_seg_dist)dist, d->n, SEED, d->offsets);
    pb_seg_keys(d->offsets, nseg, d->size, d->a);
}

static int bench_row(sel_bench *d, int dist, FILE *out)
{
    sel_result r;
    memset(&r, 0, sizeof r);
    if (SELECTS(d->kind))
        make_selector(d);
    else
        make_runs(d, dist);
    if (measure(d, &r) != 0 || verify(d) != 0)
        return 1;
    if (d->args->json)
        print_json(out, d, dist, &r);
    else
        print_row(out, d, dist, &r);
    fflush(out);
    return 0;
}

/* ---- driver -------------------------------------------------------------- */

static int alloc_all(sel_bench *d)
{
    size_t n = d->n;
    int runs = d->kind == UNIQUE || d->kind == RLE;
    void *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    size_t bytes[6] = {d->bytes, d->bytes,
                       d->kind == RLE ? n * sizeof(uint64_t) : 0,
                       runs ? (n + 1) * sizeof(uint64_t) : 0,
                       d->args->select_by == 1 ? n : 0,
                       d->args->select_by == 2 ? (n + 31) / 32 * 4 : 0};
    for (int i = 0; i < 6; i++) {
        if (bytes[i] == 0)
            continue;
        parsum_status st = parsum_alloc(d->ctx, &p[i], bytes[i]);
        if (st != PARSUM_OK)
            return report_error(d, st);
    }
    d->a = p[0];
    d->b = p[1];
    d->lengths = (uint64_t *)p[2];
    d->offsets = (uint64_t *)p[3];
    d->flags = (uint8_t *)p[4];
    d->bits = (uint32_t *)p[5];
    return 0;
}

static void free_all(sel_bench *d)
{
    void *p[6] = {d->a, d->b, d->lengths, d->offsets, d->flags, d->bits};
    for (int i = 0; i < 6; i++)
        parsum_free(d->ctx, p[i]);
}

static int kind_of(const char *what)
{
    if (strcmp(what, "select") == 0)
        return SELECT;
    if (strcmp(what, "partition") == 0)
        return PARTITION;
    if (strcmp(what, "partition_unstable") == 0)
        return PARTITION_UNSTABLE;
    return strcmp(what, "unique") == 0 ? UNIQUE : RLE;
}

static int bench_all(sel_bench *d, FILE *out)
{
    static const int sweep[] = {1, 10, 50, 90, 99};
    const parsum_bench_args *g = d->args;
    if (d->n > SIZE_MAX / 16 / d->size) {
        fprintf(stderr, "parsum bench: n = %zu is too large\n", d->n);
        return 1;
    }
    d->bytes = d->n * d->size;
    if (alloc_all(d) != 0)
        return 1;
    pb_fill_input(d->a, d->n, g->dtype, PARSUM_SUM, d->threads);
    pb_copy(d->b, d->a, d->bytes, d->threads); /* first touch of b */
    if (d->lengths != NULL)
        memset(d->lengths, 0, d->n * sizeof(uint64_t));
    pb_scrub_init(&d->scrub, 2 * d->bytes, d->threads);
    if (!g->json)
        print_header(out, d);
    int rc = 0;
    if (SELECTS(d->kind)) {
        for (int i = 0; i < 5 && rc == 0; i++) {
            d->pct = g->selectivity >= 0 ? g->selectivity : sweep[i];
            rc = bench_row(d, 0, out);
            if (g->selectivity >= 0)
                break;
        }
    } else {
        for (int k = 0; k < PB_SEG_DIST_COUNT && rc == 0; k++)
            if (g->seg_dist < 0 || g->seg_dist == k)
                rc = bench_row(d, k, out);
    }
    pb_scrub_free(&d->scrub);
    return rc;
}

int parsum_bench_cpu_select(const parsum_bench_args *args, FILE *out)
{
    sel_bench d;
    memset(&d, 0, sizeof d);
    d.args = args;
    d.kind = kind_of(args->what);
    d.size = parsum_dtype_size(args->dtype);
    d.n = args->n;
    parsum_status st = parsum_context_create(&d.ctx, PARSUM_BACKEND_CPU);
    if (st != PARSUM_OK) {
        fprintf(stderr, "parsum bench: %s: cannot create a CPU context\n",
                parsum_status_name(st));
        return 1;
    }
    int rc = 1;
    st = parsum_context_set_threads(d.ctx, args->threads);
    if (st != PARSUM_OK) {
        report_error(&d, st);
    } else {
        d.threads = parsum_context_threads(d.ctx);
        rc = bench_all(&d, out);
        free_all(&d);
    }
    parsum_context_destroy(d.ctx);
    return rc;
}
